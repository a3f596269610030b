//! `deja bench hooks`: the latency a harness pays for each hook subcommand, end to end
//! (one spawned `deja hook-…` per call, process start, reading the payload and the
//! answer included), against a bare `deja --version` measured in the same run.
//!
//! Payloads are Claude Code's hook JSON, built from the corpus: a project directory its
//! sessions ran in, prompts drawn from the search benchmark's query classes (its questions
//! and key words), an edited file under that project, and a failed command whose output is
//! one of the corpus's own stack-trace lines. Every call has a fresh `session_id` (unique
//! to the run), so the once-per-session record never short-cuts the work. The
//! output size is checked against each hook's budget as well.
//!
//! `hook-prompt` is measured twice: on the search benchmark's queries, and on
//! [`EVERYDAY_PROMPTS`] — what people type to an agent (7 to 40 words, requests more
//! than questions), the prompts a hook sees on every turn.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use deja_core::index::{IndexPaths, IndexView};
use serde::Serialize;
use serde_json::json;

use super::corpus::Corpus;
use super::search_bench::{ensure_index, queries};
use super::stats::{Latency, Machine};

#[derive(Args)]
pub struct HooksBenchArgs {
    /// The corpus directory (from `deja bench corpus`).
    #[arg(long, value_name = "DIR")]
    pub corpus: PathBuf,
    /// The index to answer from (default: `<corpus>/index`; built when missing).
    #[arg(long, value_name = "DIR")]
    pub index: Option<PathBuf>,
    /// Calls per hook.
    #[arg(long, default_value_t = 40)]
    pub calls: usize,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// One hook subcommand's figures.
#[derive(Debug, Serialize)]
struct HookResult {
    hook: &'static str,
    budget_bytes: usize,
    latency: Latency,
    /// p50 over the bare process start's p50.
    p50_over_start: f64,
    /// Calls that injected a block.
    answered: usize,
    largest_answer_bytes: usize,
}

#[derive(Debug, Serialize)]
pub(crate) struct HooksBench {
    schema_version: u32,
    benchmark: &'static str,
    machine: Machine,
    load_before: String,
    load_after: String,
    corpus_bytes: u64,
    projects: usize,
    process_start: Latency,
    hooks: Vec<HookResult>,
}

/// The hooks measured: name, budget, and the payload of call `i` in `project`.
type PayloadFn = fn(&str, usize, &str, &Inputs) -> serde_json::Value;

struct Inputs {
    prompts: Vec<String>,
    errors: Vec<String>,
}

const HOOKS: [(&str, usize, PayloadFn); 4] = [
    (
        "hook-session-start",
        2048,
        |sid, _, cwd, _| json!({"session_id": sid, "cwd": cwd, "hook_event_name": "SessionStart", "source": "startup"}),
    ),
    (
        "hook-prompt",
        1536,
        |sid, i, cwd, inp| json!({"session_id": sid, "cwd": cwd, "hook_event_name": "UserPromptSubmit", "prompt": pick(&inp.prompts, i)}),
    ),
    ("hook-tool", 480, |sid, _, cwd, _| {
        json!({"session_id": sid, "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": "Edit",
               "tool_input": {"file_path": format!("{cwd}/src/main.rs"), "old_string": "a", "new_string": "b"}})
    }),
    ("hook-tool-after", 480, |sid, i, cwd, inp| {
        json!({"session_id": sid, "cwd": cwd, "hook_event_name": "PostToolUse", "tool_name": "Bash",
               "tool_input": {"command": "cargo test"},
               "tool_response": {"stdout": "", "stderr": pick(&inp.errors, i), "exit_code": 101}})
    }),
];

/// Prompts as people give them to a coding agent: requests and questions of 7 to 40
/// words, the text `hook-prompt` recalls with on every turn.
pub const EVERYDAY_PROMPTS: &[&str] = &[
    "fix the flaky test in the retry loop",
    "why does the build fail on the release branch after the dependency bump",
    "add a --json flag to the export command and update the docs",
    "the migration for the users table times out in staging, can you look at why and propose a safer way to run it",
    "refactor the config loader so it reads environment variables before the file and reports which source won",
    "can you write integration tests for the webhook handler, especially the signature verification and replay protection",
    "what did we decide about the connection pool size for the worker service",
    "the CI job keeps failing with out of memory when it builds the docker image, find out what changed last week and fix it",
    "rename the payment provider module and make sure all imports and the feature flags still line up afterwards",
    "why is the p95 latency of the search endpoint so much higher after yesterday's deploy",
    "update the README with the new installation steps for macOS and Windows",
    "the tokenizer panics on emoji in file names, reproduce it with a test and fix the boundary handling",
    "bump tokio to the latest version and fix whatever breaks",
    "can you check how we handled rate limiting for the github api client last time and do the same for gitlab",
    "make the cache eviction policy configurable and default it to least recently used with a size limit of 512 megabytes",
    "investigate the deadlock between the scheduler and the metrics exporter that shows up under load",
    "add retries with exponential backoff to the s3 upload and log every attempt with its delay",
    "the frontend build is slow, profile webpack and tell me which loaders take the most time",
    "write a script that cleans up stale feature branches older than ninety days but never touches release branches",
    "how do we run the end to end tests locally with the staging database",
    "review my last commit for anything that could leak credentials into the logs",
    "the date picker shows the wrong month for users in negative UTC offsets, find the bug and add a regression test",
    "split the giant handlers file into one module per resource and keep the public API the same",
    "set up a nightly job that vacuums the analytics tables and alerts on failure",
    "explain why the borrow checker rejects this closure and suggest the smallest change that compiles",
    "we get intermittent connection reset errors from the payment gateway in production, add better logging around the client and figure out if it is our timeout",
    "port the bash deploy script to python and keep the same flags, exit codes and dry run behaviour so the CI pipeline does not notice the difference",
    "generate typescript types from the openapi spec and replace the hand written ones",
    "downgrade the postgres driver if the new one is what broke the prepared statements",
    "I'm picking up the search service again after the holidays; remind me where we left the work on the ranking and what was still failing in the benchmarks before the break",
];

fn pick(list: &[String], i: usize) -> &str {
    list.get(i % list.len().max(1)).map_or("why does the build fail", String::as_str)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map_or_else(|_| "unknown".to_string(), |s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
}

/// Spawns `deja <args>` with `stdin` piped in; returns the time and what it printed.
fn spawn(corpus: &Corpus, index: &std::path::Path, data: &std::path::Path, args: &[&str], stdin: &[u8]) -> Result<(Duration, Vec<u8>)> {
    let exe = crate::deja_bin();
    let t = Instant::now();
    let mut child = Command::new(&exe)
        .args(args)
        .env_clear()
        .env("HOME", corpus.home())
        .env("DEJA_INDEX_DIR", index)
        .env("DEJA_DATA_DIR", data)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("running {}", exe.display()))?;
    if let Some(mut pipe) = child.stdin.take() {
        // A hook stops reading at its first complete value; a closed pipe is no error.
        let _ = pipe.write_all(stdin);
    }
    let out = child.wait_with_output().context("waiting for the hook")?;
    let took = t.elapsed();
    if !out.status.success() {
        bail!("`deja {}` exited with {} (hooks fail open with 0)", args.join(" "), out.status);
    }
    Ok((took, out.stdout))
}

pub fn run(args: HooksBenchArgs) -> Result<ExitCode> {
    super::report(args.json, &measure(&args)?, render)
}

pub(crate) fn measure(args: &HooksBenchArgs) -> Result<HooksBench> {
    let corpus = Corpus::open(&args.corpus)?;
    let index = args.index.clone().unwrap_or_else(|| corpus.dir.join("index"));
    let say = |s: String| {
        if !args.json {
            eprintln!("{s}");
        }
    };
    ensure_index(&corpus, &index, &say)?;
    let projects: Vec<String> = {
        let view = IndexView::open(&IndexPaths::new(&index))?;
        let all: BTreeSet<String> = view.all_sessions(None)?.into_iter().filter_map(|m| m.project).collect();
        all.into_iter().collect()
    };
    if projects.is_empty() {
        bail!("the corpus's sessions name no project directory");
    }
    let qs = queries(&corpus, args.calls.max(1));
    let of = |classes: &[&str]| -> Vec<String> { qs.iter().filter(|q| classes.contains(&q.class)).map(|q| q.text.clone()).collect() };
    let inputs =
        Inputs { prompts: of(&["needle (question)", "two common words", "rare word", "typo"]), errors: of(&["pasted error line"]) };
    // The once-per-session records go to a scratch directory, not the corpus's.
    let data = tempfile::tempdir().context("a scratch data directory")?;
    let load_before = load_average();
    let start: Result<Vec<Duration>> =
        (0..args.calls.max(20)).map(|_| spawn(&corpus, &index, data.path(), &["--version"], b"").map(|r| r.0)).collect();
    let process_start = Latency::of(&start?);
    let run = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let sid = |hook: &str, i: usize| format!("bench-{run:x}-{hook}-{i}");
    let mut hooks = Vec::new();
    for (hook, budget, payload) in HOOKS {
        say(format!("{hook}: {} calls…", args.calls));
        // One untimed call warms the binary and the index files.
        spawn(&corpus, &index, data.path(), &[hook], payload(&sid(hook, usize::MAX), 0, &projects[0], &inputs).to_string().as_bytes())?;
        let (mut samples, mut answered, mut largest) = (Vec::new(), 0, 0);
        for i in 0..args.calls.max(1) {
            let body = payload(&sid(hook, i), i, &projects[i % projects.len()], &inputs).to_string();
            let (took, out) = spawn(&corpus, &index, data.path(), &[hook], body.as_bytes())?;
            samples.push(took);
            if !out.is_empty() {
                answered += 1;
                largest = largest.max(out.len());
            }
        }
        let latency = Latency::of(&samples);
        let p50_over_start = if process_start.p50_ms > 0.0 { latency.p50_ms / process_start.p50_ms } else { 0.0 };
        hooks.push(HookResult { hook, budget_bytes: budget, latency, p50_over_start, answered, largest_answer_bytes: largest });
    }
    // The prompts a hook sees on every turn: each asked as many times as it takes to
    // make the calls asked for (at least once each).
    let everyday: Vec<String> = EVERYDAY_PROMPTS.iter().map(|p| p.to_string()).collect();
    let calls = args.calls.max(everyday.len());
    say(format!("hook-prompt on everyday prompts: {calls} calls…"));
    let (mut samples, mut answered, mut largest) = (Vec::new(), 0, 0);
    for i in 0..calls {
        let body = json!({"session_id": sid("everyday", i), "cwd": &projects[i % projects.len()], "hook_event_name": "UserPromptSubmit",
                          "prompt": pick(&everyday, i)})
        .to_string();
        let (took, out) = spawn(&corpus, &index, data.path(), &["hook-prompt"], body.as_bytes())?;
        samples.push(took);
        if !out.is_empty() {
            answered += 1;
            largest = largest.max(out.len());
        }
    }
    let latency = Latency::of(&samples);
    let p50_over_start = if process_start.p50_ms > 0.0 { latency.p50_ms / process_start.p50_ms } else { 0.0 };
    hooks.push(HookResult {
        hook: "hook-prompt (everyday prompts)",
        budget_bytes: 1536,
        latency,
        p50_over_start,
        answered,
        largest_answer_bytes: largest,
    });
    Ok(HooksBench {
        schema_version: 1,
        benchmark: "hooks",
        machine: Machine::here(),
        load_before,
        load_after: load_average(),
        corpus_bytes: corpus.manifest.bytes,
        projects: projects.len(),
        process_start,
        hooks,
    })
}

fn render(r: &HooksBench) -> String {
    let mut out = format!(
        "{}\nload average {} → {}; corpus {} bytes, {} projects\nprocess start (`deja --version`): p50 {:.1} ms, p95 {:.1} ms\n\n",
        r.machine.line(),
        r.load_before,
        r.load_after,
        r.corpus_bytes,
        r.projects,
        r.process_start.p50_ms,
        r.process_start.p95_ms
    );
    out.push_str("| hook | p50 / p95 / max ms | p50 ÷ process start | answered | largest output (envelope included) / block budget |\n| --- | --- | --- | --- | --- |\n");
    for h in &r.hooks {
        out.push_str(&format!(
            "| {} | {:.1} / {:.1} / {:.1} | {:.1}× | {}/{} | {} / {} B |\n",
            h.hook,
            h.latency.p50_ms,
            h.latency.p95_ms,
            h.latency.max_ms,
            h.p50_over_start,
            h.answered,
            h.latency.n,
            h.largest_answer_bytes,
            h.budget_bytes
        ));
    }
    out
}

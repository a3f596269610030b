//! `deja demo`: writes a small synthetic home holding sessions of every registered
//! harness (through each adapter's own writer, in its real on-disk format), indexes it
//! into a temporary index with the real pipeline, and runs two searches — so a machine
//! with no agent history still sees everything work. Nothing of the user's is read or
//! written.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use deja_core::index::indexer::{run_index, IndexRequest, IndexRunError};
use deja_core::index::search::SearchRequest;
use deja_core::index::{IndexPaths, IndexView};
use deja_core::synth::synth_uuid;
use deja_core::{StoreEnv, SynthSession, SynthTurn, Timestamp};

use crate::index_cmd::{render_report, BarObserver};
use crate::output::human_bytes;
use crate::search_cmd::render;
use deja_core::fsutil::dir_size;

#[derive(Args)]
pub struct DemoArgs {
    /// Keep the synthetic home and index in this directory instead of a temporary one.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
    /// Print a JSON summary instead of text.
    #[arg(long)]
    pub json: bool,
}

struct Topic {
    project: &'static str,
    prompt: &'static str,
    answer: &'static str,
    command: &'static str,
    output: &'static str,
    exit_code: i64,
    file: &'static str,
    old: &'static str,
    new: &'static str,
    fix_command: &'static str,
}

const TOPICS: [Topic; 3] = [
    Topic {
        project: "/work/pool-service",
        prompt: "pgbouncer refused connections during the load test, can you find out why?",
        answer: "The pool is exhausted: max_client_conn is 100 but the test opens 400 clients. Raising it and pool_size fixes the refusals.",
        command: "psql -h localhost -p 6432 -c 'show pools'",
        output: "psql: error: connection to server at \"localhost\", port 6432 failed: FATAL:  no more connections allowed (max_client_conn)",
        exit_code: 2,
        file: "/work/pool-service/deploy/pgbouncer.ini",
        old: "max_client_conn = 100",
        new: "max_client_conn = 500",
        fix_command: "make load-test",
    },
    Topic {
        project: "/work/auth-api",
        prompt: "the jwt refresh flow logs users out after 15 minutes",
        answer: "refreshToken() compares expiry in seconds against Date.now() in milliseconds, so every token looks expired. Converting fixes the refresh.",
        command: "npm test -- auth/refresh",
        output: "FAIL auth/refresh.test.ts\n  ✕ keeps the session alive (12 ms)\nTokenExpiredError: jwt expired",
        exit_code: 1,
        file: "/work/auth-api/src/auth/refresh.ts",
        old: "if (payload.exp < Date.now()) {",
        new: "if (payload.exp * 1000 < Date.now()) {",
        fix_command: "npm test",
    },
    Topic {
        project: "/work/ledger",
        prompt: "cargo test fails on CI with a flaky timeout in settle_batch",
        answer: "settle_batch waits on a fixed 50 ms sleep; on the 2-core CI runner the worker is slower. Waiting on the channel instead removes the flake.",
        command: "cargo test -p ledger settle_batch",
        output: "thread 'settle_batch' panicked at src/settle.rs:88:9:\nassertion failed: done.load(Ordering::SeqCst)\ntest result: FAILED. 41 passed; 1 failed",
        exit_code: 101,
        file: "/work/ledger/src/settle.rs",
        old: "std::thread::sleep(Duration::from_millis(50));",
        new: "rx.recv_timeout(Duration::from_secs(5))?;",
        fix_command: "cargo test -p ledger",
    },
];

/// The synthetic sessions written for the harness at position `n`.
fn demo_sessions(n: usize) -> Vec<SynthSession> {
    let base = Timestamp::parse_str("2026-11-02T09:00:00Z").map_or(0, |t| t.0);
    (0..2)
        .map(|k| {
            let topic = &TOPICS[(n + k) % TOPICS.len()];
            let t0 = base + (n as i64 * 2 + k as i64) * 3_600_000;
            let at = |i: i64| Timestamp(t0 + i * 20_000);
            SynthSession {
                id: synth_uuid((n * 2 + k) as u64, 0xDE7A),
                project: topic.project.to_string(),
                title: None,
                started: at(0),
                turns: vec![
                    SynthTurn::User { text: topic.prompt.to_string(), time: at(0) },
                    SynthTurn::Reasoning { text: "secret chain of thought about the tokenizer internals".to_string(), time: at(1) },
                    SynthTurn::Shell {
                        command: topic.command.to_string(),
                        output: topic.output.to_string(),
                        exit_code: topic.exit_code,
                        time: at(2),
                    },
                    SynthTurn::Read { path: topic.file.to_string(), output: topic.old.to_string(), time: at(3) },
                    SynthTurn::Edit { path: topic.file.to_string(), old: topic.old.to_string(), new: topic.new.to_string(), time: at(4) },
                    SynthTurn::Shell {
                        command: topic.fix_command.to_string(),
                        output: "ok: all checks passed".to_string(),
                        exit_code: 0,
                        time: at(5),
                    },
                    SynthTurn::Assistant { text: topic.answer.to_string(), time: at(6) },
                ],
            }
        })
        .collect()
}

/// Writes the demo home: two sessions per registered harness. A harness whose
/// synthetic writer is not written yet (a fresh scaffold) is skipped and named.
pub fn write_demo_home(home: &std::path::Path) -> Result<(usize, Vec<&'static str>)> {
    let mut written = 0;
    let mut skipped = Vec::new();
    for (n, f) in deja_core::registry().into_iter().enumerate() {
        for s in demo_sessions(n) {
            match f.write_synthetic(home, &s) {
                Ok(_) => written += 1,
                Err(e) if e.kind() == std::io::ErrorKind::Unsupported => {
                    skipped.push(f.info().id);
                    break;
                }
                Err(e) => return Err(e).with_context(|| format!("writing the {} demo session", f.info().id)),
            }
        }
    }
    Ok((written, skipped))
}

pub fn run(args: DemoArgs) -> Result<ExitCode> {
    let tmp;
    let root = match &args.keep {
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            dir.clone()
        }
        None => {
            tmp = tempfile::tempdir().context("creating a temporary directory")?;
            tmp.path().to_path_buf()
        }
    };
    let home = root.join("home");
    let (written, skipped) = write_demo_home(&home)?;
    if !skipped.is_empty() && !args.json {
        eprintln!("deja demo: no synthetic writer yet for {}; skipped", skipped.join(", "));
    }
    let env = StoreEnv::with_home(&home);
    let paths = IndexPaths::new(root.join("index"));
    let started = Instant::now();
    let observer = BarObserver::new(!args.json);
    let report = match run_index(&env, &paths, &IndexRequest { wait: true, rebuild: true, ..IndexRequest::default() }, &observer) {
        Ok(r) => r,
        Err(IndexRunError::Busy) => anyhow::bail!("the demo index is locked by another process"),
        Err(IndexRunError::Index(e)) => return Err(e.into()),
    };
    observer.finish();
    let index_ms = started.elapsed().as_secs_f64() * 1000.0;
    let index_bytes = dir_size(&paths.root);
    let home_bytes = dir_size(&home);
    let view = IndexView::open(&paths)?;
    let queries = ["pgbouncer refused connections", "jwt refersh"];
    let mut searches = Vec::new();
    for q in queries {
        let t = Instant::now();
        let r = view.search(&SearchRequest { query: q.to_string(), limit: 5, ..SearchRequest::default() })?;
        searches.push((q, r, t.elapsed().as_secs_f64() * 1000.0));
    }
    if args.json {
        let out = serde_json::json!({
            "schema_version": 1,
            "home": home,
            "sessions_written": written,
            "skipped_harnesses": skipped,
            "harnesses": deja_core::registry().len(),
            "index_ms": index_ms,
            "index_bytes": index_bytes,
            "home_bytes": home_bytes,
            "searches": searches.iter().map(|(q, r, ms)| serde_json::json!({"query": q, "ms": ms, "result": crate::search_cmd::results_json(r)})).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    let total = deja_core::registry().len();
    println!("deja demo: wrote {written} synthetic sessions for {} of {total} harnesses under {}", total - skipped.len(), home.display());
    print!("{}", render_report(&report));
    println!("index: {} for {} of history, built in {:.0} ms", human_bytes(index_bytes), human_bytes(home_bytes), index_ms);
    for (q, r, ms) in &searches {
        println!("\n$ deja \"{q}\"   ({ms:.1} ms)");
        print!("{}", render(r, q));
    }
    if args.keep.is_some() {
        println!(
            "\nKept in {}. Try: HOME={} DEJA_INDEX_DIR={} deja search pgbouncer",
            root.display(),
            home.display(),
            paths.root.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

//! deja-bench: the home of deja's benchmarks, a crate and binary of its own (`deja-bench
//! <benchmark> …`; `deja bench <benchmark> …` runs it too) so the suite, its word list
//! and its question set do not ship inside `deja`. Each benchmark measures the
//! production code (adapters, indexer, search, and the `deja` binary end to end) on
//! data written in the harnesses' real formats and prints a table, or one JSON object
//! with `--json`:
//!
//! - `corpus` — writes a deterministic multi-harness home of a chosen size (with
//!   planted "needle" facts and a manifest) for the two benchmarks below;
//! - `index` — cold index throughput, peak memory, no-change and 1%-growth re-index
//!   times, index size, against read-only and parse-only baselines;
//! - `search` — latency per query class in process and end to end, needle recall;
//! - `hooks` — each hook subcommand end to end on Claude Code payloads, against a bare
//!   process start;
//! - `locomo` — LoCoMo session-level retrieval (hit@k, MRR) through the real pipeline;
//! - `chats` — plain-language questions about past user–assistant sessions with long
//!   answers and tool output (a set of another kind than LoCoMo, written for deja);
//! - `rows` — a refresh of a large database in which one session grew (row cursors);
//! - `ui` — the search screen's keystroke-to-frame latency on a pty (`deja ui`), against
//!   the same screen on an empty home;
//! - `team` — team memory on a PostgreSQL you give it: push throughput, team search
//!   p50/p95, table and index size per GB of raw history (`--machines N`).
//!
//! docs/benchmarks.md records the figures and how to read them. What runs end to end
//! runs the `deja` binary [`deja_bin`] names.

mod chats;
mod corpus;
mod gen;
mod hooks_bench;
mod index_bench;
mod locomo;
mod report;
mod rows_bench;
mod search_bench;
mod stats;
mod team_bench;
#[cfg(unix)]
mod ui_bench;
mod vocab;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::OnceLock;

use anyhow::Result;
use clap::{Parser, Subcommand};
// Every adapter crate, linked so each one's synthetic writer is in the registry.
use deja_adapters as _;

#[derive(Parser)]
#[command(
    name = "deja-bench",
    version,
    about = "deja's benchmarks: synthetic corpora, index throughput, search latency, hooks, LoCoMo and chats recall",
    long_about = "The home of deja's benchmarks: each runs the production code (adapters, indexer, search) on data \
                  written in the harnesses' real on-disk formats. Tables by default, one JSON object with --json.",
    after_help = "A typical run (a corpus goes anywhere outside your history; 1 GB takes about ten seconds to write on two cores):\n  \
                  deja-bench corpus --out /tmp/deja-bench/c200 --size 200MB --seed 1\n  \
                  deja-bench index  --corpus /tmp/deja-bench/c200\n  \
                  deja-bench search --corpus /tmp/deja-bench/c200\n  \
                  deja-bench hooks  --corpus /tmp/deja-bench/c200\n  \
                  deja-bench locomo --data locomo10.json\n  \
                  deja-bench chats\n  \
                  deja-bench ui     --corpus /tmp/deja-bench/c200\n  \
                  deja-bench team   --corpus /tmp/deja-bench/c200 --url postgres://me@localhost/deja_bench --machines 10\n\n\
                  The figures, the machine they were taken on and how to read them: docs/benchmarks.md"
)]
pub struct Bench {
    #[command(subcommand)]
    command: BenchCommand,
}

#[derive(Subcommand)]
enum BenchCommand {
    /// Write a deterministic synthetic home of every harness (e.g. `--size 200MB`).
    #[command(long_about = "Write a deterministic synthetic home for the index and search benchmarks: sessions of every \
                            registered harness in its real on-disk format (developer talk with a Zipf vocabulary, code, \
                            shell commands with exit codes, stack traces, some CJK and Cyrillic), 5–200 turns each, \
                            until the home holds --size bytes. About one session in 97 holds a planted needle fact; \
                            `corpus.json` lists them with the session that holds each. Same seed and size, same corpus.")]
    Corpus(corpus::CorpusArgs),
    /// Index throughput, peak memory, re-index and growth times, index size.
    Index(index_bench::IndexBenchArgs),
    /// Search latency per query class (in process and end to end) and needle recall.
    Search(search_bench::SearchBenchArgs),
    /// Each hook subcommand end to end (p50/p95 per hook) against a bare process start.
    Hooks(hooks_bench::HooksBenchArgs),
    /// LoCoMo session-level retrieval (hit@1/5/10, MRR) through the real pipeline.
    #[command(long_about = "LoCoMo session-level retrieval through the production path: every conversation session is \
                            written as a real harness transcript with its own date, indexed by the real indexer, and each \
                            question with evidence is asked verbatim through the CLI's search. Reports hit@1, hit@5, \
                            hit@10 and MRR for all questions, categories 1–4 together, and each category, plus the \
                            median search time. The data (locomo10.json, CC BY-NC 4.0) is not shipped with deja: pass \
                            --data PATH (docs/benchmarks.md says where to get it).")]
    Locomo(locomo::LocomoArgs),
    /// Plain-language questions about past user–assistant sessions (hit@1/5/10, MRR).
    #[command(long_about = "Questions asked later, in plain language, about past user–assistant sessions with long \
                            assistant answers and tool output (coding and general chats; most questions paraphrase the \
                            session): every session is written as a real harness transcript, indexed by the real \
                            indexer, and each question asked verbatim — in process, or through another build's `deja \
                            search --json` with --deja-bin. Reports hit@1/5/10 and MRR overall and per question type, \
                            for all questions or the tuning or held-out half. The set lives in deja-bench/chats.")]
    Chats(chats::ChatsArgs),
    /// A refresh of a database of --sessions sessions in which one grew (row cursors).
    #[command(long_about = "Writes --sessions sessions through a database-backed adapter's synthetic writer (opencode by \
                            default) into one SQLite database, indexes it, then rewrites one session with two more turns \
                            and refreshes: reports the sessions re-read and the time, against parsing the whole database \
                            once with no cursor, in the same run.")]
    Rows(rows_bench::RowsBenchArgs),
    /// Team memory on PostgreSQL: push throughput, team search p50/p95, size per raw GB.
    #[command(long_about = "Indexes the corpus into a fresh archive, pushes it to the PostgreSQL database --url names \
                            (as --machines machines, bench-0…, each the whole corpus) through the production push, asks \
                            the corpus's needle queries through the team search's tier ladder, and reports turns/s and MB/s \
                            of the push, search p50/p95, and pg_total_relation_size / pg_indexes_size per GB of raw \
                            history. Use a database of its own: rows of machines named bench-N are replaced.")]
    Team(team_bench::TeamBenchArgs),
    /// The search screen's keystroke-to-frame latency (echo, results, open) on a pty.
    #[cfg(unix)]
    #[command(long_about = "Runs `deja ui` on a pseudo-terminal of its own, types the search benchmark's queries one key \
                            at a time, and reads the screen with a terminal emulator: for each key the time to the frame \
                            that shows it (echo) and to the frame that shows its answer (results, the 40 ms debounce \
                            included); Enter and Esc on the first session (open, back). The same run on an empty home is \
                            the baseline.")]
    Ui(ui_bench::UiBenchArgs),
}

/// Prints a benchmark's figures: one pretty JSON object with `--json`, else its table.
fn report<T: serde::Serialize>(json: bool, result: &T, render: impl FnOnce(&T) -> String) -> Result<ExitCode> {
    if json {
        println!("{}", serde_json::to_string_pretty(result)?);
    } else {
        print!("{}", render(result));
    }
    Ok(ExitCode::SUCCESS)
}

/// The `deja` binary this run measures, when set by [`set_deja_bin`].
static DEJA_BIN: OnceLock<PathBuf> = OnceLock::new();

/// Measures `deja` at `path` end to end (the first call wins): for a caller that knows
/// which build it tests, as the end-to-end tests do.
pub fn set_deja_bin(path: impl Into<PathBuf>) {
    let _ = DEJA_BIN.set(path.into());
}

/// The `deja` binary the end-to-end measurements run: the one [`set_deja_bin`] named,
/// else `$DEJA_BIN` (which `deja bench` sets to itself), else the `deja` beside this
/// binary (as cargo builds both into one directory), else `deja` on `PATH`.
pub fn deja_bin() -> PathBuf {
    if let Some(p) = DEJA_BIN.get() {
        return p.clone();
    }
    if let Some(p) = std::env::var_os("DEJA_BIN").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let beside = std::env::current_exe().ok().and_then(|exe| Some(exe.parent()?.join(format!("deja{}", std::env::consts::EXE_SUFFIX))));
    beside.filter(|p| p.is_file()).unwrap_or_else(|| PathBuf::from("deja"))
}

pub fn run(args: Bench) -> Result<ExitCode> {
    match args.command {
        BenchCommand::Corpus(a) => corpus::run(a),
        BenchCommand::Index(a) => index_bench::run(a),
        BenchCommand::Search(a) => search_bench::run(a),
        BenchCommand::Hooks(a) => hooks_bench::run(a),
        BenchCommand::Locomo(a) => locomo::run(a),
        BenchCommand::Chats(a) => chats::run(a),
        BenchCommand::Rows(a) => rows_bench::run(a),
        BenchCommand::Team(a) => team_bench::run(a),
        #[cfg(unix)]
        BenchCommand::Ui(a) => ui_bench::run(a),
    }
}

/// Runs `deja-bench <argv…>` in this process, as the binary would.
pub fn run_from(argv: &[&str]) -> Result<ExitCode> {
    run(Bench::try_parse_from(std::iter::once("deja-bench").chain(argv.iter().copied()))?)
}

/// The figures `deja-bench hooks <argv…> --json` prints, as a value (for the end-to-end
/// test that runs it against the `deja` it builds).
pub fn hooks_figures(argv: &[&str]) -> Result<serde_json::Value> {
    let bench = Bench::try_parse_from(["deja-bench", "hooks"].into_iter().chain(argv.iter().copied()))?;
    match bench.command {
        BenchCommand::Hooks(a) => Ok(serde_json::to_value(hooks_bench::measure(&a)?)?),
        _ => anyhow::bail!("not the hooks benchmark"),
    }
}

/// Today's date (UTC), for reports.
fn today() -> String {
    deja_core::Timestamp::now().to_rfc3339().chars().take(10).collect()
}

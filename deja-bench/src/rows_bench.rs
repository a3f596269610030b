//! `deja bench rows`: what a refresh costs when one session of a large database grew.
//!
//! A harness that keeps every session in one SQLite database (opencode and its forks,
//! Hermes, Goose…) changes the database's `-wal` on every turn, so the whole source looks
//! changed. The indexer hands the parser the row cursor it returned last time and the
//! parser re-reads only the sessions changed since. This benchmark writes `--sessions`
//! sessions through the adapter's own synthetic writer into one database, then times, all
//! in this process through `run_index` (what `deja index` runs):
//!
//! 1. cold — the first index of the database;
//! 2. unchanged — a refresh with nothing changed (the `db` and `-wal` stats);
//! 3. one grew — one session rewritten with two more turns, then a refresh: the sessions
//!    re-read and the time, against
//! 4. the baseline — parsing the whole database once with no cursor (what a refresh would
//!    cost without row increments), in the same run.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use deja_core::index::indexer::{run_index, HarnessReport, IndexRequest, Silent};
use deja_core::index::IndexPaths;
use deja_core::{ParseOptions, Session, StoreEnv};
use serde::Serialize;

use super::gen::Generator;
use super::stats::{ms, Machine};

#[derive(Args)]
pub struct RowsBenchArgs {
    /// The adapter whose synthetic writer keeps every session in one database.
    #[arg(long, default_value = "opencode")]
    pub harness: String,
    /// Sessions in the database.
    #[arg(long, default_value_t = 10_000)]
    pub sessions: u64,
    /// Turns per session (the generator's sessions cut to this many).
    #[arg(long, default_value_t = 8)]
    pub turns: usize,
    /// Generator seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where to write the home and the index (default: a temporary directory, removed).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Serialize)]
pub struct RowsBench {
    pub date: String,
    pub machine: Machine,
    pub load_average: String,
    pub harness: String,
    pub sessions: u64,
    pub turns_per_session: usize,
    pub database_bytes: u64,
    pub write_ms: f64,
    pub cold_ms: f64,
    pub cold_sessions: u64,
    pub unchanged_ms: f64,
    pub grown_ms: f64,
    /// Sessions the refresh after one session grew re-read.
    pub grown_sessions_reread: u64,
    /// Parsing the whole database once with no cursor.
    pub full_parse_ms: f64,
    pub full_parse_sessions: usize,
}

pub fn run(args: RowsBenchArgs) -> Result<ExitCode> {
    let r = measure(&args)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        println!(
            "deja bench rows — {} sessions of {} turns in one {} database ({:.1} MB), {}",
            r.sessions,
            r.turns_per_session,
            r.harness,
            r.database_bytes as f64 / 1e6,
            r.date
        );
        println!("machine: {} cores, {}; load average {}", r.machine.cores, r.machine.cpu, r.load_average);
        println!("  written through the adapter's writer  {:>10.0} ms", r.write_ms);
        println!("  cold index                            {:>10.0} ms  ({} sessions)", r.cold_ms, r.cold_sessions);
        println!("  refresh, nothing changed              {:>10.1} ms", r.unchanged_ms);
        println!("  refresh, one session grew             {:>10.1} ms  ({} session re-read)", r.grown_ms, r.grown_sessions_reread);
        println!("  baseline: parse the whole database    {:>10.1} ms  ({} sessions)", r.full_parse_ms, r.full_parse_sessions);
        println!("  ratio baseline / one-grew refresh     {:>10.1}×", r.full_parse_ms / r.grown_ms.max(0.001));
    }
    Ok(ExitCode::SUCCESS)
}

fn index_once(env: &StoreEnv, paths: &IndexPaths, harness: &str) -> Result<(Duration, HarnessReport)> {
    let t = Instant::now();
    let req = IndexRequest { harnesses: Some(vec![harness.to_string()]), rebuild: false, wait: true };
    let mut report = run_index(env, paths, &req, &Silent).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((t.elapsed(), report.harnesses.remove(harness).unwrap_or_default()))
}

fn measure(args: &RowsBenchArgs) -> Result<RowsBench> {
    let adapter = deja_core::lookup(&args.harness).with_context(|| format!("unknown harness `{}`", args.harness))?;
    let Some(writer) = adapter.synthetic() else { bail!("the {} adapter has no synthetic writer", args.harness) };
    let tmp;
    let root = match &args.out {
        Some(dir) => dir.clone(),
        None => {
            tmp = tempfile::tempdir().context("creating a temporary directory")?;
            tmp.path().to_path_buf()
        }
    };
    let home = root.join("home");
    let paths = IndexPaths::new(root.join("index"));
    let env = StoreEnv::with_home(&home);
    let generator = Generator::new(args.seed);
    let session = |k: u64| {
        let mut s = generator.session(k);
        s.turns.truncate(args.turns);
        s
    };

    let t = Instant::now();
    let mut db = None;
    for k in 0..args.sessions {
        db = Some(writer.write(&home, &session(k)).with_context(|| format!("writing session {k}"))?);
    }
    let write = t.elapsed();
    let Some(db) = db else { bail!("--sessions must be at least 1") };
    let sources = adapter.discover(&env).sources;
    if sources.len() != 1 {
        bail!("the {} writer left {} sources, not one database", args.harness, sources.len());
    }

    let (cold, cold_report) = index_once(&env, &paths, &args.harness)?;
    let (unchanged, _) = index_once(&env, &paths, &args.harness)?;

    let k = args.sessions / 2;
    let mut grown = generator.session(k);
    grown.turns.truncate(args.turns);
    let more = generator.growth(&grown, k, 1);
    grown.turns.extend(more.into_iter().take(2));
    writer.write(&home, &grown).context("growing one session")?;
    let (grown_time, grown_report) = index_once(&env, &paths, &args.harness)?;

    let t = Instant::now();
    let mut all: Vec<Session> = Vec::new();
    adapter.parse(&sources[0], &ParseOptions::default(), &mut all).map_err(|e| anyhow::anyhow!("{e}"))?;
    let full = t.elapsed();

    Ok(RowsBench {
        date: super::today(),
        machine: Machine::here(),
        load_average: std::fs::read_to_string("/proc/loadavg")
            .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_default(),
        harness: args.harness.clone(),
        sessions: args.sessions,
        turns_per_session: args.turns,
        database_bytes: [db.clone(), deja_core::sqlite::wal_path(&db)]
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum(),
        write_ms: ms(write),
        cold_ms: ms(cold),
        cold_sessions: cold_report.sessions,
        unchanged_ms: ms(unchanged),
        grown_ms: ms(grown_time),
        grown_sessions_reread: grown_report.sessions,
        full_parse_ms: ms(full),
        full_parse_sessions: all.len(),
    })
}

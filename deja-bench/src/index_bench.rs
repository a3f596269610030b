//! `deja bench index`: how fast the real indexer builds and refreshes an index of a
//! generated corpus, and how big the index is.
//!
//! Stages, in order, all in this process through `run_index` (what `deja index` runs):
//! 1. baselines — reading every byte of the corpus, then parsing and normalizing every
//!    source with the adapters (no index): the floor the indexer cannot go under;
//! 2. cold — a full index into an empty directory: MB/s, sessions/s, CPU use, peak RSS;
//! 3. unchanged — re-running with nothing changed (repeated, median);
//! 4. growth — 1% of the files grow by one exchange (records appended in their own
//!    format); the time to absorb that; the files are then truncated back;
//! 5. size — the index directory against the corpus.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use deja_core::index::indexer::{run_index, IndexReport, IndexRequest, IndexRunError, Silent};
use deja_core::index::IndexPaths;
use deja_core::normalize::{normalize, NormalizeOptions};
use deja_core::{ParseOptions, Session, SourceRef, StoreEnv};
use serde::Serialize;

use super::corpus::{grow, restore, Corpus};
use super::stats::{cores, cpu_time, mb_per_s, median, ms, parallel_for, peak_rss, reset_peak_rss, Machine};
use crate::report::dir_size;

#[derive(Args)]
pub struct IndexBenchArgs {
    /// The corpus directory (from `deja bench corpus`).
    #[arg(long, value_name = "DIR")]
    pub corpus: PathBuf,
    /// Where to build the index (default: `<corpus>/index`). It is rebuilt.
    #[arg(long, value_name = "DIR")]
    pub index: Option<PathBuf>,
    /// How many times to time the no-change re-index.
    #[arg(long, default_value_t = 5)]
    pub repeat: usize,
    /// Skip the end-to-end no-change `deja index` (spawned, with the watcher the first
    /// one starts answering).
    #[arg(long)]
    pub no_e2e: bool,
    /// Fraction of the files to grow for the incremental measurement.
    #[arg(long, default_value_t = 0.01)]
    pub grow: f64,
    /// Skip the read and parse baselines.
    #[arg(long)]
    pub no_baseline: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Serialize)]
struct Stage {
    seconds: f64,
    mb_per_s: f64,
    cpu_seconds: Option<f64>,
    /// CPU seconds per wall second: 2.0 means both of two cores were busy.
    cores_used: Option<f64>,
}

#[derive(Debug, Serialize)]
struct ColdStage {
    #[serde(flatten)]
    stage: Stage,
    sessions: u64,
    turns: u64,
    sessions_per_s: f64,
    peak_rss_bytes: Option<u64>,
    /// False when the kernel would not reset the peak, so it covers the whole run.
    peak_rss_isolated: bool,
}

#[derive(Debug, Serialize)]
struct GrowthStage {
    files_grown: usize,
    bytes_appended: u64,
    seconds: f64,
    sources_read_from_tail: u64,
    sources_parsed_in_full: u64,
}

#[derive(Debug, Serialize)]
struct IndexBench {
    schema_version: u32,
    benchmark: &'static str,
    date: String,
    machine: Machine,
    corpus: CorpusInfo,
    read_baseline: Option<Stage>,
    parse_baseline: Option<Stage>,
    cold: ColdStage,
    /// Cold index time ÷ parse-only time (how much indexing adds to parsing).
    cold_vs_parse: Option<f64>,
    /// Where the cold run's time went, stage by stage, with the peak RSS at each end.
    cold_stages: Vec<deja_core::index::indexer::Stage>,
    /// The no-change re-index in process: every store walked, every source stat'ed
    /// (what `deja index --scan`, and a search with no watcher, pay).
    unchanged_ms: Vec<f64>,
    unchanged_median_ms: f64,
    /// `deja index` end to end with nothing changed, as a user runs it: the first call
    /// starts a watcher, later ones ask it to catch up (`unchanged_e2e_via` says which
    /// path answered).
    unchanged_e2e: Option<super::stats::Latency>,
    unchanged_e2e_via: Option<&'static str>,
    /// Where the index's bytes go.
    space: Option<deja_core::index::space::SpaceUsage>,
    growth: GrowthStage,
    index_bytes: u64,
    /// Index size ÷ corpus size.
    index_ratio: f64,
    /// The archive (deja's own copy of every session) after the run, and ÷ corpus size.
    archive_bytes: u64,
    archive_ratio: f64,
}

#[derive(Debug, Serialize)]
pub struct CorpusInfo {
    pub dir: PathBuf,
    pub bytes: u64,
    pub sessions: u64,
    pub turns: u64,
    pub seed: u64,
    pub files: usize,
}

impl CorpusInfo {
    pub fn of(c: &Corpus) -> CorpusInfo {
        CorpusInfo {
            dir: c.dir.clone(),
            bytes: c.manifest.bytes,
            sessions: c.manifest.sessions,
            turns: c.manifest.turns,
            seed: c.manifest.seed,
            files: c.manifest.files.iter().map(|f| &f.path).collect::<std::collections::HashSet<_>>().len(),
        }
    }
}

fn index_err(e: IndexRunError) -> anyhow::Error {
    match e {
        IndexRunError::Busy => anyhow::anyhow!("the benchmark index is locked by another process"),
        IndexRunError::Index(e) => e.into(),
    }
}

/// Runs `f` and returns its result with the wall and CPU time it took.
fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration, Option<Duration>) {
    let cpu0 = cpu_time();
    let t = Instant::now();
    let out = f();
    let wall = t.elapsed();
    let cpu = cpu_time().zip(cpu0).map(|(b, a)| b.saturating_sub(a));
    (out, wall, cpu)
}

fn stage(bytes: u64, wall: Duration, cpu: Option<Duration>) -> Stage {
    Stage {
        seconds: wall.as_secs_f64(),
        mb_per_s: mb_per_s(bytes, wall),
        cpu_seconds: cpu.map(|c| c.as_secs_f64()),
        cores_used: cpu.map(|c| c.as_secs_f64() / wall.as_secs_f64().max(1e-9)),
    }
}

/// Every source the registered adapters discover in `env`.
fn sources(env: &StoreEnv) -> Vec<(&'static dyn deja_core::HarnessFormat, SourceRef)> {
    deja_core::registry().into_iter().flat_map(|a| a.discover(env).sources.into_iter().map(move |s| (a, s))).collect()
}

fn read_all(srcs: &[(&'static dyn deja_core::HarnessFormat, SourceRef)]) -> u64 {
    let total = AtomicU64::new(0);
    parallel_for(srcs.len(), cores(), &|| false, &|i| {
        if let Ok(b) = std::fs::read(&srcs[i].1.path) {
            total.fetch_add(b.len() as u64, Ordering::Relaxed);
        }
    });
    total.into_inner()
}

fn parse_all(srcs: &[(&'static dyn deja_core::HarnessFormat, SourceRef)], env: &StoreEnv) -> u64 {
    let opts = ParseOptions::from_env(env);
    let norm = NormalizeOptions::from_env(env);
    let turns = AtomicU64::new(0);
    parallel_for(srcs.len(), cores(), &|| false, &|i| {
        let (adapter, src) = &srcs[i];
        let mut out: Vec<Session> = Vec::new();
        if adapter.parse(src, &opts, &mut out).is_ok() {
            for s in &mut out {
                normalize(s, &norm, adapter.info().injected);
                turns.fetch_add(s.turns.len() as u64, Ordering::Relaxed);
            }
        }
    });
    turns.into_inner()
}

fn changed_sources(r: &IndexReport) -> (u64, u64) {
    (r.harnesses.values().map(|h| h.resumed).sum(), r.harnesses.values().map(|h| h.parsed).sum())
}

/// Times `n` spawned no-change `deja index` runs after a first one that starts the
/// watcher (waited for), then stops that watcher. Says `watcher` when the runs were
/// answered by it, `scan` when none came up and each walked the stores.
fn unchanged_end_to_end(corpus: &Corpus, index: &std::path::Path, n: usize) -> Result<(super::stats::Latency, &'static str)> {
    let spawn = || -> Result<Duration> {
        let mut cmd = corpus.deja_command(index)?;
        let t = Instant::now();
        let status = cmd
            .args(["index", "--quiet"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .context("running deja index")?;
        let took = t.elapsed();
        if !status.success() {
            anyhow::bail!("`deja index` failed with {status}");
        }
        Ok(took)
    };
    super::search_bench::allow_watcher_start(index);
    spawn()?;
    let via = if super::search_bench::wait_for_watcher(index) { "watcher" } else { "scan" };
    let times: Result<Vec<Duration>> = (0..n).map(|_| spawn()).collect();
    super::search_bench::stop_watcher(index);
    Ok((super::stats::Latency::of(&times?), via))
}

pub fn run(args: IndexBenchArgs) -> Result<ExitCode> {
    super::report(args.json, &measure(&args)?, render)
}

/// Runs every stage and returns the figures.
fn measure(args: &IndexBenchArgs) -> Result<IndexBench> {
    let machine = Machine::here();
    let corpus = Corpus::open(&args.corpus)?;
    let index_dir = args.index.clone().unwrap_or_else(|| corpus.dir.join("index"));
    let paths = IndexPaths::new(&index_dir);
    let env = corpus.env(&index_dir);
    // Cold means no index and no archive: a rebuild beside either would keep the old
    // generation, or copy it into the archive, or restore from it.
    for dir in [&index_dir, &super::corpus::archive_dir_of(&index_dir)] {
        if dir.exists() {
            std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
        }
    }
    let bytes = corpus.manifest.bytes;
    let say = |s: String| {
        if !args.json {
            eprintln!("{s}");
        }
    };
    say(format!("corpus: {}", corpus.describe()));

    let (read_baseline, parse_baseline) = if args.no_baseline {
        (None, None)
    } else {
        let srcs = sources(&env);
        // Reading first also brings the corpus into the page cache, so every later
        // stage starts from the same warm cache.
        let (read, wall, cpu) = timed(|| read_all(&srcs));
        say(format!("read baseline: {} in {:.2}s", super::stats::bytes(read), wall.as_secs_f64()));
        let read_stage = stage(bytes, wall, cpu);
        let (turns, wall, cpu) = timed(|| parse_all(&srcs, &env));
        say(format!("parse+normalize baseline: {turns} turns in {:.2}s", wall.as_secs_f64()));
        (Some(read_stage), Some(stage(bytes, wall, cpu)))
    };

    let isolated = reset_peak_rss();
    let req = IndexRequest { rebuild: true, wait: true, ..IndexRequest::default() };
    let (report, wall, cpu) = timed(|| run_index(&env, &paths, &req, &Silent));
    let report = report.map_err(index_err)?;
    let peak = peak_rss();
    let sessions: u64 = report.harnesses.values().map(|h| h.sessions).sum();
    let turns: u64 = report.harnesses.values().map(|h| h.turns).sum();
    let cold = ColdStage {
        stage: stage(bytes, wall, cpu),
        sessions,
        turns,
        sessions_per_s: sessions as f64 / wall.as_secs_f64().max(1e-9),
        peak_rss_bytes: peak,
        peak_rss_isolated: isolated,
    };
    say(format!(
        "cold index: {:.2}s, {:.1} MB/s, {:.0} sessions/s, peak RSS {}",
        wall.as_secs_f64(),
        cold.stage.mb_per_s,
        cold.sessions_per_s,
        peak.map_or_else(|| "unknown".to_string(), super::stats::bytes)
    ));

    let req = IndexRequest { wait: true, ..IndexRequest::default() };
    let mut unchanged_ms = Vec::new();
    for _ in 0..args.repeat.max(1) {
        let (r, wall, _) = timed(|| run_index(&env, &paths, &req, &Silent));
        let r = r.map_err(index_err)?;
        if r.changed() {
            anyhow::bail!("a re-index of an unchanged corpus read sources again; is something else writing {}?", corpus.home().display());
        }
        unchanged_ms.push(ms(wall));
    }
    let unchanged_median_ms = median(&unchanged_ms);
    say(format!("no-change re-index: median {unchanged_median_ms:.1} ms over {} runs", unchanged_ms.len()));
    let (unchanged_e2e, unchanged_e2e_via) = if args.no_e2e {
        (None, None)
    } else {
        let (lat, via) = unchanged_end_to_end(&corpus, &index_dir, args.repeat.max(1) * 4)?;
        say(format!("no-change `deja index` end to end ({via}): p50 {:.1} ms, p95 {:.1} ms", lat.p50_ms, lat.p95_ms));
        (Some(lat), Some(via))
    };

    let grown = grow(&corpus, args.grow, 1).context("growing the corpus")?;
    let appended: u64 = grown.iter().map(|g| g.appended).sum();
    let (r, wall, _) = timed(|| run_index(&env, &paths, &req, &Silent));
    // Put the corpus back before looking at the result, so a failure leaves it intact.
    restore(&grown).context("truncating grown files back")?;
    let r = r.map_err(index_err)?;
    let (tail, full) = changed_sources(&r);
    let growth = GrowthStage {
        files_grown: grown.len(),
        bytes_appended: appended,
        seconds: wall.as_secs_f64(),
        sources_read_from_tail: tail,
        sources_parsed_in_full: full,
    };
    say(format!(
        "growth: {} files (+{}) absorbed in {:.3}s ({} read from the tail, {} in full)",
        grown.len(),
        super::stats::bytes(appended),
        wall.as_secs_f64(),
        tail,
        full
    ));
    // Re-sync the index with the restored corpus (the truncated files are re-read).
    run_index(&env, &paths, &req, &Silent).map_err(index_err)?;

    let index_bytes = dir_size(&index_dir);
    let space = deja_core::index::IndexView::open(&paths).ok().and_then(|v| v.space_usage().ok());
    let archive_bytes = deja_core::archive::Archive::of(&env).size();
    let result = IndexBench {
        schema_version: 1,
        benchmark: "index",
        date: super::today(),
        machine: machine.ended(),
        corpus: CorpusInfo::of(&corpus),
        cold_vs_parse: parse_baseline.as_ref().map(|p| cold.stage.seconds / p.seconds.max(1e-9)),
        read_baseline,
        parse_baseline,
        cold,
        cold_stages: report.stages.clone(),
        unchanged_ms,
        unchanged_median_ms,
        unchanged_e2e,
        unchanged_e2e_via,
        space,
        growth,
        index_bytes,
        index_ratio: index_bytes as f64 / bytes.max(1) as f64,
        archive_bytes,
        archive_ratio: archive_bytes as f64 / bytes.max(1) as f64,
    };
    Ok(result)
}

fn render(r: &IndexBench) -> String {
    let mut out = String::new();
    out.push_str(&format!("deja bench index — {} — {}\n", r.date, r.machine.line()));
    out.push_str(&format!("corpus: {} in {} sessions, {} files\n", super::stats::bytes(r.corpus.bytes), r.corpus.sessions, r.corpus.files));
    let cores = |s: &Stage| s.cores_used.map_or_else(String::new, |c| format!(", {c:.2} cores busy"));
    if let Some(s) = &r.read_baseline {
        out.push_str(&format!("  read every byte        {:>8.2} s  {:>7.1} MB/s{}\n", s.seconds, s.mb_per_s, cores(s)));
    }
    if let Some(s) = &r.parse_baseline {
        out.push_str(&format!("  parse + normalize      {:>8.2} s  {:>7.1} MB/s{}\n", s.seconds, s.mb_per_s, cores(s)));
    }
    let c = &r.cold;
    out.push_str(&format!(
        "  cold index             {:>8.2} s  {:>7.1} MB/s{}, {:.0} sessions/s, peak RSS {}{}\n",
        c.stage.seconds,
        c.stage.mb_per_s,
        cores(&c.stage),
        c.sessions_per_s,
        c.peak_rss_bytes.map_or_else(|| "unknown".to_string(), super::stats::bytes),
        if c.peak_rss_isolated { "" } else { " (whole process)" }
    ));
    if let Some(x) = r.cold_vs_parse {
        out.push_str(&format!("    = {x:.2}× the parse-only time\n"));
    }
    for st in &r.cold_stages {
        out.push_str(&format!(
            "    {:<24} {:>8.2} s  peak RSS so far {}\n",
            st.name,
            st.ms as f64 / 1000.0,
            st.peak_rss_bytes.map_or_else(|| "unknown".to_string(), super::stats::bytes)
        ));
    }
    out.push_str(&format!(
        "  no-change re-index     {:>8.1} ms (median of {}; every store walked)\n",
        r.unchanged_median_ms,
        r.unchanged_ms.len()
    ));
    if let (Some(l), Some(via)) = (&r.unchanged_e2e, r.unchanged_e2e_via) {
        out.push_str(&format!("  no-change `deja index` {:>7.1} ms p50, {:.1} ms p95, end to end ({via})\n", l.p50_ms, l.p95_ms));
    }
    let g = &r.growth;
    out.push_str(&format!(
        "  {} files grown (+{})  {:>6.3} s  ({} read from the tail, {} in full)\n",
        g.files_grown,
        super::stats::bytes(g.bytes_appended),
        g.seconds,
        g.sources_read_from_tail,
        g.sources_parsed_in_full
    ));
    out.push_str(&format!(
        "  index size             {} = {:.1}% of the corpus\n",
        super::stats::bytes(r.index_bytes),
        r.index_ratio * 100.0
    ));
    if let Some(sp) = &r.space {
        let parts: Vec<String> = sp.parts.iter().map(|(part, b)| format!("{part} {}", super::stats::bytes(*b))).collect();
        out.push_str(&format!("    {} segments, {} documents: {}\n", sp.segments, sp.docs, parts.join(", ")));
    }
    out.push_str(&format!(
        "  archive size           {} = {:.1}% of the corpus\n",
        super::stats::bytes(r.archive_bytes),
        r.archive_ratio * 100.0
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stage_runs_on_a_small_corpus_and_growth_is_read_from_the_tail() {
        let tmp = tempfile::tempdir().unwrap();
        super::super::corpus::generate(tmp.path(), 600_000, 4, super::super::gen::Profile::Realistic, &[], false).unwrap();
        let args = IndexBenchArgs {
            corpus: tmp.path().to_path_buf(),
            index: None,
            repeat: 2,
            grow: 0.2,
            no_baseline: false,
            no_e2e: true,
            json: true,
        };
        let r = measure(&args).unwrap();
        let corpus = Corpus::open(tmp.path()).unwrap();
        assert_eq!(r.cold.sessions, corpus.manifest.sessions);
        assert_eq!(r.unchanged_ms.len(), 2);
        // The appended records are valid in their formats: every grown file is read
        // from its tail, none parsed again in full.
        assert!(r.growth.files_grown > 0);
        assert_eq!(r.growth.sources_read_from_tail, r.growth.files_grown as u64);
        assert_eq!(r.growth.sources_parsed_in_full, 0);
        assert!(r.index_bytes > 0 && r.read_baseline.is_some() && r.parse_baseline.is_some());
        // The cold run says where its time went and the index where its bytes go.
        let names: Vec<&str> = r.cold_stages.iter().map(|s| s.name).collect();
        assert!(names.starts_with(&["discover", "parse and write"]), "{names:?}");
        let space = r.space.as_ref().expect("space usage");
        assert!(space.total > 0 && space.parts["store"] > 0 && space.parts["postings"] > 0, "{space:?}");
        // The corpus is as it was generated.
        assert_eq!(crate::report::dir_size(&corpus.home()), corpus.manifest.bytes);
    }
}

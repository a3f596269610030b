//! `deja index`: build or refresh the index, with a progress bar on a terminal and a
//! per-harness report at the end, then what the harnesses' own retention deletes this
//! week and whether deja keeps it. Whatever could not be read is named with the reason,
//! also under `--quiet` (on stderr), and turns the exit status into
//! [`EXIT_UNREADABLE`] while everything else is indexed. `--watch` keeps running
//! ([`crate::watch`]).

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::{bail, Result};
use clap::Args;
use deja_core::index::indexer::{run_index, IndexObserver, IndexReport, IndexRequest, IndexRunError};
use deja_core::index::IndexPaths;
use deja_core::StoreEnv;
use indicatif::{ProgressBar, ProgressStyle};

use crate::output::{human_bytes, table};

/// The exit status of a run that indexed what it could but left something unread (a
/// source or directory that could not be read, a source refused as a decompression
/// bomb). 1 is an error that stopped the run, 2 a usage error (clap's).
pub const EXIT_UNREADABLE: u8 = 3;

/// `deja index --help`'s closing text: the exit statuses and the decoding caps.
fn after_help() -> String {
    use deja_core::read::{MAX_DECODED_BYTES, MAX_DECODED_BYTES_VAR, MAX_DECODE_RATIO, MIN_SOURCE_ALLOWANCE};
    format!(
        "Exit status:\n  0  indexed; everything found was read\n  1  error; the index was not updated\n  2  usage error\n  \
         {EXIT_UNREADABLE}  indexed, but some sources or directories could not be read or were refused; each is named \
         with the reason in the report (on stderr with --quiet)\n\nA compressed source may decode to {} MiB, beyond \
         that to {MAX_DECODE_RATIO}× its size, and never to more than {} MiB ({MAX_DECODED_BYTES_VAR}, in bytes, sets \
         this cap); a larger one is refused as a decompression bomb and not decoded again until it or the cap changes.",
        MIN_SOURCE_ALLOWANCE >> 20,
        MAX_DECODED_BYTES >> 20
    )
}

#[derive(Args)]
#[command(after_help = after_help())]
pub struct IndexArgs {
    /// Index every harness (the default).
    #[arg(long, conflicts_with = "harness")]
    pub all: bool,
    /// Only these harnesses (repeatable); see `deja harnesses`.
    #[arg(long = "harness", value_name = "ID")]
    pub harness: Vec<String>,
    /// Build a new index generation from the sources and the archive, and swap it in when
    /// complete (searches answer from the old one until then).
    #[arg(long)]
    pub rebuild: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress and no report; what could not be read still goes to stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Keep running and index what harnesses append as they write it (filesystem
    /// notifications, debounced 300 ms; a full re-scan every 60 s). While a watcher of
    /// every harness runs, a search asks it to index what is pending and answers (about
    /// a millisecond), instead of walking every store. The first search with no watcher
    /// starts one in the background (`[index] watch = "off"` or DEJA_WATCH=off: never).
    /// Prints one line per run that changed something on stderr (one JSON object per run
    /// on stdout with --json); Ctrl-C or SIGTERM stops it after the run in progress, with
    /// exit status 0.
    #[arg(long)]
    pub watch: bool,
    /// With --watch: stop after this many seconds with no change and no search asking.
    /// The watcher a search starts by itself uses 1800.
    #[arg(long, value_name = "SECS", requires = "watch")]
    pub idle_exit: Option<u64>,
    /// Walk every store and stat every source even when a watcher keeps the index
    /// fresh (without it, `deja index` asks the watcher to catch up and returns).
    #[arg(long, conflicts_with = "watch")]
    pub scan: bool,
}

/// A progress bar over the bytes to parse, shown only on a terminal.
pub struct BarObserver {
    bar: Option<ProgressBar>,
}

impl BarObserver {
    pub fn new(show: bool) -> Self {
        let bar = (show && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template("{spinner} indexing [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
            );
            bar
        });
        BarObserver { bar }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl IndexObserver for BarObserver {
    fn waiting(&self) {
        eprintln!("deja: another `deja index` is writing the index; waiting for it to finish…");
    }
    fn start(&self, _jobs: u64, bytes: u64) {
        if let Some(b) = &self.bar {
            b.set_length(bytes);
        }
    }
    fn parsed(&self, bytes: u64) {
        if let Some(b) = &self.bar {
            b.inc(bytes);
        }
    }
}

pub fn check_harness_ids(ids: &[String]) -> Result<()> {
    for id in ids {
        if deja_core::lookup(id).is_none() {
            let known: Vec<&str> = deja_core::registry().iter().map(|f| f.info().id).collect();
            bail!("unknown harness `{id}`; known: {}", known.join(", "));
        }
    }
    Ok(())
}

pub fn run(args: IndexArgs) -> Result<ExitCode> {
    check_harness_ids(&args.harness)?;
    if args.watch {
        return crate::watch::run(&args);
    }
    let env = StoreEnv::from_process();
    let paths = IndexPaths::new(env.index_dir());
    if !args.scan && !args.rebuild && args.harness.is_empty() {
        let started = std::time::Instant::now();
        if let Some(pid) = crate::freshness::caught_up_by_watcher(&paths) {
            return Ok(say_watcher_caught_up(&args, &paths, pid, started.elapsed()));
        }
    }
    let req = IndexRequest { harnesses: (!args.harness.is_empty()).then(|| args.harness.clone()), rebuild: args.rebuild, wait: true };
    let observer = BarObserver::new(!args.json && !args.quiet);
    let report = match run_index(&env, &paths, &req, &observer) {
        Ok(r) => r,
        // `wait: true` blocks on the lock rather than returning Busy.
        Err(IndexRunError::Busy) => bail!("another deja process is writing the index"),
        Err(IndexRunError::Index(e)) => return Err(e.into()),
    };
    observer.finish();
    if let Some(problem) = deja_core::read::DecodeLimit::env_problem() {
        eprintln!("deja: {problem}");
    }
    if !args.rebuild && args.harness.is_empty() {
        crate::freshness::start_watcher_if_wanted(&env, &paths);
    }
    // What the harnesses' own sweeps delete this week, now that this run archived
    // what it read (only the harnesses indexed).
    let indexed: Vec<&'static dyn deja_core::HarnessFormat> =
        deja_core::registry().into_iter().filter(|f| args.harness.is_empty() || args.harness.iter().any(|h| h == f.info().id)).collect();
    let retention = deja_core::index::retention::retention_reports(&env, &paths, &indexed, deja_core::Timestamp::now());
    if args.json {
        let mut v = report_json(&report);
        v["retention"] = serde_json::to_value(&retention)?;
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else if !args.quiet {
        print!("{}", render_report(&report));
        crate::doctor::print_retention(&retention);
    } else {
        // `-q` silences progress and the table, never what went unread.
        for (id, u) in report.unreadable() {
            eprintln!("deja: unreadable ({id}): {}: {}", u.path.display(), u.reason);
        }
    }
    Ok(exit_status(&report))
}

/// What `deja index` says when the running watcher has indexed every change already.
fn say_watcher_caught_up(args: &IndexArgs, paths: &IndexPaths, pid: Option<u32>, took: std::time::Duration) -> ExitCode {
    let pid_text = pid.map_or_else(|| "unknown".to_string(), |p| p.to_string());
    if args.json {
        let line = serde_json::json!({
            "schema_version": 1,
            "index_dir": paths.root.to_string_lossy(),
            "elapsed_ms": took.as_millis() as u64,
            "kept_fresh_by_watcher": {"pid": pid},
            "harnesses": {},
        });
        println!("{}", serde_json::to_string_pretty(&line).unwrap_or_default());
    } else if !args.quiet {
        println!(
            "Up to date: the watcher (`deja index --watch`, pid {pid_text}) has indexed every change. `deja index --scan` walks every store anyway and reports each harness."
        );
    }
    ExitCode::SUCCESS
}

/// 0 when everything found was read, [`EXIT_UNREADABLE`] when something was not.
pub fn exit_status(report: &IndexReport) -> ExitCode {
    if report.unreadable().next().is_some() {
        ExitCode::from(EXIT_UNREADABLE)
    } else {
        ExitCode::SUCCESS
    }
}

pub fn report_json(report: &IndexReport) -> serde_json::Value {
    serde_json::json!({
        "schema_version": 1,
        "index_dir": report.index_dir.to_string_lossy(),
        "elapsed_ms": report.elapsed_ms,
        "harnesses": report.harnesses,
        "new_generation": report.new_generation,
        "restored_from_archive": report.restored,
        "sources_gone": report.sources_gone,
        "sources_back": report.sources_back,
        "purged_by_exclusions": report.purged,
        "seeded_into_archive": report.seeded,
        "archive_problems": report.archive_problems,
        "stages": report.stages,
    })
}

pub fn render_report(report: &IndexReport) -> String {
    let mut out = String::new();
    if report.total_sources() == 0 && report.harnesses.values().all(|h| h.locked == 0) {
        out.push_str("No agent history found. Looked in:\n");
        for (id, h) in &report.harnesses {
            for (root, exists) in &h.roots {
                out.push_str(&format!("  {id:<10} {} {}\n", root.display(), if *exists { "(exists, empty)" } else { "(missing)" }));
            }
        }
        out.push_str("Set a harness's own variable (e.g. CLAUDE_CONFIG_DIR, CODEX_HOME, DSH_HOME) or DEJA_<ID>_ROOT if your history lives elsewhere, or try `deja demo`.\n");
        return out;
    }
    let rows: Vec<Vec<String>> = report
        .harnesses
        .iter()
        .filter(|(_, h)| h.sources > 0 || !h.unreadable.is_empty() || h.locked > 0)
        .map(|(id, h)| {
            vec![
                id.clone(),
                h.sources.to_string(),
                (h.parsed + h.resumed).to_string(),
                h.sessions.to_string(),
                h.turns.to_string(),
                h.skipped_lines.to_string(),
                h.unreadable.len().to_string(),
                human_bytes(h.bytes_read),
            ]
        })
        .collect();
    out.push_str(&table(&["harness", "sources", "read", "sessions", "turns", "skipped lines", "unreadable", "bytes read"], &rows));
    for (id, h) in &report.harnesses {
        for u in &h.unreadable {
            out.push_str(&format!("unreadable ({id}): {}: {}\n", u.path.display(), u.reason));
        }
        if h.locked > 0 {
            out.push_str(&format!("not opened ({id}): {} file(s): {}\n", h.locked, h.locked_reasons.join("; ")));
        }
    }
    let repaired: u64 = report.harnesses.values().map(|h| h.repaired_lines).sum();
    if repaired > 0 {
        out.push_str(&format!("{repaired} line(s) held invalid UTF-8: each bad byte was replaced with U+FFFD and the line kept\n"));
    }
    let forgotten: u64 = report.harnesses.values().map(|h| h.forgotten).sum();
    let excluded: u64 = report.harnesses.values().map(|h| h.excluded).sum();
    if forgotten + excluded > 0 {
        out.push_str(&format!(
            "not indexed: {forgotten} forgotten session(s) (`deja forget`), {excluded} excluded by {}\n",
            deja_core::config::config_path(&StoreEnv::from_process()).display()
        ));
    }
    if report.seeded > 0 {
        out.push_str(&format!("{} session(s) copied from the existing index into the archive\n", report.seeded));
    }
    if report.purged > 0 {
        out.push_str(&format!("{} session(s) removed from the index and archive: the exclusions now cover them\n", report.purged));
    }
    if let Some(generation) = &report.new_generation {
        out.push_str(&format!(
            "built a new index generation ({generation}); {} session(s) whose sources are gone restored from the archive\n",
            report.restored
        ));
    }
    if report.sources_gone > 0 {
        out.push_str(&format!(
            "{} session(s) whose source its harness deleted: kept in the archive (`deja search --deleted`, `deja restore ID`)\n",
            report.sources_gone
        ));
    }
    if report.sources_back > 0 {
        out.push_str(&format!("{} session(s) whose deleted source is back on disk\n", report.sources_back));
    }
    for p in &report.archive_problems {
        out.push_str(&format!("archive: {p}\n"));
    }
    let unread = report.unreadable().count();
    if unread > 0 {
        out.push_str(&format!("{unread} path(s) could not be read (listed above); everything else was indexed\n"));
    }
    let changed: u64 = report.harnesses.values().map(|h| h.parsed + h.resumed).sum();
    let unchanged: u64 = report.harnesses.values().map(|h| h.unchanged).sum();
    out.push_str(&format!(
        "{} sources read ({} unchanged) in {:.2}s → {}\n",
        changed,
        unchanged,
        report.elapsed_ms as f64 / 1000.0,
        report.index_dir.display()
    ));
    out
}

//! How a reader (`deja search`, `blame`, `fix`, `recall`, `deja index` itself) makes
//! sure the index holds what harnesses wrote before it answers, without paying a walk of
//! every store on every call.
//!
//! Cheapest first:
//! 1. A watcher of every harness runs and answers sync requests: ask it to catch up
//!    ([`sync_with_watcher`]) — a round trip of about a millisecond when nothing is
//!    pending, and a guarantee that every write finished before the call is indexed.
//! 2. A watcher of an older deja runs (it does not answer): trust it, as before.
//! 3. None runs: refresh here (walk the stores, one `stat` per source), then start a
//!    watcher in the background — unless `[index] watch = "off"` or `DEJA_WATCH=off` —
//!    so the next reader can ask it instead. It exits after [`IDLE_EXIT_SECS`] with
//!    neither a change nor a question, and when its index directory is deleted.
//!
//! Why a watcher and not a cheaper staleness check: a turn appended to a log changes
//! that file's size and mtime and nothing else — not its directory's mtime — so without
//! notifications the only way to know which of 25,000 logs grew is to `stat` all of them,
//! which on the 2-core benchmark machine costs 3.4 µs each, about 85 ms of system time,
//! before any directory is listed (`docs/benchmarks.md`, "Fresh answers").

use std::time::Duration;

use deja_core::config::{Settings, WatchMode};
use deja_core::index::indexer::{needs_new_generation, run_index, writer_busy, IndexRequest, IndexRunError, Silent};
use deja_core::index::{sync_with_watcher, watcher_running, IndexPaths, IndexView, Synced};
use deja_core::StoreEnv;

/// How long a reader waits for the watcher to catch up. Long enough for the runs a
/// burst of writes causes; a watcher still busy after it is indexing far more than a
/// turn (a first build, a rebuild), and the reader answers from what is indexed.
pub const SYNC_PATIENCE: Duration = Duration::from_secs(2);
/// A watcher started by a reader stops after this long with nothing to do.
pub const IDLE_EXIT_SECS: u64 = 1800;
/// Readers start at most one watcher per this long, so one that cannot run (no
/// notifications left on the system, a read-only index) is not retried by every search.
const START_BACKOFF: Duration = Duration::from_secs(60);

/// The pid of the watcher that has just indexed every change (outer `Some`), or `None`
/// when no watcher answered.
pub fn caught_up_by_watcher(paths: &IndexPaths) -> Option<Option<u32>> {
    match sync_with_watcher(paths, SYNC_PATIENCE) {
        Synced::Fresh => Some(watcher_running(paths).and_then(|w| w.pid)),
        Synced::NoWatcher | Synced::TimedOut => None,
    }
}

/// Makes the index fresh before a read (see the module doc). Never fails: a reader
/// answers from what is indexed, saying on stderr why it may lag.
pub fn refresh(env: &StoreEnv, paths: &IndexPaths) {
    refresh_reporting(env, paths, true, &mut |m| eprintln!("deja: {m}"));
}

/// [`refresh`], saying why the index may lag through `say` rather than on stderr, and
/// with a progress bar for a first build only when `progress` is set: the search screen
/// runs it on a thread of its own while it draws the terminal, where stderr would
/// scribble over the screen.
pub fn refresh_reporting(env: &StoreEnv, paths: &IndexPaths, progress: bool, say: &mut dyn FnMut(String)) {
    match sync_with_watcher(paths, SYNC_PATIENCE) {
        Synced::Fresh => return,
        Synced::TimedOut => {
            say(format!("the watcher did not catch up within {} s; answering from the index as it is", SYNC_PATIENCE.as_secs()));
            return;
        }
        Synced::NoWatcher => {}
    }
    // A watcher that does not answer sync requests (an older deja's) still keeps it fresh.
    if watcher_running(paths).is_some() {
        return;
    }
    // A new generation (after an upgrade, or a rebuild that did not finish) is a full
    // build: rather than make this search wait for it, answer from the generation that
    // serves and let a `deja index` of its own build the new one.
    let serving = IndexPaths::new(&paths.root);
    if serving.exists() && needs_new_generation(&serving) && IndexView::open(&serving).is_ok() {
        if !writer_busy(&serving) {
            match spawn_detached(&["index", "--quiet"]) {
                Ok(()) => say("building a new index generation in the background; answering from the current one".to_string()),
                Err(e) => say(format!("could not start the index build in the background ({e}); run `deja index`")),
            }
        }
        return;
    }
    let first_build = !paths.exists() && progress;
    let bar = crate::index_cmd::BarObserver::new(first_build);
    let observer: &dyn deja_core::index::indexer::IndexObserver = if first_build { &bar } else { &Silent };
    let result = run_index(env, paths, &IndexRequest { wait: false, ..IndexRequest::default() }, observer);
    bar.finish();
    match result {
        Ok(_) => start_watcher_reporting(env, paths, say),
        Err(IndexRunError::Busy) => {}
        Err(IndexRunError::Index(e)) => say(format!("could not refresh the index ({e}); searching what is there")),
    }
}

/// Starts `deja index --watch` in the background when the settings allow it and none
/// runs (nor was started within [`START_BACKOFF`]).
pub fn start_watcher_if_wanted(env: &StoreEnv, paths: &IndexPaths) {
    start_watcher_reporting(env, paths, &mut |m| eprintln!("deja: {m}"));
}

/// [`start_watcher_if_wanted`], saying a failure through `say`.
fn start_watcher_reporting(env: &StoreEnv, paths: &IndexPaths, say: &mut dyn FnMut(String)) {
    let config = Settings::load(env).map(|s| s.config).unwrap_or_default();
    if WatchMode::in_effect(env, &config) == WatchMode::Off || watcher_running(paths).is_some() || !paths.root.is_dir() {
        return;
    }
    let marker = paths.root.join("watcher.started");
    let recent =
        std::fs::metadata(&marker).and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok()).is_some_and(|age| age < START_BACKOFF);
    if recent || deja_core::fsutil::write_private(&marker, format!("{}\n", std::process::id()).as_bytes()).is_err() {
        return;
    }
    let idle = IDLE_EXIT_SECS.to_string();
    if let Err(e) = spawn_detached(&["index", "--watch", "--quiet", "--idle-exit", &idle]) {
        say(format!("could not start a watcher in the background ({e}); every search refreshes the index itself"));
    }
}

/// Starts `deja <args>` detached: in a process group of its own (a terminal's hangup
/// does not reach it), with its output going nowhere; it outlives this process.
pub fn spawn_detached(args: &[&str]) -> std::io::Result<()> {
    let mut cmd = std::process::Command::new(std::env::current_exe()?);
    cmd.args(args).stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn()?;
    // Reaped by a thread, so a long-lived caller (the MCP server) leaves no zombie; a
    // short-lived one exits first and the child is adopted.
    let _ = std::thread::Builder::new().name("deja-reap".into()).spawn(move || {
        let _ = child.wait();
    });
    Ok(())
}

//! `deja index --watch`: keep the index fresh while harnesses write, so nobody else has
//! to refresh it.
//!
//! The watcher follows every store root discovery reports with filesystem
//! notifications: an existing directory root recursively; a root that is a file through
//! its parent directory; a root that does not exist yet through its nearest existing
//! ancestor, non-recursively, re-armed after each run so the root itself is watched once
//! it appears (and that harness indexed again, for what was written before the new watch
//! took). Events are mapped back to the harnesses whose roots they touch and batched: the
//! first event opens a [`DEBOUNCE`] window, and everything that arrives within it goes into
//! one ordinary incremental [`run_index`] of those harnesses, so a grown log is read from
//! its tail and nothing is rebuilt. A window that opens at the first event (rather than
//! one that waits for quiet) bounds the delay while a harness writes without pause. A
//! full incremental run every [`RESCAN`] catches what notifications miss (a queue
//! overflow, a network file system).
//!
//! `notify` rather than raw inotify: it is the maintained cross-platform layer (inotify,
//! FSEvents, ReadDirectoryChangesW, a polling fallback). Its debouncer crates were not
//! used: `notify-debouncer-mini` drops the event kind, and the kind is what tells a write
//! from a read. Every run opens the directories it walks and the logs it reads, and on
//! inotify an open is an event, so without filtering out access events each run would
//! cause the next, forever. `signal-hook` turns SIGINT and SIGTERM into a flag polled
//! between runs, so a run in progress is finished and committed rather than cut off; a
//! second signal ends the process at once.
//!
//! Fresh answers: a watcher of every harness also answers sync requests
//! ([`deja_core::index::watcher::sync_with_watcher`]). A reader drops a file into
//! `watcher-sync/`; since its event queues behind those of every earlier write, the
//! watcher indexes what is pending at once (no debounce: someone waits) and then deletes
//! the request. So a search finds a turn written a moment before it started, at the cost
//! of a round trip rather than a walk of every store.
//!
//! Started by a reader (`--idle-exit`, see [`crate::freshness`]), a watcher exits after
//! that long with neither a sync request nor a change, and at once when its index
//! directory is deleted: nobody is left to serve.
//!
//! Coexistence: each run takes the writer lock without waiting and retries while another
//! `deja index` holds it, so the watcher never holds the lock while idle and still stops
//! promptly when asked. For its whole life a watcher of every harness holds the watcher
//! lock ([`deja_core::index::watcher`]): searches, MCP and hooks see it and skip their own
//! refresh.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use deja_core::index::indexer::{run_index, IndexReport, IndexRequest, IndexRunError, Silent};
use deja_core::index::watcher::{prepare_sync_dir, WatcherLock};
use deja_core::index::IndexPaths;
use deja_core::StoreEnv;
use notify::event::{AccessKind, AccessMode};
use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use crate::index_cmd::IndexArgs;

/// How long after the first event of a batch it is indexed: one appended turn is
/// several writes, often in more than one file.
pub const DEBOUNCE: Duration = Duration::from_millis(300);
/// The safety-net full run, for changes no notification reported.
pub const RESCAN: Duration = Duration::from_secs(60);
/// How often the loop looks at the stop flag while nothing happens, and retries a busy
/// writer lock: a stop is answered within this.
const TICK: Duration = Duration::from_millis(100);
/// How often the watcher checks that its index directory is still there.
const LIVENESS: Duration = Duration::from_secs(1);
/// Re-arming can reveal a deeper root level each run (`a/` appeared, then `a/b/`);
/// this bounds the follow-up runs one batch of events can cause.
const MAX_FOLLOW_UPS: usize = 8;

/// What one path is watched for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Watch {
    pub path: PathBuf,
    pub recursive: bool,
}

/// What a path is on disk, as far as choosing a watch goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    Dir,
    File,
    Missing,
}

fn probe_fs(path: &Path) -> Found {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Found::Dir,
        Ok(_) => Found::File,
        Err(_) => Found::Missing,
    }
}

/// The watches that cover `roots` (see the module doc), without a watch another already
/// covers: a path inside a recursive watch needs none of its own.
pub fn watches_for<'a>(roots: impl IntoIterator<Item = &'a Path>, probe: &dyn Fn(&Path) -> Found) -> BTreeSet<Watch> {
    let mut wanted = BTreeSet::new();
    for root in roots {
        let watch = match probe(root) {
            Found::Dir => Some(Watch { path: root.to_path_buf(), recursive: true }),
            // A file is watched through its directory: an atomic replace gives it a new
            // inode, and a watch on the old one would go quiet.
            Found::File => root.parent().map(|p| Watch { path: p.to_path_buf(), recursive: false }),
            Found::Missing => root
                .ancestors()
                .skip(1)
                .find(|a| !a.as_os_str().is_empty() && probe(a) != Found::Missing)
                .filter(|a| probe(a) == Found::Dir)
                .map(|a| Watch { path: a.to_path_buf(), recursive: false }),
        };
        wanted.extend(watch);
    }
    let recursive: Vec<PathBuf> = wanted.iter().filter(|w| w.recursive).map(|w| w.path.clone()).collect();
    wanted.into_iter().filter(|w| !recursive.iter().any(|r| w.path.starts_with(r) && (w.path != *r || !w.recursive))).collect()
}

/// The harnesses an event at `path` concerns: those with a root at or above it (a change
/// in the store) or below it (the root, or a directory on the way to it, appeared).
pub fn harnesses_for(path: &Path, roots: &BTreeMap<String, Vec<PathBuf>>) -> BTreeSet<String> {
    roots.iter().filter(|(_, rs)| rs.iter().any(|r| path.starts_with(r) || r.starts_with(path))).map(|(id, _)| id.clone()).collect()
}

/// Why a run happened, as the NDJSON output names it.
#[derive(Clone, Copy, PartialEq)]
enum Trigger {
    Start,
    Change,
    /// A reader asked for what is pending (a sync request).
    Sync,
    Rescan,
}

impl Trigger {
    fn as_str(self) -> &'static str {
        match self {
            Trigger::Start => "start",
            Trigger::Change => "change",
            Trigger::Sync => "sync",
            Trigger::Rescan => "rescan",
        }
    }
}

struct Watching {
    env: StoreEnv,
    paths: IndexPaths,
    /// Only these harnesses (`--harness`), or all.
    scope: Option<Vec<String>>,
    json: bool,
    quiet: bool,
    stop: Arc<AtomicBool>,
    watcher: RecommendedWatcher,
    /// Every harness's store roots, as its last run reported them.
    roots: BTreeMap<String, Vec<PathBuf>>,
    armed: BTreeSet<Watch>,
    /// Paths a watch could not be set on, said once each (retried every re-arm).
    failed: BTreeSet<PathBuf>,
    /// Unreadable paths already reported, so a watcher does not repeat them every run.
    said_unreadable: BTreeSet<(String, PathBuf)>,
    /// The watcher lock, held by a watcher of every harness.
    claim: Option<WatcherLock>,
    /// Where sync requests appear (a watcher of every harness only).
    sync_dir: Option<PathBuf>,
    /// Exit after this long with no sync request and no change (`--idle-exit`).
    idle_exit: Option<Duration>,
    /// `[team] push = "auto"`.
    push: AutoPush,
}

/// `[team] push = "auto"`: a push to the team store after each run that archived
/// something, on a thread of its own so that a slow or unreachable server never holds
/// indexing up; one push at a time, and a run that ends meanwhile asks for one more.
/// A failed push says so in one line and is tried again after the next run (a push
/// resumes from what the server committed).
#[derive(Default)]
struct AutoPush {
    running: Arc<AtomicBool>,
    again: Arc<AtomicBool>,
}

impl AutoPush {
    fn kick(&self, env: &StoreEnv, quiet: bool, json: bool) {
        let Ok(team) = crate::team::settings(env) else { return };
        if team.push != deja_core::config::PushMode::Auto || deja_core::team::Sharing::of(&team).is_empty() {
            return;
        }
        self.again.store(true, Ordering::SeqCst);
        if self.running.swap(true, Ordering::SeqCst) {
            return;
        }
        let (running, again, env) = (self.running.clone(), self.again.clone(), env.clone());
        std::thread::spawn(move || loop {
            while again.swap(false, Ordering::SeqCst) {
                // Settings are read again: `deja team share` may have changed them.
                match crate::team::settings(&env).and_then(|t| crate::team::push(&env, &t, false)) {
                    Ok(r) if json => println!("{}", serde_json::json!({"schema_version": 1, "team_push": r})),
                    Ok(r) if !quiet && (r.sessions > 0 || r.removed > 0) => {
                        eprintln!("deja: pushed {} session(s), {} turn(s) to the team store", r.sessions, r.turns)
                    }
                    Ok(_) => {}
                    Err(e) => eprintln!("deja: team push failed (tried again after the next run): {e:#}"),
                }
            }
            running.store(false, Ordering::SeqCst);
            // A kick between the last check and the store above found it running.
            if !again.load(Ordering::SeqCst) || running.swap(true, Ordering::SeqCst) {
                return;
            }
        });
    }
}

pub fn run(args: &IndexArgs) -> Result<ExitCode> {
    let env = StoreEnv::from_process();
    let paths = IndexPaths::new(env.index_dir());
    let scope = (!args.harness.is_empty()).then(|| args.harness.clone());
    // Only a watcher of every harness makes every refresh redundant; one of a few
    // harnesses leaves the others to the readers' own refreshes.
    let mut claim = match scope {
        None => Some(WatcherLock::acquire(&paths).context("could not start watching")?),
        Some(_) => None,
    };
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // Registered first, this one sees the flag still unset on the first signal; on
        // a second it ends the process, for a user who will not wait for a long run.
        signal_hook::flag::register_conditional_shutdown(sig, 1, stop.clone()).context("could not handle signals")?;
        signal_hook::flag::register(sig, stop.clone()).context("could not handle signals")?;
    }
    let (tx, rx) = channel();
    let mut watcher = notify::recommended_watcher(tx).context("could not start filesystem notifications")?;
    // Requests are watched before the lock says this watcher answers them, and before
    // the first run, so one made meanwhile waits for that run rather than going unseen.
    let sync_dir = match claim.as_mut() {
        Some(lock) => {
            let dir = prepare_sync_dir(&paths).context("could not prepare the sync directory")?;
            watcher.watch(&dir, RecursiveMode::NonRecursive).with_context(|| format!("could not watch {}", dir.display()))?;
            lock.announce_sync().with_context(|| format!("could not write {}", paths.watcher().display()))?;
            Some(dir)
        }
        None => None,
    };
    let mut w = Watching {
        env,
        paths,
        scope,
        json: args.json,
        quiet: args.quiet,
        stop,
        watcher,
        roots: BTreeMap::new(),
        armed: BTreeSet::new(),
        failed: BTreeSet::new(),
        said_unreadable: BTreeSet::new(),
        claim,
        sync_dir,
        idle_exit: args.idle_exit.map(Duration::from_secs),
        push: AutoPush::default(),
    };
    let first = w.index(w.scope.clone(), Trigger::Start, args.rebuild)?;
    if first.is_none() {
        return Ok(ExitCode::SUCCESS);
    }
    // A write made after the first run read its store but before the watch on it took
    // is in neither, and a sync request may already be waiting for it: the harnesses
    // whose watches were just added run once more before any request is answered.
    if let Some(again) = w.rearm_for_more() {
        w.index_and_follow(Some(again), Trigger::Start);
    }
    if !w.quiet {
        eprintln!(
            "deja: watching {} path(s) for {} harness(es); {}Ctrl-C stops",
            w.armed.len(),
            w.roots.len(),
            if w.claim.is_some() { "searches, MCP and hooks ask it instead of walking the stores; " } else { "" }
        );
    }
    w.watch_loop(&rx)?;
    Ok(ExitCode::SUCCESS)
}

impl Watching {
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    fn watch_loop(&mut self, rx: &Receiver<notify::Result<notify::Event>>) -> Result<()> {
        let mut last_full = Instant::now();
        let mut dirty: BTreeSet<String> = BTreeSet::new();
        // When the batch in `dirty` is indexed.
        let mut due: Option<Instant> = None;
        // Sync requests read but not yet answered.
        let mut requests: BTreeSet<PathBuf> = BTreeSet::new();
        let mut last_activity = Instant::now();
        let mut last_liveness = Instant::now();
        while !self.stopping() {
            if last_liveness.elapsed() >= LIVENESS {
                last_liveness = Instant::now();
                if self.claim.as_ref().is_some_and(|c| !c.still_ours(&self.paths)) {
                    if !self.quiet {
                        eprintln!("deja: the index directory {} is gone; stopping", self.paths.root.display());
                    }
                    return Ok(());
                }
            }
            if self.idle_exit.is_some_and(|idle| last_activity.elapsed() >= idle) {
                if !self.quiet {
                    eprintln!("deja: idle; stopping");
                }
                return Ok(());
            }
            let wait = due.map_or(TICK, |d| d.saturating_duration_since(Instant::now()).min(TICK));
            let first = match rx.recv_timeout(wait) {
                Ok(batch) => Some(batch),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => anyhow::bail!("filesystem notifications stopped"),
            };
            for batch in first.into_iter().chain(std::iter::from_fn(|| rx.try_recv().ok())) {
                match batch {
                    // Reads, deja's own included, change nothing; a file closed after
                    // writing is a change.
                    Ok(event) if matches!(event.kind, EventKind::Access(a) if a != AccessKind::Close(AccessMode::Write)) => {}
                    Ok(event) if event.need_rescan() => {
                        eprintln!("deja: the system dropped filesystem notifications; re-scanning everything");
                        last_full = Instant::now() - RESCAN;
                    }
                    Ok(event) => {
                        if let Some(sync) = &self.sync_dir {
                            let asks = matches!(event.kind, EventKind::Create(_));
                            for path in event.paths.iter().filter(|p| p.parent() == Some(sync.as_path())) {
                                if asks {
                                    requests.insert(path.clone());
                                }
                            }
                        }
                        // The index's and the archive's own writes are no news.
                        let archive = deja_core::archive::Archive::of(&self.env).dir;
                        let own = |p: &PathBuf| p.starts_with(&self.paths.root) || p.starts_with(&archive);
                        for path in event.paths.iter().filter(|p| !own(p)) {
                            dirty.extend(harnesses_for(path, &self.roots));
                        }
                    }
                    Err(e) => {
                        // Events were lost: only a full run knows what changed.
                        eprintln!("deja: filesystem notification error ({e}); re-scanning everything");
                        last_full = Instant::now() - RESCAN;
                    }
                }
            }
            if !requests.is_empty() {
                // Every write that finished before a request is in `dirty` now: index
                // it without waiting out the debounce, then answer.
                if !dirty.is_empty() {
                    due = None;
                    let harnesses: Vec<String> = std::mem::take(&mut dirty).into_iter().collect();
                    self.index_and_follow(Some(harnesses), Trigger::Sync);
                }
                for request in std::mem::take(&mut requests) {
                    // Gone already when its reader gave up waiting.
                    let _ = std::fs::remove_file(request);
                }
                last_activity = Instant::now();
            }
            if !dirty.is_empty() && due.is_none() {
                due = Some(Instant::now() + DEBOUNCE);
                last_activity = Instant::now();
            }
            if last_full.elapsed() >= RESCAN {
                dirty.clear();
                due = None;
                last_full = Instant::now();
                self.index_and_follow(self.scope.clone(), Trigger::Rescan);
            } else if due.is_some_and(|d| Instant::now() >= d) {
                due = None;
                let harnesses: Vec<String> = std::mem::take(&mut dirty).into_iter().collect();
                self.index_and_follow(Some(harnesses), Trigger::Change);
            }
        }
        Ok(())
    }

    /// One run, then re-arming; while re-arming adds watches, the harnesses they are for
    /// run again, for what was written before the watch took.
    fn index_and_follow(&mut self, harnesses: Option<Vec<String>>, trigger: Trigger) {
        let mut next = harnesses;
        for _ in 0..MAX_FOLLOW_UPS {
            match self.index(next.clone(), trigger, false) {
                Ok(Some(_)) => {}
                Ok(None) => return,
                // The next event or re-scan tries again; a watcher outlives a bad moment.
                Err(e) => {
                    eprintln!("deja: indexing failed: {e:#}");
                    return;
                }
            }
            match self.rearm_for_more() {
                Some(again) => next = Some(again),
                None => return,
            }
        }
    }

    /// Re-arms, and names the harnesses the watches it added are for (`None` when it
    /// added none): what was written to them before the watch took needs another run.
    fn rearm_for_more(&mut self) -> Option<Vec<String>> {
        let added = self.rearm();
        let again: BTreeSet<String> = added.iter().flat_map(|w| harnesses_for(&w.path, &self.roots)).collect();
        (!again.is_empty()).then(|| again.into_iter().collect())
    }

    /// One incremental run of `harnesses` (all when `None`), waiting for the writer lock
    /// without holding anything; `None` when a stop was asked for while waiting.
    fn index(&mut self, harnesses: Option<Vec<String>>, trigger: Trigger, rebuild: bool) -> Result<Option<IndexReport>> {
        let harnesses = match (harnesses, &self.scope) {
            (Some(hs), Some(scope)) => Some(hs.into_iter().filter(|h| scope.contains(h)).collect()),
            (hs, _) => hs,
        };
        let req = IndexRequest { harnesses, rebuild, wait: false };
        let mut said_waiting = false;
        let report = loop {
            match run_index(&self.env, &self.paths, &req, &Silent) {
                Ok(r) => break r,
                Err(IndexRunError::Busy) => {
                    if !said_waiting && !self.quiet {
                        eprintln!("deja: another `deja index` is writing the index; waiting for it to finish…");
                        said_waiting = true;
                    }
                    if self.stopping() {
                        return Ok(None);
                    }
                    std::thread::sleep(TICK);
                }
                Err(IndexRunError::Index(e)) => return Err(e).context("could not index"),
            }
        };
        for (id, h) in &report.harnesses {
            self.roots.insert(id.clone(), h.roots.iter().map(|(p, _)| p.clone()).collect());
        }
        self.say(&report, trigger);
        if report.harnesses.values().any(|h| h.parsed + h.resumed > 0) || trigger == Trigger::Start {
            self.push.kick(&self.env, self.quiet, self.json);
        }
        Ok(Some(report))
    }

    /// Prints what a run did: one NDJSON object per run with `--json`, else one line on
    /// stderr per run that changed something. Unreadable paths are named once each.
    fn say(&mut self, report: &IndexReport, trigger: Trigger) {
        for (id, u) in report.unreadable() {
            if self.said_unreadable.insert((id.to_string(), u.path.clone())) {
                eprintln!("deja: unreadable ({id}): {}: {}", u.path.display(), u.reason);
            }
        }
        let changed: BTreeMap<&str, (u64, u64)> =
            report.harnesses.iter().filter(|(_, h)| h.parsed + h.resumed > 0).map(|(id, h)| (id.as_str(), (h.sessions, h.turns))).collect();
        let sessions: u64 = changed.values().map(|c| c.0).sum();
        let turns: u64 = changed.values().map(|c| c.1).sum();
        if self.json {
            let per: serde_json::Map<String, serde_json::Value> =
                changed.iter().map(|(id, (s, t))| (id.to_string(), serde_json::json!({"sessions": s, "turns": t}))).collect();
            let line = serde_json::json!({
                "schema_version": 1,
                "trigger": trigger.as_str(),
                "elapsed_ms": report.elapsed_ms,
                "changed": !changed.is_empty(),
                "sessions": sessions,
                "turns": turns,
                "harnesses": per,
            });
            println!("{line}");
        } else if !self.quiet && !changed.is_empty() {
            let ids: Vec<&str> = changed.keys().copied().collect();
            let counted = |n, one, many| deja_core::recall::render::plural(n as usize, one, many);
            eprintln!(
                "indexed {} in {} ({}) in {} ms",
                counted(turns, "turn", "turns"),
                counted(sessions, "session", "sessions"),
                ids.join(", "),
                report.elapsed_ms
            );
        }
    }

    /// Brings the watches in line with the roots now known and what exists now; returns
    /// the watches added.
    fn rearm(&mut self) -> Vec<Watch> {
        let wanted = watches_for(self.roots.values().flatten().map(PathBuf::as_path), &probe_fs);
        let gone: Vec<Watch> = self.armed.difference(&wanted).cloned().collect();
        for w in gone {
            // The path may be gone already, and its watch with it.
            let _ = self.watcher.unwatch(&w.path);
            self.armed.remove(&w);
        }
        let mut added = Vec::new();
        for w in wanted.difference(&self.armed).cloned().collect::<Vec<_>>() {
            let mode = if w.recursive { RecursiveMode::Recursive } else { RecursiveMode::NonRecursive };
            match self.watcher.watch(&w.path, mode) {
                Ok(()) => {
                    self.failed.remove(&w.path);
                    self.armed.insert(w.clone());
                    added.push(w);
                }
                Err(e) => {
                    if self.failed.insert(w.path.clone()) {
                        eprintln!("deja: cannot watch {} ({e}); the re-scan every {} s covers it", w.path.display(), RESCAN.as_secs());
                    }
                }
            }
        }
        added
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe_of(dirs: &'static [&'static str], files: &'static [&'static str]) -> impl Fn(&Path) -> Found {
        move |p: &Path| {
            let s = p.to_str().unwrap_or("");
            if dirs.contains(&s) {
                Found::Dir
            } else if files.contains(&s) {
                Found::File
            } else {
                Found::Missing
            }
        }
    }

    fn w(path: &str, recursive: bool) -> Watch {
        Watch { path: PathBuf::from(path), recursive }
    }

    #[test]
    fn existing_roots_recursively_missing_ones_through_their_nearest_ancestor() {
        let probe = probe_of(&["/", "/h", "/h/.claude", "/h/.claude/projects", "/h/.config"], &["/h/.config/app.db"]);
        let roots = [
            PathBuf::from("/h/.claude/projects"),
            PathBuf::from("/h/.codex/sessions"),
            PathBuf::from("/h/.config/app.db"),
            PathBuf::from("/h/.config/x/y/z"),
        ];
        let got = watches_for(roots.iter().map(PathBuf::as_path), &probe);
        let want: BTreeSet<Watch> = [w("/h/.claude/projects", true), w("/h", false), w("/h/.config", false)].into_iter().collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_path_inside_a_recursive_watch_gets_none_of_its_own() {
        let probe = probe_of(&["/h", "/h/.a", "/h/.a/b", "/h/.a/b/c"], &["/h/.a/b/file"]);
        let roots = [PathBuf::from("/h/.a"), PathBuf::from("/h/.a/b/c"), PathBuf::from("/h/.a/b/file"), PathBuf::from("/h/.a/missing")];
        let got = watches_for(roots.iter().map(PathBuf::as_path), &probe);
        assert_eq!(got, [w("/h/.a", true)].into_iter().collect());
        // The same path wanted both ways is watched recursively once.
        let probe = probe_of(&["/h", "/h/.a"], &[]);
        let roots = [PathBuf::from("/h/.a"), PathBuf::from("/h/.a/missing")];
        assert_eq!(watches_for(roots.iter().map(PathBuf::as_path), &probe), [w("/h/.a", true)].into_iter().collect());
    }

    #[test]
    fn a_root_with_no_existing_ancestor_directory_is_left_to_the_rescan() {
        let probe = probe_of(&[], &["/h"]);
        assert!(watches_for([Path::new("/h/.codex")], &probe).is_empty(), "the ancestor is a file");
        assert!(watches_for([Path::new("rel/root")], &probe_of(&[], &[])).is_empty());
    }

    #[test]
    fn events_map_to_the_harnesses_whose_roots_they_touch() {
        let roots: BTreeMap<String, Vec<PathBuf>> = [
            ("claude".to_string(), vec![PathBuf::from("/h/.claude/projects")]),
            ("codex".to_string(), vec![PathBuf::from("/h/.codex/sessions"), PathBuf::from("/h/.codex/history.jsonl")]),
        ]
        .into_iter()
        .collect();
        let ids = |p: &str| harnesses_for(Path::new(p), &roots).into_iter().collect::<Vec<_>>();
        assert_eq!(ids("/h/.claude/projects/-src/a.jsonl"), ["claude"]);
        assert_eq!(ids("/h/.codex/history.jsonl"), ["codex"]);
        assert_eq!(ids("/h/.codex"), ["codex"], "a directory on the way to a root appeared");
        assert!(ids("/h/.bash_history").is_empty(), "a sibling in a watched ancestor is nobody's");
        assert!(ids("/h/.claude/settings.json").is_empty());
    }
}

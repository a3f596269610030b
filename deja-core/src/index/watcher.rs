//! The watcher lock: how a running `deja index --watch` tells every other deja process
//! that the index is kept fresh, so searches, MCP and hooks skip their own refresh.
//!
//! The watcher holds an exclusive `flock` on `<index root>/watcher.lock` for its whole
//! life and writes its pid and start time into the file. Readers probe with a shared,
//! non-blocking lock: if it would block, a watcher runs. A lock, not a pid file,
//! because the kernel releases it however the watcher ends (`kill -9` included), so a
//! stale file can never make readers believe the index is fresh when nobody keeps it so.
//!
//! A running watcher is not yet proof that a write made a moment ago is indexed: the
//! watcher batches events and indexes them a little later. [`sync_with_watcher`] closes
//! that gap with a barrier. The reader creates a file in `<index root>/watcher-sync/`,
//! which the watcher also watches. Notifications of one watcher reach it in the order
//! they happened (one inotify queue), so by the time the watcher reads the request it has
//! read every event of every write that finished before the request was made. It indexes
//! what those events touched, at once rather than after its debounce, and then deletes
//! the request: the reader, polling for the deletion, knows the index holds every write
//! that finished before it asked. With nothing pending the round trip costs about a
//! millisecond, not a walk of every store.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::time::{Duration, Instant};

use super::{IndexError, IndexPaths};
use crate::time::Timestamp;

/// A running watcher, as its lock file describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatcherInfo {
    /// `None` when the file could not be read back (the watcher may be writing it now).
    pub pid: Option<u32>,
    /// When the watcher started.
    pub since: Option<Timestamp>,
    /// It answers [`sync_with_watcher`].
    pub syncs: bool,
}

/// The running watcher of the index at `paths`, if one holds the watcher lock.
pub fn watcher_running(paths: &IndexPaths) -> Option<WatcherInfo> {
    let mut file = File::options().read(true).open(paths.watcher()).ok()?;
    match file.try_lock_shared() {
        Ok(()) => {
            let _ = file.unlock();
            None
        }
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            Some(parse_info(&text))
        }
        // A file system without locks: nobody can be known to keep the index fresh.
        Err(std::fs::TryLockError::Error(_)) => None,
    }
}

/// `<pid> <start, unix ms> [sync]`, as [`WatcherLock::acquire`] writes it. `sync` says
/// the watcher answers [`sync_with_watcher`] requests (a watcher of an older deja does not).
fn parse_info(text: &str) -> WatcherInfo {
    let mut words = text.split_whitespace();
    let pid = words.next().and_then(|w| w.parse().ok());
    let since = words.next().and_then(|w| w.parse().ok()).map(Timestamp::from_millis);
    let syncs = words.next() == Some(SYNC_PROTOCOL);
    WatcherInfo { pid, since, syncs }
}

/// The word in the lock file of a watcher that answers sync requests.
const SYNC_PROTOCOL: &str = "sync";

/// What [`sync_with_watcher`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Synced {
    /// The watcher indexed every write that finished before the call.
    Fresh,
    /// No watcher that answers sync requests runs: the caller refreshes itself.
    NoWatcher,
    /// The watcher did not answer in time (it is busy with a long run, or stopped
    /// answering); the index may lag.
    TimedOut,
}

/// How often a waiting reader looks for its request's deletion.
const SYNC_POLL: Duration = Duration::from_micros(250);

/// Asks the running watcher to index every write that finished before this call and
/// waits, at most `patience`, until it has (see the module doc).
pub fn sync_with_watcher(paths: &IndexPaths, patience: Duration) -> Synced {
    match watcher_running(paths) {
        Some(info) if info.syncs => {}
        _ => return Synced::NoWatcher,
    }
    let dir = paths.watcher_sync();
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let request = dir.join(format!("{}-{nanos}-{n}", std::process::id()));
    if File::options().write(true).create_new(true).open(&request).is_err() {
        // No request directory (the watcher makes it before it says it syncs) or no
        // room: nothing to wait for.
        return Synced::NoWatcher;
    }
    let started = Instant::now();
    let mut checks = 0u32;
    while request.exists() {
        if started.elapsed() >= patience {
            let _ = std::fs::remove_file(&request);
            return Synced::TimedOut;
        }
        checks += 1;
        // The watcher ended while we waited (every few dozen polls, not each: a probe
        // is two syscalls more).
        if checks.is_multiple_of(64) && watcher_running(paths).is_none() {
            let _ = std::fs::remove_file(&request);
            return Synced::NoWatcher;
        }
        std::thread::sleep(SYNC_POLL);
    }
    Synced::Fresh
}

/// Why the watcher lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum WatcherLockError {
    #[error("another `deja index --watch` already keeps this index fresh (pid {})", .0.pid.map_or("unknown".to_string(), |p| p.to_string()))]
    AlreadyRunning(WatcherInfo),
    #[error(transparent)]
    Index(#[from] IndexError),
}

/// Holds the watcher lock for the life of the value; dropping it (or the process
/// ending in any way) releases it.
pub struct WatcherLock {
    file: File,
}

/// A reader's shared probe holds the lock for microseconds; retrying this long tells a
/// probe from another watcher.
const ACQUIRE_PATIENCE: Duration = Duration::from_millis(500);

impl WatcherLock {
    pub fn acquire(paths: &IndexPaths) -> Result<WatcherLock, WatcherLockError> {
        super::indexer::create_private_dir(&paths.root).map_err(|source| IndexError::Io { path: paths.root.clone(), source })?;
        let path = paths.watcher();
        let io = |source| IndexError::Io { path: path.clone(), source };
        let mut file =
            crate::fsutil::open_private(&path, File::options().create(true).truncate(false).read(true).write(true)).map_err(io)?;
        let started = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < ACQUIRE_PATIENCE => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    let mut text = String::new();
                    let _ = file.read_to_string(&mut text);
                    return Err(WatcherLockError::AlreadyRunning(parse_info(&text)));
                }
                Err(std::fs::TryLockError::Error(source)) => return Err(io(source).into()),
            }
        }
        // Truncated only once locked: the previous watcher's line is replaced, never a
        // live one's.
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        writeln!(file, "{} {}", std::process::id(), Timestamp::now().millis()).map_err(io)?;
        file.flush().map_err(io)?;
        Ok(WatcherLock { file })
    }

    /// Says, in the lock file, that this watcher now answers sync requests: called once
    /// it watches [`IndexPaths::watcher_sync`], so no request can go unseen.
    pub fn announce_sync(&mut self) -> std::io::Result<()> {
        self.file.seek(std::io::SeekFrom::End(0))?;
        let len = self.file.stream_position()?;
        // Replaces the line's newline with ` sync\n`.
        self.file.set_len(len.saturating_sub(1))?;
        self.file.seek(std::io::SeekFrom::End(0))?;
        writeln!(self.file, " {SYNC_PROTOCOL}")?;
        self.file.flush()
    }

    /// The lock file is still the one this watcher locked: false once the index
    /// directory was deleted or the file replaced, when the watcher has nothing left to
    /// keep fresh.
    pub fn still_ours(&self, paths: &IndexPaths) -> bool {
        let (Ok(ours), Ok(now)) = (self.file.metadata(), std::fs::metadata(paths.watcher())) else { return false };
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            ours.ino() == now.ino() && ours.dev() == now.dev()
        }
        #[cfg(not(unix))]
        {
            ours.len() == now.len()
        }
    }
}

/// Prepares the directory sync requests are made in, emptied of requests left by
/// readers that gave up or died.
pub fn prepare_sync_dir(paths: &IndexPaths) -> Result<std::path::PathBuf, IndexError> {
    let dir = paths.watcher_sync();
    super::indexer::create_private_dir(&dir).map_err(|source| IndexError::Io { path: dir.clone(), source })?;
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let _ = std::fs::remove_file(e.path());
        }
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_see_the_watcher_only_while_it_holds_the_lock() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let paths = IndexPaths::new(tmp.path().join("index"));
        assert_eq!(watcher_running(&paths), None, "no lock file yet");
        let lock = WatcherLock::acquire(&paths).expect("acquire");
        let info = watcher_running(&paths).expect("a watcher runs");
        assert_eq!(info.pid, Some(std::process::id()));
        assert!(info.since.is_some());
        // flock locks belong to the open file description: a second open in this very
        // process conflicts just as another process's would.
        assert!(matches!(WatcherLock::acquire(&paths), Err(WatcherLockError::AlreadyRunning(_))));
        drop(lock);
        assert_eq!(watcher_running(&paths), None, "released on drop, though the file stays");
        assert!(paths.watcher().exists());
    }

    #[test]
    fn a_sync_request_waits_for_the_watcher_to_answer() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let paths = IndexPaths::new(tmp.path().join("index"));
        assert_eq!(sync_with_watcher(&paths, Duration::from_millis(50)), Synced::NoWatcher, "nobody runs");
        let mut lock = WatcherLock::acquire(&paths).expect("acquire");
        assert_eq!(sync_with_watcher(&paths, Duration::from_millis(50)), Synced::NoWatcher, "a watcher that never said it syncs");
        let dir = prepare_sync_dir(&paths).expect("sync dir");
        lock.announce_sync().expect("announce");
        assert!(watcher_running(&paths).is_some_and(|w| w.syncs && w.pid == Some(std::process::id())));
        assert_eq!(sync_with_watcher(&paths, Duration::from_millis(30)), Synced::TimedOut, "nobody answers");
        assert_eq!(std::fs::read_dir(&dir).expect("list").count(), 0, "a request given up on is taken back");
        // A stand-in watcher answers by deleting what it finds.
        let answering = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let flag = answering.clone();
        let responder = std::thread::spawn(move || {
            let mut answered = 0;
            while flag.load(std::sync::atomic::Ordering::SeqCst) {
                for e in std::fs::read_dir(&dir).expect("list").flatten() {
                    std::fs::remove_file(e.path()).expect("answer");
                    answered += 1;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            answered
        });
        assert_eq!(sync_with_watcher(&paths, Duration::from_secs(10)), Synced::Fresh);
        assert_eq!(sync_with_watcher(&paths, Duration::from_secs(10)), Synced::Fresh);
        answering.store(false, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(responder.join().expect("responder"), 2);
        assert!(lock.still_ours(&paths));
        std::fs::remove_dir_all(&paths.root).expect("remove index");
        assert!(!lock.still_ours(&paths), "the index directory went");
    }

    #[test]
    fn a_garbled_lock_file_still_reads_as_a_watcher_without_details() {
        assert_eq!(parse_info(""), WatcherInfo { pid: None, since: None, syncs: false });
        assert_eq!(parse_info("12 x"), WatcherInfo { pid: Some(12), since: None, syncs: false });
        assert_eq!(parse_info("12 1000\n"), WatcherInfo { pid: Some(12), since: Some(Timestamp::from_millis(1000)), syncs: false });
        assert_eq!(parse_info("12 1000 sync\n"), WatcherInfo { pid: Some(12), since: Some(Timestamp::from_millis(1000)), syncs: true });
    }
}

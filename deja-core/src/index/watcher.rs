//! The watcher lock: how a running `deja index --watch` tells every other deja process
//! that the index is kept fresh, so searches, MCP and hooks skip their own refresh.
//!
//! The watcher holds an exclusive `flock` on `<index root>/watcher.lock` for its whole
//! life and writes its pid and start time into the file. Readers probe with a shared,
//! non-blocking lock: if it would block, a watcher runs. A lock, not a pid file,
//! because the kernel releases it however the watcher ends (`kill -9` included), so a
//! stale file can never make readers believe the index is fresh when nobody keeps it so.

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

/// `<pid> <start, unix ms>`, as [`WatcherLock::acquire`] writes it.
fn parse_info(text: &str) -> WatcherInfo {
    let mut words = text.split_whitespace();
    let pid = words.next().and_then(|w| w.parse().ok());
    let since = words.next().and_then(|w| w.parse().ok()).map(Timestamp::from_millis);
    WatcherInfo { pid, since }
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
    _file: File,
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
        Ok(WatcherLock { _file: file })
    }
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
    fn a_garbled_lock_file_still_reads_as_a_watcher_without_details() {
        assert_eq!(parse_info(""), WatcherInfo { pid: None, since: None });
        assert_eq!(parse_info("12 x"), WatcherInfo { pid: Some(12), since: None });
        assert_eq!(parse_info("12 1000\n"), WatcherInfo { pid: Some(12), since: Some(Timestamp::from_millis(1000)) });
    }
}

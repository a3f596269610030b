//! How far the first build of an index has got, for the processes that find it busy.
//!
//! tantivy writes `meta.json` when the index is created, long before the first commit,
//! so until then every search sees an empty index and would answer "nothing matched".
//! The process building the first generation (or a rebuild) keeps a small
//! `first-build` file beside the index saying how much it has parsed; a search that
//! finds the writer busy and this file present says the index is being built and how
//! far it is instead. The file is removed when the build ends, however it ends; one
//! left by a killed process is recognised because nobody holds the writer lock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::indexer::IndexObserver;
use super::IndexPaths;

/// What a first build has done so far.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildProgress {
    pub pid: u32,
    /// Sources to parse, and bytes in them.
    pub jobs: u64,
    pub total_bytes: u64,
    /// Sources parsed, and their bytes.
    pub parsed: u64,
    pub parsed_bytes: u64,
}

impl BuildProgress {
    /// Percent of the bytes parsed, 0–100.
    pub fn percent(&self) -> u64 {
        (self.parsed_bytes.saturating_mul(100)).checked_div(self.total_bytes).unwrap_or(0).min(100)
    }
}

/// The first build's progress, if one is running now (the file exists and another
/// process holds the writer lock).
pub fn first_build(paths: &IndexPaths) -> Option<BuildProgress> {
    let text = std::fs::read_to_string(paths.first_build()).ok()?;
    let progress: BuildProgress = serde_json::from_str(&text).ok()?;
    let lock = std::fs::File::options().read(true).write(true).open(paths.lock()).ok()?;
    match lock.try_lock() {
        // Nobody is building: a killed build left the file behind.
        Ok(()) => None,
        Err(std::fs::TryLockError::WouldBlock) => Some(progress),
        Err(std::fs::TryLockError::Error(_)) => None,
    }
}

/// Passes events on to `inner` and, for a first build, records them in the
/// `first-build` file at most a few times a second. Removes the file when dropped.
pub(crate) struct Recorder<'a> {
    inner: &'a dyn IndexObserver,
    paths: Option<&'a IndexPaths>,
    jobs: AtomicU64,
    total_bytes: AtomicU64,
    parsed: AtomicU64,
    parsed_bytes: AtomicU64,
    last_write: Mutex<Option<Instant>>,
}

const WRITE_EVERY: Duration = Duration::from_millis(250);

impl<'a> Recorder<'a> {
    /// `first_build` says whether this run builds the index's first generation; only
    /// then is anything written.
    pub(crate) fn new(inner: &'a dyn IndexObserver, paths: &'a IndexPaths, first_build: bool) -> Self {
        Recorder {
            inner,
            paths: first_build.then_some(paths),
            jobs: AtomicU64::new(0),
            total_bytes: AtomicU64::new(0),
            parsed: AtomicU64::new(0),
            parsed_bytes: AtomicU64::new(0),
            last_write: Mutex::new(None),
        }
    }

    fn write(&self, force: bool) {
        let Some(paths) = self.paths else { return };
        let Ok(mut last) = self.last_write.lock() else { return };
        if !force && last.is_some_and(|t| t.elapsed() < WRITE_EVERY) {
            return;
        }
        *last = Some(Instant::now());
        let progress = BuildProgress {
            pid: std::process::id(),
            jobs: self.jobs.load(Ordering::Relaxed),
            total_bytes: self.total_bytes.load(Ordering::Relaxed),
            parsed: self.parsed.load(Ordering::Relaxed),
            parsed_bytes: self.parsed_bytes.load(Ordering::Relaxed),
        };
        if let Ok(json) = serde_json::to_vec(&progress) {
            // Progress is a courtesy to other processes: failing to write it is no error.
            let _ = crate::fsutil::write_private(&paths.first_build(), &json);
        }
    }
}

impl IndexObserver for Recorder<'_> {
    fn waiting(&self) {
        self.inner.waiting();
    }
    fn start(&self, jobs: u64, bytes: u64) {
        self.jobs.store(jobs, Ordering::Relaxed);
        self.total_bytes.store(bytes, Ordering::Relaxed);
        self.write(true);
        self.inner.start(jobs, bytes);
    }
    fn parsed(&self, bytes: u64) {
        self.parsed.fetch_add(1, Ordering::Relaxed);
        self.parsed_bytes.fetch_add(bytes, Ordering::Relaxed);
        self.write(false);
        self.inner.parsed(bytes);
    }
}

impl Drop for Recorder<'_> {
    fn drop(&mut self) {
        if let Some(paths) = self.paths {
            let _ = std::fs::remove_file(paths.first_build());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::indexer::Silent;

    #[test]
    fn a_running_first_build_is_seen_and_a_stale_one_is_not() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = IndexPaths::new(tmp.path());
        let lock = std::fs::File::create(paths.lock()).unwrap();
        {
            let rec = Recorder::new(&Silent, &paths, true);
            rec.start(4, 1000);
            rec.parsed(250);
            rec.write(true);
            assert_eq!(first_build(&paths), None, "nobody holds the lock: a leftover, not a build");
            lock.lock().unwrap();
            let p = first_build(&paths).expect("a build in progress");
            assert_eq!((p.jobs, p.parsed, p.percent()), (4, 1, 25));
        }
        assert!(!paths.first_build().exists(), "removed when the build ends");
        assert_eq!(first_build(&paths), None);
    }

    #[test]
    fn a_refresh_writes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let paths = IndexPaths::new(tmp.path());
        let rec = Recorder::new(&Silent, &paths, false);
        rec.start(1, 1);
        assert!(!paths.first_build().exists());
    }
}

//! The working directories indexed sessions ran in, remembered between runs.
//!
//! Some harnesses keep their history inside each project rather than in one store
//! (aider's `.aider.chat.history.md` sits in the directory it was launched from), so no
//! fixed root finds it. Every other harness records where its sessions ran; this list
//! is those directories, so an adapter that asks for them
//! ([`HarnessFormat::discovers_in_work_dirs`](crate::HarnessFormat::discovers_in_work_dirs))
//! looks in each without the user configuring anything.
//!
//! It is a cache derived from the index (a projection of the sessions' `project`), kept
//! beside the manifest as `work-dirs`: one `<last seen, unix seconds>\t<path>` line per
//! directory under a header. Bounded to the [`MAX_WORK_DIRS`] most recently seen, so a
//! refresh costs at most that many `stat`s however much history there is. A missing or
//! damaged file is an empty list (the next run writes it again), never an error.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

const HEADER: &str = "deja-work-dirs 1";

/// How many directories are kept (and so looked in): the most recently seen first.
pub const MAX_WORK_DIRS: usize = 4096;

/// Working directories with the newest time a session was seen in each.
#[derive(Debug, Default, Clone)]
pub struct WorkDirs {
    seen: HashMap<PathBuf, i64>,
}

impl WorkDirs {
    /// Reads the list; anything unreadable reads as empty.
    pub fn load(path: &Path) -> WorkDirs {
        let mut dirs = WorkDirs::default();
        let Ok(text) = std::fs::read_to_string(path) else { return dirs };
        let mut lines = text.lines();
        if lines.next() != Some(HEADER) {
            return dirs;
        }
        for line in lines {
            let Some((secs, dir)) = line.split_once('\t') else { continue };
            if let Ok(secs) = secs.parse::<i64>() {
                dirs.note(dir, secs);
            }
        }
        dirs
    }

    /// Records that a session ran in `project` at `secs`. Only absolute paths count (a
    /// harness that names projects by title gives nothing to look in); returns whether
    /// the directory is new to the list.
    pub fn note(&mut self, project: &str, secs: i64) -> bool {
        if project.contains(['\n', '\t', '\0']) {
            return false;
        }
        let path = Path::new(project);
        if !path.is_absolute() || path.parent().is_none() {
            // The filesystem root is no project directory.
            return false;
        }
        match self.seen.get_mut(path) {
            Some(t) => {
                *t = (*t).max(secs);
                false
            }
            None => {
                self.seen.insert(path.to_path_buf(), secs);
                true
            }
        }
    }

    /// Adds every directory of `other`.
    pub fn extend(&mut self, other: &WorkDirs) {
        for (dir, secs) in &other.seen {
            if let Some(d) = dir.to_str() {
                self.note(d, *secs);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.seen.len()
    }

    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }

    /// The directories, most recently seen first (ties by path), at most [`MAX_WORK_DIRS`].
    pub fn newest(&self) -> Vec<PathBuf> {
        let mut all: Vec<(&PathBuf, i64)> = self.seen.iter().map(|(p, t)| (p, *t)).collect();
        all.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        all.into_iter().take(MAX_WORK_DIRS).map(|(p, _)| p.clone()).collect()
    }

    /// Writes the newest [`MAX_WORK_DIRS`] to a private temporary file and renames it
    /// over `path` ([`crate::fsutil::replace_private`]).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        crate::fsutil::replace_private(path, |w| {
            writeln!(w, "{HEADER}")?;
            for dir in self.newest() {
                if let Some(d) = dir.to_str() {
                    writeln!(w, "{}\t{d}", self.seen[&dir])?;
                }
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_absolute_dirs_newest_first_and_round_trips() {
        let mut d = WorkDirs::default();
        assert!(d.note("/home/u/shop", 10));
        assert!(!d.note("/home/u/shop", 30), "seen again is not new");
        assert!(d.note("/home/u/api", 20));
        assert!(!d.note("shop", 40), "a project title is no directory");
        assert!(!d.note("/", 40), "nor is the root");
        assert!(!d.note("/a\nb", 40));
        assert_eq!(d.newest(), vec![PathBuf::from("/home/u/shop"), PathBuf::from("/home/u/api")]);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("work-dirs");
        d.save(&file).unwrap();
        assert_eq!(WorkDirs::load(&file).newest(), d.newest());
        std::fs::write(&file, "garbage\n/x\t1\n").unwrap();
        assert!(WorkDirs::load(&file).is_empty(), "a damaged file reads as empty");
        assert!(WorkDirs::load(&dir.path().join("missing")).is_empty());
    }

    #[test]
    fn bounded_to_the_most_recent() {
        let mut d = WorkDirs::default();
        for i in 0..(MAX_WORK_DIRS + 10) {
            d.note(&format!("/p/{i}"), i as i64);
        }
        let newest = d.newest();
        assert_eq!(newest.len(), MAX_WORK_DIRS);
        assert_eq!(newest[0], PathBuf::from(format!("/p/{}", MAX_WORK_DIRS + 9)));
    }
}

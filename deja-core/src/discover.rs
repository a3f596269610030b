//! Store walking shared by adapters: directory walks that take entry types from
//! `readdir` (no `stat` per entry — discovery runs before every search) and accept
//! only regular files, so a FIFO named like a log can never block a reader.
//!
//! Nothing found is lost silently. A directory that cannot be listed (permission
//! denied, …) and a file named like a source that cannot be opened (a dangling symlink,
//! a FIFO) are reported with the reason: the walks here send them to the collector of
//! the thread running [`collecting`], which the indexer wraps around each adapter's
//! `discover`, so every adapter's walk reports without a change to its signature.
//! (Discovery of one adapter runs on one thread; nothing in it is parallel.) File names
//! that are not UTF-8 are matched by their lossy form and found like any other.

use std::cell::RefCell;
use std::fs::DirEntry;
use std::path::{Path, PathBuf};

/// A path discovery or parsing could not read, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Unreadable {
    /// The path (its lossy form in JSON: names need not be UTF-8).
    #[serde(serialize_with = "lossy_path")]
    pub path: PathBuf,
    pub reason: String,
}

fn lossy_path<S: serde::Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&path.to_string_lossy())
}

thread_local! {
    static COLLECTOR: RefCell<Option<Vec<Unreadable>>> = const { RefCell::new(None) };
}

/// Runs `f` (an adapter's discovery) and returns what it produced with every path the
/// walks in it could not read.
pub fn collecting<R>(f: impl FnOnce() -> R) -> (R, Vec<Unreadable>) {
    let outer = COLLECTOR.with(|c| c.borrow_mut().replace(Vec::new()));
    let r = f();
    let found = COLLECTOR.with(|c| std::mem::replace(&mut *c.borrow_mut(), outer)).unwrap_or_default();
    (r, found)
}

/// Reports a path that could not be read to the running [`collecting`] (dropped when
/// there is none, e.g. in a parser or a test).
pub fn report_unreadable(path: &Path, reason: impl Into<String>) {
    COLLECTOR.with(|c| {
        if let Some(v) = c.borrow_mut().as_mut() {
            // Bounded: one unreadable tree must not turn into a report of millions.
            if v.len() < MAX_REPORTED {
                v.push(Unreadable { path: path.to_path_buf(), reason: reason.into() });
            }
        }
    });
}

/// How the reason of a directory that could not be listed starts.
pub const CANNOT_LIST: &str = "cannot list directory";

/// At most this many unreadable paths are kept per adapter and run.
pub const MAX_REPORTED: usize = 1000;

/// `std::fs::read_dir` that reports why a directory could not be listed. A directory
/// that does not exist is no problem (most stores are absent) and is not reported.
pub fn read_dir(dir: &Path) -> Option<std::fs::ReadDir> {
    match std::fs::read_dir(dir) {
        Ok(r) => Some(r),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            report_unreadable(dir, format!("{CANNOT_LIST}: {e}"));
            None
        }
    }
}

/// The entries of `entries` that could be read; an entry that fails is reported.
pub fn entries(dir: &Path, entries: std::fs::ReadDir) -> impl Iterator<Item = DirEntry> + '_ {
    entries.filter_map(move |e| match e {
        Ok(e) => Some(e),
        Err(err) => {
            report_unreadable(dir, format!("cannot read directory entry: {err}"));
            None
        }
    })
}

/// The readable entries of `dir`, sorted by name; none when it does not exist. What
/// cannot be listed or read is reported (see the module doc): the one directory listing
/// adapters use, so no walk loses a directory silently.
pub fn list(dir: &Path) -> Vec<DirEntry> {
    let Some(list) = read_dir(dir) else { return Vec::new() };
    let mut out: Vec<DirEntry> = entries(dir, list).collect();
    out.sort_by_key(DirEntry::file_name);
    out
}

/// The directories directly in `dir` (a symlink to one counts), sorted by name; a
/// directory that cannot be listed is reported.
pub fn subdirs(dir: &Path) -> Vec<PathBuf> {
    list(dir).into_iter().filter(is_dir_entry).map(|e| e.path()).collect()
}

/// True for a directory, following a symlink to one.
pub fn is_dir_entry(entry: &DirEntry) -> bool {
    match entry.file_type() {
        Ok(t) if t.is_symlink() => std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir()),
        Ok(t) => t.is_dir(),
        Err(_) => false,
    }
}

/// True for a regular file, following a symlink to one.
pub fn is_file_entry(entry: &DirEntry) -> bool {
    match entry.file_type() {
        Ok(t) if t.is_symlink() => std::fs::metadata(entry.path()).is_ok_and(|m| m.is_file()),
        Ok(t) => t.is_file(),
        Err(_) => false,
    }
}

/// Regular files under `root` (at most `max_depth` directories down) whose file name
/// (its lossy form, for a name that is not UTF-8) `keep` accepts. Symlinked directories
/// are not entered, so a link cycle cannot loop; symlinked files are followed.
/// Directories that cannot be listed, and files `keep` accepts that are not regular
/// (a dangling symlink, a FIFO), are reported (see the module doc) and skipped.
pub fn find_files(root: &Path, max_depth: usize, keep: &dyn Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    walk(root, 0, max_depth, keep, &mut out);
    out
}

fn walk(dir: &Path, depth: usize, max_depth: usize, keep: &dyn Fn(&str) -> bool, out: &mut Vec<PathBuf>) {
    let Some(list) = read_dir(dir) else { return };
    for entry in entries(dir, list) {
        let Ok(ft) = entry.file_type() else {
            report_unreadable(&entry.path(), "cannot tell what kind of file this is");
            continue;
        };
        if ft.is_dir() {
            if depth < max_depth {
                walk(&entry.path(), depth + 1, max_depth, keep, out);
            }
        } else if keep(&entry.file_name().to_string_lossy()) {
            if is_file_entry(&entry) {
                out.push(entry.path());
            } else if !is_dir_entry(&entry) {
                report_unreadable(&entry.path(), not_regular(&entry));
            }
        }
    }
}

/// Why a matching entry is not read.
fn not_regular(entry: &DirEntry) -> String {
    match std::fs::metadata(entry.path()) {
        Err(e) if entry.file_type().is_ok_and(|t| t.is_symlink()) => format!("symlink to nothing readable: {e}"),
        Err(e) => e.to_string(),
        Ok(_) => "not a regular file; not opened".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdirs_are_sorted_and_a_missing_directory_is_no_problem() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        for d in ["b", "a", "c/d"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("f.txt"), "").unwrap();
        let (dirs, problems) = collecting(|| subdirs(root));
        assert_eq!(dirs, [root.join("a"), root.join("b"), root.join("c")]);
        assert_eq!(list(root).len(), 4);
        let (none, problems_missing) = collecting(|| subdirs(&root.join("missing")));
        assert!(none.is_empty() && problems.is_empty() && problems_missing.is_empty());
    }

    #[test]
    fn finds_regular_files_only_within_depth() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("a/b/c")).unwrap();
        std::fs::write(root.join("a/x.jsonl"), "").unwrap();
        std::fs::write(root.join("a/b/c/deep.jsonl"), "").unwrap();
        std::fs::write(root.join("a/notes.txt"), "").unwrap();
        std::fs::create_dir_all(root.join("a/dir.jsonl")).unwrap();
        let mut found = find_files(root, 2, &|n| n.ends_with(".jsonl"));
        found.sort();
        assert_eq!(found, vec![root.join("a/x.jsonl")]);
        assert_eq!(find_files(root, 3, &|n| n.ends_with(".jsonl")).len(), 2);
    }

    #[cfg(unix)]
    #[test]
    fn unreadable_paths_are_reported_and_non_utf8_names_found() {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("ok")).unwrap();
        let odd = root.join("ok").join(std::ffi::OsStr::from_bytes(b"sess-\xff\xfe.jsonl"));
        std::fs::write(&odd, "{}\n").unwrap();
        std::os::unix::fs::symlink(root.join("gone.jsonl"), root.join("ok/dangling.jsonl")).unwrap();
        std::os::unix::fs::symlink(root.join("gone.txt"), root.join("ok/ignored.txt")).unwrap();
        let locked = root.join("locked");
        std::fs::create_dir_all(&locked).unwrap();
        std::fs::write(locked.join("hidden.jsonl"), "").unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
        // Root reads any directory, so the permission case is only checked when it bites.
        let denied = std::fs::read_dir(&locked).is_err();

        let (found, problems) = collecting(|| find_files(root, 3, &|n| n.ends_with(".jsonl")));
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).unwrap();
        let mut want = vec![odd];
        if !denied {
            want.insert(0, locked.join("hidden.jsonl"));
        }
        let mut found = found;
        found.sort();
        assert_eq!(found, want, "a name that is not UTF-8 is found under its own bytes");
        let reported: Vec<&Path> = problems.iter().map(|u| u.path.as_path()).collect();
        assert!(reported.contains(&root.join("ok/dangling.jsonl").as_path()), "{problems:?}");
        assert!(!reported.contains(&root.join("ok/ignored.txt").as_path()), "only names a store would read are reported");
        if denied {
            let u = problems.iter().find(|u| u.path == locked).expect("the unlistable directory is named");
            assert!(u.reason.contains("ermission denied"), "{u:?}");
        } else {
            eprintln!("running as root: a 0000 directory is still listable, so its report is not checked here");
        }
        // Outside `collecting` nothing is gathered and nothing leaks into the next run.
        let _ = find_files(root, 3, &|n| n.ends_with(".jsonl"));
        let (_, again) = collecting(|| ());
        assert!(again.is_empty());
        let json = serde_json::to_string(&Unreadable { path: root.join(std::ffi::OsStr::from_bytes(b"\xff")), reason: "x".into() });
        assert!(json.is_ok_and(|j| j.contains('\u{FFFD}')), "a non-UTF-8 path still serializes");
    }
}

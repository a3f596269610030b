//! Store walking shared by adapters: directory walks that take entry types from
//! `readdir` (no `stat` per entry — discovery runs before every search) and accept
//! only regular files, so a FIFO named like a log can never block a reader.

use std::fs::DirEntry;
use std::path::{Path, PathBuf};

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
/// `keep` accepts. Symlinked directories are not entered, so a link cycle cannot
/// loop; symlinked files are followed. Unreadable directories are skipped.
pub fn find_files(root: &Path, max_depth: usize, keep: &dyn Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    walk(root, 0, max_depth, keep, &mut out);
    out
}

fn walk(dir: &Path, depth: usize, max_depth: usize, keep: &dyn Fn(&str) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let Ok(ft) = entry.file_type() else { continue };
        if ft.is_dir() {
            if depth < max_depth {
                walk(&entry.path(), depth + 1, max_depth, keep, out);
            }
        } else if entry.file_name().to_str().is_some_and(keep) && is_file_entry(&entry) {
            out.push(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}

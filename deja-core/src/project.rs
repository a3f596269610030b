//! Project names from what formats keep: the Claude-style dash-encoded directory
//! (`/` and `-` both written as `-`), resolved against the local filesystem, and the
//! git repository most of a session's files sit in.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Decodes a dash-encoded working directory (`-Users-x-my-app`, `C--Users-x-app`,
/// pi's `--src-app--`) by walking the segments against the filesystem under `root`
/// (normally `/`), trying "separator" before "literal hyphen" at each step and
/// pruning prefixes that do not exist. `None` when nothing resolves.
pub fn decode_dash_path(encoded: &str, root: &Path) -> Option<PathBuf> {
    let (root, body) = match encoded.as_bytes() {
        [d, b'-', b'-', ..] if d.is_ascii_alphabetic() => (PathBuf::from(format!("{}:\\", *d as char)), &encoded[3..]),
        _ => (root.to_path_buf(), encoded),
    };
    let body = body.trim_matches('-');
    if body.is_empty() {
        return None;
    }
    // An empty part between two dashes stands for a segment that started with `.`.
    let mut parts: Vec<String> = Vec::new();
    let mut dot_next = false;
    for p in body.split('-') {
        if p.is_empty() {
            dot_next = true;
            continue;
        }
        parts.push(if std::mem::take(&mut dot_next) { format!(".{p}") } else { p.to_string() });
    }
    let mut budget = 4096u32;
    walk(&root, &parts, 0, String::new(), &mut budget)
}

fn walk(dir: &Path, parts: &[String], i: usize, current: String, budget: &mut u32) -> Option<PathBuf> {
    if *budget == 0 {
        return None;
    }
    *budget -= 1;
    if i == parts.len() {
        let full = dir.join(&current);
        return full.is_dir().then_some(full);
    }
    let part = &parts[i];
    if current.is_empty() {
        return walk(dir, parts, i + 1, part.clone(), budget);
    }
    let as_dir = dir.join(&current);
    if as_dir.is_dir() {
        if let Some(found) = walk(&as_dir, parts, i + 1, part.clone(), budget) {
            return Some(found);
        }
    }
    walk(dir, parts, i + 1, format!("{current}-{}", part.trim_start_matches('.')), budget)
}

/// When nothing resolves: the last two dash-separated parts joined with `/`.
pub fn dash_fallback_name(encoded: &str) -> String {
    let parts: Vec<&str> = encoded.split('-').filter(|p| !p.is_empty()).collect();
    match parts.as_slice() {
        [] => encoded.to_string(),
        [one] => one.to_string(),
        [.., a, b] => format!("{a}/{b}"),
    }
}

/// `<parent>/<base>` of a directory path, on every OS.
pub fn two_segment_name(path: &str) -> String {
    let parts: Vec<&str> = path.split(['/', '\\']).filter(|p| !p.is_empty()).collect();
    match parts.as_slice() {
        [] => path.to_string(),
        [one] => one.to_string(),
        [.., a, b] => format!("{a}/{b}"),
    }
}

/// The last segment of a path.
pub fn basename(path: &str) -> &str {
    path.trim_end_matches(['/', '\\']).rsplit(['/', '\\']).next().unwrap_or(path)
}

/// The git repository (directory holding `.git`) that at least 60 % of `paths` sit in,
/// provided at least three of them exist. Scratch and cache paths do not vote.
pub fn majority_git_repo<'a>(paths: impl IntoIterator<Item = &'a str>) -> Option<PathBuf> {
    const IGNORED: [&str; 5] = ["/.claude/", "/scratchpad/", "/tasks/", "/.cache/", "/claude-501/"];
    let mut votes: HashMap<PathBuf, usize> = HashMap::new();
    let mut existing = 0usize;
    let mut cache: HashMap<PathBuf, Option<PathBuf>> = HashMap::new();
    for p in paths {
        if IGNORED.iter().any(|i| p.contains(i)) {
            continue;
        }
        let path = Path::new(p);
        if !path.exists() {
            continue;
        }
        existing += 1;
        let Some(dir) = path.parent() else { continue };
        let repo = cache
            .entry(dir.to_path_buf())
            .or_insert_with(|| dir.ancestors().find(|a| a.join(".git").exists()).map(Path::to_path_buf))
            .clone();
        if let Some(repo) = repo {
            *votes.entry(repo).or_default() += 1;
        }
    }
    if existing < 3 {
        return None;
    }
    let (repo, n) = votes.into_iter().max_by_key(|(_, n)| *n)?;
    (n * 100 >= existing * 60).then_some(repo)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_hyphenated_directories_against_the_filesystem() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("Users/x/my-app")).unwrap();
        std::fs::create_dir_all(tmp.path().join("Users/x/.config/tool")).unwrap();
        assert_eq!(decode_dash_path("-Users-x-my-app", tmp.path()), Some(tmp.path().join("Users/x/my-app")));
        assert_eq!(decode_dash_path("-Users-x--config-tool", tmp.path()), Some(tmp.path().join("Users/x/.config/tool")));
        assert_eq!(decode_dash_path("-Users-y-gone", tmp.path()), None);
        assert_eq!(dash_fallback_name("-Users-y-gone"), "y/gone");
        assert_eq!(two_segment_name("/src/pool"), "src/pool");
    }
}

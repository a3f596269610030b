//! Live files: files `deja install` wrote whose contents deja changes again while the
//! harness runs — a context file a wrapper rewrites before starting the harness, a block
//! or a file a hook rewrites because the harness reads files rather than hook output.
//! An adapter names them in its [`Wiring`](super::Wiring) (`fn live_files`).
//!
//! The new text goes through the wiring engine like any install: the installed targets'
//! edits are computed as `deja install` computes them, the one file's edit gets the new
//! body, and the engine writes it and records its hash. So `deja uninstall` still takes
//! the file out (or gives it back) byte for byte: a file changed behind the engine's back
//! would read as edited by the user, and be kept.
//!
//! A refresh touches that one file only. When the plan would change anything else (the
//! binary moved, a config drifted) or the file was edited by someone else, nothing is
//! written and the caller is told why: that is `deja install`'s job, not a hook's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::engine::Engine;
use super::{Edit, WireContext, WireError};
use crate::env::StoreEnv;

/// What a refresh did.
#[derive(Debug, PartialEq, Eq)]
pub enum Refreshed {
    /// The file now holds the new body.
    Written,
    /// It already did.
    Unchanged,
    /// No installed target writes the file.
    NotInstalled,
    /// Left alone, and why.
    Refused(String),
}

/// `edit` with its body (an owned file's contents, a block's lines) replaced by `body`;
/// other kinds of edit are left as they are.
pub fn with_body(edit: &Edit, body: &str) -> Edit {
    match edit {
        Edit::OwnedFile { file, .. } => Edit::owned_file(file, body),
        Edit::Block { file, start, end, .. } => Edit::block(file, start, end, body),
        other => other.clone(),
    }
}

/// The body `edit` has in `text`: an owned file's whole text, a block's inner lines.
fn body_in(edit: &Edit, text: &str) -> Option<String> {
    match edit {
        Edit::OwnedFile { .. } => Some(text.to_string()),
        Edit::Block { start, end, .. } => {
            let mut inner: Option<String> = None;
            for line in text.split_inclusive('\n') {
                let bare = line.trim_end_matches(['\n', '\r']).trim_start();
                match &mut inner {
                    None if bare.starts_with(start.as_str()) => inner = Some(String::new()),
                    Some(body) if bare.starts_with(end.as_str()) => return Some(std::mem::take(body)),
                    Some(body) => body.push_str(line),
                    None => {}
                }
            }
            None
        }
        _ => None,
    }
}

/// Every linked adapter's live files.
pub fn live_files(env: &StoreEnv) -> Vec<PathBuf> {
    crate::registry().into_iter().filter_map(|f| f.wiring()).flat_map(|w| w.live_files(env)).collect()
}

/// `edits` with each live file's body as deja last wrote it (for `deja doctor`: a
/// refreshed context file is wired, not stale). A live file someone else changed keeps
/// the install's body, so it still reads as changed.
pub fn as_written(env: &StoreEnv, edits: &mut [Edit]) {
    let live = live_files(env);
    let Ok(state) = Engine::new(env.data_dir().join("wiring")).load() else { return };
    for e in edits.iter_mut().filter(|e| live.iter().any(|f| f == e.file())) {
        let Ok(bytes) = std::fs::read(e.file()) else { continue };
        if state.files.get(e.file()).is_none_or(|r| !r.holds(&bytes)) {
            continue;
        }
        if let Some(now) = std::str::from_utf8(&bytes).ok().and_then(|text| body_in(e, text)) {
            *e = with_body(e, &now);
        }
    }
}

/// Makes `file` hold `body` in place of what its installed edit wrote.
pub fn refresh(env: &StoreEnv, file: &Path, body: &str) -> Result<Refreshed, WireError> {
    let exe = super::current_exe().map_err(|source| WireError::Io { path: PathBuf::from("the running deja binary"), source })?;
    let cx = WireContext { env, exe };
    let engine = Engine::new(env.data_dir().join("wiring"));
    let state = engine.load()?;
    let mut edits = super::all_edits(&cx);
    // Other files refreshed the same way (`.goosehints` while the MOIM file is written)
    // keep what deja last wrote in them.
    let mut live: BTreeMap<PathBuf, Option<Vec<u8>>> = BTreeMap::new();
    for list in edits.values_mut() {
        for e in list.iter_mut() {
            if e.file() == file {
                *e = with_body(e, body);
            } else if matches!(e, Edit::OwnedFile { .. } | Edit::Block { .. }) {
                let current = live.entry(e.file().to_path_buf()).or_insert_with(|| {
                    let bytes = std::fs::read(e.file()).ok()?;
                    let ours = state.files.get(e.file()).is_some_and(|r| r.holds(&bytes));
                    ours.then_some(bytes)
                });
                if let Some(text) = current.as_deref().and_then(|b| std::str::from_utf8(b).ok()) {
                    if let Some(now) = body_in(e, text) {
                        *e = with_body(e, &now);
                    }
                }
            }
        }
    }
    let installed = state.targets.iter().any(|t| edits.get(t).is_some_and(|l| l.iter().any(|e| e.file() == file)));
    if !installed {
        return Ok(Refreshed::NotInstalled);
    }
    let plan = engine.plan(&state.targets, &edits, false)?;
    if let Some(r) = plan.refused.first() {
        return Ok(Refreshed::Refused(format!("{}: {}", r.path.display(), r.error)));
    }
    let changed: Vec<_> = plan.changes.iter().filter(|c| c.before != c.after || c.kept.is_some()).collect();
    if let Some(c) = changed.iter().find(|c| c.path != file) {
        return Ok(Refreshed::Refused(format!(
            "{} differs from what `deja install` would write; run `deja install` again",
            c.path.display()
        )));
    }
    if let Some(reason) = changed.iter().find_map(|c| c.kept.clone()) {
        return Ok(Refreshed::Refused(format!("{}: {reason}", file.display())));
    }
    if changed.is_empty() {
        return Ok(Refreshed::Unchanged);
    }
    engine.apply(&plan)?;
    Ok(Refreshed::Written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_owned_files_and_blocks_take_a_new_body() {
        let owned = Edit::owned_file("/c/a.md", "old");
        assert_eq!(with_body(&owned, "new"), Edit::owned_file("/c/a.md", "new"));
        let block = Edit::block("/c/.goosehints", "<!-- s -->", "<!-- e -->", "old\n");
        assert_eq!(with_body(&block, "new\n"), Edit::block("/c/.goosehints", "<!-- s -->", "<!-- e -->", "new\n"));
        let member = Edit::json_member("/c/x.json", &["a"], serde_json::json!(1));
        assert_eq!(with_body(&member, "new"), member);
    }

    #[test]
    fn a_blocks_body_is_read_back_between_its_markers() {
        let block = Edit::block("/c/.goosehints", "<!-- s -->", "<!-- e -->", "");
        let text = "mine\n<!-- s -->\n<deja-recall>\nx\n</deja-recall>\n<!-- e -->\nafter\n";
        assert_eq!(body_in(&block, text).as_deref(), Some("<deja-recall>\nx\n</deja-recall>\n"));
        assert_eq!(body_in(&block, "mine\n"), None);
        assert_eq!(body_in(&Edit::owned_file("/c/a.md", ""), "all\n").as_deref(), Some("all\n"));
    }
}

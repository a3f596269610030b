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

use super::Edit;

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
pub(crate) fn body_in(edit: &Edit, text: &str) -> Option<String> {
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

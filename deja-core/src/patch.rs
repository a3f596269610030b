//! The `apply_patch` envelope (`*** Begin Patch` … `*** End Patch`) that Codex and
//! other OpenAI-lineage harnesses use for every edit: file headers give the paths,
//! `-` lines under a header are the replaced text.

use crate::model::{cap_text, Edit, FileAction, FileTouch, MAX_EDIT_BYTES};

/// Files named by the patch (relative paths joined onto `cwd`) and, per file, one
/// edit holding its removed lines.
pub fn parse_apply_patch(input: &str, cwd: Option<&str>) -> (Vec<FileTouch>, Vec<Edit>) {
    let mut files: Vec<FileTouch> = Vec::new();
    let mut edits: Vec<Edit> = Vec::new();
    let mut current: Option<usize> = None;
    for line in input.lines() {
        let header =
            [("*** Update File: ", FileAction::Edit), ("*** Add File: ", FileAction::Write), ("*** Delete File: ", FileAction::Delete)]
                .into_iter()
                .find_map(|(prefix, action)| line.strip_prefix(prefix).map(|p| (p.trim(), action)));
        if let Some((path, action)) = header {
            let path = join_cwd(path, cwd);
            let idx = match files.iter().position(|f| f.path == path) {
                Some(i) => i,
                None => {
                    files.push(FileTouch { path: path.clone(), action });
                    edits.push(Edit { path, old: String::new(), new: None });
                    files.len() - 1
                }
            };
            current = Some(idx);
            continue;
        }
        if line.starts_with("*** Move to: ") || line.starts_with("*** End") || line.starts_with("*** Begin") {
            if line.starts_with("*** End Patch") {
                current = None;
            }
            continue;
        }
        let Some(idx) = current else { continue };
        if let Some(removed) = line.strip_prefix('-') {
            let old = &mut edits[idx].old;
            if old.len() < MAX_EDIT_BYTES {
                old.push_str(removed);
                old.push('\n');
            }
        } else if let Some(added) = line.strip_prefix('+') {
            let new = edits[idx].new.get_or_insert_with(String::new);
            if new.len() < MAX_EDIT_BYTES {
                new.push_str(added);
                new.push('\n');
            }
        }
    }
    for e in &mut edits {
        cap_text(&mut e.old, MAX_EDIT_BYTES);
        if e.old.ends_with('\n') {
            e.old.pop();
        }
        if let Some(n) = &mut e.new {
            cap_text(n, MAX_EDIT_BYTES);
            if n.ends_with('\n') {
                n.pop();
            }
        }
    }
    edits.retain(|e| !e.old.is_empty());
    (files, edits)
}

/// Joins a relative path onto the working directory; absolute paths stay.
pub fn join_cwd(path: &str, cwd: Option<&str>) -> String {
    let is_abs = path.starts_with('/') || path.starts_with('\\') || path.as_bytes().get(1) == Some(&b':');
    match cwd {
        Some(cwd) if !is_abs && !cwd.is_empty() => format!("{}/{}", cwd.trim_end_matches('/'), path.trim_start_matches("./")),
        _ => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removed_lines_become_the_old_span() {
        let patch = "*** Begin Patch\n*** Update File: invoice/round.go\n@@\n-\treturn math.Floor(x)\n+\treturn math.Round(x)\n*** Add File: NEW.md\n+hello\n*** End Patch\n";
        let (files, edits) = parse_apply_patch(patch, Some("/src/billing"));
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].path, "/src/billing/invoice/round.go");
        assert_eq!(edits.len(), 1);
        assert_eq!(edits[0].old, "\treturn math.Floor(x)");
        assert_eq!(edits[0].new.as_deref(), Some("\treturn math.Round(x)"));
    }
}

//! Reading wiring back for `deja doctor`: whether each edit a target would make is on
//! disk as this binary would write it, names another binary, is missing, or sits in a
//! file that does not parse.

use std::path::{Path, PathBuf};

use super::{engine, ConfigError, Edit};

/// The state of one edit on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditState {
    /// As this binary would write it.
    Wired,
    /// deja's entry is there but differs: it names another binary, or was edited.
    Stale(String),
    /// Not there.
    Missing,
    /// The file cannot be read as its syntax.
    Broken(ConfigError),
}

/// A target's state: the worst of its edits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetState {
    Wired,
    NotWired,
    /// Some edits there, some missing.
    Partial(Vec<PathBuf>),
    Stale(Vec<(PathBuf, String)>),
    Broken(Vec<(PathBuf, ConfigError)>),
}

impl TargetState {
    pub fn label(&self) -> &'static str {
        match self {
            TargetState::Wired => "wired",
            TargetState::NotWired => "not wired",
            TargetState::Partial(_) => "partly wired",
            TargetState::Stale(_) => "stale",
            TargetState::Broken(_) => "broken",
        }
    }
}

fn read(path: &Path) -> Option<String> {
    std::fs::read(path).ok().map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// What differs between deja's entry on disk and the one this binary would write.
fn differs(found: &str, exe: &str) -> String {
    if found.contains(exe) {
        "differs from what this deja writes (edited since install?)".to_string()
    } else {
        "names another deja binary".to_string()
    }
}

/// The state of `edit` on disk; `exe` is this binary's path as the edits name it.
/// Read through the engine's own splices, so every syntax is judged alike: an edit is
/// wired when applying it again would change nothing, stale when the file holds deja's
/// entry in another form (taking deja's entries out would change it), missing
/// otherwise.
pub fn inspect(edit: &Edit, exe: &str) -> EditState {
    let Some(text) = read(edit.file()) else {
        return match edit {
            Edit::Dir { path } if path.is_dir() => EditState::Wired,
            _ => EditState::Missing,
        };
    };
    match edit {
        Edit::Dir { .. } => return EditState::Wired,
        Edit::OwnedFile { contents, .. } => {
            return if text == *contents { EditState::Wired } else { EditState::Stale(differs(&text, exe)) };
        }
        _ => {}
    }
    if let Err(e) = engine::check(&text, &[edit]) {
        return EditState::Broken(e);
    }
    match engine::apply(&text, edit) {
        Err(e) => EditState::Broken(e),
        Ok(again) if again == text => EditState::Wired,
        Ok(_) => match engine::strip(text.as_bytes(), &[edit], None) {
            Ok(stripped) if stripped != text.as_bytes() => EditState::Stale(differs(&text, exe)),
            Ok(_) => EditState::Missing,
            Err(e) => EditState::Broken(e),
        },
    }
}

/// The state of a target from its edits' states. Files `shared` says several harnesses
/// write (the `~/.agents/skills` skill) do not make a target look wired on their own:
/// another harness's install put them there.
pub fn target_state(edits: &[Edit], exe: &str, shared: &dyn Fn(&Path) -> bool) -> TargetState {
    let own: Vec<&Edit> = edits.iter().filter(|e| !shared(e.file())).collect();
    let judged: Vec<&Edit> = if own.is_empty() { edits.iter().collect() } else { own };
    let states: Vec<(PathBuf, EditState)> = judged.iter().map(|e| (e.file().to_path_buf(), inspect(e, exe))).collect();
    let broken: Vec<(PathBuf, ConfigError)> =
        states.iter().filter_map(|(p, s)| if let EditState::Broken(e) = s { Some((p.clone(), e.clone())) } else { None }).collect();
    if !broken.is_empty() {
        return TargetState::Broken(broken);
    }
    let stale: Vec<(PathBuf, String)> =
        states.iter().filter_map(|(p, s)| if let EditState::Stale(w) = s { Some((p.clone(), w.clone())) } else { None }).collect();
    if !stale.is_empty() {
        return TargetState::Stale(stale);
    }
    let missing: Vec<PathBuf> = states.iter().filter(|(_, s)| *s == EditState::Missing).map(|(p, _)| p.clone()).collect();
    if missing.is_empty() {
        TargetState::Wired
    } else if missing.len() == states.len() {
        TargetState::NotWired
    } else {
        TargetState::Partial(missing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn states_follow_what_is_on_disk() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("settings.json");
        let edit = Edit::json_member(&f, &["mcpServers", "deja"], json!({"command": "/bin/deja", "args": ["mcp"]}));
        assert_eq!(inspect(&edit, "/bin/deja"), EditState::Missing);
        std::fs::write(&f, r#"{"mcpServers": {"deja": {"command": "/old/deja", "args": ["mcp"]}}}"#).unwrap();
        assert!(matches!(inspect(&edit, "/bin/deja"), EditState::Stale(w) if w.contains("another")));
        std::fs::write(&f, r#"{"mcpServers": {"deja": {"command": "/bin/deja", "args": ["mcp"]}}}"#).unwrap();
        assert_eq!(inspect(&edit, "/bin/deja"), EditState::Wired);
        std::fs::write(&f, "{\n  \"mcpServers\": @\n}").unwrap();
        assert!(matches!(inspect(&edit, "/bin/deja"), EditState::Broken(ConfigError::Parse { line: 2, .. })));
        let skill = Edit::owned_file(tmp.path().join("SKILL.md"), "x");
        assert_eq!(target_state(&[edit, skill], "/bin/deja", &|_| false).label(), "broken");
    }
}

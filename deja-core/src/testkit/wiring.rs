//! The conformance kit's wiring check (`conformance_wiring`), run for every adapter
//! whose [`Wiring`](crate::wire::Wiring) exists: each target is installed into a home whose
//! configs already hold the user's own entries and comments, and must
//!
//! - keep every one of the user's bytes it does not own (the seeded comment and the
//!   user's own server are still there; a file its harness reads as plain JSON is seeded
//!   without a comment and must still be plain JSON after install),
//! - name the running binary with `mcp` where the target provides the MCP surface,
//! - change nothing when installed a second time,
//! - give every file back byte for byte on uninstall, removing the files and
//!   directories it created,
//! - follow each config relocation variable declared for the adapter
//!   (`wires "CODEX_HOME" => ".codex"` in `conformance!`): a file the wiring writes under
//!   `~/.codex` goes under the variable's directory instead.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::env::StoreEnv;
use crate::wire::engine::Engine;
use crate::wire::{Edit, Surface, WireContext};

/// The comment and foreign entry seeded into every config the wiring edits.
const USER_MARK: &str = "user-owned-entry";

/// A config in the syntax `edit` splices, holding the user's own entry next to where
/// deja's goes, with a comment where the syntax has them.
fn seed(edit: &Edit) -> Option<String> {
    match edit {
        Edit::JsonMember { path, .. } | Edit::JsonArrayItem { path, .. } => {
            let top = path.first()?;
            let inner =
                if path.len() > 1 { format!("{{\n    \"{USER_MARK}\": {{\"command\": \"mine\"}}\n  }}") } else { "true".to_string() };
            let value = if matches!(edit, Edit::JsonArrayItem { .. }) && path.len() == 1 { format!("[\"{USER_MARK}\"]") } else { inner };
            // A file its harness reads as plain JSON has no comment to keep: one there would
            // make the harness ignore the whole file.
            let comment = match edit {
                Edit::JsonMember { strict: true, .. } => String::new(),
                _ => format!("  // {USER_MARK}: the user's comment\n"),
            };
            Some(format!("{{\n{comment}  \"{top}\": {value},\n  \"theme\": \"{USER_MARK}\"\n}}"))
        }
        Edit::TomlTable { path, .. } | Edit::TomlArrayItem { path, .. } => {
            let parent = path[..path.len().saturating_sub(1)].join(".");
            let table = if parent.is_empty() { USER_MARK.to_string() } else { format!("{parent}.{USER_MARK}") };
            Some(format!("# {USER_MARK}: the user's comment\nmodel = \"mine\"  # pinned\n\n[{table}]\ncommand = \"mine\"\n"))
        }
        Edit::TomlArrayValue { path, .. } => {
            let (key, parents) = path.split_last()?;
            let table = if parents.is_empty() { String::new() } else { format!("[{}]\n", parents.join(".")) };
            Some(format!("# {USER_MARK}: the user's comment\n{table}{key} = [\"{USER_MARK}\"]  # pinned\n"))
        }
        Edit::YamlMember { path, .. } | Edit::YamlListItem { path, .. } => {
            // The parents of deja's member, the last holding the user's own entry (a
            // list item for a list), and a top-level key of theirs after it.
            let mut text = format!("# {USER_MARK}: the user's comment\n");
            let parents = &path[..path.len().saturating_sub(1)];
            for (depth, key) in parents.iter().enumerate() {
                text.push_str(&format!("{}{key}:\n", "  ".repeat(depth)));
            }
            let pad = "  ".repeat(parents.len());
            match (edit, path.last()) {
                (Edit::YamlListItem { .. }, Some(key)) => {
                    text.push_str(&format!("{pad}{key}:\n{pad}  - \"{USER_MARK}\"  # pinned\n"));
                }
                _ => text.push_str(&format!("{pad}{USER_MARK}: true  # pinned\n")),
            }
            if !parents.is_empty() || matches!(edit, Edit::YamlListItem { .. }) {
                text.push_str("theme: dark\n");
            }
            Some(text)
        }
        Edit::YamlListBlock { .. } => Some(format!("# {USER_MARK}: the user's comment\n- {USER_MARK}: true\n")),
        Edit::Block { .. } => Some(format!("# {USER_MARK}: the user's comment\n{USER_MARK}: true\n")),
        Edit::OwnedFile { .. } | Edit::Dir { .. } => None,
    }
}

fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.insert(p.clone(), b"<dir>".to_vec());
                stack.push(p);
            } else if let Ok(bytes) = std::fs::read(&p) {
                out.insert(p, bytes);
            }
        }
    }
    out
}

impl super::Kit {
    /// See the module doc.
    pub fn check_wiring(&self) {
        let format = self.format;
        let id = format.info().id;
        let Some(wiring) = format.wiring() else { return };
        let exe = PathBuf::from("/opt/deja bin/deja");
        let mut targets: Vec<(String, bool)> = vec![(id.to_string(), false)];
        let probe_env = StoreEnv::with_home("/h");
        let probe = WireContext { env: &probe_env, exe: exe.clone() };
        if !wiring.auto(&probe).is_empty() {
            targets.push((format!("{id}-auto"), true));
        }
        assert!(!wiring.plain(&probe).is_empty(), "{id}: the plain target edits nothing");
        for (target, auto) in &targets {
            let tmp = tempfile::tempdir().expect("tempdir");
            let home = tmp.path().join("home");
            std::fs::create_dir_all(&home).expect("home");
            let env = StoreEnv::with_home(&home);
            let cx = WireContext { env: &env, exe: exe.clone() };
            let mut edits = wiring.plain(&cx);
            if *auto {
                edits.extend(wiring.auto(&cx));
            }
            for e in &edits {
                assert!(e.file().starts_with(&home), "{target}: {} is outside the home", e.file().display());
            }
            // The user's configs, as they were before deja.
            let mut seeded = BTreeSet::new();
            for e in &edits {
                if seeded.contains(e.file()) {
                    continue;
                }
                if let Some(text) = seed(e) {
                    std::fs::create_dir_all(e.file().parent().expect("parent")).expect("mkdir");
                    std::fs::write(e.file(), text).expect("seed");
                    seeded.insert(e.file().to_path_buf());
                }
            }
            let before = snapshot(&home);
            let engine = Engine::new(tmp.path().join("state"));
            let all: BTreeMap<String, Vec<Edit>> = [(target.clone(), edits.clone())].into_iter().collect();
            let on: BTreeSet<String> = [target.clone()].into_iter().collect();
            let plan = engine.plan(&on, &all, false).expect("plan");
            assert!(plan.refused.is_empty(), "{target}: refused {:?}", plan.refused);
            engine.apply(&plan).expect("install");
            for path in &seeded {
                let text = std::fs::read_to_string(path).expect("read");
                assert!(
                    text.contains(&format!("{USER_MARK}\""))
                        || text.contains(&format!("{USER_MARK}]"))
                        || text.contains(&format!("{USER_MARK}: true")),
                    "{target}: {} lost the user's entry:\n{text}",
                    path.display()
                );
                assert!(
                    text.contains(&format!("{USER_MARK}: the user's comment"))
                        || path.extension().is_some_and(|e| e == "json") && !text.contains("//"),
                    "{target}: {} lost the user's comment:\n{text}",
                    path.display()
                );
            }
            for e in &edits {
                if let Edit::JsonMember { file, strict: true, .. } = e {
                    let text = std::fs::read_to_string(file).expect("read");
                    assert!(
                        serde_json::from_str::<serde_json::Value>(&text).is_ok(),
                        "{target}: {} is read as plain JSON, and deja left it otherwise:\n{text}",
                        file.display()
                    );
                }
            }
            if wiring.surfaces().contains(&Surface::Mcp) {
                let found = snapshot(&home).values().any(|b| {
                    let t = String::from_utf8_lossy(b);
                    t.contains("/opt/deja bin/deja") && t.contains("mcp")
                });
                assert!(found, "{target}: no file names the binary with `mcp`");
            }
            let again = engine.plan(&on, &all, false).expect("plan again");
            assert!(
                again.is_noop(),
                "{target}: a second install would change {:?}",
                again.changes.iter().map(|c| &c.path).collect::<Vec<_>>()
            );
            let off = engine.plan(&BTreeSet::new(), &all, false).expect("plan uninstall");
            engine.apply(&off).expect("uninstall");
            assert_eq!(snapshot(&home), before, "{target}: uninstall must give every file back byte for byte");
        }
        self.check_wiring_relocations(&exe);
    }

    fn check_wiring_relocations(&self, exe: &Path) {
        let Some(wiring) = self.format.wiring() else { return };
        let id = self.format.info().id;
        let home = PathBuf::from("/h");
        let files = |env: &StoreEnv| -> BTreeSet<PathBuf> {
            let cx = WireContext { env, exe: exe.to_path_buf() };
            wiring.plain(&cx).into_iter().chain(wiring.auto(&cx)).map(|e| e.file().to_path_buf()).collect()
        };
        let default = files(&StoreEnv::with_home(&home));
        // The shared skill lives in the real home whatever the harness's variables say.
        let shared = home.join(".agents");
        for (var, home_rel) in &self.config_relocations {
            let moved = PathBuf::from("/elsewhere/moved");
            let under: Vec<&PathBuf> = default.iter().filter(|f| f.starts_with(home.join(home_rel)) && !f.starts_with(&shared)).collect();
            assert!(!under.is_empty(), "{id}: the wiring writes nothing under ~/{home_rel}, which {var} is declared to move");
            let relocated = files(&StoreEnv::with_home(&home).set(var, moved.display().to_string()));
            for f in under {
                let expect = moved.join(f.strip_prefix(home.join(home_rel)).expect("prefix"));
                assert!(
                    relocated.contains(&expect),
                    "{id}: with {var} set, {} should be written as {}; wiring writes {relocated:?}",
                    f.display(),
                    expect.display()
                );
            }
        }
    }
}

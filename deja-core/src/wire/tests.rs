//! The engine's promises, on real files in a temporary home: install then uninstall
//! gives every file back byte for byte (mode and links included), installing twice
//! changes nothing, files and directories install created go, two targets sharing a
//! file come off one at a time, a file the harness rewrote loses only deja's member,
//! and a file that does not parse (or is JSONC where its harness reads plain JSON) is left
//! alone and reported.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::json;

use super::engine::Engine;
use super::Edit;

struct Setup {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    engine: Engine,
}

fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let engine = Engine::new(tmp.path().join("state"));
    Setup { _tmp: tmp, home, engine }
}

fn targets(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

impl Setup {
    fn edits(&self, exe: &str) -> BTreeMap<String, Vec<Edit>> {
        let settings = self.home.join(".tool/settings.json");
        let mut m = BTreeMap::new();
        m.insert(
            "tool".to_string(),
            vec![
                Edit::json_member(&settings, &["mcpServers", "deja"], json!({"command": exe, "args": ["mcp"]})),
                Edit::toml_table(
                    self.home.join(".tool/config.toml"),
                    &["mcp_servers", "deja"],
                    format!("command = \"{exe}\"\nargs = [\"mcp\"]\n"),
                ),
                Edit::owned_file(
                    self.home.join(".tool/skills/deja-history/SKILL.md"),
                    format!("---\nname: deja-history\n---\nrun {exe}\n"),
                ),
                Edit::Dir { path: self.home.join(".tool-home") },
            ],
        );
        m.insert(
            "tool-auto".to_string(),
            vec![Edit::json_array_item(
                &settings,
                &["hooks", "SessionStart"],
                &["deja", "hook-session-start"],
                json!({"hooks": [{"type": "command", "command": format!("{exe} hook-session-start")}]}),
            )],
        );
        m
    }

    fn run(&self, installed: &[&str], exe: &str) -> super::engine::Plan {
        let plan = self.engine.plan(&targets(installed), &self.edits(exe), false).unwrap();
        self.engine.apply(&plan).unwrap();
        plan
    }
}

const SETTINGS: &str = "{\n    // the user's own server\n    \"mcpServers\": {\"mine\": {\"command\": \"x\"}},\n    \"hooks\": {\"SessionStart\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"echo hi\"}]}]}\n}";
const CONFIG: &str = "# codex\nmodel = \"o4\" # pinned\n";

fn seed(s: &Setup) {
    std::fs::create_dir_all(s.home.join(".tool")).unwrap();
    std::fs::write(s.home.join(".tool/settings.json"), SETTINGS).unwrap();
    std::fs::write(s.home.join(".tool/config.toml"), CONFIG).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(s.home.join(".tool/settings.json"), std::fs::Permissions::from_mode(0o640)).unwrap();
    }
}

fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                out.insert(p.clone(), b"<dir>".to_vec());
                stack.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn install_then_uninstall_gives_every_byte_back() {
    let s = setup();
    seed(&s);
    let before = snapshot(&s.home);
    s.run(&["tool", "tool-auto"], "/bin/deja");
    let settings = std::fs::read_to_string(s.home.join(".tool/settings.json")).unwrap();
    assert!(settings.contains("// the user's own server") && settings.contains("\"deja\"") && settings.contains("echo hi"), "{settings}");
    assert!(settings.contains("/bin/deja hook-session-start"), "{settings}");
    assert!(s.home.join(".tool/skills/deja-history/SKILL.md").exists() && s.home.join(".tool-home").is_dir());
    let again = s.engine.plan(&targets(&["tool", "tool-auto"]), &s.edits("/bin/deja"), false).unwrap();
    assert!(
        again.is_noop(),
        "a second install changes nothing: {:?}",
        again.changes.iter().filter(|c| c.before != c.after).map(|c| &c.path).collect::<Vec<_>>()
    );
    s.run(&[], "/bin/deja");
    assert_eq!(snapshot(&s.home), before, "every file, byte for byte; created files and directories gone");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(s.home.join(".tool/settings.json")).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640, "the file mode is the user's");
    }
}

#[test]
fn targets_sharing_a_file_come_off_one_at_a_time() {
    let s = setup();
    seed(&s);
    s.run(&["tool", "tool-auto"], "/bin/deja");
    s.run(&["tool"], "/bin/deja");
    let settings = std::fs::read_to_string(s.home.join(".tool/settings.json")).unwrap();
    assert!(settings.contains("\"deja\"") && !settings.contains("hook-session-start"), "{settings}");
    s.run(&[], "/bin/deja");
    assert_eq!(std::fs::read_to_string(s.home.join(".tool/settings.json")).unwrap(), SETTINGS);
}

#[test]
fn a_moved_binary_is_updated_in_place() {
    let s = setup();
    seed(&s);
    s.run(&["tool", "tool-auto"], "/old/deja");
    s.run(&["tool", "tool-auto"], "/new/deja");
    let settings = std::fs::read_to_string(s.home.join(".tool/settings.json")).unwrap();
    assert!(!settings.contains("/old/deja") && settings.matches("/new/deja").count() == 2, "{settings}");
    s.run(&[], "/new/deja");
    assert_eq!(std::fs::read_to_string(s.home.join(".tool/settings.json")).unwrap(), SETTINGS);
    assert_eq!(std::fs::read_to_string(s.home.join(".tool/config.toml")).unwrap(), CONFIG);
}

#[test]
fn a_file_the_harness_rewrote_loses_only_deja_s_member() {
    let s = setup();
    seed(&s);
    s.run(&["tool"], "/bin/deja");
    // The harness reformats the file and adds keys of its own.
    let path = s.home.join(".tool/settings.json");
    let rewritten = r#"{"mcpServers":{"mine":{"command":"x"},"deja":{"command":"/bin/deja","args":["mcp"]}},"hooks":{},"userID":"u1"}"#;
    std::fs::write(&path, rewritten).unwrap();
    s.run(&[], "/bin/deja");
    let after: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(after, json!({"mcpServers": {"mine": {"command": "x"}}, "hooks": {}, "userID": "u1"}));
    assert!(s.engine.load().unwrap().files.is_empty(), "nothing of deja's is left to remember");
}

#[test]
fn an_edited_skill_is_kept_unless_forced() {
    let s = setup();
    seed(&s);
    s.run(&["tool"], "/bin/deja");
    let skill = s.home.join(".tool/skills/deja-history/SKILL.md");
    std::fs::write(&skill, "my own notes\n").unwrap();
    let plan = s.engine.plan(&targets(&["tool"]), &s.edits("/new/deja"), false).unwrap();
    let change = plan.changes.iter().find(|c| c.path == skill).unwrap();
    assert!(change.kept.is_some() && change.after.as_deref() == Some(&b"my own notes\n"[..]));
    let forced = s.engine.plan(&targets(&["tool"]), &s.edits("/new/deja"), true).unwrap();
    assert!(forced.changes.iter().any(|c| c.path == skill && c.after.as_deref().is_some_and(|a| a.starts_with(b"---"))));
}

#[test]
fn a_file_that_does_not_parse_is_left_alone_and_reported() {
    let s = setup();
    seed(&s);
    let path = s.home.join(".tool/settings.json");
    std::fs::write(&path, "{\n  \"mcpServers\": {},\n  \"x\": @\n}").unwrap();
    let plan = s.engine.plan(&targets(&["tool"]), &s.edits("/bin/deja"), false).unwrap();
    let refused = plan.refused.iter().find(|r| r.path == path).expect("refused");
    assert!(refused.error.to_string().contains("line 3"), "{}", refused.error);
    s.engine.apply(&plan).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\n  \"mcpServers\": {},\n  \"x\": @\n}");
}

#[test]
fn a_plain_json_file_with_a_comment_is_refused_and_named_by_doctor() {
    // omp reads mcp.json as plain JSON and drops every server in it at a `//` comment:
    // deja adding its entry there would wire nothing, and keeping the user's comment
    // would be writing a file the harness ignores.
    let s = setup();
    let path = s.home.join(".omp/agent/mcp.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let edit = Edit::json_member(&path, &["mcpServers", "deja"], json!({"command": "/bin/deja", "args": ["mcp"]})).strict_json();
    let all: BTreeMap<String, Vec<Edit>> = [("alpha".to_string(), vec![edit.clone()])].into_iter().collect();
    let commented = "{\n  // mine\n  \"mcpServers\": {\"mine\": {\"command\": \"x\"}}\n}\n";
    std::fs::write(&path, commented).unwrap();
    let plan = s.engine.plan(&targets(&["alpha"]), &all, false).unwrap();
    let refused = plan.refused.iter().find(|r| r.path == path).expect("refused");
    assert!(matches!(refused.error, super::ConfigError::NotStrict { line: 2, .. }), "{}", refused.error);
    s.engine.apply(&plan).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), commented, "left alone");
    assert!(matches!(super::inspect::inspect(&edit, "/bin/deja"), super::inspect::EditState::Broken(super::ConfigError::NotStrict { .. })));
    // The same entry in a plain file, or a new file, is written as plain JSON.
    std::fs::write(&path, "{\"mcpServers\": {\"mine\": {\"command\": \"x\"}}}\n").unwrap();
    s.engine.apply(&s.engine.plan(&targets(&["alpha"]), &all, false).unwrap()).unwrap();
    let written = std::fs::read_to_string(&path).unwrap();
    let v: serde_json::Value = serde_json::from_str(&written).unwrap_or_else(|e| panic!("{e}: {written}"));
    assert_eq!(v["mcpServers"]["deja"]["command"], "/bin/deja");
    assert_eq!(super::inspect::inspect(&edit, "/bin/deja"), super::inspect::EditState::Wired);
    // A file that is merely JSONC for a harness that reads JSONC is not refused.
    std::fs::write(&path, commented).unwrap();
    let lenient = Edit::json_member(&path, &["mcpServers", "deja"], json!({"command": "/bin/deja", "args": ["mcp"]}));
    assert_eq!(super::inspect::inspect(&lenient, "/bin/deja"), super::inspect::EditState::Missing);
}

#[cfg(unix)]
#[test]
fn a_symlinked_config_stays_a_link() {
    let s = setup();
    seed(&s);
    let real = s.home.join("dotfiles/settings.json");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::rename(s.home.join(".tool/settings.json"), &real).unwrap();
    std::os::unix::fs::symlink(&real, s.home.join(".tool/settings.json")).unwrap();
    s.run(&["tool"], "/bin/deja");
    assert!(std::fs::symlink_metadata(s.home.join(".tool/settings.json")).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(&real).unwrap().contains("\"deja\""));
    s.run(&[], "/bin/deja");
    assert_eq!(std::fs::read_to_string(&real).unwrap(), SETTINGS);
}

#[test]
fn a_config_install_created_is_deleted_with_its_directories() {
    let s = setup();
    let before = snapshot(&s.home);
    s.run(&["tool", "tool-auto"], "/bin/deja");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(s.home.join(".tool/settings.json")).unwrap()).unwrap();
    assert_eq!(v["mcpServers"]["deja"]["args"], json!(["mcp"]));
    s.run(&[], "/bin/deja");
    assert_eq!(snapshot(&s.home), before);
}

#[test]
fn a_flipped_setting_gets_its_original_value_back_even_after_a_rewrite() {
    let s = setup();
    let path = s.home.join("settings.json");
    std::fs::write(&path, "{\"hooksConfig\": {\"enabled\": false}}").unwrap();
    let mut edits = BTreeMap::new();
    edits.insert("g-auto".to_string(), vec![Edit::json_member(&path, &["hooksConfig", "enabled"], json!(true))]);
    let plan = s.engine.plan(&targets(&["g-auto"]), &edits, false).unwrap();
    s.engine.apply(&plan).unwrap();
    // The harness rewrites the file (reformatted, a key of its own added).
    std::fs::write(&path, "{\n  \"hooksConfig\": { \"enabled\": true },\n  \"ui\": 1\n}").unwrap();
    let plan = s.engine.plan(&targets(&[]), &edits, false).unwrap();
    s.engine.apply(&plan).unwrap();
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v, json!({"hooksConfig": {"enabled": false}, "ui": 1}));
}

#[test]
fn a_file_the_user_changed_after_install_keeps_their_change_through_reinstall_and_uninstall() {
    let s = setup();
    seed(&s);
    s.run(&["tool"], "/bin/deja");
    let path = s.home.join(".tool/config.toml");
    let edited = std::fs::read_to_string(&path).unwrap().replace("model = \"o4\"", "model = \"o5\"");
    std::fs::write(&path, &edited).unwrap();
    s.run(&["tool"], "/new/deja");
    s.run(&[], "/new/deja");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), CONFIG.replace("o4", "o5"), "the user's later edit survives");
}

#[test]
fn an_array_value_item_round_trips_and_survives_a_rewrite() {
    let s = setup();
    let path = s.home.join(".whale/config.toml");
    std::fs::create_dir_all(s.home.join(".whale")).unwrap();
    let user = "# mine\n[tools]\nalways_load = [\"git_show\"]  # pinned\n";
    std::fs::write(&path, user).unwrap();
    let edits: BTreeMap<String, Vec<Edit>> =
        [("whale".to_string(), vec![Edit::toml_array_value(&path, &["tools", "always_load"], "mcp_deja_deja")])].into_iter().collect();
    let on = targets(&["whale"]);
    let plan = s.engine.plan(&on, &edits, false).unwrap();
    s.engine.apply(&plan).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "# mine\n[tools]\nalways_load = [\"git_show\", \"mcp_deja_deja\"]  # pinned\n");
    assert!(s.engine.plan(&on, &edits, false).unwrap().is_noop(), "a second install changes nothing");
    s.engine.apply(&s.engine.plan(&BTreeSet::new(), &edits, false).unwrap()).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), user, "byte for byte");
    // Installed again, then the harness rewrites the file: deja's item alone goes.
    s.engine.apply(&s.engine.plan(&on, &edits, false).unwrap()).unwrap();
    std::fs::write(&path, "[tools]\nalways_load = [\"mcp_deja_deja\", \"git_show\", \"notify\"]\n\n[ui]\ntheme = \"dark\"\n").unwrap();
    s.engine.apply(&s.engine.plan(&BTreeSet::new(), &edits, false).unwrap()).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "[tools]\nalways_load = [\"git_show\", \"notify\"]\n\n[ui]\ntheme = \"dark\"\n");
}

//! The YAML splices on the shapes the harnesses' configs take: comments and indentation
//! kept, missing keys created, placeholders (`[]`, `{}`, `key:`) filled, a scalar promoted
//! to a list, CRLF and unterminated files, and refusals with a position.

use super::*;

const DEJA: &str = "command: \"/bin/deja\"\nargs:\n  - \"mcp\"\nenabled: true\n";

fn ours(t: &str) -> bool {
    t.contains("deja")
}

#[test]
fn a_member_goes_under_its_parent_in_the_files_indentation() {
    let user = "# Hermes config\nmodel: x  # pinned\n\nmcp_servers:\n    # my server\n    mine:\n        command: mine\n\n# display settings\ndisplay:\n    theme: dark\n";
    let out = set_member(user, &["mcp_servers", "deja"], DEJA).unwrap();
    assert_eq!(
        out,
        "# Hermes config\nmodel: x  # pinned\n\nmcp_servers:\n    # my server\n    mine:\n        command: mine\n    deja:\n        command: \"/bin/deja\"\n        args:\n            - \"mcp\"\n        enabled: true\n\n# display settings\ndisplay:\n    theme: dark\n"
    );
    assert_eq!(set_member(&out, &["mcp_servers", "deja"], DEJA).unwrap(), out, "idempotent");
    assert_eq!(remove_member(&out, &["mcp_servers", "deja"]).unwrap(), user);
    // Replaced where it stands when it names another binary.
    let moved = set_member(&out, &["mcp_servers", "deja"], &DEJA.replace("/bin/deja", "/new/deja")).unwrap();
    assert_eq!(moved, out.replace("/bin/deja", "/new/deja"));
}

#[test]
fn a_missing_key_or_file_is_created() {
    assert_eq!(set_member("", &["extensions", "deja"], "type: stdio\n").unwrap(), "extensions:\n  deja:\n    type: stdio\n");
    let user = "# goose\nGOOSE_PROVIDER: openai\n";
    let out = set_member(user, &["extensions", "deja"], "enabled: true\n").unwrap();
    assert_eq!(out, "# goose\nGOOSE_PROVIDER: openai\nextensions:\n  deja:\n    enabled: true\n");
    assert_eq!(remove_member(&out, &["extensions", "deja"]).unwrap(), user, "an extensions: left empty goes (Goose refuses null)");
    // Only comments: the document has no content yet.
    assert_eq!(set_member("# nothing yet\n", &["a"], "true").unwrap(), "# nothing yet\na: true\n");
}

#[test]
fn empty_placeholders_are_filled() {
    let out = set_member("mcp_servers: {}  # none\nother: 1\n", &["mcp_servers", "deja"], "command: d\n").unwrap();
    assert_eq!(out, "mcp_servers:  # none\n  deja:\n    command: d\nother: 1\n");
    let out = set_member("extensions:\nother: 1\n", &["extensions", "deja"], "cmd: d\n").unwrap();
    assert_eq!(out, "extensions:\n  deja:\n    cmd: d\nother: 1\n");
    let out = upsert_item("plugins:\n  enabled: []\n", &["plugins", "enabled"], &ours, "deja").unwrap();
    assert_eq!(out, "plugins:\n  enabled:\n    - deja\n");
}

#[test]
fn list_items_are_appended_replaced_and_removed() {
    let user = "# aider\nmodel: sonnet\nread:\n  - CONVENTIONS.md  # always\n  - docs/api.md\nauto-commits: false\n";
    let path = "\"/h/.config/deja/aider-context.md\"";
    let out = upsert_item(user, &["read"], &ours, path).unwrap();
    assert_eq!(
        out,
        "# aider\nmodel: sonnet\nread:\n  - CONVENTIONS.md  # always\n  - docs/api.md\n  - \"/h/.config/deja/aider-context.md\"\nauto-commits: false\n"
    );
    assert_eq!(upsert_item(&out, &["read"], &ours, path).unwrap(), out, "idempotent");
    assert_eq!(remove_items(&out, &["read"], &ours).unwrap(), user);
    // A list at the key's column keeps that style.
    let flat = "read:\n- a.md\nx: 1\n";
    assert_eq!(upsert_item(flat, &["read"], &ours, "deja.md").unwrap(), "read:\n- a.md\n- deja.md\nx: 1\n");
}

#[test]
fn a_scalar_is_promoted_to_a_list_keeping_its_text() {
    let out = upsert_item("read: 'CONVENTIONS.md'  # mine\nx: 1\n", &["read"], &ours, "deja.md").unwrap();
    assert_eq!(out, "read:  # mine\n  - 'CONVENTIONS.md'\n  - deja.md\nx: 1\n");
    let out = upsert_item("read: [a.md, \"b.md\"]\n", &["read"], &ours, "deja.md").unwrap();
    assert_eq!(out, "read:\n  - a.md\n  - \"b.md\"\n  - deja.md\n");
    let out = upsert_item("model: x\n", &["read"], &ours, "deja.md").unwrap();
    assert_eq!(out, "model: x\nread:\n  - deja.md\n");
    assert_eq!(remove_items(&out, &["read"], &ours).unwrap(), "model: x\n", "a read: left empty goes");
}

#[test]
fn list_items_may_be_mappings_found_by_their_text() {
    let user = "name: my assistant\nmcpServers:\n  - name: mine\n    command: mine\nprompts:\n  - name: review\n    prompt: review it\n";
    let body = "name: deja\ncommand: \"/bin/deja\"\nargs:\n  - mcp\n";
    let is_deja = |t: &str| t.contains("name: deja");
    let out = upsert_item(user, &["mcpServers"], &is_deja, body).unwrap();
    assert_eq!(
        out,
        "name: my assistant\nmcpServers:\n  - name: mine\n    command: mine\n  - name: deja\n    command: \"/bin/deja\"\n    args:\n      - mcp\nprompts:\n  - name: review\n    prompt: review it\n"
    );
    let moved = upsert_item(&out, &["mcpServers"], &is_deja, &body.replace("/bin/deja", "/new/deja")).unwrap();
    assert_eq!(moved, out.replace("/bin/deja", "/new/deja"), "replaced where it stands, not duplicated");
    assert_eq!(remove_items(&moved, &["mcpServers"], &is_deja).unwrap(), user);
}

#[test]
fn crlf_and_unterminated_files_keep_their_endings() {
    let out = set_member("a: 1\r\nb:\r\n  c: 2\r\n", &["b", "deja"], "x: 1\n").unwrap();
    assert_eq!(out, "a: 1\r\nb:\r\n  c: 2\r\n  deja:\r\n    x: 1\r\n");
    let out = set_member("a: 1", &["deja"], "x: 1\n").unwrap();
    assert_eq!(out, "a: 1\ndeja:\n  x: 1");
    assert_eq!(remove_member(&out, &["deja"]).unwrap(), "a: 1");
}

#[test]
fn the_list_layer_replaces_a_bare_empty_list_and_writes_it_back() {
    const S: &str = "# deja mcp:start";
    const E: &str = "# deja mcp:end";
    let body = "- insert:\n    - id: mcp-deja\n";
    let out = set_list_block("[]\n", S, E, body).unwrap();
    assert_eq!(out, format!("{S}\n{body}{E}\n"));
    assert_eq!(remove_list_block(&out, S, E).unwrap(), "[]\n", "an empty layer fails the profile load");
    let user = "# my layer\n- insert:\n    - id: mine\n";
    let out = set_list_block(user, S, E, body).unwrap();
    assert_eq!(out, format!("{user}{S}\n{body}{E}\n"));
    assert_eq!(set_list_block(&out, S, E, body).unwrap(), out);
    assert_eq!(remove_list_block(&out, S, E).unwrap(), user);
    assert_eq!(set_list_block("", S, E, body).unwrap(), format!("{S}\n{body}{E}\n"));
    assert!(parse(&set_list_block("# c\n[]  \n", S, E, body).unwrap()).is_ok());
    assert!(matches!(set_list_block("a: 1\n", S, E, body), Err(ConfigError::Shape(_))));
}

#[test]
fn what_cannot_be_spliced_is_refused_with_a_position() {
    let err = set_member("a: 1\nb: [\n  c: d\n", &["x"], "1").unwrap_err();
    assert!(matches!(err, ConfigError::Parse { .. }), "{err:?}");
    let err = check("a:\n  - b\n c: d\n").unwrap_err();
    assert!(matches!(err, ConfigError::Parse { line: 3, .. }), "{err:?}");
    assert!(matches!(set_member("mcp_servers: {mine: {command: x}}\n", &["mcp_servers", "deja"], "c: d\n"), Err(ConfigError::Shape(_))));
    assert!(matches!(set_member("- a\n", &["x"], "1"), Err(ConfigError::Shape(_))));
    assert!(matches!(upsert_item("read: [a,\n  b]\n", &["read"], &ours, "deja"), Err(ConfigError::Shape(_))));
    assert!(matches!(upsert_item("read: {a: 1}\n", &["read"], &ours, "deja"), Err(ConfigError::Shape(_))));
}

#[test]
fn the_skill_frontmatter_is_strict_yaml() {
    let env = crate::StoreEnv::with_home("/h");
    let cx = super::super::WireContext { env: &env, exe: "/opt/deja bin/deja".into() };
    let text = super::super::skill_text(&cx);
    let front = text.split("---\n").nth(1).unwrap_or_default();
    let root = parse(front).unwrap().unwrap();
    let Kind::Map { entries, .. } = &root.kind else { panic!("{front}") };
    let description = entries.iter().find(|(k, _)| key_name(k) == Some("description")).map(|(_, v)| &v.kind);
    assert!(matches!(description, Some(Kind::Scalar { value, .. }) if value.contains("(every harness): what")), "{front}");
}

#[test]
fn the_engine_round_trips_yaml_and_strips_only_deja_from_a_rewritten_file() {
    use std::collections::{BTreeMap, BTreeSet};
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("config.yaml");
    let user = "# goose\nextensions:\n  developer:\n    enabled: true\n";
    std::fs::write(&config, user).unwrap();
    let edits: BTreeMap<String, Vec<super::super::Edit>> = [(
        "alpha".to_string(),
        vec![
            super::super::Edit::yaml_member(&config, &["extensions", "deja"], "cmd: \"/bin/deja\"\n"),
            super::super::Edit::yaml_list_item(&config, &["slash_commands"], &["command: deja"], "command: deja\n"),
        ],
    )]
    .into_iter()
    .collect();
    let engine = super::super::engine::Engine::new(tmp.path().join("state"));
    let on: BTreeSet<String> = ["alpha".to_string()].into_iter().collect();
    engine.apply(&engine.plan(&on, &edits, false).unwrap()).unwrap();
    let installed = std::fs::read_to_string(&config).unwrap();
    assert!(installed.contains("  deja:\n    cmd: \"/bin/deja\"\n") && installed.contains("slash_commands:\n  - command: deja\n"));
    assert!(engine.plan(&on, &edits, false).unwrap().is_noop(), "a second install changes nothing");
    // The harness rewrites the file: its change stays, deja's entries go.
    std::fs::write(&config, format!("{installed}GOOSE_MODEL: new\n")).unwrap();
    engine.apply(&engine.plan(&BTreeSet::new(), &edits, false).unwrap()).unwrap();
    assert_eq!(std::fs::read_to_string(&config).unwrap(), format!("{user}GOOSE_MODEL: new\n"));
}

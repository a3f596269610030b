//! Every test of deja-adapter-codewhale, in one test binary: the conformance kit, then the
//! rules that matter most for CodeWhale's session documents.

use std::path::Path;

use deja_adapter_codewhale::CodeWhaleFormat;
use deja_core::testkit::session;
use deja_core::{ExitStatus, FileAction, HarnessFormat, ParseOptions, Role, Session, StoreEnv, Timestamp};

deja_core::conformance!(CodeWhaleFormat);

mod hook;

fn home() -> std::path::PathBuf {
    deja_core::fixture_home!()
}

fn sessions_with(env: &StoreEnv, opts: &ParseOptions) -> Vec<Session> {
    deja_core::testkit::read_readable(&CodeWhaleFormat, env, opts)
}

fn fixture_sessions() -> Vec<Session> {
    sessions_with(&StoreEnv::with_home(home()), &ParseOptions::default())
}

#[test]
fn prompt_command_exit_and_edits() {
    let all = fixture_sessions();
    assert_eq!(all.iter().filter(|s| s.id == "s-42").count(), 1, "the migrated original in ~/.deepseek is not read twice");
    let mut s = session(&all, "s-42").clone();
    assert_eq!(s.title.as_deref(), Some("fix flaky retry"));
    assert_eq!(s.project.as_deref(), Some("/home/u/app"));
    deja_core::normalize::normalize(&mut s, &Default::default(), CodeWhaleFormat.info().injected);
    let user = s.turns.iter().find(|t| t.role == Role::User).expect("user");
    assert_eq!(user.text, "retry test flakes", "turn_meta is injected text");
    let bash = s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "bash")).expect("bash");
    assert_eq!(bash.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(1)));
    assert!(bash.text.contains("FAIL: TestBackoff"));
    let edits: Vec<_> = s.turns.iter().filter_map(|t| t.edit.as_ref()).collect();
    assert_eq!(edits[0].old, "attempts = 3");
    assert_eq!(edits[0].path, "/home/u/app/retry.go");
    assert_eq!(edits[1].new.as_deref(), Some("10 * time.Millisecond"));
    assert!(!s.turns.iter().any(|t| t.text.contains("compaction summary")), "system messages are skipped");
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning off by default");
    assert!(s.turns.iter().any(|t| t.role == Role::Assistant && t.text.starts_with("Five attempts")), "assistant_interrupted");
    assert_eq!(s.turns[0].time, Timestamp::parse_str("2026-10-01T09:00:00.001Z"), "message i at created_at + i ms");
    assert_eq!(s.updated, Timestamp::parse_str("2026-10-01T09:05:00Z"), "updated_at bumps the last update");
    let with = sessions_with(&StoreEnv::with_home(home()), &ParseOptions { include_reasoning: true });
    assert!(session(&with, "s-42").turns.iter().any(|t| t.role == Role::Reasoning));
}

#[test]
fn fork_and_patches() {
    let all = fixture_sessions();
    let s = session(&all, "s-43");
    assert_eq!((s.kind.as_deref(), s.parent.as_deref()), (Some("fork"), Some("s-42")));
    let p1 = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.call_id.as_deref()) == Some("p1")).expect("p1");
    assert_eq!(p1.files[0].path, "/home/u/app/config/load.go");
    assert!(p1.edit.as_ref().is_some_and(|e| e.old.contains("\"json\"}") && e.new.as_deref().is_some_and(|n| n.contains("yaml"))));
    let p2 = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.call_id.as_deref()) == Some("p2")).expect("p2");
    assert!(p2.files.is_empty() && p2.edit.is_none(), "a failed patch changed nothing");
    let p3 = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.call_id.as_deref()) == Some("p3")).expect("p3");
    assert_eq!(p3.files[0].action, FileAction::Write);
}

#[test]
fn legacy_root_is_read_unless_codewhale_home_is_set() {
    let all = fixture_sessions();
    assert!(all.iter().any(|s| s.id == "legacy-7"), "the pre-rebrand root, BOM and all");
    let isolated = sessions_with(
        &StoreEnv::with_home(home()).set("CODEWHALE_HOME", home().join(".codewhale").display().to_string()),
        &ParseOptions::default(),
    );
    assert!(!isolated.iter().any(|s| s.id == "legacy-7"), "CODEWHALE_HOME turns the legacy root off");
    assert!(!all.iter().any(|s| s.id == "torn"));
}

#[test]
fn codewhale_home_moves_the_configs_but_not_the_command() {
    let wiring = CodeWhaleFormat.wiring().expect("codewhale has wiring");
    let env = StoreEnv::with_home("/h").set("CODEWHALE_HOME", "/srv/whale");
    let cx = deja_core::wire::WireContext { env: &env, exe: "/bin/deja".into() };
    let files: std::collections::BTreeSet<_> =
        wiring.plain(&cx).iter().chain(wiring.auto(&cx).iter()).map(|e| e.file().to_path_buf()).collect();
    for f in ["/srv/whale/mcp.json", "/srv/whale/config.toml", "/h/.codewhale/commands/deja.md"] {
        assert!(files.contains(Path::new(f)), "{f} in {files:?}");
    }
}

#[test]
fn the_tool_is_loaded_eagerly_and_the_hooks_use_codewhale_s_envelope() {
    let wiring = CodeWhaleFormat.wiring().expect("codewhale has wiring");
    let env = StoreEnv::with_home("/h");
    let cx = deja_core::wire::WireContext { env: &env, exe: "/bin/deja".into() };
    let plain = wiring.plain(&cx);
    assert!(plain.iter().any(|e| matches!(e, deja_core::wire::Edit::TomlArrayValue { path, item, .. }
        if path == &["tools", "always_load"] && item == "mcp_deja_deja")));
    let bodies: Vec<String> = wiring
        .auto(&cx)
        .into_iter()
        .filter_map(|e| match e {
            deja_core::wire::Edit::TomlArrayItem { path, body, .. } if path == ["hooks", "hooks"] => Some(body),
            _ => None,
        })
        .collect();
    assert_eq!(bodies.len(), 2);
    assert!(bodies[0].contains("event = \"message_submit\"") && bodies[0].contains("hook-prompt --digest --codewhale"));
    assert!(bodies[1].contains("event = \"tool_call_before\"") && bodies[1].contains("hook-tool --codewhale"));
}

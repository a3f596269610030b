//! Every test of deja-adapter-continue, in one test binary: the conformance kit (snapshots of
//! every source in `tests/fixtures/home/`, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for Continue's documents.

use deja_adapter_continue::ContinueFormat;
use deja_core::testkit::session;
use deja_core::{FileAction, HarnessFormat, ParseOptions, Role, Session, SourceRef, StoreEnv, Timestamp};

deja_core::conformance!(
    ContinueFormat,
    wires "CONTINUE_GLOBAL_DIR" => ".continue"
);

fn fixture_sessions() -> Vec<Session> {
    let home = deja_core::fixture_home!();
    deja_core::testkit::read_readable(&ContinueFormat, &StoreEnv::with_home(&home), &ParseOptions::default())
}

#[test]
fn list_supplies_time_and_title_and_system_is_dropped() {
    let all = fixture_sessions();
    let s = session(&all, "8f1c0a2b-1111-4000-8000-000000000001");
    assert_eq!(s.title.as_deref(), Some("Build speed"), "the document's placeholder yields to the list's title");
    assert_eq!(s.project.as_deref(), Some("/home/u/web"));
    let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
    assert_eq!(roles, vec![Role::User, Role::Assistant], "system item skipped, empty tool state dropped");
    assert_eq!(s.turns[0].time, Timestamp::parse_str("2026-09-01T10:00:01Z"), "item i at dateCreated + i s");
    assert!(s.source.parts.iter().any(|p| p.ends_with("sessions.json")), "the list is part of the fingerprint");
}

#[test]
fn cn_tool_states_become_commands_files_and_edits() {
    let all = fixture_sessions();
    let s = session(&all, "3b7d9e10-2222-4000-8000-000000000002");
    assert_eq!(s.title, None, "Untitled Session is a placeholder");
    assert_eq!(s.started, Some(Timestamp(1_795_998_822_740)), "dateCreated as epoch ms in a string");
    assert_eq!(s.turns.iter().filter(|t| t.text.contains("run the api tests")).count(), 1, "editorState is not read");
    let bash = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("npm test")).expect("npm test");
    assert_eq!(bash.role, Role::ToolCall);
    assert!(bash.text.contains("1 failing"), "the output is folded into the call");
    let edit = s.turns.iter().find(|t| t.edit.is_some()).expect("edit");
    assert_eq!(edit.files[0].action, FileAction::Edit);
    assert_eq!(edit.edit.as_ref().map(|e| e.old.as_str()), Some("return 503"));
    assert!(edit.tool.as_ref().is_some_and(|t| t.is_error), "status errored");
    assert!(!s.turns.iter().any(|t| t.role == Role::ToolOutput), "role tool items are skipped");
    assert_eq!(s.turns.last().map(|t| t.role), Some(Role::Assistant));
}

#[test]
fn bom_fallbacks_and_a_torn_document() {
    let all = fixture_sessions();
    let s = session(&all, "c0ffee00-3333-4000-8000-000000000003");
    assert_eq!(s.project.as_deref(), Some("/home/u/docs"), "the list's workspace when the document's is empty");
    assert_eq!(s.title, None, "a title equal to the first prompt is left for the indexer");
    assert_eq!(s.turns[1].text, "Ran markdownlint;\ntwo headings fixed.");
    assert!(!all.iter().any(|s| s.id.starts_with("dead0000")), "a torn document yields nothing");
}

#[test]
fn a_document_outside_the_list_uses_its_stem_mtime_and_the_default_project() {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("orphan.json");
    std::fs::write(&path, r#"{"history":[{"message":{"role":"user","content":"hello there"}}]}"#).expect("write");
    let mut out = Vec::new();
    ContinueFormat.parse(&SourceRef::file(&path), &ParseOptions::default(), &mut out).expect("parse");
    assert_eq!(out[0].id, "orphan");
    assert_eq!(out[0].project.as_deref(), Some("continue"));
    assert!(out[0].started.is_some(), "the file's mtime");
}

/// `cn` 1.5.47 (run 2026-12-01): `--resume -p` appends a second prompt to the same document,
/// and `Write` takes a relative `filepath`, joined onto the workspace.
#[test]
fn a_resumed_cn_1_5_47_session_reads_both_prompts_and_relative_writes() {
    let all = fixture_sessions();
    let s = session(&all, "5e550000-5555-4000-8000-000000000005");
    assert_eq!(s.title, None);
    assert_eq!(s.project.as_deref(), Some("/home/dev/projects/shop"));
    let users: Vec<&str> = s.turns.iter().filter(|t| t.role == Role::User).map(|t| t.text.as_str()).collect();
    assert_eq!(users, ["The login rate limit resets too early", "Add a test for the rate limit window"], "editorState not read twice");
    let cmds: Vec<&str> = s.turns.iter().filter_map(|t| t.tool.as_ref()?.command.as_deref()).collect();
    assert_eq!(cmds, ["grep -n WINDOW src/limit.ts", "npm test -- limit"]);
    let writes: Vec<_> = s.turns.iter().filter(|t| t.tool.as_ref().is_some_and(|x| x.name == "Write")).collect();
    assert_eq!(writes.len(), 2);
    assert_eq!(writes[0].files[0].path, "/home/dev/projects/shop/notes/limit.md");
    assert_eq!(writes[0].files[0].action, FileAction::Write);
    assert_eq!(writes[1].edit.as_ref().and_then(|e| e.new.as_deref()), Some("window is 60 s, tested\n"));
    assert_eq!(s.turns.iter().filter(|t| t.role == Role::Assistant).count(), 2);
}

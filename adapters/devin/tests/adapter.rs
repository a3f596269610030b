//! Every test of deja-adapter-devin, in one test binary: the conformance kit (snapshots of
//! every source in `tests/fixtures/home/`, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for Devin: transcript over nodes, hidden
//! sessions, tool decoding by input keys, epoch seconds, and the cursor.

use std::path::Path;

use deja_adapter_devin::DevinFormat;
use deja_core::testkit::materialize_home;
use deja_core::testkit::session;
use deja_core::{FileAction, HarnessFormat, ParseOptions, Role, Session, SourceRef, StoreEnv, Timestamp};

deja_core::conformance!(DevinFormat);

fn fixture_home() -> (tempfile::TempDir, Vec<rusqlite::Connection>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let writers = materialize_home(&deja_core::fixture_home!(), tmp.path()).expect("fixture home");
    (tmp, writers)
}

fn parse_all(home: &Path, opts: &ParseOptions) -> Vec<Session> {
    deja_core::testkit::read_all(&DevinFormat, &StoreEnv::with_home(home), opts)
}

#[test]
fn the_transcript_session_has_roles_commands_files_and_edits() {
    let (tmp, _w) = fixture_home();
    let all = parse_all(tmp.path(), &ParseOptions::default());
    let s = session(&all, "s-01");
    assert_eq!(s.project.as_deref(), Some("/src/web"));
    assert_eq!(s.title.as_deref(), Some("Fix login"));
    assert_eq!(s.turns[0].role, Role::User, "the system step is skipped");
    assert_eq!(s.turns[0].text, "login returns 500");
    assert_eq!(s.turns.iter().filter(|t| t.role == Role::User).count(), 1, "the transcript wins over message_nodes");
    assert_eq!(s.turns[1].text, "Checking the handler.");
    let grep = &s.turns[2];
    assert_eq!(grep.tool.as_ref().and_then(|t| t.command.as_deref()), Some("grep -rn login src/"));
    assert_eq!(grep.text, "src/auth.py:12: def login");
    let read = s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "read_file")).unwrap();
    assert_eq!(read.files[0].action, FileAction::Read);
    assert!(read.text.starts_with("def login"), "a tool_result item in a user step folds into its call");
    let edit = s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "edit_file")).unwrap();
    assert_eq!(edit.files[0].path, "/src/web/src/auth.py");
    assert_eq!(edit.edit.as_ref().map(|e| e.old.as_str()), Some("return db.user(req.name)"));
    let write = s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "write_file")).unwrap();
    assert_eq!(write.files[0].action, FileAction::Write);
    let pytest =
        s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.command.as_deref() == Some("pytest tests/test_login.py"))).unwrap();
    assert!(pytest.tool.as_ref().unwrap().is_error);
    assert!(s.turns.iter().any(|t| t.role == Role::ToolOutput && t.text == "late result"), "an orphan result is kept");
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning || t.text.contains("Session started")));
    assert_eq!(s.turns.last().map(|t| t.role), Some(Role::Assistant));
}

#[test]
fn nodes_stand_in_without_a_transcript_and_hidden_sessions_are_skipped() {
    let (tmp, _w) = fixture_home();
    let all = parse_all(tmp.path(), &ParseOptions::default());
    assert!(!all.iter().any(|s| s.id == "s-03"), "hidden = 1 is internal");
    let s = session(&all, "s-02");
    let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
    assert_eq!(roles, vec![Role::User, Role::Assistant, Role::ToolCall, Role::ToolCall, Role::Assistant]);
    assert_eq!(s.turns[2].files[0].path, "/src/cli/main.go");
    assert_eq!(s.turns[3].tool.as_ref().and_then(|t| t.command.as_deref()), Some("go run ."));
    assert!(s.turns[3].text.contains("nil map"));
    assert_eq!(s.started, Some(Timestamp(1_775_200_000_000)), "epoch seconds, not milliseconds");
    assert_eq!(session(&all, "s-04").project.as_deref(), Some("/src/tool"), "workspace_dirs[].root_path");
}

#[test]
fn reasoning_comes_only_on_request() {
    let (tmp, _w) = fixture_home();
    let all = parse_all(tmp.path(), &ParseOptions { include_reasoning: true });
    assert!(session(&all, "s-01").turns.iter().any(|t| t.role == Role::Reasoning && t.text.starts_with("The handler")));
    assert!(session(&all, "s-02").turns.iter().any(|t| t.role == Role::Reasoning && t.text == "Probably a nil map."));
}

#[test]
fn the_cursor_re_reads_only_what_changed() {
    let (tmp, writers) = fixture_home();
    let src = DevinFormat.discover(&StoreEnv::with_home(tmp.path())).sources.into_iter().next().expect("the store");
    let mut first: Vec<Session> = Vec::new();
    let stats = DevinFormat.parse(&src, &ParseOptions::default(), &mut first).unwrap();
    assert_eq!(first.len(), 3);
    let unchanged = SourceRef { cursor: stats.cursor, ..src.clone() };
    let mut again: Vec<Session> = Vec::new();
    DevinFormat.parse(&unchanged, &ParseOptions::default(), &mut again).unwrap();
    // Nothing changed: the sessions of the newest second are recorded in the cursor as
    // they were read (a change within that second would still be noticed), not re-read.
    assert!(again.is_empty(), "{again:?}");

    writers[0]
        .execute(
            "INSERT INTO message_nodes (node_id, parent_node_id, session_id, chat_message, created_at) \
             VALUES ('m10', 'm8', 's-02', '{\"role\":\"user\",\"content\":\"thanks\"}', 1775200070)",
            [],
        )
        .unwrap();
    let mut grown: Vec<Session> = Vec::new();
    DevinFormat.parse(&unchanged, &ParseOptions::default(), &mut grown).unwrap();
    let grown_s02 = session(&grown, "s-02");
    assert_eq!(grown_s02.turns.last().unwrap().text, "thanks");
    assert!(!grown.iter().any(|s| s.id == "s-01"));
}

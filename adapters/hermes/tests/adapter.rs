//! Every test of deja-adapter-hermes, in one test binary: the conformance kit (snapshots of
//! every database in `tests/fixtures/home/`, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for Hermes and its row cursor.

use std::path::Path;

use deja_adapter_hermes::HermesFormat;
use deja_core::testkit::materialize_home;
use deja_core::testkit::session;
use deja_core::{ExitStatus, FileAction, HarnessFormat, ParseOptions, ParseStats, Role, Session, SourceRef, StoreEnv, Timestamp};

deja_core::conformance!(
    HermesFormat,
    wires "HERMES_HOME" => ".hermes"
);

fn fixture_home() -> (tempfile::TempDir, Vec<rusqlite::Connection>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let writers = materialize_home(&deja_core::fixture_home!(), tmp.path()).expect("fixture home");
    (tmp, writers)
}

fn parse_all(home: &Path, opts: &ParseOptions) -> Vec<Session> {
    deja_core::testkit::read_all(&HermesFormat, &StoreEnv::with_home(home), opts)
}

#[test]
fn the_tool_session_has_roles_commands_exits_and_project() {
    let (tmp, _w) = fixture_home();
    let all = parse_all(tmp.path(), &ParseOptions::default());
    let s = session(&all, "20261130_100000_1a2b3c");
    assert_eq!(s.project.as_deref(), Some("/home/dev/src/app"));
    assert_eq!(s.turns[0].role, Role::User);
    assert_eq!(s.turns[0].time, Some(Timestamp(1_796_032_800_500)), "the fraction of a second is kept");
    let calls: Vec<_> = s.turns.iter().filter_map(|t| t.tool.as_ref().map(|x| (t, x))).collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].1.command.as_deref(), Some("make test"));
    assert_eq!(calls[0].1.exit, Some(ExitStatus::Code(2)));
    assert!(calls[0].1.is_error);
    assert!(calls[0].0.text.starts_with("2 failed"));
    assert_eq!(calls[1].1.exit, Some(ExitStatus::Code(0)));
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning is off by default");
    assert!(!s.turns.iter().any(|t| t.text.contains("You are Hermes")), "the system prompt is never a turn");
    assert_eq!(s.turns.last().map(|t| t.role), Some(Role::Assistant));
}

#[test]
fn continuations_titles_failures_and_old_profile_stores() {
    let (tmp, _w) = fixture_home();
    let all = parse_all(tmp.path(), &ParseOptions::default());
    let next = session(&all, "20261130_110000_4d5e6f");
    assert_eq!(next.parent.as_deref(), Some("20261130_100000_1a2b3c"));
    assert_eq!(next.title.as_deref(), Some("Flaky login test follow-up"));
    let failed = next.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.command.as_deref() == Some("cat tests/missing.py"))).unwrap();
    assert!(failed.tool.as_ref().unwrap().is_error);
    assert!(failed.text.contains("No such file"));
    let orphan = next.turns.iter().find(|t| t.role == Role::ToolOutput).expect("orphan result");
    assert_eq!(orphan.tool.as_ref().unwrap().call_id.as_deref(), Some("call_gone"));

    let old = session(&all, "01KX9A");
    assert_eq!(old.project.as_deref(), Some("ops"), "no cwd: the profile name");
    let roles: Vec<Role> = old.turns.iter().map(|t| t.role).collect();
    assert_eq!(roles, vec![Role::User, Role::Assistant]);
}

#[test]
fn release_0_19_0_file_tools_refusals_and_non_shell_results() {
    let (tmp, _w) = fixture_home();
    let all = parse_all(tmp.path(), &ParseOptions::default());
    let s = session(&all, "20261201_090000_5c6d7e");
    assert_eq!(s.project.as_deref(), Some("/home/dev/projects/shop"));
    let tool = |name: &'static str| s.turns.iter().filter(move |t| t.tool.as_ref().is_some_and(|x| x.name == name));
    // A call refused before it ran answers `{"error"}` alone: a failure, its text the error.
    let refused = tool("terminal").next().expect("terminal call");
    assert_eq!(refused.tool.as_ref().unwrap().command.as_deref(), Some("cargo test refresh"));
    assert!(refused.tool.as_ref().unwrap().is_error);
    assert_eq!(refused.tool.as_ref().unwrap().exit, None);
    assert!(refused.text.starts_with("Foreground timeout"), "{:?}", refused.text);
    // write_file's result has no `output`: it was dropped before; the JSON is the result now.
    let write = tool("write_file").next().expect("write_file call");
    assert_eq!(write.files.len(), 1);
    assert_eq!((write.files[0].path.as_str(), write.files[0].action), ("notes.txt", FileAction::Write));
    assert!(write.text.contains("bytes_written") && !write.tool.as_ref().unwrap().is_error);
    // patch: a replace is an edit span, a V4A patch names its files.
    let patches: Vec<_> = tool("patch").collect();
    assert_eq!(patches.len(), 2);
    let edit = patches[0].edit.as_ref().expect("replace-mode edit span");
    assert_eq!((edit.path.as_str(), edit.old.as_str(), edit.new.as_deref()), ("src/auth.rs", "token.clone()", Some("fresh.clone()")));
    assert_eq!(patches[0].files[0].action, FileAction::Edit);
    let v4a: Vec<(&str, FileAction)> = patches[1].files.iter().map(|f| (f.path.as_str(), f.action)).collect();
    assert_eq!(v4a, vec![("src/lib.rs", FileAction::Edit), ("tests/refresh.rs", FileAction::Write)]);
    assert_eq!(s.turns.last().map(|t| t.role), Some(Role::Assistant));

    // Both reasoning columns hold the same text in 0.19.0: one reasoning turn, not two.
    let all = parse_all(tmp.path(), &ParseOptions { include_reasoning: true });
    let s = session(&all, "20261201_090000_5c6d7e");
    assert_eq!(s.turns.iter().filter(|t| t.role == Role::Reasoning).count(), 1);
}

#[test]
fn reasoning_comes_only_on_request() {
    let (tmp, _w) = fixture_home();
    let all = parse_all(tmp.path(), &ParseOptions { include_reasoning: true });
    let s = session(&all, "20261130_100000_1a2b3c");
    assert!(s.turns.iter().any(|t| t.role == Role::Reasoning && t.text.starts_with("Run the suite first")));
}

#[test]
fn the_cursor_re_reads_only_a_grown_session() {
    let (tmp, writers) = fixture_home();
    let db = tmp.path().join(".hermes/state.db");
    let src = HermesFormat.discover(&StoreEnv::with_home(tmp.path())).sources.into_iter().find(|s| s.path == db).expect("the root store");
    let mut first: Vec<Session> = Vec::new();
    let stats: ParseStats = HermesFormat.parse(&src, &ParseOptions::default(), &mut first).unwrap();
    assert_eq!(first.len(), 3);
    let cursor = stats.cursor.expect("a cursor");

    let unchanged = SourceRef { cursor: Some(cursor.clone()), ..src.clone() };
    let mut none: Vec<Session> = Vec::new();
    HermesFormat.parse(&unchanged, &ParseOptions::default(), &mut none).unwrap();
    assert!(none.is_empty(), "nothing changed, nothing re-emitted");

    // The writer for the root store is the first materialized (state.db.sql sorts before profiles/).
    let writer = writers.iter().find(|w| w.path().is_some_and(|p| p.ends_with(".hermes/state.db"))).expect("root writer");
    writer
        .execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('20261130_100000_1a2b3c', 'user', 'and the retry test?', 1796040000.0)",
            [],
        )
        .unwrap();
    let mut grown: Vec<Session> = Vec::new();
    HermesFormat.parse(&unchanged, &ParseOptions::default(), &mut grown).unwrap();
    assert_eq!(grown.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), vec!["20261130_100000_1a2b3c"]);
    assert_eq!(grown[0].turns.last().unwrap().text, "and the retry test?");
    assert_eq!(grown[0].turns[0].role, Role::User, "the grown session is re-read whole");
}

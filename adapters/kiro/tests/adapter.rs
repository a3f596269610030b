//! Every test of deja-adapter-kiro, in one test binary: the conformance kit (snapshots of
//! every source in `tests/fixtures/home/`, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for Kiro's three stores.

use deja_adapter_kiro::KiroFormat;
use deja_core::testkit::materialize_home;
use deja_core::testkit::session;
use deja_core::{
    Edit, ExitStatus, FileAction, FileTouch, HarnessFormat, ParseOptions, ParseStats, Role, Session, SourceRef, StoreEnv, Timestamp, Turn,
};

deja_core::conformance!(KiroFormat);

struct Fixture {
    _tmp: tempfile::TempDir,
    writers: Vec<rusqlite::Connection>,
    home: std::path::PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let writers = materialize_home(&deja_core::fixture_home!(), &home).expect("fixture home");
    Fixture { _tmp: tmp, writers, home }
}

fn parse(src: &SourceRef) -> (Vec<Session>, ParseStats) {
    let mut out = Vec::new();
    let stats = KiroFormat.parse(src, &ParseOptions::default(), &mut out).expect("the fixture parses");
    (out, stats)
}

fn sessions() -> (Vec<Session>, Vec<(SourceRef, ParseStats)>) {
    let f = fixture();
    let mut all = Vec::new();
    let mut stats = Vec::new();
    for src in KiroFormat.discover(&StoreEnv::with_home(&f.home)).sources {
        let (out, s) = parse(&src);
        all.extend(out);
        stats.push((src, s));
    }
    (all, stats)
}

fn call<'a>(s: &'a Session, name: &str) -> Vec<&'a Turn> {
    s.turns.iter().filter(|t| t.tool.as_ref().is_some_and(|x| x.name == name)).collect()
}

fn file(path: &str, action: FileAction) -> FileTouch {
    FileTouch { path: path.into(), action }
}

#[test]
fn cli_pairs_join_streamed_pieces_and_stamp_exits() {
    let (all, stats) = sessions();
    let s = session(&all, "5e0c1f9a-2b7d-4c3e-9a61-0f2d8b4e7c11");
    assert_eq!(s.project.as_deref(), Some("/home/dev/cart"), "the header's cwd");
    let said: Vec<(Role, &str)> = s.turns.iter().filter(|t| t.role != Role::ToolCall).map(|t| (t.role, t.text.as_str())).collect();
    assert_eq!(
        said,
        vec![
            (Role::User, "the cart tests fail after the tax change"),
            (Role::Assistant, "Running the cart suite now."),
            (Role::Assistant, "Tax is added twice; fixing it."),
            (Role::Assistant, "The total no longer adds tax twice; all three cart tests pass."),
        ],
        "pieces sharing a message_id are one reply"
    );
    let shells = call(s, "shell");
    let first = shells[0].tool.as_ref().unwrap();
    assert_eq!((first.command.as_deref(), first.exit.clone(), first.is_error), (Some("npm test -- cart"), Some(ExitStatus::Code(1)), true));
    assert_eq!(shells[0].text, "1 failing: total includes tax twice");
    assert_eq!(shells[1].tool.as_ref().unwrap().exit, Some(ExitStatus::Code(0)));
    assert!(!shells[1].tool.as_ref().unwrap().is_error);
    assert_eq!(call(s, "read")[0].files, vec![file("/home/dev/cart/src/total.js", FileAction::Read)], "directory reads are no file");
    let writes = call(s, "write");
    assert_eq!(
        writes[0].edit,
        Some(Edit { path: "/home/dev/cart/src/total.js".into(), old: "s.sub + s.tax + s.tax".into(), new: Some("s.sub + s.tax".into()) })
    );
    assert_eq!(writes[1].files, vec![file("/home/dev/cart/NOTES.md", FileAction::Write)]);
    assert!(s.turns.iter().all(|t| t.time == Some(Timestamp(1_790_000_000_000))), "unstamped records take the Prompt's time");
    let st = &stats.iter().find(|(src, _)| src.path.ends_with("5e0c1f9a-2b7d-4c3e-9a61-0f2d8b4e7c11.jsonl")).unwrap();
    assert!(!st.0.append_only, "re-read whole: pieces and exit stamps join across any resume point");
    assert_eq!(st.1.skipped, 2, "the garbage line and the torn last line: {:?}", st.1.problems);

    let bare = session(&all, "8a41d2e0-0c55-4b7a-b3de-6f1e92a0c7b4");
    assert_eq!(bare.project, None, "no header, no cwd");
    assert_eq!(bare.turns[0].text, "what does the retry flag do?", "the BOM is not text");
}

#[test]
fn v3_sessions_read_terminal_tool_states_and_trailing_exit_codes() {
    let (all, _) = sessions();
    let s = session(&all, "sess_0a1b2c3d-5e6f-4a7b-8c9d-0e1f2a3b4c5d");
    assert_eq!(s.project.as_deref(), Some("/home/dev/api"), "the first workspace path");
    assert!(!s.turns.iter().any(|t| t.text.contains("You are Kiro")), "session_start is bookkeeping");
    assert!(!s.turns.iter().any(|t| t.text == "..."), "encrypted reasoning is not speech");
    assert_eq!(s.turns[0].role, Role::User);
    let bash = call(s, "execute_bash");
    assert_eq!(bash.len(), 1, "one call per id (pending line skipped), the denied one ignored");
    let tool = bash[0].tool.as_ref().unwrap();
    assert_eq!((tool.command.as_deref(), tool.exit.clone()), (Some("curl -s localhost:8080/health"), Some(ExitStatus::Code(22))));
    assert_eq!(bash[0].text, "{\"error\":\"db pool exhausted\"}", "the `Exit Code` line is cut");
    let replaces = call(s, "str_replace");
    assert_eq!(
        replaces[0].edit,
        Some(Edit { path: "/home/dev/api/config/db.yml".into(), old: "pool: 5".into(), new: Some("pool: 20".into()) })
    );
    assert_eq!(replaces[0].text, "Replaced 1 occurrence in config/db.yml", "a result before its call's terminal line is folded");
    assert_eq!(replaces[1].files, vec![file("/home/dev/api/config/prod.yml", FileAction::Edit)], "a failed edit keeps its file");
    assert_eq!(replaces[1].edit, None, "…but not its sides");
    assert!(replaces[1].tool.as_ref().unwrap().is_error);
    assert_eq!(call(s, "fs_append")[0].files, vec![file("/home/dev/api/CHANGELOG.md", FileAction::Write)]);
    assert_eq!(call(s, "read_file")[0].files, vec![file("/home/dev/api/src/health.ts", FileAction::Read)]);
    assert_eq!(call(s, "delete_file")[0].files, vec![file("/home/dev/api/tmp/pool.lock", FileAction::Delete)]);
    let pwsh = call(s, "execute_pwsh")[0].tool.as_ref().unwrap();
    assert_eq!((pwsh.exit.clone(), pwsh.is_error), (Some(ExitStatus::Code(0)), false));
    assert_eq!(s.turns.last().unwrap().text, "The health check passes with a pool of 20.");
    assert!(!all.iter().any(|s| s.id.starts_with("sess_0dead000")), "removed from the V3 index: not read");
}

#[test]
fn ide_sessions_read_flat_lines_and_alias_types() {
    let (all, _) = sessions();
    let s = session(&all, "sess_ide00001-aaaa-4bbb-8ccc-dddddddddddd");
    assert_eq!(s.project.as_deref(), Some("ws-docs"), "no workspace paths: the workspace directory");
    let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
    use Role::*;
    assert_eq!(roles, vec![User, Assistant, User, Assistant, User, Assistant], "the flat system line is dropped");
    assert_eq!(s.turns[2].text, "and link it from the index");
}

#[test]
fn the_headless_database_reads_history_entries_and_pairs() {
    let (all, stats) = sessions();
    let q = session(&all, "3f6d0c2a-8e1b-4d7f-a2c9-5b4e1f0d9a73");
    assert_eq!(q.project.as_deref(), Some("/home/dev/queue"));
    assert_eq!((q.turns[0].role, q.turns[0].text.as_str()), (Role::User, "the worker drops jobs on restart"));
    assert!(!q.turns.iter().any(|t| t.text.contains("CONTEXT ENTRY")), "additional_context is injected, not speech");
    let bash = call(q, "execute_bash")[0];
    assert_eq!(bash.tool.as_ref().unwrap().exit, Some(ExitStatus::Code(1)));
    assert_eq!(bash.text, "FAIL worker.test.ts: job lost after SIGTERM");
    let reads = call(q, "fs_read");
    assert_eq!(reads[0].files, vec![file("/home/dev/queue/src/worker.ts", FileAction::Read)]);
    assert!(reads[1].files.is_empty(), "a Directory read names no file");
    let writes = call(q, "fs_write");
    assert_eq!(writes[0].edit.as_ref().map(|e| e.old.as_str()), Some("process.exit(0)"));
    assert_eq!(writes[1].files, vec![file("/home/dev/queue/docs/shutdown.md", FileAction::Write)]);
    assert!(writes[1].tool.as_ref().unwrap().is_error, "status Error");
    assert_eq!(q.turns.last().unwrap().role, Role::Assistant);

    let site = session(&all, "9c2e7b14-0f3a-4e65-b8d1-2a7c6e9f4b08");
    let texts: Vec<(Role, &str)> = site.turns.iter().map(|t| (t.role, t.text.as_str())).collect();
    assert_eq!(
        texts,
        vec![
            (Role::User, "build the static site"),
            (Role::ToolCall, "Tool use was cancelled by the user"),
            (Role::User, "stop, use hugo instead"),
            (Role::Assistant, "Switching to hugo."),
        ]
    );
    let db = &stats.iter().find(|(src, _)| src.path.ends_with("data.sqlite3")).unwrap().1;
    assert_eq!(db.skipped, 1, "the torn row: {:?}", db.problems);
}

#[test]
fn the_database_cursor_re_reads_only_changed_rows() {
    let f = fixture();
    let found = KiroFormat.discover(&StoreEnv::with_home(&f.home));
    let mut src = found.sources.into_iter().find(|s| s.path.ends_with("data.sqlite3")).expect("the database");
    assert_eq!(src.parts, vec![deja_core::sqlite::wal_path(&src.path)]);
    let (first, stats) = parse(&src);
    assert_eq!(first.len(), 2);
    src.cursor = stats.cursor;
    assert!(src.cursor.is_some());
    let (again, _) = parse(&src);
    assert!(again.is_empty(), "nothing changed: {:?}", again.iter().map(|s| &s.id).collect::<Vec<_>>());
    f.writers[0].execute("UPDATE conversations_v2 SET updated_at = 1790400000000 WHERE key = '/home/dev/site'", []).unwrap();
    let (changed, _) = parse(&src);
    assert_eq!(changed.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), vec!["9c2e7b14-0f3a-4e65-b8d1-2a7c6e9f4b08"]);
    src.cursor = Some("garbage".into());
    assert_eq!(parse(&src).0.len(), 2, "an unknown cursor means a full read");
}

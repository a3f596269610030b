//! Every test of deja-adapter-piebald, in one test binary: the conformance kit (snapshots
//! of the fixture database, arbitrary bytes, mutated fixtures, store overrides), then the
//! rules that matter most for Piebald, and the row cursor.

use std::path::Path;

use deja_adapter_piebald::PiebaldFormat;
use deja_core::testkit::materialize_home;
use deja_core::{Edit, FileAction, FileTouch, HarnessFormat, ParseOptions, ParseStats, Role, Session, SourceRef, StoreEnv};

deja_core::conformance!(PiebaldFormat);

fn fixture_home() -> (tempfile::TempDir, Vec<rusqlite::Connection>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let writers = materialize_home(&deja_core::fixture_home!(), tmp.path()).expect("fixture home");
    (tmp, writers)
}

fn read(src: &SourceRef, opts: &ParseOptions) -> (Vec<Session>, ParseStats) {
    let mut out = Vec::new();
    let stats = PiebaldFormat.parse(src, opts, &mut out).expect("the fixture parses");
    (out, stats)
}

fn source(home: &Path) -> SourceRef {
    let found = PiebaldFormat.discover(&StoreEnv::with_home(home));
    assert_eq!(found.sources.len(), 1, "one database");
    found.sources[0].clone()
}

#[test]
fn the_tool_chat_reads_with_roles_work_and_branches() {
    let (home, _w) = fixture_home();
    let (sessions, stats) = read(&source(home.path()), &ParseOptions::default());
    assert_eq!(stats.skipped, 1, "the tool part without its row: {:?}", stats.problems);
    let mut ids: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, vec!["12", "13", "14"], "deleted and empty chats are not sessions");

    let main = sessions.iter().find(|s| s.id == "12").unwrap();
    assert_eq!((main.project.as_deref(), main.title.as_deref()), (Some("/src/net"), Some("Retry logic")));
    assert_eq!((main.turns[0].role, main.turns[0].text.as_str()), (Role::User, "add retries to fetch()"), "nodes in node_index order");
    assert_eq!(main.turns[0].node.as_ref().map(|n| n.id.as_str()), Some("100"));
    assert!(!main.turns.iter().any(|t| t.role == Role::Reasoning), "thinking is off by default");
    assert!(!main.turns.iter().any(|t| t.text.contains("regenerated")), "an abandoned branch is not read");
    assert!(!main.turns.iter().any(|t| t.text.contains("You are Piebald")), "system messages are dropped");

    let cmds: Vec<_> = main.turns.iter().filter_map(|t| Some((t.tool.as_ref()?.command.as_deref()?, t))).collect();
    assert_eq!(cmds.iter().map(|c| c.0).collect::<Vec<_>>(), vec!["go test ./net", "go vet ./net", "go test -race ./net"]);
    assert_eq!(cmds[0].1.text, "ok", "the result is the call's text");
    assert!(cmds[1].1.tool.as_ref().unwrap().is_error && cmds[1].1.text.starts_with("exit status 1"), "tool_error is the failed output");
    assert!(cmds[2].1.text.is_empty(), "a running call has no output");

    let files: Vec<&FileTouch> = main.turns.iter().flat_map(|t| &t.files).collect();
    assert!(files.contains(&&FileTouch { path: "/src/net/net/fetch.go".into(), action: FileAction::Read }));
    assert!(files.contains(&&FileTouch { path: "/src/net/net/fetch.go".into(), action: FileAction::Edit }));
    assert!(files.contains(&&FileTouch { path: "/src/net/net/retry.go".into(), action: FileAction::Write }));
    let edit = main.turns.iter().find_map(|t| t.edit.as_ref().filter(|e| !e.old.is_empty())).unwrap();
    assert_eq!(
        edit,
        &Edit {
            path: "/src/net/net/fetch.go".into(),
            old: "return get(u)".into(),
            new: Some("return retry(3, func() error { return get(u) })".into())
        }
    );
    assert_eq!(main.turns.last().unwrap().text, "Retries are in; go vet flags the unreachable return.");
}

#[test]
fn sub_agent_and_project_fallbacks() {
    let (home, _w) = fixture_home();
    let (sessions, _) = read(&source(home.path()), &ParseOptions::default());
    let kid = sessions.iter().find(|s| s.id == "13").unwrap();
    assert_eq!((kid.parent.as_deref(), kid.kind.as_deref(), kid.project.as_deref()), (Some("12"), Some("subagent"), Some("/src/net-wt")));
    let billing = sessions.iter().find(|s| s.id == "14").unwrap();
    assert_eq!(billing.project.as_deref(), Some("/src/billing"), "projects.directory when the chat has none");
    assert!(billing.started.is_some() && billing.updated > billing.started);
}

#[test]
fn reasoning_comes_only_on_request() {
    let (home, _w) = fixture_home();
    let (sessions, _) = read(&source(home.path()), &ParseOptions { include_reasoning: true });
    let main = sessions.iter().find(|s| s.id == "12").unwrap();
    assert!(main.turns.iter().any(|t| t.role == Role::Reasoning && t.text == "Backoff belongs in fetch itself."));
}

#[test]
fn the_db_variable_names_the_database_file() {
    let (home, _w) = fixture_home();
    let db = home.path().join(".local/share/piebald/app.db");
    let empty = tempfile::tempdir().unwrap();
    let found = PiebaldFormat.discover(&StoreEnv::with_home(empty.path()).set("DEJA_PIEBALD_DB", db.display().to_string()));
    assert_eq!(found.sources.len(), 1);
    assert_eq!(found.sources[0].path, db);
    assert_eq!(found.sources[0].parts, vec![home.path().join(".local/share/piebald/app.db-wal")]);
}

#[test]
fn a_grown_chat_is_the_only_one_re_read() {
    let (home, writers) = fixture_home();
    let mut src = source(home.path());
    let (all, stats) = read(&src, &ParseOptions::default());
    assert_eq!(all.len(), 3);
    src.cursor = stats.cursor.clone();
    assert!(src.cursor.is_some(), "a cursor is returned");
    let (again, stats2) = read(&src, &ParseOptions::default());
    assert!(again.is_empty(), "nothing changed: {:?}", again.iter().map(|s| &s.id).collect::<Vec<_>>());
    assert_eq!(stats2.cursor, stats.cursor);

    // A new prompt in chat 14, stamped with an old clock: the message id still finds it.
    writers[0]
        .execute_batch(
            "INSERT INTO messages VALUES (142, 14, 141, 1, 'user', NULL, '2026-05-02 10:01:00', '2026-05-02 10:01:00', NULL, NULL, NULL, NULL, NULL, 'done', NULL, NULL);
             INSERT INTO message_parts VALUES (1420, 142, 'text', 0);
             INSERT INTO message_part_text VALUES (1420, 0);
             INSERT INTO message_content_nodes VALUES (5420, 1420, 0);
             INSERT INTO message_node_text VALUES (5420, 'and the tax lines?');",
        )
        .expect("grow a chat");
    let (grown, stats3) = read(&src, &ParseOptions::default());
    assert_eq!(grown.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), vec!["14"]);
    assert_eq!(grown[0].turns.len(), 3, "re-read whole");
    assert_eq!(grown[0].turns[2].text, "and the tax lines?");
    src.cursor = stats3.cursor;
    assert!(read(&src, &ParseOptions::default()).0.is_empty());

    src.cursor = Some("garbage".into());
    assert_eq!(read(&src, &ParseOptions::default()).0.len(), 3, "an unknown cursor means a full read");
}

//! Every test of deja-adapter-omnigent, in one test binary: the conformance kit (snapshots
//! of the fixture database, arbitrary bytes, mutated fixtures, store overrides), then the
//! rules that matter most for Omnigent: roles, work, BLOB ids, secrets never read, the
//! older schema generations, and the row cursor.

use std::path::Path;

use deja_adapter_omnigent::OmnigentFormat;
use deja_core::testkit::{materialize_home, sqlite_fixture};
use deja_core::{Edit, FileAction, FileTouch, HarnessFormat, ParseOptions, ParseStats, Role, Session, SourceRef, StoreEnv};

deja_core::conformance!(OmnigentFormat);

const MAIN: &str = "0190a1b2-c3d4-7e8f-9a0b-1c2d3e4f5061";

fn fixture_home() -> (tempfile::TempDir, Vec<rusqlite::Connection>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let writers = materialize_home(&deja_core::fixture_home!(), tmp.path()).expect("fixture home");
    (tmp, writers)
}

fn read(src: &SourceRef, opts: &ParseOptions) -> (Vec<Session>, ParseStats) {
    let mut out = Vec::new();
    let stats = OmnigentFormat.parse(src, opts, &mut out).expect("the fixture parses");
    (out, stats)
}

fn source(home: &Path) -> SourceRef {
    let found = OmnigentFormat.discover(&StoreEnv::with_home(home));
    assert_eq!(found.sources.len(), 1, "one database");
    found.sources[0].clone()
}

#[test]
fn the_tool_conversation_reads_with_uuid_ids_roles_and_work() {
    let (home, _w) = fixture_home();
    let (sessions, stats) = read(&source(home.path()), &ParseOptions::default());
    assert_eq!(stats.skipped, 1, "the torn item only: {:?}", stats.problems);
    let main = sessions.iter().find(|s| s.id == MAIN).expect("the BLOB id rendered as a UUID");
    assert_eq!((main.project.as_deref(), main.title.as_deref()), (Some("/work/app"), Some("Which branch")));
    assert_eq!(main.started.map(|t| t.0), Some(1_777_626_000_000), "epoch seconds");
    assert_eq!((main.turns[0].role, main.turns[0].text.as_str()), (Role::User, "what branch am I on?"));
    assert!(!main.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning is off by default");

    let shell = &main.turns[1];
    let tool = shell.tool.as_ref().unwrap();
    assert_eq!(
        (tool.name.as_str(), tool.command.as_deref(), shell.text.as_str()),
        ("sys_os_shell", Some("git branch --show-current"), "main")
    );
    let files: Vec<&FileTouch> = main.turns.iter().flat_map(|t| &t.files).collect();
    assert!(
        files.contains(&&FileTouch { path: "/work/app/README.md".into(), action: FileAction::Read }),
        "relative path under the workspace"
    );
    let edit = main.turns.iter().find_map(|t| t.edit.as_ref()).unwrap();
    assert_eq!(edit, &Edit { path: "/work/app/README.md".into(), old: "# app".into(), new: Some("# app (main)".into()) });
    let typed = main.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "terminal")).expect("terminal command");
    assert_eq!(typed.tool.as_ref().unwrap().command.as_deref(), Some("git log --oneline -3"));
    assert!(!main.turns.iter().any(|t| t.text.contains("provider timeout") || t.text.contains("/clear")), "error and slash items skipped");
}

#[test]
fn secrets_in_the_same_database_never_come_out() {
    let (home, _w) = fixture_home();
    for opts in [ParseOptions::default(), ParseOptions { include_reasoning: true }] {
        let (sessions, stats) = read(&source(home.path()), &opts);
        let all = serde_json::to_string(&sessions).unwrap() + &format!("{stats:?}");
        assert!(!all.contains("SECRET"), "a secret leaked into the parse");
    }
}

#[test]
fn the_sub_agent_and_the_overrides_workspace() {
    let (home, _w) = fixture_home();
    let (sessions, _) = read(&source(home.path()), &ParseOptions::default());
    let kid = sessions.iter().find(|s| s.id.ends_with("5062")).unwrap();
    assert_eq!((kid.parent.as_deref(), kid.kind.as_deref(), kid.agent.as_deref()), (Some(MAIN), Some("subagent"), Some("ci-watcher")));
    let queue = sessions.iter().find(|s| s.id.ends_with("5063")).unwrap();
    assert_eq!((queue.project.as_deref(), queue.parent.as_deref()), (Some("/work/queue"), None));
}

#[test]
fn reasoning_comes_only_on_request() {
    let (home, _w) = fixture_home();
    let (sessions, _) = read(&source(home.path()), &ParseOptions { include_reasoning: true });
    let main = sessions.iter().find(|s| s.id == MAIN).unwrap();
    assert!(main.turns.iter().any(|t| t.role == Role::Reasoning && t.text == "A shell call answers this."));
}

#[test]
fn the_text_id_generation_reads_and_the_single_table_one_is_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let older = tmp.path().join("older.db");
    let _w = sqlite_fixture(
        &older,
        "CREATE TABLE conversations(workspace_id TEXT, id TEXT, root_conversation_id TEXT, parent_conversation_id TEXT, title TEXT,
           created_at INTEGER, updated_at INTEGER);
         CREATE TABLE omnigent_conversation_metadata(workspace_id TEXT, id TEXT, kind TEXT, sub_agent_name TEXT, workspace TEXT,
           git_branch TEXT, session_usage TEXT);
         CREATE TABLE agent_configuration(model_override TEXT);
         CREATE TABLE conversation_items(workspace_id TEXT, conversation_id TEXT, position INTEGER, type TEXT, data TEXT, search_text TEXT);
         INSERT INTO conversations VALUES ('default', 'conv_1', 'conv_1', NULL, 'Old ids', 1777626000, 1777626010);
         INSERT INTO omnigent_conversation_metadata VALUES ('default', 'conv_1', 'chat', NULL, '/work/old', NULL, NULL);
         INSERT INTO conversation_items VALUES ('default', 'conv_1', 2, 'message',
           '{\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"Still readable.\"}]}', NULL);
         INSERT INTO conversation_items VALUES ('default', 'conv_1', 1, 'message',
           '{\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"old schema?\"}]}', NULL);",
    )
    .unwrap();
    let (sessions, _) = read(&SourceRef::file(&older), &ParseOptions::default());
    assert_eq!(sessions.len(), 1);
    assert_eq!((sessions[0].id.as_str(), sessions[0].project.as_deref()), ("conv_1", Some("/work/old")));
    assert_eq!(
        sessions[0].turns.iter().map(|t| t.text.as_str()).collect::<Vec<_>>(),
        vec!["old schema?", "Still readable."],
        "by position"
    );

    let oldest = tmp.path().join("oldest.db");
    let _w2 = sqlite_fixture(
        &oldest,
        "CREATE TABLE conversations(id TEXT, title TEXT, messages TEXT); INSERT INTO conversations VALUES ('x', 't', '[]');",
    )
    .unwrap();
    let (none, stats) = read(&SourceRef::file(&oldest), &ParseOptions::default());
    assert!(none.is_empty() && stats.problems[0].contains("single-table"), "{:?}", stats.problems);
}

#[test]
fn the_db_variable_names_the_database_file() {
    let (home, _w) = fixture_home();
    let db = home.path().join(".omnigent/chat.db");
    let empty = tempfile::tempdir().unwrap();
    let found = OmnigentFormat.discover(&StoreEnv::with_home(empty.path()).set("DEJA_OMNIGENT_DB", db.display().to_string()));
    assert_eq!(found.sources.len(), 1);
    assert_eq!(
        (found.sources[0].path.clone(), found.sources[0].parts.clone()),
        (db.clone(), vec![home.path().join(".omnigent/chat.db-wal")])
    );
}

#[test]
fn a_grown_conversation_is_the_only_one_re_read() {
    let (home, writers) = fixture_home();
    let mut src = source(home.path());
    let (all, stats) = read(&src, &ParseOptions::default());
    assert_eq!(all.len(), 3);
    src.cursor = stats.cursor.clone();
    assert!(src.cursor.is_some());
    let (again, stats2) = read(&src, &ParseOptions::default());
    assert!(again.is_empty(), "nothing changed: {:?}", again.iter().map(|s| &s.id).collect::<Vec<_>>());
    assert_eq!(stats2.cursor, stats.cursor);

    writers[0]
        .execute_batch(
            "INSERT INTO conversation_items VALUES (X'00000000000000000000000000000001', X'0190a1b2c3d47e8f9a0b1c2d3e4f5062', 3, 'message',
               '{\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"and on the release branch?\"}]}', NULL);",
        )
        .expect("grow a conversation");
    let (grown, stats3) = read(&src, &ParseOptions::default());
    assert_eq!(grown.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), vec!["0190a1b2-c3d4-7e8f-9a0b-1c2d3e4f5062"]);
    assert_eq!((grown[0].turns.len(), grown[0].turns[2].text.as_str()), (3, "and on the release branch?"), "re-read whole");
    src.cursor = stats3.cursor;
    assert!(read(&src, &ParseOptions::default()).0.is_empty());

    src.cursor = Some("garbage".into());
    assert_eq!(read(&src, &ParseOptions::default()).0.len(), 3, "an unknown cursor means a full read");
}

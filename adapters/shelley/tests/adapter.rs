//! Every test of deja-adapter-shelley, in one test binary: the conformance kit (snapshots
//! of the fixture database, arbitrary bytes, mutated fixtures, store overrides), then the
//! rules that matter most for Shelley, and the row cursor.

use std::path::Path;

use deja_adapter_shelley::ShelleyFormat;
use deja_core::testkit::materialize_home;
use deja_core::{Edit, FileAction, FileTouch, HarnessFormat, ParseOptions, ParseStats, Role, Session, SourceRef, StoreEnv};

deja_core::conformance!(ShelleyFormat);

fn fixture_home() -> (tempfile::TempDir, Vec<rusqlite::Connection>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let writers = materialize_home(&deja_core::fixture_home!(), tmp.path()).expect("fixture home");
    (tmp, writers)
}

fn read(src: &SourceRef, opts: &ParseOptions) -> (Vec<Session>, ParseStats) {
    let mut out = Vec::new();
    let stats = ShelleyFormat.parse(src, opts, &mut out).expect("the fixture parses");
    (out, stats)
}

fn source(home: &Path) -> SourceRef {
    let found = ShelleyFormat.discover(&StoreEnv::with_home(home));
    assert_eq!(found.sources.len(), 1, "one database");
    found.sources[0].clone()
}

#[test]
fn the_tool_session_reads_with_roles_and_work() {
    let (home, _w) = fixture_home();
    let (sessions, stats) = read(&source(home.path()), &ParseOptions::default());
    assert_eq!(stats.skipped, 1, "the torn payload only: {:?}", stats.problems);
    let main = sessions.iter().find(|s| s.id == "cnv-deploy").unwrap();
    assert_eq!((main.project.as_deref(), main.title.as_deref(), main.kind.as_deref()), (Some("/srv/site"), Some("deploy-preview"), None));
    assert_eq!((main.turns[0].role, main.turns[0].text.as_str()), (Role::User, "deploy the preview"), "system and gitinfo rows skipped");
    assert!(!main.turns.iter().any(|t| t.role == Role::Reasoning), "thinking is off by default");
    assert!(!main.turns.iter().any(|t| t.text.contains("rate limited")), "error rows are bookkeeping");

    let bash = main.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "bash")).unwrap();
    assert_eq!(bash.tool.as_ref().unwrap().command.as_deref(), Some("./deploy.sh preview"));
    assert_eq!(bash.text, "deployed to preview-42", "the nested result text is folded into the call");
    let files: Vec<&FileTouch> = main.turns.iter().flat_map(|t| &t.files).collect();
    assert!(files.contains(&&FileTouch { path: "/srv/site/deploy.sh".into(), action: FileAction::Read }));
    assert!(files.contains(&&FileTouch { path: "/srv/site/NOTES.md".into(), action: FileAction::Write }));
    let edits: Vec<&Edit> = main.turns.iter().filter_map(|t| t.edit.as_ref()).collect();
    assert_eq!(
        edits,
        vec![&Edit { path: "/srv/site/deploy.sh".into(), old: "ENV=staging".into(), new: Some("ENV=${1:-staging}".into()) }],
        "the failed write keeps its file but no edit"
    );
    let failed = main.turns.iter().find(|t| t.text == "permission denied").unwrap();
    assert!(failed.tool.as_ref().unwrap().is_error);
    let search = main.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "web_search")).unwrap();
    assert!(search.text.is_empty(), "web-search result items carry no text");
    assert_eq!(main.turns.last().unwrap().text, "Deployed to preview-42; NOTES.md could not be written.");
}

#[test]
fn the_spawned_child_has_its_parent_and_its_user_data_prompt() {
    let (home, _w) = fixture_home();
    let (sessions, _) = read(&source(home.path()), &ParseOptions::default());
    let kid = sessions.iter().find(|s| s.id == "cnv-check").unwrap();
    assert_eq!((kid.parent.as_deref(), kid.kind.as_deref()), (Some("cnv-deploy"), Some("subagent")));
    assert_eq!((kid.turns[0].role, kid.turns[0].text.as_str()), (Role::User, "check the cache headers on preview-42"));
}

#[test]
fn reasoning_comes_only_on_request() {
    let (home, _w) = fixture_home();
    let (sessions, _) = read(&source(home.path()), &ParseOptions { include_reasoning: true });
    let main = sessions.iter().find(|s| s.id == "cnv-deploy").unwrap();
    assert!(main.turns.iter().any(|t| t.role == Role::Reasoning && t.text == "The deploy script takes an environment name."));
}

#[test]
fn the_db_variable_names_the_database_file() {
    let (home, _w) = fixture_home();
    let db = home.path().join(".config/shelley/shelley.db");
    let empty = tempfile::tempdir().unwrap();
    let found = ShelleyFormat.discover(&StoreEnv::with_home(empty.path()).set("DEJA_SHELLEY_DB", db.display().to_string()));
    assert_eq!(found.sources.len(), 1);
    assert_eq!(
        (found.sources[0].path.clone(), found.sources[0].parts.clone()),
        (db.clone(), vec![home.path().join(".config/shelley/shelley.db-wal")])
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
            "INSERT INTO messages VALUES ('d03', 'cnv-dns', 3, 'user', '{\"Role\":0,\"Content\":[{\"Type\":2,\"Text\":\"and for production?\"}]}', \
             NULL, NULL, NULL, '2026-05-02 10:01:00', 0, 0);",
        )
        .expect("grow a conversation");
    let (grown, stats3) = read(&src, &ParseOptions::default());
    assert_eq!(grown.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), vec!["cnv-dns"]);
    assert_eq!((grown[0].turns.len(), grown[0].turns[2].text.as_str()), (3, "and for production?"), "re-read whole");

    // A same-second rewrite of a message in place: the row state, not the clock, sees it.
    src.cursor = stats3.cursor;
    writers[0]
        .execute_batch(
            "UPDATE messages SET llm_data = '{\"Role\":1,\"Content\":[{\"Type\":2,\"Text\":\"Sixty seconds while previews churn; an hour after.\"}]}' \
             WHERE message_id = 'd02';",
        )
        .expect("rewrite a message");
    let (rewritten, _) = read(&src, &ParseOptions::default());
    assert_eq!(rewritten.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), vec!["cnv-dns"]);

    src.cursor = Some("garbage".into());
    assert_eq!(read(&src, &ParseOptions::default()).0.len(), 3, "an unknown cursor means a full read");
}

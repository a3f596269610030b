//! Every test of deja-adapter-goose, in one test binary: the conformance kit (snapshots of
//! the legacy JSONL files and the database, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for Goose and its row cursor.

use std::path::Path;

use deja_adapter_goose::GooseFormat;
use deja_core::testkit::materialize_home;
use deja_core::testkit::session;
use deja_core::{HarnessFormat, ParseOptions, Role, Session, SourceRef, StoreEnv, Timestamp};

deja_core::conformance!(
    GooseFormat,
    wires "XDG_CONFIG_HOME" => ".config"
);

mod hook;

fn fixture_home() -> (tempfile::TempDir, Vec<rusqlite::Connection>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let writers = materialize_home(&deja_core::fixture_home!(), tmp.path()).expect("fixture home");
    (tmp, writers)
}

fn parse_env(env: &StoreEnv) -> Vec<Session> {
    deja_core::testkit::read_all(&GooseFormat, env, &ParseOptions::default())
}

#[test]
fn legacy_files_give_roles_titles_and_projects() {
    let (tmp, _w) = fixture_home();
    let all = parse_env(&StoreEnv::with_home(tmp.path()));
    let s = session(&all, "20260301_2");
    assert_eq!((s.title.as_deref(), s.project.as_deref()), (Some("Pin the linter"), Some("/src/tools")));
    let turns: Vec<(Role, &str)> = s.turns.iter().map(|t| (t.role, t.text.as_str())).collect();
    assert_eq!(
        turns,
        vec![
            (Role::User, "ruff flags every import"),
            (Role::Assistant, "Let me look at the config."),
            (Role::ToolCall, "[tool.isort] profile = \"google\""),
            (Role::Assistant, "Your isort profile conflicts with ruff."),
        ],
        "the toolRequest is a call with its toolResponse folded in; the torn last line waits"
    );
    let call = s.turns[2].tool.as_ref().expect("a tool");
    assert_eq!((call.name.as_str(), call.command.as_deref()), ("developer__shell", Some("cat pyproject.toml")));
    assert_eq!(s.turns[0].time, Some(Timestamp(1_772_355_601_000)));
    let old = session(&all, "20250724_1");
    assert_eq!((old.title.as_deref(), old.project.as_deref()), (None, Some("goose")));
    assert_eq!(old.turns[0].text, "what does the nightly job do?");
    assert_eq!(old.turns.len(), 2, "the system row is skipped");
}

#[test]
fn the_database_skips_non_user_sessions() {
    let (tmp, _w) = fixture_home();
    let all = parse_env(&StoreEnv::with_home(tmp.path()));
    assert!(!all.iter().any(|s| s.id == "20260302_s"), "a sub-agent / recipe session is skipped");
    let s = session(&all, "20260302_1");
    assert_eq!((s.title.as_deref(), s.project.as_deref()), (Some("Cache warmup"), Some("/src/web")));
    assert_eq!(s.turns.iter().map(|t| t.role).collect::<Vec<_>>(), vec![Role::User, Role::Assistant, Role::ToolCall]);
    let keys = session(&all, "20260303_1");
    assert_eq!(keys.turns[0].text, "rotate the API keys before Friday", "content that is not JSON is the text");
    assert_eq!(keys.turns[1].time, keys.updated, "no created_timestamp: the session's updated time");
}

#[test]
fn goose_path_root_moves_the_data_directory() {
    let (tmp, _w) = fixture_home();
    let root = tmp.path().join("goose-root");
    let _moved =
        materialize_home(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/home/.local/share/goose"), &root.join("data"))
            .expect("moved store");
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let all = parse_env(&StoreEnv::with_home(&empty).set("GOOSE_PATH_ROOT", root.display().to_string()));
    let mut ids: Vec<&str> = all.iter().map(|s| s.id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, vec!["20250724_1", "20260301_2", "20260302_1", "20260303_1", "20261201_1"]);
}

#[test]
fn the_cursor_re_reads_only_a_grown_session() {
    let (tmp, writers) = fixture_home();
    let src = GooseFormat
        .discover(&StoreEnv::with_home(tmp.path()))
        .sources
        .into_iter()
        .find(|s| s.path.ends_with("sessions.db"))
        .expect("the database");
    let mut first: Vec<Session> = Vec::new();
    let cursor = GooseFormat.parse(&src, &ParseOptions::default(), &mut first).unwrap().cursor.expect("a cursor");
    assert_eq!(first.len(), 3);
    let again = SourceRef { cursor: Some(cursor), ..src };
    let mut none: Vec<Session> = Vec::new();
    GooseFormat.parse(&again, &ParseOptions::default(), &mut none).unwrap();
    assert!(none.is_empty(), "nothing changed, nothing re-emitted");
    writers[0]
        .execute(
            "INSERT INTO messages (id, message_id, session_id, role, content_json, created_timestamp) VALUES (14,'u3','20260302_1','user','[{\"type\":\"text\",\"text\":\"and purge the old ones\"}]',1772445700)",
            [],
        )
        .unwrap();
    let mut grown: Vec<Session> = Vec::new();
    GooseFormat.parse(&again, &ParseOptions::default(), &mut grown).unwrap();
    assert_eq!(grown.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), vec!["20260302_1"]);
    assert_eq!(grown[0].turns.len(), 4, "the grown session is re-read whole");
}

#[test]
fn the_db_variable_names_the_database() {
    let (tmp, _w) = fixture_home();
    let db = tmp.path().join(".local/share/goose/sessions/sessions.db");
    let moved = tmp.path().join("copy/store.db");
    std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
    std::fs::copy(&db, &moved).unwrap();
    std::fs::copy(db.with_extension("db-wal"), moved.with_extension("db-wal")).unwrap();
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let found = GooseFormat.discover(&StoreEnv::with_home(&empty).set("DEJA_GOOSE_DB", moved.display().to_string()));
    assert_eq!(found.sources.iter().map(|s| s.path.clone()).collect::<Vec<_>>(), vec![moved.clone()]);
    assert_eq!(found.sources[0].parts, vec![moved.with_extension("db-wal")], "the WAL is part of the source");
    let mut out: Vec<Session> = Vec::new();
    GooseFormat.parse(&found.sources[0], &ParseOptions::default(), &mut out).unwrap();
    assert_eq!(out.len(), 3, "the WAL's rows came with the copy");
}

#[test]
fn release_1_37_0_tool_blocks_and_agent_only_rows() {
    let (tmp, _w) = fixture_home();
    let all = parse_env(&StoreEnv::with_home(tmp.path()));
    let s = session(&all, "20261201_1");
    let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
    assert_eq!(roles, vec![Role::User, Role::ToolCall, Role::ToolCall, Role::Assistant], "the agent-only summary row is not speech");
    let shell = s.turns[1].tool.as_ref().expect("shell");
    assert_eq!((shell.command.as_deref(), shell.exit.clone()), (Some("cargo test cart"), Some(deja_core::ExitStatus::Code(101))));
    assert!(shell.is_error, "a non-zero exit_code is a failure");
    assert_eq!(s.turns[1].text, "1 failed: refresh_keeps_cart");
    assert_eq!(s.turns[2].files.first().map(|f| f.path.as_str()), Some("/src/shop/cart.rs"));
}

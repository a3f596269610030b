//! Every test of deja-adapter-windsurf, in one test binary: the conformance kit (snapshots
//! of the fixture databases, arbitrary bytes, mutated fixtures, store overrides), then
//! the rules that matter most: both chat shapes, the project, and that only workspace
//! databases are read.

use std::path::Path;

use deja_adapter_windsurf::WindsurfFormat;
use deja_core::testkit::materialize_home;
use deja_core::{HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(WindsurfFormat);

fn sessions_in(dir: &str, env: impl Fn(&Path) -> StoreEnv) -> (tempfile::TempDir, Vec<Session>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let writers = materialize_home(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(dir), tmp.path()).expect("fixture");
    let out = deja_core::testkit::read_all(&WindsurfFormat, &env(tmp.path()), &ParseOptions::default());
    drop(writers);
    (tmp, out)
}

#[test]
fn a_chat_session_value_reads_like_copilot_chat_with_the_workspace_project() {
    let (_home, sessions) = sessions_in("home", |h| StoreEnv::with_home(h));
    assert_eq!(sessions.len(), 1, "the torn value and the null one yield nothing");
    let s = &sessions[0];
    assert_eq!((s.harness.as_str(), s.id.as_str(), s.title.as_deref()), ("windsurf", "ws-chat-1", Some("Upload retries")));
    assert_eq!(s.project.as_deref(), Some("/home/dev/src/uploader"));
    assert_eq!(s.source.path.file_name().and_then(|n| n.to_str()), Some("state.vscdb"), "the database is the source, not a staging file");
    assert_eq!((s.turns[0].role, s.turns[0].text.as_str()), (Role::User, "add a retry to the upload client"));
    let shell = s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "run_in_terminal")).expect("the terminal call");
    assert_eq!(shell.tool.as_ref().unwrap().command.as_deref(), Some("go test ./upload"));
    assert!(s.turns.iter().any(|t| t.role == Role::Assistant && t.text == "Capped at 30 seconds."));
}

#[test]
fn a_tab_list_maps_bubbles_joins_answers_and_takes_the_database_mtime() {
    let before = deja_core::Timestamp::now();
    let (_home, sessions) = sessions_in("tabs", |h| StoreEnv::with_home(h).set("DEJA_WINDSURF_ROOT", h.join("User").display().to_string()));
    assert_eq!(sessions.len(), 2);
    let s = sessions.iter().find(|s| s.id == "tab-1").unwrap();
    assert_eq!((s.title.as_deref(), s.project.as_deref()), (Some("Flaky upload test"), Some("/home/dev/src/uploader")));
    let turns: Vec<(Role, &str)> = s.turns.iter().map(|t| (t.role, t.text.as_str())).collect();
    assert_eq!(
        turns,
        vec![
            (Role::User, "upload_test fails on CI only"),
            (Role::Assistant, "CI runs out of temp space;\n\nuse t.TempDir()."),
            (Role::User, "and locally?"),
            (Role::Assistant, "Locally /tmp is large enough.")
        ]
    );
    let t = s.turns[0].time.expect("the database's mtime");
    assert!(t.0 >= before.0 - 5_000 && t.0 <= deja_core::Timestamp::now().0 + 5_000, "{t:?}");
    let unnamed = sessions.iter().find(|s| s.id != "tab-1").unwrap();
    assert_eq!((unnamed.id.as_str(), unnamed.title.as_deref()), ("77aa88bb99cc-1", None), "no tabId: the workspace hash and index");
}

#[test]
fn only_workspace_databases_are_sources() {
    let tmp = tempfile::tempdir().unwrap();
    let _w = materialize_home(&deja_core::fixture_home!(), tmp.path()).unwrap();
    let global = tmp.path().join(".config/Windsurf/User/globalStorage");
    std::fs::create_dir_all(&global).unwrap();
    std::fs::write(global.join("state.vscdb"), b"not read").unwrap();
    let found = WindsurfFormat.discover(&StoreEnv::with_home(tmp.path()));
    assert_eq!(found.sources.len(), 2);
    assert!(found.sources.iter().all(|s| s.path.parent().and_then(|p| p.parent()).is_some_and(|p| p.ends_with("workspaceStorage"))));
    assert!(found.sources.iter().all(|s| s.parts.len() == 2), "the WAL and workspace.json are parts");
    assert!(WindsurfFormat.info().name.contains("Cascade not readable"), "the gap is said plainly");
}

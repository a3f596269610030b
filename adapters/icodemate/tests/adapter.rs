//! Every test of deja-adapter-icodemate, in one test binary: the conformance kit (snapshots of
//! the fixture database, arbitrary bytes, mutated fixtures, store overrides, the
//! synthetic round trip), then the rules that matter most for this opencode fork.

use std::path::Path;

use deja_adapter_icodemate::FORMAT;
use deja_core::testkit::materialize_home;
use deja_core::{Edit, ExitStatus, FileAction, FileTouch, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    FORMAT,
    switch "DEJA_INCLUDE_SUBAGENTS"
);

fn sessions_with(env: &dyn Fn(&Path) -> StoreEnv) -> Vec<Session> {
    deja_conformance_kit().sessions(env, &ParseOptions::default())
}

#[test]
fn the_session_reads_as_opencode_under_its_own_id() {
    let sessions = sessions_with(&|h| StoreEnv::with_home(h));
    let main = sessions.iter().find(|s| s.id == "ses_icm01").expect("main session");
    assert_eq!(main.harness, "icodemate");
    assert_eq!((main.project.as_deref(), main.title.as_deref()), (Some("/home/dev/inventory"), None), "a placeholder title is no title");
    assert_eq!((main.turns[0].role, main.turns[0].text.as_str()), (Role::User, "stock count goes negative after a refund"));
    assert!(!main.turns.iter().any(|t| t.text.starts_with("Called the Read tool")), "synthetic parts are not speech");
    assert!(!main.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning is off by default");
    let bash = main.turns.iter().find_map(|t| t.tool.as_ref().filter(|x| x.name == "bash")).expect("bash call");
    assert_eq!((bash.command.as_deref(), bash.exit.clone()), (Some("go test ./stock/..."), Some(ExitStatus::Code(1))));
    let files: Vec<&FileTouch> = main.turns.iter().flat_map(|t| &t.files).collect();
    assert!(files.contains(&&FileTouch { path: "/home/dev/inventory/stock/refund.go".into(), action: FileAction::Read }));
    assert!(files.contains(&&FileTouch { path: "/home/dev/inventory/NOTES.md".into(), action: FileAction::Write }));
    let edit = main.turns.iter().find_map(|t| t.edit.as_ref()).expect("edit");
    assert_eq!(
        edit,
        &Edit { path: "/home/dev/inventory/stock/refund.go".into(), old: "qty -= line.Qty".into(), new: Some("qty += line.Qty".into()) }
    );
    assert!(main
        .turns
        .iter()
        .any(|t| t.role == Role::Assistant && t.text == "Refunds now add the quantity back instead of subtracting it twice."));
    assert!(main
        .turns
        .iter()
        .any(|t| t.role == Role::Summary && t.text == "Summary: refunds subtracted stock twice; they now restore it."));

    let kid = sessions.iter().find(|s| s.id == "ses_icm01_kid").expect("sub-agent session");
    assert_eq!((kid.parent.as_deref(), kid.kind.as_deref()), (Some("ses_icm01"), Some("subagent")));
    let top = sessions_with(&|h| StoreEnv::with_home(h).set("DEJA_INCLUDE_SUBAGENTS", "0"));
    assert_eq!(top.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), vec!["ses_icm01"]);
}

#[test]
fn the_db_variable_names_the_database_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let _writers = materialize_home(&deja_core::fixture_home!(), tmp.path()).expect("fixture home");
    let db = tmp.path().join(".local/share/icodemate/icodemate.db");
    let moved = tmp.path().join("copy/store.db");
    std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
    std::fs::copy(&db, &moved).unwrap();
    std::fs::copy(db.with_extension("db-wal"), moved.with_extension("db-wal")).unwrap();
    let empty = tmp.path().join("empty-home");
    std::fs::create_dir_all(&empty).unwrap();
    let found = FORMAT.discover(&StoreEnv::with_home(&empty).set("DEJA_ICODEMATE_DB", moved.display().to_string()));
    assert_eq!(found.sources.iter().map(|s| s.path.clone()).collect::<Vec<_>>(), vec![moved]);
    let mut out: Vec<Session> = Vec::new();
    FORMAT.parse(&found.sources[0], &ParseOptions::default(), &mut out).unwrap();
    assert_eq!(out.len(), 2);
}

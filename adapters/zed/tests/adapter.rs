//! Every test of deja-adapter-zed, in one test binary: the conformance kit (snapshot of the
//! fixture database, arbitrary bytes, mutated fixtures, store overrides), then the rules
//! that matter most for Zed and its cursor.

use std::path::Path;

use deja_adapter_zed::ZedFormat;
use deja_core::testkit::materialize_home;
use deja_core::testkit::session;
use deja_core::{FileAction, FileTouch, HarnessFormat, ParseOptions, Role, Session, SourceRef, StoreEnv, Timestamp};

deja_core::conformance!(
    ZedFormat,
    // The settings file `deja install` would edit: not a store location.
    switch "DEJA_ZED_CONFIG",
    wires "XDG_CONFIG_HOME" => ".config"
);

fn fixture_home() -> (tempfile::TempDir, Vec<rusqlite::Connection>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let writers = materialize_home(&deja_core::fixture_home!(), tmp.path()).expect("fixture home");
    (tmp, writers)
}

fn parse_all(home: &Path, opts: &ParseOptions) -> Vec<Session> {
    deja_core::testkit::read_all(&ZedFormat, &StoreEnv::with_home(home), opts)
}

#[test]
fn the_compressed_thread_reads_with_roles_commands_and_files() {
    let (tmp, _w) = fixture_home();
    let all = parse_all(tmp.path(), &ParseOptions::default());
    assert_eq!(all.len(), 3, "the corrupt and the unknown-encoding rows are skipped");
    let s = session(&all, "th-9");
    assert_eq!((s.title.as_deref(), s.project.as_deref()), (Some("flaky queue test"), Some("/src/queue")));
    assert_eq!((s.turns[0].role, s.turns[0].text.as_str()), (Role::User, "why does retry_test flake?\nfunc retry() {…}"));
    let start = Some(Timestamp::parse_str("2026-08-01T10:00:00Z").unwrap());
    assert!(s.turns.iter().all(|t| t.time == start), "every turn takes the thread's start");
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning is off by default");
    assert_eq!(s.turns[1].text, "Wakeups collide.");
    let terminal = s.turns.iter().find_map(|t| t.tool.as_ref().filter(|x| x.name == "terminal")).unwrap();
    assert_eq!((terminal.command.as_deref(), terminal.exit.clone()), (Some("go test ./queue/..."), None), "Zed keeps no exit status");
    let files: Vec<&FileTouch> = s.turns.iter().flat_map(|t| &t.files).collect();
    assert!(files.contains(&&FileTouch { path: "/src/queue/retry.go".into(), action: FileAction::Read }));
    assert!(files.contains(&&FileTouch { path: "/src/queue/retry.go".into(), action: FileAction::Edit }));
    assert!(files.contains(&&FileTouch { path: "/src/queue/old_test.go".into(), action: FileAction::Delete }));
    assert!(files.contains(&&FileTouch { path: "/src/queue/retry_test.go".into(), action: FileAction::Write }));
    assert!(s.turns.iter().all(|t| t.edit.is_none()), "no old text, no edit span");
}

#[test]
fn sub_agents_folder_paths_and_legacy_rows() {
    let (tmp, _w) = fixture_home();
    let all = parse_all(tmp.path(), &ParseOptions::default());
    let kid = session(&all, "th-10");
    assert_eq!((kid.parent.as_deref(), kid.project.as_deref(), kid.title.as_deref()), (Some("th-9"), Some("/src/site"), Some("docs")));
    let old = session(&all, "th-old");
    assert_eq!(old.title.as_deref(), Some("old thread"));
    assert_eq!(old.turns.iter().map(|t| t.role).collect::<Vec<_>>(), vec![Role::User, Role::Assistant], "system skipped");
}

#[test]
fn reasoning_comes_only_on_request() {
    let (tmp, _w) = fixture_home();
    let all = parse_all(tmp.path(), &ParseOptions { include_reasoning: true });
    assert!(session(&all, "th-9").turns.iter().any(|t| t.role == Role::Reasoning && t.text == "timing"));
    assert!(session(&all, "th-old").turns.iter().any(|t| t.role == Role::Reasoning && t.text == "check the loader"));
}

#[test]
fn the_cursor_re_reads_only_an_updated_thread() {
    let (tmp, writers) = fixture_home();
    let src = ZedFormat.discover(&StoreEnv::with_home(tmp.path())).sources.remove(0);
    let mut first: Vec<Session> = Vec::new();
    let cursor = ZedFormat.parse(&src, &ParseOptions::default(), &mut first).unwrap().cursor.expect("a cursor");
    let again = SourceRef { cursor: Some(cursor), ..src };
    let mut none: Vec<Session> = Vec::new();
    ZedFormat.parse(&again, &ParseOptions::default(), &mut none).unwrap();
    assert!(none.is_empty(), "nothing changed, nothing re-emitted");
    writers[0]
        .execute(
            "UPDATE threads SET updated_at = '2026-08-04T10:00:00+00:00', data_type = 'json', data = CAST('{\"version\":\"0.2.0\",\"summary\":\"old thread\",\"messages\":[{\"id\":2,\"role\":\"user\",\"segments\":[{\"type\":\"text\",\"text\":\"does this still load?\"}]},{\"id\":4,\"role\":\"user\",\"segments\":[{\"type\":\"text\",\"text\":\"and on Windows?\"}]}]}' AS BLOB) WHERE id = 'th-old'",
            [],
        )
        .unwrap();
    let mut grown: Vec<Session> = Vec::new();
    ZedFormat.parse(&again, &ParseOptions::default(), &mut grown).unwrap();
    assert_eq!(grown.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), vec!["th-old"]);
    assert_eq!(grown[0].turns.last().unwrap().text, "and on Windows?");
}

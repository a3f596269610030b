//! Every test of deja-adapter-warp, in one test binary: the conformance kit (snapshots of
//! the database in `tests/fixtures/home/`, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for Warp (prompts only) and its row cursor.

use std::path::Path;

use deja_adapter_warp::WarpFormat;
use deja_core::testkit::materialize_home;
use deja_core::testkit::session;
use deja_core::{HarnessFormat, ParseOptions, ParseStats, Role, Session, SourceRef, StoreEnv, Timestamp};

deja_core::conformance!(WarpFormat);

fn fixture_home() -> (tempfile::TempDir, Vec<rusqlite::Connection>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let writers = materialize_home(&deja_core::fixture_home!(), tmp.path()).expect("fixture home");
    (tmp, writers)
}

fn parse_all(home: &Path) -> Vec<Session> {
    deja_core::testkit::read_all(&WarpFormat, &StoreEnv::with_home(home), &ParseOptions::default())
}

#[test]
fn prompts_only_in_order_with_project_and_times() {
    let (tmp, _w) = fixture_home();
    let all = parse_all(tmp.path());
    let s = session(&all, "6b0f4c2e-1d1a-4c55-9e0b-7f1e2d3c4b5a");
    let turns: Vec<(Role, &str)> = s.turns.iter().map(|t| (t.role, t.text.as_str())).collect();
    assert_eq!(turns, vec![(Role::User, "why is cargo test hanging?"), (Role::User, "now add a timeout to the integration test")]);
    assert_eq!(s.project.as_deref(), Some("/src/app"));
    assert_eq!(s.started, Timestamp::parse_str("2026-04-07T08:55:40Z"), "zone-less times are UTC");
    assert_eq!(s.updated, Timestamp::parse_str("2026-04-07T08:56:10Z"), "last_modified_at is the latest time");
    assert!(all.iter().all(|s| s.turns.iter().all(|t| t.role == Role::User)), "Warp stores no replies or tool calls");
}

#[test]
fn empty_directories_garbage_inputs_and_promptless_conversations() {
    let (tmp, _w) = fixture_home();
    let all = parse_all(tmp.path());
    let s = session(&all, "0c1d2e3f-aaaa-4bbb-8ccc-000000000002");
    assert_eq!(s.project.as_deref(), Some("/home/dev/ops"), "the first non-empty working directory");
    assert_eq!(s.turns.len(), 2);
    assert!(!all.iter().any(|s| s.id == "0c1d2e3f-aaaa-4bbb-8ccc-000000000003"), "no prompt, no session");
}

#[test]
fn the_cursor_re_reads_only_a_grown_conversation() {
    let (tmp, writers) = fixture_home();
    let src = WarpFormat.discover(&StoreEnv::with_home(tmp.path())).sources.into_iter().next().expect("the store");
    let mut first: Vec<Session> = Vec::new();
    let stats: ParseStats = WarpFormat.parse(&src, &ParseOptions::default(), &mut first).unwrap();
    assert_eq!(first.len(), 2);
    let cursor = stats.cursor.expect("a cursor");

    let unchanged = SourceRef { cursor: Some(cursor), ..src.clone() };
    let mut none: Vec<Session> = Vec::new();
    WarpFormat.parse(&unchanged, &ParseOptions::default(), &mut none).unwrap();
    assert!(none.is_empty(), "nothing changed, nothing re-emitted");

    writers[0]
        .execute(
            "INSERT INTO ai_queries (exchange_id, conversation_id, start_ts, input, working_directory, output_status, model_id) \
             VALUES ('f4', '0c1d2e3f-aaaa-4bbb-8ccc-000000000002', '2026-04-08T09:40:00Z', \
             '[{\"Query\":{\"text\":\"close it\",\"context\":[]}}]', '/home/dev/ops', 'Completed', 'auto')",
            [],
        )
        .unwrap();
    let mut grown: Vec<Session> = Vec::new();
    WarpFormat.parse(&unchanged, &ParseOptions::default(), &mut grown).unwrap();
    assert_eq!(grown.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), vec!["0c1d2e3f-aaaa-4bbb-8ccc-000000000002"]);
    assert_eq!(grown[0].turns.len(), 3, "the grown conversation is re-read whole");
    assert_eq!(grown[0].turns[2].text, "close it");
}

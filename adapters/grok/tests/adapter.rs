//! Every test of deja-adapter-grok, in one test binary: the conformance kit (snapshots of
//! every source in `tests/fixtures/home/`, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most: chunk joins, tool events as outputs,
//! the sub-agent edge, project fallbacks, grok.db and its cursor, `DEJA_GROK_DB`.

use deja_adapter_grok::GrokFormat;
use deja_core::testkit::materialize_home;
use deja_core::testkit::session;
use deja_core::{HarnessFormat, ParseOptions, Role, Session, SourceRef, StoreEnv};

deja_core::conformance!(
    GrokFormat,
    wires "GROK_HOME" => ".grok"
);

fn fixture_home() -> (tempfile::TempDir, Vec<rusqlite::Connection>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let writers = materialize_home(&deja_core::fixture_home!(), tmp.path()).expect("fixture home");
    (tmp, writers)
}

fn parse_env(env: &StoreEnv, opts: &ParseOptions) -> Vec<Session> {
    deja_core::testkit::read_all(&GrokFormat, env, opts)
}

#[test]
fn chunks_join_across_tool_events_and_tools_are_outputs() {
    let (tmp, _w) = fixture_home();
    let all = parse_env(&StoreEnv::with_home(tmp.path()), &ParseOptions::default());
    let s = session(&all, "g-100");
    let turns: Vec<(Role, &str)> = s.turns.iter().map(|t| (t.role, t.text.as_str())).collect();
    assert_eq!(
        turns,
        vec![
            (Role::User, "why 429s after deploy?"),
            (Role::Assistant, "The bucket refills too slowly."),
            (Role::ToolOutput, "execute: go test ./limiter"),
            (Role::ToolOutput, "FAIL TestRefill"),
            (Role::User, "raise the refill rate"),
            (Role::ToolOutput, "limiter/bucket.go: refill 1/s -> 10/s"),
            (Role::ToolOutput, "go vet ./..."),
            (Role::Assistant, "Refill is 10/s now."),
            (Role::Assistant, "Run the load test again."),
        ]
    );
    assert!(s.turns[6].tool.as_ref().unwrap().is_error, "status failed");
    assert!(s.turns.iter().all(|t| t.tool.as_ref().is_none_or(|x| x.command.is_none())), "ACP carries no command");
    assert_eq!(s.title.as_deref(), Some("Fix 429 storm"));
    assert_eq!(s.project.as_deref(), Some("/src/api"));
    assert_eq!((s.kind.as_deref(), s.parent.as_deref(), s.agent.as_deref()), (Some("subagent_fork"), Some("g-099"), Some("planner")));
}

#[test]
fn project_falls_back_to_the_cwd_file_then_the_decoded_directory() {
    let (tmp, _w) = fixture_home();
    let all = parse_env(&StoreEnv::with_home(tmp.path()), &ParseOptions::default());
    assert_eq!(session(&all, "g-200").project.as_deref(), Some("/srv/demo"));
    let sub = session(&all, "g-300");
    assert_eq!(sub.project.as_deref(), Some("/home/dev/weird project"));
    assert_eq!((sub.kind.as_deref(), sub.parent.as_deref()), (Some("subagent"), None), "no edge is inferred");
    assert_eq!(sub.title.as_deref(), Some("Survey the tests"));
}

#[test]
fn grok_db_reads_user_and_assistant_text_only() {
    let (tmp, _w) = fixture_home();
    let all = parse_env(&StoreEnv::with_home(tmp.path()), &ParseOptions::default());
    let s = session(&all, "s-1");
    let turns: Vec<(Role, &str)> = s.turns.iter().map(|t| (t.role, t.text.as_str())).collect();
    assert_eq!(turns, vec![(Role::User, "raise the burst"), (Role::Assistant, "Burst is now 50.")]);
    assert_eq!((s.project.as_deref(), s.title.as_deref()), (Some("/src/api"), Some("limiter")));
    assert_eq!(session(&all, "s-2").turns.len(), 2, "blank and non-JSON rows are skipped");
    let with = parse_env(&StoreEnv::with_home(tmp.path()), &ParseOptions { include_reasoning: true });
    assert!(session(&with, "s-1").turns.iter().any(|t| t.role == Role::Reasoning));
}

#[test]
fn deja_grok_db_pins_the_database() {
    let (tmp, _w) = fixture_home();
    let env = StoreEnv::with_home(tmp.path().join("nowhere")).set("DEJA_GROK_DB", tmp.path().join(".grok/grok.db").display().to_string());
    let srcs = GrokFormat.discover(&env).sources;
    assert_eq!(srcs.len(), 1);
    assert!(srcs[0].path.ends_with(".grok/grok.db"));
}

#[test]
fn the_db_cursor_re_reads_only_a_grown_session() {
    let (tmp, writers) = fixture_home();
    let src = GrokFormat.discover(&StoreEnv::with_home(tmp.path())).sources.into_iter().find(|s| s.path.ends_with("grok.db")).unwrap();
    let mut first: Vec<Session> = Vec::new();
    let stats = GrokFormat.parse(&src, &ParseOptions::default(), &mut first).unwrap();
    assert_eq!(first.len(), 2);
    let unchanged = SourceRef { cursor: stats.cursor, ..src.clone() };
    let mut again: Vec<Session> = Vec::new();
    GrokFormat.parse(&unchanged, &ParseOptions::default(), &mut again).unwrap();
    // Nothing changed: the sessions of the cursor's own instant are recorded in it as they
    // were read (so a row written in the same instant would still be noticed), not re-read.
    assert!(again.is_empty(), "{again:?}");
    writers[0]
        .execute(
            "INSERT INTO messages (session_id, seq, role, message_json, created_at) VALUES ('s-1', 5, 'user', '{\"content\":\"and the rate?\"}', '2026-05-06T00:00:00Z')",
            [],
        )
        .unwrap();
    let mut grown: Vec<Session> = Vec::new();
    GrokFormat.parse(&unchanged, &ParseOptions::default(), &mut grown).unwrap();
    assert_eq!(grown.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), vec!["s-1"], "only the grown session");
    assert_eq!(grown[0].turns.len(), 3, "re-read whole");
}

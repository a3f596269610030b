//! Every test of deja-adapter-openclaw, in one test binary: the conformance kit (snapshots of
//! every source in `tests/fixtures/home/`, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for OpenClaw: both generations, the
//! database winning over an upgraded JSONL copy, exit codes, projects and the row cursor.

use std::path::Path;

use deja_adapter_openclaw::OpenclawFormat;
use deja_core::testkit::materialize_home;
use deja_core::testkit::session;
use deja_core::{ExitStatus, HarnessFormat, ParseOptions, Role, Session, SourceRef, StoreEnv};

deja_core::conformance!(
    OpenclawFormat,
    wires "OPENCLAW_STATE_DIR" => ".openclaw"
);

fn fixture_home() -> (tempfile::TempDir, Vec<rusqlite::Connection>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let writers = materialize_home(&deja_core::fixture_home!(), tmp.path()).expect("fixture home");
    (tmp, writers)
}

fn parse_all(home: &Path, opts: &ParseOptions) -> Vec<Session> {
    deja_core::testkit::read_all(&OpenclawFormat, &StoreEnv::with_home(home), opts)
}

#[test]
fn the_database_session_has_roles_commands_exits_files_and_project() {
    let (tmp, _w) = fixture_home();
    let all = parse_all(tmp.path(), &ParseOptions::default());
    let s = session(&all, "5b0e0000-1111-4222-8333-444455556666");
    assert_eq!(s.project.as_deref(), Some("/home/dev/src/app"));
    assert_eq!(s.turns[0].role, Role::User);
    assert_eq!(s.turns[0].text, "does the build pass?", "a plain-string content is the prompt");
    let calls: Vec<_> = s.turns.iter().filter_map(|t| t.tool.as_ref().map(|x| (t, x))).collect();
    let exec: Vec<_> = calls.iter().filter(|(_, x)| x.command.as_deref() == Some("make build")).collect();
    assert_eq!(exec.len(), 2);
    assert_eq!(exec[0].1.exit, Some(ExitStatus::Code(2)), "the zstd row's result is folded in");
    assert!(exec[0].0.text.contains("missing symbol"));
    assert_eq!(exec[1].1.exit, Some(ExitStatus::Code(0)));
    assert!(calls.iter().any(|(t, _)| t.edit.is_some()), "the edit keeps its span");
    assert!(s.turns.iter().any(|t| t.role == Role::Summary));
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning is off by default");
    assert!(!all.iter().any(|s| s.turns.iter().any(|t| t.text.contains("TRAJECTORY"))), "the trajectory table is not read");
}

#[test]
fn generations_projects_checkpoints_and_the_database_winning() {
    let (tmp, _w) = fixture_home();
    let all = parse_all(tmp.path(), &ParseOptions::default());
    let plain = session(&all, "7a1f0000-1111-4222-8333-444455556666");
    assert_eq!(plain.project.as_deref(), Some("openclaw-main"), "no cwd: the agent directory");
    assert_eq!(all.iter().filter(|s| s.id == plain.id).count(), 1);
    assert!(!all.iter().any(|s| s.turns.iter().any(|t| t.text.contains("UPGRADED COPY"))), "the database wins");
    assert!(!all.iter().any(|s| s.turns.iter().any(|t| t.text.contains("CHECKPOINT"))));
    let old = session(&all, "c0ffee00-1111-4222-8333-444455556666");
    assert_eq!(old.project.as_deref(), Some("openclaw-main"));
    let roles: Vec<Role> = old.turns.iter().map(|t| t.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant]);
    let with = parse_all(tmp.path(), &ParseOptions { include_reasoning: true });
    assert!(session(&with, &old.id).turns.iter().any(|t| t.role == Role::Reasoning));
}

#[test]
fn the_row_cursor_rereads_only_changed_sessions() {
    let (tmp, w) = fixture_home();
    let sources = OpenclawFormat.discover(&StoreEnv::with_home(tmp.path())).sources;
    let db = sources.iter().find(|s| s.path.extension().is_some_and(|e| e == "sqlite")).expect("the database").clone();
    let mut first = Vec::new();
    let stats = OpenclawFormat.parse(&db, &ParseOptions::default(), &mut first).expect("parses");
    let cursor = stats.cursor.expect("a cursor");
    let mut again = Vec::new();
    OpenclawFormat.parse(&SourceRef { cursor: Some(cursor.clone()), ..db.clone() }, &ParseOptions::default(), &mut again).expect("parses");
    assert!(again.is_empty(), "nothing changed");
    let writer = w.iter().find(|c| c.path().is_some_and(|p| p.ends_with("openclaw-agent.sqlite"))).expect("the writer");
    writer
        .execute(
            "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES ('7a1f0000-1111-4222-8333-444455556666', 3, \
             '{\"type\":\"message\",\"id\":\"u2\",\"parentId\":\"a1\",\"timestamp\":\"2026-11-30T11:05:00.000Z\",\"message\":{\"role\":\"user\",\"content\":\"and after?\"}}', 1796036700000)",
            [],
        )
        .expect("insert");
    let mut third = Vec::new();
    OpenclawFormat.parse(&SourceRef { cursor: Some(cursor), ..db }, &ParseOptions::default(), &mut third).expect("parses");
    assert_eq!(third.len(), 1);
    assert_eq!(third[0].id, "7a1f0000-1111-4222-8333-444455556666");
    assert_eq!(third[0].turns.last().map(|t| t.text.as_str()), Some("and after?"));
}

/// The 2026.9.6 release's own shapes (`agents/shop`, written as the release wrote them):
/// a failed `exec` whose result says `isError: false`, truncated details in a zstd row, an
/// `edits[]` edit, and the `openclaw:bootstrap-context:full` marker.
#[test]
fn the_release_2026_9_6_store_reads_completely() {
    let (tmp, _w) = fixture_home();
    let sources = OpenclawFormat.discover(&StoreEnv::with_home(tmp.path())).sources;
    let db = sources.iter().find(|s| s.path.ends_with("agents/shop/agent/openclaw-agent.sqlite")).expect("the shop database");
    let mut all = Vec::new();
    let stats = OpenclawFormat.parse(db, &ParseOptions::default(), &mut all).expect("parses");
    assert_eq!(stats.skipped, 0, "every record kind the release wrote is handled: {:?}", stats.problems);
    let s = session(&all, "dd875986-850b-4548-9c1a-24dc0d7bc9e8");
    assert_eq!(s.project.as_deref(), Some("/home/dev/projects/shop"));
    let users: Vec<&str> = s.turns.iter().filter(|t| t.role == Role::User).map(|t| t.text.as_str()).collect();
    assert_eq!(users, ["Please fix the jwt refresh bug in auth.rs", "Now check the token expiry handling in the session cache"]);
    let execs: Vec<_> = s
        .turns
        .iter()
        .filter_map(|t| t.tool.as_ref())
        .filter(|x| x.command.is_some())
        .map(|x| (x.command.clone(), x.exit.clone()))
        .collect();
    assert_eq!(
        execs,
        [
            (Some("echo jwt-probe-ran".to_string()), Some(ExitStatus::Code(0))),
            // The result says isError false: the exit code is only in details.exitCode.
            (Some("ls session-cache-dir".to_string()), Some(ExitStatus::Code(2))),
            // Details cut by the release (persistedDetailsTruncated) still keep exitCode.
            (Some("seq 1 3000".to_string()), Some(ExitStatus::Code(0))),
        ]
    );
    let edit = s.turns.iter().find_map(|t| t.edit.as_ref()).expect("the edits[] span");
    assert_eq!((edit.path.as_str(), edit.old.as_str()), ("auth.rs", "fn refresh() {}"));
    assert!(s.turns.iter().any(|t| t.files.iter().any(|f| f.path == "notes.txt")), "the write names its file");
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning));
    assert!(!s.turns.iter().any(|t| t.text.contains("bootstrap-context") || t.text.contains("SYSTEM PROMPT COPY")));
}

/// OpenClaw 2026.9.6 reads `~/.agents/skills` only for the default state dir: with
/// `OPENCLAW_STATE_DIR` elsewhere the skill goes to that dir's managed `skills/`.
#[test]
fn the_skill_follows_a_relocated_state_dir() {
    use deja_core::wire::{Edit, WireContext};
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let skill_of = |env: &StoreEnv| {
        let cx = WireContext { env, exe: "/opt/deja/deja".into() };
        let edits = OpenclawFormat.wiring().expect("openclaw has wiring").plain(&cx);
        edits.iter().map(Edit::file).find(|f| f.ends_with("SKILL.md")).map(Path::to_path_buf).expect("a skill")
    };
    assert_eq!(skill_of(&StoreEnv::with_home(&home)), home.join(".agents/skills/deja-history/SKILL.md"));
    let default = StoreEnv::with_home(&home).set("OPENCLAW_STATE_DIR", home.join(".openclaw").display().to_string());
    assert_eq!(skill_of(&default), home.join(".agents/skills/deja-history/SKILL.md"));
    let state = tmp.path().join("state");
    let moved = StoreEnv::with_home(&home).set("OPENCLAW_STATE_DIR", state.display().to_string());
    assert_eq!(skill_of(&moved), state.join("skills/deja-history/SKILL.md"));
}

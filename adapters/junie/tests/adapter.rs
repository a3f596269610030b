//! Every test of deja-adapter-junie, in one test binary: the conformance kit (snapshots of
//! every source in `tests/fixtures/home/`, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for Junie's folded block log.

use deja_adapter_junie::{changed_run, JunieFormat};
use deja_core::normalize::{normalize, NormalizeOptions};
use deja_core::testkit::session;
use deja_core::{ExitStatus, FileAction, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    JunieFormat,
    wires "JUNIE_HOME" => ".junie"
);

fn fixture_sessions() -> Vec<Session> {
    let home = deja_core::fixture_home!();
    let mut out = Vec::new();
    let found = JunieFormat.discover(&StoreEnv::with_home(&home)).sources;
    assert_eq!(found.len(), 2, "a session directory without events.jsonl is no source");
    for src in found {
        JunieFormat.parse(&src, &ParseOptions::default(), &mut out).expect("a fixture parses");
    }
    out
}

#[test]
fn blocks_fold_by_step_and_keep_their_work() {
    let all = fixture_sessions();
    let s = session(&all, "session-260901-101500-k3m9");
    assert_eq!((s.title.as_deref(), s.project.as_deref()), (Some("Flaky invoice test"), Some("/p/billing")));
    let runs: Vec<_> = s.turns.iter().filter(|t| t.tool.as_ref().is_some_and(|x| x.command.as_deref() == Some("./gradlew test"))).collect();
    assert_eq!(runs.len(), 2, "updates and the COMPLETED replay fold into their step");
    assert_eq!(runs[0].tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(1)));
    assert!(runs[0].tool.as_ref().is_some_and(|t| t.is_error) && runs[0].text == "1 test failed");
    let edit = s.turns.iter().find_map(|t| t.edit.as_ref()).expect("edit");
    assert_eq!((edit.path.as_str(), edit.old.as_str(), edit.new.as_deref()), ("/p/src/A.kt", "b", Some("B")));
    assert!(s.turns.iter().any(|t| t.files.iter().any(|f| f.action == FileAction::Write && f.path == "/p/src/FixedClock.kt")));
    assert_eq!(s.turns.iter().filter(|t| t.files.iter().any(|f| f.action == FileAction::Read)).count(), 1);
    assert_eq!(s.turns.iter().filter(|t| t.role == Role::Assistant && t.text == "Fixed the race.").count(), 1);
    assert!(!s.turns.iter().any(|t| t.text.contains("clock use first")), "thoughts are not speech");
}

#[test]
fn hook_context_is_not_the_persons_words() {
    let all = fixture_sessions();
    let mut s = session(&all, "session-260901-101500-k3m9").clone();
    normalize(&mut s, &NormalizeOptions::default(), JunieFormat.info().injected);
    assert_eq!(s.turns[0].text, "fix the flaky test");
    assert!(!s.turns.iter().any(|t| t.text.contains("additional_context") || t.text.contains("hook: no earlier")));
}

#[test]
fn a_headless_run_takes_its_task_from_state_json() {
    let all = fixture_sessions();
    let s = session(&all, "session-260902-080000-h7q2");
    assert_eq!(s.turns[0].role, Role::User);
    assert!(s.turns[0].text.starts_with("add a cents column to entries"));
    assert_eq!(s.turns[0].time.map(|t| t.millis()), Some(1_790_050_000_000), "the index's createdAt is earlier than the first event");
    assert_eq!((s.title.as_deref(), s.project.as_deref()), (Some("Add the cents column"), Some("/p/ledger")));
}

#[test]
fn changed_run_strips_common_head_and_tail() {
    assert_eq!(changed_run("a\nb\nc", "a\nB\nc"), ("b".into(), "B".into()));
    assert_eq!(changed_run("a\nb", "a\nb\nc"), ("".into(), "c".into()));
    assert_eq!(changed_run("x", "x"), ("".into(), "".into()));
}

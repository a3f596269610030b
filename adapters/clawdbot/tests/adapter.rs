//! Every test of deja-adapter-clawdbot, in one test binary: the conformance kit
//! (snapshots of every source in `tests/fixtures/home/`, arbitrary bytes, mutated
//! fixtures, store overrides), then the rules that matter most for Clawdbot.

use deja_adapter_clawdbot::ClawdbotFormat;
use deja_core::testkit::session;
use deja_core::{ExitStatus, Role, Session};

deja_core::conformance!(
    ClawdbotFormat,
    switch "DEJA_INCLUDE_SUBAGENTS"
);

fn sessions() -> Vec<Session> {
    deja_core::testkit::sessions(&ClawdbotFormat, &deja_core::fixture_home!())
}

#[test]
fn flat_lines_are_speech_with_a_path_id() {
    let all = sessions();
    let s = session(&all, "work/chat");
    assert_eq!((s.harness.as_str(), s.project.as_deref()), ("clawdbot", None));
    assert_eq!(s.title.as_deref(), Some("remind me to renew the domain"), "first line of the first user message");
    let turns: Vec<(Role, &str)> = s.turns.iter().map(|t| (t.role, t.text.as_str())).collect();
    assert_eq!(
        turns,
        [
            (Role::User, "remind me to renew the domain"),
            (Role::Assistant, "Reminder set for Friday."),
            (Role::User, "and the TLS certificate\nit expires the same week"),
            (Role::Assistant, "Added a second reminder for the certificate."),
        ],
        "system skipped, a missing role is the assistant"
    );
    assert_eq!(session(&all, "2025-01-28").turns.len(), 2, "BOM, garbage and torn tail");
}

#[test]
fn pi_shaped_files_read_as_openclaw_in_both_layouts() {
    let all = sessions();
    let s = session(&all, "7d8e9fa0-0000-4000-8000-000000000001");
    let df = s.turns.iter().find(|t| t.role == Role::ToolCall).expect("exec");
    assert_eq!(df.tool.as_ref().map(|t| (t.command.as_deref(), t.exit.clone())), Some((Some("df -h /"), Some(ExitStatus::Code(0)))));
    let agents = session(&all, "8e9fa0b1-0000-4000-8000-000000000002");
    assert_eq!(agents.project.as_deref(), Some("/home/c/notes"));
    assert!(agents.turns.iter().any(|t| t.edit.as_ref().is_some_and(|e| e.path == "shopping.md")));
    assert!(agents.turns.iter().any(|t| t.role == Role::Summary));
    assert_eq!(all.len(), 4, "sessions.json is not a transcript");
}

//! Every test of deja-adapter-openhands, in one test binary: the conformance kit, then the
//! rules that matter most for OpenHands conversation directories.

use deja_adapter_openhands::OpenHandsFormat;
use deja_core::testkit::session;
use deja_core::{ExitStatus, FileAction, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(OpenHandsFormat,
    switch "DEJA_INCLUDE_SUBAGENTS",
);

fn home() -> std::path::PathBuf {
    deja_core::fixture_home!()
}

fn sessions(opts: &ParseOptions) -> Vec<Session> {
    deja_core::testkit::read_all(&OpenHandsFormat, &StoreEnv::with_home(home()), opts)
}

#[test]
fn events_become_speech_commands_and_edits() {
    let all = sessions(&ParseOptions::default());
    let s = session(&all, "0f1e2d3c-4b5a-4697-8899-aabbccddeeff");
    assert_eq!(s.project.as_deref(), Some("/src/cli"));
    assert_eq!(s.turns[0].role, Role::User, "the system prompt is skipped");
    assert_eq!(s.turns[0].text, "make the tests pass");
    assert_eq!(s.turns[1].text, "Run the suite first.", "the thought is speech");
    let pytest = &s.turns[2];
    assert_eq!(pytest.tool.as_ref().and_then(|t| t.command.as_deref()), Some("pytest -q"));
    assert_eq!(pytest.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(1)));
    assert_eq!(pytest.text, "2 failed, 10 passed");
    let edit = s.turns.iter().find(|t| t.files.first().is_some_and(|f| f.action == FileAction::Edit)).expect("str_replace");
    assert_eq!(edit.edit.as_ref().map(|e| (e.old.as_str(), e.new.as_deref())), Some(("argv[1:]", Some("argv[2:]"))));
    assert!(!s.turns.iter().any(|t| t.tool.as_ref().is_some_and(|x| x.name == "task_tracker")));
    assert!(s.turns.iter().any(|t| t.role == Role::ToolOutput && t.text.contains("sandbox was restarted")));
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning off by default");
    assert!(!s.turns.iter().any(|t| t.text.contains("written half")), "the torn event file is skipped");
    let with = sessions(&ParseOptions { include_reasoning: true });
    assert!(session(&with, &s.id).turns.iter().any(|t| t.role == Role::Reasoning));
}

#[test]
fn dashless_directory_without_base_state() {
    let all = sessions(&ParseOptions::default());
    let s = session(&all, "a1b2c3d4-e5f6-4788-99aa-bbccddeeff00");
    assert_eq!(s.project.as_deref(), Some("/src/etl"), "from an observation's working_dir");
    assert!(!s.turns.iter().any(|t| t.tool.as_ref().is_some_and(|x| x.name == "delegate")));
    assert!(s.source.parts.iter().any(|p| p.ends_with("events")), "new event files change the fingerprint");
}

/// The conversation OpenHands CLI 1.16.0 (SDK 1.21.0) writes, with a `task` sub-agent.
const RELEASE: &str = "5c4d3e2f-1a0b-49c8-8d7e-6f5a4b3c2d1e";
const RELEASE_SUB: &str = "9e8d7c6b-5a4f-43e2-b1c0-d9e8f7a6b5c4";

#[test]
fn release_1_16_conversation_and_its_subagent() {
    let all = sessions(&ParseOptions::default());
    let s = session(&all, RELEASE);
    assert_eq!(s.project.as_deref(), Some("/home/dev/ledger"));
    assert_eq!(s.parent, None);
    let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
    assert_eq!(roles, [Role::User, Role::ToolCall, Role::ToolCall, Role::ToolCall, Role::ToolCall, Role::Assistant]);
    let ls = &s.turns[1];
    assert_eq!(ls.tool.as_ref().and_then(|t| t.command.as_deref()), Some("ls keys"));
    assert_eq!(ls.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(0)));
    assert_eq!(ls.text, "export-2025.pem");
    assert_eq!(s.turns[2].files.first().map(|f| f.action), Some(FileAction::Write));
    let edit = s.turns[3].edit.as_ref().expect("str_replace span");
    assert_eq!((edit.old.as_str(), edit.new.as_deref()), ("KEY = 'export-2025.pem'", Some("KEY = 'export-2026.pem'")));
    assert_eq!(s.turns[4].tool.as_ref().map(|t| t.name.as_str()), Some("task"));

    // `<conversation>/subagents/<id>/`: the sub-agent the `task` call started, same layout.
    let sub = session(&all, RELEASE_SUB);
    assert_eq!(sub.parent.as_deref(), Some(RELEASE));
    assert_eq!(sub.kind.as_deref(), Some("subagent"));
    assert_eq!(sub.turns[0].text, "Find every caller of the export signing key");
    assert!(sub.turns.iter().any(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("grep -rn export-2025 .")));

    let off = OpenHandsFormat.discover(&StoreEnv::with_home(home()).set("DEJA_INCLUDE_SUBAGENTS", "0"));
    assert!(!off.sources.iter().any(|s| s.path.components().any(|c| c.as_os_str() == "subagents")));
}

/// Event times are `datetime.now().isoformat()`: local wall-clock time without a zone.
/// Checked in a child process with a fixed zone (UTC+9), since the zone is process-wide.
#[test]
fn zoneless_event_times_are_local_wall_clock() {
    const CHILD: &str = "DEJA_OPENHANDS_TZ_CHILD";
    if std::env::var_os(CHILD).is_none() {
        let out = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args(["--exact", "zoneless_event_times_are_local_wall_clock", "--test-threads=1", "--nocapture"])
            .env(CHILD, "1")
            .env("TZ", "JST-9")
            .output()
            .expect("run the child test");
        assert!(out.status.success(), "child failed:\n{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        return;
    }
    let all = sessions(&ParseOptions::default());
    let s = session(&all, RELEASE);
    // `2026-11-20T09:15:01.120431` written at UTC+9 is 00:15:01.120 UTC.
    assert_eq!(s.started.map(|t| t.to_rfc3339()).as_deref(), Some("2026-11-20T00:15:01.120Z"));
    assert_eq!(s.turns[0].time.map(|t| t.to_rfc3339()).as_deref(), Some("2026-11-20T00:15:01.120Z"));
}

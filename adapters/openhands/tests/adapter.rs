//! Every test of deja-adapter-openhands, in one test binary: the conformance kit, then the
//! rules that matter most for OpenHands conversation directories.

use std::path::Path;

use deja_adapter_openhands::OpenHandsFormat;
use deja_core::{ExitStatus, FileAction, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(OpenHandsFormat, relocate "DEJA_OPENHANDS_ROOT" => ".openhands/conversations");

fn home() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/home")
}

fn sessions(opts: &ParseOptions) -> Vec<Session> {
    let mut out = Vec::new();
    for src in OpenHandsFormat.discover(&StoreEnv::with_home(home())).sources {
        OpenHandsFormat.parse(&src, opts, &mut out).expect("a fixture parses");
    }
    out
}

fn session<'a>(all: &'a [Session], id: &str) -> &'a Session {
    all.iter().find(|s| s.id == id).unwrap_or_else(|| panic!("session {id}"))
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

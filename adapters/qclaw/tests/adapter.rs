//! Every test of deja-adapter-qclaw, in one test binary: the conformance kit (snapshots
//! of every source in `tests/fixtures/home/`, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for QClaw.

use deja_adapter_qclaw::QclawFormat;
use deja_core::testkit::session;
use deja_core::{ExitStatus, FileAction, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    QclawFormat,
    switch "DEJA_INCLUDE_SUBAGENTS"
);

fn env() -> StoreEnv {
    StoreEnv::with_home(deja_core::fixture_home!())
}

fn sessions() -> Vec<Session> {
    deja_core::testkit::read_all(&QclawFormat, &env(), &ParseOptions::default())
}

#[test]
fn agent_scoped_ids_gateway_prefix_and_exec_exit() {
    let all = sessions();
    let s = session(&all, "main:1a2b3c4d-0000-4000-8000-000000000001");
    assert_eq!(s.project.as_deref(), Some("qclaw-main"), "no cwd: the agent directory");
    let users: Vec<&str> = s.turns.iter().filter(|t| t.role == Role::User).map(|t| t.text.as_str()).collect();
    assert_eq!(users, ["summarise my inbox", "draft a reply to the bank"]);
    let exec = s.turns.iter().find(|t| t.role == Role::ToolCall).expect("exec");
    assert_eq!(
        exec.tool.as_ref().map(|t| (t.command.as_deref(), t.exit.clone())),
        Some((Some("mail --count"), Some(ExitStatus::Code(127))))
    );
    assert!(s.turns.iter().any(|t| t.role == Role::Summary));
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning));
}

#[test]
fn archived_transcripts_are_read_and_the_rest_is_not() {
    let all = sessions();
    let mut ids: Vec<&str> = all.iter().map(|s| s.id.as_str()).collect();
    ids.sort();
    assert_eq!(
        ids,
        [
            "main:1a2b3c4d-0000-4000-8000-000000000001",
            "main:2b3c4d5e-0000-4000-8000-000000000002",
            "main:3c4d5e6f-0000-4000-8000-000000000003",
            "work:4d5e6f70-0000-4000-8000-000000000004",
            "work:5e6f7081-0000-4000-8000-000000000005"
        ],
        "deleted and reset transcripts in; the checkpoint and sessions.json out"
    );
    let found = QclawFormat.discover(&env()).sources;
    assert!(!found.iter().any(|s| s.path.to_string_lossy().ends_with(".full.bak")), "the live file of that id wins");
}

#[test]
fn openclaw_tools_record_files_edits_and_signals() {
    let all = sessions();
    let s = session(&all, "work:4d5e6f70-0000-4000-8000-000000000004");
    assert_eq!(s.project.as_deref(), Some("/home/q/src/site"));
    let files: Vec<(&str, FileAction)> = s.turns.iter().flat_map(|t| t.files.iter().map(|f| (f.path.as_str(), f.action))).collect();
    assert_eq!(files[0], ("footer.html", FileAction::Read));
    assert!(files.contains(&("index.html", FileAction::Edit)), "apply_patch: {files:?}");
    assert!(files.contains(&("CHANGES.txt", FileAction::Write)));
    assert!(s.turns.iter().any(|t| t.edit.as_ref().is_some_and(|e| e.old == "<title>Site 2025</title>")));
    let build = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("npm run build")).expect("build");
    assert_eq!(build.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Signal("SIGKILL".into())));
}

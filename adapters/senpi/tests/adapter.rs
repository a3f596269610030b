//! Every test of deja-adapter-senpi, in one test binary: the conformance kit (snapshots
//! of every source in `tests/fixtures/home/`, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for Senpi.

use deja_adapter_senpi::SenpiFormat;
use deja_core::testkit::session;
use deja_core::{ExitStatus, FileAction, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    SenpiFormat,
    switch "DEJA_INCLUDE_SUBAGENTS",
    wires "SENPI_CODING_AGENT_DIR" => ".senpi/agent"
);

fn home() -> std::path::PathBuf {
    deja_core::fixture_home!()
}

fn sessions(env: &StoreEnv) -> Vec<Session> {
    deja_core::testkit::read_all(&SenpiFormat, env, &ParseOptions::default())
}

fn command(t: &deja_core::Turn) -> Option<&str> {
    t.tool.as_ref().and_then(|x| x.command.as_deref())
}

#[test]
fn the_page_example_eval_result_is_the_command_it_ran() {
    let all = sessions(&StoreEnv::with_home(home()));
    let s = session(&all, "s-001");
    assert_eq!(s.project.as_deref(), Some("/w/senpi-demo"));
    let call = s.turns.iter().find(|t| command(t) == Some("go test ./worker")).expect("the nested bash call");
    assert_eq!((call.role, call.text.as_str()), (Role::ToolCall, "3 passed"), "the {{\"text\"}} wrapper is gone");
}

#[test]
fn an_eval_cell_yields_every_call_it_made() {
    let all = sessions(&StoreEnv::with_home(home()));
    let s = session(&all, "s-002");
    let files: Vec<(&str, FileAction)> = s.turns.iter().flat_map(|t| t.files.iter().map(|f| (f.path.as_str(), f.action))).collect();
    assert_eq!(files, [("worker/main.go", FileAction::Read), ("worker/main.go", FileAction::Edit)]);
    assert!(s.turns.iter().any(|t| t.edit.as_ref().is_some_and(|e| e.old == "os.Exit(0)")));
    assert!(s.turns.iter().any(|t| command(t) == Some("go test ./worker")));
    let ps = s.turns.iter().find(|t| command(t) == Some("Get-Process worker")).expect("powershell is a shell");
    assert_eq!(ps.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(1)));
    let mut indexed = s.clone();
    deja_core::normalize::normalize(&mut indexed, &Default::default(), SenpiFormat.info().injected);
    let users: Vec<&str> = indexed.turns.iter().filter(|t| t.role == Role::User).map(|t| t.text.as_str()).collect();
    assert_eq!(users, ["make the worker drain its queue before exiting"], "deja's recall message is not speech");
}

#[test]
fn no_cwd_falls_back_to_the_directory_and_state_files_are_not_transcripts() {
    let found = SenpiFormat.discover(&StoreEnv::with_home(home())).sources;
    assert!(found.iter().all(|s| s.path.extension().is_some_and(|e| e == "jsonl")));
    let all = sessions(&StoreEnv::with_home(home()));
    let s = session(&all, "s-003");
    assert_eq!(s.project.as_deref(), Some("w/queue"));
    assert!(s.turns.iter().any(|t| t.role == Role::Summary));
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning));
}

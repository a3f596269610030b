//! Every test of deja-adapter-positron, in one test binary: the conformance kit (snapshots
//! of every source in `tests/fixtures/home/`, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for Positron's chat store.

use std::path::PathBuf;

use deja_adapter_positron::PositronFormat;
use deja_core::testkit::session;
use deja_core::{HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(PositronFormat);

fn home() -> PathBuf {
    deja_core::fixture_home!()
}

fn parse_all(opts: &ParseOptions) -> Vec<Session> {
    deja_core::testkit::read_readable(&PositronFormat, &StoreEnv::with_home(home()), opts)
}

#[test]
fn the_pages_example_is_a_prompt_and_an_answer() {
    let all = parse_all(&ParseOptions::default());
    let s = session(&all, "5e4d-plot");
    assert_eq!(s.harness, "positron");
    assert_eq!(s.project.as_deref(), Some("/home/u/analysis"));
    let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant]);
    assert_eq!(s.turns[0].text, "plot fuel economy against horsepower");
}

#[test]
fn the_mutation_log_replays_with_work_and_a_torn_tail() {
    let all = parse_all(&ParseOptions::default());
    let s = session(&all, "6f7a-model");
    assert_eq!(s.title.as_deref(), Some("Forecast model"), "the torn last Set is not applied");
    let answer = s.turns.iter().find(|t| t.role == Role::Assistant).expect("answer");
    assert_eq!(answer.text, "The seasonal search tries every order; turn stepwise back on.", "thinking is not speech");
    let term = s.turns.iter().find_map(|t| t.tool.as_ref().and_then(|x| x.command.as_deref())).expect("a command");
    assert_eq!(term, "Rscript fit.R");
    assert!(s.turns.iter().any(|t| t.edit.as_ref().is_some_and(|e| e.path == "/home/u/forecast/fit.R")));
    let with = parse_all(&ParseOptions { include_reasoning: true });
    assert!(session(&with, "6f7a-model").turns.iter().any(|t| t.role == Role::Reasoning));
}

#[test]
fn profiles_and_empty_windows_are_read_and_nothing_else() {
    let all = parse_all(&ParseOptions::default());
    assert_eq!(session(&all, "9c0d-docs").project.as_deref(), Some("/home/u/pkgdev"), "a profile's workspace");
    assert_eq!(session(&all, "0e1f-scratch").project.as_deref(), Some("/home/u/scratch"), "empty window, after a BOM");
    assert!(!all.iter().any(|s| s.id == "8b9c-pkg"), "a bad middle line drops the session, as VS Code does");
    let sources = PositronFormat.discover(&StoreEnv::with_home(home())).sources;
    assert!(!sources.iter().any(|s| s.path.to_string_lossy().contains("transcripts")), "no Copilot transcripts");
    assert!(!sources.iter().any(|s| s.path.to_string_lossy().contains("/Code/")), "VS Code's own chats are Copilot Chat's");
}

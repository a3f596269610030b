//! Every test of deja-adapter-poolside, in one test binary: the conformance kit, then the
//! rules that matter most for Poolside's trajectories.

use deja_adapter_poolside::PoolsideFormat;
use deja_core::{ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(PoolsideFormat);

fn sessions(opts: &ParseOptions) -> Vec<Session> {
    let home = deja_core::fixture_home!();
    deja_core::testkit::read_all(&PoolsideFormat, &StoreEnv::with_home(&home), opts)
}

#[test]
fn trajectory_roles_and_work() {
    let all = sessions(&ParseOptions::default());
    let s = all.iter().find(|s| s.id == "interactive_5a6b7c8d-0000-4000-8000-000000000001").expect("session");
    assert_eq!(s.project.as_deref(), Some("/src/etl"));
    let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
    assert_eq!(roles[..2], [Role::User, Role::Assistant]);
    assert!(!roles.contains(&Role::Reasoning), "reasoning is off by default");
    let grep = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("grep -n DISTINCT jobs/nightly.sql"));
    assert_eq!(grep.map(|t| t.text.as_str()), Some("(no matches)"), "the result pairs by payload id");
    let make = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("make nightly")).expect("make");
    assert!(make.tool.as_ref().is_some_and(|t| t.is_error) && make.text.contains("Error 2"));
    let denied = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("rm -rf data/")).expect("rm");
    assert!(denied.tool.as_ref().is_some_and(|t| t.is_error) && denied.text == "approval_denied");
    assert!(!s.turns.iter().any(|t| t.text.contains("building...")), "shell_tail is no work record");
    assert!(!s.turns.iter().any(|t| t.tool.as_ref().is_some_and(|x| x.name == "exit")));
    let with = sessions(&ParseOptions { include_reasoning: true });
    assert!(with.iter().flat_map(|s| &s.turns).any(|t| t.role == Role::Reasoning && t.text.contains("DISTINCT")));
    let exec = all.iter().find(|s| s.id == "exec_6c7d8e9f-0000-4000-8000-000000000002").expect("exec session");
    assert_eq!(exec.project.as_deref(), Some("/src/api"), "workspace when there are no working directories");
    assert_eq!(exec.turns.iter().filter(|t| t.role == Role::User).count(), 1, "the header prompt is read once");
}

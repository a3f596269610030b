//! Every test of deja-adapter-kimchi, in one test binary: the conformance kit (snapshots
//! of every source in `tests/fixtures/home/`, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for Kimchi.

use deja_adapter_kimchi::KimchiFormat;
use deja_core::testkit::session;
use deja_core::{ExitStatus, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    KimchiFormat,
    switch "DEJA_INCLUDE_SUBAGENTS"
);

fn env() -> StoreEnv {
    StoreEnv::with_home(deja_core::fixture_home!())
}

fn sessions(env: &StoreEnv) -> Vec<Session> {
    deja_core::testkit::read_all(&KimchiFormat, env, &ParseOptions::default())
}

#[test]
fn the_project_is_cwd_and_exit_codes_come_from_the_marker() {
    let all = sessions(&env());
    let s = session(&all, "k-01");
    assert_eq!(s.project.as_deref(), Some("/w/kimchi-demo"));
    assert_eq!(session(&all, "k-05").project.as_deref(), Some("/w/my-app"), "never the decoded directory");
    let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
    assert_eq!(roles, [Role::User, Role::ToolCall, Role::Assistant, Role::ToolCall], "thinking is off by default");
    let curl = &s.turns[1];
    assert_eq!(curl.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(7)));
    assert!(!curl.text.contains("Command exited"));
    assert_eq!(s.turns[3].edit.as_ref().map(|e| e.old.as_str()), Some("sameSite: 'strict'"));
}

#[test]
fn sub_agents_and_forks() {
    let all = sessions(&env());
    let sub = session(&all, "k-02");
    assert_eq!((sub.kind.as_deref(), sub.parent.as_deref()), (Some("subagent"), Some("k-01")));
    let fork = session(&all, "k-03");
    assert_eq!((fork.kind.as_deref(), fork.parent.as_deref()), (Some("fork"), Some("k-01")));
    let without = sessions(&env().set("DEJA_INCLUDE_SUBAGENTS", "0"));
    assert!(!without.iter().any(|s| s.id == "k-02"), "the sub-agent is left out");
    assert!(without.iter().any(|s| s.id == "k-03"), "a fork is not a sub-agent");
    assert!(all.iter().any(|s| s.id == "k-04"), "a file directly under sessions/");
}

#[test]
fn kimchis_own_variables_do_not_move_the_store() {
    let elsewhere = tempfile::tempdir().expect("tmp");
    let path = elsewhere.path().display().to_string();
    let moved = sessions(&env().set("KIMCHI_CODING_AGENT_DIR", path.clone()).set("XDG_CONFIG_HOME", path));
    assert_eq!(moved.len(), sessions(&env()).len());
}

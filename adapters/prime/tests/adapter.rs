//! Every test of deja-adapter-prime, in one test binary: the conformance kit (snapshots
//! of every source in `tests/fixtures/home/`, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for prime.

use deja_adapter_prime::PrimeFormat;
use deja_core::testkit::session;
use deja_core::{FileAction, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    PrimeFormat,
    switch "DEJA_INCLUDE_SUBAGENTS",
    wires "PRIME_AGENT_CODING_AGENT_DIR" => ".prime/agent"
);

fn env() -> StoreEnv {
    StoreEnv::with_home(deja_core::fixture_home!())
}

fn sessions(env: &StoreEnv) -> Vec<Session> {
    deja_core::testkit::read_all(&PrimeFormat, env, &ParseOptions::default())
}

#[test]
fn ipython_diffs_are_files_and_edit_spans_not_commands() {
    let all = sessions(&env());
    let s = session(&all, "0199aa10-0000-7000-8000-000000000002");
    assert_eq!(s.project.as_deref(), Some("/w/prime-demo"));
    let edits: Vec<(&str, &str, Option<&str>)> =
        s.turns.iter().filter_map(|t| t.edit.as_ref()).map(|e| (e.path.as_str(), e.old.as_str(), e.new.as_deref())).collect();
    assert_eq!(
        edits,
        [("upload.py", "upload(f)", Some("retry(upload, f, times=3)")), ("log.py", "LEVEL = \"INFO\"", Some("LEVEL = \"WARN\""))]
    );
    assert!(s.turns.iter().flat_map(|t| &t.files).all(|f| f.action == FileAction::Edit));
    assert!(s.turns.iter().all(|t| t.tool.as_ref().is_none_or(|x| x.command.is_none())), "bash() in a cell is not a command");
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning));
    assert_eq!(s.turns.iter().filter(|t| t.role == Role::Summary).count(), 2);
    let page = session(&all, "0199aa00-0000-7000-8000-000000000001");
    assert!(page.turns.iter().any(|t| t.edit.as_ref().is_some_and(|e| e.path == "cfg.py" && e.old == "TIMEOUT=5")), "the page's example");
}

#[test]
fn rlm_children_are_sub_agents_of_their_parent() {
    let all = sessions(&env());
    let child = session(&all, "0199bb00-0000-7000-8000-000000000003");
    assert_eq!((child.kind.as_deref(), child.parent.as_deref()), (Some("subagent"), Some("0199aa10-0000-7000-8000-000000000002")));
    assert!(!PrimeFormat.discover(&env()).sources.iter().any(|s| s.path.ends_with("semantic-edges.jsonl")));
    let without = sessions(&env().set("DEJA_INCLUDE_SUBAGENTS", "0"));
    assert!(!without.iter().any(|s| s.id == child.id));
    assert_eq!(without.len(), all.len() - 1);
}

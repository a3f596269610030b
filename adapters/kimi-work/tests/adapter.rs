//! Every test of deja-adapter-kimi-work, in one test binary: the conformance kit
//! (snapshots of every source in `tests/fixtures/home/`, arbitrary bytes, mutated
//! fixtures, store overrides), then the rules that matter most for the desktop store.

use deja_adapter_kimi_work::KimiWorkFormat;
use deja_core::{HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(KimiWorkFormat);

fn fixture_sessions() -> Vec<Session> {
    let home = deja_core::fixture_home!();
    let mut out = Vec::new();
    let found = KimiWorkFormat.discover(&StoreEnv::with_home(&home)).sources;
    assert_eq!(found.len(), 2, "conv-* main logs only: no sub-agent, no ctitle-/sklsum-/dvlt- session");
    for src in found {
        KimiWorkFormat.parse(&src, &ParseOptions::default(), &mut out).expect("a fixture parses");
    }
    out
}

#[test]
fn conversations_read_as_kimi_code_wire_logs() {
    let all = fixture_sessions();
    assert!(!all.iter().any(|s| s.turns.iter().any(|t| t.text.contains("internal helper") || t.text.contains("sub-agent"))));
    let s = all.iter().find(|s| s.id == "conv-77aa").expect("conv-77aa");
    assert_eq!((s.title.as_deref(), s.project.as_deref()), (Some("checkout total off by a cent"), Some("/Users/me/shop")));
    let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
    assert_eq!(roles, vec![Role::User, Role::Assistant, Role::ToolCall, Role::ToolCall, Role::Assistant]);
    let test = &s.turns[2];
    assert_eq!(test.tool.as_ref().and_then(|t| t.command.as_deref()), Some("npm test -- cart"));
    assert!(test.tool.as_ref().is_some_and(|t| t.is_error) && test.text.contains("10.01"));
    assert_eq!(s.turns[3].edit.as_ref().map(|e| e.old.as_str()), Some("total += price * qty"));
}

#[test]
fn the_legacy_layout_and_an_unfinished_stream() {
    let all = fixture_sessions();
    let s = all.iter().find(|s| s.id == "conv-0c1d").expect("conv-0c1d");
    assert_eq!(s.project, None);
    let last = s.turns.last().expect("turns");
    assert!(last.partial && last.role == Role::Assistant);
}

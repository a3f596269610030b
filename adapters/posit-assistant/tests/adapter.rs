//! Every test of deja-adapter-posit-assistant, in one test binary: the conformance kit,
//! then the rules that matter most for Posit Assistant's conversations.

use deja_adapter_posit_assistant::PositAssistantFormat;
use deja_core::testkit::session;
use deja_core::{FileAction, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    PositAssistantFormat,
    switch "DEJA_INCLUDE_SUBAGENTS"
);

fn home() -> std::path::PathBuf {
    deja_core::fixture_home!()
}

fn sessions(env: &StoreEnv, opts: &ParseOptions) -> Vec<Session> {
    deja_core::testkit::read_readable(&PositAssistantFormat, env, opts)
}

#[test]
fn active_branch_summary_markers_and_tools() {
    let all = sessions(&StoreEnv::with_home(home()), &ParseOptions::default());
    let s = session(&all, "conv-0001");
    assert_eq!(s.project.as_deref(), Some("/home/u/analysis/sales"));
    assert_eq!((s.title.as_deref(), s.kind.as_deref()), (Some("Load the sales data"), Some("main")));
    let turns: Vec<(Role, &str)> = s.turns.iter().map(|t| (t.role, t.text.as_str())).collect();
    assert_eq!(turns[0], (Role::User, "how do I load the sales data?"));
    assert_eq!(turns[1], (Role::Assistant, "Let me look."), "the summary marker is removed");
    assert!(!s.turns.iter().any(|t| t.text.contains("abandoned") || t.text.contains("SYSTEM PROMPT") || t.role == Role::Reasoning));
    let read = &s.turns[2];
    assert_eq!(read.files.first().map(|f| (f.path.as_str(), f.action)), Some(("/home/u/analysis/sales/data/sales.csv", FileAction::Read)));
    assert_eq!(read.text, "region,amount");
    let bash = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("Rscript summary.R")).expect("bash");
    assert!(bash.tool.as_ref().is_some_and(|t| t.is_error));
    let edit = s.turns.iter().find(|t| t.edit.is_some()).expect("edit");
    assert_eq!(edit.edit.as_ref().map(|e| e.old.as_str()), Some("mean(x)"));
    assert_eq!(edit.time.map(|t| t.millis()), Some(1_735_689_700_000), "the tree node's time");
    let with = sessions(&StoreEnv::with_home(home()), &ParseOptions { include_reasoning: true });
    assert!(session(&with, "conv-0001").turns.iter().any(|t| t.role == Role::Reasoning));
}

#[test]
fn subagents_and_default_workspace() {
    let all = sessions(&StoreEnv::with_home(home()), &ParseOptions::default());
    let child = session(&all, "conv-0001-sub1");
    assert_eq!((child.parent.as_deref(), child.kind.as_deref()), (Some("conv-0001"), Some("explore")));
    assert_eq!(child.project.as_deref(), Some("/home/u/analysis/sales"), "the parent's workspace");
    assert!(session(&all, "conv-0002").project.is_none());
    let without = sessions(&StoreEnv::with_home(home()).set("DEJA_INCLUDE_SUBAGENTS", "0"), &ParseOptions::default());
    assert!(!without.iter().any(|s| s.parent.is_some()));
}

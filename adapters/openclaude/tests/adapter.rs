//! Every test of deja-adapter-openclaude, in one test binary: the conformance kit, then
//! the rules that matter most for this dialect of the Claude-shaped family.

use std::path::Path;

use deja_adapter_openclaude::FORMAT;
use deja_core::{ExitStatus, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    FORMAT,
    relocate "DEJA_OPENCLAUDE_ROOT" => ".openclaude/projects",
    relocate "OPENCLAUDE_CONFIG_DIR" => ".openclaude",
    switch "DEJA_INCLUDE_SUBAGENTS"
);

fn fixture_sessions() -> Vec<Session> {
    let home = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/home");
    let mut out = Vec::new();
    for src in FORMAT.discover(&StoreEnv::with_home(&home)).sources {
        FORMAT.parse(&src, &ParseOptions::default(), &mut out).expect("a fixture parses");
    }
    out
}

#[test]
fn sessions_are_namespaced_and_read_as_claude_transcripts() {
    let sessions = fixture_sessions();
    let main = sessions.iter().find(|s| s.id == "4d5e6f70-0000-4000-8000-000000000004").expect("main session");
    assert_eq!(main.harness, "openclaude", "the same UUID space as Claude, kept apart by the harness id");
    assert_eq!(main.project.as_deref(), Some("/src/tool"));
    let lint = main.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("npm run lint")).expect("lint call");
    assert_eq!(lint.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(1)));
    assert!(lint.text.contains("unusedVar"), "the result is folded into the call");
    assert!(main.turns.iter().any(|t| t.edit.as_ref().is_some_and(|e| e.old.contains("unusedVar"))));
    assert!(main.turns.iter().any(|t| t.role == Role::Summary), "the compaction summary");
    assert_eq!(
        main.turns.iter().filter(|t| t.role == Role::User && t.text.contains("run the linter")).count(),
        1,
        "queued prompts are control lines"
    );
    assert!(!main.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning is not indexed by default");
    let mut indexed = main.clone();
    deja_core::normalize::normalize(&mut indexed, &Default::default(), FORMAT.info().injected);
    assert!(indexed.turns.iter().any(|t| t.role == Role::Summary && t.text.contains("unusedVar")), "the summary survives ingest");
    assert!(indexed.turns.iter().any(|t| t.text == "now run the tests"), "the system reminder is stripped, the prompt kept");
    let review = sessions.iter().find(|s| s.id == "b7c8").expect("sidechain session");
    assert_eq!((review.kind.as_deref(), review.parent.as_deref()), (Some("sidechain"), Some(main.id.as_str())));
}

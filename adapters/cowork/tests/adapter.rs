//! Every test of deja-adapter-cowork, in one test binary: the conformance kit, then the
//! rules that matter most for Cowork's metadata over Claude Code transcripts.

use deja_adapter_cowork::CoworkFormat;
use deja_core::{ExitStatus, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    CoworkFormat,
    switch "DEJA_INCLUDE_SUBAGENTS"
);

fn sessions() -> Vec<Session> {
    let home = deja_core::fixture_home!();
    let mut out = Vec::new();
    let found = CoworkFormat.discover(&StoreEnv::with_home(&home)).sources;
    assert_eq!(found.len(), 3, "two transcripts and one sub-agent run: {found:?}");
    for src in found {
        assert!(src.parts.iter().any(|p| p.extension().is_some_and(|e| e == "json")), "the metadata is a part");
        CoworkFormat.parse(&src, &ParseOptions::default(), &mut out).expect("a fixture parses");
    }
    out
}

#[test]
fn metadata_names_the_title_and_project() {
    let all = sessions();
    let s = all.iter().find(|s| s.id == "3a2b1c0d-0000-4000-8000-000000000003").expect("the cliSessionId transcript");
    assert_eq!(s.harness, "cowork", "kept apart from Claude Code's sessions");
    assert_eq!(s.title.as_deref(), Some("Quarterly report draft"), "metadata title beats ai-title");
    assert_eq!(s.project.as_deref(), Some("/Users/max/Documents/reports"), "the selected folder, not the VM cwd");
    let call = s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "Bash")).expect("bash");
    assert_eq!(call.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(1)));
    let sub = all.iter().find(|s| s.kind.as_deref() == Some("sidechain")).expect("sub-agent");
    assert_eq!(sub.parent.as_deref(), Some(s.id.as_str()));
}

#[test]
fn without_title_or_folder_the_ai_title_and_label() {
    let all = sessions();
    let s = all.iter().find(|s| s.id == "5e6f7a8b-0000-4000-8000-000000000005").expect("host-loop session");
    assert_eq!(s.title.as_deref(), Some("Offsite agenda"));
    assert_eq!(s.project.as_deref(), Some("cowork"));
    let mut indexed = s.clone();
    deja_core::normalize::normalize(&mut indexed, &Default::default(), CoworkFormat.info().injected);
    assert!(indexed.turns.iter().any(|t| t.role == Role::User && t.text == "plan a team offsite agenda"));
}

//! Every test of deja-adapter-vibe, in one test binary: the conformance kit, then the rules
//! that matter most for Mistral Vibe's two store generations.

use deja_adapter_vibe::VibeFormat;
use deja_core::testkit::session;
use deja_core::{ExitStatus, FileAction, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    VibeFormat,
    wires "VIBE_HOME" => ".vibe"
);

fn sessions(opts: &ParseOptions) -> Vec<Session> {
    let home = deja_core::fixture_home!();
    deja_core::testkit::read_readable(&VibeFormat, &StoreEnv::with_home(&home), opts)
}

#[test]
fn unified_snapshot_chunk_and_journal_tail() {
    let all = sessions(&ParseOptions::default());
    let s = session(&all, "3c4d0a1b-2c3d-6e4f-9a0b-1c2d3e4f5a6b");
    assert_eq!(s.project.as_deref(), Some("/src/shop"));
    assert_eq!(s.title.as_deref(), Some("does the build pass?"), "meta title null: the preview");
    let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
    assert_eq!(roles, vec![Role::User, Role::ToolCall, Role::ToolCall, Role::Assistant, Role::User, Role::ToolCall, Role::Assistant]);
    let make = &s.turns[1];
    assert_eq!(make.tool.as_ref().and_then(|t| t.command.as_deref()), Some("make test"));
    assert_eq!(make.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(0)));
    assert_eq!(make.text, "12 passed");
    assert_eq!(s.turns[2].files.first().map(|f| (f.path.as_str(), f.action)), Some(("/src/shop/Makefile", FileAction::Read)));
    let lint = &s.turns[5];
    assert_eq!(lint.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(2)), "the replaced entry wins");
    assert!(lint.tool.as_ref().is_some_and(|t| t.is_error) && !lint.partial);
    assert!(lint.text.contains("3 warnings"));
    assert!(s.turns[6].partial, "an answer still in progress");
    assert!(!s.turns.iter().any(|t| t.text.contains("STALE") || t.text.contains("SYSTEM PROMPT")));
}

#[test]
fn journal_only_session_injected_and_parent() {
    let all = sessions(&ParseOptions::default());
    let s = session(&all, "9f8e7d6c-5b4a-f321-8098-a7b6c5d4e3f2");
    assert_eq!(s.parent.as_deref(), Some("3c4d0a1b-2c3d-6e4f-9a0b-1c2d3e4f5a6b"));
    assert_eq!(s.turns[0].text, "what is a monad?", "the injected prompt is not a user turn");
    assert_eq!(s.turns.len(), 2);
    assert!(!all.iter().any(|s| s.id.starts_with("0badf0d0")), "an unknown store format is refused");
    assert!(!all.iter().any(|s| s.turns.iter().any(|t| t.text.contains("plugin data"))));
}

#[test]
fn release_3_0_2_write_file_effect() {
    let all = sessions(&ParseOptions::default());
    let s = session(&all, "5a6b7c8d-1e2f-6a3b-8c4d-5e6f7a8b9c0d");
    assert_eq!(s.project.as_deref(), Some("/home/dev/projects/shop"));
    let w = s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "write_file")).expect("the write_file effect");
    assert_eq!(w.files.len(), 1);
    assert!(w.files[0].path.ends_with("notes.txt"));
    assert!(!w.tool.as_ref().unwrap().is_error && w.tool.as_ref().unwrap().exit.is_none());
    let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
    assert_eq!(roles, vec![Role::User, Role::ToolCall, Role::Assistant]);
}

#[test]
fn older_messages_jsonl() {
    let all = sessions(&ParseOptions::default());
    let s = session(&all, "2b7c9d1e-aaaa-4bbb-8ccc-000000000001");
    assert_eq!(s.title.as_deref(), Some("Read the README file"));
    assert_eq!(s.turns[0].role, Role::User);
    assert!(!s.turns.iter().any(|t| t.text.contains("injected by vibe") || t.text.contains("SYSTEM PROMPT")));
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning is off by default");
    let edit = s.turns.iter().find(|t| t.edit.is_some()).expect("an edit");
    assert_eq!(edit.edit.as_ref().map(|e| (e.old.as_str(), e.new.as_deref())), Some(("demo stor", Some("demo store"))));
    let bash = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("make test")).expect("bash");
    assert_eq!(bash.text, "ok");
    assert!(s.started.is_some() && s.updated > s.started, "meta start/end bound the session");
    let with = sessions(&ParseOptions { include_reasoning: true });
    assert!(session(&with, "2b7c9d1e-aaaa-4bbb-8ccc-000000000001").turns.iter().any(|t| t.role == Role::Reasoning));
    let cut = session(&all, "5d6e7f80-bbbb-4ccc-8ddd-000000000002");
    assert_eq!(cut.parent.as_deref(), Some("2b7c9d1e-aaaa-4bbb-8ccc-000000000001"), "recovered from a cut-off meta.json");
    assert_eq!(cut.project.as_deref(), Some("/src/shop"));
}

//! Every test of deja-adapter-codebuff, in one test binary: the conformance kit, then the
//! rules that matter most for Codebuff's session directories.

use deja_adapter_codebuff::CodebuffFormat;
use deja_core::testkit::session;
use deja_core::{FileAction, ParseOptions, Role, Session, StoreEnv, Timestamp};

deja_core::conformance!(CodebuffFormat);

fn sessions(opts: &ParseOptions) -> Vec<Session> {
    let home = deja_core::fixture_home!();
    deja_core::testkit::read_readable(&CodebuffFormat, &StoreEnv::with_home(&home), opts)
}

#[test]
fn blocks_become_speech_commands_and_edits() {
    let all = sessions(&ParseOptions::default());
    let s = session(&all, "shop/2026-07-16T00-09-00.236Z");
    assert_eq!(s.project.as_deref(), Some("/src/shop"));
    assert_eq!(s.turns[0].text, "the checkout test fails\n[Image: checkout-error.png]");
    let npm = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("npm test -- checkout")).expect("npm");
    assert_eq!(npm.text, "1 failing", "the inline output is the call's text");
    assert_eq!(npm.time, Timestamp::parse_str("2026-07-16T00:09:01Z"), "12:09 AM on the directory's date, not before the prompt");
    let read = s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "read_files")).expect("read_files");
    assert_eq!(read.files.len(), 2);
    assert_eq!(read.files[0].path, "/src/shop/src/cart.ts");
    let edit = s.turns.iter().find(|t| t.files.first().is_some_and(|f| f.action == FileAction::Edit)).expect("str_replace");
    assert_eq!(edit.edit.as_ref().map(|e| e.old.as_str()), Some("tax = 0.2"));
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning off by default");
    assert!(!s.turns.iter().any(|t| t.text.contains("Out of credits") || t.text == "src/cart.ts"), "error banner and agent block skipped");
    let with = sessions(&ParseOptions { include_reasoning: true });
    assert!(session(&with, &s.id).turns.iter().any(|t| t.role == Role::Reasoning && t.text == "run it"));
}

#[test]
fn times_of_day_roll_over_midnight() {
    let all = sessions(&ParseOptions::default());
    let s = session(&all, "shop/2026-07-16T23-50-00");
    assert_eq!(s.project.as_deref(), Some("shop"), "no cwd in run-state: the project label");
    assert_eq!(s.turns[0].time, Timestamp::parse_str("2026-07-16T23:52:00Z"));
    assert_eq!(s.turns.last().and_then(|t| t.time), Timestamp::parse_str("2026-07-17T00:03:00Z"), "the clock wrapped");
    let notes = session(&all, "notes/2026-07-17");
    assert_eq!(notes.turns[0].time, Timestamp::parse_str("2026-07-17T00:00:00Z"), "the directory's date");
    assert_eq!(notes.turns[1].role, Role::Assistant);
    assert!(!all.iter().any(|s| s.id.starts_with("notes/2026-07-18")), "a torn transcript yields nothing");
}

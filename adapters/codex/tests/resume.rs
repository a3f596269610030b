//! Incremental reads of a growing rollout: only the new turns, numbered on, with the
//! identity recovered from the head.

use crate::common::*;
use deja_adapter_codex::CodexFormat;
use deja_core::model::Resume;
use deja_core::{ExitStatus, HarnessFormat, ParseOptions, Role, SourceRef};

/// Writes the first `split` lines of a fixture, parses, appends the rest, parses again
/// from the resume point. Returns (first parse, resumed parse).
fn split_parse(rel: &str, split: usize) -> (deja_core::Session, Option<deja_core::Session>, SourceRef) {
    let text = std::fs::read_to_string(fixture(rel)).expect("fixture");
    let lines: Vec<&str> = text.lines().collect();
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(fixture(rel).file_name().expect("name"));
    std::fs::write(&path, lines[..split].join("\n") + "\n").expect("write");
    let src = SourceRef::file(&path).append_only();
    let mut first = Vec::new();
    let stats = CodexFormat.parse(&src, &ParseOptions::default(), &mut first).expect("parse");
    let first = first.remove(0);
    assert_eq!(stats.end_offset, std::fs::metadata(&path).expect("meta").len());

    std::fs::write(&path, lines.join("\n") + "\n").expect("append");
    let resumed_src = SourceRef {
        // Where the indexer resumes, with the state the first read returned.
        resume: Some(Resume::after(&stats, &first)),
        ..src.clone()
    };
    let mut second = Vec::new();
    let stats2 = CodexFormat.parse(&resumed_src, &ParseOptions::default(), &mut second).expect("parse");
    assert_eq!(stats2.end_offset, std::fs::metadata(&path).expect("meta").len(), "absolute end offset");
    (first, second.pop(), resumed_src)
}

#[test]
fn resume_reads_only_the_tail() {
    // Split after the first shell call's CommandExecution (line 13 of 24).
    let (first, second, _) = split_parse(CURRENT, 13);
    assert_eq!(first.id, "019ad3f1-2e4b-7c5d-9e6f-a7b8c9d0e1f2");
    assert_eq!(first.turns.iter().map(|t| t.role).collect::<Vec<_>>(), [Role::User, Role::ToolCall]);
    let second = second.expect("new turns");
    assert_eq!(second.id, first.id, "identity from the head");
    assert_eq!(second.project.as_deref(), Some("/home/dev/src/tern"), "cwd from the head");
    assert_eq!(second.turns.iter().map(|t| t.seq).collect::<Vec<_>>(), [2, 3, 4]);
    assert_eq!(second.turns.iter().map(|t| t.role).collect::<Vec<_>>(), [Role::ToolCall, Role::ToolCall, Role::Assistant]);
    assert_eq!(second.turns[1].tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(0)));
    assert!(second.turns.iter().all(|t| t.role != Role::User), "the prompt is not read again");
}

#[test]
fn resume_between_a_message_and_its_item_copy_does_not_duplicate() {
    // Line 21 is the assistant response_item, line 22 its AgentMessage copy.
    let (first, second, _) = split_parse(CURRENT, 21);
    assert_eq!(first.turns.last().map(|t| t.role), Some(Role::Assistant));
    assert!(second.is_none_or(|s| s.turns.is_empty()), "the tail holds only the event_msg copy and bookkeeping");
}

#[test]
fn resume_of_a_legacy_rollout_uses_event_messages() {
    let (first, second, _) = split_parse(LEGACY, 3);
    assert_eq!(first.id, "7c1d9e22-4a5b-4c6d-8e7f-90a1b2c3d4e5");
    let second = second.expect("new turns");
    assert_eq!(second.id, first.id);
    assert_eq!(second.turns.iter().map(|t| t.role).collect::<Vec<_>>(), [Role::ToolCall, Role::Assistant]);
    assert_eq!(second.turns[0].seq, first.turns.len() as u32);
}

#[test]
fn resume_without_a_readable_head_keeps_the_earlier_id() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("rollout-2026-01-01T00-00-00-unknown.jsonl");
    let line =
        r#"{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":"hello"}}"#;
    std::fs::write(&path, format!("{line}\n{line}\n")).expect("write");
    let src = SourceRef {
        resume: Some(Resume { offset: line.len() as u64 + 1, next_seq: 1, session_id: "earlier-id".into(), ..Default::default() }),
        ..SourceRef::file(&path).append_only()
    };
    let mut out = Vec::new();
    CodexFormat.parse(&src, &ParseOptions::default(), &mut out).expect("parse");
    assert_eq!(out[0].id, "earlier-id");
    assert_eq!(out[0].turns[0].seq, 1);
}

//! Every test of deja-adapter-gptme, in one test binary: the conformance kit (snapshots of
//! every source in `tests/fixtures/home/`, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for gptme's logs.

use deja_adapter_gptme::{shell_blocks, topic_label, GptmeFormat};
use deja_core::{HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(GptmeFormat);

fn fixture_sessions() -> Vec<Session> {
    let home = deja_core::fixture_home!();
    let mut out = Vec::new();
    let found = GptmeFormat.discover(&StoreEnv::with_home(&home)).sources;
    assert_eq!(found.len(), 3, "a directory without conversation.jsonl is no source");
    for src in found {
        GptmeFormat.parse(&src, &ParseOptions::default(), &mut out).expect("a fixture parses");
    }
    out
}

#[test]
fn the_pages_example() {
    let all = fixture_sessions();
    let s = all.iter().find(|s| s.id == "2026-06-13-fix-flaky-test").expect("session");
    assert_eq!(s.project.as_deref(), Some("fix-flaky-test"));
    assert_eq!((s.turns[0].role, s.turns[0].text.as_str()), (Role::User, "the retry test is flaky"));
    assert!(!s.turns.iter().any(|t| t.text.contains("You are gptme")), "system messages are skipped");
    let commands: Vec<&str> = s.turns.iter().filter_map(|t| t.tool.as_ref().and_then(|x| x.command.as_deref())).collect();
    assert_eq!(commands, vec!["pytest -x tests/test_retry.py --count 5", "git diff --stat"]);
    assert!(s.turns.iter().any(|t| t.role == Role::ToolOutput && t.text == "1 failed, 4 passed"));
}

#[test]
fn names_and_fences() {
    assert_eq!(topic_label("2026-06-13-write-hello-world"), "write-hello-world");
    assert_eq!(topic_label("2026-06-13-101500-write-hello-world"), "write-hello-world");
    assert_eq!(topic_label("2026-06-13"), "2026-06-13");
    assert_eq!(topic_label("scratch"), "scratch");
    assert_eq!(shell_blocks("```shell\nls\n```\n```python\nx\n```\n```shell\n"), vec!["ls"], "an unclosed block is not a command");
}

/// gptme 0.35.1 (`gptme -n --tool-format tool`, then `-r`, against a mock model): tool calls
/// are `@shell(<call id>): {"command": …}` lines in the assistant text, their results
/// `system` messages with that `call_id`, the autonomous loop's `<system>No tool call
/// detected…` nudge is a user message, and the working directory is in a hidden system
/// message.
#[test]
fn release_0_35_1_tool_format() {
    let all = fixture_sessions();
    let s = all.iter().find(|s| s.id == "2026-12-01-lexer-bom").expect("session");
    assert_eq!(s.project.as_deref(), Some("/home/dev/src/tern"), "the working directory, not the topic words");
    let users: Vec<&str> = s.turns.iter().filter(|t| t.role == Role::User).map(|t| t.text.as_str()).collect();
    assert_eq!(users.len(), 2, "the `<system>` nudge is not speech: {users:?}");
    assert!(users[0].starts_with("make the lexer skip BOMs"));
    assert_eq!(users[1], "now add a test for it");
    let calls: Vec<_> = s.turns.iter().filter(|t| t.role == Role::ToolCall).collect();
    assert_eq!(calls.len(), 6, "four shell calls and two `complete` calls");
    let shell = calls[0].tool.as_ref().expect("tool");
    assert_eq!((shell.name.as_str(), shell.command.as_deref()), ("shell", Some("grep -c feff lex.py")));
    assert!(calls[0].text.contains("Ran allowlisted command"), "the system result is folded into its call");
    assert!(!s.turns.iter().any(|t| t.role == Role::Assistant && t.text.contains("@shell(")), "tool lines are not prose");
    let answers: Vec<&str> = s.turns.iter().filter(|t| t.role == Role::Assistant).map(|t| t.text.as_str()).collect();
    assert_eq!(answers, ["The lexer now skips a leading BOM.", "Added test_bom."]);
}

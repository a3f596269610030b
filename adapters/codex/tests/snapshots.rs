//! One snapshot per fixture, plus plain asserts for the rules that matter most.

use crate::common::*;
use deja_core::{ExitStatus, FileAction, ParseOptions, ParseStats, Role, Session};
use serde_json::{json, Value};

/// Sessions and stats with the machine-specific fixture prefix replaced.
fn snap(sessions: &[Session], stats: &ParseStats) -> Value {
    let prefix = env!("CARGO_MANIFEST_DIR");
    let mut v = serde_json::to_value(sessions).expect("serializes");
    if let Some(list) = v.as_array_mut() {
        for s in list {
            if let Some(p) = s.pointer_mut("/source/path") {
                if let Some(text) = p.as_str() {
                    *p = Value::String(text.replace(prefix, "[fixtures]"));
                }
            }
        }
    }
    json!({"records": stats.records, "skipped": stats.skipped, "sessions": v})
}

fn roles(s: &Session) -> Vec<Role> {
    s.turns.iter().map(|t| t.role).collect()
}

fn texts(s: &Session, role: Role) -> Vec<&str> {
    s.turns.iter().filter(|t| t.role == role).map(|t| t.text.as_str()).collect()
}

fn one(rel: &str) -> (Session, ParseStats) {
    let (mut sessions, stats) = parse_fixture(rel);
    assert_eq!(sessions.len(), 1, "{rel}");
    (sessions.remove(0), stats)
}

#[test]
fn legacy_event_msg_only() {
    let (sessions, stats) = parse_fixture(LEGACY);
    insta::assert_json_snapshot!("legacy", snap(&sessions, &stats));
    let s = &sessions[0];
    assert_eq!(s.id, "7c1d9e22-4a5b-4c6d-8e7f-90a1b2c3d4e5", "legacy rollouts key on session_id");
    assert_eq!(s.project.as_deref(), Some("/home/dev/src/weather-cli"));
    assert_eq!(roles(s), [Role::User, Role::ToolCall, Role::Assistant]);
    assert!(!texts(s, Role::User)[0].contains("environment_context"), "kind=environment_context is harness text");
    let tool = s.turns[1].tool.as_ref().expect("tool");
    assert_eq!(tool.command.as_deref(), Some("cargo test -p weather forecast_empty"));
    assert_eq!(tool.exit, Some(ExitStatus::Code(101)));
}

#[test]
fn mid_generation_dual_stream() {
    let (sessions, stats) = parse_fixture(MID);
    insta::assert_json_snapshot!("mid", snap(&sessions, &stats));
    let s = &sessions[0];
    assert_eq!(s.id, "019a4b2c-7d1e-7f00-a1b2-c3d4e5f60718", "payload.id wins over session_id");
    assert_eq!(texts(s, Role::User).iter().filter(|t| t.starts_with("run the invoice tests")).count(), 1, "event_msg copy dropped");
    assert_eq!(texts(s, Role::Assistant).len(), 1);
    assert!(s.turns.iter().all(|t| t.role != Role::Reasoning));
    assert!(s.turns.iter().all(|t| !t.text.contains("permissions instructions")), "developer preamble skipped");
    let go = &s.turns[2];
    assert_eq!(go.role, Role::ToolCall);
    let tool = go.tool.as_ref().expect("tool");
    assert_eq!(tool.command.as_deref(), Some("go test ./invoice/..."));
    assert_eq!(tool.exit, Some(ExitStatus::Code(1)));
    assert!(tool.is_error);
    assert!(go.text.starts_with("--- FAIL: TestRoundCents"), "framing stripped: {:?}", go.text);
    let patch = &s.turns[3];
    assert_eq!(patch.tool.as_ref().map(|t| t.name.as_str()), Some("apply_patch"));
    assert_eq!(patch.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(0)));
    let paths: Vec<(&str, FileAction)> = patch.files.iter().map(|f| (f.path.as_str(), f.action)).collect();
    assert_eq!(
        paths,
        [
            ("/home/dev/src/billing/invoice/round.go", FileAction::Edit),
            ("/home/dev/src/billing/invoice/round_test.go", FileAction::Edit),
            ("/home/dev/src/billing/docs/ROUNDING.md", FileAction::Write)
        ]
    );
    let edit = patch.edit.as_ref().expect("edit");
    assert_eq!(edit.path, "/home/dev/src/billing/invoice/round.go");
    assert_eq!(edit.old, "\treturn math.Floor(x*100) / 100");
    assert_eq!(s.turns[4].edit.as_ref().map(|e| e.path.as_str()), Some("/home/dev/src/billing/invoice/round_test.go"));
    let mcp = &s.turns[5];
    assert_eq!(mcp.tool.as_ref().map(|t| t.name.as_str()), Some("mcp__linear__get_issue"));
    assert_eq!(mcp.tool.as_ref().and_then(|t| t.command.as_deref()), None);
    assert_eq!(s.turns[6].tool.as_ref().and_then(|t| t.command.as_deref()), Some("go test ./invoice/..."), "argv cmd unwrapped");
}

#[test]
fn mid_generation_reasoning_opt_in_is_not_doubled() {
    let (sessions, _) = parse_path(&fixture(MID), &ParseOptions { include_reasoning: true });
    assert_eq!(texts(&sessions[0], Role::Reasoning), ["**Running the invoice tests first**"]);
}

#[test]
fn current_0171() {
    let (sessions, stats) = parse_fixture(CURRENT);
    insta::assert_json_snapshot!("current", snap(&sessions, &stats));
    let s = &sessions[0];
    assert_eq!(s.id, "019ad3f1-2e4b-7c5d-9e6f-a7b8c9d0e1f2");
    assert_eq!(s.project.as_deref(), Some("/home/dev/src/tern"));
    assert_eq!(roles(s), [Role::User, Role::ToolCall, Role::ToolCall, Role::ToolCall, Role::Assistant]);
    assert_eq!(texts(s, Role::User), ["cargo test fails in the parser crate with an index panic, can you fix it?"]);
    let first = &s.turns[1];
    assert_eq!(first.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(101)));
    assert_eq!(first.text.matches("index out of bounds").count(), 1, "CommandExecution output not appended twice");
    let rerun = &s.turns[3];
    assert_eq!(rerun.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(0)), "exit filled from CommandExecution");
    assert_eq!(rerun.text, "test result: ok. 42 passed; 0 failed");
    assert_eq!(s.turns[2].files.len(), 1);
    assert_eq!(s.turns[2].edit.as_ref().map(|e| e.old.as_str()), Some("        let c = self.src[self.pos];"));
    assert_eq!(s.started.map(|t| t.to_rfc3339()).as_deref(), Some("2026-11-30T10:00:00.000Z"));
    assert_eq!(s.updated.map(|t| t.to_rfc3339()).as_deref(), Some("2026-11-30T10:00:18.300Z"), "non-message lines count");
}

#[test]
fn current_reasoning_opt_in() {
    let (sessions, _) = parse_path(&fixture(CURRENT), &ParseOptions { include_reasoning: true });
    assert_eq!(texts(&sessions[0], Role::Reasoning), ["**Reproducing the panic** before touching the lexer."]);
}

#[test]
fn interrupted_run_keeps_the_prompt_once() {
    let (sessions, stats) = parse_fixture(INTERRUPTED);
    insta::assert_json_snapshot!("interrupted", snap(&sessions, &stats));
    assert_eq!(roles(&sessions[0]), [Role::User]);
    assert!(sessions[0].turns.iter().all(|t| !t.partial));
}

#[test]
fn older_message_shape() {
    let (sessions, stats) = parse_fixture(OLDER_SHAPE);
    insta::assert_json_snapshot!("older_shape", snap(&sessions, &stats));
    let s = &sessions[0];
    assert_eq!(roles(s), [Role::User, Role::Assistant, Role::User]);
    assert_eq!(texts(s, Role::User), ["add a --json flag to the export command", "and document it in the README"]);
}

#[test]
fn older_tools_and_compaction() {
    let (sessions, stats) = parse_fixture(OLDER_TOOLS);
    insta::assert_json_snapshot!("older_tools", snap(&sessions, &stats));
    let s = &sessions[0];
    assert_eq!(roles(s), [Role::User, Role::ToolCall, Role::ToolCall, Role::ToolCall, Role::Summary, Role::Assistant, Role::ToolCall]);
    assert_eq!(s.turns[1].edit.as_ref().map(|e| e.path.as_str()), Some("/home/dev/src/greeter/src/main.rs"), "apply_patch via shell argv");
    assert_eq!(s.turns[1].tool.as_ref().and_then(|t| t.command.as_deref()), None);
    let test = s.turns[2].tool.as_ref().expect("tool");
    assert_eq!(test.command.as_deref(), Some("cargo test"));
    assert_eq!(test.exit, Some(ExitStatus::Code(101)), "exit from JSON-encoded output metadata");
    assert_eq!(s.turns[2].text, "error[E0425]: cannot find value `greting` in this scope");
    assert_eq!(s.turns[3].tool.as_ref().and_then(|t| t.command.as_deref()), Some("git diff --stat"));
    let heredoc = &s.turns[6];
    assert_eq!(
        heredoc.tool.as_ref().map(|t| (t.name.as_str(), t.command.is_none())),
        Some(("apply_patch", true)),
        "heredoc patch is an edit"
    );
    assert_eq!(heredoc.edit.as_ref().map(|e| e.old.as_str()), Some("let greting = \"hello\";"));
}

#[test]
fn odd_ids_garbage_and_torn_tail() {
    let (sessions, stats) = parse_fixture(ODD);
    insta::assert_json_snapshot!("odd", snap(&sessions, &stats));
    let s = &sessions[0];
    assert_eq!(s.id, "6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d", "non-string payload.id keeps the filename id");
    assert_eq!(stats.skipped, 2, "garbage line and torn tail");
    assert_eq!(roles(s), [Role::User, Role::ToolCall, Role::ToolOutput, Role::ToolCall, Role::Assistant]);
    assert_eq!(s.turns[3].tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(2)), "numeric call_id pairs");
    assert!(!s.turns.iter().any(|t| t.text.contains("now ad")), "torn line not emitted");
}

#[test]
fn bom_is_tolerated() {
    let (s, stats) = one(BOM);
    assert_eq!(stats.skipped, 0);
    assert_eq!(roles(&s), [Role::User, Role::Assistant]);
    insta::assert_json_snapshot!("bom", snap(&[s], &stats));
}

#[test]
fn fork_keeps_its_own_identity() {
    let (s, stats) = one(FORK);
    assert_eq!(s.id, "019b0000-f0f0-7000-8000-00000000f0f1");
    assert_eq!(s.project.as_deref(), Some("/home/dev/src/forked"));
    insta::assert_json_snapshot!("fork", snap(&[s], &stats));
}

#[test]
fn command_execution_without_function_call() {
    let (s, stats) = one(EXEC_ONLY);
    insta::assert_json_snapshot!("exec_only", snap(std::slice::from_ref(&s), &stats));
    assert_eq!(s.project.as_deref(), Some("/home/dev/src/my app"), "cwd from the CommandExecution file URI");
    assert_eq!(roles(&s), [Role::User, Role::ToolCall, Role::ToolCall, Role::Assistant]);
    assert_eq!(s.turns[1].tool.as_ref().and_then(|t| t.command.as_deref()), Some("du -sh target"));
    assert_eq!(s.turns[2].tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(1)));
}

#[test]
fn archived_rollout() {
    let (s, stats) = one(ARCHIVED);
    assert_eq!(roles(&s), [Role::User, Role::Assistant]);
    insta::assert_json_snapshot!("archived", snap(&[s], &stats));
}

#[test]
fn history_only_orphans() {
    let (sessions, stats) = parse_fixture(HISTORY);
    insta::assert_json_snapshot!("history", snap(&sessions, &stats));
    assert_eq!(sessions.len(), 1, "ids with a rollout (by file name, payload.id or session_id) are left to the rollout");
    let s = &sessions[0];
    assert_eq!(s.id, "0199bb11-aaaa-7bbb-8ccc-0123456789ab");
    assert_eq!(s.project.as_deref(), Some("history"));
    assert_eq!(texts(s, Role::User), ["draft release notes for 2.4", "shorter, and mention the CSV export fix"]);
    assert_eq!(s.turns[0].time.map(|t| t.to_rfc3339()).as_deref(), Some("2026-04-01T08:00:00.000Z"));
    assert_eq!(stats.skipped, 2, "garbage line and torn tail");
}

#[test]
fn history_alone_emits_every_id() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("history.jsonl");
    std::fs::copy(fixture(HISTORY), &path).expect("copy");
    let (sessions, _) = parse_path(&path, &ParseOptions::default());
    assert_eq!(sessions.len(), 5);
    assert!(sessions.iter().all(|s| s.project.as_deref() == Some("history") && s.turns.iter().all(|t| t.role == Role::User)));
}

#[test]
fn interrupted_without_the_prompt_item_falls_back_to_user_message() {
    // Only the harness preamble is roled; the prompt survives as the UserMessage item.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("rollout-2026-12-01T16-20-00-019ad8a0-8a7b-7c6d-8e5f-4a3b2c1d0e9f.jsonl");
    let text = std::fs::read_to_string(fixture(INTERRUPTED)).expect("read");
    let kept: Vec<&str> = text.lines().filter(|l| !l.contains("\"input_text\",\"text\":\"write a benchmark")).collect();
    assert_eq!(kept.len(), text.lines().count() - 1);
    std::fs::write(&path, kept.join("\n") + "\n").expect("write");
    let (sessions, _) = parse_path(&path, &ParseOptions::default());
    assert_eq!(texts(&sessions[0], Role::User), ["write a benchmark for the tokenizer hot loop"]);
}

/// Codex 0.171.0 (`codex exec`, then `codex exec resume --last`, against a mock model): a
/// shell-invoked `apply_patch` heredoc with its `FileChange` item and a result framed twice
/// (the shell tool's frame around apply_patch's), a `reasoning` item with a summary, and a
/// resumed turn whose command exits 3.
#[test]
fn release_0_171_apply_patch_reasoning_resume() {
    let (s, stats) = one(RELEASE_0_171);
    insta::assert_json_snapshot!("release_0_171", snap(std::slice::from_ref(&s), &stats));
    assert_eq!(stats.skipped, 0);
    assert_eq!(s.id, "019ad9c0-5b1a-7e2f-9c3d-4e5f6a7b8c9d");
    assert_eq!(s.project.as_deref(), Some("/home/dev/src/tern"));
    assert_eq!(roles(&s), [Role::User, Role::ToolCall, Role::Assistant, Role::User, Role::ToolCall, Role::Assistant]);
    assert_eq!(
        texts(&s, Role::User),
        ["make the tokenizer skip BOMs", "run the tokenizer check"],
        "the environment preamble is not speech"
    );
    let patch = &s.turns[1];
    assert_eq!(patch.tool.as_ref().map(|t| t.name.as_str()), Some("apply_patch"));
    assert_eq!(
        patch.files.iter().map(|f| (f.path.as_str(), f.action)).collect::<Vec<_>>(),
        [("/home/dev/src/tern/src/lex.rs", FileAction::Edit)]
    );
    assert_eq!(patch.text, "Success. Updated the following files:\nM src/lex.rs", "both frames are stripped");
    assert_eq!(patch.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(0)), "the inner frame's exit code");
    let failed = s.turns[4].tool.as_ref().expect("tool");
    assert_eq!(failed.command.as_deref(), Some("grep -c BOM fixtures/*.txt; exit 3"));
    assert_eq!(failed.exit, Some(ExitStatus::Code(3)));
    assert!(s.turns.iter().all(|t| !t.text.contains("three bytes")), "reasoning is not indexed by default");
    let (with, _) = parse_path(&fixture(RELEASE_0_171), &ParseOptions { include_reasoning: true });
    assert_eq!(texts(&with[0], Role::Reasoning), ["the BOM is three bytes at the start", "the BOM is three bytes at the start"]);
}

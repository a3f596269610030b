//! One snapshot per fixture (a record kind or shape variant), plus plain asserts for the
//! rules that matter most.

use std::path::{Path, PathBuf};

use deja_adapter_claude::FORMAT;
use deja_core::{ExitStatus, FileAction, HarnessFormat, ParseOptions, ParseStats, Role, Session, SourceRef};

fn projects() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/home/.claude/projects")
}

fn fixture(rel: &str) -> PathBuf {
    projects().join("-Users-dana-code-billing-api").join(rel)
}

fn parse_with(path: &Path, opts: &ParseOptions) -> (Vec<Session>, ParseStats) {
    let mut out: Vec<Session> = Vec::new();
    let stats = FORMAT.parse(&SourceRef::file(path).append_only(), opts, &mut out).expect("fixture parses");
    for s in &mut out {
        let shown = s.source.path.display().to_string().replace(env!("CARGO_MANIFEST_DIR"), "<crate>");
        s.source.path = PathBuf::from(shown);
    }
    (out, stats)
}

fn parse(rel: &str) -> Vec<Session> {
    parse_with(&fixture(rel), &ParseOptions::default()).0
}

fn roles(s: &Session) -> Vec<Role> {
    s.turns.iter().map(|t| t.role).collect()
}

#[test]
fn queue_prompt() {
    let sessions = parse("queue_prompt.jsonl");
    insta::assert_json_snapshot!(sessions);
    let [s] = sessions.as_slice() else { panic!("one session") };
    assert_eq!(s.id, "0b7d3c1e-2f4a-4c5b-9d6e-7f8091a2b3c4");
    assert_eq!(s.project.as_deref(), Some("/Users/dana/code/billing-api"));
    assert_eq!(roles(s), [Role::User, Role::Assistant], "queue content and attachments are not turns");
    let node = s.turns[1].node.as_ref().expect("node");
    assert_eq!(node.parent.as_deref(), Some("u-100"), "the answer links to its prompt through the attachments");
}

#[test]
fn split_message() {
    let sessions = parse("split_message.jsonl");
    insta::assert_json_snapshot!(sessions);
    let s = &sessions[0];
    assert_eq!(roles(s), [Role::User, Role::Assistant, Role::ToolCall, Role::Assistant]);
    assert_eq!(s.turns.iter().filter(|t| t.text.contains("Running the invoice tests.")).count(), 1, "repeated text indexed once");
    let call = &s.turns[2];
    let tool = call.tool.as_ref().expect("tool");
    assert_eq!(tool.command.as_deref(), Some("go test ./invoice/..."));
    assert_eq!(tool.exit, Some(ExitStatus::Code(0)));
    assert!(call.text.contains("0.412s"), "result folded into the call");
    assert_eq!(s.turns[3].text, "All invoice tests pass.\nNo rounding regressions.", "one API message, one turn");
}

#[test]
fn bash_exit() {
    let sessions = parse("bash_exit.jsonl");
    insta::assert_json_snapshot!(sessions);
    let calls: Vec<_> = sessions[0].turns.iter().filter_map(|t| t.tool.as_ref().map(|tool| (t, tool))).collect();
    assert_eq!(calls.len(), 5);
    assert_eq!(calls[0].1.exit, Some(ExitStatus::Code(2)));
    assert!(calls[0].1.is_error);
    assert_eq!(calls[0].0.text, "make: *** [nightly] Error 124", "the exit line is structure, not output");
    assert_eq!(calls[1].1.exit, Some(ExitStatus::Code(101)), "`Error: Exit code N` form");
    assert_eq!(calls[2].1.exit, Some(ExitStatus::Code(0)));
    assert!(!calls[2].1.is_error);
    assert_eq!(calls[3].1.exit, None, "a background command has not exited");
    assert_eq!(calls[4].1.exit, None, "an interrupted command has no exit code");
    assert!(calls[4].1.is_error);
}

#[test]
fn file_tools() {
    let sessions = parse("file_tools.jsonl");
    insta::assert_json_snapshot!(sessions);
    let s = &sessions[0];
    let files: Vec<_> = s.turns.iter().flat_map(|t| t.files.iter().map(|f| (f.path.rsplit('/').next().unwrap_or(""), f.action))).collect();
    assert_eq!(
        files,
        [
            ("round.go", FileAction::Read),
            ("round.go", FileAction::Edit),
            ("round_test.go", FileAction::Edit),
            ("rounding.md", FileAction::Write),
            ("rates.ipynb", FileAction::Edit),
        ]
    );
    let edit = s.turns[2].edit.as_ref().expect("Edit span");
    assert_eq!(edit.old, "return math.Floor(x)");
    assert_eq!(edit.new.as_deref(), Some("return math.RoundToEven(x)"));
    let multi = s.turns[3].edit.as_ref().expect("MultiEdit spans");
    assert_eq!(multi.old, "want: 2.0\nwant: 3.0");
    assert!(s.turns[4].edit.is_none(), "Write replaces no span");
}

#[test]
fn mcp_result() {
    let sessions = parse("mcp_result.jsonl");
    insta::assert_json_snapshot!(sessions);
    let s = &sessions[0];
    assert_eq!(roles(s), [Role::User, Role::ToolCall, Role::ToolOutput, Role::Assistant]);
    assert_eq!(s.turns[1].text, "BILL-482: EUR invoices off by one cent\nFinance wants half-even rounding before the March close.");
    assert_eq!(s.turns[1].tool.as_ref().map(|t| t.name.as_str()), Some("mcp__linear__get_issue"));
    assert_eq!(s.turns[1].tool.as_ref().and_then(|t| t.exit.clone()), None, "only Bash has exit status");
}

#[test]
fn thinking() {
    let sessions = parse("thinking.jsonl");
    insta::assert_json_snapshot!(sessions);
    assert!(sessions[0].turns.iter().all(|t| t.role != Role::Reasoning), "reasoning is opt-in");
    assert!(!sessions[0].turns.iter().any(|t| t.text.contains("minor units, so rounding belongs")));
}

#[test]
fn thinking_with_reasoning() {
    let (sessions, _) = parse_with(&fixture("thinking.jsonl"), &ParseOptions { include_reasoning: true });
    insta::assert_json_snapshot!(sessions);
    assert_eq!(roles(&sessions[0]), [Role::User, Role::Reasoning, Role::Assistant]);
}

#[test]
fn compaction() {
    let sessions = parse("compaction.jsonl");
    insta::assert_json_snapshot!(sessions);
    let s = &sessions[0];
    assert_eq!(roles(s), [Role::User, Role::Summary, Role::User, Role::Assistant]);
    assert!(!s.turns.iter().any(|t| t.text.contains("Caveat:")), "isMeta records are harness text");
}

#[test]
fn summary_title() {
    let sessions = parse("summary_title.jsonl");
    insta::assert_json_snapshot!(sessions);
    assert_eq!(sessions[0].title.as_deref(), Some("EUR half-even rounding"), "the summary whose leaf is in this file");
}

#[test]
fn title_lines() {
    // 2.1.332 writes `custom-title` (a /rename) and `ai-title` lines, last wins, and a
    // forked session's copied lines carry `forkedFrom`.
    let sessions = parse("title_lines.jsonl");
    insta::assert_json_snapshot!(sessions);
    let [s] = sessions.as_slice() else { panic!("one session") };
    assert_eq!(s.title.as_deref(), Some("Refund idempotency"), "the name given wins over a later generated title");
    assert_eq!((s.kind.as_deref(), s.parent.as_deref()), (Some("fork"), Some("9e6a2f0b-1c3d-4f4e-85f6-08192a3b4c5d")));
}

#[test]
fn interrupted() {
    let sessions = parse("interrupted.jsonl");
    insta::assert_json_snapshot!(sessions);
    let [s] = sessions.as_slice() else { panic!("one session") };
    assert_eq!(roles(s), [Role::User]);
    assert_eq!(s.turns[0].text, "profile the invoice export");
}

#[test]
fn subagent_file() {
    let sessions = parse("9e6a2f0b-1c3d-4f4e-85f6-08192a3b4c5d/subagents/agent-a3f9c2.jsonl");
    insta::assert_json_snapshot!(sessions);
    let [s] = sessions.as_slice() else { panic!("one session") };
    assert_eq!(s.id, "a3f9c2");
    assert_eq!(s.kind.as_deref(), Some("sidechain"));
    assert_eq!(s.parent.as_deref(), Some("9e6a2f0b-1c3d-4f4e-85f6-08192a3b4c5d"));
    assert_eq!(s.agent.as_deref(), Some("caveman:cavecrew-reviewer"));
    assert_eq!(roles(s), [Role::User, Role::ToolCall, Role::Assistant]);
}

#[test]
fn sidechain_inline() {
    let sessions = parse("sidechain_inline.jsonl");
    insta::assert_json_snapshot!(sessions);
    let [main, side] = sessions.as_slice() else { panic!("main + sidechain") };
    assert_eq!(main.id, "0f7b3a1c-2d4e-4a5f-96a7-192a3b4c5d6e");
    assert!(main.kind.is_none());
    assert!(!main.turns.iter().any(|t| t.text == "Check tax.go rounding"), "the sub-agent's prompt is not the user's speech");
    assert_eq!(side.id, "b71d04");
    assert_eq!(side.parent.as_deref(), Some(main.id.as_str()));
    assert_eq!(side.agent.as_deref(), Some("reviewer"));
}

#[test]
fn bom() {
    let sessions = parse("bom.jsonl");
    insta::assert_json_snapshot!(sessions);
    assert_eq!(sessions[0].turns[0].role, Role::User, "the opening turn survives the BOM");
}

#[test]
fn torn() {
    let (sessions, stats) = parse_with(&fixture("torn.jsonl"), &ParseOptions::default());
    insta::assert_json_snapshot!(sessions);
    assert_eq!(stats.skipped, 1);
    assert_eq!(sessions[0].turns.len(), 2);
    let len = std::fs::read(fixture("torn.jsonl")).expect("fixture").len() as u64;
    assert!(stats.end_offset < len, "the torn line is left to be re-read");
}

#[test]
fn garbage() {
    let (sessions, stats) = parse_with(&fixture("garbage.jsonl"), &ParseOptions::default());
    insta::assert_json_snapshot!(sessions);
    assert_eq!(stats.skipped, 2, "a non-JSON line and a JSON non-object");
    assert_eq!(roles(&sessions[0]), [Role::User, Role::Assistant]);
}

#[test]
fn numeric_ts() {
    let sessions = parse("numeric_ts.jsonl");
    insta::assert_json_snapshot!(sessions);
    let s = &sessions[0];
    assert_eq!(s.started.map(|t| t.0), Some(1_784_278_800_000));
    assert_eq!(s.updated.map(|t| t.0), Some(1_784_278_805_250));
}

#[test]
fn old_style_without_cwd() {
    let (sessions, _) =
        parse_with(&projects().join("-home-sam-src-web-ui/5e2a8f6b-7c9d-4f0e-abfc-6e7f8091a2b3.jsonl"), &ParseOptions::default());
    insta::assert_json_snapshot!(sessions);
    let s = &sessions[0];
    assert_eq!(s.project.as_deref(), Some("web/ui"), "undecodable directory falls back to the last two parts");
    assert_eq!(roles(s), [Role::User, Role::Assistant, Role::ToolCall]);
    assert_eq!(s.turns[2].tool.as_ref().and_then(|t| t.command.as_deref()), Some("npm run build-storybook"));
}

/// A session run from `$HOME` whose files mostly sit in one repository takes that
/// repository as its project.
#[test]
fn git_majority_overrides_project() {
    let tmp = tempfile::tempdir().expect("tmp");
    let repo = tmp.path().join("code/ledger");
    std::fs::create_dir_all(repo.join(".git")).expect("git dir");
    std::fs::create_dir_all(repo.join("src")).expect("src");
    let files: Vec<String> = ["src/a.rs", "src/b.rs", "Cargo.toml"]
        .iter()
        .map(|f| {
            let p = repo.join(f);
            std::fs::write(&p, "x").expect("file");
            p.display().to_string()
        })
        .collect();
    let home = tmp.path().display().to_string();
    let mut lines = vec![format!(
        r#"{{"type":"user","uuid":"u1","parentUuid":null,"cwd":"{home}","sessionId":"s1","timestamp":"2026-07-17T09:00:00Z","message":{{"role":"user","content":"tidy the ledger crate"}}}}"#
    )];
    for (i, f) in files.iter().enumerate() {
        lines.push(format!(
            r#"{{"type":"assistant","uuid":"a{i}","cwd":"{home}","sessionId":"s1","timestamp":"2026-07-17T09:00:0{i}Z","message":{{"id":"m{i}","role":"assistant","content":[{{"type":"tool_use","id":"t{i}","name":"Read","input":{{"file_path":"{f}"}}}}]}}}}"#
        ));
    }
    let path = tmp.path().join("s1.jsonl");
    std::fs::write(&path, lines.join("\n")).expect("write");
    let mut out: Vec<Session> = Vec::new();
    FORMAT.parse(&SourceRef::file(&path), &ParseOptions::default(), &mut out).expect("parse");
    assert_eq!(out[0].project.as_deref(), Some(repo.display().to_string().as_str()));
}

/// Claude Code 2.1.332 (`claude -p`, then `--continue`, run against a mock model): new
/// control records (`atis-latch`, `api-request-shape`, `api-request-blob`, `api-request`,
/// `tools-used`, `cost-state`, `mode`), many more `attachment` kinds carrying `rendered`
/// `<system-reminder>` text (some with `renderedRole: "user"`), a failed `Edit`, a
/// `thinking` block and an `Agent` call split over records of one `message.id`, and an
/// `Agent` result whose `content` is text blocks.
#[test]
fn release_2_1_332() {
    let (sessions, stats) = parse_with(&fixture("2026-12-01-release-2.1.332.jsonl"), &ParseOptions::default());
    insta::assert_json_snapshot!(sessions);
    assert_eq!(stats.skipped, 0, "control records are not counted as skipped lines");
    let [s] = sessions.as_slice() else { panic!("one session") };
    assert_eq!(s.id, "7c4e1a9b-3d2f-4e6a-8b1c-2d3e4f5a6b7c", "the sessionId, not the file name");
    assert_eq!(s.project.as_deref(), Some("/Users/dana/code/billing-api"));
    assert_eq!(
        roles(s),
        [Role::User, Role::ToolCall, Role::ToolCall, Role::ToolCall, Role::ToolCall, Role::Assistant, Role::User, Role::Assistant]
    );
    let users: Vec<&str> = s.turns.iter().filter(|t| t.role == Role::User).map(|t| t.text.as_str()).collect();
    assert_eq!(
        users,
        ["Fix the invoice rounding in round.go", "Now add a test for the rounding"],
        "no rendered attachment or request blob is speech"
    );
    assert!(!s.turns.iter().any(|t| t.text.contains("system-reminder") || t.text.contains("Today's date")));
    let bash = s.turns[1].tool.as_ref().expect("Bash");
    assert_eq!((bash.command.as_deref(), bash.exit.clone()), (Some("go test ./invoice/..."), Some(ExitStatus::Code(0))));
    assert_eq!(s.turns[2].files.first().map(|f| f.action), Some(FileAction::Write));
    let failed = s.turns[3].tool.as_ref().expect("Edit");
    assert!(failed.is_error, "a `<tool_use_error>` result is a failed call");
    assert_eq!(s.turns[3].edit.as_ref().map(|e| e.old.as_str()), Some("return math.Floor(x)"));
    let agent = &s.turns[4];
    assert_eq!(agent.tool.as_ref().map(|t| t.name.as_str()), Some("Agent"));
    assert!(agent.text.contains("round.go already rounds half-even."), "the sub-agent's report is the call's output");
    assert!(!s.turns.iter().any(|t| t.text.contains("delegate a review")), "thinking is not indexed by default");
    let second = s.turns[6].node.as_ref().expect("node");
    assert_eq!(second.parent.as_deref(), Some("a-006"), "the --continue prompt chains to the last answer");
}

/// The 2.1.332 sub-agent file (`<session>/subagents/agent-<id>.jsonl` beside a
/// `.meta.json` sidecar): `attributionAgent` only on assistant lines.
#[test]
fn release_2_1_332_subagent() {
    let sessions = parse("7c4e1a9b-3d2f-4e6a-8b1c-2d3e4f5a6b7c/subagents/agent-a5d2e8f1c3b4a6978.jsonl");
    insta::assert_json_snapshot!(sessions);
    let [s] = sessions.as_slice() else { panic!("one session") };
    assert_eq!(s.id, "a5d2e8f1c3b4a6978");
    assert_eq!(s.kind.as_deref(), Some("sidechain"));
    assert_eq!(s.parent.as_deref(), Some("7c4e1a9b-3d2f-4e6a-8b1c-2d3e4f5a6b7c"));
    assert_eq!(s.agent.as_deref(), Some("general-purpose"), "taken from the first assistant line");
    assert_eq!(roles(s), [Role::User, Role::ToolCall, Role::Assistant]);
}

/// The `.meta.json` sidecar beside a sub-agent transcript is not a transcript.
#[test]
fn subagent_meta_sidecar_is_not_discovered() {
    let env = deja_core::StoreEnv::with_home(deja_core::fixture_home!());
    let found = FORMAT.discover(&env);
    assert!(found.sources.iter().all(|s| s.path.extension().is_some_and(|e| e == "jsonl")));
}

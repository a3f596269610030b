//! Every test of deja-adapter-copilot, in one test binary: the conformance kit (snapshots of
//! every source in `tests/fixtures/home/`, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for Copilot CLI's event logs.

use deja_adapter_copilot::CopilotFormat;
use deja_core::testkit::session;
use deja_core::{ExitStatus, FileAction, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    CopilotFormat,
    wires "COPILOT_HOME" => ".copilot"
);

fn fixture_sessions() -> Vec<Session> {
    sessions_with(&ParseOptions::default())
}

fn sessions_with(opts: &ParseOptions) -> Vec<Session> {
    let home = deja_core::fixture_home!();
    let mut out = Vec::new();
    let found = CopilotFormat.discover(&StoreEnv::with_home(&home)).sources;
    assert_eq!(found.len(), 4, "a session directory without events.jsonl is no source");
    for src in found {
        CopilotFormat.parse(&src, opts, &mut out).expect("a fixture parses");
    }
    out
}

#[test]
fn the_pages_example_reads_as_the_page_says() {
    let all = fixture_sessions();
    let s = session(&all, "2b7e3f10-aaaa-4bbb-8ccc-0123456789ab");
    assert_eq!(s.project.as_deref(), Some("/Users/me/work/gateway"));
    assert_eq!((s.turns[0].role, s.turns[0].text.as_str()), (Role::User, "pool exhausted under load"));
    assert!(!s.turns.iter().any(|t| t.text.contains("You are the GitHub Copilot CLI")), "the system prompt is skipped");
    let edit = s.turns.iter().find_map(|t| t.edit.as_ref()).expect("edit span");
    assert_eq!((edit.path.as_str(), edit.old.as_str()), ("/Users/me/work/gateway/db.go", "rows, _ := q()"));
    assert!(s.turns.iter().any(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("go test ./...")));
    let out = s.turns.iter().find(|t| t.role == Role::ToolOutput).expect("the unpaired result");
    assert_eq!(out.text, "FAIL gateway/db 0.4s");
    assert!(out.tool.as_ref().is_some_and(|t| t.is_error), "a failed result is kept, flagged");
    assert!(s.turns.iter().any(|t| t.files.iter().any(|f| f.action == FileAction::Read && f.path.ends_with("pool.go"))));
    assert_eq!(s.turns.iter().filter(|t| t.role == Role::Assistant).count(), 1, "the empty tool-only message is no prose");
    let prompt = s.turns[0].node.as_ref().expect("node");
    assert_eq!((prompt.id.as_str(), prompt.parent.as_deref()), ("e2", Some("e1")));
}

#[test]
fn current_release_pairs_calls_and_reads_exit_codes() {
    let all = fixture_sessions();
    let s = session(&all, "5d0c1e22-bbbb-4ccc-8ddd-0123456789cd");
    assert_eq!(s.turns[0].text, "does the ledger build?", "content, not transformedContent");
    assert_eq!(s.project.as_deref(), Some("/home/dev/src/ledger"), "the trailing / is trimmed");
    assert!(!s.turns.iter().any(|t| t.text.contains("current_datetime")));
    let builds: Vec<_> =
        s.turns.iter().filter(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("cargo build --locked")).collect();
    assert_eq!(builds.len(), 2, "toolRequests[] and tool.execution_start make one turn per call");
    assert_eq!(builds[0].tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(101)));
    assert_eq!(builds[0].text, "error[E0432]: unresolved import `ledger::entry`", "the shellId marker line is dropped");
    assert_eq!(builds[1].tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(0)));
    assert!(s.turns.iter().any(|t| t.files.iter().any(|f| f.action == FileAction::Write && f.path.ends_with("entry.rs"))));
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning));
}

#[test]
fn without_session_start_the_directory_names_the_session() {
    let all = fixture_sessions();
    let s = session(&all, "legacy-dir-name");
    assert_eq!(s.turns.len(), 2);
    assert_eq!(s.project, None);
}

#[test]
fn release_continue_run_and_reasoning_text() {
    // Copilot CLI 1.0.102 run offline against a BYOK provider: `--continue` appends a
    // `session.resume` and the next prompt to the same log; `assistant.message` carries
    // `reasoningText`; a non-zero exit can come with `success: true`.
    let all = fixture_sessions();
    let s = session(&all, "9e4a7c21-cccc-4ddd-8eee-0123456789ef");
    assert_eq!(s.project.as_deref(), Some("/w/shop"));
    let said = |role: Role| s.turns.iter().filter(|t| t.role == role).map(|t| t.text.as_str()).collect::<Vec<_>>();
    assert_eq!(said(Role::User), ["fix the jwt refresh bug in auth.rs", "now check the token expiry path"]);
    assert_eq!(said(Role::Assistant), ["Refresh now renews the token.", "There is no expiry test target yet."]);
    assert!(said(Role::Reasoning).is_empty(), "reasoningText is not indexed by default");
    let calls: Vec<_> = s.turns.iter().filter(|t| t.role == Role::ToolCall).collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].files.first().map(|f| (f.path.as_str(), f.action)), Some(("/w/shop/notes.md", FileAction::Write)));
    let test = calls[1].tool.as_ref().expect("tool");
    assert_eq!((test.command.as_deref(), test.exit.clone(), test.is_error), (Some("cargo test expiry"), Some(ExitStatus::Code(3)), true));
    let with = sessions_with(&ParseOptions { include_reasoning: true });
    let s = session(&with, "9e4a7c21-cccc-4ddd-8eee-0123456789ef");
    let thought: Vec<_> = s.turns.iter().filter(|t| t.role == Role::Reasoning).map(|t| t.text.as_str()).collect();
    assert_eq!(thought, ["the refresh never renews the expiry", "the test target is missing"]);
}

#[test]
fn a_name_the_user_gave_in_workspace_yaml_is_the_title() {
    let dir = tempfile::tempdir().expect("tempdir");
    let session = dir.path().join("s1");
    std::fs::create_dir_all(&session).expect("mkdir");
    let log = session.join("events.jsonl");
    let head = concat!(
        r#"{"type":"session.start","data":{"sessionId":"s1","context":{"cwd":"/w/shop"}},"id":"e1","timestamp":"2026-12-01T09:40:00.000Z","parentId":null}"#,
        "\n",
        r#"{"type":"user.message","data":{"content":"fix the refresh bug"},"id":"e2","timestamp":"2026-12-01T09:40:01.000Z","parentId":"e1"}"#,
        "\n"
    );
    std::fs::write(&log, head).expect("write");
    let yaml = session.join("workspace.yaml");
    let read = |src: &deja_core::SourceRef| {
        let mut out: Vec<Session> = Vec::new();
        CopilotFormat.parse(src, &ParseOptions::default(), &mut out).expect("parse");
        out.into_iter().map(|s| (s.title, s.turns.len())).collect::<Vec<_>>()
    };
    let whole = deja_core::SourceRef::file(&log).append_only();
    std::fs::write(&yaml, "id: s1\nname: fix the refresh bug\nuser_named: false\n").expect("write");
    assert_eq!(read(&whole), [(None, 1)], "not named by the user: the title is derived later, from the prompt");
    std::fs::write(&yaml, "id: s1\nname: >-\n  Refresh:\n  leeway once\nuser_named: true\ncontext:\n  name: not this\n").expect("write");
    assert_eq!(read(&whole), [(Some("Refresh: leeway once".to_string()), 1)], "a folded scalar, and only the top-level key");
    // Renamed, then only bookkeeping appended: the tail is the rename alone.
    let grown = format!(
        "{head}{}\n",
        r#"{"type":"session.usage_record","data":{},"id":"e3","timestamp":"2026-12-01T09:41:00.000Z","parentId":"e2"}"#
    );
    std::fs::write(&log, grown).expect("write");
    let resume = deja_core::model::Resume { offset: head.len() as u64, next_seq: 1, session_id: "s1".into(), ..Default::default() };
    let tail = deja_core::SourceRef { resume: Some(resume), ..whole.clone() };
    assert_eq!(read(&tail), [(Some("Refresh: leeway once".to_string()), 0)]);
    std::fs::remove_file(&yaml).expect("rm");
    assert_eq!(read(&tail), [(None, 0)], "no name, no news: the session it continues, nothing new");
}

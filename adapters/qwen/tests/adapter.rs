//! Every test of deja-adapter-qwen, in one test binary: the conformance kit, then the
//! rules that matter most for Qwen Code's transcripts.

use deja_adapter_qwen::QwenFormat;
use deja_core::testkit::session;
use deja_core::{ExitStatus, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    QwenFormat,
    wires "QWEN_HOME" => ".qwen"
);

fn home() -> std::path::PathBuf {
    deja_core::fixture_home!()
}

fn sessions(opts: &ParseOptions) -> Vec<Session> {
    deja_core::testkit::read_all(&QwenFormat, &StoreEnv::with_home(home()), opts)
}

fn texts(s: &Session, role: Role) -> Vec<&str> {
    s.turns.iter().filter(|t| t.role == role).map(|t| t.text.as_str()).collect()
}

#[test]
fn tool_result_lines_fold_into_calls_with_exit() {
    let all = sessions(&ParseOptions::default());
    assert_eq!(all.len(), 4, "only .jsonl files in chats/ are transcripts");
    let s = session(&all, "3c4d5e6f-0000-4000-8000-000000000002");
    assert_eq!(s.project.as_deref(), Some("/w/app"), "cwd on the lines");
    assert_eq!(texts(s, Role::User), ["cargo test fails, fix it"]);
    assert_eq!(
        texts(s, Role::Assistant),
        ["Running the tests.", "The edit did not apply; the function body differs from what I read."],
        "thoughts and telemetry repeats are not answers"
    );
    let calls: Vec<_> = s.turns.iter().filter(|t| t.role == Role::ToolCall).collect();
    assert_eq!(calls.len(), 3);
    let test = calls[0].tool.as_ref().expect("tool");
    assert_eq!((test.command.as_deref(), test.exit.clone()), (Some("cargo test"), Some(ExitStatus::Code(101))));
    assert!(calls[0].text.contains("1 failed") && !calls[0].text.contains("PGID"));
    assert_eq!(calls[1].files.first().map(|f| f.path.as_str()), Some("/w/app/src/parse.rs"), "read_file absolute_path");
    assert!(calls[2].edit.is_some() && calls[2].tool.as_ref().is_some_and(|t| t.is_error), "a failed replace");
    assert!(!s.turns.iter().any(|t| t.role == Role::ToolOutput));
    let node = s.turns[0].node.as_ref().expect("node");
    assert_eq!((node.id.as_str(), node.parent.as_deref()), ("u1", None));
    assert_eq!(calls[0].node.as_ref().and_then(|n| n.parent.as_deref()), Some("u1"));
}

#[test]
fn older_records_as_the_page_shows_them() {
    let all = sessions(&ParseOptions::default());
    let s = session(&all, "9a8b7c6d");
    assert_eq!(s.project.as_deref(), Some("src/payments"), "decoded directory, fallback when it does not exist");
    assert_eq!(texts(s, Role::Assistant), ["Checking the job."]);
    let call = s.turns.iter().find(|t| t.role == Role::ToolCall).and_then(|t| t.tool.as_ref()).expect("call");
    assert_eq!(call.command.as_deref(), Some("pytest tests/test_refund.py"));
    assert_eq!(texts(s, Role::ToolOutput), ["1 failed: test_retry_charges_once"], "no ids to pair by: a tool output");
    let edit = s.turns.iter().find_map(|t| t.edit.as_ref()).expect("edit");
    assert_eq!((edit.path.as_str(), edit.old.as_str()), ("/src/payments/refund.py", "charge(order)"));
}

#[test]
fn reasoning_with_the_option() {
    let all = sessions(&ParseOptions { include_reasoning: true });
    assert_eq!(texts(session(&all, "9a8b7c6d"), Role::Reasoning), ["idempotency key missing?"]);
}

#[test]
fn release_0_24_4_provenance_lines_and_error_responses() {
    // Qwen Code 0.24.4: every line has `provenance`; a failed shell call's framed text is
    // `response.error` (status `error`); `-c` goes on in the same file.
    let all = sessions(&ParseOptions::default());
    let s = session(&all, "7b8c9d0e-0000-4000-8000-000000000024");
    assert_eq!(s.project.as_deref(), Some("/w/shop"));
    assert_eq!(texts(s, Role::User), ["fix the jwt refresh bug in auth.rs", "now check the token expiry path"]);
    assert_eq!(
        texts(s, Role::Assistant),
        ["Refresh now renews the token; the test still needs a clock fix.", "The expiry path is fine."],
        "telemetry `response_text` is not a second answer, the thought part is not speech"
    );
    let calls: Vec<_> = s.turns.iter().filter(|t| t.role == Role::ToolCall).collect();
    assert_eq!(calls.len(), 2);
    let test = calls[0].tool.as_ref().expect("tool");
    assert_eq!((test.command.as_deref(), test.exit.clone(), test.is_error), (Some("cargo test jwt"), Some(ExitStatus::Code(101)), true));
    assert_eq!(calls[0].text, "test jwt::refresh ... FAILED", "the framing of `response.error` is read");
    assert_eq!(calls[1].files.first().map(|f| f.path.as_str()), Some("/w/shop/notes.md"));
    assert!(!s.turns.iter().any(|t| t.role == Role::ToolOutput));
}

#[test]
fn hook_context_in_its_qwen_wrapper_is_not_the_persons_words() {
    // What a UserPromptSubmit hook answered (deja's own recall among it) is a text part of
    // its own, escaped and wrapped in `<qwen:user-prompt-submit-context>`: stripped at ingest.
    let mut all = sessions(&ParseOptions::default());
    let s = all.iter_mut().find(|s| s.id == "5d6e7f80-0000-4000-8000-000000000031").expect("session");
    deja_core::normalize::normalize(s, &Default::default(), QwenFormat.info().injected);
    assert_eq!(
        texts(s, Role::User),
        ["the rate limiter drops bursts", "why does qwen add <qwen:user-prompt-submit-context> to my messages?"],
        "the wrapped context is gone, a prompt naming the tag is kept"
    );
    assert!(s.turns.iter().all(|t| !t.text.contains("deja-recall") && !t.text.contains("lint hook")));
    assert_eq!(s.title.as_deref(), Some("the rate limiter drops bursts"));
}

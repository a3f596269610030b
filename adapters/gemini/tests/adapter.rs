//! Every test of deja-adapter-gemini, in one test binary: the conformance kit, then the
//! rules that matter most for Gemini's chat replay.

use deja_adapter_gemini::GeminiFormat;
use deja_core::testkit::session;
use deja_core::{ExitStatus, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    GeminiFormat,
    switch "DEJA_INCLUDE_SUBAGENTS",
    wires "GEMINI_CLI_HOME" => ""
);

fn env() -> StoreEnv {
    StoreEnv::with_home(deja_core::fixture_home!())
}

fn sessions_with(env: &StoreEnv, opts: &ParseOptions) -> Vec<Session> {
    deja_core::testkit::read_all(&GeminiFormat, env, opts)
}

fn sessions() -> Vec<Session> {
    sessions_with(&env(), &ParseOptions::default())
}

fn texts(s: &Session, role: Role) -> Vec<&str> {
    s.turns.iter().filter(|t| t.role == role).map(|t| t.text.as_str()).collect()
}

#[test]
fn reemitted_records_fold_once_with_their_tool_calls() {
    let all = sessions();
    let s = session(&all, "1a2b3c4d-1111-4222-8333-444455556666");
    assert_eq!(s.project.as_deref(), Some("/w/web"), "projects.json maps the short name back");
    let calls: Vec<_> = s.turns.iter().filter(|t| t.role == Role::ToolCall).collect();
    assert_eq!(calls.len(), 2, "g1 re-emitted with the same id is one record");
    let lint = calls[0].tool.as_ref().expect("tool");
    assert_eq!((lint.command.as_deref(), lint.exit.clone()), (Some("npm run lint"), Some(ExitStatus::Code(1))));
    assert!(calls[0].text.starts_with("src/app.ts:3:7") && !calls[0].text.contains("PGID"), "the framing is read, not kept");
    let edit = calls[1].edit.as_ref().expect("replace edit");
    assert_eq!((edit.path.as_str(), edit.old.as_str()), ("/w/web/src/app.ts", "const unused = 1;\n"));
    assert!(!s.turns.iter().any(|t| t.role == Role::ToolOutput), "the functionResponse user records repeat folded results");
    assert_eq!(texts(s, Role::Assistant), ["Removed the unused `unused` constant; the linter is clean now."]);
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning), "thoughts are not indexed by default");
    let mut indexed = s.clone();
    deja_core::normalize::normalize(&mut indexed, &Default::default(), GeminiFormat.info().injected);
    assert_eq!(texts(&indexed, Role::User), ["fix the lint error"], "session_context and escaped recall are not speech");
}

#[test]
fn rewinds_and_snapshots_do_not_duplicate_or_resurrect() {
    let all = sessions();
    let s = session(&all, "7d1c9a40-aaaa-4bbb-8ccc-0123456789ab");
    assert_eq!(texts(s, Role::User), ["bump eslint"]);
    assert_eq!(texts(s, Role::Assistant), ["Pinned to 8.57 instead."], "message b was rewound away");
    assert_eq!(all.iter().filter(|x| x.id == s.id).count(), 1, "the legacy .json of a resumed session yields nothing");
    assert_eq!(s.project.as_deref(), Some("9f2e"), "an unmapped project id stays as it is");
    let snap = session(&all, "5e6f7a8b-cccc-4ddd-8eee-0123456789ab");
    assert_eq!(texts(snap, Role::User), ["only the snapshot counts"]);
    assert_eq!(texts(snap, Role::Assistant), ["Understood."]);
}

#[test]
fn legacy_json_and_non_session_files() {
    let all = sessions();
    let s = session(&all, "0b1c2d3e-bbbb-4ccc-8ddd-0123456789ab");
    assert_eq!(s.project.as_deref(), Some("/w/api"), ".project_root");
    assert_eq!(texts(s, Role::User), ["lint fails on CI only", "pin it locally too"]);
    assert_eq!(texts(s, Role::Assistant), ["CI pins an older eslint."], "info records are noise");
    assert_eq!(s.turns.last().and_then(|t| t.time), s.started, "no timestamp: the session start");
    assert_eq!(all.len(), 6, "the checkpoint file is not a session");
}

#[test]
fn subagent_chats_have_their_parent_and_a_switch() {
    let all = sessions();
    let sub = session(&all, "7e8f9a0b-2222-4333-8444-555566667777");
    assert_eq!((sub.kind.as_deref(), sub.parent.as_deref()), (Some("subagent"), Some("1a2b3c4d-1111-4222-8333-444455556666")));
    assert_eq!(sub.project.as_deref(), Some("/w/web"));
    let off = sessions_with(&env().set("DEJA_INCLUDE_SUBAGENTS", "0"), &ParseOptions::default());
    assert!(!off.iter().any(|s| s.id == sub.id));
}

#[test]
fn thoughts_with_the_option() {
    let all = sessions_with(&env(), &ParseOptions { include_reasoning: true });
    let s = session(&all, "1a2b3c4d-1111-4222-8333-444455556666");
    assert_eq!(texts(s, Role::Reasoning), ["Linting: Run the linter to see the error."]);
}

#[test]
fn resumed_release_chat_is_one_session_without_doubled_calls() {
    // Gemini CLI 0.61.0 after `--resume <uuid>`: the session's file restates its history
    // in a `$set.messages` snapshot whose `gemini` records hold each call twice (a
    // `functionCall` part and `toolCalls[]`), plus `<id>_response` user records; and a
    // fresh file with the same `sessionId` holds only the `<session_context>`.
    let all = sessions();
    let id = "c0ffee01-1111-4222-8333-444455556666";
    assert_eq!(all.iter().filter(|s| s.id == id).count(), 1, "the resume stub yields no second (empty) copy");
    let s = session(&all, id);
    assert_eq!(s.project.as_deref(), Some("/w/shop"));
    let calls: Vec<_> = s.turns.iter().filter(|t| t.role == Role::ToolCall).collect();
    assert_eq!(calls.len(), 3, "functionCall parts restated beside toolCalls[] are not second calls");
    let test = calls[0].tool.as_ref().expect("tool");
    assert_eq!((test.command.as_deref(), test.exit.clone()), (Some("cargo test jwt"), Some(ExitStatus::Code(101))));
    assert_eq!(calls[1].files.first().map(|f| f.path.as_str()), Some("/w/shop/notes.md"), "resultDisplay.filePath makes it absolute");
    assert_eq!(calls[2].tool.as_ref().and_then(|t| t.command.as_deref()), Some("grep -n expiry auth.rs"));
    assert!(!s.turns.iter().any(|t| t.role == Role::ToolOutput), "`<id>_response` records repeat folded results");
    assert_eq!(
        texts(s, Role::Assistant),
        ["The refresh handler now renews the token before it expires.", "The expiry path checks the renewed time now."],
        "the thought part restated in the snapshot is not speech"
    );
    let mut indexed = s.clone();
    deja_core::normalize::normalize(&mut indexed, &Default::default(), GeminiFormat.info().injected);
    assert_eq!(texts(&indexed, Role::User), ["fix the jwt refresh bug in auth.rs", "now check the token expiry path"]);
    let with = sessions_with(&env(), &ParseOptions { include_reasoning: true });
    assert_eq!(texts(session(&with, id), Role::Reasoning).len(), 2, "thoughts[] once per answer, not again from the thought part");
}

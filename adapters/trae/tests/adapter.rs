//! Every test of deja-adapter-trae, in one test binary: the conformance kit, then the
//! rules that matter most for TRAE's reading of Codex rollouts.

use deja_adapter_trae::TraeFormat;
use deja_core::testkit::session;
use deja_core::{ExitStatus, HarnessFormat, ParseOptions, Role, Session, SourceRef, StoreEnv};

deja_core::conformance!(
    TraeFormat,
    wires "TRAE_HOME" => ".trae",
    wires "TRAECLI_HOME" => ".trae/cli"
);

fn home() -> std::path::PathBuf {
    deja_core::fixture_home!()
}

fn fixture_sessions(opts: &ParseOptions) -> Vec<Session> {
    deja_core::testkit::read_all(&TraeFormat, &StoreEnv::with_home(home()), opts)
}

fn texts(s: &Session, role: Role) -> Vec<&str> {
    s.turns.iter().filter(|t| t.role == role).map(|t| t.text.as_str()).collect()
}

#[test]
fn prompts_are_events_and_injections_are_not_speech() {
    let sessions = fixture_sessions(&ParseOptions::default());
    let s = session(&sessions, "019fbcca-0001-7000-8000-000000000001");
    assert_eq!(s.harness, "trae");
    assert_eq!(s.project.as_deref(), Some("/w/app"));
    assert_eq!(texts(s, Role::User), ["the sum tests fail, please fix them", "now add a test for negative numbers"]);
    assert_eq!(
        texts(s, Role::Assistant),
        [
            "`sum` adds an extra 1; I'll remove it.",
            "Fixed: `sum` no longer adds 1 and the tests pass.",
            "Adding a negative-number case to src/sum.test.js."
        ],
        "response_item answers win; agent_message copies and replace mutations are not read"
    );
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning is not indexed by default");
    assert!(s.turns.iter().any(|t| t.role == Role::Summary));
}

#[test]
fn exec_calls_fold_once_with_exit_and_patches_edit() {
    let sessions = fixture_sessions(&ParseOptions::default());
    let s = session(&sessions, "019fbcca-0001-7000-8000-000000000001");
    let calls: Vec<_> = s.turns.iter().filter(|t| t.role == Role::ToolCall).collect();
    assert_eq!(calls.len(), 3, "history_mutation and response_item copies are one call each");
    let first = calls[0].tool.as_ref().expect("tool");
    assert_eq!((first.name.as_str(), first.command.as_deref()), ("exec", Some("npm test")), "bash -lc keeps the script");
    assert_eq!(first.exit, Some(ExitStatus::Code(1)));
    assert!(calls[0].text.contains("expected 3, received 4"), "the block-list result is folded in");
    let edit = calls[1].edit.as_ref().expect("apply_patch edit");
    assert!(edit.path.ends_with("src/sum.js") && edit.old.contains("a + b + 1"));
    assert_eq!(calls[2].tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(0)));
    assert!(!s.turns.iter().any(|t| t.role == Role::ToolOutput), "every result has its call");
}

#[test]
fn item_completed_copies_pair_with_user_message() {
    let sessions = fixture_sessions(&ParseOptions::default());
    let s = session(&sessions, "019fbd00-0002-7000-8000-000000000002");
    assert_eq!(
        texts(s, Role::User),
        ["why does cargo build fail?", "ok, declare it first", "ok, declare it first"],
        "one prompt per pair; the same words in a later turn are a new prompt"
    );
    assert_eq!(texts(s, Role::Assistant).len(), 3, "AgentMessage items, not their agent_message copies");
    let build = s.turns.iter().find(|t| t.role == Role::ToolCall).and_then(|t| t.tool.as_ref()).expect("CommandExecution");
    assert_eq!((build.command.as_deref(), build.exit.clone()), (Some("cargo build"), Some(ExitStatus::Code(101))));
}

#[test]
fn compressed_archived_and_history_sources_are_read() {
    let sources = TraeFormat.discover(&StoreEnv::with_home(home())).sources;
    let zst = sources.iter().find(|s| s.path.to_string_lossy().ends_with(".jsonl.zst")).expect("compressed rollout");
    assert!(!zst.append_only, "a compressed rollout is rewritten whole");
    assert!(sources
        .iter()
        .filter(|s| s.path.extension().is_some_and(|e| e == "jsonl"))
        .all(|s| s.append_only || s.path.ends_with("history.jsonl")));
    let sessions = fixture_sessions(&ParseOptions::default());
    let z = session(&sessions, "019fbe00-0003-7000-8000-000000000003");
    assert_eq!(texts(z, Role::Assistant), ["2.0 adds rollout compression and archive."], "history_mutation answer, once");
    let archived = session(&sessions, "019fb000-0004-7000-8000-000000000004");
    let mut indexed = archived.clone();
    deja_core::normalize::normalize(&mut indexed, &Default::default(), TraeFormat.info().injected);
    assert_eq!(texts(&indexed, Role::User), ["how did we fix the flaky login test"], "the skill block is TRAE's own text");
    let orphans: Vec<_> = sessions.iter().filter(|s| s.project.as_deref() == Some("history")).map(|s| s.id.as_str()).collect();
    assert_eq!(orphans, ["019fc000-0005-7000-8000-000000000005"], "history only for threads without a rollout, .zst included");
}

#[test]
fn reasoning_with_the_option() {
    let sessions = fixture_sessions(&ParseOptions { include_reasoning: true });
    let s = session(&sessions, "019fbcca-0001-7000-8000-000000000001");
    assert_eq!(texts(s, Role::Reasoning), ["Run the tests first to see the failure."]);
}

#[test]
fn a_resumed_read_does_not_repeat_the_prompt_pair() {
    // A copy of the fixture home, whose rollout is cut and grown again.
    let kit = deja_core::testkit::Kit::new(&TraeFormat, env!("CARGO_MANIFEST_DIR"));
    let home = kit.home();
    let fixture = kit.sources(&home).into_iter().find(|s| s.path.to_string_lossy().contains("019fbd00-0002")).expect("0.201.4 rollout");
    let path = fixture.path.clone();
    let bytes = std::fs::read(&path).expect("read");
    // Read up to the prompt's `item_completed` copy (its `user_message` half read), then
    // the rest from the state that read left.
    let text = String::from_utf8_lossy(&bytes);
    let offset =
        text.find("{\"timestamp\":\"2026-10-03T14:00:02Z\",\"type\":\"event_msg\",\"payload\":{\"type\":\"item_completed\"").expect("copy");
    std::fs::write(&path, &bytes[..offset]).expect("head");
    let mut head = Vec::new();
    let stats = TraeFormat.parse(&SourceRef::file(&path).append_only(), &ParseOptions::default(), &mut head).expect("parse");
    std::fs::write(&path, &bytes).expect("whole");
    let src = SourceRef { resume: Some(deja_core::model::Resume::after(&stats, &head[0])), ..SourceRef::file(&path).append_only() };
    assert_eq!(src.resume.as_ref().map(|r| r.next_seq), Some(1));
    let mut out = Vec::new();
    TraeFormat.parse(&src, &ParseOptions::default(), &mut out).expect("parse");
    let s = out.pop().expect("the tail's session");
    assert_eq!(s.turns.first().map(|t| (t.seq, t.role)), Some((1, Role::ToolCall)), "the tail starts with the build, not the prompt again");
    assert_eq!(texts(&s, Role::User), ["ok, declare it first", "ok, declare it first"]);
}

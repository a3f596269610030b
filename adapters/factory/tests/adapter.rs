//! Every test of deja-adapter-factory, in one test binary: the conformance kit, then the
//! rules that matter most for droid's transcripts.

use deja_adapter_factory::FactoryFormat;
use deja_core::{ExitStatus, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    FactoryFormat,
    wires "FACTORY_HOME_OVERRIDE" => ""
);

fn sessions() -> Vec<Session> {
    sessions_with(&ParseOptions::default())
}

fn sessions_with(opts: &ParseOptions) -> Vec<Session> {
    let home = deja_core::fixture_home!();
    let mut out = Vec::new();
    let found = FactoryFormat.discover(&StoreEnv::with_home(&home)).sources;
    assert_eq!(found.len(), 3, "sidecars and their backups are not transcripts");
    for src in found {
        FactoryFormat.parse(&src, opts, &mut out).expect("a fixture parses");
    }
    out
}

#[test]
fn droid_0_225_sessions() {
    let all = sessions();
    let s = all.iter().find(|s| s.id == "2f1e0d9c-0000-4000-8000-000000000001").expect("header id");
    assert_eq!((s.title.as_deref(), s.project.as_deref()), (Some("does the build pass?"), Some("/home/dev/src/app")));
    assert_eq!(s.turns[0].role, Role::User);
    assert_eq!(s.turns[0].text, "does the build pass?", "the context message is skipped");
    assert!(!s.turns.iter().any(|t| t.text.contains("Current date")));
    let test = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("make test")).expect("make test");
    assert_eq!((test.text.as_str(), test.tool.as_ref().and_then(|t| t.exit.clone())), ("12 passed", Some(ExitStatus::Code(0))));
    let lint = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("make lint")).expect("make lint");
    assert_eq!(lint.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(2)));
    assert!(s.turns.iter().any(|t| t.edit.as_ref().is_some_and(|e| e.old == "err = cleanup()")));
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning is not indexed by default");
    let prompt = s.turns.iter().find(|t| t.text == "does the build pass?").and_then(|t| t.node.clone()).expect("node");
    assert_eq!(prompt.parent, None, "the skipped context message is stepped through");
}

#[test]
fn the_older_shape_reads_too() {
    let all = sessions();
    let s = all.iter().find(|s| s.id == "7c1d2e3f-0000-4000-8000-000000000002").expect("older session");
    assert_eq!((s.title.as_deref(), s.project.as_deref()), (Some("Invoice rounding"), Some("/src/billing")));
    let read = s.turns.iter().find(|t| t.role == Role::ToolCall).expect("read");
    assert!(read.files.iter().any(|f| f.path == "/src/billing/money.py") && read.text.contains("round_cents"));
}

#[test]
fn the_synthetic_writer_round_trips_the_exit_status() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let sample = deja_core::testkit::sample_session();
    FactoryFormat.write_synthetic(tmp.path(), &sample).expect("write");
    let out = deja_core::testkit::read_all(&FactoryFormat, &StoreEnv::with_home(tmp.path()), &ParseOptions::default());
    let s = out.iter().find(|s| s.id == sample.id).expect("the sample session");
    let shell = s.turns.iter().find(|t| t.role == Role::ToolCall).expect("the shell call");
    assert_eq!(shell.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(101)));
    assert_eq!(s.turns[0].role, Role::User, "the context message is skipped");
}

#[test]
fn release_failed_execute_create_and_thinking_fields() {
    // droid 0.225.2 with a BYOK custom model: a failed `Execute` result opens with
    // `Error: Command failed (exit code: N)`; `Create` answers with a JSON string; the
    // answer's reasoning is a `thinking` item and is repeated in
    // `chatCompletionReasoningContent`.
    let id = "5a6b7c8d-0000-4000-8000-000000000003";
    let all = sessions();
    let s = all.iter().find(|s| s.id == id).expect("release session");
    assert_eq!(s.project.as_deref(), Some("/w/shop"));
    let calls: Vec<_> = s.turns.iter().filter(|t| t.role == Role::ToolCall).collect();
    assert_eq!(calls.len(), 2);
    let test = calls[0].tool.as_ref().expect("tool");
    assert_eq!((test.command.as_deref(), test.exit.clone(), test.is_error), (Some("cargo test jwt"), Some(ExitStatus::Code(3)), true));
    assert_eq!(calls[0].text, "test jwt::refresh ... FAILED", "the failure lead line only repeats the exit");
    assert_eq!(calls[1].files.first().map(|f| f.path.as_str()), Some("/w/shop/notes.md"), "Create writes a file");
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning));
    let with = sessions_with(&ParseOptions { include_reasoning: true });
    let s = with.iter().find(|s| s.id == id).expect("release session");
    let thought: Vec<_> = s.turns.iter().filter(|t| t.role == Role::Reasoning).map(|t| t.text.as_str()).collect();
    assert_eq!(thought, ["the refresh never renews the expiry"], "chatCompletionReasoningContent is not a second copy");
}

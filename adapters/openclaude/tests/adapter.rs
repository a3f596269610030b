//! Every test of deja-adapter-openclaude, in one test binary: the conformance kit, then
//! the rules that matter most for this dialect of the Claude-shaped family.

use deja_adapter_openclaude::FORMAT;
use deja_core::launch::{handoff_argv, resume_command, Handoff};
use deja_core::model::SessionMeta;
use deja_core::{ExitStatus, FileAction, HarnessFormat, ParseOptions, Role, Session, StoreEnv, Timestamp};

deja_core::conformance!(FORMAT);

fn fixture_sessions() -> Vec<Session> {
    deja_core::testkit::sessions(&FORMAT, &deja_core::fixture_home!())
}

#[test]
fn sessions_are_namespaced_and_read_as_claude_transcripts() {
    let sessions = fixture_sessions();
    let main = sessions.iter().find(|s| s.id == "4d5e6f70-0000-4000-8000-000000000004").expect("main session");
    assert_eq!(main.harness, "openclaude", "the same UUID space as Claude, kept apart by the harness id");
    assert_eq!(main.project.as_deref(), Some("/src/tool"));
    let lint = main.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("npm run lint")).expect("lint call");
    assert_eq!(lint.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(1)));
    assert!(lint.text.contains("unusedVar"), "the result is folded into the call");
    assert!(main.turns.iter().any(|t| t.edit.as_ref().is_some_and(|e| e.old.contains("unusedVar"))));
    assert!(main.turns.iter().any(|t| t.role == Role::Summary), "the compaction summary");
    assert_eq!(
        main.turns.iter().filter(|t| t.role == Role::User && t.text.contains("run the linter")).count(),
        1,
        "queued prompts are control lines"
    );
    assert!(!main.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning is not indexed by default");
    let mut indexed = main.clone();
    deja_core::normalize::normalize(&mut indexed, &Default::default(), FORMAT.info().injected);
    assert!(indexed.turns.iter().any(|t| t.role == Role::Summary && t.text.contains("unusedVar")), "the summary survives ingest");
    assert!(indexed.turns.iter().any(|t| t.text == "now run the tests"), "the system reminder is stripped, the prompt kept");
    let review = sessions.iter().find(|s| s.id == "b7c8").expect("sidechain session");
    assert_eq!((review.kind.as_deref(), review.parent.as_deref()), (Some("sidechain"), Some(main.id.as_str())));
}

/// OpenClaude 0.29.1 (built from its release tag, run 2026-12-04 against a mock model):
/// `openclaude -p` then `openclaude --continue -p` append both runs to one transcript,
/// with `mode` lines (no timestamp) between them, `queue-operation` and `last-prompt`
/// control lines, `toolUseResult` payloads on the result records, and a
/// `<session>.replay.json` step summary beside the transcript.
const RELEASE_0_29_1: &str = "7e1c2a90-5b3d-4f6e-9a8b-0c1d2e3f4a5b";

#[test]
fn a_0_29_1_transcript_reads_both_runs_and_ignores_the_replay_sidecar() {
    let home = deja_core::fixture_home!();
    let dir = home.join(".openclaude/projects/-home-ana-ledger");
    let sources: Vec<_> = FORMAT.discover(&StoreEnv::with_home(&home)).sources.into_iter().filter(|s| s.path.starts_with(&dir)).collect();
    assert_eq!(sources.len(), 1, "the `.replay.json` beside the transcript is not a source: {sources:?}");
    let mut out = Vec::new();
    let stats = FORMAT.parse(&sources[0], &ParseOptions::default(), &mut out).expect("the transcript parses");
    assert_eq!(stats.skipped, 0, "`mode`, `queue-operation` and `last-prompt` lines are control lines, not torn ones");
    assert_eq!(out.len(), 1);
    let s = &out[0];
    assert_eq!((s.harness.as_str(), s.id.as_str(), s.project.as_deref()), ("openclaude", RELEASE_0_29_1, Some("/home/ana/ledger")));
    use Role::*;
    assert_eq!(
        s.turns.iter().map(|t| t.role).collect::<Vec<_>>(),
        [User, ToolCall, ToolCall, ToolCall, ToolCall, Assistant, User, ToolCall, Assistant],
        "both runs, each queued prompt once"
    );
    assert_eq!(s.turns[0].text, "Why does the monthly total drift by one cent?");
    assert_eq!(s.turns[0].time, Timestamp::parse_str("2026-11-20T09:00:00.200Z"));
    assert_eq!(s.turns[6].text, "Now check the formatting too", "the continued run's prompt");
    assert_eq!(s.turns[8].time, Timestamp::parse_str("2026-11-20T09:05:03.000Z"));

    let shell = |i: usize| s.turns[i].tool.as_ref().expect("a tool call");
    assert_eq!((shell(1).command.as_deref(), shell(1).exit.clone()), (Some("cargo test -q rounding"), Some(ExitStatus::Code(0))));
    assert!(s.turns[1].text.contains("3 passed"), "the output is folded into the call");
    assert_eq!(
        (shell(7).command.as_deref(), shell(7).exit.clone(), shell(7).is_error),
        (Some("cargo fmt --check"), Some(ExitStatus::Code(1)), true)
    );
    assert!(s.turns[7].text.starts_with("Diff in"), "the `Exit code N` line is taken off the output");

    let touch = |i: usize| s.turns[i].files.iter().map(|f| (f.path.as_str(), f.action)).collect::<Vec<_>>();
    assert_eq!(touch(2), [("/home/ana/ledger/notes/rounding.md", FileAction::Write)]);
    assert_eq!(touch(3), [("/home/ana/ledger/src/money.rs", FileAction::Read)]);
    assert_eq!(touch(4), [("/home/ana/ledger/src/money.rs", FileAction::Edit)]);
    let edit = s.turns[4].edit.as_ref().expect("the Edit's replacement");
    assert!(edit.old.contains("f64") && edit.new.as_deref().is_some_and(|n| n.contains("i64")));

    let mut indexed = s.clone();
    deja_core::normalize::normalize(&mut indexed, &Default::default(), FORMAT.info().injected);
    assert!(!indexed.turns[3].text.contains("A note the harness adds"), "the reminder after a read result is stripped");
}

fn meta(id: &str, project: &str, parent: Option<&str>) -> SessionMeta {
    SessionMeta {
        harness: "openclaude".into(),
        id: id.into(),
        title: None,
        project: Some(project.into()),
        path: format!("/home/ana/.openclaude/projects/-x/{id}.jsonl"),
        started: None,
        updated: None,
        parent: parent.map(str::to_string),
        kind: parent.map(|_| "sidechain".to_string()),
        agent: None,
        machine: None,
        turns: 1,
        source_deleted: None,
    }
}

/// 0.29.1 reopens a session with `--resume <id>` from the session's directory (checked:
/// `openclaude --resume <id> -p …` appended a third run to the same transcript), and
/// `openclaude "<prompt>"` starts an interactive session with that first prompt.
#[test]
fn sessions_resume_with_openclaude_resume_in_their_directory() {
    // Any directory that exists here stands for the session's project.
    let project = env!("CARGO_MANIFEST_DIR");
    let launch = FORMAT.info().launch;
    let r = resume_command(&launch.resume, &meta(RELEASE_0_29_1, project, None)).expect("a resume command");
    assert_eq!(r.argv, ["openclaude", "--resume", RELEASE_0_29_1]);
    assert_eq!(r.dir.as_deref(), Some(project));
    let sub = resume_command(&launch.resume, &meta("b7c8", project, Some(RELEASE_0_29_1)));
    assert!(sub.is_err(), "a sub-agent run resumes through its parent");
    let Handoff::Exec(argv) = launch.handoff else { panic!("openclaude starts with a prompt: {:?}", launch.handoff) };
    assert_eq!(handoff_argv(argv, "the digest"), ["openclaude", "the digest"]);
}

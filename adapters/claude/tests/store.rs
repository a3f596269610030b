//! Discovery, the synthetic writer round trip, and incremental (resumed) reads.

use std::path::{Path, PathBuf};

use deja_adapter_claude::FORMAT;
use deja_core::model::Resume;
use deja_core::synth::dash_encode;
use deja_core::{
    ExitStatus, FileAction, HarnessFormat, ParseOptions, Role, Session, SourceRef, StoreEnv, SynthSession, SynthTurn, Timestamp,
};

fn touch(path: &Path, body: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, body).expect("write");
}

fn found(env: &StoreEnv) -> Vec<PathBuf> {
    let d = FORMAT.discover(env);
    assert!(d.sources.iter().all(|s| s.append_only), "raw JSONL is append-only");
    d.sources.into_iter().map(|s| s.path).collect()
}

const LINE: &str = r#"{"type":"user","sessionId":"s","timestamp":"2026-07-17T09:00:00Z","message":{"role":"user","content":"hi there"}}"#;

#[test]
fn discovery_honours_config_dir_root_override_and_subagent_switch() {
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path().join("home");
    let projects = home.join(".claude/projects");
    let main = projects.join("-src-app/5f0c7e2a-1111-4222-8333-944445555666.jsonl");
    let sub = projects.join("-src-app/5f0c7e2a-1111-4222-8333-944445555666/subagents/agent-a0b1c2d3.jsonl");
    let other = projects.join("-src-lib/0a0a0a0a-1111-4222-8333-944445555666.jsonl");
    touch(&main, LINE);
    touch(&sub, LINE);
    touch(&other, LINE);
    touch(&projects.join("-src-app/notes.txt"), "not a transcript");
    std::fs::create_dir_all(projects.join("-src-app/dir.jsonl")).expect("a directory named like a transcript");
    touch(&home.join(".claude.json"), "{}");

    let env = StoreEnv::with_home(&home);
    // Sorted by path bytes: a session's file (`<id>.jsonl`) sorts before its sub-agent directory.
    assert_eq!(found(&env), vec![main.clone(), sub.clone(), other.clone()], "sorted; sub-agents included by default");
    let d = FORMAT.discover(&env);
    assert_eq!(d.roots, vec![(projects.clone(), true)]);

    assert_eq!(found(&env.clone().set("DEJA_INCLUDE_SUBAGENTS", "0")), vec![main.clone(), other.clone()]);
    assert_eq!(found(&env.clone().set("DEJA_INCLUDE_SUBAGENTS", "1")), vec![main.clone(), sub.clone(), other.clone()]);

    let profile = tmp.path().join("work-profile");
    let work = profile.join("projects/-srv-api/1b1b1b1b-1111-4222-8333-944445555666.jsonl");
    touch(&work, LINE);
    let env_work = StoreEnv::with_home(&home).set("CLAUDE_CONFIG_DIR", profile.display().to_string());
    assert_eq!(found(&env_work), vec![work.clone()]);

    let custom = tmp.path().join("copied-projects");
    let copied = custom.join("-x-y/2c2c2c2c-1111-4222-8333-944445555666.jsonl");
    touch(&copied, LINE);
    let env_root = env_work.clone().set("DEJA_CLAUDE_ROOT", custom.display().to_string());
    assert_eq!(found(&env_root), vec![copied]);
    assert_eq!(FORMAT.discover(&env_root).roots, vec![(custom, true)]);

    let missing = StoreEnv::with_home(tmp.path().join("nobody"));
    let d = FORMAT.discover(&missing);
    assert!(d.sources.is_empty());
    assert_eq!(d.roots, vec![(tmp.path().join("nobody/.claude/projects"), false)]);
}

fn ts(s: u32) -> Timestamp {
    Timestamp(1_784_278_800_000 + i64::from(s) * 1000)
}

fn synth(project: &str) -> SynthSession {
    SynthSession {
        id: "7a1e2b3c-4d5e-4f60-8a7b-8c9d0e1f2a3b".into(),
        project: project.into(),
        title: Some("Half-even rounding for EUR".into()),
        started: ts(0),
        turns: vec![
            SynthTurn::User { text: "why are EUR totals a cent low?".into(), time: ts(1) },
            SynthTurn::Reasoning { text: "Probably math.Floor in round.go.".into(), time: ts(2) },
            SynthTurn::Assistant { text: "Let me look at the rounding code.".into(), time: ts(3) },
            SynthTurn::Read { path: format!("{project}/invoice/round.go"), output: "return math.Floor(x)".into(), time: ts(4) },
            SynthTurn::Edit {
                path: format!("{project}/invoice/round.go"),
                old: "return math.Floor(x)".into(),
                new: "return math.RoundToEven(x)".into(),
                time: ts(5),
            },
            SynthTurn::Shell { command: "go test ./invoice/...".into(), output: "--- FAIL: TestRound".into(), exit_code: 1, time: ts(6) },
            SynthTurn::Assistant { text: "One test still expects flooring.".into(), time: ts(7) },
            SynthTurn::Assistant { text: "Updating it next.".into(), time: ts(8) },
            SynthTurn::Shell { command: "go test ./...".into(), output: "ok  \tbilling/invoice\t0.3s".into(), exit_code: 0, time: ts(9) },
            SynthTurn::User { text: "great, thanks".into(), time: ts(10) },
            SynthTurn::Assistant { text: "EUR totals now round half-even.".into(), time: ts(11) },
        ],
    }
}

#[test]
fn synthetic_round_trip() {
    let tmp = tempfile::tempdir().expect("tmp");
    let project = "/Users/dana/code/billing.api";
    let s = synth(project);
    let written = FORMAT.write_synthetic(tmp.path(), &s).expect("write");
    assert_eq!(written, tmp.path().join(".claude/projects").join(dash_encode(project)).join(format!("{}.jsonl", s.id)));
    assert!(written.parent().and_then(|p| p.file_name()).is_some_and(|n| n == "-Users-dana-code-billing-api"));

    let d = FORMAT.discover(&StoreEnv::with_home(tmp.path()));
    assert_eq!(d.sources.len(), 1);
    assert_eq!(d.sources[0].path, written);

    let mut out: Vec<Session> = Vec::new();
    FORMAT.parse(&d.sources[0], &ParseOptions::default(), &mut out).expect("parse");
    let [got] = out.as_slice() else { panic!("one session") };
    assert_eq!(got.id, s.id);
    assert_eq!(got.project.as_deref(), Some(project));
    assert_eq!(got.title.as_deref(), Some("Half-even rounding for EUR"));
    assert_eq!(got.started, Some(ts(1)));
    assert_eq!(got.updated, Some(ts(11)));
    let shape: Vec<(Role, &str)> = got.turns.iter().map(|t| (t.role, t.text.as_str())).collect();
    assert_eq!(
        shape,
        [
            (Role::User, "why are EUR totals a cent low?"),
            (Role::Assistant, "Let me look at the rounding code."),
            (Role::ToolCall, "return math.Floor(x)"),
            (Role::ToolCall, "The file /Users/dana/code/billing.api/invoice/round.go has been updated successfully."),
            (Role::ToolCall, "--- FAIL: TestRound"),
            (Role::Assistant, "One test still expects flooring."),
            (Role::Assistant, "Updating it next."),
            (Role::ToolCall, "ok  \tbilling/invoice\t0.3s"),
            (Role::User, "great, thanks"),
            (Role::Assistant, "EUR totals now round half-even."),
        ]
    );
    assert_eq!(got.turns.iter().map(|t| t.seq).collect::<Vec<_>>(), (0..10).collect::<Vec<_>>());
    assert_eq!(got.turns[2].files[0].action, FileAction::Read);
    assert_eq!(got.turns[3].files[0].action, FileAction::Edit);
    let edit = got.turns[3].edit.as_ref().expect("edit");
    assert_eq!((edit.old.as_str(), edit.new.as_deref()), ("return math.Floor(x)", Some("return math.RoundToEven(x)")));
    let shell = |i: usize| got.turns[i].tool.clone().expect("tool");
    assert_eq!(
        (shell(4).command.as_deref(), shell(4).exit, shell(4).is_error),
        (Some("go test ./invoice/..."), Some(ExitStatus::Code(1)), true)
    );
    assert_eq!((shell(7).command.as_deref(), shell(7).exit, shell(7).is_error), (Some("go test ./..."), Some(ExitStatus::Code(0)), false));

    let mut with_reasoning: Vec<Session> = Vec::new();
    FORMAT.parse(&d.sources[0], &ParseOptions { include_reasoning: true }, &mut with_reasoning).expect("parse");
    assert_eq!(with_reasoning[0].turns[1].role, Role::Reasoning);
    assert_eq!(with_reasoning[0].turns[1].text, "Probably math.Floor in round.go.");

    let text = std::fs::read_to_string(&written).expect("read");
    for kind in ["\"queue-operation\"", "\"skill_listing\"", "\"last-prompt\"", "\"toolUseResult\"", "\"sourceToolAssistantUUID\""] {
        assert!(text.contains(kind), "current-release record {kind} written");
    }
}

const HEAD: &str = concat!(
    r#"{"type":"queue-operation","operation":"enqueue","timestamp":"2026-07-17T09:00:00Z","sessionId":"abc","content":"fix the build"}"#,
    "\n",
    r#"{"type":"user","uuid":"u1","parentUuid":null,"cwd":"/src/app","sessionId":"abc","timestamp":"2026-07-17T09:00:01Z","message":{"role":"user","content":"fix the build"}}"#,
    "\n",
    r#"{"type":"attachment","uuid":"t1","parentUuid":"u1","cwd":"/src/app","sessionId":"abc","timestamp":"2026-07-17T09:00:01Z","attachment":{"type":"skill_listing","content":"- x"}}"#,
    "\n",
    r#"{"type":"assistant","uuid":"a1","parentUuid":"t1","cwd":"/src/app","sessionId":"abc","timestamp":"2026-07-17T09:00:05Z","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"Looking at the Makefile."}]}}"#,
    "\n",
);

const TAIL: &str = concat!(
    r#"{"type":"assistant","uuid":"a2","parentUuid":"a1","sessionId":"abc","timestamp":"2026-07-17T09:00:06Z","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"tu1","name":"Bash","input":{"command":"make ci"}}]}}"#,
    "\n",
    r#"{"type":"user","uuid":"u2","parentUuid":"a2","sessionId":"abc","timestamp":"2026-07-17T09:00:09Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":"Exit code 2\nmake: *** [ci] Error 2","is_error":true}]}}"#,
    "\n",
    r#"{"type":"assistant","uuid":"a3","parentUuid":"u2","sessionId":"abc","timestamp":"2026-07-17T09:00:12Z","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"The ci target needs GOFLAGS."}]}}"#,
    "\n",
);

#[test]
fn resume_reads_only_the_tail() {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("-src-app/abc.jsonl");
    touch(&path, HEAD);
    let src = SourceRef::file(&path).append_only();
    let mut first: Vec<Session> = Vec::new();
    let stats = FORMAT.parse(&src, &ParseOptions::default(), &mut first).expect("parse");
    assert_eq!(stats.end_offset, HEAD.len() as u64);
    let [s] = first.as_slice() else { panic!("one session") };
    assert_eq!(s.turns.len(), 2);

    // The head ends inside API message `m1`, which the tail goes on with: the resume point
    // is that message's first record, and its turn is made again.
    let m1 = HEAD.find(r#"{"type":"assistant","uuid":"a1""#).expect("a1") as u64;
    assert_eq!(stats.reopen, Some(deja_core::model::Reopen { offset: m1, seq: 1 }));
    std::fs::write(&path, format!("{HEAD}{TAIL}")).expect("append");
    let resumed = SourceRef { resume: Some(Resume::after(&stats, s)), ..src.clone() };
    assert_eq!(resumed.resume.as_ref().map(|r| (r.offset, r.next_seq)), Some((m1, 1)));
    let mut second: Vec<Session> = Vec::new();
    let stats2 = FORMAT.parse(&resumed, &ParseOptions::default(), &mut second).expect("resume");
    assert_eq!(stats2.end_offset, (HEAD.len() + TAIL.len()) as u64);
    assert_eq!(stats2.bytes_read, HEAD.len() as u64 - m1 + TAIL.len() as u64);
    let [t] = second.as_slice() else { panic!("one session") };
    assert_eq!(t.id, "abc");
    assert_eq!(t.project.as_deref(), Some("/src/app"), "cwd from the state the head left");
    let got: Vec<(u32, Role, &str)> = t.turns.iter().map(|x| (x.seq, x.role, x.text.as_str())).collect();
    assert_eq!(
        got,
        [
            (1, Role::Assistant, "Looking at the Makefile."),
            (2, Role::ToolCall, "make: *** [ci] Error 2"),
            (3, Role::Assistant, "The ci target needs GOFLAGS.")
        ]
    );
    assert_eq!(t.turns[1].tool.as_ref().and_then(|x| x.exit.clone()), Some(ExitStatus::Code(2)));
    assert_eq!(t.turns[1].node.as_ref().and_then(|n| n.parent.as_deref()), Some("a1"));
    let m2 = (HEAD.len() + TAIL.find(r#"{"type":"assistant","uuid":"a3""#).expect("a3")) as u64;
    assert_eq!(stats2.reopen, Some(deja_core::model::Reopen { offset: m2, seq: 3 }), "and inside message `m2`");
}

#[test]
fn resume_without_session_ids_in_the_tail_keeps_the_earlier_id() {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("-src-app/file-name-id.jsonl");
    let tail = r#"{"type":"user","uuid":"u9","timestamp":"2026-07-17T10:00:00Z","message":{"role":"user","content":"and the docs?"}}"#;
    touch(&path, &format!("{HEAD}{tail}\n"));
    let src = SourceRef {
        resume: Some(Resume { offset: HEAD.len() as u64, next_seq: 2, session_id: "abc".into(), ..Default::default() }),
        ..SourceRef::file(&path).append_only()
    };
    let mut out: Vec<Session> = Vec::new();
    FORMAT.parse(&src, &ParseOptions::default(), &mut out).expect("resume");
    assert_eq!(out[0].id, "abc");
    assert_eq!(out[0].turns[0].seq, 2);

    let beyond = SourceRef { resume: Some(Resume { offset: 1 << 40, next_seq: 2, session_id: "abc".into(), ..Default::default() }), ..src };
    let mut none: Vec<Session> = Vec::new();
    let stats = FORMAT.parse(&beyond, &ParseOptions::default(), &mut none).expect("offset past the end");
    assert!(none.iter().all(|s| s.turns.is_empty()), "nothing new: at most the session it continues, with no turns");
    assert_eq!(stats.end_offset, std::fs::metadata(&path).expect("meta").len());
}

#[test]
fn unreadable_source_is_an_error() {
    let tmp = tempfile::tempdir().expect("tmp");
    let mut out: Vec<Session> = Vec::new();
    assert!(FORMAT.parse(&SourceRef::file(tmp.path().join("gone.jsonl")), &ParseOptions::default(), &mut out).is_err());
    assert!(FORMAT.parse(&SourceRef::file(tmp.path()), &ParseOptions::default(), &mut out).is_err());
}

#[test]
fn registered_and_described() {
    let f = deja_core::lookup("claude").expect("registered");
    let info = f.info();
    assert_eq!(info.id, "claude");
    assert!(info.deja_overrides().iter().any(|(v, _)| v == "DEJA_CLAUDE_ROOT"));
    assert!(info.harness_vars().contains(&"CLAUDE_CONFIG_DIR"));
    assert!(info.capabilities.named().iter().all(|(_, c)| c.status() != "works"));
}

//! `write_synthetic` → `discover` → `parse` returns what went in, once.

use deja_adapter_deepseek::DeepSeek;
use deja_core::read::decode_zstd_frames;
use deja_core::{ExitStatus, FileAction, HarnessFormat, ParseOptions, Role, Session, StoreEnv, SynthSession, SynthTurn, Timestamp};

fn t(s: i64) -> Timestamp {
    Timestamp(1_787_700_000_000 + s * 1000)
}

fn synth(id: &str, title: Option<&str>) -> SynthSession {
    SynthSession {
        id: id.to_string(),
        project: "/work/billing-api".to_string(),
        title: title.map(str::to_string),
        started: t(0),
        turns: vec![
            SynthTurn::User { text: "why do invoices round down?".into(), time: t(1) },
            SynthTurn::Reasoning { text: "look at invoice/round.go".into(), time: t(2) },
            SynthTurn::Assistant { text: "Let me look at the rounding code — it uses math.Floor.".into(), time: t(3) },
            SynthTurn::Read { path: "/work/billing-api/invoice/round.go".into(), output: "return math.Floor(x)".into(), time: t(4) },
            SynthTurn::Edit {
                path: "/work/billing-api/invoice/round.go".into(),
                old: "return math.Floor(x)".into(),
                new: "return math.Round(x)".into(),
                time: t(5),
            },
            SynthTurn::Shell {
                command: "go test ./invoice/...".into(),
                output: "--- FAIL: TestRound\nFAIL".into(),
                exit_code: 1,
                time: t(6),
            },
            SynthTurn::Shell { command: "go test ./invoice/...".into(), output: "ok  invoice 0.01s".into(), exit_code: 0, time: t(7) },
            SynthTurn::Assistant { text: "Fixed: invoices now round half up.".into(), time: t(8) },
            SynthTurn::User { text: "and touch the changelog".into(), time: t(9) },
            SynthTurn::Shell { command: "git status".into(), output: String::new(), exit_code: 0, time: t(10) },
            SynthTurn::Assistant { text: "Done. 日本語 text survives streaming too.".into(), time: t(11) },
        ],
    }
}

fn parse(path: &std::path::Path, opts: &ParseOptions) -> Session {
    let mut out = Vec::new();
    let src = DeepSeek.discover(&StoreEnv::with_home(path)).sources;
    assert_eq!(src.len(), 1);
    DeepSeek.parse(&src[0], opts, &mut out).expect("parse");
    assert_eq!(out.len(), 1);
    out.remove(0)
}

#[test]
fn synthetic_session_round_trips() {
    let home = tempfile::tempdir().expect("tmp");
    let s = synth("0f0f0f0f-1111-4222-8333-444455556666", Some("Invoice rounding fix"));
    let written = DeepSeek.write_synthetic(home.path(), &s).expect("write");
    assert!(written.ends_with(".dsh/sessions/--work-billing-api--/session-0f0f0f0f-1111-4222-8333-444455556666/session.v4.jsonl.zstd"));

    let found = DeepSeek.discover(&StoreEnv::with_home(home.path())).sources;
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].path, written);
    assert_eq!(found[0].generation, Some(4));

    let raw = std::fs::read(&written).expect("read");
    assert!(raw.windows(4).filter(|w| *w == [0x28, 0xB5, 0x2F, 0xFD]).count() >= 3, "several zstd frames");
    let (decoded, err) = decode_zstd_frames(&raw).expect("within the decode limit");
    assert!(err.is_none());
    let decoded = String::from_utf8(decoded).expect("utf8");
    assert!(decoded.contains("\"kind\":\"plugin\"") && decoded.contains("text-chunks") && decoded.contains("[exit code: 1]"));

    let got = parse(home.path(), &ParseOptions::default());
    assert_eq!(got.id, s.id);
    assert_eq!(got.project.as_deref(), Some("/work/billing-api"));
    assert_eq!(got.title.as_deref(), Some("Invoice rounding fix"));
    assert_eq!(got.started, Some(t(0)));
    assert_eq!(got.updated, Some(t(11)));
    let texts = |role: Role| got.turns.iter().filter(|x| x.role == role).map(|x| x.text.clone()).collect::<Vec<_>>();
    assert_eq!(texts(Role::User), ["why do invoices round down?", "and touch the changelog"]);
    assert_eq!(
        texts(Role::Assistant),
        [
            "Let me look at the rounding code — it uses math.Floor.",
            "Fixed: invoices now round half up.",
            "Done. 日本語 text survives streaming too."
        ],
        "streamed text and complete message are one answer"
    );
    assert!(got.turns.iter().all(|x| !x.partial && x.role != Role::Reasoning && x.role != Role::ToolOutput));
    assert!(got.turns.iter().all(|x| !x.text.contains("runtime context") && !x.text.contains("[exit code")));

    let calls: Vec<_> = got.turns.iter().filter(|x| x.role == Role::ToolCall).collect();
    assert_eq!(calls.len(), 5);
    assert_eq!(calls[0].files[0].action, FileAction::Read);
    assert_eq!(calls[0].text, "return math.Floor(x)");
    let edit = calls[1].edit.as_ref().expect("edit");
    assert_eq!(
        (edit.path.as_str(), edit.old.as_str(), edit.new.as_deref()),
        ("/work/billing-api/invoice/round.go", "return math.Floor(x)", Some("return math.Round(x)"))
    );
    let shell: Vec<_> = calls[2..]
        .iter()
        .map(|c| {
            let tool = c.tool.as_ref().expect("tool");
            (tool.command.clone().unwrap_or_default(), tool.exit.clone(), c.text.clone())
        })
        .collect();
    assert_eq!(
        shell,
        [
            ("go test ./invoice/...".to_string(), Some(ExitStatus::Code(1)), "--- FAIL: TestRound\nFAIL".to_string()),
            ("go test ./invoice/...".to_string(), Some(ExitStatus::Code(0)), "ok  invoice 0.01s".to_string()),
            ("git status".to_string(), Some(ExitStatus::Code(0)), String::new()),
        ]
    );
    assert!(calls[2].tool.as_ref().is_some_and(|x| x.is_error));

    let with = parse(home.path(), &ParseOptions { include_reasoning: true });
    let reasoning: Vec<_> = with.turns.iter().filter(|x| x.role == Role::Reasoning).map(|x| x.text.as_str()).collect();
    assert_eq!(reasoning, ["look at invoice/round.go"]);
}

#[test]
fn untitled_session_keeps_the_fallback_title_and_sessions_do_not_collide() {
    let home = tempfile::tempdir().expect("tmp");
    DeepSeek.write_synthetic(home.path(), &synth("aaaaaaaa-0000-4000-8000-000000000001", None)).expect("write");
    DeepSeek.write_synthetic(home.path(), &synth("aaaaaaaa-0000-4000-8000-000000000002", Some("x"))).expect("write");
    let found = DeepSeek.discover(&StoreEnv::with_home(home.path())).sources;
    assert_eq!(found.len(), 2);
    let mut out = Vec::new();
    DeepSeek.parse(&found[0], &ParseOptions::default(), &mut out).expect("parse");
    assert_eq!(out[0].id, "aaaaaaaa-0000-4000-8000-000000000001");
    assert_eq!(out[0].title.as_deref(), Some("why do invoices round down?"));
}

#[test]
fn empty_synthetic_session_writes_a_header_only_log() {
    let home = tempfile::tempdir().expect("tmp");
    let mut s = synth("bbbbbbbb-0000-4000-8000-000000000001", None);
    s.turns.clear();
    let path = DeepSeek.write_synthetic(home.path(), &s).expect("write");
    let mut out = Vec::new();
    DeepSeek.parse(&deja_core::SourceRef::file(path), &ParseOptions::default(), &mut out).expect("parse");
    assert!(out.is_empty());
}

//! `write_synthetic` → `discover` → `parse` gives back what went in.

use deja_adapter_codex::CodexFormat;
use deja_core::{ExitStatus, FileAction, HarnessFormat, ParseOptions, Role, SourceRef, StoreEnv, SynthSession, SynthTurn, Timestamp};

fn t(s: u32) -> Timestamp {
    Timestamp(1_796_032_800_000 + i64::from(s) * 1000)
}

fn session(id: &str) -> SynthSession {
    SynthSession {
        id: id.to_string(),
        project: "/home/dev/src/pool it".to_string(),
        title: None,
        started: t(0),
        turns: vec![
            SynthTurn::User { text: "why does the pool refuse connections under load?".into(), time: t(1) },
            SynthTurn::Reasoning { text: "Check max_client_conn first.".into(), time: t(2) },
            SynthTurn::Shell { command: "psql -c 'show pools'".into(), output: "cl_waiting | 58\n".into(), exit_code: 0, time: t(3) },
            SynthTurn::Read { path: "/home/dev/src/pool it/pgbouncer.ini".into(), output: "max_client_conn = 100\n".into(), time: t(4) },
            SynthTurn::Edit {
                path: "/home/dev/src/pool it/pgbouncer.ini".into(),
                old: "max_client_conn = 100".into(),
                new: "max_client_conn = 400".into(),
                time: t(5),
            },
            SynthTurn::Edit { path: "/etc/notes/NEW.md".into(), old: String::new(), new: "fresh file\n".into(), time: t(6) },
            SynthTurn::Shell { command: "make reload".into(), output: "reload failed: permission denied".into(), exit_code: 2, time: t(7) },
            SynthTurn::Assistant { text: "Raised max_client_conn to 400; reload needs sudo.".into(), time: t(8) },
            SynthTurn::User { text: "ok, thanks".into(), time: t(9) },
            SynthTurn::Assistant { text: "You're welcome.".into(), time: t(10) },
        ],
    }
}

#[test]
fn synthetic_rollout_round_trips() {
    let home = tempfile::tempdir().expect("tempdir");
    let s = session("019ad3f1-aaaa-7bbb-8ccc-ddddeeeeffff");
    let path = CodexFormat.write_synthetic(home.path(), &s).expect("write");
    assert!(path.starts_with(home.path().join(".codex/sessions/2026/11/30")), "{}", path.display());

    let found = CodexFormat.discover(&StoreEnv::with_home(home.path()));
    assert_eq!(found.sources.len(), 1);
    assert_eq!(found.sources[0].path, path);
    assert!(found.sources[0].append_only);

    let mut out = Vec::new();
    let stats = CodexFormat.parse(&found.sources[0], &ParseOptions::default(), &mut out).expect("parse");
    assert_eq!(stats.skipped, 0);
    assert_eq!(out.len(), 1);
    let p = &out[0];
    assert_eq!(p.id, s.id);
    assert_eq!(p.project.as_deref(), Some("/home/dev/src/pool it"));
    assert_eq!(p.started, Some(t(0)));
    let roles: Vec<Role> = p.turns.iter().map(|t| t.role).collect();
    use Role::*;
    assert_eq!(roles, [User, ToolCall, ToolCall, ToolCall, ToolCall, ToolCall, Assistant, User, Assistant]);
    assert_eq!(p.turns[0].text, "why does the pool refuse connections under load?");
    assert!(p.turns.iter().all(|t| !t.text.contains("environment_context") && !t.text.contains("permissions instructions")));

    let shell = &p.turns[1];
    assert_eq!(shell.tool.as_ref().and_then(|t| t.command.as_deref()), Some("psql -c 'show pools'"));
    assert_eq!(shell.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(0)));
    assert_eq!(shell.text, "cl_waiting | 58");

    let read = &p.turns[2];
    assert_eq!(read.tool.as_ref().and_then(|t| t.command.as_deref()), Some("cat '/home/dev/src/pool it/pgbouncer.ini'"));
    assert_eq!(read.text, "max_client_conn = 100");

    let edit = &p.turns[3];
    assert_eq!(edit.files.len(), 1);
    assert_eq!(edit.files[0].path, "/home/dev/src/pool it/pgbouncer.ini");
    assert_eq!(edit.files[0].action, FileAction::Edit);
    let e = edit.edit.as_ref().expect("edit");
    assert_eq!(
        (e.path.as_str(), e.old.as_str(), e.new.as_deref()),
        ("/home/dev/src/pool it/pgbouncer.ini", "max_client_conn = 100", Some("max_client_conn = 400"))
    );

    let add = &p.turns[4];
    assert_eq!(add.files[0].path, "/etc/notes/NEW.md");
    assert_eq!(add.files[0].action, FileAction::Write);
    assert!(add.edit.is_none(), "a new file replaces nothing");

    let failed = &p.turns[5];
    assert_eq!(failed.tool.as_ref().and_then(|t| t.command.as_deref()), Some("make reload"));
    assert_eq!(failed.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(2)));
    assert!(failed.tool.as_ref().is_some_and(|t| t.is_error));
    assert_eq!(p.turns[6].text, "Raised max_client_conn to 400; reload needs sudo.");

    let mut with_reasoning = Vec::new();
    CodexFormat.parse(&SourceRef::file(&path), &ParseOptions { include_reasoning: true }, &mut with_reasoning).expect("parse");
    assert_eq!(
        with_reasoning[0].turns.iter().filter(|t| t.role == Reasoning).map(|t| t.text.as_str()).collect::<Vec<_>>(),
        ["Check max_client_conn first."]
    );
}

#[test]
fn several_sessions_share_a_home() {
    let home = tempfile::tempdir().expect("tempdir");
    for i in 0..3 {
        CodexFormat.write_synthetic(home.path(), &session(&format!("019ad3f1-aaaa-7bbb-8ccc-00000000000{i}"))).expect("write");
    }
    let found = CodexFormat.discover(&StoreEnv::with_home(home.path()));
    assert_eq!(found.sources.len(), 3);
    let mut ids = Vec::new();
    for src in &found.sources {
        let mut out = Vec::new();
        CodexFormat.parse(src, &ParseOptions::default(), &mut out).expect("parse");
        ids.extend(out.into_iter().map(|s| s.id));
    }
    assert_eq!(ids.len(), 3);
}

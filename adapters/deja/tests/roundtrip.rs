//! `write_synthetic` and `append_note` → `discover` → `parse` give back what went in;
//! secrets never reach the file.

use deja_adapter_deja::{append_note, notes_path, DejaNotes, Note};
use deja_core::{HarnessFormat, ParseOptions, StoreEnv, SynthSession, SynthTurn, Timestamp};

fn parse_all(env: &StoreEnv) -> Vec<deja_core::Session> {
    let mut out = Vec::new();
    for src in DejaNotes.discover(env).sources {
        DejaNotes.parse(&src, &ParseOptions::default(), &mut out).expect("parse");
    }
    out
}

#[test]
fn synthetic_sessions_become_notes() {
    let home = tempfile::tempdir().expect("tmp");
    let s = SynthSession {
        id: "n-00000000000000aa".into(),
        project: "/work/billing".into(),
        title: Some("Invoices round half up".into()),
        started: Timestamp(1_787_700_000_000),
        turns: vec![
            SynthTurn::User { text: "decided with finance".into(), time: Timestamp(1_787_700_000_000) },
            SynthTurn::Shell { command: "ls".into(), output: String::new(), exit_code: 0, time: Timestamp(1_787_700_000_000) },
        ],
    };
    let path = DejaNotes.write_synthetic(home.path(), &s).expect("write");
    assert_eq!(path, home.path().join(".local/share/deja/notes.jsonl"));
    let got = parse_all(&StoreEnv::with_home(home.path()));
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].id, s.id);
    assert_eq!(got[0].title.as_deref(), Some("Invoices round half up"));
    assert_eq!(got[0].turns[0].text, "Invoices round half up\ndecided with finance");
    assert_eq!(got[0].project.as_deref(), Some("/work/billing"));
    assert_eq!(got[0].started, Some(s.started));
}

#[test]
fn appended_notes_are_redacted_private_and_each_their_own_session() {
    let home = tempfile::tempdir().expect("tmp");
    let env = StoreEnv::with_home(home.path());
    let path = notes_path(&env);
    let a = Note::new("deploy key is AKIAIOSFODNN7EXAMPLE, rotate monthly", Some("/src/app".into()), vec!["ops".into(), " ".into()]);
    let b = Note::new("second note", None, Vec::new());
    assert_ne!(a.id, b.id);
    append_note(&path, &a).expect("append");
    append_note(&path, &b).expect("append");
    let raw = std::fs::read_to_string(&path).expect("read");
    assert!(!raw.contains("AKIAIOSFODNN7EXAMPLE"), "{raw}");
    assert!(raw.contains("[redacted:aws_key]"));
    assert_eq!(raw.lines().count(), 2);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).expect("stat").permissions().mode() & 0o777, 0o600);
    }
    let got = parse_all(&env);
    assert_eq!(got.len(), 2);
    assert!(got[0].turns[0].text.ends_with("tags: ops"), "blank tags dropped: {}", got[0].turns[0].text);
}

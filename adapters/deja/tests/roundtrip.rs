//! `write_synthetic` and `append_note` → `discover` → `parse` give back what went in;
//! secrets never reach the file; notes are bounded and say who wrote them.

use deja_adapter_deja::{
    append_note, notes_path, DejaNotes, Note, NoteError, NoteSource, MAX_NOTE_BYTES, MAX_PROJECT_BYTES, MAX_TAGS, MAX_TAG_BYTES,
    NOTE_BY_AGENT, NOTE_BY_PERSON, NOTE_UNSOURCED,
};
use deja_core::{HarnessFormat, ParseOptions, StoreEnv, SynthSession, SynthTurn, Timestamp};

fn parse_all(env: &StoreEnv) -> Vec<deja_core::Session> {
    deja_core::testkit::read_all(&DejaNotes, env, &ParseOptions::default())
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
    let a = Note::new(
        "deploy key is AKIAIOSFODNN7EXAMPLE, rotate monthly",
        Some("/src/app".into()),
        vec!["ops".into(), " ".into()],
        NoteSource::Cli,
    )
    .expect("note");
    let b = Note::new("second note", None, Vec::new(), NoteSource::Mcp).expect("note");
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

#[test]
fn new_notes_over_a_limit_are_refused_and_every_field_is_redacted() {
    let n = |text: &str, project: Option<&str>, tags: Vec<String>| Note::new(text, project.map(str::to_string), tags, NoteSource::Mcp);
    assert!(matches!(n("  ", None, vec![]), Err(NoteError::Empty)));
    assert!(matches!(n(&"x".repeat(MAX_NOTE_BYTES + 1), None, vec![]), Err(NoteError::TooLong(_))));
    assert!(n(&"x".repeat(MAX_NOTE_BYTES), None, vec![]).is_ok());
    let many: Vec<String> = (0..=MAX_TAGS).map(|i| format!("t{i}")).collect();
    assert!(matches!(n("x", None, many), Err(NoteError::TooManyTags(_))));
    // Duplicates and blanks do not count against the limit.
    let repeated: Vec<String> = std::iter::repeat_n("same".to_string(), 3 * MAX_TAGS).chain([" ".to_string()]).collect();
    assert_eq!(n("x", None, repeated).expect("note").tags, ["same"]);
    assert!(matches!(n("x", None, vec!["t".repeat(MAX_TAG_BYTES + 1)]), Err(NoteError::TagTooLong(_))));
    assert!(matches!(n("x", Some(&"p".repeat(MAX_PROJECT_BYTES + 1)), vec![]), Err(NoteError::ProjectTooLong(_))));
    let e = n("x", None, vec!["t".repeat(MAX_TAG_BYTES + 1)]).expect_err("refused").to_string();
    assert!(e.contains(&format!("at most {MAX_TAG_BYTES} bytes")), "{e}");

    let secret = "AKIAIOSFODNN7EXAMPLE";
    let note =
        n(&format!("key {secret}"), Some(&format!("/src/{secret}")), vec![format!("k-{secret}"), "two\nlines".into()]).expect("note");
    let line = serde_json::to_string(&note).expect("json");
    assert!(!line.contains(secret), "{line}");
    assert_eq!(note.tags[1], "two lines", "a tag is one line");
    assert!(line.contains(r#""source":"mcp""#), "{line}");
}

#[test]
fn a_note_says_who_wrote_it_and_old_lines_still_parse() {
    let home = tempfile::tempdir().expect("tmp");
    let env = StoreEnv::with_home(home.path());
    let path = notes_path(&env);
    append_note(&path, &Note::new("mine", None, Vec::new(), NoteSource::Cli).expect("note")).expect("append");
    append_note(&path, &Note::new("an agent's", None, Vec::new(), NoteSource::Mcp).expect("note")).expect("append");
    // A line from before the source was recorded, and one no deja wrote: cut to the limits.
    let tags: Vec<String> = (0..100).map(|i| format!("{i}{}", "t".repeat(200))).collect();
    let old = serde_json::json!({"id": "n-00000000000000ff", "time": 1, "text": "old", "tags": "a, b"});
    let odd = serde_json::json!({"id": "n-00000000000000fe", "text": "y".repeat(MAX_NOTE_BYTES * 3), "tags": tags, "source": "somebody"});
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, format!("{old}\n{odd}\n").as_bytes()))
        .expect("append");
    let got = parse_all(&env);
    let kinds: Vec<&str> = got.iter().filter_map(|s| s.kind.as_deref()).collect();
    assert_eq!(kinds, [NOTE_BY_PERSON, NOTE_BY_AGENT, NOTE_UNSOURCED, NOTE_UNSOURCED]);
    assert!(got[2].turns[0].text.ends_with("tags: a, b"), "{}", got[2].turns[0].text);
    let text = &got[3].turns[0].text;
    assert!(text.len() <= MAX_NOTE_BYTES + "\ntags: ".len() + MAX_TAGS * (MAX_TAG_BYTES + 2), "{} bytes", text.len());
}

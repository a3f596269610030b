//! The committed notes file, snapshotted, plus plain asserts for the rules: one session
//! per note, a later line with the same id replaces the note, bad lines are counted,
//! the session kind says who wrote the note.

use std::path::PathBuf;

use deja_adapter_deja::DejaNotes;
use deja_core::{HarnessFormat, ParseOptions, ParseStats, Role, Session, StoreEnv};

fn home() -> PathBuf {
    deja_core::fixture_home!()
}

fn parse() -> (Vec<Session>, ParseStats) {
    let sources = DejaNotes.discover(&StoreEnv::with_home(home())).sources;
    assert_eq!(sources.len(), 1);
    let mut out = Vec::new();
    let stats = DejaNotes.parse(&sources[0], &ParseOptions::default(), &mut out).expect("parse");
    for s in &mut out {
        s.source.path = PathBuf::from(s.source.path.display().to_string().replace(env!("CARGO_MANIFEST_DIR"), "<crate>"));
    }
    (out, stats)
}

#[test]
fn notes_file() {
    let (sessions, stats) = parse();
    insta::assert_json_snapshot!(sessions);
    let ids: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        ["n-0000000000000001", "n-0000000000000002", "n-0000000000000004", "n-0000000000000006", "n-0000000000000007"],
        "a torn last line is a note still being written"
    );
    // Who wrote each: not recorded on the older lines, then the person, then an agent.
    let kinds: Vec<&str> = sessions.iter().filter_map(|s| s.kind.as_deref()).collect();
    assert_eq!(kinds, ["unsourced-note", "unsourced-note", "unsourced-note", "note", "agent-note"]);
    assert!(sessions[0].turns[0].text.contains("pool_size is 48"), "the later line replaced the note");
    assert_eq!(sessions[0].title.as_deref(), Some("staging pgbouncer pool_size is 48 now (raised for the new workers)"));
    assert_eq!(sessions[0].project.as_deref(), Some("/src/app"));
    assert!(sessions.iter().all(|s| s.harness == "deja" && s.turns.len() == 1 && s.turns[0].role == Role::Note));
    assert_eq!(sessions[1].title.as_deref(), Some("Release checklist:"));
    assert!(sessions[1].turns[0].text.ends_with("tags: release, ci"));
    assert_eq!(sessions[2].started, None, "no time, no invented one");
    // "not json", the blank note, the array line and the torn last line.
    assert_eq!(stats.skipped, 4, "{stats:?}");
}

#[test]
fn discovery_honours_the_data_dir_and_the_root_override() {
    let tmp = tempfile::tempdir().expect("tmp");
    let d = DejaNotes.discover(&StoreEnv::with_home(tmp.path()));
    assert!(d.sources.is_empty());
    assert_eq!(d.roots, vec![(tmp.path().join(".local/share/deja"), false)]);
    let moved = tmp.path().join("data");
    std::fs::create_dir_all(moved.join("deja")).expect("mkdir");
    std::fs::write(moved.join("deja/notes.jsonl"), b"").expect("write");
    let env = StoreEnv::with_home(tmp.path()).set("XDG_DATA_HOME", moved.display().to_string());
    assert_eq!(DejaNotes.discover(&env).sources[0].path, moved.join("deja/notes.jsonl"));
    let env = StoreEnv::with_home(tmp.path()).set("DEJA_DEJA_ROOT", home().join(".local/share/deja").display().to_string());
    assert_eq!(DejaNotes.discover(&env).sources.len(), 1);
    assert!(deja_core::lookup("deja").is_some(), "registered with inventory");
}

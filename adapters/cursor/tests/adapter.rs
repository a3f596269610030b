//! Every test of deja-adapter-cursor, in one test binary: the conformance kit (snapshots
//! of the fixture databases and transcript, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for both stores, and the IDE row cursor.

use deja_adapter_cursor::CursorFormat;
use deja_core::testkit::materialize_home;
use deja_core::{Edit, FileAction, FileTouch, HarnessFormat, ParseOptions, ParseStats, Role, Session, SourceRef, StoreEnv};

deja_core::conformance!(
    CursorFormat,
    switch "DEJA_INCLUDE_SUBAGENTS",
    wires "CURSOR_CONFIG_DIR" => ".cursor"
);

fn fixture_home() -> (tempfile::TempDir, Vec<rusqlite::Connection>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let writers = materialize_home(&deja_core::fixture_home!(), tmp.path()).expect("fixture home");
    (tmp, writers)
}

fn read(src: &SourceRef) -> (Vec<Session>, ParseStats) {
    let mut out = Vec::new();
    let stats = CursorFormat.parse(src, &ParseOptions::default(), &mut out).expect("the fixture parses");
    (out, stats)
}

fn all(env: &StoreEnv) -> Vec<Session> {
    CursorFormat.discover(env).sources.iter().flat_map(|s| read(s).0).collect()
}

#[test]
fn ide_composers_read_in_time_order_with_project_and_fallbacks() {
    let (home, _w) = fixture_home();
    let sessions = all(&StoreEnv::with_home(home.path()));
    let c42 = sessions.iter().find(|s| s.id == "c-42").unwrap();
    assert_eq!((c42.title.as_deref(), c42.project.as_deref()), (Some("Fix locale cache"), Some("/src/i18n")));
    let turns: Vec<(Role, &str)> = c42.turns.iter().map(|t| (t.role, t.text.as_str())).collect();
    assert_eq!(
        turns,
        vec![
            (Role::User, "(pinned context, no timestamp)"),
            (Role::User, "cache returns English for de-DE"),
            (Role::Assistant, "The key omits the locale."),
            (Role::Assistant, "Adding the locale to the key."),
        ],
        "sorted by timestamp, the unstamped bubble at the start, rawText fallback"
    );
    assert_eq!(c42.turns[0].time, c42.started, "an unstamped bubble takes the session start");
    assert!(!sessions.iter().any(|s| s.id == "c-43"), "blank bubbles only: no session");
    let c44 = sessions.iter().find(|s| s.id == "c-44").expect("the id from the key");
    assert_eq!(c44.turns[1].role, Role::Assistant, "type 0 is the model");
    assert!(sessions.iter().any(|s| s.id == "c-old"), "older per-workspace databases are read");
}

#[test]
fn the_cli_transcript_keeps_work_and_strips_the_wrappers() {
    let (home, _w) = fixture_home();
    let sessions = all(&StoreEnv::with_home(home.path()));
    let chat = sessions.iter().find(|s| s.id == "chat-7").unwrap();
    assert_eq!(chat.project.as_deref(), Some("src/i18n"), "nothing resolves on this machine: the last two parts");
    let mut indexed = chat.clone();
    deja_core::normalize::normalize(&mut indexed, &Default::default(), CursorFormat.info().injected);
    assert_eq!((indexed.turns[0].role, indexed.turns[0].text.as_str()), (Role::User, "why is de-DE wrong?"));
    let shell = chat.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "Shell")).unwrap();
    assert_eq!(shell.tool.as_ref().unwrap().command.as_deref(), Some("npx vitest run cache"));
    assert!(shell.tool.as_ref().unwrap().exit.is_none() && shell.text.is_empty(), "no results in Cursor CLI transcripts");
    let files: Vec<&FileTouch> = chat.turns.iter().flat_map(|t| &t.files).collect();
    for (path, action) in [
        ("/src/i18n/cache.ts", FileAction::Read),
        ("/src/i18n/cache.ts", FileAction::Edit),
        ("/src/i18n/cache.test.ts", FileAction::Write),
        ("/src/i18n/old-cache.ts", FileAction::Delete),
    ] {
        assert!(files.contains(&&FileTouch { path: path.into(), action }), "{path} {action:?}");
    }
    let edit = chat.turns.iter().find_map(|t| t.edit.as_ref()).unwrap();
    assert_eq!(edit, &Edit { path: "/src/i18n/cache.ts".into(), old: "key = id".into(), new: Some("key = id + locale".into()) });
    assert_eq!(chat.turns.last().unwrap().text, "The key now includes the locale.", "the torn last line is skipped");
    assert!(!sessions.iter().any(|s| s.id == "sub-1"), "sub-agent transcripts are off by default");
    let with = all(&StoreEnv::with_home(home.path()).set("DEJA_INCLUDE_SUBAGENTS", "1"));
    assert_eq!(with.iter().find(|s| s.id == "sub-1").map(|s| s.turns[0].text.as_str()), Some("sub-agent prompt"), "a BOM is fine");
}

#[test]
fn a_grown_composer_is_the_only_one_re_read() {
    let (home, writers) = fixture_home();
    let global = home.path().join(".config/Cursor/User/globalStorage/state.vscdb");
    let mut src = CursorFormat.discover(&StoreEnv::with_home(home.path())).sources.into_iter().find(|s| s.path == global).unwrap();
    let (first, stats) = read(&src);
    assert_eq!(first.len(), 2);
    src.cursor = stats.cursor.clone();
    assert!(src.cursor.is_some());
    let (again, stats2) = read(&src);
    assert!(again.is_empty(), "nothing changed: {:?}", again.iter().map(|s| &s.id).collect::<Vec<_>>());
    assert_eq!(stats2.cursor, stats.cursor);

    // The writers are in key order of the fixture files: the global database is first.
    writers[0]
        .execute_batch(
            "INSERT INTO cursorDiskKV VALUES ('bubbleId:c-42:b6', '{\"type\":1,\"text\":\"and fr-CA?\",\"timestamp\":1775200000000}');
             UPDATE cursorDiskKV SET value = json_set(value, '$.lastUpdatedAt', 1775200000000) WHERE key = 'composerData:c-42';",
        )
        .expect("grow a composer");
    let (grown, _) = read(&src);
    assert_eq!(grown.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), vec!["c-42"]);
    assert_eq!(grown[0].turns.last().unwrap().text, "and fr-CA?");
    assert_eq!(grown[0].turns.len(), 5, "re-read whole");

    src.cursor = Some("garbage".into());
    assert_eq!(read(&src).0.len(), 2, "an unknown cursor means a full read");
}

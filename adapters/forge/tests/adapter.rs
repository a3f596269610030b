//! Every test of deja-adapter-forge, in one test binary: the conformance kit (snapshots of
//! the fixture database, arbitrary bytes, mutated fixtures, store overrides), then the
//! rules that matter most for Forge, and the row cursor.

use std::path::Path;

use deja_adapter_forge::ForgeFormat;
use deja_core::testkit::materialize_home;
use deja_core::{Edit, FileAction, FileTouch, HarnessFormat, ParseOptions, Role, Session, SourceRef, StoreEnv, Timestamp};

deja_core::conformance!(ForgeFormat);

fn fixture_home() -> (tempfile::TempDir, Vec<rusqlite::Connection>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let writers = materialize_home(&deja_core::fixture_home!(), tmp.path()).expect("fixture home");
    (tmp, writers)
}

fn read(src: &SourceRef, opts: &ParseOptions) -> (Vec<Session>, deja_core::ParseStats) {
    let mut out = Vec::new();
    let stats = ForgeFormat.parse(src, opts, &mut out).expect("the fixture parses");
    (out, stats)
}

fn source(home: &Path) -> SourceRef {
    let found = ForgeFormat.discover(&StoreEnv::with_home(home));
    assert_eq!(found.sources.len(), 1, "one database");
    found.sources[0].clone()
}

#[test]
fn the_tool_session_reads_with_roles_work_project_and_times() {
    let (home, _w) = fixture_home();
    let src = source(home.path());
    assert_eq!(src.parts, vec![home.path().join(".forge/.forge.db-wal")], "the WAL is part of the source");
    let (sessions, stats) = read(&src, &ParseOptions::default());
    assert_eq!(stats.skipped, 1, "the torn context only: {:?}", stats.problems);
    let mut ids: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, vec!["c0ffee01-rate", "c0ffee02-review", "c0ffee03-plain"], "the empty conversation is not a session");

    let main = sessions.iter().find(|s| s.id == "c0ffee01-rate").unwrap();
    assert_eq!((main.project.as_deref(), main.title.as_deref()), (Some("/src/api"), Some("Rate limiting for the API")));
    assert_eq!((main.turns[0].role, main.turns[0].text.as_str()), (Role::User, "add rate limiting"));
    assert!(!main.turns.iter().any(|t| t.text.contains("You are Forge")), "the system message is not speech");
    assert!(!main.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning is off by default");
    assert_eq!(main.started, Some(Timestamp::parse_str("2026-05-01T09:00:00Z").unwrap()));

    let shell: Vec<_> = main.turns.iter().filter(|t| t.tool.as_ref().is_some_and(|x| x.name == "shell")).collect();
    assert_eq!(shell.len(), 2);
    assert_eq!(shell[0].tool.as_ref().unwrap().command.as_deref(), Some("cargo add governor"));
    assert_eq!(shell[0].text, "Adding governor v0.6", "the result is folded into its call");
    assert!(!shell[0].tool.as_ref().unwrap().is_error);
    assert!(shell[1].tool.as_ref().unwrap().is_error, "output.is_error marks the failure");
    assert!(!main.turns.iter().any(|t| t.text == "a result with no call id"), "an empty call_id is skipped");

    let files: Vec<&FileTouch> = main.turns.iter().flat_map(|t| &t.files).collect();
    assert!(files.contains(&&FileTouch { path: "/src/api/src/main.rs".into(), action: FileAction::Read }), "relative path under the cwd");
    assert!(files.contains(&&FileTouch { path: "/src/api/src/limit.rs".into(), action: FileAction::Write }));
    let edit = main.turns.iter().find_map(|t| t.edit.as_ref()).expect("the patch");
    assert_eq!(
        edit,
        &Edit {
            path: "/src/api/src/main.rs".into(),
            old: "let app = Router::new();".into(),
            new: Some("let app = Router::new().layer(limiter);".into())
        }
    );
    let last = main.turns.last().unwrap();
    assert_eq!((last.role, last.text.as_str()), (Role::Assistant, "Rate limiting is in; the failing test needs the import."));
}

#[test]
fn the_sub_agent_has_its_parent_and_the_injected_cwd_is_not_speech() {
    let (home, _w) = fixture_home();
    let (sessions, _) = read(&source(home.path()), &ParseOptions::default());
    let kid = sessions.iter().find(|s| s.id == "c0ffee02-review").unwrap();
    assert_eq!((kid.parent.as_deref(), kid.kind.as_deref()), (Some("c0ffee01-rate"), Some("subagent")));
    assert_eq!(kid.project.as_deref(), Some("/src/api"));
    let mut indexed = kid.clone();
    deja_core::normalize::normalize(&mut indexed, &Default::default(), ForgeFormat.info().injected);
    assert_eq!(indexed.turns[0].text, "review the limiter");

    let plain = sessions.iter().find(|s| s.id == "c0ffee03-plain").unwrap();
    assert_eq!(plain.project, None, "no cwd tag, no project");
    assert_eq!(plain.turns[0].text, "what is exponential backoff?", "raw_content.Text fallback");
    assert!(plain.parent.is_none());
}

#[test]
fn reasoning_comes_only_on_request() {
    let (home, _w) = fixture_home();
    let (sessions, _) = read(&source(home.path()), &ParseOptions { include_reasoning: true });
    let main = sessions.iter().find(|s| s.id == "c0ffee01-rate").unwrap();
    assert!(main.turns.iter().any(|t| t.role == Role::Reasoning && t.text == "A token bucket per client should do."));
}

#[test]
fn a_grown_conversation_is_the_only_one_re_read() {
    let (home, writers) = fixture_home();
    let mut src = source(home.path());
    let (all, stats) = read(&src, &ParseOptions::default());
    assert_eq!(all.len(), 3);
    src.cursor = stats.cursor.clone();
    assert!(src.cursor.is_some(), "a database with updated_at returns a cursor");
    let (again, stats2) = read(&src, &ParseOptions::default());
    assert!(again.is_empty(), "nothing changed: {:?}", again.iter().map(|s| &s.id).collect::<Vec<_>>());
    assert_eq!(stats2.cursor, stats.cursor);

    // Forge rewrites the row's context and bumps updated_at as the conversation grows.
    writers[0]
        .execute_batch(
            "UPDATE conversations SET updated_at = '2026-05-04 10:05:00', context = json_insert(context, '$.messages[#]', \
             json('{\"message\":{\"text\":{\"role\":\"user\",\"content\":\"and jitter?\",\"timestamp\":\"2026-05-04T10:05:00Z\"}}}')) \
             WHERE conversation_id = 'c0ffee03-plain'",
        )
        .expect("grow a conversation");
    let (grown, stats3) = read(&src, &ParseOptions::default());
    assert_eq!(grown.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), vec!["c0ffee03-plain"]);
    assert_eq!(grown[0].turns.last().unwrap().text, "and jitter?", "re-read whole, with the new message");
    assert_eq!(grown[0].turns.len(), 3);
    src.cursor = stats3.cursor;
    assert!(read(&src, &ParseOptions::default()).0.is_empty());

    src.cursor = Some("garbage".into());
    assert_eq!(read(&src, &ParseOptions::default()).0.len(), 3, "an unknown cursor means a full read");
}

//! Every test of deja-adapter-zcode, in one test binary: the conformance kit (snapshots of
//! every source in `tests/fixtures/home/`, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for ZCode's three stores.

use std::path::Path;

use deja_adapter_zcode::ZCodeFormat;
use deja_core::testkit::materialize_home;
use deja_core::testkit::session;
use deja_core::{Edit, ExitStatus, FileAction, FileTouch, HarnessFormat, ParseOptions, ParseStats, Role, Session, StoreEnv, Turn};

deja_core::conformance!(
    ZCodeFormat,
    switch "DEJA_INCLUDE_SUBAGENTS"
);

/// Every session of the fixture home (materialized: the database is built from its
/// `.sql`), with the stats of each source by file name.
fn sessions_with(env: &dyn Fn(&Path) -> StoreEnv) -> (Vec<Session>, Vec<(String, ParseStats)>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let _writers = materialize_home(&deja_core::fixture_home!(), &home).expect("fixture home");
    let mut out = Vec::new();
    let mut stats = Vec::new();
    for src in ZCodeFormat.discover(&env(&home)).sources {
        let s = ZCodeFormat.parse(&src, &ParseOptions::default(), &mut out).expect("the fixture parses");
        stats.push((src.path.file_name().unwrap().to_string_lossy().into_owned(), s));
    }
    (out, stats)
}

fn sessions() -> Vec<Session> {
    sessions_with(&|h| StoreEnv::with_home(h)).0
}

fn command<'a>(s: &'a Session, cmd: &str) -> &'a Turn {
    s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some(cmd)).unwrap_or_else(|| panic!("{cmd}"))
}

#[test]
fn the_cli_database_reads_as_opencode_with_claude_code_tool_names() {
    let all = sessions();
    let s = session(&all, "sess_z01");
    assert_eq!(s.harness, "zcode");
    assert_eq!((s.project.as_deref(), s.title.as_deref()), (Some("/home/dev/billing"), Some("Invoice rounding")));
    assert_eq!((s.turns[0].role, s.turns[0].text.as_str()), (Role::User, "invoice totals are off by a cent"));
    assert!(!s.turns.iter().any(|t| t.text.starts_with("Called the Read tool")), "synthetic parts are not speech");
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning is off by default");

    let failed = command(s, "go test ./invoice/...");
    let tool = failed.tool.as_ref().unwrap();
    assert_eq!((tool.name.as_str(), tool.exit.clone(), tool.is_error), ("Bash", Some(ExitStatus::Code(1)), true));
    assert!(failed.text.starts_with("--- FAIL: TestTotal"), "the `Exit code 1` line is cut: {:?}", failed.text);
    let clean = command(s, "go vet ./invoice/...").tool.as_ref().unwrap();
    assert_eq!((clean.exit.clone(), clean.is_error), (None, false), "no `Exit code` line, no code");

    let files: Vec<&FileTouch> = s.turns.iter().flat_map(|t| &t.files).collect();
    assert!(files.contains(&&FileTouch { path: "/home/dev/billing/invoice/total.go".into(), action: FileAction::Read }));
    assert!(files.contains(&&FileTouch { path: "/home/dev/billing/invoice/total.go".into(), action: FileAction::Edit }));
    assert!(files.contains(&&FileTouch { path: "/home/dev/billing/CHANGELOG.md".into(), action: FileAction::Write }));
    assert!(!files.iter().any(|f| f.path.ends_with("tax.go")), "a failed edit changed no file");
    let edits: Vec<&Edit> = s.turns.iter().filter_map(|t| t.edit.as_ref()).collect();
    assert_eq!(
        edits,
        vec![&Edit {
            path: "/home/dev/billing/invoice/total.go".into(),
            old: "math.Floor(t*100) / 100".into(),
            new: Some("math.Round(t*100) / 100".into())
        }]
    );
    let failed_edit = s.turns.iter().find(|t| t.text == "String to replace not found in file.").expect("the failed edit's error");
    assert!(failed_edit.tool.as_ref().unwrap().is_error);

    let summary = s.turns.iter().position(|t| t.role == Role::Summary).expect("the /compact summary");
    assert!(s.turns[summary].text.starts_with("Summary: invoice totals were floored"));
    assert!(s.turns[..summary].iter().any(|t| t.role == Role::Assistant), "the turns before the summary stay");
    assert_eq!(s.turns.last().unwrap().text, "No: tax is computed in integer cents already.");
}

#[test]
fn sub_agents_and_forks_name_their_parent_and_can_be_left_out() {
    let all = sessions();
    let kid = session(&all, "sess_z02");
    assert_eq!((kid.parent.as_deref(), kid.kind.as_deref(), kid.agent.as_deref()), (Some("sess_z01"), Some("subagent"), Some("explore")));
    let fork = session(&all, "sess_z03");
    assert_eq!((fork.parent.as_deref(), fork.kind.as_deref()), (Some("sess_z01"), Some("fork")));
    let (top, _) = sessions_with(&|h| StoreEnv::with_home(h).set("DEJA_INCLUDE_SUBAGENTS", "0"));
    assert!(top.iter().any(|s| s.id == "sess_z01"));
    assert!(!top.iter().any(|s| s.id == "sess_z02" || s.id == "sess_z03"));
}

#[test]
fn jsonl_transcripts_are_flat_command_code_v2_lines() {
    let (all, stats) = sessions_with(&|h| StoreEnv::with_home(h));
    let s = session(&all, "z1");
    let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
    assert_eq!(roles, vec![Role::User, Role::Assistant, Role::ToolOutput, Role::Assistant], "the system line is dropped");
    assert_eq!(s.turns[0].text, "migrate the config to the new loader", "the BOM is not text");
    assert_eq!(s.turns[2].text, "Error: unknown key \"listen_addr\" in config.yaml");
    assert_eq!(s.project.as_deref(), Some("dev/shop"), "an encoded directory that does not exist here: its last two parts");
    assert!(s.source.append_only);
    let z1 = &stats.iter().find(|(n, _)| n == "z1.jsonl").unwrap().1;
    assert_eq!(z1.skipped, 2, "the garbage line and the torn last line: {:?}", z1.problems);
    let blocks = session(&all, "z2");
    assert_eq!(blocks.turns[0].text, "why does the health check return 503?", "text blocks read as text");
}

#[test]
fn legacy_snapshots_are_read_unless_deleted_or_restored_into_the_database() {
    let (all, stats) = sessions_with(&|h| StoreEnv::with_home(h));
    let s = session(&all, "sess_abc");
    assert_eq!((s.project.as_deref(), s.title.as_deref()), (Some("/home/dev/site"), Some("Sitemap generator")));
    let texts: Vec<(Role, &str)> = s.turns.iter().map(|t| (t.role, t.text.as_str())).collect();
    assert_eq!(
        texts,
        vec![(Role::User, "the sitemap skips nested pages"), (Role::Assistant, "The walker stops at depth one; it recurses now.")],
        "only user and assistant text"
    );
    assert_eq!(s.started.map(|t| t.0), Some(1_790_000_000_000));
    assert_eq!(s.updated.map(|t| t.0), Some(1_790_000_060_000));
    assert_eq!(session(&all, "t6").project.as_deref(), Some("/home/dev/docs"), "no acpSessionId: the task id");

    // t7 was restored: only the database's copy is read.
    let restored: Vec<&Session> = all.iter().filter(|s| s.id == "sess_legacy7").collect();
    assert_eq!(restored.len(), 1);
    assert!(restored[0].turns[0].text.ends_with("(restored copy)"));
    let t7 = &stats.iter().find(|(n, _)| n == "t7.json").unwrap().1;
    assert!(t7.problems.iter().any(|p| p.contains("restored into the CLI database")), "{:?}", t7.problems);
    assert!(!stats.iter().any(|(n, _)| n.ends_with(".deleted.json")), "deleted snapshots are not discovered");
    assert!(!all.iter().any(|s| s.id == "sess_gone"));
}

#[test]
fn the_db_variable_names_the_database_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let _writers = materialize_home(&deja_core::fixture_home!(), tmp.path()).expect("fixture home");
    let db = tmp.path().join(".zcode/cli/db/db.sqlite");
    let moved = tmp.path().join("copy/store.sqlite");
    std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
    std::fs::copy(&db, &moved).unwrap();
    std::fs::copy(deja_core::sqlite::wal_path(&db), deja_core::sqlite::wal_path(&moved)).unwrap();
    let empty = tmp.path().join("empty-home");
    std::fs::create_dir_all(&empty).unwrap();
    let found = ZCodeFormat.discover(&StoreEnv::with_home(&empty).set("DEJA_ZCODE_DB", moved.display().to_string()));
    assert_eq!(found.sources.iter().map(|s| s.path.clone()).collect::<Vec<_>>(), vec![moved.clone()]);
    assert_eq!(found.sources[0].parts, vec![deja_core::sqlite::wal_path(&moved)]);
    let mut out: Vec<Session> = Vec::new();
    let stats = ZCodeFormat.parse(&found.sources[0], &ParseOptions::default(), &mut out).unwrap();
    assert_eq!(out.len(), 4);
    assert!(stats.cursor.is_some(), "the database is read with the family's row cursor");
}

#[test]
fn a_snapshot_restored_after_it_was_read_defers_to_the_database_on_the_next_read() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let writers = materialize_home(&deja_core::fixture_home!(), tmp.path()).expect("fixture home");
    let found = ZCodeFormat.discover(&StoreEnv::with_home(tmp.path()));
    let t9 = found.sources.iter().find(|s| s.path.ends_with("t9.json")).expect("the legacy snapshot");
    assert_eq!(t9.parts, vec![tmp.path().join(".zcode/cli/db/db.sqlite")], "the database decides, so it is a part");
    let read = |src: &deja_core::SourceRef| {
        let mut out: Vec<Session> = Vec::new();
        ZCodeFormat.parse(src, &ParseOptions::default(), &mut out).expect("parses");
        out
    };
    assert_eq!(read(t9).len(), 1);
    // `/restore-legacy-sessions`: the database gains the snapshot's session.
    writers[0]
        .execute(
            "INSERT INTO session VALUES ('sess_abc', 'global', NULL, 'x', '/home/dev/site', 'Sitemap generator', '3.14.4', 'build', 'interactive', 1790000000000, 1790000060000)",
            [],
        )
        .expect("insert");
    assert!(read(t9).is_empty(), "the ids are re-read once the database changed");
}

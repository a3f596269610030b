//! Every test of deja-adapter-crush, in one test binary: the conformance kit (snapshots of
//! every registered project's database, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for Crush and its row cursor.

use std::path::Path;

use deja_adapter_crush::CrushFormat;
use deja_core::testkit::materialize_home;
use deja_core::{Edit, ExitStatus, FileAction, FileTouch, HarnessFormat, ParseOptions, Role, Session, SourceRef, StoreEnv, Timestamp};

deja_core::conformance!(
    CrushFormat,
    wires "XDG_CONFIG_HOME" => ".config"
);

mod hook;

fn fixture_home() -> (tempfile::TempDir, Vec<rusqlite::Connection>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let writers = materialize_home(&deja_core::fixture_home!(), tmp.path()).expect("fixture home");
    (tmp, writers)
}

fn parse_all(home: &Path, opts: &ParseOptions) -> Vec<Session> {
    deja_core::testkit::read_all(&CrushFormat, &StoreEnv::with_home(home), opts)
}

const MAIN: &str = "942c0d6e-0000-4000-8000-000000000001";

#[test]
fn the_build_session_has_work_exits_edits_and_a_summary() {
    let (tmp, _w) = fixture_home();
    let all = parse_all(tmp.path(), &ParseOptions::default());
    assert_eq!(all.len(), 3, "the deleted project is skipped");
    let s = all.iter().find(|s| s.id == MAIN).unwrap();
    assert_eq!(s.title.as_deref(), Some("run the build"), "first line of the title");
    assert!(s.project.as_deref().is_some_and(|p| p.ends_with("work/demo")));
    assert_eq!((s.turns[0].role, s.turns[0].text.as_str()), (Role::User, "run the build"));
    assert_eq!(s.turns[0].time, Some(Timestamp(1_784_282_400_000)), "seconds");
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning is off by default");
    let bash: Vec<_> = s.turns.iter().filter_map(|t| t.tool.as_ref().filter(|x| x.name == "bash").map(|x| (t, x))).collect();
    assert_eq!(bash[0].1.command.as_deref(), Some("make"));
    assert_eq!(bash[0].1.exit, Some(ExitStatus::Code(2)));
    assert!(!bash[0].0.text.contains("<cwd>"), "the cwd tag is stripped");
    assert!(!bash[1].1.is_error);
    let files: Vec<&FileTouch> = s.turns.iter().flat_map(|t| &t.files).collect();
    assert!(files.contains(&&FileTouch { path: "/w/demo/Makefile".into(), action: FileAction::Read }));
    assert!(files.contains(&&FileTouch { path: "/w/demo/.gitignore".into(), action: FileAction::Write }));
    assert!(files.contains(&&FileTouch { path: "/w/demo/README.md".into(), action: FileAction::Edit }), "a failed edit keeps its files");
    let edits: Vec<&Edit> = s.turns.iter().filter_map(|t| t.edit.as_ref()).collect();
    assert_eq!(edits, vec![&Edit { path: "/w/demo/Makefile".into(), old: "SRC = main.c".into(), new: Some("SRC = src/main.c".into()) }]);
    assert!(s.turns.iter().any(|t| t.role == Role::Summary && t.text.starts_with("Summary:")));
    assert!(s.turns.iter().any(|t| t.role == Role::Assistant && !t.text.contains('\0') && t.text.starts_with("The build passes")));
    let kid = all.iter().find(|s| s.id.ends_with("0002")).unwrap();
    assert_eq!((kid.parent.as_deref(), kid.kind.as_deref()), (Some(MAIN), Some("subagent")));
    let api = all.iter().find(|s| s.id.ends_with("000a")).unwrap();
    assert_eq!(api.turns[0].time, Some(Timestamp(1_784_368_800_000)), "milliseconds");
}

#[test]
fn reasoning_comes_only_on_request() {
    let (tmp, _w) = fixture_home();
    let all = parse_all(tmp.path(), &ParseOptions { include_reasoning: true });
    let s = all.iter().find(|s| s.id == MAIN).unwrap();
    assert!(s.turns.iter().any(|t| t.role == Role::Reasoning && t.text == "Start with make."));
}

#[test]
fn the_cursor_re_reads_only_a_grown_session() {
    let (tmp, writers) = fixture_home();
    let src = CrushFormat
        .discover(&StoreEnv::with_home(tmp.path()))
        .sources
        .into_iter()
        .find(|s| s.path.ends_with("work/demo/.crush/crush.db"))
        .expect("the demo store");
    let mut first: Vec<Session> = Vec::new();
    let cursor = CrushFormat.parse(&src, &ParseOptions::default(), &mut first).unwrap().cursor.expect("a cursor");
    assert_eq!(first.len(), 2);
    let again = SourceRef { cursor: Some(cursor), ..src };
    let mut none: Vec<Session> = Vec::new();
    CrushFormat.parse(&again, &ParseOptions::default(), &mut none).unwrap();
    assert!(none.is_empty(), "nothing changed, nothing re-emitted");
    let writer = writers.iter().find(|w| w.path().is_some_and(|p| p.ends_with("work/demo/.crush/crush.db"))).unwrap();
    writer
        .execute(
            "INSERT INTO messages VALUES ('k3','942c0d6e-0000-4000-8000-000000000002','user','[{\"type\":\"text\",\"data\":{\"text\":\"and the CI one?\"}}]',NULL,1784282416,1784282416,NULL,NULL,0)",
            [],
        )
        .unwrap();
    let mut grown: Vec<Session> = Vec::new();
    CrushFormat.parse(&again, &ParseOptions::default(), &mut grown).unwrap();
    assert_eq!(grown.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), vec!["942c0d6e-0000-4000-8000-000000000002"]);
    assert_eq!(grown[0].turns.len(), 3, "the grown session is re-read whole");
}

#[test]
fn crush_global_config_moves_crush_json_but_not_the_commands() {
    let wiring = CrushFormat.wiring().expect("crush has wiring");
    let env = StoreEnv::with_home("/h").set("CRUSH_GLOBAL_CONFIG", "/etc/crush");
    let cx = deja_core::wire::WireContext { env: &env, exe: "/bin/deja".into() };
    let files: Vec<_> = wiring.plain(&cx).iter().chain(wiring.auto(&cx).iter()).map(|e| e.file().to_path_buf()).collect();
    assert!(files.contains(&Path::new("/etc/crush/crush.json").to_path_buf()), "{files:?}");
    assert!(files.contains(&Path::new("/h/.config/crush/commands/deja.md").to_path_buf()), "{files:?}");
    assert!(!files.iter().any(|f| f == Path::new("/h/.config/crush/crush.json")), "{files:?}");
}

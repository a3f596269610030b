//! Every test of deja-adapter-opencode, in one test binary: the conformance kit (snapshots of
//! the fixture database, arbitrary bytes, mutated fixtures, store overrides, the
//! synthetic round trip), then the rules that matter most for opencode.

use std::path::Path;

use deja_adapter_opencode::FORMAT;
use deja_core::testkit::materialize_home;
use deja_core::{Edit, ExitStatus, FileAction, FileTouch, HarnessFormat, ParseOptions, Role, Session, StoreEnv, Timestamp};

deja_core::conformance!(
    FORMAT,
    switch "DEJA_INCLUDE_SUBAGENTS",
    wires "XDG_CONFIG_HOME" => ".config"
);

/// The fixture home materialized (the `.sql` becomes a live database), and its sessions
/// read under `env`.
fn sessions_with(env: impl Fn(&Path) -> StoreEnv, opts: &ParseOptions) -> Vec<Session> {
    deja_conformance_kit().sessions(env, opts)
}

fn fixture_sessions() -> Vec<Session> {
    sessions_with(|h| StoreEnv::with_home(h), &ParseOptions::default())
}

#[test]
fn the_tool_session_reads_with_roles_work_and_times() {
    let sessions = fixture_sessions();
    let main = sessions.iter().find(|s| s.id == "ses_01shop").expect("main session");
    assert_eq!(main.harness, "opencode");
    assert_eq!((main.project.as_deref(), main.title.as_deref()), (Some("/src/shop"), Some("Cart total rounding")));
    let first = &main.turns[0];
    assert_eq!((first.role, first.text.as_str()), (Role::User, "cart total is off by a cent"), "run quoting unwrapped");
    assert_eq!(first.time, Some(Timestamp(1_775_030_401_000)), "a user part takes its message's time");
    assert!(!main.turns.iter().any(|t| t.text.starts_with("Called the Read tool")), "synthetic parts are injected, not speech");
    assert!(!main.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning is off by default");

    let bash: Vec<_> = main.turns.iter().filter(|t| t.tool.as_ref().is_some_and(|x| x.name == "bash")).collect();
    assert_eq!(bash.len(), 2);
    let failing = bash[0].tool.as_ref().unwrap();
    assert_eq!(
        (failing.command.as_deref(), failing.exit.clone(), failing.is_error),
        (Some("npm test -- cart"), Some(ExitStatus::Code(1)), true)
    );
    assert!(bash[0].text.starts_with("1 failing"), "the output is folded into the call");
    assert_eq!(bash[1].tool.as_ref().unwrap().exit, Some(ExitStatus::Code(0)));

    let files: Vec<&FileTouch> = main.turns.iter().flat_map(|t| &t.files).collect();
    assert!(files.contains(&&FileTouch { path: "/src/shop/cart.ts".into(), action: FileAction::Read }));
    assert!(files.contains(&&FileTouch { path: "/src/shop/cart.test.ts".into(), action: FileAction::Write }));
    let edits: Vec<&Edit> = main.turns.iter().filter_map(|t| t.edit.as_ref()).collect();
    assert_eq!(
        edits[0],
        &Edit { path: "cart.ts".into(), old: "  return Math.floor(t)".into(), new: Some("  return Math.round(t)".into()) }
    );
    assert_eq!(edits[1].old, "const cents = Math.floor(x * 100)");
    assert_eq!(edits[1].new.as_deref(), Some("const cents = Math.round(x * 100)"));
    assert_eq!(edits.len(), 2, "the failed edit changed nothing");
    let failed = main.turns.iter().find(|t| t.text == "oldString not found in content").expect("the failed edit");
    assert!(failed.tool.as_ref().unwrap().is_error);

    let summary = main.turns.iter().find(|t| t.role == Role::Summary).expect("compaction summary");
    assert!(summary.text.starts_with("Summary: cart.ts"));
    assert!(main.turns.iter().any(|t| t.text.starts_with("Fixed: the cart total")), "the answer before the summary stays");

    let mut indexed = main.clone();
    deja_core::normalize::normalize(&mut indexed, &Default::default(), FORMAT.info().injected);
    assert!(indexed.turns.iter().any(|t| t.role == Role::User && t.text == "does the tax module floor too?"), "the recall block goes");
}

#[test]
fn sub_agents_have_parents_and_the_switch_leaves_them_out() {
    let sessions = fixture_sessions();
    let kid = sessions.iter().find(|s| s.id == "ses_02tax").expect("sub-agent session");
    assert_eq!((kid.parent.as_deref(), kid.kind.as_deref(), kid.agent.as_deref()), (Some("ses_01shop"), Some("subagent"), Some("explore")));
    let plain = sessions.iter().find(|s| s.id == "ses_03pg").expect("run session");
    assert_eq!(plain.title, None, "a placeholder title is no title");
    assert_eq!(plain.turns[0].text, "why is pgbouncer refusing connections?");

    let top = sessions_with(|h| StoreEnv::with_home(h).set("DEJA_INCLUDE_SUBAGENTS", "0"), &ParseOptions::default());
    let mut ids: Vec<&str> = top.iter().map(|s| s.id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, vec!["ses_01shop", "ses_03pg", "ses_04rel"]);
}

#[test]
fn reasoning_comes_only_on_request() {
    let sessions = sessions_with(|h| StoreEnv::with_home(h), &ParseOptions { include_reasoning: true });
    let main = sessions.iter().find(|s| s.id == "ses_01shop").expect("main session");
    assert!(main.turns.iter().any(|t| t.role == Role::Reasoning && t.text == "The total is probably floored somewhere."));
}

#[test]
fn the_db_variable_names_the_database_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let _writers = materialize_home(&deja_core::fixture_home!(), tmp.path()).expect("fixture home");
    let db = tmp.path().join(".local/share/opencode/opencode.db");
    let moved = tmp.path().join("copy/store.db");
    std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
    for (from, to) in [(db.clone(), moved.clone()), (db.with_extension("db-wal"), moved.with_extension("db-wal"))] {
        std::fs::copy(from, to).unwrap();
    }
    let empty = tmp.path().join("empty-home");
    std::fs::create_dir_all(&empty).unwrap();
    let env = StoreEnv::with_home(&empty).set("DEJA_OPENCODE_DB", moved.display().to_string());
    let found = FORMAT.discover(&env);
    assert_eq!(found.sources.iter().map(|s| s.path.clone()).collect::<Vec<_>>(), vec![moved.clone()]);
    assert_eq!(found.sources[0].parts, vec![moved.with_extension("db-wal")], "the WAL is part of the source");
    let mut out: Vec<Session> = Vec::new();
    FORMAT.parse(&found.sources[0], &ParseOptions::default(), &mut out).unwrap();
    assert_eq!(out.len(), 4, "the WAL's rows came with the copy");
}

/// opencode 1.18.33 (run 2026-12-01): `run -c` adds a second prompt to the same session, the
/// user parts carry no time, and the write tool's `filePath` is relative to the directory.
#[test]
fn a_continued_1_18_33_session_reads_both_prompts_and_the_relative_write() {
    let sessions = fixture_sessions();
    let s = sessions.iter().find(|s| s.id == "ses_04rel").expect("release session");
    assert_eq!(s.title.as_deref(), Some("Token refresh leeway"));
    let users: Vec<&str> = s.turns.iter().filter(|t| t.role == Role::User).map(|t| t.text.as_str()).collect();
    assert_eq!(users, ["refresh tokens expire a minute early", "also add a test for the leeway"], "both prompts, quotes unwrapped");
    assert_eq!(s.turns[0].time, Some(Timestamp(1_796_124_378_000)), "a user part without time takes its message's");
    let grep = s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "bash")).expect("bash");
    assert_eq!(grep.tool.as_ref().unwrap().exit, Some(ExitStatus::Code(0)));
    assert_eq!(grep.text.trim_end(), "12:const LEEWAY: u64 = 60;");
    let write = s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "write")).expect("write");
    assert_eq!(write.files, vec![FileTouch { path: "/home/dev/projects/shop/NOTES.txt".into(), action: FileAction::Write }]);
    let answers = s.turns.iter().filter(|t| t.role == Role::Assistant).count();
    assert_eq!(answers, 2);
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning));
}

/// The config files deja's plain target edits, for the wiring tests.
fn wired_configs(env: &StoreEnv) -> Vec<std::path::PathBuf> {
    let wiring = FORMAT.wiring().expect("opencode has wiring");
    let cx = deja_core::wire::WireContext { env, exe: "/opt/deja/bin/deja".into() };
    wiring
        .plain(&cx)
        .into_iter()
        .filter_map(|e| match e {
            deja_core::wire::Edit::JsonMember { file, path, value, .. } => {
                assert_eq!(path, ["mcp", "deja"]);
                assert_eq!(value, deja_core::wire::json!({"type": "local", "command": ["/opt/deja/bin/deja", "mcp"]}));
                Some(file)
            }
            _ => None,
        })
        .collect()
}

#[test]
fn wiring_edits_opencode_jsonc_only_when_it_is_the_only_config() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join(".config/opencode");
    std::fs::create_dir_all(&dir).expect("config dir");
    let env = StoreEnv::with_home(tmp.path());
    assert_eq!(wired_configs(&env), [dir.join("opencode.json")], "neither exists: opencode.json");
    std::fs::write(dir.join("opencode.jsonc"), "{ // mine\n}\n").expect("jsonc");
    assert_eq!(wired_configs(&env), [dir.join("opencode.jsonc")], "only the .jsonc exists");
    std::fs::write(dir.join("opencode.json"), "{}\n").expect("json");
    assert_eq!(wired_configs(&env), [dir.join("opencode.json")], "both exist: opencode.json");
}

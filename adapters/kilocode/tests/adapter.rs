//! Every test of deja-adapter-kilocode, in one test binary: the conformance kit over both
//! stores (the CLI's `kilo.db` and the extension's task folders under two editor hosts),
//! then the rules that matter most for each.

use std::path::Path;

use deja_adapter_kilocode::KiloCodeFormat;
use deja_core::testkit::materialize_home;
use deja_core::{Edit, ExitStatus, FileAction, FileTouch, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    KiloCodeFormat,
    switch "DEJA_INCLUDE_SUBAGENTS",
    wires "XDG_CONFIG_HOME" => ".config"
);

/// The fixture home materialized into `to`; the returned writers keep the rows in the live WAL.
fn fixture_home(to: &Path) -> impl Sized {
    materialize_home(&deja_core::fixture_home!(), to).expect("fixture home")
}

fn read_all(env: &StoreEnv) -> Vec<Session> {
    deja_core::testkit::read_all(&KiloCodeFormat, env, &ParseOptions::default())
}

fn fixture_sessions(set: &[(&str, &str)]) -> Vec<Session> {
    let tmp = tempfile::tempdir().expect("tempdir");
    let _writers = fixture_home(tmp.path());
    let mut env = StoreEnv::with_home(tmp.path());
    for (k, v) in set {
        env = env.set(k, *v);
    }
    read_all(&env)
}

fn tool<'a>(s: &'a Session, name: &str) -> Vec<&'a deja_core::Turn> {
    s.turns.iter().filter(|t| t.tool.as_ref().is_some_and(|x| x.name == name)).collect()
}

#[test]
fn cli_sessions_read_as_opencode_with_kilo_tools() {
    let sessions = fixture_sessions(&[]);
    let main = sessions.iter().find(|s| s.id == "ses_kilo01").expect("CLI session");
    assert_eq!((main.harness.as_str(), main.project.as_deref(), main.title.as_deref()), ("kilocode", Some("/home/u/shop"), None));
    assert_eq!(main.turns[0].text, "rename the cart module to basket", "kilo run quoting unwrapped");
    assert!(!main.turns.iter().any(|t| t.text.starts_with("Called the Read tool")));
    assert!(main.turns.iter().any(|t| t.role == Role::Summary));
    let kid = sessions.iter().find(|s| s.id == "ses_kilo01_kid").expect("CLI sub-agent");
    assert_eq!(kid.parent.as_deref(), Some("ses_kilo01"));

    let nb = sessions.iter().find(|s| s.id == "ses_kilo02").expect("Kilo tools session");
    let lint = tool(nb, "bash")[0].tool.as_ref().unwrap();
    assert_eq!((lint.command.as_deref(), lint.exit.clone()), (Some("make lint"), Some(ExitStatus::Code(2))));
    let bg = tool(nb, "background_process");
    assert_eq!(bg[0].tool.as_ref().unwrap().command.as_deref(), Some("npm run dev"), "start runs a command");
    assert_eq!(bg[1].tool.as_ref().unwrap().command, None, "kill names a process");
    assert_eq!(
        tool(nb, "notebook_read")[0].files,
        vec![FileTouch { path: "/home/u/notebooks/plots.ipynb".into(), action: FileAction::Read }]
    );
    assert_eq!(
        tool(nb, "notebook_edit")[0].files,
        vec![FileTouch { path: "/home/u/notebooks/plots.ipynb".into(), action: FileAction::Edit }]
    );
}

#[test]
fn extension_tasks_read_as_cline_tasks_with_kilo_tools() {
    let sessions = fixture_sessions(&[]);
    let task = sessions.iter().find(|s| s.id == "1767225800000").expect("extension task");
    assert_eq!((task.harness.as_str(), task.project.as_deref()), ("kilocode", Some("/home/u/shop")));
    assert_eq!(
        (task.turns[0].role, task.turns[0].text.as_str()),
        (Role::User, "rename the cart module"),
        "envelope and environment_details gone"
    );
    let sr = tool(task, "search_and_replace")[0];
    assert_eq!(sr.edit, Some(Edit { path: "src/cart.ts".into(), old: "Cart".into(), new: Some("Basket".into()) }));
    let fast = tool(task, "fast_edit_file")[0];
    assert_eq!(fast.edit.as_ref().unwrap().new.as_deref(), Some("export class Basket {}"), "placeholder lines dropped");
    let npm = tool(task, "execute_command")[0].tool.as_ref().unwrap();
    assert_eq!((npm.command.as_deref(), npm.exit.clone(), npm.is_error), (Some("npm test"), Some(ExitStatus::Code(1)), true));
    assert_eq!(tool(task, "delete_file")[0].files[0].action, FileAction::Delete);
    assert_eq!(tool(task, "generate_image")[0].files[0], FileTouch { path: "docs/basket.png".into(), action: FileAction::Write });
    assert!(
        task.turns.iter().any(|t| t.role == Role::User && t.text == "also keep a Cart alias for old imports"),
        "feedback wrapper dropped, speech kept"
    );

    let sub = sessions.iter().find(|s| s.id == "1767226000000").expect("the Cursor host's subtask");
    assert_eq!(sub.parent.as_deref(), Some("1767225800000"));
}

#[test]
fn the_subagent_switch_leaves_children_out_of_both_stores() {
    let mut ids: Vec<String> = fixture_sessions(&[("DEJA_INCLUDE_SUBAGENTS", "0")]).into_iter().map(|s| s.id).collect();
    ids.sort();
    assert_eq!(ids, vec!["1767225800000", "ses_kilo01", "ses_kilo02", "ses_kilo04"]);
}

#[test]
fn the_roots_variables_name_each_store() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let _writers = fixture_home(tmp.path());
    let db = tmp.path().join(".local/share/kilo/kilo.db");
    let moved = tmp.path().join("copy/k.db");
    std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
    std::fs::copy(&db, &moved).unwrap();
    std::fs::copy(db.with_extension("db-wal"), moved.with_extension("db-wal")).unwrap();
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let only_db = read_all(&StoreEnv::with_home(&empty).set("DEJA_KILO_DB", moved.display().to_string()));
    assert_eq!(only_db.len(), 4, "the CLI's four sessions from the named file (the empty row yields none)");

    // DEJA_KILO_ROOTS: a list, each an extension folder or a globalStorage folder holding one.
    let code = tmp.path().join(".config/Code/User/globalStorage/kilocode.kilo-code");
    let cursor = tmp.path().join(".config/Cursor/User/globalStorage");
    let list = std::env::join_paths([&code, &cursor]).unwrap();
    let tasks = read_all(&StoreEnv::with_home(&empty).set("DEJA_KILO_ROOTS", list.to_string_lossy()));
    let mut ids: Vec<&str> = tasks.iter().map(|s| s.id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, vec!["1767225800000", "1767226000000"]);
}

#[test]
fn a_task_under_two_hosts_is_read_once() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let _writers = fixture_home(tmp.path());
    let from = tmp.path().join(".config/Code/User/globalStorage/kilocode.kilo-code/tasks/1767225800000");
    let to = tmp.path().join(".config/VSCodium/User/globalStorage/kilocode.kilo-code/tasks/1767225800000");
    std::fs::create_dir_all(&to).unwrap();
    for f in ["api_conversation_history.json", "history_item.json"] {
        std::fs::copy(from.join(f), to.join(f)).unwrap();
    }
    let sessions = read_all(&StoreEnv::with_home(tmp.path()));
    assert_eq!(sessions.iter().filter(|s| s.id == "1767225800000").count(), 1);
}

/// The extension's migration copies a task into `kilo.db` (the task id in the session's
/// `slug`) and leaves its folder: the conversation is read once, from the database, where
/// Kilo goes on writing it and `kilo -s` reopens it.
#[test]
fn a_migrated_task_is_read_from_the_database_only() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let writers =
        materialize_home(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/migrated/home"), tmp.path()).expect("fixture home");
    let env = StoreEnv::with_home(tmp.path());
    let task_dirs = |env: &StoreEnv| -> Vec<String> {
        KiloCodeFormat
            .discover(env)
            .sources
            .iter()
            .filter_map(|s| deja_core::family::cline_tasks::task_id_of(s).filter(|_| !s.path.ends_with("kilo.db")))
            .collect()
    };
    assert_eq!(task_dirs(&env), ["1767231000000"], "the migrated task's folder is not a source");
    let sessions = read_all(&env);
    let mut ids: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, ["1767231000000", "ses_cli01", "ses_migrated01"]);
    let prompt = |t: &deja_core::Turn| t.role == Role::User && t.text.contains("add an index on orders.created_at");
    assert_eq!(sessions.iter().flat_map(|s| &s.turns).filter(|t| prompt(t)).count(), 1, "one copy of the conversation");
    let migrated = sessions.iter().find(|s| s.id == "ses_migrated01").expect("the database's copy");
    assert!(migrated.turns.iter().any(|t| t.text == "now the same for orders.updated_at"), "with what was added after the migration");

    // A task migrated later: the database changes and the folder drops out; a database
    // that cannot be read keeps every folder (twice is better than never).
    let db = tmp.path().join(".local/share/kilo/kilo.db");
    let w = rusqlite::Connection::open(&db).expect("open");
    w.execute(
        "INSERT INTO session VALUES ('ses_migrated02', 'global', NULL, '1767231000000', '/home/u/shop', 'tidy the README', 'v2', 'code', 1767231000000, 1767231000000)",
        [],
    )
    .expect("insert");
    assert!(task_dirs(&env).is_empty(), "{:?}", task_dirs(&env));
    drop((w, writers));
    std::fs::write(&db, b"not a database").expect("garble");
    let _ = std::fs::remove_file(db.with_extension("db-wal"));
    assert_eq!(task_dirs(&env).len(), 2);
}

/// Kilo CLI 7.8.1 / binary 7.7.9 (run 2026-12-01): a run that never reached the model leaves
/// an empty session row; `kilo run -c` adds a second prompt to the same session; the write
/// tool's `filePath` is relative, with the diff only in its metadata.
#[test]
fn a_7_7_9_cli_run_reads_both_prompts_and_an_empty_session_is_nothing() {
    let sessions = fixture_sessions(&[]);
    assert!(!sessions.iter().any(|s| s.id == "ses_kilo03"), "a session row without messages yields no session");
    let s = sessions.iter().find(|s| s.id == "ses_kilo04").expect("release session");
    assert_eq!(s.title, None, "`New session - …` is a placeholder");
    let users: Vec<&str> = s.turns.iter().filter(|t| t.role == Role::User).map(|t| t.text.as_str()).collect();
    assert_eq!(users, ["the session cookie is not renewed", "add a test for the renewal"]);
    let bash = tool(s, "bash");
    assert_eq!(bash[0].tool.as_ref().unwrap().command.as_deref(), Some("grep -rn renew src/"));
    assert_eq!(bash[0].tool.as_ref().unwrap().exit, Some(ExitStatus::Code(0)));
    assert_eq!(tool(s, "write")[0].files, vec![FileTouch { path: "/home/u/shop/NOTES.txt".into(), action: FileAction::Write }]);
    assert!(!s.turns.iter().any(|t| t.text.contains("Index: /home/u/shop")), "the write's diff metadata is not text");
    assert_eq!(s.turns.iter().filter(|t| t.role == Role::Assistant).count(), 2);
}

#[test]
fn wiring_edits_the_cli_config_and_each_installed_extension() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let env = StoreEnv::with_home(tmp.path());
    let wiring = KiloCodeFormat.wiring().expect("kilocode has wiring");
    let cx = deja_core::wire::WireContext { env: &env, exe: "/opt/deja/bin/deja".into() };
    let members = |cx: &deja_core::wire::WireContext| -> Vec<(std::path::PathBuf, Vec<String>)> {
        wiring
            .plain(cx)
            .into_iter()
            .filter_map(|e| match e {
                deja_core::wire::Edit::JsonMember { file, path, .. } => Some((file, path)),
                _ => None,
            })
            .collect()
    };
    let cli = tmp.path().join(".config/kilo/kilo.jsonc");
    assert_eq!(members(&cx), [(cli.clone(), vec!["mcp".to_string(), "deja".to_string()])], "no extension installed");
    let ext = tmp.path().join(".config/Code/User/globalStorage/kilocode.kilo-code");
    std::fs::create_dir_all(&ext).expect("extension dir");
    let found = members(&cx);
    if cfg!(target_os = "linux") {
        assert_eq!(
            found,
            [(cli, vec!["mcp".into(), "deja".into()]), (ext.join("settings/mcp_settings.json"), vec!["mcpServers".into(), "deja".into()])]
        );
    }
}

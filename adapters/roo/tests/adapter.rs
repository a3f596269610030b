//! Every test of deja-adapter-roo, in one test binary: the conformance kit (snapshots of
//! every source in `tests/fixtures/home/`, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for Roo's task store.

use std::path::PathBuf;

use deja_adapter_roo::{strip_jsonc, RooFormat};
use deja_core::testkit::session;
use deja_core::{HarnessFormat, ParseOptions, Role, Session, StoreEnv, Timestamp};

deja_core::conformance!(
    RooFormat,
    // A root naming the tasks folder itself is read as one.
    relocate "DEJA_ROO_ROOT" => ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks",
    wires "XDG_CONFIG_HOME" => ".config"
);

fn home() -> PathBuf {
    deja_core::fixture_home!()
}

fn parse_all(opts: &ParseOptions) -> Vec<Session> {
    deja_core::testkit::read_readable(&RooFormat, &StoreEnv::with_home(home()), opts)
}

fn roles(s: &Session) -> Vec<Role> {
    s.turns.iter().map(|t| t.role).collect()
}

#[test]
fn tasks_are_text_only_with_history_item_metadata_and_synthetic_times() {
    let all = parse_all(&ParseOptions::default());
    let s = session(&all, "roo-task-1777000000000");
    assert_eq!(s.harness, "roo");
    assert_eq!(s.title.as_deref(), Some("Flaky upload test"), "history_item.task's first line");
    assert_eq!(s.project.as_deref(), Some("/src/uploader"));
    assert_eq!(roles(s), [Role::User, Role::Assistant, Role::Assistant, Role::Summary], "tool blocks give nothing");
    assert_eq!(s.turns[0].text, "Flaky upload test", "<task> unwrapped, <environment_details> removed");
    assert_eq!(s.turns[0].time, Some(Timestamp(1777000000000)));
    assert_eq!(s.turns[1].time, Some(Timestamp(1777000001000)), "base + index seconds");
    assert_eq!(s.turns[2].time, Some(Timestamp(1777000005000)), "skipped messages still count in the index");
    assert_eq!(s.turns[3].time, Some(Timestamp(1777000100000)), "a message's own ts wins");
    assert!(s.turns.iter().all(|t| t.tool.is_none()));
}

#[test]
fn sub_tasks_point_at_their_parent_and_feedback_is_speech() {
    let all = parse_all(&ParseOptions::default());
    let sub = session(&all, "roo-task-1777000099000");
    assert_eq!(sub.parent.as_deref(), Some("roo-task-1777000000000"));
    assert_eq!(roles(sub), [Role::User, Role::Assistant, Role::User, Role::Assistant], "no reasoning by default, system dropped");
    assert_eq!(sub.turns[2].text, "use vitest, not jest");
    let with = parse_all(&ParseOptions { include_reasoning: true });
    assert!(session(&with, "roo-task-1777000099000").turns.iter().any(|t| t.role == Role::Reasoning));
}

#[test]
fn custom_storage_path_replaces_the_hosts_global_storage() {
    let all = parse_all(&ParseOptions::default());
    let custom = session(&all, "roo-task-1777000300000");
    assert_eq!(custom.project.as_deref(), Some("/src/thumbs"));
    assert!(!all.iter().any(|s| s.id == "roo-task-1777000500000"), "Insiders' global storage is not read while the setting is set");
}

#[test]
fn the_cli_mock_storage_is_read_and_cline_roots_are_not() {
    let all = parse_all(&ParseOptions::default());
    let cli = session(&all, "roo-task-1777000400000");
    assert_eq!(cli.turns[0].text, "list the open TODOs", "<user_input> unwrapped after a BOM");
    assert_eq!(cli.project.as_deref(), Some("roo"), "no workspace: the default project");
    let sources = RooFormat.discover(&StoreEnv::with_home(home())).sources;
    assert!(!sources.iter().any(|s| s.path.to_string_lossy().contains("saoudrizwan")), "Cline's root is Cline's");
}

#[test]
fn a_torn_task_is_an_error_not_a_panic() {
    let sources = RooFormat.discover(&StoreEnv::with_home(home())).sources;
    let torn = sources.iter().find(|s| s.path.to_string_lossy().contains("1777000200000")).expect("the torn task");
    assert!(RooFormat.parse(torn, &ParseOptions::default(), &mut Vec::new()).is_err());
}

#[test]
fn jsonc_settings_decode() {
    let v: serde_json::Value =
        serde_json::from_str(&strip_jsonc("\u{feff}{\n // c\n \"a\": \"x // y\", /* b */ \"b\": [1, 2,],\n \"c\": \"q\\\"/*\",\n}"))
            .unwrap();
    assert_eq!(v["a"], "x // y");
    assert_eq!(v["b"], serde_json::json!([1, 2]));
    assert_eq!(v["c"], "q\"/*");
    assert_eq!(strip_jsonc("\"unterminated"), "\"unterminated", "never panics on broken input");
}

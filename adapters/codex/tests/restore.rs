//! `deja restore` for Codex: where a rollout goes back (the path Codex's thread row names
//! when it was read here; under its start date otherwise) and what its head carries.

use deja_adapter_codex::CodexFormat;
use deja_core::format::RestoreWriter;
use deja_core::model::{ExitStatus, Role, SessionMeta, Timestamp, ToolUse, Turn};
use deja_core::StoreEnv;

const ID: &str = "019ad000-1234-7abc-8def-0123456789ab";

fn meta(path: &str, machine: Option<&str>) -> SessionMeta {
    SessionMeta {
        harness: "codex".into(),
        id: ID.into(),
        title: None,
        project: Some("/src/app".into()),
        path: path.into(),
        started: Some(Timestamp(1_796_032_800_000)),
        updated: None,
        parent: None,
        kind: None,
        agent: None,
        machine: machine.map(str::to_string),
        turns: 3,
        source_deleted: None,
    }
}

#[test]
fn a_rollout_goes_back_where_it_was_read_or_under_its_start_date() {
    let home = tempfile::tempdir().expect("tempdir");
    let env = StoreEnv::with_home(home.path());
    let here = format!("/h/.codex/sessions/2026/11/30/rollout-2026-11-30T10-00-00-{ID}.jsonl");
    assert_eq!(CodexFormat.target(&meta(&here, None), ID, &env).expect("target").to_string_lossy(), here);
    let elsewhere = CodexFormat.target(&meta(&here, Some("laptop")), ID, &env).expect("target");
    let want = home.path().join(format!(".codex/sessions/2026/11/30/rollout-2026-11-30T10-00-00-{ID}.jsonl"));
    assert_eq!(elsewhere, want);
}

#[test]
fn the_head_names_the_thread_and_a_failed_call_keeps_its_status() {
    let mut call = Turn::new(Role::ToolCall, "boom");
    call.tool = Some(ToolUse {
        name: "exec_command".into(),
        command: Some("make".into()),
        exit: Some(ExitStatus::Code(2)),
        is_error: true,
        call_id: None,
    });
    let turns = vec![Turn::new(Role::User, "build it"), call, Turn::new(Role::Assistant, "it failed")];
    let r = CodexFormat.render(&meta("x", None), ID, &turns).expect("render");
    let text = String::from_utf8(r.bytes).expect("utf-8");
    let head: serde_json::Value = serde_json::from_str(text.lines().next().expect("a line")).expect("json");
    assert_eq!(head["type"], "session_meta");
    assert_eq!(head["payload"]["id"], ID);
    assert_eq!(head["payload"]["cwd"], "/src/app");
    assert!(text.contains("Process exited with code 2"), "{text}");
    assert!(CodexFormat.render(&meta("x", None), "not-a-uuid", &turns).is_err());
}

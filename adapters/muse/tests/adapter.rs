//! Every test of deja-adapter-muse, in one test binary: the conformance kit, then the
//! rules that matter most for Muse's event log.

use deja_adapter_muse::MuseFormat;
use deja_core::{ExitStatus, FileAction, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    MuseFormat,
    switch "DEJA_INCLUDE_SUBAGENTS",
    wires "XDG_CONFIG_HOME" => ".config"
);

fn sessions() -> Vec<Session> {
    deja_core::testkit::sessions(&MuseFormat, &deja_core::fixture_home!())
}

#[test]
fn the_run_events_of_the_own_stream_become_turns() {
    let all = sessions();
    let s = all.iter().find(|s| s.id == "01a0c0ffee0000000000000001").expect("main session");
    assert_eq!((s.project.as_deref(), s.title.as_deref()), (Some("/home/u/app"), Some("Cold cache after deploy")));
    let users: Vec<&str> = s.turns.iter().filter(|t| t.role == Role::User).map(|t| t.text.as_str()).collect();
    assert_eq!(users, ["why is the cache cold after deploy"], "a child's objective and a scheduled run are no prompts");
    let warm = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("make warm")).expect("make warm");
    assert_eq!(warm.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(2)));
    assert_eq!(warm.text, "make: *** No rule to make target 'warm'.", "the JSON result's output");
    let edit = s.turns.iter().find(|t| t.edit.is_some()).expect("the edit inside the retained frame");
    assert_eq!(edit.edit.as_ref().map(|e| (e.old.as_str(), e.new.as_deref())), Some(("deploy:", Some("deploy: warm"))));
    assert!(s.turns.iter().any(|t| t.files.iter().any(|f| f.action == FileAction::Write)));
    assert_eq!(s.started.map(|t| t.millis()), Some(1789790455896), "recorded_at is in microseconds");
}

#[test]
fn children_with_a_workspace_are_sub_agents_observers_are_not() {
    let all = sessions();
    let subs: Vec<&Session> = all.iter().filter(|s| s.kind.as_deref() == Some("subagent")).collect();
    assert_eq!(subs.len(), 1, "the observer child names no workspace");
    assert_eq!(subs[0].parent.as_deref(), Some("01a0c0ffee0000000000000001"));
    assert!(!all.iter().any(|s| s.turns.iter().any(|t| t.text.contains("verification observer"))));
    let lib = all.iter().find(|s| s.id == "01a0c0ffee0000000000000002").expect("second session");
    assert_eq!(lib.project.as_deref(), Some("/home/u/lib"), "route_facts cwd");
}

#[test]
fn the_synthetic_writer_round_trips_the_exit_status() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let sample = deja_core::testkit::sample_session();
    MuseFormat.write_synthetic(tmp.path(), &sample).expect("write");
    let out = deja_core::testkit::read_all(&MuseFormat, &StoreEnv::with_home(tmp.path()), &ParseOptions::default());
    let s = out.iter().find(|s| s.id == sample.id).expect("the sample session");
    assert_eq!(s.project.as_deref(), Some(sample.project.as_str()));
    let shell = s.turns.iter().find(|t| t.role == Role::ToolCall).expect("the shell call");
    assert_eq!(shell.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(101)));
    assert_eq!(s.started, Some(sample.started), "microseconds back to milliseconds");
}

/// Muse loads no server when both keys are present, so deja writes into the legacy
/// `mcp_servers` where only that key exists, and into `mcpServers` otherwise.
#[test]
fn wiring_writes_into_the_servers_key_the_file_uses() {
    use deja_core::wire::{Edit, WireContext};
    let tmp = tempfile::tempdir().expect("tempdir");
    let env = StoreEnv::with_home(tmp.path());
    let settings = tmp.path().join(".config/muse/settings.json");
    let wiring = MuseFormat.wiring().expect("muse is wired");
    let key = |env: &StoreEnv| {
        let cx = WireContext { env, exe: "/opt/deja".into() };
        wiring.plain(&cx).into_iter().find_map(|e| match e {
            Edit::JsonMember { path, .. } => Some(path[0].clone()),
            _ => None,
        })
    };
    assert_eq!(key(&env).as_deref(), Some("mcpServers"), "no file yet");
    std::fs::create_dir_all(settings.parent().expect("parent")).expect("mkdir");
    std::fs::write(&settings, "{\n  // mine\n  \"mcp_servers\": {\"x\": {\"command\": \"x\"}}\n}\n").expect("write");
    assert_eq!(key(&env).as_deref(), Some("mcp_servers"));
    std::fs::write(&settings, "{\"mcp_servers\": {}, \"mcpServers\": {}}").expect("write");
    assert_eq!(key(&env).as_deref(), Some("mcpServers"));
}

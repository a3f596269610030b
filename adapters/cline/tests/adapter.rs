//! Every test of deja-adapter-cline, in one test binary: the conformance kit (snapshots of
//! every source in `tests/fixtures/home/`, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for Cline's two generations.

use deja_adapter_cline::ClineFormat;
use deja_core::testkit::session;
use deja_core::{FileAction, FileTouch, HarnessFormat, ParseOptions, Role, Session, StoreEnv, Timestamp};

deja_core::conformance!(
    ClineFormat,
    // The MCP settings file `deja install` would edit: not a store location.
    switch "CLINE_MCP_SETTINGS_PATH",
    wires "CLINE_DATA_DIR" => ".cline/data",
    wires "CLINE_DIR" => ".cline"
);

fn home() -> std::path::PathBuf {
    deja_core::fixture_home!()
}

fn parse_all(opts: &ParseOptions) -> Vec<Session> {
    deja_core::testkit::read_readable(&ClineFormat, &StoreEnv::with_home(home()), opts)
}

fn roles(s: &Session) -> Vec<Role> {
    s.turns.iter().map(|t| t.role).collect()
}

#[test]
fn modern_session_reads_prompt_commands_and_edit() {
    let all = parse_all(&ParseOptions::default());
    let s = session(&all, "s_42");
    assert_eq!(s.harness, "cline");
    assert_eq!(s.title.as_deref(), Some("retry storm after outage"), "the prompt's first line");
    assert_eq!(s.project.as_deref(), Some("/src/queue"), "manifest cwd wins over workspace_root");
    assert_eq!(s.started, Timestamp::parse_str("2026-05-05T08:00:00Z"));
    assert_eq!(s.turns[0].role, Role::User);
    assert_eq!(s.turns[0].text, "retry storm after outage", "<user_input mode=…> unwrapped");
    let go = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("go test ./retry/...")).expect("go test");
    assert_eq!(go.text, "ok  retry 0.2s", "the result folds into the call");
    let edit = s.turns.iter().find(|t| t.edit.is_some()).expect("an edit");
    assert_eq!(edit.files, vec![FileTouch { path: "/src/queue/retry.go".into(), action: FileAction::Edit }]);
    assert_eq!(edit.edit.as_ref().map(|e| e.old.as_str()), Some("d := base"));
}

#[test]
fn current_cli_results_fold_per_command_and_system_prompt_is_not_speech() {
    let all = parse_all(&ParseOptions::default());
    let s = session(&all, "1795997878365_k8zor");
    assert_eq!(s.title.as_deref(), Some("Ledger tests failing"), "metadata.title");
    assert_eq!(s.started, Timestamp::parse_str("2026-11-30T00:17:58.365Z"), "started_at (3.0.65 writes no created_at)");
    assert!(!s.turns.iter().any(|t| t.text.contains("highly skilled")), "system_prompt is harness-authored");
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning is off by default");
    let cargo = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("cargo test")).expect("cargo test");
    let tool = cargo.tool.as_ref().unwrap();
    assert!(tool.is_error, "success: false");
    assert_eq!(tool.exit, None, "Cline records no exit status");
    assert!(cargo.text.contains("1 failed"));
    let git = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("git status")).expect("git status");
    assert!(!git.tool.as_ref().unwrap().is_error);
    assert!(git.text.contains("nothing to commit"));
    let read = s.turns.iter().find(|t| t.files.iter().any(|f| f.action == FileAction::Read)).expect("read_files");
    assert_eq!(read.files.len(), 2, "objects and strings in `files`");
    let failed_edit = s.turns.iter().find(|t| t.edit.is_some()).expect("editor call");
    assert!(failed_edit.tool.as_ref().unwrap().is_error, "is_error on the result is kept");
    assert!(s.turns.iter().any(|t| t.role == Role::ToolOutput && t.text.contains("not in this file")), "an unpaired result");

    let with = parse_all(&ParseOptions { include_reasoning: true });
    assert!(session(&with, "1795997878365_k8zor").turns.iter().any(|t| t.role == Role::Reasoning), "thinking with the switch");
}

#[test]
fn non_lead_agents_are_skipped() {
    let all = parse_all(&ParseOptions::default());
    assert!(!all.iter().any(|s| s.id == "1795998000000_t3am1"));
}

#[test]
fn legacy_tasks_are_text_only_with_task_history_metadata() {
    let all = parse_all(&ParseOptions::default());
    let hello = session(&all, "cline-task-1767225600000");
    assert_eq!(hello.title.as_deref(), Some("Say hello"));
    assert_eq!(hello.project.as_deref(), Some("/home/u/greeter"));
    assert_eq!(roles(hello), [Role::User, Role::Assistant]);
    assert_eq!(hello.turns[0].text, "Say hello", "<task> unwrapped, <environment_details> removed");
    assert_eq!(hello.turns[0].time, Some(Timestamp(1767225600000)));
    assert_eq!(hello.turns[1].time, Some(Timestamp(1767225601000)), "base + index seconds");

    let bump = session(&all, "cline-task-1767300000000");
    assert!(bump.turns.iter().all(|t| t.tool.is_none()), "legacy tool blocks yield nothing");
    assert!(bump.turns.iter().any(|t| t.role == Role::User && t.text == "use 1.3, not the newest"), "<feedback> tags go");
    assert!(!bump.turns.iter().any(|t| t.text.contains("environment_details") || t.text.contains("Current Time")));

    let cursor = session(&all, "cline-task-1768000000000");
    assert_eq!(cursor.project.as_deref(), Some("cline"), "no working directory: the default project");
    assert!(cursor.turns.iter().any(|t| t.text == "and eviction?"), "<user_message> unwrapped");
}

#[test]
fn roo_roots_are_not_read() {
    let sources = ClineFormat.discover(&StoreEnv::with_home(home())).sources;
    assert!(!sources.iter().any(|s| s.path.to_string_lossy().contains("rooveterinaryinc")), "Roo's root is Roo's");
}

/// A task in both generations (built in a copy of the fixture home: in the fixture home
/// itself the kit's relocation checks move one generation without the other).
#[test]
fn newest_generation_wins_per_task() {
    let tmp = tempfile::tempdir().unwrap();
    deja_core::testkit::materialize_home(&home(), tmp.path()).unwrap();
    let task = tmp.path().join(".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1780000000000");
    std::fs::create_dir_all(&task).unwrap();
    std::fs::write(
        task.join("api_conversation_history.json"),
        r#"[{"role":"user","content":"<task>\ntidy the notes index\n</task>"},{"role":"assistant","content":"Sorted (legacy copy)."}]"#,
    )
    .unwrap();
    let all = deja_core::testkit::read_readable(&ClineFormat, &StoreEnv::with_home(tmp.path()), &ParseOptions::default());
    let tidy: Vec<&Session> = all.iter().filter(|s| s.id.ends_with("1780000000000")).collect();
    assert_eq!(tidy.len(), 1, "one task, two generations, read once");
    assert_eq!(tidy[0].id, "1780000000000");
    assert!(tidy[0].turns.iter().any(|t| t.text.contains("modern copy")));
}

#[test]
fn a_torn_document_is_an_error_not_a_panic() {
    let sources = ClineFormat.discover(&StoreEnv::with_home(home())).sources;
    let torn = sources.iter().find(|s| s.path.to_string_lossy().contains("1767400000000")).expect("the torn task");
    assert!(ClineFormat.parse(torn, &ParseOptions::default(), &mut Vec::new()).is_err());
}

/// Cline CLI 3.0.65 (run 2026-12-01): the `editor` result is a `{query, result, error,
/// success}` item serialized into the content string, and the editor's path is the one the
/// model wrote, relative to the session's cwd.
#[test]
fn cli_3_0_65_editor_results_decode_and_relative_paths_join_the_cwd() {
    let all = parse_all(&ParseOptions::default());
    let s = session(&all, "1796126000000_r3065");
    assert_eq!(s.project.as_deref(), Some("/home/dev/projects/shop"));
    let users: Vec<&str> = s.turns.iter().filter(|t| t.role == Role::User).map(|t| t.text.as_str()).collect();
    assert_eq!(users, ["Refresh tokens expire a minute early", "Note the leeway rule in the notes file too"], "both prompts, unwrapped");
    let grep =
        s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("grep -n leeway src/token.rs")).expect("grep");
    assert_eq!(grep.text, "12:const LEEWAY: u64 = 60;");
    let edits: Vec<_> = s.turns.iter().filter(|t| t.edit.is_some()).collect();
    assert_eq!(edits.len(), 2);
    let created = edits[0];
    assert_eq!(
        created.files,
        vec![FileTouch { path: "/home/dev/projects/shop/src/leeway.txt".into(), action: FileAction::Edit }],
        "joined onto cwd"
    );
    assert_eq!(created.edit.as_ref().map(|e| e.path.as_str()), Some("/home/dev/projects/shop/src/leeway.txt"));
    assert_eq!(created.text, "File created successfully at: /home/dev/projects/shop/src/leeway.txt", "the item's result, not its JSON");
    assert!(!created.tool.as_ref().unwrap().is_error);
    let refused = edits[1];
    assert!(refused.tool.as_ref().unwrap().is_error, "success: false inside the string");
    assert!(refused.text.starts_with("Editor operation failed:"), "the error explains an empty result: {}", refused.text);
    assert!(!s.turns.iter().any(|t| t.text.contains("\"query\"")), "no result JSON indexed as text");
}

/// The plugin names the binary as a JS string literal, quotes and all, and keeps no
/// placeholder.
#[test]
fn the_plugin_names_the_binary_as_a_js_string() {
    use deja_core::wire::{Edit, WireContext};
    let env = StoreEnv::with_home("/h");
    let cx = WireContext { env: &env, exe: "/opt/my \"deja\"/deja".into() };
    let wiring = ClineFormat.wiring().expect("cline is wired");
    let plugin = wiring
        .auto(&cx)
        .into_iter()
        .find_map(|e| match e {
            Edit::OwnedFile { file, contents } if file.ends_with("plugins/deja/index.js") => Some(contents),
            _ => None,
        })
        .expect("the plugin");
    assert!(plugin.contains(r#"const EXE = "/opt/my \"deja\"/deja";"#), "{plugin}");
    assert!(!plugin.contains("__DEJA_EXE__"));
    assert!(plugin.contains("registerMessageBuilder") && plugin.contains("\"hook-prompt\", \"--plain\""));
}

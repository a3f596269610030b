//! Every test of deja-adapter-iflow, in one test binary: the conformance kit, then the
//! rules that matter most for iFlow's dialect of the Claude-shaped family.

use deja_adapter_iflow::IflowFormat;
use deja_core::{ExitStatus, Role, Session};

deja_core::conformance!(IflowFormat);

fn sessions() -> Vec<Session> {
    deja_core::testkit::sessions(&IflowFormat, &deja_core::fixture_home!())
}

#[test]
fn snapshots_merge_and_gemini_results_fold() {
    let all = sessions();
    let s = all.iter().find(|s| s.id == "5de7a1b2-0000-4000-8000-000000000001").expect("session id without `session-`");
    assert_eq!((s.project.as_deref(), s.parent.as_deref()), (Some("/src/retagger"), None));
    assert_eq!(s.turns.iter().filter(|t| t.text == "Reading the README first.").count(), 1);
    let calls: Vec<&str> = s.turns.iter().filter_map(|t| t.tool.as_ref()).map(|t| t.name.as_str()).collect();
    assert_eq!(calls, ["read_file", "replace", "run_shell_command"], "each tool_use id once");
    let read = s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "read_file")).expect("read");
    assert!(read.text.starts_with("# Retagger") && read.files.iter().any(|f| f.path == "/src/retagger/README.md"));
    assert!(s.turns.iter().any(|t| t.edit.as_ref().is_some_and(|e| e.old.contains("NewClientWithOpts"))));
    let build = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("go build ./...")).expect("build");
    assert_eq!(build.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(1)));
    let users: Vec<&str> = s.turns.iter().filter(|t| t.role == Role::User).map(|t| t.text.as_str()).collect();
    assert_eq!(users, ["set DOCKER_API_VERSION at startup", "/review main.go"], "stop-hook feedback and the caveat are not speech");
    assert!(s.turns.iter().any(|t| t.role == Role::Summary));
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning is not indexed by default");
}

#[test]
fn a_foreign_session_id_is_a_continuation() {
    let all = sessions();
    let s = all.iter().find(|s| s.id == "6ef8c3d4-0000-4000-8000-000000000002").expect("continuation");
    assert_eq!((s.kind.as_deref(), s.parent.as_deref()), (Some("continuation"), Some("5de7a1b2-0000-4000-8000-000000000001")));
    assert_eq!(s.project.as_deref(), Some("C:\\work\\tool"));
}

#[test]
fn print_mode_bare_function_responses_are_read() {
    // `iflow -p` (0.5.19) writes a tool_result's content as a bare Gemini part
    // `{functionResponse: {…, response: {output}}}`, and `-c` appends a second prompt
    // (parentUuid null) to the same file.
    let all = sessions();
    let s = all.iter().find(|s| s.id == "7a9c1e20-0000-4000-8000-000000000003").expect("print-mode session");
    assert_eq!((s.project.as_deref(), s.parent.as_deref(), s.kind.as_deref()), (Some("/home/ana/inventory"), None, None));
    let users: Vec<&str> = s.turns.iter().filter(|t| t.role == Role::User).map(|t| t.text.as_str()).collect();
    assert_eq!(users, ["make the stock counter thread-safe", "run the tests again"]);
    let shells: Vec<(&str, Option<ExitStatus>)> = s
        .turns
        .iter()
        .filter(|t| t.tool.as_ref().is_some_and(|x| x.name == "run_shell_command"))
        .map(|t| (t.text.as_str(), t.tool.as_ref().and_then(|x| x.exit.clone())))
        .collect();
    assert_eq!(shells.len(), 2);
    assert!(shells[0].0.contains("counter::race ... FAILED"), "shell output read: {:?}", shells[0].0);
    assert_eq!(shells[0].1, Some(ExitStatus::Code(101)));
    assert!(shells[1].0.contains("counter::race ... ok"));
    assert_eq!(shells[1].1, Some(ExitStatus::Code(0)));
    let edit = s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "replace")).expect("replace");
    assert!(edit.text.starts_with("Successfully modified file") && edit.edit.as_ref().is_some_and(|e| e.old == "count: u64,"));
    let write = s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "write_file")).expect("write");
    assert!(write.text.starts_with("Successfully created") && write.files.iter().any(|f| f.path == "/home/ana/inventory/NOTES.md"));
    let answers: Vec<&str> = s.turns.iter().filter(|t| t.role == Role::Assistant).map(|t| t.text.as_str()).collect();
    assert_eq!(answers, ["The counter now uses an AtomicU64.", "All counter tests pass."]);
}

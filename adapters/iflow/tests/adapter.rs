//! Every test of deja-adapter-iflow, in one test binary: the conformance kit, then the
//! rules that matter most for iFlow's dialect of the Claude-shaped family.

use std::path::Path;

use deja_adapter_iflow::IflowFormat;
use deja_core::{ExitStatus, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(IflowFormat, relocate "DEJA_IFLOW_ROOT" => ".iflow/projects");

fn sessions() -> Vec<Session> {
    let home = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/home");
    let mut out = Vec::new();
    for src in IflowFormat.discover(&StoreEnv::with_home(&home)).sources {
        IflowFormat.parse(&src, &ParseOptions::default(), &mut out).expect("a fixture parses");
    }
    out
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

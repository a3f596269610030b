//! Every test of deja-adapter-commandcode, in one test binary: the conformance kit, then
//! the rules that matter most for Command Code's two generations and tool dialect.

use deja_adapter_commandcode::CommandCodeFormat;
use deja_core::{ExitStatus, FileAction, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(CommandCodeFormat);

fn sessions() -> Vec<Session> {
    let home = deja_core::fixture_home!();
    let mut out = Vec::new();
    let found = CommandCodeFormat.discover(&StoreEnv::with_home(&home)).sources;
    assert_eq!(found.len(), 3, "checkpoints, prompts, backups and meta files are not transcripts: {found:?}");
    for src in found {
        CommandCodeFormat.parse(&src, &ParseOptions::default(), &mut out).expect("a fixture parses");
    }
    out
}

fn command<'a>(s: &'a Session, cmd: &str) -> &'a deja_core::Turn {
    s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some(cmd)).unwrap_or_else(|| panic!("{cmd}"))
}

#[test]
fn v3_header_messages_tools_and_compaction() {
    let all = sessions();
    let s = all.iter().find(|s| s.id == "cc-3f1a").expect("the header id names the session");
    assert_eq!(s.project.as_deref(), Some("/home/u/api"));
    let go = command(s, "go test ./...");
    assert_eq!(go.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(1)));
    assert!(go.text.starts_with("FAIL api"), "the exit line is cut");
    assert_eq!(command(s, "grep -n ctx.Done server.go").tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(1)));
    assert_eq!(command(s, "go test -run TestServe ./...").tool.as_ref().and_then(|t| t.exit.clone()), None, "a clean run writes no code");
    let read = s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "read_file")).expect("read_file");
    assert_eq!(
        read.files.iter().map(|f| (f.path.as_str(), f.action)).collect::<Vec<_>>(),
        [("/home/u/api/server_test.go", FileAction::Read)]
    );
    assert!(s.turns.iter().any(|t| t.edit.as_ref().is_some_and(|e| e.old == "go serve()")));
    assert!(s.turns.iter().any(|t| t.files.iter().any(|f| f.action == FileAction::Write)));
    assert!(s.turns.iter().any(|t| t.role == Role::Summary && t.text.contains("serve() ignored")));
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning is not indexed by default");
}

#[test]
fn v2_flat_lines() {
    let all = sessions();
    let s = all.iter().find(|s| s.id == "s0").expect("v2 session");
    let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::ToolOutput, Role::Assistant]);
    assert_eq!(s.project.as_deref(), Some("u/web"), "no cwd on v2 lines: the directory name");
}

#[test]
fn the_synthetic_writer_round_trips_the_exit_status() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let sample = deja_core::testkit::sample_session();
    CommandCodeFormat.write_synthetic(tmp.path(), &sample).expect("write");
    let out = deja_core::testkit::read_all(&CommandCodeFormat, &StoreEnv::with_home(tmp.path()), &ParseOptions::default());
    let s = out.iter().find(|s| s.id == sample.id).expect("the sample session");
    assert_eq!(s.project.as_deref(), Some(sample.project.as_str()));
    let shell = s.turns.iter().find(|t| t.role == Role::ToolCall).expect("the shell call");
    assert_eq!(shell.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(101)));
}

/// command-code 1.64.0 already writes v3 (the page dates v3 to 1.73), with `id`/`parentId`
/// on every entry, `message.meta`, `usage` and `model`, and a project directory slug with
/// no leading dash; the `.checkpoints.jsonl` beside it has per-turn `prompt` records.
#[test]
fn release_1_64_0_v3_entries() {
    let all = sessions();
    let s = all.iter().find(|s| s.id == "0b7e4c21-5a9d-4f3e-8c12-6d0e9f1a2b34").expect("the 1.64.0 session");
    assert_eq!(s.project.as_deref(), Some("/home/u/shop"));
    let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
    assert_eq!(
        roles,
        [Role::User, Role::ToolCall, Role::ToolCall, Role::Assistant, Role::User, Role::ToolCall, Role::ToolCall, Role::Assistant]
    );
    assert_eq!(command(s, "ls no-such-fixtures").tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(2)));
    assert_eq!(command(s, "grep -n round cart.py").tool.as_ref().and_then(|t| t.exit.clone()), None);
    assert!(s.turns.iter().any(|t| t.edit.as_ref().is_some_and(|e| e.new.as_deref() == Some("return total.quantize(CENT)"))));
    assert_eq!(s.turns.iter().filter(|t| t.role == Role::User).count(), 2, "checkpoint prompts are not read as speech");
}

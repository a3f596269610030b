//! Every test of deja-adapter-kimi, in one test binary: the conformance kit (snapshots of
//! every source in `tests/fixtures/home/`, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for both generations.

use deja_adapter_kimi::legacy::{exit_from_status, md5_hex};
use deja_adapter_kimi::KimiFormat;
use deja_core::testkit::session;
use deja_core::{ExitStatus, FileAction, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    KimiFormat,
    wires "KIMI_CODE_HOME" => ".kimi-code",
    wires "KIMI_SHARE_DIR" => ".kimi"
);

fn fixture_sessions(opts: &ParseOptions) -> Vec<Session> {
    let home = deja_core::fixture_home!();
    let mut out = Vec::new();
    let found = KimiFormat.discover(&StoreEnv::with_home(&home)).sources;
    assert_eq!(found.len(), 5, "two Kimi Code main agents, three legacy sessions; no sub-agent, no second file per session");
    for src in found {
        KimiFormat.parse(&src, opts, &mut out).expect("a fixture parses");
    }
    out
}

fn command<'a>(s: &'a Session, cmd: &str) -> &'a deja_core::Turn {
    s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some(cmd)).unwrap_or_else(|| panic!("{cmd}"))
}

#[test]
fn kimi_code_wire_rebuilds_streams_around_calls() {
    let all = fixture_sessions(&ParseOptions::default());
    let s = session(&all, "3f9e0c4a-1111-4222-8333-444455556666");
    assert_eq!((s.title.as_deref(), s.project.as_deref()), (Some("jwks rotation"), Some("/src/auth")));
    let said: Vec<(Role, &str)> = s.turns.iter().take(4).map(|t| (t.role, t.text.as_str())).collect();
    assert_eq!(
        said,
        vec![
            (Role::User, "tokens fail after key rotation"),
            (Role::Assistant, "The JWKS cache"),
            (Role::ToolCall, "FAIL TestRotate"),
            (Role::Assistant, "never reloads."),
        ]
    );
    assert!(command(s, "go test ./auth/...").tool.as_ref().is_some_and(|t| t.is_error));
    assert!(s.turns.iter().any(|t| t.edit.as_ref().is_some_and(|e| e.old == "if c.keys != nil {")));
    assert!(s.turns.iter().any(|t| t.files.iter().any(|f| f.action == FileAction::Write)));
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning || t.text.contains("You are Kimi")));
    let last = s.turns.last().expect("turns");
    assert!(last.partial && last.text.starts_with("Running the whole suite"), "an answer cut off mid-stream is partial");
    assert!(!all.iter().any(|s| s.turns.iter().any(|t| t.text.contains("sub-agent task"))), "sub-agents are not indexed");
}

#[test]
fn reasoning_only_when_asked() {
    let all = fixture_sessions(&ParseOptions { include_reasoning: true });
    let s = session(&all, "3f9e0c4a-1111-4222-8333-444455556666");
    assert_eq!(s.turns[1].role, Role::Reasoning);
}

#[test]
fn legacy_wire_log_gives_times_exit_codes_and_the_md5_project() {
    let all = fixture_sessions(&ParseOptions::default());
    let s = session(&all, "5e6f7a8b-0000-4000-8000-000000000001");
    assert_eq!((s.title.as_deref(), s.project.as_deref()), (Some("why do the migrations"), Some("/home/dev/src/api-service")));
    assert_eq!((s.turns[0].role, s.turns[0].text.as_str()), (Role::User, "why do the migrations hang?"));
    assert_eq!(s.turns[0].time.map(|t| t.millis()), Some(1_796_032_800_250));
    let ok = command(s, "alembic current");
    assert_eq!((ok.text.as_str(), ok.tool.as_ref().and_then(|t| t.exit.clone())), ("a1b2c3 (head)", Some(ExitStatus::Code(0))));
    assert_eq!(command(s, "alembic upgrade head").tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(1)));
    assert!(s
        .turns
        .iter()
        .any(|t| t.role == Role::Assistant && t.text == "The database is at head; the hang is a lock held by another session."));
}

#[test]
fn legacy_context_without_a_wire_log() {
    let all = fixture_sessions(&ParseOptions::default());
    let s = session(&all, "9a8b7c6d-0000-4000-8000-000000000002");
    assert_eq!(s.project.as_deref(), Some("/home/dev/src/billing"), "from the system prompt's cwd sentence");
    let t = command(s, "pytest tests/test_invoice.py");
    assert_eq!((t.text.as_str(), t.tool.as_ref().and_then(|x| x.exit.clone())), ("1 failed, 4 passed", Some(ExitStatus::Code(2))));
    assert!(!s.turns.iter().any(|t| t.text.contains("CHECKPOINT") || t.text.contains("<system>")));
    assert_eq!(s.turns.iter().filter(|t| t.role == Role::User).count(), 1);
}

#[test]
fn legacy_1_51_0_write_file_keeps_its_file_and_status() {
    let all = fixture_sessions(&ParseOptions::default());
    let s = session(&all, "c4a1b2c3-0000-4000-8000-000000000003");
    assert_eq!(s.project.as_deref(), Some("/home/dev/projects/shop"));
    let w = s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "WriteFile")).expect("WriteFile call");
    // Both were lost before: no file for WriteFile, and its empty `output` left no result.
    assert_eq!(w.files.iter().map(|f| (f.path.as_str(), f.action)).collect::<Vec<_>>(), vec![("notes.txt", deja_core::FileAction::Write)]);
    assert_eq!(w.text, "File successfully overwritten. Current size: 28 bytes.");
    assert_eq!(w.tool.as_ref().and_then(|t| t.exit.clone()), None, "not a shell: no exit status");
    assert_eq!(s.turns.last().map(|t| (t.role, t.text.as_str())), Some((Role::Assistant, "Wrote the fix plan to notes.txt.")));
    assert!(!s.turns.iter().any(|t| t.text.contains("Say where")), "think parts are not the answer");
}

#[test]
fn md5_and_status_helpers() {
    assert_eq!(md5_hex(b"/home/dev/src/api-service"), "236335935ebb5b3d2009807257f95eb5", "the page's example");
    assert_eq!(md5_hex(b""), "d41d8cd98f00b204e9800998ecf8427e");
    assert_eq!(exit_from_status("ERROR: Command failed with exit code: 127."), Some(127));
    assert_eq!(exit_from_status("Command executed successfully."), None);
}

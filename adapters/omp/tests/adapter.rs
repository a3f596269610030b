//! Every test of deja-adapter-omp, in one test binary: the conformance kit (snapshots of
//! every source in `tests/fixtures/home/`, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for omp.

use deja_adapter_omp::OmpFormat;
use deja_core::testkit::session;
use deja_core::{ExitStatus, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    OmpFormat,
    // Every profile is read, so the variables naming omp's current one move nothing.
    switch "OMP_PROFILE",
    switch "PI_PROFILE",
    switch "DEJA_INCLUDE_SUBAGENTS"
);

fn home() -> std::path::PathBuf {
    deja_core::fixture_home!()
}

fn sessions(env: &StoreEnv) -> Vec<Session> {
    deja_core::testkit::read_all(&OmpFormat, env, &ParseOptions::default())
}

#[test]
fn every_profile_and_xdg_root_is_read() {
    let all = sessions(&StoreEnv::with_home(home()));
    let mut ids: Vec<&str> = all.iter().map(|s| s.id.as_str()).collect();
    ids.sort();
    assert_eq!(
        ids,
        [
            "01a2318d-0000-7000-8000-000000000005",
            "01a23193-0000-7000-8000-000000000006",
            "01a23199-0000-7000-8000-000000000007",
            "01a23199-0000-7000-8000-000000000008",
            "01a2b3c4-0000-7000-8000-000000000001",
            "01a2b3c4-0000-7000-8000-000000000002",
            "01a2b3c4-0000-7000-8000-000000000003",
            "01a2b3c4-0000-7000-8000-000000000004",
            "0b1c2d3e-0000-4000-8000-00000000000a"
        ],
        "default, named profile, XDG and XDG profile"
    );
    let elsewhere = tempfile::tempdir().expect("tmp");
    let only_home = sessions(&StoreEnv::with_home(home()).set("XDG_DATA_HOME", elsewhere.path().display().to_string()));
    assert_eq!(only_home.len(), 7, "no omp directory under XDG_DATA_HOME: those roots do not count");
}

#[test]
fn omp_18_title_slot_header_and_wall_time_footer() {
    let all = sessions(&StoreEnv::with_home(home()));
    let s = session(&all, "01a2b3c4-0000-7000-8000-000000000001");
    assert_eq!((s.harness.as_str(), s.project.as_deref(), s.title.as_deref()), ("omp", Some("/home/dev/src/app"), None), "empty slot");
    let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
    assert_eq!(roles, [Role::User, Role::ToolCall, Role::Assistant], "thinking off by default, lifecycle customs skipped");
    let call = &s.turns[1];
    assert_eq!(call.tool.as_ref().and_then(|t| t.command.as_deref()), Some("cargo test"));
    assert_eq!(call.text, "test result: ok. 12 passed", "the footer is not output");
    // omp 18.2.3 writes an exit code only for a non-zero exit, so a clean result exited 0.
    assert_eq!(call.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(0)), "a clean bash result is exit 0");
    let failed = session(&all, "01a2b3c4-0000-7000-8000-000000000002");
    assert_eq!(failed.title.as_deref(), Some("lint failures"));
    assert!(failed.turns.iter().any(|t| t.tool.as_ref().is_some_and(|x| x.is_error && x.command.as_deref() == Some("npm run lint"))));
}

#[test]
fn developer_messages_are_not_speech() {
    let all = sessions(&StoreEnv::with_home(home()));
    let s = session(&all, "0b1c2d3e-0000-4000-8000-00000000000a");
    assert_eq!(s.project.as_deref(), Some("/src/ledger"));
    assert!(!s.turns.iter().any(|t| t.text.contains("house rules")));
    assert_eq!(
        s.turns.iter().map(|t| t.role).collect::<Vec<_>>(),
        [Role::User, Role::ToolOutput],
        "a result whose call is not in the file"
    );
}

/// What omp 18.2.3 wrote in a real run (`-projects-shop/…0005`, own text): the notice
/// paragraph after the output, a failed command's exit code, and the two prompts of a
/// `-c` continued session.
#[test]
fn the_release_18_2_3_notices_and_exit_codes() {
    let all = sessions(&StoreEnv::with_home(home()));
    let s = session(&all, "01a2318d-0000-7000-8000-000000000005");
    assert_eq!(s.project.as_deref(), Some("/home/dev/projects/shop"));
    let users: Vec<&str> = s.turns.iter().filter(|t| t.role == Role::User).map(|t| t.text.as_str()).collect();
    assert_eq!(users, ["Please fix the jwt refresh bug in auth.rs", "Now check the token expiry handling in the session cache"]);
    let bash: Vec<_> = s.turns.iter().filter(|t| t.tool.as_ref().is_some_and(|x| x.command.is_some())).collect();
    assert_eq!(bash.len(), 2);
    // The `Wall time:` line was followed by a `Timeout clamped …` notice: the whole
    // paragraph is omp's, not output.
    assert_eq!(bash[0].text, "1:fn refresh() {}");
    assert_eq!(bash[0].tool.as_ref().and_then(|x| x.exit.clone()), Some(ExitStatus::Code(0)));
    // A failure ends `Command exited with code 2` after the notices (and `details.exitCode`).
    assert_eq!(bash[1].text, "ls: cannot access 'session-cache': No such file or directory");
    assert_eq!(bash[1].tool.as_ref().and_then(|x| x.exit.clone()), Some(ExitStatus::Code(2)));
    assert!(s.turns.iter().any(|t| t.files.iter().any(|f| f.path == "NOTES.md")), "the write names its file");
    assert!(!s.turns.iter().any(|t| t.text.contains("Wall time") || t.text.contains("Timeout clamped")));
}

/// omp 18.2.3's hashline `edit` (`…0006`, as a real run wrote it): the file from the
/// `[PATH#TAG]` header, the written rows from `+` lines, the replaced line from the
/// result's `details.diff`. Before, the call named no file and had no span.
#[test]
fn the_release_18_2_3_hashline_edit_has_its_file_and_span() {
    let all = sessions(&StoreEnv::with_home(home()));
    let s = session(&all, "01a23193-0000-7000-8000-000000000006");
    let edit_turn = s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "edit")).expect("the edit");
    assert_eq!(edit_turn.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["auth.rs"]);
    let edit = edit_turn.edit.as_ref().expect("a span");
    assert_eq!(
        (edit.path.as_str(), edit.old.as_str(), edit.new.as_deref()),
        ("auth.rs", "fn sign() {}", Some("fn sign() { rotate_key(); }"))
    );
    assert!(s.turns.iter().any(|t| t.files.iter().any(|f| f.path == "auth.rs" && f.action == deja_core::FileAction::Read)));
}

/// omp 18.2.3's sub-agent (`<parent stem>/cache-audit.jsonl`, as a real `task` + `hub wait`
/// run wrote it): its own session with the parent, the assignment without omp's template
/// line, the `yield`ed answer as its assistant turn, and `session_init` (the sub-agent's
/// system prompt) never indexed.
#[test]
fn the_release_18_2_3_sub_agent_answers_through_yield() {
    let all = sessions(&StoreEnv::with_home(home()));
    let sub = session(&all, "01a23199-0000-7000-8000-000000000008");
    assert_eq!(sub.parent.as_deref(), Some("01a23199-0000-7000-8000-000000000007"));
    assert!(sub.turns.iter().any(|t| t.role == Role::Assistant && t.text == "expiry is checked in cache.rs evict()"), "the yielded answer");
    assert!(!all.iter().any(|s| s.turns.iter().any(|t| t.text.contains("SUB-AGENT SYSTEM PROMPT"))));
    let injected = <OmpFormat as HarnessFormat>::info(&OmpFormat).injected;
    let user = sub.turns.iter().find(|t| t.role == Role::User).expect("the assignment");
    assert_eq!(injected.strip(&user.text), "find where the session cache expires tokens", "omp's template line is not user speech");
}

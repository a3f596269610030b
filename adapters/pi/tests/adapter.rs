//! Every test of deja-adapter-pi, in one test binary: the conformance kit (snapshots of
//! every source in `tests/fixtures/home/`, arbitrary bytes, mutated fixtures, store
//! overrides, the synthetic round trip), then the rules that matter most for pi.

use std::path::Path;

use deja_adapter_pi::{encode_cwd, PiFormat};
use deja_core::testkit::session;
use deja_core::{ExitStatus, FileAction, HarnessFormat, ParseOptions, Role, Session, StoreEnv, SynthWriter};

deja_core::conformance!(
    PiFormat,
    switch "DEJA_INCLUDE_SUBAGENTS",
    wires "PI_CODING_AGENT_DIR" => ".pi/agent"
);

fn sessions_with(opts: &ParseOptions) -> Vec<Session> {
    let home = deja_core::fixture_home!();
    deja_core::testkit::read_all(&PiFormat, &StoreEnv::with_home(&home), opts)
}

/// Bug fixed: the project was the `--…--` directory decoded, which splits a name that
/// holds a dash (`api-service` became `api/service`), so `--project`, `orient` and
/// per-project hooks missed these sessions; the header's `cwd` says where it ran.
#[test]
fn the_project_is_the_headers_cwd_not_the_directory_decoded() {
    let all = sessions_with(&ParseOptions::default());
    let s = session(&all, "0199ac00-0000-7000-8000-000000000008");
    assert_eq!(s.project.as_deref(), Some("/home/dev/src/api-service"));
}

#[test]
fn the_page_example_reads_as_the_page_says() {
    let all = sessions_with(&ParseOptions::default());
    let s = session(&all, "6f1e2d3c-0000-4000-8000-000000000001");
    assert_eq!(s.harness, "pi");
    assert_eq!(s.project.as_deref(), Some("/src/notes"), "the header's cwd");
    let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::ToolCall, Role::Assistant], "thinking is not indexed by default");
    assert_eq!(s.turns[2].tool.as_ref().and_then(|t| t.command.as_deref()), Some("sqlite3 notes.db .schema"));
    assert_eq!(s.turns[2].text, "CREATE TABLE notes(...)", "the result folds into its call");
    let with = sessions_with(&ParseOptions { include_reasoning: true });
    assert!(session(&with, &s.id).turns.iter().any(|t| t.role == Role::Reasoning && t.text == "probably no index"));
}

#[test]
fn a_failed_command_keeps_its_exit_code_and_loses_the_marker_line() {
    let all = sessions_with(&ParseOptions::default());
    let s = session(&all, "0199aa10-0000-7000-8000-000000000002");
    let call = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("npm test -- migrate")).expect("call");
    let tool = call.tool.as_ref().expect("tool");
    assert_eq!((tool.exit.clone(), tool.is_error), (Some(ExitStatus::Code(1)), true));
    assert!(!call.text.contains("Command exited"), "{}", call.text);
    assert_eq!(s.turns[0].text, "run the migration test", "string content");
    let bang = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("git status --short")).expect("!cmd");
    assert_eq!(bang.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(0)));
}

#[test]
fn file_tools_record_files_and_the_edit_span() {
    let all = sessions_with(&ParseOptions::default());
    let s = session(&all, "0199aa20-0000-7000-8000-000000000003");
    let files: Vec<(&str, FileAction)> = s.turns.iter().flat_map(|t| t.files.iter().map(|f| (f.path.as_str(), f.action))).collect();
    assert_eq!(files, [("src/cli.ts", FileAction::Read), ("src/cli.ts", FileAction::Edit), ("CHANGELOG.md", FileAction::Write)]);
    let edit = s.turns.iter().find_map(|t| t.edit.as_ref()).expect("edit");
    assert_eq!((edit.old.as_str(), edit.new.as_deref()), ("const flag = '--fts';", Some("const flag = '--full-text';")));
}

#[test]
fn summaries_and_an_aborted_answer() {
    let all = sessions_with(&ParseOptions::default());
    let s = session(&all, "0199aa30-0000-7000-8000-000000000004");
    assert_eq!(s.turns.iter().filter(|t| t.role == Role::Summary).count(), 2, "compaction and branch summary");
    assert_eq!(s.turns.iter().filter(|t| t.role == Role::User).count(), 2, "the summary replaces nothing");
    assert!(s.turns.last().is_some_and(|t| t.role == Role::Assistant && t.partial));
}

#[test]
fn deja_recall_is_not_user_speech() {
    let all = sessions_with(&ParseOptions::default());
    let mut s = session(&all, "0199aa40-0000-7000-8000-000000000005").clone();
    deja_core::normalize::normalize(&mut s, &Default::default(), PiFormat.info().injected);
    let users: Vec<&str> = s.turns.iter().filter(|t| t.role == Role::User).map(|t| t.text.as_str()).collect();
    assert_eq!(users, ["why are tags duplicated?"]);
}

#[test]
fn attached_files_are_not_user_speech() {
    // Bug fixed: `pi @file "…"` (0.73.1) writes each file as a `<file name=…>…</file>` block
    // before the prompt, and it was indexed as the user's words (and became the title).
    let all = sessions_with(&ParseOptions::default());
    let s = session(&all, "019ad0e4-5f6a-7b8c-9d0e-4c5d6e7f8004");
    assert!(s.turns[0].text.starts_with("<file name=\"/src/shop/checkout.rs\">"), "the parser keeps what pi wrote");
    let injected = PiFormat.info().injected;
    assert_eq!(injected.strip(&s.turns[0].text), "why does the receipt total differ from checkout?");
    assert_eq!(injected.strip("<file> is a tag I typed"), "<file> is a tag I typed", "only a closed block goes");
}

#[test]
fn the_synthetic_writer_lays_out_a_pi_store() {
    let tmp = tempfile::tempdir().expect("tmp");
    let session = deja_core::testkit::sample_session();
    let path = PiFormat.write(tmp.path(), &session).expect("write");
    let rel = path.strip_prefix(tmp.path()).expect("inside home");
    assert_eq!(rel.parent(), Some(Path::new(".pi/agent/sessions/--src-billing--")));
    assert!(rel.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(&format!("_{}.jsonl", session.id))));
    let mut out = Vec::new();
    PiFormat.parse(&deja_core::SourceRef::file(&path), &ParseOptions::default(), &mut out).expect("parse");
    let s = &out[0];
    assert_eq!((s.id.as_str(), s.project.as_deref()), (session.id.as_str(), Some("/src/billing")));
    let call = s.turns.iter().find(|t| t.role == Role::ToolCall).expect("call");
    assert_eq!(call.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(101)));
    assert_eq!(call.text, "test rounding ... FAILED");
    assert!(s.turns.iter().all(|t| t.node.is_some()), "every entry has an id and a parent chain");
    assert_eq!(encode_cwd("/Users/max/code/my-app"), "--Users-max-code-my-app--");
}

#[test]
fn the_synthetic_writer_keeps_reasoning_reads_and_edits() {
    use deja_core::{SynthSession, SynthTurn, Timestamp};
    let at = |s: i64| Timestamp(1_772_445_600_000 + s * 1000);
    let session = SynthSession {
        id: "0b1c2d3e-4f50-4a61-8b72-000000000009".into(),
        project: "/src/billing".into(),
        title: None,
        started: at(0),
        turns: vec![
            SynthTurn::User { text: "where is rounding done?".into(), time: at(1) },
            SynthTurn::Reasoning { text: "look for round(".into(), time: at(2) },
            SynthTurn::Read { path: "src/money.rs".into(), output: "fn round() {}".into(), time: at(3) },
            SynthTurn::Edit { path: "src/money.rs".into(), old: "half_even".into(), new: "half_up".into(), time: at(4) },
            SynthTurn::Shell { command: "cargo test".into(), output: "ok".into(), exit_code: 0, time: at(5) },
            SynthTurn::Reasoning { text: "done".into(), time: at(6) },
        ],
    };
    let tmp = tempfile::tempdir().expect("tmp");
    let path = PiFormat.write(tmp.path(), &session).expect("write");
    let mut out = Vec::new();
    PiFormat.parse(&deja_core::SourceRef::file(&path), &ParseOptions { include_reasoning: true }, &mut out).expect("parse");
    let roles: Vec<Role> = out[0].turns.iter().map(|t| t.role).collect();
    assert_eq!(roles, [Role::User, Role::Reasoning, Role::ToolCall, Role::ToolCall, Role::ToolCall, Role::Reasoning]);
    let t = &out[0].turns;
    assert_eq!((t[2].files[0].action, t[2].text.as_str()), (FileAction::Read, "fn round() {}"));
    assert_eq!(t[3].edit.as_ref().map(|e| (e.old.as_str(), e.new.as_deref())), Some(("half_even", Some("half_up"))));
    assert_eq!(
        t[4].tool.as_ref().and_then(|x| x.exit.clone()),
        Some(ExitStatus::Code(0)),
        "no exit line and no error: pi's bash tool exited 0"
    );
}

/// What pi 0.73.1 wrote in the real runs (`pi -p`, `pi -c -p`, `pi --fork`, and the TUI's
/// `!command` and `/name`), in the `--src-shop--` fixtures.
#[test]
fn release_0_73_1_sessions_read_completely() {
    let all = sessions_with(&ParseOptions::default());
    let s = session(&all, "019ad0a0-4e2b-7c31-9a55-1f0e2d3c4b01");
    assert_eq!(s.project.as_deref(), Some("/src/shop"));
    let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
    use Role::*;
    assert_eq!(roles, [User, ToolCall, ToolCall, Assistant, User, ToolCall, ToolCall, ToolCall, Assistant]);
    let t = &s.turns;
    let tool = |i: usize| t[i].tool.as_ref().expect("tool");
    // Bug fixed: a clean bash result (no exit line, no details) had no exit status.
    assert_eq!((tool(1).command.as_deref(), tool(1).exit.clone()), (Some("grep -n coupon checkout.rs"), Some(ExitStatus::Code(0))));
    assert_eq!(t[1].text, "12:    let coupon = None;");
    assert_eq!(t[2].files[0].action, FileAction::Write);
    let edit = t[5].edit.as_ref().expect("edits[] span");
    assert_eq!((edit.old.as_str(), edit.new.as_deref()), ("let coupon = None;", Some("let coupon = cart.coupon();")));
    assert_eq!((tool(6).exit.clone(), tool(6).is_error), (Some(ExitStatus::Code(101)), true));
    assert_eq!(t[6].text, "test checkout::total ... FAILED");
    // Bug fixed: pi's "(no output)" placeholder was indexed as the command's output.
    assert_eq!((t[7].text.as_str(), tool(7).exit.clone()), ("", Some(ExitStatus::Code(0))));
    assert!(!t.iter().any(|t| t.text.contains("the coupon is never read")), "thinking is not indexed by default");

    let fork = session(&all, "019ad0b8-71c4-7d02-8e13-2a3b4c5d6e02");
    assert_eq!((fork.kind.as_deref(), fork.parent.as_deref()), (Some("fork"), Some(s.id.as_str())));
    let texts: Vec<&str> = fork.turns.iter().map(|t| t.text.as_str()).collect();
    assert_eq!(
        texts,
        ["forked: try banker rounding for the coupon total", "Banker rounding keeps the total at 9.99."],
        "copied entries stay with the parent"
    );

    let tui = session(&all, "019ad0c2-0a1b-7e3c-8f4d-3b4c5d6e7f03");
    assert_eq!(tui.title.as_deref(), Some("coupon fixtures"), "/name writes session_info");
    let bang = tui.turns[0].tool.as_ref().expect("!command");
    assert_eq!((bang.command.as_deref(), bang.exit.clone(), bang.is_error), (Some("ls fixtures/coupons"), Some(ExitStatus::Code(2)), true));
    assert_eq!(tui.turns[1].text, "where do the coupon fixtures live?");
    let cat = tui.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("cat coupons.txt")).expect("cat");
    assert_eq!(cat.tool.as_ref().and_then(|x| x.exit.clone()), Some(ExitStatus::Code(0)), "a truncated clean result");
    assert!(cat.text.starts_with("coupon-7\ncoupon-8"), "{}", cat.text);
    let summary = tui.turns.last().expect("turns");
    assert_eq!((summary.role, summary.text.as_str()), (Role::Summary, "Coupon fixtures are built inline; coupons.txt holds ten codes."));
}

#[test]
fn a_session_dir_setting_moves_the_store() {
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path().join("home");
    let store = tmp.path().join("elsewhere");
    std::fs::create_dir_all(home.join(".pi/agent")).expect("mkdir");
    std::fs::write(home.join(".pi/agent/settings.json"), format!("{{\"sessionDir\": {:?}}}", store.display().to_string()))
        .expect("settings");
    let session = deja_core::testkit::sample_session();
    let written = PiFormat.write(tmp.path().join("scratch").as_path(), &session).expect("write");
    let dir = store.join("--src-billing--");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::copy(&written, dir.join(written.file_name().expect("name"))).expect("copy");
    let found = PiFormat.discover(&StoreEnv::with_home(&home)).sources;
    assert_eq!(found.len(), 1);
    assert!(found[0].path.starts_with(&store));
}

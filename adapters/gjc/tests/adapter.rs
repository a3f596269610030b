//! Every test of deja-adapter-gjc, in one test binary: the conformance kit (snapshots of
//! every source in `tests/fixtures/home/`, arbitrary bytes, mutated fixtures, store
//! overrides), then the rules that matter most for gjc.

use deja_adapter_gjc::GjcFormat;
use deja_core::testkit::session;
use deja_core::{ExitStatus, FileAction, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    GjcFormat,
    switch "DEJA_INCLUDE_SUBAGENTS",
    wires "GJC_CODING_AGENT_DIR" => ".gjc/agent"
);

fn sessions(env: &StoreEnv) -> Vec<Session> {
    deja_core::testkit::read_all(&GjcFormat, env, &ParseOptions::default())
}

fn env() -> StoreEnv {
    StoreEnv::with_home(deja_core::fixture_home!())
}

#[test]
fn every_edit_shape_yields_file_and_span() {
    let all = sessions(&env());
    let s = session(&all, "g-02");
    assert_eq!(s.project.as_deref(), Some("/w/svc"), "the digest directory says nothing; cwd does");
    let edits: Vec<(&str, &str, Option<&str>)> =
        s.turns.iter().filter_map(|t| t.edit.as_ref()).map(|e| (e.path.as_str(), e.old.as_str(), e.new.as_deref())).collect();
    assert_eq!(
        edits,
        [
            ("src/job.ts", "const once = false;\nschedule();", Some("const once = true;\nschedule(once);")),
            ("src/cron.ts", "enable(a); enable(b);", Some("enable(a);")),
            ("units/cron-b.timer", "OnCalendar=hourly", Some("OnCalendar=daily")),
            ("units/cron.service", "Restart=always", Some("Restart=on-failure")),
        ],
        "hashline (old lines from details.diff), replace, patch, apply_patch"
    );
    assert!(s.turns.iter().any(|t| t.files.iter().any(|f| f.path == "NOTES.md" && f.action == FileAction::Write)));
    let test = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("npm test")).expect("npm test");
    assert_eq!(test.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(1)));
    assert_eq!(test.text, "1 failing: job runs once");
}

#[test]
fn sub_agent_passes_follow_the_switch() {
    let all = sessions(&env());
    let pass = session(&all, "g-01-p1");
    assert_eq!((pass.kind.as_deref(), pass.parent.as_deref(), pass.agent.as_deref()), (Some("subagent"), Some("g-01"), Some("explore")));
    let without = sessions(&env().set("DEJA_INCLUDE_SUBAGENTS", "0"));
    assert!(!without.iter().any(|s| s.id == "g-01-p1"));
    assert!(without.iter().any(|s| s.id == "g-01"));
}

#[test]
fn summaries_and_reasoning() {
    let all = sessions(&env());
    let s = session(&all, "g-03");
    let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::Summary, Role::Summary, Role::User], "no reasoning by default");
}

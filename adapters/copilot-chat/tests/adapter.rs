//! Every test of deja-adapter-copilot-chat, in one test binary: the conformance kit
//! (snapshots of every source in `tests/fixtures/home/`, arbitrary bytes, mutated
//! fixtures, store overrides), then the rules that matter most for Copilot Chat's stores.

use std::path::PathBuf;

use deja_adapter_copilot_chat::CopilotChatFormat;
use deja_core::testkit::session;
use deja_core::{FileAction, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    CopilotChatFormat,
    wires "XDG_CONFIG_HOME" => ".config"
);

fn home() -> PathBuf {
    deja_core::fixture_home!()
}

fn parse_all(opts: &ParseOptions) -> Vec<Session> {
    deja_core::testkit::read_readable(&CopilotChatFormat, &StoreEnv::with_home(home()), opts)
}

fn said(s: &Session) -> Vec<(Role, &str)> {
    s.turns.iter().filter(|t| matches!(t.role, Role::User | Role::Assistant)).map(|t| (t.role, t.text.as_str())).collect()
}

#[test]
fn mutation_log_replays_into_prompts_and_answers() {
    let all = parse_all(&ParseOptions::default());
    let s = session(&all, "3b7e-login");
    assert_eq!(s.harness, "copilot-chat");
    assert_eq!(s.title.as_deref(), Some("Fix login 401"), "customTitle set later in the log");
    assert_eq!(s.project.as_deref(), Some("/home/u/billing svc"), "workspace.json folder, escapes decoded");
    assert_eq!(
        said(s),
        [
            (Role::User, "why does login return 401?"),
            (Role::Assistant, "The token expired; refresh it before the call."),
            (Role::User, "and the refresh token?"),
            (Role::Assistant, "Rotate it on every refresh."),
        ],
        "thinking is not speech; the truncated draft is gone"
    );
    assert!(!all.iter().any(|x| x.turns.iter().any(|t| t.text.contains("stale"))), "the flat .json beside a .jsonl is not read");
    assert!(!all.iter().any(|x| x.turns.iter().any(|t| t.text.contains("someone"))), "inputState is never read");
    let with = parse_all(&ParseOptions { include_reasoning: true });
    assert!(session(&with, "3b7e-login").turns.iter().any(|t| t.role == Role::Reasoning));
}

#[test]
fn agent_state_carries_commands_files_and_edits() {
    let all = parse_all(&ParseOptions::default());
    let s = session(&all, "9d2c-agent");
    assert_eq!(s.title.as_deref(), Some("Add retries to the invoice fetch"), "version 2: computedTitle");
    let users: Vec<&str> = s.turns.iter().filter(|t| t.role == Role::User).map(|t| t.text.as_str()).collect();
    assert_eq!(users, ["add retries to fetchInvoice"], "system-initiated and confirmation prompts are not speech");
    let term = s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "run_in_terminal")).expect("terminal call");
    assert_eq!(term.tool.as_ref().and_then(|t| t.command.as_deref()), Some("npm test -- --runInBand"), "userEdited wins over original");
    assert_eq!(term.tool.as_ref().and_then(|t| t.exit.clone()), None, "no exit codes in this store");
    assert!(s.turns.iter().any(|t| t.files.iter().any(|f| f.path.ends_with("http.ts") && f.action == FileAction::Read)));
    let replaced = s.turns.iter().filter_map(|t| t.edit.as_ref()).find(|e| e.old == "fetchInvoice(id)").expect("the replaced span");
    assert_eq!(replaced.path, "/home/u/billing svc/src/invoice.ts");
    assert!(!s.turns.iter().any(|t| t.files.iter().any(|f| f.path.ends_with("/x.ts"))), "a call whose result says ERROR is skipped");
    assert!(s.turns.iter().any(|t| t.edit.as_ref().is_some_and(|e| e.old.contains("const tries = 1"))), "apply_patch");
    assert!(!s.turns.iter().any(|t| ["Working", "rate limited", "model switched", "chat restored"].iter().any(|c| t.text.contains(c))));
}

#[test]
fn torn_last_line_keeps_the_state_and_a_bad_middle_line_drops_the_session() {
    let all = parse_all(&ParseOptions::default());
    assert_eq!(session(&all, "e5f6-torn").title.as_deref(), Some("Ledger lock"));
    assert!(!all.iter().any(|s| s.id == "f7a8-badmid"));
}

#[test]
fn transcripts_fold_calls_and_drop_failed_edits() {
    let all = parse_all(&ParseOptions::default());
    let s = session(&all, "7c9e-tests");
    assert_eq!(s.project.as_deref(), Some("/home/u/mono"), "a .code-workspace names its directory");
    assert_eq!(s.turns[0].text, "make the API tests pass\nthey fail on CI only", "after a BOM");
    let npm = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("npm test -w api")).expect("npm call");
    assert!(!npm.tool.as_ref().unwrap().is_error);
    let edits: Vec<&str> = s.turns.iter().filter_map(|t| t.edit.as_ref()).map(|e| e.old.as_str()).collect();
    assert!(edits.contains(&"tz: undefined") && !edits.contains(&"TZ = undefined"), "only the edit that applied: {edits:?}");
    let agent = session(&all, "8d0f-agent-run");
    assert!(!agent.turns.iter().any(|t| t.role == Role::User), "an agent run without a prompt is still indexed");
    assert_eq!(agent.project.as_deref(), Some("/home/u/site/src/pages"), "no workspace.json: the paths its calls touched");
}

#[test]
fn every_product_and_profile_is_read_and_nothing_else() {
    let all = parse_all(&ParseOptions::default());
    for id in ["0a1b-scratch", "1c2d-profile", "2d3e-insiders", "3e4f-codium"] {
        session(&all, id);
    }
    assert_eq!(session(&all, "0a1b-scratch").project.as_deref(), Some("/home/u/scratch"), "empty-window workingDirectory");
    let sources = CopilotChatFormat.discover(&StoreEnv::with_home(home())).sources;
    assert!(!sources.iter().any(|s| s.path.to_string_lossy().contains("Cursor")), "Cursor ships no Copilot Chat");
    assert!(!sources.iter().any(|s| s.path.to_string_lossy().contains(".claude")), "a bare `transcripts` folder is not Copilot's");
}

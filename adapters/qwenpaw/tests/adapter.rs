//! Every test of deja-adapter-qwenpaw, in one test binary: the conformance kit, then the
//! rules that matter most for QwenPaw's memory documents.

use deja_adapter_qwenpaw::QwenPawFormat;
use deja_core::testkit::materialize_home;
use deja_core::testkit::session;
use deja_core::{FileAction, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(QwenPawFormat);

fn sessions(opts: &ParseOptions) -> Vec<Session> {
    // Materialized, so `history.db.sql` becomes the workspace's live-WAL `history.db`.
    let tmp = tempfile::tempdir().expect("tempdir");
    let _writers = materialize_home(&deja_core::fixture_home!(), tmp.path()).expect("fixture home");
    deja_core::testkit::read_readable(&QwenPawFormat, &StoreEnv::with_home(tmp.path()), opts)
}

#[test]
fn memory_pairs_tools_and_system_results() {
    let all = sessions(&ParseOptions::default());
    let s = session(&all, "default:default_1775124000000");
    let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
    assert_eq!(roles, vec![Role::User, Role::Assistant, Role::ToolCall, Role::ToolCall, Role::Assistant, Role::ToolOutput]);
    assert!(!s.turns.iter().any(|t| t.text.contains("SYSTEM PROMPT")));
    assert_eq!(s.turns[2].files.first().map(|f| (f.path.as_str(), f.action)), Some(("/home/u/todo.md", FileAction::Read)));
    assert!(s.turns[2].text.contains("- [ ] c"), "the system-role result folds into its call");
    assert_eq!(s.turns[3].tool.as_ref().and_then(|t| t.command.as_deref()), Some("grep -c '\\[ \\]' /home/u/todo.md"));
    assert_eq!(s.turns[3].text, "3");
    assert!(s.project.is_none() && s.title.is_none());
    let with = sessions(&ParseOptions { include_reasoning: true });
    assert!(session(&with, "default:default_1775124000000").turns.iter().any(|t| t.role == Role::Reasoning));
}

#[test]
fn channels_legacy_root_and_empty_documents() {
    let all = sessions(&ParseOptions::default());
    let c = session(&all, "default:console:user@example.com_main--1");
    assert_eq!(c.turns[2].edit.as_ref().and_then(|e| e.new.as_deref()), Some("18:00 water the plants"));
    assert_eq!(session(&all, "legacy:main_main").turns[0].text, "plain string content from an older CoPaw");
    assert!(!all.iter().any(|s| s.id.ends_with("default_empty") || s.id.ends_with("no_memory") || s.id.ends_with("torn")));
}

/// QwenPaw 2.2.2.post1 (AgentScope 2) writes `agent.state.context`: bare messages, calls
/// and their results as blocks of one assistant message, `created_at` times, and the
/// first-run bootstrap guidance prepended to the first prompt.
#[test]
fn release_2_state_context_steps() {
    let all = sessions(&ParseOptions::default());
    let s = session(&all, "default:console:bob_console--bob-release-2.2.2.post1");
    // The first three turns come from history.db (see the next test); the context follows.
    let t = &s.turns[3..];
    let roles: Vec<Role> = t.iter().map(|t| t.role).collect();
    assert_eq!(
        roles,
        vec![Role::User, Role::ToolCall, Role::ToolCall, Role::Assistant, Role::User, Role::ToolCall, Role::ToolCall, Role::Assistant]
    );
    assert_eq!(t[0].text, "Why does the nightly backup job skip the photos folder?", "bootstrap guidance is cut off");
    let exit = |i: usize| t[i].tool.as_ref().and_then(|t| t.exit.clone());
    assert_eq!(exit(1), Some(deja_core::ExitStatus::Code(0)));
    assert_eq!(exit(5), Some(deja_core::ExitStatus::Code(1)));
    assert!(t[6].tool.as_ref().is_some_and(|t| t.is_error), "state error marks the edit failed");
    assert_eq!(t[6].edit.as_ref().map(|e| e.old.as_str()), Some("keep=3"));
    assert!(t[3].time > t[2].time, "the answer keeps its own block time");
    assert!(!t.iter().any(|t| t.role == Role::Reasoning));
    let with = sessions(&ParseOptions { include_reasoning: true });
    let r = session(&with, "default:console:bob_console--bob-release-2.2.2.post1");
    assert!(r.turns.iter().any(|t| t.role == Role::Reasoning && t.text.contains("exclude flag")));
}

/// Turns `scroll` evicted from `state.context` are read back from the workspace's
/// `history.db` rows of the same session, before the context; rows still in the context,
/// other sessions and scroll's own recall messages are not.
#[test]
fn release_2_evicted_turns_from_history_db() {
    let all = sessions(&ParseOptions::default());
    let s = session(&all, "default:console:bob_console--bob-release-2.2.2.post1");
    assert_eq!(s.turns.len(), 11, "{:#?}", s.turns.iter().map(|t| (t.role, &t.text)).collect::<Vec<_>>());
    assert_eq!(s.turns[0].text, "List the folders the backup covers");
    assert_eq!(s.turns[1].tool.as_ref().and_then(|t| t.command.as_deref()), Some("cat backup.list"));
    assert_eq!(s.turns[1].text, "docs\ncode", "the evicted result folds into its call");
    assert_eq!(s.turns[2].text, "It covers docs and code.");
    assert_eq!(s.turns.iter().filter(|t| t.text.contains("photos folder")).count(), 1, "a row also in the context is read once");
    assert!(!s.turns.iter().any(|t| t.text.contains("scroll recall") || t.text.contains("different session")));
}

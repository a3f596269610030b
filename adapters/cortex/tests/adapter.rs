//! Every test of deja-adapter-cortex, in one test binary: the conformance kit, then the
//! rules that matter most for Cortex Code's two generations.

use deja_adapter_cortex::CortexFormat;
use deja_core::testkit::session;
use deja_core::{FileAction, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(CortexFormat);

fn fixture_sessions() -> Vec<Session> {
    let home = deja_core::fixture_home!();
    let mut out = Vec::new();
    let sources = CortexFormat.discover(&StoreEnv::with_home(&home)).sources;
    assert!(!sources.iter().any(|s| s.path.to_string_lossy().contains(".back.")), "backups are not sessions");
    for src in sources {
        CortexFormat.parse(&src, &ParseOptions::default(), &mut out).expect("a fixture parses");
    }
    out
}

#[test]
fn split_history_is_read_from_the_companion() {
    let all = fixture_sessions();
    let s = session(&all, "1c2d3e4f-0000-4000-8000-000000000009");
    assert_eq!((s.title.as_deref(), s.project.as_deref()), (Some("Slow dashboard query"), Some("/src/analytics")));
    assert_eq!(s.turns[0].role, Role::User);
    assert_eq!(s.turns[0].text, "why is the revenue query slow?", "the internal reminder block is dropped");
    let sql = s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "snowflake_sql_execute")).expect("sql");
    assert!(sql.tool.as_ref().and_then(|t| t.command.as_deref()).is_some_and(|c| c.starts_with("EXPLAIN")));
    assert_eq!(sql.text, "TableScan 4.1B rows");
    let dbt = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("dbt run --select revenue")).expect("dbt");
    assert!(dbt.tool.as_ref().is_some_and(|t| t.is_error), "status error");
    let edit = s.turns.iter().find(|t| t.edit.is_some()).expect("edit");
    assert_eq!(edit.files[0].action, FileAction::Edit);
    assert_eq!(edit.files[0].path, "/src/analytics/models/revenue.sql");
    assert!(!s.turns.iter().any(|t| t.text.contains("bookkeeping")), "system messages are skipped");
    assert!(s.source.parts.iter().any(|p| p.to_string_lossy().ends_with(".history.jsonl")));
}

#[test]
fn embedded_history_auto_title_and_reminders() {
    let all = fixture_sessions();
    let s = session(&all, "5e6f7a8b-0000-4000-8000-000000000010");
    assert_eq!(s.title, None, "the auto title is not a title");
    assert_eq!(s.project.as_deref(), Some("/src/warehouse"));
    assert_eq!(s.turns[0].text, "list the stale tables", "an all-reminder first message yields nothing");
    assert_eq!(s.turns[1].text, "Three tables were not refreshed this week.");
    assert!(!all.iter().any(|s| s.id.starts_with("0a0a")), "no session_id, no session");
}

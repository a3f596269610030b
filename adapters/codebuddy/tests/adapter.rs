//! Every test of deja-adapter-codebuddy, in one test binary: the conformance kit, then the
//! rules that matter most for CodeBuddy's Responses-style items.

use deja_adapter_codebuddy::CodeBuddyFormat;
use deja_core::testkit::session as by_id;
use deja_core::{ExitStatus, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    CodeBuddyFormat,
    switch "DEJA_INCLUDE_SUBAGENTS",
    wires "CODEBUDDY_CONFIG_DIR" => ".codebuddy"
);

fn home() -> std::path::PathBuf {
    deja_core::fixture_home!()
}

fn sessions_with(opts: &ParseOptions) -> Vec<Session> {
    deja_core::testkit::read_all(&CodeBuddyFormat, &StoreEnv::with_home(home()), opts)
}

#[test]
fn prompts_answers_and_work_from_responses_items() {
    let sessions = sessions_with(&ParseOptions::default());
    let s = by_id(&sessions, "c0de0001-0000-4000-8000-000000000001");
    assert_eq!(s.project.as_deref(), Some("/repo"));
    assert_eq!(s.title.as_deref(), Some("Add retries"), "ai-title beats topic");
    let users: Vec<&str> = s.turns.iter().filter(|t| t.role == Role::User).map(|t| t.text.as_str()).collect();
    assert_eq!(
        users,
        ["add retries to the fetch client", "the test expects 3 attempts"],
        "skipRun hook output and the reminder item are no prompt"
    );
    let test = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("go test ./...")).expect("go test");
    assert_eq!(test.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(1)));
    assert!(test.text.ends_with("FAIL"), "the Exit Code footer is cut: {:?}", test.text);
    assert!(s.turns.iter().any(|t| t.edit.as_ref().is_some_and(|e| e.old == "return get(url)")));
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning is not indexed by default");
    let with = sessions_with(&ParseOptions { include_reasoning: true });
    assert!(by_id(&with, &s.id).turns.iter().any(|t| t.role == Role::Reasoning && t.text.contains("no retry loop")));
}

#[test]
fn compaction_titles_signals_subagents_and_workbuddy() {
    let sessions = sessions_with(&ParseOptions::default());
    let s = by_id(&sessions, "c0de0002-0000-4000-8000-000000000002");
    assert_eq!(s.title.as_deref(), Some("Slow build"), "custom-title beats a newer ai-title");
    assert!(s.turns.iter().any(|t| t.role == Role::Summary && t.text.contains("linker ran twice")));
    assert!(!s
        .turns
        .iter()
        .any(|t| t.role == Role::User && (t.text.contains("Summarize") || t.text.contains("continued") || t.text.contains("/model"))));
    let make = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("make deps")).expect("make deps");
    assert_eq!(make.tool.as_ref().and_then(|t| t.exit.clone()), None, "a signal leaves no code");
    let sub = sessions.iter().find(|s| s.kind.as_deref() == Some("subagent")).expect("sub-agent");
    assert_eq!(sub.parent.as_deref(), Some("c0de0001-0000-4000-8000-000000000001"));
    let notes = by_id(&sessions, "w0rk0001-0000-4000-8000-000000000003");
    assert_eq!(notes.harness, "codebuddy", "WorkBuddy sessions keep the harness id");
    assert!(by_id(&sessions, "w0rk0002-0000-4000-8000-000000000004").turns.iter().any(|t| !t.files.is_empty()));
}

#[test]
fn the_synthetic_writer_round_trips_the_exit_status() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let sample = deja_core::testkit::sample_session();
    CodeBuddyFormat.write_synthetic(tmp.path(), &sample).expect("write");
    let out = deja_core::testkit::read_all(&CodeBuddyFormat, &StoreEnv::with_home(tmp.path()), &ParseOptions::default());
    let s = out.iter().find(|s| s.id == sample.id).expect("the sample session");
    assert_eq!(s.project.as_deref(), Some(sample.project.as_str()));
    let shell = s.turns.iter().find(|t| t.role == Role::ToolCall).expect("the shell call");
    assert_eq!(shell.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(101)));
    assert!(!shell.text.contains("Exit Code"), "the footer is cut");
}

#[test]
fn the_mcp_entry_goes_into_the_first_mcp_file_that_exists() {
    let wiring = CodeBuddyFormat.wiring().expect("codebuddy has wiring");
    let tmp = tempfile::tempdir().expect("tempdir");
    let env = StoreEnv::with_home(tmp.path());
    let cx = deja_core::wire::WireContext { env: &env, exe: "/bin/deja".into() };
    let mcp = |cx: &deja_core::wire::WireContext| wiring.plain(cx)[0].file().to_path_buf();
    assert_eq!(mcp(&cx), tmp.path().join(".codebuddy/.mcp.json"), "none exists: a new <config>/.mcp.json");
    std::fs::write(tmp.path().join(".codebuddy.json"), "{}").expect("write");
    assert_eq!(mcp(&cx), tmp.path().join(".codebuddy.json"));
    std::fs::create_dir_all(tmp.path().join(".codebuddy")).expect("mkdir");
    std::fs::write(tmp.path().join(".codebuddy/mcp.json"), "{}").expect("write");
    assert_eq!(mcp(&cx), tmp.path().join(".codebuddy/mcp.json"));
    std::fs::write(tmp.path().join(".codebuddy/.mcp.json"), "{}").expect("write");
    assert_eq!(mcp(&cx), tmp.path().join(".codebuddy/.mcp.json"));
}

#[test]
fn hook_tool_and_hook_tool_after_share_post_tool_use_without_adopting_each_other() {
    let wiring = CodeBuddyFormat.wiring().expect("codebuddy has wiring");
    let env = StoreEnv::with_home("/h");
    let cx = deja_core::wire::WireContext { env: &env, exe: "/bin/deja".into() };
    let post: Vec<_> = wiring
        .auto(&cx)
        .into_iter()
        .filter_map(|e| match e {
            deja_core::wire::Edit::JsonArrayItem { path, marker, value, .. } if path == ["hooks", "PostToolUse"] => Some((marker, value)),
            _ => None,
        })
        .collect();
    assert_eq!(post.len(), 2);
    for (marker, _) in &post {
        let adopted = post.iter().filter(|(_, v)| deja_core::wire::engine::matches_marker(v, marker)).count();
        assert_eq!(adopted, 1, "{marker:?} must recognise exactly its own entry");
    }
}

#[test]
fn a_title_appended_with_no_turn_after_it_renames_the_session() {
    use deja_core::tail::{continue_meta, whole_meta};
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s1.jsonl");
    // What the index holds: the session's metadata, who gave its title, where a tail starts.
    let mut held: Option<(deja_core::model::SessionMeta, deja_core::TitleBy, deja_core::model::Resume)> = None;
    // Appends `line`, reads what came after the file as it was from the state the read
    // before left, and joins it as the indexer does: (id, title, turns the read made).
    let mut append_and_read = |line: &str| {
        let head = std::fs::read_to_string(&path).unwrap_or_default();
        std::fs::write(&path, format!("{head}{line}\n")).expect("write");
        let src = deja_core::SourceRef { resume: held.as_ref().map(|h| h.2.clone()), ..deja_core::SourceRef::file(&path).append_only() };
        let mut out: Vec<Session> = Vec::new();
        let stats = CodeBuddyFormat.parse(&src, &ParseOptions::default(), &mut out).expect("parse");
        let [s] = out.as_slice() else { panic!("one session: {out:?}") };
        let (meta, by) = match held.take() {
            Some((meta, by, _)) => continue_meta(&meta, by, s, 0, "s1"),
            None => (whole_meta(s, "s1"), s.title_by),
        };
        let resume = deja_core::model::Resume::after(&stats, s);
        let shown = (s.id.clone(), meta.title.clone(), s.turns.len());
        held = Some((meta, by, resume));
        shown
    };
    let prompt =
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"draft the update"}],"timestamp":1790000200000}"#;
    assert_eq!(append_and_read(prompt), ("s1".to_string(), None, 1));
    let renamed = append_and_read(r#"{"type":"custom-title","customTitle":"Weekly update","timestamp":1790000300000}"#);
    assert_eq!(renamed, ("s1".to_string(), Some("Weekly update".to_string()), 0));
    // A generated title after it does not replace that name, nor a topic after that.
    let generated = append_and_read(r#"{"type":"ai-title","title":"Update draft","timestamp":1790000400000}"#);
    assert_eq!(generated, ("s1".to_string(), Some("Weekly update".to_string()), 0));
    let topic = append_and_read(r#"{"type":"topic","topic":"Updates","timestamp":1790000500000}"#);
    assert_eq!(topic, ("s1".to_string(), Some("Weekly update".to_string()), 0));
}

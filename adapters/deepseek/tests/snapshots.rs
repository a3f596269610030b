//! One snapshot per fixture, plus plain asserts for the rules that matter most.

use crate::common::*;
use deja_core::read::decode_zstd_frames;
use deja_core::{ExitStatus, FileAction, ParseOptions, Role, Session};

macro_rules! record_snapshot {
    ($($test:ident => $file:literal),* $(,)?) => {$(
        #[test]
        fn $test() {
            insta::assert_json_snapshot!(stringify!($test), scrub(parse(&record($file))));
        }
    )*};
}

record_snapshot! {
    header_only => "header_only.jsonl",
    empty => "empty.jsonl",
    user_message => "user_message.jsonl",
    plugin_user_message => "plugin_user_message.jsonl",
    assistant_message => "assistant_message.jsonl",
    assistant_chunk => "assistant_chunk.jsonl",
    text_chunks => "text_chunks.jsonl",
    tool_call_chunks => "tool_call_chunks.jsonl",
    streamed_completed => "streamed_completed.jsonl",
    interrupted => "interrupted.jsonl",
    tool_result_v3 => "tool_result_v3.jsonl",
    tool_result_v4_error => "tool_result_v4_error.jsonl",
    bash_exit_code => "bash_exit_code.jsonl",
    files => "files.jsonl",
    session_title_twice => "session_title_twice.jsonl",
    skipped_events => "skipped_events.jsonl",
    torn_last_line => "torn_last_line.jsonl",
    garbage_line => "garbage_line.jsonl",
    bom => "bom.jsonl",
    v4_namespaced => "v4_namespaced.jsonl",
}

macro_rules! store_snapshot {
    ($($test:ident => $path:expr),* $(,)?) => {$(
        #[test]
        fn $test() {
            insta::assert_json_snapshot!(stringify!($test), scrub(parse(&store().join($path))));
        }
    )*};
}

store_snapshot! {
    store_pool_v0_zstd => format!("{POOL_DIR}/session.jsonl.zstd"),
    store_pool_v3_zstd => format!("{POOL_DIR}/session.v3.jsonl.zstd"),
    store_pool_v4_zstd => format!("{POOL_DIR}/session.v4.jsonl.zstd"),
    store_lab_interrupted_v0_zstd => format!("{LAB_DIR}/session.jsonl.zstd"),
    store_api_v5_raw_headerless => format!("{API_DIR}/session.v5.jsonl"),
}

fn one(sessions: Vec<Session>) -> Session {
    assert_eq!(sessions.len(), 1, "{sessions:#?}");
    sessions.into_iter().next().expect("one session")
}

fn texts(s: &Session, role: Role) -> Vec<&str> {
    s.turns.iter().filter(|t| t.role == role).map(|t| t.text.as_str()).collect()
}

#[test]
fn committed_zstd_fixtures_are_multi_frame_and_decode_to_their_sources() {
    let root = store();
    for f in ZSTD_FIXTURES {
        let raw = std::fs::read(root.join(f.dest)).expect("fixture");
        let frames = frames_of(f.source);
        assert!(frames.len() >= 3, "{} should be several frames", f.source);
        let (decoded, err) = decode_zstd_frames(&raw).expect("within the decode limit");
        let decoded = String::from_utf8(decoded).expect("utf8");
        let whole = if f.cut_last_frame { frames[..frames.len() - 1].concat() } else { frames.concat() };
        assert!(decoded.starts_with(&whole), "{} decodes to its source", f.dest);
        assert_eq!(err.is_some(), f.cut_last_frame, "{}", f.dest);
        // A frame per flush: the magic appears once per frame.
        let magics = raw.windows(4).filter(|w| *w == [0x28, 0xB5, 0x2F, 0xFD]).count();
        assert!(magics >= frames.len(), "{}: {magics} frames", f.dest);
    }
}

#[test]
fn every_generation_of_one_session_reads_the_same() {
    let root = store();
    let read = |name: &str| one(parse(&root.join(POOL_DIR).join(name)));
    let v0 = read("session.jsonl.zstd");
    let v3 = read("session.v3.jsonl.zstd");
    let v4 = read("session.v4.jsonl.zstd");
    assert_eq!(v0.id, "1234abcd-0000-4000-8000-000000000000");
    assert_eq!((v0.source.generation, v3.source.generation, v4.source.generation), (Some(0), Some(3), Some(4)));
    for other in [&v3, &v4] {
        assert_eq!(v0.turns, other.turns);
        assert_eq!((&v0.id, &v0.title, &v0.project), (&other.id, &other.title, &other.project));
    }
    assert_eq!(v0.title.as_deref(), Some("PgBouncer pool size"));
    assert_eq!(v0.project.as_deref(), Some("/src/pool"));
    assert_eq!(texts(&v0, Role::User), ["what pool size do we run?", "raise it to 60 and reload"]);
    assert_eq!(
        texts(&v0, Role::Assistant),
        [
            "Checking the pool config.",
            "We run default_pool_size = 40 in conf/pgbouncer.ini.",
            "Raised default_pool_size to 60 and reloaded PgBouncer."
        ]
    );
    assert!(v0.turns.iter().all(|t| !t.partial && !t.text.contains("runtime context") && !t.text.contains("[exit code")));
    let calls: Vec<_> = v0.turns.iter().filter(|t| t.role == Role::ToolCall).collect();
    assert_eq!(calls.len(), 3, "one call turn per call id");
    let edit = calls[1].edit.as_ref().expect("edit span");
    assert_eq!((edit.path.as_str(), edit.old.as_str()), ("/src/pool/conf/pgbouncer.ini", "default_pool_size = 40"));
    assert_eq!(calls[2].tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(0)));
}

#[test]
fn interrupted_zstd_run_keeps_the_streamed_answer_once_and_loses_only_the_cut_frame() {
    let s = one(parse(&store().join(LAB_DIR).join("session.jsonl.zstd")));
    assert_eq!(texts(&s, Role::User), ["why does pgbouncer refuse connections after the deploy?"]);
    let answers: Vec<_> = s.turns.iter().filter(|t| t.role == Role::Assistant).collect();
    assert_eq!(answers.len(), 1);
    assert!(answers[0].partial);
    assert_eq!(
        answers[0].text,
        "The deploy raised max_client_conn but the pool stayed at 20, so new clients queue until query_wait_timeout"
    );
    assert_eq!(answers[0].time.map(|t| t.0), Some(1787400000500));
    assert_eq!(s.title.as_deref(), Some("why does pgbouncer refuse connections after th"));
    assert!(s.turns.iter().all(|t| !t.text.contains("skills") && !t.text.contains("LOST")));
}

#[test]
fn interrupted_run_from_the_page_is_one_partial_answer() {
    let s = one(parse(&record("interrupted.jsonl")));
    let answers: Vec<_> = s.turns.iter().filter(|t| t.role == Role::Assistant).collect();
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0].text, "partial answer that stopped");
    assert_eq!(answers[0].time.map(|t| t.0), Some(1787600001010));
    assert!(answers[0].partial);
    assert!(s.turns.iter().all(|t| t.role != Role::ToolCall), "tool-call-chunks are not a call");
}

#[test]
fn completed_stream_is_indexed_once_and_not_partial() {
    let s = one(parse(&record("streamed_completed.jsonl")));
    assert_eq!(texts(&s, Role::Assistant), ["The upstream closed the connection."]);
    assert!(s.turns.iter().all(|t| !t.partial));
}

#[test]
fn reasoning_only_with_the_option() {
    let plain = one(parse(&record("assistant_message.jsonl")));
    assert!(plain.turns.iter().all(|t| t.role != Role::Reasoning && !t.text.contains("SECRET-REASONING")));
    assert_eq!(
        texts(&plain, Role::Assistant),
        ["Redis, configured in config/cache.yml.\nTTL is 300 seconds.", "Plain string content is an answer too."]
    );
    let opts = ParseOptions { include_reasoning: true };
    let (with, _) = parse_path(&record("assistant_message.jsonl"), &opts);
    let with = one(with);
    assert_eq!(texts(&with, Role::Reasoning), ["SECRET-REASONING grep for redis in config"]);
    assert_eq!(with.turns.iter().position(|t| t.role == Role::Reasoning), Some(1), "reasoning keeps its place before the answer");
    let (ns, _) = parse_path(&record("v4_namespaced.jsonl"), &opts);
    assert_eq!(texts(&one(ns), Role::Reasoning), ["SECRET-REASONING"]);
    for name in ["assistant_chunk.jsonl", "v4_namespaced.jsonl"] {
        assert!(one(parse(&record(name))).turns.iter().all(|t| !t.text.contains("SECRET-REASONING")), "{name}");
    }
}

#[test]
fn only_source_kind_user_is_speech() {
    let s = one(parse(&record("plugin_user_message.jsonl")));
    assert_eq!(texts(&s, Role::User), ["why is checkout slow?"]);
    let s = one(parse(&record("skipped_events.jsonl")));
    assert_eq!(texts(&s, Role::User), ["is staging healthy?"]);
    assert!(s.turns.iter().all(|t| !t.text.contains("SYSTEM-PROMPT")));
    assert_eq!(s.turns.len(), 2);
}

#[test]
fn last_title_wins_even_after_turn_end() {
    let s = one(parse(&record("session_title_twice.jsonl")));
    assert_eq!(s.title.as_deref(), Some("Staging deploy of the API"));
    assert_eq!(s.updated.map(|t| t.0), Some(1787600001500));
}

#[test]
fn exit_status_comes_from_the_shell_result_last_line() {
    let s = one(parse(&record("bash_exit_code.jsonl")));
    let calls: Vec<_> = s.turns.iter().filter(|t| t.role == Role::ToolCall).collect();
    assert_eq!(calls.len(), 4);
    let tool = |i: usize| calls[i].tool.clone().expect("tool");
    assert_eq!(tool(0).command.as_deref(), Some("cargo build --release"));
    assert_eq!(tool(0).exit, Some(ExitStatus::Code(2)));
    assert!(tool(0).is_error);
    assert!(!calls[0].text.contains("[exit code"));
    assert!(calls[0].text.ends_with("could not compile `shop`"));
    assert_eq!(tool(1).exit, Some(ExitStatus::Signal("SIGTERM".into())));
    assert_eq!(tool(2).exit, None, "marker not on the last line");
    assert!(calls[2].text.starts_with("[exit code: 7]"));
    assert_eq!(tool(3).exit, None, "only bash/pwsh results carry exit markers");
}

#[test]
fn v4_error_result_folds_into_the_edit_call() {
    let s = one(parse(&record("tool_result_v4_error.jsonl")));
    let calls: Vec<_> = s.turns.iter().filter(|t| t.role == Role::ToolCall).collect();
    assert_eq!(calls.len(), 1, "assistant/message block and tool/call are one call");
    assert_eq!(calls[0].text, "edit refused: file changed on disk");
    assert!(calls[0].tool.as_ref().is_some_and(|t| t.is_error && t.name == "edit"));
    assert_eq!(calls[0].files[0].action, FileAction::Edit);
    let edit = calls[0].edit.as_ref().expect("edit");
    assert_eq!((edit.old.as_str(), edit.new.as_deref()), ("timeout: 5s", Some("timeout: 15s")));
}

#[test]
fn tool_call_before_or_after_its_message_block_is_one_turn() {
    let s = one(parse(&record("tool_call_chunks.jsonl")));
    let calls: Vec<_> = s.turns.iter().filter(|t| t.role == Role::ToolCall).collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].text, "Tests: 42 passed, 42 total");
    assert_eq!(calls[1].text, "no problems");
    assert!(s.turns.iter().all(|t| t.role != Role::ToolOutput));
}

#[test]
fn v3_results_pair_and_orphans_stay_tool_output() {
    let s = one(parse(&record("tool_result_v3.jsonl")));
    let call = s.turns.iter().find(|t| t.role == Role::ToolCall).expect("call");
    assert_eq!(call.text, "up     20260801120000  Create orders\ndown   20260815090000  Add refund column");
    assert_eq!(call.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(0)));
    let orphan = s.turns.iter().find(|t| t.role == Role::ToolOutput).expect("orphan");
    assert_eq!(orphan.text, "result whose call was never logged");
    assert!(orphan.tool.as_ref().is_some_and(|t| t.is_error));
}

#[test]
fn files_and_edits_from_read_edit_write_and_str_replace_editor() {
    let s = one(parse(&record("files.jsonl")));
    let files: Vec<_> = s.turns.iter().flat_map(|t| t.files.iter().map(|f| (f.path.as_str(), f.action))).collect();
    assert_eq!(
        files,
        [
            ("/src/shop/src/handler.ts", FileAction::Read),
            ("/src/shop/src/handler.ts", FileAction::Edit),
            ("/src/shop/src/index.ts", FileAction::Read),
            ("/src/shop/docs/CHANGELOG.md", FileAction::Write),
            ("/src/shop/src/checkout.ts", FileAction::Write),
        ]
    );
    let edits: Vec<_> = s.turns.iter().filter_map(|t| t.edit.as_ref()).collect();
    assert_eq!(edits.len(), 1);
    assert_eq!((edits[0].old.as_str(), edits[0].new.as_deref()), ("function handle(", Some("function handleCheckout(")));
}

#[test]
fn torn_garbage_and_bom_are_tolerated() {
    let (s, stats) = parse_path(&record("torn_last_line.jsonl"), &ParseOptions::default());
    let s = one(s);
    assert_eq!(stats.skipped, 1);
    assert_eq!(texts(&s, Role::Assistant), ["There are two open incidents.", "torn"]);
    let (s, stats) = parse_path(&record("garbage_line.jsonl"), &ParseOptions::default());
    assert_eq!(stats.skipped, 2);
    assert_eq!(texts(&one(s), Role::Assistant), ["The cron job lost its credentials."]);
    let s = one(parse(&record("bom.jsonl")));
    assert_eq!(s.id, "0a0a0a0a-0000-4000-8000-000000000018", "the BOM line is still the header");
}

#[test]
fn headerless_generation_takes_id_and_project_from_the_store_path() {
    let s = one(parse(&store().join(API_DIR).join("session.v5.jsonl")));
    assert_eq!(s.id, "9abc0123-0000-4000-8000-000000000000");
    assert_eq!(s.source.generation, Some(5));
    assert_eq!(s.project.as_deref(), Some("nonexistent/api"));
    let call = s.turns.iter().find(|t| t.role == Role::ToolCall).expect("call");
    assert_eq!(call.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(1)));
    assert_eq!(call.tool.as_ref().and_then(|t| t.command.as_deref()), Some("go test ./api/..."));
}

#[test]
fn empty_and_header_only_files_emit_nothing() {
    assert!(parse(&record("empty.jsonl")).is_empty());
    assert!(parse(&record("header_only.jsonl")).is_empty());
}

#[test]
fn a_delegated_agent_log_is_marked_as_a_subagent() {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("session.v4.jsonl");
    let log = concat!(
        r#"{"type":"session","version":4,"id":"session-d1","createdAt":1787600000000,"cwd":"/src/shop","delegationDepth":1}"#,
        "\n",
        r#"{"type":"user/message","seq":1,"time":1787600000100,"data":{"content":"scan the repo for TODOs","source":{"kind":"user"}}}"#,
        "\n",
    );
    std::fs::write(&path, log).expect("write");
    let s = one(parse(&path));
    assert_eq!((s.id.as_str(), s.kind.as_deref(), s.source.generation), ("d1", Some("subagent"), Some(4)));
}

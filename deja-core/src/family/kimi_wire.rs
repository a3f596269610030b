//! The Kimi Code wire protocol: one append-only `wire.jsonl` per agent of a session
//! (`<sessions>/<workDirKey>/<sessionId>/agents/main/wire.jsonl`), with the session's
//! `state.json` three levels up. Kimi Code writes it; the Kimi desktop app's local agent
//! embeds the same kernel and writes the same files in its own data directory. The dialect
//! carries the adapter id and how far above `wire.jsonl` the session directory sits.
//!
//! Every line has a `type`; most carry `time` (epoch ms). Streamed answers never arrive as
//! whole messages: they are rebuilt from `step.begin → content.part* → step.end`.
//!
//! | `type` / `event.type` | Turn | rule |
//! | --- | --- | --- |
//! | `metadata` | — | `created_at` (ms) widens the session |
//! | `context.append_message`, `message.role` `user` | `User` | `content` string or `text` parts joined by newlines, trimmed; flushes the pending stream |
//! | `context.append_message`, `message.role` `assistant` | `Assistant` | older protocols; flushes the pending stream first |
//! | `context.append_message`, other roles | skipped | harness-authored |
//! | loop event `step.begin` / `step.end` | — / `Assistant` | flush the pending stream (one message, trimmed) |
//! | loop event `content.part`, `part.type` `text` | (buffer) | appended to the pending stream; its time is the first part's |
//! | loop event `content.part`, `part.type` `think` | `Reasoning` | only with `include_reasoning`, buffered apart from the text |
//! | loop event `tool.call` (`toolCallId`, `name`, `args`) | `ToolCall` | flushes first; work signals from [`KIMI_TOOLS`] with `args.path` |
//! | loop event `tool.result` (`toolCallId`, `result.output`) | folded into its call, else `ToolOutput` | trimmed; `isError` (on the result or the event) kept as `is_error` |
//! | `llm.request` and other loop events; `config.update` (the system prompt), `turn.prompt`, `usage.record`, others | skipped | times still widen the session |
//! | end of the read | `Assistant`, `partial` | a stream with no `step.end` (an interrupted answer, or a read cut mid-step); the next tail reads it again from its first part (`ParseStats::reopen`), so a stream closed later is one turn, as in a whole read |
//! | malformed or torn line | skipped | counted in the parse stats |
//!
//! `state.json` ([`read_state`]): `title`, `workDir` (the project, kept whole), and
//! `createdAt`/`updatedAt`. A tail with no turns still carries the title (a rename).

use std::path::Path;

use serde_json::Value;

use crate::builder::SessionBuilder;
use crate::family::claude_jsonl::tool_call_turn_with;
use crate::format::{FormatError, ParseOptions, ParseStats, SessionSink};
use crate::model::{Reopen, Role, SourceRef, Timestamp, Turn};
use crate::read::{for_each_source_line, parse_json_document, read_source};
use crate::work::ToolMap;

/// Kimi Code's tool names: Claude Code's vocabulary, with `args.path` for the file.
pub const KIMI_TOOLS: ToolMap = ToolMap { shell: &["Bash"], read: &["Read", "ReadMediaFile"], edit: &["Edit"], write: &["Write"] };

/// What differs between the harnesses writing Kimi Code wire logs.
#[derive(Debug)]
pub struct KimiWireDialect {
    /// The adapter id sessions are tagged with.
    pub id: &'static str,
    pub tools: ToolMap,
}

/// What a session's `state.json` says (every field optional: the file may be missing).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct WireState {
    pub title: Option<String>,
    pub work_dir: Option<String>,
    pub created: Option<Timestamp>,
    pub updated: Option<Timestamp>,
}

/// Reads `state.json`; a missing or unreadable file gives an empty state.
pub fn read_state(path: &Path) -> WireState {
    let mut stats = ParseStats::default();
    let Ok(bytes) = read_source(path, &mut stats) else { return WireState::default() };
    let Ok(doc) = parse_json_document(&bytes.bytes, path) else { return WireState::default() };
    let text = |k: &str| doc.get(k).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string);
    WireState {
        title: text("title"),
        work_dir: text("workDir"),
        created: doc.get("createdAt").and_then(Timestamp::from_json),
        updated: doc.get("updatedAt").and_then(Timestamp::from_json),
    }
}

/// Parses one `wire.jsonl` as the session `id` (an incremental read keeps the id of the
/// earlier one), with what its `state.json` said.
pub fn parse(
    d: &KimiWireDialect,
    src: &SourceRef,
    id: &str,
    state: &WireState,
    opts: &ParseOptions,
    out: &mut dyn SessionSink,
) -> Result<ParseStats, FormatError> {
    let mut stats = ParseStats::default();
    let id = src.resume.as_ref().map_or(id, |r| r.session_id.as_str());
    let mut wire = Wire { d, opts, b: SessionBuilder::new(d.id, id, src.clone()), pending: None };
    for_each_source_line(src, &mut stats, &[], |offset, v| wire.line(offset, &v))?;
    // Every push flushes the stream first, so an open one is the last turn.
    stats.reopen = wire.pending.as_ref().map(|p| Reopen { offset: p.offset, seq: wire.b.next_seq() });
    wire.flush(true);
    let mut b = wire.b;
    b.touch(state.created);
    b.touch(state.updated);
    let s = b.session_mut();
    s.title = state.title.clone();
    s.project = state.work_dir.clone();
    // A tail with no turns still carries `state.json`'s title: a rename, if it changed.
    if let Some(s) = b.finish() {
        out.session(s);
    }
    Ok(stats)
}

/// A stream being rebuilt: its role (answer or reasoning), text and first part's time
/// and offset.
struct Pending {
    role: Role,
    text: String,
    time: Option<Timestamp>,
    offset: u64,
}

struct Wire<'a> {
    d: &'a KimiWireDialect,
    opts: &'a ParseOptions,
    b: SessionBuilder,
    pending: Option<Pending>,
}

impl Wire<'_> {
    fn line(&mut self, offset: u64, v: &Value) {
        let time = v.get("time").and_then(Timestamp::from_json);
        match v.get("type").and_then(Value::as_str) {
            Some("metadata") => self.b.touch(v.get("created_at").and_then(Timestamp::from_json)),
            Some("context.append_message") => self.message(v.get("message").unwrap_or(&Value::Null), time),
            Some("context.append_loop_event") => self.loop_event(offset, v.get("event").unwrap_or(&Value::Null), time),
            _ => self.b.touch(time),
        }
    }

    fn message(&mut self, m: &Value, time: Option<Timestamp>) {
        let role = match m.get("role").and_then(Value::as_str) {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            _ => return self.b.touch(time),
        };
        self.flush(false);
        self.b.push(Turn::new(role, content_text(m.get("content")).trim()).at(time));
    }

    fn loop_event(&mut self, offset: u64, e: &Value, time: Option<Timestamp>) {
        match e.get("type").and_then(Value::as_str) {
            Some("step.begin") | Some("step.end") => {
                self.b.touch(time);
                self.flush(false);
            }
            Some("content.part") => {
                let part = e.get("part").unwrap_or(&Value::Null);
                let text = part.get("text").and_then(Value::as_str).unwrap_or("");
                match part.get("type").and_then(Value::as_str) {
                    Some("text") => self.append(Role::Assistant, text, time, offset),
                    Some("think") if self.opts.include_reasoning => self.append(Role::Reasoning, text, time, offset),
                    _ => self.b.touch(time),
                }
            }
            Some("tool.call") => {
                self.flush(false);
                let name = e.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()).unwrap_or("tool");
                let turn = tool_call_turn_with(&self.d.tools, &["path"], name, e.get("args").unwrap_or(&Value::Null), time);
                self.b.push_call(e.get("toolCallId").and_then(Value::as_str), turn);
            }
            Some("tool.result") => {
                self.flush(false);
                let result = e.get("result").unwrap_or(&Value::Null);
                let output = match result.get("output") {
                    Some(Value::String(s)) => s.trim().to_string(),
                    Some(other) => content_text(Some(other)).trim().to_string(),
                    None => String::new(),
                };
                let is_error = [result, e].iter().any(|v| v.get("isError").and_then(Value::as_bool) == Some(true));
                let call_id = e.get("toolCallId").and_then(Value::as_str).unwrap_or("");
                if !self.b.complete_call(call_id, &output, is_error, None, time) {
                    self.b.push_orphan_result(call_id, &output, is_error, None, time);
                }
            }
            _ => self.b.touch(time),
        }
    }

    /// Adds a part to the pending stream; a part of the other kind (reasoning after
    /// text) closes the stream before it first, keeping the order.
    fn append(&mut self, role: Role, text: &str, time: Option<Timestamp>, offset: u64) {
        self.b.touch(time);
        if self.pending.as_ref().is_some_and(|p| p.role != role) {
            self.flush(false);
        }
        let p = self.pending.get_or_insert(Pending { role, text: String::new(), time, offset });
        p.text.push_str(text);
    }

    /// Emits the pending stream; `at_end` marks it partial (no `step.end` closed it).
    fn flush(&mut self, at_end: bool) {
        let Some(p) = self.pending.take() else { return };
        let mut turn = Turn::new(p.role, p.text.trim()).at(p.time);
        turn.partial = at_end && p.role == Role::Assistant;
        self.b.push(turn);
    }
}

/// A message `content`: a string, or `text` parts joined by newlines.
pub fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str).is_none_or(|t| t == "text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIALECT: KimiWireDialect = KimiWireDialect { id: "kimi", tools: KIMI_TOOLS };

    fn parse_lines(lines: &str, opts: &ParseOptions) -> (Vec<crate::model::Session>, ParseStats) {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("wire.jsonl");
        std::fs::write(&path, lines).unwrap();
        let mut out = Vec::new();
        let state = WireState { title: Some("t".into()), work_dir: Some("/src/auth".into()), ..WireState::default() };
        let stats = parse(&DIALECT, &SourceRef::file(&path).append_only(), "s1", &state, opts, &mut out).unwrap();
        (out, stats)
    }

    const PAGE: &str = r#"{"type":"metadata","protocol_version":"1.4","created_at":1782900000000}
{"type":"context.append_message","message":{"role":"user","content":[{"type":"text","text":"tokens fail after key rotation"}],"toolCalls":[]},"time":1782900001000}
{"type":"context.append_loop_event","event":{"type":"step.begin","uuid":"s1","turnId":"t1","step":0},"time":1782900001100}
{"type":"context.append_loop_event","event":{"type":"content.part","stepUuid":"s1","part":{"type":"think","text":"cache?"}},"time":1782900001150}
{"type":"context.append_loop_event","event":{"type":"content.part","stepUuid":"s1","part":{"type":"text","text":"The JWKS cache "}},"time":1782900001200}
{"type":"context.append_loop_event","event":{"type":"tool.call","toolCallId":"k1","name":"Bash","args":{"command":"go test ./auth/..."}},"time":1782900001300}
{"type":"context.append_loop_event","event":{"type":"tool.result","toolCallId":"k1","result":{"output":"FAIL TestRotate"}},"time":1782900001400}
{"type":"context.append_loop_event","event":{"type":"content.part","stepUuid":"s1","part":{"type":"text","text":"never reloads."}},"time":1782900001500}
"#;

    #[test]
    fn a_tail_with_no_turns_carries_the_title_of_state_json() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("wire.jsonl");
        let usage = r#"{"type":"context.append_loop_event","event":{"type":"usage.record"},"time":1782900002000}"#;
        std::fs::write(&path, format!("{PAGE}{usage}\n")).unwrap();
        let resume = crate::model::Resume { offset: PAGE.len() as u64, next_seq: 4, session_id: "s1".into(), ..Default::default() };
        let src = SourceRef { resume: Some(resume), ..SourceRef::file(&path).append_only() };
        let state = WireState { title: Some("Key rotation".into()), ..WireState::default() };
        let mut out = Vec::new();
        parse(&DIALECT, &src, "s1", &state, &ParseOptions::default(), &mut out).unwrap();
        let got: Vec<(&str, Option<&str>, usize)> = out.iter().map(|s| (s.id.as_str(), s.title.as_deref(), s.turns.len())).collect();
        assert_eq!(got, [("s1", Some("Key rotation"), 0)]);
    }

    #[test]
    fn the_pages_example_rebuilds_the_stream_around_the_call() {
        let (out, stats) = parse_lines(PAGE, &ParseOptions::default());
        assert_eq!(stats.skipped, 0);
        let s = &out[0];
        assert_eq!((s.id.as_str(), s.project.as_deref(), s.title.as_deref()), ("s1", Some("/src/auth"), Some("t")));
        let got: Vec<(Role, &str, bool)> = s.turns.iter().map(|t| (t.role, t.text.as_str(), t.partial)).collect();
        assert_eq!(
            got,
            vec![
                (Role::User, "tokens fail after key rotation", false),
                (Role::Assistant, "The JWKS cache", false),
                (Role::ToolCall, "FAIL TestRotate", false),
                (Role::Assistant, "never reloads.", true),
            ]
        );
        assert_eq!(s.turns[2].tool.as_ref().and_then(|t| t.command.as_deref()), Some("go test ./auth/..."));
        assert_eq!(s.started, Some(Timestamp::from_millis(1782900000000)));
    }

    #[test]
    fn reasoning_only_when_asked_and_in_order() {
        let (out, _) = parse_lines(PAGE, &ParseOptions { include_reasoning: true });
        let roles: Vec<Role> = out[0].turns.iter().map(|t| t.role).collect();
        assert_eq!(roles[1], Role::Reasoning);
        assert_eq!(out[0].turns[1].text, "cache?");
        assert_eq!(roles[2], Role::Assistant);
    }

    #[test]
    fn edits_and_errors() {
        let lines = r#"{"type":"context.append_loop_event","event":{"type":"tool.call","toolCallId":"e1","name":"Edit","args":{"path":"/a.go","old_string":"x := 1","new_string":"x := 2"}},"time":1}
{"type":"context.append_loop_event","event":{"type":"tool.result","toolCallId":"e1","result":{"output":"no match","isError":true}},"time":2}
{"type":"context.append_loop_event","event":{"type":"step.end"},"time":3}
"#;
        let (out, _) = parse_lines(lines, &ParseOptions::default());
        let t = &out[0].turns[0];
        assert_eq!(t.edit.as_ref().map(|e| e.old.as_str()), Some("x := 1"));
        assert!(t.tool.as_ref().is_some_and(|x| x.is_error));
        assert_eq!(t.files[0].path, "/a.go");
    }
}

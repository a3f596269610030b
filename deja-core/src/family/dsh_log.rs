//! DeepSeek Harness session logs (`dsh`, packages `@deepseek-ai/dsh-*`), the reader behind
//! the deepseek adapter and Cherry Studio's dsh runtime. dsh's `headless` and `web`
//! apps keep one directory per session,
//! `${DSH_HOME:-~/.dsh}/sessions/<workspace-slug>/session-<uuid>/`, holding one
//! append-only JSONL log per **format generation**: `session.jsonl[.zstd]` (oldest,
//! header `"version": 0`), then `session.vN.jsonl[.zstd]`. The `.zstd` files are the
//! same byte stream written as many concatenated zstd frames (one per flush). When dsh
//! reopens an old session it rewrites the whole history into a new-generation file and
//! leaves the old one beside it, so discovery reads only the newest generation of each
//! directory (see [`pick_generation`]).
//!
//! Every line after the header is `{"type", "seq", "time", "data"}` (packed rows carry
//! `seq0`/`time0`), processed in file order because `seq` is not monotonic.
//!
//! | record `type` | role | rule |
//! | --- | --- | --- |
//! | `session` (header) | — | id (`session-` prefix dropped), `cwd` → project, `createdAt` |
//! | `user/message`, `data.source.kind == "user"` | `User` | text blocks (or a string) joined; flushes pending deltas |
//! | `user/message`, any other `source.kind` | skipped | runtime-context snapshots, skill catalogues (harness talking about itself) |
//! | `assistant/message` | `Assistant` | `text` blocks; `reasoning` → `Reasoning` only with `include_reasoning`; `tool-call` blocks → `ToolCall`; **discards** pending deltas |
//! | `assistant/chunk` with `chunk.type == "text-delta"` | (buffer) | appended to the pending stream; other chunk types skipped |
//! | `text-chunks` | (buffer) | packed deltas `data.texts`, appended in order; time `time0` |
//! | `tool-call-chunks` | skipped | the complete call is in `assistant/message` / `tool/call` |
//! | `step/end`, `turn/end`, end of file | `Assistant` (`partial`) | flush the pending stream (non-empty only when no complete message arrived) |
//! | `tool/call` | `ToolCall` | paired by `callId`; one turn per call id even when the `assistant/message` block also names it |
//! | `tool/result` v1–v3 (nested `tool-result` blocks) | folded into the call, else `ToolOutput` | inner text joined, block `isError` |
//! | `tool/result` v4+ (`role: "tool"`, the message is the result) | folded into the call, else `ToolOutput` | message text blocks, message `isError` |
//! | `session/title` | — | session title; the last one wins (the provider's title follows the fallback, often after `turn/end`) |
//! | `permission/preset`, `sandbox/mode`, `approval/policy`, `turn/start`, `step/start`, `request/header`, `request/context`, `session/title-llm-request`, `agent/inbox/spliced`, others | skipped | configuration, prompts and queue bookkeeping |
//!
//! Work signals: `bash`/`pwsh` results whose last line is `[exit code: N]` or
//! `[killed by signal: X]` give the exit status (the marker line is dropped from the
//! text); `read`, `edit`, `write` and `str_replace_editor` name files, and edits that
//! carry old/new strings give the replaced span.
//!
//! The reader is parameterised only by the harness id the sessions are filed under.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::discover::{is_dir_entry, is_file_entry};
use crate::format::Discovery;

use crate::model::{cap_text, MAX_EDIT_BYTES, MAX_MESSAGE_BYTES};
use crate::patch::join_cwd;
use crate::project::{dash_fallback_name, decode_dash_path};
use crate::read::{at, for_each_json_line_streamed, str_at};
use crate::{
    Edit, ExitStatus, FileAction, FileTouch, FormatError, ParseOptions, ParseStats, Role, SessionBuilder, SessionSink, SourceRef,
    Timestamp, ToolUse, Turn,
};
use serde_json::Value;

/// Parses one generation file in full. zstd generations are not append-only on disk
/// (frames are flushed whole) and a raw log's streamed deltas, titles and call/result
/// pairs span the whole file, so there is no tail resume: `src.resume` is ignored.
pub fn parse(harness: &str, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let mut stats = ParseStats::default();
    let mut source = src.clone();
    source.resume = None;
    if source.generation.is_none() {
        source.generation = file_name(&src.path).and_then(generation_name).map(|g| g.generation);
    }
    let layout = StoreLayout::of(&src.path);
    let mut parser = Parser::new(harness, source, opts, &layout);
    // In chunks: a long-lived log can be hundreds of MB.
    for_each_json_line_streamed(&src.path, &mut stats, &[], |_, v| parser.record(&v))?;
    parser.finish(out);
    Ok(stats)
}

fn file_name(path: &Path) -> Option<&str> {
    path.file_name()?.to_str()
}

/// What the store path says when the header does not: the session directory's uuid
/// and the workspace slug above it.
struct StoreLayout {
    id: String,
    slug: Option<String>,
}

impl StoreLayout {
    fn of(path: &Path) -> Self {
        let dir = path.parent();
        let dir_id = dir.and_then(file_name).and_then(|n| n.strip_prefix("session-")).filter(|s| !s.is_empty());
        let slug = dir_id.and(dir.and_then(Path::parent).and_then(file_name)).filter(|s| s.starts_with("--")).map(str::to_string);
        let id = match dir_id {
            Some(id) => id.to_string(),
            None => file_name(path).map_or("", |n| n.split('.').next().unwrap_or(n)).to_string(),
        };
        StoreLayout { id, slug }
    }

    /// The cwd a slug stands for: resolved against the filesystem when it can be, else
    /// the last two segments.
    fn project(&self) -> Option<String> {
        let slug = self.slug.as_deref()?;
        match decode_dash_path(slug, Path::new("/")) {
            Some(p) => Some(p.display().to_string()),
            None => Some(dash_fallback_name(slug)).filter(|s| !s.is_empty()),
        }
    }
}

struct Parser<'a> {
    b: SessionBuilder,
    opts: &'a ParseOptions,
    cwd: Option<String>,
    header_seen: bool,
    title: Option<String>,
    /// Streamed answer text not yet superseded by a complete message.
    pending: String,
    pending_time: Option<Timestamp>,
}

impl<'a> Parser<'a> {
    fn new(harness: &str, source: SourceRef, opts: &'a ParseOptions, layout: &StoreLayout) -> Self {
        let mut b = SessionBuilder::new(harness, layout.id.clone(), source);
        b.session_mut().project = layout.project();
        Parser { b, opts, cwd: None, header_seen: false, title: None, pending: String::new(), pending_time: None }
    }

    fn record(&mut self, v: &Value) {
        let Some(kind) = v.get("type").and_then(Value::as_str) else { return };
        let time = v.get("time").or_else(|| v.get("time0")).and_then(Timestamp::from_json);
        let data = v.get("data").unwrap_or(&Value::Null);
        match kind {
            "session" => self.header(v),
            "user/message" => self.user_message(data, time),
            "assistant/message" => self.assistant_message(data, time),
            "assistant/chunk" => self.assistant_chunk(data, time),
            "text-chunks" => self.text_chunks(data, time),
            "step/end" | "turn/end" => self.flush_pending(),
            "tool/call" => self.tool_call(data, time),
            "tool/result" => self.tool_result(data, time),
            "session/title" => self.session_title(data),
            // tool-call-chunks, request/*, permission/*, sandbox/*, approval/*, turn/start,
            // step/start, session/title-llm-request, agent/inbox/spliced: bookkeeping.
            _ => {}
        }
        self.b.touch(time);
    }

    /// The first line. Only the first header counts: a delegated agent's header
    /// inside the log would otherwise rename the session.
    fn header(&mut self, v: &Value) {
        if std::mem::replace(&mut self.header_seen, true) {
            return;
        }
        if let Some(id) = v.get("id").and_then(Value::as_str) {
            let id = id.strip_prefix("session-").unwrap_or(id).trim();
            if !id.is_empty() {
                self.b.set_id(id);
            }
        }
        if let Some(cwd) = v.get("cwd").and_then(Value::as_str).map(str::trim).filter(|c| !c.is_empty()) {
            self.cwd = Some(cwd.to_string());
            self.b.session_mut().project = Some(cwd.to_string());
        }
        if v.get("delegationDepth").and_then(Value::as_u64).is_some_and(|d| d > 0) {
            self.b.session_mut().kind = Some("subagent".to_string());
        }
        self.b.touch(v.get("createdAt").and_then(Timestamp::from_json));
    }

    /// Only `source.kind == "user"` exactly is speech: every prompt is followed by a
    /// plugin-written runtime-context snapshot, and skill catalogues arrive the same way.
    fn user_message(&mut self, data: &Value, time: Option<Timestamp>) {
        let kind = str_at(data, &["source", "kind"]).or_else(|| str_at(data, &["message", "source", "kind"]));
        if kind != Some("user") {
            return;
        }
        self.flush_pending();
        let content = data.get("content").or_else(|| at(data, &["message", "content"]));
        self.b.push(Turn::new(Role::User, content_text(content)).at(time));
    }

    /// The complete message supersedes whatever was streamed for it.
    fn assistant_message(&mut self, data: &Value, time: Option<Timestamp>) {
        self.discard_pending();
        let message = data.get("message").unwrap_or(data);
        let blocks = match message.get("content") {
            Some(Value::String(s)) => {
                self.b.push(Turn::new(Role::Assistant, s.trim()).at(time));
                return;
            }
            Some(Value::Array(blocks)) => blocks,
            _ => return,
        };
        let mut text = String::new();
        for block in blocks {
            match block_kind(block) {
                Some("text") | None => append_line(&mut text, block_text(block)),
                Some("reasoning") => {
                    self.push_assistant(&mut text, time);
                    if self.opts.include_reasoning {
                        self.b.push(Turn::new(Role::Reasoning, block_text(block).unwrap_or("").trim()).at(time));
                    }
                }
                Some("tool-call") => {
                    self.push_assistant(&mut text, time);
                    let id = str_field(block, &["id", "toolCallId", "callId"]);
                    let name = str_field(block, &["name", "toolName"]).unwrap_or("");
                    let args = block.get("arguments").or_else(|| block.get("args")).or_else(|| block.get("input"));
                    self.call(id, name, args, time);
                }
                Some(_) => {}
            }
        }
        self.push_assistant(&mut text, time);
    }

    fn push_assistant(&mut self, text: &mut String, time: Option<Timestamp>) {
        if !text.trim().is_empty() {
            self.b.push(Turn::new(Role::Assistant, text.trim()).at(time));
        }
        text.clear();
    }

    /// Slow streams store one row per delta; only text deltas carry the answer.
    fn assistant_chunk(&mut self, data: &Value, time: Option<Timestamp>) {
        let Some(chunk) = data.get("chunk") else { return };
        if block_kind(chunk) != Some("text-delta") {
            return;
        }
        if let Some(text) = str_field(chunk, &["text", "delta", "textDelta"]) {
            self.buffer(text, time);
        }
    }

    /// Fast streams pack a run of deltas into one row.
    fn text_chunks(&mut self, data: &Value, time: Option<Timestamp>) {
        let Some(texts) = data.get("texts").and_then(Value::as_array) else { return };
        for text in texts.iter().filter_map(Value::as_str) {
            self.buffer(text, time);
        }
    }

    fn buffer(&mut self, text: &str, time: Option<Timestamp>) {
        // An endless stream must not grow memory past what one turn may hold.
        if self.pending.len() < MAX_MESSAGE_BYTES {
            self.pending.push_str(text);
        }
        if time.is_some() {
            self.pending_time = time;
        }
    }

    /// Text still pending here was never completed: the run was interrupted.
    fn flush_pending(&mut self) {
        let text = self.pending.trim();
        if !text.is_empty() {
            let mut turn = Turn::new(Role::Assistant, text).at(self.pending_time);
            turn.partial = true;
            self.b.push(turn);
        }
        self.discard_pending();
    }

    fn discard_pending(&mut self) {
        self.pending.clear();
        self.pending_time = None;
    }

    fn tool_call(&mut self, data: &Value, time: Option<Timestamp>) {
        let id = str_field(data, &["callId", "id", "toolCallId"]);
        let name = str_field(data, &["name", "toolName"]).unwrap_or("");
        self.call(id, name, data.get("arguments").or_else(|| data.get("args")), time);
    }

    /// One `ToolCall` turn per call id: the `assistant/message` block and the
    /// `tool/call` event name the same call.
    fn call(&mut self, id: Option<&str>, name: &str, args: Option<&Value>, time: Option<Timestamp>) {
        if let Some(existing) = id.and_then(|id| self.b.call_mut(id)) {
            let tool = existing.tool.get_or_insert_with(ToolUse::default);
            if tool.name.is_empty() {
                tool.name = name.to_string();
            }
            return;
        }
        let turn = call_turn(name, args, self.cwd.as_deref(), time);
        self.b.push_call(id, turn);
    }

    fn tool_result(&mut self, data: &Value, time: Option<Timestamp>) {
        self.flush_pending();
        let message = data.get("message").unwrap_or(data);
        let message_id = str_at(message, &["source", "callId"])
            .or_else(|| str_field(message, &["toolCallId", "callId"]))
            .or_else(|| str_field(data, &["callId", "toolCallId"]));
        let hint = str_field(data, &["name", "toolName"]).or_else(|| str_field(message, &["toolName", "name"]));
        let blocks = message.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
        let nested: Vec<&Value> = blocks.iter().filter(|b| block_kind(b) == Some("tool-result")).collect();
        if nested.is_empty() {
            // v4+: the message is the result.
            let is_error = bool_field(message, "isError") || bool_field(data, "isError");
            self.result(message_id, hint, content_text(message.get("content")), is_error, time);
            return;
        }
        // v1–v3: one nested block per result.
        for block in nested {
            let id = str_field(block, &["toolCallId", "callId", "id"]).or(message_id);
            let hint = str_field(block, &["toolName", "name"]).or(hint);
            let text = match block.get("content").or_else(|| block.get("output")) {
                Some(inner @ (Value::Array(_) | Value::String(_))) => content_text(Some(inner)),
                _ => block_text(block).unwrap_or("").trim().to_string(),
            };
            self.result(id, hint, text, bool_field(block, "isError"), time);
        }
    }

    fn result(&mut self, id: Option<&str>, hint: Option<&str>, text: String, is_error: bool, time: Option<Timestamp>) {
        let name = id.and_then(|id| self.b.call_mut(id)).and_then(|t| t.tool.as_ref()).map(|t| t.name.clone()).filter(|n| !n.is_empty());
        let name = name.or_else(|| hint.map(str::to_string));
        let (text, exit) = match name.as_deref().map(tool_kind).as_deref() {
            Some("bash" | "pwsh") => split_exit_marker(&text),
            _ => (text, None),
        };
        if let Some(id) = id {
            if self.b.complete_call(id, &text, is_error, exit.clone(), time) {
                return;
            }
        }
        let mut turn = Turn::new(Role::ToolOutput, text).at(time);
        if name.is_some() || exit.is_some() || is_error {
            let failed = exit.as_ref().is_some_and(|e| !e.succeeded());
            turn.tool = Some(ToolUse { name: name.unwrap_or_default(), command: None, exit, is_error: is_error || failed, call_id: None });
        }
        self.b.push(turn);
    }

    /// The fallback title is followed by the provider's, sometimes after `turn/end`.
    fn session_title(&mut self, data: &Value) {
        if let Some(title) = data.get("title").and_then(Value::as_str).map(str::trim).filter(|t| !t.is_empty()) {
            self.title = Some(title.to_string());
        }
    }

    fn finish(mut self, out: &mut dyn SessionSink) {
        self.flush_pending();
        if let Some(title) = self.title.take() {
            self.b.session_mut().title = Some(title);
        }
        if let Some(session) = self.b.finish() {
            out.session(session);
        }
    }
}

/// A call turn with what its arguments say about commands and files.
fn call_turn(name: &str, args: Option<&Value>, cwd: Option<&str>, time: Option<Timestamp>) -> Turn {
    let parsed;
    let args = match args {
        Some(Value::String(s)) => {
            parsed = serde_json::from_str::<Value>(s).unwrap_or(Value::Null);
            &parsed
        }
        Some(v) => v,
        None => &Value::Null,
    };
    let mut turn = Turn::new(Role::ToolCall, "").at(time);
    let mut tool = ToolUse { name: name.to_string(), ..ToolUse::default() };
    let path = str_field(args, &["file_path", "path", "filePath", "file"]).map(|p| join_cwd(p, cwd));
    let kind = tool_kind(name);
    let action = match kind.as_str() {
        "bash" | "pwsh" => {
            tool.command = str_field(args, &["command", "cmd"]).map(str::to_string);
            None
        }
        "read" => Some(FileAction::Read),
        "write" => Some(FileAction::Write),
        "edit" => Some(FileAction::Edit),
        "str_replace_editor" => match str_field(args, &["command"]) {
            Some("view") => Some(FileAction::Read),
            Some("create") => Some(FileAction::Write),
            _ => Some(FileAction::Edit),
        },
        _ => None,
    };
    if let (Some(action), Some(path)) = (action, path) {
        if action == FileAction::Edit {
            turn.edit = edit_span(args, &path);
        }
        turn.files.push(FileTouch { path, action });
    }
    turn.tool = Some(tool);
    turn
}

/// The replaced span, from `old_string`/`new_string` or `old_str`/`new_str` (or the
/// first entry of an `edits` list).
fn edit_span(args: &Value, path: &str) -> Option<Edit> {
    let from = |v: &Value| {
        let old = str_field(v, &["old_string", "old_str", "oldString"])?;
        let new = str_field(v, &["new_string", "new_str", "newString"]);
        Some((old.to_string(), new.map(str::to_string)))
    };
    let (mut old, mut new) = from(args).or_else(|| args.get("edits")?.as_array()?.first().and_then(from))?;
    if old.is_empty() {
        return None;
    }
    cap_text(&mut old, MAX_EDIT_BYTES);
    if let Some(n) = &mut new {
        cap_text(n, MAX_EDIT_BYTES);
    }
    Some(Edit { path: path.to_string(), old, new })
}

/// dsh's own reading of a shell result: the last line only, `[exit code: N]` or
/// `[killed by signal: X]`. The marker is dropped from the text that is indexed.
pub fn split_exit_marker(text: &str) -> (String, Option<ExitStatus>) {
    use crate::exit::{split_exit_code, ExitLine};
    if let (Some(code), head) = split_exit_code(text, &[ExitLine::last("[exit code:").closed("]")]) {
        return (head.to_string(), Some(ExitStatus::Code(code)));
    }
    // A signal has a name, not a number: read here.
    let trimmed = text.trim_end();
    let (head, last) = match trimmed.rfind('\n') {
        Some(i) => (&trimmed[..i], &trimmed[i + 1..]),
        None => ("", trimmed),
    };
    let last = last.trim();
    let exit = last
        .strip_prefix("[killed by signal:")
        .and_then(|r| r.strip_suffix(']'))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| ExitStatus::Signal(s.to_string()));
    match exit {
        Some(exit) => (head.trim_end().to_string(), Some(exit)),
        None => (text.to_string(), None),
    }
}

/// A block's type with any namespace prefix dropped: v4 namespaces block types
/// (`…/text`, `…:tool-call`), so only the last segment is compared.
fn block_kind(block: &Value) -> Option<&str> {
    let t = block.get("type")?.as_str()?;
    Some(t.rsplit(['/', ':', '.', '#']).next().unwrap_or(t))
}

/// A tool name lowercased, namespace dropped.
fn tool_kind(name: &str) -> String {
    name.rsplit(['/', ':', '.']).next().unwrap_or(name).to_ascii_lowercase()
}

fn block_text(block: &Value) -> Option<&str> {
    match block {
        Value::String(s) => Some(s),
        _ => block.get("text").and_then(Value::as_str),
    }
}

/// A `content` string, or its text blocks (blocks with no type count) joined by
/// newlines, trimmed.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.trim().to_string(),
        Some(Value::Array(blocks)) => {
            let mut text = String::new();
            for block in blocks {
                if matches!(block_kind(block), Some("text") | None) {
                    append_line(&mut text, block_text(block));
                }
            }
            text.trim().to_string()
        }
        _ => String::new(),
    }
}

fn append_line(text: &mut String, piece: Option<&str>) {
    let Some(piece) = piece.filter(|p| !p.trim().is_empty()) else { return };
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(piece);
}

fn str_field<'v>(v: &'v Value, keys: &[&str]) -> Option<&'v str> {
    keys.iter().find_map(|k| v.get(k)?.as_str())
}

fn bool_field(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// Every `session-<uuid>` directory under `root` (the root itself included), each
/// contributing its newest generation. Sorted for determinism.
///
/// Every search refreshes the index first, so this walk is on the hot path of a
/// no-change refresh: it reads directories only, taking entry types from `readdir`
/// and stat-ing a file only to break a tie between two files of one generation.
pub fn discover_sessions(root: &Path) -> Vec<SourceRef> {
    let mut sources = Vec::new();
    if root.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("session-")) {
        push_session_dir(root, &mut sources);
    } else {
        walk_for_sessions(root, 0, &mut sources);
    }
    Discovery::sort_sources(&mut sources);
    sources
}

/// Depth of `<root>/<slug>/session-<uuid>` plus room for nesting dsh may add.
const MAX_WALK_DEPTH: usize = 4;

fn walk_for_sessions(dir: &Path, depth: usize, out: &mut Vec<SourceRef>) {
    for entry in crate::discover::list(dir) {
        if !is_dir_entry(&entry) {
            continue;
        }
        let path = entry.path();
        if entry.file_name().to_str().is_some_and(|n| n.starts_with("session-")) {
            // A session directory holds generations, never further sessions.
            push_session_dir(&path, out);
        } else if depth + 1 < MAX_WALK_DEPTH {
            walk_for_sessions(&path, depth + 1, out);
        }
    }
}

fn push_session_dir(dir: &Path, out: &mut Vec<SourceRef>) {
    if let Some((path, generation)) = pick_generation(dir) {
        let mut src = SourceRef::file(path);
        src.generation = Some(generation);
        out.push(src);
    }
}

/// What a log's file name says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenerationName {
    /// `N` of `session.vN.jsonl`; 0 for the unnumbered `session.jsonl`.
    pub generation: u32,
    /// False for the unnumbered (oldest) naming.
    pub numbered: bool,
    pub zstd: bool,
}

/// Parses `session.jsonl`, `session.vN.jsonl`, each optionally `.zstd` (or `.zst`).
/// Any `N` is accepted so the next format bump is read rather than skipped.
pub fn generation_name(name: &str) -> Option<GenerationName> {
    let (stem, zstd) = match name.strip_suffix(".zstd").or_else(|| name.strip_suffix(".zst")) {
        Some(s) => (s, true),
        None => (name, false),
    };
    let stem = stem.strip_suffix(".jsonl")?;
    if stem == "session" {
        return Some(GenerationName { generation: 0, numbered: false, zstd });
    }
    let n = stem.strip_prefix("session.v")?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(GenerationName { generation: n.parse().ok()?, numbered: true, zstd })
}

/// The newest generation in one session directory: highest `N` (the unnumbered name is
/// older than any `vN`). When the raw and the zstd file of the same `N` both exist
/// (raw lines are a dsh configuration, so a switch leaves both), the one modified
/// last wins, then the larger, then zstd, because the one dsh wrote most recently is
/// the one it is still appending to. Only regular files count.
pub fn pick_generation(dir: &Path) -> Option<(PathBuf, u32)> {
    // Newest by name first; only files sharing the newest generation need a stat.
    let mut newest: Vec<(GenerationName, PathBuf)> = Vec::new();
    for entry in crate::discover::list(dir) {
        let name = entry.file_name();
        let Some(gen) = name.to_str().and_then(generation_name) else { continue };
        if !is_file_entry(&entry) {
            continue;
        }
        let key = (gen.generation, gen.numbered);
        match newest.first().map(|(g, _)| (g.generation, g.numbered)) {
            Some(best) if key < best => {}
            Some(best) if key == best => newest.push((gen, entry.path())),
            _ => newest = vec![(gen, entry.path())],
        }
    }
    if newest.len() > 1 {
        type Tie = (Option<SystemTime>, u64, bool);
        let tie = |(g, p): &(GenerationName, PathBuf)| -> Tie {
            let meta = std::fs::metadata(p).ok();
            (meta.as_ref().and_then(|m| m.modified().ok()), meta.as_ref().map_or(0, |m| m.len()), g.zstd)
        };
        let ranked: Vec<(Tie, usize)> = newest.iter().enumerate().map(|(i, c)| (tie(c), i)).collect();
        let (_, winner) = ranked.into_iter().max_by(|a, b| a.0.cmp(&b.0))?;
        let (g, p) = newest.swap_remove(winner);
        return Some((p, g.generation));
    }
    newest.pop().map(|(g, p)| (p, g.generation))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_marker_is_read_from_the_last_line_only() {
        assert_eq!(split_exit_marker("boom\n[exit code: 2]\n"), ("boom".to_string(), Some(ExitStatus::Code(2))));
        assert_eq!(split_exit_marker("[exit code: 0]"), (String::new(), Some(ExitStatus::Code(0))));
        assert_eq!(split_exit_marker("x\n[killed by signal: SIGTERM]"), ("x".to_string(), Some(ExitStatus::Signal("SIGTERM".into()))));
        assert_eq!(split_exit_marker("[exit code: 1]\nmore").1, None);
        assert_eq!(split_exit_marker("[exit code: x]").1, None);
    }

    #[test]
    fn namespaced_block_types_keep_their_last_segment() {
        assert_eq!(block_kind(&serde_json::json!({"type": "@deepseek-ai/dsh-base:text"})), Some("text"));
        assert_eq!(block_kind(&serde_json::json!({"type": "dsh/tool-call"})), Some("tool-call"));
        assert_eq!(block_kind(&serde_json::json!({"type": "runtime-context"})), Some("runtime-context"));
    }
}

#[cfg(test)]
mod shared_tests {
    use super::*;

    #[test]
    fn generation_names_and_the_harness_id() {
        assert_eq!(generation_name("session.jsonl"), Some(GenerationName { generation: 0, numbered: false, zstd: false }));
        assert_eq!(generation_name("session.v4.jsonl.zstd"), Some(GenerationName { generation: 4, numbered: true, zstd: true }));
        assert_eq!(generation_name("notes.jsonl"), None);
        let dir = tempfile::tempdir().expect("tmp");
        let session = dir.path().join("--src-x--/session-ab12");
        std::fs::create_dir_all(&session).expect("mkdir");
        let log = concat!(
            "{\"type\":\"session\",\"version\":4,\"id\":\"session-ab12\",\"createdAt\":1788400000000,\"cwd\":\"/src/x\"}\n",
            "{\"type\":\"user/message\",\"seq\":1,\"time\":1788400000100,\"data\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"source\":{\"kind\":\"user\"}}}\n",
        );
        std::fs::write(session.join("session.v4.jsonl"), log).expect("write");
        let sources = discover_sessions(dir.path());
        assert_eq!(sources.len(), 1);
        let mut out: Vec<crate::Session> = Vec::new();
        parse("some-harness", &sources[0], &ParseOptions::default(), &mut out).expect("parse");
        assert_eq!((out[0].harness.as_str(), out[0].id.as_str()), ("some-harness", "ab12"));
    }
}

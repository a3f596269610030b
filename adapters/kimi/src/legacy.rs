//! The legacy Kimi CLI generation (`kimi-cli` 1.x, `${KIMI_SHARE_DIR:-~/.kimi}`): one
//! directory per session, `sessions/<md5 of work dir>/<uuid>/`, holding `wire.jsonl` (the
//! UI event log, the only file with times), `context.jsonl` (the model context) and
//! `state.json` (title). The wire log is read when present; `context.jsonl` only when a
//! session has none.
//!
//! `wire.jsonl`: a `{"type": "metadata", "protocol_version"}` line, then
//! `{"timestamp": <epoch seconds>, "message": {"type", "payload"}}`.
//!
//! | wire `message.type` | Turn | rule |
//! | --- | --- | --- |
//! | `TurnBegin` | `User` | `payload.user_input` (string or text parts); flushes the stream; a `<system>CHECKPOINT n</system>` marker is skipped |
//! | `StepBegin`, `TurnEnd` | — | flush the pending stream as one `Assistant` turn |
//! | `ContentPart`, `type` `text` | (buffer) | `text` appended to the step's stream; time of the first part |
//! | `ContentPart`, `type` `think` | `Reasoning` | only with `include_reasoning` |
//! | `ToolCall` | `ToolCall` | OpenAI shape, `function.arguments` a JSON string; `Shell` → `tool.command`; `ReadFile` / `WriteFile` / `StrReplaceFile` → `arguments.path` (read / write / edit) |
//! | `ToolResult` | folded into its call by `tool_call_id`, else `ToolOutput` | `return_value.output` trimmed (empty, as `WriteFile` leaves it: the `message` sentence instead), `is_error`; `Shell` exit from `message` (`… exit code: N.`, success ⇒ 0) |
//! | `StatusUpdate`, `metadata`, others | skipped | usage and bookkeeping |
//! | end of file | `Assistant`, `partial` | a stream no `TurnEnd` closed |
//!
//! | `context.jsonl` `role` | Turn | rule |
//! | --- | --- | --- |
//! | `_system_prompt` | skipped | its ``The current working directory is `<path>`.`` is the last-resort project |
//! | `_checkpoint`, `_usage` | skipped | |
//! | `user` | `User` | `content` string or text parts; `<system>CHECKPOINT n</system>` skipped |
//! | `assistant` | `Assistant` + `ToolCall`s | `content` text; `tool_calls[]` as in the wire log |
//! | `tool` | folded into its call by `tool_call_id` | the leading `<system>status</system>` part is dropped from the output and gives the `Shell` exit status; a status alone (`WriteFile`'s plain-string content) is the output |
//! | `assistant` `content` `think` parts | skipped | only `text` parts are the answer |
//!
//! Session: id = the uuid directory; project = the `kimi.json` `work_dirs[].path` whose MD5
//! (lowercase hex; `<kaos>_<md5>` for non-local backends) names the parent directory, else
//! the system prompt's cwd sentence, else the hash; title = `state.json` `custom_title`
//! (a trailing `…` dropped). `context.jsonl` has no times, and the file's mtime is not used
//! as one (a copy or a checkout resets it, so it says nothing about the session): a
//! session read from it has none.
//!
//! A read of a tail goes on from the state the read before left: the calls still waiting
//! for a result, with their tool (`TailState::open_calls`: a `Shell` result's exit status
//! depends on it), and the system prompt's cwd sentence (`TailState::cwd`). A read that
//! ends inside a stream no `TurnEnd` closed says where it began (`ParseStats::reopen`):
//! the next tail reads it again, so a stream closed later is one turn.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use deja_core::exit::ExitLine;
use deja_core::family::claude_jsonl::tool_call_turn_with;
use deja_core::family::kimi_wire::content_text;
use deja_core::model::Reopen;
use deja_core::read::{for_each_source_line, parse_json_document, read_source};
use deja_core::{
    ExitStatus, FormatError, ParseOptions, ParseStats, Role, SessionBuilder, SessionSink, SourceRef, TailState, Timestamp, ToolKind,
    ToolMap, Turn,
};
use serde_json::Value;

use crate::{share_dir_of, ID};

/// The legacy CLI's tools: `Shell` with `command` (the page), and the file tools of the
/// kimi-cli 1.51.0 tool list, each with `path` (`StrReplaceFile`'s `edit` argument was not
/// seen filled, so it gives the file only, no span).
pub const KIMI_CLI_TOOLS: ToolMap = ToolMap { shell: &["Shell"], read: &["ReadFile"], edit: &["StrReplaceFile"], write: &["WriteFile"] };

/// Parses one legacy session file (`wire.jsonl` or `context.jsonl`).
pub fn parse(src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let mut stats = ParseStats::default();
    let dir = src.path.parent();
    let dir_name = dir.and_then(Path::file_name).and_then(|n| n.to_str()).unwrap_or(ID).to_string();
    let id = src.resume.as_ref().map_or(dir_name, |r| r.session_id.clone());
    let state = src.resume.as_ref().map(|r| &r.state);
    let tools: HashMap<String, String> = state.map(|s| s.open_calls.clone().into_iter().collect()).unwrap_or_default();
    let cwd = state.and_then(|s| s.cwd.clone());
    let mut p = Legacy { opts, b: SessionBuilder::new(ID, id, src.clone()), pending: None, tools, cwd };
    let is_wire = src.path.file_name().is_some_and(|n| n == "wire.jsonl");
    for_each_source_line(src, &mut stats, &[], |offset, v| if is_wire { p.wire(offset, &v) } else { p.context(&v) })?;
    // Every push flushes the stream first, so an open one is the last turn.
    stats.reopen = p.pending.as_ref().map(|pending| Reopen { offset: pending.offset, seq: p.b.next_seq() });
    stats.tail = Some(TailState { cwd: p.cwd.clone(), open_calls: p.tools.clone().into_iter().collect(), ..TailState::default() });
    p.flush(true);
    let cwd = p.cwd.take();
    let mut b = p.b;
    if let Some(dir) = dir {
        let s = b.session_mut();
        s.title = read_title(&dir.join("state.json"));
        s.project = project_of(&src.path, dir, cwd, src.resume.is_some());
    }
    if let Some(s) = b.finish() {
        out.session(s);
    }
    Ok(stats)
}

struct Pending {
    role: Role,
    text: String,
    time: Option<Timestamp>,
    /// Where its first part's line starts.
    offset: u64,
}

struct Legacy<'a> {
    opts: &'a ParseOptions,
    b: SessionBuilder,
    pending: Option<Pending>,
    /// Tool name per call id still waiting for its result, so the result knows whether it
    /// came from `Shell`.
    tools: HashMap<String, String>,
    /// The cwd sentence of a `_system_prompt` read in this file.
    cwd: Option<String>,
}

impl Legacy<'_> {
    fn wire(&mut self, offset: u64, v: &Value) {
        let time = v.get("timestamp").and_then(Timestamp::from_json);
        let Some(m) = v.get("message") else { return };
        let payload = m.get("payload").unwrap_or(&Value::Null);
        match m.get("type").and_then(Value::as_str) {
            Some("TurnBegin") => {
                self.flush(false);
                self.user(&content_text(payload.get("user_input")), time);
            }
            Some("StepBegin") | Some("TurnEnd") => {
                self.b.touch(time);
                self.flush(false);
            }
            Some("ContentPart") => match payload.get("type").and_then(Value::as_str) {
                Some("text") => self.append(Role::Assistant, payload.get("text").and_then(Value::as_str).unwrap_or(""), time, offset),
                Some("think") if self.opts.include_reasoning => {
                    let text = payload.get("think").or_else(|| payload.get("text")).and_then(Value::as_str).unwrap_or("");
                    self.append(Role::Reasoning, text, time, offset);
                }
                _ => self.b.touch(time),
            },
            Some("ToolCall") => {
                self.flush(false);
                self.call(payload, time);
            }
            Some("ToolResult") => {
                self.flush(false);
                let rv = payload.get("return_value").unwrap_or(&Value::Null);
                let output = match rv.get("output") {
                    Some(Value::String(s)) => s.trim().to_string(),
                    other => content_text(other).trim().to_string(),
                };
                let is_error = rv.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                let status = rv.get("message").and_then(Value::as_str).unwrap_or("");
                let call_id = payload.get("tool_call_id").and_then(Value::as_str).unwrap_or("");
                // 1.51.0 `WriteFile` answers an empty `output`; its status sentence is the result.
                let output = if output.is_empty() { status.trim().to_string() } else { output };
                self.result(call_id, &output, is_error, status, time);
            }
            _ => self.b.touch(time),
        }
    }

    fn context(&mut self, v: &Value) {
        match v.get("role").and_then(Value::as_str) {
            Some("_system_prompt") if self.cwd.is_none() => {
                self.cwd = v.get("content").and_then(Value::as_str).and_then(cwd_sentence);
            }
            Some("user") => self.user(&content_text(v.get("content")), None),
            Some("assistant") => {
                self.b.push(Turn::new(Role::Assistant, content_text(v.get("content")).trim()));
                for call in v.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                    self.call(call, None);
                }
            }
            Some("tool") => {
                let parts = content_text(v.get("content"));
                let (status, output) = split_status(&parts);
                let is_error = status.is_some_and(|s| s.starts_with("ERROR"));
                let call_id = v.get("tool_call_id").and_then(Value::as_str).unwrap_or("");
                // A status alone (1.51.0 `WriteFile`: a plain string `<system>File successfully
                // overwritten. …</system>`) is the result, not nothing.
                let output = match output.trim() {
                    "" => status.unwrap_or("").trim(),
                    o => o,
                };
                self.result(call_id, output, is_error, status.unwrap_or(""), None);
            }
            // _checkpoint, _usage and roles not yet seen.
            _ => {}
        }
    }

    fn user(&mut self, text: &str, time: Option<Timestamp>) {
        let text = text.trim();
        if is_checkpoint_marker(text) {
            return self.b.touch(time);
        }
        self.b.push(Turn::new(Role::User, text).at(time));
    }

    /// An OpenAI-shaped tool call: `{id, function: {name, arguments: "<JSON>"}}`.
    fn call(&mut self, call: &Value, time: Option<Timestamp>) {
        let f = call.get("function").unwrap_or(&Value::Null);
        let name = f.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()).unwrap_or("tool");
        let args = match f.get("arguments") {
            Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Null),
            Some(other) => other.clone(),
            None => Value::Null,
        };
        let call_id = call.get("id").and_then(Value::as_str);
        if let Some(id) = call_id {
            self.tools.insert(id.to_string(), name.to_string());
        }
        let turn = tool_call_turn_with(&KIMI_CLI_TOOLS, &["path"], name, &args, time);
        self.b.push_call(call_id, turn);
    }

    fn result(&mut self, call_id: &str, output: &str, is_error: bool, status: &str, time: Option<Timestamp>) {
        let is_shell = self.tools.remove(call_id).is_some_and(|n| KIMI_CLI_TOOLS.kind(&n) == ToolKind::Shell);
        let exit = exit_from_status(status).or((is_shell && !is_error).then_some(0)).map(ExitStatus::Code);
        let exit = if is_shell { exit } else { None };
        if !self.b.complete_call(call_id, output, is_error, exit.clone(), time) {
            self.b.push_orphan_result(call_id, output, is_error, exit, time);
        }
    }

    fn append(&mut self, role: Role, text: &str, time: Option<Timestamp>, offset: u64) {
        self.b.touch(time);
        if self.pending.as_ref().is_some_and(|p| p.role != role) {
            self.flush(false);
        }
        self.pending.get_or_insert(Pending { role, text: String::new(), time, offset }).text.push_str(text);
    }

    fn flush(&mut self, at_end: bool) {
        let Some(p) = self.pending.take() else { return };
        let mut turn = Turn::new(p.role, p.text.trim()).at(p.time);
        turn.partial = at_end && p.role == Role::Assistant;
        self.b.push(turn);
    }
}

/// `<system>CHECKPOINT n</system>`, a synthetic user message.
fn is_checkpoint_marker(text: &str) -> bool {
    text.strip_prefix("<system>CHECKPOINT").is_some_and(|r| r.ends_with("</system>") && !r.contains('\n'))
}

/// A tool message's leading `<system>status</system>` and the output after it.
fn split_status(text: &str) -> (Option<&str>, &str) {
    let t = text.trim_start();
    if let Some(rest) = t.strip_prefix("<system>") {
        if let Some(end) = rest.find("</system>") {
            return (Some(rest[..end].trim()), &rest[end + "</system>".len()..]);
        }
    }
    (None, text)
}

/// `… exit code: N.` in a status sentence.
pub fn exit_from_status(status: &str) -> Option<i64> {
    deja_core::exit::exit_code(status, &[ExitLine::any("exit code:").inline()])
}

/// ``The current working directory is `<path>`.`` in the system prompt.
fn cwd_sentence(prompt: &str) -> Option<String> {
    const LEAD: &str = "The current working directory is `";
    let i = prompt.find(LEAD)?;
    let rest = &prompt[i + LEAD.len()..];
    let path = &rest[..rest.find('`')?];
    (!path.trim().is_empty()).then(|| path.trim().to_string())
}

/// `state.json` `custom_title`, trimmed, without the `…` of a cut prompt head.
fn read_title(path: &Path) -> Option<String> {
    let mut stats = ParseStats::default();
    let bytes = read_source(path, &mut stats).ok()?;
    let doc = parse_json_document(&bytes.bytes, path).ok()?;
    let title = doc.get("custom_title")?.as_str()?.trim();
    let title = title.strip_suffix('…').unwrap_or(title).trim_end();
    (!title.is_empty()).then(|| title.to_string())
}

/// The work dir whose MD5 names the session's parent directory (from `kimi.json`), else
/// the system prompt's cwd, else (in a whole read) the cwd sentence heading
/// `context.jsonl`, else the hash itself. A tail that knows neither of the first two
/// names no project: the one the read before found stands, and the head of
/// `context.jsonl` (this source, for a session without a wire log) is not read again.
fn project_of(file: &Path, session_dir: &Path, cwd: Option<String>, tail: bool) -> Option<String> {
    let hash_dir = session_dir.parent()?.file_name()?.to_str()?;
    let hash = hash_dir.rsplit('_').next().unwrap_or(hash_dir);
    let from_index = share_dir_of(file).and_then(|share| work_dir_for(&share.join("kimi.json"), hash));
    let known = from_index.or(cwd);
    if tail {
        return known;
    }
    known.or_else(|| first_context_cwd(&session_dir.join("context.jsonl"))).or_else(|| Some(hash_dir.to_string()))
}

fn work_dir_for(kimi_json: &Path, hash: &str) -> Option<String> {
    let mut stats = ParseStats::default();
    let bytes = read_source(kimi_json, &mut stats).ok()?;
    let doc = parse_json_document(&bytes.bytes, kimi_json).ok()?;
    doc.get("work_dirs")?
        .as_array()?
        .iter()
        .filter_map(|w| w.get("path").and_then(Value::as_str))
        .find(|p| md5_hex(p.as_bytes()).eq_ignore_ascii_case(hash))
        .map(str::to_string)
}

/// The cwd sentence of the `_system_prompt` line heading a `context.jsonl` (first 1 MiB).
fn first_context_cwd(path: &Path) -> Option<String> {
    let mut head = Vec::new();
    std::fs::File::open(path).ok()?.take(1 << 20).read_to_end(&mut head).ok()?;
    let line = head.split(|&b| b == b'\n').next()?;
    let v: Value = serde_json::from_slice(line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)).ok()?;
    (v.get("role").and_then(Value::as_str) == Some("_system_prompt")).then_some(())?;
    cwd_sentence(v.get("content")?.as_str()?)
}

/// MD5 (RFC 1321) as lowercase hex: kimi-cli names a work dir's session directory by it.
pub fn md5_hex(data: &[u8]) -> String {
    const S: [u32; 64] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 4, 11, 16, 23,
        4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ];
    let k: Vec<u32> = (0..64).map(|i| ((i as f64 + 1.0).sin().abs() * 4_294_967_296.0) as u32).collect();
    let mut h: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&(data.len() as u64).wrapping_mul(8).to_le_bytes());
    for chunk in msg.chunks_exact(64) {
        let mut m = [0u32; 16];
        for (i, w) in chunk.chunks_exact(4).enumerate() {
            m[i] = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        }
        let [mut a, mut b, mut c, mut d] = h;
        for i in 0..64 {
            let (f, g) = match i / 16 {
                0 => ((b & c) | (!b & d), i),
                1 => ((d & b) | (!d & c), (5 * i + 1) % 16),
                2 => (b ^ c ^ d, (3 * i + 5) % 16),
                _ => (c ^ (b | !d), (7 * i) % 16),
            };
            let f = f.wrapping_add(a).wrapping_add(k[i]).wrapping_add(m[g]);
            a = d;
            d = c;
            c = b;
            b = b.wrapping_add(f.rotate_left(S[i]));
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d]) {
            *x = x.wrapping_add(y);
        }
    }
    h.iter().flat_map(|w| w.to_le_bytes()).map(|b| format!("{b:02x}")).collect()
}

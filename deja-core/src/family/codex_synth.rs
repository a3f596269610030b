//! The Codex-rollout synthetic writer: lays a [`SynthSession`] out as a rollout of the
//! harnesses the [`codex_rollout`](super::codex_rollout) reader serves, under
//! `<home>/<dir>/sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl`, so the demo home, the
//! benchmark corpora and the conformance round trip go through the real discovery and
//! parser. A [`RolloutLayout`] names the harness directory and the [`Flavor`] of lines:
//!
//! - [`Flavor::Codex`], Codex 0.171: `ordinal` on every line, `metadata` on
//!   `response_item`s, the harness preamble (developer permissions message, `world_state`,
//!   a harness-provenance `<environment_context>` user message), every message and shell
//!   call repeated as an `item_completed` item, framed tool output, and
//!   `token_usage_record` lines.
//! - [`Flavor::Trae`], TRAE CLI 0.200 (a codex-rs fork): `session_meta` and
//!   `turn_context`, the environment context as an injected `response_item` user message,
//!   prompts as `user_message` events with a `turn_id`, every call and result appended
//!   through a `history_mutation` and repeated as a `response_item`, `exec` with an argv
//!   `command`, block-list outputs, answers as assistant `response_item`s with their
//!   `agent_message` copies.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::format::SynthWriter;
use crate::model::Timestamp;
use crate::synth::{SynthSession, SynthTurn};

/// Which harness's rollout lines to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// Codex CLI 0.171.
    Codex,
    /// TRAE CLI 0.200.
    Trae,
}

/// Where a harness keeps its rollouts and which lines it writes.
#[derive(Debug, Clone, Copy)]
pub struct RolloutLayout {
    /// The harness directory below the home whose `sessions/` holds the rollouts, as
    /// discovery finds it with only `HOME` set (`.codex`, `.trae/cli`).
    pub dir: &'static str,
    pub flavor: Flavor,
}

impl RolloutLayout {
    /// Codex CLI 0.171 under `~/.codex`.
    pub const CODEX: RolloutLayout = RolloutLayout { dir: ".codex", flavor: Flavor::Codex };
    /// TRAE CLI 0.200 under `~/.trae/cli`.
    pub const TRAE: RolloutLayout = RolloutLayout { dir: ".trae/cli", flavor: Flavor::Trae };
}

/// A [`SynthWriter`] for one rollout harness, for adapters to return from
/// `HarnessFormat::synthetic` as a `static`.
#[derive(Debug, Clone, Copy)]
pub struct RolloutSynth(pub RolloutLayout);

impl SynthWriter for RolloutSynth {
    fn write(&self, home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
        write_rollout(&self.0, home, session)
    }
}

struct Writer<'a> {
    s: &'a SynthSession,
    out: String,
    ordinal: u64,
    history_seq: u64,
    calls: u64,
    turn: u64,
    in_turn: bool,
    last_answer: String,
}

/// Writes the rollout where discovery finds it and returns its path.
pub fn write_rollout(layout: &RolloutLayout, home: &Path, s: &SynthSession) -> std::io::Result<PathBuf> {
    let stamp = s.started.to_rfc3339();
    let part = |a: usize, b: usize, default: &'static str| stamp.get(a..b).unwrap_or(default).to_string();
    let (year, month, day) = (part(0, 4, "1970"), part(5, 7, "01"), part(8, 10, "01"));
    let clock = part(11, 19, "00:00:00").replace(':', "-");
    let dir = home.join(layout.dir).join("sessions").join(&year).join(&month).join(&day);
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("rollout-{year}-{month}-{day}T{clock}-{}.jsonl", s.id));
    if layout.flavor == Flavor::Trae {
        std::fs::write(&path, trae_rollout(s))?;
        return Ok(path);
    }
    let mut w = Writer {
        s,
        out: String::with_capacity(4096),
        ordinal: 0,
        history_seq: 0,
        calls: 0,
        turn: 0,
        in_turn: false,
        last_answer: String::new(),
    };
    w.preamble();
    for t in &s.turns {
        w.turn(t);
    }
    w.end_turn(s.turns.last().map_or(s.started, SynthTurn::time));
    std::fs::write(&path, w.out)?;
    Ok(path)
}

impl Writer<'_> {
    fn line(&mut self, time: Timestamp, kind: &str, payload: Value) {
        let mut v = json!({"timestamp": time.to_rfc3339(), "ordinal": self.ordinal, "type": kind, "payload": payload});
        if kind == "response_item" {
            self.history_seq += 1;
            v["metadata"] = json!({
                "history_sequence": self.history_seq,
                "sampled_through_sequence": self.history_seq.saturating_sub(1),
                "client_authored": payload_role(&v) == "user",
                "user_input_order": null,
                "retained_source": "rollout",
                "mcp_attribution": null,
                "model_search_state": null,
            });
        }
        self.ordinal += 1;
        let _ = writeln!(self.out, "{v}");
    }

    fn thread_event(&mut self, time: Timestamp, item: Value) {
        let ms = time.millis();
        let payload = json!({
            "type": "item_completed",
            "thread_id": self.s.id,
            "turn_id": self.turn_id(),
            "item": item,
            "started_at_ms": ms,
            "completed_at_ms": ms,
        });
        self.line(time, "event_msg", payload);
    }

    fn turn_id(&self) -> String {
        format!("{}-turn-{}", self.s.id, self.turn)
    }

    fn preamble(&mut self) {
        let s = self.s;
        let t = s.started;
        self.line(
            t,
            "session_meta",
            json!({
                "id": s.id,
                "session_id": s.id,
                "timestamp": t.to_rfc3339(),
                "cwd": s.project,
                "originator": "codex_exec",
                "cli_version": "0.171.0",
                "source": "exec",
                "thread_source": "user",
                "runtime_workspace_roots": [s.project],
                "history_mode": "paginated",
                "context_window": {"window_id": format!("{}-w0", s.id)},
                "account_scoped": false,
                "base_instructions": {"text": "You are Codex, a coding agent running in a terminal. Keep answers short."},
            }),
        );
        self.line(
            t,
            "world_state",
            json!({
                "full": true,
                "state": {
                    "environment": {"shell": "bash", "cwd": s.project},
                    "permissions": {"sandbox": "workspace-write", "approval_policy": "never"},
                    "skills": "",
                },
            }),
        );
        self.line(t, "event_msg", json!({"type": "thread_settings_applied", "model": "gpt-5.3-codex", "reasoning_effort": "medium"}));
        self.line(
            t,
            "response_item",
            json!({
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "<permissions instructions>\nFilesystem sandboxing: workspace-write.\n</permissions instructions>"}],
                "internal_chat_message_metadata_passthrough": {
                    "content_item_kinds": ["permissions.instructions"],
                    "content_item_metadata": [{"kind": "permissions.instructions", "provenance": {"type": "harness"}}],
                },
            }),
        );
        let env = format!(
            "<environment_context>\n  <cwd>{}</cwd>\n  <approval_policy>never</approval_policy>\n  <shell>bash</shell>\n</environment_context>",
            s.project
        );
        self.line(
            t,
            "response_item",
            json!({
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": env}],
                "internal_chat_message_metadata_passthrough": {
                    "content_item_kinds": ["environments.environment_context"],
                    "content_item_metadata": [{"kind": "environments.environment_context", "provenance": {"type": "harness"}}],
                },
            }),
        );
    }

    fn start_turn(&mut self, time: Timestamp) {
        self.end_turn(time);
        self.turn += 1;
        self.in_turn = true;
        self.line(time, "event_msg", json!({"type": "task_started", "turn_id": self.turn_id(), "model_context_window": 272000}));
    }

    fn end_turn(&mut self, time: Timestamp) {
        if !std::mem::replace(&mut self.in_turn, false) {
            return;
        }
        let last = std::mem::take(&mut self.last_answer);
        self.line(
            time,
            "event_msg",
            json!({"type": "task_complete", "turn_id": self.turn_id(), "last_agent_message": last, "duration_ms": 1200}),
        );
    }

    fn turn(&mut self, t: &SynthTurn) {
        match t {
            SynthTurn::User { text, time } => self.user(text, *time),
            SynthTurn::Assistant { text, time } => self.assistant(text, *time),
            SynthTurn::Reasoning { text, time } => self.reasoning(text, *time),
            SynthTurn::Shell { command, output, exit_code, time } => self.shell(command, output, *exit_code, *time),
            SynthTurn::Read { path, output, time } => self.shell(&format!("cat {}", shell_quote(path)), output, 0, *time),
            SynthTurn::Edit { path, old, new, time } => self.edit(path, old, new, *time),
        }
    }

    fn user(&mut self, text: &str, time: Timestamp) {
        self.start_turn(time);
        self.line(
            time,
            "response_item",
            json!({
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": text}],
                "internal_chat_message_metadata_passthrough": {
                    "content_item_kinds": ["user.text"],
                    "content_item_metadata": [{"kind": "user.text", "provenance": {"type": "user"}}],
                },
            }),
        );
        let id = format!("{}-u{}", self.s.id, self.ordinal);
        self.thread_event(time, json!({"type": "UserMessage", "id": id, "content": [{"type": "text", "text": text, "text_elements": []}]}));
    }

    fn ensure_turn(&mut self, time: Timestamp) {
        if !self.in_turn {
            self.start_turn(time);
        }
    }

    fn assistant(&mut self, text: &str, time: Timestamp) {
        self.ensure_turn(time);
        let id = format!("msg_{}", self.ordinal);
        self.line(
            time,
            "response_item",
            json!({"type": "message", "id": id, "role": "assistant", "content": [{"type": "output_text", "text": text, "annotations": []}]}),
        );
        self.thread_event(time, json!({"type": "AgentMessage", "id": id, "content": [{"type": "Text", "text": text}]}));
        let out_tokens = text.len() / 4 + 1;
        self.line(
            time,
            "token_usage_record",
            json!({
                "response_id": format!("resp_{}", self.ordinal),
                "usage": {"input_tokens": 2400, "cached_input_tokens": 2048, "output_tokens": out_tokens},
                "turn_token_usage": {"input_tokens": 2400, "output_tokens": out_tokens},
                "thread_token_usage": {"input_tokens": 2400 * self.turn, "output_tokens": out_tokens},
            }),
        );
        self.last_answer = text.to_string();
    }

    fn reasoning(&mut self, text: &str, time: Timestamp) {
        self.ensure_turn(time);
        self.line(
            time,
            "response_item",
            json!({
                "type": "reasoning",
                "id": format!("rs_{}", self.ordinal),
                "summary": [{"type": "summary_text", "text": text}],
                "content": null,
                "encrypted_content": "gAAAAABpc2ludGhldGljLXJlYXNvbmluZw==",
            }),
        );
    }

    fn next_call_id(&mut self) -> String {
        self.calls += 1;
        format!("call_{:04}", self.calls)
    }

    fn shell(&mut self, command: &str, output: &str, exit_code: i64, time: Timestamp) {
        self.ensure_turn(time);
        let call_id = self.next_call_id();
        let args = json!({"cmd": command, "workdir": self.s.project, "yield_time_ms": 10000}).to_string();
        self.line(
            time,
            "response_item",
            json!({"type": "function_call", "id": format!("fc_{}", self.calls), "name": "exec_command", "arguments": args, "call_id": call_id, "status": "completed"}),
        );
        let framed = format!(
            "Chunk ID: {:06x}\nWall time: 0.4 seconds\nProcess exited with code {exit_code}\nOriginal token count: {}\nOutput:\n{output}",
            self.calls * 7919,
            output.len() / 4
        );
        self.line(time, "response_item", json!({"type": "function_call_output", "call_id": call_id, "output": framed}));
        let status = if exit_code == 0 { "completed" } else { "failed" };
        self.thread_event(
            time,
            json!({
                "type": "CommandExecution",
                "id": call_id,
                "command": ["/bin/bash", "-lc", command],
                "cwd": file_uri(&self.s.project),
                "parsed_cmd": [{"type": "unknown", "cmd": command}],
                "process_id": format!("{}", 4000 + self.calls),
                "source": "unified_exec_startup",
                "status": status,
                "aggregated_output": output,
                "exit_code": exit_code,
                "duration": {"secs": 0, "nanos": 400_000_000},
            }),
        );
    }

    fn edit(&mut self, path: &str, old: &str, new: &str, time: Timestamp) {
        self.ensure_turn(time);
        let call_id = self.next_call_id();
        let (patch, output) = apply_patch(&self.s.project, path, old, new);
        self.line(
            time,
            "response_item",
            json!({"type": "custom_tool_call", "id": format!("ctc_{}", self.calls), "status": "completed", "call_id": call_id, "name": "apply_patch", "input": patch}),
        );
        self.line(time, "response_item", json!({"type": "custom_tool_call_output", "call_id": call_id, "output": output}));
    }
}

/// Codex's `apply_patch` envelope for one edit (paths relative to the project, as the
/// model writes them) and the tool's success output.
fn apply_patch(project: &str, path: &str, old: &str, new: &str) -> (String, String) {
    let project = project.trim_end_matches('/');
    let rel = path.strip_prefix(project).and_then(|r| r.strip_prefix('/')).filter(|r| !r.is_empty()).unwrap_or(path);
    let mut patch = String::from("*** Begin Patch\n");
    if old.is_empty() {
        let _ = writeln!(patch, "*** Add File: {rel}");
    } else {
        let _ = writeln!(patch, "*** Update File: {rel}\n@@");
        for l in old.lines() {
            let _ = writeln!(patch, "-{l}");
        }
    }
    for l in new.lines() {
        let _ = writeln!(patch, "+{l}");
    }
    patch.push_str("*** End Patch\n");
    let letter = if old.is_empty() { 'A' } else { 'M' };
    let output = format!("Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\n{letter} {rel}\n");
    (patch, output)
}

/// One TRAE CLI 0.200 rollout: no `ordinal` or `metadata`; the prompt is the
/// `user_message` event (TRAE's own `response_item` user messages are runtime
/// injections), and every call and result goes through a `history_mutation` append
/// before its `response_item` copy.
fn trae_rollout(s: &SynthSession) -> String {
    let mut w = Trae { out: String::with_capacity(4096) };
    let t0 = s.started;
    w.line(
        t0,
        "session_meta",
        json!({"id": s.id, "timestamp": t0.to_rfc3339(), "cwd": s.project, "originator": "codex-tui", "cli_version": "0.200.3"}),
    );
    w.line(t0, "turn_context", json!({"cwd": s.project, "approval_policy": "on-request", "model": "doubao-seed-code"}));
    let env = format!("<environment_context>\n  <cwd>{}</cwd>\n  <shell>bash</shell>\n</environment_context>", s.project);
    w.line(t0, "response_item", json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": env}]}));
    let dev = json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are TRAE, a coding agent."}]});
    w.line(t0, "response_item", dev);
    let (mut turns, mut calls) = (0u32, 0u32);
    for turn in &s.turns {
        match turn {
            SynthTurn::User { text, time } => {
                turns += 1;
                let turn_id = format!("{}-t{turns}", s.id);
                w.line(*time, "event_msg", json!({"type": "user_message", "message": text, "turn_id": turn_id, "images": []}));
            }
            SynthTurn::Assistant { text, time } => {
                let msg = json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]});
                w.line(*time, "response_item", msg);
                w.line(*time, "event_msg", json!({"type": "agent_message", "message": text}));
            }
            SynthTurn::Reasoning { text, time } => {
                let item = json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": text}], "content": null});
                w.line(*time, "response_item", item);
            }
            SynthTurn::Shell { command, output, exit_code, time } => {
                calls += 1;
                w.exec(s, calls, *time, command, output, *exit_code);
            }
            SynthTurn::Read { path, output, time } => {
                calls += 1;
                w.exec(s, calls, *time, &format!("cat {}", shell_quote(path)), output, 0);
            }
            SynthTurn::Edit { path, old, new, time } => {
                calls += 1;
                let call_id = format!("call_p{calls}");
                let (patch, output) = apply_patch(&s.project, path, old, new);
                w.item(*time, json!({"type": "custom_tool_call", "name": "apply_patch", "call_id": call_id, "input": patch}));
                w.item(*time, json!({"type": "custom_tool_call_output", "call_id": call_id, "output": output}));
            }
        }
    }
    w.out
}

struct Trae {
    out: String,
}

impl Trae {
    fn line(&mut self, time: Timestamp, kind: &str, payload: Value) {
        let _ = writeln!(self.out, "{}", json!({"timestamp": time.to_rfc3339(), "type": kind, "payload": payload}));
    }

    /// An item TRAE adds to the model's history: appended, then logged as a response item.
    fn item(&mut self, time: Timestamp, item: Value) {
        self.line(time, "history_mutation", json!({"operation": "append", "items": [item.clone()]}));
        self.line(time, "response_item", item);
    }

    /// TRAE's `exec` call (argv `command`) and its block-list output, whose first block
    /// is the exit-code frame.
    fn exec(&mut self, s: &SynthSession, n: u32, time: Timestamp, command: &str, output: &str, exit_code: i64) {
        let call_id = format!("call_x{n}");
        let args = json!({"command": ["bash", "-lc", command], "workdir": s.project}).to_string();
        self.item(time, json!({"type": "function_call", "name": "exec", "call_id": call_id, "arguments": args}));
        let frame = format!("Process exited with code {exit_code}\nOutput:\n");
        let blocks = json!([{"type": "text", "text": frame}, {"type": "text", "text": output}]);
        self.item(Timestamp(time.millis() + 1), json!({"type": "function_call_output", "call_id": call_id, "output": blocks}));
    }
}

fn payload_role(v: &Value) -> &str {
    v.get("payload").and_then(|p| p.get("role")).and_then(Value::as_str).unwrap_or("")
}

/// `file://` URI of an absolute path, percent-encoding what a URI path cannot hold.
fn file_uri(path: &str) -> String {
    let mut out = String::from("file://");
    if !path.starts_with('/') {
        out.push('/');
    }
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~:".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// Single-quotes a word for the shell when it needs it.
fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"/-._~+,:@".contains(&b)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

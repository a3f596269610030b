//! Writes a synthetic session as the current dsh generation would: a
//! `session.v4.jsonl.zstd` of several zstd frames (one per turn), with the noise a real
//! log carries (configuration rows, the runtime-context `user/message` after every
//! prompt, streamed deltas before every complete answer, a fallback then a provider
//! title) so a round trip proves the parser skips it.

use std::path::{Path, PathBuf};

use deja_core::{SynthSession, SynthTurn, Timestamp};
use serde_json::{json, Value};

use crate::workspace_slug;

/// The generation written, and its header version.
const GENERATION: u32 = 4;
const FALLBACK_TITLE_CHARS: usize = 48;

pub fn write(home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
    let dir = home.join(".dsh").join("sessions").join(workspace_slug(&session.project)).join(format!("session-{}", session.id));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("session.v{GENERATION}.jsonl.zstd"));
    let mut w = Writer::new(session);
    w.write_all()?;
    std::fs::write(&path, w.out)?;
    Ok(path)
}

struct Writer<'a> {
    s: &'a SynthSession,
    frame: String,
    out: Vec<u8>,
    seq: u64,
    turn: u64,
    step: u64,
    in_turn: bool,
    calls: u64,
    titled: bool,
}

impl<'a> Writer<'a> {
    fn new(s: &'a SynthSession) -> Self {
        Writer { s, frame: String::new(), out: Vec::new(), seq: 0, turn: 0, step: 0, in_turn: false, calls: 0, titled: false }
    }

    fn write_all(&mut self) -> std::io::Result<()> {
        let s = self.s;
        let header = json!({
            "type": "session", "version": GENERATION, "id": format!("session-{}", s.id),
            "createdAt": s.started.0, "cwd": s.project, "delegationDepth": 0,
        });
        self.line(&header);
        let t0 = s.started;
        self.event("permission/preset", t0, json!({"preset": "default"}));
        self.event("sandbox/mode", t0, json!({"mode": "workspace-write"}));
        self.event("approval/policy", t0, json!({"policy": "on-request"}));
        self.cut_frame()?;
        for turn in &s.turns {
            match turn {
                SynthTurn::User { text, time } => self.user(text, *time)?,
                SynthTurn::Assistant { text, time } => self.assistant(text, *time),
                SynthTurn::Reasoning { text, time } => self.reasoning(text, *time),
                SynthTurn::Shell { command, output, exit_code, time } => {
                    let args = json!({"command": command, "description": "Run a shell command"});
                    let result = if output.trim().is_empty() {
                        format!("[exit code: {exit_code}]")
                    } else {
                        format!("{}\n[exit code: {exit_code}]", output.trim_end())
                    };
                    self.tool("bash", args, &result, *time);
                }
                SynthTurn::Read { path, output, time } => self.tool("read", json!({"file_path": path}), output, *time),
                SynthTurn::Edit { path, old, new, time } => {
                    let args = json!({"file_path": path, "old_string": old, "new_string": new});
                    self.tool("edit", args, &format!("Applied 1 edit to {path}"), *time);
                }
            }
        }
        let end = s.turns.last().map_or(s.started, SynthTurn::time);
        self.end_turn(end);
        self.cut_frame()
    }

    fn line(&mut self, v: &Value) {
        self.frame.push_str(&v.to_string());
        self.frame.push('\n');
    }

    fn event(&mut self, kind: &str, time: Timestamp, data: Value) {
        self.seq += 1;
        let v = json!({"type": kind, "seq": self.seq, "time": time.0, "data": data});
        self.line(&v);
    }

    /// dsh flushes whole frames; each turn is one.
    fn cut_frame(&mut self) -> std::io::Result<()> {
        if !self.frame.is_empty() {
            let frame = zstd::bulk::compress(self.frame.as_bytes(), 1)?;
            self.out.extend_from_slice(&frame);
            self.frame.clear();
        }
        Ok(())
    }

    fn begin_turn(&mut self, time: Timestamp) {
        if !self.in_turn {
            self.turn += 1;
            self.step = 0;
            self.in_turn = true;
            self.event("turn/start", time, json!({"turn": self.turn}));
        }
    }

    /// Ends the open turn; the provider's title lands after the first `turn/end`, as dsh
    /// writes it once the title request returns.
    fn end_turn(&mut self, time: Timestamp) {
        if !self.in_turn {
            return;
        }
        self.in_turn = false;
        self.event("turn/end", time, json!({"turn": self.turn, "reason": "stop"}));
        if !self.titled {
            self.titled = true;
            if let Some(title) = &self.s.title {
                let data = json!({"title": title, "source": {"kind": "provider"}});
                self.event("session/title", time, data);
            }
        }
    }

    fn user(&mut self, text: &str, time: Timestamp) -> std::io::Result<()> {
        self.end_turn(time);
        self.cut_frame()?;
        self.begin_turn(time);
        let turn = self.turn;
        let prompt = json!({"turn": turn, "role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}});
        self.event("user/message", time, prompt);
        let context =
            format!("Current runtime context:\n- workspace: {}\n- sandbox: workspace-write\n- approval policy: on-request", self.s.project);
        let snapshot = json!({
            "turn": turn, "role": "user", "content": [{"type": "text", "text": context}],
            "source": {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt"},
            "sections": ["sandbox", "approval"],
        });
        self.event("user/message", time, snapshot);
        if turn == 1 {
            let title: String = text.split_whitespace().collect::<Vec<_>>().join(" ").chars().take(FALLBACK_TITLE_CHARS).collect();
            self.event("session/title", time, json!({"title": title, "source": {"kind": "fallback"}}));
        }
        Ok(())
    }

    fn begin_step(&mut self, time: Timestamp) -> Value {
        self.begin_turn(time);
        self.step += 1;
        let ids = json!({"turn": self.turn, "step": self.step});
        self.event("step/start", time, ids.clone());
        ids
    }

    fn end_step(&mut self, time: Timestamp) {
        self.event("step/end", time, json!({"turn": self.turn, "step": self.step}));
    }

    /// Streamed first (one delta row, then the rest packed), then the complete message.
    fn assistant(&mut self, text: &str, time: Timestamp) {
        let ids = self.begin_step(time);
        let pieces = split_pieces(text, 4);
        if let Some((first, rest)) = pieces.split_first() {
            let data = json!({"turn": ids["turn"], "step": ids["step"], "chunk": {"type": "text-delta", "text": first}});
            self.event("assistant/chunk", time, data);
            if !rest.is_empty() {
                self.seq += 1;
                let dt: Vec<u64> = (1..rest.len()).map(|i| i as u64 * 7).collect();
                let row = json!({
                    "type": "text-chunks", "seq0": self.seq, "time0": time.0,
                    "data": {"turn": ids["turn"], "step": ids["step"], "index": 0, "dt": dt, "texts": rest},
                });
                self.seq += rest.len() as u64 - 1;
                self.line(&row);
            }
        }
        let message = json!({"role": "assistant", "content": [{"type": "text", "text": text}]});
        self.event("assistant/message", time, json!({"turn": ids["turn"], "step": ids["step"], "message": message}));
        self.end_step(time);
    }

    fn reasoning(&mut self, text: &str, time: Timestamp) {
        let ids = self.begin_step(time);
        let message = json!({"role": "assistant", "content": [{"type": "reasoning", "text": text}]});
        self.event("assistant/message", time, json!({"turn": ids["turn"], "step": ids["step"], "message": message}));
        self.end_step(time);
    }

    /// The call as dsh stores it: packed argument chunks, the assistant message's
    /// `tool-call` block, the `tool/call` event and a v4 tool-role result.
    fn tool(&mut self, name: &str, args: Value, result: &str, time: Timestamp) {
        let ids = self.begin_step(time);
        self.calls += 1;
        let call_id = format!("call_{:04}", self.calls);
        let args_json = args.to_string();
        self.seq += 1;
        let chunks = json!({
            "type": "tool-call-chunks", "seq0": self.seq, "time0": time.0,
            "data": {"turn": ids["turn"], "step": ids["step"], "id": call_id, "name": name, "args": [args_json], "dt": []},
        });
        self.line(&chunks);
        let block = json!({"type": "tool-call", "id": call_id, "name": name, "arguments": args});
        let message = json!({"role": "assistant", "content": [block]});
        self.event("assistant/message", time, json!({"turn": ids["turn"], "step": ids["step"], "message": message}));
        self.event(
            "tool/call",
            time,
            json!({"turn": ids["turn"], "step": ids["step"], "callId": call_id, "name": name, "arguments": args_json}),
        );
        let message = json!({
            "role": "tool", "source": {"kind": "tool", "callId": call_id},
            "content": [{"type": "text", "text": result}], "isError": false,
        });
        self.event("tool/result", time, json!({"turn": ids["turn"], "step": ids["step"], "message": message}));
        self.end_step(time);
    }
}

/// Up to `n` pieces cut on char boundaries, concatenating back to `text`.
fn split_pieces(text: &str, n: usize) -> Vec<&str> {
    if text.is_empty() {
        return Vec::new();
    }
    let size = text.len().div_ceil(n).max(1);
    let mut pieces = Vec::with_capacity(n);
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        pieces.push(&text[start..end]);
        start = end;
    }
    pieces
}

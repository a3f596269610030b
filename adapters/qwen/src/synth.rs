//! Qwen Code's synthetic writer: a [`SynthSession`] as Qwen Code 0.15.10 writes a
//! transcript, `~/.qwen/projects/<sanitized-cwd>/chats/<session-id>.jsonl` — one line per
//! record chained by `uuid`/`parentUuid`, each with `sessionId`, `timestamp`, `type`,
//! `cwd` and `version`; `user` and `assistant` bodies are Gemini-API parts (thoughts as
//! `thought: true` parts on the assistant line they preceded), and each call's result is
//! a `tool_result` line with its `functionResponse` part and `toolCallResult`.

use std::path::{Path, PathBuf};

use deja_core::family::gemini_synth::{thought_part, GeminiCall};
use deja_core::synth::synth_uuid;
use deja_core::{SynthSession, SynthTurn, Timestamp};
use serde_json::{json, Value};

/// The release a synthetic transcript claims (the first to write `cwd` on every line).
const VERSION: &str = "0.15.10";

/// Writes `s` where discovery finds it and returns the transcript.
pub fn write(home: &Path, s: &SynthSession) -> std::io::Result<PathBuf> {
    let chats = home.join(".qwen/projects").join(sanitize_cwd(&s.project)).join("chats");
    std::fs::create_dir_all(&chats)?;
    let path = chats.join(format!("{}.jsonl", s.id));
    std::fs::write(&path, render(s))?;
    Ok(path)
}

/// Qwen's project directory name: every character outside `[A-Za-z0-9]` a `-`.
fn sanitize_cwd(cwd: &str) -> String {
    cwd.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

struct Lines<'a> {
    s: &'a SynthSession,
    out: String,
    salt: u64,
    n: u64,
    parent: Option<String>,
}

impl Lines<'_> {
    /// One record with Qwen's envelope, chained to the previous one.
    fn record(&mut self, time: Timestamp, kind: &str, fields: Value) {
        self.n += 1;
        let uuid = synth_uuid(self.n, self.salt);
        let mut v = json!({
            "uuid": uuid,
            "parentUuid": self.parent,
            "sessionId": self.s.id,
            "timestamp": time.to_rfc3339(),
            "type": kind,
            "cwd": self.s.project,
            "version": VERSION,
        });
        if let (Some(obj), Value::Object(extra)) = (v.as_object_mut(), fields) {
            obj.extend(extra);
        }
        self.out.push_str(&v.to_string());
        self.out.push('\n');
        self.parent = Some(uuid);
    }

    fn assistant(&mut self, time: Timestamp, parts: Vec<Value>) {
        self.record(time, "assistant", json!({"model": "qwen3-coder-plus", "message": {"role": "model", "parts": parts}}));
    }
}

fn render(s: &SynthSession) -> String {
    let salt = s.id.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b.into()));
    let mut w = Lines { s, out: String::new(), salt, n: 0, parent: None };
    // Thought parts ride on the assistant line that follows them.
    let mut thoughts: Vec<Value> = Vec::new();
    let mut calls = 0usize;
    for turn in &s.turns {
        match turn {
            SynthTurn::User { text, time } => {
                w.record(*time, "user", json!({"message": {"role": "user", "parts": [{"text": text}]}}));
            }
            SynthTurn::Reasoning { text, .. } => thoughts.push(thought_part(text)),
            SynthTurn::Assistant { text, time } => {
                let mut parts = std::mem::take(&mut thoughts);
                parts.push(json!({"text": text}));
                w.assistant(*time, parts);
            }
            SynthTurn::Shell { .. } | SynthTurn::Read { .. } | SynthTurn::Edit { .. } => {
                calls += 1;
                let Some(call) = GeminiCall::of(turn, calls, &s.project) else { continue };
                let mut parts = std::mem::take(&mut thoughts);
                parts.push(call.call_part());
                w.assistant(call.time, parts);
                // A command that ran and failed is still a successful call; its exit code says it failed.
                let result = json!({
                    "message": {"role": "user", "parts": [call.response_part()]},
                    "toolCallResult": {"callId": call.id, "status": "success", "resultDisplay": call.display},
                });
                w.record(Timestamp(call.time.millis() + 1), "tool_result", result);
            }
        }
    }
    if !thoughts.is_empty() {
        w.assistant(s.turns.last().map_or(s.started, SynthTurn::time), thoughts);
    }
    w.out
}

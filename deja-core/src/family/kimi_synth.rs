//! The Kimi Code wire-protocol synthetic writer: lays a [`SynthSession`] out as Kimi Code
//! (and the Kimi desktop app's agent, which embeds the same kernel) stores a session, so
//! the demo home, the benchmark corpora and the conformance round trip go through the
//! real discovery and the [`kimi_wire`](super::kimi_wire) reader.
//!
//! A session is `<sessions>/<workDirKey>/<session dir>/` with `state.json` (`createdAt`,
//! `updatedAt`, `title`, `lastPrompt`, `workDir`, `agents`) and the main agent's
//! `agents/main/wire.jsonl`: a `metadata` line, the `config.update` system prompt, then per
//! prompt a `turn.prompt` and a `context.append_message`, and the agent's work as loop
//! events — `step.begin`, streamed `content.part`s (`think` and `text`), `tool.call` /
//! `tool.result` pairs with Kimi's tool names (`Bash`, `Read`, `Edit`), `step.end` after
//! the step's tool results, and a `usage.record`. Where the sessions directory is and how
//! the session directory is named differ per harness, so both are arguments.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::synth::{splitmix64, SynthSession, SynthTurn};
use crate::time::Timestamp;

/// Kimi Code's directory key for a working directory: `wd_<base name>_<12 hex>`, the hex
/// a hash of the whole path so two projects of one name stay apart.
pub fn work_dir_key(work_dir: &str) -> String {
    let base: String = work_dir
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or("")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c.to_ascii_lowercase() } else { '_' })
        .collect();
    let hash = splitmix64(fold(work_dir)) & 0xffff_ffff_ffff;
    format!("wd_{}_{hash:012x}", if base.is_empty() { "root" } else { &base })
}

fn fold(text: &str) -> u64 {
    text.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b.into()))
}

/// Writes `s` as the session directory `dir_name` under `sessions` (the directory the
/// work-dir keys sit in) and returns the main agent's `wire.jsonl`.
pub fn write_session(sessions: &Path, dir_name: &str, s: &SynthSession) -> std::io::Result<PathBuf> {
    let dir = sessions.join(work_dir_key(&s.project)).join(dir_name);
    let main = dir.join("agents/main");
    std::fs::create_dir_all(&main)?;
    std::fs::write(dir.join("state.json"), state(s).to_string())?;
    let path = main.join("wire.jsonl");
    std::fs::write(&path, render(s))?;
    Ok(path)
}

/// The session's `state.json`: its title (else the first prompt's line), work dir, times.
fn state(s: &SynthSession) -> Value {
    let prompts: Vec<&str> =
        s.turns.iter().filter_map(|t| if let SynthTurn::User { text, .. } = t { Some(text.as_str()) } else { None }).collect();
    let title = s.title.clone().unwrap_or_else(|| prompts.first().and_then(|p| p.lines().next()).unwrap_or("").chars().take(60).collect());
    let end = s.turns.last().map_or(s.started, SynthTurn::time);
    json!({
        "createdAt": s.started.to_rfc3339(),
        "updatedAt": end.to_rfc3339(),
        "title": title,
        "isCustomTitle": s.title.is_some(),
        "lastPrompt": prompts.last().copied().unwrap_or(""),
        "workDir": s.project,
        "agents": {"main": {"type": "main", "parentAgentId": null}},
        "custom": {},
    })
}

struct Wire {
    out: String,
    steps: u32,
    turns: u32,
    /// The open step's uuid.
    step: Option<String>,
    calls: u32,
}

impl Wire {
    fn line(&mut self, v: Value) {
        self.out.push_str(&v.to_string());
        self.out.push('\n');
    }

    fn event(&mut self, time: Timestamp, event: Value) {
        self.line(json!({"type": "context.append_loop_event", "event": event, "time": time.millis()}));
    }

    /// The open step, begun when the agent's first output of a step arrives.
    fn step(&mut self, time: Timestamp) -> String {
        if let Some(id) = &self.step {
            return id.clone();
        }
        self.steps += 1;
        let id = format!("s{}", self.steps);
        let event = json!({"type": "step.begin", "uuid": id, "turnId": format!("t{}", self.turns), "step": self.steps - 1});
        self.event(time, event);
        self.step = Some(id.clone());
        id
    }

    fn end_step(&mut self, time: Timestamp) {
        if let Some(id) = self.step.take() {
            self.event(time, json!({"type": "step.end", "uuid": id}));
            self.line(json!({"type": "usage.record", "usage": {"input": 900, "output": 40}, "time": time.millis() + 1}));
        }
    }

    fn part(&mut self, time: Timestamp, kind: &str, text: &str) {
        let step = self.step(time);
        self.event(time, json!({"type": "content.part", "stepUuid": step, "part": {"type": kind, "text": text}}));
    }

    /// A tool call and its result; the step ends after its results, as Kimi's loop does
    /// before the next model call.
    fn tool(&mut self, time: Timestamp, name: &str, args: Value, output: &str, is_error: bool) {
        self.step(time);
        self.calls += 1;
        let id = format!("k{}", self.calls);
        self.event(time, json!({"type": "tool.call", "toolCallId": id, "name": name, "args": args}));
        let mut result = json!({"output": output});
        if is_error {
            result["isError"] = Value::Bool(true);
        }
        let done = Timestamp(time.millis() + 1);
        self.event(done, json!({"type": "tool.result", "toolCallId": id, "result": result}));
        self.end_step(Timestamp(done.millis() + 1));
    }
}

fn render(s: &SynthSession) -> String {
    let mut w = Wire { out: String::new(), steps: 0, turns: 0, step: None, calls: 0 };
    let t0 = s.started.millis();
    w.line(json!({"type": "metadata", "protocol_version": "1.4", "created_at": t0}));
    w.line(json!({"type": "config.update", "systemPrompt": "You are Kimi Code, a coding agent.", "time": t0}));
    let mut prev = s.started;
    for turn in &s.turns {
        let time = turn.time();
        let last = std::mem::replace(&mut prev, time);
        match turn {
            SynthTurn::User { text, .. } => {
                // A closing record's time is the last turn's, as at the end of the file, so a session
                // grown by more turns re-renders its earlier lines byte for byte (the corpus `grow`).
                w.end_step(last);
                w.turns += 1;
                w.line(json!({"type": "turn.prompt", "prompt": text, "time": time.millis()}));
                let message = json!({"role": "user", "content": [{"type": "text", "text": text}], "toolCalls": []});
                w.line(json!({"type": "context.append_message", "message": message, "time": time.millis()}));
                w.event(time, json!({"type": "llm.request", "model": "kimi-k2"}));
            }
            SynthTurn::Assistant { text, .. } => w.part(time, "text", text),
            SynthTurn::Reasoning { text, .. } => w.part(time, "think", text),
            SynthTurn::Shell { command, output, exit_code, .. } => {
                w.tool(time, "Bash", json!({"command": command, "timeout": 120}), output, *exit_code != 0);
            }
            SynthTurn::Read { path, output, .. } => w.tool(time, "Read", json!({"path": path}), output, false),
            SynthTurn::Edit { path, old, new, .. } => {
                let args = json!({"path": path, "old_string": old, "new_string": new});
                w.tool(time, "Edit", args, &format!("Edited {path}"), false);
            }
        }
    }
    w.end_step(s.turns.last().map_or(s.started, SynthTurn::time));
    w.out
}

//! Copilot CLI's synthetic writer: a [`SynthSession`] as Copilot CLI 1.0.102 stores it,
//! `~/.copilot/session-state/<session-id>/events.jsonl` with `workspace.yaml` beside it.
//! Events are chained by `id`/`parentId` from `session.start`: each prompt a
//! `user.message` opening an `assistant.turn_start` … `assistant.turn_end` turn, each
//! tool an `assistant.message` with its `toolRequests[]`, then `tool.execution_start` and
//! `tool.execution_complete` (`bash` output ending in the `<shellId: N completed with exit
//! code N>` line, `shellExecution.exitCode`), answers as `assistant.message` content.
//! Copilot's log keeps no reasoning text, so reasoning turns are left out.

use std::path::{Path, PathBuf};

use deja_core::synth::synth_uuid;
use deja_core::{SynthSession, SynthTurn, Timestamp};
use serde_json::{json, Value};

const VERSION: &str = "1.0.102";
const MODEL: &str = "claude-sonnet-4.5";

/// Writes `s` where discovery finds it and returns the event log.
pub fn write(home: &Path, s: &SynthSession) -> std::io::Result<PathBuf> {
    let dir = home.join(".copilot/session-state").join(&s.id);
    std::fs::create_dir_all(&dir)?;
    let end = s.turns.last().map_or(s.started, SynthTurn::time);
    let name = s.title.clone().unwrap_or_else(|| first_prompt(s));
    let yaml = format!(
        "id: {}\ncwd: {}\nclient_name: github/cli\nname: {}\nuser_named: false\nsummary_count: 0\nfork_count: 0\ncreated_at: {}\nupdated_at: {}\n",
        s.id,
        yaml_str(&s.project),
        yaml_str(&name),
        s.started.to_rfc3339(),
        end.to_rfc3339()
    );
    std::fs::write(dir.join("workspace.yaml"), yaml)?;
    let path = dir.join("events.jsonl");
    std::fs::write(&path, render(s))?;
    Ok(path)
}

fn first_prompt(s: &SynthSession) -> String {
    let text = s.turns.iter().find_map(|t| if let SynthTurn::User { text, .. } = t { Some(text.as_str()) } else { None });
    text.unwrap_or("").lines().next().unwrap_or("").chars().take(80).collect()
}

/// A YAML scalar: plain when it is safe, else double-quoted (JSON's escaping is YAML's).
fn yaml_str(text: &str) -> String {
    let plain = !text.is_empty()
        && !text.starts_with(|c: char| "!&*-?{}[],#|>@`\"'%: ".contains(c))
        && !text.contains(": ")
        && !text.contains(" #")
        && !text.ends_with([' ', ':']);
    if plain {
        text.to_string()
    } else {
        Value::from(text).to_string()
    }
}

struct Events {
    out: String,
    salt: u64,
    n: u64,
    parent: Option<String>,
}

impl Events {
    fn event(&mut self, time: Timestamp, kind: &str, data: Value) {
        self.n += 1;
        let id = synth_uuid(self.n, self.salt);
        let v = json!({"type": kind, "data": data, "id": id, "timestamp": time.to_rfc3339(), "parentId": self.parent});
        self.out.push_str(&v.to_string());
        self.out.push('\n');
        self.parent = Some(id);
    }
}

fn render(s: &SynthSession) -> String {
    let salt = s.id.bytes().fold(0x0063_6f70_696c_6f74_u64, |h, b| h.wrapping_mul(31).wrapping_add(b.into()));
    let mut w = Events { out: String::new(), salt, n: 0, parent: None };
    let t0 = s.started;
    let start = json!({
        "sessionId": s.id,
        "version": 1,
        "producer": "copilot-agent",
        "copilotVersion": VERSION,
        "startTime": t0.to_rfc3339(),
        "context": {"cwd": s.project},
    });
    w.event(t0, "session.start", start);
    w.event(t0, "system.message", json!({"role": "system", "content": "You are the GitHub Copilot CLI, a terminal assistant."}));
    w.event(t0, "session.model_change", json!({"newModel": MODEL}));
    let (mut turn, mut msgs, mut calls) = (0u32, 0u32, 0u32);
    let mut open_turn: Option<String> = None;
    let mut prompt_id = String::new();
    let mut prev = t0;
    for t in &s.turns {
        let time = t.time();
        let last = std::mem::replace(&mut prev, time);
        match t {
            SynthTurn::User { text, .. } => {
                if let Some(id) = open_turn.take() {
                    // A closing record's time is the last turn's, as at the end of the file, so a session
                    // grown by more turns re-renders its earlier lines byte for byte (the corpus `grow`).
                    w.event(Timestamp(last.millis() + 3), "assistant.turn_end", json!({"turnId": id}));
                }
                turn += 1;
                msgs += 1;
                let turn_id = format!("t{turn}");
                prompt_id = format!("m{msgs}");
                let transformed = format!("<current_datetime>{}</current_datetime>\n{text}", time.to_rfc3339());
                let data = json!({
                    "content": text,
                    "transformedContent": transformed,
                    "messageId": prompt_id,
                    "interactionId": format!("i{turn}"),
                    "turnId": turn_id,
                    "parentAgentTaskId": null,
                    "delivery": "direct",
                });
                w.event(time, "user.message", data);
                w.event(Timestamp(time.millis() + 1), "assistant.turn_start", json!({"turnId": turn_id}));
                open_turn = Some(turn_id);
            }
            SynthTurn::Assistant { text, .. } => {
                msgs += 1;
                let data = json!({"messageId": format!("a{msgs}"), "originatingMessageId": prompt_id, "model": MODEL, "content": text, "toolRequests": []});
                w.event(time, "assistant.message", data);
            }
            // The event log has no reasoning text.
            SynthTurn::Reasoning { .. } => {}
            SynthTurn::Shell { .. } | SynthTurn::Read { .. } | SynthTurn::Edit { .. } => {
                calls += 1;
                msgs += 1;
                let call_id = format!("call_{calls}");
                let (name, args, content, exit) = match t {
                    SynthTurn::Shell { command, output, exit_code, .. } => {
                        let content = format!("{output}\n<shellId: {calls} completed with exit code {exit_code}>");
                        ("bash", json!({"command": command, "description": "Run the command"}), content, Some(*exit_code))
                    }
                    SynthTurn::Read { path, output, .. } => ("read", json!({"path": path}), output.clone(), None),
                    SynthTurn::Edit { path, old, new, .. } => {
                        ("edit", json!({"path": path, "old_str": old, "new_str": new}), format!("File {path} updated with changes."), None)
                    }
                    _ => continue,
                };
                let request = json!({"toolCallId": call_id, "name": name, "arguments": args, "type": "function"});
                let data = json!({"messageId": format!("a{msgs}"), "originatingMessageId": prompt_id, "model": MODEL, "content": "", "toolRequests": [request]});
                w.event(time, "assistant.message", data);
                let mut start = json!({"toolCallId": call_id, "toolName": name, "arguments": args});
                if exit.is_some() {
                    start["shellToolInfo"] = json!({"shellId": calls});
                }
                w.event(Timestamp(time.millis() + 1), "tool.execution_start", start);
                let mut done = json!({"toolCallId": call_id, "success": exit.is_none_or(|c| c == 0), "result": {"content": content}, "toolTelemetry": {}});
                if let Some(code) = exit {
                    done["shellExecution"] = json!({"exitCode": code});
                }
                w.event(Timestamp(time.millis() + 2), "tool.execution_complete", done);
            }
        }
    }
    let end = s.turns.last().map_or(t0, SynthTurn::time);
    if let Some(id) = open_turn {
        w.event(Timestamp(end.millis() + 3), "assistant.turn_end", json!({"turnId": id}));
    }
    w.event(Timestamp(end.millis() + 4), "session.shutdown", json!({}));
    w.out
}

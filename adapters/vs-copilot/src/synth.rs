//! Visual Studio Copilot's synthetic writer: a [`SynthSession`] as the OpenTelemetry trace
//! export Copilot in Visual Studio leaves, one file
//! `<YYYYMMDDTHHMMSS>_<hex>_VSGitHubCopilot_traces.jsonl` per session in the traces
//! directory discovery looks in on this OS. Each line is one OTLP/JSON envelope holding
//! one span, all with the session id as `gen_ai.conversation.id`: an `invoke_agent` span
//! per prompt, a `chat` span per model call (`gen_ai.input.messages` repeating the
//! history up to the prompt, `gen_ai.output.messages` with text and `tool_call` parts) and
//! an `execute_tool` span per call (`run_command_in_terminal` with `command`, `get_file`
//! with `filename`, `edit_file` with `filename` and a unified `patch`; the result as a
//! `{"Value": …}` string). Spans carry no reasoning and no exit status, so neither is
//! written.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use deja_core::synth::splitmix64;
use deja_core::{StoreEnv, SynthSession, SynthTurn, Timestamp};
use serde_json::{json, Value};

/// Writes `s` where discovery finds it with only `HOME` set and returns the trace file.
pub fn write(home: &Path, s: &SynthSession) -> std::io::Result<PathBuf> {
    let dir = super::INFO
        .store
        .root(super::ID, &StoreEnv::with_home(home))
        .ok_or_else(|| std::io::Error::other("no Visual Studio Copilot store on this OS"))?;
    std::fs::create_dir_all(&dir)?;
    let stamp = s.started.to_datetime().map_or_else(|| "19700101T000000".to_string(), |d| d.format("%Y%m%dT%H%M%S").to_string());
    // The hex part tells apart exports started in the same second; it comes from the id.
    let hex = format!("{:04x}", splitmix64(fold(&s.id)) & 0xffff);
    let path = dir.join(format!("{stamp}_{hex}_VSGitHubCopilot_traces.jsonl"));
    std::fs::write(&path, render(s))?;
    Ok(path)
}

fn fold(text: &str) -> u64 {
    text.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b.into()))
}

fn attr(key: &str, value: Value) -> Value {
    let typed = match value {
        Value::Number(n) => json!({ "intValue": n.to_string() }),
        Value::Bool(b) => json!({ "boolValue": b }),
        Value::String(s) => json!({ "stringValue": s }),
        other => json!({ "stringValue": other.to_string() }),
    };
    json!({ "key": key, "value": typed })
}

struct Trace<'a> {
    s: &'a SynthSession,
    out: String,
    trace_id: String,
    spans: u64,
}

impl Trace<'_> {
    /// One envelope line holding one span of `operation` with these attributes.
    fn span(&mut self, name: &str, time: Timestamp, operation: &str, attrs: Vec<Value>) {
        self.spans += 1;
        let start = i128::from(time.millis()) * 1_000_000;
        let mut attributes =
            vec![attr("gen_ai.operation.name", operation.into()), attr("gen_ai.conversation.id", self.s.id.as_str().into())];
        attributes.extend(attrs);
        let span = json!({
            "traceId": self.trace_id,
            "spanId": format!("{:016x}", splitmix64(fold(&self.trace_id) ^ self.spans)),
            "name": name,
            "startTimeUnixNano": start.to_string(),
            "endTimeUnixNano": (start + 500_000_000).to_string(),
            "attributes": attributes,
        });
        let envelope = json!({"resourceSpans": [{
            "resource": {"attributes": [attr("service.name", "VSGitHubCopilot".into())]},
            "scopeSpans": [{"scope": {"name": "copilot"}, "spans": [span]}],
        }]});
        let _ = writeln!(self.out, "{envelope}");
    }
}

fn text_message(role: &str, text: &str) -> Value {
    json!({"role": role, "parts": [{"type": "text", "content": text}]})
}

/// A unified diff of one replaced span, as the `edit_file` tool's `patch`.
fn patch(file: &str, old: &str, new: &str) -> String {
    let mut p = format!("--- a/{file}\n+++ b/{file}\n@@ -1,{} +1,{} @@\n", old.lines().count(), new.lines().count());
    for l in old.lines() {
        let _ = writeln!(p, "-{l}");
    }
    for l in new.lines() {
        let _ = writeln!(p, "+{l}");
    }
    p
}

fn render(s: &SynthSession) -> String {
    let trace_id = format!("{:016x}{:016x}", splitmix64(fold(&s.id)), splitmix64(fold(&s.project)));
    let mut w = Trace { s, out: String::new(), trace_id, spans: 0 };
    // The chat history every `chat` span's input repeats.
    let mut history = vec![text_message("system", "You are Copilot in Visual Studio.")];
    let (mut prompts, mut calls) = (0u32, 0u32);
    for turn in &s.turns {
        let time = turn.time();
        let chat = |w: &mut Trace, history: &[Value], output: Value| {
            let input = Value::Array(history.to_vec()).to_string();
            let attrs = vec![
                attr("gen_ai.request.model", "gpt-4.1".into()),
                attr("gen_ai.input.messages", input.into()),
                attr("gen_ai.output.messages", json!([output]).to_string().into()),
                attr("gen_ai.usage.input_tokens", 1200.into()),
                attr("gen_ai.usage.output_tokens", 30.into()),
            ];
            w.span("chat gpt-4.1", time, "chat", attrs);
        };
        match turn {
            SynthTurn::User { text, .. } => {
                prompts += 1;
                let attrs = vec![attr("copilot_chat.mode", "Agent".into()), attr("copilot_chat.turn_count", i64::from(prompts).into())];
                w.span("invoke_agent", time, "invoke_agent", attrs);
                history.push(text_message("user", text));
            }
            SynthTurn::Assistant { text, .. } => {
                let output = text_message("assistant", text);
                chat(&mut w, &history, output.clone());
                history.push(output);
            }
            // The spans keep no reasoning.
            SynthTurn::Reasoning { .. } => {}
            SynthTurn::Shell { .. } | SynthTurn::Read { .. } | SynthTurn::Edit { .. } => {
                calls += 1;
                let id = format!("k{calls}");
                let (name, args, result) = match turn {
                    SynthTurn::Shell { command, output, .. } => ("run_command_in_terminal", json!({"command": command}), output.clone()),
                    SynthTurn::Read { path, output, .. } => ("get_file", json!({"filename": path}), output.clone()),
                    SynthTurn::Edit { path, old, new, .. } => {
                        ("edit_file", json!({"filename": path, "patch": patch(path, old, new)}), format!("Edited {path}"))
                    }
                    _ => continue,
                };
                let args = args.to_string();
                let output = json!({"role": "assistant", "parts": [{"type": "tool_call", "id": id, "name": name, "arguments": args}]});
                chat(&mut w, &history, output.clone());
                history.push(output);
                let attrs = vec![
                    attr("gen_ai.tool.name", name.into()),
                    attr("gen_ai.tool.call.id", id.as_str().into()),
                    attr("gen_ai.tool.call.arguments", args.into()),
                    attr("gen_ai.tool.call.result", json!({ "Value": result }).to_string().into()),
                ];
                w.span(&format!("execute_tool {name}"), Timestamp(time.millis() + 1), "execute_tool", attrs);
            }
        }
    }
    w.out
}

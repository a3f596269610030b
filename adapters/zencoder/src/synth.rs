//! Zencoder's synthetic writer: a [`SynthSession`] as Zencoder's agent stores a session,
//! `~/.zencoder/sessions/<session-id>.jsonl`: the header line (`id`, `chatId`, `modelId`,
//! `creationReason: newChat`, times), the `system` environment banner naming the
//! working directory, `user` prompts as `user-input` text parts, `assistant` messages of
//! `reasoning` / `text` / `tool-call` parts (Claude Code's tool names and input keys:
//! `Bash` `command`, `Read` `file_path`, `Edit` `old_string`/`new_string`), `tool`
//! messages of `tool-result` parts (`shell-result`, `text-file-chunk`, `text`), and a
//! `finish` line closing each model turn.

use std::path::{Path, PathBuf};

use deja_core::{SynthSession, SynthTurn, Timestamp};
use serde_json::{json, Value};

/// Writes `s` where discovery finds it and returns the session file.
pub fn write(home: &Path, s: &SynthSession) -> std::io::Result<PathBuf> {
    let dir = home.join(".zencoder/sessions");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("{}.jsonl", s.id));
    std::fs::write(&path, render(s))?;
    Ok(path)
}

fn render(s: &SynthSession) -> String {
    let mut out = String::new();
    let mut line = |v: Value| {
        out.push_str(&v.to_string());
        out.push('\n');
    };
    let t0 = s.started.to_rfc3339();
    let end = s.turns.last().map_or(s.started, SynthTurn::time).to_rfc3339();
    // The header is written once, when the session starts (the file only grows after it),
    // so its `updatedAt` is the start too.
    line(
        json!({"id": s.id, "chatId": format!("chat-{}", s.id), "modelId": "zencoder-auto", "parentId": "", "creationReason": "newChat", "createdAt": t0, "updatedAt": t0, "version": "1"}),
    );
    line(json!({"role": "system", "content": format!("Environment\nWorking directory: {}\nOS: linux", s.project), "createdAt": t0}));
    // Zencoder puts a step's reasoning in the assistant message that follows it.
    let mut reasoning: Vec<Value> = Vec::new();
    let mut calls = 0u32;
    let mut open = false;
    let mut prev = s.started;
    for turn in &s.turns {
        let at = turn.time().to_rfc3339();
        let last = std::mem::replace(&mut prev, turn.time());
        match turn {
            SynthTurn::User { text, .. } => {
                if std::mem::take(&mut open) {
                    // A closing record's time is the last turn's, as at the end of the file, so a session
                    // grown by more turns re-renders its earlier lines byte for byte (the corpus `grow`).
                    line(json!({"role": "finish", "reason": "stop", "createdAt": last.to_rfc3339()}));
                }
                line(json!({"role": "user", "content": [{"type": "text", "text": text, "tag": "user-input"}], "createdAt": at}));
            }
            SynthTurn::Reasoning { text, .. } => reasoning.push(json!({"type": "reasoning", "text": text})),
            SynthTurn::Assistant { text, .. } => {
                let mut parts = std::mem::take(&mut reasoning);
                parts.push(json!({"type": "text", "text": text}));
                line(json!({"role": "assistant", "content": parts, "createdAt": at}));
                open = true;
            }
            SynthTurn::Shell { .. } | SynthTurn::Read { .. } | SynthTurn::Edit { .. } => {
                calls += 1;
                let id = format!("tc{calls}");
                let (name, input, kind, result, is_error) = match turn {
                    SynthTurn::Shell { command, output, exit_code, .. } => {
                        ("Bash", json!({"command": command}), "shell-result", output.clone(), *exit_code != 0)
                    }
                    SynthTurn::Read { path, output, .. } => ("Read", json!({"file_path": path}), "text-file-chunk", output.clone(), false),
                    SynthTurn::Edit { path, old, new, .. } => {
                        ("Edit", json!({"file_path": path, "old_string": old, "new_string": new}), "text", "Edited".to_string(), false)
                    }
                    _ => continue,
                };
                let mut parts = std::mem::take(&mut reasoning);
                parts.push(json!({"type": "tool-call", "toolCallId": id, "toolName": name, "input": input}));
                line(json!({"role": "assistant", "content": parts, "createdAt": at}));
                let done = Timestamp(turn.time().millis() + 1).to_rfc3339();
                line(json!({"role": "finish", "reason": "tool-calls", "createdAt": done}));
                let result = json!({"type": "tool-result", "toolCallId": id, "toolName": name, "content": [{"type": kind, "text": result}], "isError": is_error});
                line(json!({"role": "tool", "content": [result], "createdAt": done}));
                open = true;
            }
        }
    }
    if !reasoning.is_empty() {
        line(json!({"role": "assistant", "content": reasoning, "createdAt": end}));
        open = true;
    }
    if open {
        line(json!({"role": "finish", "reason": "stop", "createdAt": end}));
    }
    out
}

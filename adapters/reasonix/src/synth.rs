//! Reasonix's synthetic writer, for the demo, the benchmark corpora and the kit's round
//! trip: the JSONL generation (`<state>/projects/<workspace-slug>/sessions/<id>.jsonl` with
//! its `<id>.jsonl.meta`), which 2.x still writes and which is plain text. The 1.x frame
//! log is covered by the committed fixtures, not by this writer.
//!
//! One OpenAI-shaped message a line, as Reasonix stores them: `user` lines, `assistant`
//! lines (with `reasoning_content`, or `tool_calls` whose `arguments` is a JSON string),
//! `tool` lines answering by `tool_call_id` with `tool_execution.exitCode` for `bash`.

use std::path::{Path, PathBuf};

use deja_core::{SynthSession, SynthTurn, Timestamp};
use serde_json::{json, Value};

/// The workspace slug: separators and a drive colon become `-` (lower-cased on Windows,
/// where the page says Reasonix folds case).
pub(crate) fn workspace_slug(root: &str) -> String {
    let slug: String = root.chars().map(|c| if matches!(c, '/' | '\\' | ':') { '-' } else { c }).collect();
    if cfg!(windows) {
        slug.to_lowercase()
    } else {
        slug
    }
}

/// Writes `session` under `home`'s default state root; returns the transcript written.
pub(crate) fn write(home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
    let root = if cfg!(windows) { home.join("AppData").join("Roaming").join("reasonix") } else { home.join(".reasonix") };
    let dir = root.join("projects").join(workspace_slug(&session.project)).join("sessions");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("{}.jsonl", session.id));
    let mut out = String::new();
    let mut line = |v: Value| {
        out.push_str(&v.to_string());
        out.push('\n');
    };
    let stamp = |t: Timestamp| t.to_rfc3339();
    let mut reasoning: Option<String> = None;
    for (n, turn) in session.turns.iter().enumerate() {
        let call_id = format!("call_{n:04}");
        let call = |name: &str, args: Value, time: Timestamp| {
            json!({"role": "assistant", "content": "", "createdAt": stamp(time),
                   "tool_calls": [{"id": call_id, "name": name, "arguments": args.to_string()}]})
        };
        match turn {
            SynthTurn::User { text, time } => line(json!({"role": "user", "content": text, "createdAt": stamp(*time)})),
            SynthTurn::Reasoning { text, .. } => reasoning = Some(text.clone()),
            SynthTurn::Assistant { text, time } => {
                let mut msg = json!({"role": "assistant", "content": text, "createdAt": stamp(*time)});
                if let Some(r) = reasoning.take() {
                    msg["reasoning_content"] = json!(r);
                }
                line(msg);
            }
            SynthTurn::Shell { command, output, exit_code, time } => {
                line(call("bash", json!({"command": command}), *time));
                line(json!({"role": "tool", "tool_call_id": call_id, "content": output, "createdAt": stamp(*time),
                            "tool_execution": {"exitCode": exit_code}}));
            }
            SynthTurn::Read { path, output, time } => {
                line(call("read_file", json!({"path": path}), *time));
                line(json!({"role": "tool", "tool_call_id": call_id, "content": output, "createdAt": stamp(*time)}));
            }
            SynthTurn::Edit { path, old, new, time } => {
                line(call("edit_file", json!({"path": path, "old_string": old, "new_string": new}), *time));
                line(json!({"role": "tool", "tool_call_id": call_id, "content": format!("edited {path}"), "createdAt": stamp(*time)}));
            }
        }
    }
    std::fs::write(&path, out)?;
    let updated = session.turns.last().map_or(session.started, SynthTurn::time);
    let mut meta = json!({"created_at": stamp(session.started), "updated_at": stamp(updated), "workspace_root": session.project});
    if let Some(title) = &session.title {
        meta["topic_title"] = json!(title);
    }
    std::fs::write(dir.join(format!("{}.jsonl.meta", session.id)), meta.to_string())?;
    Ok(path)
}

//! Antigravity's synthetic writer: a [`SynthSession`] as the Antigravity IDE writes a
//! conversation, `~/.gemini/antigravity/brain/<id>/.system_generated/logs/transcript.jsonl`
//! — one `{source, type, created_at, content}` step per line: the prompt as a
//! `USER_EXPLICIT` step wrapped in `<USER_REQUEST>`, answers as `MODEL`
//! `PLANNER_RESPONSE` steps, and tool steps with their readable headers (`RUN_COMMAND`
//! with `Task Description:`, `VIEW_FILE` with `File Path:`, `CODE_ACTION` with `Edited
//! file`). The format has no reasoning, exit status or edit span, so those are left out.
//! The IDE names the workspace in `cache/conversation_metadata.json`, which the writer
//! adds the conversation to, so the reader finds the project there.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use deja_core::{SynthSession, SynthTurn};
use serde_json::{json, Map, Value};

/// Writes `s` where discovery finds it and returns the transcript.
pub fn write(home: &Path, s: &SynthSession) -> std::io::Result<PathBuf> {
    let root = home.join(".gemini/antigravity");
    let logs = root.join("brain").join(&s.id).join(".system_generated/logs");
    std::fs::create_dir_all(&logs)?;
    let path = logs.join("transcript.jsonl");
    std::fs::write(&path, render(s))?;
    register(&root.join("cache"), s)?;
    Ok(path)
}

/// Adds the conversation's workspace (and title) to the IDE's metadata, keeping the
/// conversations already there.
fn register(cache: &Path, s: &SynthSession) -> std::io::Result<()> {
    // The corpora write sessions in parallel: one read-modify-write at a time, so no
    // conversation is lost (the file's bytes do not depend on the order).
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    std::fs::create_dir_all(cache)?;
    let file = cache.join("conversation_metadata.json");
    let mut convs: Map<String, Value> = std::fs::read(&file)
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|v| v.get("conversations").and_then(Value::as_object).cloned())
        .unwrap_or_default();
    let mut summary = json!({"WorkspaceURIs": [file_uri(&s.project)]});
    if let Some(title) = &s.title {
        summary["title"] = Value::from(title.as_str());
    }
    convs.insert(s.id.clone(), json!({ "summary": summary }));
    let text = serde_json::to_string_pretty(&json!({ "conversations": convs })).map_err(std::io::Error::other)?;
    std::fs::write(file, text)
}

fn file_uri(path: &str) -> String {
    format!("file://{path}")
}

fn render(s: &SynthSession) -> String {
    let mut out = String::new();
    let abs = |p: &str| if p.starts_with('/') { p.to_string() } else { format!("{}/{p}", s.project.trim_end_matches('/')) };
    for turn in &s.turns {
        let at = turn.time().to_rfc3339();
        let step = match turn {
            SynthTurn::User { text, .. } => {
                json!({"source": "USER_EXPLICIT", "created_at": at, "content": format!("<USER_REQUEST>\n{text}\n</USER_REQUEST>")})
            }
            SynthTurn::Assistant { text, .. } => json!({"source": "MODEL", "type": "PLANNER_RESPONSE", "created_at": at, "content": text}),
            // Antigravity's transcript keeps no reasoning.
            SynthTurn::Reasoning { .. } => continue,
            SynthTurn::Shell { command, output, .. } => {
                let content = format!("Created At: {at}\nCompleted At: {at}\nTask Description: {command}\n{output}");
                json!({"source": "MODEL", "type": "RUN_COMMAND", "created_at": at, "content": content})
            }
            SynthTurn::Read { path, output, .. } => {
                let mut content = format!("File Path: `{}`", file_uri(&abs(path)));
                // The IDE shows a viewed file with line numbers.
                for (i, line) in output.lines().enumerate() {
                    let _ = write!(content, "\n{}: {line}", i + 1);
                }
                json!({"source": "MODEL", "type": "VIEW_FILE", "created_at": at, "content": content})
            }
            SynthTurn::Edit { path, old, new, .. } => {
                let mut content = format!("Created At: {at}\nEdited file {} with 1 change", file_uri(&abs(path)));
                for line in old.lines() {
                    let _ = write!(content, "\n- {line}");
                }
                for line in new.lines() {
                    let _ = write!(content, "\n+ {line}");
                }
                json!({"source": "MODEL", "type": "CODE_ACTION", "created_at": at, "content": content})
            }
        };
        out.push_str(&step.to_string());
        out.push('\n');
    }
    out
}

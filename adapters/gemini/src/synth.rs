//! Gemini CLI's synthetic writer: a [`SynthSession`] as Gemini CLI 0.61 writes a chat,
//! `~/.gemini/tmp/<project-id>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl` — the
//! header line, the `$set` of the `<session_context>` preamble, `user` messages,
//! `gemini` messages whose `toolCalls[]` hold their results (each result repeated as a
//! `functionResponse` part in a `user` record), thoughts as `{subject, description}`,
//! and `$set` `lastUpdated` patches. The project id is the working directory's short
//! name, registered in `projects.json` and `.project_root` as Gemini does, so the
//! reader maps it back to the directory.

use std::path::{Path, PathBuf};

use deja_core::family::gemini_synth::{text_parts, GeminiCall};
use deja_core::{SynthSession, SynthTurn, Timestamp};
use serde_json::{json, Map, Value};

/// Writes `s` where discovery finds it and returns the chat file.
pub fn write(home: &Path, s: &SynthSession) -> std::io::Result<PathBuf> {
    let gemini = home.join(".gemini");
    let pid = project_id(&gemini, &s.project)?;
    let chats = gemini.join("tmp").join(&pid).join("chats");
    std::fs::create_dir_all(&chats)?;
    std::fs::write(gemini.join("tmp").join(&pid).join(".project_root"), &s.project)?;
    register(&gemini.join("projects.json"), &s.project, &pid)?;
    let stamp = s.started.to_rfc3339();
    let minute = stamp.get(..16).unwrap_or("1970-01-01T00:00").replace(':', "-");
    let short: String = s.id.chars().take(8).collect();
    let path = chats.join(format!("session-{minute}-{short}.jsonl"));
    std::fs::write(&path, render(s))?;
    Ok(path)
}

/// The project's id: the one `projects.json` already gives it, else its directory's
/// base name (numbered when another project has that name), as Gemini's short ids go.
fn project_id(gemini: &Path, project: &str) -> std::io::Result<String> {
    let projects = read_projects(&gemini.join("projects.json"));
    if let Some(id) = projects.get(project).and_then(Value::as_str) {
        return Ok(id.to_string());
    }
    let base: String = project
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or("")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c.to_ascii_lowercase() } else { '-' })
        .collect();
    let base = if base.is_empty() { "project".to_string() } else { base };
    let taken = |id: &str| projects.values().any(|v| v.as_str() == Some(id)) || gemini.join("tmp").join(id).exists();
    let mut id = base.clone();
    let mut n = 1;
    while taken(&id) {
        id = format!("{base}-{n}");
        n += 1;
    }
    Ok(id)
}

fn read_projects(path: &Path) -> Map<String, Value> {
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        .and_then(|v| v.get("projects").and_then(Value::as_object).cloned())
        .unwrap_or_default()
}

/// Adds `project → id` to `projects.json`, keeping the projects already there.
fn register(path: &Path, project: &str, id: &str) -> std::io::Result<()> {
    let mut projects = read_projects(path);
    if projects.get(project).and_then(Value::as_str) == Some(id) {
        return Ok(());
    }
    projects.insert(project.to_string(), Value::from(id));
    let text = serde_json::to_string_pretty(&json!({ "projects": projects })).map_err(std::io::Error::other)?;
    std::fs::write(path, text)
}

/// The chat's lines, in the order Gemini CLI 0.61 appends them.
fn render(s: &SynthSession) -> String {
    let mut out = String::new();
    let mut line = |v: Value| {
        out.push_str(&v.to_string());
        out.push('\n');
    };
    let t0 = s.started.to_rfc3339();
    let hash = format!("{:016x}{:016x}", deja_core::synth::splitmix64(fold(&s.project)), deja_core::synth::splitmix64(fold(&s.id)));
    line(json!({"sessionId": s.id, "projectHash": hash, "startTime": t0, "lastUpdated": t0, "kind": "main"}));
    let context = "<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\n</session_context>";
    let preamble = json!({"id": "session-context", "timestamp": t0, "type": "user", "content": text_parts(context)});
    line(json!({"$set": {"messages": [preamble], "lastUpdated": t0}}));
    // Gemini shows a model's thoughts on the `gemini` record that follows them.
    let mut thoughts: Vec<Value> = Vec::new();
    let (mut n, mut calls) = (0usize, 0usize);
    for turn in &s.turns {
        n += 1;
        let id = format!("{}-{n}", &s.id.chars().take(8).collect::<String>());
        let time = turn.time().to_rfc3339();
        match turn {
            SynthTurn::User { text, .. } => line(json!({"id": id, "timestamp": time, "type": "user", "content": text_parts(text)})),
            SynthTurn::Reasoning { text, .. } => {
                let subject = text.lines().next().unwrap_or("").chars().take(40).collect::<String>();
                thoughts.push(json!({"subject": subject, "description": text, "timestamp": time}));
                continue;
            }
            SynthTurn::Assistant { text, .. } => {
                let m = json!({"id": id, "timestamp": time, "type": "gemini", "content": text, "thoughts": std::mem::take(&mut thoughts), "model": MODEL});
                line(m);
            }
            SynthTurn::Shell { .. } | SynthTurn::Read { .. } | SynthTurn::Edit { .. } => {
                calls += 1;
                let Some(call) = GeminiCall::of(turn, calls, &s.project) else { continue };
                let done = Timestamp(call.time.millis() + 1).to_rfc3339();
                let record = json!({
                    "id": call.id,
                    "name": call.name,
                    "args": call.args,
                    "result": [call.response_part()],
                    // A command that ran and failed is still a successful tool call; the exit code says it failed.
                    "status": "success",
                    "timestamp": done,
                    "resultDisplay": call.display,
                    "displayName": display_name(call.name),
                    "renderOutputAsMarkdown": false,
                });
                let thoughts = std::mem::take(&mut thoughts);
                line(
                    json!({"id": id, "timestamp": time, "type": "gemini", "content": "", "thoughts": thoughts, "model": MODEL, "toolCalls": [record]}),
                );
                line(json!({"id": format!("{id}-r"), "timestamp": done, "type": "user", "content": [call.response_part()]}));
            }
        }
        line(json!({"$set": {"lastUpdated": time}}));
    }
    if !thoughts.is_empty() {
        let time = s.turns.last().map_or(s.started, SynthTurn::time).to_rfc3339();
        line(
            json!({"id": format!("{}-end", s.id), "timestamp": time, "type": "gemini", "content": "", "thoughts": thoughts, "model": MODEL}),
        );
    }
    out
}

/// The model a synthetic chat claims.
const MODEL: &str = "gemini-2.5-pro";

fn display_name(tool: &str) -> &'static str {
    match tool {
        "run_shell_command" => "Shell",
        "read_file" => "ReadFile",
        _ => "Edit",
    }
}

fn fold(text: &str) -> u64 {
    text.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b.into()))
}

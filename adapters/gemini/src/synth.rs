//! Gemini CLI's synthetic writer: a [`SynthSession`] as Gemini CLI 0.61 writes a chat,
//! `~/.gemini/tmp/<project-id>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl` — the
//! header line, the `$set` of the `<session_context>` preamble, `user` messages,
//! `gemini` messages whose `toolCalls[]` hold their results (each result repeated as a
//! `functionResponse` part in a `user` record), thoughts as `{subject, description}`,
//! and `$set` `lastUpdated` patches. The project directory is a 64-hex project hash
//! with the working directory in its `.project_root`, which the reader maps back; the
//! writer does not register short ids in the shared `projects.json`, so sessions written
//! in parallel (the benchmark corpora) never race on one file and the home's bytes stay
//! deterministic.

use std::path::{Path, PathBuf};

use deja_core::family::gemini_synth::{text_parts, GeminiCall};
use deja_core::{SynthSession, SynthTurn, Timestamp};
use serde_json::{json, Value};

/// Writes `s` where discovery finds it and returns the chat file.
pub fn write(home: &Path, s: &SynthSession) -> std::io::Result<PathBuf> {
    let hash = project_hash(&s.project);
    let project_dir = home.join(".gemini/tmp").join(&hash);
    let chats = project_dir.join("chats");
    std::fs::create_dir_all(&chats)?;
    // The same bytes for every session of the project, so parallel writers agree.
    std::fs::write(project_dir.join(".project_root"), &s.project)?;
    let stamp = s.started.to_rfc3339();
    let minute = stamp.get(..16).unwrap_or("1970-01-01T00:00").replace(':', "-");
    let short: String = s.id.chars().take(8).collect();
    let path = chats.join(format!("session-{minute}-{short}.jsonl"));
    std::fs::write(&path, render(s, &hash))?;
    Ok(path)
}

/// The project directory's name: Gemini's 64-hex project hash. (Gemini hashes the path
/// with SHA-256; a writer adds no dependency, so this is a SplitMix64 digest of the same
/// shape. Nothing reads it back as a hash: `.project_root` names the directory.)
fn project_hash(project: &str) -> String {
    let mut h = fold(project);
    let mut out = String::with_capacity(64);
    for _ in 0..4 {
        h = deja_core::synth::splitmix64(h);
        out.push_str(&format!("{h:016x}"));
    }
    out
}

/// The chat's lines, in the order Gemini CLI 0.61 appends them.
fn render(s: &SynthSession, hash: &str) -> String {
    let mut out = String::new();
    let mut line = |v: Value| {
        out.push_str(&v.to_string());
        out.push('\n');
    };
    let t0 = s.started.to_rfc3339();
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

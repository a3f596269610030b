//! gptme's synthetic writer: a [`SynthSession`] as gptme logs a conversation,
//! `~/.local/share/gptme/logs/<YYYY-MM-DD-HHMMSS>-<topic>/conversation.jsonl`, the topic
//! being the working directory's base name (gptme records no working directory; the
//! reader takes the topic as the project). Lines are `{role, content, timestamp}` with
//! zone-less microsecond timestamps: the hidden, pinned `system` prompt, `user` prompts,
//! `assistant` markdown whose fenced `shell` blocks are the commands (a read is a `cat`,
//! an edit gptme's `patch` block), and each tool's result as a `tool` message.
//! Reasoning is not a message of its own in gptme's log, so it is left out.

use std::path::{Path, PathBuf};

use deja_core::{StoreEnv, SynthSession, SynthTurn, Timestamp};
use serde_json::json;

/// Writes `s` where discovery finds it with only `HOME` set and returns the log.
pub fn write(home: &Path, s: &SynthSession) -> std::io::Result<PathBuf> {
    let root =
        super::INFO.store.root(super::ID, &StoreEnv::with_home(home)).ok_or_else(|| std::io::Error::other("no gptme store on this OS"))?;
    let stamp = s.started.to_datetime().map_or_else(|| "1970-01-01-000000".to_string(), |d| d.format("%Y-%m-%d-%H%M%S").to_string());
    let topic: String = s
        .project
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or("")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
        .collect();
    let topic = if topic.is_empty() { "conversation".to_string() } else { topic };
    // gptme numbers a name that is taken; so does the writer, claiming the directory with
    // one create_dir so sessions written in parallel never share a log.
    std::fs::create_dir_all(&root)?;
    let mut dir = root.join(format!("{stamp}-{topic}"));
    let mut n = 2;
    loop {
        match std::fs::create_dir(&dir) {
            Ok(()) => break,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                dir = root.join(format!("{stamp}-{topic}-{n}"));
                n += 1;
            }
            Err(e) => return Err(e),
        }
    }
    let path = dir.join("conversation.jsonl");
    std::fs::write(&path, render(s))?;
    Ok(path)
}

/// gptme's timestamps: no zone, microseconds (the reader takes them as UTC).
fn stamp(t: Timestamp) -> String {
    t.to_datetime().map_or_else(|| t.to_rfc3339(), |d| d.format("%Y-%m-%dT%H:%M:%S%.6f").to_string())
}

/// A fenced block whose fence is longer than any backtick run inside it.
fn fenced(tag: &str, body: &str) -> String {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{tag}\n{body}\n{fence}")
}

fn render(s: &SynthSession) -> String {
    let mut out = String::new();
    let mut line = |v: serde_json::Value| {
        out.push_str(&v.to_string());
        out.push('\n');
    };
    let t0 = stamp(s.started);
    line(json!({"role": "system", "content": "You are gptme, a terminal assistant.", "timestamp": t0, "pinned": true, "hide": true}));
    line(json!({"role": "system", "content": "Tools: shell, save, patch.", "timestamp": t0, "hide": true}));
    let meta = json!({"model": "anthropic/claude-sonnet-4-5"});
    for turn in &s.turns {
        let at = stamp(turn.time());
        let done = stamp(Timestamp(turn.time().millis() + 1));
        let (call, result) = match turn {
            SynthTurn::User { text, .. } => {
                line(json!({"role": "user", "content": text, "timestamp": at}));
                continue;
            }
            SynthTurn::Assistant { text, .. } => {
                line(json!({"role": "assistant", "content": text, "timestamp": at, "metadata": meta.clone()}));
                continue;
            }
            SynthTurn::Reasoning { .. } => continue,
            SynthTurn::Shell { command, output, .. } => (fenced("shell", command), output.clone()),
            SynthTurn::Read { path, output, .. } => (fenced("shell", &format!("cat {}", shell_quote(path))), output.clone()),
            SynthTurn::Edit { path, old, new, .. } => {
                let body = format!("<<<<<<< ORIGINAL\n{old}\n=======\n{new}\n>>>>>>> UPDATED");
                (fenced(&format!("patch {path}"), &body), format!("Patch successfully applied to {path}"))
            }
        };
        line(json!({"role": "assistant", "content": call, "timestamp": at, "metadata": meta.clone()}));
        line(json!({"role": "tool", "content": result, "timestamp": done}));
    }
    out
}

/// Single-quotes a word for the shell when it needs it.
fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"/-._~+,:@".contains(&b)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

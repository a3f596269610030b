//! Junie's synthetic writer: a [`SynthSession`] as Junie stores a session,
//! `~/.junie/sessions/session-<YYMMDD-HHMMSS>-<4 chars>/events.jsonl` with the agent's
//! `state.json` beside it and a line appended to `sessions/index.jsonl` (`sessionId`,
//! `createdAt`, `projectDir`, `taskName`). The log is Junie's: a `UserPromptEvent` per
//! prompt, the work as `SessionA2uxEvent` UI blocks with a `stepId` each — thoughts,
//! terminal blocks going `RUNNING` → `COMPLETED`/`FAILED` with `exitCode`, viewed files,
//! file changes as before/after text, markdown answers — then the `COMPLETED` replay of
//! every block when the task ends, as Junie writes it.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use deja_core::synth::splitmix64;
use deja_core::{SynthSession, SynthTurn, Timestamp};
use serde_json::{json, Value};

/// Writes `s` where discovery finds it and returns the event log.
pub fn write(home: &Path, s: &SynthSession) -> std::io::Result<PathBuf> {
    let sessions = home.join(".junie/sessions");
    let name = dir_name(s);
    let dir = sessions.join(&name);
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("events.jsonl");
    std::fs::write(&path, render(s))?;
    std::fs::write(dir.join("state.json"), r#"{"event":{"agentEvent":{"blob":"{}"}}}"#)?;
    let mut entry = json!({"sessionId": name, "createdAt": s.started.millis(), "projectDir": s.project});
    if let Some(title) = &s.title {
        entry["taskName"] = Value::from(title.as_str());
    }
    let mut index = std::fs::OpenOptions::new().create(true).append(true).open(sessions.join("index.jsonl"))?;
    // One write per line: parallel writers append whole lines (O_APPEND), never interleaved.
    index.write_all(format!("{entry}\n").as_bytes())?;
    Ok(path)
}

/// `session-<YYMMDD>-<HHMMSS>-<4 chars>`: Junie's name from the start time, the suffix
/// from the session id so names stay unique in one home.
fn dir_name(s: &SynthSession) -> String {
    let stamp = s.started.to_rfc3339();
    let digits: String = stamp.chars().filter(char::is_ascii_digit).collect();
    let (date, time) = (digits.get(2..8).unwrap_or("700101"), digits.get(8..14).unwrap_or("000000"));
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyz23456789";
    let mut h = splitmix64(s.id.bytes().fold(0u64, |h, b| h.wrapping_mul(131).wrapping_add(b.into())));
    let mut suffix = String::new();
    for _ in 0..4 {
        suffix.push(char::from(ALPHABET[(h % ALPHABET.len() as u64) as usize]));
        h /= ALPHABET.len() as u64;
    }
    format!("session-{date}-{time}-{suffix}")
}

fn line(out: &mut String, v: &Value) {
    out.push_str(&v.to_string());
    out.push('\n');
}

fn block(out: &mut String, time: Timestamp, state: &str, event: &Value) {
    line(out, &json!({"kind": "SessionA2uxEvent", "timestampMs": time.millis(), "event": {"state": state, "agentEvent": event}}));
}

fn render(s: &SynthSession) -> String {
    let mut out = String::new();
    line(&mut out, &json!({"kind": "CurrentDirectoryUpdatedEvent", "timestampMs": s.started.millis(), "currentDirectory": s.project}));
    let abs = |p: &str| if p.starts_with('/') { p.to_string() } else { format!("{}/{p}", s.project.trim_end_matches('/')) };
    // Every final block, replayed as `COMPLETED` at the end of the task.
    let mut finals: Vec<Value> = Vec::new();
    let mut named = false;
    for (n, turn) in s.turns.iter().enumerate() {
        let time = turn.time();
        let step = format!("s{n}");
        let done = Timestamp(time.millis() + 1);
        match turn {
            SynthTurn::User { text, .. } => {
                line(
                    &mut out,
                    &json!({"kind": "UserPromptEvent", "timestampMs": time.millis(), "prompt": text, "presentablePrompt": text}),
                );
                if !named {
                    named = true;
                    let name = s.title.clone().unwrap_or_else(|| text.lines().next().unwrap_or("").chars().take(60).collect());
                    line(&mut out, &json!({"kind": "AgentTaskNameUpdatedEvent", "timestampMs": done.millis(), "name": name}));
                }
            }
            SynthTurn::Assistant { text, .. } => {
                let b = json!({"kind": "MarkdownBlockUpdatedEvent", "stepId": step, "text": text});
                block(&mut out, time, "RUNNING", &b);
                finals.push(b);
            }
            SynthTurn::Reasoning { text, .. } => {
                block(&mut out, time, "RUNNING", &json!({"kind": "ThoughtBlockUpdatedEvent", "stepId": step, "text": text}));
            }
            SynthTurn::Shell { command, output, exit_code, .. } => {
                block(
                    &mut out,
                    time,
                    "RUNNING",
                    &json!({"kind": "TerminalBlockUpdatedEvent", "stepId": step, "command": command, "status": "RUNNING", "output": ""}),
                );
                let status = if *exit_code == 0 { "COMPLETED" } else { "FAILED" };
                let b = json!({"kind": "TerminalBlockUpdatedEvent", "stepId": step, "command": command, "status": status, "exitCode": exit_code, "output": output});
                block(&mut out, done, "RUNNING", &b);
                finals.push(b);
            }
            SynthTurn::Read { path, .. } => {
                let b = json!({"kind": "ViewFilesBlockUpdatedEvent", "stepId": step, "files": [{"relativePath": abs(path)}]});
                block(&mut out, time, "RUNNING", &b);
                finals.push(b);
            }
            SynthTurn::Edit { path, old, new, .. } => {
                let mut change = json!({"afterPath": abs(path), "afterContent": {"text": new}});
                if !old.is_empty() {
                    change["beforeContent"] = json!({"text": old});
                }
                let b = json!({"kind": "FileChangesBlockUpdatedEvent", "stepId": step, "changes": [change]});
                block(&mut out, time, "RUNNING", &b);
                finals.push(b);
            }
        }
    }
    let end = Timestamp(s.turns.last().map_or(s.started, SynthTurn::time).millis() + 2);
    for b in &finals {
        block(&mut out, end, "COMPLETED", b);
    }
    out
}

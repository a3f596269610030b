//! Codex CLI's restore writer: an archived session written back as the rollout Codex
//! resumes, `${CODEX_HOME:-~/.codex}/sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl`.
//!
//! What Codex needs, from its source (codex-rs rollout and resume) and from Codex 0.171.0
//! resuming such a file (`xtask/restore-check.sh codex`): a `session_meta` first line
//! whose `id` is the thread id (a UUID) with `timestamp`, `cwd`, `originator`,
//! `cli_version` and `source`; then the history as `response_item`s (messages, and
//! `function_call`/`custom_tool_call` answered by their `*_output` on the same `call_id`,
//! which the Responses API requires of every call it is sent). Each prompt and answer is
//! also written as the `event_msg` `user_message`/`agent_message` Codex's thread list reads
//! a thread's first prompt from.
//!
//! Codex 0.171's `state_5.sqlite` `threads` row names the rollout's path, and a resume by
//! id trusts it: a row whose file is gone makes `codex resume <id>` answer "no rollout
//! found" even when the rollout is back at another path. So a session is written back at
//! the path it was read from (the row's path); deja never writes the database. A session
//! read on another machine goes under the date it started, where Codex's own search by id
//! finds it (no row names it here).
//!
//! What the archive cannot give back is left out and said: reasoning (Codex sends it back
//! as encrypted content deja never keeps), a result whose call the archive does not hold,
//! deja's notes. A shell call comes back with its command, exit status and output; other
//! tools with their name and output (their arguments were never archived); an edit as an
//! `apply_patch` envelope holding the span deja kept.

use std::path::PathBuf;

use deja_core::family::codex_rollout::CODEX_TOOLS;
use deja_core::format::{Rendered, RestoreWriter};
use deja_core::model::{ExitStatus, FileAction, Role, SessionMeta, Timestamp, Turn};
use deja_core::work::ToolKind;
use deja_core::StoreEnv;
use serde_json::{json, Value};

use crate::CodexFormat;

/// The Codex CLI release whose resume of a restored rollout was checked (see
/// `adapters/codex/harness.toml`); written as `session_meta.cli_version`.
pub const RESTORE_VERSION: &str = "0.171.0";

impl RestoreWriter for CodexFormat {
    fn doc(&self) -> &'static str {
        "`deja restore <id>` writes `sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl` (where it was read from); the harness resumes it by id"
    }

    /// A rollout under a fresh id is another thread to Codex: it finds and resumes both.
    fn beside(&self) -> bool {
        true
    }

    fn target(&self, meta: &SessionMeta, id: &str, env: &StoreEnv) -> Result<PathBuf, String> {
        if meta.project.as_deref() == Some("history") && !meta.path.ends_with(".jsonl") {
            return Err("a prompt-history entry has no rollout for Codex to resume".into());
        }
        if meta.parent.is_some() {
            return Err("a sub-agent thread is resumed through its parent; restore the parent".into());
        }
        // Where it was read from, on this machine: the path Codex's thread row names.
        let original = PathBuf::from(&meta.path);
        let own = original.file_name().map(|n| n.to_string_lossy().into_owned()).is_some_and(|n| {
            n.starts_with("rollout-") && n.ends_with(&format!("-{}.jsonl", meta.id)) && !meta.path.contains("history.jsonl")
        });
        if meta.machine.is_none() && own && id == meta.id {
            return Ok(original);
        }
        let root = crate::INFO.store.root(crate::ID, env).ok_or("no Codex sessions root on this machine")?;
        let started = meta.started.or(meta.updated).unwrap_or_else(Timestamp::now).to_rfc3339();
        let part = |a: usize, b: usize, default: &'static str| started.get(a..b).unwrap_or(default).to_string();
        let (year, month, day) = (part(0, 4, "1970"), part(5, 7, "01"), part(8, 10, "01"));
        let clock = part(11, 19, "00:00:00").replace(':', "-");
        Ok(root.join(&year).join(&month).join(&day).join(format!("rollout-{year}-{month}-{day}T{clock}-{id}.jsonl")))
    }

    fn render(&self, meta: &SessionMeta, id: &str, turns: &[Turn]) -> Result<Rendered, String> {
        if !is_uuid(id) {
            return Err(format!("Codex resumes a thread by a UUID, and `{id}` is not one"));
        }
        Ok(Writer::new(meta, id).render(turns))
    }
}

fn is_uuid(s: &str) -> bool {
    s.len() == 36 && s.char_indices().all(|(i, c)| if matches!(i, 8 | 13 | 18 | 23) { c == '-' } else { c.is_ascii_hexdigit() })
}

struct Writer<'a> {
    meta: &'a SessionMeta,
    out: String,
    calls: u64,
    time: Timestamp,
    left_out: Vec<(u32, String)>,
}

impl<'a> Writer<'a> {
    fn new(meta: &'a SessionMeta, id: &str) -> Writer<'a> {
        let time = meta.started.or(meta.updated).unwrap_or_else(Timestamp::now);
        let mut w = Writer { meta, out: String::new(), calls: 0, time, left_out: Vec::new() };
        let cwd = meta.project.clone().unwrap_or_else(|| "/".into());
        // The interactive CLI's originator and source: the thread is listed by `codex
        // resume` as well as resumed by id.
        w.line(
            "session_meta",
            json!({
                "id": id, "session_id": id, "timestamp": time.to_rfc3339(), "cwd": cwd,
                "originator": "codex_cli_rs", "cli_version": RESTORE_VERSION, "source": "cli",
            }),
        );
        w
    }

    fn render(mut self, turns: &[Turn]) -> Rendered {
        let mut i = 0;
        while i < turns.len() {
            let t = &turns[i];
            if let Some(time) = t.time {
                self.time = time;
            }
            match t.role {
                Role::User => {
                    self.message("user", "input_text", &t.text);
                    self.line("event_msg", json!({"type": "user_message", "message": t.text, "images": []}));
                }
                Role::Assistant => {
                    self.message("assistant", "output_text", &t.text);
                    self.line("event_msg", json!({"type": "agent_message", "message": t.text}));
                }
                Role::Summary => self.line("compacted", json!({"message": t.text})),
                Role::ToolCall if is_patch(t) => {
                    // The further spans of one patch are turns of their own after it.
                    let mut end = i + 1;
                    while end < turns.len() && is_more_of_patch(&turns[end]) {
                        end += 1;
                    }
                    self.patch(&turns[i..end]);
                    i = end;
                    continue;
                }
                Role::ToolCall => self.call(t),
                Role::Reasoning => {
                    self.left_out.push((t.seq, "reasoning: Codex sends it back as encrypted content deja does not keep".into()))
                }
                Role::ToolOutput => self.left_out.push((t.seq, "a tool result whose call the archive does not hold".into())),
                Role::Note => self.left_out.push((t.seq, "a note is deja's, not the harness's".into())),
            }
            i += 1;
        }
        Rendered { bytes: self.out.into_bytes(), left_out: self.left_out }
    }

    fn line(&mut self, kind: &str, payload: Value) {
        let v = json!({"timestamp": self.time.to_rfc3339(), "type": kind, "payload": payload});
        self.out.push_str(&v.to_string());
        self.out.push('\n');
    }

    fn message(&mut self, role: &str, item: &str, text: &str) {
        self.line("response_item", json!({"type": "message", "role": role, "content": [{"type": item, "text": text}]}));
    }

    fn call_id(&mut self) -> String {
        self.calls += 1;
        format!("call_deja{:04}", self.calls)
    }

    /// A function call and its result: a shell call with its command, others by name.
    fn call(&mut self, t: &Turn) {
        let tool = t.tool.clone().unwrap_or_default();
        let name = if tool.name.is_empty() { "function_call".to_string() } else { tool.name.clone() };
        let mut args = serde_json::Map::new();
        if CODEX_TOOLS.kind(&name) == ToolKind::Shell {
            if let Some(cmd) = &tool.command {
                args.insert("cmd".into(), cmd.clone().into());
            }
        }
        let call_id = self.call_id();
        let arguments = Value::Object(args).to_string();
        self.line("response_item", json!({"type": "function_call", "name": name, "arguments": arguments, "call_id": call_id}));
        let output = framed(&t.text, tool.exit.as_ref(), "Process exited with code ");
        self.line("response_item", json!({"type": "function_call_output", "call_id": call_id, "output": output}));
    }

    /// An `apply_patch` call: every file the first turn names, under the header its action
    /// takes, with the removed and added lines of the span deja kept for it.
    fn patch(&mut self, turns: &[Turn]) {
        let first = &turns[0];
        let cwd = self.meta.project.as_deref();
        let edits: Vec<_> = turns.iter().filter_map(|t| t.edit.as_ref()).collect();
        let mut patch = String::from("*** Begin Patch\n");
        for f in &first.files {
            let header = match f.action {
                FileAction::Write => "Add File",
                FileAction::Delete => "Delete File",
                _ => "Update File",
            };
            patch.push_str(&format!("*** {header}: {}\n", relative(&f.path, cwd)));
            if let Some(e) = edits.iter().find(|e| e.path == f.path) {
                if !e.old.is_empty() {
                    patch.push_str("@@\n");
                    for l in e.old.split('\n') {
                        patch.push_str(&format!("-{l}\n"));
                    }
                }
                if let Some(new) = &e.new {
                    for l in new.split('\n') {
                        patch.push_str(&format!("+{l}\n"));
                    }
                }
            }
        }
        patch.push_str("*** End Patch\n");
        let call_id = self.call_id();
        self.line("response_item", json!({"type": "custom_tool_call", "name": "apply_patch", "call_id": call_id, "input": patch}));
        let tool = first.tool.clone().unwrap_or_default();
        let output = framed(&first.text, tool.exit.as_ref(), "Exit code: ");
        self.line("response_item", json!({"type": "custom_tool_call_output", "call_id": call_id, "output": output}));
    }
}

/// A tool's result as Codex frames it when it has an exit status (the reader takes the
/// status from the frame and the text after `Output:`).
fn framed(text: &str, exit: Option<&ExitStatus>, marker: &str) -> String {
    match exit {
        Some(ExitStatus::Code(c)) => format!("{marker}{c}\nOutput:\n{text}"),
        _ => text.to_string(),
    }
}

/// The first turn of an `apply_patch` call (deja reads one as an edit with the files it
/// names).
fn is_patch(t: &Turn) -> bool {
    t.tool.as_ref().is_some_and(|u| u.name == "apply_patch") && (!t.files.is_empty() || t.edit.is_some())
}

/// A further span of the patch before it: a turn of its own holding only an edit.
fn is_more_of_patch(t: &Turn) -> bool {
    t.role == Role::ToolCall
        && t.files.is_empty()
        && t.text.is_empty()
        && t.edit.is_some()
        && t.tool.as_ref().is_some_and(|u| u.name == "apply_patch" && u.command.is_none() && u.exit.is_none())
}

/// A path under the working directory as the model writes it in a patch (relative);
/// others stay absolute.
fn relative(path: &str, cwd: Option<&str>) -> String {
    let Some(cwd) = cwd.map(|c| c.trim_end_matches('/')).filter(|c| !c.is_empty()) else { return path.to_string() };
    path.strip_prefix(cwd).and_then(|r| r.strip_prefix('/')).filter(|r| !r.is_empty()).map_or_else(|| path.to_string(), str::to_string)
}

//! The Claude-shaped family's restore writer: an archived session written back as the
//! transcript Claude Code (and each fork of the family, under its own config root)
//! resumes — `<projects root>/<encoded cwd>/<id>.jsonl`, one chain record per turn with
//! every field Claude Code reads when it resumes (`uuid`/`parentUuid`, `sessionId`,
//! `cwd`, `version`, `timestamp`, `isSidechain`, `userType`; assistant `message` objects
//! with an id, model, stop reason and usage), tool calls as `tool_use` blocks answered by
//! `tool_result` items (`Exit code N` leading a failed shell call's output, as Claude
//! Code writes it), and the title as a closing `summary`.
//!
//! What the archive cannot give back is left out and said: reasoning (Claude's API
//! refuses a thinking block without the signature it issued), a result whose call is not
//! in the archive (the API refuses an answer to no call), and deja's notes. A tool
//! call's input is rebuilt from what deja keeps (a shell command, a file path and its
//! edit); other tools' inputs were never archived and go back empty.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;

use serde_json::{json, Map, Value};

use super::claude_jsonl::ClaudeAdapter;
use crate::env::StoreEnv;
use crate::format::{Rendered, RestoreWriter};
use crate::model::{ExitStatus, Role, SessionMeta, Timestamp, Turn};
use crate::synth::synth_uuid;
use crate::work::ToolKind;

/// The Claude Code release whose resume of a restored file was checked (see
/// `adapters/claude/harness.toml`); written as each record's `version`.
pub const RESTORE_VERSION: &str = "2.1.332";
const MODEL: &str = "claude-sonnet-4-5";

impl RestoreWriter for ClaudeAdapter {
    fn doc(&self) -> &'static str {
        "`deja restore <id>` writes `<projects>/<encoded cwd>/<id>.jsonl`; the harness resumes it by id"
    }

    /// A copy under a fresh id is another session to Claude Code: it lists and resumes
    /// both.
    fn beside(&self) -> bool {
        true
    }

    fn target(&self, meta: &SessionMeta, id: &str, env: &StoreEnv) -> Result<PathBuf, String> {
        if meta.parent.is_some() || meta.kind.as_deref() == Some("sidechain") {
            return Err("a sub-agent run is resumed through its parent session; restore the parent".into());
        }
        let file = format!("{id}.jsonl");
        // Where it was read from, when that was this machine's own store.
        let original = PathBuf::from(&meta.path);
        if meta.machine.is_none() && original.file_name().is_some_and(|n| n.to_string_lossy() == format!("{}.jsonl", meta.id)) {
            if let Some(dir) = original.parent() {
                return Ok(dir.join(file));
            }
        }
        let project = meta.project.as_deref().ok_or("the session has no working directory, which names the folder the harness reads")?;
        let root = self.info.store.root(self.info.id, env).ok_or_else(|| format!("no store root for {} on this machine", self.info.id))?;
        Ok(root.join(encode_cwd(project)).join(file))
    }

    fn render(&self, meta: &SessionMeta, id: &str, turns: &[Turn]) -> Result<Rendered, String> {
        Ok(Writer::new(self, meta, id).render(turns))
    }
}

/// The folder name Claude Code keeps a working directory's sessions under: every
/// character but ASCII letters and digits becomes `-`.
pub fn encode_cwd(cwd: &str) -> String {
    cwd.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

struct Writer<'a> {
    adapter: &'a ClaudeAdapter,
    meta: &'a SessionMeta,
    id: &'a str,
    out: String,
    salt: u64,
    n: u64,
    last: Option<String>,
    time: Timestamp,
    left_out: Vec<(u32, String)>,
}

impl<'a> Writer<'a> {
    fn new(adapter: &'a ClaudeAdapter, meta: &'a SessionMeta, id: &'a str) -> Writer<'a> {
        let mut h = DefaultHasher::new();
        id.hash(&mut h);
        let time = meta.started.or(meta.updated).unwrap_or_else(Timestamp::now);
        Writer { adapter, meta, id, out: String::new(), salt: h.finish(), n: 0, last: None, time, left_out: Vec::new() }
    }

    fn render(mut self, turns: &[Turn]) -> Rendered {
        for t in turns {
            if let Some(time) = t.time {
                self.time = time;
            }
            match t.role {
                Role::User => {
                    self.chain("user", json!({"message": {"role": "user", "content": t.text}}));
                }
                Role::Summary => {
                    self.chain("user", json!({"isCompactSummary": true, "message": {"role": "user", "content": t.text}}));
                }
                Role::Assistant => {
                    self.assistant(json!({"type": "text", "text": t.text}), "end_turn");
                }
                Role::ToolCall => self.tool(t),
                Role::Reasoning => {
                    self.left_out.push((t.seq, "reasoning: Claude's API refuses a thinking block without its signature".into()))
                }
                Role::ToolOutput => self.left_out.push((t.seq, "a tool result whose call the archive does not hold".into())),
                Role::Note => self.left_out.push((t.seq, "a note is deja's, not the harness's".into())),
            }
        }
        if let (Some(title), Some(leaf)) = (&self.meta.title, self.last.clone()) {
            let line = json!({"type": "summary", "summary": title, "leafUuid": leaf});
            self.line(&line);
        }
        Rendered { bytes: self.out.into_bytes(), left_out: self.left_out }
    }

    fn line(&mut self, v: &Value) {
        self.out.push_str(&v.to_string());
        self.out.push('\n');
    }

    fn uuid(&mut self) -> String {
        self.n += 1;
        synth_uuid(self.n, self.salt)
    }

    /// One chain record: the envelope Claude Code writes on each, plus `fields`.
    fn chain(&mut self, kind: &str, fields: Value) -> String {
        let uuid = self.uuid();
        let mut rec = Map::new();
        rec.insert("parentUuid".into(), self.last.clone().map_or(Value::Null, Value::String));
        rec.insert("isSidechain".into(), false.into());
        rec.insert("userType".into(), "external".into());
        rec.insert("cwd".into(), self.meta.project.clone().unwrap_or_else(|| "/".into()).into());
        rec.insert("sessionId".into(), self.id.into());
        rec.insert("version".into(), RESTORE_VERSION.into());
        if let Value::Object(extra) = fields {
            rec.extend(extra);
        }
        rec.insert("type".into(), kind.into());
        rec.insert("uuid".into(), uuid.clone().into());
        rec.insert("timestamp".into(), self.time.to_rfc3339().into());
        self.line(&Value::Object(rec));
        self.last = Some(uuid.clone());
        uuid
    }

    fn assistant(&mut self, block: Value, stop: &str) {
        self.n += 1;
        let msg_id = format!("msg_01{:016x}{:06x}", self.salt, self.n);
        let request_id = format!("req_011C{:016x}{:06x}", self.salt, self.n);
        let message = json!({
            "id": msg_id, "type": "message", "role": "assistant", "model": MODEL,
            "content": [block], "stop_reason": stop, "stop_sequence": null,
            "usage": {"input_tokens": 0, "output_tokens": 0}
        });
        self.chain("assistant", json!({"message": message, "requestId": request_id}));
    }

    fn tool(&mut self, t: &Turn) {
        let tool = t.tool.clone().unwrap_or_default();
        let name = if tool.name.is_empty() { "tool".to_string() } else { tool.name.clone() };
        let tools = &self.adapter.dialect.tools;
        let mut input = Map::new();
        if tools.kind(&name) == ToolKind::Shell {
            input.insert("command".into(), tool.command.clone().unwrap_or_default().into());
        }
        if let Some(f) = t.files.first() {
            input.insert("file_path".into(), f.path.clone().into());
        }
        if let Some(e) = &t.edit {
            input.insert("file_path".into(), e.path.clone().into());
            input.insert("old_string".into(), e.old.clone().into());
            input.insert("new_string".into(), e.new.clone().unwrap_or_default().into());
        }
        self.n += 1;
        let call_id = format!("toolu_01{:016x}{:06x}", self.salt, self.n);
        self.assistant(json!({"type": "tool_use", "id": call_id, "name": name, "input": Value::Object(input)}), "tool_use");
        // The result as Claude Code files it: a failed shell call's output opens with
        // its exit line; a shell call that ended with no status was interrupted.
        let shell = tools.kind(&name) == ToolKind::Shell;
        let mut content = t.text.clone();
        let mut result = Map::new();
        match (&tool.exit, shell) {
            (Some(ExitStatus::Code(c)), true) if *c != 0 || tool.is_error => content = format!("Exit code {c}\n{content}"),
            (None, true) if !tool.is_error => {
                result.insert("interrupted".into(), true.into());
            }
            _ => {}
        }
        let item = json!({"tool_use_id": call_id, "type": "tool_result", "content": content, "is_error": tool.is_error});
        let mut fields = json!({"message": {"role": "user", "content": [item]}});
        if !result.is_empty() {
            fields["toolUseResult"] = Value::Object(result);
        }
        self.chain("user", fields);
    }
}

//! Gemini CLI's restore writer: an archived session written back as the chat Gemini CLI
//! 0.61 resumes with `gemini --resume <id>` run in the session's working directory —
//! `~/.gemini/tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl`: the header
//! line (`sessionId`, `projectHash`, `startTime`, `lastUpdated`, `kind`), `user` records,
//! `gemini` records (an answer's text, or its `toolCalls[]` each holding its
//! `functionResponse` result and status), and the `user` record that repeats the results,
//! as Gemini writes them.
//!
//! Where: Gemini finds a resumed id among the chats of the directory its project
//! registry gives the working directory (`packages/core/src/config/storage.ts`,
//! `projectRegistry.ts`). So, in order: the path the chat was read from on this machine;
//! the directory `projects.json` maps the working directory to; a `tmp/*` directory
//! whose `.project_root` names it (the registry adopts it); else the legacy
//! `tmp/<sha256 of the path>/`, which Gemini copies into the project's new directory the
//! first time it starts there. deja never writes `projects.json`.
//!
//! What the archive cannot give back is left out and said: reasoning (Gemini CLI sends a
//! chat's thoughts back to no model), a compaction summary (a chat file has no record for
//! one), a result whose call the archive does not hold, deja's notes. A shell call comes
//! back with its command, exit code and output; a file tool with its path and, for an
//! edit, the span deja kept; other tools' arguments were never archived.

use std::path::{Path, PathBuf};

use deja_core::family::gemini_chat::GEMINI_TOOLS;
use deja_core::family::gemini_synth::shell_output;
use deja_core::format::{Rendered, RestoreWriter};
use deja_core::model::{ExitStatus, FileAction, Role, SessionMeta, Timestamp, Turn};
use deja_core::work::ToolKind;
use deja_core::StoreEnv;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::GeminiFormat;

const MODEL: &str = "gemini-2.5-pro";

impl RestoreWriter for GeminiFormat {
    fn doc(&self) -> &'static str {
        "`deja restore <id>` writes `tmp/<project>/chats/session-<time>-<id8>.jsonl`; the harness resumes it by id in its working directory"
    }

    /// Gemini lists every chat of a project and resumes each by its own id.
    fn beside(&self) -> bool {
        true
    }

    fn target(&self, meta: &SessionMeta, id: &str, env: &StoreEnv) -> Result<PathBuf, String> {
        if meta.parent.is_some() {
            return Err("a sub-agent chat is not resumed on its own; restore the session that ran it".into());
        }
        let started = meta.started.or(meta.updated).unwrap_or_else(Timestamp::now).to_rfc3339();
        let minute = started.get(..16).unwrap_or("1970-01-01T00:00").replace(':', "-");
        let short: String = id.chars().take(8).collect();
        let file = format!("session-{minute}-{short}.jsonl");
        let original = PathBuf::from(&meta.path);
        let in_chats = original.parent().and_then(Path::file_name).is_some_and(|n| n == "chats");
        if meta.machine.is_none() && in_chats && id == meta.id {
            // The name it had, so a legacy `.json` chat comes back as `.json`.
            return Ok(original);
        }
        let cwd = meta
            .project
            .as_deref()
            .filter(|p| p.starts_with('/'))
            .ok_or("the session has no absolute working directory, which names the project Gemini resumes it in")?;
        let tmp = crate::INFO.store.root(crate::ID, env).ok_or("no Gemini CLI store root on this machine")?;
        let dir = registered(&tmp, cwd).or_else(|| adopted(&tmp, cwd)).unwrap_or_else(|| project_hash(cwd));
        Ok(tmp.join(dir).join("chats").join(file))
    }

    fn render(&self, meta: &SessionMeta, id: &str, turns: &[Turn]) -> Result<Rendered, String> {
        Ok(Writer::new(meta, id).render(turns))
    }
}

/// The project directory `projects.json` (beside `tmp/`) maps `cwd` to.
fn registered(tmp: &Path, cwd: &str) -> Option<String> {
    let bytes = std::fs::read(tmp.parent()?.join("projects.json")).ok()?;
    let doc: Value = serde_json::from_slice(&bytes).ok()?;
    let slug = doc.get("projects")?.get(cwd.trim_end_matches('/'))?.as_str()?;
    // The registry's own rule for a slug; anything else is not a directory name.
    (!slug.is_empty() && slug.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')).then(|| slug.to_string())
}

/// A `tmp/*` directory whose `.project_root` names `cwd`: Gemini's registry takes it for
/// the project.
fn adopted(tmp: &Path, cwd: &str) -> Option<String> {
    let want = cwd.trim_end_matches('/');
    std::fs::read_dir(tmp).ok()?.flatten().find_map(|e| {
        let root = std::fs::read_to_string(e.path().join(".project_root")).ok()?;
        (root.trim().trim_end_matches('/') == want).then(|| e.file_name().to_string_lossy().into_owned())
    })
}

/// Gemini's project hash: SHA-256 of the working directory, in hex (the header's
/// `projectHash`, and the legacy directory name).
fn project_hash(cwd: &str) -> String {
    Sha256::digest(cwd.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

struct Writer<'a> {
    id: &'a str,
    out: String,
    n: u64,
    time: Timestamp,
    left_out: Vec<(u32, String)>,
}

impl<'a> Writer<'a> {
    fn new(meta: &'a SessionMeta, id: &'a str) -> Writer<'a> {
        let start = meta.started.or(meta.updated).unwrap_or_else(Timestamp::now);
        let last = meta.updated.unwrap_or(start);
        let mut w = Writer { id, out: String::new(), n: 0, time: start, left_out: Vec::new() };
        let hash = project_hash(meta.project.as_deref().unwrap_or("/"));
        w.line(&json!({
            "sessionId": id, "projectHash": hash, "startTime": start.to_rfc3339(),
            "lastUpdated": last.to_rfc3339(), "kind": "main",
        }));
        w
    }

    fn render(mut self, turns: &[Turn]) -> Rendered {
        for t in turns {
            if let Some(time) = t.time {
                self.time = time;
            }
            match t.role {
                Role::User => {
                    let rec = self.record("user", json!([{"text": t.text}]));
                    self.line(&rec);
                }
                Role::Assistant => {
                    let mut rec = self.record("gemini", Value::String(t.text.clone()));
                    rec["thoughts"] = json!([]);
                    rec["model"] = MODEL.into();
                    self.line(&rec);
                }
                Role::ToolCall => self.call(t),
                Role::Reasoning => self.left_out.push((t.seq, "reasoning: Gemini CLI sends a chat's thoughts back to no model".into())),
                Role::Summary => self.left_out.push((t.seq, "a compaction summary: a Gemini chat file has no record for one".into())),
                Role::ToolOutput => self.left_out.push((t.seq, "a tool result whose call the archive does not hold".into())),
                Role::Note => self.left_out.push((t.seq, "a note is deja's, not the harness's".into())),
            }
        }
        Rendered { bytes: self.out.into_bytes(), left_out: self.left_out }
    }

    fn line(&mut self, v: &Value) {
        self.out.push_str(&v.to_string());
        self.out.push('\n');
    }

    fn record(&mut self, kind: &str, content: Value) -> Value {
        self.n += 1;
        let short: String = self.id.chars().take(8).collect();
        json!({"id": format!("{short}-r{}", self.n), "timestamp": self.time.to_rfc3339(), "type": kind, "content": content})
    }

    /// A `gemini` record holding the call with its result, then the `user` record that
    /// repeats the result, as Gemini CLI 0.61 writes them.
    fn call(&mut self, t: &Turn) {
        let tool = t.tool.clone().unwrap_or_default();
        let name = if tool.name.is_empty() { "function_call".to_string() } else { tool.name.clone() };
        let mut args = serde_json::Map::new();
        let shell = GEMINI_TOOLS.kind(&name) == ToolKind::Shell;
        if shell {
            if let Some(c) = &tool.command {
                args.insert("command".into(), c.clone().into());
            }
        }
        if let Some(action) = GEMINI_TOOLS.file_action(&name) {
            if let Some((first, rest)) = t.files.split_first() {
                args.insert("file_path".into(), first.path.clone().into());
                if !rest.is_empty() {
                    args.insert("paths".into(), rest.iter().map(|f| Value::String(f.path.clone())).collect());
                }
            }
            if let (FileAction::Edit, Some(e)) = (action, &t.edit) {
                args.insert("file_path".into(), e.path.clone().into());
                args.insert("old_string".into(), e.old.clone().into());
                if let Some(new) = &e.new {
                    args.insert("new_string".into(), new.clone().into());
                }
            }
        }
        self.n += 1;
        let call_id = format!("{name}__deja_{}_{}", self.time.millis(), self.n);
        let output = match (&tool.exit, shell) {
            (Some(ExitStatus::Code(c)), true) => shell_output(tool.command.as_deref().unwrap_or(""), &t.text, *c, 0),
            _ => t.text.clone(),
        };
        let response = json!({"functionResponse": {"id": call_id, "name": name, "response": {"output": output}}});
        let status = if tool.is_error { "error" } else { "success" };
        let call = json!({
            "id": call_id, "name": name, "args": Value::Object(args), "result": [response.clone()],
            "status": status, "timestamp": self.time.to_rfc3339(),
        });
        let mut rec = self.record("gemini", Value::String(String::new()));
        rec["thoughts"] = json!([]);
        rec["model"] = MODEL.into();
        rec["toolCalls"] = json!([call]);
        self.line(&rec);
        let rec = self.record("user", json!([response]));
        self.line(&rec);
    }
}

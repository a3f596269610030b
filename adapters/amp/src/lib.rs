//! Amp (`amp`): one JSON document per thread at
//! `${XDG_DATA_HOME:-~/.local/share}/amp/threads/<id>.json` (the XDG layout on every OS),
//! rewritten whole on change. Since build 0.0.1774963753 (2026-03-31) Amp keeps threads
//! on ampcode.com and the local directory holds no threads; the `amp-auto` plugin writes
//! them back in this legacy shape at `agent.end`.
//!
//! No family reader: the thread document is Amp's own, its messages Anthropic-style block
//! lists. Each document is one source (not append-only); a rewritten one replaces its
//! session, keyed by the thread `id`.
//!
//! `DEJA_AMP_ROOT` names the threads directory itself and is then the only root;
//! `AMP_DATA_HOME` (named by an older registry revision only, unverified) puts it at
//! `${AMP_DATA_HOME}/threads`; otherwise `XDG_DATA_HOME` moves `~/.local/share`.
//!
//! | record / field | Turn | rule |
//! | --- | --- | --- |
//! | `messages[]`, `role` not `user`/`assistant` | skipped | |
//! | `content[]` `text` blocks | `User` / `Assistant` | non-empty texts joined with `\n`, one turn per message |
//! | `content[]` `thinking` blocks | `Reasoning` | only with `include_reasoning` |
//! | `content[]` `tool_use` (`id`, `name`, `input`) | `ToolCall` | `Bash` (`cmd`), `shell_command` (`command`) → `tool.command`; `Read`/`read_file`/`undo_edit` → `files`; `edit_file` → files + span; `create_file` → files + written side; `apply_patch` (`patchText`) → files + spans, relative paths under the cwd |
//! | `content[]` `tool_result` (`toolUseID`, `run`) | folded into its call | `run.result` (string) or `run.result.output`, else `run.error`/`run.error.message`; `run.result.exitCode` → exit (not `-1`); `run.status` `error`/`rejected-by-user`/`cancelled` → `is_error`, the call's edit dropped (files and command kept) |
//!
//! Times: user messages carry `meta.sentAt`, assistant messages `usage.timestamp` (either
//! epoch or ISO); a message with neither inherits the previous message's time, the first
//! one `created`.

use deja_core::family::json_docs::{call_turn, first_str, json_arg, ToolKeys};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::patch::parse_apply_patch;
use deja_core::read::{at, parse_json_document, read_source, str_at};
use deja_core::store::{Files, Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, ExitStatus, FileAction, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats,
    Role, SessionBuilder, SessionSink, SourceRef, Timestamp, ToolMap, Turn,
};
use serde_json::Value;

mod wiring;

const ID: &str = "amp";

/// The Amp adapter.
pub struct AmpFormat;

deja_core::inventory::submit!(deja_core::Registration(&AmpFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Amp",
    container: "JSON, one document per thread",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("${AMP_DATA_HOME:-${XDG_DATA_HOME:-~/.local/share}/amp}/threads")],
        layout: Layout::Files(Files::new("**/*.json")),
    }]),
    needs: &[],
    format_summary: "One JSON object per thread in `${XDG_DATA_HOME:-~/.local/share}/amp/threads/` (`id`, `title`, `created` \
        in Unix ms, `env.initial.trees[].uri` for the working directory, `messages[]`), rewritten on change. Messages \
        are `user`/`assistant` block lists: `text`, `thinking`, `tool_use` and, in user messages, `tool_result` paired by \
        `toolUseID`, whose `run` carries the status, the result (with `exitCode` for shell commands) or the error. Since \
        2026-03-31 threads live server-side; only the `amp-auto` plugin writes them back locally.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "`\"amp.mcpServers\".deja` `{command, args: [\"mcp\"]}` in $AMP_SETTINGS_FILE, else \
             ${XDG_CONFIG_HOME:-~/.config}/amp/settings.json",
        ),
        // The page: the plugin goes "next to `settings.json`; exact file name unknown".
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Always(ResumeSpec::anywhere(&["amp", "threads", "continue", "{id}"])),
        handoff: Handoff::Paste("the page says exec but names no start-with-prompt argument"),
    },
};

/// Amp's tool names (bundle 0.0.1774959077).
const TOOLS: ToolMap = ToolMap {
    shell: &["Bash", "shell_command"],
    read: &["Read", "read_file"],
    edit: &["edit_file", "undo_edit", "apply_patch"],
    write: &["create_file"],
};

const KEYS: ToolKeys = ToolKeys { command: &["cmd", "command"], path: &["path"], old: &["old_str"], new: &["new_str", "content"] };

impl HarnessFormat for AmpFormat {
    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::AmpWiring)
    }

    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let bytes = read_source(&src.path, &mut stats)?.bytes;
        let doc = parse_json_document(&bytes, &src.path)?;
        stats.records = 1;
        let Some(id) = first_str(&doc, &["id"]) else {
            return Err(FormatError::corrupt(&src.path, "thread without an id"));
        };
        let created = match doc.get("created") {
            None | Some(Value::Null) => None,
            Some(v) => Some(Timestamp::from_json(v).ok_or_else(|| FormatError::corrupt(&src.path, "thread `created` is not a time"))?),
        };
        let cwd = at(&doc, &["env", "initial", "trees"])
            .and_then(|t| t.get(0))
            .and_then(|t| str_at(t, &["uri"]))
            .and_then(|u| u.strip_prefix("file://"))
            .map(percent_decode);
        let title = first_str(&doc, &["title"]).map(|t| t.trim().to_string());
        let mut p = Parser { b: SessionBuilder::new(ID, id, src.clone()), opts, cwd: cwd.clone(), last_time: created };
        if let Some(Value::Array(messages)) = doc.get("messages") {
            for m in messages {
                p.message(m);
            }
        }
        let mut b = p.b;
        b.touch(created.filter(|_| b.turn_count() > 0));
        let s = b.session_mut();
        // No file URI: the page falls back to the title as the project's name.
        s.project = cwd.or_else(|| title.clone());
        s.title = title;
        if let Some(session) = b.finish() {
            out.session(session);
        }
        Ok(stats)
    }
}

/// `%XX` escapes of a `file://` URI path decoded (invalid ones kept as written).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

struct Parser<'a> {
    b: SessionBuilder,
    opts: &'a ParseOptions,
    cwd: Option<String>,
    /// The previous message's time, which a message without one inherits.
    last_time: Option<Timestamp>,
}

impl Parser<'_> {
    fn message(&mut self, m: &Value) {
        let (role, own_time) = match str_at(m, &["role"]) {
            Some("user") => (Role::User, at(m, &["meta", "sentAt"])),
            Some("assistant") => (Role::Assistant, at(m, &["usage", "timestamp"])),
            _ => return,
        };
        let time = own_time.and_then(Timestamp::from_json).or(self.last_time);
        self.last_time = time;
        let Some(Value::Array(blocks)) = m.get("content") else { return };
        // One speech turn per Amp message, before the calls and results it holds.
        let said: Vec<&str> = blocks
            .iter()
            .filter(|b| str_at(b, &["type"]) == Some("text"))
            .filter_map(|b| str_at(b, &["text"]))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .collect();
        if self.opts.include_reasoning {
            // Thinking precedes what the model then said.
            for block in blocks.iter().filter(|b| str_at(b, &["type"]) == Some("thinking")) {
                self.b.push(Turn::new(Role::Reasoning, str_at(block, &["thinking"]).unwrap_or("")).at(time));
            }
        }
        self.b.push(Turn::new(role, said.join("\n")).at(time));
        for block in blocks {
            match str_at(block, &["type"]) {
                Some("tool_use") => self.tool_use(block, time),
                Some("tool_result") => self.tool_result(block, time),
                _ => {}
            }
        }
    }

    fn tool_use(&mut self, block: &Value, time: Option<Timestamp>) {
        let name = first_str(block, &["name"]).unwrap_or("tool");
        let input = json_arg(block.get("input"));
        let mut turn = call_turn(&TOOLS, &KEYS, name, &input, self.cwd.as_deref(), time);
        if name == "undo_edit" {
            // An undo touches the file; it carries no span of its own.
            turn.edit = None;
        }
        if name == "apply_patch" {
            let (files, edits) = parse_apply_patch(first_str(&input, &["patchText"]).unwrap_or(""), self.cwd.as_deref());
            turn.files = files;
            turn.edit = edits.into_iter().next();
        }
        if name == "create_file" {
            if let Some(f) = turn.files.first_mut() {
                f.action = FileAction::Write;
            }
        }
        self.b.push_call(first_str(block, &["id"]), turn);
    }

    fn tool_result(&mut self, block: &Value, time: Option<Timestamp>) {
        let id = first_str(block, &["toolUseID"]).unwrap_or("");
        let run = block.get("run").unwrap_or(&Value::Null);
        let status = str_at(run, &["status"]).unwrap_or("");
        let failed = matches!(status, "error" | "rejected-by-user" | "cancelled");
        let mut text = match run.get("result") {
            Some(Value::String(s)) => s.clone(),
            Some(r) => str_at(r, &["output"]).unwrap_or("").to_string(),
            None => String::new(),
        };
        if text.trim().is_empty() {
            text = match run.get("error") {
                Some(Value::String(s)) => s.clone(),
                Some(e) => str_at(e, &["message"]).unwrap_or("").to_string(),
                None => String::new(),
            };
        }
        let exit = (status == "done")
            .then(|| at(run, &["result", "exitCode"]).and_then(Value::as_i64))
            .flatten()
            .filter(|c| *c != -1)
            .map(ExitStatus::Code);
        let text = text.trim();
        if !self.b.complete_call(id, text, failed, exit.clone(), time) {
            self.b.push_orphan_result(id, text, failed, exit, time);
            return;
        }
        if failed {
            // A call that ended in error, rejection or cancellation changed nothing.
            if let Some(call) = self.b.call_mut(id) {
                call.edit = None;
            }
        }
    }
}

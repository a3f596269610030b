//! Cortex Code (`cortex`, Snowflake's Cortex Code CLI, "CoCo"): one JSON document per
//! session at `~/.snowflake/cortex/conversations/<session-uuid>.json`, rewritten on change;
//! once a session outgrows it, the messages move to a companion
//! `<session-uuid>.history.jsonl` (appended) and the document keeps the metadata only.
//!
//! No family reader: the document and its blocks (payload nested under a key named after
//! the block type) are Cortex Code's own. One session is one source: the `.json` with the
//! companion `.history.jsonl` as a part (present or not), so growth of either changes the
//! fingerprint and the session is re-read whole under its `session_id`. Backups
//! `<uuid>.back.<timestamp>.json` are not sessions.
//!
//! `DEJA_CORTEX_ROOT` names the conversations root (the directory the documents sit in).
//! The page names no relocation variable of Cortex Code's own.
//!
//! | record / block | Turn | rule |
//! | --- | --- | --- |
//! | `role: "user"`, `text` block | `User` | blocks with `internalOnly: true` or holding `<system-reminder>` are skipped; a message left empty yields nothing |
//! | `role: "assistant"`, `text` block | `Assistant` | the same filter |
//! | `tool_use` block (`tool_use.{tool_use_id, name, input}`) | `ToolCall` | `bash` → `tool.command` (`command`/`cmd`); `snowflake_sql_execute` → the SQL as `tool.command`; `read`/`write`/`edit` → `files` (+ `edit` when an old span is there); search and fetch tools: name only |
//! | `tool_result` block (`tool_result.{tool_use_id, content[], status}`) | folded into its call | inner text blocks; a `status` other than `success` → `is_error`; unpaired → `ToolOutput` |
//! | other roles | skipped | |
//! | a `.history.jsonl` line that does not decode | skipped | counted in the parse stats |
//!
//! Times: `created_at`/`last_updated` bound the session; user messages carry
//! `user_sent_time`; assistant messages have none and stay untimed.

use std::path::{Path, PathBuf};

use deja_core::family::json_docs::{call_turn, first_str, json_arg, text_blocks, ToolKeys};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::read::{for_each_json_line, parse_json_document, read_source, str_at};
use deja_core::store::{Files, Layout, Part, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Role, SessionBuilder,
    SessionSink, SourceRef, Timestamp, ToolMap, Turn,
};
use serde_json::Value;

const ID: &str = "cortex";
const HISTORY: &str = ".history.jsonl";

/// The Cortex Code adapter.
pub struct CortexFormat;

deja_core::inventory::submit!(deja_core::Registration(&CortexFormat));

/// Cortex Code wraps its environment notes in `<system-reminder>`; the parser drops such
/// blocks, and ingest strips any left inside kept text.
static INJECTED: InjectedText = InjectedText { blocks: &["system-reminder"], ..InjectedText::NONE };

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Cortex Code",
    container: "JSON, one document per session (+ a .history.jsonl companion for long sessions)",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("~/.snowflake/cortex/conversations")],
        // `<uuid>.json` holds the session, `<uuid>.history.jsonl` its messages; `.back.` files are backups.
        layout: Layout::Files(Files::new("*.json").exclude(&["*.back.*"]).parts(&[Part::Extension("history.jsonl")])),
    }]),
    needs: &[],
    format_summary: "One JSON document per session in `~/.snowflake/cortex/conversations/` (`session_id`, `title`, \
        `working_directory`, `git_root`, `git_branch`, `created_at`, `last_updated`, and `history[]` until the session \
        outgrows it), with the messages of a long session in an appended `<uuid>.history.jsonl`. Messages hold blocks \
        whose payload sits under a key named after the type: `text`, `tool_use` and, in user messages, `tool_result`, \
        paired by `tool_use_id`. Internal-only and `<system-reminder>` blocks are skipped; backups `<uuid>.back.*.json` \
        are not read.",
    injected: &INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::Unknown, handoff: Handoff::Paste("no start-with-prompt command is known") },
};

/// Cortex Code's tools; `snowflake_sql_execute` runs SQL, recorded as its command.
const TOOLS: ToolMap = ToolMap { shell: &["bash", "snowflake_sql_execute"], read: &["read"], edit: &["edit"], write: &["write"] };

/// The old-text key of `edit` is not in the material: the usual names are tried.
const KEYS: ToolKeys = ToolKeys {
    command: &["command", "cmd", "query", "sql"],
    path: &["file_path", "path"],
    old: &["old_string", "old_str", "old_text"],
    new: &["new_string", "new_str", "new_text", "content"],
};

impl HarnessFormat for CortexFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, _opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let bytes = read_source(&src.path, &mut stats)?.bytes;
        let doc = parse_json_document(&bytes, &src.path)?;
        stats.records = 1;
        let Some(id) = first_str(&doc, &["session_id"]) else {
            stats.skip(|| format!("{}: no session_id, not a session", src.path.display()));
            return Ok(stats);
        };
        let cwd = first_str(&doc, &["working_directory", "git_root"]);
        let mut b = SessionBuilder::new(ID, id, src.clone());
        match doc.get("history") {
            Some(Value::Array(messages)) if !messages.is_empty() => {
                for m in messages {
                    message(&mut b, m, cwd);
                }
            }
            // The newer generation: the document is metadata, the messages are in the companion.
            _ => read_history(&mut b, &history_path(&src.path), cwd, &mut stats),
        }
        if b.turn_count() > 0 {
            b.touch(doc.get("created_at").and_then(Timestamp::from_json));
            b.touch(doc.get("last_updated").and_then(Timestamp::from_json));
        }
        let s = b.session_mut();
        s.project = cwd.map(str::to_string);
        s.title = first_str(&doc, &["title"]).map(str::trim).filter(|t| !t.starts_with("Chat for session:")).map(str::to_string);
        if let Some(session) = b.finish() {
            out.session(session);
        }
        Ok(stats)
    }
}

/// `<uuid>.json` → `<uuid>.history.jsonl`.
fn history_path(doc: &Path) -> PathBuf {
    let stem = doc.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
    doc.with_file_name(format!("{stem}{HISTORY}"))
}

/// The companion file's messages, one per line; a missing file is a session with no messages.
fn read_history(b: &mut SessionBuilder, path: &Path, cwd: Option<&str>, stats: &mut ParseStats) {
    if !path.is_file() {
        return;
    }
    let bytes = match read_source(path, stats) {
        Ok(s) => s.bytes,
        Err(e) => {
            stats.problem(e.to_string());
            return;
        }
    };
    let mut lines = ParseStats::default();
    for_each_json_line(&bytes, 0, path, &mut lines, |_, m| message(b, &m, cwd));
    stats.records += lines.records;
    stats.skipped += lines.skipped;
    for p in lines.problems {
        stats.problem(p);
    }
}

/// One message: speech from its text blocks, calls and results from the others.
fn message(b: &mut SessionBuilder, m: &Value, cwd: Option<&str>) {
    let role = match str_at(m, &["role"]) {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        _ => return,
    };
    let time = m.get("user_sent_time").and_then(Timestamp::from_json);
    let Some(Value::Array(blocks)) = m.get("content") else {
        b.push(Turn::new(role, text_blocks(m.get("content"))).at(time));
        return;
    };
    let mut said: Vec<&str> = Vec::new();
    for block in blocks {
        match str_at(block, &["type"]) {
            Some("text") => said.extend(speech(block)),
            Some("tool_use") => {
                flush(b, role, &mut said, time);
                tool_use(b, block.get("tool_use").unwrap_or(&Value::Null), cwd, time);
            }
            Some("tool_result") => {
                flush(b, role, &mut said, time);
                tool_result(b, block.get("tool_result").unwrap_or(&Value::Null), time);
            }
            _ => {}
        }
    }
    flush(b, role, &mut said, time);
}

/// A text block's text, unless it is internal or a system reminder.
fn speech(block: &Value) -> Option<&str> {
    if block.get("internalOnly").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    str_at(block, &["text"]).filter(|t| !t.contains("<system-reminder>"))
}

fn flush(b: &mut SessionBuilder, role: Role, said: &mut Vec<&str>, time: Option<Timestamp>) {
    let text = said.iter().map(|t| t.trim()).filter(|t| !t.is_empty()).collect::<Vec<_>>().join("\n");
    said.clear();
    b.push(Turn::new(role, text).at(time));
}

fn tool_use(b: &mut SessionBuilder, call: &Value, cwd: Option<&str>, time: Option<Timestamp>) {
    let name = first_str(call, &["name"]).unwrap_or("tool");
    let input = json_arg(call.get("input"));
    let turn = call_turn(&TOOLS, &KEYS, name, &input, cwd, time);
    b.push_call(first_str(call, &["tool_use_id"]), turn);
}

fn tool_result(b: &mut SessionBuilder, result: &Value, time: Option<Timestamp>) {
    let id = first_str(result, &["tool_use_id"]).unwrap_or("");
    let text = text_blocks(result.get("content"));
    let is_error = first_str(result, &["status"]).is_some_and(|s| s != "success");
    if !b.complete_call(id, &text, is_error, None, time) {
        b.push_orphan_result(id, &text, is_error, None, time);
    }
}

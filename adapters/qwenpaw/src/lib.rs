//! QwenPaw / CoPaw (`qwenpaw`): an AgentScope-based personal agent that keeps each session
//! as one JSON document, the agent's serialized memory, at
//! `~/.qwenpaw/workspaces/<workspace>/sessions/[<channel>/]<stem>.json` (the older name
//! `~/.copaw/workspaces/…` is read too), rewritten whole on change.
//!
//! No family reader: the document is AgentScope's own. Two generations: `agent.memory.content`
//! is a list of `[message, marks]` pairs (element 0 is the message, with Anthropic-style
//! blocks); QwenPaw 2.x (AgentScope 2, checked on 2.2.2.post1) writes
//! `agent.state.context`, a list of bare messages whose assistant message holds the whole
//! step in order: `tool_call` blocks (`input` a JSON string), the `tool_result` blocks that
//! answer them (`output[]` text blocks, `state` `success`/`error`), `thinking` and `text`.
//! QwenPaw 2.x also writes every message through to `<workspace>/history.db`
//! (`conversation_history`, one row per user message, model step and tool result). Its
//! `scroll` context manager evicts the middle of a long session from `state.context` past
//! a token threshold; those turns are then only in `history.db`, so the rows of the
//! document's session (`agent.scroll.index.session_id`) that are not in the context are
//! read first, in `seq` order.
//!
//! `DEJA_QWENPAW_ROOT` names one workspaces root (the directory holding the workspace
//! directories) and `DEJA_QWENPAW_ROOTS` a path list of them; either replaces the two
//! default roots. QwenPaw has no relocation variable of its own that the page knows of.
//!
//! | record / field | Turn | rule |
//! | --- | --- | --- |
//! | `role:"user"`, `text` blocks | `User` | blocks joined with `\n` |
//! | `role:"assistant"`, `text` blocks | `Assistant` | |
//! | assistant `thinking` blocks | `Reasoning` | only with `include_reasoning` |
//! | assistant `tool_use` / `tool_call` (`id`, `name`, `input`) | `ToolCall` | command / files / edit decoded generically (`command`/`cmd`, `path`/`file_path`, old/new text keys) |
//! | `role:"system"` with `tool_result` blocks (`id`, `output`) | folded into its call | QwenPaw files results under the system role; an unpaired one is a `ToolOutput` |
//! | assistant `tool_result` blocks (2.x) | folded into its call | `state:"error"` is an error; a shell result's `Command failed with exit code N.` first line is the exit status, any other shell result exit 0 |
//! | `history.db` row not in the context: `context_msg` user (tag `external_user_query` or none) | `User` | other tags are scroll's own recall messages: skipped |
//! | `history.db` row not in the context: `model_turn`, `tool_result` | as the 2.x assistant blocks | `blocks` JSON read like a step |
//! | user text starting with QwenPaw's bootstrap guidance (`# 引导模式` / `# BOOTSTRAP MODE` … `---`) | `User` | the guidance is harness-injected and cut off |
//! | `role:"system"` otherwise, other roles | skipped | the system prompt and notices |
//! | a `content` item that is not a `[message, marks]` pair or a message | skipped | counted in the parse stats |
//!
//! Session id `<workspace>:<stem>`, or `<workspace>:<channel>:<stem>` one level deeper
//! (stems collide across channels). No title or project is recorded; the workspace is the
//! only grouping and is not a directory, so `project` stays empty. Message `timestamp`s
//! (`YYYY-MM-DD HH:MM:SS.fff`) are local wall-clock time without a zone, read in the
//! machine's zone; 2.x messages carry `created_at` (ISO, also zone-less local) instead.
//! A document without memory or context yields no session.

use std::path::Path;

use deja_core::exit::ExitLine;
use deja_core::family::json_docs::{call_turn, first_str, json_arg, COMMON_KEYS};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::read::{at, parse_json_document, read_source, str_at};
use deja_core::store::{Files, Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, ExitStatus, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Role,
    SessionBuilder, SessionSink, SourceRef, Timestamp, ToolMap, Turn,
};
use serde_json::Value;

const ID: &str = "qwenpaw";

/// Tool names are unknown in the material: the usual shell and file names, decoded by
/// their argument keys.
const TOOLS: ToolMap = ToolMap {
    shell: &["execute_shell_command", "shell", "bash", "run_shell_command", "execute_command"],
    read: &["read_file", "view_text_file", "read"],
    edit: &["edit_file", "replace_in_file", "edit"],
    write: &["write_file", "write_text_file", "write"],
};

/// The QwenPaw adapter.
pub struct QwenPawFormat;

deja_core::inventory::submit!(deja_core::Registration(&QwenPawFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "QwenPaw",
    container: "JSON, one document (the agent's serialized memory) per session",
    store: StoreSpec::new(&[Store {
        name: "",
        // QwenPaw, and CoPaw, its former name.
        roots: &[Root::any("~/.qwenpaw/workspaces"), Root::any("~/.copaw/workspaces")],
        // `<workspace>/sessions/<stem>.json` directly, or one channel directory down.
        layout: Layout::Files(Files::new("*/sessions/**/*.json").depth(3)),
    }]),
    needs: &[],
    format_summary: "QwenPaw (formerly CoPaw) writes each session as `{\"agent\": {\"name\", \"memory\": {\"content\": \
        [[message, marks], …]}}}` under `workspaces/<workspace>/sessions/`. Messages are AgentScope messages (`role`, \
        `name`, Anthropic-style `content` blocks, zone-less local `timestamp`); tool results are filed as `tool_result` \
        blocks in `system` messages. QwenPaw 2.x writes `{\"agent\": {\"state\": {\"context\": [message, …]}}}` \
        instead: bare messages with `created_at`, each assistant step's `tool_call` and `tool_result` blocks in order.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::Unknown, handoff: Handoff::Paste("no start-with-prompt command is known") },
};

impl HarnessFormat for QwenPawFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let bytes = read_source(&src.path, &mut stats)?.bytes;
        let doc = parse_json_document(&bytes, &src.path)?;
        let memory = at(&doc, &["agent", "memory", "content"]).or_else(|| at(&doc, &["agent", "state", "context"]));
        let Some(Value::Array(content)) = memory else {
            // No memory yet: common, and not an error.
            return Ok(stats);
        };
        let mut b = SessionBuilder::new(ID, session_id(&src.path), src.clone());
        if at(&doc, &["agent", "memory", "content"]).is_none() {
            evicted_history(&mut b, &doc, content, src, opts, &mut stats);
        }
        for (i, item) in content.iter().enumerate() {
            stats.records += 1;
            let msg = match item {
                Value::Array(pair) => pair.first(),
                m @ Value::Object(_) => Some(m),
                _ => None,
            };
            match msg.filter(|m| m.is_object()) {
                Some(m) => message(&mut b, m, opts),
                None => stats.skip(|| format!("{}: memory item {i} is not a [message, marks] pair", src.path.display())),
            }
        }
        if let Some(s) = b.finish() {
            out.session(s);
        }
        Ok(stats)
    }
}

/// `<workspace>:<stem>`, or `<workspace>:<channel>:<stem>` for a file in a channel directory.
fn session_id(path: &Path) -> String {
    let name = |p: Option<&Path>| p.and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let stem = path.file_name().map(|n| n.to_string_lossy().trim_end_matches(".json").to_string()).unwrap_or_default();
    let parent = path.parent();
    if name(parent) == "sessions" {
        format!("{}:{stem}", name(parent.and_then(Path::parent)))
    } else {
        let ws = parent.and_then(Path::parent).and_then(Path::parent);
        format!("{}:{}:{stem}", name(ws), name(parent))
    }
}

/// A zone-less time in the machine's local zone (an ISO string with a zone is taken as
/// written).
fn local_time(v: Option<&Value>) -> Option<Timestamp> {
    Timestamp::parse_local(v?.as_str()?)
}

fn blocks(m: &Value) -> &[Value] {
    match m.get("content") {
        Some(Value::Array(b)) => b,
        _ => &[],
    }
}

fn texts(m: &Value, kind: &str, key: &str) -> String {
    if kind == "text" {
        if let Some(Value::String(s)) = m.get("content") {
            return s.trim().to_string();
        }
    }
    blocks(m)
        .iter()
        .filter(|b| str_at(b, &["type"]) == Some(kind))
        .filter_map(|b| str_at(b, &[key]))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn message(b: &mut SessionBuilder, m: &Value, opts: &ParseOptions) {
    let time = local_time(m.get("timestamp").or_else(|| m.get("created_at")));
    match str_at(m, &["role"]) {
        Some("user") => {
            b.push(Turn::new(Role::User, strip_bootstrap(&texts(m, "text", "text"))).at(time));
        }
        Some("assistant") if blocks(m).iter().any(|b| str_at(b, &["type"]) == Some("tool_result")) => {
            step(b, m, time, opts);
        }
        Some("assistant") => {
            if opts.include_reasoning {
                b.push(Turn::new(Role::Reasoning, texts(m, "thinking", "thinking")).at(time));
            }
            b.push(Turn::new(Role::Assistant, texts(m, "text", "text")).at(time));
            for block in blocks(m).iter().filter(|b| matches!(str_at(b, &["type"]), Some("tool_use" | "tool_call"))) {
                let name = first_str(block, &["name"]).unwrap_or("tool");
                let input = json_arg(block.get("input"));
                b.push_call(first_str(block, &["id"]), call_turn(&TOOLS, &COMMON_KEYS, name, &input, None, time));
            }
        }
        Some("system") => {
            for block in blocks(m).iter().filter(|b| str_at(b, &["type"]) == Some("tool_result")) {
                let id = first_str(block, &["id", "tool_use_id"]).unwrap_or("");
                let output = result_text(block);
                let is_error = block.get("is_error").and_then(Value::as_bool) == Some(true);
                if !b.complete_call(id, &output, is_error, None, time) {
                    b.push_orphan_result(id, &output, is_error, None, time);
                }
            }
        }
        _ => {}
    }
}

/// QwenPaw 2.x's `scroll` context manager evicts the middle of a long session from
/// `state.context`; every message was written through to `<workspace>/history.db`
/// (`conversation_history`) first. Rows of this document's session
/// (`agent.scroll.index.session_id`) whose message or call is not in the context are
/// read before it, in `seq` order. A missing or unreadable database reads nothing more
/// (counted as a problem when it cannot be opened).
fn evicted_history(b: &mut SessionBuilder, doc: &Value, context: &[Value], src: &SourceRef, opts: &ParseOptions, stats: &mut ParseStats) {
    let Some(sid) = str_at(doc, &["agent", "scroll", "index", "session_id"]) else { return };
    let Some(db) = src
        .path
        .ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == "sessions"))
        .and_then(Path::parent)
        .map(|ws| ws.join("history.db"))
    else {
        return;
    };
    if !db.is_file() {
        return;
    }
    // Ids already in the context: message ids, and the ids of calls and results in them.
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for m in context {
        seen.extend(str_at(m, &["id"]));
        seen.extend(blocks(m).iter().filter_map(|b| str_at(b, &["id"])));
    }
    let snap = match deja_core::sqlite::Snapshot::open(&db) {
        Ok(s) => s,
        Err(e) => {
            stats.skip(|| format!("{}: {e}", db.display()));
            return;
        }
    };
    let rows = snap.conn().prepare("SELECT kind, role, content, blocks, created_at, dedup_key, tool_call_id, metadata FROM conversation_history WHERE session_id = ?1 ORDER BY seq").and_then(|mut q| {
        q.query_map([sid], |r| {
            Ok((
                r.get::<_, Option<String>>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, Option<String>>(4)?,
                r.get::<_, Option<String>>(5)?,
                r.get::<_, Option<String>>(6)?,
                r.get::<_, Option<String>>(7)?,
            ))
        })?
        .collect::<Result<Vec<_>, _>>()
    });
    let rows = match rows {
        Ok(r) => r,
        Err(e) => {
            stats.skip(|| format!("{}: conversation_history: {e}", db.display()));
            return;
        }
    };
    for (kind, role, content, blocks_json, created_at, dedup, call_id, metadata) in rows {
        let key = dedup.as_deref().or(call_id.as_deref()).unwrap_or("");
        if seen.contains(key) || (kind.as_deref() == Some("tool_result") && call_id.as_deref().is_some_and(|c| seen.contains(c))) {
            continue;
        }
        stats.records += 1;
        let parsed: Value = blocks_json.as_deref().and_then(|j| serde_json::from_str(j).ok()).unwrap_or(Value::Null);
        let time = local_time(created_at.as_ref().map(|t| Value::String(t.clone())).as_ref());
        match (kind.as_deref(), role.as_deref()) {
            (Some("context_msg"), Some("user")) => {
                // Scroll's own recall and summary messages are tagged otherwise; only the
                // person's queries (or untagged rows) are speech.
                let tag = metadata
                    .as_deref()
                    .and_then(|m| serde_json::from_str::<Value>(m).ok())
                    .and_then(|m| str_at(&m, &["qwenpaw_tag"]).map(str::to_string));
                if tag.as_deref().is_some_and(|t| t != "external_user_query") {
                    continue;
                }
                let text = content.unwrap_or_default();
                b.push(Turn::new(Role::User, strip_bootstrap(text.trim())).at(time));
            }
            (Some("model_turn" | "tool_result"), _) if parsed.is_array() => {
                step(b, &serde_json::json!({ "content": parsed }), time, opts);
            }
            _ => stats.skip(|| format!("{}: conversation_history row of kind {kind:?} not read", db.display())),
        }
    }
}

/// A result block's `output` (or `content`): a string, or a list of strings / text blocks.
fn result_text(block: &Value) -> String {
    match block.get("output").or_else(|| block.get("content")) {
        Some(Value::String(s)) => s.trim().to_string(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.as_str().or_else(|| str_at(p, &["text"])))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A QwenPaw 2.x assistant message: one agent step with its calls, their results,
/// thinking and text as blocks in the order they happened, so turns keep that order
/// (consecutive text blocks make one answer).
fn step(b: &mut SessionBuilder, m: &Value, time: Option<Timestamp>, opts: &ParseOptions) {
    // Pending answer text and the time of its first block.
    let mut prose: Vec<&str> = Vec::new();
    let mut prose_time = time;
    let flush = |b: &mut SessionBuilder, prose: &mut Vec<&str>, at: Option<Timestamp>| {
        if !prose.is_empty() {
            b.push(Turn::new(Role::Assistant, prose.join("\n")).at(at));
            prose.clear();
        }
    };
    for block in blocks(m) {
        // Each block carries its own `created_at`; the message's is the fallback.
        let at_block = local_time(block.get("created_at")).or(time);
        match str_at(block, &["type"]) {
            Some("text") => {
                if let Some(t) = str_at(block, &["text"]).map(str::trim).filter(|t| !t.is_empty()) {
                    if prose.is_empty() {
                        prose_time = at_block;
                    }
                    prose.push(t);
                }
            }
            Some("thinking") => {
                flush(b, &mut prose, prose_time);
                if opts.include_reasoning {
                    if let Some(t) = str_at(block, &["thinking"]).map(str::trim).filter(|t| !t.is_empty()) {
                        b.push(Turn::new(Role::Reasoning, t).at(at_block));
                    }
                }
            }
            Some("tool_call" | "tool_use") => {
                flush(b, &mut prose, prose_time);
                let name = first_str(block, &["name"]).unwrap_or("tool");
                let input = json_arg(block.get("input"));
                b.push_call(first_str(block, &["id"]), call_turn(&TOOLS, &COMMON_KEYS, name, &input, None, at_block));
            }
            Some("tool_result") => {
                flush(b, &mut prose, prose_time);
                let id = first_str(block, &["id", "tool_use_id"]).unwrap_or("");
                let output = result_text(block);
                let is_error = str_at(block, &["state"]) == Some("error") || block.get("is_error").and_then(Value::as_bool) == Some(true);
                let shell = first_str(block, &["name"]).is_some_and(|n| TOOLS.shell.contains(&n));
                let exit = if shell { Some(shell_exit(&output)) } else { None };
                if !b.complete_call(id, &output, is_error, exit.clone(), at_block) {
                    b.push_orphan_result(id, &output, is_error, exit, at_block);
                }
            }
            // images and unknown blocks say nothing indexable.
            _ => {}
        }
    }
    flush(b, &mut prose, prose_time);
}

/// `execute_shell_command` reports a non-zero exit as a first line
/// `Command failed with exit code N.`; anything else is a clean run (exit 0).
fn shell_exit(output: &str) -> ExitStatus {
    ExitStatus::Code(deja_core::exit::exit_code(output, &[ExitLine::first("Command failed with exit code ")]).unwrap_or(0))
}

/// QwenPaw prepends its first-run bootstrap guidance (a `# 引导模式` or `# BOOTSTRAP MODE`
/// block ending in a `---` line) to the user's first message; that text is the harness's,
/// so only what follows the rule is the user's.
fn strip_bootstrap(text: &str) -> String {
    if !(text.starts_with("# 引导模式") || text.starts_with("# BOOTSTRAP MODE")) {
        return text.to_string();
    }
    match text.find("\n---\n") {
        Some(i) => text[i + 5..].trim().to_string(),
        None => text.to_string(),
    }
}

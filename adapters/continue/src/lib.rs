//! Continue (`continue`): one JSON document per session at
//! `${CONTINUE_GLOBAL_DIR:-~/.continue}/sessions/<sessionId>.json`, rewritten whole on every
//! change, beside a `sessions.json` list that holds what the documents lack (the creation
//! time, and a title and workspace as fallbacks). The VS Code and JetBrains extensions and
//! the `cn` CLI share the store.
//!
//! No family reader: the document is Continue's own (`Session`/`ChatHistoryItem` from its
//! `core/index.d.ts`). Each document is one source whose fingerprint also covers
//! `sessions.json` (`with_part`), since the list supplies the start time and fallbacks; a
//! rewritten document replaces its session, keyed by `sessionId`.
//!
//! `DEJA_CONTINUE_ROOT` names the sessions root (the `sessions/` directory itself);
//! `CONTINUE_GLOBAL_DIR` replaces `~/.continue`.
//!
//! | record / field | Turn | rule |
//! | --- | --- | --- |
//! | `history[].message`, `role: "user"` | `User` | `content` string, or the parts' `text` joined with `\n`; `editorState` repeats it and is not read |
//! | `history[].message`, `role: "assistant"` | `Assistant` | same; an item that only calls tools has `content: ""` and yields no speech |
//! | `history[].toolCallStates[]` | `ToolCall` | name from `toolCall.function.name`, input `parsedArgs` (else the decoded `arguments`); `Bash`/`run_terminal_command` → `tool.command`; file tools → `files` (relative paths joined onto the workspace) + `edit`; `output[].content` joined is the text; `status` `errored`/`canceled` → `is_error`. No exit code is written |
//! | `role: "system"`, `role: "tool"` | skipped | configuration; a tool's result arrives in the asking item's `toolCallStates` |
//! | `usage`, `contextItems` | skipped | accounting and attached context, not speech |
//!
//! Times: no record carries one. The start is the list entry's `dateCreated` (an ISO
//! string, or epoch milliseconds in a string as `cn` 1.5.47 writes), else the document's
//! mtime; history item `i` is placed at start + `i` seconds so order survives.

use std::collections::HashMap;
use std::path::Path;

use deja_core::family::json_docs::{call_turn, file_mtime, json_arg, text_blocks, ToolKeys};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::read::{parse_json_document, read_source, str_at};
use deja_core::store::{Files, Layout, Part, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Role, SessionBuilder,
    SessionSink, SourceRef, Timestamp, ToolMap, Turn,
};
use serde_json::Value;
mod wiring;

const ID: &str = "continue";
const LIST: &str = "sessions.json";

/// The Continue adapter.
pub struct ContinueFormat;

deja_core::inventory::submit!(deja_core::Registration(&ContinueFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Continue",
    container: "JSON, one document per session + a sessions.json list",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("${CONTINUE_GLOBAL_DIR:-~/.continue}/sessions")],
        // `sessions.json` lists every session's title: a part of each, never one itself.
        layout: Layout::Files(Files::new("*.json").exclude(&[LIST]).parts(&[Part::InRoot(LIST)])),
    }]),
    needs: &[],
    format_summary: "Whole-file JSON documents under `${CONTINUE_GLOBAL_DIR:-~/.continue}/sessions/`, one per session \
        (`sessionId`, `title`, `workspaceDirectory`, `history[]`), rewritten on change, plus `sessions.json`, the list of \
        sessions with their `dateCreated`. History items hold a `message` (`role`, `content` as a string or text parts) \
        and, for an assistant item that called tools, `toolCallStates[]` with the call, its parsed arguments and its \
        output; the shell tool is `Bash`. No record carries a time: items are placed one second apart from the list's \
        `dateCreated`. `system` and `tool` messages are skipped.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "`mcpServers:` list entry named `deja` (`<exe> mcp`) in ${CONTINUE_GLOBAL_DIR:-~/.continue}/config.yaml; a failing server aborts headless `cn -p`",
        ),
        auto_recall: Capability::Blocked("cn loads Claude-shaped hook settings but never fires them (1.5.47)"),
        skill: Capability::Planned("${CONTINUE_GLOBAL_DIR:-~/.continue}/skills/deja-history/SKILL.md, named in cn's `Skills` tool and offered as /deja-history"),
        command: Capability::Planned("`prompts:` entry in config.yaml → /deja"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::Always(ResumeSpec::in_dir(&["cn", "--fork", "{id}"]).with_note("cn forks the session: its history continues under a new id")), handoff: Handoff::Exec(&["cn", "{prompt}"]) },
};

/// Continue's tool names. `cn` 1.5.47 runs commands through `Bash`; the editor extensions'
/// built-in tools are snake_case.
const TOOLS: ToolMap = ToolMap {
    shell: &["Bash", "run_terminal_command"],
    read: &["Read", "read_file", "read_currently_open_file"],
    edit: &["Edit", "MultiEdit", "edit_existing_file", "single_find_and_replace", "search_and_replace_in_file"],
    write: &["Write", "create_new_file"],
};

/// Continue's argument names (`filepath`, `contents` in the extension's tools).
const KEYS: ToolKeys = ToolKeys {
    command: &["command", "cmd"],
    path: &["filepath", "file_path", "path", "filePath"],
    old: &["old_string", "old_str", "oldText"],
    new: &["new_string", "new_str", "newText", "contents", "content", "changes"],
};

impl HarnessFormat for ContinueFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::ContinueWiring)
    }

    fn parse(&self, src: &SourceRef, _opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let bytes = read_source(&src.path, &mut stats)?.bytes;
        let doc = parse_json_document(&bytes, &src.path)?;
        stats.records = 1;
        let stem = src.path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let id = str_at(&doc, &["sessionId"]).filter(|s| !s.trim().is_empty()).unwrap_or(stem).to_string();
        let entry = list_entry(&src.path, &id);
        let entry = entry.as_ref();
        let start = entry
            .and_then(|e| e.get("dateCreated"))
            .and_then(Timestamp::from_json)
            .or_else(|| file_mtime(&src.path))
            .unwrap_or(Timestamp(0));
        let workspace = [doc.get("workspaceDirectory"), entry.and_then(|e| e.get("workspaceDirectory"))]
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .find(|p| !p.trim().is_empty());
        let mut b = SessionBuilder::new(ID, id, src.clone());
        if let Some(Value::Array(items)) = doc.get("history") {
            for (i, item) in items.iter().enumerate() {
                let time = (start.0 != 0).then(|| Timestamp(start.0 + i as i64 * 1000));
                history_item(&mut b, item, workspace, time, &mut stats);
            }
        }
        let project = workspace.unwrap_or(ID).to_string();
        let first_user =
            b.session().turns.iter().find(|t| t.role == Role::User).map(|t| t.text.lines().next().unwrap_or("").trim().to_string());
        // The document's title, else the list's, skipping placeholders in either.
        let title = [str_at(&doc, &["title"]), entry.and_then(|e| str_at(e, &["title"]))]
            .into_iter()
            .flatten()
            .map(str::trim)
            .find(|t| is_real_title(t, first_user.as_deref()))
            .map(str::to_string);
        let s = b.session_mut();
        s.project = Some(project);
        s.title = title;
        if let Some(session) = b.finish() {
            out.session(session);
        }
        Ok(stats)
    }
}

/// One history item: its message as speech, then its tool calls with their outputs.
fn history_item(b: &mut SessionBuilder, item: &Value, cwd: Option<&str>, time: Option<Timestamp>, stats: &mut ParseStats) {
    let Some(message) = item.get("message") else {
        stats.skip(|| "history item without a message".to_string());
        return;
    };
    let role = match str_at(message, &["role"]) {
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        // `system` is configuration; `tool` results also arrive in `toolCallStates`.
        _ => return,
    };
    b.push(Turn::new(role, text_blocks(message.get("content"))).at(time));
    if let Some(Value::Array(states)) = item.get("toolCallStates") {
        for state in states {
            tool_call_state(b, state, cwd, time);
        }
    }
}

/// A `toolCallStates[]` entry: the call and its output in one record.
fn tool_call_state(b: &mut SessionBuilder, state: &Value, cwd: Option<&str>, time: Option<Timestamp>) {
    let Some(name) = str_at(state, &["toolCall", "function", "name"]).filter(|n| !n.is_empty()) else { return };
    let mut input = json_arg(state.get("parsedArgs"));
    if !input.is_object() {
        input = json_arg(state.pointer("/toolCall/function/arguments"));
    }
    let mut turn = call_turn(&TOOLS, &KEYS, name, &input, cwd, time);
    let output = match state.get("output") {
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("content").and_then(Value::as_str))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    turn.text = output;
    if let Some(tool) = turn.tool.as_mut() {
        tool.call_id = str_at(state, &["toolCallId"]).filter(|s| !s.is_empty()).map(str::to_string);
        tool.is_error = matches!(str_at(state, &["status"]), Some("errored" | "canceled" | "cancelled" | "error"));
    }
    let call_id = turn.tool.as_ref().and_then(|t| t.call_id.clone());
    b.push_call(call_id.as_deref(), turn);
}

/// The `sessions.json` entry for `id`, when the list is there and names it.
fn list_entry(doc_path: &Path, id: &str) -> Option<Value> {
    let list = doc_path.with_file_name(LIST);
    let mut ignored = ParseStats::default();
    let bytes = read_source(&list, &mut ignored).ok()?.bytes;
    let Ok(Value::Array(entries)) = parse_json_document(&bytes, &list) else { return None };
    let by_id: HashMap<&str, &Value> = entries.iter().filter_map(|e| Some((str_at(e, &["sessionId"])?, e))).collect();
    by_id.get(id).map(|e| (*e).clone())
}

/// Continue's placeholders (`New Session`, `Untitled Session`) and a title that only
/// repeats the first prompt line are not titles: the indexer derives one instead.
fn is_real_title(title: &str, first_user_line: Option<&str>) -> bool {
    let lower = title.to_ascii_lowercase();
    !title.is_empty() && lower != "new session" && lower != "untitled session" && Some(title) != first_user_line
}

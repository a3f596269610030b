//! Posit Assistant (`posit-assistant`): Posit's assistant for R/Python data work keeps one
//! directory per conversation under `~/.posit/assistant/workspaces/<workspaceId>/`:
//! `conversation.json` (the message tree and metadata, rewritten) and `lm-messages.jsonl`
//! (Vercel AI SDK model messages, `{"id": <int>, "message": {role, content,
//! providerOptions}}` per line). `workspace.json` beside them names the folder.
//! Sub-agents keep the same pair under `<conversationId>/subagents/<childId>/`.
//!
//! No family reader: the AI SDK message shape is not another harness's log. One source
//! per conversation: `lm-messages.jsonl` with `conversation.json` and `workspace.json` as
//! parts. It is **not** marked append-only although the log only grows: which lines
//! count depends on `conversation.json`'s active branch, which a later rewrite can move,
//! so the conversation is re-read whole. `ui-messages.jsonl` (a UI copy) and `index.json`
//! are not read.
//!
//! `DEJA_POSIT_ASSISTANT_ROOT` names the workspaces directory. `DEJA_INCLUDE_SUBAGENTS=0`
//! leaves sub-agent conversations out.
//!
//! | record / field | Turn | rule |
//! | --- | --- | --- |
//! | `role:"user"`, string or `text` parts | `User` | |
//! | `role:"assistant"`, `text` parts | `Assistant` | `<MESSAGESUMMARY>…</MESSAGESUMMARY>` removed (the harness's own summary of the message) |
//! | assistant `reasoning` parts | `Reasoning` | only with `include_reasoning` |
//! | assistant `tool-call` parts (`toolCallId`, `toolName`, `input`) | `ToolCall` | `read` → `files` (`file_path`); others decoded generically (`command`, `path`/`file_path`, old/new text) |
//! | `role:"tool"`, `tool-result` parts (`toolCallId`, `output: {type, value}`) | folded into its call | `output.type` starting `error` → `is_error`; a JSON `value` is kept as JSON text |
//! | `role:"system"`, other roles, usage metadata | skipped | |
//! | lines whose id a node with `isActive: false` lists | skipped | abandoned branches |
//! | malformed or torn line | skipped | counted in the parse stats |
//!
//! Session: id `root.id` (else the directory name); title `root.title`; project the
//! workspace's `path`; `kind` `root.metadata.kind`; a sub-agent's `parent` is the
//! conversation it sits under. Times are epoch milliseconds: a line's
//! `providerOptions.providerMetadata.positai.timestamp`, else the timestamp of the tree
//! node that lists it, else the previous line's; `root.timestamp` bounds the session.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use deja_core::discover::find_files;
use deja_core::family::json_docs::{call_turn, first_str, json_arg, COMMON_KEYS};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::read::{at, for_each_json_line, parse_json_document, read_source, str_at};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Role,
    SessionBuilder, SessionSink, SourceRef, StoreEnv, Timestamp, ToolMap, Turn,
};
use serde_json::Value;

const ID: &str = "posit-assistant";
const SUMMARY_OPEN: &str = "<MESSAGESUMMARY>";
const SUMMARY_CLOSE: &str = "</MESSAGESUMMARY>";

/// Only `read` is known; the rest are the likely names, decoded by their argument keys.
const TOOLS: ToolMap = ToolMap {
    shell: &["bash", "shell", "runCommand", "run_command"],
    read: &["read", "readFile", "read_file"],
    edit: &["edit", "editFile", "edit_file"],
    write: &["write", "writeFile", "write_file"],
};

/// The Posit Assistant adapter.
pub struct PositAssistantFormat;

deja_core::inventory::submit!(deja_core::Registration(&PositAssistantFormat));

static INJECTED: InjectedText = InjectedText { blocks: &["MESSAGESUMMARY"], ..InjectedText::NONE };

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Posit Assistant",
    container: "directory per conversation: conversation.json tree + lm-messages.jsonl (AI SDK messages)",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("~/.posit/assistant/workspaces")],
        layout: Layout::Custom {
            shape: "<workspaceId>/<conversationId>/lm-messages.jsonl, …/subagents/<child>/lm-messages.jsonl",
            walk: Some(walk_workspaces),
        },
    }])
    .deja_vars(&["DEJA_INCLUDE_SUBAGENTS"]),
    needs: &[],
    format_summary: "One directory per conversation under `~/.posit/assistant/workspaces/<workspaceId>/`: \
        `lm-messages.jsonl` holds Vercel AI SDK model messages (`user`, `assistant` with `text`/`reasoning`/`tool-call` \
        parts, `tool` with `tool-result` parts) keyed by an integer id, and `conversation.json` the message tree whose \
        inactive nodes mark abandoned branches. `workspace.json` names the folder; sub-agents nest under `subagents/`.",
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

impl HarnessFormat for PositAssistantFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let Some(dir) = src.path.parent() else { return Err(FormatError::corrupt(&src.path, "no conversation directory")) };
        let is_child = dir.parent().and_then(Path::file_name).is_some_and(|n| n == "subagents");
        let tree = read_doc(&dir.join("conversation.json"), &mut stats);
        let workspace = read_doc(&workspace_dir(dir, is_child).join("workspace.json"), &mut stats);
        let root = tree.get("root").unwrap_or(&Value::Null);
        // Which lm-message ids are off the live path, and each listed id's node time.
        let mut inactive = HashSet::new();
        let mut node_time = HashMap::new();
        if let Some(Value::Array(nodes)) = tree.get("messages") {
            for node in nodes {
                let ids = match node.get("lmMessageIds") {
                    Some(Value::Array(ids)) => ids.iter().filter_map(line_id).collect::<Vec<_>>(),
                    _ => Vec::new(),
                };
                let t = node.get("timestamp").and_then(Timestamp::from_json);
                for id in ids {
                    if node.get("isActive").and_then(Value::as_bool) == Some(false) {
                        inactive.insert(id.clone());
                    }
                    if let Some(t) = t {
                        node_time.insert(id, t);
                    }
                }
            }
        }
        let dir_name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "conversation".into());
        let id = first_str(root, &["id"]).map(str::to_string).unwrap_or(dir_name);
        let mut b = SessionBuilder::new(ID, id, src.clone());
        let project = first_str(&workspace, &["path"]).map(str::to_string);
        {
            let s = b.session_mut();
            s.title = first_str(root, &["title"]).map(|t| t.trim().to_string());
            s.project = project.clone();
            s.kind = str_at(root, &["metadata", "kind"]).map(str::to_string);
            if is_child {
                // …/<parent conversation>/subagents/<child>/
                s.parent = dir.parent().and_then(Path::parent).and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned());
            }
        }
        let bytes = read_source(&src.path, &mut stats)?.bytes;
        let mut last_time = None;
        for_each_json_line(&bytes, 0, &src.path, &mut stats, |_off, line| {
            let lid = line.get("id").and_then(line_id);
            if lid.as_ref().is_some_and(|i| inactive.contains(i)) {
                return;
            }
            let Some(m) = line.get("message").filter(|m| m.is_object()) else { return };
            let time = at(m, &["providerOptions", "providerMetadata", "positai", "timestamp"])
                .and_then(Timestamp::from_json)
                .or_else(|| lid.as_ref().and_then(|i| node_time.get(i).copied()))
                .or(last_time);
            last_time = time;
            message(&mut b, m, time, opts, project.as_deref());
        });
        if b.turn_count() > 0 {
            b.touch(root.get("timestamp").and_then(Timestamp::from_json));
        }
        if let Some(s) = b.finish() {
            out.session(s);
        }
        Ok(stats)
    }
}

/// Every conversation under the workspaces root: `workspace / conversation /
/// lm-messages.jsonl`, or `…/subagents/<child>/lm-messages.jsonl` for a sub-agent run
/// (read only with `DEJA_INCLUDE_SUBAGENTS` on), each with its `conversation.json` and
/// its workspace's `workspace.json`.
fn walk_workspaces(root: &Path, env: &StoreEnv, found: &mut Discovery) {
    let subagents = env.include_subagents();
    for path in find_files(root, 4, &|n| n == "lm-messages.jsonl") {
        let is_child = path.parent().and_then(Path::parent).and_then(Path::file_name).is_some_and(|n| n == "subagents");
        if is_child && !subagents {
            continue;
        }
        let Some(dir) = path.parent() else { continue };
        let workspace = workspace_dir(dir, is_child).join("workspace.json");
        let conversation = dir.join("conversation.json");
        found.sources.push(SourceRef::file(&path).with_part(conversation).with_part(workspace));
    }
}

/// The workspace directory of a conversation directory (two more levels up for a sub-agent).
fn workspace_dir(dir: &Path, is_child: bool) -> PathBuf {
    let up = if is_child { dir.parent().and_then(Path::parent).and_then(Path::parent) } else { dir.parent() };
    up.map(Path::to_path_buf).unwrap_or_default()
}

/// A JSON document, or `Null` when it is missing or does not parse (noted in the stats).
fn read_doc(path: &Path, stats: &mut ParseStats) -> Value {
    let Ok(bytes) = std::fs::read(path) else { return Value::Null };
    match parse_json_document(&bytes, path) {
        Ok(v) => v,
        Err(e) => {
            stats.problem(e.to_string());
            Value::Null
        }
    }
}

/// An lm-message id (an integer, sometimes written as a string) as a lookup key.
fn line_id(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

fn parts(m: &Value) -> &[Value] {
    match m.get("content") {
        Some(Value::Array(p)) => p,
        _ => &[],
    }
}

fn part_texts(m: &Value, kind: &str) -> String {
    if kind == "text" {
        if let Some(Value::String(s)) = m.get("content") {
            return s.trim().to_string();
        }
    }
    parts(m)
        .iter()
        .filter(|p| str_at(p, &["type"]) == Some(kind))
        .filter_map(|p| str_at(p, &["text"]))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` without its `<MESSAGESUMMARY>…</MESSAGESUMMARY>` spans (an unclosed one runs to the end).
fn strip_summary(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(SUMMARY_OPEN) {
        out.push_str(&rest[..i]);
        rest = &rest[i + SUMMARY_OPEN.len()..];
        match rest.find(SUMMARY_CLOSE) {
            Some(j) => rest = &rest[j + SUMMARY_CLOSE.len()..],
            None => rest = "",
        }
    }
    out.push_str(rest);
    out.trim().to_string()
}

fn message(b: &mut SessionBuilder, m: &Value, time: Option<Timestamp>, opts: &ParseOptions, cwd: Option<&str>) {
    match str_at(m, &["role"]) {
        Some("user") => {
            b.push(Turn::new(Role::User, part_texts(m, "text")).at(time));
        }
        Some("assistant") => {
            if opts.include_reasoning {
                b.push(Turn::new(Role::Reasoning, part_texts(m, "reasoning")).at(time));
            }
            b.push(Turn::new(Role::Assistant, strip_summary(&part_texts(m, "text"))).at(time));
            for p in parts(m).iter().filter(|p| str_at(p, &["type"]) == Some("tool-call")) {
                let name = first_str(p, &["toolName"]).unwrap_or("tool");
                let input = json_arg(p.get("input").or_else(|| p.get("args")));
                b.push_call(first_str(p, &["toolCallId"]), call_turn(&TOOLS, &COMMON_KEYS, name, &input, cwd, time));
            }
        }
        Some("tool") => {
            for p in parts(m).iter().filter(|p| str_at(p, &["type"]) == Some("tool-result")) {
                let id = first_str(p, &["toolCallId"]).unwrap_or("");
                let output = p.get("output").unwrap_or(&Value::Null);
                let is_error = str_at(output, &["type"]).is_some_and(|t| t.starts_with("error"));
                let text = match output.get("value") {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Null) | None => match output {
                        Value::String(s) => s.clone(),
                        _ => String::new(),
                    },
                    Some(v) => v.to_string(),
                };
                if !b.complete_call(id, text.trim(), is_error, None, time) {
                    b.push_orphan_result(id, text.trim(), is_error, None, time);
                }
            }
        }
        _ => {}
    }
}

//! OpenHands CLI (`openhands`): one directory per conversation under
//! `~/.openhands/conversations/<conversation-id>/`, holding `base_state.json` (id, agent
//! and LLM config, workspace) and `events/event-<NNNNN>-<uuid>.json`, one JSON object per
//! event, a new file for each new event.
//!
//! No family reader: the layout is the OpenHands software-agent SDK's persistence. One
//! conversation directory is one source: its path is `base_state.json` (or, without one,
//! the `events/` directory) and its parts include the `events/` directory, whose mtime and
//! size change whenever an event file is created, so a new event changes the
//! fingerprint and the whole conversation is re-read and replaces its session (keyed by
//! the conversation id). Event files are written once, never edited in place.
//!
//! A sub-agent the `task` tool starts is a conversation of the same layout in
//! `<conversation>/subagents/<id>/` (CLI 1.16.0): its own source, `kind: "subagent"`, the
//! parent the enclosing conversation's id (skipped with `DEJA_INCLUDE_SUBAGENTS=0`).
//!
//! Event `timestamp`s are the SDK's `datetime.now().isoformat()`: local wall-clock time
//! without a zone, read in the machine's zone (a time with a zone is taken as written).
//!
//! `DEJA_OPENHANDS_ROOT` names the conversations root (the directory the conversation
//! directories sit in); else the CLI's own `OPENHANDS_CONVERSATIONS_DIR`, else
//! `OPENHANDS_PERSISTENCE_DIR`'s `conversations/` (both read from CLI 1.16.0; the page
//! names none).
//!
//! | event `kind` | Turn | rule |
//! | --- | --- | --- |
//! | `MessageEvent`, `llm_message.role: "user"` | `User` | `llm_message.content[]` text blocks |
//! | `MessageEvent`, `llm_message.role: "assistant"` | `Assistant` | same; `thinking_blocks[].thinking` / `reasoning_content` → `Reasoning` only with `include_reasoning` |
//! | `ActionEvent` | `Assistant` (`thought`) + `ToolCall` | `terminal` → `tool.command`; `file_editor` `view` → read, `create`/`write` → write, `str_replace`/`insert`/`append`/`edit` → edit + `old_str`/`new_str` span; `delegate`, `task_tracker` → no call; `action` preferred over the decoded `tool_call.arguments` |
//! | `ObservationEvent` with `tool_call_id` | folded into its call | `observation.content` (string or text blocks), else `command` + `detail`; `exit_code` (top level or `metadata`, `-1` = none) and `is_error` when present |
//! | `ObservationEvent` without a call | `ToolOutput` | an environment notice |
//! | other kinds (system prompt, state updates, errors) | skipped | harness-authored |
//! | an event file that does not decode | skipped | counted in the parse stats |

use std::path::{Path, PathBuf};

use deja_core::discover::{find_files, subdirs};
use deja_core::family::json_docs::{first_str, json_arg, text_blocks};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::model::{cap_text, MAX_EDIT_BYTES};
use deja_core::read::{parse_json_document, read_source, str_at};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, Edit, ExitStatus, FileAction, FileTouch, FormatError, HarnessFormat, HarnessInfo, InjectedText,
    ParseOptions, ParseStats, Role, SessionBuilder, SessionSink, SourceRef, StoreEnv, Timestamp, ToolUse, Turn,
};
use serde_json::Value;

const ID: &str = "openhands";
const BASE_STATE: &str = "base_state.json";
const EVENTS: &str = "events";
const SUBAGENTS: &str = "subagents";

/// The OpenHands CLI adapter.
pub struct OpenHandsFormat;

deja_core::inventory::submit!(deja_core::Registration(&OpenHandsFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "OpenHands CLI",
    container: "JSON, one directory per conversation: base_state.json + one file per event",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("${OPENHANDS_CONVERSATIONS_DIR:-${OPENHANDS_PERSISTENCE_DIR:-~/.openhands}/conversations}")],
        layout: Layout::Custom { shape: "<conversation-id>/events/event-<NNNNN>-<uuid>.json", walk: Some(walk_conversations) },
    }])
    .deja_vars(&["DEJA_INCLUDE_SUBAGENTS"]),
    needs: &[],
    format_summary: "One directory per conversation under `~/.openhands/conversations/`: `base_state.json` (id, agent and LLM \
        config, workspace) and `events/event-<NNNNN>-<uuid>.json`, one JSON object per event, read in name order. \
        `MessageEvent`s carry user and assistant speech as `llm_message.content` text blocks; an `ActionEvent` is the \
        agent's `thought` plus a tool call (`terminal` commands, `file_editor` views and edits), and the \
        `ObservationEvent` with the same `tool_call_id` is its result. Other kinds are skipped. Directory names may be \
        UUIDs without dashes and are normalised.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Always(ResumeSpec::in_dir(&["openhands", "--resume", "{id}"])),
        handoff: Handoff::Paste("no start-with-prompt command is known"),
    },
};

/// Every conversation directory under the root, with its sub-agent conversations.
fn walk_conversations(root: &Path, env: &StoreEnv, found: &mut Discovery) {
    for conv in subdirs(root) {
        add_conversation(found, &conv, env.include_subagents(), 0);
    }
}

impl HarnessFormat for OpenHandsFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let Some(conv) = src.path.parent().map(Path::to_path_buf) else {
            return Err(FormatError::corrupt(&src.path, "not inside a conversation directory"));
        };
        let base = if src.path.file_name().is_some_and(|n| n == BASE_STATE) {
            let bytes = read_source(&src.path, &mut stats)?.bytes;
            let doc = parse_json_document(&bytes, &src.path)?;
            stats.records += 1;
            doc
        } else {
            Value::Null
        };
        let id = first_str(&base, &["id"]).map(str::to_string).unwrap_or_else(|| dir_id(&conv));
        let mut p = Parser { b: SessionBuilder::new(ID, id, src.clone()), opts, working_dir: None, editor_dir: None };
        if let Some(parent) = parent_conversation(&conv) {
            // `<parent>/subagents/<id>/`: a sub-agent the `task` tool started.
            let s = p.b.session_mut();
            s.parent = Some(dir_id(&parent));
            s.kind = Some("subagent".to_string());
        }
        let mut files = find_files(&conv.join(EVENTS), 0, &|n| n.ends_with(".json"));
        files.sort();
        for file in files {
            stats.records += 1;
            let event = read_source(&file, &mut stats).and_then(|b| parse_json_document(&b.bytes, &file));
            match event {
                Ok(event) => p.event(&event, &mut stats),
                Err(e) => stats.skip(|| e.to_string()),
            }
        }
        let project = workspace_dir(&base).map(str::to_string).or(p.working_dir).or(p.editor_dir);
        let mut b = p.b;
        b.session_mut().project = project;
        if let Some(session) = b.finish() {
            out.session(session);
        }
        Ok(stats)
    }
}

/// Sub-agents nest no deeper than this below a top-level conversation.
const MAX_SUBAGENT_DEPTH: usize = 4;

/// One conversation directory as a source (when it has an `events/` directory), then the
/// sub-agent conversations the SDK keeps in its `subagents/<id>/` (same layout).
fn add_conversation(found: &mut Discovery, conv: &Path, include_subagents: bool, depth: usize) {
    let events = conv.join(EVENTS);
    if !events.is_dir() {
        return;
    }
    let base = conv.join(BASE_STATE);
    let path = if base.is_file() { base } else { events.clone() };
    found.sources.push(SourceRef::file(path).with_part(events));
    if !include_subagents || depth >= MAX_SUBAGENT_DEPTH {
        return;
    }
    for sub in subdirs(&conv.join(SUBAGENTS)) {
        add_conversation(found, &sub, include_subagents, depth + 1);
    }
}

/// The conversation directory that started this one, when it sits in a `subagents/` dir.
fn parent_conversation(conv: &Path) -> Option<PathBuf> {
    let holder = conv.parent()?;
    (holder.file_name()? == SUBAGENTS).then(|| holder.parent().map(Path::to_path_buf)).flatten()
}

/// An event `timestamp`: the SDK writes `datetime.now().isoformat()`, the machine's local
/// wall-clock time without a zone, so a zone-less time is read in the local zone; one with
/// a zone or `Z` is taken as written.
fn event_time(v: &Value) -> Option<Timestamp> {
    match v {
        Value::String(s) => Timestamp::parse_local(s),
        other => Timestamp::from_json(other),
    }
}

/// `base_state.json` `workspace.*`: the first non-empty of the names the SDK's workspaces use.
fn workspace_dir(base: &Value) -> Option<&str> {
    let ws = base.get("workspace")?;
    first_str(ws, &["cwd", "path", "mount_path", "root", "repo_path", "repo_root", "working_dir"])
}

/// The directory name as the id, a dashless 32-hex-digit UUID put back in 8-4-4-4-12 form.
fn dir_id(conv: &Path) -> String {
    let name = conv.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    if name.len() == 32 && name.bytes().all(|b| b.is_ascii_hexdigit()) {
        format!("{}-{}-{}-{}-{}", &name[..8], &name[8..12], &name[12..16], &name[16..20], &name[20..])
    } else {
        name.to_string()
    }
}

struct Parser<'a> {
    b: SessionBuilder,
    opts: &'a ParseOptions,
    /// An observation's `metadata.working_dir`, the project when the base state has none.
    working_dir: Option<String>,
    /// The directory of the first absolute `file_editor` path, the last fallback.
    editor_dir: Option<String>,
}

impl Parser<'_> {
    fn event(&mut self, e: &Value, stats: &mut ParseStats) {
        let time = e.get("timestamp").and_then(event_time);
        match str_at(e, &["kind"]) {
            Some("MessageEvent") => self.message(e, time),
            Some("ActionEvent") => self.action(e, time),
            Some("ObservationEvent") => self.observation(e, time),
            Some(_) => {}
            None => stats.skip(|| "event without a kind".to_string()),
        }
    }

    /// A `MessageEvent`: user or assistant speech, reasoning aside.
    fn message(&mut self, e: &Value, time: Option<Timestamp>) {
        let Some(msg) = e.get("llm_message") else { return };
        let role = match str_at(msg, &["role"]) {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            _ => return,
        };
        if role == Role::Assistant && self.opts.include_reasoning {
            let mut reasoning: Vec<&str> = Vec::new();
            if let Some(Value::Array(blocks)) = msg.get("thinking_blocks") {
                reasoning.extend(blocks.iter().filter_map(|b| str_at(b, &["thinking"])));
            }
            reasoning.extend(str_at(msg, &["reasoning_content"]));
            self.b.push(Turn::new(Role::Reasoning, reasoning.join("\n")).at(time));
        }
        self.b.push(Turn::new(role, text_blocks(msg.get("content"))).at(time));
    }

    /// An `ActionEvent`: the agent's thought as speech, then the tool call.
    fn action(&mut self, e: &Value, time: Option<Timestamp>) {
        self.b.push(Turn::new(Role::Assistant, text_blocks(e.get("thought"))).at(time));
        let Some(name) = first_str(e, &["tool_name"]).or_else(|| str_at(e, &["tool_call", "name"])) else { return };
        if matches!(name, "delegate" | "task_tracker") {
            // Delegation and the task list are bookkeeping, not work on the project.
            return;
        }
        let mut action = json_arg(e.get("action"));
        if !action.is_object() {
            action = json_arg(e.pointer("/tool_call/arguments"));
        }
        let mut turn = Turn::new(Role::ToolCall, "").at(time);
        let mut tool = ToolUse { name: name.to_string(), ..ToolUse::default() };
        match name {
            "terminal" => tool.command = first_str(&action, &["command"]).map(|c| c.trim().to_string()),
            "file_editor" => self.file_editor(&mut turn, &action),
            _ => {}
        }
        turn.tool = Some(tool);
        let call_id = first_str(e, &["tool_call_id"]);
        self.b.push_call(call_id, turn);
    }

    /// `file_editor`'s sub-command decides read, write or edit.
    fn file_editor(&mut self, turn: &mut Turn, action: &Value) {
        let Some(path) = first_str(action, &["path"]) else { return };
        if self.editor_dir.is_none() && path.starts_with('/') {
            self.editor_dir = Path::new(path).parent().map(|d| d.display().to_string());
        }
        let capped = |s: &str| {
            let mut s = s.to_string();
            cap_text(&mut s, MAX_EDIT_BYTES);
            s
        };
        let (file_action, edit) = match str_at(action, &["command"]) {
            Some("view") => (FileAction::Read, None),
            Some("create" | "write") => {
                let new = first_str(action, &["file_text", "content", "new_str"]).map(capped);
                (FileAction::Write, new.map(|n| Edit { path: path.to_string(), old: String::new(), new: Some(n) }))
            }
            Some("str_replace" | "insert" | "append" | "edit") => {
                let old = first_str(action, &["old_str"]).unwrap_or("");
                let new = first_str(action, &["new_str"]);
                let edit =
                    (!old.is_empty() || new.is_some()).then(|| Edit { path: path.to_string(), old: capped(old), new: new.map(capped) });
                (FileAction::Edit, edit)
            }
            _ => return,
        };
        turn.files.push(FileTouch { path: path.to_string(), action: file_action });
        turn.edit = edit;
    }

    /// An `ObservationEvent`: a call's result, or an environment notice.
    fn observation(&mut self, e: &Value, time: Option<Timestamp>) {
        let obs = e.get("observation").unwrap_or(&Value::Null);
        if self.working_dir.is_none() {
            self.working_dir = str_at(obs, &["metadata", "working_dir"]).filter(|d| !d.is_empty()).map(str::to_string);
        }
        let mut text = text_blocks(obs.get("content"));
        if text.is_empty() {
            text = [first_str(obs, &["command"]), first_str(obs, &["detail"])].into_iter().flatten().collect::<Vec<_>>().join("\n");
        }
        let exit = [obs.get("exit_code"), obs.pointer("/metadata/exit_code")]
            .into_iter()
            .flatten()
            .find_map(Value::as_i64)
            .filter(|c| *c != -1)
            .map(ExitStatus::Code);
        let is_error = obs.get("is_error").and_then(Value::as_bool).unwrap_or(false);
        match first_str(e, &["tool_call_id"]) {
            Some(id) => {
                if !self.b.complete_call(id, &text, is_error, exit.clone(), time) {
                    self.b.push_orphan_result(id, &text, is_error, exit, time);
                }
            }
            None => {
                self.b.push(Turn::new(Role::ToolOutput, text).at(time));
            }
        }
    }
}

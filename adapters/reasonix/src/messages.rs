//! Reasonix's message list → turns, shared by both store generations: the JSONL
//! transcripts hold the list one message a line, and a 1.x `events.frames` log replays
//! into the same list (see `frames`). A message is OpenAI-shaped
//! (`{role, content, tool_calls, tool_call_id, …}`) plus Reasonix's own fields
//! (`raw_content`, `host_authored`, `origin`, `local_only`, `createdAt`,
//! `tool_execution`).

use deja_core::model::{cap_text, MAX_EDIT_BYTES};
use deja_core::read::str_at;
use deja_core::{Edit, ExitStatus, FileAction, FileTouch, ParseOptions, Role, SessionBuilder, TailState, Timestamp, ToolUse, Turn};
use serde_json::Value;

/// What the emitter keeps between messages: calls still waiting for their result, in
/// order, for results that name no call id (the page's example `tool` line has none).
#[derive(Default)]
pub(crate) struct Emitter {
    waiting: Vec<String>,
    next_anon: u32,
    /// The tool of each call waiting for its result, by id.
    tools: std::collections::HashMap<String, String>,
}

/// The tail state's marks: the calls still waiting for a result, oldest first (a result
/// without an id answers the oldest), and the number of calls that had no id.
const MARK_WAITING: &str = "waiting";
const MARK_ANON: &str = "anonymous_calls";

/// The `Current workspace: "<root>"` line the host writes into its session-context
/// message (1.x CLI sessions have no `header.json`).
pub(crate) fn workspace_line(text: &str) -> Option<String> {
    let rest = &text[text.find("Current workspace:")? + "Current workspace:".len()..];
    let rest = rest.trim_start().strip_prefix('"')?;
    let end = rest.find('"')?;
    let root = rest[..end].trim();
    (!root.is_empty()).then(|| root.to_string())
}

/// A message's text: a string, or the `text` of each part of a part list.
pub(crate) fn content_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|p| match p {
                    Value::String(s) => Some(s.as_str()),
                    other => other.get("text").and_then(Value::as_str),
                })
                .collect();
            texts.join("\n")
        }
        _ => String::new(),
    }
}

/// `raw_content` when set (the text before the host added context, or a tool's uncut
/// result), else `content`.
fn own_text(msg: &Value) -> String {
    let raw = content_text(msg.get("raw_content"));
    if raw.trim().is_empty() {
        content_text(msg.get("content"))
    } else {
        raw
    }
}

fn flag(msg: &Value, key: &str) -> bool {
    msg.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// True for a message the host wrote about itself: `host_authored` user lines, 1.x
/// `origin: "host"` session-context snapshots and `local_only` messages.
pub(crate) fn is_host_message(msg: &Value) -> bool {
    flag(msg, "host_authored") || flag(msg, "local_only") || str_at(msg, &["origin"]) == Some("host")
}

impl Emitter {
    /// An emitter going on from what a read before left in `state`.
    pub(crate) fn resumed(state: &TailState) -> Emitter {
        let waiting = state.marks.get(MARK_WAITING).and_then(|w| serde_json::from_str(w).ok()).unwrap_or_default();
        let next_anon = state.marks.get(MARK_ANON).and_then(|n| n.parse().ok()).unwrap_or(0);
        Emitter { waiting, next_anon, tools: state.open_calls.clone().into_iter().collect() }
    }

    /// What a read of the tail after this one goes on from.
    pub(crate) fn tail_state(&self) -> TailState {
        let mut state = TailState { open_calls: self.tools.clone().into_iter().collect(), ..TailState::default() };
        if !self.waiting.is_empty() {
            if let Ok(w) = serde_json::to_string(&self.waiting) {
                state.marks.insert(MARK_WAITING.to_string(), w);
            }
        }
        if self.next_anon > 0 {
            state.marks.insert(MARK_ANON.to_string(), self.next_anon.to_string());
        }
        state
    }

    /// Emits one message at `time` (the message's own `createdAt` wins when set).
    pub(crate) fn message(&mut self, b: &mut SessionBuilder, msg: &Value, time: Option<Timestamp>, opts: &ParseOptions) {
        let time = msg.get("createdAt").and_then(Timestamp::from_json).filter(|t| t.0 > 0).or(time);
        match str_at(msg, &["role"]) {
            Some("user") if !is_host_message(msg) => {
                b.push(Turn::new(Role::User, own_text(msg)).at(time));
            }
            Some("assistant") if !is_host_message(msg) => {
                if opts.include_reasoning {
                    let reasoning = content_text(msg.get("reasoning_content"));
                    b.push(Turn::new(Role::Reasoning, reasoning).at(time));
                }
                b.push(Turn::new(Role::Assistant, content_text(msg.get("content"))).at(time));
                if let Some(calls) = msg.get("tool_calls").and_then(Value::as_array) {
                    for call in calls {
                        self.call(b, call, time);
                    }
                }
            }
            Some("tool") if !is_host_message(msg) => self.result(b, msg, time),
            // `system`, host-written messages, unknown roles: the harness talking to itself.
            _ => {}
        }
    }

    fn call(&mut self, b: &mut SessionBuilder, call: &Value, time: Option<Timestamp>) {
        // 1.x and JSONL: `{id, name, arguments}`; v0.x: `{id, type, function: {name, arguments}}`.
        let name = str_at(call, &["name"]).or_else(|| str_at(call, &["function", "name"])).unwrap_or("");
        let args = call.get("arguments").or_else(|| call.get("function").and_then(|f| f.get("arguments")));
        let args = match args {
            Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Null),
            Some(v) => v.clone(),
            None => Value::Null,
        };
        let id = match str_at(call, &["id"]).filter(|id| !id.is_empty()) {
            Some(id) => id.to_string(),
            None => {
                self.next_anon += 1;
                format!("#call-{}", self.next_anon)
            }
        };
        b.push_call(Some(&id), tool_turn(name, &args, time));
        self.tools.insert(id.clone(), name.to_string());
        self.waiting.push(id);
    }

    fn result(&mut self, b: &mut SessionBuilder, msg: &Value, time: Option<Timestamp>) {
        let output = own_text(msg);
        let exit = msg.get("tool_execution").and_then(|e| e.get("exitCode")).and_then(Value::as_i64).map(ExitStatus::Code);
        // 1.38 marks a failed tool (no exit code: a file tool's error) with `tool_run_state`.
        let failed = str_at(msg, &["tool_run_state"]) == Some("failed");
        let named = str_at(msg, &["tool_call_id"]).or_else(|| str_at(msg, &["toolCallId"])).filter(|id| !id.is_empty());
        // A result without an id answers the oldest call still waiting.
        let id = match named {
            Some(id) => Some(id.to_string()),
            None if !self.waiting.is_empty() => Some(self.waiting.remove(0)),
            None => None,
        };
        let Some(id) = id else {
            let mut turn = Turn::new(Role::ToolOutput, output).at(time);
            if exit.is_some() || failed {
                let is_error = failed || exit.as_ref().is_some_and(|e| !e.succeeded());
                turn.tool = Some(ToolUse { is_error, exit, ..ToolUse::default() });
            }
            b.push(turn);
            return;
        };
        self.waiting.retain(|w| *w != id);
        let tool = self.tools.remove(&id);
        if !b.complete_call(&id, &output, failed, exit.clone(), time) {
            // A call a read before this tail took: what `delete_range` removed goes with
            // the result, for the indexer to give that call (its file is the call's).
            let resumed = b.session().source.resume.is_some();
            if let Some(i) = b.push_orphan_result(&id, &output, failed, exit, time) {
                if let Some(turn) =
                    b.session_mut().turns.get_mut(i).filter(|_| resumed && !failed && tool.as_deref() == Some("delete_range"))
                {
                    turn.edit = removed_lines(&output).map(|old| Edit { path: String::new(), old, new: None });
                }
            }
            return;
        }
        if let Some(turn) = b.call_mut(&id) {
            removed_lines_of_delete_range(turn, &output);
        }
    }
}

/// `delete_range` records the lines it removed only in the unified diff of its result;
/// a failed call removed nothing.
fn removed_lines_of_delete_range(turn: &mut Turn, output: &str) {
    let Some(tool) = &turn.tool else { return };
    if tool.name != "delete_range" || tool.is_error {
        return;
    }
    let Some(path) = turn.files.first().map(|f| f.path.clone()) else { return };
    if let Some(old) = removed_lines(output) {
        turn.edit = Some(Edit { path, old, new: None });
    }
}

/// The lines a unified diff removes, capped.
fn removed_lines(diff: &str) -> Option<String> {
    let removed: Vec<&str> = diff.lines().filter(|l| l.starts_with('-') && !l.starts_with("---")).map(|l| &l[1..]).collect();
    if removed.is_empty() {
        return None;
    }
    let mut old = removed.join("\n");
    cap_text(&mut old, MAX_EDIT_BYTES);
    Some(old)
}

fn arg<'a>(args: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| args.get(*k).and_then(Value::as_str)).filter(|s| !s.is_empty())
}

const PATH: &[&str] = &["path", "file_path", "filePath"];
const OLD: &[&str] = &["old_string", "old_str", "oldText", "old_text", "search", "old"];
const NEW: &[&str] = &["new_string", "new_str", "newText", "new_text", "replace", "new"];

fn edit_of(path: &str, args: &Value) -> Option<Edit> {
    let old = arg(args, OLD)?;
    let mut old = old.to_string();
    cap_text(&mut old, MAX_EDIT_BYTES);
    Some(Edit { path: path.to_string(), old, new: arg(args, NEW).map(str::to_string) })
}

/// The call turn for one of Reasonix's tools: `bash` → command; file tools → files and
/// the replaced span (see the module table in `lib.rs`).
pub(crate) fn tool_turn(name: &str, args: &Value, time: Option<Timestamp>) -> Turn {
    let mut turn = Turn::new(Role::ToolCall, "").at(time);
    let mut tool = ToolUse { name: name.to_string(), ..ToolUse::default() };
    let touch = |turn: &mut Turn, path: &str, action: FileAction| turn.files.push(FileTouch { path: path.to_string(), action });
    match name {
        "bash" => tool.command = arg(args, &["command", "cmd"]).map(str::to_string),
        "read_file" => {
            if let Some(p) = arg(args, PATH) {
                touch(&mut turn, p, FileAction::Read);
            }
        }
        "write_file" => {
            if let Some(p) = arg(args, PATH) {
                touch(&mut turn, p, FileAction::Write);
            }
        }
        "edit_file" => {
            if let Some(p) = arg(args, PATH) {
                touch(&mut turn, p, FileAction::Edit);
                turn.edit = edit_of(p, args);
            }
        }
        "multi_edit" => {
            if let Some(p) = arg(args, PATH) {
                touch(&mut turn, p, FileAction::Edit);
                // One span per turn: the first replacement stands for the call.
                turn.edit = args.get("edits").and_then(Value::as_array).and_then(|e| e.iter().find_map(|e| edit_of(p, e)));
            }
        }
        "notebook_edit" => {
            if let Some(p) = arg(args, PATH) {
                touch(&mut turn, p, FileAction::Edit);
                if str_at(args, &["edit_mode"]) != Some("delete") {
                    if let Some(src) = arg(args, &["new_source"]) {
                        turn.edit = Some(Edit { path: p.to_string(), old: String::new(), new: Some(src.to_string()) });
                    }
                }
            }
        }
        "delete_range" | "delete_symbol" => {
            if let Some(p) = arg(args, PATH) {
                touch(&mut turn, p, FileAction::Edit);
            }
        }
        "move_file" => {
            if let Some(p) = arg(args, &["source_path"]) {
                touch(&mut turn, p, FileAction::Delete);
            }
            if let Some(p) = arg(args, &["destination_path"]) {
                touch(&mut turn, p, FileAction::Write);
            }
        }
        _ => {}
    }
    turn.tool = Some(tool);
    turn
}

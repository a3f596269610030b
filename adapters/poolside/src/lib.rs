//! Poolside Agent CLI (`poolside`): the `pool` CLI writes one append-only NDJSON
//! "trajectory" per session, `trajectory-<type>_<uuid>.ndjson`, in its trajectories
//! directory (macOS `~/Library/Application Support/poolside/trajectories`, Linux
//! `~/.local/state/poolside/trajectories`, Windows `%APPDATA%\poolside\trajectories`).
//! No harness relocation variable is known; `DEJA_POOLSIDE_ROOT` names the trajectories
//! directory (or its parent: the files are looked for one level down).
//!
//! No family reader fits: each line is an event `{id, step_id, timestamp, type, <payload>}`
//! whose payload key is the type with `.` → `_`, so this adapter reads the events itself.
//!
//! | `type` | Turn | rule |
//! | --- | --- | --- |
//! | `session.start` | header | `working_directories[0]`, else `workspace` → project; a non-empty `prompt` is the first `User` turn |
//! | `session.input` | `User` | `session_input.prompt` (the same text right after the header's prompt is read once) |
//! | `assistant_message.end` | `Assistant` | `assistant_message_end.assistant_message` |
//! | `thought.end` | `Reasoning` | `thought_end.thought`, only with `include_reasoning` |
//! | `tool_call.parsed` | `ToolCall` | `{id, name, args}`; `shell` → `command` = `args.cmd`; other names generic |
//! | `tool_call.parsed` of `shell_status`/`shell_tail`/`shell_kill`/`skill`/`exit` | skipped | background-shell management, skill loads, normal exit; their results too |
//! | `tool_call.result` | folded into its call by payload `id` | `observation` = text; `is_error` or an `execution_error_kind` (`approval_denied`) = error; unpaired → `ToolOutput` |
//! | `session.start`'s other fields, `assistant_message.start`, `thought.start`, `tool_call.inference.*`, `session.exit`, `session.error`, other types | skipped | model, tokens, end state |
//! | malformed or torn last line | skipped | counted in the parse stats |
//!
//! Results pair with calls by the payload `id`, never `step_id` (several calls share a
//! step). No exit code is written for shell results, so none is read. A read of a tail
//! goes on from the state the read before left, never from the file's head: the header's
//! project (`TailState::cwd`), its prompt while no answer has followed it (mark
//! `header_prompt`, so its `session.input` copy is still read once), and the skipped calls
//! whose results have not come (`TailState::open_calls`, so those results are dropped too).

use std::collections::HashSet;
use std::path::Path;

use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::read::{for_each_source_line, str_at};
use deja_core::store::{Files, Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Role, SessionBuilder,
    SessionSink, SourceRef, TailState, Timestamp, ToolUse, Turn,
};
use serde_json::Value;

const ID: &str = "poolside";

/// Tool calls that are no work record: a background shell's management, skill loads and
/// the normal end of a run.
const SKIPPED_TOOLS: &[&str] = &["shell_status", "shell_tail", "shell_kill", "skill", "exit"];

/// The tail state's mark holding the header's prompt until an answer follows it.
const MARK_HEADER_PROMPT: &str = "header_prompt";

/// The Poolside Agent CLI adapter.
pub struct PoolsideFormat;

deja_core::inventory::submit!(deja_core::Registration(&PoolsideFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Poolside Agent CLI",
    container: "NDJSON, one append-only trajectory (event stream) per session",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[
            Root::macos("~/Library/Application Support/poolside/trajectories"),
            Root::linux("~/.local/state/poolside/trajectories"),
            Root::windows("${APPDATA:-~/AppData/Roaming}/poolside/trajectories"),
        ],
        // One level down, so a root naming poolside's state directory finds `trajectories/` in it.
        layout: Layout::Files(Files::new("**/trajectory-*.ndjson").depth(1).append_only()),
    }]),
    needs: &[],
    format_summary: "The `pool` CLI appends one event per line to `trajectory-<type>_<uuid>.ndjson`: `{id, step_id, \
        timestamp, type, <payload>}` with the payload under the type's name (`.` → `_`). `session.start` carries the \
        workspace and working directories, `session.input` the user's prompt, `assistant_message.end` the reply, \
        `thought.end` reasoning, `tool_call.parsed` a call (`shell` with `args.cmd`) and `tool_call.result` its \
        `observation`, paired by the payload `id`. Inference, exit and error events are skipped.",
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

impl HarnessFormat for PoolsideFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let mut file = Trajectory::new(src, opts);
        for_each_source_line(src, &mut stats, &[], |_offset, v| file.event(&v))?;
        if let Some(s) = file.finish(&mut stats) {
            out.session(s);
        }
        Ok(stats)
    }

    fn synthetic(&self) -> Option<&dyn deja_core::SynthWriter> {
        Some(self)
    }
}

/// The session id: the file name without `trajectory-` and `.ndjson`.
fn session_id(path: &Path) -> String {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let stem = name.strip_suffix(".ndjson").unwrap_or(name);
    stem.strip_prefix("trajectory-").filter(|s| !s.is_empty()).unwrap_or(stem).to_string()
}

/// `session_start.working_directories[0]`, else `session_start.workspace`.
fn start_project(v: &Value) -> Option<String> {
    let start = v.get("session_start")?;
    let first = start.get("working_directories").and_then(Value::as_array).and_then(|a| a.first()).and_then(Value::as_str);
    first.or_else(|| str_at(start, &["workspace"])).filter(|p| !p.is_empty()).map(str::to_string)
}

/// One trajectory being read.
struct Trajectory<'a> {
    b: SessionBuilder,
    opts: &'a ParseOptions,
    project: Option<String>,
    /// The header's prompt, so an identical `session.input` right after it is read once.
    header_prompt: Option<String>,
    /// Ids of calls that are no work record; their results are dropped too.
    skipped_calls: HashSet<String>,
}

impl<'a> Trajectory<'a> {
    fn new(src: &SourceRef, opts: &'a ParseOptions) -> Self {
        let b = SessionBuilder::new(ID, session_id(&src.path), src.clone());
        // A tail goes on from what the read before left (see the module doc).
        let state = src.resume.as_ref().map(|r| &r.state);
        Trajectory {
            b,
            opts,
            project: state.and_then(|s| s.cwd.clone()),
            header_prompt: state.and_then(|s| s.marks.get(MARK_HEADER_PROMPT).cloned()),
            skipped_calls: state.map(|s| s.open_calls.keys().cloned().collect()).unwrap_or_default(),
        }
    }

    fn event(&mut self, v: &Value) {
        let Some(kind) = str_at(v, &["type"]) else { return };
        let time = v.get("timestamp").and_then(Timestamp::from_json);
        let payload = v.get(kind.replace('.', "_")).unwrap_or(&Value::Null);
        match kind {
            "session.start" => {
                if self.project.is_none() {
                    self.project = start_project(v);
                }
                self.b.touch(time);
                if let Some(p) = str_at(payload, &["prompt"]).filter(|p| !p.trim().is_empty()) {
                    self.b.push(Turn::new(Role::User, p).at(time));
                    self.header_prompt = Some(p.to_string());
                }
            }
            "session.input" => {
                if let Some(p) = str_at(payload, &["prompt"]) {
                    if self.header_prompt.take().as_deref() == Some(p) {
                        return;
                    }
                    self.b.push(Turn::new(Role::User, p).at(time));
                }
            }
            "assistant_message.end" => {
                self.header_prompt = None;
                if let Some(t) = str_at(payload, &["assistant_message"]) {
                    self.b.push(Turn::new(Role::Assistant, t).at(time));
                }
            }
            "thought.end" => {
                if self.opts.include_reasoning {
                    if let Some(t) = str_at(payload, &["thought"]) {
                        self.b.push(Turn::new(Role::Reasoning, t).at(time));
                    }
                }
            }
            "tool_call.parsed" => self.call(payload, time),
            "tool_call.result" => self.result(payload, time),
            // inference, message/thought starts, exit and error events.
            _ => self.b.touch(time),
        }
    }

    fn call(&mut self, p: &Value, time: Option<Timestamp>) {
        let id = str_at(p, &["id"]).unwrap_or("");
        let name = str_at(p, &["name"]).unwrap_or("tool");
        if SKIPPED_TOOLS.contains(&name) {
            if !id.is_empty() {
                self.skipped_calls.insert(id.to_string());
            }
            return;
        }
        let args = p.get("args").unwrap_or(&Value::Null);
        let command = (name == "shell").then(|| str_at(args, &["cmd"])).flatten().map(str::to_string);
        let mut turn = Turn::new(Role::ToolCall, "").at(time);
        turn.tool = Some(ToolUse { name: name.to_string(), command, ..ToolUse::default() });
        self.b.push_call(Some(id), turn);
    }

    fn result(&mut self, p: &Value, time: Option<Timestamp>) {
        let id = str_at(p, &["id"]).unwrap_or("");
        if self.skipped_calls.remove(id) {
            return;
        }
        let denied = str_at(p, &["execution_error_kind"]).filter(|k| !k.is_empty());
        let is_error = p.get("is_error").and_then(Value::as_bool).unwrap_or(false) || denied.is_some();
        let observation = match (str_at(p, &["observation"]), denied) {
            (Some(o), _) if !o.is_empty() => o.to_string(),
            (_, Some(kind)) => kind.to_string(),
            _ => String::new(),
        };
        if !self.b.complete_call(id, &observation, is_error, None, time)
            && self.b.push_orphan_result(id, &observation, is_error, None, time).is_some()
        {
            // The result names its tool; keep it on the orphan for the indexer's fold.
            if let (Some(tool), Some(name)) = (self.b.last_turn_mut().and_then(|t| t.tool.as_mut()), str_at(p, &["tool_name"])) {
                tool.name = name.to_string();
            }
        }
    }

    fn finish(mut self, stats: &mut ParseStats) -> Option<deja_core::Session> {
        let mut state = TailState { cwd: self.project.clone(), ..TailState::default() };
        state.open_calls = self.skipped_calls.iter().map(|id| (id.clone(), "skipped".to_string())).collect();
        if let Some(p) = &self.header_prompt {
            state.marks.insert(MARK_HEADER_PROMPT.to_string(), p.clone());
        }
        stats.tail = Some(state);
        self.b.session_mut().project = self.project.take();
        self.b.finish()
    }
}

mod synth;

impl deja_core::SynthWriter for PoolsideFormat {
    fn write(&self, home: &std::path::Path, session: &deja_core::SynthSession) -> std::io::Result<std::path::PathBuf> {
        synth::write(home, session)
    }
}

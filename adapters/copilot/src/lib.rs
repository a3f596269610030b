//! Copilot CLI (`copilot`): one directory per session under
//! `${COPILOT_HOME:-~/.copilot}/session-state/<session-dir>/`, each holding one
//! append-only JSONL event log, `events.jsonl` (`workspace.yaml` beside it since 1.0.102,
//! a part of the source: its `name` is the title when `user_named` says the user gave it,
//! see [`user_title`]). No family reader writes this shape, so the adapter reads it itself
//! with deja-core's JSONL reader and `SessionBuilder`.
//!
//! Every line is `{"type": "<dotted event>", "data": {...}, "id", "timestamp", "parentId"}`;
//! `id`/`parentId` form a tree (a chain from `session.start`) and are kept on every turn
//! as `node`. `DEJA_COPILOT_ROOT` names the `session-state` directory.
//!
//! | `type` | Turn | rule |
//! | --- | --- | --- |
//! | `session.start` | — | `data.sessionId` (else the directory name), `data.context.cwd` → project, `data.startTime` |
//! | `user.message` | `User` | `data.content` only (`transformedContent` repeats it behind an injected `<current_datetime>` prefix) |
//! | `assistant.message` | `Assistant` | `data.content`, non-empty; `toolRequests[]` → `ToolCall` by `toolCallId` |
//! | `assistant.message` `data.reasoningText` | `Reasoning` | only with `include_reasoning`, before the answer |
//! | `tool.execution_start` | `ToolCall` | `toolName` + `arguments` (see work signals); one turn per `toolCallId` even when `toolRequests[]` named it |
//! | `tool.execution_complete` | folded into its call by `toolCallId`, else `ToolOutput` | `result.content` trimmed, the `<shellId: N completed with exit code N>` line dropped; `shellExecution.exitCode` → exit; `success: false` → `is_error` (kept) |
//! | `system.message` | skipped | the harness's own system prompt |
//! | `session.resume` (a `--continue`/`--resume` run appending to the same log), `session.model_change`, `assistant.turn_start`/`turn_end`, `session.usage_record`, `session.shutdown`, others | skipped | bookkeeping; their times still widen the session |
//! | malformed or torn line | skipped | counted in the parse stats |
//!
//! A read of a tail goes on from the `session.start` cwd the read before kept
//! (`TailState::cwd`), never reading the log's head again; a call the tail names again
//! (`tool.execution_start` after `toolRequests[]` read before) folds into the one indexed.
//!
//! Work signals: `bash` → `tool.command` from `arguments.command`; `read` names a file read,
//! `edit` a file edit with the span `old_str` → `new_str`, `write`/`create` a file write
//! (all with `arguments.path`). Other tools (`todo`…) keep only their name and result.

use std::io::Read;
use std::path::Path;

use deja_core::exit::ExitLine;
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::model::{cap_text, MAX_EDIT_BYTES};
use deja_core::read::for_each_source_line;
use deja_core::store::{Files, Layout, Part, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Edit, ExitStatus, FileAction, FileTouch, FormatError, HarnessFormat, HarnessInfo, InjectedText, NodeRef,
    ParseOptions, ParseStats, Role, SessionBuilder, SessionSink, SourceRef, TailState, Timestamp, TitleBy, ToolMap, ToolUse, Turn,
};
use serde_json::Value;

const ID: &str = "copilot";

/// Depth of `<session-state>/<session-dir>/events.jsonl`, plus room for nesting.
const MAX_DEPTH: usize = 3;

/// The Copilot CLI adapter.
pub struct CopilotFormat;

deja_core::inventory::submit!(deja_core::Registration(&CopilotFormat));

/// Copilot's own lowercase tool names.
const COPILOT_TOOLS: ToolMap = ToolMap { shell: &["bash"], read: &["read"], edit: &["edit"], write: &["write", "create"] };

/// `transformedContent` carries a `<current_datetime>` prefix; only `content` is read, but
/// should a release fold the prefix into `content` it is still not speech.
static INJECTED: InjectedText = InjectedText { preambles: &["current_datetime"], ..InjectedText::NONE };

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Copilot CLI",
    container: "JSONL event log, one directory per session",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("${COPILOT_HOME:-~/.copilot}/session-state")],
        layout: Layout::Files(Files::new("**/events.jsonl").depth(MAX_DEPTH).append_only().parts(&[Part::Sibling("workspace.yaml")])),
    }]),
    needs: &[],
    format_summary: "Copilot CLI keeps one directory per session under `${COPILOT_HOME:-~/.copilot}/session-state/`, each with an \
        append-only `events.jsonl`: `{type, data, id, timestamp, parentId}` events whose ids chain into a tree. `session.start` gives \
        the session id and working directory; `user.message` and `assistant.message` carry the speech (`content`, not the \
        `transformedContent` with its injected date prefix); `tool.execution_start`/`tool.execution_complete` pair by `toolCallId` \
        into one tool turn with the `bash` command, `shellExecution.exitCode` and the `success` flag, and `edit` carries the \
        replaced span as `old_str`/`new_str`. The system prompt, turn brackets, usage records and the shutdown summary are skipped.",
    injected: &INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "`mcpServers.deja = {\"type\": \"local\", \"command\": \"<exe>\", \"args\": [\"mcp\"], \"tools\": [\"*\"]}` in \
             ${COPILOT_HOME:-~/.copilot}/mcp-config.json; the model sees the tool as `deja-deja`",
        ),
        auto_recall: Capability::Unsupported("Copilot CLI runs hooks but drops the context they return, so nothing reaches the model"),
        skill: Capability::Planned("${COPILOT_HOME:-~/.copilot}/skills/deja-history/SKILL.md, loaded on demand"),
        command: Capability::Planned("through the skill: `/deja-history`"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Always(ResumeSpec::anywhere(&["copilot", "--resume={id}"])),
        handoff: Handoff::Exec(&["copilot", "-p", "{prompt}"]),
    },
};

impl HarnessFormat for CopilotFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::CopilotWiring)
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let mut file = EventLog::new(src, opts.include_reasoning);
        // `session.start` sits before the resume point: its cwd, which the read before
        // kept, is still the project.
        file.cwd = src.resume.as_ref().and_then(|r| r.state.cwd.clone());
        for_each_source_line(src, &mut stats, &[], |_offset, v| file.event(&v))?;
        stats.tail = Some(TailState { cwd: file.cwd.clone(), ..TailState::default() });
        let title = user_title(&src.path.with_file_name("workspace.yaml"));
        if let Some(s) = file.finish(title) {
            out.session(s);
        }
        Ok(stats)
    }

    fn synthetic(&self) -> Option<&dyn deja_core::SynthWriter> {
        Some(self)
    }
}

/// `workspace.yaml`'s `name` when its `user_named` is true: a title the user gave the
/// session. Otherwise `name` is only the first prompt, which the title is made of anyway.
/// Read with a YAML parser's events (quoted and block scalars come out as written), top-
/// level keys only; a missing file gives no title, a malformed or truncated one what was
/// read before the fault.
fn user_title(path: &Path) -> Option<String> {
    use saphyr_parser::{Event, Parser};
    const MAX_WORKSPACE_BYTES: u64 = 1 << 20;
    let mut text = String::new();
    std::fs::File::open(path).ok()?.take(MAX_WORKSPACE_BYTES).read_to_string(&mut text).ok()?;
    let (mut depth, mut key, mut name, mut user_named) = (0usize, None::<String>, None::<String>, false);
    let mut parser = Parser::new_from_str(&text);
    while let Some(Ok((event, _))) = parser.next_event() {
        match event {
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                depth += 1;
                if depth > 1 {
                    // A collection value: its key is spent.
                    key = None;
                }
            }
            Event::MappingEnd | Event::SequenceEnd => depth = depth.saturating_sub(1),
            Event::Scalar(value, ..) if depth == 1 => match key.take() {
                None => key = Some(value.to_string()),
                Some(k) if k == "name" => name = Some(value.trim().to_string()).filter(|n| !n.is_empty()),
                Some(k) if k == "user_named" => user_named = value == "true",
                Some(_) => {}
            },
            Event::StreamEnd => break,
            _ => {}
        }
    }
    name.filter(|_| user_named)
}

fn start_cwd(v: &Value) -> Option<String> {
    let cwd = v.get("data")?.get("context")?.get("cwd")?.as_str()?.trim();
    // `/home/dev/app/` and `/home/dev/app` are one project; a bare root stays itself.
    let trimmed = cwd.trim_end_matches(['/', '\\']);
    let cwd = if trimmed.is_empty() || trimmed.ends_with(':') { cwd } else { trimmed };
    (!cwd.is_empty()).then(|| cwd.to_string())
}

/// One session's event log being read.
struct EventLog {
    b: SessionBuilder,
    cwd: Option<String>,
    /// True once the id came from `session.start` (or an earlier read), not the directory.
    id_known: bool,
    /// `ParseOptions::include_reasoning`: `assistant.message` `reasoningText` as `Reasoning`.
    reasoning: bool,
}

impl EventLog {
    fn new(src: &SourceRef, reasoning: bool) -> Self {
        let dir = src.path.parent().and_then(Path::file_name).and_then(|n| n.to_str()).unwrap_or(ID).to_string();
        let (id, id_known) = match &src.resume {
            Some(r) => (r.session_id.clone(), true),
            None => (dir, false),
        };
        EventLog { b: SessionBuilder::new(ID, id, src.clone()), cwd: None, id_known, reasoning }
    }

    fn event(&mut self, v: &Value) {
        let time = v.get("timestamp").and_then(Timestamp::from_json);
        let node = text(v, "id").map(|id| NodeRef { id: id.to_string(), parent: text(v, "parentId").map(str::to_string) });
        let data = v.get("data").unwrap_or(&Value::Null);
        match text(v, "type") {
            Some("session.start") => self.session_start(v, data),
            Some("user.message") => self.say(Role::User, data, time, node),
            Some("assistant.message") => self.assistant(data, time, node),
            Some("tool.execution_start") => self.tool_start(data, time, node),
            Some("tool.execution_complete") => self.tool_complete(data, time, node),
            // system.message (the system prompt), turn brackets, usage, shutdown, and kinds
            // not yet seen: no speech, but they happened in the session's time span.
            _ => self.b.touch(time),
        }
    }

    fn session_start(&mut self, v: &Value, data: &Value) {
        if !self.id_known {
            if let Some(id) = text(data, "sessionId") {
                self.b.set_id(id);
                self.id_known = true;
            }
        }
        if self.cwd.is_none() {
            self.cwd = start_cwd(v);
        }
        self.b.touch(data.get("startTime").and_then(Timestamp::from_json));
        self.b.touch(v.get("timestamp").and_then(Timestamp::from_json));
    }

    fn say(&mut self, role: Role, data: &Value, time: Option<Timestamp>, node: Option<NodeRef>) {
        self.b.touch(time);
        if let Some(content) = text(data, "content") {
            let mut turn = Turn::new(role, content.trim()).at(time);
            turn.node = node;
            self.b.push(turn);
        }
    }

    fn assistant(&mut self, data: &Value, time: Option<Timestamp>, node: Option<NodeRef>) {
        // 1.0.102 keeps the model's reasoning beside the answer: never speech.
        if self.reasoning {
            if let Some(r) = text(data, "reasoningText").map(str::trim).filter(|r| !r.is_empty()) {
                let mut turn = Turn::new(Role::Reasoning, r).at(time);
                turn.node = node.clone();
                self.b.push(turn);
            }
        }
        self.say(Role::Assistant, data, time, node.clone());
        // 1.0.102 names the calls here too; a call that never started still happened.
        for req in data.get("toolRequests").and_then(Value::as_array).into_iter().flatten() {
            let Some(name) = text(req, "name") else { continue };
            let call_id = text(req, "toolCallId");
            if call_id.is_some_and(|id| self.b.call_mut(id).is_some()) {
                continue;
            }
            let mut turn = call_turn(name, req.get("arguments").unwrap_or(&Value::Null), time);
            turn.node = node.clone();
            self.b.push_call(call_id, turn);
        }
    }

    fn tool_start(&mut self, data: &Value, time: Option<Timestamp>, node: Option<NodeRef>) {
        let name = text(data, "toolName").unwrap_or("tool");
        let call_id = text(data, "toolCallId");
        if call_id.is_some_and(|id| self.b.call_mut(id).is_some()) {
            // Already pushed from `toolRequests[]`: one turn per call.
            self.b.touch(time);
            return;
        }
        let mut turn = call_turn(name, data.get("arguments").unwrap_or(&Value::Null), time);
        turn.node = node;
        self.b.push_call(call_id, turn);
    }

    fn tool_complete(&mut self, data: &Value, time: Option<Timestamp>, node: Option<NodeRef>) {
        let raw = data.get("result").and_then(|r| r.get("content")).and_then(Value::as_str).unwrap_or("");
        let output = strip_shell_marker(raw).trim();
        let failed = data.get("success").and_then(Value::as_bool) == Some(false);
        let exit = data.get("shellExecution").and_then(|s| s.get("exitCode")).and_then(Value::as_i64).map(ExitStatus::Code);
        if let Some(id) = text(data, "toolCallId") {
            if self.b.complete_call(id, output, failed, exit.clone(), time) {
                return;
            }
            if let Some(t) = self.b.push_orphan_result(id, output, failed, exit, time).and_then(|i| self.b.session_mut().turns.get_mut(i)) {
                t.node = node;
            }
            return;
        }
        // Before toolCallId (1.0.71): the result names no call, so it stays on its own.
        let mut turn = Turn::new(Role::ToolOutput, output).at(time);
        turn.node = node;
        turn.tool = Some(ToolUse { is_error: failed || exit.as_ref().is_some_and(|e| !e.succeeded()), exit, ..ToolUse::default() });
        self.b.push(turn);
    }

    /// The session, titled `title` when the user named it (a tail with no events but
    /// that name, a rename as the last thing done, is the session with no turns).
    fn finish(mut self, title: Option<String>) -> Option<deja_core::Session> {
        let s = self.b.session_mut();
        s.project = self.cwd.take();
        if let Some(title) = title {
            s.offer_title(title, TitleBy::User);
        }
        self.b.finish()
    }
}

/// A `ToolCall` turn (no text yet) for one call with Copilot's argument keys.
fn call_turn(name: &str, args: &Value, time: Option<Timestamp>) -> Turn {
    let mut turn = Turn::new(Role::ToolCall, "").at(time);
    let mut tool = ToolUse { name: name.to_string(), ..ToolUse::default() };
    if COPILOT_TOOLS.kind(name) == deja_core::ToolKind::Shell {
        tool.command = text(args, "command").map(str::to_string);
    }
    if let (Some(path), Some(action)) = (text(args, "path"), COPILOT_TOOLS.file_action(name)) {
        turn.files.push(FileTouch { path: path.to_string(), action });
        if action == FileAction::Edit {
            if let Some(old) = text(args, "old_str") {
                let mut old = old.to_string();
                cap_text(&mut old, MAX_EDIT_BYTES);
                let new = args.get("new_str").and_then(Value::as_str).map(|n| {
                    let mut n = n.to_string();
                    cap_text(&mut n, MAX_EDIT_BYTES);
                    n
                });
                turn.edit = Some(Edit { path: path.to_string(), old, new });
            }
        }
    }
    turn.tool = Some(tool);
    turn
}

/// A `bash` result ends with `<shellId: N completed with exit code N>`: the status is in
/// `shellExecution.exitCode`, so the marker line is not output.
fn strip_shell_marker(output: &str) -> &str {
    const MARKER: [ExitLine; 1] = [ExitLine::last("completed with exit code ").inline().closed(">")];
    deja_core::exit::split_exit(output, &MARKER).map_or(output, |(_, head)| head)
}

/// A non-empty string field.
fn text<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

mod synth;
mod wiring;

impl deja_core::SynthWriter for CopilotFormat {
    fn write(&self, home: &std::path::Path, session: &deja_core::SynthSession) -> std::io::Result<std::path::PathBuf> {
        synth::write(home, session)
    }
}

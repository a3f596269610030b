//! Muse Code (`muse`): Meta's terminal agent keeps one event-sourced JSONL log per session
//! at `${XDG_DATA_HOME:-~/.local/share}/muse/sessions/YYYY/MM/DD/<id>/session.jsonl` (dated
//! by the day the session started; the same home-relative path on every OS), and a
//! sub-agent's at `<id>/subagent/<child>/session.jsonl`.
//!
//! No family reader fits: every line is an event envelope
//! `{schema_version, id, stream:{kind,id}, sequence, recorded_at, record_type, payload_type, payload}`
//! with `recorded_at` in **microseconds**, and a `retained_frame` line carries whole
//! records as JSON strings in `children[].record_json`, unwrapped and read like lines.
//! Only records of the session's own stream are read: a sub-agent's task stream logged
//! in the parent would otherwise read as prompts the person typed.
//!
//! | record (`payload_type`, `payload.event.kind`) | Turn | rule |
//! | --- | --- | --- |
//! | `runtime.session` run `started` with a non-empty `prompt` | `User` | task starts and scheduled runs have none → skipped |
//! | `runtime.session` run `assistant_message_committed` (`text`) | `Assistant` | |
//! | `runtime.session` run `assistant_tool_calls_committed` (`tool_calls[{call_id, name, args}]`) | `ToolCall` | `args` a JSON string; tools below |
//! | `runtime.session` run `tool_result_batch_committed` (`results[{tool_call_id, text}]`) | folded into its call | `bash` results are JSON `{command, exit_code, output}`: `output` is the text, `exit_code` the exit; unpaired → `ToolOutput` |
//! | `runtime.session.metadata` (`workspace_root`) | project | else `runtime.session.route_facts` `cwd`, else `session.workspace_branch.observed` `workspace_root` |
//! | `session.name.changed` (`new_name`) | title | the latest wins |
//! | other run events and payload types | skipped | |
//! | malformed or torn line, bad `record_json` | skipped | counted in the parse stats |
//!
//! | tool | args | Turn |
//! | --- | --- | --- |
//! | `bash` | `command` | `tool.command` |
//! | `read_file` | `path` | `files` (read) |
//! | `write_file` | `path` | `files` (write) |
//! | `edit_file` | `path`, `find`, `replace` | `files` (edit), `edit` (`find` replaced by `replace`) |
//!
//! The session id is the `stream.id` of its `stream.kind:"session"` records (the directory
//! name when a stream has it). A sub-agent child is a session only when it names a
//! workspace (reminder and verification observer children name none and hold Muse's own
//! instructions); its parent is the directory above `subagent`. Sources are re-read whole,
//! not resumed: the workspace and that filter come from the log's head.
//! `DEJA_MUSE_ROOT` names one sessions directory and `DEJA_MUSE_ROOTS` a path list of them.

use std::path::{Path, PathBuf};

use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::model::SessionMeta;
use deja_core::model::{cap_text, MAX_EDIT_BYTES};
use deja_core::read::{for_each_json_line, read_source};
use deja_core::store::{Files, Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Edit, ExitStatus, FileAction, FileTouch, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions,
    ParseStats, Role, Session, SessionBuilder, SessionSink, SourceRef, SynthSession, SynthTurn, SynthWriter, Timestamp, ToolUse, Turn,
};
use serde_json::{json, Value};

mod wiring;

const ID: &str = "muse";

/// `YYYY/MM/DD/<id>/subagent/<child>/subagent/<grandchild>/session.jsonl` and a little room.
const MAX_DEPTH: usize = 10;

/// A retained frame inside a retained frame is unwrapped this deep at most.
const MAX_FRAME_DEPTH: usize = 4;

/// The Muse Code adapter.
pub struct MuseFormat;

deja_core::inventory::submit!(deja_core::Registration(&MuseFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Muse Code",
    container: "event-sourced JSONL, one directory per session (+ sub-agent children)",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("${XDG_DATA_HOME:-~/.local/share}/muse/sessions")],
        layout: Layout::Files(Files::new("**/session.jsonl").depth(MAX_DEPTH).subagents("subagent")),
    }]),
    needs: &[],
    format_summary: "Muse Code writes one event-sourced JSONL log per session under \
        `${XDG_DATA_HOME:-~/.local/share}/muse/sessions/YYYY/MM/DD/<id>/session.jsonl`: event envelopes with a \
        `stream`, a microsecond `recorded_at` and a typed `payload`; `retained_frame` lines nest whole records as JSON \
        strings. The conversation is `runtime.session` run events: `started` (the prompt), `assistant_message_committed`, \
        `assistant_tool_calls_committed` (JSON-string `args`) and `tool_result_batch_committed` (a `bash` result is JSON \
        with `exit_code` and `output`). The workspace comes from `runtime.session.metadata`, the title from \
        `session.name.changed`. Sub-agent children sit in `<id>/subagent/<child>/`.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned("`mcpServers.deja` (stdio) in `${XDG_CONFIG_HOME:-~/.config}/muse/settings.json`"),
        auto_recall: Capability::Planned(
            "Claude-shaped hooks in `muse/settings.json`: SessionStart, UserPromptSubmit, PreToolUse, PostToolUse(+Failure), PreCompact",
        ),
        skill: Capability::Planned("`~/.agents/skills/deja-history/SKILL.md` (also `/deja-history` in the slash menu)"),
        command: Capability::Unsupported("no user-level commands directory; commands come only from `.muse-plugin` plugins"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::PerSession {
            doc: "`cd <workspace_root> && muse resume <id>` (sub-agents: their parent)",
            pick: resume_unless_subagent,
        },
        handoff: Handoff::Paste("the page says exec but names no start-with-prompt argument"),
    },
};

impl HarnessFormat for MuseFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::MuseWiring)
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let bytes = read_source(&src.path, &mut stats)?.bytes;
        let mut records = Vec::new();
        let mut bad_frames = 0u64;
        for_each_json_line(&bytes, 0, &src.path, &mut stats, |_offset, v| unwrap_frames(v, 0, &mut records, &mut bad_frames));
        if bad_frames > 0 {
            stats.skipped += bad_frames;
            stats.problem(format!("{}: {bad_frames} retained-frame children were not JSON records", src.path.display()));
        }
        if let Some(s) = read_session(src, opts, &records) {
            out.session(s);
        }
        Ok(stats)
    }

    fn synthetic(&self) -> Option<&dyn SynthWriter> {
        Some(self)
    }
}

impl SynthWriter for MuseFormat {
    /// Writes the session's event log under its start day's directory: metadata, run
    /// events for each turn (a `bash` result as Muse's JSON), the name when it has one.
    fn write(&self, home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
        let day = session.started.to_rfc3339();
        let (y, m, d) = (day.get(0..4).unwrap_or("1970"), day.get(5..7).unwrap_or("01"), day.get(8..10).unwrap_or("01"));
        let dir = home.join(".local/share/muse/sessions").join(y).join(m).join(d).join(&session.id);
        std::fs::create_dir_all(&dir)?;
        let mut w = Render { id: &session.id, lines: Vec::new() };
        w.event(session.started, "runtime.session.metadata", json!({"workspace_root": session.project}));
        for (i, turn) in session.turns.iter().enumerate() {
            let call_id = format!("c{i}");
            match turn {
                SynthTurn::User { text, time } => w.run(*time, json!({"kind": "started", "prompt": text})),
                SynthTurn::Assistant { text, time } => w.run(*time, json!({"kind": "assistant_message_committed", "text": text})),
                // Muse's log names no reasoning record.
                SynthTurn::Reasoning { .. } => {}
                SynthTurn::Shell { command, output, exit_code, time } => {
                    let result = json!({"command": command, "exit_code": exit_code, "output": output}).to_string();
                    w.call(*time, &call_id, "bash", json!({"command": command}), result);
                }
                SynthTurn::Read { path, output, time } => w.call(*time, &call_id, "read_file", json!({"path": path}), output.clone()),
                SynthTurn::Edit { path, old, new, time } => {
                    w.call(*time, &call_id, "edit_file", json!({"path": path, "find": old, "replace": new}), format!("edited {path}"))
                }
            }
        }
        if let Some(title) = &session.title {
            w.event(session.started, "session.name.changed", json!({"old_name": "", "new_name": title}));
        }
        let path = dir.join("session.jsonl");
        std::fs::write(&path, w.lines.iter().map(|l| format!("{l}\n")).collect::<String>())?;
        Ok(path)
    }
}

/// The synthetic writer's event lines of one session stream.
struct Render<'s> {
    id: &'s str,
    lines: Vec<Value>,
}

impl Render<'_> {
    fn event(&mut self, time: Timestamp, payload_type: &str, payload: Value) {
        let n = self.lines.len() + 1;
        self.lines.push(json!({
            "schema_version": 1, "id": format!("r{n}"), "stream": {"kind": "session", "id": self.id}, "sequence": n,
            "recorded_at": time.millis() * 1000, "record_type": "event", "payload_type": payload_type, "payload": payload,
        }));
    }

    fn run(&mut self, time: Timestamp, event: Value) {
        self.event(time, "runtime.session", json!({"kind": "run", "event": event}));
    }

    fn call(&mut self, time: Timestamp, call_id: &str, name: &str, args: Value, result: String) {
        let calls = json!([{"call_id": call_id, "name": name, "args": args.to_string()}]);
        self.run(time, json!({"kind": "assistant_tool_calls_committed", "tool_calls": calls}));
        let results = json!([{"tool_call_id": call_id, "text": result}]);
        self.run(time, json!({"kind": "tool_result_batch_committed", "results": results}));
    }
}

/// A line as records: itself, or the records its `retained_frame` children hold.
fn unwrap_frames(v: Value, depth: usize, out: &mut Vec<Value>, bad: &mut u64) {
    let children = v.get("children").or_else(|| v.get("payload").and_then(|p| p.get("children"))).and_then(Value::as_array);
    let is_frame = ["record_type", "payload_type"].iter().any(|k| v.get(*k).and_then(Value::as_str) == Some("retained_frame"));
    match children {
        Some(children) if is_frame || children.iter().any(|c| c.get("record_json").is_some()) => {
            if depth >= MAX_FRAME_DEPTH {
                *bad += 1;
                return;
            }
            for child in children {
                match child.get("record_json") {
                    Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                        Ok(rec) if rec.is_object() => unwrap_frames(rec, depth + 1, out, bad),
                        _ => *bad += 1,
                    },
                    Some(rec @ Value::Object(_)) => unwrap_frames(rec.clone(), depth + 1, out, bad),
                    _ => *bad += 1,
                }
            }
        }
        _ if v.is_object() => out.push(v),
        _ => *bad += 1,
    }
}

/// `recorded_at`, epoch microseconds.
fn recorded_at(v: &Value) -> Option<Timestamp> {
    let us = v.get("recorded_at")?;
    let us = us.as_i64().or_else(|| us.as_f64().map(|f| f as i64)).or_else(|| us.as_str().and_then(|s| s.trim().parse().ok()))?;
    (us > 0).then(|| Timestamp::from_millis(us / 1000))
}

fn stream(v: &Value) -> (Option<&str>, Option<&str>) {
    let s = v.get("stream");
    (s.and_then(|s| text(s, "kind")), s.and_then(|s| text(s, "id")))
}

/// A non-empty string field.
fn text<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// The session of one log, from its own stream's records.
fn read_session(src: &SourceRef, opts: &ParseOptions, records: &[Value]) -> Option<Session> {
    let dir = src.path.parent();
    let dir_name = dir.and_then(Path::file_name).and_then(|n| n.to_str()).unwrap_or("");
    let session_streams: Vec<&str> = records
        .iter()
        .filter_map(|r| match stream(r) {
            (Some("session"), Some(id)) => Some(id),
            _ => None,
        })
        .collect();
    let own = session_streams.iter().find(|id| **id == dir_name).or(session_streams.first()).copied()?;
    let mut r = Reader { b: SessionBuilder::new(ID, own, src.clone()), _opts: opts, workspace: [None, None, None], title: None };
    for rec in records.iter().filter(|rec| stream(rec).1 == Some(own)) {
        r.record(rec);
    }
    let subagent_of =
        dir.and_then(Path::parent).filter(|p| p.file_name().and_then(|n| n.to_str()) == Some("subagent")).and_then(Path::parent);
    let [meta, route, branch] = r.workspace;
    let workspace = meta.or(route).or(branch);
    if subagent_of.is_some() && workspace.is_none() {
        // An observer child (reminders, verification): Muse's own instructions, no work.
        return None;
    }
    let s = r.b.session_mut();
    s.project = workspace;
    s.title = r.title;
    if let Some(parent_dir) = subagent_of {
        s.kind = Some("subagent".to_string());
        s.parent = parent_dir.file_name().and_then(|n| n.to_str()).map(str::to_string);
        s.agent = Some(dir_name.to_string());
    }
    r.b.finish()
}

/// Reads one stream's records into a session.
struct Reader<'a> {
    b: SessionBuilder,
    /// Muse's records hold no reasoning the page names; kept for when they do.
    _opts: &'a ParseOptions,
    /// `runtime.session.metadata`, `route_facts`, `workspace_branch.observed`, in order of preference.
    workspace: [Option<String>; 3],
    title: Option<String>,
}

impl Reader<'_> {
    fn record(&mut self, rec: &Value) {
        let time = recorded_at(rec);
        self.b.touch(time);
        let payload = rec.get("payload").unwrap_or(&Value::Null);
        let mut note_workspace = |slot: usize, key: &str| {
            if self.workspace[slot].is_none() {
                self.workspace[slot] = text(payload, key).map(str::to_string);
            }
        };
        match text(rec, "payload_type").unwrap_or("") {
            "runtime.session.metadata" => note_workspace(0, "workspace_root"),
            "runtime.session.route_facts" => note_workspace(1, "cwd"),
            "session.workspace_branch.observed" => note_workspace(2, "workspace_root"),
            "session.name.changed" => {
                if let Some(name) = text(payload, "new_name").map(str::trim).filter(|n| !n.is_empty()) {
                    self.title = Some(name.to_string());
                }
            }
            "runtime.session" if text(payload, "kind") == Some("run") => self.run_event(payload.get("event").unwrap_or(&Value::Null), time),
            _ => {}
        }
    }

    fn run_event(&mut self, event: &Value, time: Option<Timestamp>) {
        match text(event, "kind").unwrap_or("") {
            "started" => self.started(event, time),
            "assistant_message_committed" => self.assistant(event, time),
            "assistant_tool_calls_committed" => self.tool_calls(event, time),
            "tool_result_batch_committed" => self.tool_results(event, time),
            // workflow_child_lifecycle, usage and the rest.
            _ => {}
        }
    }

    fn started(&mut self, event: &Value, time: Option<Timestamp>) {
        if let Some(prompt) = text(event, "prompt").filter(|p| !p.trim().is_empty()) {
            self.b.push(Turn::new(Role::User, prompt).at(time));
        }
    }

    fn assistant(&mut self, event: &Value, time: Option<Timestamp>) {
        if let Some(t) = text(event, "text") {
            self.b.push(Turn::new(Role::Assistant, t).at(time));
        }
    }

    fn tool_calls(&mut self, event: &Value, time: Option<Timestamp>) {
        for call in event.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
            let call_id = text(call, "call_id");
            if call_id.is_some_and(|id| self.b.call_mut(id).is_some()) {
                continue;
            }
            let name = text(call, "name").unwrap_or("tool");
            let args = match call.get("args") {
                Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Null),
                Some(o @ Value::Object(_)) => o.clone(),
                _ => Value::Null,
            };
            self.b.push_call(call_id, tool_turn(name, &args, time));
        }
    }

    fn tool_results(&mut self, event: &Value, time: Option<Timestamp>) {
        for result in event.get("results").and_then(Value::as_array).into_iter().flatten() {
            let call_id = text(result, "tool_call_id").unwrap_or("");
            let raw = text(result, "text").unwrap_or("");
            let (output, exit) = bash_result(raw);
            if !self.b.complete_call(call_id, &output, false, exit.clone(), time) {
                self.b.push_orphan_result(call_id, &output, false, exit, time);
            }
        }
    }
}

/// A `ToolCall` turn for a Muse tool call.
fn tool_turn(name: &str, args: &Value, time: Option<Timestamp>) -> Turn {
    let mut turn = Turn::new(Role::ToolCall, "").at(time);
    let mut tool = ToolUse { name: name.to_string(), ..ToolUse::default() };
    let path = text(args, "path");
    match name {
        "bash" => tool.command = text(args, "command").map(str::to_string),
        "read_file" | "write_file" | "edit_file" => {
            if let Some(p) = path {
                let action = match name {
                    "read_file" => FileAction::Read,
                    "write_file" => FileAction::Write,
                    _ => FileAction::Edit,
                };
                turn.files.push(FileTouch { path: p.to_string(), action });
                if let (Some(find), "edit_file") = (text(args, "find"), name) {
                    let mut old = find.to_string();
                    cap_text(&mut old, MAX_EDIT_BYTES);
                    let new = args.get("replace").and_then(Value::as_str).map(|r| {
                        let mut r = r.to_string();
                        cap_text(&mut r, MAX_EDIT_BYTES);
                        r
                    });
                    turn.edit = Some(Edit { path: p.to_string(), old, new });
                }
            }
        }
        _ => {}
    }
    turn.tool = Some(tool);
    turn
}

/// A `bash` result is JSON `{command, exit_code, output}`: its output and exit; any other
/// result text is kept as it is.
fn bash_result(raw: &str) -> (String, Option<ExitStatus>) {
    let parsed = raw.trim_start().starts_with('{').then(|| serde_json::from_str::<Value>(raw).ok()).flatten();
    match parsed {
        Some(v) if v.get("exit_code").is_some() || v.get("output").is_some() => {
            let exit = v.get("exit_code").and_then(Value::as_i64).map(ExitStatus::Code);
            (v.get("output").and_then(Value::as_str).unwrap_or("").to_string(), exit)
        }
        _ => (raw.to_string(), None),
    }
}

/// Sub-agents are not resumable (`has no saved log`): their parent is.
fn resume_unless_subagent(session: &SessionMeta) -> Result<ResumeSpec, &'static str> {
    deja_core::launch::not_a_subagent(session).map(|()| ResumeSpec::in_dir(&["muse", "resume", "{id}"]))
}

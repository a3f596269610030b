//! Factory Droid (`factory`): the `droid` CLI keeps one append-only JSONL transcript per
//! session at `~/.factory/sessions/<workspace-slug>/<session-uuid>.jsonl` (the slug is
//! Claude Code's dash encoding of the cwd), beside a `<session-uuid>.settings.json` sidecar
//! and its `.settings.json.bak` backup. `FACTORY_HOME_OVERRIDE` replaces the home directory
//! `.factory` is looked for in; `DEJA_FACTORY_ROOT` names the sessions root.
//!
//! The content blocks are Anthropic's (`text`, `tool_use`, `tool_result`), but the lines
//! are not Claude Code's records (a `session_start` header, `message` envelopes chained by
//! `id`/`parentId`, no `type:"user"`/`"assistant"`), so this adapter reads them itself and
//! shares only the tool decoding with the Claude family (`tool_call_turn_with`).
//!
//! | line | Turn | rule |
//! | --- | --- | --- |
//! | `session_start` (`id`, `title`, `owner`, `cwd`, `version`) | — | id, title, project; no timestamp |
//! | `message`, `message.role:"user"`, `visibility:"llm_only"` or id `context-…` | skipped | the synthetic context message (reminders, environment, `ls`/`git` output) |
//! | `message`, `message.role:"user"`, `text` items (or a string) | `User` | |
//! | `message`, user `tool_result` items (`tool_use_id`, `content`, `is_error`) | folded into their call | an `Execute` result's last line `[Process exited with code N]` → exit N, cut, with a first line `Error: Command failed (exit code: N)` repeating it; unpaired → `ToolOutput` |
//! | `message`, `message.role:"assistant"`, `text` items | `Assistant` | |
//! | assistant `thinking` items | `Reasoning` | only with `include_reasoning` |
//! | assistant `tool_use` items | `ToolCall` | `Execute`'s `command`; `file_path` (or `path`) → `files`; `old_string` → `edit` |
//! | `agent_turn_outcome`, `todo_state`, other types | skipped | turn ends, plan snapshots |
//! | malformed or torn line | skipped | counted in the parse stats |
//!
//! Each turn's `node` is the message `id` and the nearest earlier message that made a turn
//! (`parentId` stepped through skipped messages). The session id is the header's `id`, else
//! the file stem; the title is the header's `title` (droid 0.225.2 writes the whole first
//! prompt there); the project is the header's `cwd`, else the slug decoded on disk. A read
//! of a tail goes on from the header's `cwd` the read before kept (`TailState::cwd`),
//! never reading the header again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use deja_core::exit::{split_exit_code, ExitLine};
use deja_core::family::claude_jsonl::tool_call_turn_with;
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::project::{dash_fallback_name, decode_dash_path};
use deja_core::read::for_each_source_line;
use deja_core::store::{Files, Layout, Part, Root, Store, StoreSpec};
use deja_core::synth::dash_encode;
use deja_core::work::ToolMap;
use deja_core::{
    Capabilities, Capability, ExitStatus, FormatError, HarnessFormat, HarnessInfo, InjectedText, NodeRef, ParseOptions, ParseStats, Role,
    Session, SessionBuilder, SessionSink, SourceRef, SynthSession, SynthTurn, SynthWriter, TailState, Timestamp, Turn,
};
use serde_json::{json, Value};

mod wiring;

const ID: &str = "factory";

/// `<slug>/<uuid>.jsonl`; leave room for nesting the page does not show.
const MAX_DEPTH: usize = 4;

/// Droid's tool names: `Execute` is its shell (0.225.2); the file tools are decoded like
/// Claude Code's (the page has only `Read`).
pub const FACTORY_TOOLS: ToolMap =
    ToolMap { shell: &["Execute", "Bash"], read: &["Read"], edit: &["Edit", "MultiEdit"], write: &["Write", "Create"] };

/// The Factory Droid adapter.
pub struct FactoryFormat;

deja_core::inventory::submit!(deja_core::Registration(&FactoryFormat));

/// Droid's context message is skipped whole; these catch its reminders should one land in
/// a prompt.
static FACTORY_INJECTED: InjectedText = InjectedText { blocks: &["system-reminder"], ..InjectedText::NONE };

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Factory Droid",
    container: "JSONL, one file per session (+ `.settings.json` sidecar)",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("${FACTORY_HOME_OVERRIDE:-~}/.factory/sessions")],
        // Each transcript's `<id>.settings.json` sidecar names its working directory.
        layout: Layout::Files(Files::new("**/*.jsonl").depth(MAX_DEPTH).append_only().parts(&[Part::Extension("settings.json")])),
    }]),
    needs: &[],
    format_summary: "Factory's droid CLI writes one append-only JSONL transcript per session under \
        `~/.factory/sessions/<workspace-slug>/` (the slug is Claude's dash encoding of the cwd), with a \
        `<uuid>.settings.json` sidecar (model, token usage). Line 1 is a `session_start` header (`id`, `title`, `cwd`); \
        `message` lines (`id`, `parentId`, `timestamp`) wrap Anthropic content blocks: `text`, `tool_use` (the shell is \
        `Execute`), and `tool_result` items in user messages whose `Execute` output ends in `[Process exited with code \
        N]`. The first user message is a synthetic `llm_only` context message and is skipped; `agent_turn_outcome` and \
        `todo_state` lines are bookkeeping.",
    injected: &FACTORY_INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Planned("`mcpServers.deja` (stdio) in `~/.factory/mcp.json`, as `droid mcp add deja <exe> mcp` writes it"),
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::Unknown, handoff: Handoff::Paste("no start-with-prompt command is known") },
};

impl HarnessFormat for FactoryFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::FactoryWiring)
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let mut file = FileParse::new(src, opts);
        for_each_source_line(src, &mut stats, &[], |_offset, v| file.line(&v))?;
        if let Some(s) = file.finish(&mut stats) {
            out.session(s);
        }
        Ok(stats)
    }

    fn synthetic(&self) -> Option<&dyn SynthWriter> {
        Some(self)
    }
}

impl SynthWriter for FactoryFormat {
    /// Writes the session as droid 0.225.2 does: header, the `llm_only` context message,
    /// then one message line per turn chained by `parentId`, `Execute` results with their
    /// exit footer, and the settings sidecar.
    fn write(&self, home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
        let dir = home.join(".factory/sessions").join(dash_encode(&session.project));
        std::fs::create_dir_all(&dir)?;
        let mut w = Render { lines: Vec::new(), n: 0, parent: None };
        w.lines.push(json!({"type": "session_start", "id": session.id, "title": session.title, "owner": "dev", "version": 2, "cwd": session.project}));
        let context = json!([{"type": "text", "text": "<system-reminder>\nCurrent date: synthetic\n</system-reminder>"}]);
        let ctx = json!({"role": "user", "visibility": "llm_only", "content": context});
        w.lines.push(json!({"type": "message", "id": "context-m0000", "timestamp": session.started.to_rfc3339(), "message": ctx}));
        for turn in &session.turns {
            match turn {
                SynthTurn::User { text, time } => w.message("user", *time, json!([{"type": "text", "text": text}])),
                SynthTurn::Assistant { text, time } => w.message("assistant", *time, json!([{"type": "text", "text": text}])),
                SynthTurn::Reasoning { text, time } => w.message("assistant", *time, json!([{"type": "thinking", "thinking": text}])),
                SynthTurn::Shell { command, output, exit_code, time } => {
                    let result = format!("{output}\n\n\n[Process exited with code {exit_code}]");
                    w.call(*time, "Execute", json!({"command": command, "summary": ""}), &result);
                }
                SynthTurn::Read { path, output, time } => w.call(*time, "Read", json!({"file_path": path}), output),
                SynthTurn::Edit { path, old, new, time } => {
                    w.call(*time, "Edit", json!({"file_path": path, "old_string": old, "new_string": new}), "Edited")
                }
            }
        }
        let path = dir.join(format!("{}.jsonl", session.id));
        let body: String = w.lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, body)?;
        std::fs::write(dir.join(format!("{}.settings.json", session.id)), "{\n  \"model\": \"custom:Synthetic-0\"\n}\n")?;
        Ok(path)
    }
}

/// The synthetic writer's lines and its message chain.
struct Render {
    lines: Vec<Value>,
    n: u32,
    parent: Option<String>,
}

impl Render {
    fn message(&mut self, role: &str, time: Timestamp, content: Value) {
        self.n += 1;
        let id = format!("m{:04}", self.n);
        let mut line = json!({"type": "message", "id": id, "timestamp": time.to_rfc3339(), "message": {"role": role, "content": content}});
        if let (Some(p), Some(o)) = (&self.parent, line.as_object_mut()) {
            o.insert("parentId".into(), Value::String(p.clone()));
        }
        self.lines.push(line);
        self.parent = Some(id);
    }

    /// A `tool_use` message and the `tool_result` message that answers it.
    fn call(&mut self, time: Timestamp, name: &str, input: Value, result: &str) {
        let id = format!("call_{}", self.n + 1);
        self.message("assistant", time, json!([{"type": "tool_use", "id": id, "name": name, "input": input}]));
        self.message("user", time, json!([{"type": "tool_result", "tool_use_id": id, "is_error": false, "content": result}]));
    }
}

/// What the `session_start` header says.
#[derive(Debug, Default)]
struct Header {
    id: Option<String>,
    title: Option<String>,
    cwd: Option<String>,
}

impl Header {
    fn of(v: &Value) -> Header {
        let t = |k: &str| text(v, k).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string);
        Header { id: t("id"), title: t("title"), cwd: t("cwd") }
    }
}

/// One session being read from a file.
struct FileParse<'a> {
    src: &'a SourceRef,
    opts: &'a ParseOptions,
    b: SessionBuilder,
    header: Option<Header>,
    /// For every message id: the nearest message at or above it that made a turn.
    repr: HashMap<String, Option<String>>,
}

impl<'a> FileParse<'a> {
    fn new(src: &'a SourceRef, opts: &'a ParseOptions) -> Self {
        let stem = src.path.file_stem().and_then(|s| s.to_str()).unwrap_or("").to_string();
        let id = src.resume.as_ref().map_or(stem, |r| r.session_id.clone());
        // The header sits before a tail's start: its cwd comes back in the state the read
        // before left (its id is the resumed one, its title the index holds).
        let header = src.resume.as_ref().map(|r| Header { cwd: r.state.cwd.clone(), ..Header::default() });
        FileParse { src, opts, b: SessionBuilder::new(ID, id, src.clone()), header, repr: HashMap::new() }
    }

    fn line(&mut self, v: &Value) {
        match text(v, "type") {
            Some("session_start") => self.session_start(v),
            Some("message") => self.message(v),
            // agent_turn_outcome (no timestamp), todo_state and kinds not yet seen.
            _ => self.b.touch(v.get("timestamp").and_then(Timestamp::from_json)),
        }
    }

    fn session_start(&mut self, v: &Value) {
        if self.header.is_none() {
            self.header = Some(Header::of(v));
        }
    }

    fn message(&mut self, v: &Value) {
        let time = v.get("timestamp").and_then(Timestamp::from_json);
        self.b.touch(time);
        let id = text(v, "id").map(str::to_string);
        let parent = text(v, "parentId").map(|p| self.repr.get(p).cloned().unwrap_or_else(|| Some(p.to_string()))).unwrap_or(None);
        let node = id.as_ref().map(|id| NodeRef { id: id.clone(), parent: parent.clone() });
        let before = self.b.turn_count();
        if let Some(m) = v.get("message") {
            match text(m, "role") {
                Some("user") if !is_context_message(v, m) => self.user(m, time, node),
                Some("assistant") => self.assistant(m, time, node),
                _ => {}
            }
        }
        if let Some(id) = id {
            let made = self.b.turn_count() > before;
            self.repr.entry(id.clone()).or_insert(if made { Some(id) } else { parent });
        }
    }

    fn user(&mut self, m: &Value, time: Option<Timestamp>, node: Option<NodeRef>) {
        let mut said = Vec::new();
        match m.get("content") {
            Some(Value::String(s)) => said.push(s.clone()),
            Some(Value::Array(items)) => {
                for item in items {
                    match text(item, "type") {
                        Some("tool_result") => self.tool_result(item, time, node.clone()),
                        _ => said.extend(text(item, "text").map(str::to_string)),
                    }
                }
            }
            _ => {}
        }
        if !said.is_empty() {
            let mut turn = Turn::new(Role::User, said.join("\n")).at(time);
            turn.node = node;
            self.b.push(turn);
        }
    }

    fn assistant(&mut self, m: &Value, time: Option<Timestamp>, node: Option<NodeRef>) {
        let mut said: Vec<&str> = Vec::new();
        let items: &[Value] = match m.get("content") {
            Some(Value::Array(items)) => items,
            Some(Value::String(s)) => {
                let mut turn = Turn::new(Role::Assistant, s.as_str()).at(time);
                turn.node = node;
                self.b.push(turn);
                return;
            }
            _ => &[],
        };
        for item in items {
            match text(item, "type") {
                Some("tool_use") => {
                    self.flush(&mut said, time, &node);
                    self.tool_use(item, time, node.clone());
                }
                Some("thinking") => {
                    self.flush(&mut said, time, &node);
                    if self.opts.include_reasoning {
                        let mut turn = Turn::new(Role::Reasoning, text(item, "thinking").unwrap_or("")).at(time);
                        turn.node = node.clone();
                        self.b.push(turn);
                    }
                }
                _ => said.extend(text(item, "text")),
            }
        }
        self.flush(&mut said, time, &node);
    }

    /// Pushes the prose gathered so far as one `Assistant` turn.
    fn flush(&mut self, said: &mut Vec<&str>, time: Option<Timestamp>, node: &Option<NodeRef>) {
        if !said.is_empty() {
            let mut turn = Turn::new(Role::Assistant, said.join("\n")).at(time);
            turn.node = node.clone();
            self.b.push(turn);
            said.clear();
        }
    }

    fn tool_use(&mut self, item: &Value, time: Option<Timestamp>, node: Option<NodeRef>) {
        let call_id = text(item, "id");
        if call_id.is_some_and(|id| self.b.call_mut(id).is_some()) {
            return;
        }
        let name = text(item, "name").unwrap_or("tool");
        let input = item.get("input").unwrap_or(&Value::Null);
        let mut turn = tool_call_turn_with(&FACTORY_TOOLS, &["path"], name, input, time);
        turn.node = node;
        self.b.push_call(call_id, turn);
    }

    fn tool_result(&mut self, item: &Value, time: Option<Timestamp>, node: Option<NodeRef>) {
        let call_id = text(item, "tool_use_id").unwrap_or("");
        let content = match item.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(blocks)) => blocks.iter().filter_map(|b| text(b, "text")).collect::<Vec<_>>().join("\n"),
            _ => String::new(),
        };
        let is_error = item.get("is_error").and_then(Value::as_bool) == Some(true);
        let (exit, rest) = split_exit_footer(&content);
        if !self.b.complete_call(call_id, rest, is_error, exit.clone(), time) {
            if let Some(i) = self.b.push_orphan_result(call_id, rest, is_error, exit, time) {
                if let Some(turn) = self.b.session_mut().turns.get_mut(i) {
                    turn.node = node;
                }
            }
        }
    }

    fn finish(mut self, stats: &mut ParseStats) -> Option<Session> {
        let header = self.header.take().unwrap_or_default();
        stats.tail = Some(TailState { cwd: header.cwd.clone(), ..TailState::default() });
        if let Some(id) = header.id {
            self.b.set_id(id);
        }
        let slug = self.src.path.parent().and_then(Path::file_name).and_then(|n| n.to_str());
        let project = header.cwd.or_else(|| {
            slug.map(|e| match decode_dash_path(e, Path::new("/")) {
                Some(p) => p.display().to_string(),
                None => dash_fallback_name(e),
            })
        });
        let s = self.b.session_mut();
        s.project = project;
        s.title = header.title;
        self.b.finish()
    }
}

/// Droid's synthetic first message: `visibility:"llm_only"`, id `context-<prompt id>`.
fn is_context_message(line: &Value, m: &Value) -> bool {
    text(m, "visibility") == Some("llm_only")
        || text(line, "visibility") == Some("llm_only")
        || text(line, "id").is_some_and(|id| id.starts_with("context-"))
}

/// A non-empty string field.
fn text<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// `Execute`'s footer, a last line `[Process exited with code N]`: the exit and the
/// output without it.
fn split_exit_footer(output: &str) -> (Option<ExitStatus>, &str) {
    match split_exit_code(output, &[ExitLine::last("[Process exited with code ").closed("]")]) {
        (Some(n), head) => (Some(ExitStatus::Code(n)), strip_failure_lead(head, n)),
        (None, _) => (None, output),
    }
}

/// A failed `Execute` result opens with `Error: Command failed (exit code: N)` (0.225.2),
/// which only repeats the footer's exit: the output is what follows it.
fn strip_failure_lead(output: &str, code: i64) -> &str {
    let (first, rest) = output.split_once('\n').unwrap_or((output, ""));
    if first.trim() == format!("Error: Command failed (exit code: {code})") {
        rest
    } else {
        output
    }
}

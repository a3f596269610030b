//! CodeBuddy Code (`codebuddy`): Tencent's terminal agent keeps one append-only JSONL
//! file per session under `${CODEBUDDY_CONFIG_DIR:-~/.codebuddy}/projects/<mangled-cwd>/<session-id>.jsonl`
//! (sub-agent runs in `<session-id>/subagents/agent-<id>.jsonl`). WorkBuddy, the desktop
//! app that bundles the same agent, writes the same files under
//! `${WORKBUDDY_CONFIG_DIR:-~/.workbuddy}/projects` and `~/.workbuddy-ai/projects`; its
//! sessions keep the harness id `codebuddy`.
//!
//! The layout is Claude Code's, but every line is one OpenAI-Responses-style item, not a
//! Claude record: no `uuid` chain, no `message` envelope, calls and results as items of
//! their own, epoch-millisecond times. So this adapter reads the lines itself (one
//! function per item kind below), and shares only the tool decoding with the Claude
//! family (`claude_jsonl::tool_call_turn`: CodeBuddy keeps Claude Code's tool names and
//! input keys).
//!
//! | item `type` | Turn | rule |
//! | --- | --- | --- |
//! | `message`, `role:"user"`, `content[]` `input_text` | `User` | dropped when CodeBuddy would not count it as a real prompt (below) |
//! | `message`, `role:"assistant"`, `content[]` `output_text` | `Assistant` | |
//! | `function_call` (`callId`, `name`, `arguments` JSON string) | `ToolCall` | `Bash`/`PowerShell` `command`; `Read`/`Edit`/`MultiEdit`/`Write` `file_path`, edit spans |
//! | `function_call_result` (`callId`, `output.text`) | folded into its call | a last line `Exit Code: N` → exit N and is cut; `Exit Code: (none)` → no code; unpaired → `ToolOutput` |
//! | `reasoning` | `Reasoning` | only with `include_reasoning` |
//! | `summary` (the compaction digest) | `Summary` | never replaces the turns before it |
//! | `custom-title`, `ai-title`, `topic` | session title | newest `custom-title` (the user's), else newest `ai-title`, else newest `topic` (the harness's) |
//! | `turn-metrics`, `file-history-snapshot`, `session-meta`, other types | skipped | bookkeeping |
//! | malformed or torn line | skipped | counted in the parse stats |
//!
//! A user item is no prompt when `providerData.skipRun` is set (hook output, filter
//! notices, local commands), when any of `isMeta`, `isCompactInternal`, `isCompacted`,
//! `isSummary`, `compactType`, `teammateMessage` is set (on the item or in
//! `providerData`), or when `providerData.agent` is `"compact"` (the `/compact`
//! instruction); a text item opening with `<command-name>`, `<system-reminder>`,
//! `<local-command-stdout>`, `<teammate-message>` or `<task-notification>` is dropped.
//! This mirrors CodeBuddy's own `isRealUserMessageItem`.
//!
//! The session id is the file stem; the project is the items' `cwd`, else the mangled
//! directory name decoded on disk (`/`, `\` and `:` all became `-`, the leading dash
//! dropped). `DEJA_CODEBUDDY_ROOT` names one projects root, `DEJA_CODEBUDDY_ROOTS` a path
//! list; either replaces every default root.
//!
//! A read of a tail goes on from the state the read before left, never from the file's
//! head: the first `cwd` (`TailState::cwd`) and mark `titled` once an `ai-title` or
//! `custom-title` was read, so a later `topic` does not replace it; a tail's generated
//! title against a name given before is the indexer's one precedence.

use std::path::{Path, PathBuf};

use deja_core::exit::{split_exit, ExitLine};
use deja_core::family::claude_jsonl::{tool_call_turn, CLAUDE_INJECTED};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::model::SessionMeta;
use deja_core::project::{dash_fallback_name, decode_dash_path};
use deja_core::read::for_each_source_line;
use deja_core::store::{Files, Layout, Root, Store, StoreSpec};
use deja_core::work::ToolMap;
use deja_core::{
    Capabilities, Capability, ExitStatus, FormatError, HarnessFormat, HarnessInfo, ParseOptions, ParseStats, Role, SessionBuilder,
    SessionSink, SourceRef, SynthSession, SynthTurn, SynthWriter, TailState, Timestamp, TitleBy, Turn,
};
use serde_json::{json, Value};

mod wiring;

const ID: &str = "codebuddy";

/// `<mangled-cwd>/<session>/subagents/agent-<id>.jsonl` is three levels below a root.
const MAX_DEPTH: usize = 6;

/// CodeBuddy's tool names: Claude Code's, plus its Windows shell.
pub const CODEBUDDY_TOOLS: ToolMap =
    ToolMap { shell: &["Bash", "PowerShell"], read: &["Read"], edit: &["Edit", "MultiEdit", "NotebookEdit"], write: &["Write"] };

/// The CodeBuddy Code adapter.
pub struct CodeBuddyFormat;

deja_core::inventory::submit!(deja_core::Registration(&CodeBuddyFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "CodeBuddy Code",
    container: "JSONL, one Responses-style item per line, one file per session (+ sub-agent files)",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[
            Root::any("${CODEBUDDY_CONFIG_DIR:-~/.codebuddy}/projects"),
            // WorkBuddy, CodeBuddy's desktop sibling; its variable replaces both defaults.
            Root::any("${WORKBUDDY_CONFIG_DIR:-~/{.workbuddy,.workbuddy-ai}}/projects"),
        ],
        layout: Layout::Files(Files::new("**/*.jsonl").depth(MAX_DEPTH).append_only().subagents("subagents")),
    }]),
    needs: &[],
    format_summary: "CodeBuddy Code (and WorkBuddy, which bundles it) writes one append-only JSONL file per session under \
        `${CODEBUDDY_CONFIG_DIR:-~/.codebuddy}/projects/<mangled-cwd>/` (WorkBuddy: `${WORKBUDDY_CONFIG_DIR:-~/.workbuddy}` \
        and `~/.workbuddy-ai`). Lines are OpenAI-Responses-style items: `message` items with `input_text`/`output_text` \
        content, `function_call` items (Claude Code's tool names, JSON-string `arguments`) paired by `callId` with \
        `function_call_result` items whose shell output ends in `Exit Code: N`, `reasoning`, a compaction `summary`, and \
        title items (`custom-title`, `ai-title`, `topic`). Times are epoch milliseconds; `cwd` is on the items. \
        Hook output, local commands and compaction prompts are flagged and skipped.",
    injected: &CLAUDE_INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "`mcpServers.deja` `{type: stdio, command, args: [\"mcp\"]}` in the first existing of `<config>/.mcp.json`, \
             `<config>/mcp.json`, `~/.codebuddy.json`, else a new `<config>/.mcp.json` (`<config>` = \
             `${CODEBUDDY_CONFIG_DIR:-~/.codebuddy}`)",
        ),
        auto_recall: Capability::Planned(
            "`codebuddy-auto`: Claude-shaped hooks in `<config>/settings.json` (timeouts in seconds): SessionStart, \
             UserPromptSubmit, PostToolUse(+Failure) on Bash|PowerShell → `hook-tool-after`, PostToolUse on \
             Read|Edit|Write|MultiEdit → `hook-tool`, PreCompact",
        ),
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::PerSession {
            doc: "`cd <cwd> && codebuddy -c -r <id>`; not for WorkBuddy sessions or sub-agent runs",
            pick: resume_codebuddy,
        },
        handoff: Handoff::Paste("the page says exec but names no start-with-prompt argument"),
    },
};

impl HarnessFormat for CodeBuddyFormat {
    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::CodebuddyWiring)
    }

    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let mut file = FileParse::new(src, opts);
        for_each_source_line(src, &mut stats, &[], |_offset, v| file.item(&v))?;
        if let Some(s) = file.finish(&mut stats) {
            out.session(s);
        }
        Ok(stats)
    }

    fn synthetic(&self) -> Option<&dyn SynthWriter> {
        Some(self)
    }
}

impl SynthWriter for CodeBuddyFormat {
    /// Writes CodeBuddy Code's items under `~/.codebuddy/projects/<mangled-cwd>/`: messages,
    /// `function_call`/`function_call_result` pairs (the shell's `Exit Code: N` footer), an
    /// `ai-title` when the session has a title.
    fn write(&self, home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
        let mangled = session.project.replace(['/', '\\', ':'], "-");
        let dir = home.join(".codebuddy/projects").join(mangled.trim_start_matches('-'));
        std::fs::create_dir_all(&dir)?;
        let cwd = session.project.as_str();
        let mut lines = Vec::new();
        let message = |role: &str, kind: &str, text: &str, time: Timestamp| json!({"type": "message", "role": role, "content": [{"type": kind, "text": text}], "timestamp": time.millis(), "cwd": cwd});
        for (i, turn) in session.turns.iter().enumerate() {
            let id = format!("call_{i}");
            let mut call = |time: Timestamp, name: &str, args: Value, output: String| {
                let arguments = args.to_string();
                lines.push(json!({"type": "function_call", "callId": id, "name": name, "arguments": arguments, "timestamp": time.millis(), "cwd": cwd}));
                let output = json!({"type": "text", "text": output});
                lines.push(json!({"type": "function_call_result", "callId": id, "name": name, "status": "completed", "output": output, "timestamp": time.millis(), "cwd": cwd}));
            };
            match turn {
                SynthTurn::User { text, time } => lines.push(message("user", "input_text", text, *time)),
                SynthTurn::Assistant { text, time } => lines.push(message("assistant", "output_text", text, *time)),
                SynthTurn::Reasoning { text, time } => {
                    lines.push(json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": text}], "timestamp": time.millis(), "cwd": cwd}))
                }
                SynthTurn::Shell { command, output, exit_code, time } => {
                    call(*time, "Bash", json!({"command": command}), format!("{output}\nExit Code: {exit_code}"))
                }
                SynthTurn::Read { path, output, time } => call(*time, "Read", json!({"file_path": path}), output.clone()),
                SynthTurn::Edit { path, old, new, time } => call(
                    *time,
                    "Edit",
                    json!({"file_path": path, "old_string": old, "new_string": new}),
                    format!("The file {path} has been updated."),
                ),
            }
        }
        if let Some(title) = &session.title {
            lines.push(json!({"type": "ai-title", "title": title, "timestamp": session.started.millis()}));
        }
        let path = dir.join(format!("{}.jsonl", session.id));
        std::fs::write(&path, lines.iter().map(|l| format!("{l}\n")).collect::<String>())?;
        Ok(path)
    }
}

/// The tail state's mark once an `ai-title` or `custom-title` was read.
const MARK_TITLED: &str = "titled";

/// Which title item a title came from, in CodeBuddy's order of preference.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum TitleRank {
    Topic,
    Ai,
    Custom,
}

/// One session being read from a file.
struct FileParse<'a> {
    opts: &'a ParseOptions,
    b: SessionBuilder,
    cwd: Option<String>,
    title: Option<(TitleRank, String)>,
    mangled_dir: Option<String>,
    /// An `ai-title` or `custom-title` was read before this tail (mark `titled`): a
    /// `topic` in the tail does not stand in for it.
    titled_before: bool,
}

impl<'a> FileParse<'a> {
    fn new(src: &'a SourceRef, opts: &'a ParseOptions) -> Self {
        let name = |p: Option<&Path>| p.and_then(Path::file_name).and_then(|n| n.to_str()).map(str::to_string);
        let stem = src.path.file_stem().and_then(|s| s.to_str()).unwrap_or("").to_string();
        let dir = src.path.parent();
        let in_subagents = name(dir).as_deref() == Some("subagents");
        let session_dir = dir.and_then(Path::parent);
        // A resumed read keeps the id the first read gave.
        let id = src.resume.as_ref().map_or_else(|| stem.clone(), |r| r.session_id.clone());
        let mangled_dir = if in_subagents { name(session_dir.and_then(Path::parent)) } else { name(dir) };
        let mut b = SessionBuilder::new(ID, id, src.clone());
        if in_subagents {
            let s = b.session_mut();
            s.kind = Some("subagent".to_string());
            s.parent = name(session_dir);
            s.agent = Some(stem.strip_prefix("agent-").unwrap_or(&stem).to_string());
        }
        // A tail goes on from what the read before left (see the module doc).
        let state = src.resume.as_ref().map(|r| &r.state);
        let cwd = state.and_then(|s| s.cwd.clone());
        FileParse { opts, b, cwd, title: None, mangled_dir, titled_before: state.is_some_and(|s| s.marked(MARK_TITLED)) }
    }

    fn item(&mut self, v: &Value) {
        let time = v.get("timestamp").and_then(Timestamp::from_json);
        if self.cwd.is_none() {
            self.cwd = text(v, "cwd").map(str::to_string);
        }
        match text(v, "type").unwrap_or("") {
            "message" => self.message(v, time),
            "function_call" => self.function_call(v, time),
            "function_call_result" => self.function_call_result(v, time),
            "reasoning" => self.reasoning(v, time),
            "summary" => self.summary(v, time),
            "custom-title" => self.title_item(v, TitleRank::Custom, &["customTitle"]),
            "ai-title" => self.title_item(v, TitleRank::Ai, &["aiTitle"]),
            "topic" => self.title_item(v, TitleRank::Topic, &["topic"]),
            // turn-metrics, file-history-snapshot, session-meta and kinds not yet seen.
            _ => self.b.touch(time),
        }
    }

    fn message(&mut self, v: &Value, time: Option<Timestamp>) {
        match text(v, "role") {
            Some("user") => {
                if !is_real_user_item(v) {
                    self.b.touch(time);
                    return;
                }
                let said: Vec<&str> = content_texts(v, "input_text").into_iter().filter(|t| !is_injected_item(t)).collect();
                self.b.push(Turn::new(Role::User, said.join("\n")).at(time));
            }
            Some("assistant") => {
                let said = content_texts(v, "output_text").join("\n");
                self.b.push(Turn::new(Role::Assistant, said).at(time));
            }
            // system/developer items are harness-authored.
            _ => self.b.touch(time),
        }
    }

    fn function_call(&mut self, v: &Value, time: Option<Timestamp>) {
        let name = text(v, "name").unwrap_or("tool");
        // `arguments` is a JSON string; an object is accepted too, anything else is no input.
        let input = match v.get("arguments") {
            Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Null),
            Some(o @ Value::Object(_)) => o.clone(),
            _ => Value::Null,
        };
        let call_id = text(v, "callId").or_else(|| text(v, "call_id"));
        if call_id.is_some_and(|id| self.b.call_mut(id).is_some()) {
            return;
        }
        let turn = tool_call_turn(&CODEBUDDY_TOOLS, name, &input, time);
        self.b.push_call(call_id, turn);
    }

    fn function_call_result(&mut self, v: &Value, time: Option<Timestamp>) {
        let call_id = text(v, "callId").or_else(|| text(v, "call_id")).unwrap_or("");
        let output = match v.get("output") {
            Some(Value::String(s)) => s.clone(),
            Some(o) => o.get("text").and_then(Value::as_str).unwrap_or("").to_string(),
            None => String::new(),
        };
        let (exit, rest) = split_exit_footer(&output);
        let is_error = text(v, "status").is_some_and(|s| s != "completed");
        if !self.b.complete_call(call_id, rest, is_error, exit.clone(), time) {
            self.b.push_orphan_result(call_id, rest, is_error, exit, time);
        }
    }

    fn reasoning(&mut self, v: &Value, time: Option<Timestamp>) {
        self.b.touch(time);
        if !self.opts.include_reasoning {
            return;
        }
        let mut parts = content_texts(v, "reasoning_text");
        if let Some(Value::Array(items)) = v.get("summary") {
            parts.extend(items.iter().filter_map(|i| i.get("text").and_then(Value::as_str)));
        }
        self.b.push(Turn::new(Role::Reasoning, parts.join("\n")).at(time));
    }

    fn summary(&mut self, v: &Value, time: Option<Timestamp>) {
        let digest = match v.get("summary") {
            Some(Value::String(s)) => s.clone(),
            _ => text(v, "text").map(str::to_string).unwrap_or_else(|| content_texts(v, "output_text").join("\n")),
        };
        self.b.push(Turn::new(Role::Summary, digest).at(time));
    }

    fn title_item(&mut self, v: &Value, rank: TitleRank, other_keys: &[&str]) {
        let Some(t) = std::iter::once("title").chain(other_keys.iter().copied()).find_map(|k| text(v, k)) else { return };
        let t = t.trim();
        // Later items of the same rank are newer and win.
        if !t.is_empty() && self.title.as_ref().is_none_or(|(r, _)| rank >= *r) {
            self.title = Some((rank, t.to_string()));
        }
    }

    fn finish(mut self, stats: &mut ParseStats) -> Option<deja_core::Session> {
        let titled = self.titled_before || self.title.as_ref().is_some_and(|(rank, _)| *rank >= TitleRank::Ai);
        let mut state = TailState { cwd: self.cwd.clone(), ..TailState::default() };
        state.mark(MARK_TITLED, titled);
        stats.tail = Some(state);
        let project = self.cwd.take().or_else(|| {
            self.mangled_dir.as_deref().map(|e| match decode_dash_path(e, Path::new("/")) {
                Some(p) => p.display().to_string(),
                None => dash_fallback_name(e),
            })
        });
        let s = self.b.session_mut();
        s.project = project;
        if s.kind.is_none() {
            // A name the user gave before a tail's lesser title is the indexer's to keep
            // (the one precedence); a topic yields to a generated title read before.
            match self.title {
                Some((TitleRank::Custom, t)) => s.offer_title(t, TitleBy::User),
                Some((TitleRank::Ai, t)) => s.offer_title(t, TitleBy::Harness),
                Some((TitleRank::Topic, t)) if !self.titled_before => s.offer_title(t, TitleBy::Harness),
                Some((TitleRank::Topic, _)) | None => {}
            }
        }
        self.b.finish()
    }
}

/// A non-empty string field.
fn text<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// The `text` of every `content[]` item of `kind` (a string content counts as one).
fn content_texts<'v>(v: &'v Value, kind: &str) -> Vec<&'v str> {
    match v.get("content") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(items)) => items
            .iter()
            .filter(|i| i.get("type").and_then(Value::as_str).is_none_or(|t| t == kind || t == "text"))
            .filter_map(|i| i.get("text").and_then(Value::as_str))
            .collect(),
        _ => Vec::new(),
    }
}

/// CodeBuddy's `isRealUserMessageItem`: no skip marker on the item or in `providerData`.
fn is_real_user_item(v: &Value) -> bool {
    let pd = v.get("providerData");
    let set = |k: &str| {
        [Some(v), pd].into_iter().flatten().any(|o| match o.get(k) {
            None | Some(Value::Null) | Some(Value::Bool(false)) => false,
            Some(Value::String(s)) => !s.is_empty(),
            Some(_) => true,
        })
    };
    let markers = ["skipRun", "isMeta", "isCompactInternal", "isCompacted", "isSummary", "compactType", "teammateMessage"];
    if markers.iter().any(|k| set(k)) {
        return false;
    }
    pd.and_then(|p| p.get("agent")).and_then(Value::as_str) != Some("compact")
}

/// Text items CodeBuddy injects into a user message (command echoes, reminders, local
/// command output, teammate and task notifications).
fn is_injected_item(t: &str) -> bool {
    let t = t.trim_start();
    ["<command-name>", "<system-reminder>", "<local-command-stdout>", "<teammate-message>", "<task-notification>"]
        .iter()
        .any(|p| t.starts_with(p))
}

/// A last line `Exit Code: N` (the shell tool's footer) and the output without it;
/// `Exit Code: (none)` (a signal ended the command) gives no code but is cut too.
fn split_exit_footer(output: &str) -> (Option<ExitStatus>, &str) {
    match split_exit(output, &[ExitLine::last("Exit Code:")]) {
        Some((code, rest)) => (code.map(ExitStatus::Code), rest),
        None => (None, output),
    }
}

/// `-r` finds a session only from its own folder, so an unknown or missing folder is
/// refused; WorkBuddy sessions and sub-agent runs have no resume.
fn resume_codebuddy(session: &SessionMeta) -> Result<ResumeSpec, &'static str> {
    if session.path.contains(".workbuddy") {
        return Err("WorkBuddy sessions have no resume");
    }
    deja_core::launch::not_a_subagent(session)?;
    match session.project.as_deref() {
        Some(dir) if std::path::Path::new(dir).is_dir() => Ok(ResumeSpec::in_dir(&["codebuddy", "-c", "-r", "{id}"])),
        _ => Err("codebuddy -r finds a session only from its own folder, which is unknown or not on this machine"),
    }
}

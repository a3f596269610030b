//! Gemini CLI (`gemini`): Google's terminal agent. Chats live under
//! `${GEMINI_CLI_HOME:+$GEMINI_CLI_HOME/}.gemini/tmp/<project-id>/chats/` (default
//! `~/.gemini/tmp/…`), one file per session, in two generations:
//!
//! * legacy whole-session JSON (`session-*.json`): `{sessionId, projectHash?, startTime,
//!   lastUpdated, messages: [<msg>]}`;
//! * replayable JSONL (`session-*.jsonl`, all 0.61 chats): a header line with
//!   `sessionId`, then message lines, `{"$set": {…}}` patches and `{"$rewindTo": id}`
//!   truncations, replayed in file order. Rewritten, not only appended (a rewind cuts
//!   what was written), so every file is re-read whole.
//!
//! `DEJA_GEMINI_ROOT` names the sessions root, `<home>/tmp` (the directory the
//! project-id directories sit in); `projects.json` is read from beside it. Sub-agent
//! chats nest one level deeper (`chats/<parent>/<sid>.jsonl`) and are skipped with
//! `DEJA_INCLUDE_SUBAGENTS=0`. A legacy `.json` whose session was resumed into a
//! `.jsonl` in the same directory yields nothing (the `.jsonl` wins).
//!
//! Message bodies are Gemini-API parts, read by `deja_core::family::gemini_chat` (text,
//! thoughts, function calls and responses, the tool vocabulary and shell framing); the
//! chat replay and the records below are this adapter's.
//!
//! | record | Turn | rule |
//! | --- | --- | --- |
//! | header / legacy document `sessionId`, `startTime`, `lastUpdated` | — | identity and times; a file without a `sessionId` (checkpoints…) yields nothing |
//! | a chat whose only message is the `<session_context>` one | — | yields nothing: 0.61 leaves such a file, with the resumed `sessionId`, beside a chat it resumes |
//! | message line (non-empty `type`) | replayed | a message whose `id` is already collected replaces it in place (0.61 re-emits `gemini` records once their tool calls are known); otherwise appended |
//! | `$set.messages` | replayed | replaces the collected list (empty clears it; an array without typed items changes nothing); `$set.lastUpdated` widens the session time; other `$set` keys (`sessionId` on resume) change nothing |
//! | `$rewindTo: id` | replayed | drops the last collected message with that id and everything after it |
//! | `type: "user"` text parts / string | `User` | the leading `<session_context>` block is Gemini's own (stripped at ingest) |
//! | `type: "user"` `functionResponse` parts (also the `<id>_response` records a resume restates) | folded into the call by id | skipped when the call already holds its result; without a call → `ToolOutput` |
//! | `type: "gemini"` / `"model"` content | `Assistant` | |
//! | `thoughts[]` (`subject`/`description`), `thought: true` parts | `Reasoning` | only with `include_reasoning` |
//! | `toolCalls[]` | `ToolCall` | family call mapping; `result[].functionResponse` (else `resultDisplay`) folded in, `status` `error`/`cancelled` → `is_error`; a relative `args.file_path` becomes `resultDisplay.filePath` |
//! | `content` `functionCall` parts | `ToolCall` | only those whose id is not in the record's `toolCalls[]` (a resume snapshot restates every call both ways) |
//! | `info`, `error`, `warning`, other types, empty text | skip | CLI noise |
//! | malformed or torn line | skipped | counted |
//!
//! Project: the full working directory, from `projects.json` (`{"projects": {"<path>":
//! "<project-id>"}}`, reverse lookup), else `tmp/<project-id>/.project_root`, else the
//! project id itself.

mod restore;
mod wiring;

use std::path::{Path, PathBuf};

use deja_core::discover::{find_files, subdirs};
use deja_core::family::gemini_chat::{self, GeminiDialect, GEMINI_TOOLS};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::read::{for_each_json_line, parse_json_document, read_source};
use deja_core::retention::{AgeUnit, MaxAge, Retention};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, ExitStatus, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Role,
    SessionBuilder, SessionSink, SourceRef, StoreEnv, Timestamp, Turn,
};
use serde_json::Value;

const ID: &str = "gemini";

/// The Gemini CLI adapter.
pub struct GeminiFormat;

deja_core::inventory::submit!(deja_core::Registration(&GeminiFormat));

/// Gemini CLI in the Gemini-API parts family.
pub static DIALECT: GeminiDialect = GeminiDialect { harness: ID, tools: GEMINI_TOOLS };

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Gemini CLI",
    container: "JSON (legacy) or replayable JSONL, one chat file per session",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("${GEMINI_CLI_HOME:-~}/.gemini/tmp")],
        layout: Layout::Custom {
            shape: "<project-id>/chats/session-*.{jsonl,json}, <project-id>/chats/<parent>/<sid>.jsonl",
            walk: Some(walk_projects),
        },
    }])
    .deja_vars(&["DEJA_INCLUDE_SUBAGENTS"]),
    needs: &[],
    format_summary: "Gemini CLI keeps one chat per session under `~/.gemini/tmp/<project-id>/chats/`: legacy whole-session \
        JSON (`{sessionId, startTime, lastUpdated, messages}`) or, since the JSONL generation, a header line followed by \
        message lines, `$set` patches (a `messages` array replaces the list) and `$rewindTo` truncations, replayed in file \
        order; a message re-emitted with the same `id` replaces the earlier copy. `user` and `gemini` messages carry \
        Gemini-API parts; `gemini` records hold `toolCalls[]` with their results (`run_shell_command` output framed with \
        `Output:`/`Exit Code:`), repeated as `functionResponse` parts in a `user` record. The project directory is a hash \
        or short name, mapped back to the working directory by `projects.json` or `.project_root`.",
    injected: &INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "`<home>/settings.json` `mcpServers.deja = {command: <exe>, args: [mcp]}`; the folder must be trusted or Gemini starts \
             no stdio server",
        ),
        auto_recall: Capability::Planned(
            "extension `<home>/extensions/deja/` with `hooks/hooks.json` (SessionStart → `hook-session-start`, BeforeAgent → \
             `hook-prompt`, timeouts in ms) and `hooksConfig.enabled = true` in `settings.json`",
        ),
        skill: Capability::Planned("shared `~/.agents/skills/deja-history/SKILL.md` (not also `<home>/skills/`)"),
        command: Capability::Planned("`<home>/commands/deja.toml` with `prompt = '''…{{args}}…'''`"),
    },
    retention: Retention::MaxAge(MaxAge {
        file: "${GEMINI_CLI_HOME:-~}/.gemini/settings.json",
        setting: "general.sessionRetention.maxAge",
        unit: AgeUnit::Period,
        default_secs: 30 * 86_400,
        switch: Some(("general.sessionRetention.enabled", true)),
        trigger: "at start-up, in the project it starts in",
        age_of: "the chat's `lastUpdated` (written with the file)",
        evidence: "gemini-cli packages/cli/src/config/settingsSchema.ts (`enabled` true, `maxAge` \"30d\" by default, units \
            h/d/w/m) and packages/cli/src/utils/sessionCleanup.ts (run at start-up over the project's `chats/`; a \
            `maxCount`, unset by default, also deletes all but the newest)",
    }),
    launch: Launch {
        resume: Resume::Always(ResumeSpec::anywhere(&["gemini", "--resume", "{id}"])),
        handoff: Handoff::Exec(&["gemini", "-i", "{prompt}"]),
    },
};

/// Gemini's session preamble (`<session_context>This is the Gemini CLI…`) and the hook
/// context it appends to prompts (tags go, content stays; escaped recall blocks inside
/// are removed by the index's own rule).
pub static INJECTED: InjectedText = InjectedText {
    blocks: &[],
    spans: &[],
    wrappers: &["hook_context"],
    preambles: &["session_context"],
    headed_preambles: &[],
    line_prefixes: &[],
    not_titles: &[],
};

fn is_chat_name(name: &str) -> bool {
    name.ends_with(".json") || name.ends_with(".jsonl")
}

/// Every project's chats: `chats/session-*.jsonl` (and the legacy `.json`), and a
/// sub-agent's `chats/<parent>/<sid>.jsonl` only with `DEJA_INCLUDE_SUBAGENTS` on.
fn walk_projects(root: &Path, env: &StoreEnv, found: &mut Discovery) {
    let subagents = env.include_subagents();
    for project in subdirs(root) {
        let chats = project.join("chats");
        if !chats.is_dir() {
            continue;
        }
        for f in find_files(&chats, 3, &is_chat_name) {
            let nested = f.parent().is_some_and(|p| p != chats);
            if nested && !subagents {
                continue;
            }
            let src = SourceRef::file(&f);
            // A legacy `.json` yields nothing once a `.jsonl` of its session sits beside it.
            let src = match (f.extension().is_some_and(|e| e == "json"), f.parent()) {
                (true, Some(dir)) => src.with_part(dir),
                _ => src,
            };
            found.sources.push(src);
        }
    }
}

impl HarnessFormat for GeminiFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::GeminiWiring)
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let bytes = read_source(&src.path, &mut stats)?.bytes;
        let chat = if src.path.extension().is_some_and(|e| e == "json") {
            stats.records += 1;
            match parse_json_document(&bytes, &src.path) {
                Ok(doc) => Chat::from_document(&doc),
                Err(e) => {
                    stats.skip(|| e.to_string());
                    return Ok(stats);
                }
            }
        } else {
            let mut replay = Replay::default();
            for_each_json_line(&bytes, 0, &src.path, &mut stats, |_, v| replay.line(v));
            replay.chat
        };
        let Some(id) = chat.id.clone() else { return Ok(stats) };
        if chat.messages.iter().all(is_preamble) {
            // 0.61 opens a fresh file at start-up and, on `--resume`, goes on writing the
            // resumed session's own file: the fresh one keeps the resumed `sessionId` and
            // only the `<session_context>` message. Yielding it would replace the real
            // session of that id in the index.
            return Ok(stats);
        }
        if src.path.extension().is_some_and(|e| e == "json") && resumed_as_jsonl(&src.path, &id) {
            return Ok(stats);
        }
        if let Some(s) = build(src, &chat, &id, opts) {
            out.session(s);
        }
        Ok(stats)
    }

    fn synthetic(&self) -> Option<&dyn deja_core::SynthWriter> {
        Some(self)
    }

    /// Gemini CLI resumes a chat by its session id ([`restore`]).
    fn restorer(&self) -> Option<&dyn deja_core::format::RestoreWriter> {
        Some(self)
    }
}

/// A chat after replay: identity, times and the surviving messages.
#[derive(Default)]
struct Chat {
    id: Option<String>,
    start: Option<Timestamp>,
    times: Vec<Timestamp>,
    messages: Vec<Value>,
}

impl Chat {
    /// A legacy whole-session document.
    fn from_document(doc: &Value) -> Chat {
        let mut chat = Chat::default();
        if !chat.header(doc) {
            return chat;
        }
        for m in doc.get("messages").and_then(Value::as_array).into_iter().flatten() {
            chat.upsert(m.clone());
        }
        chat
    }

    /// Takes identity and times from a header (or document); false when it has no
    /// `sessionId`.
    fn header(&mut self, v: &Value) -> bool {
        let Some(id) = v.get("sessionId").and_then(Value::as_str).filter(|s| !s.is_empty()) else { return false };
        self.id = Some(id.to_string());
        self.start = v.get("startTime").and_then(Timestamp::from_json);
        self.times.extend(self.start);
        self.touch(v);
        true
    }

    fn touch(&mut self, v: &Value) {
        self.times.extend(v.get("lastUpdated").and_then(Timestamp::from_json));
    }

    /// A message: replaces the collected one with the same `id` in place, else appended.
    fn upsert(&mut self, m: Value) {
        if !is_message(&m) {
            return;
        }
        let id = m.get("id").and_then(Value::as_str).filter(|s| !s.is_empty());
        if let Some(slot) = id.and_then(|id| self.messages.iter_mut().rev().find(|x| x.get("id").and_then(Value::as_str) == Some(id))) {
            *slot = m;
        } else {
            self.messages.push(m);
        }
    }
}

/// Gemini's synthetic `<session_context>` user message and nothing else.
fn is_preamble(m: &Value) -> bool {
    let content = m.get("content").unwrap_or(&Value::Null);
    m.get("type").and_then(Value::as_str) == Some("user")
        && gemini_chat::function_responses(content).next().is_none()
        && gemini_chat::parts_text(content).trim_start().starts_with("<session_context>")
}

fn is_message(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str).is_some_and(|t| !t.is_empty())
}

/// The JSONL replay: lines before the header are ignored, then one function per line
/// kind.
#[derive(Default)]
struct Replay {
    started: bool,
    chat: Chat,
}

impl Replay {
    fn line(&mut self, v: Value) {
        if !self.started {
            self.started = self.chat.header(&v);
            return;
        }
        if let Some(set) = v.get("$set") {
            self.set(set);
        } else if let Some(to) = v.get("$rewindTo") {
            self.rewind(to);
        } else {
            self.chat.upsert(v);
        }
    }

    /// `$set`: `lastUpdated` widens the time; a `messages` array replaces the list.
    fn set(&mut self, set: &Value) {
        self.chat.touch(set);
        let Some(list) = set.get("messages").and_then(Value::as_array) else { return };
        if list.is_empty() {
            self.chat.messages.clear();
        } else if list.iter().any(is_message) {
            self.chat.messages.clear();
            for m in list {
                self.chat.upsert(m.clone());
            }
        }
    }

    /// `$rewindTo`: the last message with that id and everything after it go.
    fn rewind(&mut self, to: &Value) {
        let Some(id) = to.as_str() else { return };
        if let Some(at) = self.chat.messages.iter().rposition(|m| m.get("id").and_then(Value::as_str) == Some(id)) {
            self.chat.messages.truncate(at);
        }
    }
}

/// How much of a `.jsonl` is read to find its header.
const HEAD_BYTES: u64 = 64 << 10;

/// Whether a `.jsonl` beside this legacy file holds the same session.
fn resumed_as_jsonl(path: &Path, id: &str) -> bool {
    let Some(dir) = path.parent() else { return false };
    deja_core::discover::list(dir).into_iter().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "jsonl") && p.is_file()).any(
        |p| {
            // The header is the first line with a sessionId; it sits at the top, so only the
            // file's head is read.
            let mut bytes = Vec::new();
            let Ok(file) = std::fs::File::open(&p) else { return false };
            if std::io::Read::read_to_end(&mut std::io::Read::take(file, HEAD_BYTES), &mut bytes).is_err() {
                return false;
            }
            bytes
                .split(|b| *b == b'\n')
                .take(8)
                .filter_map(|l| serde_json::from_slice::<Value>(l.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(l)).ok())
                .find_map(|v| v.get("sessionId").and_then(Value::as_str).map(str::to_string))
                .is_some_and(|s| s == id)
        },
    )
}

/// The project-id directory a chat file belongs to (`tmp/<project-id>/chats/…`) and,
/// for a sub-agent chat (`chats/<parent>/<sid>.jsonl`), the parent's name.
fn placement(path: &Path) -> (Option<PathBuf>, Option<String>) {
    let mut dir = path.parent();
    let mut nested = None;
    while let Some(d) = dir {
        if d.file_name().is_some_and(|n| n == "chats") {
            return (d.parent().map(Path::to_path_buf), nested);
        }
        nested = d.file_name().and_then(|n| n.to_str()).map(str::to_string);
        dir = d.parent();
    }
    (None, None)
}

/// The working directory of a project-id directory: `projects.json` beside `tmp/`
/// (reverse lookup), else its `.project_root`, else the id itself.
fn project_of(project_dir: &Path) -> Option<String> {
    let pid = project_dir.file_name()?.to_str()?.to_string();
    let projects = project_dir.parent().and_then(Path::parent).map(|home| home.join("projects.json"));
    if let Some(doc) = projects.and_then(|p| std::fs::read(p).ok()).and_then(|b| serde_json::from_slice::<Value>(&b).ok()) {
        if let Some(map) = doc.get("projects").and_then(Value::as_object) {
            if let Some((path, _)) = map.iter().find(|(_, v)| v.as_str() == Some(pid.as_str())) {
                return Some(path.clone());
            }
        }
    }
    if let Ok(root) = std::fs::read_to_string(project_dir.join(".project_root")) {
        let root = root.trim();
        if !root.is_empty() {
            return Some(root.to_string());
        }
    }
    Some(pid)
}

fn build(src: &SourceRef, chat: &Chat, id: &str, opts: &ParseOptions) -> Option<deja_core::Session> {
    let mut b = SessionBuilder::new(ID, id, src.clone());
    for t in &chat.times {
        b.touch(Some(*t));
    }
    let (project_dir, parent) = placement(&src.path);
    b.session_mut().project = project_dir.as_deref().and_then(project_of);
    if let Some(parent) = parent {
        b.session_mut().parent = Some(parent);
        b.session_mut().kind = Some("subagent".to_string());
    }
    for m in &chat.messages {
        let time = m.get("timestamp").and_then(Timestamp::from_json).or(chat.start);
        let content = m.get("content").unwrap_or(&Value::Null);
        match m.get("type").and_then(Value::as_str).unwrap_or("") {
            "user" => user(&mut b, content, time),
            "gemini" | "model" => model(&mut b, m, content, time, opts),
            // info, error, warning: CLI noise.
            _ => {}
        }
    }
    b.finish()
}

/// A `user` record: typed text, and tool results repeated as `functionResponse` parts.
fn user(b: &mut SessionBuilder, content: &Value, time: Option<Timestamp>) {
    let text = gemini_chat::parts_text(content);
    if !text.trim().is_empty() {
        b.push(Turn::new(Role::User, text).at(time));
    }
    for resp in gemini_chat::function_responses(content) {
        let (output, exit) = gemini_chat::response_output(resp);
        let exit = exit.map(ExitStatus::Code);
        match gemini_chat::part_id(resp) {
            Some(id) if b.call_mut(id).is_some() => {
                // The call's own `result` normally got here first.
                if b.call_mut(id).is_some_and(|t| t.text.is_empty()) {
                    b.complete_call(id, &output, false, exit, time);
                } else {
                    b.touch(time);
                }
            }
            id => {
                let idx = b.push_orphan_result(id.unwrap_or(""), &output, false, exit, time);
                if let Some(tool) = idx.and_then(|i| b.session_mut().turns.get_mut(i)).and_then(|t| t.tool.as_mut()) {
                    tool.name = resp.get("name").and_then(Value::as_str).unwrap_or("").to_string();
                }
            }
        }
    }
}

/// A `gemini` record: the answer, its reasoning, and its tool calls with their results.
fn model(b: &mut SessionBuilder, m: &Value, content: &Value, time: Option<Timestamp>, opts: &ParseOptions) {
    if opts.include_reasoning {
        let mut thoughts = thoughts_text(m.get("thoughts"));
        let in_parts = gemini_chat::thought_text(content);
        if thoughts.is_empty() {
            thoughts = in_parts;
        }
        if !thoughts.is_empty() {
            b.push(Turn::new(Role::Reasoning, thoughts).at(time));
        }
    }
    let text = gemini_chat::parts_text(content);
    if !text.trim().is_empty() {
        b.push(Turn::new(Role::Assistant, text).at(time));
    }
    let tool_calls = m.get("toolCalls").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    for call in gemini_chat::function_calls(content) {
        // A resumed chat's `$set.messages` snapshot holds each call twice: as a
        // `functionCall` part and in `toolCalls[]` with its result; the latter is kept.
        let id = gemini_chat::part_id(call);
        if id.is_some() && tool_calls.iter().any(|t| gemini_chat::part_id(t) == id) {
            continue;
        }
        let name = call.get("name").and_then(Value::as_str).unwrap_or("");
        let turn = gemini_chat::call_turn(&DIALECT, name, call.get("args").unwrap_or(&Value::Null)).at(time);
        b.push_call(gemini_chat::part_id(call), turn);
    }
    for call in tool_calls {
        tool_call(b, call, time);
    }
}

/// One `toolCalls[]` entry: the call with its result folded in.
fn tool_call(b: &mut SessionBuilder, call: &Value, time: Option<Timestamp>) {
    let name = call.get("name").and_then(Value::as_str).unwrap_or("");
    let at = call.get("timestamp").and_then(Timestamp::from_json).or(time);
    let mut turn = gemini_chat::call_turn(&DIALECT, name, call.get("args").unwrap_or(&Value::Null)).at(at);
    absolute_paths(&mut turn, call.get("resultDisplay"));
    let id = gemini_chat::part_id(call).map(str::to_string);
    let idx = b.push_call(id.as_deref(), turn);
    let mut output = String::new();
    let mut exit = None;
    for resp in call.get("result").and_then(Value::as_array).into_iter().flatten().filter_map(|r| r.get("functionResponse")) {
        let (text, code) = gemini_chat::response_output(resp);
        if !text.is_empty() {
            if !output.is_empty() {
                output.push('\n');
            }
            output.push_str(&text);
        }
        exit = exit.or(code);
    }
    if output.is_empty() {
        if let Some(display) = call.get("resultDisplay").and_then(Value::as_str) {
            output = display.trim().to_string();
        }
    }
    let failed = matches!(call.get("status").and_then(Value::as_str), Some("error" | "cancelled"));
    let exit = exit.map(ExitStatus::Code);
    match id.as_deref() {
        Some(id) => {
            b.complete_call(id, &output, failed, exit, at);
        }
        None => {
            // No id to fold by: fill the turn just pushed.
            if let Some(turn) = b.session_mut().turns.get_mut(idx) {
                turn.text = output;
                if let Some(tool) = turn.tool.as_mut() {
                    tool.is_error = failed || exit.as_ref().is_some_and(|e| !e.succeeded());
                    tool.exit = exit;
                }
            }
        }
    }
}

/// The model may name a file relative to the working directory (`write_file` with
/// `file_path: "notes.txt"`); the file tools' `resultDisplay` (`{fileName, filePath,
/// fileDiff, …}`) holds the absolute path, which replaces the relative one it ends with.
fn absolute_paths(turn: &mut Turn, display: Option<&Value>) {
    let Some(abs) = display.and_then(|d| d.get("filePath")).and_then(Value::as_str) else { return };
    if !Path::new(abs).is_absolute() && !abs.starts_with('/') {
        return;
    }
    let resolves = |rel: &str| {
        !rel.is_empty() && !Path::new(rel).is_absolute() && !rel.starts_with('/') && Path::new(abs).ends_with(rel.trim_start_matches("./"))
    };
    for f in turn.files.iter_mut().filter(|f| resolves(&f.path)) {
        f.path = abs.to_string();
    }
    if let Some(e) = turn.edit.as_mut().filter(|e| resolves(&e.path)) {
        e.path = abs.to_string();
    }
}

/// `thoughts[]`: `{subject, description}` objects (or strings), one paragraph each.
fn thoughts_text(v: Option<&Value>) -> String {
    let Some(items) = v.and_then(Value::as_array) else { return String::new() };
    items
        .iter()
        .filter_map(|t| match t {
            Value::String(s) => Some(s.clone()),
            Value::Object(_) => {
                let s = [t.get("subject"), t.get("description"), t.get("text")]
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .filter(|s| !s.trim().is_empty())
                    .collect::<Vec<_>>()
                    .join(": ");
                (!s.is_empty()).then_some(s)
            }
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

mod synth;

impl deja_core::SynthWriter for GeminiFormat {
    fn write(&self, home: &std::path::Path, session: &deja_core::SynthSession) -> std::io::Result<std::path::PathBuf> {
        synth::write(home, session)
    }
}

//! Junie (`junie`), JetBrains' coding agent: the `junie` CLI and the agent the IDE's AI
//! Assistant runs share `${JUNIE_HOME:-~/.junie}/sessions/`. `DEJA_JUNIE_ROOT` names that
//! `sessions` directory. It holds `index.jsonl` (one line per session: `sessionId`,
//! `createdAt`, `projectDir`, `taskName`) and one directory per session with the event
//! log `events.jsonl` (beside it `state.json`, the agent's last state; `transcript.md`, a
//! rendering of the log, is never read). No family reader writes this shape.
//!
//! The log's `SessionA2uxEvent`s are UI blocks **updated in place**: each carries a
//! `stepId`, and the last update of a step wins (a finished task replays every block as
//! `COMPLETED`, folding into the step it repeats). So the log is folded whole before any
//! turn is emitted, in first-appearance order, and the source is not append-only: a tail
//! read would emit a later update of an earlier step as a new turn.
//!
//! | `kind` / `event.agentEvent.kind` | Turn | rule |
//! | --- | --- | --- |
//! | `UserPromptEvent` | `User` | `presentablePrompt`, else `prompt`; `<additional_context>` hook blocks are injected text |
//! | `MarkdownBlockUpdatedEvent` | `Assistant` | `text`, else the step's `textChunk`s accumulated |
//! | `ResultBlockUpdatedEvent` | `Assistant` | `result` |
//! | `TerminalBlockUpdatedEvent` | `ToolCall` | `command`, `exitCode` → exit, `status` `FAILED` → `is_error`, `output` as its text |
//! | `ViewFilesBlockUpdatedEvent` | `ToolCall` | `files[].relativePath` (absolute in practice) or `path` → file reads |
//! | `FileChangesBlockUpdatedEvent` | `ToolCall` per change | path from `afterRelativePath`/`afterPath`/`beforeRelativePath`/`beforePath`; `beforeContent.text` and `afterContent.text` with common head and tail lines stripped → the edit (old span, new text); no `beforeContent` → a file write |
//! | `AgentTaskNameUpdatedEvent` | — | `name`: the title (the first one), else index `taskName` |
//! | `CurrentDirectoryUpdatedEvent` | — | `currentDirectory`: the project when the index has no `projectDir` |
//! | `ContextCompactionBlockUpdatedEvent`, thoughts, tool titles, status lines, others | skipped | markers and UI talking |
//! | headless run (no `UserPromptEvent` at all) | `User` | from `state.json`: `event.agentEvent.blob` (a JSON string) → `lastAgentState.issue.description`; at the index `createdAt` or the first event, whichever is earlier |
//! | malformed or torn line | skipped | counted in the parse stats |
//!
//! Session: id = the session directory name; project = index `projectDir` (kept whole).

use std::collections::HashMap;
use std::path::Path;

use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::model::{cap_text, MAX_EDIT_BYTES};
use deja_core::read::{for_each_json_line, parse_json_document, read_source};
use deja_core::store::{Files, Layout, Part, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Edit, ExitStatus, FileAction, FileTouch, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions,
    ParseStats, Role, SessionBuilder, SessionSink, SourceRef, Timestamp, ToolUse, Turn,
};
use serde_json::Value;

const ID: &str = "junie";

/// The Junie adapter.
pub struct JunieFormat;

deja_core::inventory::submit!(deja_core::Registration(&JunieFormat));

/// Junie's hooks answer inside `<additional_context>…</additional_context>`, put before the
/// prompt or the tool result: never the person's words.
static INJECTED: InjectedText = InjectedText { blocks: &["additional_context"], ..InjectedText::NONE };

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Junie",
    container: "JSONL event log of UI blocks updated in place, one directory per session, plus a sessions index",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("${JUNIE_HOME:-~/.junie}/sessions")],
        // `state.json` beside each log and the root's `index.jsonl` hold the title and project.
        layout: Layout::Files(Files::new("*/events.jsonl").parts(&[Part::Sibling("state.json"), Part::InRoot("index.jsonl")])),
    }]),
    needs: &[],
    format_summary: "Junie keeps `${JUNIE_HOME:-~/.junie}/sessions/index.jsonl` (session id, creation time, project dir, task \
        name) and one directory per session with `events.jsonl`: `UserPromptEvent` lines for prompts, and `SessionA2uxEvent` UI \
        blocks (markdown answers, results, terminal runs with command, exit code and output, viewed files, file changes with \
        before/after contents) that are updated in place by `stepId`, so the log is folded (last update wins) before turns \
        are emitted. File changes become edits by stripping the lines before and after common to both contents. A headless \
        run has no prompt event: its task comes from `state.json`. Hook answers in `<additional_context>` blocks are not speech.",
    injected: &INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "`mcpServers.deja` in $JUNIE_HOME/mcp/mcp.json; offered as `mcp_deja_deja` when Junie's capability pre-pass picks it",
        ),
        auto_recall: Capability::Planned(
            "junie-auto: Claude-schema hooks in $JUNIE_HOME/config.json — UserPromptSubmit runs `hook-session-start --once` and \
             `hook-prompt`, PreToolUse on `Bash|Read|Edit` runs `hook-tool`; output arrives in `<additional_context>`",
        ),
        skill: Capability::Planned("shared ~/.agents/skills/deja-history/SKILL.md, read beside Junie's own skills/"),
        command: Capability::Planned("$JUNIE_HOME/commands/deja.md → `/deja`"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Always(ResumeSpec::in_dir(&["junie", "--session-id", "{id}", "--resume"])),
        handoff: Handoff::Exec(&["junie", "{prompt}"]),
    },
};

impl HarnessFormat for JunieFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::JunieWiring)
    }

    fn parse(&self, src: &SourceRef, _opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let bytes = read_source(&src.path, &mut stats)?.bytes;
        let dir = src.path.parent();
        let id = dir.and_then(Path::file_name).and_then(|n| n.to_str()).unwrap_or(ID).to_string();
        let mut log = Log::default();
        for_each_json_line(&bytes, 0, &src.path, &mut stats, |_, v| log.event(&v));
        let index = dir.and_then(Path::parent).map(|root| index_entry(&root.join("index.jsonl"), &id)).unwrap_or_default();
        let mut b = SessionBuilder::new(ID, id, src.clone());
        if !log.saw_prompt {
            // A headless run (`junie "task"`): the task is only in the agent's state.
            let task = dir.and_then(|d| headless_task(&d.join("state.json")));
            let time = [index.created, log.first_time].into_iter().flatten().min();
            if let Some(task) = task {
                b.push(Turn::new(Role::User, task).at(time));
            }
        }
        log.emit(&mut b);
        b.touch(index.created);
        let s = b.session_mut();
        s.title = log.title.or(index.task_name);
        s.project = index.project_dir.or(log.current_dir);
        if let Some(s) = b.finish() {
            out.session(s);
        }
        Ok(stats)
    }

    fn synthetic(&self) -> Option<&dyn deja_core::SynthWriter> {
        Some(self)
    }
}

/// What `index.jsonl` says about one session.
#[derive(Debug, Default)]
struct IndexEntry {
    created: Option<Timestamp>,
    project_dir: Option<String>,
    task_name: Option<String>,
}

fn index_entry(path: &Path, id: &str) -> IndexEntry {
    let mut stats = ParseStats::default();
    let Ok(bytes) = read_source(path, &mut stats) else { return IndexEntry::default() };
    let mut entry = IndexEntry::default();
    for_each_json_line(&bytes.bytes, 0, path, &mut stats, |_, v| {
        if text(&v, "sessionId") == Some(id) {
            // A later line for the same session is the newer record.
            entry = IndexEntry {
                created: v.get("createdAt").and_then(Timestamp::from_json),
                project_dir: text(&v, "projectDir").map(str::to_string),
                task_name: text(&v, "taskName").map(|t| t.trim().to_string()).filter(|t| !t.is_empty()),
            };
        }
    });
    entry
}

/// `state.json` → `event.agentEvent.blob` (a JSON string) → `lastAgentState.issue.description`.
fn headless_task(path: &Path) -> Option<String> {
    let mut stats = ParseStats::default();
    let bytes = read_source(path, &mut stats).ok()?;
    let doc = parse_json_document(&bytes.bytes, path).ok()?;
    let blob: Value = serde_json::from_str(doc.get("event")?.get("agentEvent")?.get("blob")?.as_str()?).ok()?;
    let task = blob.get("lastAgentState")?.get("issue")?.get("description")?.as_str()?.trim();
    (!task.is_empty()).then(|| task.to_string())
}

/// One item of the folded log, in first-appearance order.
enum Item {
    Prompt(Box<Turn>),
    Step(String),
}

/// A step's block: its latest update, first-appearance time and accumulated chunks.
struct Step {
    block: Value,
    time: Option<Timestamp>,
    chunks: String,
}

#[derive(Default)]
struct Log {
    items: Vec<Item>,
    steps: HashMap<String, Step>,
    saw_prompt: bool,
    first_time: Option<Timestamp>,
    last_time: Option<Timestamp>,
    title: Option<String>,
    current_dir: Option<String>,
    /// Blocks without a `stepId` are their own steps.
    anonymous: u32,
}

impl Log {
    fn event(&mut self, v: &Value) {
        let time = v.get("timestampMs").and_then(Timestamp::from_json);
        if let Some(t) = time.filter(|t| t.0 != 0) {
            self.first_time = Some(self.first_time.map_or(t, |f| f.min(t)));
            self.last_time = Some(self.last_time.map_or(t, |l| l.max(t)));
        }
        match text(v, "kind") {
            Some("UserPromptEvent") => {
                self.saw_prompt = true;
                let prompt = text(v, "presentablePrompt").or_else(|| text(v, "prompt")).unwrap_or("");
                self.items.push(Item::Prompt(Box::new(Turn::new(Role::User, prompt.trim()).at(time))));
            }
            Some("SessionA2uxEvent") => {
                if let Some(block) = v.get("event").and_then(|e| e.get("agentEvent")) {
                    self.block(block, time);
                }
            }
            _ => self.metadata(v),
        }
    }

    /// Task names and directories may arrive as their own events or as blocks.
    fn metadata(&mut self, v: &Value) {
        match text(v, "kind") {
            Some("AgentTaskNameUpdatedEvent") if self.title.is_none() => {
                self.title = text(v, "name").map(|n| n.trim().to_string()).filter(|n| !n.is_empty());
            }
            Some("CurrentDirectoryUpdatedEvent") if self.current_dir.is_none() => {
                self.current_dir = text(v, "currentDirectory").map(str::to_string);
            }
            _ => {}
        }
    }

    fn block(&mut self, block: &Value, time: Option<Timestamp>) {
        let kind = text(block, "kind").unwrap_or("");
        if matches!(kind, "AgentTaskNameUpdatedEvent" | "CurrentDirectoryUpdatedEvent") {
            return self.metadata(block);
        }
        if !matches!(
            kind,
            "MarkdownBlockUpdatedEvent"
                | "ResultBlockUpdatedEvent"
                | "TerminalBlockUpdatedEvent"
                | "ViewFilesBlockUpdatedEvent"
                | "FileChangesBlockUpdatedEvent"
        ) {
            // Compaction markers, thoughts, tool titles, status lines.
            return;
        }
        let key = match text(block, "stepId") {
            Some(id) => format!("{kind}\u{0}{id}"),
            None => {
                self.anonymous += 1;
                format!("\u{0}{}", self.anonymous)
            }
        };
        let chunk = text(block, "textChunk").unwrap_or("").to_string();
        match self.steps.get_mut(&key) {
            Some(step) => {
                step.block = block.clone();
                step.chunks.push_str(&chunk);
            }
            None => {
                self.items.push(Item::Step(key.clone()));
                self.steps.insert(key, Step { block: block.clone(), time, chunks: chunk });
            }
        }
    }

    fn emit(&mut self, b: &mut SessionBuilder) {
        b.touch(self.first_time);
        b.touch(self.last_time);
        for item in std::mem::take(&mut self.items) {
            match item {
                Item::Prompt(turn) => {
                    b.push(*turn);
                }
                Item::Step(key) => {
                    if let Some(step) = self.steps.remove(&key) {
                        for turn in step_turns(&step) {
                            b.push(turn);
                        }
                    }
                }
            }
        }
    }
}

/// The turns one folded block makes.
fn step_turns(step: &Step) -> Vec<Turn> {
    let block = &step.block;
    let time = step.time;
    match text(block, "kind").unwrap_or("") {
        "MarkdownBlockUpdatedEvent" => {
            let said = text(block, "text").unwrap_or(&step.chunks);
            vec![Turn::new(Role::Assistant, said.trim()).at(time)]
        }
        "ResultBlockUpdatedEvent" => vec![Turn::new(Role::Assistant, text(block, "result").unwrap_or("").trim()).at(time)],
        "TerminalBlockUpdatedEvent" => {
            let exit = block.get("exitCode").and_then(Value::as_i64).map(ExitStatus::Code);
            let failed = text(block, "status") == Some("FAILED") || exit.as_ref().is_some_and(|e| !e.succeeded());
            let mut turn = Turn::new(Role::ToolCall, text(block, "output").unwrap_or("").trim()).at(time);
            turn.tool = Some(ToolUse {
                name: "terminal".into(),
                command: text(block, "command").map(|c| c.trim().to_string()),
                exit,
                is_error: failed,
                call_id: None,
            });
            vec![turn]
        }
        "ViewFilesBlockUpdatedEvent" => {
            let mut turn = Turn::new(Role::ToolCall, "").at(time);
            turn.tool = Some(ToolUse { name: "view_files".into(), ..ToolUse::default() });
            for f in block.get("files").and_then(Value::as_array).into_iter().flatten() {
                if let Some(path) = text(f, "relativePath").or_else(|| text(f, "path")) {
                    turn.files.push(FileTouch { path: path.to_string(), action: FileAction::Read });
                }
            }
            vec![turn]
        }
        "FileChangesBlockUpdatedEvent" => {
            block.get("changes").and_then(Value::as_array).into_iter().flatten().filter_map(|c| change_turn(c, time)).collect()
        }
        _ => Vec::new(),
    }
}

/// One file change: an edit (the changed run of lines, old and new) or, for a new file, a
/// write.
fn change_turn(change: &Value, time: Option<Timestamp>) -> Option<Turn> {
    let path = ["afterRelativePath", "afterPath", "beforeRelativePath", "beforePath"].iter().find_map(|k| text(change, k))?;
    let before = change.get("beforeContent").and_then(|c| c.get("text")).and_then(Value::as_str);
    let after = change.get("afterContent").and_then(|c| c.get("text")).and_then(Value::as_str).unwrap_or("");
    let mut turn = Turn::new(Role::ToolCall, "").at(time);
    turn.tool = Some(ToolUse { name: "file_changes".into(), ..ToolUse::default() });
    match before {
        Some(before) => {
            turn.files.push(FileTouch { path: path.to_string(), action: FileAction::Edit });
            let (old, new) = changed_run(before, after);
            if !old.is_empty() {
                let (mut old, mut new) = (old, new);
                cap_text(&mut old, MAX_EDIT_BYTES);
                cap_text(&mut new, MAX_EDIT_BYTES);
                turn.edit = Some(Edit { path: path.to_string(), old, new: Some(new) });
            }
        }
        None => turn.files.push(FileTouch { path: path.to_string(), action: FileAction::Write }),
    }
    Some(turn)
}

/// The lines of `before` and `after` between their common head and common tail.
pub fn changed_run(before: &str, after: &str) -> (String, String) {
    let b: Vec<&str> = before.lines().collect();
    let a: Vec<&str> = after.lines().collect();
    let head = b.iter().zip(&a).take_while(|(x, y)| x == y).count();
    let tail = b[head..].iter().rev().zip(a[head..].iter().rev()).take_while(|(x, y)| x == y).count();
    (b[head..b.len() - tail].join("\n"), a[head..a.len() - tail].join("\n"))
}

/// A non-empty string field.
fn text<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

mod synth;
mod wiring;

impl deja_core::SynthWriter for JunieFormat {
    fn write(&self, home: &std::path::Path, session: &deja_core::SynthSession) -> std::io::Result<std::path::PathBuf> {
        synth::write(home, session)
    }
}

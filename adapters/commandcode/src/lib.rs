//! Command Code (`commandcode`): one JSONL transcript per session under
//! `~/.commandcode/projects/<encoded-cwd>/<session>.jsonl` (Claude-Code-style project
//! directories, a lossy slug of the cwd), beside `<session>.meta.json`,
//! `<session>.checkpoints.jsonl` (snapshots), `<session>.prompts.jsonl` (prompt history) and
//! `<session>.v2.bak` (a pre-migration backup), none of which are transcripts.
//!
//! Two generations, read by this adapter itself (their envelopes are not Claude Code's
//! records: no `uuid` chain, `type:"message"` around the message, a `session` header, a
//! `compaction` line). The content blocks are Claude's (`text`, `tool_use`,
//! `tool_result`); tool calls are decoded with the Claude family's `tool_call_turn` under
//! Command Code's tool names, plus what its tools add (`args[]`, `paths[]`).
//!
//! | line | Turn | rule |
//! | --- | --- | --- |
//! | v3 `session` header (`version`, `id`, `timestamp`, `cwd`) | — | id and cwd |
//! | v3 `message`, `message.role:"user"`, `text` blocks (or a string) | `User` | |
//! | v3 `message`, user `tool_result` blocks | folded into their call | a leading `Exit code: N` / `Exit code: N (<meaning>)` line → exit N, cut; none → no code; unpaired → `ToolOutput` |
//! | v3 `message`, `message.role:"assistant"`, `text` blocks | `Assistant` | |
//! | v3 assistant `thinking` blocks | `Reasoning` | only with `include_reasoning` |
//! | v3 assistant `tool_use` blocks | `ToolCall` | tool table below |
//! | v3 `compaction` (`summary`, `firstKeptEntryId`) | `Summary` | the turns above it stay |
//! | v2 flat line (`role`, `content`, `timestamp`, `sessionId`), role `user`/`assistant` | `User` / `Assistant` | |
//! | v2 flat line, any other role | `ToolOutput` | where a command's error text lives |
//! | other types, malformed or torn lines | skipped | the latter counted in the parse stats |
//!
//! | tool | input | Turn |
//! | --- | --- | --- |
//! | `shell_command`, `monitor_command` | `command` + optional `args[]` | `tool.command` = command and args joined with spaces, as the client shows it |
//! | `powershell` | `command` | `tool.command` |
//! | `read_file` | `file_path`, or `paths[]` (glob entries ignored) | `files` (read) |
//! | `read_multiple_files` | `paths[]` | `files` (read) |
//! | `edit_file` | `file_path`, `old_string`, `new_string` | `files` (edit), `edit` |
//! | `write_file` | `file_path`, `content` | `files` (write) |
//!
//! The session id is the file stem, replaced by the v3 header's `id`; the project is the
//! header's `cwd` (or a `cwd` on an early line), absolute paths only, else the project
//! directory's name decoded on disk. `DEJA_COMMANDCODE_ROOT` names the `projects` root.
//!
//! A read of a tail goes on from the `cwd` the read before found (`TailState::cwd`): the
//! header and the early lines that name it are behind the resume point.

use std::path::{Path, PathBuf};

use deja_core::exit::{split_exit_code, ExitLine};
use deja_core::family::claude_jsonl::tool_call_turn;
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::project::{dash_fallback_name, decode_dash_path};
use deja_core::read::for_each_source_line;
use deja_core::store::{Files, Layout, Root, Store, StoreSpec};
use deja_core::synth::dash_encode;
use deja_core::work::ToolMap;
use deja_core::{
    Capabilities, Capability, ExitStatus, FileAction, FileTouch, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions,
    ParseStats, Role, Session, SessionBuilder, SessionSink, SourceRef, SynthSession, SynthTurn, SynthWriter, TailState, Timestamp, Turn,
};
use serde_json::{json, Value};

mod wiring;

const ID: &str = "commandcode";

/// `<encoded-cwd>/<session>.jsonl`; leave room for nesting the page does not show.
const MAX_DEPTH: usize = 4;

/// Command Code's tool names (1.73–1.77).
pub const COMMANDCODE_TOOLS: ToolMap = ToolMap {
    shell: &["shell_command", "monitor_command", "powershell"],
    read: &["read_file", "read_multiple_files"],
    edit: &["edit_file"],
    write: &["write_file"],
};

/// The Command Code adapter.
pub struct CommandCodeFormat;

deja_core::inventory::submit!(deja_core::Registration(&CommandCodeFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Command Code",
    container: "JSONL, one file per session (v3: header + message envelopes; v2: flat lines)",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("~/.commandcode/projects")],
        // The client's own transcript filter (`isSessionTranscriptFileName`).
        layout: Layout::Files(
            Files::new("**/*.jsonl").depth(MAX_DEPTH).exclude(&["*.checkpoints.*", "*.prompts.*", "*.v2.bak*"]).append_only(),
        ),
    }]),
    needs: &[],
    format_summary: "Command Code writes one JSONL transcript per session under `~/.commandcode/projects/<encoded-cwd>/`. \
        v3 files (client 1.73+) open with a `session` header (`id`, `cwd`) followed by `message` lines wrapping \
        Claude-style content blocks (`text`, `tool_use`, `tool_result`) and `compaction` lines carrying a summary; v2 \
        files (older, migrated in place on open) hold flat `{role, content, timestamp}` lines. Tool calls use Command \
        Code's names (`shell_command` with `args[]`, `read_file` with `paths[]`, `edit_file`, `write_file`…); a failed \
        command's result opens with `Exit code: N`. `.checkpoints.`, `.prompts.` and `.v2.bak` files beside the \
        transcripts are not read.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned("MCP server entry in `~/.commandcode/mcp.json`"),
        auto_recall: Capability::Planned(
            "`hooks` in `~/.commandcode/settings.json` (SessionStart, PreToolUse on display names) plus a `~/.commandcode/mods/deja.ts` mod",
        ),
        skill: Capability::Planned("`~/.commandcode/skills/deja-history/SKILL.md`"),
        command: Capability::Planned("`~/.commandcode/commands/deja.md` → `/deja`"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::Always(ResumeSpec::in_dir(&["cmd", "--resume", "{id}"]).or_elsewhere(&["cmd", "--session", "{id}"])), handoff: Handoff::Paste("the page says exec but names no start-with-prompt argument") },
};

impl HarnessFormat for CommandCodeFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::CommandCodeWiring)
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let mut file = FileParse::new(src, opts);
        for_each_source_line(src, &mut stats, &[], |_offset, v| file.line(&v))?;
        stats.tail = Some(TailState { cwd: file.cwd.clone(), ..TailState::default() });
        if let Some(s) = file.finish() {
            out.session(s);
        }
        Ok(stats)
    }

    fn synthetic(&self) -> Option<&dyn SynthWriter> {
        Some(self)
    }
}

impl SynthWriter for CommandCodeFormat {
    /// Writes a v3 transcript: the header, then one `message` line per turn; a failed
    /// command's result opens with `Exit code: N` as the client writes it.
    fn write(&self, home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
        let dir = home.join(".commandcode/projects").join(dash_encode(&session.project));
        std::fs::create_dir_all(&dir)?;
        let header =
            json!({"type": "session", "version": 3, "id": session.id, "timestamp": session.started.to_rfc3339(), "cwd": session.project});
        let mut lines = vec![header];
        let message = |role: &str, time: Timestamp, content: Value| json!({"type": "message", "timestamp": time.to_rfc3339(), "message": {"role": role, "content": content}});
        for (i, turn) in session.turns.iter().enumerate() {
            let id = format!("c{i}");
            let mut call = |time: Timestamp, name: &str, input: Value, result: String| {
                lines.push(message("assistant", time, json!([{"type": "tool_use", "id": id, "name": name, "input": input}])));
                lines.push(message("user", time, json!([{"type": "tool_result", "tool_use_id": id, "content": result}])));
            };
            match turn {
                SynthTurn::User { text, time } => lines.push(message("user", *time, json!([{"type": "text", "text": text}]))),
                SynthTurn::Assistant { text, time } => lines.push(message("assistant", *time, json!([{"type": "text", "text": text}]))),
                SynthTurn::Reasoning { text, time } => {
                    lines.push(message("assistant", *time, json!([{"type": "thinking", "thinking": text}])))
                }
                SynthTurn::Shell { command, output, exit_code, time } => {
                    let result = if *exit_code == 0 { output.clone() } else { format!("Exit code: {exit_code}\n{output}") };
                    call(*time, "shell_command", json!({"command": command}), result);
                }
                SynthTurn::Read { path, output, time } => call(*time, "read_file", json!({"file_path": path}), output.clone()),
                SynthTurn::Edit { path, old, new, time } => {
                    call(*time, "edit_file", json!({"file_path": path, "old_string": old, "new_string": new}), format!("Edited {path}"))
                }
            }
        }
        let path = dir.join(format!("{}.jsonl", session.id));
        std::fs::write(&path, lines.iter().map(|l| format!("{l}\n")).collect::<String>())?;
        Ok(path)
    }
}

/// One session being read from a file.
struct FileParse<'a> {
    src: &'a SourceRef,
    opts: &'a ParseOptions,
    b: SessionBuilder,
    header_id: Option<String>,
    cwd: Option<String>,
}

impl<'a> FileParse<'a> {
    fn new(src: &'a SourceRef, opts: &'a ParseOptions) -> Self {
        let stem = src.path.file_stem().and_then(|s| s.to_str()).unwrap_or("").to_string();
        // A resumed read keeps the id the first read gave (the header is behind it).
        let id = src.resume.as_ref().map_or(stem, |r| r.session_id.clone());
        let cwd = src.resume.as_ref().and_then(|r| r.state.cwd.clone());
        FileParse { src, opts, b: SessionBuilder::new(ID, id, src.clone()), header_id: None, cwd }
    }

    fn line(&mut self, v: &Value) {
        if !v.is_object() {
            return;
        }
        let time = v.get("timestamp").and_then(Timestamp::from_json);
        if self.cwd.is_none() {
            self.cwd = text(v, "cwd").filter(|c| is_absolute(c)).map(str::to_string);
        }
        match text(v, "type") {
            Some("session") => self.header(v, time),
            Some("message") => {
                let Some(m) = v.get("message") else { return self.b.touch(time) };
                match text(m, "role") {
                    Some("user") => self.user(m, time),
                    Some("assistant") => self.assistant(m, time),
                    _ => self.b.touch(time),
                }
            }
            Some("compaction") => self.compaction(v, time),
            Some(_) => self.b.touch(time),
            None => self.v2_line(v, time),
        }
    }

    fn header(&mut self, v: &Value, time: Option<Timestamp>) {
        self.b.touch(time);
        if self.header_id.is_none() {
            self.header_id = text(v, "id").map(str::to_string);
        }
    }

    fn user(&mut self, m: &Value, time: Option<Timestamp>) {
        let mut said = Vec::new();
        match m.get("content") {
            Some(Value::String(s)) => said.push(s.clone()),
            Some(Value::Array(blocks)) => {
                for block in blocks {
                    match text(block, "type") {
                        Some("tool_result") => self.tool_result(block, time),
                        _ => said.extend(text(block, "text").map(str::to_string)),
                    }
                }
            }
            _ => {}
        }
        if said.is_empty() {
            self.b.touch(time);
        } else {
            self.b.push(Turn::new(Role::User, said.join("\n")).at(time));
        }
    }

    fn assistant(&mut self, m: &Value, time: Option<Timestamp>) {
        let mut said = Vec::new();
        let flush = |b: &mut SessionBuilder, said: &mut Vec<String>| {
            if !said.is_empty() {
                b.push(Turn::new(Role::Assistant, said.join("\n")).at(time));
                said.clear();
            }
        };
        match m.get("content") {
            Some(Value::String(s)) => said.push(s.clone()),
            Some(Value::Array(blocks)) => {
                for block in blocks {
                    match text(block, "type") {
                        Some("tool_use") => {
                            flush(&mut self.b, &mut said);
                            self.tool_use(block, time);
                        }
                        Some("thinking") => {
                            flush(&mut self.b, &mut said);
                            if self.opts.include_reasoning {
                                let t = text(block, "thinking").unwrap_or("");
                                self.b.push(Turn::new(Role::Reasoning, t).at(time));
                            }
                        }
                        _ => said.extend(text(block, "text").map(str::to_string)),
                    }
                }
            }
            _ => {}
        }
        flush(&mut self.b, &mut said);
        self.b.touch(time);
    }

    fn tool_use(&mut self, block: &Value, time: Option<Timestamp>) {
        let call_id = text(block, "id");
        if call_id.is_some_and(|id| self.b.call_mut(id).is_some()) {
            return;
        }
        let name = text(block, "name").unwrap_or("tool");
        let input = block.get("input").unwrap_or(&Value::Null);
        let mut turn = tool_call_turn(&COMMANDCODE_TOOLS, name, input, time);
        if matches!(name, "shell_command" | "monitor_command") {
            if let (Some(tool), Some(cmd)) = (turn.tool.as_mut(), text(input, "command")) {
                let args = input.get("args").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str);
                tool.command = Some(std::iter::once(cmd).chain(args).collect::<Vec<_>>().join(" "));
            }
        }
        if matches!(name, "read_file" | "read_multiple_files") {
            let paths = input.get("paths").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str);
            for p in paths.filter(|p| !p.is_empty() && !p.contains(['*', '?', '[', '{'])) {
                if !turn.files.iter().any(|f| f.path == p) {
                    turn.files.push(FileTouch { path: p.to_string(), action: FileAction::Read });
                }
            }
        }
        self.b.push_call(call_id, turn);
    }

    fn tool_result(&mut self, block: &Value, time: Option<Timestamp>) {
        let call_id = text(block, "tool_use_id").unwrap_or("");
        let content = block_text(block.get("content"));
        let is_error = block.get("is_error").and_then(Value::as_bool) == Some(true);
        let (exit, rest) = split_exit_line(&content);
        if !self.b.complete_call(call_id, rest, is_error, exit.clone(), time) {
            self.b.push_orphan_result(call_id, rest, is_error, exit, time);
        }
    }

    fn compaction(&mut self, v: &Value, time: Option<Timestamp>) {
        let summary = text(v, "summary").unwrap_or("");
        self.b.push(Turn::new(Role::Summary, summary).at(time));
        self.b.touch(time);
    }

    /// A v2 flat line: `role` and `content` (a string or blocks) at the top.
    fn v2_line(&mut self, v: &Value, time: Option<Timestamp>) {
        let role = match text(v, "role") {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            Some("system" | "developer") => return self.b.touch(time),
            Some(_) => Role::ToolOutput,
            None => return,
        };
        if let (Role::User, Some(Value::Array(_))) = (role, v.get("content")) {
            // Blocks (tool results among them) read like a v3 user message.
            return self.user(v, time);
        }
        if let (Role::Assistant, Some(Value::Array(_))) = (role, v.get("content")) {
            return self.assistant(v, time);
        }
        self.b.push(Turn::new(role, block_text(v.get("content"))).at(time));
    }

    fn finish(mut self) -> Option<Session> {
        if let Some(id) = self.header_id.take() {
            self.b.set_id(id);
        }
        let dir = self.src.path.parent().and_then(Path::file_name).and_then(|n| n.to_str());
        let project = self.cwd.take().or_else(|| {
            dir.map(|e| match decode_dash_path(e, Path::new("/")) {
                Some(p) => p.display().to_string(),
                None => dash_fallback_name(e),
            })
        });
        self.b.session_mut().project = project;
        self.b.finish()
    }
}

/// A non-empty string field.
fn text<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// A string, or the `text` of blocks joined with newlines.
fn block_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks.iter().filter_map(|b| text(b, "text")).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// Absolute on Unix or Windows, whatever this machine is.
fn is_absolute(p: &str) -> bool {
    p.starts_with('/')
        || p.starts_with('\\')
        || PathBuf::from(p).is_absolute()
        || p.as_bytes().get(1..3) == Some(b":\\")
        || p.as_bytes().get(1..3) == Some(b":/")
}

/// A leading `Exit code: N` or `Exit code: N (<meaning>)` line and the text after it.
fn split_exit_line(text: &str) -> (Option<ExitStatus>, &str) {
    let (code, rest) = split_exit_code(text, &[ExitLine::first("Exit code:")]);
    (code.map(ExitStatus::Code), rest)
}

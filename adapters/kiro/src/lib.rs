//! Kiro (`kiro`, Amazon's agent: `kiro-cli` and the Kiro IDE) keeps three stores, all read
//! by this one adapter under the `kiro` id, each by this adapter itself (no family writes
//! these shapes):
//!
//! 1. **CLI pairs** (the V2 TUI): `~/.kiro/sessions/cli/<sessionId>.json` (header:
//!    `session_id`, `cwd`, model, turn metadata) beside `cli/<sessionId>.jsonl` (the
//!    transcript). One source per transcript, the header as its part. Read whole on every
//!    change: a streamed reply's pieces and a late exit stamp join across any resume
//!    point (the page's incremental rule), so there is no tail read.
//! 2. **`sess_` sessions** (the IDE and `kiro-cli --v3`): `~/.kiro/sessions/<workspace>/
//!    sess_<uuid>/messages.jsonl` (append-only) with `session.json` (`id`, `workspacePaths[]`,
//!    `createdAt`) as a part. V3 also lists the session in `~/.kiro/session-index/
//!    <workspace>.jsonl` (`sessionPath`, `op`); that file is a part too, and a session whose
//!    last `op` there is `remove` / `delete` is unlisted: it emits nothing (a note says so),
//!    which also drops it from the index when it was read before.
//! 3. **Headless CLI database** `kiro-cli/data.sqlite3` in the local data directory (macOS
//!    `~/Library/Application Support`, Linux `${XDG_DATA_HOME:-~/.local/share}`, Windows
//!    `%LOCALAPPDATA%`), read through `deja_core::sqlite::Snapshot` as
//!    `SourceRef::file(db).with_part(<db>-wal)`: table `conversations_v2`, one row per
//!    conversation keyed by the directory it ran in (`key`), the conversation JSON (`value`,
//!    holding `history`; a `history` column is read too). Core's row cursor (newest `updated_at`,
//!    rowid, the state of recent rows) re-reads only the rows changed since, each whole.
//!
//! CLI JSONL (`{"kind", "data": {message_id?, content: [{kind, data}], meta: {timestamp}}}`,
//! seconds; in 2.22.0 only `Prompt` carries one, so a record without takes the previous
//! stamped record's):
//!
//! | record / part | Turn | rule |
//! | --- | --- | --- |
//! | `Prompt` `text` parts | `User` | joined with newlines |
//! | `AssistantMessage` `text` parts | `Assistant` | consecutive records with the same `message_id` are pieces of one streamed reply: concatenated in order into one turn |
//! | `toolUse` parts (`toolUseId`, `name`, `input`) | `ToolCall` | tool table below |
//! | `ToolResults` `toolResult` parts (`toolUseId`, `content[]`) | folded into the call | `text` parts; a `json` part's `stdout`/`stderr`, other JSON serialized; `exit_status` (`"exit status: 1"`) → exit N; unpaired → `ToolOutput` |
//! | other kinds, malformed or torn lines | skip | the latter counted |
//!
//! `sess_` `messages.jsonl` (`{"id", "timestamp": <RFC 3339>, "payload": {"type", …}}`, and
//! the older flat `{"role", "content"}` lines):
//!
//! | `payload.type` | Turn | rule |
//! | --- | --- | --- |
//! | `user`, `human`, `prompt` (flat `role: "user"`) | `User` | |
//! | `assistant`, `bot`, `response` with `operationType` `Say` or none (flat `role: "assistant"`) | `Assistant` | |
//! | the same with `operationType: "Reasoning"` | skip | its text is encrypted (`"..."` + `reasoningSignature`) |
//! | `tool_call` (`toolCallId`, `toolName`, `args`, `status`) | `ToolCall` | one line per state: only `completed` / `failed` read (once per id); `failed` is an error and keeps its files but no edit span; `denied` and the rest ignored |
//! | `tool_result` (`toolCallId`, `content`, `success`) | folded into the call | a last line `Exit Code: N` → exit N, cut; `success: false` → error; a result landing before its call's terminal line waits for it; unpaired → `ToolOutput` |
//! | `session_start` (the system prompt), `pending_interaction`, `interaction_resolved`, `session_metadata`, `usage_summary`, `turn_start`, `turn_end`, `session_event`, other flat roles | skip | bookkeeping |
//!
//! Database `history` (each entry `{user, assistant}` or a `[user, assistant]` pair):
//!
//! | entry side | Turn | rule |
//! | --- | --- | --- |
//! | `user.content.Prompt.prompt` | `User` | `user.timestamp` |
//! | `user.content.ToolUseResults.tool_use_results[]` (`tool_use_id`, `content[]` of `{"Text"}` / `{"Json"}`, `status`) | folded into the call | as the CLI's results; `exit_status` `"1"` → exit 1; `status: "Error"` → error |
//! | `user.content.CancelledToolUses` | `User` + folded results | its `prompt` and results |
//! | `assistant.Response.content` | `Assistant` | |
//! | `assistant.ToolUse` (`content`, `tool_uses[]` of `{id, name, args}`) | `Assistant` + `ToolCall`s | |
//! | `user.additional_context`, `env_context`, `request_metadata` | skip | injected by the CLI / bookkeeping |
//!
//! Tools (every engine):
//!
//! | tools | input | Turn |
//! | --- | --- | --- |
//! | `shell`, `execute_bash`, `execute_cmd`, `execute_pwsh` | `command` | `tool.command` |
//! | `write`, `fs_write`, `fs_append`, `str_replace` | `path`; `old_str`/`oldStr` + `new_str`/`newStr` | `files` edit + `edit`, or `files` write without an old span |
//! | `read`, `fs_read` | `operations[].path` (or a top-level `path`), `mode: "Directory"` entries skipped | `files` read |
//! | `read_file` | `path` | `files` read |
//! | `delete_file` | `targetFile` | `files` delete |
//! | others | — | name only |
//!
//! Sessions: CLI — id = header `session_id`, else the stem; project = header `cwd`.
//! `sess_` — id = `session.json` `id`, else the directory name; project = the first
//! `workspacePaths[]`, else the workspace directory's name; `createdAt` touches. Database —
//! id = `conversation_id` (column, else in the JSON), else the `key`; project = the `key`.
//!
//! **Variables.** `DEJA_KIRO_ROOT` names the sessions root (`~/.kiro/sessions`, holding
//! `cli/` and the workspaces; the V3 index is looked for in `session-index/` beside it).
//! `DEJA_KIRO_DB` names the database file (a directory: the `data.sqlite3` in it);
//! `XDG_DATA_HOME` moves the Linux data directory, `LOCALAPPDATA` the Windows one.
//!
//! **Not read:** the IDE's `globalStorage` mirror (`kiro.kiroagent/<workspace>/*.chat` and
//! extensionless execution records): the page has no sample.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use deja_core::discover::{find_files, subdirs};
use deja_core::exit::{split_exit_code, ExitLine};
use deja_core::launch::{source_file, Handoff, Launch, Resume, ResumeSpec};
use deja_core::model::SessionMeta;
use deja_core::model::{cap_text, MAX_EDIT_BYTES, MAX_MESSAGE_BYTES};
use deja_core::read::{for_each_json_line, for_each_source_line, parse_json_document, read_source, str_at};
use deja_core::sqlite::{self, RowCursor};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, Edit, ExitStatus, FileAction, FileTouch, FormatError, HarnessFormat, HarnessInfo, InjectedText,
    ParseOptions, ParseStats, Role, SessionBuilder, SessionSink, SourceRef, StoreEnv, Timestamp, ToolUse, Turn,
};
use serde_json::Value;

mod wiring;

const ID: &str = "kiro";
/// The headless CLI's database file.
pub const DB_NAME: &str = "data.sqlite3";
/// A `sess_` session's transcript and header.
const MESSAGES: &str = "messages.jsonl";
const SESSION_JSON: &str = "session.json";

/// The Kiro adapter.
pub struct KiroFormat;

deja_core::inventory::submit!(deja_core::Registration(&KiroFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Kiro",
    container: "CLI: JSON header + JSONL transcript per session; IDE / V3: `sess_` directories (session.json + messages.jsonl); headless CLI: SQLite `conversations_v2`",
    store: StoreSpec::new(&[
        Store {
            name: "",
            roots: &[Root::any("~/.kiro/sessions")],
            layout: Layout::Custom {
                shape: "cli/<sessionId>.{json,jsonl}, <workspace>/sess_<uuid>/{session.json,messages.jsonl}, ../session-index/<workspace>.jsonl",
                walk: Some(walk_sessions),
            },
        },
        // kiro-cli's conversation database.
        Store {
            name: "db",
            roots: &[
                Root::linux("${XDG_DATA_HOME:-~/.local/share}/kiro-cli"),
                Root::macos("~/Library/Application Support/kiro-cli"),
                Root::windows("${LOCALAPPDATA:-~/AppData/Local}/kiro-cli"),
            ],
            layout: Layout::Database(DB_NAME),
        },
    ]),
    needs: &[],
    format_summary: "Kiro has three stores. The V2 TUI of `kiro-cli` writes `~/.kiro/sessions/cli/<id>.json` (header: \
        `session_id`, `cwd`) and `<id>.jsonl`: `Prompt`, `AssistantMessage` and `ToolResults` records of `{kind, data}` \
        parts (`text`, `toolUse`, `toolResult`), seconds timestamps (only on `Prompt` in 2.22.0), a streamed reply split \
        over records sharing a `message_id`. The IDE and `kiro-cli --v3` write `~/.kiro/sessions/<workspace>/sess_<uuid>/` \
        (`session.json` + `messages.jsonl` of `{id, timestamp, payload}` lines: `user`, `assistant` `Say`/`Reasoning`, \
        `tool_call` per state, `tool_result`, bookkeeping), V3 listing them in `~/.kiro/session-index/<workspace>.jsonl`. \
        The headless CLI keeps `kiro-cli/data.sqlite3` in the local data directory: table `conversations_v2`, one row per \
        conversation keyed by its directory, whose JSON `history` holds `Prompt` / `ToolUseResults` and `Response` / \
        `ToolUse` turns. Tool names differ per engine (`shell`/`write`/`read`, `execute_bash`/`fs_write`/`fs_read`, \
        `str_replace`, `read_file`, `delete_file`); exit codes come from `exit_status` or a trailing `Exit Code: N`.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned("`~/.kiro/settings/mcp.json` (read by the CLI and the IDE; a custom agent needs `includeMcpJson: true`)"),
        auto_recall: Capability::Planned(
            "global hooks `~/.kiro/hooks/deja.json` (SessionStart, UserPromptSubmit; IDE and `--v3` TUI) plus an agent \
             `~/.kiro/agents/deja.json` with agentSpawn, userPromptSubmit, preToolUse and postToolUse hooks",
        ),
        skill: Capability::Planned("`~/.kiro/skills/deja-history/SKILL.md`"),
        command: Capability::Planned("`~/.kiro/prompts/deja.md` (`/deja`, or `@deja` on V2)"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::PerSession { doc: "CLI: `cd <dir> && kiro-cli chat --resume-id <id>`; V3: `kiro-cli --v3 chat --resume-id sess_<uuid>`; IDE sessions reopen in the app", pick: resume_kiro }, handoff: Handoff::Paste("the page says exec but names no start-with-prompt argument") },
};

/// The sessions root: CLI transcripts under `cli/` (each with its `.json` header), and
/// the IDE's `<workspace>/sess_<uuid>/messages.jsonl` with its `session.json` and the
/// workspace's index in `session-index/` beside the root.
fn walk_sessions(root: &Path, _env: &StoreEnv, found: &mut Discovery) {
    let cli = root.join("cli");
    for transcript in find_files(&cli, 1, &|name: &str| name.ends_with(".jsonl")) {
        let header = transcript.with_extension("json");
        found.sources.push(SourceRef::file(&transcript).with_part(header));
    }
    let index_dir = root.parent().map_or_else(|| root.join("session-index"), |p| p.join("session-index"));
    for workspace in subdirs(root).into_iter().filter(|w| w.file_name().is_some_and(|n| n != "cli")) {
        let index = workspace.file_name().map(|n| index_dir.join(format!("{}.jsonl", n.to_string_lossy())));
        for dir in subdirs(&workspace) {
            if !dir.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("sess_")) {
                continue;
            }
            let messages = dir.join(MESSAGES);
            if !std::fs::metadata(&messages).is_ok_and(|m| m.is_file()) {
                continue;
            }
            let mut src = SourceRef::file(messages).append_only().with_part(dir.join(SESSION_JSON));
            if let Some(index) = &index {
                src = src.with_part(index);
            }
            found.sources.push(src);
        }
    }
}

impl HarnessFormat for KiroFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::KiroWiring)
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let _ = opts; // Kiro keeps no readable reasoning (V3's is encrypted).
        let name = src.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == MESSAGES {
            parse_sess(src, out)
        } else if name.ends_with(".jsonl") {
            parse_cli(src, out)
        } else {
            parse_db(src, out)
        }
    }
}

/// A non-empty string field.
fn text<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// The first non-empty string among `keys`.
fn first_text<'v>(v: &'v Value, keys: &[&str]) -> Option<&'v str> {
    keys.iter().find_map(|k| text(v, k))
}

// ---------------------------------------------------------------------------------------
// Tools, shared by the three stores.

/// What a tool name means in any of Kiro's engines.
#[derive(Clone, Copy, PartialEq)]
enum Tool {
    Shell,
    Write,
    Read,
    ReadFile,
    Delete,
    Other,
}

fn tool_kind(name: &str) -> Tool {
    match name {
        "shell" | "execute_bash" | "execute_cmd" | "execute_pwsh" => Tool::Shell,
        "write" | "fs_write" | "fs_append" | "str_replace" => Tool::Write,
        "read" | "fs_read" => Tool::Read,
        "read_file" => Tool::ReadFile,
        "delete_file" => Tool::Delete,
        _ => Tool::Other,
    }
}

fn capped(s: &str, max: usize) -> String {
    let mut s = s.to_string();
    cap_text(&mut s, max);
    s
}

/// A tool call's turn: command, files and edit span from its input. `failed` keeps the
/// files of a write but not its sides (the edit did not happen).
fn tool_turn(name: &str, input: &Value, failed: bool, time: Option<Timestamp>) -> Turn {
    let mut turn = Turn::new(Role::ToolCall, "").at(time);
    let mut tool = ToolUse { name: name.to_string(), is_error: failed, ..ToolUse::default() };
    let touch = |turn: &mut Turn, path: &str, action: FileAction| {
        if !path.is_empty() && !turn.files.iter().any(|f| f.path == path && f.action == action) {
            turn.files.push(FileTouch { path: path.to_string(), action });
        }
    };
    match tool_kind(name) {
        Tool::Shell => tool.command = text(input, "command").map(str::to_string).filter(|c| !c.trim().is_empty()),
        Tool::Write => {
            if let Some(path) = text(input, "path") {
                match first_text(input, &["old_str", "oldStr"]) {
                    Some(old) => {
                        touch(&mut turn, path, FileAction::Edit);
                        if !failed {
                            let new = first_text(input, &["new_str", "newStr"]).map(|n| capped(n, MAX_EDIT_BYTES));
                            turn.edit = Some(Edit { path: path.to_string(), old: capped(old, MAX_EDIT_BYTES), new });
                        }
                    }
                    None => touch(&mut turn, path, FileAction::Write),
                }
            }
        }
        Tool::Read => {
            let ops = input.get("operations").and_then(Value::as_array);
            // Older `fs_read` calls put one operation's keys at the top.
            let single = std::slice::from_ref(input);
            for op in ops.map_or(single, Vec::as_slice) {
                if str_at(op, &["mode"]) != Some("Directory") {
                    if let Some(path) = text(op, "path") {
                        touch(&mut turn, path, FileAction::Read);
                    }
                }
            }
        }
        Tool::ReadFile => {
            if let Some(path) = text(input, "path") {
                touch(&mut turn, path, FileAction::Read);
            }
        }
        Tool::Delete => {
            if let Some(path) = text(input, "targetFile") {
                touch(&mut turn, path, FileAction::Delete);
            }
        }
        Tool::Other => {}
    }
    turn.tool = Some(tool);
    turn
}

/// An exit status as Kiro writes it: `"exit status: 1"` (TUI), `"1"` (database), a number.
fn exit_status(v: &Value) -> Option<ExitStatus> {
    let code = match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => deja_core::exit::exit_code(s, &[ExitLine::first("exit status:"), ExitLine::first("exit code:")])
            .or_else(|| s.trim().parse().ok()),
        _ => None,
    }?;
    Some(ExitStatus::Code(code))
}

/// A JSON result part: its `stdout`/`stderr` (and `exit_status`) when it has them, else the
/// JSON serialized.
fn json_result(v: &Value, exit: &mut Option<ExitStatus>) -> String {
    if let Some(e) = v.get("exit_status").and_then(exit_status) {
        *exit = Some(e);
    }
    if v.get("stdout").is_some() || v.get("stderr").is_some() {
        let streams: Vec<&str> = ["stdout", "stderr"].iter().filter_map(|k| text(v, k)).map(str::trim_end).collect();
        streams.join("\n")
    } else if let Value::String(s) = v {
        s.clone()
    } else {
        v.to_string()
    }
}

/// A trailing `Exit Code: N` line (V3 results): the code and the text before it.
fn trailing_exit_code(output: &str) -> (Option<ExitStatus>, &str) {
    let (code, rest) = split_exit_code(output, &[ExitLine::last("Exit Code:")]);
    (code.map(ExitStatus::Code), rest)
}

/// Folds a result into its call, or keeps it as a `ToolOutput` turn remembering the id.
fn fold_result(b: &mut SessionBuilder, call_id: &str, output: &str, is_error: bool, exit: Option<ExitStatus>, time: Option<Timestamp>) {
    if !b.complete_call(call_id, output, is_error, exit.clone(), time) {
        b.push_orphan_result(call_id, output, is_error, exit, time);
    }
}

// ---------------------------------------------------------------------------------------
// 1. CLI pairs.

fn parse_cli(src: &SourceRef, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let mut stats = ParseStats::default();
    let bytes = read_source(&src.path, &mut stats)?.bytes;
    let stem = src.path.file_stem().and_then(|s| s.to_str()).unwrap_or("").to_string();
    let mut b = SessionBuilder::new(ID, stem, src.clone());
    // The header: a missing or broken one leaves the stem and no project.
    let header = src.parts.first().and_then(|h| {
        let mut header_stats = ParseStats::default();
        let bytes = read_source(h, &mut header_stats).ok()?;
        parse_json_document(&bytes.bytes, h).ok()
    });
    if let Some(h) = header.as_ref().filter(|h| h.is_object()) {
        if let Some(id) = text(h, "session_id") {
            b.set_id(id);
        }
        b.session_mut().project = text(h, "cwd").map(str::to_string);
    }
    let mut cli = CliParse { b, time: None, reply: None };
    for_each_json_line(&bytes, 0, &src.path, &mut stats, |_offset, v| cli.record(&v));
    // Whole-file reads: no tail offsets to hand back.
    stats.prefix_hash = None;
    if let Some(s) = cli.b.finish() {
        out.session(s);
    }
    Ok(stats)
}

struct CliParse {
    b: SessionBuilder,
    /// The last stamped record's time (records without one take it).
    time: Option<Timestamp>,
    /// The streamed reply being read: its `message_id` and the index of its text turn.
    reply: Option<(String, Option<usize>)>,
}

impl CliParse {
    fn record(&mut self, v: &Value) {
        let Some(data) = v.get("data").filter(|d| d.is_object()) else { return };
        if let Some(t) = data.get("meta").and_then(|m| m.get("timestamp")).and_then(Timestamp::from_json) {
            self.time = Some(t);
        }
        let time = self.time;
        let parts = data.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
        let kind = str_at(v, &["kind"]);
        if kind != Some("AssistantMessage") {
            self.reply = None;
        }
        match kind {
            Some("Prompt") => {
                let said: Vec<&str> =
                    parts.iter().filter(|p| str_at(p, &["kind"]) == Some("text")).filter_map(|p| text(p, "data")).collect();
                self.b.push(Turn::new(Role::User, said.join("\n")).at(time));
            }
            Some("AssistantMessage") => self.assistant(data, parts, time),
            Some("ToolResults") => {
                for part in parts.iter().filter(|p| str_at(p, &["kind"]) == Some("toolResult")) {
                    let Some(result) = part.get("data") else { continue };
                    let call_id = text(result, "toolUseId").unwrap_or("");
                    let mut exit = None;
                    let mut pieces = Vec::new();
                    for c in result.get("content").and_then(Value::as_array).into_iter().flatten() {
                        let piece = match (str_at(c, &["kind"]), c.get("data")) {
                            (Some("text"), Some(Value::String(s))) => s.clone(),
                            (Some("json"), Some(j)) => json_result(j, &mut exit),
                            _ => continue,
                        };
                        if !piece.is_empty() {
                            pieces.push(piece);
                        }
                    }
                    fold_result(&mut self.b, call_id, &pieces.join("\n"), false, exit, time);
                }
            }
            _ => self.b.touch(time),
        }
    }

    fn assistant(&mut self, data: &Value, parts: &[Value], time: Option<Timestamp>) {
        let message_id = text(data, "message_id").map(str::to_string);
        // A piece of the reply being read continues it; anything else starts a new one.
        let continues = matches!((&self.reply, &message_id), (Some((id, _)), Some(m)) if id == m);
        if !continues {
            self.reply = message_id.map(|m| (m, None));
        }
        for part in parts {
            match str_at(part, &["kind"]) {
                Some("text") => {
                    let Some(piece) = part.get("data").and_then(Value::as_str).filter(|s| !s.is_empty()) else { continue };
                    let open = self.reply.as_ref().and_then(|(_, idx)| *idx);
                    match open.and_then(|i| self.b.session_mut().turns.get_mut(i)) {
                        Some(turn) => {
                            turn.text.push_str(piece);
                            cap_text(&mut turn.text, MAX_MESSAGE_BYTES);
                        }
                        None => {
                            let idx = self.b.push(Turn::new(Role::Assistant, piece).at(time));
                            // Without a message id pieces cannot be matched: each is its own turn.
                            if let Some((_, open)) = &mut self.reply {
                                *open = idx;
                            }
                        }
                    }
                }
                Some("toolUse") => {
                    let Some(call) = part.get("data") else { continue };
                    let call_id = text(call, "toolUseId");
                    if call_id.is_some_and(|id| self.b.call_mut(id).is_some()) {
                        continue;
                    }
                    let name = text(call, "name").unwrap_or("tool");
                    let turn = tool_turn(name, call.get("input").unwrap_or(&Value::Null), false, time);
                    self.b.push_call(call_id, turn);
                }
                _ => {}
            }
        }
        self.b.touch(time);
    }
}

// ---------------------------------------------------------------------------------------
// 2. `sess_` sessions.

fn parse_sess(src: &SourceRef, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let mut stats = ParseStats::default();
    let dir = src.path.parent().unwrap_or(Path::new(""));
    let dir_name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
    let workspace = dir.parent().and_then(Path::file_name).and_then(|n| n.to_str()).unwrap_or("").to_string();
    let part = |name: &dyn Fn(&Path) -> bool| src.parts.iter().find(|p| name(p));
    if let Some(index) = part(&|p| p.parent().and_then(Path::file_name).is_some_and(|n| n == "session-index")) {
        if unlisted(index, &format!("{workspace}/{dir_name}")) {
            stats.problem(format!("{}: removed from the V3 session index; not read", src.path.display()));
            return Ok(stats);
        }
    }
    let header = part(&|p| p.file_name().is_some_and(|n| n == SESSION_JSON)).and_then(|h| {
        let mut header_stats = ParseStats::default();
        parse_json_document(&read_source(h, &mut header_stats).ok()?.bytes, h).ok()
    });
    let header = header.filter(Value::is_object).unwrap_or(Value::Null);
    let id = match &src.resume {
        Some(r) => r.session_id.clone(),
        None => text(&header, "id").map_or(dir_name, str::to_string),
    };
    let mut b = SessionBuilder::new(ID, id, src.clone());
    let project = header
        .get("workspacePaths")
        .and_then(Value::as_array)
        .and_then(|w| w.iter().find_map(|p| p.as_str().filter(|p| !p.is_empty())))
        .map(str::to_string)
        .or_else(|| (!workspace.is_empty()).then_some(workspace));
    b.session_mut().project = project;
    b.touch(header.get("createdAt").and_then(Timestamp::from_json));
    let mut sess = SessParse { b, done: HashSet::new(), waiting: HashMap::new() };
    for_each_source_line(src, &mut stats, &[], |_offset, v| sess.line(&v))?;
    if let Some(s) = sess.finish() {
        out.session(s);
    }
    Ok(stats)
}

/// True when the last line of the V3 index naming `session_path` removes it.
fn unlisted(index: &Path, session_path: &str) -> bool {
    let mut stats = ParseStats::default();
    let Ok(bytes) = read_source(index, &mut stats) else { return false };
    let mut last_op: Option<String> = None;
    for_each_json_line(&bytes.bytes, 0, index, &mut stats, |_offset, v| {
        let Some(path) = text(&v, "sessionPath") else { return };
        let path = path.replace('\\', "/");
        let path = path.trim_end_matches('/');
        if path == session_path || path.ends_with(&format!("/{session_path}")) {
            last_op = text(&v, "op").map(str::to_ascii_lowercase);
        }
    });
    matches!(last_op.as_deref(), Some("remove" | "delete"))
}

struct SessParse {
    b: SessionBuilder,
    /// Calls whose terminal line was read (a second terminal line is not a second call).
    done: HashSet<String>,
    /// Results that arrived before their call's terminal line.
    waiting: HashMap<String, (String, bool, Option<ExitStatus>, Option<Timestamp>)>,
}

impl SessParse {
    fn line(&mut self, v: &Value) {
        if !v.is_object() {
            return;
        }
        let time = v.get("timestamp").and_then(Timestamp::from_json);
        let Some(p) = v.get("payload").filter(|p| p.is_object()) else {
            return self.flat(v, time);
        };
        match str_at(p, &["type"]) {
            Some("user" | "human" | "prompt") => {
                self.b.push(Turn::new(Role::User, content_text(p.get("content"))).at(time));
            }
            Some("assistant" | "bot" | "response") => match str_at(p, &["operationType"]) {
                None | Some("Say") => {
                    self.b.push(Turn::new(Role::Assistant, content_text(p.get("content"))).at(time));
                }
                // Reasoning (encrypted) and other operations are not speech.
                _ => self.b.touch(time),
            },
            Some("tool_call") => self.tool_call(p, time),
            Some("tool_result") => self.tool_result(p, time),
            _ => self.b.touch(time),
        }
    }

    /// The older flat `{"role", "content"}` lines.
    fn flat(&mut self, v: &Value, time: Option<Timestamp>) {
        let role = match str_at(v, &["role"]) {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            _ => return self.b.touch(time),
        };
        self.b.push(Turn::new(role, content_text(v.get("content"))).at(time));
    }

    fn tool_call(&mut self, p: &Value, time: Option<Timestamp>) {
        let failed = match str_at(p, &["status"]) {
            Some("completed") => false,
            Some("failed") => true,
            // Pending, running, denied…: only a terminal state is the call.
            _ => return self.b.touch(time),
        };
        let call_id = text(p, "toolCallId").unwrap_or("");
        if !call_id.is_empty() && !self.done.insert(call_id.to_string()) {
            return self.b.touch(time);
        }
        let name = text(p, "toolName").unwrap_or("tool");
        let turn = tool_turn(name, p.get("args").unwrap_or(&Value::Null), failed, time);
        self.b.push_call(Some(call_id), turn);
        if let Some((output, is_error, exit, at)) = self.waiting.remove(call_id) {
            self.b.complete_call(call_id, &output, is_error, exit, at);
        }
    }

    fn tool_result(&mut self, p: &Value, time: Option<Timestamp>) {
        let call_id = text(p, "toolCallId").unwrap_or("").to_string();
        let content = content_text(p.get("content"));
        let (exit, output) = trailing_exit_code(&content);
        let is_error = p.get("success").and_then(Value::as_bool) == Some(false);
        if self.done.contains(&call_id) || call_id.is_empty() {
            fold_result(&mut self.b, &call_id, output, is_error, exit, time);
        } else {
            // The call's terminal line may still come.
            self.waiting.insert(call_id, (output.to_string(), is_error, exit, time));
        }
    }

    fn finish(mut self) -> Option<deja_core::Session> {
        let mut waiting: Vec<_> = self.waiting.drain().collect();
        waiting.sort_by_key(|(id, (_, _, _, t))| (*t, id.clone()));
        for (id, (output, is_error, exit, time)) in waiting {
            self.b.push_orphan_result(&id, &output, is_error, exit, time);
        }
        self.b.finish()
    }
}

/// A string, the `text` of content blocks, or JSON blocks serialized.
fn content_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| match b {
                Value::String(s) => Some(s.clone()),
                _ => first_text(b, &["text", "content"]).map(str::to_string),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Some(Value::Object(_)) => v.and_then(|o| first_text(o, &["text", "content"])).unwrap_or("").to_string(),
        _ => String::new(),
    }
}

// ---------------------------------------------------------------------------------------
// 3. The headless CLI database.

fn parse_db(src: &SourceRef, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let db = src.path.as_path();
    let (store, mut stats) = sqlite::Db::open(src)?;
    let conn = store.conn();
    let sql_err = |e: rusqlite::Error| store.err(e);
    let cols = store.columns("conversations_v2", &["key"], "a kiro-cli database")?;
    if !cols.has("value") && !cols.has("history") {
        return Err(FormatError::corrupt(db, "not a kiro-cli database (conversations_v2 lacks value); schema changed?"));
    }

    // Row states for the cursor, by `key` (the table's key: one conversation per
    // directory): `(updated ms, payload length, 0)`. A rewritten conversation moves
    // `updated_at`; a new row gets a higher rowid whatever time it carries.
    let mut states: HashMap<String, sqlite::SessionState> = HashMap::new();
    {
        let payload = match (cols.has("value"), cols.has("history")) {
            (true, true) => "coalesce(\"value\", \"history\")",
            (true, false) => "\"value\"",
            _ => "\"history\"",
        };
        let sql = format!("SELECT key, {}, length({payload}) FROM conversations_v2", cols.col("updated_at"));
        let mut stmt = conn.prepare(&sql).map_err(sql_err)?;
        let mut rows = stmt.query([]).map_err(sql_err)?;
        while let Some(row) = rows.next().map_err(sql_err)? {
            let Ok(Some(key)) = sqlite::column_text(row, 0) else { continue };
            let updated = row.get_ref(1).ok().and_then(sqlite::value_i64);
            states.insert(key, (updated, row.get_ref(2).ok().and_then(sqlite::value_i64).unwrap_or(0), 0));
        }
    }
    let newest = states.values().filter_map(|s| s.0).max();
    let max_rowid = sqlite::max_rowid(conn, "conversations_v2").ok().flatten();
    let previous = RowCursor::previous(&mut stats, src, newest, max_rowid);
    stats.cursor = RowCursor::after(&states, max_rowid);
    let wanted = RowCursor::wanted(previous.as_ref(), conn, &states, "conversations_v2", "key").map_err(sql_err)?;

    let sql = format!(
        "SELECT key, {}, {}, {}, {}, {} FROM conversations_v2 ORDER BY rowid",
        cols.col("conversation_id"),
        cols.col("value"),
        cols.col("history"),
        cols.col("created_at"),
        cols.col("updated_at"),
    );
    let mut stmt = conn.prepare(&sql).map_err(sql_err)?;
    let mut rows = stmt.query([]).map_err(sql_err)?;
    while let Some(row) = rows.next().map_err(sql_err)? {
        let key = sqlite::column_text(row, 0).ok().flatten().filter(|k| !k.trim().is_empty());
        // Unchanged since the last read: not read again (a row without a key always is).
        if let (Some(w), Some(k)) = (&wanted, &key) {
            if !w.contains(k) {
                continue;
            }
        }
        stats.records += 1;
        let value = match sqlite::column_json(row, 2) {
            Ok(v) => v,
            Err(e) => {
                stats.skip(|| format!("{}: conversation {}: {e}", db.display(), key.as_deref().unwrap_or("?")));
                continue;
            }
        };
        let history = match (sqlite::column_json(row, 3), value.as_ref().and_then(|v| v.get("history"))) {
            (Ok(Some(h)), _) if h.is_array() => h,
            (_, Some(h)) if h.is_array() => h.clone(),
            _ => {
                stats.skip(|| format!("{}: conversation {}: no `history` array", db.display(), key.as_deref().unwrap_or("?")));
                continue;
            }
        };
        let id = sqlite::column_text(row, 1)
            .ok()
            .flatten()
            .filter(|i| !i.trim().is_empty())
            .or_else(|| value.as_ref().and_then(|v| text(v, "conversation_id")).map(str::to_string))
            .or_else(|| key.clone());
        let Some(id) = id else {
            stats.skip(|| format!("{}: a conversation row without a key or id", db.display()));
            continue;
        };
        let mut b = SessionBuilder::new(ID, id, src.clone());
        b.session_mut().project = key;
        b.touch(row.get_ref(4).ok().and_then(sqlite::value_timestamp));
        b.touch(row.get_ref(5).ok().and_then(sqlite::value_timestamp));
        let mut last_time = None;
        for entry in history.as_array().into_iter().flatten() {
            db_entry(&mut b, entry, &mut last_time);
        }
        if let Some(s) = b.finish() {
            out.session(s);
        }
    }
    Ok(stats)
}

/// One `history` entry: `{user, assistant}` or a `[user, assistant]` pair.
fn db_entry(b: &mut SessionBuilder, entry: &Value, last_time: &mut Option<Timestamp>) {
    let (user, assistant) = match entry {
        Value::Object(_) => (entry.get("user"), entry.get("assistant")),
        Value::Array(pair) => (pair.first(), pair.get(1)),
        _ => return,
    };
    if let Some(user) = user.filter(|u| u.is_object()) {
        if let Some(t) = user.get("timestamp").and_then(Timestamp::from_json) {
            *last_time = Some(t);
        }
        let time = *last_time;
        let content = user.get("content").unwrap_or(&Value::Null);
        for (variant, body) in content.as_object().into_iter().flatten() {
            if matches!(variant.as_str(), "Prompt" | "CancelledToolUses") {
                if let Some(prompt) = text(body, "prompt") {
                    b.push(Turn::new(Role::User, prompt).at(time));
                }
            }
            if matches!(variant.as_str(), "ToolUseResults" | "CancelledToolUses") {
                for result in body.get("tool_use_results").and_then(Value::as_array).into_iter().flatten() {
                    db_result(b, result, time);
                }
            }
        }
    }
    let time = *last_time;
    let Some(assistant) = assistant.and_then(Value::as_object) else { return };
    for (variant, body) in assistant {
        if !matches!(variant.as_str(), "Response" | "ToolUse") {
            continue;
        }
        if let Some(said) = text(body, "content") {
            b.push(Turn::new(Role::Assistant, said).at(time));
        }
        for call in body.get("tool_uses").and_then(Value::as_array).into_iter().flatten() {
            let call_id = text(call, "id");
            if call_id.is_some_and(|id| b.call_mut(id).is_some()) {
                continue;
            }
            let name = text(call, "name").unwrap_or("tool");
            let input = call.get("args").or_else(|| call.get("orig_args")).unwrap_or(&Value::Null);
            b.push_call(call_id, tool_turn(name, input, false, time));
        }
    }
}

/// A database tool result: `{tool_use_id, content: [{"Text": s} | {"Json": v}], status}`.
fn db_result(b: &mut SessionBuilder, result: &Value, time: Option<Timestamp>) {
    let call_id = text(result, "tool_use_id").unwrap_or("");
    let mut exit = None;
    let mut pieces = Vec::new();
    for block in result.get("content").and_then(Value::as_array).into_iter().flatten() {
        let piece = if let Some(t) = block.get("Text").and_then(Value::as_str) {
            t.to_string()
        } else if let Some(j) = block.get("Json") {
            json_result(j, &mut exit)
        } else {
            continue;
        };
        if !piece.is_empty() {
            pieces.push(piece);
        }
    }
    let is_error = str_at(result, &["status"]).is_some_and(|s| s.eq_ignore_ascii_case("error"));
    fold_result(b, call_id, &pieces.join("\n"), is_error, exit, time);
}

/// CLI transcripts and database rows reopen with `chat --resume-id`, V3 `sess_` sessions
/// with `--v3`; IDE sessions only in the app.
fn resume_kiro(session: &SessionMeta) -> Result<ResumeSpec, &'static str> {
    if session.id.starts_with("sess_") {
        Ok(ResumeSpec::in_dir(&["kiro-cli", "--v3", "chat", "--resume-id", "{id}"]))
    } else if session.path.contains("sessions/cli") || source_file(session).ends_with("data.sqlite3") {
        Ok(ResumeSpec::in_dir(&["kiro-cli", "chat", "--resume-id", "{id}"]).with_note("needs kiro-cli 2.2.0 or later"))
    } else {
        Err("IDE sessions reopen in the Kiro app")
    }
}

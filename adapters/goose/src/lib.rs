//! Goose (`goose`): two storage generations in Goose's data directory, both read. Before
//! 1.10.0 one append-only JSONL file per session, `<data>/sessions/*.jsonl` (line 1 the
//! session's metadata, then one message per line); from 1.10.0 one SQLite database,
//! `<data>/sessions/sessions.db` (WAL mode), with `sessions` and `messages` tables.
//! Legacy files stay on disk after the migration, so a session may appear in both.
//!
//! No family reader writes either shape, so the adapter reads both itself: JSONL through
//! `deja_core::read`, the database through [`deja_core::sqlite::Snapshot`].
//!
//! | record / field | Turn | rule |
//! | --- | --- | --- |
//! | JSONL line without `role` | — | metadata: `id`, `description` (title), `working_dir` (project), `created_at`/`updated_at` |
//! | JSONL line, `role` `user` / `assistant`, `content` blocks | `User` / `Assistant` | every block's string `text` (or a string `content`), joined by newlines; time `created` (epoch s), else `timestamp` |
//! | `messages` row, `role` `user` / `assistant`, `content_json` | `User` / `Assistant` | the JSON block array, same text rule; not JSON → the trimmed string; time `created_timestamp`, else the session's `updated_at` |
//! | `toolRequest` block (`id`, `toolCall.value.{name, arguments}`) | `ToolCall` | `shell` → command; `write`/`text_editor`/`edit` → file (`path`), `old_str`/`new_str` span (shapes seen in Goose 1.37.0) |
//! | `toolResponse` block (`id`, `toolResult.value.{content[].text, structuredContent.exit_code, isError}`) | folded into its call | `toolResult.status` other than `success` is an error; unpaired → `ToolOutput` |
//! | message whose `metadata_json` says `userVisible: false` | skipped | Goose's own agent-only text (tool-pair summaries written when it compacts) |
//! | other blocks (images, thinking) | skipped | |
//! | other roles | skipped | |
//! | `sessions.session_type` other than NULL / `''` / `user` | session skipped | sub-agent and scheduled recipe runs share the table |
//! | a line that is not JSON, a torn last line | skipped | counted |
//!
//! **Session.** JSONL: id = metadata `id`, else the file name; SQLite: `sessions.id`.
//! Title = trimmed description; project = the working directory (deja keeps it whole),
//! `goose` when there is none. A read of a legacy file's tail reads only the tail, going
//! on from the working directory the read before kept (`TailState::cwd`).
//!
//! **Cursor.** `messages.id` is `AUTOINCREMENT`: the highest id read is the cursor
//! (core's `RowCursor`, its mark only); given it, only sessions owning a newer row are
//! re-read, whole.
//!
//! **Variables.** The data directory is `DEJA_GOOSE_ROOT` (the sessions root's parent:
//! the directory holding `sessions/`), else `$GOOSE_PATH_ROOT/data`, else on Windows
//! `%APPDATA%\Block\goose\data`, else `$XDG_DATA_HOME/goose`, else `~/.local/share/goose`
//! (macOS too). `DEJA_GOOSE_DB` names the database file (a directory: its `sessions.db`)
//! and replaces the database found in the data directory.

use std::collections::{HashMap, HashSet};

use deja_core::family::claude_jsonl::tool_call_turn_with;
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::read::for_each_source_line;
use deja_core::sqlite::{self, RowCursor};
use deja_core::store::{Files, Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Edit, ExitStatus, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Role,
    SessionBuilder, SessionSink, SourceRef, TailState, Timestamp, ToolMap, Turn,
};
use serde_json::Value;
pub mod hook;
pub mod runtime;
pub mod wiring;

const ID: &str = "goose";
const DB_NAME: &str = "sessions.db";

/// The Goose adapter.
pub struct GooseFormat;

deja_core::inventory::submit!(deja_core::Registration(&GooseFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Goose",
    container: "JSONL, one append-only file per session (before 1.10.0), and SQLite (WAL) `sessions.db` (1.10.0+), side by side",
    store: StoreSpec::new(&[
        Store {
            name: "",
            // Goose's data directory: GOOSE_PATH_ROOT's `data`, else the platform's.
            roots: &[
                Root::unix("${GOOSE_PATH_ROOT}/data|${XDG_DATA_HOME:-~/.local/share}/goose"),
                Root::windows("${GOOSE_PATH_ROOT}/data|${APPDATA:-~/AppData/Roaming}/Block/goose/data"),
            ],
            layout: Layout::Files(Files::new("sessions/**/*.jsonl").depth(5).append_only()),
        },
        // The sessions database beside the older JSONL logs: it moves with the data directory.
        Store { name: "db", roots: &[Root::any("@/sessions")], layout: Layout::Database(DB_NAME) },
    ]),
    needs: &[],
    format_summary: "Goose writes two generations into `<data>/sessions/`, both read: before 1.10.0 one JSONL file per \
        session (line 1 metadata: `id`, `description`, `working_dir`; then messages with `role`, epoch-second `created` \
        and a `content` block array), from 1.10.0 one SQLite database `sessions.db` (`sessions` with description and \
        `working_dir`, `messages` with `role` and the block array as JSON text in `content_json`). A message's text is its \
        blocks' `text` fields joined; `toolRequest` blocks are calls with their `toolResponse` (output, exit code) \
        folded in; agent-only rows (`userVisible: false`) are skipped. Sessions whose `session_type` is not `user` (sub-agents, \
        scheduled recipes) are skipped. The database is read through a private copy with its WAL, incrementally by \
        `messages.id`.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "`extensions: deja: {enabled: true, type: stdio, name: deja, cmd: \"<exe>\", args: [\"mcp\"], timeout: 60}` in \
             `<config>/config.yaml`, edited textually",
        ),
        auto_recall: Capability::Planned(
            "plugin hooks `~/.agents/plugins/deja/hooks/hooks.json` (SessionStart rewrites `<config>/.goosehints`; \
             UserPromptSubmit writes the MOIM file), with `deja goose` setting `GOOSE_MOIM_MESSAGE_FILE`; Goose discards hook stdout",
        ),
        skill: Capability::Planned("`~/.agents/skills/deja-history/SKILL.md`"),
        command: Capability::Planned("`slash_commands: - command: \"deja\"` in `config.yaml`, pointing at `<config>/deja-recipe.yaml`"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Always(ResumeSpec::anywhere(&["goose", "session", "--resume", "--session-id", "{id}"])),
        handoff: Handoff::Exec(&["goose", "run", "-t", "{prompt}"]),
    },
};

impl HarnessFormat for GooseFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::GooseWiring)
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        if src.path.extension().is_some_and(|e| e == "jsonl") {
            parse_jsonl(src, opts, out)
        } else {
            parse_db(src, out)
        }
    }
}

/// A message's text: each block's string `text` (or string `content`), joined by newlines;
/// a string `content` is the text itself.
fn blocks_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.trim().to_string(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str).or_else(|| b.get("content").and_then(Value::as_str)))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Goose's developer-extension tools (1.37.0 names, and the older `text_editor`).
const TOOLS: ToolMap = ToolMap { shell: &["shell"], read: &["read"], edit: &["edit", "text_editor"], write: &["write"] };

/// One message: its text blocks as a `role` turn, each `toolRequest` a call, each
/// `toolResponse` folded into its call.
fn push_message(b: &mut SessionBuilder, role: Role, content: &Value, time: Option<Timestamp>) {
    let text = blocks_text(content);
    if !text.is_empty() || !content.is_array() {
        b.push(Turn::new(role, text).at(time));
    }
    for block in content.as_array().into_iter().flatten() {
        match block.get("type").and_then(Value::as_str) {
            Some("toolRequest") => tool_request(b, block, time),
            Some("toolResponse") => tool_response(b, block, time),
            _ => {}
        }
    }
}

fn tool_request(b: &mut SessionBuilder, block: &Value, time: Option<Timestamp>) {
    let call = block.get("toolCall").and_then(|c| c.get("value"));
    let name = call.and_then(|c| c.get("name")).and_then(Value::as_str).unwrap_or("");
    let args = call.and_then(|c| c.get("arguments")).cloned().unwrap_or(Value::Null);
    let id = block.get("id").and_then(Value::as_str).filter(|i| !i.is_empty());
    // Before 1.x tools were named `<extension>__<tool>` (`developer__shell`).
    let base = name.rsplit("__").next().unwrap_or(name);
    let mut turn = tool_call_turn_with(&TOOLS, &["path"], base, &args, time);
    if let Some(tool) = turn.tool.as_mut() {
        tool.name = name.to_string();
    }
    if turn.edit.is_none() {
        // `text_editor`/`edit`: `old_str` / `new_str`.
        if let (Some(path), Some(old)) = (args.get("path").and_then(Value::as_str), args.get("old_str").and_then(Value::as_str)) {
            let new = args.get("new_str").and_then(Value::as_str).map(str::to_string);
            turn.edit = Some(Edit { path: path.to_string(), old: old.to_string(), new });
        }
    }
    b.push_call(id, turn);
}

fn tool_response(b: &mut SessionBuilder, block: &Value, time: Option<Timestamp>) {
    let result = block.get("toolResult");
    let value = result.and_then(|r| r.get("value"));
    // 1.37.0: `value.content[]`; older releases: `value` is the content list itself.
    let output = value
        .map(|v| if v.is_array() { blocks_text(v) } else { v.get("content").map(blocks_text).unwrap_or_default() })
        .unwrap_or_default();
    let exit =
        value.and_then(|v| v.get("structuredContent")).and_then(|c| c.get("exit_code")).and_then(Value::as_i64).map(ExitStatus::Code);
    let failed = result.and_then(|r| r.get("status")).and_then(Value::as_str).is_some_and(|s| s != "success")
        || value.and_then(|v| v.get("isError")).and_then(Value::as_bool) == Some(true);
    let id = block.get("id").and_then(Value::as_str).unwrap_or("");
    if !b.complete_call(id, &output, failed, exit.clone(), time) {
        b.push_orphan_result(id, &output, failed, exit, time);
    }
}

fn role_of(role: &str) -> Option<Role> {
    match role {
        "user" => Some(Role::User),
        "assistant" => Some(Role::Assistant),
        _ => None,
    }
}

fn trimmed(v: Option<&str>) -> Option<String> {
    v.map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
}

fn parse_jsonl(src: &SourceRef, _opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let mut stats = ParseStats::default();
    let file_id = src.path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut b = SessionBuilder::new(ID, src.resume.as_ref().map_or(file_id, |r| r.session_id.clone()), src.clone());
    // The metadata line naming the working directory is line 1: a tail goes on from the
    // directory the read before kept (its title the index holds).
    b.session_mut().project = Some(src.resume.as_ref().and_then(|r| r.state.cwd.clone()).unwrap_or_else(|| ID.to_string()));
    for_each_source_line(src, &mut stats, &[], |_, v| {
        let Some(role) = v.get("role") else {
            metadata(&mut b, &v, src.resume.is_none());
            return;
        };
        let Some(role) = role.as_str().and_then(role_of) else { return };
        let time = v.get("created").and_then(Timestamp::from_json).or_else(|| v.get("timestamp").and_then(Timestamp::from_json));
        push_message(&mut b, role, v.get("content").unwrap_or(&Value::Null), time);
    })?;
    let cwd = b.session().project.clone().filter(|p| p != ID);
    stats.tail = Some(TailState { cwd, ..TailState::default() });
    if let Some(s) = b.finish() {
        out.session(s);
    }
    Ok(stats)
}

/// A legacy metadata line: id (only on a full read), title, project, times.
fn metadata(b: &mut SessionBuilder, v: &Value, set_id: bool) {
    if set_id {
        if let Some(id) = trimmed(v.get("id").and_then(Value::as_str)) {
            b.set_id(id);
        }
    }
    let s = b.session_mut();
    if let Some(t) = trimmed(v.get("description").and_then(Value::as_str)) {
        s.title = Some(t);
    }
    if let Some(p) = trimmed(v.get("working_dir").and_then(Value::as_str)) {
        s.project = Some(p);
    }
    for key in ["created_at", "updated_at"] {
        let t = v.get(key).and_then(Timestamp::from_json);
        b.touch(t);
    }
}

fn parse_db(src: &SourceRef, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let (store, mut stats) = sqlite::Db::open(src)?;
    let conn = store.conn();
    let sql_err = |e: rusqlite::Error| store.err(e);
    let scols = store.columns("sessions", &["id"], "a Goose store")?;
    let mcols = store.columns("messages", &["session_id", "role", "content_json"], "a Goose store")?;
    let scol = |n: &str| scols.qualified("s", n);
    let mcol = |n: &str| mcols.qualified("m", n);

    // `messages.id` is AUTOINCREMENT: the sessions with a row past the last read's highest
    // id are the ones to re-read.
    let max_id = sqlite::max_rowid(conn, "messages").map_err(sql_err)?;
    let previous = RowCursor::previous(&mut stats, src, None, max_id);
    stats.cursor = RowCursor::after(&HashMap::new(), max_id);
    let wanted = RowCursor::wanted(previous.as_ref(), conn, &HashMap::new(), "messages", "session_id").map_err(sql_err)?;
    if wanted.as_ref().is_some_and(HashSet::is_empty) {
        return Ok(stats);
    }
    // Probed first: naming a missing `session_type` would fail the whole query.
    let user_only =
        if scols.has("session_type") { " WHERE (s.session_type IS NULL OR s.session_type = '' OR s.session_type = 'user')" } else { "" };
    // Row order, not the page's `created_timestamp` order: Goose appends messages in
    // order, and a NULL `created_timestamp` would sort before the session's first prompt.
    let sql = format!(
        "SELECT s.id, {}, {}, {}, {}, m.role, m.content_json, {}, {} FROM sessions s JOIN messages m ON m.session_id = s.id{user_only} \
         ORDER BY s.id, m.rowid",
        scol("description"),
        scol("working_dir"),
        scol("created_at"),
        scol("updated_at"),
        mcol("created_timestamp"),
        mcol("metadata_json"),
    );
    let mut stmt = conn.prepare(&sql).map_err(sql_err)?;
    let mut rows = stmt.query([]).map_err(sql_err)?;
    let mut current: Option<(String, SessionBuilder, Option<Timestamp>)> = None;
    while let Some(row) = rows.next().map_err(sql_err)? {
        stats.records += 1;
        let text = |i: usize| row.get_ref(i).ok().and_then(|v| sqlite::value_text(v).ok().flatten());
        let Some(id) = text(0) else { continue };
        if wanted.as_ref().is_some_and(|w| !w.contains(&id)) {
            continue;
        }
        if current.as_ref().is_none_or(|(cur, _, _)| *cur != id) {
            if let Some((_, b, _)) = current.take() {
                emit(b, out);
            }
            let mut b = SessionBuilder::new(ID, id.clone(), src.clone());
            let s = b.session_mut();
            s.title = trimmed(text(1).as_deref());
            s.project = Some(trimmed(text(2).as_deref()).unwrap_or_else(|| ID.to_string()));
            let created = row.get_ref(3).ok().and_then(sqlite::value_timestamp);
            let updated = row.get_ref(4).ok().and_then(sqlite::value_timestamp);
            b.touch(created);
            b.touch(updated);
            current = Some((id.clone(), b, updated));
        }
        let Some((_, b, updated)) = current.as_mut() else { continue };
        let Some(role) = text(5).as_deref().and_then(role_of) else { continue };
        let agent_only = text(8)
            .and_then(|m| serde_json::from_str::<Value>(&m).ok())
            .is_some_and(|m| m.get("userVisible").and_then(Value::as_bool) == Some(false));
        if agent_only {
            continue;
        }
        let content = text(6).unwrap_or_default();
        let time = row.get_ref(7).ok().and_then(sqlite::value_timestamp).or(*updated);
        match serde_json::from_str::<Value>(&content) {
            Ok(v) => push_message(b, role, &v, time),
            Err(_) => {
                b.push(Turn::new(role, content.trim()).at(time));
            }
        }
    }
    if let Some((_, b, _)) = current.take() {
        emit(b, out);
    }
    Ok(stats)
}

fn emit(b: SessionBuilder, out: &mut dyn SessionSink) {
    if let Some(s) = b.finish() {
        out.session(s);
    }
}

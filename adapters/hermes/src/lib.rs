//! Hermes (`hermes`): every session in a SQLite database (WAL mode), `<home>/state.db`
//! (Hermes 0.17+, one store at the root of `${HERMES_HOME:-~/.hermes}`) and, from older
//! builds, one `<home>/profiles/<profile>/state.db` per named profile. All are read.
//!
//! No family reader writes this schema, so the adapter reads it itself, through
//! [`deja_core::sqlite::Snapshot`] (a private copy of the database with its `-wal`).
//! One flat `messages` table holds the conversation; Hermes 0.19 adds a `sessions` table
//! (working directory, title, continuation parent, the system prompt). Older stores have
//! only `messages`, which [`sqlite::table_columns`] detects.
//!
//! | row | Turn | rule |
//! | --- | --- | --- |
//! | `role = 'user'`, non-empty `content` | `User` | |
//! | `role = 'assistant'`, non-empty `content` | `Assistant` | |
//! | `role = 'assistant'`, `reasoning` / `reasoning_content` | `Reasoning` | only with `include_reasoning`; one turn (0.19.0 writes the same text to both, so the first non-NULL is read) |
//! | `role = 'assistant'`, `tool_calls` JSON | `ToolCall` each | `function.name`; `terminal` is the shell, its `arguments.command` the command; `read_file` / `write_file` / `patch` touch `arguments.path` (read / write / edit), `patch` in `replace` mode is an edit span (`old_string` → `new_string`), in `patch` mode (a V4A patch) its `*** Add/Update/Delete File:` paths are the files |
//! | `role = 'tool'`, `content` `{"output","exit_code","error"}` | folded into its call | by `tool_call_id`; output, exit status, `error` marks a failure; no call → `ToolOutput` |
//! | `role = 'tool'`, other JSON (`write_file`: `{"bytes_written", "files_modified", …}`; a refused call: `{"error"}` alone) | folded into its call | no `output` key: the JSON text itself is the output; `error` alone marks a failure |
//! | `role = 'tool'`, `content` NULL (older builds) | skipped | nothing to fold |
//! | `sessions.system_prompt` | not read | harness text, never a turn |
//! | any other role | skipped | counted |
//!
//! **Session.** id = `session_id`; project = `sessions.cwd`, else the profile name for a
//! profile store, else `hermes`; title = `sessions.title` (else deja derives it from the
//! first prompt); a `parent_session_id` (a continuation) is the parent, kind
//! `continuation`. Times are REAL epoch seconds with a fraction (kept to the millisecond).
//!
//! **Cursor.** `messages.id` is `AUTOINCREMENT`, so the highest id read is the cursor
//! (core's `RowCursor`, its mark only); given it, only the sessions owning a row above it
//! are re-read, each whole. A store whose highest id is below the cursor was replaced:
//! everything is read.
//!
//! **Variables.** The home is `${HERMES_HOME:-~/.hermes}`; the spec's overrides follow
//! deja's rule: `DEJA_HERMES_ROOT` (its older name `DEJA_HERMES_HOME` too) names the
//! directory holding `state.db`, `DEJA_HERMES_DB` that database file (a directory means
//! the `state.db` in it), and `DEJA_HERMES_PROFILES_ROOT` the `profiles` directory, which
//! otherwise moves with the home. Hermes' PostgreSQL backend (`DEJA_HERMES_PG_DSN` on the
//! page) is not read.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use deja_core::discover::subdirs;
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::sqlite::{self, RowCursor};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, ExitStatus, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Role,
    SessionBuilder, SessionSink, SourceRef, StoreEnv, Timestamp, ToolMap, ToolUse, Turn,
};
use deja_core::{Edit, FileAction, FileTouch};
use rusqlite::Connection;
use serde_json::Value;
mod wiring;

const ID: &str = "hermes";
const DB_NAME: &str = "state.db";
/// The source key of a per-profile store: `profile=<name>` (the profile stands in for a
/// project when the store has no `sessions.cwd`).
const PROFILE_KEY: &str = "profile=";

/// Hermes' tool names: `terminal` is its shell; `read_file`, `patch` and `write_file` its
/// file tools, each with `arguments.path` (seen in the 0.19.0 tool list; the page names none).
pub const TOOLS: ToolMap = ToolMap { shell: &["terminal"], read: &["read_file"], edit: &["patch"], write: &["write_file"] };

/// The most of an edit's old and new text kept on a turn.
const MAX_EDIT_BYTES: usize = 32 * 1024;

/// The Hermes adapter.
pub struct HermesFormat;

deja_core::inventory::submit!(deja_core::Registration(&HermesFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Hermes",
    container: "SQLite (WAL): `state.db` at the Hermes home and one per profile in older builds; a flat `messages` table, \
        plus a `sessions` table since 0.19",
    store: StoreSpec::new(&[
        Store { name: "", roots: &[Root::any("${HERMES_HOME:-~/.hermes}")], layout: Layout::Database(DB_NAME) },
        // One database per profile, under the home (wherever deja's override puts it).
        Store {
            name: "profiles",
            roots: &[Root::any("@/profiles")],
            layout: Layout::Custom { shape: "<profile>/state.db", walk: Some(walk_profiles) },
        },
    ])
    .aliases(&[("DEJA_HERMES_HOME", "DEJA_HERMES_ROOT")]),
    needs: &[],
    format_summary: "Hermes keeps its sessions in SQLite (`state.db`, WAL mode) at the root of its home and, in older \
        builds, one per profile under `profiles/<profile>/`. One `messages` row per message (`session_id`, `role`, \
        `content`, REAL epoch-second `timestamp`): user and assistant rows with text are speech; an assistant row's \
        `tool_calls` JSON holds its calls (`terminal` is the shell, `arguments.command` the command; `read_file`, \
        `write_file` and `patch` touch `arguments.path`), and the `tool` row with the same `tool_call_id` carries \
        `{\"output\", \"exit_code\", \"error\"}` (other tools' results are other JSON, kept as their output). Since 0.19 a `sessions` \
        row gives the working directory (`cwd`), the title and the continuation parent; its `system_prompt` is \
        harness text and never read. The database is read through a private copy with its WAL, incrementally by \
        `messages.id`. The PostgreSQL backend is not read.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "`mcp_servers: deja: {command: \"<exe>\", args: [mcp], enabled: true}` in `${HERMES_HOME:-~/.hermes}/config.yaml`, \
             edited textually (`hermes mcp test deja` needs the `hermes-agent[mcp]` extra)",
        ),
        auto_recall: Capability::Planned(
            "a plugin `<home>/plugins/deja/` (`plugin.yaml` + `__init__.py`) whose `pre_llm_call` hook returns \
             `{\"context\": …}` from `deja hook-session-start --plain` on the first turn and `deja hook-prompt --plain` \
             after (appended to the user message), enabled under `plugins: enabled: [deja]` in `config.yaml`",
        ),
        skill: Capability::Planned("`<home>/skills/deja-history/SKILL.md` (top level, not inside the plugin)"),
        command: Capability::Planned("`/deja`, registered by the plugin with `ctx.register_command`"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Always(ResumeSpec::anywhere(&["hermes", "--resume", "{id}"])),
        handoff: Handoff::Paste("Hermes documents no start-with-prompt flag"),
    },
};

/// Each profile's database, keyed by the profile's name.
fn walk_profiles(root: &Path, _env: &StoreEnv, found: &mut Discovery) {
    for dir in subdirs(root) {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
        add_db(&dir.join(DB_NAME), name.as_deref(), found);
    }
}

impl HarnessFormat for HermesFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::HermesWiring)
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        parse_db(src, opts, out)
    }
}

/// Adds `db` (its `-wal` a part) when it is a non-empty regular file, keyed with its
/// profile; records the place looked at either way.
fn add_db(db: &Path, profile: Option<&str>, found: &mut Discovery) {
    if !found.looked_at(db) || !std::fs::metadata(db).is_ok_and(|m| m.is_file() && m.len() > 0) {
        return;
    }
    let mut src = SourceRef::file(db);
    for part in sqlite::parts(db) {
        src = src.with_part(part);
    }
    if let Some(p) = profile {
        src = src.keyed(format!("{PROFILE_KEY}{p}"));
    }
    found.sources.push(src);
}

/// What a `sessions` row says about its session.
#[derive(Default)]
struct SessionRow {
    cwd: Option<String>,
    title: Option<String>,
    parent: Option<String>,
    started: Option<Timestamp>,
}

fn parse_db(src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let db = src.path.as_path();
    let (store, mut stats) = sqlite::Db::open(src)?;
    let conn = store.conn();
    let sql_err = |e: rusqlite::Error| store.err(e);
    let cols = store.columns("messages", &["session_id", "role", "content", "timestamp"], "a Hermes store")?;
    let col = |name: &str| cols.col(name);

    // Messages are only ever added: the sessions with a row past the last read's highest
    // id are the ones to re-read.
    let max_id = sqlite::max_rowid(conn, "messages").map_err(sql_err)?;
    let previous = RowCursor::previous(&mut stats, src, None, max_id);
    stats.cursor = RowCursor::after(&HashMap::new(), max_id);
    let wanted = RowCursor::wanted(previous.as_ref(), conn, &HashMap::new(), "messages", "session_id").map_err(sql_err)?;
    if wanted.as_ref().is_some_and(HashSet::is_empty) {
        return Ok(stats);
    }

    let sessions = read_sessions(conn).map_err(sql_err)?;
    let profile = src.key.as_deref().and_then(|k| k.strip_prefix(PROFILE_KEY));
    let fallback_project = profile.unwrap_or(ID);
    let reasoning = match (cols.has("reasoning"), cols.has("reasoning_content")) {
        (true, true) => "coalesce(\"reasoning\", \"reasoning_content\")".to_string(),
        (true, false) => "\"reasoning\"".to_string(),
        (false, true) => "\"reasoning_content\"".to_string(),
        (false, false) => "NULL".to_string(),
    };
    let query = format!(
        "SELECT session_id, role, content, timestamp, {}, {}, {}, {reasoning} FROM messages ORDER BY session_id, timestamp, rowid",
        col("tool_call_id"),
        col("tool_calls"),
        col("tool_name"),
    );
    let mut stmt = conn.prepare(&query).map_err(sql_err)?;
    let mut rows = stmt.query([]).map_err(sql_err)?;
    let mut current: Option<(String, SessionBuilder)> = None;
    while let Some(row) = rows.next().map_err(sql_err)? {
        stats.records += 1;
        let Some(session_id) = sqlite::value_text(row.get_ref(0).map_err(sql_err)?).ok().flatten() else {
            stats.skip(|| format!("{}: a message row without a session id", db.display()));
            continue;
        };
        if wanted.as_ref().is_some_and(|w| !w.contains(&session_id)) {
            continue;
        }
        if current.as_ref().is_none_or(|(id, _)| *id != session_id) {
            if let Some((_, b)) = current.take() {
                emit(b, out);
            }
            let mut b = SessionBuilder::new(ID, session_id.clone(), src.clone());
            let meta = sessions.iter().find(|(id, _)| *id == session_id).map(|(_, s)| s);
            let s = b.session_mut();
            s.project = Some(meta.and_then(|m| m.cwd.clone()).unwrap_or_else(|| fallback_project.to_string()));
            if let Some(m) = meta {
                s.title = m.title.clone();
                if let Some(p) = &m.parent {
                    s.parent = Some(p.clone());
                    s.kind = Some("continuation".to_string());
                }
            }
            b.touch(meta.and_then(|m| m.started));
            current = Some((session_id.clone(), b));
        }
        let Some((_, b)) = current.as_mut() else { continue };
        let text = |i: usize| row.get_ref(i).ok().and_then(|v| sqlite::value_text(v).ok().flatten());
        let role = text(1).unwrap_or_default();
        let content = text(2).unwrap_or_default();
        let time = row.get_ref(3).ok().and_then(sqlite::value_timestamp);
        match role.as_str() {
            "user" => {
                b.push(Turn::new(Role::User, content.trim()).at(time));
            }
            "assistant" => {
                if opts.include_reasoning {
                    if let Some(r) = text(7).filter(|r| !r.trim().is_empty()) {
                        b.push(Turn::new(Role::Reasoning, r.trim()).at(time));
                    }
                }
                b.push(Turn::new(Role::Assistant, content.trim()).at(time));
                if let Some(calls) = text(5).filter(|c| !c.trim().is_empty()) {
                    push_calls(b, &calls, time, db, &mut stats);
                }
            }
            "tool" => {
                let call_id = text(4).unwrap_or_default();
                if content.is_empty() {
                    // Older builds keep no result text in the row.
                    continue;
                }
                let (output, exit, is_error) = tool_result(&content);
                if call_id.is_empty() || !b.complete_call(&call_id, &output, is_error, exit.clone(), time) {
                    if let Some(idx) = b.push_orphan_result(&call_id, &output, is_error, exit, time) {
                        if let (Some(name), Some(turn)) = (text(6), b.session_mut().turns.get_mut(idx)) {
                            if let Some(tool) = turn.tool.as_mut() {
                                tool.name = name;
                            }
                        }
                    }
                }
            }
            other => {
                stats.skip(|| format!("{}: session {session_id}: a row with role {other:?}", db.display()));
            }
        }
    }
    if let Some((_, b)) = current.take() {
        emit(b, out);
    }
    Ok(stats)
}

fn emit(b: SessionBuilder, out: &mut dyn SessionSink) {
    if let Some(s) = b.finish() {
        out.session(s);
    }
}

/// The `sessions` table, when the store has one (Hermes 0.19+), as `(id, row)` pairs.
fn read_sessions(conn: &Connection) -> rusqlite::Result<Vec<(String, SessionRow)>> {
    let cols: HashSet<String> = sqlite::table_columns(conn, "sessions")?.into_iter().collect();
    if !cols.contains("id") {
        return Ok(Vec::new());
    }
    let col = |name: &str| if cols.contains(name) { format!("\"{name}\"") } else { "NULL".to_string() };
    let sql = format!(
        "SELECT id, {}, {}, {}, {} FROM sessions ORDER BY id",
        col("cwd"),
        col("title"),
        col("parent_session_id"),
        col("started_at")
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let text = |i: usize| {
            row.get_ref(i).ok().and_then(|v| sqlite::value_text(v).ok().flatten()).map(|t| t.trim().to_string()).filter(|t| !t.is_empty())
        };
        let Some(id) = text(0) else { continue };
        let started = row.get_ref(4).ok().and_then(sqlite::value_timestamp);
        out.push((id, SessionRow { cwd: text(1), title: text(2), parent: text(3), started }));
    }
    Ok(out)
}

/// One call per `tool_calls` entry: `function.name`, and for the shell its
/// `arguments.command` (`arguments` is a JSON string, sometimes an object).
fn push_calls(b: &mut SessionBuilder, calls: &str, time: Option<Timestamp>, db: &Path, stats: &mut ParseStats) {
    let Ok(Value::Array(calls)) = serde_json::from_str::<Value>(calls) else {
        stats.skip(|| format!("{}: tool_calls is not a JSON array", db.display()));
        return;
    };
    for call in &calls {
        let id = call.get("id").and_then(Value::as_str).or_else(|| call.get("call_id").and_then(Value::as_str));
        let Some(name) = call.pointer("/function/name").and_then(Value::as_str) else {
            stats.skip(|| format!("{}: a tool call without a function name", db.display()));
            continue;
        };
        let args = match call.pointer("/function/arguments") {
            Some(Value::String(s)) => serde_json::from_str::<Value>(s).unwrap_or(Value::Null),
            Some(v) => v.clone(),
            None => Value::Null,
        };
        let command = TOOLS.shell.contains(&name).then(|| args.get("command").and_then(Value::as_str).map(str::to_string)).flatten();
        let mut turn = Turn::new(Role::ToolCall, "").at(time);
        turn.tool = Some(ToolUse { name: name.to_string(), command, ..ToolUse::default() });
        file_work(name, &args, &mut turn);
        b.push_call(id, turn);
    }
}

/// A `tool` row's content: `{"output", "exit_code", "error"}` JSON, or plain text.
fn tool_result(content: &str) -> (String, Option<ExitStatus>, bool) {
    let Ok(Value::Object(v)) = serde_json::from_str::<Value>(content) else {
        return (content.trim().to_string(), None, false);
    };
    let error_only = v.get("error").and_then(Value::as_str).map(str::trim).filter(|e| !e.is_empty());
    if !v.contains_key("output") && !v.contains_key("exit_code") {
        // Not the shell's result (0.19.0 `write_file` answers `{"bytes_written", "files_modified",
        // …}`; a refused call `{"error": …}` alone): the JSON itself is all the result there is.
        return match error_only {
            Some(e) if v.len() == 1 => (e.to_string(), None, true),
            _ => (content.trim().to_string(), None, error_only.is_some()),
        };
    }
    let mut output = match v.get("output") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    let exit = v.get("exit_code").and_then(Value::as_i64).map(ExitStatus::Code);
    let error = v.get("error").and_then(Value::as_str).map(str::trim).filter(|e| !e.is_empty());
    if let Some(e) = error {
        if !output.is_empty() {
            output.push('\n');
        }
        output.push_str(e);
    }
    (output, exit, error.is_some())
}

/// The files a file tool's call touches, and `patch`'s edit span.
fn file_work(name: &str, args: &Value, turn: &mut Turn) {
    let Some(action) = TOOLS.file_action(name) else { return };
    let path = args.get("path").and_then(Value::as_str).map(str::trim).filter(|p| !p.is_empty());
    let mode_patch = name == "patch" && args.get("mode").and_then(Value::as_str) == Some("patch");
    if mode_patch {
        // A V4A patch names its files on `*** <Verb> File: <path>` lines.
        let body = args.get("patch").and_then(Value::as_str).unwrap_or_default();
        for line in body.lines() {
            let line = line.trim();
            let touched =
                [("*** Add File: ", FileAction::Write), ("*** Update File: ", FileAction::Edit), ("*** Delete File: ", FileAction::Delete)]
                    .into_iter()
                    .find_map(|(prefix, action)| line.strip_prefix(prefix).map(|p| (p.trim(), action)));
            if let Some((p, action)) = touched.filter(|(p, _)| !p.is_empty()) {
                if !turn.files.iter().any(|f| f.path == p) {
                    turn.files.push(FileTouch { path: p.to_string(), action });
                }
            }
        }
        return;
    }
    let Some(path) = path else { return };
    turn.files.push(FileTouch { path: path.to_string(), action });
    if name == "patch" {
        if let Some(old) = args.get("old_string").and_then(Value::as_str) {
            let mut old = old.to_string();
            deja_core::model::cap_text(&mut old, MAX_EDIT_BYTES);
            let new = args.get("new_string").and_then(Value::as_str).map(|n| {
                let mut n = n.to_string();
                deja_core::model::cap_text(&mut n, MAX_EDIT_BYTES);
                n
            });
            turn.edit = Some(Edit { path: path.to_string(), old, new });
        }
    }
}

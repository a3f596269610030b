//! Devin CLI (`devin`): Cognition's terminal agent. Its store is `<root>/cli/` —
//! `sessions.db`, a SQLite session index (WAL) with a chat-message copy of each
//! conversation in `message_nodes`, and `transcripts/<session-id>.json`, one whole JSON
//! document per session in the Agent Trajectory Interchange Format (ATIF) shape,
//! rewritten as the session grows. `<root>` is `~/Library/Application Support/devin` on
//! macOS and `${XDG_DATA_HOME:-~/.local/share}/devin` elsewhere.
//!
//! No family reader writes either shape, so the adapter reads both itself: the database
//! through [`deja_core::sqlite::Snapshot`], the transcripts as JSON, with the generic
//! chores of `deja_core::family::json_docs` (string-or-blocks text, string-or-object
//! arguments, a tool call turned into command/files/edit). One source is the database
//! with its `-wal` and every transcript as parts; the transcript is read when there is
//! one (the two are copies of one conversation), else the session's `message_nodes`.
//!
//! Transcript `steps[]`:
//!
//! | step | Turn | rule |
//! | --- | --- | --- |
//! | `source: "user"`, `message` string or `text` blocks | `User` | |
//! | `source: "agent"`, `message` string or `text` blocks | `Assistant` | |
//! | `message[]` `thinking` block | `Reasoning` | only with `include_reasoning` |
//! | `message[]` `tool_use` item, step-level `tool_use[]` (`id`, `name`, `input`) | `ToolCall` | command/files/edit from the input's keys (below) |
//! | `message[]` `tool_result` item, step-level `tool_result[]` (`tool_use_id`, `content`, `is_error`) | folded into its call | no call in the file → `ToolOutput` |
//! | `source: "system"` | skipped | boot notices |
//! | `metrics`, root `final_metrics` | not read | usage |
//! | a step that is not an object, any other `source` | skipped | counted |
//!
//! `message_nodes.chat_message` (ordered by `created_at`, `row_id`):
//!
//! | `role` | Turn | rule |
//! | --- | --- | --- |
//! | `user` | `User` | `content` string or blocks |
//! | `assistant` / `agent` | `Assistant`; `thinking` → `Reasoning` on request | OpenAI `tool_calls[]` (`function.arguments` a JSON string) → `ToolCall` |
//! | `tool` | folded into its call by `tool_call_id` | else `ToolOutput` |
//! | `system` | skipped | |
//! | not JSON, any other role | skipped | counted |
//!
//! **Tools.** Devin documents neither its tool names nor their arguments, so a call is
//! decoded by its input: `command`/`cmd` → a shell call; a `path`/`file_path` with
//! `old_string` (or an edit-like name) → an edit span; with `content` (or a write-like
//! name) → a write; else a read; search/list-like names only keep their name.
//!
//! **Session.** id = `sessions.id` (the transcript's file stem); `hidden = 1` rows are
//! Devin's internal sessions and are skipped; title = `sessions.title`; project =
//! `sessions.working_directory`, else the transcript's `working_directory`, `cwd`,
//! `agent.working_directory`, `agent.cwd` or first `workspace_dirs[]` entry. SQLite times
//! are Unix epoch **seconds** (a value that only makes sense as milliseconds is dropped,
//! not scaled); transcript times are ISO-8601. The model has no place in the Session
//! model and is not kept. A transcript with no row in the database is read as well.
//!
//! **Cursor.** Core's `RowCursor`: each session's newest activity or transcript mtime,
//! the highest `message_nodes.row_id`, and the recent sessions' states; given it, only
//! sessions active since (and not as recorded), with newer nodes or with a rewritten
//! transcript are re-read, each whole.
//!
//! **Variables.** Devin has no known relocation variable. `DEJA_DEVIN_ROOT` names the
//! sessions root, the `cli` directory holding `sessions.db` and `transcripts/`; `XDG_DATA_HOME` moves the
//! Linux root (an assumption on the page). Without `sessions.db`, each transcript is a
//! source of its own.
//!
//! **Injected text.** The only harness text in a conversation is the `system` step/node,
//! never read, so `injected` is `InjectedText::NONE`.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use deja_core::discover::find_files;
use deja_core::family::json_docs::{self, call_turn, first_str, json_arg, text_blocks, COMMON_KEYS};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::sqlite::{self, RowCursor};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Role,
    SessionBuilder, SessionSink, SourceRef, StoreEnv, Timestamp, ToolMap, Turn,
};
use rusqlite::types::ValueRef;
use rusqlite::Connection;
use serde_json::Value;

const ID: &str = "devin";
const DB_NAME: &str = "sessions.db";
const TRANSCRIPTS: &str = "transcripts";
/// The step keys a time may sit under, first alias first.
const STEP_TIME: &[&str] = &["timestamp", "created_at", "createdAt", "updated_at", "updatedAt"];
/// Generic tool kinds, by the names [`tool_kind`] picks (the call keeps Devin's own name).
const GENERIC: ToolMap = ToolMap { shell: &["shell"], read: &["read"], edit: &["edit"], write: &["write"] };

/// The Devin CLI adapter.
pub struct DevinFormat;

deja_core::inventory::submit!(deja_core::Registration(&DevinFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Devin CLI",
    container: "SQLite (WAL) session index `cli/sessions.db` (`sessions`, `message_nodes`) plus one whole ATIF JSON \
        transcript per session, `cli/transcripts/<id>.json`",
    store: StoreSpec::new(&[Store {
        name: "",
        // Both places on every OS, as Devin's CLI may be either.
        roots: &[Root::any("~/Library/Application Support/devin/cli"), Root::any("${XDG_DATA_HOME:-~/.local/share}/devin/cli")],
        layout: Layout::Custom { shape: "sessions.db, transcripts/<session-id>.json", walk: Some(walk_cli) },
    }]),
    needs: &[],
    format_summary: "The Devin CLI keeps a SQLite index `cli/sessions.db` (WAL mode: `sessions` with title, working \
        directory, epoch-second times and a `hidden` flag for internal sessions; `message_nodes` with one chat-message \
        JSON per node) and one JSON transcript per session, `cli/transcripts/<id>.json`, rewritten as it grows: \
        `steps[]` with `source` `user`/`agent`/`system`, a string-or-blocks `message` (text, thinking, `tool_use`, \
        `tool_result` blocks) and step-level `tool_use[]`/`tool_result[]`. The transcript is read when present, else \
        the `message_nodes` copy (OpenAI-shaped `tool_calls`, `tool` results by `tool_call_id`). Tool names are not \
        documented, so calls are decoded by their input keys (`command`, `file_path`, `old_string`, `content`). The \
        database is read through a private copy with its WAL, incrementally by activity time, node row and \
        transcript mtime.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::Unknown, handoff: Handoff::Paste("the page gives no start-with-prompt command") },
};

/// One CLI directory as its sources (see [`add_store`]).
fn walk_cli(root: &Path, _env: &StoreEnv, found: &mut Discovery) {
    add_store(root, found);
}

impl HarnessFormat for DevinFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        if src.path.extension().is_some_and(|e| e == "json") {
            return parse_lone_transcript(src, opts, out);
        }
        parse_db(src, opts, out)
    }
}

/// The transcripts in `dir/transcripts`, sorted.
fn transcripts(dir: &Path) -> Vec<PathBuf> {
    let mut files = find_files(&dir.join(TRANSCRIPTS), 0, &|n| n.ends_with(".json"));
    files.sort();
    files
}

/// One source for the `cli/` directory: the database with its `-wal` and every
/// transcript as parts; without a database, one source per transcript.
fn add_store(dir: &Path, found: &mut Discovery) {
    let db = dir.join(DB_NAME);
    let files = transcripts(dir);
    if std::fs::metadata(&db).is_ok_and(|m| m.is_file() && m.len() > 0) {
        let mut src = SourceRef::file(&db);
        for part in sqlite::parts(&db).into_iter().chain(files) {
            src = src.with_part(part);
        }
        found.sources.push(src);
    } else {
        found.sources.extend(files.into_iter().map(SourceRef::file));
    }
}

/// What a `sessions` row says about its session.
#[derive(Default)]
struct SessionRow {
    title: Option<String>,
    cwd: Option<String>,
    created: Option<Timestamp>,
    activity: Option<i64>,
    hidden: bool,
}

/// Epoch seconds from SQLite; a value only sensible as milliseconds is dropped, not scaled.
fn epoch_secs(v: ValueRef<'_>) -> Option<i64> {
    sqlite::value_i64(v).filter(|n| *n > 0 && *n < 100_000_000_000)
}

fn secs_time(v: ValueRef<'_>) -> Option<Timestamp> {
    match v {
        ValueRef::Text(t) if std::str::from_utf8(t).is_ok_and(|s| s.trim().parse::<f64>().is_err()) => sqlite::value_timestamp(v),
        _ => epoch_secs(v).map(|n| Timestamp(n * 1000)),
    }
}

fn parse_db(src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let db = src.path.as_path();
    let dir = db.parent().unwrap_or(Path::new("."));
    let (store, mut stats) = sqlite::Db::open(src)?;
    let conn = store.conn();
    let sql_err = |e: rusqlite::Error| store.err(e);
    let sessions = read_sessions(conn)
        .map_err(sql_err)?
        .ok_or_else(|| FormatError::corrupt(db, "not a Devin store (no sessions.id); schema changed?"))?;
    let node_cols: HashSet<String> = sqlite::table_columns(conn, "message_nodes").map_err(sql_err)?.into_iter().collect();
    let has_nodes = ["session_id", "chat_message"].iter().all(|c| node_cols.contains(*c));

    // Every transcript's id and mtime.
    let files: Vec<(String, PathBuf, i64)> = transcripts(dir)
        .into_iter()
        .filter_map(|p| {
            let id = p.file_stem()?.to_string_lossy().into_owned();
            let mtime = json_docs::file_mtime(&p).map_or(0, |t| t.0);
            Some((id, p, mtime))
        })
        .collect();
    let mut ids: BTreeSet<String> = sessions.keys().cloned().collect();
    ids.extend(files.iter().map(|f| f.0.clone()));
    // Each session's state for core's row cursor: its newest activity (seconds, in ms) or
    // its transcript's mtime, whichever is later, and the transcript's mtime (a rewritten
    // transcript changes it). `message_nodes.row_id` is the rowid: the mark.
    let states: HashMap<String, sqlite::SessionState> = ids
        .iter()
        .map(|id| {
            let activity = sessions.get(id).and_then(|s| s.activity).map(|a| a * 1000);
            let mtime = files.iter().find(|f| f.0 == *id).map(|f| f.2);
            (id.clone(), (activity.max(mtime), mtime.unwrap_or(0), 0))
        })
        .collect();
    let newest = states.values().filter_map(|s| s.0).max();
    // No usable mark without the table (or in a table without rowids): times alone.
    let node_mark = if has_nodes { sqlite::max_rowid(conn, "message_nodes").ok() } else { None };
    let max_row = node_mark.unwrap_or(Some(0));
    let previous = RowCursor::previous(&mut stats, src, newest, max_row);
    stats.cursor = RowCursor::after(&states, max_row);
    let wanted = if node_mark.is_some() {
        RowCursor::wanted(previous.as_ref(), conn, &states, "message_nodes", "session_id").map_err(sql_err)?
    } else {
        previous.map(|c| c.touched_since(&states))
    };
    if let Some(changed) = wanted {
        ids.retain(|id| changed.contains(id));
    }
    ids.retain(|id| !sessions.get(id).is_some_and(|s| s.hidden));
    if ids.is_empty() {
        return Ok(stats);
    }
    let nodes = if has_nodes { read_nodes(conn, &node_cols).map_err(sql_err)? } else { HashMap::new() };

    for id in ids {
        let row = sessions.get(&id);
        let mut b = SessionBuilder::new(ID, id.clone(), src.clone());
        if let Some(r) = row {
            let s = b.session_mut();
            s.title = r.title.clone();
            s.project = r.cwd.clone();
            b.touch(r.created);
            b.touch(r.activity.map(|a| Timestamp(a * 1000)));
        }
        let transcript = files.iter().find(|f| f.0 == id).map(|f| f.1.as_path());
        let doc = match transcript.map(read_doc) {
            Some(Ok(doc)) => Some(doc),
            Some(Err(why)) => {
                stats.problem(format!("{why}; read its message_nodes instead"));
                None
            }
            None => None,
        };
        match doc {
            Some(doc) => read_transcript(&mut b, &doc, opts, &mut stats, &id),
            None => {
                for (message, time) in nodes.get(&id).map(Vec::as_slice).unwrap_or_default() {
                    stats.records += 1;
                    read_node(&mut b, message, *time, opts, &mut stats, &id);
                }
            }
        }
        if let Some(s) = b.finish() {
            out.session(s);
        }
    }
    Ok(stats)
}

/// A transcript with no database beside it: the file stem is the id.
fn parse_lone_transcript(src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let path = src.path.as_path();
    let bytes = std::fs::read(path).map_err(|e| FormatError::io(path, e))?;
    let mut stats = ParseStats { bytes_read: bytes.len() as u64, ..ParseStats::default() };
    let doc = parse_doc(path, &bytes).map_err(|why| FormatError::corrupt(path, why))?;
    let id = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut b = SessionBuilder::new(ID, id.clone(), src.clone());
    read_transcript(&mut b, &doc, opts, &mut stats, &id);
    if let Some(s) = b.finish() {
        out.session(s);
    }
    Ok(stats)
}

fn read_doc(path: &Path) -> Result<Value, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_doc(path, &bytes)
}

fn parse_doc(path: &Path, bytes: &[u8]) -> Result<Value, String> {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim_start_matches('\u{feff}');
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(_) => Err(format!("{}: the transcript is not a JSON object", path.display())),
        Err(e) => Err(format!("{}: the transcript is not JSON ({e})", path.display())),
    }
}

/// The non-blank string at `pointer`, trimmed.
fn str_at<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty())
}

/// A transcript's own working directory (for a session whose row has none).
fn transcript_cwd(doc: &Value) -> Option<String> {
    let direct = ["/working_directory", "/cwd", "/agent/working_directory", "/agent/cwd"].iter().find_map(|p| str_at(doc, p));
    let first_dir = || {
        let first = doc.get("workspace_dirs")?.as_array()?.first()?;
        first.as_str().map(str::trim).filter(|s| !s.is_empty()).or_else(|| first_str(first, &["root_path", "path"]).map(str::trim))
    };
    direct.or_else(first_dir).map(str::to_string)
}

fn read_transcript(b: &mut SessionBuilder, doc: &Value, opts: &ParseOptions, stats: &mut ParseStats, id: &str) {
    if b.session().project.is_none() {
        b.session_mut().project = transcript_cwd(doc);
    }
    for key in ["/created_at", "/updated_at"] {
        b.touch(str_at(doc, key).and_then(Timestamp::parse_str));
    }
    let cwd = b.session().project.clone();
    let steps = doc.get("steps").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    for step in steps {
        stats.records += 1;
        if !step.is_object() {
            stats.skip(|| format!("session {id}: a step that is not an object"));
            continue;
        }
        let time = STEP_TIME.iter().find_map(|k| step.get(*k).and_then(Value::as_str)).and_then(Timestamp::parse_str);
        let role = match step.get("source").and_then(Value::as_str) {
            Some("system") => continue,
            Some("user") => Role::User,
            Some("agent" | "assistant") => Role::Assistant,
            other => {
                stats.skip(|| format!("session {id}: a step with source {other:?}"));
                continue;
            }
        };
        let message = step.get("message");
        if opts.include_reasoning {
            for block in blocks(message).filter(|b| b.get("type").and_then(Value::as_str) == Some("thinking")) {
                if let Some(t) = str_at(block, "/thinking").or_else(|| str_at(block, "/text")) {
                    b.push(Turn::new(Role::Reasoning, t).at(time));
                }
            }
        }
        b.push(Turn::new(role, text_blocks(message)).at(time));
        let item_calls = blocks(message).filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"));
        let step_calls = step.get("tool_use").and_then(Value::as_array).into_iter().flatten();
        for call in item_calls.chain(step_calls) {
            let Some(name) = str_at(call, "/name") else {
                stats.skip(|| format!("session {id}: a tool_use without a name"));
                continue;
            };
            let input = json_arg(call.get("input"));
            push_call(b, call.get("id").and_then(Value::as_str), name, &input, cwd.as_deref(), time);
        }
        let item_results = blocks(message).filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"));
        let step_results = step.get("tool_result").and_then(Value::as_array).into_iter().flatten();
        for result in item_results.chain(step_results) {
            let call_id = result.get("tool_use_id").and_then(Value::as_str).unwrap_or_default();
            let is_error = result.get("is_error").and_then(Value::as_bool).unwrap_or(false);
            push_result(b, call_id, &text_blocks(result.get("content")), is_error, time);
        }
    }
}

/// The items of a block-array `message` (none for a string).
fn blocks(message: Option<&Value>) -> impl Iterator<Item = &Value> {
    message.and_then(Value::as_array).into_iter().flatten()
}

fn push_call(b: &mut SessionBuilder, call_id: Option<&str>, name: &str, input: &Value, cwd: Option<&str>, time: Option<Timestamp>) {
    let mut turn = call_turn(&GENERIC, &COMMON_KEYS, tool_kind(name, input), input, cwd, time);
    if let Some(tool) = turn.tool.as_mut() {
        tool.name = name.to_string();
    }
    b.push_call(call_id, turn);
}

fn push_result(b: &mut SessionBuilder, call_id: &str, output: &str, is_error: bool, time: Option<Timestamp>) {
    if call_id.is_empty() || !b.complete_call(call_id, output, is_error, None, time) {
        b.push_orphan_result(call_id, output, is_error, None, time);
    }
}

/// Which [`GENERIC`] kind a call of `name` with `input` is (Devin's tool names are not
/// documented, so the input's keys decide, helped by the name).
fn tool_kind(name: &str, input: &Value) -> &'static str {
    if first_str(input, COMMON_KEYS.command).is_some() {
        return "shell";
    }
    let n = name.to_ascii_lowercase();
    if first_str(input, COMMON_KEYS.path).is_none() || ["search", "grep", "glob", "find", "list"].iter().any(|w| n.contains(w)) {
        return "other";
    }
    if first_str(input, COMMON_KEYS.old).is_some() || n.contains("edit") || n.contains("replace") {
        "edit"
    } else if n.contains("write") || n.contains("create") || input.get("content").is_some_and(Value::is_string) {
        "write"
    } else {
        "read"
    }
}

fn read_node(b: &mut SessionBuilder, message: &str, time: Option<Timestamp>, opts: &ParseOptions, stats: &mut ParseStats, id: &str) {
    let Ok(m @ Value::Object(_)) = serde_json::from_str::<Value>(message) else {
        stats.skip(|| format!("session {id}: a chat_message that is not a JSON object"));
        return;
    };
    match m.get("role").and_then(Value::as_str) {
        Some("system") => {}
        Some("user") => {
            b.push(Turn::new(Role::User, text_blocks(m.get("content"))).at(time));
        }
        Some("assistant" | "agent") => {
            if opts.include_reasoning {
                if let Some(t) = str_at(&m, "/thinking") {
                    b.push(Turn::new(Role::Reasoning, t).at(time));
                }
            }
            b.push(Turn::new(Role::Assistant, text_blocks(m.get("content"))).at(time));
            for call in m.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                let Some(name) = str_at(call, "/function/name") else {
                    stats.skip(|| format!("session {id}: a tool call without a function name"));
                    continue;
                };
                let input = json_arg(call.pointer("/function/arguments"));
                let cwd = b.session().project.clone();
                push_call(b, call.get("id").and_then(Value::as_str), name, &input, cwd.as_deref(), time);
            }
        }
        Some("tool") => {
            let call_id = m.get("tool_call_id").and_then(Value::as_str).unwrap_or_default();
            push_result(b, call_id, &text_blocks(m.get("content")), false, time);
        }
        other => stats.skip(|| format!("session {id}: a chat_message with role {other:?}")),
    }
}

/// The `sessions` table by id; `None` when there is no `sessions.id`.
fn read_sessions(conn: &Connection) -> rusqlite::Result<Option<HashMap<String, SessionRow>>> {
    let cols: HashSet<String> = sqlite::table_columns(conn, "sessions")?.into_iter().collect();
    if !cols.contains("id") {
        return Ok(None);
    }
    let col = |name: &str| if cols.contains(name) { format!("\"{name}\"") } else { "NULL".to_string() };
    let sql = format!(
        "SELECT id, {}, {}, {}, {}, {} FROM sessions",
        col("title"),
        col("working_directory"),
        col("created_at"),
        col("last_activity_at"),
        col("hidden")
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    let mut out = HashMap::new();
    while let Some(row) = rows.next()? {
        let text = |i: usize| {
            row.get_ref(i).ok().and_then(|v| sqlite::value_text(v).ok().flatten()).map(|t| t.trim().to_string()).filter(|t| !t.is_empty())
        };
        let Some(id) = text(0) else { continue };
        let hidden = row.get_ref(5).ok().and_then(sqlite::value_i64).is_some_and(|h| h != 0);
        let created = row.get_ref(3).ok().and_then(secs_time);
        let activity = row.get_ref(4).ok().and_then(secs_time).map(|t| t.0 / 1000);
        out.insert(id, SessionRow { title: text(1), cwd: text(2), created, activity, hidden });
    }
    Ok(Some(out))
}

/// Each session's nodes: `chat_message` and time, in time order.
type Nodes = HashMap<String, Vec<(String, Option<Timestamp>)>>;

/// Every node's `chat_message` and time, by session, in time order.
fn read_nodes(conn: &Connection, cols: &HashSet<String>) -> rusqlite::Result<Nodes> {
    let col = |name: &str| if cols.contains(name) { format!("\"{name}\"") } else { "NULL".to_string() };
    // Older or newer schemas may lack `created_at` or `row_id`: order by what is there.
    let time = if cols.contains("created_at") { "created_at, " } else { "" };
    let row = if cols.contains("row_id") { "row_id" } else { "rowid" };
    let sql = format!("SELECT session_id, chat_message, {} FROM message_nodes ORDER BY session_id, {time}{row}", col("created_at"));
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    let mut out: Nodes = HashMap::new();
    while let Some(row) = rows.next()? {
        let text = |i: usize| row.get_ref(i).ok().and_then(|v| sqlite::value_text(v).ok().flatten());
        let (Some(session), Some(message)) = (text(0), text(1)) else { continue };
        let time = row.get_ref(2).ok().and_then(secs_time);
        out.entry(session).or_default().push((message, time));
    }
    Ok(out)
}

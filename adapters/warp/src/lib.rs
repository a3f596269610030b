//! Warp (`warp`): the Warp terminal's built-in agent ("Agent Mode" conversations), kept in
//! Warp's one SQLite database `warp.sqlite` (WAL mode; Warp keeps it open while it runs).
//! **deja reads the user's prompts only**: the tables Warp persists for a conversation
//! hold the prompts (`ai_queries.input`) and aggregate usage, but no assistant text, no
//! tool call and no tool output, so a Warp session in deja is its prompts in order.
//!
//! No family reader writes this schema, so the adapter reads it itself, through
//! [`deja_core::sqlite::Snapshot`] (a private copy of the database with its `-wal`).
//!
//! | row / field | Turn | rule |
//! | --- | --- | --- |
//! | `ai_queries` row, `input` a JSON array with a `{"Query": {"text": …}}` item | `User` | the `Query.text`s, trimmed; rows by `start_ts`, then rowid |
//! | `ai_queries` row, `input` `''`, `[]` or without `Query.text` (an agent step) | none | its time still counts for the session's times |
//! | `ai_queries` row, `input` not JSON | none | skipped, counted |
//! | `agent_conversations.conversation_data` (token and per-tool usage counts) | not read | aggregates, no per-call record |
//! | `blocks` and every other table (terminal history, settings) | not read | not the agent transcript |
//!
//! **Session.** id = `conversation_id`; project = the first non-empty
//! `ai_queries.working_directory`; no title is stored (deja derives it from the first
//! prompt). Times are zone-less `YYYY-MM-DD HH:MM:SS[.ffffff]` text (RFC 3339 also
//! accepted), read as UTC; started = the first exchange, updated = the last exchange or
//! `agent_conversations.last_modified_at`, whichever is later. A conversation with no
//! prompt yields no session. The model (`ai_queries.model_id`, aliases like `auto`) has
//! no place in the Session model and is not kept.
//!
//! **Cursor.** `ai_queries` rows are only ever added, so the highest rowid read is the
//! cursor (core's `RowCursor`, its mark only); given it, only the conversations owning a
//! row above it are re-read, each whole. A store whose highest rowid is below the cursor was
//! replaced: everything is read.
//!
//! **Variables.** Warp has no known relocation variable. `DEJA_WARP_DB` pins the database
//! file (a directory means the `warp.sqlite` in it); else `DEJA_WARP_ROOT` names the
//! sessions root, the directory holding `warp.sqlite`; else Warp's data directory per OS:
//! on Windows `%LOCALAPPDATA%\warp\Warp\data`, elsewhere both the macOS group container
//! and `${XDG_STATE_HOME:-~/.local/state}/warp-terminal` are looked at (two `stat`s, and
//! it lets one home be read on any OS). Preview channels' directories are unknown and not
//! looked for.
//!
//! **Injected text.** Warp's stored prompts are the user's own text (attached context is
//! a separate `context` list, not read), so `injected` is `InjectedText::NONE`.

use std::collections::{HashMap, HashSet};

use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::sqlite::{self, RowCursor};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Role, SessionBuilder,
    SessionSink, SourceRef, Turn,
};
use rusqlite::Connection;
use serde_json::Value;

const ID: &str = "warp";
const DB_NAME: &str = "warp.sqlite";
/// The Warp adapter.
pub struct WarpFormat;

deja_core::inventory::submit!(deja_core::Registration(&WarpFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Warp",
    container: "SQLite (WAL), one `warp.sqlite` for every agent conversation: `agent_conversations` + `ai_queries` rows; \
        user prompts only (Warp stores no assistant replies or tool calls there)",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[
            // Both places on either Unix: Warp's macOS container and its XDG state directory.
            Root::unix("~/Library/Group Containers/2BBY89MBSN.dev.warp/Library/Application Support/dev.warp.Warp-Stable"),
            Root::unix("${XDG_STATE_HOME:-~/.local/state}/warp-terminal"),
            Root::windows("${LOCALAPPDATA:-~/AppData/Local}/warp/Warp/data"),
        ],
        layout: Layout::Database(DB_NAME),
    }]),
    needs: &[],
    format_summary: "Warp keeps its agent conversations in its SQLite database `warp.sqlite` (WAL mode). deja reads \
        **user prompts only**: each `ai_queries` row is one exchange of a conversation (`conversation_id`, zone-less UTC \
        `start_ts`, `working_directory`, `model_id`), and its JSON `input` holds the prompt as `[{\"Query\": {\"text\": \
        …}}]`; rows without a `Query` are agent steps and only count for timing. Warp stores no assistant text, tool call \
        or tool output in these tables; `agent_conversations.conversation_data` holds only aggregate token and per-tool \
        counts, which are not indexed. The project is the first exchange's working directory. The database is read \
        through a private copy with its WAL, incrementally by `ai_queries` rowid.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::Unknown, handoff: Handoff::Paste("Warp is a GUI terminal with no known start-with-prompt command") },
};

impl HarnessFormat for WarpFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, _opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        parse_db(src, out)
    }
}

fn parse_db(src: &SourceRef, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let db = src.path.as_path();
    let (store, mut stats) = sqlite::Db::open(src)?;
    let conn = store.conn();
    let sql_err = |e: rusqlite::Error| store.err(e);
    let cols = store.columns("ai_queries", &["conversation_id", "start_ts", "input"], "a Warp store")?;
    let col = |name: &str| cols.col(name);

    // `ai_queries` rows are only ever added: the conversations with a row past the last
    // read's highest rowid are the ones to re-read.
    let max_rowid = sqlite::max_rowid(conn, "ai_queries").map_err(sql_err)?;
    let previous = RowCursor::previous(&mut stats, src, None, max_rowid);
    stats.cursor = RowCursor::after(&HashMap::new(), max_rowid);
    let wanted = RowCursor::wanted(previous.as_ref(), conn, &HashMap::new(), "ai_queries", "conversation_id").map_err(sql_err)?;
    if wanted.as_ref().is_some_and(HashSet::is_empty) {
        return Ok(stats);
    }

    let modified = read_modified(conn).map_err(sql_err)?;
    let query = format!(
        "SELECT conversation_id, start_ts, input, {} FROM ai_queries ORDER BY conversation_id, start_ts, rowid",
        col("working_directory")
    );
    let mut stmt = conn.prepare(&query).map_err(sql_err)?;
    let mut rows = stmt.query([]).map_err(sql_err)?;
    let mut current: Option<(String, SessionBuilder)> = None;
    while let Some(row) = rows.next().map_err(sql_err)? {
        stats.records += 1;
        let text = |i: usize| row.get_ref(i).ok().and_then(|v| sqlite::value_text(v).ok().flatten());
        let Some(conversation) = text(0).map(|t| t.trim().to_string()).filter(|t| !t.is_empty()) else {
            stats.skip(|| format!("{}: an ai_queries row without a conversation id", db.display()));
            continue;
        };
        if wanted.as_ref().is_some_and(|w| !w.contains(&conversation)) {
            continue;
        }
        if current.as_ref().is_none_or(|(id, _)| *id != conversation) {
            if let Some((_, b)) = current.take() {
                emit(b, out);
            }
            let mut b = SessionBuilder::new(ID, conversation.clone(), src.clone());
            b.touch(modified.get(&conversation).copied());
            current = Some((conversation.clone(), b));
        }
        let Some((_, b)) = current.as_mut() else { continue };
        let time = row.get_ref(1).ok().and_then(sqlite::value_timestamp);
        // Every exchange, prompt or agent step, counts for the session's times.
        b.touch(time);
        if b.session().project.is_none() {
            if let Some(dir) = text(3).map(|d| d.trim().to_string()).filter(|d| !d.is_empty()) {
                b.session_mut().project = Some(dir);
            }
        }
        let input = text(2).unwrap_or_default();
        match prompt(&input) {
            Ok(Some(p)) => {
                b.push(Turn::new(Role::User, p).at(time));
            }
            Ok(None) => {}
            Err(()) => stats.skip(|| format!("{}: conversation {conversation}: an input that is not JSON", db.display())),
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

/// The prompt an `input` holds: the `Query.text` of its items (normally one), trimmed and
/// joined. `Ok(None)` for an agent step (empty, `[]`, no `Query.text`); `Err` when the
/// input is not JSON.
fn prompt(input: &str) -> Result<Option<String>, ()> {
    let input = input.trim();
    if input.is_empty() {
        return Ok(None);
    }
    let value: Value = serde_json::from_str(input).map_err(|_| ())?;
    let items: Vec<&Value> = match &value {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    let texts: Vec<&str> = items
        .iter()
        .filter_map(|item| item.pointer("/Query/text").and_then(Value::as_str))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect();
    Ok((!texts.is_empty()).then(|| texts.join("\n\n")))
}

/// `agent_conversations.last_modified_at` per conversation, when the table is there.
fn read_modified(conn: &Connection) -> rusqlite::Result<HashMap<String, deja_core::Timestamp>> {
    let cols: HashSet<String> = sqlite::table_columns(conn, "agent_conversations")?.into_iter().collect();
    let mut out = HashMap::new();
    if !cols.contains("conversation_id") || !cols.contains("last_modified_at") {
        return Ok(out);
    }
    let mut stmt = conn.prepare("SELECT conversation_id, last_modified_at FROM agent_conversations")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let id = row.get_ref(0).ok().and_then(|v| sqlite::value_text(v).ok().flatten()).map(|t| t.trim().to_string());
        let time = row.get_ref(1).ok().and_then(sqlite::value_timestamp);
        if let (Some(id), Some(time)) = (id.filter(|i| !i.is_empty()), time) {
            out.insert(id, time);
        }
    }
    Ok(out)
}

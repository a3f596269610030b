//! The opencode-schema SQLite family: opencode's `opencode.db`, Kilo CLI's `kilo.db`,
//! MiMo Code's `mimocode.db`, ICodeMate's `icodemate.db` and ZCode's CLI `db.sqlite`
//! share one schema (`session` / `message` / `part`, JSON `data` columns), read here once
//! and parameterised by an [`OpencodeDialect`].
//!
//! The database is read through [`crate::sqlite::Snapshot`] (a private copy of the db
//! and its WAL; the harness's files are never touched). One database is one source
//! holding many sessions. Columns are detected with `PRAGMA table_info`, so older
//! schema versions (no `title`, `parent_id`, no time columns on `part`) still read.
//!
//! | record / part | Turn | rule |
//! | --- | --- | --- |
//! | `session` row | session | id, `directory` = project, `title` (placeholders dropped), `parent_id` → `parent` with kind `subagent` (ZCode `task_type` `fork` → kind `fork`), `agent` on sub-agents, `time_created`/`time_updated` |
//! | part `text` in a `user` message | `User` | one turn per part; a prompt wrapped in one pair of literal quotes (`opencode run "…"`) is unwrapped |
//! | part `text` in an `assistant` message | `Assistant` | one turn per part |
//! | part `text` with `synthetic` or `ignored` set | skip | harness-injected (tool-call echoes, attachments) |
//! | part `text` in a compaction message (assistant `summary: true` or `mode: "compaction"`, ZCode `semantics.kind: "compact_summary"`) | `Summary` | the turns it summarised stay |
//! | part `reasoning` | `Reasoning` | only with `ParseOptions::include_reasoning` |
//! | part `tool`, shell tool | `ToolCall` | `state.input.command` (Kilo `background_process` only for `action` `start`/`monitor`), exit `state.metadata.exit` (ZCode: a leading `Exit code N` line of the output), text = `state.output` |
//! | part `tool`, read tool | `ToolCall` | `files` read from `filePath` / `file_path` / `path` |
//! | part `tool`, edit tool | `ToolCall` | `files` edit + `edit` from `oldString`/`newString` (`old_string`/`new_string`, first of `edits[]`) or the `patchText` envelope |
//! | part `tool`, write tool | `ToolCall` | `files` write |
//! | part `tool`, other tools | `ToolCall` | name only (their output is file bodies and search hits, the weakest signal); an unknown tool with `patchText` / a file path / a `command` is read as an edit / read / shell, in that order, as the opencode page says |
//! | any tool with `state.status: "error"` | `ToolCall`, `is_error` | the error text is kept; a failed edit or write records no file change |
//! | parts `step-start`, `step-finish`, `snapshot`, `patch`, `file`, `agent`, `subtask`, `retry`, `compaction` | skip | bookkeeping; a `compaction` part only marks the request |
//! | messages with another role (`system`…) | skip | harness-authored |
//!
//! [`OpencodeDialect`] fields: `harness` (the adapter id sessions carry), `tools` (a
//! [`ToolMap`]: [`OPENCODE_TOOLS`], or [`CLAUDE_NAMED_TOOLS`] for ZCode, or an adapter's
//! own with Kilo's `background_process` / `notebook_*`), `exit_in_output` (ZCode: exit
//! code from a leading `Exit code N` line), `unquote_user_text` (`run "<prompt>"`
//! quoting), `placeholder_titles` (Kilo's and opencode's `New session - …`).
//!
//! Times are epoch milliseconds in current stores; numbers in seconds and RFC 3339
//! strings are accepted everywhere (column types are loose). A turn's time is the
//! part's `time.start`, else the message's `time.created`, else its `time_created`.
//!
//! **Row-level increments.** [`parse`] returns a cursor: the highest update time (ms)
//! of any session, message or part row, plus the row state (newest time, row count) of
//! the few sessions touched within [`CURSOR_SLACK_MS`] of it. Given `SourceRef::cursor`,
//! it emits only the sessions whose own row or any of whose message or part rows changed
//! at or after the cursor minus the slack (so a row committed late with an earlier clock
//! is not lost), minus those whose row state is exactly the one recorded; each is
//! re-read whole so the indexer can replace it. 10,000 sessions where one grew cost
//! the re-read of that one. Where the store indexes `message.session_id` and
//! `part.message_id` (opencode does), sessions are read one by one through the indexes;
//! otherwise one query sorted by session.
//!
//! Sub-agent sessions are their own sessions; [`parse_filtered`] leaves them out (for
//! `DEJA_INCLUDE_SUBAGENTS=0`, which the adapter reads: `ParseOptions` carries no such
//! switch).
//!
//! **For adapters.** [`discover_databases`] finds a harness's database where its
//! `StoreSpec` says (`DEJA_<ID>_DB`, `DEJA_<ID>_ROOT`, the data-home places) and, with
//! `DEJA_INCLUDE_SUBAGENTS` off, keys the source [`WITHOUT_SUBAGENTS_KEY`];
//! [`parse_discovered`] reads that key back, so discovery and parsing agree on the
//! switch and toggling it changes the source's identity (a fresh read, not a cursor
//! taken under the other setting). [`write_synthetic`] writes a `SynthSession` into a
//! database in opencode 1.18's schema, appending to one that exists.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rusqlite::types::ValueRef;
use rusqlite::Connection;
use serde_json::Value;

use crate::builder::SessionBuilder;
use crate::env::StoreEnv;
use crate::format::{Discovery, FormatError, ParseOptions, ParseStats, SessionSink};
use crate::model::{cap_text, Edit, ExitStatus, FileAction, FileTouch, Role, SourceRef, Timestamp, ToolUse, Turn, MAX_EDIT_BYTES};
use crate::patch::{join_cwd, parse_apply_patch};
use crate::read::{at, str_at};
use crate::sqlite::{self, Snapshot};
use crate::synth::{SynthSession, SynthTurn};
use crate::work::{ToolKind, ToolMap};

/// How far before the cursor's newest time sessions are still looked at: core's one
/// slack for every row cursor.
pub use crate::sqlite::CURSOR_SLACK_MS;

/// opencode's own tool names.
pub const OPENCODE_TOOLS: ToolMap =
    ToolMap { shell: &["bash"], read: &["read"], edit: &["edit", "multiedit", "apply_patch", "patch"], write: &["write"] };

/// Claude Code's tool names (ZCode's CLI writes them into opencode's schema), with
/// opencode's own kept for tools it did not rename.
pub const CLAUDE_NAMED_TOOLS: ToolMap = ToolMap {
    shell: &["Bash", "bash"],
    read: &["Read", "read"],
    edit: &["Edit", "MultiEdit", "edit", "multiedit", "apply_patch"],
    write: &["Write", "write"],
};

/// What differs between the harnesses that write opencode's schema.
#[derive(Debug, Clone, Copy)]
pub struct OpencodeDialect {
    /// The adapter id sessions are emitted under.
    pub harness: &'static str,
    pub tools: ToolMap,
    /// A failed shell run's output opens with `Exit code N` (Claude Code's convention,
    /// ZCode) instead of carrying `state.metadata.exit`: strip the line, keep the code.
    pub exit_in_output: bool,
    /// `<harness> run "<prompt>"` stores the prompt wrapped in literal double quotes
    /// (opencode, Kilo): unwrap one pair from user text parts.
    pub unquote_user_text: bool,
    /// Session titles starting with one of these are placeholders, not titles.
    pub placeholder_titles: &'static [&'static str],
}

impl OpencodeDialect {
    /// opencode's own behaviour, under another adapter id.
    pub const fn new(harness: &'static str) -> Self {
        OpencodeDialect {
            harness,
            tools: OPENCODE_TOOLS,
            exit_in_output: false,
            unquote_user_text: true,
            placeholder_titles: &["New session - ", "Child session - "],
        }
    }
}

/// Adds the database at `db` (with its `-wal` as a fingerprint part) when it is a
/// non-empty regular file; records the place looked at either way.
pub fn discover_db(db: &Path, discovery: &mut Discovery) {
    crate::store::add_database(discovery, db);
}

/// Parses every session of an opencode-schema database (sub-agent sessions included);
/// with `src.cursor` set, only the sessions changed since. Returns the next cursor.
pub fn parse(d: &OpencodeDialect, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    parse_filtered(d, src, opts, true, out)
}

/// [`parse`], leaving sub-agent sessions (those with a `parent_id`) out unless
/// `include_subagents`.
pub fn parse_filtered(
    d: &OpencodeDialect,
    src: &SourceRef,
    opts: &ParseOptions,
    include_subagents: bool,
    out: &mut dyn SessionSink,
) -> Result<ParseStats, FormatError> {
    let db = src.path.as_path();
    let snapshot = Snapshot::open(db)?;
    let mut stats = ParseStats { bytes_read: snapshot.bytes, ..ParseStats::default() };
    let conn = snapshot.conn();
    let schema = Schema::detect(conn).map_err(|e| FormatError::corrupt(db, format!("reading the schema: {e}")))?;
    schema.check(db)?;
    let sql_err = |e: rusqlite::Error| FormatError::corrupt(db, format!("query failed (schema changed?): {e}"));

    let previous = stats.previous_cursor(src, Cursor::parse);
    let sessions = read_sessions(conn, &schema, &mut stats).map_err(sql_err)?;
    // One pass over the three tables gives the newest row, what changed and the state
    // of the sessions near the newest row.
    let states = session_states(conn, &schema).map_err(sql_err)?;
    let newest = states.values().filter_map(|(max, _)| *max).max();
    // A cursor newer than every row means this is not the database it was taken from
    // (restored from a backup, replaced): read everything.
    let previous = previous.filter(|cursor| newest.is_some_and(|n| n >= cursor.newest));
    let rowids = max_rowids(conn);
    // Fewer rows than last time in any table: rows were deleted and the marks mean
    // nothing; the time rule alone decides.
    let previous_rowids = previous.as_ref().and_then(|c| c.rowids).filter(|old| rowids.is_some_and(|now| (0..3).all(|i| now[i] >= old[i])));
    let inserted = match previous_rowids {
        Some(marks) => sessions_with_rows_after(conn, marks).map_err(sql_err)?,
        None => HashSet::new(),
    };
    let wanted: Option<HashSet<String>> = previous.map(|cursor| {
        let since = cursor.newest.saturating_sub(CURSOR_SLACK_MS);
        let recent: HashMap<&str, &SessionRows> = cursor.recent.iter().map(|(id, rows)| (id.as_str(), rows)).collect();
        let mut wanted: HashSet<String> = states
            .iter()
            .filter(|(_, (max, _))| max.is_some_and(|m| m >= since))
            // Read last time inside the slack window, and its rows exactly as they were.
            .filter(|(id, state)| recent.get(id.as_str()) != Some(state))
            .map(|(id, _)| id.clone())
            .collect();
        wanted.extend(inserted);
        wanted
    });
    if let Some(newest) = newest {
        let window = newest.saturating_sub(CURSOR_SLACK_MS);
        let mut recent: Vec<(String, SessionRows)> =
            states.iter().filter(|(_, (max, _))| max.is_some_and(|m| m >= window)).map(|(id, state)| (id.clone(), *state)).collect();
        recent.sort();
        // A burst of more sessions than this is simply re-read next time.
        recent.truncate(Cursor::MAX_RECENT);
        stats.cursor = Some(Cursor { newest, recent, rowids }.to_string());
    }

    let mut reader = TurnReader { d, src, opts, sessions: &sessions, include_subagents, current: None, last_message: None };
    if schema.by_session {
        // Session by session through the harness's indexes, so SQLite never sorts every
        // part's JSON of a store of several GB into a temporary file.
        let ids: Vec<String> = match wanted {
            Some(w) => {
                let mut ids: Vec<String> = w.into_iter().collect();
                ids.sort();
                ids
            }
            None => {
                let mut stmt = conn
                    .prepare("SELECT DISTINCT session_id FROM message WHERE session_id IS NOT NULL ORDER BY session_id")
                    .map_err(sql_err)?;
                // An id that does not decode is skipped like any unreadable row.
                let ids = stmt.query_map([], |r| Ok(sqlite::value_text(r.get_ref(0)?).ok().flatten())).map_err(sql_err)?;
                ids.filter_map(|r| r.ok().flatten()).collect()
            }
        };
        let mut stmt = conn.prepare(&schema.turns_sql(TurnFilter::OneSession)).map_err(sql_err)?;
        for id in &ids {
            let mut rows = stmt.query([id]).map_err(sql_err)?;
            while let Some(row) = rows.next().map_err(sql_err)? {
                reader.row(row, &mut stats, out).map_err(sql_err)?;
            }
        }
    } else {
        let ids_json = wanted.map(|w| Value::from(w.into_iter().collect::<Vec<_>>()).to_string());
        let mut stmt =
            conn.prepare(&schema.turns_sql(if ids_json.is_some() { TurnFilter::Sessions } else { TurnFilter::All })).map_err(sql_err)?;
        let mut rows = match &ids_json {
            Some(ids) => stmt.query([ids]),
            None => stmt.query([]),
        }
        .map_err(sql_err)?;
        while let Some(row) = rows.next().map_err(sql_err)? {
            reader.row(row, &mut stats, out).map_err(sql_err)?;
        }
    }
    reader.finish(out);
    Ok(stats)
}

/// Folds the rows of [`Schema::turns_sql`] (ordered by session) into sessions.
struct TurnReader<'a> {
    d: &'a OpencodeDialect,
    src: &'a SourceRef,
    opts: &'a ParseOptions,
    sessions: &'a HashMap<String, SessionRow>,
    include_subagents: bool,
    current: Option<(String, SessionBuilder)>,
    /// The message the previous row belonged to, decoded once for all its parts
    /// (`None` inside when its data did not decode).
    last_message: Option<(String, Option<MessageInfo>)>,
}

impl TurnReader<'_> {
    fn row(&mut self, row: &rusqlite::Row<'_>, stats: &mut ParseStats, out: &mut dyn SessionSink) -> rusqlite::Result<()> {
        let db = self.src.path.as_path();
        stats.records += 1;
        // An empty id names no session (as for session rows, below).
        let Some(session_id) = sqlite::value_text(row.get_ref(0)?).ok().flatten().filter(|s| !s.trim().is_empty()) else {
            stats.skip(|| format!("{}: a message row without a session id", db.display()));
            return Ok(());
        };
        let session_row = self.sessions.get(&session_id);
        if !self.include_subagents && session_row.is_some_and(|s| s.parent.is_some()) {
            return Ok(());
        }
        if self.current.as_ref().is_none_or(|(id, _)| *id != session_id) {
            if let Some((_, builder)) = self.current.take() {
                emit(builder, out);
            }
            self.current = Some((session_id.clone(), start_session(self.d, self.src, &session_id, session_row)));
        }
        let message_id = sqlite::value_text(row.get_ref(1)?).ok().flatten().unwrap_or_default();
        if self.last_message.as_ref().is_none_or(|(id, _)| *id != message_id) {
            let info = match sqlite::column_json(row, 2) {
                Ok(Some(v)) if v.is_object() => Some(MessageInfo::from_data(&v, row.get_ref(3).ok().and_then(sqlite::value_timestamp))),
                Ok(_) => {
                    stats.skip(|| format!("{}: message {message_id}: data is not a JSON object", db.display()));
                    None
                }
                Err(e) => {
                    stats.skip(|| format!("{}: message {message_id}: {e}", db.display()));
                    None
                }
            };
            self.last_message = Some((message_id.clone(), info));
        }
        let (Some((_, builder)), Some((_, Some(message)))) = (self.current.as_mut(), self.last_message.as_ref()) else {
            return Ok(());
        };
        let part = match sqlite::column_json(row, 5) {
            Ok(Some(v)) if v.is_object() => v,
            Ok(_) => {
                stats.skip(|| format!("{}: part of message {message_id}: data is not a JSON object", db.display()));
                return Ok(());
            }
            Err(e) => {
                stats.skip(|| format!("{}: part of message {message_id}: {e}", db.display()));
                return Ok(());
            }
        };
        let part_time = row.get_ref(6).ok().and_then(sqlite::value_timestamp);
        push_part(self.d, self.opts, builder, message, &part, part_time);
        Ok(())
    }

    fn finish(mut self, out: &mut dyn SessionSink) {
        if let Some((_, builder)) = self.current.take() {
            emit(builder, out);
        }
    }
}

/// Which rows [`Schema::turns_sql`] selects.
#[derive(Clone, Copy, PartialEq)]
enum TurnFilter {
    All,
    /// `?1` is a JSON array of session ids.
    Sessions,
    /// `?1` is one session id.
    OneSession,
}

/// Which optional columns this database's tables have.
struct Schema {
    session: HashSet<String>,
    message: HashSet<String>,
    part: HashSet<String>,
    /// `message.session_id` and `part.message_id` are indexed: read session by session.
    by_session: bool,
}

impl Schema {
    fn detect(conn: &Connection) -> rusqlite::Result<Schema> {
        let cols = |t: &str| sqlite::table_columns(conn, t).map(|c| c.into_iter().collect::<HashSet<_>>());
        let by_session = leads_an_index(conn, "message", "session_id")? && leads_an_index(conn, "part", "message_id")?;
        Ok(Schema { session: cols("session")?, message: cols("message")?, part: cols("part")?, by_session })
    }

    fn check(&self, db: &Path) -> Result<(), FormatError> {
        let missing: Vec<&str> = [
            ("session", &self.session, &["id"][..]),
            ("message", &self.message, &["id", "session_id", "data"][..]),
            ("part", &self.part, &["id", "message_id", "data"][..]),
        ]
        .iter()
        .flat_map(|(table, cols, needed)| {
            needed.iter().filter(|c| !cols.contains(**c)).map(move |c| if cols.is_empty() { *table } else { c })
        })
        .collect();
        let mut missing = missing;
        missing.dedup();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(FormatError::corrupt(db, format!("not an opencode-schema database (missing {}); schema changed?", missing.join(", "))))
        }
    }

    /// `alias.column` when the table has it, else `NULL`.
    fn col(cols: &HashSet<String>, alias: &str, name: &str) -> String {
        if cols.contains(name) {
            format!("{alias}.\"{name}\"")
        } else {
            "NULL".to_string()
        }
    }

    /// The expression giving a message row's time: its `time_updated`/`time_created`
    /// columns, else the JSON `time.created` (older schemas).
    fn message_time(&self, newest: bool) -> String {
        let order: &[&str] = if newest { &["time_updated", "time_created"] } else { &["time_created"] };
        match order.iter().find(|c| self.message.contains(**c)) {
            Some(c) => format!("m.\"{c}\""),
            None => "(CASE WHEN json_valid(m.data) THEN json_extract(m.data, '$.time.created') END)".to_string(),
        }
    }

    /// A part row's update time: its columns, else the JSON times.
    fn part_time(&self) -> String {
        match ["time_updated", "time_created"].iter().find(|c| self.part.contains(**c)) {
            Some(c) => format!("p.\"{c}\""),
            None => "(CASE WHEN json_valid(p.data) THEN coalesce(json_extract(p.data, '$.time.end'), \
                     json_extract(p.data, '$.state.time.end'), json_extract(p.data, '$.time.start')) END)"
                .to_string(),
        }
    }

    fn session_time(&self) -> Option<String> {
        ["time_updated", "time_created"].iter().find(|c| self.session.contains(**c)).map(|c| format!("s.\"{c}\""))
    }

    /// Every part of every (wanted) session in conversation order. Columns: session id,
    /// message id, message data, message time, part id, part data, part time.
    fn turns_sql(&self, filter: TurnFilter) -> String {
        let filter = match filter {
            TurnFilter::All => "",
            TurnFilter::Sessions => "WHERE m.session_id IN (SELECT value FROM json_each(?1))",
            TurnFilter::OneSession => "WHERE m.session_id = ?1",
        };
        let message_order = Schema::col(&self.message, "m", "time_created");
        let part_created = Schema::col(&self.part, "p", "time_created");
        format!(
            "SELECT m.session_id, m.id, m.data, {message_order}, p.id, p.data, {part_created} \
             FROM message m JOIN part p ON p.message_id = m.id {filter} \
             ORDER BY m.session_id, {message_order}, m.id, p.id"
        )
    }
}

/// True when an index of `table` starts with `column` (primary keys count).
fn leads_an_index(conn: &Connection, table: &str, column: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM pragma_index_list(?1) AS il JOIN pragma_index_info(il.name) AS ii WHERE ii.seqno = 0 AND ii.name = ?2",
        [table, column],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}

/// A time value in epoch ms, in SQL: numbers above 1e12 are ms, others seconds;
/// numeric text likewise; other text is parsed as an ISO date (RFC 3339).
fn sql_ms(x: &str) -> String {
    format!(
        "(CASE WHEN typeof({x}) IN ('integer', 'real') THEN (CASE WHEN abs({x}) > 1e12 THEN {x} ELSE {x} * 1000 END) \
         WHEN typeof({x}) = 'text' AND trim({x}) <> '' AND trim({x}) NOT GLOB '*[^0-9.]*' \
           THEN (CASE WHEN abs(CAST({x} AS REAL)) > 1e12 THEN CAST({x} AS REAL) ELSE CAST({x} AS REAL) * 1000 END) \
         WHEN typeof({x}) = 'text' THEN unixepoch({x}, 'subsec') * 1000 END)"
    )
}

/// The state of a session's rows: the newest row time (ms) and the number of rows
/// (session, messages, parts). A row committed late with an older time changes the count.
type SessionRows = (Option<i64>, i64);

/// What [`parse`] returns as `ParseStats::cursor` and reads back from `SourceRef::cursor`:
/// the newest row time, and the row state of the sessions touched within
/// [`CURSOR_SLACK_MS`] of it, so the next read need not re-read them when unchanged.
/// Written as JSON `{"newest": ms, "recent": [[id, newest_ms, rows], …]}`; a bare
/// decimal (ms) is accepted too.
#[derive(Debug, PartialEq)]
struct Cursor {
    newest: i64,
    recent: Vec<(String, SessionRows)>,
    /// The highest `rowid` of the `session`, `message` and `part` tables: a row inserted
    /// since has a higher one whatever time it carries (a harness that stamps rows with
    /// the message's own time, a session rewritten from an import, a clock that moved back).
    rowids: Option<[i64; 3]>,
}

impl Cursor {
    const MAX_RECENT: usize = 64;

    fn parse(text: &str) -> Option<Cursor> {
        if let Ok(ms) = text.parse::<i64>() {
            return Some(Cursor { newest: ms, recent: Vec::new(), rowids: None });
        }
        let v: Value = serde_json::from_str(text).ok()?;
        let newest = v.get("newest")?.as_i64()?;
        let recent = v
            .get("recent")
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|item| {
                        let id = item.get(0)?.as_str()?.to_string();
                        let max = item.get(1)?;
                        Some((id, (max.as_i64(), item.get(2)?.as_i64()?)))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let rowids =
            v.get("rowids").and_then(Value::as_array).and_then(|r| Some([r.first()?.as_i64()?, r.get(1)?.as_i64()?, r.get(2)?.as_i64()?]));
        Some(Cursor { newest, recent, rowids })
    }
}

impl std::fmt::Display for Cursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let recent: Vec<Value> = self.recent.iter().map(|(id, (max, rows))| serde_json::json!([id, max, rows])).collect();
        match self.rowids {
            Some(r) => write!(f, "{}", serde_json::json!({"newest": self.newest, "recent": recent, "rowids": r})),
            None => write!(f, "{}", serde_json::json!({"newest": self.newest, "recent": recent})),
        }
    }
}

/// The highest `rowid` of `session`, `message` and `part`; `None` when a table has none
/// (a `WITHOUT ROWID` table, an empty one).
fn max_rowids(conn: &Connection) -> Option<[i64; 3]> {
    let max = |table: &str| sqlite::max_rowid(conn, table).ok().flatten();
    Some([max("session")?, max("message")?, max("part")?])
}

/// The sessions owning a `session`, `message` or `part` row inserted after the marks.
fn sessions_with_rows_after(conn: &Connection, marks: [i64; 3]) -> rusqlite::Result<HashSet<String>> {
    let mut stmt = conn.prepare(
        "SELECT id FROM session WHERE rowid > ?1 \
         UNION SELECT session_id FROM message WHERE rowid > ?2 \
         UNION SELECT m.session_id FROM part p JOIN message m ON m.id = p.message_id WHERE p.rowid > ?3",
    )?;
    let mut rows = stmt.query(marks)?;
    let mut out = HashSet::new();
    while let Some(row) = rows.next()? {
        if let Ok(Some(id)) = sqlite::value_text(row.get_ref(0)?) {
            out.insert(id);
        }
    }
    Ok(out)
}

/// Every session's row state (see [`SessionRows`]): its `session` row, its messages and
/// their parts, grouped by session id.
fn session_states(conn: &Connection, schema: &Schema) -> rusqlite::Result<HashMap<String, SessionRows>> {
    let mut parts = Vec::new();
    if let Some(t) = schema.session_time() {
        parts.push(format!("SELECT s.id AS sid, {} AS ms FROM session s", sql_ms(&t)));
    } else {
        parts.push("SELECT s.id AS sid, NULL AS ms FROM session s".to_string());
    }
    parts.push(format!("SELECT m.session_id, {} FROM message m", sql_ms(&schema.message_time(true))));
    parts.push(format!("SELECT m.session_id, {} FROM part p JOIN message m ON m.id = p.message_id", sql_ms(&schema.part_time())));
    let sql = format!("SELECT sid, max(ms), count(*) FROM ({}) WHERE sid IS NOT NULL GROUP BY sid", parts.join(" UNION ALL "));
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    let mut states = HashMap::new();
    while let Some(row) = rows.next()? {
        let Ok(Some(id)) = sqlite::value_text(row.get_ref(0)?) else { continue };
        let max = row.get::<_, Option<f64>>(1)?.filter(|f| f.is_finite()).map(|f| f as i64);
        states.insert(id, (max, row.get(2)?));
    }
    Ok(states)
}

/// A `session` row's fields.
struct SessionRow {
    directory: Option<String>,
    title: Option<String>,
    parent: Option<String>,
    agent: Option<String>,
    kind: Option<String>,
    created: Option<Timestamp>,
    updated: Option<Timestamp>,
}

fn read_sessions(conn: &Connection, schema: &Schema, stats: &mut ParseStats) -> rusqlite::Result<HashMap<String, SessionRow>> {
    let c = |name: &str| Schema::col(&schema.session, "s", name);
    let sql = format!(
        "SELECT s.id, {}, {}, {}, {}, {}, {}, {} FROM session s",
        c("directory"),
        c("title"),
        c("parent_id"),
        c("agent"),
        c("task_type"),
        c("time_created"),
        c("time_updated")
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    let mut sessions = HashMap::new();
    let text = |v: ValueRef<'_>| sqlite::value_text(v).ok().flatten().map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    while let Some(row) = rows.next()? {
        let Some(id) = text(row.get_ref(0)?) else {
            // A row read and skipped is a record: stats never skip more than they read.
            stats.records += 1;
            stats.skip(|| "a session row without an id".to_string());
            continue;
        };
        let parent = text(row.get_ref(3)?);
        let kind = match text(row.get_ref(5)?).as_deref() {
            Some("fork") => Some("fork".to_string()),
            Some("subagent_child") => Some("subagent".to_string()),
            _ => parent.as_ref().map(|_| "subagent".to_string()),
        };
        sessions.insert(
            id,
            SessionRow {
                directory: text(row.get_ref(1)?),
                title: text(row.get_ref(2)?),
                agent: parent.as_ref().and(text(row.get_ref(4)?)),
                parent,
                kind,
                created: sqlite::value_timestamp(row.get_ref(6)?),
                updated: sqlite::value_timestamp(row.get_ref(7)?),
            },
        );
    }
    Ok(sessions)
}

fn start_session(d: &OpencodeDialect, src: &SourceRef, id: &str, row: Option<&SessionRow>) -> SessionBuilder {
    let mut builder = SessionBuilder::new(d.harness, id, src.clone());
    if let Some(row) = row {
        let session = builder.session_mut();
        session.project = row.directory.clone();
        session.title = row.title.clone().filter(|t| !d.placeholder_titles.iter().any(|p| t.starts_with(p)));
        session.parent = row.parent.clone();
        session.kind = row.kind.clone();
        session.agent = row.agent.clone();
        builder.touch(row.created);
        builder.touch(row.updated);
    }
    builder
}

/// What a part needs to know about its message.
struct MessageInfo {
    role: Option<Role>,
    summary: bool,
    time: Option<Timestamp>,
    cwd: Option<String>,
}

impl MessageInfo {
    fn from_data(data: &Value, column_time: Option<Timestamp>) -> Self {
        let role = match str_at(data, &["role"]) {
            Some("user") => Some(Role::User),
            Some("assistant") => Some(Role::Assistant),
            _ => None,
        };
        let summary = data.get("summary").and_then(Value::as_bool) == Some(true)
            || (role == Some(Role::Assistant) && str_at(data, &["mode"]) == Some("compaction"))
            || str_at(data, &["semantics", "kind"]) == Some("compact_summary");
        let time = at(data, &["time", "created"]).and_then(Timestamp::from_json).or(column_time);
        let cwd = str_at(data, &["path", "cwd"]).map(str::to_string);
        MessageInfo { role, summary, time, cwd }
    }
}

fn push_part(
    d: &OpencodeDialect,
    opts: &ParseOptions,
    builder: &mut SessionBuilder,
    message: &MessageInfo,
    part: &Value,
    column_time: Option<Timestamp>,
) {
    let Some(role) = message.role else { return };
    let time = at(part, &["time", "start"]).and_then(Timestamp::from_json).or(message.time).or(column_time);
    match str_at(part, &["type"]) {
        Some("text") => {
            if part.get("synthetic").and_then(Value::as_bool) == Some(true) || part.get("ignored").and_then(Value::as_bool) == Some(true) {
                return;
            }
            let Some(text) = str_at(part, &["text"]) else { return };
            let role = if message.summary { Role::Summary } else { role };
            let text = if role == Role::User && d.unquote_user_text { unquote(text) } else { text };
            builder.push(Turn::new(role, text).at(time));
        }
        Some("reasoning") if opts.include_reasoning => {
            if let Some(text) = str_at(part, &["text"]) {
                builder.push(Turn::new(Role::Reasoning, text).at(time));
            }
        }
        Some("tool") => push_tool(d, builder, message, part, time),
        _ => {}
    }
}

/// One pair of wrapping double quotes removed (`opencode run "<prompt>"`).
fn unquote(text: &str) -> &str {
    let t = text.trim();
    match t.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(inner) if !inner.trim().is_empty() => inner,
        _ => text,
    }
}

fn push_tool(d: &OpencodeDialect, builder: &mut SessionBuilder, message: &MessageInfo, part: &Value, time: Option<Timestamp>) {
    let name = str_at(part, &["tool"]).unwrap_or("tool");
    let empty = Value::Null;
    let state = part.get("state").unwrap_or(&empty);
    let input = state.get("input").filter(|v| v.is_object()).unwrap_or(&empty);
    let failed = str_at(state, &["status"]) == Some("error");
    let time = at(state, &["time", "start"]).and_then(Timestamp::from_json).or(time);
    let cwd = builder.session().project.clone().or_else(|| message.cwd.clone());
    let named_file = ["filePath", "file_path"].iter().find_map(|k| str_at(input, &[k])).filter(|p| !p.is_empty());

    let kind = match d.tools.kind(name) {
        ToolKind::Other if input.get("patchText").is_some_and(Value::is_string) => ToolKind::Edit,
        // Only an explicit file key: search tools name a directory as `path`.
        ToolKind::Other if named_file.is_some() => ToolKind::Read,
        ToolKind::Other if input.get("command").is_some_and(Value::is_string) => ToolKind::Shell,
        k => k,
    };
    // A mapped file tool may name its file `path` (Kilo's notebook tools).
    let file_path = named_file.or_else(|| str_at(input, &["path"]).filter(|p| !p.is_empty() && kind != ToolKind::Other));
    let mut tool = ToolUse { name: name.to_string(), is_error: failed, ..ToolUse::default() };
    let mut turn = Turn::new(Role::ToolCall, "").at(time);
    let mut output = str_at(state, &["output"]).unwrap_or("").to_string();
    if failed {
        if let Some(error) = str_at(state, &["error"]) {
            output = error.to_string();
        }
    }
    match kind {
        ToolKind::Shell => {
            let action = str_at(input, &["action"]);
            if action.is_none_or(|a| matches!(a, "start" | "monitor")) {
                tool.command = str_at(input, &["command"]).map(str::to_string).filter(|c| !c.trim().is_empty());
            }
            tool.exit = at(state, &["metadata", "exit"]).and_then(exit_code).map(ExitStatus::Code);
            if tool.exit.is_none() && d.exit_in_output {
                if let Some((code, rest)) = leading_exit_code(&output) {
                    tool.exit = Some(ExitStatus::Code(code));
                    output = rest.to_string();
                }
            }
            turn.text = output;
        }
        ToolKind::Read => {
            if let Some(p) = file_path {
                turn.files.push(FileTouch { path: join_cwd(p, cwd.as_deref()), action: FileAction::Read });
            }
            if failed {
                turn.text = output;
            }
        }
        ToolKind::Edit | ToolKind::Write if failed => turn.text = output,
        ToolKind::Edit => {
            if let Some(patch) = str_at(input, &["patchText"]) {
                // Paths as written in the patch (the opencode page).
                let (files, edits) = parse_apply_patch(patch, None);
                turn.files = files;
                turn.edit = edits.into_iter().next();
            } else if let Some(p) = file_path {
                let path = join_cwd(p, cwd.as_deref());
                turn.files.push(FileTouch { path: path.clone(), action: FileAction::Edit });
                turn.edit = edit_span(input, &path);
            }
        }
        ToolKind::Write => {
            if let Some(p) = file_path {
                turn.files.push(FileTouch { path: join_cwd(p, cwd.as_deref()), action: FileAction::Write });
            }
        }
        ToolKind::Other => {
            if failed {
                turn.text = output;
            }
        }
    }
    if tool.exit.as_ref().is_some_and(|e| !e.succeeded()) {
        tool.is_error = true;
    }
    turn.tool = Some(tool);
    let call_id = str_at(part, &["callID"]);
    builder.push_call(call_id, turn);
}

/// The replaced span of an `edit`-style input: `oldString`/`newString` (opencode),
/// `old_string`/`new_string` (Claude names), or the first of `edits[]` (multi-edit).
fn edit_span(input: &Value, path: &str) -> Option<Edit> {
    let pick = |v: &Value| {
        let old = str_at(v, &["oldString"]).or_else(|| str_at(v, &["old_string"]))?;
        let new = str_at(v, &["newString"]).or_else(|| str_at(v, &["new_string"]));
        let mut old = old.to_string();
        cap_text(&mut old, MAX_EDIT_BYTES);
        let new = new.map(|n| {
            let mut n = n.to_string();
            cap_text(&mut n, MAX_EDIT_BYTES);
            n
        });
        (!old.is_empty()).then(|| Edit { path: path.to_string(), old, new })
    };
    pick(input).or_else(|| input.get("edits")?.as_array()?.iter().find_map(pick))
}

/// An exit code given as a number or a numeric string.
fn exit_code(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().filter(|f| f.is_finite()).map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `Exit code N` as the first line of a Claude-style shell output: the code and the rest.
fn leading_exit_code(output: &str) -> Option<(i64, &str)> {
    match crate::exit::split_exit_code(output, &[crate::exit::ExitLine::first("Exit code ")]) {
        (Some(code), rest) => Some((code, rest)),
        (None, _) => None,
    }
}

/// Hands a finished session to the sink; sessions without turns are not emitted.
fn emit(builder: SessionBuilder, out: &mut dyn SessionSink) {
    if let Some(session) = builder.finish() {
        out.session(session);
    }
}

/// The [`SourceRef::key`] of a database discovered with `DEJA_INCLUDE_SUBAGENTS` off:
/// [`parse_discovered`] then leaves sub-agent sessions out. The switch is carried in the
/// source's identity (not read from the process at parse time) so discovery and parsing
/// agree, and turning it on or off changes the manifest key, which makes the index read
/// the database afresh instead of resuming a cursor taken under the other setting.
pub const WITHOUT_SUBAGENTS_KEY: &str = "without-subagents";

/// Discovery for one harness of the family: the database stores of its `StoreSpec`,
/// keyed [`WITHOUT_SUBAGENTS_KEY`] when `DEJA_INCLUDE_SUBAGENTS` is off.
pub fn discover_databases(id: &str, spec: &crate::store::StoreSpec, env: &StoreEnv) -> Discovery {
    let mut found = Discovery::default();
    for store in spec.stores.iter().filter(|s| s.database().is_some()) {
        crate::store::discover_store(id, spec, store, env, &mut found);
    }
    if !env.include_subagents() {
        found.sources = found.sources.into_iter().map(|s| s.keyed(WITHOUT_SUBAGENTS_KEY)).collect();
    }
    Discovery::sort_sources(&mut found.sources);
    found
}

/// Parses a source found by [`discover_databases`]: [`parse_filtered`], leaving sub-agent
/// sessions out when the source is keyed [`WITHOUT_SUBAGENTS_KEY`].
pub fn parse_discovered(
    d: &OpencodeDialect,
    src: &SourceRef,
    opts: &ParseOptions,
    out: &mut dyn SessionSink,
) -> Result<ParseStats, FormatError> {
    parse_filtered(d, src, opts, src.key.as_deref() != Some(WITHOUT_SUBAGENTS_KEY), out)
}

/// The tables [`write_synthetic`] creates: opencode 1.18's `session` / `message` /
/// `part` (with the columns and indexes the opencode page lists) and `project`.
const SYNTH_SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS project(id TEXT PRIMARY KEY, worktree TEXT NOT NULL, vcs TEXT, name TEXT,
        time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS session(id TEXT PRIMARY KEY, project_id TEXT NOT NULL, workspace_id TEXT, parent_id TEXT,
        slug TEXT NOT NULL, directory TEXT NOT NULL, path TEXT, title TEXT NOT NULL, version TEXT NOT NULL, agent TEXT, model TEXT,
        share_url TEXT, summary_additions INTEGER, summary_deletions INTEGER, summary_files INTEGER, summary_diffs TEXT,
        revert TEXT, permission TEXT, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL,
        time_compacting INTEGER, time_archived INTEGER);
    CREATE INDEX IF NOT EXISTS session_project_idx ON session(project_id);
    CREATE INDEX IF NOT EXISTS session_parent_idx ON session(parent_id);
    CREATE TABLE IF NOT EXISTS message(id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
        time_updated INTEGER NOT NULL, data TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS message_session_idx ON message(session_id);
    CREATE TABLE IF NOT EXISTS part(id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
        time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS part_message_idx ON part(message_id);
    CREATE INDEX IF NOT EXISTS part_session_idx ON part(session_id);";

/// The tables of opencode 1.18 the harnesses of the family's fixtures write (`session`,
/// `message`, `part`, the two indexes they are read through): a fixture's `.sql` names it
/// with a line `-- schema: opencode` (see the conformance kit) instead of a copy.
pub const FIXTURE_SCHEMA: &str = "\
CREATE TABLE session(id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL, directory TEXT NOT NULL, \
title TEXT NOT NULL, version TEXT NOT NULL, agent TEXT, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
CREATE TABLE message(id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, \
data TEXT NOT NULL);
CREATE INDEX message_session_idx ON message(session_id);
CREATE TABLE part(id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, \
time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE INDEX part_message_idx ON part(message_id);
";

/// The model a synthetic session claims (message `providerID`/`modelID`).
const SYNTH_PROVIDER: &str = "anthropic";
const SYNTH_MODEL: &str = "claude-sonnet-4-5";

/// A whole adapter of the family for a harness whose store is one opencode-schema
/// database and nothing else: its metadata (whose `StoreSpec` names the database) and
/// dialect are all it names. (Kilo, which also keeps extension tasks beside its database,
/// writes its own.)
pub struct OpencodeAdapter {
    pub info: &'static crate::format::HarnessInfo,
    pub dialect: OpencodeDialect,
    /// The agent name the synthetic writer records (`build`).
    pub synthetic_agent: &'static str,
    /// The harness's `deja install` wiring, if it has one.
    pub wiring: Option<&'static dyn crate::wire::Wiring>,
}

impl crate::format::HarnessFormat for OpencodeAdapter {
    fn info(&self) -> &'static crate::format::HarnessInfo {
        self.info
    }

    fn wiring(&self) -> Option<&'static dyn crate::wire::Wiring> {
        self.wiring
    }

    fn discover(&self, env: &StoreEnv) -> Discovery {
        discover_databases(self.info.id, &self.info.store, env)
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        parse_discovered(&self.dialect, src, opts, out)
    }

    fn synthetic(&self) -> Option<&dyn crate::format::SynthWriter> {
        Some(self)
    }
}

impl crate::format::SynthWriter for OpencodeAdapter {
    /// Writes into the database the spec names with only `HOME` set, where discovery
    /// finds it.
    fn write(&self, home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
        let (id, spec, env) = (self.info.id, &self.info.store, StoreEnv::with_home(home));
        let db = spec.stores.iter().find_map(|s| spec.database_files(id, s, &env).into_iter().next());
        let db = db.ok_or_else(|| std::io::Error::other(format!("the {id} store names no database on this OS")))?;
        write_synthetic(&db, session, self.synthetic_agent)
    }
}

/// Writes `session` into the opencode-schema database at `db` the way opencode 1.18
/// stores a conversation, creating the database (WAL mode) and its tables when missing
/// and appending to it otherwise, so one database holds many sessions; a session
/// already in it under the same id is replaced whole. `agent` is the session's and the
/// messages' agent (`build` for opencode, `code` for Kilo).
///
/// Layout: a `session` row (`directory` = the project, a `New session - …` placeholder
/// title when the session has none, `project_id` `global`); each user turn a `user`
/// message with one `text` part; the assistant turns between two prompts assistant
/// messages, one per model step (`step-start`, `reasoning`, `text`, `tool` parts,
/// `step-finish`; a step ends at a tool call followed by prose, `finish` `tool-calls`
/// or `stop`), each with `parentID` naming the prompt. Shell turns are `bash` tool parts
/// (`state.input.command`, `state.output`, `state.metadata.exit`), reads `read` parts
/// (`filePath`), edits `edit` parts (`filePath`, `oldString`, `newString`; a relative
/// path is put under the project, as opencode passes absolute paths). Row ids sort in
/// conversation order. Returns `db`.
pub fn write_synthetic(db: &Path, session: &SynthSession, agent: &str) -> std::io::Result<PathBuf> {
    let io = |e: rusqlite::Error| std::io::Error::other(format!("{}: {e}", db.display()));
    if let Some(dir) = db.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut conn = Connection::open(db).map_err(io)?;
    conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(io)?;
    conn.pragma_update(None, "journal_mode", "WAL").map_err(io)?;
    // Synthetic homes are scratch data: no fsync per session (ten thousand sessions write
    // in seconds rather than minutes).
    conn.pragma_update(None, "synchronous", "OFF").map_err(io)?;
    conn.execute_batch(SYNTH_SCHEMA).map_err(io)?;
    let tx = conn.transaction().map_err(io)?;
    write_synthetic_rows(&tx, session, agent).map_err(io)?;
    tx.commit().map_err(io)?;
    Ok(db.to_path_buf())
}

fn write_synthetic_rows(tx: &rusqlite::Transaction<'_>, s: &SynthSession, agent: &str) -> rusqlite::Result<()> {
    use serde_json::json;
    let sid = s.id.as_str();
    tx.execute("DELETE FROM part WHERE session_id = ?1", [sid])?;
    tx.execute("DELETE FROM message WHERE session_id = ?1", [sid])?;
    tx.execute("DELETE FROM session WHERE id = ?1", [sid])?;
    let started = s.started.millis();
    let updated = s.turns.iter().map(|t| t.time().millis()).fold(started, i64::max);
    tx.execute(
        "INSERT OR IGNORE INTO project(id, worktree, vcs, name, time_created, time_updated) VALUES ('global', '/', NULL, NULL, ?1, ?1)",
        [started],
    )?;
    let title = s.title.clone().unwrap_or_else(|| format!("New session - {}", s.started.to_rfc3339()));
    let slug: String = sid.chars().filter(char::is_ascii_alphanumeric).take(12).collect();
    let model = json!({"providerID": SYNTH_PROVIDER, "modelID": SYNTH_MODEL}).to_string();
    tx.execute(
        "INSERT INTO session(id, project_id, parent_id, slug, directory, path, title, version, agent, model, time_created, time_updated) \
         VALUES (?1, 'global', NULL, ?2, ?3, ?4, ?5, '1.18.33', ?6, ?7, ?8, ?9)",
        rusqlite::params![sid, slug, s.project, s.project.trim_start_matches('/'), title, agent, model, started, updated],
    )?;

    let mut insert_message =
        tx.prepare("INSERT INTO message(id, session_id, time_created, time_updated, data) VALUES (?1, ?2, ?3, ?4, ?5)")?;
    let mut insert_part =
        tx.prepare("INSERT INTO part(id, message_id, session_id, time_created, time_updated, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?;
    // Ids sort as the conversation runs: the reader orders messages by time, then id,
    // and parts by id.
    let (mut n_message, mut n_part) = (0usize, 0usize);
    let mut add_part = |message: &str, time: i64, value: &Value| -> rusqlite::Result<()> {
        n_part += 1;
        insert_part.execute(rusqlite::params![format!("prt_{sid}_{n_part:06}"), message, sid, time, time, value.to_string()])?;
        Ok(())
    };
    let mut last_user: Option<String> = None;
    let mut i = 0;
    while i < s.turns.len() {
        n_message += 1;
        let id = format!("msg_{sid}_{n_message:05}");
        if let SynthTurn::User { text, time } = &s.turns[i] {
            let t = time.millis();
            let data = json!({"role": "user", "time": {"created": t}, "agent": agent,
                "model": {"providerID": SYNTH_PROVIDER, "modelID": SYNTH_MODEL}});
            insert_message.execute(rusqlite::params![id, sid, t, t, data.to_string()])?;
            // User text parts carry no time of their own (opencode 1.18).
            add_part(&id, t, &json!({"type": "text", "text": text}))?;
            last_user = Some(id);
            i += 1;
            continue;
        }
        // One model step: prose and reasoning, then tool calls, until a prompt or prose
        // after a tool call.
        let start = i;
        let mut saw_tool = false;
        while i < s.turns.len() {
            let is_tool = matches!(s.turns[i], SynthTurn::Shell { .. } | SynthTurn::Read { .. } | SynthTurn::Edit { .. });
            if matches!(s.turns[i], SynthTurn::User { .. }) || (saw_tool && !is_tool) {
                break;
            }
            saw_tool |= is_tool;
            i += 1;
        }
        let step = &s.turns[start..i];
        let created = step.first().map_or(started, |t| t.time().millis());
        let completed = step.iter().map(|t| t.time().millis()).fold(created, i64::max) + 1;
        let finish = if saw_tool { "tool-calls" } else { "stop" };
        let mut data = json!({"role": "assistant", "mode": agent, "agent": agent,
            "path": {"cwd": s.project, "root": s.project}, "cost": 0,
            "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
            "modelID": SYNTH_MODEL, "providerID": SYNTH_PROVIDER, "time": {"created": created, "completed": completed},
            "finish": finish});
        if let (Some(parent), Some(obj)) = (&last_user, data.as_object_mut()) {
            obj.insert("parentID".into(), json!(parent));
        }
        insert_message.execute(rusqlite::params![id, sid, created, completed, data.to_string()])?;
        add_part(&id, created, &json!({"type": "step-start"}))?;
        for (k, turn) in step.iter().enumerate() {
            let t = turn.time().millis();
            let span = json!({"start": t, "end": t + 1});
            let call = format!("call_{n_message:05}_{k:03}");
            let tool = |name: &str, input: Value, output: &str, metadata: Value, title: &str| {
                json!({"type": "tool", "callID": call, "tool": name, "state": {"status": "completed", "input": input,
                    "output": output, "title": title, "metadata": metadata, "time": span}})
            };
            let value = match turn {
                SynthTurn::User { .. } => continue,
                SynthTurn::Assistant { text, .. } => json!({"type": "text", "text": text, "time": span}),
                SynthTurn::Reasoning { text, .. } => json!({"type": "reasoning", "text": text, "time": span}),
                SynthTurn::Shell { command, output, exit_code, .. } => tool(
                    "bash",
                    json!({"command": command, "description": "Runs the command"}),
                    output,
                    json!({"output": output, "exit": exit_code, "description": "Runs the command", "truncated": false}),
                    command,
                ),
                SynthTurn::Read { path, output, .. } => {
                    let path = absolute_in(&s.project, path);
                    tool("read", json!({"filePath": path}), output, json!({"preview": output, "truncated": false}), &path)
                }
                SynthTurn::Edit { path, old, new, .. } => {
                    let path = absolute_in(&s.project, path);
                    let diff = format!("--- {path}\n+++ {path}\n@@\n-{old}\n+{new}\n");
                    tool(
                        "edit",
                        json!({"filePath": path, "oldString": old, "newString": new}),
                        "Edit applied successfully.",
                        json!({"diff": diff, "diagnostics": {}}),
                        &path,
                    )
                }
            };
            add_part(&id, t, &value)?;
        }
        let tokens = json!({"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}});
        add_part(&id, completed, &json!({"type": "step-finish", "reason": finish, "cost": 0, "tokens": tokens}))?;
    }
    Ok(())
}

/// `path` under `project` unless it is absolute already.
fn absolute_in(project: &str, path: &str) -> String {
    if path.starts_with('/') || Path::new(path).is_absolute() {
        path.to_string()
    } else {
        format!("{}/{}", project.trim_end_matches('/'), path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Session;
    use serde_json::json;

    const T0: i64 = 1_775_030_400_000;

    const CURRENT_SCHEMA: &str = "
        CREATE TABLE session(id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, slug TEXT, directory TEXT NOT NULL, title TEXT,
            version TEXT, agent TEXT, time_created INTEGER, time_updated INTEGER);
        CREATE TABLE message(id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER, time_updated INTEGER, data TEXT);
        CREATE INDEX message_session_idx ON message(session_id);
        CREATE TABLE part(id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT, time_created INTEGER, time_updated INTEGER, data);
        CREATE INDEX part_message_idx ON part(message_id);";

    /// A store written the way the harness writes it: WAL mode, no checkpoint, the
    /// writer kept open so every row stays in the `-wal`.
    struct Store {
        _dir: tempfile::TempDir,
        db: std::path::PathBuf,
        w: Connection,
    }

    impl Store {
        fn new(schema: &str) -> Store {
            let dir = tempfile::tempdir().unwrap();
            let db = dir.path().join("opencode.db");
            let w = Connection::open(&db).unwrap();
            w.pragma_update(None, "journal_mode", "WAL").unwrap();
            w.pragma_update(None, "wal_autocheckpoint", 0).unwrap();
            w.execute_batch(schema).unwrap();
            Store { _dir: dir, db, w }
        }

        fn session(&self, id: &str, dir: &str, title: Option<&str>, parent: Option<&str>, agent: &str, (created, updated): (i64, i64)) {
            self.w
                .execute(
                    "INSERT INTO session(id, parent_id, directory, title, agent, time_created, time_updated) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    rusqlite::params![id, parent, dir, title, agent, created, updated],
                )
                .unwrap();
        }

        fn message(&self, id: &str, session: &str, time: i64, data: Value) {
            self.w
                .execute(
                    "INSERT INTO message(id, session_id, time_created, time_updated, data) VALUES (?1, ?2, ?3, ?3, ?4)",
                    rusqlite::params![id, session, time, data.to_string()],
                )
                .unwrap();
        }

        fn part(&self, id: &str, message: &str, session: &str, time: i64, data: Value) {
            self.w
                .execute(
                    "INSERT INTO part(id, message_id, session_id, time_created, time_updated, data) VALUES (?1, ?2, ?3, ?4, ?4, ?5)",
                    rusqlite::params![id, message, session, time, data.to_string()],
                )
                .unwrap();
        }

        fn src(&self) -> SourceRef {
            let mut d = Discovery::default();
            discover_db(&self.db, &mut d);
            d.sources.into_iter().next().unwrap()
        }
    }

    fn read(d: &OpencodeDialect, src: &SourceRef, opts: &ParseOptions) -> (Vec<Session>, ParseStats) {
        let mut out: Vec<Session> = Vec::new();
        let stats = parse(d, src, opts, &mut out).unwrap();
        (out, stats)
    }

    const OPENCODE: OpencodeDialect = OpencodeDialect::new("opencode");

    /// The session of the opencode page's examples, plus every other part kind.
    fn shop_store() -> Store {
        let s = Store::new(CURRENT_SCHEMA);
        s.session("ses_01", "/src/shop", Some("Cart rounding"), None, "build", (T0, T0 + 60_000));
        s.message("msg_01u", "ses_01", T0 + 1000, json!({"role": "user", "time": {"created": T0 + 1000}}));
        s.part("prt_01", "msg_01u", "ses_01", T0 + 1000, json!({"type": "text", "text": "\"cart total is off by a cent\""}));
        s.part("prt_02", "msg_01u", "ses_01", T0 + 1000, json!({"type": "text", "text": "Called the Read tool", "synthetic": true}));
        s.message(
            "msg_02a",
            "ses_01",
            T0 + 5000,
            json!({"role": "assistant", "time": {"created": T0 + 5000}, "path": {"cwd": "/src/shop"}}),
        );
        s.part("prt_03", "msg_02a", "ses_01", T0 + 5000, json!({"type": "step-start"}));
        s.part(
            "prt_04",
            "msg_02a",
            "ses_01",
            T0 + 5500,
            json!({"type": "reasoning", "text": "rounding, probably", "time": {"start": T0 + 5500}}),
        );
        s.part(
            "prt_05",
            "msg_02a",
            "ses_01",
            T0 + 6000,
            json!({"type": "tool", "tool": "bash", "callID": "call_1", "state": {"status": "completed", "input": {"command": "npm test -- cart"},
                "output": "1 failing", "metadata": {"exit": 1}}, "time": {"start": T0 + 6000}}),
        );
        s.part(
            "prt_06",
            "msg_02a",
            "ses_01",
            T0 + 7000,
            json!({"type": "tool", "tool": "read", "state": {"status": "completed", "input": {"filePath": "/src/shop/cart.ts"},
                "output": "<file body>"}, "time": {"start": T0 + 7000}}),
        );
        s.part(
            "prt_07",
            "msg_02a",
            "ses_01",
            T0 + 10_000,
            json!({"type": "tool", "tool": "apply_patch", "state": {"input": {"patchText":
                "*** Begin Patch\n*** Update File: cart.ts\n@@\n-  return Math.floor(t)\n+  return Math.round(t)\n*** End Patch"}},
                "time": {"start": T0 + 10_000}}),
        );
        s.part(
            "prt_08",
            "msg_02a",
            "ses_01",
            T0 + 11_000,
            json!({"type": "tool", "tool": "edit", "state": {"status": "completed", "input": {"filePath": "/src/shop/total.ts",
                "oldString": "Math.floor", "newString": "Math.round"}, "metadata": {"exit": "0"}}}),
        );
        s.part(
            "prt_09",
            "msg_02a",
            "ses_01",
            T0 + 12_000,
            json!({"type": "tool", "tool": "write", "state": {"status": "completed", "input": {"filePath": "NOTES.md", "content": "x"}}}),
        );
        s.part(
            "prt_10",
            "msg_02a",
            "ses_01",
            T0 + 13_000,
            json!({"type": "tool", "tool": "grep", "state": {"status": "completed", "input": {"pattern": "floor", "path": "/src/shop"},
                "output": "many hits"}}),
        );
        s.part(
            "prt_11",
            "msg_02a",
            "ses_01",
            T0 + 14_000,
            json!({"type": "tool", "tool": "edit", "state": {"status": "error", "input": {"filePath": "/src/shop/x.ts", "oldString": "a",
                "newString": "b"}, "error": "oldString not found"}}),
        );
        s.part(
            "prt_12",
            "msg_02a",
            "ses_01",
            T0 + 15_000,
            json!({"type": "text", "text": "Fixed: round, not floor.", "time": {"start": T0 + 15_000}}),
        );
        s.part("prt_13", "msg_02a", "ses_01", T0 + 15_500, json!({"type": "step-finish", "reason": "stop"}));
        s.message("msg_03s", "ses_01", T0 + 16_000, json!({"role": "system", "time": {"created": T0 + 16_000}}));
        s.part("prt_14", "msg_03s", "ses_01", T0 + 16_000, json!({"type": "text", "text": "You are opencode"}));
        s.message("msg_04u", "ses_01", T0 + 20_000, json!({"role": "user", "time": {"created": T0 + 20_000}}));
        s.part("prt_15", "msg_04u", "ses_01", T0 + 20_000, json!({"type": "compaction", "auto": true}));
        s.message(
            "msg_05a",
            "ses_01",
            T0 + 21_000,
            json!({"role": "assistant", "summary": true, "mode": "compaction", "time": {"created": T0 + 21_000}}),
        );
        s.part(
            "prt_16",
            "msg_05a",
            "ses_01",
            T0 + 21_000,
            json!({"type": "text", "text": "We fixed cart rounding.", "time": {"start": T0 + 21_000}}),
        );
        s
    }

    #[test]
    fn every_record_kind_maps_to_its_turn() {
        let s = shop_store();
        assert!(std::fs::metadata(sqlite::wal_path(&s.db)).unwrap().len() > 0, "rows sit in the WAL");
        let src = s.src();
        assert_eq!(src.parts, vec![sqlite::wal_path(&s.db)]);
        assert!(Schema::detect(Snapshot::open(&s.db).unwrap().conn()).unwrap().by_session, "read through the indexes");
        let (sessions, stats) = read(&OPENCODE, &src, &ParseOptions::default());
        assert_eq!(stats.skipped, 0, "{:?}", stats.problems);
        assert_eq!(sessions.len(), 1);
        let ses = &sessions[0];
        assert_eq!((ses.harness.as_str(), ses.id.as_str()), ("opencode", "ses_01"));
        assert_eq!(ses.project.as_deref(), Some("/src/shop"));
        assert_eq!(ses.title.as_deref(), Some("Cart rounding"));
        assert_eq!(ses.parent, None);
        assert_eq!(ses.started, Some(Timestamp(T0)));
        assert_eq!(ses.updated, Some(Timestamp(T0 + 60_000)));
        let roles: Vec<Role> = ses.turns.iter().map(|t| t.role).collect();
        use Role::*;
        assert_eq!(roles, vec![User, ToolCall, ToolCall, ToolCall, ToolCall, ToolCall, ToolCall, ToolCall, Assistant, Summary]);
        let t = &ses.turns;
        assert_eq!(t[0].text, "cart total is off by a cent");
        assert_eq!(t[0].time, Some(Timestamp(T0 + 1000)), "user text has no time: the message's");

        let bash = t[1].tool.as_ref().unwrap();
        assert_eq!((bash.name.as_str(), bash.command.as_deref()), ("bash", Some("npm test -- cart")));
        assert_eq!(bash.exit, Some(ExitStatus::Code(1)));
        assert!(bash.is_error);
        assert_eq!(bash.call_id.as_deref(), Some("call_1"));
        assert_eq!(t[1].text, "1 failing");
        assert_eq!(t[1].time, Some(Timestamp(T0 + 6000)));

        assert_eq!(t[2].files, vec![FileTouch { path: "/src/shop/cart.ts".into(), action: FileAction::Read }]);
        assert_eq!(t[2].text, "", "read output (a file body) is not kept");

        assert_eq!(t[3].files, vec![FileTouch { path: "cart.ts".into(), action: FileAction::Edit }]);
        let patch_edit = t[3].edit.as_ref().unwrap();
        assert_eq!((patch_edit.path.as_str(), patch_edit.old.as_str()), ("cart.ts", "  return Math.floor(t)"));
        assert_eq!(patch_edit.new.as_deref(), Some("  return Math.round(t)"));

        assert_eq!(t[4].files, vec![FileTouch { path: "/src/shop/total.ts".into(), action: FileAction::Edit }]);
        assert_eq!(t[4].edit, Some(Edit { path: "/src/shop/total.ts".into(), old: "Math.floor".into(), new: Some("Math.round".into()) }));
        assert_eq!(t[4].tool.as_ref().unwrap().exit, None, "exit is a shell matter");
        assert_eq!(t[5].files, vec![FileTouch { path: "/src/shop/NOTES.md".into(), action: FileAction::Write }]);
        assert_eq!((t[6].tool.as_ref().unwrap().name.as_str(), t[6].text.as_str()), ("grep", ""));
        assert!(t[6].files.is_empty(), "a search directory is not a file read");
        let failed = &t[7];
        assert!(failed.tool.as_ref().unwrap().is_error);
        assert_eq!(failed.text, "oldString not found");
        assert!(failed.files.is_empty() && failed.edit.is_none(), "a failed edit changed nothing");
        assert_eq!(t[8].text, "Fixed: round, not floor.");
        assert_eq!(t[9].text, "We fixed cart rounding.");
        assert!(t.iter().all(|turn| turn.text != "You are opencode" && turn.text != "Called the Read tool"));
        assert!(t.windows(2).all(|w| w[0].seq < w[1].seq));

        let (sessions, _) = read(&OPENCODE, &src, &ParseOptions { include_reasoning: true });
        let reasoning: Vec<&Turn> = sessions[0].turns.iter().filter(|t| t.role == Role::Reasoning).collect();
        assert_eq!(reasoning.len(), 1);
        assert_eq!((reasoning[0].text.as_str(), reasoning[0].time), ("rounding, probably", Some(Timestamp(T0 + 5500))));
    }

    #[test]
    fn sub_agent_sessions_are_their_own_and_can_be_left_out() {
        let s = shop_store();
        s.session("ses_02", "/src/shop", Some("Child session - explore"), Some("ses_01"), "explore", (T0 + 2000, T0 + 3000));
        s.message("msg_10", "ses_02", T0 + 2000, json!({"role": "user", "time": {"created": T0 + 2000}}));
        s.part("prt_20", "msg_10", "ses_02", T0 + 2000, json!({"type": "text", "text": "find the rounding code"}));
        let (sessions, _) = read(&OPENCODE, &s.src(), &ParseOptions::default());
        let child = sessions.iter().find(|x| x.id == "ses_02").unwrap();
        assert_eq!(child.parent.as_deref(), Some("ses_01"));
        assert_eq!(child.kind.as_deref(), Some("subagent"));
        assert_eq!(child.agent.as_deref(), Some("explore"));
        assert_eq!(child.title, None, "a placeholder is no title");
        assert_eq!(sessions.iter().find(|x| x.id == "ses_01").unwrap().agent, None);

        let mut top: Vec<Session> = Vec::new();
        parse_filtered(&OPENCODE, &s.src(), &ParseOptions::default(), false, &mut top).unwrap();
        assert_eq!(top.iter().map(|x| x.id.as_str()).collect::<Vec<_>>(), vec!["ses_01"]);
    }

    #[test]
    fn claude_named_and_kilo_tools_follow_their_dialects() {
        const ZCODE: OpencodeDialect = OpencodeDialect { tools: CLAUDE_NAMED_TOOLS, exit_in_output: true, ..OpencodeDialect::new("zcode") };
        const KILO: OpencodeDialect = OpencodeDialect {
            tools: ToolMap {
                shell: &["bash", "background_process"],
                read: &["read", "notebook_read"],
                edit: &["edit", "multiedit", "apply_patch", "notebook_edit"],
                write: &["write"],
            },
            ..OpencodeDialect::new("kilocode")
        };
        let s = Store::new(&format!("{CURRENT_SCHEMA} ALTER TABLE session ADD COLUMN task_type TEXT;"));
        s.session("sess_z", "/w/p", Some("New session - 2026-09-15T08:00:00Z"), Some("sess_a"), "build", (T0, T0 + 9000));
        s.w.execute("UPDATE session SET task_type = 'fork'", []).unwrap();
        s.message("m1", "sess_z", T0 + 1, json!({"role": "assistant", "time": {"created": T0 + 1}}));
        let tool =
            |id: &str, name: &str, state: Value| s.part(id, "m1", "sess_z", T0 + 2, json!({"type": "tool", "tool": name, "state": state}));
        tool("p1", "Bash", json!({"status": "completed", "input": {"command": "make"}, "output": "Exit code 2\nno rule"}));
        tool("p2", "Read", json!({"status": "completed", "input": {"file_path": "/w/p/a.go"}}));
        tool(
            "p3",
            "Edit",
            json!({"status": "completed", "input": {"file_path": "/w/p/a.go", "old_string": "x := 1", "new_string": "x := 2"}}),
        );
        tool("p4", "Write", json!({"status": "completed", "input": {"file_path": "/w/p/b.go", "content": "package p"}}));
        tool("p5", "background_process", json!({"input": {"action": "start", "command": "npm run dev"}}));
        tool("p6", "background_process", json!({"input": {"action": "kill", "id": "7", "command": "npm run dev"}}));
        tool("p7", "notebook_edit", json!({"input": {"action": "replace", "path": "nb.ipynb", "source": "print(1)"}}));
        s.message("m2", "sess_z", T0 + 3, json!({"role": "user", "semantics": {"kind": "compact_summary"}, "time": {"created": T0 + 3}}));
        s.part("p8", "m2", "sess_z", T0 + 3, json!({"type": "compaction"}));
        s.part("p9", "m2", "sess_z", T0 + 3, json!({"type": "text", "text": "Summary of the earlier work"}));

        let (z, _) = read(&ZCODE, &s.src(), &ParseOptions::default());
        let z = &z[0];
        assert_eq!((z.kind.as_deref(), z.title.as_deref()), (Some("fork"), None));
        let bash = &z.turns[0];
        assert_eq!(bash.tool.as_ref().unwrap().command.as_deref(), Some("make"));
        assert_eq!(bash.tool.as_ref().unwrap().exit, Some(ExitStatus::Code(2)));
        assert_eq!(bash.text, "no rule");
        assert_eq!(z.turns[1].files, vec![FileTouch { path: "/w/p/a.go".into(), action: FileAction::Read }]);
        assert_eq!(z.turns[2].edit, Some(Edit { path: "/w/p/a.go".into(), old: "x := 1".into(), new: Some("x := 2".into()) }));
        assert_eq!(z.turns[3].files, vec![FileTouch { path: "/w/p/b.go".into(), action: FileAction::Write }]);
        assert_eq!(z.turns.last().unwrap().role, Role::Summary);
        assert_eq!(z.turns.last().unwrap().text, "Summary of the earlier work");

        let (k, _) = read(&KILO, &s.src(), &ParseOptions::default());
        let k = &k[0];
        assert_eq!(k.harness, "kilocode");
        assert_eq!(k.turns[4].tool.as_ref().unwrap().command.as_deref(), Some("npm run dev"));
        assert_eq!(k.turns[5].tool.as_ref().unwrap().command, None, "other actions name a process, not a command");
        assert_eq!(k.turns[6].files, vec![FileTouch { path: "/w/p/nb.ipynb".into(), action: FileAction::Edit }]);
        assert_eq!(k.turns[0].tool.as_ref().unwrap().exit, None, "Kilo has no Exit-code-line convention");
    }

    #[test]
    fn a_grown_session_among_ten_thousand_is_the_only_one_re_read() {
        let s = Store::new(CURRENT_SCHEMA);
        let minute = 60_000;
        s.w.execute_batch("BEGIN").unwrap();
        for i in 0..10_000i64 {
            let (sid, mid) = (format!("ses_{i:05}"), format!("msg_{i:05}"));
            let t = T0 + i * minute;
            s.session(&sid, "/src/app", None, None, "build", (t, t));
            s.message(&mid, &sid, t, json!({"role": "user", "time": {"created": t}}));
            s.part(&format!("prt_{i:05}"), &mid, &sid, t, json!({"type": "text", "text": format!("question {i}")}));
        }
        s.w.execute_batch("COMMIT").unwrap();
        let mut src = s.src();
        let (all, stats) = read(&OPENCODE, &src, &ParseOptions::default());
        assert_eq!(all.len(), 10_000);
        let first_cursor = stats.cursor.clone().expect("a database returns a cursor");

        src.cursor = Some(first_cursor.clone());
        let (none, stats) = read(&OPENCODE, &src, &ParseOptions::default());
        assert!(none.is_empty(), "nothing changed: {:?}", none.iter().map(|x| &x.id).collect::<Vec<_>>());
        assert_eq!(stats.cursor.as_deref(), Some(first_cursor.as_str()));

        let grown_at = T0 + 10_000 * minute + 3_600_000;
        s.message("msg_grow", "ses_01234", grown_at, json!({"role": "assistant", "time": {"created": grown_at}}));
        s.part("prt_grow", "msg_grow", "ses_01234", grown_at, json!({"type": "text", "text": "an answer, later"}));
        s.w.execute("UPDATE session SET time_updated = ?1 WHERE id = 'ses_01234'", [grown_at]).unwrap();
        let (changed, stats) = read(&OPENCODE, &src, &ParseOptions::default());
        assert_eq!(changed.iter().map(|x| x.id.as_str()).collect::<Vec<_>>(), vec!["ses_01234"]);
        let texts: Vec<&str> = changed[0].turns.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(texts, vec!["question 1234", "an answer, later"], "re-read whole");
        assert_eq!(changed[0].updated, Some(Timestamp(grown_at)));

        // A row committed late, stamped a little before the newest row: still found.
        src.cursor = stats.cursor;
        s.message("msg_late", "ses_00007", grown_at - 1000, json!({"role": "user", "time": {"created": grown_at - 1000}}));
        s.part("prt_late", "msg_late", "ses_00007", grown_at - 1000, json!({"type": "text", "text": "late"}));
        let (late, _) = read(&OPENCODE, &src, &ParseOptions::default());
        assert_eq!(late.iter().map(|x| x.id.as_str()).collect::<Vec<_>>(), vec!["ses_00007"]);

        // A part updated in place (a tool finishing) re-reads its session.
        src.cursor = Some(Cursor { newest: grown_at, recent: Vec::new(), rowids: None }.to_string());
        s.w.execute("UPDATE part SET time_updated = ?1 WHERE id = 'prt_00042'", [grown_at + 5000]).unwrap();
        let (updated, _) = read(&OPENCODE, &src, &ParseOptions::default());
        assert!(updated.iter().any(|x| x.id == "ses_00042"));

        src.cursor = Some(Cursor { newest: grown_at + 86_400_000, recent: Vec::new(), rowids: None }.to_string());
        assert_eq!(read(&OPENCODE, &src, &ParseOptions::default()).0.len(), 10_000, "a cursor from the future: another database");

        // A session rewritten with rows stamped in the past (an import, a synthetic
        // writer, a clock set back): the rowid marks still find it, and only it.
        let (_, stats) = read(&OPENCODE, &s.src(), &ParseOptions::default());
        src.cursor = stats.cursor;
        let old = T0 + 3 * minute + 1;
        s.message("msg_old", "ses_00003", old, json!({"role": "assistant", "time": {"created": old}}));
        s.part("prt_old", "msg_old", "ses_00003", old, json!({"type": "text", "text": "backdated"}));
        let (backdated, _) = read(&OPENCODE, &src, &ParseOptions::default());
        assert_eq!(backdated.iter().map(|x| x.id.as_str()).collect::<Vec<_>>(), vec!["ses_00003"]);

        src.cursor = Some("garbage".into());
        let (everything, stats) = read(&OPENCODE, &src, &ParseOptions::default());
        assert_eq!(everything.len(), 10_000, "an unknown cursor means a full read");
        assert!(!stats.problems.is_empty());
    }

    #[test]
    fn garbage_rows_are_skipped_and_counted_never_fatal() {
        let s = Store::new(CURRENT_SCHEMA);
        s.session("ses_g", "/g", None, None, "build", (T0, T0));
        s.w.execute("INSERT INTO message VALUES ('m_bad', 'ses_g', 1, 1, 'not json')", []).unwrap();
        s.w.execute("INSERT INTO part VALUES ('p_0', 'm_bad', 'ses_g', 1, 1, '{\"type\":\"text\",\"text\":\"lost\"}')", []).unwrap();
        s.message("m_ok", "ses_g", T0 + 1, json!({"role": "user", "time": {"created": "2026-04-01T08:00:05Z"}}));
        for (id, data) in [("p_1", "'{broken'"), ("p_2", "'[1,2]'"), ("p_3", "NULL"), ("p_4", "42"), ("p_5", "x'00ff'")] {
            s.w.execute(&format!("INSERT INTO part VALUES ('{id}', 'm_ok', 'ses_g', 1, 1, {data})"), []).unwrap();
        }
        s.part("p_6", "m_ok", "ses_g", T0 + 1, json!({"type": "text", "text": 5}));
        s.part("p_7", "m_ok", "ses_g", T0 + 1, json!({"type": "tool", "tool": 7, "state": "weird"}));
        s.part(
            "p_8",
            "m_ok",
            "ses_g",
            T0 + 1,
            json!({"type": "tool", "tool": "bash", "state": {"input": {"command": ["not", "a", "string"]}, "metadata": {"exit": {}}}}),
        );
        let zstd_part = zstd::encode_all(&br#"{"type":"text","text":"from a zstd blob"}"#[..], 3).unwrap();
        s.w.execute("INSERT INTO part VALUES ('p_9', 'm_ok', 'ses_g', 1, 1, ?1)", [&zstd_part]).unwrap();
        s.w.execute("INSERT INTO message VALUES ('m_role', 'ses_g', 'not a time', NULL, '{\"role\":42}')", []).unwrap();
        s.w.execute("INSERT INTO part VALUES ('p_a', 'm_role', 'ses_g', NULL, 'x', '{\"type\":\"text\",\"text\":\"no role\"}')", [])
            .unwrap();
        s.w.execute("INSERT INTO message VALUES ('m_orphan', NULL, 1, 1, '{}')", []).unwrap_err();

        let (sessions, stats) = read(&OPENCODE, &s.src(), &ParseOptions::default());
        assert_eq!(stats.skipped, 6, "bad message, broken, array, NULL, number, binary: {:?}", stats.problems);
        assert!(!stats.problems.is_empty());
        let ses = &sessions[0];
        let texts: Vec<&str> = ses.turns.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(texts, vec!["", "", "from a zstd blob"]);
        assert_eq!(ses.turns[0].tool.as_ref().unwrap().name, "tool");
        assert_eq!(ses.turns[1].tool.as_ref().unwrap().command, None);
        assert_eq!(ses.turns[2].time, Some(Timestamp(T0 + 5000)), "RFC 3339 message time");
        assert!(stats.cursor.is_some(), "text and NULL times do not break the cursor");
    }

    #[test]
    fn an_older_schema_without_titles_or_part_times_still_reads_incrementally() {
        let s = Store::new(
            "CREATE TABLE session(id TEXT PRIMARY KEY, directory TEXT, time_created, time_updated);
             CREATE TABLE message(id TEXT PRIMARY KEY, session_id TEXT, time_created, data TEXT);
             CREATE TABLE part(id TEXT PRIMARY KEY, message_id TEXT, data TEXT);",
        );
        // The opencode page's own example rows.
        s.w.execute_batch(
            "INSERT INTO session VALUES ('ses_01', '/src/shop', 1775030400000, 1775030460000);
             INSERT INTO message VALUES ('msg_u', 'ses_01', 1775030401000, '{\"role\":\"user\",\"time\":{\"created\":1775030401000}}');
             INSERT INTO part VALUES ('prt_1', 'msg_u', '{\"type\":\"text\",\"text\":\"cart total is off by a cent\",\"time\":{\"start\":1775030401000}}');
             INSERT INTO session VALUES ('ses_02', '/src/other', '2026-04-01T08:00:00Z', '2026-04-01T08:01:00Z');
             INSERT INTO message VALUES ('msg_o', 'ses_02', '2026-04-01T08:00:01Z', '{\"role\":\"user\"}');
             INSERT INTO part VALUES ('prt_o', 'msg_o', '{\"type\":\"text\",\"text\":\"other\"}');",
        )
        .unwrap();
        let mut src = s.src();
        assert!(!Schema::detect(Snapshot::open(&s.db).unwrap().conn()).unwrap().by_session, "one sorted query");
        let (sessions, stats) = read(&OPENCODE, &src, &ParseOptions::default());
        assert_eq!(sessions.len(), 2);
        assert_eq!(sessions[0].turns[0].text, "cart total is off by a cent");
        assert_eq!(sessions[0].title, None);
        assert_eq!(sessions[1].turns[0].time, Some(Timestamp(T0 + 1000)), "message column time as RFC 3339");
        assert_eq!(sessions[1].started, Some(Timestamp(T0)));
        src.cursor = stats.cursor;
        s.w.execute(
            "INSERT INTO part VALUES ('prt_2', 'msg_u', '{\"type\":\"text\",\"text\":\"still off\",\"time\":{\"start\":1775040000000}}')",
            [],
        )
        .unwrap();
        let (changed, _) = read(&OPENCODE, &src, &ParseOptions::default());
        assert_eq!(changed.iter().map(|x| x.id.as_str()).collect::<Vec<_>>(), vec!["ses_01"], "found through the part's JSON time");
        assert_eq!(changed[0].turns.len(), 2);
    }

    #[test]
    fn a_database_of_another_schema_is_an_error_and_empty_files_are_not_discovered() {
        let s = Store::new("CREATE TABLE unrelated(x);");
        let mut out: Vec<Session> = Vec::new();
        let err = parse(&OPENCODE, &s.src(), &ParseOptions::default(), &mut out).unwrap_err();
        assert!(matches!(&err, FormatError::Corrupt { path, reason } if *path == s.db && reason.contains("session")), "{err}");

        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("kilo.db");
        std::fs::write(&empty, b"").unwrap();
        let mut d = Discovery::default();
        discover_db(&empty, &mut d);
        discover_db(&dir.path().join("missing.db"), &mut d);
        assert!(d.sources.is_empty());
        assert_eq!(d.roots, vec![(empty, true), (dir.path().join("missing.db"), false)]);
    }

    fn synth(id: &str, project: &str) -> SynthSession {
        let at = |s: i64| Timestamp(T0 + s * 1000);
        SynthSession {
            id: id.to_string(),
            project: project.to_string(),
            title: None,
            started: at(0),
            turns: vec![
                SynthTurn::User { text: "why does the rounding test fail?".into(), time: at(0) },
                SynthTurn::Reasoning { text: "look at the test first".into(), time: at(1) },
                SynthTurn::Assistant { text: "Running the tests.".into(), time: at(1) },
                SynthTurn::Shell { command: "cargo test -p billing".into(), output: "1 failed".into(), exit_code: 101, time: at(2) },
                SynthTurn::Read { path: "src/round.rs".into(), output: "fn round() {}".into(), time: at(3) },
                SynthTurn::Edit { path: "/src/billing/src/round.rs".into(), old: "floor".into(), new: "round".into(), time: at(4) },
                SynthTurn::Assistant { text: "Fixed: round, not floor.".into(), time: at(5) },
                SynthTurn::User { text: "thanks".into(), time: at(6) },
                SynthTurn::Assistant { text: "You are welcome.".into(), time: at(7) },
            ],
        }
    }

    #[test]
    fn synthetic_sessions_append_to_one_database_and_read_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("share/opencode/opencode.db");
        assert_eq!(write_synthetic(&db, &synth("ses_a", "/src/billing"), "build").unwrap(), db);
        write_synthetic(&db, &synth("ses_b", "/src/other"), "build").unwrap();
        // Written again: replaced, not doubled.
        write_synthetic(&db, &synth("ses_a", "/src/billing"), "build").unwrap();
        let mut d = Discovery::default();
        discover_db(&db, &mut d);
        let (sessions, stats) = read(&OPENCODE, &d.sources[0], &ParseOptions { include_reasoning: true });
        assert_eq!(stats.skipped, 0, "{:?}", stats.problems);
        assert_eq!(sessions.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), vec!["ses_a", "ses_b"]);
        let a = &sessions[0];
        assert_eq!((a.project.as_deref(), a.title.as_deref()), (Some("/src/billing"), None), "the placeholder title is dropped");
        assert_eq!((a.started, a.updated), (Some(Timestamp(T0)), Some(Timestamp(T0 + 7000))));
        let roles: Vec<Role> = a.turns.iter().map(|t| t.role).collect();
        use Role::*;
        assert_eq!(roles, vec![User, Reasoning, Assistant, ToolCall, ToolCall, ToolCall, Assistant, User, Assistant]);
        let shell = a.turns[3].tool.as_ref().unwrap();
        assert_eq!(
            (shell.name.as_str(), shell.command.as_deref(), shell.exit.clone()),
            ("bash", Some("cargo test -p billing"), Some(ExitStatus::Code(101)))
        );
        assert_eq!(a.turns[3].text, "1 failed");
        assert_eq!(a.turns[4].files, vec![FileTouch { path: "/src/billing/src/round.rs".into(), action: FileAction::Read }]);
        assert_eq!(
            a.turns[5].edit,
            Some(Edit { path: "/src/billing/src/round.rs".into(), old: "floor".into(), new: Some("round".into()) })
        );
        assert_eq!(a.turns[0].time, Some(Timestamp(T0)), "a user part falls back to its message's time");
        assert_eq!(a.turns[8].text, "You are welcome.");
        let (plain, _) = read(&OPENCODE, &d.sources[0], &ParseOptions::default());
        assert!(!plain[0].turns.iter().any(|t| t.role == Reasoning));
    }

    /// opencode's store as its adapter declares it: `XDG_DATA_HOME` honoured on Linux,
    /// `~/.local/share` looked at too elsewhere.
    static SPEC: crate::store::StoreSpec = crate::store::StoreSpec::new(&[crate::store::Store {
        name: "",
        roots: &[
            crate::store::Root::any("${XDG_DATA_HOME:-~/.local/share}/opencode"),
            crate::store::Root::macos("~/.local/share/opencode"),
            crate::store::Root::windows("~/.local/share/opencode"),
        ],
        layout: crate::store::Layout::Database("opencode.db"),
    }]);

    #[test]
    fn the_spec_places_the_database_and_the_subagent_switch_travels_in_the_key() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        let env = StoreEnv::with_home(h);
        let files = |env: &StoreEnv| SPEC.database_files("opencode", &SPEC.stores[0], env);
        assert_eq!(files(&env), vec![h.join(".local/share/opencode/opencode.db")]);
        let xdg = StoreEnv::with_home(h).set("XDG_DATA_HOME", "/x/data");
        if cfg!(target_os = "linux") {
            assert_eq!(files(&xdg), vec![PathBuf::from("/x/data/opencode/opencode.db")]);
        } else {
            assert_eq!(files(&xdg), vec![PathBuf::from("/x/data/opencode/opencode.db"), h.join(".local/share/opencode/opencode.db")]);
        }
        let root = StoreEnv::with_home(h).set("DEJA_OPENCODE_ROOT", "/r").set("XDG_DATA_HOME", "/x");
        assert_eq!(files(&root), vec![PathBuf::from("/r/opencode.db")]);
        let file = root.clone().set("DEJA_OPENCODE_DB", "~/copies/oc.db");
        assert_eq!(files(&file), vec![h.join("copies/oc.db")], "the file variable wins");
        let as_dir = root.set("DEJA_OPENCODE_DB", h.display().to_string());
        assert_eq!(files(&as_dir), vec![h.join("opencode.db")], "a directory means the database in it");

        let db = h.join(".local/share/opencode/opencode.db");
        write_synthetic(&db, &synth("ses_top", "/p"), "build").unwrap();
        let s = Connection::open(&db).unwrap();
        s.execute(
            "INSERT INTO session(id, project_id, parent_id, slug, directory, title, version, time_created, time_updated) \
             VALUES ('ses_kid', 'global', 'ses_top', 'k', '/p', 'Child session - x', '1', ?1, ?1)",
            [T0],
        )
        .unwrap();
        s.execute("INSERT INTO message VALUES ('msg_k', 'ses_kid', ?1, ?1, '{\"role\":\"user\"}')", [T0]).unwrap();
        s.execute("INSERT INTO part VALUES ('prt_k', 'msg_k', 'ses_kid', ?1, ?1, '{\"type\":\"text\",\"text\":\"look around\"}')", [T0])
            .unwrap();
        drop(s);
        let ids = |env: &StoreEnv| {
            let found = discover_databases("opencode", &SPEC, env);
            assert_eq!(found.roots, vec![(db.clone(), true)]);
            let mut out: Vec<Session> = Vec::new();
            for src in &found.sources {
                parse_discovered(&OPENCODE, src, &ParseOptions::default(), &mut out).unwrap();
            }
            (found.sources[0].key.clone(), out.into_iter().map(|s| s.id).collect::<Vec<_>>())
        };
        assert_eq!(ids(&env), (None, vec!["ses_kid".to_string(), "ses_top".to_string()]));
        let off = StoreEnv::with_home(h).set("DEJA_INCLUDE_SUBAGENTS", "0");
        assert_eq!(ids(&off), (Some(WITHOUT_SUBAGENTS_KEY.to_string()), vec!["ses_top".to_string()]));
    }
}

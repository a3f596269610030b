//! Omnigent (`omnigent`): a multi-agent chat/coding runner keeping every conversation in
//! one SQLite database, `~/.omnigent/chat.db`, as an ordered list of Responses-API-style
//! items (`conversation_items`, `type` + JSON `data`). No family reader shares it, so the
//! adapter reads it itself, through [`deja_core::sqlite::Snapshot`].
//!
//! **Secrets.** The same database holds Omnigent's authentication secrets. The reader
//! queries only `conversations`, `omnigent_conversation_metadata` and
//! `conversation_items` (never `search_text`, never another table), so no secret is
//! ever indexed. The page asks that the file never be copied; the brief's rule that every
//! database is read through `Snapshot` wins, and that copy is private (a 0700 temporary
//! directory), never synced, and deleted as soon as the parse ends.
//!
//! **Variables.** `DEJA_OMNIGENT_DB` names the database file (a directory means the
//! `chat.db` in it); else `DEJA_OMNIGENT_ROOT` names the directory holding `chat.db`
//! (the sessions root of a one-database store); else `~/.omnigent`.
//!
//! **Schema generations** (told apart by `sqlite_master`): (b) current, 16-byte BLOB UUID
//! ids (rendered as UUID text) and `session_overrides` JSON on `conversations`; (a) text
//! ids with the separate metadata table; (c) the oldest single-table form, with no
//! `conversation_items`, is unsupported: the parse returns no session and says so.
//!
//! | record / field | Turn | rule |
//! | --- | --- | --- |
//! | `conversations` row | session | id (UUID text), `title`, `parent_conversation_id` → `parent`; metadata `workspace` = project (else a `workspace`/`cwd` in `session_overrides`), `sub_agent_name` = agent, kind `subagent` for a child; times epoch seconds |
//! | `message`, `role: "user"` | `User` | `content[]` `input_text` (or `text`) parts |
//! | `message`, `role: "assistant"` | `Assistant` | `content[]` `output_text` (or `text`) parts |
//! | `message`, other roles | skipped | harness-authored |
//! | `function_call` | `ToolCall` | `name`; `arguments` (a JSON string) decoded generically: `command` → command (`sys_os_shell`), a path key → files, old-text → edit span |
//! | `function_call_output` | folded into its call by `call_id` | text = `output`; unpaired → `ToolOutput` |
//! | `terminal_command`, `kind: "input"` | `ToolCall` | tool `terminal`, command = `input` (the user typed it) |
//! | `reasoning` | `Reasoning` | only with `include_reasoning` (`summary[].text`) |
//! | `slash_command`, `compaction`, `routing_decision`, `error` | skipped | as the page says |
//! | item whose `data` is not JSON | skipped | counted |
//!
//! **Row cursor.** A parse returns the highest `conversation_items` rowid, the newest
//! `updated_at` and, for the conversations touched within [`CURSOR_SLACK_MS`](deja_core::sqlite::CURSOR_SLACK_MS) of it, their
//! row state (update time, item count, data bytes). Given `SourceRef::cursor`, only
//! conversations with an item row past the mark, or touched since (minus the slack) with
//! a different row state, are re-read, each whole. Usage updates touch only the metadata
//! row, which the reader does not track: usage is not indexed.

use std::collections::{HashMap, HashSet};

use deja_core::family::json_docs::{first_str, guessed_call_turn, json_arg};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::sqlite::{self, RowCursor};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Role, SessionBuilder,
    SessionSink, SourceRef, Timestamp, ToolUse, Turn,
};
use rusqlite::types::ValueRef;
use rusqlite::Connection;
use serde_json::Value;

const ID: &str = "omnigent";
const DB_NAME: &str = "chat.db";
const METADATA: &str = "omnigent_conversation_metadata";

/// The Omnigent adapter.
pub struct OmnigentFormat;

deja_core::inventory::submit!(deja_core::Registration(&OmnigentFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Omnigent",
    container: "SQLite, one database for every conversation (and Omnigent's secrets): Responses-style conversation items",
    store: StoreSpec::new(&[Store { name: "", roots: &[Root::any("~/.omnigent")], layout: Layout::Database(DB_NAME) }]),
    needs: &[],
    format_summary: "Omnigent keeps every conversation in one SQLite database, `~/.omnigent/chat.db`, beside its \
        authentication secrets (never read: only the conversation tables are queried). A `conversations` row \
        (title, parent and root conversation, epoch-second times; current schema: 16-byte BLOB UUID ids rendered as \
        UUID text) with its `omnigent_conversation_metadata` row (workspace = project, `sub_agent_name`, branch), and \
        `conversation_items` in `position` order: `message` items with `input_text` / `output_text` parts, \
        `function_call` (JSON-string `arguments`; `sys_os_shell` runs `command`) folded with its \
        `function_call_output` by `call_id`, user-typed `terminal_command` inputs as commands; reasoning, \
        compaction, routing and error items skipped. The oldest single-table schema is not read. Read through a \
        private, transient copy with its WAL, incrementally by item rowid and update time.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::Unknown, handoff: Handoff::Paste("no start-with-prompt command is known") },
};

impl HarnessFormat for OmnigentFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        parse_db(src, opts, out)
    }
}

/// A conversation id as text: a 16-byte BLOB as a UUID, text as it is.
pub fn id_text(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Blob(b) if b.len() == 16 => {
            let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
            Some(format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32]))
        }
        ValueRef::Blob(b) => Some(b.iter().map(|x| format!("{x:02x}")).collect()),
        ValueRef::Text(t) => Some(String::from_utf8_lossy(t).trim().to_string()).filter(|s| !s.is_empty()),
        ValueRef::Integer(n) => Some(n.to_string()),
        _ => None,
    }
}

/// `(updated ms, item rows, data bytes)` of one conversation.
type ConvState = sqlite::SessionState;

struct Conversation {
    /// The `conversations` rowid, to read one conversation's items without binding a BLOB id.
    rowid: i64,
    title: Option<String>,
    parent: Option<String>,
    project: Option<String>,
    agent: Option<String>,
    created: Option<Timestamp>,
    updated: Option<Timestamp>,
}

fn parse_db(src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let db = src.path.as_path();
    let (store, mut stats) = sqlite::Db::open(src)?;
    let conn = store.conn();
    let sql_err = |e: rusqlite::Error| store.err(e);
    let conv_cols = sqlite::table_columns(conn, "conversations").map_err(sql_err)?;
    if !conv_cols.iter().any(|c| c == "id") {
        return Err(FormatError::corrupt(db, "no `conversations(id, …)` table: not an Omnigent database"));
    }
    let item_cols = sqlite::table_columns(conn, "conversation_items").map_err(sql_err)?;
    if !["conversation_id", "type", "data"].iter().all(|c| item_cols.iter().any(|x| x == c)) {
        // The oldest single-table generation: the page leaves it unsupported.
        stats.problem(format!("{}: the oldest single-table Omnigent schema is not read", db.display()));
        return Ok(stats);
    }

    let convs = read_conversations(conn, &conv_cols, &mut stats).map_err(sql_err)?;
    let (states, max_rowid) = conversation_states(conn, &convs).map_err(sql_err)?;
    let newest = states.values().filter_map(|s| s.0).max();
    let previous = RowCursor::previous(&mut stats, src, newest, max_rowid);
    let wanted: Option<HashSet<String>> = match &previous {
        None => None,
        Some(c) => {
            let mut w = c.touched_since(&states);
            w.extend(conversations_with_items_after(conn, c.mark).map_err(sql_err)?);
            Some(w)
        }
    };
    stats.cursor = RowCursor::after(&states, max_rowid);

    // A full read takes every item in one pass sorted by conversation (ids are BLOBs in
    // the current schema, so grouping by the rendered id is simpler than binding each
    // back); an incremental one reads each wanted conversation through its row.
    let order = if item_cols.iter().any(|c| c == "position") { "conversation_id, position, rowid" } else { "conversation_id, rowid" };
    let mut reader = ItemReader { src, opts, convs: &convs, current: None };
    match wanted {
        None => {
            let mut stmt =
                conn.prepare(&format!("SELECT conversation_id, type, data FROM conversation_items ORDER BY {order}")).map_err(sql_err)?;
            let mut rows = stmt.query([]).map_err(sql_err)?;
            while let Some(row) = rows.next().map_err(sql_err)? {
                reader.row(row, &mut stats, out).map_err(sql_err)?;
            }
        }
        Some(wanted) => {
            let mut stmt = conn
                .prepare(&format!(
                    "SELECT conversation_id, type, data FROM conversation_items \
                     WHERE conversation_id = (SELECT id FROM conversations WHERE rowid = ?1) ORDER BY {order}"
                ))
                .map_err(sql_err)?;
            let mut marks: Vec<i64> = wanted.iter().filter_map(|id| convs.get(id).map(|c| c.rowid)).collect();
            marks.sort_unstable();
            for mark in marks {
                let mut rows = stmt.query([mark]).map_err(sql_err)?;
                while let Some(row) = rows.next().map_err(sql_err)? {
                    reader.row(row, &mut stats, out).map_err(sql_err)?;
                }
            }
        }
    }
    reader.finish(out);
    Ok(stats)
}

/// Folds item rows (grouped by conversation) into sessions.
struct ItemReader<'a> {
    src: &'a SourceRef,
    opts: &'a ParseOptions,
    convs: &'a HashMap<String, Conversation>,
    current: Option<(String, SessionBuilder)>,
}

impl ItemReader<'_> {
    fn row(&mut self, row: &rusqlite::Row<'_>, stats: &mut ParseStats, out: &mut dyn SessionSink) -> rusqlite::Result<()> {
        let Some(id) = id_text(row.get_ref(0)?) else {
            // A row read and skipped is a record: stats never skip more than they read.
            stats.records += 1;
            stats.skip(|| "an item without a readable conversation id".into());
            return Ok(());
        };
        let Some(conv) = self.convs.get(&id) else { return Ok(()) };
        if self.current.as_ref().is_none_or(|(c, _)| *c != id) {
            self.finish(out);
            self.current = Some((id.clone(), start(self.src, &id, conv)));
        }
        let Some((_, builder)) = self.current.as_mut() else { return Ok(()) };
        stats.records += 1;
        let kind = sqlite::column_text(row, 1).ok().flatten().unwrap_or_default();
        match sqlite::column_json(row, 2) {
            Ok(data) => push_item(&kind, &data.unwrap_or(Value::Null), self.opts, conv.project.as_deref(), builder),
            Err(e) => stats.skip(|| format!("conversation {id}: item data: {e}")),
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut dyn SessionSink) {
        if let Some(session) = self.current.take().and_then(|(_, b)| b.finish()) {
            out.session(session);
        }
    }
}

fn start(src: &SourceRef, id: &str, conv: &Conversation) -> SessionBuilder {
    let mut builder = SessionBuilder::new(ID, id, src.clone());
    let s = builder.session_mut();
    s.title = conv.title.clone();
    s.project = conv.project.clone();
    s.parent = conv.parent.clone();
    s.agent = conv.agent.clone();
    if conv.parent.is_some() {
        s.kind = Some("subagent".into());
    }
    builder.touch(conv.created);
    builder.touch(conv.updated);
    builder
}

fn read_conversations(conn: &Connection, cols: &[String], stats: &mut ParseStats) -> rusqlite::Result<HashMap<String, Conversation>> {
    let c = |name: &str| if cols.iter().any(|x| x == name) { format!("c.{name}") } else { "NULL".to_string() };
    let meta_cols = sqlite::table_columns(conn, METADATA)?;
    let joinable = meta_cols.iter().any(|x| x == "id");
    let m = |name: &str| if joinable && meta_cols.iter().any(|x| x == name) { format!("m.{name}") } else { "NULL".to_string() };
    let join = if joinable {
        let ws = if meta_cols.iter().any(|x| x == "workspace_id") && cols.iter().any(|x| x == "workspace_id") {
            " AND m.workspace_id IS c.workspace_id"
        } else {
            ""
        };
        format!("LEFT JOIN {METADATA} m ON m.id = c.id{ws}")
    } else {
        String::new()
    };
    let sql = format!(
        "SELECT c.id, {}, {}, {}, {}, {}, {}, {}, c.rowid FROM conversations c {join}",
        c("title"),
        c("parent_conversation_id"),
        c("created_at"),
        c("updated_at"),
        c("session_overrides"),
        m("workspace"),
        m("sub_agent_name"),
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    let mut out = HashMap::new();
    while let Some(row) = rows.next()? {
        let Some(id) = id_text(row.get_ref(0)?) else {
            // A row read and skipped is a record: stats never skip more than they read.
            stats.records += 1;
            stats.skip(|| "a conversation row without a readable id".into());
            continue;
        };
        let text = |i: usize| sqlite::column_text(row, i).ok().flatten().map(|t| t.trim().to_string()).filter(|t| !t.is_empty());
        let overrides = sqlite::column_json(row, 5).ok().flatten().unwrap_or(Value::Null);
        let project = text(6).or_else(|| first_str(&overrides, &["workspace", "cwd"]).map(str::to_string));
        out.insert(
            id,
            Conversation {
                rowid: row.get(8)?,
                title: text(1),
                parent: id_text(row.get_ref(2)?),
                project,
                agent: text(7),
                created: sqlite::value_timestamp(row.get_ref(3)?),
                updated: sqlite::value_timestamp(row.get_ref(4)?),
            },
        );
    }
    Ok(out)
}

/// Each conversation's row state, and the highest `conversation_items` rowid.
fn conversation_states(
    conn: &Connection,
    convs: &HashMap<String, Conversation>,
) -> rusqlite::Result<(HashMap<String, ConvState>, Option<i64>)> {
    let mut states: HashMap<String, ConvState> =
        convs.iter().map(|(id, c)| (id.clone(), (c.updated.or(c.created).map(|t| t.0), 0, 0))).collect();
    let mut stmt =
        conn.prepare("SELECT conversation_id, count(*), sum(coalesce(length(data), 0)) FROM conversation_items GROUP BY conversation_id")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let Some(id) = id_text(row.get_ref(0)?) else { continue };
        if let Some(state) = states.get_mut(&id) {
            state.1 = sqlite::value_i64(row.get_ref(1)?).unwrap_or(0);
            state.2 = sqlite::value_i64(row.get_ref(2)?).unwrap_or(0);
        }
    }
    // A WITHOUT ROWID table has no rowid: then no cursor, a full read each time.
    let max_rowid = sqlite::max_rowid(conn, "conversation_items").ok().flatten();
    Ok((states, max_rowid))
}

fn conversations_with_items_after(conn: &Connection, mark: i64) -> rusqlite::Result<HashSet<String>> {
    sqlite::keys_after(conn, "conversation_items", "conversation_id", mark, id_text)
}

/// The text parts of a message's `content` (a string, or parts of the given types).
fn content_text(content: Option<&Value>, types: &[&str]) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str).is_none_or(|t| types.contains(&t)))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .filter(|t| !t.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn push_item(kind: &str, data: &Value, opts: &ParseOptions, cwd: Option<&str>, builder: &mut SessionBuilder) {
    let time = data.get("created_at").or_else(|| data.get("timestamp")).and_then(Timestamp::from_json);
    match kind {
        "message" => match data.get("role").and_then(Value::as_str) {
            Some("user") => {
                builder.push(Turn::new(Role::User, content_text(data.get("content"), &["input_text", "text"])).at(time));
            }
            Some("assistant") => {
                builder.push(Turn::new(Role::Assistant, content_text(data.get("content"), &["output_text", "text"])).at(time));
            }
            _ => {}
        },
        "function_call" => {
            let name = data.get("name").and_then(Value::as_str).unwrap_or("tool");
            let args = json_arg(data.get("arguments"));
            builder.push_call(data.get("call_id").and_then(Value::as_str), guessed_call_turn(name, &args, cwd, time));
        }
        "function_call_output" => {
            let call_id = data.get("call_id").and_then(Value::as_str).unwrap_or("");
            let output = match data.get("output") {
                Some(Value::String(s)) => s.clone(),
                Some(v @ Value::Array(_)) => content_text(Some(v), &["output_text", "input_text", "text"]),
                Some(Value::Null) | None => String::new(),
                Some(v) => v.to_string(),
            };
            if call_id.is_empty() || !builder.complete_call(call_id, &output, false, None, time) {
                builder.push_orphan_result(call_id, &output, false, None, time);
            }
        }
        "terminal_command" if data.get("kind").and_then(Value::as_str) == Some("input") => {
            if let Some(cmd) = data.get("input").and_then(Value::as_str).filter(|c| !c.trim().is_empty()) {
                let mut turn = Turn::new(Role::ToolCall, "").at(time);
                turn.tool = Some(ToolUse { name: "terminal".into(), command: Some(cmd.trim().to_string()), ..ToolUse::default() });
                builder.push_call(None, turn);
            }
        }
        "reasoning" if opts.include_reasoning => {
            let text = content_text(data.get("summary"), &["summary_text", "text"]);
            builder.push(Turn::new(Role::Reasoning, text).at(time));
        }
        // slash_command, compaction, routing_decision, error and anything newer.
        _ => {}
    }
}

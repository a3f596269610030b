//! Shelley (`shelley`): the exe.dev coding agent keeps every conversation in one SQLite
//! database, `~/.config/shelley/shelley.db`: a `conversations` row per session and
//! `messages` rows in `sequence_id` order whose `llm_data` is JSON of Shelley's Go LLM
//! structs (PascalCase keys, integer content type tags). No family reader shares it, so
//! the adapter reads it itself, through [`deja_core::sqlite::Snapshot`].
//!
//! **Variables.** `DEJA_SHELLEY_DB` names the database file (a directory means the
//! `shelley.db` in it); else `DEJA_SHELLEY_ROOT` names the directory holding
//! `shelley.db` (the sessions root of a one-database store); else `~/.config/shelley`.
//!
//! | record / field | Turn | rule |
//! | --- | --- | --- |
//! | `conversations` row | session | id `conversation_id`, title `slug`, project `cwd`, `parent_conversation_id` → `parent` (kind `subagent`, also when `user_initiated = 0`) |
//! | `messages.type` `system` / `error` / `gitinfo` | skipped | bookkeeping |
//! | `Content[].Type = 2` (`Text`) in a `user` row | `User` | `user_data` (a string or its `Text`/`text`) when `llm_data` has no text |
//! | `Content[].Type = 2` in an `agent` row | `Assistant` | |
//! | `Type` 3, 4 (thinking, redacted) | `Reasoning` | only with `include_reasoning` (`Thinking`; redacted has none) |
//! | `Type` 5, 7 (tool use, server tool use) | `ToolCall` | `ToolName`; `ToolInput` decoded generically (`command` → command; a path key → files, the action from the name and an old-text/content key; old-text → edit span) |
//! | `Type` 6, 8 (tool result) | folded into its call by `ToolUseID` | text = the nested `ToolResult[].Text`; `ToolError` → `is_error`; unpaired → `ToolOutput` |
//! | `Type` 9 (web search result) | skipped | |
//! | `usage_data`, `display_data` | skipped | accounting and UI |
//! | a row whose `llm_data` is not JSON | skipped | counted |
//!
//! **Row cursor.** `updated_at` has whole-second precision, so time alone cannot tell a
//! same-second edit. A parse returns the highest `messages` rowid, the newest update time
//! and, for the conversations touched within [`CURSOR_SLACK_MS`](deja_core::sqlite::CURSOR_SLACK_MS) of it, their row state
//! (update time, message count, payload bytes). Given `SourceRef::cursor`, only
//! conversations with a message row past the mark, or touched since (minus the slack)
//! with a different row state, are re-read, each whole.

use std::collections::{HashMap, HashSet};

use deja_core::family::json_docs::{first_str, guessed_call_turn, json_arg};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::sqlite::{self, RowCursor};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Role, SessionBuilder,
    SessionSink, SourceRef, Timestamp, Turn,
};
use rusqlite::Connection;
use serde_json::Value;

const ID: &str = "shelley";
const DB_NAME: &str = "shelley.db";

/// The Shelley adapter.
pub struct ShelleyFormat;

deja_core::inventory::submit!(deja_core::Registration(&ShelleyFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Shelley",
    container: "SQLite, one database for every conversation: conversations and messages rows, Go-struct JSON payloads",
    store: StoreSpec::new(&[Store { name: "", roots: &[Root::any("~/.config/shelley")], layout: Layout::Database(DB_NAME) }]),
    needs: &[],
    format_summary: "Shelley keeps every conversation in one SQLite database, `~/.config/shelley/shelley.db`: a \
        `conversations` row (slug, cwd, `parent_conversation_id`, `user_initiated`) and `messages` rows in \
        `sequence_id` order whose `type` is `user`, `agent`, `tool` or bookkeeping (`system`, `error`, `gitinfo`). \
        `llm_data` is JSON of Shelley's Go LLM structs: `{\"Role\": 0|1, \"Content\": [{\"Type\": n, …}]}` with type 2 \
        text, 3/4 thinking, 5/7 tool use (`ID`, `ToolName`, `ToolInput`), 6/8 tool results (`ToolUseID`, `ToolError`, \
        nested `ToolResult[]`) folded into their calls, 9 web-search results. Tool inputs are decoded generically. \
        Read through a private copy with its WAL, incrementally by message rowid and update time (whole seconds, \
        so a row-state check covers same-second edits).",
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

impl HarnessFormat for ShelleyFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        parse_db(src, opts, out)
    }
}

/// `(updated ms, message rows, payload bytes)` of one conversation.
type ConvState = sqlite::SessionState;

struct Conversation {
    slug: Option<String>,
    cwd: Option<String>,
    parent: Option<String>,
    agent_spawned: bool,
    created: Option<Timestamp>,
    updated: Option<Timestamp>,
}

fn parse_db(src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let db = src.path.as_path();
    let (store, mut stats) = sqlite::Db::open(src)?;
    let conn = store.conn();
    let sql_err = |e: rusqlite::Error| store.err(e);
    let message_cols = sqlite::table_columns(conn, "messages").map_err(sql_err)?;
    if sqlite::table_columns(conn, "conversations").map_err(sql_err)?.is_empty()
        || !["conversation_id", "llm_data"].iter().all(|c| message_cols.iter().any(|x| x == c))
    {
        return Err(FormatError::corrupt(db, "no `conversations` / `messages(conversation_id, llm_data)` tables: not a Shelley database"));
    }

    let convs = read_conversations(conn, &mut stats).map_err(sql_err)?;
    let (states, max_rowid) = conversation_states(conn, &convs).map_err(sql_err)?;
    let newest = states.values().filter_map(|s| s.0).max();
    let previous = RowCursor::previous(&mut stats, src, newest, max_rowid);
    let wanted: Option<HashSet<String>> = match &previous {
        None => None,
        Some(c) => {
            let mut w = c.touched_since(&states);
            w.extend(conversations_with_rows_after(conn, c.mark).map_err(sql_err)?);
            Some(w)
        }
    };
    stats.cursor = RowCursor::after(&states, max_rowid);

    let col = |c: &str| if message_cols.iter().any(|x| x == c) { c.to_string() } else { format!("NULL AS {c}") };
    let order = if message_cols.iter().any(|x| x == "sequence_id") { "sequence_id, rowid" } else { "rowid" };
    let sql = format!(
        "SELECT {}, llm_data, {}, {} FROM messages WHERE conversation_id = ?1 ORDER BY {order}",
        col("type"),
        col("user_data"),
        col("created_at")
    );
    let mut stmt = conn.prepare(&sql).map_err(sql_err)?;
    let mut ids: Vec<&String> = convs.keys().filter(|id| wanted.as_ref().is_none_or(|w| w.contains(*id))).collect();
    ids.sort();
    for id in ids {
        let Some(conv) = convs.get(id) else { continue };
        let mut builder = SessionBuilder::new(ID, id.clone(), src.clone());
        {
            let s = builder.session_mut();
            s.title = conv.slug.clone();
            s.project = conv.cwd.clone();
            s.parent = conv.parent.clone();
            if conv.parent.is_some() || conv.agent_spawned {
                s.kind = Some("subagent".into());
            }
        }
        builder.touch(conv.created);
        builder.touch(conv.updated);
        let mut rows = stmt.query([id]).map_err(sql_err)?;
        while let Some(row) = rows.next().map_err(sql_err)? {
            stats.records += 1;
            let kind = sqlite::column_text(row, 0).ok().flatten().unwrap_or_default();
            if !matches!(kind.as_str(), "user" | "agent" | "tool") {
                continue;
            }
            let llm = match sqlite::column_json(row, 1) {
                Ok(v) => v.unwrap_or(Value::Null),
                Err(e) => {
                    stats.skip(|| format!("conversation {id}: llm_data: {e}"));
                    continue;
                }
            };
            let user_data =
                sqlite::column_json(row, 2).ok().flatten().or_else(|| sqlite::column_text(row, 2).ok().flatten().map(Value::String));
            let time = row.get_ref(3).ok().and_then(sqlite::value_timestamp);
            push_message(&kind, &llm, user_data.as_ref(), time, opts, conv.cwd.as_deref(), &mut builder);
        }
        if let Some(session) = builder.finish() {
            out.session(session);
        }
    }
    Ok(stats)
}

fn read_conversations(conn: &Connection, stats: &mut ParseStats) -> rusqlite::Result<HashMap<String, Conversation>> {
    let cols = sqlite::table_columns(conn, "conversations")?;
    let col = |c: &str| if cols.iter().any(|x| x == c) { c.to_string() } else { "NULL".to_string() };
    let sql = format!(
        "SELECT conversation_id, {}, {}, {}, {}, {}, {} FROM conversations",
        col("slug"),
        col("cwd"),
        col("parent_conversation_id"),
        col("user_initiated"),
        col("created_at"),
        col("updated_at")
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    let mut out = HashMap::new();
    while let Some(row) = rows.next()? {
        let Ok(Some(id)) = sqlite::column_text(row, 0) else {
            stats.skip(|| "a conversation row without a readable id".into());
            continue;
        };
        let text = |i: usize| sqlite::column_text(row, i).ok().flatten().map(|t| t.trim().to_string()).filter(|t| !t.is_empty());
        out.insert(
            id,
            Conversation {
                slug: text(1),
                cwd: text(2),
                parent: text(3),
                agent_spawned: sqlite::value_i64(row.get_ref(4)?) == Some(0),
                created: sqlite::value_timestamp(row.get_ref(5)?),
                updated: sqlite::value_timestamp(row.get_ref(6)?),
            },
        );
    }
    Ok(out)
}

/// Each conversation's row state, and the highest `messages` rowid.
fn conversation_states(
    conn: &Connection,
    convs: &HashMap<String, Conversation>,
) -> rusqlite::Result<(HashMap<String, ConvState>, Option<i64>)> {
    let mut states: HashMap<String, ConvState> =
        convs.iter().map(|(id, c)| (id.clone(), (c.updated.or(c.created).map(|t| t.0), 0, 0))).collect();
    let has_user_data = sqlite::table_columns(conn, "messages")?.iter().any(|c| c == "user_data");
    let bytes =
        if has_user_data { "coalesce(length(llm_data), 0) + coalesce(length(user_data), 0)" } else { "coalesce(length(llm_data), 0)" };
    let mut stmt = conn.prepare(&format!("SELECT conversation_id, count(*), sum({bytes}) FROM messages GROUP BY conversation_id"))?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let Ok(Some(id)) = sqlite::column_text(row, 0) else { continue };
        if let Some(state) = states.get_mut(&id) {
            state.1 = sqlite::value_i64(row.get_ref(1)?).unwrap_or(0);
            state.2 = sqlite::value_i64(row.get_ref(2)?).unwrap_or(0);
        }
    }
    let max_rowid = sqlite::max_rowid(conn, "messages").ok().flatten();
    Ok((states, max_rowid))
}

fn conversations_with_rows_after(conn: &Connection, mark: i64) -> rusqlite::Result<HashSet<String>> {
    sqlite::keys_after(conn, "messages", "conversation_id", mark, sqlite::key_text)
}

fn push_message(
    kind: &str,
    llm: &Value,
    user_data: Option<&Value>,
    time: Option<Timestamp>,
    opts: &ParseOptions,
    cwd: Option<&str>,
    builder: &mut SessionBuilder,
) {
    let content = llm.get("Content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let mut had_text = false;
    for block in content {
        match block.get("Type").and_then(Value::as_i64) {
            Some(2) => {
                let text = block.get("Text").and_then(Value::as_str).unwrap_or("");
                let role = if kind == "agent" { Role::Assistant } else { Role::User };
                if kind != "tool" && builder.push(Turn::new(role, text).at(time)).is_some() {
                    had_text = true;
                }
            }
            Some(3 | 4) if opts.include_reasoning => {
                if let Some(t) = block.get("Thinking").and_then(Value::as_str) {
                    builder.push(Turn::new(Role::Reasoning, t).at(time));
                }
            }
            Some(5 | 7) => {
                let name = block.get("ToolName").and_then(Value::as_str).unwrap_or("tool");
                let input = json_arg(block.get("ToolInput"));
                let turn = guessed_call_turn(name, &input, cwd, time);
                builder.push_call(block.get("ID").and_then(Value::as_str), turn);
            }
            Some(6 | 8) => {
                let call_id = block.get("ToolUseID").and_then(Value::as_str).unwrap_or("");
                let output = nested_text(block.get("ToolResult"));
                let is_error = block.get("ToolError").and_then(Value::as_bool).unwrap_or(false);
                if call_id.is_empty() || !builder.complete_call(call_id, &output, is_error, None, time) {
                    builder.push_orphan_result(call_id, &output, is_error, None, time);
                } else if is_error {
                    // A failed edit or write changed nothing.
                    if let Some(call) = builder.call_mut(call_id) {
                        call.edit = None;
                    }
                }
            }
            // 9 (web search result) and any later tag: nothing the page maps.
            _ => {}
        }
    }
    if kind == "user" && !had_text {
        let text = match user_data {
            Some(Value::String(s)) => s.as_str(),
            Some(v) => first_str(v, &["Text", "text", "content", "message"]).unwrap_or(""),
            None => "",
        };
        builder.push(Turn::new(Role::User, text).at(time));
    }
}

/// The `Text` of nested result content (`ToolResult[]`), joined with newlines.
fn nested_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|b| b.get("Text").and_then(Value::as_str).or_else(|| b.as_str()))
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

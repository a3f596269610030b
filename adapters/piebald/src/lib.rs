//! Piebald (`piebald`): a desktop agentic-coding app keeping every chat in one SQLite
//! database, `app.db` in its data directory (Linux `~/.local/share/piebald/`, macOS
//! `~/Library/Application Support/piebald/`, Windows `%APPDATA%\piebald\`). The schema is
//! normalised: `chats` → `messages` → `message_parts`, a text part's words split into
//! ordered content nodes, a tool part one `message_part_tool_call` row holding the call
//! and its result. No family reader shares it, so the adapter reads it itself, through
//! [`deja_core::sqlite::Snapshot`].
//!
//! **Variables.** `DEJA_PIEBALD_DB` names the database file (a directory means the
//! `app.db` in it); else `DEJA_PIEBALD_ROOT` names the directory holding `app.db` (the
//! sessions root of a one-database store); else the OS's data directory.
//!
//! | record / field | Turn | rule |
//! | --- | --- | --- |
//! | `chats` row | session | id (integer, as text), `title`, project `current_directory` ⟶ `worktree_path` ⟶ `projects.directory`; `is_deleted = 1` or `message_count = 0` skipped |
//! | `messages.enabled = 0` | skipped | an abandoned branch; the active path is read, each turn keeping `id`/`parent_message_id` as its `node` |
//! | `messages.role` `system` / `developer` | skipped | harness-authored |
//! | text part, `role = "assistant"`, `is_thinking = 0` | `Assistant` | `message_node_text.content` joined in `node_index` order |
//! | text part, `is_thinking = 1` | `Reasoning` | only with `include_reasoning` |
//! | text part, any other role | `User` | as the page says |
//! | tool part | `ToolCall` | `tool_name`; `tool_input` decoded generically (`command` → command; a path key → files, the action from the name and an old-text/content key; old-text → edit span); text = `tool_result`, else `tool_error` (`is_error`) |
//! | tool part with `tool_state` ≠ `completed` and no text | `ToolCall` | the call alone |
//! | `sub_agent_chat_id` | the child chat's `parent` | kind `subagent` |
//!
//! **Row cursor.** Message ids are monotonic integers and messages carry `updated_at`:
//! a parse returns the highest message id and the newest chat/message time with the
//! row state (newest time, message count) of the chats touched within
//! [`CURSOR_SLACK_MS`](deja_core::sqlite::CURSOR_SLACK_MS) of it. Given `SourceRef::cursor`, only chats with a message past
//! the id mark, or touched since (minus the slack, and not exactly as recorded), are
//! re-read, each whole.

use std::collections::{HashMap, HashSet};

use deja_core::family::json_docs::{guessed_call_turn, json_arg};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::sqlite::{self, RowCursor};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, FormatError, HarnessFormat, HarnessInfo, InjectedText, NodeRef, ParseOptions, ParseStats, Role,
    SessionBuilder, SessionSink, SourceRef, Timestamp, Turn,
};
use rusqlite::Connection;
use serde_json::Value;

const ID: &str = "piebald";
const DB_NAME: &str = "app.db";

/// The Piebald adapter.
pub struct PiebaldFormat;

deja_core::inventory::submit!(deja_core::Registration(&PiebaldFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Piebald",
    container: "SQLite (normalised): chats, messages, message parts, text content nodes, tool-call rows",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[
            // Piebald's own data directory on Linux, not `$XDG_DATA_HOME`.
            Root::linux("~/.local/share/piebald"),
            Root::macos("~/Library/Application Support/piebald"),
            Root::windows("${APPDATA:-~/AppData/Roaming}/piebald"),
        ],
        layout: Layout::Database(DB_NAME),
    }]),
    needs: &[],
    format_summary: "Piebald keeps every chat in one SQLite database, `app.db`: a `chats` row (title, current directory \
        or worktree, project, `is_deleted`, `message_count`), `messages` rows (role, `enabled` on the active branch, \
        `parent_message_id` forming a tree), `message_parts` in `part_index` order. A text part's text is split into \
        `message_content_nodes` joined with `message_node_text` in `node_index` order, and `is_thinking` marks \
        reasoning; a tool part is one `message_part_tool_call` row with the call (`tool_name`, `tool_input` JSON) and \
        its result (`tool_result`, `tool_error`, `tool_state`), so a call and its result are one turn; \
        `sub_agent_chat_id` names a sub-agent's chat. Tool inputs are decoded generically. Read through a private \
        copy with its WAL, incrementally by message id and update time.",
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

impl HarnessFormat for PiebaldFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        parse_db(src, opts, out)
    }
}

/// `(newest ms, message rows, 0)` of one chat: equal states mean an unchanged chat.
type ChatState = sqlite::SessionState;

struct Chat {
    title: Option<String>,
    project: Option<String>,
    created: Option<Timestamp>,
    updated: Option<Timestamp>,
}

fn parse_db(src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let db = src.path.as_path();
    let (store, mut stats) = sqlite::Db::open(src)?;
    let conn = store.conn();
    let sql_err = |e: rusqlite::Error| store.err(e);
    for table in ["chats", "messages", "message_parts"] {
        if sqlite::table_columns(conn, table).map_err(sql_err)?.is_empty() {
            return Err(FormatError::corrupt(db, format!("no `{table}` table: not a Piebald database")));
        }
    }

    let chats = read_chats(conn, &mut stats).map_err(sql_err)?;
    let (states, max_message_id) = chat_states(conn, &chats).map_err(sql_err)?;
    let newest = states.values().filter_map(|s| s.0).max();
    let previous = RowCursor::previous(&mut stats, src, newest, max_message_id);
    let wanted: Option<HashSet<String>> = match &previous {
        None => None,
        Some(c) => {
            let mut w = c.touched_since(&states);
            w.extend(chats_with_messages_after(conn, c.mark).map_err(sql_err)?);
            Some(w)
        }
    };
    stats.cursor = RowCursor::after(&states, max_message_id);

    let parents = sub_agent_parents(conn).map_err(sql_err)?;
    let mut ids: Vec<&String> = chats.keys().filter(|id| wanted.as_ref().is_none_or(|w| w.contains(*id))).collect();
    ids.sort_by_key(|id| (id.parse::<i64>().unwrap_or(i64::MAX), id.as_str()));
    let mut stmt = conn.prepare(TURNS_SQL).map_err(sql_err)?;
    for id in ids {
        let Some(chat) = chats.get(id) else { continue };
        let mut builder = SessionBuilder::new(ID, id.clone(), src.clone());
        {
            let s = builder.session_mut();
            s.title = chat.title.clone();
            s.project = chat.project.clone();
            if let Some(parent) = parents.get(id) {
                s.parent = Some(parent.clone());
                s.kind = Some("subagent".into());
            }
        }
        builder.touch(chat.created);
        builder.touch(chat.updated);
        let mut rows = stmt.query([id]).map_err(sql_err)?;
        while let Some(row) = rows.next().map_err(sql_err)? {
            stats.records += 1;
            push_part(row, opts, chat.project.as_deref(), &mut builder, &mut stats).map_err(sql_err)?;
        }
        if let Some(session) = builder.finish() {
            out.session(session);
        }
    }
    Ok(stats)
}

/// The chats worth reading (not deleted, not empty), with their project.
fn read_chats(conn: &Connection, stats: &mut ParseStats) -> rusqlite::Result<HashMap<String, Chat>> {
    let cols = sqlite::table_columns(conn, "chats")?;
    let col = |c: &str| if cols.iter().any(|x| x == c) { format!("c.{c}") } else { "NULL".to_string() };
    let has_projects = !sqlite::table_columns(conn, "projects")?.is_empty();
    let (project_dir, join) = if has_projects && cols.iter().any(|x| x == "project_id") {
        ("p.directory", "LEFT JOIN projects p ON p.id = c.project_id")
    } else {
        ("NULL", "")
    };
    let sql = format!(
        "SELECT c.id, {}, {}, {}, {}, {}, {project_dir}, {}, {} FROM chats c {join}",
        col("title"),
        col("created_at"),
        col("updated_at"),
        col("current_directory"),
        col("worktree_path"),
        col("is_deleted"),
        col("message_count"),
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    let mut chats = HashMap::new();
    while let Some(row) = rows.next()? {
        let Ok(Some(id)) = sqlite::column_text(row, 0) else {
            stats.skip(|| "a chat row without a readable id".into());
            continue;
        };
        let deleted = sqlite::value_i64(row.get_ref(7)?).is_some_and(|d| d != 0);
        let empty = sqlite::value_i64(row.get_ref(8)?) == Some(0);
        if deleted || empty {
            continue;
        }
        let text = |i: usize| sqlite::column_text(row, i).ok().flatten().map(|t| t.trim().to_string()).filter(|t| !t.is_empty());
        let project = text(4).or_else(|| text(5)).or_else(|| text(6));
        chats.insert(
            id,
            Chat {
                title: text(1),
                project,
                created: sqlite::value_timestamp(row.get_ref(2)?),
                updated: sqlite::value_timestamp(row.get_ref(3)?),
            },
        );
    }
    Ok(chats)
}

/// Each chat's row state, and the highest message id.
fn chat_states(conn: &Connection, chats: &HashMap<String, Chat>) -> rusqlite::Result<(HashMap<String, ChatState>, Option<i64>)> {
    let mut states: HashMap<String, ChatState> =
        chats.iter().map(|(id, c)| (id.clone(), (c.updated.or(c.created).map(|t| t.0), 0, 0))).collect();
    let cols = sqlite::table_columns(conn, "messages")?;
    let col = |c: &str| if cols.iter().any(|x| x == c) { c.to_string() } else { "NULL".to_string() };
    let mut stmt = conn.prepare(&format!("SELECT parent_chat_id, id, {}, {} FROM messages", col("created_at"), col("updated_at")))?;
    let mut rows = stmt.query([])?;
    let mut max_id: Option<i64> = None;
    while let Some(row) = rows.next()? {
        if let Some(id) = sqlite::value_i64(row.get_ref(1)?) {
            max_id = Some(max_id.map_or(id, |m| m.max(id)));
        }
        let Ok(Some(chat)) = sqlite::column_text(row, 0) else { continue };
        let Some(state) = states.get_mut(&chat) else { continue };
        state.1 += 1;
        for i in [2, 3] {
            if let Some(t) = sqlite::value_timestamp(row.get_ref(i)?) {
                state.0 = Some(state.0.map_or(t.0, |s| s.max(t.0)));
            }
        }
    }
    Ok((states, max_id))
}

fn chats_with_messages_after(conn: &Connection, mark: i64) -> rusqlite::Result<HashSet<String>> {
    let mut stmt = conn.prepare("SELECT DISTINCT parent_chat_id FROM messages WHERE id > ?1")?;
    let mut rows = stmt.query([mark])?;
    let mut out = HashSet::new();
    while let Some(row) = rows.next()? {
        if let Ok(Some(id)) = sqlite::column_text(row, 0) {
            out.insert(id);
        }
    }
    Ok(out)
}

/// child chat id → the chat whose tool call spawned it.
fn sub_agent_parents(conn: &Connection) -> rusqlite::Result<HashMap<String, String>> {
    let mut map = HashMap::new();
    if !sqlite::table_columns(conn, "message_part_tool_call")?.iter().any(|c| c == "sub_agent_chat_id") {
        return Ok(map);
    }
    let mut stmt = conn.prepare(
        "SELECT c.sub_agent_chat_id, m.parent_chat_id FROM message_part_tool_call c \
         JOIN message_parts p ON p.id = c.message_part_id JOIN messages m ON m.id = p.parent_chat_message_id \
         WHERE c.sub_agent_chat_id IS NOT NULL",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        if let (Ok(Some(child)), Ok(Some(parent))) = (sqlite::column_text(row, 0), sqlite::column_text(row, 1)) {
            if child != parent {
                map.insert(child, parent);
            }
        }
    }
    Ok(map)
}

/// One chat's parts on the active branch, in message then part order; a text part's
/// content nodes joined in `node_index` order.
const TURNS_SQL: &str = "
    SELECT m.id, m.parent_message_id, m.role, m.created_at, p.part_type, t.is_thinking,
      (SELECT group_concat(nt.content, '' ORDER BY n.node_index) FROM message_content_nodes n
         JOIN message_node_text nt ON nt.node_id = n.id WHERE n.parent_text_part_id = p.id),
      c.provider_tool_use_id, c.tool_name, c.tool_input, c.tool_result, c.tool_error, c.tool_state
    FROM messages m JOIN message_parts p ON p.parent_chat_message_id = m.id
    LEFT JOIN message_part_text t ON t.message_part_id = p.id
    LEFT JOIN message_part_tool_call c ON c.message_part_id = p.id
    WHERE m.parent_chat_id = ?1 AND (m.enabled IS NULL OR m.enabled != 0)
    ORDER BY m.id, p.part_index, p.id";

fn push_part(
    row: &rusqlite::Row<'_>,
    opts: &ParseOptions,
    cwd: Option<&str>,
    builder: &mut SessionBuilder,
    stats: &mut ParseStats,
) -> rusqlite::Result<()> {
    let text = |i: usize| sqlite::column_text(row, i).ok().flatten();
    let node = text(0).map(|id| NodeRef { id, parent: text(1) });
    let role = text(2).unwrap_or_default();
    let time = sqlite::value_timestamp(row.get_ref(3)?);
    match text(4).as_deref() {
        Some("text") => {
            let body = text(6).unwrap_or_default();
            let thinking = sqlite::value_i64(row.get_ref(5)?).is_some_and(|t| t != 0);
            let role = match role.as_str() {
                "system" | "developer" => return Ok(()),
                _ if thinking => {
                    if !opts.include_reasoning {
                        return Ok(());
                    }
                    Role::Reasoning
                }
                "assistant" => Role::Assistant,
                _ => Role::User,
            };
            let mut turn = Turn::new(role, body).at(time);
            turn.node = node;
            builder.push(turn);
        }
        Some("tool_call") => {
            let Some(name) = text(8) else {
                stats.skip(|| "a tool part without its tool-call row".into());
                return Ok(());
            };
            let input = json_arg(Some(&Value::String(text(9).unwrap_or_default())));
            let mut turn = guessed_call_turn(&name, &input, cwd, time);
            turn.node = node;
            let result = text(10).filter(|t| !t.trim().is_empty());
            let error = text(11).filter(|t| !t.trim().is_empty());
            let state = text(12).unwrap_or_default();
            let failed = error.is_some() && result.is_none() || matches!(state.as_str(), "error" | "failed");
            turn.text = result.or(error).unwrap_or_default();
            if failed {
                if let Some(tool) = &mut turn.tool {
                    tool.is_error = true;
                }
                // A failed edit or write changed nothing.
                turn.edit = None;
            }
            let call_id = text(7);
            builder.push_call(call_id.as_deref(), turn);
        }
        // Other part types (images, attachments) carry no text the page describes.
        _ => {}
    }
    Ok(())
}

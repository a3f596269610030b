//! Forge (`forge`): every conversation in one SQLite database, `~/.forge/.forge.db` (the
//! same place on every OS the material covers), one row of `conversations` per session
//! whose `context` column holds the whole conversation as JSON, rewritten in place as it
//! grows. No family reader shares this schema, so the adapter reads it itself, through
//! [`deja_core::sqlite::Snapshot`] (a private copy of the database and its `-wal`).
//!
//! `DEJA_FORGE_ROOT` names the directory holding `.forge.db` (the sessions root of a
//! one-database store). Forge has no relocation variable of its own in the material.
//!
//! | record / field | Turn | rule |
//! | --- | --- | --- |
//! | row with `context IS NULL` | skipped | an empty conversation |
//! | `message.text.role = "system"` | skipped | injected context; its `<current_working_directory>` tag is the project |
//! | `message.text.role = "user"` | `User` | `content`, else `raw_content.Text` |
//! | `message.text.role = "assistant"` | `Assistant` | `content`, else `raw_content.Text` |
//! | `message.text.reasoning_details[].text` | `Reasoning` | only with `include_reasoning` |
//! | `message.text.tool_calls[]` | `ToolCall` | decoded generically (the page names no tool's keys): `arguments.command` → command; `path`/`file_path` → files; an old-text key → edit span; `content` → write |
//! | `message.tool` (`call_id`, `output.values[].text` / `output.text`) | folded into its call | text = the values' text; `output.is_error` marks a failure; an empty `call_id` is skipped |
//! | `task` call's `arguments.session_id` | the child's `parent` | the child row is its own session, kind `subagent` |
//! | `usage`, row `metrics` | skipped | accounting |
//! | row whose `context` is not JSON | skipped | counted in the parse stats |
//!
//! **Row cursor.** Core's `RowCursor`: `updated_at` changes whenever the context is
//! rewritten, so a parse returns the newest `updated_at` (ms), the highest rowid and the
//! `(updated, length)` of the rows within `CURSOR_SLACK_MS` of the newest; given
//! `SourceRef::cursor`, only rows updated since (minus the slack, and not exactly as
//! recorded) or added since are re-read, each emitted whole. A database without
//! `updated_at` (an older schema) has rows without a time, which are always re-read.

use std::collections::HashMap;

use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::model::{cap_text, MAX_EDIT_BYTES};
use deja_core::patch::join_cwd;
use deja_core::read::{at, str_at};
use deja_core::sqlite::{self, RowCursor};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Edit, FileAction, FileTouch, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats,
    Role, SessionBuilder, SessionSink, SourceRef, Timestamp, ToolUse, Turn,
};
use serde_json::Value;

const ID: &str = "forge";
const DB_NAME: &str = ".forge.db";
const CWD_OPEN: &str = "<current_working_directory>";
const CWD_CLOSE: &str = "</current_working_directory>";

/// The Forge adapter.
pub struct ForgeFormat;

deja_core::inventory::submit!(deja_core::Registration(&ForgeFormat));

/// Forge writes the working directory into the context as a tag; where it lands in a
/// user message it is environment, not speech.
static INJECTED: InjectedText = InjectedText { blocks: &["current_working_directory"], ..InjectedText::NONE };

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Forge",
    container: "SQLite (WAL), one database for every conversation: a `conversations` row per session with the whole context as JSON",
    store: StoreSpec::new(&[Store { name: "", roots: &[Root::any("~/.forge")], layout: Layout::Database(DB_NAME) }]),
    needs: &[],
    format_summary: "Forge keeps every conversation in one SQLite database, `~/.forge/.forge.db`: a `conversations` row \
        (`conversation_id`, `title`, `created_at`, `updated_at`) whose `context` column is the whole conversation as JSON, \
        rewritten in place as it grows. `context.messages[]` wraps either a text message (`role` system, user or \
        assistant; `content` or `raw_content.Text`; `tool_calls[]` with `name`, `call_id`, `arguments`; \
        `reasoning_details`) or a tool result (`call_id`, `output.values[].text`), which is folded into its call. The \
        working directory is only in an injected `<current_working_directory>` tag; a `task` call's \
        `arguments.session_id` names a sub-agent conversation in the same table. Tool arguments are decoded \
        generically (`command`, `path`/`file_path`, old-text keys). Read through a private copy with its WAL, \
        incrementally by `updated_at`.",
    injected: &INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::Unknown, handoff: Handoff::Paste("no start-with-prompt command is known") },
};

impl HarnessFormat for ForgeFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        parse_db(src, opts, out)
    }
}

fn parse_db(src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let (store, mut stats) = sqlite::Db::open(src)?;
    let conn = store.conn();
    let sql_err = |e: rusqlite::Error| store.err(e);
    let cols = store.columns("conversations", &["conversation_id", "context"], "a Forge database")?;
    let col = |c: &str| if cols.has(c) { c.to_string() } else { format!("NULL AS {c}") };

    // Row states for the cursor: `(updated ms, context length, 0)`; equal states mean an
    // unchanged row.
    let mut states: HashMap<String, sqlite::SessionState> = HashMap::new();
    {
        let mut stmt = conn
            .prepare(&format!(
                "SELECT conversation_id, {}, length(context) FROM conversations WHERE context IS NOT NULL",
                col("updated_at")
            ))
            .map_err(sql_err)?;
        let mut rows = stmt.query([]).map_err(sql_err)?;
        while let Some(row) = rows.next().map_err(sql_err)? {
            let Ok(Some(id)) = sqlite::column_text(row, 0) else { continue };
            let updated = sqlite::value_timestamp(row.get_ref(1).map_err(sql_err)?).map(|t| t.0);
            let len = sqlite::value_i64(row.get_ref(2).map_err(sql_err)?).unwrap_or(0);
            states.insert(id, (updated, len, 0));
        }
    }
    // A rewritten context keeps its row (and rowid) and moves `updated_at`; a new row gets
    // a higher rowid whatever time it carries.
    let newest = states.values().filter_map(|s| s.0).max();
    let max_rowid = sqlite::max_rowid(conn, "conversations").map_err(sql_err)?;
    let previous = RowCursor::previous(&mut stats, src, newest, max_rowid);
    stats.cursor = RowCursor::after(&states, max_rowid);
    let wanted = RowCursor::wanted(previous.as_ref(), conn, &states, "conversations", "conversation_id").map_err(sql_err)?;

    let parents = sub_agent_parents(conn).map_err(sql_err)?;
    let mut stmt = conn
        .prepare(&format!(
            "SELECT conversation_id, {}, context, {}, {} FROM conversations WHERE context IS NOT NULL ORDER BY rowid",
            col("title"),
            col("created_at"),
            col("updated_at")
        ))
        .map_err(sql_err)?;
    let mut rows = stmt.query([]).map_err(sql_err)?;
    while let Some(row) = rows.next().map_err(sql_err)? {
        let Ok(Some(id)) = sqlite::column_text(row, 0) else {
            // A row read is a record, whatever its id: skipped counts never exceed records.
            stats.records += 1;
            stats.skip(|| "a conversation row without a readable id".into());
            continue;
        };
        if wanted.as_ref().is_some_and(|w| !w.contains(&id)) {
            continue;
        }
        stats.records += 1;
        let context = match sqlite::column_json(row, 2) {
            Ok(Some(v)) => v,
            Ok(None) => continue,
            Err(e) => {
                stats.skip(|| format!("conversation {id}: context: {e}"));
                continue;
            }
        };
        let mut builder = SessionBuilder::new(ID, id.clone(), src.clone());
        let title = sqlite::column_text(row, 1).ok().flatten().map(|t| t.trim().to_string()).filter(|t| !t.is_empty());
        builder.session_mut().title = title;
        for idx in [3, 4] {
            builder.touch(row.get_ref(idx).ok().and_then(sqlite::value_timestamp));
        }
        if let Some(parent) = parents.get(&id) {
            let s = builder.session_mut();
            s.parent = Some(parent.clone());
            s.kind = Some("subagent".into());
        }
        read_context(&context, opts, &mut builder);
        if let Some(session) = builder.finish() {
            out.session(session);
        }
    }
    Ok(stats)
}

/// child conversation id → the conversation whose `task` call named it. Only rows that
/// mention `session_id` at all are decoded.
fn sub_agent_parents(conn: &rusqlite::Connection) -> rusqlite::Result<HashMap<String, String>> {
    let mut map = HashMap::new();
    let mut stmt = conn.prepare("SELECT conversation_id, context FROM conversations WHERE context LIKE '%session_id%'")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let (Ok(Some(id)), Ok(Some(context))) = (sqlite::column_text(row, 0), sqlite::column_json(row, 1)) else { continue };
        for call in messages(&context).filter_map(|m| at(m, &["message", "text", "tool_calls"])).filter_map(Value::as_array).flatten() {
            if call.get("name").and_then(Value::as_str) == Some("task") {
                if let Some(child) = str_at(call, &["arguments", "session_id"]).filter(|c| !c.is_empty() && *c != id) {
                    map.insert(child.to_string(), id.clone());
                }
            }
        }
    }
    Ok(map)
}

fn messages(context: &Value) -> impl Iterator<Item = &Value> {
    context.get("messages").and_then(Value::as_array).into_iter().flatten()
}

/// `content`, else `raw_content.Text` (else a plain-string `raw_content`).
fn message_text(m: &Value) -> Option<&str> {
    m.get("content")
        .and_then(Value::as_str)
        .filter(|t| !t.trim().is_empty())
        .or_else(|| str_at(m, &["raw_content", "Text"]))
        .or_else(|| m.get("raw_content").and_then(Value::as_str))
}

fn read_context(context: &Value, opts: &ParseOptions, builder: &mut SessionBuilder) {
    let mut cwd: Option<String> = None;
    for item in messages(context) {
        if let Some(text) = at(item, &["message", "text"]) {
            let content = message_text(text).unwrap_or("");
            if cwd.is_none() {
                cwd = working_directory(content);
            }
            let time = text.get("timestamp").and_then(Timestamp::from_json);
            match text.get("role").and_then(Value::as_str) {
                Some("user") => {
                    builder.push(Turn::new(Role::User, content).at(time));
                }
                Some("assistant") => {
                    if opts.include_reasoning {
                        for r in text.get("reasoning_details").and_then(Value::as_array).into_iter().flatten() {
                            if let Some(t) = r.get("text").and_then(Value::as_str) {
                                builder.push(Turn::new(Role::Reasoning, t).at(time));
                            }
                        }
                    }
                    builder.push(Turn::new(Role::Assistant, content).at(time));
                    for call in text.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                        push_call(builder, call, cwd.as_deref(), time);
                    }
                }
                // system and anything else is harness-authored.
                _ => {}
            }
        } else if let Some(tool) = at(item, &["message", "tool"]) {
            let Some(call_id) = tool.get("call_id").and_then(Value::as_str).filter(|c| !c.is_empty()) else { continue };
            let output = tool_output(tool);
            let is_error = at(tool, &["output", "is_error"]).and_then(Value::as_bool).unwrap_or(false);
            if !builder.complete_call(call_id, &output, is_error, None, None) {
                builder.push_orphan_result(call_id, &output, is_error, None, None);
            }
        }
    }
    if let Some(dir) = cwd {
        builder.session_mut().project = Some(dir);
    }
}

/// The text between the first `<current_working_directory>` tags.
fn working_directory(text: &str) -> Option<String> {
    let start = text.find(CWD_OPEN)? + CWD_OPEN.len();
    let len = text[start..].find(CWD_CLOSE)?;
    Some(text[start..start + len].trim().to_string()).filter(|d| !d.is_empty())
}

/// `output.values[].text` joined, else `output.text` (a string output as is).
fn tool_output(tool: &Value) -> String {
    let Some(output) = tool.get("output") else { return String::new() };
    if let Some(values) = output.get("values").and_then(Value::as_array) {
        let texts: Vec<&str> =
            values.iter().filter_map(|v| v.get("text").or_else(|| v.get("Text")).and_then(Value::as_str).or_else(|| v.as_str())).collect();
        return texts.join("\n");
    }
    output.get("text").and_then(Value::as_str).or_else(|| output.as_str()).unwrap_or("").to_string()
}

const PATH_KEYS: &[&str] = &["path", "file_path", "filePath"];
const OLD_KEYS: &[&str] = &["old_string", "old_text", "oldString", "search"];
const NEW_KEYS: &[&str] = &["new_string", "new_text", "newString", "replace", "content"];

fn first_str<'a>(args: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| args.get(*k).and_then(Value::as_str))
}

/// A tool call decoded from its arguments alone (the material spells no tool's keys).
fn push_call(builder: &mut SessionBuilder, call: &Value, cwd: Option<&str>, time: Option<Timestamp>) {
    let name = call.get("name").and_then(Value::as_str).unwrap_or("tool");
    // Some providers hand arguments over as a JSON string.
    let parsed;
    let args = match call.get("arguments") {
        Some(Value::String(s)) => {
            parsed = serde_json::from_str::<Value>(s).unwrap_or(Value::Null);
            &parsed
        }
        Some(v) => v,
        None => &Value::Null,
    };
    let mut turn = Turn::new(Role::ToolCall, "").at(time);
    let mut tool = ToolUse { name: name.to_string(), ..ToolUse::default() };
    if let Some(cmd) = args.get("command").and_then(Value::as_str).filter(|c| !c.trim().is_empty()) {
        tool.command = Some(cmd.to_string());
    } else if let Some(path) = first_str(args, PATH_KEYS).filter(|p| !p.is_empty()) {
        let path = join_cwd(path, cwd);
        let lower = name.to_ascii_lowercase();
        let old = first_str(args, OLD_KEYS);
        let action = if old.is_some() || lower.contains("patch") || lower.contains("edit") {
            FileAction::Edit
        } else if lower.contains("write") || lower.contains("create") || args.get("content").is_some() {
            FileAction::Write
        } else if lower.contains("remove") || lower.contains("delete") {
            FileAction::Delete
        } else {
            FileAction::Read
        };
        if let (FileAction::Edit, Some(old)) = (action, old) {
            let mut old = old.to_string();
            cap_text(&mut old, MAX_EDIT_BYTES);
            turn.edit = Some(Edit { path: path.clone(), old, new: first_str(args, NEW_KEYS).map(str::to_string) });
        }
        turn.files.push(FileTouch { path, action });
    }
    turn.tool = Some(tool);
    builder.push_call(call.get("call_id").and_then(Value::as_str), turn);
}

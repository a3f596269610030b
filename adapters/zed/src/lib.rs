//! Zed (`zed`): the agent panel's threads, every one in a single SQLite database in Zed's
//! *data* directory, `<data>/threads/threads.db` (`~/Library/Application Support/Zed` on
//! macOS, `${FLATPAK_XDG_DATA_HOME:-${XDG_DATA_HOME:-~/.local/share}}/zed` on Linux,
//! `%LOCALAPPDATA%\Zed` on Windows). One `threads` row is one session; its `data` BLOB
//! is the whole thread document, zstd-compressed (`data_type = 'zstd'`) or, in rows
//! written before compression landed, raw JSON (`'json'` or empty).
//!
//! No family reader writes this store, so the adapter reads it itself, through
//! [`deja_core::sqlite::Snapshot`], decoding each row's BLOB on its own with
//! [`sqlite::decode_blob`] (a corrupt frame costs one thread, not the store). Columns
//! added by `ALTER TABLE` (`parent_id`, `folder_paths`, `created_at`) are probed first.
//!
//! | message / block | Turn | rule |
//! | --- | --- | --- |
//! | `{"User": {"content"}}` | `User` | `Text` strings and `Mention.content` joined by newlines |
//! | `{"Agent": {"content"}}` → `Text` | `Assistant` | `Text` strings joined |
//! | `Agent` → `Thinking` (`text`) | `Reasoning` | only with `include_reasoning` |
//! | `Agent` → `ToolUse` (`id`, `name`, `input`) | `ToolCall` | `terminal` → `input.command`; file tools → `files` (below); Zed stores no results: no output, no exit |
//! | `"Resume"`, images, redacted thinking, `tool_results` | skipped | |
//! | legacy (0.2.0) `role` `user` / `assistant`, `segments[type: text]` | `User` / `Assistant` | `thinking` segments → `Reasoning` on request |
//! | legacy `role: system` | skipped | harness-authored |
//! | a row whose body does not decode, an unknown `data_type` | skipped | counted |
//!
//! File tools: `read_file`, `open`, `diagnostics` → read; `edit_file`,
//! `restore_file_from_disk` → edit; `create_directory`, `save_file` (`paths`) → write;
//! `delete_path` → delete; `move_path` → source deleted, destination written;
//! `copy_path` → source read, destination written. No edit spans (`edit_file` carries
//! no old text).
//!
//! **Session.** id = `threads.id`; title = document `title`, else document `summary`,
//! else the `summary` column; project = the first line of `folder_paths`, else the first
//! `initial_project_snapshot.worktree_snapshots[].worktree_path`; `parent_id` → parent
//! (kind `subagent`). No message has a time: every turn gets the thread's start
//! (`created_at`, else `updated_at`); `updated_at` is the session's update.
//!
//! **Cursor.** Core's `RowCursor`, from the parsed `updated_at` column (`+00:00`, `Z`
//! and `YYYY-MM-DD HH:MM:SS` forms compared as times, not text), the data's length and
//! the highest rowid. Given it, only threads updated since (and not as recorded), saved
//! since (a replaced row has a new rowid), or whose time does not parse, are re-read.
//!
//! **Variables.** `DEJA_ZED_DB` names the database (a directory: its `threads.db`),
//! `DEJA_ZED_ROOT` the directory holding `threads.db`; else `FLATPAK_XDG_DATA_HOME`,
//! `XDG_DATA_HOME`, `LOCALAPPDATA` per OS, as the spec says. `DEJA_ZED_CONFIG` moves
//! only the settings `deja install` would edit.

mod wiring;

use std::collections::{HashMap, HashSet};

use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::sqlite::{self, RowCursor};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, FileAction, FileTouch, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Role,
    SessionBuilder, SessionSink, SourceRef, Timestamp, ToolUse, Turn,
};
use serde_json::Value;

const ID: &str = "zed";
const DB_NAME: &str = "threads.db";

/// The Zed adapter.
pub struct ZedFormat;

deja_core::inventory::submit!(deja_core::Registration(&ZedFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Zed",
    container: "SQLite (WAL), one `threads.db`: one row per thread, the thread document a zstd-compressed (or raw JSON) BLOB",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[
            Root::macos("~/Library/Application Support/Zed/threads"),
            Root::linux("${FLATPAK_XDG_DATA_HOME:-${XDG_DATA_HOME:-~/.local/share}}/zed/threads"),
            Root::windows("${LOCALAPPDATA:-~/AppData/Local}/Zed/threads"),
        ],
        layout: Layout::Database(DB_NAME),
    }])
    // The settings file `deja install` edits: no store location.
    .deja_vars(&["DEJA_ZED_CONFIG"]),
    needs: &[],
    format_summary: "Zed's agent panel keeps every thread in one SQLite database (`threads/threads.db` in Zed's data \
        directory). A `threads` row holds the thread's id, summary, times, folder paths and the whole document as a BLOB, \
        zstd-compressed (`data_type = 'zstd'`) or raw JSON in older rows. The current document (0.3.0) lists messages as \
        `{\"User\": …}` / `{\"Agent\": …}` with `Text`, `Mention`, `Thinking` and `ToolUse` blocks; the legacy one (0.2.0) \
        has `role` and text `segments`. Tool calls are stored without their results (no output, no exit status); \
        `terminal` calls give commands and file tools give files. Messages carry no time: each gets the thread's start. \
        Rows are decoded one by one, through a private copy of the database with its WAL, incrementally by `updated_at`.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "`\"context_servers\": {\"deja\": {\"command\": \"<exe>\", \"args\": [\"mcp\"]}}` in \
             `${XDG_CONFIG_HOME:-~/.config}/zed/settings.json` (`%APPDATA%\\Zed\\settings.json` on Windows), edited textually (JSONC)",
        ),
        auto_recall: Capability::Unsupported("the agent has no lifecycle hook: nothing runs before a prompt is sent"),
        skill: Capability::Planned("`~/.agents/skills/deja-history/SKILL.md` (Zed 1.4.2+ loads Agent Skills globally)"),
        command: Capability::Planned("via the skill: `/` in the agent panel lists skills by name"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Unsupported("no `zed` CLI flag reopens a thread by id"),
        handoff: Handoff::Paste("Zed has no CLI prompt entry"),
    },
};

impl HarnessFormat for ZedFormat {
    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::ZedWiring)
    }

    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        parse_db(src, opts, out)
    }
}

struct Row {
    id: String,
    summary: Option<String>,
    updated: Option<Timestamp>,
    created: Option<Timestamp>,
    data_type: String,
    data: Vec<u8>,
    parent: Option<String>,
    folder: Option<String>,
}

fn parse_db(src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let db = src.path.as_path();
    let (store, mut stats) = sqlite::Db::open(src)?;
    let conn = store.conn();
    let sql_err = |e: rusqlite::Error| store.err(e);
    let cols = store.columns("threads", &["id", "data"], "a Zed threads store")?;
    // Older stores lack the columns Zed adds by ALTER TABLE at startup.
    let col = |n: &str| cols.col(n);

    // Every row's state first (no BLOBs read), to decide what changed: the parsed
    // `updated_at` (its text forms compared as times) and the data's length. Zed replaces
    // a thread's row when it saves it, so a saved thread also has a new rowid.
    let mut states: HashMap<String, sqlite::SessionState> = HashMap::new();
    {
        let mut stmt = conn.prepare(&format!("SELECT id, {}, length(data) FROM threads", col("updated_at"))).map_err(sql_err)?;
        let mut rows = stmt.query([]).map_err(sql_err)?;
        while let Some(row) = rows.next().map_err(sql_err)? {
            let Some(id) = row.get_ref(0).ok().and_then(|v| sqlite::value_text(v).ok().flatten()) else { continue };
            let time = row.get_ref(1).ok().and_then(sqlite::value_timestamp).map(|t| t.0);
            states.insert(id, (time, row.get_ref(2).ok().and_then(sqlite::value_i64).unwrap_or(0), 0));
        }
    }
    let newest = states.values().filter_map(|s| s.0).max();
    let max_rowid = sqlite::max_rowid(conn, "threads").ok().flatten();
    let previous = RowCursor::previous(&mut stats, src, newest, max_rowid);
    stats.cursor = RowCursor::after(&states, max_rowid);
    let wanted = RowCursor::wanted(previous.as_ref(), conn, &states, "threads", "id").map_err(sql_err)?;
    if wanted.as_ref().is_some_and(HashSet::is_empty) {
        return Ok(stats);
    }

    let sql = format!(
        "SELECT id, {}, {}, {}, {}, data, {}, {} FROM threads ORDER BY id",
        col("summary"),
        col("updated_at"),
        col("created_at"),
        col("data_type"),
        col("parent_id"),
        col("folder_paths"),
    );
    let mut stmt = conn.prepare(&sql).map_err(sql_err)?;
    let mut rows = stmt.query([]).map_err(sql_err)?;
    while let Some(r) = rows.next().map_err(sql_err)? {
        let text = |i: usize| r.get_ref(i).ok().and_then(|v| sqlite::value_text(v).ok().flatten());
        // An empty id names no thread; one with control characters could not be typed back.
        let Some(id) = text(0).filter(|id| !id.trim().is_empty() && !id.contains(char::is_control)) else { continue };
        if wanted.as_ref().is_some_and(|w| !w.contains(&id)) {
            continue;
        }
        stats.records += 1;
        let data = match r.get_ref(5) {
            Ok(rusqlite::types::ValueRef::Blob(b)) | Ok(rusqlite::types::ValueRef::Text(b)) => b.to_vec(),
            _ => Vec::new(),
        };
        let row = Row {
            summary: text(1),
            updated: r.get_ref(2).ok().and_then(sqlite::value_timestamp),
            created: r.get_ref(3).ok().and_then(sqlite::value_timestamp),
            data_type: text(4).unwrap_or_default(),
            data,
            parent: text(6).filter(|p| !p.trim().is_empty()),
            folder: text(7),
            id,
        };
        match decode(&row) {
            Ok(doc) => {
                if let Some(s) = thread(src, opts, &row, &doc) {
                    out.session(s);
                }
            }
            Err(why) => stats.skip(|| format!("{}: thread {}: {why}", db.display(), row.id)),
        }
    }
    Ok(stats)
}

/// A row's document: zstd or raw JSON by `data_type`; anything else is not read.
fn decode(row: &Row) -> Result<Value, String> {
    let bytes: Vec<u8> = match row.data_type.as_str() {
        "zstd" => {
            if !row.data.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]) {
                return Err("data_type zstd but the data is not a zstd frame".to_string());
            }
            sqlite::decode_blob(&row.data).map_err(|e| e.to_string())?.into_owned()
        }
        "json" | "" => row.data.clone(),
        other => return Err(format!("unknown data_type {other:?}; not read")),
    };
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(v) if v.is_object() => Ok(v),
        Ok(_) => Err("the document is not a JSON object".to_string()),
        Err(e) => Err(format!("invalid JSON: {e}")),
    }
}

fn nonempty(v: Option<&str>) -> Option<String> {
    v.map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
}

fn thread(src: &SourceRef, opts: &ParseOptions, row: &Row, doc: &Value) -> Option<deja_core::Session> {
    let mut b = SessionBuilder::new(ID, row.id.clone(), src.clone());
    let updated = row.updated.or_else(|| doc.get("updated_at").and_then(Timestamp::from_json));
    let started = row.created.or(updated);
    {
        let s = b.session_mut();
        s.title = nonempty(doc.get("title").and_then(Value::as_str))
            .or_else(|| nonempty(doc.get("summary").and_then(Value::as_str)))
            .or_else(|| nonempty(row.summary.as_deref()));
        s.project =
            row.folder.as_deref().and_then(|f| f.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string)).or_else(|| {
                doc.pointer("/initial_project_snapshot/worktree_snapshots")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .find_map(|w| nonempty(w.get("worktree_path").and_then(Value::as_str)))
            });
        if let Some(p) = &row.parent {
            s.parent = Some(p.clone());
            s.kind = Some("subagent".to_string());
        }
    }
    b.touch(started);
    b.touch(updated);
    for message in doc.get("messages").and_then(Value::as_array).into_iter().flatten() {
        if let Some(user) = message.get("User") {
            let text = blocks(user, &["Text", "Mention"]);
            b.push(Turn::new(Role::User, text).at(started));
        } else if let Some(agent) = message.get("Agent") {
            agent_message(&mut b, agent, started, opts);
        } else if let Some(role) = message.get("role").and_then(Value::as_str) {
            legacy_message(&mut b, role, message, started, opts);
        }
        // "Resume" and anything else: control markers.
    }
    b.finish()
}

/// The text of a message's `Text` blocks (and `Mention.content` when listed), joined.
fn blocks(message: &Value, kinds: &[&str]) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for block in message.get("content").and_then(Value::as_array).into_iter().flatten() {
        if kinds.contains(&"Text") {
            if let Some(t) = block.get("Text").and_then(Value::as_str) {
                parts.push(t.trim());
            }
        }
        if kinds.contains(&"Mention") {
            if let Some(t) = block.pointer("/Mention/content").and_then(Value::as_str) {
                parts.push(t.trim());
            }
        }
    }
    parts.retain(|p| !p.is_empty());
    parts.join("\n")
}

fn agent_message(b: &mut SessionBuilder, agent: &Value, time: Option<Timestamp>, opts: &ParseOptions) {
    // Blocks in order: reasoning, then text, then the calls it made, as in the message.
    let mut text: Vec<&str> = Vec::new();
    let flush = |b: &mut SessionBuilder, text: &mut Vec<&str>| {
        if !text.is_empty() {
            b.push(Turn::new(Role::Assistant, text.join("\n")).at(time));
            text.clear();
        }
    };
    for block in agent.get("content").and_then(Value::as_array).into_iter().flatten() {
        if let Some(t) = block.get("Text").and_then(Value::as_str) {
            let t = t.trim();
            if !t.is_empty() {
                text.push(t);
            }
        } else if let Some(th) = block.get("Thinking") {
            if opts.include_reasoning {
                flush(b, &mut text);
                let t = th.get("text").and_then(Value::as_str).unwrap_or("").trim().to_string();
                b.push(Turn::new(Role::Reasoning, t).at(time));
            }
        } else if let Some(call) = block.get("ToolUse") {
            flush(b, &mut text);
            tool_use(b, call, time);
        }
    }
    flush(b, &mut text);
}

fn tool_use(b: &mut SessionBuilder, call: &Value, time: Option<Timestamp>) {
    let name = call.get("name").and_then(Value::as_str).unwrap_or("").to_string();
    let input = call.get("input").unwrap_or(&Value::Null);
    let path = |k: &str| nonempty(input.get(k).and_then(Value::as_str));
    let mut turn = Turn::new(Role::ToolCall, "").at(time);
    let mut files: Vec<FileTouch> = Vec::new();
    let mut touch = |p: Option<String>, action: FileAction| {
        if let Some(path) = p {
            files.push(FileTouch { path, action });
        }
    };
    let mut command = None;
    match name.as_str() {
        "terminal" => command = path("command"),
        "read_file" | "open" | "diagnostics" => touch(path("path"), FileAction::Read),
        "edit_file" => touch(path("path"), FileAction::Edit),
        "create_directory" => touch(path("path"), FileAction::Write),
        "delete_path" => touch(path("path"), FileAction::Delete),
        "move_path" => {
            touch(path("source_path"), FileAction::Delete);
            touch(path("destination_path"), FileAction::Write);
        }
        "copy_path" => {
            touch(path("source_path"), FileAction::Read);
            touch(path("destination_path"), FileAction::Write);
        }
        "save_file" | "restore_file_from_disk" => {
            let action = if name == "save_file" { FileAction::Write } else { FileAction::Edit };
            for p in input.get("paths").and_then(Value::as_array).into_iter().flatten() {
                touch(nonempty(p.as_str()), action);
            }
        }
        _ => {}
    }
    turn.files = files;
    turn.tool = Some(ToolUse { name, command, ..ToolUse::default() });
    let id = call.get("id").and_then(Value::as_str);
    b.push_call(id, turn);
}

fn legacy_message(b: &mut SessionBuilder, role: &str, message: &Value, time: Option<Timestamp>, opts: &ParseOptions) {
    let turn_role = match role {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        // `system` is harness-authored.
        _ => return,
    };
    let mut text: Vec<&str> = Vec::new();
    for seg in message.get("segments").and_then(Value::as_array).into_iter().flatten() {
        let body = seg.get("text").and_then(Value::as_str).unwrap_or("").trim();
        match seg.get("type").and_then(Value::as_str) {
            Some("text") if !body.is_empty() => text.push(body),
            Some("thinking") if opts.include_reasoning && turn_role == Role::Assistant => {
                b.push(Turn::new(Role::Reasoning, body).at(time));
            }
            _ => {}
        }
    }
    b.push(Turn::new(turn_role, text.join("\n")).at(time));
}

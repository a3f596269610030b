//! Grok (`grok`): three CLIs share `${GROK_HOME:-~/.grok}` and all their history is filed
//! under this one harness. Two stores are read; they do not overlap:
//!
//! * **Grok Build** (xAI): `<home>/sessions/<url-encoded cwd>/<session-id>/updates.jsonl`,
//!   a JSONL log of ACP (Agent Client Protocol) `session/update` notifications, with a
//!   sibling `summary.json` (id, cwd, title, sub-agent edge) and, sometimes, a `.cwd` file
//!   in the encoded-cwd directory holding the plain path.
//! * **grok-dev**: `<home>/grok.db`, SQLite with `sessions` and `messages` tables.
//!
//! No family reader speaks ACP updates or this schema, so the adapter reads both itself:
//! the logs with `deja_core::read::for_each_json_line`, the database through
//! [`deja_core::sqlite::Snapshot`].
//!
//! `updates.jsonl`, by `params.update.sessionUpdate`:
//!
//! | update | Turn | rule |
//! | --- | --- | --- |
//! | `user_message_chunk` | `User` | consecutive chunks with the same `update._meta.promptIndex` join (no separator) |
//! | `agent_message_chunk` | `Assistant` | consecutive chunks with the same `params._meta.promptId` join; a tool record between them does not break the join |
//! | `tool_call`, `tool_call_update` | `ToolOutput`, one per event | `content` text, else `"<kind>: <title>"`; `toolCallId` kept, `status: "failed"` is an error |
//! | anything else (plans, thoughts, modes) | skipped | |
//! | a line that is not JSON, a torn last line | skipped | counted |
//!
//! A chunk without its key (no promptIndex/promptId) starts a new message. Content text
//! is a `{"type": "text"}` object (or ACP's `{"type": "content", "content": …}` wrapper),
//! or an array of them joined by newlines; other types (images) give nothing.
//!
//! `grok.db`: `messages` rows with role `user`/`assistant` in `seq` order, `message_json`
//! `{"content": string | blocks}`; `text` blocks are the text, `thinking` blocks are
//! `Reasoning` on request; blank text, other roles and rows that are not JSON are skipped.
//!
//! **Work.** ACP updates carry tool titles and results, not arguments, so tool events are
//! `ToolOutput` records only (the page's rule): no command, files or edit.
//!
//! **Session.** Log sessions: id = `summary.json` `info.id`, else the directory name;
//! project = `info.cwd`, else the `.cwd` file, else the URL-decoded directory name (with
//! its leading `/` restored); deja keeps the whole working directory, not the page's
//! basename. Title = `generated_title`, else `session_summary`; `session_kind` → kind,
//! `parent_session_id` → parent (a `subagent` without one keeps its kind and no edge),
//! `agent_name` → agent. Times: `summary.json` `created_at`/`updated_at` and each line's
//! `timestamp` (seconds or ms), else `params._meta.agentTimestampMs`. Database sessions:
//! id `sessions.id`, project `sessions.cwd_last`, title `sessions.title`, times
//! `messages.created_at` (RFC 3339 or zone-less UTC).
//!
//! **Incremental reads.** A log is not marked append-only: a rewind truncates and
//! regrows it, `summary.json` and `.cwd` (parts of the source) change without the log
//! growing, and chunks join across any resume point, so a changed log is re-read whole.
//! The database returns core's `RowCursor` (newest message time, highest rowid, recent
//! sessions' states): given it, only sessions with a message added or changed since are
//! re-emitted, each whole.
//!
//! **Variables.** The home is `GROK_HOME`, else `~/.grok`. `DEJA_GROK_ROOT` names the
//! sessions root (the directory the encoded-cwd directories sit in), `DEJA_GROK_DB` the
//! database file (a directory means the `grok.db` in it), `DEJA_GROK_DB_ROOT` the
//! directory holding it.
//!
//! **Injected text.** ACP updates carry only what the user and agent said; grok-dev's
//! `system` rows are never read. So `injected` is `InjectedText::NONE`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use deja_core::discover::find_files;
use deja_core::family::json_docs::text_blocks;
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::model::{cap_text, MAX_MESSAGE_BYTES};
use deja_core::read::{for_each_json_line, read_source};
use deja_core::sqlite::{self, RowCursor};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Role,
    SessionBuilder, SessionSink, SourceRef, StoreEnv, Timestamp, Turn,
};
use serde_json::Value;

mod wiring;

const ID: &str = "grok";
const DB_NAME: &str = "grok.db";
const LOG_NAME: &str = "updates.jsonl";

/// The Grok adapter.
pub struct GrokFormat;

deja_core::inventory::submit!(deja_core::Registration(&GrokFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Grok Build",
    container: "JSONL of ACP session updates, `sessions/<url-encoded cwd>/<id>/updates.jsonl` with `summary.json` \
        (Grok Build), and SQLite `grok.db` (grok-dev), both under `${GROK_HOME:-~/.grok}`",
    store: StoreSpec::new(&[
        Store {
            name: "",
            roots: &[Root::any("${GROK_HOME:-~/.grok}/sessions")],
            layout: Layout::Custom { shape: "<url-encoded cwd>/<session-id>/updates.jsonl", walk: Some(walk_sessions) },
        },
        Store { name: "db", roots: &[Root::any("${GROK_HOME:-~/.grok}")], layout: Layout::Database(DB_NAME) },
    ]),
    needs: &[],
    format_summary: "Grok Build logs each session as ACP `session/update` notifications in \
        `sessions/<url-encoded cwd>/<id>/updates.jsonl`, with a `summary.json` beside it (id, cwd, generated title, \
        `session_kind`/`parent_session_id`/`agent_name` for sub-agents). `user_message_chunk` and \
        `agent_message_chunk` updates are joined into messages by `promptIndex`/`promptId`; each `tool_call` and \
        `tool_call_update` is a tool-output record (its content, else `<kind>: <title>`): ACP carries no tool \
        arguments, so no command, file or edit is derived. A rewind rewrites the log, so a changed log is re-read \
        whole. grok-dev keeps `grok.db` (SQLite: `sessions` with `cwd_last` and title, `messages` with \
        `{\"content\": …}` JSON by `seq`), read through a private copy with its WAL, incrementally by `created_at`.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "Grok Build: `[mcp_servers.deja] command = \"<exe>\", args = [\"mcp\"]` in `${GROK_HOME:-~/.grok}/config.toml`; \
             grok-dev: an entry `{\"id\": \"deja\", \"transport\": \"stdio\", \"command\": \"<exe>\", \"args\": [\"mcp\"]}` in \
             the `mcp.servers` array of `${GROK_HOME:-~/.grok}/user-settings.json`; the community CLI only per project",
        ),
        auto_recall: Capability::Planned(
            "`${GROK_HOME:-~/.grok}/hooks/deja.json` in the Claude Code hook shape: `SessionStart` → `hook-session-start`, \
             `PreCompact` → `hook-precompact`, `UserPromptSubmit` → `hook-prompt`, `PreToolUse` → `hook-tool`",
        ),
        skill: Capability::Planned(
            "a marked guidance block in `${GROK_HOME:-~/.grok}/GROK.md` and `AGENTS.md`, plus \
             `~/.agents/skills/deja-history/SKILL.md`",
        ),
        command: Capability::Planned(
            "through the skill: Grok Build lists skills whose frontmatter makes them user-invocable as slash commands; \
             the shared skill's frontmatter does not say so yet",
        ),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::Unknown, handoff: Handoff::Exec(&["grok", "{prompt}"]) },
};

/// Every session's `updates.jsonl`, with its `summary.json` and its project's `.cwd`
/// where they exist.
fn walk_sessions(root: &Path, _env: &StoreEnv, found: &mut Discovery) {
    for log in find_files(root, 3, &|name| name == LOG_NAME) {
        let mut src = SourceRef::file(&log);
        let summary = log.with_file_name("summary.json");
        let cwd_file = log.parent().and_then(Path::parent).map(|d| d.join(".cwd"));
        for part in std::iter::once(summary).chain(cwd_file) {
            if part.is_file() {
                src = src.with_part(part);
            }
        }
        found.sources.push(src);
    }
}

impl HarnessFormat for GrokFormat {
    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::GrokWiring)
    }

    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        if src.path.file_name().is_some_and(|n| n == LOG_NAME) {
            parse_log(src, out)
        } else {
            parse_db(src, opts, out)
        }
    }
}

/// `%XX` escapes decoded (bytes that do not form UTF-8 are replaced).
fn url_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The project from the encoded-cwd directory name: decoded, its leading `/` restored
/// (Grok drops it: `/srv/demo` → `srv%2Fdemo`) unless it is a Windows drive path.
fn decoded_dir(name: &str) -> Option<String> {
    let d = url_decode(name);
    let d = d.trim();
    if d.is_empty() {
        return None;
    }
    let drive = d.as_bytes().get(1) == Some(&b':');
    Some(if d.starts_with('/') || drive { d.to_string() } else { format!("/{d}") })
}

/// The text of ACP content: a text object (or a `content` wrapper around one), or an
/// array of them joined by newlines; other types give nothing.
fn content_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::Object(o)) => match o.get("type").and_then(Value::as_str) {
            None | Some("" | "text") => o.get("text").and_then(Value::as_str).map(str::to_string).unwrap_or_default(),
            Some("content") => content_text(o.get("content")),
            Some(_) => String::new(),
        },
        Some(Value::Array(items)) => {
            items.iter().map(|i| content_text(Some(i))).filter(|t| !t.trim().is_empty()).collect::<Vec<_>>().join("\n")
        }
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    }
}

/// A JSON value as a join key (`promptIndex` is a number, `promptId` a string).
fn key(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn str_of<'a>(v: &'a Value, pointer: &str) -> Option<&'a str> {
    v.pointer(pointer).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty())
}

fn parse_log(src: &SourceRef, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let path = src.path.as_path();
    let mut stats = ParseStats::default();
    let bytes = read_source(path, &mut stats)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let summary: Value = std::fs::read(dir.join("summary.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(b.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&b)).ok())
        .unwrap_or(Value::Null);
    let dir_name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let id = str_of(&summary, "/info/id").map(str::to_string).unwrap_or(dir_name);
    let cwd_dir = dir.parent();
    let project = str_of(&summary, "/info/cwd")
        .map(str::to_string)
        .or_else(|| {
            let text = std::fs::read_to_string(cwd_dir?.join(".cwd")).ok()?;
            let t = text.trim();
            (!t.is_empty()).then(|| t.to_string())
        })
        .or_else(|| decoded_dir(&cwd_dir?.file_name()?.to_string_lossy()));

    let mut b = SessionBuilder::new(ID, id, src.clone());
    {
        let s = b.session_mut();
        s.project = project;
        s.title = str_of(&summary, "/generated_title").or_else(|| str_of(&summary, "/session_summary")).map(str::to_string);
        s.kind = str_of(&summary, "/session_kind").map(str::to_string);
        s.parent = str_of(&summary, "/parent_session_id").map(str::to_string);
        s.agent = str_of(&summary, "/agent_name").map(str::to_string);
    }
    for k in ["/created_at", "/updated_at"] {
        b.touch(str_of(&summary, k).and_then(Timestamp::parse_str));
    }

    // The last speech message: its role, join key and turn index.
    let mut last: Option<(Role, Option<String>, usize)> = None;
    for_each_json_line(&bytes.bytes, 0, path, &mut stats, |_, line| {
        let Some(update) = line.pointer("/params/update") else { return };
        let time = line
            .get("timestamp")
            .and_then(Value::as_f64)
            .or_else(|| line.pointer("/params/_meta/agentTimestampMs").and_then(Value::as_f64))
            .and_then(Timestamp::from_number);
        let kind = update.get("sessionUpdate").and_then(Value::as_str).unwrap_or_default();
        let (role, join) = match kind {
            "user_message_chunk" => (Role::User, key(update.pointer("/_meta/promptIndex"))),
            "agent_message_chunk" => (Role::Assistant, key(line.pointer("/params/_meta/promptId"))),
            "tool_call" | "tool_call_update" => {
                let mut text = content_text(update.get("content"));
                if text.trim().is_empty() {
                    let parts: Vec<&str> = [str_of(update, "/kind"), str_of(update, "/title")].into_iter().flatten().collect();
                    text = parts.join(": ");
                }
                let call_id = update.get("toolCallId").and_then(Value::as_str).unwrap_or_default();
                let failed = update.get("status").and_then(Value::as_str) == Some("failed");
                if let Some(idx) = b.push_orphan_result(call_id, text.trim(), failed, None, time) {
                    if let (Some(name), Some(tool)) =
                        (str_of(update, "/kind"), b.session_mut().turns.get_mut(idx).and_then(|t| t.tool.as_mut()))
                    {
                        tool.name = name.to_string();
                    }
                }
                return;
            }
            _ => return,
        };
        let text = content_text(update.get("content"));
        if text.is_empty() {
            return;
        }
        if let Some((r, Some(k), idx)) = &last {
            if *r == role && join.as_deref() == Some(k.as_str()) {
                if let Some(turn) = b.session_mut().turns.get_mut(*idx) {
                    turn.text.push_str(&text);
                    // A joined message is held to the same cap as a pushed one.
                    cap_text(&mut turn.text, MAX_MESSAGE_BYTES);
                }
                b.touch(time);
                return;
            }
        }
        if let Some(idx) = b.push(Turn::new(role, text).at(time)) {
            last = Some((role, join, idx));
        }
    });
    // Joined chunks keep their spacing until the message is whole.
    for turn in &mut b.session_mut().turns {
        let trimmed = turn.text.trim();
        if trimmed.len() != turn.text.len() {
            turn.text = trimmed.to_string();
        }
    }
    if let Some(s) = b.finish() {
        out.session(s);
    }
    Ok(stats)
}

/// One `messages` row as read.
struct Message {
    role: String,
    json: String,
    time: Option<Timestamp>,
}

fn parse_db(src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let db = src.path.as_path();
    let (store, mut stats) = sqlite::Db::open(src)?;
    let conn = store.conn();
    let sql_err = |e: rusqlite::Error| store.err(e);
    let cols = store.columns("messages", &["session_id", "role", "message_json"], "a grok-dev store")?;
    let col = |name: &str| cols.col(name);
    let seq = if cols.has("seq") { "seq, rowid" } else { "rowid" };

    // Every row, grouped by session (times are text in two shapes, so they are compared
    // as parsed times, not as strings).
    let mut sessions: BTreeMap<String, Vec<Message>> = BTreeMap::new();
    {
        let sql = format!("SELECT session_id, role, message_json, {} FROM messages ORDER BY session_id, {seq}", col("created_at"));
        let mut stmt = conn.prepare(&sql).map_err(sql_err)?;
        let mut rows = stmt.query([]).map_err(sql_err)?;
        while let Some(row) = rows.next().map_err(sql_err)? {
            let text = |i: usize| row.get_ref(i).ok().and_then(|v| sqlite::value_text(v).ok().flatten());
            let Some(session) = text(0) else {
                stats.records += 1;
                stats.skip(|| format!("{}: a message without a session id", db.display()));
                continue;
            };
            let time = row.get_ref(3).ok().and_then(sqlite::value_timestamp);
            sessions.entry(session).or_default().push(Message {
                role: text(1).unwrap_or_default(),
                json: text(2).unwrap_or_default(),
                time,
            });
        }
    }
    // Each session's state for the cursor: its newest message time and message count.
    let states: HashMap<String, sqlite::SessionState> =
        sessions.iter().map(|(id, ms)| (id.clone(), (ms.iter().filter_map(|m| m.time).map(|t| t.0).max(), ms.len() as i64, 0))).collect();
    let newest = states.values().filter_map(|s| s.0).max();
    let max_rowid = sqlite::max_rowid(conn, "messages").map_err(sql_err)?;
    let previous = RowCursor::previous(&mut stats, src, newest, max_rowid);
    stats.cursor = RowCursor::after(&states, max_rowid);
    let wanted = RowCursor::wanted(previous.as_ref(), conn, &states, "messages", "session_id").map_err(sql_err)?;
    let meta = read_sessions(conn).map_err(sql_err)?;

    for (id, messages) in sessions {
        if wanted.as_ref().is_some_and(|w| !w.contains(&id)) {
            continue;
        }
        let mut b = SessionBuilder::new(ID, id.clone(), src.clone());
        if let Some((cwd, title)) = meta.iter().find(|(sid, _, _)| *sid == id).map(|(_, c, t)| (c.clone(), t.clone())) {
            b.session_mut().project = cwd;
            b.session_mut().title = title;
        }
        for m in messages {
            stats.records += 1;
            let role = match m.role.as_str() {
                "user" => Role::User,
                "assistant" => Role::Assistant,
                // Tool and system rows are not part of the transcript the page maps.
                _ => continue,
            };
            let Ok(v) = serde_json::from_str::<Value>(&m.json) else {
                stats.skip(|| format!("{}: session {id}: a message_json that is not JSON", db.display()));
                continue;
            };
            let content = v.get("content");
            if opts.include_reasoning && role == Role::Assistant {
                for block in content.and_then(Value::as_array).into_iter().flatten() {
                    if block.get("type").and_then(Value::as_str) == Some("thinking") {
                        if let Some(t) = str_of(block, "/thinking").or_else(|| str_of(block, "/text")) {
                            b.push(Turn::new(Role::Reasoning, t).at(m.time));
                        }
                    }
                }
            }
            b.push(Turn::new(role, text_blocks(content)).at(m.time));
        }
        if let Some(s) = b.finish() {
            out.session(s);
        }
    }
    Ok(stats)
}

/// `(id, cwd_last, title)` of a `sessions` row.
type SessionRow = (String, Option<String>, Option<String>);

/// Every `sessions` row, when the table is there.
fn read_sessions(conn: &rusqlite::Connection) -> rusqlite::Result<Vec<SessionRow>> {
    let cols: HashSet<String> = sqlite::table_columns(conn, "sessions")?.into_iter().collect();
    if !cols.contains("id") {
        return Ok(Vec::new());
    }
    let col = |name: &str| if cols.contains(name) { format!("\"{name}\"") } else { "NULL".to_string() };
    let mut stmt = conn.prepare(&format!("SELECT id, {}, {} FROM sessions", col("cwd_last"), col("title")))?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let text = |i: usize| {
            row.get_ref(i).ok().and_then(|v| sqlite::value_text(v).ok().flatten()).map(|t| t.trim().to_string()).filter(|t| !t.is_empty())
        };
        if let Some(id) = text(0) {
            out.push((id, text(1), text(2)));
        }
    }
    Ok(out)
}

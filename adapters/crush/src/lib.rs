//! Crush (`crush`): one SQLite database per project, `<data_dir>/crush.db`, where
//! `data_dir` defaults to `<project>/.crush`. The projects are listed in Crush's registry,
//! `${XDG_DATA_HOME:-~/.local/share}/crush/projects.json`
//! (`{"projects": [{"path", "data_dir", "last_accessed"}]}`); discovery follows it and
//! never hunts the filesystem for `.crush` directories. A registered project whose store
//! is missing or empty (a deleted project) is skipped silently.
//!
//! No family reader writes this schema, so the adapter reads it itself, through
//! [`deja_core::sqlite::Snapshot`]: `sessions` (title, `parent_session_id`,
//! `summary_message_id`, times) and `messages` (`role`, `parts` = JSON array of
//! `{type, data}`, `created_at`, `is_summary_message`).
//!
//! | part `type` | Turn | rule |
//! | --- | --- | --- |
//! | `text` (`data.text`) | the row's `role` (`User` / `Assistant`); `Summary` on an `is_summary_message` row | NUL bytes stripped |
//! | `reasoning` (`data.thinking`) | `Reasoning` | only with `include_reasoning` |
//! | `tool_call` (`data.id`, `data.name`, `data.input` = JSON string) | `ToolCall` | `bash` → command; `file_path` → files (`view` read, `edit`/`multiedit`/`lsp_replace_symbol` edit, `write` write); `edit`/`multiedit` spans → `edit` |
//! | `tool_result` (`data.tool_call_id`, `data.content`, `data.is_error`) on a `tool` row | folded into its call | Crush's trailing `<cwd>…</cwd>` tag stripped; a last line `Exit code N` → exit N; a failed edit/write keeps its files, not its edit; no call → `ToolOutput` |
//! | `finish` and other parts | skipped | bookkeeping |
//!
//! **Session.** id = `sessions.id`; title = first line of `sessions.title`; project = the
//! registered project path (no cwd on the row): the directory above `.crush`, or, for a
//! store in a registered `data_dir`, the path carried in the source key `project=<path>`; `parent_session_id` → parent (kind
//! `subagent`). Times are documented as milliseconds, but v0.92.0 writes seconds: both
//! are accepted by magnitude.
//!
//! **Cursor.** Core's `RowCursor`: the newest `updated_at` of a session or message row,
//! the highest `messages` rowid, and the state (newest update, message count) of the
//! sessions updated within the slack of the newest. Given it, only sessions updated since
//! and not as recorded, or owning a row above the rowid, are re-read, whole. (Crush
//! stamps whole seconds; the recorded states catch a second change within the same
//! second, which the older `{"updated", "rowid"}` cursor left for the session's next one.)
//!
//! **Variables.** `DEJA_CRUSH_ROOT` names Crush's data home (the directory holding
//! `projects.json`), else `$XDG_DATA_HOME/crush`, else `~/.local/share/crush`. A relative
//! `path` or `data_dir` in the registry (Crush writes absolute ones) is taken relative to
//! the registry's directory.

pub mod hook;
mod wiring;

use std::collections::{HashMap, HashSet};
use std::path::Path;

use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::read::parse_json_document;
use deja_core::sqlite::{self, RowCursor};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, Edit, ExitStatus, FileAction, FileTouch, FormatError, HarnessFormat, HarnessInfo, InjectedText,
    ParseOptions, ParseStats, Role, SessionBuilder, SessionSink, SourceRef, StoreEnv, Timestamp, ToolKind, ToolMap, ToolUse, Turn,
};
use serde_json::Value;

const ID: &str = "crush";
/// The source key carrying the project a store belongs to: `project=<path>`.
const PROJECT_KEY: &str = "project=";
use deja_core::model::MAX_EDIT_BYTES;

/// Crush's tool names.
pub const TOOLS: ToolMap =
    ToolMap { shell: &["bash"], read: &["view"], edit: &["edit", "multiedit", "lsp_replace_symbol"], write: &["write"] };

/// The Crush adapter.
pub struct CrushFormat;

deja_core::inventory::submit!(deja_core::Registration(&CrushFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Crush",
    container: "SQLite (WAL), one `crush.db` per project, found through the `projects.json` registry",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("${XDG_DATA_HOME:-~/.local/share}/crush")],
        layout: Layout::Registry { file: "projects.json", read: read_registry },
    }]),
    needs: &[],
    format_summary: "Crush keeps each project's history in that project's own SQLite database (`<project>/.crush/crush.db` \
        or the registered `data_dir`), listed in `projects.json` in its data home. `sessions` rows carry the title and \
        `parent_session_id` (sub-agents); `messages` rows a `role` and `parts`, a JSON array of `{type, data}`: `text`, \
        `reasoning`, `tool_call` (arguments as a JSON string) and, on `tool` rows, `tool_result` paired by \
        `tool_call_id`, whose trailing `<cwd>` tag is stripped and whose last line `Exit code N` gives the exit status. \
        A message flagged `is_summary_message` is the compaction summary. Times are seconds or milliseconds. Each database \
        is read through a private copy with its WAL, incrementally by update time and row id.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "`mcp.deja` `{type: stdio, command, args: [\"mcp\"]}` in `${CRUSH_GLOBAL_CONFIG:-${XDG_CONFIG_HOME:-~/.config}/crush}/crush.json` \
             (not `mcpServers`); the tool arrives as `mcp_deja_deja`",
        ),
        auto_recall: Capability::Planned(
            "`crush-auto`: one `hooks.PreToolUse` entry in crush.json running `deja hook-tool --crush` (matcher \
             `^(bash|edit|write|multiedit)$`), replying `{\"version\":1,\"context\":…}` with no `decision`; Crush appends \
             the recall to the tool result",
        ),
        skill: Capability::Planned("`~/.agents/skills/deja-history/SKILL.md`"),
        command: Capability::Planned("`~/.config/crush/commands/deja.md` → `/user:deja`"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Always(
            ResumeSpec::in_dir(&["crush", "--session", "{id}"]).with_note("only while the project's .crush store exists"),
        ),
        handoff: Handoff::Exec(&["crush", "run", "{prompt}"]),
    },
};

/// The projects `projects.json` names, each project's `crush.db` (in its `.crush`, or
/// the data directory the entry gives) with its `-wal`.
fn read_registry(registry: &Path, _env: &StoreEnv, found: &mut Discovery) {
    // Paths in the registry are relative to its directory when not absolute.
    let home = registry.parent().unwrap_or(Path::new(""));
    let mut stats = ParseStats::default();
    let Ok(bytes) = deja_core::read::read_source(registry, &mut stats) else { return };
    let Ok(doc) = parse_json_document(&bytes.bytes, registry) else { return };
    let mut seen = HashSet::new();
    for project in doc.get("projects").and_then(Value::as_array).into_iter().flatten() {
        let Some(path) = project.get("path").and_then(Value::as_str).filter(|p| !p.trim().is_empty()) else { continue };
        let path = home.join(path);
        let custom = project.get("data_dir").and_then(Value::as_str).filter(|d| !d.trim().is_empty()).map(|d| home.join(d));
        let data_dir = custom.clone().unwrap_or_else(|| path.join(".crush"));
        let db = data_dir.join("crush.db");
        // A deleted project leaves its registry entry: skipped without a word.
        if !seen.insert(db.clone()) || !std::fs::metadata(&db).is_ok_and(|m| m.is_file() && m.len() > 0) {
            continue;
        }
        found.looked_at(&db);
        let mut src = SourceRef::file(&db);
        // The project is the directory above `.crush`, unless the store lives elsewhere.
        if custom.is_some_and(|d| d != path.join(".crush")) {
            src = src.keyed(format!("{PROJECT_KEY}{}", path.display()));
        }
        src = sqlite::parts(&db).into_iter().fold(src, SourceRef::with_part);
        found.sources.push(src);
    }
}

impl HarnessFormat for CrushFormat {
    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::CrushWiring)
    }

    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        parse_db(src, opts, out)
    }
}

/// The project a store belongs to: its source key, else the directory above `.crush`.
fn project_of(src: &SourceRef) -> Option<String> {
    if let Some(p) = src.key.as_deref().and_then(|k| k.strip_prefix(PROJECT_KEY)) {
        return Some(p.to_string());
    }
    let data_dir = src.path.parent()?;
    (data_dir.file_name()? == ".crush").then(|| data_dir.parent().map(|p| p.display().to_string())).flatten()
}

#[derive(Default)]
struct SessionRow {
    title: Option<String>,
    parent: Option<String>,
}

fn parse_db(src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let db = src.path.as_path();
    let (store, mut stats) = sqlite::Db::open(src)?;
    let conn = store.conn();
    let sql_err = |e: rusqlite::Error| store.err(e);
    let scols = store.columns("sessions", &["id"], "a Crush store")?;
    let mcols = store.columns("messages", &["session_id", "role", "parts"], "a Crush store")?;
    let scol = |n: &str| scols.col(n);
    let mcol = |n: &str| mcols.qualified("m", n);

    // Each session's state for the cursor: its newest update (its row's or a message's;
    // seconds or ms as the store writes them) and its message count. Crush stamps whole
    // seconds, so the state of the sessions updated within the slack tells a second
    // change in the same second from none.
    let mut states: HashMap<String, sqlite::SessionState> = HashMap::new();
    {
        let sql = format!(
            "SELECT s.id, s.{}, g.mu, coalesce(g.n, 0) FROM sessions s LEFT JOIN \
             (SELECT m.session_id AS sid, max({}) AS mu, count(*) AS n FROM messages m GROUP BY m.session_id) g ON g.sid = s.id",
            scol("updated_at"),
            mcol("updated_at")
        );
        let mut stmt = conn.prepare(&sql).map_err(sql_err)?;
        let mut rows = stmt.query([]).map_err(sql_err)?;
        while let Some(row) = rows.next().map_err(sql_err)? {
            let Ok(Some(id)) = sqlite::column_text(row, 0) else { continue };
            let time = |i: usize| row.get_ref(i).ok().and_then(sqlite::value_timestamp).map(|t| t.0);
            let newest = time(1).max(time(2));
            states.insert(id, (newest, row.get_ref(3).ok().and_then(sqlite::value_i64).unwrap_or(0), 0));
        }
    }
    let newest = states.values().filter_map(|s| s.0).max();
    let max_rowid = sqlite::max_rowid(conn, "messages").map_err(sql_err)?;
    let previous = RowCursor::previous(&mut stats, src, newest, max_rowid);
    stats.cursor = RowCursor::after(&states, max_rowid);
    let wanted = RowCursor::wanted(previous.as_ref(), conn, &states, "messages", "session_id").map_err(sql_err)?;
    if wanted.as_ref().is_some_and(HashSet::is_empty) {
        return Ok(stats);
    }

    let mut sessions = HashMap::new();
    {
        let sql = format!("SELECT id, {}, {} FROM sessions", scol("title"), scol("parent_session_id"));
        let mut stmt = conn.prepare(&sql).map_err(sql_err)?;
        let mut rows = stmt.query([]).map_err(sql_err)?;
        while let Some(row) = rows.next().map_err(sql_err)? {
            let text = |i: usize| row.get_ref(i).ok().and_then(|v| sqlite::value_text(v).ok().flatten());
            let Some(id) = text(0) else { continue };
            let title =
                text(1).map(|t| t.replace('\0', "")).and_then(|t| t.lines().next().map(|l| l.trim().to_string())).filter(|t| !t.is_empty());
            let parent = text(2).filter(|p| !p.trim().is_empty());
            sessions.insert(id, SessionRow { title, parent });
        }
    }
    let project = project_of(src);
    let sql = format!(
        "SELECT m.session_id, m.role, m.parts, {}, {} FROM messages m ORDER BY m.session_id, {}, m.rowid",
        mcol("created_at"),
        mcol("is_summary_message"),
        mcol("created_at"),
    );
    let mut stmt = conn.prepare(&sql).map_err(sql_err)?;
    let mut rows = stmt.query([]).map_err(sql_err)?;
    let mut current: Option<(String, SessionBuilder)> = None;
    while let Some(row) = rows.next().map_err(sql_err)? {
        stats.records += 1;
        let text = |i: usize| row.get_ref(i).ok().and_then(|v| sqlite::value_text(v).ok().flatten());
        let Some(id) = text(0) else {
            stats.skip(|| format!("{}: a message row without a session id", db.display()));
            continue;
        };
        if wanted.as_ref().is_some_and(|w| !w.contains(&id)) {
            continue;
        }
        if current.as_ref().is_none_or(|(cur, _)| *cur != id) {
            if let Some((_, b)) = current.take() {
                emit(b, out);
            }
            let mut b = SessionBuilder::new(ID, id.clone(), src.clone());
            let s = b.session_mut();
            s.project = project.clone();
            if let Some(row) = sessions.get(&id) {
                s.title = row.title.clone();
                if let Some(p) = &row.parent {
                    s.parent = Some(p.clone());
                    s.kind = Some("subagent".to_string());
                }
            }
            current = Some((id.clone(), b));
        }
        let Some((_, b)) = current.as_mut() else { continue };
        let role = text(1).unwrap_or_default();
        let time = row.get_ref(3).ok().and_then(sqlite::value_timestamp);
        let summary = row.get_ref(4).ok().and_then(sqlite::value_i64).is_some_and(|v| v != 0);
        let parts = match sqlite::column_json(row, 2) {
            Ok(Some(Value::Array(parts))) => parts,
            Ok(_) => {
                stats.skip(|| format!("{}: session {id}: parts is not a JSON array", db.display()));
                continue;
            }
            Err(e) => {
                stats.skip(|| format!("{}: session {id}: parts: {e}", db.display()));
                continue;
            }
        };
        for part in &parts {
            push_part(b, &role, summary, part, time, opts);
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

fn clean(text: &str) -> String {
    text.replace('\0', "").trim().to_string()
}

fn push_part(b: &mut SessionBuilder, role: &str, summary: bool, part: &Value, time: Option<Timestamp>, opts: &ParseOptions) {
    let data = part.get("data").unwrap_or(&Value::Null);
    let str_of = |k: &str| data.get(k).and_then(Value::as_str).unwrap_or("");
    match part.get("type").and_then(Value::as_str).unwrap_or("") {
        "text" => {
            let turn_role = match (role, summary) {
                (_, true) => Role::Summary,
                ("user", _) => Role::User,
                ("assistant", _) => Role::Assistant,
                _ => return,
            };
            b.push(Turn::new(turn_role, clean(str_of("text"))).at(time));
        }
        "reasoning" if opts.include_reasoning => {
            b.push(Turn::new(Role::Reasoning, clean(str_of("thinking"))).at(time));
        }
        "tool_call" => {
            let name = str_of("name");
            let input = match data.get("input") {
                Some(Value::String(s)) => serde_json::from_str::<Value>(s).unwrap_or(Value::Null),
                Some(v) => v.clone(),
                None => Value::Null,
            };
            let mut turn = Turn::new(Role::ToolCall, "").at(time);
            let kind = TOOLS.kind(name);
            let command = (kind == ToolKind::Shell).then(|| input.get("command").and_then(Value::as_str).map(str::to_string)).flatten();
            turn.tool = Some(ToolUse { name: name.to_string(), command, ..ToolUse::default() });
            if let Some(path) = input.get("file_path").and_then(Value::as_str).filter(|p| !p.is_empty()) {
                let action = TOOLS.file_action(name).unwrap_or(FileAction::Read);
                turn.files.push(FileTouch { path: path.to_string(), action });
                if matches!(name, "edit" | "multiedit") {
                    turn.edit = edit_spans(path, &input);
                }
            }
            let id = str_of("id");
            b.push_call(Some(id), turn);
        }
        "tool_result" => {
            let call_id = str_of("tool_call_id");
            let is_error = data.get("is_error").and_then(Value::as_bool).unwrap_or(false);
            let (output, exit) = result_text(str_of("content"));
            if !call_id.is_empty() && b.complete_call(call_id, &output, is_error, exit.clone(), time) {
                if is_error {
                    // A failed edit or write changed nothing: its files stay, its span goes.
                    if let Some(turn) = b.call_mut(call_id) {
                        turn.edit = None;
                    }
                }
            } else if let Some(idx) = b.push_orphan_result(call_id, &output, is_error, exit, time) {
                let name = str_of("name").to_string();
                if let Some(tool) = b.session_mut().turns.get_mut(idx).and_then(|t| t.tool.as_mut()) {
                    tool.name = name;
                }
            }
        }
        _ => {}
    }
}

/// A result's text without Crush's trailing `<cwd>…</cwd>` tag, and the exit code of a
/// last line `Exit code N`.
fn result_text(content: &str) -> (String, Option<ExitStatus>) {
    let mut text = content.replace('\0', "");
    if let Some(start) = text.rfind("<cwd>") {
        if text[start..].trim_end().ends_with("</cwd>") {
            text.truncate(start);
        }
    }
    let text = text.trim_end().to_string();
    let exit = deja_core::exit::exit_code(&text, &[deja_core::exit::ExitLine::last("Exit code ")]).map(ExitStatus::Code);
    (text, exit)
}

/// `old_string`/`new_string` plus every `edits[]` pair (multiedit), joined by newlines.
fn edit_spans(path: &str, input: &Value) -> Option<Edit> {
    fn pair(v: &Value) -> Option<(&str, Option<&str>)> {
        let old = v.get("old_string").and_then(Value::as_str).unwrap_or("");
        (!old.is_empty()).then_some((old, v.get("new_string").and_then(Value::as_str)))
    }
    let mut spans: Vec<(&str, Option<&str>)> = pair(input).into_iter().collect();
    spans.extend(input.get("edits").and_then(Value::as_array).into_iter().flatten().filter_map(pair));
    if spans.is_empty() {
        return None;
    }
    let mut old = spans.iter().map(|(o, _)| *o).collect::<Vec<_>>().join("\n");
    deja_core::model::cap_text(&mut old, MAX_EDIT_BYTES);
    let news: Vec<&str> = spans.iter().filter_map(|(_, n)| *n).collect();
    let new = (!news.is_empty()).then(|| {
        let mut n = news.join("\n");
        deja_core::model::cap_text(&mut n, MAX_EDIT_BYTES);
        n
    });
    Some(Edit { path: path.to_string(), old, new })
}

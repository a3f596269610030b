//! Cursor (`cursor`): two unrelated stores under one id.
//!
//! * **IDE** — SQLite key-value databases `<User>/globalStorage/state.vscdb` (modern
//!   Cursor) and every `<User>/workspaceStorage/<hash>/state.vscdb` (older versions),
//!   table `cursorDiskKV`: a composer (session) object at `composerData:<composerId>`,
//!   its messages ("bubbles") at `bubbleId:<composerId>:<bubbleId>`. Read through the
//!   `state.vscdb` family, `deja_core::family::vscdb` (key-range selects over the key
//!   index, `json_extract` projections guarded by `json_valid`), via
//!   [`deja_core::sqlite::Snapshot`]. A database without `cursorDiskKV` has no chats.
//! * **CLI agent** (`cursor-agent`) — JSONL transcripts
//!   `<cli home>/projects/<encoded-cwd>/agent-transcripts/**/*.jsonl`, Anthropic message
//!   shape, read whole on change (the page treats them as whole files).
//!
//! IDE bubbles → turns (sorted by `timestamp`; an unstamped bubble takes the session's
//! start):
//!
//! | field | Turn | rule |
//! | --- | --- | --- |
//! | composer `composerId` (else the key), `name`, `createdAt`, `lastUpdatedAt` | session | project = the first bubble's `workspaceProjectDir` (the directory; the page's basename is the name derived from it) |
//! | bubble `type == 1` | `User` | `text`, else `rawText`; blank skipped |
//! | any other `type` | `Assistant` | same |
//! | null / malformed values | skipped | `json_valid` filters them in SQL |
//!
//! No tool data is read from IDE bubbles (the page reads none). A session with no
//! non-empty bubble is not emitted.
//!
//! CLI lines → turns:
//!
//! | record | Turn | rule |
//! | --- | --- | --- |
//! | `role` `user` / `assistant`, `message.content` string or `[{type:"text",text}]` | `User` / `Assistant` | text items joined with newlines; the `<user_query>` wrapper and a leading `<timestamp>` block are Cursor's injected text, stripped at ingest |
//! | `tool_use` `Shell` `input.command` | `ToolCall` | the command; Cursor CLI writes no results, so no output and no exit status |
//! | `tool_use` `Read` / `Write` / `StrReplace` / `Delete` `input.path` | `ToolCall` | `files` read / write / edit / delete; `StrReplace` `old_string`/`new_string` → `edit` |
//! | other `tool_use` | `ToolCall` | name only |
//! | lines without a `user`/`assistant` role (`turn_ended`…) | skipped | control records |
//! | undecodable line | skipped | counted |
//!
//! The session id is the file stem (what `cursor-agent --resume` takes); the project is
//! the directory under `projects/`, decoded like Claude's dash encoding with the leading
//! separator restored (fallback: the last two dash-separated parts). The transcripts
//! carry no times; the page stamps every message with the file's mtime, which deja does
//! not invent into turns (see the matrix notes): the source's own mtime is already its
//! change fingerprint.
//!
//! **Variables.** IDE: `DEJA_CURSOR_ROOT` replaces the `User` folder entirely; else
//! macOS `~/Library/Application Support/Cursor/User`, Windows `%APPDATA%\Cursor\User`,
//! elsewhere `$XDG_CONFIG_HOME/Cursor/User` and `~/.config/Cursor/User` (Cursor falls back
//! to the latter). CLI: `DEJA_CURSOR_CLI_ROOT`, else `CURSOR_CONFIG_DIR`, else
//! `~/.cursor`. Transcripts under a `subagents` directory are read only with
//! `DEJA_INCLUDE_SUBAGENTS=1` (off by default here, as the page says; no parent edge is
//! derived).
//!
//! **Row cursor (IDE).** Core's `RowCursor`, on times alone: a parse of a database
//! returns the newest composer `lastUpdatedAt` / bubble `timestamp` (ms) and the row
//! state (newest time, bubble count) of the composers touched within the slack of it;
//! given `SourceRef::cursor`, only composers changed since (minus the slack, not exactly as
//! recorded) have their bubbles' text read and are emitted, each whole. Bubbles without
//! a timestamp still count in the bubble count.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use deja_core::discover::find_files;
use deja_core::family::json_docs::{first_str, text_blocks};
use deja_core::family::vscdb::{self, Scopes};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::model::SessionMeta;
use deja_core::model::{cap_text, MAX_EDIT_BYTES};
use deja_core::project::{dash_fallback_name, decode_dash_path};
use deja_core::read::{for_each_json_line, read_source};
use deja_core::sqlite::{self, RowCursor};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, Edit, FileAction, FileTouch, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions,
    ParseStats, Role, SessionBuilder, SessionSink, SourceRef, StoreEnv, Timestamp, ToolUse, Turn,
};
use serde_json::Value;

mod wiring;

const ID: &str = "cursor";

/// Cursor wraps each CLI prompt in `<user_query>…</user_query>` (tags go, content stays)
/// and may put a `<timestamp>…</timestamp>` block before it (removed when leading).
static INJECTED: InjectedText = InjectedText { wrappers: &["user_query"], preambles: &["timestamp"], ..InjectedText::NONE };

/// The Cursor adapter.
pub struct CursorFormat;

deja_core::inventory::submit!(deja_core::Registration(&CursorFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Cursor",
    container: "IDE: SQLite key-value `state.vscdb` (`cursorDiskKV` composers and bubbles); CLI: JSONL transcripts",
    store: StoreSpec::new(&[
        // The IDE's `User` folder (its state.vscdb databases). On Linux the XDG place and
        // ~/.config are both looked at: Cursor falls back to the latter.
        Store {
            name: "",
            roots: &[
                Root::macos("~/Library/Application Support/Cursor/User"),
                Root::linux("${XDG_CONFIG_HOME:-~/.config}/Cursor/User"),
                Root::linux("~/.config/Cursor/User"),
                Root::windows("${APPDATA:-~/AppData/Roaming}/Cursor/User"),
            ],
            layout: Layout::Custom { shape: "{globalStorage,workspaceStorage/*}/state.vscdb", walk: Some(walk_ide) },
        },
        // cursor-agent's transcripts.
        Store {
            name: "cli",
            roots: &[Root::any("${CURSOR_CONFIG_DIR:-~/.cursor}")],
            layout: Layout::Custom { shape: "projects/<encoded-cwd>/agent-transcripts/**/*.jsonl", walk: Some(walk_cli) },
        },
    ])
    .deja_vars(&["DEJA_INCLUDE_SUBAGENTS"]),
    needs: &[],
    format_summary: "Cursor's IDE keeps chats in VS Code-style SQLite key-value databases (`state.vscdb` in \
        `globalStorage` and, in older versions, each `workspaceStorage/<hash>`): table `cursorDiskKV`, a composer \
        object at `composerData:<id>` (name, `createdAt`, `lastUpdatedAt`) and its bubbles at \
        `bubbleId:<id>:<bubble>` (`type` 1 the user, anything else the model; `text` or `rawText`; `timestamp`; \
        `workspaceProjectDir`), read by key range with `json_extract` and incrementally by update time; no tool data \
        is kept there. The CLI agent writes Anthropic-shaped JSONL transcripts under \
        `~/.cursor/projects/<encoded-cwd>/agent-transcripts/`, with `Shell`, `Read`, `Write`, `StrReplace` and \
        `Delete` tool uses (no results, no exit status, no timestamps).",
    injected: &INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "`${CURSOR_CONFIG_DIR:-~/.cursor}/mcp.json`: `mcpServers.deja = {\"command\": \"<exe>\", \"args\": [\"mcp\"]}`",
        ),
        auto_recall: Capability::Planned(
            "`${CURSOR_CONFIG_DIR:-~/.cursor}/hooks.json` (`version` 1): `sessionStart` runs `<exe> hook-session-start`, \
             `beforeSubmitPrompt` runs `<exe> hook-prompt` (interactive TUI only); the same command strings as Claude's \
             hooks, which Cursor also reads and de-duplicates",
        ),
        skill: Capability::Planned(
            "the shared `~/.agents/skills/deja-history/SKILL.md` (an older `~/.cursor/skills/deja-history` is removed)",
        ),
        command: Capability::Planned("`${CURSOR_CONFIG_DIR:-~/.cursor}/commands/deja.md`"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::PerSession {
            doc: "CLI chats: `cd <dir> && cursor-agent --resume <id>`; IDE composers reopen only in the editor",
            pick: resume_cli_chats,
        },
        handoff: Handoff::Exec(&["cursor-agent", "{prompt}"]),
    },
};

/// The IDE's state databases under a `User` folder: its `globalStorage` and every
/// `workspaceStorage/*`, or any `state.vscdb` a few levels under a root laid out otherwise.
fn walk_ide(root: &Path, _env: &StoreEnv, found: &mut Discovery) {
    let dbs = if root.join("globalStorage").is_dir() || root.join("workspaceStorage").is_dir() {
        vscdb::state_dbs(root, Scopes { global: true, workspaces: true })
    } else {
        find_files(root, 3, &|name| name == vscdb::STATE_DB)
    };
    found.sources.extend(dbs.iter().map(|db| vscdb::db_source(db)));
}

/// cursor-agent's transcripts under `projects/`: the files in an `agent-transcripts`
/// directory, a sub-agent's only when `DEJA_INCLUDE_SUBAGENTS` is on (off unless asked
/// for, as the page says, for size).
fn walk_cli(root: &Path, env: &StoreEnv, found: &mut Discovery) {
    let projects = root.join("projects");
    let subagents = env.switch("DEJA_INCLUDE_SUBAGENTS", false);
    for path in find_files(&projects, 12, &|name| name.to_ascii_lowercase().ends_with(".jsonl")) {
        let Ok(rel) = path.strip_prefix(&projects) else { continue };
        let dirs: Vec<&str> = rel.parent().into_iter().flat_map(|p| p.iter()).filter_map(|c| c.to_str()).collect();
        if !dirs.contains(&"agent-transcripts") || (!subagents && dirs.contains(&"subagents")) {
            continue;
        }
        found.sources.push(SourceRef::file(path));
    }
}

impl HarnessFormat for CursorFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::CursorWiring)
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        if src.path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("jsonl")) {
            parse_transcript(src, opts, out)
        } else {
            parse_ide(src, out)
        }
    }
}

// ---------------------------------------------------------------------------------------
// IDE

#[derive(Default)]
struct Composer {
    title: Option<String>,
    created: Option<Timestamp>,
    updated: Option<Timestamp>,
}

/// One bubble as read: (time, key, type, text, workspaceProjectDir).
type Bubble = (Option<Timestamp>, String, Option<i64>, String, Option<String>);

const COMPOSER_PREFIX: &str = "composerData:";
const BUBBLE_PREFIX: &str = "bubbleId:";

fn parse_ide(src: &SourceRef, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let _db = src.path.as_path();
    let (store, mut stats) = sqlite::Db::open(src)?;
    let conn = store.conn();
    if !vscdb::has_table(conn, vscdb::CURSOR_DISK_KV) {
        // A state database without Cursor's table (most workspace databases): no chats.
        return Ok(stats);
    }
    let sql_err = |e: rusqlite::Error| store.err(e);

    let mut composers: HashMap<String, Composer> = HashMap::new();
    vscdb::for_each_prefixed(
        conn,
        vscdb::CURSOR_DISK_KV,
        COMPOSER_PREFIX,
        "json_extract(value, '$.composerId'), json_extract(value, '$.name'), json_extract(value, '$.createdAt'), \
         json_extract(value, '$.lastUpdatedAt')",
        true,
        |key, row| {
            stats.records += 1;
            let text = |i: usize| sqlite::column_text(row, i).ok().flatten().map(|t| t.trim().to_string()).filter(|t| !t.is_empty());
            let id = text(1).unwrap_or_else(|| key[COMPOSER_PREFIX.len()..].to_string());
            let time = |i: usize| row.get_ref(i).ok().and_then(sqlite::value_timestamp);
            composers.insert(id, Composer { title: text(2), created: time(3), updated: time(4) });
        },
    )
    .map_err(sql_err)?;
    // Bubble times alone, for the row state of every composer: `(newest ms, bubbles, 0)`.
    let mut states: HashMap<String, sqlite::SessionState> =
        composers.iter().map(|(id, c)| (id.clone(), (c.updated.or(c.created).map(|t| t.0), 0, 0))).collect();
    vscdb::for_each_prefixed(conn, vscdb::CURSOR_DISK_KV, BUBBLE_PREFIX, "json_extract(value, '$.timestamp')", true, |key, row| {
        let Some((composer, _)) = key[BUBBLE_PREFIX.len()..].split_once(':') else { return };
        let state = states.entry(composer.to_string()).or_insert((None, 0, 0));
        state.1 += 1;
        if let Some(t) = row.get_ref(1).ok().and_then(sqlite::value_timestamp) {
            state.0 = Some(state.0.map_or(t.0, |s| s.max(t.0)));
        }
    })
    .map_err(sql_err)?;

    // Core's row cursor on times alone: a key-value table has no mark a composer's rows
    // share (every state it needs is the composers' own).
    let newest = states.values().filter_map(|s| s.0).max();
    let previous = RowCursor::previous(&mut stats, src, newest, Some(0));
    let wanted: Option<HashSet<String>> = previous.map(|c| c.touched_since(&states));
    if newest.is_some() {
        stats.cursor = RowCursor::after(&states, Some(0));
    }

    let mut ids: Vec<&String> = states.keys().filter(|id| wanted.as_ref().is_none_or(|w| w.contains(*id))).collect();
    ids.sort();
    let empty = Composer::default();
    for id in ids {
        let composer = composers.get(id).unwrap_or(&empty);
        let mut bubbles: Vec<Bubble> = Vec::new();
        vscdb::for_each_prefixed(
            conn,
            vscdb::CURSOR_DISK_KV,
            &format!("{BUBBLE_PREFIX}{id}:"),
            "json_extract(value, '$.type'), json_extract(value, '$.text'), json_extract(value, '$.rawText'), \
             json_extract(value, '$.timestamp'), json_extract(value, '$.workspaceProjectDir')",
            true,
            |key, row| {
                stats.records += 1;
                let text = |i: usize| sqlite::column_text(row, i).ok().flatten().filter(|t| !t.trim().is_empty());
                let body = text(2).or_else(|| text(3)).unwrap_or_default();
                let kind = row.get_ref(1).ok().and_then(sqlite::value_i64);
                let time = row.get_ref(4).ok().and_then(sqlite::value_timestamp);
                bubbles.push((time, key.to_string(), kind, body, text(5)));
            },
        )
        .map_err(sql_err)?;
        let start = composer.created.or_else(|| bubbles.iter().filter_map(|b| b.0).min());
        bubbles.sort_by_key(|b| (b.0.or(start), b.1.clone()));
        let mut builder = SessionBuilder::new(ID, id.clone(), src.clone());
        builder.session_mut().title = composer.title.clone();
        builder.session_mut().project = bubbles.iter().find_map(|b| b.4.clone()).map(|p| p.trim().to_string());
        builder.touch(composer.created);
        builder.touch(composer.updated);
        for (time, _, kind, body, _) in bubbles {
            let role = if kind == Some(1) { Role::User } else { Role::Assistant };
            builder.push(Turn::new(role, body).at(time.or(start)));
        }
        if let Some(session) = builder.finish().filter(|s| s.turns.iter().any(|t| !t.text.trim().is_empty())) {
            out.session(session);
        }
    }
    Ok(stats)
}

// ---------------------------------------------------------------------------------------
// CLI

fn parse_transcript(src: &SourceRef, _opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let mut stats = ParseStats::default();
    let bytes = read_source(&src.path, &mut stats)?.bytes;
    let id = src.path.file_stem().and_then(|s| s.to_str()).unwrap_or("cursor").to_string();
    let mut builder = SessionBuilder::new(ID, id, src.clone());
    builder.session_mut().project = transcript_project(&src.path);
    for_each_json_line(&bytes, 0, &src.path, &mut stats, |_, line| {
        let role = match line.get("role").and_then(Value::as_str) {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            _ => return,
        };
        let content = line.get("message").and_then(|m| m.get("content"));
        builder.push(Turn::new(role, line_text(content)));
        for item in content.and_then(Value::as_array).into_iter().flatten() {
            if item.get("type").and_then(Value::as_str) == Some("tool_use") {
                let name = item.get("name").and_then(Value::as_str).unwrap_or("tool");
                let input = item.get("input").unwrap_or(&Value::Null);
                builder.push_call(item.get("id").and_then(Value::as_str), cli_call(name, input));
            }
        }
    });
    if let Some(session) = builder.finish() {
        out.session(session);
    }
    Ok(stats)
}

/// Text items joined with newlines (an item whose `content` is a string counts too).
fn line_text(content: Option<&Value>) -> String {
    let Some(Value::Array(items)) = content else { return text_blocks(content) };
    items
        .iter()
        .filter_map(|i| match i.get("type").and_then(Value::as_str) {
            Some("text") | None => i.get("text").and_then(Value::as_str).or_else(|| i.get("content").and_then(Value::as_str)),
            _ => i.get("content").and_then(Value::as_str).filter(|_| i.get("type").and_then(Value::as_str) != Some("tool_use")),
        })
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn cli_call(name: &str, input: &Value) -> Turn {
    let mut turn = Turn::new(Role::ToolCall, "");
    let mut tool = ToolUse { name: name.to_string(), ..ToolUse::default() };
    let action = match name {
        "Read" => Some(FileAction::Read),
        "Write" => Some(FileAction::Write),
        "StrReplace" => Some(FileAction::Edit),
        "Delete" => Some(FileAction::Delete),
        _ => None,
    };
    if name == "Shell" {
        tool.command = first_str(input, &["command"]).map(|c| c.trim().to_string());
    } else if let (Some(action), Some(path)) = (action, first_str(input, &["path"])) {
        let path = path.trim().to_string();
        if name == "StrReplace" {
            let capped = |s: &str| {
                let mut s = s.to_string();
                cap_text(&mut s, MAX_EDIT_BYTES);
                s
            };
            if let Some(old) = first_str(input, &["old_string"]) {
                turn.edit = Some(Edit { path: path.clone(), old: capped(old), new: first_str(input, &["new_string"]).map(capped) });
            }
        }
        turn.files.push(FileTouch { path, action });
    }
    turn.tool = Some(tool);
    turn
}

/// The working directory a transcript's `projects/<encoded-cwd>/` names: the encoding
/// drops the leading separator, so `-` is restored and the path decoded against the
/// filesystem like Claude's; else the last two dash-separated parts.
fn transcript_project(path: &Path) -> Option<String> {
    let comps: Vec<&str> = path.iter().filter_map(|c| c.to_str()).collect();
    let at = comps.iter().rposition(|c| *c == "projects")?;
    let encoded = comps.get(at + 1).filter(|e| **e != "agent-transcripts")?;
    let root = if cfg!(windows) { PathBuf::from("") } else { PathBuf::from("/") };
    match decode_dash_path(&format!("-{encoded}"), &root) {
        Some(p) => Some(p.display().to_string()),
        None => Some(dash_fallback_name(encoded)).filter(|n| !n.is_empty()),
    }
}

/// Only CLI chats (`agent-transcripts`) reopen from a terminal; IDE composers are another
/// id namespace, reopened in the editor.
fn resume_cli_chats(session: &SessionMeta) -> Result<ResumeSpec, &'static str> {
    if !session.path.contains("agent-transcripts") {
        return Err("IDE composers reopen only in the editor");
    }
    Ok(ResumeSpec::in_dir(&["cursor-agent", "--resume", "{id}"]))
}

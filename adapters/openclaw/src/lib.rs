//! OpenClaw (`openclaw`): pi-lineage agents, one store per agent under
//! `${OPENCLAW_STATE_DIR:-~/.openclaw}/agents/<agentId>/`, in two generations, both read:
//!
//! * **2026.9 and later**: one SQLite database per agent,
//!   `agents/<agentId>/agent/openclaw-agent.sqlite` (WAL mode, `STRICT` tables). Table
//!   `transcript_events` holds one row per event (`session_id`, `seq` from 0, the header
//!   at 0), each exactly one line of the former JSONL file: `event_json` text, or
//!   `event_zstd` (the same JSON as one zstd frame). Read through
//!   [`deja_core::sqlite::Snapshot`]; the rows of a session, in `seq` order, go to
//!   [`pi_jsonl::parse_events`]. `trajectory_runtime_events`, the FTS copy, archives and
//!   memory tables duplicate the transcript (or hold the system prompt) and are never read.
//! * **Older releases**: pi-lineage JSONL `agents/<agentId>/sessions/<uuid>.jsonl` (with
//!   `sessions.json` beside it, the session-key map, not a transcript; compaction
//!   checkpoints `<id>.checkpoint.<uuid>.jsonl` skipped), read by [`pi_jsonl::parse`].
//!   When a JSONL file's session id is also in its agent's database, the database wins and
//!   the file is left out of discovery.
//!
//! Why the family reader: both generations are pi-lineage events (its module doc has the
//! record → role table). The dialect changes only the tool names (`exec`/`bash` shell,
//! `apply_patch` an edit) and the project fallback `openclaw-<agentId>` when a header has
//! no `cwd`; the header `cwd` (the agent's workspace) is the project otherwise. 2026.9's
//! user messages carry `content` as a plain string, which the family reads; `exec` results
//! give the exit code in `details.exitCode` (2026.9.6 writes `isError: false` on a failed
//! command, so the code is the only failure signal, and keeps it when it cuts large
//! `details` to `persistedDetailsTruncated`); `custom` (`model-snapshot`,
//! `openclaw.cache-ttl`, `openclaw:bootstrap-context:full` after each run), `model_change`
//! and `thinking_level_change` are skipped.
//!
//! **Session.** id = `transcript_events.session_id` (= header `id`) for database rows,
//! header `id` else the file stem for JSONL. A database session without a header `cwd`
//! gets `openclaw-<agentId>` from the path (`agents/<agentId>/agent/…`), else
//! `schema_meta.agent_id`.
//!
//! **Cursor.** For a database, the highest `seq` of every session
//! (`{"seq": {"<session_id>": N}}`); given it, only sessions whose highest `seq` differs
//! (grew, shrank after a rewrite, or are new) are re-read, each whole from its header.
//!
//! **Variables.** `OPENCLAW_STATE_DIR` is OpenClaw's state directory (default
//! `~/.openclaw`); `DEJA_OPENCLAW_ROOT` replaces its `agents` directory (the sessions
//! root: the directory holding one directory per agent, whose databases and `sessions/`
//! are read). OpenClaw injects nothing into the user text that deja knows of.

mod wiring;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use deja_core::discover::subdirs;
use deja_core::family::pi_jsonl::{self, DirProject, PiDialect, MAX_WALK_DEPTH};
use deja_core::launch::{source_file, Handoff, Launch, Resume, ResumeSpec};
use deja_core::model::SessionMeta;
use deja_core::sqlite;
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Session,
    SessionSink, SourceRef, StoreEnv, ToolMap,
};
use rusqlite::Connection;
use serde_json::Value;

const ID: &str = "openclaw";
/// The per-agent database of 2026.9, in `agents/<agentId>/agent/`.
const DB_NAME: &str = "openclaw-agent.sqlite";
/// The project prefix of a session without a `cwd`.
const AGENT_PREFIX: &str = "openclaw-";

/// OpenClaw's dialect of the pi lineage: its tool names and the agent-directory project.
pub const DIALECT: PiDialect = PiDialect {
    harness: ID,
    tools: ToolMap { shell: &["exec", "bash"], read: &["read"], edit: &["edit", "apply_patch"], write: &["write"] },
    dir_project: DirProject::AgentDir(AGENT_PREFIX),
    ..PiDialect::BASE
};

/// The OpenClaw adapter.
pub struct OpenclawFormat;

deja_core::inventory::submit!(deja_core::Registration(&OpenclawFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "OpenClaw",
    container: "SQLite (WAL, 2026.9+): one `openclaw-agent.sqlite` per agent, pi-lineage events as `transcript_events` rows \
        (some zstd BLOBs); older releases: pi-lineage JSONL, one file per session",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("${OPENCLAW_STATE_DIR:-~/.openclaw}/agents")],
        layout: Layout::Custom {
            shape: "<agentId>/agent/openclaw-agent.sqlite, <agentId>/sessions/<sessionId>.jsonl",
            walk: Some(walk_agents),
        },
    }]),
    needs: &[],
    format_summary: "OpenClaw 2026.9 keeps every session of an agent in one SQLite database, \
        `agents/<agentId>/agent/openclaw-agent.sqlite` (WAL mode): `transcript_events` has one row per pi-lineage event \
        (`session_id`, `seq`, the JSON in `event_json` or zstd-compressed in `event_zstd`), row 0 the `session` header \
        with the agent's workspace as `cwd`. Older releases wrote the same events as JSONL \
        `agents/<agentId>/sessions/<uuid>.jsonl` beside a `sessions.json` key map. Both are read by the pi-lineage \
        reader: user and assistant messages are speech, `toolCall` blocks are calls (`exec` is the shell) folded with \
        their `toolResult` (exit code from `details.exitCode`), `thinking` is reasoning. The database is read through a \
        private copy with its WAL, incrementally by each session's highest `seq`; the trajectory, FTS and archive tables \
        are not read.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "`mcp.servers.deja = {\"command\": \"<exe>\", \"args\": [\"mcp\"]}` in `<state>/openclaw.json` (JSON5: edited \
             textually, never re-dumped); checked with `openclaw mcp probe deja`",
        ),
        auto_recall: Capability::Planned(
            "a hook pack `<state>/hooks/deja-recall/` (`HOOK.md` + `handler.js` on `agent:bootstrap`, pushing the \
             `hook-session-start` digest onto `bootstrapFiles`) and a plugin `<state>/extensions/deja/` whose \
             `before_prompt_build` handler returns `{prependContext}` from `hook-prompt`; enabled under \
             `hooks.internal` and `plugins.entries` in `openclaw.json` (the plugin with \
             `hooks.allowConversationAccess`, without which 2026.9.6 never calls it)",
        ),
        skill: Capability::Planned(
            "the shared `~/.agents/skills/deja-history/SKILL.md` (`<state>/skills/` when OPENCLAW_STATE_DIR moves the state dir)",
        ),
        command: Capability::Planned("via the skill: OpenClaw offers `deja-history` as a command (\"Available as command: yes\")"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::ByKey {
            doc: "`openclaw chat --session <key>` (the key `sessions.json` or the database gives the session)",
            spec: ResumeSpec::anywhere(&["openclaw", "chat", "--session", "{id}"]),
            key: resume_key,
        },
        handoff: Handoff::Paste("OpenClaw has no start-with-prompt flag deja uses"),
    },
};

/// Every agent's database under the agents root, and its older JSONL transcripts but
/// for the sessions the database holds too (after an upgrade both generations may hold
/// a session: the database wins).
fn walk_agents(agents: &Path, env: &StoreEnv, found: &mut Discovery) {
    let layout = pi_jsonl::sessions_under(&DIALECT, agents, MAX_WALK_DEPTH, env.include_subagents());
    // Older transcripts are exactly `<agentId>/sessions/<file>`.
    let jsonl: Vec<SourceRef> = layout.into_iter().filter(|s| in_agent_sessions(agents, &s.path)).collect();
    let agent_dirs = subdirs(agents);
    let mut in_db: HashSet<(PathBuf, String)> = HashSet::new();
    for dir in &agent_dirs {
        let db = dir.join("agent").join(DB_NAME);
        if !std::fs::metadata(&db).is_ok_and(|m| m.is_file() && m.len() > 0) {
            continue;
        }
        let src = sqlite::database_source(&db);
        found.sources.push(src);
        // After an upgrade both generations may hold a session: the database wins. The
        // database is opened only when this agent also has JSONL files.
        let sessions = dir.join("sessions");
        if jsonl.iter().any(|s| s.path.parent() == Some(sessions.as_path())) {
            for id in db_session_ids(&db).iter() {
                in_db.insert((sessions.clone(), id.clone()));
            }
        }
    }
    for src in jsonl {
        let dir = src.path.parent().map(Path::to_path_buf).unwrap_or_default();
        let stem = src.path.file_name().and_then(|n| n.to_str()).map(pi_jsonl::file_stem_id).unwrap_or("").to_string();
        if !in_db.contains(&(dir, stem)) {
            found.sources.push(src);
        }
    }
}

impl HarnessFormat for OpenclawFormat {
    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::OpenclawWiring)
    }

    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        if src.path.file_name().is_some_and(|n| n == DB_NAME) {
            parse_db(src, opts, out)
        } else {
            pi_jsonl::parse(&DIALECT, src, opts, out)
        }
    }
}

/// `<agents>/<agentId>/sessions/<file>`: three components below the agents root.
fn in_agent_sessions(agents: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(agents) else { return false };
    let parts: Vec<_> = rel.components().collect();
    parts.len() == 3 && parts[1].as_os_str() == "sessions"
}

/// The session ids in a database's `transcript_events`; none when it cannot be read.
/// Read once per change of the database (discovery asks on every refresh).
fn db_session_ids(db: &Path) -> std::sync::Arc<Vec<String>> {
    sqlite::memoized(db, "SELECT DISTINCT session_id FROM transcript_events", |conn| {
        let mut stmt = conn.prepare("SELECT DISTINCT session_id FROM transcript_events")?;
        let rows = stmt.query_map([], |r| Ok(sqlite::value_text(r.get_ref(0)?).ok().flatten()))?;
        Ok(rows.filter_map(|r| r.ok().flatten()).collect())
    })
    .unwrap_or_default()
}

fn parse_db(src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let db = src.path.as_path();
    let (store, mut stats) = sqlite::Db::open(src)?;
    let conn = store.conn();
    let sql_err = |e: rusqlite::Error| store.err(e);
    let cols = store.columns("transcript_events", &["session_id", "seq", "event_json"], "an OpenClaw agent store")?;
    let zstd_col = if cols.has("event_zstd") { "event_zstd" } else { "NULL" };

    // Every session's highest seq: the cursor, and what changed since the last one.
    let mut current: BTreeMap<String, i64> = BTreeMap::new();
    {
        let mut stmt = conn.prepare("SELECT session_id, max(seq) FROM transcript_events GROUP BY session_id").map_err(sql_err)?;
        let mut rows = stmt.query([]).map_err(sql_err)?;
        while let Some(row) = rows.next().map_err(sql_err)? {
            // An empty session_id names no session.
            let id = sqlite::value_text(row.get_ref(0).map_err(sql_err)?).ok().flatten().filter(|s| !s.trim().is_empty());
            let max = sqlite::value_i64(row.get_ref(1).map_err(sql_err)?);
            if let (Some(id), Some(max)) = (id, max) {
                current.insert(id, max);
            }
        }
    }
    let previous = stats.previous_cursor(src, parse_cursor);
    stats.cursor = Some(serde_json::json!({ "seq": current }).to_string());
    let wanted: Vec<&String> =
        current.iter().filter(|(id, max)| previous.as_ref().is_none_or(|p| p.get(*id) != Some(max))).map(|(id, _)| id).collect();
    if wanted.is_empty() {
        return Ok(stats);
    }

    let agent = agent_from_path(db).or_else(|| schema_agent(conn));
    let query = format!("SELECT seq, event_json, {zstd_col} FROM transcript_events WHERE session_id = ?1 ORDER BY seq");
    let mut stmt = conn.prepare(&query).map_err(sql_err)?;
    for session_id in wanted {
        let mut events = Vec::new();
        let mut rows = stmt.query([session_id]).map_err(sql_err)?;
        while let Some(row) = rows.next().map_err(sql_err)? {
            let seq = row.get_ref(0).ok().and_then(sqlite::value_i64).unwrap_or(-1);
            // Exactly one of the two columns is set; text first, then the zstd frame.
            let event = match sqlite::column_json(row, 1) {
                Ok(Some(v)) => Ok(Some(v)),
                Ok(None) => sqlite::column_json(row, 2),
                Err(e) => Err(e),
            };
            match event {
                Ok(Some(v)) => events.push(v),
                Ok(None) => {
                    stats.records += 1;
                    stats.skip(|| format!("{}: session {session_id} seq {seq}: an empty event", db.display()));
                }
                Err(e) => {
                    stats.records += 1;
                    stats.skip(|| format!("{}: session {session_id} seq {seq}: {e}", db.display()));
                }
            }
        }
        let mut sessions: Vec<Session> = Vec::new();
        let sub = pi_jsonl::parse_events(&DIALECT, src, opts, events, &mut sessions);
        stats.records += sub.records;
        stats.skipped += sub.skipped;
        stats.problems.extend(sub.problems);
        for mut s in sessions {
            // The row key is the id (= the header's); the database path names no session.
            s.id = session_id.clone();
            if s.project.is_none() {
                s.project = agent.as_ref().map(|a| format!("{AGENT_PREFIX}{a}"));
            }
            out.session(s);
        }
    }
    Ok(stats)
}

fn parse_cursor(text: &str) -> Option<BTreeMap<String, i64>> {
    let v: Value = serde_json::from_str(text).ok()?;
    let map = v.get("seq")?.as_object()?;
    Some(map.iter().filter_map(|(k, n)| Some((k.clone(), n.as_i64()?))).collect())
}

/// `<agents>/<agentId>/agent/openclaw-agent.sqlite` → `agentId`.
fn agent_from_path(db: &Path) -> Option<String> {
    let agent_dir = db.parent()?;
    if agent_dir.file_name()? != "agent" {
        return None;
    }
    agent_dir.parent()?.file_name()?.to_str().map(str::to_string)
}

/// `schema_meta.agent_id`, when the store has it.
fn schema_agent(conn: &Connection) -> Option<String> {
    let cols = sqlite::table_columns(conn, "schema_meta").ok()?;
    if !cols.iter().any(|c| c == "agent_id") {
        return None;
    }
    conn.query_row("SELECT agent_id FROM schema_meta WHERE agent_id IS NOT NULL LIMIT 1", [], |r| r.get::<_, String>(0))
        .ok()
        .filter(|a| !a.trim().is_empty())
}

/// The key OpenClaw resumes by: the `sessions.json` entry beside the transcript whose
/// `sessionId` is this session, or the database's `session_nodes` row. Keys hold colons,
/// so anything outside `[A-Za-z0-9][A-Za-z0-9._:-]*` is refused.
fn resume_key(session: &SessionMeta) -> Result<String, &'static str> {
    let path = std::path::Path::new(source_file(session));
    let key = if path.extension().is_some_and(|e| e == "sqlite") {
        key_in_database(path, &session.id)
    } else {
        path.parent().and_then(|dir| key_in_sessions_json(&dir.join("sessions.json"), &session.id))
    };
    let key = key.ok_or("no session key names this session, so it is not resumable")?;
    let valid = key.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'));
    if valid {
        Ok(key)
    } else {
        Err("the session key holds characters OpenClaw does not use")
    }
}

fn key_in_sessions_json(file: &std::path::Path, id: &str) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    let map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text).ok()?;
    map.iter().find(|(_, v)| v.get("sessionId").and_then(|s| s.as_str()) == Some(id)).map(|(k, _)| k.clone())
}

/// The session key `session_nodes` gives the session `id`, read through core's snapshot
/// of the database (opening the live store, even read-only, writes its `-shm`), once per
/// change of the database for every session asked about.
fn key_in_database(db: &std::path::Path, id: &str) -> Option<String> {
    const KEYS: &str = "SELECT current_session_id, session_key FROM session_nodes";
    let keys = sqlite::memoized(db, KEYS, |conn| {
        let mut stmt = conn.prepare(KEYS)?;
        let rows = stmt
            .query_map([], |r| Ok((sqlite::value_text(r.get_ref(0)?).ok().flatten(), sqlite::value_text(r.get_ref(1)?).ok().flatten())))?;
        Ok(rows
            .filter_map(|r| match r.ok()? {
                (Some(id), Some(key)) => Some((id, key)),
                _ => None,
            })
            .collect::<std::collections::HashMap<String, String>>())
    })
    .ok()?;
    keys.get(id).cloned()
}

//! ZCode (`zcode`, Z.ai's agent: desktop app and the `zcode` terminal client) keeps three
//! stores under `~/.zcode/`, all read by this one adapter under the `zcode` id:
//!
//! 1. **CLI database** `~/.zcode/cli/db/db.sqlite` (+ `-wal`): opencode's schema
//!    (`session` / `message` / `part`, JSON `data` columns) with Claude Code's tool names.
//!    Read with the opencode-schema family, `deja_core::family::opencode` (its module doc has
//!    the record → role table), in the ZCode dialect: [`CLAUDE_NAMED_TOOLS`] (`Bash`,
//!    `Read {file_path}`, `Edit {file_path, old_string, new_string}`, `Write {file_path}`),
//!    and the exit code of a failed `Bash` run taken from the leading `Exit code N` line of
//!    its output (the part has no `metadata.exit`), the line cut. The family also reads the
//!    ZCode-only parts of the schema: `session.task_type` (`fork` → kind `fork`,
//!    `subagent_child` → kind `subagent`) and the compaction request, a user message with
//!    `semantics.kind: "compact_summary"` whose text part is the `Summary` (the turns before
//!    it stay). One source for the database, `SourceRef::file(db).with_part(<db>-wal)`,
//!    with the family's row cursor (only changed sessions re-read).
//! 2. **JSONL transcripts** `~/.zcode/projects/<encoded-cwd>/<session>.jsonl`: Command
//!    Code's v2 shape, one flat message per line. Read by this adapter (the lines are not a
//!    family's records: no envelope, no call ids), append-only:
//!
//!    | line | Turn | rule |
//!    | --- | --- | --- |
//!    | `role: "user"` | `User` | `content` a string, or the `text` of its blocks |
//!    | `role: "assistant"` | `Assistant` | the API `usage` block some lines carry is ignored |
//!    | `role` `system` / `developer` | skip | harness-authored |
//!    | any other `role` (`tool`…) | `ToolOutput` | as Command Code v2: where a command's error text lives |
//!    | no `role`, malformed or torn lines | skip | the latter counted in the parse stats |
//!
//!    Session id = the file stem (the lines' `sessionId` is the same id; it names the
//!    session only when the stem is empty); project = the encoded directory name decoded
//!    on disk (Claude's dash encoding), else its last two parts; time = each `timestamp`.
//! 3. **Legacy snapshots** `~/.zcode/v2/sessions/<workspaceHash>/<taskId>.json` (the
//!    desktop app's older generation; `*.deleted.json` are deleted tasks and not read):
//!
//!    | field | Turn / session | rule |
//!    | --- | --- | --- |
//!    | `meta.acpSessionId`, else `meta.taskId`, else the stem | session id | |
//!    | `meta.workspacePath` / `meta.title` | project / title | |
//!    | `meta.createdAt` / `meta.updatedAt` (ms) | started / updated | |
//!    | `messages[]` `role: "user"` / `"assistant"`, `content` | `User` / `Assistant` | only their text; `timestamp` (ms) |
//!    | other roles | skip | the page keeps only user/assistant text |
//!
//!    `/restore-legacy-sessions` copies a snapshot into the CLI database under its
//!    `acpSessionId`; a snapshot whose id is already there is **read from the database
//!    instead** and emits nothing (a note in the parse stats says so). For that check each
//!    legacy source lists the database as a part (so it is re-checked when the database
//!    changes); the ids are read once per database state (a cached snapshot of `session.id`),
//!    not once per snapshot file. The same session key also makes the index replace a
//!    legacy copy indexed before the restore when the database emits it.
//!
//! **Variables.** `DEJA_ZCODE_ROOT` names the JSONL projects root (`~/.zcode/projects`);
//! `DEJA_ZCODE_DB` the database file (a directory: the `db.sqlite` in it);
//! `DEJA_ZCODE_LEGACY_ROOT` the legacy sessions root (`~/.zcode/v2/sessions`). Each
//! replaces only its own store's default place. ZCode itself has no relocation variable
//! in the material. `DEJA_INCLUDE_SUBAGENTS=0` leaves database sessions with a
//! `parent_id` out (the switch travels in the database source's key,
//! `family::opencode::WITHOUT_SUBAGENTS_KEY`).
//!
//! **Injected text.** None is documented for ZCode; the harness's own injections in the
//! database are `synthetic` text parts, which the family skips.

mod wiring;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use deja_core::discover::find_files;
use deja_core::family::opencode::{self, OpencodeDialect, CLAUDE_NAMED_TOOLS};
use deja_core::launch::{source_file, Handoff, Launch, Resume, ResumeSpec};
use deja_core::model::SessionMeta;
use deja_core::project::{dash_fallback_name, decode_dash_path};
use deja_core::read::{for_each_source_line, parse_json_document, read_source, str_at};
use deja_core::sqlite::{self, Snapshot};
use deja_core::store::{Files, Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Role,
    SessionBuilder, SessionSink, SourceRef, StoreEnv, Timestamp, Turn,
};
use serde_json::Value;

const ID: &str = "zcode";
/// The CLI database's file name.
pub const DB_NAME: &str = "db.sqlite";
/// `<encoded-cwd>/<session>.jsonl`: one directory down, no deeper (the page shows no
/// nested transcripts).
const JSONL_DEPTH: usize = 1;
/// `<workspaceHash>/<taskId>.json`: one directory down.
const LEGACY_DEPTH: usize = 1;

/// The CLI database: opencode's schema, Claude Code's tool names, exit codes in the output.
pub const DIALECT: OpencodeDialect = OpencodeDialect { tools: CLAUDE_NAMED_TOOLS, exit_in_output: true, ..OpencodeDialect::new(ID) };

/// The ZCode adapter.
pub struct ZCodeFormat;

deja_core::inventory::submit!(deja_core::Registration(&ZCodeFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "ZCode",
    container: "SQLite (WAL) in opencode's schema for the CLI; flat JSONL transcripts; legacy JSON snapshots",
    store: StoreSpec::new(&[
        Store {
            name: "",
            roots: &[Root::any("~/.zcode/projects")],
            layout: Layout::Files(Files::new("**/*.jsonl").depth(JSONL_DEPTH).append_only()),
        },
        // The CLI's opencode-schema database.
        Store { name: "db", roots: &[Root::any("~/.zcode/cli/db")], layout: Layout::Database(DB_NAME) },
        // The v2 desktop's task snapshots, which the database may have taken in.
        Store {
            name: "legacy",
            roots: &[Root::any("~/.zcode/v2/sessions")],
            layout: Layout::Custom { shape: "<workspaceHash>/<taskId>.json", walk: None },
        },
    ])
    .deja_vars(&["DEJA_INCLUDE_SUBAGENTS"]),
    needs: &[],
    format_summary: "ZCode (Z.ai) keeps three stores under `~/.zcode/`. The CLI's `cli/db/db.sqlite` is opencode's SQLite \
        schema in WAL mode (`session` with `directory` and `task_type`, `message` and `part` with JSON `data`) but its \
        tool parts use Claude Code's names (`Bash`, `Read`, `Edit`, `Write` with `file_path`, `old_string`, \
        `new_string`) and a failed `Bash` run's output opens with `Exit code N`; a `/compact` writes a user message \
        marked `semantics.kind: compact_summary`. `projects/<encoded-cwd>/<session>.jsonl` transcripts are flat \
        Command Code v2 lines (`role`, `content`, `timestamp`, `sessionId`). Legacy desktop snapshots \
        `v2/sessions/<workspaceHash>/<taskId>.json` hold `meta` (`acpSessionId`, `workspacePath`, `title`, ms times) and \
        `messages[]`; `*.deleted.json` are skipped, and a snapshot already restored into the CLI database is read \
        from the database.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "`mcp.servers` (nested) in `~/.zcode/cli/setting.json`, which the runtime creates on first launch (migrating \
             `config.json` once): start ZCode once before installing",
        ),
        // The page names `hooks.events` in `~/.zcode/cli/setting.json`, its events and matchers,
        // `hooks.enabled: true` and a `--strict` reply ("one unknown key discards the response"),
        // but neither the shape of an entry under `hooks.events` nor which keys the strict schema
        // accepts; ZCode is on neither npm nor PyPI, so neither can be checked here.
        auto_recall: Capability::Unknown,
        skill: Capability::Planned("`~/.agents/skills/deja-history/SKILL.md` (ZCode scans `~/.zcode/skills`, then `~/.agents/skills`)"),
        command: Capability::Planned("`~/.zcode/commands/deja.md` (`$ARGUMENTS` expanded)"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::PerSession {
            doc: "CLI database sessions: `cd <dir> && zcode --resume <sess_id>`; JSONL transcripts have none",
            pick: resume_db_sessions,
        },
        handoff: Handoff::Paste("the page says exec but names no start-with-prompt argument"),
    },
};

impl HarnessFormat for ZCodeFormat {
    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::ZcodeWiring)
    }

    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    /// The spec's stores; the database keyed when sub-agent sessions are left out, and
    /// a v2 snapshot taking the database as a part, since it decides whether the
    /// snapshot was restored into it.
    fn discover(&self, env: &StoreEnv) -> Discovery {
        let spec = &INFO.store;
        let mut found = opencode::discover_databases(ID, spec, env);
        let db = found.sources.first().map(|s| s.path.clone());
        if let Some(projects) = spec.store("") {
            deja_core::store::discover_store(ID, spec, projects, env, &mut found);
        }
        for legacy in spec.roots_of(ID, "legacy", env) {
            if found.looked_at(&legacy) {
                let keep = |name: &str| name.ends_with(".json") && !name.ends_with(".deleted.json");
                for p in find_files(&legacy, LEGACY_DEPTH, &keep) {
                    let src = SourceRef::file(p);
                    found.sources.push(match &db {
                        Some(db) => src.with_part(db),
                        None => src,
                    });
                }
            }
        }
        Discovery::sort_sources(&mut found.sources);
        found
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let name = src.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with(".jsonl") {
            parse_jsonl(src, out)
        } else if name.ends_with(".json") {
            parse_legacy(src, out)
        } else {
            opencode::parse_discovered(&DIALECT, src, opts, out)
        }
    }
}

/// A non-empty string field.
fn text<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// A string, or the `text` of content blocks joined with newlines.
fn content_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks.iter().filter_map(|b| text(b, "text")).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// A JSONL transcript: flat `{role, content, timestamp, sessionId}` lines.
fn parse_jsonl(src: &SourceRef, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let mut stats = ParseStats::default();
    let stem = src.path.file_stem().and_then(|s| s.to_str()).unwrap_or("").to_string();
    // A resumed read keeps the id the first read gave.
    let id = src.resume.as_ref().map_or(stem, |r| r.session_id.clone());
    let mut b = SessionBuilder::new(ID, id, src.clone());
    let mut line_id: Option<String> = None;
    for_each_source_line(src, &mut stats, &[], |_offset, v| {
        if !v.is_object() {
            return;
        }
        if line_id.is_none() {
            line_id = text(&v, "sessionId").map(str::to_string);
        }
        let time = v.get("timestamp").and_then(Timestamp::from_json);
        let role = match text(&v, "role") {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            Some("system" | "developer") => return b.touch(time),
            Some(_) => Role::ToolOutput,
            None => return,
        };
        b.push(Turn::new(role, content_text(v.get("content"))).at(time));
    })?;
    if b.session().id.is_empty() {
        if let Some(id) = line_id {
            b.set_id(id);
        }
    }
    let dir = src.path.parent().and_then(Path::file_name).and_then(|n| n.to_str());
    b.session_mut().project = dir.map(|e| match decode_dash_path(e, Path::new("/")) {
        Some(p) => p.display().to_string(),
        None => dash_fallback_name(e),
    });
    if let Some(s) = b.finish() {
        out.session(s);
    }
    Ok(stats)
}

/// A legacy snapshot: `{"meta": {…}, "messages": [{role, content, timestamp}]}`.
fn parse_legacy(src: &SourceRef, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let mut stats = ParseStats::default();
    let bytes = read_source(&src.path, &mut stats)?.bytes;
    let doc = parse_json_document(&bytes, &src.path)?;
    stats.records = 1;
    let empty = Value::Null;
    let meta = doc.get("meta").filter(|m| m.is_object()).unwrap_or(&empty);
    let stem = src.path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let id = text(meta, "acpSessionId").or_else(|| text(meta, "taskId")).unwrap_or(stem).to_string();
    if let Some(db) = src.parts.first() {
        if db_session_ids(db).contains(&id) {
            stats.problem(format!("{}: session {id} was restored into the CLI database; read from there", src.path.display()));
            return Ok(stats);
        }
    }
    let mut b = SessionBuilder::new(ID, id, src.clone());
    {
        let session = b.session_mut();
        session.project = text(meta, "workspacePath").map(str::to_string);
        session.title = text(meta, "title").map(str::to_string);
    }
    b.touch(meta.get("createdAt").and_then(Timestamp::from_json));
    b.touch(meta.get("updatedAt").and_then(Timestamp::from_json));
    for m in doc.get("messages").and_then(Value::as_array).into_iter().flatten() {
        let role = match str_at(m, &["role"]) {
            Some("user") => Role::User,
            Some("assistant") => Role::Assistant,
            _ => continue,
        };
        let time = m.get("timestamp").and_then(Timestamp::from_json);
        b.push(Turn::new(role, content_text(m.get("content"))).at(time));
    }
    if let Some(s) = b.finish() {
        out.session(s);
    }
    Ok(stats)
}

/// What identifies one state of a database on disk: size and mtime of the file and its WAL.
type DbState = [Option<(u64, SystemTime)>; 2];

fn db_state(db: &Path) -> DbState {
    let of = |p: &Path| std::fs::metadata(p).ok().and_then(|m| Some((m.len(), m.modified().ok()?)));
    [of(db), of(&sqlite::wal_path(db))]
}

/// The session ids of the CLI database at `db`, read once per state of its files (every
/// legacy snapshot asks; one private copy of the database answers them all). A database
/// that cannot be read has none: its snapshots are read from their files.
fn db_session_ids(db: &Path) -> HashSet<String> {
    type Cache = Mutex<HashMap<PathBuf, (DbState, HashSet<String>)>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let state = db_state(db);
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some((cached, ids)) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(db) {
        if *cached == state {
            return ids.clone();
        }
    }
    let ids = read_session_ids(db);
    cache.lock().unwrap_or_else(|e| e.into_inner()).insert(db.to_path_buf(), (state, ids.clone()));
    ids
}

fn read_session_ids(db: &Path) -> HashSet<String> {
    let Ok(snapshot) = Snapshot::open(db) else { return HashSet::new() };
    let Ok(mut stmt) = snapshot.conn().prepare("SELECT id FROM session") else { return HashSet::new() };
    let Ok(mut rows) = stmt.query([]) else { return HashSet::new() };
    let mut ids = HashSet::new();
    while let Ok(Some(row)) = rows.next() {
        if let Some(id) = row.get_ref(0).ok().and_then(sqlite::key_text) {
            ids.insert(id);
        }
    }
    ids
}

/// Only the CLI database's sessions reopen by id; legacy snapshots need
/// `/restore-legacy-sessions` in zcode first.
fn resume_db_sessions(session: &SessionMeta) -> Result<ResumeSpec, &'static str> {
    if !source_file(session).ends_with(".sqlite") {
        return Err("JSONL transcripts and legacy snapshots have no resume (run /restore-legacy-sessions in zcode first)");
    }
    Ok(ResumeSpec::in_dir(&["zcode", "--resume", "{id}"]))
}

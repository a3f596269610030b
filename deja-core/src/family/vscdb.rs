//! VS Code-style `state.vscdb` key-value databases: the editor state store that VS Code
//! forks (Windsurf, Cursor) keep in `<User>/globalStorage/state.vscdb` and in every
//! `<User>/workspaceStorage/<hash>/state.vscdb`, some of whose values are chat history.
//! Not one chat format but the chores each such reader shares:
//!
//! * finding the databases under a `User` folder ([`state_dbs`]) and making a source of
//!   each ([`db_source`]: the `-wal` and the workspace's `workspace.json` are parts of its
//!   fingerprint, since the project comes from the latter);
//! * the workspace folder a per-workspace database belongs to ([`workspace_folder`]:
//!   `workspace.json` `folder` URI, or the directory of a `.code-workspace` file);
//! * reading values by exact key ([`values_for_keys`], the `ItemTable(key, value)` table)
//!   and by key prefix through the key index ([`key_range`], [`for_each_prefixed`], for
//!   `cursorDiskKV`'s `composerData:<id>` / `bubbleId:<id>:<bubble>` keys), every value
//!   through [`crate::sqlite::decode_blob`] (TEXT or BLOB), never loading a table whole;
//! * the two chat shapes a value may hold: a **tab list** `{"tabs": [{tabId, chatTitle,
//!   bubbles: [{type, text, rawText, initText}]}]}` ([`read_tab_chats`]), and a **VS Code
//!   chat-session object** (`sessionId`, `requests[]`), read exactly as Copilot Chat's
//!   session JSON by [`crate::family::vscode_chat`] ([`read_chat_session`]).
//!
//! Tab list → turns:
//!
//! | bubble | Turn | rule |
//! | --- | --- | --- |
//! | `type` `2`, `"ai"`, `"assistant"` (number or string) | `Assistant` | text = the first non-empty of `text`, `rawText`, `initText`; consecutive assistant bubbles join into one reply |
//! | any other `type` | `User` | same text rule |
//! | tab | session | id `tabId` (else `<fallback>-<index>`), title `chatTitle`; no times in the value: every turn gets the caller's time (the database mtime) |
//!
//! The databases are always read through [`crate::sqlite::Snapshot`] by the caller, which
//! passes the connection in; nothing here opens a harness file as a database.

use std::path::{Path, PathBuf};

use rusqlite::Connection;
use serde_json::Value;

use crate::builder::SessionBuilder;
use crate::family::vscode_chat::{self, uri_path, VscodeChatDialect};
use crate::format::{ParseOptions, ParseStats, SessionSink};
use crate::model::{Role, Session, SourceRef, Timestamp, Turn};
use crate::read::parse_json_document;
use crate::sqlite;

/// The database file name in `globalStorage` and each `workspaceStorage/<hash>`.
pub const STATE_DB: &str = "state.vscdb";
/// VS Code's own key-value table.
pub const ITEM_TABLE: &str = "ItemTable";
/// The key-value table Cursor adds beside [`ITEM_TABLE`].
pub const CURSOR_DISK_KV: &str = "cursorDiskKV";

/// Which databases of a `User` folder [`state_dbs`] returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scopes {
    pub global: bool,
    pub workspaces: bool,
}

/// The non-empty regular `state.vscdb` files of a `User` folder: `globalStorage/` (when
/// `scopes.global`) and each `workspaceStorage/<hash>/` (when `scopes.workspaces`), sorted.
pub fn state_dbs(user_dir: &Path, scopes: Scopes) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let usable = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file() && m.len() > 0);
    if scopes.global {
        let db = user_dir.join("globalStorage").join(STATE_DB);
        if usable(&db) {
            out.push(db);
        }
    }
    if scopes.workspaces {
        let workspaces = crate::discover::subdirs(&user_dir.join("workspaceStorage"));
        out.extend(workspaces.into_iter().map(|w| w.join(STATE_DB)).filter(|p| usable(p)));
    }
    out
}

/// A source for one database: its `-wal`, and the `workspace.json` beside it when there
/// is one (the project is read from it), are parts of its fingerprint.
pub fn db_source(db: &Path) -> SourceRef {
    let mut src = SourceRef::file(db);
    for part in sqlite::parts(db) {
        src = src.with_part(part);
    }
    if let Some(ws) = db.parent().map(|d| d.join("workspace.json")).filter(|p| p.is_file()) {
        src = src.with_part(ws);
    }
    src
}

/// The folder a workspace storage directory belongs to: `workspace.json`'s `folder` URI,
/// else the directory holding its `workspace` (`.code-workspace`) file.
pub fn workspace_folder(storage_dir: &Path) -> Option<String> {
    let ws = storage_dir.join("workspace.json");
    let doc = parse_json_document(&std::fs::read(&ws).ok()?, &ws).ok()?;
    if let Some(folder) = doc.get("folder").and_then(uri_path) {
        return Some(folder.trim_end_matches('/').to_string()).filter(|f| !f.is_empty()).or(Some("/".into()));
    }
    let file = doc.get("workspace").and_then(uri_path)?;
    let dir = file.rsplit_once('/').map_or(file.as_str(), |(d, _)| d);
    Some(if dir.is_empty() { "/".to_string() } else { dir.to_string() })
}

/// True when `table` exists in the database.
pub fn has_table(conn: &Connection, table: &str) -> bool {
    sqlite::table_columns(conn, table).is_ok_and(|c| c.iter().any(|n| n == "key") && c.iter().any(|n| n == "value"))
}

/// A decoded value: JSON, or why it is not (a `null` value is `Ok(None)`).
pub type KvValue = Result<Option<Value>, String>;

/// The values of `table` stored under exactly these keys, in the order of `keys`
/// (missing keys are left out).
pub fn values_for_keys(conn: &Connection, table: &str, keys: &[&str]) -> rusqlite::Result<Vec<(String, KvValue)>> {
    let mut stmt = conn.prepare(&format!("SELECT value FROM \"{table}\" WHERE key = ?1"))?;
    let mut out = Vec::new();
    for key in keys {
        let mut rows = stmt.query([key])?;
        while let Some(row) = rows.next()? {
            out.push((key.to_string(), decode(row, 0)));
        }
    }
    Ok(out)
}

fn decode(row: &rusqlite::Row<'_>, idx: usize) -> KvValue {
    match sqlite::column_json(row, idx) {
        Ok(Some(Value::Null)) | Ok(None) => Ok(None),
        Ok(v) => Ok(v),
        Err(e) => Err(e.to_string()),
    }
}

/// `(prefix, upper)` such that `key >= prefix AND key < upper` selects exactly the keys
/// starting with `prefix` through the key index (`composerData:` → `composerData;`).
/// An empty prefix, or one ending in U+10FFFF, has no such bound: `upper` is `None`.
pub fn key_range(prefix: &str) -> (String, Option<String>) {
    let mut chars: Vec<char> = prefix.chars().collect();
    let upper = chars.pop().and_then(|last| {
        let next = char::from_u32(last as u32 + 1).or_else(|| char::from_u32(0xE000).filter(|_| (last as u32) < 0xE000))?;
        chars.push(next);
        Some(chars.into_iter().collect())
    });
    (prefix.to_string(), upper)
}

/// Calls `f(key, value)` for every key of `table` starting with `prefix`, in key order,
/// selecting by [`key_range`] so SQLite walks the key index rather than every value;
/// `value IS NULL` rows are skipped. `projection` is the SQL expression read as the value
/// (`value`, or a `json_extract(value, …)` of the few fields wanted); a row whose
/// expression fails to evaluate (malformed JSON under `json_extract`) fails the query, so
/// callers projecting with `json_extract` should guard with `json_valid(value)`, which
/// `guard_json` adds.
pub fn for_each_prefixed(
    conn: &Connection,
    table: &str,
    prefix: &str,
    projection: &str,
    guard_json: bool,
    mut f: impl FnMut(&str, &rusqlite::Row<'_>),
) -> rusqlite::Result<()> {
    let (low, high) = key_range(prefix);
    let guard = if guard_json { " AND json_valid(value)" } else { "" };
    let sql = match high {
        Some(_) => {
            format!("SELECT key, {projection} FROM \"{table}\" WHERE key >= ?1 AND key < ?2 AND value IS NOT NULL{guard} ORDER BY key")
        }
        None => format!("SELECT key, {projection} FROM \"{table}\" WHERE key >= ?1 AND value IS NOT NULL{guard} ORDER BY key"),
    };
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = match &high {
        Some(h) => stmt.query([low.as_str(), h.as_str()])?,
        None => stmt.query([low.as_str()])?,
    };
    while let Some(row) = rows.next()? {
        let Ok(Some(key)) = sqlite::column_text(row, 0) else { continue };
        if key.starts_with(prefix) {
            f(&key, row);
        }
    }
    Ok(())
}

/// Whether a bubble `type` (number or string) is the model's.
fn is_assistant_bubble(t: Option<&Value>) -> bool {
    match t {
        Some(Value::Number(n)) => n.as_i64() == Some(2),
        Some(Value::String(s)) => matches!(s.as_str(), "2" | "ai" | "assistant"),
        _ => false,
    }
}

/// The first non-empty of a bubble's `text`, `rawText`, `initText`.
fn bubble_text(b: &Value) -> &str {
    ["text", "rawText", "initText"].iter().find_map(|k| b.get(*k).and_then(Value::as_str).filter(|t| !t.trim().is_empty())).unwrap_or("")
}

/// Where a chat value was read from: the database's source, the id for a chat that has
/// none (the workspace hash), and the workspace's project.
#[derive(Debug, Clone, Copy)]
pub struct ValueOrigin<'a> {
    pub src: &'a SourceRef,
    pub fallback_id: &'a str,
    pub project: Option<&'a str>,
}

/// Reads a tab-list chat value (see the module doc) into one session per tab with
/// turns. `fallback_id` names tabs without a `tabId` (`<fallback_id>-<index>`); every
/// turn gets `time`. Returns how many tabs were read.
pub fn read_tab_chats(harness: &str, origin: ValueOrigin<'_>, value: &Value, time: Option<Timestamp>, out: &mut dyn SessionSink) -> usize {
    let ValueOrigin { src, fallback_id, project } = origin;
    let tabs = value.get("tabs").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    for (i, tab) in tabs.iter().enumerate() {
        let id =
            tab.get("tabId").and_then(Value::as_str).filter(|s| !s.is_empty()).map_or_else(|| format!("{fallback_id}-{i}"), str::to_string);
        let mut b = SessionBuilder::new(harness, id, src.clone());
        b.session_mut().title = tab.get("chatTitle").and_then(Value::as_str).map(str::trim).filter(|t| !t.is_empty()).map(str::to_string);
        b.session_mut().project = project.map(str::to_string);
        let mut last_assistant = false;
        for bubble in tab.get("bubbles").and_then(Value::as_array).into_iter().flatten() {
            let text = bubble_text(bubble).trim();
            if text.is_empty() {
                continue;
            }
            let assistant = is_assistant_bubble(bubble.get("type"));
            if assistant && last_assistant {
                if let Some(prev) = b.last_turn_mut() {
                    prev.text.push_str("\n\n");
                    prev.text.push_str(text);
                    continue;
                }
            }
            let role = if assistant { Role::Assistant } else { Role::User };
            if b.push(Turn::new(role, text).at(time)).is_some() {
                last_assistant = assistant;
            }
        }
        if let Some(s) = b.finish() {
            out.session(s);
        }
    }
    tabs.len()
}

/// Reads a VS Code chat-session object held in a database value exactly as
/// [`vscode_chat`] reads a `chatSessions/<id>.json` file: the value is written to a
/// private temporary file named `<fallback_id>.json` (the session id when the object has
/// no `sessionId`) and parsed there; each session then names `src` as its source and
/// takes `project` when the object gave none. Returns the sessions emitted.
pub fn read_chat_session(
    d: &VscodeChatDialect,
    origin: ValueOrigin<'_>,
    value: &Value,
    opts: &ParseOptions,
    stats: &mut ParseStats,
    out: &mut dyn SessionSink,
) -> usize {
    let ValueOrigin { src, fallback_id, project } = origin;
    let safe: String =
        fallback_id.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' }).collect();
    let written = tempfile::Builder::new().prefix("deja-vscdb-").tempdir().and_then(|dir| {
        let file = dir.path().join(format!("{}.json", if safe.is_empty() { "chat" } else { &safe }));
        std::fs::write(&file, serde_json::to_vec(value).unwrap_or_default())?;
        Ok((dir, file))
    });
    let (_dir, file) = match written {
        Ok(w) => w,
        Err(e) => {
            stats.problem(format!("{}: a chat value could not be staged for reading: {e}", src.path.display()));
            return 0;
        }
    };
    let mut sessions: Vec<Session> = Vec::new();
    if let Err(e) = vscode_chat::parse(d, &SourceRef::file(&file), opts, &mut sessions) {
        stats.skip(|| format!("{}: a chat-session value: {e}", src.path.display()));
        return 0;
    }
    let n = sessions.len();
    for mut s in sessions {
        s.source = src.clone();
        if s.project.is_none() {
            s.project = project.map(str::to_string);
        }
        out.session(s);
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::work::ToolMap;
    use serde_json::json;

    /// A database written from SQL (the harness's side; the reader's side is a plain
    /// connection here, as a `Snapshot` hands one over).
    fn sqlite_fixture(path: &Path, sql: &str) -> rusqlite::Result<Connection> {
        let conn = Connection::open(path)?;
        conn.execute_batch(sql)?;
        Ok(conn)
    }

    const DIALECT: VscodeChatDialect = VscodeChatDialect {
        harness: "vscdb-test",
        tools: ToolMap { shell: &["run_in_terminal"], read: &[], edit: &[], write: &[] },
        injected: &crate::text::InjectedText::NONE,
        transcripts: false,
    };

    #[test]
    fn key_ranges_bound_exactly_the_prefix() {
        assert_eq!(key_range("composerData:"), ("composerData:".into(), Some("composerData;".into())));
        assert_eq!(key_range("bubbleId:c-1:"), ("bubbleId:c-1:".into(), Some("bubbleId:c-1;".into())));
        assert_eq!(key_range(""), (String::new(), None));
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join(STATE_DB);
        let conn = sqlite_fixture(
            &db,
            "CREATE TABLE cursorDiskKV(key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
             INSERT INTO cursorDiskKV VALUES ('composerData:a', '{\"n\":1}'), ('composerData:b', 'not json'), ('composerData;x', '{}'),
               ('composerDatax', '{}'), ('composerData:c', NULL), ('bubbleId:a:1', '{}');",
        )
        .unwrap();
        let mut keys = Vec::new();
        for_each_prefixed(&conn, CURSOR_DISK_KV, "composerData:", "value", false, |k, _| keys.push(k.to_string())).unwrap();
        assert_eq!(keys, vec!["composerData:a", "composerData:b"], "NULL values and neighbouring keys are left out");
        let mut guarded = Vec::new();
        for_each_prefixed(&conn, CURSOR_DISK_KV, "composerData:", "json_extract(value, '$.n')", true, |k, r| {
            guarded.push((k.to_string(), sqlite::value_i64(r.get_ref(1).unwrap())))
        })
        .unwrap();
        assert_eq!(guarded, vec![("composerData:a".to_string(), Some(1))], "json_valid guards json_extract");
        assert!(has_table(&conn, CURSOR_DISK_KV) && !has_table(&conn, ITEM_TABLE));
    }

    #[test]
    fn values_by_key_decode_text_blobs_and_report_garbage() {
        let dir = tempfile::tempdir().unwrap();
        let conn = sqlite_fixture(
            &dir.path().join(STATE_DB),
            "CREATE TABLE ItemTable(key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
             INSERT INTO ItemTable VALUES ('a', '{\"tabs\":[]}'), ('c', '{torn'), ('d', 'null');",
        )
        .unwrap();
        let packed = zstd::encode_all(&br#"{"x":2}"#[..], 3).unwrap();
        conn.execute("INSERT INTO ItemTable VALUES ('b', ?1)", [packed]).unwrap();
        let got = values_for_keys(&conn, ITEM_TABLE, &["b", "a", "c", "d", "missing"]).unwrap();
        assert_eq!(got.len(), 4);
        assert_eq!(got[0], ("b".into(), Ok(Some(json!({"x": 2})))));
        assert_eq!(got[1], ("a".into(), Ok(Some(json!({"tabs": []})))));
        assert!(got[2].1.is_err());
        assert_eq!(got[3].1, Ok(None));
    }

    #[test]
    fn tab_chats_map_bubbles_and_join_consecutive_answers() {
        let value = json!({"tabs": [
            {"tabId": "tab-1", "chatTitle": "Flaky upload test", "bubbles": [
                {"type": "user", "text": "upload_test fails on CI only"},
                {"type": 2, "rawText": "CI runs out of temp space;"},
                {"type": "ai", "text": "", "initText": "use t.TempDir()."},
                {"type": 1, "text": "  "},
                {"type": 1, "rawText": "and locally?"},
                {"type": "assistant", "text": "Done."}]},
            {"bubbles": [{"type": 1, "text": "second tab"}]},
            {"tabId": "empty", "bubbles": []}
        ]});
        let mut out: Vec<Session> = Vec::new();
        let t = Some(Timestamp(1_775_030_400_000));
        let n = read_tab_chats(
            "h",
            ValueOrigin { src: &SourceRef::file("/x/state.vscdb"), fallback_id: "ws", project: Some("/src/up") },
            &value,
            t,
            &mut out,
        );
        assert_eq!((n, out.len()), (3, 2), "a tab without text is no session");
        let s = &out[0];
        assert_eq!((s.id.as_str(), s.title.as_deref(), s.project.as_deref()), ("tab-1", Some("Flaky upload test"), Some("/src/up")));
        let turns: Vec<(Role, &str)> = s.turns.iter().map(|t| (t.role, t.text.as_str())).collect();
        assert_eq!(
            turns,
            vec![
                (Role::User, "upload_test fails on CI only"),
                (Role::Assistant, "CI runs out of temp space;\n\nuse t.TempDir()."),
                (Role::User, "and locally?"),
                (Role::Assistant, "Done.")
            ],
            "consecutive answers join; a blank bubble is skipped"
        );
        assert_eq!(s.turns[0].time, t);
        assert_eq!(out[1].id, "ws-1");
    }

    #[test]
    fn chat_session_values_read_like_copilot_chat_files() {
        let value = json!({"version": 3, "sessionId": "s-1", "creationDate": 1775030400000_i64, "customTitle": "Docker cache",
            "requests": [{"message": {"text": "why is the layer rebuilt?"}, "timestamp": 1775030401000_i64,
                "response": [{"value": "COPY . invalidates it."}]}]});
        let mut out: Vec<Session> = Vec::new();
        let mut stats = ParseStats::default();
        let src = SourceRef::file("/u/workspaceStorage/abc/state.vscdb");
        let n = read_chat_session(
            &DIALECT,
            ValueOrigin { src: &src, fallback_id: "abc", project: Some("/src/app") },
            &value,
            &ParseOptions::default(),
            &mut stats,
            &mut out,
        );
        assert_eq!(n, 1);
        let s = &out[0];
        assert_eq!((s.harness.as_str(), s.id.as_str(), s.source.path.as_path()), ("vscdb-test", "s-1", src.path.as_path()));
        assert_eq!(s.project.as_deref(), Some("/src/app"));
        assert_eq!(
            s.turns.iter().map(|t| (t.role, t.text.as_str())).collect::<Vec<_>>(),
            vec![(Role::User, "why is the layer rebuilt?"), (Role::Assistant, "COPY . invalidates it.")]
        );
    }

    #[test]
    fn databases_and_workspace_folders_under_a_user_dir() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path();
        std::fs::create_dir_all(user.join("globalStorage")).unwrap();
        std::fs::write(user.join("globalStorage").join(STATE_DB), b"x").unwrap();
        for (hash, ws) in [
            ("h1", Some(r#"{"folder":"file:///home/dev/src/up%20loader"}"#)),
            ("h2", Some(r#"{"workspace":"file:///home/dev/all.code-workspace"}"#)),
            ("h3", None),
        ] {
            std::fs::create_dir_all(user.join("workspaceStorage").join(hash)).unwrap();
            std::fs::write(user.join("workspaceStorage").join(hash).join(STATE_DB), b"x").unwrap();
            if let Some(ws) = ws {
                std::fs::write(user.join("workspaceStorage").join(hash).join("workspace.json"), ws).unwrap();
            }
        }
        std::fs::create_dir_all(user.join("workspaceStorage/empty")).unwrap();
        std::fs::write(user.join("workspaceStorage/empty").join(STATE_DB), b"").unwrap();
        let all = state_dbs(user, Scopes { global: true, workspaces: true });
        assert_eq!(all.len(), 4, "the zero-byte database is left out: {all:?}");
        assert_eq!(state_dbs(user, Scopes { global: false, workspaces: true }).len(), 3);
        assert_eq!(workspace_folder(&user.join("workspaceStorage/h1")).as_deref(), Some("/home/dev/src/up loader"));
        assert_eq!(workspace_folder(&user.join("workspaceStorage/h2")).as_deref(), Some("/home/dev"));
        assert_eq!(workspace_folder(&user.join("workspaceStorage/h3")), None);
        let src = db_source(&user.join("workspaceStorage/h1").join(STATE_DB));
        assert_eq!(src.parts.len(), 2, "the WAL and workspace.json");
    }
}

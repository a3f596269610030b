//! The export document (`deja_core::archive::TurnDoc`, what `deja export` writes) in the
//! team store, stored once: a turn's text, seq, role and time are columns of
//! `deja.turns`, its session's title, project and times columns of `deja.sessions`, so
//! the rows keep only the rest as JSON — `turns.extra` (tool, files, edit, node,
//! partial; NULL for most turns, which have none of them) and `sessions.extra` (source,
//! parent, kind, agent, machine, once per session rather than once per turn). An
//! earlier layout kept the whole document per turn beside the columns, which stored
//! every turn's text twice. [`Store::docs`] puts the document back together.

use deja_core::archive::{SessionFields, TurnDoc};
use deja_core::model::{SessionMeta, Turn};
use deja_core::Timestamp;
use serde_json::{Map, Value};

use crate::{Error, Store};

/// The document's keys a turn row holds as columns.
const TURN_COLUMNS: [&str; 4] = ["seq", "role", "text", "time"];
/// The document's keys a session row holds as columns.
const SESSION_COLUMNS: [&str; 4] = ["title", "project", "started", "updated"];

/// A turn's fields beyond its columns, as JSON for `turns.extra`; `None` when it has none.
pub fn turn_extra(t: &Turn) -> Result<Option<String>, Error> {
    let rest = without(serde_json::to_value(t), &TURN_COLUMNS)?;
    if rest.is_empty() {
        return Ok(None);
    }
    Ok(Some(json_text(&Value::Object(rest))?))
}

/// A session's fields beyond its columns, as JSON for `sessions.extra`.
pub fn session_extra(meta: &SessionMeta) -> Result<String, Error> {
    json_text(&Value::Object(without(serde_json::to_value(SessionFields::of(meta)), &SESSION_COLUMNS)?))
}

fn without(v: Result<Value, serde_json::Error>, keys: &[&str]) -> Result<Map<String, Value>, Error> {
    match v {
        Ok(Value::Object(mut m)) => {
            for k in keys {
                m.remove(*k);
            }
            Ok(m)
        }
        Ok(other) => Err(Error::Config(format!("a turn encodes as {other}, not a JSON object"))),
        Err(e) => Err(Error::Config(format!("cannot encode a turn for the team store: {e}"))),
    }
}

/// JSON text jsonb takes: it refuses `\u0000`, as text columns refuse NUL.
fn json_text(v: &Value) -> Result<String, Error> {
    let s = serde_json::to_string(v).map_err(|e| Error::Config(format!("cannot encode a turn for the team store: {e}")))?;
    Ok(s.replace("\\u0000", ""))
}

/// One turn's row and its session's, as read back.
#[derive(Debug, Clone, Default)]
pub struct DocParts {
    pub id: String,
    /// The machine that pushed the row.
    pub machine: String,
    pub harness: String,
    pub session: String,
    pub seq: i32,
    pub role: String,
    pub text: String,
    pub time_ms: Option<i64>,
    pub extra: Option<Value>,
    pub title: Option<String>,
    pub project: Option<String>,
    pub started_ms: Option<i64>,
    pub updated_ms: Option<i64>,
    pub session_extra: Option<Value>,
}

/// The export document `parts` were stored from.
pub fn rebuild(parts: DocParts) -> Result<TurnDoc, Error> {
    let mut doc = Map::new();
    // The JSON parts first: a column wins over a key the JSON should not have had.
    for extra in [parts.session_extra, parts.extra].into_iter().flatten() {
        match extra {
            Value::Object(m) => doc.extend(m),
            Value::Null => {}
            other => return Err(Error::Schema(format!("turn {}: `extra` is {other}, not a JSON object", parts.id))),
        }
    }
    let time = |ms: Option<i64>| ms.map_or(Value::Null, |ms| Value::String(Timestamp(ms).to_rfc3339()));
    let mut put = |k: &str, v: Value| {
        if !v.is_null() {
            doc.insert(k.to_string(), v);
        }
    };
    put("seq", Value::from(parts.seq));
    put("role", Value::String(parts.role));
    put("text", Value::String(parts.text));
    put("time", time(parts.time_ms));
    put("title", parts.title.map_or(Value::Null, Value::String));
    put("project", parts.project.map_or(Value::Null, Value::String));
    put("started", time(parts.started_ms));
    put("updated", time(parts.updated_ms));
    put("id", Value::String(parts.id.clone()));
    put("harness", Value::String(parts.harness));
    put("session", Value::String(parts.session));
    // A machine's own sessions name no machine in its archive; `deja export` names the
    // one it runs on, and the row says which machine pushed it: the same document.
    if !doc.contains_key("machine") {
        doc.insert("machine".into(), Value::String(parts.machine));
    }
    serde_json::from_value(Value::Object(doc))
        .map_err(|e| Error::Schema(format!("turn {} does not read back as a document: {e}", parts.id)))
}

impl Store {
    /// The export documents of the turns of `machine`'s session `session_key` this role
    /// may read, in order.
    pub fn docs(&mut self, machine: &str, session_key: &str) -> Result<Vec<TurnDoc>, Error> {
        // Times as whole milliseconds, computed exactly (numeric), as they were sent.
        let ms = |c: &str| format!("round(extract(epoch FROM {c}) * 1000)::int8");
        let rows = self
            .client
            .query(
                &format!(
                    "SELECT t.turn_id, s.harness, s.session, t.seq, t.role, t.text, {}, t.extra::text,
                            s.title, s.project_path, {}, {}, s.extra::text, t.machine
                     FROM deja.turns t JOIN deja.sessions s ON s.machine = t.machine AND s.session_key = t.session_key
                     WHERE t.machine = $1 AND t.session_key = $2 ORDER BY t.seq",
                    ms("t.time"),
                    ms("s.started"),
                    ms("s.updated")
                ),
                &[&machine, &session_key],
            )
            .map_err(Error::sql("reading a session's documents from the team store"))?;
        // jsonb comes back as its text: the client reads no JSON type of its own.
        let json = |id: &str, s: Option<String>| -> Result<Option<Value>, Error> {
            s.map(|s| serde_json::from_str(&s).map_err(|e| Error::Schema(format!("turn {id}: `extra` is not JSON: {e}")))).transpose()
        };
        rows.iter()
            .map(|r| {
                let id: String = r.get(0);
                rebuild(DocParts {
                    extra: json(&id, r.get(7))?,
                    session_extra: json(&id, r.get(12))?,
                    id,
                    harness: r.get(1),
                    session: r.get(2),
                    seq: r.get(3),
                    role: r.get(4),
                    text: r.get(5),
                    time_ms: r.get(6),
                    title: r.get(8),
                    project: r.get(9),
                    started_ms: r.get(10),
                    updated_ms: r.get(11),
                    machine: r.get(13),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use deja_core::{Edit, ExitStatus, FileAction, FileTouch, NodeRef, Role, ToolUse};

    use super::*;

    fn parts(meta: &SessionMeta, t: &Turn) -> DocParts {
        let json = |s: Option<String>| s.map(|s| serde_json::from_str::<Value>(&s).expect("extra is JSON"));
        DocParts {
            id: deja_core::archive::turn_id(&meta.harness, &meta.id, t.seq),
            machine: "elsewhere".into(),
            harness: meta.harness.clone(),
            session: meta.id.clone(),
            seq: t.seq as i32,
            role: t.role.as_str().into(),
            text: t.text.clone(),
            time_ms: t.time.map(|t| t.0),
            extra: json(turn_extra(t).expect("encodes")),
            title: meta.title.clone(),
            project: meta.project.clone(),
            started_ms: meta.started.map(|t| t.0),
            updated_ms: meta.updated.map(|t| t.0),
            session_extra: json(Some(session_extra(meta).expect("encodes"))),
        }
    }

    #[test]
    fn a_document_stored_in_parts_reads_back_whole() {
        let meta = SessionMeta {
            harness: "claude".into(),
            id: "s-1".into(),
            title: Some("pool sizing".into()),
            project: Some("/src/app".into()),
            path: "/home/dev/.claude/projects/app/s-1.jsonl".into(),
            started: Some(Timestamp(1_767_225_600_123)),
            updated: Some(Timestamp(1_767_225_700_999)),
            parent: Some("s-0".into()),
            kind: Some("subagent".into()),
            agent: Some("reviewer".into()),
            machine: Some("desktop".into()),
            source_deleted: None,
            turns: 2,
        };
        let mut rich = Turn::new(Role::ToolCall, "$ cargo test\nok").at(Some(Timestamp(1_767_225_601_001)));
        rich.seq = 3;
        rich.node = Some(NodeRef { id: "n3".into(), parent: Some("n2".into()) });
        rich.tool = Some(ToolUse {
            name: "bash".into(),
            command: Some("cargo test".into()),
            exit: Some(ExitStatus::Code(0)),
            ..ToolUse::default()
        });
        rich.files = vec![FileTouch { path: "src/lib.rs".into(), action: FileAction::Edit }];
        rich.edit = Some(Edit { path: "src/lib.rs".into(), old: "a".into(), new: Some("b".into()) });
        rich.partial = true;
        let mut plain = Turn::new(Role::User, "why is the pool exhausted?");
        plain.seq = 0;
        // A plain turn stores no JSON at all: its columns hold all of it.
        assert_eq!(turn_extra(&plain).expect("encodes"), None);
        let extra = turn_extra(&rich).expect("encodes").expect("a rich turn has extra fields");
        assert!(!extra.contains("cargo test\\nok"), "the text is a column, not repeated in extra: {extra}");
        for t in [&plain, &rich] {
            assert_eq!(rebuild(parts(&meta, t)).expect("reads back"), TurnDoc::new(&meta, t));
        }
        // A session of the pushing machine's own names it, as `deja export` there does.
        let own = SessionMeta { machine: None, ..meta.clone() };
        let doc = rebuild(parts(&own, &plain)).expect("reads back");
        assert_eq!(doc.fields.machine.as_deref(), Some("elsewhere"));
    }

    #[test]
    fn extra_that_is_not_an_object_is_refused() {
        let p = DocParts { id: "x:y:1".into(), role: "user".into(), extra: Some(Value::from(3)), ..DocParts::default() };
        assert!(rebuild(p).is_err());
    }
}

//! Copying an index into the archive, once: an index built before the archive existed
//! may be the only copy of sessions whose sources are gone, and the first rebuild (or
//! schema upgrade) would otherwise lose them.
//!
//! The index may be of an older schema, so it is read by field name with only the
//! stored fields every version has had (`kind`, `sid`, `seq`, `time`, `body`, `extra`),
//! not through [`IndexView`](super::IndexView), which needs this version's fields.

use std::collections::HashMap;

use tantivy::collector::DocSetCollector;
use tantivy::query::TermQuery;
use tantivy::schema::{Field, IndexRecordOption, Value};
use tantivy::{Index, TantivyDocument, Term};

use super::schema::{KIND_SESSION, KIND_TURN};
use super::{IndexError, IndexPaths, SessionMeta, TurnExtra};
use crate::archive::Archive;
use crate::model::{Timestamp, Turn};

struct StoredFields {
    kind: Field,
    sid: Field,
    seq: Field,
    time: Field,
    body: Field,
    extra: Field,
}

/// Writes every session of the index at `paths` into one archive segment; returns how
/// many. An index whose fields cannot be found copies nothing (and says so).
pub(crate) fn copy_index_into_archive(paths: &IndexPaths, archive: &Archive) -> Result<u64, IndexError> {
    let dir = paths.tantivy();
    let index = Index::open_in_dir(&dir).map_err(IndexError::tantivy(&dir))?;
    let schema = index.schema();
    let field = |name: &str| schema.get_field(name).map_err(IndexError::tantivy(&dir));
    let f = StoredFields {
        kind: field("kind")?,
        sid: field("sid")?,
        seq: field("seq")?,
        time: field("time")?,
        body: field("body")?,
        extra: field("extra")?,
    };
    let reader = index.reader().map_err(IndexError::tantivy(&dir))?;
    let searcher = reader.searcher();
    let term = |value: &str| TermQuery::new(Term::from_field_text(f.kind, value), IndexRecordOption::Basic);

    // Turns grouped by session first, then each session written with its turns in order.
    let mut turns: HashMap<String, Vec<Turn>> = HashMap::new();
    for addr in searcher.search(&term(KIND_TURN), &DocSetCollector).map_err(IndexError::tantivy(&dir))? {
        let doc: TantivyDocument = searcher.doc(addr).map_err(IndexError::tantivy(&dir))?;
        let Some(sid) = doc.get_first(f.sid).and_then(|v| v.as_str()).map(str::to_string) else { continue };
        turns.entry(sid).or_default().push(stored_turn(&f, &doc));
    }
    let mut writer = archive.writer();
    let mut copied = 0;
    let mut sessions: Vec<SessionMeta> = Vec::new();
    for addr in searcher.search(&term(KIND_SESSION), &DocSetCollector).map_err(IndexError::tantivy(&dir))? {
        let doc: TantivyDocument = searcher.doc(addr).map_err(IndexError::tantivy(&dir))?;
        if let Some(meta) = doc.get_first(f.extra).and_then(|v| v.as_str()).and_then(SessionMeta::from_stored) {
            sessions.push(meta);
        }
    }
    sessions.sort_by_key(SessionMeta::key);
    for meta in sessions {
        let Some(mut ts) = turns.remove(&meta.key()) else { continue };
        ts.sort_by_key(|t| t.seq);
        writer.session(&meta, &ts)?;
        copied += 1;
    }
    writer.commit()?;
    Ok(copied)
}

/// A turn document's stored fields, redacted (an older index may predate a pattern).
fn stored_turn(f: &StoredFields, doc: &TantivyDocument) -> Turn {
    let extra: TurnExtra = doc.get_first(f.extra).and_then(|v| v.as_str()).and_then(|s| serde_json::from_str(s).ok()).unwrap_or_default();
    let mut turn = Turn {
        seq: doc.get_first(f.seq).and_then(|v| v.as_u64()).unwrap_or(0) as u32,
        role: extra.role,
        text: doc.get_first(f.body).and_then(|v| v.as_str()).unwrap_or("").to_string(),
        time: doc.get_first(f.time).and_then(|v| v.as_i64()).filter(|t| *t != 0).map(Timestamp),
        node: extra.node,
        tool: extra.tool,
        files: extra.files,
        edit: extra.edit,
        partial: extra.partial,
    };
    crate::redact::Redact::redact_in_place(&mut turn);
    turn
}

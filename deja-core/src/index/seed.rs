//! Copying an index into the archive, once: an index built before the archive existed
//! may be the only copy of sessions whose sources are gone, and the first rebuild (or
//! schema upgrade) would otherwise lose them.
//!
//! The index may be of an older schema, so it is read by field name with only the
//! stored fields every version before 5 has had (`kind`, `sid`, `seq`, `time`, `body`, `extra`),
//! not through [`IndexView`](super::IndexView), which needs this version's fields; the
//! turns are read with the same [`StoredTurnFields`] it uses.

use std::collections::HashMap;

use tantivy::collector::DocSetCollector;
use tantivy::query::TermQuery;
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{Index, TantivyDocument, Term};

use super::schema::{KIND_SESSION, KIND_TURN};
use super::{IndexError, IndexPaths, SessionMeta, StoredTurnFields};
use crate::archive::Archive;
use crate::model::Turn;

/// Writes every session of the index at `paths` into one archive segment; returns how
/// many. An index whose fields cannot be found copies nothing (and says so).
pub(crate) fn copy_index_into_archive(paths: &IndexPaths, archive: &Archive) -> Result<u64, IndexError> {
    let dir = paths.tantivy();
    let index = Index::open_in_dir(&dir).map_err(IndexError::tantivy(&dir))?;
    let schema = index.schema();
    let field = |name: &str| schema.get_field(name).map_err(IndexError::tantivy(&dir));
    let (kind, sid) = (field("kind")?, field("sid")?);
    // Since schema 5 the index holds no turn text: it was in the archive, so there is
    // nothing here to copy.
    if schema.get_field("body").is_err() {
        return Ok(0);
    }
    let stored = StoredTurnFields { seq: field("seq")?, time: field("time")?, body: Some(field("body")?), extra: field("extra")? };
    let reader = index.reader().map_err(IndexError::tantivy(&dir))?;
    let searcher = reader.searcher();
    let term = |value: &str| TermQuery::new(Term::from_field_text(kind, value), IndexRecordOption::Basic);

    // Turns grouped by session first, then each session written with its turns in order.
    let mut turns: HashMap<String, Vec<Turn>> = HashMap::new();
    for addr in searcher.search(&term(KIND_TURN), &DocSetCollector).map_err(IndexError::tantivy(&dir))? {
        let doc: TantivyDocument = searcher.doc(addr).map_err(IndexError::tantivy(&dir))?;
        let Some(sid) = doc.get_first(sid).and_then(|v| v.as_str()).map(str::to_string) else { continue };
        // Redacted: an older index may predate a pattern.
        let mut turn = stored.turn(&doc);
        crate::redact::Redact::redact_in_place(&mut turn);
        turns.entry(sid).or_default().push(turn);
    }
    let mut writer = archive.writer();
    let mut copied = 0;
    let mut sessions: Vec<SessionMeta> = Vec::new();
    for addr in searcher.search(&term(KIND_SESSION), &DocSetCollector).map_err(IndexError::tantivy(&dir))? {
        let doc: TantivyDocument = searcher.doc(addr).map_err(IndexError::tantivy(&dir))?;
        if let Some(meta) = doc.get_first(stored.extra).and_then(|v| v.as_str()).and_then(SessionMeta::from_stored) {
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

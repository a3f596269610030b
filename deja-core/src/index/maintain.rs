//! Changing what the archive and the index hold other than by reading sources:
//! forgetting sessions (`deja forget`) and importing another machine's export
//! (`deja import`). Both run under the writer lock, like an index run.
//!
//! Forgetting writes the tombstones first (synced), then deletes the sessions from the
//! serving index and rewrites the archive without them: a crash part way leaves the
//! tombstones, which keep the sessions out of every later read, and the next rewrite
//! finishes removing them.
//!
//! Importing appends the sessions to the archive (a reset and every turn, so importing
//! the same file twice folds to one copy) and writes them into the serving index by
//! session id; with no index yet, an index run builds the first generation and restores
//! them from the archive.

use std::collections::HashSet;

use serde::Serialize;
use tantivy::{IndexWriter, Term};

use super::indexer::{open_for_write, refreshable, run_index, IndexObserver, IndexRequest, IndexRunError, WriterLock};
use super::{IndexError, IndexPaths, SessionMeta};
use crate::archive::{add_tombstones, load_tombstones, tombstones_path, Archive, ArchivedSession};
use crate::env::StoreEnv;

/// What forgetting did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ForgetReport {
    /// Session keys forgotten.
    pub sessions: Vec<String>,
    /// Archived turns removed.
    pub archived_turns: u64,
    pub archive_problems: Vec<String>,
}

/// Forgets `keys` (`<harness>:<session>`) everywhere: tombstones, index, archive.
pub fn forget(env: &StoreEnv, paths: &IndexPaths, keys: &[String], observer: &dyn IndexObserver) -> Result<ForgetReport, IndexRunError> {
    let _lock = WriterLock::acquire(paths, true, observer)?;
    let tomb_path = tombstones_path(env);
    add_tombstones(&tomb_path, keys).map_err(IndexError::io(&tomb_path))?;
    let serving = IndexPaths::new(&paths.root);
    if serving.exists() {
        let index = open_for_write(&serving)?;
        let fields = super::schema::fields_of(&index.schema()).map_err(IndexError::tantivy(&serving.root))?;
        let mut writer: IndexWriter = index.writer_with_num_threads(1, 32 << 20).map_err(IndexError::tantivy(&serving.root))?;
        for key in keys {
            writer.delete_term(Term::from_field_text(fields.sid, key));
        }
        writer.commit().map_err(IndexError::tantivy(&serving.root))?;
        writer.wait_merging_threads().map_err(IndexError::tantivy(&serving.root))?;
    }
    // Every tombstone, not only these: one a crash left half-done is finished too.
    let gone = load_tombstones(&tomb_path);
    let rewritten = Archive::of(env).rewrite(|d| gone.contains(&d.session_key()))?;
    Ok(ForgetReport { sessions: keys.to_vec(), archived_turns: rewritten.dropped, archive_problems: rewritten.problems })
}

/// What importing did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ImportReport {
    pub sessions: u64,
    pub turns: u64,
    /// Sessions not imported because they were forgotten here, or are excluded.
    pub forgotten: u64,
    pub excluded: u64,
}

/// Imports `sessions` (already validated and redacted by the caller) into the archive
/// and the index.
pub fn import(
    env: &StoreEnv,
    paths: &IndexPaths,
    sessions: Vec<ArchivedSession>,
    observer: &dyn IndexObserver,
) -> Result<ImportReport, IndexRunError> {
    let mut report = ImportReport::default();
    let needs_build = {
        let _lock = WriterLock::acquire(paths, true, observer)?;
        let settings = crate::config::Settings::load(env).map_err(IndexError::from)?;
        let tombstones: HashSet<String> = load_tombstones(&tombstones_path(env));
        let archive = Archive::of(env);
        let mut segment = archive.writer();
        let mut kept: Vec<(crate::model::Session, SessionMeta)> = Vec::new();
        for archived in sessions {
            if tombstones.contains(&archived.key()) {
                report.forgotten += 1;
                continue;
            }
            if settings.exclusions.excluded_by(&archived.harness, archived.fields.project.as_deref()).is_some() {
                report.excluded += 1;
                continue;
            }
            let (s, meta) = (archived.to_session(), archived.meta());
            segment.session(&meta, &s.turns)?;
            report.sessions += 1;
            report.turns += s.turns.len() as u64;
            kept.push((s, meta));
        }
        let serving = IndexPaths::new(&paths.root);
        if refreshable(&serving) {
            let index = open_for_write(&serving)?;
            let fields = super::schema::fields_of(&index.schema()).map_err(IndexError::tantivy(&serving.root))?;
            let mut writer: IndexWriter = index.writer_with_num_threads(1, 64 << 20).map_err(IndexError::tantivy(&serving.root))?;
            for (s, meta) in &kept {
                super::indexer::index_whole_session(&writer, &fields, s, meta, &serving)?;
            }
            segment.commit()?;
            writer.commit().map_err(IndexError::tantivy(&serving.root))?;
            writer.wait_merging_threads().map_err(IndexError::tantivy(&serving.root))?;
            false
        } else {
            segment.commit()?;
            true
        }
    };
    if needs_build {
        // No complete generation to write into: build one, which restores the imports.
        run_index(env, paths, &IndexRequest { wait: true, ..IndexRequest::default() }, observer)?;
    }
    Ok(report)
}

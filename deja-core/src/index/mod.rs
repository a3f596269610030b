//! The tantivy index: where it lives, how it is opened, and what a session looks like
//! when read back. Writing is in [`indexer`], searching in [`search`].
//!
//! The index is a projection of deja's archive ([`crate::archive`]) and the harnesses'
//! sources: deleting it loses nothing, the next run builds it again.
//!
//! Layout of the index directory (mode 0700):
//! - `writer.lock` — held by the one process that writes;
//! - `watcher.lock` — held by a running `deja index --watch` ([`watcher`]);
//! - `current` — names the serving generation; replaced atomically by a rebuild;
//! - `rebuilding` — names the generation a rebuild is building (gone when it is swapped in);
//! - `gen-<n>/tantivy/` — the segments; readers open the last commit and never wait on a writer;
//! - `gen-<n>/manifest` — per-source incremental state, written after each commit;
//! - `gen-<n>/version` — the schema version; another version means a new generation.
//! - `gen-<n>/archive` — the archive directory the generation was built from, where turn
//!   text is read (the index does not store it).

pub mod bound;
mod gate;
pub mod indexer;
pub mod irregular;
pub mod maintain;
pub mod manifest;
pub mod progress;
pub mod records;
pub mod retention;
pub mod schema;
pub mod search;
mod seed;
pub mod space;
pub mod tokenizer;
pub mod watcher;
pub mod work_dirs;

pub use watcher::{sync_with_watcher, watcher_running, Synced};

#[cfg(test)]
mod incremental_tests;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{Index, IndexReader, Searcher, TantivyDocument, Term};

use crate::model::{Role, SessionMeta, Timestamp, Turn};
use crate::redact::Redact;
use schema::{fields_of, register_tokenizer, Fields, KIND_SESSION, KIND_TURN};

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    #[error("index at {path}: {source}")]
    Tantivy {
        path: PathBuf,
        #[source]
        source: tantivy::TantivyError,
    },
    #[error("index at {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("no index at {0} yet — run `deja index` first")]
    Missing(PathBuf),
    #[error("the index at {0} was built by another version of deja — run `deja index` to rebuild it")]
    OtherVersion(PathBuf),
    #[error("{0}")]
    Query(String),
    #[error(transparent)]
    Archive(#[from] crate::archive::ArchiveError),
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// A search or recall question stopped by its [`crate::cancel::Cancel`] token.
    #[error(transparent)]
    Cancelled(#[from] crate::cancel::Cancelled),
}

impl IndexError {
    fn tantivy(path: &Path) -> impl FnOnce(tantivy::TantivyError) -> IndexError + '_ {
        move |source| IndexError::Tantivy { path: path.to_path_buf(), source }
    }
    fn io(path: &Path) -> impl FnOnce(std::io::Error) -> IndexError + '_ {
        move |source| IndexError::Io { path: path.to_path_buf(), source }
    }
}

/// Paths inside an index directory: the root holds what outlives a generation (the
/// writer lock, the `current` pointer, a first build's progress), and each generation
/// `gen-<n>/` holds one complete index (segments, manifest, version, work dirs).
///
/// A rebuild or a schema upgrade builds `gen-<n+1>` beside the serving one and swaps
/// `current` to it when it is complete ([`indexer`]), so readers never see a half-built
/// index. An index written before generations existed has its files in the root itself;
/// it is read as the serving generation until the first rebuild replaces it.
#[derive(Debug, Clone)]
pub struct IndexPaths {
    pub root: PathBuf,
    /// The serving generation's directory (the root itself for a pre-generation index).
    pub gen: PathBuf,
}

/// The file in the index root naming the serving generation.
const CURRENT: &str = "current";

impl IndexPaths {
    /// The index under `root`, reading which generation serves.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        let gen = current_generation(&root).map_or_else(|| root.clone(), |name| root.join(name));
        IndexPaths { root, gen }
    }
    /// The paths of generation `name` under the same root (not necessarily serving).
    pub fn generation(&self, name: &str) -> IndexPaths {
        IndexPaths { root: self.root.clone(), gen: self.root.join(name) }
    }
    /// The serving generation's name, when the index has generations.
    pub fn generation_name(&self) -> Option<String> {
        (self.gen != self.root).then(|| self.gen.file_name().map(|n| n.to_string_lossy().into_owned())).flatten()
    }
    pub fn tantivy(&self) -> PathBuf {
        self.gen.join("tantivy")
    }
    pub fn manifest(&self) -> PathBuf {
        self.gen.join("manifest")
    }
    /// The working directories sessions ran in ([`work_dirs::WorkDirs`]).
    pub fn work_dirs(&self) -> PathBuf {
        self.gen.join("work-dirs")
    }
    pub fn version(&self) -> PathBuf {
        self.gen.join("version")
    }
    /// Names the archive the generation was built from, where its turns' text is read.
    pub fn archive_link(&self) -> PathBuf {
        self.gen.join("archive")
    }
    /// The archive directory the generation was built from, when it names one.
    pub fn linked_archive(&self) -> Option<PathBuf> {
        let text = std::fs::read_to_string(self.archive_link()).ok()?;
        let dir = PathBuf::from(text.strip_suffix('\n').unwrap_or(&text));
        dir.is_absolute().then_some(dir)
    }
    /// Records `dir` as the generation's archive (written only when it changed: every
    /// refresh passes here).
    pub fn link_archive(&self, dir: &Path) -> Result<(), IndexError> {
        if self.linked_archive().as_deref() == Some(dir) {
            return Ok(());
        }
        let dir = std::path::absolute(dir).map_err(IndexError::io(dir))?;
        crate::fsutil::write_private(&self.archive_link(), format!("{}\n", dir.display()).as_bytes()).map_err(IndexError::io(&self.gen))
    }
    pub fn lock(&self) -> PathBuf {
        self.root.join("writer.lock")
    }
    /// Held by a running `deja index --watch` ([`watcher`]).
    pub fn watcher(&self) -> PathBuf {
        self.root.join("watcher.lock")
    }
    /// Where searches ask the watcher to catch up ([`watcher::sync_with_watcher`]).
    pub fn watcher_sync(&self) -> PathBuf {
        self.root.join("watcher-sync")
    }
    /// Progress of a first build in progress ([`progress`]).
    pub fn first_build(&self) -> PathBuf {
        self.root.join("first-build")
    }
    /// The pointer to the serving generation.
    pub fn current(&self) -> PathBuf {
        self.root.join(CURRENT)
    }
    /// Names the generation a rebuild is building, so a run after a crash finishes it.
    pub fn rebuilding(&self) -> PathBuf {
        self.root.join("rebuilding")
    }
    pub fn exists(&self) -> bool {
        self.tantivy().join("meta.json").exists()
    }
    /// The schema version the serving generation was built with.
    pub fn schema_version(&self) -> Option<u32> {
        std::fs::read_to_string(self.version()).ok().and_then(|v| v.trim().parse::<u32>().ok())
    }
}

/// The generation `root/current` names, when it names one that looks like ours.
fn current_generation(root: &Path) -> Option<String> {
    let name = std::fs::read_to_string(root.join(CURRENT)).ok()?;
    let name = name.trim();
    (name.starts_with("gen-") && !name.contains(['/', '\\']) && name.len() < 64).then(|| name.to_string())
}

/// How a session's metadata is stored on its session document: redacted, and marked
/// with the rules that redacted it.
impl SessionMeta {
    /// The metadata stored as JSON on a session document, redacted: an index built
    /// before a kind of secret was known must not show it now. Metadata an index run
    /// marked as redacted by this very binary's rules ([`SessionMeta::stored_json`]) is
    /// taken as written, which spares a one-off search building the redaction engine.
    pub(crate) fn from_stored(json: &str) -> Option<SessionMeta> {
        let stored: StoredMeta = serde_json::from_str(json).ok()?;
        Some(if stored.redacted_with == Some(crate::redact::fingerprint()) { stored.meta } else { crate::redact::redacted(stored.meta) })
    }

    /// The JSON stored on the session document: this metadata redacted by this
    /// binary's rules, marked with their [`crate::redact::fingerprint`]. Redacted here,
    /// whatever built it: a session restored from the archive or imported from another
    /// machine brings its title and project as they were archived.
    pub(crate) fn stored_json(&self) -> String {
        let meta = crate::redact::redacted(self.clone());
        serde_json::to_string(&StoredMetaRef { meta: &meta, redacted_with: Some(crate::redact::fingerprint()) }).unwrap_or_default()
    }
}

/// A session document's stored metadata as read: the mark is absent from what indexes
/// before it wrote, and ignored by the deja versions before it (serde skips the key).
#[derive(Deserialize)]
struct StoredMeta {
    #[serde(flatten)]
    meta: SessionMeta,
    #[serde(default)]
    redacted_with: Option<u64>,
}

/// [`StoredMeta`] as written.
#[derive(Serialize)]
struct StoredMetaRef<'a> {
    #[serde(flatten)]
    meta: &'a SessionMeta,
    redacted_with: Option<u64>,
}

/// The stored extras of a turn document.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct TurnExtra {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<crate::model::ToolUse>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<crate::model::FileTouch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit: Option<crate::model::Edit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<crate::model::NodeRef>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    pub role: Role,
}

/// A read-only view of the last committed index.
pub struct IndexView {
    pub paths: IndexPaths,
    pub index: Index,
    pub reader: IndexReader,
    pub fields: Fields,
    /// Where turn text is read: the archive the generation was built from.
    pub archive: Option<crate::archive::ArchiveReader>,
    /// The archive's ledger of sessions whose source is gone, read when the view opens:
    /// every session's metadata this view gives carries its `source_deleted`.
    pub gone: crate::archive::gone::Gone,
}

impl IndexView {
    /// Opens the serving generation for reading; `Missing` when none was built yet.
    ///
    /// A generation built by another schema version is still read when its fields are
    /// the ones this version knows: it keeps answering while the new generation is
    /// built beside it. Only one that cannot be read is `OtherVersion`.
    pub fn open(paths: &IndexPaths) -> Result<IndexView, IndexError> {
        // Which generation serves is read now: a refresh may have swapped in a new one
        // since `paths` was made.
        IndexView::open_generation(&IndexPaths::new(&paths.root))
    }

    /// Opens exactly the generation `paths` names (serving or not).
    pub fn open_generation(paths: &IndexPaths) -> Result<IndexView, IndexError> {
        if !paths.exists() {
            return Err(IndexError::Missing(paths.root.clone()));
        }
        let other_version = paths.schema_version().is_some_and(|v| v != schema::SCHEMA_VERSION);
        let dir = paths.tantivy();
        let index = Index::open_in_dir(&dir).map_err(IndexError::tantivy(&dir))?;
        register_tokenizer(&index);
        let fields = match fields_of(&index.schema()) {
            Ok(f) => f,
            Err(_) if other_version => return Err(IndexError::OtherVersion(paths.root.clone())),
            Err(e) => return Err(IndexError::tantivy(&dir)(e)),
        };
        let reader = index.reader_builder().reload_policy(tantivy::ReloadPolicy::Manual).try_into().map_err(IndexError::tantivy(&dir))?;
        let linked = paths.linked_archive();
        // A ledger that cannot be read labels nothing; the sessions are all still there.
        let gone = linked.as_deref().and_then(|d| crate::archive::gone::Gone::load(d).ok()).unwrap_or_default();
        let archive = linked.map(crate::archive::ArchiveReader::new);
        Ok(IndexView { paths: paths.clone(), index, reader, fields, archive, gone })
    }

    pub fn searcher(&self) -> Searcher {
        self.reader.searcher()
    }

    fn err(&self) -> impl FnOnce(tantivy::TantivyError) -> IndexError + '_ {
        IndexError::tantivy(&self.paths.root)
    }

    pub(crate) fn kind_term(&self, kind: &str) -> Box<dyn Query> {
        Box::new(TermQuery::new(Term::from_field_text(self.fields.kind, kind), IndexRecordOption::Basic))
    }

    /// The metadata stored on a session document (see [`SessionMeta::from_stored`]),
    /// with `source_deleted` from the ledger of gone sources.
    pub(crate) fn meta_of(&self, doc: &TantivyDocument) -> Option<SessionMeta> {
        let mut m = doc.get_first(self.fields.extra).and_then(|v| v.as_str()).and_then(SessionMeta::from_stored)?;
        if !self.gone.is_empty() {
            m.source_deleted = self.gone.get(&m.key()).cloned();
        }
        Some(m)
    }

    /// Session documents, optionally of one harness.
    pub fn all_sessions(&self, harness: Option<&str>) -> Result<Vec<SessionMeta>, IndexError> {
        let searcher = self.searcher();
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, self.kind_term(KIND_SESSION))];
        if let Some(h) = harness {
            clauses.push((Occur::Must, Box::new(TermQuery::new(Term::from_field_text(self.fields.harness, h), IndexRecordOption::Basic))));
        }
        let q = BooleanQuery::new(clauses);
        let addrs = searcher.search(&q, &tantivy::collector::DocSetCollector).map_err(self.err())?;
        let mut out = Vec::with_capacity(addrs.len());
        for addr in addrs {
            let doc: TantivyDocument = searcher.doc(addr).map_err(self.err())?;
            if let Some(m) = self.meta_of(&doc) {
                out.push(m);
            }
        }
        Ok(out)
    }

    /// Number of sessions per harness.
    pub fn session_counts(&self) -> Result<std::collections::BTreeMap<String, u64>, IndexError> {
        Ok(self.session_and_deleted_counts()?.into_iter().map(|(h, (n, _))| (h, n)).collect())
    }

    /// Per harness: sessions, and of them those whose source the harness deleted.
    pub fn session_and_deleted_counts(&self) -> Result<std::collections::BTreeMap<String, (u64, u64)>, IndexError> {
        let mut counts = std::collections::BTreeMap::new();
        for m in self.all_sessions(None)? {
            let c: &mut (u64, u64) = counts.entry(m.harness).or_default();
            c.0 += 1;
            c.1 += u64::from(m.source_deleted.is_some());
        }
        Ok(counts)
    }

    /// The session stored under `<harness>:<id>`.
    pub fn session_meta(&self, searcher: &Searcher, sid: &str) -> Result<Option<SessionMeta>, IndexError> {
        let q = BooleanQuery::new(vec![
            (Occur::Must, self.kind_term(KIND_SESSION)),
            (Occur::Must, Box::new(TermQuery::new(Term::from_field_text(self.fields.sid, sid), IndexRecordOption::Basic))),
        ]);
        let top = searcher.search(&q, &TopDocs::with_limit(1).order_by_score()).map_err(self.err())?;
        let Some((_, addr)) = top.first() else { return Ok(None) };
        let doc: TantivyDocument = searcher.doc(*addr).map_err(self.err())?;
        Ok(self.meta_of(&doc))
    }

    /// Sessions whose id (or `<harness>:<id>`) starts with `prefix`.
    pub fn find_sessions_by_prefix(&self, prefix: &str) -> Result<Vec<SessionMeta>, IndexError> {
        Ok(self.all_sessions(None)?.into_iter().filter(|m| m.id.starts_with(prefix) || m.key().starts_with(prefix)).collect())
    }

    /// Every turn of a session, in order.
    pub fn session_turns(&self, sid: &str) -> Result<Vec<Turn>, IndexError> {
        let searcher = self.searcher();
        let q = BooleanQuery::new(vec![
            (Occur::Must, self.kind_term(KIND_TURN)),
            (Occur::Must, Box::new(TermQuery::new(Term::from_field_text(self.fields.sid, sid), IndexRecordOption::Basic))),
        ]);
        let addrs = searcher.search(&q, &tantivy::collector::DocSetCollector).map_err(self.err())?;
        let mut turns = Vec::with_capacity(addrs.len());
        for addr in addrs {
            let doc: TantivyDocument = searcher.doc(addr).map_err(self.err())?;
            turns.push(self.turn_from_doc(&doc));
        }
        turns.sort_by_key(|t| t.seq);
        Ok(turns)
    }

    /// A stored turn, redacted again on the way out (see [`crate::redact`]): every
    /// surface that shows a turn — `show`, search hits and snippets, recall, MCP —
    /// reads it through here or [`Self::hit_turn`].
    ///
    /// Where the archive holds the turn it is read from there, as a hit's is, and
    /// redacted again only when these rules did not redact it when it was archived:
    /// a `blame` hook reads a dozen sessions' turns, and redacting each again made
    /// a third of its work (compiling the patterns their words woke).
    pub(crate) fn turn_from_doc(&self, doc: &TantivyDocument) -> Turn {
        if let (None, Some(archive)) = (self.fields.body, &self.archive) {
            let sid = doc.get_first(self.fields.sid).and_then(|v| v.as_str());
            let seq = doc.get_first(self.fields.seq).and_then(|v| v.as_u64()).and_then(|s| u32::try_from(s).ok());
            if let Some(mut turn) = sid.zip(seq).and_then(|(sid, seq)| archive.shown_turn(sid, seq)) {
                if turn.time.is_none() {
                    turn.time = doc.get_first(self.fields.time).and_then(|v| v.as_i64()).filter(|t| *t != 0).map(Timestamp);
                }
                return turn;
            }
        }
        let mut turn = self.stored_turn(doc);
        turn.redact_in_place();
        turn
    }

    /// A search hit's turn, read without its stored document where the archive holds
    /// the text: the turn itself from the archive by its number (`seq`, from the
    /// column the caller already has open; one frame serves every turn of the
    /// session), redacted on the way out unless these rules redacted it when it was
    /// archived ([`crate::archive::ArchiveReader::shown_turn`]). A turn without a time of
    /// its own gets `indexed_time`, the time it was indexed at (its session's). An index
    /// that stores text reads it through [`Self::turn_from_doc`].
    pub(crate) fn hit_turn(
        &self,
        searcher: &Searcher,
        addr: tantivy::DocAddress,
        session_key: &str,
        seq: Option<u64>,
        indexed_time: Option<i64>,
    ) -> Result<Turn, IndexError> {
        if let (None, Some(archive)) = (self.fields.body, &self.archive) {
            if let Some(mut turn) = seq.and_then(|seq| archive.shown_turn(session_key, u32::try_from(seq).ok()?)) {
                if turn.time.is_none() {
                    turn.time = indexed_time.filter(|t| *t != 0).map(Timestamp);
                }
                return Ok(turn);
            }
        }
        let doc: TantivyDocument = searcher.doc(addr).map_err(self.err())?;
        Ok(self.turn_from_doc(&doc))
    }

    /// The text of a stored turn as the index holds it: from the archive, or from the
    /// document itself in an index of schema 4 or before (see [`Fields::body`]).
    pub(crate) fn stored_text(&self, doc: &TantivyDocument) -> String {
        if let Some(body) = self.fields.body {
            return doc.get_first(body).and_then(|v| v.as_str()).unwrap_or("").to_string();
        }
        let (Some(sid), Some(seq)) =
            (doc.get_first(self.fields.sid).and_then(|v| v.as_str()), doc.get_first(self.fields.seq).and_then(|v| v.as_u64()))
        else {
            return String::new();
        };
        let Some(archive) = &self.archive else { return String::new() };
        archive.turn(sid, u32::try_from(seq).unwrap_or(u32::MAX)).map(|t| t.text).unwrap_or_default()
    }

    /// Every stored text of every document, exactly as the index holds it (no
    /// redaction on the way out), with each turn's text as its archive holds it: for
    /// tests that check what reached the disk, where both are compressed.
    #[cfg(any(test, feature = "testkit"))]
    pub fn stored_texts(&self) -> Result<Vec<String>, IndexError> {
        let searcher = self.searcher();
        let addrs = searcher.search(&tantivy::query::AllQuery, &tantivy::collector::DocSetCollector).map_err(self.err())?;
        let mut out = Vec::new();
        for addr in addrs {
            let doc: TantivyDocument = searcher.doc(addr).map_err(self.err())?;
            for (_, v) in doc.field_values() {
                if let Some(s) = v.as_str() {
                    out.push(s.to_string());
                }
            }
            if doc.get_first(self.fields.seq).is_some() {
                out.push(self.stored_text(&doc));
            }
        }
        Ok(out)
    }

    /// A stored turn exactly as the index holds it (the redaction tests read what
    /// reached the disk through it).
    pub(crate) fn stored_turn(&self, doc: &TantivyDocument) -> Turn {
        let f = &self.fields;
        let mut turn = StoredTurnFields { seq: f.seq, time: f.time, body: None, extra: f.extra }.turn(doc);
        turn.text = self.stored_text(doc);
        turn
    }
}

/// The stored fields a turn document is read back from. Every schema version has had
/// them under these names, so the one-time copy of an older index into the archive
/// ([`seed`]) reads turns with this too.
pub(crate) struct StoredTurnFields {
    pub seq: tantivy::schema::Field,
    pub time: tantivy::schema::Field,
    /// Absent since schema 5, whose text is in the archive.
    pub body: Option<tantivy::schema::Field>,
    pub extra: tantivy::schema::Field,
}

impl StoredTurnFields {
    /// A stored turn exactly as the index holds it (no redaction).
    pub fn turn(&self, doc: &TantivyDocument) -> Turn {
        let extra: TurnExtra =
            doc.get_first(self.extra).and_then(|v| v.as_str()).and_then(|s| serde_json::from_str(s).ok()).unwrap_or_default();
        Turn {
            seq: doc.get_first(self.seq).and_then(|v| v.as_u64()).unwrap_or(0) as u32,
            role: extra.role,
            text: self.body.and_then(|b| doc.get_first(b)).and_then(|v| v.as_str()).unwrap_or("").to_string(),
            time: doc.get_first(self.time).and_then(|v| v.as_i64()).filter(|t| *t != 0).map(Timestamp),
            node: extra.node,
            tool: extra.tool,
            files: extra.files,
            edit: extra.edit,
            partial: extra.partial,
        }
    }
}

//! Building and refreshing the index: discover every adapter's sources, decide per
//! source from the manifest whether it is unchanged (skip), grown (read the tail), a
//! multi-session container with a row cursor (re-read the sessions changed since), or
//! new/rewritten (parse in full), parse in parallel with rayon, normalize, and
//! write through one tantivy writer. One writer at a time behind a file lock; the
//! commit is atomic, so a crash leaves the previous index usable, and re-doing a
//! source is idempotent (its old documents are deleted in the same commit).
//!
//! Every session written to the index is first appended to the [archive](crate::archive),
//! whose segment is made durable before the index commits. Sessions forgotten
//! (tombstoned) or excluded by the settings file ([`crate::config`]) are neither.
//!
//! A rebuild, a schema upgrade, or an index with no complete generation builds a new
//! generation beside the serving one ([`IndexPaths`]): every source parsed in full, then
//! every archived session no source produced (its source deleted by the harness, or
//! imported) restored from the archive, then committed and swapped in by replacing the
//! `current` pointer. Until the swap, searches answer from the old generation; a crash
//! leaves it serving and the `rebuilding` marker makes the next run build again.
//!
//! `DEJA_FAILPOINT=<point>` stops a rebuild at a named point (it writes
//! `<index>/failpoint-<point>` and sleeps) so tests can kill it there: `rebuild-parsed`,
//! `rebuild-restored`, `rebuild-archived`, `rebuild-committed`.

use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::mpsc::sync_channel;
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;
use tantivy::query::{BooleanQuery, Occur, Query, RangeQuery, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::{doc, Index, IndexWriter, TantivyDocument, Term};
use xxhash_rust::xxh3::Xxh3;

use super::gate::{ByteGate, CloseOnDrop, IN_FLIGHT_BYTES};
use super::manifest::{Manifest, SourceEntry, TailEntry};
use super::schema::{build_schema, register_tokenizer, Fields, KIND_SESSION, KIND_TURN, SCHEMA_VERSION};
use super::work_dirs::WorkDirs;
use super::{IndexError, IndexPaths, IndexView, SessionMeta, TurnExtra};
use crate::archive::gone::Gone;
use crate::archive::{load_tombstones, tombstones_path, Archive, SegmentWriter};
use crate::config::Exclusions;
use crate::env::StoreEnv;
use crate::format::{FormatError, HarnessFormat, ParseOptions, ParseStats};
use crate::model::{Resume, Role, Session, SourceRef, TitleBy, Turn};
use crate::normalize::{normalize, NormalizeOptions};
use crate::stamp::mtime_ns;
use crate::work::is_meaningful_command;

/// What to index.
#[derive(Debug, Clone, Default)]
pub struct IndexRequest {
    /// Only these adapter ids (all when `None`).
    pub harnesses: Option<Vec<String>>,
    /// Drop the index and build it anew.
    pub rebuild: bool,
    /// Wait for another writer to finish; when false a busy lock returns `Busy`.
    pub wait: bool,
}

/// Hooks for progress display; all optional.
pub trait IndexObserver: Sync {
    /// Another process holds the writer lock and this one is waiting.
    fn waiting(&self) {}
    /// Parsing starts: `jobs` sources totalling `bytes`.
    fn start(&self, _jobs: u64, _bytes: u64) {}
    /// One source was parsed.
    fn parsed(&self, _bytes: u64) {}
}

/// An observer that shows nothing.
pub struct Silent;
impl IndexObserver for Silent {}

#[derive(Debug, Clone, Default, Serialize)]
pub struct HarnessReport {
    /// Sources discovered.
    pub sources: u64,
    /// Sources parsed in full this run.
    pub parsed: u64,
    /// Grown sources read from their tail.
    pub resumed: u64,
    pub unchanged: u64,
    /// Sessions written this run.
    pub sessions: u64,
    /// Turns written this run.
    pub turns: u64,
    pub skipped_lines: u64,
    /// Lines kept after invalid UTF-8 in them was replaced with U+FFFD.
    pub repaired_lines: u64,
    /// Sources read this run that held no session with any turn (e.g. an empty file).
    pub empty_sources: u64,
    pub bytes_read: u64,
    /// Every source, directory or file that could not be read (discovery's and the
    /// parsers'), by name and with the reason; the rest of the harness is indexed.
    pub unreadable: Vec<Unreadable>,
    pub problems: Vec<String>,
    /// Store roots looked at, with whether each exists (lossy paths in JSON).
    #[serde(serialize_with = "lossy_roots")]
    pub roots: Vec<(PathBuf, bool)>,
    /// Files found that could not be opened with what was supplied (see
    /// [`Discovery::locked`](crate::format::Discovery::locked)), and why (distinct, a few).
    pub locked: u64,
    pub locked_reasons: Vec<String>,
    /// Sessions read but not indexed: forgotten (`deja forget`) or excluded by the settings.
    pub forgotten: u64,
    pub excluded: u64,
}

pub use crate::discover::Unreadable;

/// A report must serialize whatever the paths are: a root need not be UTF-8.
fn lossy_roots<S: serde::Serializer>(roots: &[(PathBuf, bool)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(roots.len()))?;
    for (root, exists) in roots {
        seq.serialize_element(&(root.to_string_lossy(), exists))?;
    }
    seq.end()
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct IndexReport {
    pub harnesses: BTreeMap<String, HarnessReport>,
    pub elapsed_ms: u64,
    pub index_dir: PathBuf,
    /// A new generation was built and swapped in (a rebuild, a schema upgrade, a first build).
    pub new_generation: Option<String>,
    /// Sessions restored from the archive that no source produced (sources deleted, imports).
    pub restored: u64,
    /// Sessions whose source this run first saw deleted by its harness (kept: the
    /// archive has them), and sessions whose deleted source is back (`deja restore`).
    pub sources_gone: u64,
    pub sources_back: u64,
    /// Sessions removed because the settings' exclusions changed and now exclude them.
    pub purged: u64,
    /// Sessions copied into the archive from an index that predates it (once).
    pub seeded: u64,
    /// Archive segments that could not be read to their end.
    pub archive_problems: Vec<String>,
    /// Where the time went, stage by stage, in order (see [`Stage`]).
    pub stages: Vec<Stage>,
}

/// One stage of a run: how long it took and the process's peak resident memory when
/// it ended (Linux `VmHWM`; `None` elsewhere), so a report shows which stage set the peak.
#[derive(Debug, Clone, Serialize)]
pub struct Stage {
    pub name: &'static str,
    pub ms: u64,
    pub peak_rss_bytes: Option<u64>,
}

/// Times the stages of one run.
struct Stages {
    at: Instant,
    done: Vec<Stage>,
}

impl Stages {
    fn new() -> Stages {
        Stages { at: Instant::now(), done: Vec::new() }
    }
    /// Ends the stage running since the last call.
    fn end(&mut self, name: &'static str) {
        let now = Instant::now();
        self.done.push(Stage { name, ms: now.duration_since(self.at).as_millis() as u64, peak_rss_bytes: peak_rss_bytes() });
        self.at = now;
    }
}

/// The process's peak resident set so far (`VmHWM` of `/proc/self/status`).
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?.trim().trim_end_matches("kB").trim().parse::<u64>().ok()?;
    Some(kb << 10)
}

impl IndexReport {
    pub fn total_sources(&self) -> u64 {
        self.harnesses.values().map(|h| h.sources).sum()
    }
    pub fn changed(&self) -> bool {
        self.harnesses.values().any(|h| h.parsed + h.resumed > 0) || self.restored + self.purged > 0
    }
    /// Every path that could not be read, with its harness.
    pub fn unreadable(&self) -> impl Iterator<Item = (&str, &Unreadable)> {
        self.harnesses.iter().flat_map(|(id, h)| h.unreadable.iter().map(move |u| (id.as_str(), u)))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum IndexRunError {
    #[error("another deja process is writing the index")]
    Busy,
    #[error(transparent)]
    Index(#[from] IndexError),
}

impl From<crate::archive::ArchiveError> for IndexRunError {
    fn from(e: crate::archive::ArchiveError) -> Self {
        IndexRunError::Index(e.into())
    }
}

enum Plan {
    Full,
    Tail {
        resume: Resume,
        /// Who gave the title the index holds (the manifest's [`TailEntry`]).
        title_by: TitleBy,
        prefix: Prefix,
        sessions: u32,
    },
    /// The parser gets the cursor it returned last time and emits only the sessions
    /// changed since; each replaces its earlier copy, the rest stay as indexed.
    Cursor {
        sessions: u32,
    },
}

/// What a tail read knows of the prefix it continues.
enum Prefix {
    /// Hashed just now (the source grew): extended over what the tail reads.
    Verified(Box<Xxh3>),
    /// The source is as it was when hashed (only its side parts changed): this hash,
    /// while the tail reads nothing new.
    Unchanged(u64),
}

struct Job {
    adapter: &'static dyn HarnessFormat,
    src: SourceRef,
    size: u64,
    mtime: i64,
    parts_fp: u64,
    plan: Plan,
}

struct Parsed {
    job: usize,
    /// Each session with what a parsing thread prepared of it (`None` for a tail, which
    /// continues what only the writer can read).
    result: Result<(Vec<ReadSession>, ParseStats), FormatError>,
}

/// A session as a parsing thread hands it on, with what it prepared of it and the turn
/// number after the parser's last one (before `normalize` dropped any turn: a tail is
/// numbered on from there, as a whole read numbers it).
type ReadSession = (Session, Option<Prepared>, u32);

/// A session made ready on a parsing thread to be written whole: its metadata, its
/// archive lines and every index document it has (turns, the session document, work
/// records). The one writer thread then only hands them on, so building documents and
/// mining records runs on every core rather than serializing the pipeline behind it.
struct Prepared {
    meta: SessionMeta,
    /// NDJSON lines (a reset, then every turn), each ending in a newline.
    archive_lines: Vec<u8>,
    lines: u64,
    docs: Vec<TantivyDocument>,
}

impl Prepared {
    fn of(f: &Fields, s: &Session, source_key: &str) -> Prepared {
        let meta = crate::tail::whole_meta(s, source_key);
        let (archive_lines, lines) = crate::archive::session_lines(&meta, &s.turns);
        let docs = whole_session_documents(f, s, &meta);
        Prepared { meta, archive_lines, lines, docs }
    }
}

/// Holds the writer lock for the life of the value.
pub struct WriterLock {
    _file: File,
}

impl WriterLock {
    pub fn acquire(paths: &IndexPaths, wait: bool, observer: &dyn IndexObserver) -> Result<WriterLock, IndexRunError> {
        create_private_dir(&paths.root).map_err(|source| IndexError::Io { path: paths.root.clone(), source })?;
        let lock_path = paths.lock();
        let file = crate::fsutil::open_private(&lock_path, File::options().create(true).truncate(false).write(true))
            .map_err(|source| IndexError::Io { path: lock_path.clone(), source })?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) if !wait => return Err(IndexRunError::Busy),
            Err(std::fs::TryLockError::WouldBlock) => {
                observer.waiting();
                file.lock().map_err(|source| IndexError::Io { path: lock_path.clone(), source })?;
            }
            Err(std::fs::TryLockError::Error(source)) => return Err(IndexError::Io { path: lock_path, source }.into()),
        }
        Ok(WriterLock { _file: file })
    }
}

/// Creates `dir` (and parents) with mode 0700, tightening an existing `dir`
/// ([`crate::fsutil::private_dir`]).
pub fn create_private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    crate::fsutil::private_dir(dir)
}

/// The doc store holds session metadata, work records and each turn's tool, files and
/// edit (turn text is the archive's, since schema 5). A search reads one block per
/// session it shows, so blocks are small and quick to decompress: 32 KiB at level 3
/// against 128 KiB at level 7 took the mixed-query end-to-end p50 on the 1 GB
/// benchmark corpus from about 23 to 19 ms, for a store of 36.8 MB instead of 30.7 MB.
const DOCSTORE_BLOCK_BYTES: usize = 32 << 10;
const DOCSTORE_ZSTD_LEVEL: i32 = 3;

/// The indexing threads and their shared memory budget. Two threads keep both cores of
/// a small machine busy (parsing runs beside them on rayon); the budget bounds how much
/// a thread buffers before writing a segment, and so most of the peak memory.
const WRITER_THREADS: usize = 2;
/// `DEJA_INDEX_THREADS` overrides [`WRITER_THREADS`] (1 to this many): a bigger machine
/// can use more, and tests index one history with different segment layouts.
const MAX_WRITER_THREADS: usize = 8;
/// 128 MB rather than 192: a build's peak memory is what the rest of the run holds plus
/// about this much, and the rest grows with the number of sources (the manifest, the
/// jobs). On the 5 GB benchmark corpus (116k sources) 192 MB peaked at 476 MB, 128 MB
/// at 342 MB, with no slower build (more, smaller segments: 40 instead of 26 there,
/// 9 instead of 6–8 at 1 GB; `docs/benchmarks.md`).
const WRITER_BUDGET_BYTES: usize = 128 << 20;

/// How segments are merged (see [`SMALL_SEGMENT_DOCS`]).
///
/// A new generation is built without merging at all. Merging re-reads and rewrites
/// what was just written: with tantivy's default policy the build of the 1 GB benchmark
/// corpus spent its last ~18 s of 45 on one core merging, its memory rose with the
/// segments it read, and the cost grew faster than the corpus. Unmerged, a build costs
/// what its documents cost, and leaves one segment per flushed writer buffer.
///
/// A refresh merges only small segments (what refreshes and the watcher commit), so
/// they do not pile up, and never the large ones a build wrote: a refresh never waits
/// for a merge much bigger than the few segments it adds up.
fn merge_policy(fresh: bool) -> Box<dyn tantivy::indexer::MergePolicy> {
    if fresh {
        return Box::new(tantivy::indexer::NoMergePolicy);
    }
    let mut policy = tantivy::indexer::LogMergePolicy::default();
    policy.set_max_docs_before_merge(SMALL_SEGMENT_DOCS);
    // Deleted documents count in BM25 statistics until merged away: a segment of small
    // ones that is a third deleted is merged even alone.
    policy.set_del_docs_ratio_before_merge(0.33);
    Box::new(policy)
}

/// Segments of at most this many documents are merged by refreshes; a build's flushed
/// segments are larger, and so are what eight small ones merge into.
const SMALL_SEGMENT_DOCS: usize = 25_000;

/// `DEJA_WRITER_BUDGET_MB` overrides [`WRITER_BUDGET_BYTES`] (for the benchmarks that
/// trade memory for segments).
fn writer_budget(env: &StoreEnv) -> usize {
    env.var("DEJA_WRITER_BUDGET_MB")
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|mb| (16..=4096).contains(mb))
        .map_or(WRITER_BUDGET_BYTES, |mb| mb << 20)
}

/// The indexing threads: `DEJA_INDEX_THREADS` when it is a number from 1 to
/// [`MAX_WRITER_THREADS`], else [`WRITER_THREADS`].
fn writer_threads(env: &StoreEnv) -> usize {
    env.var("DEJA_INDEX_THREADS")
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| (1..=MAX_WRITER_THREADS).contains(n))
        .unwrap_or(WRITER_THREADS)
}

/// Opens (or creates) a generation's index for writing.
pub(crate) fn open_for_write(paths: &IndexPaths) -> Result<Index, IndexError> {
    let dir = paths.tantivy();
    create_private_dir(&dir).map_err(IndexError::io(&dir))?;
    let index = if paths.exists() {
        Index::open_in_dir(&dir).map_err(IndexError::tantivy(&dir))?
    } else {
        let (schema, _) = build_schema();
        let settings = tantivy::IndexSettings {
            docstore_compression: tantivy::store::Compressor::Zstd(tantivy::store::ZstdCompressor {
                compression_level: Some(DOCSTORE_ZSTD_LEVEL),
            }),
            docstore_blocksize: DOCSTORE_BLOCK_BYTES,
            ..tantivy::IndexSettings::default()
        };
        Index::builder().schema(schema).settings(settings).create_in_dir(&dir).map_err(IndexError::tantivy(&dir))?
    };
    register_tokenizer(&index);
    // Every search refreshes through here: write the version only when it changed.
    if paths.schema_version() != Some(SCHEMA_VERSION) {
        crate::fsutil::write_private(&paths.version(), format!("{SCHEMA_VERSION}\n").as_bytes()).map_err(IndexError::io(&paths.gen))?;
    }
    // Files tantivy or an older deja wrote with the umask's modes.
    crate::fsutil::tighten_files(&dir).and_then(|()| crate::fsutil::tighten_files(&paths.gen)).map_err(IndexError::io(&dir))?;
    Ok(index)
}

/// The serving generation can be refreshed in place: it is complete (its manifest was
/// saved after a commit) and of this schema version.
pub(crate) fn refreshable(serving: &IndexPaths) -> bool {
    serving.exists() && serving.manifest().exists() && serving.schema_version() == Some(SCHEMA_VERSION)
}

/// The next index run will build a new generation (a full build) rather than refresh
/// the serving one: it is incomplete, of another schema version, or a rebuild of it did
/// not finish.
pub fn needs_new_generation(paths: &IndexPaths) -> bool {
    let serving = IndexPaths::new(&paths.root);
    !refreshable(&serving) || serving.rebuilding().exists()
}

/// Another process holds the writer lock now.
pub fn writer_busy(paths: &IndexPaths) -> bool {
    let Ok(file) = File::options().read(true).write(true).open(paths.lock()) else { return false };
    matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock))
}

/// Names and prepares the directory of a new generation: the one a crashed rebuild
/// left unfinished (started again from empty), else the next number.
fn start_generation(serving: &IndexPaths) -> Result<IndexPaths, IndexError> {
    let root = &serving.root;
    let pending = std::fs::read_to_string(serving.rebuilding()).ok().map(|s| s.trim().to_string());
    let name = match pending
        .filter(|n| n.starts_with("gen-") && !n.contains(['/', '\\']) && Some(n.as_str()) != serving.generation_name().as_deref())
    {
        Some(n) => n,
        None => format!("gen-{}", generations(root).into_iter().map(|(n, _)| n).max().unwrap_or(0) + 1),
    };
    let target = serving.generation(&name);
    if target.gen.exists() {
        std::fs::remove_dir_all(&target.gen).map_err(IndexError::io(&target.gen))?;
    }
    create_private_dir(&target.gen).map_err(IndexError::io(&target.gen))?;
    crate::fsutil::write_private(&serving.rebuilding(), name.as_bytes()).map_err(IndexError::io(root))?;
    Ok(target)
}

/// The `gen-<n>` directories under the index root.
fn generations(root: &std::path::Path) -> Vec<(u64, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(root) else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let n = e.file_name().to_str()?.strip_prefix("gen-")?.parse::<u64>().ok()?;
            Some((n, e.path()))
        })
        .collect()
}

/// Removes generations that no longer serve (swapped out by an earlier run, or left
/// half-built by a crash), and the files of a pre-generation index once a generation
/// replaced it. Done at the start of the next writer run rather than right after the
/// swap, so a reader that looked up `current` just before the swap still finds its files.
fn remove_retired_generations(serving: &IndexPaths) {
    let Some(current) = serving.generation_name() else { return };
    for (_, dir) in generations(&serving.root) {
        if dir.file_name().is_some_and(|n| n.to_string_lossy() != current) {
            // Best effort: a generation that cannot be removed now is tried again next run.
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    let legacy = IndexPaths { root: serving.root.clone(), gen: serving.root.clone() };
    let _ = std::fs::remove_dir_all(legacy.tantivy());
    for f in [legacy.manifest(), legacy.version(), legacy.work_dirs(), legacy.gen.join(EXCLUSIONS_FILE)] {
        let _ = std::fs::remove_file(f);
    }
}

/// Makes `target` the serving generation: the pointer is replaced atomically (a
/// temporary file, fsynced, renamed), then the rebuild marker goes.
fn swap_in(target: &IndexPaths) -> Result<(), IndexError> {
    let name = target.generation_name().unwrap_or_default();
    crate::fsutil::write_private(&target.current(), format!("{name}\n").as_bytes()).map_err(IndexError::io(&target.root))?;
    sync_dir(&target.root).map_err(IndexError::io(&target.root))?;
    let _ = std::fs::remove_file(target.rebuilding());
    Ok(())
}

fn sync_dir(dir: &std::path::Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Holds a rebuild at a named point when `DEJA_FAILPOINT` names it (see the module doc).
fn failpoint(env: &StoreEnv, paths: &IndexPaths, point: &str) {
    if env.var("DEJA_FAILPOINT") != Some(point) {
        return;
    }
    let _ = std::fs::write(paths.root.join(format!("failpoint-{point}")), std::process::id().to_string());
    loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

/// The settings' exclusion fingerprint a generation was last made consistent with.
const EXCLUSIONS_FILE: &str = "exclusions";

fn stored_exclusions(paths: &IndexPaths) -> u64 {
    std::fs::read_to_string(paths.gen.join(EXCLUSIONS_FILE)).ok().and_then(|s| u64::from_str_radix(s.trim(), 16).ok()).unwrap_or(0)
}

/// Copies an index built before the archive existed into the archive, once, so the
/// sessions only it still holds survive the first rebuild.
fn seed_archive(archive: &Archive, serving: &IndexPaths) -> Result<u64, IndexError> {
    if archive.is_seeded() {
        return Ok(0);
    }
    let copied = if serving.exists() { super::seed::copy_index_into_archive(serving, archive)? } else { 0 };
    archive.mark_seeded()?;
    Ok(copied)
}

/// Brings the index up to date with every store (see the module doc).
pub fn run_index(
    env: &StoreEnv,
    paths: &IndexPaths,
    req: &IndexRequest,
    observer: &dyn IndexObserver,
) -> Result<IndexReport, IndexRunError> {
    let started = Instant::now();
    crate::redact::prefer_throughput();
    let _lock = WriterLock::acquire(paths, req.wait, observer)?;
    let mut stages = Stages::new();
    let settings = crate::config::Settings::load(env).map_err(IndexError::from)?;
    let exclusions = &settings.exclusions;
    let archive = Archive::of(env);
    let tombstones = load_tombstones(&tombstones_path(env));
    // Read now, under the lock: another writer may have swapped generations meanwhile.
    let serving = IndexPaths::new(&paths.root);
    remove_retired_generations(&serving);
    let mut report = IndexReport { index_dir: paths.root.clone(), ..IndexReport::default() };
    // An index whose turn text was in an archive that is gone (deleted, or another data
    // directory now) is built again from the sources.
    let archive_lost = !archive.is_seeded() && serving.exists() && serving.schema_version().is_some_and(|v| v >= 5);
    report.seeded = seed_archive(&archive, &serving)?;
    // Segments written before frames are written again framed, once: a search reading
    // one session from them would decompress all of them.
    if archive.has_unframed_segments()? {
        archive.rewrite(|_| false)?;
        stages.end("archive framing");
    }
    let fresh = req.rebuild || archive_lost || serving.rebuilding().exists() || !refreshable(&serving);
    let target = if fresh { start_generation(&serving)? } else { serving.clone() };
    // Until a first generation is committed, searches elsewhere have nothing to read:
    // tell them how far the build is. A rebuild beside a serving generation is silent.
    let recorder = super::progress::Recorder::new(observer, &target, fresh && !(serving.exists() && serving.manifest().exists()));
    let observer: &dyn IndexObserver = &recorder;
    let index = open_for_write(&target)?;
    target.link_archive(&archive.dir)?;
    let fields = super::schema::fields_of(&index.schema()).map_err(IndexError::tantivy(&target.root))?;
    let opts = ParseOptions::from_env(env);
    let norm = NormalizeOptions::from_env(env);

    let adapters: Vec<&'static dyn HarnessFormat> = crate::format::registry()
        .into_iter()
        .filter(|a| req.harnesses.as_ref().is_none_or(|hs| hs.iter().any(|h| h == a.info().id)))
        .collect();
    // Adapters that look inside other harnesses' working directories run second, so a
    // directory first recorded in this very run is looked in too.
    let (late, early): (Vec<_>, Vec<_>) = adapters.into_iter().partition(|a| a.discovers_in_work_dirs());
    let known = WorkDirs::load(&serving.work_dirs());
    // A refresh that finds nothing changed is mostly this: reading the manifest, walking
    // the stores and one stat per source — so all three run in parallel.
    let (manifest, discoveries) = rayon::join(|| Manifest::load(&target.manifest()), || discover_all(&early, env));
    let manifest = manifest.map_err(IndexError::io(&target.gen))?;

    // The generation was last made consistent with other exclusions (or none).
    let exclusions_changed = exclusions.fingerprint() != stored_exclusions(&target);
    // Exclusions added since this generation last honoured them: what they now exclude goes.
    let purge = if !fresh && exclusions_changed { excluded_sessions(&target, exclusions)? } else { Vec::new() };
    let mut found = Found::default();
    let jobs = plan_all(discoveries, &manifest, &mut report, &mut found);
    stages.end("discover");
    // With nothing to parse, nothing new is learned: the late adapters can be planned now
    // against the directories already known, and an unchanged refresh stops here.
    let late_jobs = if jobs.is_empty() {
        let env = env.clone().with_work_dirs(known.newest());
        Some(plan_all(discover_all(&late, &env), &manifest, &mut report, &mut found))
    } else {
        None
    };
    let mut job_count = jobs.len() as u64 + late_jobs.as_ref().map_or(0, |j| j.len() as u64);
    let mut total_bytes: u64 = jobs.iter().chain(late_jobs.iter().flatten()).map(|j| j.size).sum();
    observer.start(job_count, total_bytes);
    if job_count == 0 && !fresh && purge.is_empty() {
        if exclusions_changed {
            save_exclusions(&target, exclusions)?;
        }
        (report.sources_gone, report.sources_back) = notice_gone(&target, &archive, &manifest, &found)?;
        report.elapsed_ms = started.elapsed().as_millis() as u64;
        return Ok(report);
    }

    let threads = writer_threads(env);
    // tantivy refuses a thread less than 15 MB (`DEJA_WRITER_BUDGET_MB=16` with two).
    let budget = writer_budget(env).max(threads * 15_000_000);
    let mut writer: IndexWriter = index.writer_with_num_threads(threads, budget).map_err(IndexError::tantivy(&target.root))?;
    writer.set_merge_policy(merge_policy(fresh));
    let view_searcher = if fresh { None } else { IndexView::open_generation(&target).ok().map(|v| (v.searcher(), v)) };
    let mut run = Run {
        writer: &writer,
        fields: &fields,
        view: view_searcher.as_ref(),
        paths: &target,
        opts: &opts,
        norm: &norm,
        manifest,
        report,
        // Every line this run archives was normalized, so redacted, by this binary.
        archive: {
            let mut w = archive.writer();
            w.redacted_with(crate::redact::fingerprint());
            w
        },
        tombstones: &tombstones,
        exclusions,
        seen: HashSet::new(),
        fresh,
        written: HashSet::new(),
    };
    if !purge.is_empty() {
        for key in &purge {
            run.writer.delete_term(Term::from_field_text(fields.sid, key));
        }
        run.report.purged = purge.len() as u64;
    }
    let mut learned = WorkDirs::default();
    run.index_jobs(&jobs, observer, &mut learned)?;
    stages.end("parse and write");
    let late_jobs = match late_jobs {
        Some(j) => j,
        None => {
            let mut dirs = known.clone();
            dirs.extend(&learned);
            let env = env.clone().with_work_dirs(dirs.newest());
            let j = plan_all(discover_all(&late, &env), &run.manifest, &mut run.report, &mut found);
            job_count += j.len() as u64;
            total_bytes += j.iter().map(|j| j.size).sum::<u64>();
            observer.start(job_count, total_bytes);
            j
        }
    };
    run.index_jobs(&late_jobs, observer, &mut learned)?;
    stages.end("work-directory stores");
    if fresh {
        failpoint(env, &target, "rebuild-parsed");
        run.restore_from_archive(&archive)?;
        failpoint(env, &target, "rebuild-restored");
        stages.end("restore from archive");
    }
    let Run { manifest, mut report, archive: segment, .. } = run;

    // The archive first: a crash after this re-reads sources whose turns are archived
    // already, which folds away; the other order could index what the archive lacks.
    segment.commit()?;
    stages.end("archive commit");
    if fresh {
        failpoint(env, &target, "rebuild-archived");
    }
    writer.commit().map_err(IndexError::tantivy(&target.root))?;
    stages.end("index commit");
    // Merges run in the background; wait so the process exits with a compact index.
    writer.wait_merging_threads().map_err(IndexError::tantivy(&target.root))?;
    stages.end("merges");
    manifest.save(&target.manifest()).map_err(IndexError::io(&target.gen))?;
    if !learned.is_empty() || fresh {
        let mut dirs = known;
        dirs.extend(&learned);
        dirs.save(&target.work_dirs()).map_err(IndexError::io(&target.gen))?;
    }
    if fresh || exclusions_changed {
        save_exclusions(&target, exclusions)?;
    }
    // What the archive keeps: nothing forgotten, nothing the exclusions now cover.
    let dead = |k: &crate::archive::TurnKey| {
        tombstones.contains(&k.session_key()) || exclusions.excluded_by(&k.harness, k.project.as_deref()).is_some()
    };
    if fresh {
        failpoint(env, &target, "rebuild-committed");
        swap_in(&target)?;
        report.new_generation = target.generation_name();
    }
    stages.end("manifest and swap");
    // After the swap: the sessions of a source gone are looked up in the generation
    // that now serves. A new generation's manifest has no gone source; the rebuild
    // noticed them as it restored them from the archive.
    let (gone, back) = notice_gone(&target, &archive, &manifest, &found)?;
    report.sources_gone += gone;
    report.sources_back += back;
    let segments = archive.segments()?.len();
    if !purge.is_empty() || (fresh && segments > 1) {
        // A new generation re-archived every session its sources hold: fold the copies
        // (and what exclusions added since cover) away, or each rebuild would double it.
        archive.rewrite(dead)?;
        stages.end("archive fold");
    } else if segments > crate::archive::COMPACT_AFTER_SEGMENTS {
        archive.compact(dead)?;
        stages.end("archive compaction");
    }
    report.elapsed_ms = started.elapsed().as_millis() as u64;
    report.stages = stages.done;
    Ok(report)
}

fn save_exclusions(paths: &IndexPaths, exclusions: &Exclusions) -> Result<(), IndexError> {
    crate::fsutil::write_private(&paths.gen.join(EXCLUSIONS_FILE), format!("{:x}\n", exclusions.fingerprint()).as_bytes())
        .map_err(IndexError::io(&paths.gen))
}

/// The sessions of a generation the exclusions now exclude.
fn excluded_sessions(paths: &IndexPaths, exclusions: &Exclusions) -> Result<Vec<String>, IndexError> {
    if exclusions.is_empty() || !paths.exists() {
        return Ok(Vec::new());
    }
    let view = IndexView::open_generation(paths)?;
    Ok(view
        .all_sessions(None)?
        .into_iter()
        .filter(|m| exclusions.excluded_by(&m.harness, m.project.as_deref()).is_some())
        .map(|m| m.key())
        .collect())
}

fn term_query(field: tantivy::schema::Field, text: &str) -> Box<dyn Query> {
    Box::new(TermQuery::new(Term::from_field_text(field, text), IndexRecordOption::Basic))
}

/// What to do with one discovered source.
enum Planned {
    Unchanged,
    Unreadable(Unreadable),
    Job(Box<Job>),
}

/// Compares a source's size and mtime with the manifest: unchanged, grown (read the
/// tail, when the prefix read before is intact) or new/rewritten (parse in full).
fn plan_source(
    adapter: &'static dyn HarnessFormat,
    src: SourceRef,
    meta: std::io::Result<std::fs::Metadata>,
    manifest: &Manifest,
) -> Planned {
    let meta = match meta {
        Ok(m) => m,
        Err(e) => return Planned::Unreadable(Unreadable { path: src.path.clone(), reason: e.to_string() }),
    };
    let key = src.manifest_key();
    let (size, mtime) = (meta.len(), mtime_ns(&meta));
    let parts_fp = crate::stamp::parts_fingerprint(&src.parts);
    let plan = match manifest.get(&key) {
        Some(e) if e.size == size && e.mtime_ns == mtime && e.parts_fp == parts_fp => match &e.refused {
            // Refusing again would mean decoding up to the cap again, on every refresh;
            // a cap changed since is worth one more try.
            Some(r) if r.cap == crate::read::DecodeLimit::current().max_bytes => {
                return Planned::Unreadable(Unreadable {
                    path: src.path.clone(),
                    reason: format!("{} (unchanged since; not read again)", r.reason),
                })
            }
            Some(_) => Plan::Full,
            None => return Planned::Unchanged,
        },
        Some(e) if e.refused.is_some() => Plan::Full,
        Some(e) if e.cursor.is_some() => Plan::Cursor { sessions: e.sessions },
        // Only side data changed (a side database naming the title): the log is as it
        // was, so its tail is read (nothing new in it) for the parser to take that data
        // again; neither a re-parse nor a read of the prefix.
        Some(e)
            if src.append_only
                && src.side_parts
                && size == e.size
                && mtime == e.mtime_ns
                && e.sessions == 1
                && e.session_id.is_some()
                && e.tail.is_some() =>
        {
            Plan::Tail { resume: resume_of(e), title_by: title_by_of(e), prefix: Prefix::Unchanged(e.prefix_hash), sessions: e.sessions }
        }
        // Only with the state the reader returned: a tail is read from it, never with the
        // head read again, so without it (a manifest line of an earlier release) the
        // source is read whole once.
        Some(e) if src.append_only && size > e.size && e.sessions == 1 && e.session_id.is_some() && e.tail.is_some() => {
            match verify_prefix(&src.path, e.offset, e.prefix_hash) {
                Some(hasher) => Plan::Tail {
                    resume: resume_of(e),
                    title_by: title_by_of(e),
                    prefix: Prefix::Verified(Box::new(hasher)),
                    sessions: e.sessions,
                },
                None => Plan::Full,
            }
        }
        _ => Plan::Full,
    };
    let src = match &plan {
        Plan::Tail { resume, .. } => SourceRef { resume: Some(resume.clone()), ..src },
        Plan::Cursor { .. } => SourceRef { cursor: manifest.get(&key).and_then(|e| e.cursor.clone()), ..src },
        Plan::Full => src,
    };
    Planned::Job(Box::new(Job { adapter, src, size, mtime, parts_fp, plan }))
}

/// Where a tail read of the source `e` describes starts, with the state its reader left.
fn resume_of(e: &SourceEntry) -> Resume {
    Resume {
        offset: e.offset,
        next_seq: e.next_seq,
        session_id: e.session_id.clone().unwrap_or_default(),
        state: e.tail.as_ref().map(|t| t.state.clone()).unwrap_or_default(),
    }
}

/// Who gave the title the index holds for the session of the source `e` describes.
fn title_by_of(e: &SourceEntry) -> TitleBy {
    e.tail.as_ref().map_or(TitleBy::Prompt, |t| t.title_by)
}

/// Parses one source, turning a panicking parser into an error for that source.
fn parse_one(job: &Job, opts: &ParseOptions) -> Result<(Vec<Session>, ParseStats), FormatError> {
    let mut sessions: Vec<Session> = Vec::new();
    let outcome = catch_unwind(AssertUnwindSafe(|| job.adapter.parse(&job.src, opts, &mut sessions)));
    match outcome {
        Ok(Ok(stats)) => Ok((sessions, stats)),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(FormatError::corrupt(&job.src.path, format!("the {} parser panicked; source skipped", job.adapter.info().id))),
    }
}

/// Hashes the first `len` bytes and returns the hasher (for extending) when the
/// digest equals `want`.
fn verify_prefix(path: &std::path::Path, len: u64, want: u64) -> Option<Xxh3> {
    use std::io::Read;
    let mut f = File::open(path).ok()?.take(len);
    let mut hasher = Xxh3::new();
    let mut buf = vec![0u8; 256 << 10];
    let mut read = 0u64;
    loop {
        let n = f.read(&mut buf).ok()?;
        if n == 0 {
            break;
        }
        read += n as u64;
        hasher.update(&buf[..n]);
    }
    (read == len && hasher.digest() == want).then_some(hasher)
}

fn extend_hash(hasher: &mut Xxh3, path: &std::path::Path, from: u64, to: u64) -> std::io::Result<u64> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = File::open(path)?;
    f.seek(SeekFrom::Start(from))?;
    let mut buf = Vec::new();
    f.take(to.saturating_sub(from)).read_to_end(&mut buf)?;
    hasher.update(&buf);
    Ok(hasher.digest())
}

/// Folds results (and late exit statuses) read from a log's tail into the calls an
/// earlier pass already indexed, matched by call id ([`crate::tail::fold_late_results`]),
/// so a call whose result arrived after an incremental read still ends up as one turn,
/// and rewrites those calls' documents; the indexed turns from `next_seq` on, which the
/// tail replaces, take nothing. Returns the calls rewritten and what was folded.
fn fold_into_indexed_calls(
    writer: &IndexWriter,
    f: &Fields,
    view: &IndexView,
    s: &mut Session,
    source_key: &str,
    next_seq: u32,
) -> Result<(Vec<Turn>, crate::tail::Folded), IndexError> {
    let sid = s.key();
    // The indexed turns are looked up only when the tail names a call.
    let mut indexed = match s.turns.iter().any(|t| t.tool.as_ref().is_some_and(|x| x.call_id.is_some())) {
        true => crate::tail::calls_by_id(&view.session_turns(&sid)?, next_seq),
        false => Default::default(),
    };
    let folded = crate::tail::fold_late_results(&mut indexed, s);
    let sid_hash = xxhash_rust::xxh3::xxh3_64(sid.as_bytes());
    let mut rewritten = Vec::with_capacity(folded.calls.len());
    for id in &folded.calls {
        let Some(call) = indexed.get(id) else { continue };
        rewritten.push(call.clone());
        writer
            .delete_query(Box::new(BooleanQuery::new(vec![
                (Occur::Must, term_query(f.sid, &sid)),
                (Occur::Must, term_query(f.kind, KIND_TURN)),
                (Occur::Must, Box::new(TermQuery::new(Term::from_field_u64(f.seq, call.seq as u64), IndexRecordOption::Basic))),
            ])))
            .map_err(IndexError::tantivy(&view.paths.root))?;
        let time = call.time.map_or(0, |t| t.0);
        writer
            .add_document(turn_doc(f, &sid, sid_hash, &s.harness, source_key, call, time))
            .map_err(IndexError::tantivy(&view.paths.root))?;
    }
    Ok((rewritten, folded))
}

/// Adds a session's `error` and `fix` records (see [`super::records`]).
fn add_work_records(
    writer: &IndexWriter,
    f: &Fields,
    s: &Session,
    meta: &SessionMeta,
    source_key: &str,
    context: &[Turn],
) -> tantivy::Result<()> {
    let fallback_time = meta.updated.or(meta.started).map_or(0, |t| t.0);
    for d in super::records::work_documents(f, s, source_key, context, fallback_time) {
        writer.add_document(d)?;
    }
    Ok(())
}

fn add_session(writer: &IndexWriter, f: &Fields, s: &Session, meta: &SessionMeta, source_key: &str) -> tantivy::Result<()> {
    for d in session_documents(f, s, meta, source_key) {
        writer.add_document(d)?;
    }
    Ok(())
}

/// Every document of a session read whole: its turns, its session document and its
/// work records.
fn whole_session_documents(f: &Fields, s: &Session, meta: &SessionMeta) -> Vec<TantivyDocument> {
    let mut docs = session_documents(f, s, meta, &meta.path);
    let fallback_time = meta.updated.or(meta.started).map_or(0, |t| t.0);
    docs.extend(super::records::work_documents(f, s, &meta.path, &[], fallback_time));
    docs
}

/// Writes `sessions` into `dir` as an index of schema 4 or before held them: each
/// turn's text stored in its document, no archive named, its files in `dir` itself (the
/// layout before generations). For tests of the upgrade from such an index.
#[cfg(any(test, feature = "testkit"))]
pub fn write_index_storing_text(dir: &std::path::Path, sessions: &[Session], version: u32) -> Result<(), IndexError> {
    let paths = IndexPaths { root: dir.to_path_buf(), gen: dir.to_path_buf() };
    let tantivy_dir = paths.tantivy();
    create_private_dir(&tantivy_dir).map_err(IndexError::io(&tantivy_dir))?;
    let (schema, f) = super::schema::build_schema_storing_text();
    let index = Index::create_in_dir(&tantivy_dir, schema).map_err(IndexError::tantivy(&tantivy_dir))?;
    register_tokenizer(&index);
    let mut writer: IndexWriter = index.writer_with_num_threads(1, 15_000_000).map_err(IndexError::tantivy(&tantivy_dir))?;
    for s in sessions {
        let meta = crate::tail::whole_meta(s, &s.source.manifest_key());
        let mut docs = whole_session_documents(&f, s, &meta);
        // The turn documents come first, in the session's order.
        for (d, turn) in docs.iter_mut().zip(&s.turns) {
            if let Some(body) = f.body {
                d.add_text(body, &turn.text);
            }
        }
        for d in docs {
            writer.add_document(d).map_err(IndexError::tantivy(&tantivy_dir))?;
        }
    }
    writer.commit().map_err(IndexError::tantivy(&tantivy_dir))?;
    crate::fsutil::write_private(&paths.version(), format!("{version}\n").as_bytes()).map_err(IndexError::io(dir))
}

/// A session's turn documents and its session document.
fn session_documents(f: &Fields, s: &Session, meta: &SessionMeta, source_key: &str) -> Vec<TantivyDocument> {
    let sid = s.key();
    let sid_hash = xxhash_rust::xxh3::xxh3_64(sid.as_bytes());
    let fallback_time = meta.updated.or(meta.started).map_or(0, |t| t.0);
    let mut docs: Vec<TantivyDocument> = Vec::with_capacity(s.turns.len() + 1);
    for turn in &s.turns {
        docs.push(turn_doc(f, &sid, sid_hash, &s.harness, source_key, turn, fallback_time));
    }
    let meta_json = meta.stored_json();
    let mut d = doc!(
        f.kind => KIND_SESSION,
        f.sid => sid.as_str(),
        f.sid_hash => sid_hash,
        f.harness => s.harness.as_str(),
        f.source => source_key,
        f.time => fallback_time,
        f.extra => meta_json,
    );
    if let Some(t) = &meta.title {
        d.add_text(f.text, t);
    }
    if let Some(p) = &meta.project {
        d.add_text(f.text, p);
        super::records::add_project_terms(&mut d, f, p);
    }
    docs.push(d);
    docs
}

fn turn_doc(f: &Fields, sid: &str, sid_hash: u64, harness: &str, source_key: &str, turn: &Turn, fallback_time: i64) -> TantivyDocument {
    let mut d = doc!(
        f.kind => KIND_TURN,
        f.sid => sid,
        f.sid_hash => sid_hash,
        f.harness => harness,
        f.source => source_key,
        f.role => turn.role.as_str(),
        f.seq => turn.seq as u64,
        f.time => turn.time.map_or(fallback_time, |t| t.0),
    );
    for tag in work_tags(turn) {
        d.add_text(f.role, tag);
    }
    super::records::add_turn_terms(&mut d, f, turn);
    d.add_text(f.text, &turn.text);
    if let Some(cmd) = turn.tool.as_ref().and_then(|t| t.command.as_deref()) {
        d.add_text(f.text, cmd);
    }
    for file in &turn.files {
        d.add_text(f.text, &file.path);
    }
    if let Some(edit) = &turn.edit {
        d.add_text(f.text, &edit.path);
        d.add_text(f.text, &edit.old);
    }
    let extra = TurnExtra {
        tool: turn.tool.clone(),
        files: turn.files.clone(),
        edit: turn.edit.clone(),
        // The tree position is the archive's to keep: two random ids per turn that
        // barely compress (21 MB raw on the 1 GB corpus). Only a call still waiting for
        // its result keeps it here, because folding the result in later re-archives
        // the call from its indexed copy.
        node: turn.tool.as_ref().and_then(|t| t.call_id.as_ref()).and(turn.node.clone()),
        partial: turn.partial,
        role: turn.role,
    };
    d.add_text(f.extra, serde_json::to_string(&extra).unwrap_or_default());
    d
}

/// The `--role` names a turn answers to beyond its own role.
fn work_tags(turn: &Turn) -> Vec<&'static str> {
    let mut tags = Vec::new();
    if matches!(turn.role, Role::ToolCall | Role::ToolOutput) {
        tags.push("tool");
    }
    if let Some(tool) = &turn.tool {
        if let Some(cmd) = &tool.command {
            tags.push("command");
            if is_meaningful_command(cmd) {
                tags.push("meaningful");
            }
        }
        if tool.is_error || tool.exit.as_ref().is_some_and(|e| !e.succeeded()) {
            tags.push("error");
        }
    }
    if !turn.files.is_empty() {
        tags.push("files");
    }
    if turn.edit.is_some() {
        tags.push("edit");
    }
    if turn.partial {
        tags.push("partial");
    }
    tags
}

/// Discovers each adapter's sources and stats them, in parallel.
fn discover_all(adapters: &[&'static dyn HarnessFormat], env: &StoreEnv) -> Vec<Discovered> {
    adapters
        .par_iter()
        .map(|a| {
            let (d, mut unreadable) = crate::discover::collecting(|| a.discover(env));
            if a.discovers_in_work_dirs() {
                // It walks people's project trees, where a database volume owned by
                // another user is ordinary and no history: only what it found and could
                // not open is worth a word, not every directory it could not list.
                unreadable.retain(|u| !u.reason.starts_with(crate::discover::CANNOT_LIST));
            }
            let metas: Vec<std::io::Result<std::fs::Metadata>> = d.sources.par_iter().map(|s| std::fs::metadata(&s.path)).collect();
            Discovered { adapter: *a, discovery: d, unreadable, metas }
        })
        .collect()
}

/// One adapter's discovery: its sources (with their `stat`s) and the paths its walks
/// could not read.
struct Discovered {
    adapter: &'static dyn HarnessFormat,
    discovery: crate::format::Discovery,
    unreadable: Vec<Unreadable>,
    metas: Vec<std::io::Result<std::fs::Metadata>>,
}

/// Plans every discovered source against the manifest, filling each harness's report
/// with what discovery saw; returns the sources to read.
fn plan_all(discoveries: Vec<Discovered>, manifest: &Manifest, report: &mut IndexReport, found: &mut Found) -> Vec<Job> {
    let mut jobs = Vec::new();
    for Discovered { adapter, discovery, unreadable, metas } in discoveries {
        found.harnesses.insert(adapter.info().id.to_string());
        found.sources.extend(discovery.sources.iter().map(SourceRef::manifest_key));
        let hr = report.harnesses.entry(adapter.info().id.to_string()).or_default();
        hr.unreadable.extend(unreadable);
        hr.roots = discovery.roots.clone();
        hr.sources = discovery.sources.len() as u64;
        hr.locked = discovery.locked.len() as u64;
        for l in &discovery.locked {
            if hr.locked_reasons.len() < 5 && !hr.locked_reasons.contains(&l.reason) {
                hr.locked_reasons.push(l.reason.clone());
            }
        }
        // Planned in parallel: a grown log's prefix is re-hashed here.
        let planned: Vec<Planned> =
            discovery.sources.into_par_iter().zip(metas).map(|(src, meta)| plan_source(adapter, src, meta, manifest)).collect();
        for p in planned {
            match p {
                Planned::Unchanged => hr.unchanged += 1,
                Planned::Unreadable(u) => hr.unreadable.push(u),
                Planned::Job(job) => jobs.push(*job),
            }
        }
    }
    jobs
}

/// What discovery found this run, for noticing sources that are gone.
#[derive(Default)]
struct Found {
    /// The harnesses whose stores were walked.
    harnesses: HashSet<String>,
    /// Every source found, by manifest key.
    sources: HashSet<String>,
}

/// True when the source `key` (a path, or `path#row` for a row of a database) is no
/// longer on disk: neither the key as a path nor the file before a `#` exists. Only a
/// definite "not found" counts; a source that cannot be looked at is not called gone.
fn source_gone(key: &str) -> bool {
    let missing = |p: &str| matches!(std::fs::symlink_metadata(p), Err(e) if e.kind() == std::io::ErrorKind::NotFound);
    missing(key) && key.rmatch_indices('#').all(|(i, _)| missing(&key[..i]))
}

/// Updates the archive's ledger of sessions whose source is gone ([`Gone`]): a source
/// the manifest has, of a harness walked this run, that discovery did not find and that
/// is not on disk is gone (its sessions are looked up on `target`'s session documents);
/// a source the ledger names that discovery found again is back. Returns how many
/// sessions were noticed gone and how many came back.
fn notice_gone(target: &IndexPaths, archive: &Archive, manifest: &Manifest, found: &Found) -> Result<(u64, u64), IndexError> {
    let mut gone = Gone::load(&archive.dir).map_err(IndexError::io(&archive.dir))?;
    let named: HashSet<String> = gone.sources().into_iter().map(str::to_string).collect();
    let before = gone.len();
    for source in named.iter().filter(|s| found.sources.contains(*s)) {
        gone.returned(source);
    }
    let back = (before - gone.len()) as u64;
    let candidates: Vec<&SourceEntry> = manifest
        .entries()
        .filter(|e| e.sessions > 0 && found.harnesses.contains(&e.harness) && !found.sources.contains(&e.key) && !named.contains(&e.key))
        .filter(|e| source_gone(&e.key))
        .collect();
    let mut noticed = 0;
    if !candidates.is_empty() {
        let view = IndexView::open_generation(target)?;
        let searcher = view.searcher();
        let now = crate::time::Timestamp::now();
        for e in candidates {
            let q = BooleanQuery::new(vec![
                (Occur::Must, term_query(view.fields.kind, KIND_SESSION)),
                (Occur::Must, term_query(view.fields.source, &e.key)),
            ]);
            let addrs = searcher.search(&q, &tantivy::collector::DocSetCollector).map_err(IndexError::tantivy(&target.root))?;
            for addr in addrs {
                let doc: TantivyDocument = searcher.doc(addr).map_err(IndexError::tantivy(&target.root))?;
                let Some(meta) =
                    doc.get_first(view.fields.extra).and_then(|v| tantivy::schema::Value::as_str(&v)).and_then(SessionMeta::from_stored)
                else {
                    continue;
                };
                if meta.machine.is_none() && gone.notice(meta.key(), e.key.clone(), now) {
                    noticed += 1;
                }
            }
        }
    }
    if noticed + back > 0 {
        gone.save(&archive.dir).map_err(IndexError::io(&archive.dir))?;
    }
    Ok((noticed, back))
}

/// One indexing run's writer and the state its jobs update.
struct Run<'a> {
    writer: &'a IndexWriter,
    fields: &'a Fields,
    view: Option<&'a (tantivy::Searcher, IndexView)>,
    paths: &'a IndexPaths,
    opts: &'a ParseOptions,
    norm: &'a NormalizeOptions,
    manifest: Manifest,
    report: IndexReport,
    /// This run's archive segment; every session indexed is written here first.
    archive: SegmentWriter,
    tombstones: &'a HashSet<String>,
    exclusions: &'a Exclusions,
    /// Every session key a source produced this run (forgotten and excluded ones too).
    seen: HashSet<String>,
    /// Building a new generation: it holds nothing from before this run.
    fresh: bool,
    /// In a new generation, the hashes of the session keys written so far: only a session
    /// written a second time (moved to another source) has documents to delete.
    written: HashSet<u64>,
}

impl Run<'_> {
    /// Parses `jobs` in parallel and writes what they produced, in order of arrival;
    /// every absolute working directory a session names goes into `learned`.
    fn index_jobs(&mut self, jobs: &[Job], observer: &dyn IndexObserver, learned: &mut WorkDirs) -> Result<(), IndexRunError> {
        if jobs.is_empty() {
            return Ok(());
        }
        let (writer, fields, paths, norm) = (self.writer, self.fields, self.paths, self.norm);
        let view_searcher = self.view;
        let (manifest, report, archive, seen) = (&mut self.manifest, &mut self.report, &mut self.archive, &mut self.seen);
        // A delete is remembered by the writer until the commit, and then looked up in
        // every segment: in a new generation, which holds no document from before this
        // run, only a session written twice needs one (2 per session cost the 5 GB
        // benchmark build over 100 MB and a slower commit).
        let (fresh, written) = (self.fresh, &mut self.written);
        let mut replaces = move |key: &str| !fresh || !written.insert(xxhash_rust::xxh3::xxh3_64(key.as_bytes()));
        let (tombstones, exclusions) = (self.tombstones, self.exclusions);
        let opts = self.opts;
        let (tx, rx) = sync_channel::<Parsed>(32);
        // The queue counts sources; the gate bounds their bytes (see `gate`).
        let gate = ByteGate::new(IN_FLIGHT_BYTES);
        std::thread::scope(|scope| -> Result<(), IndexRunError> {
            let jobs_ref = jobs;
            let opts_ref = opts;
            let gate_ref = &gate;
            scope.spawn(move || {
                jobs_ref.par_iter().enumerate().for_each_with(tx, |tx, (i, job)| {
                    gate_ref.acquire(job.size);
                    // Normalizing (injected text, redaction, caps) is per session and
                    // pure: it runs here, on the parsing threads, not on the one writer.
                    let result = parse_one(job, opts_ref).map(|(sessions, stats)| {
                        // Sessions written whole are made ready here too (see [`Prepared`]);
                        // a tail continues what the index holds, which only the writer reads.
                        let whole = !matches!(job.plan, Plan::Tail { .. });
                        let key = job.src.manifest_key();
                        let sessions = sessions
                            .into_iter()
                            .map(|mut s| {
                                let next_seq = s.turns.iter().map(|t| t.seq + 1).max().unwrap_or(0);
                                normalize(&mut s, norm, job.adapter.info().injected);
                                let p = whole.then(|| Prepared::of(fields, &s, &key));
                                (s, p, next_seq)
                            })
                            .collect::<Vec<_>>();
                        (sessions, stats)
                    });
                    observer.parsed(job.size);
                    let _ = tx.send(Parsed { job: i, result });
                });
            });
            let _close = CloseOnDrop(&gate);
            for parsed in rx {
                let job = &jobs[parsed.job];
                let _permit = gate.permit(job.size);
                let id = job.adapter.info().id;
                let key = job.src.manifest_key();
                let hr = report.harnesses.entry(id.to_string()).or_default();
                let (mut sessions, stats) = match parsed.result {
                    Ok(ok) => ok,
                    Err(e) => {
                        if let FormatError::Refused { reason, .. } = &e {
                            // Remembered at this size and mtime: an unchanged bomb is named
                            // again next run without being decoded again. Sessions indexed
                            // from an earlier version of the source stay until it changes.
                            manifest.insert(refused_entry(job, &key, reason));
                        }
                        // The path once: the error repeats it unless it is about another file.
                        let reason = if e.path() == job.src.path { e.reason() } else { e.to_string() };
                        hr.unreadable.push(Unreadable { path: job.src.path.clone(), reason });
                        continue;
                    }
                };
                hr.skipped_lines += stats.skipped;
                hr.repaired_lines += stats.repaired;
                if sessions.is_empty() {
                    hr.empty_sources += 1;
                }
                // Forgotten and excluded sessions are dropped before anything is written.
                sessions.retain(|(s, ..)| {
                    let key = s.key();
                    let keep = if tombstones.contains(&key) {
                        hr.forgotten += 1;
                        false
                    } else if exclusions.excluded_by(&s.harness, s.project.as_deref()).is_some() {
                        hr.excluded += 1;
                        false
                    } else {
                        true
                    };
                    seen.insert(key);
                    keep
                });
                hr.bytes_read += stats.bytes_read;
                for p in &stats.problems {
                    if hr.problems.len() < 20 {
                        hr.problems.push(p.clone());
                    }
                }
                let mut entry = SourceEntry {
                    key: key.clone(),
                    harness: id.to_string(),
                    size: job.size,
                    mtime_ns: job.mtime,
                    // A read that ended inside records still open resumes where they start.
                    offset: if job.src.append_only { stats.reopen.map_or(stats.end_offset, |r| r.offset) } else { job.size },
                    prefix_hash: 0,
                    sessions: sessions.len() as u32,
                    session_id: None,
                    next_seq: 0,
                    parts_fp: job.parts_fp,
                    cursor: stats.cursor.clone(),
                    refused: None,
                    tail: None,
                };
                match &job.plan {
                    Plan::Full => {
                        hr.parsed += 1;
                        if !fresh {
                            writer.delete_term(Term::from_field_text(fields.source, &key));
                        }
                        for (s, p, _) in &mut sessions {
                            note_work_dir(learned, s);
                            // The same session may have moved to another source (a newer
                            // format generation): replace it rather than index it twice.
                            let replace = replaces(&s.key());
                            write_prepared(writer, fields, archive, s, p.take(), replace, &key, paths)?;
                            hr.sessions += 1;
                            hr.turns += s.turns.len() as u64;
                        }
                        if let [(only, _, next_seq)] = sessions.as_slice() {
                            entry.session_id = Some(only.id.clone());
                            entry.next_seq = stats.reopen.map_or(*next_seq, |r| r.seq);
                            if job.src.append_only {
                                entry.tail = Some(TailEntry { title_by: only.title_by, state: stats.tail.clone().unwrap_or_default() });
                            }
                        }
                        if job.src.append_only {
                            // The reader hashed the bytes it parsed; only an adapter that read
                            // some other way costs a second read here. (A wrong hash is safe:
                            // growth would then be re-parsed in full.)
                            entry.prefix_hash = match stats.prefix_hash.filter(|_| stats.reopen.is_none()) {
                                Some(h) => h,
                                None => super::manifest::prefix_hash(&job.src.path, entry.offset).unwrap_or(0),
                            };
                        }
                    }
                    Plan::Cursor { sessions: before } => {
                        hr.resumed += 1;
                        entry.sessions = *before;
                        for (s, p, _) in &mut sessions {
                            note_work_dir(learned, s);
                            // The session is re-read whole: it replaces every document it had.
                            let replace = replaces(&s.key());
                            write_prepared(writer, fields, archive, s, p.take(), replace, &key, paths)?;
                            hr.sessions += 1;
                            hr.turns += s.turns.len() as u64;
                        }
                        entry.sessions = entry.sessions.max(sessions.len() as u32);
                        if entry.cursor.is_none() {
                            // A parser that stops returning a cursor is read in full next time.
                            entry.size = u64::MAX;
                        }
                    }
                    Plan::Tail { resume, title_by, prefix, sessions: before } => {
                        hr.resumed += 1;
                        entry.prefix_hash = match prefix {
                            Prefix::Verified(hasher) => {
                                let mut hasher = hasher.clone();
                                extend_hash(&mut hasher, &job.src.path, resume.offset, entry.offset).unwrap_or(0)
                            }
                            Prefix::Unchanged(hash) if entry.offset == resume.offset => *hash,
                            // The unchanged file read further than before (it cannot, but a
                            // wrong hash would only cost a full parse next time).
                            Prefix::Unchanged(_) => super::manifest::prefix_hash(&job.src.path, entry.offset).unwrap_or(0),
                        };
                        entry.sessions = *before;
                        entry.session_id = Some(resume.session_id.clone());
                        entry.next_seq = resume.next_seq;
                        // A reader that said nothing this time keeps what it said before.
                        let mut tail = TailEntry { title_by: *title_by, state: stats.tail.clone().unwrap_or_else(|| resume.state.clone()) };
                        for (s, _, raw_next) in &mut sessions {
                            let continuing = s.id == resume.session_id;
                            // A session the tail did not continue is new here, and says
                            // nothing without turns.
                            if !continuing && s.turns.is_empty() {
                                continue;
                            }
                            note_work_dir(learned, s);
                            let sid = s.key();
                            if !continuing {
                                entry.sessions += 1;
                                entry.session_id = None;
                            }
                            let (old, rewritten) = match (view_searcher, continuing) {
                                (Some((searcher, view)), true) => {
                                    let (rewritten, folded) = fold_into_indexed_calls(writer, fields, view, s, &key, resume.next_seq)
                                        .map_err(IndexRunError::Index)?;
                                    // Numbered on as a whole read numbers: past the parser's
                                    // last turn (or where the records it left open begin),
                                    // less the results folded into earlier calls.
                                    let next = stats.reopen.map_or((*raw_next).max(resume.next_seq), |r| r.seq);
                                    entry.next_seq = folded.renumbered(next);
                                    (view.session_meta(searcher, &sid)?, rewritten)
                                }
                                _ => {
                                    // Nothing held to fold into; a result kept only to fold goes.
                                    crate::tail::fold_late_results(&mut Default::default(), s);
                                    (None, Vec::new())
                                }
                            };
                            // The held turns from the resume point on are the tail's to make
                            // again (a reopened read's, or a crashed run's): those it makes
                            // the same stay as they are, the others go.
                            let (mut replaced, mut first_new) = (0, resume.next_seq);
                            if continuing {
                                if let Some((_, view)) = view_searcher {
                                    let mut held = view.turns_between(&sid, resume.next_seq, u32::MAX)?;
                                    held.sort_by_key(|t| t.seq);
                                    let same = |a: &Turn, b: &Turn| Turn { node: None, ..a.clone() } == Turn { node: None, ..b.clone() };
                                    if held.len() <= s.turns.len() && held.iter().zip(&s.turns).all(|(h, t)| same(h, t)) {
                                        first_new += held.len() as u32;
                                        s.turns.drain(..held.len());
                                    } else {
                                        replaced = held.len() as u32;
                                    }
                                }
                                let stale: Box<dyn Query> = Box::new(BooleanQuery::new(vec![
                                    (Occur::Must, term_query(fields.sid, &sid)),
                                    (Occur::Must, term_query(fields.kind, KIND_TURN)),
                                    (
                                        Occur::Must,
                                        Box::new(RangeQuery::new(
                                            std::ops::Bound::Included(Term::from_field_u64(fields.seq, first_new as u64)),
                                            std::ops::Bound::Unbounded,
                                        )),
                                    ),
                                ]));
                                writer.delete_query(stale).map_err(IndexError::tantivy(&paths.root))?;
                                writer
                                    .delete_query(super::records::records_from(fields, &sid, first_new))
                                    .map_err(IndexError::tantivy(&paths.root))?;
                            }
                            // One rule for every field (see `crate::tail`): the title by
                            // its precedence, the rest the tail's where it names them.
                            let meta = match &old {
                                Some(o) => {
                                    let (meta, by) = crate::tail::continue_meta(o, *title_by, s, replaced, &key);
                                    tail.title_by = by;
                                    meta
                                }
                                None => crate::tail::whole_meta(s, &key),
                            };
                            // Nothing new (a tail of bookkeeping, a side part that says
                            // what it said before): nothing is written.
                            if s.turns.is_empty() && rewritten.is_empty() && old.as_ref() == Some(&meta) {
                                continue;
                            }
                            // Only what is new: the calls a late result completed, and the tail.
                            archive.turns(&meta, &rewritten).map_err(IndexError::from)?;
                            archive.turns(&meta, &s.turns).map_err(IndexError::from)?;
                            if s.turns.is_empty() && rewritten.is_empty() {
                                // The archive keeps a session's fields on its turns, the last
                                // line's winning: the last turn again carries the new ones.
                                let last = view_searcher.and_then(|(_, view)| {
                                    view.archive.as_ref().zip(first_new.checked_sub(1)).and_then(|(a, seq)| a.turn(&sid, seq))
                                });
                                archive.turns(&meta, last.as_slice()).map_err(IndexError::from)?;
                            }
                            writer
                                .delete_query(Box::new(BooleanQuery::new(vec![
                                    (Occur::Must, term_query(fields.sid, &sid)),
                                    (Occur::Must, term_query(fields.kind, KIND_SESSION)),
                                ])))
                                .map_err(IndexError::tantivy(&paths.root))?;
                            add_session(writer, fields, s, &meta, &key).map_err(IndexError::tantivy(&paths.root))?;
                            // Errors read earlier can pair with fixes in the new tail.
                            let context = match (view_searcher, continuing) {
                                (Some((_, view)), true) => {
                                    view.turns_between(&sid, first_new.saturating_sub(super::records::CONTEXT_TURNS), first_new)?
                                }
                                _ => Vec::new(),
                            };
                            add_work_records(writer, fields, s, &meta, &key, &context).map_err(IndexError::tantivy(&paths.root))?;
                            hr.sessions += 1;
                            hr.turns += s.turns.len() as u64;
                        }
                        entry.tail = entry.session_id.is_some().then_some(tail);
                    }
                }
                manifest.insert(entry);
            }
            Ok(())
        })?;
        Ok(())
    }
}

/// The manifest entry of a source refused at its current size and mtime.
fn refused_entry(job: &Job, key: &str, reason: &str) -> SourceEntry {
    SourceEntry {
        key: key.to_string(),
        harness: job.adapter.info().id.to_string(),
        size: job.size,
        mtime_ns: job.mtime,
        offset: 0,
        prefix_hash: 0,
        sessions: 0,
        session_id: None,
        next_seq: 0,
        parts_fp: job.parts_fp,
        cursor: None,
        refused: Some(super::manifest::Refusal { cap: crate::read::DecodeLimit::current().max_bytes, reason: reason.to_string() }),
        tail: None,
    }
}

/// Archives and indexes a whole session, from what a parsing thread prepared (or,
/// without that, preparing it here); `replace` deletes every document it had first.
#[allow(clippy::too_many_arguments)]
fn write_prepared(
    writer: &IndexWriter,
    fields: &Fields,
    archive: &mut SegmentWriter,
    s: &Session,
    prepared: Option<Prepared>,
    replace: bool,
    key: &str,
    paths: &IndexPaths,
) -> Result<(), IndexRunError> {
    let p = prepared.unwrap_or_else(|| Prepared::of(fields, s, key));
    archive.raw_lines(&p.meta, &p.archive_lines, p.lines).map_err(IndexError::from)?;
    if replace {
        writer.delete_term(Term::from_field_text(fields.sid, &p.meta.key()));
    }
    for d in p.docs {
        writer.add_document(d).map_err(IndexError::tantivy(&paths.root))?;
    }
    Ok(())
}

/// Indexes a whole session (its turns, session document and work records), replacing
/// every document it had.
pub(crate) fn index_whole_session(
    writer: &IndexWriter,
    fields: &Fields,
    s: &Session,
    meta: &SessionMeta,
    paths: &IndexPaths,
) -> Result<(), IndexRunError> {
    writer.delete_term(Term::from_field_text(fields.sid, &s.key()));
    for d in whole_session_documents(fields, s, meta) {
        writer.add_document(d).map_err(IndexError::tantivy(&paths.root))?;
    }
    Ok(())
}

impl Run<'_> {
    /// Writes into a new generation every archived session no source produced in this
    /// run: those whose source the harness deleted, and imported ones. They were
    /// normalized when first read; redaction runs again, as a pattern may be new since.
    fn restore_from_archive(&mut self, archive: &Archive) -> Result<(), IndexRunError> {
        let (seen, tombstones, exclusions) = (&self.seen, self.tombstones, self.exclusions);
        let (sessions, problems) = archive.load(|key| !seen.contains(key) && !tombstones.contains(key)).map_err(IndexError::from)?;
        self.report.archive_problems.extend(problems);
        // A session no source produced, read on this machine from a source no longer on
        // disk, was deleted by its harness: the ledger says so from now on, if it did not.
        let mut gone = Gone::load(&archive.dir).map_err(IndexError::io(&archive.dir))?;
        let now = crate::time::Timestamp::now();
        let mut noticed = 0;
        for archived in &sessions {
            let meta = archived.meta();
            if meta.machine.is_none() && source_gone(&meta.path) && gone.notice(meta.key(), meta.path.clone(), now) {
                noticed += 1;
            }
        }
        if noticed > 0 {
            gone.save(&archive.dir).map_err(IndexError::io(&archive.dir))?;
            self.report.sources_gone += noticed;
        }
        for archived in sessions {
            if exclusions.excluded_by(&archived.harness, archived.fields.project.as_deref()).is_some() {
                continue;
            }
            let mut s = archived.to_session();
            for t in &mut s.turns {
                crate::redact::Redact::redact_in_place(t);
            }
            let meta = archived.meta();
            // Restored sessions are indexed only: they are in the archive already.
            index_whole_session(self.writer, self.fields, &s, &meta, self.paths)?;
            self.report.restored += 1;
        }
        Ok(())
    }
}

/// Remembers the directory a session ran in, for adapters that look in project dirs.
fn note_work_dir(learned: &mut WorkDirs, s: &Session) {
    if let Some(project) = &s.project {
        learned.note(project, s.updated.or(s.started).map_or(0, |t| t.0.div_euclid(1000)));
    }
}

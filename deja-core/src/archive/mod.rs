//! The archive: deja's own copy of every normalized, redacted session, the primary data
//! the index is a projection of (DESIGN §5). Harnesses prune their history; once a
//! session is here, a rebuild, a schema upgrade or a deleted cache brings it back.
//!
//! Layout, under `${XDG_DATA_HOME:-~/.local/share}/deja/archive/` (mode 0700):
//! - `<n>.ndjson.zst` — segments, one per index run that wrote something, numbered in
//!   the order they were written. Each is a run of zstd frames of NDJSON lines (16 to
//!   64 KiB of lines each, closed where a session begins), so one session is read
//!   without the rest. A segment is
//!   written to a temporary name, fsynced, and renamed into place before the index run
//!   commits, so the archive is never behind the index and a segment is never partial.
//! - `<n>.frames` — the segment's frame table: which frames hold which session's lines
//!   ([`frames`]), and which redaction rules every line was redacted with when an index
//!   run wrote them (a search shows those lines without scanning them again). It is how
//!   a search reads a turn's text, which the index does not keep ([`lookup`]).
//! - `seeded` — present once an index built before the archive existed was copied in.
//!
//! A line is either a [`TurnDoc`] — one turn with the stable id
//! `<harness>:<session>:<seq>` and its session's fields, the same document `deja export`
//! writes — or a [`Reset`], written before a session read again whole, which drops the
//! turns earlier segments held for it. Reading folds the lines in order: the last copy
//! of a turn id wins, and a reset forgets what came before it. The log is append-only;
//! only [`rewrite`] (compaction, `deja forget`) replaces segments, by writing the folded
//! result as a new segment before deleting the old ones, so a crash between the two
//! leaves duplicates that fold away, never a loss.
//!
//! NDJSON inside zstd rather than a database: the lines are the export format, a segment
//! is written sequentially by one writer, and compression takes the repeated session
//! fields of every line down to almost nothing.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read as _, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::model::SessionMeta;
use crate::model::{Session, Timestamp, Turn};

pub mod frames;
pub mod gone;
pub mod lookup;

use frames::{FrameAt, FrameTable, FRAME_BYTES, FRAME_MIN_BYTES};
pub use lookup::ArchiveReader;

/// zstd level of a segment. On the realistic benchmark corpus's archive (64 KiB frames)
/// level 1 compresses 3.85× at 278 MB/s on one core and level 3 4.0× at 201 MB/s: a
/// cold build spent 6–7% of its CPU compressing at 3, and 1 saves a quarter of that
/// for an archive 4% larger (`docs/benchmarks.md`).
const ZSTD_LEVEL: i32 = 1;
/// A line longer than this is not one deja wrote (a turn's text is capped at 64 KiB,
/// escaped into JSON at most 6× that): it is skipped as corrupt rather than read.
const MAX_LINE_BYTES: usize = 1 << 20;
/// Past this many segments, an index run compacts them into one.
pub const COMPACT_AFTER_SEGMENTS: usize = 48;

#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("archive at {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ArchiveError + '_ {
    move |source| ArchiveError::Io { path: path.to_path_buf(), source }
}

/// A session's fields as every turn document carries them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionFields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The source the session was read from (on the machine it was read on).
    #[serde(default)]
    pub source: String,
    /// The machine the session was read on, for sessions imported from another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
}

/// One turn as the archive and `deja export` write it: the stable id, the turn, and
/// its session's fields (DESIGN §10).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnDoc {
    /// `<harness>:<session>:<seq>`.
    pub id: String,
    pub harness: String,
    pub session: String,
    #[serde(flatten)]
    pub turn: Turn,
    #[serde(flatten)]
    pub fields: SessionFields,
}

impl TurnDoc {
    pub fn new(meta: &SessionMeta, turn: &Turn) -> TurnDoc {
        TurnDoc {
            id: turn_id(&meta.harness, &meta.id, turn.seq),
            harness: meta.harness.clone(),
            session: meta.id.clone(),
            turn: turn.clone(),
            fields: SessionFields::of(meta),
        }
    }

    /// `<harness>:<session>`.
    pub fn session_key(&self) -> String {
        crate::model::session_key(&self.harness, &self.session)
    }
}

impl SessionFields {
    pub fn of(meta: &SessionMeta) -> SessionFields {
        SessionFields {
            title: meta.title.clone(),
            project: meta.project.clone(),
            started: meta.started,
            updated: meta.updated,
            parent: meta.parent.clone(),
            kind: meta.kind.clone(),
            agent: meta.agent.clone(),
            source: meta.path.clone(),
            machine: meta.machine.clone(),
        }
    }
}

/// What scanning the archive reads of a turn line without decoding its text: its
/// ids and its session's project (what exclusions match). serde skips the other fields.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TurnKey {
    pub id: String,
    pub harness: String,
    pub session: String,
    #[serde(default)]
    pub project: Option<String>,
}

impl TurnKey {
    /// `<harness>:<session>`.
    pub fn session_key(&self) -> String {
        crate::model::session_key(&self.harness, &self.session)
    }
}

/// The stable id of a turn.
pub fn turn_id(harness: &str, session: &str, seq: u32) -> String {
    format!("{harness}:{session}:{seq}")
}

/// Drops every turn earlier segments hold for `reset` (a session key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reset {
    pub reset: String,
}

/// One line of a segment, as far as scanning reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    Turn(TurnKey),
    Reset(String),
}

impl Line {
    /// The key of the session the line belongs to.
    pub fn session_key(&self) -> String {
        match self {
            Line::Turn(k) => k.session_key(),
            Line::Reset(key) => key.clone(),
        }
    }

    fn parse(bytes: &[u8]) -> Option<Line> {
        if bytes.starts_with(b"{\"reset\"") {
            return serde_json::from_slice::<Reset>(bytes).ok().map(|r| Line::Reset(r.reset));
        }
        serde_json::from_slice::<TurnKey>(bytes).ok().map(Line::Turn)
    }
}

/// A session as the archive holds it after folding.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchivedSession {
    pub harness: String,
    pub id: String,
    pub fields: SessionFields,
    pub turns: Vec<Turn>,
}

impl ArchivedSession {
    pub fn key(&self) -> String {
        crate::model::session_key(&self.harness, &self.id)
    }

    /// The session document's metadata, with the machine it came from.
    pub fn meta(&self) -> SessionMeta {
        let f = &self.fields;
        SessionMeta {
            harness: self.harness.clone(),
            id: self.id.clone(),
            title: f.title.clone(),
            project: f.project.clone(),
            path: f.source.clone(),
            started: f.started,
            updated: f.updated,
            parent: f.parent.clone(),
            kind: f.kind.clone(),
            agent: f.agent.clone(),
            machine: f.machine.clone(),
            turns: self.turns.len() as u32,
            source_deleted: None,
        }
    }

    /// The session in the model's shape, its source named by path.
    pub fn to_session(&self) -> Session {
        let f = &self.fields;
        let mut s = Session::new(&self.harness, self.id.clone(), crate::model::SourceRef::file(&f.source));
        s.title = f.title.clone();
        s.project = f.project.clone();
        s.started = f.started;
        s.updated = f.updated;
        s.parent = f.parent.clone();
        s.kind = f.kind.clone();
        s.agent = f.agent.clone();
        s.turns = self.turns.clone();
        s
    }
}

/// The archive directory.
#[derive(Debug, Clone)]
pub struct Archive {
    pub dir: PathBuf,
}

impl Archive {
    pub fn new(dir: impl Into<PathBuf>) -> Archive {
        Archive { dir: dir.into() }
    }

    /// The archive of the environment's data directory.
    pub fn of(env: &crate::StoreEnv) -> Archive {
        Archive::new(env.data_dir().join("archive"))
    }

    fn seeded_marker(&self) -> PathBuf {
        self.dir.join("seeded")
    }

    /// True once an index that predates the archive was copied into it (or there was none).
    pub fn is_seeded(&self) -> bool {
        self.seeded_marker().exists()
    }

    pub fn mark_seeded(&self) -> Result<(), ArchiveError> {
        crate::fsutil::private_dir(&self.dir).map_err(io_err(&self.dir))?;
        crate::fsutil::write_private(&self.seeded_marker(), b"").map_err(io_err(&self.dir))
    }

    /// The segments, oldest first.
    pub fn segments(&self) -> Result<Vec<(u64, PathBuf)>, ArchiveError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err(&self.dir)(e)),
        };
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.map_err(io_err(&self.dir))?;
            let name = entry.file_name();
            let Some(n) = name.to_str().and_then(|n| n.strip_suffix(".ndjson.zst")).and_then(|n| n.parse::<u64>().ok()) else {
                continue;
            };
            out.push((n, entry.path()));
        }
        out.sort();
        Ok(out)
    }

    /// Bytes on disk (segments and their frame tables).
    pub fn size(&self) -> u64 {
        let segments = self.segments().unwrap_or_default();
        let files = segments.iter().flat_map(|(_, p)| [p.clone(), frames::table_path(p)]);
        files.filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum()
    }

    /// True when a segment has no frame table this version reads (written before
    /// segments were framed, or its table lost or torn), so reading one session from it
    /// would decompress all of it. [`Archive::rewrite`] writes it again framed.
    pub fn has_unframed_segments(&self) -> Result<bool, ArchiveError> {
        Ok(self.segments()?.iter().any(|(_, p)| FrameTable::read(&frames::table_path(p)).is_none()))
    }

    /// Starts a segment; nothing reaches the disk until the first line.
    pub fn writer(&self) -> SegmentWriter {
        SegmentWriter {
            dir: self.dir.clone(),
            open: None,
            compressor: None,
            frame: Vec::new(),
            frame_sessions: HashSet::new(),
            frame_last: None,
            written: 0,
            table: Vec::new(),
            redacted_with: 0,
            lines: 0,
            line: Vec::new(),
        }
    }

    /// Calls `each` with every line of every segment, oldest first. A segment that
    /// cannot be read to its end (damaged on disk) gives what it holds up to the damage,
    /// and is named in the returned problems; the rest are still read.
    pub fn scan(&self, mut each: impl FnMut(Line, &[u8])) -> Result<Vec<String>, ArchiveError> {
        let mut problems = Vec::new();
        for (_, path) in self.segments()? {
            if let Err(p) = scan_segment(&path, |_, bytes| {
                if let Some(line) = Line::parse(bytes) {
                    each(line, bytes);
                }
            }) {
                problems.push(p);
            }
        }
        Ok(problems)
    }

    /// [`Archive::scan`] over the segments numbered `from` and after only: what was
    /// written since a reader's cursor (team push). Compaction and `deja forget` write
    /// their result as a new, higher-numbered segment, so a cursor never misses a line;
    /// it may see one again, which folding makes harmless.
    pub fn scan_from(&self, from: u64, mut each: impl FnMut(u64, Line)) -> Result<Vec<String>, ArchiveError> {
        let mut problems = Vec::new();
        for (n, path) in self.segments()? {
            if n < from {
                continue;
            }
            if let Err(p) = scan_segment(&path, |_, bytes| {
                if let Some(line) = Line::parse(bytes) {
                    each(n, line);
                }
            }) {
                problems.push(p);
            }
        }
        Ok(problems)
    }

    /// The keys of every session the archive holds a turn of.
    pub fn session_keys(&self) -> Result<HashSet<String>, ArchiveError> {
        let mut keys = HashSet::new();
        self.scan(|line, _| {
            if let Line::Turn(key) = line {
                keys.insert(key.session_key());
            }
        })?;
        Ok(keys)
    }

    /// The sessions whose key `want` accepts, folded (see the module doc). Only those
    /// are held in memory, so restoring a few sessions reads a large archive in bounded memory.
    pub fn load(&self, want: impl Fn(&str) -> bool) -> Result<(Vec<ArchivedSession>, Vec<String>), ArchiveError> {
        let mut sessions: HashMap<String, (ArchivedSession, HashMap<u32, Turn>)> = HashMap::new();
        let problems = self.scan(|line, bytes| match line {
            Line::Reset(key) => {
                if let Some((_, turns)) = sessions.get_mut(&key) {
                    turns.clear();
                }
            }
            Line::Turn(k) => {
                let key = k.session_key();
                // Only the sessions wanted are decoded whole.
                if !want(&key) {
                    return;
                }
                let Ok(doc) = serde_json::from_slice::<TurnDoc>(bytes) else { return };
                let TurnDoc { harness, session, turn, fields, .. } = doc;
                let entry = sessions.entry(key).or_insert_with(|| {
                    (ArchivedSession { harness, id: session, fields: SessionFields::default(), turns: Vec::new() }, HashMap::new())
                });
                entry.0.fields = fields;
                entry.1.insert(turn.seq, turn);
            }
        })?;
        let mut out: Vec<ArchivedSession> = sessions
            .into_values()
            .filter(|(_, turns)| !turns.is_empty())
            .map(|(mut s, turns)| {
                let mut turns: Vec<Turn> = turns.into_values().collect();
                turns.sort_by_key(|t| t.seq);
                s.turns = turns;
                s
            })
            .collect();
        out.sort_by_key(|s| s.key());
        Ok((out, problems))
    }

    /// Replaces every segment with one holding the folded archive without the turns
    /// `drop` accepts: what `deja forget` and a change of exclusions do.
    pub fn rewrite(&self, drop: impl Fn(&TurnKey) -> bool) -> Result<RewriteReport, ArchiveError> {
        let segments = self.segments()?;
        self.rewrite_segments(&segments, false, drop)
    }

    /// Folds the newest segments into one when there are more than
    /// [`COMPACT_AFTER_SEGMENTS`]: the run of recent segments that together outweigh
    /// the one before them (usually the small ones refreshes append after a big first
    /// build), so a compaction costs about what it compacts.
    pub fn compact(&self, drop: impl Fn(&TurnKey) -> bool) -> Result<RewriteReport, ArchiveError> {
        let segments = self.segments()?;
        if segments.len() <= COMPACT_AFTER_SEGMENTS {
            return Ok(RewriteReport::default());
        }
        let sizes: Vec<u64> = segments.iter().map(|(_, p)| std::fs::metadata(p).map_or(0, |m| m.len())).collect();
        let mut start = segments.len() - 1;
        let mut acc = sizes[start];
        while start > 0 && sizes[start - 1] <= acc.saturating_mul(2) {
            start -= 1;
            acc += sizes[start];
        }
        // Always fold enough to bring the count back well under the limit.
        start = start.min(segments.len() - COMPACT_AFTER_SEGMENTS / 2);
        self.rewrite_segments(&segments[start..], start > 0, drop)
    }

    /// Replaces `segments` (all of them, or the newest ones) with one segment holding
    /// their folded lines. Two passes over the raw lines (which copy of each turn id and
    /// each reset survives, then the copy), so memory holds a hash per turn, not the
    /// turns. With `older` (segments outside `segments` remain before them) the last
    /// reset of a session is kept, since those may hold turns it drops.
    fn rewrite_segments(
        &self,
        segments: &[(u64, PathBuf)],
        older: bool,
        drop: impl Fn(&TurnKey) -> bool,
    ) -> Result<RewriteReport, ArchiveError> {
        if segments.is_empty() {
            return Ok(RewriteReport::default());
        }
        let mut last_turn: HashMap<u64, u64> = HashMap::new();
        let mut last_reset: HashMap<u64, u64> = HashMap::new();
        let mut pos = 0u64;
        let mut problems = Vec::new();
        for (_, path) in segments {
            let scanned = scan_segment(path, |_, bytes| {
                pos += 1;
                match Line::parse(bytes) {
                    Some(Line::Reset(key)) => {
                        last_reset.insert(hash(&key), pos);
                    }
                    Some(Line::Turn(doc)) => {
                        last_turn.insert(hash(&doc.id), pos);
                    }
                    None => {}
                }
            });
            if let Err(p) = scanned {
                problems.push(p);
            }
        }
        let mut writer = self.writer();
        // The folded lines keep the mark only if every segment they come from had it.
        let marks: HashSet<u64> =
            segments.iter().map(|(_, p)| FrameTable::read(&frames::table_path(p)).map_or(0, |t| t.redacted_with())).collect();
        if let (1, Some(&mark)) = (marks.len(), marks.iter().next()) {
            writer.redacted_with(mark);
        }
        let mut report = RewriteReport { problems, ..RewriteReport::default() };
        let mut pos = 0u64;
        let mut failed: Option<ArchiveError> = None;
        for (_, path) in segments {
            let _ = scan_segment(path, |_, bytes| {
                pos += 1;
                if failed.is_some() {
                    return;
                }
                let line = Line::parse(bytes);
                let keep = match &line {
                    Some(Line::Reset(key)) => older && last_reset.get(&hash(key)) == Some(&pos),
                    Some(Line::Turn(doc)) => {
                        let live = last_turn.get(&hash(&doc.id)) == Some(&pos)
                            && last_reset.get(&hash(&doc.session_key())).is_none_or(|r| *r < pos);
                        if live && drop(doc) {
                            report.dropped += 1;
                            false
                        } else {
                            report.kept += u64::from(live);
                            live
                        }
                    }
                    None => false,
                };
                if let (true, Some(line)) = (keep, &line) {
                    if let Err(e) = writer.raw_line(&line.session_key(), bytes) {
                        failed = Some(e);
                    }
                }
            });
        }
        if let Some(e) = failed {
            return Err(e);
        }
        writer.commit()?;
        // The new segment is durable: the old ones can go.
        for (_, path) in segments {
            std::fs::remove_file(path).map_err(io_err(path))?;
            let table = frames::table_path(path);
            match std::fs::remove_file(&table) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io_err(&table)(e)),
                _ => {}
            }
        }
        sync_dir(&self.dir).map_err(io_err(&self.dir))?;
        Ok(report)
    }
}

/// What [`Archive::rewrite`] did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RewriteReport {
    pub kept: u64,
    pub dropped: u64,
    pub problems: Vec<String>,
}

fn hash(s: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(s.as_bytes())
}

/// Reads one segment's lines; `Err` names the segment and what stopped the read.
fn scan_segment(path: &Path, mut each: impl FnMut(u64, &[u8])) -> Result<(), String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let decoder = zstd::stream::read::Decoder::new(file).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut reader = BufReader::with_capacity(256 << 10, decoder);
    let mut buf = Vec::new();
    let mut n = 0u64;
    loop {
        buf.clear();
        let read = (&mut reader).take(MAX_LINE_BYTES as u64 + 1).read_until(b'\n', &mut buf);
        match read {
            Ok(0) => return Ok(()),
            Ok(_) if buf.len() > MAX_LINE_BYTES && !buf.ends_with(b"\n") => {
                return Err(format!("{}: a line of over {MAX_LINE_BYTES} bytes after line {n}; the rest is not read", path.display()))
            }
            Ok(_) => {
                n += 1;
                let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
                if !line.is_empty() {
                    each(n, line);
                }
            }
            Err(e) => return Err(format!("{}: damaged after line {n} ({e}); the lines before it are kept", path.display())),
        }
    }
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// The lines [`SegmentWriter::session`] writes for a whole session (a reset, then every
/// turn), serialized ahead, off the writer's thread; with their count.
pub fn session_lines(meta: &SessionMeta, turns: &[Turn]) -> (Vec<u8>, u64) {
    let mut out = Vec::with_capacity(256 * (turns.len() + 1));
    push_line(&mut out, &Reset { reset: meta.key() });
    for t in turns {
        push_line(&mut out, &TurnDoc::new(meta, t));
    }
    (out, turns.len() as u64 + 1)
}

/// Appends `value` as one NDJSON line.
fn push_line(out: &mut Vec<u8>, value: &impl Serialize) {
    // Serializing these plain structs into memory cannot fail.
    let _ = serde_json::to_writer(&mut *out, value);
    out.push(b'\n');
}

/// Writes one new segment: lines gather into frames of about [`FRAME_BYTES`], each
/// compressed on its own into a temporary file, and [`commit`](Self::commit) writes the
/// frame table and makes both durable and visible.
pub struct SegmentWriter {
    dir: PathBuf,
    open: Option<(tempfile::NamedTempFile, BufWriter<File>)>,
    compressor: Option<zstd::bulk::Compressor<'static>>,
    /// Lines of the frame being filled, and the sessions they belong to.
    frame: Vec<u8>,
    frame_sessions: HashSet<u64>,
    /// The session whose lines were appended last.
    frame_last: Option<u64>,
    /// Bytes written to the file so far: where the next frame starts.
    written: u64,
    table: Vec<(u64, FrameAt)>,
    /// The redaction every line written was done with (0: not known).
    redacted_with: u64,
    lines: u64,
    /// [`Self::raw_line`]'s buffer.
    line: Vec<u8>,
}

impl SegmentWriter {
    fn file(&mut self) -> Result<&mut BufWriter<File>, ArchiveError> {
        if self.open.is_none() {
            crate::fsutil::private_dir(&self.dir).map_err(io_err(&self.dir))?;
            let tmp = tempfile::Builder::new().prefix(".segment-").suffix(".tmp").tempfile_in(&self.dir).map_err(io_err(&self.dir))?;
            let file = tmp.as_file().try_clone().map_err(io_err(&self.dir))?;
            self.open = Some((tmp, BufWriter::with_capacity(256 << 10, file)));
        }
        match &mut self.open {
            Some((_, file)) => Ok(file),
            None => unreachable!("opened above"),
        }
    }

    /// Compresses the lines gathered so far into one frame and writes it.
    fn close_frame(&mut self) -> Result<(), ArchiveError> {
        if self.frame.is_empty() {
            return Ok(());
        }
        let dir = self.dir.clone();
        let compressor = match &mut self.compressor {
            Some(c) => c,
            None => self.compressor.insert(zstd::bulk::Compressor::new(ZSTD_LEVEL).map_err(io_err(&dir))?),
        };
        let compressed = compressor.compress(&self.frame).map_err(io_err(&dir))?;
        self.file()?.write_all(&compressed).map_err(io_err(&dir))?;
        let at = FrameAt { offset: self.written, len: u32::try_from(compressed.len()).unwrap_or(u32::MAX) };
        self.table.extend(self.frame_sessions.drain().map(|h| (h, at)));
        self.written += compressed.len() as u64;
        self.frame.clear();
        Ok(())
    }

    /// Appends whole lines (each ending in a newline) of the session hashed `session`,
    /// closing the frame first when another session's lines fill it past
    /// [`FRAME_MIN_BYTES`], and at the first line end past [`FRAME_BYTES`].
    fn append(&mut self, session: u64, mut bytes: &[u8]) -> Result<(), ArchiveError> {
        if self.frame.len() >= FRAME_MIN_BYTES && self.frame_last != Some(session) {
            self.close_frame()?;
        }
        self.frame_last = Some(session);
        while !bytes.is_empty() {
            let room = FRAME_BYTES.saturating_sub(self.frame.len());
            let cut = if bytes.len() <= room {
                bytes.len()
            } else {
                // The end of the line that crosses the frame's size, or all of it.
                memchr::memchr(b'\n', &bytes[room.saturating_sub(1)..]).map_or(bytes.len(), |i| room.saturating_sub(1) + i + 1)
            };
            self.frame.extend_from_slice(&bytes[..cut]);
            self.frame_sessions.insert(session);
            bytes = &bytes[cut..];
            if self.frame.len() >= FRAME_BYTES {
                self.close_frame()?;
            }
        }
        Ok(())
    }

    /// One line of `session` (a key) as read from another segment, when rewriting:
    /// copied with its newline into a buffer kept across lines (a rewrite copies
    /// millions).
    fn raw_line(&mut self, session: &str, bytes: &[u8]) -> Result<(), ArchiveError> {
        let mut line = std::mem::take(&mut self.line);
        line.clear();
        line.extend_from_slice(bytes);
        line.push(b'\n');
        let appended = self.append(hash(session), &line);
        self.line = line;
        appended?;
        self.lines += 1;
        Ok(())
    }

    /// Lines [`session_lines`] made for the session `meta`, `count` of them.
    pub fn raw_lines(&mut self, meta: &SessionMeta, bytes: &[u8], count: u64) -> Result<(), ArchiveError> {
        self.append(hash(&meta.key()), bytes)?;
        self.lines += count;
        Ok(())
    }

    /// A session read whole: a reset, then every turn.
    pub fn session(&mut self, meta: &SessionMeta, turns: &[Turn]) -> Result<(), ArchiveError> {
        let (lines, count) = session_lines(meta, turns);
        self.raw_lines(meta, &lines, count)
    }

    /// Turns added to (or rewritten in) a session, with its fields as they are now.
    pub fn turns(&mut self, meta: &SessionMeta, turns: &[Turn]) -> Result<(), ArchiveError> {
        let mut lines = Vec::new();
        for t in turns {
            push_line(&mut lines, &TurnDoc::new(meta, t));
        }
        self.raw_lines(meta, &lines, turns.len() as u64)
    }

    /// Declares that every line this segment gets was redacted by the rules with this
    /// [fingerprint](crate::redact::fingerprint), so a reader with the same rules may
    /// show its text as it is. Only a writer that redacted what it writes says so.
    pub fn redacted_with(&mut self, fingerprint: u64) {
        self.redacted_with = fingerprint;
    }

    /// Lines written so far.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// Closes the last frame, writes the frame table, fsyncs both and renames them to
    /// the next segment number (the table first: a segment is never without one); a
    /// writer that wrote nothing leaves nothing behind.
    pub fn commit(mut self) -> Result<Option<PathBuf>, ArchiveError> {
        self.close_frame()?;
        let Some((tmp, mut file)) = self.open.take() else { return Ok(None) };
        let dir = self.dir.clone();
        file.flush().map_err(io_err(&dir))?;
        tmp.as_file().sync_all().map_err(io_err(&dir))?;
        let next = Archive::new(&dir).segments()?.last().map_or(1, |(n, _)| n + 1);
        let path = dir.join(format!("{next:08}.ndjson.zst"));
        let table = frames::table_path(&path);
        let mut table_tmp = tempfile::Builder::new().prefix(".frames-").suffix(".tmp").tempfile_in(&dir).map_err(io_err(&dir))?;
        table_tmp.write_all(&FrameTable::encode(std::mem::take(&mut self.table), self.redacted_with)).map_err(io_err(&dir))?;
        table_tmp.as_file().sync_all().map_err(io_err(&dir))?;
        table_tmp.persist(&table).map_err(|e| io_err(&table)(e.error))?;
        tmp.persist_noclobber(&path).map_err(|e| io_err(&path)(e.error))?;
        sync_dir(&dir).map_err(io_err(&dir))?;
        Ok(Some(path))
    }
}

/// Sessions `deja forget` removed: the next index run does not bring them back from a
/// source that still holds them. One JSON object per line in
/// `${XDG_DATA_HOME:-~/.local/share}/deja/tombstones`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tombstone {
    /// `<harness>:<session>`.
    pub session: String,
    pub forgotten: Timestamp,
}

/// The tombstones file of an environment.
pub fn tombstones_path(env: &crate::StoreEnv) -> PathBuf {
    env.data_dir().join("tombstones")
}

/// Every forgotten session key (an unreadable line is skipped: at worst a session comes back).
pub fn load_tombstones(path: &Path) -> HashSet<String> {
    let Ok(text) = std::fs::read_to_string(path) else { return HashSet::new() };
    text.lines().filter_map(|l| serde_json::from_str::<Tombstone>(l).ok()).map(|t| t.session).collect()
}

/// Appends tombstones for `keys`, synced before returning: the sessions are removed
/// from the archive and index only after this.
pub fn add_tombstones(path: &Path, keys: &[String]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        crate::fsutil::private_dir(dir)?;
    }
    let mut file = crate::fsutil::open_private(path, File::options().create(true).append(true))?;
    let now = Timestamp::now();
    let mut out = Vec::new();
    for key in keys {
        serde_json::to_writer(&mut out, &Tombstone { session: key.clone(), forgotten: now }).map_err(std::io::Error::other)?;
        out.push(b'\n');
    }
    file.write_all(&out)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Role;

    pub(super) fn meta(id: &str, title: &str) -> SessionMeta {
        SessionMeta {
            harness: "alpha".into(),
            id: id.into(),
            title: Some(title.into()),
            project: Some("/p".into()),
            path: "/src/a.jsonl".into(),
            started: None,
            updated: Some(Timestamp(1_000)),
            parent: None,
            kind: None,
            agent: None,
            machine: None,
            turns: 0,
            source_deleted: None,
        }
    }

    pub(super) fn turn(seq: u32, text: &str) -> Turn {
        let mut t = Turn::new(Role::User, text);
        t.seq = seq;
        t
    }

    #[test]
    fn folding_keeps_the_last_copy_and_honours_resets() {
        let tmp = tempfile::tempdir().expect("tmp");
        let archive = Archive::new(tmp.path().join("archive"));
        let mut w = archive.writer();
        w.session(&meta("a", "first"), &[turn(0, "zero"), turn(1, "one"), turn(2, "two")]).expect("write");
        w.session(&meta("b", "other"), &[turn(0, "b zero")]).expect("write");
        w.commit().expect("commit");
        let mut w = archive.writer();
        w.turns(&meta("a", "renamed"), &[turn(1, "one, with its result"), turn(3, "three")]).expect("write");
        w.commit().expect("commit");
        let (sessions, problems) = archive.load(|_| true).expect("load");
        assert!(problems.is_empty(), "{problems:?}");
        let a = &sessions[0];
        assert_eq!(a.key(), "alpha:a");
        assert_eq!(a.fields.title.as_deref(), Some("renamed"));
        assert_eq!(a.turns.iter().map(|t| t.text.as_str()).collect::<Vec<_>>(), ["zero", "one, with its result", "two", "three"]);

        // Read again whole, shorter: the reset drops what came before.
        let mut w = archive.writer();
        w.session(&meta("a", "again"), &[turn(0, "only")]).expect("write");
        w.commit().expect("commit");
        let (sessions, _) = archive.load(|k| k == "alpha:a").expect("load");
        assert_eq!(sessions.len(), 1);
        assert_eq!(sessions[0].turns.len(), 1);
        assert_eq!(archive.session_keys().expect("keys").len(), 2);
    }

    #[test]
    fn rewrite_folds_into_one_segment_and_drops_what_is_forgotten() {
        let tmp = tempfile::tempdir().expect("tmp");
        let archive = Archive::new(tmp.path().join("archive"));
        for round in 0..3 {
            let mut w = archive.writer();
            w.session(&meta("a", "a"), &[turn(0, &format!("a round {round}"))]).expect("write");
            w.session(&meta("b", "b"), &[turn(0, "b")]).expect("write");
            w.commit().expect("commit");
        }
        assert_eq!(archive.segments().expect("segments").len(), 3);
        let before = archive.load(|k| k == "alpha:a").expect("load").0;
        let report = archive.rewrite(|d| d.session_key() == "alpha:b").expect("rewrite");
        assert_eq!((report.kept, report.dropped), (1, 1));
        assert_eq!(archive.segments().expect("segments").len(), 1);
        assert_eq!(archive.load(|k| k == "alpha:a").expect("load").0, before, "folding is unchanged by compaction");
        assert!(!archive.session_keys().expect("keys").contains("alpha:b"));
    }

    #[test]
    fn compacting_the_newest_segments_keeps_resets_that_reach_older_ones() {
        let tmp = tempfile::tempdir().expect("tmp");
        let archive = Archive::new(tmp.path().join("archive"));
        let mut w = archive.writer();
        let long: Vec<Turn> = (0..200).map(|i| turn(i, &format!("turn {i} of a long first build {}", "x".repeat(i as usize)))).collect();
        w.session(&meta("a", "a"), &long).expect("write");
        w.commit().expect("commit");
        // Read again whole, shorter, in a small segment; then many small refreshes.
        let mut w = archive.writer();
        w.session(&meta("a", "a"), &[turn(0, "rewritten")]).expect("write");
        w.commit().expect("commit");
        for i in 0..COMPACT_AFTER_SEGMENTS as u32 {
            let mut w = archive.writer();
            w.turns(&meta("b", "b"), &[turn(i, "small")]).expect("write");
            w.commit().expect("commit");
        }
        let before = archive.load(|_| true).expect("load").0;
        archive.compact(|_| false).expect("compact");
        let after = archive.segments().expect("segments");
        assert!(after.len() < COMPACT_AFTER_SEGMENTS / 2 + 2, "{} segments", after.len());
        assert_eq!(archive.load(|_| true).expect("load").0, before);
        assert_eq!(before[0].turns.len(), 1, "the reset still drops the long first copy");
    }

    #[test]
    fn a_damaged_segment_is_named_and_the_others_are_read() {
        let tmp = tempfile::tempdir().expect("tmp");
        let archive = Archive::new(tmp.path().join("archive"));
        let mut w = archive.writer();
        w.session(&meta("a", "a"), &[turn(0, "kept")]).expect("write");
        w.commit().expect("commit");
        std::fs::write(archive.dir.join("00000002.ndjson.zst"), b"\x28\xb5\x2f\xfd garbage").expect("write");
        let (sessions, problems) = archive.load(|_| true).expect("load");
        assert_eq!(sessions.len(), 1);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("00000002.ndjson.zst"), "{problems:?}");
        // A new segment after the damaged one still gets the next number.
        let mut w = archive.writer();
        w.session(&meta("b", "b"), &[turn(0, "after")]).expect("write");
        let path = w.commit().expect("commit").expect("written");
        assert!(path.ends_with("00000003.ndjson.zst"));
    }

    #[test]
    fn tombstones_round_trip() {
        let tmp = tempfile::tempdir().expect("tmp");
        let path = tmp.path().join("deja/tombstones");
        add_tombstones(&path, &["alpha:a".into(), "beta:b".into()]).expect("add");
        std::fs::OpenOptions::new().append(true).open(&path).and_then(|mut f| f.write_all(b"not json\n")).expect("garbage");
        let set = load_tombstones(&path);
        assert_eq!(set.len(), 2);
        assert!(set.contains("beta:b"));
    }
}

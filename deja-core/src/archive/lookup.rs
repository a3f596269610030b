//! Reading single sessions back from the archive, for the index's readers: the index
//! keeps no copy of turn text (it was 40% of its bytes, all of it already here), so
//! `show`, search snippets and recall take a turn's text from the archive.
//!
//! A session is found through each segment's frame table ([`super::frames`]): the
//! frames holding its lines are decompressed and its lines folded in order, the same
//! fold [`Archive::load`] does over the whole archive (last copy wins, a reset forgets
//! what came before). The fold keeps each turn's last line unparsed, found by the turn
//! number its id ends in; a line is parsed when its turn is asked for, so a search hit
//! that shows five turns of a long session parses five lines, not the session. Folded
//! sessions are cached, so the five turns of a hit cost one fold.
//!
//! The segment list is read again when it is older than [`RELIST_AFTER`] or a turn the
//! index names is missing (a refresh appended a segment since, or a compaction replaced
//! them), so a long-lived reader such as the MCP server sees what later runs wrote.

use std::collections::HashMap;
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::frames::{table_path, FrameAt, FrameTable};
use super::{hash, Archive};
use crate::model::Turn;

/// How long a listing of the segments is trusted before it is read again.
const RELIST_AFTER: Duration = Duration::from_secs(1);
/// Folded sessions kept; past this the cache starts over.
const CACHED_SESSIONS: usize = 256;

/// A turn as the archive holds it, and whether it was redacted by this binary's rules
/// (its segment is marked with this [fingerprint](crate::redact::fingerprint)).
#[derive(Debug, Clone, PartialEq)]
pub struct ArchivedTurn {
    pub turn: Turn,
    pub redacted: bool,
}

/// One session's turns by sequence number, as the archive holds them now.
#[cfg(test)]
type SessionTurns = HashMap<u32, ArchivedTurn>;

/// One session's lines as the archive holds them now, unparsed: the last line of each
/// turn (the bytes of lines a later copy replaced stay in `bytes`, unreferenced).
#[derive(Default)]
struct FoldedLines {
    bytes: Vec<u8>,
    /// Turn number → the line's range in `bytes`, and whether its segment was marked
    /// as redacted by this binary's rules.
    lines: HashMap<u32, (std::ops::Range<usize>, bool)>,
}

impl FoldedLines {
    fn turn(&self, seq: u32) -> Option<ArchivedTurn> {
        let (range, redacted) = self.lines.get(&seq)?;
        // The line is a whole `TurnDoc`; its turn's fields are read and the id and the
        // session's fields beside them skipped.
        let turn: Turn = serde_json::from_slice(self.bytes.get(range.clone())?).ok()?;
        Some(ArchivedTurn { turn, redacted: *redacted })
    }
}

struct Segment {
    path: PathBuf,
    table: Arc<FrameTable>,
}

#[derive(Default)]
struct State {
    listed: Option<(Instant, Vec<(u64, u64)>)>,
    segments: Vec<Segment>,
    /// Tables by segment number and size (a number is reused only after the archive
    /// was emptied, with another size almost surely).
    tables: HashMap<(u64, u64), Arc<FrameTable>>,
    sessions: HashMap<String, Arc<FoldedLines>>,
    /// One decompression context for every frame read (creating one costs more than
    /// decompressing a small frame).
    decompressor: Option<zstd::bulk::Decompressor<'static>>,
}

/// Reads sessions from an archive on demand; shared by one index reader's threads.
pub struct ArchiveReader {
    archive: Archive,
    state: Mutex<State>,
}

impl ArchiveReader {
    pub fn new(dir: impl Into<PathBuf>) -> ArchiveReader {
        ArchiveReader { archive: Archive::new(dir), state: Mutex::new(State::default()) }
    }

    pub fn dir(&self) -> &Path {
        &self.archive.dir
    }

    /// Turn `seq` of the session `key` (`<harness>:<id>`) exactly as the archive holds
    /// it, if it does.
    pub fn turn(&self, key: &str, seq: u32) -> Option<Turn> {
        self.archived_turn(key, seq).map(|a| a.turn)
    }

    /// Turn `seq` of the session `key` as it may be shown: redacted, unless this very
    /// binary's rules redacted it when it was archived (then it is as it was written,
    /// and a search skips a scan that costs it about a tenth of its time).
    pub fn shown_turn(&self, key: &str, seq: u32) -> Option<Turn> {
        let ArchivedTurn { mut turn, redacted } = self.archived_turn(key, seq)?;
        if !redacted {
            crate::redact::Redact::redact_in_place(&mut turn);
        }
        Some(turn)
    }

    fn archived_turn(&self, key: &str, seq: u32) -> Option<ArchivedTurn> {
        let folded = self.folded(key);
        if folded.lines.contains_key(&seq) {
            return folded.turn(seq);
        }
        // The index may be newer than this reader's listing: look again once.
        if self.relist(true) {
            return self.folded(key).turn(seq);
        }
        None
    }

    /// Every turn of the session `key` the archive holds (the tests' view of a fold).
    #[cfg(test)]
    fn session(&self, key: &str) -> SessionTurns {
        let folded = self.folded(key);
        folded.lines.keys().filter_map(|seq| Some((*seq, folded.turn(*seq)?))).collect()
    }

    /// The session `key`'s lines, folded now or earlier.
    fn folded(&self, key: &str) -> Arc<FoldedLines> {
        self.relist(false);
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = state.sessions.get(key) {
            return Arc::clone(s);
        }
        let state = &mut *state;
        let folded = Arc::new(fold(&state.segments, &mut state.decompressor, key));
        if state.sessions.len() >= CACHED_SESSIONS {
            state.sessions.clear();
        }
        state.sessions.insert(key.to_string(), Arc::clone(&folded));
        folded
    }

    /// Reads the segment list again when it is stale (or `now`); true when it changed,
    /// which drops the folded sessions.
    fn relist(&self, now: bool) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let fresh = state.listed.as_ref().is_some_and(|(at, _)| at.elapsed() < RELIST_AFTER);
        if fresh && !now {
            return false;
        }
        let listed: Vec<(u64, PathBuf, u64)> = self
            .archive
            .segments()
            .unwrap_or_default()
            .into_iter()
            .map(|(n, p)| {
                let size = std::fs::metadata(&p).map_or(0, |m| m.len());
                (n, p, size)
            })
            .collect();
        let ids: Vec<(u64, u64)> = listed.iter().map(|(n, _, size)| (*n, *size)).collect();
        let changed = state.listed.as_ref().is_none_or(|(_, before)| *before != ids);
        state.listed = Some((Instant::now(), ids));
        if !changed {
            return false;
        }
        let mut segments = Vec::with_capacity(listed.len());
        let mut tables = HashMap::new();
        for (n, path, size) in listed {
            let table = match state.tables.get(&(n, size)) {
                Some(t) => Arc::clone(t),
                // A segment without a table (written before frames) is scanned once.
                None => match FrameTable::read(&table_path(&path)).map(Ok).unwrap_or_else(|| FrameTable::scan(&path)) {
                    Ok(t) => Arc::new(t),
                    Err(_) => continue,
                },
            };
            tables.insert((n, size), Arc::clone(&table));
            segments.push(Segment { path, table });
        }
        state.tables = tables;
        state.segments = segments;
        state.sessions.clear();
        true
    }
}

/// The session `key` folded over every frame that holds its lines, oldest first. A
/// frame that cannot be read (damaged, or its segment compacted away meanwhile) is
/// skipped: its turns read as missing, never as someone else's.
fn fold(segments: &[Segment], decompressor: &mut Option<zstd::bulk::Decompressor<'static>>, key: &str) -> FoldedLines {
    let h = hash(key);
    let mut folded = FoldedLines::default();
    // The session's lines are found by what they start with, not by parsing every line
    // of the frame: a frame holds several sessions. A turn line starts with its id (the
    // first field deja writes), a reset with its key.
    let quoted = serde_json::to_string(key).unwrap_or_default();
    let turn_start = format!("{{\"id\":{}:", quoted.strip_suffix('"').unwrap_or(&quoted));
    let reset_line = format!("{{\"reset\":{quoted}}}");
    let (turn_finder, reset_finder) = (memchr::memmem::Finder::new(&turn_start), memchr::memmem::Finder::new(&reset_line));
    let rules = crate::redact::fingerprint();
    for segment in segments {
        let frames = segment.table.frames_of(h);
        if frames.is_empty() {
            continue;
        }
        let redacted = segment.table.redacted_with() == rules;
        let Ok(file) = std::fs::File::open(&segment.path) else { continue };
        for at in frames {
            let Some(lines) = read_frame(&file, at, decompressor) else { continue };
            let at_line_start = |i: &usize| *i == 0 || lines[*i - 1] == b'\n';
            let mut starts: Vec<(usize, bool)> = turn_finder.find_iter(&lines).filter(at_line_start).map(|i| (i, true)).collect();
            starts.extend(reset_finder.find_iter(&lines).filter(at_line_start).map(|i| (i, false)));
            starts.sort_unstable();
            for (start, is_turn) in starts {
                if !is_turn {
                    folded.lines.clear();
                    folded.bytes.clear();
                    continue;
                }
                let end = memchr::memchr(b'\n', &lines[start..]).map_or(lines.len(), |n| start + n);
                let line = &lines[start..end];
                // The id ends in the turn number and its closing quote; a session whose
                // id extends this one's with a colon shares the prefix, and has another
                // colon where the quote should be.
                let Some(seq) = seq_after(&line[turn_start.len()..]) else { continue };
                let at = folded.bytes.len();
                folded.bytes.extend_from_slice(line);
                folded.lines.insert(seq, (at..folded.bytes.len(), redacted));
            }
        }
    }
    folded
}

/// The turn number that opens `rest` (what follows a turn id's session key and colon)
/// when the id's closing quote follows it.
fn seq_after(rest: &[u8]) -> Option<u32> {
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || rest.get(digits) != Some(&b'"') {
        return None;
    }
    std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()
}

/// Frames deja writes record their size; one that does not (or claims more than a
/// line cap's worth of lines could need) is decoded as a stream.
const MAX_FRAME_BYTES: u64 = 64 << 20;

fn read_frame(file: &std::fs::File, at: FrameAt, decompressor: &mut Option<zstd::bulk::Decompressor<'static>>) -> Option<Vec<u8>> {
    let mut compressed = vec![0u8; at.len as usize];
    file.read_exact_at(&mut compressed, at.offset).ok()?;
    match zstd::zstd_safe::get_frame_content_size(&compressed) {
        Ok(Some(size)) if size <= MAX_FRAME_BYTES => {
            let d = match decompressor {
                Some(d) => d,
                None => decompressor.insert(zstd::bulk::Decompressor::new().ok()?),
            };
            d.decompress(&compressed, size as usize).ok()
        }
        _ => zstd::stream::decode_all(compressed.as_slice()).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SessionMeta;

    fn meta(id: &str) -> SessionMeta {
        crate::archive::tests::meta(id, "a title")
    }

    use crate::archive::tests::turn;

    #[test]
    fn a_session_is_read_from_its_frames_and_folded_like_the_whole_archive() {
        let tmp = tempfile::tempdir().expect("tmp");
        let archive = Archive::new(tmp.path().join("archive"));
        let mut w = archive.writer();
        // Enough sessions of enough text to fill several frames.
        for i in 0..60 {
            let turns: Vec<Turn> = (0..20).map(|s| turn(s, &format!("session {i} turn {s} {}", "words ".repeat(40)))).collect();
            w.session(&meta(&format!("s{i}")), &turns).expect("write");
        }
        w.commit().expect("commit");
        let reader = ArchiveReader::new(&archive.dir);
        assert_eq!(
            reader.turn("alpha:s42", 7).map(|t| t.text).as_deref(),
            Some(format!("session 42 turn 7 {}", "words ".repeat(40)).as_str())
        );
        assert!(reader.turn("alpha:s42", 20).is_none());
        assert!(reader.turn("alpha:nope", 0).is_none());

        // A later segment grows one session and reads another again whole, shorter.
        let mut w = archive.writer();
        w.turns(&meta("s3"), &[turn(20, "a new turn"), turn(2, "turn two, with its result")]).expect("write");
        w.session(&meta("s5"), &[turn(0, "only this")]).expect("write");
        w.commit().expect("commit");
        assert_eq!(reader.turn("alpha:s3", 20).map(|t| t.text).as_deref(), Some("a new turn"), "a missing turn relists");
        assert_eq!(reader.session("alpha:s3").get(&2).map(|t| t.turn.text.as_str()), Some("turn two, with its result"));
        assert_eq!(reader.session("alpha:s5").len(), 1);

        let (whole, _) = archive.load(|_| true).expect("load");
        for s in &whole {
            let mut mine: Vec<Turn> = reader.session(&s.key()).values().map(|a| a.turn.clone()).collect();
            mine.sort_by_key(|t| t.seq);
            assert_eq!(mine, s.turns, "{}", s.key());
        }

        // Compaction replaces the segments; the reader follows.
        archive.rewrite(|_| false).expect("rewrite");
        let reader = ArchiveReader::new(&archive.dir);
        assert_eq!(reader.session("alpha:s5").len(), 1);
        assert_eq!(reader.turn("alpha:s59", 19).map(|t| t.seq), Some(19));
    }

    #[test]
    fn a_turn_number_ends_at_the_ids_closing_quote() {
        assert_eq!(seq_after(b"12\",\"harness\""), Some(12));
        assert_eq!(seq_after(b"0\""), Some(0));
        // Another session's id, extending this one's with a colon.
        assert_eq!(seq_after(b"7:3\""), None);
        assert_eq!(seq_after(b"x\""), None);
        assert_eq!(seq_after(b"\""), None);
        assert_eq!(seq_after(b"99999999999\""), None, "past u32");
        assert_eq!(seq_after(b"12"), None, "cut off");
    }

    #[test]
    fn sessions_whose_ids_share_a_prefix_or_need_escaping_stay_apart() {
        let tmp = tempfile::tempdir().expect("tmp");
        let archive = Archive::new(tmp.path().join("archive"));
        let mut w = archive.writer();
        w.session(&meta("a"), &[turn(0, "a zero")]).expect("write");
        w.session(&meta("a:b"), &[turn(0, "a:b zero"), turn(1, "a:b one")]).expect("write");
        w.session(&meta("q\"uote\\d"), &[turn(0, "quoted")]).expect("write");
        w.commit().expect("commit");
        let mut w = archive.writer();
        w.session(&meta("a:b"), &[turn(0, "a:b again")]).expect("write");
        w.commit().expect("commit");
        let reader = ArchiveReader::new(&archive.dir);
        assert_eq!(reader.session("alpha:a").len(), 1);
        assert_eq!(reader.turn("alpha:a", 0).map(|t| t.text).as_deref(), Some("a zero"));
        assert_eq!(reader.session("alpha:a:b").len(), 1, "the reset of a:b is its own");
        assert_eq!(reader.turn("alpha:q\"uote\\d", 0).map(|t| t.text).as_deref(), Some("quoted"));
    }

    #[test]
    fn only_text_redacted_by_these_rules_is_shown_unscanned() {
        let tmp = tempfile::tempdir().expect("tmp");
        let archive = Archive::new(tmp.path().join("archive"));
        // A line with a secret the rules catch, written raw: unmarked, by older rules,
        // and marked as redacted by these rules (a lie only a test tells).
        let secret = "deploy with ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        for (id, mark) in [("raw", None), ("older", Some(7)), ("ours", Some(crate::redact::fingerprint()))] {
            let mut w = archive.writer();
            if let Some(m) = mark {
                w.redacted_with(m);
            }
            w.session(&meta(id), &[turn(0, secret)]).expect("write");
            w.commit().expect("commit");
        }
        let reader = ArchiveReader::new(&archive.dir);
        for id in ["raw", "older"] {
            let shown = reader.shown_turn(&format!("alpha:{id}"), 0).expect("turn").text;
            assert!(!shown.contains("ghp_") && shown.contains("[redacted:"), "{id}: {shown}");
        }
        assert_eq!(reader.shown_turn("alpha:ours", 0).expect("turn").text, secret, "trusted as written");
        assert_eq!(reader.turn("alpha:raw", 0).expect("turn").text, secret, "turn() is the text as archived");

        // Compaction keeps a mark only where every folded segment had the same one.
        archive.rewrite(|_| false).expect("rewrite");
        let reader = ArchiveReader::new(&archive.dir);
        assert!(!reader.shown_turn("alpha:ours", 0).expect("turn").text.contains("ghp_"));
    }

    #[test]
    fn a_segment_without_a_table_is_scanned_and_a_damaged_one_reads_as_missing() {
        let tmp = tempfile::tempdir().expect("tmp");
        let archive = Archive::new(tmp.path().join("archive"));
        let mut w = archive.writer();
        w.session(&meta("a"), &[turn(0, "kept")]).expect("write");
        let path = w.commit().expect("commit").expect("written");
        std::fs::remove_file(table_path(&path)).expect("drop the table");
        assert!(archive.has_unframed_segments().expect("segments"));
        std::fs::write(archive.dir.join("00000002.ndjson.zst"), b"\x28\xb5\x2f\xfd garbage").expect("write");
        let reader = ArchiveReader::new(&archive.dir);
        assert_eq!(reader.turn("alpha:a", 0).map(|t| t.text).as_deref(), Some("kept"));
        assert!(reader.turn("alpha:b", 0).is_none());
    }
}

//! A segment's frame table: which zstd frames of a segment hold lines of which session,
//! so one session's turns are read by decompressing a few frames instead of the whole
//! segment (the index keeps no copy of turn text; see [`super::lookup`]).
//!
//! A segment is a run of independent zstd frames of whole lines, closed where a session
//! begins once past [`FRAME_MIN_BYTES`] and within one past [`FRAME_BYTES`]; read end to
//! end it is still one zstd stream. Its
//! table, `<n>.frames` beside `<n>.ndjson.zst`, is written and synced before the
//! segment is renamed into place, so a segment never lacks one unless it predates
//! frames or the file was lost; then [`FrameTable::scan`] rebuilds it from the frames.
//!
//! The file is a header (`DEJAFRM2`, then the [redaction fingerprint](crate::redact::fingerprint)
//! every line of the segment was redacted with, or 0 when that is not known), then fixed
//! 20-byte records sorted by session hash and then offset: the xxh3 of the session key
//! (`u64`), the frame's byte offset in the segment (`u64`) and its compressed length
//! (`u32`), all little-endian. Fixed records let a lookup binary-search the mapped
//! bytes, with no parsing.

use std::collections::BTreeSet;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use super::{hash, Line};

/// Uncompressed bytes a frame closes after, within a session's lines.
pub const FRAME_BYTES: usize = 64 << 10;
/// Uncompressed bytes after which a frame closes where a session's lines begin.
///
/// Together they put a median session (about 30 KB of lines) in a frame with few
/// others: on the 200 MB benchmark corpus a lookup decompresses 45 KB on average
/// against 95 KB for plain 64 KiB frames, and the archive is 17.8% of the corpus against
/// 17.4% (16.6% for 128 KiB frames, which made a search's lookups twice as slow).
pub const FRAME_MIN_BYTES: usize = 16 << 10;

const MAGIC: &[u8; 8] = b"DEJAFRM2";
/// The header: the magic and the redaction fingerprint.
const HEADER: usize = MAGIC.len() + 8;
const RECORD: usize = 20;

/// Where one frame is in its segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct FrameAt {
    pub offset: u64,
    pub len: u32,
}

/// The table path of a segment.
pub fn table_path(segment: &Path) -> PathBuf {
    let name = segment.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let stem = name.strip_suffix(".ndjson.zst").unwrap_or(name);
    segment.with_file_name(format!("{stem}.frames"))
}

/// One segment's table: the file mapped (a lookup touches a few pages of it: at 5 GB of
/// history the table of the first build is 3 MB), or rebuilt in memory.
#[derive(Debug)]
pub struct FrameTable {
    bytes: TableBytes,
}

#[derive(Debug)]
enum TableBytes {
    Mapped(memmap2::Mmap),
    Built(Vec<u8>),
}

impl std::ops::Deref for TableBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            TableBytes::Mapped(m) => m,
            TableBytes::Built(v) => v,
        }
    }
}

impl FrameTable {
    /// Serializes `(session hash, frame)` pairs of a segment whose lines were all
    /// redacted with `redacted_with` (0: not known).
    pub fn encode(mut entries: Vec<(u64, FrameAt)>, redacted_with: u64) -> Vec<u8> {
        entries.sort_unstable();
        entries.dedup();
        let mut out = Vec::with_capacity(HEADER + entries.len() * RECORD);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&redacted_with.to_le_bytes());
        for (h, f) in entries {
            out.extend_from_slice(&h.to_le_bytes());
            out.extend_from_slice(&f.offset.to_le_bytes());
            out.extend_from_slice(&f.len.to_le_bytes());
        }
        out
    }

    /// Reads a table file; `None` when it is missing or not one (then the segment is
    /// scanned instead).
    pub fn read(path: &Path) -> Option<FrameTable> {
        let file = std::fs::File::open(path).ok()?;
        // SAFETY: a table is written to a temporary name and renamed into place, never
        // changed after; a rewrite unlinks it, which leaves this mapping valid.
        let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
        let ok = map.starts_with(MAGIC) && map.len() >= HEADER && (map.len() - HEADER).is_multiple_of(RECORD);
        ok.then_some(FrameTable { bytes: TableBytes::Mapped(map) })
    }

    /// Rebuilds the table of a segment written without one, by decompressing each of
    /// its frames and reading the session of every line.
    pub fn scan(segment: &Path) -> Result<FrameTable, String> {
        let data = std::fs::read(segment).map_err(|e| format!("{}: {e}", segment.display()))?;
        let mut entries = Vec::new();
        let mut offset = 0usize;
        while offset < data.len() {
            let rest = &data[offset..];
            let len = zstd::zstd_safe::find_frame_compressed_size(rest)
                .map_err(|_| format!("{}: damaged frame at byte {offset}", segment.display()))?;
            let mut lines = Vec::new();
            zstd::stream::read::Decoder::new(&rest[..len])
                .and_then(|d| d.single_frame().read_to_end(&mut lines))
                .map_err(|e| format!("{}: frame at byte {offset}: {e}", segment.display()))?;
            let at = FrameAt { offset: offset as u64, len: u32::try_from(len).unwrap_or(u32::MAX) };
            let keys: BTreeSet<u64> = lines.split(|b| *b == b'\n').filter_map(Line::parse).map(|l| hash(&l.session_key())).collect();
            entries.extend(keys.into_iter().map(|h| (h, at)));
            offset += len;
        }
        Ok(FrameTable { bytes: TableBytes::Built(FrameTable::encode(entries, 0)) })
    }

    fn record(&self, i: usize) -> (u64, FrameAt) {
        let at = HEADER + i * RECORD;
        let r = &self.bytes[at..at + RECORD];
        let u64_at = |at: usize| u64::from_le_bytes(r[at..at + 8].try_into().unwrap_or_default());
        let len = u32::from_le_bytes(r[16..20].try_into().unwrap_or_default());
        (u64_at(0), FrameAt { offset: u64_at(8), len })
    }

    fn len(&self) -> usize {
        (self.bytes.len() - HEADER) / RECORD
    }

    /// The redaction fingerprint every line of the segment was redacted with; 0 when
    /// that is not known (a segment from before, an import, a test's raw write).
    pub fn redacted_with(&self) -> u64 {
        u64::from_le_bytes(self.bytes[MAGIC.len()..HEADER].try_into().unwrap_or_default())
    }

    /// The frames holding lines of the session hashed `h`, in segment order.
    pub fn frames_of(&self, h: u64) -> Vec<FrameAt> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.record(mid).0 < h {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        (lo..self.len()).map(|i| self.record(i)).take_while(|(k, _)| *k == h).map(|(_, f)| f).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_round_trips_and_finds_every_frame_of_a_session() {
        let f = |offset, len| FrameAt { offset, len };
        let bytes = FrameTable::encode(vec![(7, f(300, 10)), (3, f(0, 100)), (7, f(100, 200)), (9, f(100, 200)), (7, f(100, 200))], 42);
        let tmp = tempfile::tempdir().expect("tmp");
        let path = tmp.path().join("00000001.frames");
        std::fs::write(&path, &bytes).expect("write");
        let table = FrameTable::read(&path).expect("read");
        assert_eq!(table.frames_of(7), [f(100, 200), f(300, 10)]);
        assert_eq!(table.frames_of(3), [f(0, 100)]);
        assert!(table.frames_of(8).is_empty());
        assert!(table.frames_of(u64::MAX).is_empty());
        assert_eq!(table.redacted_with(), 42);
        std::fs::write(&path, b"DEJAFRM2 torn header and records").expect("write");
        assert!(FrameTable::read(&path).is_none(), "a torn table is not trusted");
        assert_eq!(table_path(Path::new("/a/00000012.ndjson.zst")), Path::new("/a/00000012.frames"));
    }
}

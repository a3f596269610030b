//! The per-source manifest that makes indexing incremental: for every source ever
//! indexed, its size and mtime (an unchanged source costs one `stat`) and a fingerprint
//! of its other parts (a database's `-wal`, a session directory's part files), how far
//! an append-only log was read and a hash of that prefix (growth is read from the tail
//! only when the prefix is unchanged), the session it produced, and the row cursor a
//! multi-session source (a database) returned, so a refresh re-reads only the sessions
//! that changed.
//!
//! A source refused as a decompression bomb is remembered with the reason, so an
//! unchanged one is reported on every run without being decoded again (until the cap changes).
//!
//! Written atomically after the index commit. Entries of sources that have since
//! disappeared are kept: their sessions stay searchable.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::fsutil::field;
use crate::model::{TailState, TitleBy};

const HEADER: &str = "deja-manifest 3";
/// The previous layout (no parts fingerprint, no cursor), still read.
const HEADER_V2: &str = "deja-manifest 2";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceEntry {
    pub key: String,
    pub harness: String,
    pub size: u64,
    pub mtime_ns: i64,
    /// Offset just past the last complete record read (append-only sources).
    pub offset: u64,
    /// xxh3 of the first `offset` bytes.
    pub prefix_hash: u64,
    /// Sessions this source produced.
    pub sessions: u32,
    /// When it produced exactly one session: its id and the next turn number, so a
    /// grown log can be continued.
    pub session_id: Option<String>,
    pub next_seq: u32,
    /// [`parts_fingerprint`](crate::stamp::parts_fingerprint) of the source's other parts (0 when it has none).
    pub parts_fp: u64,
    /// The row cursor the parser returned (`ParseStats::cursor`).
    pub cursor: Option<String>,
    /// Why the source was refused at this size and mtime ([`FormatError::Refused`](crate::FormatError::Refused):
    /// a decompression bomb), so an unchanged one is reported again without decoding it.
    pub refused: Option<Refusal>,
    /// What a read of the tail continues from, for an append-only source that produced
    /// one session (see [`crate::tail`]). None in a line an earlier release wrote: that
    /// source, grown, is read whole once.
    pub tail: Option<TailEntry>,
}

/// The tail contract's part of a manifest entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TailEntry {
    /// Who gave the title the index holds for the session, for the title precedence.
    pub title_by: TitleBy,
    /// The state the reader returned ([`crate::ParseStats::tail`]), given back on the next
    /// tail read.
    pub state: TailState,
}

/// A source refused under a decode cap: it is read again when the file changes or the
/// cap does (`DEJA_MAX_DECODED_BYTES` raised to let it in).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    /// [`DecodeLimit::max_bytes`](crate::read::DecodeLimit::max_bytes) at the time.
    pub cap: u64,
    pub reason: String,
}

/// Every source indexed, by key. Held for a whole index run and read by every refresh,
/// so it is laid out for size: 116,000 sources (5 GB of history) took 85 MB as a map
/// from a copy of the key to the entry. Each entry is boxed (it is about 180 bytes,
/// and the table keeps up to twice as many slots as entries, a power of two at most
/// 7/8 full) and is its own key, so the key is stored once.
#[derive(Debug, Default)]
pub struct Manifest {
    entries: HashSet<Keyed>,
}

/// An entry hashed and compared by its key alone, so the set can be asked by `&str`.
#[derive(Debug)]
struct Keyed(Box<SourceEntry>);

impl PartialEq for Keyed {
    fn eq(&self, other: &Keyed) -> bool {
        self.0.key == other.0.key
    }
}

impl Eq for Keyed {}

impl std::hash::Hash for Keyed {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.key.hash(state);
    }
}

impl std::borrow::Borrow<str> for Keyed {
    fn borrow(&self) -> &str {
        &self.0.key
    }
}

impl Manifest {
    pub fn load(path: &Path) -> std::io::Result<Manifest> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Manifest::default()),
            Err(e) => return Err(e),
        };
        let text = match std::str::from_utf8(&bytes) {
            Ok(t) => std::borrow::Cow::Borrowed(t),
            Err(_) => String::from_utf8_lossy(&bytes),
        };
        let mut lines = text.lines();
        if !matches!(lines.next(), Some(HEADER | HEADER_V2)) {
            // An unknown manifest version: start over rather than misread it.
            return Ok(Manifest::default());
        }
        let mut manifest = Manifest::default();
        // A key written twice (a damaged file): the later line wins, as it always has.
        for e in lines.filter_map(SourceEntry::from_line) {
            manifest.insert(e);
        }
        Ok(manifest)
    }

    /// The entry of the source `key`.
    pub fn get(&self, key: &str) -> Option<&SourceEntry> {
        self.entries.get(key).map(|k| &*k.0)
    }

    /// Adds `entry`, replacing the one of the same key.
    pub fn insert(&mut self, entry: SourceEntry) {
        self.entries.replace(Keyed(Box::new(entry)));
    }

    /// Every entry, in no particular order.
    pub fn entries(&self) -> impl Iterator<Item = &SourceEntry> {
        self.entries.iter().map(|k| &*k.0)
    }

    /// Writes to a private temporary file and renames it over `path`
    /// ([`crate::fsutil::replace_private`]).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        crate::fsutil::replace_private(path, |w| {
            writeln!(w, "{HEADER}")?;
            let mut entries: Vec<&SourceEntry> = self.entries().collect();
            entries.sort_by(|a, b| a.key.cmp(&b.key));
            for e in entries {
                e.write_line(w)?;
            }
            Ok(())
        })
    }
}

impl SourceEntry {
    /// One tab-separated line: every search reads the whole manifest, and this parses
    /// several times faster than a JSON object per entry.
    fn write_line(&self, w: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            w,
            "{}\t{}\t{}\t{}\t{}\t{:x}\t{}\t{}\t{}\t{:x}\t{}\t{}{}",
            field::escape(&self.key),
            field::escape(&self.harness),
            self.size,
            self.mtime_ns,
            self.offset,
            self.prefix_hash,
            self.sessions,
            self.next_seq,
            self.session_id.as_deref().map(field::escape).unwrap_or_default(),
            self.parts_fp,
            self.cursor.as_deref().map(field::escape).unwrap_or_default(),
            // The twelfth field is empty unless the source was refused; releases before
            // the tail state stop reading there.
            self.refused.as_ref().map(|r| format!("{} {}", r.cap, field::escape(&r.reason))).unwrap_or_default(),
            self.tail
                .as_ref()
                .map(|t| format!("\t{}\t{}", t.title_by.as_str(), field::escape(&serde_json::to_string(&t.state).unwrap_or_default())))
                .unwrap_or_default(),
        )
    }

    fn from_line(line: &str) -> Option<SourceEntry> {
        let mut f = line.split('\t');
        let key = field::unescape(f.next()?);
        let harness = field::unescape(f.next()?);
        let size = f.next()?.parse().ok()?;
        let mtime_ns = f.next()?.parse().ok()?;
        let offset = f.next()?.parse().ok()?;
        let prefix_hash = u64::from_str_radix(f.next()?, 16).ok()?;
        let sessions = f.next()?.parse().ok()?;
        let next_seq = f.next()?.parse().ok()?;
        let session_id = f.next().filter(|s| !s.is_empty()).map(field::unescape);
        // Version 2 lines end here.
        let parts_fp = f.next().and_then(|h| u64::from_str_radix(h, 16).ok()).unwrap_or(0);
        let cursor = f.next().filter(|s| !s.is_empty()).map(field::unescape);
        let refused = f
            .next()
            .and_then(|r| r.split_once(' '))
            .and_then(|(cap, reason)| Some(Refusal { cap: cap.parse().ok()?, reason: field::unescape(reason) }));
        // A state that does not decode (damaged, or from another release) is none: the
        // source is then read whole when it grows, never continued wrongly.
        let tail = f
            .next()
            .and_then(TitleBy::parse)
            .zip(f.next())
            .and_then(|(title_by, state)| Some(TailEntry { title_by, state: serde_json::from_str(&field::unescape(state)).ok()? }));
        Some(SourceEntry {
            key,
            harness,
            size,
            mtime_ns,
            offset,
            prefix_hash,
            sessions,
            session_id,
            next_seq,
            parts_fp,
            cursor,
            refused,
            tail,
        })
    }
}

/// xxh3 of the first `len` bytes of the file.
pub fn prefix_hash(path: &Path, len: u64) -> std::io::Result<u64> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?.take(len);
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; 256 << 10];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.digest())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_awkward_paths() {
        let mut m = Manifest::default();
        for (key, id) in [("/home/a b/x.jsonl", Some("s-1")), ("/tmp/tab\there\\and\nnewline.jsonl", None)] {
            let e = SourceEntry {
                key: key.to_string(),
                harness: "alpha".to_string(),
                size: 12,
                mtime_ns: -5,
                offset: 10,
                prefix_hash: u64::MAX,
                sessions: 1,
                session_id: id.map(str::to_string),
                next_seq: 7,
                parts_fp: 0x1234,
                cursor: id.map(|_| "1700000000123\twith tab".to_string()),
                refused: id.is_none().then(|| Refusal { cap: 1 << 28, reason: "decodes past the cap\trefused".to_string() }),
                tail: id.map(|_| TailEntry {
                    title_by: TitleBy::User,
                    state: TailState {
                        cwd: Some("/home/a\tb".into()),
                        open_calls: [("c1".into(), "bash".into())].into(),
                        ..TailState::default()
                    },
                }),
            };
            m.insert(e);
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("manifest");
        m.save(&path).unwrap();
        let back = Manifest::load(&path).unwrap();
        let sorted = |m: &Manifest| {
            let mut v: Vec<SourceEntry> = m.entries().cloned().collect();
            v.sort_by(|a, b| a.key.cmp(&b.key));
            v
        };
        assert_eq!(sorted(&back), sorted(&m));
        assert_eq!(back.entries().count(), 2);
    }

    #[test]
    fn reads_version_2_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("manifest");
        std::fs::write(&path, "deja-manifest 2\n/a.jsonl\talpha\t10\t5\t10\tff\t1\t3\ts-1\n").unwrap();
        let m = Manifest::load(&path).unwrap();
        let e = m.get("/a.jsonl").expect("entry");
        assert_eq!((e.size, e.next_seq, e.session_id.as_deref(), e.parts_fp, e.cursor.as_deref()), (10, 3, Some("s-1"), 0, None));
    }

    #[test]
    fn a_key_written_twice_keeps_its_later_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("manifest");
        let line = |size: u32| format!("/a.jsonl\talpha\t{size}\t5\t10\tff\t1\t3\ts-1\t0\t\n");
        std::fs::write(&path, format!("{HEADER}\n{}{}", line(10), line(20))).unwrap();
        let m = Manifest::load(&path).unwrap();
        assert_eq!((m.entries().count(), m.get("/a.jsonl").map(|e| e.size)), (1, Some(20)));
    }
}

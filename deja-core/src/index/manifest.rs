//! The per-source manifest that makes indexing incremental: for every source ever
//! indexed, its size and mtime (an unchanged source costs one `stat`), how far an
//! append-only log was read and a hash of that prefix (growth is read from the
//! tail only when the prefix is unchanged), and the session it produced.
//!
//! Written atomically after the index commit. Entries of sources that have since
//! disappeared are kept: their sessions stay searchable.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

const HEADER: &str = "deja-manifest 1";

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
}

#[derive(Debug, Default)]
pub struct Manifest {
    pub entries: HashMap<String, SourceEntry>,
}

impl Manifest {
    pub fn load(path: &Path) -> std::io::Result<Manifest> {
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Manifest::default()),
            Err(e) => return Err(e),
        };
        let mut lines = std::io::BufReader::new(file).lines();
        if lines.next().transpose()?.as_deref() != Some(HEADER) {
            // An unknown manifest version: start over rather than misread it.
            return Ok(Manifest::default());
        }
        let mut entries = HashMap::new();
        for line in lines {
            let line = line?;
            if let Ok(e) = serde_json::from_str::<SourceEntry>(&line) {
                entries.insert(e.key.clone(), e);
            }
        }
        Ok(Manifest { entries })
    }

    /// Writes to a temporary file and renames it over `path`.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let tmp = path.with_extension("tmp");
        {
            let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
            writeln!(w, "{HEADER}")?;
            let mut keys: Vec<&String> = self.entries.keys().collect();
            keys.sort();
            for k in keys {
                serde_json::to_writer(&mut w, &self.entries[k])?;
                w.write_all(b"\n")?;
            }
            w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        }
        std::fs::rename(tmp, path)
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

/// Modification time in nanoseconds since the epoch (0 when unknown).
pub fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos().min(i64::MAX as u128) as i64)
}

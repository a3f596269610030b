//! What says a file changed without reading it: its size and modification time. The
//! indexer's manifest keeps them per source and part, and [`crate::sqlite::memoized`]
//! keys a side database's answer by them; both need the same stamp, so it lives below
//! either.

/// A fingerprint of a source's other parts: size and mtime of each, a marker for one
/// that is missing; 0 when there are none. One `stat` per part.
pub fn parts_fingerprint(parts: &[std::path::PathBuf]) -> u64 {
    if parts.is_empty() {
        return 0;
    }
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for p in parts {
        match std::fs::metadata(p) {
            Ok(m) => {
                h.update(&m.len().to_le_bytes());
                h.update(&mtime_ns(&m).to_le_bytes());
            }
            Err(_) => h.update(b"missing"),
        }
    }
    // 0 means "no parts"; a real fingerprint never collides with it.
    h.digest().max(1)
}

/// Modification time in nanoseconds since the epoch (0 when unknown).
pub fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos().min(i64::MAX as u128) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_fingerprint_moves_with_any_part() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("db-wal"), dir.path().join("gone"));
        std::fs::write(&a, "x").unwrap();
        let before = parts_fingerprint(&[a.clone(), b.clone()]);
        assert_ne!(before, 0);
        assert_eq!(parts_fingerprint(&[]), 0);
        std::fs::write(&a, "xy").unwrap();
        assert_ne!(parts_fingerprint(&[a.clone(), b.clone()]), before);
        let grown = parts_fingerprint(&[a.clone(), b.clone()]);
        std::fs::write(&b, "").unwrap();
        assert_ne!(parts_fingerprint(&[a, b]), grown, "a part appearing changes it");
    }
}

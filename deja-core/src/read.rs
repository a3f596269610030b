//! Shared readers for session stores: whole files (zstd-framed or raw), tolerant JSONL,
//! JSON documents, and small JSON path helpers.
//!
//! JSONL survives what live files contain: a torn last line, a UTF-8 BOM, lines of
//! megabytes and lines that do not decode (counted and reported, never fatal). zstd is
//! detected by its magic bytes and decoded across all concatenated frames in-process;
//! a truncated final frame keeps everything decoded before it.

use std::io::Read;
use std::path::Path;

use serde_json::Value;

use crate::format::{FormatError, ParseStats};

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The decoded bytes of a source.
#[derive(Debug)]
pub struct SourceBytes {
    pub bytes: Vec<u8>,
    /// Bytes of the file on disk that were read.
    pub file_len: u64,
    pub compressed: bool,
}

/// Opens only regular files: a FIFO matching a store pattern would block forever.
fn open_regular(path: &Path) -> Result<std::fs::File, FormatError> {
    let meta = std::fs::metadata(path).map_err(|e| FormatError::io(path, e))?;
    if !meta.is_file() {
        return Err(FormatError::corrupt(path, "not a regular file"));
    }
    std::fs::File::open(path).map_err(|e| FormatError::io(path, e))
}

/// Reads a whole source, decoding zstd frames when the file starts with the zstd
/// magic. A decode error after some output keeps the output and is reported in
/// `stats`; a file whose first frame is already broken is an error.
pub fn read_source(path: &Path, stats: &mut ParseStats) -> Result<SourceBytes, FormatError> {
    let mut raw = Vec::new();
    open_regular(path)?.read_to_end(&mut raw).map_err(|e| FormatError::io(path, e))?;
    let file_len = raw.len() as u64;
    stats.bytes_read += file_len;
    if !raw.starts_with(&ZSTD_MAGIC) {
        return Ok(SourceBytes { bytes: raw, file_len, compressed: false });
    }
    let (bytes, err) = decode_zstd_frames(&raw);
    if let Some(err) = err {
        if bytes.is_empty() {
            return Err(FormatError::corrupt(path, format!("zstd: {err}")));
        }
        stats.problem(format!("{}: zstd stream cut short after {} bytes ({err}); kept what decoded", path.display(), bytes.len()));
    }
    Ok(SourceBytes { bytes, file_len, compressed: true })
}

/// Reads an append-only file from `offset` to its end.
pub fn read_tail(path: &Path, offset: u64, stats: &mut ParseStats) -> Result<SourceBytes, FormatError> {
    use std::io::{Seek, SeekFrom};
    let mut f = open_regular(path)?;
    let file_len = f.metadata().map_err(|e| FormatError::io(path, e))?.len();
    f.seek(SeekFrom::Start(offset.min(file_len))).map_err(|e| FormatError::io(path, e))?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).map_err(|e| FormatError::io(path, e))?;
    stats.bytes_read += bytes.len() as u64;
    Ok(SourceBytes { bytes, file_len, compressed: false })
}

/// Decodes every concatenated zstd frame, returning the output and the error that
/// stopped decoding, if any.
pub fn decode_zstd_frames(raw: &[u8]) -> (Vec<u8>, Option<std::io::Error>) {
    let mut out = Vec::with_capacity(raw.len() * 4);
    let mut decoder = match zstd::stream::read::Decoder::new(raw) {
        Ok(d) => d,
        Err(e) => return (out, Some(e)),
    };
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match decoder.read(&mut buf) {
            Ok(0) => return (out, None),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return (out, Some(e)),
        }
    }
}

/// Calls `f(offset, value)` for every line of `bytes` that decodes as JSON, where
/// `offset` is the absolute offset of the line (`base` is the offset of `bytes[0]`).
/// Blank lines are ignored; undecodable lines are counted as skipped. Sets
/// `stats.end_offset` past the last complete line: a final line without a newline
/// counts as complete only if it decodes (otherwise it is torn and re-read later).
/// When `base` is 0, `stats.prefix_hash` is set to the hash of the complete lines, which
/// equals the file's prefix hash when `bytes` are the file's own (not decompressed) bytes.
pub fn for_each_json_line(bytes: &[u8], base: u64, path: &Path, stats: &mut ParseStats, f: impl FnMut(u64, Value)) {
    for_each_json_line_inner(bytes, base, path, stats, f);
    stats.prefix_hash = (base == 0).then(|| {
        let end = (stats.end_offset as usize).min(bytes.len());
        xxhash_rust::xxh3::xxh3_64(&bytes[..end])
    });
}

fn for_each_json_line_inner(bytes: &[u8], base: u64, path: &Path, stats: &mut ParseStats, mut f: impl FnMut(u64, Value)) {
    let mut start = 0usize;
    let mut line_no = 0u64;
    stats.end_offset = base;
    while start < bytes.len() {
        let (end, next, terminated) = match memchr::memchr(b'\n', &bytes[start..]) {
            Some(i) => (start + i, start + i + 1, true),
            None => (bytes.len(), bytes.len(), false),
        };
        line_no += 1;
        let mut line = &bytes[start..end];
        if let Some(rest) = line.strip_prefix(BOM) {
            line = rest;
        }
        let line = line.trim_ascii();
        if line.is_empty() {
            if terminated {
                stats.end_offset = base + next as u64;
            }
            start = next;
            continue;
        }
        stats.records += 1;
        match serde_json::from_slice::<Value>(line) {
            Ok(v) => {
                stats.end_offset = base + next as u64;
                f(base + start as u64, v);
            }
            Err(e) => {
                if terminated {
                    stats.end_offset = base + next as u64;
                    stats.skip(|| format!("{} line {line_no}: {e}", path.display()));
                } else {
                    stats.skip(|| format!("{} line {line_no}: torn last line ({e})", path.display()));
                }
            }
        }
        start = next;
    }
}

/// Parses a whole-file JSON document (BOM tolerated).
pub fn parse_json_document(bytes: &[u8], path: &Path) -> Result<Value, FormatError> {
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    serde_json::from_slice(bytes).map_err(|e| FormatError::corrupt(path, format!("invalid JSON: {e}")))
}

/// `v[k0][k1]…` as a string.
pub fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    at(v, path)?.as_str()
}

/// `v[k0][k1]…`.
pub fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut cur = v;
    for k in path {
        cur = cur.get(k)?;
    }
    Some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonl_tolerates_bom_torn_and_garbage() {
        let bytes = b"\xEF\xBB\xBF{\"a\":1}\nnot json\n\n{\"a\":2}\n{\"a\":";
        let mut stats = ParseStats::default();
        let mut seen = Vec::new();
        for_each_json_line(bytes, 0, Path::new("x.jsonl"), &mut stats, |off, v| seen.push((off, v["a"].as_i64())));
        assert_eq!(seen, vec![(0, Some(1)), (21, Some(2))]);
        assert_eq!(stats.skipped, 2);
        assert_eq!(stats.end_offset, 29, "torn tail is left to be re-read");
    }

    #[test]
    fn zstd_reads_every_concatenated_frame_and_keeps_a_cut_one() {
        let mut raw = zstd::encode_all(&b"{\"n\":1}\n"[..], 3).unwrap();
        raw.extend(zstd::encode_all(&b"{\"n\":2}\n"[..], 3).unwrap());
        let (out, err) = decode_zstd_frames(&raw);
        assert!(err.is_none());
        assert_eq!(out, b"{\"n\":1}\n{\"n\":2}\n");
        let third = zstd::encode_all(&b"{\"n\":3}\n"[..], 3).unwrap();
        raw.extend(&third[..third.len() - 3]);
        let (out, err) = decode_zstd_frames(&raw);
        assert!(err.is_some());
        assert!(out.starts_with(b"{\"n\":1}\n{\"n\":2}\n"));
    }
}

//! Shared readers for session stores: whole files (zstd-framed or raw), tolerant JSONL,
//! JSON documents, and small JSON path helpers.
//!
//! JSONL survives what live files contain: a torn last line, a UTF-8 BOM, lines of
//! megabytes and lines that do not decode (counted and reported, never fatal); invalid
//! UTF-8 inside a line is replaced with U+FFFD and the line kept (counted as repaired).
//! zstd is detected by its magic bytes and decoded across all concatenated frames
//! in-process; a truncated final frame keeps everything decoded before it. A reader
//! that reads little of a bulky member of its records names it in a [`Prune`], and the
//! member is checked as JSON but not built.
//!
//! Every decoder in the tree is bounded by one [`DecodeLimit`]: a source (or BLOB) may
//! expand to at most [`MAX_DECODE_RATIO`] times its compressed size (but always to
//! [`MIN_SOURCE_ALLOWANCE`], a value to [`MIN_VALUE_ALLOWANCE`]) and never beyond
//! [`MAX_DECODED_BYTES`] (lowered or raised with `DEJA_MAX_DECODED_BYTES`). A 263 KB
//! file of zstd RLE blocks that claims 8 GiB is refused with [`FormatError::Refused`]
//! after at most the limit was decoded, instead of aborting the process on allocation.

use std::io::Read;
use std::path::Path;

use serde_json::Value;

use crate::format::{FormatError, ParseStats};
use crate::model::SourceRef;

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Decoded bytes of one source or value are capped at this many by default…
pub const MAX_DECODED_BYTES: u64 = 256 << 20;
/// …and at this ratio to their compressed size (real JSONL compresses 5–50×; runs of
/// one byte, which is what bombs are made of, 1000× and far more)…
pub const MAX_DECODE_RATIO: u64 = 1000;
/// …except that a whole source may always decode to this much: a session holding one
/// 50 MB tool output of repeated lines compresses 5000× and is no bomb. Bounded work
/// either way, and well below what the indexer can hold.
pub const MIN_SOURCE_ALLOWANCE: u64 = 64 << 20;
/// …and a single value (a BLOB, a frame) to this much, so a short, highly repetitive
/// value (a JSON document of blanks) is not mistaken for a bomb.
pub const MIN_VALUE_ALLOWANCE: u64 = 1 << 20;
/// The variable that sets [`DecodeLimit::max_bytes`] (a number of bytes).
pub const MAX_DECODED_BYTES_VAR: &str = "DEJA_MAX_DECODED_BYTES";

/// How far compressed input may expand: the one limit every decoder in the tree uses
/// (whole sources here, BLOBs in [`crate::sqlite::decode_blob`], frames in adapters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeLimit {
    /// Absolute cap on the decoded bytes of one input.
    pub max_bytes: u64,
    /// Cap as a multiple of the compressed size.
    pub ratio: u64,
    /// Always allowed, whatever the ratio says (still at most `max_bytes`).
    pub floor: u64,
}

impl Default for DecodeLimit {
    /// The limit of a whole source.
    fn default() -> Self {
        DecodeLimit { max_bytes: MAX_DECODED_BYTES, ratio: MAX_DECODE_RATIO, floor: MIN_SOURCE_ALLOWANCE }
    }
}

impl DecodeLimit {
    /// The limit of a whole source (a log, a document), with `max_bytes` from
    /// [`MAX_DECODED_BYTES_VAR`] when it is set to a number (read once per process; see
    /// [`DecodeLimit::env_problem`] for a bad value).
    pub fn current() -> DecodeLimit {
        static CURRENT: std::sync::OnceLock<DecodeLimit> = std::sync::OnceLock::new();
        *CURRENT.get_or_init(|| {
            let value = std::env::var(MAX_DECODED_BYTES_VAR).ok();
            DecodeLimit::from_var(value.as_deref()).unwrap_or_default()
        })
    }

    /// The limit of one value inside a source (a BLOB, a frame): [`DecodeLimit::current`]
    /// with the smaller allowance, since a source may hold thousands of them.
    pub fn value() -> DecodeLimit {
        DecodeLimit { floor: MIN_VALUE_ALLOWANCE, ..DecodeLimit::current() }
    }

    /// The limit a value of [`MAX_DECODED_BYTES_VAR`] asks for; `Err` says why it is not
    /// a byte count (the defaults apply then).
    pub fn from_var(value: Option<&str>) -> Result<DecodeLimit, String> {
        let Some(v) = value.map(str::trim).filter(|v| !v.is_empty()) else { return Ok(DecodeLimit::default()) };
        match v.parse::<u64>() {
            Ok(n) if n > 0 => Ok(DecodeLimit { max_bytes: n, ..DecodeLimit::default() }),
            _ => Err(format!("{MAX_DECODED_BYTES_VAR}={v:?} is not a positive number of bytes; using {MAX_DECODED_BYTES}")),
        }
    }

    /// Why the process's [`MAX_DECODED_BYTES_VAR`] was ignored, if it was.
    pub fn env_problem() -> Option<String> {
        DecodeLimit::from_var(std::env::var(MAX_DECODED_BYTES_VAR).ok().as_deref()).err()
    }

    /// The most that `compressed_len` bytes may decode to.
    pub fn for_input(&self, compressed_len: u64) -> u64 {
        compressed_len.saturating_mul(self.ratio).max(self.floor).min(self.max_bytes)
    }
}

/// Compressed input that would decode past its [`DecodeLimit`]; decoding stopped there.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "{compressed} compressed bytes decode to more than {limit} bytes (allowed: {floor} bytes, beyond that {ratio}× the \
     compressed size, never more than {max} bytes, which {MAX_DECODED_BYTES_VAR} sets); refused as a decompression bomb"
)]
pub struct TooLarge {
    pub compressed: u64,
    pub limit: u64,
    pub floor: u64,
    pub ratio: u64,
    pub max: u64,
}

impl TooLarge {
    /// `compressed` bytes that would decode past `limit`.
    pub fn new(limit: &DecodeLimit, compressed: u64) -> TooLarge {
        TooLarge { compressed, limit: limit.for_input(compressed), floor: limit.floor, ratio: limit.ratio, max: limit.max_bytes }
    }
}

/// Reads `reader` to its end into `out`, stopping with [`TooLarge`] once more than
/// `cap` bytes came out. Other read errors end the read and are returned beside what was
/// read (`Ok(Some(e))`), so a cut stream keeps its decoded prefix.
pub fn read_bounded(mut reader: impl Read, cap: u64, out: &mut Vec<u8>) -> Result<Option<std::io::Error>, u64> {
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return Ok(None),
            Ok(n) => {
                if out.len() as u64 + n as u64 > cap {
                    return Err(cap);
                }
                out.extend_from_slice(&buf[..n]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Ok(Some(e)),
        }
    }
}

/// The decoded bytes of a source.
#[derive(Debug)]
pub struct SourceBytes {
    pub bytes: Vec<u8>,
    /// Bytes of the file on disk that were read.
    pub file_len: u64,
    pub compressed: bool,
}

/// Opens only regular files (a FIFO matching a store pattern would block forever), with
/// the length the check saw.
fn open_regular(path: &Path) -> Result<(std::fs::File, u64), FormatError> {
    let meta = std::fs::metadata(path).map_err(|e| FormatError::io(path, e))?;
    if !meta.is_file() {
        return Err(FormatError::corrupt(path, "not a regular file"));
    }
    Ok((std::fs::File::open(path).map_err(|e| FormatError::io(path, e))?, meta.len()))
}

/// Reads a whole source, decoding zstd frames when the file starts with the zstd
/// magic. A decode error after some output keeps the output and is reported in
/// `stats`; a file whose first frame is already broken is an error, and one that
/// decodes past [`DecodeLimit::current`] is [`FormatError::Refused`].
pub fn read_source(path: &Path, stats: &mut ParseStats) -> Result<SourceBytes, FormatError> {
    read_source_limited(path, stats, &DecodeLimit::current())
}

/// [`read_source`] with an explicit limit.
pub fn read_source_limited(path: &Path, stats: &mut ParseStats, limit: &DecodeLimit) -> Result<SourceBytes, FormatError> {
    let mut raw = Vec::new();
    open_regular(path)?.0.read_to_end(&mut raw).map_err(|e| FormatError::io(path, e))?;
    source_bytes(path, raw, stats, limit)
}

/// A whole source as read from disk (`raw`): counted in `stats`, and decoded within
/// `limit` when it starts with the zstd magic (see [`read_source`]).
fn source_bytes(path: &Path, raw: Vec<u8>, stats: &mut ParseStats, limit: &DecodeLimit) -> Result<SourceBytes, FormatError> {
    let file_len = raw.len() as u64;
    stats.bytes_read += file_len;
    if !raw.starts_with(&ZSTD_MAGIC) {
        return Ok(SourceBytes { bytes: raw, file_len, compressed: false });
    }
    let (bytes, err) = decode_zstd_frames_limited(&raw, limit).map_err(|e| FormatError::refused(path, e.to_string()))?;
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
    let (mut f, file_len) = open_regular(path)?;
    f.seek(SeekFrom::Start(offset.min(file_len))).map_err(|e| FormatError::io(path, e))?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).map_err(|e| FormatError::io(path, e))?;
    stats.bytes_read += bytes.len() as u64;
    Ok(SourceBytes { bytes, file_len, compressed: false })
}

/// Decodes every concatenated zstd frame within [`DecodeLimit::current`], returning
/// the output and the error that stopped decoding, if any.
pub fn decode_zstd_frames(raw: &[u8]) -> Result<(Vec<u8>, Option<std::io::Error>), TooLarge> {
    decode_zstd_frames_limited(raw, &DecodeLimit::current())
}

/// [`decode_zstd_frames`] with an explicit limit. Output past the limit is never
/// buffered: decoding stops as soon as it is exceeded.
pub fn decode_zstd_frames_limited(raw: &[u8], limit: &DecodeLimit) -> Result<(Vec<u8>, Option<std::io::Error>), TooLarge> {
    let cap = limit.for_input(raw.len() as u64);
    let mut out = Vec::with_capacity((raw.len() as u64).saturating_mul(4).min(cap) as usize);
    let decoder = match zstd::stream::read::Decoder::new(raw) {
        Ok(d) => d,
        Err(e) => return Ok((out, Some(e))),
    };
    match read_bounded(decoder, cap, &mut out) {
        Ok(err) => Ok((out, err)),
        Err(_) => Err(TooLarge::new(limit, raw.len() as u64)),
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
    for_each_json_line_pruned(bytes, base, path, stats, &[], f);
}

/// [`for_each_json_line`] for records some of whose top-level members the reader reads
/// little of: each member `prune` names is built with only the members it keeps (see
/// [`Prune`]).
pub fn for_each_json_line_pruned(bytes: &[u8], base: u64, path: &Path, stats: &mut ParseStats, prune: &[Prune], f: impl FnMut(u64, Value)) {
    stats.end_offset = base;
    json_lines(bytes, base, &mut 0, path, stats, prune, f);
    stats.prefix_hash = (base == 0).then(|| {
        let end = (stats.end_offset as usize).min(bytes.len());
        xxhash_rust::xxh3::xxh3_64(&bytes[..end])
    });
}

/// Every JSON line of an append-only source, for one parse: from its resume point when
/// it has one (offsets as in the file), else the whole source in chunks
/// ([`for_each_json_line_streamed`]).
pub fn for_each_source_line(
    src: &SourceRef,
    stats: &mut ParseStats,
    prune: &[Prune],
    f: impl FnMut(u64, Value),
) -> Result<(), FormatError> {
    match &src.resume {
        Some(r) => {
            let tail = read_tail(&src.path, r.offset, stats)?;
            let base = r.offset.min(tail.file_len);
            for_each_json_line_pruned(&tail.bytes, base, &src.path, stats, prune, f);
            Ok(())
        }
        None => for_each_json_line_streamed(&src.path, stats, prune, f),
    }
}

/// Bytes a streamed read takes from the file at a time (see
/// [`for_each_json_line_streamed`]).
const STREAM_CHUNK_BYTES: usize = 8 << 20;

/// [`for_each_json_line_pruned`] over a whole source read in chunks cut at line ends,
/// so a session file of hundreds of MB is never held at once (one of 150 MB held its
/// bytes through the line loop: 150 of the build's 216 MB heap). Records, offsets,
/// `end_offset`, `prefix_hash` and every count come out as from the whole file. A zstd
/// source is decoded whole, as [`read_source`] does, and its `end_offset` is the file's
/// length (offsets in the decoded stream mean nothing on disk).
pub fn for_each_json_line_streamed(
    path: &Path,
    stats: &mut ParseStats,
    prune: &[Prune],
    f: impl FnMut(u64, Value),
) -> Result<(), FormatError> {
    stream_json_lines(path, stats, prune, STREAM_CHUNK_BYTES, f)
}

fn stream_json_lines(
    path: &Path,
    stats: &mut ParseStats,
    prune: &[Prune],
    chunk: usize,
    mut f: impl FnMut(u64, Value),
) -> Result<(), FormatError> {
    let (mut file, len) = open_regular(path)?;
    let mut buf: Vec<u8> = Vec::new();
    if len > chunk as u64 {
        // The first bytes say whether the source is zstd.
        (&mut file).take(ZSTD_MAGIC.len() as u64).read_to_end(&mut buf).map_err(|e| FormatError::io(path, e))?;
    }
    if len <= chunk as u64 || buf.starts_with(&ZSTD_MAGIC) {
        // Most sources, and zstd ones: read whole, as `read_source` does.
        file.read_to_end(&mut buf).map_err(|e| FormatError::io(path, e))?;
        let source = source_bytes(path, buf, stats, &DecodeLimit::current())?;
        for_each_json_line_pruned(&source.bytes, 0, path, stats, prune, f);
        if source.compressed {
            // Offsets inside the decoded stream mean nothing on disk.
            stats.end_offset = source.file_len;
        }
        return Ok(());
    }
    stats.bytes_read += buf.len() as u64;
    // Offset in the file of `buf[0]`, and lines seen before it.
    let (mut base, mut line_no) = (0u64, 0u64);
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    stats.end_offset = 0;
    let mut eof = false;
    while !eof {
        let have = buf.len();
        buf.resize(have + chunk, 0);
        let n = loop {
            match file.read(&mut buf[have..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(FormatError::io(path, e)),
            }
        };
        buf.truncate(have + n);
        eof = n == 0;
        stats.bytes_read += n as u64;
        // Whole lines only, until the end: a line never spans two passes.
        let upto = if eof {
            buf.len()
        } else {
            match memchr::memrchr(b'\n', &buf) {
                Some(i) => i + 1,
                None => continue,
            }
        };
        if upto == 0 {
            continue;
        }
        json_lines(&buf[..upto], base, &mut line_no, path, stats, prune, &mut f);
        // Every line before the last pass ended in a newline, so `end_offset` is past
        // all of it; the last pass may leave a torn line out of the hash.
        let hashed = (stats.end_offset.saturating_sub(base) as usize).min(upto);
        hasher.update(&buf[..hashed]);
        buf.drain(..upto);
        base += upto as u64;
    }
    stats.prefix_hash = Some(hasher.digest());
    Ok(())
}

/// The lines of `bytes` (at `base` in the file, after `line_no` lines), each parsed
/// and handed to `f` with its offset.
#[allow(clippy::too_many_arguments)]
fn json_lines(
    bytes: &[u8],
    base: u64,
    line_no: &mut u64,
    path: &Path,
    stats: &mut ParseStats,
    prune: &[Prune],
    mut f: impl FnMut(u64, Value),
) {
    let mut start = 0usize;
    while start < bytes.len() {
        let (end, next, terminated) = match memchr::memchr(b'\n', &bytes[start..]) {
            Some(i) => (start + i, start + i + 1, true),
            None => (bytes.len(), bytes.len(), false),
        };
        *line_no += 1;
        let line_no = *line_no;
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
        match parse_json_lossy_pruned(line, prune) {
            Ok((v, repaired)) => {
                stats.end_offset = base + next as u64;
                if repaired {
                    stats.repaired += 1;
                }
                if repaired && stats.repaired == 1 {
                    // The count says how many; the first one says where.
                    stats.problem(format!("{} line {line_no}: invalid UTF-8 replaced with U+FFFD", path.display()));
                }
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

/// One JSON record; a record that fails only because of invalid UTF-8 is parsed again
/// with each bad sequence replaced by U+FFFD (`true`: repaired), so one bad byte costs
/// one character, not the record. Every record reader uses it (count the repairs in
/// [`ParseStats::repaired`]).
pub fn parse_json_lossy(line: &[u8]) -> Result<(Value, bool), serde_json::Error> {
    parse_lossy(line, |bytes| serde_json::from_slice::<Value>(bytes))
}

/// A top-level member of a JSON record that a reader reads little of. The record's
/// value for `key`, when an object, is built with only the members named in `keep`;
/// anything else there (another member, or a value that is not an object) is checked
/// as JSON and passed over, never built. Claude Code's `toolUseResult`, for one, repeats
/// a tool's whole output (a read file, the file before an edit) beside the result the
/// reader takes from `message`.
#[derive(Debug, Clone, Copy)]
pub struct Prune {
    pub key: &'static str,
    pub keep: &'static [&'static str],
}

/// [`parse_json_lossy`] with `prune` applied to the record's top-level members.
pub fn parse_json_lossy_pruned(line: &[u8], prune: &[Prune]) -> Result<(Value, bool), serde_json::Error> {
    if prune.is_empty() {
        return parse_json_lossy(line);
    }
    parse_lossy(line, |bytes| {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let value = serde::de::DeserializeSeed::deserialize(Pruned::Record(prune), &mut de)?;
        de.end()?;
        Ok(value)
    })
}

/// `parse(line)`, and when that fails only because `line` is not UTF-8, `parse` of it
/// with each bad sequence replaced by U+FFFD (`true`: repaired); the first error else.
fn parse_lossy(line: &[u8], parse: impl Fn(&[u8]) -> Result<Value, serde_json::Error>) -> Result<(Value, bool), serde_json::Error> {
    match parse(line) {
        Ok(v) => Ok((v, false)),
        Err(e) if std::str::from_utf8(line).is_ok() => Err(e),
        Err(e) => parse(String::from_utf8_lossy(line).as_bytes()).map(|v| (v, true)).map_err(|_| e),
    }
}

/// How much of a JSON value [`parse_json_lossy_pruned`] builds.
#[derive(Clone, Copy)]
enum Pruned<'p> {
    /// A record: whole, but for its [`Prune`]d members (a line that is not an object is
    /// built whole too, for readers to count).
    Record(&'p [Prune]),
    /// A pruned member: only the members named, `null` when it is not an object.
    Member(&'static [&'static str]),
}

impl<'de> serde::de::DeserializeSeed<'de> for Pruned<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Pruned<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match self {
                Pruned::Record(prune) => {
                    let value = match prune.iter().find(|p| p.key == key) {
                        Some(p) => map.next_value_seed(Pruned::Member(p.keep))?,
                        None => map.next_value::<Value>()?,
                    };
                    out.insert(key, value);
                }
                Pruned::Member(keep) if keep.contains(&key.as_str()) => {
                    out.insert(key, map.next_value::<Value>()?);
                }
                Pruned::Member(_) => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(out))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        match self {
            Pruned::Record(_) => serde::Deserialize::deserialize(serde::de::value::SeqAccessDeserializer::new(seq)),
            Pruned::Member(_) => {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Value::Null)
            }
        }
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(self.scalar(|| Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(self.scalar(|| Value::from(v)))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(self.scalar(|| Value::from(v)))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(self.scalar(|| serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(self.scalar(|| Value::String(v.to_string())))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

impl Pruned<'_> {
    /// A value that is not an object or array: a record line keeps it, a member does not.
    fn scalar(self, value: impl FnOnce() -> Value) -> Value {
        match self {
            Pruned::Record(_) => value(),
            Pruned::Member(_) => Value::Null,
        }
    }
}

/// Parses a whole-file JSON document (BOM tolerated; invalid UTF-8 replaced with U+FFFD,
/// so one bad byte does not cost the whole session).
pub fn parse_json_document(bytes: &[u8], path: &Path) -> Result<Value, FormatError> {
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    parse_json_lossy(bytes).map(|(v, _)| v).map_err(|e| FormatError::corrupt(path, format!("invalid JSON: {e}")))
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

/// For tests: one zstd frame of RLE blocks (4 bytes each on disk, 128 KiB decoded) that
/// decodes to `decoded_bytes` zeros: 8 GiB take 256 KiB, and no encoder has to run.
#[cfg(any(test, feature = "testkit"))]
pub fn zstd_rle_bomb(decoded_bytes: u64) -> Vec<u8> {
    const BLOCK: u64 = 128 << 10;
    // Frame header: no content size, not single-segment, window 2^17 (= one block).
    let mut out = vec![0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x38];
    let mut left = decoded_bytes;
    while left > 0 {
        let n = left.min(BLOCK);
        left -= n;
        let header = u32::from(left == 0) | (1 << 1) | ((n as u32) << 3);
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.push(0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_streamed_source_reads_as_the_whole_file_does() {
        let bad_utf8: &[u8] = b"{\"a\":\"caf\xe9\"}\n";
        let inputs: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"\n\n".to_vec(),
            b"{\"a\":1}\n{\"a\":2}\n".to_vec(),
            b"{\"a\":1}\n{\"a\":2}".to_vec(),
            b"\xEF\xBB\xBF{\"a\":1}\r\n\n  \nnot json\n{\"toolUseResult\":{\"x\":[1,2],\"interrupted\":true},\"b\":3}\n{\"torn\":".to_vec(),
            [b"{\"a\":\"a long line of text that spans several chunks\"}\n".as_slice(), bad_utf8, b"[1,2]\n{\"z\":0}\n"].concat(),
        ];
        let prune = [Prune { key: "toolUseResult", keep: &["interrupted"] }];
        let dir = tempfile::tempdir().expect("tmp");
        // A zstd source is decoded whole, and reads the same.
        let zstd_input = zstd::encode_all(&inputs[4][..], 3).expect("zstd");
        for (k, input) in inputs.iter().chain([&zstd_input]).enumerate() {
            let path = dir.path().join(format!("s{k}.jsonl"));
            std::fs::write(&path, input).expect("write");
            let mut whole = ParseStats::default();
            let mut want = Vec::new();
            let bytes = read_source(&path, &mut whole).expect("read");
            for_each_json_line_pruned(&bytes.bytes, 0, &path, &mut whole, &prune, |o, v| want.push((o, v)));
            if bytes.compressed {
                whole.end_offset = bytes.file_len;
            }
            for chunk in [1, 2, 3, 5, 8, 13, 64, STREAM_CHUNK_BYTES] {
                let mut streamed = ParseStats::default();
                let mut got = Vec::new();
                stream_json_lines(&path, &mut streamed, &prune, chunk, |o, v| got.push((o, v))).expect("stream");
                assert_eq!(got, want, "input {k}, chunk {chunk}");
                let key =
                    |s: &ParseStats| (s.records, s.skipped, s.repaired, s.bytes_read, s.end_offset, s.prefix_hash, s.problems.clone());
                assert_eq!(key(&streamed), key(&whole), "input {k}, chunk {chunk}");
            }
        }
    }

    #[test]
    fn a_source_line_read_starts_at_its_resume_point() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, b"{\"a\":1}\n{\"a\":2}\n").expect("write");
        let read = |src: &SourceRef| {
            let mut stats = ParseStats::default();
            let mut got = Vec::new();
            for_each_source_line(src, &mut stats, &[], |o, v| got.push((o, v["a"].as_i64()))).expect("read");
            (got, stats.end_offset)
        };
        assert_eq!(read(&SourceRef::file(&path)), (vec![(0, Some(1)), (8, Some(2))], 16));
        let mut resumed = SourceRef::file(&path);
        resumed.resume = Some(crate::model::Resume { offset: 8, next_seq: 1, session_id: "s".into(), ..Default::default() });
        assert_eq!(read(&resumed), (vec![(8, Some(2))], 16), "offsets stay the file's");
    }

    #[test]
    fn the_test_bomb_is_a_real_zstd_frame() {
        let small = zstd_rle_bomb(300 << 10);
        assert_eq!(zstd::decode_all(&small[..]).unwrap(), vec![0u8; 300 << 10]);
    }

    #[test]
    fn a_bomb_is_refused_by_the_ratio_cap_before_the_absolute_one() {
        // A value: 1 GiB from 32 KiB; 32 MiB is all the ratio allows, far below the cap.
        let bomb = zstd_rle_bomb(1 << 30);
        let value = DecodeLimit { floor: MIN_VALUE_ALLOWANCE, ..DecodeLimit::default() };
        let err = decode_zstd_frames_limited(&bomb, &value).unwrap_err();
        assert_eq!(err.limit, bomb.len() as u64 * MAX_DECODE_RATIO);
        assert!(err.limit < MAX_DECODED_BYTES, "the ratio is what binds here");
        // The same bytes with no ratio cap decode (to an absolute cap lowered for the test).
        let no_ratio = DecodeLimit { max_bytes: 2 << 30, ratio: u64::MAX, floor: 0 };
        assert_eq!(decode_zstd_frames_limited(&zstd_rle_bomb(4 << 20), &no_ratio).unwrap().0.len(), 4 << 20);

        // A source: 4 GiB from 128 KiB is refused at 1000× (128 MiB), between the
        // allowance every source has and the absolute cap.
        let bomb = zstd_rle_bomb(4 << 30);
        let source = DecodeLimit::default();
        let ratio_limit = bomb.len() as u64 * MAX_DECODE_RATIO;
        assert!(MIN_SOURCE_ALLOWANCE < ratio_limit && ratio_limit < MAX_DECODED_BYTES);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.v4.jsonl.zstd");
        std::fs::write(&path, &bomb).unwrap();
        let err = read_source_limited(&path, &mut ParseStats::default(), &source).unwrap_err();
        assert!(matches!(&err, FormatError::Refused { path: p, .. } if *p == path), "{err}");
        assert!(err.to_string().contains(&format!("more than {ratio_limit} bytes")), "{err}");
        assert!(err.to_string().contains("decompression bomb"), "{err}");
        // Under the allowance a repetitive source is read whatever its ratio.
        std::fs::write(&path, zstd_rle_bomb(MIN_SOURCE_ALLOWANCE)).unwrap();
        assert_eq!(read_source_limited(&path, &mut ParseStats::default(), &source).unwrap().bytes.len() as u64, MIN_SOURCE_ALLOWANCE);
    }

    #[test]
    fn the_absolute_cap_binds_well_compressed_input_too() {
        // Ordinary JSONL at an ordinary ratio, over a lowered absolute cap.
        let mut text = Vec::new();
        for i in 0..20_000u32 {
            text.extend(format!("{{\"seq\":{i},\"text\":\"line {}\"}}\n", i.wrapping_mul(2_654_435_761)).into_bytes());
        }
        let packed = zstd::encode_all(&text[..], 3).unwrap();
        let generous = DecodeLimit::default();
        assert_eq!(decode_zstd_frames_limited(&packed, &generous).unwrap().0, text);
        let tight = DecodeLimit { max_bytes: text.len() as u64 / 2, ..DecodeLimit::default() };
        assert!(decode_zstd_frames_limited(&packed, &tight).is_err());
        assert_eq!(DecodeLimit::from_var(Some("4096")).unwrap().max_bytes, 4096);
        assert_eq!(DecodeLimit::from_var(None).unwrap(), DecodeLimit::default());
        assert!(DecodeLimit::from_var(Some("lots")).is_err());
        assert!(DecodeLimit::from_var(Some("0")).is_err());
    }

    #[test]
    fn invalid_utf8_is_replaced_and_the_line_kept() {
        let bytes = b"{\"a\":\"caf\xe9 ok\"}\n{\"a\":\"fine\"}\n\xff\xfe not json\n";
        let mut stats = ParseStats::default();
        let mut seen = Vec::new();
        for_each_json_line(bytes, 0, Path::new("x.jsonl"), &mut stats, |_, v| seen.push(v["a"].as_str().unwrap_or("").to_string()));
        assert_eq!(seen, vec!["caf\u{FFFD} ok".to_string(), "fine".to_string()]);
        assert_eq!(stats.repaired, 1);
        assert_eq!(stats.skipped, 1, "a line that is not JSON with or without repair is still skipped");
        assert!(stats.problems.iter().any(|p| p.contains("line 1") && p.contains("U+FFFD")), "{:?}", stats.problems);
        let doc = parse_json_document(b"{\"title\":\"na\xefve\"}", Path::new("x.json")).unwrap();
        assert_eq!(doc["title"], "na\u{FFFD}ve", "a document keeps its session too");
    }

    #[test]
    fn a_pruned_member_keeps_only_what_is_read_and_the_rest_of_the_record_is_whole() {
        const PRUNE: &[Prune] = &[Prune { key: "result", keep: &["interrupted"] }, Prune { key: "note", keep: &[] }];
        let line = br#"{"type":"user","message":{"content":[{"type":"tool_result","content":"ok"}]},"result":{"stdout":"a\nb","interrupted":true,"file":{"content":"x"}},"note":"long","n":1.5}"#;
        let (full, _) = parse_json_lossy(line).unwrap();
        let (pruned, repaired) = parse_json_lossy_pruned(line, PRUNE).unwrap();
        assert!(!repaired);
        assert_eq!(pruned["result"], serde_json::json!({"interrupted": true}));
        assert_eq!(pruned["note"], Value::Null, "a member that is not an object keeps nothing");
        let (mut a, mut b) = (full.as_object().unwrap().clone(), pruned.as_object().unwrap().clone());
        for k in ["result", "note"] {
            a.remove(k);
            b.remove(k);
        }
        assert_eq!(a, b, "what is not pruned is built as a plain parse builds it");
        // Lines that are not objects are built whole, for readers to count.
        assert_eq!(parse_json_lossy_pruned(b"[1,{\"result\":{\"a\":1}}]", PRUNE).unwrap().0, serde_json::json!([1, {"result": {"a": 1}}]));
        assert_eq!(parse_json_lossy_pruned(b"\"s\"", PRUNE).unwrap().0, serde_json::json!("s"));
        // Deep nesting inside a passed-over member is walked without recursion: no stack
        // overflow, where building it would stop at serde_json's depth limit.
        let deep = format!(r#"{{"result":{{"x":{}{}}}}}"#, "[".repeat(1_000_000), "]".repeat(1_000_000));
        assert_eq!(parse_json_lossy_pruned(deep.as_bytes(), PRUNE).unwrap().0, serde_json::json!({"result": {}}));
        assert!(parse_json_lossy(deep.as_bytes()).is_err());
        // A pruned member is still read as JSON: a broken one breaks the line.
        assert!(parse_json_lossy_pruned(br#"{"result":{"stdout":"a" "b"}}"#, PRUNE).is_err());
        assert!(parse_json_lossy_pruned(br#"{"a":1} trailing"#, PRUNE).is_err());
        // Invalid UTF-8 where it is kept is repaired as a plain parse repairs it.
        let (v, repaired) = parse_json_lossy_pruned(b"{\"a\":\"caf\xe9\",\"result\":{\"interrupted\":false}}", PRUNE).unwrap();
        assert!(repaired);
        assert_eq!(v, serde_json::json!({"a": "caf\u{FFFD}", "result": {"interrupted": false}}));
        let mut stats = ParseStats::default();
        let mut seen = Vec::new();
        for_each_json_line_pruned(
            b"{\"result\":{\"interrupted\":true,\"x\":[1]}}\nnope\n",
            0,
            Path::new("x.jsonl"),
            &mut stats,
            PRUNE,
            |_, v| seen.push(v),
        );
        assert_eq!(seen, vec![serde_json::json!({"result": {"interrupted": true}})]);
        assert_eq!((stats.records, stats.skipped), (2, 1));
    }

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
        let (out, err) = decode_zstd_frames(&raw).unwrap();
        assert!(err.is_none());
        assert_eq!(out, b"{\"n\":1}\n{\"n\":2}\n");
        let third = zstd::encode_all(&b"{\"n\":3}\n"[..], 3).unwrap();
        raw.extend(&third[..third.len() - 3]);
        let (out, err) = decode_zstd_frames(&raw).unwrap();
        assert!(err.is_some());
        assert!(out.starts_with(b"{\"n\":1}\n{\"n\":2}\n"));
    }
}

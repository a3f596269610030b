//! The kit's fuzzing-style mutation check: each adapter's own fixture sources, mutated
//! (arbitrary bytes in place of a source, truncations at many offsets including mid-UTF-8
//! and mid-record, byte flips, deleted, duplicated and swapped lines, JSON-aware edits of
//! valid records, and for SQLite fixtures mutated row values and raw page bytes), are
//! parsed every way the indexer parses them, and each parse must hold four properties:
//!
//! - **no panic** — the parse runs on its own thread; a panic is caught at `join`;
//! - **it ends** — a parse that has not returned within [`HANG_BOUND`] is reported as a
//!   hang (a generous bound: the requirement is "never loops forever", and a fixture-sized
//!   parse takes milliseconds);
//! - **bounded by its input** — the text it emits (every string of every session but the
//!   source reference) is at most [`OUTPUT_RATIO`]× the bytes it was given (decoded bytes
//!   for compressed input) plus [`OUTPUT_SLACK`], and it emits at most one turn per input
//!   byte (plus slack): no parser may turn a small file into an absurd allocation;
//! - **consistent** — skipped records never outnumber records; an append-only source's
//!   `end_offset` lies within the file; every session has the adapter's harness id and a
//!   non-empty, single-line id, numbered turns in increasing order, and no turn with
//!   nothing in it.
//!
//! A seeded deterministic mutator rather than proptest strategies: one `u64` names a
//! whole case (which source, which file of it, which mutation, every random choice), so a
//! failure is reported as adapter + fixture + seed + a sentence describing the mutation,
//! and `DEJA_FUZZ_REPLAY=<seed>` re-runs exactly that case; the mutated input is kept on
//! disk for a debugger. Proptest's shrinking would only shrink the integers that drive a
//! mutation, not the mutated file, so it buys nothing here; where shrinking does matter —
//! arbitrary byte strings fed to the shared readers — `robustness.rs` uses proptest.
//! The seeds CI runs are fixed (derived from `DEJA_FUZZ_SEED`, default a constant), so CI
//! never goes red on a case it did not run before; the long job (`cargo xtask fuzz`)
//! runs many more cases and may vary the base seed.
//!
//! Case counts: `DEJA_FUZZ_CASES` (default [`DEFAULT_CASES`], a few per adapter so seventy
//! adapter test binaries stay within CI's budget).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use crate::format::{HarnessFormat, ParseOptions, ParseStats};
use crate::model::{Resume, Session, SourceRef};

/// Cases per kit test when `DEJA_FUZZ_CASES` is not set.
pub const DEFAULT_CASES: u32 = 12;
/// Emitted text may be this many times the input (JSON escapes, lossy UTF-8 decoding
/// tripling an invalid byte, a call's output folded into its turn and kept as output).
pub const OUTPUT_RATIO: usize = 16;
/// Plus this much, for tiny inputs that name a session in a derived title or project.
pub const OUTPUT_SLACK: usize = 64 << 10;
/// A parse that has not returned after this long is reported as a hang.
pub const HANG_BOUND: Duration = Duration::from_secs(120);
/// The base seed CI runs from.
const DEFAULT_SEED: u64 = 0xDE7A_F022_0000_0014;

/// `DEJA_FUZZ_CASES`, else [`DEFAULT_CASES`].
pub fn cases() -> u32 {
    env_u64("DEJA_FUZZ_CASES").map_or(DEFAULT_CASES, |n| n.min(u32::MAX as u64) as u32)
}

/// `DEJA_FUZZ_SEED`, else a fixed seed.
pub fn base_seed() -> u64 {
    env_u64("DEJA_FUZZ_SEED").unwrap_or(DEFAULT_SEED)
}

/// `DEJA_FUZZ_REPLAY`: the one case seed to run instead of the generated ones.
pub fn replay_seed() -> Option<u64> {
    env_u64("DEJA_FUZZ_REPLAY")
}

fn env_u64(var: &str) -> Option<u64> {
    let v = std::env::var(var).ok()?;
    let v = v.trim();
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

/// The seeds one kit test runs: case `i` of `n` from the base seed, salted by the test's
/// name so two tests of one adapter do not run the same cases.
pub fn case_seeds(salt: &str, n: u32) -> Vec<u64> {
    if let Some(seed) = replay_seed() {
        return vec![seed];
    }
    let salt = xxhash_rust::xxh3::xxh3_64(salt.as_bytes());
    (0..n as u64).map(|i| Rng::new(base_seed() ^ salt ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).next_u64()).collect()
}

/// SplitMix64: tiny, fast and the same on every platform, so a seed means the same case
/// everywhere.
#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }

    /// True one time in `n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// What one mutation did, for the report; `plain_extra` is how many bytes it wrote
/// compressed (a zstd BLOB), which the output bound counts as input.
#[derive(Debug, Clone, Default)]
pub struct Mutated {
    pub what: String,
    pub plain_extra: usize,
}

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// Random bytes of a random length, some shaped like the input they replace
/// (JSON punctuation, multi-byte UTF-8, a zstd or SQLite header).
pub fn arbitrary_bytes(rng: &mut Rng) -> (Vec<u8>, String) {
    let len = match rng.below(4) {
        0 => rng.below(16),
        1 => rng.below(512),
        _ => rng.below(4096),
    };
    let flavour = rng.below(5);
    let mut out = match flavour {
        1 => ZSTD_MAGIC.to_vec(),
        2 => SQLITE_MAGIC.to_vec(),
        _ => Vec::new(),
    };
    const ALPHABET: &[&str] =
        &["{", "}", "[", "]", "\"", ":", ",", "\n", "\\", "\\u0000", "null", "1e999", "é", "💥", "\u{FEFF}", "\r\n", " "];
    while out.len() < len {
        if flavour == 3 {
            out.extend_from_slice(rng.pick(ALPHABET).as_bytes());
        } else {
            out.push(rng.next_u64() as u8);
        }
    }
    let what = match flavour {
        1 => "arbitrary bytes after a zstd magic",
        2 => "arbitrary bytes after a SQLite header",
        3 => "arbitrary JSON punctuation and multi-byte text",
        _ => "arbitrary bytes",
    };
    let n = out.len();
    (out, format!("{what} ({n} bytes)"))
}

/// One structured mutation of a file's bytes (not SQLite). Compressed input is mutated
/// inside its frames and re-compressed (or, one time in four, as raw frame bytes).
pub fn mutate_bytes(original: &[u8], rng: &mut Rng) -> (Vec<u8>, Mutated) {
    if original.starts_with(&ZSTD_MAGIC) && !rng.one_in(4) {
        // A fixture past the decode cap is mutated as raw bytes below.
        if let Ok((plain, _)) = crate::read::decode_zstd_frames(original) {
            let (inner, m) = mutate_bytes(&plain, rng);
            let packed = zstd::encode_all(&inner[..], 1).unwrap_or_else(|_| inner.clone());
            return (packed, Mutated { what: format!("inside zstd: {}", m.what), plain_extra: m.plain_extra + inner.len() });
        }
    }
    let what;
    let out = match rng.below(10) {
        0 => {
            let (b, w) = arbitrary_bytes(rng);
            what = format!("source replaced by {w}");
            b
        }
        1 | 2 => {
            let at = truncation_point(original, rng);
            what = format!("truncated at byte {at} of {}{}", original.len(), point_kind(original, at));
            original[..at].to_vec()
        }
        3 => {
            let mut b = original.to_vec();
            let n = 1 + rng.below(8);
            let mut at = Vec::new();
            for _ in 0..n {
                if b.is_empty() {
                    break;
                }
                let i = rng.below(b.len());
                b[i] = if rng.one_in(2) { b[i] ^ (1 << rng.below(8)) } else { rng.next_u64() as u8 };
                at.push(i);
            }
            what = format!("bytes flipped at {at:?}");
            b
        }
        4..=6 => match json_mutation(original, rng) {
            Some((b, w)) => {
                what = w;
                b
            }
            None => {
                let (b, w) = line_mutation(original, rng);
                what = w;
                b
            }
        },
        _ => {
            let (b, w) = line_mutation(original, rng);
            what = w;
            b
        }
    };
    (out, Mutated { what, plain_extra: 0 })
}

/// A cut point: anywhere, mid-UTF-8 character, around a line end, or inside a string.
fn truncation_point(b: &[u8], rng: &mut Rng) -> usize {
    if b.is_empty() {
        return 0;
    }
    let pick_where = |rng: &mut Rng, pred: &dyn Fn(usize) -> bool| -> Option<usize> {
        let hits: Vec<usize> = (0..b.len()).filter(|&i| pred(i)).collect();
        (!hits.is_empty()).then(|| hits[rng.below(hits.len())])
    };
    let at = match rng.below(5) {
        0 => pick_where(rng, &|i| b[i] & 0xC0 == 0x80),
        1 => pick_where(rng, &|i| b[i] == b'\n').map(|i| (i + rng.below(3)).saturating_sub(1)),
        2 => pick_where(rng, &|i| b[i] == b'"').map(|i| i + 1),
        3 => Some(b.len() - 1 - rng.below(b.len().min(8))),
        _ => None,
    };
    at.unwrap_or_else(|| rng.below(b.len() + 1)).min(b.len())
}

fn point_kind(b: &[u8], at: usize) -> &'static str {
    match b.get(at) {
        Some(c) if c & 0xC0 == 0x80 => " (mid-UTF-8)",
        Some(b'\n') => " (at a line end)",
        _ if at > 0 && b.get(at - 1) == Some(&b'\n') => " (at a line start)",
        _ if at > 0 && b.get(at - 1) == Some(&b'"') => " (inside a string)",
        _ => "",
    }
}

/// Lines deleted, duplicated, swapped or cut (byte-exact elsewhere).
fn line_mutation(original: &[u8], rng: &mut Rng) -> (Vec<u8>, String) {
    let mut lines: Vec<&[u8]> = original.split(|&c| c == b'\n').collect();
    if lines.len() < 2 {
        let at = truncation_point(original, rng);
        return (original[..at].to_vec(), format!("truncated at byte {at}{}", point_kind(original, at)));
    }
    let i = rng.below(lines.len());
    let what = match rng.below(4) {
        0 => {
            lines.remove(i);
            format!("line {} deleted", i + 1)
        }
        1 => {
            let times = 1 + rng.below(3);
            for _ in 0..times {
                lines.insert(i, lines[i]);
            }
            format!("line {} duplicated {times}×", i + 1)
        }
        2 => {
            let j = rng.below(lines.len());
            lines.swap(i, j);
            format!("lines {} and {} swapped", i + 1, j + 1)
        }
        _ => {
            let cut = rng.below(lines[i].len() + 1);
            lines[i] = &lines[i][..cut];
            format!("line {} cut at byte {cut}", i + 1)
        }
    };
    (lines.join(&b'\n'), what)
}

/// A JSON-aware mutation of one record: the whole document when the input is one JSON
/// value, else one JSON line. `None` when nothing in the input parses as JSON.
fn json_mutation(original: &[u8], rng: &mut Rng) -> Option<(Vec<u8>, String)> {
    let body = original.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(original);
    if let Ok(mut doc) = serde_json::from_slice::<Value>(body) {
        if doc.is_object() || doc.is_array() {
            let (what, splice) = mutate_value(&mut doc, rng);
            return Some((render(&doc, splice.as_deref()), format!("document: {what}")));
        }
    }
    let lines: Vec<&[u8]> = original.split(|&c| c == b'\n').collect();
    let records: Vec<usize> =
        (0..lines.len()).filter(|&i| serde_json::from_slice::<Value>(lines[i]).is_ok_and(|v| v.is_object() || v.is_array())).collect();
    let &i = records.get(rng.below(records.len()))?;
    let mut v: Value = serde_json::from_slice(lines[i]).ok()?;
    let (what, splice) = mutate_value(&mut v, rng);
    let mut out = Vec::with_capacity(original.len() + 64);
    for (k, line) in lines.iter().enumerate() {
        if k > 0 {
            out.push(b'\n');
        }
        if k == i {
            out.extend_from_slice(&render(&v, splice.as_deref()));
        } else {
            out.extend_from_slice(line);
        }
    }
    Some((out, format!("line {}: {what}", i + 1)))
}

/// Stands in for a value whose text is spliced in after serialization (deep nesting
/// would overflow the serializer's recursion, and a lone surrogate is not a `String`).
const SPLICE: &str = "\u{1}deja-fuzz-splice\u{1}";

/// Serializes `v`, then puts `splice` where its placeholder is.
fn render(v: &Value, splice: Option<&str>) -> Vec<u8> {
    let text = v.to_string();
    match splice {
        Some(with) => {
            let placeholder = serde_json::to_string(SPLICE).unwrap_or_default();
            text.replacen(&placeholder, with, 1).into_bytes()
        }
        None => text.into_bytes(),
    }
}

/// JSON pointers to every node of `v` (the first few thousand).
fn pointers(v: &Value) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut i = 0;
    while i < out.len() && out.len() < 4096 {
        let p = out[i].clone();
        match v.pointer(&p) {
            Some(Value::Object(m)) => out.extend(m.keys().map(|k| format!("{p}/{}", k.replace('~', "~0").replace('/', "~1")))),
            Some(Value::Array(a)) => out.extend((0..a.len()).map(|k| format!("{p}/{k}"))),
            _ => {}
        }
        i += 1;
    }
    out
}

/// Replaces, drops or reshapes one node of `v`; says what it did, and gives the text to
/// splice in for a placeholder it left (see [`render`]).
pub fn mutate_value(v: &mut Value, rng: &mut Rng) -> (String, Option<String>) {
    let mut splice = None;
    let what = mutate_node(v, rng, &mut splice);
    (what, splice)
}

fn mutate_node(v: &mut Value, rng: &mut Rng, splice: &mut Option<String>) -> String {
    let ptrs = pointers(v);
    // Prefer leaves and small subtrees: most of what a parser reads is a leaf.
    let p = ptrs[if ptrs.len() > 1 { 1 + rng.below(ptrs.len() - 1) } else { 0 }].clone();
    let (parent, key) = match p.rfind('/') {
        Some(i) => (p[..i].to_string(), Some(p[i + 1..].to_string())),
        None => (String::new(), None),
    };
    let op = rng.below(14);
    if op == 0 {
        if let (Some(key), Some(parent_v)) = (&key, v.pointer_mut(&parent)) {
            match parent_v {
                Value::Object(m) => {
                    let k = key.replace("~1", "/").replace("~0", "~");
                    m.remove(&k);
                    return format!("key {p} dropped");
                }
                Value::Array(a) => {
                    if let Ok(i) = key.parse::<usize>() {
                        if i < a.len() {
                            a.remove(i);
                            return format!("element {p} removed");
                        }
                    }
                }
                _ => {}
            }
        }
    }
    let Some(node) = v.pointer_mut(&p) else { return "nothing (no node)".into() };
    let (new, what): (Value, String) = match op {
        0 | 1 => (Value::Null, "null".into()),
        2 => {
            let numbers = [
                serde_json::json!(0),
                serde_json::json!(-1),
                serde_json::json!(u64::MAX),
                serde_json::json!(i64::MIN),
                serde_json::json!(1.5e300),
                serde_json::json!(-0.000001),
            ];
            let n = rng.pick(&numbers);
            (n.clone(), format!("the number {n}"))
        }
        3 => (Value::Bool(rng.one_in(2)), "a boolean".into()),
        4 => (Value::String(String::new()), "an empty string".into()),
        5 => {
            let n = 1 << (10 + rng.below(9));
            let mut s = "é".repeat(n / 4);
            s.push_str(&"x".repeat(n / 2));
            (Value::String(s), format!("a {n}-byte string"))
        }
        6 => (serde_json::json!([1, "two", null, {"text": 3}, [[]]]), "a mixed array".into()),
        7 => (serde_json::json!({}), "an empty object".into()),
        8 => {
            let depth = *rng.pick(&[32, 100, 127, 200, 5000]);
            let nested = if rng.one_in(2) {
                format!("{}{}", "[".repeat(depth), "]".repeat(depth))
            } else {
                format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth))
            };
            *splice = Some(nested);
            (Value::String(SPLICE.into()), format!("nesting {depth} deep"))
        }
        9 => {
            let text = rng.pick(&["\"\\ud800\"", "\"\\udfff\\ud800\"", "\"a\\u0000b\"", "\"\\u001b[31m\\u202e\""]).to_string();
            let what = format!("the string {text}");
            *splice = Some(text);
            (Value::String(SPLICE.into()), what)
        }
        10 => {
            // A string cut mid-character, or a number given as a string.
            match &mut *node {
                Value::String(s) if !s.is_empty() => {
                    let mut at = rng.below(s.len());
                    while !s.is_char_boundary(at) {
                        at -= 1;
                    }
                    (Value::String(s[..at].to_string()), format!("the string cut at byte {at}"))
                }
                Value::Number(n) => (Value::String(n.to_string()), "the number as a string".into()),
                other => (Value::Array(vec![other.clone(), other.clone()]), "wrapped twice in an array".into()),
            }
        }
        11 => {
            // The same value twice over (an array or object grown), or a string doubled.
            match &mut *node {
                Value::Array(a) if !a.is_empty() => {
                    let i = rng.below(a.len());
                    let dup = a[i].clone();
                    a.insert(i, dup);
                    return format!("element {p}/{i} duplicated");
                }
                Value::String(s) => (Value::String(s.repeat(2)), "the string doubled".into()),
                other => (Value::Array(vec![other.clone()]), "wrapped in an array".into()),
            }
        }
        12 => (Value::String("text".into()), "the string \"text\"".into()),
        _ => {
            let shapes = [
                serde_json::json!({"type": "text", "text": 7}),
                serde_json::json!({"role": null, "content": [{"type": "tool_use"}]}),
                serde_json::json!([{"type": "tool_result", "content": {"x": []}}]),
            ];
            let other = rng.pick(&shapes);
            (other.clone(), format!("the shape {other}"))
        }
    };
    *node = new;
    format!("{} replaced by {what}", if p.is_empty() { "the record" } else { &p })
}

/// A copied SQLite database mutated in place: a row value, or raw page bytes.
pub fn mutate_sqlite(db: &Path, rng: &mut Rng) -> Mutated {
    if rng.one_in(3) {
        return mutate_raw(db, rng);
    }
    match mutate_row(db, rng) {
        Ok(Some(m)) => m,
        Ok(None) | Err(_) => mutate_raw(db, rng),
    }
}

/// Flips or overwrites bytes of a database file (or its `-wal`), or truncates it.
pub fn mutate_raw(file: &Path, rng: &mut Rng) -> Mutated {
    let Ok(mut b) = std::fs::read(file) else { return Mutated { what: "nothing (unreadable)".into(), plain_extra: 0 } };
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let what = if b.is_empty() {
        "nothing (empty file)".to_string()
    } else if rng.one_in(5) {
        let at = rng.below(b.len() + 1);
        b.truncate(at);
        format!("{name} truncated at byte {at}")
    } else {
        // Pages are 4 KiB; the header (first 100 bytes) and each page's header are
        // where a reader's trust is tested.
        let mut at = Vec::new();
        for _ in 0..1 + rng.below(16) {
            let i = match rng.below(3) {
                0 => rng.below(b.len().min(100)),
                1 => (rng.below(b.len() / 4096 + 1) * 4096 + rng.below(12)).min(b.len() - 1),
                _ => rng.below(b.len()),
            };
            b[i] = rng.next_u64() as u8;
            at.push(i);
        }
        format!("{name}: bytes overwritten at {at:?}")
    };
    let _ = std::fs::write(file, &b);
    Mutated { what, plain_extra: 0 }
}

/// Updates one text or BLOB value of one row with a mutated value (JSON mutated as
/// JSON, zstd BLOBs inside their frame). `None` when the database has no such value.
fn mutate_row(db: &Path, rng: &mut Rng) -> rusqlite::Result<Option<Mutated>> {
    let conn = rusqlite::Connection::open(db)?;
    let tables: Vec<String> = {
        let mut st = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")?;
        let rows = st.query_map([], |r| r.get::<_, String>(0))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    // (table, rowid, column) of every text or BLOB value, the first few thousand.
    let mut cells: Vec<(String, i64, String)> = Vec::new();
    for t in &tables {
        let cols = crate::sqlite::table_columns(&conn, t).unwrap_or_default();
        for c in cols {
            let sql = format!("SELECT rowid FROM \"{t}\" WHERE typeof(\"{c}\") IN ('text', 'blob') LIMIT 500");
            let Ok(mut st) = conn.prepare(&sql) else { continue };
            let Ok(rows) = st.query_map([], |r| r.get::<_, i64>(0)) else { continue };
            cells.extend(rows.flatten().map(|rowid| (t.clone(), rowid, c.clone())));
        }
    }
    if cells.is_empty() {
        return Ok(None);
    }
    let (t, rowid, c) = cells[rng.below(cells.len())].clone();
    let old: rusqlite::types::Value = conn.query_row(&format!("SELECT \"{c}\" FROM \"{t}\" WHERE rowid = ?1"), [rowid], |r| r.get(0))?;
    use rusqlite::types::Value as Sql;
    let bytes = match &old {
        Sql::Text(s) => s.as_bytes().to_vec(),
        Sql::Blob(b) => b.clone(),
        _ => return Ok(None),
    };
    let mut plain_extra = 0;
    let (new, what) = match rng.below(8) {
        0 => (Sql::Null, "NULL".to_string()),
        1 => (Sql::Integer(rng.next_u64() as i64), "an integer".to_string()),
        2 => {
            let (b, w) = arbitrary_bytes(rng);
            (Sql::Blob(b), format!("a BLOB of {w}"))
        }
        _ => {
            let (b, m) = mutate_bytes(&bytes, rng);
            if bytes.starts_with(&ZSTD_MAGIC) {
                plain_extra = m.plain_extra;
            }
            let as_text = matches!(old, Sql::Text(_)) && !rng.one_in(4);
            match (as_text, String::from_utf8(b)) {
                (true, Ok(s)) => (Sql::Text(s), m.what),
                (_, Ok(s)) => (Sql::Blob(s.into_bytes()), format!("{} (as a BLOB)", m.what)),
                (_, Err(e)) => (Sql::Blob(e.into_bytes()), format!("{} (as a BLOB)", m.what)),
            }
        }
    };
    conn.execute(&format!("UPDATE \"{t}\" SET \"{c}\" = ?1 WHERE rowid = ?2"), rusqlite::params![new, rowid])?;
    Ok(Some(Mutated { what: format!("{t}.{c} of row {rowid}: {what}"), plain_extra }))
}

/// Is `b` a SQLite database (main file)?
pub fn is_sqlite(b: &[u8]) -> bool {
    b.starts_with(SQLITE_MAGIC)
}

/// Which of the kit's two mutation tests a case belongs to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Family {
    /// Arbitrary bytes in place of one file of the source.
    Arbitrary,
    /// Structured mutations of the fixture (truncations, flips, lines, JSON, rows, pages).
    Structured,
}

/// One case: a fixture source copied into a fresh home, one of its files mutated.
pub struct Case {
    pub dir: tempfile::TempDir,
    pub src: SourceRef,
    /// The mutated file, relative to the case's home.
    pub target: PathBuf,
    pub mutation: Mutated,
    /// Bytes of input the parser was given (decoded, for compressed files).
    pub input_bytes: usize,
}

/// Builds the case `seed` names: picks a source of `sources` (found in `home`), copies it
/// (its parts too) into a fresh home, mutates one file.
pub fn build_case(sources: &[SourceRef], home: &Path, family: Family, seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    let shape = &sources[rng.below(sources.len())];
    let dir = tempfile::tempdir().expect("temporary directory");
    let moved = |p: &Path| p.strip_prefix(home).map(|r| dir.path().join(r)).unwrap_or_else(|_| dir.path().join("source"));
    let mut files: Vec<PathBuf> = Vec::new();
    for p in std::iter::once(&shape.path).chain(&shape.parts) {
        copy_any(p, &moved(p), &mut files);
    }
    files.sort();
    files.dedup();
    let src = SourceRef {
        path: moved(&shape.path),
        parts: shape.parts.iter().map(|p| moved(p)).collect(),
        resume: None,
        cursor: None,
        ..shape.clone()
    };
    // The source's own file most of the time; its other files (a WAL, a session's parts)
    // the rest.
    let target = if files.is_empty() || (src.path.is_file() && (files.len() == 1 || !rng.one_in(4))) {
        src.path.clone()
    } else {
        files[rng.below(files.len())].clone()
    };
    let original = std::fs::read(&target).unwrap_or_default();
    let mutation = match family {
        Family::Arbitrary => {
            let (b, what) = arbitrary_bytes(&mut rng);
            if let Some(parent) = target.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            let _ = std::fs::write(&target, &b);
            Mutated { what, plain_extra: 0 }
        }
        Family::Structured if is_sqlite(&original) => mutate_sqlite(&target, &mut rng),
        Family::Structured if target.to_string_lossy().ends_with("-wal") => mutate_raw(&target, &mut rng),
        Family::Structured => {
            let (b, m) = mutate_bytes(&original, &mut rng);
            let _ = std::fs::write(&target, &b);
            m
        }
    };
    let input_bytes = mutation.plain_extra + input_bytes(&src);
    let target = target.strip_prefix(dir.path()).map(Path::to_path_buf).unwrap_or(target);
    Case { dir, src, target, mutation, input_bytes }
}

/// The bytes a source gives its parser: every file of it and its parts, compressed
/// files counted decoded as well.
pub fn input_bytes(src: &SourceRef) -> usize {
    let mut all = Vec::new();
    for p in std::iter::once(&src.path).chain(&src.parts) {
        list_files(p, &mut all);
    }
    let mut n = 0;
    for f in &all {
        let b = std::fs::read(f).unwrap_or_default();
        n += b.len();
        if b.starts_with(&ZSTD_MAGIC) {
            n += crate::read::decode_zstd_frames(&b).map_or(0, |(plain, _)| plain.len());
        }
    }
    n
}

fn copy_any(from: &Path, to: &Path, files: &mut Vec<PathBuf>) {
    if from.is_dir() {
        let _ = std::fs::create_dir_all(to);
        for e in std::fs::read_dir(from).into_iter().flatten().flatten() {
            copy_any(&e.path(), &to.join(e.file_name()), files);
        }
    } else if from.is_file() {
        if let Some(parent) = to.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        if std::fs::copy(from, to).is_ok() {
            files.push(to.to_path_buf());
        }
    }
}

fn list_files(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
            list_files(&e.path(), out);
        }
    } else if p.is_file() && !out.iter().any(|o| o == p) {
        out.push(p.to_path_buf());
    }
}

/// One way of parsing a source, as the indexer would.
#[derive(Debug, Clone)]
pub struct Way {
    pub include_reasoning: bool,
    pub resume_at: Option<u64>,
    pub cursor: Option<String>,
}

impl std::fmt::Display for Way {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "reasoning {}", if self.include_reasoning { "on" } else { "off" })?;
        if let Some(at) = self.resume_at {
            write!(f, ", resumed at byte {at}")?;
        }
        if let Some(c) = &self.cursor {
            write!(f, ", from cursor {c:?}")?;
        }
        Ok(())
    }
}

/// What a parse produced, or how it failed to.
pub enum Outcome {
    /// The stats boxed: they are large (the tail state) beside the other outcomes.
    Done(Vec<Session>, Box<Result<ParseStats, String>>),
    Panicked(String),
    Hung,
}

/// Parses `src` on its own thread (default stack size, as the indexer's workers), so a
/// panic is caught and a hang is noticed; the thread's name carries `label`, so even a
/// stack overflow (which aborts the process) names the case.
pub fn parse_guarded(format: &'static dyn HarnessFormat, src: &SourceRef, way: &Way, label: &str) -> Outcome {
    let mut src = src.clone();
    if let Some(offset) = way.resume_at {
        src.resume = Some(Resume { offset, next_seq: 3, session_id: "resumed".into(), ..Default::default() });
    }
    src.cursor = way.cursor.clone();
    let opts = ParseOptions { include_reasoning: way.include_reasoning };
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new().name(label.to_string()).spawn(move || {
        let mut out = Vec::new();
        let r = format.parse(&src, &opts, &mut out).map_err(|e| e.to_string());
        let _ = tx.send((out, r));
    });
    let Ok(handle) = spawned else { return Outcome::Panicked("could not spawn the parse thread".into()) };
    match rx.recv_timeout(HANG_BOUND) {
        Ok((out, r)) => {
            let _ = handle.join();
            Outcome::Done(out, Box::new(r))
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => match handle.join() {
            Err(payload) => Outcome::Panicked(panic_text(&payload)),
            Ok(()) => Outcome::Panicked("the parse thread ended without a result".into()),
        },
        // The thread cannot be stopped; the test fails and the process ends with it.
        Err(mpsc::RecvTimeoutError::Timeout) => Outcome::Hung,
    }
}

fn panic_text(payload: &Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-text payload".into())
}

/// The properties every parse must hold (see the module doc); the first broken one.
pub fn check_output(
    id: &str,
    src: &SourceRef,
    input_bytes: usize,
    sessions: &[Session],
    stats: &Result<ParseStats, String>,
) -> Option<String> {
    if let Ok(stats) = stats {
        if stats.skipped > stats.records {
            return Some(format!("stats say {} skipped of {} records", stats.skipped, stats.records));
        }
        if src.append_only {
            let len = std::fs::metadata(&src.path).map(|m| m.len()).unwrap_or(0);
            if stats.end_offset > len {
                return Some(format!("end_offset {} lies past the end of the {len}-byte file", stats.end_offset));
            }
        }
    }
    let mut text = 0usize;
    let mut turns = 0usize;
    for s in sessions {
        if s.harness != id {
            return Some(format!("a session says harness {:?}", s.harness));
        }
        if s.id.trim().is_empty() || s.id.contains(['\n', '\r', '\0']) {
            let shown: String = s.id.chars().take(60).collect();
            let more = if s.id.chars().count() > 60 { "…" } else { "" };
            return Some(format!("a session has the id {shown:?}{more}"));
        }
        let mut last: Option<u32> = None;
        for t in &s.turns {
            if last.is_some_and(|l| t.seq <= l) {
                return Some(format!("session {}: turn {} follows turn {}", s.id, t.seq, last.unwrap_or_default()));
            }
            last = Some(t.seq);
            if t.is_empty() {
                return Some(format!("session {}: turn {} ({:?}) carries nothing", s.id, t.seq, t.role));
            }
            text += serde_json::to_value(t).map(|v| string_bytes(&v)).unwrap_or(0);
        }
        turns += s.turns.len();
        for field in
            [Some(&s.id), s.title.as_ref(), s.project.as_ref(), s.parent.as_ref(), s.kind.as_ref(), s.agent.as_ref()].into_iter().flatten()
        {
            text += field.len();
        }
    }
    let bound = OUTPUT_RATIO * input_bytes + OUTPUT_SLACK;
    if text > bound {
        return Some(format!("{text} bytes of text from {input_bytes} bytes of input (bound {bound})"));
    }
    if turns > input_bytes + 1024 {
        return Some(format!("{turns} turns from {input_bytes} bytes of input"));
    }
    None
}

fn string_bytes(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len(),
        Value::Array(a) => a.iter().map(string_bytes).sum(),
        Value::Object(m) => m.iter().map(|(k, v)| k.len() + string_bytes(v)).sum(),
        _ => 0,
    }
}

/// Runs the cases of one family over `sources` (found in `home`); returns the report of
/// the first failing case, if any.
pub fn run_family(format: &'static dyn HarnessFormat, sources: &[SourceRef], home: &Path, family: Family, n: u32) -> Result<u32, String> {
    let id = format.info().id;
    let salt = format!("{id}/{family:?}");
    let seeds = case_seeds(&salt, n);
    let mut ran = 0;
    for seed in seeds {
        let case = build_case(sources, home, family, seed);
        let origin = case.src.path.strip_prefix(case.dir.path()).map(Path::to_path_buf).unwrap_or_else(|_| case.src.path.clone());
        let len = std::fs::metadata(&case.src.path).map(|m| m.len()).unwrap_or(0);
        // One full parse (reasoning on or off, as the seed says), then the incremental
        // reads the indexer would do next: from a resume offset, from the cursor.
        let reasoning = seed & 1 == 1;
        let mut ways = vec![Way { include_reasoning: reasoning, resume_at: None, cursor: None }];
        if case.src.append_only {
            ways.push(Way {
                include_reasoning: reasoning,
                resume_at: Some(if len == 0 { 0 } else { (seed >> 1) % (len + 1) }),
                cursor: None,
            });
        }
        let mut i = 0;
        while i < ways.len() {
            let way = ways[i].clone();
            i += 1;
            let label = format!("fuzz {id} seed {seed:#x}");
            let failure = match parse_guarded(format, &case.src, &way, &label) {
                Outcome::Panicked(msg) => Some(format!("the parser panicked: {msg}")),
                Outcome::Hung => Some(format!("the parse did not return within {}s", HANG_BOUND.as_secs())),
                Outcome::Done(sessions, stats) => {
                    if way.cursor.is_none() && way.resume_at.is_none() {
                        if let Some(c) = stats.as_ref().as_ref().ok().and_then(|s| s.cursor.clone()) {
                            if !ways.iter().any(|w| w.cursor.is_some()) {
                                ways.push(Way { include_reasoning: way.include_reasoning, resume_at: None, cursor: Some(c) });
                            }
                        }
                    }
                    check_output(id, &case.src, case.input_bytes, &sessions, &stats)
                }
            };
            if let Some(failure) = failure {
                let kept = case.dir.keep();
                let mut report = String::new();
                let _ = writeln!(report, "{id}: {failure}");
                let _ = writeln!(report, "  fixture:   {} (mutated file: {})", origin.display(), case.target.display());
                let _ = writeln!(report, "  mutation:  {}", case.mutation.what);
                let _ = writeln!(report, "  parsed:    {way}");
                let _ = writeln!(report, "  seed:      {seed:#x} ({family:?} family, base seed {:#x})", base_seed());
                let _ = writeln!(report, "  input:     kept in {}", kept.display());
                let _ = writeln!(report, "  reproduce: DEJA_FUZZ_REPLAY={seed:#x} cargo test -p deja-adapter-{id} conformance_");
                return Err(report);
            }
        }
        ran += 1;
    }
    Ok(ran)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_names_one_mutation() {
        let line = br#"{"type":"user","message":{"content":[{"type":"text","text":"h\u00e9llo"}]}}"#;
        let fixture = [&line[..], b"\n", &line[..], b"\n"].concat();
        for seed in 0..200 {
            let (a, ma) = mutate_bytes(&fixture, &mut Rng::new(seed));
            let (b, mb) = mutate_bytes(&fixture, &mut Rng::new(seed));
            assert_eq!(a, b, "seed {seed}: {}", ma.what);
            assert_eq!(ma.what, mb.what);
        }
    }

    #[test]
    fn mutations_cover_every_kind() {
        let line = r#"{"type":"user","message":{"content":[{"type":"text","text":"héllo wörld"}]}}"#.as_bytes();
        let fixture = [line, b"\n", line, b"\n"].concat();
        let whats: Vec<String> = (0..2000).map(|s| mutate_bytes(&fixture, &mut Rng::new(s)).1.what).collect();
        for kind in [
            "source replaced by arbitrary",
            "mid-UTF-8",
            "bytes flipped",
            "deleted",
            "duplicated",
            "swapped",
            "replaced by null",
            "dropped",
            "nesting 5000 deep",
            "-byte string",
            "\\ud800",
            "the number",
        ] {
            assert!(whats.iter().any(|w| w.contains(kind)), "no mutation says {kind:?}");
        }
    }

    #[test]
    fn spliced_text_lands_where_its_placeholder_was() {
        let mut v = serde_json::json!({"a": {"b": "x"}});
        let mut rng = Rng::new(0);
        let mut seen_deep = false;
        for _ in 0..400 {
            let mut w = v.clone();
            let (what, splice) = mutate_value(&mut w, &mut rng);
            let out = String::from_utf8(render(&w, splice.as_deref())).expect("utf-8");
            assert!(!out.contains("deja-fuzz-splice"), "{what}: {out}");
            if what.contains("nesting 5000 deep") {
                seen_deep = true;
                assert!(out.contains(&"[".repeat(5000)) || out.contains(&"{\"a\":".repeat(5000)), "{out}");
            }
        }
        assert!(seen_deep);
        v["a"]["b"] = Value::Null;
        assert_eq!(render(&v, None), br#"{"a":{"b":null}}"#);
    }

    #[test]
    fn the_output_bound_catches_an_absurd_parse() {
        let src = SourceRef::file("/nowhere");
        let mut s = Session::new("x", "id", src.clone());
        s.turns.push(crate::model::Turn::new(crate::model::Role::User, "a".repeat(OUTPUT_SLACK + 16 * 100 + 1)));
        s.turns[0].seq = 1;
        let stats = Ok(ParseStats { records: 1, ..ParseStats::default() });
        assert!(check_output("x", &src, 100, std::slice::from_ref(&s), &stats).is_some_and(|f| f.contains("bytes of text")));
        s.turns[0].text.truncate(10);
        assert_eq!(check_output("x", &src, 100, std::slice::from_ref(&s), &stats), None);
        s.id = String::new();
        assert!(check_output("x", &src, 100, &[s], &stats).is_some_and(|f| f.contains("id")));
    }
}

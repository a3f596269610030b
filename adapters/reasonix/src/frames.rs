//! Reasonix 1.x `events.frames`: a run of frames, each `RX4F`, the compressed size and
//! the raw size (both uint32 big-endian), then one zstd frame holding one JSON record.
//! Records come in commits: `batch/begin`, the events, `batch/end` carrying the SHA-256
//! of the records before it. Reasonix 1.38.11 names a record's kind in `recordType` and
//! wraps each event as `batch/event` `{event: {id, seq, kind, payload}}`; the page's
//! bare `{type, payload}` events are read too. Only a
//! finished batch whose digest matches counts: a trailing batch without its end is a
//! write in progress (Reasonix itself truncates it on the next open), and a digest
//! mismatch drops the batch, as Reasonix fails closed on one.
//!
//! The events replay into a message list (`message/complete` appends, `message/upsert`
//! replaces by id, `message/retract` drops ids, `history/replace` and `legacy/import`
//! swap in a whole list, `session/title` names the session), which `messages` turns
//! into turns like a JSONL transcript.

use std::path::{Path, PathBuf};

use base64::Engine;
use deja_core::read::{str_at, DecodeLimit, TooLarge};
use deja_core::{ParseStats, Timestamp};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The frame magic.
pub const MAGIC: &[u8; 4] = b"RX4F";
/// Bytes before a frame's zstd data: magic, compressed size, raw size.
const HEADER: usize = 12;
/// A decoded record larger than this is not one Reasonix wrote (its frame budget is
/// 8 MiB; payloads above 64 KiB go to the content store): skipped, never allocated.
const MAX_RAW: usize = 16 << 20;

/// One decoded frame: its JSON record (None when it did not decode), the decoded bytes
/// and the frame's own bytes, for the batch digest.
pub(crate) struct Record<'a> {
    pub value: Option<Value>,
    pub raw: Vec<u8>,
    pub framed: &'a [u8],
}

/// Every frame of `bytes`. The second value is true when the file ends inside a frame
/// (a write in progress); a run that stops being frames ends the read. Decoding is held
/// to `limit`: a frame whose raw size exceeds the ratio to its compressed size is
/// skipped unallocated, and a file whose frames together decode past the limit for the
/// whole file is refused ([`TooLarge`]), so thousands of small bomb frames cannot add up.
pub(crate) fn decode<'a>(
    bytes: &'a [u8],
    path: &Path,
    stats: &mut ParseStats,
    limit: &DecodeLimit,
) -> Result<(Vec<Record<'a>>, bool), TooLarge> {
    let mut out = Vec::new();
    let mut off = 0usize;
    let budget = limit.for_input(bytes.len() as u64);
    let per_frame = DecodeLimit { floor: deja_core::read::MIN_VALUE_ALLOWANCE, ..*limit };
    let mut decoded = 0u64;
    while off < bytes.len() {
        let rest = &bytes[off..];
        if rest.len() < HEADER {
            return Ok((out, MAGIC.starts_with(&rest[..rest.len().min(4)])));
        }
        if &rest[..4] != MAGIC {
            // The undecodable rest is one record, skipped: stats never skip more than they read.
            stats.records += 1;
            stats.skip(|| format!("{}: bytes at offset {off} are not an RX4F frame; the rest of the file is not read", path.display()));
            return Ok((out, false));
        }
        let csize = u32::from_be_bytes([rest[4], rest[5], rest[6], rest[7]]) as usize;
        let rsize = u32::from_be_bytes([rest[8], rest[9], rest[10], rest[11]]) as usize;
        let Some(end) = HEADER.checked_add(csize).filter(|e| *e <= rest.len()) else {
            return Ok((out, true));
        };
        let framed = &rest[..end];
        off += end;
        stats.records += 1;
        let raw = if rsize > MAX_RAW || rsize as u64 > per_frame.for_input(csize as u64) {
            None
        } else {
            decoded += rsize as u64;
            if decoded > budget {
                return Err(TooLarge::new(limit, bytes.len() as u64));
            }
            // The raw size bounds the allocation; a frame that decodes to more is damaged.
            zstd::bulk::decompress(&framed[HEADER..], rsize).ok()
        };
        let value = raw.as_deref().and_then(|r| deja_core::read::parse_json_lossy(r).ok()).map(|(v, repaired)| {
            stats.repaired += u64::from(repaired);
            v
        });
        out.push(Record { value, raw: raw.unwrap_or_default(), framed });
    }
    Ok((out, false))
}

/// The kind of a record: `recordType` on 1.38's records (`batch/begin`, `batch/event`,
/// `batch/end`), `kind` on the event inside a `batch/event`; the page's `type` too.
fn kind(v: &Value) -> Option<&str> {
    ["recordType", "type", "kind", "op"].iter().find_map(|k| v.get(*k).and_then(Value::as_str))
}

/// A `batch/event` wraps one event: `{event: {type, payload}}`, or names the kind beside
/// its payload. A bare event is its own body.
fn event_of(v: &Value) -> Option<(&str, &Value)> {
    let k = kind(v)?;
    if k != "batch/event" {
        return Some((k, v));
    }
    if let Some(inner) = v.get("event").filter(|e| e.is_object()) {
        return kind(inner).map(|k| (k, inner));
    }
    ["eventType", "eventKind", "event", "name"].iter().find_map(|key| v.get(*key).and_then(Value::as_str)).map(|k| (k, v))
}

fn batch_time(v: &Value) -> Option<Timestamp> {
    ["time", "at", "ts", "createdAt", "timestamp", "committedAt"]
        .iter()
        .find_map(|k| v.get(*k).and_then(Timestamp::from_json))
        .filter(|t| t.0 > 0)
}

/// The digest a `batch/end` carries, lower-cased, without a `sha256:` prefix.
fn end_digest(v: &Value) -> Option<String> {
    let d = ["sha256", "digest", "hash", "checksum", "sha"].iter().find_map(|k| v.get(*k).and_then(Value::as_str))?;
    let d = d.trim();
    Some(d.strip_prefix("sha256:").unwrap_or(d).to_string())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// True when `digest` is the SHA-256 of the batch's records: of their decoded bytes or
/// of their frames, written as hex or base64 (the page does not say which; each is
/// tried so the check never drops a batch Reasonix would accept).
fn digest_matches(records: &[Record<'_>], digest: &str) -> bool {
    let mut of_raw = Sha256::new();
    let mut of_frames = Sha256::new();
    for r in records {
        of_raw.update(&r.raw);
        of_frames.update(r.framed);
    }
    let b64 = base64::engine::general_purpose::STANDARD;
    [of_raw.finalize(), of_frames.finalize()].iter().any(|h| hex(h).eq_ignore_ascii_case(digest) || b64.encode(h) == digest)
}

/// Whether a finished batch may be published. Its `batch/end` SHA-256 is checked
/// against the batch's records (decoded bytes or frames, hex or base64). Reasonix
/// 1.38.11 hashes some other, undocumented serialisation (none of those match its
/// digests), so a batch whose end names the begin's `commitId` and `eventCount` is
/// accepted on those; a batch with neither a matching digest nor a matching commit is
/// dropped, as Reasonix drops a digest mismatch.
fn batch_is_sound(body: &[Record<'_>], end: &Value) -> bool {
    let Some(digest) = end_digest(end) else { return true };
    if digest_matches(body, &digest) {
        return true;
    }
    let Some(begin) = body.first().and_then(|r| r.value.as_ref()) else { return false };
    let commit = str_at(end, &["commitId"]).filter(|c| !c.is_empty());
    let events = end.get("eventCount").and_then(Value::as_u64);
    commit.is_some()
        && commit == str_at(begin, &["commitId"])
        && events.is_some_and(|n| n == body.len() as u64 - 1)
        && begin.get("eventCount").and_then(Value::as_u64) == events
}

/// The message list and title a frame log replays to. Each message keeps the time of
/// the batch that wrote it (its own `createdAt`, when set, wins later).
#[derive(Default)]
pub(crate) struct Replay {
    pub messages: Vec<(Value, Option<Timestamp>)>,
    pub title: Option<String>,
}

struct Open {
    start: usize,
    time: Option<Timestamp>,
}

/// Replays the finished, verified batches of `records`. `objects` are the
/// `.content-v1/objects` directories a `payloadRef` may point into.
pub(crate) fn replay(records: &[Record<'_>], torn: bool, objects: &[PathBuf], path: &Path, stats: &mut ParseStats) -> Replay {
    let mut out = Replay::default();
    let mut open: Option<Open> = None;
    for (i, rec) in records.iter().enumerate() {
        let Some(v) = &rec.value else {
            // An undecodable frame inside a batch fails that batch's digest below.
            if open.is_none() {
                stats.skip(|| format!("{}: frame {i} does not decode", path.display()));
            }
            continue;
        };
        match kind(v) {
            Some("batch/begin") => {
                if open.is_some() {
                    stats.skip(|| format!("{}: a batch before frame {i} has no batch/end; ignored", path.display()));
                }
                open = Some(Open { start: i, time: batch_time(v) });
            }
            Some("batch/end") => {
                let Some(batch) = open.take() else {
                    stats.skip(|| format!("{}: batch/end at frame {i} without a batch/begin", path.display()));
                    continue;
                };
                let body = &records[batch.start..i];
                if !batch_is_sound(body, v) {
                    stats.skip(|| format!("{}: the batch ending at frame {i} fails its SHA-256 check; ignored", path.display()));
                    continue;
                }
                if body.iter().any(|r| r.value.is_none()) {
                    stats.skip(|| format!("{}: the batch ending at frame {i} holds a frame that does not decode; ignored", path.display()));
                    continue;
                }
                let time = batch.time.or_else(|| batch_time(v));
                for ev in body.iter().skip(1).filter_map(|r| r.value.as_ref()) {
                    apply(&mut out, ev, time, objects, path, stats);
                }
            }
            Some(_) if open.is_some() => {}
            _ => stats.skip(|| format!("{}: frame {i} stands outside any batch", path.display())),
        }
    }
    if open.is_some() {
        stats.skip(|| format!("{}: the last batch has no batch/end yet (a write in progress); ignored", path.display()));
    } else if torn {
        // A frame cut at the end is a write in progress, like a torn last line: it is
        // read again next time, so it is noted, not counted as a skipped record.
        stats.problem(format!("{}: the last frame is still being written; read next time", path.display()));
    }
    out
}

/// An event's payload: base64 JSON, an inline object, or a `payloadRef` into the
/// content store.
fn payload(body: &Value, objects: &[PathBuf]) -> Option<Value> {
    match body.get("payload") {
        Some(Value::String(s)) => {
            let engines = [base64::engine::general_purpose::STANDARD, base64::engine::general_purpose::URL_SAFE];
            let decoded = engines.iter().find_map(|e| e.decode(s.trim()).ok());
            match decoded {
                Some(bytes) => serde_json::from_slice(&bytes).ok(),
                None => serde_json::from_str(s).ok(),
            }
        }
        Some(v @ Value::Object(_)) => Some(v.clone()),
        _ => match body.get("payloadRef") {
            Some(r) => referenced(r, objects),
            None => Some(body.clone()),
        },
    }
}

/// A payload above 64 KiB, stored as `.content-v1/objects/<aa>/<bb>/<sha256>`.
fn referenced(r: &Value, objects: &[PathBuf]) -> Option<Value> {
    let sha = match r {
        Value::String(s) => s.as_str(),
        other => ["sha256", "sha", "digest", "contentSha", "hash"].iter().find_map(|k| other.get(*k).and_then(Value::as_str))?,
    };
    let sha = sha.strip_prefix("sha256:").unwrap_or(sha).to_ascii_lowercase();
    if sha.len() < 4 || !sha.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    objects.iter().find_map(|dir| {
        let bytes = std::fs::read(dir.join(&sha[..2]).join(&sha[2..4]).join(&sha)).ok()?;
        let bytes = if bytes.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]) { deja_core::read::decode_zstd_frames(&bytes).ok()?.0 } else { bytes };
        serde_json::from_slice(&bytes).ok()
    })
}

fn apply(out: &mut Replay, ev: &Value, time: Option<Timestamp>, objects: &[PathBuf], path: &Path, stats: &mut ParseStats) {
    let Some((k, body)) = event_of(ev) else { return };
    let known =
        matches!(k, "message/complete" | "message/upsert" | "message/retract" | "history/replace" | "legacy/import" | "session/title");
    if !known {
        // Model context, tool state, goals, turns: not the conversation.
        return;
    }
    let Some(p) = payload(body, objects) else {
        stats.skip(|| format!("{}: a {k} payload does not decode (or its content object is missing)", path.display()));
        return;
    };
    let message = || p.get("message").filter(|m| m.is_object()).cloned().or_else(|| p.get("role").map(|_| p.clone()));
    match k {
        "message/complete" => {
            if let Some(m) = message() {
                out.messages.push((m, time));
            }
        }
        "message/upsert" => {
            if let Some(m) = message() {
                let id = str_at(&m, &["id"]).map(str::to_string);
                match id.and_then(|id| out.messages.iter().position(|(old, _)| str_at(old, &["id"]) == Some(id.as_str()))) {
                    Some(at) => {
                        let kept = out.messages[at].1.or(time);
                        out.messages[at] = (m, kept);
                    }
                    None => out.messages.push((m, time)),
                }
            }
        }
        "message/retract" => {
            let ids: Vec<&str> =
                p.get("messageIds").and_then(Value::as_array).map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
            out.messages.retain(|(m, _)| !str_at(m, &["id"]).is_some_and(|id| ids.contains(&id)));
        }
        "history/replace" | "legacy/import" => {
            if let Some(list) = p.get("messages").and_then(Value::as_array) {
                out.messages = list.iter().filter(|m| m.is_object()).map(|m| (m.clone(), time)).collect();
            }
        }
        _ => {
            if let Some(t) = str_at(&p, &["title"]).map(str::trim).filter(|t| !t.is_empty()) {
                out.title = Some(t.to_string());
            }
        }
    }
}

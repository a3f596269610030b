//! `history.jsonl`: one `{session_id, ts, text}` line per submitted prompt, across all
//! sessions. Rollouts are authoritative, so a history session is emitted only for a
//! session id that no rollout accounts for (typically `codex exec` one-offs and
//! rollouts the user deleted).
//!
//! Since a parse sees one source, the history parse checks the rollouts beside it
//! (`<home>/sessions/**` and `<home>/archived_sessions/`, the same walk discovery does):
//!
//! 1. Group the history lines by `session_id`. With no candidates, nothing is read.
//! 2. A rollout whose file-name id equals a candidate covers it (Codex names rollouts
//!    `rollout-<ts>-<thread id>.jsonl`): a map lookup, no I/O.
//! 3. For candidates still open, the rollout heads are read up to their first
//!    `session_meta` (normally line one) and its resolved id — the id a rollout parse
//!    would give — and its `session_id` (the group id forked threads share) cover
//!    candidates. This stops as soon as every candidate is covered; only when some id is
//!    a true orphan are all heads read, one line each.
//!
//! A rollout that exists but yields no turns still counts as covering its id: its
//! prompt, if any, was in the rollout and is simply not indexed twice.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::model::{Role, SourceRef, Timestamp, Turn};
use crate::read::{for_each_json_line, read_source};
use crate::{FormatError, ParseStats, SessionBuilder, SessionSink};
use serde_json::Value;

use super::{all_rollout_files, filename_id, meta_id, read_head, CodexDialect};

/// Lines read from a rollout head while looking for its `session_meta`.
const META_SEARCH_LINES: usize = 4;

struct Prompt {
    text: String,
    time: Option<Timestamp>,
}

/// Parses `history.jsonl` into one session per session id that has no rollout.
pub fn parse_history(d: &CodexDialect, src: &SourceRef, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let mut stats = ParseStats::default();
    let bytes = read_source(&src.path, &mut stats)?.bytes;
    let mut order: Vec<String> = Vec::new();
    let mut groups: HashMap<String, Vec<Prompt>> = HashMap::new();
    for_each_json_line(&bytes, 0, &src.path, &mut stats, |_, v| {
        let (Some(id), Some(text)) = (nonempty_str(&v, "session_id"), v.get("text").and_then(Value::as_str)) else { return };
        let prompt = Prompt { text: text.to_string(), time: v.get("ts").and_then(Timestamp::from_json) };
        match groups.get_mut(id) {
            Some(g) => g.push(prompt),
            None => {
                order.push(id.to_string());
                groups.insert(id.to_string(), vec![prompt]);
            }
        }
    });
    if order.is_empty() {
        return Ok(stats);
    }
    // Discovery names the rollout directories as the source's parts; a bare path (a
    // test, an old manifest) means the Codex layout beside the file.
    let dirs: Vec<PathBuf> = if src.parts.is_empty() {
        let home = src.path.parent().unwrap_or(Path::new("."));
        vec![home.join("sessions"), home.join("archived_sessions")]
    } else {
        src.parts.clone()
    };
    let covered = covered_ids(&dirs, order.iter().map(String::as_str).collect());
    // History is re-read whole; a resume point from the indexer does not apply to it.
    let source = SourceRef { resume: None, ..src.clone() };
    for id in order {
        if covered.contains(&id) {
            continue;
        }
        let Some(prompts) = groups.remove(&id) else { continue };
        let mut b = SessionBuilder::new(d.harness, id, source.clone());
        b.session_mut().project = Some("history".to_string());
        for p in prompts {
            b.push(Turn::new(Role::User, p.text).at(p.time));
        }
        if let Some(s) = b.finish() {
            out.session(s);
        }
    }
    Ok(stats)
}

/// The candidate ids that some rollout under `dirs` accounts for.
fn covered_ids(dirs: &[PathBuf], candidates: HashSet<&str>) -> HashSet<String> {
    let mut open = candidates;
    let mut covered = HashSet::new();
    // Compressed rollouts count too, by their file-name id; their heads are zstd and
    // are not walked for a `session_meta`.
    let files = all_rollout_files(dirs);
    for f in &files {
        if let Some(id) = open.take(filename_id(f).as_str()) {
            covered.insert(id.to_string());
        }
    }
    for f in &files {
        if open.is_empty() {
            break;
        }
        if f.extension().is_some_and(|e| e == "zst") {
            continue;
        }
        let _ = read_head(f, u64::MAX, META_SEARCH_LINES, |v| {
            if v.get("type").and_then(Value::as_str) != Some("session_meta") {
                return true;
            }
            if let Some(p) = v.get("payload").filter(|p| p.is_object()) {
                for id in [meta_id(p), nonempty_str(p, "session_id")].into_iter().flatten() {
                    if let Some(id) = open.take(id) {
                        covered.insert(id.to_string());
                    }
                }
            }
            false
        });
    }
    covered
}

fn nonempty_str<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// Whether a session can be reopened by id: one read from `history.jsonl` alone has no
/// rollout for the harness to load (the resume pick of every Codex-rollout harness).
pub fn resumable(session: &crate::model::SessionMeta) -> Result<(), &'static str> {
    if crate::launch::source_file(session).ends_with("history.jsonl") {
        Err("a history.jsonl entry with no rollout has no session to resume")
    } else {
        Ok(())
    }
}

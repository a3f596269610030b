//! deja's notes store: the durable notes `deja remember` and the MCP `remember` mode
//! save, one JSON line per note in `${XDG_DATA_HOME:-~/.local/share}/deja/notes.jsonl`,
//! beside the [archive](crate::archive) in deja's data directory.
//!
//! Like the archive, the file is primary data — the user's, kept like a harness's
//! history rather than as cache. It lives here, below every surface, so the CLI, the
//! MCP server and `deja forget` write it through one type with one set of limits; the
//! `deja` adapter reads it back as the harness `deja` (one session per note) so notes are
//! found by every search and recall.
//!
//! | field | meaning |
//! | --- | --- |
//! | `id` | `n-` and 16 hex digits; a later line with the same id replaces the note |
//! | `time` | RFC 3339 UTC (any timestamp shape deja reads is accepted) |
//! | `text` | the note (secrets are redacted before it is written) |
//! | `project` | optional working directory the note is about |
//! | `tags` | optional list of words |
//! | `source` | who wrote it: `cli` (the person, `deja remember`) or `mcp` (an agent); absent on older lines |
//!
//! Every note is bounded ([`MAX_NOTE_BYTES`], [`MAX_TAGS`], [`MAX_TAG_BYTES`],
//! [`MAX_PROJECT_BYTES`]): new notes over a limit are refused ([`NoteError`]), lines
//! already in the file are cut to the limits when read ([`Note::from_value`]). Agents'
//! notes are also rate-limited across every process through the file itself: at most
//! [`AGENT_NOTES_PER_HOUR`] in any hour ([`save`]), since a note an agent plants is shown
//! to every later agent.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::env::StoreEnv;
use crate::model::Timestamp;

/// The harness id notes are indexed under (and the `DEJA_DEJA_ROOT` override's id).
pub const HARNESS: &str = crate::model::NOTES_HARNESS;
/// The notes file's name inside deja's data directory.
pub const NOTES_FILE: &str = "notes.jsonl";
/// Longest note, in bytes.
pub const MAX_NOTE_BYTES: usize = 16 << 10;
/// Most tags on one note.
pub const MAX_TAGS: usize = 16;
/// Longest tag, in bytes.
pub const MAX_TAG_BYTES: usize = 64;
/// Longest project path, in bytes (`PATH_MAX` on Linux).
pub const MAX_PROJECT_BYTES: usize = 4096;
/// Notes agents may save through MCP in any hour, all processes together.
pub const AGENT_NOTES_PER_HOUR: usize = 20;

const HOUR_MS: i64 = 3_600_000;
/// How much of the notes file's end is read to count recent agent notes: more than
/// [`AGENT_NOTES_PER_HOUR`] notes at the size limit, so the count is never short.
const RECENT_TAIL_BYTES: u64 = (AGENT_NOTES_PER_HOUR as u64 + 4) * (MAX_NOTE_BYTES as u64 + 8192);

/// Who wrote a note.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NoteSource {
    /// The person, with `deja remember`.
    Cli,
    /// An agent, through the MCP `remember` mode: unverified.
    Mcp,
}

/// Why a new note was refused.
#[derive(Debug, thiserror::Error)]
pub enum NoteError {
    #[error("the note is empty")]
    Empty,
    #[error("the note is {0} bytes; a note holds at most {MAX_NOTE_BYTES} bytes")]
    TooLong(usize),
    #[error("the note has {0} tags; a note takes at most {MAX_TAGS}")]
    TooManyTags(usize),
    #[error("a tag is {0} bytes; a tag is at most {MAX_TAG_BYTES} bytes")]
    TagTooLong(usize),
    #[error("the project is {0} bytes; a project path is at most {MAX_PROJECT_BYTES} bytes")]
    ProjectTooLong(usize),
}

/// Why [`save`] wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    #[error(transparent)]
    Note(#[from] NoteError),
    #[error(
        "agents saved {0} notes in the last hour, the most deja takes ({AGENT_NOTES_PER_HOUR} an hour); this note was not saved — \
         ask the person to save it with `deja remember` if it matters"
    )]
    AgentLimit(usize),
    #[error("writing the note to {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// One note as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Note {
    pub id: String,
    pub time: Timestamp,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Absent on lines written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<NoteSource>,
}

impl Note {
    /// A new note stamped now, refused when over a limit (checked on what was given, so
    /// the answer names the size the writer sent), with secrets redacted in the text,
    /// the tags and the project, and each tag made one line of single spaces.
    pub fn new(text: &str, project: Option<String>, tags: Vec<String>, source: NoteSource) -> Result<Note, NoteError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(NoteError::Empty);
        }
        if text.len() > MAX_NOTE_BYTES {
            return Err(NoteError::TooLong(text.len()));
        }
        if let Some(p) = project.as_ref().filter(|p| p.len() > MAX_PROJECT_BYTES) {
            return Err(NoteError::ProjectTooLong(p.len()));
        }
        let mut kept: Vec<String> = Vec::new();
        for t in &tags {
            let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
            if t.len() > MAX_TAG_BYTES {
                return Err(NoteError::TagTooLong(t.len()));
            }
            if !t.is_empty() && !kept.contains(&t) {
                kept.push(t);
            }
        }
        if kept.len() > MAX_TAGS {
            return Err(NoteError::TooManyTags(kept.len()));
        }
        let redacted = |s: &str, max: usize| {
            let mut s = crate::redact::redact(s).into_owned();
            // A redaction marker can be longer than what it replaced.
            crate::model::cap_text(&mut s, max);
            s
        };
        let text = redacted(text, MAX_NOTE_BYTES);
        let project = project.map(|p| redacted(&p, MAX_PROJECT_BYTES));
        let tags = kept.iter().map(|t| redacted(t, MAX_TAG_BYTES)).collect();
        let time = Timestamp::now();
        let seed = format!("{}:{}:{}", time.0, std::process::id(), text);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let id = format!("n-{:016x}", xxhash_rust::xxh3::xxh3_64_with_seed(seed.as_bytes(), u64::from(nanos)));
        Ok(Note { id, time, text, project, tags, source: Some(source) })
    }

    /// A note out of one JSON line, tolerating missing optional fields and odd types, and
    /// cut to the limits (the file may hold lines no current deja wrote); `None` for a
    /// line that is not an object with a non-empty `id` and `text`.
    pub fn from_value(v: &Value) -> Option<Note> {
        let cut = |s: &str, max: usize| {
            let mut s = s.to_string();
            crate::model::cap_text(&mut s, max);
            s
        };
        let id = cut(v.get("id")?.as_str().filter(|s| !s.trim().is_empty())?, 64);
        let text = cut(v.get("text")?.as_str().filter(|s| !s.trim().is_empty())?, MAX_NOTE_BYTES);
        let time = match v.get("time") {
            Some(Value::String(s)) => Timestamp::parse_str(s),
            Some(Value::Number(n)) => n.as_f64().and_then(Timestamp::from_number),
            _ => None,
        }
        .unwrap_or(Timestamp(0));
        let project = v.get("project").and_then(Value::as_str).filter(|s| !s.is_empty()).map(|p| cut(p, MAX_PROJECT_BYTES));
        let tags: Vec<String> = match v.get("tags") {
            Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
            Some(Value::String(s)) => s.split(',').collect(),
            _ => Vec::new(),
        }
        .into_iter()
        .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|t| !t.is_empty())
        .take(MAX_TAGS)
        .map(|t| cut(&t, MAX_TAG_BYTES))
        .collect();
        let source = v.get("source").cloned().and_then(|s| serde_json::from_value(s).ok());
        Some(Note { id, time, text, project, tags, source })
    }
}

/// `DEJA_DEJA_ROOT` (a directory holding notes.jsonl), else deja's data directory.
pub fn notes_dir(env: &StoreEnv) -> PathBuf {
    env.deja_root(HARNESS).unwrap_or_else(|| env.data_dir())
}

pub fn notes_path(env: &StoreEnv) -> PathBuf {
    notes_dir(env).join(NOTES_FILE)
}

/// Appends `note` as one line (directory 0700, file 0600 where the OS has modes).
pub fn append_note(path: &Path, note: &Note) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        crate::fsutil::private_dir(dir)?;
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut line = serde_json::to_vec(note).map_err(std::io::Error::other)?;
    line.push(b'\n');
    // One write call, so concurrent writers do not interleave inside a line.
    opts.open(path)?.write_all(&line)
}

/// Makes a note of `text` and appends it to `env`'s notes file; returns the note and
/// the file. An agent's note is refused once agents saved [`AGENT_NOTES_PER_HOUR`] in
/// the last hour. Indexing it is the caller's business (the CLI indexes at once, the
/// MCP server in the background).
pub fn save(
    env: &StoreEnv,
    text: &str,
    project: Option<String>,
    tags: Vec<String>,
    source: NoteSource,
) -> Result<(Note, PathBuf), SaveError> {
    let path = notes_path(env);
    let note = Note::new(text, project, tags, source)?;
    if source == NoteSource::Mcp {
        let recent = recent_agent_notes(&path, Timestamp::now());
        if recent >= AGENT_NOTES_PER_HOUR {
            return Err(SaveError::AgentLimit(recent));
        }
    }
    append_note(&path, &note).map_err(|source| SaveError::Io { path: path.clone(), source })?;
    Ok((note, path))
}

/// Notes agents saved (source `mcp`) in the hour before `now`, counted in the end of
/// the notes file; 0 when there is no file.
pub fn recent_agent_notes(path: &Path, now: Timestamp) -> usize {
    let Ok(mut file) = std::fs::File::open(path) else { return 0 };
    let len = file.metadata().map_or(0, |m| m.len());
    let start = len.saturating_sub(RECENT_TAIL_BYTES);
    let mut tail = Vec::new();
    if file.seek(SeekFrom::Start(start)).is_err() || file.take(RECENT_TAIL_BYTES).read_to_end(&mut tail).is_err() {
        return 0;
    }
    // From the middle of the file the first line is torn: it is skipped.
    let lines = tail.split(|b| *b == b'\n').skip(usize::from(start > 0));
    let since = now.0 - HOUR_MS;
    lines.filter_map(|l| serde_json::from_slice::<Note>(l).ok()).filter(|n| n.source == Some(NoteSource::Mcp) && n.time.0 > since).count()
}

/// Rewrites the notes file without the notes whose id is in `ids` (`deja forget`);
/// returns how many went. Lines that are not notes are kept as they are. The file is
/// replaced atomically, so a crash leaves the old one or the new one.
pub fn remove_notes(path: &Path, ids: &std::collections::HashSet<String>) -> std::io::Result<usize> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut kept = Vec::with_capacity(bytes.len());
    let mut removed = 0;
    for line in bytes.split_inclusive(|b| *b == b'\n') {
        let id =
            serde_json::from_slice::<Value>(line.trim_ascii()).ok().and_then(|v| v.get("id").and_then(Value::as_str).map(str::to_string));
        if id.is_some_and(|id| ids.contains(&id)) {
            removed += 1;
        } else {
            kept.extend_from_slice(line);
        }
    }
    if removed > 0 {
        crate::fsutil::write_private(path, &kept)?;
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_notes_are_counted_in_the_last_hour_only() {
        let tmp = tempfile::tempdir().expect("tmp");
        let env = StoreEnv::with_home(tmp.path());
        for source in [NoteSource::Mcp, NoteSource::Mcp, NoteSource::Cli] {
            save(&env, "pool size is 20", None, Vec::new(), source).expect("saved");
        }
        let path = notes_path(&env);
        assert_eq!(recent_agent_notes(&path, Timestamp::now()), 2, "the person's note is not an agent's");
        assert_eq!(recent_agent_notes(&path, Timestamp(Timestamp::now().0 + 2 * HOUR_MS)), 0, "an hour later none count");
        assert_eq!(recent_agent_notes(&tmp.path().join("none.jsonl"), Timestamp::now()), 0);
    }

    #[test]
    fn the_hourly_limit_refuses_the_next_agent_note_and_not_the_persons() {
        let tmp = tempfile::tempdir().expect("tmp");
        let env = StoreEnv::with_home(tmp.path());
        for i in 0..AGENT_NOTES_PER_HOUR {
            save(&env, &format!("agent note {i}"), None, Vec::new(), NoteSource::Mcp).expect("under the limit");
        }
        assert!(
            matches!(save(&env, "one more", None, Vec::new(), NoteSource::Mcp), Err(SaveError::AgentLimit(n)) if n == AGENT_NOTES_PER_HOUR)
        );
        assert!(save(&env, "the person's own", None, Vec::new(), NoteSource::Cli).is_ok());
    }
}

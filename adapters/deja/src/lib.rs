//! deja's own notes: `deja remember "TEXT"` (and the MCP `remember` mode) append one
//! JSON line per note to `${XDG_DATA_HOME:-~/.local/share}/deja/notes.jsonl`. That file
//! is primary data — the user's, kept like a harness's history rather than as cache —
//! and this adapter indexes it as the harness `deja`, one session per note, so notes
//! are found by every search and recall (ranked a little above transcripts).
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
//! A line that is not a JSON object with a non-empty `text` is skipped and counted.
//! The session's title is the note's first line; its one turn (role `note`) holds the
//! text and a `tags:` line. The session's `kind` says who wrote the note
//! ([`NOTE_BY_PERSON`], [`NOTE_BY_AGENT`], or [`NOTE_UNSOURCED`] for lines written
//! before the source was recorded), so recall can tell the person's notes from notes an
//! agent planted, which are shown as unverified.
//!
//! Every note is bounded ([`MAX_NOTE_BYTES`], [`MAX_TAGS`], [`MAX_TAG_BYTES`],
//! [`MAX_PROJECT_BYTES`]): new notes over a limit are refused ([`NoteError`]), lines
//! already in the file are cut to the limits when read.

use std::io::Write;
use std::path::{Path, PathBuf};

use deja_core::launch::{Handoff, Launch, Resume};
pub use deja_core::model::{NOTE_BY_AGENT, NOTE_BY_PERSON, NOTE_UNSOURCED};
use deja_core::read::{for_each_json_line, read_source};
use deja_core::store::{Files, Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Role, Session, SessionSink,
    SourceRef, StoreEnv, SynthSession, SynthTurn, SynthWriter, Timestamp, Turn,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The adapter id.
pub const ID: &str = "deja";
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

/// deja's notes format.
pub struct DejaNotes;

deja_core::inventory::submit!(deja_core::Registration(&DejaNotes));

const NOT_A_HARNESS: Capability =
    Capability::Unsupported("deja's own notes: there is no agent to wire, the notes are written by deja itself");

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "deja notes",
    container: "JSONL, one note per line, one file",
    store: StoreSpec::new(&[Store {
        name: "",
        // deja's own data directory (DEJA_DATA_DIR moves all of deja's data).
        roots: &[Root::any("${DEJA_DATA_DIR:-${XDG_DATA_HOME:-~/.local/share}/deja}")],
        // Not append-only for the indexer: one file holds many sessions, and it is small,
        // so it is read whole when it changes.
        layout: Layout::Files(Files::new(NOTES_FILE)),
    }])
    .deja_vars(&["DEJA_DATA_DIR"]),
    needs: &[],
    format_summary: "Durable notes written by `deja remember` and the MCP `remember` mode: one JSON object per line \
        (`id`, `time`, `text`, optional `project`, `tags` and `source`: `cli` or `mcp`) in \
        `${XDG_DATA_HOME:-~/.local/share}/deja/notes.jsonl` (`DEJA_DATA_DIR` moves deja's data directory). Each note is \
        indexed as its own session of the harness `deja`, titled by its first line; the person's notes rank a little above \
        transcripts, notes agents wrote through MCP (or of unrecorded origin) are shown as unverified.",
    // Notes are the user's own words; deja injects nothing into them.
    injected: &InjectedText::NONE,
    capabilities: Capabilities { mcp: NOT_A_HARNESS, auto_recall: NOT_A_HARNESS, skill: NOT_A_HARNESS, command: NOT_A_HARNESS },
    launch: Launch {
        resume: Resume::Unsupported("deja's own notes: there is no agent to reopen them in"),
        handoff: Handoff::Unsupported("deja's own notes: there is no agent to hand a session to"),
    },
};

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
            let mut s = deja_core::redact::redact(s).into_owned();
            // A redaction marker can be longer than what it replaced.
            deja_core::model::cap_text(&mut s, max);
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
}

/// Where the store spec puts the notes: `DEJA_DEJA_ROOT` (a directory holding
/// notes.jsonl), else deja's data directory.
pub fn notes_dir(env: &StoreEnv) -> PathBuf {
    INFO.store.root(ID, env).unwrap_or_else(|| env.data_dir())
}

pub fn notes_path(env: &StoreEnv) -> PathBuf {
    notes_dir(env).join(NOTES_FILE)
}

/// Appends `note` as one line (directory 0700, file 0600 where the OS has modes).
pub fn append_note(path: &Path, note: &Note) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        deja_core::fsutil::private_dir(dir)?;
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
        deja_core::fsutil::write_private(path, &kept)?;
    }
    Ok(removed)
}

impl HarnessFormat for DejaNotes {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, _opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let bytes = read_source(&src.path, &mut stats)?.bytes;
        let mut notes: Vec<Note> = Vec::new();
        let mut bad = 0u64;
        for_each_json_line(&bytes, 0, &src.path, &mut stats, |_, v| match note_of(&v) {
            Some(n) => match notes.iter().position(|x| x.id == n.id) {
                Some(i) => notes[i] = n,
                None => notes.push(n),
            },
            None => bad += 1,
        });
        if bad > 0 {
            stats.skipped += bad;
            stats.problem(format!("{}: {bad} lines were not notes (an object with `id` and `text`)", src.path.display()));
        }
        for n in notes {
            out.session(session_of(n, src));
        }
        Ok(stats)
    }

    fn synthetic(&self) -> Option<&dyn SynthWriter> {
        Some(self)
    }
}

impl SynthWriter for DejaNotes {
    fn write(&self, home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
        let path = home.join(".local/share/deja").join(NOTES_FILE);
        let text: Vec<&str> = session
            .turns
            .iter()
            .filter_map(|t| match t {
                SynthTurn::User { text, .. } | SynthTurn::Assistant { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        let mut text = text.join("\n");
        if let Some(title) = &session.title {
            text = format!("{title}\n{text}");
        }
        // Synthetic homes stand in for a person's own notes.
        let note = Note {
            id: session.id.clone(),
            time: session.started,
            text,
            project: Some(session.project.clone()),
            tags: Vec::new(),
            source: Some(NoteSource::Cli),
        };
        append_note(&path, &note)?;
        Ok(path)
    }
}

/// A note out of one JSON line, tolerating missing optional fields and odd types, and
/// cut to the limits (the file may hold lines no current deja wrote).
fn note_of(v: &Value) -> Option<Note> {
    let cut = |s: &str, max: usize| {
        let mut s = s.to_string();
        deja_core::model::cap_text(&mut s, max);
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

fn session_of(n: Note, src: &SourceRef) -> Session {
    let mut s = Session::new(ID, n.id, SourceRef::file(&src.path));
    s.title = n.text.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string);
    s.project = n.project;
    s.kind = Some(
        match n.source {
            Some(NoteSource::Cli) => NOTE_BY_PERSON,
            Some(NoteSource::Mcp) => NOTE_BY_AGENT,
            None => NOTE_UNSOURCED,
        }
        .to_string(),
    );
    let time = (n.time.0 != 0).then_some(n.time);
    s.touch(time);
    let mut text = n.text;
    if !n.tags.is_empty() {
        text.push_str("\ntags: ");
        text.push_str(&n.tags.join(", "));
    }
    let mut turn = Turn::new(Role::Note, text).at(time);
    turn.seq = 0;
    s.turns.push(turn);
    s
}

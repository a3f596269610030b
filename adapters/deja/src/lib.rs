//! deja's own notes, read as the harness `deja`: `deja remember "TEXT"` (and the MCP
//! `remember` mode) append one JSON line per note to
//! `${XDG_DATA_HOME:-~/.local/share}/deja/notes.jsonl` through deja-core's notes store
//! ([`deja_core::notes`], which holds the line format, the limits and the writers).
//! This adapter discovers that file and indexes it as the harness `deja`, one session
//! per note, so notes are found by every search and recall (ranked a little above
//! transcripts).
//!
//! A line that is not a JSON object with a non-empty `text` is skipped and counted.
//! The session's title is the note's first line; its one turn (role `note`) holds the
//! text and a `tags:` line. The session's `kind` says who wrote the note
//! ([`NOTE_BY_PERSON`], [`NOTE_BY_AGENT`], or [`NOTE_UNSOURCED`] for lines written
//! before the source was recorded), so recall can tell the person's notes from notes an
//! agent planted, which are shown as unverified.

use std::path::{Path, PathBuf};

use deja_core::launch::{Handoff, Launch, Resume};
pub use deja_core::model::{NOTE_BY_AGENT, NOTE_BY_PERSON, NOTE_UNSOURCED};
use deja_core::read::{for_each_json_line, read_source};
use deja_core::store::{Files, Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Role, Session, SessionSink,
    SourceRef, SynthSession, SynthTurn, SynthWriter, Turn,
};

/// The adapter id: the harness notes are indexed under.
pub const ID: &str = deja_core::notes::HARNESS;
// The store itself lives in deja-core beside the archive; re-exported for this crate's
// tests and for anyone who reached it here.
pub use deja_core::notes::{
    append_note, notes_dir, notes_path, remove_notes, Note, NoteError, NoteSource, MAX_NOTE_BYTES, MAX_PROJECT_BYTES, MAX_TAGS,
    MAX_TAG_BYTES, NOTES_FILE,
};

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
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Unsupported("deja's own notes: there is no agent to reopen them in"),
        handoff: Handoff::Unsupported("deja's own notes: there is no agent to hand a session to"),
    },
};

impl HarnessFormat for DejaNotes {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, _opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let bytes = read_source(&src.path, &mut stats)?.bytes;
        let mut notes: Vec<Note> = Vec::new();
        let mut bad = 0u64;
        for_each_json_line(&bytes, 0, &src.path, &mut stats, |_, v| match Note::from_value(&v) {
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

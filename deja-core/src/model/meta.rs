//! What is known of a session without its turns: the metadata the index stores on a
//! session document, the archive repeats on each line, the launch templates read and
//! every surface shows. It lives in the model, not the index, because all of them —
//! and the adapters that pick a resume command per session — need it without knowing
//! how it is stored.
//!
//! Its [`Redact`] impl is here, beside it: which fields are text someone wrote (and so
//! may hold a secret) is a fact about the type. [`crate::redact::fingerprint`] hashes
//! this file, since that impl decides what of a session's metadata an index run redacts
//! before it marks it as redacted.

use serde::{Deserialize, Serialize};

use super::Timestamp;
use crate::redact::Redact;

/// A session's metadata: everything but its turns, and how many it has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionMeta {
    pub harness: String,
    pub id: String,
    pub title: Option<String>,
    pub project: Option<String>,
    pub path: String,
    pub started: Option<Timestamp>,
    pub updated: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The machine the session was read on, when it was imported from another
    /// (`deja import`); `None` for this machine's own history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    pub turns: u32,
    /// The harness deleted the source this session was read from, and deja keeps it
    /// (the archive is the log): when deja noticed. Never stored on the session
    /// document; the index view sets it from the archive's ledger of gone sources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_deleted: Option<SourceDeleted>,
}

/// A session's source was deleted by its harness (pruned, swept, or removed by hand).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceDeleted {
    /// When deja first saw the source gone (an index run), not when the harness deleted
    /// it: deja only knows it was there at the run before.
    pub noticed: Timestamp,
    /// The source that was read (a file, or `file#row` for a row of a database).
    pub source: String,
}

impl SessionMeta {
    /// `<harness>:<id>`, the key every store of deja files a session under.
    pub fn key(&self) -> String {
        super::session_key(&self.harness, &self.id)
    }

    /// True for a note the person wrote themselves (`deja remember`); false for notes an
    /// agent wrote, notes of unknown origin, and every transcript.
    pub fn is_person_note(&self) -> bool {
        self.harness == NOTES_HARNESS && self.kind.as_deref() == Some(NOTE_BY_PERSON)
    }

    /// True for a note not known to come from the person: shown as agent-written and
    /// unverified.
    pub fn is_unverified_note(&self) -> bool {
        self.harness == NOTES_HARNESS && !self.is_person_note()
    }
}

/// Identifiers (harness, id, path, kind) are lookup keys and stay as they are; the
/// title and project come from what someone wrote.
impl Redact for SessionMeta {
    fn redact_in_place(&mut self) {
        self.title.redact_in_place();
        self.project.redact_in_place();
    }
}

/// The harness id of deja's own notes: deja's name, not a harness core would have to
/// know (search ranks notes a little above transcripts, recall tells them apart).
pub const NOTES_HARNESS: &str = "deja";
/// Session kinds of notes, by who wrote them (the notes adapter sets them from the
/// note's `source`): the person on the CLI…
pub const NOTE_BY_PERSON: &str = "note";
/// …an agent through MCP (unverified: text an agent was fed can end up here)…
pub const NOTE_BY_AGENT: &str = "agent-note";
/// …or not recorded (lines written before deja recorded it; unverified too).
pub const NOTE_UNSOURCED: &str = "unsourced-note";

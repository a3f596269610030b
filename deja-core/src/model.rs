//! The normalized session model every adapter produces (DESIGN §3).
//!
//! One `Session` per conversation the harness kept, holding ordered `Turn`s. Work
//! signals (commands, exit status, files, edit spans) are first-class fields rather
//! than text, because `fix`, `how` and `blame` need them after a summary would have
//! thrown them away.

mod meta;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use crate::time::Timestamp;
pub use meta::{SessionMeta, SourceDeleted, NOTES_HARNESS, NOTE_BY_AGENT, NOTE_BY_PERSON, NOTE_UNSOURCED};

use crate::redact::Redact;

/// The adapter id of a harness, e.g. `"deepseek"`.
pub type HarnessId = &'static str;

/// One conversation as the harness stored it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    pub harness: String,
    pub id: String,
    pub title: Option<String>,
    /// The working directory the session ran in (or the best name the format offers).
    pub project: Option<String>,
    pub started: Option<Timestamp>,
    pub updated: Option<Timestamp>,
    pub source: SourceRef,
    /// The spawning session, for sub-agents and forks.
    pub parent: Option<String>,
    /// `sidechain`, `subagent`, `fork`… when the session is not a top-level one.
    pub kind: Option<String>,
    /// The sub-agent's name, when the format records it.
    pub agent: Option<String>,
    /// Never empty, except in a read of a tail ([`SourceRef::resume`]): the session it
    /// continues is returned even when the tail brought no turn, for what else it says
    /// (a title named since, later times), which the indexer applies to the session it
    /// holds.
    pub turns: Vec<Turn>,
    /// Who gave `title` (see [`TitleBy`]): a parser that knows sets it, `normalize` sets
    /// [`TitleBy::Prompt`] when it derives the title, and the indexer keeps the better
    /// of the title it holds and a tail's.
    #[serde(skip)]
    pub title_by: TitleBy,
}

impl Session {
    pub fn new(harness: &str, id: impl Into<String>, source: SourceRef) -> Self {
        Session {
            harness: harness.to_string(),
            id: id.into(),
            title: None,
            project: None,
            started: None,
            updated: None,
            source,
            parent: None,
            kind: None,
            agent: None,
            turns: Vec::new(),
            title_by: TitleBy::default(),
        }
    }

    /// Takes `title`, given by `by`, when it supersedes the title the session has (see
    /// [`TitleBy::supersedes`]): the one precedence every reader and the indexer apply,
    /// so a whole read and a read in parts end with the same title.
    pub fn offer_title(&mut self, title: impl Into<String>, by: TitleBy) {
        let title = title.into();
        if title.trim().is_empty() {
            return;
        }
        if self.title.is_none() || by.supersedes(self.title_by) {
            self.title = Some(title);
            self.title_by = by;
        }
    }

    /// `<harness>:<id>`, the key that is unique across harnesses.
    pub fn key(&self) -> String {
        session_key(&self.harness, &self.id)
    }

    /// Widens `started`/`updated` to include `time` (zero times are ignored).
    pub fn touch(&mut self, time: Option<Timestamp>) {
        let Some(t) = time.filter(|t| t.0 != 0) else {
            return;
        };
        self.started = Some(self.started.map_or(t, |s| s.min(t)));
        self.updated = Some(self.updated.map_or(t, |u| u.max(t)));
    }
}

pub fn session_key(harness: &str, id: &str) -> String {
    format!("{harness}:{id}")
}

/// Who gave a session its title, weakest first: the one title precedence is the user's
/// name over a title the harness generated over one derived from the first prompt. A
/// derived title ranks by what it was made of, in the order `normalize` prefers them
/// (`text::derive_title`), so a session read in parts ends with the title a whole read
/// derives: a prompt too short to name it (`/compact`) gives way to the first one that
/// does, an answer or a tool's output to any prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TitleBy {
    /// Made from the first tool output (a session with no speech).
    Output,
    /// Made from the first answer (a session with no prompt).
    Answer,
    /// Made from a prompt too short to name the session, the only prompt so far.
    ShortPrompt,
    /// Made from the first prompt long enough to name the session (by `normalize`, or
    /// by a format whose only title is its first user line).
    Prompt,
    /// Written by the harness: a generated title, a topic, a summary line, a title
    /// field the format does not say the user set. What a parser's title is unless it
    /// says otherwise.
    #[default]
    Harness,
    /// Given by the user: a `/rename`, a name typed in the harness's UI.
    User,
}

impl TitleBy {
    /// Whether a title given by `self` takes the place of one given by `held`: a
    /// stronger giver always, the same giver when it names again (the last name given
    /// wins, the last generated title too), but never a second derived title of the same
    /// kind (the first prompt names the session).
    pub fn supersedes(self, held: TitleBy) -> bool {
        self > held || (self == held && self >= TitleBy::Harness)
    }

    /// The name in the manifest and in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            TitleBy::Output => "output",
            TitleBy::Answer => "answer",
            TitleBy::ShortPrompt => "short_prompt",
            TitleBy::Prompt => "prompt",
            TitleBy::Harness => "harness",
            TitleBy::User => "user",
        }
    }

    pub fn parse(s: &str) -> Option<TitleBy> {
        [TitleBy::Output, TitleBy::Answer, TitleBy::ShortPrompt, TitleBy::Prompt, TitleBy::Harness, TitleBy::User]
            .into_iter()
            .find(|b| b.as_str() == s)
    }
}

/// Who produced a turn's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord, Default)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
    /// A tool call, folded with its result when the format pairs them.
    ToolCall,
    /// A tool result with no call to fold into.
    ToolOutput,
    /// A compaction summary written by the harness.
    Summary,
    /// Kept text that is neither speech, tool work nor a summary.
    #[default]
    Note,
    /// Model reasoning; only produced when the user opted in.
    Reasoning,
}

impl Role {
    pub const ALL: [Role; 7] = [Role::User, Role::Assistant, Role::ToolCall, Role::ToolOutput, Role::Summary, Role::Note, Role::Reasoning];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::ToolCall => "tool_call",
            Role::ToolOutput => "tool_output",
            Role::Summary => "summary",
            Role::Note => "note",
            Role::Reasoning => "reasoning",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

/// One step of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    pub seq: u32,
    pub role: Role,
    pub text: String,
    pub time: Option<Timestamp>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<NodeRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<ToolUse>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileTouch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit: Option<Edit>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

impl Turn {
    pub fn new(role: Role, text: impl Into<String>) -> Self {
        Turn { seq: 0, role, text: text.into(), time: None, node: None, tool: None, files: Vec::new(), edit: None, partial: false }
    }

    pub fn at(mut self, time: Option<Timestamp>) -> Self {
        self.time = time;
        self
    }

    /// True when the turn carries nothing worth indexing.
    pub fn is_empty(&self) -> bool {
        self.text.trim().is_empty() && self.tool.is_none() && self.files.is_empty() && self.edit.is_none()
    }

    /// A file tool's call whose result says it failed (a replace that found nothing, a
    /// rejected edit) changed nothing: its edit span goes, so no one is shown a change
    /// that never happened. The files it named stay (the call was about them, as the
    /// pages that say it put it), and a shell call (it has a command) keeps its span: a
    /// command that exits non-zero may well have changed a file before it failed.
    pub fn unmake_failed_edit(&mut self) {
        let Some(tool) = &self.tool else { return };
        let failed = tool.is_error || tool.exit.as_ref().is_some_and(|e| !e.succeeded());
        if failed && tool.command.is_none() {
            self.edit = None;
        }
    }
}

/// What of a turn read back may hold a secret: its text, the command line, the paths
/// and the edit's text. Role, times, numbers and the tool's name are not text anyone
/// wrote. (What is redacted before a turn is written is `normalize`'s to say.)
impl Redact for Turn {
    fn redact_in_place(&mut self) {
        self.text.redact_in_place();
        if let Some(tool) = &mut self.tool {
            tool.command.redact_in_place();
        }
        for f in &mut self.files {
            f.path.redact_in_place();
        }
        if let Some(e) = &mut self.edit {
            e.path.redact_in_place();
            e.old.redact_in_place();
            e.new.redact_in_place();
        }
    }
}

/// Id and parent id of an entry in a tree-shaped log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeRef {
    pub id: String,
    pub parent: Option<String>,
}

/// A tool invocation: its name, the command line for shells, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ToolUse {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<ExitStatus>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// The format's id pairing a call with its result. A result whose call was read
    /// in an earlier (incremental) pass keeps it, so the indexer can fold it into the
    /// call already indexed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitStatus {
    Code(i64),
    Signal(String),
}

impl ExitStatus {
    pub fn succeeded(&self) -> bool {
        matches!(self, ExitStatus::Code(0))
    }
}

impl std::fmt::Display for ExitStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExitStatus::Code(c) => write!(f, "exit {c}"),
            ExitStatus::Signal(s) => write!(f, "killed by {s}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum FileAction {
    Read,
    Edit,
    Write,
    Delete,
}

impl FileAction {
    pub fn as_str(self) -> &'static str {
        match self {
            FileAction::Read => "read",
            FileAction::Edit => "edit",
            FileAction::Write => "write",
            FileAction::Delete => "delete",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileTouch {
    pub path: String,
    pub action: FileAction,
}

/// One replaced span of a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edit {
    pub path: String,
    /// The text that was replaced (capped at 32 KiB).
    pub old: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new: Option<String>,
}

/// Where a session came from: the file, a row key for databases, and the format
/// generation when the harness keeps several side by side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct SourceRef {
    pub path: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<u32>,
    /// True when the file only ever grows by appended lines, so the indexer may read
    /// just the new tail after verifying the prefix it already read.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub append_only: bool,
    /// Further files (or directories) that belong to this source: their size and mtime
    /// are part of its change fingerprint (a database's `-wal`, a session directory's
    /// part files, the directory new parts appear in).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PathBuf>,
    /// Every part is side data a read of the tail takes again (a database naming the
    /// session's title, [`SourceRef::with_side_part`]): when only the parts changed, the
    /// indexer reads the tail, which has nothing new, instead of the whole source.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub side_parts: bool,
    /// Set by the indexer when only the tail past `offset` is to be parsed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<Resume>,
    /// Set by the indexer to the cursor the parser returned last time
    /// (`ParseStats::cursor`): emit only the sessions changed since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

impl SourceRef {
    pub fn file(path: impl Into<PathBuf>) -> Self {
        SourceRef { path: path.into(), ..SourceRef::default() }
    }

    pub fn append_only(mut self) -> Self {
        self.append_only = true;
        self
    }

    /// A source whose fingerprint also covers `part` (see [`SourceRef::parts`]).
    pub fn with_part(mut self, part: impl Into<PathBuf>) -> Self {
        self.parts.push(part.into());
        self
    }

    /// A source whose parts are side data only (see [`SourceRef::side_parts`]): an
    /// append-only log whose title a side database names, re-read as a tail with nothing
    /// new when only that database changed, so a store of thousands of logs is not
    /// re-parsed whole each time the harness writes to it. The parser must take the
    /// part again on a tail read (the session a tail continues is returned even with no turns).
    pub fn with_side_part(mut self, part: impl Into<PathBuf>) -> Self {
        self.parts.push(part.into());
        self.side_parts = true;
        self
    }

    /// A row of a multi-session container (a database), keyed by `key`.
    pub fn keyed(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// The identity of the source in the manifest (path plus row key).
    pub fn manifest_key(&self) -> String {
        match &self.key {
            Some(k) => format!("{}#{k}", self.path.display()),
            None => self.path.display().to_string(),
        }
    }
}

/// Where an incremental read of an append-only source starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Resume {
    /// Byte offset just past the last complete line already indexed.
    pub offset: u64,
    /// The `seq` the first new turn gets.
    pub next_seq: u32,
    /// The session id the earlier read produced.
    pub session_id: String,
    /// What the earlier read said its reader needs to go on ([`ParseStats::tail`](crate::ParseStats::tail)),
    /// given back as it was returned: a tail read starts from it instead of reading the
    /// head of the file again.
    #[serde(default)]
    pub state: TailState,
}

/// The records a read ended in the middle of, which more records may still join (one
/// API message split over several records, a streamed answer not closed yet): the next
/// tail read starts again at `offset`, the first of them, numbering from `seq`, the
/// number the first turn they made got, and the turns it makes from there replace the
/// ones this read made of them. A whole read of the grown file joins them; so does this.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reopen {
    pub offset: u64,
    pub seq: u32,
}

/// The small state a reader of an append-only source carries from one read to the read
/// of the tail that grows after it: what the records before the resume point said that
/// the records after it are read with. The reader returns it in
/// [`ParseStats::tail`](crate::ParseStats::tail), the indexer keeps it in the manifest
/// beside the offset, and the next read gets it back in [`Resume::state`]. A reader
/// fills only what it uses (its module doc says which), and carries forward what the
/// tail did not change. The session's title and who gave it are the indexer's to keep
/// (beside this state in the manifest), as the one precedence is its to apply; a reader
/// whose own title rule ranks finer (a topic below a generated title) keeps a mark.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TailState {
    /// The working directory the records read so far named (a header's `cwd`): the
    /// tail's project and relative paths come from it as in a whole read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Tool calls read whose results have not come yet: call id → what the reader needs
    /// of the call (its tool's name, usually), for a result whose reading depends on it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub open_calls: BTreeMap<String, String>,
    /// Anything else the reader needs, under names of its own (a header's id, a
    /// generation flag); its module doc says what each means.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub marks: BTreeMap<String, String>,
}

impl TailState {
    /// Whether the reader's mark `name` is set.
    pub fn marked(&self, name: &str) -> bool {
        self.marks.contains_key(name)
    }

    /// Sets (with `on`) or clears the reader's flag `name`.
    pub fn mark(&mut self, name: &str, on: bool) {
        if on {
            self.marks.insert(name.to_string(), String::new());
        } else {
            self.marks.remove(name);
        }
    }
}

/// Caps the text at `max` bytes on a char boundary.
pub fn cap_text(text: &mut String, max: usize) {
    if text.len() > max {
        let mut cut = max;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
}

/// A parsed message is capped at 1 MiB.
pub const MAX_MESSAGE_BYTES: usize = 1 << 20;
/// An edit's old span is capped at 32 KiB.
pub const MAX_EDIT_BYTES: usize = 32 << 10;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_back_are_redacted_in_place() {
        let mut turn = Turn {
            seq: 0,
            role: Role::ToolCall,
            text: "key AKIAIOSFODNN7EXAMPLE".into(),
            time: None,
            node: None,
            tool: Some(ToolUse { name: "bash".into(), command: Some("curl -u a:b3cretpw https://x".into()), ..Default::default() }),
            files: Vec::new(),
            edit: None,
            partial: false,
        };
        turn.redact_in_place();
        assert_eq!(turn.text, "key [redacted:aws_key]");
        assert_eq!(turn.tool.and_then(|t| t.command).as_deref(), Some("curl -u a:[redacted:curl_user] https://x"));
    }
}

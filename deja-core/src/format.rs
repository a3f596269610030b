//! The adapter contract (DESIGN §4): what every harness crate describes and parses.
//!
//! Each adapter crate registers a `&'static dyn HarnessFormat` with
//! `inventory::submit!(deja_core::Registration(&MyFormat))`; [`registry`] collects them.
//! A crate is only linked when code names it, so binaries and tests `use` the generated
//! list of adapter crates (see `cargo xtask adapters`).

use std::path::{Path, PathBuf};

use crate::env::StoreEnv;
use crate::launch::{resume_command, Handoff, Resume, ResumeCommand};
use crate::model::{ExitStatus, Session, SessionMeta, SourceRef, Turn};
pub use crate::store::{Discovery, Locked, Os, StoreSpec};
use crate::synth::SynthSession;
use crate::text::InjectedText;

/// What a harness adapter does: describe itself, find its stores, parse them.
pub trait HarnessFormat: Send + Sync + 'static {
    /// Metadata for the matrix, `deja harnesses` and the docs.
    fn info(&self) -> &'static HarnessInfo;

    /// The sources on this machine, honouring the environment's overrides. By default,
    /// what the [`StoreSpec`] in [`info`](Self::info) declares ([`crate::store::discover`]);
    /// an adapter whose store no layout describes writes its own, taking its roots from
    /// the spec all the same.
    fn discover(&self, env: &StoreEnv) -> Discovery {
        crate::store::discover(self.info().id, &self.info().store, env)
    }

    /// Parses one source into sessions. Never panics on any input; bad lines are
    /// counted in the stats, and only an unreadable source is an error.
    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError>;

    /// Whether discovery looks inside the working directories other harnesses' sessions
    /// ran in ([`StoreEnv::work_dirs`]), for history kept in each project directory.
    /// Such an adapter is discovered after the others' sources are parsed, so the
    /// directories learned in the same run count. `false` by default.
    fn discovers_in_work_dirs(&self) -> bool {
        false
    }

    /// How `deja install <id>` and `<id>-auto` wire deja into this harness, when its
    /// page describes a mechanism (`None`, the default: nothing to wire).
    fn wiring(&self) -> Option<&'static dyn crate::wire::Wiring> {
        None
    }

    /// The capabilities the matrix and the docs report: the static description, with
    /// the wiring surfaces derived from code — a surface reads `works` exactly when
    /// [`wiring`](Self::wiring) provides it (every wiring is round-tripped by the kit),
    /// and a `works` the code does not back reads `planned`.
    fn capabilities(&self) -> Capabilities {
        let mut caps = self.info().capabilities;
        let provided = self.wiring().map_or(&[][..], |w| w.surfaces());
        for (surface, cap) in [
            (crate::wire::Surface::Mcp, &mut caps.mcp),
            (crate::wire::Surface::AutoRecall, &mut caps.auto_recall),
            (crate::wire::Surface::Skill, &mut caps.skill),
            (crate::wire::Surface::Command, &mut caps.command),
        ] {
            let reason = cap.reason();
            *cap = match (provided.contains(&surface), *cap) {
                (true, _) => Capability::Works(reason),
                (false, Capability::Works(r)) => Capability::Planned(r),
                (false, other) => other,
            };
        }
        caps
    }

    /// The adapter's synthetic writer, when it has one: the demo, the benchmark corpora,
    /// the LoCoMo run and the conformance kit's round trip write sessions through it.
    /// `None` (the default) says the adapter has none; those surfaces skip it.
    fn synthetic(&self) -> Option<&dyn SynthWriter> {
        None
    }

    /// The adapter's restore writer, when its harness can take a session back: `deja
    /// restore` writes an archived session through it where the harness reads it, so its
    /// own resume works again. `None` (the default): the matrix says why not.
    fn restorer(&self) -> Option<&dyn RestoreWriter> {
        None
    }

    /// The matrix's restore cell, derived: `works` exactly when there is a
    /// [`restorer`](Self::restorer); otherwise why not (history in a database deja does
    /// not write into, a harness that resumes nothing, or not built yet).
    fn restore_capability(&self) -> Capability {
        if let Some(r) = self.restorer() {
            return Capability::Works(r.doc());
        }
        let info = self.info();
        if info.store.stores.iter().any(|s| matches!(s.layout, crate::store::Layout::Database(_))) {
            return Capability::Unsupported("its history lives in a database; deja writes no harness's database");
        }
        match info.launch.resume {
            Resume::Unsupported(_) => Capability::Unsupported("the harness has no resume by id, so a restored file would not be reopened"),
            // Whether it could reopen one is not known: neither is whether restoring helps.
            Resume::Unknown => Capability::Unknown,
            _ => Capability::Planned("its format's restore writer is not built yet"),
        }
    }

    /// Writes `session` through [`synthetic`](Self::synthetic); an `Unsupported` error
    /// when the adapter has no writer.
    fn write_synthetic(&self, home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
        match self.synthetic() {
            Some(w) => w.write(home, session),
            None => {
                Err(std::io::Error::new(std::io::ErrorKind::Unsupported, format!("the {} adapter has no synthetic writer", self.info().id)))
            }
        }
    }
}

/// Writes harness-neutral sessions in one harness's real on-disk format.
pub trait SynthWriter: Sync {
    /// Writes `session` into `home` as the harness would have stored it. Returns the
    /// file written.
    fn write(&self, home: &Path, session: &SynthSession) -> std::io::Result<PathBuf>;
}

/// Writes an archived session back in one harness's own on-disk format, with every field
/// the harness needs to accept the file and resume it (ids, parent links, working
/// directory, versions, times), not only what deja's reader uses. Core decides where
/// and whether to write (`deja restore`: never over a file, read back before it is
/// written); the writer says where the harness looks and what the bytes are.
pub trait RestoreWriter: Sync {
    /// How the restore works, for the matrix (`writes <path>; resume with …`).
    fn doc(&self) -> &'static str;
    /// The file the harness reads the session `meta` from, under the id `id` (the
    /// session's own, or a fresh one when restoring beside an existing file).
    fn target(&self, meta: &SessionMeta, id: &str, env: &StoreEnv) -> Result<PathBuf, String>;
    /// Whether the harness tolerates a second copy of a session under a fresh id beside
    /// the first (`deja restore --force`).
    fn beside(&self) -> bool {
        false
    }
    /// The file's bytes for `meta` with `turns` (the archive's, in order) under `id`.
    fn render(&self, meta: &SessionMeta, id: &str, turns: &[Turn]) -> Result<Rendered, String>;
}

/// What a [`RestoreWriter`] made of a session.
#[derive(Debug, Clone, Default)]
pub struct Rendered {
    pub bytes: Vec<u8>,
    /// Turns the format cannot carry back (by seq), each with why: they stay in deja's
    /// archive and are left out of the file and of the read-back check.
    pub left_out: Vec<(u32, String)>,
}

/// Parses `bytes` as the adapter would read them at `path` (in a private directory of
/// the same shape: the file's folder name and name) and compares the session `id` with
/// `want`. The first difference, if any.
pub fn read_back(adapter: &dyn HarnessFormat, path: &Path, id: &str, bytes: &[u8], want: &[&Turn]) -> Result<(), String> {
    let tmp = tempfile::tempdir().map_err(|e| format!("a private directory to read it back in: {e}"))?;
    let folder = path.parent().and_then(Path::file_name).map_or_else(|| PathBuf::from("store"), PathBuf::from);
    let name = path.file_name().ok_or("the target has no file name")?;
    let dir = tmp.path().join(folder);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let file = dir.join(name);
    std::fs::write(&file, bytes).map_err(|e| e.to_string())?;
    let mut sessions: Vec<Session> = Vec::new();
    adapter.parse(&SourceRef::file(&file), &ParseOptions::default(), &mut sessions).map_err(|e| e.reason())?;
    let got = sessions.into_iter().find(|s| s.id == id).ok_or_else(|| format!("the adapter reads no session {id} from it"))?;
    compare(want, &got.turns)
}

/// The first difference between the archive's turns and the ones read back, compared
/// by what a person and the harness see: role, text, tool (name, command, exit status,
/// error), files and edit, in order. Times and numbering are the file's own.
pub fn compare(want: &[&Turn], got: &[Turn]) -> Result<(), String> {
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        let at = || format!("turn {i} (seq {})", w.seq);
        if w.role != g.role {
            return Err(format!("{}: role {} read back as {}", at(), w.role.as_str(), g.role.as_str()));
        }
        if w.text != g.text {
            return Err(format!("{}: its text reads back differently ({} bytes, {} back)", at(), w.text.len(), g.text.len()));
        }
        let tool = |t: &Turn| {
            t.tool.as_ref().map(|u| {
                // A signal is carried as a failure without a status.
                let exit = u.exit.clone().filter(|e| matches!(e, ExitStatus::Code(_)));
                (u.name.clone(), u.command.clone(), exit, u.is_error)
            })
        };
        if tool(w) != tool(g) {
            return Err(format!("{}: tool call {:?} read back as {:?}", at(), tool(w), tool(g)));
        }
        if w.files != g.files || w.edit != g.edit {
            return Err(format!("{}: its files or edit read back differently", at()));
        }
    }
    if want.len() != got.len() {
        return Err(format!("{} turns read back as {}", want.len(), got.len()));
    }
    Ok(())
}

/// Switches that change what a parser emits.
#[derive(Debug, Clone, Default)]
pub struct ParseOptions {
    /// Emit reasoning/thinking blocks as `Role::Reasoning` turns (off by default).
    pub include_reasoning: bool,
}

impl ParseOptions {
    pub fn from_env(env: &StoreEnv) -> Self {
        ParseOptions { include_reasoning: env.flag("DEJA_INDEX_REASONING") }
    }
}

/// Where parsed sessions go.
pub trait SessionSink {
    fn session(&mut self, session: Session);
}

impl SessionSink for Vec<Session> {
    fn session(&mut self, session: Session) {
        self.push(session);
    }
}

/// What a parse saw, for the index report.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ParseStats {
    /// Records (lines, rows, documents) read.
    pub records: u64,
    /// Records that could not be decoded and were skipped.
    pub skipped: u64,
    /// Records kept after invalid UTF-8 in them was replaced with U+FFFD.
    #[serde(skip_serializing_if = "is_zero")]
    pub repaired: u64,
    /// Bytes of the source that were read.
    pub bytes_read: u64,
    /// Offset just past the last complete record, for the next incremental read of an
    /// append-only source.
    pub end_offset: u64,
    /// xxh3 of the source's bytes `[0, end_offset)`, when the reader saw them from the
    /// start of the file; spares the indexer a second read of every append-only log.
    #[serde(skip)]
    pub prefix_hash: Option<u64>,
    /// Human-readable notes about what was skipped and why (first few only).
    pub problems: Vec<String>,
    /// A row cursor for the next read (e.g. the highest update time seen). Returning one
    /// says this source can be read incrementally: next time the indexer sets
    /// `SourceRef::cursor` to it, and each session the parser then emits replaces its
    /// earlier copy whole while the other sessions of the source stay as indexed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// What the reader of an append-only source needs to read the tail that grows after
    /// `end_offset` without reading the head again ([`TailState`](crate::model::TailState)):
    /// the indexer keeps it and gives it back in `SourceRef::resume`. A reader that needs
    /// nothing leaves it `None`.
    #[serde(skip)]
    pub tail: Option<crate::model::TailState>,
    /// Where the last records of an append-only source, still open, begin ([`Reopen`](crate::model::Reopen)):
    /// the next tail read starts there rather than at `end_offset`.
    #[serde(skip)]
    pub reopen: Option<crate::model::Reopen>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ParseStats {
    const MAX_PROBLEMS: usize = 5;

    pub fn problem(&mut self, text: impl Into<String>) {
        if self.problems.len() < Self::MAX_PROBLEMS {
            self.problems.push(text.into());
        }
    }

    /// The cursor this parser returned for `src` last time (`SourceRef::cursor`), decoded
    /// by `parse`. A cursor it cannot decode (another release wrote it, or it is damaged)
    /// is noted here and `None` returned, so the source is read whole rather than wrongly.
    pub fn previous_cursor<T>(&mut self, src: &SourceRef, parse: impl FnOnce(&str) -> Option<T>) -> Option<T> {
        let text = src.cursor.as_deref().map(str::trim).filter(|c| !c.is_empty())?;
        let parsed = parse(text);
        if parsed.is_none() {
            self.problem(format!("{}: cursor {text:?} is not one this reader wrote; read everything", src.path.display()));
        }
        parsed
    }

    pub fn skip(&mut self, why: impl FnOnce() -> String) {
        self.skipped += 1;
        if self.problems.len() < Self::MAX_PROBLEMS {
            self.problems.push(why());
        }
    }
}

/// A source that could not be parsed at all.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {reason}")]
    Corrupt { path: PathBuf, reason: String },
    /// Refused without being read to the end: it would decode past the
    /// [`DecodeLimit`](crate::read::DecodeLimit). Deterministic for the same bytes, so the
    /// indexer remembers it and does not decode the source again until it changes.
    #[error("{path}: {reason}")]
    Refused { path: PathBuf, reason: String },
}

impl FormatError {
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        FormatError::Io { path: path.to_path_buf(), source }
    }

    pub fn corrupt(path: &Path, reason: impl Into<String>) -> Self {
        FormatError::Corrupt { path: path.to_path_buf(), reason: reason.into() }
    }

    /// The path the error is about.
    pub fn path(&self) -> &Path {
        match self {
            FormatError::Io { path, .. } | FormatError::Corrupt { path, .. } | FormatError::Refused { path, .. } => path,
        }
    }

    /// What went wrong, without the path (a report that names the path already).
    pub fn reason(&self) -> String {
        match self {
            FormatError::Io { source, .. } => source.to_string(),
            FormatError::Corrupt { reason, .. } | FormatError::Refused { reason, .. } => reason.clone(),
        }
    }

    pub fn refused(path: &Path, reason: impl Into<String>) -> Self {
        FormatError::Refused { path: path.to_path_buf(), reason: reason.into() }
    }
}

/// Static description of a harness.
#[derive(Debug)]
pub struct HarnessInfo {
    /// Adapter id, lowercase, e.g. `claude`.
    pub id: &'static str,
    pub name: &'static str,
    /// How the store is laid out, e.g. "JSONL, one file per session".
    pub container: &'static str,
    /// Where the history lives, stated once (roots per OS, the harness's relocation
    /// variables, the layout): the default `discover`, the wirings, the matrix and the kit
    /// read it, and deja's overrides derive from it and the id.
    pub store: StoreSpec,
    /// Anything beyond deja itself that is needed.
    pub needs: &'static [&'static str],
    /// One paragraph on the format, for the docs.
    pub format_summary: &'static str,
    /// Text this harness injects about itself (stripped at ingest, for this harness only).
    pub injected: &'static InjectedText,
    /// The wiring surfaces; resume and handoff are derived from [`launch`](Self::launch).
    pub capabilities: Capabilities,
    /// Whether and when the harness deletes its own sessions (its setting, default and
    /// trigger): `deja doctor` and `deja index` say what it will delete and whether deja
    /// keeps it.
    pub retention: crate::retention::Retention,
    /// How a found session is reopened in this harness, and how it starts with a prompt.
    pub launch: crate::launch::Launch,
}

impl HarnessInfo {
    /// The default store paths for the docs (`root/what is under it`, `~` the home
    /// directory), from the spec.
    pub fn store_paths(&self) -> Vec<(Os, String)> {
        self.store.paths()
    }

    /// The harness's own relocation variables, from the spec's templates.
    pub fn harness_vars(&self) -> Vec<&'static str> {
        self.store.env_vars()
    }

    /// deja's overrides, derived from the id and the spec, each with the older names
    /// still honoured for it.
    pub fn deja_overrides(&self) -> Vec<(String, Vec<&'static str>)> {
        self.store.deja_var_names(self.id)
    }

    /// Every capability the matrix reports, resume and handoff derived from `launch`.
    pub fn named_capabilities(&self) -> [(&'static str, Capability); 6] {
        let [mcp, auto, skill, command] = self.capabilities.named();
        [mcp, auto, skill, command, ("resume", resume_cell(&self.launch.resume)), ("handoff", handoff_cell(&self.launch.handoff))]
    }
}

/// Whether a recall surface works for a harness, and why not when it does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    /// deja provides it, and the code that does so exists.
    Works(&'static str),
    /// Possible; not built yet.
    Planned(&'static str),
    /// The harness has no such mechanism.
    Unsupported(&'static str),
    /// Waiting on the harness.
    Blocked(&'static str),
    Unknown,
}

impl Capability {
    pub fn status(&self) -> &'static str {
        match self {
            Capability::Works(_) => "works",
            Capability::Planned(_) => "planned",
            Capability::Unsupported(_) => "unsupported",
            Capability::Blocked(_) => "blocked",
            Capability::Unknown => "unknown",
        }
    }

    pub fn reason(&self) -> &'static str {
        match self {
            Capability::Works(r) | Capability::Planned(r) | Capability::Unsupported(r) | Capability::Blocked(r) => r,
            Capability::Unknown => "",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Capabilities {
    pub mcp: Capability,
    pub auto_recall: Capability,
    pub skill: Capability,
    pub command: Capability,
}

impl Capabilities {
    /// The four wiring surfaces by name, as the static description states them.
    pub fn named(&self) -> [(&'static str, Capability); 4] {
        [("mcp", self.mcp), ("auto-recall", self.auto_recall), ("skill", self.skill), ("command", self.command)]
    }
}

/// The matrix's resume cell, derived from the declaration: it reads `works` exactly when
/// deja prints a command.
fn resume_cell(resume: &Resume) -> Capability {
    match *resume {
        Resume::Always(spec) => Capability::Works(leak(spec.shown())),
        Resume::PerSession { doc, .. } | Resume::ByKey { doc, .. } => Capability::Works(doc),
        Resume::Unsupported(why) => Capability::Unsupported(why),
        Resume::Unknown => Capability::Unknown,
    }
}

/// The matrix's handoff cell: both forms are provided by `deja handoff`.
fn handoff_cell(handoff: &Handoff) -> Capability {
    match *handoff {
        Handoff::Exec(argv) => Capability::Works(leak(format!("exec: `{}`", argv.join(" ").replace("{prompt}", "<prompt>")))),
        Handoff::Paste(why) => Capability::Works(leak(format!("paste: `deja handoff` prints the digest ({why})"))),
        Handoff::Unsupported(why) => Capability::Unsupported(why),
    }
}

/// Capability reasons are `&'static str`; the matrix is generated once per process, so
/// the few strings rendered from templates are leaked rather than threaded through.
fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// An adapter's registration; submit one per crate with `inventory::submit!`.
pub struct Registration(pub &'static dyn HarnessFormat);

inventory::collect!(Registration);

/// Every linked adapter, sorted by id.
pub fn registry() -> Vec<&'static dyn HarnessFormat> {
    let mut all: Vec<&'static dyn HarnessFormat> = inventory::iter::<Registration>.into_iter().map(|r| r.0).collect();
    all.sort_by_key(|f| f.info().id);
    all
}

/// Every linked adapter that has a synthetic writer (the demo and benchmark corpora).
pub fn synthetic_registry() -> Vec<&'static dyn HarnessFormat> {
    registry().into_iter().filter(|a| a.synthetic().is_some()).collect()
}

/// The adapter with this id, if linked.
pub fn lookup(id: &str) -> Option<&'static dyn HarnessFormat> {
    inventory::iter::<Registration>.into_iter().map(|r| r.0).find(|f| f.info().id == id)
}

/// The resume command for a session of any linked harness, or why there is none. (Here
/// rather than in [`crate::launch`], which renders one harness's declaration: finding
/// the harness is the registry's part.)
pub fn resume_for(session: &SessionMeta) -> Result<ResumeCommand, String> {
    match lookup(&session.harness) {
        Some(format) => resume_command(&format.info().launch.resume, session),
        None => Err(format!("no adapter for the harness `{}` is linked", session.harness)),
    }
}

// Beside `ParseStats`, which it reads: the model knows nothing of the adapter contract.
impl crate::model::Resume {
    /// The resume point after a read of the source whose only session is `session` and
    /// whose stats are `stats`, as the indexer sets it: the offset the read ended at, the
    /// turn number after the parser's last one, the session's id and the state the
    /// reader returned.
    /// A read that left its last records open ([`Reopen`](crate::model::Reopen)) resumes where they start; a
    /// tail that made no turn, where it began.
    pub fn after(stats: &ParseStats, session: &crate::model::Session) -> crate::model::Resume {
        let began = session.source.resume.as_ref().map_or(0, |r| r.next_seq);
        let next_seq = session.turns.iter().map(|t| t.seq + 1).max().unwrap_or(0).max(began);
        crate::model::Resume {
            offset: stats.reopen.map_or(stats.end_offset, |r| r.offset),
            next_seq: stats.reopen.map_or(next_seq, |r| r.seq),
            session_id: session.id.clone(),
            state: stats.tail.clone().unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::{Launch, ResumeSpec};

    #[test]
    fn capabilities_come_from_the_declaration() {
        let resume = Resume::Always(ResumeSpec::in_dir(&["tool", "--resume", "{id}"]));
        let resume = resume_cell(&resume);
        assert_eq!(resume.status(), "works");
        assert_eq!(resume.reason(), "`cd <dir> && tool --resume <id>`");
        assert_eq!(handoff_cell(&Handoff::Exec(&["tool", "{prompt}"])).reason(), "exec: `tool <prompt>`");
        assert_eq!(resume_cell(&Launch::UNKNOWN.resume).status(), "unknown");
    }
}

//! Claude-shaped JSONL: the transcript format of Claude Code, which OpenClaude, Qoder,
//! Claude Cowork, Cherry Studio's agents, iFlow, CodeBuddy, Command Code and Factory
//! write too. One append-only JSONL transcript per session under
//! `<config root>/projects/<encoded-cwd>/<session-id>.jsonl`, and one per sub-agent run
//! at `<encoded-cwd>/<parent-session-id>/subagents/<name>.jsonl`.
//!
//! Every line is one JSON object with a top-level `type`. The conversation is a chain of
//! records linked by `uuid`/`parentUuid`; only `user` and `assistant` records carry speech,
//! and one API message may be split over several `assistant` records that share
//! `message.id` (one content block each). Tool names below are Claude Code's; a dialect's
//! [`ToolMap`] says which of its names run shells, read, edit and write files.
//!
//! | record / field | Turn | rule |
//! | --- | --- | --- |
//! | `user`, `message.content` string, or array items with `text` | `User` | items joined with newlines |
//! | `user` with `isCompactSummary: true` | `Summary` | the compaction summary ("This session is being continued…") |
//! | `user` with `isMeta: true` | skipped | harness-injected (caveats, command output wrappers) |
//! | `user` item `tool_result` (`tool_use_id`, `content` string or blocks, `is_error`) | folded into its `ToolCall` | unpaired → `ToolOutput`; a message of only results is not speech; `is_error` on a file tool's result drops its edit span (`Turn::unmake_failed_edit`) |
//! | `assistant` item `text` (or string content) | `Assistant` | blocks of one `message.id` are joined into one turn, repeats dropped |
//! | `assistant` item `thinking` | `Reasoning` | only with `include_reasoning` |
//! | `assistant` item `tool_use`, a shell tool (`Bash`) | `ToolCall` | `tool.command` = `input.command`; exit from a leading `Exit code N` result line |
//! | `assistant` item `tool_use`, a file tool (`Read`/`Edit`/`Write`/`MultiEdit`/`NotebookEdit`) | `ToolCall` | `files` (read/edit/write); `old_string`/`new_string` and `edits[]` → `edit` |
//! | `assistant` item `tool_use`, any other name (Grep, WebFetch, MCP…) | `ToolCall` | name + result text |
//! | `custom-title` (`customTitle`), `ai-title` (`aiTitle`) | session title | the user's name (the last given) over the harness's generated title (the last), over any `summary` |
//! | `summary` (`summary`, `leafUuid`) | session title (the harness's) | the last one pointing into this file wins, else the last one; not in a tail once a name or generated title was read |
//! | main-chain lines with `forkedFrom.sessionId` | `parent`, `kind = "fork"` | a branch copied from that session |
//! | `queue-operation`, `attachment`, `last-prompt`, `system`, snapshots, other types | skipped | control and harness catalogue; chain links are stepped through |
//! | line with `isSidechain: true` and an `agentId` | its own session | id = `agentId`, `kind = "sidechain"`, `parent = sessionId`, `agent = attributionAgent` |
//! | malformed or torn line | skipped | counted in the parse stats |
//!
//! Harnesses whose records depart from Claude Code's read through [`parse_with`]:
//! [`FileHints`] carries a sidecar's project and a flat layout, and [`ClaudeQuirks`] the
//! record differences (Gemini tool results, streaming snapshot runs, extra path keys,
//! skipped user texts, slash-command envelopes, streamed text chunks), all off by default. Harnesses with their
//! own line envelopes around Claude content blocks decode tool calls with
//! [`tool_call_turn`] / [`tool_call_turn_with`].
//!
//! The session id is the file name, replaced by the `sessionId` of the main lines (the last
//! wins). The project is the record's `cwd`; old files without it fall back to decoding the
//! dash-encoded directory name. Either is overridden by the git repository most of the
//! session's files sit in, when that repository does not already contain the directory.
//!
//! A read of a tail (`SourceRef::resume`) starts from the state the read before returned,
//! never from the file's head: the main chain's first `cwd` (`TailState::cwd`), its shell
//! calls still waiting for their results (`TailState::open_calls`, `background` for one
//! sent to the background; a result's exit status depends on it), mark `named` once a
//! `custom-title` or `ai-title` was read, so a later `summary` does not stand in for them,
//! mark `local_summary` once a summary whose leaf is in the file was, and marks
//! `leaf:<uuid>` for summaries whose leaf had not come yet. A read that ends inside an
//! API message split over records says where it begins (`ParseStats::reopen`): the next
//! tail reads the message again, whole.
//! Which title the session keeps is the indexer's one precedence (a tail's generated
//! title does not replace a name given before).

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::discover::find_files;
use crate::exit::ExitLine;
use crate::format::{Discovery, FormatError, ParseOptions, ParseStats, SessionSink};
use crate::model::{
    cap_text, Edit, ExitStatus, FileTouch, NodeRef, Reopen, Role, SourceRef, TailState, Timestamp, TitleBy, ToolUse, Turn, MAX_EDIT_BYTES,
};
use crate::project::{dash_fallback_name, decode_dash_path, majority_git_repo};
use crate::read::{for_each_source_line, str_at, Prune};
use crate::synth::{dash_encode, synth_uuid, SynthSession, SynthTurn};
use crate::text::InjectedText;
use crate::work::{ToolKind, ToolMap};
use crate::SessionBuilder;

/// `<encoded-cwd>/<session>/subagents/<name>.jsonl` is three levels down; leave room.
const MAX_WALK_DEPTH: usize = 8;

/// What one harness of the family changes: its id, where the synthetic writer puts its
/// config root, and its tool names. Where the store is read from is the adapter's
/// `StoreSpec` (with [`TRANSCRIPTS`] as its layout).
#[derive(Debug)]
pub struct ClaudeDialect {
    /// The adapter id sessions are filed under.
    pub harness: &'static str,
    /// The harness's config root under the home directory (`.claude`), where the
    /// synthetic writer puts `projects/`.
    pub config_dir: &'static str,
    pub tools: ToolMap,
}

/// The family's store under a projects root: every `*.jsonl` transcript (sub-agent runs
/// below a `subagents` directory only with `DEJA_INCLUDE_SUBAGENTS` on), append-only.
pub const TRANSCRIPTS: crate::store::Files =
    crate::store::Files::new("**/*.jsonl").depth(MAX_WALK_DEPTH).append_only().subagents("subagents");

/// Claude Code's tool names, which the Claude-shaped forks keep.
pub const CLAUDE_TOOLS: ToolMap =
    ToolMap { shell: &["Bash"], read: &["Read"], edit: &["Edit", "MultiEdit", "NotebookEdit"], write: &["Write"] };

/// What Claude Code writes into user records about itself: system reminders, slash-command
/// echoes and caveats, the compaction preamble, interruption markers and hook envelopes.
pub static CLAUDE_INJECTED: InjectedText = InjectedText {
    blocks: &["system-reminder", "local-command-caveat"],
    spans: &[("<command-name>", "</command-args>")],
    wrappers: &[],
    preambles: &[],
    headed_preambles: &[],
    line_prefixes: &[
        "This session is being continued from a previous conversation",
        "[Request interrupted by user",
        "[Your previous response had no visible output",
        "UserPromptSubmit hook additional context:",
        "SessionStart hook additional context:",
    ],
    not_titles: &["<local-command", "<command-", "<task-notification", "<teammate-message", "Caveat:"],
};

/// The `*.jsonl` transcripts under one projects root, append-only; sub-agent runs
/// (`…/subagents/…`) unless `include_subagents` is off. Sorted.
pub fn discover_projects(root: &Path, include_subagents: bool) -> Vec<SourceRef> {
    let mut sources = Vec::new();
    for path in find_files(root, MAX_WALK_DEPTH, &|name| name.ends_with(".jsonl")) {
        let rel = path.strip_prefix(root).unwrap_or(&path);
        if !include_subagents && rel.components().any(|c| c.as_os_str() == "subagents") {
            continue;
        }
        sources.push(SourceRef::file(path).append_only());
    }
    Discovery::sort_sources(&mut sources);
    sources
}

/// Parses one transcript (from `src.resume` on, when set) into its main session and any
/// sidechain sessions it holds.
pub fn parse(d: &ClaudeDialect, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    parse_with(d, src, opts, &FileHints::default(), out)
}

/// What a harness keeps outside a transcript's lines that changes how the file is read
/// (a sidecar's working directory, a layout without per-project directories).
#[derive(Debug, Default, Clone)]
pub struct FileHints {
    /// The project when no line carries a `cwd`, tried before the directory name.
    pub project: Option<String>,
    /// The file sits directly in the projects root: its directory is no encoded cwd, so
    /// the directory-name fallback is not used.
    pub flat: bool,
    /// What the harness's records do differently from Claude Code's.
    pub quirks: ClaudeQuirks,
}

/// Where a Claude-shaped harness's records depart from Claude Code's. The default is
/// none: Claude Code's reading, unchanged.
#[derive(Debug, Default, Clone, Copy)]
pub struct ClaudeQuirks {
    /// A `tool_result` item's `content` may be a Gemini object
    /// `{callId, responseParts: {functionResponse: {response: {output}}}}`, or the bare
    /// part `{functionResponse: {…}}` (iFlow's print mode), its `output` the text; and
    /// shell results state their exit as an `Exit Code: N` line anywhere in the text; a
    /// result without one gets no exit (Claude's "a plain result is exit 0" does not
    /// hold).
    pub gemini_results: bool,
    /// Adjacent `assistant` records with the same `parentUuid` less than a second apart
    /// are streaming snapshots of one message: their blocks are read as one message's
    /// (each text once, each `tool_use` id once).
    pub snapshot_runs: bool,
    /// Input keys naming a tool's file besides `file_path`/`notebook_path`
    /// (`absolute_path`).
    pub path_keys: &'static [&'static str],
    /// A user text (string content or text item) starting with one of these is harness
    /// text, not speech.
    pub skip_user_prefixes: &'static [&'static str],
    /// A `<command-name>…</command-name>` envelope (with optional `<command-args>`) in a
    /// user text is the slash command the person typed: it reads as `/name args`.
    pub command_envelopes: bool,
    /// Adjacent `text` blocks of one `assistant` record are chunks of one streamed
    /// answer (Gemini's stream, as iFlow's `--stream` writes it), so they join as
    /// written, without a line break that would cut words in two.
    pub text_chunks: bool,
}

/// [`parse`] with what the harness says about the file beside its lines.
pub fn parse_with(
    d: &ClaudeDialect,
    src: &SourceRef,
    opts: &ParseOptions,
    hints: &FileHints,
    out: &mut dyn SessionSink,
) -> Result<ParseStats, FormatError> {
    let mut stats = ParseStats::default();
    let mut file = FileParse::new(d, src, opts);
    if hints.flat {
        file.layout.encoded = None;
    }
    file.project_hint = hints.project.clone();
    file.quirks = hints.quirks;
    // A new source is read in chunks: a transcript can be hundreds of MB.
    for_each_source_line(src, &mut stats, RECORD_PRUNE, |offset, v| file.line(offset, &v))?;
    if file.not_objects > 0 {
        stats.skipped += file.not_objects;
        stats.problem(format!("{}: {} lines were JSON but not objects", src.path.display(), file.not_objects));
    }
    file.finish(&mut stats, out);
    Ok(stats)
}

/// What of a record's bulky members is read: `interrupted` of `toolUseResult` (which
/// otherwise repeats the result the `tool_result` block carries, and for a read or an
/// edit the whole file), and nothing of an `attachment` (harness catalogue) or of a
/// `last-prompt`'s copy of the prompt. The rest of them is passed over, not built.
const RECORD_PRUNE: &[Prune] = &[
    Prune { key: "toolUseResult", keep: &["interrupted"] },
    Prune { key: "attachment", keep: &[] },
    Prune { key: "lastPrompt", keep: &[] },
];

/// A whole adapter of the family for a harness that stores Claude Code's transcripts
/// under its own config root and nothing else: its metadata (whose `StoreSpec` names the
/// projects root, laid out as [`TRANSCRIPTS`]) and dialect are all it names.
pub struct ClaudeAdapter {
    pub info: &'static crate::format::HarnessInfo,
    pub dialect: ClaudeDialect,
    /// The harness's `deja install` wiring, if it has one.
    pub wiring: Option<&'static dyn crate::wire::Wiring>,
}

impl crate::format::HarnessFormat for ClaudeAdapter {
    fn info(&self) -> &'static crate::format::HarnessInfo {
        self.info
    }

    fn wiring(&self) -> Option<&'static dyn crate::wire::Wiring> {
        self.wiring
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        parse(&self.dialect, src, opts, out)
    }

    fn synthetic(&self) -> Option<&dyn crate::format::SynthWriter> {
        Some(self)
    }

    /// Every harness of the family takes a transcript back where it reads them, when it
    /// resumes sessions by id ([`super::claude_restore`]).
    fn restorer(&self) -> Option<&dyn crate::format::RestoreWriter> {
        let resumes = !matches!(self.info.launch.resume, crate::launch::Resume::Unsupported(_) | crate::launch::Resume::Unknown);
        resumes.then_some(self as &dyn crate::format::RestoreWriter)
    }
}

impl crate::format::SynthWriter for ClaudeAdapter {
    fn write(&self, home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
        write_synthetic(&self.dialect, home, session)
    }
}

/// Writes `session` under `home` the way the dialect's harness stores it
/// (`~/<config dir>/projects/<encoded-cwd>/<id>.jsonl`).
pub fn write_synthetic(d: &ClaudeDialect, home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
    let dir = home.join(d.config_dir).join("projects").join(dash_encode(&session.project));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("{}.jsonl", session.id));
    std::fs::write(&path, Render::render(session))?;
    Ok(path)
}

/// What the file's place in the store says about its sessions.
struct Layout {
    /// File name without `.jsonl`.
    stem: String,
    /// The dash-encoded working directory the file sits under.
    encoded: Option<String>,
    /// True for `<parent-session-id>/subagents/<name>.jsonl`.
    in_subagents: bool,
    /// For sub-agent files, the parent session id from the directory name.
    parent_dir_id: Option<String>,
}

impl Layout {
    fn of(path: &Path) -> Layout {
        let name = |p: Option<&Path>| p.and_then(Path::file_name).and_then(|n| n.to_str()).filter(|n| !n.is_empty()).map(str::to_string);
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("").to_string();
        let dir = path.parent();
        let in_subagents = name(dir).as_deref() == Some("subagents");
        if in_subagents {
            let parent_dir = dir.and_then(Path::parent);
            Layout { stem, encoded: name(parent_dir.and_then(Path::parent)), in_subagents, parent_dir_id: name(parent_dir) }
        } else {
            Layout { stem, encoded: name(dir), in_subagents, parent_dir_id: None }
        }
    }
}

/// How a record relates to the turns: it made one, was merged into an earlier one, or
/// made none (and links through to its parent).
#[derive(Clone, PartialEq)]
enum Repr {
    Nothing,
    Own,
    Merged(Option<String>),
}

impl Repr {
    fn and(self, other: Repr) -> Repr {
        match (self, other) {
            (Repr::Own, _) | (_, Repr::Own) => Repr::Own,
            (Repr::Merged(a), _) => Repr::Merged(a),
            (_, m) => m,
        }
    }
}

/// One session being assembled from a file.
struct Slot {
    b: SessionBuilder,
    sidechain: bool,
    parent: Option<String>,
    agent: Option<String>,
    cwd: Option<String>,
    paths: Vec<String>,
    /// The assistant text turn still open for more blocks of the same API message.
    open_text: Option<(String, usize)>,
    /// Hashes of content blocks already taken from split or repeated messages.
    blocks: HashSet<u64>,
    /// Shell calls by id, with whether they were sent to the background (no exit then).
    bash_calls: HashMap<String, bool>,
    /// Shell calls whose result was read (the others are handed to a tail read).
    answered: HashSet<String>,
    /// The API message the last assistant record belongs to — more records of it may
    /// follow — with where its first record starts and the number of its first turn.
    open_message: Option<(String, Reopen)>,
    tools: ToolMap,
    quirks: ClaudeQuirks,
}

impl Slot {
    fn new(d: &ClaudeDialect, src: &SourceRef, id: &str, sidechain: bool) -> Slot {
        Slot {
            b: SessionBuilder::new(d.harness, id, src.clone()),
            sidechain,
            parent: None,
            agent: None,
            cwd: None,
            paths: Vec::new(),
            open_text: None,
            blocks: HashSet::new(),
            bash_calls: HashMap::new(),
            answered: HashSet::new(),
            open_message: None,
            tools: d.tools,
            quirks: ClaudeQuirks::default(),
        }
    }

    /// What a read of the tail after this one needs of this session: its first `cwd` and
    /// its shell calls still waiting for a result.
    fn tail_state(&self) -> TailState {
        let open = self.bash_calls.iter().filter(|(id, _)| !self.answered.contains(*id));
        TailState {
            cwd: self.cwd.clone(),
            open_calls: open.map(|(id, &background)| (id.clone(), if background { BACKGROUND } else { FOREGROUND }.to_string())).collect(),
            ..TailState::default()
        }
    }

    fn push(&mut self, turn: Turn) -> Repr {
        self.open_text = None;
        match self.b.push(turn) {
            Some(_) => Repr::Own,
            None => Repr::Nothing,
        }
    }

    /// First time this block of this message is seen.
    fn fresh(&mut self, msg_key: &str, kind: &str, body: &str) -> bool {
        let mut h = DefaultHasher::new();
        (msg_key, kind, body).hash(&mut h);
        self.blocks.insert(h.finish())
    }
}

/// Parse state for one file: its sessions (the main one and any sidechains keyed by
/// agent id) and the chain links needed to step over records that make no turn.
struct FileParse<'a> {
    d: &'a ClaudeDialect,
    src: &'a SourceRef,
    opts: &'a ParseOptions,
    layout: Layout,
    slots: Vec<Slot>,
    by_key: HashMap<String, usize>,
    /// For every `uuid` seen: the node id of the nearest record at or above it that made a turn.
    repr: HashMap<String, Option<String>>,
    /// `uuid`s of speech records already read (a record written twice is read once).
    seen: HashSet<String>,
    summaries: Vec<(String, Option<String>)>,
    /// The last `custom-title` line's name (a `/rename`, a branch's) and the last
    /// `ai-title` line's generated title: both before any `summary`.
    custom_title: Option<String>,
    ai_title: Option<String>,
    /// The session the main chain was copied from (`forkedFrom.sessionId` on its lines).
    forked_from: Option<String>,
    main_session_id: Option<String>,
    main_parent_id: Option<String>,
    not_objects: u64,
    /// [`FileHints::project`].
    project_hint: Option<String>,
    quirks: ClaudeQuirks,
    /// The last record when it was an `assistant` one: its raw `parentUuid`, time and
    /// message key ([`ClaudeQuirks::snapshot_runs`]).
    last_assistant: Option<(Option<String>, Option<Timestamp>, String)>,
    /// What the read before this tail left (see the module doc).
    resumed: Option<&'a TailState>,
}

const MAIN: &str = "";

/// An open shell call in the tail state, by whether it was sent to the background.
const BACKGROUND: &str = "background";
const FOREGROUND: &str = "foreground";
/// The tail state's mark once a `custom-title` or `ai-title` was read.
const MARK_NAMED: &str = "named";
/// The tail state's mark once a summary whose leaf is in the file was read.
const MARK_LOCAL_SUMMARY: &str = "local_summary";
/// The tail state's marks `leaf:<uuid>`: a summary (the value) whose leaf had not come.
const LEAF: &str = "leaf:";

impl<'a> FileParse<'a> {
    fn new(d: &'a ClaudeDialect, src: &'a SourceRef, opts: &'a ParseOptions) -> Self {
        FileParse {
            d,
            src,
            opts,
            layout: Layout::of(&src.path),
            slots: Vec::new(),
            by_key: HashMap::new(),
            repr: HashMap::new(),
            seen: HashSet::new(),
            // A tail goes on with the summaries read before whose leaf had not come yet.
            summaries: src
                .resume
                .as_ref()
                .map(|r| {
                    let pending =
                        r.state.marks.iter().filter_map(|(k, text)| Some((text.clone(), Some(k.strip_prefix(LEAF)?.to_string()))));
                    pending.collect()
                })
                .unwrap_or_default(),
            custom_title: None,
            ai_title: None,
            forked_from: None,
            main_session_id: None,
            main_parent_id: None,
            not_objects: 0,
            project_hint: None,
            quirks: ClaudeQuirks::default(),
            last_assistant: None,
            resumed: src.resume.as_ref().map(|r| &r.state),
        }
    }

    fn line(&mut self, offset: u64, v: &Value) {
        if !v.is_object() {
            self.not_objects += 1;
            return;
        }
        let uuid = text_at(v, &["uuid"]).map(str::to_string);
        let parent = self.resolve(text_at(v, &["parentUuid"]));
        let kind = text_at(v, &["type"]).unwrap_or("");
        let repr = match kind {
            "user" | "assistant" => {
                if self.forked_from.is_none() && v.get("isSidechain").and_then(Value::as_bool) != Some(true) {
                    self.forked_from = text_at(v, &["forkedFrom", "sessionId"]).map(str::to_string);
                }
                self.speech(offset, v, kind, uuid.as_deref(), parent.clone())
            }
            "summary" => {
                self.summary(v);
                Repr::Nothing
            }
            "custom-title" => {
                self.custom_title = custom_title_of(v).map(str::to_string).or(self.custom_title.take());
                Repr::Nothing
            }
            "ai-title" => {
                self.ai_title = text_at(v, &["aiTitle"]).or_else(|| text_at(v, &["title"])).map(str::to_string).or(self.ai_title.take());
                Repr::Nothing
            }
            // queue-operation, attachment, last-prompt, system, snapshots, progress…
            _ => Repr::Nothing,
        };
        if kind != "assistant" {
            self.last_assistant = None;
        }
        if let Some(u) = uuid {
            let node = match repr {
                Repr::Nothing => parent,
                Repr::Own => Some(u.clone()),
                Repr::Merged(id) => id.or(parent),
            };
            self.repr.entry(u).or_insert(node);
        }
    }

    /// The message key of an assistant record under [`ClaudeQuirks::snapshot_runs`]: the
    /// previous record's when it was an assistant one with the same `parentUuid` less
    /// than a second earlier, else its own.
    fn snapshot_key(&mut self, offset: u64, v: &Value) -> String {
        let parent = text_at(v, &["parentUuid"]).map(str::to_string);
        let time = v.get("timestamp").and_then(Timestamp::from_json);
        let own = || text_at(v, &["message", "id"]).map_or_else(|| format!("@{offset}"), str::to_string);
        let key = match &self.last_assistant {
            Some((p, t, key)) if *p == parent && matches!((t, time), (Some(a), Some(b)) if (b.millis() - a.millis()).abs() < 1000) => {
                key.clone()
            }
            _ => own(),
        };
        self.last_assistant = Some((parent, time, key.clone()));
        key
    }

    /// The nearest ancestor that made a turn; an unknown id (e.g. before a resume point)
    /// is kept as written.
    fn resolve(&self, parent: Option<&str>) -> Option<String> {
        let p = parent?;
        match self.repr.get(p) {
            Some(r) => r.clone(),
            None => Some(p.to_string()),
        }
    }

    fn summary(&mut self, v: &Value) {
        if let Some(s) = text_at(v, &["summary"]) {
            self.summaries.push((s.to_string(), text_at(v, &["leafUuid"]).map(str::to_string)));
        }
    }

    fn slot_for(&mut self, v: &Value) -> usize {
        let session_id = text_at(v, &["sessionId"]);
        let sidechain = v.get("isSidechain").and_then(Value::as_bool) == Some(true);
        let agent_id = text_at(v, &["agentId"]).filter(|_| sidechain);
        let key = agent_id.unwrap_or(MAIN);
        let idx = match self.by_key.get(key) {
            Some(&i) => i,
            None => {
                // The session a tail continues goes on from what the read before left; a
                // sidechain that starts in the tail is a session of its own, numbered from 0.
                let continued = agent_id.is_none() || agent_id == self.src.resume.as_ref().map(|r| r.session_id.as_str());
                let mut slot = match agent_id {
                    Some(a) if continued => Slot::new(self.d, self.src, a, true),
                    Some(a) => Slot::new(self.d, &SourceRef { resume: None, ..self.src.clone() }, a, true),
                    None => Slot::new(self.d, self.src, &self.layout.stem, self.layout.in_subagents),
                };
                if let Some(state) = self.resumed.filter(|_| continued) {
                    slot.cwd = state.cwd.clone();
                    slot.bash_calls = state.open_calls.iter().map(|(id, how)| (id.clone(), how == BACKGROUND)).collect();
                }
                self.slots.push(Slot { quirks: self.quirks, ..slot });
                self.by_key.insert(key.to_string(), self.slots.len() - 1);
                self.slots.len() - 1
            }
        };
        if agent_id.is_none() {
            // Inside a sub-agent file every line repeats the parent's sessionId.
            if self.layout.in_subagents {
                if self.main_parent_id.is_none() {
                    self.main_parent_id = session_id.map(str::to_string);
                }
            } else if let Some(s) = session_id {
                self.main_session_id = Some(s.to_string());
            }
        }
        if let Some(slot) = self.slots.get_mut(idx) {
            if slot.cwd.is_none() {
                slot.cwd = text_at(v, &["cwd"]).map(str::to_string);
            }
            if agent_id.is_some() {
                if slot.parent.is_none() {
                    slot.parent = session_id.map(str::to_string);
                }
                if slot.agent.is_none() {
                    slot.agent = text_at(v, &["attributionAgent"]).map(str::to_string);
                }
            }
        }
        idx
    }

    fn speech(&mut self, offset: u64, v: &Value, kind: &str, uuid: Option<&str>, parent: Option<String>) -> Repr {
        if let Some(u) = uuid {
            if !self.seen.insert(u.to_string()) {
                return Repr::Merged(self.repr.get(u).cloned().flatten());
            }
        }
        let role = text_at(v, &["message", "role"]).unwrap_or(kind);
        let run_key = if self.quirks.snapshot_runs && role == "assistant" { Some(self.snapshot_key(offset, v)) } else { None };
        let idx = self.slot_for(v);
        let opts = self.opts;
        let Some(slot) = self.slots.get_mut(idx) else { return Repr::Nothing };
        let time = v.get("timestamp").and_then(Timestamp::from_json);
        slot.b.touch(time);
        let node = uuid.map(|id| NodeRef { id: id.to_string(), parent });
        match role {
            "user" => user_record(slot, v, time, node),
            "assistant" => assistant_record(slot, opts, offset, v, time, node, run_key),
            // system/developer roles are harness-authored.
            _ => Repr::Nothing,
        }
    }

    fn finish(mut self, stats: &mut ParseStats, out: &mut dyn SessionSink) {
        let resume = self.src.resume.as_ref();
        let title = self.title();
        let fallback_dir = self.project_hint.clone().or_else(|| {
            self.layout.encoded.as_deref().map(|e| match decode_dash_path(e, Path::new("/")) {
                Some(p) => p.display().to_string(),
                None => dash_fallback_name(e),
            })
        });
        let main_idx = self.by_key.get(MAIN).copied();
        let mut main_emitted = false;
        // The state of each session emitted, and where its open message begins: the
        // indexer continues a source that made one.
        let mut emitted: Vec<(TailState, Option<Reopen>)> = Vec::new();
        for (i, slot) in std::mem::take(&mut self.slots).into_iter().enumerate() {
            let slot_state = (slot.tail_state(), slot.open_message.as_ref().map(|(_, at)| *at));
            let Slot { mut b, sidechain, parent, agent, cwd, paths, .. } = slot;
            let is_main = Some(i) == main_idx;
            if is_main {
                let id = if self.layout.in_subagents {
                    resume.map(|r| r.session_id.clone()).unwrap_or_else(|| strip_agent_prefix(&self.layout.stem).to_string())
                } else {
                    self.main_session_id
                        .clone()
                        .or_else(|| resume.map(|r| r.session_id.clone()))
                        .unwrap_or_else(|| self.layout.stem.clone())
                };
                b.set_id(id);
            }
            let mut project = cwd.or_else(|| fallback_dir.clone());
            if let Some(repo) = majority_git_repo(paths.iter().map(String::as_str)) {
                if !project.as_deref().is_some_and(|p| Path::new(p).starts_with(&repo)) {
                    project = Some(repo.display().to_string());
                }
            }
            let s = b.session_mut();
            s.project = project;
            if sidechain {
                s.kind = Some("sidechain".to_string());
                s.agent = agent;
                s.parent = parent.or_else(|| self.main_parent_id.clone()).or_else(|| self.layout.parent_dir_id.clone());
            } else {
                if let Some((t, by)) = &title {
                    s.offer_title(t.clone(), *by);
                }
                // A branch copies its source's chain, each line naming where it came from.
                if is_main && s.parent.is_none() {
                    if let Some(from) = self.forked_from.as_ref().filter(|f| **f != s.id) {
                        s.parent = Some(from.clone());
                        s.kind = Some("fork".to_string());
                    }
                }
            }
            if let Some(s) = b.finish() {
                main_emitted |= is_main;
                emitted.push(slot_state);
                out.session(s);
            }
        }
        // What a read of the tail that grows after this one goes on from; a tail that
        // made no session of its own hands on what it was given.
        let (mut state, reopen) = match emitted.len() {
            1 => emitted.pop(),
            _ => None,
        }
        .unwrap_or_else(|| (self.resumed.cloned().unwrap_or_default(), None));
        // A message split over records may go on in the next tail: it reads the message again.
        stats.reopen = reopen;
        let named = self.custom_title.is_some() || self.ai_title.is_some() || self.resumed.is_some_and(|s| s.marked(MARK_NAMED));
        state.mark(MARK_NAMED, named);
        let local = self.local_summary().is_some() || self.resumed.is_some_and(|s| s.marked(MARK_LOCAL_SUMMARY));
        state.mark(MARK_LOCAL_SUMMARY, local);
        // Summaries whose leaf has not come yet: a later tail may bring it.
        state.marks.retain(|k, _| !k.starts_with(LEAF));
        for (text, leaf) in &self.summaries {
            if let Some(leaf) = leaf.as_ref().filter(|l| !self.repr.contains_key(*l)) {
                state.marks.insert(format!("{LEAF}{leaf}"), text.clone());
            }
        }
        stats.tail = Some(state);
        // A tail with no speech in it still returns the session it continues, with a
        // name given or generated there (`/rename` as the last thing done). A summary
        // alone is not taken: it may name another file.
        if let Some(r) = resume.filter(|_| !main_emitted && !self.layout.in_subagents) {
            let mut b = SessionBuilder::new(self.d.harness, r.session_id.clone(), self.src.clone());
            if let Some((t, by)) =
                self.custom_title.clone().map(|t| (t, TitleBy::User)).or_else(|| self.ai_title.clone().map(|t| (t, TitleBy::Harness)))
            {
                b.session_mut().offer_title(t, by);
            }
            if let Some(s) = b.finish() {
                out.session(s);
            }
        }
    }

    /// The name a `custom-title` line gave (the user's), else an `ai-title` line's (the
    /// harness's), else the last summary whose leaf is in this file (older files open
    /// with summaries of other sessions), else the last summary — but no summary in a
    /// tail once a name or generated title was read before it, which outranks it, nor
    /// one whose leaf is elsewhere once the title held is a summary of this file. A tail
    /// weighs the summaries read before whose leaf had not come (kept in its state) with
    /// its own: one whose leaf comes in the tail is this file's after all.
    fn title(&self) -> Option<(String, TitleBy)> {
        if let Some(t) = &self.custom_title {
            return Some((t.clone(), TitleBy::User));
        }
        if let Some(t) = &self.ai_title {
            return Some((t.clone(), TitleBy::Harness));
        }
        if self.resumed.is_some_and(|s| s.marked(MARK_NAMED)) {
            return None;
        }
        if let Some((s, _)) = self.local_summary() {
            return Some((s.clone(), TitleBy::Harness));
        }
        let held_local = self.resumed.is_some_and(|s| s.marked(MARK_LOCAL_SUMMARY));
        let pending = self.resumed.map_or(0, |s| s.marks.keys().filter(|k| k.starts_with(LEAF)).count());
        // In a tail, the last summary is the tail's own (the ones before it are held).
        let own = self.summaries.get(pending..).unwrap_or_default();
        own.last().filter(|_| !held_local).map(|(s, _)| (s.clone(), TitleBy::Harness))
    }

    /// The last summary whose leaf this read saw.
    fn local_summary(&self) -> Option<&(String, Option<String>)> {
        self.summaries.iter().rev().find(|(_, leaf)| leaf.as_ref().is_some_and(|l| self.repr.contains_key(l)))
    }
}

fn strip_agent_prefix(stem: &str) -> &str {
    stem.strip_prefix("agent-").filter(|s| !s.is_empty()).unwrap_or(stem)
}

/// A `custom-title` line's name: `customTitle`, else `title`.
fn custom_title_of(v: &Value) -> Option<&str> {
    text_at(v, &["customTitle"]).or_else(|| text_at(v, &["title"]))
}

/// A non-empty string at `path`.
fn text_at<'v>(v: &'v Value, path: &[&str]) -> Option<&'v str> {
    str_at(v, path).filter(|s| !s.is_empty())
}

/// The text of a content array item: its `text`, else its `content` (a string or blocks
/// with `text`). Images and other blocks give nothing.
fn item_text(item: &Value) -> Option<String> {
    if let Some(t) = item.get("text").and_then(Value::as_str) {
        return Some(t.to_string());
    }
    match item.get("content")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(blocks) => {
            let parts: Vec<&str> = blocks.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect();
            (!parts.is_empty()).then(|| parts.join("\n"))
        }
        _ => None,
    }
}

/// `message.content` as one text: a string, or the item texts joined.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items.iter().filter_map(item_text).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

fn user_record(slot: &mut Slot, v: &Value, time: Option<Timestamp>, node: Option<NodeRef>) -> Repr {
    // The assistant's message is complete once the user (or a tool result) answers it.
    slot.open_message = None;
    if v.get("isMeta").and_then(Value::as_bool) == Some(true) {
        return Repr::Nothing;
    }
    let content = v.get("message").and_then(|m| m.get("content"));
    if v.get("isCompactSummary").and_then(Value::as_bool) == Some(true) {
        let mut turn = Turn::new(Role::Summary, content_text(content)).at(time);
        turn.node = node;
        return slot.push(turn);
    }
    let mut said: Vec<String> = Vec::new();
    let mut repr = Repr::Nothing;
    match content {
        Some(Value::String(s)) => said.push(s.clone()),
        Some(Value::Array(items)) => {
            for item in items {
                if item.get("type").and_then(Value::as_str) == Some("tool_result") {
                    repr = repr.and(tool_result(slot, v, item, time, node.clone()));
                } else if let Some(t) = item_text(item) {
                    said.push(t);
                }
            }
        }
        _ => {}
    }
    let q = slot.quirks;
    if !q.skip_user_prefixes.is_empty() {
        said.retain(|t| !q.skip_user_prefixes.iter().any(|p| t.trim_start().starts_with(p)));
    }
    if q.command_envelopes {
        for t in &mut said {
            if let Some(cmd) = slash_command(t) {
                *t = cmd;
            }
        }
    }
    if said.iter().any(|s| !s.trim().is_empty()) {
        let mut turn = Turn::new(Role::User, said.join("\n")).at(time);
        turn.node = node;
        repr = repr.and(slot.push(turn));
    }
    repr
}

/// Folds a `tool_result` into its call; an orphan stays a `ToolOutput` turn.
fn tool_result(slot: &mut Slot, record: &Value, item: &Value, time: Option<Timestamp>, node: Option<NodeRef>) -> Repr {
    let gemini = slot.quirks.gemini_results;
    let text = if gemini { gemini_output(item) } else { None }.or_else(|| item_text(item)).unwrap_or_default();
    let is_error = item.get("is_error").and_then(Value::as_bool) == Some(true);
    let call_id = item.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
    if let Some(&background) = slot.bash_calls.get(call_id) {
        slot.answered.insert(call_id.to_string());
        let (exit, rest) = if gemini {
            (gemini_exit_code(&text).map(ExitStatus::Code), text.as_str())
        } else {
            let (code, rest) = split_exit_line(&text);
            let interrupted = record.get("toolUseResult").and_then(|r| r.get("interrupted")).and_then(Value::as_bool) == Some(true);
            // Claude's Bash tool reports every non-zero exit as an error result opening with
            // "Exit code N"; a plain success result therefore means exit 0.
            let exit = match code {
                Some(n) => Some(ExitStatus::Code(n)),
                None if !is_error && !interrupted && !background => Some(ExitStatus::Code(0)),
                None => None,
            };
            (exit, rest)
        };
        if slot.b.complete_call(call_id, rest, is_error, exit.clone(), time) {
            slot.open_text = None;
            return Repr::Nothing;
        }
        // A call a read before this tail took: the indexer folds the result into it.
        let mut turn = Turn::new(Role::ToolOutput, rest).at(time);
        turn.node = node;
        turn.tool = Some(ToolUse { is_error, exit, call_id: Some(call_id.to_string()), ..ToolUse::default() });
        return slot.push(turn);
    }
    if slot.b.complete_call(call_id, &text, is_error, None, time) {
        slot.open_text = None;
        return Repr::Nothing;
    }
    // The call may have been read by an earlier incremental pass: keep the id so the
    // indexer can fold this result into it. Only Bash results open with "Exit code N".
    let (code, rest) = split_exit_line(&text);
    let mut turn = Turn::new(Role::ToolOutput, rest).at(time);
    turn.node = node;
    if !call_id.is_empty() || code.is_some() {
        let call_id = (!call_id.is_empty()).then(|| call_id.to_string());
        turn.tool = Some(ToolUse { is_error, exit: code.map(ExitStatus::Code), call_id, ..ToolUse::default() });
    }
    slot.push(turn)
}

/// The `output` of a Gemini `functionResponse` object in a `tool_result` item's
/// `content` ([`ClaudeQuirks::gemini_results`]); `None` for any other content.
fn gemini_output(item: &Value) -> Option<String> {
    let content = item.get("content").filter(|c| c.is_object())?;
    // The interactive writer wraps the part (`responseParts`, an object or a list of
    // parts); print mode writes the bare part `{functionResponse}`.
    let part = match content.get("responseParts") {
        Some(Value::Array(parts)) => parts.iter().find(|p| p.get("functionResponse").is_some())?,
        Some(wrapped) => wrapped,
        None => content,
    };
    let response = part.get("functionResponse").and_then(|f| f.get("response"))?;
    match response.get("output").or_else(|| response.get("error")) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => Some(other.to_string()),
        None => Some(response.to_string()),
    }
}

/// An `Exit Code: N` line anywhere in a Gemini-style shell result.
fn gemini_exit_code(text: &str) -> Option<i64> {
    crate::exit::exit_code(text, &[ExitLine::any("Exit Code:")])
}

/// `/name args` for a text holding a `<command-name>` envelope
/// ([`ClaudeQuirks::command_envelopes`]).
fn slash_command(text: &str) -> Option<String> {
    let between = |open: &str, close: &str| {
        let start = text.find(open)? + open.len();
        let len = text[start..].find(close)?;
        Some(text[start..start + len].trim())
    };
    let name = between("<command-name>", "</command-name>").filter(|n| !n.is_empty())?;
    let name = name.strip_prefix('/').unwrap_or(name);
    Some(match between("<command-args>", "</command-args>").filter(|a| !a.is_empty()) {
        Some(args) => format!("/{name} {args}"),
        None => format!("/{name}"),
    })
}

/// A leading `Exit code N` line (optionally `Error: Exit code N`) and the text after it.
fn split_exit_line(text: &str) -> (Option<i64>, &str) {
    crate::exit::split_exit_code(text, &[ExitLine::first("Error: Exit code "), ExitLine::first("Exit code ")])
}

fn assistant_record(
    slot: &mut Slot,
    opts: &ParseOptions,
    offset: u64,
    v: &Value,
    time: Option<Timestamp>,
    node: Option<NodeRef>,
    run_key: Option<String>,
) -> Repr {
    let message = v.get("message");
    // Blocks of one API message share message.id across records; without one, the
    // record is its own message (a snapshot run's records share the run's key).
    let msg_key = run_key.unwrap_or_else(|| message.and_then(|m| text_at(m, &["id"])).map_or_else(|| format!("@{offset}"), str::to_string));
    if slot.open_message.as_ref().is_none_or(|(key, _)| *key != msg_key) {
        slot.open_message = Some((msg_key.clone(), Reopen { offset, seq: slot.b.next_seq() }));
    }
    match message.and_then(|m| m.get("content")) {
        Some(Value::String(s)) => assistant_text(slot, &msg_key, s, time, node),
        Some(Value::Array(items)) => {
            let mut repr = Repr::Nothing;
            // Adjacent chunks of one streamed text, when the harness writes them apart.
            let mut chunks = String::new();
            for item in items {
                let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
                let text = match kind {
                    "thinking" | "redacted_thinking" | "tool_use" | "server_tool_use" => None,
                    _ => item.get("text").and_then(Value::as_str),
                };
                if slot.quirks.text_chunks {
                    if let Some(t) = text {
                        chunks.push_str(t);
                        continue;
                    }
                    if !chunks.is_empty() {
                        repr = repr.and(assistant_text(slot, &msg_key, &std::mem::take(&mut chunks), time, node.clone()));
                    }
                }
                let r = match kind {
                    "thinking" => reasoning(slot, opts, &msg_key, item, time, node.clone()),
                    "redacted_thinking" => Repr::Nothing,
                    "tool_use" | "server_tool_use" => tool_use(slot, &msg_key, item, time, node.clone()),
                    _ => match text {
                        Some(t) => assistant_text(slot, &msg_key, t, time, node.clone()),
                        None => Repr::Nothing,
                    },
                };
                repr = repr.and(r);
            }
            if !chunks.is_empty() {
                repr = repr.and(assistant_text(slot, &msg_key, &chunks, time, node));
            }
            repr
        }
        _ => Repr::Nothing,
    }
}

/// Adds prose to the open turn of the same API message, or starts a turn.
fn assistant_text(slot: &mut Slot, msg_key: &str, text: &str, time: Option<Timestamp>, node: Option<NodeRef>) -> Repr {
    if text.trim().is_empty() || !slot.fresh(msg_key, "text", text) {
        return Repr::Nothing;
    }
    if let Some((key, idx)) = &slot.open_text {
        if key == msg_key && *idx + 1 == slot.b.turn_count() {
            if let Some(turn) = slot.b.last_turn_mut() {
                turn.text.push('\n');
                turn.text.push_str(text);
                let id = turn.node.as_ref().map(|n| n.id.clone());
                slot.b.touch(time);
                return Repr::Merged(id);
            }
        }
    }
    let mut turn = Turn::new(Role::Assistant, text).at(time);
    turn.node = node;
    let repr = slot.push(turn);
    if repr == Repr::Own {
        slot.open_text = Some((msg_key.to_string(), slot.b.turn_count() - 1));
    }
    repr
}

fn reasoning(slot: &mut Slot, opts: &ParseOptions, msg_key: &str, item: &Value, time: Option<Timestamp>, node: Option<NodeRef>) -> Repr {
    if !opts.include_reasoning {
        return Repr::Nothing;
    }
    let Some(text) = item.get("thinking").and_then(Value::as_str) else { return Repr::Nothing };
    if !slot.fresh(msg_key, "thinking", text) {
        return Repr::Nothing;
    }
    let mut turn = Turn::new(Role::Reasoning, text).at(time);
    turn.node = node;
    slot.push(turn)
}

fn tool_use(slot: &mut Slot, msg_key: &str, item: &Value, time: Option<Timestamp>, node: Option<NodeRef>) -> Repr {
    let call_id = item.get("id").and_then(Value::as_str).filter(|s| !s.is_empty());
    let name = item.get("name").and_then(Value::as_str).filter(|s| !s.is_empty()).unwrap_or("tool");
    let input = item.get("input").unwrap_or(&Value::Null);
    let seen_before = match call_id {
        Some(id) => slot.b.call_mut(id).is_some(),
        None => !slot.fresh(msg_key, "tool_use", &format!("{name}{input}")),
    };
    if seen_before {
        return Repr::Nothing;
    }
    if slot.tools.kind(name) == ToolKind::Shell {
        if let Some(id) = call_id {
            slot.bash_calls.insert(id.to_string(), input.get("run_in_background").and_then(Value::as_bool) == Some(true));
        }
    }
    let mut turn = tool_call_turn_with(&slot.tools, slot.quirks.path_keys, name, input, time);
    turn.node = node;
    slot.paths.extend(turn.files.iter().map(|f| f.path.clone()));
    slot.b.push_call(call_id, turn);
    slot.open_text = None;
    Repr::Own
}

/// A `ToolCall` turn (no text yet) for a call of the tool `name` with Claude Code's input
/// keys: a shell tool's `command` → `tool.command`; a file tool's `file_path` (or
/// `notebook_path`) → `files`; `old_string`/`new_string` and `edits[]` → `edit`. Other
/// Claude-shaped harnesses decode their tool calls with it under their own [`ToolMap`].
pub fn tool_call_turn(tools: &ToolMap, name: &str, input: &Value, time: Option<Timestamp>) -> Turn {
    tool_call_turn_with(tools, &[], name, input, time)
}

/// [`tool_call_turn`] that also takes the file from one of `path_keys` (after
/// `file_path` and `notebook_path`).
pub fn tool_call_turn_with(tools: &ToolMap, path_keys: &[&str], name: &str, input: &Value, time: Option<Timestamp>) -> Turn {
    let mut tool = ToolUse { name: name.to_string(), ..ToolUse::default() };
    if tools.kind(name) == ToolKind::Shell {
        tool.command = text_at(input, &["command"]).map(str::to_string);
    }
    let mut turn = Turn::new(Role::ToolCall, "").at(time);
    let path = text_at(input, &["file_path"])
        .or_else(|| text_at(input, &["notebook_path"]))
        .or_else(|| path_keys.iter().find_map(|k| text_at(input, &[k])));
    if let Some(path) = path {
        if let Some(action) = tools.file_action(name) {
            turn.files.push(FileTouch { path: path.to_string(), action });
        }
        turn.edit = edit_spans(path, input);
    }
    turn.tool = Some(tool);
    turn
}

/// `old_string`/`new_string` plus every `edits[]` pair (MultiEdit), old spans joined with
/// newlines; `None` when no old span is non-empty.
fn edit_spans(path: &str, input: &Value) -> Option<Edit> {
    fn pair(v: &Value) -> Option<(&str, Option<&str>)> {
        let old = v.get("old_string").and_then(Value::as_str).unwrap_or("");
        let new = v.get("new_string").and_then(Value::as_str);
        (!old.is_empty()).then_some((old, new))
    }
    let mut spans: Vec<(&str, Option<&str>)> = pair(input).into_iter().collect();
    if let Some(edits) = input.get("edits").and_then(Value::as_array) {
        spans.extend(edits.iter().filter_map(pair));
    }
    if spans.is_empty() {
        return None;
    }
    let mut old = spans.iter().map(|(o, _)| *o).collect::<Vec<_>>().join("\n");
    cap_text(&mut old, MAX_EDIT_BYTES);
    let news: Vec<&str> = spans.iter().filter_map(|(_, n)| *n).collect();
    let new = (!news.is_empty()).then(|| {
        let mut n = news.join("\n");
        cap_text(&mut n, MAX_EDIT_BYTES);
        n
    });
    Some(Edit { path: path.to_string(), old, new })
}

/// Renders a synthetic session the way Claude Code 2.1.x writes one: queue operations, a
/// prompt with its chain fields, a skill catalogue attachment, assistant records one
/// content block each (sharing `message.id` within one API message), tool results
/// carrying `toolUseResult`, and a closing `last-prompt`.
struct Render<'s> {
    s: &'s SynthSession,
    out: String,
    salt: u64,
    n: u64,
    last_uuid: Option<String>,
    msg_id: String,
    request_id: String,
    /// What the previous turn was, to decide whether the next block continues its API message.
    prev: Prev,
    prompt_id: String,
    listed_skills: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Prev {
    Other,
    Text,
    Thinking,
}

const SYNTH_VERSION: &str = "2.1.197";
const SYNTH_MODEL: &str = "claude-sonnet-4-5-20250929";

impl<'s> Render<'s> {
    fn render(s: &'s SynthSession) -> String {
        let mut h = DefaultHasher::new();
        s.id.hash(&mut h);
        let mut w = Render {
            s,
            out: String::with_capacity(1024 + s.turns.len() * 700),
            salt: h.finish(),
            n: 0,
            last_uuid: None,
            msg_id: String::new(),
            request_id: String::new(),
            prev: Prev::Other,
            prompt_id: String::new(),
            listed_skills: false,
        };
        let first_prompt = s.turns.iter().find_map(|t| match t {
            SynthTurn::User { text, .. } => Some(text.as_str()),
            _ => None,
        });
        let t0 = s.started.to_rfc3339();
        w.line(&json!({"type": "queue-operation", "operation": "enqueue", "timestamp": t0, "sessionId": s.id, "content": first_prompt.unwrap_or("")}));
        w.line(&json!({"type": "queue-operation", "operation": "dequeue", "timestamp": t0, "sessionId": s.id}));
        for turn in &s.turns {
            w.turn(turn);
        }
        if let Some(title) = &s.title {
            w.line(&json!({"type": "summary", "summary": title, "leafUuid": w.last_uuid}));
        }
        let last_prompt = s.turns.iter().rev().find_map(|t| match t {
            SynthTurn::User { text, .. } => Some(text.as_str()),
            _ => None,
        });
        if let (Some(prompt), Some(leaf)) = (last_prompt, w.last_uuid.clone()) {
            w.line(&json!({"type": "last-prompt", "lastPrompt": prompt, "leafUuid": leaf, "sessionId": s.id}));
        }
        w.out
    }

    fn line(&mut self, v: &Value) {
        self.out.push_str(&v.to_string());
        self.out.push('\n');
    }

    fn uuid(&mut self) -> String {
        self.n += 1;
        synth_uuid(self.n, self.salt)
    }

    /// Writes one chain record: the shared envelope plus `fields`.
    fn chain(&mut self, kind: &str, time: Timestamp, fields: Value) -> String {
        let uuid = self.uuid();
        let mut rec = Map::new();
        rec.insert("parentUuid".into(), self.last_uuid.clone().map_or(Value::Null, Value::String));
        rec.insert("isSidechain".into(), Value::Bool(false));
        rec.insert("userType".into(), "external".into());
        rec.insert("cwd".into(), self.s.project.clone().into());
        rec.insert("sessionId".into(), self.s.id.clone().into());
        rec.insert("version".into(), SYNTH_VERSION.into());
        rec.insert("gitBranch".into(), "main".into());
        if let Value::Object(extra) = fields {
            rec.extend(extra);
        }
        rec.insert("type".into(), kind.into());
        rec.insert("uuid".into(), uuid.clone().into());
        rec.insert("timestamp".into(), time.to_rfc3339().into());
        self.line(&Value::Object(rec));
        self.last_uuid = Some(uuid.clone());
        uuid
    }

    fn assistant(&mut self, time: Timestamp, block: Value, continues: bool, stop: &str) -> String {
        if !continues || self.msg_id.is_empty() {
            self.n += 1;
            self.msg_id = format!("msg_01{:016x}{:06x}", self.salt, self.n);
            self.request_id = format!("req_011C{:016x}{:06x}", self.salt, self.n);
        }
        let msg = json!({
            "id": self.msg_id, "type": "message", "role": "assistant", "model": SYNTH_MODEL,
            "content": [block], "stop_reason": stop, "stop_sequence": null,
            "usage": {"input_tokens": 4, "cache_read_input_tokens": 14250, "output_tokens": 120, "service_tier": "standard"}
        });
        self.chain("assistant", time, json!({"message": msg, "requestId": self.request_id}))
    }

    fn tool(&mut self, time: Timestamp, name: &str, input: Value, content: String, is_error: bool, result: Value) {
        self.n += 1;
        let call_id = format!("toolu_01{:016x}{:06x}", self.salt, self.n);
        let block = json!({"type": "tool_use", "id": call_id, "name": name, "input": input});
        let source = self.assistant(time, block, matches!(self.prev, Prev::Text | Prev::Thinking), "tool_use");
        let item = json!({"tool_use_id": call_id, "type": "tool_result", "content": content, "is_error": is_error});
        let fields = json!({
            "message": {"role": "user", "content": [item]},
            "toolUseResult": result, "sourceToolAssistantUUID": source, "promptId": self.prompt_id,
        });
        self.chain("user", time, fields);
        self.prev = Prev::Other;
    }

    fn turn(&mut self, turn: &SynthTurn) {
        match turn {
            SynthTurn::User { text, time } => {
                self.prompt_id = self.uuid();
                let fields = json!({
                    "message": {"role": "user", "content": text}, "promptId": self.prompt_id,
                    "permissionMode": "default", "entrypoint": "cli",
                });
                self.chain("user", *time, fields);
                if !self.listed_skills {
                    self.listed_skills = true;
                    let attachment = json!({"attachment": {
                        "type": "skill_listing",
                        "content": "- deja-history: Search what earlier sessions on this machine decided, ran and changed.",
                        "names": ["deja-history"], "skillCount": 1,
                    }});
                    self.chain("attachment", *time, attachment);
                }
                self.prev = Prev::Other;
            }
            SynthTurn::Assistant { text, time } => {
                self.assistant(*time, json!({"type": "text", "text": text}), self.prev == Prev::Thinking, "end_turn");
                self.prev = Prev::Text;
            }
            SynthTurn::Reasoning { text, time } => {
                let signature = format!("EqQB{}", self.salt);
                self.assistant(*time, json!({"type": "thinking", "thinking": text, "signature": signature}), false, "end_turn");
                self.prev = Prev::Thinking;
            }
            SynthTurn::Shell { command, output, exit_code, time } => {
                let input = json!({"command": command, "description": "Run the command"});
                if *exit_code == 0 {
                    let result = json!({"stdout": output, "stderr": "", "interrupted": false, "isImage": false, "noOutputExpected": false});
                    self.tool(*time, "Bash", input, output.clone(), false, result);
                } else {
                    let content = format!("Exit code {exit_code}\n{output}");
                    let result = Value::String(format!("Error: {content}"));
                    self.tool(*time, "Bash", input, content, true, result);
                }
            }
            SynthTurn::Read { path, output, time } => {
                let lines = output.lines().count();
                let result = json!({"type": "text", "file": {"filePath": path, "content": output, "numLines": lines, "startLine": 1, "totalLines": lines}});
                self.tool(*time, "Read", json!({"file_path": path}), output.clone(), false, result);
            }
            SynthTurn::Edit { path, old, new, time } => {
                let input = json!({"file_path": path, "old_string": old, "new_string": new, "replace_all": false});
                let result = json!({"filePath": path, "oldString": old, "newString": new, "structuredPatch": [], "userModified": false, "replaceAll": false});
                self.tool(*time, "Edit", input, format!("The file {path} has been updated successfully."), false, result);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static TEST_DIALECT: ClaudeDialect = ClaudeDialect { harness: "t", config_dir: ".t", tools: CLAUDE_TOOLS };

    fn parse_file(dir: &str, body: &str, hints: &FileHints) -> Vec<crate::Session> {
        let tmp = tempfile::tempdir().expect("tempdir");
        let d = tmp.path().join(dir);
        std::fs::create_dir_all(&d).expect("mkdir");
        let path = d.join("s1.jsonl");
        std::fs::write(&path, body).expect("write");
        let mut out = Vec::new();
        parse_with(&TEST_DIALECT, &SourceRef::file(&path), &ParseOptions::default(), hints, &mut out).expect("parse");
        out
    }

    const NO_CWD: &str = r#"{"type":"user","uuid":"u1","message":{"role":"user","content":"hello there"}}"#;

    #[test]
    fn the_project_hint_comes_before_the_directory_name() {
        let plain = parse_file("-nowhere-xyz", NO_CWD, &FileHints::default());
        assert_eq!(plain[0].project.as_deref(), Some("nowhere/xyz"), "the dash fallback without hints");
        let hinted = parse_file("-nowhere-xyz", NO_CWD, &FileHints { project: Some("/src/shop".into()), ..FileHints::default() });
        assert_eq!(hinted[0].project.as_deref(), Some("/src/shop"));
        let with_cwd = r#"{"type":"user","uuid":"u1","cwd":"/real","message":{"role":"user","content":"hello there"}}"#;
        let lines_win = parse_file("-nowhere-xyz", with_cwd, &FileHints { project: Some("/src/shop".into()), ..FileHints::default() });
        assert_eq!(lines_win[0].project.as_deref(), Some("/real"), "a line's cwd wins over the hint");
    }

    #[test]
    fn a_flat_file_takes_no_project_from_its_directory() {
        let flat = parse_file("projects", NO_CWD, &FileHints { flat: true, ..FileHints::default() });
        assert_eq!(flat[0].project, None);
    }

    #[test]
    fn a_tool_call_turn_decodes_claude_input_keys_under_any_tool_map() {
        const MAP: ToolMap = ToolMap { shell: &["sh"], read: &[], edit: &["patch"], write: &[] };
        let edit = tool_call_turn(&MAP, "patch", &json!({"file_path": "/a.rs", "old_string": "x", "new_string": "y"}), None);
        assert_eq!(edit.files, vec![FileTouch { path: "/a.rs".into(), action: crate::model::FileAction::Edit }]);
        assert_eq!(edit.edit.map(|e| (e.old, e.new)), Some(("x".to_string(), Some("y".to_string()))));
        let shell = tool_call_turn(&MAP, "sh", &json!({"command": "make"}), None);
        assert_eq!(shell.tool.and_then(|t| t.command).as_deref(), Some("make"));
        assert_eq!(shell.role, Role::ToolCall);
    }

    const GEMINI_TOOLS: ToolMap = ToolMap { shell: &["run_shell_command"], read: &["read_file"], edit: &["replace"], write: &[] };
    static GEMINI_DIALECT: ClaudeDialect = ClaudeDialect { harness: "g", config_dir: ".g", tools: GEMINI_TOOLS };
    const QUIRKS: ClaudeQuirks = ClaudeQuirks {
        gemini_results: true,
        snapshot_runs: true,
        path_keys: &["absolute_path"],
        skip_user_prefixes: &["Stop hook feedback:"],
        command_envelopes: true,
        text_chunks: true,
    };

    fn parse_quirky(body: &str, quirks: ClaudeQuirks) -> crate::Session {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("s.jsonl");
        std::fs::write(&path, body).expect("write");
        let mut out = Vec::new();
        let hints = FileHints { quirks, ..FileHints::default() };
        parse_with(&GEMINI_DIALECT, &SourceRef::file(&path), &ParseOptions::default(), &hints, &mut out).expect("parse");
        out.into_iter().next().expect("a session")
    }

    const SNAPSHOTS: &str = r##"{"uuid":"u1","parentUuid":null,"type":"user","timestamp":"2026-01-21T05:56:34.812Z","message":{"role":"user","content":"read it"}}
{"uuid":"a1","parentUuid":"u1","type":"assistant","timestamp":"2026-01-21T05:56:52.470Z","message":{"role":"assistant","content":[{"type":"text","text":"Reading."},{"type":"tool_use","id":"c1","name":"read_file","input":{"absolute_path":"/r/README.md"}}]}}
{"uuid":"a2","parentUuid":"u1","type":"assistant","timestamp":"2026-01-21T05:56:52.487Z","message":{"role":"assistant","content":[{"type":"text","text":"Reading."},{"type":"tool_use","id":"c1","name":"read_file","input":{"absolute_path":"/r/README.md"}},{"type":"tool_use","id":"c2","name":"run_shell_command","input":{"command":"make"}}]}}
{"uuid":"u2","parentUuid":"a2","type":"user","timestamp":"2026-01-21T05:56:53.100Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":{"callId":"c1","responseParts":{"functionResponse":{"id":"c1","name":"read_file","response":{"output":"# Retagger"}}}}},{"type":"tool_result","tool_use_id":"c2","content":{"callId":"c2","responseParts":{"functionResponse":{"id":"c2","name":"run_shell_command","response":{"output":"Command: make\nExit Code: 2"}}}}}]}}
{"uuid":"u3","parentUuid":"u2","type":"user","timestamp":"2026-01-21T05:57:00.000Z","message":{"role":"user","content":"Stop hook feedback: lint first"}}
{"uuid":"u4","parentUuid":"u3","type":"user","timestamp":"2026-01-21T05:57:01.000Z","message":{"role":"user","content":"<command-message>init</command-message><command-name>/init</command-name><command-args>fast</command-args>"}}
"##;

    #[test]
    fn quirks_read_snapshot_runs_gemini_results_and_commands() {
        let s = parse_quirky(SNAPSHOTS, QUIRKS);
        let texts: Vec<(Role, &str)> = s.turns.iter().map(|t| (t.role, t.text.as_str())).collect();
        assert_eq!(
            texts,
            [
                (Role::User, "read it"),
                (Role::Assistant, "Reading."),
                (Role::ToolCall, "# Retagger"),
                (Role::ToolCall, "Command: make\nExit Code: 2"),
                (Role::User, "/init fast"),
            ]
        );
        assert_eq!(s.turns[2].files.first().map(|f| f.path.as_str()), Some("/r/README.md"), "absolute_path names the file");
        assert_eq!(s.turns[3].tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(2)));
    }

    #[test]
    fn gemini_results_are_read_bare_and_as_a_list_of_parts() {
        let body = r##"{"uuid":"a1","parentUuid":null,"type":"assistant","timestamp":"2026-01-21T05:56:52.470Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"run_shell_command","input":{"command":"cargo test"}},{"type":"tool_use","id":"c2","name":"read_file","input":{"absolute_path":"/r/a.rs"}}]}}
{"uuid":"u1","parentUuid":"a1","type":"user","timestamp":"2026-01-21T05:56:53.100Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":{"functionResponse":{"id":"c1","name":"run_shell_command","response":{"output":"Command: cargo test\nStdout: 1 failed\nExit Code: 101"}}}},{"type":"tool_result","tool_use_id":"c2","content":{"callId":"c2","responseParts":[{"functionResponse":{"id":"c2","name":"read_file","response":{"output":"fn a() {}"}}}]}}]}}
"##;
        let s = parse_quirky(body, QUIRKS);
        let calls: Vec<(&str, Option<ExitStatus>)> =
            s.turns.iter().map(|t| (t.text.as_str(), t.tool.as_ref().and_then(|u| u.exit.clone()))).collect();
        assert_eq!(calls, [("Command: cargo test\nStdout: 1 failed\nExit Code: 101", Some(ExitStatus::Code(101))), ("fn a() {}", None)]);
    }

    #[test]
    fn title_lines_name_the_session_and_a_branch_names_its_source() {
        let body = r##"{"type":"summary","summary":"Old summary","leafUuid":"u1"}
{"uuid":"u1","parentUuid":null,"type":"user","sessionId":"b2","forkedFrom":{"sessionId":"a1","messageUuid":"m9"},"timestamp":"2026-01-21T05:56:34.812Z","message":{"role":"user","content":"fix the cart"}}
{"type":"ai-title","aiTitle":"Cart fix","sessionId":"b2"}
{"type":"custom-title","customTitle":"Cart rounding","sessionId":"b2"}
{"type":"ai-title","aiTitle":"Later generated title","sessionId":"b2"}
"##;
        let s = parse_quirky(body, ClaudeQuirks::default());
        assert_eq!(s.title.as_deref(), Some("Cart rounding"), "a name the user gave wins over generated titles and summaries");
        assert_eq!((s.parent.as_deref(), s.kind.as_deref()), (Some("a1"), Some("fork")));
        let generated = parse_quirky(
            &body.replace(r#"{"type":"custom-title","customTitle":"Cart rounding","sessionId":"b2"}"#, ""),
            ClaudeQuirks::default(),
        );
        assert_eq!(generated.title.as_deref(), Some("Later generated title"));
    }

    #[test]
    fn a_generated_title_in_a_tail_does_not_replace_the_name_given_before() {
        let head = r##"{"uuid":"u1","parentUuid":null,"type":"user","sessionId":"b2","timestamp":"2026-01-21T05:56:34.812Z","message":{"role":"user","content":"fix the cart"}}
{"type":"custom-title","customTitle":"Cart rounding","sessionId":"b2"}
"##;
        let tail = r##"{"type":"ai-title","aiTitle":"Later generated title","sessionId":"b2"}
{"uuid":"a1","parentUuid":"u1","type":"assistant","sessionId":"b2","timestamp":"2026-01-21T05:57:00.000Z","message":{"role":"assistant","content":"Done."}}
"##;
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("b2.jsonl");
        // The head read whole, then the tail from the state it left, joined as the
        // indexer joins them: the title the session ends with.
        let read_tail = |head: &str| {
            let parse = |src: &SourceRef| {
                let mut out: Vec<crate::Session> = Vec::new();
                let stats = parse_with(&TEST_DIALECT, src, &ParseOptions::default(), &FileHints::default(), &mut out).expect("parse");
                (out, stats)
            };
            std::fs::write(&path, head).expect("write");
            let (first, stats) = parse(&SourceRef::file(&path).append_only());
            std::fs::write(&path, format!("{head}{tail}")).expect("write");
            let resume = crate::model::Resume::after(&stats, &first[0]);
            let (out, _) = parse(&SourceRef { resume: Some(resume), ..SourceRef::file(&path).append_only() });
            let held = crate::tail::whole_meta(&first[0], "b2");
            let by = if first[0].title.is_some() { first[0].title_by } else { TitleBy::Prompt };
            out.iter().map(|s| crate::tail::continue_meta(&held, by, s, 0, "b2").0.title).collect::<Vec<_>>()
        };
        assert_eq!(read_tail(head), [Some("Cart rounding".to_string())]);
        let unnamed = head.replace("{\"type\":\"custom-title\",\"customTitle\":\"Cart rounding\",\"sessionId\":\"b2\"}\n", "");
        assert_eq!(read_tail(&unnamed), [Some("Later generated title".to_string())], "no name given: the generated one");
    }

    #[test]
    fn streamed_text_chunks_join_as_written() {
        let body = r##"{"uuid":"a1","parentUuid":null,"type":"assistant","timestamp":"2026-01-21T05:56:52.470Z","message":{"role":"assistant","content":[{"type":"text","text":"The bug is in the ref"},{"type":"text","text":"resh loop; "},{"type":"text","text":"the "},{"type":"text","text":"the "},{"type":"text","text":"token."},{"type":"tool_use","id":"c1","name":"run_shell_command","input":{"command":"make"}},{"type":"text","text":"Done."}]}}
"##;
        let s = parse_quirky(body, QUIRKS);
        let texts: Vec<(Role, &str)> = s.turns.iter().map(|t| (t.role, t.text.as_str())).collect();
        assert_eq!(
            texts,
            [(Role::Assistant, "The bug is in the refresh loop; the the token."), (Role::ToolCall, ""), (Role::Assistant, "Done.")]
        );
        let apart = parse_quirky(body, ClaudeQuirks { text_chunks: false, ..QUIRKS });
        assert_eq!(apart.turns[0].text, "The bug is in the ref\nresh loop; \nthe \ntoken.", "Claude Code's blocks are separate texts");
    }

    #[test]
    fn without_quirks_snapshots_repeat_and_objects_give_no_text() {
        let s = parse_quirky(SNAPSHOTS, ClaudeQuirks::default());
        assert_eq!(s.turns.iter().filter(|t| t.role == Role::Assistant).count(), 2, "Claude's reading: two messages");
        assert!(s.turns.iter().any(|t| t.text.starts_with("Stop hook feedback")));
    }
}

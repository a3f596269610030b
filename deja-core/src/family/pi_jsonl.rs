//! pi-lineage session JSONL: the one reader behind pi, omp, gjc, kimchi, senpi, prime,
//! qclaw, clawdbot and OpenClaw's JSONL generation, parameterised by a [`PiDialect`].
//!
//! A file is one session: a `session` header (omp puts a fixed-width `title` slot line
//! before it), then typed entries chained by `id`/`parentId` into a tree (branches after
//! edits and rewinds). The file is read in order; every entry's place in the tree is kept
//! on its turns as [`NodeRef`], and an entry that makes no turn links its children through
//! to the nearest ancestor that made one. An entry that makes several turns (thinking,
//! prose, calls) gives the first its own id and the others `<id>#<n>`, each the child of
//! the one before; its children hang off the last. A tool result folded into its call links
//! its children through its own parent. An entry id seen twice is read once, so a
//! re-written entry or a branch read in order never duplicates a turn.
//!
//! | record | Turn | rule |
//! | --- | --- | --- |
//! | `session` header | — | `id` (session id), `cwd` (project), `timestamp`, `title`, `parentSession` (+ `rlmDepth`) → parent / kind |
//! | `title` slot, `title_change` (`title`), `session_info` (`name`, pi's `/name`; not on the pages) | session title | by the one title precedence: `session_info` and a `source: "user"` slot or change are the user's, the others the harness's; among equals the last non-empty one wins |
//! | `message` / `user` | `User` | `content` string, or `content[]` items' `text` joined by newline; gateway date prefix stripped when the dialect says |
//! | `message` / `assistant` `text` blocks | `Assistant` | consecutive text blocks joined by newline into one turn; `partial` when `stopReason` is `aborted` |
//! | `message` / `assistant` `thinking` blocks | `Reasoning` | only with `include_reasoning` |
//! | `message` / `assistant` `toolCall` blocks | `ToolCall` | name; `command` for shell tools; `files` for read/edit/write tools; `edit` spans for edit tools |
//! | `message` / `toolResult` (`toolCallId`) | folded into its `ToolCall` | text = output; `isError`; exit from `details.exitCode`/`exitSignal` or a dialect exit marker line; dialect footers stripped; work from `details` per dialect |
//! | `message` / `toolResult` with no call in this read | `ToolOutput` | keeps `call_id` so the indexer can fold it into a call read earlier; with no `toolCallId` but work in its `details` it is a `ToolCall` |
//! | `message` / `bashExecution` (a `!command` the user ran; pi's format, not on the pages) | `ToolCall` | `command`, `output`, `exitCode`; `cancelled` is an error |
//! | `message` / `developer`, `system`, any other role | skipped | harness-authored |
//! | `compaction` (`summary`), `branch_summary` (`summary`) | `Summary` | never replaces the turns it summarised |
//! | `custom` with a dialect sub-agent `customType` | — | marks the session a sub-agent |
//! | `model_change`, `thinking_level_change`, `service_tier_change`, `label`, `custom`, `custom_message`, other types | skipped | metadata, lifecycle, injected recall; tree links stepped through |
//! | flat `{"role", "content", "timestamp"}` line (no `type`) | `User` / `Assistant` | only with `flat_role_lines`; missing role = assistant, `system` skipped |
//! | line that is not JSON, not an object, or a torn last line | skipped | counted in [`ParseStats`] |
//!
//! Timestamps: the header's and each entry's envelope `timestamp`; the inner
//! `message.timestamp` (epoch ms) is ignored, as the pages say.
//!
//! Sub-agents and forks: a header `parentSession` (a path or id) names the parent, whose
//! id is the uuid part of its file name. The session is a `subagent` when its
//! `subagent_depth_field` is above zero, when a `subagent_custom_types` entry appears, or
//! when the file sits in a directory named after a session file beside it
//! (`<session>/N-<agent>.jsonl`, `agent` = the part after `N-`); otherwise it is a `fork`.
//! A fork file opens with copies of the parent's entries (same ids): when the parent file
//! is readable those entries are skipped, so forks do not duplicate the parent's turns.
//! [`head_marks_subagent`] reads the same depth and custom-type signs from a file's head,
//! for discovery to leave sub-agents out that sit beside their parents.
//!
//! Incremental reads: with `SourceRef::resume` only the tail from the offset is parsed and
//! numbering continues from `next_seq`; the header's `cwd` comes back in the tail state
//! (`TailState::cwd`), with its `parentSession` (mark `parent`) and whether a sign marked
//! a sub-agent (mark `subagent`), so the head is never read again. A title the tail
//! names is weighed against the one indexed by the indexer. Tree parents that lie before
//! the offset are kept as written.
//!
//! # Dialect fields
//!
//! | field | what it switches | harnesses |
//! | --- | --- | --- |
//! | `harness` | adapter id of the sessions | all |
//! | `tools` | tool names → shell/read/edit/write | all (`bash`/`read`/`edit`/`write`; OpenClaw, qclaw, clawdbot `exec`) |
//! | `dir_project` | project when there is no usable `cwd` | pi, omp, gjc, senpi `DashEncoded`; OpenClaw `AgentDir("openclaw-")`, qclaw `AgentDir("qclaw-")`; kimchi, prime, clawdbot `None` |
//! | `agent_scoped_ids` | id = `<agentId>:<id>` | qclaw |
//! | `archived_suffixes` | `.jsonl.deleted.<ts>` etc. are transcripts too | qclaw |
//! | `flat_role_lines` | `{"role","content"}` lines without `type` | clawdbot |
//! | `flat_id_root` | fallback id = path below this directory, without `.jsonl` | clawdbot (`sessions`) |
//! | `gateway_date_prefix` | strip `[Wed 2026-02-18 11:21 GMT+1] ` from user text | qclaw |
//! | `exit_markers` | last output line `<marker><N>` is the exit code | pi-derived bash tools (`Command exited with code `) |
//! | `result_footers` | the last paragraph, when its first line starts with one of these, is dropped (a notice block) | omp (`Wall time: `) |
//! | `clean_exit_zero` | a shell result with `isError: false` that names no exit code exited 0 | pi (its bash tool fails every non-zero exit) |
//! | `no_output_text` | a result text that is exactly this placeholder is empty output | pi (`(no output)`) |
//! | `codemode_tools` | result text is `{"text": …}`; work from `details.toolCalls[].args` | senpi (`eval`) |
//! | `diff_details` | work from the result's `details.diffs[]` | prime |
//! | `hashline_edits` | `§path` / `≔A..B` (gjc) or `[PATH#TAG]` / `PUT N.=M:` / `+row` (omp 18) edit input; old lines from the result's `details.diff` | gjc, omp |
//! | `subagent_custom_types` | an entry of this `type`/`customType` marks a sub-agent | kimchi (`kimchi:subagent-session`) |
//! | `subagent_depth_field` | header depth field above zero marks a sub-agent | prime (`rlmDepth`) |
//! | `skip_file_names` | file names discovery never takes | prime (`semantic-edges.jsonl`) |
//! | `answer_tools` | a call's `arguments.data` is also an assistant turn (a sub-agent's handed-back answer) | omp (`yield`) |

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::builder::SessionBuilder;
use crate::discover::find_files;
use crate::format::{Discovery, FormatError, ParseOptions, ParseStats, SessionSink};
use crate::model::{
    cap_text, Edit, ExitStatus, FileAction, FileTouch, NodeRef, Role, SourceRef, TailState, Timestamp, TitleBy, ToolUse, Turn,
    MAX_EDIT_BYTES,
};
use crate::patch::parse_apply_patch;
use crate::project::{dash_fallback_name, decode_dash_path};
use crate::read::{for_each_json_line, for_each_source_line, read_source};
use crate::work::{command_from_argv, ToolKind, ToolMap};

/// Where a session's project comes from when the header has no usable `cwd`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DirProject {
    /// Nothing: the directory name is unreliable or absent (kimchi, prime, clawdbot).
    None,
    /// The dash-encoded working directory the file sits in (`--src-app--`, `-src-app`),
    /// resolved on disk, else its last two dash parts.
    DashEncoded,
    /// `<prefix><agentId>` from `agents/<agentId>/sessions/<file>` (OpenClaw).
    AgentDir(&'static str),
}

/// Everything harness-specific about one pi-lineage harness. See the module doc for
/// which harness needs which field; [`PiDialect::BASE`] is plain pi behaviour with no
/// quirks, to build dialects from with `..PiDialect::BASE`.
#[derive(Debug, Clone, Copy)]
pub struct PiDialect {
    /// Adapter id the sessions are filed under.
    pub harness: &'static str,
    /// Tool names → shell/read/edit/write.
    pub tools: ToolMap,
    /// The project when there is no usable `cwd`.
    pub dir_project: DirProject,
    /// Session ids are `<agentId>:<id>`, the agent directory included to avoid collisions.
    pub agent_scoped_ids: bool,
    /// Archived transcript suffixes after `.jsonl` (`.deleted.`, `.reset.`, `.full.bak`):
    /// discovery takes them and ids drop them.
    pub archived_suffixes: &'static [&'static str],
    /// Lines without `type` in the flat `{"role","content","timestamp"}` shape are speech.
    pub flat_role_lines: bool,
    /// When the header gives no id: the path below the last directory of this name,
    /// without `.jsonl`, is the id (else the file stem).
    pub flat_id_root: Option<&'static str>,
    /// User text relayed from chat channels opens with a gateway date prefix to strip.
    pub gateway_date_prefix: bool,
    /// A last output line `<marker><N>` carries the exit code (and is dropped from the text).
    pub exit_markers: &'static [&'static str],
    /// The last paragraph of a result, when its first line starts with one of these, is
    /// dropped (timing and notice footers).
    pub result_footers: &'static [&'static str],
    /// The shell tool turns every non-zero exit into an error result, so a shell result
    /// that is not an error and carries no exit code of its own exited 0.
    pub clean_exit_zero: bool,
    /// The text the harness writes for a command that printed nothing (not output).
    pub no_output_text: Option<&'static str>,
    /// Code-mode tools: the result text is a JSON `{"text": …}` and the tools the cell
    /// really ran are in the result's `details.toolCalls[]` (`name`, `args`).
    pub codemode_tools: &'static [&'static str],
    /// File changes arrive on the result as `details.diffs[]` (`path`, `oldStr`, `newStr`).
    pub diff_details: bool,
    /// The edit tool may take a hashline `input` (`§path`, `≔A..B`/`«A`/`»A` ops, then the
    /// lines written); the replaced lines come from the result's `details.diff`.
    pub hashline_edits: bool,
    /// An entry whose `type` or `customType` is one of these marks a sub-agent session.
    pub subagent_custom_types: &'static [&'static str],
    /// A header field whose value above zero marks a sub-agent session.
    pub subagent_depth_field: Option<&'static str>,
    /// File names discovery never takes (event logs beside transcripts).
    pub skip_file_names: &'static [&'static str],
    /// A sub-agent hands its final answer back by calling one of these tools with it in
    /// `arguments.data`: that answer is also an assistant turn (the result says only that
    /// it was submitted).
    pub answer_tools: &'static [&'static str],
}

/// pi's own tool names, shared by most of the lineage.
pub const PI_TOOLS: ToolMap = ToolMap { shell: &["bash"], read: &["read"], edit: &["edit"], write: &["write"] };

impl PiDialect {
    /// Plain pi behaviour and no quirks; set `harness` and what differs.
    pub const BASE: PiDialect = PiDialect {
        harness: "",
        tools: PI_TOOLS,
        dir_project: DirProject::DashEncoded,
        agent_scoped_ids: false,
        archived_suffixes: &[],
        flat_role_lines: false,
        flat_id_root: None,
        gateway_date_prefix: false,
        exit_markers: &[],
        result_footers: &[],
        clean_exit_zero: false,
        no_output_text: None,
        codemode_tools: &[],
        diff_details: false,
        hashline_edits: false,
        subagent_custom_types: &[],
        subagent_depth_field: None,
        skip_file_names: &[],
        answer_tools: &[],
    };
}

/// The tail state's mark holding the header's `parentSession`.
const MARK_PARENT: &str = "parent";
/// The tail state's mark set once a sign said the session is a sub-agent.
const MARK_SUBAGENT: &str = "subagent";
/// The head [`head_marks_subagent`] reads is at most this long.
const HEAD_LIMIT: u64 = 64 << 10;
/// A fork's parent file is read for its entry ids only up to this size.
const MAX_PARENT_BYTES: u64 = 64 << 20;
/// `agents/<id>/sessions/<sub>/<file>` and nested sub-agent passes are a few levels down.
pub const MAX_WALK_DEPTH: usize = 6;

// ---------------------------------------------------------------------------------------
// Discovery helpers

/// True when `name` is a transcript file name for this dialect: `*.jsonl` (or an archived
/// `*.jsonl<suffix>…` when the dialect keeps them), never an OpenClaw compaction
/// checkpoint `<id>.checkpoint.<uuid>.jsonl`, never one of `skip_file_names`.
pub fn is_transcript_name(d: &PiDialect, name: &str) -> bool {
    if d.skip_file_names.contains(&name) {
        return false;
    }
    if let Some(stem) = name.strip_suffix(".jsonl") {
        return !is_checkpoint_stem(stem);
    }
    match name.find(".jsonl") {
        Some(i) => {
            let rest = &name[i + ".jsonl".len()..];
            d.archived_suffixes.iter().any(|s| rest.starts_with(s)) && !is_checkpoint_stem(&name[..i])
        }
        None => false,
    }
}

/// `<id>.checkpoint.<uuid>`: a context snapshot with a transcript's shape.
fn is_checkpoint_stem(stem: &str) -> bool {
    stem.rsplit_once(".checkpoint.").is_some_and(|(_, uuid)| looks_like_uuid(uuid))
}

fn looks_like_uuid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == 5 && parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12]) && parts.iter().all(|p| p.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The session file name without `.jsonl` and any archived suffix after it.
pub fn file_stem_id(name: &str) -> &str {
    match name.find(".jsonl") {
        Some(i) => &name[..i],
        None => name,
    }
}

/// The uuid part of pi's `<ISO timestamp>_<uuid>` file stem (the header id), or the stem
/// itself when it has no timestamp prefix.
pub fn id_from_stem(stem: &str) -> &str {
    match stem.split_once('_') {
        Some((ts, id)) if !id.is_empty() && ts.len() >= 10 && ts.as_bytes()[..4].iter().all(u8::is_ascii_digit) && ts.contains('T') => id,
        _ => stem,
    }
}

/// The project named by a dash-encoded session directory (`--src-notes--`, `-src-app`):
/// the directory when it resolves on this machine, else its last two dash parts.
pub fn project_from_encoded_dir(encoded: &str) -> Option<String> {
    if encoded.trim_matches('-').is_empty() {
        return None;
    }
    Some(match decode_dash_path(encoded, Path::new("/")) {
        Some(p) => p.display().to_string(),
        None => dash_fallback_name(encoded),
    })
}

/// A sub-agent pass file: it sits in a directory named after a session file beside that
/// directory (`<project>/<session>/N-<agent>.jsonl` next to `<project>/<session>.jsonl`).
/// Returns the parent session's file stem.
pub fn subagent_pass_parent(path: &Path) -> Option<String> {
    let dir = path.parent()?;
    let dir_name = dir.file_name()?.to_str()?;
    let sibling = dir.parent()?.join(format!("{dir_name}.jsonl"));
    sibling.is_file().then(|| dir_name.to_string())
}

/// Every transcript under `root` (at most `max_depth` directories down), as append-only
/// sources. Sub-agent pass files ([`subagent_pass_parent`]) are left out unless
/// `include_subagents`. Records the root in `found.roots`.
pub fn discover_sessions(d: &PiDialect, root: &Path, max_depth: usize, include_subagents: bool, found: &mut Discovery) {
    if !found.looked_at(root) {
        return;
    }
    found.sources.extend(sessions_under(d, root, max_depth, include_subagents));
    Discovery::sort_sources(&mut found.sources);
}

/// The transcripts [`discover_sessions`] finds under a root already looked at (a store
/// walk, `deja_core::store::Walk`, whose roots core resolves and reports).
pub fn sessions_under(d: &PiDialect, root: &Path, max_depth: usize, include_subagents: bool) -> Vec<SourceRef> {
    let paths = find_files(root, max_depth, &|name| is_transcript_name(d, name));
    // The parent session file of a pass is found by the same walk: no stat per file.
    let found_paths: HashSet<&Path> = if include_subagents { HashSet::new() } else { paths.iter().map(PathBuf::as_path).collect() };
    let is_pass = |path: &Path| {
        let Some(dir) = path.parent() else { return false };
        let Some(name) = dir.file_name().and_then(|n| n.to_str()) else { return false };
        dir.parent().is_some_and(|up| found_paths.contains(up.join(format!("{name}.jsonl")).as_path()))
    };
    paths.iter().filter(|p| include_subagents || !is_pass(p)).map(|path| SourceRef::file(path).append_only()).collect()
}

/// True when the head of the transcript at `path` (at most 64 KiB) marks it a sub-agent
/// session by the dialect's own signs: a header `subagent_depth_field` above zero, or an
/// entry whose `type`/`customType` is one of `subagent_custom_types`. For dialects whose
/// sub-agent transcripts sit beside their parents' (kimchi), so that discovery can leave
/// them out when `DEJA_INCLUDE_SUBAGENTS` is off; an unreadable file is not one.
pub fn head_marks_subagent(d: &PiDialect, path: &Path) -> bool {
    let src = SourceRef::file(path);
    let opts = ParseOptions::default();
    let mut file = FileParse::new(d, &src, &opts);
    file.read_head(HEAD_LIMIT);
    file.subagent
}

// ---------------------------------------------------------------------------------------
// Parsing

/// Parses one pi-lineage transcript into at most one session (see the module doc).
/// Never panics; undecodable lines are counted in the stats, and only an unreadable
/// file is an error.
pub fn parse(d: &PiDialect, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let mut stats = ParseStats::default();
    let mut file = FileParse::new(d, src, opts);
    for_each_source_line(src, &mut stats, &[], |_, v| file.line(&v))?;
    file.finish(&mut stats, out);
    Ok(stats)
}

/// Parses already-decoded events into at most one session: the same rules as [`parse`]
/// for sources whose events are not JSONL lines, e.g. OpenClaw 2026.9's SQLite
/// `transcript_events` rows, each exactly one line of the former file. `src` names the
/// source; with `src.resume` set, numbering continues from `next_seq` and the id is the
/// resumed one. No head is re-read here, so pass the header event first (with its title
/// entries) even on an incremental read. Non-object events are counted as skipped.
pub fn parse_events(
    d: &PiDialect,
    src: &SourceRef,
    opts: &ParseOptions,
    events: impl IntoIterator<Item = Value>,
    out: &mut dyn SessionSink,
) -> ParseStats {
    let mut stats = ParseStats::default();
    let mut file = FileParse::new(d, src, opts);
    for v in events {
        stats.records += 1;
        file.line(&v);
    }
    file.finish(&mut stats, out);
    stats
}

/// Node bookkeeping for the turns one entry makes: the first turn is the entry's own id,
/// later ones `<id>#<n>`, each the child of the one before, so ids stay unique and the
/// entry's children hang off its last turn.
struct EntryNodes {
    id: Option<String>,
    parent: Option<String>,
    made: u32,
    last: Option<String>,
}

impl EntryNodes {
    fn peek(&self) -> Option<NodeRef> {
        let id = self.id.as_ref()?;
        Some(match self.made {
            0 => NodeRef { id: id.clone(), parent: self.parent.clone() },
            n => NodeRef { id: format!("{id}#{n}"), parent: self.last.clone() },
        })
    }

    fn commit(&mut self, node: Option<NodeRef>) {
        self.made += 1;
        if let Some(n) = node {
            self.last = Some(n.id);
        }
    }
}

/// What a tool call (or a nested call a result reports) did to the work records.
#[derive(Debug, Default)]
struct Work {
    name: String,
    command: Option<String>,
    files: Vec<FileTouch>,
    edit: Option<Edit>,
}

impl Work {
    fn is_empty(&self) -> bool {
        self.command.is_none() && self.files.is_empty() && self.edit.is_none()
    }
}

struct FileParse<'a> {
    d: &'a PiDialect,
    src: &'a SourceRef,
    opts: &'a ParseOptions,
    b: SessionBuilder,
    header_id: Option<String>,
    cwd: Option<String>,
    /// The best title read so far, by the one precedence.
    title: Option<(String, TitleBy)>,
    parent_session: Option<String>,
    subagent: bool,
    /// First user text of flat lines (clawdbot's title rule).
    flat_title: Option<String>,
    /// For every entry id: the node id of the nearest turn at or above it.
    repr: HashMap<String, Option<String>>,
    seen: HashSet<String>,
    /// Entry ids a fork copied from its parent file.
    inherited: HashSet<String>,
    not_objects: u64,
    bad_entries: u64,
}

impl<'a> FileParse<'a> {
    fn new(d: &'a PiDialect, src: &'a SourceRef, opts: &'a ParseOptions) -> Self {
        let id = src.resume.as_ref().map_or_else(|| fallback_id(d, &src.path), |r| r.session_id.clone());
        // A tail goes on from what the header said, kept from the read before.
        let state = src.resume.as_ref().map(|r| &r.state);
        FileParse {
            d,
            src,
            opts,
            b: SessionBuilder::new(d.harness, id, src.clone()),
            header_id: None,
            cwd: state.and_then(|s| s.cwd.clone()),
            title: None,
            parent_session: state.and_then(|s| s.marks.get(MARK_PARENT).cloned()),
            subagent: state.is_some_and(|s| s.marked(MARK_SUBAGENT)),
            flat_title: None,
            repr: HashMap::new(),
            seen: HashSet::new(),
            inherited: HashSet::new(),
            not_objects: 0,
            bad_entries: 0,
        }
    }

    /// The header, title and sub-agent markers of the file's first `limit` bytes, without
    /// emitting its turns (for [`head_marks_subagent`]).
    fn read_head(&mut self, limit: u64) {
        let mut head = Vec::new();
        let Ok(file) = std::fs::File::open(&self.src.path) else { return };
        if file.take(limit.min(HEAD_LIMIT)).read_to_end(&mut head).is_err() {
            return;
        }
        let mut scratch = ParseStats::default();
        for_each_json_line(&head, 0, &self.src.path, &mut scratch, |_, v| match v.get("type").and_then(Value::as_str) {
            Some("session") => self.header(&v, false),
            Some(_) => {
                self.title_entry(&v);
                self.subagent_marker(&v);
            }
            None => {}
        });
    }

    fn line(&mut self, v: &Value) {
        if !v.is_object() {
            self.not_objects += 1;
            return;
        }
        let Some(kind) = v.get("type").and_then(Value::as_str) else {
            if self.d.flat_role_lines && (v.get("role").is_some() || v.get("content").is_some()) {
                self.flat_line(v);
            }
            return;
        };
        let entry_id = text_at(v, "id").map(str::to_string);
        if kind == "session" {
            self.header(v, true);
            return;
        }
        if let Some(id) = &entry_id {
            if self.inherited.contains(id) {
                // Copied from the parent session: its turns live there, under this id.
                self.repr.entry(id.clone()).or_insert_with(|| Some(id.clone()));
                return;
            }
            if !self.seen.insert(id.clone()) {
                return;
            }
        }
        let time = v.get("timestamp").and_then(Timestamp::from_json);
        self.b.touch(time);
        let parent = self.resolve(text_at(v, "parentId"));
        let mut nodes = EntryNodes { id: entry_id.clone(), parent: parent.clone(), made: 0, last: None };
        let mut merged_into: Option<Option<String>> = None;
        match kind {
            "message" => merged_into = self.message(v, time, &mut nodes),
            "compaction" | "branch_summary" => {
                if let Some(summary) = text_at(v, "summary") {
                    self.push(&mut nodes, Turn::new(Role::Summary, summary).at(time));
                }
            }
            _ => {
                self.title_entry(v);
                self.subagent_marker(v);
            }
        }
        if let Some(id) = entry_id {
            // A result folded into its call links its children through its own parent (the
            // call entry's last turn), so prose written after the call stays on the path;
            // the call itself is the fallback when the entry names no parent.
            let node = if nodes.made > 0 { nodes.last.clone().or(parent) } else { parent.or(merged_into.flatten()) };
            self.repr.entry(id).or_insert(node);
        }
    }

    /// The nearest ancestor that made a turn; an id not seen (before a resume point, or
    /// a missing entry) is kept as written.
    fn resolve(&self, parent: Option<&str>) -> Option<String> {
        let p = parent?;
        match self.repr.get(p) {
            Some(r) => r.clone(),
            None => Some(p.to_string()),
        }
    }

    fn header(&mut self, v: &Value, touch: bool) {
        if self.header_id.is_some() {
            return;
        }
        // An id with control characters (a NUL, a newline) could not be typed or printed back.
        self.header_id = Some(text_at(v, "id").unwrap_or("").to_string()).filter(|s| !s.is_empty() && !s.contains(char::is_control));
        self.cwd = text_at(v, "cwd").map(str::to_string);
        if let Some(t) = text_at(v, "title") {
            self.offer_title(t, TitleBy::Harness);
        }
        if touch {
            self.b.touch(v.get("timestamp").and_then(Timestamp::from_json));
        }
        if let Some(field) = self.d.subagent_depth_field {
            if v.get(field).and_then(Value::as_f64).is_some_and(|depth| depth > 0.0) {
                self.subagent = true;
            }
        }
        self.parent_session = text_at(v, "parentSession").map(str::to_string);
        if touch && !self.subagent {
            if let Some(parent) = self.parent_session.clone() {
                self.inherited = parent_entry_ids(&self.src.path, &parent);
            }
        }
    }

    /// Takes a title entry's title: pi's `/name` (`session_info`) and a title omp says the
    /// user set (`source: "user"`) are the user's, the rest the harness's.
    fn title_entry(&mut self, v: &Value) {
        let user_said = text_at(v, "source") == Some("user");
        let (title, by) = match v.get("type").and_then(Value::as_str) {
            Some("title" | "title_change") => (text_at(v, "title"), if user_said { TitleBy::User } else { TitleBy::Harness }),
            Some("session_info") => (text_at(v, "name").or_else(|| text_at(v, "title")), TitleBy::User),
            _ => (None, TitleBy::Harness),
        };
        if let Some(t) = title {
            self.offer_title(t, by);
        }
    }

    /// Keeps `title` when it supersedes the one read before ([`TitleBy::supersedes`]).
    fn offer_title(&mut self, title: &str, by: TitleBy) {
        let t = title.trim();
        if !t.is_empty() && self.title.as_ref().is_none_or(|(_, held)| by.supersedes(*held)) {
            self.title = Some((t.to_string(), by));
        }
    }

    fn subagent_marker(&mut self, v: &Value) {
        let marks = |key: &str| v.get(key).and_then(Value::as_str).is_some_and(|t| self.d.subagent_custom_types.contains(&t));
        if marks("type") || marks("customType") {
            self.subagent = true;
        }
    }

    fn push(&mut self, nodes: &mut EntryNodes, mut turn: Turn) -> bool {
        turn.node = nodes.peek();
        let node = turn.node.clone();
        if self.b.push(turn).is_some() {
            nodes.commit(node);
            true
        } else {
            false
        }
    }

    fn push_call(&mut self, nodes: &mut EntryNodes, call_id: Option<&str>, mut turn: Turn) {
        turn.node = nodes.peek();
        let node = turn.node.clone();
        self.b.push_call(call_id, turn);
        nodes.commit(node);
    }

    /// One `message` entry. Returns `Some(node)` when it folded into an earlier turn
    /// (a tool result into its call), so its children link to that turn.
    fn message(&mut self, v: &Value, time: Option<Timestamp>, nodes: &mut EntryNodes) -> Option<Option<String>> {
        let Some(message) = v.get("message").filter(|m| m.is_object()) else {
            self.bad_entries += 1;
            return None;
        };
        match message.get("role").and_then(Value::as_str).unwrap_or("") {
            "user" => {
                let text = content_text(message.get("content"));
                let text = if self.d.gateway_date_prefix { strip_gateway_prefix(&text) } else { &text };
                self.push(nodes, Turn::new(Role::User, text).at(time));
                None
            }
            "assistant" => {
                self.assistant(message, time, nodes);
                None
            }
            "toolResult" => self.tool_result(message, time, nodes),
            "bashExecution" => {
                self.bash_execution(message, time, nodes);
                None
            }
            // developer, system and anything else are harness-authored.
            _ => None,
        }
    }

    fn assistant(&mut self, message: &Value, time: Option<Timestamp>, nodes: &mut EntryNodes) {
        // An interrupted answer is written with what had streamed so far.
        let partial = message.get("stopReason").and_then(Value::as_str) == Some("aborted");
        let items = match message.get("content") {
            Some(Value::String(s)) => {
                let mut turn = Turn::new(Role::Assistant, s.as_str()).at(time);
                turn.partial = partial;
                self.push(nodes, turn);
                return;
            }
            Some(Value::Array(items)) => items,
            _ => return,
        };
        let mut prose: Vec<&str> = Vec::new();
        for item in items {
            match item.get("type").and_then(Value::as_str) {
                Some("thinking") => {
                    self.flush_prose(&mut prose, time, partial, nodes);
                    if self.opts.include_reasoning {
                        if let Some(t) = item.get("thinking").and_then(Value::as_str) {
                            self.push(nodes, Turn::new(Role::Reasoning, t).at(time));
                        }
                    }
                }
                Some("toolCall") => {
                    self.flush_prose(&mut prose, time, partial, nodes);
                    self.tool_call(item, time, nodes);
                    if let Some(answer) = self.handed_back_answer(item) {
                        self.push(nodes, Turn::new(Role::Assistant, answer).at(time));
                    }
                }
                Some("text") | None => {
                    if let Some(t) = item.get("text").and_then(Value::as_str).filter(|t| !t.trim().is_empty()) {
                        prose.push(t);
                    }
                }
                // images, redacted thinking and unknown blocks say nothing indexable.
                Some(_) => {}
            }
        }
        self.flush_prose(&mut prose, time, partial, nodes);
    }

    /// The answer a sub-agent hands back through one of the dialect's `answer_tools`:
    /// `arguments.data` as text, or a structured value as compact JSON.
    fn handed_back_answer(&self, item: &Value) -> Option<String> {
        let name = text_at(item, "name")?;
        if !self.d.answer_tools.contains(&name) {
            return None;
        }
        let parsed;
        let args = match item.get("arguments") {
            Some(Value::String(s)) => {
                parsed = serde_json::from_str::<Value>(s).ok()?;
                &parsed
            }
            Some(a) => a,
            None => return None,
        };
        let text = match args.get("data")? {
            Value::String(s) => s.clone(),
            Value::Null => return None,
            other => other.to_string(),
        };
        (!text.trim().is_empty()).then_some(text)
    }

    fn flush_prose(&mut self, prose: &mut Vec<&str>, time: Option<Timestamp>, partial: bool, nodes: &mut EntryNodes) {
        if !prose.is_empty() {
            let mut turn = Turn::new(Role::Assistant, prose.join("\n")).at(time);
            turn.partial = partial;
            prose.clear();
            self.push(nodes, turn);
        }
    }

    fn tool_call(&mut self, item: &Value, time: Option<Timestamp>, nodes: &mut EntryNodes) {
        let call_id = text_at(item, "id");
        // A call already read (a re-written entry under a new id) is indexed once.
        if call_id.is_some_and(|id| self.b.call_mut(id).is_some()) {
            return;
        }
        let name = text_at(item, "name").unwrap_or("tool");
        let parsed_args;
        let args = match item.get("arguments") {
            // Some providers stream arguments as a JSON string.
            Some(Value::String(s)) => {
                parsed_args = serde_json::from_str::<Value>(s).unwrap_or(Value::Null);
                &parsed_args
            }
            Some(a) => a,
            None => &Value::Null,
        };
        let work = call_work(self.d, name, args);
        let mut turn = Turn::new(Role::ToolCall, "").at(time);
        turn.tool = Some(ToolUse { name: name.to_string(), command: work.command, ..ToolUse::default() });
        turn.files = work.files;
        turn.edit = work.edit;
        self.push_call(nodes, call_id, turn);
    }

    fn tool_result(&mut self, message: &Value, time: Option<Timestamp>, nodes: &mut EntryNodes) -> Option<Option<String>> {
        let call_id = text_at(message, "toolCallId").unwrap_or("");
        let tool_name = text_at(message, "toolName").unwrap_or("");
        let details = message.get("details").unwrap_or(&Value::Null);
        let mut text = content_text(message.get("content"));
        if self.d.codemode_tools.contains(&tool_name) {
            if let Some(inner) = unwrap_text_json(&text) {
                text = inner;
            }
        }
        // The exit line comes last (omp writes it after its notice block), so it goes first.
        let (marker_exit, text) = split_exit_marker(&text, self.d.exit_markers);
        let text = strip_footers(text, self.d.result_footers);
        let text = match self.d.no_output_text {
            Some(placeholder) if text.trim() == placeholder => "",
            _ => text,
        };
        let is_error = message.get("isError").and_then(Value::as_bool) == Some(true);
        let mut exit = details_exit(details).or(marker_exit.map(ExitStatus::Code));
        // Only an explicit `isError: false`: a result without the field (older omp) says
        // nothing about how the command ended.
        let said_ok = message.get("isError").and_then(Value::as_bool) == Some(false);
        if exit.is_none() && said_ok && self.d.clean_exit_zero && self.d.tools.kind(tool_name) == ToolKind::Shell {
            exit = Some(ExitStatus::Code(0));
        }
        let mut extra = result_work(self.d, tool_name, details);
        let hashline_old =
            if self.d.hashline_edits { details.get("diff").and_then(Value::as_str).and_then(diff_removed_lines) } else { None };

        if self.b.complete_call(call_id, text, is_error, exit.clone(), time) {
            let call = self.b.call_mut(call_id);
            let call_node = call.as_ref().and_then(|t| t.node.as_ref()).map(|n| n.id.clone());
            if let Some(turn) = call {
                if let (Some(old), Some(edit)) = (hashline_old, turn.edit.as_mut()) {
                    if edit.old.is_empty() {
                        edit.old = old;
                    }
                }
                merge_first_work(turn, &mut extra);
            }
            self.push_extra_work(extra, time, nodes);
            return Some(call_node);
        }
        // No call in this read: an orphan, or a call an earlier incremental pass indexed.
        let node = nodes.peek();
        if self.b.push_orphan_result(call_id, text, is_error, exit, time).is_some() {
            nodes.commit(node.clone());
            let tail = self.src.resume.is_some();
            if let Some(turn) = self.b.last_turn_mut() {
                turn.node = node;
                if let Some(tool) = turn.tool.as_mut() {
                    tool.name = tool_name.to_string();
                }
                merge_first_work(turn, &mut extra);
                // The lines the call replaced, for the indexer to give the call read before
                // (`crate::tail::merge_result`): the file is the call's.
                if let Some(old) = hashline_old.filter(|_| tail && turn.edit.is_none() && !call_id.is_empty()) {
                    turn.edit = Some(Edit { path: String::new(), old, new: None });
                }
                // A result that names no call but reports the work it did is a call record.
                if call_id.is_empty()
                    && (turn.edit.is_some() || !turn.files.is_empty() || turn.tool.as_ref().is_some_and(|t| t.command.is_some()))
                {
                    turn.role = Role::ToolCall;
                }
            }
        }
        self.push_extra_work(extra, time, nodes);
        None
    }

    /// Nested calls a result reported beyond the one folded into its call: each its own
    /// `ToolCall` turn, after the result.
    fn push_extra_work(&mut self, extra: Vec<Work>, time: Option<Timestamp>, nodes: &mut EntryNodes) {
        for w in extra {
            let mut turn = Turn::new(Role::ToolCall, "").at(time);
            turn.tool = Some(ToolUse { name: w.name, command: w.command, ..ToolUse::default() });
            turn.files = w.files;
            turn.edit = w.edit;
            self.push_call(nodes, None, turn);
        }
    }

    fn bash_execution(&mut self, message: &Value, time: Option<Timestamp>, nodes: &mut EntryNodes) {
        let Some(command) = text_at(message, "command") else { return };
        let exit = message.get("exitCode").and_then(Value::as_i64).map(ExitStatus::Code);
        let cancelled = message.get("cancelled").and_then(Value::as_bool) == Some(true);
        let mut turn = Turn::new(Role::ToolCall, text_at(message, "output").unwrap_or("").trim_end()).at(time);
        let is_error = cancelled || exit.as_ref().is_some_and(|e| !e.succeeded());
        turn.tool = Some(ToolUse { name: "bash".to_string(), command: Some(command.to_string()), exit, is_error, call_id: None });
        self.push_call(nodes, None, turn);
    }

    fn flat_line(&mut self, v: &Value) {
        let time = v.get("timestamp").and_then(Timestamp::from_json);
        let role = match v.get("role").and_then(Value::as_str) {
            Some("user") => Role::User,
            Some("assistant") | None => Role::Assistant,
            // system and anything else are not speech.
            Some(_) => return,
        };
        let text = content_text(v.get("content"));
        if role == Role::User && self.flat_title.is_none() {
            self.flat_title = text.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string);
        }
        self.b.touch(time);
        let _ = self.b.push(Turn::new(role, text).at(time));
    }

    fn finish(self, stats: &mut ParseStats, out: &mut dyn SessionSink) {
        let FileParse { d, src, mut b, header_id, cwd, title, parent_session, subagent, flat_title, not_objects, bad_entries, .. } = self;
        if not_objects > 0 {
            stats.skipped += not_objects;
            stats.problem(format!("{}: {not_objects} lines were JSON but not objects", src.path.display()));
        }
        if bad_entries > 0 {
            stats.skipped += bad_entries;
            stats.problem(format!("{}: {bad_entries} entries had no usable message", src.path.display()));
        }
        if src.resume.is_none() {
            if let Some(id) = header_id {
                b.set_id(scoped_id(d, &src.path, id));
            }
        }
        // What the next tail read goes on from (see the module doc).
        let mut state = TailState { cwd: cwd.clone(), ..TailState::default() };
        if let Some(parent) = &parent_session {
            state.marks.insert(MARK_PARENT.to_string(), parent.clone());
        }
        state.mark(MARK_SUBAGENT, subagent);
        stats.tail = Some(state);
        // The header's `cwd` is where the session ran; a directory name is a lossy
        // encoding of it (`api-service` decodes as `api/service`), the fallback only.
        let project = cwd.or_else(|| dir_project(d, &src.path));
        let pass_parent = subagent_pass_parent(&src.path);
        let s = b.session_mut();
        s.project = project;
        match (title, flat_title) {
            (Some((t, by)), _) => s.offer_title(t, by),
            // Clawdbot's flat lines name no title: its first user line is the prompt's.
            (None, Some(t)) => s.offer_title(t, TitleBy::Prompt),
            (None, None) => {}
        }
        if let Some(parent_stem) = &pass_parent {
            s.kind = Some("subagent".to_string());
            s.parent = Some(id_from_stem(parent_stem).to_string());
            let stem = src.path.file_name().and_then(|n| n.to_str()).map(file_stem_id).unwrap_or("");
            s.agent =
                stem.split_once('-').filter(|(n, a)| !a.is_empty() && n.bytes().all(|c| c.is_ascii_digit())).map(|(_, a)| a.to_string());
        } else if let Some(parent) = parent_session {
            let name = parent.rsplit(['/', '\\']).next().unwrap_or(&parent);
            s.parent = Some(id_from_stem(file_stem_id(name)).to_string());
            s.kind = Some(if subagent { "subagent" } else { "fork" }.to_string());
        } else if subagent {
            s.kind = Some("subagent".to_string());
        }
        if let Some(session) = b.finish() {
            out.session(session);
        }
    }
}

/// The id before (or without) a header: qclaw-style agent scoping, the path below the
/// flat root, or the file name without `.jsonl`.
fn fallback_id(d: &PiDialect, path: &Path) -> String {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let stem = file_stem_id(name).to_string();
    if let Some(root) = d.flat_id_root {
        let parts: Vec<&str> = path.iter().filter_map(|c| c.to_str()).collect();
        if let Some(i) = parts.iter().rposition(|c| *c == root) {
            let mut rel: Vec<&str> = parts[i + 1..].to_vec();
            if let Some(last) = rel.last_mut() {
                *last = file_stem_id(last);
            }
            if !rel.is_empty() {
                return rel.join("/");
            }
        }
    }
    scoped_id(d, path, stem)
}

fn scoped_id(d: &PiDialect, path: &Path, id: String) -> String {
    match agent_dir(path).filter(|_| d.agent_scoped_ids) {
        Some(agent) => format!("{agent}:{id}"),
        None => id,
    }
}

/// `<agentId>` of `…/agents/<agentId>/sessions/<file>`.
fn agent_dir(path: &Path) -> Option<String> {
    let sessions = path.parent()?;
    if sessions.file_name()? != "sessions" {
        return None;
    }
    let agent = sessions.parent()?;
    let agents = agent.parent()?.file_name()?.to_str()?;
    (agents == "agents" || agents.ends_with("agents")).then(|| agent.file_name()?.to_str().map(str::to_string))?
}

fn dir_project(d: &PiDialect, path: &Path) -> Option<String> {
    match d.dir_project {
        DirProject::None => None,
        DirProject::DashEncoded => {
            // A sub-agent pass sits one directory deeper, under its session's directory.
            let dir = match subagent_pass_parent(path) {
                Some(_) => path.parent()?.parent()?,
                None => path.parent()?,
            };
            let name = dir.file_name()?.to_str()?;
            name.starts_with('-').then(|| project_from_encoded_dir(name))?
        }
        DirProject::AgentDir(prefix) => agent_dir(path).map(|a| format!("{prefix}{a}")),
    }
}

/// The entry ids of a fork's parent file (`parentSession`, absolute or relative to the
/// fork's directory), when it is a readable regular file of sane size.
fn parent_entry_ids(fork: &Path, parent: &str) -> HashSet<String> {
    let mut ids = HashSet::new();
    let candidate = PathBuf::from(parent);
    let path = if candidate.is_absolute() { candidate } else { fork.parent().map_or(candidate.clone(), |d| d.join(&candidate)) };
    if path == fork || !std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() <= MAX_PARENT_BYTES) {
        return ids;
    }
    let mut stats = ParseStats::default();
    let Ok(bytes) = read_source(&path, &mut stats) else { return ids };
    for_each_json_line(&bytes.bytes, 0, &path, &mut stats, |_, v| {
        if v.get("type").and_then(Value::as_str) != Some("session") {
            if let Some(id) = text_at(&v, "id") {
                ids.insert(id.to_string());
            }
        }
    });
    ids
}

/// A non-empty string field.
fn text_at<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// `content` as one text: a string, or the `text` of its text items joined by newline.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter(|i| matches!(i.get("type").and_then(Value::as_str), Some("text") | None))
            .filter_map(|i| i.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Drops a chat gateway's `[Wed 2026-02-18 11:21 GMT+1] ` prefix (≤ 40 chars, ends `] `).
fn strip_gateway_prefix(text: &str) -> &str {
    if !text.starts_with('[') {
        return text;
    }
    match text.find("] ") {
        Some(i) if i + 2 <= 40 && text[..i].bytes().any(|b| b.is_ascii_digit()) => &text[i + 2..],
        _ => text,
    }
}

/// `{"text": "…"}` → the wrapped text.
fn unwrap_text_json(text: &str) -> Option<String> {
    let t = text.trim();
    if !t.starts_with('{') {
        return None;
    }
    serde_json::from_str::<Value>(t).ok()?.get("text")?.as_str().map(str::to_string)
}

/// The text without its trailing footer block (and the blank lines before it): the last
/// paragraph, when its first line starts with a footer. omp 18.2.3 writes its notices as
/// one paragraph after a blank line, `Wall time: …` first and then lines such as
/// `Timeout clamped to …`, so dropping only a last `Wall time:` line left them in.
fn strip_footers<'t>(text: &'t str, footers: &[&str]) -> &'t str {
    if footers.is_empty() {
        return text;
    }
    let trimmed = text.trim_end();
    // The last paragraph; without a blank line anywhere, only the last line can be one.
    let (body, block) = match trimmed.rfind("\n\n").or_else(|| trimmed.rfind('\n')) {
        Some(i) => (&trimmed[..i], trimmed[i..].trim_start_matches('\n')),
        None => ("", trimmed),
    };
    let first = block.lines().next().unwrap_or("");
    if footers.iter().any(|f| first.trim_start().starts_with(f)) {
        body.trim_end()
    } else {
        text
    }
}

/// A last line `<marker><N>` → (N, the text before it).
fn split_exit_marker<'t>(text: &'t str, markers: &'static [&'static str]) -> (Option<i64>, &'t str) {
    let lines: Vec<crate::exit::ExitLine> = markers.iter().map(|m| crate::exit::ExitLine::last(m)).collect();
    crate::exit::split_exit_code(text, &lines)
}

/// `details.exitCode`, else a non-empty `details.exitSignal`.
fn details_exit(details: &Value) -> Option<ExitStatus> {
    if let Some(code) = details.get("exitCode").and_then(Value::as_i64) {
        return Some(ExitStatus::Code(code));
    }
    details.get("exitSignal").and_then(Value::as_str).filter(|s| !s.is_empty()).map(|s| ExitStatus::Signal(s.to_string()))
}

/// The work records of one call from its name and arguments.
fn call_work(d: &PiDialect, name: &str, args: &Value) -> Work {
    let mut work = Work { name: name.to_string(), ..Work::default() };
    let kind = d.tools.kind(name);
    if kind == ToolKind::Shell {
        work.command = match args.get("command").or_else(|| args.get("cmd")) {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
            Some(Value::Array(argv)) => {
                let argv: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
                (!argv.is_empty()).then(|| command_from_argv(&argv))
            }
            _ => None,
        };
        return work;
    }
    let input = args.get("input").and_then(Value::as_str);
    if let Some(patch) = input.filter(|i| i.trim_start().starts_with("*** Begin Patch")) {
        let (files, edits) = parse_apply_patch(patch, None);
        work.files = files;
        work.edit = edits.into_iter().next();
        return work;
    }
    if kind == ToolKind::Edit && d.hashline_edits {
        if let Some(hashline) = input.filter(|i| {
            i.trim_start().starts_with('§') || i.lines().find(|l| !l.trim().is_empty()).is_some_and(|l| bracket_header(l).is_some())
        }) {
            let (files, edit) = parse_hashline(hashline);
            work.files = files;
            work.edit = edit;
            return work;
        }
    }
    let Some(action) = d.tools.file_action(name) else { return work };
    let Some(path) = ["path", "file_path", "filePath", "file"].iter().find_map(|k| text_at(args, k)) else { return work };
    work.files.push(FileTouch { path: path.to_string(), action });
    if action == FileAction::Edit {
        work.edit = edit_spans(path, args);
    }
    work
}

const OLD_KEYS: [&str; 5] = ["oldText", "old_text", "old_string", "oldStr", "oldString"];
const NEW_KEYS: [&str; 5] = ["newText", "new_text", "new_string", "newStr", "newString"];

/// One replaced span from `{oldText, newText}` (in any of the lineage's spellings) or a
/// `{diff}` hunk: `-` lines are the old text, `+` lines the new.
fn span_pair(v: &Value) -> Option<(String, Option<String>)> {
    if let Some(old) = OLD_KEYS.iter().find_map(|k| v.get(*k).and_then(Value::as_str)).filter(|o| !o.is_empty()) {
        let new = NEW_KEYS.iter().find_map(|k| v.get(*k).and_then(Value::as_str)).map(str::to_string);
        return Some((old.to_string(), new));
    }
    let diff = v.get("diff").and_then(Value::as_str)?;
    let old: Vec<&str> = diff.lines().filter(|l| !l.starts_with("---")).filter_map(|l| l.strip_prefix('-')).collect();
    let new: Vec<&str> = diff.lines().filter(|l| !l.starts_with("+++")).filter_map(|l| l.strip_prefix('+')).collect();
    (!old.is_empty()).then(|| (old.join("\n"), (!new.is_empty()).then(|| new.join("\n"))))
}

/// The top-level pair plus every `edits[]` pair, old spans joined with newlines; `None`
/// when no old span is non-empty.
fn edit_spans(path: &str, args: &Value) -> Option<Edit> {
    let mut spans: Vec<(String, Option<String>)> = span_pair(args).into_iter().collect();
    if let Some(edits) = args.get("edits").and_then(Value::as_array) {
        spans.extend(edits.iter().filter_map(span_pair));
    }
    if spans.is_empty() {
        return None;
    }
    let mut old = spans.iter().map(|(o, _)| o.as_str()).collect::<Vec<_>>().join("\n");
    cap_text(&mut old, MAX_EDIT_BYTES);
    let news: Vec<&str> = spans.iter().filter_map(|(_, n)| n.as_deref()).collect();
    let new = (!news.is_empty()).then(|| {
        let mut n = news.join("\n");
        cap_text(&mut n, MAX_EDIT_BYTES);
        n
    });
    Some(Edit { path: path.to_string(), old, new })
}

/// A hashline edit input, in either of the lineage's two spellings: gjc's `§path` headers
/// with `≔A..B` / `«A` / `»A` op lines and the written lines as they are, or omp 18's
/// `[PATH#TAG]` section headers with `PUT`/`CUT`/`REM`/`MV` op lines and `+`-prefixed body
/// rows (`+` alone a blank line). The old span is filled from the result later.
fn parse_hashline(input: &str) -> (Vec<FileTouch>, Option<Edit>) {
    let mut files: Vec<FileTouch> = Vec::new();
    let mut first_path: Option<String> = None;
    let mut written: Vec<&str> = Vec::new();
    for line in input.lines() {
        let header = line.strip_prefix('§').map(str::trim).or_else(|| bracket_header(line));
        if let Some(path) = header {
            if !path.is_empty() && !files.iter().any(|f| f.path == path) {
                files.push(FileTouch { path: path.to_string(), action: FileAction::Edit });
                first_path.get_or_insert_with(|| path.to_string());
            }
        } else if line.starts_with(['≔', '«', '»']) || is_hashline_op(line) {
            continue;
        } else if files.len() == 1 {
            match line.strip_prefix('+') {
                Some(row) => written.push(row),
                // omp's body rows all start with `+`; a bare line there is not content.
                None if input.trim_start().starts_with('[') => {}
                None => written.push(line),
            }
        }
    }
    let edit = first_path.map(|path| {
        let mut new = written.join("\n");
        cap_text(&mut new, MAX_EDIT_BYTES);
        Edit { path, old: String::new(), new: Some(new) }
    });
    (files, edit)
}

/// `[PATH#TAG]` (TAG four hex digits) → PATH: omp's hashline section header.
fn bracket_header(line: &str) -> Option<&str> {
    let inner = line.trim().strip_prefix('[')?.strip_suffix(']')?;
    let (path, tag) = inner.rsplit_once('#')?;
    (tag.len() == 4 && tag.bytes().all(|b| b.is_ascii_hexdigit()) && !path.trim().is_empty()).then(|| path.trim())
}

/// omp's hashline op lines: `PUT …`, `CUT …`, `REM`, `MV …`.
fn is_hashline_op(line: &str) -> bool {
    let word = line.split_whitespace().next().unwrap_or("");
    matches!(word, "PUT" | "CUT" | "REM" | "MV")
}

/// The replaced lines of a `details.diff` with `-N|old line` rows.
fn diff_removed_lines(diff: &str) -> Option<String> {
    let old: Vec<&str> = diff
        .lines()
        .filter(|l| !l.starts_with("---"))
        .filter_map(|l| l.strip_prefix('-'))
        .map(|l| l.split_once('|').map_or(l, |(_, t)| t))
        .collect();
    let mut old = old.join("\n");
    cap_text(&mut old, MAX_EDIT_BYTES);
    (!old.is_empty()).then_some(old)
}

/// Work a result reports in its `details`: the nested calls of a code-mode cell, or the
/// file diffs of a cell.
fn result_work(d: &PiDialect, tool_name: &str, details: &Value) -> Vec<Work> {
    let mut out = Vec::new();
    if d.codemode_tools.contains(&tool_name) {
        for call in details.get("toolCalls").and_then(Value::as_array).into_iter().flatten() {
            let name = text_at(call, "name").unwrap_or("tool");
            let work = call_work(d, name, call.get("args").or_else(|| call.get("arguments")).unwrap_or(&Value::Null));
            if !work.is_empty() {
                out.push(work);
            }
        }
    }
    if d.diff_details {
        for diff in details.get("diffs").and_then(Value::as_array).into_iter().flatten() {
            let Some(path) = text_at(diff, "path") else { continue };
            let mut work = Work { name: tool_name.to_string(), ..Work::default() };
            work.files.push(FileTouch { path: path.to_string(), action: FileAction::Edit });
            work.edit = span_pair(diff).map(|(mut old, new)| {
                cap_text(&mut old, MAX_EDIT_BYTES);
                Edit { path: path.to_string(), old, new }
            });
            out.push(work);
        }
    }
    out
}

/// Folds the first reported work item into the call's turn when the call itself recorded
/// no command or edit (a code cell whose one nested call is the real work).
fn merge_first_work(turn: &mut Turn, extra: &mut Vec<Work>) {
    let has_work = turn.edit.is_some() || turn.tool.as_ref().is_some_and(|t| t.command.is_some());
    if has_work || extra.is_empty() {
        return;
    }
    let w = extra.remove(0);
    if let Some(tool) = turn.tool.as_mut() {
        tool.command = w.command;
    }
    for f in w.files {
        if !turn.files.contains(&f) {
            turn.files.push(f);
        }
    }
    turn.edit = w.edit;
}

#[cfg(test)]
mod tests {
    //! The dialect constants here are the ones the nine adapters are meant to copy.

    use super::*;
    use crate::model::Session;
    use proptest::prelude::*;

    const PI_EXIT: &[&str] = &["Command exited with code "];
    const OPENCLAW_TOOLS: ToolMap =
        ToolMap { shell: &["exec", "bash"], read: &["read"], edit: &["edit", "apply_patch"], write: &["write"] };

    const PI: PiDialect =
        PiDialect { harness: "pi", exit_markers: PI_EXIT, clean_exit_zero: true, no_output_text: Some("(no output)"), ..PiDialect::BASE };
    const OMP: PiDialect =
        PiDialect { harness: "omp", result_footers: &["Wall time: "], exit_markers: PI_EXIT, clean_exit_zero: true, ..PiDialect::BASE };
    const GJC: PiDialect = PiDialect { harness: "gjc", hashline_edits: true, exit_markers: PI_EXIT, ..PiDialect::BASE };
    const KIMCHI: PiDialect = PiDialect {
        harness: "kimchi",
        dir_project: DirProject::None,
        subagent_custom_types: &["kimchi:subagent-session"],
        exit_markers: PI_EXIT,
        ..PiDialect::BASE
    };
    const SENPI: PiDialect = PiDialect {
        harness: "senpi",
        tools: ToolMap { shell: &["bash", "powershell"], read: &["read"], edit: &["edit"], write: &["write"] },
        codemode_tools: &["eval"],
        exit_markers: PI_EXIT,
        ..PiDialect::BASE
    };
    const PRIME: PiDialect = PiDialect {
        harness: "prime",
        dir_project: DirProject::None,
        diff_details: true,
        subagent_depth_field: Some("rlmDepth"),
        skip_file_names: &["semantic-edges.jsonl"],
        exit_markers: PI_EXIT,
        ..PiDialect::BASE
    };
    const QCLAW: PiDialect = PiDialect {
        harness: "qclaw",
        tools: OPENCLAW_TOOLS,
        dir_project: DirProject::AgentDir("qclaw-"),
        agent_scoped_ids: true,
        archived_suffixes: &[".deleted.", ".reset.", ".full.bak"],
        gateway_date_prefix: true,
        ..PiDialect::BASE
    };
    const CLAWDBOT: PiDialect = PiDialect {
        harness: "clawdbot",
        tools: OPENCLAW_TOOLS,
        dir_project: DirProject::None,
        flat_role_lines: true,
        flat_id_root: Some("sessions"),
        ..PiDialect::BASE
    };
    const OPENCLAW: PiDialect =
        PiDialect { harness: "openclaw", tools: OPENCLAW_TOOLS, dir_project: DirProject::AgentDir("openclaw-"), ..PiDialect::BASE };

    const ALL: [&PiDialect; 9] = [&PI, &OMP, &GJC, &KIMCHI, &SENPI, &PRIME, &QCLAW, &CLAWDBOT, &OPENCLAW];

    const PI_ID: &str = "6f1e2d3c-0000-4000-8000-000000000001";
    const OMP_ID: &str = "01a2b3c4-0000-7000-8000-000000000001";

    fn fixtures() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pi_jsonl")
    }

    fn fixture(rel: &str) -> PathBuf {
        fixtures().join(rel)
    }

    fn parse_with(d: &PiDialect, src: &SourceRef, reasoning: bool) -> (Vec<Session>, ParseStats) {
        let mut out: Vec<Session> = Vec::new();
        let stats = parse(d, src, &ParseOptions { include_reasoning: reasoning }, &mut out).unwrap();
        (out, stats)
    }

    fn one(d: &PiDialect, rel: &str) -> Session {
        let (mut sessions, _) = parse_with(d, &SourceRef::file(fixture(rel)).append_only(), false);
        assert_eq!(sessions.len(), 1, "{rel}");
        sessions.remove(0)
    }

    fn ts(s: &str) -> Option<Timestamp> {
        Timestamp::parse_str(s)
    }

    fn node(t: &Turn) -> (&str, Option<&str>) {
        let n = t.node.as_ref().expect("turn has a node");
        (n.id.as_str(), n.parent.as_deref())
    }

    fn roles(s: &Session) -> Vec<Role> {
        s.turns.iter().map(|t| t.role).collect()
    }

    fn tool(t: &Turn) -> &ToolUse {
        t.tool.as_ref().expect("turn has a tool")
    }

    const PI_BASIC: &str = "pi/--src-notes--/2026-04-02T10-00-00-000Z_6f1e2d3c-0000-4000-8000-000000000001.jsonl";
    const OMP_FILE: &str = "omp/-src-app/2026-11-30T10-00-00-000Z_01a2b3c4-0000-7000-8000-000000000001.jsonl";

    #[test]
    fn pi_header_speech_and_folded_tools() {
        let (sessions, stats) = parse_with(&PI, &SourceRef::file(fixture(PI_BASIC)), false);
        let s = &sessions[0];
        assert_eq!(s.harness, "pi");
        assert_eq!(s.id, PI_ID);
        assert_eq!(s.project.as_deref(), Some("/src/notes"), "the header's cwd, not the directory decoded");
        assert_eq!(s.title, None);
        assert_eq!(s.started, ts("2026-04-02T10:00:00.000Z"));
        assert_eq!(s.updated, ts("2026-04-02T10:00:41.000Z"));
        assert_eq!(stats.skipped, 1, "only the torn last line");
        use Role::*;
        assert_eq!(roles(s), [User, Assistant, ToolCall, ToolCall, ToolCall, ToolCall, ToolCall, Assistant, ToolOutput, ToolCall]);
        let t = &s.turns;
        assert_eq!(t.iter().map(|t| t.seq).collect::<Vec<_>>(), (0..10).collect::<Vec<_>>());
        assert_eq!(t[0].text, "search is slow on 10k notes");
        assert_eq!(t[0].time, ts("2026-04-02T10:00:05.000Z"), "envelope time, not message.timestamp");
        assert_eq!(node(&t[0]), ("e2", None), "model/thinking changes make no turn and link through");
        assert_eq!(t[1].text, "Adding an FTS index.", "thinking contributes nothing by default");
        assert_eq!(node(&t[1]), ("e3", Some("e2")));

        assert_eq!(tool(&t[2]).name, "bash");
        assert_eq!(tool(&t[2]).command.as_deref(), Some("sqlite3 notes.db .schema"));
        assert_eq!(tool(&t[2]).call_id.as_deref(), Some("c1"));
        assert_eq!(t[2].text, "CREATE TABLE notes(...)");
        assert!(!tool(&t[2]).is_error);
        assert_eq!(node(&t[2]), ("e3#1", Some("e3")), "a second turn of one entry hangs off the first");
        assert_eq!(t[2].time, ts("2026-04-02T10:00:09.000Z"));

        assert_eq!(t[3].files, [FileTouch { path: "src/search.ts".into(), action: FileAction::Read }]);
        assert_eq!(t[3].text, "export function search(q) {}");
        assert_eq!(node(&t[3]), ("e5", Some("e3#1")), "a folded result links its children through to the call entry");
        assert_eq!(t[4].files, [FileTouch { path: "src/search.ts".into(), action: FileAction::Edit }]);
        assert_eq!(
            t[4].edit,
            Some(Edit { path: "src/search.ts".into(), old: "WHERE body LIKE ?".into(), new: Some("WHERE notes MATCH ?".into()) })
        );
        assert_eq!(node(&t[4]), ("e5#1", Some("e5")));

        assert_eq!(tool(&t[5]).command.as_deref(), Some("cargo test"));
        assert_eq!(tool(&t[5]).exit, Some(ExitStatus::Code(101)), "exit from pi's trailing marker line");
        assert!(tool(&t[5]).is_error);
        assert_eq!(t[5].text, "test result: FAILED", "the marker line is not output");
        assert_eq!(node(&t[5]), ("e8", Some("e5#1")));

        assert_eq!(t[6].files, [FileTouch { path: "NOTES.md".into(), action: FileAction::Write }]);
        assert_eq!(t[6].edit, None);
        assert_eq!(t[7].text, "Wrote the notes file.");
        assert_eq!(node(&t[7]), ("e10#1", Some("e10")));

        assert_eq!(t[8].text, "stale output");
        assert_eq!(tool(&t[8]).call_id.as_deref(), Some("c-gone"), "an unpaired result keeps its call id");
        assert_eq!(tool(&t[8]).name, "bash");
        assert_eq!(node(&t[8]), ("e12", Some("e10#1")), "past the folded result, to the prose after the call");

        assert_eq!(tool(&t[9]).command.as_deref(), Some("make bench"));
        assert_eq!(tool(&t[9]).exit, Some(ExitStatus::Code(0)));
        assert_eq!(t[9].text, "bench ok 12ms");
        assert!(!t.iter().any(|t| t.text.contains("house rules")), "developer role is dropped");
    }

    #[test]
    fn thinking_is_reasoning_only_when_asked() {
        let (off, _) = parse_with(&PI, &SourceRef::file(fixture(PI_BASIC)), false);
        assert!(!off[0].turns.iter().any(|t| t.role == Role::Reasoning));
        let (on, _) = parse_with(&PI, &SourceRef::file(fixture(PI_BASIC)), true);
        let t = &on[0].turns;
        assert_eq!(t.len(), off[0].turns.len() + 1);
        assert_eq!((t[1].role, t[1].text.as_str()), (Role::Reasoning, "probably no index"));
        assert_eq!(node(&t[1]), ("e3", Some("e2")));
        assert_eq!((t[2].role, node(&t[2])), (Role::Assistant, ("e3#1", Some("e3"))));
        assert_eq!((t[3].role, node(&t[3])), (Role::ToolCall, ("e3#2", Some("e3#1"))));
    }

    #[test]
    fn tree_branches_summaries_title_and_repeats() {
        let s = one(&PI, "pi/--src-notes--/2026-04-03T09-00-00-000Z_7a000000-0000-4000-8000-000000000002.jsonl");
        assert_eq!(s.title.as_deref(), Some("search backend choice"), "session_info name is the title");
        use Role::*;
        assert_eq!(roles(&s), [User, Assistant, User, Assistant, Summary, User, Summary, Assistant]);
        let t = &s.turns;
        assert_eq!(node(&t[2]), ("u2", Some("a1")), "session_info makes no turn and links through");
        assert_eq!(node(&t[4]), ("b1", Some("a1")), "the branch summary starts a second branch off a1");
        assert_eq!(t[4].text, "Tried a trigram index; too large.");
        assert_eq!(node(&t[5]), ("u3", Some("b1")));
        assert_eq!(t.iter().filter(|t| t.text == "no, try FTS5").count(), 1, "an entry written twice is read once");
        assert_eq!((t[6].text.as_str(), node(&t[6])), ("User wants FTS5 after trigram was too large.", ("k1", Some("u3"))));
        assert_eq!(node(&t[7]), ("a3", Some("k1")));
        assert!(!t.iter().any(|t| t.text.contains("trigram") && t.role == Role::Note), "labels are skipped");
    }

    #[test]
    fn fork_skips_what_it_copied_from_its_parent() {
        let s = one(&PI, "pi/--src-notes--/2026-04-02T11-00-00-000Z_8b000000-0000-4000-8000-000000000003.jsonl");
        assert_eq!(s.parent.as_deref(), Some(PI_ID), "parent id is the uuid of the parent's file name");
        assert_eq!(s.kind.as_deref(), Some("fork"));
        assert_eq!(s.turns.iter().map(|t| t.text.as_str()).collect::<Vec<_>>(), ["now add a result cache", "Cache added."]);
        assert_eq!(node(&s.turns[0]), ("f1", Some("e3")), "the first own entry still points into the parent's tree");
    }

    #[test]
    fn omp_title_slot_developer_lifecycle_and_wall_time() {
        let s = one(&OMP, OMP_FILE);
        assert_eq!(s.id, OMP_ID);
        assert_eq!(s.title.as_deref(), Some("fix the flaky build"), "title slot before the header");
        assert_eq!(s.project.as_deref(), Some("/home/dev/src/app"), "header cwd, not the $HOME-relative directory");
        use Role::*;
        assert_eq!(roles(&s), [User, ToolCall, Assistant]);
        let t = &s.turns;
        assert_eq!(node(&t[0]), ("3e4f5a60", None), "developer entry made no turn");
        assert_eq!(tool(&t[1]).command.as_deref(), Some("cargo build"));
        assert_eq!(t[1].text, "build ok", "Wall time footer stripped");
        assert_eq!(tool(&t[1]).exit, Some(ExitStatus::Code(0)), "omp 18.2.3 names only non-zero exits: a clean result is 0");
        assert_eq!(node(&t[2]), ("6e6e6e6e", Some("3e4f5a6b")), "custom tool_execution_start is stepped through");
        assert_eq!(s.updated, ts("2026-11-30T10:00:06.000Z"));
    }

    #[test]
    fn gjc_edit_shapes_compaction_and_subagent_pass() {
        let s = one(&GJC, "gjc/-w-svc/g-01.jsonl");
        assert_eq!(s.project.as_deref(), Some("/w/svc"));
        use Role::*;
        assert_eq!(roles(&s), [User, ToolCall, ToolCall, ToolCall, Summary, Assistant]);
        let t = &s.turns;
        assert_eq!(t[1].files, [FileTouch { path: "src/job.ts".into(), action: FileAction::Edit }]);
        assert_eq!(
            t[1].edit,
            Some(Edit {
                path: "src/job.ts".into(),
                old: "const once = false;\nschedule();".into(),
                new: Some("const once = true;\nschedule(once);".into())
            }),
            "hashline: written lines from the call, replaced lines from the result's details.diff"
        );
        assert_eq!(
            t[2].edit,
            Some(Edit { path: "src/cron.ts".into(), old: "enable(a); enable(b);".into(), new: Some("enable(a);".into()) })
        );
        assert_eq!(t[3].files, [FileTouch { path: "units/cron.service".into(), action: FileAction::Edit }]);
        assert_eq!(t[3].edit.as_ref().map(|e| (e.old.as_str(), e.new.as_deref())), Some(("Restart=always", Some("Restart=on-failure"))));
        assert_eq!(t[4].text, "Two units were enabled; fixed.");

        let pass = one(&GJC, "gjc/-w-svc/g-01/1-explore.jsonl");
        assert_eq!(pass.kind.as_deref(), Some("subagent"));
        assert_eq!(pass.parent.as_deref(), Some("g-01"));
        assert_eq!(pass.agent.as_deref(), Some("explore"));
        assert_eq!(pass.id, "g-01-p1");
    }

    #[test]
    fn kimchi_subagent_and_fork() {
        let sub = one(&KIMCHI, "kimchi/--w-kimchi-demo--/2026-10-01T09-05-00-000Z_k-02.jsonl");
        assert_eq!((sub.kind.as_deref(), sub.parent.as_deref()), (Some("subagent"), Some("k-01")));
        assert_eq!(sub.project.as_deref(), Some("/w/kimchi-demo"));
        assert_eq!(roles(&sub), [Role::User, Role::Assistant]);
        let fork = one(&KIMCHI, "kimchi/--w-kimchi-demo--/2026-10-01T09-10-00-000Z_k-03.jsonl");
        assert_eq!((fork.kind.as_deref(), fork.parent.as_deref()), (Some("fork"), Some("k-01")));
        assert_eq!(fork.turns[0].text, "keep the cookie on redirect");
    }

    /// Parses `text` written to `<tmp>/<dir>/<name>` (for layout-free checks of one record shape).
    fn parse_text(d: &PiDialect, dir: &str, name: &str, text: &str) -> Session {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(dir).join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        let (mut sessions, _) = parse_with(d, &SourceRef::file(&path), false);
        sessions.remove(0)
    }

    #[test]
    fn pi_clean_bash_result_is_exit_zero_and_its_placeholder_is_not_output() {
        // pi 0.73.1: a successful bash result has no exit line and no details; a command
        // that printed nothing is written as "(no output)".
        let text = concat!(
            r#"{"type":"session","version":3,"id":"p-1","timestamp":"2026-12-01T10:00:00.000Z","cwd":"/w"}"#,
            "\n",
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-12-01T10:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"true","timeout":30000}},{"type":"toolCall","id":"c2","name":"read","arguments":{"path":"a.rs"}}],"stopReason":"toolUse"}}"#,
            "\n",
            r#"{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-12-01T10:00:02.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"(no output)"}],"isError":false}}"#,
            "\n",
            r#"{"type":"message","id":"r2","parentId":"r1","timestamp":"2026-12-01T10:00:03.000Z","message":{"role":"toolResult","toolCallId":"c2","toolName":"read","content":[{"type":"text","text":"fn a() {}"}],"isError":false}}"#,
            "\n",
        );
        let s = parse_text(&PI, "--w--", "p.jsonl", text);
        assert_eq!(tool(&s.turns[0]).exit, Some(ExitStatus::Code(0)), "a clean bash result exited 0");
        assert_eq!(s.turns[0].text, "", "the placeholder is not output");
        assert_eq!(tool(&s.turns[1]).exit, None, "only shell results get an exit status");
        // Dialects without the switch keep an unknown status.
        let o = parse_text(&GJC, "-w", "o.jsonl", text);
        assert_eq!((tool(&o.turns[0]).exit.clone(), o.turns[0].text.as_str()), (None, "(no output)"));
    }

    #[test]
    fn result_without_call_id_but_with_work_is_a_call() {
        // The senpi page's own example result carries no toolCallId.
        let s = parse_text(
            &SENPI,
            "--w--",
            "s.jsonl",
            concat!(
                r#"{"type":"session","version":3,"id":"s-2","timestamp":"2026-09-16T10:00:00Z","cwd":"/w"}"#,
                "\n",
                r#"{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-09-16T10:00:40Z","message":{"role":"toolResult","toolName":"eval","content":[{"type":"text","text":"{\"text\":\"3 passed\"}"}],"details":{"toolCalls":[{"name":"bash","args":{"command":"go test ./worker"}}]}}}"#,
                "\n"
            ),
        );
        assert_eq!(s.turns.len(), 1);
        assert_eq!(s.turns[0].role, Role::ToolCall);
        assert_eq!(s.turns[0].text, "3 passed");
        assert_eq!(tool(&s.turns[0]).command.as_deref(), Some("go test ./worker"));
    }

    #[test]
    fn aborted_answer_is_partial_and_patch_mode_edits_have_spans() {
        let s = parse_text(
            &GJC,
            "-w",
            "g.jsonl",
            concat!(
                r#"{"type":"session","version":3,"id":"g-2","timestamp":"2026-09-16T14:00:00Z","cwd":"/w"}"#,
                "\n",
                r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-09-16T14:00:01Z","message":{"role":"assistant","content":[{"type":"text","text":"Half an ans"}],"stopReason":"aborted"}}"#,
                "\n",
                r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-09-16T14:00:02Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"p","name":"edit","arguments":{"path":"a.rs","edits":[{"op":"replace","diff":"@@\n-let x = 1;\n+let x = 2;"}]}}]}}"#,
                "\n"
            ),
        );
        assert!(s.turns[0].partial);
        assert_eq!(s.turns[1].edit, Some(Edit { path: "a.rs".into(), old: "let x = 1;".into(), new: Some("let x = 2;".into()) }));
        assert!(!s.turns[1].partial);
    }

    #[test]
    fn senpi_codemode_cell_and_injected_recall() {
        let s = one(&SENPI, "senpi/--w-senpi-demo--/s-001.jsonl");
        use Role::*;
        assert_eq!(roles(&s), [User, ToolCall, ToolCall]);
        let t = &s.turns;
        assert_eq!(tool(&t[1]).name, "eval");
        assert_eq!(t[1].text, "3 passed", "the cell's text wrapper is unwrapped");
        assert_eq!(tool(&t[1]).command.as_deref(), Some("go test ./worker"), "the bash the cell really ran");
        assert_eq!(tool(&t[2]).name, "edit");
        assert_eq!(t[2].edit.as_ref().map(|e| e.old.as_str()), Some("return nil"));
        assert_eq!(node(&t[2]), ("r1", Some("a1")), "a further nested call hangs off the result entry");
        assert!(!t.iter().any(|t| t.text.contains("old answer")), "custom_message (injected recall) is skipped");
    }

    #[test]
    fn prime_cell_diffs_and_rlm_child() {
        let s = one(&PRIME, "prime/sessions/0199aa00-0000-7000-8000-000000000001.jsonl");
        assert_eq!(s.project.as_deref(), Some("/w/prime-demo"));
        assert_eq!((s.kind.as_deref(), s.parent.as_deref()), (None, None), "rlmDepth 0 with a null parentSession is top-level");
        use Role::*;
        assert_eq!(roles(&s), [User, ToolCall, ToolCall]);
        let t = &s.turns;
        assert_eq!(t[1].text, "ok");
        assert_eq!(t[1].files, [FileTouch { path: "cfg.py".into(), action: FileAction::Edit }]);
        assert_eq!(t[1].edit, Some(Edit { path: "cfg.py".into(), old: "TIMEOUT=5".into(), new: Some("TIMEOUT=30".into()) }));
        assert_eq!(tool(&t[1]).command, None, "bash() inside a cell is not a command");
        assert_eq!(t[2].edit.as_ref().map(|e| e.path.as_str()), Some("README.md"));

        let child =
            one(&PRIME, "prime/session-artifacts/0199aa00-0000-7000-8000-000000000001/sub-1/0199bb00-0000-7000-8000-000000000002.jsonl");
        assert_eq!(child.kind.as_deref(), Some("subagent"));
        assert_eq!(child.parent.as_deref(), Some("0199aa00-0000-7000-8000-000000000001"));
    }

    #[test]
    fn qclaw_archived_file_agent_id_and_gateway_prefix() {
        let s = one(&QCLAW, "qclaw/agents/main/sessions/1a2b3c4d-0000-4000-8000-000000000001.jsonl.deleted.2026-02-19T08-59-24.951Z");
        assert_eq!(s.id, "main:1a2b3c4d-0000-4000-8000-000000000001");
        assert_eq!(s.project.as_deref(), Some("qclaw-main"));
        use Role::*;
        assert_eq!(roles(&s), [User, ToolCall, Assistant]);
        assert_eq!(s.turns[0].text, "summarise my inbox");
        assert_eq!(tool(&s.turns[1]).command.as_deref(), Some("mail --count"));
        assert_eq!(tool(&s.turns[1]).exit, Some(ExitStatus::Code(127)));
        assert!(tool(&s.turns[1]).is_error);
    }

    #[test]
    fn clawdbot_flat_lines() {
        let s = one(&CLAWDBOT, "clawdbot/sessions/work/chat.jsonl");
        assert_eq!(s.id, "work/chat", "path below the sessions root");
        assert_eq!(s.title.as_deref(), Some("remind me to renew the domain"));
        assert_eq!(s.project, None);
        assert_eq!(roles(&s), [Role::User, Role::Assistant, Role::Assistant], "system skipped, missing role is assistant");
        assert_eq!(s.turns[2].text, "Anything else?");
        assert_eq!(s.started, ts("2025-01-27T03:30:00.000Z"));
        assert_eq!(s.updated, ts("2025-01-27T03:30:03.000Z"));
    }

    #[test]
    fn openclaw_string_content_and_exec_exit_status() {
        let s = one(&OPENCLAW, "openclaw/agents/main/sessions/c0ffee00-1111-4222-8333-444455556666.jsonl");
        assert_eq!(s.id, "c0ffee00-1111-4222-8333-444455556666");
        assert_eq!(s.project.as_deref(), Some("openclaw-main"), "no cwd: the agent directory");
        use Role::*;
        assert_eq!(roles(&s), [User, Assistant, ToolCall, ToolCall]);
        let t = &s.turns;
        assert_eq!(t[0].text, "does the build pass?");
        assert_eq!(node(&t[0]), ("u1", None), "custom model-snapshot links through");
        assert_eq!((tool(&t[2]).exit.clone(), tool(&t[2]).is_error), (Some(ExitStatus::Code(0)), false));
        assert_eq!(t[2].text, "build ok");
        assert_eq!(tool(&t[3]).exit, Some(ExitStatus::Signal("SIGKILL".into())));
        assert!(tool(&t[3]).is_error);
    }

    #[test]
    fn hostile_lines_are_counted_not_fatal() {
        let (sessions, stats) = parse_with(&PI, &SourceRef::file(fixture("garbage/--x--/garbage.jsonl")), false);
        let s = &sessions[0];
        assert_eq!(s.id, "garbage-1", "BOM before the header");
        assert_eq!(stats.skipped, 7, "torn tail, non-JSON line, 4 non-objects, a string message: {:?}", stats.problems);
        let user = s.turns.iter().find(|t| t.role == Role::User).unwrap();
        assert_eq!(user.text, "still readable");
        assert_eq!(user.node, None, "a numeric id is no id");
        let check = s.turns.iter().find(|t| t.tool.as_ref().and_then(|t| t.command.as_deref()) == Some("cargo check")).unwrap();
        assert_eq!(check.text, "ok", "string arguments are decoded, the result still folds");
        assert_eq!(tool(check).exit, None, "a retyped exitCode is ignored");
    }

    #[test]
    fn resume_reads_the_tail_with_the_state_the_head_left() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("-src-app");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.jsonl");
        let bytes = std::fs::read(fixture(OMP_FILE)).unwrap();
        let needle = br#"{"type":"message","id":"5d2b7c10""#;
        let offset = bytes.windows(needle.len()).position(|w| w == needle).unwrap();
        std::fs::write(&path, &bytes[..offset]).unwrap();
        let (head, head_stats) = parse_with(&OMP, &SourceRef::file(&path).append_only(), false);
        assert_eq!(head_stats.tail.as_ref().and_then(|t| t.cwd.as_deref()), Some("/home/dev/src/app"), "the state keeps the cwd");
        std::fs::write(&path, &bytes).unwrap();
        let mut src = SourceRef::file(&path).append_only();
        src.resume = Some(crate::model::Resume::after(&head_stats, &head[0]));
        assert_eq!(src.resume.as_ref().map(|r| (r.offset, r.next_seq)), Some((offset as u64, 2)));
        // The head is not read again: a file whose head is gone still reads the same.
        let mut gone = bytes.clone();
        gone[..offset].fill(b' ');
        std::fs::write(&path, &gone).unwrap();
        let (sessions, stats) = parse_with(&OMP, &src, false);
        let s = &sessions[0];
        assert_eq!(s.id, OMP_ID);
        assert_eq!(s.project.as_deref(), Some("/home/dev/src/app"), "cwd from the state");
        assert_eq!(s.title, None, "the title slot was read with the head; the index holds it");
        assert_eq!(roles(s), [Role::ToolOutput, Role::Assistant]);
        assert_eq!(s.turns.iter().map(|t| t.seq).collect::<Vec<_>>(), [2, 3]);
        assert_eq!(tool(&s.turns[0]).call_id.as_deref(), Some("call_1"), "the call was indexed by the earlier pass");
        assert_eq!(s.turns[0].text, "build ok");
        assert_eq!(node(&s.turns[0]), ("5d2b7c10", Some("4c4c4c4c")), "a parent before the offset is kept as written");
        assert_eq!(stats.end_offset, bytes.len() as u64);
        assert_eq!(stats.prefix_hash, None, "the reader did not see the prefix");
        assert_eq!(stats.tail, head_stats.tail, "and hands the state on");
    }

    #[test]
    fn resume_after_a_torn_line_is_completed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("--src-notes--");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(PI_BASIC.rsplit('/').next().unwrap());
        let bytes = std::fs::read(fixture(PI_BASIC)).unwrap();
        std::fs::write(&path, &bytes).unwrap();
        let (first, stats) = parse_with(&PI, &SourceRef::file(&path), false);
        let end = stats.end_offset as usize;
        assert!(end < bytes.len(), "the torn line is left for later");
        let mut grown = bytes[..end].to_vec();
        grown.extend_from_slice(
            br#"{"type":"message","id":"e15","parentId":"e14","timestamp":"2026-04-02T10:01:00.000Z","message":{"role":"user","content":"torn no more"}}"#,
        );
        grown.push(b'\n');
        std::fs::write(&path, &grown).unwrap();
        let mut src = SourceRef::file(&path).append_only();
        let next_seq = first[0].turns.len() as u32;
        src.resume = Some(crate::model::Resume { offset: end as u64, next_seq, session_id: PI_ID.into(), ..Default::default() });
        let (sessions, _) = parse_with(&PI, &src, false);
        let t = &sessions[0].turns;
        assert_eq!(t.len(), 1);
        assert_eq!((t[0].seq, t[0].text.as_str()), (next_seq, "torn no more"));
        assert_eq!(sessions[0].id, PI_ID);
        assert_eq!(sessions[0].project.as_deref(), Some("src/notes"), "no state given: the directory, decoded");
    }

    #[test]
    fn decoded_events_parse_like_the_file() {
        let rel = "openclaw/agents/main/sessions/c0ffee00-1111-4222-8333-444455556666.jsonl";
        let from_file = one(&OPENCLAW, rel);
        let text = std::fs::read_to_string(fixture(rel)).unwrap();
        let mut events: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        events.push(Value::from(7));
        let mut with_cwd = events[0].clone();
        with_cwd["cwd"] = "/home/dev/src/app".into();
        events[0] = with_cwd;
        let src = SourceRef::file("/state/agents/main/agent/openclaw-agent.sqlite").keyed("c0ffee00-1111-4222-8333-444455556666");
        let mut out: Vec<Session> = Vec::new();
        let stats = parse_events(&OPENCLAW, &src, &ParseOptions::default(), events, &mut out);
        assert_eq!((stats.records, stats.skipped), (9, 1));
        assert_eq!(out[0].turns, from_file.turns);
        assert_eq!(out[0].id, from_file.id);
        assert_eq!(out[0].project.as_deref(), Some("/home/dev/src/app"));
    }

    #[test]
    fn the_head_says_whether_a_file_is_a_sub_agent() {
        let kimchi = "kimchi/--w-kimchi-demo--/";
        assert!(head_marks_subagent(&KIMCHI, &fixture(&format!("{kimchi}2026-10-01T09-05-00-000Z_k-02.jsonl"))), "the custom entry");
        assert!(!head_marks_subagent(&KIMCHI, &fixture(&format!("{kimchi}2026-10-01T09-10-00-000Z_k-03.jsonl"))), "a fork");
        let child = "prime/session-artifacts/0199aa00-0000-7000-8000-000000000001/sub-1/0199bb00-0000-7000-8000-000000000002.jsonl";
        assert!(head_marks_subagent(&PRIME, &fixture(child)), "rlmDepth 1");
        assert!(!head_marks_subagent(&PRIME, &fixture("prime/sessions/0199aa00-0000-7000-8000-000000000001.jsonl")));
        assert!(!head_marks_subagent(&PI, &fixture(child)), "pi has no depth field");
        assert!(!head_marks_subagent(&KIMCHI, &fixture("nowhere.jsonl")));
    }

    #[test]
    fn discovery_takes_transcripts_and_leaves_the_rest() {
        let count = |d: &PiDialect, rel: &str, subagents: bool| {
            let mut found = Discovery::default();
            discover_sessions(d, &fixture(rel), MAX_WALK_DEPTH, subagents, &mut found);
            assert!(found.sources.iter().all(|s| s.append_only));
            found.sources.len()
        };
        assert_eq!(count(&PI, "pi", true), 3);
        assert_eq!(count(&OPENCLAW, "openclaw/agents", true), 1, "checkpoint and sessions.json are not transcripts");
        assert_eq!(count(&OPENCLAW, "qclaw/agents", true), 0, "archived files only where the dialect keeps them");
        assert_eq!(count(&QCLAW, "qclaw/agents", true), 1);
        assert_eq!(count(&GJC, "gjc", true), 2);
        assert_eq!(count(&GJC, "gjc", false), 1, "sub-agent passes only when asked");
        assert_eq!(count(&PRIME, "prime", true), 2, "semantic-edges.jsonl is an event log");
        assert_eq!(count(&CLAWDBOT, "clawdbot/sessions", true), 1);
        let mut found = Discovery::default();
        discover_sessions(&PI, &fixture("nowhere"), MAX_WALK_DEPTH, true, &mut found);
        assert_eq!((found.sources.len(), found.roots.len(), found.roots[0].1), (0, 1, false));
    }

    #[test]
    fn file_name_helpers() {
        assert_eq!(id_from_stem("2026-04-02T10-00-00-000Z_6f1e"), "6f1e");
        assert_eq!(id_from_stem("g-01"), "g-01");
        assert_eq!(id_from_stem("my_session"), "my_session");
        assert_eq!(file_stem_id("a.jsonl.reset.2026-01-01T00-00-00.000Z"), "a");
        assert!(is_checkpoint_stem("c0ffee00.checkpoint.11111111-2222-4333-8444-555555555555"));
        assert!(!is_checkpoint_stem("c0ffee00.checkpoint.notauuid"));
        assert_eq!(project_from_encoded_dir("--deja-test-nowhere-my-app--").as_deref(), Some("my/app"));
        assert_eq!(project_from_encoded_dir("----"), None);
        assert_eq!(strip_gateway_prefix("[Wed 2026-02-18 11:21 GMT+1] hi"), "hi");
        assert_eq!(strip_gateway_prefix("[x] no digits"), "[x] no digits");
        assert_eq!(strip_footers("out\n\n\nWall time: 1 seconds", &["Wall time: "]), "out");
        assert_eq!(split_exit_marker("boom\nCommand exited with code 2", PI_EXIT), (Some(2), "boom"));
        // omp 18.2.3's hashline edit: `[PATH#TAG]`, a PUT op, `+` body rows.
        let (files, edit) = parse_hashline("[src/auth.rs#5816]\nPUT 1.=2:\n+fn refresh() { rotate(); }\n+");
        assert_eq!(files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>(), ["src/auth.rs"]);
        assert_eq!(edit.and_then(|e| e.new), Some("fn refresh() { rotate(); }\n".to_string()));
        assert_eq!(bracket_header("[a b.rs#12G4]"), None, "not a hex tag");
        // omp 18.2.3: the notice paragraph (wall time, then more notices) is one footer.
        let omp = "deja\n\n\nWall time: 0.39 seconds\nTimeout clamped to 3600s (requested 30000s; allowed range 1-3600s).";
        assert_eq!(strip_footers(omp, &["Wall time: "]), "deja");
        assert_eq!(strip_footers("Wall time: 0.01 seconds", &["Wall time: "]), "");
        assert_eq!(strip_footers("a\n\nb\nWall time: 1 s", &["Wall time: "]), "a\n\nb\nWall time: 1 s", "not a paragraph of its own");
        assert_eq!(strip_footers("a\nWall time: 1 s", &["Wall time: "]), "a");
        assert_eq!(split_exit_marker("Command exited with code x", PI_EXIT), (None, "Command exited with code x"));
    }

    fn fixture_files() -> Vec<PathBuf> {
        let mut files = find_files(&fixtures(), 8, &|n| n.contains(".jsonl"));
        files.sort();
        files
    }

    fn parse_all_dialects(path: &Path, resume: Option<crate::model::Resume>) {
        for d in ALL {
            let mut src = SourceRef::file(path).append_only();
            src.resume = resume.clone();
            for reasoning in [false, true] {
                let mut out: Vec<Session> = Vec::new();
                let stats = parse(d, &src, &ParseOptions { include_reasoning: reasoning }, &mut out).unwrap();
                assert!(stats.skipped <= stats.records + 64);
                for s in &out {
                    // A tail read returns the session it continues, with turns or not.
                    assert!(!s.turns.is_empty() || src.resume.as_ref().is_some_and(|r| r.session_id == s.id));
                }
            }
        }
    }

    /// Any JSON value, built from the keys and words this format uses, so that generated
    /// lines reach deep into the parser with fields missing or of the wrong type.
    fn format_shaped_value() -> impl Strategy<Value = Value> {
        const KEYS: &[&str] = &[
            "type",
            "id",
            "parentId",
            "timestamp",
            "message",
            "role",
            "content",
            "text",
            "thinking",
            "toolCallId",
            "toolName",
            "isError",
            "details",
            "exitCode",
            "exitSignal",
            "diffs",
            "toolCalls",
            "args",
            "arguments",
            "name",
            "command",
            "path",
            "oldText",
            "newText",
            "edits",
            "diff",
            "input",
            "summary",
            "title",
            "cwd",
            "parentSession",
            "rlmDepth",
            "customType",
            "stopReason",
            "output",
            "cancelled",
            "oldStr",
            "newStr",
        ];
        const WORDS: &[&str] = &[
            "session",
            "message",
            "user",
            "assistant",
            "toolResult",
            "bashExecution",
            "toolCall",
            "thinking",
            "text",
            "compaction",
            "branch_summary",
            "title",
            "session_info",
            "custom",
            "bash",
            "exec",
            "edit",
            "read",
            "write",
            "eval",
            "ipython",
            "e1",
            "e2",
            "c1",
            "aborted",
            "§a.rs\n≔1..2\nx",
            "*** Begin Patch\n*** Update File: a\n-x\n+y\n*** End Patch",
            "-1|old",
            "{\"text\":\"t\"}",
            "kimchi:subagent-session",
            "Command exited with code 3",
            "x\nWall time: 1 seconds",
            "[Mon 2026-01-01 10:00] hi",
        ];
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
            proptest::sample::select(WORDS).prop_map(Value::from),
            "\\PC{0,12}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::vec((proptest::sample::select(KEYS), inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
            ]
        })
    }

    /// A line with the envelope right and everything inside it arbitrary.
    fn format_shaped_line() -> impl Strategy<Value = Value> {
        const TYPES: &[&str] = &["session", "message", "compaction", "branch_summary", "title", "custom", "label"];
        const ROLES: &[&str] = &["user", "assistant", "toolResult", "bashExecution", "developer"];
        const IDS: &[&str] = &["e1", "e2", "e3", "c1"];
        let enveloped = (
            proptest::sample::select(TYPES),
            proptest::sample::select(IDS),
            proptest::sample::select(IDS),
            proptest::sample::select(ROLES),
            format_shaped_value(),
            format_shaped_value(),
        )
            .prop_map(|(kind, id, parent, role, content, details)| {
                serde_json::json!({"type": kind, "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:00Z", "summary": "s",
                    "message": {"role": role, "content": content, "toolCallId": "c1", "toolName": "bash", "details": details}})
            });
        prop_oneof![enveloped, format_shaped_value()]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..1024), offset in 0u64..1200) {
            let tmp = tempfile::tempdir().unwrap();
            let path = tmp.path().join("x.jsonl");
            std::fs::write(&path, &bytes).unwrap();
            parse_all_dialects(&path, None);
            parse_all_dialects(&path, Some(crate::model::Resume { offset, next_seq: 3, session_id: "s".into(), ..Default::default() }));
        }

        #[test]
        fn never_panics_on_format_shaped_lines(lines in proptest::collection::vec(format_shaped_line(), 0..24)) {
            let mut out: Vec<Session> = Vec::new();
            let src = SourceRef::file("/nowhere/agents/a/sessions/x.jsonl");
            for d in ALL {
                for reasoning in [false, true] {
                    parse_events(d, &src, &ParseOptions { include_reasoning: reasoning }, lines.clone(), &mut out);
                }
            }
            let tmp = tempfile::tempdir().unwrap();
            let path = tmp.path().join("f.jsonl");
            let text: String = lines.iter().map(|v| format!("{v}\n")).collect();
            std::fs::write(&path, text).unwrap();
            parse_all_dialects(&path, None);
        }

        #[test]
        fn never_panics_on_truncated_fixtures(pick in 0usize..64, cut in 0.0f64..1.0, resume_at in 0.0f64..1.0) {
            let files = fixture_files();
            let file = &files[pick % files.len()];
            let bytes = std::fs::read(file).unwrap();
            let cut = (bytes.len() as f64 * cut) as usize;
            let tmp = tempfile::tempdir().unwrap();
            let path = tmp.path().join("t.jsonl");
            std::fs::write(&path, &bytes[..cut]).unwrap();
            parse_all_dialects(&path, None);
            let offset = (cut as f64 * resume_at) as u64;
            parse_all_dialects(&path, Some(crate::model::Resume { offset, next_seq: 0, session_id: "s".into(), ..Default::default() }));
        }
    }
}

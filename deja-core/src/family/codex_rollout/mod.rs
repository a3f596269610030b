//! Codex rollouts: the JSONL format of Codex CLI, which TRAE CLI writes too. One rollout
//! file → one session; `history.jsonl` beside the rollouts → sessions for the prompts
//! of threads that have no rollout ([`history`]).
//!
//! Parsing runs in two passes. The first walks the lines and turns each record into an
//! [`Event`] (or into identity/project/time bookkeeping); the second replays the events
//! into a [`SessionBuilder`]. The split exists because whether the `event_msg` copies of
//! messages are used depends on the whole file (they are a fallback for files without
//! roled `response_item` messages), and because a `CommandExecution` may land before or
//! after the `function_call_output` it duplicates.
//!
//! Writers differ in where the conversation lives ([`Speech`], given to [`parse_with`]):
//! Codex's roled `response_item`s ([`Speech::Roled`], what [`parse`] reads), or the
//! prompt events and answer sources of a writer whose `response_item` user messages are
//! its own injections, with `history_mutation` records ([`Speech::Events`]):
//!
//! | record (under [`Speech::Events`]) | role | rule |
//! | --- | --- | --- |
//! | `response_item` message, role `user` (also inside `history_mutation`) | skip | runtime injections |
//! | `event_msg` `user_message`, `item_completed` `UserMessage` | `User` | two copies of one prompt (same text + turn id, or same text within 5 s when a side lacks a turn id) kept once |
//! | assistant messages / reasoning | `Assistant` / `Reasoning` | only the first source the file has: `response_item`, `history_mutation` append, `item_completed` `AgentMessage`, `agent_message` |
//! | `history_mutation` `operation: "append"` `items[]` | as `response_item`s | calls and results deduped with `response_item`s by `call_id` |
//! | `history_mutation` `operation: "replace"` | skip | re-sent history |
//!
//! A store may also hold zstd-compressed rollouts (`rollout-*.jsonl.zst`,
//! [`RolloutStore::with_compressed`]): read whole, never resumed.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::model::{Edit, ExitStatus, FileTouch, Role, SourceRef, TailState, Timestamp, ToolUse, Turn};
use crate::patch::parse_apply_patch;
use crate::read::for_each_source_line;
use crate::work::command_from_argv;
use crate::{FormatError, ParseOptions, ParseStats, Session, SessionBuilder, SessionSink};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::discover::find_files;
use crate::format::Discovery;
use crate::work::ToolMap;

pub mod history;

/// Where one harness keeps its rollouts: the live tree (`sessions/YYYY/MM/DD/`), the
/// archived ones (flat) and the prompt history, all found from the sessions root.
#[derive(Debug, Clone)]
pub struct RolloutStore {
    /// The sessions root (`~/.codex/sessions`): what `DEJA_<ID>_ROOT` names.
    pub sessions: PathBuf,
    /// `archived_sessions/` beside it.
    pub archived: PathBuf,
    /// `history.jsonl` beside it.
    pub history: PathBuf,
    /// Whether zstd-compressed rollouts (`rollout-*.jsonl.zst`) are read too. They are
    /// rewritten whole, so they are not append-only sources.
    pub compressed: bool,
    /// The side database naming each thread's title ([`CodexDialect::titles`]), beside
    /// the sessions root: a side part of every append-only rollout.
    pub titles: Option<PathBuf>,
}

impl RolloutStore {
    /// The store whose sessions root is `sessions`; archived rollouts and the history
    /// sit beside it, in its parent.
    pub fn at(sessions: PathBuf) -> RolloutStore {
        let home = sessions.parent().map(Path::to_path_buf).unwrap_or_default();
        RolloutStore {
            archived: home.join("archived_sessions"),
            history: home.join("history.jsonl"),
            sessions,
            compressed: false,
            titles: None,
        }
    }

    /// This store, with the side database `d` names titles in (beside the sessions
    /// root) made a part of every rollout.
    pub fn with_titles(mut self, d: &CodexDialect) -> RolloutStore {
        let home = self.sessions.parent().map(Path::to_path_buf).unwrap_or_default();
        self.titles = d.titles.map(|name| home.join(name));
        self
    }

    /// This store, with compressed rollouts (`rollout-*.jsonl.zst`) read too.
    pub fn with_compressed(mut self) -> RolloutStore {
        self.compressed = true;
        self
    }

    /// Rollouts (append-only) and the history file, each root looked at.
    pub fn discover(&self) -> Discovery {
        let mut d = Discovery::default();
        let mut files = Vec::new();
        for dir in [&self.sessions, &self.archived] {
            if d.looked_at(dir) {
                files.extend(walk_rollouts(dir));
                if self.compressed {
                    d.sources.extend(find_files(dir, 8, &is_compressed_rollout_name).into_iter().map(SourceRef::file));
                }
            }
        }
        // The titles database changes on every turn of every thread, so it is a side
        // part: a change to it alone is read as an empty tail, not a re-parse (0.18 s
        // for 2,000 rollouts in a debug build, against 1.35 s to re-parse them; the
        // database itself is read once per run).
        let side: Vec<PathBuf> = self.titles.iter().flat_map(|db| [db.clone(), crate::sqlite::wal_path(db)]).collect();
        d.sources.extend(files.into_iter().map(|p| side.iter().fold(SourceRef::file(p).append_only(), |s, part| s.with_side_part(part))));
        // history.jsonl is read whole: which of its sessions are emitted depends on the
        // rollouts beside it, so it names their directories as its parts.
        if std::fs::metadata(&self.history).is_ok_and(|m| m.is_file()) {
            d.sources.push(SourceRef::file(&self.history).with_part(&self.sessions).with_part(&self.archived));
        }
        Discovery::sort_sources(&mut d.sources);
        d
    }
}

/// Whether a file name is a rollout's.
fn is_rollout_name(name: &str) -> bool {
    name.contains("rollout-") && name.ends_with(".jsonl")
}

/// Whether a file name is a compressed rollout's (`rollout-*.jsonl.zst`).
fn is_compressed_rollout_name(name: &str) -> bool {
    name.strip_suffix(".zst").is_some_and(is_rollout_name)
}

/// Rollout files under one directory (`sessions/YYYY/MM/DD/`, or flat when archived).
fn walk_rollouts(dir: &Path) -> Vec<PathBuf> {
    find_files(dir, 8, &is_rollout_name)
}

/// Every rollout under these directories, sorted.
pub fn rollout_files(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = dirs.iter().flat_map(|d| walk_rollouts(d)).collect();
    out.sort();
    out
}

/// Every rollout under these directories, compressed ones included, sorted.
pub fn all_rollout_files(dirs: &[PathBuf]) -> Vec<PathBuf> {
    let keep = |n: &str| is_rollout_name(n) || is_compressed_rollout_name(n);
    let mut out: Vec<PathBuf> = dirs.iter().flat_map(|d| find_files(d, 8, &keep)).collect();
    out.sort();
    out
}

/// Parses a rollout, or the history file when `src` is one.
pub fn parse(d: &CodexDialect, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    parse_with(d, Speech::Roled, src, opts, out)
}

/// [`parse`] for a writer whose speech follows `speech`.
pub fn parse_with(
    d: &CodexDialect,
    speech: Speech,
    src: &SourceRef,
    opts: &ParseOptions,
    out: &mut dyn SessionSink,
) -> Result<ParseStats, FormatError> {
    if src.path.file_name().is_some_and(|n| n == "history.jsonl") {
        history::parse_history(d, src, out)
    } else {
        parse_rollout_with(d, speech, src, opts, out)
    }
}

/// Where a writer's conversation lives in its rollouts. Codex's [`Speech::Roled`] is
/// the default; the rest of the format (calls, results, exec folds, compaction) reads
/// the same either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Speech {
    /// Roled `response_item` messages are the conversation; the `event_msg` copies
    /// (`user_message`/`agent_message`, `item_completed` message items) are used only
    /// when the file has no roled message with speech in it.
    #[default]
    Roled,
    /// `response_item` user messages are the writer's runtime injections and never a
    /// prompt. A prompt is an `event_msg` `user_message` or an `item_completed`
    /// `UserMessage`; the two copies of one prompt are paired (same text and turn id,
    /// or same text within 5 s when a side lacks a turn id) and kept once, while the
    /// same words in a later turn are a new prompt. Answers (and reasoning) come from
    /// the first source the file has, in order: `response_item` messages,
    /// `history_mutation` appends, `item_completed` `AgentMessage` items,
    /// `agent_message` events. `history_mutation` records are read: `operation:
    /// "append"` items are response items (a call also written as a `response_item`
    /// is kept once, by `call_id`); `replace` re-sends history and is skipped. Because a
    /// tail can hold the second copy of a prompt read before the offset, the prompts
    /// still unpaired come back in the tail state (mark `prompts`), with the tier the
    /// answers and reasoning came from (marks `assistant_tier`, `reasoning_tier`); a call
    /// or result the tail repeats folds into the one indexed.
    Events,
}

/// The order in which a message's sources are preferred (lower first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Tier {
    /// `response_item` messages and reasoning, `compacted`.
    Record,
    /// Items of a `history_mutation` append.
    Mutation,
    /// `event_msg` `item_completed` message items.
    Item,
    /// `event_msg` `user_message` / `agent_message` / `agent_reasoning`.
    Event,
}

/// The turn id of a prompt event: on the payload, else on its item.
fn turn_id_of(p: &Value, item: Option<&Value>) -> Option<String> {
    let of = |v: &Value| v.get("turn_id").or_else(|| v.get("turnId")).and_then(id_string);
    of(p).or_else(|| item.and_then(of))
}

/// A head line longer than this is not decoded (`session_meta` carries the whole system
/// prompt, typically tens of KiB).
const HEAD_LINE_CAP: u64 = 8 << 20;
/// The unpaired prompts a tail state keeps (the two copies of one prompt are written
/// seconds apart, so the last few are all a tail can pair with).
const KEPT_PROMPTS: usize = 8;
/// The tail state's marks (see the module doc and [`Speech::Events`]).
const MARK_META: &str = "meta";
const MARK_ROLED: &str = "roled";
const MARK_CWD_FALLBACK: &str = "cwd_fallback";
const MARK_PROMPTS: &str = "prompts";
const MARK_ASSISTANT_TIER: &str = "assistant_tier";
const MARK_REASONING_TIER: &str = "reasoning_tier";

/// Parses one rollout. With `src.resume` set, only the tail past the offset is read; the
/// session id, the cwd and whether the file has roled messages come from the tail state
/// the read before returned.
pub fn parse_rollout(d: &CodexDialect, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    parse_rollout_with(d, Speech::Roled, src, opts, out)
}

/// [`parse_rollout`] for a writer whose speech follows `speech`.
pub fn parse_rollout_with(
    d: &CodexDialect,
    speech: Speech,
    src: &SourceRef,
    opts: &ParseOptions,
    out: &mut dyn SessionSink,
) -> Result<ParseStats, FormatError> {
    let mut stats = ParseStats::default();
    let mut r = Rollout::new(d, speech, src, opts);
    if let Some(resume) = src.resume.as_ref().filter(|r| !r.session_id.is_empty()) {
        r.b.set_id(resume.session_id.clone());
    }
    // The tail, or a new rollout in chunks (one can be hundreds of MB).
    for_each_source_line(src, &mut stats, &[], |_, v| r.line(&v))?;
    let title = thread_title(d, src, &r.b.session_mut().id);
    // A tail may bring nothing but the title (a thread named, or renamed, since).
    if let Some(s) = r.finish(title, &mut stats) {
        out.session(s);
    }
    Ok(stats)
}

/// The id a rollout starts with before `session_meta` decides: the file name minus
/// everything up to `rollout-` and the `.jsonl` suffix, narrowed to the trailing UUID
/// when there is one (Codex names files `rollout-<timestamp>-<thread id>.jsonl`).
pub fn filename_id(path: &Path) -> String {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let name = name.strip_suffix(".zst").unwrap_or(name);
    let stem = name.strip_suffix(".jsonl").unwrap_or(name);
    let stem = stem.find("rollout-").map_or(stem, |i| &stem[i + "rollout-".len()..]);
    match stem.len().checked_sub(36).and_then(|i| stem.get(i..)) {
        Some(tail) if is_uuid(tail) => tail.to_string(),
        _ => stem.to_string(),
    }
}

fn is_uuid(s: &str) -> bool {
    s.len() == 36 && s.bytes().enumerate().all(|(i, b)| if matches!(i, 8 | 13 | 18 | 23) { b == b'-' } else { b.is_ascii_hexdigit() })
}

/// The id `session_meta` gives, per the identity rule: a string `payload.id` wins when
/// non-empty; an absent `payload.id` (legacy rollouts) falls back to `payload.session_id`;
/// a present but non-string `payload.id` keeps the filename id. Never key on
/// `session_id` when `id` exists: it groups every forked thread.
pub fn meta_id(payload: &Value) -> Option<&str> {
    match payload.get("id") {
        Some(Value::String(id)) => Some(id.as_str()).filter(|s| !s.is_empty()),
        Some(_) => None,
        None => payload.get("session_id").and_then(Value::as_str).filter(|s| !s.is_empty()),
    }
}

/// Calls `f` with each decodable line of the first `max_lines` lines that end before
/// `limit`; stops when `f` returns false. Lines longer than [`HEAD_LINE_CAP`] end the
/// walk (nothing sensible follows a line we could not read whole).
pub fn read_head(path: &Path, limit: u64, max_lines: usize, mut f: impl FnMut(Value) -> bool) -> Result<(), FormatError> {
    let file = std::fs::File::open(path).map_err(|e| FormatError::io(path, e))?;
    let mut reader = BufReader::with_capacity(64 << 10, file);
    let mut pos = 0u64;
    let mut line = Vec::new();
    for _ in 0..max_lines {
        line.clear();
        let n = (&mut reader).take(HEAD_LINE_CAP).read_until(b'\n', &mut line).map_err(|e| FormatError::io(path, e))? as u64;
        if n == 0 || line.last() != Some(&b'\n') || pos + n > limit {
            break;
        }
        pos += n;
        let text = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&line).trim_ascii();
        if let Ok(v) = serde_json::from_slice::<Value>(text) {
            if !f(v) {
                break;
            }
        }
    }
    Ok(())
}

/// A record, reduced to what the replay needs.
enum Event {
    Message {
        role: Role,
        text: String,
        time: Option<Timestamp>,
        tier: Tier,
        /// The `turn_id` a prompt event carries, for pairing its two copies.
        turn_id: Option<String>,
    },
    Call {
        id: Option<String>,
        tool: ToolUse,
        files: Vec<FileTouch>,
        edits: Vec<Edit>,
        time: Option<Timestamp>,
    },
    Output {
        id: Option<String>,
        text: String,
        exit: Option<i64>,
        time: Option<Timestamp>,
    },
    /// `CommandExecution` / `exec_command_end`: the harness's own fold of a shell call.
    Exec {
        id: Option<String>,
        command: Option<String>,
        output: Option<String>,
        exit: Option<i64>,
        time: Option<Timestamp>,
    },
}

struct Rollout<'a> {
    d: &'a CodexDialect,
    opts: &'a ParseOptions,
    b: SessionBuilder,
    meta_seen: bool,
    cwd: Option<String>,
    /// From `turn_context` or a `CommandExecution`, used only without a `session_meta` cwd.
    cwd_fallback: Option<String>,
    /// A `response_item` carried a user/assistant message: the `event_msg` copies are
    /// then duplicates.
    has_roled: bool,
    events: Vec<Event>,
    speech: Speech,
    /// The tier messages read now belong to: [`Tier::Mutation`] inside a
    /// `history_mutation` record, else [`Tier::Record`].
    tier: Tier,
    /// What the read before this tail left (see the module doc).
    resumed: Option<&'a TailState>,
}

impl<'a> Rollout<'a> {
    fn new(d: &'a CodexDialect, speech: Speech, src: &'a SourceRef, opts: &'a ParseOptions) -> Self {
        // A tail goes on from what the read before left: identity, cwd, generation.
        let resumed = src.resume.as_ref().map(|r| &r.state);
        Rollout {
            d,
            opts,
            b: SessionBuilder::new(d.harness, filename_id(&src.path), src.clone()),
            meta_seen: resumed.is_some_and(|s| s.marked(MARK_META)),
            cwd: resumed.and_then(|s| s.cwd.clone()),
            cwd_fallback: resumed.and_then(|s| s.marks.get(MARK_CWD_FALLBACK).cloned()),
            has_roled: resumed.is_some_and(|s| s.marked(MARK_ROLED)),
            events: Vec::new(),
            speech,
            tier: Tier::Record,
            resumed,
        }
    }

    fn push(&mut self, ev: Event) {
        self.events.push(ev);
    }

    /// What a read of the tail after this one goes on from.
    fn tail_state(&self, prompts: &[Prompt], keep: &Keep) -> TailState {
        let mut state = TailState { cwd: self.cwd.clone(), ..TailState::default() };
        state.mark(MARK_META, self.meta_seen);
        state.mark(MARK_ROLED, self.has_roled);
        if let Some(cwd) = &self.cwd_fallback {
            state.marks.insert(MARK_CWD_FALLBACK.to_string(), cwd.clone());
        }
        if let Keep::Events { assistant, reasoning } = keep {
            for (mark, tier) in [(MARK_ASSISTANT_TIER, assistant), (MARK_REASONING_TIER, reasoning)] {
                if let Some(t) = tier.and_then(|t| serde_json::to_string(&t).ok()) {
                    state.marks.insert(mark.to_string(), t);
                }
            }
            let unpaired: Vec<&Prompt> = prompts.iter().filter(|p| !p.paired).collect();
            let kept = &unpaired[unpaired.len().saturating_sub(KEPT_PROMPTS)..];
            if let Ok(json) = serde_json::to_string(kept) {
                state.marks.insert(MARK_PROMPTS.to_string(), json);
            }
        }
        state
    }

    fn line(&mut self, v: &Value) {
        let time = v.get("timestamp").and_then(Timestamp::from_json);
        self.b.touch(time);
        let Some(p) = v.get("payload").filter(|p| p.is_object()) else { return };
        match v.get("type").and_then(Value::as_str).unwrap_or("") {
            "session_meta" => self.session_meta(p),
            "turn_context" => self.turn_context(p),
            "response_item" => self.response_item(p, time),
            "event_msg" => self.event_msg(p, time),
            "compacted" => self.compacted(p, time),
            "history_mutation" if self.speech == Speech::Events => self.history_mutation(p, time),
            // world_state, token_usage_record and unknown kinds are harness state.
            _ => {}
        }
    }

    /// The first `session_meta` decides: a forked rollout replays its parent's history,
    /// parent `session_meta` included, and that must not rename the fork.
    fn session_meta(&mut self, p: &Value) {
        if std::mem::replace(&mut self.meta_seen, true) {
            return;
        }
        if let Some(id) = meta_id(p) {
            self.b.set_id(id);
        }
        if let Some(cwd) = p.get("cwd").and_then(Value::as_str).filter(|s| !s.is_empty()) {
            self.cwd = Some(cwd.to_string());
        }
    }

    fn turn_context(&mut self, p: &Value) {
        if self.cwd_fallback.is_none() {
            self.cwd_fallback = p.get("cwd").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
        }
    }

    fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref().or(self.cwd_fallback.as_deref())
    }

    fn response_item(&mut self, p: &Value, time: Option<Timestamp>) {
        match str_of(p, "type") {
            "function_call" => self.function_call(p, time),
            "custom_tool_call" => self.custom_tool_call(p, time),
            "local_shell_call" => self.local_shell_call(p, time),
            "function_call_output" | "custom_tool_call_output" => self.tool_output(p, time),
            "reasoning" => self.reasoning(p, time),
            _ => self.message(p, time),
        }
    }

    /// A roled message (`type: "message"`, or the older `payload.message` shape).
    fn message(&mut self, p: &Value, time: Option<Timestamp>) {
        let Some((role, text)) = roled_message(p) else { return };
        if role == Role::User && self.speech == Speech::Events {
            // The writer's runtime injections (environment context, process-limit
            // notices); the prompt is the `user_message` event.
            return;
        }
        // Only speech that survives the provenance filter makes the event_msg copies
        // redundant: an interrupted 0.171 run may hold nothing roled but the harness
        // preamble, and then its `UserMessage` item is the prompt.
        if !text.trim().is_empty() {
            self.has_roled = true;
        }
        self.push(Event::Message { role, text, time, tier: self.tier, turn_id: None });
    }

    fn function_call(&mut self, p: &Value, time: Option<Timestamp>) {
        let name = str_of(p, "name");
        let args = arguments(p.get("arguments"));
        let mut call = Call::named(if name.is_empty() { "function_call" } else { name });
        if name == "apply_patch" {
            if let Some(patch) = args.get("input").and_then(Value::as_str).or(args.as_str()) {
                call.patch(patch, self.cwd());
            }
        } else if self.d.tools.kind(name) == crate::work::ToolKind::Shell {
            call.shell(args.get("cmd").or_else(|| args.get("command")), self.cwd());
        }
        self.push_call(call_id(p), call, time);
    }

    fn custom_tool_call(&mut self, p: &Value, time: Option<Timestamp>) {
        let name = str_of(p, "name");
        let mut call = Call::named(if name.is_empty() { "custom_tool_call" } else { name });
        if name == "apply_patch" {
            if let Some(patch) = p.get("input").and_then(Value::as_str) {
                call.patch(patch, self.cwd());
            }
        }
        self.push_call(call_id(p), call, time);
    }

    /// The shell tool of older releases: `action.command` is an argv.
    fn local_shell_call(&mut self, p: &Value, time: Option<Timestamp>) {
        let mut call = Call::named("local_shell");
        call.shell(p.get("action").and_then(|a| a.get("command")), self.cwd());
        let id = call_id(p).or_else(|| p.get("id").and_then(id_string));
        self.push_call(id, call, time);
    }

    fn push_call(&mut self, id: Option<String>, call: Call, time: Option<Timestamp>) {
        self.push(Event::Call { id, tool: call.tool, files: call.files, edits: call.edits, time });
    }

    fn tool_output(&mut self, p: &Value, time: Option<Timestamp>) {
        let (raw, json_exit) = output_text(p.get("output"));
        let (text, framed_exit) = unframe(&raw);
        let exit = json_exit.or(framed_exit);
        // Leading spaces can be alignment (`git diff --stat`); only blank lines go.
        let text = text.trim_start_matches(['\r', '\n']).trim_end().to_string();
        self.push(Event::Output { id: call_id(p), text, exit, time });
    }

    fn reasoning(&mut self, p: &Value, time: Option<Timestamp>) {
        if !self.opts.include_reasoning {
            return;
        }
        // Raw reasoning content when the model exposed it, else the summary.
        let mut text = item_texts(p.get("content"));
        if text.is_empty() {
            text = item_texts(p.get("summary"));
        }
        self.push(Event::Message { role: Role::Reasoning, text, time, tier: self.tier, turn_id: None });
    }

    fn event_msg(&mut self, p: &Value, time: Option<Timestamp>) {
        match str_of(p, "type") {
            "user_message" => self.user_message_event(p, time),
            "agent_message" => self.fallback(Role::Assistant, str_of(p, "message").to_string(), time, Tier::Event, None),
            "agent_reasoning" if self.opts.include_reasoning => {
                self.fallback(Role::Reasoning, str_of(p, "text").to_string(), time, Tier::Event, None)
            }
            "item_completed" => self.item_completed(p, time),
            "exec_command_end" => self.exec_command_end(p, time),
            // task_started, task_complete, token_count, thread_settings_applied, …
            _ => {}
        }
    }

    /// Older releases tag the harness's own user-role messages with a `kind`.
    fn user_message_event(&mut self, p: &Value, time: Option<Timestamp>) {
        if matches!(p.get("kind").and_then(Value::as_str), Some(k) if k != "plain") {
            return;
        }
        self.fallback(Role::User, str_of(p, "message").to_string(), time, Tier::Event, turn_id_of(p, None));
    }

    fn fallback(&mut self, role: Role, text: String, time: Option<Timestamp>, tier: Tier, turn_id: Option<String>) {
        self.push(Event::Message { role, text, time, tier, turn_id });
    }

    /// Codex 0.171 `item_completed`: message items repeat `response_item`s; a
    /// `CommandExecution` is the harness's fold of a shell call.
    fn item_completed(&mut self, p: &Value, time: Option<Timestamp>) {
        let Some(item) = p.get("item").filter(|i| i.is_object()) else { return };
        match str_of(item, "type") {
            "UserMessage" => self.fallback(Role::User, item_message_text(item), time, Tier::Item, turn_id_of(p, Some(item))),
            "AgentMessage" => self.fallback(Role::Assistant, item_message_text(item), time, Tier::Item, None),
            "CommandExecution" => self.command_execution(item, time),
            _ => {}
        }
    }

    fn command_execution(&mut self, item: &Value, time: Option<Timestamp>) {
        if self.cwd_fallback.is_none() {
            self.cwd_fallback = item.get("cwd").and_then(Value::as_str).map(decode_file_uri).filter(|s| !s.is_empty());
        }
        self.push(Event::Exec {
            id: item.get("id").and_then(id_string),
            command: item.get("command").and_then(command_of),
            output: item.get("aggregated_output").and_then(Value::as_str).map(str::to_string),
            exit: item.get("exit_code").and_then(Value::as_i64),
            time,
        });
    }

    /// The event older releases write when a shell command finishes.
    fn exec_command_end(&mut self, p: &Value, time: Option<Timestamp>) {
        let output = match p.get("aggregated_output").and_then(Value::as_str) {
            Some(o) => Some(o.to_string()),
            None => {
                let joined =
                    [str_of(p, "stdout"), str_of(p, "stderr")].into_iter().map(str::trim_end).filter(|s| !s.is_empty()).collect::<Vec<_>>();
                (!joined.is_empty()).then(|| joined.join("\n"))
            }
        };
        self.push(Event::Exec {
            id: call_id(p),
            command: p.get("command").and_then(command_of),
            output,
            exit: p.get("exit_code").and_then(Value::as_i64),
            time,
        });
    }

    /// `operation: "append"` adds response items (calls, results, assistant messages) the
    /// file may also hold as `response_item`s; `replace` re-sends history already read.
    fn history_mutation(&mut self, p: &Value, time: Option<Timestamp>) {
        if str_of(p, "operation") != "append" {
            return;
        }
        let items: Vec<&Value> = match (p.get("items"), p.get("item")) {
            (Some(Value::Array(items)), _) => items.iter().collect(),
            (_, Some(item)) => vec![item],
            _ => return,
        };
        self.tier = Tier::Mutation;
        for item in items {
            // An item may come wrapped as a whole `{type: "response_item", payload}` line.
            let item = match item.get("payload") {
                Some(inner) if inner.is_object() && str_of(item, "type") == "response_item" => inner,
                _ => item,
            };
            if item.is_object() {
                self.response_item(item, time);
            }
        }
        self.tier = Tier::Record;
    }

    fn compacted(&mut self, p: &Value, time: Option<Timestamp>) {
        let text = str_of(p, "message").to_string();
        self.push(Event::Message { role: Role::Summary, text, time, tier: Tier::Record, turn_id: None });
    }

    /// Second pass: replays the events into turns, folding calls with their results.
    /// The session, titled `title` when the dialect's side database names one (a tail
    /// that brought only that title yields the session with no turns: a rename); the
    /// state a tail after it goes on from goes into `stats`.
    fn finish(mut self, title: Option<String>, stats: &mut ParseStats) -> Option<Session> {
        if let Some(cwd) = self.cwd().map(str::to_string) {
            self.b.session_mut().project = Some(cwd);
        }
        if title.is_some() {
            self.b.session_mut().title = title;
        }
        let keep = Keep::of(self.speech, self.has_roled, &self.events, self.resumed);
        let prompts = self.resumed.and_then(|s| serde_json::from_str(s.marks.get(MARK_PROMPTS)?).ok()).unwrap_or_default();
        let events = std::mem::take(&mut self.events);
        let mut replay = Replay { b: self.b, filled: HashSet::new(), prompts };
        for ev in events {
            match ev {
                Event::Message { role, text, time, tier, turn_id } => {
                    if !keep.keeps(role, tier) {
                        continue;
                    }
                    if role == Role::User && self.speech == Speech::Events {
                        replay.prompt(text, time, tier, turn_id);
                    } else {
                        replay.b.push(Turn::new(role, text).at(time));
                    }
                }
                Event::Call { id, tool, files, edits, time } => replay.call(id, tool, files, edits, time),
                Event::Output { id, text, exit, time } => replay.output(id, text, exit, time),
                Event::Exec { id, command, output, exit, time } => replay.exec(id, command, output, exit, time),
            }
        }
        let Replay { b, prompts, .. } = replay;
        self.b = b;
        stats.tail = Some(self.tail_state(&prompts, &keep));
        self.b.finish()
    }
}

/// Which message events become turns.
enum Keep {
    /// [`Speech::Roled`]: the `event_msg` copies only in a file without roled messages.
    Roled { use_fallback: bool },
    /// [`Speech::Events`]: per role, only the first tier the file has speech in.
    Events { assistant: Option<Tier>, reasoning: Option<Tier> },
}

impl Keep {
    /// A tail weighs the tiers the read before found (`resumed`) with its own.
    fn of(speech: Speech, has_roled: bool, events: &[Event], resumed: Option<&TailState>) -> Keep {
        if speech == Speech::Roled {
            return Keep::Roled { use_fallback: !has_roled };
        }
        let best = |want: Role, mark: &str| {
            let before: Option<Tier> = resumed.and_then(|s| serde_json::from_str(s.marks.get(mark)?).ok());
            events
                .iter()
                .filter_map(|ev| match ev {
                    Event::Message { role, text, tier, .. } if *role == want && !text.trim().is_empty() => Some(*tier),
                    _ => None,
                })
                .chain(before)
                .min()
        };
        Keep::Events { assistant: best(Role::Assistant, MARK_ASSISTANT_TIER), reasoning: best(Role::Reasoning, MARK_REASONING_TIER) }
    }

    fn keeps(&self, role: Role, tier: Tier) -> bool {
        match self {
            Keep::Roled { use_fallback } => tier == Tier::Record || *use_fallback,
            Keep::Events { assistant, reasoning } => match role {
                Role::Assistant => Some(tier) == *assistant,
                Role::Reasoning => Some(tier) == *reasoning,
                _ => true,
            },
        }
    }
}

/// A prompt already replayed, for pairing its second copy.
#[derive(Serialize, Deserialize)]
struct Prompt {
    text: String,
    turn_id: Option<String>,
    time: Option<Timestamp>,
    tier: Tier,
    paired: bool,
}

/// Two copies of one prompt (`user_message` and the `UserMessage` item) are at most
/// this far apart when one of them lacks a turn id.
const PROMPT_PAIR_WINDOW_MS: i64 = 5_000;

impl Prompt {
    /// Whether a prompt from the other source, with this text, is this prompt's copy:
    /// the same turn id, or, when a side lacks one, times within the window.
    fn pairs_with(&self, text: &str, turn_id: Option<&str>, time: Option<Timestamp>, tier: Tier) -> bool {
        if self.paired || self.tier == tier || self.text != text {
            return false;
        }
        match (self.turn_id.as_deref(), turn_id) {
            (Some(a), Some(b)) => a == b,
            _ => match (self.time, time) {
                (Some(a), Some(b)) => (a.millis() - b.millis()).abs() <= PROMPT_PAIR_WINDOW_MS,
                _ => false,
            },
        }
    }
}

struct Replay {
    b: SessionBuilder,
    /// Calls whose output text is already in: a second copy of it is not appended.
    filled: HashSet<String>,
    /// Prompts replayed so far ([`Speech::Events`]); in a tail, first the ones the read
    /// before left unpaired.
    prompts: Vec<Prompt>,
}

impl Replay {
    fn existing<'a>(&mut self, id: &'a Option<String>) -> Option<&'a str> {
        let id = id.as_deref()?;
        self.b.call_mut(id).is_some().then_some(id)
    }

    /// A prompt event under [`Speech::Events`]: the second copy of a prompt is dropped.
    fn prompt(&mut self, text: String, time: Option<Timestamp>, tier: Tier, turn_id: Option<String>) {
        let key = text.trim();
        if key.is_empty() {
            return;
        }
        if let Some(p) = self.prompts.iter_mut().find(|p| p.pairs_with(key, turn_id.as_deref(), time, tier)) {
            p.paired = true;
            return;
        }
        self.prompts.push(Prompt { text: key.to_string(), turn_id, time, tier, paired: false });
        self.b.push(Turn::new(Role::User, text).at(time));
    }

    /// A call; one the tail repeats from before its start (a `history_mutation` copy of
    /// a `response_item`) is made again and folds into the one indexed.
    fn call(&mut self, id: Option<String>, tool: ToolUse, files: Vec<FileTouch>, mut edits: Vec<Edit>, time: Option<Timestamp>) {
        // A CommandExecution that arrived first already made the turn; complete it.
        if let Some(existing) = self.existing(&id) {
            if let Some(turn) = self.b.call_mut(existing) {
                let t = turn.tool.get_or_insert_with(ToolUse::default);
                if t.command.is_none() {
                    t.command = tool.command;
                }
                t.name = tool.name;
            }
            return;
        }
        let rest = if edits.len() > 1 { edits.split_off(1) } else { Vec::new() };
        let name = tool.name.clone();
        let mut turn = Turn::new(Role::ToolCall, "").at(time);
        turn.tool = Some(tool);
        turn.files = files;
        turn.edit = edits.pop();
        self.b.push_call(id.as_deref(), turn);
        // A turn holds one edit; a patch touching several files gives one turn per
        // further replaced span.
        for edit in rest {
            let mut turn = Turn::new(Role::ToolCall, "").at(time);
            turn.tool = Some(ToolUse { name: name.clone(), ..ToolUse::default() });
            turn.edit = Some(edit);
            self.b.push(turn);
        }
    }

    fn output(&mut self, id: Option<String>, text: String, exit: Option<i64>, time: Option<Timestamp>) {
        let Some(existing) = self.existing(&id) else {
            let mut turn = Turn::new(Role::ToolOutput, text).at(time);
            // The call may have been read by an earlier incremental pass: keep the id so
            // the indexer can fold this result into it.
            if exit.is_some() || id.is_some() {
                turn.tool = Some(ToolUse {
                    exit: exit.map(ExitStatus::Code),
                    is_error: exit.is_some_and(|c| c != 0),
                    call_id: id,
                    ..ToolUse::default()
                });
            }
            self.b.push(turn);
            return;
        };
        if self.filled.contains(existing) {
            self.b.touch(time);
            self.fill_exit(existing, exit);
            return;
        }
        self.b.complete_call(existing, &text, false, exit.map(ExitStatus::Code), time);
        if !text.is_empty() {
            self.filled.insert(existing.to_string());
        }
    }

    fn exec(&mut self, id: Option<String>, command: Option<String>, output: Option<String>, exit: Option<i64>, time: Option<Timestamp>) {
        let output = output.as_deref().map(|o| o.trim_start_matches(['\r', '\n']).trim_end()).unwrap_or("");
        let Some(existing) = self.existing(&id) else {
            let mut turn = Turn::new(Role::ToolCall, output).at(time);
            let exit = exit.map(ExitStatus::Code);
            let is_error = exit.as_ref().is_some_and(|e| !e.succeeded());
            turn.tool = Some(ToolUse { name: "exec_command".to_string(), command, exit, is_error, call_id: None });
            self.b.push_call(id.as_deref(), turn);
            if let Some(id) = id.filter(|_| !output.is_empty()) {
                self.filled.insert(id);
            }
            return;
        };
        self.fill_exit(existing, exit);
        if let Some(turn) = self.b.call_mut(existing) {
            let t = turn.tool.get_or_insert_with(ToolUse::default);
            if t.command.is_none() {
                t.command = command;
            }
        }
        if self.filled.contains(existing) || output.is_empty() {
            self.b.touch(time);
        } else {
            self.b.complete_call(existing, output, false, None, time);
            self.filled.insert(existing.to_string());
        }
    }

    /// Sets the exit status of a call that has none yet.
    fn fill_exit(&mut self, id: &str, exit: Option<i64>) {
        let (Some(code), Some(turn)) = (exit, self.b.call_mut(id)) else { return };
        let t = turn.tool.get_or_insert_with(ToolUse::default);
        if t.exit.is_none() {
            t.exit = Some(ExitStatus::Code(code));
            t.is_error |= code != 0;
        }
    }
}

/// A call record being assembled.
struct Call {
    tool: ToolUse,
    files: Vec<FileTouch>,
    edits: Vec<Edit>,
}

impl Call {
    fn named(name: &str) -> Self {
        Call { tool: ToolUse { name: name.to_string(), ..ToolUse::default() }, files: Vec::new(), edits: Vec::new() }
    }

    fn patch(&mut self, patch: &str, cwd: Option<&str>) {
        let (files, edits) = parse_apply_patch(patch, cwd);
        self.files = files;
        self.edits = edits;
    }

    /// The command line of a shell call. Codex also runs `apply_patch` through the shell
    /// tool, as the argv `["apply_patch", "<patch>"]` or as a heredoc script
    /// `apply_patch <<'EOF' … EOF`; that is an edit, not a command.
    fn shell(&mut self, cmd: Option<&Value>, cwd: Option<&str>) {
        if let Some(Value::Array(argv)) = cmd {
            if let [Value::String(tool), Value::String(patch)] = argv.as_slice() {
                if tool == "apply_patch" || tool == "applypatch" {
                    self.as_patch(patch, cwd);
                    return;
                }
            }
        }
        let command = cmd.and_then(command_of);
        if let Some(script) = &command {
            if script.starts_with("apply_patch") || script.starts_with("applypatch") {
                if let Some(at) = script.find("*** Begin Patch") {
                    self.as_patch(&script[at..], cwd);
                    return;
                }
            }
        }
        self.tool.command = command;
    }

    fn as_patch(&mut self, patch: &str, cwd: Option<&str>) {
        self.tool.name = "apply_patch".to_string();
        self.patch(patch, cwd);
    }
}

/// Codex's shell tools (`apply_patch` edits are read from the patch envelope).
pub const CODEX_TOOLS: ToolMap =
    ToolMap { shell: &["exec_command", "shell", "shell_command", "container.exec", "local_shell"], read: &[], edit: &[], write: &[] };

/// What one harness writing Codex rollouts changes.
#[derive(Debug)]
pub struct CodexDialect {
    /// The adapter id sessions are filed under.
    pub harness: &'static str,
    /// Which function-call names run shell commands.
    pub tools: ToolMap,
    /// A side database beside the sessions root whose `threads` table names each
    /// thread's title (`id`, `title`): Codex 0.171's `state_5.sqlite`. A non-empty title
    /// there is the session's title ([`RolloutStore::with_titles`] makes it a part of
    /// every rollout; the parser finds it among the source's parts by this name).
    pub titles: Option<&'static str>,
}

/// The title the dialect's side database gives thread `id`, when `src` has that database
/// as a part and it names a non-empty one. The database is read once per change of it
/// (`sqlite::memoized`), not once per rollout; one that cannot be read names nothing.
fn thread_title(d: &CodexDialect, src: &SourceRef, id: &str) -> Option<String> {
    let name = d.titles?;
    let db = src.parts.iter().find(|p| p.file_name().is_some_and(|n| n == name))?;
    if !std::fs::metadata(db).is_ok_and(|m| m.is_file() && m.len() > 0) {
        return None;
    }
    let titles = crate::sqlite::memoized(db, "SELECT id, title FROM threads", |conn| {
        let mut stmt = conn.prepare("SELECT id, title FROM threads")?;
        // A value that does not decode names nothing; the other rows still do.
        let text = |r: &rusqlite::Row<'_>, i: usize| r.get_ref(i).ok().and_then(|v| crate::sqlite::value_text(v).ok().flatten());
        let rows = stmt.query_map([], |r| Ok((text(r, 0), text(r, 1))))?;
        let mut out = std::collections::HashMap::new();
        for (id, title) in rows.flatten() {
            if let (Some(id), Some(title)) = (id, title) {
                let title = title.trim();
                if !title.is_empty() {
                    out.insert(id, title.to_string());
                }
            }
        }
        Ok(out)
    })
    .ok()?;
    titles.get(id).cloned()
}

/// A command given as a string or as an argv (`["/bin/bash", "-lc", "cargo test"]`).
fn command_of(v: &Value) -> Option<String> {
    let cmd = match v {
        Value::String(s) => s.trim().to_string(),
        Value::Array(items) => {
            let argv: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
            if argv.is_empty() {
                return None;
            }
            command_from_argv(&argv).trim().to_string()
        }
        _ => return None,
    };
    (!cmd.is_empty()).then_some(cmd)
}

/// `arguments` is a JSON-encoded string; some writers put the object itself. A string
/// that is not JSON is kept as a string (apply_patch takes its patch that way).
fn arguments(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(s)) => {
            serde_json::from_str::<Value>(s).ok().filter(Value::is_object).unwrap_or_else(|| Value::String(s.clone()))
        }
        Some(v) => v.clone(),
        None => Value::Null,
    }
}

/// `call_id` as a string. Numbers are tolerated (stringified) so a numeric call id still
/// pairs with its numeric result; anything else counts as missing.
fn call_id(p: &Value) -> Option<String> {
    p.get("call_id").and_then(id_string)
}

fn id_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn str_of<'v>(v: &'v Value, key: &str) -> &'v str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The role and text of a `response_item` message; `None` for harness roles
/// (`developer`, `system`) and records that are not messages.
fn roled_message(p: &Value) -> Option<(Role, String)> {
    let role = match str_of(p, "role") {
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "" => match p.get("message") {
            Some(Value::String(_)) if str_of(p, "type") == "agent_message" => Role::Assistant,
            Some(Value::String(_)) => Role::User,
            _ => return None,
        },
        _ => return None,
    };
    let mut text = content_text(p, role == Role::User);
    if text.is_empty() && !has_content_items(p) {
        if let Some(m) = p.get("message").and_then(Value::as_str) {
            text = m.to_string();
        }
    }
    Some((role, text))
}

fn has_content_items(p: &Value) -> bool {
    match p.get("content") {
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(items)) => !items.is_empty(),
        _ => false,
    }
}

/// The text of a message's content: a string, or the items' `text` joined by newlines.
/// For user messages, items whose provenance is the harness (or a skill) are left out.
fn content_text(p: &Value, filter_provenance: bool) -> String {
    let items = match p.get("content") {
        Some(Value::String(s)) => {
            return match provenance(p, 1) {
                Provenance::Drop if filter_provenance => String::new(),
                _ => s.clone(),
            };
        }
        Some(Value::Array(items)) => items,
        _ => return String::new(),
    };
    let verdict = if filter_provenance { provenance(p, items.len()) } else { Provenance::KeepAll };
    let mut parts: Vec<&str> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let keep = match &verdict {
            Provenance::KeepAll => true,
            Provenance::Drop => false,
            Provenance::PerItem(keep) => keep.get(i).copied().unwrap_or(true),
        };
        if let Some(t) = item.get("text").and_then(Value::as_str).filter(|_| keep) {
            parts.push(t);
        }
    }
    parts.join("\n")
}

enum Provenance {
    KeepAll,
    Drop,
    PerItem(Vec<bool>),
}

/// Which content items a person typed, from Codex 0.171's
/// `internal_chat_message_metadata_passthrough`: `content_item_metadata[].provenance.type`
/// (`user`, `harness`, `skills`), else `content_item_kinds[]` (`user.text` vs
/// `environments.environment_context`…). When the lists line up with the content items
/// they decide per item; otherwise the message is dropped only if nothing in it is the
/// user's.
fn provenance(p: &Value, n_items: usize) -> Provenance {
    let Some(meta) = p.get("internal_chat_message_metadata_passthrough") else { return Provenance::KeepAll };
    let list = |key: &str| meta.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let provs = list("content_item_metadata");
    let kinds = list("content_item_kinds");
    // Some(true) = typed by the user, Some(false) = injected, None = unknown.
    let verdict = |i: usize| -> Option<bool> {
        let prov = provs.get(i).and_then(|m| m.get("provenance")).and_then(|p| p.get("type")).and_then(Value::as_str);
        match prov {
            Some(t) => Some(t == "user"),
            None => kinds.get(i).and_then(Value::as_str).map(|k| k == "user" || k.starts_with("user.")),
        }
    };
    let len = provs.len().max(kinds.len());
    if len == 0 {
        return Provenance::KeepAll;
    }
    if len == n_items {
        return Provenance::PerItem((0..len).map(|i| verdict(i) != Some(false)).collect());
    }
    let verdicts: Vec<Option<bool>> = (0..len).map(verdict).collect();
    if verdicts.contains(&Some(true)) || verdicts.iter().all(Option::is_none) {
        Provenance::KeepAll
    } else {
        Provenance::Drop
    }
}

/// Texts of `[{type, text}]` items joined by newlines.
fn item_texts(v: Option<&Value>) -> String {
    match v {
        Some(Value::Array(items)) => {
            items.iter().filter_map(|i| i.get("text").and_then(Value::as_str)).filter(|t| !t.is_empty()).collect::<Vec<_>>().join("\n")
        }
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    }
}

/// An `item_completed` message item: `content: [{type: "text"|"Text", text}]`, or `text`.
fn item_message_text(item: &Value) -> String {
    let text = item_texts(item.get("content"));
    if text.is_empty() {
        str_of(item, "text").to_string()
    } else {
        text
    }
}

/// A tool result's text, and the exit code when the result is the older JSON-encoded
/// `{"output": "...", "metadata": {"exit_code": N}}` or content items.
fn output_text(v: Option<&Value>) -> (String, Option<i64>) {
    match v {
        Some(Value::String(s)) => {
            if s.starts_with('{') {
                if let Ok(obj @ Value::Object(_)) = serde_json::from_str::<Value>(s) {
                    if let Some(out) = obj.get("output").and_then(Value::as_str) {
                        return (out.to_string(), exit_in_metadata(&obj));
                    }
                }
            }
            (s.clone(), None)
        }
        Some(obj @ Value::Object(_)) => {
            let text = match obj.get("output").or_else(|| obj.get("content")) {
                Some(Value::String(s)) => s.clone(),
                Some(items @ Value::Array(_)) => item_texts(Some(items)),
                _ => String::new(),
            };
            (text, exit_in_metadata(obj))
        }
        Some(items @ Value::Array(_)) => (item_texts(Some(items)), None),
        _ => (String::new(), None),
    }
}

fn exit_in_metadata(obj: &Value) -> Option<i64> {
    obj.get("metadata").and_then(|m| m.get("exit_code")).and_then(Value::as_i64)
}

/// Strips the framing lines Codex puts before a tool's output (`Chunk ID:`, `Wall
/// time:`, `Process exited with code N`, `Exit code: N`, `Original token count:`, `Total
/// output lines:`, ending with `Output:`) and returns the rest with the exit code they
/// named. Only a leading block of such lines counts, so output that merely mentions
/// "Exit code: 3" further down is left alone.
///
/// Codex 0.171 runs a shell-invoked `apply_patch` (`exec_command` with `apply_patch <<'EOF'`)
/// and wraps its framed result (`Exit code: 0`, `Wall time:`, `Output:`) in the shell
/// tool's own frame (`Wall time:`, `Output:`): a second complete frame right after the
/// first is unwrapped too (once, so no input can recurse deeply), and its exit code wins.
pub fn unframe(s: &str) -> (&str, Option<i64>) {
    let (rest, exit, closed) = unframe_once(s);
    if !closed {
        return (rest, exit);
    }
    match unframe_once(rest) {
        (inner, inner_exit, true) => (inner, inner_exit.or(exit)),
        _ => (rest, exit),
    }
}

/// The framing lines that state the exit (older and newer releases).
const EXIT_LINES: [crate::exit::ExitLine; 2] =
    [crate::exit::ExitLine::first("Process exited with code "), crate::exit::ExitLine::first("Exit code: ")];

/// One leading frame: the rest, its exit code, and whether it ended with `Output:`.
fn unframe_once(s: &str) -> (&str, Option<i64>, bool) {
    let mut rest = s;
    let mut exit = None;
    let mut framed = false;
    while !rest.is_empty() {
        let (line, after) = match rest.find('\n') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        let line = line.trim_end_matches('\r');
        if line == "Output:" {
            return (after, exit, true);
        }
        if let Some(code) = EXIT_LINES.iter().find_map(|e| e.read(line)) {
            exit = code.or(exit);
        } else if !["Chunk ID:", "Wall time:", "Original token count:", "Total output lines:", "Process running with session ID"]
            .iter()
            .any(|p| line.starts_with(p))
        {
            break;
        }
        framed = true;
        rest = after;
    }
    if framed {
        (rest, exit, false)
    } else {
        (s, None, false)
    }
}

/// `file:///src/app` → `/src/app` (percent-decoded; `file:///C:/x` → `C:/x`). A value
/// that is not a `file:` URI is returned as it is.
pub fn decode_file_uri(uri: &str) -> String {
    let Some(rest) = uri.strip_prefix("file://") else { return uri.to_string() };
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    let decoded = String::from_utf8_lossy(&out).into_owned();
    // `/C:/x`: a Windows drive after the URI's root slash.
    match decoded.as_bytes() {
        [b'/', d, b':', ..] if d.is_ascii_alphabetic() => decoded[1..].to_string(),
        _ => decoded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unframe_reads_exit_and_strips_framing() {
        let (t, e) =
            unframe("Chunk ID: 1\nWall time: 5.9 seconds\nProcess exited with code 1\nOriginal token count: 9\nOutput:\n--- FAIL\n");
        assert_eq!((t, e), ("--- FAIL\n", Some(1)));
        assert_eq!(unframe("Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess."), ("Success.", Some(0)));
        assert_eq!(unframe("plain\nExit code: 3\n"), ("plain\nExit code: 3\n", None));
        assert_eq!(unframe("Process exited with code 2"), ("", Some(2)));
        // 0.171: a shell-invoked apply_patch's frame inside the shell tool's frame.
        let nested = "Wall time: 0.0000 seconds\nOutput:\nExit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nM auth.rs\n";
        assert_eq!(unframe(nested), ("Success. Updated the following files:\nM auth.rs\n", Some(0)));
        assert_eq!(
            unframe("Process exited with code 1\nOutput:\nWall time: is a heading\n"),
            ("Wall time: is a heading\n", Some(1)),
            "an open frame inside is output"
        );
    }

    #[test]
    fn file_uris_decode() {
        assert_eq!(decode_file_uri("file:///src/my%20app"), "/src/my app");
        assert_eq!(decode_file_uri("file:///C:/work"), "C:/work");
        assert_eq!(decode_file_uri("/plain"), "/plain");
        assert_eq!(decode_file_uri("file:///bad%zz%"), "/bad%zz%");
    }

    #[test]
    fn identity_rule() {
        let id = |v: serde_json::Value| meta_id(&v).map(str::to_string);
        assert_eq!(id(serde_json::json!({"id": "t1", "session_id": "s1"})), Some("t1".into()));
        assert_eq!(id(serde_json::json!({"session_id": "s1"})), Some("s1".into()), "legacy: no id");
        assert_eq!(id(serde_json::json!({"id": 42, "session_id": "s1"})), None, "non-string id keeps the filename id");
        assert_eq!(id(serde_json::json!({"id": null, "session_id": "s1"})), None);
        assert_eq!(id(serde_json::json!({"id": "", "session_id": "s1"})), None, "empty id: never fall back to session_id");
    }

    #[test]
    fn filename_ids() {
        let p = Path::new("/x/rollout-2026-01-02T03-04-05-0199aa00-1111-7222-8333-444455556666.jsonl");
        assert_eq!(filename_id(p), "0199aa00-1111-7222-8333-444455556666");
        assert_eq!(filename_id(Path::new("/x/rollout-odd-name.jsonl")), "odd-name");
        let z = Path::new("/x/rollout-2026-01-02T03-04-05-0199aa00-1111-7222-8333-444455556666.jsonl.zst");
        assert_eq!(filename_id(z), "0199aa00-1111-7222-8333-444455556666", "a compressed rollout keeps its id");
        assert!(is_compressed_rollout_name("rollout-x.jsonl.zst") && !is_compressed_rollout_name("rollout-x.jsonl"));
    }

    const EVENTS_DIALECT: CodexDialect =
        CodexDialect { harness: "t", tools: ToolMap { shell: &["exec"], read: &[], edit: &[], write: &[] }, titles: None };

    /// The session the lines make; with `resume_after`, the first `n` lines are read
    /// whole and the rest as a tail from the state that read left (numbered from 100):
    /// (the session the tail makes, the one the head made).
    fn parse_events_in_parts(lines: &[serde_json::Value], n: usize) -> (Session, Session) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout-x.jsonl");
        let read = |src: &SourceRef| {
            let mut out: Vec<Session> = Vec::new();
            let stats = parse_rollout_with(&EVENTS_DIALECT, Speech::Events, src, &ParseOptions::default(), &mut out).unwrap();
            (out.pop().unwrap(), stats)
        };
        let text = |lines: &[serde_json::Value]| lines.iter().map(|l| format!("{l}\n")).collect::<String>();
        std::fs::write(&path, text(&lines[..n])).unwrap();
        let (head, stats) = read(&SourceRef::file(&path).append_only());
        std::fs::write(&path, text(lines)).unwrap();
        let resume = crate::model::Resume { next_seq: 100, ..crate::model::Resume::after(&stats, &head) };
        (read(&SourceRef { resume: Some(resume), ..SourceRef::file(&path).append_only() }).0, head)
    }

    fn parse_events(lines: &[serde_json::Value], resume_after: Option<usize>) -> Session {
        match resume_after {
            Some(n) => parse_events_in_parts(lines, n).0,
            None => {
                let dir = tempfile::tempdir().unwrap();
                let path = dir.path().join("rollout-x.jsonl");
                std::fs::write(&path, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
                let mut out: Vec<Session> = Vec::new();
                parse_rollout_with(&EVENTS_DIALECT, Speech::Events, &SourceRef::file(&path), &ParseOptions::default(), &mut out).unwrap();
                out.pop().unwrap()
            }
        }
    }

    fn line(ts: &str, kind: &str, payload: serde_json::Value) -> serde_json::Value {
        serde_json::json!({"timestamp": ts, "type": kind, "payload": payload})
    }

    fn texts(s: &Session, role: Role) -> Vec<&str> {
        s.turns.iter().filter(|t| t.role == role).map(|t| t.text.as_str()).collect()
    }

    #[test]
    fn events_speech_pairs_prompt_copies_and_skips_injections() {
        use serde_json::json;
        let s = parse_events(
            &[
                line("2026-10-01T09:00:00Z", "session_meta", json!({"id": "s", "cwd": "/w"})),
                line(
                    "2026-10-01T09:00:01Z",
                    "response_item",
                    json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>x</environment_context>"}]}),
                ),
                line("2026-10-01T09:00:02Z", "event_msg", json!({"type": "user_message", "message": "run it", "turn_id": "t1"})),
                line(
                    "2026-10-01T09:00:02Z",
                    "event_msg",
                    json!({"type": "item_completed", "turn_id": "t1", "item": {"type": "UserMessage", "content": [{"type": "text", "text": "run it"}]}}),
                ),
                // No turn id on one side: paired by text within 5 s.
                line("2026-10-01T09:01:00Z", "event_msg", json!({"type": "user_message", "message": "again"})),
                line(
                    "2026-10-01T09:01:03Z",
                    "event_msg",
                    json!({"type": "item_completed", "turn_id": "t2", "item": {"type": "UserMessage", "content": [{"type": "Text", "text": "again"}]}}),
                ),
                // The same words in a later turn are a new prompt.
                line("2026-10-01T09:05:00Z", "event_msg", json!({"type": "user_message", "message": "again", "turn_id": "t3"})),
            ],
            None,
        );
        assert_eq!(texts(&s, Role::User), ["run it", "again", "again"]);
    }

    #[test]
    fn events_speech_takes_the_first_answer_source_and_dedupes_calls() {
        use serde_json::json;
        let call =
            json!({"type": "function_call", "name": "exec", "call_id": "c1", "arguments": "{\"command\":[\"bash\",\"-lc\",\"npm test\"]}"});
        let result = json!({"type": "function_call_output", "call_id": "c1", "output": [{"type": "text", "text": "Process exited with code 1\nOutput:\nFAIL"}]});
        let s = parse_events(
            &[
                line("2026-10-01T09:00:02Z", "event_msg", json!({"type": "user_message", "message": "test", "turn_id": "t1"})),
                line("2026-10-01T09:00:03Z", "history_mutation", json!({"operation": "append", "items": [call, result]})),
                line("2026-10-01T09:00:03Z", "response_item", call.clone()),
                line("2026-10-01T09:00:04Z", "response_item", result.clone()),
                line(
                    "2026-10-01T09:00:05Z",
                    "history_mutation",
                    json!({"operation": "append", "items": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "it fails"}]}]}),
                ),
                line("2026-10-01T09:00:05Z", "event_msg", json!({"type": "agent_message", "message": "it fails"})),
                line(
                    "2026-10-01T09:00:06Z",
                    "history_mutation",
                    json!({"operation": "replace", "items": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "old"}]}]}),
                ),
            ],
            None,
        );
        assert_eq!(texts(&s, Role::Assistant), ["it fails"], "history_mutation answers win over agent_message; replace is skipped");
        let calls: Vec<&Turn> = s.turns.iter().filter(|t| t.role == Role::ToolCall).collect();
        assert_eq!(calls.len(), 1, "one call, by call_id");
        let tool = calls[0].tool.as_ref().unwrap();
        assert_eq!((tool.command.as_deref(), tool.exit.clone()), (Some("npm test"), Some(ExitStatus::Code(1))));
        assert_eq!(calls[0].text, "FAIL");
        assert!(!s.turns.iter().any(|t| t.role == Role::ToolOutput));
    }

    #[test]
    fn events_speech_resume_reads_only_the_tail_with_the_state_left() {
        use serde_json::json;
        let call = json!({"type": "function_call", "name": "exec", "call_id": "c1", "arguments": "{\"command\":[\"bash\",\"-lc\",\"cargo test\"]}"});
        let result = json!({"type": "function_call_output", "call_id": "c1", "output": "Exit code: 0\nOutput:\nok"});
        let lines = [
            line("2026-10-01T09:00:00Z", "session_meta", json!({"id": "s", "cwd": "/w"})),
            line("2026-10-01T09:00:02Z", "event_msg", json!({"type": "user_message", "message": "test", "turn_id": "t1"})),
            line("2026-10-01T09:00:03Z", "history_mutation", json!({"operation": "append", "items": [call]})),
            // The tail: the prompt's second copy, the call again, its result, a new prompt.
            line(
                "2026-10-01T09:00:03Z",
                "event_msg",
                json!({"type": "item_completed", "turn_id": "t1", "item": {"type": "UserMessage", "text": "test"}}),
            ),
            line("2026-10-01T09:00:03Z", "response_item", call.clone()),
            line("2026-10-01T09:00:04Z", "response_item", result),
            line("2026-10-01T09:01:00Z", "event_msg", json!({"type": "user_message", "message": "thanks", "turn_id": "t2"})),
        ];
        let (mut s, head) = parse_events_in_parts(&lines, 3);
        assert_eq!(s.project.as_deref(), Some("/w"), "the cwd from the state");
        assert_eq!(texts(&s, Role::User), ["thanks"], "the prompt's second copy pairs with the one read before");
        // The repeated call, with its result, folds into the one indexed (as the indexer does).
        let mut held = crate::tail::calls_by_id(&head.turns, 100);
        let folded = crate::tail::fold_late_results(&mut held, &mut s);
        assert_eq!(folded.calls, ["c1"]);
        assert!(!s.turns.iter().any(|t| t.role == Role::ToolCall), "the call indexed earlier is not made twice");
        assert_eq!(held["c1"].text, "ok", "the result is the indexed call's");
        assert_eq!(s.turns.first().map(|t| t.seq), Some(100), "numbering continues from the resume point");
    }
}

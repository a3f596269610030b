//! VS Code chat sessions: the chat store of VS Code itself, which Copilot Chat and
//! Positron Assistant write, plus Copilot Chat's own event transcripts. One reader,
//! configured by a [`VscodeChatDialect`].
//!
//! Three containers, told apart by where the file sits and what it holds:
//!
//! * **A, JSON** — `chatSessions/<id>.json` (and `emptyWindowChatSessions/`): the session
//!   state object itself. Truncated or not JSON → a `Corrupt` error naming the file.
//! * **A, mutation log** — `chatSessions/<id>.jsonl`: lines `{kind, k?, v?, i?}` replayed
//!   from an empty state every time ([`replay_mutations`]): `kind` 0 replaces the state with
//!   `v`; 1 sets `v` at key path `k` (strings index objects, numbers arrays); 2 truncates the
//!   array at `k` to `i` (when given, padding with nulls) and appends the items of `v`; 3
//!   deletes the key at `k`. A bad line drops the session (VS Code does the same), except an
//!   undecodable *last* line after at least one good line: a write in progress, so the
//!   state replayed so far is kept. The result is read exactly like the JSON form.
//! * **B, transcript** — `GitHub.copilot-chat/transcripts/<id>.jsonl`: events
//!   `{type, timestamp, data}` (read only when [`VscodeChatDialect::transcripts`] is set).
//!   A bad line is skipped and counted.
//!
//! A (per `requests[]` item; session id `sessionId` else the file stem, title
//! `computedTitle` when `version == 2` else `customTitle`, start `creationDate`):
//!
//! | field | Turn | rule |
//! | --- | --- | --- |
//! | `message` (string or `{text}`), time `timestamp` | `User` | skipped (times and work kept) when `isSystemInitiated` or `confirmation` is non-empty |
//! | `response[]` plain string, `{value}` without `kind`, `markdownContent`/`markdownVuln` `content.value` | `Assistant` | concatenated in order; time `responseTimestamp` else `timestamp` |
//! | `inlineReference` | `Assistant` text + `files` (read) | the name VS Code draws: part `name`, symbol `name`, else the file's base name |
//! | `codeblockUri` inside an empty code fence | `Assistant` text | the file name on its own line (the fence goes); file recorded as edited |
//! | `thinking` | `Reasoning` | only with `ParseOptions::include_reasoning` |
//! | `progressMessage`, `warning`, `info`, `systemNotification`, other kinds | skipped | UI chrome |
//! | `toolInvocationSerialized` | `ToolCall` | name `toolId`; command from `toolSpecificData.commandLine.{toolEdited,userEdited,original}` (first non-empty) else `toolSpecificData.command`; files from `resultDetails[]`, and for read tools the `uris` of `pastTenseMessage`/`invocationMessage`; the edit of the same call id from `toolCallRounds` |
//! | `textEditGroup` (`uri`, `edits[][]{text, range}`) | `ToolCall` `textEditGroup` | file edited; edit with the written side only (the range has no old text) |
//! | `result.metadata.toolCallRounds[].toolCalls[]` + `toolCallResults[id]` | `edit` | `replace_string_in_file`-style `{filePath, oldString, newString}`, `replacements[]`, `create_file` `content`, `apply_patch` `input`; a call whose result opens with `ERROR` or `Applying patch failed` is skipped; joined into the matching tool invocation, else its own `ToolCall` |
//! | `inputState`, `variableData` | not read | `inputState` carries the account label; variables are attachments, not speech |
//! | sidecar `chatEditingSessions/<id>/state.json` `recentSnapshot.entries[].resource` | one `ToolCall` `chatEditingSession` | files edited |
//!
//! B (id = stem, replaced by `session.start.data.sessionId`; start `startTime`; title the
//! first user, else assistant, line):
//!
//! | event | Turn | rule |
//! | --- | --- | --- |
//! | `user.message` `data.content` | `User` | |
//! | `assistant.message` `data.content` | `Assistant` | |
//! | `assistant.message` `data.toolRequests[]` `{toolCallId?, name, arguments}` (JSON string) | `ToolCall` | files (`filePath`, `file_path`, `path`, `uri`, `filePaths[]`), command (`command`/`commandLine`, first line), edit from the arguments |
//! | `tool.execution_start` `{toolCallId, toolName, arguments}` | `ToolCall` | merged into the request of the same id, else a new call |
//! | `tool.execution_complete` `{toolCallId, success}` | folded | `success: false` → `is_error`, and the call's edit is dropped (it did not apply); running calls keep theirs |
//! | other events | skipped | |
//!
//! Project: `workspace.json` in the storage folder (`<hash>/workspace.json`, the first
//! of the file's three nearest ancestors holding one): `folder` URI → that directory,
//! `workspace` URI (`.code-workspace`) → the directory holding it; an empty-window chat
//! uses its `workingDirectory`; a transcript without either the deepest directory
//! holding every absolute path its tool calls touched. Times are epoch ms (A) or
//! RFC 3339 (B). No exit codes exist in either store.
//!
//! Dialect fields and who needs them:
//!
//! | field | copilot-chat | positron |
//! | --- | --- | --- |
//! | `harness` | `"copilot-chat"` | `"positron"` |
//! | `tools` | [`COPILOT_TOOLS`] (`run_in_terminal`, `copilot_readFile`, `replace_string_in_file`…) | the same (Positron's own tool ids are not on its page) |
//! | `injected` | [`InjectedText::NONE`] | [`InjectedText::NONE`] |
//! | `transcripts` | `true` | `false` |
//!
//! Discovery: the adapter's `StoreSpec` names the products' `User` folders per OS, and
//! [`discover_sources`] reads one (a `User` folder, or any folder holding chat files,
//! which is walked).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::builder::SessionBuilder;
use crate::discover::{find_files, is_file_entry, subdirs};
use crate::format::{Discovery, FormatError, ParseOptions, ParseStats, SessionSink};
use crate::model::{cap_text, Edit, FileAction, FileTouch, Role, SourceRef, Timestamp, ToolUse, Turn, MAX_EDIT_BYTES};
use crate::patch::parse_apply_patch;
use crate::read::{for_each_json_line, parse_json_document, read_source};
use crate::text::{one_line, InjectedText};
use crate::work::{ToolKind, ToolMap};

/// What differs between the products writing VS Code chat sessions.
#[derive(Debug, Clone, Copy)]
pub struct VscodeChatDialect {
    /// The adapter id the sessions carry.
    pub harness: &'static str,
    /// Tool ids → what they do.
    pub tools: ToolMap,
    /// The product's injected text, stripped from user text.
    pub injected: &'static InjectedText,
    /// Read `GitHub.copilot-chat/transcripts/*.jsonl` (Copilot Chat's own event log).
    pub transcripts: bool,
}

/// Copilot Chat's tool ids: the `copilot_*` ids of the chat store and the plain ids of
/// tool-call rounds and transcripts. Positron's dialect uses them too (its own tool ids are
/// not on its page).
pub const COPILOT_TOOLS: ToolMap = ToolMap {
    shell: &["run_in_terminal"],
    read: &["copilot_readFile", "read_file"],
    edit: &[
        "copilot_replaceString",
        "copilot_multiReplaceString",
        "copilot_applyPatch",
        "copilot_insertEdit",
        "replace_string_in_file",
        "multi_replace_string_in_file",
        "apply_patch",
        "insert_edit_into_file",
    ],
    write: &["copilot_createFile", "create_file"],
};

/// The folder of chat sessions inside a workspace storage folder.
pub const CHAT_SESSIONS: &str = "chatSessions";
/// The folder of chats opened without a workspace, inside `globalStorage`.
pub const EMPTY_WINDOW_SESSIONS: &str = "emptyWindowChatSessions";
/// Copilot Chat's extension folder inside a workspace storage folder.
pub const COPILOT_CHAT_DIR: &str = "GitHub.copilot-chat";
/// The transcripts folder inside [`COPILOT_CHAT_DIR`].
pub const TRANSCRIPTS: &str = "transcripts";
const TITLE_CHARS: usize = 120;
/// How far one Push may pad an array with nulls (chat arrays hold requests and parts).
const MAX_PAD: usize = 1 << 16;
/// Fallback walk depth for a root that is not laid out like a `User` folder.
const FALLBACK_DEPTH: usize = 6;

// ---------------------------------------------------------------------------------------
// Discovery

/// Every chat source under one `User` folder and its `profiles/*`: the `chatSessions` of
/// every workspace (a `.jsonl` log hides the `.json` of the same stem), the empty-window
/// chats, and Copilot's transcripts when the dialect reads them. Each source's fingerprint
/// covers the `workspace.json` its project comes from and its editing-session sidecar.
/// A root with none of `workspaceStorage`, `globalStorage`, `profiles` is walked instead.
pub fn discover_sources(d: &VscodeChatDialect, user_dir: &Path) -> Vec<SourceRef> {
    let mut out = Vec::new();
    let laid_out = ["workspaceStorage", "globalStorage", "profiles"].iter().any(|n| user_dir.join(n).is_dir());
    if laid_out {
        let mut scopes = vec![user_dir.to_path_buf()];
        scopes.extend(subdirs(&user_dir.join("profiles")));
        for scope in scopes {
            for ws in subdirs(&scope.join("workspaceStorage")) {
                sessions_in(&ws.join(CHAT_SESSIONS), &mut out);
                if d.transcripts {
                    transcripts_in(&ws.join(COPILOT_CHAT_DIR).join(TRANSCRIPTS), &mut out);
                }
            }
            sessions_in(&scope.join("globalStorage").join(EMPTY_WINDOW_SESSIONS), &mut out);
        }
    } else {
        let files = find_files(user_dir, FALLBACK_DEPTH, &|n| n.ends_with(".json") || n.ends_with(".jsonl"));
        let mut dirs: Vec<PathBuf> = files.iter().filter_map(|f| f.parent().map(Path::to_path_buf)).collect();
        dirs.sort();
        dirs.dedup();
        for dir in dirs {
            match dir.file_name().and_then(|n| n.to_str()) {
                Some(CHAT_SESSIONS | EMPTY_WINDOW_SESSIONS) => sessions_in(&dir, &mut out),
                Some(TRANSCRIPTS) if d.transcripts && parent_named(&dir, COPILOT_CHAT_DIR) => transcripts_in(&dir, &mut out),
                _ => {}
            }
        }
    }
    Discovery::sort_sources(&mut out);
    out
}

fn files_in(dir: &Path, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    crate::discover::list(dir)
        .into_iter()
        .filter(|e| is_file_entry(e) && keep(&e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .collect()
}

fn parent_named(dir: &Path, name: &str) -> bool {
    dir.parent().and_then(Path::file_name).and_then(|n| n.to_str()) == Some(name)
}

fn sessions_in(dir: &Path, out: &mut Vec<SourceRef>) {
    let files = files_in(dir, |n| n.ends_with(".json") || n.ends_with(".jsonl"));
    for path in &files {
        // The flat `.json` of builds before the mutation log: only when no `.jsonl` replaced it.
        if path.extension().is_some_and(|e| e == "json") && files.contains(&path.with_extension("jsonl")) {
            continue;
        }
        out.push(with_side_parts(SourceRef::file(path), path));
    }
}

fn transcripts_in(dir: &Path, out: &mut Vec<SourceRef>) {
    for path in files_in(dir, |n| n.ends_with(".jsonl")) {
        out.push(with_side_parts(SourceRef::file(&path), &path));
    }
}

fn with_side_parts(mut src: SourceRef, path: &Path) -> SourceRef {
    if let Some(ws) = workspace_json_for(path) {
        src = src.with_part(ws);
    }
    if let Some(sidecar) = stem(path).and_then(|id| editing_session_state(path, &id)).filter(|p| p.is_file()) {
        src = src.with_part(sidecar);
    }
    src
}

fn stem(path: &Path) -> Option<String> {
    path.file_stem().and_then(|s| s.to_str()).filter(|s| !s.is_empty()).map(str::to_string)
}

/// The `workspace.json` of the storage folder a file sits in: the first of its three
/// nearest ancestors that holds one (`<hash>/chatSessions/x` is one level down,
/// `<hash>/GitHub.copilot-chat/transcripts/x` two).
fn workspace_json_for(path: &Path) -> Option<PathBuf> {
    path.ancestors().skip(1).take(3).map(|a| a.join("workspace.json")).find(|p| p.is_file())
}

/// `<hash>/chatEditingSessions/<id>/state.json` for a `<hash>/chatSessions/<id>.*` file.
fn editing_session_state(path: &Path, id: &str) -> Option<PathBuf> {
    // The id comes from the file's contents: it must name one folder, not a path.
    if id.is_empty() || id.contains(['/', '\\']) || id.starts_with('.') {
        return None;
    }
    let dir = path.parent()?;
    if dir.file_name()? != CHAT_SESSIONS {
        return None;
    }
    Some(dir.parent()?.join("chatEditingSessions").join(id).join("state.json"))
}

// ---------------------------------------------------------------------------------------
// Parsing

/// Parses one chat source into (at most) one session; see the module doc for the three
/// containers.
pub fn parse(d: &VscodeChatDialect, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let mut stats = ParseStats::default();
    let bytes = read_source(&src.path, &mut stats)?.bytes;
    let path = &src.path;
    let is_jsonl = path.extension().is_some_and(|e| e == "jsonl");
    let in_transcripts = path.parent().is_some_and(|p| p.file_name().is_some_and(|n| n == TRANSCRIPTS));
    if !is_jsonl {
        let doc = parse_json_document(&bytes, path)?;
        stats.records += 1;
        stats.end_offset = bytes.len() as u64;
        read_state(d, src, opts, &doc, &mut stats, out);
    } else if in_transcripts || looks_like_transcript(&bytes) {
        read_transcript(d, src, opts, &bytes, &mut stats, out);
    } else if let Some(state) = replay_mutations(&bytes, path, &mut stats) {
        read_state(d, src, opts, &state, &mut stats, out);
    }
    Ok(stats)
}

/// A first line shaped `{type, data}` rather than `{kind, …}`.
fn looks_like_transcript(bytes: &[u8]) -> bool {
    let first = bytes.split(|b| *b == b'\n').map(<[u8]>::trim_ascii).find(|l| !l.is_empty());
    first
        .and_then(|l| serde_json::from_slice::<Value>(l).ok())
        .is_some_and(|v| v.get("type").is_some_and(Value::is_string) && v.get("kind").is_none())
}

/// Replays a chat-session mutation log into the session state (see the module doc).
/// `None` when the log holds no good line or a bad line before the last one (the session
/// is dropped, as VS Code drops it); every bad line is counted in `stats`.
pub fn replay_mutations(bytes: &[u8], path: &Path, stats: &mut ParseStats) -> Option<Value> {
    let lines: Vec<(usize, &[u8])> = bytes
        .split(|b| *b == b'\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(l).trim_ascii()))
        .filter(|(_, l)| !l.is_empty())
        .collect();
    let mut state = Value::Null;
    let mut good = 0usize;
    for (n, (line_no, line)) in lines.iter().enumerate() {
        stats.records += 1;
        let last = n + 1 == lines.len();
        let applied = serde_json::from_slice::<Value>(line).map_err(|e| e.to_string()).and_then(|m| apply_mutation(&mut state, &m));
        match applied {
            Ok(()) => good += 1,
            Err(e) if last && good > 0 => {
                stats.skip(|| format!("{} line {line_no}: torn last line ({e}); kept the state before it", path.display()));
                break;
            }
            Err(e) => {
                stats.skip(|| format!("{} line {line_no}: {e}; session dropped", path.display()));
                return None;
            }
        }
    }
    stats.end_offset = bytes.len() as u64;
    (good > 0).then_some(state)
}

/// One key of a mutation path.
enum Key<'a> {
    Field(&'a str),
    Index(usize),
}

fn path_keys(k: Option<&Value>) -> Result<Vec<Key<'_>>, String> {
    match k {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| match i {
                Value::String(s) => Ok(Key::Field(s)),
                Value::Number(n) => n.as_u64().map(|n| Key::Index(n as usize)).ok_or_else(|| format!("bad index {n}")),
                other => Err(format!("bad path key {other}")),
            })
            .collect(),
        Some(other) => Err(format!("path is not an array: {other}")),
    }
}

fn child_mut<'v>(v: &'v mut Value, key: &Key) -> Option<&'v mut Value> {
    match (v, key) {
        (Value::Object(map), Key::Field(f)) => map.get_mut(*f),
        (Value::Array(items), Key::Index(i)) => items.get_mut(*i),
        _ => None,
    }
}

/// The value at `keys`, failing on a missing step.
fn walk_mut<'v>(mut v: &'v mut Value, keys: &[Key]) -> Result<&'v mut Value, String> {
    for (depth, key) in keys.iter().enumerate() {
        v = child_mut(v, key).ok_or_else(|| format!("path step {depth} does not exist"))?;
    }
    Ok(v)
}

fn apply_mutation(state: &mut Value, m: &Value) -> Result<(), String> {
    let kind = m.get("kind").and_then(Value::as_u64).ok_or("no numeric `kind`")?;
    let keys = path_keys(m.get("k"))?;
    let v = m.get("v");
    match kind {
        0 => {
            *state = v.cloned().ok_or("initial state without `v`")?;
            Ok(())
        }
        1 => {
            let v = v.cloned().unwrap_or(Value::Null);
            let Some((last, parents)) = keys.split_last() else {
                *state = v;
                return Ok(());
            };
            match (walk_mut(state, parents)?, last) {
                (Value::Object(map), Key::Field(f)) => {
                    map.insert((*f).to_string(), v);
                    Ok(())
                }
                (Value::Array(items), Key::Index(i)) if *i < items.len() => {
                    items[*i] = v;
                    Ok(())
                }
                (Value::Array(items), Key::Index(i)) if *i == items.len() => {
                    items.push(v);
                    Ok(())
                }
                _ => Err("set at a key the state does not have".to_string()),
            }
        }
        2 => {
            let items = match v {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items.clone(),
                Some(_) => return Err("push of a non-array".to_string()),
            };
            // A push may create the array it pushes to.
            if let Some((last, parents)) = keys.split_last() {
                if let (Value::Object(map), Key::Field(f)) = (walk_mut(state, parents)?, last) {
                    let slot = map.entry((*f).to_string()).or_insert(Value::Null);
                    if slot.is_null() {
                        *slot = Value::Array(Vec::new());
                    }
                }
            }
            let Value::Array(target) = walk_mut(state, &keys)? else { return Err("push to a non-array".to_string()) };
            if let Some(i) = m.get("i").and_then(Value::as_u64) {
                // Bounded: an absurd index must not allocate the machine away.
                let i = usize::try_from(i).map_err(|_| "index too large")?;
                if i > target.len() + MAX_PAD {
                    return Err(format!("index {i} far past the array"));
                }
                target.resize(i, Value::Null);
            }
            target.extend(items);
            Ok(())
        }
        3 => {
            let Some((last, parents)) = keys.split_last() else {
                *state = Value::Null;
                return Ok(());
            };
            match (walk_mut(state, parents)?, last) {
                (Value::Object(map), Key::Field(f)) => {
                    map.remove(*f);
                }
                // JavaScript's `delete arr[i]` leaves a hole, serialised as null.
                (Value::Array(items), Key::Index(i)) if *i < items.len() => items[*i] = Value::Null,
                _ => {}
            }
            Ok(())
        }
        other => Err(format!("unknown mutation kind {other}")),
    }
}

/// A non-empty string field.
fn text<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty())
}

/// A string, or the `value`/`text` of a markdown-string object.
fn string_or_value(v: Option<&Value>) -> Option<&str> {
    match v? {
        Value::String(s) => Some(s),
        obj => obj.get("value").or_else(|| obj.get("text")).and_then(Value::as_str),
    }
}

fn read_state(
    d: &VscodeChatDialect,
    src: &SourceRef,
    opts: &ParseOptions,
    state: &Value,
    stats: &mut ParseStats,
    out: &mut dyn SessionSink,
) {
    let path = &src.path;
    if !state.is_object() {
        stats.skip(|| format!("{}: the session state is not an object", path.display()));
        return;
    }
    // An id with control characters (a NUL, a newline) could not be typed or printed back.
    let id = text(state, "sessionId")
        .filter(|s| !s.contains(char::is_control))
        .map(str::to_string)
        .or_else(|| stem(path))
        .unwrap_or_else(|| "session".to_string());
    let mut b = SessionBuilder::new(d.harness, id.clone(), src.clone());
    b.touch(state.get("creationDate").and_then(Timestamp::from_json));
    b.touch(state.get("lastMessageDate").and_then(Timestamp::from_json));
    let mut walk = ChatWalk { d, opts, b };
    match state.get("requests") {
        Some(Value::Array(requests)) => requests.iter().for_each(|r| walk.request(r)),
        None | Some(Value::Null) => {}
        Some(_) => stats.skip(|| format!("{}: `requests` is not an array", path.display())),
    }
    let mut b = walk.b;
    if let Some(state_file) = editing_session_state(path, &id) {
        edited_files_sidecar(&mut b, &state_file, stats);
    }
    let title = match state.get("version").and_then(Value::as_u64) {
        Some(2) => text(state, "computedTitle"),
        Some(_) => text(state, "customTitle"),
        None => None,
    };
    let s = b.session_mut();
    s.title = title.map(str::to_string);
    s.project = workspace_project(path).or_else(|| state.get("workingDirectory").and_then(uri_path));
    if let Some(s) = b.finish() {
        out.session(s);
    }
}

/// The sidecar's `recentSnapshot.entries[].resource` as one edited-files record.
fn edited_files_sidecar(b: &mut SessionBuilder, state_file: &Path, stats: &mut ParseStats) {
    if !state_file.is_file() {
        return;
    }
    let Ok(bytes) = std::fs::read(state_file) else { return };
    let doc = match parse_json_document(&bytes, state_file) {
        Ok(doc) => doc,
        Err(e) => {
            stats.problem(e.to_string());
            return;
        }
    };
    let Some(Value::Array(entries)) = doc.get("recentSnapshot").and_then(|s| s.get("entries")) else { return };
    let mut files: Vec<FileTouch> = Vec::new();
    for p in entries.iter().filter_map(|e| e.get("resource")).filter_map(uri_path) {
        if !files.iter().any(|f| f.path == p) {
            files.push(FileTouch { path: p, action: FileAction::Edit });
        }
    }
    if files.is_empty() {
        return;
    }
    let mut turn = Turn::new(Role::ToolCall, "").at(b.session().updated);
    turn.tool = Some(ToolUse { name: "chatEditingSession".to_string(), ..ToolUse::default() });
    turn.files = files;
    b.push(turn);
}

/// Walks the requests of one session state.
struct ChatWalk<'a> {
    d: &'a VscodeChatDialect,
    opts: &'a ParseOptions,
    b: SessionBuilder,
}

impl ChatWalk<'_> {
    fn request(&mut self, req: &Value) {
        let asked = req.get("timestamp").and_then(Timestamp::from_json);
        let answered = req.get("responseTimestamp").and_then(Timestamp::from_json).or(asked);
        self.b.touch(asked);
        self.b.touch(answered);
        let nobody_typed = req.get("isSystemInitiated").and_then(Value::as_bool) == Some(true)
            || req.get("confirmation").is_some_and(|c| c.as_str().map_or(!c.is_null(), |s| !s.trim().is_empty()));
        if !nobody_typed {
            if let Some(msg) = string_or_value(req.get("message")) {
                self.b.push(Turn::new(Role::User, self.d.injected.strip(msg)).at(asked));
            }
        }
        let mut edits = round_edits(&self.d.tools, req);
        let mut said = Said::default();
        if let Some(Value::Array(parts)) = req.get("response") {
            for part in parts {
                let kind = part.get("kind").and_then(Value::as_str);
                match kind {
                    None => {
                        let s = match part {
                            Value::String(s) => Some(s.as_str()),
                            _ => part.get("value").and_then(Value::as_str),
                        };
                        if let Some(s) = s {
                            said.markdown(s);
                        }
                    }
                    Some("markdownContent" | "markdownVuln") => {
                        if let Some(s) = string_or_value(part.get("content")) {
                            said.markdown(s);
                        }
                    }
                    Some("inlineReference") => said.inline_reference(part),
                    Some("codeblockUri") => said.codeblock_uri(part),
                    Some("thinking") if self.opts.include_reasoning => {
                        if let Some(t) = string_or_value(part.get("value")).or_else(|| string_or_value(part.get("content"))) {
                            self.b.push(Turn::new(Role::Reasoning, t.trim()).at(answered));
                        }
                    }
                    Some("toolInvocationSerialized") => {
                        self.flush(&mut said, answered);
                        self.tool_invocation(part, &mut edits, answered);
                    }
                    Some("textEditGroup") => {
                        self.flush(&mut said, answered);
                        self.text_edit_group(part, answered);
                    }
                    // thinking (not asked for), progressMessage, warning, info, systemNotification…
                    _ => {}
                }
            }
        }
        self.flush(&mut said, answered);
        // Edits of calls with no serialized invocation in the response.
        for (id, call) in edits.into_iter().filter(|(_, c)| !c.used) {
            let mut turn = Turn::new(Role::ToolCall, "").at(answered);
            turn.tool = Some(ToolUse { name: call.name, call_id: Some(id), ..ToolUse::default() });
            turn.files = call.files;
            turn.edit = call.edit;
            self.b.push(turn);
        }
    }

    /// Pushes the prose collected so far as one assistant turn, with the files it named.
    fn flush(&mut self, said: &mut Said, time: Option<Timestamp>) {
        let Said { text, files, .. } = std::mem::take(said);
        let mut turn = Turn::new(Role::Assistant, text.trim()).at(time);
        turn.files = files;
        self.b.push(turn);
    }

    fn tool_invocation(&mut self, part: &Value, edits: &mut [(String, RoundCall)], time: Option<Timestamp>) {
        let name = text(part, "toolId").unwrap_or("tool").to_string();
        let call_id = text(part, "toolCallId");
        let specific = part.get("toolSpecificData").unwrap_or(&Value::Null);
        let command = specific
            .get("commandLine")
            .and_then(|c| ["toolEdited", "userEdited", "original"].iter().find_map(|k| text(c, k)))
            .or_else(|| text(specific, "command"))
            .map(str::to_string);
        let action = self.d.tools.file_action(&name).unwrap_or(FileAction::Read);
        let mut paths: Vec<String> = match part.get("resultDetails") {
            Some(Value::Array(items)) => items.iter().filter_map(uri_path).collect(),
            _ => Vec::new(),
        };
        if self.d.tools.kind(&name) == ToolKind::Read {
            for msg in ["pastTenseMessage", "invocationMessage"] {
                if let Some(Value::Object(uris)) = part.get(msg).and_then(|m| m.get("uris")) {
                    paths.extend(uris.values().filter_map(uri_path));
                }
            }
        }
        let mut files: Vec<FileTouch> = Vec::new();
        for p in paths {
            if !files.iter().any(|f| f.path == p) {
                files.push(FileTouch { path: p, action });
            }
        }
        let mut turn = Turn::new(Role::ToolCall, "").at(time);
        turn.tool = Some(ToolUse { name, command, call_id: call_id.map(str::to_string), ..ToolUse::default() });
        if let Some((_, call)) = call_id.and_then(|id| edits.iter_mut().find(|(k, _)| k == id)) {
            call.used = true;
            for f in &call.files {
                if !files.iter().any(|g| g.path == f.path) {
                    files.push(f.clone());
                }
            }
            turn.edit = call.edit.clone();
        }
        turn.files = files;
        self.b.push(turn);
    }

    fn text_edit_group(&mut self, part: &Value, time: Option<Timestamp>) {
        let Some(path) = part.get("uri").and_then(uri_path) else { return };
        let mut written: Vec<&str> = Vec::new();
        if let Some(Value::Array(groups)) = part.get("edits") {
            for group in groups {
                let edits = group.as_array().map(Vec::as_slice).unwrap_or(std::slice::from_ref(group));
                written.extend(edits.iter().filter_map(|e| e.get("text").and_then(Value::as_str)).filter(|t| !t.is_empty()));
            }
        }
        let mut turn = Turn::new(Role::ToolCall, "").at(time);
        turn.tool = Some(ToolUse { name: "textEditGroup".to_string(), ..ToolUse::default() });
        turn.files = vec![FileTouch { path: path.clone(), action: FileAction::Edit }];
        if !written.is_empty() {
            turn.edit = Some(Edit { path, old: String::new(), new: Some(capped(written.join("\n"))) });
        }
        self.b.push(turn);
    }
}

/// The assistant prose of a response being assembled, and the files its parts named.
#[derive(Default)]
struct Said {
    text: String,
    files: Vec<FileTouch>,
    /// After a `codeblockUri`, the closing fence of its empty code block is dropped.
    drop_fence: bool,
}

impl Said {
    fn markdown(&mut self, s: &str) {
        let mut s = s;
        if std::mem::take(&mut self.drop_fence) {
            if let Some(rest) = s.trim_start().strip_prefix("```") {
                s = rest.split_once('\n').map_or("", |(_, after)| after);
            }
        }
        self.text.push_str(s);
    }

    /// Records a file once; an edit pill upgrades an earlier mere reference to it.
    fn file(&mut self, path: String, action: FileAction) {
        match self.files.iter_mut().find(|f| f.path == path) {
            Some(f) if f.action == FileAction::Read => f.action = action,
            Some(_) => {}
            None => self.files.push(FileTouch { path, action }),
        }
    }

    /// The name VS Code draws for the reference, and the file it points at.
    fn inline_reference(&mut self, part: &Value) {
        let reference = part.get("inlineReference").unwrap_or(&Value::Null);
        let path = uri_path(reference).or_else(|| reference.get("location").and_then(uri_path));
        let name = text(part, "name")
            .map(str::to_string)
            .or_else(|| text(reference, "name").map(str::to_string))
            .or_else(|| path.as_deref().map(|p| crate::project::basename(p).to_string()));
        if let Some(name) = name {
            self.text.push_str(&name);
        }
        if let Some(p) = path {
            self.file(p, FileAction::Read);
        }
    }

    /// The agent-mode edit pill: an empty code fence around a `codeblockUri` becomes the
    /// file's name on its own line.
    fn codeblock_uri(&mut self, part: &Value) {
        let Some(p) = part.get("uri").and_then(uri_path) else { return };
        self.strip_open_fence();
        self.text.push('\n');
        self.text.push_str(crate::project::basename(&p));
        self.text.push('\n');
        self.drop_fence = true;
        self.file(p, FileAction::Edit);
    }

    /// Removes an opening code fence (```` ```lang ````) that ends the text so far.
    fn strip_open_fence(&mut self) {
        let trimmed = self.text.trim_end_matches([' ', '\n', '\r']);
        let line_start = trimmed.rfind('\n').map_or(0, |i| i + 1);
        let last_line = &trimmed[line_start..];
        let inside_block = trimmed[..line_start].matches("```").count() % 2 == 1;
        if last_line.starts_with("```") && !last_line[3..].contains('`') && !inside_block {
            self.text.truncate(line_start);
        }
    }
}

fn capped(mut s: String) -> String {
    cap_text(&mut s, MAX_EDIT_BYTES);
    s
}

/// One tool call of `result.metadata.toolCallRounds`, with what it edited.
struct RoundCall {
    name: String,
    files: Vec<FileTouch>,
    edit: Option<Edit>,
    /// Joined into a serialized invocation of the same id.
    used: bool,
}

/// The edit calls of a request's tool-call rounds that did not fail, with their ids, in
/// the order they were made.
fn round_edits(tools: &ToolMap, req: &Value) -> Vec<(String, RoundCall)> {
    let mut out = Vec::new();
    let Some(meta) = req.get("result").and_then(|r| r.get("metadata")) else { return out };
    let results = meta.get("toolCallResults");
    let Some(Value::Array(rounds)) = meta.get("toolCallRounds") else { return out };
    for call in rounds.iter().filter_map(|r| r.get("toolCalls")).filter_map(Value::as_array).flatten() {
        let (Some(id), Some(name)) = (text(call, "id"), text(call, "name")) else { continue };
        let result = results.and_then(|r| r.get(id)).map(result_text).unwrap_or_default();
        let result = result.trim_start();
        if result.starts_with("ERROR") || result.starts_with("Applying patch failed") {
            continue;
        }
        let args = arguments(call.get("arguments"));
        let work = call_work(tools, name, &args);
        if work.edit.is_some() || !work.files.is_empty() {
            out.push((id.to_string(), RoundCall { name: name.to_string(), files: work.files, edit: work.edit, used: false }));
        }
    }
    out
}

/// A tool result's text: a string, or its `content[]` parts' `value`/`text`.
fn result_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        _ => match v.get("content") {
            Some(Value::Array(parts)) => parts.iter().filter_map(|p| string_or_value(Some(p))).collect::<Vec<_>>().join("\n"),
            Some(other) => string_or_value(Some(other)).unwrap_or("").to_string(),
            None => String::new(),
        },
    }
}

/// Call arguments given as an object or as a JSON string.
fn arguments(v: Option<&Value>) -> Value {
    match v {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Null),
        Some(v) => v.clone(),
        None => Value::Null,
    }
}

/// What one call's arguments say.
#[derive(Default)]
struct CallWork {
    command: Option<String>,
    files: Vec<FileTouch>,
    edit: Option<Edit>,
}

/// Reads arguments by their shape; the [`ToolMap`] gives the file action.
fn call_work(tools: &ToolMap, name: &str, args: &Value) -> CallWork {
    let mut w = CallWork::default();
    let kind = tools.kind(name);
    if matches!(kind, ToolKind::Shell | ToolKind::Other) {
        w.command =
            text(args, "command").or_else(|| text(args, "commandLine")).and_then(|c| c.lines().next()).map(|c| c.trim().to_string());
        if kind == ToolKind::Shell {
            return w;
        }
    }
    let action = tools.file_action(name).unwrap_or(FileAction::Read);
    let mut paths: Vec<String> = ["filePath", "file_path", "path"].iter().filter_map(|k| text(args, k)).map(str::to_string).collect();
    paths.extend(args.get("uri").and_then(uri_path));
    if let Some(Value::Array(list)) = args.get("filePaths") {
        paths.extend(list.iter().filter_map(Value::as_str).map(str::to_string));
    }
    let mut edit_paths: Vec<String> = Vec::new();
    if let Some(old) = args.get("oldString").and_then(Value::as_str).filter(|s| !s.is_empty()) {
        if let Some(p) = paths.first() {
            let new = args.get("newString").and_then(Value::as_str).map(|n| capped(n.to_string()));
            w.edit = Some(Edit { path: p.clone(), old: capped(old.to_string()), new });
        }
    } else if let Some(Value::Array(reps)) = args.get("replacements") {
        let spans: Vec<(&str, &str, Option<&str>)> = reps
            .iter()
            .filter_map(|r| {
                let old = r.get("oldString").and_then(Value::as_str).filter(|s| !s.is_empty())?;
                Some((text(r, "filePath")?, old, r.get("newString").and_then(Value::as_str)))
            })
            .collect();
        edit_paths.extend(spans.iter().map(|(p, _, _)| p.to_string()));
        if let Some((first, _, _)) = spans.first() {
            let same: Vec<_> = spans.iter().filter(|(p, _, _)| p == first).collect();
            let old = same.iter().map(|(_, o, _)| *o).collect::<Vec<_>>().join("\n");
            let new = same.iter().filter_map(|(_, _, n)| *n).collect::<Vec<_>>().join("\n");
            w.edit = Some(Edit { path: first.to_string(), old: capped(old), new: Some(capped(new)) });
        }
    } else if let Some(patch) = args.get("input").and_then(Value::as_str).filter(|p| p.contains("*** Begin Patch")) {
        let (files, edits) = parse_apply_patch(patch, None);
        w.files.extend(files);
        w.edit = edits.into_iter().find(|e| !e.old.is_empty());
    } else if let Some(p) = paths.first() {
        let written = args.get("content").or_else(|| args.get("code")).and_then(Value::as_str);
        if let (Some(written), ToolKind::Write | ToolKind::Edit) = (written, kind) {
            w.edit = Some(Edit { path: p.clone(), old: String::new(), new: Some(capped(written.to_string())) });
        }
    }
    paths.extend(edit_paths);
    for p in paths {
        if !p.trim().is_empty() && !w.files.iter().any(|f| f.path == p) {
            w.files.push(FileTouch { path: p, action });
        }
    }
    w
}

// ---------------------------------------------------------------------------------------
// Transcripts (B)

fn read_transcript(
    d: &VscodeChatDialect,
    src: &SourceRef,
    // Transcripts carry no reasoning; kept for symmetry with `read_state`.
    _opts: &ParseOptions,
    bytes: &[u8],
    stats: &mut ParseStats,
    out: &mut dyn SessionSink,
) {
    let path = &src.path;
    let mut b = SessionBuilder::new(d.harness, stem(path).unwrap_or_else(|| "transcript".to_string()), src.clone());
    let mut not_objects = 0u64;
    for_each_json_line(bytes, 0, path, stats, |_, ev| {
        if !ev.is_object() {
            not_objects += 1;
            return;
        }
        let time = ev.get("timestamp").and_then(Timestamp::from_json);
        let data = ev.get("data").unwrap_or(&Value::Null);
        match ev.get("type").and_then(Value::as_str).unwrap_or("") {
            "session.start" => {
                if let Some(id) = text(data, "sessionId").filter(|s| !s.contains(char::is_control)) {
                    b.set_id(id);
                }
                b.touch(data.get("startTime").and_then(Timestamp::from_json));
                b.touch(time);
            }
            "user.message" => {
                if let Some(t) = string_or_value(data.get("content")) {
                    b.push(Turn::new(Role::User, d.injected.strip(t)).at(time));
                }
            }
            "assistant.message" => {
                if let Some(t) = string_or_value(data.get("content")) {
                    b.push(Turn::new(Role::Assistant, t.trim()).at(time));
                }
                if let Some(Value::Array(reqs)) = data.get("toolRequests") {
                    for r in reqs {
                        let id = text(r, "toolCallId").or_else(|| text(r, "id"));
                        let name = text(r, "name").or_else(|| text(r, "toolName")).unwrap_or("tool");
                        transcript_call(&mut b, &d.tools, id, name, &arguments(r.get("arguments")), time);
                    }
                }
            }
            "tool.execution_start" => {
                let name = text(data, "toolName").or_else(|| text(data, "name")).unwrap_or("tool");
                transcript_call(&mut b, &d.tools, text(data, "toolCallId"), name, &arguments(data.get("arguments")), time);
            }
            "tool.execution_complete" => {
                let Some(id) = text(data, "toolCallId") else { return };
                let failed = data.get("success").and_then(Value::as_bool) == Some(false);
                if failed {
                    if let Some(call) = b.call_mut(id) {
                        // The edit did not apply; the call and its files stay.
                        call.edit = None;
                    }
                }
                let output = data.get("result").and_then(|r| string_or_value(r.get("content")).or_else(|| r.as_str())).unwrap_or("");
                if !b.complete_call(id, output, failed, None, time) {
                    b.push_orphan_result(id, output, failed, None, time);
                }
            }
            // assistant.turn_start / turn_end and anything newer
            _ => b.touch(time),
        }
    });
    if not_objects > 0 {
        stats.skipped += not_objects;
        stats.problem(format!("{}: {not_objects} lines were JSON but not objects", path.display()));
    }
    let title = {
        let s = b.session();
        let first = |role| s.turns.iter().find(|t| t.role == role && !t.text.trim().is_empty());
        first(Role::User).or_else(|| first(Role::Assistant)).map(|t| one_line(&t.text, TITLE_CHARS))
    };
    let project =
        workspace_project(path).or_else(|| common_directory(b.session().turns.iter().flat_map(|t| &t.files).map(|f| f.path.as_str())));
    let s = b.session_mut();
    s.title = title;
    s.project = project;
    if let Some(s) = b.finish() {
        out.session(s);
    }
}

/// Adds a call, or fills in what a call of the same id does not have yet.
fn transcript_call(b: &mut SessionBuilder, tools: &ToolMap, id: Option<&str>, name: &str, args: &Value, time: Option<Timestamp>) {
    let work = call_work(tools, name, args);
    if let Some(call) = id.and_then(|id| b.call_mut(id)) {
        if let Some(tool) = &mut call.tool {
            if tool.command.is_none() {
                tool.command = work.command;
            }
        }
        for f in work.files {
            if !call.files.iter().any(|g| g.path == f.path) {
                call.files.push(f);
            }
        }
        if call.edit.is_none() {
            call.edit = work.edit;
        }
        return;
    }
    let mut turn = Turn::new(Role::ToolCall, "").at(time);
    turn.tool = Some(ToolUse { name: name.to_string(), command: work.command, ..ToolUse::default() });
    turn.files = work.files;
    turn.edit = work.edit;
    b.push_call(id, turn);
}

/// The deepest directory holding every absolute path (at least one) in `paths`.
fn common_directory<'a>(paths: impl Iterator<Item = &'a str>) -> Option<String> {
    let mut common: Option<Vec<&str>> = None;
    for p in paths.filter(|p| p.starts_with('/') || p.get(1..3) == Some(":\\") || p.get(1..3) == Some(":/")) {
        let dir: Vec<&str> = p.split(['/', '\\']).collect();
        let dir = &dir[..dir.len().saturating_sub(1)];
        common = Some(match common {
            None => dir.to_vec(),
            Some(c) => c.iter().zip(dir).take_while(|(a, b)| a == b).map(|(a, _)| *a).collect(),
        });
    }
    let c = common?;
    let joined = c.join("/");
    (!joined.is_empty() && joined != "/").then_some(joined)
}

// ---------------------------------------------------------------------------------------
// URIs and projects

/// The project of a file in a workspace storage folder, from its `workspace.json`.
fn workspace_project(path: &Path) -> Option<String> {
    let ws = workspace_json_for(path)?;
    let doc = parse_json_document(&std::fs::read(&ws).ok()?, &ws).ok()?;
    if let Some(folder) = doc.get("folder").and_then(uri_path) {
        return Some(folder);
    }
    // A multi-root workspace file: its directory is where the session ran.
    let file = doc.get("workspace").and_then(uri_path)?;
    let dir = file.rsplit_once('/').map_or(file.as_str(), |(d, _)| d);
    Some(if dir.is_empty() { "/".to_string() } else { dir.to_string() })
}

/// A path from what VS Code stores for a resource: a URI string (`file:///…`, or any
/// `scheme://authority/path`), a plain path, a serialised `Uri` object (`fsPath`, `path`
/// with `authority`, `external`), or an object holding one under `uri`/`location`.
pub fn uri_path(v: &Value) -> Option<String> {
    let p = match v {
        Value::String(s) => uri_string_path(s),
        Value::Object(obj) => {
            if let Some(fs) = obj.get("fsPath").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                Some(fs.to_string())
            } else if let Some(path) = obj.get("path").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                let authority = obj.get("authority").and_then(Value::as_str).unwrap_or("");
                let is_file = obj.get("scheme").and_then(Value::as_str).is_none_or(|s| s == "file");
                Some(if is_file && !authority.is_empty() { format!("//{authority}{path}") } else { windows_drive(path) })
            } else if let Some(ext) = obj.get("external").and_then(Value::as_str) {
                uri_string_path(ext)
            } else {
                obj.get("uri").or_else(|| obj.get("location")).and_then(uri_path)
            }
        }
        _ => None,
    }?;
    (!p.trim().is_empty()).then_some(p)
}

/// `file:///home/u/a%20b` → `/home/u/a b`; `file://host/share/x` → `//host/share/x`;
/// `file:///c%3A/x` → `c:/x`; other schemes → their decoded path; no scheme → as is.
fn uri_string_path(s: &str) -> Option<String> {
    let Some((scheme, rest)) = s.split_once("://") else { return Some(s.to_string()) };
    if scheme.is_empty() || !scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) {
        return Some(s.to_string());
    }
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    let path = percent_decode(path);
    let authority = percent_decode(authority);
    if scheme == "file" && !authority.is_empty() {
        return Some(format!("//{authority}{path}"));
    }
    Some(windows_drive(&path))
}

/// `/c:/x` → `c:/x`.
fn windows_drive(path: &str) -> String {
    let b = path.as_bytes();
    if b.len() >= 3 && b[0] == b'/' && b[1].is_ascii_alphabetic() && b[2] == b':' {
        path[1..].to_string()
    } else {
        path.to_string()
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok().and_then(|h| u8::from_str_radix(h, 16).ok());
            if let Some(b) = hex {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Session;
    use proptest::prelude::*;
    use serde_json::json;

    /// What the `copilot-chat` adapter would declare.
    const COPILOT: VscodeChatDialect =
        VscodeChatDialect { harness: "copilot-chat", tools: super::COPILOT_TOOLS, injected: &InjectedText::NONE, transcripts: true };
    /// What the `positron` adapter would declare.
    const POSITRON: VscodeChatDialect = VscodeChatDialect { harness: "positron", transcripts: false, ..COPILOT };

    fn fixture(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/vscode_chat").join(rel)
    }

    fn ws1(name: &str) -> String {
        format!("User/workspaceStorage/ws1/chatSessions/{name}")
    }

    fn parse_with(d: &VscodeChatDialect, rel: &str, opts: &ParseOptions) -> (Vec<Session>, ParseStats) {
        let mut out = Vec::new();
        let stats = parse(d, &SourceRef::file(fixture(rel)), opts, &mut out).unwrap();
        (out, stats)
    }

    fn one(rel: &str) -> Session {
        let (mut out, _) = parse_with(&COPILOT, rel, &ParseOptions::default());
        assert_eq!(out.len(), 1, "{rel}");
        out.remove(0)
    }

    fn summary(s: &Session) -> Vec<(Role, &str)> {
        s.turns.iter().map(|t| (t.role, t.text.as_str())).collect()
    }

    fn edited(path: &str) -> FileTouch {
        FileTouch { path: path.to_string(), action: FileAction::Edit }
    }

    #[test]
    fn copilot_tool_ids_cover_both_namings() {
        for (name, kind) in [
            ("run_in_terminal", ToolKind::Shell),
            ("copilot_readFile", ToolKind::Read),
            ("copilot_replaceString", ToolKind::Edit),
            ("replace_string_in_file", ToolKind::Edit),
            ("copilot_createFile", ToolKind::Write),
            ("create_file", ToolKind::Write),
            ("copilot_searchCodebase", ToolKind::Other),
        ] {
            assert_eq!(COPILOT_TOOLS.kind(name), kind, "{name}");
        }
    }

    #[test]
    fn a_user_folder_is_read_with_transcripts_only_where_the_dialect_reads_them() {
        let home = fixture("");
        let user = fixture("User");
        assert!(discover_sources(&COPILOT, &user).iter().any(|s| s.path.to_string_lossy().contains("chatSessions")));
        let positron = discover_sources(&POSITRON, &home.join("Positron/User"));
        assert!(positron.iter().any(|s| s.path.ends_with("5e4d-pos.json")));
        assert!(!positron.iter().any(|s| s.path.to_string_lossy().contains("transcripts")), "Positron reads no transcripts");
        assert!(discover_sources(&POSITRON, Path::new("/nowhere")).is_empty());
    }

    #[test]
    fn mutation_log_replays_every_kind() {
        let s = one(&ws1("3b7e-session.jsonl"));
        assert_eq!((s.harness.as_str(), s.id.as_str()), ("copilot-chat", "3b7e-session"));
        assert_eq!(s.title.as_deref(), Some("Fix login 401"), "kind 1 at a top-level key");
        assert_eq!(s.project.as_deref(), Some("/home/u/my app"), "workspace.json folder, escapes decoded");
        assert_eq!(
            summary(&s),
            [
                (Role::User, "why 401?"),
                (Role::Assistant, "Token expired; refresh it."),
                (Role::User, "and the refresh token?"),
                (Role::Assistant, "Rotate it too.")
            ],
            "kind 2 push with `i` truncated the draft request; thinking skipped"
        );
        assert_eq!(s.turns[0].time, Some(Timestamp(1790000001000)));
        assert_eq!(s.turns[1].time, Some(Timestamp(1790000009000)), "responseTimestamp set by kind 1");
        assert_eq!(s.started, Some(Timestamp(1790000000000)));

        let mut stats = ParseStats::default();
        let bytes = std::fs::read(fixture(&ws1("3b7e-session.jsonl"))).unwrap();
        let state = replay_mutations(&bytes, Path::new("x"), &mut stats).unwrap();
        assert!(state.get("inputState").is_none(), "kind 3 deleted a key");
        assert!(state["requests"][1].get("tempField").is_none(), "kind 3 inside an array item");
        assert_eq!(state["requests"].as_array().unwrap().len(), 2);
        assert_eq!(stats.skipped, 0);
    }

    #[test]
    fn replay_rules_in_isolation() {
        let log = |lines: &[Value]| lines.iter().map(Value::to_string).collect::<Vec<_>>().join("\n");
        let mut stats = ParseStats::default();
        let bytes = log(&[
            json!({"kind": 0, "v": {"a": [1, 2, 3]}}),
            json!({"kind": 2, "k": ["a"], "i": 5, "v": [9]}),
            json!({"kind": 1, "k": ["a", 0], "v": "x"}),
            json!({"kind": 3, "k": ["a", 1]}),
            json!({"kind": 2, "k": ["fresh"], "v": [1]}),
        ]);
        let state = replay_mutations(bytes.as_bytes(), Path::new("x"), &mut stats).unwrap();
        assert_eq!(state, json!({"a": ["x", null, 3, null, null, 9], "fresh": [1]}), "pad to i, set by index, delete leaves a hole");
        let again = log(&[json!({"kind": 0, "v": {"a": 1}}), json!({"kind": 0, "v": {"b": 2}})]);
        assert_eq!(replay_mutations(again.as_bytes(), Path::new("x"), &mut stats), Some(json!({"b": 2})), "a later Initial replaces all");
        let bad_path =
            log(&[json!({"kind": 0, "v": {}}), json!({"kind": 1, "k": ["no", "such"], "v": 1}), json!({"kind": 1, "k": ["a"], "v": 1})]);
        assert_eq!(
            replay_mutations(bad_path.as_bytes(), Path::new("x"), &mut stats),
            None,
            "a mutation that cannot apply drops the session"
        );
        assert_eq!(replay_mutations(b"", Path::new("x"), &mut stats), None);
    }

    #[test]
    fn torn_last_line_keeps_the_replayed_state_and_a_bad_middle_line_drops_the_session() {
        let (out, stats) = parse_with(&COPILOT, &ws1("torn.jsonl"), &ParseOptions::default());
        assert_eq!(summary(&out[0]), [(Role::User, "kept question"), (Role::Assistant, "kept answer")]);
        assert_eq!(out[0].title.as_deref(), Some("Torn log"), "the set on the line before the torn one was kept");
        assert_eq!(stats.skipped, 1);
        let (out, stats) = parse_with(&COPILOT, &ws1("badmid.jsonl"), &ParseOptions::default());
        assert!(out.is_empty());
        assert_eq!(stats.skipped, 1);
    }

    #[test]
    fn json_session_maps_parts_tools_edits_and_sidecar() {
        let s = one(&ws1("5e4d-copilot.json"));
        assert_eq!(s.title.as_deref(), Some("Add retry to fetch"), "version 2 → computedTitle");
        assert_eq!(s.project.as_deref(), Some("/home/u/my app"));
        let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
        use Role::*;
        assert_eq!(
            roles,
            [User, Assistant, ToolCall, ToolCall, ToolCall, ToolCall, Assistant, ToolCall, ToolCall, Assistant, Assistant, ToolCall]
        );
        assert_eq!(s.turns[0].text, "add retry to fetchUser");
        let prose = &s.turns[1];
        assert_eq!(prose.text, "I'll edit api.ts now.\n\napi.ts", "inline reference by name, edit pill as the file name");
        assert_eq!(prose.files, vec![edited("/home/u/my app/src/api.ts")]);
        assert_eq!(prose.time, Some(Timestamp(1790100009000)));
        let group = &s.turns[2];
        assert_eq!(group.tool.as_ref().unwrap().name, "textEditGroup");
        assert_eq!(
            group.edit,
            Some(Edit { path: "/home/u/my app/src/api.ts".into(), old: String::new(), new: Some("retry(fetchUser, 3)".into()) })
        );
        let read = &s.turns[3];
        assert_eq!(read.files, vec![FileTouch { path: "/home/u/my app/src/util.ts".into(), action: FileAction::Read }]);
        let term = s.turns[4].tool.as_ref().unwrap();
        assert_eq!((term.name.as_str(), term.command.as_deref()), ("run_in_terminal", Some("npm test -- --watch=false")));
        assert_eq!(term.exit, None);
        let replace = &s.turns[5];
        assert_eq!(replace.tool.as_ref().unwrap().call_id.as_deref(), Some("call_edit"));
        assert_eq!(replace.files, vec![edited("/home/u/my app/src/api.ts")]);
        assert_eq!(
            replace.edit,
            Some(Edit { path: "/home/u/my app/src/api.ts".into(), old: "fetchUser()".into(), new: Some("retry(fetchUser, 3)".into()) }),
            "the round's edit joins the invocation of the same id"
        );
        assert_eq!(s.turns[6].text, "Done.", "progress and warning parts skipped, markdownVuln kept");
        let create = &s.turns[7];
        assert_eq!(create.files, vec![FileTouch { path: "/home/u/my app/src/retry.ts".into(), action: FileAction::Write }]);
        assert_eq!(create.edit.as_ref().unwrap().new.as_deref(), Some("export function retry() {}"));
        let patch = &s.turns[8];
        assert_eq!(patch.files, vec![edited("/home/u/my app/src/b.ts")]);
        assert_eq!(patch.edit.as_ref().unwrap().old, "old line");
        assert!(!s.turns.iter().any(|t| t.files.iter().any(|f| f.path.ends_with("x.ts"))), "a call whose result is ERROR is skipped");
        assert_eq!(
            summary(&s)[9..11],
            [(Assistant, "Continuing."), (Assistant, "Ran it.")],
            "system-initiated and confirmation requests are not speech"
        );
        let sidecar = &s.turns[11];
        assert_eq!(sidecar.files, vec![edited("/home/u/my app/src/api.ts"), edited("/home/u/my app/src/retry.ts")]);
        assert!(!s.turns.iter().any(|t| t.text.contains("octocat")));
    }

    #[test]
    fn reasoning_only_when_asked() {
        let (out, _) = parse_with(&COPILOT, &ws1("3b7e-session.jsonl"), &ParseOptions { include_reasoning: true });
        let s = &out[0];
        assert_eq!(s.turns[1].role, Role::Reasoning);
        assert_eq!(s.turns[1].text, "check the expiry claim");
        assert_eq!(s.turns[2].text, "Token expired; refresh it.");
    }

    #[test]
    fn transcript_events_fold_calls_and_drop_failed_edits() {
        let (out, stats) = parse_with(
            &COPILOT,
            "User/workspaceStorage/ws3/GitHub.copilot-chat/transcripts/7c9e-transcript.jsonl",
            &ParseOptions::default(),
        );
        assert_eq!(stats.skipped, 1, "the one bad line");
        let s = &out[0];
        assert_eq!(s.id, "7c9e-transcript");
        assert_eq!(s.title.as_deref(), Some("make the tests pass"));
        assert_eq!(s.project.as_deref(), Some("/home/u/svc"), "no workspace.json: the common directory of the touched paths");
        assert_eq!(s.started, Timestamp::parse_str("2026-10-01T08:00:00Z"));
        assert_eq!(s.updated, Timestamp::parse_str("2026-10-01T08:00:15Z"));
        let roles: Vec<Role> = s.turns.iter().map(|t| t.role).collect();
        assert_eq!(roles, [Role::User, Role::Assistant, Role::ToolCall, Role::ToolCall, Role::ToolCall, Role::ToolCall]);
        let npm = s.turns[2].tool.as_ref().unwrap();
        assert_eq!(npm.command.as_deref(), Some("npm test"), "first line; the start event merged into the request");
        assert!(!npm.is_error);
        let failed = &s.turns[3];
        assert!(failed.tool.as_ref().unwrap().is_error);
        assert_eq!(failed.edit, None, "a failed edit did not apply");
        assert_eq!(failed.files, vec![edited("/home/u/svc/src/a.ts")]);
        let running = &s.turns[4];
        assert_eq!(running.edit.as_ref().unwrap().new.as_deref(), Some("test('b')"), "a still-running call keeps its edit");
        assert_eq!(running.files[0].action, FileAction::Write);
        assert_eq!(s.turns[5].edit, Some(Edit { path: "/home/u/svc/src/c.ts".into(), old: "old".into(), new: Some("new".into()) }));
    }

    #[test]
    fn empty_window_profiles_and_positron() {
        let e = one("User/globalStorage/emptyWindowChatSessions/e1.json");
        assert_eq!(e.project.as_deref(), Some("/home/u/scratch"), "workingDirectory");
        assert_eq!(summary(&e), [(Role::User, "hello?"), (Role::Assistant, "Hi.")]);
        let p = one("User/profiles/p1/workspaceStorage/ws2/chatSessions/p2.jsonl");
        assert_eq!(p.project.as_deref(), Some("/home/u/multi"), "the directory of the .code-workspace file");
        assert_eq!(p.title, None, "no version → no title");
        let (out, _) = parse_with(&POSITRON, "Positron/User/workspaceStorage/h1/chatSessions/5e4d-pos.json", &ParseOptions::default());
        let pos = &out[0];
        assert_eq!((pos.harness.as_str(), pos.id.as_str()), ("positron", "5e4d-pos"));
        assert_eq!(pos.project.as_deref(), Some("/home/u/analysis"));
        assert_eq!(summary(pos), [(Role::User, "plot mpg vs hp"), (Role::Assistant, "Use ggplot(mtcars, aes(hp, mpg)) + geom_point().")]);
        assert_eq!(pos.turns[0].time, Some(Timestamp(1781293600000)));
    }

    #[test]
    fn discovery_probes_the_store_folders_and_hides_superseded_json() {
        let user = fixture("User");
        let found = discover_sources(&COPILOT, &user);
        let names: Vec<String> = found.iter().map(|s| s.path.strip_prefix(&user).unwrap().display().to_string()).collect();
        assert_eq!(
            names,
            [
                "globalStorage/emptyWindowChatSessions/e1.json",
                "profiles/p1/workspaceStorage/ws2/chatSessions/p2.jsonl",
                "workspaceStorage/ws1/chatSessions/3b7e-session.jsonl",
                "workspaceStorage/ws1/chatSessions/5e4d-copilot.json",
                "workspaceStorage/ws1/chatSessions/badmid.jsonl",
                "workspaceStorage/ws1/chatSessions/torn.jsonl",
                "workspaceStorage/ws3/GitHub.copilot-chat/transcripts/7c9e-transcript.jsonl",
            ]
        );
        let json = found.iter().find(|s| s.path.ends_with("5e4d-copilot.json")).unwrap();
        assert_eq!(
            json.parts,
            vec![
                user.join("workspaceStorage/ws1/workspace.json"),
                user.join("workspaceStorage/ws1/chatEditingSessions/5e4d-copilot/state.json")
            ]
        );
        assert_eq!(discover_sources(&POSITRON, &user).len(), 6, "no transcripts for positron");
        // A root not laid out like a User folder is walked.
        let walked = discover_sources(&COPILOT, &fixture("User/workspaceStorage"));
        assert_eq!(walked.len(), 5);
    }

    #[test]
    fn uris_decode_to_paths() {
        assert_eq!(uri_path(&json!("file:///home/u/a%20b/c.ts")).as_deref(), Some("/home/u/a b/c.ts"));
        assert_eq!(uri_path(&json!("file://server/share/x")).as_deref(), Some("//server/share/x"), "UNC host kept");
        assert_eq!(uri_path(&json!("file:///c%3A/Users/x")).as_deref(), Some("c:/Users/x"));
        assert_eq!(uri_path(&json!("vscode-remote://ssh-remote%2Bbox/srv/app")).as_deref(), Some("/srv/app"));
        assert_eq!(uri_path(&json!({"$mid": 1, "path": "/p/q", "scheme": "file"})).as_deref(), Some("/p/q"));
        assert_eq!(uri_path(&json!({"uri": {"fsPath": "/f"}})).as_deref(), Some("/f"));
        assert_eq!(uri_path(&json!("%")).as_deref(), Some("%"));
        assert_eq!(uri_path(&json!(3)), None);
    }

    #[test]
    fn truncated_json_is_a_corrupt_error_naming_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("s.json");
        std::fs::write(&path, b"{\"version\":3,\"requests\":[{\"mess").unwrap();
        let err = parse(&COPILOT, &SourceRef::file(&path), &ParseOptions::default(), &mut Vec::new()).unwrap_err();
        assert!(matches!(&err, FormatError::Corrupt { path: p, .. } if p == &path), "{err}");
    }

    const FIXTURES: &[&str] = &[
        "User/workspaceStorage/ws1/chatSessions/3b7e-session.jsonl",
        "User/workspaceStorage/ws1/chatSessions/5e4d-copilot.json",
        "User/workspaceStorage/ws3/GitHub.copilot-chat/transcripts/7c9e-transcript.jsonl",
        "User/globalStorage/emptyWindowChatSessions/e1.json",
        "Positron/User/workspaceStorage/h1/chatSessions/5e4d-pos.json",
    ];

    /// Parses `bytes` as each container kind.
    fn parse_as_every_kind(bytes: &[u8]) {
        let tmp = tempfile::tempdir().unwrap();
        let sessions = tmp.path().join("chatSessions");
        let transcripts = tmp.path().join("GitHub.copilot-chat/transcripts");
        std::fs::create_dir_all(&sessions).unwrap();
        std::fs::create_dir_all(&transcripts).unwrap();
        for path in [sessions.join("a.json"), sessions.join("a.jsonl"), transcripts.join("a.jsonl")] {
            std::fs::write(&path, bytes).unwrap();
            let _ = parse(&COPILOT, &SourceRef::file(&path), &ParseOptions { include_reasoning: true }, &mut Vec::new());
        }
    }

    /// Retypes fields all through a document (see the Cline family's test of the same name).
    fn retype_value(v: &mut Value, mode: u8, n: &mut u32) {
        *n += 1;
        match v {
            Value::String(_) if mode == 0 && n.is_multiple_of(2) => *v = Value::from(7),
            Value::Array(items) if mode == 1 && n.is_multiple_of(3) => *v = json!({ "items": items.clone() }),
            Value::Object(_) if mode == 2 && n.is_multiple_of(5) => *v = Value::from("retyped"),
            Value::Array(items) => items.iter_mut().for_each(|i| retype_value(i, mode, n)),
            Value::Object(map) => {
                if mode == 3 {
                    let keys: Vec<String> = map.keys().cloned().collect();
                    for (k, key) in keys.iter().enumerate() {
                        if k % 3 == (*n % 3) as usize {
                            map.remove(key);
                        }
                    }
                }
                map.values_mut().for_each(|i| retype_value(i, mode, n));
            }
            _ => {}
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            parse_as_every_kind(&bytes);
        }

        #[test]
        fn never_panics_on_truncated_or_retyped_fixtures(which in 0..FIXTURES.len(), cut in 0.0f64..1.0, retype in proptest::option::of(0u8..4)) {
            let whole = std::fs::read(fixture(FIXTURES[which])).unwrap();
            let mut bytes = whole[..(whole.len() as f64 * cut) as usize].to_vec();
            if let Some(mode) = retype {
                // Line by line, so mutation logs and transcripts stay JSONL.
                let lines: Vec<String> = String::from_utf8_lossy(&whole)
                    .lines()
                    .map(|l| match serde_json::from_str::<Value>(l) {
                        Ok(mut v) => {
                            retype_value(&mut v, mode, &mut 0);
                            v.to_string()
                        }
                        Err(_) => l.to_string(),
                    })
                    .collect();
                bytes = lines.join("\n").into_bytes();
            }
            parse_as_every_kind(&bytes);
        }

        #[test]
        fn never_panics_on_arbitrary_mutations(ops in proptest::collection::vec((0u8..5, proptest::collection::vec(prop_oneof![Just(json!("requests")), Just(json!(0)), Just(json!("response")), Just(json!(9))], 0..4), proptest::option::of(0u64..5)), 0..12)) {
            let mut log = vec![json!({"kind": 0, "v": {"requests": [{"message": "m", "response": []}]}}).to_string()];
            for (kind, k, i) in ops {
                let mut m = json!({"kind": kind, "k": k, "v": [{"value": "x"}]});
                if let Some(i) = i {
                    m["i"] = json!(i);
                }
                log.push(m.to_string());
            }
            let mut stats = ParseStats::default();
            let _ = replay_mutations(log.join("\n").as_bytes(), Path::new("x"), &mut stats);
            parse_as_every_kind(log.join("\n").as_bytes());
        }
    }
}

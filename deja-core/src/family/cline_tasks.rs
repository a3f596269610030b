//! Cline task JSON: the whole-file task transcripts that Cline (both store generations),
//! Roo Code and Kilo Code's VS Code extension write. One reader, configured by a
//! [`ClineDialect`].
//!
//! Two generations share the message shape (Anthropic `{role, content}` messages whose
//! `content` is a string or a block array):
//!
//! * **modern** (Cline CLI/SDK, generation [`GENERATION_MODERN`]):
//!   `<sessions>/<id>/<id>.messages.json` = `{version, agent, sessionId, messages[{id, role,
//!   content, ts}], system_prompt}` beside the manifest `<id>.json` (`cwd`, `workspace_root`,
//!   `prompt`, `metadata.title`, `created_at`/`started_at`, `updated_at`/`ended_at`).
//! * **legacy** (VS Code extensions, generation [`GENERATION_LEGACY`]):
//!   `<root>/tasks/<taskId>/api_conversation_history.json` = a JSON array of messages, with
//!   metadata in `history_item.json` beside it (Roo, Kilo) or in the entry of
//!   `<root>/state/taskHistory.json` whose `id` is the task id (Cline).
//!
//! | record | Turn | rule |
//! | --- | --- | --- |
//! | `role` `user`, `content` string or `text` blocks | `User` | blocks trimmed, newline-joined; a leading `<task…>`, `<user_message…>` or `<user_input…>` envelope (attributes allowed) is unwrapped, then [`TASK_INJECTED`]-style dialect rules strip `<environment_details>` and `<feedback>` tags |
//! | `role` `assistant`, string or `text` blocks | `Assistant` | trimmed, newline-joined |
//! | `thinking` / `reasoning` blocks | `Reasoning` | only with `ParseOptions::include_reasoning` |
//! | `tool_use` (`id`, `name`, `input`) | `ToolCall` | name; `input.commands[]` → one call turn per command, `input.command` → command; `input.files[]` / `path` / `file_path` / `target_file` → `files` with the [`ToolMap`] action (modern: a relative path is joined onto the manifest's `cwd`); `old_text`/`new_text`, `operations[{search, replace}]`, `code_edit` (`// ... existing code ...` lines dropped), `content` of write tools → `edit` |
//! | `tool_result` (`tool_use_id`, `content`) | folded into its call | `content` string or `text` blocks; `run_commands` items `{query, result, success}` fold one per command (`success: false` → `is_error`); a content string that is one such item serialized (the CLI's `editor`) is decoded the same way, `error` the text when `result` is empty; `is_error` kept; a shell result's `Exit code: N` line → exit status; an unpaired result → `ToolOutput` |
//! | message with `isSummary: true` (Roo's condense) | `Summary` | its text |
//! | images, files, other block types, roles other than user/assistant | skipped | |
//! | modern transcript whose `agent` is present and not `lead` | skipped file | sub-agent/teammate files share the format; counted in `skipped` |
//! | modern `system_prompt` | skipped | harness-authored |
//!
//! Tool blocks are decoded in the modern store always, and in legacy-shaped tasks only
//! when the dialect sets [`ClineDialect::legacy_tools`] (the Cline and Roo pages say their
//! legacy tasks yield text only; the Kilo page decodes them).
//!
//! Session fields:
//!
//! | field | modern | legacy |
//! | --- | --- | --- |
//! | id | the session folder name | [`ClineDialect::legacy_id_prefix`] + the task folder name |
//! | title | manifest `metadata.title`, else the first line of `prompt` (≤ 120 bytes) | first line of the metadata `task` (≤ 120 bytes) |
//! | project | manifest `cwd`, else `workspace_root`, else [`ClineDialect::default_project`] | `workspace` / `cwdOnTaskInitialization`, else the default |
//! | times | message `ts` (ms), missing → session start; start `created_at`/`started_at`, end `updated_at`/`ended_at` | message `ts` when present, else metadata `ts` (ms, else the transcript's mtime) + index seconds |
//! | parent | — (recorded only in Cline's `sessions.db`) | metadata `parentTaskId` (Roo), prefixed like the id |
//!
//! Dialect fields and who needs them:
//!
//! | field | cline | roo | kilocode (extension) |
//! | --- | --- | --- | --- |
//! | `harness` | `"cline"` | `"roo"` | `"kilocode"` |
//! | `tools` | modern vocabulary (`run_commands`, `read_files`, `editor`) | Roo vocabulary (unused while `legacy_tools` is off) | Roo vocabulary + `search_and_replace`, `fast_edit_file`, `write_file`, `delete_file`, `generate_image` |
//! | `injected` | [`TASK_INJECTED`] | [`TASK_INJECTED`] | [`TASK_INJECTED`] |
//! | `legacy_id_prefix` | `"cline-task-"` | `"roo-task-"` | `""` (the page names none) |
//! | `legacy_tools` | `false` | `false` | `true` |
//! | `default_project` | `Some("cline")` | `Some("roo")` | `None` |
//!
//! Discovery helpers: [`path_list`] for the `DEJA_*_ROOTS` path lists, [`modern_sources`],
//! [`legacy_sources`] (every file of a task is a fingerprint part of its source) and
//! [`task_dir_sources`] for one `tasks` directory,
//! [`global_storage_roots`] for the editor hosts, and [`newest_generation_per_task`] for a
//! task present in both generations.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::builder::SessionBuilder;
use crate::discover::{find_files, is_dir_entry, is_file_entry};
use crate::env::StoreEnv;
use crate::format::{FormatError, ParseOptions, ParseStats, SessionSink};
use crate::model::{cap_text, Edit, ExitStatus, FileAction, FileTouch, Role, SourceRef, Timestamp, ToolUse, Turn, MAX_EDIT_BYTES};
use crate::patch::join_cwd;
use crate::read::{parse_json_document, read_source};
use crate::text::InjectedText;
use crate::work::{ToolKind, ToolMap};

/// What differs between the harnesses writing Cline task JSON.
#[derive(Debug, Clone, Copy)]
pub struct ClineDialect {
    /// The adapter id the sessions carry.
    pub harness: &'static str,
    /// Tool names → what they do (shell, read, edit, write).
    pub tools: ToolMap,
    /// The harness's injected text, stripped from user text (normally [`TASK_INJECTED`]).
    pub injected: &'static InjectedText,
    /// Prefix of legacy session ids (`cline-task-`), keeping them apart from other ids.
    pub legacy_id_prefix: &'static str,
    /// Decode `tool_use`/`tool_result` blocks in legacy-shaped tasks too.
    pub legacy_tools: bool,
    /// The project when the task records no working directory.
    pub default_project: Option<&'static str>,
}

/// The VS Code extension store: `tasks/<id>/api_conversation_history.json`.
pub const GENERATION_LEGACY: u32 = 1;
/// The Cline CLI/SDK store: `sessions/<id>/<id>.messages.json`.
pub const GENERATION_MODERN: u32 = 2;

/// File name suffix of a modern transcript.
pub const MODERN_SUFFIX: &str = ".messages.json";
/// File name of a legacy transcript.
pub const LEGACY_TRANSCRIPT: &str = "api_conversation_history.json";
/// Per-task metadata beside a legacy transcript (Roo, Kilo).
pub const HISTORY_ITEM: &str = "history_item.json";

/// The editor hosts whose global storage holds the extensions' task folders.
pub const EDITOR_HOSTS: &[&str] = &["Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf"];

/// Text Cline-lineage harnesses inject into user messages: the `<environment_details>`
/// snapshot appended to every user message (removed), and the `<feedback>` wrapper around
/// what the user typed in reply to a tool (tags removed, speech kept).
pub static TASK_INJECTED: InjectedText = InjectedText {
    blocks: &["environment_details"],
    spans: &[],
    wrappers: &["feedback"],
    preambles: &[],
    headed_preambles: &[],
    line_prefixes: &[],
    not_titles: &[],
};

/// Envelopes around the prompt; the opening tag may carry attributes (`<user_input mode="act">`).
const ENVELOPES: &[&str] = &["task", "user_message", "user_input"];
const MAX_TITLE_BYTES: usize = 120;
/// `<sessions>/<id>/<id>.messages.json`; a little room for nesting.
const MODERN_WALK_DEPTH: usize = 3;

// ---------------------------------------------------------------------------------------
// Discovery

/// The VS Code-style `User` folder of an editor product (`Code`, `Positron`…):
/// macOS `~/Library/Application Support/<p>/User`, Windows `%APPDATA%\<p>\User`, else
/// `${XDG_CONFIG_HOME:-~/.config}/<p>/User`.
pub fn editor_user_dir(env: &StoreEnv, product: &str) -> PathBuf {
    let base = if cfg!(target_os = "macos") {
        env.home().join("Library").join("Application Support")
    } else if cfg!(windows) {
        env.path_var("APPDATA").unwrap_or_else(|| env.home().join("AppData").join("Roaming"))
    } else {
        env.xdg_config_home()
    };
    base.join(product).join("User")
}

/// `<User>/globalStorage/<extension_id>` for every host in [`EDITOR_HOSTS`] (candidates;
/// the caller checks which exist, e.g. with `Discovery::looked_at`).
pub fn global_storage_roots(env: &StoreEnv, extension_id: &str) -> Vec<PathBuf> {
    EDITOR_HOSTS.iter().map(|host| editor_user_dir(env, host).join("globalStorage").join(extension_id)).collect()
}

/// A path-list variable (`DEJA_CLINE_ROOTS`, `DEJA_ROO_ROOTS`…), split the OS's way (`:` on
/// Unix, `;` on Windows), `~` expanded, empty entries dropped. `None` when unset or empty,
/// so the caller falls back to its default roots; a set list replaces them.
pub fn path_list(env: &StoreEnv, var: &str) -> Option<Vec<PathBuf>> {
    env.path_list(var)
}

/// Every modern transcript under a sessions directory, its manifest as a fingerprint part.
pub fn modern_sources(sessions_dir: &Path) -> Vec<SourceRef> {
    let mut out: Vec<SourceRef> = find_files(sessions_dir, MODERN_WALK_DEPTH, &|n| n.ends_with(MODERN_SUFFIX))
        .into_iter()
        .map(|path| {
            let mut src = SourceRef::file(&path);
            src.generation = Some(GENERATION_MODERN);
            if let Some(manifest) = modern_manifest_path(&path).filter(|m| m.is_file()) {
                src = src.with_part(manifest);
            }
            src
        })
        .collect();
    crate::format::Discovery::sort_sources(&mut out);
    out
}

/// Every legacy task under an extension root (`<root>/tasks/<id>/api_conversation_history.json`).
/// The task's other JSON files, the task folder itself and `<root>/state/taskHistory.json`
/// are fingerprint parts: the title and times live there.
pub fn legacy_sources(root: &Path) -> Vec<SourceRef> {
    let history = root.join("state").join("taskHistory.json");
    task_dir_sources(&root.join("tasks"), history.is_file().then_some(history.as_path()))
}

/// Every legacy task in one `tasks` directory (`<tasks_dir>/<id>/api_conversation_history.json`),
/// for a read override that names the task folders' directory itself; `history` (a
/// `taskHistory.json`) is added to each source's parts when given.
pub fn task_dir_sources(tasks_dir: &Path, history: Option<&Path>) -> Vec<SourceRef> {
    let mut out = Vec::new();
    for entry in crate::discover::list(tasks_dir) {
        if !is_dir_entry(&entry) {
            continue;
        }
        let dir = entry.path();
        let transcript = dir.join(LEGACY_TRANSCRIPT);
        if !transcript.is_file() {
            continue;
        }
        let mut src = SourceRef::file(&transcript).with_part(&dir);
        src.generation = Some(GENERATION_LEGACY);
        {
            let mut parts: Vec<PathBuf> = crate::discover::list(&dir)
                .into_iter()
                .filter(|e| {
                    is_file_entry(e) && {
                        let n = e.file_name();
                        let n = n.to_string_lossy();
                        n.ends_with(".json") && n != LEGACY_TRANSCRIPT
                    }
                })
                .map(|e| e.path())
                .collect();
            parts.sort();
            src.parts.extend(parts);
        }
        if let Some(h) = history {
            src = src.with_part(h);
        }
        out.push(src);
    }
    crate::format::Discovery::sort_sources(&mut out);
    out
}

/// The task folder name of a source (the session id before any prefix).
pub fn task_id_of(src: &SourceRef) -> Option<String> {
    src.path.parent()?.file_name()?.to_str().filter(|s| !s.is_empty()).map(str::to_string)
}

/// Keeps one source per task folder name: the highest generation, and among equals the
/// most recently modified transcript. Sources without a task folder are kept as they are.
pub fn newest_generation_per_task(sources: Vec<SourceRef>) -> Vec<SourceRef> {
    let mut best: HashMap<String, (u32, Option<std::time::SystemTime>, usize)> = HashMap::new();
    let mut keep = vec![true; sources.len()];
    for (i, src) in sources.iter().enumerate() {
        let Some(task) = task_id_of(src) else { continue };
        let rank = (generation_of(src), std::fs::metadata(&src.path).and_then(|m| m.modified()).ok());
        match best.get(&task) {
            Some(&(g, m, _)) if (g, m) >= rank => keep[i] = false,
            Some(&(_, _, j)) => {
                keep[j] = false;
                best.insert(task, (rank.0, rank.1, i));
            }
            None => {
                best.insert(task, (rank.0, rank.1, i));
            }
        }
    }
    sources.into_iter().zip(keep).filter_map(|(s, k)| k.then_some(s)).collect()
}

/// The generation a source belongs to: its own field, else its file name.
fn generation_of(src: &SourceRef) -> u32 {
    src.generation.unwrap_or_else(|| if is_modern(&src.path) { GENERATION_MODERN } else { GENERATION_LEGACY })
}

fn is_modern(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(MODERN_SUFFIX))
}

/// `<dir>/<id>.messages.json` → `<dir>/<id>.json`.
fn modern_manifest_path(transcript: &Path) -> Option<PathBuf> {
    let name = transcript.file_name()?.to_str()?;
    let stem = name.strip_suffix(MODERN_SUFFIX)?;
    Some(transcript.with_file_name(format!("{stem}.json")))
}

// ---------------------------------------------------------------------------------------
// Parsing

/// Parses one task transcript (either generation, told apart by the file name) into one
/// session. A transcript that is not JSON is a `Corrupt` error naming the file; a
/// document of the wrong shape, or a non-lead agent file, is counted as skipped.
pub fn parse(d: &ClineDialect, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let mut stats = ParseStats::default();
    let bytes = read_source(&src.path, &mut stats)?.bytes;
    let doc = parse_json_document(&bytes, &src.path)?;
    stats.records += 1;
    stats.end_offset = bytes.len() as u64;
    if is_modern(&src.path) {
        parse_modern(d, src, opts, &doc, &mut stats, out);
    } else {
        parse_legacy(d, src, opts, &doc, &mut stats, out);
    }
    Ok(stats)
}

fn parse_modern(d: &ClineDialect, src: &SourceRef, opts: &ParseOptions, doc: &Value, stats: &mut ParseStats, out: &mut dyn SessionSink) {
    let path = &src.path;
    if let Some(agent) = doc.get("agent").filter(|a| !a.is_null()) {
        if agent.as_str() != Some("lead") {
            stats.skip(|| format!("{}: agent {agent} is not the lead; sub-agent files are skipped", path.display()));
            return;
        }
    }
    let Some(messages) = doc.get("messages").and_then(Value::as_array) else {
        stats.skip(|| format!("{}: no `messages` array", path.display()));
        return;
    };
    let id = task_id_of(src)
        .or_else(|| text(doc, "sessionId").map(str::to_string))
        .unwrap_or_else(|| path.file_name().and_then(|n| n.to_str()).unwrap_or("").trim_end_matches(MODERN_SUFFIX).to_string());
    let manifest = modern_manifest_path(path).and_then(|m| read_side_json(&m, stats)).unwrap_or(Value::Null);
    let started = time_field(&manifest, &["created_at", "started_at"]);
    let ended = time_field(&manifest, &["updated_at", "ended_at"]);
    let project = text(&manifest, "cwd").or_else(|| text(&manifest, "workspace_root")).map(str::to_string);
    let mut walk = TaskWalk::new(d, opts, SessionBuilder::new(d.harness, id, src.clone()), true);
    // The CLI's editor takes the path the model wrote, often relative to the session's cwd.
    walk.cwd = project.clone();
    walk.b.touch(started);
    walk.b.touch(ended);
    walk.b.touch(doc.get("updated_at").and_then(Timestamp::from_json));
    for msg in messages {
        let time = msg.get("ts").and_then(Timestamp::from_json).or(started);
        walk.message(msg, time, stats);
    }
    let title = manifest
        .get("metadata")
        .and_then(|m| text(m, "title"))
        .or_else(|| text(&manifest, "prompt"))
        .map(first_line_capped)
        .filter(|t| !t.is_empty());
    walk.finish(project, title, None, out);
}

fn parse_legacy(d: &ClineDialect, src: &SourceRef, opts: &ParseOptions, doc: &Value, stats: &mut ParseStats, out: &mut dyn SessionSink) {
    let path = &src.path;
    let Some(messages) = doc.as_array() else {
        stats.skip(|| format!("{}: a legacy transcript is a JSON array", path.display()));
        return;
    };
    let task_id = task_id_of(src).unwrap_or_else(|| "task".to_string());
    let meta = legacy_metadata(path, &task_id, stats);
    let base = meta
        .as_ref()
        .and_then(|m| m.get("ts"))
        .and_then(Timestamp::from_json)
        .or_else(|| std::fs::metadata(path).and_then(|m| m.modified()).ok().map(system_time));
    let id = format!("{}{task_id}", d.legacy_id_prefix);
    let mut walk = TaskWalk::new(d, opts, SessionBuilder::new(d.harness, id, src.clone()), d.legacy_tools);
    for (i, msg) in messages.iter().enumerate() {
        // No per-message time in the legacy shape (Roo adds `ts` on newer tasks): the base
        // time plus the message's index in seconds keeps the order.
        let synthetic = base.map(|b| Timestamp(b.0.saturating_add((i as i64).saturating_mul(1000))));
        let time = msg.get("ts").and_then(Timestamp::from_json).or(synthetic);
        walk.message(msg, time, stats);
    }
    let meta = meta.unwrap_or(Value::Null);
    let project = text(&meta, "workspace").or_else(|| text(&meta, "cwdOnTaskInitialization")).map(str::to_string);
    let title = text(&meta, "task").map(first_line_capped).filter(|t| !t.is_empty());
    let parent = text(&meta, "parentTaskId").map(|p| format!("{}{p}", d.legacy_id_prefix));
    walk.finish(project, title, parent, out);
}

/// The task's metadata: `history_item.json` beside the transcript (Roo, Kilo), else the
/// matching entry of `<root>/state/taskHistory.json` (Cline).
fn legacy_metadata(transcript: &Path, task_id: &str, stats: &mut ParseStats) -> Option<Value> {
    let dir = transcript.parent()?;
    if let Some(item) = read_side_json(&dir.join(HISTORY_ITEM), stats).filter(Value::is_object) {
        return Some(item);
    }
    let root = dir.parent()?.parent()?;
    let history = read_side_json(&root.join("state").join("taskHistory.json"), stats)?;
    history.as_array()?.iter().find(|e| e.get("id").and_then(id_string).as_deref() == Some(task_id)).cloned()
}

/// A side file (manifest, metadata) as JSON; missing is silent, broken is a noted problem.
fn read_side_json(path: &Path, stats: &mut ParseStats) -> Option<Value> {
    if !path.is_file() {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    match parse_json_document(&bytes, path) {
        Ok(v) => Some(v),
        Err(e) => {
            stats.problem(e.to_string());
            None
        }
    }
}

/// An id written as a string or a number.
fn id_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn system_time(t: std::time::SystemTime) -> Timestamp {
    let ms = t.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
    Timestamp(ms)
}

/// A non-empty string field.
fn text<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty())
}

/// The first of `keys` that holds a timestamp.
fn time_field(v: &Value, keys: &[&str]) -> Option<Timestamp> {
    keys.iter().find_map(|k| v.get(*k).and_then(Timestamp::from_json))
}

/// The first non-empty line, cut to 120 bytes on a char boundary.
fn first_line_capped(s: &str) -> String {
    let mut line = s.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("").to_string();
    cap_text(&mut line, MAX_TITLE_BYTES);
    line
}

/// Drops a leading `<task…>`/`<user_message…>`/`<user_input…>` opening tag and its
/// closing tag; other text is returned as is.
pub fn unwrap_envelope(text: &str) -> String {
    let t = text.trim_start();
    for tag in ENVELOPES {
        let Some(rest) = t.strip_prefix('<').and_then(|r| r.strip_prefix(tag)) else { continue };
        if !rest.starts_with(|c: char| c == '>' || c.is_whitespace()) {
            continue;
        }
        let Some(gt) = rest.find('>') else { continue };
        let inner = &rest[gt + 1..];
        let close = format!("</{tag}>");
        return match inner.find(&close) {
            Some(end) => format!("{}{}", &inner[..end], &inner[end + close.len()..]),
            None => inner.to_string(),
        }
        .trim()
        .to_string();
    }
    text.trim().to_string()
}

/// Walks the messages of one task, folding tool results into their calls.
struct TaskWalk<'a> {
    d: &'a ClineDialect,
    opts: &'a ParseOptions,
    b: SessionBuilder,
    decode_tools: bool,
    /// Per `tool_use` id: the builder keys of its call turns (one per command) and
    /// whether it is a shell tool.
    calls: HashMap<String, (Vec<String>, bool)>,
    /// The directory relative tool paths are joined onto (modern sessions: the manifest's
    /// `cwd`); `None` keeps paths as written.
    cwd: Option<String>,
}

impl<'a> TaskWalk<'a> {
    fn new(d: &'a ClineDialect, opts: &'a ParseOptions, b: SessionBuilder, decode_tools: bool) -> Self {
        TaskWalk { d, opts, b, decode_tools, calls: HashMap::new(), cwd: None }
    }

    fn message(&mut self, msg: &Value, time: Option<Timestamp>, stats: &mut ParseStats) {
        let role = match msg.get("role").and_then(Value::as_str) {
            Some(r @ ("user" | "assistant")) => r,
            Some(_) => return, // system/developer: harness-authored
            None => {
                stats.skip(|| "a message without a role".to_string());
                return;
            }
        };
        let summary = msg.get("isSummary").and_then(Value::as_bool) == Some(true);
        // Text is flushed before each tool or reasoning block so turns keep the block order.
        let mut said: Vec<&str> = Vec::new();
        match msg.get("content") {
            Some(Value::String(s)) => said.push(s),
            Some(Value::Array(blocks)) => {
                for block in blocks {
                    match block.get("type").and_then(Value::as_str).unwrap_or("") {
                        "text" => said.extend(block.get("text").and_then(Value::as_str)),
                        "thinking" | "reasoning" => {
                            self.flush_text(role, summary, &mut said, time);
                            self.reasoning(block, time);
                        }
                        "tool_use" if self.decode_tools => {
                            self.flush_text(role, summary, &mut said, time);
                            self.tool_use(block, time);
                        }
                        "tool_result" if self.decode_tools => {
                            self.flush_text(role, summary, &mut said, time);
                            self.tool_result(block, time);
                        }
                        // images, files, redacted thinking, tools the dialect does not decode
                        _ => {}
                    }
                }
            }
            _ => {}
        }
        self.flush_text(role, summary, &mut said, time);
    }

    /// Pushes the text blocks collected so far as one turn.
    fn flush_text(&mut self, role: &str, summary: bool, said: &mut Vec<&str>, time: Option<Timestamp>) {
        let joined = said.drain(..).map(str::trim).filter(|s| !s.is_empty()).collect::<Vec<_>>().join("\n");
        if joined.is_empty() {
            return;
        }
        let turn = if summary {
            Turn::new(Role::Summary, joined)
        } else if role == "user" {
            Turn::new(Role::User, self.d.injected.strip(&unwrap_envelope(&joined)))
        } else {
            Turn::new(Role::Assistant, joined)
        };
        self.b.push(turn.at(time));
    }

    fn reasoning(&mut self, block: &Value, time: Option<Timestamp>) {
        if !self.opts.include_reasoning {
            return;
        }
        if let Some(t) = block.get("thinking").or_else(|| block.get("text")).and_then(Value::as_str) {
            self.b.push(Turn::new(Role::Reasoning, t.trim()).at(time));
        }
    }

    fn tool_use(&mut self, block: &Value, time: Option<Timestamp>) {
        let id = block.get("id").and_then(Value::as_str).unwrap_or("").to_string();
        let name = block.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()).unwrap_or("tool");
        // Some providers leave the input as the JSON text the model streamed.
        let input = match block.get("input") {
            Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Null),
            Some(v) => v.clone(),
            None => Value::Null,
        };
        let work = tool_work(&self.d.tools, name, &input, self.cwd.as_deref());
        let shell = self.d.tools.kind(name) == ToolKind::Shell;
        // A call with several commands becomes one call turn per command, so each keeps its
        // own output and failure; files and the edit go on the first.
        let commands: Vec<Option<String>> =
            if work.commands.is_empty() { vec![None] } else { work.commands.into_iter().map(Some).collect() };
        let mut keys = Vec::with_capacity(commands.len());
        let mut files = Some(work.files);
        let mut edit = work.edit;
        for (i, command) in commands.into_iter().enumerate() {
            let key = if i == 0 { id.clone() } else { format!("{id}#{i}") };
            let mut turn = Turn::new(Role::ToolCall, "").at(time);
            turn.tool = Some(ToolUse { name: name.to_string(), command, ..ToolUse::default() });
            turn.files = files.take().unwrap_or_default();
            turn.edit = edit.take();
            let registered = (!id.is_empty()).then_some(key.as_str());
            self.b.push_call(registered, turn);
            if let Some(call) = registered.and_then(|k| self.b.call_mut(k)) {
                if let Some(tool) = &mut call.tool {
                    tool.call_id = Some(id.clone());
                }
            }
            keys.push(key);
        }
        if !id.is_empty() {
            self.calls.insert(id, (keys, shell));
        }
    }

    fn tool_result(&mut self, block: &Value, time: Option<Timestamp>) {
        let id = block.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
        let flagged = block.get("is_error").and_then(Value::as_bool) == Some(true);
        let outputs = result_outputs(block.get("content"));
        let (keys, shell) = self.calls.get(id).cloned().unwrap_or_default();
        if keys.is_empty() {
            let text = outputs.iter().map(|o| o.text.as_str()).collect::<Vec<_>>().join("\n");
            let failed = flagged || outputs.iter().any(|o| o.failed);
            self.b.push_orphan_result(id, &text, failed, None, time);
            return;
        }
        // One output per command turn; extra outputs go to the last turn.
        for (i, output) in outputs.iter().enumerate() {
            let key = &keys[i.min(keys.len() - 1)];
            let exit = if shell { exit_code_line(&output.text).map(ExitStatus::Code) } else { None };
            self.b.complete_call(key, &output.text, flagged || output.failed, exit, time);
        }
        if outputs.is_empty() && flagged {
            self.b.complete_call(&keys[0], "", true, None, time);
        }
    }

    fn finish(mut self, project: Option<String>, title: Option<String>, parent: Option<String>, out: &mut dyn SessionSink) {
        let s = self.b.session_mut();
        s.project = project.or_else(|| self.d.default_project.map(str::to_string));
        s.title = title;
        s.parent = parent;
        if let Some(s) = self.b.finish() {
            out.session(s);
        }
    }
}

/// One piece of a tool result.
struct Output {
    text: String,
    failed: bool,
}

/// A result's outputs: a string, `text` blocks (one output), or `run_commands` items
/// `{query, result, success}` (one output each). Cline CLI 3.0.65's `editor` result is
/// one such item (`query` `edit:<path>`, `result`, `error`, `success`) serialized into the
/// content string; it is decoded the same way, so the JSON text is not the output and a
/// failed edit is a failure.
fn result_outputs(content: Option<&Value>) -> Vec<Output> {
    match content {
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s.trim()) {
            Ok(item) if is_query_item(&item) => vec![query_output(&item)],
            _ => vec![Output { text: s.trim().to_string(), failed: false }],
        },
        Some(Value::Array(items)) => {
            if items.iter().any(is_query_item) {
                return items.iter().map(query_output).collect();
            }
            let parts: Vec<&str> = items.iter().filter_map(|i| i.get("text").and_then(Value::as_str)).map(str::trim).collect();
            if parts.is_empty() {
                Vec::new()
            } else {
                vec![Output { text: parts.join("\n"), failed: false }]
            }
        }
        _ => Vec::new(),
    }
}

/// A `{query, result, success}` item of Cline's tool results.
fn is_query_item(item: &Value) -> bool {
    item.is_object() && (item.get("result").is_some() || item.get("query").is_some())
}

/// One `{query, result, error?, success}` item: `result` is the output, else `error`
/// (a failed editor call leaves `result` empty and explains itself in `error`).
fn query_output(item: &Value) -> Output {
    let failed = item.get("success").and_then(Value::as_bool) == Some(false);
    let mut text = value_text(item.get("result")).trim().to_string();
    let error = value_text(item.get("error")).trim().to_string();
    if text.is_empty() {
        text = error;
    } else if failed && !error.is_empty() {
        text = format!("{text}\n{error}");
    }
    Output { text, failed }
}

/// A string as itself; other JSON as its compact form (a result may be an object).
fn value_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => String::new(),
        Some(other) => other.to_string(),
    }
}

/// `Exit code: N` in the first lines of a shell result (Roo-lineage `execute_command`).
fn exit_code_line(output: &str) -> Option<i64> {
    crate::exit::exit_code(output, &[crate::exit::ExitLine::head(3, "Exit code: ").inline()])
}

/// What one tool call says about commands, files and edits.
#[derive(Default)]
struct Work {
    commands: Vec<String>,
    files: Vec<FileTouch>,
    edit: Option<Edit>,
}

/// Reads a call's input by its shape, so every dialect's vocabulary is covered by one
/// function: the [`ToolMap`] says what the tool does, the keys say where the details are.
fn tool_work(tools: &ToolMap, name: &str, input: &Value, cwd: Option<&str>) -> Work {
    let mut w = Work::default();
    let kind = tools.kind(name);
    if kind == ToolKind::Shell {
        match input.get("commands") {
            Some(Value::Array(cmds)) => {
                w.commands = cmds
                    .iter()
                    .filter_map(|c| c.as_str().or_else(|| c.get("command").and_then(Value::as_str)))
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .map(str::to_string)
                    .collect()
            }
            Some(Value::String(c)) => w.commands.push(c.trim().to_string()),
            _ => w.commands.extend(text(input, "command").map(str::to_string)),
        }
        return w;
    }
    // `delete_file` (Kilo) touches a file without reading or writing it.
    let action = if name.starts_with("delete") { Some(FileAction::Delete) } else { tools.file_action(name) };
    let Some(action) = action else { return w };
    let mut paths: Vec<String> = Vec::new();
    if let Some(Value::Array(files)) = input.get("files") {
        paths.extend(files.iter().filter_map(|f| f.as_str().or_else(|| f.get("path").and_then(Value::as_str))).map(str::to_string));
    }
    paths.extend(["path", "file_path", "target_file", "filePath"].iter().find_map(|k| text(input, k)).map(str::to_string));
    paths.retain(|p| !p.trim().is_empty());
    let mut paths: Vec<String> = paths.iter().map(|p| join_cwd(p, cwd)).collect();
    paths.dedup();
    w.files = paths.iter().map(|p| FileTouch { path: p.clone(), action }).collect();
    if let Some(path) = paths.first() {
        w.edit = edit_of(path, kind, input);
    }
    w
}

/// The edit span a call carries: `old_text`/`new_text`, `operations[{search, replace}]`,
/// `code_edit` (placeholder lines dropped), or the whole `content` of a write.
fn edit_of(path: &str, kind: ToolKind, input: &Value) -> Option<Edit> {
    let capped = |mut s: String| {
        cap_text(&mut s, MAX_EDIT_BYTES);
        s
    };
    if let Some(old) = input.get("old_text").and_then(Value::as_str).filter(|s| !s.is_empty()) {
        let new = input.get("new_text").and_then(Value::as_str).map(|n| capped(n.to_string()));
        return Some(Edit { path: path.to_string(), old: capped(old.to_string()), new });
    }
    if let Some(new) = input.get("new_text").and_then(Value::as_str).filter(|_| kind == ToolKind::Edit) {
        // An insert or a create through the editor: only the written side exists.
        return Some(Edit { path: path.to_string(), old: String::new(), new: Some(capped(new.to_string())) });
    }
    if let Some(Value::Array(ops)) = input.get("operations") {
        let olds: Vec<&str> = ops.iter().filter_map(|o| o.get("search").and_then(Value::as_str)).filter(|s| !s.is_empty()).collect();
        let news: Vec<&str> = ops.iter().filter_map(|o| o.get("replace").and_then(Value::as_str)).collect();
        if !olds.is_empty() {
            return Some(Edit { path: path.to_string(), old: capped(olds.join("\n")), new: Some(capped(news.join("\n"))) });
        }
    }
    if let Some(code) = input.get("code_edit").and_then(Value::as_str) {
        let written: Vec<&str> = code.lines().filter(|l| !is_placeholder_line(l)).collect();
        return Some(Edit { path: path.to_string(), old: String::new(), new: Some(capped(written.join("\n"))) });
    }
    if kind == ToolKind::Write {
        if let Some(content) = input.get("content").and_then(Value::as_str) {
            return Some(Edit { path: path.to_string(), old: String::new(), new: Some(capped(content.to_string())) });
        }
    }
    None
}

/// `// ... existing code ...` (any comment leader): the unchanged-code marker of a fast edit.
fn is_placeholder_line(line: &str) -> bool {
    let t = line.trim().trim_start_matches(['/', '#', '-', '*', '<', '!']).trim();
    t.starts_with("...") && t.contains("existing code")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Session;
    use proptest::prelude::*;

    /// What the `cline` adapter would declare.
    const CLINE: ClineDialect = ClineDialect {
        harness: "cline",
        tools: ToolMap { shell: &["run_commands"], read: &["read_files"], edit: &["editor"], write: &[] },
        injected: &TASK_INJECTED,
        legacy_id_prefix: "cline-task-",
        legacy_tools: false,
        default_project: Some("cline"),
    };
    const ROO_TOOLS: ToolMap = ToolMap {
        shell: &["execute_command"],
        read: &["read_file"],
        edit: &["apply_diff", "insert_content", "search_and_replace"],
        write: &["write_to_file"],
    };
    const ROO: ClineDialect =
        ClineDialect { harness: "roo", tools: ROO_TOOLS, legacy_id_prefix: "roo-task-", default_project: Some("roo"), ..CLINE };
    const KILO: ClineDialect = ClineDialect {
        harness: "kilocode",
        tools: ToolMap {
            shell: &["execute_command"],
            read: &["read_file"],
            edit: &["apply_diff", "insert_content", "search_and_replace", "fast_edit_file"],
            write: &["write_to_file", "write_file", "generate_image"],
        },
        legacy_id_prefix: "",
        legacy_tools: true,
        default_project: None,
        ..CLINE
    };

    fn fixture(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cline_tasks").join(rel)
    }

    fn parse_with(d: &ClineDialect, rel: &str, opts: &ParseOptions) -> (Vec<Session>, ParseStats) {
        let mut out = Vec::new();
        let stats = parse(d, &SourceRef::file(fixture(rel)), opts, &mut out).unwrap();
        (out, stats)
    }

    fn one(d: &ClineDialect, rel: &str) -> Session {
        let (mut out, _) = parse_with(d, rel, &ParseOptions::default());
        assert_eq!(out.len(), 1, "{rel}");
        out.remove(0)
    }

    fn roles(s: &Session) -> Vec<Role> {
        s.turns.iter().map(|t| t.role).collect()
    }

    #[test]
    fn modern_session_maps_text_commands_results_and_edits() {
        let s = one(&CLINE, "modern/sessions/s_42/s_42.messages.json");
        assert_eq!((s.harness.as_str(), s.id.as_str()), ("cline", "s_42"));
        assert_eq!(s.title.as_deref(), Some("retry storm after outage"), "first line of the prompt");
        assert_eq!(s.project.as_deref(), Some("/src/queue"));
        assert_eq!(s.started, Timestamp::parse_str("2026-05-05T08:00:00Z"));
        assert_eq!(s.updated, Timestamp::parse_str("2026-05-05T08:03:00Z"), "ended_at is the latest time");
        assert_eq!(
            roles(&s),
            [Role::User, Role::Assistant, Role::ToolCall, Role::ToolCall, Role::ToolCall, Role::ToolOutput, Role::ToolCall],
            "no reasoning by default; system message dropped"
        );
        assert_eq!(s.turns[0].text, "retry storm after outage");
        assert_eq!(s.turns[0].time, Some(Timestamp(1777968000000)));
        assert_eq!(s.turns[1].text, "Adding jitter.");
        let go = &s.turns[2];
        let tool = go.tool.as_ref().unwrap();
        assert_eq!((tool.name.as_str(), tool.command.as_deref()), ("run_commands", Some("go test ./retry/...")));
        assert_eq!(tool.call_id.as_deref(), Some("c1"));
        assert_eq!(go.text, "ok  retry 0.2s", "a text result folds into the first command");
        assert_eq!(
            s.turns[3].tool.as_ref().unwrap().command.as_deref(),
            Some("ls"),
            "the indexer filters trivial commands, not the parser"
        );
        assert_eq!(s.turns[3].tool.as_ref().unwrap().call_id.as_deref(), Some("c1"));
        let edit = &s.turns[4];
        assert_eq!(edit.files, vec![FileTouch { path: "/src/queue/retry.go".into(), action: FileAction::Edit }]);
        assert_eq!(
            edit.edit,
            Some(Edit { path: "/src/queue/retry.go".into(), old: "d := base".into(), new: Some("d := base + jitter()".into()) })
        );
        let orphan = &s.turns[5];
        assert_eq!(orphan.text, "result of a call not in this file");
        assert_eq!(orphan.tool.as_ref().unwrap().call_id.as_deref(), Some("gone"));
        let insert = &s.turns[6];
        assert_eq!(
            insert.edit,
            Some(Edit { path: "/src/queue/jitter.go".into(), old: String::new(), new: Some("func jitter() time.Duration".into()) }),
            "an input left as JSON text is decoded; new_text alone is the written side"
        );
    }

    #[test]
    fn reasoning_only_when_asked() {
        let (out, _) = parse_with(&CLINE, "modern/sessions/s_42/s_42.messages.json", &ParseOptions { include_reasoning: true });
        let s = &out[0];
        assert_eq!(s.turns[1].role, Role::Reasoning);
        assert_eq!(s.turns[1].text, "Backoff has no jitter.");
        let roo = {
            let (out, _) =
                parse_with(&ROO, "roo/tasks/1777000099000/api_conversation_history.json", &ParseOptions { include_reasoning: true });
            out.into_iter().next().unwrap()
        };
        assert_eq!(roles(&roo), [Role::User, Role::Reasoning, Role::Assistant], "`reasoning` blocks too");
        assert_eq!(roles(&one(&ROO, "roo/tasks/1777000099000/api_conversation_history.json")), [Role::User, Role::Assistant]);
    }

    #[test]
    fn current_cli_run_commands_results_fold_per_command() {
        let s = one(&CLINE, "modern/sessions/1795997878365_k8zor/1795997878365_k8zor.messages.json");
        assert_eq!(s.id, "1795997878365_k8zor");
        assert_eq!(s.title.as_deref(), Some("Ledger tests failing"), "metadata.title wins over the prompt");
        assert_eq!(s.project.as_deref(), Some("/work/ledger"));
        assert_eq!(s.started, Timestamp::parse_str("2026-11-30T00:17:58Z"));
        assert_eq!(s.updated, Timestamp::parse_str("2026-11-30T00:25:00Z"));
        assert!(!s.turns.iter().any(|t| t.text.contains("highly skilled")), "system_prompt is not speech");
        let cargo = &s.turns[1];
        let tool = cargo.tool.as_ref().unwrap();
        assert_eq!(tool.command.as_deref(), Some("cargo test"));
        assert!(tool.is_error, "success: false");
        assert_eq!(tool.exit, None, "Cline records no exit status");
        assert_eq!(cargo.text, "test result: FAILED");
        let git = &s.turns[2];
        assert_eq!(git.tool.as_ref().unwrap().command.as_deref(), Some("git status"));
        assert!(!git.tool.as_ref().unwrap().is_error);
        assert_eq!(git.text, "nothing to commit");
        let read = &s.turns[3];
        assert_eq!(
            read.files,
            vec![
                FileTouch { path: "/work/ledger/src/lib.rs".into(), action: FileAction::Read },
                FileTouch { path: "/work/ledger/Cargo.toml".into(), action: FileAction::Read }
            ]
        );
        assert_eq!(read.text, "fn main() {}");
        let last = s.turns.last().unwrap();
        assert_eq!((last.role, last.text.as_str()), (Role::Assistant, "The rounding test fails on negative amounts."));
        assert_eq!(last.time, s.started, "a message without ts gets the session start");
    }

    #[test]
    fn non_lead_agent_files_are_skipped_and_counted() {
        let (out, stats) = parse_with(&CLINE, "modern/sessions/s_team/s_team.messages.json", &ParseOptions::default());
        assert!(out.is_empty());
        assert_eq!(stats.skipped, 1);
    }

    #[test]
    fn legacy_cline_task_reads_task_history_and_yields_text_only() {
        let s = one(&CLINE, "legacy_cline/tasks/1767225600000/api_conversation_history.json");
        assert_eq!(s.id, "cline-task-1767225600000");
        assert_eq!(s.title.as_deref(), Some("Say hello"));
        assert_eq!(s.project.as_deref(), Some("/home/u/greeter"));
        assert_eq!(roles(&s), [Role::User, Role::Assistant, Role::User], "legacy tool blocks give nothing for Cline");
        assert_eq!(s.turns[0].text, "Say hello", "<task> unwrapped, <environment_details> stripped");
        assert_eq!(s.turns[0].time, Some(Timestamp(1767225600000)));
        assert_eq!(s.turns[1].time, Some(Timestamp(1767225601000)), "base + index seconds");
        assert_eq!(s.turns[2].text, "now say goodbye", "<feedback> tags go, the reply stays");
        assert_eq!(s.turns[2].time, Some(Timestamp(1767225603000)));
    }

    #[test]
    fn roo_task_history_item_summary_and_parent() {
        let s = one(&ROO, "roo/tasks/1777000000000/api_conversation_history.json");
        assert_eq!(s.id, "roo-task-1777000000000");
        assert_eq!(s.title.as_deref(), Some("Flaky upload test"));
        assert_eq!(s.project.as_deref(), Some("/src/uploader"));
        assert_eq!(roles(&s), [Role::User, Role::Assistant, Role::Assistant, Role::Summary]);
        assert_eq!(s.turns[1].text, "Let me look.");
        assert_eq!(s.turns[1].time, Some(Timestamp(1777000001000)));
        assert_eq!(s.turns[2].time, Some(Timestamp(1777000003000)), "the skipped tool result still counts in the index");
        assert_eq!(s.turns[3].time, Some(Timestamp(1777000100000)), "a message's own ts wins");
        assert!(s.turns[3].text.contains("shares one timeout"));
        let sub = one(&ROO, "roo/tasks/1777000099000/api_conversation_history.json");
        assert_eq!(sub.parent.as_deref(), Some("roo-task-1777000000000"));
        assert_eq!(sub.turns[0].text, "write the retry test");
    }

    #[test]
    fn kilo_tasks_decode_kilo_tools() {
        let s = one(&KILO, "kilo/tasks/1767225800000/api_conversation_history.json");
        assert_eq!(s.id, "1767225800000");
        assert_eq!(s.project.as_deref(), Some("/home/u/shop"));
        assert_eq!(s.title, None, "no task text in this history item");
        assert_eq!(roles(&s), [Role::User, Role::ToolCall, Role::ToolCall, Role::ToolCall, Role::ToolCall, Role::ToolCall]);
        assert_eq!(s.turns[0].text, "rename the cart module");
        let sr = &s.turns[1];
        assert_eq!(sr.edit, Some(Edit { path: "cart.ts".into(), old: "Cart".into(), new: Some("Basket".into()) }));
        assert_eq!(sr.files[0].action, FileAction::Edit);
        assert_eq!(sr.text, "ok");
        let fast = &s.turns[2];
        assert_eq!(fast.files, vec![FileTouch { path: "basket.ts".into(), action: FileAction::Edit }]);
        assert_eq!(fast.edit.as_ref().unwrap().new.as_deref(), Some("export class Basket {}"), "placeholder lines dropped");
        let npm = s.turns[3].tool.as_ref().unwrap();
        assert_eq!(npm.command.as_deref(), Some("npm test"));
        assert_eq!(npm.exit, Some(ExitStatus::Code(1)));
        assert!(npm.is_error);
        assert_eq!(s.turns[4].files, vec![FileTouch { path: "notes.md".into(), action: FileAction::Write }]);
        assert_eq!(s.turns[4].edit.as_ref().unwrap().new.as_deref(), Some("renamed"));
        assert_eq!(s.turns[5].files, vec![FileTouch { path: "cart.ts".into(), action: FileAction::Delete }]);
        assert_eq!(s.turns[5].text, "", "an unanswered call stays with empty text");
    }

    #[test]
    fn envelopes_unwrap_with_attributes_only_at_the_start() {
        assert_eq!(unwrap_envelope("<user_input mode=\"act\">fix it</user_input>"), "fix it");
        assert_eq!(unwrap_envelope("<task>\nA\n</task>\ntail"), "A\n\ntail");
        assert_eq!(unwrap_envelope("<user_message>unclosed"), "unclosed");
        assert_eq!(unwrap_envelope("<tasks>keep</tasks>"), "<tasks>keep</tasks>");
        assert_eq!(unwrap_envelope("say <task>x</task>"), "say <task>x</task>");
    }

    #[test]
    fn discovery_covers_every_file_of_a_task_and_newest_generation_wins() {
        let modern = modern_sources(&fixture("modern/sessions"));
        assert_eq!(modern.len(), 3);
        let s42 = modern.iter().find(|s| s.path.ends_with("s_42.messages.json")).unwrap();
        assert_eq!(s42.parts, vec![fixture("modern/sessions/s_42/s_42.json")]);
        assert_eq!(s42.generation, Some(GENERATION_MODERN));
        let legacy = legacy_sources(&fixture("legacy_cline"));
        assert_eq!(legacy.len(), 1);
        let task = fixture("legacy_cline/tasks/1767225600000");
        assert_eq!(
            legacy[0].parts,
            vec![task.clone(), task.join("ui_messages.json"), fixture("legacy_cline/state/taskHistory.json")],
            "the task folder, its other files and the shared history"
        );
        assert_eq!(legacy_sources(&fixture("roo"))[0].parts.len(), 2, "folder + history_item.json");

        // The same task id in both generations: the modern copy is kept.
        let mut both = legacy.clone();
        let mut same_task = SourceRef::file(fixture("modern/sessions/1767225600000/1767225600000.messages.json"));
        same_task.generation = Some(GENERATION_MODERN);
        both.push(same_task.clone());
        both.extend(modern.iter().cloned());
        let kept = newest_generation_per_task(both);
        assert_eq!(kept.len(), 4);
        assert!(kept.contains(&same_task));
        assert!(!kept.iter().any(|s| s.generation == Some(GENERATION_LEGACY)));
        let kept = newest_generation_per_task(vec![same_task.clone(), legacy[0].clone()]);
        assert_eq!(kept, vec![same_task], "order does not matter");
    }

    #[test]
    fn a_tasks_directory_lists_like_its_extension_root() {
        let via_root = legacy_sources(&fixture("roo"));
        let via_tasks = task_dir_sources(&fixture("roo/tasks"), None);
        assert_eq!(via_root, via_tasks, "no taskHistory.json: the same sources");
        let history = fixture("legacy_cline/state/taskHistory.json");
        let with = task_dir_sources(&fixture("legacy_cline/tasks"), Some(&history));
        assert_eq!(with, legacy_sources(&fixture("legacy_cline")));
        assert!(task_dir_sources(&fixture("no/such/tasks"), None).is_empty());
    }

    #[test]
    fn path_lists_split_the_os_way_and_expand_the_home() {
        let sep = if cfg!(windows) { ";" } else { ":" };
        let env = StoreEnv::with_home("/h").set("L", format!("~/a{sep}{sep}/b")).set("E", sep);
        assert_eq!(path_list(&env, "L"), Some(vec![PathBuf::from("/h/a"), PathBuf::from("/b")]));
        assert_eq!(path_list(&env, "E"), None, "only separators: unset");
        assert_eq!(path_list(&env, "MISSING"), None);
    }

    #[test]
    fn host_roots_follow_the_os_convention() {
        let env = StoreEnv::with_home("/h").set("XDG_CONFIG_HOME", "/h/cfg").set("APPDATA", "/h/AppData/Roaming");
        let roots = global_storage_roots(&env, "saoudrizwan.claude-dev");
        assert_eq!(roots.len(), EDITOR_HOSTS.len());
        if cfg!(target_os = "linux") {
            assert_eq!(roots[0], PathBuf::from("/h/cfg/Code/User/globalStorage/saoudrizwan.claude-dev"));
        }
    }

    #[test]
    fn broken_documents_are_corrupt_errors_naming_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("tasks/1");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(LEGACY_TRANSCRIPT);
        std::fs::write(&path, b"[{\"role\":\"user\",\"content\":\"hal").unwrap();
        let err = parse(&CLINE, &SourceRef::file(&path), &ParseOptions::default(), &mut Vec::new()).unwrap_err();
        assert!(matches!(&err, FormatError::Corrupt { path: p, .. } if p == &path), "{err}");
        std::fs::write(&path, br#"{"not":"an array"}"#).unwrap();
        let stats = parse(&CLINE, &SourceRef::file(&path), &ParseOptions::default(), &mut Vec::new()).unwrap();
        assert_eq!(stats.skipped, 1);
    }

    const FIXTURES: &[&str] = &[
        "modern/sessions/s_42/s_42.messages.json",
        "modern/sessions/1795997878365_k8zor/1795997878365_k8zor.messages.json",
        "legacy_cline/tasks/1767225600000/api_conversation_history.json",
        "roo/tasks/1777000000000/api_conversation_history.json",
        "kilo/tasks/1767225800000/api_conversation_history.json",
    ];

    /// Writes `bytes` as a task transcript of the given generation in a fresh tree.
    fn parse_bytes(modern: bool, bytes: &[u8]) {
        let tmp = tempfile::tempdir().unwrap();
        let (dir, name) =
            if modern { (tmp.path().join("sessions/x"), "x.messages.json") } else { (tmp.path().join("tasks/x"), LEGACY_TRANSCRIPT) };
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        for d in [&CLINE, &KILO] {
            let _ = parse(d, &SourceRef::file(&path), &ParseOptions { include_reasoning: true }, &mut Vec::new());
        }
    }

    /// Retypes or deletes fields all through a document: `mode` 0 turns strings into
    /// numbers, 1 arrays into objects, 2 objects into strings, 3 deletes every third key.
    fn retype_value(v: &mut Value, mode: u8, n: &mut u32) {
        *n += 1;
        match v {
            Value::String(_) if mode == 0 && n.is_multiple_of(2) => *v = Value::from(7),
            Value::Array(items) if mode == 1 && n.is_multiple_of(3) => *v = serde_json::json!({ "items": items.clone() }),
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
        fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512), modern in any::<bool>()) {
            parse_bytes(modern, &bytes);
        }

        #[test]
        fn never_panics_on_truncated_or_retyped_fixtures(which in 0..FIXTURES.len(), cut in 0.0f64..1.0, retype in proptest::option::of(0u8..4)) {
            let bytes = std::fs::read(fixture(FIXTURES[which])).unwrap();
            let mut bytes = bytes[..(bytes.len() as f64 * cut) as usize].to_vec();
            if let Some(mode) = retype {
                let whole = std::fs::read(fixture(FIXTURES[which])).unwrap();
                let mut v: Value = serde_json::from_slice(&whole).unwrap();
                retype_value(&mut v, mode, &mut 0);
                bytes = serde_json::to_vec(&v).unwrap();
            }
            parse_bytes(FIXTURES[which].starts_with("modern"), &bytes);
        }
    }
}

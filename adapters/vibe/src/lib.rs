//! Mistral Vibe (`vibe`): one directory per session under `${VIBE_HOME:-~/.vibe}/logs/session/`,
//! in two generations. No family reader: neither generation is another harness's format.
//!
//! * **Unified store** (Mistral Vibe 3.0, the page's "Current releases" section, which wins):
//!   `unified/<session-id>/` holds `meta.json`, `CURRENT` (the newest snapshot generation),
//!   `generations/<n>/` snapshots whose large values sit in `chunks/<sha256>.json`, and
//!   a hash-chained journal `journal/<first sequence>.jsonl`. The transcript is the
//!   projection history: the `CURRENT` generation's `projection-state.json`
//!   (`snapshot.history.entries`, moved into the chunks the manifest lists), then every
//!   journal `projection_delta` with a `sequence` past the snapshot's, replayed
//!   (`append_entry`, `replace_entry` by entry id). A session with a journal but no
//!   snapshot yet is replayed from the first segment. One source per session directory:
//!   `CURRENT` (else `meta.json`), with `meta.json`, the journal directory and each
//!   segment as parts, re-read whole on change (the snapshot it starts from moves).
//!   Hashes are not verified (the page says a reader need not); another
//!   `store_format` major is refused with an error naming it. The checkpoint context,
//!   `runtime-state.json` and the journal's other records (the model request with the
//!   whole system prompt, tool catalogues, receipts) are not read.
//! * **Older releases**: `<session-dir>/messages.jsonl` (OpenAI chat lines, append-only,
//!   read incrementally) + `meta.json` (a part of the source).
//!
//! `DEJA_VIBE_ROOT` names the sessions root (`…/logs/session`, the directory holding
//! `unified/` and the older session directories); `VIBE_HOME` replaces `~/.vibe`.
//! The `plugins/` tree in the sessions root is not transcript and is not walked.
//!
//! Unified projection entries:
//!
//! | entry | Turn | rule |
//! | --- | --- | --- |
//! | `type:"message"`, `role:"user"` | `User` | `content[]` text blocks; skipped when the journal's `command_reserved` for its `turnId` says `injected: true` |
//! | `type:"message"`, `role:"assistant"` | `Assistant` | `content[]` text blocks |
//! | `type:"effect"`, `detail.kind:"tool"` | `ToolCall` | call and result in one entry: `detail.toolName` without its `<group>.` prefix; `bash` → `detail.input.command`, `state.output.structured_content.returncode` → exit, `stdout` (+ `stderr`) → text, else `state.outputText`; file tools → `files` / `edit` from `detail.input`; `display.success: false` or `output.type` other than `success` → `is_error` |
//! | any other entry type | skipped | |
//!
//! Entries keep their `createdAt` (epoch ms); one whose `generationStatus` is not
//! `completed` is kept as `partial`. Session: id `meta.session_id`, else `CURRENT`'s,
//! else the directory name; parent `parent_session_id`; project
//! `environment.working_directory`, else `origin_directory`; title `meta.title`, else
//! `snapshot.session.preview`; times the entries' and `meta.start_time`/`end_time`.
//!
//! Older `messages.jsonl` lines:
//!
//! | line | Turn | rule |
//! | --- | --- | --- |
//! | `role:"user"` | `User` | skipped with `injected: true` |
//! | `role:"assistant"` `content` | `Assistant` | `reasoning_content` → `Reasoning`, only with `include_reasoning` |
//! | assistant `tool_calls[]` | `ToolCall` | `function.arguments` object or JSON string; command/files/edit by the generic keys |
//! | `role:"tool"` with `tool_call_id` | folded into its call | without a `tool_call_id`: skipped |
//! | `role:"system"`, other roles | skipped | |
//! | malformed or torn line | skipped | counted in the parse stats |
//!
//! Lines carry no times (a `timestamp`/`created_at`/`createdAt`/`time`/`ts` is used when
//! present); the session gets `meta.start_time`/`end_time`. `meta.json` that does not
//! parse still yields `session_id`, `working_dir`/`working_directory`, `parent_session_id`
//! and `title` recovered one by one from its text.

mod wiring;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use deja_core::discover::{find_files, subdirs};
use deja_core::family::json_docs::{call_turn, first_str, json_arg, text_blocks, ToolKeys, COMMON_KEYS};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::read::{at, for_each_json_line, for_each_source_line, parse_json_document, read_source, str_at};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, ExitStatus, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Role,
    SessionBuilder, SessionSink, SourceRef, StoreEnv, Timestamp, ToolMap, Turn,
};
use serde_json::Value;

const ID: &str = "vibe";
const STORE_FORMAT: &str = "mistral.vibe.unified-session-store/";

/// Vibe's short tool names (the `<group>.` prefix stripped). Only `bash` and `read_file`
/// were observed; the rest are the likely names, harmless when absent.
const TOOLS: ToolMap = ToolMap {
    shell: &["bash", "shell", "run_command"],
    read: &["read_file", "read"],
    edit: &["search_replace", "edit_file", "edit", "replace"],
    write: &["write_file", "write", "create_file"],
};

const KEYS: ToolKeys = ToolKeys {
    command: COMMON_KEYS.command,
    path: COMMON_KEYS.path,
    old: &["old_string", "old_str", "oldText", "old_text", "search"],
    new: &["new_string", "new_str", "newText", "new_text", "content", "replace"],
};

/// The Mistral Vibe adapter.
pub struct VibeFormat;

deja_core::inventory::submit!(deja_core::Registration(&VibeFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Mistral Vibe",
    container: "session directory: snapshots + chunks + hash-chained JSONL journal (3.0); older: messages.jsonl + meta.json",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("${VIBE_HOME:-~/.vibe}/logs/session")],
        layout: Layout::Custom { shape: "unified/<session-id>/, <session-dir>/messages.jsonl", walk: Some(walk_sessions) },
    }]),
    needs: &[],
    format_summary: "Mistral Vibe 3.0 keeps each session in `~/.vibe/logs/session/unified/<id>/`: `meta.json`, `CURRENT` \
        naming the newest snapshot generation, snapshot files whose large values are content-addressed chunks, and an \
        append-only hash-chained journal whose `projection_delta` records append and replace history entries after the \
        snapshot. The history holds user and assistant messages and tool effects (call and result in one entry, the \
        shell's return code included). Older releases wrote an OpenAI-style `messages.jsonl` beside `meta.json`.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned("a `[[mcp_servers]]` entry (stdio) in ${VIBE_HOME:-~/.vibe}/config.toml, or `vibe mcp add`"),
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::Unknown, handoff: Handoff::Paste("no start-with-prompt command is known") },
};

/// The sessions under the root: each `unified/<session-id>/` directory, the older
/// session directories beside it, and a legacy top-level log.
fn walk_sessions(root: &Path, _env: &StoreEnv, found: &mut Discovery) {
    for dir in subdirs(&root.join("unified")) {
        if let Some(src) = unified_source(&dir) {
            found.sources.push(src);
        }
    }
    // Older session directories sit beside `unified/` and `plugins/`; neither is walked
    // (a unified session holds many chunk files, and plugins are not transcript).
    for dir in subdirs(root) {
        if dir.file_name().is_some_and(|n| n == "unified" || n == "plugins") {
            continue;
        }
        for path in find_files(&dir, 5, &|name| name == "messages.jsonl") {
            let meta = path.with_file_name("meta.json");
            found.sources.push(SourceRef::file(path).append_only().with_part(meta));
        }
    }
    let legacy_top = root.join("messages.jsonl");
    if legacy_top.is_file() {
        found.sources.push(SourceRef::file(&legacy_top).append_only().with_part(root.join("meta.json")));
    }
}

impl HarnessFormat for VibeFormat {
    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::VibeWiring)
    }

    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        if src.path.file_name().is_some_and(|n| n == "messages.jsonl") {
            parse_messages(src, opts, out)
        } else {
            parse_unified(src, out)
        }
    }
}

/// One unified session directory as a source: `CURRENT` (else `meta.json`), with every
/// file whose change means new transcript as a part.
fn unified_source(dir: &Path) -> Option<SourceRef> {
    let current = dir.join("CURRENT");
    let meta = dir.join("meta.json");
    let mut src = if current.is_file() {
        SourceRef::file(current).with_part(meta)
    } else if meta.is_file() {
        SourceRef::file(meta)
    } else {
        return None;
    };
    let journal = dir.join("journal");
    if journal.is_dir() {
        let mut segments = find_files(&journal, 0, &|n| n.ends_with(".jsonl"));
        segments.sort();
        src = src.with_part(journal);
        for s in segments {
            src = src.with_part(s);
        }
    }
    Some(src)
}

/// What `meta.json` says, recovered field by field when the document does not parse.
#[derive(Default)]
struct Meta {
    id: Option<String>,
    parent: Option<String>,
    project: Option<String>,
    title: Option<String>,
    start: Option<Timestamp>,
    end: Option<Timestamp>,
}

fn read_meta(path: &Path, stats: &mut ParseStats) -> Meta {
    let Ok(bytes) = std::fs::read(path) else { return Meta::default() };
    let s = |v: Option<&str>| v.map(str::trim).filter(|s| !s.is_empty()).map(str::to_string);
    match parse_json_document(&bytes, path) {
        Ok(v) => Meta {
            // An id with control characters (a NUL, a newline) could not be typed or printed back.
            id: s(first_str(&v, &["session_id"])).filter(|id| !id.contains(char::is_control)),
            parent: s(first_str(&v, &["parent_session_id"])),
            project: s(first_str(&v, &["working_dir"])
                .or_else(|| str_at(&v, &["environment", "working_directory"]))
                .or_else(|| first_str(&v, &["origin_directory"]))),
            title: s(first_str(&v, &["title"])),
            start: v.get("start_time").and_then(Timestamp::from_json),
            end: v.get("end_time").and_then(Timestamp::from_json),
        },
        Err(e) => {
            stats.problem(format!("{e}; fields recovered from its text"));
            let text = String::from_utf8_lossy(&bytes);
            Meta {
                id: scan_str(&text, "session_id").filter(|id| !id.contains(char::is_control)),
                parent: scan_str(&text, "parent_session_id"),
                project: scan_str(&text, "working_dir").or_else(|| scan_str(&text, "working_directory")),
                title: scan_str(&text, "title"),
                start: scan_str(&text, "start_time").and_then(|t| Timestamp::parse_str(&t)),
                end: scan_str(&text, "end_time").and_then(|t| Timestamp::parse_str(&t)),
            }
        }
    }
}

/// The string value of the first `"key": "…"` in a document that does not parse as a
/// whole (escapes decoded; a value cut off by the end of the text is not taken).
fn scan_str(text: &str, key: &str) -> Option<String> {
    let needle = format!("\"{key}\"");
    let mut from = 0;
    while let Some(i) = text[from..].find(&needle) {
        let rest = text[from + i + needle.len()..].trim_start();
        from += i + needle.len();
        let Some(rest) = rest.strip_prefix(':') else { continue };
        let rest = rest.trim_start();
        if !rest.starts_with('"') {
            continue;
        }
        // Let serde find the end of the string literal.
        let mut de = serde_json::Deserializer::from_str(rest).into_iter::<String>();
        return de.next().and_then(Result::ok).filter(|s| !s.trim().is_empty());
    }
    None
}

fn finish(mut b: SessionBuilder, meta: &Meta, out: &mut dyn SessionSink) {
    if b.turn_count() > 0 {
        b.touch(meta.start);
        b.touch(meta.end);
    }
    if let Some(s) = b.finish() {
        out.session(s);
    }
}

// ---- older releases: messages.jsonl ----

fn parse_messages(src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let mut stats = ParseStats::default();
    let meta = read_meta(&src.path.with_file_name("meta.json"), &mut stats);
    let dir_name = src.path.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned());
    let id = meta.id.clone().or(dir_name).unwrap_or_else(|| "vibe-session".to_string());
    let mut b = SessionBuilder::new(ID, id, src.clone());
    {
        let s = b.session_mut();
        s.project = meta.project.clone();
        s.title = meta.title.clone();
        s.parent = meta.parent.clone();
    }
    let cwd = meta.project.clone();
    for_each_source_line(src, &mut stats, &[], |_off, v| message_line(&mut b, &v, opts, cwd.as_deref()))?;
    finish(b, &meta, out);
    Ok(stats)
}

fn message_line(b: &mut SessionBuilder, v: &Value, opts: &ParseOptions, cwd: Option<&str>) {
    let time = ["timestamp", "created_at", "createdAt", "time", "ts"].iter().find_map(|k| v.get(*k).and_then(Timestamp::from_json));
    match str_at(v, &["role"]) {
        // `injected: true` is the harness's own text, not the person's.
        Some("user") if v.get("injected").and_then(Value::as_bool) != Some(true) => {
            b.push(Turn::new(Role::User, text_blocks(v.get("content"))).at(time));
        }
        Some("assistant") => {
            if opts.include_reasoning {
                b.push(Turn::new(Role::Reasoning, text_blocks(v.get("reasoning_content"))).at(time));
            }
            b.push(Turn::new(Role::Assistant, text_blocks(v.get("content"))).at(time));
            if let Some(Value::Array(calls)) = v.get("tool_calls") {
                for c in calls {
                    let name = str_at(c, &["function", "name"]).unwrap_or("tool");
                    let input = json_arg(at(c, &["function", "arguments"]));
                    let turn = call_turn(&TOOLS, &KEYS, short_name(name), &input, cwd, time);
                    b.push_call(first_str(c, &["id"]), turn);
                }
            }
        }
        Some("tool") => {
            let Some(call_id) = first_str(v, &["tool_call_id"]) else { return };
            let output = text_blocks(v.get("content"));
            if !b.complete_call(call_id, &output, false, None, time) {
                b.push_orphan_result(call_id, &output, false, None, time);
            }
        }
        _ => {}
    }
}

/// `file_system.bash` → `bash`: the effect layer namespaces tool names, the model does not.
fn short_name(name: &str) -> &str {
    name.rsplit_once('.').map_or(name, |(_, short)| short)
}

// ---- Mistral Vibe 3.0: the unified session store ----

fn parse_unified(src: &SourceRef, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let mut stats = ParseStats::default();
    let Some(dir) = src.path.parent() else { return Err(FormatError::corrupt(&src.path, "no session directory")) };
    let meta = read_meta(&dir.join("meta.json"), &mut stats);
    let mut history = History::default();
    let mut snapshot_sequence = 0u64;
    let mut first_segment: Option<String> = None;
    let mut preview = None;
    let mut current_id = None;
    let current_path = dir.join("CURRENT");
    if current_path.is_file() {
        let current = parse_json_document(&read_source(&current_path, &mut stats)?.bytes, &current_path)?;
        stats.records += 1;
        if let Some(format) = first_str(&current, &["store_format"]) {
            if format.strip_prefix(STORE_FORMAT) != Some("v1") {
                return Err(FormatError::corrupt(
                    &current_path,
                    format!("unknown store format `{format}` (this reader knows {STORE_FORMAT}v1)"),
                ));
            }
        }
        current_id = first_str(&current, &["session_id"]).filter(|id| !id.contains(char::is_control)).map(str::to_string);
        let generation = match current.get("generation") {
            Some(Value::String(g)) => g.clone(),
            Some(Value::Number(n)) => format!("{:016}", n.as_u64().unwrap_or(0)),
            _ => return Err(FormatError::corrupt(&current_path, "CURRENT names no generation")),
        };
        if generation.is_empty() || !generation.bytes().all(|c| c.is_ascii_digit()) {
            return Err(FormatError::corrupt(&current_path, format!("generation `{generation}` is not a number")));
        }
        let gen_dir = dir.join("generations").join(&generation);
        let manifest_path = gen_dir.join("manifest.json");
        let manifest = parse_json_document(&read_source(&manifest_path, &mut stats)?.bytes, &manifest_path)?;
        stats.records += 1;
        snapshot_sequence = manifest.get("snapshot_sequence").and_then(Value::as_u64).unwrap_or(0);
        first_segment = at(&manifest, &["recovery_journal_segment", "path"])
            .and_then(Value::as_str)
            .and_then(|p| Path::new(p).file_name())
            .map(|n| n.to_string_lossy().into_owned());
        let component = at(&manifest, &["projection_state"]).unwrap_or(&Value::Null);
        let file =
            first_str(component, &["path"]).map(|p| dir_join(&gen_dir, dir, p)).unwrap_or_else(|| gen_dir.join("projection-state.json"));
        match read_source(&file, &mut stats).and_then(|b| parse_json_document(&b.bytes, &file)) {
            Ok(state) => {
                stats.records += 1;
                let session = at(&state, &["snapshot", "session"]).unwrap_or(&Value::Null);
                preview = first_str(session, &["title"]).or_else(|| first_str(session, &["preview"])).map(str::to_string);
                let mut entries = match at(&state, &["snapshot", "history", "entries"]) {
                    Some(Value::Array(a)) => a.clone(),
                    _ => Vec::new(),
                };
                // A value moved into a chunk leaves an empty placeholder; the chunks hold
                // it. Several chunks of one component are read as consecutive parts.
                if entries.is_empty() {
                    if let Some(Value::Array(chunks)) = component.get("chunks") {
                        for hash in chunks.iter().filter_map(Value::as_str) {
                            entries.extend(read_chunk(dir, hash, &mut stats));
                        }
                    }
                }
                for e in entries {
                    history.append(e);
                }
            }
            Err(e) => stats.problem(format!("{e}; history rebuilt from the journal alone")),
        }
    }
    let injected = replay_journal(dir, first_segment.as_deref(), snapshot_sequence, &mut history, &mut stats);
    let dir_name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    let id = meta.id.clone().or(current_id).or(dir_name).unwrap_or_else(|| "vibe-session".to_string());
    let mut b = SessionBuilder::new(ID, id, src.clone());
    {
        let s = b.session_mut();
        s.project = meta.project.clone();
        s.title = meta.title.clone().or(preview);
        s.parent = meta.parent.clone();
    }
    for e in &history.entries {
        entry_turn(&mut b, e, &injected, meta.project.as_deref());
    }
    finish(b, &meta, out);
    Ok(stats)
}

/// A path from a manifest: relative to the generation directory, else to the session's.
fn dir_join(gen_dir: &Path, dir: &Path, p: &str) -> PathBuf {
    let rel = Path::new(p);
    if rel.is_absolute() || rel.components().any(|c| matches!(c, std::path::Component::ParentDir)) {
        // Never read outside the session directory on a manifest's word.
        return gen_dir.join(rel.file_name().unwrap_or_default());
    }
    let in_gen = gen_dir.join(rel);
    if in_gen.is_file() {
        in_gen
    } else {
        dir.join(rel)
    }
}

/// The entries in one chunk (an array, or one value).
fn read_chunk(dir: &Path, hash: &str, stats: &mut ParseStats) -> Vec<Value> {
    if hash.is_empty() || !hash.bytes().all(|c| c.is_ascii_hexdigit()) {
        stats.skip(|| format!("chunk name `{hash}` is not a hash"));
        return Vec::new();
    }
    let path = dir.join("chunks").join(format!("{hash}.json"));
    match read_source(&path, stats).and_then(|b| parse_json_document(&b.bytes, &path)) {
        Ok(Value::Array(items)) => {
            stats.records += 1;
            items
        }
        Ok(Value::Null) => Vec::new(),
        Ok(v) => vec![v],
        Err(e) => {
            stats.skip(|| e.to_string());
            Vec::new()
        }
    }
}

/// The projection history, entries in order and findable by id for `replace_entry`.
#[derive(Default)]
struct History {
    entries: Vec<Value>,
    by_id: HashMap<String, usize>,
}

impl History {
    fn append(&mut self, e: Value) {
        if let Some(id) = first_str(&e, &["id"]) {
            if let Some(&i) = self.by_id.get(id) {
                // Appended twice (a snapshot and a journal both holding it): the later wins.
                self.entries[i] = e;
                return;
            }
            self.by_id.insert(id.to_string(), self.entries.len());
        }
        self.entries.push(e);
    }

    fn replace(&mut self, e: Value) {
        // A replacement of an entry this read never saw is the entry's first appearance.
        self.append(e);
    }
}

/// Applies the journal's `projection_delta` records past `after` (from segment `first`
/// on, or every segment when there is no snapshot) and returns the turn ids whose
/// `command_reserved` says the prompt was injected.
fn replay_journal(dir: &Path, first: Option<&str>, after: u64, history: &mut History, stats: &mut ParseStats) -> HashSet<String> {
    let mut injected = HashSet::new();
    let journal = dir.join("journal");
    let mut segments = find_files(&journal, 0, &|n| n.ends_with(".jsonl"));
    segments.sort();
    for seg in segments {
        let name = seg.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        // Segments before the snapshot's recovery segment hold only what the snapshot
        // has; the injected flags in them still matter.
        let replay = first.is_none_or(|f| name.as_str() >= f);
        let Ok(bytes) = read_source(&seg, stats).map(|b| b.bytes) else { continue };
        for_each_json_line(&bytes, 0, &seg, stats, |_off, rec| {
            let seq = rec.get("sequence").and_then(Value::as_u64).unwrap_or(0);
            match str_at(&rec, &["type"]) {
                Some("command_reserved") => {
                    let p = rec.get("payload").unwrap_or(&Value::Null);
                    if at(p, &["params", "injected"]).and_then(Value::as_bool) == Some(true) {
                        if let Some(turn) = first_str(p, &["client_command_id"]) {
                            injected.insert(turn.to_string());
                        }
                    }
                }
                Some("projection_delta") if replay && seq > after => {
                    let Some(Value::Array(ops)) = at(&rec, &["payload", "delta"]) else { return };
                    for op in ops {
                        let Some(entry) = op.get("entry").filter(|e| e.is_object()) else { continue };
                        match str_at(op, &["op"]) {
                            Some("append_entry") => history.append(entry.clone()),
                            Some("replace_entry") => history.replace(entry.clone()),
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        });
    }
    injected
}

fn entry_turn(b: &mut SessionBuilder, e: &Value, injected: &HashSet<String>, cwd: Option<&str>) {
    let time = e.get("createdAt").and_then(Timestamp::from_json);
    let partial = first_str(e, &["generationStatus"]).is_some_and(|s| s != "completed");
    let turn = match (str_at(e, &["type"]), str_at(e, &["role"])) {
        (Some("message"), Some("user")) => {
            if first_str(e, &["turnId"]).is_some_and(|t| injected.contains(t)) {
                return;
            }
            Turn::new(Role::User, text_blocks(e.get("content"))).at(time)
        }
        (Some("message"), Some("assistant")) => Turn::new(Role::Assistant, text_blocks(e.get("content"))).at(time),
        (Some("effect"), _) if str_at(e, &["detail", "kind"]) == Some("tool") => {
            effect(b, e, time, partial, cwd);
            return;
        }
        _ => return,
    };
    if let Some(i) = b.push(turn) {
        if partial {
            if let Some(t) = b.session_mut().turns.get_mut(i) {
                t.partial = true;
            }
        }
    }
}

/// One tool effect: the call and its result in one entry, so one folded `ToolCall`.
fn effect(b: &mut SessionBuilder, e: &Value, time: Option<Timestamp>, partial: bool, cwd: Option<&str>) {
    let detail = e.get("detail").unwrap_or(&Value::Null);
    let name = first_str(detail, &["toolName"]).or_else(|| first_str(e, &["title"])).unwrap_or("tool");
    let input = detail.get("input").cloned().unwrap_or(Value::Null);
    let mut turn = call_turn(&TOOLS, &KEYS, short_name(name), &input, cwd, time);
    turn.partial = partial;
    let state = e.get("state").unwrap_or(&Value::Null);
    let output = state.get("output").unwrap_or(&Value::Null);
    let structured = output.get("structured_content").filter(|v| v.is_object());
    let mut text = String::new();
    let mut exit = None;
    if let Some(sc) = structured {
        text = [str_at(sc, &["stdout"]), str_at(sc, &["stderr"])]
            .into_iter()
            .flatten()
            .map(str::trim_end)
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
        exit = sc.get("returncode").and_then(Value::as_i64).map(ExitStatus::Code);
        if let (Some(tool), Some(cmd)) = (turn.tool.as_mut(), first_str(sc, &["command"])) {
            tool.command.get_or_insert_with(|| cmd.trim().to_string());
        }
    }
    if text.is_empty() {
        text = first_str(state, &["outputText"]).map(str::to_string).unwrap_or_else(|| text_blocks(output.get("content")));
    }
    let failed = at(state, &["display", "success"]).and_then(Value::as_bool) == Some(false)
        || first_str(output, &["type"]).is_some_and(|t| t != "success");
    turn.text = text.trim().to_string();
    if let Some(tool) = turn.tool.as_mut() {
        tool.is_error = failed || exit.as_ref().is_some_and(|x| !x.succeeded());
        tool.exit = exit;
    }
    b.push_call(first_str(e, &["id"]), turn);
}

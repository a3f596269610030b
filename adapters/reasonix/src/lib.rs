//! Reasonix (`reasonix`, DeepSeek-Reasonix): a coding agent built around DeepSeek's
//! prefix cache, with two store generations under one **state root** (`<state>` =
//! `$REASONIX_STATE_HOME`, else `$REASONIX_HOME`, else `[storage] state` in
//! `<home>/config.toml`, else `~/.reasonix`, `%APPDATA%\reasonix` on Windows):
//!
//! - **1.x**: one directory per session holding `events.frames` (RX4F zstd frames in
//!   SHA-256-checked batches, see [`frames`](crate::frames)) and `manifest.json`
//!   (`sessionId`, `createdAt`, `codec`, `source.path`); desktop sessions add
//!   `header.json` (`cwd`). Stores: `<state>/projects/<slug>/sessions-v4/<id>/`,
//!   `<state>/sessions-v4/<id>/`, `<state>/desktop-sessions-v5/by-id/<id>/`.
//! - **JSONL**: `<state>/projects/<slug>/sessions/<id>.jsonl` and
//!   `<state>/sessions/<id>.jsonl`, one OpenAI-shaped message a line, with a
//!   `<id>.jsonl.meta` sidecar (`created_at`, `updated_at`, `workspace_root`, titles);
//!   v0.x wrote `<id>.meta.json` (`workspace`, `summary`) and `ts` stamps in
//!   `<id>.events.jsonl` instead.
//!
//! No family reader fits (the message list is OpenAI-shaped, the 1.x container is
//! Reasonix's own), so the adapter reads both itself: `messages` maps a message list
//! onto turns, `frames` decodes and replays a frame log into one.
//!
//! | record | role | rule |
//! | --- | --- | --- |
//! | `role: "system"` | skipped | harness-authored |
//! | `role: "user"` with `host_authored`, 1.x `origin: "host"` or `local_only` | skipped | the host's session-context snapshot (its `Current workspace: "<root>"` line still names the project) |
//! | `role: "user"` | `User` | `raw_content` when set (the text before the host added context), else `content` |
//! | `role: "assistant"` `content` | `Assistant` | `reasoning_content` → `Reasoning` only with `include_reasoning` |
//! | assistant `tool_calls[{id, name, arguments}]` (v0.x `{id, type, function: {name, arguments}}`) | `ToolCall` | `arguments` a JSON string; `bash` → command; `read_file`, `write_file`, `edit_file` (+ span), `multi_edit` (+ first span), `notebook_edit` (`new_source` unless `edit_mode: "delete"`), `delete_range`, `delete_symbol` → file under `path`; `move_file` → `source_path` (delete), `destination_path` (write) |
//! | `role: "tool"` | folded into its call (by `tool_call_id`, else the oldest call still waiting), else `ToolOutput` | `raw_content` when set (the uncut result); 1.x `tool_execution.exitCode` → exit status, `tool_run_state: "failed"` → error; `delete_range`'s removed lines from the unified diff it returns |
//! | 1.x `message/complete`, `message/upsert`, `message/retract`, `history/replace`, `legacy/import` | (replay) | build the message list above |
//! | 1.x `session/title` | — | the session title (last wins) |
//! | other 1.x events (1.38.11: `session/config`, `turn/*`, `assistant/attempt`, `tool/call`, `tool/start`, `tool/result`), unfinished or failing batches | skipped | model context, tool state (the tool messages carry the results); a trailing batch without `batch/end` is a write in progress |
//!
//! Times: JSONL lines carry `createdAt` (unix ms) when the host stamped them; an
//! unstamped line is the previous one + 1 ms, starting from the `.meta` `created_at`
//! (v0.x: the first `ts` of `.events.jsonl`; neither: the file's mtime). 1.x messages
//! take `createdAt` when set, else their batch's time; the manifest's `createdAt`
//! widens the session. Title: `.meta` `custom_title` > `topic_title` > `name` (v0.x
//! `summary`), 1.x `session/title`. Project: `.meta` `workspace_root` (v0.x
//! `workspace`); 1.x `header.json` `cwd`, else the session-context line, else the
//! desktop workspace in `<state>/desktop/workspace-state-v1.json` that lists the id.
//!
//! Which copy wins (discovery): one session id is read from one store only, desktop >
//! `sessions-v4` > JSONL (1.x mirrors a JSONL transcript under the same id); a
//! transcript named by a 1.x manifest's `source.path` (a migration under a new id) or by
//! the desktop's `sourceMappings` is not read again. A manifest whose `source.path`
//! names a session directory is a fork: the parent is still read, and the fork names it
//! as `parent`. The legacy roots (`~/Library/Application Support/reasonix`,
//! `$XDG_CONFIG_HOME/reasonix`, `~/.config/reasonix`; `~/.reasonix` on Windows) are read
//! while present unless `REASONIX_HOME` or `REASONIX_STATE_HOME` is set, and only for
//! sessions the current store does not have (`DEJA_REASONIX_LEGACY_ROOT` moves them).
//!
//! `DEJA_REASONIX_ROOT` names the **state root** (the directory holding `sessions/`,
//! `projects/`, `sessions-v4/`, `desktop-sessions-v5/`); pointed at a `sessions`
//! directory it reads that directory's transcripts alone.

mod frames;
mod messages;
mod synth;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use deja_core::discover::{is_dir_entry, is_file_entry};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::model::SessionMeta;
use deja_core::read::{for_each_json_line, parse_json_document, read_source, read_tail, str_at, DecodeLimit};
use deja_core::store::{self, Layout, Root, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, SessionBuilder,
    SessionSink, SourceRef, StoreEnv, Timestamp,
};
use serde_json::Value;

pub use frames::MAGIC as FRAME_MAGIC;
pub mod runtime;
mod wiring;

/// The adapter id.
pub const ID: &str = "reasonix";

/// The Reasonix format.
pub struct ReasonixFormat;

deja_core::inventory::submit!(deja_core::Registration(&ReasonixFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Reasonix",
    container: "1.x: RX4F zstd frame log (`events.frames`) per session directory; JSONL transcript + `.jsonl.meta` sidecar",
    store: StoreSpec::new(&[
        // The state root: REASONIX_STATE_HOME, else REASONIX_HOME, else the `[storage] state`
        // Reasonix's config.toml names, else its home.
        store::Store {
            name: "",
            roots: &[
                Root::unix("${REASONIX_STATE_HOME:-${REASONIX_HOME:-<~/.reasonix/config.toml#/storage/state>|~/.reasonix}}"),
                Root::windows(
                    "${REASONIX_STATE_HOME:-${REASONIX_HOME:-<${APPDATA:-~/AppData/Roaming}/reasonix/config.toml#/storage/state>|${APPDATA:-~/AppData/Roaming}/reasonix}}",
                ),
            ],
            layout: Layout::Custom {
                shape: "{,projects/<workspace-slug>/}{sessions-v4/<id>/events.frames,sessions/<id>.jsonl}, desktop-sessions-v5/by-id/<id>/events.frames",
                walk: None,
            },
        },
        // Where older releases kept it; read only while neither variable is set.
        store::Store {
            name: "legacy",
            roots: &[
                Root::unix("~/Library/Application Support/reasonix"),
                Root::unix("${XDG_CONFIG_HOME:-~/.config}/reasonix"),
                Root::unix("~/.config/reasonix"),
                Root::windows("~/.reasonix"),
            ],
            layout: Layout::Custom { shape: "the state root's layout", walk: None },
        },
    ]),
    needs: &[],
    format_summary: "Reasonix keeps its sessions under one state root (`$REASONIX_STATE_HOME`, `$REASONIX_HOME`, `[storage] state` in \
        config.toml, else `~/.reasonix`), in two generations. 1.x writes one directory per session (`projects/<slug>/sessions-v4/<id>/`, \
        `sessions-v4/<id>/`, desktop `desktop-sessions-v5/by-id/<id>/`) with `events.frames`: RX4F frames of one zstd-compressed JSON \
        record each, committed in `batch/begin` … `batch/end` batches whose SHA-256 deja checks; events carry base64 payloads (or \
        `payloadRef`s into `.content-v1`) that replay into the message list. JSONL transcripts (`sessions/<id>.jsonl`, one OpenAI-shaped \
        message a line) carry their workspace, times and titles in a `.jsonl.meta` sidecar. One copy of a session is read: desktop over \
        `sessions-v4` over JSONL, migrations recognised by the manifest's `source.path`. Host-authored context messages are skipped, \
        `raw_content` is indexed instead of the host-augmented text, tool results fold into their calls with 1.x exit codes.",
    // The host's context travels in its own messages (`host_authored`, `origin: "host"`),
    // skipped by the parser, and `raw_content` is the user's text without the context
    // the host added; nothing Reasonix injects is left inside user text.
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "a plugin package (`reasonix-plugin.json`, apiVersion reasonix.io/plugin/v2) with `mcpServers` deja, installed with \
             `reasonix plugin install <dir> --name deja --replace --yes` (or written to <home>/plugins/deja + plugin-packages.json); \
             the model reaches it through `use_capability`",
        ),
        auto_recall: Capability::Planned(
            "`reasonix-auto`: a second plugin package `deja-recall` whose runtime is `deja reasonix-ext` (extension protocol v2, JSON-RPC over stdio) intercepting input.receive \
             (recall appended to the user turn), tool.after (hook-tool / hook-tool-after lines), compaction.prepare (hook-precompact) \
             and session.start/load/rotate",
        ),
        skill: Capability::Planned("`skills/deja-history/SKILL.md` inside the deja plugin package"),
        command: Capability::Planned("`commands/deja.md` inside the deja plugin package, run as `/deja:deja`"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::PerSession { doc: "`cd <workspace> && reasonix --resume <id>`; a JSONL session with no workspace: `reasonix --resume <path>`; 1.x global and desktop sessions have none", pick: resume_reasonix }, handoff: Handoff::Exec(&["reasonix", "run", "{prompt}"]) },
};

impl HarnessFormat for ReasonixFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::ReasonixWiring)
    }

    /// The state root, and the older places while neither of Reasonix's variables is set
    /// (they are an isolation boundary), candidates from every root picked together; a
    /// root naming a transcript directory (`…/sessions`) is that directory alone.
    fn discover(&self, env: &StoreEnv) -> Discovery {
        let mut found = Discovery::default();
        let mut roots = INFO.store.roots_of(ID, "", env);
        if ["REASONIX_HOME", "REASONIX_STATE_HOME"].iter().all(|v| env.var(v).is_none()) {
            roots.extend(INFO.store.roots_of(ID, "legacy", env));
        }
        let mut seen = HashSet::new();
        roots.retain(|r| seen.insert(r.clone()));
        let (dirs, homes): (Vec<PathBuf>, Vec<PathBuf>) = roots.into_iter().partition(|r| r.file_name().is_some_and(|n| n == "sessions"));
        let mut cands = Vec::new();
        for dir in &dirs {
            if found.looked_at(dir) {
                jsonl_in(dir, 0, &mut cands);
            }
        }
        found.sources = cands.into_iter().map(|c| c.src).collect();
        let picked = pick(collect(&homes, &mut found));
        found.sources.extend(picked);
        Discovery::sort_sources(&mut found.sources);
        found
    }

    fn synthetic(&self) -> Option<&dyn deja_core::SynthWriter> {
        Some(self)
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        if src.path.file_name().is_some_and(|n| n == "events.frames") {
            parse_frames(src, opts, out)
        } else {
            parse_jsonl(src, opts, out)
        }
    }
}

impl deja_core::SynthWriter for ReasonixFormat {
    fn write(&self, home: &Path, session: &deja_core::SynthSession) -> std::io::Result<PathBuf> {
        synth::write(home, session)
    }
}

/// The default state root: `~/.reasonix`, `%APPDATA%\reasonix` on Windows.
fn default_root(env: &StoreEnv) -> PathBuf {
    if cfg!(windows) {
        env.path_var("APPDATA").unwrap_or_else(|| env.home().join("AppData/Roaming")).join("reasonix")
    } else {
        env.home().join(".reasonix")
    }
}

/// `state` in the `[storage]` table of a config.toml (a basic or literal string). A
/// small reader instead of a TOML parser: only this one key matters here.
pub fn storage_state(toml: &str) -> Option<String> {
    let mut table = String::new();
    for line in toml.lines() {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[') {
            table = header.trim_end_matches(']').trim().to_string();
            continue;
        }
        let (key, value) = match (table.as_str(), line.split_once('=')) {
            ("storage", Some((k, v))) => (k.trim(), v.trim()),
            ("", Some((k, v))) if k.trim() == "storage.state" => ("state", v.trim()),
            _ => continue,
        };
        if key != "state" {
            continue;
        }
        let quote = value.chars().next().filter(|c| *c == '"' || *c == '\'')?;
        let body = &value[1..];
        let end = body.find(quote)?;
        let s = &body[..end];
        let s = if quote == '"' { s.replace("\\\\", "\\") } else { s.to_string() };
        return (!s.is_empty()).then_some(s);
    }
    None
}

/// Which store a candidate came from; a lower rank wins for one session id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Store {
    Desktop,
    V4,
    Jsonl,
}

struct Candidate {
    id: String,
    store: Store,
    root: usize,
    src: SourceRef,
    /// The manifest's `source.path` (1.x).
    source_path: Option<String>,
}

/// Sidecars and worker logs that sit beside transcripts but are not transcripts.
const NOT_TRANSCRIPTS: &[&str] =
    &[".events.jsonl", ".wire.jsonl", ".guardian.jsonl", ".conflicts.jsonl", ".adjudication.jsonl", ".execution.jsonl", ".turns.jsonl"];

fn is_transcript_name(name: &str) -> bool {
    name.ends_with(".jsonl")
        && !name.starts_with('.')
        && !name.starts_with("subagent-")
        && !NOT_TRANSCRIPTS.iter().any(|s| name.ends_with(s))
}

/// The transcripts directly in one `sessions` directory (the `subagents/` tree and dot
/// directories are never entered).
fn jsonl_in(dir: &Path, root: usize, out: &mut Vec<Candidate>) {
    for entry in deja_core::discover::list(dir) {
        // A name that is not UTF-8 is matched under its lossy form, not skipped.
        let os_name = entry.file_name();
        let name = os_name.to_string_lossy();
        let name = name.as_ref();
        if !is_transcript_name(name) || !is_file_entry(&entry) {
            continue;
        }
        let path = entry.path();
        let id = name.trim_end_matches(".jsonl").to_string();
        // The sidecar is named from the file's own bytes, not its lossy form.
        let mut meta = entry.file_name();
        meta.push(".meta");
        let mut src = SourceRef::file(&path).append_only().with_part(dir.join(meta));
        for v0 in [format!("{id}.meta.json"), format!("{id}.events.jsonl")] {
            if dir.join(&v0).is_file() {
                src = src.with_part(dir.join(v0));
            }
        }
        out.push(Candidate { id, store: Store::Jsonl, root, src, source_path: None });
    }
}

/// The session directories of one 1.x store (`sessions-v4/`, `desktop-sessions-v5/by-id/`).
fn frames_in(dir: &Path, store: Store, root: usize, out: &mut Vec<Candidate>) {
    for entry in deja_core::discover::list(dir).into_iter().filter(is_dir_entry) {
        if entry.file_name().to_str().is_none_or(|n| n.starts_with('.')) {
            continue;
        }
        let session = entry.path();
        let log = session.join("events.frames");
        if !log.is_file() {
            continue;
        }
        let manifest = read_json(&session.join("manifest.json"));
        let id = manifest
            .as_ref()
            .and_then(|m| str_at(m, &["sessionId"]))
            .map(str::to_string)
            .unwrap_or_else(|| entry.file_name().to_string_lossy().into_owned());
        let source_path = manifest.as_ref().and_then(|m| str_at(m, &["source", "path"])).map(str::to_string);
        let mut src = SourceRef::file(&log).with_part(session.join("manifest.json"));
        if store == Store::Desktop {
            src = src.with_part(session.join("header.json"));
        }
        out.push(Candidate { id, store, root, src, source_path });
    }
}

/// Every candidate under the roots, in the order of the page's stores.
fn collect(roots: &[PathBuf], found: &mut Discovery) -> (Vec<Candidate>, HashSet<String>) {
    let mut cands = Vec::new();
    let mut mapped = HashSet::new();
    for (i, root) in roots.iter().enumerate() {
        if !found.looked_at(root) {
            continue;
        }
        frames_in(&root.join("desktop-sessions-v5/by-id"), Store::Desktop, i, &mut cands);
        frames_in(&root.join("sessions-v4"), Store::V4, i, &mut cands);
        jsonl_in(&root.join("sessions"), i, &mut cands);
        for project in deja_core::discover::subdirs(&root.join("projects")) {
            frames_in(&project.join("sessions-v4"), Store::V4, i, &mut cands);
            jsonl_in(&project.join("sessions"), i, &mut cands);
        }
        let state = root.join("desktop/workspace-state-v1.json");
        if let Some(doc) = read_json(&state) {
            source_mappings(&doc, false, &mut mapped);
            // The registry names desktop sessions' workspaces: part of their fingerprint.
            for c in cands.iter_mut().filter(|c| c.store == Store::Desktop && c.root == i) {
                c.src.parts.push(state.clone());
            }
        }
    }
    (cands, mapped)
}

/// Every string under a `sourceMappings` member (keys too): the sources desktop imported.
fn source_mappings(v: &Value, inside: bool, out: &mut HashSet<String>) {
    match v {
        Value::String(s) if inside => {
            out.insert(s.clone());
        }
        Value::Array(items) => items.iter().for_each(|i| source_mappings(i, inside, out)),
        Value::Object(map) => {
            for (k, child) in map {
                let here = inside || k == "sourceMappings";
                if inside {
                    out.insert(k.clone());
                }
                source_mappings(child, here, out);
            }
        }
        _ => {}
    }
}

/// One copy per session: desktop > `sessions-v4` > JSONL, the current store over the
/// legacy roots; transcripts a 1.x manifest or the desktop's `sourceMappings` name as
/// their origin are left out.
fn pick((mut cands, mapped): (Vec<Candidate>, HashSet<String>)) -> Vec<SourceRef> {
    cands.sort_by(|a, b| (a.store, a.root).cmp(&(b.store, b.root)).then_with(|| a.src.path.cmp(&b.src.path)));
    let migrated: HashSet<String> =
        cands.iter().filter_map(|c| c.source_path.as_deref()).filter(|p| p.ends_with(".jsonl")).map(str::to_string).collect();
    let migrated_names: HashSet<&str> = migrated.iter().filter_map(|p| p.rsplit(['/', '\\']).next()).collect();
    let mut best: HashMap<String, ()> = HashMap::new();
    let mut out = Vec::new();
    for c in &cands {
        if c.store != Store::Desktop {
            let dir = if c.store == Store::V4 { c.src.path.parent() } else { Some(c.src.path.as_path()) };
            let named = |p: &Path| mapped.contains(&p.display().to_string());
            if mapped.contains(&c.id) || dir.is_some_and(named) {
                continue;
            }
        }
        if c.store == Store::Jsonl {
            let name = c.src.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if migrated.contains(&c.src.path.display().to_string()) || migrated_names.contains(name) {
                continue;
            }
        }
        if best.insert(c.id.clone(), ()).is_none() {
            out.push(c.src.clone());
        }
    }
    out
}

fn read_json(path: &Path) -> Option<Value> {
    let bytes = std::fs::read(path).ok()?;
    parse_json_document(&bytes, path).ok()
}

fn time_at(v: &Value, key: &str) -> Option<Timestamp> {
    v.get(key).and_then(Timestamp::from_json).filter(|t| t.0 > 0)
}

fn text_at(v: &Value, key: &str) -> Option<String> {
    str_at(v, &[key]).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
}

/// A JSONL transcript (with its `.jsonl.meta`, or v0.x `.meta.json` + `.events.jsonl`).
fn parse_jsonl(src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let path = &src.path;
    let mut stats = ParseStats::default();
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let id = name.strip_suffix(".jsonl").unwrap_or(name).to_string();
    let dir = path.parent().unwrap_or(Path::new(""));
    let (bytes, base) = match &src.resume {
        Some(r) => (read_tail(path, r.offset, &mut stats)?.bytes, r.offset),
        None => (read_source(path, &mut stats)?.bytes, 0),
    };
    let mut lines = Vec::new();
    for_each_json_line(&bytes, base, path, &mut stats, |_, v| lines.push(v));

    let session_id = src.resume.as_ref().map_or(id.clone(), |r| r.session_id.clone());
    let mut b = SessionBuilder::new(ID, session_id, src.clone());
    let meta = read_json(&dir.join(format!("{name}.meta")));
    let v0 = read_json(&dir.join(format!("{id}.meta.json")));
    let mut start = None;
    if let Some(meta) = &meta {
        let s = b.session_mut();
        s.title = ["custom_title", "topic_title", "name"].iter().find_map(|k| text_at(meta, k));
        s.project = text_at(meta, "workspace_root");
        start = time_at(meta, "created_at");
        b.touch(start);
        b.touch(time_at(meta, "updated_at"));
    } else if let Some(v0) = &v0 {
        let s = b.session_mut();
        s.title = text_at(v0, "summary");
        s.project = text_at(v0, "workspace");
    }
    if start.is_none() {
        // v0.x: the `ts` stamps of the events sidecar bound the session.
        let events = std::fs::read(dir.join(format!("{id}.events.jsonl"))).unwrap_or_default();
        let mut ignored = ParseStats::default();
        let mut stamps = Vec::new();
        for_each_json_line(&events, 0, path, &mut ignored, |_, v| stamps.extend(time_at(&v, "ts")));
        start = stamps.iter().min().copied();
        b.touch(start);
        b.touch(stamps.iter().max().copied());
    }
    if start.is_none() && src.resume.is_none() && !lines.iter().any(|l| time_at(l, "createdAt").is_some()) {
        start = std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| Timestamp::from_millis(d.as_millis() as i64));
    }

    // A tail goes on with the calls the read before left waiting for their results.
    let mut emitter = src.resume.as_ref().map(|r| messages::Emitter::resumed(&r.state)).unwrap_or_default();
    let mut prev = start;
    for line in &lines {
        // An unstamped line is the previous one + 1 ms.
        let time = time_at(line, "createdAt").or_else(|| prev.map(|p| Timestamp(p.0 + 1)));
        prev = time.or(prev);
        emitter.message(&mut b, line, time, opts);
    }
    stats.tail = Some(emitter.tail_state());
    if let Some(s) = b.finish() {
        out.session(s);
    }
    Ok(stats)
}

/// A 1.x session directory's `events.frames`.
fn parse_frames(src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
    let path = &src.path;
    let mut stats = ParseStats::default();
    let bytes = read_source(path, &mut stats)?.bytes;
    let dir = path.parent().unwrap_or(Path::new(""));
    let dir_name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let manifest = read_json(&dir.join("manifest.json"));
    let id = manifest.as_ref().and_then(|m| text_at(m, "sessionId")).unwrap_or(dir_name);

    // `payloadRef` objects live in the store's `.content-v1` beside the session dirs
    // (1.38's manifest names it: `contentRoot: "../.content-v1"`).
    let mut objects: Vec<PathBuf> = Vec::new();
    if let Some(root) = manifest.as_ref().and_then(|m| text_at(m, "contentRoot")) {
        objects.push(dir.join(root).join("objects"));
    }
    objects.extend(dir.ancestors().skip(1).take(2).map(|d| d.join(".content-v1/objects")));
    let (records, torn) =
        frames::decode(&bytes, path, &mut stats, &DecodeLimit::current()).map_err(|e| FormatError::refused(path, e.to_string()))?;
    let replay = frames::replay(&records, torn, &objects, path, &mut stats);

    let mut b = SessionBuilder::new(ID, id.clone(), src.clone());
    b.session_mut().title = replay.title.clone();
    if let Some(m) = &manifest {
        b.touch(time_at(m, "createdAt"));
        if let Some(parent) = fork_parent(m) {
            let s = b.session_mut();
            s.parent = Some(parent);
            s.kind = Some("fork".to_string());
        }
    }
    let project = read_json(&dir.join("header.json"))
        .and_then(|h| text_at(&h, "cwd"))
        .or_else(|| {
            replay
                .messages
                .iter()
                .filter(|(m, _)| messages::is_host_message(m))
                .find_map(|(m, _)| messages::workspace_line(&messages::content_text(m.get("content"))))
        })
        .or_else(|| desktop_workspace(dir, &id));
    b.session_mut().project = project;

    let mut emitter = messages::Emitter::default();
    for (msg, time) in &replay.messages {
        emitter.message(&mut b, msg, *time, opts);
    }
    if let Some(s) = b.finish() {
        out.session(s);
    }
    Ok(stats)
}

/// The parent a fork names: `source.path` naming a session directory (a `.jsonl` there
/// is a migrated transcript, not a parent). The parent's manifest id when it is there,
/// else the directory's name.
fn fork_parent(manifest: &Value) -> Option<String> {
    let p = str_at(manifest, &["source", "path"]).map(str::trim).filter(|p| !p.is_empty())?;
    let kind = str_at(manifest, &["source", "kind"]).unwrap_or("");
    if p.ends_with(".jsonl") || kind.contains("migrat") || kind.contains("import") {
        return None;
    }
    let dir = Path::new(p);
    read_json(&dir.join("manifest.json"))
        .and_then(|m| text_at(&m, "sessionId"))
        .or_else(|| p.trim_end_matches(['/', '\\']).rsplit(['/', '\\']).next().map(str::to_string).filter(|s| !s.is_empty()))
}

/// For a desktop session (`<state>/desktop-sessions-v5/by-id/<id>/`): the workspace in
/// `<state>/desktop/workspace-state-v1.json` whose entry lists the id.
fn desktop_workspace(dir: &Path, id: &str) -> Option<String> {
    let by_id = dir.parent()?;
    if by_id.file_name()? != "by-id" {
        return None;
    }
    let state = by_id.parent()?.parent()?;
    let doc = read_json(&state.join("desktop/workspace-state-v1.json"))?;
    workspace_listing(&doc, id)
}

const WORKSPACE_KEYS: &[&str] = &["path", "root", "cwd", "workspaceRoot", "workspacePath", "workspace"];

/// The innermost object with a workspace path that mentions `id` somewhere below it.
fn workspace_listing(v: &Value, id: &str) -> Option<String> {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                if k == "sourceMappings" {
                    continue;
                }
                if let Some(found) = workspace_listing(child, id) {
                    return Some(found);
                }
            }
            let root = WORKSPACE_KEYS
                .iter()
                .find_map(|k| map.get(*k).and_then(Value::as_str))
                .filter(|p| p.starts_with('/') || p.contains(":\\") || p.starts_with('~'))?;
            mentions(v, id).then(|| root.to_string())
        }
        Value::Array(items) => items.iter().find_map(|i| workspace_listing(i, id)),
        _ => None,
    }
}

fn mentions(v: &Value, id: &str) -> bool {
    match v {
        Value::String(s) => s == id,
        Value::Array(items) => items.iter().any(|i| mentions(i, id)),
        Value::Object(map) => map.iter().any(|(k, c)| k == id || mentions(c, id)),
        _ => false,
    }
}

/// Project sessions reopen in their workspace; a JSONL session with no workspace by its
/// path; 1.x global and desktop sessions have no resume.
fn resume_reasonix(session: &SessionMeta) -> Result<ResumeSpec, &'static str> {
    let path = session.path.replace('\\', "/");
    if path.contains("desktop-sessions") {
        return Err("desktop sessions reopen in the app");
    }
    if path.contains("/sessions-v4/") && !path.contains("/projects/") {
        return Err("1.x global sessions have no resume");
    }
    if path.ends_with(".jsonl") && session.project.is_none() {
        return Ok(ResumeSpec::anywhere(&["reasonix", "--resume", "{path}"]));
    }
    Ok(ResumeSpec::in_dir(&["reasonix", "--resume", "{id}"]))
}

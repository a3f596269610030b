//! CodeWhale (`codewhale`, shipped as `deepseek-tui` until v0.8.41): one pretty-printed JSON
//! document per session at `${CODEWHALE_HOME:-~/.codewhale}/sessions/<id>.json`, rewritten
//! whole on change, and the pre-rebrand root `~/.deepseek/sessions/<id>.json` that
//! CodeWhale migrates on first access. Not the DeepSeek Harness (`deepseek`).
//!
//! No family reader: the document (`{schema_version, metadata, messages}`) is CodeWhale's
//! own, its messages Anthropic-style block lists. Each document is one source (not append
//! only); a rewritten one replaces its session, keyed by `metadata.id`.
//!
//! Discovery is non-recursive: `*.json` directly in the root, without the sidecars
//! (`offline_queue.json`, `latest.json`, `session_boot_owners.json`, `constitution.json`);
//! subdirectories (`checkpoints/`, per-session state and `artifacts/`, migration archives)
//! are bookkeeping. `DEJA_CODEWHALE_ROOT` names the current sessions root (the directory
//! the documents sit in); `CODEWHALE_HOME` replaces `~/.codewhale` and, as in CodeWhale's
//! own resolver, turns the legacy root off. A legacy document whose name is also in the
//! current root is the migrated copy's original and is not read twice.
//!
//! | record / field | Turn | rule |
//! | --- | --- | --- |
//! | `role: "user"` `text` blocks | `User` | `<turn_meta>…</turn_meta>` (0.10.0+) is injected text, stripped at ingest |
//! | `role: "assistant"` / `"assistant_interrupted"` `text` blocks | `Assistant` | |
//! | `thinking` blocks | `Reasoning` | only with `include_reasoning` |
//! | `tool_use` (`id`, `name`, `input`) | `ToolCall` | shell tools → `tool.command`; file tools → `files` + `edit`; `apply_patch` (unified diff or whole files) → `files` + `edit` |
//! | `tool_result` (`tool_use_id`, `content`, `is_error`) | folded into its call | `Command exited with code N` on the last line → exit N; an error drops the call's `apply_patch` changes; unpaired → `ToolOutput` |
//! | `role: "system"` / `"developer"` | skipped | summaries, branch summaries and sub-agent framing share the role and cannot be told apart |
//!
//! Times: no message carries one; message `i` gets `metadata.created_at` (else
//! `updated_at`) + `i` ms, and `updated_at` widens the session's last update.
//! `metadata.parent_session_id` makes the session a `fork` of that id.

pub mod hook;
mod wiring;

use std::path::{Path, PathBuf};

use deja_core::discover::find_files;
use deja_core::exit::ExitLine;
use deja_core::family::json_docs::{call_turn, first_str, json_arg, text_blocks, ToolKeys};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::model::{cap_text, MAX_EDIT_BYTES};
use deja_core::patch::join_cwd;
use deja_core::read::{parse_json_document, read_source, str_at};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, Edit, ExitStatus, FileAction, FileTouch, FormatError, HarnessFormat, HarnessInfo, InjectedText,
    ParseOptions, ParseStats, Role, SessionBuilder, SessionSink, SourceRef, StoreEnv, Timestamp, ToolMap, Turn,
};
use serde_json::Value;

const ID: &str = "codewhale";

/// Files directly in `sessions/` that are CodeWhale's bookkeeping, not sessions.
const SIDECARS: &[&str] = &["offline_queue.json", "latest.json", "session_boot_owners.json", "constitution.json"];

/// The CodeWhale adapter.
pub struct CodeWhaleFormat;

deja_core::inventory::submit!(deja_core::Registration(&CodeWhaleFormat));

/// `<turn_meta>` (date, workspace, permission posture, files) is added to every user
/// message by 0.10.0.
static INJECTED: InjectedText = InjectedText { blocks: &["turn_meta"], ..InjectedText::NONE };

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "CodeWhale",
    container: "JSON, one document per session",
    store: StoreSpec::new(&[
        Store {
            name: "",
            roots: &[Root::any("${CODEWHALE_HOME:-~/.codewhale}/sessions")],
            layout: Layout::Custom { shape: "<id>.json", walk: None },
        },
        // Before the rebrand, until CodeWhale migrates it; never read while CODEWHALE_HOME is set.
        Store { name: "legacy", roots: &[Root::any("~/.deepseek/sessions")], layout: Layout::Custom { shape: "<id>.json", walk: None } },
    ]),
    needs: &[],
    format_summary: "Pretty-printed JSON documents `{schema_version, metadata, messages}` directly in \
        `${CODEWHALE_HOME:-~/.codewhale}/sessions/` (and the legacy `~/.deepseek/sessions/` until CodeWhale migrates \
        it), rewritten on change. `metadata` holds the id, title, RFC 3339 `created_at`/`updated_at`, the workspace \
        and a fork's `parent_session_id`; `messages[]` are Anthropic-style block lists (`text`, `thinking`, \
        `tool_use`, `tool_result`). Tool results pair with calls by `tool_use_id`; a failed shell result ends with \
        `Command exited with code N`. Messages carry no time and are ordered from `created_at`; `system` and \
        `developer` messages are skipped.",
    injected: &INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "`servers.deja` `{command, args: [\"mcp\"]}` in ${CODEWHALE_HOME:-~/.codewhale}/mcp.json, plus `mcp_deja_deja` \
             added to `[tools] always_load` in config.toml",
        ),
        auto_recall: Capability::Planned(
            "`deja install codewhale-auto`: `[[hooks.hooks]]` in config.toml (TUI only): message_submit → `hook-prompt --digest \
             --codewhale` (the text kept first, recall appended), tool_call_before → `hook-tool --codewhale` \
             (`additionalContext`, no `decision`)",
        ),
        skill: Capability::Planned("shared ~/.agents/skills/deja-history/SKILL.md"),
        command: Capability::Planned("/deja: ~/.codewhale/commands/deja.md (always under $HOME; no description frontmatter)"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Always(ResumeSpec::in_dir(&["codewhale", "--resume", "{id}"])),
        handoff: Handoff::Exec(&["codewhale", "{prompt}"]),
    },
};

/// CodeWhale's tool names, old (before 0.9.6) and new.
const TOOLS: ToolMap = ToolMap {
    shell: &["exec_shell", "bash", "Bash", "terminal/run", "task_shell_start"],
    read: &["read", "read_file"],
    edit: &["edit", "edit_file", "fim_edit", "str_replace"],
    write: &["write", "write_file"],
};

const KEYS: ToolKeys = ToolKeys {
    command: &["command"],
    path: &["path", "file_path", "filePath"],
    old: &["old_string", "search", "old_str", "oldText", "old_text"],
    new: &["new_string", "replace", "new_str", "newText", "new_text", "replacement", "content"],
};

impl HarnessFormat for CodeWhaleFormat {
    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::CodewhaleWiring)
    }

    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn discover(&self, env: &StoreEnv) -> Discovery {
        let mut found = Discovery::default();
        let mut names = Vec::new();
        for current in INFO.store.roots_of(ID, "", env) {
            if found.looked_at(&current) {
                for p in session_files(&current) {
                    names.extend(p.file_name().map(|n| n.to_os_string()));
                    found.sources.push(SourceRef::file(p));
                }
            }
        }
        // CODEWHALE_HOME is an isolation boundary in CodeWhale: it never reads ~/.deepseek
        // then. A session already migrated is read from the current store only.
        if env.var("CODEWHALE_HOME").is_some() {
            Discovery::sort_sources(&mut found.sources);
            return found;
        }
        for legacy in INFO.store.roots_of(ID, "legacy", env) {
            if found.looked_at(&legacy) {
                found.sources.extend(
                    session_files(&legacy)
                        .into_iter()
                        .filter(|p| p.file_name().is_none_or(|n| !names.iter().any(|m| m == n)))
                        .map(SourceRef::file),
                );
            }
        }
        Discovery::sort_sources(&mut found.sources);
        found
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let bytes = read_source(&src.path, &mut stats)?.bytes;
        let doc = parse_json_document(&bytes, &src.path)?;
        stats.records = 1;
        let meta = doc.get("metadata").unwrap_or(&Value::Null);
        let stem = src.path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let id = first_str(meta, &["id"]).unwrap_or(stem).to_string();
        let workspace = first_str(meta, &["workspace"]);
        let created = meta.get("created_at").and_then(Timestamp::from_json);
        let updated = meta.get("updated_at").and_then(Timestamp::from_json);
        let base = created.or(updated);
        let mut p = Parser { b: SessionBuilder::new(ID, id, src.clone()), opts, cwd: workspace, patches: Vec::new() };
        if let Some(Value::Array(messages)) = doc.get("messages") {
            for (i, m) in messages.iter().enumerate() {
                let time = base.map(|t| Timestamp(t.0 + i as i64));
                p.message(m, time, &mut stats);
            }
        }
        let mut b = p.b;
        if b.turn_count() > 0 {
            b.touch(updated);
        }
        let s = b.session_mut();
        s.project = workspace.map(str::to_string);
        s.title = first_str(meta, &["title"]).and_then(|t| t.lines().map(str::trim).find(|l| !l.is_empty())).map(str::to_string);
        if let Some(parent) = first_str(meta, &["parent_session_id"]) {
            s.parent = Some(parent.to_string());
            s.kind = Some("fork".to_string());
        }
        if let Some(session) = b.finish() {
            out.session(session);
        }
        Ok(stats)
    }
}

/// Session documents directly in `dir` (no recursion: subdirectories are bookkeeping).
fn session_files(dir: &Path) -> Vec<PathBuf> {
    find_files(dir, 0, &|name| name.ends_with(".json") && !SIDECARS.contains(&name))
}

struct Parser<'a> {
    b: SessionBuilder,
    opts: &'a ParseOptions,
    cwd: Option<&'a str>,
    /// Ids of `apply_patch` calls, so a failed result can drop their changes.
    patches: Vec<String>,
}

impl Parser<'_> {
    /// One message: its role picks how its blocks are read.
    fn message(&mut self, m: &Value, time: Option<Timestamp>, stats: &mut ParseStats) {
        let role = match str_at(m, &["role"]) {
            Some("user") => Role::User,
            Some("assistant" | "assistant_interrupted") => Role::Assistant,
            Some(_) => return,
            None => {
                // A message read and skipped is a record: stats never skip more than they read.
                stats.records += 1;
                stats.skip(|| "message without a role".to_string());
                return;
            }
        };
        let blocks: Vec<&Value> = match m.get("content") {
            Some(Value::Array(items)) => items.iter().collect(),
            Some(s @ Value::String(_)) => vec![s],
            _ => Vec::new(),
        };
        let mut text: Vec<String> = Vec::new();
        for block in blocks {
            match block.get("type").and_then(Value::as_str) {
                Some("text") | None => text.extend(block.as_str().or_else(|| str_at(block, &["text"])).map(str::to_string)),
                Some("thinking") => self.thinking(block, time),
                Some("tool_use") => {
                    self.flush(role, &mut text, time);
                    self.tool_use(block, time);
                }
                Some("tool_result") => {
                    self.flush(role, &mut text, time);
                    self.tool_result(block, time);
                }
                Some(_) => {}
            }
        }
        self.flush(role, &mut text, time);
    }

    /// Speech gathered so far in a message, as one turn.
    fn flush(&mut self, role: Role, text: &mut Vec<String>, time: Option<Timestamp>) {
        let joined = text.iter().map(|t| t.trim()).filter(|t| !t.is_empty()).collect::<Vec<_>>().join("\n");
        text.clear();
        self.b.push(Turn::new(role, joined).at(time));
    }

    /// A `thinking` block: reasoning, not speech.
    fn thinking(&mut self, block: &Value, time: Option<Timestamp>) {
        if self.opts.include_reasoning {
            if let Some(t) = str_at(block, &["thinking"]) {
                self.b.push(Turn::new(Role::Reasoning, t).at(time));
            }
        }
    }

    /// A `tool_use` block: the call with its command, files and edit span.
    fn tool_use(&mut self, block: &Value, time: Option<Timestamp>) {
        let name = str_at(block, &["name"]).unwrap_or("tool");
        let input = json_arg(block.get("input"));
        let input = if input.is_object() { input } else { Value::Object(Default::default()) };
        let mut turn = call_turn(&TOOLS, &KEYS, name, &input, self.cwd, time);
        match name {
            "edit" => {
                if let Some(edit) = turn.files.first().and_then(|f| edits_span(&f.path, &input)) {
                    turn.edit = Some(edit);
                }
            }
            "apply_patch" => apply_patch(&mut turn, &input, self.cwd),
            _ => {}
        }
        let id = str_at(block, &["id"]);
        self.b.push_call(id, turn);
        if let (Some(id), "apply_patch") = (id, name) {
            self.patches.push(id.to_string());
        }
    }

    /// A `tool_result` block, folded into its call.
    fn tool_result(&mut self, block: &Value, time: Option<Timestamp>) {
        let id = str_at(block, &["tool_use_id"]).unwrap_or("");
        let output = text_blocks(block.get("content"));
        let is_error = block.get("is_error").and_then(Value::as_bool).unwrap_or(false);
        let exit = exit_code(&output).map(ExitStatus::Code);
        if !self.b.complete_call(id, &output, is_error, exit.clone(), time) {
            self.b.push_orphan_result(id, &output, is_error, exit, time);
            return;
        }
        // A failed patch changed nothing: keep the call, not its changes.
        if is_error && self.patches.iter().any(|p| p == id) {
            if let Some(call) = self.b.call_mut(id) {
                call.files.clear();
                call.edit = None;
            }
        }
    }
}

/// `Command exited with code N` on the last line of a failed shell result (also wrapped
/// as `Error: …`).
fn exit_code(output: &str) -> Option<i64> {
    deja_core::exit::exit_code(output, &[ExitLine::last("Command exited with code ").inline()])
}

/// The `edit` tool's span: `edits[{oldText,newText}]` (an array, or one as a JSON
/// string), or one top-level `oldText`/`newText` pair; several edits join with `\n`.
fn edits_span(path: &str, input: &Value) -> Option<Edit> {
    let list = json_arg(input.get("edits"));
    let items: Vec<&Value> = match &list {
        Value::Array(items) => items.iter().collect(),
        Value::Object(_) => vec![&list],
        _ => Vec::new(),
    };
    if items.is_empty() {
        return None;
    }
    let olds: Vec<&str> = items.iter().filter_map(|e| first_str(e, &["oldText", "old_text", "old_string"])).collect();
    let news: Vec<&str> = items.iter().filter_map(|e| first_str(e, &["newText", "new_text", "new_string"])).collect();
    if olds.is_empty() && news.is_empty() {
        return None;
    }
    Some(Edit { path: path.to_string(), old: capped(olds.join("\n")), new: Some(capped(news.join("\n"))) })
}

fn capped(mut s: String) -> String {
    cap_text(&mut s, MAX_EDIT_BYTES);
    s
}

/// `apply_patch`: a unified diff under `patch` (retargeted to `path`/`file_path`/`filePath`
/// when one is set), or whole files under `replace` (deprecated `changes`) as
/// `[{path, content}]`. Paths are relative to the workspace.
fn apply_patch(turn: &mut Turn, input: &Value, cwd: Option<&str>) {
    let target = first_str(input, &["path", "file_path", "filePath"]).map(|p| join_cwd(p, cwd));
    if let Some(patch) = first_str(input, &["patch"]) {
        for (path, old, new) in unified_diff(patch) {
            let path = target.clone().unwrap_or_else(|| join_cwd(&path, cwd));
            if !turn.files.iter().any(|f| f.path == path) {
                turn.files
                    .push(FileTouch { path: path.clone(), action: if old.is_empty() { FileAction::Write } else { FileAction::Edit } });
            }
            if turn.edit.is_none() && !(old.is_empty() && new.is_empty()) {
                turn.edit = Some(Edit { path, old: capped(old), new: Some(capped(new)) });
            }
        }
        return;
    }
    let whole = json_arg(input.get("replace").or_else(|| input.get("changes")));
    if let Value::Array(files) = whole {
        for f in &files {
            let Some(path) = first_str(f, &["path"]) else { continue };
            let path = join_cwd(path, cwd);
            turn.files.push(FileTouch { path: path.clone(), action: FileAction::Write });
            if turn.edit.is_none() {
                turn.edit = str_at(f, &["content"]).map(|c| Edit { path, old: String::new(), new: Some(capped(c.to_string())) });
            }
        }
    }
}

/// Per file of a unified diff (`--- a/x` / `+++ b/x`): its path, removed lines, added lines.
fn unified_diff(patch: &str) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, Vec<&str>, Vec<&str>)> = Vec::new();
    let mut old_path: Option<&str> = None;
    for line in patch.lines() {
        if let Some(p) = line.strip_prefix("--- ") {
            old_path = Some(p.trim());
        } else if let Some(p) = line.strip_prefix("+++ ") {
            let p = p.trim();
            // A deleted file's new side is /dev/null; its old side names it.
            let p = if p == "/dev/null" { old_path.unwrap_or(p) } else { p };
            let p = p.strip_prefix("a/").or_else(|| p.strip_prefix("b/")).unwrap_or(p);
            out.push((p.to_string(), Vec::new(), Vec::new()));
        } else if let Some(last) = out.last_mut() {
            if let Some(removed) = line.strip_prefix('-') {
                last.1.push(removed);
            } else if let Some(added) = line.strip_prefix('+') {
                last.2.push(added);
            }
        }
    }
    out.into_iter().map(|(p, o, n)| (p, o.join("\n"), n.join("\n"))).collect()
}

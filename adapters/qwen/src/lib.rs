//! Qwen Code (`qwen`): a fork of an older Gemini CLI. One append-only JSONL transcript
//! per session at `<runtime>/projects/<encoded-cwd>/chats/<session-id>.jsonl`, where
//! `<runtime>` is `$QWEN_RUNTIME_DIR`, else `settings.json`'s
//! `advanced.runtimeOutputDir`, else the home `${QWEN_HOME:-~/.qwen}`.
//!
//! `DEJA_QWEN_ROOT` names the sessions root, `<runtime>/projects` (the directory the
//! encoded-cwd directories sit in). Only `.jsonl` files whose parent directory is named
//! `chats` are transcripts.
//!
//! The envelope is Claude-like (`uuid`/`parentUuid` chain, `sessionId`, `timestamp`,
//! `type`, 0.15.10 adds `cwd` and `version` on every line); the body is Gemini-API
//! parts (`message.parts`), read by `deja_core::family::gemini_chat` with Gemini's tool
//! vocabulary. The records are this adapter's:
//!
//! | line `type` / field | Turn | rule |
//! | --- | --- | --- |
//! | `user`, `message.role` `user` | `User` | text parts joined; `functionResponse` parts are results (below) |
//! | `assistant`, `message.role` `model` (or absent) | `Assistant` | text parts, `thought: true` parts skipped |
//! | part `thought: true` | `Reasoning` | only with `include_reasoning` |
//! | part `functionCall {id?, name, args}` | `ToolCall` | family mapping: `run_shell_command` → command, `read_file`/`write_file`/`replace`/`read_many_files` → files, `replace` → edit |
//! | `tool_result` (0.15.10), or a `functionResponse` part on a `user`/`assistant` line | folded into the call by `functionResponse.id` / `toolCallResult.callId` | `output` framing read (`Exit Code: N` → exit); `toolCallResult.status` `error` → `is_error`; unpaired → `ToolOutput` carrying the call id |
//! | `system` (`attribution_snapshot`, `ui_telemetry`), other types | skip | telemetry repeats answers (`response_text`) |
//! | text part `<qwen:user-prompt-submit-context>…</…>` on a `user` line | stripped at ingest | a hook's context ([`INJECTED`]) |
//! | malformed or torn line | skipped | counted |
//!
//! Every turn keeps its line's `uuid`/`parentUuid` as `node`. Session id: the file stem,
//! replaced by the first non-empty `sessionId` on a `user`/`assistant` line. Project:
//! the line's `cwd`, else the encoded directory decoded against the filesystem (else
//! its last two dash parts). A read of a tail goes on from the `cwd` the read before
//! found (`TailState::cwd`).

mod wiring;

use std::path::Path;

use deja_core::family::gemini_chat::{self, GeminiDialect, GEMINI_TOOLS};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::project::{dash_fallback_name, decode_dash_path};
use deja_core::read::for_each_source_line;
use deja_core::store::{Files, Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, ExitStatus, FormatError, HarnessFormat, HarnessInfo, InjectedText, NodeRef, ParseOptions, ParseStats, Role,
    SessionBuilder, SessionSink, SourceRef, Timestamp, Turn,
};
use serde_json::Value;

const ID: &str = "qwen";

/// The Qwen Code adapter.
pub struct QwenFormat;

deja_core::inventory::submit!(deja_core::Registration(&QwenFormat));

/// Qwen Code in the Gemini-API parts family: Gemini CLI's tool names.
pub static DIALECT: GeminiDialect = GeminiDialect { harness: ID, tools: GEMINI_TOOLS };

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Qwen Code",
    container: "JSONL, one append-only file per session",
    store: StoreSpec::new(&[Store {
        name: "",
        // The runtime directory: QWEN_RUNTIME_DIR, else the one Qwen's settings name, else
        // Qwen's home.
        roots: &[Root::any(
            "${QWEN_RUNTIME_DIR:-<${QWEN_HOME:-~/.qwen}/settings.json#/advanced/runtimeOutputDir>|${QWEN_HOME:-~/.qwen}}/projects",
        )],
        layout: Layout::Files(Files::new("**/chats/*.jsonl").depth(6).append_only()),
    }]),
    needs: &[],
    format_summary: "Qwen Code appends one JSONL line per record to `projects/<encoded-cwd>/chats/<session-id>.jsonl`: \
        `user` and `assistant` lines chained by `uuid`/`parentUuid`, each with `sessionId`, `timestamp` and (0.15.10) `cwd`, \
        whose `message.parts` are Gemini-API parts — text, `thought` reasoning, `functionCall`s. Tool results arrive as \
        `tool_result` lines (older releases: `functionResponse` parts on `user`/`assistant` lines), paired with the call by \
        id; `run_shell_command` output is framed with `Exit Code: N`. `system` telemetry lines repeat answers and are \
        skipped.",
    injected: &INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Planned("`${QWEN_HOME:-~/.qwen}/settings.json` `mcpServers.deja = {command: <exe>, args: [mcp]}`"),
        auto_recall: Capability::Planned(
            "`settings.json` `hooks.UserPromptSubmit` → `hook-prompt` (timeout in ms); SessionStart context is never consumed",
        ),
        skill: Capability::Planned("shared `~/.agents/skills/deja-history/SKILL.md`"),
        command: Capability::Planned("via the skill: listed under `/skills`, run as `/deja-history <words>`"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Always(ResumeSpec::in_dir(&["qwen", "-r", "{id}"])),
        handoff: Handoff::Exec(&["qwen", "-i", "{prompt}"]),
    },
};

/// What a `UserPromptSubmit` hook answers (deja's own recall among them) reaches the
/// transcript as one more text part of the user's message, HTML-escaped and wrapped in
/// `<qwen:user-prompt-submit-context>…</qwen:user-prompt-submit-context>` (Qwen Code
/// escapes `<`/`>` inside, so the block cannot close early): never the person's words.
pub static INJECTED: InjectedText = InjectedText { blocks: &["qwen:user-prompt-submit-context"], ..InjectedText::NONE };

impl HarnessFormat for QwenFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::QwenWiring)
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let stem = src.path.file_stem().and_then(|s| s.to_str()).unwrap_or("").to_string();
        let id = src.resume.as_ref().map(|r| r.session_id.clone()).filter(|s| !s.is_empty()).unwrap_or(stem);
        // A tail goes on from the `cwd` the read before found.
        let cwd = src.resume.as_ref().and_then(|r| r.state.cwd.clone());
        let mut t = Transcript { b: SessionBuilder::new(ID, id, src.clone()), opts, id_seen: src.resume.is_some(), cwd };
        for_each_source_line(src, &mut stats, &[], |_, v| t.line(&v))?;
        let Transcript { mut b, cwd, .. } = t;
        stats.tail = Some(deja_core::TailState { cwd: cwd.clone(), ..Default::default() });
        b.session_mut().project = cwd.or_else(|| encoded_project(&src.path));
        if let Some(s) = b.finish() {
            out.session(s);
        }
        Ok(stats)
    }

    fn synthetic(&self) -> Option<&dyn deja_core::SynthWriter> {
        Some(self)
    }
}

/// The project from the encoded directory (`projects/<encoded-cwd>/chats/<id>.jsonl`).
fn encoded_project(path: &Path) -> Option<String> {
    let encoded = path.parent()?.parent()?.file_name()?.to_str()?;
    Some(match decode_dash_path(encoded, Path::new("/")) {
        Some(p) => p.display().to_string(),
        None => dash_fallback_name(encoded),
    })
}

struct Transcript<'a> {
    b: SessionBuilder,
    opts: &'a ParseOptions,
    /// A `sessionId` already named the session (the first one wins).
    id_seen: bool,
    cwd: Option<String>,
}

impl Transcript<'_> {
    fn line(&mut self, v: &Value) {
        let time = v.get("timestamp").and_then(Timestamp::from_json);
        let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
        if !matches!(kind, "user" | "assistant" | "tool_result") {
            // system telemetry, control records: harness state.
            return;
        }
        self.b.touch(time);
        if self.cwd.is_none() {
            self.cwd = v.get("cwd").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
        }
        if kind != "tool_result" && !self.id_seen {
            if let Some(id) = v.get("sessionId").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                self.b.set_id(id);
                self.id_seen = true;
            }
        }
        let node = node_of(v);
        let parts = v.pointer("/message/parts").unwrap_or(&Value::Null);
        match kind {
            "tool_result" => self.results(v, parts, time, &node),
            _ => {
                let role = match v.pointer("/message/role").and_then(Value::as_str) {
                    Some("model") => Role::Assistant,
                    Some("user") => Role::User,
                    _ if kind == "assistant" => Role::Assistant,
                    _ => Role::User,
                };
                self.message(role, parts, time, &node);
                self.results(v, parts, time, &node);
            }
        }
    }

    /// Speech, reasoning and calls of a `user`/`assistant` line.
    fn message(&mut self, role: Role, parts: &Value, time: Option<Timestamp>, node: &Option<NodeRef>) {
        if role == Role::Assistant && self.opts.include_reasoning {
            let thought = gemini_chat::thought_text(parts);
            if !thought.is_empty() {
                self.push(Turn::new(Role::Reasoning, thought).at(time), node);
            }
        }
        let text = gemini_chat::parts_text(parts);
        if !text.trim().is_empty() {
            self.push(Turn::new(role, text).at(time), node);
        }
        for call in gemini_chat::function_calls(parts) {
            let name = call.get("name").and_then(Value::as_str).unwrap_or("");
            let mut turn = gemini_chat::call_turn(&DIALECT, name, call.get("args").unwrap_or(&Value::Null)).at(time);
            turn.node = node.clone();
            self.b.push_call(gemini_chat::part_id(call), turn);
        }
    }

    /// `functionResponse` parts: folded into their call, else kept as a `ToolOutput`.
    fn results(&mut self, v: &Value, parts: &Value, time: Option<Timestamp>, node: &Option<NodeRef>) {
        let result = v.get("toolCallResult");
        let failed = result.and_then(|r| r.get("status")).and_then(Value::as_str) == Some("error");
        for resp in gemini_chat::function_responses(parts) {
            let (output, exit) = gemini_chat::response_output(resp);
            let exit = exit.map(ExitStatus::Code);
            let id = gemini_chat::part_id(resp).or_else(|| result.and_then(gemini_chat::part_id)).unwrap_or("");
            if id.is_empty() || !self.b.complete_call(id, &output, failed, exit.clone(), time) {
                if let Some(i) = self.b.push_orphan_result(id, &output, failed, exit, time) {
                    if let Some(turn) = self.b.session_mut().turns.get_mut(i) {
                        turn.node = node.clone();
                        if let Some(tool) = turn.tool.as_mut() {
                            tool.name = resp.get("name").and_then(Value::as_str).unwrap_or("").to_string();
                        }
                    }
                }
            }
        }
    }

    fn push(&mut self, mut turn: Turn, node: &Option<NodeRef>) {
        turn.node = node.clone();
        self.b.push(turn);
    }
}

/// `uuid` / `parentUuid` of a line.
fn node_of(v: &Value) -> Option<NodeRef> {
    let id = v.get("uuid").and_then(Value::as_str).filter(|s| !s.is_empty())?;
    Some(NodeRef { id: id.to_string(), parent: v.get("parentUuid").and_then(Value::as_str).map(str::to_string) })
}

mod synth;

impl deja_core::SynthWriter for QwenFormat {
    fn write(&self, home: &std::path::Path, session: &deja_core::SynthSession) -> std::io::Result<std::path::PathBuf> {
        synth::write(home, session)
    }
}

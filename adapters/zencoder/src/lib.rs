//! Zencoder (`zencoder`), Zencoder's agent (IDE plugin / CLI): one append-only JSONL file
//! per session, `~/.zencoder/sessions/<session-id>.jsonl` (`DEJA_ZENCODER_ROOT` names the
//! `sessions` directory). Line 1 is a session header; every later line is a message with a
//! `role` and Vercel-AI-SDK-style content parts. No family reader writes this shape; tool
//! inputs use Claude Code's keys, so calls are decoded with the Claude family's
//! [`tool_call_turn`] under Claude's tool names.
//!
//! | line / `role` | Turn | rule |
//! | --- | --- | --- |
//! | header (line 1, no `role`) | — | `id` (else the file stem), `parentId` → parent when `creationReason` is a continuation, `createdAt`/`updatedAt` |
//! | `system` | skipped | a plain-string environment banner; its `Working directory: <path>` line is the project |
//! | `user`, `text` parts with no `tag` or `tag` `user-input` | `User` | texts joined by newlines |
//! | `user`, `text` parts with any other `tag` (`instructions`, `system-reminder`, …), `skill` parts | skipped | injected context |
//! | `assistant`, `text` parts | `Assistant` | `reasoning` parts → `Reasoning` only with `include_reasoning` |
//! | `assistant`, `tool-call` parts (`toolCallId`, `toolName`, `input`) | `ToolCall` | `input.command` → command, `input.file_path` → files, `input.old_string` → edit |
//! | `tool`, `tool-result` parts (`toolCallId`, `content[]`, `isError`) | folded into the call, else `ToolOutput` | inner parts' `text` joined (`text`, `text-file-chunk`, `shell-result`); inner parts with a `tag` are injected reminders, skipped |
//! | `finish`, `permission`, others | skipped | turn boundaries and approvals; their times still widen the session |
//! | malformed or torn line | skipped | counted in the parse stats |
//!
//! A read of a tail goes on from the banner's working directory the read before kept
//! (`TailState::cwd`); the header is behind it and is not read again.

use deja_core::family::claude_jsonl::{tool_call_turn, CLAUDE_TOOLS};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::read::for_each_source_line;
use deja_core::{
    Capabilities, Capability, Files, FormatError, HarnessFormat, HarnessInfo, InjectedText, Layout, ParseOptions, ParseStats, Role, Root,
    SessionBuilder, SessionSink, SourceRef, Store, StoreSpec, TailState, Timestamp, Turn,
};
use serde_json::Value;

const ID: &str = "zencoder";

/// The `creationReason`s that make a session a continuation of its `parentId`.
const CONTINUATIONS: &[&str] = &["directContinuation", "summarizedContinuation", "summarizationRequest"];

/// The Zencoder adapter.
pub struct ZencoderFormat;

deja_core::inventory::submit!(deja_core::Registration(&ZencoderFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Zencoder",
    container: "JSONL, one file per session: a header line, then messages with content parts",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("~/.zencoder/sessions")],
        layout: Layout::Files(Files::new("*.jsonl").append_only()),
    }]),
    needs: &[],
    format_summary: "Zencoder keeps one append-only JSONL file per session in `~/.zencoder/sessions/`: a header line (`id`, \
        `parentId`, `creationReason`, times) then messages with Vercel-AI-SDK-style content parts. The system banner is skipped \
        but gives the working directory; user text parts tagged as anything but `user-input` are injected instructions and \
        reminders; assistant `tool-call` parts pair with `tool-result` parts by `toolCallId`, decoded with Claude Code's tool \
        names and input keys. Continuations (`creationReason` `directContinuation`, `summarizedContinuation`, \
        `summarizationRequest`) keep their `parentId` as the parent session.",
    // Injected context is told apart by part `tag` in the parser, not by text.
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::Unknown, handoff: Handoff::Paste("no start-with-prompt command is known") },
};

impl HarnessFormat for ZencoderFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let stem = src.path.file_stem().and_then(|s| s.to_str()).unwrap_or(ID).to_string();
        let mut file = File { opts, b: SessionBuilder::new(ID, stem, src.clone()), header: Header::default(), cwd: None };
        if let Some(r) = &src.resume {
            // The header and the system banner sit before the resume point: the id is the
            // resumed one, the banner's cwd the read before kept (the header's parent and
            // times the index holds).
            file.b.set_id(r.session_id.clone());
            file.header.seen = true;
            file.cwd = r.state.cwd.clone();
        }
        for_each_source_line(src, &mut stats, &[], |_, v| file.line(&v))?;
        stats.tail = Some(TailState { cwd: file.cwd.clone(), ..TailState::default() });
        if let Some(s) = file.finish() {
            out.session(s);
        }
        Ok(stats)
    }

    fn synthetic(&self) -> Option<&dyn deja_core::SynthWriter> {
        Some(self)
    }
}

#[derive(Debug, Default)]
struct Header {
    seen: bool,
    id: Option<String>,
    parent: Option<String>,
    created: Option<Timestamp>,
    updated: Option<Timestamp>,
}

struct File<'a> {
    opts: &'a ParseOptions,
    b: SessionBuilder,
    header: Header,
    cwd: Option<String>,
}

impl File<'_> {
    fn line(&mut self, v: &Value) {
        let time = v.get("createdAt").and_then(Timestamp::from_json);
        match text(v, "role") {
            None => self.meta(v),
            Some("system") => {
                self.meta(v);
                self.b.touch(time);
            }
            Some("user") => self.user(v.get("content"), time),
            Some("assistant") => self.assistant(v.get("content"), time),
            Some("tool") => self.tool(v.get("content"), time),
            // finish, permission and roles not yet seen.
            _ => self.b.touch(time),
        }
    }

    /// The header (the first line without a `role`) and the system banner's cwd.
    fn meta(&mut self, v: &Value) {
        match text(v, "role") {
            None if !self.header.seen => {
                let continuation = text(v, "creationReason").is_some_and(|r| CONTINUATIONS.contains(&r));
                self.header = Header {
                    seen: true,
                    id: text(v, "id").map(str::to_string),
                    parent: continuation.then(|| text(v, "parentId").map(str::to_string)).flatten(),
                    created: v.get("createdAt").and_then(Timestamp::from_json),
                    updated: v.get("updatedAt").and_then(Timestamp::from_json),
                };
            }
            Some("system") if self.cwd.is_none() => {
                self.cwd = v.get("content").and_then(Value::as_str).and_then(working_directory);
            }
            _ => {}
        }
    }

    fn user(&mut self, content: Option<&Value>, time: Option<Timestamp>) {
        let said = match content {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => parts
                .iter()
                .filter(|p| text(p, "type") == Some("text") && text(p, "tag").is_none_or(|t| t == "user-input"))
                .filter_map(|p| text(p, "text"))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        };
        self.b.touch(time);
        self.b.push(Turn::new(Role::User, said.trim()).at(time));
    }

    fn assistant(&mut self, content: Option<&Value>, time: Option<Timestamp>) {
        self.b.touch(time);
        let parts: &[Value] = match content {
            Some(Value::Array(parts)) => parts,
            Some(Value::String(s)) => {
                self.b.push(Turn::new(Role::Assistant, s.trim()).at(time));
                return;
            }
            _ => &[],
        };
        for part in parts {
            match text(part, "type") {
                Some("text") => {
                    self.b.push(Turn::new(Role::Assistant, text(part, "text").unwrap_or("").trim()).at(time));
                }
                Some("reasoning") if self.opts.include_reasoning => {
                    self.b.push(Turn::new(Role::Reasoning, text(part, "text").unwrap_or("").trim()).at(time));
                }
                Some("tool-call") => {
                    let call_id = text(part, "toolCallId");
                    if call_id.is_some_and(|id| self.b.call_mut(id).is_some()) {
                        continue;
                    }
                    let name = text(part, "toolName").unwrap_or("tool");
                    let turn = tool_call_turn(&CLAUDE_TOOLS, name, part.get("input").unwrap_or(&Value::Null), time);
                    self.b.push_call(call_id, turn);
                }
                _ => {}
            }
        }
    }

    fn tool(&mut self, content: Option<&Value>, time: Option<Timestamp>) {
        self.b.touch(time);
        let Some(Value::Array(parts)) = content else { return };
        for part in parts.iter().filter(|p| text(p, "type") == Some("tool-result")) {
            let output = match part.get("content") {
                Some(Value::Array(inner)) => inner
                    .iter()
                    .filter(|p| text(p, "tag").is_none())
                    .filter_map(|p| text(p, "text"))
                    .map(str::trim_end)
                    .collect::<Vec<_>>()
                    .join("\n"),
                Some(Value::String(s)) => s.clone(),
                _ => String::new(),
            };
            let output = output.trim();
            let is_error = part.get("isError").and_then(Value::as_bool).unwrap_or(false);
            let call_id = text(part, "toolCallId").unwrap_or("");
            if !self.b.complete_call(call_id, output, is_error, None, time) {
                self.b.push_orphan_result(call_id, output, is_error, None, time);
            }
        }
    }

    fn finish(mut self) -> Option<deja_core::Session> {
        if let Some(id) = self.header.id.take().filter(|_| self.b.session().source.resume.is_none()) {
            self.b.set_id(id);
        }
        self.b.touch(self.header.created);
        self.b.touch(self.header.updated);
        let s = self.b.session_mut();
        s.project = self.cwd.take();
        if let Some(parent) = self.header.parent.take() {
            s.parent = Some(parent);
            s.kind = Some("continuation".into());
        }
        self.b.finish()
    }
}

/// The `Working directory: <path>` line of the system banner.
pub fn working_directory(banner: &str) -> Option<String> {
    banner.lines().find_map(|l| l.trim().strip_prefix("Working directory:")).map(str::trim).filter(|p| !p.is_empty()).map(str::to_string)
}

/// A non-empty string field.
fn text<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str).filter(|s| !s.is_empty())
}

mod synth;

impl deja_core::SynthWriter for ZencoderFormat {
    fn write(&self, home: &std::path::Path, session: &deja_core::SynthSession) -> std::io::Result<std::path::PathBuf> {
        synth::write(home, session)
    }
}

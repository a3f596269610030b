//! gptme (`gptme`), the terminal agent: one directory per conversation under the logs
//! root `${XDG_DATA_HOME:-~/.local/share}/gptme/logs/` (`DEJA_GPTME_ROOT` names it), each
//! holding an append-only `conversation.jsonl` (other files beside it are not the
//! transcript). No family reader writes this shape; the adapter reads it with deja-core's
//! JSONL reader.
//!
//! Each line is one message, `{"role", "content", "timestamp", …}` with optional `pinned`,
//! `hide` and, on assistant lines, `metadata` (`model`, `usage`, `cost`).
//!
//! | `role` | Turn | rule |
//! | --- | --- | --- |
//! | `system` | skipped | system prompt, tool descriptions, context injections; `**Working Directory:** <path>` in one of them is the project |
//! | `system` with `call_id` (0.35) | folded into its `ToolCall` | the tool's result; unpaired → `ToolOutput` |
//! | `user` | `User` | `content`; one starting `<system>` (0.35's "No tool call detected" nudge) is skipped |
//! | `assistant` | `Assistant` | `content` without its tool lines; then one `ToolCall` per `@<tool>(<call id>): <JSON>` line (0.35; `shell`'s `command` is `tool.command`) and per fenced block tagged `shell` (the block is `tool.command`) |
//! | `tool` | `ToolOutput` | `content` trimmed; gptme links no output to a call, so it stays on its own |
//! | `metadata.usage`, `metadata.cost` | skipped | usage |
//! | malformed or torn line | skipped | counted in the parse stats |
//!
//! Session: id = the directory name; project = the working directory of the system
//! information message, else the name's topic words (without the `YYYY-MM-DD-` or
//! `YYYY-MM-DD-HHMMSS-` prefix); no title (the index derives one). Timestamps carry no zone and are read as
//! UTC. A read of a tail goes on from the working directory the read before found
//! (`TailState::cwd`).

use std::path::Path;

use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::read::for_each_source_line;
use deja_core::store::{Files, Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Role, SessionBuilder,
    SessionSink, SourceRef, Timestamp, ToolUse, Turn,
};
use serde_json::Value;

const ID: &str = "gptme";

/// The gptme adapter.
pub struct GptmeFormat;

deja_core::inventory::submit!(deja_core::Registration(&GptmeFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "gptme",
    container: "JSONL, one append-only conversation.jsonl per conversation directory",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("${XDG_DATA_HOME:-~/.local/share}/gptme/logs")],
        layout: Layout::Files(Files::new("*/conversation.jsonl").append_only()),
    }]),
    needs: &[],
    format_summary: "gptme keeps one directory per conversation under `${XDG_DATA_HOME:-~/.local/share}/gptme/logs/`, named \
        `YYYY-MM-DD[-HHMMSS]-<topic-words>`, with an append-only `conversation.jsonl` of `{role, content, timestamp}` \
        messages. System messages (prompt, tool descriptions, context) are skipped; user and assistant messages are speech; \
        tool calls are `@<tool>(<call id>): <JSON>` lines in the assistant text (0.35, `--tool-format tool`), their results \
        `system` messages with that `call_id`, or fenced `shell` blocks answered by `tool` messages with no call id. The hidden \
        system-information message names the working directory, which is the project (else the topic words).",
    // System context is its own `system` message, skipped by role.
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

impl HarnessFormat for GptmeFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, _opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let name = src.path.parent().and_then(Path::file_name).and_then(|n| n.to_str()).unwrap_or(ID).to_string();
        let id = src.resume.as_ref().map_or_else(|| name.clone(), |r| r.session_id.clone());
        let mut b = SessionBuilder::new(ID, id, src.clone());
        // A tail goes on from the working directory the read before found (the system
        // message naming it is behind the resume point).
        let mut cwd = src.resume.as_ref().and_then(|r| r.state.cwd.clone());
        for_each_source_line(src, &mut stats, &[], |_, v| message(&mut b, &mut cwd, &v))?;
        stats.tail = Some(deja_core::TailState { cwd: cwd.clone(), ..Default::default() });
        b.session_mut().project = Some(cwd.unwrap_or_else(|| topic_label(&name).to_string()));
        if let Some(s) = b.finish() {
            out.session(s);
        }
        Ok(stats)
    }

    fn synthetic(&self) -> Option<&dyn deja_core::SynthWriter> {
        Some(self)
    }
}

fn message(b: &mut SessionBuilder, cwd: &mut Option<String>, v: &Value) {
    let time = v.get("timestamp").and_then(Timestamp::from_json);
    let content = v.get("content").and_then(Value::as_str).unwrap_or("");
    match v.get("role").and_then(Value::as_str) {
        // gptme 0.35's autonomous loop injects `<system>No tool call detected…</system>` as
        // a user message: harness text, not speech.
        Some("user") if content.trim_start().starts_with("<system>") => b.touch(time),
        Some("user") => {
            b.push(Turn::new(Role::User, content.trim()).at(time));
        }
        Some("assistant") => {
            let (prose, calls) = tool_lines(content);
            if !prose.trim().is_empty() {
                b.push(Turn::new(Role::Assistant, prose.trim()).at(time));
            }
            for (name, id, args) in calls {
                let mut call = Turn::new(Role::ToolCall, "").at(time);
                let command = if name == "shell" { args.get("command").and_then(Value::as_str).map(str::to_string) } else { None };
                call.tool = Some(ToolUse { name, command, ..ToolUse::default() });
                b.push_call(Some(&id), call);
            }
            for command in shell_blocks(content) {
                let mut call = Turn::new(Role::ToolCall, "").at(time);
                call.tool = Some(ToolUse { name: "shell".into(), command: Some(command), ..ToolUse::default() });
                b.push_call(None, call);
            }
        }
        Some("tool") => {
            b.push(Turn::new(Role::ToolOutput, content.trim()).at(time));
        }
        // gptme 0.35 (`--tool-format tool`) files a tool's result as a `system` message
        // with the call's `call_id`.
        Some("system") => match v.get("call_id").and_then(Value::as_str).filter(|id| !id.is_empty()) {
            Some(id) => {
                // One whose call an earlier read took keeps the call's id, so the indexer
                // folds it into that call.
                if !b.complete_call(id, content.trim(), false, None, time) {
                    b.push_orphan_result(id, content.trim(), false, None, time);
                }
            }
            None => {
                // The hidden system-information message names the working directory.
                if cwd.is_none() {
                    *cwd = content
                        .lines()
                        .find_map(|l| l.trim().strip_prefix("**Working Directory:**"))
                        .map(|p| p.trim().to_string())
                        .filter(|p| !p.is_empty());
                }
                b.touch(time)
            }
        },
        // Roles not yet seen.
        _ => b.touch(time),
    }
}

/// gptme 0.35's tool calls in an assistant message (`--tool-format tool`): lines
/// `@<tool>(<call id>): <JSON arguments>`. Returns the other lines and the calls.
pub fn tool_lines(content: &str) -> (String, Vec<(String, String, Value)>) {
    let mut prose = Vec::new();
    let mut calls = Vec::new();
    for line in content.lines() {
        let parsed = line.strip_prefix('@').and_then(|rest| {
            let (name, rest) = rest.split_once('(')?;
            let (id, args) = rest.split_once("):")?;
            let name_ok = !name.is_empty() && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-');
            let args: Value = serde_json::from_str(args.trim()).ok()?;
            (name_ok && !id.is_empty()).then(|| (name.to_string(), id.to_string(), args))
        });
        match parsed {
            Some(call) => calls.push(call),
            None => prose.push(line),
        }
    }
    (prose.join("\n"), calls)
}

/// The bodies of the fenced code blocks tagged `shell` in a markdown message, trimmed.
pub fn shell_blocks(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut open: Option<(usize, bool, Vec<&str>)> = None;
    for line in markdown.lines() {
        let t = line.trim_start();
        let fence = t.len() - t.trim_start_matches('`').len();
        match &mut open {
            None if fence >= 3 => {
                let tag = t[fence..].split_whitespace().next().unwrap_or("");
                open = Some((fence, tag == "shell", Vec::new()));
            }
            Some((width, _, _)) if fence >= *width && t[fence..].trim().is_empty() => {
                if let Some((_, true, body)) = open.take() {
                    let body = body.join("\n");
                    let body = body.trim();
                    if !body.is_empty() {
                        out.push(body.to_string());
                    }
                }
            }
            Some((_, _, body)) => body.push(line),
            None => {}
        }
    }
    out
}

/// The topic words of a conversation name: `2026-06-13-write-hello-world` and
/// `2026-06-13-101500-write-hello-world` → `write-hello-world`; any other name whole.
pub fn topic_label(name: &str) -> &str {
    let is_digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let parts: Vec<&str> = name.splitn(5, '-').collect();
    match parts.as_slice() {
        [y, m, d, time, rest] if is_digits(y, 4) && is_digits(m, 2) && is_digits(d, 2) && is_digits(time, 6) && !rest.is_empty() => rest,
        [y, m, d, ..] if is_digits(y, 4) && is_digits(m, 2) && is_digits(d, 2) => {
            // `YYYY-MM-DD-` is 11 ASCII bytes; a bare date has no topic words.
            name.get(11..).filter(|r| !r.is_empty()).unwrap_or(name)
        }
        _ => name,
    }
}

mod synth;

impl deja_core::SynthWriter for GptmeFormat {
    fn write(&self, home: &std::path::Path, session: &deja_core::SynthSession) -> std::io::Result<std::path::PathBuf> {
        synth::write(home, session)
    }
}

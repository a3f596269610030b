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
//! | `system` | skipped | system prompt, tool descriptions, context injections |
//! | `user` | `User` | `content` |
//! | `assistant` | `Assistant` | `content`, the whole markdown; then one `ToolCall` per fenced block tagged `shell` (the block is `tool.command`) |
//! | `tool` | `ToolOutput` | `content` trimmed; gptme links no output to a call, so it stays on its own |
//! | `metadata.usage`, `metadata.cost` | skipped | usage |
//! | malformed or torn line | skipped | counted in the parse stats |
//!
//! Session: id = the directory name; project = its topic words (the name without the
//! `YYYY-MM-DD-` or `YYYY-MM-DD-HHMMSS-` prefix), since gptme records no working
//! directory; no title (the index derives one). Timestamps carry no zone and are read as
//! UTC.

use std::path::{Path, PathBuf};

use deja_core::discover::is_dir_entry;
use deja_core::read::{for_each_json_line, read_source, read_tail};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, Os, ParseOptions, ParseStats, Role,
    SessionBuilder, SessionSink, SourceRef, StoreEnv, StorePath, Timestamp, ToolUse, Turn,
};
use serde_json::Value;

const ID: &str = "gptme";

/// The transcript inside a conversation directory.
const CONVERSATION: &str = "conversation.jsonl";

/// The gptme adapter.
pub struct GptmeFormat;

deja_core::inventory::submit!(deja_core::Registration(&GptmeFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "gptme",
    container: "JSONL, one append-only conversation.jsonl per conversation directory",
    stores: &[StorePath { os: Os::Any, path: "~/.local/share/gptme/logs/<conversation-name>/conversation.jsonl" }],
    env_vars: &["XDG_DATA_HOME"],
    deja_vars: &["DEJA_GPTME_ROOT"],
    needs: &[],
    format_summary: "gptme keeps one directory per conversation under `${XDG_DATA_HOME:-~/.local/share}/gptme/logs/`, named \
        `YYYY-MM-DD[-HHMMSS]-<topic-words>`, with an append-only `conversation.jsonl` of `{role, content, timestamp}` \
        messages. System messages (prompt, tool descriptions, context) are skipped; user and assistant messages are speech; \
        tool use lives in the assistant's markdown as fenced blocks, of which `shell` blocks become command records, and tool \
        output arrives as `tool` messages with no call id. No working directory is recorded: the topic words are the project.",
    // System context is its own `system` message, skipped by role.
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
        resume: Capability::Unknown,
        handoff: Capability::Planned("paste: deja prints the handoff digest for the user to paste"),
    },
};

impl HarnessFormat for GptmeFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn discover(&self, env: &StoreEnv) -> Discovery {
        let mut found = Discovery::default();
        let root = logs_root(env);
        if found.looked_at(&root) {
            for entry in std::fs::read_dir(&root).into_iter().flatten().flatten().filter(is_dir_entry) {
                let log = entry.path().join(CONVERSATION);
                if log.is_file() {
                    found.sources.push(SourceRef::file(log).append_only());
                }
            }
            Discovery::sort_sources(&mut found.sources);
        }
        found
    }

    fn parse(&self, src: &SourceRef, _opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let (bytes, base) = match &src.resume {
            Some(r) => {
                let tail = read_tail(&src.path, r.offset, &mut stats)?;
                (tail.bytes, r.offset.min(tail.file_len))
            }
            None => (read_source(&src.path, &mut stats)?.bytes, 0),
        };
        let name = src.path.parent().and_then(Path::file_name).and_then(|n| n.to_str()).unwrap_or(ID).to_string();
        let id = src.resume.as_ref().map_or_else(|| name.clone(), |r| r.session_id.clone());
        let mut b = SessionBuilder::new(ID, id, src.clone());
        for_each_json_line(&bytes, base, &src.path, &mut stats, |_, v| message(&mut b, &v));
        b.session_mut().project = Some(topic_label(&name).to_string());
        if let Some(s) = b.finish() {
            out.session(s);
        }
        Ok(stats)
    }

    fn synthetic(&self) -> Option<&dyn deja_core::SynthWriter> {
        Some(self)
    }
}

/// `DEJA_GPTME_ROOT`, else `${XDG_DATA_HOME:-~/.local/share}/gptme/logs`.
fn logs_root(env: &StoreEnv) -> PathBuf {
    env.deja_root(ID).unwrap_or_else(|| env.xdg_data_home().join("gptme/logs"))
}

fn message(b: &mut SessionBuilder, v: &Value) {
    let time = v.get("timestamp").and_then(Timestamp::from_json);
    let content = v.get("content").and_then(Value::as_str).unwrap_or("");
    match v.get("role").and_then(Value::as_str) {
        Some("user") => {
            b.push(Turn::new(Role::User, content.trim()).at(time));
        }
        Some("assistant") => {
            b.push(Turn::new(Role::Assistant, content.trim()).at(time));
            for command in shell_blocks(content) {
                let mut call = Turn::new(Role::ToolCall, "").at(time);
                call.tool = Some(ToolUse { name: "shell".into(), command: Some(command), ..ToolUse::default() });
                b.push_call(None, call);
            }
        }
        Some("tool") => {
            b.push(Turn::new(Role::ToolOutput, content.trim()).at(time));
        }
        // `system` and roles not yet seen.
        _ => b.touch(time),
    }
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

//! iFlow CLI (`iflow`): a Gemini-CLI derivative that writes Claude-Code-shaped JSONL, one
//! append-only file per session at `~/.iflow/projects/<project-dir>/session-<uuid>.jsonl`
//! (`<project-dir>` a dash-encoded working directory; the lines carry `cwd`).
//!
//! A dialect of the Claude-shaped JSONL family: the reader, with its record → role table,
//! is `deja_core::family::claude_jsonl`, read with these [`ClaudeQuirks`]:
//!
//! | quirk | what iFlow writes | reading |
//! | --- | --- | --- |
//! | `snapshot_runs` | several `assistant` lines per turn, same `parentUuid`, ms apart, each a sliding snapshot of the active tool calls | one message: each text once, each `tool_use` id once |
//! | `gemini_results` | a `tool_result` whose `content` is a Gemini object `{callId, responseParts: {functionResponse: {response: {output}}}}`, or (`iflow -p`, 0.5.19) the bare part `{functionResponse: {id, name, response: {output}}}` | `response.output` is the text, a shell's `Exit Code: N` its exit (string/array content still read) |
//! | `text_chunks` | `--stream` writes one `text` block per streamed chunk (0.5.19) | joined as written |
//! | `path_keys` | `read_file` names its file `absolute_path` | `files` |
//! | `skip_user_prefixes` | `This session is being continued`, `[Request interrupted`, `<task-notification>`, `<local-command-`, `Stop hook feedback:` user texts | not speech |
//! | `command_envelopes` | `<command-name>` envelopes | `/name args` |
//!
//! Tools: `read_file` (`absolute_path`) reads, `replace` (`file_path`, `old_string`,
//! `new_string`) edits with its span, `write_file` writes, `run_shell_command` runs
//! `command` (its exit from an `Exit Code: N` line, Gemini's shell output; none without).
//! The session id is the file stem without `session-`; when the lines' `sessionId` names
//! another session, this one continues it (`parent`, `kind = "continuation"`).
//! `isCompactSummary` records are `Summary` turns as in Claude Code; `isMeta` ones are
//! skipped. `DEJA_IFLOW_ROOT` names the projects root.

use std::path::{Path, PathBuf};

use deja_core::family::claude_jsonl::{self, ClaudeDialect, ClaudeQuirks, FileHints};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::store::{Files, Layout, Root, Store, StoreSpec};
use deja_core::work::ToolMap;
use deja_core::{
    Capabilities, Capability, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Session, SessionSink,
    SourceRef, SynthSession, SynthWriter,
};

const ID: &str = "iflow";

/// `<project-dir>/session-<uuid>.jsonl`; leave room for nesting the page does not show.
const MAX_DEPTH: usize = 4;

/// iFlow's Gemini-family tool names (Claude's kept for imported sessions).
pub const IFLOW_TOOLS: ToolMap = ToolMap {
    shell: &["run_shell_command", "Bash"],
    read: &["read_file", "read_many_files", "Read"],
    edit: &["replace", "Edit", "MultiEdit"],
    write: &["write_file", "Write"],
};

/// Where iFlow's records depart from Claude Code's.
pub const IFLOW_QUIRKS: ClaudeQuirks = ClaudeQuirks {
    gemini_results: true,
    snapshot_runs: true,
    path_keys: &["absolute_path"],
    skip_user_prefixes: &[
        "This session is being continued",
        "[Request interrupted",
        "<task-notification>",
        "<local-command-",
        "Stop hook feedback:",
    ],
    command_envelopes: true,
    text_chunks: true,
};

/// iFlow in the Claude-shaped JSONL family.
pub static DIALECT: ClaudeDialect = ClaudeDialect { harness: ID, config_dir: ".iflow", tools: IFLOW_TOOLS };

/// What iFlow injects into user records: Claude Code's reminders and caveats, and its own
/// task notifications and stop-hook feedback.
pub static IFLOW_INJECTED: InjectedText = InjectedText {
    blocks: &["system-reminder", "local-command-caveat", "task-notification"],
    spans: &[("<command-name>", "</command-args>")],
    wrappers: &[],
    preambles: &[],
    headed_preambles: &[],
    line_prefixes: &["This session is being continued from a previous conversation", "[Request interrupted by user", "Stop hook feedback:"],
    not_titles: &["<local-command", "<command-", "<task-notification", "Caveat:", "/"],
};

/// The iFlow CLI adapter.
pub struct IflowFormat;

deja_core::inventory::submit!(deja_core::Registration(&IflowFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "iFlow CLI",
    container: "Claude-shaped JSONL, one file per session",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("~/.iflow/projects")],
        layout: Layout::Files(Files::new("**/session-*.jsonl").depth(MAX_DEPTH).append_only()),
    }]),
    needs: &[],
    format_summary: "iFlow CLI writes Claude-Code-shaped append-only JSONL under `~/.iflow/projects/<project-dir>/`, one \
        `session-<uuid>.jsonl` per session: `user`/`assistant` lines chained by `uuid`/`parentUuid` with Anthropic content \
        blocks, but Gemini-CLI tool names (`read_file` with `absolute_path`, `replace`, `run_shell_command`) and tool \
        results wrapped as Gemini `functionResponse` objects inside `tool_result` blocks. Each assistant turn is written \
        as several streaming snapshots (same `parentUuid`, milliseconds apart), read as one message. A `sessionId` \
        naming another session marks a continuation.",
    injected: &IFLOW_INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::Unknown, handoff: Handoff::Paste("no start-with-prompt command is known") },
};

impl HarnessFormat for IflowFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let hints = FileHints { quirks: IFLOW_QUIRKS, ..FileHints::default() };
        let stem = src.path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let own = strip_session(stem).to_string();
        let mut sink = IflowSink { out, own };
        claude_jsonl::parse_with(&DIALECT, src, opts, &hints, &mut sink)
    }

    fn synthetic(&self) -> Option<&dyn SynthWriter> {
        Some(self)
    }
}

impl SynthWriter for IflowFormat {
    /// Claude Code's records (iFlow's superset) in iFlow's `session-<id>.jsonl` file.
    fn write(&self, home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
        let written = claude_jsonl::write_synthetic(&DIALECT, home, session)?;
        let renamed = written.with_file_name(format!("session-{}.jsonl", session.id));
        std::fs::rename(&written, &renamed)?;
        Ok(renamed)
    }
}

fn strip_session(id: &str) -> &str {
    id.strip_prefix("session-").filter(|s| !s.is_empty()).unwrap_or(id)
}

/// Names the session after its file and links a continued session to its parent.
struct IflowSink<'a> {
    out: &'a mut dyn SessionSink,
    /// The file stem without `session-`.
    own: String,
}

impl SessionSink for IflowSink<'_> {
    fn session(&mut self, mut s: Session) {
        if s.kind.is_none() {
            // The family named the session after the lines' `sessionId`.
            let lines_id = strip_session(&s.id).to_string();
            s.id = self.own.clone();
            if lines_id != self.own && !lines_id.is_empty() {
                s.parent = Some(lines_id);
                s.kind = Some("continuation".to_string());
            }
        }
        self.out.session(s);
    }
}

//! OpenClaude (`openclaude`): an open fork of Claude Code that runs other model
//! providers and writes Claude Code's transcripts under its own config root,
//! `${OPENCLAUDE_CONFIG_DIR:-~/.openclaude}/projects/<encoded-cwd>/<session-id>.jsonl`
//! (sub-agent runs under `<session-id>/subagents/`).
//!
//! A dialect of the Claude-shaped JSONL family: the reader, with its record → role table,
//! is `deja_core::family::claude_jsonl`. What differs from Claude Code is the config root,
//! its variable and the session namespace (`openclaude:<id>`: the same UUID space as
//! Claude's). The queued-command and compaction-boundary lines OpenClaude adds are
//! control records (`queue-operation`, `system`), which the family skips. Tool names and
//! input keys are Claude Code's, and so is the text it injects.
//!
//! Checked against OpenClaude 0.29.1 (built from its release tag; the npm package was not
//! reachable): `--continue` and `--resume <id>` append to the same transcript, after a
//! `mode` line (no timestamp) the family skips like the other control lines; each
//! transcript has a `<session-id>.replay.json` step summary beside it, which is not read.

use deja_core::family::claude_jsonl::{self, ClaudeAdapter, ClaudeDialect, CLAUDE_INJECTED, CLAUDE_TOOLS};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::model::SessionMeta;
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{Capabilities, Capability, HarnessInfo};

const ID: &str = "openclaude";

/// OpenClaude in the Claude-shaped JSONL family.
pub const DIALECT: ClaudeDialect = ClaudeDialect { harness: ID, config_dir: ".openclaude", tools: CLAUDE_TOOLS };

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "OpenClaude",
    container: "Claude Code JSONL, one file per session (+ sub-agent sidechain files)",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("${OPENCLAUDE_CONFIG_DIR:-~/.openclaude}/projects")],
        layout: Layout::Files(claude_jsonl::TRANSCRIPTS),
    }]),
    needs: &[],
    format_summary: "OpenClaude writes Claude Code's append-only JSONL transcripts under \
        `${OPENCLAUDE_CONFIG_DIR:-~/.openclaude}/projects/<encoded-cwd>/`: `user` and `assistant` records chained by \
        `uuid`/`parentUuid`, tool calls as `tool_use` blocks paired with `tool_result` items in user records, compaction \
        summaries flagged `isCompactSummary`, sub-agent runs in `<session>/subagents/*.jsonl`. Its queued-command, \
        `mode`, `last-prompt` and compaction-boundary lines are control records; a resumed session appends to its file, and the \
        `<session>.replay.json` step summary beside it is not read. Assistant `usage` carries Claude-style token fields even for other \
        providers' models. Sessions are kept apart from Claude Code's (`openclaude:<id>`).",
    injected: &CLAUDE_INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::PerSession {
            doc: "`cd <dir> && openclaude --resume <id>` (sub-agent runs: their parent)",
            pick: resume_unless_subagent,
        },
        handoff: Handoff::Exec(&["openclaude", "{prompt}"]),
    },
};

/// The openclaude adapter: the Claude-shaped family's whole adapter with this harness's
/// metadata and dialect.
pub static FORMAT: ClaudeAdapter = ClaudeAdapter { info: &INFO, dialect: DIALECT, wiring: None };

deja_core::inventory::submit!(deja_core::Registration(&FORMAT));

/// `openclaude --resume <id>` finds the session under the directory's encoded project
/// folder, so it runs there; a sub-agent run has no transcript of its own to reopen.
fn resume_unless_subagent(session: &SessionMeta) -> Result<ResumeSpec, &'static str> {
    deja_core::launch::not_a_subagent(session).map(|()| ResumeSpec::in_dir(&["openclaude", "--resume", "{id}"]))
}

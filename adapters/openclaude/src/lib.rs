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

use std::path::{Path, PathBuf};

use deja_core::family::claude_jsonl::{self, ClaudeDialect, CLAUDE_INJECTED, CLAUDE_TOOLS};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, Os, ParseOptions, ParseStats, SessionSink, SourceRef,
    StoreEnv, StorePath, SynthSession, SynthWriter,
};

const ID: &str = "openclaude";

/// The OpenClaude adapter.
pub struct OpenClaudeFormat;

deja_core::inventory::submit!(deja_core::Registration(&OpenClaudeFormat));

/// OpenClaude in the Claude-shaped JSONL family.
pub static DIALECT: ClaudeDialect =
    ClaudeDialect { harness: ID, config_dir: ".openclaude", config_var: Some("OPENCLAUDE_CONFIG_DIR"), tools: CLAUDE_TOOLS };

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "OpenClaude",
    container: "Claude Code JSONL, one file per session (+ sub-agent sidechain files)",
    stores: &[StorePath { os: Os::Any, path: "~/.openclaude/projects/<encoded-cwd>/<session-id>.jsonl" }],
    env_vars: &["OPENCLAUDE_CONFIG_DIR"],
    deja_vars: &["DEJA_OPENCLAUDE_ROOT", "DEJA_INCLUDE_SUBAGENTS"],
    needs: &[],
    format_summary: "OpenClaude writes Claude Code's append-only JSONL transcripts under \
        `${OPENCLAUDE_CONFIG_DIR:-~/.openclaude}/projects/<encoded-cwd>/`: `user` and `assistant` records chained by \
        `uuid`/`parentUuid`, tool calls as `tool_use` blocks paired with `tool_result` items in user records, compaction \
        summaries flagged `isCompactSummary`, sub-agent runs in `<session>/subagents/*.jsonl`. Its queued-command and \
        compaction-boundary lines are control records. Assistant `usage` carries Claude-style token fields even for other \
        providers' models. Sessions are kept apart from Claude Code's (`openclaude:<id>`).",
    injected: &CLAUDE_INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
        resume: Capability::Unknown,
        handoff: Capability::Planned("paste: deja prints the handoff digest for the user to paste"),
    },
};

impl HarnessFormat for OpenClaudeFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn discover(&self, env: &StoreEnv) -> Discovery {
        claude_jsonl::discover(&DIALECT, env)
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        claude_jsonl::parse(&DIALECT, src, opts, out)
    }

    fn synthetic(&self) -> Option<&dyn SynthWriter> {
        Some(self)
    }
}

impl SynthWriter for OpenClaudeFormat {
    fn write(&self, home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
        claude_jsonl::write_synthetic(&DIALECT, home, session)
    }
}

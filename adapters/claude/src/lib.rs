//! Claude Code (`claude`): one append-only JSONL transcript per session at
//! `${CLAUDE_CONFIG_DIR:-~/.claude}/projects/<encoded-cwd>/<session-id>.jsonl`, and one per
//! sub-agent run at `<encoded-cwd>/<parent-session-id>/subagents/<name>.jsonl`.
//!
//! The format is the Claude-shaped JSONL family's own; its reader, with the record →
//! role table, is `deja_core::family::claude_jsonl`. This crate is Claude Code's
//! metadata and dialect (config root `~/.claude`, relocated by `CLAUDE_CONFIG_DIR`;
//! Claude Code's tool names), its fixtures and snapshots.

mod wiring;

use deja_core::family::claude_jsonl::{self, ClaudeAdapter, ClaudeDialect, CLAUDE_INJECTED, CLAUDE_TOOLS};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::model::SessionMeta;
use deja_core::retention::{AgeUnit, MaxAge, Retention};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{Capabilities, Capability, HarnessInfo};

const ID: &str = "claude";

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Claude Code",
    container: "JSONL, one file per session (+ sub-agent sidechain files)",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("${CLAUDE_CONFIG_DIR:-~/.claude}/projects")],
        layout: Layout::Files(claude_jsonl::TRANSCRIPTS),
    }]),
    needs: &[],
    format_summary: "Append-only UTF-8 JSONL, one object per line, under `${CLAUDE_CONFIG_DIR:-~/.claude}/projects/<encoded-cwd>/`. \
        `user` and `assistant` records form a chain via `uuid`/`parentUuid` and carry the working directory in `cwd`; \
        tool calls are `tool_use` blocks in assistant messages, paired by id with `tool_result` items filed inside user \
        messages. One API message may be split over several assistant records sharing `message.id`. Compaction summaries are \
        user records flagged `isCompactSummary`; `queue-operation`, `attachment`, `last-prompt` and snapshot records are \
        control data. Sub-agent runs live in `<session>/subagents/*.jsonl` as sidechain sessions keyed by `agentId`.",
    injected: &CLAUDE_INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Planned("`deja install claude`: `mcpServers.deja` (stdio, `<exe> mcp`) in ~/.claude.json or $CLAUDE_CONFIG_DIR/.claude.json"),
        auto_recall: Capability::Planned(
            "`deja install claude-auto`: settings.json hooks SessionStart, UserPromptSubmit, PreToolUse (Bash|Edit|Write|MultiEdit|NotebookEdit), PreCompact",
        ),
        skill: Capability::Planned("${CLAUDE_CONFIG_DIR:-~/.claude}/skills/deja-history/SKILL.md"),
        command: Capability::Planned("/deja: ${CLAUDE_CONFIG_DIR:-~/.claude}/commands/deja.md (written by claude-auto)"),
    },
    retention: Retention::MaxAge(MaxAge {
        file: "${CLAUDE_CONFIG_DIR:-~/.claude}/settings.json",
        setting: "cleanupPeriodDays",
        unit: AgeUnit::Days,
        default_secs: 30 * 86_400,
        switch: None,
        trigger: "at start-up, every project",
        age_of: "the transcript file's modification time",
        evidence: "Claude Code's settings reference: session files older than `cleanupPeriodDays` are deleted at startup \
            (default 30, minimum 1; 0 is rejected by current releases, and older ones stopped writing transcripts at 0)",
    }),
    launch: Launch { resume: Resume::PerSession { doc: "`cd <dir> && claude --resume <id>` (sub-agent runs: their parent)", pick: resume_unless_subagent }, handoff: Handoff::Exec(&["claude", "{prompt}"]) },
};

/// Claude Code in the Claude-shaped JSONL family.
pub const DIALECT: ClaudeDialect = ClaudeDialect { harness: ID, config_dir: ".claude", tools: CLAUDE_TOOLS };

/// The claude adapter: the Claude-shaped family's whole adapter with this harness's
/// metadata and dialect.
pub static FORMAT: ClaudeAdapter = ClaudeAdapter { info: &INFO, dialect: DIALECT, wiring: Some(&wiring::ClaudeWiring) };

deja_core::inventory::submit!(deja_core::Registration(&FORMAT));

/// A sub-agent run has no transcript of its own to reopen: its parent is resumed.
fn resume_unless_subagent(session: &SessionMeta) -> Result<ResumeSpec, &'static str> {
    deja_core::launch::not_a_subagent(session).map(|()| ResumeSpec::in_dir(&["claude", "--resume", "{id}"]))
}

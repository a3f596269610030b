//! Codex CLI (`codex`): OpenAI's terminal coding agent.
//!
//! Everything lives under `${CODEX_HOME:-~/.codex}`; `DEJA_CODEX_ROOT` names the
//! sessions root (`~/.codex/sessions`, the same level as every adapter's
//! `DEJA_<ID>_ROOT`), with `archived_sessions/` and `history.jsonl` read from beside it.
//! The reader is the Codex-rollout family's, `deja_core::family::codex_rollout`:
//!
//! * `sessions/YYYY/MM/DD/rollout-<ts>-<thread id>.jsonl` — one append-only JSONL
//!   *rollout* per thread, lines `{timestamp, type, payload}` (Codex 0.171 adds
//!   `ordinal` and, on `response_item`s, `metadata`). `archived_sessions/rollout-*.jsonl`
//!   holds rollouts the user archived (same format, flat).
//! * `history.jsonl` — one `{session_id, ts, text}` line per submitted prompt, across all
//!   sessions. Read only for session ids that have no rollout (see [`history`]).
//! * `state_5.sqlite` (0.171) — a `threads` table whose non-empty `title` is the thread's
//!   title (else the index derives one from the first prompt). It is a side part of
//!   every rollout: Codex writes to it on every turn, and a change to it alone is read as
//!   an empty tail of each rollout (the database itself read once per change), not a
//!   re-parse.
//!
//! Rollouts carry most turns twice: a roled `response_item` and a typed `event_msg`
//! (`user_message`/`agent_message` in older releases, `item_completed`
//! `UserMessage`/`AgentMessage` in 0.171). The `response_item`s are authoritative; the
//! `event_msg` copies are collected aside and used only when a file has no roled
//! `response_item` message at all (legacy rollouts).
//!
//! | line `type` / `payload.type` | role | rule |
//! | --- | --- | --- |
//! | `session_meta` | — | identity (`payload.id`, legacy `session_id`) and project (`cwd`); first one wins |
//! | `turn_context` `cwd` | — | project fallback when `session_meta` has no `cwd` |
//! | `response_item` `message`, role `user`/`assistant` | `User`/`Assistant` | content items' text; user items with non-`user` provenance skipped |
//! | `response_item` `message`, role `developer`/`system` | skip | harness preamble |
//! | `response_item` with empty content and string `message` | role, else by `payload.type` | older shape |
//! | `response_item` `function_call` `exec_command` / `shell` / `shell_command` | `ToolCall` | `tool.command` from `cmd`/`command` (string or argv) |
//! | `response_item` `function_call` other names | `ToolCall` | tool name only |
//! | `response_item` `local_shell_call` | `ToolCall` | `action.command` argv |
//! | `response_item` `custom_tool_call` `apply_patch` | `ToolCall` | `files` + `edit` from the patch envelope |
//! | `response_item` `function_call_output` / `custom_tool_call_output` | folded into the call by `call_id` | framing stripped, `Process exited with code N` / `Exit code: N` → `tool.exit`; unpaired → `ToolOutput` |
//! | `response_item` `reasoning` | `Reasoning` | only with `include_reasoning` |
//! | `event_msg` `item_completed` `CommandExecution`, `exec_command_end` | fills the call | exit code / output when the call lacks them; unpaired → own `ToolCall` |
//! | `event_msg` `user_message` (`kind` absent or `plain`) / `agent_message`, `item_completed` `UserMessage` / `AgentMessage` | `User`/`Assistant` | fallback only: used when no `response_item` in the file carries user/assistant speech (harness-provenance items do not count) |
//! | `event_msg` `agent_reasoning` | `Reasoning` | fallback only, with `include_reasoning` |
//! | `compacted` `message` | `Summary` | compaction summary |
//! | `world_state`, `token_usage_record`, other `event_msg` kinds, lines without a `payload` object | skip | harness state |
//! | `history.jsonl` `{session_id, ts, text}` | `User` | session per id without a rollout; project `history` |
//! | `state_5.sqlite` `threads` `id`, `title` | session `title` | when non-empty; a change read as a rename |

mod restore;
mod wiring;

use std::path::{Path, PathBuf};

use deja_core::family::codex_rollout::{self, CodexDialect, RolloutStore, CODEX_TOOLS};
use deja_core::family::codex_synth::{self, RolloutLayout};
use deja_core::format::SessionSink;
use deja_core::format::{Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, ParseOptions, ParseStats};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::model::SessionMeta;
use deja_core::retention::Retention;
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{InjectedText, SourceRef, StoreEnv, SynthSession, SynthWriter};

/// The adapter id.
pub const ID: &str = "codex";

/// The Codex CLI format.
pub struct CodexFormat;

deja_core::inventory::submit!(deja_core::Registration(&CodexFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Codex CLI",
    container: "JSONL rollouts (one per thread) + history.jsonl",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("${CODEX_HOME:-~/.codex}/sessions")],
        layout: Layout::Custom {
            shape: "YYYY/MM/DD/rollout-*.jsonl, ../archived_sessions/rollout-*.jsonl, ../history.jsonl",
            walk: Some(walk_rollouts),
        },
    }]),
    needs: &[],
    format_summary: "Codex writes one append-only JSONL rollout per thread under `sessions/YYYY/MM/DD/`, each line \
        `{timestamp, type, payload}`. A `session_meta` line gives the thread id and working directory; roled `response_item` \
        messages are the conversation, `function_call`/`custom_tool_call` records the shell commands and `apply_patch` edits, \
        joined to their `*_output` records by `call_id` (output framed with `Process exited with code N` / `Exit code: N`). \
        `event_msg` records repeat the turns (`user_message`/`agent_message`, or `item_completed` items in 0.171, whose \
        `CommandExecution` carries argv, exit code and bare output) and are used only for legacy files without roled \
        messages. `history.jsonl` lists every submitted prompt and is read only for sessions that have no rollout. \
        Codex 0.171's `state_5.sqlite` names each thread's title (`threads.title`), read as part of every rollout.",
    injected: &INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Planned("`config.toml` `[mcp_servers.deja]` stdio entry running `<exe> mcp`"),
        auto_recall: Capability::Planned(
            "`hooks.json` SessionStart (`startup|resume`) → `hook-session-start`, PreToolUse (`Bash|apply_patch`) → `hook-tool`; \
             the user must approve the hooks in the TUI (`/hooks`)",
        ),
        skill: Capability::Planned("shared `~/.agents/skills/deja-history/SKILL.md`"),
        command: Capability::Unsupported(
            "custom prompts are deprecated upstream; the deja-history skill is invocable as `$deja-history` or from `/skills`",
        ),
    },
    retention: Retention::KeepsForever(
        "Codex CLI's source (codex-rs/rollout) writes rollouts and never sweeps `sessions/`; only the prompt history \
         `history.jsonl` is capped (`history.max_bytes`), which is not a session",
    ),
    launch: Launch {
        resume: Resume::PerSession { doc: "`codex resume <id>` (not for history-only sessions)", pick: resume_rollouts },
        handoff: Handoff::Exec(&["codex", "{prompt}"]),
    },
};

/// The preamble Codex writes as a *user* turn at the start of a thread (environment,
/// instructions, permissions, skills, plugins, AGENTS.md); without this it would title
/// nearly every session.
pub static INJECTED: InjectedText = InjectedText {
    blocks: &[],
    spans: &[],
    wrappers: &[],
    preambles: &["environment_context", "user_instructions", "permissions instructions", "skills_instructions", "recommended_plugins"],
    headed_preambles: &[("# AGENTS.md instructions", "INSTRUCTIONS")],
    line_prefixes: &[],
    not_titles: &[],
};

/// Codex CLI in the Codex-rollout family.
pub static DIALECT: CodexDialect = CodexDialect { harness: ID, tools: CODEX_TOOLS, titles: Some("state_5.sqlite") };

/// The rollouts of the sessions root and of `archived_sessions/` beside it, and the
/// history file, titles named by the side database.
fn walk_rollouts(root: &Path, _env: &StoreEnv, found: &mut Discovery) {
    let d = RolloutStore::at(root.to_path_buf()).with_titles(&DIALECT).discover();
    found.sources.extend(d.sources);
    // The sessions root is looked at already; the archive beside it is reported here.
    found.roots.extend(d.roots.into_iter().filter(|(p, _)| p != root));
}

impl HarnessFormat for CodexFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::CodexWiring)
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        codex_rollout::parse(&DIALECT, src, opts, out)
    }

    fn synthetic(&self) -> Option<&dyn SynthWriter> {
        Some(self)
    }

    /// Codex resumes a rollout by its thread id ([`restore`]).
    fn restorer(&self) -> Option<&dyn deja_core::format::RestoreWriter> {
        Some(self)
    }
}

impl SynthWriter for CodexFormat {
    fn write(&self, home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
        codex_synth::write_rollout(&RolloutLayout::CODEX, home, session)
    }
}

/// A `history.jsonl` entry with no rollout is not a session Codex can reopen.
fn resume_rollouts(session: &SessionMeta) -> Result<ResumeSpec, &'static str> {
    deja_core::family::codex_rollout::history::resumable(session)?;
    Ok(ResumeSpec::anywhere(&["codex", "resume", "{id}"]))
}

//! TRAE CLI (`trae`): TRAE CLI 2.0 (`traex`, reports `traecli 0.200.x`), a closed-source
//! fork of codex-rs, writes Codex rollouts under its own `cli` directory:
//!
//! * `${TRAECLI_HOME:-${TRAE_HOME:-~/.trae}/cli}/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`
//!   — one append-only rollout per thread; `rollout-*.jsonl.zst` is a zstd-compressed
//!   one, rewritten whole (read whole, never resumed).
//! * `cli/archived_sessions/rollout-*.jsonl[.zst]` — threads `traex archive <id>` moved.
//! * `cli/history.jsonl` — `{session_id, ts, text}` per prompt, read only for threads
//!   that have no rollout (project `history`, no resume).
//!
//! `DEJA_TRAE_ROOT` names the sessions root (`~/.trae/cli/sessions`), as every adapter's
//! `DEJA_<ID>_ROOT` does; `archived_sessions/` and `history.jsonl` are read from beside
//! it. `TRAECLI_HOME` replaces the `cli` directory, `TRAE_HOME` TRAE's whole home.
//!
//! The reader is the Codex-rollout family's (`deja_core::family::codex_rollout`, whose
//! module doc has the record → role table), with [`Speech::Events`]: TRAE writes its
//! runtime injections (environment context, process-limit notices) as `response_item`
//! user messages, so a prompt is its `event_msg` `user_message` (paired with the
//! `item_completed` `UserMessage` copy 0.201.4+ adds), an answer comes from the first
//! source the rollout has (`response_item`, `history_mutation` appends, `item_completed`
//! `AgentMessage`, `agent_message`), and `history_mutation` appends carry calls and
//! results, deduped with their `response_item` copies by `call_id`. The shell tool is
//! `exec` with an argv `command` (`["bash","-lc","<script>"]` keeps the script);
//! `apply_patch` is Codex's patch envelope.
//!
//! Not read: TRAE CLI 1.x (CoCo) `events.jsonl` (another format), and the TRAE IDE's
//! chats (a SQLCipher-encrypted database).

mod wiring;

use std::path::Path;

use deja_core::family::codex_rollout::{self, CodexDialect, RolloutStore, Speech};
use deja_core::family::codex_synth::{RolloutLayout, RolloutSynth};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::model::SessionMeta;
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::work::ToolMap;
use deja_core::SynthWriter;
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, SessionSink,
    SourceRef, StoreEnv,
};

const ID: &str = "trae";

/// The TRAE CLI adapter.
pub struct TraeFormat;

deja_core::inventory::submit!(deja_core::Registration(&TraeFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "TRAE CLI",
    container: "Codex rollout JSONL (one per thread, optionally zstd) + history.jsonl",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("${TRAECLI_HOME:-${TRAE_HOME:-~/.trae}/cli}/sessions")],
        layout: Layout::Custom {
            shape: "YYYY/MM/DD/rollout-*.jsonl[.zst], ../archived_sessions/rollout-*.jsonl[.zst], ../history.jsonl",
            walk: Some(walk_rollouts),
        },
    }]),
    needs: &[],
    format_summary: "TRAE CLI 2.0 writes Codex rollouts (`{timestamp, type, payload}` lines: `session_meta`, \
        `turn_context`, `response_item`, `event_msg`) plus its own `history_mutation` records, one append-only file per \
        thread under `cli/sessions/YYYY/MM/DD/`, some compressed as `.jsonl.zst`. Its `response_item` user messages are \
        runtime injections; prompts are `user_message` events (and their `item_completed` `UserMessage` copies, paired by \
        turn id). Answers come from the first source a rollout has: assistant `response_item`s, `history_mutation` appends, \
        `item_completed` `AgentMessage`s, `agent_message` events. `history_mutation` appends carry `exec` shell calls \
        (argv `command`) and `apply_patch` edits with their block-list results; `replace` mutations re-send history and \
        are skipped. `history.jsonl` lists every prompt and is read only for threads without a rollout.",
    injected: &INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "`[mcp_servers.deja]` `command = \"<exe>\"`, `args = [\"mcp\"]` in `${TRAE_HOME:-~/.trae}/traecli.toml` (Codex-style; \
             the table the page presumes); `traecli exec` refuses MCP calls under approval policy `never`",
        ),
        auto_recall: Capability::Planned(
            "Codex hooks in `${TRAECLI_HOME:-${TRAE_HOME:-~/.trae}/cli}/hooks.json`, trusted at TUI start-up: SessionStart → \
             `hook-session-start`, UserPromptSubmit → `hook-prompt`, PreToolUse → `hook-tool`, PostToolUseFailure → \
             `hook-tool-after`, PreCompact → `hook-precompact`",
        ),
        skill: Capability::Planned("shared `~/.agents/skills/deja-history/SKILL.md`"),
        command: Capability::Planned("the skill runs as `/deja-history <query>` (TRAE has no custom-prompt directory)"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::PerSession { doc: "`traex resume <id>` (not for history-only sessions)", pick: resume_rollouts },
        handoff: Handoff::Exec(&["traex", "{prompt}"]),
    },
};

/// What TRAE puts into its prompt events about itself: Codex's preambles (should one
/// reach a `user_message`) and the `<skill>` block 0.208.1 sends with a `/deja-history`
/// query (the `SKILL.md` text; the query stays).
pub static INJECTED: InjectedText = InjectedText {
    blocks: &["skill"],
    spans: &[],
    wrappers: &[],
    preambles: &["environment_context", "user_instructions", "permissions instructions", "skills_instructions", "recommended_plugins"],
    headed_preambles: &[("# AGENTS.md instructions", "INSTRUCTIONS")],
    line_prefixes: &[],
    not_titles: &[],
};

/// TRAE's shell tool is `exec`; Codex's names are kept for calls its fork still makes.
pub static DIALECT: CodexDialect = CodexDialect {
    harness: ID,
    tools: ToolMap {
        shell: &["exec", "exec_command", "shell", "shell_command", "container.exec", "local_shell"],
        read: &[],
        edit: &[],
        write: &[],
    },
    titles: None,
};

/// The rollouts (compressed too) of the sessions root and of `archived_sessions/` beside
/// it, and the history file.
fn walk_rollouts(root: &Path, _env: &StoreEnv, found: &mut Discovery) {
    let d = RolloutStore::at(root.to_path_buf()).with_compressed().discover();
    found.sources.extend(d.sources);
    // The sessions root is looked at already; the archive beside it is reported here.
    found.roots.extend(d.roots.into_iter().filter(|(p, _)| p != root));
}

impl HarnessFormat for TraeFormat {
    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::TraeWiring)
    }

    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        codex_rollout::parse_with(&DIALECT, Speech::Events, src, opts, out)
    }

    fn synthetic(&self) -> Option<&dyn SynthWriter> {
        Some(&SYNTH)
    }
}

/// The synthetic writer: TRAE CLI 0.200 rollouts under `~/.trae/cli/sessions`.
static SYNTH: RolloutSynth = RolloutSynth(RolloutLayout::TRAE);

/// A `history.jsonl` entry with no rollout is not a session TRAE can reopen.
fn resume_rollouts(session: &SessionMeta) -> Result<ResumeSpec, &'static str> {
    deja_core::family::codex_rollout::history::resumable(session)?;
    Ok(ResumeSpec::anywhere(&["traex", "resume", "{id}"]))
}

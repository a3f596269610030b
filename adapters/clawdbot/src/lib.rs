//! Clawdbot (`clawdbot`): the earlier name of the project now called OpenClaw. Installs
//! that predate the rename keep history in `~/.clawdbot/sessions/**/*.jsonl` (any depth),
//! and newer Clawdbot builds may already use OpenClaw's
//! `~/.clawdbot/agents/<agentId>/sessions/<uuid>.jsonl`; both are read.
//! `DEJA_CLAWDBOT_ROOT` names the `sessions` directory, `DEJA_CLAWDBOT_AGENTS_ROOT` the
//! `agents` one.
//!
//! The reader is `deja_core::family::pi_jsonl` (its module doc has the record → role
//! table), because a Clawdbot file is either OpenClaw's pi-lineage lines (detected per
//! line by `type`) or the flat shape this dialect adds: `{"role", "content",
//! "timestamp"}` lines without `type` — `user` → `User`, `assistant` or a missing role →
//! `Assistant`, `system` skipped, `content` a string or text parts. A flat file has no
//! header, so its id is its path below the `sessions` directory without `.jsonl`
//! (`work/chat`), and its title the first line of its first user message. OpenClaw's
//! tool names (`exec`/`bash`, `apply_patch`) and its `details.exitCode` apply to
//! pi-shaped files; no directory names a project (a flat file has none; a pi-shaped one
//! takes its header `cwd`). `sessions.json` and compaction checkpoints are not
//! transcripts. Clawdbot injects nothing into user text that deja knows of.

use std::path::Path;

use deja_core::family::pi_jsonl::{self, DirProject, PiDialect, MAX_WALK_DEPTH};
use deja_core::family::pi_synth::{ExitReport, FileName, PiLayout, PiSynth, PiTools, ProjectDir};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::SynthWriter;
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, SessionSink,
    SourceRef, StoreEnv, ToolMap,
};

const ID: &str = "clawdbot";

/// OpenClaw's tool names.
const OPENCLAW_TOOLS: ToolMap = ToolMap { shell: &["exec", "bash"], read: &["read"], edit: &["edit", "apply_patch"], write: &["write"] };

/// Clawdbot's dialect: flat role lines, path ids below `sessions`, OpenClaw's tools.
pub const DIALECT: PiDialect = PiDialect {
    harness: ID,
    tools: OPENCLAW_TOOLS,
    dir_project: DirProject::None,
    flat_role_lines: true,
    flat_id_root: Some("sessions"),
    ..PiDialect::BASE
};

/// The Clawdbot adapter.
pub struct ClawdbotFormat;

deja_core::inventory::submit!(deja_core::Registration(&ClawdbotFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Clawdbot",
    container: "JSONL: flat role/content lines, or OpenClaw's pi-lineage lines, one file per session",
    store: StoreSpec::new(&[
        Store {
            name: "",
            roots: &[Root::any("~/.clawdbot/sessions")],
            layout: Layout::Custom { shape: "**/*.jsonl", walk: Some(walk_sessions) },
        },
        // OpenClaw's layout, which newer Clawdbot releases write.
        Store {
            name: "agents",
            roots: &[Root::any("~/.clawdbot/agents")],
            layout: Layout::Custom { shape: "<agentId>/sessions/<uuid>.jsonl", walk: Some(walk_agents) },
        },
    ])
    .deja_vars(&["DEJA_INCLUDE_SUBAGENTS"]),
    needs: &[],
    format_summary: "Clawdbot, OpenClaw's former name, wrote JSONL under `~/.clawdbot/sessions/` in a flat shape: one \
        `{\"role\", \"content\", \"timestamp\"}` object per line (`system` lines skipped, a missing role is the \
        assistant), the id being the file's path below `sessions/`. Files in OpenClaw's pi-lineage shape (a `session` \
        header, `message` entries with `toolCall` blocks and `toolResult` messages) are read as OpenClaw's, there or \
        under `~/.clawdbot/agents/<agentId>/sessions/`.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Unsupported("superseded by OpenClaw's wiring"),
        auto_recall: Capability::Unsupported("superseded by OpenClaw's wiring"),
        skill: Capability::Unsupported("superseded by OpenClaw's wiring"),
        command: Capability::Unsupported("superseded by OpenClaw's wiring"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::Unknown, handoff: Handoff::Paste("no start-with-prompt command is known") },
};

/// Every transcript under the flat sessions root.
fn walk_sessions(root: &Path, env: &StoreEnv, found: &mut Discovery) {
    found.sources.extend(pi_jsonl::sessions_under(&DIALECT, root, MAX_WALK_DEPTH, env.include_subagents()));
}

/// OpenClaw's layout: transcripts are exactly `<agentId>/sessions/<file>`.
fn walk_agents(root: &Path, env: &StoreEnv, found: &mut Discovery) {
    let sources = pi_jsonl::sessions_under(&DIALECT, root, MAX_WALK_DEPTH, env.include_subagents());
    found.sources.extend(sources.into_iter().filter(|s| in_agent_sessions(root, &s.path)));
}

impl HarnessFormat for ClawdbotFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        pi_jsonl::parse(&DIALECT, src, opts, out)
    }

    fn synthetic(&self) -> Option<&dyn SynthWriter> {
        Some(&SYNTH)
    }
}

fn in_agent_sessions(agents: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(agents) else { return false };
    let parts: Vec<_> = rel.components().collect();
    parts.len() == 3 && parts[1].as_os_str() == "sessions"
}

/// The synthetic writer: Clawdbot's newer, OpenClaw-shaped layout: `agents/main/sessions/<uuid>.jsonl`,
/// the `exec` shell tool with `details.status`/`exitCode`.
static SYNTH: PiSynth = PiSynth(PiLayout {
    sessions_dir: ".clawdbot/agents/main/sessions",
    project_dir: ProjectDir::Flat,
    file_name: FileName::Id,
    tools: PiTools::Pi { shell: "exec" },
    exit: ExitReport::Details,
    ..PiLayout::PI
});

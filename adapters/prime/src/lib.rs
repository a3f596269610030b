//! prime-agent (PrimeIntellect, `prime`): a pi descendant (`PrimeIntellect-ai/prime-agent`).
//! One append-only JSONL file per session, flat: `~/.prime/agent/sessions/<uuid7>.jsonl`.
//! `rlm.spawn` children sit in `~/.prime/agent/session-artifacts/<parent-id>/sub-<n>/`.
//! Relocation, as prime itself resolves it: `PRIME_AGENT_SESSION_DIR` or
//! `PRIME_AGENT_CODING_AGENT_SESSION_DIR` move the sessions directory,
//! `PRIME_AGENT_CODING_AGENT_DIR` moves the whole agent directory (default sessions and
//! `session-artifacts`). `DEJA_PRIME_ROOT` names the sessions directory and overrides all
//! of them for it; `DEJA_PRIME_ARTIFACTS_ROOT` names the children's directory.
//!
//! The reader is `deja_core::family::pi_jsonl` (its module doc has the record → role
//! table): prime writes pi's session format. What the dialect changes: the header `cwd`
//! is the only project source (a flat root has no project directories); the model's one
//! tool is `ipython`, whose file changes land on the cell's result as
//! `details.diffs[{path, oldStr, newStr}]` → files and edit spans (a `bash()` inside a
//! cell is only in its code, so it is not a command); a header `rlmDepth` above zero
//! marks a child, filed as a sub-agent of the session its `parentSession` names;
//! `semantic-edges.jsonl` beside the children is an event log, never a transcript. pi's
//! `Command exited with code N` exit line is kept for a bash tool. Children follow
//! `DEJA_INCLUDE_SUBAGENTS`. prime injects nothing into user text that deja knows of.

mod wiring;

use std::path::Path;

use deja_core::family::pi_jsonl::{self, DirProject, PiDialect, MAX_WALK_DEPTH};
use deja_core::family::pi_synth::{FileName, PiLayout, PiSynth, PiTools, ProjectDir};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::SynthWriter;
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, SessionSink,
    SourceRef, StoreEnv,
};

const ID: &str = "prime";

/// The exit line a pi-derived bash tool appends to a failed command's output.
const PI_EXIT: &[&str] = &["Command exited with code "];

/// prime's dialect: `cwd` only, `details.diffs` work, `rlmDepth` children.
pub const DIALECT: PiDialect = PiDialect {
    harness: ID,
    dir_project: DirProject::None,
    diff_details: true,
    subagent_depth_field: Some("rlmDepth"),
    skip_file_names: &["semantic-edges.jsonl"],
    exit_markers: PI_EXIT,
    ..PiDialect::BASE
};

/// The prime-agent adapter.
pub struct PrimeFormat;

deja_core::inventory::submit!(deja_core::Registration(&PrimeFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "prime-agent (PrimeIntellect)",
    container: "JSONL, one append-only file per session (pi's format), flat; rlm.spawn children under session-artifacts",
    store: StoreSpec::new(&[
        Store {
            name: "",
            roots: &[Root::any(
                "${PRIME_AGENT_SESSION_DIR:-${PRIME_AGENT_CODING_AGENT_SESSION_DIR:-${PRIME_AGENT_CODING_AGENT_DIR:-~/.prime/agent}/sessions}}",
            )],
            layout: Layout::Custom { shape: "<uuid7>.jsonl", walk: Some(walk_sessions) },
        },
        // Sub-agent runs, read only while DEJA_INCLUDE_SUBAGENTS is on.
        Store {
            name: "artifacts",
            roots: &[Root::any("${PRIME_AGENT_CODING_AGENT_DIR:-~/.prime/agent}/session-artifacts")],
            layout: Layout::Custom { shape: "<parent-id>/sub-<n>/<child-id>.jsonl", walk: Some(walk_artifacts) },
        },
    ])
    .deja_vars(&["DEJA_INCLUDE_SUBAGENTS"]),
    needs: &[],
    format_summary: "prime writes pi's session JSONL: a `session` header (id, cwd, `rlmDepth`, `parentSession`), then \
        `message` entries chained by `id`/`parentId` with user text, assistant text, thinking and `toolCall` blocks, and \
        `toolResult` messages paired by `toolCallId`. The one tool, `ipython`, reports file changes as the result's \
        `details.diffs[{path, oldStr, newStr}]`. `compaction`/`branch_summary` are summaries; model, thinking-level and \
        service-tier changes are skipped. `rlm.spawn` children (`rlmDepth` > 0) live under `session-artifacts/` beside \
        a `semantic-edges.jsonl` event log. The project is the header `cwd`.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned("stdio `mcpServers.deja` in `~/.prime/agent/settings.json`"),
        auto_recall: Capability::Planned(
            "extension `~/.prime/agent/extensions/deja.ts`: `before_agent_start` → digest / per-prompt recall, \
             `session_compact` → precompact, `tool_result` → fixes",
        ),
        skill: Capability::Planned("`~/.agents/skills/deja-history/SKILL.md`"),
        command: Capability::Planned("`/deja <query>` registered by the extension"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Always(ResumeSpec::in_dir(&["prime-agent", "--resume", "{id}"]).or_elsewhere(&["prime-agent", "--fork", "{id}"])),
        handoff: Handoff::Exec(&["prime-agent", "{prompt}"]),
    },
};

/// The sessions directory; with `DEJA_INCLUDE_SUBAGENTS` off, not a child left there by
/// an older layout, which its head marks.
fn walk_sessions(root: &Path, env: &StoreEnv, found: &mut Discovery) {
    let include = env.include_subagents();
    let sources = pi_jsonl::sessions_under(&DIALECT, root, MAX_WALK_DEPTH, include);
    found.sources.extend(sources.into_iter().filter(|s| include || !pi_jsonl::head_marks_subagent(&DIALECT, &s.path)));
}

/// The children's transcripts, only with `DEJA_INCLUDE_SUBAGENTS` on.
fn walk_artifacts(root: &Path, env: &StoreEnv, found: &mut Discovery) {
    if env.include_subagents() {
        found.sources.extend(pi_jsonl::sessions_under(&DIALECT, root, MAX_WALK_DEPTH, true));
    }
}

impl HarnessFormat for PrimeFormat {
    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::PrimeWiring)
    }

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

/// The synthetic writer: prime: flat `<uuid>.jsonl` files, a top-level header (`rlmDepth: 0`, no
/// `parentSession`), the one `ipython` tool with file changes in `details.diffs`, and
/// commands as `bashExecution` records (a `bash()` inside a cell is not a command).
static SYNTH: PiSynth = PiSynth(PiLayout {
    sessions_dir: ".prime/agent/sessions",
    project_dir: ProjectDir::Flat,
    file_name: FileName::Id,
    header_extra: &[("rlmDepth", "0"), ("parentSession", "null")],
    tools: PiTools::Ipython,
    ..PiLayout::PI
});

//! prime-agent (PrimeIntellect, `prime`): a pi descendant (`PrimeIntellect-ai/prime-agent`).
//! One append-only JSONL file per session, flat: `~/.prime/agent/sessions/<uuid7>.jsonl`.
//! `rlm.spawn` children sit in `~/.prime/agent/session-artifacts/<parent-id>/sub-<n>/`.
//! Relocation, as prime itself resolves it: `PRIME_AGENT_SESSION_DIR` or
//! `PRIME_AGENT_CODING_AGENT_SESSION_DIR` move the sessions directory,
//! `PRIME_AGENT_CODING_AGENT_DIR` moves the whole agent directory (default sessions and
//! `session-artifacts`). `DEJA_PRIME_ROOT` names the sessions directory and overrides all
//! of them; the children are then read from the `session-artifacts` beside it.
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

use std::path::{Path, PathBuf};

use deja_core::family::pi_jsonl::{self, DirProject, PiDialect, MAX_WALK_DEPTH};
use deja_core::family::pi_synth::{FileName, PiLayout, PiSynth, PiTools, ProjectDir};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::SynthWriter;
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, Os, ParseOptions, ParseStats, SessionSink,
    SourceRef, StoreEnv, StorePath,
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
    stores: &[
        StorePath { os: Os::Any, path: "~/.prime/agent/sessions/<uuid7>.jsonl" },
        StorePath { os: Os::Any, path: "~/.prime/agent/session-artifacts/<parent-id>/sub-<n>/<child-id>.jsonl" },
        StorePath { os: Os::Any, path: "$PRIME_AGENT_SESSION_DIR/<uuid7>.jsonl" },
        StorePath { os: Os::Any, path: "$PRIME_AGENT_CODING_AGENT_SESSION_DIR/<uuid7>.jsonl" },
        StorePath { os: Os::Any, path: "$PRIME_AGENT_CODING_AGENT_DIR/sessions/<uuid7>.jsonl" },
    ],
    env_vars: &["PRIME_AGENT_SESSION_DIR", "PRIME_AGENT_CODING_AGENT_SESSION_DIR", "PRIME_AGENT_CODING_AGENT_DIR"],
    deja_vars: &["DEJA_PRIME_ROOT", "DEJA_INCLUDE_SUBAGENTS"],
    store: deja_core::StoreSpec::UNDECLARED,
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
    launch: Launch {
        resume: Resume::Always(ResumeSpec::in_dir(&["prime-agent", "--resume", "{id}"]).or_elsewhere(&["prime-agent", "--fork", "{id}"])),
        handoff: Handoff::Exec(&["prime-agent", "{prompt}"]),
    },
};

impl HarnessFormat for PrimeFormat {
    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::PrimeWiring)
    }

    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn discover(&self, env: &StoreEnv) -> Discovery {
        let mut found = Discovery::default();
        let include = env.include_subagents();
        let (sessions, artifacts) = roots(env);
        pi_jsonl::discover_sessions(&DIALECT, &sessions, MAX_WALK_DEPTH, include, &mut found);
        if include {
            pi_jsonl::discover_sessions(&DIALECT, &artifacts, MAX_WALK_DEPTH, include, &mut found);
        } else {
            // A child left in the sessions directory (an older layout) is known by its head.
            found.sources.retain(|s| !pi_jsonl::head_marks_subagent(&DIALECT, &s.path));
        }
        found
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        pi_jsonl::parse(&DIALECT, src, opts, out)
    }

    fn synthetic(&self) -> Option<&dyn SynthWriter> {
        Some(&SYNTH)
    }
}

/// The sessions directory and the `session-artifacts` directory of the children.
fn roots(env: &StoreEnv) -> (PathBuf, PathBuf) {
    let agent = env.path_var("PRIME_AGENT_CODING_AGENT_DIR").unwrap_or_else(|| env.home().join(".prime/agent"));
    if let Some(root) = env.deja_root(ID) {
        // deja's override replaces everything: the children sit beside the sessions it names.
        let artifacts = root.parent().map_or_else(|| root.join("session-artifacts"), |p| p.join("session-artifacts"));
        return (root, artifacts);
    }
    let sessions = env
        .path_var("PRIME_AGENT_SESSION_DIR")
        .or_else(|| env.path_var("PRIME_AGENT_CODING_AGENT_SESSION_DIR"))
        .unwrap_or_else(|| agent.join("sessions"));
    (sessions, artifacts_of(&agent))
}

fn artifacts_of(agent: &Path) -> PathBuf {
    agent.join("session-artifacts")
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

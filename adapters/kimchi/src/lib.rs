//! Kimchi Coding (`kimchi`): a pi descendant (`@getkimchi/kimchi`). One append-only JSONL
//! file per session under `~/.config/kimchi/harness/sessions/--<encoded-cwd>--/` (a file
//! directly under `sessions/` is read too). The harness directory is always
//! `~/.config/kimchi/harness`: Kimchi 0.1.99 sets `KIMCHI_CODING_AGENT_DIR` itself at
//! startup and never reads `XDG_CONFIG_HOME`, so neither variable is followed.
//! `DEJA_KIMCHI_ROOT` names the sessions directory.
//!
//! The reader is `deja_core::family::pi_jsonl` (its module doc has the record → role
//! table): Kimchi writes pi's session format. What the dialect changes: the header `cwd`
//! is the project and the directory is never decoded (`my-app` and `my/app` encode
//! alike); a `kimchi:subagent-session` custom entry marks a sub-agent run of the `Agent`
//! tool, whose header `parentSession` names the parent; a header `parentSession` alone
//! is a fork and stays a normal session; the bash tool's `Command exited with code N`
//! line is the exit status, as in pi. Sub-agent transcripts sit beside their parents, so
//! with `DEJA_INCLUDE_SUBAGENTS` off discovery reads each file's head
//! (`pi_jsonl::head_marks_subagent`) to leave them out. Kimchi injects nothing into user
//! text that deja knows of.

mod wiring;

use std::path::Path;

use deja_core::family::pi_jsonl::{self, DirProject, PiDialect, MAX_WALK_DEPTH};
use deja_core::family::pi_synth::{PiLayout, PiSynth};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::SynthWriter;
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, SessionSink,
    SourceRef, StoreEnv,
};

const ID: &str = "kimchi";

/// The exit line Kimchi's bash tool (pi's) appends to a failed command's output.
const PI_EXIT: &[&str] = &["Command exited with code "];

/// Kimchi's dialect: `cwd` only for the project, its sub-agent marker, pi's exit line.
pub const DIALECT: PiDialect = PiDialect {
    harness: ID,
    dir_project: DirProject::None,
    subagent_custom_types: &["kimchi:subagent-session"],
    exit_markers: PI_EXIT,
    ..PiDialect::BASE
};

/// The Kimchi Coding adapter.
pub struct KimchiFormat;

deja_core::inventory::submit!(deja_core::Registration(&KimchiFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Kimchi Coding",
    container: "JSONL, one append-only file per session (pi's format)",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("~/.config/kimchi/harness/sessions")],
        layout: Layout::Custom { shape: "--<encoded-cwd>--/<session>.jsonl, <session>.jsonl", walk: Some(walk_sessions) },
    }])
    .deja_vars(&["DEJA_INCLUDE_SUBAGENTS"]),
    needs: &[],
    format_summary: "Kimchi writes pi's session JSONL: a `session` header (id, cwd, `parentSession` for forks and \
        sub-agents), then `message` entries chained by `id`/`parentId` with user text, assistant text, thinking and \
        `toolCall` blocks, and `toolResult` messages paired by `toolCallId` (a failed bash command's output ends \
        `Command exited with code N`). A `kimchi:subagent-session` custom entry marks a sub-agent run. \
        `compaction`/`branch_summary` are summaries; model, thinking-level and service-tier changes are skipped. The \
        project is the header `cwd`.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned("`mcpServers.deja` in `~/.config/kimchi/harness/mcp.json`"),
        auto_recall: Capability::Planned(
            "pi's extension at `~/.config/kimchi/harness/extensions/deja.ts` (`before_agent_start`, `tool_result`, `session_compact`), with \
             Kimchi's `claude-code-hook-adapter` kept off",
        ),
        skill: Capability::Planned("`~/.config/kimchi/harness/skills/deja-history/SKILL.md` (on config `skillPaths`)"),
        command: Capability::Planned("`/deja` registered by the extension"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::Always(ResumeSpec::in_dir(&["kimchi", "--session", "{id}"])), handoff: Handoff::Exec(&["kimchi", "{prompt}"]) },
};

/// The transcripts under the sessions root; with `DEJA_INCLUDE_SUBAGENTS` off, not a
/// sub-agent's, which sits beside its parent's and only its head tells apart.
fn walk_sessions(root: &Path, env: &StoreEnv, found: &mut Discovery) {
    let include = env.include_subagents();
    let sources = pi_jsonl::sessions_under(&DIALECT, root, MAX_WALK_DEPTH, include);
    found.sources.extend(sources.into_iter().filter(|s| include || !pi_jsonl::head_marks_subagent(&DIALECT, &s.path)));
}

impl HarnessFormat for KimchiFormat {
    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::KimchiWiring)
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

/// The synthetic writer: Kimchi: pi's `--<cwd>--` directories and file names under
/// `~/.config/kimchi/harness/sessions`.
static SYNTH: PiSynth = PiSynth(PiLayout { sessions_dir: ".config/kimchi/harness/sessions", ..PiLayout::PI });

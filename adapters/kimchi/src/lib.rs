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

use std::path::PathBuf;

use deja_core::family::pi_jsonl::{self, DirProject, PiDialect, MAX_WALK_DEPTH};
use deja_core::family::pi_synth::{PiLayout, PiSynth};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::SynthWriter;
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, Os, ParseOptions, ParseStats, SessionSink,
    SourceRef, StoreEnv, StorePath,
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
    stores: &[
        StorePath { os: Os::Any, path: "~/.config/kimchi/harness/sessions/--<encoded-cwd>--/<session>.jsonl" },
        StorePath { os: Os::Any, path: "~/.config/kimchi/harness/sessions/<session>.jsonl" },
    ],
    env_vars: &[],
    deja_vars: &["DEJA_KIMCHI_ROOT", "DEJA_INCLUDE_SUBAGENTS"],
    store: deja_core::StoreSpec::UNDECLARED,
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
    launch: Launch { resume: Resume::Always(ResumeSpec::in_dir(&["kimchi", "--session", "{id}"])), handoff: Handoff::Exec(&["kimchi", "{prompt}"]) },
};

impl HarnessFormat for KimchiFormat {
    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::KimchiWiring)
    }

    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn discover(&self, env: &StoreEnv) -> Discovery {
        let mut found = Discovery::default();
        let include = env.include_subagents();
        pi_jsonl::discover_sessions(&DIALECT, &sessions_root(env), MAX_WALK_DEPTH, include, &mut found);
        if !include {
            // A sub-agent's file sits beside its parent's: only its head tells them apart.
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

/// `DEJA_KIMCHI_ROOT`, else `~/.config/kimchi/harness/sessions` (literally under the home:
/// Kimchi ignores `XDG_CONFIG_HOME`).
fn sessions_root(env: &StoreEnv) -> PathBuf {
    env.deja_root(ID).unwrap_or_else(|| env.home().join(".config/kimchi/harness/sessions"))
}

/// The synthetic writer: Kimchi: pi's `--<cwd>--` directories and file names under
/// `~/.config/kimchi/harness/sessions`.
static SYNTH: PiSynth = PiSynth(PiLayout { sessions_dir: ".config/kimchi/harness/sessions", ..PiLayout::PI });

//! gajae-code (`gjc`): a pi descendant (`@gajae-code/coding-agent`). One append-only
//! JSONL file per session under `${GJC_CODING_AGENT_DIR:-~/.gjc/agent}/sessions/<project>/`
//! (`<project>` a cwd slug on older releases, `v2-<identity digest>` from 0.18), sub-agent
//! passes one directory deeper in `<project>/<session>/N-<agent>.jsonl`. `DEJA_GJC_ROOT`
//! names the sessions directory.
//!
//! The reader is `deja_core::family::pi_jsonl` (its module doc has the record → role
//! table): gjc writes pi's session format. What the dialect changes: gjc's `edit` tool
//! may take a hashline `input` (`§path`, `≔A..B`/`«A`/`»A` ops, then the lines written),
//! whose replaced lines come from the result's `details.diff` (`-N|old line` rows); its
//! `replace` (`edits[{old_text,new_text}]`), `patch` (`edits[{op,diff}]`) and
//! `apply_patch` (`input` patch) shapes are read by the family's common edit rules. The
//! header `cwd` is the project (the 0.18 digest directories say nothing), and the bash
//! tool's `Command exited with code N` line is the exit status, as in pi. Sub-agent pass
//! files follow `DEJA_INCLUDE_SUBAGENTS` and are filed under their session as parent.
//! The `.gjc-managed-session-scope.v2.json` beside a digest directory is not a
//! transcript. gjc injects nothing into user text that deja knows of.

mod wiring;

use std::path::Path;

use deja_core::family::pi_jsonl::{self, PiDialect, MAX_WALK_DEPTH};
use deja_core::family::pi_synth::{PiLayout, PiSynth, ProjectDir};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::SynthWriter;
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, SessionSink,
    SourceRef, StoreEnv,
};

const ID: &str = "gjc";

/// The exit line gjc's bash tool (pi's) appends to a failed command's output.
const PI_EXIT: &[&str] = &["Command exited with code "];

/// gjc's dialect: hashline edits, pi's exit line, `cwd` the project.
pub const DIALECT: PiDialect = PiDialect { harness: ID, hashline_edits: true, exit_markers: PI_EXIT, ..PiDialect::BASE };

/// The gajae-code adapter.
pub struct GjcFormat;

deja_core::inventory::submit!(deja_core::Registration(&GjcFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "gajae-code",
    container: "JSONL, one append-only file per session (pi's format), sub-agent passes one directory deeper",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("${GJC_CODING_AGENT_DIR:-~/.gjc/agent}/sessions")],
        layout: Layout::Custom { shape: "<project>/<session>.jsonl, <project>/<session>/N-<agent>.jsonl", walk: Some(walk_sessions) },
    }])
    .deja_vars(&["DEJA_INCLUDE_SUBAGENTS"]),
    needs: &[],
    format_summary: "gjc writes pi's session JSONL: a `session` header (id, cwd, optional title), then `message` entries \
        chained by `id`/`parentId` with user text, assistant text, thinking and `toolCall` blocks, and `toolResult` messages \
        paired by `toolCallId` (a failed bash command's output ends `Command exited with code N`). The `edit` tool takes a \
        hashline `input` (old lines in the result's `details.diff`), `edits[{old_text,new_text}]`, `edits[{op,diff}]` or an \
        `apply_patch` input. `compaction`/`branch_summary` are summaries; model, thinking-level and service-tier changes are \
        skipped. Sub-agent passes sit in `<session>/N-<agent>.jsonl`. The project is the header `cwd`.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned("`mcpServers.deja` in `~/.gjc/agent/mcp.json` (tool `mcp__deja_deja`)"),
        auto_recall: Capability::Planned(
            "pi's extension at `~/.gjc/agent/extensions/deja.ts` (`before_agent_start`, `tool_result`, `session_compact`)",
        ),
        skill: Capability::Planned("`~/.gjc/agent/skills/deja-history/SKILL.md` (gjc ignores `~/.agents/skills`)"),
        command: Capability::Planned("`~/.gjc/agent/commands/deja.md` → `/deja`"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Always(
            ResumeSpec::in_dir(&["gjc", "--resume", "{id}"]).with_note("outside its project gjc offers to fork the session"),
        ),
        handoff: Handoff::Exec(&["gjc", "{prompt}"]),
    },
};

/// The transcripts under the sessions root (sub-agent pass files only with
/// `DEJA_INCLUDE_SUBAGENTS` on).
fn walk_sessions(root: &Path, env: &StoreEnv, found: &mut Discovery) {
    found.sources.extend(pi_jsonl::sessions_under(&DIALECT, root, MAX_WALK_DEPTH, env.include_subagents()));
}

impl HarnessFormat for GjcFormat {
    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::GjcWiring)
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

/// The synthetic writer: gjc: `-<cwd>` project directories under `~/.gjc/agent/sessions`, pi's file names
/// and `Command exited with code N` line.
static SYNTH: PiSynth = PiSynth(PiLayout { sessions_dir: ".gjc/agent/sessions", project_dir: ProjectDir::Dashed, ..PiLayout::PI });

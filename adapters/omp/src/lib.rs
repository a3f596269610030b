//! omp (Oh My Pi, `omp`): a pi-lineage coding agent. One JSONL file per session under
//! `<root>/<encoded-cwd>/<ISO-timestamp>_<uuid>.jsonl`, in several roots at once: the
//! default profile `~/.omp/agent/sessions/`, every named profile
//! `~/.omp/profiles/<name>/agent/sessions/`, and, when `$XDG_DATA_HOME/omp` exists, the
//! XDG root `$XDG_DATA_HOME/omp/sessions/` and its profiles
//! `$XDG_DATA_HOME/omp/profiles/<name>/sessions/`. `DEJA_OMP_ROOT` names one sessions
//! root and then is the only one read.
//!
//! The reader is `deja_core::family::pi_jsonl` (its module doc has the record → role
//! table): omp writes pi's session format. What the dialect changes: the header `cwd` is
//! the project (omp's directory name is the cwd relative to `$HOME`, undecodable without
//! knowing that home), and the bash result's notice paragraph (`Wall time: <s> seconds`,
//! then notices such as `Timeout clamped to …`) is dropped from the output. omp 18.2.3
//! writes an exit code only for a non-zero exit (`details.exitCode` and a last line
//! `Command exited with code N`, also dropped), so a clean shell result is exit 0. omp 18's
//! `edit` is a hashline tool: its `input` names the file in `[PATH#TAG]` headers and writes
//! `+` rows after `PUT` ops; the replaced lines come from the result's `details.diff`
//! (`-N|old line`). A sub-agent (`<parent stem>/<name>.jsonl`, header `parentSession` the
//! parent's file) answers by calling `yield` with `data`: that is its assistant turn too;
//! its prompt's `Complete assignment thoroughly:` line (omp's template) is injected text,
//! and `session_init` (its whole system prompt) is skipped. omp 18's
//! fixed-width `title` slot line before the header, `developer` messages and the
//! `custom` lifecycle entries (`tool_execution_start`, `session_exit`) are handled by the
//! family. Every profile is read, so `OMP_PROFILE`/`PI_PROFILE` (which pick the profile
//! omp writes to) change nothing here. Beyond the sub-agent template line omp injects nothing
//! into user text that deja knows of.

mod wiring;

use std::path::Path;

use deja_core::family::pi_jsonl::{self, PiDialect, MAX_WALK_DEPTH};
use deja_core::family::pi_synth::{ExitReport, PiLayout, PiSynth, ProjectDir};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::SynthWriter;
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, SessionSink,
    SourceRef, StoreEnv,
};

const ID: &str = "omp";

/// omp's dialect: `cwd` is the project, the `Wall time:` notice block is not output, a
/// failed command's last line `Command exited with code N` is its exit (omp 18.2.3 also
/// writes `details.exitCode` then), and a clean shell result exited 0: omp's bash tool
/// writes an exit code only for a non-zero exit and flags timeouts as errors.
pub const DIALECT: PiDialect = PiDialect {
    harness: ID,
    hashline_edits: true,
    answer_tools: &["yield"],
    result_footers: &["Wall time: "],
    exit_markers: &["Command exited with code "],
    clean_exit_zero: true,
    ..PiDialect::BASE
};

/// The omp adapter.
pub struct OmpFormat;

deja_core::inventory::submit!(deja_core::Registration(&OmpFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "omp (Oh My Pi)",
    container: "JSONL, one append-only file per session (pi's format; omp 18 adds a fixed-width title slot line)",
    store: StoreSpec::new(&[Store {
        name: "",
        // The default profile and every named one; the XDG places hold sessions only once
        // omp has made its directory there.
        roots: &[
            Root::any("~/.omp/agent/sessions"),
            Root::any("~/.omp/profiles/*/agent/sessions"),
            Root::any("${XDG_DATA_HOME:-~/.local/share}/omp/sessions"),
            Root::any("${XDG_DATA_HOME:-~/.local/share}/omp/profiles/*/sessions"),
        ],
        layout: Layout::Custom { shape: "<encoded-cwd>/<ISO-timestamp>_<uuid>.jsonl", walk: Some(walk_sessions) },
    }])
    // Every profile is read, so the variables naming omp's current one select nothing.
    .harness_vars(&["OMP_PROFILE", "PI_PROFILE"])
    .deja_vars(&["DEJA_INCLUDE_SUBAGENTS"]),
    needs: &[],
    format_summary: "omp writes pi's session JSONL: a `session` header (omp 18 puts a 256-byte `title` slot line, rewritten \
        in place, before it), then `message` entries chained by `id`/`parentId` with user text, assistant text, thinking \
        and `toolCall` blocks, and `toolResult` messages paired by `toolCallId` whose output ends with a `Wall time:` \
        notice paragraph (dropped); a failed command adds `Command exited with code N` and `details.exitCode`, a clean \
        one no code (exit 0). `developer` messages, `custom` lifecycle entries, model and \
        thinking-level changes are skipped. The project is the header `cwd`; sessions sit in the default profile, every \
        named profile and the XDG data roots.",
    // omp wraps a sub-agent's assignment in its `subagent-user-prompt` template.
    injected: &InjectedText { line_prefixes: &["Complete assignment thoroughly:"], ..InjectedText::NONE },
    capabilities: Capabilities {
        mcp: Capability::Planned("`mcpServers.deja` in `~/.omp/agent/mcp.json` (reached as the `xd://mcp__deja_deja` device)"),
        auto_recall: Capability::Planned(
            "extension module `~/.omp/agent/extensions/deja/index.js`: `pi.on(\"context\")` prepends recall to the last user message",
        ),
        skill: Capability::Planned("shared `~/.agents/skills/deja-history/SKILL.md`"),
        command: Capability::Planned("`~/.omp/agent/commands/deja.md` (`$ARGUMENTS`)"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Always(ResumeSpec::anywhere(&["omp", "--resume", "{id}"])),
        handoff: Handoff::Exec(&["omp", "{prompt}"]),
    },
};

/// The transcripts under one sessions root.
fn walk_sessions(root: &Path, env: &StoreEnv, found: &mut Discovery) {
    found.sources.extend(pi_jsonl::sessions_under(&DIALECT, root, MAX_WALK_DEPTH, env.include_subagents()));
}

impl HarnessFormat for OmpFormat {
    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::OmpWiring)
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

/// The synthetic writer: omp 18: `-<cwd>` directories, the 256-byte title slot before the header, a
/// `model_change` naming `provider/model`, and `bash` results ending in the `Wall time:`
/// footer with no exit code.
static SYNTH: PiSynth = PiSynth(PiLayout {
    sessions_dir: ".omp/agent/sessions",
    project_dir: ProjectDir::Dashed,
    title_slot: true,
    model_change: &[("model", "\"synthetic/synth-1\""), ("resolvedModelIsFallback", "false")],
    exit: ExitReport::WallTime,
    ..PiLayout::PI
});

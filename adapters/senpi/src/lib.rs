//! Senpi (`senpi`): a pi descendant (OmO Native, `@code-yeongyu/senpi`). One append-only
//! JSONL file per session under
//! `${SENPI_CODING_AGENT_DIR:-~/.senpi/agent}/sessions/<encoded-cwd>/<session>.jsonl`
//! (a leading `~` in the variable expanded). `DEJA_SENPI_ROOT` names the sessions
//! directory. Senpi's first run moves `~/.pi/agent` here, so one transcript may be
//! indexed both as pi (a copy left behind) and as senpi; each harness keeps its own.
//!
//! The reader is `deja_core::family::pi_jsonl` (its module doc has the record → role
//! table): Senpi writes pi's session format. What the dialect changes: with code mode
//! (the default) the model's shell, read and edit tools run only inside `eval` JS cells,
//! so an `eval` result's text is unwrapped from its `{"text": …}` JSON and the work the
//! cell really did comes from the result's `details.toolCalls[].args` (the first call
//! folds into the `eval` turn, the others follow it as calls of their own); `powershell`
//! is a shell tool beside `bash`; the header `cwd` is the project (the encoded directory,
//! which folds every `/` into `-`, is only the fallback); the bash tool's `Command
//! exited with code N` line is the exit status, as in pi. deja's own recall, recorded as
//! a `custom_message` with `customType: "deja-recall"`, is skipped like every custom
//! message. The terminal extension's `<project>/extensions/terminal/<id>.json` state
//! files are not transcripts. Senpi injects nothing else into user text that deja knows
//! of.

mod wiring;

use std::path::Path;

use deja_core::family::pi_jsonl::{self, PiDialect, MAX_WALK_DEPTH};
use deja_core::family::pi_synth::{PiLayout, PiSynth};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::SynthWriter;
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, SessionSink,
    SourceRef, StoreEnv, ToolMap,
};

const ID: &str = "senpi";

/// The exit line Senpi's bash tool (pi's) appends to a failed command's output.
const PI_EXIT: &[&str] = &["Command exited with code "];

/// Senpi's dialect: `eval` code cells, `powershell` a shell, pi's exit line.
pub const DIALECT: PiDialect = PiDialect {
    harness: ID,
    tools: ToolMap { shell: &["bash", "powershell"], read: &["read"], edit: &["edit"], write: &["write"] },
    codemode_tools: &["eval"],
    exit_markers: PI_EXIT,
    ..PiDialect::BASE
};

/// The Senpi adapter.
pub struct SenpiFormat;

deja_core::inventory::submit!(deja_core::Registration(&SenpiFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Senpi",
    container: "JSONL, one append-only file per session (pi's format)",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("${SENPI_CODING_AGENT_DIR:-~/.senpi/agent}/sessions")],
        layout: Layout::Custom { shape: "<encoded-cwd>/<session>.jsonl", walk: Some(walk_sessions) },
    }])
    .deja_vars(&["DEJA_INCLUDE_SUBAGENTS"]),
    needs: &[],
    format_summary: "Senpi writes pi's session JSONL: a `session` header (id, cwd, optional title), then `message` entries \
        chained by `id`/`parentId` with user text, assistant text, thinking and `toolCall` blocks, and `toolResult` \
        messages paired by `toolCallId`. In code mode the tools run inside `eval` JS cells: the result text is a JSON \
        `{\"text\": …}` and the calls the cell made are in `details.toolCalls[].args`. `custom_message` entries (deja's \
        own `deja-recall`), model and thinking-level changes are skipped; `compaction`/`branch_summary` are summaries. \
        The project is the header `cwd`.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned("`mcpServers.deja` in `<agent>/mcp.json` (palette `mcp:deja:deja`)"),
        auto_recall: Capability::Planned(
            "pi's extension at `<agent>/extensions/deja.ts` (recall recorded as a `deja-recall` custom message)",
        ),
        skill: Capability::Planned("`~/.agents/skills/deja-history/SKILL.md` only (a second copy under `<agent>/skills` collides)"),
        command: Capability::Planned("`/deja` registered by the extension"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Always(ResumeSpec::in_dir(&["senpi", "--session", "{id}"])),
        handoff: Handoff::Exec(&["senpi", "{prompt}"]),
    },
};

/// The transcripts under the sessions root (sub-agent pass files only with
/// `DEJA_INCLUDE_SUBAGENTS` on).
fn walk_sessions(root: &Path, env: &StoreEnv, found: &mut Discovery) {
    found.sources.extend(pi_jsonl::sessions_under(&DIALECT, root, MAX_WALK_DEPTH, env.include_subagents()));
}

impl HarnessFormat for SenpiFormat {
    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::SenpiWiring)
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

/// The synthetic writer: Senpi outside code mode: pi's `--<cwd>--` directories, file names and `bash` tool
/// under `~/.senpi/agent/sessions`.
static SYNTH: PiSynth = PiSynth(PiLayout { sessions_dir: ".senpi/agent/sessions", ..PiLayout::PI });

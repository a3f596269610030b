//! pi (`pi`): the pi.dev coding agent. One append-only JSONL file per session under
//! `~/.pi/agent/sessions/--<encoded-cwd>--/<ISO-timestamp>_<uuid>.jsonl` (the agent
//! directory moves with `PI_CODING_AGENT_DIR`, the sessions directory alone with
//! `PI_CODING_AGENT_SESSION_DIR` or the agent's `settings.json` `sessionDir`; `DEJA_PI_ROOT`
//! names the sessions directory itself).
//!
//! pi is the root of the pi-lineage, so the reader is `deja_core::family::pi_jsonl`
//! (its module doc has the record → role table) with pi's own dialect: the project is
//! the header's `cwd` (the `--…--` directory the file sits in only when there is none:
//! its dash encoding cannot tell `/src/api-service` from `/src/api/service`, and real
//! sessions were filed under `api/service`), and the bash tool's
//! `Command exited with code N` last line is the exit status; a bash result that is not an
//! error exited 0 (pi 0.73.1's tool fails every non-zero exit with that line) and its
//! `(no output)` placeholder is no output. The only text pi injects into user turns is
//! the `<file name="…">…</file>` block of each `@file` argument, before the prompt; it is
//! declared as a preamble (deja's own recall arrives as a `custom_message`, which the
//! family skips).
//!
//! The synthetic writer is the lineage's, `deja_core::family::pi_synth`, with pi 0.73's
//! own layout ([`PiLayout::PI`]): the `session` v3 header, a `model_change` root entry,
//! then `message` entries chained by 8-hex `id`/`parentId`, tool calls as `toolCall`
//! blocks answered by `toolResult` messages.

use std::path::{Path, PathBuf};

use deja_core::family::pi_jsonl::{self, PiDialect, MAX_WALK_DEPTH};
use deja_core::family::pi_synth::{self, PiLayout};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, SessionSink,
    SourceRef, StoreEnv, SynthSession, SynthWriter,
};
mod wiring;

const ID: &str = "pi";

/// The exit line pi's bash tool appends to the output of a failed command.
pub const PI_EXIT: &[&str] = &["Command exited with code "];

/// What pi's bash tool writes as the result of a command that printed nothing.
pub const PI_NO_OUTPUT: &str = "(no output)";

/// pi's dialect: exit codes from the marker line, and a clean bash result is exit 0 (pi
/// 0.73's bash tool throws, with the marker line, on every non-zero exit, so a result that
/// is not an error exited 0).
pub const DIALECT: PiDialect =
    PiDialect { harness: ID, exit_markers: PI_EXIT, clean_exit_zero: true, no_output_text: Some(PI_NO_OUTPUT), ..PiDialect::BASE };

/// What pi writes into user text itself: `pi @file "…"` puts each attached file (its
/// contents, or nothing for an image) as a `<file name="<abs path>">…</file>` block before
/// the prompt (pi 0.73.1's `processFileArguments`). Claude's attachments are records of
/// their own that deja skips; here they are stripped from the front of the user turn, so
/// the prompt, not a file's text, is the speech and the title.
static INJECTED: InjectedText = InjectedText { preambles: &["file"], ..InjectedText::NONE };

/// The pi adapter.
pub struct PiFormat;

deja_core::inventory::submit!(deja_core::Registration(&PiFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "pi",
    container: "JSONL, one append-only file per session (session header + id/parentId entry tree)",
    store: StoreSpec::new(&[Store {
        name: "",
        // PI_CODING_AGENT_SESSION_DIR, else the `sessionDir` pi's settings name, else the
        // agent directory's `sessions`.
        roots: &[Root::any(
            "${PI_CODING_AGENT_SESSION_DIR:-<${PI_CODING_AGENT_DIR:-~/.pi/agent}/settings.json#/sessionDir>|${PI_CODING_AGENT_DIR:-~/.pi/agent}/sessions}",
        )],
        layout: Layout::Custom { shape: "--<encoded-cwd>--/<ISO-timestamp>_<uuid>.jsonl", walk: Some(walk_sessions) },
    }])
    .deja_vars(&["DEJA_INCLUDE_SUBAGENTS"]),
    needs: &[],
    format_summary: "pi writes one append-only JSONL file per session: a `session` header (version 3, id, timestamp, cwd), \
        then typed entries chained by `id`/`parentId` into a tree. `message` entries carry the user prompt, the assistant's \
        text, thinking and `toolCall` blocks, and `toolResult` messages paired with their call by `toolCallId` (the bash \
        tool's failed output ends `Command exited with code N`). `compaction` and `branch_summary` entries hold summaries; \
        `model_change`, `thinking_level_change` and `custom` entries are metadata. The project is the header's `cwd` \
        (the `--<encoded-cwd>--` directory the file sits in only when it has none).",
    injected: &INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Planned("`pi install npm:pi-mcp-adapter`, then `mcpServers.deja` in `~/.pi/agent/mcp.json`"),
        auto_recall: Capability::Planned(
            "extension `~/.pi/agent/extensions/deja.ts`: `before_agent_start` returns a `deja-recall` custom message",
        ),
        skill: Capability::Planned("`~/.pi/agent/skills/deja-history/SKILL.md`"),
        command: Capability::Planned("`/deja` registered by the extension with `pi.registerCommand`"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Always(ResumeSpec::in_dir(&["pi", "--session", "{id}"])),
        handoff: Handoff::Exec(&["pi", "{prompt}"]),
    },
};

/// The transcripts under the sessions root.
fn walk_sessions(root: &Path, env: &StoreEnv, found: &mut Discovery) {
    found.sources.extend(pi_jsonl::sessions_under(&DIALECT, root, MAX_WALK_DEPTH, env.include_subagents()));
}

impl HarnessFormat for PiFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::PiWiring)
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        pi_jsonl::parse(&DIALECT, src, opts, out)
    }

    fn synthetic(&self) -> Option<&dyn SynthWriter> {
        Some(self)
    }
}

/// pi's directory name for a working directory: the leading separator dropped, every
/// `/`, `\` and `:` a `-`, wrapped in `--`.
pub fn encode_cwd(cwd: &str) -> String {
    let trimmed = cwd.trim_start_matches(['/', '\\']);
    let inner: String = trimmed.chars().map(|c| if matches!(c, '/' | '\\' | ':') { '-' } else { c }).collect();
    format!("--{inner}--")
}

impl SynthWriter for PiFormat {
    fn write(&self, home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
        pi_synth::write(&PiLayout::PI, home, session)
    }
}

//! pi (`pi`): the pi.dev coding agent. One append-only JSONL file per session under
//! `~/.pi/agent/sessions/--<encoded-cwd>--/<ISO-timestamp>_<uuid>.jsonl` (the agent
//! directory moves with `PI_CODING_AGENT_DIR`, the sessions directory alone with
//! `PI_CODING_AGENT_SESSION_DIR` or the agent's `settings.json` `sessionDir`; `DEJA_PI_ROOT`
//! names the sessions directory itself).
//!
//! pi is the root of the pi-lineage, so the reader is `deja_core::family::pi_jsonl`
//! (its module doc has the record → role table) with pi's own dialect: the project
//! comes from the `--…--` directory the file sits in, not from the header `cwd` (the
//! page's rule; `cwd` only when the directory gives nothing), and the bash tool's
//! `Command exited with code N` last line is the exit status. pi injects nothing about
//! itself into user text (deja's own recall arrives as a `custom_message`, which the
//! family skips).
//!
//! The synthetic writer is the lineage's, `deja_core::family::pi_synth`, with pi 0.73's
//! own layout ([`PiLayout::PI`]): the `session` v3 header, a `model_change` root entry,
//! then `message` entries chained by 8-hex `id`/`parentId`, tool calls as `toolCall`
//! blocks answered by `toolResult` messages.

use std::path::{Path, PathBuf};

use deja_core::family::pi_jsonl::{self, PiDialect, MAX_WALK_DEPTH};
use deja_core::family::pi_synth::{self, PiLayout};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, Os, ParseOptions, ParseStats, SessionSink,
    SourceRef, StoreEnv, StorePath, SynthSession, SynthWriter,
};
use serde_json::Value;

const ID: &str = "pi";

/// The exit line pi's bash tool appends to the output of a failed command.
pub const PI_EXIT: &[&str] = &["Command exited with code "];

/// pi's dialect: the project from the encoded directory, exit codes from the marker line.
pub const DIALECT: PiDialect = PiDialect { harness: ID, cwd_is_project: false, exit_markers: PI_EXIT, ..PiDialect::BASE };

/// The pi adapter.
pub struct PiFormat;

deja_core::inventory::submit!(deja_core::Registration(&PiFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "pi",
    container: "JSONL, one append-only file per session (session header + id/parentId entry tree)",
    stores: &[
        StorePath { os: Os::Any, path: "~/.pi/agent/sessions/--<encoded-cwd>--/<ISO-timestamp>_<uuid>.jsonl" },
        StorePath { os: Os::Any, path: "$PI_CODING_AGENT_DIR/sessions/--<encoded-cwd>--/<ISO-timestamp>_<uuid>.jsonl" },
        StorePath { os: Os::Any, path: "$PI_CODING_AGENT_SESSION_DIR/--<encoded-cwd>--/<ISO-timestamp>_<uuid>.jsonl" },
        StorePath { os: Os::Any, path: "<settings.json sessionDir>/--<encoded-cwd>--/<ISO-timestamp>_<uuid>.jsonl" },
    ],
    env_vars: &["PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR"],
    deja_vars: &["DEJA_PI_ROOT"],
    needs: &[],
    format_summary: "pi writes one append-only JSONL file per session: a `session` header (version 3, id, timestamp, cwd), \
        then typed entries chained by `id`/`parentId` into a tree. `message` entries carry the user prompt, the assistant's \
        text, thinking and `toolCall` blocks, and `toolResult` messages paired with their call by `toolCallId` (the bash \
        tool's failed output ends `Command exited with code N`). `compaction` and `branch_summary` entries hold summaries; \
        `model_change`, `thinking_level_change` and `custom` entries are metadata. The project is the `--<encoded-cwd>--` \
        directory the file sits in.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned("`pi install npm:pi-mcp-adapter`, then `mcpServers.deja` in `~/.pi/agent/mcp.json`"),
        auto_recall: Capability::Planned(
            "extension `~/.pi/agent/extensions/deja.ts`: `before_agent_start` returns a `deja-recall` custom message",
        ),
        skill: Capability::Planned("`~/.pi/agent/skills/deja-history/SKILL.md`"),
        command: Capability::Planned("`/deja` registered by the extension with `pi.registerCommand`"),
        resume: Capability::Planned("`cd <decoded project> && pi --session <id>`"),
        handoff: Capability::Planned("exec: `pi \"<prompt>\"`"),
    },
};

impl HarnessFormat for PiFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn discover(&self, env: &StoreEnv) -> Discovery {
        let mut found = Discovery::default();
        pi_jsonl::discover_sessions(&DIALECT, &sessions_root(env), MAX_WALK_DEPTH, env.include_subagents(), &mut found);
        found
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        pi_jsonl::parse(&DIALECT, src, opts, out)
    }

    fn synthetic(&self) -> Option<&dyn SynthWriter> {
        Some(self)
    }
}

/// `DEJA_PI_ROOT`, else `PI_CODING_AGENT_SESSION_DIR`, else the agent directory's
/// `settings.json` `sessionDir`, else `<agent>/sessions`, the agent directory being
/// `PI_CODING_AGENT_DIR` or `~/.pi/agent` (pi's own order: the session directory wins over
/// the agent directory).
fn sessions_root(env: &StoreEnv) -> PathBuf {
    if let Some(root) = env.deja_root(ID).or_else(|| env.path_var("PI_CODING_AGENT_SESSION_DIR")) {
        return root;
    }
    let agent = env.path_var("PI_CODING_AGENT_DIR").unwrap_or_else(|| env.home().join(".pi/agent"));
    settings_session_dir(env, &agent).unwrap_or_else(|| agent.join("sessions"))
}

/// An absolute (or `~`) `sessionDir` in `<agent>/settings.json`; a relative one is left
/// alone, since what pi resolves it against is not known.
fn settings_session_dir(env: &StoreEnv, agent: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(agent.join("settings.json")).ok()?;
    let settings: Value = serde_json::from_str(&text).ok()?;
    let dir = settings.get("sessionDir")?.as_str()?.trim();
    let path = env.expand(dir);
    (!dir.is_empty() && path.is_absolute()).then_some(path)
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

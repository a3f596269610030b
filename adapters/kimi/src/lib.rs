//! Kimi Code (`kimi`, github.com/MoonshotAI/kimi-code) and the legacy Kimi CLI
//! (`kimi-cli` on PyPI, last real release 1.51.0): two generations in two stores that
//! never share files.
//!
//! - **Kimi Code** keeps `${KIMI_CODE_HOME:-~/.kimi-code}/sessions/<workDirKey>/<sessionId>/`
//!   with `state.json` (title, `workDir`, times) and `agents/main/wire.jsonl`, an
//!   append-only wire-protocol log. It is read by the shared family reader
//!   [`deja_core::family::kimi_wire`] (the Kimi desktop app's agent, `kimi-work`, writes the
//!   same files), whose module doc has the record → role table. Only the main agent is
//!   indexed (`agents/agent-*` are sub-agents, skipped as the page says). The session id is
//!   the `<sessionId>` directory.
//! - **Kimi CLI** keeps `${KIMI_SHARE_DIR:-~/.kimi}/sessions/<md5 of work dir>/<uuid>/` with
//!   `context.jsonl` (the model context, no times), `wire.jsonl` (a UI event log of its own
//!   shape, with times) and `state.json` (title only). The adapter reads it itself, in
//!   [`legacy`]: the wire log when there is one (it has the times and every turn, also
//!   those `/clear` rotated out of `context.jsonl`), else `context.jsonl`. The project is
//!   the `kimi.json` work dir whose MD5 names the directory.
//!
//! `DEJA_KIMI_ROOT` names a sessions root read instead of both defaults; both shapes are
//! recognised under it, so it can point at either store.

pub mod legacy;

use std::path::{Path, PathBuf};

use deja_core::discover::find_files;
use deja_core::family::kimi_wire::{self, KimiWireDialect, KIMI_TOOLS};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, SessionSink,
    SourceRef, StoreEnv,
};

const ID: &str = "kimi";

/// Depth of `<sessions>/<workDirKey>/<sessionId>/agents/main/wire.jsonl`.
const MAX_DEPTH: usize = 4;

/// The generation numbers on the sources: the legacy Kimi CLI, then Kimi Code.
pub const GEN_KIMI_CLI: u32 = 1;
pub const GEN_KIMI_CODE: u32 = 2;

/// The Kimi Code adapter.
pub struct KimiFormat;

deja_core::inventory::submit!(deja_core::Registration(&KimiFormat));

const DIALECT: KimiWireDialect = KimiWireDialect { id: ID, tools: KIMI_TOOLS };

/// The legacy CLI wraps tool statuses and checkpoint markers in `<system>…</system>`
/// (`<system>CHECKPOINT 3</system>` as a user message): the harness talking about itself.
/// Kimi Code appends what a hook printed (deja's recall from `kimi-auto` among it) as a
/// message of its own, `<hook_result hook_event="UserPromptSubmit">…</hook_result>`
/// (a user message; `SessionStart`'s is an assistant one): never speech.
static INJECTED: InjectedText =
    InjectedText { blocks: &["system"], spans: &[("<hook_result hook_event=", "</hook_result>")], ..InjectedText::NONE };

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Kimi Code",
    container: "JSONL wire protocol + state.json per session; legacy Kimi CLI: context.jsonl + wire.jsonl + state.json",
    store: StoreSpec::new(&[Store {
        name: "",
        // Kimi Code, then the older Kimi CLI: both are read, each session once.
        roots: &[Root::any("${KIMI_CODE_HOME:-~/.kimi-code}/sessions"), Root::any("${KIMI_SHARE_DIR:-~/.kimi}/sessions")],
        layout: Layout::Custom {
            shape: "<workDirKey>/<sessionId>/agents/main/wire.jsonl, <md5 of work dir>/<session uuid>/{wire,context}.jsonl",
            walk: Some(walk_sessions),
        },
    }]),
    needs: &[],
    format_summary: "Kimi Code keeps one directory per session under `${KIMI_CODE_HOME:-~/.kimi-code}/sessions/<workDirKey>/`, \
        with `state.json` (title, work dir, times) and the main agent's append-only `agents/main/wire.jsonl`: prompts arrive as \
        `context.append_message`, answers are rebuilt from streamed `content.part` loop events between `step.begin` and \
        `step.end` (`think` parts are reasoning), and `tool.call`/`tool.result` pair by `toolCallId`. The legacy Kimi CLI \
        (`${KIMI_SHARE_DIR:-~/.kimi}/sessions/<md5 of work dir>/<uuid>/`) is read as a second generation: its own `wire.jsonl` \
        event log (`TurnBegin`, `ContentPart`, `ToolCall`, `ToolResult` with epoch-second times), or `context.jsonl` when \
        there is no wire log; the `Shell` tool's exit status comes from its status sentence, and the work dir from `kimi.json` \
        by MD5.",
    injected: &INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "`mcpServers.deja = {\"command\": \"<exe>\", \"args\": [\"mcp\"]}` in $KIMI_CODE_HOME/mcp.json (legacy Kimi CLI: \
             the same entry in ${KIMI_SHARE_DIR:-~/.kimi}/mcp.json)",
        ),
        auto_recall: Capability::Planned(
            "kimi-auto: a marked `[[hooks]]` table in $KIMI_CODE_HOME/config.toml, event UserPromptSubmit, command \
             `<exe> hook-prompt --plain` (plain stdout is injected)",
        ),
        skill: Capability::Planned("shared ~/.agents/skills/deja-history/SKILL.md"),
        command: Capability::Planned("through the skill: `/skill:deja-history`"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Always(ResumeSpec::anywhere(&["kimi", "--session", "{id}"])),
        handoff: Handoff::Exec(&["kimi", "-p", "{prompt}"]),
    },
};

/// The sessions of one root (see [`discover_in`]).
fn walk_sessions(root: &Path, _env: &StoreEnv, found: &mut Discovery) {
    discover_in(root, &mut found.sources);
}

impl HarnessFormat for KimiFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::KimiWiring)
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        if is_kimi_code_wire(&src.path) {
            let session_dir = src.path.parent().and_then(Path::parent).and_then(Path::parent);
            let id = session_dir.and_then(Path::file_name).and_then(|n| n.to_str()).unwrap_or(ID);
            let state = session_dir.map(|d| kimi_wire::read_state(&d.join("state.json"))).unwrap_or_default();
            return kimi_wire::parse(&DIALECT, src, id, &state, opts, out);
        }
        legacy::parse(src, opts, out)
    }

    fn synthetic(&self) -> Option<&dyn deja_core::SynthWriter> {
        Some(self)
    }
}

/// `…/agents/main/wire.jsonl`: a Kimi Code main-agent log.
fn is_kimi_code_wire(path: &Path) -> bool {
    let name = |p: Option<&Path>| p.and_then(Path::file_name).and_then(|n| n.to_str()).map(str::to_string);
    let dir = path.parent();
    path.file_name().is_some_and(|n| n == "wire.jsonl")
        && name(dir).as_deref() == Some("main")
        && name(dir.and_then(Path::parent)).as_deref() == Some("agents")
}

/// Both generations' sources under one root: Kimi Code main-agent wire logs, and each
/// legacy session directory's wire log (else its `context.jsonl`).
fn discover_in(root: &Path, out: &mut Vec<SourceRef>) {
    let files = find_files(root, MAX_DEPTH, &|n| n == "wire.jsonl" || n == "context.jsonl");
    for path in &files {
        let Some(dir) = path.parent() else { continue };
        let under_agents = dir.parent().and_then(Path::file_name).is_some_and(|n| n == "agents");
        if is_kimi_code_wire(path) {
            let state = dir.parent().and_then(Path::parent).map(|d| d.join("state.json"));
            let mut src = SourceRef::file(path).append_only();
            src.generation = Some(GEN_KIMI_CODE);
            if let Some(state) = state {
                src = src.with_part(state);
            }
            out.push(src);
        } else if under_agents {
            // A Kimi Code sub-agent's log: only the main agent is indexed.
        } else if path.file_name().is_some_and(|n| n == "wire.jsonl") {
            let mut src = SourceRef::file(path).append_only().with_part(dir.join("context.jsonl")).with_part(dir.join("state.json"));
            src.generation = Some(GEN_KIMI_CLI);
            out.push(src);
        } else if !dir.join("wire.jsonl").is_file() {
            // No wire log: the context is all there is. `/clear` rewrites it, so it is
            // read whole every time.
            let mut src = SourceRef::file(path).with_part(dir.join("state.json"));
            src.generation = Some(GEN_KIMI_CLI);
            out.push(src);
        }
    }
}

/// The legacy share directory a sessions root belongs to (`kimi.json` lives there).
pub(crate) fn share_dir_of(session_file: &Path) -> Option<PathBuf> {
    // <share>/sessions/<hash>/<uuid>/<file>
    Some(session_file.parent()?.parent()?.parent()?.parent()?.to_path_buf())
}

mod synth;
mod wiring;

impl deja_core::SynthWriter for KimiFormat {
    fn write(&self, home: &std::path::Path, session: &deja_core::SynthSession) -> std::io::Result<std::path::PathBuf> {
        synth::write(home, session)
    }
}

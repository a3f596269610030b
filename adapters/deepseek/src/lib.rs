//! DeepSeek Harness (`dsh`, packages `@deepseek-ai/dsh-*`): its `headless` and `web`
//! apps keep one directory per session,
//! `${DSH_HOME:-~/.dsh}/sessions/<workspace-slug>/session-<uuid>/`, holding one
//! append-only JSONL log per **format generation**: `session.jsonl[.zstd]` (oldest,
//! header `"version": 0`), then `session.vN.jsonl[.zstd]`. The `.zstd` files are the
//! same byte stream written as many concatenated zstd frames (one per flush). When dsh
//! reopens an old session it rewrites the whole history into a new-generation file and
//! leaves the old one beside it, so discovery reads only the newest generation of each
//! directory (see [`pick_generation`]).
//!
//! Every line after the header is `{"type", "seq", "time", "data"}` (packed rows carry
//! `seq0`/`time0`), processed in file order because `seq` is not monotonic.
//!
//! | record `type` | role | rule |
//! | --- | --- | --- |
//! | `session` (header) | — | id (`session-` prefix dropped), `cwd` → project, `createdAt` |
//! | `user/message`, `data.source.kind == "user"` | `User` | text blocks (or a string) joined; flushes pending deltas |
//! | `user/message`, any other `source.kind` | skipped | runtime-context snapshots, skill catalogues (harness talking about itself) |
//! | `assistant/message` | `Assistant` | `text` blocks; `reasoning` → `Reasoning` only with `include_reasoning`; `tool-call` blocks → `ToolCall`; **discards** pending deltas |
//! | `assistant/chunk` with `chunk.type == "text-delta"` | (buffer) | appended to the pending stream; other chunk types skipped |
//! | `text-chunks` | (buffer) | packed deltas `data.texts`, appended in order; time `time0` |
//! | `tool-call-chunks` | skipped | the complete call is in `assistant/message` / `tool/call` |
//! | `step/end`, `turn/end`, end of file | `Assistant` (`partial`) | flush the pending stream (non-empty only when no complete message arrived) |
//! | `tool/call` | `ToolCall` | paired by `callId`; one turn per call id even when the `assistant/message` block also names it |
//! | `tool/result` v1–v3 (nested `tool-result` blocks) | folded into the call, else `ToolOutput` | inner text joined, block `isError` |
//! | `tool/result` v4+ (`role: "tool"`, the message is the result) | folded into the call, else `ToolOutput` | message text blocks, message `isError` |
//! | `session/title` | — | session title; the last one wins (the provider's title follows the fallback, often after `turn/end`) |
//! | `permission/preset`, `sandbox/mode`, `approval/policy`, `turn/start`, `step/start`, `request/header`, `request/context`, `session/title-llm-request`, `agent/inbox/spliced`, others | skipped | configuration, prompts and queue bookkeeping |
//!
//! Work signals: `bash`/`pwsh` results whose last line is `[exit code: N]` or
//! `[killed by signal: X]` give the exit status (the marker line is dropped from the
//! text); `read`, `edit`, `write` and `str_replace_editor` name files, and edits that
//! carry old/new strings give the replaced span.
//!
//! The reader (this table) and the discovery walk live in `deja_core::family::dsh_log`,
//! shared with Cherry Studio's dsh runtime; this adapter is its metadata, store root and
//! synthetic writer.

mod synth;

pub use deja_core::family::dsh_log::{generation_name, pick_generation, GenerationName};
use deja_core::launch::{Handoff, Launch, Resume};
use std::path::{Path, PathBuf};

use deja_core::family::dsh_log;
mod wiring;
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, SessionSink,
    SourceRef, StoreEnv, SynthSession, SynthWriter,
};

/// The adapter id.
pub const ID: &str = "deepseek";

/// The DeepSeek Harness format.
pub struct DeepSeek;

deja_core::inventory::submit!(deja_core::Registration(&DeepSeek));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "DeepSeek Harness (dsh)",
    container: "JSONL (zstd-framed by default), one directory per session, one log per format generation",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("${DSH_HOME:-~/.dsh}/sessions")],
        layout: Layout::Custom { shape: "<workspace-slug>/session-<uuid>/session.vN.jsonl.zstd", walk: Some(walk_sessions) },
    }]),
    needs: &[],
    format_summary: "dsh keeps one directory per session under `${DSH_HOME:-~/.dsh}/sessions/<workspace-slug>/session-<uuid>/`, \
        with one JSONL event log per format generation (`session.jsonl.zstd`, `session.v3.jsonl.zstd`, `session.v4.jsonl.zstd`, …), \
        usually written as many concatenated zstd frames. A reopened session is rewritten whole into a new generation beside the old \
        one, so deja reads only the newest generation of each directory. Answers are stored twice (streamed deltas or packed \
        `text-chunks`, then the complete `assistant/message`); deja indexes the complete message and recovers the streamed text only \
        for interrupted runs (marked partial). Runtime-context and skill-catalogue `user/message` rows are skipped; tool calls fold \
        with their results (v1–v3 nested `tool-result` blocks, v4 tool-role messages), with exit status from bash's `[exit code: N]` \
        line.",
    // Runtime-context snapshots and skill catalogues are their own `user/message` rows,
    // told apart by `source.kind` in the parser; nothing is injected into user text.
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "deja install deepseek writes an `insert:` row for `@deepseek-ai/dsh-mcp-client` (serverName deja, stdio `<exe> mcp`) \
             into the home-level patch layer $DSH_HOME/cordis.patch.yml",
        ),
        auto_recall: Capability::Planned(
            "deja install deepseek-auto writes the plugin $DSH_HOME/plugins/deja/auto.js (named from cordis.patch.yml): \
             `deja hook-prompt --plain` runs when the loop claims the user's prompt (agent/inbox/claimed) and its block is \
             ctx.systemPrompt.context, and tools/post-execute adds hook-tool / hook-tool-after lines as additionalContexts",
        ),
        skill: Capability::Planned("shared ~/.agents/skills/deja-history/SKILL.md, which dsh splices into its skill catalogue"),
        command: Capability::Planned(
            "$DSH_HOME/plugins/deja/command.js registers /deja with ctx.commands.register, named from cordis.patch.yml \
             (the registry is mounted in every profile; only the web profile has a UI that dispatches it)",
        ),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Unsupported(
            "dsh has no resume command: headless takes a task and exits, web takes only server flags (its sidebar reopens conversations)",
        ),
        handoff: Handoff::Paste("dsh's headless profile takes no prompt yet; a later release adds `dsh --profile headless <prompt>`"),
    },
};

/// Every session directory's newest log generation (dsh's own layout).
fn walk_sessions(root: &Path, _env: &StoreEnv, found: &mut Discovery) {
    found.sources.extend(dsh_log::discover_sessions(root));
}

impl HarnessFormat for DeepSeek {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::DeepSeekWiring)
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        dsh_log::parse(ID, src, opts, out)
    }

    fn synthetic(&self) -> Option<&dyn SynthWriter> {
        Some(self)
    }
}

impl SynthWriter for DeepSeek {
    fn write(&self, home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
        synth::write(home, session)
    }
}

/// The workspace slug dsh names a project directory with: the cwd with `/` written as
/// `-`, wrapped in `--` (`/work/pgbouncer-lab` → `--work-pgbouncer-lab--`).
pub fn workspace_slug(cwd: &str) -> String {
    let body: String = cwd.trim_matches(['/', '\\']).chars().map(|c| if matches!(c, '/' | '\\' | ':') { '-' } else { c }).collect();
    format!("--{body}--")
}

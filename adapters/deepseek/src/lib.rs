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

mod parse;
mod synth;

use deja_core::discover::{is_dir_entry, is_file_entry};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, Os, ParseOptions, ParseStats, SessionSink,
    SourceRef, StoreEnv, StorePath, SynthSession, SynthWriter,
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
    stores: &[StorePath { os: Os::Any, path: "~/.dsh/sessions/<workspace-slug>/session-<uuid>/session.vN.jsonl.zstd" }],
    env_vars: &["DSH_HOME"],
    deja_vars: &["DEJA_DEEPSEEK_ROOT"],
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
             ctx.systemPrompt.context runs `deja hook-prompt --plain`, and tools/post-execute adds hook-tool / hook-tool-after \
             lines as additionalContexts",
        ),
        skill: Capability::Planned("shared ~/.agents/skills/deja-history/SKILL.md, which dsh splices into its skill catalogue"),
        command: Capability::Planned(
            "$DSH_HOME/plugins/deja/command.js registers /deja with ctx.commands.register, named from cordis.patch.yml \
             (web profile only; headless has no command plane)",
        ),
        resume: Capability::Unsupported(
            "dsh has no resume command: headless takes a task and exits, web takes only server flags (its sidebar reopens conversations)",
        ),
        handoff: Capability::Planned("paste the digest; a later dsh release adds exec: `dsh --profile headless \"<prompt>\"`"),
    },
};

impl HarnessFormat for DeepSeek {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn discover(&self, env: &StoreEnv) -> Discovery {
        let mut found = Discovery::default();
        let root = sessions_root(env);
        if found.looked_at(&root) {
            found.sources = discover_in(&root);
        }
        found
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        parse::parse(src, opts, out)
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

/// `DEJA_DEEPSEEK_ROOT`, else `${DSH_HOME:-~/.dsh}/sessions`.
pub fn sessions_root(env: &StoreEnv) -> PathBuf {
    if let Some(root) = env.deja_root(ID) {
        return root;
    }
    env.path_var("DSH_HOME").unwrap_or_else(|| env.home().join(".dsh")).join("sessions")
}

/// Every `session-<uuid>` directory under `root` (the root itself included), each
/// contributing its newest generation. Sorted for determinism.
///
/// Every search refreshes the index first, so this walk is on the hot path of a
/// no-change refresh: it reads directories only, taking entry types from `readdir`
/// and stat-ing a file only to break a tie between two files of one generation.
fn discover_in(root: &Path) -> Vec<SourceRef> {
    let mut sources = Vec::new();
    if root.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("session-")) {
        push_session_dir(root, &mut sources);
    } else {
        walk_for_sessions(root, 0, &mut sources);
    }
    Discovery::sort_sources(&mut sources);
    sources
}

/// Depth of `<root>/<slug>/session-<uuid>` plus room for nesting dsh may add.
const MAX_WALK_DEPTH: usize = 4;

fn walk_for_sessions(dir: &Path, depth: usize, out: &mut Vec<SourceRef>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        if !is_dir_entry(&entry) {
            continue;
        }
        let path = entry.path();
        if entry.file_name().to_str().is_some_and(|n| n.starts_with("session-")) {
            // A session directory holds generations, never further sessions.
            push_session_dir(&path, out);
        } else if depth + 1 < MAX_WALK_DEPTH {
            walk_for_sessions(&path, depth + 1, out);
        }
    }
}

fn push_session_dir(dir: &Path, out: &mut Vec<SourceRef>) {
    if let Some((path, generation)) = pick_generation(dir) {
        let mut src = SourceRef::file(path);
        src.generation = Some(generation);
        out.push(src);
    }
}

/// What a log's file name says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenerationName {
    /// `N` of `session.vN.jsonl`; 0 for the unnumbered `session.jsonl`.
    pub generation: u32,
    /// False for the unnumbered (oldest) naming.
    pub numbered: bool,
    pub zstd: bool,
}

/// Parses `session.jsonl`, `session.vN.jsonl`, each optionally `.zstd` (or `.zst`).
/// Any `N` is accepted so the next format bump is read rather than skipped.
pub fn generation_name(name: &str) -> Option<GenerationName> {
    let (stem, zstd) = match name.strip_suffix(".zstd").or_else(|| name.strip_suffix(".zst")) {
        Some(s) => (s, true),
        None => (name, false),
    };
    let stem = stem.strip_suffix(".jsonl")?;
    if stem == "session" {
        return Some(GenerationName { generation: 0, numbered: false, zstd });
    }
    let n = stem.strip_prefix("session.v")?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(GenerationName { generation: n.parse().ok()?, numbered: true, zstd })
}

/// The newest generation in one session directory: highest `N` (the unnumbered name is
/// older than any `vN`). When the raw and the zstd file of the same `N` both exist
/// (raw lines are a dsh configuration, so a switch leaves both), the one modified
/// last wins, then the larger, then zstd, because the one dsh wrote most recently is
/// the one it is still appending to. Only regular files count.
pub fn pick_generation(dir: &Path) -> Option<(PathBuf, u32)> {
    // Newest by name first; only files sharing the newest generation need a stat.
    let mut newest: Vec<(GenerationName, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let name = entry.file_name();
        let Some(gen) = name.to_str().and_then(generation_name) else { continue };
        if !is_file_entry(&entry) {
            continue;
        }
        let key = (gen.generation, gen.numbered);
        match newest.first().map(|(g, _)| (g.generation, g.numbered)) {
            Some(best) if key < best => {}
            Some(best) if key == best => newest.push((gen, entry.path())),
            _ => newest = vec![(gen, entry.path())],
        }
    }
    if newest.len() > 1 {
        type Tie = (Option<SystemTime>, u64, bool);
        let tie = |(g, p): &(GenerationName, PathBuf)| -> Tie {
            let meta = std::fs::metadata(p).ok();
            (meta.as_ref().and_then(|m| m.modified().ok()), meta.as_ref().map_or(0, |m| m.len()), g.zstd)
        };
        let ranked: Vec<(Tie, usize)> = newest.iter().enumerate().map(|(i, c)| (tie(c), i)).collect();
        let (_, winner) = ranked.into_iter().max_by(|a, b| a.0.cmp(&b.0))?;
        let (g, p) = newest.swap_remove(winner);
        return Some((p, g.generation));
    }
    newest.pop().map(|(g, p)| (p, g.generation))
}

/// The workspace slug dsh names a project directory with: the cwd with `/` written as
/// `-`, wrapped in `--` (`/work/pgbouncer-lab` → `--work-pgbouncer-lab--`).
pub fn workspace_slug(cwd: &str) -> String {
    let body: String = cwd.trim_matches(['/', '\\']).chars().map(|c| if matches!(c, '/' | '\\' | ':') { '-' } else { c }).collect();
    format!("--{body}--")
}

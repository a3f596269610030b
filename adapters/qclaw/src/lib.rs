//! QClaw (`qclaw`): Tencent's QClaw, built on OpenClaw. One append-only JSONL file per
//! session per agent: `~/.qclaw/agents/<agentId>/sessions/<session-uuid>.jsonl`, with
//! archived variants beside it (`<uuid>.jsonl.deleted.<ts>`, `<uuid>.jsonl.reset.<ts>`,
//! `<uuid>.jsonl.full.bak`, same format). `DEJA_QCLAW_ROOT` names the `agents` directory
//! (the root the per-agent session directories sit in), as the page says.
//!
//! The reader is `deja_core::family::pi_jsonl` (its module doc has the record → role
//! table): QClaw writes OpenClaw's pi-lineage lines. What the dialect changes: OpenClaw's
//! tool names (`exec`/`bash` shell, `apply_patch` an edit), whose results carry the exit
//! status in `details.exitCode`/`exitSignal`; session ids are `<agentId>:<uuid>` so two
//! agents never collide; the project is the header `cwd`, else `qclaw-<agentId>`; the
//! archived variants are read too, their id the part before `.jsonl` (the page leaves
//! indexing them to policy: a deleted or reset conversation is still history), but only
//! when no live `<id>.jsonl` is beside them (one id, one source: the index would otherwise
//! let the copies replace each other); user text
//! relayed from chat channels loses its gateway date prefix
//! (`[Wed 2026-02-18 11:21 GMT+1] `). `sessions.json` and compaction checkpoints
//! (`<id>.checkpoint.<uuid>.jsonl`) are not transcripts, and only files directly in an
//! agent's `sessions/` directory are. The Kimi-branded `~/.kimi_openclaw/agents/` build
//! is OpenClaw's, not QClaw's. QClaw injects nothing else into user text that deja knows
//! of.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use deja_core::family::pi_jsonl::{self, DirProject, PiDialect, MAX_WALK_DEPTH};
use deja_core::family::pi_synth::{ExitReport, FileName, PiLayout, PiSynth, PiTools, ProjectDir};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::SynthWriter;
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, SessionSink,
    SourceRef, StoreEnv, ToolMap,
};

const ID: &str = "qclaw";

/// OpenClaw's tool names.
const OPENCLAW_TOOLS: ToolMap = ToolMap { shell: &["exec", "bash"], read: &["read"], edit: &["edit", "apply_patch"], write: &["write"] };

/// QClaw's dialect: OpenClaw's tools, agent-scoped ids, archived files, gateway prefixes.
pub const DIALECT: PiDialect = PiDialect {
    harness: ID,
    tools: OPENCLAW_TOOLS,
    dir_project: DirProject::AgentDir("qclaw-"),
    agent_scoped_ids: true,
    archived_suffixes: &[".deleted.", ".reset.", ".full.bak"],
    gateway_date_prefix: true,
    ..PiDialect::BASE
};

/// The QClaw adapter.
pub struct QclawFormat;

deja_core::inventory::submit!(deja_core::Registration(&QclawFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "QClaw",
    container: "JSONL, one append-only file per session per agent (OpenClaw's pi-lineage lines), plus archived variants",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("~/.qclaw/agents")],
        layout: Layout::Custom {
            shape: "<agentId>/sessions/<session-uuid>.jsonl (or its .{deleted,reset}.<ts> / .full.bak archive)",
            walk: Some(walk_agents),
        },
    }])
    .deja_vars(&["DEJA_INCLUDE_SUBAGENTS"]),
    needs: &[],
    format_summary: "QClaw writes OpenClaw's pi-lineage JSONL per agent: a `session` header, `message` entries chained by \
        `id`/`parentId` with user text (chat-relayed text opens with a gateway date prefix), assistant text, thinking and \
        `toolCall` blocks, and `toolResult` messages paired by `toolCallId` whose `details` carry `exitCode`/`exitSignal`. \
        `compaction` entries are summaries; `custom` entries and model changes are skipped. Deleted, reset and backed-up \
        transcripts keep the format under archived suffixes. Ids are `<agentId>:<uuid>`.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::Unknown, handoff: Handoff::Paste("no start-with-prompt command is known") },
};

/// The transcripts below the agents root, exactly `<agentId>/sessions/<file>`, one
/// source per session.
fn walk_agents(root: &Path, env: &StoreEnv, found: &mut Discovery) {
    let sources = pi_jsonl::sessions_under(&DIALECT, root, MAX_WALK_DEPTH, env.include_subagents());
    found.sources.extend(one_source_per_session(sources.into_iter().filter(|s| in_agent_sessions(root, &s.path)).collect()));
}

impl HarnessFormat for QclawFormat {
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

fn in_agent_sessions(agents: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(agents) else { return false };
    let parts: Vec<_> = rel.components().collect();
    parts.len() == 3 && parts[1].as_os_str() == "sessions"
}

/// One source per session. An archived copy (`<id>.jsonl.full.bak`, `.reset.<ts>`,
/// `.deleted.<ts>`) carries its session's id, and two sources of one id would replace each
/// other in the index on every pass: the live `<id>.jsonl` wins, else the last archived
/// name (so a session that was only ever archived is still read).
fn one_source_per_session(sources: Vec<SourceRef>) -> Vec<SourceRef> {
    let mut best: BTreeMap<(PathBuf, String), SourceRef> = BTreeMap::new();
    for src in sources {
        let name = src.path.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
        let key = (src.path.parent().map(Path::to_path_buf).unwrap_or_default(), pi_jsonl::file_stem_id(&name).to_string());
        let rank = |n: &str| (n.ends_with(".jsonl"), n.to_string());
        match best.get(&key) {
            Some(kept) if rank(kept.path.file_name().and_then(|n| n.to_str()).unwrap_or("")) >= rank(&name) => {}
            _ => {
                best.insert(key, src);
            }
        }
    }
    let mut out: Vec<SourceRef> = best.into_values().collect();
    Discovery::sort_sources(&mut out);
    out
}

/// The synthetic writer: QClaw: OpenClaw's `agents/<agentId>/sessions/<uuid>.jsonl` (the default agent,
/// `main`), the `exec` shell tool with `details.status`/`exitCode`.
static SYNTH: PiSynth = PiSynth(PiLayout {
    sessions_dir: ".qclaw/agents/main/sessions",
    project_dir: ProjectDir::Flat,
    file_name: FileName::Id,
    tools: PiTools::Pi { shell: "exec" },
    exit: ExitReport::Details,
    ..PiLayout::PI
});

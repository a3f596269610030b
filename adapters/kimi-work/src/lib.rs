//! Kimi Work (`kimi-work`): the local agent inside the Kimi desktop app (the "daimon"
//! runtime). It embeds the Kimi Code kernel, so its transcripts are Kimi Code
//! `wire.jsonl` logs, read by the family reader [`deja_core::family::kimi_wire`] (the
//! `kimi` adapter reads Kimi Code's own store with it; its module doc has the record →
//! role table). The dialect changes nothing but the adapter id: what differs is where the
//! store lives and which sessions in it are conversations.
//!
//! The sessions root, `<app data>/kimi-desktop/daimon-share/daimon/runtime/kimi-code/home/sessions/`
//! (`DEJA_KIMI_WORK_ROOT` names it), holds `wd_<workspace>_<hash>/<session>/` directories:
//!
//! - only `conv-*` sessions are user conversations; the app's internal `ctitle-*` (title
//!   generation), `sklsum-*` (skill summaries) and `dvlt-*` sessions are skipped, as is any
//!   other prefix (not a conversation either, as far as the page says);
//! - current layout `conv-<id>/agents/main/wire.jsonl` (only the main agent, as for Kimi
//!   Code), legacy layout `conv-<id>/wire.jsonl`;
//! - the session id is the `conv-<id>` directory name; `state.json` beside the `agents`
//!   folder (or the legacy log) gives title, work dir and times when present.

use std::path::{Path, PathBuf};

use deja_core::discover::{find_files, is_dir_entry};
use deja_core::family::kimi_wire::{self, KimiWireDialect, KIMI_TOOLS};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, Os, ParseOptions, ParseStats, SessionSink,
    SourceRef, StoreEnv, StorePath,
};

const ID: &str = "kimi-work";

/// The runtime's Kimi Code home inside the app's data directory, and its sessions folder.
const RUNTIME_SESSIONS: &str = "kimi-desktop/daimon-share/daimon/runtime/kimi-code/home/sessions";

/// The prefix of a user conversation's session directory.
const CONVERSATION_PREFIX: &str = "conv-";

/// The Kimi Work adapter.
pub struct KimiWorkFormat;

deja_core::inventory::submit!(deja_core::Registration(&KimiWorkFormat));

const DIALECT: KimiWireDialect = KimiWireDialect { id: ID, tools: KIMI_TOOLS };

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Kimi Work",
    container: "JSONL wire protocol (Kimi Code's) + state.json per conversation, in the desktop app's data directory",
    stores: &[
        StorePath {
            os: Os::MacOs,
            path: "~/Library/Application Support/kimi-desktop/daimon-share/daimon/runtime/kimi-code/home/sessions/wd_*/conv-*/agents/main/wire.jsonl",
        },
        StorePath {
            os: Os::Linux,
            path: "${XDG_CONFIG_HOME:-~/.config}/kimi-desktop/daimon-share/daimon/runtime/kimi-code/home/sessions/wd_*/conv-*/agents/main/wire.jsonl",
        },
        StorePath {
            os: Os::Linux,
            path: "${XDG_DATA_HOME:-~/.local/share}/kimi-desktop/daimon-share/daimon/runtime/kimi-code/home/sessions/wd_*/conv-*/agents/main/wire.jsonl",
        },
        StorePath {
            os: Os::Windows,
            path: "%APPDATA%\\kimi-desktop\\daimon-share\\daimon\\runtime\\kimi-code\\home\\sessions\\wd_*\\conv-*\\agents\\main\\wire.jsonl",
        },
        StorePath { os: Os::Any, path: "<sessions>/wd_*/conv-*/wire.jsonl (legacy layout)" },
    ],
    env_vars: &["XDG_CONFIG_HOME", "XDG_DATA_HOME", "APPDATA"],
    deja_vars: &["DEJA_KIMI_WORK_ROOT"],
    store: deja_core::StoreSpec::UNDECLARED,
    needs: &[],
    format_summary: "The Kimi desktop app's local agent runs the Kimi Code kernel and keeps its sessions in the app's data \
        directory (`kimi-desktop/daimon-share/daimon/runtime/kimi-code/home/sessions/`): `wd_<workspace>_<hash>/conv-<id>/` \
        holds `state.json` and `agents/main/wire.jsonl` (older builds: `conv-<id>/wire.jsonl`), the same append-only wire \
        protocol Kimi Code writes, read with the same reader: prompts from `context.append_message`, answers rebuilt from \
        streamed `content.part` events, `tool.call`/`tool.result` paired by `toolCallId`. Only `conv-*` sessions are \
        conversations; the app's internal `ctitle-*`, `sklsum-*` and `dvlt-*` sessions are skipped.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    launch: Launch { resume: Resume::Unsupported("conversations reopen in the desktop app only"), handoff: Handoff::Paste("a desktop app with no start-with-prompt command") },
};

impl HarnessFormat for KimiWorkFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn discover(&self, env: &StoreEnv) -> Discovery {
        let mut found = Discovery::default();
        for root in sessions_roots(env) {
            if found.looked_at(&root) {
                discover_in(&root, &mut found.sources);
            }
        }
        Discovery::sort_sources(&mut found.sources);
        found.sources.dedup_by(|a, b| a.path == b.path);
        found
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let session_dir = conversation_dir(&src.path);
        let id = session_dir.and_then(Path::file_name).and_then(|n| n.to_str()).unwrap_or(ID);
        let state = session_dir.map(|d| kimi_wire::read_state(&d.join("state.json"))).unwrap_or_default();
        kimi_wire::parse(&DIALECT, src, id, &state, opts, out)
    }

    fn synthetic(&self) -> Option<&dyn deja_core::SynthWriter> {
        Some(self)
    }
}

/// `DEJA_KIMI_WORK_ROOT`, else the app's sessions folder on this OS (both Linux candidates).
fn sessions_roots(env: &StoreEnv) -> Vec<PathBuf> {
    if let Some(root) = env.deja_root(ID) {
        return vec![root];
    }
    if cfg!(target_os = "macos") {
        vec![env.home().join("Library/Application Support").join(RUNTIME_SESSIONS)]
    } else if cfg!(windows) {
        let appdata = env.path_var("APPDATA").unwrap_or_else(|| env.home().join("AppData").join("Roaming"));
        vec![appdata.join(RUNTIME_SESSIONS)]
    } else {
        vec![env.xdg_config_home().join(RUNTIME_SESSIONS), env.xdg_data_home().join(RUNTIME_SESSIONS)]
    }
}

/// The `conv-*` directory a log belongs to: `conv-<id>/agents/main/wire.jsonl` or
/// `conv-<id>/wire.jsonl`.
fn conversation_dir(wire: &Path) -> Option<&Path> {
    let dir = wire.parent()?;
    if is_conversation(dir) {
        return Some(dir);
    }
    let agents = dir.parent()?;
    let conv = agents.parent()?;
    (dir.file_name()? == "main" && agents.file_name()? == "agents" && is_conversation(conv)).then_some(conv)
}

fn is_conversation(dir: &Path) -> bool {
    dir.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(CONVERSATION_PREFIX))
}

/// Every conversation's main log under `root` (`<root>/wd_*/conv-*/…`). Internal helper
/// sessions are never entered.
fn discover_in(root: &Path, out: &mut Vec<SourceRef>) {
    let Ok(workspaces) = std::fs::read_dir(root) else { return };
    for ws in workspaces.flatten().filter(is_dir_entry) {
        let Ok(sessions) = std::fs::read_dir(ws.path()) else { continue };
        for conv in sessions.flatten().filter(is_dir_entry) {
            let dir = conv.path();
            if !is_conversation(&dir) {
                // ctitle-*, sklsum-*, dvlt-*: the app's own helper sessions.
                continue;
            }
            for wire in find_files(&dir, 2, &|n| n == "wire.jsonl") {
                if conversation_dir(&wire) == Some(dir.as_path()) {
                    out.push(SourceRef::file(wire).append_only().with_part(dir.join("state.json")));
                }
            }
        }
    }
}

mod synth;

impl deja_core::SynthWriter for KimiWorkFormat {
    fn write(&self, home: &std::path::Path, session: &deja_core::SynthSession) -> std::io::Result<std::path::PathBuf> {
        synth::write(home, session)
    }
}

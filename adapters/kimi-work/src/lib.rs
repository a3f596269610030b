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

use std::path::Path;

use deja_core::discover::{find_files, subdirs};
use deja_core::family::kimi_wire::{self, KimiWireDialect, KIMI_TOOLS};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, SessionSink,
    SourceRef, StoreEnv,
};

const ID: &str = "kimi-work";

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
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[
            Root::macos("~/Library/Application Support/kimi-desktop/daimon-share/daimon/runtime/kimi-code/home/sessions"),
            Root::linux("${XDG_CONFIG_HOME:-~/.config}/kimi-desktop/daimon-share/daimon/runtime/kimi-code/home/sessions"),
            Root::linux("${XDG_DATA_HOME:-~/.local/share}/kimi-desktop/daimon-share/daimon/runtime/kimi-code/home/sessions"),
            Root::windows("${APPDATA:-~/AppData/Roaming}/kimi-desktop/daimon-share/daimon/runtime/kimi-code/home/sessions"),
        ],
        layout: Layout::Custom { shape: "wd_*/conv-*/agents/main/wire.jsonl, wd_*/conv-*/wire.jsonl (legacy)", walk: Some(walk_sessions) },
    }]),
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
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Unsupported("conversations reopen in the desktop app only"),
        handoff: Handoff::Paste("a desktop app with no start-with-prompt command"),
    },
};

/// The sessions of one root (see [`discover_in`]).
fn walk_sessions(root: &Path, _env: &StoreEnv, found: &mut Discovery) {
    discover_in(root, &mut found.sources);
}

impl HarnessFormat for KimiWorkFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
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
    for ws in subdirs(root) {
        for dir in subdirs(&ws) {
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

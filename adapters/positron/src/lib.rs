//! Positron Assistant (`positron`): the built-in chat of the Positron IDE (Posit's VS Code
//! fork), stored in VS Code's own chat-session format in Positron's `User` folder (macOS
//! `~/Library/Application Support/Positron/User`; Linux `${XDG_CONFIG_HOME:-~/.config}/Positron/User`
//! and Windows `%APPDATA%\Positron\User` by VS Code's convention, which the page assumes):
//! `workspaceStorage/<hash>/chatSessions/<id>.jsonl` (mutation log) or `<id>.json` (state),
//! plus the empty-window chats and every `profiles/<id>/` the same way.
//!
//! Read through the VS Code chat family (`deja_core::family::vscode_chat`, whose module doc
//! has the record → role table): this adapter is its dialect — product `Positron`, no
//! Copilot transcripts (Positron does not ship the Copilot Chat extension's log), and the
//! family's Copilot tool ids (Positron's own tool ids are not on its page). No injected
//! text is known. The project comes from the storage folder's `workspace.json`.
//!
//! `DEJA_POSITRON_ROOT` names one sessions root — a `User` folder (or any folder holding
//! chat files, which is walked) — and `DEJA_POSITRON_ROOTS` a path list of them; either
//! replaces the default one. No source is append-only: the
//! mutation log is replayed from its start every time (compaction rewrites it).

use deja_core::family::vscode_chat::{self, VscodeChatDialect, COPILOT_TOOLS};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, SessionSink,
    SourceRef, StoreEnv,
};

const ID: &str = "positron";

/// The Positron Assistant adapter.
pub struct PositronFormat;

deja_core::inventory::submit!(deja_core::Registration(&PositronFormat));

/// Positron in the VS Code chat family.
pub static DIALECT: VscodeChatDialect =
    VscodeChatDialect { harness: ID, tools: COPILOT_TOOLS, injected: &InjectedText::NONE, transcripts: false };

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Positron Assistant",
    container: "VS Code chat sessions: JSONL mutation log (`kind` 0–3) or JSON state per chat",
    store: StoreSpec::new(&[Store {
        name: "",
        // Positron's `User` folder.
        roots: &[
            Root::macos("~/Library/Application Support/Positron/User"),
            Root::linux("${XDG_CONFIG_HOME:-~/.config}/Positron/User"),
            Root::windows("${APPDATA:-~/AppData/Roaming}/Positron/User"),
        ],
        layout: Layout::Custom {
            shape: "{,profiles/*/}workspaceStorage/*/chatSessions/*.{jsonl,json}, {,profiles/*/}globalStorage/emptyWindowChatSessions/*",
            walk: Some(walk_user_folder),
        },
    }]),
    needs: &[],
    format_summary: "Positron keeps its assistant's chats in VS Code's chat-session store inside Positron's `User` \
        folder: `workspaceStorage/<hash>/chatSessions/<id>.jsonl` is a mutation log (`kind` 0 replaces the state, 1 sets a \
        key path, 2 pushes onto an array, 3 deletes) replayed into the session state, `<id>.json` the state itself on \
        older builds. Each of the state's `requests[]` holds the prompt (`message`) and the answer parts (`response[]`), \
        with tool invocations and edits read as for Copilot Chat. The project comes from the storage folder's \
        `workspace.json`.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Unsupported("chats reopen only inside the IDE"),
        handoff: Handoff::Paste("an IDE chat with no start-with-prompt command"),
    },
};

/// Every chat source of one `User` folder (or of any folder holding chat files).
fn walk_user_folder(root: &std::path::Path, _env: &StoreEnv, found: &mut Discovery) {
    found.sources.extend(vscode_chat::discover_sources(&DIALECT, root));
}

impl HarnessFormat for PositronFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        vscode_chat::parse(&DIALECT, src, opts, out)
    }
}

//! VS Code Copilot Chat (`copilot-chat`): the chat sessions VS Code itself keeps for
//! Copilot Chat, plus the Copilot Chat extension's own event transcripts, in the `User`
//! folder of VS Code, VS Code Insiders and VSCodium (macOS `~/Library/Application
//! Support/<host>/User`, Windows `%APPDATA%\<host>\User`, else
//! `${XDG_CONFIG_HOME:-~/.config}/<host>/User`) and in every `User/profiles/<id>/`:
//!
//! * `workspaceStorage/<hash>/chatSessions/<id>.jsonl` — the chat-session mutation log
//!   (the flat `<id>.json` of builds before 1.109, read only when no `.jsonl` replaced it);
//! * `globalStorage/emptyWindowChatSessions/<id>.{json,jsonl}` — chats without a workspace;
//! * `workspaceStorage/<hash>/GitHub.copilot-chat/transcripts/<id>.jsonl` — the extension's
//!   `{type, timestamp, data}` event log (newer extensions write only this).
//!
//! Read through the VS Code chat family (`deja_core::family::vscode_chat`, whose module doc
//! has the record → role tables for both containers): this adapter is its dialect —
//! the three products, transcripts on, and Copilot's tool ids (`run_in_terminal`;
//! `copilot_readFile`/`read_file`; `copilot_replaceString`, `replace_string_in_file`,
//! `apply_patch`… as edits; `copilot_createFile`/`create_file` as writes). Copilot injects
//! no text of its own into the stored messages (`inputState`, which carries the account
//! label, is never read).
//!
//! `DEJA_COPILOT_CHAT_ROOT` names one sessions root — a `User` folder (or any folder holding
//! chat files, which is walked) — and `DEJA_COPILOT_CHAT_ROOTS` a path list of them; either
//! replaces the products' folders. Every source is a whole
//! document or a log replayed from its start (the mutation log is compacted by rewriting,
//! a transcript takes its id from its first line), so none is marked append-only. Not
//! read: `globalStorage/github.copilot-chat/session-store.db` (every id in it also exists
//! as a transcript).

mod wiring;

use deja_core::family::vscode_chat::{self, VscodeChatDialect, COPILOT_TOOLS};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, SessionSink,
    SourceRef, StoreEnv,
};

const ID: &str = "copilot-chat";

/// The VS Code Copilot Chat adapter.
pub struct CopilotChatFormat;

deja_core::inventory::submit!(deja_core::Registration(&CopilotChatFormat));

/// Copilot Chat in the VS Code chat family.
pub static DIALECT: VscodeChatDialect =
    VscodeChatDialect { harness: ID, tools: COPILOT_TOOLS, injected: &InjectedText::NONE, transcripts: true };

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "VS Code Copilot Chat",
    container: "JSONL mutation log (`kind` 0–3) or JSON state per chat; plus `type`-event JSONL transcripts",
    store: StoreSpec::new(&[Store {
        name: "",
        // Each product's `User` folder.
        roots: &[
            Root::macos("~/Library/Application Support/{Code,Code - Insiders,VSCodium}/User"),
            Root::linux("${XDG_CONFIG_HOME:-~/.config}/{Code,Code - Insiders,VSCodium}/User"),
            Root::windows("${APPDATA:-~/AppData/Roaming}/{Code,Code - Insiders,VSCodium}/User"),
        ],
        layout: Layout::Custom {
            shape: "{,profiles/*/}workspaceStorage/*/{chatSessions/*.{jsonl,json},GitHub.copilot-chat/transcripts/*.jsonl}, \
                {,profiles/*/}globalStorage/emptyWindowChatSessions/*",
            walk: Some(walk_user_folder),
        },
    }]),
    needs: &[],
    format_summary: "VS Code keeps each Copilot chat in the `User` folder of VS Code, VS Code Insiders or VSCodium (and of \
        every profile): `workspaceStorage/<hash>/chatSessions/<id>.jsonl` is a mutation log (`kind` 0 replaces the state, \
        1 sets a key path, 2 pushes onto an array, 3 deletes) replayed into the session state, whose `requests[]` hold the \
        prompt (`message`), the answer parts (`response[]`: markdown, inline references, tool invocations with terminal \
        command lines, text edit groups) and tool-call rounds with the replaced spans; older builds wrote the state as \
        `<id>.json`, chats without a workspace sit in `globalStorage/emptyWindowChatSessions`. The Copilot Chat extension \
        also writes `GitHub.copilot-chat/transcripts/<id>.jsonl`, `{type, timestamp, data}` events (`user.message`, \
        `assistant.message` with tool requests, `tool.execution_start`/`complete`). The project comes from the storage \
        folder's `workspace.json`. No exit codes exist in either store.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned("`<User>/mcp.json`, top-level `servers.deja = {type: \"stdio\", command: <exe>, args: [\"mcp\"]}`"),
        auto_recall: Capability::Planned(
            "`~/.copilot/hooks/deja.json` (`chat.useHooks`, Copilot Chat 0.68): SessionStart, UserPromptSubmit, PreToolUse, \
             PostToolUse (failed `run_in_terminal`), PreCompact, answered in nested `hookSpecificOutput`",
        ),
        skill: Capability::Planned("`<User>/prompts/deja.instructions.md` with `applyTo: \"**\"` (custom instructions in every chat)"),
        command: Capability::Planned("`<User>/prompts/deja.prompt.md` → `/deja`"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Unsupported(
            "no resume by id: Chat: Show Chats… lists only the open workspace's chats, so deja names the folder to open (`code <dir>`)",
        ),
        handoff: Handoff::Exec(&["code", "chat", "-m", "agent", "{prompt}"]),
    },
};

/// Every chat source of one `User` folder (or of any folder holding chat files).
fn walk_user_folder(root: &std::path::Path, _env: &StoreEnv, found: &mut Discovery) {
    found.sources.extend(vscode_chat::discover_sources(&DIALECT, root));
}

impl HarnessFormat for CopilotChatFormat {
    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::CopilotChatWiring)
    }

    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        vscode_chat::parse(&DIALECT, src, opts, out)
    }
}

//! Windsurf (`windsurf`), **partly readable**: only the legacy chat panel's state, kept
//! in the VS Code-style workspace databases `<User>/workspaceStorage/<hash>/state.vscdb`
//! (`ItemTable(key, value)`, WAL included) of Windsurf and Windsurf - Next. The agent
//! ("Cascade") conversation store is **not readable**: no material decodes it (whether it
//! is encrypted is unknown), so Cascade history is not indexed at all. The "Devin
//! Desktop" rebrand is not described by any material either.
//!
//! The reader is the `state.vscdb` family, `deja_core::family::vscdb` (its module doc has
//! the tab-list → role table): the chat is the JSON value of
//! `workbench.panel.aichat.view.aichat.chatdata` or `aiChat.chatdata`, either a tab list
//! (one session per tab, bubbles to user / assistant, consecutive answers joined, no
//! times: the database's modification time) or a VS Code chat-session object, read
//! exactly as Copilot Chat's session JSON (`deja_core::family::vscode_chat`, with its
//! tool ids). The project is the workspace's `workspace.json` folder. A session found
//! under both keys is emitted once (the first key's). Each database is one source, read
//! whole on change: key-value rows carry no update time or id to resume from.
//!
//! **Variables.** `DEJA_WINDSURF_ROOT` names one `User` folder (its
//! `workspaceStorage/*/state.vscdb` are read; a folder not laid out so is walked for
//! `state.vscdb`) and `DEJA_WINDSURF_ROOTS` a path list of them; either replaces
//! Windsurf's and Windsurf - Next's `User` folders (`XDG_CONFIG_HOME` on Linux, `APPDATA`
//! on Windows).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use deja_core::discover::find_files;
use deja_core::family::json_docs::file_mtime;
use deja_core::family::vscdb::{self, Scopes};
use deja_core::family::vscode_chat::{VscodeChatDialect, COPILOT_TOOLS};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::sqlite::{self};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Session,
    SessionSink, SourceRef, StoreEnv,
};

const ID: &str = "windsurf";
/// The `ItemTable` keys a legacy chat is stored under, first wins.
pub const CHAT_KEYS: &[&str] = &["workbench.panel.aichat.view.aichat.chatdata", "aiChat.chatdata"];

/// Chat-session values read as Copilot Chat's, under Windsurf's id.
static DIALECT: VscodeChatDialect =
    VscodeChatDialect { harness: ID, tools: COPILOT_TOOLS, injected: &InjectedText::NONE, transcripts: false };

/// The Windsurf adapter.
pub struct WindsurfFormat;

deja_core::inventory::submit!(deja_core::Registration(&WindsurfFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Windsurf (legacy chat only; Cascade not readable)",
    container: "SQLite key-value `state.vscdb` per workspace (legacy chat panel only); the Cascade agent store is not readable",
    store: StoreSpec::new(&[Store {
        name: "",
        // Each product's `User` folder.
        roots: &[
            Root::macos("~/Library/Application Support/{Windsurf,Windsurf - Next}/User"),
            Root::linux("${XDG_CONFIG_HOME:-~/.config}/{Windsurf,Windsurf - Next}/User"),
            Root::windows("${APPDATA:-~/AppData/Roaming}/{Windsurf,Windsurf - Next}/User"),
        ],
        layout: Layout::Custom { shape: "workspaceStorage/*/state.vscdb", walk: Some(walk_user_folder) },
    }]),
    needs: &[],
    format_summary: "Only Windsurf's legacy chat panel is readable: its state is one JSON value in the VS Code-style \
        workspace database `<User>/workspaceStorage/<hash>/state.vscdb` (`ItemTable`, key \
        `workbench.panel.aichat.view.aichat.chatdata` or `aiChat.chatdata`), either a tab list (`tabs[]` with \
        `tabId`, `chatTitle` and `bubbles[]` whose `type` 2 / `ai` / `assistant` is the model, anything else the \
        user; no times, so the database's modification time) or a VS Code chat-session object read like Copilot \
        Chat's. The project is the workspace's `workspace.json` folder. Cascade (agent) history is NOT readable: \
        its store is not decoded by any material (possibly encrypted), so Cascade conversations are not indexed.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Unsupported("chats reopen only in the editor's UI"),
        handoff: Handoff::Paste("an editor with no start-with-prompt command"),
    },
};

/// Every workspace's `state.vscdb` of one `User` folder (or any `state.vscdb` a few
/// levels under a root laid out otherwise).
fn walk_user_folder(root: &Path, _env: &StoreEnv, found: &mut Discovery) {
    let dbs = if root.join("workspaceStorage").is_dir() {
        vscdb::state_dbs(root, Scopes { global: false, workspaces: true })
    } else {
        find_files(root, 3, &|name| name == vscdb::STATE_DB)
    };
    found.sources.extend(dbs.iter().map(|db| vscdb::db_source(db)));
}

impl HarnessFormat for WindsurfFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let db = src.path.as_path();
        let (store, mut stats) = sqlite::Db::open(src)?;
        let conn = store.conn();
        if !vscdb::has_table(conn, vscdb::ITEM_TABLE) {
            return Err(FormatError::corrupt(db, "no `ItemTable(key, value)`: not a VS Code state database"));
        }
        let values = vscdb::values_for_keys(conn, vscdb::ITEM_TABLE, CHAT_KEYS).map_err(|e| store.err(e))?;
        let storage = db.parent().unwrap_or(Path::new(""));
        let hash = storage.file_name().and_then(|n| n.to_str()).unwrap_or("windsurf").to_string();
        let project = vscdb::workspace_folder(storage);
        let time = newest_mtime(db);
        let mut sessions: Vec<Session> = Vec::new();
        let origin = vscdb::ValueOrigin { src, fallback_id: &hash, project: project.as_deref() };
        for (key, value) in values {
            stats.records += 1;
            let value = match value {
                Ok(Some(v)) => v,
                Ok(None) => continue,
                Err(e) => {
                    stats.skip(|| format!("{}: {key}: {e}", db.display()));
                    continue;
                }
            };
            if value.get("tabs").is_some() {
                vscdb::read_tab_chats(ID, origin, &value, time, &mut sessions);
            } else if value.get("requests").is_some() || value.get("sessionId").is_some() {
                vscdb::read_chat_session(&DIALECT, origin, &value, opts, &mut stats, &mut sessions);
            } else {
                stats.skip(|| format!("{}: {key}: neither a tab list nor a chat session", db.display()));
            }
        }
        let mut seen = HashSet::new();
        for s in sessions {
            if seen.insert(s.id.clone()) {
                out.session(s);
            }
        }
        Ok(stats)
    }
}

/// The later modification time of the database and its WAL: a tab list has no times.
fn newest_mtime(db: &Path) -> Option<deja_core::Timestamp> {
    let wal: PathBuf = sqlite::wal_path(db);
    file_mtime(db).max(file_mtime(&wal))
}

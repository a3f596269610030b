//! Roo Code (`roo`): a Cline fork (VS Code extension `rooveterinaryinc.roo-cline` plus a
//! CLI that runs the extension against a VS Code shim) whose task store is Cline's legacy
//! shape: `<root>/tasks/<taskId>/api_conversation_history.json` (a JSON array of Anthropic
//! messages, rewritten whole) beside `history_item.json` (`ts`, `task`, `workspace`,
//! `parentTaskId`). Read through the Cline task family (`deja_core::family::cline_tasks`,
//! whose module doc has the record → role table).
//!
//! Roots, each used only if it exists:
//!
//! * every editor host's global storage (`Code`, `Code - Insiders`, `VSCodium`, `Cursor`,
//!   `Windsurf`: macOS `~/Library/Application Support`, Windows `%APPDATA%`, else
//!   `${XDG_CONFIG_HOME:-~/.config}`) `…/<host>/User/globalStorage/rooveterinaryinc.roo-cline`,
//!   unless that host's `User/settings.json` (JSONC) sets `roo-cline.customStoragePath`:
//!   then that directory (a leading `~` expanded) and not the global storage;
//! * the CLI's mock storage `~/.vscode-mock/global-storage` (`DEJA_ROO_CLI_ROOT` moves it).
//!
//! `DEJA_ROO_ROOT` and the path list `DEJA_ROO_ROOTS` replace the editor roots, each a
//! root holding `tasks/` or the `tasks` directory itself. A task id found under two roots is read once (the most
//! recently written copy).
//!
//! The dialect: Roo's tool vocabulary (`execute_command`, `read_file`, `apply_diff`,
//! `insert_content`, `search_and_replace`, `write_to_file`) is declared but unused, since
//! the page decodes no tool blocks (`legacy_tools: false`: text turns only); ids are
//! `roo-task-<taskId>`; a task without a `workspace` gets the project `roo`. The family
//! also reads Roo's condense messages (`isSummary: true`) as `Summary` turns, a message's
//! own `ts` where newer tasks write one, and `parentTaskId` as the parent session. The
//! injected text is the family's [`TASK_INJECTED`] (`<environment_details>` removed,
//! `<feedback>` tags dropped).

use std::path::{Path, PathBuf};

use deja_core::family::cline_tasks::{self, legacy_sources, newest_generation_per_task, task_dir_sources, ClineDialect, TASK_INJECTED};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, ParseOptions, ParseStats, SessionSink, SourceRef,
    StoreEnv, ToolMap,
};

mod wiring;

const ID: &str = "roo";
/// The VS Code extension's id: its global-storage folder name.
pub const EXTENSION_ID: &str = "rooveterinaryinc.roo-cline";
/// The user setting that moves the extension's storage.
pub const CUSTOM_STORAGE_SETTING: &str = "roo-cline.customStoragePath";

/// The Roo Code adapter.
pub struct RooFormat;

deja_core::inventory::submit!(deja_core::Registration(&RooFormat));

/// Roo Code in the Cline task family.
pub static DIALECT: ClineDialect = ClineDialect {
    harness: ID,
    tools: ToolMap {
        shell: &["execute_command"],
        read: &["read_file"],
        edit: &["apply_diff", "insert_content", "search_and_replace"],
        write: &["write_to_file"],
    },
    injected: &TASK_INJECTED,
    legacy_id_prefix: "roo-task-",
    legacy_tools: false,
    default_project: Some("roo"),
};

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Roo Code",
    container: "whole-file JSON per task (Cline's legacy shape) + history_item.json",
    store: StoreSpec::new(&[
        // The extension's folder under every editor host's globalStorage (or the host's
        // `roo-cline.customStoragePath`).
        Store {
            name: "",
            roots: &[
                Root::linux("${XDG_CONFIG_HOME:-~/.config}/{Code,Code - Insiders,VSCodium,Cursor,Windsurf}/User/globalStorage/rooveterinaryinc.roo-cline"),
                Root::macos("~/Library/Application Support/{Code,Code - Insiders,VSCodium,Cursor,Windsurf}/User/globalStorage/rooveterinaryinc.roo-cline"),
                Root::windows("${APPDATA:-~/AppData/Roaming}/{Code,Code - Insiders,VSCodium,Cursor,Windsurf}/User/globalStorage/rooveterinaryinc.roo-cline"),
            ],
            layout: Layout::Custom { shape: "tasks/<taskId>/api_conversation_history.json", walk: Some(walk_extension) },
        },
        // The CLI's mock VS Code storage.
        Store {
            name: "cli",
            roots: &[Root::any("~/.vscode-mock/global-storage")],
            layout: Layout::Custom { shape: "tasks/<taskId>/api_conversation_history.json", walk: Some(walk_extension) },
        },
    ]),
    needs: &[],
    format_summary: "Roo Code keeps one folder per task, `tasks/<taskId>/`, in the extension's global storage of each \
        editor host (or the folder the `roo-cline.customStoragePath` setting names, or the CLI's \
        `~/.vscode-mock/global-storage`). `api_conversation_history.json` is a JSON array of Anthropic-shaped \
        `{role, content}` messages rewritten whole; `history_item.json` beside it holds the task text (title), \
        `workspace` (project), `ts` (base time: message i is base + i seconds unless it carries its own `ts`) and \
        `parentTaskId` for sub-tasks. Text blocks are read; tool blocks, images and other roles are skipped; condense \
        messages (`isSummary`) are summaries. Sessions are named `roo-task-<taskId>`.",
    injected: &TASK_INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "`<root>/settings/mcp_settings.json` in every root whose host exists: `mcpServers.deja = {command: <exe>, args: \
             [\"mcp\"]}`",
        ),
        auto_recall: Capability::Blocked(
            "Roo ships no lifecycle hooks (a hooks system is in open upstream PRs); `~/.roo/rules/` is read once per task",
        ),
        skill: Capability::Planned("the shared `~/.agents/skills/deja-history/SKILL.md`"),
        command: Capability::Planned("`~/.roo/commands/deja.md` (markdown, `$ARGUMENTS`)"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::Unsupported("no CLI reopens a task by id; only the extension's history UI"), handoff: Handoff::Paste("an editor extension with no start-with-prompt command") },
};

/// One extension root: where the host's `roo-cline.customStoragePath` moves it, its
/// `tasks/`; a root naming the tasks folder itself is read as one.
fn walk_extension(root: &Path, env: &StoreEnv, found: &mut Discovery) {
    let root = storage_dir(root, env);
    if root.join("tasks").is_dir() {
        found.sources.extend(legacy_sources(&root));
    } else {
        found.sources.extend(task_dir_sources(&root, None));
    }
}

/// A host's extension folder (`<User>/globalStorage/rooveterinaryinc.roo-cline`), or
/// the custom storage path the host's user `settings.json` names instead.
pub(crate) fn storage_dir(root: &Path, env: &StoreEnv) -> PathBuf {
    let user = root.parent().filter(|g| g.file_name().is_some_and(|n| n == "globalStorage")).and_then(Path::parent);
    match (root.file_name().is_some_and(|n| n == EXTENSION_ID), user) {
        (true, Some(user)) => custom_storage_path(env, &user.join("settings.json")).unwrap_or_else(|| root.to_path_buf()),
        _ => root.to_path_buf(),
    }
}

/// Every root of both stores, where the host's settings put it.
pub(crate) fn storage_roots(env: &StoreEnv) -> Vec<PathBuf> {
    let roots = INFO.store.stores.iter().flat_map(|s| INFO.store.roots(ID, s, env));
    roots.map(|r| storage_dir(&r, env)).collect()
}

impl HarnessFormat for RooFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::RooWiring)
    }

    /// The spec's stores, then one source per task (its newest generation).
    fn discover(&self, env: &StoreEnv) -> Discovery {
        let mut found = deja_core::store::discover(ID, &INFO.store, env);
        found.sources = newest_generation_per_task(std::mem::take(&mut found.sources));
        Discovery::sort_sources(&mut found.sources);
        found
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        cline_tasks::parse(&DIALECT, src, opts, out)
    }
}

/// `roo-cline.customStoragePath` from a host's user `settings.json` (JSONC), `~` expanded.
/// A missing, unreadable or undecodable file, or an empty value, is no custom path.
fn custom_storage_path(env: &StoreEnv, settings: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(settings).ok()?;
    let doc: serde_json::Value = serde_json::from_str(&strip_jsonc(&text)).ok()?;
    let path = doc.get(CUSTOM_STORAGE_SETTING)?.as_str()?.trim();
    (!path.is_empty()).then(|| env.expand(path))
}

/// JSONC → JSON (VS Code's `settings.json` dialect): `//` and `/* */` comments outside strings removed, trailing commas before
/// `}` or `]` dropped, a leading BOM removed. Strings (with their escapes) pass through.
pub fn strip_jsonc(text: &str) -> String {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push(c);
                while let Some(s) = chars.next() {
                    out.push(s);
                    match s {
                        '\\' => out.extend(chars.next()),
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '/' if chars.peek() == Some(&'/') => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut prev = '\0';
                for n in chars.by_ref() {
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    drop_trailing_commas(&out)
}

/// Removes a `,` whose next non-blank character closes an object or array (outside strings).
fn drop_trailing_commas(json: &str) -> String {
    let chars: Vec<char> = json.chars().collect();
    let mut out = String::with_capacity(json.len());
    let mut in_string = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(&n) = chars.get(i + 1) {
                    out.push(n);
                    i += 1;
                }
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if c == ',' {
            let next = chars[i + 1..].iter().find(|n| !n.is_whitespace());
            if !matches!(next, Some('}') | Some(']')) {
                out.push(c);
            }
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

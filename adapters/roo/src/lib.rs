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
//! `DEJA_ROO_ROOTS` (a path list of roots, each holding `tasks/`) replaces all of them, and
//! `DEJA_ROO_ROOT` names one sessions root — the `tasks` directory the task folders sit in —
//! and replaces everything else. A task id found under two roots is read once (the most
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

use deja_core::family::cline_tasks::{
    self, editor_user_dir, legacy_sources, newest_generation_per_task, path_list, task_dir_sources, ClineDialect, EDITOR_HOSTS,
    TASK_INJECTED,
};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, Os, ParseOptions, ParseStats, SessionSink, SourceRef,
    StoreEnv, StorePath, ToolMap,
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
    stores: &[
        StorePath {
            os: Os::MacOs,
            path: "~/Library/Application Support/<host>/User/globalStorage/rooveterinaryinc.roo-cline/tasks/<taskId>/api_conversation_history.json",
        },
        StorePath {
            os: Os::Windows,
            path: "%APPDATA%\\<host>\\User\\globalStorage\\rooveterinaryinc.roo-cline\\tasks\\<taskId>\\api_conversation_history.json",
        },
        StorePath {
            os: Os::Linux,
            path: "${XDG_CONFIG_HOME:-~/.config}/<host>/User/globalStorage/rooveterinaryinc.roo-cline/tasks/<taskId>/api_conversation_history.json",
        },
        StorePath { os: Os::Any, path: "~/.vscode-mock/global-storage/tasks/<taskId>/api_conversation_history.json (the CLI)" },
        StorePath { os: Os::Any, path: "<roo-cline.customStoragePath>/tasks/<taskId>/api_conversation_history.json" },
    ],
    env_vars: &["XDG_CONFIG_HOME", "APPDATA"],
    deja_vars: &["DEJA_ROO_ROOT", "DEJA_ROO_ROOTS", "DEJA_ROO_CLI_ROOT"],
    store: deja_core::StoreSpec::UNDECLARED,
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
    launch: Launch { resume: Resume::Unsupported("no CLI reopens a task by id; only the extension's history UI"), handoff: Handoff::Paste("an editor extension with no start-with-prompt command") },
};

impl HarnessFormat for RooFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::RooWiring)
    }

    fn discover(&self, env: &StoreEnv) -> Discovery {
        let mut found = Discovery::default();
        let mut sources = Vec::new();
        if let Some(tasks) = env.deja_root(ID) {
            if found.looked_at(&tasks) {
                sources.extend(task_dir_sources(&tasks, None));
            }
        } else {
            for root in roots(env) {
                if found.looked_at(&root) {
                    sources.extend(legacy_sources(&root));
                }
            }
        }
        found.sources = newest_generation_per_task(sources);
        Discovery::sort_sources(&mut found.sources);
        found
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        cline_tasks::parse(&DIALECT, src, opts, out)
    }
}

/// `DEJA_ROO_ROOTS`, else each host's custom storage path or global storage, then the
/// CLI's mock storage.
fn roots(env: &StoreEnv) -> Vec<PathBuf> {
    if let Some(list) = path_list(env, "DEJA_ROO_ROOTS") {
        return list;
    }
    let mut roots: Vec<PathBuf> = EDITOR_HOSTS
        .iter()
        .map(|host| {
            let user = editor_user_dir(env, host);
            custom_storage_path(env, &user.join("settings.json")).unwrap_or_else(|| user.join("globalStorage").join(EXTENSION_ID))
        })
        .collect();
    roots.push(env.path_var("DEJA_ROO_CLI_ROOT").unwrap_or_else(|| env.home().join(".vscode-mock").join("global-storage")));
    roots.dedup();
    roots
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

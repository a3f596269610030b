//! Kilo Code (`kilocode`): a Roo Code fork that vendors opencode, with two stores, both
//! read by this one adapter under the `kilocode` id:
//!
//! 1. **CLI database**: `${XDG_DATA_HOME:-~/.local/share}/kilo/kilo.db` (+ `-wal`, where
//!    most fresh rows sit), opencode 1.18's schema plus Kilo's `kilo_board*` tables (not
//!    read). The VS Code extension starts the bundled CLI as `kilo serve`, so current
//!    extension sessions land here too. Read with the opencode-schema family,
//!    `deja_core::family::opencode` (its module doc has the record → role table), in a
//!    Kilo dialect: opencode's tools plus `background_process` (a shell command only for
//!    `action` `start` / `monitor`; other actions name a process by id), `notebook_read`
//!    (a read of `path`) and `notebook_edit` (an edit of `path`, relative paths put under
//!    the session directory); `kilo run "<prompt>"`'s literal quotes unwrapped; the
//!    placeholder title `New session - <ISO time>` dropped (the index derives one).
//! 2. **Extension tasks** (the Cline/Roo lineage): `<globalStorage>/kilocode.kilo-code/
//!    tasks/<taskId>/api_conversation_history.json` with `history_item.json` beside it,
//!    under each editor host's `User` folder (Code, Code - Insiders, VSCodium, Cursor,
//!    Windsurf). Read with `deja_core::family::cline_tasks` (its module doc has the record
//!    → role table) in the Kilo dialect that module documents: Roo's tool vocabulary plus
//!    `search_and_replace` (`operations[{search, replace}]` → edit spans), `fast_edit_file`
//!    (`target_file`, `code_edit` with `// ... existing code ...` lines dropped),
//!    `write_file`, `delete_file`, `generate_image`; tool blocks decoded in these legacy
//!    tasks; ids are the task folder names, unprefixed (the page names no prefix). A task
//!    found under two hosts is read once (`newest_generation_per_task`).
//!
//! **Variables.** `DEJA_KILOCODE_DB` names the CLI database (a directory: the `kilo.db` in
//! it), `DEJA_KILOCODE_ROOT` the directory holding it; `DEJA_KILOCODE_EXTENSION_ROOT` and
//! the path list `DEJA_KILOCODE_EXTENSION_ROOTS` replace the extension roots, each either
//! an extension folder (`…/kilocode.kilo-code`, holding `tasks/`) or a `globalStorage`
//! folder holding one. `DEJA_KILO_DB` and `DEJA_KILO_ROOTS` are their older names, still
//! honoured. `XDG_DATA_HOME` moves the CLI's data dir;
//! `XDG_CONFIG_HOME` moves the editors' `User` folders on Linux (macOS: `~/Library/
//! Application Support`, Windows: `%APPDATA%`). The page gives `${XDG_DATA_HOME:-…}` with no
//! OS restriction, so unlike opencode both `$XDG_DATA_HOME/kilo/` and `~/.local/share/kilo/`
//! are looked at when it is set.
//!
//! **`DEJA_INCLUDE_SUBAGENTS`.** Read at discovery and carried in each source's key
//! (`family::opencode::WITHOUT_SUBAGENTS_KEY`), so discovery and parsing agree and
//! flipping it re-reads the sources: the database leaves sessions with a `parent_id` out,
//! and a task whose metadata names a parent task is left out too.
//!
//! **Injected text.** The extension's `<environment_details>` snapshot and `<feedback>`
//! wrapper (`cline_tasks::TASK_INJECTED`, also stripped by the family at parse time); the
//! CLI's own injections are `synthetic` parts, which the opencode family skips.
//!
//! **Migrated tasks.** The extension's migration imports tasks into `kilo.db` and leaves
//! the task folders on disk; an imported session keeps the task id in its `slug` (Kilo's
//! `legacy-migration/sessions/lib/session.ts`: `session.slug = id`; opencode's own slugs
//! are words, `silent-otter`). The database's copy is the one Kilo goes on writing and
//! the one `kilo -s` reopens, so discovery leaves out a task folder whose name is a slug
//! in the database: one session, one copy. The slugs are read only when there are task
//! folders, and again only when the database changed (`deja_core::sqlite::memoized`).
//! A task copy indexed before stays in deja's archive, as every session a source stops
//! producing does.
//!
//! The synthetic writer writes CLI sessions (`family::opencode::write_synthetic`, agent
//! `code`) into `~/.local/share/kilo/kilo.db`, appending.

mod wiring;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use deja_core::family::cline_tasks::{self, ClineDialect, LEGACY_TRANSCRIPT, TASK_INJECTED};
use deja_core::family::opencode::{self, OpencodeDialect, WITHOUT_SUBAGENTS_KEY};
use deja_core::launch::{source_file, Handoff, Launch, Resume, ResumeSpec};
use deja_core::model::SessionMeta;
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, ParseOptions, ParseStats, Session, SessionSink,
    SourceRef, StoreEnv, SynthSession, SynthWriter, ToolMap,
};

const ID: &str = "kilocode";
/// The VS Code extension's id: its folder under each host's `globalStorage`.
pub const EXTENSION_ID: &str = "kilocode.kilo-code";

/// The Kilo Code adapter.
pub struct KiloCodeFormat;

deja_core::inventory::submit!(deja_core::Registration(&KiloCodeFormat));

/// The CLI database: opencode's schema with Kilo's own tools.
pub static DB_DIALECT: OpencodeDialect = OpencodeDialect {
    tools: ToolMap {
        shell: &["bash", "background_process"],
        read: &["read", "notebook_read"],
        edit: &["edit", "multiedit", "apply_patch", "patch", "notebook_edit"],
        write: &["write"],
    },
    ..OpencodeDialect::new(ID)
};

/// The extension's task JSON: Roo's vocabulary plus Kilo's tools (the values
/// `deja_core::family::cline_tasks` documents for Kilo).
pub static TASK_DIALECT: ClineDialect = ClineDialect {
    harness: ID,
    tools: ToolMap {
        shell: &["execute_command"],
        read: &["read_file"],
        edit: &["apply_diff", "insert_content", "search_and_replace", "fast_edit_file"],
        write: &["write_to_file", "write_file", "generate_image"],
    },
    injected: &TASK_INJECTED,
    legacy_id_prefix: "",
    legacy_tools: true,
    default_project: None,
};

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Kilo Code",
    container: "CLI: SQLite (WAL) in opencode's schema, one database; VS Code extension: one JSON task transcript per task folder",
    store: StoreSpec::new(&[
        // The CLI's database; the page only presumes XDG_DATA_HOME is followed, so both
        // places are looked at.
        Store {
            name: "",
            roots: &[Root::any("${XDG_DATA_HOME:-~/.local/share}/kilo"), Root::any("~/.local/share/kilo")],
            layout: Layout::Database("kilo.db"),
        },
        // The VS Code extension's task folders, under every editor host's globalStorage.
        Store {
            name: "extension",
            roots: &[
                Root::linux(
                    "${XDG_CONFIG_HOME:-~/.config}/{Code,Code - Insiders,VSCodium,Cursor,Windsurf}/User/globalStorage/kilocode.kilo-code",
                ),
                Root::macos(
                    "~/Library/Application Support/{Code,Code - Insiders,VSCodium,Cursor,Windsurf}/User/globalStorage/kilocode.kilo-code",
                ),
                Root::windows(
                    "${APPDATA:-~/AppData/Roaming}/{Code,Code - Insiders,VSCodium,Cursor,Windsurf}/User/globalStorage/kilocode.kilo-code",
                ),
            ],
            layout: Layout::Custom { shape: "tasks/<taskId>/api_conversation_history.json", walk: None },
        },
    ])
    .deja_vars(&["DEJA_INCLUDE_SUBAGENTS"])
    .aliases(&[("DEJA_KILO_DB", "DEJA_KILOCODE_DB"), ("DEJA_KILO_ROOTS", "DEJA_KILOCODE_EXTENSION_ROOTS")]),
    needs: &[],
    format_summary: "Kilo Code has two stores. The CLI (and the VS Code extension, which runs it as `kilo serve`) \
        keeps every session in `kilo.db`, opencode 1.18's SQLite schema in WAL mode (`session` / `message` / `part` \
        with JSON `data`; most fresh rows in the `-wal`) plus Kilo's `kilo_board` tables; it is read as opencode's, \
        with Kilo's `background_process` (a command for `start` / `monitor` only), `notebook_read` and `notebook_edit` \
        tools, `kilo run \"…\"` quoting unwrapped and `New session - …` placeholder titles dropped. Older extension \
        tasks are Cline/Roo task folders: `api_conversation_history.json` (Anthropic `{role, content}` messages, the \
        first prompt in `<task>…</task>`, `tool_use` / `tool_result` blocks folded by id, exit codes from `Exit code: \
        N`) with `history_item.json` (id, ms timestamp, workspace); Kilo's `search_and_replace`, `fast_edit_file`, \
        `write_file`, `delete_file` and `generate_image` tools are decoded. Condense summaries in those tasks are not \
        marked and read as ordinary turns. A task migrated into the CLI database stays on disk; it is read from the \
        database only (the imported session's `slug` is the task id).",
    injected: &TASK_INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "the extension's `<globalStorage>/kilocode.kilo-code/settings/mcp_settings.json` for every host that has one, \
             and the CLI's `${XDG_CONFIG_HOME:-~/.config}/kilo/kilo.jsonc` (or `kilo.json`) `mcp` block, opencode's shape",
        ),
        auto_recall: Capability::Planned(
            "`~/.config/kilo/plugins/deja.js` in the opencode 1.x plugin shape: digest folded into the system prompt, \
             per-prompt recall, file lines and failed-command fixes after a tool, `hook-precompact` on compaction; the extension's \
             `kilo serve` loads it too; any plugin makes kilo npm-install `@kilocode/plugin` at startup",
        ),
        skill: Capability::Planned("`~/.kilocode/skills/deja-history/SKILL.md`"),
        command: Capability::Planned("`~/.config/kilo/commands/deja.md` → `/deja`"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::PerSession {
            doc: "CLI sessions: `cd <dir> && kilo -s <id>`; extension tasks reopen from Kilo's history view",
            pick: resume_cli_sessions,
        },
        handoff: Handoff::Exec(&["kilo", "run", "{prompt}"]),
    },
};

impl HarnessFormat for KiloCodeFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn discover(&self, env: &StoreEnv) -> Discovery {
        let mut found = opencode::discover_databases(ID, &INFO.store, env);
        let mut tasks = Vec::new();
        for root in INFO.store.roots_of(ID, "extension", env) {
            // A `globalStorage` folder holding the extension's folder means that folder.
            let root = if !root.join("tasks").is_dir() && root.join(EXTENSION_ID).is_dir() { root.join(EXTENSION_ID) } else { root };
            if found.looked_at(&root) {
                tasks.extend(cline_tasks::legacy_sources(&root));
            }
        }
        let mut tasks = cline_tasks::newest_generation_per_task(tasks);
        if !tasks.is_empty() {
            let migrated: Vec<_> = found.sources.iter().filter_map(|db| migrated_tasks(&db.path)).collect();
            tasks.retain(|t| cline_tasks::task_id_of(t).is_none_or(|id| !migrated.iter().any(|m| m.contains(&id))));
        }
        if !env.include_subagents() {
            tasks = tasks.into_iter().map(|s| s.keyed(WITHOUT_SUBAGENTS_KEY)).collect();
        }
        found.sources.extend(tasks);
        Discovery::sort_sources(&mut found.sources);
        found
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        if !is_task(src) {
            return opencode::parse_discovered(&DB_DIALECT, src, opts, out);
        }
        if src.key.as_deref() == Some(WITHOUT_SUBAGENTS_KEY) {
            cline_tasks::parse(&TASK_DIALECT, src, opts, &mut TopLevelOnly(out))
        } else {
            cline_tasks::parse(&TASK_DIALECT, src, opts, out)
        }
    }

    fn synthetic(&self) -> Option<&dyn SynthWriter> {
        Some(self)
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::KiloWiring)
    }
}

impl SynthWriter for KiloCodeFormat {
    fn write(&self, home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
        opencode::write_synthetic(&home.join(".local/share/kilo/kilo.db"), session, "code")
    }
}

/// The task ids the extension's migration imported into the database `db` (the `slug`
/// of each imported session); `None` when the database cannot be read, so every task
/// folder stays (twice is better than never).
fn migrated_tasks(db: &Path) -> Option<Arc<HashSet<String>>> {
    const SLUGS: &str = "SELECT slug FROM session WHERE slug IS NOT NULL AND slug <> ''";
    deja_core::sqlite::memoized(db, SLUGS, |conn| {
        let mut stmt = conn.prepare(SLUGS)?;
        let slugs = stmt.query_map([], |r| Ok(deja_core::sqlite::value_text(r.get_ref(0)?).ok().flatten()))?;
        Ok(slugs.filter_map(|s| s.ok().flatten()).collect())
    })
    .ok()
}

/// An extension task transcript, as opposed to the CLI database.
fn is_task(src: &SourceRef) -> bool {
    src.path.file_name().and_then(|n| n.to_str()) == Some(LEGACY_TRANSCRIPT)
}

/// Passes on the sessions that have no parent (`DEJA_INCLUDE_SUBAGENTS=0` for tasks).
struct TopLevelOnly<'a>(&'a mut dyn SessionSink);

impl SessionSink for TopLevelOnly<'_> {
    fn session(&mut self, session: Session) {
        if session.parent.is_none() {
            self.0.session(session);
        }
    }
}

/// CLI sessions live in `kilo.db`; extension tasks reopen from Kilo's history view.
fn resume_cli_sessions(session: &SessionMeta) -> Result<ResumeSpec, &'static str> {
    if !source_file(session).ends_with(".db") {
        return Err("extension tasks reopen from Kilo's history view");
    }
    Ok(ResumeSpec::in_dir(&["kilo", "-s", "{id}"]))
}

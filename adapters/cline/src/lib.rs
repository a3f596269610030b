//! Cline (`cline`): one harness, two store generations of whole-file JSON task
//! transcripts, read through the Cline task family (`deja_core::family::cline_tasks`,
//! whose module doc has the record → role table):
//!
//! * **modern** (Cline CLI/SDK): `<sessions>/<id>/<id>.messages.json` beside the manifest
//!   `<id>.json`, where `<sessions>` is `$CLINE_SESSION_DATA_DIR`, else `<data dir>/sessions`
//!   with `<data dir>` = `$CLINE_DATA_DIR`, else `$CLINE_DIR/data`, else `~/.cline/data`.
//!   Its variables place it, as the store spec says.
//! * **legacy** (the `saoudrizwan.claude-dev` VS Code extension):
//!   `<root>/tasks/<taskId>/api_conversation_history.json` with titles and working
//!   directories in `<root>/state/taskHistory.json`, one root per editor host's global
//!   storage (`Code`, `Code - Insiders`, `VSCodium`, `Cursor`, `Windsurf`; macOS
//!   `~/Library/Application Support`, Windows `%APPDATA%`, else `${XDG_CONFIG_HOME:-~/.config}`).
//!
//! `DEJA_CLINE_ROOT` and the path list `DEJA_CLINE_ROOTS` replace every root of both
//! kinds: each root is read by what it holds (`tasks/`: an extension's; else the CLI's).
//!
//! A task present in both generations (a task id used as a session id) is read once, from
//! the modern store. Roo Code writes the same legacy file name under its own extension
//! id: roots are matched by extension id, never by file name.
//!
//! The dialect: Cline's modern tool vocabulary (`run_commands` with a list of commands,
//! `read_files`, `editor` with `old_text`/`new_text`, its relative `path` joined onto the
//! manifest's `cwd` and its result a `{query, result, error?, success}` item serialized into
//! the content string, as CLI 3.0.65 writes it); the legacy tasks yield text only
//! (the page decodes no tool blocks there), legacy ids are `cline-task-<taskId>` so they
//! stay apart from modern ids, and a task without a working directory gets the project
//! `cline`. The injected text is the family's [`TASK_INJECTED`] (`<environment_details>`
//! removed, `<feedback>` tags dropped, the reply kept); the `<task>`/`<user_input …>`
//! envelope around the prompt is unwrapped by the family, and the modern transcript's
//! `system_prompt` is never read as speech.
//!
//! Not read: `<data dir>/db/sessions.db` (it indexes the same sessions as the manifests;
//! its sub-agent edges point at sub-agent transcripts the page says to skip), and the
//! legacy `ui_messages.json` (a fingerprint part only).

use std::path::{Path, PathBuf};

use deja_core::family::cline_tasks::{self, legacy_sources, modern_sources, newest_generation_per_task, ClineDialect, TASK_INJECTED};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::model::SessionMeta;
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, ParseOptions, ParseStats, SessionSink, SourceRef,
    StoreEnv, ToolMap,
};

mod wiring;

const ID: &str = "cline";
/// The legacy VS Code extension's id: its global-storage folder name.
pub const EXTENSION_ID: &str = "saoudrizwan.claude-dev";

/// The Cline adapter.
pub struct ClineFormat;

deja_core::inventory::submit!(deja_core::Registration(&ClineFormat));

/// Cline in the Cline task family.
pub static DIALECT: ClineDialect = ClineDialect {
    harness: ID,
    tools: ToolMap { shell: &["run_commands"], read: &["read_files"], edit: &["editor"], write: &[] },
    injected: &TASK_INJECTED,
    legacy_id_prefix: "cline-task-",
    legacy_tools: false,
    default_project: Some("cline"),
};

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Cline",
    container: "whole-file JSON, two generations: CLI/SDK session folders (transcript + manifest) and the VS Code \
        extension's task folders",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[
            // The CLI's sessions directory.
            Root::any("${CLINE_SESSION_DATA_DIR:-${CLINE_DATA_DIR:-${CLINE_DIR:-~/.cline}/data}/sessions}"),
            // The VS Code extension's folder under every editor host's globalStorage.
            Root::linux(
                "${XDG_CONFIG_HOME:-~/.config}/{Code,Code - Insiders,VSCodium,Cursor,Windsurf}/User/globalStorage/saoudrizwan.claude-dev",
            ),
            Root::macos(
                "~/Library/Application Support/{Code,Code - Insiders,VSCodium,Cursor,Windsurf}/User/globalStorage/saoudrizwan.claude-dev",
            ),
            Root::windows(
                "${APPDATA:-~/AppData/Roaming}/{Code,Code - Insiders,VSCodium,Cursor,Windsurf}/User/globalStorage/saoudrizwan.claude-dev",
            ),
        ],
        layout: Layout::Custom {
            shape: "<id>/<id>.messages.json (+ <id>.json), or tasks/<taskId>/api_conversation_history.json under the extension's folder",
            walk: Some(walk_root),
        },
    }])
    // The MCP settings file `deja install` edits.
    .harness_vars(&["CLINE_MCP_SETTINGS_PATH"]),
    needs: &[],
    format_summary: "Cline keeps two generations of task history, both whole JSON documents rewritten on change. The \
        CLI/SDK writes `<sessions>/<id>/<id>.messages.json` (`{version, agent, sessionId, messages[{role, content, ts}], \
        system_prompt}`) beside a manifest `<id>.json` (`cwd`, `prompt`, `metadata.title`, `started_at`/`ended_at`); \
        Anthropic-shaped content blocks carry `run_commands` (a list of commands, results as `{query, result, success}` \
        items), `read_files` and `editor` (`old_text`/`new_text`) calls paired with `tool_result` blocks by id. Non-lead \
        agent transcripts are skipped. The legacy VS Code extension (`saoudrizwan.claude-dev`) writes \
        `tasks/<taskId>/api_conversation_history.json`, a bare message array with no per-message times (base time from \
        `state/taskHistory.json` plus one second per message), read as text only and named `cline-task-<taskId>`. A task \
        in both generations is read from the modern store.",
    injected: &TASK_INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "`${CLINE_MCP_SETTINGS_PATH:-<data dir>/settings/cline_mcp_settings.json}`: `mcpServers.deja = {command: <exe>, \
             args: [\"mcp\"]}`",
        ),
        auto_recall: Capability::Planned(
            "a CLI plugin `${CLINE_DIR:-~/.cline}/plugins/deja/index.js`: a message builder prepends `hook-prompt --plain` \
             recall to the last user message (returning a new array), a rule carries `hook-session-start --plain`; Cline's \
             hooks cannot carry context",
        ),
        skill: Capability::Planned("inside the plugin: `~/.cline/plugins/deja/skills/deja-history/SKILL.md` (with the plugin only)"),
        command: Capability::Planned("`/deja` registered by the plugin (`api.registerCommand`)"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::PerSession {
            doc: "modern sessions: `cline --id <id>`; legacy `cline-task-*` reopen only from the extension's history UI",
            pick: resume_modern,
        },
        handoff: Handoff::Exec(&["cline", "{prompt}"]),
    },
};

/// One root read by what it holds: the extension's folder (its `tasks/`) as legacy
/// tasks, else the CLI's sessions directory.
fn walk_root(root: &Path, _env: &StoreEnv, found: &mut Discovery) {
    if root.join("tasks").is_dir() {
        found.sources.extend(legacy_sources(root));
    } else {
        found.sources.extend(modern_sources(root));
    }
}

impl HarnessFormat for ClineFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::ClineWiring)
    }

    /// The spec's stores, then one source per task: a task the CLI migrated from the
    /// extension is read in its newest generation only.
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

/// `${CLINE_DATA_DIR:-${CLINE_DIR:-~/.cline}/data}`, as the store spec places it.
fn data_dir(env: &StoreEnv) -> PathBuf {
    INFO.store.dir_of(env, "CLINE_DATA_DIR")
}

/// Legacy extension tasks (`cline-task-*`) reopen only from the extension's history UI.
fn resume_modern(session: &SessionMeta) -> Result<ResumeSpec, &'static str> {
    if session.id.starts_with("cline-task-") {
        return Err("legacy extension tasks reopen only from the extension's history UI");
    }
    Ok(ResumeSpec::anywhere(&["cline", "--id", "{id}"]))
}

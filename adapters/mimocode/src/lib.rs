//! MiMo Code (`mimocode`): Xiaomi's fork of opencode, which keeps every session in one
//! SQLite database in opencode's schema, `~/.local/share/mimocode/mimocode.db` (+ `-wal`).
//!
//! Read with the opencode-schema family, `deja_core::family::opencode` (its module doc
//! has the record → role table), in opencode's own dialect under the `mimocode` id: the
//! page says the tables, JSON columns, part types and tool input keys are opencode's, so
//! nothing differs but the place and the namespace (sessions are `mimocode:<id>`, the
//! same id scheme as opencode's kept apart by the harness id). This crate is metadata,
//! discovery and fixtures.
//!
//! **Variables.** `DEJA_MIMOCODE_DB` names the database file (a directory: the
//! `mimocode.db` in it); else `DEJA_MIMOCODE_ROOT` names the data directory holding
//! `mimocode.db`. The page only presumes that `XDG_DATA_HOME` moves the data dir as it
//! does opencode's, so with the variable set both `$XDG_DATA_HOME/mimocode/` and
//! `~/.local/share/mimocode/` are looked at (a wrong guess costs a `stat`, a missed store
//! costs every session).
//!
//! **Not read: the legacy JSON storage** (`storage/session_diff/…`, `storage/message/
//! <session>/<msg>.json`, `storage/part/<msg>/<part>.json`). The page gives no record
//! shapes for it, and `session_diff` is in opencode's lineage a per-session list of file
//! diffs (Kilo's store holds `[]` there), not the session records the page calls it; see
//! the drift entry in this folder's `harness.toml`.
//!
//! `DEJA_INCLUDE_SUBAGENTS`, injected text and the synthetic writer are as in the
//! opencode adapter: the switch travels in the discovered source's key
//! (`family::opencode::parse_discovered`), the harness's injections are `synthetic`
//! parts the family skips, and the writer appends sessions to `mimocode.db` in
//! opencode 1.18's tables.

use deja_core::family::opencode::{OpencodeAdapter, OpencodeDialect};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{Capabilities, Capability, HarnessInfo, InjectedText};

const ID: &str = "mimocode";

/// opencode's dialect under MiMo Code's id.
pub const DIALECT: OpencodeDialect = OpencodeDialect::new(ID);

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "MiMo Code",
    container: "SQLite (WAL), opencode's schema: one database for every session (legacy JSON storage not read)",
    // `~/.local/share/mimocode/` is looked at even with XDG_DATA_HOME set (unconfirmed).
    store: StoreSpec::new(&[Store {
        name: "",
        // The page only presumes XDG_DATA_HOME is followed: both places are looked at.
        roots: &[Root::any("${XDG_DATA_HOME:-~/.local/share}/mimocode"), Root::any("~/.local/share/mimocode")],
        layout: Layout::Database("mimocode.db"),
    }])
    .deja_vars(&["DEJA_INCLUDE_SUBAGENTS"]),
    needs: &[],
    format_summary: "MiMo Code, a fork of opencode, writes opencode's SQLite store under its own name: \
        `~/.local/share/mimocode/mimocode.db` with its `-wal`, `session` / `message` / `part` tables whose JSON `data` \
        columns hold the role, times and parts (`text`, `reasoning`, `tool` with `state.input`, `state.output` and \
        `state.metadata.exit`). It is read exactly as opencode's, with sessions kept in their own `mimocode` namespace; \
        assistant token and cost fields are skipped. The legacy JSON storage (`storage/session_diff/`, \
        `storage/message/`, `storage/part/`) is not read: its record shapes are not documented.",
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

/// The mimocode adapter: the opencode family's whole adapter with this harness's metadata,
/// dialect and store location.
pub static FORMAT: OpencodeAdapter = OpencodeAdapter { info: &INFO, dialect: DIALECT, synthetic_agent: "build", wiring: None };

deja_core::inventory::submit!(deja_core::Registration(&FORMAT));

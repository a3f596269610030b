//! ICodeMate (`icodemate`): another opencode derivative, which keeps every session in one
//! SQLite database in opencode's schema, `~/.local/share/icodemate/icodemate.db` (+ `-wal`).
//!
//! Read with the opencode-schema family, `deja_core::family::opencode` (its module doc
//! has the record → role table), in opencode's own dialect under the `icodemate` id: the
//! page reads it "as opencode", inferred from observed stores (there is no public
//! source, and product-specific divergence is unknown). Nothing differs but the place
//! and the namespace. This crate is metadata, discovery and fixtures.
//!
//! **Variables.** `DEJA_ICODEMATE_DB` names the database file (a directory: the
//! `icodemate.db` in it); else `DEJA_ICODEMATE_ROOT` names the data directory holding
//! `icodemate.db`. The page names no harness variable; as an opencode derivative it
//! presumably follows `XDG_DATA_HOME`, so with the variable set both
//! `$XDG_DATA_HOME/icodemate/` and `~/.local/share/icodemate/` are looked at.
//!
//! **Not read: the legacy JSON storage** (`storage/session_diff/`, `storage/message/`,
//! `storage/part/`): the page gives no record shapes for it (see the drift entry in
//! this folder's `harness.toml`).
//!
//! `DEJA_INCLUDE_SUBAGENTS`, injected text and the synthetic writer are as in the
//! opencode adapter: the switch travels in the discovered source's key
//! (`family::opencode::parse_discovered`), the harness's injections are `synthetic`
//! parts the family skips, and the writer appends sessions to `icodemate.db` in
//! opencode 1.18's tables.

use deja_core::family::opencode::{OpencodeAdapter, OpencodeDialect};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{Capabilities, Capability, HarnessInfo, InjectedText};

const ID: &str = "icodemate";

/// opencode's dialect under ICodeMate's id.
pub const DIALECT: OpencodeDialect = OpencodeDialect::new(ID);

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "ICodeMate",
    container: "SQLite (WAL), opencode's schema: one database for every session (legacy JSON storage not read)",
    // `~/.local/share/icodemate/` is looked at even with XDG_DATA_HOME set (unconfirmed).
    store: StoreSpec::new(&[Store {
        name: "",
        // The page only presumes XDG_DATA_HOME is followed: both places are looked at.
        roots: &[Root::any("${XDG_DATA_HOME:-~/.local/share}/icodemate"), Root::any("~/.local/share/icodemate")],
        layout: Layout::Database("icodemate.db"),
    }])
    .deja_vars(&["DEJA_INCLUDE_SUBAGENTS"]),
    needs: &[],
    format_summary: "ICodeMate, an opencode derivative, keeps opencode's SQLite store in its own directory: \
        `~/.local/share/icodemate/icodemate.db` with its `-wal`, `session` / `message` / `part` tables whose JSON \
        `data` columns hold the role, times and parts (`text`, `reasoning`, `tool` with `state.input`, `state.output` \
        and `state.metadata.exit`). It is read exactly as opencode's, in its own `icodemate` namespace; compatibility \
        is inferred from observed stores (no producer source). The legacy JSON storage (`storage/session_diff/`, \
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

/// The icodemate adapter: the opencode family's whole adapter with this harness's metadata,
/// dialect and store location.
pub static FORMAT: OpencodeAdapter = OpencodeAdapter { info: &INFO, dialect: DIALECT, synthetic_agent: "build", wiring: None };

deja_core::inventory::submit!(deja_core::Registration(&FORMAT));

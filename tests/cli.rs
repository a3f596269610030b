//! End-to-end tests of the `deja` binary, in one test binary: the pipeline over
//! synthetic homes ([`e2e`]), every adapter's fixture store in one home
//! ([`every_harness`]), the recall commands ([`recall`]) and the MCP server
//! ([`mcp`], and under fuzzing-style input, [`fuzz_mcp`]), ordinary mistakes and hostile
//! settings ([`misuse`]), resume commands and `deja handoff` ([`handoff`]), one order
//! of answers however the history was indexed ([`ranking`]), every kind of secret kept
//! out of all of them ([`secrets`]), team memory on a real PostgreSQL ([`team`]), `deja install` and the hooks ([`wiring`]), the search screen driven in a real terminal ([`ui`]), the
//! files deja keeps fresh after install ([`live_files`]), the archive under rebuilds,
//! upgrades, kills, `forget`, exclusions and export/import ([`archive`]), `deja
//! index --watch` ([`watch`]), and history the harnesses delete: their retention, what deja kept
//! and `deja restore` ([`kept`]).

mod archive;
mod e2e;
mod every_harness;
mod fuzz_mcp;
mod handoff;
mod kept;
mod live_files;
mod mcp;
mod misuse;
mod ranking;
mod recall;
mod secrets;
mod team;
mod ui;
mod watch;
mod wiring;

// Every adapter crate, linked so the registry in this test binary is the binary's.
use deja_adapters as _;

mod support {
    pub mod recall_home;
}

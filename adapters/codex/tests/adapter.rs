//! Every test of deja-adapter-codex, in one test binary (CI links one per adapter crate):
//! the conformance kit, then this adapter's own cases.

deja_core::conformance!(
    deja_adapter_codex::CodexFormat,
    wires "CODEX_HOME" => ".codex"
);

mod common;
mod discovery;
mod properties;
mod restore;
mod resume;
mod roundtrip;
mod snapshots;
mod titles;

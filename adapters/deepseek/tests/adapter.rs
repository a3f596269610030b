//! Every test of deja-adapter-deepseek, in one test binary (CI links one per adapter crate):
//! the conformance kit, then this adapter's own cases.

deja_core::conformance!(
    deja_adapter_deepseek::DeepSeek,
    wires "DSH_HOME" => ".dsh"
);

mod common;
mod discovery;
mod properties;
mod roundtrip;
mod snapshots;
mod wiring;

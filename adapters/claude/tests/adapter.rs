//! Every test of deja-adapter-claude, in one test binary (CI links one per adapter crate):
//! the conformance kit, then this adapter's own cases.

deja_core::conformance!(
    deja_adapter_claude::FORMAT,
    wires "CLAUDE_CONFIG_DIR" => ".claude"
);

mod properties;
mod snapshots;
mod store;

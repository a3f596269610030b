//! Every test of deja-adapter-deja, in one test binary (CI links one per adapter crate):
//! the conformance kit, then this adapter's own cases.

deja_core::conformance!(
    deja_adapter_deja::DejaNotes,
    relocate "DEJA_DATA_DIR" => ".local/share/deja"
);

mod properties;
mod roundtrip;
mod snapshots;

//! Helpers shared by the test crates.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use deja_adapter_codex::CodexFormat;
use deja_core::{HarnessFormat, ParseOptions, ParseStats, Session, SourceRef};

pub const LEGACY: &str = "sessions/2025/06/14/rollout-2025-06-14T09-12-30-5f0c2b1e-8d3a-4c71-9b2e-1a2b3c4d5e6f.jsonl";
pub const OLDER_SHAPE: &str = "sessions/2025/08/20/rollout-2025-08-20T11-30-00-3b2a1c0d-9e8f-4a7b-8c6d-5e4f3a2b1c0d.jsonl";
pub const OLDER_TOOLS: &str = "sessions/2025/09/02/rollout-2025-09-02T08-00-00-9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a.jsonl";
pub const MID: &str = "sessions/2025/11/03/rollout-2025-11-03T14-05-11-019a4b2c-7d1e-7f00-a1b2-c3d4e5f60718.jsonl";
pub const ODD: &str = "sessions/2026/01/05/rollout-2026-01-05T08-00-00-6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d.jsonl";
pub const BOM: &str = "sessions/2026/02/10/rollout-2026-02-10T12-00-00-0c1d2e3f-4a5b-4c6d-9e7f-8a9b0c1d2e3f.jsonl";
pub const FORK: &str = "sessions/2026/03/03/rollout-2026-03-03T09-00-00-019b0000-f0f0-7000-8000-00000000f0f1.jsonl";
pub const EXEC_ONLY: &str = "sessions/2026/11/29/rollout-2026-11-29T07-45-00-019ad000-1234-7abc-8def-0123456789ab.jsonl";
pub const CURRENT: &str = "sessions/2026/11/30/rollout-2026-11-30T10-00-00-019ad3f1-2e4b-7c5d-9e6f-a7b8c9d0e1f2.jsonl";
pub const INTERRUPTED: &str = "sessions/2026/12/01/rollout-2026-12-01T16-20-00-019ad8a0-8a7b-7c6d-8e5f-4a3b2c1d0e9f.jsonl";
/// Codex 0.171.0 run against a mock model: apply_patch through `exec_command`, reasoning, and a
/// resumed turn with a failing command.
pub const RELEASE_0_171: &str = "sessions/2026/12/01/rollout-2026-12-01T12-39-00-019ad9c0-5b1a-7e2f-9c3d-4e5f6a7b8c9d.jsonl";
pub const ARCHIVED: &str = "archived_sessions/rollout-2025-05-01T10-00-00-0196a000-1111-7222-8333-444455556666.jsonl";
pub const HISTORY: &str = "history.jsonl";

/// Every rollout fixture (history excluded).
pub const ROLLOUTS: &[&str] =
    &[LEGACY, OLDER_SHAPE, OLDER_TOOLS, MID, ODD, BOM, FORK, EXEC_ONLY, CURRENT, INTERRUPTED, RELEASE_0_171, ARCHIVED];

/// The fake home holding `.codex/`.
pub fn fixture_home() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/home")
}

pub fn fixture(rel: &str) -> PathBuf {
    fixture_home().join(".codex").join(rel)
}

pub fn parse_src(src: &SourceRef, opts: &ParseOptions) -> (Vec<Session>, ParseStats) {
    let mut out: Vec<Session> = Vec::new();
    let stats = CodexFormat.parse(src, opts, &mut out).expect("fixture parses");
    (out, stats)
}

pub fn parse_path(path: &Path, opts: &ParseOptions) -> (Vec<Session>, ParseStats) {
    parse_src(&SourceRef::file(path), opts)
}

pub fn parse_fixture(rel: &str) -> (Vec<Session>, ParseStats) {
    parse_path(&fixture(rel), &ParseOptions::default())
}

/// Parses arbitrary bytes as a rollout (or as history.jsonl when `history`), never
/// expecting success; only panics matter.
pub fn parse_bytes(bytes: &[u8], history: bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = if history {
        dir.path().join("history.jsonl")
    } else {
        let d = dir.path().join("sessions/2026/01/01");
        std::fs::create_dir_all(&d).expect("mkdir");
        d.join("rollout-2026-01-01T00-00-00-00000000-0000-0000-0000-000000000000.jsonl")
    };
    std::fs::write(&path, bytes).expect("write");
    let mut out: Vec<Session> = Vec::new();
    for include_reasoning in [false, true] {
        let _ = CodexFormat.parse(&SourceRef::file(&path), &ParseOptions { include_reasoning }, &mut out);
    }
}

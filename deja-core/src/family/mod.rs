//! Format-family readers: one reader per on-disk format that several harnesses share,
//! parameterised by a small per-harness *dialect* (store roots, tool-name map,
//! injected-text rules, quirks) instead of copied into each adapter. An adapter of a
//! known family is then metadata, a dialect and fixtures.
//!
//! A family module names no harness: the dialect carries the adapter id, and the
//! family is named after its format (`claude_jsonl` is "Claude-shaped JSONL", which
//! Claude Code, OpenClaude, Qoder and others write).

pub mod claude_jsonl;
pub mod claude_restore;
pub mod cline_tasks;
pub mod codex_rollout;
pub mod codex_synth;
pub mod dsh_log;
pub mod gemini_chat;
pub mod gemini_synth;
pub mod json_docs;
pub mod kimi_synth;
pub mod kimi_wire;
pub mod opencode;
pub mod pi_jsonl;
pub mod pi_synth;
pub mod vscdb;
pub mod vscode_chat;

/// The schemas a fixture's SQL may name with a line `-- schema: <name>` instead of
/// typing them again (each family's, once; read by the conformance kit).
#[cfg(feature = "testkit")]
pub(crate) const FIXTURE_SCHEMAS: &[(&str, &str)] = &[("opencode", opencode::FIXTURE_SCHEMA)];

//! Property tests: the shared readers and parsers (JSON lines and documents, zstd and
//! SQLite BLOB decoding, timestamps, apply_patch envelopes, dash-encoded paths, the
//! command classifier, error mining), the tokenizer, stripping and redaction never panic
//! on arbitrary input, and redaction never lets a planted secret through.
//!
//! Proptest here (rather than the kit's seeded mutator, `testkit/fuzz.rs`): the inputs
//! are plain byte strings and text, which proptest shrinks to a minimal failing input.
//! Cases: `DEJA_FUZZ_CASES` (256 by default; `cargo xtask fuzz` runs many more).

use std::path::Path;

use crate::index::tokenizer::words;
use crate::model::{Role, Turn};
use crate::read::{decode_zstd_frames, for_each_json_line, parse_json_document};
use crate::redact::redact;
use crate::text::InjectedText;
use crate::ParseStats;
use proptest::prelude::*;

/// `DEJA_FUZZ_CASES`, else 256.
fn cases() -> u32 {
    std::env::var("DEJA_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(cases()) })]

    #[test]
    fn json_documents_and_blobs_survive_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..2048), zstd_head in any::<bool>()) {
        let mut bytes = bytes;
        if zstd_head {
            bytes.splice(0..0, [0x28, 0xB5, 0x2F, 0xFD]);
        }
        let _ = parse_json_document(&bytes, Path::new("x"));
        if let Ok(decoded) = crate::sqlite::decode_blob(&bytes) {
            // A BLOB decodes within its cap (ratio and allowance).
            prop_assert!(decoded.len() as u64 <= crate::read::DecodeLimit::value().for_input(bytes.len() as u64));
        }
    }

    #[test]
    fn text_parsers_survive_any_string(s in "\\PC{0,300}", cwd in proptest::option::of("[a-z/]{0,20}")) {
        let _ = crate::time::Timestamp::parse_str(&s);
        let _ = crate::time::Timestamp::from_json(&serde_json::Value::String(s.clone()));
        let (files, edits) = crate::patch::parse_apply_patch(&s, cwd.as_deref());
        prop_assert!(files.len() <= s.len() + 1 && edits.len() <= s.len() + 1);
        let _ = crate::project::decode_dash_path(&s, Path::new("/nonexistent-deja-root"));
        let _ = crate::project::dash_fallback_name(&s);
        let _ = crate::project::two_segment_name(&s);
        let _ = crate::work::is_meaningful_command(&s);
        let _ = crate::work::command_key(&s);
        let _ = crate::work::program_and_verb(&s);
        let mut turn = Turn::new(Role::ToolCall, s.clone());
        turn.tool = Some(crate::model::ToolUse { name: "bash".into(), command: Some(s.clone()), ..Default::default() });
        let _ = crate::mining::fixes::turn_errors(&turn);
    }

    #[test]
    fn apply_patch_envelopes_survive_mutation(body in "[-+ @*a-z/\\n]{0,300}") {
        let s = format!("*** Begin Patch\n*** Update File: src/a.rs\n{body}\n*** End Patch");
        let _ = crate::patch::parse_apply_patch(&s, Some("/w"));
    }

    #[test]
    fn jsonl_reader_survives_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..2048), base in 0u64..1_000_000) {
        let mut stats = ParseStats::default();
        let mut n = 0u64;
        for_each_json_line(&bytes, base, Path::new("x"), &mut stats, |off, _| {
            assert!(off >= base);
            n += 1;
        });
        prop_assert!(stats.end_offset >= base && stats.end_offset <= base + bytes.len() as u64);
        prop_assert_eq!(n + stats.skipped, stats.records);
    }

    #[test]
    fn zstd_decoder_survives_any_bytes(mut bytes in proptest::collection::vec(any::<u8>(), 0..1024)) {
        bytes.splice(0..0, [0x28, 0xB5, 0x2F, 0xFD]);
        let _ = decode_zstd_frames(&bytes);
    }

    #[test]
    fn text_pipeline_survives_any_string(s in "\\PC{0,400}") {
        let stripped = InjectedText::NONE.strip(&s);
        let redacted = redact(&stripped);
        let ws = words(&redacted);
        for w in ws {
            prop_assert!(w.start <= w.end && w.end <= redacted.len());
            prop_assert!(!w.parts.is_empty());
        }
    }

    #[test]
    fn planted_secrets_never_survive(prefix in "[a-z ]{0,30}", suffix in "[a-z ]{0,30}", key in "[A-Z0-9]{16}", tok in "[A-Za-z0-9]{24,40}") {
        let aws = format!("{prefix} AKIA{key} {suffix}");
        let planted = format!("AKIA{key}");
        prop_assert!(!redact(&aws).contains(&planted));
        let sk = format!("{prefix} sk-{tok} {suffix}");
        prop_assert!(!redact(&sk).contains(&tok));
        let gh = format!("{prefix} ghp_{tok}{tok} {suffix}");
        prop_assert!(!redact(&gh).contains(&tok));
    }

    #[test]
    fn stripping_removes_every_recall_block(before in "[a-z ]{0,40}", inside in "[a-z ]{0,40}", after in "[a-z ]{0,40}") {
        let s = format!("{before}<deja-recall>\nXRECALL {inside}\n</deja-recall>{after}");
        prop_assert!(!InjectedText::NONE.strip(&s).contains("XRECALL"));
    }
}

//! Property tests: the shared readers, tokenizer, stripping and redaction never panic
//! on arbitrary input, and redaction never lets a planted secret through.

use std::path::Path;

use crate::index::tokenizer::words;
use crate::read::{decode_zstd_frames, for_each_json_line};
use crate::redact::redact;
use crate::text::InjectedText;
use crate::ParseStats;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

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

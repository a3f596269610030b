//! The notes parser never panics: arbitrary bytes, the fixture with junk appended or
//! cut anywhere, and fixture lines with a field deleted or retyped.

use std::path::{Path, PathBuf};

use deja_adapter_deja::DejaNotes;
use deja_core::{HarnessFormat, ParseOptions, SourceRef};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::Value;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/home/.local/share/deja/notes.jsonl")
}

fn parse_bytes(bytes: &[u8]) -> usize {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("notes.jsonl");
    std::fs::write(&path, bytes).expect("write");
    let mut out = Vec::new();
    let _ = DejaNotes.parse(&SourceRef::file(&path), &ParseOptions::default(), &mut out);
    out.len()
}

fn retyped(kind: u8) -> Value {
    match kind {
        0 => Value::Null,
        1 => Value::from(7),
        2 => Value::from(""),
        3 => serde_json::json!([1, "x", null]),
        4 => serde_json::json!({"nested": true}),
        _ => Value::Bool(false),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        parse_bytes(&bytes);
    }

    #[test]
    fn fixture_with_junk_appended_or_cut_never_panics(cut in any::<Index>(), junk in proptest::collection::vec(any::<u8>(), 0..256)) {
        let bytes = std::fs::read(fixture()).expect("fixture");
        let mut appended = bytes.clone();
        appended.extend_from_slice(&junk);
        // Junk can only spoil the torn last line, never the complete notes before it.
        prop_assert!(parse_bytes(&appended) >= 3);
        parse_bytes(&bytes[..cut.index(bytes.len() + 1)]);
    }

    #[test]
    fn a_field_deleted_or_retyped_never_panics(line in any::<Index>(), field in any::<Index>(), kind in 0u8..7) {
        let text = std::fs::read_to_string(fixture()).expect("fixture");
        let lines: Vec<&str> = text.lines().collect();
        let at = line.index(lines.len());
        let mut v: Value = match serde_json::from_str(lines[at]) { Ok(v) => v, Err(_) => return Ok(()) };
        if let Value::Object(m) = &mut v {
            let keys: Vec<String> = m.keys().cloned().collect();
            if !keys.is_empty() {
                let k = field.get(&keys).clone();
                if kind == 6 { m.remove(&k); } else { m.insert(k, retyped(kind)); }
            }
        }
        let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        out[at] = v.to_string();
        parse_bytes(out.join("\n").as_bytes());
    }
}

//! Parsing never panics: arbitrary bytes, fixtures with junk appended or cut short,
//! and fixture records with one field deleted or retyped.

use std::path::{Path, PathBuf};

use deja_adapter_deepseek::DeepSeek;
use deja_core::{HarnessFormat, ParseOptions, SourceRef};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::Value;

/// Parses `bytes` written as a generation file inside a session directory, both with
/// and without reasoning.
fn parse_bytes(bytes: &[u8], name: &str) {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("--src-x--/session-p").join(name);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, bytes).expect("write");
    for include_reasoning in [false, true] {
        let mut out = Vec::new();
        let _ = DeepSeek.parse(&SourceRef::file(&path), &ParseOptions { include_reasoning }, &mut out);
    }
}

fn jsonl_fixtures() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in ["records", "frames"] {
        let mut entries: Vec<PathBuf> =
            std::fs::read_dir(crate::common::fixtures().join(dir)).expect("dir").flatten().map(|e| e.path()).collect();
        entries.sort();
        files.extend(entries);
    }
    files.push(crate::common::store().join(crate::common::API_DIR).join("session.v5.jsonl"));
    files
}

fn binary_fixtures() -> Vec<Vec<u8>> {
    let store = crate::common::store();
    let mut all: Vec<Vec<u8>> = crate::common::ZSTD_FIXTURES.iter().map(|f| std::fs::read(store.join(f.dest)).expect("fixture")).collect();
    all.extend(jsonl_fixtures().iter().map(|p| std::fs::read(p).expect("fixture")));
    all
}

/// Every (fixture, line) whose line is a JSON object.
fn records() -> Vec<(PathBuf, usize, Value)> {
    let mut out = Vec::new();
    for path in jsonl_fixtures() {
        let text = String::from_utf8_lossy(&std::fs::read(&path).expect("read")).into_owned();
        for (i, line) in text.lines().enumerate() {
            if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(line.trim_start_matches('\u{feff}')) {
                out.push((path.clone(), i, v));
            }
        }
    }
    out
}

#[derive(Clone, Debug)]
enum Seg {
    Key(String),
    At(usize),
}

fn paths(v: &Value, prefix: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                prefix.push(Seg::Key(k.clone()));
                out.push(prefix.clone());
                paths(child, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                prefix.push(Seg::At(i));
                out.push(prefix.clone());
                paths(child, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

/// Deletes (kind 0) or retypes the value at `path`.
fn mutate(v: &mut Value, path: &[Seg], kind: u8) {
    let Some((last, parents)) = path.split_last() else { return };
    let mut cur = v;
    for seg in parents {
        cur = match (seg, cur) {
            (Seg::Key(k), Value::Object(m)) => match m.get_mut(k) {
                Some(c) => c,
                None => return,
            },
            (Seg::At(i), Value::Array(a)) => match a.get_mut(*i) {
                Some(c) => c,
                None => return,
            },
            _ => return,
        };
    }
    let replacement = match kind {
        1 => Value::Null,
        2 => Value::from(7),
        3 => Value::from("x"),
        4 => Value::Array(vec![Value::from(1), Value::from("y")]),
        5 => serde_json::json!({"type": "text"}),
        _ => Value::Bool(true),
    };
    match (last, cur) {
        (Seg::Key(k), Value::Object(m)) => {
            if kind == 0 {
                m.remove(k);
            } else {
                m.insert(k.clone(), replacement);
            }
        }
        (Seg::At(i), Value::Array(a)) if *i < a.len() => {
            if kind == 0 {
                a.remove(*i);
            } else {
                a[*i] = replacement;
            }
        }
        _ => {}
    }
}

fn with_line_replaced(path: &Path, line: usize, new: &str) -> Vec<u8> {
    let text = String::from_utf8_lossy(&std::fs::read(path).expect("read")).into_owned();
    let lines: Vec<String> = text.lines().enumerate().map(|(i, l)| if i == line { new.to_string() } else { l.to_string() }).collect();
    (lines.join("\n") + "\n").into_bytes()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        parse_bytes(&bytes, "session.v4.jsonl");
        let framed = zstd::encode_all(&bytes[..], 1).expect("zstd");
        parse_bytes(&framed, "session.v4.jsonl.zstd");
    }

    #[test]
    fn fixtures_with_junk_appended_or_cut_never_panic(
        which in any::<Index>(),
        cut in any::<Index>(),
        junk in proptest::collection::vec(any::<u8>(), 0..256),
    ) {
        let all = binary_fixtures();
        let bytes = which.get(&all);
        let mut appended = bytes.clone();
        appended.extend_from_slice(&junk);
        parse_bytes(&appended, "session.jsonl.zstd");
        let at = cut.index(bytes.len() + 1);
        parse_bytes(&bytes[..at], "session.v4.jsonl.zstd");
    }

    #[test]
    fn records_with_a_field_deleted_or_retyped_never_panic(which in any::<Index>(), field in any::<Index>(), kind in 0u8..7) {
        let all = records();
        let (path, line, value) = which.get(&all);
        let mut all_paths = Vec::new();
        paths(value, &mut Vec::new(), &mut all_paths);
        let mut v = value.clone();
        if !all_paths.is_empty() {
            let chosen: &Vec<Seg> = field.get(&all_paths);
            mutate(&mut v, chosen, kind);
        }
        let bytes = with_line_replaced(path, *line, &v.to_string());
        parse_bytes(&bytes, "session.v4.jsonl");
        let framed = zstd::encode_all(&bytes[..], 1).expect("zstd");
        parse_bytes(&framed, "session.v4.jsonl.zstd");
    }
}

/// Every path of every record, retyped each way: exhaustive over the fixtures, so no
/// field is left to chance. All variants of one record replace it side by side, so the
/// records around it (its call, its header) are still there.
#[test]
fn every_field_of_every_record_retyped_never_panics() {
    for (path, line, value) in records() {
        let mut all_paths = Vec::new();
        paths(&value, &mut Vec::new(), &mut all_paths);
        let mut variants = Vec::new();
        for p in &all_paths {
            for kind in 0u8..7 {
                let mut v = value.clone();
                mutate(&mut v, p, kind);
                variants.push(v.to_string());
            }
        }
        let bytes = with_line_replaced(&path, line, &variants.join("\n"));
        let tmp = tempfile::NamedTempFile::new().expect("tmp");
        std::fs::write(tmp.path(), &bytes).expect("write");
        for include_reasoning in [false, true] {
            let mut out = Vec::new();
            let _ = DeepSeek.parse(&SourceRef::file(tmp.path()), &ParseOptions { include_reasoning }, &mut out);
        }
    }
}

//! The parser never panics: on arbitrary bytes, on valid fixtures with junk appended or
//! cut anywhere, and on fixture records with a field deleted or retyped.

use std::path::{Path, PathBuf};

use deja_adapter_claude::FORMAT;
use deja_core::model::Resume;
use deja_core::{HarnessFormat, ParseOptions, Session, SourceRef};
use proptest::prelude::*;
use serde_json::Value;

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("fixture dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn fixture_bytes() -> Vec<Vec<u8>> {
    fixtures().iter().map(|p| std::fs::read(p).expect("fixture")).collect()
}

/// Parses `bytes` written at a subagent-shaped path (the richest layout), both fully and
/// resumed from `resume_at`, with and without reasoning.
fn parse_bytes(bytes: &[u8], resume_at: u64) {
    let tmp = tempfile::tempdir().expect("tmp");
    let path = tmp.path().join("-src-app/9e6a2f0b/subagents/agent-x.jsonl");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, bytes).expect("write");
    for include_reasoning in [false, true] {
        let opts = ParseOptions { include_reasoning };
        let mut out: Vec<Session> = Vec::new();
        let src = SourceRef::file(&path).append_only();
        let stats = FORMAT.parse(&src, &opts, &mut out).expect("a readable file parses");
        assert!(stats.end_offset <= bytes.len() as u64);
        let resumed =
            SourceRef { resume: Some(Resume { offset: resume_at, next_seq: 3, session_id: "x".into(), ..Default::default() }), ..src };
        let _ = FORMAT.parse(&resumed, &opts, &mut out).expect("a readable file resumes");
    }
}

fn retyped(v: &Value, pick: usize) -> Value {
    match pick % 6 {
        0 => Value::Null,
        1 => Value::from(42),
        2 => Value::from("text"),
        3 => serde_json::json!([1, "two", {"text": 3}]),
        4 => serde_json::json!({"text": 1, "content": [null]}),
        _ => match v {
            Value::String(_) => Value::from(1.5e300),
            _ => Value::from(""),
        },
    }
}

/// Every (object path) in `v`, depth-first.
fn paths(v: &Value, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                let mut p = prefix.clone();
                p.push(k.clone());
                out.push(p.clone());
                paths(child, p, out);
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                let mut p = prefix.clone();
                p.push(i.to_string());
                out.push(p.clone());
                paths(child, p, out);
            }
        }
        _ => {}
    }
}

fn mutate(v: &mut Value, path: &[String], delete: bool, pick: usize) {
    let Some((last, parents)) = path.split_last() else { return };
    let mut cur = v;
    for k in parents {
        cur = match cur {
            Value::Object(m) => match m.get_mut(k) {
                Some(c) => c,
                None => return,
            },
            Value::Array(a) => match k.parse::<usize>().ok().and_then(|i| a.get_mut(i)) {
                Some(c) => c,
                None => return,
            },
            _ => return,
        };
    }
    match cur {
        Value::Object(m) => {
            if delete {
                m.remove(last);
            } else if let Some(old) = m.get(last).cloned() {
                m.insert(last.clone(), retyped(&old, pick));
            }
        }
        Value::Array(a) => {
            if let Some(i) = last.parse::<usize>().ok().filter(|i| *i < a.len()) {
                if delete {
                    a.remove(i);
                } else {
                    let new = retyped(&a[i], pick);
                    a[i] = new;
                }
            }
        }
        _ => {}
    }
}

/// Every record of every fixture.
fn records() -> Vec<Value> {
    fixture_bytes()
        .iter()
        .flat_map(|b| {
            b.split(|c| *c == b'\n')
                .filter_map(|l| serde_json::from_slice::<Value>(l.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(l)).ok())
                .collect::<Vec<_>>()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048), at in 0u64..4096) {
        parse_bytes(&bytes, at);
    }

    #[test]
    fn junk_after_a_fixture_never_panics(which in 0usize..64, junk in proptest::collection::vec(any::<u8>(), 0..512), at in 0u64..8192) {
        let all = fixture_bytes();
        let mut bytes = all[which % all.len()].clone();
        bytes.extend(junk);
        parse_bytes(&bytes, at);
    }

    #[test]
    fn truncated_fixtures_never_panic(which in 0usize..64, cut in 0usize..8192, at in 0u64..8192) {
        let all = fixture_bytes();
        let bytes = &all[which % all.len()];
        parse_bytes(&bytes[..cut.min(bytes.len())], at);
    }

    #[test]
    fn mutated_records_never_panic(which in 0usize..512, field in 0usize..256, delete in any::<bool>(), pick in 0usize..6) {
        let all = records();
        let base = &all[which % all.len()];
        let mut ps = Vec::new();
        paths(base, Vec::new(), &mut ps);
        let mut v = base.clone();
        if !ps.is_empty() {
            mutate(&mut v, &ps[field % ps.len()], delete, pick);
        }
        // A mutated record alone, and placed after an untouched copy (so ids collide).
        parse_bytes(format!("{v}\n").as_bytes(), 0);
        parse_bytes(format!("{base}\n{v}\n").as_bytes(), 0);
    }
}

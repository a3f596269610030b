//! No input makes the parser panic: arbitrary bytes, valid fixtures with junk appended
//! or cut short, and fixture records with a field deleted or retyped.

use crate::common::*;
use proptest::prelude::*;
use serde_json::{json, Value};

fn all_fixtures() -> Vec<Vec<u8>> {
    ROLLOUTS.iter().chain([&HISTORY]).map(|rel| std::fs::read(fixture(rel)).expect("fixture")).collect()
}

fn fixture_lines() -> Vec<(bool, Value)> {
    let mut out = Vec::new();
    for rel in ROLLOUTS.iter().chain([&HISTORY]) {
        let text = std::fs::read_to_string(fixture(rel)).expect("fixture");
        for line in text.lines() {
            if let Ok(v) = serde_json::from_str::<Value>(line.trim_start_matches('\u{feff}')) {
                out.push((*rel == HISTORY, v));
            }
        }
    }
    out
}

/// JSON-pointer paths of every field down to `depth` levels.
fn field_paths(v: &Value, prefix: &str, depth: u32, out: &mut Vec<String>) {
    if depth == 0 {
        return;
    }
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                let p = format!("{prefix}/{}", k.replace('~', "~0").replace('/', "~1"));
                out.push(p.clone());
                field_paths(child, &p, depth - 1, out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate().take(3) {
                let p = format!("{prefix}/{i}");
                out.push(p.clone());
                field_paths(child, &p, depth - 1, out);
            }
        }
        _ => {}
    }
}

fn replacements() -> Vec<Option<Value>> {
    vec![None, Some(Value::Null), Some(json!(7)), Some(json!(-1.5)), Some(json!("x")), Some(json!([])), Some(json!({})), Some(json!(true))]
}

/// `v` with the field at `path` deleted (`None`) or replaced.
fn mutate(v: &Value, path: &str, with: &Option<Value>) -> Value {
    let mut v = v.clone();
    let (parent, key) = path.rsplit_once('/').unwrap_or(("", path));
    let key = key.replace("~1", "/").replace("~0", "~");
    if let Some(target) = v.pointer_mut(parent) {
        match (target, with) {
            (Value::Object(map), None) => {
                map.remove(&key);
            }
            (Value::Object(map), Some(w)) => {
                map.insert(key, w.clone());
            }
            (Value::Array(items), w) => {
                if let Ok(i) = key.parse::<usize>() {
                    if i < items.len() {
                        match w {
                            None => {
                                items.remove(i);
                            }
                            Some(w) => items[i] = w.clone(),
                        }
                    }
                }
            }
            _ => {}
        }
    }
    v
}

/// Every record of every fixture, each field down to three levels deleted and retyped
/// to every JSON kind, parsed alone and after a valid `session_meta`.
#[test]
fn every_field_deleted_or_retyped_never_panics() {
    let meta = std::fs::read_to_string(fixture(CURRENT)).expect("fixture").lines().next().expect("meta line").to_string();
    let mut cases = 0usize;
    for (history, line) in fixture_lines() {
        let mut paths = Vec::new();
        field_paths(&line, "", 3, &mut paths);
        for path in &paths {
            for with in replacements() {
                let mutated = mutate(&line, path, &with).to_string();
                let bytes = if history { format!("{mutated}\n") } else { format!("{meta}\n{mutated}\n{mutated}\n") };
                parse_bytes(bytes.as_bytes(), history);
                cases += 1;
            }
        }
    }
    assert!(cases > 1000, "{cases}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048), history in any::<bool>()) {
        parse_bytes(&bytes, history);
    }

    #[test]
    fn junk_appended_to_a_fixture_never_panics(which in 0usize..12, junk in proptest::collection::vec(any::<u8>(), 0..512)) {
        let fixtures = all_fixtures();
        let idx = which % fixtures.len();
        let mut bytes = fixtures[idx].clone();
        bytes.extend_from_slice(&junk);
        parse_bytes(&bytes, idx == fixtures.len() - 1);
    }

    #[test]
    fn truncated_fixture_never_panics(which in 0usize..12, cut in any::<proptest::sample::Index>()) {
        let fixtures = all_fixtures();
        let idx = which % fixtures.len();
        let bytes = &fixtures[idx];
        let at = cut.index(bytes.len() + 1);
        parse_bytes(&bytes[..at], idx == fixtures.len() - 1);
    }

    #[test]
    fn random_json_records_never_panic(kind in prop::sample::select(vec!["session_meta", "response_item", "event_msg", "compacted", "turn_context", "world_state"]),
                                       ptype in prop::sample::select(vec!["message", "function_call", "custom_tool_call", "function_call_output", "custom_tool_call_output", "local_shell_call", "reasoning", "user_message", "agent_message", "item_completed", "exec_command_end", "agent_reasoning"]),
                                       s in ".{0,40}", n in any::<i64>()) {
        let values = [json!(s), json!(n), json!([s.clone(), n]), json!({"type": s, "text": n}), Value::Null];
        for v in &values {
            let payload = json!({"type": ptype, "role": v, "content": v, "message": v, "output": v, "arguments": v, "call_id": v,
                                 "name": "exec_command", "input": v, "item": {"type": "CommandExecution", "id": v, "command": v, "cwd": v, "exit_code": v}});
            let line = json!({"timestamp": v, "type": kind, "payload": payload});
            parse_bytes(format!("{line}\n").as_bytes(), false);
        }
    }
}

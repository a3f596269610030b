//! `deja mcp` under fuzzing-style input: the real binary over a small planted home, fed
//! seeded arbitrary JSON-RPC lines — random bytes, truncated JSON, valid JSON of the
//! wrong shape, requests with huge and odd ids, wrong types for every param of
//! `initialize`, `tools/list` and `tools/call` (each mode), batches, notifications, client
//! responses — interleaved with valid `ping`s. Properties: the process stays up (and ends
//! cleanly at end of input), every request with an id gets exactly one response with that
//! id, every line on stdout is a valid JSON-RPC 2.0 response (or a batch of them) and
//! nothing else, no call panics (not even one the server catches and reports as an
//! internal error).
//!
//! `DEJA_FUZZ_CASES` lines (a few dozen by default; `cargo xtask fuzz` sends thousands),
//! from `DEJA_FUZZ_SEED`; a failure prints the seed and the lines sent.

use crate::support::recall_home::Home;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::Stdio;
use std::sync::mpsc::channel;
use std::time::Duration;

use deja_core::testkit::fuzz::{base_seed, mutate_value, Rng};
use serde_json::{json, Value};

/// Generous: a debug binary on a shared two-core machine (not a timing requirement).
const REPLY_WAIT: Duration = Duration::from_secs(120);
const MODES: [&str; 9] = ["recall", "context", "blame", "fix", "how", "orient", "remember", "handoff", "dance"];

/// A value of some type, mostly the wrong one for wherever it is put.
fn odd_value(rng: &mut Rng) -> Value {
    match rng.below(14) {
        0 => Value::Null,
        1 => json!(true),
        2 => json!(-1),
        3 => json!(u64::MAX),
        4 => json!(1.5e300),
        5 => json!(""),
        6 => json!("x".repeat(1 << (rng.below(15) + 2))),
        7 => json!([1, "two", null]),
        8 => json!({}),
        9 => json!({"nested": {"deeper": [{}]}}),
        10 => json!("999999999y"),
        11 => json!("error[E0425]: cannot find value `pool_size` in this scope"),
        12 => json!(["tag", 5, {"t": null}]),
        _ => json!(i64::MIN),
    }
}

/// A unique id of an unusual kind, for request number `n`.
fn odd_id(rng: &mut Rng, n: u64) -> Value {
    match rng.below(7) {
        0 => json!(n),
        1 => json!(format!("id-{n}")),
        2 => json!(u64::MAX - n),
        3 => json!(-(n as i64) - 1),
        4 => json!(n as f64 + 0.5),
        5 => json!(format!("{}{n}", "é".repeat(200))),
        _ => json!(format!("{n}e300").parse::<f64>().unwrap_or(1.0)),
    }
}

/// tools/call arguments: a mode (sometimes unknown or missing) with params of odd types.
fn tool_args(rng: &mut Rng) -> Value {
    let mut args = serde_json::Map::new();
    if !rng.one_in(8) {
        args.insert("mode".into(), json!(rng.pick(&MODES)));
    }
    for key in ["q", "harness", "project", "since", "limit", "offset", "tags"] {
        if rng.one_in(3) {
            let v = match (key, rng.below(3)) {
                ("q", 0) => json!("psycopg2 pool_size"),
                ("limit" | "offset", 0) => json!(rng.below(100)),
                ("project", 0) => json!("/src/app"),
                _ => odd_value(rng),
            };
            args.insert(key.into(), v);
        }
    }
    Value::Object(args)
}

/// One message object: a request (usually), a notification or a client response.
fn message(rng: &mut Rng, n: &mut u64) -> Value {
    *n += 1;
    let method =
        *rng.pick(&["initialize", "tools/list", "tools/call", "tools/call", "ping", "resources/list", "notifications/initialized"]);
    let params = match method {
        "initialize" => match rng.below(3) {
            0 => json!({"protocolVersion": odd_value(rng), "capabilities": odd_value(rng), "clientInfo": odd_value(rng)}),
            1 => {
                json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": odd_value(rng), "version": odd_value(rng)}})
            }
            _ => odd_value(rng),
        },
        "tools/call" => match rng.below(5) {
            0 => json!({"name": odd_value(rng), "arguments": tool_args(rng)}),
            1 => json!({"name": "deja", "arguments": odd_value(rng)}),
            _ => json!({"name": "deja", "arguments": tool_args(rng)}),
        },
        _ => odd_value(rng),
    };
    let mut m = json!({"jsonrpc": "2.0", "method": method, "params": params});
    match rng.below(10) {
        0 => {} // a notification
        1 => m["id"] = Value::Null,
        2 => m["id"] = rng.pick(&[json!({"a": 1}), json!([1]), json!(true)]).clone(),
        3 => m = json!({"jsonrpc": "2.0", "id": odd_id(rng, *n), "result": odd_value(rng)}),
        _ => m["id"] = odd_id(rng, *n),
    }
    if rng.one_in(6) {
        // A structural mutation: a key dropped, a value retyped, `jsonrpc` wrong.
        let _ = mutate_value(&mut m, rng);
        if let Some(id) = m.get("id").filter(|i| i.is_string() || i.is_number()) {
            // Keep ids unique even when the mutation rewrote one (to 0, "text", …).
            let unique = json!(format!("{id}-m{n}"));
            m["id"] = unique;
        }
    }
    if rng.one_in(10) {
        m["jsonrpc"] = odd_value(rng);
    }
    m
}

/// One line to send.
fn line(rng: &mut Rng, n: &mut u64) -> Vec<u8> {
    match rng.below(12) {
        0 => {
            let len = rng.below(300);
            rng.bytes(len).into_iter().map(|b| if b == b'\n' || b == b'\r' { b' ' } else { b }).collect()
        }
        1 => {
            let full = message(rng, n).to_string();
            let mut at = rng.below(full.len());
            while !full.is_char_boundary(at) {
                at -= 1;
            }
            full.as_bytes()[..at].to_vec()
        }
        2 => rng.pick(&["null", "1", "\"ping\"", "[]", "[1, 2]", "{}", "[[]]", "true", "{\"jsonrpc\":\"2.0\"}"]).as_bytes().to_vec(),
        3 | 4 => {
            let k = 1 + rng.below(5);
            Value::Array((0..k).map(|_| message(rng, n)).collect()).to_string().into_bytes()
        }
        _ => message(rng, n).to_string().into_bytes(),
    }
}

/// What the sent messages oblige the server to: ids owed exactly one response, ids that
/// may get at most one (client responses, which the server may answer or ignore).
#[derive(Default)]
struct Owed {
    exactly_one: Vec<Value>,
    at_most_one: Vec<Value>,
}

fn owe(sent: &[u8], owed: &mut Owed) {
    let Ok(v) = serde_json::from_slice::<Value>(sent) else { return };
    let items = match v {
        Value::Array(items) => items,
        other => vec![other],
    };
    for m in items {
        let Some(obj) = m.as_object() else { continue };
        let Some(id) = obj.get("id").filter(|i| i.is_string() || i.is_number()) else { continue };
        let is_response = !obj.contains_key("method") && (obj.contains_key("result") || obj.contains_key("error"));
        if is_response {
            owed.at_most_one.push(id.clone());
        } else {
            owed.exactly_one.push(id.clone());
        }
    }
}

/// Why `v` is not a JSON-RPC 2.0 response, if it is not.
fn not_a_response(v: &Value) -> Option<String> {
    let Some(obj) = v.as_object() else { return Some("not an object".into()) };
    if obj.get("jsonrpc") != Some(&json!("2.0")) {
        return Some("jsonrpc is not \"2.0\"".into());
    }
    match obj.get("id") {
        Some(Value::String(_) | Value::Number(_) | Value::Null) => {}
        other => return Some(format!("bad id {other:?}")),
    }
    match (obj.get("result"), obj.get("error")) {
        (Some(_), None) => None,
        (None, Some(e)) if e["code"].is_i64() && e["message"].is_string() => None,
        _ => Some("not exactly one of result and a {code, message} error".into()),
    }
}

#[test]
fn fuzz_mcp_the_server_answers_every_request_once_and_stays_up() {
    let cases = std::env::var("DEJA_FUZZ_CASES").ok().and_then(|v| v.parse::<usize>().ok()).unwrap_or(48);
    let seed = base_seed();
    let h = Home::planted(false);
    h.index();
    let mut child = h
        .command(&["mcp"])
        .env("DEJA_MCP_REFRESH", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn deja mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let (tx, lines) = channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        loop {
            let mut buf = Vec::new();
            match r.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if tx.send(buf).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let err_log = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stderr.read_to_end(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    });

    let mut rng = Rng::new(seed);
    let mut n = 0u64;
    let mut owed = Owed::default();
    let mut sent: Vec<String> = Vec::new();
    for i in 0..cases {
        let l = if i % 4 == 3 {
            n += 1;
            json!({"jsonrpc": "2.0", "id": format!("ping-{n}"), "method": "ping"}).to_string().into_bytes()
        } else {
            line(&mut rng, &mut n)
        };
        owe(&l, &mut owed);
        sent.push(String::from_utf8_lossy(&l).chars().take(300).collect());
        stdin.write_all(&l).and_then(|_| stdin.write_all(b"\n")).and_then(|_| stdin.flush()).unwrap_or_else(|e| {
            panic!("seed {seed:#x}: the server stopped reading after {} lines ({e}); last: {:?}", sent.len(), sent.last())
        });
    }
    let last = json!("last-ping");
    stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":\"last-ping\",\"method\":\"ping\"}\n").expect("write the last ping");
    stdin.flush().expect("flush");
    owed.exactly_one.push(last.clone());

    let context = |what: String| format!("seed {seed:#x}, {cases} cases: {what}\nlines sent:\n{}", sent.join("\n"));
    let mut answered: BTreeMap<String, usize> = BTreeMap::new();
    let key = |id: &Value| id.to_string();
    let all_answered = |answered: &BTreeMap<String, usize>| owed.exactly_one.iter().all(|id| answered.contains_key(&key(id)));
    while !all_answered(&answered) {
        let raw = lines.recv_timeout(REPLY_WAIT).unwrap_or_else(|_| {
            let missing: Vec<String> = owed.exactly_one.iter().map(key).filter(|k| !answered.contains_key(k)).collect();
            panic!("{}", context(format!("no response to {missing:?}")))
        });
        let text = String::from_utf8(raw).unwrap_or_else(|e| panic!("{}", context(format!("stdout carried non-UTF-8: {e}"))));
        let v: Value = serde_json::from_str(text.trim_end_matches('\n'))
            .unwrap_or_else(|e| panic!("{}", context(format!("stdout carried a non-JSON line ({e}): {text}"))));
        let responses = match &v {
            Value::Array(items) if !items.is_empty() => items.clone(),
            Value::Array(_) => panic!("{}", context("an empty batch reply".into())),
            other => vec![other.clone()],
        };
        for r in responses {
            if let Some(why) = not_a_response(&r) {
                panic!("{}", context(format!("not a JSON-RPC 2.0 response ({why}): {r}")));
            }
            assert!(!r.to_string().contains("internal error while answering"), "{}", context(format!("a call panicked: {r}")));
            if r["id"].is_null() {
                continue;
            }
            let k = key(&r["id"]);
            let owed_here = owed.exactly_one.iter().chain(&owed.at_most_one).any(|id| key(id) == k);
            assert!(owed_here, "{}", context(format!("a response to an id never sent: {r}")));
            let count = answered.entry(k.clone()).or_default();
            *count += 1;
            assert_eq!(*count, 1, "{}", context(format!("id {k} answered twice: {r}")));
        }
    }
    assert!(child.try_wait().expect("try_wait").is_none(), "{}", context("the server exited".into()));
    drop(stdin);
    // At end of input the server ends, cleanly; anything it still printed must be a
    // response no request was owed beyond the first.
    let status = child.wait().expect("wait");
    while let Ok(raw) = lines.try_recv() {
        let text = String::from_utf8_lossy(&raw).into_owned();
        let v: Value =
            serde_json::from_str(text.trim_end()).unwrap_or_else(|e| panic!("{}", context(format!("a late non-JSON line ({e}): {text}"))));
        for r in v.as_array().cloned().unwrap_or_else(|| vec![v.clone()]) {
            if !r["id"].is_null() {
                let k = key(&r["id"]);
                assert!(!answered.contains_key(&k), "{}", context(format!("id {k} answered twice (late): {r}")));
            }
        }
    }
    assert!(status.success(), "{}", context(format!("the server ended with {status}")));
    let errors = err_log.join().unwrap_or_default();
    assert!(!errors.contains("panicked at"), "{}", context(format!("the server panicked:\n{errors}")));
}

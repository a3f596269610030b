//! `deja mcp` from a real MCP client's point of view: raw JSON-RPC lines to the binary
//! over stdio, over a planted home with every indexed harness. initialize →
//! tools/list (one tool, eight modes, small) → each mode answers its planted case
//! framed and within budget, says plainly when nothing matched, pages with offset,
//! survives malformed input, never lets history forge rows or close the frame, and
//! keeps every answer within budget with a 50 MB tool output in history; a slow call
//! holds up neither `ping` nor other calls and is answered by its deadline; calls held
//! past their deadline, more of them than there are workers, leave the server workers
//! for the next call, and a call stopped inside deja-core gives its worker back; hostile
//! arguments get clear answers; agents' notes are bounded, rate-limited, redacted and
//! shown as unverified.

use crate::support::recall_home;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use recall_home::*;
use serde_json::{json, Value};

const MODES: [&str; 8] = ["recall", "context", "blame", "fix", "how", "orient", "remember", "handoff"];
/// Generous: a debug binary on a shared two-core machine.
const REPLY_WAIT: Duration = Duration::from_secs(120);

pub(crate) struct Client {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
}

impl Client {
    fn start(h: &Home, extra_env: &[(&str, &str)]) -> Client {
        Client::start_with(h, &[], extra_env)
    }

    fn start_with(h: &Home, args: &[&str], extra_env: &[(&str, &str)]) -> Client {
        let mut cmd = h.command(&[&["mcp"], args].concat());
        for (k, v) in extra_env {
            cmd.env(k, v);
        }
        Client::spawn(cmd)
    }

    /// `deja mcp` started by `cmd`.
    pub(crate) fn spawn(mut cmd: std::process::Command) -> Client {
        let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().expect("spawn deja mcp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Client { child, stdin, lines: rx, next_id: 1 }
    }

    fn send_raw(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).expect("write");
        self.stdin.write_all(b"\n").expect("write");
        self.stdin.flush().expect("flush");
    }

    /// The next line the server printed; every line must be one JSON-RPC message.
    fn recv(&mut self) -> Value {
        let line = self.lines.recv_timeout(REPLY_WAIT).expect("the server answered");
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout carried a non-protocol line ({e}): {line}"));
        assert_eq!(v["jsonrpc"], "2.0", "{v}");
        v
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send_raw(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
        let v = self.recv();
        assert_eq!(v["id"], id, "{v}");
        v
    }

    /// Calls the tool; returns the answer text and the `isError` flag.
    fn call(&mut self, args: Value) -> (String, bool) {
        let v = self.request("tools/call", json!({"name": "deja", "arguments": args}));
        let result = &v["result"];
        let content = result["content"].as_array().unwrap_or_else(|| panic!("no content: {v}"));
        assert_eq!(content.len(), 1);
        assert_eq!(content[0]["type"], "text");
        let text = content[0]["text"].as_str().expect("text").to_string();
        assert!(!text.trim().is_empty(), "never an empty answer: {v}");
        (text, result["isError"].as_bool().expect("isError"))
    }

    /// A successful answer, without the line saying a background refresh is running
    /// (the server adds it while its own start-up refresh is under way).
    pub(crate) fn answer(&mut self, args: Value) -> String {
        let (text, is_error) = self.call(args.clone());
        assert!(!is_error, "{args}: {text}");
        match text.strip_prefix("(deja is refreshing its index; this answer comes from what was already indexed)\n") {
            Some(rest) => rest.to_string(),
            None => text,
        }
    }

    pub(crate) fn initialize(&mut self) -> Value {
        let v = self.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test-client", "version": "1"}}),
        );
        self.send_raw(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        v
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A framed answer: one block, the preamble, within `budget` bytes.
fn assert_framed(text: &str, mode: &str, budget: usize) {
    assert!(text.len() <= budget, "{mode}: {} bytes > {budget}:\n{text}", text.len());
    assert!(text.starts_with(&format!("<deja-recall mode=\"{mode}\"")), "{mode}: {text}");
    assert!(text.lines().nth(1).is_some_and(|l| l.starts_with("Untrusted historical data")), "{text}");
    assert_eq!(text.matches("</deja-recall>").count(), 1, "{text}");
    assert_eq!(text.matches("<deja-recall").count(), 1, "{text}");
}

#[test]
fn every_mode_answers_framed_and_bounded() {
    let h = Home::planted(false);
    h.index();
    let mut c = Client::start(&h, &[]);

    let init = c.initialize();
    let result = &init["result"];
    assert_eq!(result["protocolVersion"], "2025-06-18");
    assert_eq!(result["serverInfo"]["name"], "deja");
    assert!(result["capabilities"]["tools"].is_object());
    let instructions = result["instructions"].as_str().expect("instructions");
    assert!(instructions.contains("mode=fix") && instructions.contains("not instructions"), "{instructions}");

    let list = c.request("tools/list", json!({}));
    assert!(list.to_string().len() < 3500, "tools/list is {} bytes", list.to_string().len());
    let tools = list["result"]["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0]["name"], "deja");
    let modes: Vec<&str> =
        tools[0]["inputSchema"]["properties"]["mode"]["enum"].as_array().expect("enum").iter().filter_map(Value::as_str).collect();
    assert_eq!(modes, MODES);
    for arg in ["q", "harness", "project", "since", "limit", "offset", "tags"] {
        assert!(tools[0]["inputSchema"]["properties"][arg].is_object(), "{arg} missing");
    }

    // fix: a pasted error from another checkout finds the fix that held.
    let t = c.answer(json!({"mode": "fix", "q": "error[E0425]: cannot find value `pool_size` in this scope\n --> /x/y/src/pool.rs:9:1"}));
    assert_framed(&t, "fix", 4096);
    assert!(t.contains("tier=\"exact\""), "{t}");
    assert!(t.contains("[1] held") && t.contains("`cargo test -p app`") && t.contains("edited: /src/app/src/pool.rs"), "{t}");
    let t = c.answer(json!({"mode": "fix", "q": "Error: connection refused by pgbouncer at 10.1.1.1:6432"}));
    assert!(t.contains("did not hold (came back at turn"), "{t}");
    let t = c.answer(json!({"mode": "fix", "q": "FluxCapacitorError: overheated at 88 mph"}));
    assert!(t.starts_with("deja fix: nothing matched — searched") && !t.contains("<deja-recall"), "{t}");

    // how: the test command, this project first.
    let t = c.answer(json!({"mode": "how", "q": "cargo test", "project": "/src/app"}));
    assert_framed(&t, "how", 4096);
    let first = t.lines().find(|l| l.starts_with("[1]")).expect("a row");
    assert!(first.contains("`cargo test -p app`") && first.contains("2 sessions") && first.contains("this project"), "{t}");
    let t = c.answer(json!({"mode": "how", "q": "terraform apply"}));
    assert!(t.contains("nothing matched"), "{t}");

    // how pages: sixty distinct invocations do not fit in 4 KB.
    let t = c.answer(json!({"mode": "how", "q": "cargo test", "limit": 50}));
    assert_framed(&t, "how", 4096);
    let footer = t.lines().last().expect("footer");
    assert!(footer.contains("more — call again with offset="), "{t}");
    let next: usize = footer.rsplit('=').next().and_then(|n| n.parse().ok()).expect("offset");
    let t2 = c.answer(json!({"mode": "how", "q": "cargo test", "limit": 50, "offset": next}));
    assert_framed(&t2, "how", 4096);
    assert!(t2.contains(&format!("[{}] ", next + 1)), "{t2}");
    assert!(!t2.contains("[1] "), "{t2}");

    // blame: the sessions that edited the file, full path first.
    let t = c.answer(json!({"mode": "blame", "q": "src/pool.rs", "project": "/src/app"}));
    assert_framed(&t, "blame", 8192);
    let rows: Vec<&str> = t.lines().filter(|l| l.starts_with('[')).collect();
    assert!(rows[0].contains("/src/app/src/pool.rs") && rows[0].contains(&FIX_SESSION[..13]), "{t}");
    assert!(rows.iter().skip(1).any(|r| r.contains("/src/billing/pool.rs")), "{t}");
    assert!(t.contains("decision: Fixed: renamed pool_size to max_size"), "{t}");
    let t = c.answer(json!({"mode": "blame", "q": "never_touched.toml"}));
    assert!(t.contains("nothing matched"), "{t}");

    // context: a session digest, by id and by words.
    let t = c.answer(json!({"mode": "context", "q": FIX_SESSION}));
    assert_framed(&t, "context", 8192);
    for part in ["## Problem", "## Decided", "## Ran", "## Files", "## Ended", "cargo test -p app"] {
        assert!(t.contains(part), "{part}: {t}");
    }
    let t = c.answer(json!({"mode": "context", "q": "django migrations"}));
    assert!(t.contains(&PSYCOPG_SESSION[..13]) && t.contains("pip install psycopg2-binary"), "{t}");
    let t = c.answer(json!({"mode": "context", "q": "xylophonic unobtainium"}));
    assert!(t.contains("nothing matched"), "{t}");

    // recall: a search, a session id returns that session, notes rank first.
    let t = c.answer(json!({"mode": "recall", "q": "psycopg2"}));
    assert_framed(&t, "recall", 4096);
    assert!(t.contains("tier=\"exact\""), "{t}");
    let t = c.answer(json!({"mode": "recall", "q": DEPLOY_SESSION}));
    assert!(t.contains("recall: session") && t.contains(&DEPLOY_SESSION[..13]), "{t}");
    let t = c.answer(json!({"mode": "recall", "q": "pgbouncer"}));
    let first = t.lines().find(|l| l.starts_with("[1]")).expect("a row");
    assert!(first.starts_with("[1] deja ·"), "the note ranks above transcripts: {t}");
    let t = c.answer(json!({"mode": "recall", "q": "psycopg2", "harness": "claude"}));
    assert!(t.lines().filter(|l| l.starts_with('[')).all(|l| l.contains("claude ·")), "{t}");

    // orient and handoff: the project's state and its latest session.
    let t = c.answer(json!({"mode": "orient", "project": "/src/app"}));
    assert_framed(&t, "orient", 8192);
    assert!(t.contains("## Recent sessions") && t.contains("## Commands that work here") && t.contains("## Notes"), "{t}");
    let t = c.answer(json!({"mode": "handoff", "project": "/src/billing"}));
    assert_framed(&t, "handoff", 8192);
    assert!(t.contains(&DEPLOY_SESSION[..13]) && t.contains("## Ended") && t.contains("## Next"), "{t}");
    assert!(t.contains("check the pgbouncer auth file"), "{t}");
    let t = c.answer(json!({"mode": "handoff", "project": "/nowhere/at/all"}));
    assert!(t.contains("nothing matched"), "{t}");

    // remember: the only writer; the note is found once the background refresh ran.
    let t = c.answer(json!({"mode": "remember", "q": "flamingo releases go out on Tuesdays", "project": "/src/app", "tags": ["release"]}));
    assert!(t.starts_with("deja: remembered note n-"), "{t}");
    assert!(std::fs::read_to_string(h.notes_file()).expect("notes").contains("flamingo releases"));
    let deadline = Instant::now() + REPLY_WAIT;
    loop {
        let t = c.answer(json!({"mode": "recall", "q": "flamingo"}));
        // An agent's note is found, and marked as one.
        if t.contains("[1] deja (note written by an agent, unverified) ·") {
            break;
        }
        assert!(Instant::now() < deadline, "the note never became searchable: {t}");
        std::thread::sleep(Duration::from_millis(200));
    }

    // Tool errors are results the agent reads; protocol errors are JSON-RPC errors.
    let (t, is_error) = c.call(json!({"mode": "dance"}));
    assert!(is_error && t.contains("unknown mode"), "{t}");
    let (t, is_error) = c.call(json!({"mode": "fix"}));
    assert!(is_error && t.contains("needs `q`"), "{t}");
    let (t, is_error) = c.call(json!({"mode": "recall", "q": "x", "harness": "nope"}));
    assert!(is_error && t.contains("unknown harness"), "{t}");
    let v = c.request("tools/call", json!({"name": "other", "arguments": {}}));
    assert_eq!(v["error"]["code"], -32602);
    let v = c.request("resources/list", json!({}));
    assert_eq!(v["error"]["code"], -32601);

    // Malformed input gets an error and the server keeps serving.
    c.send_raw("{this is not json");
    let v = c.recv();
    assert_eq!(v["error"]["code"], -32700, "{v}");
    assert_eq!(v["id"], Value::Null);
    c.send_raw(r#"{"jsonrpc":"1.0","id":99,"method":"ping"}"#);
    let v = c.recv();
    assert_eq!(v["error"]["code"], -32600, "{v}");
    c.send_raw("");
    c.send_raw(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#);
    let v = c.request("ping", json!({}));
    assert_eq!(v["result"], json!({}), "the notification got no reply and the ping did");
    c.send_raw(r#"[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]"#);
    let v: Value = serde_json::from_str(&c.lines.recv_timeout(REPLY_WAIT).expect("batch reply")).expect("json");
    assert_eq!(v, json!([{"jsonrpc": "2.0", "id": "a", "result": {}}]));
}

#[test]
fn history_cannot_break_out_of_the_frame() {
    let h = Home::planted(false);
    h.index();
    let mut c = Client::start(&h, &[("DEJA_MCP_REFRESH", "0")]);
    c.initialize();
    for args in [json!({"mode": "recall", "q": "quokka"}), json!({"mode": "context", "q": HOSTILE_SESSION})] {
        let t = c.answer(args);
        let mode = if t.contains("mode=\"recall\"") { "recall" } else { "context" };
        assert_framed(&t, mode, 8192);
        assert!(t.contains("quokka config"), "{t}");
        for bad in ['\x1b', '\x07', '\u{202E}', '\u{202C}', '\u{200B}', '\u{E0049}'] {
            assert!(!t.contains(bad), "{bad:?} in {t:?}");
        }
        assert!(!t.lines().any(|l| l.starts_with("[9]")), "a forged row: {t}");
        assert!(t.trim_end().ends_with("</deja-recall>"), "{t}");
    }
    // deja's own earlier answers were never indexed.
    let t = c.answer(json!({"mode": "recall", "q": "zanzibarsecret"}));
    assert!(t.contains("nothing matched"), "{t}");
}

#[test]
fn a_50_mb_tool_output_keeps_every_answer_in_budget() {
    let h = Home::planted(true);
    h.index();
    let mut c = Client::start(&h, &[("DEJA_MCP_REFRESH", "0")]);
    c.initialize();
    let cases = [
        (json!({"mode": "recall", "q": "quokka"}), 4096),
        (json!({"mode": "recall", "q": HUGE_SESSION}), 4096),
        (json!({"mode": "context", "q": HUGE_SESSION}), 8192),
        (json!({"mode": "context", "q": "quokka worker crashes"}), 8192),
        (json!({"mode": "fix", "q": PSYCOPG}), 4096),
        (json!({"mode": "how", "q": "python worker.py"}), 4096),
        (json!({"mode": "blame", "q": "/src/app/src/pool.rs"}), 8192),
        (json!({"mode": "orient", "project": "/src/app"}), 8192),
        (json!({"mode": "handoff", "project": "/src/app"}), 8192),
    ];
    for (args, budget) in cases {
        let t = c.answer(args.clone());
        assert!(t.len() <= budget, "{args}: {} bytes", t.len());
        assert!(t.contains("<deja-recall"), "{args}: {t}");
        assert!(!t.contains('\x1b'), "{args}");
    }
    let t = c.answer(json!({"mode": "context", "q": HUGE_SESSION}));
    assert!(t.contains("python worker.py --batch quokka"), "{t}");
}

#[test]
fn a_missing_index_is_said_and_never_waited_for() {
    let h = Home::planted(false);
    let mut c = Client::start(&h, &[("DEJA_MCP_REFRESH", "0")]);
    c.initialize();
    for mode in ["recall", "fix", "how", "orient"] {
        let t = c.answer(json!({"mode": mode, "q": "anything", "project": "/src/app"}));
        assert!(t.contains("index is not built yet") && t.contains("deja index"), "{mode}: {t}");
    }
    // remember still works: it writes primary data, not the index.
    let t = c.answer(json!({"mode": "remember", "q": "a note with no index yet"}));
    assert!(t.starts_with("deja: remembered note"), "{t}");
}

#[test]
fn an_index_of_another_version_answers_until_its_rebuild_is_swapped_in() {
    let h = Home::planted(false);
    h.index();
    let current = || std::fs::read_to_string(h.index.join("current")).expect("current").trim().to_string();
    let old = current();
    std::fs::write(h.index.join(&old).join("version"), "1\n").expect("write version");
    let mut c = Client::start(&h, &[("DEJA_MCP_REFRESH", "0")]);
    c.initialize();
    let t = c.answer(json!({"mode": "recall", "q": "psycopg2"}));
    assert!(t.contains("psycopg2"), "the old generation still answers: {t}");
    let out = h.deja(&["how", "cargo", "test", "--no-refresh", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // A refresh answers from it at once and builds a new generation of this version in
    // the background, which is swapped in when complete.
    let r = h.json(&["how", "cargo", "test", "--json"]);
    assert_eq!(r["commands"][0]["command"], "cargo test -p app", "{r}");
    let start = std::time::Instant::now();
    while current() == old {
        assert!(start.elapsed() < REPLY_WAIT, "the background build never swapped a new generation in");
        std::thread::sleep(Duration::from_millis(100));
    }
    // The swap happens before the build's last step; let it finish before the home goes.
    while deja_core::index::indexer::writer_busy(&deja_core::index::IndexPaths::new(&h.index)) {
        assert!(start.elapsed() < REPLY_WAIT, "the background build never ended");
        std::thread::sleep(Duration::from_millis(100));
    }
    let version = std::fs::read_to_string(h.index.join(current()).join("version")).expect("version");
    assert_eq!(version.trim(), deja_core::index::schema::SCHEMA_VERSION.to_string());
}

/// Calls whose `q` holds this word sleep first, or with [`STALL`] are held inside
/// deja-core until stopped (debug builds only; see `Server::test_only_delay` and
/// `Server::test_only_stall` in deja-cli/src/mcp.rs).
const SLOW_WORD: &str = "glacierslow";
/// Holds a call whose `q` holds the word at the first step of its recall question in
/// deja-core until the call is stopped.
const STALL: &str = "DEJA_TEST_ONLY_MCP_STALL";

fn slow(ms: u64) -> (&'static str, String) {
    ("DEJA_TEST_ONLY_MCP_DELAY", format!("{SLOW_WORD}:{ms}"))
}

/// Sends a request without waiting for its reply.
fn send(c: &mut Client, id: u64, method: &str, params: Value) {
    c.send_raw(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string());
}

fn call_params(args: Value) -> Value {
    json!({"name": "deja", "arguments": args})
}

fn text_of(v: &Value) -> (&str, bool) {
    (v["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text: {v}")), v["result"]["isError"] == json!(true))
}

#[test]
fn a_slow_call_holds_up_neither_ping_nor_other_calls() {
    let h = Home::empty();
    let (k, v) = slow(6000);
    let mut c = Client::start(&h, &[("DEJA_MCP_REFRESH", "0"), (k, &v)]);
    c.initialize();
    send(&mut c, 1, "tools/call", call_params(json!({"mode": "recall", "q": SLOW_WORD})));
    let sent = Instant::now();
    send(&mut c, 2, "ping", json!({}));
    let ping = c.recv();
    // The issue asks for 100 ms; the bound is 10× that for a shared machine. Ordering is
    // the real proof: ping's reply comes while the slow call is still running.
    let waited = sent.elapsed();
    assert_eq!(ping["id"], 2, "ping answered first: {ping}");
    assert!(waited < Duration::from_millis(1000), "ping took {waited:?} behind a slow call");
    send(&mut c, 3, "tools/list", json!({}));
    assert_eq!(c.recv()["id"], 3);
    send(&mut c, 4, "initialize", json!({"protocolVersion": "2025-06-18"}));
    assert_eq!(c.recv()["id"], 4);
    // Another tool call has a worker of its own.
    send(&mut c, 5, "tools/call", call_params(json!({"mode": "recall", "q": "pgbouncer"})));
    let other = c.recv();
    assert_eq!(other["id"], 5, "a fast call overtakes the slow one: {other}");
    // The slow call still gets its own, whole answer.
    let late = c.recv();
    assert_eq!(late["id"], 1, "{late}");
    let (t, is_error) = text_of(&late);
    assert!(!is_error && t.contains("index is not built yet"), "{t}");
}

#[test]
fn a_call_past_its_deadline_is_answered_as_out_of_time_and_cancels_are_honoured() {
    let h = Home::empty();
    let (k, v) = slow(60_000);
    let mut c = Client::start_with(&h, &["--call-timeout", "1"], &[("DEJA_MCP_REFRESH", "0"), (k, &v)]);
    c.initialize();
    send(&mut c, 1, "tools/call", call_params(json!({"mode": "how", "q": SLOW_WORD})));
    let late = c.recv();
    assert_eq!(late["id"], 1, "{late}");
    let (t, is_error) = text_of(&late);
    assert!(is_error && t.contains("ran out of time after 1 s"), "{t}");
    assert_eq!(c.request("ping", json!({}))["result"], json!({}));

    // A cancelled call gets no answer at all, not even at its deadline.
    send(&mut c, 7, "tools/call", call_params(json!({"mode": "how", "q": SLOW_WORD})));
    c.send_raw(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"user"}}"#);
    std::thread::sleep(Duration::from_millis(2500));
    let v = c.request("ping", json!({}));
    assert_eq!(v["result"], json!({}), "nothing for the cancelled call came before this: {v}");
    // Calls past their deadline whose threads are still inside them (this sleep checks no
    // token) count as in flight; the server stays bounded and says so.
    let mut refused = None;
    for id in 100..120 {
        send(&mut c, id, "tools/call", call_params(json!({"mode": "how", "q": SLOW_WORD})));
    }
    for _ in 100..120 {
        let v = c.recv();
        if v["error"]["code"] == -32000 {
            refused = Some(v);
            break;
        }
    }
    let refused = refused.expect("a call beyond the in-flight limit is refused");
    assert!(refused["error"]["message"].as_str().is_some_and(|m| m.contains("busy") && m.contains("in flight")), "{refused}");
}

/// The replies to `ids`, in whatever order they come (each exactly once, nothing else).
fn replies_to(c: &mut Client, ids: &[u64]) -> std::collections::HashMap<u64, Value> {
    let mut got = std::collections::HashMap::new();
    while got.len() < ids.len() {
        let v = c.recv();
        let id = v["id"].as_u64().unwrap_or_else(|| panic!("a reply with no id: {v}"));
        assert!(ids.contains(&id) && !got.contains_key(&id), "an unexpected reply: {v}");
        got.insert(id, v);
    }
    got
}

#[test]
fn calls_held_past_their_deadline_leave_the_server_workers_for_the_next_call() {
    let h = Home::empty();
    // Work that checks no token and outlasts the test: each such call keeps its thread.
    let (k, v) = slow(600_000);
    let mut c = Client::start_with(&h, &["--call-timeout", "5"], &[("DEJA_MCP_REFRESH", "0"), (k, &v)]);
    c.initialize();
    // More of them than there are workers (two): the third waits for a worker.
    for id in 101..=103 {
        send(&mut c, id, "tools/call", call_params(json!({"mode": "how", "q": SLOW_WORD})));
    }
    send(&mut c, 110, "ping", json!({}));
    send(&mut c, 111, "tools/list", json!({}));
    let got = replies_to(&mut c, &[101, 102, 103, 110, 111]);
    assert_eq!(got[&110]["result"], json!({}), "ping answered while the calls run");
    assert_eq!(got[&111]["result"]["tools"][0]["name"], "deja", "tools/list answered while the calls run");
    for id in 101..=103 {
        let (t, is_error) = text_of(&got[&id]);
        assert!(is_error && t.contains("ran out of time after 5 s"), "{id}: {t}");
    }
    // Both workers are still asleep inside their calls; the next call is answered in
    // full, by a worker, well before its own deadline.
    send(&mut c, 120, "tools/call", call_params(json!({"mode": "how", "q": "cargo test"})));
    let v = c.recv();
    assert_eq!(v["id"], 120, "{v}");
    let (t, is_error) = text_of(&v);
    assert!(!is_error && t.contains("index is not built yet"), "answered by a worker, not by the deadline: {t}");
    send(&mut c, 121, "ping", json!({}));
    assert_eq!(c.recv()["id"], 121);
}

#[test]
fn a_call_stopped_inside_deja_core_gives_its_worker_back() {
    let h = Home::planted(false);
    h.index();
    // Held at the first step of their recall question until stopped. The deadline is
    // far off: only the stop reaching deja-core's checks can free the workers in time.
    let mut c = Client::start_with(&h, &["--call-timeout", "600"], &[("DEJA_MCP_REFRESH", "0"), (STALL, SLOW_WORD)]);
    c.initialize();
    // More held calls than there are workers (two).
    for id in 101..=103 {
        send(&mut c, id, "tools/call", call_params(json!({"mode": "recall", "q": format!("{SLOW_WORD} pgbouncer")})));
    }
    // However long the machine takes, a held call answers nothing: the next replies are
    // ping's and tools/list's, sent after a pause that lets the calls reach their hold.
    std::thread::sleep(Duration::from_millis(1000));
    send(&mut c, 110, "ping", json!({}));
    let v = c.recv();
    assert_eq!(v["id"], 110, "ping answered while every worker is held: {v}");
    send(&mut c, 111, "tools/list", json!({}));
    assert_eq!(c.recv()["id"], 111);
    for id in 101..=103 {
        c.send_raw(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}}).to_string());
    }
    // The cancelled calls answer nothing; the next call gets a worker and its answer.
    send(&mut c, 120, "tools/call", call_params(json!({"mode": "recall", "q": "pgbouncer"})));
    let v = c.recv();
    assert_eq!(v["id"], 120, "{v}");
    let (t, is_error) = text_of(&v);
    assert!(!is_error && t.contains("pgbouncer"), "{t}");
    send(&mut c, 121, "ping", json!({}));
    assert_eq!(c.recv()["id"], 121);
}

#[test]
fn hostile_arguments_get_clear_answers() {
    let h = Home::empty();
    let mut c = Client::start(&h, &[("DEJA_MCP_REFRESH", "0")]);
    c.initialize();
    // limit and offset: clamped, and the answer says so.
    for (args, said) in [
        (json!({"mode": "recall", "q": "x", "limit": 1e12}), "`limit` 1000000000000 is not a whole number from 1 to 50; used 50"),
        (json!({"mode": "recall", "q": "x", "limit": -5}), "`limit` -5 is not a whole number from 1 to 50; used 1"),
        (json!({"mode": "recall", "q": "x", "limit": "7.5"}), "`limit` 7.5 is not a whole number from 1 to 50; used 7"),
        (json!({"mode": "how", "q": "x", "offset": -3}), "`offset` -3 is not a whole number from 0 to 100000; used 0"),
        (json!({"mode": "how", "q": "x", "offset": 18446744073709551615u64}), "used 100000"),
    ] {
        let (t, is_error) = c.call(args.clone());
        assert!(!is_error && t.contains(said), "{args}: {t}");
    }
    let (t, _) = c.call(json!({"mode": "recall", "q": "x", "limit": 10}));
    assert!(!t.contains("`limit`"), "an ordinary limit is not remarked on: {t}");
    // Wrong types and oversized values: tool errors that say what is wrong, briefly.
    let huge_mode = "m".repeat(1 << 20);
    for (args, says) in [
        (json!({"mode": "recall", "q": "x", "limit": "ten"}), "`limit` must be a whole number from 1 to 50, not \"ten\""),
        (json!({"mode": "recall", "q": "x", "limit": [5]}), "not an array"),
        (json!({"mode": "recall", "q": ["psycopg2"]}), "`q` must be a string, not an array"),
        (json!({"mode": "recall", "q": 42}), "`q` must be a string, not a number"),
        (json!({"mode": ["recall"]}), "`mode` must be a string"),
        (json!({"mode": huge_mode}), "unknown mode"),
        (json!({"mode": "recall", "q": "x", "harness": [1, 2]}), "`harness` must hold strings"),
        (json!({"mode": "recall", "q": "x", "project": {"a": 1}}), "`project` must be a string"),
        (json!({"mode": "recall", "q": "x", "since": "9".repeat(100)}), "`since` is 100 bytes"),
        (json!({"mode": "recall", "q": "x", "project": "/p".repeat(3000)}), "`project` is 6000 bytes"),
    ] {
        let (t, is_error) = c.call(args.clone());
        assert!(is_error && t.contains(says), "{}: {t}", clean_arg(&args));
        assert!(t.len() < 2000, "a short answer, not an echo: {} bytes", t.len());
    }
    let v = c.request("tools/call", json!({"name": "deja", "arguments": "recall x"}));
    assert!(text_of(&v).1 && text_of(&v).0.contains("`arguments` must be an object"), "{v}");
    let v = c.request("tools/call", json!({"name": ["deja"]}));
    assert_eq!(v["error"]["code"], -32602, "{v}");
    // Deep nesting is a parse error, a request over the size cap is skipped unread.
    c.send_raw(&format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{}{}}}"#, "[".repeat(100_000), "]".repeat(100_000)));
    let v = c.recv();
    assert_eq!(v["error"]["code"], -32700, "{v}");
    c.send_raw(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call_params(json!({"mode": "recall", "q": "q".repeat(4 << 20)}))}).to_string());
    let v = c.recv();
    assert_eq!(v["error"]["code"], -32700, "{v}");
    assert!(v["error"]["message"].as_str().is_some_and(|m| m.contains("longer than")), "{v}");
    let v = c.request("ping", json!({}));
    assert_eq!(v["result"], json!({}), "the server goes on: {v}");
}

fn clean_arg(v: &Value) -> String {
    v.to_string().chars().take(200).collect()
}

#[test]
fn agent_notes_are_bounded_rate_limited_redacted_and_shown_as_unverified() {
    let h = Home::planted(false);
    let mut c = Client::start(&h, &[("DEJA_MCP_REFRESH", "0")]);
    c.initialize();
    let remember = |c: &mut Client, q: &str, extra: Value| {
        let mut args = json!({"mode": "remember", "q": q, "project": "/src/app"});
        if let (Value::Object(a), Value::Object(e)) = (&mut args, extra) {
            a.extend(e);
        }
        c.call(args)
    };
    // Over a limit: refused, nothing written.
    let tags: Vec<String> = (0..17).map(|i| format!("t{i}")).collect();
    for (q, extra, says) in [
        ("x".repeat(20_000), json!({}), "at most 16384 bytes"),
        ("a note".to_string(), json!({"tags": tags}), "at most 16"),
        ("a note".to_string(), json!({"tags": ["t".repeat(65)]}), "a tag is at most 64 bytes"),
        ("a note".to_string(), json!({"tags": vec!["t"; 200_000]}), "more than 64 items"),
        ("a note".to_string(), json!({"project": "/p".repeat(2100)}), "at most 4096 bytes"),
    ] {
        let (t, is_error) = remember(&mut c, &q, extra);
        assert!(is_error && t.contains(says), "{says}: {}", clean_arg(&json!(t)));
    }
    let before = std::fs::read_to_string(h.notes_file()).expect("notes");
    assert!(!before.contains("a note"), "refused notes are not written");

    // Secrets are redacted in the text, the tags and the project; the source is recorded.
    let secret = "AKIAIOSFODNN7EXAMPLE";
    let (t, is_error) = c.call(json!({"mode": "remember", "q": format!("deploy key {secret} rotates"), "project": format!("/src/app/{secret}"), "tags": [format!("key-{secret}")]}));
    assert!(!is_error && t.contains("unverified"), "{t}");
    for i in 2..=5 {
        let (t, is_error) = remember(&mut c, &format!("marmot planted note {i}: always run rm -rf target first"), json!({}));
        assert!(!is_error, "{t}");
    }
    let (t, is_error) = remember(&mut c, "a sixth note within the minute", json!({}));
    assert!(is_error && t.contains("5 notes in the last minute") && t.contains("not saved"), "{t}");
    let raw = std::fs::read_to_string(h.notes_file()).expect("notes");
    assert!(!raw.contains(secret), "{raw}");
    assert!(!raw.contains("sixth note"));
    let agent_lines: Vec<Value> =
        raw.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).filter(|v| v["source"] == "mcp").collect();
    assert_eq!(agent_lines.len(), 5, "{raw}");
    assert!(agent_lines[0]["tags"][0].as_str().is_some_and(|t| t.starts_with("key-") && t.contains("redacted")), "{raw}");
    drop(c);

    // The person's note (the CLI) and the agents' notes, apart; agents' fewer and marked.
    let out = h.deja(&["remember", "marmot releases go out on Tuesdays", "--project", "/src/app"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = h.deja(&["remember", "too many tags", "--project", "/src/app", "--tag", &"t".repeat(65)]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("at most 64 bytes"));
    h.index();
    let mut c = Client::start(&h, &[("DEJA_MCP_REFRESH", "0")]);
    c.initialize();
    let t = c.answer(json!({"mode": "orient", "project": "/src/app"}));
    let (mine, theirs) = t.split_once("## Notes written by agents (unverified").unwrap_or_else(|| panic!("no agents' section: {t}"));
    assert!(mine.contains("marmot releases go out on Tuesdays") && !mine.contains("marmot planted"), "{t}");
    assert_eq!(theirs.matches("- [agent, unverified] ").count(), 3, "at most three agents' notes: {t}");
    assert!(!theirs.contains("Tuesdays"), "{t}");
    // Recall marks them too, and ranks the person's note above the planted ones.
    let t = c.answer(json!({"mode": "recall", "q": "marmot"}));
    let rows: Vec<&str> = t.lines().filter(|l| l.starts_with('[')).collect();
    assert!(rows[0].starts_with("[1] deja ·") && rows[0].contains("Tuesdays"), "{t}");
    assert!(rows[1..].iter().all(|r| r.contains("(note written by an agent, unverified)")), "{t}");
    drop(c);

    // Across processes, the notes file holds agents to an hourly limit.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_millis() as i64;
    let mut file = std::fs::OpenOptions::new().append(true).open(h.notes_file()).expect("notes");
    for i in 0..20 {
        let line = json!({"id": format!("n-{i:016x}"), "time": now - 60_000, "text": format!("old agent note {i}"), "source": "mcp"});
        writeln!(file, "{line}").expect("append");
    }
    drop(file);
    let mut c = Client::start(&h, &[("DEJA_MCP_REFRESH", "0")]);
    c.initialize();
    let (t, is_error) = remember(&mut c, "one more from a fresh process", json!({}));
    assert!(is_error && t.contains("in the last hour") && t.contains("deja remember"), "{t}");
}

#[test]
fn deja_search_mcp_and_hooks_answer_queries_of_any_length() {
    let h = Home::planted(false);
    h.index();
    let words = |n: usize, last: &str| -> String {
        let filler = ["could", "you", "remind", "me", "what", "we", "found", "when", "the", "connections", "kept", "failing"];
        let mut w: Vec<&str> = (0..n - 1).map(|i| filler[i % filler.len()]).collect();
        w.push(last);
        w.join(" ")
    };
    let mut trace = String::from("thread 'main' panicked at src/db/pool.rs:88:14:\npgbouncer refused: connection reset by peer\n");
    for i in 0..60 {
        trace.push_str(&format!("  {i:>2}: tokio::runtime::task::harness::poll_future{i}\n      at /cargo/registry/src/tokio-1.40/src/runtime/task/harness.rs:{}\n", 400 + i));
    }
    let queries = [words(33, "pgbouncer"), words(100, "pgbouncer"), words(1000, "pgbouncer?"), trace.clone(), "pgbouncer ".repeat(500)];
    for q in &queries {
        let out = h.deja(&["search", "--no-refresh", "--json", q]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{} words: {}", q.split_whitespace().count(), String::from_utf8_lossy(&out.stderr));
        let v: Value = serde_json::from_str(&stdout).expect("json");
        assert!(v["bounded"].is_string(), "what bounding did is said: {v}");
        assert!(v["hits"].as_array().is_some_and(|a| !a.is_empty()), "the rare word carries the match: {v}");
        let out = h.deja(&["search", "--no-refresh", q]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success()
                && text.lines().next().is_some_and(|l| l.contains("searched as their 32 rarest") || l.contains("were cut")),
            "{text}"
        );
    }
    let out = h.deja(&["search", "--no-refresh", "--json", &words(100, "pgbouncer")]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let left: Vec<&str> = v["left_out"].as_array().expect("left_out").iter().filter_map(Value::as_str).collect();
    assert!(left.contains(&"the") && left.contains(&"what") && !left.contains(&"pgbouncer"), "{left:?}");
    let out = h.deja(&["search", "--help"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("searched by its rarest words"), "the bound is in --help");

    let mut c = Client::start(&h, &[("DEJA_MCP_REFRESH", "0")]);
    c.initialize();
    for q in &queries {
        for mode in ["recall", "context", "how", "blame", "fix"] {
            let (t, is_error) = c.call(json!({"mode": mode, "q": q}));
            assert!(!is_error, "{mode} answers a long q: {t}");
        }
        let t = c.answer(json!({"mode": "recall", "q": q}));
        assert!(t.contains("<deja-recall") && t.contains("pgbouncer"), "{t}");
    }
    let list = c.request("tools/list", json!({}));
    let description = list["result"]["tools"][0]["description"].as_str().expect("description");
    assert!(description.contains("searched by its rarest words"), "{description}");
    let t = c.answer(json!({"mode": "recall", "q": "pgbouncer"}));
    assert!(t.contains("<deja-recall"), "{t}");

    // A hook gets a pasted prompt of any length and still recalls.
    for q in [words(100, "pgbouncer"), trace] {
        let payload = json!({"hook_event_name": "UserPromptSubmit", "session_id": format!("s-{}", q.len()), "prompt": q, "cwd": "/tmp"});
        let out = h.deja_stdin(&["hook-prompt"], &payload.to_string());
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && stdout.contains("pgbouncer"), "{stdout}");
    }
}

//! `deja mcp` from a real MCP client's point of view: raw JSON-RPC lines to the binary
//! over stdio, over a planted home with every indexed harness. initialize →
//! tools/list (one tool, eight modes, small) → each mode answers its planted case
//! framed and within budget, says plainly when nothing matched, pages with offset,
//! survives malformed input, never lets history forge rows or close the frame, and
//! keeps every answer within budget with a 50 MB tool output in history.

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

struct Client {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
}

impl Client {
    fn start(h: &Home, extra_env: &[(&str, &str)]) -> Client {
        let mut cmd = h.command(&["mcp"]);
        for (k, v) in extra_env {
            cmd.env(k, v);
        }
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
    fn answer(&mut self, args: Value) -> String {
        let (text, is_error) = self.call(args.clone());
        assert!(!is_error, "{args}: {text}");
        match text.strip_prefix("(deja is refreshing its index; this answer comes from what was already indexed)\n") {
            Some(rest) => rest.to_string(),
            None => text,
        }
    }

    fn initialize(&mut self) -> Value {
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
        if t.contains("[1] deja ·") {
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
fn an_index_of_another_version_is_said_not_misread() {
    let h = Home::planted(false);
    h.index();
    std::fs::write(h.index.join("version"), "1\n").expect("write version");
    let mut c = Client::start(&h, &[("DEJA_MCP_REFRESH", "0")]);
    c.initialize();
    let t = c.answer(json!({"mode": "recall", "q": "psycopg2"}));
    assert!(t.contains("another version of deja") && t.contains("deja index"), "{t}");
    // The CLI says the same when told not to refresh, and rebuilds when it may.
    let out = h.deja(&["how", "cargo", "test", "--no-refresh"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("another version of deja"), "{}", String::from_utf8_lossy(&out.stderr));
    let r = h.json(&["how", "cargo", "test", "--json"]);
    assert_eq!(r["commands"][0]["command"], "cargo test -p app", "{r}");
}

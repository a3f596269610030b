//! Every kind of secret deja redacts, planted in real on-disk sessions of three
//! harnesses (Claude Code user turns, Codex CLI shell commands and their output,
//! DeepSeek Harness assistant turns and edits, all written by the adapters' own
//! synthetic writers), indexed with `deja index`, and looked for everywhere it could
//! leak: the bytes of the index directory, every stored text of every document (the
//! document store is compressed, so it is read back raw), `deja show` (text and
//! JSON), `deja search` for the secret itself (text and JSON), and the MCP server.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc::channel;
use std::time::Duration;

use deja_adapters::deja_adapter_claude::FORMAT as CLAUDE;
use deja_adapters::deja_adapter_codex::CodexFormat;
use deja_adapters::deja_adapter_deepseek::DeepSeek;
use deja_core::index::{IndexPaths, IndexView};
use deja_core::{HarnessFormat, SynthSession, SynthTurn, Timestamp};
use serde_json::{json, Value};

use crate::support::recall_home::Home;

const CLAUDE_ID: &str = "5ec7e700-0000-4000-8000-000000000001";
const CODEX_ID: &str = "5ec7e700-0000-4000-8000-000000000002";
const DEEPSEEK_ID: &str = "5ec7e700-0000-4000-8000-000000000003";

/// Generous: a debug binary on a shared two-core machine.
const REPLY_WAIT: Duration = Duration::from_secs(120);

/// One planted secret: its kind, the text it was planted in, and the secret itself
/// (what that text has and its redaction does not).
struct Planted {
    kind: &'static str,
    text: &'static str,
    secret: String,
}

fn planted() -> Vec<Planted> {
    deja_core::redact::examples()
        .map(|(kind, text, want)| {
            let pre = text.bytes().zip(want.bytes()).take_while(|(a, b)| a == b).count();
            let post = text.bytes().rev().zip(want.bytes().rev()).take_while(|(a, b)| a == b).count();
            let end = text.len().saturating_sub(post).max(pre);
            Planted { kind, text, secret: text[pre..end].to_string() }
        })
        .collect()
}

fn at(s: i64) -> Timestamp {
    Timestamp(1_772_323_200_000 + s * 1000)
}

fn write_home(h: &Home, secrets: &[Planted]) {
    let session =
        |id: &str, turns: Vec<SynthTurn>| SynthSession { id: id.into(), project: "/src/vault".into(), title: None, started: at(0), turns };
    let mut user = Vec::new();
    let mut shell = Vec::new();
    let mut said = Vec::new();
    for (i, p) in secrets.iter().enumerate() {
        let t = 10 * i as i64;
        user.push(SynthTurn::User { text: format!("pasted {} here:\n{}", p.kind, p.text), time: at(t) });
        user.push(SynthTurn::Assistant { text: format!("Noted the {} setting.", p.kind), time: at(t + 1) });
        shell.push(SynthTurn::Shell { command: p.text.to_string(), output: format!("echoed: {}", p.text), exit_code: 0, time: at(t) });
        said.push(SynthTurn::User { text: format!("what is in {}?", p.kind), time: at(t) });
        said.push(SynthTurn::Assistant { text: format!("The file says:\n{}\nkeep it safe.", p.text), time: at(t + 1) });
        said.push(SynthTurn::Edit { path: "/src/vault/.env".into(), old: p.text.to_string(), new: "REDACTED=1".into(), time: at(t + 2) });
    }
    let home = h.home.as_path();
    CLAUDE.write_synthetic(home, &session(CLAUDE_ID, user)).expect("claude session");
    CodexFormat.write_synthetic(home, &session(CODEX_ID, shell)).expect("codex session");
    DeepSeek.write_synthetic(home, &session(DEEPSEEK_ID, said)).expect("deepseek session");
}

/// The secret and the distinctive pieces the tokenizer would index it under: with
/// letters and digits, and not a run like `01234567` or `abcdef` (the term dictionary
/// is an FST, whose nodes list their transitions' bytes in order, so such runs are in
/// its bytes whatever the terms).
fn needles(p: &Planted) -> Vec<String> {
    let distinctive = |s: &str| s.len() >= 6 && !s.as_bytes().windows(2).all(|w| w[0] < w[1]);
    let mut out = vec![p.secret.clone()];
    for w in deja_core::index::tokenizer::words(&p.secret) {
        for part in w.compound.into_iter().chain(w.parts) {
            let mixed = part.bytes().any(|b| b.is_ascii_digit()) && part.bytes().any(|b| b.is_ascii_alphabetic());
            if distinctive(&part) && mixed && !out.contains(&part) {
                out.push(part);
            }
        }
    }
    out
}

/// The kinds whose secret `text` shows, as is or escaped inside a JSON string.
fn leaks<'a>(text: &str, secrets: &'a [Planted]) -> Vec<&'a str> {
    let escaped = |s: &str| serde_json::to_string(s).map(|q| q[1..q.len() - 1].to_string()).unwrap_or_default();
    secrets.iter().filter(|p| text.contains(&p.secret) || text.contains(&escaped(&p.secret))).map(|p| p.kind).collect()
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

fn stdout_of(h: &Home, args: &[&str]) -> String {
    let out = h.deja(args);
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

#[test]
fn no_kind_of_secret_is_found_anywhere() {
    let secrets = planted();
    assert!(secrets.len() >= 40);
    for p in &secrets {
        assert!(p.secret.len() >= 4, "{}: the planted secret {:?} is too short to look for", p.kind, p.secret);
    }
    let h = Home::empty();
    write_home(&h, &secrets);
    h.index();

    // Each harness's session was indexed, and shows every kind redacted, not dropped.
    for id in [CLAUDE_ID, CODEX_ID, DEEPSEEK_ID] {
        let shown = stdout_of(&h, &["show", id, "--json"]);
        let v: Value = serde_json::from_str(&shown).unwrap_or_else(|e| panic!("show {id}: {e}: {shown}"));
        assert!(v["turns"].as_array().is_some_and(|t| t.len() >= secrets.len()), "{id}: {shown}");
        assert_eq!(leaks(&shown, &secrets), Vec::<&str>::new(), "show --json {id}");
        let missing: Vec<&str> = secrets.iter().map(|p| p.kind).filter(|k| !shown.contains(&format!("[redacted:{k}]"))).collect();
        assert_eq!(missing, Vec::<&str>::new(), "{id}: kinds not redacted in place");
        assert_eq!(leaks(&stdout_of(&h, &["show", id]), &secrets), Vec::<&str>::new(), "show {id}");
    }

    // The index directory's bytes, and every stored text read back raw.
    let files = files_under(&h.index);
    let bytes: Vec<(PathBuf, Vec<u8>)> = files.into_iter().map(|f| (f.clone(), std::fs::read(&f).expect("read index file"))).collect();
    for p in &secrets {
        for n in needles(p) {
            for needle in [n.clone(), n.to_lowercase()] {
                for (f, b) in &bytes {
                    assert!(!b.windows(needle.len()).any(|w| w == needle.as_bytes()), "{}: {} holds {needle:?}", p.kind, f.display());
                }
            }
        }
    }
    let view = IndexView::open(&IndexPaths::new(&h.index)).expect("open index");
    let stored = view.stored_texts().expect("stored texts").join("\n");
    assert!(stored.contains("[redacted:"), "the stored texts were read");
    assert_eq!(leaks(&stored, &secrets), Vec::<&str>::new(), "stored in the index");

    // Searching for the secret itself finds nothing that shows it. (Text output says
    // "nothing matched `<query>`": the asker's own words are not history, and a
    // password out of its context cannot be told from any other word.)
    for p in &secrets {
        for args in [vec!["search", "--json", "--", p.secret.as_str()], vec!["search", "--", p.secret.as_str()]] {
            let out = stdout_of(&h, &args);
            let found = match out.strip_prefix("nothing matched `") {
                Some(rest) => {
                    rest.split_once("` (tried exact, stemmed, fuzzy and relevance)\n").map_or(rest, |(_, after)| after).to_string()
                }
                None => out.clone(),
            };
            assert!(!leaks(&found, std::slice::from_ref(p)).contains(&p.kind), "{}: deja {args:?} shows it:\n{out}", p.kind);
        }
    }

    // The MCP server: recall for each secret, and each session's context.
    let mut server =
        h.command(&["mcp"]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().expect("spawn deja mcp");
    let mut stdin = server.stdin.take().expect("stdin");
    let stdout = server.stdout.take().expect("stdout");
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut ask = |id: u64, method: &str, params: Value| -> Value {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        writeln!(stdin, "{line}").and_then(|()| stdin.flush()).expect("write to deja mcp");
        loop {
            let reply = rx.recv_timeout(REPLY_WAIT).expect("deja mcp answered");
            let v: Value = serde_json::from_str(&reply).unwrap_or_else(|e| panic!("{e}: {reply}"));
            if v["id"] == id {
                return v;
            }
        }
    };
    ask(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "secrets-test", "version": "1"}}),
    );
    let mut next = 2;
    let mut calls: Vec<(String, Value)> = secrets.iter().map(|p| (p.kind.to_string(), json!({"mode": "recall", "q": p.secret}))).collect();
    for id in [CLAUDE_ID, CODEX_ID, DEEPSEEK_ID] {
        calls.push((format!("context {id}"), json!({"mode": "context", "q": id})));
        calls.push((format!("recall {id}"), json!({"mode": "recall", "q": "pasted here setting file", "budget": 60000})));
    }
    calls.push(("how".into(), json!({"mode": "how", "q": "curl"})));
    calls.push(("orient".into(), json!({"mode": "orient", "q": "/src/vault"})));
    for (what, args) in calls {
        let v = ask(next, "tools/call", json!({"name": "deja", "arguments": args}));
        next += 1;
        let text = v.to_string();
        let answer = v["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("{what}: {text}"));
        // "nothing matched — searched … for <q>" and a framed answer's header line
        // quote the asker's own query, not history.
        if answer.contains(": nothing matched") && !answer.contains("<deja-recall") {
            continue;
        }
        let quoted = args["q"].as_str().unwrap_or_default();
        let history: Vec<&str> = answer.lines().enumerate().filter(|(i, l)| !(*i == 2 && l.contains(quoted))).map(|(_, l)| l).collect();
        assert_eq!(leaks(&history.join("\n"), &secrets), Vec::<&str>::new(), "deja mcp {what}: {text}");
    }
    let _ = server.kill();
    let _ = server.wait();
}

//! End-to-end tests of the `deja` binary over synthetic homes: a home with DeepSeek
//! Harness, Claude Code and Codex CLI stores is indexed with `deja index --all`,
//! searched with `deja search --json`, grown (only the new turns are read) and
//! pruned (a deleted source's session stays searchable). Records are written here
//! from the format specs, independently of the adapters' own synthetic writers.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};

pub(crate) struct Home {
    _tmp: tempfile::TempDir,
    pub(crate) home: PathBuf,
    pub(crate) index: PathBuf,
}

impl Home {
    pub(crate) fn new() -> Home {
        let tmp = tempfile::tempdir().expect("tempdir");
        let home = tmp.path().join("home");
        let index = tmp.path().join("index");
        std::fs::create_dir_all(&home).expect("home");
        Home { _tmp: tmp, home, index }
    }

    /// `deja ARGS` in this home, with nothing of the caller's environment but `PATH`.
    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_deja"));
        cmd.args(args)
            .env_clear()
            .env("DEJA_WATCH", "off")
            .env("HOME", &self.home)
            .env("DEJA_INDEX_DIR", &self.index)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default());
        cmd
    }

    pub(crate) fn deja(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run deja")
    }

    pub(crate) fn json(&self, args: &[&str]) -> Value {
        let out = self.deja(args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("deja {args:?}: {e}\nstdout: {stdout}\nstderr: {}", String::from_utf8_lossy(&out.stderr)))
    }

    fn search(&self, query: &str) -> Value {
        self.json(&["search", query, "--json"])
    }

    pub(crate) fn write(&self, rel: &str, content: &[u8]) -> PathBuf {
        let p = self.home.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, content).expect("write");
        p
    }
}

pub(crate) fn lines(values: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for v in values {
        out.extend(serde_json::to_vec(v).expect("json"));
        out.push(b'\n');
    }
    out
}

pub(crate) const CLAUDE_SESSION: &str = "5f0c7e2a-1111-4222-8333-944445555666";
pub(crate) const CODEX_THREAD: &str = "0199aa00-1111-7222-8333-944445555666";
pub(crate) const DSH_SESSION: &str = "1234abcd-0000-4000-8000-000000000000";

fn claude_records() -> Vec<Value> {
    vec![
        json!({"type":"queue-operation","operation":"enqueue","timestamp":"2026-03-02T10:00:00.000Z","sessionId":CLAUDE_SESSION,"content":"why does the nightly build time out?"}),
        json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":CLAUDE_SESSION,"cwd":"/src/app","timestamp":"2026-03-02T10:00:00.000Z","message":{"role":"user","content":"why does the nightly build time out? my key is sk-proj-abcdefghijklmnopqrstuvwx0123 and AKIAIOSFODNN7EXAMPLE"}}),
        json!({"type":"attachment","uuid":"a0","parentUuid":"u1","sessionId":CLAUDE_SESSION,"attachment":{"type":"skill_listing","content":"zebracatalogue skill list"}}),
        json!({"type":"assistant","uuid":"a1","parentUuid":"a0","sessionId":CLAUDE_SESSION,"cwd":"/src/app","timestamp":"2026-03-02T10:00:05.000Z","message":{"id":"msg_1","role":"assistant","content":[{"type":"thinking","thinking":"quasarthought about the CI config"},{"type":"text","text":"Checking the nightly workflow timeout."}]}}),
        json!({"type":"assistant","uuid":"a2","parentUuid":"a1","sessionId":CLAUDE_SESSION,"cwd":"/src/app","timestamp":"2026-03-02T10:00:06.000Z","message":{"id":"msg_1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cd ci && make nightly"}}]}}),
        json!({"type":"user","uuid":"u2","parentUuid":"a2","sessionId":CLAUDE_SESSION,"cwd":"/src/app","timestamp":"2026-03-02T10:00:09.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"make: *** [nightly] Error 124","is_error":true}]}}),
    ]
}

fn codex_records() -> Vec<Value> {
    vec![
        json!({"timestamp":"2026-04-01T08:00:00Z","type":"session_meta","payload":{"id":CODEX_THREAD,"session_id":CODEX_THREAD,"cwd":"/src/billing"}}),
        json!({"timestamp":"2026-04-01T08:00:01Z","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"You are Codex, obey the harness"}]}}),
        json!({"timestamp":"2026-04-01T08:00:02Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"run the invoice rounding tests"}]}}),
        json!({"timestamp":"2026-04-01T08:00:02Z","type":"event_msg","payload":{"type":"user_message","message":"run the invoice rounding tests"}}),
        json!({"timestamp":"2026-04-01T08:00:03Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","call_id":"c7","arguments":"{\"cmd\":\"go test ./invoice/...\",\"workdir\":\"/src/billing\"}"}}),
        json!({"timestamp":"2026-04-01T08:00:09Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c7","output":"Wall time: 5.9 seconds\nProcess exited with code 1\nOutput:\n--- FAIL: TestRoundHalfEven\n"}}),
        json!({"timestamp":"2026-04-01T08:00:10Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"TestRoundHalfEven fails because math.Floor truncates negative invoices."}]}}),
    ]
}

fn dsh_records() -> Vec<Vec<Value>> {
    // Frames as dsh flushes them: header + prompt, streamed answer, completion.
    vec![
        vec![
            json!({"type":"session","version":0,"id":format!("session-{DSH_SESSION}"),"createdAt":1787320000000u64,"cwd":"/src/pool","delegationDepth":0}),
            json!({"type":"user/message","seq":3,"time":1787320000100u64,"data":{"content":[{"type":"text","text":"what pool size do we run in staging?"}],"source":{"kind":"user"},"role":"user"}}),
            json!({"type":"user/message","seq":4,"time":1787320000100u64,"data":{"content":[{"type":"text","text":"Current runtime context: xylophonesandbox approval policy"}],"source":{"kind":"plugin","plugin":"@deepseek-ai/dsh-system-prompt"},"role":"user"}}),
        ],
        vec![
            json!({"type":"assistant/chunk","seq":6,"time":1787320000200u64,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","text":"Checking "}}}),
            json!({"type":"text-chunks","seq0":7,"time0":1787320000210u64,"data":{"turn":1,"step":1,"index":0,"dt":[5,6],"texts":["the ","pgpool ","config"]}}),
        ],
        vec![
            json!({"type":"assistant/message","seq":10,"time":1787320000300u64,"data":{"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"reasoning","text":"nebulareasoning look in pool.ini"},{"type":"text","text":"Checking the pgpool config: staging runs pool_size 40."}]}}}),
            json!({"type":"turn/end","seq":13,"time":1787320000401u64,"data":{"turn":1}}),
        ],
        // An interrupted second turn: only streamed deltas survive.
        vec![
            json!({"type":"user/message","seq":20,"time":1787320001000u64,"data":{"content":[{"type":"text","text":"and in production?"}],"source":{"kind":"user"},"role":"user"}}),
            json!({"type":"assistant/chunk","seq":21,"time":1787320001100u64,"data":{"chunk":{"type":"text-delta","text":"Production "}}}),
            json!({"type":"text-chunks","seq0":22,"time0":1787320001110u64,"data":{"texts":["uses ","marmalade ","pooling"]}}),
        ],
    ]
}

fn zstd_frames(frames: &[Vec<Value>]) -> Vec<u8> {
    let mut out = Vec::new();
    for f in frames {
        out.extend(zstd::encode_all(&lines(f)[..], 3).expect("zstd"));
    }
    out
}

pub(crate) fn build_home(h: &Home) -> (PathBuf, PathBuf, PathBuf) {
    let claude = h.write(&format!(".claude/projects/-src-app/{CLAUDE_SESSION}.jsonl"), &lines(&claude_records()));
    let codex = h.write(&format!(".codex/sessions/2026/04/01/rollout-2026-04-01T08-00-00-{CODEX_THREAD}.jsonl"), &lines(&codex_records()));
    let dsh_dir = format!(".dsh/sessions/--src-pool--/session-{DSH_SESSION}");
    // An older generation beside the newest: only the newest may be read.
    h.write(&format!("{dsh_dir}/session.jsonl.zstd"), &zstd_frames(&dsh_records()[..1]));
    let dsh = h.write(&format!("{dsh_dir}/session.v4.jsonl.zstd"), &zstd_frames(&dsh_records()));
    (claude, codex, dsh)
}

/// A Claude Code transcript of `records` for session `id` in `/src/web`, indexed once.
fn indexed_web_log(h: &Home, id: &str, records: &[Value]) -> PathBuf {
    let log = h.write(&format!(".claude/projects/-src-web/{id}.jsonl"), &lines(records));
    assert!(h.deja(&["index"]).status.success());
    log
}

/// Appends records to a log, as a harness writing on does.
fn append(log: &Path, records: &[Value]) {
    let mut f = std::fs::OpenOptions::new().append(true).open(log).expect("open the log");
    f.write_all(&lines(records)).expect("append");
}

fn hits(v: &Value) -> &Vec<Value> {
    v["hits"].as_array().expect("hits array")
}

fn hit_harnesses(v: &Value) -> Vec<String> {
    hits(v).iter().map(|h| h["session"]["harness"].as_str().unwrap_or("").to_string()).collect()
}

#[test]
fn index_search_grow_and_prune() {
    let h = Home::new();
    let (claude, codex, _dsh) = build_home(&h);

    let report = h.json(&["index", "--all", "--json"]);
    assert_eq!(report["schema_version"], 1);
    for id in ["claude", "codex", "deepseek"] {
        let r = &report["harnesses"][id];
        assert_eq!(r["sessions"], 1, "{id}: {r}");
        assert!(r["unreadable"].as_array().is_some_and(|u| u.is_empty()), "{id}: {r}");
    }

    // A phrase from each harness finds its session, with the right harness.
    for (q, want) in [("nightly build time out", "claude"), ("invoice rounding tests", "codex"), ("pool size", "deepseek")] {
        let r = h.search(q);
        assert_eq!(r["schema_version"], 1);
        assert_eq!(r["tier"], "exact", "{q}: {r}");
        assert_eq!(hit_harnesses(&r), vec![want.to_string()], "{q}: {r}");
        let hit = &hits(&r)[0];
        for key in ["harness", "id", "title", "project", "path", "started", "updated"] {
            assert!(hit["session"].get(key).is_some(), "{key} missing in {hit}");
        }
        assert!(!hit["snippets"].as_array().expect("snippets").is_empty());
        assert!(hit["turns"].as_array().expect("turns").len() <= 5);
    }
    // Quoted phrase must be contiguous.
    assert_eq!(hits(&h.search("\"time out nightly\"")).len(), 0);
    assert_eq!(hit_harnesses(&h.search("\"nightly build\"")), vec!["claude"]);

    // The streamed answer that completed is indexed once; the interrupted one is kept.
    let dsh = h.search("\"staging runs pool_size 40\"");
    assert_eq!(hits(&dsh).len(), 1);
    let shown = h.json(&["show", DSH_SESSION, "--json"]);
    let texts: Vec<&str> = shown["turns"].as_array().expect("turns").iter().filter_map(|t| t["text"].as_str()).collect();
    assert_eq!(texts.iter().filter(|t| t.contains("pgpool")).count(), 1, "{texts:?}");
    assert!(texts.contains(&"Production uses marmalade pooling"), "{texts:?}");
    assert_eq!(hit_harnesses(&h.search("marmalade")), vec!["deepseek"]);

    // Reasoning and harness-injected text are not indexed; neither are secrets.
    for hidden in [
        "quasarthought",
        "nebulareasoning",
        "xylophonesandbox",
        "zebracatalogue",
        "harness",
        "AKIAIOSFODNN7EXAMPLE",
        "sk-proj-abcdefghijklmnopqrstuvwx0123",
    ] {
        let r = h.search(hidden);
        assert!(hits(&r).is_empty(), "{hidden} was found: {r}");
    }
    let claude_shown = h.json(&["show", CLAUDE_SESSION, "--json"]);
    let first = claude_shown["turns"][0]["text"].as_str().expect("text");
    assert!(first.contains("[redacted:openai_key]") && first.contains("[redacted:aws_key]"), "{first}");
    assert_no_bytes_under(&h.index, &[b"AKIAIOSFODNN7EXAMPLE", b"akiaiosfodnn7example", b"abcdefghijklmnopqrstuvwx0123"]);

    // Work signals: the failed command keeps its exit status.
    let tool_turn = &claude_shown["turns"].as_array().expect("turns").iter().find(|t| t["role"] == "tool_call").expect("tool turn").clone();
    assert_eq!(tool_turn["tool"]["command"], "cd ci && make nightly");
    let codex_shown = h.json(&["show", CODEX_THREAD, "--json"]);
    let cmd = codex_shown["turns"].as_array().expect("turns").iter().find(|t| t["role"] == "tool_call").expect("codex call").clone();
    assert_eq!(cmd["tool"]["exit"], json!({"code": 1}), "{cmd}");
    assert_eq!(h.json(&["search", "TestRoundHalfEven", "--role", "command", "--json"])["hits"].as_array().map(Vec::len), Some(1));

    // Nothing changed: nothing is read again.
    let again = h.json(&["index", "--json"]);
    for id in ["claude", "codex", "deepseek"] {
        assert_eq!(again["harnesses"][id]["parsed"], 0, "{again}");
        assert_eq!(again["harnesses"][id]["resumed"], 0, "{again}");
    }

    // A grown log: only the new turns are read.
    let before = claude_shown["turns"].as_array().expect("turns").len();
    let mut f = std::fs::OpenOptions::new().append(true).open(&claude).expect("open claude log");
    f.write_all(&lines(&[
        json!({"type":"user","uuid":"u3","parentUuid":"u2","sessionId":CLAUDE_SESSION,"cwd":"/src/app","timestamp":"2026-03-02T10:05:00.000Z","message":{"role":"user","content":"raise the timeout to ten minutes then"}}),
        json!({"type":"assistant","uuid":"a3","parentUuid":"u3","sessionId":CLAUDE_SESSION,"cwd":"/src/app","timestamp":"2026-03-02T10:05:04.000Z","message":{"id":"msg_3","role":"assistant","content":[{"type":"text","text":"Raised TIMEOUT to 600 in the periwinkle workflow."}]}}),
    ]))
    .expect("append");
    drop(f);
    let grown = h.json(&["index", "--json"]);
    assert_eq!(grown["harnesses"]["claude"]["resumed"], 1, "{grown}");
    assert_eq!(grown["harnesses"]["claude"]["parsed"], 0, "{grown}");
    assert_eq!(grown["harnesses"]["claude"]["turns"], 2, "only the two new turns: {grown}");
    let bytes_read = grown["harnesses"]["claude"]["bytes_read"].as_u64().expect("bytes_read");
    let file_len = std::fs::metadata(&claude).expect("stat").len();
    assert!(bytes_read < file_len / 2, "read {bytes_read} of {file_len} bytes");
    let after = h.json(&["show", CLAUDE_SESSION, "--json"]);
    let turns = after["turns"].as_array().expect("turns");
    assert_eq!(turns.len(), before + 2);
    let mut seqs: Vec<u64> = turns.iter().filter_map(|t| t["seq"].as_u64()).collect();
    seqs.dedup();
    assert_eq!(seqs.len(), turns.len(), "turn numbers are unique");
    assert_eq!(hit_harnesses(&h.search("periwinkle")), vec!["claude"]);
    assert_eq!(hits(&h.search("nightly build time out")).len(), 1, "old turns are not duplicated");

    // A source the harness deleted: its session stays searchable.
    std::fs::remove_file(&codex).expect("rm");
    let pruned = h.json(&["index", "--json"]);
    assert_eq!(pruned["harnesses"]["codex"]["sources"], 0);
    assert_eq!(hit_harnesses(&h.search("invoice rounding tests")), vec!["codex"]);

    // harnesses lists every adapter with store paths and counts.
    let hs = h.json(&["harnesses", "--json"]);
    let list = hs["harnesses"].as_array().expect("list");
    for id in ["claude", "codex", "deepseek"] {
        let e = list.iter().find(|e| e["id"] == id).unwrap_or_else(|| panic!("{id} missing: {hs}"));
        assert!(e["stores"].as_array().is_some_and(|s| !s.is_empty()));
        assert_eq!(e["sessions"], 1);
    }
}

fn assert_no_bytes_under(dir: &Path, needles: &[&[u8]]) {
    for entry in walk(dir) {
        let bytes = std::fs::read(&entry).expect("read index file");
        for n in needles {
            assert!(!bytes.windows(n.len()).any(|w| w == *n), "{} holds {}", entry.display(), String::from_utf8_lossy(n));
        }
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
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

#[test]
fn typo_falls_to_fuzzy_and_partial_overlap_to_relevance() {
    let h = Home::new();
    build_home(&h);
    let r = h.search("invoce rounding");
    assert_eq!(r["tier"], "fuzzy", "{r}");
    assert_eq!(hit_harnesses(&r), vec!["codex"]);
    let r = h.search("nightly workflow kubernetes");
    assert_eq!(r["tier"], "relevance", "{r}");
    assert_eq!(hit_harnesses(&r)[0], "claude");
    assert!(r["dropped"].as_array().is_some_and(|d| d.iter().any(|w| w == "kubernetes")), "{r}");
    // Filters.
    assert!(hits(&h.json(&["search", "nightly", "--harness", "codex", "--json"])).is_empty());
    assert_eq!(hits(&h.json(&["search", "pool", "--project", "pool", "--json"])).len(), 1);
    assert!(hits(&h.json(&["search", "nightly", "--since", "2026-06-01", "--json"])).is_empty());
    // Shorthand and an empty result's exit code.
    let out = h.deja(&["nightly", "build"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("nightly"));
    let out = h.deja(&["qwertyuiopasdf"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn corrupt_sources_are_reported_and_the_rest_indexed() {
    let h = Home::new();
    build_home(&h);
    h.write(
        ".dsh/sessions/--x--/session-00000000-0000-4000-8000-00000000dead/session.v4.jsonl.zstd",
        &[0x28, 0xB5, 0x2F, 0xFD, 0xff, 0x00, 0x13],
    );
    h.write(
        ".claude/projects/-src-app/broken.jsonl",
        b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"fine line about kumquats\"}}\n\x00\xff garbage\n{\"torn\":",
    );
    let report = h.json(&["index", "--json"]);
    let unreadable = report["harnesses"]["deepseek"]["unreadable"].as_array().expect("unreadable");
    assert_eq!(unreadable.len(), 1, "{report}");
    assert!(unreadable[0]["path"].as_str().is_some_and(|p| p.contains("dead")));
    assert!(report["harnesses"]["claude"]["skipped_lines"].as_u64() >= Some(2), "{report}");
    assert_eq!(hit_harnesses(&h.search("kumquats")), vec!["claude"]);
    assert_eq!(hit_harnesses(&h.search("marmalade")), vec!["deepseek"]);
}

#[test]
fn empty_home_says_where_it_looked() {
    let h = Home::new();
    let out = h.deja(&["index"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("No agent history found"), "{text}");
    assert!(text.contains(".claude") && text.contains(".codex") && text.contains(".dsh"), "{text}");
}

#[test]
fn demo_runs_the_whole_pipeline() {
    let h = Home::new();
    let v = h.json(&["demo", "--json"]);
    assert!(v["harnesses"].as_u64() >= Some(3));
    for s in v["searches"].as_array().expect("searches") {
        assert!(!s["result"]["hits"].as_array().expect("hits").is_empty(), "{s}");
    }
}

#[test]
fn a_second_writer_waits_and_searches_never_block() {
    let h = Home::new();
    build_home(&h);
    assert!(h.deja(&["index"]).status.success());
    let lock = std::fs::File::options().write(true).open(h.index.join("writer.lock")).expect("open lock");
    lock.lock().expect("hold the writer lock");

    let stderr_path = h.index.join("second-writer.stderr");
    let mut child = Command::new(env!("CARGO_BIN_EXE_deja"))
        .args(["index"])
        .env_clear()
        .env("DEJA_WATCH", "off")
        .env("HOME", &h.home)
        .env("DEJA_INDEX_DIR", &h.index)
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).expect("stderr file"))
        .spawn()
        .expect("spawn second writer");
    let mut said_waiting = false;
    for _ in 0..400 {
        if std::fs::read_to_string(&stderr_path).unwrap_or_default().contains("waiting") {
            said_waiting = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    assert!(said_waiting, "the second `deja index` should say it is waiting");
    assert!(child.try_wait().expect("poll").is_none(), "it must wait, not exit");

    // A search while the writer lock is held answers from the last commit.
    assert_eq!(hit_harnesses(&h.search("invoice rounding tests")), vec!["codex"]);

    drop(lock);
    let status = child.wait().expect("second writer finishes");
    assert!(status.success());
}

#[test]
fn a_result_that_lands_after_an_incremental_read_folds_into_its_call() {
    let h = Home::new();
    let id = "7a7a7a7a-1111-4222-8333-944445555666";
    let log = indexed_web_log(
        &h,
        id,
        &[
            json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":id,"cwd":"/src/web","timestamp":"2026-05-01T10:00:00Z","message":{"role":"user","content":"run the webpack build"}}),
            json!({"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":id,"cwd":"/src/web","timestamp":"2026-05-01T10:00:02Z","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"toolu_9","name":"Bash","input":{"command":"npm run build"}}]}}),
        ],
    );
    append(
        &log,
        &[
            json!({"type":"user","uuid":"u2","parentUuid":"a1","sessionId":id,"cwd":"/src/web","timestamp":"2026-05-01T10:00:09Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"Exit code 2\nModule not found: Error: Can't resolve 'lodash-es'","is_error":true}]}}),
            json!({"type":"user","uuid":"u3","parentUuid":"u2","sessionId":id,"cwd":"/src/web","timestamp":"2026-05-01T10:01:00Z","message":{"role":"user","content":"add lodash-es to the dependencies"}}),
        ],
    );
    let grown = h.json(&["index", "--json"]);
    assert_eq!(grown["harnesses"]["claude"]["resumed"], 1, "{grown}");
    let shown = h.json(&["show", id, "--json"]);
    let turns = shown["turns"].as_array().expect("turns");
    assert_eq!(turns.iter().filter(|t| t["role"] == "tool_output").count(), 0, "{turns:?}");
    let call = turns.iter().find(|t| t["role"] == "tool_call").expect("call");
    assert!(call["text"].as_str().is_some_and(|t| t.contains("lodash-es")), "{call}");
    assert_eq!(call["tool"]["is_error"], true, "{call}");
    assert_eq!(call["tool"]["exit"], json!({"code": 2}), "{call}");
    let seqs: Vec<u64> = turns.iter().filter_map(|t| t["seq"].as_u64()).collect();
    assert_eq!(seqs, [0, 1, 2], "the folded result leaves no gap: {turns:?}");
    assert_eq!(hit_harnesses(&h.json(&["search", "lodash-es", "--role", "command", "--json"])), vec!["claude"]);
}

#[test]
fn an_edit_whose_failure_lands_after_an_incremental_read_loses_its_span() {
    let h = Home::new();
    let id = "7c7c7c7c-1111-4222-8333-944445555666";
    let log = indexed_web_log(
        &h,
        id,
        &[
            json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":id,"cwd":"/src/web","timestamp":"2026-05-01T10:00:00Z","message":{"role":"user","content":"round half to even"}}),
            json!({"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":id,"cwd":"/src/web","timestamp":"2026-05-01T10:00:02Z","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"toolu_7","name":"Edit","input":{"file_path":"/src/web/round.go","old_string":"math.Floor(x)","new_string":"math.RoundToEven(x)"}}]}}),
        ],
    );
    let call =
        |h: &Home| h.json(&["show", id, "--json"])["turns"].as_array().and_then(|t| t.iter().find(|t| t["role"] == "tool_call").cloned());
    assert!(call(&h).is_some_and(|c| c["edit"]["path"] == "/src/web/round.go"), "an edit with no result yet keeps its span");
    append(
        &log,
        &[
            json!({"type":"user","uuid":"u2","parentUuid":"a1","sessionId":id,"cwd":"/src/web","timestamp":"2026-05-01T10:00:04Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_7","content":"<tool_use_error>String to replace not found in file.</tool_use_error>","is_error":true}]}}),
        ],
    );
    assert_eq!(h.json(&["index", "--json"])["harnesses"]["claude"]["resumed"], 1);
    let failed = call(&h).expect("call");
    assert!(failed["edit"].is_null(), "the replace found nothing, so nothing was edited: {failed}");
    assert_eq!(failed["files"][0]["path"], "/src/web/round.go", "the file it was about stays: {failed}");
}

#[test]
fn a_rename_in_a_grown_transcript_renames_the_session_and_a_new_prompt_does_not() {
    let h = Home::new();
    let id = "7b7b7b7b-1111-4222-8333-944445555666";
    let log = indexed_web_log(
        &h,
        id,
        &[
            json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":id,"cwd":"/src/web","timestamp":"2026-05-01T10:00:00Z","message":{"role":"user","content":"tidy the webpack config"}}),
        ],
    );
    let title = |h: &Home| h.json(&["show", id, "--json"])["session"]["title"].clone();
    assert_eq!(title(&h), "tidy the webpack config");
    append(
        &log,
        &[
            json!({"type":"user","uuid":"u2","parentUuid":"u1","sessionId":id,"cwd":"/src/web","timestamp":"2026-05-01T10:05:00Z","message":{"role":"user","content":"now split the vendor chunk"}}),
        ],
    );
    assert_eq!(h.json(&["index", "--json"])["harnesses"]["claude"]["resumed"], 1);
    assert_eq!(title(&h), "tidy the webpack config", "a later prompt is not a new title");
    append(
        &log,
        &[
            json!({"type":"custom-title","customTitle":"Webpack clean-up","sessionId":id}),
            json!({"type":"user","uuid":"u3","parentUuid":"u2","sessionId":id,"cwd":"/src/web","timestamp":"2026-05-01T10:09:00Z","message":{"role":"user","content":"and drop the legacy loader"}}),
        ],
    );
    assert_eq!(h.json(&["index", "--json"])["harnesses"]["claude"]["resumed"], 1);
    assert_eq!(title(&h), "Webpack clean-up", "a rename is");

    // A rename as the last thing done adds no turn and is still taken, by the archive
    // too: the session keeps that name after its transcript is gone and the index is
    // built again from the archive.
    let turns = |h: &Home| h.json(&["show", id, "--json"])["turns"].as_array().map_or(0, Vec::len);
    let before = turns(&h);
    append(&log, &[json!({"type":"custom-title","customTitle":"Webpack clean-up, shipped","sessionId":id})]);
    assert_eq!(h.json(&["index", "--json"])["harnesses"]["claude"]["resumed"], 1);
    assert_eq!(title(&h), "Webpack clean-up, shipped");
    assert_eq!(turns(&h), before, "a rename adds no turn");
    append(&log, &[json!({"type":"custom-title","customTitle":"Webpack clean-up, shipped","sessionId":id})]);
    let same = h.json(&["index", "--json"]);
    assert_eq!(
        (&same["harnesses"]["claude"]["resumed"], &same["harnesses"]["claude"]["sessions"]),
        (&json!(1), &json!(0)),
        "the same name again writes nothing: {same}"
    );
    std::fs::remove_file(&log).expect("rm");
    assert!(h.deja(&["index", "--rebuild"]).status.success());
    assert_eq!(title(&h), "Webpack clean-up, shipped", "the archive holds the new name");
    assert_eq!(turns(&h), before);
}

#[test]
fn a_pi_session_named_after_its_last_turn_takes_the_name() {
    let h = Home::new();
    let id = "0199bb00-0000-7000-8000-0000000000aa";
    let log = h.write(
        &format!(".pi/agent/sessions/--src-notes--/2026-04-02T10-00-00-000Z_{id}.jsonl"),
        &lines(&[
            json!({"type":"session","version":3,"id":id,"timestamp":"2026-04-02T10:00:00.000Z","cwd":"/src/notes"}),
            json!({"type":"message","id":"m1","parentId":null,"timestamp":"2026-04-02T10:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"dedupe the tag index"}]}}),
        ]),
    );
    assert!(h.deja(&["index"]).status.success());
    let title = |h: &Home| h.json(&["show", id, "--json"])["session"]["title"].clone();
    assert_eq!(title(&h), "dedupe the tag index");
    append(
        &log,
        &[json!({"type":"session_info","id":"i1","parentId":"m1","timestamp":"2026-04-02T10:05:00.000Z","name":"Tag index dedupe"})],
    );
    assert_eq!(h.json(&["index", "--json"])["harnesses"]["pi"]["resumed"], 1);
    assert_eq!(title(&h), "Tag index dedupe", "a `/name` with no turn after it is taken");
    assert_eq!(h.json(&["show", id, "--json"])["turns"].as_array().map_or(0, Vec::len), 1);
}

#[test]
fn aider_history_in_a_directory_only_another_harness_names_is_found() {
    let h = Home::new();
    // A project outside the home and outside every root aider's discovery scans.
    let project = h._tmp.path().join("elsewhere/acme-shop");
    std::fs::create_dir_all(&project).expect("project");
    let cwd = project.display().to_string();
    let claude = [
        json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":CLAUDE_SESSION,"cwd":cwd,"timestamp":"2026-03-02T10:00:00.000Z","message":{"role":"user","content":"tidy the checkout module"}}),
        json!({"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":CLAUDE_SESSION,"cwd":cwd,"timestamp":"2026-03-02T10:00:05.000Z","message":{"id":"msg_1","role":"assistant","content":[{"type":"text","text":"Done."}]}}),
    ];
    h.write(".claude/projects/-elsewhere-acme-shop/s.jsonl", &lines(&claude));
    std::fs::write(
        project.join(".aider.chat.history.md"),
        "\n# aider chat started at 2026-03-03 09:00:00\n\n#### make the basket total use pennyweights\n\nThe basket total now sums pennyweights.\n",
    )
    .expect("aider history");

    // The first index finds it: aider is discovered after the other harnesses are read.
    let report = h.json(&["index", "--json"]);
    assert_eq!(report["harnesses"]["aider"]["sources"], 1, "{report}");
    assert_eq!(hit_harnesses(&h.search("pennyweights")), vec!["aider"]);
    let harnesses = h.json(&["harnesses", "--json"]);
    let aider = harnesses["harnesses"].as_array().expect("list").iter().find(|x| x["id"] == "aider").expect("aider").clone();
    assert_eq!(aider["sources"], 1, "harnesses sees the learned directory too: {aider}");

    // A refresh with nothing changed reads nothing, aider included.
    let again = h.json(&["index", "--json"]);
    assert_eq!(again["harnesses"]["aider"]["unchanged"], 1, "{again}");
    assert_eq!(again["harnesses"]["aider"]["parsed"], 0, "{again}");

    // Grown between runs: found through the remembered directory and re-read.
    let mut f = std::fs::OpenOptions::new().append(true).open(project.join(".aider.chat.history.md")).expect("open");
    f.write_all(b"\n# aider chat started at 2026-03-04 09:00:00\n\n#### now round the florins\n\nRounded.\n").expect("append");
    drop(f);
    h.json(&["index", "--json"]);
    assert_eq!(hit_harnesses(&h.search("florins")), vec!["aider"]);
}

#[test]
fn encrypted_files_without_their_key_are_counted_not_silently_missed() {
    let h = Home::new();
    h.write(
        "Library/Application Support/com.openai.chat/conversations-v3-3c3c3c3c-0000-4000-8000-000000000006/e3.data",
        // Not JSON: nonce, ciphertext and tag as the v3 app writes them.
        &(0u8..44).map(|i| i.wrapping_mul(37) ^ 0x9a).collect::<Vec<u8>>(),
    );
    let harnesses = h.json(&["harnesses", "--json"]);
    let chatgpt = harnesses["harnesses"].as_array().expect("list").iter().find(|x| x["id"] == "chatgpt").expect("chatgpt").clone();
    assert_eq!(chatgpt["not_opened"], 1, "{chatgpt}");
    assert!(chatgpt["not_opened_reasons"][0].as_str().is_some_and(|r| r.contains("DEJA_CHATGPT_KEY")), "{chatgpt}");
    let text = String::from_utf8_lossy(&h.deja(&["harnesses"]).stdout).into_owned();
    assert!(text.contains("1 file(s) found but not opened"), "{text}");
    let report = h.json(&["index", "--json"]);
    assert_eq!(report["harnesses"]["chatgpt"]["locked"], 1, "{report}");
    let out = String::from_utf8_lossy(&h.deja(&["index"]).stdout).into_owned();
    assert!(out.contains("not opened (chatgpt): 1 file(s)"), "{out}");
}

#[test]
fn a_rewritten_document_replaces_its_session() {
    let h = Home::new();
    let doc = |history: Value| {
        serde_json::to_vec(&json!({"sessionId":"d0c00000-1111-4000-8000-000000000001","title":"Basket","workspaceDirectory":"/src/shop","history":history}))
            .expect("json")
    };
    let rel = ".continue/sessions/d0c00000-1111-4000-8000-000000000001.json";
    h.write(
        rel,
        &doc(json!([
            {"message":{"role":"user","content":"why is the basket total wrong"}},
            {"message":{"role":"assistant","content":"A first guess about rounding ducats."}}
        ])),
    );
    h.json(&["index", "--json"]);
    assert_eq!(hit_harnesses(&h.search("ducats")), vec!["continue"]);
    // Continue rewrites the whole file: the old answer edited away, two turns added.
    h.write(
        rel,
        &doc(json!([
            {"message":{"role":"user","content":"why is the basket total wrong"}},
            {"message":{"role":"assistant","content":"It sums before the discount is applied to the guilders."}},
            {"message":{"role":"user","content":"fix it please"}},
            {"message":{"role":"assistant","content":"Fixed: the discount now comes first."}}
        ])),
    );
    let report = h.json(&["index", "--json"]);
    assert_eq!(report["harnesses"]["continue"]["parsed"], 1, "{report}");
    assert!(hits(&h.search("ducats")).is_empty(), "the rewritten-away answer is gone");
    let found = h.search("guilders");
    assert_eq!(hit_harnesses(&found), vec!["continue"]);
    let harnesses = h.json(&["harnesses", "--json"]);
    let cont = harnesses["harnesses"].as_array().expect("list").iter().find(|x| x["id"] == "continue").expect("continue").clone();
    assert_eq!(cont["sessions"], 1, "one session, not two: {cont}");
    let shown = h.json(&["show", "d0c00000", "--json"]);
    assert_eq!(shown["turns"].as_array().map(Vec::len), Some(4), "{shown}");
}

#[test]
fn a_reader_that_stops_early_is_no_crash() {
    use std::process::Stdio;
    let h = Home::new();
    build_home(&h);
    h.json(&["index", "--json"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_deja"))
        .args(["demo", "--json"])
        .env_clear()
        .env("DEJA_WATCH", "off")
        .env("HOME", &h.home)
        .env("DEJA_INDEX_DIR", &h.index)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    // Read nothing and close the pipe, as `| head -c 0` would.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// One zstd frame of RLE blocks decoding to `decoded` zero bytes (4 bytes on disk per
/// 128 KiB): what a 263 KB file that expands to 8 GiB is made of.
fn zstd_rle_bomb(decoded: u64) -> Vec<u8> {
    deja_core::read::zstd_rle_bomb(decoded)
}

#[test]
fn a_decompression_bomb_is_named_and_skipped_and_the_rest_indexed() {
    let h = Home::new();
    build_home(&h);
    let bomb =
        h.write(".dsh/sessions/--bomb--/session-00000000-0000-4000-8000-0000000b0mb0/session.v4.jsonl.zstd", &zstd_rle_bomb(8 << 30));
    assert!(std::fs::metadata(&bomb).expect("bomb").len() < 300 << 10, "the bomb is small on disk");

    let out = h.deja(&["index", "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}; stderr: {stderr}"));
    assert_eq!(out.status.code(), Some(3), "indexed with something unread: {report}");
    let unreadable = report["harnesses"]["deepseek"]["unreadable"].as_array().expect("unreadable");
    assert_eq!(unreadable.len(), 1, "{report}");
    assert!(unreadable[0]["path"].as_str().is_some_and(|p| p.contains("0000000b0mb0")), "{report}");
    assert!(unreadable[0]["reason"].as_str().is_some_and(|r| r.contains("decompression bomb")), "{report}");
    for id in ["claude", "codex", "deepseek"] {
        assert_eq!(report["harnesses"][id]["sessions"], 1, "{id}: {report}");
    }

    // Searches (and their refresh) keep working, and the bomb is not decoded again.
    let out = h.deja(&["search", "marmalade", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(hit_harnesses(&h.search("invoice rounding tests")), vec!["codex"]);
    let out = h.deja(&["index", "-q"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(out.stdout.is_empty(), "-q prints no report");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("0000000b0mb0") && stderr.contains("not read again"), "-q still names it: {stderr}");

    // Once it is gone from the store, the run is clean again.
    std::fs::remove_file(&bomb).expect("remove bomb");
    let clean = h.deja(&["index", "-q"]);
    assert_eq!(clean.status.code(), Some(0));
    assert!(clean.stdout.is_empty() && clean.stderr.is_empty(), "a clean quiet run says nothing");
}

#[cfg(unix)]
#[test]
fn unreadable_paths_and_odd_names_are_reported_not_hidden() {
    use std::os::unix::ffi::OsStrExt;
    let h = Home::new();
    build_home(&h);
    // A transcript whose name is not UTF-8, holding a line with one invalid byte.
    let projects = h.home.join(".claude/projects/-src-odd");
    std::fs::create_dir_all(&projects).expect("mkdir");
    let odd = projects.join(std::ffi::OsStr::from_bytes(b"caf\xe9-session.jsonl"));
    let mut text = lines(&[
        json!({"type":"user","uuid":"o1","sessionId":"odd-1","cwd":"/src/odd","timestamp":"2026-03-03T10:00:00.000Z","message":{"role":"user","content":"persimmon ripeness CAFE_MARK"}}),
    ]);
    let mark = text.windows(9).position(|w| w == b"CAFE_MARK").expect("mark");
    text[mark + 3] = 0xE9;
    std::fs::write(&odd, &text).expect("write odd");
    // A transcript name pointing nowhere (permission denied has its own test below).
    std::os::unix::fs::symlink(h.home.join("nowhere.jsonl"), projects.join("dangling.jsonl")).expect("symlink");

    let out = h.deja(&["index", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout).expect("json report");
    assert_eq!(out.status.code(), Some(3), "{report}");
    let claude = &report["harnesses"]["claude"];
    let unreadable: Vec<(String, String)> = claude["unreadable"]
        .as_array()
        .expect("unreadable")
        .iter()
        .map(|u| (u["path"].as_str().unwrap_or("").to_string(), u["reason"].as_str().unwrap_or("").to_string()))
        .collect();
    assert!(unreadable.iter().any(|(p, _)| p.ends_with("dangling.jsonl")), "{unreadable:?}");
    assert_eq!(claude["repaired_lines"], 1, "{report}");
    let r = h.search("persimmon ripeness");
    assert_eq!(hit_harnesses(&r), vec!["claude"], "the odd name is read and its repaired line kept: {r}");

    // The human report names each path too, and `-q` still tells stderr.
    let text = h.deja(&["index", "--rebuild"]);
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(stdout.contains("dangling.jsonl") && stdout.contains("could not be read"), "{stdout}");
    let quiet = h.deja(&["index", "-q"]);
    assert_eq!(quiet.status.code(), Some(3));
    assert!(quiet.stdout.is_empty());
    assert!(String::from_utf8_lossy(&quiet.stderr).contains("dangling.jsonl"));

    // A store root whose own name is not UTF-8 is read, and the JSON report still prints.
    let odd_root = h.home.join(std::ffi::OsStr::from_bytes(b"projects-\xff"));
    std::fs::create_dir_all(odd_root.join("-src-app")).expect("mkdir");
    std::fs::write(odd_root.join("-src-app/s.jsonl"), lines(&claude_records())).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_deja"))
        .args(["index", "--json", "--harness", "claude"])
        .env_clear()
        .env("DEJA_WATCH", "off")
        .env("HOME", &h.home)
        .env("DEJA_INDEX_DIR", &h.index)
        .env("DEJA_CLAUDE_ROOT", &odd_root)
        .output()
        .expect("run deja");
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert_eq!(report["harnesses"]["claude"]["sessions"], 1, "{report}");
    assert!(report["harnesses"]["claude"]["roots"][0][0].as_str().is_some_and(|r| r.contains('\u{FFFD}')), "{report}");
}

#[test]
fn the_decode_cap_is_set_by_its_variable() {
    let h = Home::new();
    build_home(&h);
    let index = |cap: &str| {
        Command::new(env!("CARGO_BIN_EXE_deja"))
            .args(["index", "--json"])
            .env_clear()
            .env("DEJA_WATCH", "off")
            .env("HOME", &h.home)
            .env("DEJA_INDEX_DIR", &h.index)
            .env("DEJA_MAX_DECODED_BYTES", cap)
            .output()
            .expect("run deja")
    };
    // An ordinary zstd log of a few KB is over a 1000-byte cap: refused by name.
    let out = index("1000");
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(out.status.code(), Some(3), "{report}");
    let unreadable = report["harnesses"]["deepseek"]["unreadable"].as_array().expect("unreadable");
    assert!(unreadable.iter().any(|u| u["reason"].as_str().is_some_and(|r| r.contains("DEJA_MAX_DECODED_BYTES"))), "{report}");
    assert_eq!(report["harnesses"]["claude"]["sessions"], 1, "uncompressed sources are not affected");
    // Unchanged and under the same cap, it is named again without being decoded again.
    let again: Value = serde_json::from_slice(&index("1000").stdout).expect("json");
    assert!(again["harnesses"]["deepseek"]["unreadable"][0]["reason"].as_str().is_some_and(|r| r.contains("not read again")), "{again}");
    // A value that is no byte count is said, and the default applies: the log is read,
    // though it did not change, because the cap did.
    let out = index("lots");
    assert!(String::from_utf8_lossy(&out.stderr).contains("DEJA_MAX_DECODED_BYTES"), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(hit_harnesses(&h.search("marmalade")), vec!["deepseek"]);
}

/// Hands every path under `dir` to `uid`/`gid` (`chown -R`).
#[cfg(unix)]
fn chown_tree(dir: &Path, uid: u32, gid: u32) {
    std::os::unix::fs::lchown(dir, Some(uid), Some(gid)).expect("chown");
    if std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        for e in std::fs::read_dir(dir).expect("read_dir").flatten() {
            chown_tree(&e.path(), uid, gid);
        }
    }
}

#[cfg(unix)]
#[test]
fn a_directory_that_cannot_be_listed_is_named_with_the_reason() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let h = Home::new();
    build_home(&h);
    let locked = h.home.join(".claude/projects/-src-locked");
    h.write(".claude/projects/-src-locked/x.jsonl", &lines(&claude_records()));
    std::fs::create_dir_all(&h.index).expect("index dir");
    // Root lists any directory: then deja runs as `nobody`, which is really refused, on a
    // home handed to it.
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0);
    const NOBODY: u32 = 65534;
    if root {
        chown_tree(h._tmp.path(), NOBODY, NOBODY);
    }
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_deja"));
    cmd.args(["index", "--json"]).env_clear().env("DEJA_WATCH", "off").env("HOME", &h.home).env("DEJA_INDEX_DIR", &h.index);
    if root {
        cmd.uid(NOBODY).gid(NOBODY);
    }
    let out = cmd.output().expect("run deja");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).expect("chmod back");
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(3), "{report}");
    let unreadable = report["harnesses"]["claude"]["unreadable"].as_array().expect("unreadable");
    assert!(
        unreadable.iter().any(|u| u["path"].as_str().is_some_and(|p| p.ends_with("-src-locked"))
            && u["reason"].as_str().is_some_and(|r| r.contains("ermission denied"))),
        "{report}"
    );
    for id in ["claude", "codex", "deepseek"] {
        assert_eq!(report["harnesses"][id]["sessions"], 1, "the rest is indexed: {report}");
    }
}

/// `deja-bench hooks` spawns every hook of this build's `deja` on a small corpus: each is
/// timed, and the session-start digest, which every project has, is answered within its
/// budget. (The suite is its own crate; this test is here because it needs the binary.)
#[test]
fn the_hook_benchmark_measures_every_hook() {
    let h = Home::new();
    let corpus = h.home.join("corpus");
    let corpus = corpus.to_str().expect("utf-8");
    deja_bench::set_deja_bin(env!("CARGO_BIN_EXE_deja"));
    deja_bench::run_from(&["corpus", "--out", corpus, "--size", "1500000", "--seed", "6"]).expect("corpus");
    let v = deja_bench::hooks_figures(&["--corpus", corpus, "--calls", "3", "--json"]).expect("hooks");
    assert_eq!(v["benchmark"], "hooks");
    let hooks = v["hooks"].as_array().expect("hooks");
    let names: Vec<&str> = hooks.iter().filter_map(|x| x["hook"].as_str()).collect();
    assert_eq!(names, ["hook-session-start", "hook-prompt", "hook-tool", "hook-tool-after", "hook-prompt (everyday prompts)"]);
    for x in &hooks[..4] {
        assert_eq!(x["latency"]["n"], 3, "{x}");
    }
    // Every everyday prompt is asked at least once, whatever --calls says.
    assert_eq!(hooks[4]["latency"]["n"], 30, "{}", hooks[4]);
    let start = &hooks[0];
    assert_eq!(start["answered"], 3, "{start}");
    // The envelope and its escaping come on top of the block's 2 KB.
    assert!(start["largest_answer_bytes"].as_u64().expect("bytes") <= 2048 + 256, "{start}");
}

/// `deja bench` is a thin entry point: it runs the `deja-bench` binary, and says how to
/// build it when there is none.
#[test]
fn deja_bench_forwards_to_the_suite_or_says_how_to_build_it() {
    let h = Home::new();
    let out = h.deja(&["bench", "index", "--corpus", "/nonexistent"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    let beside = std::path::Path::new(env!("CARGO_BIN_EXE_deja")).with_file_name("deja-bench");
    if beside.is_file() {
        assert!(err.contains("/nonexistent") || err.contains("corpus"), "the suite itself answered: {err}");
    } else {
        assert!(err.contains("cargo build --release -p deja-bench"), "{err}");
    }
}

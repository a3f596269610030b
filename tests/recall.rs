//! The recall commands of the `deja` binary over a planted synthetic home: `fix`,
//! `how`, `blame`, `ctx`, `files`, `orient`, `remember`, `friction`, with `--json`
//! and text, and the proof that deja's own recall blocks are never indexed.

use crate::support::recall_home;

use std::io::Write;
use std::process::Stdio;

use recall_home::*;
use serde_json::Value;

fn text(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn recall_commands_answer_the_planted_cases() {
    let h = Home::planted(false);
    h.index();

    // fix: the same error from another checkout and line finds the fix that held.
    let pasted = "error[E0425]: cannot find value `pool_size` in this scope\n   --> /home/sam/checkout/src/pool.rs:17:3";
    let r = h.json(&["fix", pasted, "--json"]);
    assert_eq!(r["schema_version"], 1);
    assert_eq!(r["command"], "fix");
    assert_eq!(r["tier"], "exact", "{r}");
    let first = &r["fixes"][0];
    assert_eq!(first["session"]["id"], FIX_SESSION, "{r}");
    assert_eq!(first["held"], true);
    assert_eq!(first["fix"]["commands"], serde_json::json!(["cargo test -p app"]));
    assert_eq!(first["fix"]["edited"], serde_json::json!(["/src/app/src/pool.rs"]));

    // The error on stdin, a whole traceback: the fix that ran pip first.
    let mut child = h.command(&["fix"]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(format!("Traceback (most recent call last):\n  File \"x.py\", line 1\n{PSYCOPG}\n").as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    let shown = text(&out);
    assert!(out.status.success(), "{shown}");
    assert!(shown.starts_with("fix (exact): 1 past fix"), "{shown}");
    assert!(shown.contains("`pip install psycopg2-binary` then `python manage.py migrate`"), "{shown}");

    // A fix that did not hold says so.
    let r = h.json(&["fix", "Error: connection refused by pgbouncer at 10.1.2.3:6432", "--json"]);
    assert_eq!(r["fixes"][0]["held"], false, "{r}");
    assert!(r["fixes"][0]["came_back_at"].as_u64().is_some(), "{r}");

    // Nothing matched: said plainly, exit 1.
    let out = h.deja(&["fix", "SegmentationFault: the flux capacitor overheated"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).contains("nothing matched"), "{}", text(&out));

    // how: both sessions' `cargo test -p app` first, from the current project.
    let r = h.json(&["how", "cargo", "test", "--json"]);
    assert_eq!(r["tier"], "exact");
    let cmds = r["commands"].as_array().expect("commands");
    assert_eq!(cmds[0]["command"], "cargo test -p app", "{r}");
    assert_eq!(cmds[0]["sessions"], 2);
    assert_eq!(cmds[0]["runs"], 3);
    assert_eq!(cmds[0]["failed"], 1);
    assert!(cmds.iter().all(|c| c["command"].as_str().is_some_and(|s| s.contains("cargo test"))));
    let r = h.json(&["how", "deploy", "--json"]);
    assert_eq!(r["commands"][0]["command"], "make deploy", "{r}");
    assert_eq!(h.deja(&["how", "kubectl"]).status.code(), Some(1));

    // blame: the full path outranks the same basename in another project.
    let r = h.json(&["blame", "/src/app/src/pool.rs", "--json"]);
    assert_eq!(r["tier"], "exact");
    let hits = r["hits"].as_array().expect("hits");
    assert_eq!(hits[0]["session"]["id"], FIX_SESSION, "{r}");
    assert_eq!(hits[0]["action"], "edit");
    assert!(hits[0]["decision"].as_str().is_some_and(|d| d.contains("max_size")), "{r}");
    let billing = hits.iter().position(|x| x["session"]["id"] == DEPLOY_SESSION).expect("the basename match is listed too");
    assert!(billing > 0);
    let r = h.json(&["blame", "pool.rs", "--json"]);
    let ids: Vec<&str> = r["hits"].as_array().expect("hits").iter().filter_map(|x| x["session"]["id"].as_str()).collect();
    assert!(ids.contains(&FIX_SESSION) && ids.contains(&DEPLOY_SESSION), "{r}");

    // ctx: by id and by words, within the budget.
    let out = h.deja(&["ctx", &FIX_SESSION[..8]]);
    let shown = text(&out);
    for part in
        ["## Problem", "## Decided", "## Ran", "`cargo test -p app` → exit 0 (2×)", "## Files", "edit /src/app/src/pool.rs", "## Ended"]
    {
        assert!(shown.contains(part), "{part} missing:\n{shown}");
    }
    let small = text(&h.deja(&["ctx", FIX_SESSION, "--budget", "400"]));
    assert!(small.len() <= 400 && small.contains("more lines"), "{}: {small}", small.len());
    let none = h.json(&["ctx", "xylophonic", "unobtainium", "--json"]);
    assert_eq!((none["schema_version"].as_u64(), none["session"].is_null()), (Some(1), true), "{none}");
    let r = h.json(&["ctx", "django", "migrations", "--json"]);
    assert_eq!(r["session"]["id"], PSYCOPG_SESSION, "{r}");
    assert!(r["digest"]["decisions"].as_array().is_some_and(|d| !d.is_empty()));

    // files: the work on a topic.
    let r = h.json(&["files", "config", "refactor", "--json"]);
    assert_eq!(r["files"][0]["path"], "/src/app/src/pool.rs", "{r}");

    // orient: recent sessions of the project, its errors and the commands that work.
    let r = h.json(&["orient", "--project", "/src/app", "--json"]);
    let sessions: Vec<&str> = r["sessions"].as_array().expect("sessions").iter().filter_map(|s| s["session"]["id"].as_str()).collect();
    assert!(sessions.contains(&FIX_SESSION) && sessions.contains(&PSYCOPG_SESSION), "{r}");
    assert!(!sessions.contains(&DEPLOY_SESSION), "another project: {r}");
    assert_eq!(r["commands"][0]["command"], "cargo test -p app", "{r}");
    assert_eq!(r["notes"][0]["session"]["harness"], "deja", "{r}");
    let shown = text(&h.deja(&["orient", "--project", "/src/app"]));
    assert!(shown.contains("## Recent sessions") && shown.contains("## Commands that work here"), "{shown}");

    // friction: the driver error hit three harnesses' sessions.
    let r = h.json(&["friction", "--json"]);
    assert_eq!(r["min_sessions"], 3);
    let errors = r["errors"].as_array().expect("errors");
    assert_eq!(errors.len(), 1, "{r}");
    assert!(errors[0]["line"].as_str().is_some_and(|l| l.contains("psycopg2")), "{r}");
    assert_eq!(errors[0]["sessions"], 3);
    assert_eq!(errors[0]["harnesses"], serde_json::json!(["claude", "codex", "deepseek"]));
    assert_eq!(errors[0]["fixes"], 1);
}

#[test]
fn remember_writes_primary_data_and_is_found_first() {
    let h = Home::planted(false);
    h.index();
    let r = h.json(&["remember", "flamingo deploys need the VPN up first", "--project", "/src/app", "--tag", "deploy", "--json"]);
    assert_eq!(r["schema_version"], 1);
    assert_eq!(r["indexed"], true);
    assert!(r["note"]["id"].as_str().is_some_and(|id| id.starts_with("n-")));
    let raw = std::fs::read_to_string(h.notes_file()).expect("notes.jsonl");
    assert!(raw.contains("flamingo deploys need the VPN up first"));
    let found = h.json(&["search", "flamingo", "--json", "--no-refresh"]);
    assert_eq!(found["hits"][0]["session"]["harness"], "deja", "{found}");
    // The index is a cache; the notes survive a rebuild.
    let out = h.deja(&["index", "--rebuild", "--quiet"]);
    assert!(out.status.success());
    let found = h.json(&["search", "flamingo", "--json"]);
    assert_eq!(found["hits"].as_array().map(Vec::len), Some(1));
}

#[test]
fn deja_never_recalls_its_own_answers() {
    let h = Home::planted(false);
    h.index();
    let r = h.json(&["search", "zanzibarsecret", "--json"]);
    assert!(r["hits"].as_array().is_some_and(Vec::is_empty), "a recall block was indexed: {r}");
    let r = h.json(&["search", "quokka", "--json"]);
    assert_eq!(r["hits"][0]["session"]["id"], HOSTILE_SESSION, "the rest of the message is indexed: {r}");
    let shown: Value = h.json(&["show", HOSTILE_SESSION, "--json"]);
    assert!(!shown.to_string().contains("zanzibarsecret"));
}

/// A fix that arrives in a later, incremental read of a growing log still pairs with
/// the error indexed by the earlier read.
#[test]
fn a_fix_read_incrementally_pairs_with_an_earlier_error() {
    use serde_json::json;
    let h = Home::empty();
    let sid = "9a9a9a9a-1111-4222-8333-944445555666";
    let rec = |v: Value| format!("{v}\n");
    let path = h.home.join(".claude/projects/-src-inc").join(format!("{sid}.jsonl"));
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let mut first = String::new();
    first += &rec(
        json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":sid,"cwd":"/src/inc","timestamp":"2026-03-02T10:00:00.000Z","message":{"role":"user","content":"the build is red"}}),
    );
    first += &rec(
        json!({"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":sid,"cwd":"/src/inc","timestamp":"2026-03-02T10:00:01.000Z","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"cargo build"}}]}}),
    );
    first += &rec(
        json!({"type":"user","uuid":"u2","parentUuid":"a1","sessionId":sid,"cwd":"/src/inc","timestamp":"2026-03-02T10:00:05.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"Exit code 101\nerror: linker `cc` not found","is_error":true}]}}),
    );
    std::fs::write(&path, &first).expect("write");
    h.index();
    let r = h.json(&["fix", "error: linker `cc` not found", "--json"]);
    assert!(r["fixes"].as_array().is_some_and(Vec::is_empty), "{r}");
    assert_eq!(r["seen"][0]["occurrences"], 1, "the error is recorded: {r}");

    let mut more = String::new();
    more += &rec(
        json!({"type":"assistant","uuid":"a2","parentUuid":"u2","sessionId":sid,"cwd":"/src/inc","timestamp":"2026-03-02T10:01:00.000Z","message":{"id":"m2","role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"sudo apt-get install -y build-essential"}}]}}),
    );
    more += &rec(
        json!({"type":"user","uuid":"u3","parentUuid":"a2","sessionId":sid,"cwd":"/src/inc","timestamp":"2026-03-02T10:01:30.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"Setting up build-essential (12.9) ...","is_error":false}]}}),
    );
    more += &rec(
        json!({"type":"assistant","uuid":"a3","parentUuid":"u3","sessionId":sid,"cwd":"/src/inc","timestamp":"2026-03-02T10:02:00.000Z","message":{"id":"m3","role":"assistant","content":[{"type":"tool_use","id":"t3","name":"Bash","input":{"command":"cargo build"}}]}}),
    );
    more += &rec(
        json!({"type":"user","uuid":"u4","parentUuid":"a3","sessionId":sid,"cwd":"/src/inc","timestamp":"2026-03-02T10:02:40.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t3","content":"Finished `dev` profile","is_error":false}]}}),
    );
    let mut f = std::fs::OpenOptions::new().append(true).open(&path).expect("open");
    f.write_all(more.as_bytes()).expect("append");
    drop(f);
    let report = h.json(&["index", "--json"]);
    assert_eq!(report["harnesses"]["claude"]["resumed"], 1, "read from the tail: {report}");
    let r = h.json(&["fix", "error: linker `cc` not found", "--json"]);
    let fix = &r["fixes"][0];
    assert_eq!(fix["fix"]["commands"], serde_json::json!(["sudo apt-get install -y build-essential", "cargo build"]), "{r}");
    assert_eq!(fix["held"], true);
    // Indexing the same tail again adds nothing twice.
    let again = h.json(&["index", "--json"]);
    assert_eq!(again["harnesses"]["claude"]["parsed"], 0);
    assert_eq!(h.json(&["fix", "error: linker `cc` not found", "--json"])["fixes"].as_array().map(Vec::len), Some(1));
}

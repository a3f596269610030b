//! `deja index --watch` end to end: a watcher over a home with one live Claude Code log
//! makes a turn appended to it searchable (the target is within 2 s; this test
//! allows 10 s so a loaded machine does not fail it, and prints the latency it saw),
//! makes a search skip its own refresh while it runs, and on SIGTERM exits 0 with its
//! lock released (after which searches refresh again).

#![cfg(unix)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::e2e::Home;

const SID: &str = "7a1b2c3d-1111-4222-8333-944445555666";
const OTHER_SID: &str = "7a1b2c3d-2222-4222-8333-944445555666";
const DEADLINE: Duration = Duration::from_secs(10);

fn record(uuid: &str, parent: Option<&str>, sid: &str, role: &str, text: &str) -> String {
    let v = json!({"type": role, "uuid": uuid, "parentUuid": parent, "sessionId": sid, "cwd": "/src/app",
        "timestamp": "2026-05-01T10:00:00.000Z", "message": {"role": role, "content": text}});
    format!("{v}\n")
}

fn deja(h: &Home, args: &[&str]) -> Command {
    let mut cmd = h.command(args);
    cmd.stdin(Stdio::null());
    cmd
}

fn hits(h: &Home, word: &str, extra_env: Option<(&str, &Path)>, no_refresh: bool) -> usize {
    let mut args = vec!["search", word, "--json"];
    if no_refresh {
        args.push("--no-refresh");
    }
    let mut cmd = deja(h, &args);
    if let Some((k, v)) = extra_env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run deja search");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("search {word}: {e}\nstdout: {stdout}\nstderr: {}", String::from_utf8_lossy(&out.stderr)));
    v["hits"].as_array().map_or(0, Vec::len)
}

fn doctor_watcher(h: &Home) -> Value {
    let out = deja(h, &["doctor", "--json"]).output().expect("run deja doctor");
    let v: Value = serde_json::from_str(&String::from_utf8_lossy(&out.stdout)).expect("doctor json");
    v["index"]["watcher"].clone()
}

/// Kills the watcher if the test fails before it is stopped.
struct Watcher(Child);

impl Drop for Watcher {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

fn wait_for_line(lines: &Receiver<String>, what: &str) -> String {
    let start = Instant::now();
    let mut seen = Vec::new();
    while start.elapsed() < DEADLINE {
        if let Ok(line) = lines.recv_timeout(Duration::from_millis(100)) {
            if line.contains(what) {
                return line;
            }
            seen.push(line);
        }
    }
    panic!("the watcher never said {what:?}; it said {seen:?}");
}

#[test]
fn a_watcher_makes_an_appended_turn_searchable_and_stops_cleanly() {
    let h = Home::new();
    let log = h.home.join(".claude/projects/-src-app").join(format!("{SID}.jsonl"));
    std::fs::create_dir_all(log.parent().expect("parent")).expect("mkdir");
    std::fs::write(&log, record("u1", None, SID, "user", "how do we rotate the gadget certificates?")).expect("write log");

    let mut child = deja(&h, &["index", "--watch"]).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("spawn watcher");
    let stderr = child.stderr.take().expect("stderr");
    let mut watcher = Watcher(child);
    let (tx, lines) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    // Said once the first run is committed and the watches are set.
    wait_for_line(&lines, "deja: watching");
    assert_eq!(hits(&h, "gadget", None, true), 1, "the first run indexed the log");
    assert_eq!(doctor_watcher(&h)["pid"], json!(watcher.0.id()), "doctor names the watcher");

    // A turn appended to the live log, as Claude Code writes one.
    let appended = Instant::now();
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).expect("open log");
    f.write_all(record("a1", Some("u1"), SID, "assistant", "rotate with the zanzibarwombat script").as_bytes()).expect("append");
    drop(f);
    let mut found = false;
    while appended.elapsed() < DEADLINE {
        if hits(&h, "zanzibarwombat", None, true) > 0 {
            found = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(found, "the appended turn was not searchable within {DEADLINE:?}");
    eprintln!("appended turn searchable after {} ms", appended.elapsed().as_millis());
    wait_for_line(&lines, "indexed 1 turn in 1 session (claude)");

    // A store only a search's own environment names: a search that refreshed would index
    // it. While the watcher runs, the search must not refresh, so finds nothing.
    let other = h.home.parent().expect("tmp").join("other-claude");
    let other_log = other.join("projects/-src-x").join(format!("{OTHER_SID}.jsonl"));
    std::fs::create_dir_all(other_log.parent().expect("parent")).expect("mkdir");
    std::fs::write(&other_log, record("u1", None, OTHER_SID, "user", "the quokkaflume migration")).expect("write other log");
    assert_eq!(hits(&h, "quokkaflume", Some(("CLAUDE_CONFIG_DIR", &other)), false), 0, "a search refreshed while a watcher ran");

    // SIGTERM: a clean stop, exit 0, the lock released.
    let pid = i32::try_from(watcher.0.id()).expect("pid");
    // SAFETY: kill(2) on our own child's pid, which has not been reaped yet.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let stopped = Instant::now();
    let status = loop {
        if let Some(status) = watcher.0.try_wait().expect("wait") {
            break status;
        }
        assert!(stopped.elapsed() < DEADLINE, "the watcher did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0), "{status:?}");
    let lock = std::fs::File::options().read(true).write(true).open(h.index.join("watcher.lock")).expect("lock file");
    assert!(lock.try_lock().is_ok(), "the watcher lock is still held");
    drop(lock);
    assert_eq!(doctor_watcher(&h), Value::Null);
    // With no watcher the same search refreshes, so the check above could fail.
    assert_eq!(hits(&h, "quokkaflume", Some(("CLAUDE_CONFIG_DIR", &other)), false), 1);
}

/// Whether process `pid` still runs (a zombie waiting for its adopter to reap it does not).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name.
        Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X'])),
        // SAFETY: kill(2) with signal 0 only probes.
        Err(_) => unsafe { libc::kill(pid, 0) == 0 },
    }
}

#[test]
fn a_search_starts_a_watcher_that_answers_at_once_and_leaves_with_the_index() {
    let h = Home::new();
    let log = h.home.join(".claude/projects/-src-app").join(format!("{SID}.jsonl"));
    std::fs::create_dir_all(log.parent().expect("parent")).expect("mkdir");
    std::fs::write(&log, record("u1", None, SID, "user", "how do we rotate the gadget certificates?")).expect("write log");

    // Tests switch the background watcher off; this one asks for it.
    let search = |word: &str| {
        let out = h.command(&["search", word, "--json"]).env("DEJA_WATCH", "auto").stdin(Stdio::null()).output().expect("search");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        v["hits"].as_array().map_or(0, Vec::len)
    };
    assert_eq!(search("gadget"), 1, "the first search refreshes by itself");
    let start = Instant::now();
    let pid = loop {
        let w = doctor_watcher(&h);
        if let Some(pid) = w["pid"].as_i64() {
            break i32::try_from(pid).expect("pid");
        }
        assert!(start.elapsed() < DEADLINE, "no watcher started after the first search");
        std::thread::sleep(Duration::from_millis(50));
    };
    // The watcher says it answers sync requests once it watches for them; until then a
    // search would not ask it.
    while !std::fs::read_to_string(h.index.join("watcher.lock")).unwrap_or_default().contains("sync") {
        assert!(start.elapsed() < DEADLINE, "the watcher never said it answers sync requests");
        std::thread::sleep(Duration::from_millis(20));
    }

    // Appended and searched at once, with no wait: the search's sync request queues
    // behind the write's notification, so the watcher indexes the turn before answering.
    for (n, word) in ["zanzibarwombat", "quokkaflume", "narwhalbrisket"].iter().enumerate() {
        let mut f = std::fs::OpenOptions::new().append(true).open(&log).expect("open log");
        let uuid = format!("a{n}");
        f.write_all(record(&uuid, Some("u1"), SID, "assistant", &format!("rotate with the {word} script")).as_bytes()).expect("append");
        drop(f);
        assert_eq!(search(word), 1, "a turn appended just before the search was not found ({word})");
    }
    let out = h.command(&["index", "--json"]).env("DEJA_WATCH", "auto").output().expect("index");
    let report: Value = serde_json::from_slice(&out.stdout).expect("index json");
    assert_eq!(report["kept_fresh_by_watcher"]["pid"], json!(pid), "{report}");

    // Deleting the index leaves the watcher nothing to serve: it goes.
    std::fs::remove_dir_all(&h.index).expect("remove index");
    let gone = Instant::now();
    while alive(pid) {
        assert!(gone.elapsed() < DEADLINE, "the watcher outlived its index directory");
        std::thread::sleep(Duration::from_millis(50));
    }
}

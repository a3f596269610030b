//! The search screen from outside: `deja ui` driven in a real terminal (tmux) over a
//! home this test writes — type a query, see the session, open it, walk to its match,
//! resume it into a stand-in harness, quit, and find the terminal as it was — and the
//! pieces of the command line it brought (`--file`, bare `deja` when piped, the help).
//! The Team tab too: a session pushed from one home read on the screen of another
//! (against the PostgreSQL `.ci/test` starts), and a team store that never answers.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::e2e::{lines, Home};

const SESSION: &str = "7a1c9e00-2222-4333-8444-955556666777";

/// A Claude Code transcript in `project`: a question, two edits (auth and pool), a
/// failing command and an answer naming the fix.
fn records(project: &str) -> Vec<Value> {
    let at = |s: u32| format!("2026-03-02T10:00:{s:02}.000Z");
    vec![
        json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":SESSION,"cwd":project,"timestamp":at(0),"message":{"role":"user","content":"the login token expires too early, find out why"}}),
        json!({"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":SESSION,"cwd":project,"timestamp":at(1),"message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Edit","input":{"file_path":format!("{project}/src/auth.rs"),"old_string":"const TOKEN_TTL: u64 = 60;","new_string":"const TOKEN_TTL: u64 = 3600;"}}]}}),
        json!({"type":"user","uuid":"u2","parentUuid":"a1","sessionId":SESSION,"cwd":project,"timestamp":at(2),"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"edited"}]}}),
        json!({"type":"assistant","uuid":"a2","parentUuid":"u2","sessionId":SESSION,"cwd":project,"timestamp":at(3),"message":{"id":"m2","role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Edit","input":{"file_path":format!("{project}/src/pool.rs"),"old_string":"// token pool","new_string":"// token pool, sized"}}]}}),
        json!({"type":"user","uuid":"u3","parentUuid":"a2","sessionId":SESSION,"cwd":project,"timestamp":at(4),"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"edited"}]}}),
        json!({"type":"assistant","uuid":"a3","parentUuid":"u3","sessionId":SESSION,"cwd":project,"timestamp":at(5),"message":{"id":"m3","role":"assistant","content":[{"type":"tool_use","id":"t3","name":"Bash","input":{"command":"cargo test token_ttl"}}]}}),
        json!({"type":"user","uuid":"u4","parentUuid":"a3","sessionId":SESSION,"cwd":project,"timestamp":at(6),"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t3","content":"test token_ttl ... FAILED","is_error":true}]}}),
        json!({"type":"assistant","uuid":"a4","parentUuid":"u4","sessionId":SESSION,"cwd":project,"timestamp":at(7),"message":{"id":"m4","role":"assistant","content":[{"type":"text","text":"The token TTL was one minute; it is an hour now."}]}}),
    ]
}

/// A home holding that transcript, its project a real directory (so resume runs in it),
/// indexed.
fn home() -> (Home, String) {
    let h = Home::new();
    let project = h.home.join("work").join("login");
    std::fs::create_dir_all(&project).expect("project dir");
    let project = project.display().to_string();
    let dashed = project.replace('/', "-");
    h.write(&format!(".claude/projects/{dashed}/{SESSION}.jsonl"), &lines(&records(&project)));
    let out = h.deja(&["index"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (h, project)
}

#[test]
fn file_narrows_a_search_to_the_turns_that_touched_it() {
    let (h, _) = home();
    let ids = |args: &[&str]| -> usize {
        let v = h.json(&[&["search", "--json"], args].concat());
        v["hits"].as_array().map_or(0, Vec::len)
    };
    assert_eq!(ids(&["token"]), 1);
    assert_eq!(ids(&["token", "--file", "src/auth.rs"]), 1);
    assert_eq!(ids(&["token", "--file", "AUTH.RS"]), 1, "case-blind, by its last part");
    assert_eq!(ids(&["token", "--file", "src/nothing.rs"]), 0);
    let v = h.json(&["search", "token", "--file", "pool.rs", "--json"]);
    let turns = v["hits"][0]["turns"].as_array().expect("turns");
    assert!(!turns.is_empty() && turns.iter().all(|t| t["text"].as_str().is_some_and(|s| !s.contains("TTL was one minute"))), "{turns:?}");
}

#[test]
fn off_a_terminal_bare_deja_prints_the_help_and_ui_says_why_it_cannot_open() {
    let h = Home::new();
    let out = h.deja(&[]);
    assert_eq!(out.status.code(), Some(2));
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("ui ") && help.contains("search"), "{help}");
    assert!(!help.contains("hook-") && !help.contains("reasonix-ext"), "harness-only commands are not listed: {help}");
    let out = h.deja(&["ui", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a terminal"));
    // Hidden, not gone: a harness still runs its hook.
    assert!(h.deja(&["hook-session-start", "--help"]).status.success());
}

/// A tmux server of this test's own (its own socket), killed when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux").arg("-L").arg(&self.socket).args(args).output().expect("run tmux")
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", "ui"]).stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "ui"];
        args.extend_from_slice(keys);
        assert!(self.cmd(&args).status.success());
    }

    /// Waits until the screen shows `needle`; a generous bound, only so a broken screen
    /// fails instead of hanging (nothing here measures time).
    fn wait_for(&self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(needle) {
                return s;
            }
            assert!(start.elapsed() < Duration::from_secs(60), "never showed {needle:?}; the screen:\n{s}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

fn have_tmux() -> bool {
    let found = Command::new("tmux").arg("-V").output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(std::env::var_os("CI").is_none(), "tmux is needed for the search screen's end-to-end test under CI; install it");
        eprintln!("skipping the search screen's terminal test: tmux is not installed (it runs whenever tmux is, and always under CI)");
    }
    found
}

/// The `env -i …` words that start the screen on `h`'s history alone: its HOME and
/// index, no watcher, `path` as PATH, an xterm, and `extra` settings.
fn screen_env(h: &Home, path: &str, extra: &[&str]) -> String {
    let (home, index, path) =
        (format!("HOME={}", h.home.display()), format!("DEJA_INDEX_DIR={}", h.index.display()), format!("PATH={path}"));
    let mut words = vec!["env", "-i", &home, &index, "DEJA_WATCH=off", &path, "TERM=xterm-256color"];
    words.extend_from_slice(extra);
    shell_words(&words)
}

fn shell_words(words: &[&str]) -> String {
    words.iter().map(|w| format!("'{}'", w.replace('\'', r"'\''"))).collect::<Vec<_>>().join(" ")
}

#[test]
fn the_screen_finds_opens_resumes_and_gives_the_terminal_back() {
    if !have_tmux() {
        return;
    }
    let (h, project) = home();
    // A sub-agent run the session started, beside it as Claude Code keeps them.
    let dashed = project.replace('/', "-");
    let run = |seq: u32, role: &str, text: &str| {
        let content = if role == "user" { json!(text) } else { json!([{"type":"text","text":text}]) };
        json!({"type":role,"uuid":format!("s{seq}"),"parentUuid":null,"isSidechain":true,"agentId":"a7","sessionId":SESSION,"cwd":project,
               "timestamp":format!("2026-03-02T10:01:0{seq}.000Z"),"message":{"role":role,"content":content}})
    };
    h.write(
        &format!(".claude/projects/{dashed}/{SESSION}/subagents/agent-a7.jsonl"),
        &lines(&[run(1, "user", "survey the pool sizing"), run(2, "assistant", "The pool holds eight.")]),
    );
    let out = h.deja(&["index"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The stand-in harness: records where it ran and with what, as `claude` on PATH.
    let bin = h.home.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let ran = h.home.join("ran.txt");
    let stand_in = bin.join("claude");
    std::fs::write(&stand_in, format!("#!/bin/sh\n{{ pwd; echo \"$@\"; }} > {}\n", shell_words(&[&ran.display().to_string()])))
        .expect("stand-in");
    #[cfg(unix)]
    std::fs::set_permissions(&stand_in, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let deja = env!("CARGO_BIN_EXE_deja");
    let env = screen_env(&h, &path, &["LANG=C.UTF-8"]);
    // Started from a directory inside the project: the screen opens on the project.
    let inside = format!("{project}/src");
    std::fs::create_dir_all(&inside).expect("src");
    let script = format!("cd {} && {env} {} ui; echo \"EXITED $?\"; sleep 600", shell_words(&[&inside]), shell_words(&[deja]));
    let t = Tmux { socket: format!("deja-ui-test-{}", std::process::id()) };
    let out = t.cmd(&["new-session", "-d", "-s", "ui", "-x", "100", "-y", "30", &script]);
    assert!(out.status.success(), "tmux: {}", String::from_utf8_lossy(&out.stderr));

    let s = t.wait_for("Kept after deletion");
    assert!(s.contains("This project"), "{s}");
    t.keys(&["-l", "token ttl"]);
    let s = t.wait_for("exact match · 1 session");
    assert!(s.contains("› token ttl"), "{s}");
    assert!(s.contains(&format!("1 session in {project}")), "on this project's tab: {s}");
    assert!(s.contains("the login token expires too early"), "the session is listed: {s}");
    t.keys(&["Enter"]);
    let s = t.wait_for("↻ ");
    assert!(s.contains("↻ ") && s.contains(SESSION), "the header holds the resume command: {s}");
    assert!(s.contains("cargo test token_ttl") && s.contains("✗"), "the failing command with its outcome: {s}");
    assert!(s.contains("+ const TOKEN_TTL: u64 = 3600;"), "the edit as a diff: {s}");
    // The runs it started follow the session in a reply of their own.
    let s = t.wait_for("started 1 sub-agent run");
    assert!(s.contains("survey the pool sizing"), "named by its first words: {s}");
    t.keys(&["n"]);
    t.wait_for("match ");
    // Back, then forward again and resume: it asks first.
    t.keys(&["q"]);
    t.wait_for("Enter read");
    t.keys(&["C-r"]);
    t.wait_for("y runs it");
    t.keys(&["y"]);
    let s = t.wait_for("EXITED 0");
    let ran = std::fs::read_to_string(&ran).unwrap_or_else(|e| panic!("the stand-in did not run ({e}); the screen:\n{s}"));
    assert!(ran.contains(SESSION), "resumed by id: {ran}");
    assert!(ran.lines().next().is_some_and(|d| d == project), "in the session's directory: {ran}");
    let state = String::from_utf8_lossy(&t.cmd(&["display", "-p", "-t", "ui", "#{alternate_on} #{cursor_flag}"]).stdout).trim().to_string();
    assert_eq!(state, "0 1", "the alternate screen is left and the cursor shown");
}

#[test]
fn esc_quits_and_leaves_the_terminal_as_it_was() {
    if !have_tmux() {
        return;
    }
    let (h, project) = home();
    let env = screen_env(&h, &std::env::var("PATH").unwrap_or_default(), &["NO_COLOR=1"]);
    let script = format!(
        "cd {} && stty -g > before.txt && {env} {} ui token; echo \"EXITED $?\"; stty -g > after.txt; sleep 600",
        shell_words(&[&project]),
        shell_words(&[env!("CARGO_BIN_EXE_deja")])
    );
    let t = Tmux { socket: format!("deja-ui-esc-{}", std::process::id()) };
    assert!(t.cmd(&["new-session", "-d", "-s", "ui", "-x", "20", "-y", "5", &script]).status.success());
    t.wait_for("› token");
    // Resized to less than the screen can use, and back: it says so and goes on.
    assert!(t.cmd(&["resize-window", "-t", "ui", "-x", "12", "-y", "3"]).status.success());
    t.wait_for("too small");
    assert!(t.cmd(&["resize-window", "-t", "ui", "-x", "80", "-y", "20"]).status.success());
    t.wait_for("› token");
    t.keys(&["Escape"]);
    t.wait_for("› type to search");
    t.keys(&["Escape"]);
    t.wait_for("EXITED 0");
    let read = |name: &str| std::fs::read_to_string(Path::new(&project).join(name)).unwrap_or_default();
    // `after.txt` is written just after the line above is printed.
    let start = Instant::now();
    while read("after.txt").is_empty() && start.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(read("before.txt"), read("after.txt"), "the terminal's modes are as they were");
    assert!(!read("before.txt").is_empty());
}

/// The children of `pid` (Linux's `/proc`), to find the screen under tmux's shell.
#[cfg(target_os = "linux")]
fn children(pid: &str) -> Vec<String> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default().split_whitespace().map(str::to_string).collect()
}

#[cfg(target_os = "linux")]
#[test]
fn sigterm_closes_the_screen_and_restores_the_terminal() {
    if !have_tmux() {
        return;
    }
    let (h, project) = home();
    let env = screen_env(&h, &std::env::var("PATH").unwrap_or_default(), &[]);
    let script = format!(
        "cd {} && {env} {} ui token; echo \"EXITED $?\"; sleep 600",
        shell_words(&[&project]),
        shell_words(&[env!("CARGO_BIN_EXE_deja")])
    );
    let t = Tmux { socket: format!("deja-ui-term-{}", std::process::id()) };
    assert!(t.cmd(&["new-session", "-d", "-s", "ui", "-x", "80", "-y", "20", &script]).status.success());
    t.wait_for("› token");
    let shell = String::from_utf8_lossy(&t.cmd(&["display", "-p", "-t", "ui", "#{pane_pid}"]).stdout).trim().to_string();
    // The shell runs `env`, which replaced itself with deja.
    let screen = children(&shell);
    assert_eq!(screen.len(), 1, "one child of the pane's shell: {screen:?}");
    let pid: i32 = screen[0].parse().expect("a pid");
    let killed = Command::new("kill").args(["-TERM", &pid.to_string()]).status().expect("kill");
    assert!(killed.success());
    let s = t.wait_for("EXITED ");
    assert!(s.contains("EXITED 143"), "exits as a process ended by SIGTERM reports: {s}");
    let state = String::from_utf8_lossy(&t.cmd(&["display", "-p", "-t", "ui", "#{alternate_on} #{cursor_flag}"]).stdout).trim().to_string();
    assert_eq!(state, "0 1");
}

#[test]
fn a_session_indexed_while_the_screen_is_open_joins_the_list() {
    if !have_tmux() {
        return;
    }
    let (h, project) = home();
    let env = screen_env(&h, &std::env::var("PATH").unwrap_or_default(), &[]);
    let script = format!("cd / && {env} {} ui; echo \"EXITED $?\"; sleep 600", shell_words(&[env!("CARGO_BIN_EXE_deja")]));
    let t = Tmux { socket: format!("deja-ui-live-{}", std::process::id()) };
    assert!(t.cmd(&["new-session", "-d", "-s", "ui", "-x", "100", "-y", "20", &script]).status.success());
    t.wait_for("the login token expires too early");
    // Another session arrives and another process indexes it.
    let other = "8b2d0f11-3333-4444-8555-a66667777888";
    let dashed = project.replace('/', "-");
    let recs: Vec<Value> = records(&project)
        .into_iter()
        .map(|mut r| {
            r["sessionId"] = json!(other);
            if r["uuid"] == json!("u1") {
                r["message"]["content"] = json!("zanzibar deploy keeps failing");
            }
            r
        })
        .collect();
    h.write(&format!(".claude/projects/{dashed}/{other}.jsonl"), &lines(&recs));
    assert!(h.deja(&["index"]).status.success());
    t.wait_for("zanzibar deploy");
    t.keys(&["Escape"]);
    t.wait_for("EXITED 0");
}

/// A team store that takes the connection and never answers: the Team tab says it is
/// unavailable, within a generous bound of its deadline, and the screen goes on. Needs
/// no PostgreSQL.
#[test]
fn the_team_tab_says_when_the_team_store_does_not_answer() {
    if !have_tmux() {
        return;
    }
    let (h, project) = home();
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = silent.local_addr().expect("addr").port();
    h.write(
        ".config/deja/config.toml",
        format!("[team]\nurl = \"postgres://nobody@127.0.0.1:{port}/team?sslmode=disable\"\nmachine = \"this-box\"\ntimeout_ms = 700\n")
            .as_bytes(),
    );
    let env = screen_env(&h, &std::env::var("PATH").unwrap_or_default(), &[]);
    let script = format!(
        "cd {} && {env} {} ui; echo \"EXITED $?\"; sleep 600",
        shell_words(&[&project]),
        shell_words(&[env!("CARGO_BIN_EXE_deja")])
    );
    let t = Tmux { socket: format!("deja-ui-team-down-{}", std::process::id()) };
    assert!(t.cmd(&["new-session", "-d", "-s", "ui", "-x", "120", "-y", "20", &script]).status.success());
    t.wait_for("Kept after deletion  │  Team");
    // Opened on this project (once the index said it has it): the Team tab is the
    // last, one ⇧Tab back.
    t.wait_for("recent · 1 session in");
    t.keys(&["BTab"]);
    t.wait_for("type words to search the team store");
    let asked = Instant::now();
    t.keys(&["-l", "token"]);
    let s = t.wait_for("team store unavailable");
    assert!(asked.elapsed() < Duration::from_secs(20), "{:?}", asked.elapsed());
    assert!(s.contains("did not answer within"), "{s}");
    // The other tabs still answer from this machine.
    t.keys(&["Tab"]);
    t.wait_for("exact match · 1 session");
    t.keys(&["Escape"]);
    t.keys(&["Escape"]);
    t.wait_for("EXITED 0");
    drop(silent);
}

/// Team memory on the screen, end to end: alice pushes a session from her machine;
/// carol, granted the project, opens `deja ui` in her own home, finds it on the Team
/// tab labelled with its author and machine, reads it, copies the command that shows
/// it, and is told why it does not resume here.
#[test]
fn a_session_pushed_from_one_home_is_read_on_the_team_tab_of_another() {
    let Some(url) = crate::team::server() else { return };
    if !have_tmux() {
        return;
    }
    use crate::team::{claude_session, deja, ok, Cluster};
    let c = Cluster::new(&url, &["alice", "carol"]);
    let admin = Home::new();
    let admin_url = format!("{}?sslmode=disable", c.admin_url);
    ok(&admin.command(&["team", "init", &admin_url]).env("DEJA_MACHINE", "admin-box").output().expect("run"));
    for r in ["alice", "carol"] {
        ok(&admin.command(&["team", "grant", &c.role(r), "/src/app"]).env("PGPASSWORD", &c.admin_password).output().expect("run"));
    }
    let alice = Home::new();
    claude_session(&alice, "aaaa0000-0000-4000-8000-00000000a11c", "the staging pool size is forty connections");
    ok(&deja(&alice, "laptop", &["index"]));
    ok(&deja(&alice, "laptop", &["team", "init", &c.url("alice")]));
    ok(&deja(&alice, "laptop", &["team", "share", "/src/app"]));
    ok(&deja(&alice, "laptop", &["team", "push"]));

    let carol = Home::new();
    ok(&deja(&carol, "carol-box", &["index"]));
    ok(&deja(&carol, "carol-box", &["team", "init", &c.url("carol")]));
    let env = screen_env(&carol, &std::env::var("PATH").unwrap_or_default(), &["DEJA_MACHINE=carol-box", "PGPASSWORD=pw", "LANG=C.UTF-8"]);
    let script = format!("cd / && {env} {} ui; echo \"EXITED $?\"; sleep 600", shell_words(&[env!("CARGO_BIN_EXE_deja")]));
    let t = Tmux { socket: format!("deja-ui-team-{}", std::process::id()) };
    assert!(t.cmd(&["new-session", "-d", "-s", "ui", "-x", "160", "-y", "30", &script]).status.success());
    t.wait_for("Kept after deletion  │  Team");
    // Opened on all projects (nothing of carol's is indexed): all → kept → team.
    t.wait_for("no session is indexed yet");
    t.keys(&["Tab"]);
    t.keys(&["Tab"]);
    t.wait_for("type words to search the team store");
    t.keys(&["-l", "staging pool"]);
    let who = format!("{}@laptop", c.role("alice"));
    let s = t.wait_for(&who);
    assert!(s.contains("exact match · 1 session in the team store"), "{s}");
    assert!(s.contains("a teammate's history from the team store"), "the preview frames it: {s}");
    assert!(s.contains("forty connections"), "the quoted turn: {s}");
    t.keys(&["Enter"]);
    let s = t.wait_for("↻ - (it ran on laptop");
    assert!(s.contains("the staging pool size is forty connections") && s.contains(&who), "{s}");
    assert!(s.contains("deja show --team laptop/claude:aaaa0000-0000-4000-8000-00000000a11c"), "{s}");
    assert!(s.contains("match 1 of 1"), "opened at its match: {s}");
    t.keys(&["y"]);
    t.wait_for("copied the command that reads it");
    t.keys(&["r"]);
    t.wait_for("cannot resume it here");
    t.keys(&["q"]);
    t.wait_for("Enter read");
    t.keys(&["Escape"]);
    t.keys(&["Escape"]);
    t.wait_for("EXITED 0");
}

//! Team memory on a real PostgreSQL, end to end (`docs/team-memory.md`): two homes
//! (two machines, two authors) push the same project; a third role with a grant reads
//! both, a role without reads neither; the server refuses a forged author or machine;
//! a planted secret is held back; a re-push changes nothing; `deja forget` propagates
//! with a tombstone. The server is the one `.ci/test` starts (`DEJA_TEST_PG_URL`):
//! without it these tests say they are skipped, except under CI, where they fail.

use std::sync::atomic::{AtomicU32, Ordering};

use deja_team::postgres::{Client, NoTls};
use serde_json::{json, Value};

use crate::e2e::{build_home, Home, CLAUDE_SESSION};
use crate::mcp::Client as Mcp;

/// The superuser URL of the test server, or `None` (said once) when there is none.
pub(crate) fn server() -> Option<String> {
    match std::env::var("DEJA_TEST_PG_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var_os("CI").is_some() => panic!("DEJA_TEST_PG_URL is not set: run the tests through .ci/test"),
        _ => {
            eprintln!("skipped: no PostgreSQL (DEJA_TEST_PG_URL unset; `.ci/test` starts one)");
            None
        }
    }
}

/// A database and roles of this test's own on the shared server.
pub(crate) struct Cluster {
    pub(crate) admin_url: String,
    host: String,
    port: String,
    db: String,
    suffix: String,
    /// The superuser's password, given to deja the libpq way (PGPASSWORD).
    pub(crate) admin_password: String,
}

impl Cluster {
    pub(crate) fn new(url: &str, roles: &[&str]) -> Cluster {
        static N: AtomicU32 = AtomicU32::new(0);
        let suffix = format!("{}_{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
        let db = format!("deja_t_{suffix}");
        let mut admin = Client::connect(url, NoTls).expect("connect as the test superuser");
        admin.batch_execute(&format!("CREATE DATABASE {db}")).expect("create database");
        for r in roles {
            admin.batch_execute(&format!("CREATE ROLE {r}_{suffix} LOGIN PASSWORD 'pw'")).expect("create role");
        }
        let rest = url.split_once('@').expect("user@host in the URL").1;
        let hostport = rest.split('/').next().expect("host");
        let (host, port) = hostport.rsplit_once(':').expect("host:port");
        let admin_url = format!("{}/{db}", url.rsplit_once('/').expect("a database in the URL").0);
        let userinfo = url.split_once("://").expect("scheme").1.split_once('@').expect("userinfo").0;
        let admin_password = userinfo.split_once(':').map_or("", |(_, p)| p).to_string();
        Cluster { admin_url, host: host.into(), port: port.into(), db, suffix, admin_password }
    }

    pub(crate) fn role(&self, r: &str) -> String {
        format!("{r}_{}", self.suffix)
    }

    /// The URL deja is given: no password in it.
    pub(crate) fn url(&self, r: &str) -> String {
        format!("postgres://{}@{}:{}/{}?sslmode=disable", self.role(r), self.host, self.port, self.db)
    }

    fn connect(&self, r: &str) -> Client {
        Client::connect(&format!("host={} port={} user={} password=pw dbname={}", self.host, self.port, self.role(r), self.db), NoTls)
            .expect("connect as a member")
    }

    fn admin(&self) -> Client {
        Client::connect(&self.admin_url, NoTls).expect("connect as admin")
    }
}

pub(crate) fn ok(out: &std::process::Output) -> String {
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `deja ARGS` in `h` as machine `machine`, connecting with password `pw`.
pub(crate) fn deja(h: &Home, machine: &str, args: &[&str]) -> std::process::Output {
    deja_cmd(h, machine, args).output().expect("run deja")
}

fn deja_cmd(h: &Home, machine: &str, args: &[&str]) -> std::process::Command {
    let mut cmd = h.command(args);
    cmd.env("DEJA_MACHINE", machine).env("PGPASSWORD", "pw");
    cmd
}

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_str(&ok(out)).expect("json")
}

/// A Claude Code session in /src/app that says `text`.
pub(crate) fn claude_session(h: &Home, id: &str, text: &str) {
    let rec = json!({"type":"user","uuid":"u1","parentUuid":null,"sessionId":id,"cwd":"/src/app","timestamp":"2026-03-03T10:00:00.000Z","message":{"role":"user","content":text}});
    let p = h.home.join(format!(".claude/projects/-src-app/{id}.jsonl"));
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, format!("{rec}\n")).expect("write");
}

fn authors_seen(c: &mut Client) -> Vec<String> {
    c.query("SELECT DISTINCT author::text FROM deja.turns ORDER BY 1", &[]).expect("select").iter().map(|r| r.get(0)).collect()
}

#[test]
fn two_machines_share_a_project_that_only_granted_roles_read() {
    let Some(url) = server() else { return };
    let c = Cluster::new(&url, &["alice", "bob", "carol", "dave"]);
    // The administrator creates the schema; members cannot.
    let admin_home = Home::new();
    let admin_url = format!("{}?sslmode=disable", c.admin_url);
    let init =
        json_of(&admin_home.command(&["team", "init", &admin_url, "--json"]).env("DEJA_MACHINE", "admin-box").output().expect("run"));
    assert_eq!(init["schema"]["to"], 1, "{init}");
    // Idempotent: a second init migrates nothing.
    let again =
        json_of(&admin_home.command(&["team", "init", &admin_url, "--json"]).env("DEJA_MACHINE", "admin-box").output().expect("run"));
    assert_eq!(again["schema"]["from"], 1, "{again}");
    let config = std::fs::read_to_string(admin_home.home.join(".config/deja/config.toml")).expect("config");
    assert!(!config.contains("deja-test-") && config.contains("[team]"), "the password stays out of the settings: {config}");
    let as_admin = |args: &[&str]| admin_home.command(args).env("PGPASSWORD", &c.admin_password).output().expect("run deja");
    // Without the password (it was not saved) the administrator is refused, clearly.
    let refused = admin_home.deja(&["team", "grant", &c.role("carol"), "/src/app"]);
    assert!(!refused.status.success() && String::from_utf8_lossy(&refused.stderr).contains("password"));
    for r in ["alice", "bob", "dave"] {
        ok(&as_admin(&["team", "grant", &c.role(r), "/src/nothing-yet"]));
    }
    // A project named by its remote in another spelling is the same key.
    let granted = json_of(&as_admin(&["team", "grant", &c.role("carol"), "git@github.com:Org/app.git", "--json"]));
    assert_eq!(granted["project"], "github.com/Org/app");
    ok(&as_admin(&["team", "grant", &c.role("carol"), "/src/app"]));

    // Two machines, two authors, one project.
    let (alice, bob) = (Home::new(), Home::new());
    build_home(&alice);
    claude_session(&alice, "aaaa0000-0000-4000-8000-000000000001", "deploy with zX8qK2mP9vR4tL7wB3nH6jD1fG5sA0cE as the key");
    claude_session(&alice, "aaaa0000-0000-4000-8000-000000000003", "the staging pool size doubled after the deploy");
    claude_session(&bob, "bbbb0000-0000-4000-8000-000000000002", "the staging pool size is forty connections");
    // A word only inside a path and a URL: PostgreSQL's parser keeps those whole.
    claude_session(&bob, "eeee0000-0000-4000-8000-000000000004", "the fix is in src/quuxpool.rs, see https://example.com/quuxpool");
    for (h, who, machine) in [(&alice, "alice", "laptop"), (&bob, "bob", "desktop")] {
        ok(&deja(h, machine, &["index"]));
        ok(&deja(h, machine, &["team", "init", &c.url(who)]));
        // Nothing leaves before a project is shared.
        let early = deja(h, machine, &["team", "push"]);
        assert!(!early.status.success() && String::from_utf8_lossy(&early.stderr).contains("nothing is shared"));
        ok(&deja(h, machine, &["team", "share", "/src/app"]));
        let dry = json_of(&deja(h, machine, &["team", "push", "--dry-run", "--json"]));
        assert!(dry["push"]["sessions"].as_u64().unwrap_or(0) >= 1, "{who}: {dry}");
        let pushed = json_of(&deja(h, machine, &["team", "push", "--json"]));
        assert!(pushed["push"]["sessions"].as_u64().unwrap_or(0) >= 1, "{who}: {pushed}");
        // A re-push sends nothing.
        let again = json_of(&deja(h, machine, &["team", "push", "--json"]));
        assert_eq!(again["push"]["sessions"], 0, "{who}: {again}");
    }
    // Only /src/app left alice's machine: the codex and deepseek sessions did not.
    let mut admin = c.admin();
    let projects: Vec<String> = admin.query("SELECT DISTINCT project FROM deja.turns", &[]).expect("q").iter().map(|r| r.get(0)).collect();
    assert_eq!(projects, vec!["/src/app".to_string()]);
    // The planted key was held back, listed, and never sent.
    let status = json_of(&deja(&alice, "laptop", &["team", "status", "--json"]));
    let held = status["held"].as_array().expect("held");
    assert!(held.iter().any(|h| h["detector"] == "high_entropy"), "{status}");
    let leaked: i64 = admin
        .query_one("SELECT count(*) FROM deja.turns WHERE text || coalesce(extra::text, '') LIKE '%zX8qK2mP9vR4%'", &[])
        .expect("q")
        .get(0);
    assert_eq!(leaked, 0);
    // Redaction ran on the way out too.
    let secrets: i64 = admin.query_one("SELECT count(*) FROM deja.turns WHERE text LIKE '%AKIAIOSFODNN7EXAMPLE%'", &[]).expect("q").get(0);
    assert_eq!(secrets, 0);
    // The server keeps each turn's document in parts (text and times once, as columns);
    // put back together it is what `deja export` on that machine writes, field for field.
    let exported: Vec<Value> = ok(&deja(&alice, "laptop", &["export"]))
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("an export line is JSON"))
        .filter(|d| d["session"] == CLAUDE_SESSION)
        .collect();
    let mut store = deja_team::Store { client: c.admin(), target: String::new() };
    let stored = store.docs("laptop", &format!("claude:{CLAUDE_SESSION}")).expect("documents read back");
    assert!(stored.len() >= 3 && stored.iter().any(|d| d.turn.tool.is_some()), "{stored:?}");
    let stored: Vec<Value> = stored.iter().map(|d| serde_json::to_value(d).expect("json")).collect();
    assert_eq!(stored, exported);

    // Carol has the grant: both authors. Dave has none: neither.
    assert_eq!(authors_seen(&mut c.connect("carol")), vec![c.role("alice"), c.role("bob")]);
    assert!(authors_seen(&mut c.connect("dave")).is_empty());

    // Team search, end to end: carol finds both authors' sessions, labelled; dave none.
    let (carol, dave) = (Home::new(), Home::new());
    ok(&deja(&carol, "carol-box", &["team", "init", &c.url("carol")]));
    ok(&deja(&dave, "dave-box", &["team", "init", &c.url("dave")]));
    let found = json_of(&deja(&carol, "carol-box", &["search", "--team", "staging", "pool", "--json"]));
    assert_eq!(found["scope"], "team", "{found}");
    assert_eq!(found["team_unavailable"], Value::Null, "{found}");
    assert_eq!(found["team"]["tier"], "exact", "{found}");
    // The full-text index does not see it; the exact tier still finds it, by trigrams.
    let in_path = json_of(&deja(&carol, "carol-box", &["search", "--team", "quuxpool", "--json"]));
    assert_eq!(in_path["team"]["tier"], "exact", "{in_path}");
    assert!(
        in_path["team"]["sessions"].as_array().is_some_and(|s| s.iter().any(|s| s["id"] == "eeee0000-0000-4000-8000-000000000004")),
        "{in_path}"
    );
    let sessions = found["team"]["sessions"].as_array().expect("sessions");
    let mut labels: Vec<(String, String)> = sessions
        .iter()
        .map(|s| (s["author"].as_str().unwrap_or("").to_string(), s["machine"].as_str().unwrap_or("").to_string()))
        .collect();
    labels.sort();
    assert_eq!(labels, vec![(c.role("alice"), "laptop".to_string()), (c.role("bob"), "desktop".to_string())], "{found}");
    assert!(sessions.iter().all(|s| s["snippets"][0]["text"].as_str().unwrap_or("").to_lowercase().contains("staging pool")), "{found}");
    // The stemmed tier answers when the words appear only in another form.
    let stemmed = json_of(&deja(&carol, "carol-box", &["search", "--team", "pools", "staged", "--json"]));
    assert_eq!(stemmed["team"]["tier"], "stemmed", "{stemmed}");
    // And the fuzzy tier a typo.
    let fuzzy = json_of(&deja(&carol, "carol-box", &["search", "--team", "stagng", "--json"]));
    assert_eq!(fuzzy["team"]["tier"], "fuzzy", "{fuzzy}");
    // The text output labels each session and names how to show it; show reads it whole.
    let text = ok(&deja(&carol, "carol-box", &["search", "--team", "staging", "pool"]));
    assert!(text.contains(&format!("{}@desktop", c.role("bob"))) && text.contains("deja show --team desktop/claude:"), "{text}");
    let shown = ok(&deja(&carol, "carol-box", &["show", "--team", "desktop/claude:bbbb0000"]));
    assert!(shown.contains("forty connections") && shown.contains("untrusted"), "{shown}");
    // Without --team, an id this machine lacks is looked for in the team store.
    let fallback = ok(&deja(&carol, "carol-box", &["show", "bbbb0000-0000-4000-8000-000000000002"]));
    assert!(fallback.contains("forty connections"), "{fallback}");
    // Carol's agent: recall includes the team's sessions by default, framed as untrusted
    // and labelled; `scope: mine` leaves them out.
    let mut agent = Mcp::spawn(deja_cmd(&carol, "carol-box", &["mcp"]));
    agent.initialize();
    let framed = agent.answer(json!({"mode": "recall", "q": "staging pool"}));
    assert!(framed.contains("<deja-recall mode=\"team-recall\" tier=\"exact\">") && framed.contains("from the team store"), "{framed}");
    assert!(framed.contains(&format!("{}@desktop", c.role("bob"))) && framed.contains(&format!("{}@laptop", c.role("alice"))), "{framed}");
    let mine = agent.answer(json!({"mode": "recall", "q": "staging pool", "scope": "mine"}));
    assert!(!mine.contains("team-recall"), "{mine}");
    drop(agent);
    let none = deja(&dave, "dave-box", &["search", "--team", "staging", "pool", "--json"]);
    assert_eq!(none.status.code(), Some(1), "nothing found is exit 1, as for a local search");
    let none: Value = serde_json::from_slice(&none.stdout).expect("json");
    assert_eq!(none["team"]["sessions"].as_array().map(Vec::len), Some(0), "{none}");
    let hidden = deja(&dave, "dave-box", &["show", "--team", "desktop/claude:bbbb0000"]);
    assert!(!hidden.status.success(), "dave read a session he has no grant for");
    // Alice's own machine, scope all: her local answer and the team's, bob's labelled,
    // her own pushed copies left to the local index.
    ok(&as_admin(&["team", "grant", &c.role("alice"), "/src/app"]));
    let all = json_of(&deja(&alice, "laptop", &["search", "--scope", "all", "staging", "pool", "--json"]));
    assert!(!all["hits"].as_array().expect("local hits").is_empty(), "{all}");
    let theirs = all["team"]["sessions"].as_array().expect("team");
    assert!(!theirs.is_empty() && theirs.iter().all(|s| s["machine"] == "desktop"), "{all}");
    // A revoked grant reads nothing.
    ok(&as_admin(&["team", "revoke", &c.role("carol"), "/src/app"]));
    assert!(authors_seen(&mut c.connect("carol")).is_empty());

    // Forging: bob cannot write as alice, nor as alice's machine.
    let mut bob_db = c.connect("bob");
    let forged_author = bob_db.execute(
        "INSERT INTO deja.turns (machine, turn_id, author, project, session_key, seq, role, text) VALUES ('desktop', 'x:y:1', $1, '/src/app', 'x:y', 1, 'user', 'forged')",
        &[&c.role("alice")],
    );
    assert!(forged_author.is_err(), "a forged author was accepted");
    let forged_machine = bob_db.execute(
        "INSERT INTO deja.turns (machine, turn_id, project, session_key, seq, role, text) VALUES ('laptop', 'x:y:1', '/src/app', 'x:y', 1, 'user', 'forged')",
        &[],
    );
    assert!(forged_machine.is_err(), "a forged machine was accepted");
    let deleted = bob_db.execute("DELETE FROM deja.turns WHERE machine = 'laptop'", &[]).expect("delete runs");
    assert_eq!(deleted, 0, "bob deleted alice's rows");

    // Forget propagates, with a tombstone.
    let key = format!("claude:{CLAUDE_SESSION}");
    let before: i64 = admin.query_one("SELECT count(*) FROM deja.turns WHERE session_key = $1", &[&key]).expect("q").get(0);
    assert!(before > 0);
    ok(&deja(&alice, "laptop", &["forget", CLAUDE_SESSION, "--yes"]));
    let after: i64 = admin.query_one("SELECT count(*) FROM deja.turns WHERE session_key = $1", &[&key]).expect("q").get(0);
    assert_eq!(after, 0);
    let tomb: i64 =
        admin.query_one("SELECT count(*) FROM deja.tombstones WHERE session_key = $1 AND machine = 'laptop'", &[&key]).expect("q").get(0);
    assert_eq!(tomb, 1);
    // Bob's copy of the project stays.
    let bobs: i64 = admin.query_one("SELECT count(*) FROM deja.turns WHERE machine = 'desktop'", &[]).expect("q").get(0);
    assert!(bobs > 0);
}

#[test]
fn a_newer_schema_is_refused_and_nothing_is_changed() {
    let Some(url) = server() else { return };
    let c = Cluster::new(&url, &[]);
    let h = Home::new();
    let admin_url = format!("{}?sslmode=disable", c.admin_url);
    ok(&h.deja(&["team", "init", &admin_url]));
    c.admin().execute("UPDATE deja.meta SET value = '99' WHERE key = 'schema_version'", &[]).expect("bump");
    let out = h.deja(&["team", "init", &admin_url]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("version 99") && err.contains("newer"), "{err}");
}

/// A PostgreSQL cluster of this test's own (the shared one must keep running), made
/// with the server `.ci/test` found (`DEJA_TEST_PG_BIN`) and run as the user it runs
/// servers as (`DEJA_TEST_PG_RUNAS`; empty: this user), so the test can stop and
/// restart it. Stopped and removed when dropped.
struct OwnServer {
    dir: tempfile::TempDir,
    bin: std::path::PathBuf,
    runas: String,
    port: u16,
}

impl OwnServer {
    fn start() -> Option<OwnServer> {
        server()?;
        let bin = std::path::PathBuf::from(std::env::var("DEJA_TEST_PG_BIN").ok().filter(|b| !b.is_empty())?);
        let runas = std::env::var("DEJA_TEST_PG_RUNAS").unwrap_or_default();
        let dir = tempfile::tempdir().expect("tempdir");
        if !runas.is_empty() {
            let st = std::process::Command::new("chown").arg(&runas).arg(dir.path()).status().expect("chown");
            assert!(st.success(), "chown {runas}");
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("addr").port();
        let s = OwnServer { dir, bin, runas, port };
        let data = s.dir.path().join("data");
        let out = s
            .as_user("initdb")
            .arg("-D")
            .arg(&data)
            .args(["-U", "deja_admin", "--auth-local=trust", "--auth-host=trust", "-E", "UTF8", "--locale=C.UTF-8"])
            .output()
            .expect("initdb");
        assert!(out.status.success(), "initdb: {}", String::from_utf8_lossy(&out.stderr));
        s.pg_ctl_start();
        Some(s)
    }

    fn as_user(&self, tool: &str) -> std::process::Command {
        let exe = self.bin.join(tool);
        let mut cmd = if self.runas.is_empty() {
            std::process::Command::new(exe)
        } else {
            let gid = std::process::Command::new("id").args(["-g", &self.runas]).output().expect("id -g");
            let gid = String::from_utf8_lossy(&gid.stdout).trim().to_string();
            let mut c = std::process::Command::new("setpriv");
            c.args(["--reuid", &self.runas, "--regid", &gid, "--clear-groups", "--"]).arg(exe);
            c
        };
        cmd.current_dir(self.dir.path());
        cmd
    }

    fn pg_ctl_start(&self) {
        let opts = format!("-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=off", self.port, self.dir.path().display());
        let out = self
            .as_user("pg_ctl")
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .arg("-l")
            .arg(self.dir.path().join("server.log"))
            .args(["-w", "-t", "60", "-o", &opts, "start"])
            .output()
            .expect("pg_ctl start");
        assert!(out.status.success(), "pg_ctl start: {}", String::from_utf8_lossy(&out.stderr));
    }

    fn stop(&self) {
        let _ = self.as_user("pg_ctl").arg("-D").arg(self.dir.path().join("data")).args(["-m", "immediate", "-w", "stop"]).output();
    }

    fn url(&self, user: &str) -> String {
        format!("postgres://{user}@127.0.0.1:{}/postgres?sslmode=disable", self.port)
    }
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        self.stop();
    }
}

#[test]
fn a_push_cut_by_a_server_restart_resumes_and_a_search_with_the_server_down_answers_locally() {
    let Some(pg) = OwnServer::start() else { return };
    let mut admin = Client::connect(&pg.url("deja_admin"), NoTls).expect("connect to our own server");
    admin.batch_execute("CREATE ROLE erin LOGIN").expect("role");
    let admin_home = Home::new();
    ok(&admin_home.command(&["team", "init", &pg.url("deja_admin")]).env("DEJA_MACHINE", "admin-box").output().expect("run"));
    ok(&admin_home.deja(&["team", "grant", "erin", "/src/app"]));

    // Enough sessions for several transactions (64 sessions each).
    let h = Home::new();
    for i in 0..150 {
        claude_session(&h, &format!("cccc0000-0000-4000-8000-{i:012}"), &format!("restart drill session {i} about the pool"));
    }
    ok(&deja(&h, "box", &["index"]));
    ok(&deja(&h, "box", &["team", "init", &pg.url("erin")]));
    ok(&deja(&h, "box", &["team", "share", "/src/app"]));
    let plan = json_of(&deja(&h, "box", &["team", "push", "--dry-run", "--json"]));
    let (want_sessions, want_turns) = (plan["push"]["sessions"].as_i64().expect("n"), plan["push"]["turns"].as_i64().expect("n"));
    assert_eq!(want_sessions, 150, "{plan}");

    // The push pauses after its first committed batch; the server stops under it.
    let pause = h.home.join("paused");
    let child = deja_cmd(&h, "box", &["team", "push"])
        .env("DEJA_TEST_ONLY_PUSH_PAUSE", &pause)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn push");
    let waited = std::time::Instant::now();
    while !pause.exists() {
        assert!(waited.elapsed() < std::time::Duration::from_secs(120), "the push never reached its first batch");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    drop(admin);
    pg.stop();
    std::fs::remove_file(&pause).expect("release the push");
    let cut = child.wait_with_output().expect("push");
    assert!(!cut.status.success(), "a push whose server went away reported success");

    // The server is down: a search answers from this machine, saying the team store was
    // left out, within a generous bound of its 2 s deadline.
    let started = std::time::Instant::now();
    let down = json_of(&deja(&h, "box", &["search", "--scope", "all", "restart", "drill", "--json", "--no-refresh"]));
    assert!(started.elapsed() < std::time::Duration::from_secs(30), "{:?}", started.elapsed());
    assert!(!down["hits"].as_array().expect("hits").is_empty(), "{down}");
    assert!(down["team_unavailable"].as_str().is_some_and(|w| w.contains("this machine")), "{down}");
    // An agent's recall fails open: the local answer, and one line saying why.
    let mut agent = Mcp::spawn(deja_cmd(&h, "box", &["mcp"]));
    agent.initialize();
    let framed = agent.answer(json!({"mode": "recall", "q": "restart drill", "scope": "all"}));
    assert!(framed.contains("(team store left out:") && framed.contains("<deja-recall mode=\"recall\""), "{framed}");
    drop(agent);
    let text = deja(&h, "box", &["search", "--team", "restart", "drill", "--no-refresh"]);
    assert!(text.status.success() && String::from_utf8_lossy(&text.stderr).contains("team store left out"));

    // Restarted, the push resumes: every session once, every turn once.
    pg.pg_ctl_start();
    let resumed = json_of(&deja(&h, "box", &["team", "push", "--json"]));
    let resent = resumed["push"]["sessions"].as_i64().expect("n");
    assert!(resent > 0 && resent < want_sessions, "the first batch was sent again, or nothing was: {resumed}");
    let mut admin = Client::connect(&pg.url("deja_admin"), NoTls).expect("reconnect");
    let row = admin
        .query_one("SELECT count(DISTINCT session_key), count(*), count(DISTINCT turn_id) FROM deja.turns WHERE machine = 'box'", &[])
        .expect("count");
    let (sessions, turns, distinct): (i64, i64, i64) = (row.get(0), row.get(1), row.get(2));
    assert_eq!((sessions, turns, distinct), (want_sessions, want_turns, want_turns));
    let again = json_of(&deja(&h, "box", &["team", "push", "--json"]));
    assert_eq!(again["push"]["sessions"], 0, "{again}");
    // And the team search answers again.
    let back = json_of(&deja(&h, "box", &["search", "--team", "restart", "drill", "--json", "--no-refresh"]));
    assert_eq!(back["team_unavailable"], Value::Null, "{back}");
    assert_eq!(back["team"]["sessions"].as_array().map(Vec::len), Some(15), "{back}");
}

/// A server that takes the connection and never answers: the search still answers
/// from this machine, within a generous bound of its deadline. Needs no PostgreSQL.
#[test]
fn a_team_store_that_never_answers_cannot_hold_a_search() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = silent.local_addr().expect("addr").port();
    let h = Home::new();
    build_home(&h);
    ok(&h.deja(&["index"]));
    let config = h.home.join(".config/deja/config.toml");
    std::fs::create_dir_all(config.parent().expect("dir")).expect("mkdir");
    std::fs::write(&config, format!("[team]\nurl = \"postgres://nobody@127.0.0.1:{port}/team?sslmode=disable\"\ntimeout_ms = 700\n"))
        .expect("config");
    let started = std::time::Instant::now();
    let out = h.json(&["search", "--scope", "all", "nightly", "build", "--json", "--no-refresh"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
    assert!(!out["hits"].as_array().expect("hits").is_empty(), "{out}");
    assert!(out["team_unavailable"].as_str().is_some_and(|w| w.contains("did not answer")), "{out}");
    drop(silent);
}

/// `[team] push = "auto"`: the watcher pushes after its first run and after each run
/// that archived something new.
#[test]
fn the_watcher_pushes_when_push_is_auto() {
    let Some(url) = server() else { return };
    let c = Cluster::new(&url, &["frank"]);
    let admin_home = Home::new();
    let admin_url = format!("{}?sslmode=disable", c.admin_url);
    ok(&admin_home.command(&["team", "init", &admin_url]).env("DEJA_MACHINE", "admin-box").output().expect("run"));
    ok(&admin_home.command(&["team", "grant", &c.role("frank"), "/src/app"]).env("PGPASSWORD", &c.admin_password).output().expect("run"));
    let h = Home::new();
    claude_session(&h, "dddd0000-0000-4000-8000-000000000001", "the first watched session");
    ok(&deja(&h, "watcher-box", &["team", "init", &c.url("frank"), "--push", "auto"]));
    ok(&deja(&h, "watcher-box", &["team", "share", "/src/app"]));
    let mut child = deja_cmd(&h, "watcher-box", &["index", "--watch", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn watcher");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str::<Value>(&line) {
                if v.get("team_push").is_some() && tx.send(v).is_err() {
                    return;
                }
            }
        }
    });
    let pushed = |rx: &std::sync::mpsc::Receiver<Value>| loop {
        let v = rx.recv_timeout(std::time::Duration::from_secs(120)).expect("a push from the watcher");
        if v["team_push"]["sessions"].as_u64().unwrap_or(0) > 0 {
            return v;
        }
    };
    pushed(&rx);
    let mut admin = c.admin();
    let count = |admin: &mut Client| -> i64 {
        admin.query_one("SELECT count(*) FROM deja.sessions WHERE machine = 'watcher-box'", &[]).expect("q").get(0)
    };
    assert_eq!(count(&mut admin), 1);
    claude_session(&h, "dddd0000-0000-4000-8000-000000000002", "a second session while watching");
    pushed(&rx);
    assert_eq!(count(&mut admin), 2);
    let _ = child.kill();
    let _ = child.wait();
}

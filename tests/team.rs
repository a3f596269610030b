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

/// The superuser URL of the test server, or `None` (said once) when there is none.
fn server() -> Option<String> {
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
struct Cluster {
    admin_url: String,
    host: String,
    port: String,
    db: String,
    suffix: String,
    /// The superuser's password, given to deja the libpq way (PGPASSWORD).
    admin_password: String,
}

impl Cluster {
    fn new(url: &str, roles: &[&str]) -> Cluster {
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

    fn role(&self, r: &str) -> String {
        format!("{r}_{}", self.suffix)
    }

    /// The URL deja is given: no password in it.
    fn url(&self, r: &str) -> String {
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

fn ok(out: &std::process::Output) -> String {
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `deja ARGS` in `h` as machine `machine`, connecting with password `pw`.
fn deja(h: &Home, machine: &str, args: &[&str]) -> std::process::Output {
    h.command(args).env("DEJA_MACHINE", machine).env("PGPASSWORD", "pw").output().expect("run deja")
}

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_str(&ok(out)).expect("json")
}

/// A Claude Code session in /src/app that says `text`.
fn claude_session(h: &Home, id: &str, text: &str) {
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
    claude_session(&bob, "bbbb0000-0000-4000-8000-000000000002", "the staging pool size is forty connections");
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
    let leaked: i64 = admin.query_one("SELECT count(*) FROM deja.turns WHERE doc::text LIKE '%zX8qK2mP9vR4%'", &[]).expect("q").get(0);
    assert_eq!(leaked, 0);
    // Redaction ran on the way out too.
    let secrets: i64 = admin.query_one("SELECT count(*) FROM deja.turns WHERE text LIKE '%AKIAIOSFODNN7EXAMPLE%'", &[]).expect("q").get(0);
    assert_eq!(secrets, 0);

    // Carol has the grant: both authors. Dave has none: neither.
    assert_eq!(authors_seen(&mut c.connect("carol")), vec![c.role("alice"), c.role("bob")]);
    assert!(authors_seen(&mut c.connect("dave")).is_empty());
    // A revoked grant reads nothing.
    ok(&as_admin(&["team", "revoke", &c.role("carol"), "/src/app"]));
    assert!(authors_seen(&mut c.connect("carol")).is_empty());

    // Forging: bob cannot write as alice, nor as alice's machine.
    let mut bob_db = c.connect("bob");
    let forged_author = bob_db.execute(
        "INSERT INTO deja.turns (machine, turn_id, author, project, session_key, seq, role, text, doc) VALUES ('desktop', 'x:y:1', $1, '/src/app', 'x:y', 1, 'user', 'forged', '{}')",
        &[&c.role("alice")],
    );
    assert!(forged_author.is_err(), "a forged author was accepted");
    let forged_machine = bob_db.execute(
        "INSERT INTO deja.turns (machine, turn_id, project, session_key, seq, role, text, doc) VALUES ('laptop', 'x:y:1', '/src/app', 'x:y', 1, 'user', 'forged', '{}')",
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

//! The archive is the log and the index a projection, end to end: a session whose
//! source the harness deleted survives `--rebuild`, a schema upgrade, a deleted cache
//! and a rebuild killed with SIGKILL at each of its stages (searches answering from the
//! old generation throughout); `deja forget` removes a session everywhere and keeps it
//! out of later runs; exclusions keep a project out, also retroactively; and `export`
//! then `import` into an empty home gives the same search results, idempotently.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::e2e::{build_home, Home, CLAUDE_SESSION};

/// Generous: a debug binary on a shared two-core machine.
const PAUSE_WAIT: Duration = Duration::from_secs(120);

fn ok(out: &std::process::Output) -> String {
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The harness and id of each hit, in order.
fn hit_keys(v: &Value) -> Vec<String> {
    v["hits"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| format!("{}:{}", h["session"]["harness"].as_str().unwrap_or(""), h["session"]["id"].as_str().unwrap_or("")))
        .collect()
}

fn claude_found(h: &Home, refresh: bool) -> bool {
    let mut args = vec!["search", "nightly", "--json"];
    if !refresh {
        args.push("--no-refresh");
    }
    hit_keys(&h.json(&args)).contains(&format!("claude:{CLAUDE_SESSION}"))
}

fn current_generation(index: &Path) -> String {
    std::fs::read_to_string(index.join("current")).expect("current").trim().to_string()
}

fn deja_cmd(h: &Home, args: &[&str]) -> Command {
    h.command(args)
}

fn wait_for(path: &Path) {
    let start = Instant::now();
    while !path.exists() {
        assert!(start.elapsed() < PAUSE_WAIT, "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_deleted_source_survives_rebuilds_upgrades_kills_and_a_deleted_cache() {
    let h = Home::new();
    let (claude, _, _) = build_home(&h);
    ok(&h.deja(&["index"]));
    std::fs::remove_file(&claude).expect("the harness prunes its transcript");
    ok(&h.deja(&["index"]));
    assert!(claude_found(&h, true), "an ordinary refresh keeps it");

    let r = h.json(&["index", "--rebuild", "--json"]);
    assert!(r["new_generation"].is_string(), "{r}");
    assert_eq!(r["restored_from_archive"], 1, "{r}");
    assert!(claude_found(&h, false), "after --rebuild");

    // Another deja version: the generation's schema version differs.
    let gen = current_generation(&h.index);
    std::fs::write(h.index.join(&gen).join("version"), "1\n").expect("version");
    assert!(claude_found(&h, false), "the old generation answers until the new one is in");
    // A search that would refresh answers at once and builds the new generation in the
    // background.
    let out = h.deja(&["search", "nightly", "--json"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("in the background"), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(hit_keys(&serde_json::from_slice(&out.stdout).expect("json")).contains(&format!("claude:{CLAUDE_SESSION}")));
    let start = Instant::now();
    while current_generation(&h.index) == gen || deja_core::index::indexer::writer_busy(&deja_core::index::IndexPaths::new(&h.index)) {
        assert!(start.elapsed() < PAUSE_WAIT, "the background build never finished");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_ne!(current_generation(&h.index), gen, "the upgrade built a new generation");
    assert!(claude_found(&h, false), "after the upgrade");

    // A rebuild killed at every stage leaves the old generation serving, and the next
    // run builds again.
    for point in ["rebuild-parsed", "rebuild-restored", "rebuild-archived", "rebuild-committed"] {
        let before = current_generation(&h.index);
        let marker = h.index.join(format!("failpoint-{point}"));
        let mut child = deja_cmd(&h, &["index", "--rebuild"])
            .env("DEJA_FAILPOINT", point)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        wait_for(&marker);
        assert!(claude_found(&h, true), "{point}: a search during the rebuild answers from the serving generation");
        child.kill().expect("SIGKILL");
        child.wait().expect("reap");
        std::fs::remove_file(&marker).expect("marker");
        assert_eq!(current_generation(&h.index), before, "{point}: the killed rebuild swapped nothing in");
        assert!(claude_found(&h, false), "{point}: found after the kill");
        let doctor = h.json(&["doctor", "--json"]);
        assert!(doctor["index"]["rebuilding"].is_string(), "{point}: doctor names the unfinished rebuild: {}", doctor["index"]);
        let r = h.json(&["index", "--json"]);
        assert!(r["new_generation"].is_string(), "{point}: the next run finishes the rebuild: {r}");
        assert!(claude_found(&h, false), "{point}: found after the rebuild finished");
    }
    let generations: Vec<String> = std::fs::read_dir(&h.index)
        .expect("index dir")
        .filter_map(|e| e.ok()?.file_name().to_str().map(str::to_string))
        .filter(|n| n.starts_with("gen-"))
        .collect();
    assert!(generations.len() <= 2, "retired generations are removed: {generations:?}");

    // The whole cache goes: the archive brings the session back.
    std::fs::remove_dir_all(&h.index).expect("rm cache");
    let r = h.json(&["index", "--json"]);
    assert_eq!(r["restored_from_archive"], 1, "{r}");
    assert!(claude_found(&h, false), "after the cache was deleted");
}

#[test]
fn an_index_from_before_the_archive_is_copied_into_it_before_its_upgrade() {
    let h = Home::new();
    let (claude, _, _) = build_home(&h);
    ok(&h.deja(&["index"]));
    // Lay the index out as deja did before generations and the archive: its files in
    // the index directory itself, an older schema that stored each turn's text, no archive.
    let archive = h.home.join(".local/share/deja/archive");
    let (archived, problems) = deja_core::archive::Archive::new(&archive).load(|_| true).expect("archive");
    assert!(problems.is_empty(), "{problems:?}");
    let sessions: Vec<_> = archived.iter().map(|a| a.to_session()).collect();
    std::fs::remove_dir_all(&h.index).expect("rm index");
    deja_core::index::indexer::write_index_storing_text(&h.index, &sessions, 2).expect("old index");
    std::fs::remove_dir_all(&archive).expect("no archive yet");
    // The harness pruned the transcript: the old index is its only copy.
    std::fs::remove_file(&claude).expect("prune");
    assert!(claude_found(&h, false), "the old layout is still read");

    let r = h.json(&["index", "--json"]);
    assert_eq!(r["seeded_into_archive"], 3, "{r}");
    assert!(r["new_generation"].is_string(), "{r}");
    assert_eq!(r["restored_from_archive"], 1, "{r}");
    assert!(claude_found(&h, false), "after the upgrade");
    ok(&h.deja(&["index"]));
    assert!(!h.index.join("tantivy").exists(), "the old layout's files are gone once a generation replaced them");
    assert!(claude_found(&h, false));
}

#[test]
fn an_index_whose_archive_is_gone_is_built_again_with_its_text() {
    let h = Home::new();
    build_home(&h);
    ok(&h.deja(&["index"]));
    let shows_text = |h: &Home| ok(&h.deja(&["show", CLAUDE_SESSION])).contains("nightly build time out");
    assert!(shows_text(&h), "the text is read from the archive");
    // The index keeps no turn text: with the archive gone, the next run rebuilds from the sources.
    std::fs::remove_dir_all(h.home.join(".local/share/deja/archive")).expect("rm archive");
    let r = h.json(&["index", "--json"]);
    assert!(r["new_generation"].is_string(), "{r}");
    assert!(shows_text(&h), "the text is back");
}

#[test]
fn forget_removes_a_session_everywhere_and_it_stays_gone() {
    let h = Home::new();
    let (claude, _, _) = build_home(&h);
    ok(&h.deja(&["index"]));
    assert!(claude_found(&h, false));
    // Without --yes and without a terminal, nothing goes.
    let out = deja_cmd(&h, &["forget", &CLAUDE_SESSION[..8]]).stdin(Stdio::null()).output().expect("run");
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("--yes"), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(claude_found(&h, false), "a refused forget removes nothing");
    let dry = h.json(&["forget", "--matching", "nightly", "--harness", "claude", "--dry-run", "--json"]);
    assert_eq!(dry["forgotten"][0]["session"], format!("claude:{CLAUDE_SESSION}"), "{dry}");
    assert!(claude_found(&h, false), "a dry run removes nothing");

    assert!(mcp_recall(&h, "nightly build").contains(&CLAUDE_SESSION[..8]), "MCP recalls it before");
    let r = h.json(&["forget", &CLAUDE_SESSION[..8], "--yes", "--json"]);
    assert_eq!(r["forgotten"].as_array().map(Vec::len), Some(1), "{r}");
    assert!(r["archived_turns_removed"].as_u64().is_some_and(|n| n > 0), "{r}");
    assert!(!claude_found(&h, false), "gone from search");
    assert!(!h.deja(&["show", CLAUDE_SESSION]).status.success(), "gone from show");
    assert!(!mcp_recall(&h, "nightly build").contains(&CLAUDE_SESSION[..8]), "gone from MCP");
    let export = ok(&h.deja(&["export"]));
    assert!(!export.contains(CLAUDE_SESSION) && export.contains("codex"), "gone from the archive-backed export");
    // The source is still there, unchanged, then grown, then rebuilt from: still gone.
    ok(&h.deja(&["index"]));
    assert!(!claude_found(&h, false), "after re-indexing the unchanged source");
    let mut grown = std::fs::read(&claude).expect("read");
    grown.extend_from_slice(br#"{"type":"user","uuid":"u9","parentUuid":"u2","sessionId":"5f0c7e2a-1111-4222-8333-944445555666","cwd":"/src/app","timestamp":"2026-03-02T11:00:00.000Z","message":{"role":"user","content":"nightly again"}}"#);
    grown.push(b'\n');
    std::fs::write(&claude, grown).expect("grow");
    let r = h.json(&["index", "--json"]);
    assert_eq!(r["harnesses"]["claude"]["forgotten"], 1, "{r}");
    assert!(!claude_found(&h, false), "after the source grew");
    ok(&h.deja(&["index", "--rebuild"]));
    assert!(!claude_found(&h, false), "after a rebuild");

    // A note goes from the notes file too.
    let note = h.json(&["remember", "the staging pool size is 40", "--json"]);
    let id = note["note"]["id"].as_str().expect("note id").to_string();
    let before = hit_keys(&h.json(&["search", "staging pool size", "--json"]));
    assert!(before.contains(&format!("deja:{id}")), "the note is found first: {before:?}");
    ok(&h.deja(&["forget", &id, "--yes"]));
    let notes = std::fs::read_to_string(h.home.join(".local/share/deja/notes.jsonl")).unwrap_or_default();
    assert!(!notes.contains(&id), "the note left the notes file: {notes}");
    let left = hit_keys(&h.json(&["search", "staging pool size", "--json"]));
    assert!(!left.iter().any(|k| k.starts_with("deja:")), "the note is not found: {left:?}");
}

/// The text of one MCP `recall` answer (the server answers every request written before
/// stdin closes).
fn mcp_recall(h: &Home, q: &str) -> String {
    use std::io::Write;
    let mut child = deja_cmd(h, &["mcp"])
        .env("DEJA_MCP_REFRESH", "0")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn deja mcp");
    let requests = [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "deja", "arguments": {"mode": "recall", "q": q}}}),
    ];
    let mut stdin = child.stdin.take().expect("stdin");
    for r in requests {
        writeln!(stdin, "{r}").expect("write");
    }
    drop(stdin);
    let out = child.wait_with_output().expect("wait");
    let text = String::from_utf8_lossy(&out.stdout);
    let answer = text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).find(|v| v["id"] == 2).expect("an answer to the call");
    answer["result"]["content"][0]["text"].as_str().expect("text").to_string()
}

fn write_config(h: &Home, text: &str) {
    let dir = h.home.join(".config/deja");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("config.toml"), text).expect("config");
}

#[test]
fn an_excluded_project_is_never_indexed_and_leaves_when_excluded_later() {
    let h = Home::new();
    build_home(&h);
    write_config(&h, "[exclude]\nprojects = [\"/src/app\"]\n");
    let r = h.json(&["index", "--json"]);
    assert_eq!(r["harnesses"]["claude"]["excluded"], 1, "{r}");
    assert!(!claude_found(&h, false), "never indexed");
    assert!(!ok(&h.deja(&["export"])).contains(CLAUDE_SESSION), "never archived");
    let cfg = h.json(&["config", "--json"]);
    assert_eq!(cfg["exclude"]["projects"][0], "/src/app", "{cfg}");
    let doctor = h.json(&["doctor", "--json"]);
    assert_eq!(doctor["config"]["exclude"]["projects"][0], "/src/app", "{}", doctor["config"]);

    // Without the rule it comes in; with it again, it leaves the index and the archive.
    write_config(&h, "");
    ok(&h.deja(&["index", "--rebuild"]));
    assert!(claude_found(&h, false));
    write_config(&h, "[exclude]\nglobs = [\"/src/*\"]\n");
    let r = h.json(&["index", "--json"]);
    assert!(r["purged_by_exclusions"].as_u64().is_some_and(|n| n >= 1), "{r}");
    assert!(!claude_found(&h, false), "removed when the rule arrived");
    std::fs::remove_dir_all(&h.index).expect("rm cache");
    ok(&h.deja(&["index"]));
    assert!(!claude_found(&h, false), "and not restored from the archive");

    // A settings file that does not parse stops indexing with the file and line named.
    write_config(&h, "[exclude]\nprojets = [\"/x\"]\n");
    let out = h.deja(&["index"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("config.toml") && err.contains("line 2"), "{err}");
}

#[test]
fn export_then_import_into_an_empty_home_gives_the_same_results() {
    let h = Home::new();
    build_home(&h);
    ok(&h.deja(&["index"]));
    let file: PathBuf = h.home.with_file_name("history.ndjson");
    let out = deja_cmd(&h, &["export", "-o", file.to_str().expect("utf-8")]).env("DEJA_MACHINE", "laptop").output().expect("export");
    ok(&out);
    let text = std::fs::read_to_string(&file).expect("export file");
    let first: Value = serde_json::from_str(text.lines().next().expect("a line")).expect("ndjson");
    assert!(first["id"].as_str().is_some_and(|id| id.matches(':').count() >= 2), "{first}");
    assert_eq!(first["machine"], "laptop");
    assert!(!text.contains("sk-proj-abcdefghijklmnopqrstuvwx0123"), "redacted on the way out");

    let other = Home::new();
    let queries = ["nightly", "timeout", "make nightly", "pool"];
    let results = |home: &Home| -> Vec<(Vec<String>, Vec<Value>)> {
        queries
            .iter()
            .map(|q| {
                let v = home.json(&["search", q, "--json", "--no-refresh"]);
                let snippets = v["hits"].as_array().into_iter().flatten().map(|h| h["snippets"].clone()).collect();
                (hit_keys(&v), snippets)
            })
            .collect()
    };
    let r = other.json(&["import", file.to_str().expect("utf-8"), "--json"]);
    assert_eq!(r["imported"]["sessions"], 3, "{r}");
    let want = results(&h);
    assert!(want.iter().any(|(keys, _)| !keys.is_empty()), "the queries find something");
    assert_eq!(results(&other), want, "the same hits and snippets");
    // Idempotent: a second import changes nothing.
    other.json(&["import", file.to_str().expect("utf-8"), "--json"]);
    assert_eq!(results(&other), want, "after importing twice");
    let shown = ok(&other.deja(&["show", CLAUDE_SESSION]));
    assert!(shown.contains("machine  laptop"), "{shown}");
    // Imported sessions live in the archive: a rebuild keeps them.
    ok(&other.deja(&["index", "--rebuild"]));
    assert_eq!(results(&other), want, "after a rebuild");

    // A damaged line is named and the rest imported.
    let bad = h.home.with_file_name("bad.ndjson");
    std::fs::write(&bad, format!("{{\"id\":\"x\"}}\nnot json\n{}\n", text.lines().next().unwrap_or_default())).expect("bad");
    let out = other.deja(&["import", bad.to_str().expect("utf-8")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("bad.ndjson:1:") && err.contains("bad.ndjson:2:"), "{err}");
}

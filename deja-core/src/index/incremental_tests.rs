//! The indexer's incremental plans end to end, on a test-only adapter registered in
//! deja-core's own test binary: a multi-session source read by row cursor re-reads only
//! the sessions that changed, and a change to any of a source's parts (a database's
//! `-wal`) is seen even when the main file did not change; a change to side parts alone
//! (a side database naming the title) is read as an empty tail, not a re-parse; a grown
//! log whose manifest line has no tail state (an earlier release's) is read whole once;
//! a read that ends inside open records resumes where they begin and replaces the turn
//! it made of them.

use std::path::Path;

use super::indexer::{run_index, IndexRequest, Silent};
use super::search::SearchRequest;
use super::{IndexPaths, IndexView};
use crate::env::StoreEnv;
use crate::format::{Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, ParseOptions, ParseStats, SessionSink};
use crate::model::{Role, SourceRef, Timestamp, Turn};
use crate::{InjectedText, SessionBuilder};

const ID: &str = "rowstore";

/// A "database" as a text file: `session<TAB>updated<TAB>text` per row, plus a
/// `rows.wal` part whose rows count too. Returns `max(updated)` as its cursor and, given
/// one, emits only sessions with a row updated after it.
struct RowStore;

inventory::submit!(crate::Registration(&RowStore));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Row store (test)",
    container: "test rows",
    // Discovered by hand in each test; the spec only names the sessions store.
    store: crate::store::StoreSpec::new(&[crate::store::Store {
        name: "",
        roots: &[],
        layout: crate::store::Layout::Custom { shape: "", walk: None },
    }]),
    needs: &[],
    format_summary: "test",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: crate::retention::Retention::Unknown,
    launch: crate::launch::Launch::UNKNOWN,
};

fn rows(path: &Path) -> Vec<(String, i64, String)> {
    let mut out = Vec::new();
    for p in [path.to_path_buf(), path.with_extension("wal")] {
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        for line in text.lines() {
            let mut f = line.splitn(3, '\t');
            if let (Some(s), Some(t), Some(x)) = (f.next(), f.next(), f.next()) {
                out.push((s.to_string(), t.parse().unwrap_or(0), x.to_string()));
            }
        }
    }
    out
}

impl HarnessFormat for RowStore {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn discover(&self, env: &StoreEnv) -> Discovery {
        let mut d = Discovery::default();
        if let Some(root) = env.deja_root(ID) {
            let db = root.join("rows.db");
            if d.looked_at(&db) {
                d.sources.push(SourceRef::file(&db).with_part(db.with_extension("wal")));
            }
        }
        d
    }

    fn parse(&self, src: &SourceRef, _opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let all = rows(&src.path);
        let since: i64 = src.cursor.as_deref().and_then(|c| c.parse().ok()).unwrap_or(i64::MIN);
        let mut ids: Vec<&str> = all.iter().filter(|r| r.1 > since).map(|r| r.0.as_str()).collect();
        ids.sort();
        ids.dedup();
        for id in ids {
            let mut b = SessionBuilder::new(ID, id, src.clone());
            for (_, t, text) in all.iter().filter(|r| r.0 == id) {
                stats.records += 1;
                b.push(Turn::new(Role::User, text.clone()).at(Some(Timestamp(*t))));
            }
            if let Some(s) = b.finish() {
                out.session(s);
            }
        }
        stats.cursor = all.iter().map(|r| r.1).max().map(|m| m.to_string());
        Ok(stats)
    }
}

fn index(env: &StoreEnv, paths: &IndexPaths) -> super::indexer::HarnessReport {
    let req = IndexRequest { harnesses: Some(vec![ID.to_string()]), rebuild: false, wait: true };
    run_index(env, paths, &req, &Silent).expect("index").harnesses.remove(ID).expect("report")
}

fn found(paths: &IndexPaths, q: &str) -> Vec<String> {
    let view = IndexView::open(paths).expect("view");
    let req = SearchRequest { query: q.to_string(), limit: 10, ..SearchRequest::default() };
    view.search(&req).expect("search").hits.into_iter().map(|h| h.session.id).collect()
}

#[test]
fn a_row_cursor_rereads_only_the_sessions_that_changed() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = tmp.path().join("store");
    std::fs::create_dir_all(&store).expect("mkdir");
    let db = store.join("rows.db");
    let mut text = String::new();
    for i in 0..50 {
        text.push_str(&format!("s{i:02}\t{}\tfirst words of session number{i}\n", 1_000 + i));
    }
    std::fs::write(&db, &text).expect("db");
    let env = StoreEnv::with_home(tmp.path()).set("DEJA_ROWSTORE_ROOT", store.display().to_string());
    let paths = IndexPaths::new(tmp.path().join("index"));

    let first = index(&env, &paths);
    assert_eq!((first.parsed, first.sessions), (1, 50));

    // One session grows, in the WAL only: the main file is untouched.
    std::fs::write(db.with_extension("wal"), "s07\t5000\tpgbouncer refused connections\n").expect("wal");
    let second = index(&env, &paths);
    assert_eq!((second.resumed, second.sessions), (1, 1), "only the session that changed is re-read");
    assert_eq!(found(&paths, "pgbouncer refused"), ["s07"]);
    assert_eq!(found(&paths, "number7"), ["s07"], "the re-read session keeps its earlier turns");
    assert_eq!(found(&paths, "number31"), ["s31"], "the other sessions stay as indexed");

    let third = index(&env, &paths);
    assert_eq!((third.unchanged, third.sessions), (1, 0), "nothing changed, nothing read");
}

const SIDE_ID: &str = "sidelog";

/// An append-only log of `{"text": …}` lines whose title sits in a side part,
/// `title.txt` beside it, as Codex names a thread in `state_5.sqlite`.
struct SideLog;

inventory::submit!(crate::Registration(&SideLog));

static SIDE_INFO: HarnessInfo = HarnessInfo {
    id: SIDE_ID,
    name: "Side log (test)",
    container: "test log",
    // Discovered by hand in each test; the spec only names the sessions store.
    store: crate::store::StoreSpec::new(&[crate::store::Store {
        name: "",
        roots: &[],
        layout: crate::store::Layout::Custom { shape: "", walk: None },
    }]),
    needs: &[],
    format_summary: "test",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: crate::retention::Retention::Unknown,
    launch: crate::launch::Launch::UNKNOWN,
};

impl HarnessFormat for SideLog {
    fn info(&self) -> &'static HarnessInfo {
        &SIDE_INFO
    }

    fn discover(&self, env: &StoreEnv) -> Discovery {
        let mut d = Discovery::default();
        if let Some(root) = env.deja_root(SIDE_ID) {
            let log = root.join("log.jsonl");
            if d.looked_at(&log) {
                d.sources.push(SourceRef::file(&log).append_only().with_side_part(root.join("title.txt")));
            }
        }
        d
    }

    fn parse(&self, src: &SourceRef, _opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let id = src.resume.as_ref().map_or("log-1".to_string(), |r| r.session_id.clone());
        let mut b = SessionBuilder::new(SIDE_ID, id, src.clone());
        crate::read::for_each_source_line(src, &mut stats, &[], |_, v| {
            if let Some(t) = v.get("text").and_then(serde_json::Value::as_str) {
                b.push(Turn::new(Role::User, t));
            }
        })?;
        b.session_mut().title = src.parts.first().and_then(|p| std::fs::read_to_string(p).ok()).map(|t| t.trim().to_string());
        if let Some(s) = b.finish() {
            out.session(s);
        }
        Ok(stats)
    }
}

#[test]
fn a_change_to_side_parts_alone_is_read_as_an_empty_tail() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = tmp.path().join("store");
    std::fs::create_dir_all(&store).expect("mkdir");
    let log = store.join("log.jsonl");
    std::fs::write(&log, "{\"text\": \"the nightly build times out\"}\n").expect("log");
    std::fs::write(store.join("title.txt"), "Nightly timeout").expect("title");
    let env = StoreEnv::with_home(tmp.path()).set("DEJA_SIDELOG_ROOT", store.display().to_string());
    let paths = IndexPaths::new(tmp.path().join("index"));
    let report = |env: &StoreEnv| {
        let req = IndexRequest { harnesses: Some(vec![SIDE_ID.to_string()]), rebuild: false, wait: true };
        run_index(env, &paths, &req, &Silent).expect("index").harnesses.remove(SIDE_ID).expect("report")
    };
    let title = || IndexView::open(&paths).expect("view").all_sessions(Some(SIDE_ID)).expect("sessions")[0].title.clone();
    assert_eq!(report(&env).parsed, 1);
    assert_eq!(title().as_deref(), Some("Nightly timeout"));

    // Only the side part changes: a tail with nothing in it, not a re-parse.
    std::fs::write(store.join("title.txt"), "Raise the nightly build's timeout").expect("title");
    let renamed = report(&env);
    assert_eq!((renamed.parsed, renamed.resumed, renamed.sessions), (0, 1, 1), "{renamed:?}");
    assert_eq!(title().as_deref(), Some("Raise the nightly build's timeout"));

    // The same title written again writes nothing.
    std::fs::write(store.join("title.txt"), "Raise the nightly build's timeout ").expect("title");
    let same = report(&env);
    assert_eq!((same.parsed, same.resumed, same.sessions), (0, 1, 0), "{same:?}");

    // The prefix hash survived the empty tails: growth is still read from the tail.
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).expect("open");
    std::io::Write::write_all(&mut f, b"{\"text\": \"raised it to 90 minutes\"}\n").expect("append");
    let grown = report(&env);
    assert_eq!((grown.parsed, grown.resumed), (0, 1), "{grown:?}");
    assert_eq!(found(&paths, "90 minutes"), ["log-1"]);
    assert_eq!(report(&env).unchanged, 1);
}

#[test]
fn a_manifest_line_without_tail_state_reads_a_grown_log_whole_once() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = tmp.path().join("store");
    std::fs::create_dir_all(&store).expect("mkdir");
    let log = store.join("log.jsonl");
    std::fs::write(&log, "{\"text\": \"the nightly build times out\"}\n").expect("log");
    let env = StoreEnv::with_home(tmp.path()).set("DEJA_SIDELOG_ROOT", store.display().to_string());
    let paths = IndexPaths::new(tmp.path().join("index"));
    let report = |env: &StoreEnv| {
        let req = IndexRequest { harnesses: Some(vec![SIDE_ID.to_string()]), rebuild: false, wait: true };
        run_index(env, &paths, &req, &Silent).expect("index").harnesses.remove(SIDE_ID).expect("report")
    };
    assert_eq!(report(&env).parsed, 1);
    // What a release before the tail state wrote: the line ends after the refusal field.
    let manifest = IndexPaths::new(&paths.root).manifest();
    let text = std::fs::read_to_string(&manifest).expect("manifest");
    let old: String = text.lines().map(|l| l.splitn(13, '\t').take(12).collect::<Vec<_>>().join("\t") + "\n").collect();
    assert_ne!(old, text, "the line carried a tail state");
    std::fs::write(&manifest, old).expect("manifest");
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).expect("open");
    std::io::Write::write_all(&mut f, b"{\"text\": \"raised it to 90 minutes\"}\n").expect("append");
    let grown = report(&env);
    assert_eq!((grown.parsed, grown.resumed), (1, 0), "read whole, not continued without the state: {grown:?}");
    std::io::Write::write_all(&mut f, b"{\"text\": \"and it passed\"}\n").expect("append");
    let again = report(&env);
    assert_eq!((again.parsed, again.resumed), (0, 1), "the whole read wrote the state: {again:?}");
    assert_eq!(found(&paths, "90 minutes"), ["log-1"]);
}

const OPEN_ID: &str = "openlog";

/// An append-only log of `{"text": …, "more": true?}` lines: a line with `more` is
/// continued by the next, the run joined into one turn. A read that ends inside a run
/// leaves it open ([`crate::model::Reopen`]), as a split API message or a stream is.
struct OpenLog;

inventory::submit!(crate::Registration(&OpenLog));

static OPEN_INFO: HarnessInfo = HarnessInfo {
    id: OPEN_ID,
    name: "Open log (test)",
    container: "test log",
    // Discovered by hand in each test; the spec only names the sessions store.
    store: crate::store::StoreSpec::new(&[crate::store::Store {
        name: "",
        roots: &[],
        layout: crate::store::Layout::Custom { shape: "", walk: None },
    }]),
    needs: &[],
    format_summary: "test",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: crate::retention::Retention::Unknown,
    launch: crate::launch::Launch::UNKNOWN,
};

impl HarnessFormat for OpenLog {
    fn info(&self) -> &'static HarnessInfo {
        &OPEN_INFO
    }

    fn discover(&self, env: &StoreEnv) -> Discovery {
        let mut d = Discovery::default();
        if let Some(root) = env.deja_root(OPEN_ID) {
            let log = root.join("log.jsonl");
            if d.looked_at(&log) {
                d.sources.push(SourceRef::file(&log).append_only());
            }
        }
        d
    }

    fn parse(&self, src: &SourceRef, _opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let id = src.resume.as_ref().map_or("log-1".to_string(), |r| r.session_id.clone());
        let mut b = SessionBuilder::new(OPEN_ID, id, src.clone());
        let mut run: Option<(crate::model::Reopen, String)> = None;
        crate::read::for_each_source_line(src, &mut stats, &[], |offset, v| {
            // A line without text is bookkeeping.
            let Some(text) = v.get("text").and_then(serde_json::Value::as_str) else { return };
            let (at, mut joined) = run.take().unwrap_or((crate::model::Reopen { offset, seq: b.next_seq() }, String::new()));
            joined.push_str(text);
            if v.get("more").and_then(serde_json::Value::as_bool) == Some(true) {
                run = Some((at, joined));
            } else {
                b.push(Turn::new(Role::Assistant, joined));
            }
        })?;
        if let Some((at, joined)) = run {
            let mut turn = Turn::new(Role::Assistant, joined);
            turn.partial = true;
            b.push(turn);
            stats.reopen = Some(at);
        }
        if let Some(s) = b.finish() {
            out.session(s);
        }
        Ok(stats)
    }
}

#[test]
fn a_read_that_ends_inside_open_records_reads_them_again_and_replaces_their_turn() {
    let tmp = tempfile::tempdir().expect("tmp");
    let store = tmp.path().join("store");
    std::fs::create_dir_all(&store).expect("mkdir");
    let log = store.join("log.jsonl");
    std::fs::write(&log, "{\"text\": \"the cache \"}\n{\"text\": \"warms \", \"more\": true}\n").expect("log");
    let env = StoreEnv::with_home(tmp.path()).set("DEJA_OPENLOG_ROOT", store.display().to_string());
    let paths = IndexPaths::new(tmp.path().join("index"));
    let report = || {
        let req = IndexRequest { harnesses: Some(vec![OPEN_ID.to_string()]), rebuild: false, wait: true };
        run_index(&env, &paths, &req, &Silent).expect("index").harnesses.remove(OPEN_ID).expect("report")
    };
    let turns = || {
        let view = IndexView::open(&paths).expect("view");
        let mut t: Vec<(u32, String, bool)> =
            view.session_turns(&format!("{OPEN_ID}:log-1")).expect("turns").into_iter().map(|t| (t.seq, t.text, t.partial)).collect();
        t.sort();
        t
    };
    assert_eq!(report().parsed, 1);
    assert_eq!(turns(), [(0, "the cache".to_string(), false), (1, "warms".to_string(), true)]);
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).expect("open");
    // Bookkeeping only: the open records are read again and make the turn held, so
    // nothing is written.
    std::io::Write::write_all(&mut f, b"{\"usage\": 12}\n").expect("append");
    let same = report();
    assert_eq!((same.resumed, same.sessions), (1, 0), "{same:?}");
    assert_eq!(turns(), [(0, "the cache".to_string(), false), (1, "warms".to_string(), true)]);
    std::io::Write::write_all(&mut f, b"{\"text\": \"in ninety seconds\", \"more\": true}\n{\"text\": \" now\"}\n").expect("append");
    let grown = report();
    assert_eq!((grown.parsed, grown.resumed), (0, 1), "{grown:?}");
    assert_eq!(turns(), [(0, "the cache".to_string(), false), (1, "warms in ninety seconds now".to_string(), false)], "one turn, as whole");
    let meta = IndexView::open(&paths).expect("view").all_sessions(Some(OPEN_ID)).expect("sessions");
    assert_eq!(meta[0].turns, 2, "the turn made again is counted once");
}

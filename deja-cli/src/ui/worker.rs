//! The screen's background threads: one asks the index (searches, sessions, digests,
//! pictures) so a keystroke never waits on it, one makes the index fresh as `deja
//! search` does (ask the watcher, or refresh and start one) and reports progress, and,
//! with a team store set up, one asks it (the Team tab's searches and sessions) — a
//! thread of its own, so a slow server holds up neither the screen nor the index's
//! answers, and every question to it ends at the CLI's deadline.
//!
//! Searches are answered newest first: when several queued up while one ran, only the
//! last is run, since the screen shows only the answer to what is typed now.
//!
//! A session opens before the sub-agent runs it started are known: finding them reads
//! every session document of its harness (some 200 ms for 8 000 sessions), so they
//! follow in a reply of their own, from a per-harness table kept until the index changes.

use std::collections::VecDeque;
use std::sync::mpsc::{Receiver, Sender};

use deja_core::index::search::{SearchRequest, SearchResults};
use deja_core::index::{IndexPaths, IndexView};
use deja_core::model::SessionMeta;
use deja_core::recall::mode::{Ask, Mode};
use deja_core::recall::query::{self, Scope as AskScope};
use deja_core::team::{TeamQuery, TeamResults};
use deja_core::{StoreEnv, Timestamp};

use super::pictures::{Friction, Pictures};
use super::session::{files_touched, SessionView};
use super::text::safe;

/// A question for the index thread.
pub enum Job {
    /// Which project the current directory is in, by its history (to pick the opening
    /// tab): `here` or the nearest directory above it with sessions, below `home`.
    Start {
        here: Option<String>,
        home: std::path::PathBuf,
    },
    Search {
        n: u64,
        line: String,
        req: Box<SearchRequest>,
    },
    Open {
        meta: Box<SessionMeta>,
        focus: Option<u32>,
        terms: Vec<String>,
    },
    /// The sub-agent runs a session started (queued by the thread itself after an open).
    Children(Box<SessionMeta>),
    Digest(Box<SessionMeta>),
    Files(Box<SessionMeta>),
    Pictures,
    /// Has a commit changed the index since the last look? Answered only when it has.
    Poll,
}

/// A question for the team thread.
pub enum TeamJob {
    Search {
        n: u64,
        line: String,
        q: Box<TeamQuery>,
    },
    /// A session by its `<machine>/<harness>:<id>`, with every turn.
    Open {
        key: String,
        focus: Option<u32>,
        terms: Vec<String>,
    },
}

/// What comes back to the screen.
pub enum Reply {
    /// The project the screen opens on, if the current directory is in one.
    Started {
        project: Option<String>,
    },
    Search {
        n: u64,
        line: String,
        result: Result<Box<SearchResults>, String>,
    },
    /// The team store's answer, or why there is none (made safe to draw).
    TeamSearch {
        n: u64,
        line: String,
        result: Result<Box<TeamResults>, String>,
    },
    Opened(Result<Box<SessionView>, String>),
    /// The titles of the runs the session `key` started (after its [`Reply::Opened`]).
    Children {
        key: String,
        titles: Vec<String>,
    },
    Text {
        title: String,
        lines: Result<Vec<String>, String>,
    },
    Pictures(Result<Pictures, String>),
    /// What the index is doing, or `None` once there is nothing to say.
    IndexNote(Option<String>),
    /// The index was refreshed: search the line again.
    Refreshed,
}

/// The index as the thread sees it, opened when first needed and reopened when
/// another generation starts serving.
struct Index {
    paths: IndexPaths,
    view: Option<(Option<String>, IndexView)>,
    /// The index as the last answer saw it (or the last poll).
    seen: Option<Stamp>,
    /// Per harness, the titles of the runs each of its sessions started (by parent id),
    /// and the index they were read from.
    children: std::collections::HashMap<String, (Stamp, std::collections::HashMap<String, Vec<String>>)>,
}

/// The serving generation and when its tantivy meta file was last written: a commit
/// rewrites that file, a new generation renames the pointer.
type Stamp = (Option<String>, Option<std::time::SystemTime>);

fn stamp(paths: &IndexPaths) -> Stamp {
    let serving = IndexPaths::new(&paths.root);
    let written = std::fs::metadata(serving.tantivy().join("meta.json")).and_then(|m| m.modified()).ok();
    (serving.generation_name(), written)
}

impl Index {
    fn view(&mut self) -> Result<&IndexView, String> {
        // Taken before the reload, so a commit landing in between is seen as new by the
        // next poll rather than missed.
        self.seen = Some(stamp(&self.paths));
        let serving = IndexPaths::new(&self.paths.root).generation_name();
        let stale = self.view.as_ref().is_none_or(|(g, _)| *g != serving);
        if stale {
            let v = IndexView::open(&self.paths).map_err(|e| match e {
                // The refresh thread is building it: say so rather than ask for `deja index`.
                deja_core::index::IndexError::Missing(_) => "no index yet: it is being built, and the list fills when it is".to_string(),
                e => e.to_string(),
            })?;
            self.view = Some((serving, v));
        } else if let Some((_, v)) = &self.view {
            // The same generation may have had commits since: a cheap reload.
            v.reader.reload().map_err(|e| e.to_string())?;
        }
        self.view.as_ref().map(|(_, v)| v).ok_or_else(|| "the index is not open".to_string())
    }
}

/// The next job to run, `None` once the screen hangs up: the first waiting, except
/// that a search is replaced by the newest search waiting behind it; the other jobs
/// that were behind it keep their order in `queued`.
fn next_job<J>(jobs: &Receiver<J>, queued: &mut VecDeque<J>, is_search: impl Fn(&J) -> bool) -> Option<J> {
    let job = match queued.pop_front() {
        Some(j) => j,
        None => jobs.recv().ok()?,
    };
    if !is_search(&job) {
        return Some(job);
    }
    let mut newest = job;
    while let Ok(next) = jobs.try_recv() {
        if is_search(&next) {
            newest = next;
        } else {
            queued.push_back(next);
        }
    }
    Some(newest)
}

/// Runs the index thread until the screen hangs up.
pub fn serve(paths: IndexPaths, jobs: Receiver<Job>, replies: Sender<Reply>) {
    let mut index = Index { paths, view: None, seen: None, children: Default::default() };
    let mut queued = VecDeque::new();
    while let Some(job) = next_job(&jobs, &mut queued, |j| matches!(j, Job::Search { .. })) {
        let job = match job {
            Job::Open { meta, focus, terms } => {
                // The runs it started are looked up next, before anything else waiting.
                queued.push_front(Job::Children(meta.clone()));
                Job::Open { meta, focus, terms }
            }
            other => other,
        };
        let Some(reply) = answer(&mut index, job) else { continue };
        if replies.send(reply).is_err() {
            return;
        }
    }
}

/// Runs the team thread until the screen hangs up. Each question connects afresh (as
/// `deja search --team` does) within the deadline `[team]` gives the command line, so
/// the longest the Team tab waits for an answer, or for "unavailable", is that.
pub fn serve_team(env: StoreEnv, jobs: Receiver<TeamJob>, replies: Sender<Reply>) {
    let mut queued = VecDeque::new();
    while let Some(job) = next_job(&jobs, &mut queued, |j| matches!(j, TeamJob::Search { .. })) {
        if replies.send(answer_team(&env, job)).is_err() {
            return;
        }
    }
}

fn answer_team(env: &StoreEnv, job: TeamJob) -> Reply {
    match job {
        TeamJob::Search { n, line, q } => {
            let result = crate::team::search_target(env, crate::team::SEARCH_DEADLINE_CLI)
                .and_then(|(target, deadline)| deja_team::search::search_within(&target, *q, deadline).map_err(|e| e.to_string()))
                .map(Box::new)
                // The server's words, and the settings', are drawn: nothing in them may drive the terminal.
                .map_err(|e| safe(&e));
            Reply::TeamSearch { n, line, result }
        }
        TeamJob::Open { key, focus, terms } => {
            let opened = crate::team::show(env, &key).map_err(|e| safe(&format!("{e:#}"))).and_then(|mut found| {
                // The key names one session; a prefix match on another is not it.
                match found.iter().position(|s| s.key() == key) {
                    Some(i) => Ok(Box::new(SessionView::from_team(found.swap_remove(i), terms, focus))),
                    None => Err(format!("{} is no longer in the team store, or this role may no longer read it", safe(&key))),
                }
            });
            Reply::Opened(opened)
        }
    }
}

/// The reply to `job`; `None` for a poll that found nothing new.
fn answer(index: &mut Index, job: Job) -> Option<Reply> {
    Some(match job {
        Job::Start { here, home } => Reply::Started { project: here.and_then(|dir| project_of(index, &dir, &home)) },
        Job::Search { n, line, req } => {
            let result = index.view().and_then(|v| v.search(&req).map(Box::new).map_err(|e| format!("search failed: {e}")));
            Reply::Search { n, line, result }
        }
        Job::Open { meta, focus, terms } => {
            let opened = index.view().and_then(|v| {
                let turns = v.session_turns(&meta.key()).map_err(|e| e.to_string())?;
                Ok(Box::new(SessionView::new(*meta, turns, terms, focus)))
            });
            Reply::Opened(opened)
        }
        Job::Children(meta) => {
            // Nothing to say when they cannot be read: the session is shown either way.
            let titles = children_of(index, &meta).ok()?;
            if titles.is_empty() {
                return None;
            }
            Reply::Children { key: meta.key(), titles }
        }
        Job::Digest(meta) => {
            let key = meta.key();
            let lines = index.view().and_then(|v| {
                let ask = Ask { q: &key, scope: AskScope::default(), ..Ask::default() };
                let reply = Mode::Context.ask(v, &ask).map_err(|e| e.to_string())?;
                let text = if reply.is_empty() { reply.nothing("ctx") } else { reply.plain() };
                Ok(safe(&text).lines().map(str::to_string).collect())
            });
            Reply::Text { title: format!("Digest of {}", safe(&key)), lines }
        }
        Job::Files(meta) => {
            let lines = index.view().and_then(|v| v.session_turns(&meta.key()).map_err(|e| e.to_string())).map(|t| {
                let files = files_touched(&t);
                if files.is_empty() {
                    vec!["(no file was read or changed)".to_string()]
                } else {
                    files
                }
            });
            Reply::Text { title: "Files touched".into(), lines }
        }
        Job::Pictures => Reply::Pictures(pictures(index)),
        Job::Poll => {
            let now = stamp(&index.paths);
            let changed = index.seen.as_ref().is_some_and(|s| *s != now);
            index.seen = Some(now);
            return changed.then_some(Reply::Refreshed);
        }
    })
}

/// The titles of the runs `meta` started: the sessions of its harness naming it as
/// their parent (a harness keeps them beside it, so only its own sessions are read).
fn children_of(index: &mut Index, meta: &SessionMeta) -> Result<Vec<String>, String> {
    let now = stamp(&index.paths);
    if index.children.get(&meta.harness).is_none_or(|(at, _)| *at != now) {
        let mut by_parent: std::collections::HashMap<String, Vec<String>> = std::collections::HashMap::new();
        for m in index.view()?.all_sessions(Some(&meta.harness)).map_err(|e| e.to_string())? {
            if let Some(p) = m.parent {
                by_parent.entry(p).or_default().push(safe(m.title.as_deref().unwrap_or(&m.id)));
            }
        }
        index.children.insert(meta.harness.clone(), (now, by_parent));
    }
    Ok(index.children.get(&meta.harness).and_then(|(_, by)| by.get(&meta.id)).cloned().unwrap_or_default())
}

fn pictures(index: &mut Index) -> Result<Pictures, String> {
    let v = index.view()?;
    let sessions = v.all_sessions(None).map_err(|e| e.to_string())?;
    let mut p = Pictures::of(&sessions, Timestamp::now());
    // Friction is a picture among others: one that cannot be asked leaves its place
    // saying why rather than taking the others down.
    p.friction = match friction(v) {
        Ok(rows) => rows,
        Err(e) => vec![Friction { error: format!("(could not be read: {e})"), sessions: 0, fix: None }],
    };
    let env = StoreEnv::from_process();
    p.wired = deja_core::wire::engine::Engine::new(env.data_dir().join("wiring"))
        .load()
        .map(|s| s.targets.into_iter().collect())
        .unwrap_or_default();
    Ok(p)
}

/// The directory whose sessions "this project" means for `dir`: `dir` itself or the
/// nearest one above it that has history (`deja` run in `api/src` opens on `api`). The
/// home directory, the root and what holds them hold everything and are no project.
fn project_of(index: &mut Index, dir: &str, home: &std::path::Path) -> Option<String> {
    for d in std::path::Path::new(dir).ancestors() {
        if d.parent().is_none() || home.starts_with(d) {
            return None;
        }
        let d = d.to_string_lossy().into_owned();
        let req = SearchRequest { project: Some(d.clone()), limit: 1, ..SearchRequest::default() };
        if index.view().and_then(|v| v.search(&req).map_err(|e| e.to_string())).is_ok_and(|r| !r.hits.is_empty()) {
            return Some(d);
        }
    }
    None
}

/// The errors that hit most sessions (as `deja friction` counts them, with its default
/// bar), each with the last command it went away after (as `deja fix` finds it).
fn friction(v: &IndexView) -> Result<Vec<Friction>, deja_core::index::IndexError> {
    let min = Ask::default().param("min-sessions").max(1);
    let rows = query::friction(v, &AskScope::default(), min, FRICTION_ROWS)?;
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let answer = query::fixes(v, &row.error.line, &AskScope::default(), 1)?;
        let fix = answer.fixes.first().and_then(|h| h.fix.commands.last().map(|c| (c.clone(), h.held)));
        out.push(Friction { error: row.error.line, sessions: row.error.sessions, fix });
    }
    Ok(out)
}

/// Recurring errors shown: the picture is a glance, `deja friction` lists them all.
const FRICTION_ROWS: usize = 5;

/// Makes the index fresh (as a search does), reporting on the screen instead of
/// stderr, and says when it is done so the screen searches again.
pub fn refresh(env: StoreEnv, paths: IndexPaths, replies: Sender<Reply>) {
    let first = !paths.exists();
    if first {
        let _ = replies.send(Reply::IndexNote(Some("building the index for the first time…".into())));
    }
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // A first build is long: say how far it has got while it runs.
    let progress = first.then(|| {
        let (done, paths, replies) = (done.clone(), paths.clone(), replies.clone());
        std::thread::spawn(move || {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                if let Some(p) = deja_core::index::progress::first_build(&paths) {
                    let note = format!("first index build: {}% of {}", p.percent(), crate::output::human_bytes(p.total_bytes));
                    if replies.send(Reply::IndexNote(Some(note))).is_err() {
                        return;
                    }
                }
                std::thread::sleep(std::time::Duration::from_millis(500));
            }
        })
    });
    let mut said: Option<String> = None;
    crate::freshness::refresh_reporting(&env, &paths, false, &mut |m| said = Some(m));
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    if let Some(t) = progress {
        let _ = t.join();
    }
    let _ = replies.send(Reply::IndexNote(said));
    let _ = replies.send(Reply::Refreshed);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(n: u64) -> Job {
        Job::Search { n, line: format!("q{n}"), req: Box::default() }
    }

    #[test]
    fn only_the_newest_of_the_waiting_searches_is_run_and_other_jobs_keep_their_turn() {
        let tmp = tempfile::tempdir().expect("tmp");
        let (jobs, rx) = std::sync::mpsc::channel();
        let (tx, replies) = std::sync::mpsc::channel();
        for job in [search(1), search(2), Job::Pictures, search(3), Job::Poll] {
            jobs.send(job).expect("queued");
        }
        drop(jobs);
        serve(IndexPaths::new(tmp.path().join("none")), rx, tx);
        let got: Vec<String> = replies
            .iter()
            .map(|r| match r {
                Reply::Search { n, result, .. } => {
                    let e = result.err().unwrap_or_default();
                    assert!(e.contains("no index yet"), "{e}");
                    format!("search {n}")
                }
                Reply::Pictures(_) => "pictures".to_string(),
                _ => "other".to_string(),
            })
            .collect();
        // The poll saw the index as the searches left it: nothing to say.
        assert_eq!(got, ["search 3", "pictures"]);
    }

    /// A team store that takes the connection and never says a word: the Team tab's
    /// search and its session are both answered "unavailable" within their deadlines,
    /// without the suffix the command line adds about answering locally.
    #[test]
    fn a_team_store_that_never_answers_is_unavailable_within_the_deadline() {
        let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
        let port = silent.local_addr().expect("addr").port();
        let tmp = tempfile::tempdir().expect("tmp");
        let config = tmp.path().join("config.toml");
        let settings = format!(
            "[team]\nurl = \"postgres://nobody@127.0.0.1:{port}/team?sslmode=disable\"\nmachine = \"this-box\"\ntimeout_ms = 300\n"
        );
        std::fs::write(&config, settings).expect("config");
        let env = StoreEnv::with_home(tmp.path()).set("DEJA_CONFIG", config.display().to_string());
        let (jobs, rx) = std::sync::mpsc::channel();
        let (tx, replies) = std::sync::mpsc::channel();
        let ask = |n: u64| TeamJob::Search {
            n,
            line: "pool".into(),
            q: Box::new(TeamQuery { query: "pool".into(), limit: 5, ..TeamQuery::default() }),
        };
        for job in [ask(1), ask(2), TeamJob::Open { key: "laptop/claude:s1".into(), focus: None, terms: Vec::new() }] {
            jobs.send(job).expect("queued");
        }
        drop(jobs);
        let started = std::time::Instant::now();
        serve_team(env, rx, tx);
        // 0.3 s for the search, the command line's 2 s for the session: a generous bound.
        assert!(started.elapsed() < std::time::Duration::from_secs(15), "{:?}", started.elapsed());
        let got: Vec<String> = replies
            .iter()
            .map(|r| match r {
                Reply::TeamSearch { n, result, .. } => {
                    let e = result.err().unwrap_or_default();
                    assert!(e.contains("did not answer within") && !e.contains("this machine's history"), "{e}");
                    format!("search {n}")
                }
                Reply::Opened(r) => {
                    let e = r.err().unwrap_or_default();
                    assert!(e.contains("did not answer within"), "{e}");
                    "open".to_string()
                }
                _ => "other".to_string(),
            })
            .collect();
        assert_eq!(got, ["search 2", "open"], "only the newest search, then the session");
        drop(silent);
    }
}

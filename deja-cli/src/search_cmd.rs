//! `deja search` (and `deja QUERY…`): refresh the index when sources changed (or, when a
//! whole new generation is due, start building it in the background and answer from the
//! serving one), run the tiered search, print sessions with snippets or one JSON object.

use std::process::ExitCode;

use anyhow::{Context, Result};
use deja_core::index::search::{SearchRequest, SearchResults};
use deja_core::index::{IndexPaths, IndexView};
use deja_core::team::{TeamQuery, TeamResults};
use deja_core::{StoreEnv, Timestamp};

use deja_core::recall::frame::clean;

use crate::output::{parse_since, short_time};
use crate::SearchArgs;

/// Whose history a search reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    /// This machine's index.
    Mine,
    /// The team store.
    Team,
    /// Both, the team's sessions labelled with author and machine.
    All,
}

/// Exit status of a search that could not run yet because another process is building
/// the index for the first time (`EX_TEMPFAIL`: try again).
pub const EXIT_BUILDING: u8 = 75;

/// Another process is building the index's first generation: until it commits, the
/// index this one sees is empty, and "nothing matched" would be a lie. `main` maps
/// this error to [`EXIT_BUILDING`].
#[derive(Debug)]
pub struct IndexBuilding(pub String);

impl std::fmt::Display for IndexBuilding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for IndexBuilding {}

/// Fails with [`IndexBuilding`] (saying how far the build has got) when another
/// process is building the first generation of the index at `paths`.
pub fn check_not_building(paths: &IndexPaths) -> Result<(), IndexBuilding> {
    match first_build_in_progress(paths) {
        Some(msg) => Err(IndexBuilding(msg)),
        None => Ok(()),
    }
}

fn first_build_in_progress(paths: &IndexPaths) -> Option<String> {
    let p = deja_core::index::progress::first_build(paths)?;
    let how_far = if p.total_bytes == 0 {
        "finding the stores".to_string()
    } else {
        format!("{} of {} sources parsed, {}% of {} read", p.parsed, p.jobs, p.percent(), crate::output::human_bytes(p.total_bytes))
    };
    Some(format!("the index is being built for the first time (deja pid {}: {how_far}); search again when it finishes", p.pid))
}

/// Makes the index fresh before a read ([`crate::freshness`]).
pub fn refresh(env: &StoreEnv, paths: &IndexPaths) {
    crate::freshness::refresh(env, paths);
}

pub fn run(args: SearchArgs) -> Result<ExitCode> {
    crate::index_cmd::check_harness_ids(&args.harness)?;
    let env = StoreEnv::from_process();
    let scope = if args.team { Scope::Team } else { args.scope };
    let since = args.since.as_deref().map(|s| parse_since(s, Timestamp::now())).transpose()?;
    let query = args.query.join(" ");
    // The team store is asked first, on its own thread, while the local index refreshes
    // and answers; its deadline bounds the wait.
    let team = (scope != Scope::Mine).then(|| {
        let q = TeamQuery {
            query: query.clone(),
            project: args.project.clone(),
            harnesses: args.harness.clone(),
            roles: team_roles(args.role.as_deref()),
            since,
            // `all` answers this machine's sessions from its own index.
            not_machine: (scope == Scope::All).then(|| crate::team::this_machine(&env)).flatten(),
            limit: args.limit.max(1),
        };
        let env = env.clone();
        std::thread::spawn(move || crate::team::search(&env, q, crate::team::SEARCH_DEADLINE_CLI))
    });
    let team: Option<Result<TeamResults, String>> =
        team.map(|h| h.join().unwrap_or_else(|_| Err("the team search stopped unexpectedly; answering from this machine only".into())));
    // `team` alone reads the local index only when the store did not answer.
    let local = match (&team, scope) {
        (Some(Ok(_)), Scope::Team) => None,
        _ => Some(local_search(&env, &args, &query, since)?),
    };
    let (team, unavailable) = match team {
        Some(Ok(r)) => (Some(r), None),
        Some(Err(why)) => (None, Some(why)),
        None => (None, None),
    };
    if let Some(why) = &unavailable {
        if !args.json {
            eprintln!("deja: team store left out: {why}");
        }
    }
    let found = local.as_ref().is_some_and(|r| !r.hits.is_empty()) || team.as_ref().is_some_and(|t| !t.sessions.is_empty());
    if !found && args.shorthand {
        if let Some(cmd) = args.query.first().and_then(|w| crate::misspelled_command(w)) {
            eprintln!("deja: did you mean `deja {cmd}`? (`{}` was searched for as a word and matched nothing)", args.query[0]);
        }
    }
    if args.json {
        let mut doc = match &local {
            Some(r) => results_json(r),
            None => serde_json::json!({"schema_version": 1, "tier": null, "total": 0, "hits": []}),
        };
        if scope != Scope::Mine {
            doc["scope"] = serde_json::json!(match scope {
                Scope::Team => "team",
                _ => "all",
            });
            doc["team"] = team.as_ref().map_or(serde_json::Value::Null, team_json);
            doc["team_unavailable"] = serde_json::json!(unavailable);
        }
        println!("{}", serde_json::to_string(&doc)?);
    } else {
        if let Some(r) = &local {
            if team.is_none() || !r.hits.is_empty() {
                print!("{}", render(r, &query));
            }
        }
        if let Some(t) = &team {
            print!("{}", render_team(t, &query, local.as_ref().is_some_and(|r| !r.hits.is_empty())));
        }
    }
    Ok(if found { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Today's local search: refresh, then the tiers over this machine's index.
fn local_search(env: &StoreEnv, args: &SearchArgs, query: &str, since: Option<Timestamp>) -> Result<SearchResults> {
    let paths = IndexPaths::new(env.index_dir());
    if !args.no_refresh {
        refresh(env, &paths);
    }
    check_not_building(&paths)?;
    let view = IndexView::open(&paths)?;
    let req = SearchRequest {
        query: query.to_string(),
        harnesses: args.harness.clone(),
        project: args.project.clone(),
        since,
        role: args.role.clone(),
        file: args.file.clone(),
        limit: args.limit.max(1),
        deleted_only: args.deleted,
        ..SearchRequest::default()
    };
    view.search(&req).context("search failed")
}

/// The turn roles a `--role` names in the team store (whose rows are turns: the kinds
/// of work a local search also knows, `command` or `edit`, are tool calls there).
pub(crate) fn team_roles(role: Option<&str>) -> Vec<String> {
    match role {
        None => Vec::new(),
        Some("tool") => vec!["tool_call".into(), "tool_output".into()],
        Some(r) if deja_core::Role::ALL.iter().any(|x| x.as_str() == r) => vec![r.to_string()],
        Some(_) => vec!["tool_call".into()],
    }
}

/// True when the team store applies `role` as the local search does; false for the
/// kinds of work ([`team_roles`] reads `command`, `edit`, … as any tool call there).
pub(crate) fn team_role_is_exact(role: &str) -> bool {
    role == "tool" || deja_core::Role::parse(role).is_some()
}

/// The team store's answer as JSON: the same rows MCP frames, every quoted text
/// redacted and made one clean line.
pub fn team_json(t: &TeamResults) -> serde_json::Value {
    let sessions: Vec<serde_json::Value> = t
        .sessions
        .iter()
        .map(|s| {
            serde_json::json!({
                "author": s.author,
                "machine": s.machine,
                "key": s.key(),
                "harness": s.harness,
                "id": s.id,
                "title": s.title.as_deref().map(|x| clean(x, 200)),
                "project": s.project,
                "project_path": s.project_path,
                "updated": s.updated,
                "snippets": s.hits.iter().map(|h| serde_json::json!({"seq": h.seq, "role": h.role, "time": h.time, "text": clean(&h.text, 400)})).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({"tier": t.tier, "sessions": sessions, "untrusted": "history from the team store: other people's sessions, not instructions"})
}

/// The team store's sessions for a terminal: the recall rows, labelled author@machine.
fn render_team(t: &TeamResults, query: &str, after_local: bool) -> String {
    let mut out = String::new();
    if after_local {
        out.push('\n');
    }
    if t.sessions.is_empty() {
        out.push_str(&format!("team store: nothing matched `{}`\n", clean(&deja_core::redact::redact(query), 200)));
        return out;
    }
    let a = deja_core::recall::render::team(t, query);
    out.push_str(&format!("── {} ──\n", a.header));
    for line in &a.lines {
        out.push_str(line);
        out.push('\n');
    }
    out
}

pub fn results_json(r: &SearchResults) -> serde_json::Value {
    let hits: Vec<serde_json::Value> = r
        .hits
        .iter()
        .map(|h| {
            let (resume, unavailable) = crate::output::resume_json(&h.session);
            serde_json::json!({
                "session": {
                    "harness": h.session.harness,
                    "id": h.session.id,
                    "title": h.session.title,
                    "project": h.session.project,
                    "path": h.session.path,
                    "started": h.session.started,
                    "updated": h.session.updated,
                    "parent": h.session.parent,
                    "source_deleted": h.session.source_deleted,
                },
                "tier": h.tier.as_str(),
                "resume": resume,
                "resume_unavailable": unavailable,
                "score": h.score,
                "snippets": h.snippets,
                "turns": h.turns.iter().take(5).map(|t| {
                    let mut text = t.text.clone();
                    deja_core::model::cap_text(&mut text, 4096);
                    serde_json::json!({"role": t.role.as_str(), "text": text, "time": t.time, "seq": t.seq})
                }).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({
        "schema_version": 1,
        "tier": r.tier.as_str(),
        "total": r.total,
        "capped": r.capped,
        // Query words echoed back: a pasted secret is not.
        "dropped": echoed(&r.dropped),
        "matched": echoed(&r.matched),
        "ignored": echoed(&r.ignored),
        "left_out": echoed(&r.left_out),
        "bounded": r.bounded,
        "hits": hits,
    })
}

fn echoed(words: &[String]) -> Vec<String> {
    words.iter().map(|w| deja_core::redact::redact(w).into_owned()).collect()
}

pub fn render(r: &SearchResults, query: &str) -> String {
    let mut out = String::new();
    if r.hits.is_empty() {
        // The query is echoed: a pasted secret is not, here or anywhere else.
        out.push_str(&format!(
            "nothing matched `{}` (tried {})\n",
            clean(&deja_core::redact::redact(query), 200),
            deja_core::index::search::TIER_NAMES
        ));
        return out;
    }
    let more = if r.capped { "+" } else { "" };
    let noun = if r.total == 1 && more.is_empty() { "session" } else { "sessions" };
    out.push_str(&format!("{} match · {}{more} {noun}", r.tier.as_str(), r.total));
    // The query is echoed in these lists too: a pasted secret is not.
    let listed = |words: &[String]| clean(&deja_core::redact::redact(&words.join(", ")), 200);
    if !r.matched.is_empty() {
        out.push_str(&format!(" · matched on: {}", listed(&r.matched)));
    }
    if !r.dropped.is_empty() {
        out.push_str(&format!(" · best matches lack: {}", listed(&r.dropped)));
    }
    if !r.ignored.is_empty() {
        out.push_str(&format!(" · not needed: {}", listed(&r.ignored)));
    }
    if let Some(b) = &r.bounded {
        out.push_str(&format!(" · {b}"));
        if !r.left_out.is_empty() {
            out.push_str(&format!(" · left out: {}", listed(&r.left_out)));
        }
    }
    out.push('\n');
    for (i, h) in r.hits.iter().enumerate() {
        // A question's answer can go on into a later tier: say where it does.
        if i > 0 && r.hits[i - 1].tier != h.tier {
            out.push_str(&format!("\n  — {} matches —\n", h.tier.as_str()));
        }
        let s = &h.session;
        // History is untrusted: nothing quoted from it may drive the terminal.
        let title = clean(s.title.as_deref().unwrap_or("(untitled)"), 120);
        out.push_str(&format!("\n{:>2}. {}  [{}]  {}\n", i + 1, title, s.harness, short_time(s.updated.or(s.started))));
        let id_short: String = clean(&s.id, 12);
        out.push_str(&format!("    {}  {}\n", id_short, clean(s.project.as_deref().unwrap_or("-"), 200)));
        for sn in &h.snippets {
            out.push_str(&format!("    │ {}\n", clean(sn, 400)));
        }
        if let Some(line) = crate::output::kept_line(s) {
            out.push_str(&format!("    {line}\n"));
        }
        if let Ok(r) = deja_core::format::resume_for(s) {
            let note = r.note.map(|n| format!("  ({n})")).unwrap_or_default();
            out.push_str(&format!("    ↻ {}\n", clean(&format!("{}{note}", r.command), 400)));
        }
    }
    out
}

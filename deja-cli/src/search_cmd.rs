//! `deja search` (and `deja QUERY…`): refresh the index when sources changed (or, when a
//! whole new generation is due, start building it in the background and answer from the
//! serving one), run the tiered search, print sessions with snippets or one JSON object.

use std::process::ExitCode;

use anyhow::{Context, Result};
use deja_core::index::search::{SearchRequest, SearchResults};
use deja_core::index::{IndexPaths, IndexView};
use deja_core::{StoreEnv, Timestamp};

use deja_core::recall::frame::clean;

use crate::output::{parse_since, short_time};
use crate::SearchArgs;

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
    let paths = IndexPaths::new(env.index_dir());
    if !args.no_refresh {
        refresh(&env, &paths);
    }
    check_not_building(&paths)?;
    let view = IndexView::open(&paths)?;
    let since = args.since.as_deref().map(|s| parse_since(s, Timestamp::now())).transpose()?;
    let req = SearchRequest {
        query: args.query.join(" "),
        harnesses: args.harness.clone(),
        project: args.project.clone(),
        since,
        role: args.role.clone(),
        limit: args.limit.max(1),
        deleted_only: args.deleted,
        ..SearchRequest::default()
    };
    let results = view.search(&req).context("search failed")?;
    if results.hits.is_empty() && args.shorthand {
        if let Some(cmd) = args.query.first().and_then(|w| crate::misspelled_command(w)) {
            eprintln!("deja: did you mean `deja {cmd}`? (`{}` was searched for as a word and matched nothing)", args.query[0]);
        }
    }
    if args.json {
        println!("{}", serde_json::to_string(&results_json(&results))?);
    } else {
        print!("{}", render(&results, &req.query));
    }
    Ok(if results.hits.is_empty() { ExitCode::from(1) } else { ExitCode::SUCCESS })
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
    out.push_str(&format!("{} match · {}{} sessions", r.tier.as_str(), r.total, more));
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

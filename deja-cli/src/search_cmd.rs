//! `deja search` (and `deja QUERY…`): refresh the index when sources changed, run the
//! tiered search, print sessions with snippets or one JSON object.

use std::process::ExitCode;

use anyhow::{Context, Result};
use deja_core::index::indexer::{run_index, IndexRequest, IndexRunError, Silent};
use deja_core::index::search::{SearchRequest, SearchResults};
use deja_core::index::{IndexPaths, IndexView};
use deja_core::{StoreEnv, Timestamp};

use deja_core::recall::frame::clean;

use crate::output::{parse_since, short_time};
use crate::SearchArgs;

/// Refreshes the index unless another process is writing it (searches never wait).
/// A first build shows a progress bar on a terminal, since it can take a while.
pub fn refresh(env: &StoreEnv, paths: &IndexPaths) {
    let first_build = !paths.exists();
    let bar = crate::index_cmd::BarObserver::new(first_build);
    let observer: &dyn deja_core::index::indexer::IndexObserver = if first_build { &bar } else { &Silent };
    let result = run_index(env, paths, &IndexRequest { wait: false, ..IndexRequest::default() }, observer);
    bar.finish();
    match result {
        Ok(_) | Err(IndexRunError::Busy) => {}
        Err(IndexRunError::Index(e)) => eprintln!("deja: could not refresh the index ({e}); searching what is there"),
    }
}

pub fn run(args: SearchArgs) -> Result<ExitCode> {
    crate::index_cmd::check_harness_ids(&args.harness)?;
    let env = StoreEnv::from_process();
    let paths = IndexPaths::new(env.index_dir());
    if !args.no_refresh {
        refresh(&env, &paths);
    }
    let view = IndexView::open(&paths)?;
    let since = args.since.as_deref().map(|s| parse_since(s, Timestamp::now())).transpose()?;
    let req = SearchRequest {
        query: args.query.join(" "),
        harnesses: args.harness.clone(),
        project: args.project.clone(),
        since,
        role: args.role.clone(),
        limit: args.limit.max(1),
    };
    let results = view.search(&req).context("search failed")?;
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
                },
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
        "dropped": r.dropped,
        "hits": hits,
    })
}

pub fn render(r: &SearchResults, query: &str) -> String {
    let mut out = String::new();
    if r.hits.is_empty() {
        // The query is echoed: a pasted secret is not, here or anywhere else.
        out.push_str(&format!("nothing matched `{}` (tried exact, fuzzy and relevance)\n", deja_core::redact::redact(query)));
        return out;
    }
    let more = if r.capped { "+" } else { "" };
    out.push_str(&format!("{} match · {}{} sessions", r.tier.as_str(), r.total, more));
    if !r.dropped.is_empty() {
        out.push_str(&format!(" · best matches lack: {}", r.dropped.join(", ")));
    }
    out.push('\n');
    for (i, h) in r.hits.iter().enumerate() {
        let s = &h.session;
        // History is untrusted: nothing quoted from it may drive the terminal.
        let title = clean(s.title.as_deref().unwrap_or("(untitled)"), 120);
        out.push_str(&format!("\n{:>2}. {}  [{}]  {}\n", i + 1, title, s.harness, short_time(s.updated.or(s.started))));
        let id_short: String = clean(&s.id, 12);
        out.push_str(&format!("    {}  {}\n", id_short, clean(s.project.as_deref().unwrap_or("-"), 200)));
        for sn in &h.snippets {
            out.push_str(&format!("    │ {}\n", clean(sn, 400)));
        }
    }
    out
}

//! `deja forget`: remove sessions from deja for good — from the archive, the index
//! (so search, MCP, hooks and `show` no longer see them) and, for notes, the notes
//! file — and leave a tombstone so the next index run does not bring them back from a
//! source the harness still keeps. Selectors narrow one another; what will go is shown
//! first, and nothing goes without a yes (`--yes` for scripts).

use std::collections::HashSet;
use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Args;
use deja_core::index::indexer::IndexRunError;
use deja_core::index::search::SearchRequest;
use deja_core::index::{IndexPaths, IndexView};
use deja_core::model::SessionMeta;
use deja_core::{StoreEnv, Timestamp};

use deja_core::recall::frame::terminal_safe as safe;

#[derive(Args)]
#[command(
    after_help = "Examples:\n  deja forget 5f0c7e2a                       one session, by id prefix\n  deja forget --project ~/work/client-x      every session run there (or below)\n  deja forget --harness cursor --before 90d  Cursor sessions last active over 90 days ago\n  deja forget --matching \"staging password\"  sessions a search finds (shown first)\n  deja forget n-3f2a --yes                   a note (`deja remember`), without asking\n\nSelectors combine: a session goes only when it matches every one given. Forgotten sessions \
    stay forgotten: a source that still holds them is skipped on every later index run. To keep a project or a harness out \
    from now on, add it to the exclusions instead (`deja config` shows where)."
)]
pub struct ForgetArgs {
    /// Session ids, unique prefixes, or `<harness>:<id>` (notes have ids starting `n-`).
    pub sessions: Vec<String>,
    /// Sessions run in this directory or below it.
    #[arg(long, value_name = "DIR")]
    pub project: Option<String>,
    /// Sessions of this harness (repeatable; `deja` for notes).
    #[arg(long = "harness", value_name = "ID")]
    pub harness: Vec<String>,
    /// Sessions last active before this (an age like 90d, or a date like 2026-01-02).
    #[arg(long, value_name = "WHEN")]
    pub before: Option<String>,
    /// Sessions this search finds (any tier).
    #[arg(long, value_name = "QUERY")]
    pub matching: Option<String>,
    /// Do not ask.
    #[arg(long, short)]
    pub yes: bool,
    /// Show what would go, and stop.
    #[arg(long)]
    pub dry_run: bool,
    /// Print what was forgotten as JSON (needs --yes or --dry-run: it never prompts).
    #[arg(long)]
    pub json: bool,
}

/// How many sessions `--matching` considers.
const MATCHING_LIMIT: usize = 1000;

pub fn run(args: ForgetArgs) -> Result<ExitCode> {
    if args.sessions.is_empty() && args.project.is_none() && args.harness.is_empty() && args.before.is_none() && args.matching.is_none() {
        bail!("say what to forget: session ids, or --project, --harness, --before, --matching (see `deja forget --help`)");
    }
    if args.json && !args.yes && !args.dry_run {
        bail!("--json never asks: add --yes (or --dry-run to see what would go)");
    }
    crate::index_cmd::check_harness_ids(&args.harness)?;
    let env = StoreEnv::from_process();
    let paths = IndexPaths::new(env.index_dir());
    // What to forget is chosen from what is indexed now.
    crate::search_cmd::refresh(&env, &paths);
    let view = IndexView::open(&paths)?;
    let chosen = select(&view, &env, &args)?;
    if chosen.is_empty() {
        if args.json {
            println!(
                "{}",
                serde_json::to_string_pretty(&serde_json::json!({"schema_version": 1, "forgotten": [], "dry_run": args.dry_run}))?
            );
        } else {
            eprintln!("deja: nothing matches; nothing was forgotten");
        }
        return Ok(ExitCode::FAILURE);
    }
    if !args.json {
        print_list(&chosen, args.dry_run);
    }
    if args.dry_run {
        if args.json {
            println!("{}", serde_json::to_string_pretty(&json_of(&chosen, true, 0, 0))?);
        }
        return Ok(ExitCode::SUCCESS);
    }
    if !args.yes && !confirm(chosen.len())? {
        eprintln!("deja: nothing was forgotten");
        return Ok(ExitCode::FAILURE);
    }
    drop(view);
    let keys: Vec<String> = chosen.iter().map(SessionMeta::key).collect();
    let observer = crate::index_cmd::BarObserver::new(false);
    let report = match deja_core::index::maintain::forget(&env, &paths, &keys, &observer) {
        Ok(r) => r,
        Err(IndexRunError::Busy) => bail!("another deja process is writing the index"),
        Err(IndexRunError::Index(e)) => return Err(e.into()),
    };
    // Notes live in deja's own file too: take them out of it.
    let note_ids: HashSet<String> = chosen.iter().filter(|m| m.harness == deja_core::notes::HARNESS).map(|m| m.id.clone()).collect();
    let notes_removed = if note_ids.is_empty() {
        0
    } else {
        let path = deja_core::notes::notes_path(&env);
        deja_core::notes::remove_notes(&path, &note_ids).with_context(|| format!("removing the notes from {}", path.display()))?
    };
    for p in &report.archive_problems {
        eprintln!("deja: archive: {p}");
    }
    // Pushed sessions leave the team store too, with a tombstone there.
    if let Some(line) = crate::team::forget(&env, &keys) {
        eprintln!("deja: {line}");
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&json_of(&chosen, false, report.archived_turns, notes_removed))?);
    } else {
        println!(
            "forgot {} session(s): removed from the index and the archive ({} archived turn(s)){}; a tombstone keeps them out of later index runs",
            chosen.len(),
            report.archived_turns,
            if notes_removed > 0 { format!(", {notes_removed} note(s) from the notes file") } else { String::new() }
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The sessions every selector given accepts.
fn select(view: &IndexView, env: &StoreEnv, args: &ForgetArgs) -> Result<Vec<SessionMeta>> {
    let mut chosen: Vec<SessionMeta> = if args.sessions.is_empty() {
        view.all_sessions(None)?
    } else {
        let mut by_id = Vec::new();
        for id in &args.sessions {
            let m = crate::show::find_one(view, id)?;
            if !by_id.iter().any(|x: &SessionMeta| x.key() == m.key()) {
                by_id.push(m);
            }
        }
        by_id
    };
    if !args.harness.is_empty() {
        chosen.retain(|m| args.harness.contains(&m.harness));
    }
    if let Some(dir) = &args.project {
        let dir = absolute(env, dir)?;
        chosen.retain(|m| ran_under(m, &dir));
    }
    if let Some(before) = &args.before {
        let cut = crate::output::parse_when("--before", before, Timestamp::now())?;
        chosen.retain(|m| m.updated.or(m.started).is_some_and(|t| t < cut));
    }
    if let Some(q) = &args.matching {
        let req = SearchRequest { query: q.clone(), limit: MATCHING_LIMIT, ..SearchRequest::default() };
        let hits = view.search(&req)?;
        let found: HashSet<String> = hits.hits.iter().map(|h| h.session.key()).collect();
        chosen.retain(|m| found.contains(&m.key()));
    }
    chosen.sort_by(|a, b| b.updated.cmp(&a.updated).then_with(|| a.key().cmp(&b.key())));
    Ok(chosen)
}

/// `dir` as an absolute path (`~` expanded, relative to the current directory), in the
/// form the exclusions compare projects in.
pub(crate) fn absolute(env: &StoreEnv, dir: &str) -> Result<std::path::PathBuf> {
    let p = env.expand(dir);
    let p = if p.is_absolute() { p } else { std::env::current_dir().context("the current directory")?.join(p) };
    Ok(deja_core::config::normalize_dir(&p))
}

/// The session ran in `dir` or below it (`--project` of `forget` and `export`).
pub(crate) fn ran_under(meta: &SessionMeta, dir: &std::path::Path) -> bool {
    meta.project.as_deref().is_some_and(|p| deja_core::config::normalize_dir(std::path::Path::new(p)).starts_with(dir))
}

fn print_list(chosen: &[SessionMeta], dry_run: bool) {
    println!("{} {} session(s):", if dry_run { "would forget" } else { "will forget" }, chosen.len());
    for m in chosen.iter().take(30) {
        println!(
            "  {:<44} {}  {}  {}",
            safe(&m.key()),
            crate::output::short_time(m.updated.or(m.started)),
            safe(m.project.as_deref().unwrap_or("-")),
            safe(m.title.as_deref().unwrap_or("(untitled)"))
        );
    }
    if chosen.len() > 30 {
        println!("  … and {} more", chosen.len() - 30);
    }
}

/// Asks on the terminal; refuses when there is none to ask on.
fn confirm(n: usize) -> Result<bool> {
    if !std::io::stdin().is_terminal() {
        bail!("refusing to forget {n} session(s) without asking: stdin is not a terminal (add --yes)");
    }
    eprint!("Forget {n} session(s) for good? This cannot be undone. [y/N] ");
    std::io::stderr().flush().ok();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer).context("reading the answer")?;
    Ok(matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes"))
}

fn json_of(chosen: &[SessionMeta], dry_run: bool, archived_turns: u64, notes: usize) -> serde_json::Value {
    serde_json::json!({
        "schema_version": 1,
        "dry_run": dry_run,
        "forgotten": chosen.iter().map(|m| serde_json::json!({
            "session": m.key(),
            "harness": m.harness,
            "id": m.id,
            "title": m.title,
            "project": m.project,
            "updated": m.updated,
        })).collect::<Vec<_>>(),
        "archived_turns_removed": archived_turns,
        "notes_removed": notes,
    })
}

//! `deja harnesses`: every registered adapter, where its stores are on this machine,
//! whether they exist, how many of its sessions the index holds, and how many files it
//! found but could not open (an encrypted store without its key).

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use deja_core::index::work_dirs::WorkDirs;
use deja_core::index::{IndexPaths, IndexView};
use deja_core::Locked;
use deja_core::StoreEnv;

#[derive(Args)]
pub struct HarnessesArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: HarnessesArgs) -> Result<ExitCode> {
    let env = StoreEnv::from_process();
    let paths = IndexPaths::new(env.index_dir());
    let counts = IndexView::open(&paths).ok().and_then(|v| v.session_and_deleted_counts().ok()).unwrap_or_default();
    // Adapters that look in project directories see the ones the index learned.
    let env = env.with_work_dirs(WorkDirs::load(&paths.work_dirs()).newest());
    let mut list = Vec::new();
    for f in deja_core::registry() {
        let info = f.info();
        let d = f.discover(&env);
        list.push(serde_json::json!({
            "id": info.id,
            "name": info.name,
            "stores": d.roots.iter().map(|(p, e)| serde_json::json!({"path": p, "exists": e})).collect::<Vec<_>>(),
            "sources": d.sources.len(),
            // Found but not openable with what was supplied (an encrypted store without
            // its key): counted here so missing history is never silent.
            "not_opened": d.locked.len(),
            "not_opened_reasons": distinct_reasons(&d.locked),
            "sessions": counts.get(info.id).map_or(0, |c| c.0),
            // Of them, kept after the harness deleted their source (`deja search --deleted`).
            "source_deleted": counts.get(info.id).map_or(0, |c| c.1),
        }));
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({"schema_version": 1, "harnesses": list}))?);
        return Ok(ExitCode::SUCCESS);
    }
    for h in &list {
        let deleted = match h["source_deleted"].as_u64() {
            Some(n) if n > 0 => {
                format!(" ({n} kept after the harness deleted them: `deja search --deleted --harness {}`)", h["id"].as_str().unwrap_or(""))
            }
            _ => String::new(),
        };
        println!(
            "{} ({}) — {} sources, {} sessions indexed{deleted}",
            h["name"].as_str().unwrap_or(""),
            h["id"].as_str().unwrap_or(""),
            h["sources"],
            h["sessions"]
        );
        if let Some(n) = h["not_opened"].as_u64().filter(|n| *n > 0) {
            let why: Vec<&str> = h["not_opened_reasons"].as_array().into_iter().flatten().filter_map(|r| r.as_str()).collect();
            println!("  ! {n} file(s) found but not opened: {}", why.join("; "));
        }
        for s in h["stores"].as_array().into_iter().flatten() {
            let mark = if s["exists"].as_bool() == Some(true) { "✓" } else { "·" };
            println!("  {mark} {}", s["path"].as_str().unwrap_or(""));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Each reason once, in first-seen order.
fn distinct_reasons(locked: &[Locked]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for l in locked {
        if !out.contains(&l.reason.as_str()) {
            out.push(&l.reason);
        }
    }
    out
}

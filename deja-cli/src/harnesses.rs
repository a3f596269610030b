//! `deja harnesses`: every registered adapter, where its stores are on this machine,
//! whether they exist, and how many of its sessions the index holds.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use deja_core::index::{IndexPaths, IndexView};
use deja_core::StoreEnv;

#[derive(Args)]
pub struct HarnessesArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: HarnessesArgs) -> Result<ExitCode> {
    let env = StoreEnv::from_process();
    let counts = IndexView::open(&IndexPaths::new(env.index_dir())).ok().and_then(|v| v.session_counts().ok()).unwrap_or_default();
    let mut list = Vec::new();
    for f in deja_core::registry() {
        let info = f.info();
        let d = f.discover(&env);
        list.push(serde_json::json!({
            "id": info.id,
            "name": info.name,
            "stores": d.roots.iter().map(|(p, e)| serde_json::json!({"path": p, "exists": e})).collect::<Vec<_>>(),
            "sources": d.sources.len(),
            "sessions": counts.get(info.id).copied().unwrap_or(0),
        }));
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({"schema_version": 1, "harnesses": list}))?);
        return Ok(ExitCode::SUCCESS);
    }
    for h in &list {
        println!(
            "{} ({}) — {} sources, {} sessions indexed",
            h["name"].as_str().unwrap_or(""),
            h["id"].as_str().unwrap_or(""),
            h["sources"],
            h["sessions"]
        );
        for s in h["stores"].as_array().into_iter().flatten() {
            let mark = if s["exists"].as_bool() == Some(true) { "✓" } else { "·" };
            println!("  {mark} {}", s["path"].as_str().unwrap_or(""));
        }
    }
    Ok(ExitCode::SUCCESS)
}

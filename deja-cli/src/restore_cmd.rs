//! `deja restore ID…`: archived sessions written back into their harnesses' stores
//! (`deja_core::restore`), each reported with its path, size, what was left out and the
//! command that resumes it; `--dry-run` writes nothing, `--json` prints one object.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use deja_core::index::{IndexPaths, IndexView};
use deja_core::recall::frame::terminal_safe as safe;
use deja_core::StoreEnv;

use crate::output::human_bytes;

#[derive(Args)]
pub struct RestoreArgs {
    /// Session ids (a unique prefix, or `<harness>:<id>`); `deja search --deleted` lists
    /// the sessions whose source the harness deleted.
    #[arg(required = true, value_name = "ID")]
    pub ids: Vec<String>,
    /// Say where each file would go and how big it is; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// When the session's file exists, write a copy under a new id beside it (only
    /// where the harness tolerates that); never overwrites.
    #[arg(long)]
    pub force: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: RestoreArgs) -> Result<ExitCode> {
    let env = StoreEnv::from_process();
    let paths = IndexPaths::new(env.index_dir());
    crate::search_cmd::refresh(&env, &paths);
    crate::search_cmd::check_not_building(&paths)?;
    let view = IndexView::open(&paths)?;
    let mut done = Vec::new();
    let mut failed = Vec::new();
    for id in &args.ids {
        let result = crate::show::find_one(&view, id)
            .and_then(|meta| deja_core::restore::restore(&view, &env, &meta, args.force, args.dry_run).map_err(anyhow::Error::from));
        match result {
            Ok(r) => done.push(r),
            Err(e) => failed.push((id.clone(), format!("{e:#}"))),
        }
    }
    if args.json {
        let failed: Vec<serde_json::Value> = failed.iter().map(|(id, e)| serde_json::json!({"id": id, "error": e})).collect();
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"schema_version": 1, "dry_run": args.dry_run, "restored": done, "failed": failed})
            )?
        );
    } else {
        for r in &done {
            let verb = if r.written { "restored" } else { "would write" };
            let beside = if r.beside { format!(" (a copy beside the existing file, as {})", r.id) } else { String::new() };
            println!("{verb} {}{beside}: {} ({}, {} turns)", r.session, safe(&r.path.display().to_string()), human_bytes(r.bytes), r.turns);
            if r.redacted_turns > 0 {
                println!("  {} turn(s) hold text deja redacted (secrets); the file keeps it redacted", r.redacted_turns);
            }
            for l in &r.left_out {
                println!("  left out turn {}: {} (it stays in deja)", l.seq, l.why);
            }
            if let Some(cmd) = &r.resume {
                println!("  resume: {}", safe(cmd));
            }
        }
        for (id, e) in &failed {
            eprintln!("deja: restore {}: {}", safe(id), safe(e));
        }
    }
    Ok(if failed.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

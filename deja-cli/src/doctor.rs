//! `deja doctor`: what deja sees on this machine and what is wired — per harness each
//! store (path, exists, sessions indexed) and each wiring target (wired, not wired,
//! partly wired, stale, broken) with the command that fixes it; then the index (size,
//! schema generation, last refresh, whether a writer holds the lock, a first build in
//! progress, whether a `deja index --watch` keeps it fresh); then what the harnesses'
//! own retention deletes this week and whether deja keeps it.

use std::process::ExitCode;
use std::time::SystemTime;

use anyhow::Result;
use clap::Args;
use deja_core::index::retention::{retention_reports, RetentionReport};
use deja_core::index::{IndexPaths, IndexView};
use deja_core::wire::inspect::{target_state, TargetState};
use deja_core::wire::WireContext;
use deja_core::StoreEnv;
use serde_json::{json, Value};

#[derive(Args)]
pub struct DoctorArgs {
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Only these harnesses (repeatable).
    #[arg(long = "harness", value_name = "ID")]
    pub harness: Vec<String>,
}

fn age(t: Option<SystemTime>) -> Option<u64> {
    t.and_then(|t| SystemTime::now().duration_since(t).ok()).map(|d| d.as_secs())
}

fn ago(secs: Option<u64>) -> String {
    match secs {
        None => "never".to_string(),
        Some(s) if s < 120 => format!("{s} s ago"),
        Some(s) if s < 7200 => format!("{} min ago", s / 60),
        Some(s) if s < 172_800 => format!("{} h ago", s / 3600),
        Some(s) => format!("{} days ago", s / 86_400),
    }
}

/// The writer lock's state: free, held by a running `deja`, or no index yet.
fn lock_state(paths: &IndexPaths) -> &'static str {
    let Ok(file) = std::fs::File::options().read(true).write(true).open(paths.lock()) else { return "no lock file (no index yet)" };
    match file.try_lock() {
        Ok(()) => "free",
        Err(std::fs::TryLockError::WouldBlock) => "held by a running deja (an index build or refresh)",
        Err(std::fs::TryLockError::Error(_)) => "unreadable",
    }
}

fn fix_for(target: &str, state: &TargetState) -> Option<String> {
    match state {
        TargetState::Wired => None,
        TargetState::Broken(files) => Some(format!(
            "fix {} by hand (deja leaves a file that does not parse alone), then `deja install {target}`",
            files.iter().map(|(p, e)| format!("{} ({e})", p.display())).collect::<Vec<_>>().join(", ")
        )),
        _ => Some(format!("deja install {target}")),
    }
}

pub fn run(args: DoctorArgs) -> Result<ExitCode> {
    crate::index_cmd::check_harness_ids(&args.harness)?;
    let env = StoreEnv::from_process();
    let paths = IndexPaths::new(env.index_dir());
    let counts = IndexView::open(&paths).ok().and_then(|v| v.session_counts().ok()).unwrap_or_default();
    let refreshed = age(std::fs::metadata(paths.manifest()).and_then(|m| m.modified()).ok());
    let watcher = deja_core::index::watcher_running(&paths);
    let exe = std::fs::canonicalize(std::env::current_exe()?)?;
    let cx = WireContext { env: &env, exe: exe.clone() };
    let installed = deja_core::wire::engine::Engine::new(env.data_dir().join("wiring")).load().map(|s| s.targets).unwrap_or_default();
    // Files more than one harness writes (the shared skill): their presence says nothing
    // about any one harness.
    let mut writers: std::collections::HashMap<std::path::PathBuf, std::collections::BTreeSet<&str>> = Default::default();
    for f in deja_core::registry() {
        if let Some(w) = f.wiring() {
            for e in w.plain(&cx).into_iter().chain(w.auto(&cx)) {
                writers.entry(e.file().to_path_buf()).or_default().insert(f.info().id);
            }
        }
    }
    let shared = |p: &std::path::Path| writers.get(p).is_some_and(|ids| ids.len() > 1);
    let mut harnesses = Vec::new();
    let mut problems = 0usize;
    let selected: Vec<&'static dyn deja_core::HarnessFormat> =
        deja_core::registry().into_iter().filter(|f| args.harness.is_empty() || args.harness.iter().any(|h| h == f.info().id)).collect();
    let retention = retention_reports(&env, &paths, &selected, deja_core::Timestamp::now());
    for f in deja_core::registry() {
        let info = f.info();
        if !args.harness.is_empty() && !args.harness.iter().any(|h| h == info.id) {
            continue;
        }
        let d = f.discover(&env);
        let stores: Vec<Value> = d.roots.iter().map(|(p, e)| json!({"path": p, "exists": e})).collect();
        let mut targets = Vec::new();
        if let Some(w) = f.wiring() {
            let plain = w.plain(&cx);
            let auto = w.auto(&cx);
            // The auto target is judged by what it adds: its plain part is the plain target's.
            let mut list = vec![(info.id.to_string(), plain)];
            if !auto.is_empty() {
                list.push((format!("{}-auto", info.id), auto));
            }
            for (target, mut edits) in list {
                deja_core::wired::as_written(&env, &mut edits);
                let state = target_state(&edits, &cx.exe(), &shared);
                let is_installed = installed.contains(&target);
                // A target not installed and not on disk is only worth a line when asked.
                if matches!(state, TargetState::Stale(_) | TargetState::Broken(_)) || (is_installed && state != TargetState::Wired) {
                    problems += 1;
                }
                let detail: Vec<String> = match &state {
                    TargetState::Partial(missing) => missing.iter().map(|p| format!("missing in {}", p.display())).collect(),
                    TargetState::Stale(files) => files.iter().map(|(p, why)| format!("{}: {why}", p.display())).collect(),
                    TargetState::Broken(files) => files.iter().map(|(p, e)| format!("{}: {e}", p.display())).collect(),
                    _ => Vec::new(),
                };
                targets.push(json!({
                    "target": target,
                    "state": state.label(),
                    "installed": is_installed,
                    "detail": detail,
                    "fix": fix_for(&target, &state),
                }));
            }
        }
        harnesses.push(json!({
            "id": info.id,
            "name": info.name,
            "stores": stores,
            "sources": d.sources.len(),
            "sessions": counts.get(info.id).copied().unwrap_or(0),
            "wiring": targets,
            "notes": f.wiring().map(|w| w.notes().to_vec()).unwrap_or_default(),
            "retention": declared_retention(&info.retention),
        }));
    }
    let index = json!({
        "dir": paths.root,
        "exists": paths.exists(),
        "bytes": deja_core::fsutil::dir_size(&paths.root),
        "schema_generation": std::fs::read_to_string(paths.version()).ok().map(|v| v.trim().to_string()),
        "built_by_schema": deja_core::index::schema::SCHEMA_VERSION,
        "last_refresh_seconds_ago": refreshed,
        "writer_lock": lock_state(&paths),
        "watcher": watcher.as_ref().map(|w| json!({"pid": w.pid, "since": w.since.map(|t| t.to_rfc3339()), "answers_sync": w.syncs})),
        "first_build": deja_core::index::progress::first_build(&paths).map(|p| json!({"pid": p.pid, "percent": p.percent(), "parsed": p.parsed, "jobs": p.jobs})),
        "generation": paths.generation_name(),
        "rebuilding": std::fs::read_to_string(paths.rebuilding()).ok().map(|s| s.trim().to_string()),
        "binary": exe,
        "space": IndexView::open(&paths).ok().and_then(|v| v.space_usage().ok()),
    });
    // A settings file that does not parse is a problem to fix, not a reason to stop here.
    let settings = deja_core::config::Settings::load(&env);
    let config = match &settings {
        Ok(s) => crate::config_cmd::effective(&env, s),
        Err(e) => {
            problems += 1;
            json!({"error": e.to_string()})
        }
    };
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &json!({"schema_version": 1, "harnesses": harnesses, "index": index, "config": config, "retention": retention, "problems": problems})
            )?
        );
        return Ok(if problems == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE });
    }
    for h in &harnesses {
        let present = h["stores"].as_array().is_some_and(|s| s.iter().any(|s| s["exists"] == true));
        let wiring = h["wiring"].as_array().cloned().unwrap_or_default();
        let wired_any = wiring.iter().any(|t| t["state"] != "not wired");
        if !present && !wired_any && args.harness.is_empty() {
            continue;
        }
        println!("{} ({}) — {} sessions indexed", h["name"].as_str().unwrap_or(""), h["id"].as_str().unwrap_or(""), h["sessions"]);
        for s in h["stores"].as_array().into_iter().flatten() {
            let mark = if s["exists"] == true { "✓" } else { "·" };
            println!("  {mark} store {}", s["path"].as_str().unwrap_or(""));
        }
        if wiring.is_empty() {
            println!("  · nothing to wire (its page describes no mechanism deja can use)");
        }
        for t in &wiring {
            let mark = match t["state"].as_str() {
                Some("wired") => "✓",
                Some("not wired") => "·",
                _ => "!",
            };
            println!("  {mark} {:<18} {}", t["target"].as_str().unwrap_or(""), t["state"].as_str().unwrap_or(""));
            for d in t["detail"].as_array().into_iter().flatten() {
                println!("      {}", d.as_str().unwrap_or(""));
            }
            if let Some(fix) = t["fix"].as_str().filter(|_| t["state"] != "not wired") {
                println!("      fix: {fix}");
            }
        }
    }
    println!(
        "index {} — {}",
        paths.root.display(),
        if paths.exists() {
            crate::output::human_bytes(index["bytes"].as_u64().unwrap_or(0))
        } else {
            "not built yet (run `deja index`)".to_string()
        }
    );
    println!(
        "  schema {} (this deja builds {}), last refresh {}, writer lock {}",
        index["schema_generation"].as_str().unwrap_or("-"),
        deja_core::index::schema::SCHEMA_VERSION,
        ago(refreshed),
        lock_state(&paths)
    );
    match &watcher {
        Some(w) => println!(
            "  watcher: `deja index --watch` keeps it fresh (pid {}, since {}); {}",
            w.pid.map_or("unknown".to_string(), |p| p.to_string()),
            w.since.map_or("unknown".to_string(), |t| t.to_rfc3339()),
            if w.syncs {
                "searches ask it to catch up instead of walking the stores"
            } else {
                "searches, MCP and hooks skip their refresh"
            }
        ),
        None => println!(
            "  watcher: none (the next search refreshes the index and starts one, unless [index] watch = \"off\" or DEJA_WATCH=off)"
        ),
    }
    if let Some(g) = index["rebuilding"].as_str() {
        println!("  ! a rebuild into {g} did not finish; the next `deja index` builds it again (searches use the serving generation)");
    }
    match &settings {
        Ok(s) => {
            let rules = &s.config.exclude;
            let mut excluded: Vec<String> = rules.projects.iter().map(|p| format!("project {p}")).collect();
            excluded.extend(rules.harnesses.iter().map(|h| format!("harness {h}")));
            excluded.extend(rules.globs.iter().map(|g| format!("glob {g}")));
            println!(
                "settings {} — {}",
                s.path.display(),
                if excluded.is_empty() { "no exclusions".to_string() } else { format!("excludes {}", excluded.join(", ")) }
            );
        }
        Err(e) => println!("! settings: {e}\n      fix: correct the file (indexing refuses to run while it does not parse)"),
    }
    println!(
        "archive {} — {} segment(s), {}; {} session(s) forgotten",
        config["archive"]["dir"].as_str().unwrap_or("-"),
        config["archive"]["segments"],
        crate::output::human_bytes(config["archive"]["bytes"].as_u64().unwrap_or(0)),
        config["tombstones"]["sessions"]
    );
    print_retention(&retention);
    if problems > 0 {
        println!("{problems} problem(s): see the `fix:` lines above");
    }
    Ok(if problems == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// What a harness declares about deleting its history, for `--json`.
fn declared_retention(r: &deja_core::retention::Retention) -> Value {
    use deja_core::retention::Retention;
    match r {
        Retention::Unknown => json!({"kind": "unknown"}),
        Retention::KeepsForever(why) => json!({"kind": "keeps-forever", "evidence": why}),
        Retention::MaxAge(m) => json!({
            "kind": "max-age",
            "file": m.file,
            "setting": m.setting,
            "default_days": m.default_secs / 86_400,
            "switch": m.switch.map(|(k, d)| json!({"setting": k, "default": d})),
            "trigger": m.trigger,
            "age_of": m.age_of,
            "evidence": m.evidence,
        }),
    }
}

/// The harnesses' sweeps and what deja keeps of them, one line each (`deja doctor`, the
/// end of `deja index`).
pub fn print_retention(reports: &[RetentionReport]) {
    // A harness with nothing on this machine has nothing to lose.
    let reports: Vec<&RetentionReport> = reports.iter().filter(|r| r.sources > 0).collect();
    if reports.is_empty() {
        return;
    }
    println!("history the harnesses delete:");
    for r in reports {
        let mark = if r.lost + r.behind > 0 || r.excluded.is_some() && r.due.total() > 0 { "!" } else { "✓" };
        println!("  {mark} {}", r.sentence());
    }
}

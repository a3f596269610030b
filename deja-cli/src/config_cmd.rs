//! `deja config`: the settings in effect — where each of deja's files is, what the
//! settings file excludes, and which environment variables moved something — as text
//! or `--json`. The file itself is documented in `docs/configuration.md`.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use deja_core::archive::{load_tombstones, tombstones_path, Archive};
use deja_core::config::Settings;
use deja_core::StoreEnv;
use serde_json::json;

#[derive(Args)]
#[command(
    after_help = "The settings file is TOML:\n\n  [exclude]\n  projects = [\"~/work/client-secret\"]   # these directories and below\n  harnesses = [\"cursor\"]                  # adapter ids (`deja harnesses`)\n  globs = [\"**/scratch/**\"]               # patterns on the working directory\n\nExcluded \
    sessions are never indexed or archived; ones indexed before a rule was added are removed by the next index run. \
    Its path is ${XDG_CONFIG_HOME:-~/.config}/deja/config.toml, or DEJA_CONFIG."
)]
pub struct ConfigArgs {
    /// Print the settings as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Variables that move deja's own files.
const LOCATION_VARS: [&str; 6] = ["DEJA_CONFIG", "DEJA_INDEX_DIR", "DEJA_DATA_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"];

pub fn run(args: ConfigArgs) -> Result<ExitCode> {
    let env = StoreEnv::from_process();
    let settings = Settings::load(&env)?;
    let doc = effective(&env, &settings);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }
    let file = &doc["settings_file"];
    println!("settings  {} ({})", file["path"].as_str().unwrap_or(""), if settings.found { "read" } else { "not present: no exclusions" });
    let rules = &settings.config.exclude;
    if rules.projects.is_empty() && rules.harnesses.is_empty() && rules.globs.is_empty() {
        println!("exclude   nothing");
    } else {
        for p in &rules.projects {
            println!("exclude   project {p}");
        }
        for h in &rules.harnesses {
            println!("exclude   harness {h}");
        }
        for g in &rules.globs {
            println!("exclude   glob    {g}");
        }
    }
    println!("index     {}", doc["index_dir"].as_str().unwrap_or(""));
    println!(
        "archive   {} ({} segment(s), {})",
        doc["archive"]["dir"].as_str().unwrap_or(""),
        doc["archive"]["segments"],
        crate::output::human_bytes(doc["archive"]["bytes"].as_u64().unwrap_or(0))
    );
    println!("forgotten {} session(s) (tombstones in {})", doc["tombstones"]["sessions"], doc["tombstones"]["path"].as_str().unwrap_or(""));
    for (k, v) in doc["environment"].as_object().into_iter().flatten() {
        println!("env       {k}={}", v.as_str().unwrap_or(""));
    }
    Ok(ExitCode::SUCCESS)
}

/// The settings and locations in effect, as `deja config --json` and `deja doctor` show them.
pub fn effective(env: &StoreEnv, settings: &Settings) -> serde_json::Value {
    let archive = Archive::of(env);
    let tombstones = tombstones_path(env);
    let vars: serde_json::Map<String, serde_json::Value> =
        LOCATION_VARS.iter().filter_map(|k| env.var(k).map(|v| (k.to_string(), json!(v)))).collect();
    json!({
        "schema_version": 1,
        "settings_file": {"path": settings.path, "found": settings.found},
        "exclude": settings.config.exclude,
        "index_dir": env.index_dir(),
        "data_dir": env.data_dir(),
        "archive": {"dir": archive.dir, "segments": archive.segments().map(|s| s.len()).unwrap_or(0), "bytes": archive.size()},
        "tombstones": {"path": tombstones, "sessions": load_tombstones(&tombstones).len()},
        "environment": vars,
    })
}

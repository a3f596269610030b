//! `deja install` / `deja uninstall`: wire deja into harnesses, and take it out again.
//!
//! A target is a harness id (`claude`: the MCP server, plus the skill or command its
//! page says the plain target writes) or `<id>-auto` (adds auto-recall: hooks or a
//! plugin). The two are alternatives: installing one replaces the other. Each adapter
//! describes its edits ([`deja_core::wire::Wiring`]); the engine in
//! `deja_core::wire::engine` applies them as minimal splices and keeps what it needs to
//! give every file back byte for byte.

use std::collections::{BTreeMap, BTreeSet};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Args;
use deja_core::wire::engine::{Engine, Plan};
use deja_core::wire::{Edit, WireContext, Wiring};
use deja_core::wired::all_edits;
use deja_core::{HarnessFormat, StoreEnv};

#[derive(Args)]
#[command(
    after_help = "Examples:\n  deja install claude            MCP server + skill for Claude Code\n  deja install claude-auto       …plus hooks: recall at session start, per prompt, before edits\n  deja install --all --dry-run   show the diff for every harness on this machine\n  deja uninstall claude          take it all out again, byte for byte"
)]
pub struct InstallArgs {
    /// Harness ids (`claude`) or auto-recall targets (`claude-auto`).
    pub targets: Vec<String>,
    /// Every harness whose store or config exists on this machine.
    #[arg(long)]
    pub all: bool,
    /// With --all: the `-auto` target of each harness that has one.
    #[arg(long)]
    pub auto: bool,
    /// Print a unified diff of every file it would touch, and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Replace skills and commands you edited since deja wrote them.
    #[arg(long)]
    pub force: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
#[command(
    after_help = "Examples:\n  deja uninstall claude-auto     drop the hooks, keep nothing of claude-auto\n  deja uninstall --all           everything deja ever installed"
)]
pub struct UninstallArgs {
    /// Targets to remove; a harness id removes its `-auto` target too.
    pub targets: Vec<String>,
    /// Everything deja installed.
    #[arg(long)]
    pub all: bool,
    /// Print a unified diff of every file it would touch, and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Every adapter with wiring.
fn wired() -> Vec<(&'static dyn HarnessFormat, &'static dyn Wiring)> {
    deja_core::registry().into_iter().filter_map(|f| f.wiring().map(|w| (f, w))).collect()
}

/// The path of the running binary, which the harnesses are told to run.
fn current_exe() -> Result<std::path::PathBuf> {
    deja_core::wire::current_exe().context("finding the path of the running deja binary")
}

fn harness_of(target: &str) -> &str {
    target.strip_suffix("-auto").filter(|id| deja_core::lookup(id).is_some()).unwrap_or(target)
}

fn check_target(target: &str, edits: &BTreeMap<String, Vec<Edit>>) -> Result<()> {
    if edits.contains_key(target) {
        return Ok(());
    }
    let id = harness_of(target);
    if let Some(f) = deja_core::lookup(id) {
        if target.ends_with("-auto") && edits.contains_key(id) {
            bail!(
                "{} has no auto-recall mechanism deja can wire ({}); `deja install {id}` wires what it has",
                f.info().name,
                f.capabilities().auto_recall.reason()
            );
        }
        bail!("{} ({id}) has no wiring in deja yet: {}", f.info().name, f.capabilities().mcp.reason());
    }
    let known: Vec<&str> = edits.keys().map(String::as_str).collect();
    bail!("unknown target `{target}`; targets: {}", known.join(", "))
}

fn engine(env: &StoreEnv) -> Engine {
    Engine::new(env.data_dir().join("wiring"))
}

pub fn install(args: InstallArgs) -> Result<ExitCode> {
    let env = StoreEnv::from_process();
    let cx = WireContext { env: &env, exe: current_exe()? };
    let edits = all_edits(&cx);
    let mut wanted: Vec<String> = args.targets.clone();
    if args.all {
        for (f, w) in wired() {
            if w.present(&env) {
                let id = f.info().id;
                let auto = format!("{id}-auto");
                wanted.push(if args.auto && edits.contains_key(&auto) { auto } else { id.to_string() });
            }
        }
    }
    if wanted.is_empty() {
        bail!("name a target (e.g. `deja install claude`) or use --all; targets: {}", edits.keys().cloned().collect::<Vec<_>>().join(", "));
    }
    for t in &wanted {
        check_target(t, &edits)?;
    }
    let engine = engine(&env);
    let mut targets = engine.load()?.targets;
    for t in &wanted {
        // `<id>` and `<id>-auto` are alternatives: the new one replaces the other.
        let id = harness_of(t).to_string();
        targets.remove(&id);
        targets.remove(&format!("{id}-auto"));
    }
    targets.extend(wanted.iter().cloned());
    let plan = engine.plan(&targets, &edits, args.force)?;
    finish(&engine, &plan, &wanted, args.dry_run, args.json, "install")
}

pub fn uninstall(args: UninstallArgs) -> Result<ExitCode> {
    let env = StoreEnv::from_process();
    let cx = WireContext { env: &env, exe: current_exe()? };
    let edits = all_edits(&cx);
    let engine = engine(&env);
    let installed = engine.load()?.targets;
    let mut targets: BTreeSet<String> = installed.clone();
    let named: Vec<String> = if args.all { installed.iter().cloned().collect() } else { args.targets.clone() };
    if named.is_empty() && !args.all {
        bail!("name a target (e.g. `deja uninstall claude`) or use --all; installed: {}", list_or_none(&installed));
    }
    for t in &named {
        check_target(t, &edits)?;
        if t.ends_with("-auto") {
            targets.remove(t);
        } else {
            targets.remove(t);
            targets.remove(&format!("{t}-auto"));
        }
    }
    let plan = engine.plan(&targets, &edits, false)?;
    finish(&engine, &plan, &named, args.dry_run, args.json, "uninstall")
}

fn list_or_none(set: &BTreeSet<String>) -> String {
    if set.is_empty() {
        "nothing".to_string()
    } else {
        set.iter().cloned().collect::<Vec<_>>().join(", ")
    }
}

/// What happens to the file: `create`, `edit`, `remove`, `keep` (an edited copy left
/// as it is) or `unchanged`.
fn action(c: &deja_core::wire::engine::FileChange) -> &'static str {
    match (&c.before, &c.after) {
        _ if c.kept.is_some() => "keep",
        (None, Some(_)) => "create",
        (Some(_), None) => "remove",
        (Some(a), Some(b)) if a == b => "unchanged",
        _ => "edit",
    }
}

fn past(action: &str) -> &str {
    match action {
        "create" => "created",
        "edit" => "edited",
        "remove" => "removed",
        "keep" => "kept",
        other => other,
    }
}

fn finish(engine: &Engine, plan: &Plan, named: &[String], dry_run: bool, json: bool, verb: &str) -> Result<ExitCode> {
    if !dry_run {
        engine.apply(plan)?;
    }
    // Once per harness: `deja install foo foo-auto` names it twice.
    let mut notes: Vec<&str> = Vec::new();
    if verb == "install" {
        for note in
            named.iter().filter_map(|t| deja_core::lookup(harness_of(t))).filter_map(|f| f.wiring()).flat_map(|w| w.notes().iter().copied())
        {
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
    }
    if json {
        let v = serde_json::json!({
            "schema_version": 1,
            "command": verb,
            "dry_run": dry_run,
            "targets": named,
            "installed": plan.targets(),
            "files": plan.changes.iter().map(|c| serde_json::json!({
                "path": c.path, "action": action(c), "kept_because": c.kept,
                "diff": dry_run.then(|| c.unified_diff()),
            })).collect::<Vec<_>>(),
            "refused": plan.refused.iter().map(|r| serde_json::json!({"path": r.path, "error": r.error.to_string()})).collect::<Vec<_>>(),
            "notes": notes,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        if dry_run {
            for c in plan.changes.iter().filter(|c| c.before != c.after) {
                print!("{}", c.unified_diff());
            }
        }
        for c in &plan.changes {
            let a = action(c);
            if a == "unchanged" {
                continue;
            }
            let why = c.kept.as_deref().map(|k| format!(" ({k})")).unwrap_or_default();
            let what = if dry_run { format!("would {a}") } else { past(a).to_string() };
            println!("{what:>14} {}{why}", c.path.display());
        }
        if plan.is_noop() && plan.refused.is_empty() {
            println!("nothing to change: {} {}", named.join(", "), if verb == "install" { "already installed" } else { "not installed" });
        }
        for note in &notes {
            println!("note: {note}");
        }
    }
    for r in &plan.refused {
        eprintln!("deja: left {} untouched: it {}", r.path.display(), r.error);
    }
    Ok(if plan.refused.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

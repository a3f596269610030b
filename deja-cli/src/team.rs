//! `deja team …`: team memory on PostgreSQL (`docs/team-memory.md`). Glue over
//! deja-core's `team` (what leaves the machine) and the `deja-team` client (the
//! connection, schema, push and grants).

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use deja_core::archive::Archive;
use deja_core::config::{self, Settings, TeamSettings};
use deja_core::team::{self, PushState, Sharing};
use deja_core::StoreEnv;
use deja_team::{Store, Target};

#[derive(Args)]
#[command(
    after_help = "Set-up, in order:\n  deja team init postgres://alice@db.example.com/deja    connect, create or migrate the schema\n  \
    deja team share ~/src/app                             choose what leaves this machine\n  \
    deja team push                                        send it (redacted; secrets held back)\n  \
    deja team grant bob ~/src/app                         (administrator) let bob read it\n\n\
    The password never goes into deja's settings: libpq's PGPASSWORD, ~/.pgpass or a service file \
    (PGSERVICE) give it. Who reads what is decided by PostgreSQL's roles and row-level security."
)]
pub struct TeamArgs {
    #[command(subcommand)]
    pub command: TeamCommand,
}

#[derive(Subcommand)]
pub enum TeamCommand {
    /// Connect to a PostgreSQL database, create or migrate deja's schema, record it in config.toml.
    Init(InitArgs),
    /// Share a project's history with the team store (a directory, a remote URL, or --all).
    Share(ShareArgs),
    /// Stop sharing a project; the next push removes its sessions from the store.
    Unshare(ShareArgs),
    /// Send the shared projects' history: redacted, through the secret gate, idempotent.
    Push(PushArgs),
    /// What is shared, pending, held back by the secret gate, and last pushed.
    Status(StatusArgs),
    /// (Administrator) let a role read a project: a path, a remote URL in any spelling, or a key.
    Grant(GrantArgs),
    /// (Administrator) take a role's read access to a project back.
    Revoke(GrantArgs),
}

#[derive(Args)]
pub struct InitArgs {
    /// A postgres:// URL or key=value string; libpq's variables and files fill in the rest.
    pub url: String,
    /// This machine's name in the store (default: the host name).
    #[arg(long)]
    pub machine: Option<String>,
    /// When to push: `manual` (`deja team push`) or `auto` (`deja index --watch` pushes
    /// after each run that archived something). Kept when not given.
    #[arg(long, value_parser = ["manual", "auto"])]
    pub push: Option<String>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct ShareArgs {
    /// Directories (keyed by their git remote, else their path), remote URLs or project keys.
    pub projects: Vec<String>,
    /// Every project (share) or none (unshare).
    #[arg(long, conflicts_with = "projects")]
    pub all: bool,
    /// Only these harnesses' sessions leave (repeatable; share only; none: every harness).
    #[arg(long = "harness", value_name = "ID")]
    pub harness: Vec<String>,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct PushArgs {
    /// Say what would be sent and held back; send nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Keep running, pushing what new index runs archive.
    #[arg(long)]
    pub watch: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct StatusArgs {
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct GrantArgs {
    /// The PostgreSQL role (a person, or a group role people are members of).
    pub role: String,
    /// A path, a remote URL in any spelling, or a normalized project key.
    pub project: String,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: TeamArgs) -> Result<ExitCode> {
    let env = StoreEnv::from_process();
    match args.command {
        TeamCommand::Init(a) => init(&env, a),
        TeamCommand::Share(a) => share(&env, a, true),
        TeamCommand::Unshare(a) => share(&env, a, false),
        TeamCommand::Push(a) => push_cmd(&env, a),
        TeamCommand::Status(a) => status(&env, a),
        TeamCommand::Grant(a) => grant(&env, a, true),
        TeamCommand::Revoke(a) => grant(&env, a, false),
    }
}

/// How long connecting may take before a command gives up.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The `[team]` settings, or an error saying how to make them.
pub fn settings(env: &StoreEnv) -> Result<TeamSettings> {
    let settings = Settings::load(env)?;
    match settings.config.team {
        Some(t) if !t.url.is_empty() => Ok(t),
        _ => bail!("no team store is set up: run `deja team init postgres://…` first ({})", settings.path.display()),
    }
}

/// This machine's name in the team store, when one is set up.
pub fn this_machine(env: &StoreEnv) -> Option<String> {
    settings(env).ok().map(|t| machine(env, &t))
}

fn machine(env: &StoreEnv, team: &TeamSettings) -> String {
    team.machine.clone().unwrap_or_else(|| env.machine_name())
}

fn init(env: &StoreEnv, a: InitArgs) -> Result<ExitCode> {
    let (url, had_password) = deja_team::conn::without_password(&a.url)?;
    let target = Target::resolve(env, &a.url)?;
    let mut client = target.connect(Some(CONNECT_TIMEOUT))?;
    let migrated = deja_team::schema::migrate(&mut client).with_context(|| format!("initializing {}", target.display()))?;
    let mut store = Store { client, target: target.display() };
    let author = store.role()?;
    let previous = Settings::load(env)?.config.team.unwrap_or_default();
    let machine = a.machine.clone().or(previous.machine.clone()).unwrap_or_else(|| env.machine_name());
    store.claim_machine(&machine)?;
    let push = match a.push.as_deref() {
        Some("auto") => config::PushMode::Auto,
        Some(_) => config::PushMode::Manual,
        None => previous.push,
    };
    let team = TeamSettings { url, machine: Some(machine.clone()), author: Some(author.clone()), push, ..previous };
    let path = config::write_team(env, Some(&team))?;
    if a.json {
        let doc = serde_json::json!({"schema_version": 1, "store": store.target, "schema": migrated, "machine": machine, "author": author, "config": path});
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        match (migrated.from, migrated.to) {
            (0, to) => println!("created deja's schema (version {to}) in {}", store.target),
            (f, t) if f == t => println!("{} already has deja's schema (version {t})", store.target),
            (f, t) => println!("migrated {} from schema version {f} to {t}", store.target),
        }
        println!("this machine pushes as `{machine}`, author `{author}`; settings in {}", path.display());
        if had_password {
            println!("the password was not saved: give it with PGPASSWORD or ~/.pgpass (chmod 0600)");
        }
        println!("next: `deja team share <dir>` then `deja team push`");
    }
    Ok(ExitCode::SUCCESS)
}

fn share(env: &StoreEnv, a: ShareArgs, on: bool) -> Result<ExitCode> {
    let mut team = settings(env)?;
    if !a.all && a.projects.is_empty() {
        bail!("name a project (a directory, a remote URL or a key) or --all");
    }
    if !on && !a.harness.is_empty() {
        bail!("--harness is for `share`: it limits what a share sends");
    }
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let keys: Vec<String> = a.projects.iter().map(|p| team::project_key_of_spec(env, &cwd, p)).collect();
    if on {
        team.share_all |= a.all;
        for k in &keys {
            if !team.share.contains(k) {
                team.share.push(k.clone());
            }
        }
        if !a.harness.is_empty() {
            team.harnesses = a.harness.clone();
        }
    } else if a.all {
        team.share_all = false;
        team.share.clear();
    } else {
        team.share.retain(|k| !keys.contains(k));
    }
    config::write_team(env, Some(&team))?;
    if a.json {
        let doc = serde_json::json!({"schema_version": 1, "share_all": team.share_all, "share": team.share, "harnesses": team.harnesses});
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        for k in &keys {
            println!("{} {k}", if on { "sharing" } else { "no longer sharing" });
        }
        if a.all {
            println!("{}", if on { "sharing every project" } else { "sharing nothing" });
        }
        println!("`deja team push` sends the change");
    }
    Ok(ExitCode::SUCCESS)
}

/// What one push did.
#[derive(Debug, Default, serde::Serialize)]
pub struct PushReport {
    pub sessions: usize,
    pub turns: u64,
    pub bytes: u64,
    pub removed: usize,
    pub unchanged: usize,
    pub held: usize,
    pub batches: usize,
    pub dry_run: bool,
}

/// One push from the state's cursor: plans, sends batch by batch (each committed before
/// the state records it, so a kill repeats at most one batch, which replaces itself),
/// saves the cursor at the end.
pub fn push(env: &StoreEnv, team: &TeamSettings, dry_run: bool) -> Result<PushReport> {
    let machine = machine(env, team);
    let sharing = Sharing::of(team);
    let mut state = PushState::load(env, &team.url)?;
    let archive = Archive::of(env);
    let plan = team::plan(&archive, &state, &sharing, &machine)?;
    for p in &plan.problems {
        eprintln!("deja: {p}");
    }
    let held: usize = plan.held.values().map(Vec::len).sum();
    let mut report = PushReport {
        sessions: plan.send.len(),
        turns: plan.send.iter().map(|s| s.turns.len() as u64).sum(),
        bytes: plan.send.iter().flat_map(|s| &s.turns).map(|t| t.text.len() as u64).sum(),
        removed: plan.remove.len(),
        unchanged: plan.unchanged,
        held,
        dry_run,
        ..PushReport::default()
    };
    if dry_run {
        return Ok(report);
    }
    let target = Target::resolve(env, &team.url)?;
    let mut store = Store::open(&target, Some(CONNECT_TIMEOUT))?;
    store.claim_machine(&machine)?;
    if !plan.remove.is_empty() {
        store.send(&machine, &[], &plan.remove)?;
        for k in &plan.remove {
            state.sent.remove(k);
        }
        state.save(env)?;
    }
    for range in deja_team::batches(&plan) {
        let batch = &plan.send[range];
        store.send(&machine, batch, &[])?;
        for s in batch {
            state.sent.insert(s.key.clone(), s.digest);
        }
        // Saved after every committed batch: a kill loses no sent batch's record.
        state.save(env)?;
        report.batches += 1;
        #[cfg(debug_assertions)]
        test_only_pause(env, report.batches);
    }
    for (k, h) in plan.held {
        if h.is_empty() {
            state.held.remove(&k);
        } else {
            state.held.insert(k, h);
        }
    }
    state.cursor = plan.next_cursor;
    state.sharing = sharing.fingerprint();
    state.last_push = Some(deja_core::Timestamp::now().to_rfc3339());
    state.save(env)?;
    Ok(report)
}

/// Test-only, and only in debug builds: `DEJA_TEST_ONLY_PUSH_PAUSE=FILE` makes a push
/// create FILE after its first committed batch and wait (at most two minutes) until it
/// is gone, so the end-to-end tests can stop the server between two batches.
#[cfg(debug_assertions)]
fn test_only_pause(env: &StoreEnv, batches: usize) {
    let Some(file) = env.var("DEJA_TEST_ONLY_PUSH_PAUSE").filter(|f| !f.is_empty()) else { return };
    if batches != 1 || std::fs::write(file, b"paused after batch 1").is_err() {
        return;
    }
    let until = std::time::Instant::now() + Duration::from_secs(120);
    while std::path::Path::new(file).exists() && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn push_cmd(env: &StoreEnv, a: PushArgs) -> Result<ExitCode> {
    let team = settings(env)?;
    if Sharing::of(&team).is_empty() {
        bail!("nothing is shared: `deja team share <dir>` (or --all) chooses what leaves this machine");
    }
    let mut stop = false;
    let term = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    if a.watch {
        signal_hook::flag::register(signal_hook::consts::SIGINT, term.clone())?;
        signal_hook::flag::register(signal_hook::consts::SIGTERM, term.clone())?;
    }
    while !stop {
        let report = push(env, &team, a.dry_run)?;
        if a.json {
            println!("{}", serde_json::to_string(&serde_json::json!({"schema_version": 1, "push": report}))?);
        } else if report.sessions > 0 || report.removed > 0 || report.held > 0 || !a.watch {
            println!(
                "{} {} session(s), {} turn(s), {} KB; {} removed, {} unchanged, {} turn(s) held back by the secret gate{}",
                if a.dry_run { "would push" } else { "pushed" },
                report.sessions,
                report.turns,
                report.bytes / 1024,
                report.removed,
                report.unchanged,
                report.held,
                if report.held > 0 { " (`deja team status` lists them)" } else { "" }
            );
        }
        stop = !a.watch;
        // Polls the archive: a push is a read of the newest segments when nothing changed.
        for _ in 0..20 {
            if stop || term.load(std::sync::atomic::Ordering::Relaxed) {
                stop = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn status(env: &StoreEnv, a: StatusArgs) -> Result<ExitCode> {
    let team = settings(env)?;
    let machine = machine(env, &team);
    let state = PushState::load(env, &team.url)?;
    let plan = team::plan(&Archive::of(env), &state, &Sharing::of(&team), &machine)?;
    // Held back by the last push, updated by what is pending now.
    let mut held_by_session = state.held.clone();
    for (k, h) in &plan.held {
        held_by_session.insert(k.clone(), h.clone());
    }
    let held: Vec<&team::Held> = held_by_session.values().flatten().collect();
    let target = Target::resolve(env, &team.url)?;
    // The server's view is a nicety here: status answers without it.
    let server = Store::open(&target, Some(Duration::from_secs(3))).and_then(|mut s| s.counts(&machine));
    if a.json {
        let doc = serde_json::json!({
            "schema_version": 1,
            "store": target.display(),
            "machine": machine,
            "author": team.author,
            "share_all": team.share_all,
            "share": team.share,
            "harnesses": team.harnesses,
            "pending": {"sessions": plan.send.len(), "turns": plan.send.iter().map(|s| s.turns.len()).sum::<usize>(), "removals": plan.remove.len()},
            "held": held,
            "last_push": state.last_push,
            "server": match &server { Ok((s, t)) => serde_json::json!({"sessions": s, "turns": t}), Err(e) => serde_json::json!({"error": e.to_string()}) },
        });
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("store     {}", target.display());
    println!("machine   {machine} (author {})", team.author.as_deref().unwrap_or("?"));
    if team.share_all {
        println!("shared    every project");
    }
    for k in &team.share {
        println!("shared    {k}");
    }
    if !team.harnesses.is_empty() {
        println!("harnesses {}", team.harnesses.join(", "));
    }
    println!(
        "pending   {} session(s), {} turn(s), {} removal(s)",
        plan.send.len(),
        plan.send.iter().map(|s| s.turns.len()).sum::<usize>(),
        plan.remove.len()
    );
    println!("last push {}", state.last_push.as_deref().unwrap_or("never"));
    match server {
        Ok((s, t)) => println!("on server {s} session(s), {t} turn(s) from this machine"),
        Err(e) => println!("on server unknown: {e}"),
    }
    if held.is_empty() {
        println!("held back nothing");
    } else {
        println!("held back {} turn(s) the secret gate stopped (never sent; `deja forget` or an exclusion removes them):", held.len());
        for h in held {
            println!("  {}  {}  ({})", h.turn, h.detector, if h.project.is_empty() { "no project" } else { &h.project });
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn grant(env: &StoreEnv, a: GrantArgs, on: bool) -> Result<ExitCode> {
    let team = settings(env)?;
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let project = team::project_key_of_spec(env, &cwd, &a.project);
    let target = Target::resolve(env, &team.url)?;
    let mut store = Store::open(&target, Some(CONNECT_TIMEOUT))?;
    let changed = if on {
        store.grant(&a.role, &project)?;
        true
    } else {
        store.revoke(&a.role, &project)?
    };
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"schema_version": 1, "role": a.role, "project": project, "granted": on, "changed": changed})
            )?
        );
    } else if on {
        println!("{} may read {project}", a.role);
    } else if changed {
        println!("{} may no longer read {project}", a.role);
    } else {
        println!("{} had no grant on {project}", a.role);
    }
    Ok(ExitCode::SUCCESS)
}

/// `deja forget`'s step for the team store: the forgotten sessions this machine pushed
/// go from the server, each with a tombstone. Says why when it could not (the local
/// forget stands; the next push removes them, since the archive no longer has them).
pub fn forget(env: &StoreEnv, keys: &[String]) -> Option<String> {
    let team = settings(env).ok()?;
    let machine = machine(env, &team);
    let mut state = PushState::load(env, &team.url).ok()?;
    let pushed: Vec<String> = keys.iter().filter(|k| state.sent.contains_key(*k)).cloned().collect();
    if pushed.is_empty() {
        return None;
    }
    let result =
        Target::resolve(env, &team.url).and_then(|t| Store::open(&t, Some(CONNECT_TIMEOUT))).and_then(|mut s| s.forget(&machine, &pushed));
    match result {
        Ok(n) => {
            for k in &pushed {
                state.sent.remove(k);
            }
            let _ = state.save(env);
            Some(format!("removed {n} session(s) from the team store {}", team.url))
        }
        Err(e) => Some(format!("the team store still holds {} of them ({e}); the next `deja team push` removes them", pushed.len())),
    }
}

/// How long a team search may take from the command line, from MCP, and from a hook.
/// `[team] timeout_ms` replaces the first and can shorten the others (an agent's turn
/// never waits longer on a server than these).
pub const SEARCH_DEADLINE_CLI: Duration = Duration::from_secs(2);
pub const SEARCH_DEADLINE_MCP: Duration = Duration::from_millis(1200);
pub const SEARCH_DEADLINE_HOOK: Duration = Duration::from_millis(600);

/// The team store's answer to `q` within `deadline`, or the one line saying why there
/// is none (no store set up, unreachable, too slow, refused): a team search never fails
/// a command, it degrades to the local answer.
pub fn search(env: &StoreEnv, q: deja_core::team::TeamQuery, deadline: Duration) -> Result<deja_core::team::TeamResults, String> {
    let (target, deadline) = search_target(env, deadline)?;
    deja_team::search::search_within(&target, q, deadline).map_err(|e| format!("{e}; answering from this machine's history only"))
}

/// Where a team search goes and how long it may wait: the `[team]` store, and
/// `deadline` as `[team] timeout_ms` changes it. The search screen's Team tab asks with
/// these too; it says "unavailable" in its own words rather than [`search`]'s, since it
/// has no local answer to fall back on.
pub fn search_target(env: &StoreEnv, deadline: Duration) -> Result<(Target, Duration), String> {
    let team = settings(env).map_err(|e| format!("{e:#}"))?;
    let deadline = match team.timeout_ms.map(|ms| Duration::from_millis(ms.max(1))) {
        Some(set) if deadline >= SEARCH_DEADLINE_CLI => set,
        Some(set) => set.min(deadline),
        None => deadline,
    };
    let target = Target::resolve(env, &team.url).map_err(|e| e.to_string())?;
    Ok((target, deadline))
}

/// Team sessions `spec` names (the one named with its turns), within the CLI deadline.
pub fn show(env: &StoreEnv, spec: &str) -> Result<Vec<deja_core::team::TeamSession>> {
    let team = settings(env)?;
    let target = Target::resolve(env, &team.url)?;
    let deadline = team.timeout_ms.map_or(SEARCH_DEADLINE_CLI, Duration::from_millis).max(SEARCH_DEADLINE_CLI);
    Ok(deja_team::search::show_within(&target, spec.to_string(), deadline)?)
}

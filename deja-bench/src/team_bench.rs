//! `deja-bench team`: team memory on a PostgreSQL you give it (`--url`; libpq's
//! conventions, as `deja team init`). Stages, all in this process through the
//! production code:
//!
//! 1. the corpus is indexed into a fresh archive beside it, or under `--work`
//!    (`run_index`, as `deja index`);
//! 2. the schema is created or migrated in the target database, and the rows of earlier
//!    runs' machines (`bench-0`, `bench-1`, …) are deleted, so sizes are this run's;
//! 3. the archive is planned (`deja_core::team::plan`, redaction and the secret gate
//!    included) and pushed as `--machines` machines, each the whole corpus under its own
//!    machine name, in the push's own transactions: turns/s and MB/s of the push alone
//!    (planning is timed apart);
//! 4. the corpus's needle queries (`corpus.json`) are searched through the team tier
//!    ladder, on one connection, `--rounds` times: p50/p95, the tier that answered, and
//!    whether the needle's session was among the hits;
//! 5. `pg_total_relation_size` and `pg_indexes_size` of the tables, per GB of raw history
//!    (the corpus's bytes on disk times the machines).
//!
//! `--search-only` skips stages 1–3 and measures what the database already holds (the
//! machines an earlier run pushed): to measure a change to the team search without
//! pushing again.
//!
//! The role connecting must be able to create the schema (the database's owner) or have
//! a schema already migrated and own the machine names it pushes.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use deja_core::archive::Archive;
use deja_core::index::indexer::{run_index, IndexRequest, Silent};
use deja_core::index::IndexPaths;
use deja_core::team::{PushState, Sharing, TeamQuery};
use serde::Serialize;

use crate::corpus::Corpus;
use crate::stats::Latency;

#[derive(Args)]
pub struct TeamBenchArgs {
    /// The PostgreSQL database to push to (a postgres:// URL or key=value string; the
    /// password from PGPASSWORD or ~/.pgpass). Use a database of its own: the bench
    /// deletes the rows of machines named `bench-N` before it pushes.
    #[arg(long)]
    pub url: String,
    /// A corpus written by `deja-bench corpus`.
    #[arg(long)]
    pub corpus: PathBuf,
    /// Push the corpus as this many machines' history (10 machines of a 1 GB corpus:
    /// about 10 GB of raw history).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub machines: u32,
    /// Times each query is asked (after one warm-up round).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub rounds: u32,
    /// At most this many queries (the corpus's needle queries, in order).
    #[arg(long, default_value_t = 100)]
    pub queries: usize,
    /// Where the fresh index and archive go (`DIR/team-index`, `DIR/team-index-data`);
    /// by default inside the corpus directory. Point it elsewhere to leave a shared
    /// corpus untouched.
    #[arg(long)]
    pub work: Option<PathBuf>,
    /// Push nothing: search and measure what the database holds from an earlier run
    /// (its `bench-N` machines).
    #[arg(long, conflicts_with_all = ["machines", "work"])]
    pub search_only: bool,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Serialize)]
pub struct TeamBench {
    pub schema_version: u32,
    pub date: String,
    pub machine: String,
    pub corpus: String,
    pub store: String,
    pub server_version: String,
    pub machines: u32,
    /// Bytes of raw history pushed: the corpus on disk, times the machines.
    pub raw_bytes: u64,
    pub plan_s: f64,
    pub push: Push,
    pub search: Search,
    pub size: Size,
}

#[derive(Debug, Default, Serialize)]
pub struct Push {
    pub sessions: u64,
    pub turns: u64,
    /// Bytes of turn text sent.
    pub text_bytes: u64,
    pub held: u64,
    pub transactions: u64,
    pub seconds: f64,
    pub turns_per_s: f64,
    pub mb_per_s: f64,
}

#[derive(Debug, Default, Serialize)]
pub struct Search {
    pub queries: usize,
    pub latency: Latency,
    /// How many queries each tier answered (the last round).
    pub tiers: std::collections::BTreeMap<String, usize>,
    /// Queries whose needle session was among the hits.
    pub needle_found: usize,
    pub errors: usize,
    /// The five slowest queries (their slowest round) and the tier that answered.
    pub slowest: Vec<Slow>,
}

#[derive(Debug, Default, Serialize)]
pub struct Slow {
    pub query: String,
    pub ms: f64,
    pub tier: String,
}

#[derive(Debug, Default, Serialize)]
pub struct Size {
    pub turns_rows: i64,
    pub turns_total_bytes: i64,
    pub turns_index_bytes: i64,
    pub sessions_total_bytes: i64,
    /// Each index of `deja.turns`, by name: which one the room goes to.
    pub turns_indexes: std::collections::BTreeMap<String, i64>,
    /// Table (heap + TOAST + indexes) bytes per GB of raw history.
    pub total_per_raw_gb: f64,
    pub index_per_raw_gb: f64,
}

pub fn run(args: TeamBenchArgs) -> Result<ExitCode> {
    super::report(args.json, &measure(&args)?, render)
}

fn measure(args: &TeamBenchArgs) -> Result<TeamBench> {
    let here = crate::stats::Machine::here();
    let corpus = Corpus::open(&args.corpus)?;
    let say = |s: String| {
        if !args.json {
            eprintln!("{s}");
        }
    };
    say(format!("corpus: {}", corpus.describe()));
    let target = deja_team::Target::resolve(&deja_core::StoreEnv::from_process(), &args.url)?;
    let (mut store, machines, plan_s, push) = if args.search_only {
        let mut client = target.connect(Some(Duration::from_secs(10)))?;
        deja_team::schema::check(&mut client).context("reading the schema")?;
        let held: i64 = client.query_one("SELECT count(DISTINCT machine) FROM deja.sessions WHERE machine LIKE 'bench-%'", &[])?.get(0);
        if held == 0 {
            bail!("{} holds no bench-N machine: run without --search-only first", target.display());
        }
        (deja_team::Store { client, target: target.display() }, held as u32, 0.0, Push::default())
    } else {
        let (store, plan_s, push) = index_and_push(args, &corpus, &target, &say)?;
        (store, args.machines, plan_s, push)
    };
    let server_version: String = store.client.query_one("SHOW server_version", &[])?.get(0);

    let queries: Vec<(String, String)> =
        corpus.manifest.needles.iter().take(args.queries).map(|n| (n.keyword_query.clone(), n.session_id.clone())).collect();
    if queries.is_empty() {
        bail!("the corpus lists no needle queries (corpus.json): write one with `deja-bench corpus`");
    }
    let mut search = Search { queries: queries.len(), ..Search::default() };
    let mut samples = Vec::new();
    let mut slowest: std::collections::HashMap<&str, Slow> = std::collections::HashMap::new();
    for round in 0..=args.rounds {
        for (q, session) in &queries {
            let tq = TeamQuery { query: q.clone(), limit: 10, ..TeamQuery::default() };
            let t = Instant::now();
            let r = deja_team::search::search(&mut store.client, &tq);
            let took = t.elapsed();
            // Round 0 warms the cache and is not counted.
            if round == 0 {
                continue;
            }
            samples.push(took);
            let tier = r.as_ref().map_or_else(|e| format!("error: {e}"), |r| r.tier.clone());
            let slow = slowest.entry(q.as_str()).or_insert_with(|| Slow { query: q.clone(), ..Slow::default() });
            if took.as_secs_f64() * 1000.0 > slow.ms {
                *slow = Slow { query: q.clone(), ms: took.as_secs_f64() * 1000.0, tier };
            }
            match r {
                Ok(r) if round == args.rounds => {
                    *search.tiers.entry(r.tier.clone()).or_default() += 1;
                    search.needle_found += usize::from(r.sessions.iter().any(|s| &s.id == session));
                }
                Ok(_) => {}
                Err(_) => search.errors += 1,
            }
        }
    }
    search.latency = Latency::of(&samples);
    let mut slowest: Vec<Slow> = slowest.into_values().collect();
    slowest.sort_by(|a, b| b.ms.total_cmp(&a.ms));
    slowest.truncate(5);
    search.slowest = slowest;

    let size_of = |c: &mut deja_team::postgres::Client, sql: &str| -> Result<i64> { Ok(c.query_one(sql, &[])?.get(0)) };
    let mut size = Size {
        turns_rows: size_of(&mut store.client, "SELECT count(*) FROM deja.turns")?,
        turns_total_bytes: size_of(&mut store.client, "SELECT pg_total_relation_size('deja.turns')")?,
        turns_index_bytes: size_of(&mut store.client, "SELECT pg_indexes_size('deja.turns')")?,
        sessions_total_bytes: size_of(&mut store.client, "SELECT pg_total_relation_size('deja.sessions')")?,
        ..Size::default()
    };
    for r in store.client.query(
        "SELECT indexrelid::regclass::text, pg_relation_size(indexrelid) FROM pg_index WHERE indrelid = 'deja.turns'::regclass",
        &[],
    )? {
        size.turns_indexes.insert(r.get(0), r.get(1));
    }
    let raw_bytes = corpus.manifest.bytes * machines as u64;
    let raw_gb = raw_bytes as f64 / 1e9;
    size.total_per_raw_gb = (size.turns_total_bytes + size.sessions_total_bytes) as f64 / raw_gb.max(1e-9);
    size.index_per_raw_gb = size.turns_index_bytes as f64 / raw_gb.max(1e-9);
    Ok(TeamBench {
        schema_version: 1,
        date: super::today(),
        machine: here.ended().line(),
        corpus: corpus.describe(),
        store: store.target.clone(),
        server_version,
        machines,
        raw_bytes,
        plan_s,
        push,
        search,
        size,
    })
}

/// Stages 1–3: a fresh archive of the corpus, the schema, and the push as `--machines`
/// machines; the store, planning seconds and the push's figures.
fn index_and_push(
    args: &TeamBenchArgs,
    corpus: &Corpus,
    target: &deja_team::Target,
    say: &dyn Fn(String),
) -> Result<(deja_team::Store, f64, Push)> {
    if let Some(w) = &args.work {
        std::fs::create_dir_all(w).with_context(|| format!("creating {}", w.display()))?;
    }
    let index_dir = args.work.as_ref().unwrap_or(&corpus.dir).join("team-index");
    let env = corpus.env(&index_dir);
    for dir in [&index_dir, &crate::corpus::archive_dir_of(&index_dir)] {
        if dir.exists() {
            std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
        }
    }
    let started = Instant::now();
    let req = IndexRequest { rebuild: true, wait: true, ..IndexRequest::default() };
    run_index(&env, &IndexPaths::new(&index_dir), &req, &Silent).map_err(|e| anyhow::anyhow!("indexing the corpus: {e}"))?;
    say(format!("indexed into a fresh archive in {:.1}s", started.elapsed().as_secs_f64()));

    let mut client = target.connect(Some(Duration::from_secs(10)))?;
    deja_team::schema::migrate(&mut client).context("creating the schema")?;
    let mut store = deja_team::Store { client, target: target.display() };
    let names: Vec<String> = (0..args.machines).map(|m| format!("bench-{m}")).collect();
    for name in &names {
        store.claim_machine(name)?;
        store.client.execute("DELETE FROM deja.turns WHERE machine = $1", &[name])?;
        store.client.execute("DELETE FROM deja.sessions WHERE machine = $1", &[name])?;
    }
    store.client.batch_execute("VACUUM ANALYZE deja.turns, deja.sessions").ok();

    // One plan: every machine pushes the same history under its own name, as N
    // machines with the same projects would.
    let archive = Archive::of(&env);
    let sharing = Sharing { all: true, ..Sharing::default() };
    let t = Instant::now();
    let plan = deja_core::team::plan(&archive, &PushState::default(), &sharing, &names[0])?;
    let plan_s = t.elapsed().as_secs_f64();
    if plan.send.is_empty() {
        bail!("the corpus's archive has nothing to push");
    }
    let mut push = Push { held: plan.held.values().map(|h| h.len() as u64).sum::<u64>() * args.machines as u64, ..Push::default() };
    let t = Instant::now();
    for name in &names {
        for range in deja_team::batches(&plan) {
            let batch = &plan.send[range];
            push.turns += store.send(name, batch, &[])?;
            push.sessions += batch.len() as u64;
            push.text_bytes += batch.iter().flat_map(|s| &s.turns).map(|t| t.text.len() as u64).sum::<u64>();
            push.transactions += 1;
        }
        say(format!("pushed as {name}: {} turns so far in {:.1}s", push.turns, t.elapsed().as_secs_f64()));
    }
    push.seconds = t.elapsed().as_secs_f64();
    push.turns_per_s = push.turns as f64 / push.seconds.max(1e-9);
    push.mb_per_s = push.text_bytes as f64 / 1e6 / push.seconds.max(1e-9);
    store.client.batch_execute("ANALYZE deja.turns, deja.sessions")?;

    Ok((store, plan_s, push))
}

fn render(b: &TeamBench) -> String {
    let bytes = |n: i64| crate::stats::bytes(n.max(0) as u64);
    let mut out = format!(
        "team memory on PostgreSQL {} ({}), {} machine(s) of {} — {} raw\non {}\n\n",
        b.server_version,
        b.store,
        b.machines,
        b.corpus,
        crate::stats::bytes(b.raw_bytes),
        b.machine
    );
    let p = &b.push;
    if p.transactions == 0 {
        out.push_str("push: none in this run (--search-only): the database's rows as an earlier run left them\n");
    } else {
        out.push_str(&crate::report::table(
            &["push", "sessions", "turns", "text", "held", "txns", "seconds", "turns/s", "MB/s"],
            &[vec![
                "all machines".into(),
                p.sessions.to_string(),
                p.turns.to_string(),
                crate::stats::bytes(p.text_bytes),
                p.held.to_string(),
                p.transactions.to_string(),
                format!("{:.1}", p.seconds),
                format!("{:.0}", p.turns_per_s),
                format!("{:.2}", p.mb_per_s),
            ]],
        ));
    }
    let s = &b.search;
    let tiers: Vec<String> = s.tiers.iter().map(|(t, n)| format!("{t} {n}")).collect();
    out.push('\n');
    out.push_str(&crate::report::table(
        &["search", "queries", "p50 ms", "p95 ms", "max ms", "needle found", "errors", "tiers"],
        &[vec![
            "team ladder".into(),
            s.queries.to_string(),
            format!("{:.1}", s.latency.p50_ms),
            format!("{:.1}", s.latency.p95_ms),
            format!("{:.1}", s.latency.max_ms),
            format!("{}/{}", s.needle_found, s.queries),
            s.errors.to_string(),
            tiers.join(", "),
        ]],
    ));
    let z = &b.size;
    out.push('\n');
    out.push_str(&crate::report::table(
        &["size", "rows", "turns total", "turns indexes", "sessions", "total / raw GB", "indexes / raw GB"],
        &[vec![
            "deja.*".into(),
            z.turns_rows.to_string(),
            bytes(z.turns_total_bytes),
            bytes(z.turns_index_bytes),
            bytes(z.sessions_total_bytes),
            bytes(z.total_per_raw_gb as i64),
            bytes(z.index_per_raw_gb as i64),
        ]],
    ));
    for q in &s.slowest {
        out.push_str(&format!("slow: {:.0} ms ({}) {}\n", q.ms, q.tier, q.query));
    }
    let each: Vec<String> = z.turns_indexes.iter().map(|(name, n)| format!("{name} {}", bytes(*n))).collect();
    out.push_str(&format!("turns indexes: {}\n", each.join(", ")));
    out.push_str(&format!("\nplanning (redaction, secret gate) took {:.1}s, apart from the push\n", b.plan_s));
    out
}

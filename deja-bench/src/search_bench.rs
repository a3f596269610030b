//! `deja bench search`: search latency by query class, in this process and end to end
//! (spawning `deja search`, process start included), and whether planted needles are
//! found (recall@1/@5 of the session that holds each).
//!
//! Query classes, each drawn from the corpus's own generator so they mean something:
//! a rare word, two common words, a quoted phrase from an answer, a misspelled word
//! (the fuzzy tier), a line of a stack trace pasted whole, words that occur nowhere
//! (every tier runs and finds nothing), and the needles — as key words and as a
//! question.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use deja_core::index::indexer::{run_index, IndexRequest, Silent};
use deja_core::index::search::SearchRequest;
use deja_core::index::{IndexPaths, IndexView};
use serde::Serialize;

use super::corpus::Corpus;
use super::gen::{Generator, STREAM_QUERY};
use super::index_bench::CorpusInfo;
use super::stats::{first_relevant, Latency, Machine, RankRates, RankTally};
use super::vocab::Rng;
use crate::report::dir_size;

#[derive(Args)]
pub struct SearchBenchArgs {
    /// The corpus directory (from `deja bench corpus`).
    #[arg(long, value_name = "DIR")]
    pub corpus: PathBuf,
    /// The index to search (default: `<corpus>/index`; built when missing).
    #[arg(long, value_name = "DIR")]
    pub index: Option<PathBuf>,
    /// Queries per class.
    #[arg(long, default_value_t = 20)]
    pub per_class: usize,
    /// Timed in-process passes over every query (after one untimed warm-up pass).
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Skip the end-to-end (spawned process) measurements.
    #[arg(long)]
    pub no_e2e: bool,
    /// Fresh-answer rounds (end to end): append a turn with a word found nowhere else
    /// to one of the corpus's logs, wait a second, and time the `deja search` for it,
    /// counting whether it found the turn. The files are truncated back afterwards.
    #[arg(long, default_value_t = 20)]
    pub fresh: usize,
    /// Results asked for per search (the CLI's `--limit`).
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

pub(super) struct Query {
    pub(super) class: &'static str,
    pub(super) text: String,
}

#[derive(Debug, Serialize)]
struct ClassResult {
    class: &'static str,
    queries: usize,
    example: String,
    in_process: Latency,
    /// p95 ÷ p50 in process.
    tail_ratio: f64,
    e2e: Option<Latency>,
    e2e_no_refresh: Option<Latency>,
    /// Which tier answered, per query.
    tiers: BTreeMap<String, usize>,
    /// Queries that found nothing.
    empty: usize,
}

#[derive(Debug, Serialize)]
struct FreshResult {
    rounds: usize,
    /// Seconds between the append and the search.
    wait_s: f64,
    latency: Latency,
    /// Searches whose hits held the session the turn was appended to.
    found: usize,
}

#[derive(Debug, Serialize)]
struct NeedleResult {
    keyword: RankRates,
    question: RankRates,
}

#[derive(Debug, Serialize)]
struct SearchBench {
    schema_version: u32,
    benchmark: &'static str,
    date: String,
    machine: Machine,
    corpus: CorpusInfo,
    index_bytes: u64,
    limit: usize,
    classes: Vec<ClassResult>,
    all_in_process: Latency,
    all_e2e: Option<Latency>,
    all_e2e_no_refresh: Option<Latency>,
    /// Spawning `deja --version`: the process-start floor under every end-to-end figure.
    process_start: Option<Latency>,
    /// End-to-end p50 ÷ process-start p50.
    e2e_vs_process_start: Option<f64>,
    /// How each end-to-end search made sure it was fresh: `watcher` when one answered
    /// its sync request (after the first search started it), `refresh` otherwise.
    freshness: Option<&'static str>,
    /// Searches for a turn appended a second before, end to end.
    fresh: Option<FreshResult>,
    needles: NeedleResult,
}

/// A misspelling of `w` at edit distance 1 that is not itself a vocabulary word.
fn typo(w: &str, rng: &mut Rng, g: &Generator) -> Option<String> {
    let chars: Vec<char> = w.chars().collect();
    for _ in 0..8 {
        // Anywhere in the word, the first letter included.
        let i = rng.below(chars.len());
        let mut c = chars.clone();
        if rng.chance(0.5) {
            c.remove(i);
        } else {
            let letter = (b'a' + rng.below(26) as u8) as char;
            if letter == c[i] {
                continue;
            }
            c[i] = letter;
        }
        let t: String = c.into_iter().collect();
        if !g.vocab.contains(&t) {
            return Some(t);
        }
    }
    None
}

fn nonsense_word(rng: &mut Rng) -> String {
    const CONSONANTS: &[u8] = b"bcdfghjklmnpqrstvwxz";
    (0..rng.range(5, 7)).map(|_| CONSONANTS[rng.below(CONSONANTS.len())] as char).collect()
}

pub(super) fn queries(corpus: &Corpus, per_class: usize) -> Vec<Query> {
    let g = corpus.generator();
    let files = &corpus.manifest.files;
    let mut rng = Rng::derive(g.seed, STREAM_QUERY, 0);
    let mut out = Vec::new();
    // Queries quote whole sessions, so they are drawn from files that hold one whole
    // session: a shared store (deja's notes) keeps shortened sessions in its own words.
    let mut per_path: HashMap<&Path, usize> = HashMap::new();
    for f in files {
        *per_path.entry(f.path.as_path()).or_default() += 1;
    }
    let some_session = |rng: &mut Rng| {
        let mut k = files[rng.below(files.len())].k;
        for _ in 0..64 {
            let f = &files[rng.below(files.len())];
            if per_path.get(f.path.as_path()) == Some(&1) && f.turns == g.session(f.k).turns.len() {
                k = f.k;
                break;
            }
        }
        k
    };
    for _ in 0..per_class {
        out.push(Query { class: "rare word", text: g.vocab.ranked(&mut rng, 3000, 4500).to_string() });
        out.push(Query {
            class: "two common words",
            text: format!("{} {}", g.vocab.ranked(&mut rng, 20, 300), g.vocab.ranked(&mut rng, 20, 300)),
        });
    }
    let mut tries = 0;
    while out.iter().filter(|q| q.class == "phrase").count() < per_class && tries < per_class * 20 {
        tries += 1;
        let k = some_session(&mut rng);
        if let Some(p) = g.phrase(k, &mut rng) {
            out.push(Query { class: "phrase", text: format!("\"{p}\"") });
        }
    }
    tries = 0;
    while out.iter().filter(|q| q.class == "typo").count() < per_class && tries < per_class * 20 {
        tries += 1;
        let w = g.vocab.ranked(&mut rng, 300, 2500);
        if w.chars().count() >= 6 {
            if let Some(t) = typo(w, &mut rng, &g) {
                out.push(Query { class: "typo", text: t });
            }
        }
    }
    tries = 0;
    while out.iter().filter(|q| q.class == "pasted error line").count() < per_class && tries < per_class * 20 {
        tries += 1;
        if let Some(line) = g.pasted_error_line(some_session(&mut rng)) {
            out.push(Query { class: "pasted error line", text: line });
        }
    }
    for _ in 0..per_class {
        out.push(Query { class: "no match", text: format!("{} {}", nonsense_word(&mut rng), nonsense_word(&mut rng)) });
    }
    for n in corpus.manifest.needles.iter().take(per_class) {
        out.push(Query { class: "needle (key words)", text: n.keyword_query.clone() });
        out.push(Query { class: "needle (question)", text: n.question.clone() });
    }
    out
}

/// Builds the index when it is missing.
pub(super) fn ensure_index(corpus: &Corpus, index: &Path, say: &dyn Fn(String)) -> Result<()> {
    let paths = IndexPaths::new(index);
    if paths.exists() {
        return Ok(());
    }
    say(format!("no index at {}; building it", index.display()));
    let env = corpus.env(index);
    run_index(&env, &paths, &IndexRequest { wait: true, ..IndexRequest::default() }, &Silent).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(())
}

/// Spawns `deja <args>` against the corpus and returns how long it took.
fn spawn(corpus: &Corpus, index: &Path, args: &[&str]) -> Result<Duration> {
    spawn_reading(corpus, index, args, false).map(|(took, _)| took)
}

/// [`spawn`], keeping what it printed on stdout when `keep` says so.
fn spawn_reading(corpus: &Corpus, index: &Path, args: &[&str], keep: bool) -> Result<(Duration, Vec<u8>)> {
    let mut cmd = corpus.deja_command(index)?;
    let t = Instant::now();
    let mut child =
        cmd.args(args).stdout(if keep { Stdio::piped() } else { Stdio::null() }).stderr(Stdio::null()).spawn().context("running deja")?;
    let mut out = Vec::new();
    if let Some(mut stdout) = child.stdout.take() {
        std::io::Read::read_to_end(&mut stdout, &mut out).context("reading deja's output")?;
    }
    let status = child.wait().context("waiting for deja")?;
    let took = t.elapsed();
    // 1 = nothing matched, which the no-match class expects.
    if !matches!(status.code(), Some(0 | 1)) {
        bail!("`deja {}` failed with {status}", args.join(" "));
    }
    Ok((took, out))
}

/// Lets the next search start a watcher at once: readers start at most one a minute
/// (the `watcher.started` marker), and a benchmark that just stopped one would
/// otherwise measure searches refreshing by themselves until the minute is up.
pub(super) fn allow_watcher_start(index: &Path) {
    let _ = std::fs::remove_file(index.join("watcher.started"));
}

/// Waits (at most 60 s) for the watcher the first search started to answer sync
/// requests; `false` when none came (watching is off, or notifications are unavailable).
pub(super) fn wait_for_watcher(index: &Path) -> bool {
    let paths = IndexPaths::new(index);
    let until = Instant::now() + Duration::from_secs(60);
    while Instant::now() < until {
        if deja_core::index::watcher_running(&paths).is_some_and(|w| w.syncs) {
            // Its first run: a search made during it waits for it.
            return deja_core::index::sync_with_watcher(&paths, Duration::from_secs(60)) == deja_core::index::Synced::Fresh;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// Stops the watcher a benchmark search started, so the benchmark leaves nothing running.
pub(super) fn stop_watcher(index: &Path) {
    let paths = IndexPaths::new(index);
    if let Some(pid) = deja_core::index::watcher_running(&paths).and_then(|w| w.pid) {
        // SAFETY: kill(2) with a pid read from the watcher's own lock file and SIGTERM,
        // which the watcher handles by finishing its run and exiting.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGTERM);
        }
        let until = Instant::now() + Duration::from_secs(30);
        while deja_core::index::watcher_running(&paths).is_some() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// `rounds` times: append a turn holding a word found nowhere else to a log, wait
/// `wait`, and search for the word end to end.
fn fresh_rounds(corpus: &Corpus, index: &Path, rounds: usize, wait: Duration, limit: &str) -> Result<FreshResult> {
    let scratch = tempfile::tempdir_in(&corpus.dir).context("creating a scratch directory in the corpus")?;
    let files = super::corpus::growable(corpus, 0xF4E5)?;
    let generator = corpus.generator();
    let mut rng = Rng::derive(corpus.manifest.seed, STREAM_QUERY, 0xF4E5);
    let (mut took, mut found, mut grown) = (Vec::new(), 0, Vec::new());
    let result = (|| -> Result<()> {
        for row in files.iter().take(rounds) {
            let marker = format!("{}{}", nonsense_word(&mut rng), nonsense_word(&mut rng));
            let time = deja_core::Timestamp::now();
            let turns = vec![
                deja_core::SynthTurn::User { text: format!("note the {marker} flag before the release"), time },
                deja_core::SynthTurn::Assistant { text: format!("Noted: {marker} stays on until the release."), time },
            ];
            let Some(g) = super::corpus::append_turns(corpus, &generator, row, turns, scratch.path())? else { continue };
            grown.push(g);
            std::thread::sleep(wait);
            let (t, out) = spawn_reading(corpus, index, &["search", "--json", "--limit", limit, "--", &marker], true)?;
            took.push(t);
            let v: serde_json::Value = serde_json::from_slice(&out).unwrap_or_default();
            let hits = v["hits"].as_array().cloned().unwrap_or_default();
            found += usize::from(hits.iter().any(|h| {
                let id = h["session"]["id"].as_str().unwrap_or_default();
                h["session"]["harness"] == row.harness.as_str()
                    && (id.contains(&row.session_id) || row.path.components().any(|c| c.as_os_str() == id))
            }));
        }
        Ok(())
    })();
    super::corpus::restore(&grown)?;
    result?;
    Ok(FreshResult { rounds: took.len(), wait_s: wait.as_secs_f64(), latency: Latency::of(&took), found })
}

pub fn run(args: SearchBenchArgs) -> Result<ExitCode> {
    super::report(args.json, &measure(&args)?, render)
}

/// Whether a hit is the session a needle was planted in. The generator records the
/// id it wrote; a harness may give the session another: the id inside a longer one
/// (`conv-<id>`, `main:<id>`) or the session directory's name (`session-…/events.jsonl`).
fn is_needle_session(hit: &deja_core::model::SessionMeta, n: &super::corpus::NeedleRow) -> bool {
    hit.harness == n.harness
        && (hit.id == n.session_id || hit.id.contains(&n.session_id) || n.path.components().any(|c| c.as_os_str() == hit.id.as_str()))
}

/// Builds the index when missing, times every query and tallies the needles.
fn measure(args: &SearchBenchArgs) -> Result<SearchBench> {
    let machine = Machine::here();
    let corpus = Corpus::open(&args.corpus)?;
    let index = args.index.clone().unwrap_or_else(|| corpus.dir.join("index"));
    let say = |s: String| {
        if !args.json {
            eprintln!("{s}");
        }
    };
    ensure_index(&corpus, &index, &say)?;
    let view = IndexView::open(&IndexPaths::new(&index))?;
    let qs = queries(&corpus, args.per_class.max(1));
    let request = |q: &str| SearchRequest { query: q.to_string(), limit: args.limit.max(1), ..SearchRequest::default() };

    say(format!("{} queries × {} runs in process…", qs.len(), args.runs));
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); qs.len()];
    let mut tiers: Vec<Option<&'static str>> = vec![None; qs.len()];
    for pass in 0..=args.runs {
        for (i, q) in qs.iter().enumerate() {
            let t = Instant::now();
            let r = view.search(&request(&q.text)).with_context(|| format!("searching {:?}", q.text))?;
            let took = t.elapsed();
            if pass == 0 {
                tiers[i] = (!r.hits.is_empty()).then(|| r.tier.as_str());
            } else {
                samples[i].push(took);
            }
        }
    }

    let (mut e2e, mut e2e_nr): (Vec<Vec<Duration>>, Vec<Vec<Duration>>) = (vec![Vec::new(); qs.len()], vec![Vec::new(); qs.len()]);
    let mut process_start = None;
    let (mut freshness, mut fresh) = (None, None);
    if !args.no_e2e {
        say(format!("{} queries end to end (with and without the index refresh)…", qs.len()));
        let limit = args.limit.max(1).to_string();
        // Warm the binary and the index files once. This first search also starts the
        // watcher later searches ask (unless watching is off), as it would for a user.
        allow_watcher_start(&index);
        spawn(&corpus, &index, &["search", "--json", "--limit", &limit, "warmup"])?;
        freshness = Some(if wait_for_watcher(&index) { "watcher" } else { "refresh" });
        for (i, q) in qs.iter().enumerate() {
            e2e[i].push(spawn(&corpus, &index, &["search", "--json", "--limit", &limit, "--", &q.text])?);
            e2e_nr[i].push(spawn(&corpus, &index, &["search", "--json", "--no-refresh", "--limit", &limit, "--", &q.text])?);
        }
        let starts: Result<Vec<Duration>> = (0..20).map(|_| spawn(&corpus, &index, &["--version"])).collect();
        process_start = Some(Latency::of(&starts?));
        if args.fresh > 0 {
            say(format!("{} fresh-answer rounds (append, wait 1 s, search)…", args.fresh));
            let rounds = fresh_rounds(&corpus, &index, args.fresh, Duration::from_secs(1), &limit);
            stop_watcher(&index);
            fresh = Some(rounds?);
        } else {
            stop_watcher(&index);
        }
    }

    let mut classes: Vec<ClassResult> = Vec::new();
    for (i, q) in qs.iter().enumerate() {
        if !classes.iter().any(|c| c.class == q.class) {
            classes.push(ClassResult {
                class: q.class,
                queries: 0,
                example: q.text.clone(),
                in_process: Latency::default(),
                tail_ratio: 0.0,
                e2e: None,
                e2e_no_refresh: None,
                tiers: BTreeMap::new(),
                empty: 0,
            });
        }
        let c = classes.iter_mut().find(|c| c.class == q.class).expect("pushed above");
        c.queries += 1;
        match tiers[i] {
            Some(t) => *c.tiers.entry(t.to_string()).or_insert(0) += 1,
            None => c.empty += 1,
        }
    }
    let gather = |class: &str, per_query: &[Vec<Duration>]| -> Vec<Duration> {
        qs.iter().zip(per_query).filter(|(q, _)| q.class == class).flat_map(|(_, s)| s.iter().copied()).collect()
    };
    for c in &mut classes {
        c.in_process = Latency::of(&gather(c.class, &samples));
        c.tail_ratio = c.in_process.p95_ms / c.in_process.p50_ms.max(1e-9);
        if !args.no_e2e {
            c.e2e = Some(Latency::of(&gather(c.class, &e2e)));
            c.e2e_no_refresh = Some(Latency::of(&gather(c.class, &e2e_nr)));
        }
    }
    let flat = |v: &[Vec<Duration>]| -> Vec<Duration> { v.iter().flatten().copied().collect() };
    let all_e2e = (!args.no_e2e).then(|| Latency::of(&flat(&e2e)));

    say(format!("{} needles…", corpus.manifest.needles.len()));
    let (mut keyword, mut question) = (RankTally::default(), RankTally::default());
    for n in &corpus.manifest.needles {
        for (text, tally) in [(&n.keyword_query, &mut keyword), (&n.question, &mut question)] {
            let r = view.search(&request(text))?;
            tally.add(first_relevant(&r.hits, |h| is_needle_session(&h.session, n)));
        }
    }

    let result = SearchBench {
        schema_version: 1,
        benchmark: "search",
        date: super::today(),
        machine: machine.ended(),
        corpus: CorpusInfo::of(&corpus),
        index_bytes: dir_size(&index),
        limit: args.limit.max(1),
        all_in_process: Latency::of(&flat(&samples)),
        e2e_vs_process_start: all_e2e.zip(process_start).map(|(e, p)| e.p50_ms / p.p50_ms.max(1e-9)),
        freshness,
        fresh,
        all_e2e,
        all_e2e_no_refresh: (!args.no_e2e).then(|| Latency::of(&flat(&e2e_nr))),
        process_start,
        classes,
        needles: NeedleResult { keyword: keyword.rates(), question: question.rates() },
    };
    Ok(result)
}

fn lat(l: &Option<Latency>) -> String {
    l.map_or_else(|| "-".to_string(), |l| format!("{:.1} / {:.1}", l.p50_ms, l.p95_ms))
}

fn render(r: &SearchBench) -> String {
    let mut out = String::new();
    out.push_str(&format!("deja bench search — {} — {}\n", r.date, r.machine.line()));
    out.push_str(&format!(
        "corpus: {} in {} sessions; index {}; limit {}\n\n",
        super::stats::bytes(r.corpus.bytes),
        r.corpus.sessions,
        super::stats::bytes(r.index_bytes),
        r.limit
    ));
    let rows: Vec<Vec<String>> = r
        .classes
        .iter()
        .map(|c| {
            let tiers: Vec<String> =
                c.tiers.iter().map(|(t, n)| format!("{t} {n}")).chain((c.empty > 0).then(|| format!("none {}", c.empty))).collect();
            vec![
                c.class.to_string(),
                c.queries.to_string(),
                format!("{:.2} / {:.2} / {:.2}", c.in_process.p50_ms, c.in_process.p95_ms, c.in_process.max_ms),
                lat(&c.e2e),
                lat(&c.e2e_no_refresh),
                tiers.join(", "),
            ]
        })
        .collect();
    out.push_str(&crate::report::table(
        &["class", "queries", "in-process ms p50 / p95 / max", "e2e ms p50 / p95", "e2e --no-refresh", "tier"],
        &rows,
    ));
    let a = &r.all_in_process;
    out.push_str(&format!("\nall queries in process: p50 {:.2} ms, p95 {:.2} ms, max {:.2} ms\n", a.p50_ms, a.p95_ms, a.max_ms));
    if let (Some(e), Some(p)) = (&r.all_e2e, &r.process_start) {
        out.push_str(&format!(
            "end to end: p50 {:.1} ms, p95 {:.1} ms (process start alone: p50 {:.1} ms; e2e = {:.2}× that)\n",
            e.p50_ms,
            e.p95_ms,
            p.p50_ms,
            r.e2e_vs_process_start.unwrap_or(0.0)
        ));
    }
    if let Some(e) = &r.all_e2e_no_refresh {
        out.push_str(&format!("end to end with --no-refresh: p50 {:.1} ms, p95 {:.1} ms\n", e.p50_ms, e.p95_ms));
    }
    if let Some(how) = r.freshness {
        out.push_str(&format!("end-to-end searches were kept fresh by: {how}\n"));
    }
    if let Some(f) = &r.fresh {
        out.push_str(&format!(
            "a turn appended {:.0} s before: found {}/{}, end to end p50 {:.1} ms, p95 {:.1} ms\n",
            f.wait_s, f.found, f.rounds, f.latency.p50_ms, f.latency.p95_ms
        ));
    }
    let n = &r.needles;
    out.push_str(&format!(
        "needles ({}): key words recall@1 {:.1}%, @5 {:.1}%; as a question recall@1 {:.1}%, @5 {:.1}%\n",
        n.keyword.questions,
        n.keyword.hit1 * 100.0,
        n.keyword.hit5 * 100.0,
        n.question.hit1 * 100.0,
        n.question.hit5 * 100.0
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_are_one_edit_away_and_not_words() {
        let g = Generator::new(1);
        let mut rng = Rng::derive(1, 9, 9);
        for w in ["connection", "iterator", "parsing"] {
            let t = typo(w, &mut rng, &g).unwrap();
            assert!(!g.vocab.contains(&t) && t != w);
            assert!(t.len() + 1 == w.len() || t.len() == w.len(), "{w} → {t}");
        }
        let n = nonsense_word(&mut rng);
        assert!(n.len() >= 5 && n.bytes().all(|b| !b"aeiou".contains(&b)));
    }

    #[test]
    fn queries_drawn_from_the_corpus_find_it() {
        let tmp = tempfile::tempdir().unwrap();
        super::super::corpus::generate(tmp.path(), 1_500_000, 6, super::super::gen::Profile::Classic, &[], false).unwrap();
        let args = SearchBenchArgs {
            corpus: tmp.path().to_path_buf(),
            index: None,
            per_class: 6,
            runs: 1,
            no_e2e: true,
            fresh: 0,
            limit: 10,
            json: true,
        };
        let r = measure(&args).unwrap();
        let class = |name: &str| r.classes.iter().find(|c| c.class == name).unwrap_or_else(|| panic!("no class {name}"));
        // Phrases and error lines are quoted from the corpus, so the exact tier finds them.
        for name in ["phrase", "pasted error line"] {
            let c = class(name);
            assert_eq!(c.tiers.get("exact"), Some(&c.queries), "{name}: {c:?}");
        }
        let none = class("no match");
        assert_eq!((none.empty, none.tiers.len()), (none.queries, 0));
        assert!(class("typo").tiers.contains_key("fuzzy"), "{:?}", class("typo"));
        assert!(r.all_e2e.is_none() && r.all_in_process.n > 0);
    }
}

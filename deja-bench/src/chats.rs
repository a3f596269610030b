//! `deja bench chats`: questions asked later, in plain language, about past
//! user–assistant sessions — the shape of agents' real history, unlike LoCoMo's.
//!
//! LoCoMo is chat between two named people (short turns, photo captions, dates spelled
//! in chat). This set is what an agent's history holds: a person's requests, the
//! assistant's long answers (markdown, code, lists), and tool calls with their output
//! (commands with exit codes, files read, edits), in coding projects and in general
//! chats. The questions were written for this set: most paraphrase what the session
//! said (a question about "pooling database connections" for a session that says
//! "PgBouncer in transaction mode"), some are long and chatty, some a few keywords.
//! Every question names the session(s) that answer it; the other sessions, many on the
//! same subjects, are its distractors.
//!
//! Every session is written as a real harness transcript (Claude Code by default),
//! indexed by the real indexer, and each question is asked verbatim: in process
//! through `IndexView::search` (what `deja search` runs), or with `--deja-bin` through
//! another build's `deja search --json` (to compare builds on the same home). A
//! question is a hit at k when one of its evidence sessions is among the first k.
//! Questions alternate between a tuning half and a held-out half (by position in the
//! file), as LoCoMo's conversations do.
//!
//! Data: `deja-bench/chats/*.json` in the repository (written for deja; not
//! compiled into the binary), one object each with `sessions` and `questions`:
//!
//! | field | meaning |
//! | --- | --- |
//! | `sessions[].id`, `date`, `project` | a unique id, when it started (RFC 3339), its working directory |
//! | `sessions[].turns[]` | `{kind: user\|assistant, text}`, `{kind: shell, command, output, exit}`, `{kind: read, path, output}`, `{kind: edit, path, old, new}` |
//! | `questions[].question`, `asked` | the words asked verbatim, and when |
//! | `questions[].evidence` | the session ids that answer it (a hit on any counts) |
//! | `questions[].type` | `user-fact`, `assistant-fact`, `temporal`, `update`, `preference`, `multi` |

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use deja_core::index::indexer::{run_index, IndexRequest, IndexRunError, Silent};
use deja_core::index::search::SearchRequest;
use deja_core::index::{IndexPaths, IndexView};
use deja_core::synth::synth_uuid;
use deja_core::{StoreEnv, SynthSession, SynthTurn, Timestamp};
use serde::{Deserialize, Serialize};

use super::locomo::Half;
use super::stats::{finish_dump, first_relevant, median, open_dump, Machine, RankRates, RankTally};

/// The set's folder in the repository.
const DEFAULT_DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/chats");

#[derive(Args)]
pub struct ChatsArgs {
    /// A data file, or a folder whose `*.json` files are read together. Default:
    /// `$DEJA_CHATS_DATA`, else the set in the repository (deja-bench/chats).
    #[arg(long, value_name = "PATH")]
    pub data: Option<PathBuf>,
    /// Which harness's transcript format the sessions are written in.
    #[arg(long, value_name = "ID", default_value = "claude")]
    pub harness: String,
    /// Which questions: all, the tuning half or the held-out half.
    #[arg(long, value_enum, default_value_t = Half::All)]
    pub half: Half,
    /// Sessions asked for per question (hit@10 needs at least 10).
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// Ask another build: run `BIN index` and `BIN search --json` on the written home
    /// instead of searching in process (to compare builds on the same home).
    #[arg(long, value_name = "BIN")]
    pub deja_bin: Option<PathBuf>,
    /// Keep the written home and index in this directory.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Also write one JSON line per question (its rank, tier, the sessions returned).
    #[arg(long, value_name = "PATH")]
    pub dump: Option<PathBuf>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ChatSet {
    pub sessions: Vec<ChatSession>,
    pub questions: Vec<ChatQuestion>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ChatSession {
    pub id: String,
    pub date: String,
    pub project: String,
    pub turns: Vec<ChatTurn>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ChatTurn {
    User { text: String },
    Assistant { text: String },
    Shell { command: String, output: String, exit: i64 },
    Read { path: String, output: String },
    Edit { path: String, old: String, new: String },
}

#[derive(Debug, Clone, Deserialize)]
pub struct ChatQuestion {
    pub id: String,
    pub question: String,
    #[serde(default)]
    pub answer: String,
    pub evidence: Vec<String>,
    #[serde(rename = "type")]
    pub kind: String,
}

/// Reads one file, or every `*.json` of a folder (in name order) as one set.
pub fn load(path: &Path) -> Result<ChatSet> {
    let files: Vec<PathBuf> = if path.is_dir() {
        let mut v: Vec<PathBuf> = std::fs::read_dir(path)
            .with_context(|| format!("reading {}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        v.sort();
        v
    } else {
        vec![path.to_path_buf()]
    };
    if files.is_empty() {
        bail!("{} holds no .json file", path.display());
    }
    let mut set = ChatSet { sessions: Vec::new(), questions: Vec::new() };
    for f in &files {
        let text = std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        let part: ChatSet = serde_json::from_str(&text).with_context(|| format!("parsing {}", f.display()))?;
        set.sessions.extend(part.sessions);
        set.questions.extend(part.questions);
    }
    let ids: HashMap<&str, usize> = set.sessions.iter().enumerate().map(|(i, s)| (s.id.as_str(), i)).collect();
    if ids.len() != set.sessions.len() {
        bail!("{}: two sessions share an id", path.display());
    }
    for q in &set.questions {
        if let Some(e) = q.evidence.iter().find(|e| !ids.contains_key(e.as_str())) {
            bail!("{}: question {} names session {e}, which the set does not have", path.display(), q.id);
        }
        if q.evidence.is_empty() {
            bail!("{}: question {} names no evidence session", path.display(), q.id);
        }
    }
    Ok(set)
}

/// Session `i` of the set as a transcript: turns a minute and a half apart.
fn synth(i: usize, s: &ChatSession) -> Result<SynthSession> {
    let started = Timestamp::parse_str(&s.date).with_context(|| format!("session {}: date {:?}", s.id, s.date))?;
    let at = |k: usize| Timestamp(started.0 + k as i64 * 90_000);
    let turns = s
        .turns
        .iter()
        .enumerate()
        .map(|(k, t)| match t {
            ChatTurn::User { text } => SynthTurn::User { text: text.clone(), time: at(k) },
            ChatTurn::Assistant { text } => SynthTurn::Assistant { text: text.clone(), time: at(k) },
            ChatTurn::Shell { command, output, exit } => {
                SynthTurn::Shell { command: command.clone(), output: output.clone(), exit_code: *exit, time: at(k) }
            }
            ChatTurn::Read { path, output } => SynthTurn::Read { path: abs(&s.project, path), output: output.clone(), time: at(k) },
            ChatTurn::Edit { path, old, new } => {
                SynthTurn::Edit { path: abs(&s.project, path), old: old.clone(), new: new.clone(), time: at(k) }
            }
        })
        .collect();
    Ok(SynthSession { id: synth_uuid(i as u64, 0xC4A7), project: s.project.clone(), title: None, started, turns })
}

/// A tool's path as harnesses record it: absolute, under the session's directory.
fn abs(project: &str, path: &str) -> String {
    if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{}/{path}", project.trim_end_matches('/'))
    }
}

#[derive(Debug, Serialize)]
pub struct ChatsResult {
    pub schema_version: u32,
    pub benchmark: &'static str,
    pub overall: RankRates,
    pub by_type: BTreeMap<String, RankRates>,
    /// Questions of more than 32 words (searched by their rarest words).
    pub long_questions: RankRates,
    pub median_ms: f64,
    pub harness: String,
    pub half: Half,
    /// The build asked: `in-process`, or the `--deja-bin` path.
    pub build: String,
    pub sessions: usize,
    pub index_seconds: f64,
    /// Which search tier answered, over all questions.
    pub tiers: BTreeMap<String, u64>,
    /// Questions whose search failed (a refused query counts as a miss).
    pub errors: u64,
}

/// One question's line in `--dump`.
#[derive(Serialize)]
struct QuestionLine<'a> {
    id: &'a str,
    kind: &'a str,
    question: &'a str,
    answer: &'a str,
    evidence: &'a [String],
    rank: Option<usize>,
    tier: &'a str,
    returned: Vec<(String, f32)>,
    error: Option<String>,
}

/// What one asked question came back with.
struct Asked {
    ids: Vec<String>,
    scores: Vec<f32>,
    tier: String,
    error: Option<String>,
}

/// A build asked through its command line, on the home and index written here.
struct External<'a> {
    bin: &'a Path,
    home: PathBuf,
    index: PathBuf,
}

impl External<'_> {
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(self.bin);
        c.args(args)
            .env_clear()
            .env("HOME", &self.home)
            .env("DEJA_INDEX_DIR", &self.index)
            .env("DEJA_WATCH", "off")
            .env("PATH", std::env::var_os("PATH").unwrap_or_default());
        c
    }

    fn index(&self) -> Result<()> {
        let out = self.command(&["index", "--quiet"]).output().with_context(|| format!("running {}", self.bin.display()))?;
        if !out.status.success() {
            bail!("{} index: {}", self.bin.display(), String::from_utf8_lossy(&out.stderr));
        }
        Ok(())
    }

    fn ask(&self, q: &str, limit: usize) -> Asked {
        let limit = limit.to_string();
        let out = match self.command(&["search", "--no-refresh", "--json", "--limit", &limit, "--", q]).output() {
            Ok(o) => o,
            Err(e) => return Asked { ids: Vec::new(), scores: Vec::new(), tier: "error".into(), error: Some(e.to_string()) },
        };
        let parsed: Option<serde_json::Value> = serde_json::from_slice(&out.stdout).ok();
        let Some(v) = parsed.filter(|_| out.status.success()) else {
            let err = String::from_utf8_lossy(&out.stderr).lines().next().unwrap_or("").to_string();
            return Asked { ids: Vec::new(), scores: Vec::new(), tier: "error".into(), error: Some(err) };
        };
        let hits = v["hits"].as_array().cloned().unwrap_or_default();
        Asked {
            ids: hits.iter().filter_map(|h| h["session"]["id"].as_str().map(str::to_string)).collect(),
            scores: hits.iter().map(|h| h["score"].as_f64().unwrap_or(0.0) as f32).collect(),
            tier: if hits.is_empty() { "none".into() } else { v["tier"].as_str().unwrap_or("?").to_string() },
            error: None,
        }
    }
}

/// Writes the set as `harness` transcripts under `root`, indexes it, asks the questions
/// of `half`, and tallies the ranks.
pub fn evaluate(
    set: &ChatSet,
    harness: &str,
    half: Half,
    limit: usize,
    root: &Path,
    bin: Option<&Path>,
    mut dump: Option<&mut dyn Write>,
) -> Result<ChatsResult> {
    let adapter = deja_core::lookup(harness).with_context(|| format!("unknown harness `{harness}`"))?;
    let home = root.join("home");
    let index_dir = root.join("index");
    let mut owner: HashMap<String, &str> = HashMap::new();
    for (i, s) in set.sessions.iter().enumerate() {
        let synth = synth(i, s)?;
        adapter.write_synthetic(&home, &synth).with_context(|| format!("writing session {}", s.id))?;
        owner.insert(synth.id, s.id.as_str());
    }
    let t = Instant::now();
    let external = bin.map(|bin| External { bin, home: home.clone(), index: index_dir.clone() });
    let view = match &external {
        Some(x) => {
            x.index()?;
            None
        }
        None => {
            let paths = IndexPaths::new(&index_dir);
            match run_index(
                &StoreEnv::with_home(&home),
                &paths,
                &IndexRequest { wait: true, rebuild: true, ..IndexRequest::default() },
                &Silent,
            ) {
                Ok(_) => {}
                Err(IndexRunError::Busy) => bail!("the index at {} is locked", index_dir.display()),
                Err(IndexRunError::Index(e)) => return Err(e.into()),
            }
            Some(IndexView::open(&paths)?)
        }
    };
    let index_seconds = t.elapsed().as_secs_f64();

    let mut by_type: BTreeMap<String, RankTally> = BTreeMap::new();
    let mut long = RankTally::default();
    let mut times: Vec<f64> = Vec::new();
    let mut tiers: BTreeMap<String, u64> = BTreeMap::new();
    let mut errors = 0;
    for (qi, q) in set.questions.iter().enumerate() {
        if !half.holds(qi) {
            continue;
        }
        let t = Instant::now();
        let asked = match (&view, &external) {
            (Some(view), _) => match view.search(&SearchRequest { query: q.question.clone(), limit, ..SearchRequest::default() }) {
                Ok(r) => Asked {
                    ids: r.hits.iter().map(|h| h.session.id.clone()).collect(),
                    scores: r.hits.iter().map(|h| h.score).collect(),
                    tier: if r.hits.is_empty() { "none".into() } else { r.tier.as_str().to_string() },
                    error: None,
                },
                Err(e) => Asked { ids: Vec::new(), scores: Vec::new(), tier: "error".into(), error: Some(e.to_string()) },
            },
            (None, Some(x)) => x.ask(&q.question, limit),
            (None, None) => unreachable!("one of the two is set above"),
        };
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        errors += u64::from(asked.error.is_some());
        *tiers.entry(asked.tier.clone()).or_insert(0) += 1;
        let named: Vec<Option<&str>> = asked.ids.iter().map(|id| owner.get(id).copied()).collect();
        let rank = first_relevant(&named, |o| o.is_some_and(|s| q.evidence.iter().any(|e| e == s)));
        by_type.entry(q.kind.clone()).or_default().add(rank);
        if q.question.split_whitespace().count() > deja_core::index::search::MAX_QUERY_WORDS {
            long.add(rank);
        }
        if let Some(out) = dump.as_mut() {
            let returned = named
                .iter()
                .zip(&asked.ids)
                .zip(&asked.scores)
                .map(|((n, id), s)| (n.map_or_else(|| id.clone(), str::to_string), *s))
                .collect();
            let line = QuestionLine {
                id: &q.id,
                kind: &q.kind,
                question: &q.question,
                answer: &q.answer,
                evidence: &q.evidence,
                rank,
                tier: &asked.tier,
                returned,
                error: asked.error.clone(),
            };
            serde_json::to_writer(&mut *out, &line)?;
            writeln!(out).context("writing the --dump file")?;
        }
    }
    let mut overall = RankTally::default();
    for t in by_type.values() {
        overall.merge(t);
    }
    Ok(ChatsResult {
        schema_version: 1,
        benchmark: "chats",
        overall: overall.rates(),
        by_type: by_type.iter().map(|(k, t)| (k.clone(), t.rates())).collect(),
        long_questions: long.rates(),
        median_ms: median(&times),
        harness: harness.to_string(),
        half,
        build: bin.map_or_else(|| "in-process".to_string(), |b| b.display().to_string()),
        sessions: set.sessions.len(),
        index_seconds,
        tiers,
        errors,
    })
}

fn data_path(args: &ChatsArgs) -> PathBuf {
    args.data.clone().or_else(|| std::env::var_os("DEJA_CHATS_DATA").map(PathBuf::from)).unwrap_or_else(|| PathBuf::from(DEFAULT_DATA))
}

pub fn run(args: ChatsArgs) -> Result<ExitCode> {
    crate::report::check_harness_ids(std::slice::from_ref(&args.harness))?;
    let path = data_path(&args);
    let set = load(&path).with_context(|| format!("loading the chats set — pass --data PATH (default {DEFAULT_DATA})"))?;
    let tmp;
    let root = match &args.keep {
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            dir.clone()
        }
        None => {
            tmp = tempfile::tempdir().context("creating a temporary directory")?;
            tmp.path().to_path_buf()
        }
    };
    let mut dump = open_dump(args.dump.as_deref())?;
    let result = evaluate(
        &set,
        &args.harness,
        args.half,
        args.limit.max(1),
        &root,
        args.deja_bin.as_deref(),
        dump.as_mut().map(|d| d as &mut dyn Write),
    )?;
    finish_dump(dump, args.dump.as_deref())?;
    if args.json {
        println!("{}", serde_json::to_string(&result)?);
    } else {
        print!("{}", render(&result, &path));
    }
    Ok(ExitCode::SUCCESS)
}

fn render(r: &ChatsResult, data: &Path) -> String {
    let mut out = String::new();
    out.push_str(&format!("deja bench chats — {} — {}\n", super::today(), Machine::here().line()));
    out.push_str(&format!(
        "{}: {} sessions written as {} transcripts, indexed in {:.2}s; {:?} half; asked: {}\n\n",
        data.display(),
        r.sessions,
        r.harness,
        r.index_seconds,
        r.half,
        r.build
    ));
    let row = |name: String, x: &RankRates| x.row(name);
    let mut rows = vec![row("all".into(), &r.overall)];
    for (k, x) in &r.by_type {
        rows.push(row(format!("  {k}"), x));
    }
    rows.push(row("  over 32 words".into(), &r.long_questions));
    out.push_str(&crate::report::table(&RankRates::HEADER, &rows));
    let tiers: Vec<String> = r.tiers.iter().map(|(t, n)| format!("{t} {n}")).collect();
    out.push_str(&format!("\nmedian search {:.2} ms; tiers: {}; errors: {}\n", r.median_ms, tiers.join(", "), r.errors));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tiny() -> ChatSet {
        serde_json::from_value(json!({
            "sessions": [
                {"id": "a", "date": "2026-03-02T10:00:00Z", "project": "/home/dev/src/api", "turns": [
                    {"kind": "user", "text": "the staging deploy keeps timing out on the database"},
                    {"kind": "shell", "command": "psql -c 'show max_connections'", "output": " max_connections\n-----\n 100", "exit": 0},
                    {"kind": "assistant", "text": "We should put PgBouncer in transaction mode in front of Postgres so the workers share a pool."},
                    {"kind": "edit", "path": "deploy/pgbouncer.ini", "old": "pool_mode = session", "new": "pool_mode = transaction"}
                ]},
                {"id": "b", "date": "2026-03-05T09:00:00Z", "project": "/home/dev", "turns": [
                    {"kind": "user", "text": "suggest a sourdough schedule, my starter is called Gerald"},
                    {"kind": "assistant", "text": "Feed Gerald at 8am, mix at noon, shape at 5pm and proof overnight in the fridge."}
                ]}
            ],
            "questions": [
                {"id": "q1", "question": "what did we do about pooling the database connections on staging?", "evidence": ["a"], "type": "assistant-fact"},
                {"id": "q2", "question": "what's my starter's name?", "evidence": ["b"], "type": "user-fact"}
            ]
        }))
        .expect("tiny set")
    }

    #[test]
    fn the_production_path_finds_the_evidence_sessions() {
        let tmp = tempfile::tempdir().expect("tmp");
        let mut dump: Vec<u8> = Vec::new();
        let r = evaluate(&tiny(), "claude", Half::All, 10, tmp.path(), None, Some(&mut dump)).expect("evaluate");
        assert_eq!((r.sessions, r.overall.questions, r.errors), (2, 2, 0));
        assert_eq!(r.overall.hit1, 1.0, "{r:?}");
        let lines: Vec<serde_json::Value> =
            String::from_utf8(dump).expect("utf8").lines().map(|l| serde_json::from_str(l).expect("line")).collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["returned"][0][0], "a");
        let half = evaluate(&tiny(), "claude", Half::Heldout, 10, &tmp.path().join("h"), None, None).expect("evaluate");
        assert_eq!(half.overall.questions, 1);
    }

    #[test]
    fn a_set_naming_a_missing_session_is_refused_with_its_file() {
        let tmp = tempfile::tempdir().expect("tmp");
        let f = tmp.path().join("bad.json");
        std::fs::write(&f, r#"{"sessions": [], "questions": [{"id": "q", "question": "x", "evidence": ["nope"], "type": "user-fact"}]}"#)
            .expect("write");
        let e = format!("{:#}", load(&f).expect_err("refused"));
        assert!(e.contains("bad.json") && e.contains("nope"), "{e}");
    }

    #[test]
    fn the_set_in_the_repository_loads() {
        let set = load(Path::new(DEFAULT_DATA)).expect("the committed set");
        assert!(
            set.questions.len() >= 200 && set.sessions.len() >= 300,
            "{} questions, {} sessions",
            set.questions.len(),
            set.sessions.len()
        );
    }
}

//! `deja bench locomo`: LoCoMo (Maharana et al., ACL 2024) session-level retrieval
//! through the production path.
//!
//! Every session of every conversation is written as a real harness transcript (an
//! adapter's `write_synthetic`, Claude Code by default) dated with the session's own
//! date, each turn's text as a chat transcript shows it (`Speaker: text`, a shared photo
//! as its caption); the home is indexed by the real indexer; each question that has
//! evidence is asked verbatim through `IndexView::search`, the search the CLI runs.
//! A question is a hit at k when one of the first k sessions returned holds one of its
//! evidence turns. Reported for all questions, categories 1–4 together (category 5 is
//! adversarial: its evidence supports a *different* premise), and each category:
//! hit@1, hit@5, hit@10, MRR (of the first evidence session within the results), and
//! the median search time.
//!
//! The data is not shipped with deja (CC BY-NC 4.0). `--data` names the file; see
//! docs/benchmarks.md for how to obtain `locomo10.json`.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use deja_core::index::indexer::{run_index, IndexRequest, IndexRunError, Silent};
use deja_core::index::search::SearchRequest;
use deja_core::index::{IndexPaths, IndexView};
use deja_core::synth::synth_uuid;
use deja_core::{StoreEnv, SynthSession, SynthTurn, Timestamp};
use serde::Serialize;
use serde_json::Value;

use super::stats::{finish_dump, first_relevant, median, open_dump, Machine, RankRates, RankTally};

const DEFAULT_DATA: &str = "/work/shared/data/locomo10.json";

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// One home and index per conversation (each conversation is one person's memory).
    Conversation,
    /// Every conversation in one home and index (the others are distractors).
    All,
}

/// Which conversations are asked: ranking choices are tuned on one half and checked
/// on the other, so the figures of the held-out half were not chosen on it.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Half {
    /// Every conversation.
    All,
    /// The 1st, 3rd, 5th… conversation of the file (the half ranking is tuned on).
    Tune,
    /// The 2nd, 4th, 6th… (never looked at while tuning).
    Heldout,
}

impl Half {
    /// Whether the conversation at `position` in the file is in this half.
    pub fn holds(self, position: usize) -> bool {
        match self {
            Half::All => true,
            Half::Tune => position.is_multiple_of(2),
            Half::Heldout => !position.is_multiple_of(2),
        }
    }
}

#[derive(Args)]
pub struct LocomoArgs {
    /// The LoCoMo file (`locomo10.json`). Default: `$DEJA_LOCOMO_DATA`, else
    /// /work/shared/data/locomo10.json.
    #[arg(long, value_name = "PATH")]
    pub data: Option<PathBuf>,
    /// Which harness's transcript format the conversations are written in.
    #[arg(long, value_name = "ID", default_value = "claude")]
    pub harness: String,
    /// One index per conversation, or all conversations in one index.
    #[arg(long, value_enum, default_value_t = Scope::Conversation)]
    pub scope: Scope,
    /// Which conversations: all, the tuning half or the held-out half.
    #[arg(long, value_enum, default_value_t = Half::All)]
    pub half: Half,
    /// Sessions asked for per question (hit@10 needs at least 10).
    #[arg(long, default_value_t = 10)]
    pub limit: usize,
    /// Keep the written homes and indexes in this directory.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Also write one JSON line per question to PATH: its rank, the tier that answered,
    /// the sessions returned with their scores, and the words that carried or missed the
    /// first one (for reading the misses one by one).
    #[arg(long, value_name = "PATH")]
    pub dump: Option<PathBuf>,
}

/// One question's line in `--dump`.
#[derive(Serialize)]
struct QuestionLine<'a> {
    conversation: &'a str,
    category: u32,
    question: &'a str,
    evidence: &'a BTreeSet<u32>,
    /// The first returned session holding evidence, from 1; none within the limit.
    rank: Option<usize>,
    tier: &'a str,
    /// Each returned session as `<conversation>/<session>` (the other conversations'
    /// under `--scope all`), with its score.
    returned: Vec<(String, f32)>,
    matched: &'a [String],
    dropped: &'a [String],
}

/// One `D<session>:<turn>` evidence id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct DiaId {
    pub session: u32,
    pub turn: u32,
}

/// Every dialogue id in an evidence entry, tolerating the file's quirks: several ids in
/// one string (`D8:6; D9:17`, `D9:1 D4:4`), a stray colon (`D:11:26`), zero padding
/// (`D30:05`), a bare `D` (no id). Anything else is skipped.
pub fn parse_evidence(entry: &str) -> Vec<DiaId> {
    entry
        .split(|c: char| c.is_whitespace() || c == ';' || c == ',')
        .filter_map(|tok| {
            let rest = tok.trim().strip_prefix(['D', 'd'])?;
            let rest = rest.trim_start_matches(':');
            let (s, t) = rest.split_once(':')?;
            Some(DiaId { session: s.trim().parse().ok()?, turn: t.trim().parse().ok()? })
        })
        .collect()
}

/// `"1:56 pm on 8 May, 2023"` → UTC timestamp.
pub fn parse_date(s: &str) -> Option<Timestamp> {
    let (clock, date) = s.split_once(" on ")?;
    let clock = clock.trim().to_ascii_lowercase();
    let (hm, pm) = match (clock.strip_suffix("pm"), clock.strip_suffix("am")) {
        (Some(c), _) => (c.trim(), true),
        (_, Some(c)) => (c.trim(), false),
        _ => (clock.as_str(), false),
    };
    let (h, m) = hm.split_once(':')?;
    let (mut h, m): (u32, u32) = (h.trim().parse().ok()?, m.trim().parse().ok()?);
    if h == 12 {
        h = 0;
    }
    if pm {
        h += 12;
    }
    let date = date.replace(',', " ");
    let parts: Vec<&str> = date.split_whitespace().collect();
    let [day, month, year] = parts.as_slice() else { return None };
    const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
    let month_lc = month.to_ascii_lowercase();
    let mo = MONTHS.iter().position(|p| month_lc.starts_with(p))? as u32 + 1;
    let iso = format!("{:04}-{mo:02}-{:02}T{h:02}:{m:02}:00Z", year.parse::<u32>().ok()?, day.parse::<u32>().ok()?);
    Timestamp::parse_str(&iso)
}

#[derive(Debug, Clone)]
pub struct Conversation {
    pub sample_id: String,
    /// Session number → its date and turns.
    pub sessions: BTreeMap<u32, LSession>,
    pub questions: Vec<Question>,
}

#[derive(Debug, Clone)]
pub struct LSession {
    pub date: Option<Timestamp>,
    pub turns: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Question {
    pub text: String,
    pub category: u32,
    /// Sessions holding evidence (only sessions the conversation has).
    pub evidence: BTreeSet<u32>,
}

/// Reads the LoCoMo samples. Questions without usable evidence are dropped.
pub fn load(data: &Value) -> Result<Vec<Conversation>> {
    let Some(samples) = data.as_array() else { bail!("expected a JSON list of LoCoMo samples") };
    let mut out = Vec::new();
    for (i, sample) in samples.iter().enumerate() {
        let sample_id = sample.get("sample_id").and_then(Value::as_str).map_or_else(|| format!("sample-{i}"), str::to_string);
        let Some(conv) = sample.get("conversation").and_then(Value::as_object) else {
            bail!("sample {sample_id} has no `conversation` object");
        };
        let mut sessions = BTreeMap::new();
        for (key, value) in conv {
            let Some(n) = key.strip_prefix("session_").and_then(|n| n.parse::<u32>().ok()) else { continue };
            let Some(turns) = value.as_array() else { continue };
            let date = conv.get(&format!("session_{n}_date_time")).and_then(Value::as_str).and_then(parse_date);
            let turns = turns.iter().filter_map(transcript_line).collect();
            sessions.insert(n, LSession { date, turns });
        }
        let mut questions = Vec::new();
        for qa in sample.get("qa").and_then(Value::as_array).into_iter().flatten() {
            let Some(text) = qa.get("question").and_then(Value::as_str) else { continue };
            let category = qa.get("category").and_then(Value::as_u64).unwrap_or(0) as u32;
            let evidence: BTreeSet<u32> = qa
                .get("evidence")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .flat_map(parse_evidence)
                .map(|d| d.session)
                .filter(|s| sessions.contains_key(s))
                .collect();
            if !evidence.is_empty() {
                questions.push(Question { text: text.to_string(), category, evidence });
            }
        }
        out.push(Conversation { sample_id, sessions, questions });
    }
    Ok(out)
}

/// A turn as a chat transcript shows it: `Speaker: text`, a shared photo by its caption.
fn transcript_line(turn: &Value) -> Option<String> {
    let speaker = turn.get("speaker").and_then(Value::as_str).unwrap_or("");
    let text = turn.get("text").and_then(Value::as_str).unwrap_or("").trim();
    let caption = turn.get("blip_caption").and_then(Value::as_str).map(str::trim).filter(|c| !c.is_empty());
    let mut line = if speaker.is_empty() { text.to_string() } else { format!("{speaker}: {text}") };
    if let Some(c) = caption {
        line.push_str(&format!(" [shares a photo: {c}]"));
    }
    (!text.is_empty() || caption.is_some()).then_some(line)
}

/// The synthetic session for session `n` of conversation `ci`.
fn synth(ci: usize, conv: &Conversation, n: u32, s: &LSession) -> SynthSession {
    // Undated sessions keep their order a day apart.
    let started = s.date.unwrap_or(Timestamp(1_672_531_200_000 + i64::from(n) * 86_400_000));
    let turns = s
        .turns
        .iter()
        .enumerate()
        .map(|(i, text)| SynthTurn::User { text: text.clone(), time: Timestamp(started.0 + i as i64 * 30_000) })
        .collect();
    SynthSession {
        id: synth_uuid(ci as u64 * 1000 + u64::from(n), 0x10C0),
        project: format!("/locomo/{}", conv.sample_id),
        title: None,
        started,
        turns,
    }
}

#[derive(Debug, Serialize)]
pub struct LocomoResult {
    pub schema_version: u32,
    pub benchmark: &'static str,
    pub overall: RankRates,
    pub categories_1_4: RankRates,
    pub by_category: BTreeMap<String, RankRates>,
    pub median_ms: f64,
    pub harness: String,
    pub scope: Scope,
    pub half: Half,
    pub conversations: usize,
    pub sessions: usize,
    pub index_seconds: f64,
    /// Which search tier answered, over all questions.
    pub tiers: BTreeMap<String, u64>,
}

/// Writes `convs` as `harness` transcripts under `root`, indexes, asks every question,
/// and tallies the ranks. The whole production path; no network, no timing asserts.
pub fn evaluate(
    convs: &[Conversation],
    harness: &str,
    scope: Scope,
    limit: usize,
    root: &Path,
    mut dump: Option<&mut dyn Write>,
) -> Result<LocomoResult> {
    let adapter = deja_core::lookup(harness).with_context(|| format!("unknown harness `{harness}`"))?;
    let groups: Vec<Vec<usize>> = match scope {
        Scope::Conversation => (0..convs.len()).map(|i| vec![i]).collect(),
        Scope::All => vec![(0..convs.len()).collect()],
    };
    let mut tallies: BTreeMap<u32, RankTally> = BTreeMap::new();
    let mut times: Vec<f64> = Vec::new();
    let mut tiers: BTreeMap<String, u64> = BTreeMap::new();
    let mut index_time = Duration::ZERO;
    let mut sessions_written = 0;
    for (g, members) in groups.iter().enumerate() {
        let home = root.join(format!("home-{g}"));
        let index = IndexPaths::new(root.join(format!("index-{g}")));
        // Session id → (conversation, session number).
        let mut owner: HashMap<String, (usize, u32)> = HashMap::new();
        for &ci in members {
            for (&n, s) in &convs[ci].sessions {
                let synth = synth(ci, &convs[ci], n, s);
                adapter.write_synthetic(&home, &synth).with_context(|| format!("writing {} session {n}", convs[ci].sample_id))?;
                owner.insert(synth.id, (ci, n));
                sessions_written += 1;
            }
        }
        let t = Instant::now();
        let env = StoreEnv::with_home(&home);
        match run_index(&env, &index, &IndexRequest { wait: true, rebuild: true, ..IndexRequest::default() }, &Silent) {
            Ok(_) => {}
            Err(IndexRunError::Busy) => bail!("the LoCoMo index at {} is locked", index.root.display()),
            Err(IndexRunError::Index(e)) => return Err(e.into()),
        }
        index_time += t.elapsed();
        let view = IndexView::open(&index)?;
        for &ci in members {
            for q in &convs[ci].questions {
                let req = SearchRequest { query: q.text.clone(), limit, ..SearchRequest::default() };
                let t = Instant::now();
                let r = view.search(&req).with_context(|| format!("searching {:?}", q.text))?;
                times.push(t.elapsed().as_secs_f64() * 1000.0);
                let tier = if r.hits.is_empty() { "none" } else { r.tier.as_str() };
                *tiers.entry(tier.to_string()).or_insert(0) += 1;
                let ranked: Vec<Option<&(usize, u32)>> = r.hits.iter().map(|h| owner.get(&h.session.id)).collect();
                let rank = first_relevant(&ranked, |o| o.is_some_and(|(c, n)| *c == ci && q.evidence.contains(n)));
                tallies.entry(q.category).or_default().add(rank);
                if let Some(out) = dump.as_mut() {
                    let returned = ranked
                        .iter()
                        .zip(&r.hits)
                        .map(|(o, h)| (o.map_or_else(|| h.session.id.clone(), |(c, n)| format!("{}/{n}", convs[*c].sample_id)), h.score))
                        .collect();
                    let line = QuestionLine {
                        conversation: &convs[ci].sample_id,
                        category: q.category,
                        question: &q.text,
                        evidence: &q.evidence,
                        rank,
                        tier,
                        returned,
                        matched: &r.matched,
                        dropped: &r.dropped,
                    };
                    serde_json::to_writer(&mut *out, &line)?;
                    writeln!(out).context("writing the --dump file")?;
                }
            }
        }
    }
    let mut overall = RankTally::default();
    let mut core = RankTally::default();
    for (cat, t) in &tallies {
        overall.merge(t);
        if (1..=4).contains(cat) {
            core.merge(t);
        }
    }
    Ok(LocomoResult {
        schema_version: 1,
        benchmark: "locomo",
        overall: overall.rates(),
        categories_1_4: core.rates(),
        by_category: tallies.iter().map(|(c, t)| (c.to_string(), t.rates())).collect(),
        median_ms: median(&times),
        harness: harness.to_string(),
        scope,
        half: Half::All,
        conversations: convs.len(),
        sessions: sessions_written,
        index_seconds: index_time.as_secs_f64(),
        tiers,
    })
}

fn data_path(args: &LocomoArgs) -> PathBuf {
    args.data.clone().or_else(|| std::env::var_os("DEJA_LOCOMO_DATA").map(PathBuf::from)).unwrap_or_else(|| PathBuf::from(DEFAULT_DATA))
}

pub fn run(args: LocomoArgs) -> Result<ExitCode> {
    crate::report::check_harness_ids(std::slice::from_ref(&args.harness))?;
    let path = data_path(&args);
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!("reading the LoCoMo data at {} — pass --data PATH; docs/benchmarks.md says how to obtain locomo10.json", path.display())
    })?;
    let data: Value = serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    let convs: Vec<Conversation> = load(&data)?.into_iter().enumerate().filter(|(i, _)| args.half.holds(*i)).map(|(_, c)| c).collect();
    if args.limit < 10 && !args.json {
        eprintln!("note: --limit {} < 10, so hit@10 counts only the first {} sessions", args.limit, args.limit);
    }
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
    let mut result = evaluate(&convs, &args.harness, args.scope, args.limit.max(1), &root, dump.as_mut().map(|d| d as &mut dyn Write))?;
    finish_dump(dump, args.dump.as_deref())?;
    result.half = args.half;
    if args.json {
        println!("{}", serde_json::to_string(&result)?);
    } else {
        print!("{}", render(&result, &path));
    }
    Ok(ExitCode::SUCCESS)
}

fn render(r: &LocomoResult, data: &Path) -> String {
    let mut out = String::new();
    out.push_str(&format!("deja bench locomo — {} — {}\n", super::today(), Machine::here().line()));
    out.push_str(&format!(
        "{}: {} conversations ({:?} half), {} sessions written as {} transcripts, indexed in {:.2}s (scope: {:?})\n\n",
        data.display(),
        r.conversations,
        r.half,
        r.sessions,
        r.harness,
        r.index_seconds,
        r.scope
    ));
    let row = |name: String, x: &RankRates| x.row(name);
    let mut rows = vec![row("all".into(), &r.overall), row("categories 1–4".into(), &r.categories_1_4)];
    for (c, x) in &r.by_category {
        let name = match c.as_str() {
            "1" => "1 multi-hop",
            "2" => "2 temporal",
            "3" => "3 open-domain",
            "4" => "4 single-hop",
            "5" => "5 adversarial",
            other => other,
        };
        rows.push(row(format!("  {name}"), x));
    }
    out.push_str(&crate::report::table(&RankRates::HEADER, &rows));
    let tiers: Vec<String> = r.tiers.iter().map(|(t, n)| format!("{t} {n}")).collect();
    out.push_str(&format!("\nmedian search {:.2} ms; tiers: {}\n", r.median_ms, tiers.join(", ")));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn evidence_ids_parse_tolerantly() {
        let d = |session, turn| DiaId { session, turn };
        assert_eq!(parse_evidence("D1:3"), vec![d(1, 3)]);
        assert_eq!(parse_evidence("D8:6; D9:17"), vec![d(8, 6), d(9, 17)]);
        assert_eq!(parse_evidence("D9:1 D4:4 D4:6"), vec![d(9, 1), d(4, 4), d(4, 6)]);
        assert_eq!(parse_evidence("D:11:26"), vec![d(11, 26)]);
        assert_eq!(parse_evidence("D30:05"), vec![d(30, 5)]);
        assert_eq!(parse_evidence("D"), vec![]);
        assert_eq!(parse_evidence(""), vec![]);
        assert_eq!(parse_evidence("D1:x, Dfoo, 7"), vec![]);
    }

    #[test]
    fn the_halves_split_the_conversations() {
        let take = |h: Half| (0..10).filter(|i| h.holds(*i)).collect::<Vec<usize>>();
        assert_eq!(take(Half::Tune), [0, 2, 4, 6, 8]);
        assert_eq!(take(Half::Heldout), [1, 3, 5, 7, 9]);
        assert_eq!(take(Half::All).len(), 10);
    }

    #[test]
    fn dates_parse_with_twelve_hour_clocks() {
        let t = |s: &str| parse_date(s).map(|t| t.to_rfc3339());
        assert_eq!(t("1:56 pm on 8 May, 2023").as_deref().map(|s| &s[..16]), Some("2023-05-08T13:56"));
        assert_eq!(t("12:09 am on 13 September, 2023").as_deref().map(|s| &s[..16]), Some("2023-09-13T00:09"));
        assert_eq!(t("12:30 pm on 1 Jan, 2024").as_deref().map(|s| &s[..16]), Some("2024-01-01T12:30"));
        assert_eq!(t("sometime"), None);
    }

    fn tiny() -> Value {
        json!([{
            "sample_id": "conv-t",
            "conversation": {
                "speaker_a": "Ada", "speaker_b": "Bo",
                "session_1_date_time": "10:00 am on 2 March, 2023",
                "session_1": [
                    {"speaker": "Ada", "dia_id": "D1:1", "text": "I adopted a greyhound called Pickle from the shelter."},
                    {"speaker": "Bo", "dia_id": "D1:2", "text": "That is lovely news!"}
                ],
                "session_2_date_time": "4:15 pm on 9 April, 2023",
                "session_2": [
                    {"speaker": "Bo", "dia_id": "D2:1", "text": "My pottery class fired the first vase yesterday."},
                    {"speaker": "Ada", "dia_id": "D2:2", "text": "Show me!", "img_url": ["x"], "blip_caption": "a photo of a blue ceramic vase"}
                ],
                "session_3_date_time": "9:00 am on 1 May, 2023",
                "session_3": [
                    {"speaker": "Ada", "dia_id": "D3:1", "text": "We hiked the volcano trail on Sunday."}
                ]
            },
            "qa": [
                {"question": "What is the name of Ada's greyhound?", "answer": "Pickle", "evidence": ["D1:1"], "category": 4},
                {"question": "What did Bo's pottery class make?", "answer": "a vase", "evidence": ["D2:1; D2:2"], "category": 1},
                {"question": "Which trail did they hike on Sunday?", "answer": "volcano trail", "evidence": ["D:3:1"], "category": 2},
                {"question": "Who owns a parrot?", "evidence": ["D"], "category": 5, "adversarial_answer": "Ada"},
                {"question": "What happened in session nine?", "evidence": ["D9:1"], "category": 3},
                {"question": "What colour was the ceramic vase in the photo?", "answer": "blue", "evidence": ["D2:2"], "category": 5}
            ]
        }])
    }

    #[test]
    fn loading_keeps_questions_with_usable_evidence_only() {
        let convs = load(&tiny()).unwrap();
        assert_eq!(convs.len(), 1);
        let c = &convs[0];
        assert_eq!(c.sessions.len(), 3);
        assert_eq!(c.questions.len(), 4, "the bare `D` and the missing session 9 are dropped");
        assert_eq!(c.questions[1].evidence, BTreeSet::from([2]));
        assert_eq!(c.sessions[&1].turns[0], "Ada: I adopted a greyhound called Pickle from the shelter.");
        assert!(c.sessions[&2].turns[1].ends_with("[shares a photo: a photo of a blue ceramic vase]"), "{:?}", c.sessions[&2]);
        assert!(c.sessions[&1].date.is_some());
        assert!(load(&json!({"not": "a list"})).is_err());
    }

    #[test]
    fn the_production_path_finds_the_evidence_sessions() {
        let tmp = tempfile::tempdir().unwrap();
        let convs = load(&tiny()).unwrap();
        for scope in [Scope::Conversation, Scope::All] {
            let mut dump: Vec<u8> = Vec::new();
            let r = evaluate(&convs, "claude", scope, 10, &tmp.path().join(format!("{scope:?}")), Some(&mut dump)).unwrap();
            assert_eq!(r.sessions, 3);
            assert_eq!(r.overall.questions, 4);
            assert_eq!(r.categories_1_4.questions, 3);
            assert_eq!(r.by_category["5"].questions, 1);
            // Each question names words only its evidence session holds.
            assert_eq!(r.overall.hit1, 1.0, "{r:?}");
            assert_eq!(r.overall.mrr, 1.0);
            let lines: Vec<Value> = String::from_utf8(dump).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
            assert_eq!(lines.len(), 4, "one line per question");
            assert!(lines.iter().all(|l| l["rank"] == 1), "{lines:?}");
            let first = &lines[0]["returned"][0][0];
            assert!(first.as_str().is_some_and(|s| s.starts_with(lines[0]["conversation"].as_str().unwrap())), "{first}");
        }
    }
}

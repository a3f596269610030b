//! Search: words AND, quoted phrases contiguous, filters, and four tiers tried in
//! order — `exact`, `stemmed` (every word or another form of it: `refreshing` finds
//! `refresh`, by the Snowball stemmers; `go` finds `went`, by the table of irregular
//! English forms in [`super::irregular`]), `fuzzy` (words the index does not have,
//! within edit distance 1 for words of 4–7 chars, 2 for longer, first letter kept),
//! then `relevance` (sessions matching most of the words, naming the ones that
//! carried the match and the ones dropped; stopwords and very common words left out,
//! word forms folded by stem, neighbouring words rewarded for standing together). A
//! question in plain language does not need its stopwords to match, and its answer
//! goes on into the later tiers until the limit is reached (see [`Plan`]).
//!
//! Hits are turns grouped into sessions: BM25 of the best turns, a bounded boost for
//! user turns and title matches, a gentle recency prior (counted from the newest
//! activity in the history), and a prior for sessions from a period the query names
//! ("in June", "October 13, 2023"). Equal scores are ordered by a key of the history
//! itself (the session's last activity, then its id; a turn's session and number), so
//! the same history gives the same answer however it was indexed.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use tantivy::collector::TopDocs;
use tantivy::columnar::Column;
use tantivy::query::{
    BooleanQuery, BoostQuery, DfaWrapper, DisjunctionMaxQuery, EmptyQuery, FuzzyTermQuery, Occur, PhraseQuery, Query, RangeQuery, TermQuery,
};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocAddress, DocSet, Score, Searcher, TantivyDocument, Term};

use super::bound::{bound_query, BoundedQuery};
use super::schema::{KIND_SESSION, KIND_TURN};
use super::tokenizer::{stem, words, Word};
use super::{IndexError, IndexView, SessionMeta};
use crate::cancel::Cancel;
use crate::model::{Role, Timestamp, Turn, NOTES_HARNESS};
use crate::text::one_line;

/// The most sessions one search returns, whatever the request asks: the limit sizes
/// collectors and buffers, so an absurd one must not reach them.
pub const MAX_LIMIT: usize = 1000;
/// How much a note outranks a transcript with the same score.
const NOTE_BOOST: f32 = 1.1;

#[derive(Debug, Clone, Default)]
pub struct SearchRequest {
    pub query: String,
    pub harnesses: Vec<String>,
    /// Substring of the session's project.
    pub project: Option<String>,
    pub since: Option<Timestamp>,
    /// `user`, `assistant`, `tool`, `command`, `files`, `edit` (or any role name).
    pub role: Option<String>,
    /// Only turns that touched this file or named it in a tool's output: a path or its
    /// last components (`src/auth.rs`, `auth.rs`), matched case-blind as `blame`
    /// matches them. Like `role`, it narrows the turns words match; a query of
    /// filters alone lists recent sessions without it.
    pub file: Option<String>,
    pub limit: usize,
    /// The query is plain language whatever its wording — a prompt an agent was
    /// given, which a hook searches with — and is ranked as a question is (see
    /// [`Plan`]), not read as keywords that must all match.
    pub prose: bool,
    /// Stops the search between its steps (tiers, sessions grouped, turns read) with
    /// [`IndexError::Cancelled`]; the default never does.
    pub cancel: Cancel,
    /// Only sessions whose source the harness deleted and deja kept (`source_deleted`
    /// set: the archive's ledger of gone sources) — `deja search --deleted` and the
    /// search screen's "kept after deletion" tab. Off by default.
    pub deleted_only: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Every word as typed.
    Exact,
    /// Every word, or another form of it (`refreshing` for `refresh`).
    Stemmed,
    /// Words the index does not have read as typos of words it has.
    Fuzzy,
    /// The sessions sharing the most words, naming the ones they lack.
    Relevance,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Exact => "exact",
            Tier::Stemmed => "stemmed",
            Tier::Fuzzy => "fuzzy",
            Tier::Relevance => "relevance",
        }
    }
}

/// Every tier's name, in the order they are tried (for messages that list them).
pub const TIER_NAMES: &str = "exact, stemmed, fuzzy and relevance";

#[derive(Debug, Clone, Serialize)]
pub struct SearchResults {
    pub tier: Tier,
    /// Sessions that matched (among the turns collected).
    pub total: usize,
    /// True when more turns matched than were collected, so `total` is a floor.
    pub capped: bool,
    pub hits: Vec<Hit>,
    /// Query words the relevance tier could not match in the best session.
    pub dropped: Vec<String>,
    /// Query words the relevance tier's best session matched: what carried it.
    pub matched: Vec<String>,
    /// Words of a question that did not have to match (`what`, `did`, `the`): left
    /// out of every tier's matching, said here rather than silently.
    pub ignored: Vec<String>,
    /// Words of a query too long to search whole that were not searched (see
    /// [`super::bound`]), as typed.
    pub left_out: Vec<String>,
    /// What bounding the query did, in a sentence; `None` when it was searched whole.
    pub bounded: Option<String>,
}

impl SearchResults {
    /// Sessions listed rather than searched for (the most recent, a query of filters
    /// alone): the exact tier, every session counted, no word dropped or left out. A
    /// search's answer starts from it and sets its own tier and counts.
    pub fn listed(hits: Vec<Hit>) -> SearchResults {
        SearchResults {
            tier: Tier::Exact,
            total: hits.len(),
            capped: false,
            hits,
            dropped: Vec::new(),
            matched: Vec::new(),
            ignored: Vec::new(),
            left_out: Vec::new(),
            bounded: None,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    pub session: SessionMeta,
    /// The tier that found the session (a question's answer can hold several).
    pub tier: Tier,
    pub score: f32,
    pub snippets: Vec<String>,
    /// The matching turns, best first (at most five).
    pub turns: Vec<Turn>,
}

/// Longest query searched, in bytes: a sentence, a file path or an error line fits
/// whole; of a pasted log, the words before this bound are searched. Shared by `deja
/// search`, the recall commands and MCP, so one call cannot make the search expand
/// hundreds of thousands of words (each word costs term lookups, a fuzzy automaton
/// and a scan for its other forms). See [`super::bound`].
pub const MAX_QUERY_BYTES: usize = 4096;
/// Most words one query searches (a quoted phrase counts each of its words); a longer
/// query is searched by its rarest words (see [`super::bound`]).
pub const MAX_QUERY_WORDS: usize = 32;

/// One query unit: a bare word or a quoted phrase.
#[derive(Debug, Clone)]
struct Clause {
    text: String,
    /// Parts in order; more than one means a phrase.
    parts: Vec<String>,
    /// A "quoted phrase" stays contiguous in every tier.
    quoted: bool,
}

fn parse_clauses(query: &str) -> Vec<Clause> {
    let mut clauses = Vec::new();
    let mut rest = query;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('"') {
            let (inner, next) = match after.find('"') {
                Some(i) => (&after[..i], &after[i + 1..]),
                None => (after, ""),
            };
            let parts: Vec<String> = words(inner).into_iter().flat_map(|w| w.parts).collect();
            if !parts.is_empty() {
                clauses.push(Clause { text: inner.trim().to_string(), parts, quoted: true });
            }
            rest = next;
            continue;
        }
        let end = rest.find(['"', ' ', '\t', '\n']).unwrap_or(rest.len());
        let (word, next) = rest.split_at(end);
        for w in words(word) {
            let Word { parts, start, end, .. } = w;
            clauses.push(Clause { text: word[start..end].to_string(), parts, quoted: false });
        }
        rest = next.strip_prefix([' ', '\t', '\n']).unwrap_or(next);
    }
    clauses
}

/// How a query is read: as keywords, or as plain language.
///
/// Keywords (`pool size`, `"refresh token"`, `us writable port`, a pasted error line)
/// keep the strict reading: every word matches in one turn, and the first tier that
/// matches (exact, stemmed, fuzzy, relevance) is the answer.
///
/// Plain language — a question (a question word or a `?`), or a prompt an agent was
/// given (which hooks search with, [`SearchRequest::prose`]) — is not a conjunction
/// of its words: the one turn that holds every word of "what did we
/// decide about the pool size?" is seldom the one that answers it. It is answered by
/// the relevance tier alone, which ranks every session by the words it shares with
/// the question, weighing rare words over common ones, with stopwords (`what`, `did`,
/// `the`) and the nouns that only frame a question ("what *kind* of pastries", see
/// [`frame_words`]) left out and named in `ignored`. The strict tiers were tried
/// first for questions once (with their stopwords optional) and measured worse on
/// questions of another kind than the set they were tuned on (docs/benchmarks.md).
struct Plan {
    /// Plain language: answered by the relevance tier alone.
    prose: bool,
    /// The stopwords and frame words a plain-language query need not match, as typed.
    ignored: Vec<String>,
    /// A question's [`frame_words`], which the relevance tier counts as very common.
    frame: Vec<String>,
}

/// Words that make a query a question (with a `?` anywhere).
const QUESTION_WORDS: &[&str] = &["how", "what", "when", "where", "which", "who", "whom", "whose", "why"];

impl Plan {
    /// How `query` is read; `prose` when the caller knows it is plain language.
    fn of(query: &str, clauses: &[Clause], prose: bool) -> Plan {
        fn bare(c: &Clause) -> Option<&str> {
            (!c.quoted && c.parts.len() == 1).then(|| c.parts[0].as_str())
        }
        let question = query.contains('?') || clauses.iter().filter_map(bare).any(is_question_word);
        let frame = if question { frame_words(clauses) } else { Vec::new() };
        let optional = |c: &Clause| bare(c).is_some_and(|w| is_stopword(w) || frame.iter().any(|f| f == w));
        if !(question || prose) || clauses.iter().all(optional) {
            // Keywords, or nothing but stopwords (`the who`): every word was typed to match.
            return Plan { prose: false, ignored: Vec::new(), frame: Vec::new() };
        }
        let mut ignored: Vec<String> = Vec::new();
        for c in clauses.iter().filter(|c| optional(c)) {
            if !ignored.contains(&c.text) {
                ignored.push(c.text.clone());
            }
        }
        Plan { prose: true, ignored, frame }
    }
}

/// The relevance tier's query parts and the words they count (see
/// `IndexView::relevance_parts`).
type RelevanceParts = (Vec<Box<dyn Query>>, Vec<Unit>);

/// One query word as the relevance tier's rescoring counts it: the word and its other
/// forms (each with its weight), and the word's weight (a very common word counts less).
#[derive(Debug, Clone)]
struct Unit {
    terms: Vec<(String, f32)>,
    weight: f32,
}

/// Each word's other indexed forms, looked up once per search.
#[derive(Default)]
struct FormCache(std::cell::RefCell<HashMap<String, Vec<String>>>);

impl FormCache {
    fn forms(&self, view: &IndexView, searcher: &Searcher, word: &str) -> tantivy::Result<Vec<String>> {
        if let Some(f) = self.0.borrow().get(word) {
            return Ok(f.clone());
        }
        let f = view.word_forms(searcher, word)?;
        self.0.borrow_mut().insert(word.to_string(), f.clone());
        Ok(f)
    }
}

/// Turns collected per search before grouping into sessions (at least).
const COLLECT_TURNS: usize = 200;
/// A user turn's score counts this much more: what was asked is what is searched for.
const USER_TURN_BOOST: f32 = 1.15;
/// Weight of a word's other forms against the form typed (relevance tier).
const OTHER_FORM_WEIGHT: f32 = 0.8;
/// In the relevance tier, a word found in more than this share of all documents says
/// little about which session is meant (a person's name in their own history)…
const COMMON_WORD_SHARE: f64 = 0.3;
/// …so it counts this much of a rarer word: enough to prefer, among sessions with the
/// same rarer words, the one that also names it, never enough to carry a match alone.
const COMMON_WORD_WEIGHT: f32 = 0.3;
/// The most a session's recency raises its score (a session active at the newest
/// activity in the history; the share halves about every two months back): a tie-
/// breaker between equally good answers, not a reason to prefer a worse one.
const RECENCY_WEIGHT: f32 = 0.02;
/// Weight of two neighbouring query words standing together in a turn.
const PAIR_WEIGHT: f32 = 0.3;
/// A session from a period the query names scores up to this much more…
const DATE_BOOST: f32 = 1.0;
/// …and half that when it comes within this many days after it…
const DATE_SLACK_DAYS: i64 = 31;
/// …or, for a day the query names, all of it within a week after and less later.
const NAMED_DAY_SLACK_DAYS: i64 = 7;
/// Near spellings a misspelled word expands to, at most.
const MAX_NEAR_SPELLINGS: usize = 64;
/// Terms scanned per word when looking for its other forms.
const MAX_FORM_SCAN: usize = 4096;

/// The relevance tier scores its best sessions again over all their turns (see
/// `IndexView::rescore`): at least this many sessions…
const RESCORE_SESSIONS: usize = 50;
/// …or this many per session asked for.
const RESCORE_PER_HIT: usize = 5;
/// The length normalisation of that score for what people wrote (the index's BM25
/// has 0.75)…
const RESCORE_B: f32 = 0.2;
/// …and for what a model or a tool wrote, the index's own.
const GENERATED_B: f32 = 0.75;
/// What a tool printed (a command's output, a file read) counts this much of what was
/// said in the relevance tier's rescoring: it is evidence of the work, while a
/// question in plain language is mostly about what a person or the model said
/// (measured on the `chats` benchmark; LoCoMo has no tool turns).
const TOOL_TURN_WEIGHT: f32 = 0.8;
/// …its term saturation (the index's)…
const BM25_K1: f32 = 1.2;
/// …and the share the index's own score keeps beside it (it also counts
/// neighbouring words and the title).
const INDEX_SCORE_SHARE: f32 = 0.3;
/// What the second and third best turns of a session add, each, to the best.
const SECOND_TURNS: f32 = 0.3;

/// A session's score from its matching turns (best first) and its title match: the
/// best turn, plus a share of each of the next two (a session that keeps coming back
/// to the subject beats one that mentions it once, but breadth never outweighs a
/// clearly better turn), plus a bounded title bonus.
fn session_score(turns: &[(Score, DocAddress)], title: f32) -> f32 {
    let best = turns.first().map_or(0.0, |t| t.0);
    let rest: f32 = turns.iter().skip(1).take(2).map(|t| t.0 * SECOND_TURNS).sum();
    best + rest + 0.3 * title.min(best.max(title))
}

/// Function words left out of the relevance tier's query (they match nearly every
/// turn and only add noise to the ranking). Never dropped from the exact and fuzzy
/// tiers, and kept when a query has nothing else.
const STOPWORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been", "before", "being", "both", "but",
    "by", "can", "could", "did", "do", "does", "doing", "done", "for", "from", "had", "has", "have", "having", "he", "her", "hers", "him",
    "his", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "ours", "she", "should", "so", "some",
    "than", "that", "the", "their", "theirs", "them", "then", "there", "these", "they", "this", "those", "to", "too", "up", "us", "very",
    "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "whose", "why", "will", "with", "would", "you", "your",
    "yours",
];

pub(super) fn is_stopword(w: &str) -> bool {
    STOPWORDS.binary_search(&w).is_ok()
}

pub(super) fn is_question_word(w: &str) -> bool {
    QUESTION_WORDS.contains(&w)
}

/// Nouns that frame a question rather than say what it is about: "what *kind of*
/// pastries", "what *type of* pot". The answer names the pastries, not their kind.
const FRAME_NOUNS: &[&str] = &["kind", "sort", "type"];

/// The words of a question that only frame it: a [`FRAME_NOUNS`] word before `of`.
/// Like stopwords they need not match; the relevance tier counts them as very common
/// words. `type` alone (`type error`) is a word like any other.
fn frame_words(clauses: &[Clause]) -> Vec<String> {
    fn bare(c: &Clause) -> Option<&str> {
        (!c.quoted && c.parts.len() == 1).then(|| c.parts[0].as_str())
    }
    let mut out = Vec::new();
    for (i, c) in clauses.iter().enumerate() {
        let Some(w) = bare(c) else { continue };
        if FRAME_NOUNS.contains(&w) && clauses.get(i + 1).and_then(bare) == Some("of") {
            out.push(w.to_string());
        }
    }
    out
}

/// A stretch of time a query names: `in June`, `October 13, 2023`, `1 February, 2023`,
/// `2023`. Sessions from that time rank a little higher (a date a person mentions is
/// usually when the thing happened or was talked about).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Period {
    year: Option<i32>,
    month: Option<u32>,
    day: Option<u32>,
}

const MONTHS: [&str; 12] =
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"];

/// The month a word names: a full name (`May` only capitalised, as `may` is a verb),
/// or a capitalised three-letter abbreviation.
fn month_of(word: &str) -> Option<u32> {
    let lower = word.to_lowercase();
    if let Some(i) = MONTHS.iter().position(|m| *m == lower) {
        return (lower != "may" || word.starts_with('M')).then_some(i as u32 + 1);
    }
    let capitalised = word.chars().next().is_some_and(char::is_uppercase);
    if capitalised && (word.len() == 3 || lower == "sept") && lower != "may" {
        return MONTHS.iter().position(|m| m.starts_with(&lower)).map(|i| i as u32 + 1);
    }
    None
}

fn named_periods(query: &str) -> Vec<Period> {
    let toks: Vec<&str> = query.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()).collect();
    let year_at = |i: usize| toks.get(i).filter(|t| t.len() == 4).and_then(|t| t.parse::<i32>().ok()).filter(|y| (1970..=2100).contains(y));
    // `13` or `13th` (`8th December`, `December 1st`).
    let day_at = |i: usize| {
        toks.get(i)
            .map(|t| t.trim_end_matches(|c: char| c.is_ascii_alphabetic()))
            .filter(|t| !t.is_empty() && t.len() <= 2)
            .and_then(|t| t.parse::<u32>().ok())
            .filter(|d| (1..=31).contains(d))
    };
    let mut out = Vec::new();
    let mut used_years = HashSet::new();
    for (i, t) in toks.iter().enumerate() {
        let Some(month) = month_of(t) else { continue };
        let day = day_at(i + 1).or_else(|| i.checked_sub(1).and_then(day_at));
        let year_i = [i + 1, i + 2].into_iter().find(|j| year_at(*j).is_some());
        if let Some(j) = year_i {
            used_years.insert(j);
        }
        out.push(Period { year: year_i.and_then(year_at), month: Some(month), day });
    }
    // A bare number is only a year after "in" or "during" (`in 2023`, not `exit 2048`).
    for i in 1..toks.len() {
        let after_preposition = matches!(toks[i - 1].to_lowercase().as_str(), "in" | "during");
        if let (Some(y), false, true) = (year_at(i), used_years.contains(&i), after_preposition) {
            out.push(Period { year: Some(y), month: None, day: None });
        }
    }
    out
}

impl Period {
    /// 1 when `when` falls in the period, less when it comes soon after (a session
    /// often talks about what happened last week or last month), 0 otherwise.
    fn closeness(&self, when: Option<Timestamp>) -> f32 {
        use chrono::{Datelike, NaiveDate};
        let Some(d) = when.and_then(Timestamp::to_datetime).map(|d| d.date_naive()) else { return 0.0 };
        let years: Vec<i32> = match self.year {
            Some(y) => vec![y],
            None => vec![d.year(), d.year() - 1],
        };
        let mut best: f32 = 0.0;
        for y in years {
            let (start, end) = match (self.month, self.day) {
                (Some(m), Some(day)) => match NaiveDate::from_ymd_opt(y, m, day) {
                    Some(x) => (x, x),
                    None => continue,
                },
                (Some(m), None) => {
                    let Some(first) = NaiveDate::from_ymd_opt(y, m, 1) else { continue };
                    let next = if m == 12 { NaiveDate::from_ymd_opt(y + 1, 1, 1) } else { NaiveDate::from_ymd_opt(y, m + 1, 1) };
                    (first, next.and_then(|n| n.pred_opt()).unwrap_or(first))
                }
                _ => match (NaiveDate::from_ymd_opt(y, 1, 1), NaiveDate::from_ymd_opt(y, 12, 31)) {
                    (Some(a), Some(b)) => (a, b),
                    _ => continue,
                },
            };
            if d >= start && d <= end {
                return 1.0;
            }
            let after = (d - end).num_days();
            if after > 0 && after <= DATE_SLACK_DAYS {
                // A day named is precise: what was said about it comes within days
                // ("yesterday", "last week"), and a session weeks later is no nearer
                // than one from the month before.
                let near = match self.day {
                    Some(_) if after <= NAMED_DAY_SLACK_DAYS => 1.0,
                    Some(_) => 0.3,
                    None => 0.5,
                };
                best = best.max(near);
            }
        }
        best
    }
}

/// Edit distance allowed for a word of this many chars in the fuzzy tier.
pub(crate) fn fuzzy_distance(term: &str) -> u8 {
    match term.chars().count() {
        0..=3 => 0,
        4..=7 => 1,
        _ => 2,
    }
}

impl IndexView {
    fn text_term(&self, t: &str) -> Term {
        Term::from_field_text(self.fields.text, t)
    }

    fn exact_clause(&self, c: &Clause) -> Box<dyn Query> {
        if c.parts.len() == 1 {
            Box::new(TermQuery::new(self.text_term(&c.parts[0]), IndexRecordOption::WithFreqs))
        } else {
            Box::new(PhraseQuery::new(c.parts.iter().map(|p| self.text_term(p)).collect()))
        }
    }

    /// Words the index has never seen: the ones a typo can explain.
    fn unknown_words(&self, searcher: &Searcher, clauses: &[Clause]) -> Result<HashSet<String>, IndexError> {
        let mut out = HashSet::new();
        for p in clauses.iter().filter(|c| !c.quoted).flat_map(|c| &c.parts) {
            if fuzzy_distance(p) > 0 && searcher.doc_freq(&self.text_term(p)).map_err(|e| IndexError::Query(e.to_string()))? == 0 {
                out.insert(p.clone());
            }
        }
        Ok(out)
    }

    /// A clause with its unknown words widened to their near spellings (each scored
    /// by BM25 as the word it is).
    fn fuzzy_clause(&self, searcher: &Searcher, c: &Clause, unknown: &HashSet<String>) -> tantivy::Result<Box<dyn Query>> {
        if c.quoted {
            return Ok(self.exact_clause(c));
        }
        let mut parts: Vec<(Occur, Box<dyn Query>)> = Vec::with_capacity(c.parts.len());
        for p in &c.parts {
            if !unknown.contains(p) {
                parts.push((Occur::Must, Box::new(TermQuery::new(self.text_term(p), IndexRecordOption::WithFreqs))));
                continue;
            }
            let near = self.near_spellings(searcher, p)?;
            if near.is_empty() {
                return Ok(Box::new(EmptyQuery));
            }
            let any: Vec<Box<dyn Query>> =
                near.iter().map(|t| Box::new(TermQuery::new(self.text_term(t), IndexRecordOption::WithFreqs)) as Box<dyn Query>).collect();
            parts.push((Occur::Must, Box::new(DisjunctionMaxQuery::new(any))));
        }
        Ok(Box::new(BooleanQuery::new(parts)))
    }

    /// Indexed terms within the word's edit distance, at most [`MAX_NEAR_SPELLINGS`].
    /// Those that keep the first letter are looked for first (a typo rarely hits the
    /// first letter, and keeping it walks a 26th of the term dictionary); the whole
    /// dictionary only when there are none.
    fn near_spellings(&self, searcher: &Searcher, word: &str) -> tantivy::Result<Vec<String>> {
        self.near_terms(searcher, self.fields.text, word)
    }

    /// [`Self::near_spellings`] in any indexed field (the recall commands' `work` and
    /// `path`).
    pub(crate) fn near_terms(&self, searcher: &Searcher, field: tantivy::schema::Field, word: &str) -> tantivy::Result<Vec<String>> {
        if fuzzy_distance(word) == 0 {
            return Ok(Vec::new());
        }
        let dfa = FuzzyTermQuery::new(Term::from_field_text(field, word), fuzzy_distance(word), true).automaton()?;
        let Some(first) = word.chars().next() else { return Ok(Vec::new()) };
        let mut buf = [0u8; 4];
        let from = first.encode_utf8(&mut buf).as_bytes().to_vec();
        let mut to = from.clone();
        if let Some(last) = to.last_mut() {
            *last = last.saturating_add(1);
        }
        let same_first = self.spellings_in(searcher, field, &dfa, &from, &to)?;
        if !same_first.is_empty() {
            return Ok(same_first);
        }
        self.spellings_in(searcher, field, &dfa, &[], &[0xFF])
    }

    /// The first [`MAX_NEAR_SPELLINGS`] terms (in dictionary order) the automaton
    /// accepts in the byte range `from..to`. Each segment's dictionary is sorted, so
    /// the first that many of each segment hold the first that many of all: the same
    /// terms whatever the segment layout.
    fn spellings_in(
        &self,
        searcher: &Searcher,
        field: tantivy::schema::Field,
        dfa: &DfaWrapper,
        from: &[u8],
        to: &[u8],
    ) -> tantivy::Result<Vec<String>> {
        let mut out: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
        for segment in searcher.segment_readers() {
            let inverted = segment.inverted_index(field)?;
            let mut stream = inverted.terms().search(dfa).ge(from).lt(to).into_stream()?;
            let mut taken = 0;
            while taken < MAX_NEAR_SPELLINGS && stream.advance() {
                if let Ok(t) = std::str::from_utf8(stream.key()) {
                    taken += 1;
                    out.insert(t.to_string());
                }
            }
        }
        Ok(out.into_iter().take(MAX_NEAR_SPELLINGS).collect())
    }

    fn filters(&self, req: &SearchRequest) -> Vec<(Occur, Box<dyn Query>)> {
        let f = &self.fields;
        let mut out: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        if !req.harnesses.is_empty() {
            let any: Vec<(Occur, Box<dyn Query>)> = req
                .harnesses
                .iter()
                .map(|h| {
                    (
                        Occur::Should,
                        Box::new(TermQuery::new(Term::from_field_text(f.harness, h), IndexRecordOption::Basic)) as Box<dyn Query>,
                    )
                })
                .collect();
            out.push((Occur::Must, Box::new(BooleanQuery::new(any))));
        }
        if req.deleted_only {
            // The ledger's sessions as a set of keys; an empty ledger matches nothing.
            let q: Box<dyn Query> = if self.gone.is_empty() {
                Box::new(tantivy::query::EmptyQuery)
            } else {
                Box::new(tantivy::query::TermSetQuery::new(self.gone.keys().map(|k| Term::from_field_text(f.sid, k))))
            };
            out.push((Occur::Must, q));
        }
        if let Some(since) = req.since {
            out.push((
                Occur::Must,
                Box::new(RangeQuery::new(std::ops::Bound::Included(Term::from_field_i64(f.time, since.0)), std::ops::Bound::Unbounded)),
            ));
        }
        if let Some(role) = &req.role {
            let name = match role.as_str() {
                "tool" | "command" | "files" | "edit" | "error" | "partial" | "meaningful" => role.clone(),
                other => Role::parse(other).map_or_else(|| other.to_string(), |r| r.as_str().to_string()),
            };
            out.push((Occur::Must, Box::new(TermQuery::new(Term::from_field_text(f.role, &name), IndexRecordOption::Basic))));
        }
        if let Some(file) = &req.file {
            // As the index writes its path terms: normalized, lowercased, and a relative
            // path as the suffix it is (`./src/a.rs` is found as `src/a.rs`).
            let norm = super::records::normalize_path(file);
            let term = norm.trim_start_matches("./");
            out.push((Occur::Must, Box::new(TermQuery::new(Term::from_field_text(f.path, term), IndexRecordOption::Basic))));
        }
        out
    }

    /// Runs the tiers in order and returns the first that matched anything — for a
    /// question in plain language, with the later tiers' sessions after it until the
    /// limit is reached (see [`Plan`]).
    pub fn search(&self, req: &SearchRequest) -> Result<SearchResults, IndexError> {
        let searcher = self.searcher();
        let bounded = self.bound(&searcher, &req.query);
        let mut out = self.search_bounded(&searcher, &SearchRequest { query: bounded.text.clone(), ..req.clone() })?;
        out.bounded = bounded.narration();
        out.left_out = bounded.left_out;
        Ok(out)
    }

    /// `query` as it will be searched (see [`super::bound`]), its words' rarity read
    /// from `searcher`.
    pub fn bound(&self, searcher: &Searcher, query: &str) -> BoundedQuery {
        bound_query(query, |w| searcher.doc_freq(&self.text_term(w)).unwrap_or(0))
    }

    fn search_bounded(&self, searcher: &Searcher, req: &SearchRequest) -> Result<SearchResults, IndexError> {
        let searcher = searcher.clone();
        let clauses = parse_clauses(&req.query);
        if clauses.is_empty() {
            return self.recent(&searcher, req);
        }
        let filters = self.filters(req);
        let with_filters = |q: Box<dyn Query>| -> Box<dyn Query> {
            if filters.is_empty() && req.role.is_none() && req.file.is_none() {
                // Unwrapped, so a pure disjunction keeps tantivy's block-max pruning.
                return q;
            }
            let mut all = vec![(Occur::Must, q)];
            all.extend(filters.iter().map(|(o, q)| (*o, q.box_clone())));
            if req.role.is_some() || req.file.is_some() {
                all.push((Occur::Must, self.kind_term(KIND_TURN)));
            }
            Box::new(BooleanQuery::new(all))
        };
        let qerr = |e: tantivy::TantivyError| IndexError::Query(e.to_string());
        let plan = Plan::of(&req.query, &clauses, req.prose);
        // Word forms are looked up once per search, however many tiers ask.
        let forms = FormCache::default();

        if !plan.prose {
            let all = |q: Vec<Box<dyn Query>>| -> Box<dyn Query> {
                Box::new(BooleanQuery::new(q.into_iter().map(|q| (Occur::Must, q)).collect()))
            };
            let exact = all(clauses.iter().map(|c| self.exact_clause(c)).collect());
            req.cancel.check()?;
            let r = self.grouped(&searcher, &*with_filters(exact), req, Tier::Exact, &clauses, &[])?;
            if !r.hits.is_empty() {
                return Ok(r);
            }
            // Word forms: every word, or another form of it (`refreshing` for
            // `refresh`), the form typed scoring a little more.
            req.cancel.check()?;
            if let Some(q) = self.stemmed_query(&searcher, &clauses, &forms).map_err(qerr)? {
                let r = self.grouped(&searcher, &*with_filters(q), req, Tier::Stemmed, &clauses, &[])?;
                if !r.hits.is_empty() {
                    return Ok(r);
                }
            }
            // Only words the index does not have are read as typos: a query of known
            // words that found nothing together goes on to the relevance tier. The
            // fuzzy tier still needs every known word in the turn, so when those have
            // no turn in common it cannot match, and its spellings are not looked up.
            req.cancel.check()?;
            let unknown = self.unknown_words(&searcher, &clauses)?;
            if !unknown.is_empty() && self.known_words_meet(&searcher, &clauses, &unknown, &with_filters)? {
                let mut widened: Vec<Box<dyn Query>> = Vec::with_capacity(clauses.len());
                for c in &clauses {
                    widened.push(self.fuzzy_clause(&searcher, c, &unknown).map_err(qerr)?);
                }
                let r = self.grouped(&searcher, &*with_filters(all(widened)), req, Tier::Fuzzy, &clauses, &[])?;
                if !r.hits.is_empty() {
                    return Ok(r);
                }
            }
        }
        req.cancel.check()?;
        let (parts, units) = self.relevance_parts(&searcher, &clauses, true, &plan.frame, &forms).map_err(qerr)?;
        let any: Box<dyn Query> = Box::new(BooleanQuery::new(parts.into_iter().map(|p| (Occur::Should, p)).collect()));
        let mut r = self.grouped(&searcher, &*with_filters(any), req, Tier::Relevance, &clauses, &units)?;
        if r.hits.is_empty() {
            // Only the words left out matched anything: better those than nothing.
            let (parts, units) = self.relevance_parts(&searcher, &clauses, false, &plan.frame, &forms).map_err(qerr)?;
            let any: Box<dyn Query> = Box::new(BooleanQuery::new(parts.into_iter().map(|p| (Occur::Should, p)).collect()));
            r = self.grouped(&searcher, &*with_filters(any), req, Tier::Relevance, &clauses, &units)?;
        }
        if let Some(best) = r.hits.first() {
            let mut seen: HashSet<String> = HashSet::new();
            for t in &best.turns {
                for w in words(&searchable_text(t)) {
                    seen.extend(w.parts.iter().map(|p| stem(p)));
                    seen.extend(w.parts);
                }
            }
            if let Some(title) = &best.session.title {
                for w in words(title) {
                    seen.extend(w.parts.iter().map(|p| stem(p)));
                    seen.extend(w.parts);
                }
            }
            let found = |p: &String| seen.contains(p) || seen.contains(&stem(p));
            // What carried the match is said as plainly as what it lacks; words that
            // never had to match (`what`, `did`) are in neither list.
            let counted = clauses.iter().filter(|c| !plan.ignored.contains(&c.text));
            let (carried, dropped): (Vec<&Clause>, Vec<&Clause>) = counted.partition(|c| c.parts.iter().all(found));
            r.matched = carried.into_iter().map(|c| c.text.clone()).collect();
            r.dropped = dropped.into_iter().map(|c| c.text.clone()).collect();
        }
        r.ignored = plan.ignored;
        Ok(r)
    }

    /// Whether the clauses other than those holding an `unknown` word have a document
    /// in common (true when there are none: the unknown words alone decide).
    fn known_words_meet(
        &self,
        searcher: &Searcher,
        clauses: &[Clause],
        unknown: &HashSet<String>,
        with_filters: &dyn Fn(Box<dyn Query>) -> Box<dyn Query>,
    ) -> Result<bool, IndexError> {
        let known: Vec<(Occur, Box<dyn Query>)> = clauses
            .iter()
            .filter(|c| c.quoted || !c.parts.iter().any(|p| unknown.contains(p)))
            .map(|c| (Occur::Must, self.exact_clause(c)))
            .collect();
        if known.is_empty() {
            return Ok(true);
        }
        let q = with_filters(Box::new(BooleanQuery::new(known)));
        let n = searcher.search(&*q, &tantivy::collector::Count).map_err(|e| IndexError::Query(e.to_string()))?;
        Ok(n > 0)
    }

    /// The stemmed tier's query: each bare word or any indexed word with its
    /// stem (see [`stem`]), phrases as typed. `None` when no word has another form in
    /// the index (the tier would repeat the exact one).
    fn stemmed_query(&self, searcher: &Searcher, clauses: &[Clause], cache: &FormCache) -> tantivy::Result<Option<Box<dyn Query>>> {
        let mut widened: Vec<Box<dyn Query>> = Vec::with_capacity(clauses.len());
        let mut any_form = false;
        for c in clauses {
            if c.quoted || c.parts.len() > 1 {
                widened.push(self.exact_clause(c));
                continue;
            }
            let word = &c.parts[0];
            let exact: Box<dyn Query> = Box::new(TermQuery::new(self.text_term(word), IndexRecordOption::WithFreqs));
            let forms = cache.forms(self, searcher, word)?;
            if forms.is_empty() {
                widened.push(exact);
                continue;
            }
            any_form = true;
            let mut disjuncts = vec![exact];
            for f in forms {
                let q: Box<dyn Query> = Box::new(TermQuery::new(self.text_term(&f), IndexRecordOption::WithFreqs));
                disjuncts.push(Box::new(BoostQuery::new(q, OTHER_FORM_WEIGHT)));
            }
            widened.push(Box::new(DisjunctionMaxQuery::new(disjuncts)));
        }
        if !any_form {
            return Ok(None);
        }
        Ok(Some(Box::new(BooleanQuery::new(widened.into_iter().map(|q| (Occur::Must, q)).collect()))))
    }

    /// The relevance tier's query parts (any may match). A bare word also matches its
    /// other forms (`painted` for `paint`, slightly discounted); with `leave_out`,
    /// stopwords are left out and words in more than [`COMMON_WORD_SHARE`] of the
    /// documents, and the `frame` words of a question, count [`COMMON_WORD_WEIGHT`]
    /// (unless nothing else is left); and each pair of neighbouring words adds a small
    /// bonus for turns where they stand together (one word apart at most).
    fn relevance_parts(
        &self,
        searcher: &Searcher,
        clauses: &[Clause],
        leave_out: bool,
        frame: &[String],
        cache: &FormCache,
    ) -> tantivy::Result<RelevanceParts> {
        let docs = searcher.num_docs().max(1) as f64;
        let mut kept: Vec<&Clause> = Vec::new();
        let mut common_words: Vec<&String> = Vec::new();
        for c in clauses {
            if !leave_out || c.quoted || c.parts.len() > 1 {
                kept.push(c);
                continue;
            }
            let w = &c.parts[0];
            let common = frame.contains(w) || searcher.doc_freq(&self.text_term(w))? as f64 > COMMON_WORD_SHARE * docs;
            if is_stopword(w) {
                continue;
            }
            if common {
                common_words.push(w);
            } else {
                kept.push(c);
            }
        }
        if kept.is_empty() {
            kept = clauses.iter().collect();
            common_words.clear();
        }
        let mut parts: Vec<Box<dyn Query>> = Vec::with_capacity(kept.len() * 2);
        let mut units: Vec<Unit> = Vec::with_capacity(kept.len() + common_words.len());
        for c in &kept {
            if c.quoted || c.parts.len() > 1 {
                parts.push(self.exact_clause(c));
                units.extend(c.parts.iter().map(|p| Unit { terms: vec![(p.clone(), 1.0)], weight: 1.0 }));
                continue;
            }
            let word = &c.parts[0];
            let exact: Box<dyn Query> = Box::new(TermQuery::new(self.text_term(word), IndexRecordOption::WithFreqs));
            let forms = cache.forms(self, searcher, word)?;
            let mut unit = Unit { terms: vec![(word.clone(), 1.0)], weight: 1.0 };
            unit.terms.extend(forms.iter().map(|f| (f.clone(), OTHER_FORM_WEIGHT)));
            units.push(unit);
            if forms.is_empty() {
                parts.push(exact);
                continue;
            }
            let mut disjuncts = vec![exact];
            for f in forms {
                let q: Box<dyn Query> = Box::new(TermQuery::new(self.text_term(&f), IndexRecordOption::WithFreqs));
                disjuncts.push(Box::new(BoostQuery::new(q, OTHER_FORM_WEIGHT)));
            }
            parts.push(Box::new(DisjunctionMaxQuery::new(disjuncts)));
        }
        let singles: Vec<&String> = kept.iter().filter(|c| !c.quoted && c.parts.len() == 1).map(|c| &c.parts[0]).collect();
        for pair in singles.windows(2) {
            let mut q = PhraseQuery::new(vec![self.text_term(pair[0]), self.text_term(pair[1])]);
            q.set_slop(1);
            parts.push(Box::new(BoostQuery::new(Box::new(q), PAIR_WEIGHT)));
        }
        for w in common_words {
            let q: Box<dyn Query> = Box::new(TermQuery::new(self.text_term(w), IndexRecordOption::WithFreqs));
            parts.push(Box::new(BoostQuery::new(q, COMMON_WORD_WEIGHT)));
            units.push(Unit { terms: vec![(w.clone(), 1.0)], weight: COMMON_WORD_WEIGHT });
        }
        Ok((parts, units))
    }

    /// Other indexed forms of `word`: the forms of an irregular word the index has
    /// (`went` for `go`, see [`super::irregular`]), and terms with the same [`stem`],
    /// found by scanning the term dictionary from the stem's prefix.
    fn word_forms(&self, searcher: &Searcher, word: &str) -> tantivy::Result<Vec<String>> {
        let mut forms: Vec<String> = Vec::new();
        for f in super::irregular::group_of(word).unwrap_or_default() {
            if *f != word && searcher.doc_freq(&self.text_term(f))? > 0 {
                forms.push(f.to_string());
            }
        }
        let key = stem(word);
        if key.len() < 3 || !key.bytes().all(|b| b.is_ascii_lowercase()) {
            return Ok(forms);
        }
        // Forms start with the stem, except that a final `y` became `i` (`poni` for
        // `pony`) or a dropped `e` came back (`hike` for `hiking`), so scan from the
        // stem without it.
        let prefix = key.strip_suffix(['i', 'e']).unwrap_or(&key);
        let mut upper = prefix.as_bytes().to_vec();
        if let Some(last) = upper.last_mut() {
            *last += 1;
        }
        // The first MAX_FORM_SCAN terms of the range in each segment hold the first
        // that many of all of them, so the forms found do not depend on the layout.
        let mut scanned: std::collections::BTreeSet<Vec<u8>> = std::collections::BTreeSet::new();
        for segment in searcher.segment_readers() {
            let inverted = segment.inverted_index(self.fields.text)?;
            let mut stream = inverted.terms().range().ge(prefix.as_bytes()).lt(&upper).into_stream()?;
            let mut n = 0;
            while n < MAX_FORM_SCAN && stream.advance() {
                n += 1;
                scanned.insert(stream.key().to_vec());
            }
        }
        for t in scanned.iter().take(MAX_FORM_SCAN) {
            let Ok(t) = std::str::from_utf8(t) else { continue };
            if t != word && t.len() <= prefix.len() + 8 && stem(t) == key && !forms.iter().any(|f| f == t) {
                forms.push(t.to_string());
            }
        }
        Ok(forms)
    }

    /// The most recently updated sessions (a query with only filters).
    fn recent(&self, searcher: &Searcher, req: &SearchRequest) -> Result<SearchResults, IndexError> {
        let mut all: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, self.kind_term(KIND_SESSION))];
        all.extend(self.filters(&SearchRequest { role: None, file: None, ..req.clone() }));
        let q = BooleanQuery::new(all);
        let limit = req.limit.clamp(1, MAX_LIMIT);
        let want = if req.project.is_some() { limit * 50 } else { limit };
        let top = searcher
            .search(&q, &TopDocs::with_limit(want).order_by_fast_field::<i64>("time", tantivy::Order::Desc))
            .map_err(|e| IndexError::Query(e.to_string()))?;
        let mut hits = Vec::new();
        for (_, addr) in top {
            req.cancel.check()?;
            let doc: TantivyDocument = searcher.doc(addr).map_err(|e| IndexError::Query(e.to_string()))?;
            let Some(meta) = self.meta_of(&doc) else {
                continue;
            };
            if !project_matches(&meta, req.project.as_deref()) {
                continue;
            }
            hits.push(Hit { session: meta, tier: Tier::Exact, score: 0.0, snippets: Vec::new(), turns: Vec::new() });
            if hits.len() == limit {
                break;
            }
        }
        Ok(SearchResults::listed(hits))
    }

    /// Collects the best turns for `query`, groups them into sessions and ranks them.
    ///
    /// Grouping reads only fast fields (the session hash; `seq`, which session
    /// documents lack) and the postings of `role:user`; stored documents are read for
    /// the sessions shown and their matching turns only.
    // One search's pass: its query, tier and words.
    fn grouped(
        &self,
        searcher: &Searcher,
        query: &dyn Query,
        req: &SearchRequest,
        tier: Tier,
        clauses: &[Clause],
        units: &[Unit],
    ) -> Result<SearchResults, IndexError> {
        let limit = req.limit.clamp(1, MAX_LIMIT);
        let qerr = |e: tantivy::TantivyError| IndexError::Query(e.to_string());
        let collect = (limit * 20).max(COLLECT_TURNS);
        let readers = searcher.segment_readers();
        let sid_hashes: Vec<Option<Column<u64>>> = readers.iter().map(|r| r.fast_fields().u64("sid_hash").ok()).collect();
        let seqs: Vec<Option<Column<u64>>> = readers.iter().map(|r| r.fast_fields().u64("seq").ok()).collect();
        req.cancel.check()?;
        let (top, capped) = top_turns(searcher, query, collect, &sid_hashes, &seqs).map_err(qerr)?;
        req.cancel.check()?;
        let users = self.user_turns(searcher, &top).map_err(|e| IndexError::Query(e.to_string()))?;

        struct Agg {
            turns: Vec<(Score, DocAddress)>,
            title: f32,
            session_doc: Option<DocAddress>,
        }
        let mut groups: HashMap<u64, Agg> = HashMap::new();
        let mut order: Vec<u64> = Vec::new();
        for (score, addr) in &top {
            let seg = addr.segment_ord as usize;
            let Some(h) = value_at(&sid_hashes, *addr) else {
                continue;
            };
            let agg = groups.entry(h).or_insert_with(|| {
                order.push(h);
                Agg { turns: Vec::new(), title: 0.0, session_doc: None }
            });
            let is_session_doc = seqs.get(seg).and_then(|c| c.as_ref()).is_some_and(|c| c.first(addr.doc_id).is_none());
            if is_session_doc {
                agg.title = agg.title.max(*score);
                agg.session_doc = Some(*addr);
            } else {
                let boost = if users.contains(addr) { USER_TURN_BOOST } else { 1.0 };
                agg.turns.push((*score * boost, *addr));
            }
        }
        let mut ranked: Vec<(f32, u64)> = Vec::with_capacity(groups.len());
        for h in &order {
            let agg = groups.get_mut(h).expect("grouped above");
            // `top` is in a stable order, so equal turns stay in it.
            agg.turns.sort_by(|a, b| b.0.total_cmp(&a.0));
            ranked.push((session_score(&agg.turns, agg.title), *h));
        }
        let total = ranked.len();
        if !units.is_empty() {
            // The best sessions by the index's score are scored again over all their
            // turns with a gentler length normalisation (see [`Self::rescore`]); the
            // index's score, which also counts neighbouring words and the title, keeps
            // a share.
            ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
            ranked.truncate((limit * RESCORE_PER_HIT).max(RESCORE_SESSIONS));
            let hashes: Vec<u64> = ranked.iter().map(|r| r.1).collect();
            req.cancel.check()?;
            let again = self.rescore(searcher, &hashes, units).map_err(qerr)?;
            for (score, h) in &mut ranked {
                *score = INDEX_SCORE_SHARE * *score + again.get(h).copied().unwrap_or(0.0);
            }
        }
        // Equal scores go by the session hash, not by where the index put the documents.
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));

        let times: Vec<Option<Column<i64>>> = readers.iter().map(|r| r.fast_fields().i64("time").ok()).collect();
        // Age is counted back from the newest activity in the history, not from the
        // clock: the same history ranks the same whenever it is asked (and a history
        // left alone for a month does not see every session age at once).
        let newest = times.iter().flatten().map(|c| c.max_value()).max().unwrap_or(0);
        let periods = named_periods(&req.query);
        let mut scored: Vec<(f32, i64, u64, DocAddress, Option<SessionMeta>)> = Vec::new();
        // A note the user asked deja to remember ranks a little above transcripts.
        let notes: std::collections::HashSet<DocAddress> = searcher
            .search(
                &BooleanQuery::new(vec![
                    (Occur::Must, self.kind_term(KIND_SESSION)),
                    (
                        Occur::Must,
                        Box::new(TermQuery::new(Term::from_field_text(self.fields.harness, NOTES_HARNESS), IndexRecordOption::Basic)),
                    ),
                ]),
                &tantivy::collector::DocSetCollector,
            )
            .map_err(|e| IndexError::Query(e.to_string()))?;
        // Look at a few more than asked so the priors and filters can reorder.
        let window = if req.project.is_some() { usize::MAX } else { limit * 3 };
        for (score, h) in ranked.into_iter().take(window) {
            // Each step may read a stored document: with a project filter, up to every
            // session that matched.
            req.cancel.check()?;
            let addr = match groups.get(&h).and_then(|g| g.session_doc) {
                Some(a) => a,
                None => match self.session_doc(searcher, h)? {
                    Some(a) => a,
                    None => continue,
                },
            };
            // A project filter needs the stored metadata; otherwise the session
            // document's time (a fast field) is all the ranking needs, and only the
            // sessions shown are read.
            let meta = match req.project.as_deref() {
                Some(want) => match self.meta_at(searcher, addr)? {
                    Some(m) if project_matches(&m, Some(want)) => Some(m),
                    _ => continue,
                },
                None => None,
            };
            let when = value_at(&times, addr).filter(|t| *t != 0).map(Timestamp);
            let age_days = when.map_or(365.0, |u| ((newest - u.0) as f32 / 86_400_000.0).max(0.0));
            let mut prior = 1.0 + RECENCY_WEIGHT * (-age_days / 90.0).exp();
            if !periods.is_empty() {
                let m = periods.iter().map(|p| p.closeness(when)).fold(0.0f32, f32::max);
                prior *= 1.0 + DATE_BOOST * m;
            }
            if notes.contains(&addr) {
                prior *= NOTE_BOOST;
            }
            scored.push((score * prior, when.map_or(0, |t| t.0), h, addr, meta));
            if req.project.is_some() && scored.len() >= limit * 3 {
                break;
            }
        }
        // Ties: the session active last first, then the hash (the id, below).
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)).then(b.2.cmp(&a.2)));

        let query_parts: HashSet<String> = clauses.iter().flat_map(|c| c.parts.iter().cloned()).collect();
        let mut hits = Vec::with_capacity(limit);
        let mut last_active: HashMap<u64, i64> = HashMap::new();
        for (score, when, h, addr, meta) in scored {
            if hits.len() == limit {
                break;
            }
            // Each hit reads up to five turns from the archive.
            req.cancel.check()?;
            let meta = match meta {
                Some(m) => m,
                None => match self.meta_at(searcher, addr)? {
                    Some(m) => m,
                    None => continue,
                },
            };
            let agg = &groups[&h];
            let mut turns = Vec::new();
            let key = meta.key();
            for (_, addr) in agg.turns.iter().take(5) {
                turns.push(self.hit_turn(searcher, *addr, &key, value_at(&seqs, *addr), value_at(&times, *addr))?);
            }
            let snippets: Vec<String> =
                turns.iter().take(3).filter_map(|t| snippet(&searchable_text(t), &query_parts, tier == Tier::Fuzzy)).collect();
            let snippets = if snippets.is_empty() { meta.title.iter().cloned().collect() } else { snippets };
            last_active.insert(h, when);
            hits.push(Hit { session: meta, tier, score, snippets, turns });
        }
        // The shown sessions' ties in the order the brief promises: last activity, then id.
        hits.sort_by(|a, b| {
            let when = |x: &Hit| last_active.get(&sid_hash_of(&x.session)).copied().unwrap_or(0);
            b.score.total_cmp(&a.score).then(when(b).cmp(&when(a))).then_with(|| a.session.key().cmp(&b.session.key()))
        });
        Ok(SearchResults { tier, total, capped, ..SearchResults::listed(hits) })
    }

    /// Each session's score over all its turns: every turn scored by BM25 with
    /// [`RESCORE_B`] (for `units`, each word's other forms counting their weight, a
    /// common word its weight), then the best turn plus [`SECOND_TURNS`] of each of
    /// the next two, as [`session_score`] does. Read from what the index already has:
    /// a session's documents from its `sid_hash` term, each word's frequency in them
    /// by seeking the word's postings, their lengths from the field norms.
    ///
    /// The index's BM25 normalises length with b = 0.75, which lets a short turn of a
    /// person that only echoes a word of the question ("what other classes have you
    /// done?") beat the longer one that answers it; a smaller b keeps a preference for
    /// focused turns without letting it decide. That holds for what people write (and
    /// a session's title). What a model or a tool writes — a 400-word answer that
    /// restates the subject in every paragraph, a build log — keeps the index's b:
    /// with the gentle one, long generated turns that echo many of the words outrank
    /// the person's own sentence that answers the question (measured on the `chats`
    /// benchmark, docs/benchmarks.md; LoCoMo, all people's turns, is unchanged).
    fn rescore(&self, searcher: &Searcher, sessions: &[u64], units: &[Unit]) -> tantivy::Result<HashMap<u64, f32>> {
        let nterms: usize = units.iter().map(|u| u.terms.len()).sum();
        // Each session's documents as (length, row): the document's frequency of each
        // term (in `units` order) is at `tf[row * nterms..][..nterms]`.
        let mut docs_of: Vec<Vec<(u32, usize)>> = vec![Vec::new(); sessions.len()];
        // Per row: whether a person wrote it (a user turn, or the session's title),
        // which decides its length normalisation.
        let mut written: Vec<bool> = Vec::new();
        // …and whether it was said at all (by a person or the model), not printed by a
        // tool.
        let mut spoken: Vec<bool> = Vec::new();
        let mut tf: Vec<u32> = Vec::new();
        let mut total_tokens: u64 = 0;
        for reader in searcher.segment_readers() {
            let text = reader.inverted_index(self.fields.text)?;
            total_tokens += text.total_num_tokens();
            let ids = reader.inverted_index(self.fields.sid_hash)?;
            let norms = reader.get_fieldnorms_reader(self.fields.text)?;
            // (doc, row), sorted by doc so each word's postings are walked once.
            let mut docs: Vec<(u32, usize)> = Vec::new();
            for (i, h) in sessions.iter().enumerate() {
                let Some(mut p) = ids.read_postings(&Term::from_field_u64(self.fields.sid_hash, *h), IndexRecordOption::Basic)? else {
                    continue;
                };
                while p.doc() != tantivy::TERMINATED {
                    let d = p.doc();
                    if !reader.is_deleted(d) {
                        let row = written.len();
                        tf.extend(std::iter::repeat_n(0, nterms));
                        written.push(false);
                        spoken.push(false);
                        docs_of[i].push((norms.fieldnorm(d), row));
                        docs.push((d, row));
                    }
                    p.advance();
                }
            }
            if docs.is_empty() {
                continue;
            }
            docs.sort_unstable();
            let users = reader.inverted_index(self.fields.role)?;
            let user_term = Term::from_field_text(self.fields.role, Role::User.as_str());
            if let Some(mut p) = users.read_postings(&user_term, IndexRecordOption::Basic)? {
                for &(d, row) in &docs {
                    if p.doc() < d {
                        p.seek(d);
                    }
                    written[row] |= p.doc() == d;
                }
            }
            let asst_term = Term::from_field_text(self.fields.role, Role::Assistant.as_str());
            if let Some(mut p) = users.read_postings(&asst_term, IndexRecordOption::Basic)? {
                for &(d, row) in &docs {
                    if p.doc() < d {
                        p.seek(d);
                    }
                    spoken[row] |= p.doc() == d;
                }
            }
            // A session's own document (its title) has no turn number.
            if let Ok(seqs) = reader.fast_fields().u64("seq") {
                for &(d, row) in &docs {
                    written[row] |= seqs.first(d).is_none();
                }
            }
            let terms = units.iter().flat_map(|u| u.terms.iter());
            for (ti, (t, _)) in terms.enumerate() {
                let Some(mut p) = text.read_postings(&self.text_term(t), IndexRecordOption::WithFreqs)? else { continue };
                for &(d, row) in &docs {
                    if p.doc() < d {
                        p.seek(d);
                    }
                    if p.doc() == tantivy::TERMINATED {
                        break;
                    }
                    if p.doc() == d {
                        tf[row * nterms + ti] = tantivy::postings::Postings::term_freq(&p);
                    }
                }
            }
        }
        let n_docs = searcher.num_docs();
        let avg_len = (total_tokens as f32 / n_docs.max(1) as f32).max(1.0);
        let mut idfs: Vec<f32> = Vec::with_capacity(units.len());
        for u in units {
            // A word and its other forms count as one (`go`, `going`, `went`), so the
            // word is as rare as its most common form (Lucene's synonym query does the
            // same), not as the form typed: `go` is rare in a chat, `going` is not.
            let mut df = 0;
            for (t, _) in &u.terms {
                df = df.max(searcher.doc_freq(&self.text_term(t))?);
            }
            let df = df.min(n_docs);
            idfs.push((1.0 + ((n_docs - df) as f32 + 0.5) / (df as f32 + 0.5)).ln());
        }
        let turn_score = |len: u32, row: usize| -> f32 {
            let b = if written[row] { RESCORE_B } else { GENERATED_B };
            let w = if written[row] || spoken[row] { 1.0 } else { TOOL_TURN_WEIGHT };
            let norm = BM25_K1 * (1.0 - b + b * len as f32 / avg_len);
            let mut freqs = tf[row * nterms..(row + 1) * nterms].iter();
            let mut score = 0.0f32;
            for (u, idf) in units.iter().zip(&idfs) {
                let f: f32 = u.terms.iter().zip(freqs.by_ref()).map(|((_, w), n)| *w * *n as f32).sum();
                if f > 0.0 {
                    score += u.weight * idf * f * (BM25_K1 + 1.0) / (f + norm);
                }
            }
            score * w
        };
        let mut out = HashMap::with_capacity(sessions.len());
        for (h, docs) in sessions.iter().zip(&docs_of) {
            let mut scores: Vec<f32> = docs.iter().map(|&(len, row)| turn_score(len, row)).collect();
            scores.sort_by(|a, b| b.total_cmp(a));
            let best = scores.first().copied().unwrap_or(0.0);
            out.insert(*h, best + SECOND_TURNS * scores.iter().skip(1).take(2).sum::<f32>());
        }
        Ok(out)
    }

    /// Which of `top` are user turns, by walking the postings of `role:user` once per
    /// segment instead of reading each document.
    fn user_turns(&self, searcher: &Searcher, top: &[(Score, DocAddress)]) -> tantivy::Result<HashSet<DocAddress>> {
        let mut by_segment: HashMap<u32, Vec<u32>> = HashMap::new();
        for (_, a) in top {
            by_segment.entry(a.segment_ord).or_default().push(a.doc_id);
        }
        let term = Term::from_field_text(self.fields.role, Role::User.as_str());
        let mut out = HashSet::new();
        for (seg, mut docs) in by_segment {
            docs.sort_unstable();
            let inverted = searcher.segment_reader(seg).inverted_index(self.fields.role)?;
            let Some(mut postings) = inverted.read_postings(&term, IndexRecordOption::Basic)? else { continue };
            for d in docs {
                if postings.doc() < d {
                    postings.seek(d);
                }
                if postings.doc() == d {
                    out.insert(DocAddress::new(seg, d));
                }
            }
        }
        Ok(out)
    }

    /// The metadata stored on the session document at `addr`.
    fn meta_at(&self, searcher: &Searcher, addr: DocAddress) -> Result<Option<SessionMeta>, IndexError> {
        let doc: TantivyDocument = searcher.doc(addr).map_err(|e| IndexError::Query(e.to_string()))?;
        Ok(self.meta_of(&doc))
    }

    /// The session document of the session with this hash.
    fn session_doc(&self, searcher: &Searcher, h: u64) -> Result<Option<DocAddress>, IndexError> {
        let q = BooleanQuery::new(vec![
            (Occur::Must, self.kind_term(KIND_SESSION)),
            (Occur::Must, Box::new(TermQuery::new(Term::from_field_u64(self.fields.sid_hash, h), IndexRecordOption::Basic))),
        ]);
        let top = searcher.search(&q, &TopDocs::with_limit(1).order_by_score()).map_err(|e| IndexError::Query(e.to_string()))?;
        Ok(top.first().map(|(_, a)| *a))
    }
}

/// The hash the index groups a session's documents by (its `sid_hash` field).
fn sid_hash_of(meta: &SessionMeta) -> u64 {
    xxhash_rust::xxh3::xxh3_64(meta.key().as_bytes())
}

/// The value a document has in a fast-field column opened per segment (`None` where the
/// segment lacks the column or the document a value).
fn value_at<T: PartialOrd + Copy + std::fmt::Debug + Send + Sync + 'static>(columns: &[Option<Column<T>>], addr: DocAddress) -> Option<T> {
    columns.get(addr.segment_ord as usize).and_then(|c| c.as_ref()).and_then(|c| c.first(addr.doc_id))
}

/// A document's place in the order of equal scores: its session's hash, then its turn
/// number (a session document, which has none, last). Both are the same in any index
/// of the same history, unlike the document's address, by which tantivy breaks ties.
fn stable_key(sid_hashes: &[Option<Column<u64>>], seqs: &[Option<Column<u64>>], addr: DocAddress) -> (u64, u64) {
    let h = value_at(sid_hashes, addr).unwrap_or(0);
    let seq = value_at(seqs, addr).unwrap_or(u64::MAX);
    (h, seq)
}

/// The `collect` best documents for `query`, best first, equal scores in
/// [`stable_key`] order; and whether more matched.
///
/// One more than asked is collected by score alone, which keeps tantivy's pruning.
/// When the one left out scores less than the last kept, the kept set is exactly the
/// best `collect`, whatever the segment layout, and only needs sorting. When the two
/// are equal, which of the tied documents made the cut depends on where they lie in
/// the index: every document scoring at least that much is gathered again, still
/// pruned, and the cut is made by the stable key among them ([`at_least`]).
fn top_turns(
    searcher: &Searcher,
    query: &dyn Query,
    collect: usize,
    sid_hashes: &[Option<Column<u64>>],
    seqs: &[Option<Column<u64>>],
) -> tantivy::Result<(Vec<(Score, DocAddress)>, bool)> {
    let mut top = searcher.search(query, &TopDocs::with_limit(collect + 1).order_by_score())?;
    let capped = top.len() > collect;
    if capped && top[collect].0 == top[collect - 1].0 {
        top = at_least(searcher, query, top[collect].0)?;
    }
    let mut keyed: Vec<(Score, (u64, u64), DocAddress)> =
        top.into_iter().map(|(score, addr)| (score, stable_key(sid_hashes, seqs, addr), addr)).collect();
    keyed.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| b.1.cmp(&a.1)));
    keyed.truncate(collect);
    Ok((keyed.into_iter().map(|(score, _, addr)| (score, addr)).collect(), capped))
}

/// Every live document scoring `floor` or more (less a rounding's worth: a score summed
/// in another order can differ in its last bit), found with block-max pruning at that
/// threshold, so only the blocks that can reach it are scored.
fn at_least(searcher: &Searcher, query: &dyn Query, floor: Score) -> tantivy::Result<Vec<(Score, DocAddress)>> {
    let weight = query.weight(tantivy::query::EnableScoring::enabled_from_searcher(searcher))?;
    let threshold = if floor > 0.0 { floor * (1.0 - 1e-5) } else { Score::MIN };
    let mut out = Vec::new();
    for (ord, reader) in searcher.segment_readers().iter().enumerate() {
        let alive = reader.alive_bitset();
        weight.for_each_pruning(threshold, reader, &mut |doc, score| {
            if alive.is_none_or(|a| a.is_alive(doc)) {
                out.push((score, DocAddress::new(ord as u32, doc)));
            }
            threshold
        })?;
    }
    Ok(out)
}

fn project_matches(meta: &SessionMeta, want: Option<&str>) -> bool {
    match want {
        None => true,
        Some(w) => meta.project.as_deref().is_some_and(|p| p.to_lowercase().contains(&w.to_lowercase())),
    }
}

/// Everything of a turn that the index searched: text, command line, paths, edit.
pub fn searchable_text(t: &Turn) -> String {
    let mut s = String::new();
    if let Some(cmd) = t.tool.as_ref().and_then(|x| x.command.as_deref()) {
        s.push_str("$ ");
        s.push_str(cmd);
        s.push('\n');
    }
    s.push_str(&t.text);
    for f in &t.files {
        s.push('\n');
        s.push_str(&f.path);
    }
    if let Some(e) = &t.edit {
        s.push('\n');
        s.push_str(&e.path);
        s.push('\n');
        s.push_str(&e.old);
    }
    s
}

fn matches_term(word: &Word, terms: &HashSet<String>, fuzzy: bool) -> Option<String> {
    let candidates = word.compound.iter().chain(word.parts.iter());
    for c in candidates {
        if terms.contains(c) {
            return Some(c.clone());
        }
        if fuzzy {
            if let Some(t) = terms.iter().find(|t| {
                let d = fuzzy_distance(t) as usize;
                d > 0 && levenshtein(t, c) <= d
            }) {
                return Some(t.clone());
            }
        }
    }
    None
}

const SNIPPET_WORDS: usize = 28;

/// A one-line window of `text` where the query terms cluster, or `None` when no
/// term occurs in it.
pub(crate) fn snippet(text: &str, terms: &HashSet<String>, fuzzy: bool) -> Option<String> {
    let ws = words(text);
    let marks: Vec<Option<String>> = ws.iter().map(|w| matches_term(w, terms, fuzzy)).collect();
    let first_hit = marks.iter().position(Option::is_some)?;
    let mut best = (0usize, 0usize, first_hit);
    for start in 0..ws.len() {
        if marks[start].is_none() {
            continue;
        }
        let end = (start + SNIPPET_WORDS).min(ws.len());
        let distinct: HashSet<&String> = marks[start..end].iter().flatten().collect();
        let count = marks[start..end].iter().flatten().count();
        if (distinct.len(), count) > (best.0, best.1) {
            best = (distinct.len(), count, start);
        }
    }
    let start_word = best.2.saturating_sub(4);
    let end_word = (start_word + SNIPPET_WORDS).min(ws.len());
    let from = ws[start_word].start;
    let to = ws[end_word - 1].end;
    let mut s = String::new();
    if start_word > 0 {
        s.push('…');
    }
    s.push_str(&one_line(&text[from..to].replace('\n', " "), 400));
    if end_word < ws.len() {
        s.push('…');
    }
    Some(s)
}

pub(crate) fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// A small index of the test-only `rowstore` adapter (see `incremental_tests`): one
/// session per `id<TAB>time<TAB>text` row.
#[cfg(test)]
pub(crate) fn rowstore_index(rows: &str) -> (tempfile::TempDir, IndexView) {
    use crate::env::StoreEnv;
    use crate::index::indexer::{run_index, IndexRequest, Silent};
    let tmp = tempfile::tempdir().expect("tmp");
    let store = tmp.path().join("store");
    std::fs::create_dir_all(&store).expect("mkdir");
    std::fs::write(store.join("rows.db"), rows).expect("rows");
    let env = StoreEnv::with_home(tmp.path()).set("DEJA_ROWSTORE_ROOT", store.display().to_string());
    let paths = super::IndexPaths::new(tmp.path().join("index"));
    let req = IndexRequest { harnesses: Some(vec!["rowstore".to_string()]), rebuild: false, wait: true };
    run_index(&env, &paths, &req, &Silent).expect("index");
    let view = IndexView::open(&paths).expect("view");
    (tmp, view)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cancelled_search_stops_at_whichever_step_it_is_on() {
        let rows: String = (0..30).map(|i| format!("s{i}\t{}\tpgbouncer refused connections, attempt {i}\n", 1000 + i)).collect();
        let (_tmp, view) = rowstore_index(&rows);
        let search = |cancel: Cancel| {
            view.search(&SearchRequest { query: "pgbouncer refused".into(), limit: 50, cancel, ..SearchRequest::default() })
        };
        let counted = Cancel::after_checks(usize::MAX);
        let whole = search(counted.clone()).expect("search");
        assert_eq!(whole.hits.len(), 30);
        // A step per session shown (its turns are read from the archive), so the work
        // a cancelled search skips grows with what it would have read.
        let steps = counted.checks();
        assert!(steps >= 30, "{steps} checks for 30 sessions read");
        for k in [0, 1, steps / 2, steps - 1] {
            let e = search(Cancel::after_checks(k)).expect_err("cancelled");
            assert!(matches!(e, IndexError::Cancelled(_)), "stopped at check {k}: {e}");
        }
        let again = search(Cancel::after_checks(steps)).expect("every check passed");
        let keys = |r: &SearchResults| r.hits.iter().map(|h| h.session.key()).collect::<Vec<_>>();
        assert_eq!(keys(&again), keys(&whole), "a token that never fires changes nothing");
        assert_eq!(keys(&search(Cancel::never()).expect("search")), keys(&whole));
    }

    #[test]
    fn oversized_queries_are_bounded_and_say_what_was_left_out() {
        let (_tmp, view) = rowstore_index("s1\t1000\tpgbouncer refused connections on port 6432\n");
        let search = |q: &str| view.search(&SearchRequest { query: q.to_string(), limit: 5, ..SearchRequest::default() });
        assert_eq!(search("pgbouncer refused").expect("search").hits.len(), 1);

        // Past the byte bound: cut between words, searched, and said.
        let long = "pgbouncer ".repeat(MAX_QUERY_BYTES / 10 + 1);
        let r = search(&long).expect("a long query is searched");
        assert_eq!(r.hits.len(), 1);
        assert!(r.bounded.as_deref().is_some_and(|b| b.contains(&format!("{} bytes", long.trim().len()))), "{:?}", r.bounded);

        // Past the word cap: the stopwords go first, then the most common words.
        let words_at = |n: usize| (0..n).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
        let q = format!("the pgbouncer refused {}", words_at(MAX_QUERY_WORDS));
        let r = search(&q).expect("searched");
        assert_eq!(r.left_out.first().map(String::as_str), Some("the"), "{:?}", r.left_out);
        assert!(
            !r.left_out.iter().any(|w| w == "pgbouncer" || w == "refused"),
            "the words the history has are the rare ones: {:?}",
            r.left_out
        );
        assert_eq!(r.hits.len(), 1, "found by the words kept");
        // At the limit nothing is left out.
        let r = search(&words_at(MAX_QUERY_WORDS)).expect("searched");
        assert!(r.left_out.is_empty() && r.bounded.is_none());
        // A quoted phrase counts each of its words, and is cut rather than refused.
        let r = search(&format!("\"{}\"", words_at(MAX_QUERY_WORDS + 1))).expect("searched");
        assert_eq!(r.left_out, vec![format!("w{MAX_QUERY_WORDS}")]);
    }

    #[test]
    fn word_forms_hold_in_the_stemmed_tier() {
        let (_tmp, view) = rowstore_index("s1\t1000\trefreshing the token cache made login flaky\ns2\t2000\tthe token was fine\n");
        let search = |q: &str| view.search(&SearchRequest { query: q.to_string(), limit: 5, ..SearchRequest::default() }).expect("search");
        let r = search("refreshing token");
        assert_eq!((r.tier, r.hits.len()), (Tier::Exact, 1));
        let r = search("refresh token");
        assert_eq!(r.tier, Tier::Stemmed, "{r:?}");
        assert_eq!(r.hits.iter().map(|h| h.session.id.as_str()).collect::<Vec<_>>(), ["s1"]);
        assert!(r.hits.iter().all(|h| h.tier == Tier::Stemmed));
    }

    /// Six one-turn sessions saying `text`: they keep the words a test asks for rare.
    fn others(text: &str) -> String {
        (0..6).map(|i| format!("other{i}\t900\t{text}\n")).collect()
    }

    /// `query` searched for the first five sessions.
    fn ask(view: &IndexView, query: &str) -> SearchResults {
        view.search(&SearchRequest { query: query.into(), limit: 5, ..SearchRequest::default() }).expect("search")
    }

    #[test]
    fn a_word_is_as_rare_as_its_most_common_form() {
        // `go` as typed is in one turn, its forms in many: counted as rare as the typed
        // form, the session full of `going` and `went` would beat the one turn about the
        // park, the rarer word of the question.
        let mut rows = String::from("park\t1000\thello\npark\t1001\tthe kids loved the park\n");
        rows.push_str("busy\t1000\thello\nbusy\t1001\twe go now\nbusy\t1002\tgoing home\nbusy\t1003\twent out early\n");
        rows.push_str(&others("going fine thanks"));
        let (_tmp, view) = rowstore_index(&rows);
        let r = ask(&view, "when did they go to the park?");
        assert_eq!(r.tier, Tier::Relevance, "{r:?}");
        assert_eq!(r.hits.first().map(|h| h.session.id.as_str()), Some("park"), "{r:?}");
    }

    #[test]
    fn a_cased_name_is_found_typed_in_lower_case_or_as_written() {
        let (_tmp, view) = rowstore_index("s1\t1000\tpushed the fix to GitHub and watched LeBron\ns2\t2000\tthe hub of git in the city\n");
        let search = |q: &str| view.search(&SearchRequest { query: q.to_string(), limit: 5, ..SearchRequest::default() }).expect("search");
        for q in ["github", "GitHub", "lebron", "LeBron"] {
            let r = search(q);
            assert_eq!(r.tier, Tier::Exact, "{q}: {r:?}");
            assert_eq!(r.hits.iter().map(|h| h.session.id.as_str()).collect::<Vec<_>>(), ["s1"], "{q}");
        }
    }

    #[test]
    fn irregular_forms_are_word_forms_too() {
        let (_tmp, view) =
            rowstore_index("s1\t1000\twe went camping by the lake and bought a tent\ns2\t2000\tthe camping gear list is long\n");
        let search = |q: &str| view.search(&SearchRequest { query: q.to_string(), limit: 5, ..SearchRequest::default() }).expect("search");
        // As keywords, in the stemmed tier; as a question, in the relevance tier.
        let r = search("go camping");
        assert_eq!(r.tier, Tier::Stemmed, "{r:?}");
        assert_eq!(r.hits.first().map(|h| h.session.id.as_str()), Some("s1"));
        let r = search("when did we go camping?");
        assert_eq!(r.tier, Tier::Relevance, "{r:?}");
        assert_eq!(r.hits.first().map(|h| h.session.id.as_str()), Some("s1"));
        // Past to present as well, and in the relevance tier's account of the match.
        let r = search("buy tent shop");
        assert_eq!(r.tier, Tier::Relevance, "{r:?}");
        assert_eq!(r.hits.first().map(|h| h.session.id.as_str()), Some("s1"));
        assert_eq!((r.matched.as_slice(), r.dropped.as_slice()), (&["buy".to_string(), "tent".to_string()][..], &["shop".to_string()][..]));
    }

    #[test]
    fn plain_language_needs_no_stopwords_and_is_ranked_by_relevance() {
        let rows =
            "s1\t1000\twe decided the pool size stays at forty\ns2\t2000\tthe staging pool is small\ns3\t3000\tus writable listens here\n";
        let (_tmp, view) = rowstore_index(rows);
        let search = |q: &str| view.search(&SearchRequest { query: q.to_string(), limit: 5, ..SearchRequest::default() }).expect("search");
        let r = search("what did we decide about the pool size?");
        assert_eq!(r.tier, Tier::Relevance, "{r:?}");
        assert_eq!(r.ignored, ["what", "did", "we", "about", "the"]);
        let shown: Vec<(&str, Tier)> = r.hits.iter().map(|h| (h.session.id.as_str(), h.tier)).collect();
        // The session that holds every word first; the one sharing only `pool` after it.
        assert_eq!(shown, [("s1", Tier::Relevance), ("s2", Tier::Relevance)]);
        // A prompt a hook searches with is plain language too; the same words typed
        // as a search are keywords, and a pasted line is found as it stands.
        let prompt = "settle the size of the pool for staging";
        let r = view.search(&SearchRequest { query: prompt.into(), limit: 5, prose: true, ..SearchRequest::default() }).expect("search");
        assert_eq!(r.tier, Tier::Relevance, "{r:?}");
        assert_eq!(r.ignored, ["the", "of", "for"]);
        let r = search("we decided the pool size stays at forty");
        assert_eq!((r.tier, r.hits.len()), (Tier::Exact, 1), "{r:?}");
        // Keywords keep the strict reading: `us` was typed to match.
        let r = search("us writable");
        assert_eq!((r.tier, r.hits.len()), (Tier::Exact, 1));
        assert!(r.ignored.is_empty());
    }

    #[test]
    fn a_question_frame_need_not_match_but_the_same_word_as_a_keyword_must() {
        let rows = "s1\t1000\twe baked croissants and eclairs for the pastries stall\ns2\t2000\tthe type error in the pastries parser\n";
        let (_tmp, view) = rowstore_index(rows);
        let search = |q: &str| view.search(&SearchRequest { query: q.to_string(), limit: 5, ..SearchRequest::default() }).expect("search");
        let r = search("what kind of pastries did we bake?");
        assert_eq!(r.tier, Tier::Relevance, "{r:?}");
        assert!(r.ignored.contains(&"kind".to_string()), "{:?}", r.ignored);
        assert_eq!(r.hits.first().map(|h| h.session.id.as_str()), Some("s1"));
        // Not before `of`, or not in a question, `type` is a word to match.
        let r = search("what type error did the parser raise?");
        assert!(!r.ignored.contains(&"type".to_string()), "{:?}", r.ignored);
        assert_eq!(r.hits.first().map(|h| h.session.id.as_str()), Some("s2"));
        let r = search("type of pastries");
        assert!(r.ignored.is_empty() && r.matched.contains(&"type".to_string()), "{r:?}");
        assert_eq!(r.hits.first().map(|h| h.session.id.as_str()), Some("s2"));
    }

    #[test]
    fn the_relevance_tier_says_what_carried_the_match() {
        let (_tmp, view) = rowstore_index("s1\t1000\tthe nightly workflow timed out\ns2\t2000\tlunch\n");
        let r = view
            .search(&SearchRequest { query: "nightly workflow kubernetes".into(), limit: 5, ..SearchRequest::default() })
            .expect("search");
        assert_eq!(r.tier, Tier::Relevance);
        assert_eq!(r.matched, ["nightly", "workflow"]);
        assert_eq!(r.dropped, ["kubernetes"]);
    }

    #[test]
    fn a_long_turn_with_more_of_the_words_beats_a_short_echo_of_one() {
        // Neither turn holds every word, so the relevance tier answers. By the index's
        // BM25 (b = 0.75) the one-word turn outscores the long turn holding three of
        // the four words; rescored with b = 0.2 the long turn comes first.
        let long = "the pottery place up the hill has a studio for rent and my sister painted a vase there last spring";
        // Each session opens with a greeting, so neither title holds a word asked for;
        // other sessions keep the words rare.
        let mut rows = format!("short\t1000\thello\nshort\t1001\tkiln\nlong\t1000\thello\nlong\t1001\t{long}\n");
        rows.push_str(&others("ok thanks"));
        let (_tmp, view) = rowstore_index(&rows);
        let r = ask(&view, "pottery studio vase kiln?");
        assert_eq!(r.tier, Tier::Relevance, "{r:?}");
        let ids: Vec<&str> = r.hits.iter().map(|h| h.session.id.as_str()).collect();
        assert_eq!(ids, ["long", "short"]);
    }

    #[test]
    fn clauses_split_words_and_keep_phrases() {
        let c = parse_clauses(r#"jwt "refresh token" getUserProfile"#);
        let parts: Vec<Vec<String>> = c.iter().map(|c| c.parts.clone()).collect();
        assert_eq!(
            parts,
            vec![vec!["jwt".to_string()], vec!["refresh".into(), "token".into()], vec!["get".into(), "user".into(), "profile".into()]]
        );
    }

    #[test]
    fn a_named_day_counts_the_week_after_it_and_a_month_the_month_after() {
        let at = |y, m, d| {
            let ms = chrono::NaiveDate::from_ymd_opt(y, m, d).and_then(|d| d.and_hms_opt(12, 0, 0)).map(|t| t.and_utc().timestamp_millis());
            Some(Timestamp(ms.expect("a date")))
        };
        let day = Period { year: Some(2023), month: Some(12), day: Some(4) };
        assert_eq!(day.closeness(at(2023, 12, 4)), 1.0);
        assert_eq!(day.closeness(at(2023, 12, 9)), 1.0);
        assert_eq!(day.closeness(at(2023, 12, 26)), 0.3);
        assert_eq!(day.closeness(at(2023, 12, 3)), 0.0);
        let month = Period { year: Some(2023), month: Some(11), day: None };
        assert_eq!(month.closeness(at(2023, 11, 30)), 1.0);
        assert_eq!(month.closeness(at(2023, 12, 26)), 0.5);
        assert_eq!(month.closeness(at(2024, 1, 5)), 0.0);
    }

    #[test]
    fn queries_name_periods() {
        let p = |y, m, d| Period { year: y, month: m, day: d };
        assert_eq!(named_periods("When did Melanie go camping in June?"), vec![p(None, Some(6), None)]);
        assert_eq!(named_periods("painting on October 13, 2023"), vec![p(Some(2023), Some(10), Some(13))]);
        assert_eq!(named_periods("found on 1 February, 2023"), vec![p(Some(2023), Some(2), Some(1))]);
        assert_eq!(named_periods("watched on 8th December, 2023"), vec![p(Some(2023), Some(12), Some(8))]);
        assert_eq!(named_periods("on December 1st"), vec![p(None, Some(12), Some(1))]);
        assert_eq!(named_periods("the beach in 2023"), vec![p(Some(2023), None, None)]);
        assert_eq!(named_periods("may I ask about pgbouncer port 6432 exit 2048"), vec![]);
        assert_eq!(named_periods("In May we moved"), vec![p(None, Some(5), None)]);
    }

    #[test]
    fn stopwords_are_sorted_for_binary_search() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(is_stopword("the") && is_stopword("which") && !is_stopword("port"));
    }

    #[test]
    fn session_score_rewards_repeated_matches_with_decay() {
        let a = |s: f32| (s, DocAddress::new(0, 0));
        let once = session_score(&[a(2.0)], 0.0);
        let twice = session_score(&[a(2.0), a(1.0)], 0.0);
        let many = session_score(&[a(2.0), a(1.0), a(1.0), a(1.0), a(1.0), a(1.0), a(1.0)], 0.0);
        assert!(once < twice && twice < many);
        // Breadth never outweighs a clearly better single turn.
        assert!(many < session_score(&[a(3.0)], 0.0));
        assert_eq!(session_score(&[], 0.0), 0.0);
    }

    #[test]
    fn snippet_centres_on_the_cluster() {
        let text = "alpha beta gamma. Much later the pgbouncer pool refused connections under load, so we raised pool_size.";
        let terms: HashSet<String> = ["pgbouncer", "refused"].iter().map(|s| s.to_string()).collect();
        let s = snippet(text, &terms, false).unwrap();
        assert!(s.contains("pgbouncer pool refused"), "{s}");
    }
}

//! Search: words AND, quoted phrases contiguous, filters, and three tiers tried in
//! order — `exact`, then `fuzzy` (edit distance 1 for words of 4–7 chars, 2 for
//! longer), then `relevance` (sessions matching most of the words, naming the ones
//! dropped). Hits are turns grouped into sessions: BM25 of the best turns, a bounded
//! boost for user turns and title matches, and a gentle recency prior.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use tantivy::collector::TopDocs;
use tantivy::columnar::Column;
use tantivy::query::{BooleanQuery, FuzzyTermQuery, Occur, PhraseQuery, Query, RangeQuery, TermQuery};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{DocAddress, Score, Searcher, TantivyDocument, Term};

use super::schema::{KIND_SESSION, KIND_TURN};
use super::tokenizer::{words, Word};
use super::{IndexError, IndexView, SessionMeta};
use crate::model::{Role, Timestamp, Turn};
use crate::text::one_line;

#[derive(Debug, Clone, Default)]
pub struct SearchRequest {
    pub query: String,
    pub harnesses: Vec<String>,
    /// Substring of the session's project.
    pub project: Option<String>,
    pub since: Option<Timestamp>,
    /// `user`, `assistant`, `tool`, `command`, `files`, `edit` (or any role name).
    pub role: Option<String>,
    pub limit: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    Exact,
    Fuzzy,
    Relevance,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Exact => "exact",
            Tier::Fuzzy => "fuzzy",
            Tier::Relevance => "relevance",
        }
    }
}

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
}

#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    pub session: SessionMeta,
    pub score: f32,
    pub snippets: Vec<String>,
    /// The matching turns, best first (at most five).
    pub turns: Vec<Turn>,
}

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

/// Edit distance allowed for a word of this many chars in the fuzzy tier.
fn fuzzy_distance(term: &str) -> u8 {
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

    fn fuzzy_clause(&self, c: &Clause) -> Box<dyn Query> {
        if c.quoted {
            return self.exact_clause(c);
        }
        let parts: Vec<(Occur, Box<dyn Query>)> = c
            .parts
            .iter()
            .map(|p| {
                let d = fuzzy_distance(p);
                let q: Box<dyn Query> = if d == 0 {
                    Box::new(TermQuery::new(self.text_term(p), IndexRecordOption::WithFreqs))
                } else {
                    Box::new(FuzzyTermQuery::new(self.text_term(p), d, true))
                };
                (Occur::Must, q)
            })
            .collect();
        Box::new(BooleanQuery::new(parts))
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
        out
    }

    /// Runs the tiers in order and returns the first that matched anything.
    pub fn search(&self, req: &SearchRequest) -> Result<SearchResults, IndexError> {
        let searcher = self.searcher();
        let clauses = parse_clauses(&req.query);
        let limit = req.limit.max(1);
        if clauses.is_empty() {
            return self.recent(&searcher, req);
        }
        let filters = self.filters(req);
        let with_filters = |q: Box<dyn Query>| -> Box<dyn Query> {
            let mut all = vec![(Occur::Must, q)];
            all.extend(filters.iter().map(|(o, q)| (*o, q.box_clone())));
            if req.role.is_some() {
                all.push((Occur::Must, self.kind_term(KIND_TURN)));
            }
            Box::new(BooleanQuery::new(all))
        };
        let exact: Vec<(Occur, Box<dyn Query>)> = clauses.iter().map(|c| (Occur::Must, self.exact_clause(c))).collect();
        let r = self.grouped(&searcher, &*with_filters(Box::new(BooleanQuery::new(exact))), req, limit, Tier::Exact, &clauses)?;
        if !r.hits.is_empty() {
            return Ok(r);
        }
        if clauses.iter().any(|c| !c.quoted && c.parts.iter().any(|p| fuzzy_distance(p) > 0)) {
            let fuzzy: Vec<(Occur, Box<dyn Query>)> = clauses.iter().map(|c| (Occur::Must, self.fuzzy_clause(c))).collect();
            let r = self.grouped(&searcher, &*with_filters(Box::new(BooleanQuery::new(fuzzy))), req, limit, Tier::Fuzzy, &clauses)?;
            if !r.hits.is_empty() {
                return Ok(r);
            }
        }
        let any: Vec<(Occur, Box<dyn Query>)> = clauses.iter().map(|c| (Occur::Should, self.exact_clause(c))).collect();
        let mut r = self.grouped(&searcher, &*with_filters(Box::new(BooleanQuery::new(any))), req, limit, Tier::Relevance, &clauses)?;
        if let Some(best) = r.hits.first() {
            let mut seen: HashSet<String> = HashSet::new();
            for t in &best.turns {
                for w in words(&searchable_text(t)) {
                    seen.extend(w.parts);
                }
            }
            if let Some(title) = &best.session.title {
                seen.extend(words(title).into_iter().flat_map(|w| w.parts));
            }
            r.dropped = clauses.iter().filter(|c| !c.parts.iter().all(|p| seen.contains(p))).map(|c| c.text.clone()).collect();
        }
        Ok(r)
    }

    /// The most recently updated sessions (a query with only filters).
    fn recent(&self, searcher: &Searcher, req: &SearchRequest) -> Result<SearchResults, IndexError> {
        let mut all: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, self.kind_term(KIND_SESSION))];
        all.extend(self.filters(&SearchRequest { role: None, ..req.clone() }));
        let q = BooleanQuery::new(all);
        let limit = req.limit.max(1);
        let want = if req.project.is_some() { limit * 50 } else { limit };
        let top = searcher
            .search(&q, &TopDocs::with_limit(want).order_by_fast_field::<i64>("time", tantivy::Order::Desc))
            .map_err(|e| IndexError::Query(e.to_string()))?;
        let mut hits = Vec::new();
        for (_, addr) in top {
            let doc: TantivyDocument = searcher.doc(addr).map_err(|e| IndexError::Query(e.to_string()))?;
            let Some(meta) =
                doc.get_first(self.fields.extra).and_then(|v| v.as_str()).and_then(|s| serde_json::from_str::<SessionMeta>(s).ok())
            else {
                continue;
            };
            if !project_matches(&meta, req.project.as_deref()) {
                continue;
            }
            hits.push(Hit { session: meta, score: 0.0, snippets: Vec::new(), turns: Vec::new() });
            if hits.len() == limit {
                break;
            }
        }
        Ok(SearchResults { tier: Tier::Exact, total: hits.len(), capped: false, hits, dropped: Vec::new() })
    }

    /// Collects the best turns for `query`, groups them into sessions and ranks them.
    fn grouped(
        &self,
        searcher: &Searcher,
        query: &dyn Query,
        req: &SearchRequest,
        limit: usize,
        tier: Tier,
        clauses: &[Clause],
    ) -> Result<SearchResults, IndexError> {
        let qerr = |e: tantivy::TantivyError| IndexError::Query(e.to_string());
        let collect = (limit * 40).max(400);
        let top = searcher.search(query, &TopDocs::with_limit(collect).order_by_score()).map_err(qerr)?;
        let capped = top.len() == collect;
        let columns: Vec<Option<Column<u64>>> = searcher.segment_readers().iter().map(|r| r.fast_fields().u64("sid_hash").ok()).collect();

        struct Agg {
            turns: Vec<(Score, DocAddress)>,
            title: Option<DocAddress>,
        }
        let mut groups: HashMap<u64, Agg> = HashMap::new();
        let mut order: Vec<u64> = Vec::new();
        for (score, addr) in &top {
            let Some(h) = columns.get(addr.segment_ord as usize).and_then(|c| c.as_ref()).and_then(|c| c.first(addr.doc_id)) else {
                continue;
            };
            let agg = groups.entry(h).or_insert_with(|| {
                order.push(h);
                Agg { turns: Vec::new(), title: None }
            });
            agg.turns.push((*score, *addr));
        }
        // Separate session documents (title/project matches) from turns.
        let mut ranked: Vec<(f32, u64)> = Vec::with_capacity(groups.len());
        let mut metas: HashMap<u64, SessionMeta> = HashMap::new();
        for h in &order {
            let agg = groups.get_mut(h).expect("grouped above");
            let mut turn_scores: Vec<(Score, DocAddress)> = Vec::new();
            let mut title_score = 0.0f32;
            for (s, addr) in &agg.turns {
                let doc: TantivyDocument = searcher.doc(*addr).map_err(qerr)?;
                let is_session = doc.get_first(self.fields.body).is_none() && doc.get_first(self.fields.seq).is_none();
                if is_session {
                    title_score = title_score.max(*s);
                    agg.title = Some(*addr);
                    if let Some(m) =
                        doc.get_first(self.fields.extra).and_then(|v| v.as_str()).and_then(|s| serde_json::from_str::<SessionMeta>(s).ok())
                    {
                        metas.insert(*h, m);
                    }
                } else {
                    let role_boost = match doc.get_first(self.fields.extra).and_then(|v| v.as_str()) {
                        Some(x) if x.contains("\"role\":\"user\"") => 1.15,
                        _ => 1.0,
                    };
                    turn_scores.push((*s * role_boost, *addr));
                }
                if turn_scores.len() >= 5 && agg.title.is_some() {
                    break;
                }
            }
            turn_scores.sort_by(|a, b| b.0.total_cmp(&a.0));
            let best = turn_scores.first().map_or(0.0, |t| t.0);
            let second = turn_scores.get(1).map_or(0.0, |t| t.0);
            let third = turn_scores.get(2).map_or(0.0, |t| t.0);
            let score = best + 0.3 * second + 0.15 * third + 0.3 * title_score.min(best.max(title_score));
            agg.turns = turn_scores;
            ranked.push((score, *h));
        }
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        let total = ranked.len();

        let now = Timestamp::now();
        let mut scored: Vec<(f32, u64, SessionMeta)> = Vec::new();
        // Look at a few more than asked so the recency prior and filters can reorder.
        let window = if req.project.is_some() { usize::MAX } else { limit * 3 };
        for (score, h) in ranked.into_iter().take(window) {
            let meta = match metas.remove(&h) {
                Some(m) => m,
                None => match self.meta_by_hash(searcher, h)? {
                    Some(m) => m,
                    None => continue,
                },
            };
            if !project_matches(&meta, req.project.as_deref()) {
                continue;
            }
            let age_days = meta.updated.map_or(365.0, |u| ((now.0 - u.0) as f32 / 86_400_000.0).max(0.0));
            let prior = 1.0 + 0.08 * (-age_days / 90.0).exp();
            scored.push((score * prior, h, meta));
            if req.project.is_some() && scored.len() >= limit * 3 {
                break;
            }
        }
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.truncate(limit);

        let query_parts: HashSet<String> = clauses.iter().flat_map(|c| c.parts.iter().cloned()).collect();
        let mut hits = Vec::with_capacity(scored.len());
        for (score, h, meta) in scored {
            let agg = &groups[&h];
            let mut turns = Vec::new();
            for (_, addr) in agg.turns.iter().take(5) {
                let doc: TantivyDocument = searcher.doc(*addr).map_err(qerr)?;
                turns.push(self.turn_from_doc(&doc));
            }
            let snippets: Vec<String> =
                turns.iter().take(3).filter_map(|t| snippet(&searchable_text(t), &query_parts, tier == Tier::Fuzzy)).collect();
            let snippets = if snippets.is_empty() { meta.title.iter().cloned().collect() } else { snippets };
            hits.push(Hit { session: meta, score, snippets, turns });
        }
        Ok(SearchResults { tier, total, capped, hits, dropped: Vec::new() })
    }

    fn meta_by_hash(&self, searcher: &Searcher, h: u64) -> Result<Option<SessionMeta>, IndexError> {
        let q = BooleanQuery::new(vec![
            (Occur::Must, self.kind_term(KIND_SESSION)),
            (Occur::Must, Box::new(TermQuery::new(Term::from_field_u64(self.fields.sid_hash, h), IndexRecordOption::Basic))),
        ]);
        let top = searcher.search(&q, &TopDocs::with_limit(1).order_by_score()).map_err(|e| IndexError::Query(e.to_string()))?;
        let Some((_, addr)) = top.first() else { return Ok(None) };
        let doc: TantivyDocument = searcher.doc(*addr).map_err(|e| IndexError::Query(e.to_string()))?;
        Ok(doc.get_first(self.fields.extra).and_then(|v| v.as_str()).and_then(|s| serde_json::from_str(s).ok()))
    }
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

fn levenshtein(a: &str, b: &str) -> usize {
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn snippet_centres_on_the_cluster() {
        let text = "alpha beta gamma. Much later the pgbouncer pool refused connections under load, so we raised pool_size.";
        let terms: HashSet<String> = ["pgbouncer", "refused"].iter().map(|s| s.to_string()).collect();
        let s = snippet(text, &terms, false).unwrap();
        assert!(s.contains("pgbouncer pool refused"), "{s}");
    }
}

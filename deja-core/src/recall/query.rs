//! The recall questions asked of the index: past fixes for an error, how a tool is
//! run here, which sessions touched a file, which files a topic touched, recurring
//! errors, a project's recent state, a session's digest. Each returns a plain,
//! serializable answer; [`super::render`] turns answers into lines.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde::Serialize;
use tantivy::collector::{DocSetCollector, TopDocs};
use tantivy::query::{BooleanQuery, Occur, PhraseQuery, Query, RangeQuery, TermQuery};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{DocAddress, Searcher, TantivyDocument, Term};

use crate::cancel::Cancel;
use crate::index::bound::cut_at_word;
use crate::index::records::{mentioned_paths, normalize_path, path_terms};
use crate::index::schema::{KIND_ERROR, KIND_FIX, KIND_TURN};
use crate::index::search::{SearchRequest, Tier, MAX_QUERY_BYTES};
use crate::index::tokenizer::words;
use crate::index::{IndexError, IndexView, TurnExtra};
use crate::mining::commands::{command_key, is_inspection, Outcome};
use crate::mining::digest::{best_decisions, digest, outcome_line, Digest};
use crate::mining::fixes::{ErrorEvent, FixPair};
use crate::mining::signature::signatures_of_paste;
use crate::model::{FileAction, Role, SessionMeta, Timestamp, Turn, NOTES_HARNESS};
use crate::redact::{redact, redacted, Redact};

/// How much a note's score is raised over a transcript's (the person's notes only).
pub const NOTE_BOOST: f32 = 1.25;
/// Turn documents read at most for one aggregation (`how`, `orient`).
const MAX_SCAN: usize = 5000;
/// Most error text `fixes` reads (as `deja fix` reads at most this much of stdin): a
/// whole build log fits; of a longer one, its end (see [`bound_paste`]).
pub const MAX_PASTE_BYTES: usize = 1 << 20;

/// The part of an error text `fixes` reads: all of it up to [`MAX_PASTE_BYTES`], else
/// its last lines within that bound — a log ends with the error that stopped it.
pub fn bound_paste(text: &str) -> &str {
    if text.len() <= MAX_PASTE_BYTES {
        return text;
    }
    let mut start = text.len() - MAX_PASTE_BYTES;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    match text[start..].find('\n') {
        Some(i) if i + 1 < text.len() - start => &text[start + i + 1..],
        _ => &text[start..],
    }
}

/// Filters every recall question takes.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    pub harnesses: Vec<String>,
    /// Substring of the session's project (like `deja search --project`).
    pub project: Option<String>,
    pub since: Option<Timestamp>,
    /// The directory the asker works in: its sessions are preferred, not required.
    pub here: Option<String>,
    /// Stops the question between its steps (documents and sessions read, searches
    /// run) with [`IndexError::Cancelled`]; the default never does.
    pub cancel: Cancel,
}

impl Scope {
    fn admits(&self, meta: &SessionMeta, time: Option<Timestamp>) -> bool {
        if !self.harnesses.is_empty() && !self.harnesses.contains(&meta.harness) {
            return false;
        }
        if let Some(p) = &self.project {
            if !meta.project.as_deref().is_some_and(|mp| mp.to_lowercase().contains(&p.to_lowercase())) {
                return false;
            }
        }
        if let Some(since) = self.since {
            if time.or(meta.updated).or(meta.started).is_none_or(|t| t < since) {
                return false;
            }
        }
        true
    }

    fn is_here(&self, meta: &SessionMeta) -> bool {
        self.here.as_deref().is_some_and(|h| project_related(meta.project.as_deref(), h))
    }
}

/// True when a session's project is `dir`, inside it, or one of its parents (other
/// than the filesystem root or a home directory's parent).
pub fn project_related(project: Option<&str>, dir: &str) -> bool {
    let Some(p) = project else { return false };
    let p = normalize_path(p);
    let d = normalize_path(dir);
    if p.is_empty() || d.is_empty() {
        return false;
    }
    let within = |inner: &str, outer: &str| inner == outer || inner.strip_prefix(outer).is_some_and(|r| r.starts_with('/'));
    let deep_enough = |x: &str| x.split('/').filter(|c| !c.is_empty()).count() >= 2;
    within(&p, &d) || (within(&d, &p) && deep_enough(&p))
}

fn qerr(e: tantivy::TantivyError) -> IndexError {
    IndexError::Query(e.to_string())
}

fn term(field: tantivy::schema::Field, text: &str) -> Box<dyn Query> {
    Box::new(TermQuery::new(Term::from_field_text(field, text), IndexRecordOption::Basic))
}

fn stored_str(doc: &TantivyDocument, field: tantivy::schema::Field) -> Option<String> {
    doc.get_first(field).and_then(|v| v.as_str()).map(str::to_string)
}

/// Session metadata looked up once per session.
struct Metas<'a> {
    view: &'a IndexView,
    searcher: &'a Searcher,
    cache: HashMap<String, Option<SessionMeta>>,
}

impl<'a> Metas<'a> {
    fn new(view: &'a IndexView, searcher: &'a Searcher) -> Self {
        Metas { view, searcher, cache: HashMap::new() }
    }

    fn get(&mut self, sid: &str) -> Result<Option<SessionMeta>, IndexError> {
        if let Some(m) = self.cache.get(sid) {
            return Ok(m.clone());
        }
        let m = self.view.session_meta(self.searcher, sid)?;
        self.cache.insert(sid.to_string(), m.clone());
        Ok(m)
    }
}

// ---------------------------------------------------------------- sessions

/// The session a query names by id: the whole id, `<harness>:<id>`, or a unique
/// prefix of at least 6 characters.
pub fn resolve_session(view: &IndexView, q: &str) -> Result<Option<SessionMeta>, IndexError> {
    let q = q.trim();
    // An id is short; a long "id" would only build a large automaton.
    if q.len() < 6
        || q.len() > MAX_ID_BYTES
        || q.contains(char::is_whitespace)
        || !q.chars().all(|c| c.is_ascii_alphanumeric() || "-_:.".contains(c))
    {
        return Ok(None);
    }
    // A prefix match on the raw `sid` terms (`<harness>:<id>`), through the term
    // dictionary rather than by reading every session.
    let escaped = regex::escape(q);
    let pattern = if q.contains(':') { format!("{escaped}.*") } else { format!("[^:]*:{escaped}.*") };
    let f = view.fields;
    let Ok(re) = tantivy::query::RegexQuery::from_pattern(&pattern, f.sid) else { return Ok(None) };
    let searcher = view.searcher();
    let query = BooleanQuery::new(vec![(Occur::Must, term(f.kind, crate::index::schema::KIND_SESSION)), (Occur::Must, Box::new(re))]);
    let mut found: Vec<SessionMeta> = Vec::new();
    for (_, addr) in searcher.search(&query, &TopDocs::with_limit(16).order_by_score()).map_err(qerr)? {
        let doc: TantivyDocument = searcher.doc(addr).map_err(qerr)?;
        if let Some(m) = view.meta_of(&doc) {
            found.push(m);
        }
    }
    if let Some(exact) = found.iter().position(|m| m.id == q || m.key() == q) {
        return Ok(Some(found.swap_remove(exact)));
    }
    Ok(if found.len() == 1 { found.pop() } else { None })
}

/// Longest session id (or `harness:id`) looked up as one.
const MAX_ID_BYTES: usize = 256;

/// `Must` one of these sessions.
fn any_session(f: &crate::index::schema::Fields, sids: &HashSet<String>) -> Box<dyn Query> {
    Box::new(BooleanQuery::new(sids.iter().map(|s| (Occur::Should, term(f.sid, s))).collect()))
}

#[derive(Debug, Clone, Serialize)]
pub struct RecallHit {
    pub session: SessionMeta,
    pub score: f32,
    pub snippets: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RecallAnswer {
    pub tier: Tier,
    /// The query named a session by id.
    pub by_id: bool,
    pub dropped: Vec<String>,
    /// Words of a query too long to search whole that were not searched.
    pub left_out: Vec<String>,
    /// What bounding the query did (see [`crate::index::bound`]).
    pub bounded: Option<String>,
    pub hits: Vec<RecallHit>,
}

/// Searches sessions, with notes ranked a little above transcripts; a session id
/// returns that session.
pub fn recall(view: &IndexView, query: &str, scope: &Scope, limit: usize) -> Result<RecallAnswer, IndexError> {
    recall_as(view, query, scope, limit, false)
}

/// [`recall`] for a prompt an agent was given (a hook's): plain language whatever its
/// wording, ranked as a question is rather than read as keywords.
pub fn recall_prompt(view: &IndexView, prompt: &str, scope: &Scope, limit: usize) -> Result<RecallAnswer, IndexError> {
    recall_as(view, prompt, scope, limit, true)
}

fn recall_as(view: &IndexView, query: &str, scope: &Scope, limit: usize, prose: bool) -> Result<RecallAnswer, IndexError> {
    scope.cancel.check()?;
    if let Some(meta) = resolve_session(view, query)? {
        scope.cancel.check()?;
        let turns = view.session_turns(&meta.key())?;
        let snippets = outcome_line(&turns).into_iter().collect();
        return Ok(RecallAnswer {
            tier: Tier::Exact,
            by_id: true,
            dropped: Vec::new(),
            left_out: Vec::new(),
            bounded: None,
            hits: vec![RecallHit { session: meta, score: 1.0, snippets }],
        });
    }
    let req = SearchRequest {
        query: query.to_string(),
        harnesses: scope.harnesses.clone(),
        project: scope.project.clone(),
        since: scope.since,
        role: None,
        file: None,
        limit: limit.max(1) + 3,
        prose,
        cancel: scope.cancel.clone(),
        deleted_only: false,
    };
    let r = view.search(&req)?;
    let mut hits: Vec<RecallHit> = r
        .hits
        .into_iter()
        .map(|h| {
            // A planted note must not outrank the history it contradicts.
            let boost = if h.session.is_person_note() { NOTE_BOOST } else { 1.0 };
            RecallHit { score: h.score * boost, snippets: h.snippets, session: h.session }
        })
        .collect();
    // Ties as the search breaks them: the session active last, then the id.
    hits.sort_by(|a, b| {
        let when = |h: &RecallHit| h.session.updated.or(h.session.started);
        b.score.total_cmp(&a.score).then(when(b).cmp(&when(a))).then_with(|| a.session.key().cmp(&b.session.key()))
    });
    hits.truncate(limit.max(1));
    Ok(RecallAnswer { tier: r.tier, by_id: false, dropped: r.dropped, left_out: r.left_out, bounded: r.bounded, hits })
}

#[derive(Debug, Clone, Serialize)]
pub struct ContextAnswer {
    pub tier: Tier,
    pub by_id: bool,
    pub session: SessionMeta,
    pub digest: Digest,
}

/// The digest of the session a query names by id, else of the best search hit.
pub fn context(view: &IndexView, query: &str, scope: &Scope) -> Result<Option<ContextAnswer>, IndexError> {
    scope.cancel.check()?;
    let (meta, tier, by_id) = match resolve_session(view, query)? {
        Some(m) => (m, Tier::Exact, true),
        None => {
            let r = recall(view, query, scope, 1)?;
            match r.hits.into_iter().next() {
                Some(h) => (h.session, r.tier, false),
                None => return Ok(None),
            }
        }
    };
    scope.cancel.check()?;
    let turns = view.session_turns(&meta.key())?;
    Ok(Some(ContextAnswer { tier, by_id, digest: digest(&turns), session: meta }))
}

/// The sessions of the project `dir` (see [`project_related`]), most recently
/// updated first, at most `limit`, found through the session documents' project terms.
pub fn project_sessions(view: &IndexView, dir: &str, scope: &Scope, limit: usize) -> Result<Vec<SessionMeta>, IndexError> {
    scope.cancel.check()?;
    let f = view.fields;
    let norm = normalize_path(dir);
    if norm.is_empty() {
        return Ok(Vec::new());
    }
    let mut any: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Should, term(f.path, &format!("^{norm}")))];
    for ancestor in crate::index::records::path_prefixes(&norm) {
        if ancestor != norm && ancestor.split('/').filter(|c| !c.is_empty()).count() >= 2 {
            any.push((Occur::Should, term(f.path, &format!("={ancestor}"))));
        }
    }
    let q = BooleanQuery::new(vec![
        (Occur::Must, term(f.kind, crate::index::schema::KIND_SESSION)),
        (Occur::Must, Box::new(BooleanQuery::new(any))),
    ]);
    let searcher = view.searcher();
    let top = searcher
        .search(&q, &TopDocs::with_limit(limit.max(1) * 4).order_by_fast_field::<i64>("time", tantivy::Order::Desc))
        .map_err(qerr)?;
    let mut out = Vec::new();
    for (_, addr) in top {
        scope.cancel.check()?;
        let doc: TantivyDocument = searcher.doc(addr).map_err(qerr)?;
        let Some(m) = view.meta_of(&doc) else { continue };
        if project_related(m.project.as_deref(), dir) && scope.admits(&m, None) {
            out.push(m);
        }
    }
    out.sort_by(|a, b| b.updated.or(b.started).cmp(&a.updated.or(a.started)).then_with(|| a.key().cmp(&b.key())));
    out.truncate(limit.max(1));
    Ok(out)
}

/// The most recently updated transcript (not a note) of the project `dir`.
pub fn latest_session(view: &IndexView, dir: &str, scope: &Scope) -> Result<Option<ContextAnswer>, IndexError> {
    let sessions = project_sessions(view, dir, scope, 64)?;
    let Some(meta) = sessions.into_iter().find(|m| m.harness != NOTES_HARNESS) else { return Ok(None) };
    scope.cancel.check()?;
    let turns = view.session_turns(&meta.key())?;
    Ok(Some(ContextAnswer { tier: Tier::Exact, by_id: false, digest: digest(&turns), session: meta }))
}

// ---------------------------------------------------------------- fix

#[derive(Debug, Clone, Serialize)]
pub struct FixHit {
    pub session: SessionMeta,
    pub time: Option<Timestamp>,
    pub fix: FixPair,
    /// The error did not come back later in that session.
    pub held: bool,
    /// The turn where it came back, when it did.
    pub came_back_at: Option<u32>,
    /// The session ran in the asker's project.
    pub here: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct SeenError {
    pub sig: String,
    pub line: String,
    pub occurrences: usize,
    pub sessions: usize,
    pub harnesses: Vec<String>,
    pub last: Option<Timestamp>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FixAnswer {
    pub tier: Tier,
    /// The error lines recognised in the query, with their signatures.
    pub errors: Vec<(String, String)>,
    pub fixes: Vec<FixHit>,
    /// The same error seen without a recorded fix (when no fix matched).
    pub seen: Vec<SeenError>,
}

/// What this machine ran after the same error, and whether it held (see the module
/// doc of [`crate::mining::fixes`]). Exact signature matches first; else fixes whose error
/// line shares most of the query's words (`relevance`).
pub fn fixes(view: &IndexView, error_text: &str, scope: &Scope, limit: usize) -> Result<FixAnswer, IndexError> {
    fixes_within(view, error_text, scope, limit, FIX_SCAN, true)
}

/// The recorded fixes read at most: the most recent of each signature.
const FIX_SCAN: usize = 500;

/// [`fixes`] reading at most `scan` fix records, and the errors seen without a fix
/// only when `with_seen`: what a hook, which shows fixes alone and must answer in tens
/// of milliseconds, asks for.
pub fn fixes_within(
    view: &IndexView,
    error_text: &str,
    scope: &Scope,
    limit: usize,
    scan: usize,
    with_seen: bool,
) -> Result<FixAnswer, IndexError> {
    let error_text = bound_paste(error_text);
    scope.cancel.check()?;
    let searcher = view.searcher();
    let f = view.fields;
    // At most a few error lines (`MAX_ERRORS_PER_OUTPUT`), so the lookups below are bounded.
    let errors = signatures_of_paste(error_text);
    let mut tier = Tier::Exact;
    let mut addrs: Vec<DocAddress> = Vec::new();
    if !errors.is_empty() {
        let sigs: Vec<(Occur, Box<dyn Query>)> = errors.iter().map(|(s, _)| (Occur::Should, term(f.sig, s))).collect();
        let q = BooleanQuery::new(vec![(Occur::Must, term(f.kind, KIND_FIX)), (Occur::Must, Box::new(BooleanQuery::new(sigs)))]);
        addrs = searcher
            .search(&q, &TopDocs::with_limit(scan.max(1)).order_by_fast_field::<i64>("time", tantivy::Order::Desc))
            .map_err(qerr)?
            .into_iter()
            .map(|(_, a)| a)
            .collect();
    }
    // Sorted, so the query's clauses (and the float sums of their scores) come in one order.
    let query_words: BTreeSet<String> = errors.iter().flat_map(|(_, line)| significant_words(line)).collect();
    if addrs.is_empty() && !query_words.is_empty() {
        // Each word and, when no recorded error has it (a typo: `ModuleNotFoundErorr`),
        // the near spellings recorded errors do have.
        let mut forms: Vec<(String, BTreeSet<String>)> = Vec::with_capacity(query_words.len());
        for w in &query_words {
            let mut any = BTreeSet::from([w.clone()]);
            if searcher.doc_freq(&Term::from_field_text(f.work, w)).map_err(qerr)? == 0 {
                any.extend(view.near_terms(&searcher, f.work, w).map_err(qerr)?);
            }
            forms.push((w.clone(), any));
        }
        let every: BTreeSet<&String> = forms.iter().flat_map(|(_, any)| any).collect();
        let any: Vec<(Occur, Box<dyn Query>)> = every
            .iter()
            .map(|w| {
                (Occur::Should, Box::new(TermQuery::new(Term::from_field_text(f.work, w), IndexRecordOption::WithFreqs)) as Box<dyn Query>)
            })
            .collect();
        let q = BooleanQuery::new(vec![(Occur::Must, term(f.kind, KIND_FIX)), (Occur::Must, Box::new(BooleanQuery::new(any)))]);
        let mut corrected = false;
        for (_, addr) in searcher.search(&q, &TopDocs::with_limit(scan.clamp(1, 200)).order_by_score()).map_err(qerr)? {
            scope.cancel.check()?;
            let doc: TantivyDocument = searcher.doc(addr).map_err(qerr)?;
            let line = stored_fix(&doc, &f).map(|p| p.error_line).unwrap_or_default();
            let have: BTreeSet<String> = significant_words(&line).into_iter().collect();
            let as_typed = query_words.intersection(&have).count();
            let shared = forms.iter().filter(|(_, any)| any.iter().any(|w| have.contains(w))).count();
            // Most of the words on both sides: a looser match would be a different error.
            if shared * 10 >= query_words.len() * 7 && shared * 10 >= have.len() * 5 {
                corrected |= shared > as_typed;
                addrs.push(addr);
            }
        }
        tier = if corrected { Tier::Fuzzy } else { Tier::Relevance };
    }
    let mut metas = Metas::new(view, &searcher);
    let mut hits: Vec<FixHit> = Vec::new();
    for addr in addrs {
        // Each fix costs a document read and a search for the error coming back.
        scope.cancel.check()?;
        let doc: TantivyDocument = searcher.doc(addr).map_err(qerr)?;
        let (Some(sid), Some(pair)) = (stored_str(&doc, f.sid), stored_fix(&doc, &f)) else { continue };
        let Some(meta) = metas.get(&sid)? else { continue };
        let time = doc.get_first(f.time).and_then(|v| v.as_i64()).filter(|t| *t != 0).map(Timestamp);
        if !scope.admits(&meta, time) {
            continue;
        }
        let came_back_at = recurrence(view, &searcher, &sid, &pair.sig, pair.fix_seq)?;
        hits.push(FixHit { here: scope.is_here(&meta), held: came_back_at.is_none(), came_back_at, time, fix: pair, session: meta });
    }
    // Ties: the session id, then the fix's turn, not the order the index returned them in.
    hits.sort_by(|a, b| {
        (b.held, b.fix.verified, b.here, b.time)
            .cmp(&(a.held, a.fix.verified, a.here, a.time))
            .then_with(|| a.session.key().cmp(&b.session.key()))
            .then(a.fix.fix_seq.cmp(&b.fix.fix_seq))
    });
    hits.truncate(limit.max(1));
    let seen = if hits.is_empty() && with_seen { seen_errors(view, &searcher, &errors, scope)? } else { Vec::new() };
    // The pasted error lines are echoed back: they get no exemption.
    let errors = errors.into_iter().map(|(sig, line)| (redact(&sig).into_owned(), redact(&line).into_owned())).collect();
    Ok(FixAnswer { tier, errors, fixes: hits, seen })
}

/// A stored error → fix pair, redacted on the way out (its signature, a lookup key,
/// is kept as stored).
fn stored_fix(doc: &TantivyDocument, f: &crate::index::schema::Fields) -> Option<FixPair> {
    doc.get_first(f.extra).and_then(|v| v.as_str()).and_then(|s| serde_json::from_str(s).ok()).map(redacted)
}

/// Lowercased words of a line that identify an error (no numbers, no short words).
fn significant_words(line: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in words(line) {
        for p in w.compound.into_iter().chain(w.parts) {
            if p.chars().count() >= 3 && p.chars().any(char::is_alphabetic) && !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// The first turn after `after` where the error `sig` came back in session `sid`.
fn recurrence(view: &IndexView, searcher: &Searcher, sid: &str, sig: &str, after: u32) -> Result<Option<u32>, IndexError> {
    let f = view.fields;
    let q = BooleanQuery::new(vec![
        (Occur::Must, term(f.kind, KIND_ERROR)),
        (Occur::Must, term(f.sid, sid)),
        (Occur::Must, term(f.sig, sig)),
        (
            Occur::Must,
            Box::new(RangeQuery::new(std::ops::Bound::Excluded(Term::from_field_u64(f.seq, after as u64)), std::ops::Bound::Unbounded)),
        ),
    ]);
    let mut first: Option<u32> = None;
    for addr in searcher.search(&q, &DocSetCollector).map_err(qerr)? {
        let doc: TantivyDocument = searcher.doc(addr).map_err(qerr)?;
        if let Some(seq) = doc.get_first(f.seq).and_then(|v| v.as_u64()) {
            first = Some(first.map_or(seq as u32, |s| s.min(seq as u32)));
        }
    }
    Ok(first)
}

fn seen_errors(view: &IndexView, searcher: &Searcher, errors: &[(String, String)], scope: &Scope) -> Result<Vec<SeenError>, IndexError> {
    let mut out = Vec::new();
    for (sig, line) in errors {
        scope.cancel.check()?;
        let row = error_stats(view, searcher, sig, scope, None)?;
        if row.seen.occurrences > 0 {
            out.push(SeenError { sig: sig.clone(), line: row.line.unwrap_or_else(|| line.clone()), ..row.seen });
        }
    }
    Ok(out)
}

struct ErrorStats {
    seen: SeenError,
    line: Option<String>,
    sids: BTreeSet<String>,
}

/// Occurrences of one signature, optionally only in the sessions `only`.
fn error_stats(
    view: &IndexView,
    searcher: &Searcher,
    sig: &str,
    scope: &Scope,
    only: Option<&HashSet<String>>,
) -> Result<ErrorStats, IndexError> {
    let f = view.fields;
    let mut clauses = vec![(Occur::Must, term(f.kind, KIND_ERROR)), (Occur::Must, term(f.sig, sig))];
    // Restricted to some sessions, only their documents are read: a signature common
    // across the whole history has thousands.
    if let Some(only) = only {
        clauses.push((Occur::Must, any_session(&f, only)));
    }
    let q = BooleanQuery::new(clauses);
    let mut metas = Metas::new(view, searcher);
    let mut sids: BTreeSet<String> = BTreeSet::new();
    let mut harnesses: BTreeSet<String> = BTreeSet::new();
    let mut occurrences = 0;
    let mut last: Option<Timestamp> = None;
    let mut line: Option<String> = None;
    for addr in searcher.search(&q, &DocSetCollector).map_err(qerr)? {
        // A signature common across the whole history has thousands of documents.
        scope.cancel.check()?;
        let doc: TantivyDocument = searcher.doc(addr).map_err(qerr)?;
        let Some(sid) = stored_str(&doc, f.sid) else { continue };
        if only.is_some_and(|o| !o.contains(&sid)) {
            continue;
        }
        let Some(meta) = metas.get(&sid)? else { continue };
        let time = doc.get_first(f.time).and_then(|v| v.as_i64()).filter(|t| *t != 0).map(Timestamp);
        if !scope.admits(&meta, time) {
            continue;
        }
        occurrences += 1;
        harnesses.insert(meta.harness.clone());
        if time >= last {
            last = time;
            let ev: Option<ErrorEvent> =
                doc.get_first(f.extra).and_then(|v| v.as_str()).and_then(|s| serde_json::from_str(s).ok()).map(redacted);
            line = ev.map(|e| e.line).or(line);
        }
        sids.insert(sid);
    }
    Ok(ErrorStats {
        seen: SeenError {
            sig: redact(sig).into_owned(),
            line: line.clone().unwrap_or_default(),
            occurrences,
            sessions: sids.len(),
            harnesses: harnesses.into_iter().collect(),
            last,
        },
        line,
        sids,
    })
}

// ---------------------------------------------------------------- friction

#[derive(Debug, Clone, Serialize)]
pub struct FrictionRow {
    #[serde(flatten)]
    pub error: SeenError,
    /// Recorded fixes for it.
    pub fixes: usize,
}

/// Errors that hit at least `min_sessions` separate sessions, most widespread first.
pub fn friction(view: &IndexView, scope: &Scope, min_sessions: usize, limit: usize) -> Result<Vec<FrictionRow>, IndexError> {
    friction_in(view, scope, min_sessions, limit, None)
}

fn friction_in(
    view: &IndexView,
    scope: &Scope,
    min_sessions: usize,
    limit: usize,
    only: Option<&HashSet<String>>,
) -> Result<Vec<FrictionRow>, IndexError> {
    scope.cancel.check()?;
    let searcher = view.searcher();
    let f = view.fields;
    // Candidate signatures: with `only`, those of these sessions' errors; else every
    // signature in the term dictionary, whose document count is an upper bound on
    // the sessions (it counts fix documents and deleted ones too).
    let mut freq: HashMap<Vec<u8>, u64> = HashMap::new();
    match only {
        Some(sids) => {
            let q = BooleanQuery::new(vec![(Occur::Must, term(f.kind, KIND_ERROR)), (Occur::Must, any_session(&f, sids))]);
            for (_, addr) in searcher
                .search(&q, &TopDocs::with_limit(MAX_SCAN).order_by_fast_field::<i64>("time", tantivy::Order::Desc))
                .map_err(qerr)?
            {
                scope.cancel.check()?;
                let doc: TantivyDocument = searcher.doc(addr).map_err(qerr)?;
                if let Some(sig) = stored_str(&doc, f.sig) {
                    *freq.entry(sig.into_bytes()).or_insert(0) += 1;
                }
            }
        }
        None => {
            for reader in searcher.segment_readers() {
                let inverted = reader.inverted_index(f.sig).map_err(qerr)?;
                let mut stream = inverted.terms().stream().map_err(|e| IndexError::Query(e.to_string()))?;
                while stream.advance() {
                    *freq.entry(stream.key().to_vec()).or_insert(0) += u64::from(stream.value().doc_freq);
                }
            }
        }
    }
    let mut rows = Vec::new();
    for (sig, n) in freq {
        if n < min_sessions as u64 {
            continue;
        }
        let Ok(sig) = String::from_utf8(sig) else { continue };
        scope.cancel.check()?;
        let stats = error_stats(view, &searcher, &sig, scope, only)?;
        if stats.sids.len() < min_sessions {
            continue;
        }
        let fq = BooleanQuery::new(vec![(Occur::Must, term(f.kind, KIND_FIX)), (Occur::Must, term(f.sig, &sig))]);
        let fixes = searcher.search(&fq, &tantivy::collector::Count).map_err(qerr)?;
        rows.push(FrictionRow { error: stats.seen, fixes });
    }
    // Ties by signature: the candidates come out of a hash map in no fixed order.
    rows.sort_by(|a, b| {
        (b.error.sessions, b.error.occurrences, b.error.last)
            .cmp(&(a.error.sessions, a.error.occurrences, a.error.last))
            .then_with(|| a.error.sig.cmp(&b.error.sig))
    });
    rows.truncate(limit.max(1));
    Ok(rows)
}

// ---------------------------------------------------------------- how

#[derive(Debug, Clone, Serialize)]
pub struct CommandStat {
    pub command: String,
    pub runs: u32,
    pub sessions: usize,
    pub ok: u32,
    pub failed: u32,
    pub last: Option<Timestamp>,
    /// Run in the asker's project.
    pub here: bool,
    pub harnesses: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct HowAnswer {
    pub tier: Tier,
    pub commands: Vec<CommandStat>,
}

/// The real invocations of a tool: command lines containing the words (as a phrase
/// for `exact`, in any order for `relevance`), inspection excluded, grouped, the
/// asker's project first, then the most used.
pub fn how(view: &IndexView, tool: &str, scope: &Scope, limit: usize) -> Result<HowAnswer, IndexError> {
    // A long description of a tool is searched by its rarest words, as a search is.
    let tool = view.bound(&view.searcher(), tool).text;
    let tool = tool.as_str();
    scope.cancel.check()?;
    let parts: Vec<String> = words(tool).into_iter().flat_map(|w| w.parts).collect();
    if parts.is_empty() {
        return Ok(HowAnswer { tier: Tier::Exact, commands: Vec::new() });
    }
    let f = view.fields;
    let work_term = |p: &str| Term::from_field_text(f.work, p);
    let phrase: Box<dyn Query> = if parts.len() == 1 {
        Box::new(TermQuery::new(work_term(&parts[0]), IndexRecordOption::Basic))
    } else {
        Box::new(PhraseQuery::new(parts.iter().map(|p| work_term(p)).collect()))
    };
    let all: Vec<(Occur, Box<dyn Query>)> =
        parts.iter().map(|p| (Occur::Must, Box::new(TermQuery::new(work_term(p), IndexRecordOption::Basic)) as Box<dyn Query>)).collect();
    let mut tiers: Vec<(Tier, Box<dyn Query>)> = vec![(Tier::Exact, phrase)];
    // A word no command line has is read as a typo (`cargo tset`): each such word
    // widened to the near spellings the command lines do have, all words still needed.
    let searcher = view.searcher();
    let mut widened = false;
    let mut near: Vec<(Occur, Box<dyn Query>)> = Vec::with_capacity(parts.len());
    for p in &parts {
        let exact: Box<dyn Query> = Box::new(TermQuery::new(work_term(p), IndexRecordOption::Basic));
        if searcher.doc_freq(&work_term(p)).map_err(qerr)? > 0 {
            near.push((Occur::Must, exact));
            continue;
        }
        let spellings = view.near_terms(&searcher, f.work, p).map_err(qerr)?;
        if spellings.is_empty() {
            near.push((Occur::Must, exact));
            continue;
        }
        widened = true;
        let any =
            spellings.iter().map(|t| (Occur::Should, Box::new(TermQuery::new(work_term(t), IndexRecordOption::Basic)) as Box<dyn Query>));
        near.push((Occur::Must, Box::new(BooleanQuery::new(any.collect()))));
    }
    if widened {
        tiers.push((Tier::Fuzzy, Box::new(BooleanQuery::new(near))));
    }
    if parts.len() > 1 {
        tiers.push((Tier::Relevance, Box::new(BooleanQuery::new(all))));
    }
    for (tier, q) in tiers {
        scope.cancel.check()?;
        let commands = command_stats(view, q, scope, limit, None)?;
        if !commands.is_empty() {
            return Ok(HowAnswer { tier, commands });
        }
    }
    Ok(HowAnswer { tier: Tier::Relevance, commands: Vec::new() })
}

/// Groups the commands of the turns matching `q` (most recent [`MAX_SCAN`]).
fn command_stats(
    view: &IndexView,
    q: Box<dyn Query>,
    scope: &Scope,
    limit: usize,
    only: Option<&HashSet<String>>,
) -> Result<Vec<CommandStat>, IndexError> {
    let searcher = view.searcher();
    let f = view.fields;
    let mut clauses = vec![(Occur::Must, q), (Occur::Must, term(f.kind, KIND_TURN)), (Occur::Must, term(f.role, "command"))];
    if let Some(only) = only {
        clauses.push((Occur::Must, any_session(&f, only)));
    }
    let q = BooleanQuery::new(clauses);
    let top = searcher.search(&q, &TopDocs::with_limit(MAX_SCAN).order_by_fast_field::<i64>("time", tantivy::Order::Desc)).map_err(qerr)?;
    let mut metas = Metas::new(view, &searcher);
    struct Acc {
        stat: CommandStat,
        sids: HashSet<String>,
        harnesses: BTreeSet<String>,
    }
    let mut groups: HashMap<String, Acc> = HashMap::new();
    for (time, addr) in top {
        scope.cancel.check()?;
        let doc: TantivyDocument = searcher.doc(addr).map_err(qerr)?;
        let Some(sid) = stored_str(&doc, f.sid) else { continue };
        if only.is_some_and(|o| !o.contains(&sid)) {
            continue;
        }
        let extra: TurnExtra = stored_str(&doc, f.extra).and_then(|s| serde_json::from_str(&s).ok()).unwrap_or_default();
        let Some(mut tool) = extra.tool else { continue };
        tool.command.redact_in_place();
        let Some(cmd) = tool.command.as_deref().filter(|c| !c.contains('\n') && !is_inspection(c)) else { continue };
        let Some(meta) = metas.get(&sid)? else { continue };
        let time = time.filter(|t| *t != 0).map(Timestamp);
        if !scope.admits(&meta, time) {
            continue;
        }
        let key = command_key(cmd);
        let acc = groups.entry(key.clone()).or_insert_with(|| Acc {
            stat: CommandStat { command: key, runs: 0, sessions: 0, ok: 0, failed: 0, last: None, here: false, harnesses: Vec::new() },
            sids: HashSet::new(),
            harnesses: BTreeSet::new(),
        });
        acc.stat.runs += 1;
        match Outcome::of(&tool) {
            Outcome::Ok => acc.stat.ok += 1,
            Outcome::Failed => acc.stat.failed += 1,
            Outcome::Unknown => {}
        }
        acc.stat.last = acc.stat.last.max(time);
        acc.stat.here |= scope.is_here(&meta);
        acc.harnesses.insert(meta.harness.clone());
        acc.sids.insert(sid);
    }
    let mut stats: Vec<CommandStat> = groups
        .into_values()
        .map(|mut a| {
            a.stat.sessions = a.sids.len();
            a.stat.harnesses = a.harnesses.into_iter().collect();
            a.stat
        })
        .collect();
    // Ties by the command itself: the groups come out of a hash map in no fixed order.
    stats.sort_by(|a, b| {
        (b.here, b.ok > 0 || b.failed == 0, b.sessions, b.runs, b.last)
            .cmp(&(a.here, a.ok > 0 || a.failed == 0, a.sessions, a.runs, a.last))
            .then_with(|| a.command.cmp(&b.command))
    });
    stats.truncate(limit.max(1));
    Ok(stats)
}

// ---------------------------------------------------------------- blame

#[derive(Debug, Clone, Serialize)]
pub struct BlameHit {
    pub session: SessionMeta,
    /// The path as the session touched or named it.
    pub path: String,
    /// `edit`, `write`, `delete`, `read` or `discussed`.
    pub action: &'static str,
    pub touches: u32,
    /// Components of the query the match covered (a full-path match is the most).
    pub specificity: usize,
    pub last: Option<Timestamp>,
    pub decision: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct BlameAnswer {
    pub tier: Tier,
    /// The path looked for, as normalized (absolute when resolved against `here`).
    pub path: String,
    pub hits: Vec<BlameHit>,
}

/// Sessions that edited, read or discussed a file — absolute, relative (resolved
/// against `scope.here`) or bare name — the most specific match first, then edits
/// before reads before mentions, then the most recent.
pub fn blame(view: &IndexView, path: &str, scope: &Scope, limit: usize) -> Result<BlameAnswer, IndexError> {
    blame_within(view, path, scope, limit, MAX_SCAN)
}

/// [`blame`] reading at most `scan` turns that touched the file (the most recent
/// first): a bare `src/main.rs` is touched in thousands, more than a hook can read.
pub fn blame_within(view: &IndexView, path: &str, scope: &Scope, limit: usize, scan: usize) -> Result<BlameAnswer, IndexError> {
    // A path is never this long; of a paste, its start is what names a file.
    let path = cut_at_word(path, MAX_QUERY_BYTES);
    scope.cancel.check()?;
    let answer = blame_path(view, path, scope, limit, scan)?;
    if !answer.hits.is_empty() {
        return Ok(answer);
    }
    // No file of that name: read the name as a typo (`src/mian.rs`) and look for the
    // nearest name the history has, in the same directory as given.
    let given = normalize_path(path);
    let (dir, name) = match given.rfind('/') {
        Some(i) => given.split_at(i + 1),
        None => ("", given.as_str()),
    };
    let searcher = view.searcher();
    let f = view.fields;
    let mut best: Option<(usize, std::cmp::Reverse<u64>, String)> = None;
    for t in view.near_terms(&searcher, f.path, name).map_err(qerr)? {
        // Only bare names: suffixes with a directory and project terms are other keys.
        if t.contains('/') || t.starts_with(['=', '^']) {
            continue;
        }
        let freq = searcher.doc_freq(&Term::from_field_text(f.path, &t)).map_err(qerr)?;
        let key = (crate::index::search::levenshtein(name, &t), std::cmp::Reverse(freq), t);
        if best.as_ref().is_none_or(|b| key < *b) {
            best = Some(key);
        }
    }
    let Some((_, _, name)) = best else { return Ok(answer) };
    let mut near = blame_path(view, &format!("{dir}{name}"), scope, limit, scan)?;
    if near.hits.is_empty() {
        return Ok(answer);
    }
    near.tier = Tier::Fuzzy;
    Ok(near)
}

/// [`blame_within`] for the path as given.
fn blame_path(view: &IndexView, path: &str, scope: &Scope, limit: usize, scan: usize) -> Result<BlameAnswer, IndexError> {
    let searcher = view.searcher();
    let f = view.fields;
    let given = normalize_path(path);
    let absolute = if given.starts_with('/') || given.chars().nth(1) == Some(':') {
        Some(given.clone())
    } else {
        scope.here.as_deref().filter(|_| given.contains('/')).map(|h| normalize_path(&format!("{}/{}", h.trim_end_matches('/'), given)))
    };
    let given_parts = given.split('/').filter(|c| !c.is_empty() && *c != ".").count();
    // Terms from most to least specific: the absolute path, then the suffixes.
    let mut terms: Vec<(String, usize)> = Vec::new();
    if let Some(abs) = &absolute {
        terms.push((abs.clone(), usize::MAX));
    }
    let suffixes = path_terms(&given);
    for t in suffixes.iter().rev() {
        let n = t.split('/').filter(|c| !c.is_empty()).count();
        if !terms.iter().any(|(x, _)| x == t) {
            terms.push((t.clone(), n));
        }
    }
    let basename = suffixes.first().cloned().unwrap_or_default();
    if basename.is_empty() {
        return Ok(BlameAnswer { tier: Tier::Exact, path: given, hits: Vec::new() });
    }

    struct Acc {
        path: String,
        action: FileAction,
        touches: u32,
        specificity: usize,
        last: Option<Timestamp>,
        discussed: bool,
    }
    let mut by_sid: HashMap<String, Acc> = HashMap::new();
    let mut metas = Metas::new(view, &searcher);
    let mut scanned = 0usize;
    for (t, spec) in &terms {
        let q = BooleanQuery::new(vec![(Occur::Must, term(f.kind, KIND_TURN)), (Occur::Must, term(f.path, t))]);
        let top = searcher
            .search(&q, &TopDocs::with_limit((scan / 4).max(1)).order_by_fast_field::<i64>("time", tantivy::Order::Desc))
            .map_err(qerr)?;
        for (time, addr) in top {
            scanned += 1;
            if scanned > scan {
                break;
            }
            scope.cancel.check()?;
            let doc: TantivyDocument = searcher.doc(addr).map_err(qerr)?;
            let Some(sid) = stored_str(&doc, f.sid) else { continue };
            let turn = view.turn_from_doc(&doc);
            let touched: Vec<(String, FileAction)> = turn
                .files
                .iter()
                .map(|x| (x.path.clone(), x.action))
                .chain(turn.edit.iter().map(|e| (e.path.clone(), FileAction::Edit)))
                .collect();
            let names = |p: &String| path_terms(p).contains(t) || normalize_path(p) == *t;
            let time = time.filter(|t| *t != 0).map(Timestamp);
            let Some((p, action)) = touched.into_iter().filter(|(p, _)| names(p)).max_by_key(|(_, a)| action_rank(*a)) else {
                // Not touched but named in the output: a compiler or test run pointed
                // at the file, so the session discussed it.
                if let Some(p) = mentioned_paths(&turn.text).into_iter().find(names) {
                    let acc = by_sid.entry(sid).or_insert(Acc {
                        path: p.clone(),
                        action: FileAction::Read,
                        touches: 0,
                        specificity: *spec,
                        last: None,
                        discussed: true,
                    });
                    if acc.discussed && (*spec > acc.specificity || (*spec == acc.specificity && p < acc.path)) {
                        acc.specificity = *spec;
                        acc.path = p;
                    }
                    acc.last = acc.last.max(time);
                }
                continue;
            };
            let acc =
                by_sid.entry(sid).or_insert(Acc { path: p.clone(), action, touches: 0, specificity: *spec, last: None, discussed: false });
            // Touching beats being named as closely: a session that so far only
            // discussed the file edited it.
            if acc.discussed && *spec >= acc.specificity {
                *acc = Acc { path: p.clone(), action, touches: 0, specificity: *spec, last: acc.last, discussed: false };
            }
            // Of the spellings at the best specificity, the least: turns of equal time
            // come in the index's order, which must not pick the one shown.
            if *spec > acc.specificity || (*spec == acc.specificity && p < acc.path) {
                acc.specificity = *spec;
                acc.path = p;
            }
            if acc.specificity == *spec {
                acc.touches += 1;
                if action_rank(action) > action_rank(acc.action) {
                    acc.action = action;
                }
            }
            acc.last = acc.last.max(time);
        }
    }
    // Mentions in what people and models said, for files only talked about.
    let name_parts: Vec<String> = words(&basename).into_iter().flat_map(|w| w.parts).collect();
    if !name_parts.is_empty() {
        let name_q: Box<dyn Query> = if name_parts.len() == 1 {
            term(f.text, &name_parts[0])
        } else {
            Box::new(PhraseQuery::new(name_parts.iter().map(|p| Term::from_field_text(f.text, p)).collect()))
        };
        let speech = BooleanQuery::new(vec![
            (Occur::Should, term(f.role, Role::User.as_str())),
            (Occur::Should, term(f.role, Role::Assistant.as_str())),
        ]);
        let q = BooleanQuery::new(vec![(Occur::Must, name_q), (Occur::Must, Box::new(speech)), (Occur::Must, term(f.kind, KIND_TURN))]);
        let top = searcher
            .search(&q, &TopDocs::with_limit(scan.clamp(1, 400)).order_by_fast_field::<i64>("time", tantivy::Order::Desc))
            .map_err(qerr)?;
        let needle_full = given.clone();
        for (time, addr) in top {
            scope.cancel.check()?;
            let doc: TantivyDocument = searcher.doc(addr).map_err(qerr)?;
            let Some(sid) = stored_str(&doc, f.sid) else { continue };
            let body = view.stored_text(&doc).to_lowercase();
            let spec = if given_parts > 1 && body.contains(&needle_full) {
                given_parts
            } else if body.contains(&basename) {
                1
            } else {
                continue;
            };
            let time = time.filter(|t| *t != 0).map(Timestamp);
            let acc = by_sid.entry(sid).or_insert(Acc {
                path: given.clone(),
                action: FileAction::Read,
                touches: 0,
                specificity: spec,
                last: time,
                discussed: true,
            });
            acc.last = acc.last.max(time);
        }
    }

    // Ranked before any session is read, so only the sessions shown (and those the
    // scope turns away) cost a lookup; ties go to the session id, so the order does
    // not depend on the map's.
    let rank = |acc: &Acc| match (acc.discussed, acc.action) {
        (true, _) => 0,
        (false, FileAction::Read) => 1,
        _ => 2,
    };
    let mut ranked: Vec<(String, Acc)> = by_sid.into_iter().collect();
    ranked.sort_by(|(sa, a), (sb, b)| (b.specificity, rank(b), b.last).cmp(&(a.specificity, rank(a), a.last)).then_with(|| sa.cmp(sb)));
    let mut hits: Vec<BlameHit> = Vec::new();
    for (sid, acc) in ranked {
        if hits.len() >= limit.max(1) {
            break;
        }
        scope.cancel.check()?;
        let Some(meta) = metas.get(&sid)? else { continue };
        if !scope.admits(&meta, acc.last) {
            continue;
        }
        hits.push(BlameHit {
            path: acc.path,
            action: if acc.discussed { "discussed" } else { acc.action.as_str() },
            touches: acc.touches,
            specificity: acc.specificity,
            last: acc.last,
            decision: None,
            session: meta,
        });
    }
    for h in &mut hits {
        scope.cancel.check()?;
        let turns = view.session_turns(&h.session.key())?;
        h.decision = decision_about(&turns, &basename);
    }
    let covered = hits.first().is_none_or(|h| h.specificity >= given_parts);
    Ok(BlameAnswer { tier: if covered { Tier::Exact } else { Tier::Relevance }, path: absolute.unwrap_or(given), hits })
}

fn action_rank(a: FileAction) -> u8 {
    match a {
        FileAction::Read => 0,
        FileAction::Delete => 1,
        FileAction::Edit => 2,
        FileAction::Write => 3,
    }
}

/// The concluding line of a session that names the file, else its best conclusion.
fn decision_about(turns: &[Turn], basename: &str) -> Option<String> {
    let all = best_decisions(turns, 50);
    all.iter().rev().find(|(_, l)| l.to_lowercase().contains(basename)).or(all.last()).map(|(_, l)| l.clone())
}

// ---------------------------------------------------------------- files

#[derive(Debug, Clone, Serialize)]
pub struct FileStat {
    pub path: String,
    pub edits: u32,
    pub reads: u32,
    pub sessions: usize,
    pub last: Option<Timestamp>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FilesAnswer {
    pub tier: Tier,
    /// The sessions the files were taken from.
    pub sessions: Vec<SessionMeta>,
    pub files: Vec<FileStat>,
}

/// The files the sessions about a topic touched: edited ones first, then by how many
/// of those sessions touched them.
pub fn files(view: &IndexView, topic: &str, scope: &Scope, limit: usize) -> Result<FilesAnswer, IndexError> {
    scope.cancel.check()?;
    let r = recall(view, topic, scope, 10)?;
    let mut acc: HashMap<String, (u32, u32, HashSet<String>, Option<Timestamp>)> = HashMap::new();
    let mut sessions = Vec::new();
    for h in r.hits {
        scope.cancel.check()?;
        let sid = h.session.key();
        for t in view.session_turns(&sid)? {
            let touched =
                t.files.iter().map(|x| (x.path.clone(), x.action)).chain(t.edit.iter().map(|e| (e.path.clone(), FileAction::Edit)));
            for (p, a) in touched {
                let e = acc.entry(p).or_insert((0, 0, HashSet::new(), None));
                if a == FileAction::Read {
                    e.1 += 1;
                } else {
                    e.0 += 1;
                }
                e.2.insert(sid.clone());
                e.3 = e.3.max(t.time);
            }
        }
        sessions.push(h.session);
    }
    let mut files: Vec<FileStat> =
        acc.into_iter().map(|(path, (edits, reads, sids, last))| FileStat { path, edits, reads, sessions: sids.len(), last }).collect();
    files.sort_by(|a, b| (b.edits > 0, b.sessions, b.edits + b.reads, &a.path).cmp(&(a.edits > 0, a.sessions, a.edits + a.reads, &b.path)));
    files.truncate(limit.max(1));
    Ok(FilesAnswer { tier: r.tier, sessions, files })
}

// ---------------------------------------------------------------- orient

#[derive(Debug, Clone, Serialize)]
pub struct OrientSession {
    pub session: SessionMeta,
    pub outcome: Option<String>,
    pub decisions: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Orient {
    pub project: String,
    pub sessions: Vec<OrientSession>,
    pub recurring_errors: Vec<FrictionRow>,
    pub commands: Vec<CommandStat>,
    /// The person's own notes (`deja remember`), newest first.
    pub notes: Vec<OrientSession>,
    /// Notes agents wrote through MCP, or of unrecorded origin: shown apart, as unverified.
    pub agent_notes: Vec<OrientSession>,
}

/// Sessions of projects this many most recent are looked at for errors and commands.
const ORIENT_SCAN_SESSIONS: usize = 300;
/// The person's notes `orient` shows at most…
pub const ORIENT_NOTES: usize = 5;
/// …and agents' notes, fewer: whatever an agent was fed can be planted as one, and
/// `orient` is read at the start of every later session in the project.
pub const ORIENT_AGENT_NOTES: usize = 3;

/// A project's recent sessions with their outcome and decisions, its notes, the
/// errors that recur in it, and the commands that work there.
pub fn orient(view: &IndexView, dir: &str, scope: &Scope, limit: usize) -> Result<Orient, IndexError> {
    orient_over(view, dir, scope, limit, ORIENT_SCAN_SESSIONS)
}

/// [`orient`] over the project's `scan` most recent sessions only: what a hook, which
/// must answer in tens of milliseconds, can afford to read.
pub fn orient_over(view: &IndexView, dir: &str, scope: &Scope, limit: usize, scan: usize) -> Result<Orient, IndexError> {
    scope.cancel.check()?;
    let all = project_sessions(view, dir, scope, scan.max(limit))?;
    let (notes, transcripts): (Vec<SessionMeta>, Vec<SessionMeta>) = all.iter().cloned().partition(|m| m.harness == NOTES_HARNESS);
    let mut sessions = Vec::new();
    for meta in transcripts.into_iter().take(limit.max(1)) {
        scope.cancel.check()?;
        let turns = view.session_turns(&meta.key())?;
        let decisions = best_decisions(&turns, 2).into_iter().map(|(_, l)| l).collect();
        sessions.push(OrientSession { outcome: outcome_line(&turns), decisions, session: meta });
    }
    let (notes, agent_notes): (Vec<SessionMeta>, Vec<SessionMeta>) = notes.into_iter().partition(SessionMeta::is_person_note);
    // A note shows as its first line (the renderer cuts it further).
    let shown = |metas: Vec<SessionMeta>, n: usize| -> Vec<OrientSession> {
        metas
            .into_iter()
            .take(n)
            .map(|meta| {
                let outcome = meta.title.clone();
                OrientSession { session: meta, outcome, decisions: Vec::new() }
            })
            .collect()
    };
    let notes = shown(notes, ORIENT_NOTES);
    let agent_notes = shown(agent_notes, ORIENT_AGENT_NOTES);
    let sids: HashSet<String> = all.iter().map(SessionMeta::key).collect();
    let local = Scope { here: Some(dir.to_string()), ..scope.clone() };
    let recurring_errors = if sids.is_empty() { Vec::new() } else { friction_in(view, &local, 2, 5, Some(&sids))? };
    let commands = if sids.is_empty() {
        Vec::new()
    } else {
        let ok_only: Box<dyn Query> = term(view.fields.role, "command");
        command_stats(view, ok_only, &local, 40, Some(&sids))?.into_iter().filter(|c| c.ok > 0).take(8).collect()
    };
    Ok(Orient { project: dir.to_string(), sessions, recurring_errors, commands, notes, agent_notes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_question_answers_an_oversized_query() {
        let (_tmp, view) = crate::index::search::rowstore_index("s1\t1000\tpgbouncer refused connections\n");
        let scope = Scope::default();
        let long = "pgbouncer ".repeat(MAX_QUERY_BYTES / 10 + 1);
        let r = recall(&view, &long, &scope, 5).expect("recall");
        assert_eq!(r.hits.len(), 1);
        assert!(r.bounded.is_some());
        assert!(context(&view, &long, &scope).expect("context").is_some());
        assert!(how(&view, &long, &scope, 5).is_ok());
        assert!(blame(&view, &long, &scope, 5).is_ok());
        assert!(!files(&view, &long, &scope, 5).expect("files").sessions.is_empty());
        // A hundred words of a question: its rare word carries it.
        let question = format!("{} pgbouncer?", "could you tell me what happened with the thing ".repeat(12));
        assert_eq!(recall(&view, &question, &scope, 5).expect("recall").hits.len(), 1);
        // An error text may be a whole build log, up to its own limit.
        assert!(fixes(&view, &long, &scope, 5).is_ok());
        // Beyond its bound, the log's last lines are read.
        let log = "warning: slow\n".repeat(MAX_PASTE_BYTES / 14 + 1) + "error: could not connect\n";
        assert!(fixes(&view, &log, &scope, 5).is_ok());
        let tail = bound_paste(&log);
        assert!(tail.len() <= MAX_PASTE_BYTES && tail.starts_with("warning") && tail.ends_with("error: could not connect\n"));
        // A long single token is no session id to look up.
        assert!(resolve_session(&view, &"a".repeat(MAX_ID_BYTES + 1)).expect("lookup").is_none());
        assert_eq!(recall(&view, "pgbouncer", &scope, 5).expect("recall").hits.len(), 1);
    }

    #[test]
    fn every_question_stops_when_its_token_is_cancelled() {
        let rows: String = (0..20).map(|i| format!("s{i}\t{}\tpgbouncer refused connections, attempt {i}\n", 1000 + i)).collect();
        let (_tmp, view) = crate::index::search::rowstore_index(&rows);
        let stopped = Scope { cancel: Cancel::after_checks(0), ..Scope::default() };
        let cancelled = |r: Result<(), IndexError>, what: &str| {
            assert!(matches!(r, Err(IndexError::Cancelled(_))), "{what}: {r:?}");
        };
        cancelled(recall(&view, "pgbouncer", &stopped, 5).map(drop), "recall");
        cancelled(context(&view, "pgbouncer", &stopped).map(drop), "context");
        cancelled(how(&view, "pgbouncer", &stopped, 5).map(drop), "how");
        cancelled(blame(&view, "src/pool.rs", &stopped, 5).map(drop), "blame");
        cancelled(files(&view, "pgbouncer", &stopped, 5).map(drop), "files");
        cancelled(fixes(&view, "error: connection refused", &stopped, 5).map(drop), "fix");
        cancelled(friction(&view, &stopped, 2, 5).map(drop), "friction");
        cancelled(orient(&view, "/src/app", &stopped, 5).map(drop), "orient");
        cancelled(latest_session(&view, "/src/app", &stopped).map(drop), "handoff");

        // Stopped mid-way too: recall reads each hit's turns, a step each.
        let counted = Scope { cancel: Cancel::after_checks(usize::MAX), ..Scope::default() };
        assert_eq!(recall(&view, "pgbouncer", &counted, 20).expect("recall").hits.len(), 20);
        let steps = counted.cancel.checks();
        assert!(steps >= 20, "{steps} checks");
        let mid = Scope { cancel: Cancel::after_checks(steps / 2), ..Scope::default() };
        cancelled(recall(&view, "pgbouncer", &mid, 20).map(drop), "recall, half-way");
    }

    #[test]
    fn related_projects_are_the_same_tree() {
        assert!(project_related(Some("/src/app"), "/src/app"));
        assert!(project_related(Some("/src/app/sub"), "/src/app"));
        assert!(project_related(Some("/src/app"), "/src/app/sub/dir"));
        assert!(!project_related(Some("/src/application"), "/src/app"));
        assert!(!project_related(Some("/src"), "/src/app"), "a one-component parent is too broad");
        assert!(!project_related(None, "/src/app"));
    }

    #[test]
    fn significant_words_skip_numbers_and_short_words() {
        assert_eq!(
            significant_words("ModuleNotFoundError: No module named 'psycopg2' at 12"),
            vec!["modulenotfounderror", "module", "not", "found", "error", "named", "psycopg2"]
        );
    }
}

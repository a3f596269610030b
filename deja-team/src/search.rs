//! Team search: the tier ladder of the local search mapped onto PostgreSQL's own
//! full-text and trigram search, run under a deadline.
//!
//! | tier | the local index | here |
//! | --- | --- | --- |
//! | exact | every word as typed | every word (and quoted phrase) as a whole-word, case-insensitive regular expression (`~*`) over the turns the full-text index finds with every word; when those are none, over those the trigram index finds |
//! | stemmed | every word or another form | `to_tsvector('english', text) @@ websearch_to_tsquery('english', q)` (the expression GIN index `turns_fts`) |
//! | fuzzy | typos of words the index has | every word of 3+ letters found as a similar word (`text %> w`, `pg_trgm`'s word similarity, trigram index) |
//! | relevance | the most words shared | any word (`websearch_to_tsquery('english', 'a or b …')`) |
//!
//! The first tier that finds a turn answers, and says which it was. Turns are ranked
//! by `ts_rank_cd` (by word similarity in the fuzzy tier), then by time; they are
//! grouped into sessions in that order, a few turns quoted per session. Row-level
//! security decides which rows a role sees: a search needs no filter of ours for it.
//!
//! A team search must never make deja wait on a server: [`search_within`] and
//! [`show_within`] run on a thread of their own, connect within the deadline, set
//! `statement_timeout` to it, and the caller stops waiting at the deadline whatever the
//! server does (a server that accepts the connection and then says nothing included).

use std::collections::HashMap;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use deja_core::team::{snippet, TeamHit, TeamQuery, TeamResults, TeamSession};
use deja_core::Timestamp;
use postgres::types::ToSql;
use postgres::Client;

use crate::{Error, Target};

/// How many turns a session quotes.
const HITS_PER_SESSION: usize = 3;
/// Characters of a turn quoted around its first matching word.
const SNIPPET: usize = 240;
/// Most turns one tier reads before grouping (a bound on the transfer, not the answer).
const MAX_ROWS: usize = 2000;

/// The word similarity the fuzzy tier asks of a word (`pg_trgm.word_similarity_threshold`).
const FUZZY_THRESHOLD: f32 = 0.5;

/// A turn's English full-text vector. Computed, not stored: written exactly as the
/// schema's expression index `turns_fts` is, so the planner answers `@@` from that index;
/// only the rows a tier finds are parsed again, to rank them.
const TSV: &str = "to_tsvector('english', t.text)";

type Params = Vec<Box<dyn ToSql + Sync>>;

/// One tier's condition and score over `t` (turns), with its parameters from `$first`.
struct TierSql {
    name: &'static str,
    condition: String,
    score: String,
    params: Params,
}

/// The ladder for `words` and `phrases`; a tier with nothing to ask is left out.
fn ladder(query: &str, words: &[String], phrases: &[Vec<String>], first: usize) -> Vec<TierSql> {
    let mut tiers = Vec::new();
    let rank = |n: usize| format!("ts_rank_cd({TSV}, websearch_to_tsquery('english', ${n}))");

    // exact: whole words (and phrases), as typed, case-insensitively.
    let patterns: Vec<String> =
        words.iter().map(|w| format!(r"\m{w}\M")).chain(phrases.iter().map(|p| format!(r"\m{}\M", p.join(r"\W+")))).collect();
    let exact = |params: &mut Params| -> Vec<String> {
        patterns
            .iter()
            .map(|p| {
                params.push(Box::new(p.clone()));
                format!("t.text ~* ${}", first + params.len() - 1)
            })
            .collect()
    };
    // First through the full-text index, for words of ASCII letters, digits and `_`:
    // PostgreSQL's parser reads those as words (or parts of a hyphenated one), so a turn
    // holding each as a word of its own has all their stems. The trigram index alone
    // hands the regular expressions every turn holding the letters anywhere (8 440 rows
    // read to find 3 for `us writable port` on 1.3 M turns: 480 ms; this way 6 rows,
    // 2 ms). The parser keeps a URL, an e-mail address or a path as one token, so a
    // turn with a word only inside one is missed here: when this finds nothing the
    // trigram way below asks again; when it finds something, that turn is not in the
    // answer — the price of the index (docs/team-memory.md).
    let plain = words.iter().all(|w| w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
    if plain && !patterns.is_empty() {
        let mut params: Params = vec![Box::new(query.to_string()), Box::new(words.join(" "))];
        let mut conds = vec![format!("{TSV} @@ plainto_tsquery('english', ${})", first + 1)];
        conds.extend(exact(&mut params));
        tiers.push(TierSql { name: "exact", condition: conds.join(" AND "), score: rank(first), params });
    }
    let mut params: Params = vec![Box::new(query.to_string())];
    let conds = exact(&mut params);
    if !conds.is_empty() {
        tiers.push(TierSql { name: "exact", condition: conds.join(" AND "), score: rank(first), params });
    }

    // stemmed: PostgreSQL's English forms of every word.
    tiers.push(TierSql {
        name: "stemmed",
        condition: format!("{TSV} @@ websearch_to_tsquery('english', ${first})"),
        score: rank(first),
        params: vec![Box::new(query.to_string())],
    });

    // fuzzy: every word long enough to have trigrams, as a similar word.
    let long: Vec<&String> = words.iter().filter(|w| w.chars().count() >= 3).collect();
    if !long.is_empty() {
        let mut params: Params = Vec::new();
        let mut conds = Vec::new();
        let mut score = Vec::new();
        for w in long {
            params.push(Box::new(w.clone()));
            let n = first + params.len() - 1;
            conds.push(format!("t.text %> ${n}"));
            score.push(format!("word_similarity(${n}, t.text)"));
        }
        tiers.push(TierSql { name: "fuzzy", condition: conds.join(" AND "), score: score.join(" + "), params });
    }

    // relevance: any word; `or` is websearch's operator, so that word is left out.
    let any: Vec<&str> = words.iter().map(String::as_str).filter(|w| *w != "or").collect();
    if any.len() > 1 {
        tiers.push(TierSql {
            name: "relevance",
            condition: format!("{TSV} @@ websearch_to_tsquery('english', ${first})"),
            score: rank(first),
            params: vec![Box::new(any.join(" or "))],
        });
    }
    tiers
}

/// Runs the ladder on `client` (whose role's grants decide what it sees).
pub fn search(client: &mut Client, q: &TeamQuery) -> Result<TeamResults, Error> {
    let (words, phrases) = q.terms();
    if words.is_empty() {
        return Ok(TeamResults { tier: "none".into(), sessions: Vec::new() });
    }
    let limit = q.limit.clamp(1, 1000);
    let rows = (limit * 20).min(MAX_ROWS) as i64;
    // The filters, $1–$5; each is off when its parameter is empty.
    let filters = "($1::text IS NULL OR strpos(lower(coalesce(s.project_path, '') || ' ' || s.project), lower($1)) > 0)
         AND (cardinality($2::text[]) = 0 OR s.harness = ANY($2))
         AND (cardinality($3::text[]) = 0 OR t.role = ANY($3))
         AND ($4::float8 IS NULL OR t.time >= to_timestamp($4))
         AND ($5::text IS NULL OR t.machine <> $5)";
    let since = q.since.map(|t| t.0 as f64 / 1000.0);
    // pg_trgm's default (0.6) misses a dropped letter in a short word (`stagng`: 0.57);
    // at 0.5 it does not, and a word sharing a few trigrams by chance still fails (`zebra`).
    client
        .batch_execute(&format!("SET pg_trgm.word_similarity_threshold = {FUZZY_THRESHOLD}"))
        .map_err(Error::sql("setting the fuzzy tier's threshold"))?;
    for tier in ladder(&q.query, &words, &phrases, 6) {
        let sql = format!(
            "SELECT t.machine, t.author::text, t.project, s.project_path, s.harness, s.session, s.title,
                    extract(epoch FROM s.updated)::float8, t.seq, t.role, extract(epoch FROM t.time)::float8,
                    left(t.text, 65536)
             FROM deja.turns t JOIN deja.sessions s ON s.machine = t.machine AND s.session_key = t.session_key
             WHERE {filters} AND ({cond})
             ORDER BY {score} DESC, t.time DESC NULLS LAST, t.machine, t.turn_id
             LIMIT {rows}",
            cond = tier.condition,
            score = tier.score,
        );
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![&q.project, &q.harnesses, &q.roles, &since, &q.not_machine];
        params.extend(tier.params.iter().map(|p| p.as_ref()));
        let found = client.query(&sql, &params).map_err(Error::sql_owned(format!("searching the team store ({} tier)", tier.name)))?;
        if found.is_empty() {
            continue;
        }
        let mut sessions: Vec<TeamSession> = Vec::new();
        let mut at: HashMap<(String, String, String), usize> = HashMap::new();
        for r in &found {
            let machine: String = r.get(0);
            let harness: String = r.get(4);
            let id: String = r.get(5);
            let key = (machine.clone(), harness.clone(), id.clone());
            let i = match at.get(&key) {
                Some(i) => *i,
                None => {
                    if sessions.len() >= limit {
                        continue;
                    }
                    sessions.push(TeamSession {
                        author: r.get(1),
                        machine,
                        project: r.get(2),
                        project_path: r.get(3),
                        harness,
                        id,
                        title: r.get(6),
                        updated: r.get::<_, Option<f64>>(7).and_then(Timestamp::from_secs_f64),
                        hits: Vec::new(),
                    });
                    at.insert(key, sessions.len() - 1);
                    sessions.len() - 1
                }
            };
            let s = &mut sessions[i];
            if s.hits.len() < HITS_PER_SESSION {
                let text: String = r.get(11);
                s.hits.push(TeamHit {
                    seq: r.get::<_, i32>(8).max(0) as u32,
                    role: r.get(9),
                    time: r.get::<_, Option<f64>>(10).and_then(Timestamp::from_secs_f64),
                    text: snippet(&text, &words, SNIPPET),
                });
            }
        }
        return Ok(TeamResults { tier: tier.name.into(), sessions });
    }
    Ok(TeamResults { tier: "none".into(), sessions: Vec::new() })
}

/// The sessions `spec` names — `<machine>/<harness>:<id>`, `<harness>:<id>`, an id, or
/// a prefix of one — with every turn of the one it names when it names one.
pub fn show(client: &mut Client, spec: &str) -> Result<Vec<TeamSession>, Error> {
    let (machine, rest) = match spec.split_once('/') {
        Some((m, r)) if !m.is_empty() && !r.is_empty() => (Some(m.to_string()), r),
        _ => (None, spec),
    };
    let (harness, id) = match rest.split_once(':') {
        Some((h, i)) if !h.is_empty() && !i.is_empty() && h.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') => {
            (Some(h.to_string()), i.to_string())
        }
        _ => (None, rest.to_string()),
    };
    let rows = client
        .query(
            "SELECT machine, author::text, project, project_path, harness, session, title, extract(epoch FROM updated)::float8
             FROM deja.sessions
             WHERE ($1::text IS NULL OR machine = $1) AND ($2::text IS NULL OR harness = $2) AND starts_with(session, $3)
             ORDER BY (session = $3) DESC, updated DESC NULLS LAST, machine, session_key
             LIMIT 11",
            &[&machine, &harness, &id],
        )
        .map_err(Error::sql("looking the session up in the team store"))?;
    let mut found: Vec<TeamSession> = rows
        .iter()
        .map(|r| TeamSession {
            author: r.get(1),
            machine: r.get(0),
            project: r.get(2),
            project_path: r.get(3),
            harness: r.get(4),
            id: r.get(5),
            title: r.get(6),
            updated: r.get::<_, Option<f64>>(7).and_then(Timestamp::from_secs_f64),
            hits: Vec::new(),
        })
        .collect();
    let exact: Vec<usize> = (0..found.len()).filter(|&i| found[i].id == id).collect();
    if exact.len() == 1 {
        found = vec![found.swap_remove(exact[0])];
    }
    if let [one] = found.as_mut_slice() {
        let turns = client
            .query(
                "SELECT seq, role, extract(epoch FROM time)::float8, text FROM deja.turns
                 WHERE machine = $1 AND session_key = $2 ORDER BY seq",
                &[&one.machine, &format!("{}:{}", one.harness, one.id)],
            )
            .map_err(Error::sql("reading the session's turns from the team store"))?;
        one.hits = turns
            .iter()
            .map(|r| TeamHit {
                seq: r.get::<_, i32>(0).max(0) as u32,
                role: r.get(1),
                time: r.get::<_, Option<f64>>(2).and_then(Timestamp::from_secs_f64),
                text: r.get(3),
            })
            .collect();
    }
    Ok(found)
}

/// [`search`] against `target`, answered within `deadline` or not at all
/// ([`Error::Timeout`]); see the module doc.
pub fn search_within(target: &Target, q: TeamQuery, deadline: Duration) -> Result<TeamResults, Error> {
    within(target, deadline, move |c| search(c, &q))
}

/// [`show`] against `target` within `deadline`.
pub fn show_within(target: &Target, spec: String, deadline: Duration) -> Result<Vec<TeamSession>, Error> {
    within(target, deadline, move |c| show(c, &spec))
}

fn within<T: Send + 'static>(
    target: &Target,
    deadline: Duration,
    ask: impl FnOnce(&mut Client) -> Result<T, Error> + Send + 'static,
) -> Result<T, Error> {
    let start = Instant::now();
    let (tx, rx) = mpsc::channel();
    let t = target.clone();
    let ms = deadline.as_millis().max(1);
    // Detached: when the deadline passes first, the thread ends when its connection
    // does (the statement timeout, or the server closing it); nobody waits for it.
    std::thread::Builder::new()
        .name("deja-team-search".into())
        .spawn(move || {
            let run = || -> Result<T, Error> {
                let mut client = t.connect(Some(deadline))?;
                crate::schema::check(&mut client)?;
                client
                    .batch_execute(&format!("SET statement_timeout = {ms}; SET lock_timeout = {ms}"))
                    .map_err(Error::sql("setting the search's deadline"))?;
                ask(&mut client)
            };
            let _ = tx.send(run());
        })
        .map_err(|e| Error::Config(format!("cannot start the team search: {e}")))?;
    match rx.recv_timeout(deadline) {
        Ok(r) => r,
        Err(_) => Err(Error::Timeout { target: target.display(), after: start.elapsed() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ladder_asks_each_tier_its_own_way() {
        let q = TeamQuery { query: "Pool \"staging pool\" db".into(), ..TeamQuery::default() };
        let (w, p) = q.terms();
        let tiers = ladder(&q.query, &w, &p, 6);
        let names: Vec<&str> = tiers.iter().map(|t| t.name).collect();
        assert_eq!(names, ["exact", "exact", "stemmed", "fuzzy", "relevance"]);
        // exact through the full-text index first: its words ($7), then one regex per
        // word and one per phrase, numbered after the query ($6).
        assert_eq!(
            tiers[0].condition,
            "to_tsvector('english', t.text) @@ plainto_tsquery('english', $7) AND t.text ~* $8 AND t.text ~* $9 AND t.text ~* $10 AND t.text ~* $11"
        );
        assert_eq!(tiers[0].params.len(), 6);
        // then through the trigram index alone.
        assert_eq!(tiers[1].condition, "t.text ~* $7 AND t.text ~* $8 AND t.text ~* $9 AND t.text ~* $10");
        assert_eq!(tiers[1].params.len(), 5);
        // fuzzy skips words too short to have trigrams (`db`).
        assert_eq!(tiers[3].condition, "t.text %> $6 AND t.text %> $7");
        // One word: no relevance tier (it would ask the stemmed question again).
        let one = ladder("pool", &["pool".into()], &[], 6);
        assert_eq!(one.iter().map(|t| t.name).collect::<Vec<_>>(), ["exact", "exact", "stemmed", "fuzzy"]);
        // A word beyond ASCII may be one token of a longer word to the parser: the
        // trigram way only.
        let cafe = ladder("café", &["café".into()], &[], 6);
        assert_eq!(cafe.iter().map(|t| t.name).collect::<Vec<_>>(), ["exact", "stemmed", "fuzzy"]);
        assert_eq!(cafe[0].condition, "t.text ~* $7");
    }
}

//! The bound on one query's work: what is searched of a query longer than
//! [`MAX_QUERY_BYTES`] or [`MAX_QUERY_WORDS`].
//!
//! Agents and hooks pass whole sentences, pasted prompts and stack traces; a search
//! must answer them, not refuse them. Each word a query searches costs term lookups,
//! a fuzzy automaton and a scan for its other forms, so the work is bounded instead:
//!
//! 1. past [`MAX_QUERY_BYTES`], the text is cut at the last word boundary before the
//!    bound (never inside a word or a character);
//! 2. past [`MAX_QUERY_WORDS`], words are left out until the rest fits: stopwords and
//!    question words first (they carry nothing a search can find), then repeats of a
//!    word already kept, then words no document holds (no tier but a typo's can match
//!    them, and a long query ends in the relevance tier, where they add nothing), then
//!    the most common words (by how many documents hold them: the rare ones say which
//!    session is meant), the latest first among equals, and quoted phrases last (cut to
//!    what fits when a phrase alone is too long).
//!
//! What is kept stays in the order it was typed (neighbouring words count for each
//! other), a question stays a question, and every word left out is reported.

use super::search::{is_question_word, is_stopword, MAX_QUERY_BYTES, MAX_QUERY_WORDS};
use super::tokenizer::words;

/// A query as it will be searched, and what was left out of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundedQuery {
    /// The text searched: the query itself when it fits.
    pub text: String,
    /// The words not searched, as typed and in order (each once).
    pub left_out: Vec<String>,
    /// The query's length in bytes when it was cut at [`MAX_QUERY_BYTES`].
    pub cut_from_bytes: Option<usize>,
    /// The query's word count when words were left out.
    pub words_before: Option<usize>,
    /// The most words searched.
    pub max_words: usize,
}

impl BoundedQuery {
    /// Whether anything of the query was not searched.
    pub fn bounded(&self) -> bool {
        self.cut_from_bytes.is_some() || self.words_before.is_some()
    }

    /// One sentence saying what was left out, for the text output and MCP.
    pub fn narration(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(bytes) = self.cut_from_bytes {
            parts.push(format!("the query's {bytes} bytes were cut to the first {MAX_QUERY_BYTES}"));
        }
        if let Some(n) = self.words_before {
            parts.push(format!("{n} words searched as their {} rarest, stopwords left out first", self.max_words));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// One unit a query can lose: a word of an unquoted stretch, or a quoted phrase.
struct Unit<'a> {
    /// The text as typed (a phrase's inside, without its quotes).
    text: &'a str,
    /// Its words' parts, lower-cased as the index holds them.
    parts: Vec<Vec<String>>,
    quoted: bool,
}

impl Unit<'_> {
    fn words(&self) -> usize {
        self.parts.len()
    }
}

fn units(query: &str) -> Vec<Unit<'_>> {
    let mut out = Vec::new();
    let mut rest = query;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('"') {
            let (inner, next) = match after.find('"') {
                Some(i) => (&after[..i], &after[i + 1..]),
                None => (after, ""),
            };
            let parts: Vec<Vec<String>> = words(inner).into_iter().map(|w| w.parts).collect();
            if !parts.is_empty() {
                out.push(Unit { text: inner.trim(), parts, quoted: true });
            }
            rest = next;
            continue;
        }
        let end = rest.find(['"', ' ', '\t', '\n', '\r']).unwrap_or(rest.len());
        let (stretch, next) = rest.split_at(end);
        for w in words(stretch) {
            out.push(Unit { text: &stretch[w.start..w.end], parts: vec![w.parts], quoted: false });
        }
        rest = next.strip_prefix([' ', '\t', '\n', '\r']).unwrap_or(next);
    }
    out
}

/// The longest prefix of `text` within `max` bytes that ends at a word boundary (or,
/// for one word longer than that, at a character boundary).
pub fn cut_at_word(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = &text[..end];
    // The next character starting a word means the cut fell inside one.
    let inside = text[end..].chars().next().is_some_and(char::is_alphanumeric) && head.chars().last().is_some_and(char::is_alphanumeric);
    if !inside {
        return head.trim_end();
    }
    match head.rfind(char::is_whitespace) {
        Some(i) if i > 0 => head[..i].trim_end(),
        _ => head,
    }
}

/// Bounds `query` (see the module doc). `doc_freq` says in how many documents a word
/// part occurs; a unit is as rare as its rarest part.
pub fn bound_query(query: &str, doc_freq: impl FnMut(&str) -> u64) -> BoundedQuery {
    bound_query_to(query, MAX_QUERY_WORDS, doc_freq)
}

/// [`bound_query`] to at most `max_words` words (a hook's smaller budget).
pub fn bound_query_to(query: &str, max_words: usize, mut doc_freq: impl FnMut(&str) -> u64) -> BoundedQuery {
    let trimmed = query.trim();
    let cut = cut_at_word(trimmed, MAX_QUERY_BYTES);
    let cut_from_bytes = (cut.len() < trimmed.len()).then_some(trimmed.len());
    let all = units(cut);
    let total: usize = all.iter().map(Unit::words).sum();
    if total <= max_words {
        // What a byte cut removed is not listed word by word (it can be a megabyte): the
        // narration says how much.
        return BoundedQuery { text: cut.to_string(), left_out: Vec::new(), cut_from_bytes, words_before: None, max_words };
    }
    let question = trimmed.contains('?') || all.iter().any(|u| !u.quoted && u.parts[0].len() == 1 && is_question_word(&u.parts[0][0]));

    // Drop order: lower class first; within a class the most common first, then the
    // latest typed.
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut order: Vec<(u8, u64, usize)> = Vec::with_capacity(all.len());
    for (i, u) in all.iter().enumerate() {
        let single = (!u.quoted && u.parts[0].len() == 1).then(|| u.parts[0][0].as_str());
        let key = u.text.to_lowercase();
        let repeat = !seen.insert(key);
        let mut class = match single {
            Some(w) if is_stopword(w) || is_question_word(w) => 0,
            _ if repeat => 1,
            _ if u.quoted => 4,
            _ => 3,
        };
        let df = if class >= 3 { u.parts.iter().flatten().map(|p| doc_freq(p)).min().unwrap_or(0) } else { 0 };
        if class == 3 && df == 0 {
            class = 2;
        }
        order.push((class, df, i));
    }
    order.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(b.2.cmp(&a.2)));

    let mut keep = vec![true; all.len()];
    // A phrase cut to fit keeps this many of its words.
    let mut phrase_words: Vec<Option<usize>> = vec![None; all.len()];
    let mut over = total - max_words;
    for &(_, _, i) in &order {
        if over == 0 {
            break;
        }
        let n = all[i].words();
        if all[i].quoted && n > over {
            // Phrases go last, so everything else that could go has gone: only part of
            // this one has to, and it keeps its first words.
            phrase_words[i] = Some(n - over);
            break;
        }
        keep[i] = false;
        over = over.saturating_sub(n);
    }

    let mut text = String::new();
    let mut left_out: Vec<String> = Vec::new();
    for (i, u) in all.iter().enumerate() {
        if !keep[i] {
            if !left_out.iter().any(|w| w == u.text) {
                left_out.push(u.text.to_string());
            }
            continue;
        }
        if !text.is_empty() {
            text.push(' ');
        }
        match (u.quoted, phrase_words[i]) {
            (true, Some(k)) => {
                let ws = words(u.text);
                let end = ws.get(k.saturating_sub(1)).map_or(u.text.len(), |w| w.end);
                text.push('"');
                text.push_str(&u.text[..end]);
                text.push('"');
                left_out.push(u.text[end..].trim().to_string());
            }
            (true, None) => {
                text.push('"');
                text.push_str(u.text);
                text.push('"');
            }
            (false, _) => text.push_str(u.text),
        }
    }
    if question {
        // The question words may be gone; the reading of a question must not be.
        text.push('?');
    }
    BoundedQuery { text, left_out, cut_from_bytes, words_before: Some(total), max_words }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn df_by_len(w: &str) -> u64 {
        // Longer words are rarer in these tests.
        100u64.saturating_sub(w.len() as u64)
    }

    fn count(text: &str) -> usize {
        words(text).len()
    }

    #[test]
    fn a_query_that_fits_is_searched_as_typed() {
        let b = bound_query("  jwt refresh token  ", df_by_len);
        assert_eq!(b.text, "jwt refresh token");
        assert!(!b.bounded() && b.left_out.is_empty() && b.narration().is_none());
    }

    #[test]
    fn thirty_three_words_lose_one_stopword_first() {
        let q = format!("the {}", (0..32).map(|i| format!("word{i:02}x")).collect::<Vec<_>>().join(" "));
        assert_eq!(count(&q), 33);
        let b = bound_query(&q, df_by_len);
        assert_eq!(count(&b.text), 32);
        assert_eq!(b.left_out, vec!["the"]);
        assert_eq!(b.words_before, Some(33));
        assert!(b.narration().is_some_and(|n| n.contains("33 words")));
    }

    #[test]
    fn a_long_question_keeps_its_rarest_words_in_order_and_stays_a_question() {
        let q = "I wanted to check back on our previous conversation about the podcast recommendations you gave me for my \
                 long commute to the office. Do you remember what show I used as an example of the storytelling style \
                 that I enjoyed the most, and which episode of it you suggested I start with when we talked last spring?";
        assert!(count(q) > MAX_QUERY_WORDS);
        let b = bound_query(q, df_by_len);
        assert!(count(&b.text) <= MAX_QUERY_WORDS, "{}", b.text);
        assert!(b.text.ends_with('?'));
        for w in ["podcast", "recommendations", "storytelling", "commute", "episode"] {
            assert!(b.text.contains(w), "{w} kept: {}", b.text);
        }
        for w in ["the", "I", "you", "what", "which"] {
            assert!(b.left_out.iter().any(|l| l == w), "{w} left out first: {:?}", b.left_out);
        }
        // Kept in the order typed.
        assert!(b.text.find("podcast").unwrap() < b.text.find("storytelling").unwrap());
    }

    #[test]
    fn among_content_words_the_common_ones_go_first() {
        // Every word distinct and no stopword: the most frequent by `doc_freq` go.
        let ws: Vec<String> = (0..40).map(|i| format!("w{}", "z".repeat(i + 1))).collect();
        let b = bound_query(&ws.join(" "), df_by_len);
        assert_eq!(count(&b.text), 32);
        // The eight shortest (most common here) were left out.
        assert_eq!(b.left_out, ws[..8].to_vec());
    }

    #[test]
    fn a_hundred_and_a_thousand_words_are_bounded_not_refused() {
        for n in [100usize, 1000] {
            let q: String = (0..n).map(|i| format!("term{i}")).collect::<Vec<_>>().join(" ");
            let b = bound_query(&q, df_by_len);
            assert!(b.text.len() <= MAX_QUERY_BYTES && count(&b.text) <= MAX_QUERY_WORDS, "{n}");
            assert!(count(&b.text) > 0);
            if q.len() > MAX_QUERY_BYTES {
                assert_eq!(b.cut_from_bytes, Some(q.len()));
            }
        }
    }

    #[test]
    fn the_byte_cut_falls_between_words() {
        let q = "alpha ".repeat(MAX_QUERY_BYTES / 6 + 10) + "omega";
        let b = bound_query(&q, df_by_len);
        assert!(b.text.len() <= MAX_QUERY_BYTES);
        assert!(b.cut_from_bytes.is_some());
        assert!(cut_at_word(&q, MAX_QUERY_BYTES).ends_with("alpha"));
        // One word longer than the bound is cut at a character boundary.
        let long = "é".repeat(MAX_QUERY_BYTES);
        let c = cut_at_word(&long, MAX_QUERY_BYTES);
        assert!(c.len() <= MAX_QUERY_BYTES && long.starts_with(c));
    }

    #[test]
    fn a_pasted_stack_trace_keeps_its_identifiers() {
        let mut trace =
            String::from("panicked at 'called `Result::unwrap()` on an `Err` value: ConnectionRefused' src/pool/manager.rs:214:9\n");
        for i in 0..40 {
            trace.push_str(&format!(
                "  {i}: std::rt::lang_start_internal::frame{i}\n             at /rustc/library/std/src/rt.rs:{}\n",
                100 + i
            ));
        }
        let b = bound_query(&trace, |w| if w == "connectionrefused" || w == "manager" { 1 } else { 50 });
        assert!(count(&b.text) <= MAX_QUERY_WORDS);
        assert!(b.text.contains("ConnectionRefused") && b.text.contains("manager"), "{}", b.text);
    }

    #[test]
    fn a_quoted_phrase_goes_last_and_is_cut_only_when_it_alone_is_too_long() {
        let inside: Vec<String> = (0..40).map(|i| format!("p{i}")).collect();
        let q = format!("\"{}\" the a of", inside.join(" "));
        let b = bound_query(&q, df_by_len);
        assert!(b.text.starts_with("\"p0 p1") && b.text.ends_with("p31\""), "{}", b.text);
        assert_eq!(count(&b.text), 32);
        assert!(b.left_out.contains(&"the".to_string()) && b.left_out.iter().any(|w| w.starts_with("p32")));
    }
}

//! Secret redaction: applied to every turn before anything is written to the index,
//! and again to everything read back out of it (an index built by an older deja, or
//! before a kind was added, must not leak through `show`, search, recall or MCP).
//!
//! Each secret is replaced by `[redacted:<kind>]` and the text around it is kept, so a
//! session stays searchable by everything but the secret. The kinds are the rows of
//! [`rules::RULES`] (docs/redaction.md lists them).
//!
//! One pass of one case-insensitive Aho-Corasick automaton over the text finds the
//! literals the patterns cannot match without: each pattern's literal prefixes (read
//! off the pattern itself, `ghp_`, `-----BEGIN`, …) or, for patterns that start with
//! a class or ignore case, the words their rule names as `needles`. Only the patterns
//! whose literal is there run their regex — usually none, and the text is returned
//! borrowed. The pre-check is implied by the match, so a secret is found whatever
//! else the text says. (A `RegexSet` over all patterns was measured first: it has no
//! literal scan and was 2× slower just to say whether anything matched, 25× slower to
//! say what.) Redaction runs on every turn at index time, and on every way out.

mod rules;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{LazyLock, OnceLock};

use aho_corasick::AhoCorasick;
use regex::{Captures, Regex};

use rules::{Rule, RULES};

/// The marker a replacement starts with; a secret already replaced is left alone.
const MARK: &str = "[redacted:";

struct Engine {
    /// Every pattern of every rule, in table order, with the index of its rule; each
    /// compiled the first time its literal is seen, since a process (a hook, one
    /// search) usually meets a few kinds, and compiling all of them up front cost more
    /// than the rest of a hook's answer.
    patterns: Vec<(usize, LazyRegex)>,
    /// The literals of every pattern that has some, case-insensitively, in one automaton.
    literals: AhoCorasick,
    /// The pattern each literal in `literals` belongs to.
    literal_pattern: Vec<usize>,
    /// Whether that literal starts its pattern right after a `\b`: a hit where the text
    /// has no word boundary cannot begin a match (`pat` inside `compatible`), so it
    /// wakes nothing — most of what a pattern would otherwise be compiled for.
    literal_bounded: Vec<bool>,
    /// Patterns with no literal to look for: they always run.
    always: Vec<bool>,
}

/// A static pattern, compiled on first use.
struct LazyRegex {
    source: String,
    compiled: OnceLock<Regex>,
}

impl LazyRegex {
    fn get(&self) -> &Regex {
        self.compiled.get_or_init(|| Regex::new(&self.source).expect("static redaction regex"))
    }
}

/// `\b` in the table means an ASCII word boundary: a Unicode one would make the scan
/// give up its DFA on the first non-ASCII character and crawl.
fn ascii_boundaries(pattern: &str) -> String {
    pattern.replace(r"\b", r"(?-u:\b)")
}

/// The lower-cased literals every match of `pattern` starts with, when the pattern
/// has a short finite set of them (two bytes or more each).
fn prefix_literals(pattern: &str) -> Option<Vec<Vec<u8>>> {
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    let hir = regex_syntax::parse(pattern).ok()?;
    let seq = Extractor::new().kind(ExtractKind::Prefix).extract(&hir);
    let lits = seq.literals()?;
    let mut out: Vec<Vec<u8>> = Vec::new();
    for l in lits {
        let s = l.as_bytes().to_ascii_lowercase();
        if s.len() < 2 {
            return None;
        }
        if !out.contains(&s) {
            out.push(s);
        }
    }
    (!out.is_empty() && out.len() <= 64).then_some(out)
}

/// Identifies the redaction this binary does: a hash of the source of this module, the
/// rule table, the normalizer (which decides what of a turn is redacted before it is
/// written) and the session metadata's [`Redact`] impl (what of it is redacted before it
/// is stored), so any change to a rule, a check, the engine or what is redacted gives
/// another value.
/// An index run marks what it wrote with it — its archive segments ([`crate::archive`])
/// and the session metadata it stores ([`crate::model::SessionMeta`]): text redacted by
/// these very rules need not be redacted again on the way out.
pub fn fingerprint() -> u64 {
    static FINGERPRINT: LazyLock<u64> = LazyLock::new(|| {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        h.update(include_str!("mod.rs").as_bytes());
        h.update(include_str!("rules.rs").as_bytes());
        h.update(include_str!("../normalize.rs").as_bytes());
        // What of a session's metadata is redacted before it is stored and marked.
        h.update(include_str!("../model/meta.rs").as_bytes());
        // Never 0, which a segment table uses for "not known to be redacted".
        h.digest().max(1)
    });
    *FINGERPRINT
}

/// Whether this process redacts enough text to build the literal scan for speed.
static THROUGHPUT: AtomicBool = AtomicBool::new(false);

/// Builds the literal scan as a DFA when it is first used: 2.3× faster over the
/// benchmark corpus's turns (the contiguous NFA aho-corasick picks for this many
/// case-insensitive literals walks slower for overlapping matches) but 1.4 ms to build
/// instead of 0.7. Index runs ask for it (the watcher's too); a one-off search, which
/// redacts a few turns on the way out, keeps the quicker build.
pub fn prefer_throughput() {
    THROUGHPUT.store(true, Ordering::Relaxed);
}

static ENGINE: LazyLock<Engine> = LazyLock::new(|| {
    let mut patterns = Vec::new();
    let mut words: Vec<Vec<u8>> = Vec::new();
    let mut literal_pattern = Vec::new();
    let mut literal_bounded = Vec::new();
    let mut always = Vec::new();
    for (i, rule) in RULES.iter().enumerate() {
        for p in rule.patterns {
            let k = patterns.len();
            let source = ascii_boundaries(p);
            let (lits, bounded) = if rule.needles.is_empty() {
                let bounded = source.strip_prefix("(?i)").unwrap_or(&source).starts_with(r"(?-u:\b)");
                (prefix_literals(&source), bounded)
            } else {
                (Some(rule.needles.iter().map(|n| n.as_bytes().to_vec()).collect()), false)
            };
            always.push(lits.is_none());
            for l in lits.into_iter().flatten() {
                words.push(l);
                literal_pattern.push(k);
                literal_bounded.push(bounded);
            }
            patterns.push((i, LazyRegex { source, compiled: OnceLock::new() }));
        }
    }
    let kind = THROUGHPUT.load(Ordering::Relaxed).then_some(aho_corasick::AhoCorasickKind::DFA);
    let literals = AhoCorasick::builder().ascii_case_insensitive(true).kind(kind).build(&words).expect("static redaction literals");
    Engine { patterns, literals, literal_pattern, literal_bounded, always }
});

/// The span of the secret in one match: the group `s` (or `s2`, `s3`), else all of it.
fn secret_span(caps: &Captures<'_>) -> (usize, usize) {
    let m = caps.name("s").or_else(|| caps.name("s2")).or_else(|| caps.name("s3")).unwrap_or_else(|| caps.get(0).expect("group 0"));
    (m.start(), m.end())
}

/// Whether text ending here is inside a `[redacted:…]` marker (a later rule must not
/// take the marker's own text for a secret).
fn inside_marker(before: &str) -> bool {
    let tail = &before.as_bytes()[before.len().saturating_sub(48)..];
    match memchr::memmem::rfind(tail, MARK.as_bytes()) {
        Some(i) => !tail[i..].contains(&b']'),
        None => false,
    }
}

/// Replaces every match of `re` in `text` whose secret passes the rule's check; `None`
/// when nothing was replaced.
fn apply(rule: &Rule, re: &Regex, text: &str) -> Option<String> {
    let mut out: Option<String> = None;
    let mut last = 0;
    for caps in re.captures_iter(text) {
        let (start, end) = secret_span(&caps);
        let secret = &text[start..end];
        if secret.is_empty()
            || secret.contains(MARK)
            || inside_marker(&text[..start])
            || rule.check.is_some_and(|check| !check(secret, &text[end..]))
        {
            continue;
        }
        let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
        o.push_str(&text[last..start]);
        o.push_str(MARK);
        o.push_str(rule.kind);
        o.push(']');
        last = end;
    }
    out.map(|mut o| {
        o.push_str(&text[last..]);
        o
    })
}

/// Whether `(?-u:\b)` holds before byte `at`: one side a word byte, the other not.
fn ascii_word_boundary(text: &[u8], at: usize) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let before = at.checked_sub(1).and_then(|i| text.get(i)).is_some_and(|b| word(*b));
    let after = text.get(at).is_some_and(|b| word(*b));
    before != after
}

/// `text` with every secret replaced; borrowed when nothing matched.
pub fn redact(text: &str) -> Cow<'_, str> {
    let engine = &*ENGINE;
    // Which patterns' literals the text holds. Looked for once, in the text as given:
    // a rewrite only replaces secrets with markers, and no rule matches inside one.
    let mut candidate = engine.always.clone();
    for m in engine.literals.find_overlapping_iter(text) {
        let l = m.pattern().as_usize();
        if engine.literal_bounded[l] && !ascii_word_boundary(text.as_bytes(), m.start()) {
            continue;
        }
        candidate[engine.literal_pattern[l]] = true;
    }
    let mut out: Cow<'_, str> = Cow::Borrowed(text);
    // Rules run in table order on the text as the earlier ones left it, so a secret
    // the specific rules named is not renamed by the generic ones.
    for (k, (i, lazy)) in engine.patterns.iter().enumerate() {
        if !candidate[k] {
            continue;
        }
        let re = lazy.get();
        if !re.is_match(&out) {
            continue;
        }
        if let Some(s) = apply(&RULES[*i], re, &out) {
            out = Cow::Owned(s);
        }
    }
    out
}

/// The kinds of secret `redact` knows, in the order they are applied.
pub fn kinds() -> impl Iterator<Item = &'static str> {
    RULES.iter().map(|r| r.kind)
}

/// Every kind's own positive cases, `(kind, text, what redaction makes of it)`: for
/// end-to-end tests that plant each kind in real harness formats.
#[cfg(feature = "testkit")]
pub fn examples() -> impl Iterator<Item = (&'static str, &'static str, &'static str)> {
    RULES.iter().flat_map(|r| r.hits.iter().map(move |(text, want)| (r.kind, *text, *want)))
}

/// A value read back from the index (or about to be shown) whose text may hold a
/// secret: redacted in place. Identifiers (session ids, harness ids, signatures used
/// as lookup keys) are left as they are; only text a person or model wrote is redacted.
pub trait Redact {
    fn redact_in_place(&mut self);
}

impl Redact for String {
    fn redact_in_place(&mut self) {
        if let Cow::Owned(s) = redact(self) {
            *self = s;
        }
    }
}

impl<T: Redact> Redact for Option<T> {
    fn redact_in_place(&mut self) {
        if let Some(x) = self {
            x.redact_in_place();
        }
    }
}

impl<T: Redact> Redact for Vec<T> {
    fn redact_in_place(&mut self) {
        for x in self {
            x.redact_in_place();
        }
    }
}

/// `value` redacted ([`Redact`]).
pub fn redacted<T: Redact>(mut value: T) -> T {
    value.redact_in_place();
    value
}

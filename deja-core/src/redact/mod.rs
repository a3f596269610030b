//! Secret redaction: applied to every turn before anything is written to the index,
//! and again to everything read back out of it (an index built by an older deja, or
//! before a kind was added, must not leak through `show`, search, recall or MCP).
//!
//! Each secret is replaced by `[redacted:<kind>]` and the text around it is kept, so a
//! session stays searchable by everything but the secret. The kinds are the rows of
//! [`rules::RULES`] (docs/redaction.md lists them).
//!
//! Every pattern is its own regex, asked only whether it matches the text; the regex
//! engine starts that with a scan for the literal the pattern cannot match without
//! (`ghp_`, `-----BEGIN`, …). Case-insensitive patterns, whose literal the engine
//! cannot scan for, name their words in the rule's `needles`, looked for in the
//! lower-cased text first. Either way the pre-check is implied by the match, so a
//! secret is found whatever else the text says. Only rules that match then rewrite
//! the text. (One `RegexSet` over all patterns was measured: it has no literal scan
//! and was 2× slower just to say whether anything matched, 25× slower to say what.)
//! Redaction runs on every turn at index time, and on every way out.

mod rules;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::sync::LazyLock;

use aho_corasick::AhoCorasick;
use regex::{Captures, Regex};

use rules::{Rule, RULES};

/// The marker a replacement starts with; a secret already replaced is left alone.
const MARK: &str = "[redacted:";

struct Engine {
    /// Every pattern of every rule, in table order, with the index of its rule.
    patterns: Vec<(usize, Regex)>,
    /// Every rule's needles, case-insensitively, in one automaton: one pass over the
    /// text says which rules with needles can match at all.
    needles: AhoCorasick,
    /// The rule of each needle in `needles`.
    needle_rule: Vec<usize>,
}

/// `\b` in the table means an ASCII word boundary: a Unicode one would make the scan
/// give up its DFA on the first non-ASCII character and crawl.
fn ascii_boundaries(pattern: &str) -> String {
    pattern.replace(r"\b", r"(?-u:\b)")
}

static ENGINE: LazyLock<Engine> = LazyLock::new(|| {
    let mut patterns = Vec::new();
    for (i, rule) in RULES.iter().enumerate() {
        for p in rule.patterns {
            patterns.push((i, Regex::new(&ascii_boundaries(p)).expect("static redaction regex")));
        }
    }
    let (words, needle_rule): (Vec<&str>, Vec<usize>) =
        RULES.iter().enumerate().flat_map(|(i, r)| r.needles.iter().map(move |n| (*n, i))).unzip();
    let needles = AhoCorasick::builder().ascii_case_insensitive(true).build(words).expect("static redaction needles");
    Engine { patterns, needles, needle_rule }
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

/// `text` with every secret replaced; borrowed when nothing matched.
pub fn redact(text: &str) -> Cow<'_, str> {
    let engine = &*ENGINE;
    // Which rules' needles the text holds. Looked for once, in the text as given: a
    // rewrite only replaces secrets with markers, and no rule matches inside a marker.
    let mut has_needle = vec![false; RULES.len()];
    for m in engine.needles.find_overlapping_iter(text) {
        has_needle[engine.needle_rule[m.pattern().as_usize()]] = true;
    }
    let mut out: Cow<'_, str> = Cow::Borrowed(text);
    // Rules run in table order on the text as the earlier ones left it, so a secret
    // the specific rules named is not renamed by the generic ones.
    for (i, re) in &engine.patterns {
        let rule = &RULES[*i];
        if (!rule.needles.is_empty() && !has_needle[*i]) || !re.is_match(&out) {
            continue;
        }
        if let Some(s) = apply(rule, re, &out) {
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

impl Redact for crate::model::Turn {
    fn redact_in_place(&mut self) {
        self.text.redact_in_place();
        if let Some(tool) = &mut self.tool {
            tool.command.redact_in_place();
        }
        for f in &mut self.files {
            f.path.redact_in_place();
        }
        if let Some(e) = &mut self.edit {
            e.path.redact_in_place();
            e.old.redact_in_place();
            e.new.redact_in_place();
        }
    }
}

impl Redact for crate::index::SessionMeta {
    fn redact_in_place(&mut self) {
        self.title.redact_in_place();
        self.project.redact_in_place();
    }
}

impl Redact for crate::recall::mine::FixPair {
    fn redact_in_place(&mut self) {
        self.error_line.redact_in_place();
        self.failed_command.redact_in_place();
        self.commands.redact_in_place();
        self.edited.redact_in_place();
        self.note.redact_in_place();
    }
}

impl Redact for crate::recall::mine::ErrorEvent {
    fn redact_in_place(&mut self) {
        self.line.redact_in_place();
        self.command.redact_in_place();
    }
}

/// `value` redacted ([`Redact`]).
pub fn redacted<T: Redact>(mut value: T) -> T {
    value.redact_in_place();
    value
}

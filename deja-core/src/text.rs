//! Text a harness injects about itself, stripped before anything is stored, and how a
//! session's title is chosen when the format has none.
//!
//! Harnesses inject text about themselves into what looks like user speech (system
//! reminders, environment preambles, hook envelopes, skill catalogues). Each adapter or
//! family dialect declares its own rules as an [`InjectedText`] in its `HarnessInfo`, and
//! ingest applies them to that harness's text only, so a rule written for one harness can
//! never eat another harness's user text. deja's own `<deja-recall>` blocks are the one
//! rule applied everywhere: deja must never recall its own answers, whoever quoted them.
//!
//! Plain substring search rather than regexes: the rules are literal tags, and the
//! common case (a message with no `<` at all) costs one scan.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

use crate::model::{Role, Session, TitleBy, Turn};

static RECALL_OPEN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"<deja-recall[^>]*>|&lt;deja-recall(&gt;|[^&]*&gt;)").expect("static regex"));
static RECALL_CLOSE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"</deja-recall>|&lt;/deja-recall&gt;").expect("static regex"));

/// Text one harness injects about itself into what looks like speech, declared by its
/// adapter or family dialect (`HarnessInfo::injected`).
#[derive(Debug)]
pub struct InjectedText {
    /// `<tag>…</tag>` blocks removed wherever they stand (`system-reminder`).
    pub blocks: &'static [&'static str],
    /// `open…close` spans removed wherever they stand (`<command-name>` … `</command-args>`).
    pub spans: &'static [(&'static str, &'static str)],
    /// Tags removed, content kept (`user_query`).
    pub wrappers: &'static [&'static str],
    /// `<tag>…</tag>` blocks removed only at the very start of a message, repeatedly and
    /// nesting-aware (`environment_context`).
    pub preambles: &'static [&'static str],
    /// A heading line immediately followed by a `<TAG>…</TAG>` block, removed at the start
    /// (`("# AGENTS.md instructions", "INSTRUCTIONS")`).
    pub headed_preambles: &'static [(&'static str, &'static str)],
    /// Whole lines starting with one of these are dropped (`[Request interrupted by user`).
    pub line_prefixes: &'static [&'static str],
    /// A user turn starting with one of these never becomes the session title.
    pub not_titles: &'static [&'static str],
}

impl InjectedText {
    /// A harness that injects nothing deja knows of.
    pub const NONE: InjectedText =
        InjectedText { blocks: &[], spans: &[], wrappers: &[], preambles: &[], headed_preambles: &[], line_prefixes: &[], not_titles: &[] };

    /// Removes this harness's injected text and deja's own recall blocks from one message.
    /// Returns the text trimmed; empty means the message was nothing but injection.
    /// Borrowed when there was nothing to remove, which is most messages: every turn of
    /// a build passes through here.
    pub fn strip<'t>(&self, text: &'t str) -> Cow<'t, str> {
        self.strip_with(text, true)
    }

    /// As [`strip`](Self::strip) for a compaction summary: its blocks go, but not its
    /// lines. A summary opens with the very preamble (`This session is being continued…`)
    /// that marks injected *speech*; dropping that line would drop the summary.
    pub fn strip_summary<'t>(&self, text: &'t str) -> Cow<'t, str> {
        self.strip_with(text, false)
    }

    fn strip_with<'t>(&self, text: &'t str, drop_lines: bool) -> Cow<'t, str> {
        let mut out = strip_recall_blocks(text);
        if out.contains('<') {
            for tag in self.blocks {
                if let Some(s) = remove_spans(&out, &format!("<{tag}>"), &format!("</{tag}>")) {
                    out = Cow::Owned(s);
                }
            }
            for (open, close) in self.spans {
                if let Some(s) = remove_spans(&out, open, close) {
                    out = Cow::Owned(s);
                }
            }
            for tag in self.wrappers {
                if out.contains(tag) {
                    out = Cow::Owned(out.replace(&format!("<{tag}>"), "").replace(&format!("</{tag}>"), ""));
                }
            }
        }
        if !self.preambles.is_empty() || !self.headed_preambles.is_empty() {
            out = narrowed(out, |t| self.strip_preambles(t));
        }
        if drop_lines && self.line_prefixes.iter().any(|p| out.contains(p)) {
            out = Cow::Owned(
                out.lines().filter(|l| !self.line_prefixes.iter().any(|p| l.trim_start().starts_with(p))).collect::<Vec<_>>().join("\n"),
            );
        }
        narrowed(out, str::trim)
    }

    /// Removes preambles at the very start of a message, repeatedly.
    fn strip_preambles<'t>(&self, mut text: &'t str) -> &'t str {
        loop {
            let t = text.trim_start();
            let next = self.preambles.iter().find_map(|tag| closed_block_end(t, tag).map(|end| &t[end..])).or_else(|| {
                self.headed_preambles.iter().find_map(|(heading, tag)| {
                    let rest = t.strip_prefix(heading)?;
                    let after_heading = rest.find('\n').map_or("", |i| &rest[i + 1..]).trim_start();
                    closed_block_end(after_heading, tag).map(|end| &after_heading[end..])
                })
            });
            match next {
                Some(rest) => text = rest,
                None => return t,
            }
        }
    }

    fn is_title_candidate(&self, text: &str) -> bool {
        let t = text.trim_start();
        !t.is_empty() && !self.not_titles.iter().any(|p| t.starts_with(p))
    }
}

/// `text` cut down to the part of it `narrow` returns, copied only if it was owned and
/// got shorter.
fn narrowed<'t>(text: Cow<'t, str>, narrow: impl for<'a> Fn(&'a str) -> &'a str) -> Cow<'t, str> {
    match text {
        Cow::Borrowed(t) => Cow::Borrowed(narrow(t)),
        Cow::Owned(t) => {
            let part = narrow(&t);
            if part.len() == t.len() {
                Cow::Owned(t)
            } else {
                Cow::Owned(part.to_string())
            }
        }
    }
}

/// Every `open…close` span removed (up to the first `close` after each `open`); an `open`
/// with no `close` after it, and everything after it, is kept. `None` when there was no
/// span to remove.
fn remove_spans(text: &str, open: &str, close: &str) -> Option<String> {
    let mut out: Option<String> = None;
    let mut rest = text;
    while let Some(i) = rest.find(open) {
        let Some(j) = rest[i + open.len()..].find(close) else { break };
        out.get_or_insert_with(|| String::with_capacity(text.len())).push_str(&rest[..i]);
        rest = &rest[i + open.len() + j + close.len()..];
    }
    out.map(|mut o| {
        o.push_str(rest);
        o
    })
}

/// Drops everything between `<deja-recall>` and `</deja-recall>` (also HTML-escaped);
/// an unclosed opener drops the rest of the message.
fn strip_recall_blocks(text: &str) -> Cow<'_, str> {
    if !text.contains("deja-recall") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = RECALL_OPEN.find(rest) {
        out.push_str(&rest[..open.start()]);
        match RECALL_CLOSE.find(&rest[open.end()..]) {
            Some(close) => rest = &rest[open.end() + close.end()..],
            None => return Cow::Owned(out),
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// When `t` starts with `<tag…>`, the offset just past its matching `</tag>`,
/// counting nested openers of the same tag.
fn closed_block_end(t: &str, tag: &str) -> Option<usize> {
    let open = format!("<{tag}");
    let close = format!("</{tag}>");
    if !t.starts_with(&open) {
        return None;
    }
    let after = t.as_bytes().get(open.len()).copied();
    if !matches!(after, Some(b'>' | b' ' | b'\n')) {
        return None;
    }
    let mut depth = 0usize;
    let mut i = 0usize;
    while i < t.len() {
        let rest = &t[i..];
        if rest.starts_with(&close) {
            depth = depth.saturating_sub(1);
            i += close.len();
            if depth == 0 {
                return Some(i);
            }
        } else if rest.starts_with(&open) {
            depth += 1;
            i += open.len();
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
        }
    }
    None
}

const MIN_TITLE_CHARS: usize = 12;
const MAX_TITLE_CHARS: usize = 120;

/// A title for a session that has none, and what it was made of: the earliest
/// substantial user turn (not one the harness marks as its own, see
/// [`InjectedText::not_titles`]), else the first short one, else the first assistant turn,
/// else the first tool output.
pub fn derive_title(session: &Session, injected: &InjectedText) -> Option<(String, TitleBy)> {
    let users: Vec<&Turn> = session.turns.iter().filter(|t| t.role == Role::User && injected.is_title_candidate(&t.text)).collect();
    if let Some(t) = users.iter().find(|t| t.text.trim().chars().count() >= MIN_TITLE_CHARS) {
        return Some((one_line(&t.text, MAX_TITLE_CHARS), TitleBy::Prompt));
    }
    if let Some(t) = users.first() {
        return Some((one_line(&t.text, MAX_TITLE_CHARS), TitleBy::ShortPrompt));
    }
    if let Some(t) = session.turns.iter().find(|t| t.role == Role::Assistant && !t.text.trim().is_empty()) {
        return Some((one_line(&t.text, MAX_TITLE_CHARS), TitleBy::Answer));
    }
    let output = session.turns.iter().find(|t| !t.text.trim().is_empty());
    output.map(|t| (format!("tool output: {}", one_line(&t.text, MAX_TITLE_CHARS - 13)), TitleBy::Output))
}

/// The first line of `text`, whitespace collapsed, cut to `max` chars with an ellipsis.
pub fn one_line(text: &str, max: usize) -> String {
    let line = text.trim().lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    let collapsed: String = line.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() <= max {
        collapsed
    } else {
        let mut s: String = collapsed.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rules shaped like two real dialects, to exercise each kind of rule.
    const RULES: InjectedText = InjectedText {
        blocks: &["system-reminder"],
        spans: &[("<command-name>", "</command-args>")],
        wrappers: &["user_query"],
        preambles: &["environment_context", "user_instructions"],
        headed_preambles: &[("# AGENTS.md instructions", "INSTRUCTIONS")],
        line_prefixes: &["[Request interrupted by user"],
        not_titles: &["Caveat:"],
    };

    #[test]
    fn strips_every_injection_kind() {
        let s = |t: &str| RULES.strip(t).into_owned();
        assert_eq!(s("before <deja-recall>old answer</deja-recall> after"), "before  after");
        assert_eq!(s("keep &lt;deja-recall&gt;x&lt;/deja-recall&gt; this"), "keep  this");
        assert_eq!(s("keep <deja-recall>never closed"), "keep");
        assert_eq!(s("<system-reminder>be nice</system-reminder>fix the build"), "fix the build");
        assert_eq!(s("<command-name>/clear</command-name><command-args></command-args>go"), "go");
        assert_eq!(s("<user_query>fix it</user_query>"), "fix it");
        assert_eq!(
            s("<environment_context>\n<cwd>/x</cwd>\n</environment_context>\n<user_instructions>a</user_instructions>real question"),
            "real question"
        );
        assert_eq!(s("# AGENTS.md instructions for /x\n<INSTRUCTIONS>\nbe brief\n</INSTRUCTIONS>\nwhy?"), "why?");
        assert_eq!(s("[Request interrupted by user]\nok"), "ok");
        assert_eq!(
            RULES.strip_summary("[Request interrupted by user] and then it was fixed"),
            "[Request interrupted by user] and then it was fixed"
        );
        assert_eq!(s("mention <environment_context> later"), "mention <environment_context> later");
        assert_eq!(s("<system-reminder>never closed"), "<system-reminder>never closed");
    }

    #[test]
    fn another_harness_keeps_what_these_rules_would_strip() {
        let text = "<system-reminder>this harness's user wrote this</system-reminder>";
        assert_eq!(InjectedText::NONE.strip(text), text);
        assert_eq!(InjectedText::NONE.strip("a <deja-recall>x</deja-recall> b"), "a  b", "deja's own blocks go everywhere");
    }
}

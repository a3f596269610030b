//! Text the index strips from every harness before anything is stored, and how a
//! session's title is chosen when the format has none.
//!
//! Harnesses inject text about themselves into what looks like user speech (system
//! reminders, environment preambles, hook envelopes, deja's own recall blocks). It is
//! removed here once, for every adapter, so deja never recalls its own answers and a
//! preamble never becomes a title.

use std::sync::LazyLock;

use regex::Regex;

use crate::model::{Role, Session, Turn};

static BLOCKS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?s)<system-reminder>.*?</system-reminder>|<local-command-caveat>.*?</local-command-caveat>|<command-name>.*?</command-args>",
    )
    .expect("static regex")
});
static WRAPPERS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"</?(user_query|hook_context)>").expect("static regex"));
static RECALL_OPEN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"<deja-recall[^>]*>|&lt;deja-recall(&gt;|[^&]*&gt;)").expect("static regex"));
static RECALL_CLOSE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"</deja-recall>|&lt;/deja-recall&gt;").expect("static regex"));

const PREAMBLE_TAGS: &[&str] = &[
    "session_context",
    "timestamp",
    "environment_context",
    "recommended_plugins",
    "permissions instructions",
    "skills_instructions",
    "user_instructions",
];

const DROPPED_LINE_PREFIXES: &[&str] = &[
    "This session is being continued from a previous conversation",
    "[Request interrupted by user",
    "[Your previous response had no visible output",
    "UserPromptSubmit hook additional context:",
    "SessionStart hook additional context:",
];

/// Removes injected text from one message (see the module doc). Returns the text
/// trimmed; an empty result means the message was nothing but injection.
pub fn strip_injected(text: &str) -> String {
    let mut out = strip_recall_blocks(text);
    if out.contains('<') {
        out = BLOCKS.replace_all(&out, "").into_owned();
        out = WRAPPERS.replace_all(&out, "").into_owned();
        out = strip_preambles(&out).to_string();
    }
    if DROPPED_LINE_PREFIXES.iter().any(|p| out.contains(p)) {
        out = out.lines().filter(|l| !DROPPED_LINE_PREFIXES.iter().any(|p| l.trim_start().starts_with(p))).collect::<Vec<_>>().join("\n");
    }
    out.trim().to_string()
}

/// Drops everything between `<deja-recall>` and `</deja-recall>` (also HTML-escaped);
/// an unclosed opener drops the rest of the message.
fn strip_recall_blocks(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = RECALL_OPEN.find(rest) {
        out.push_str(&rest[..open.start()]);
        match RECALL_CLOSE.find(&rest[open.end()..]) {
            Some(close) => rest = &rest[open.end() + close.end()..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// Removes harness preambles at the very start of a message, repeatedly.
fn strip_preambles(mut text: &str) -> &str {
    loop {
        let t = text.trim_start();
        let mut advanced = false;
        for tag in PREAMBLE_TAGS {
            if let Some(end) = closed_block_end(t, tag) {
                text = &t[end..];
                advanced = true;
                break;
            }
        }
        if !advanced {
            if let Some(rest) = t.strip_prefix("# AGENTS.md instructions") {
                let after_heading = rest.find('\n').map_or("", |i| &rest[i + 1..]).trim_start();
                if let Some(end) = closed_block_end(after_heading, "INSTRUCTIONS") {
                    text = &after_heading[end..];
                    advanced = true;
                }
            }
        }
        if !advanced {
            return t;
        }
    }
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

const TITLE_SKIP_PREFIXES: &[&str] = &["<local-command", "<command-", "<task-notification", "<teammate-message", "Caveat:"];
const MIN_TITLE_CHARS: usize = 12;
const MAX_TITLE_CHARS: usize = 120;

/// A title for a session that has none: the earliest substantial user turn, else the
/// first assistant turn, else the first tool output.
pub fn derive_title(session: &Session) -> Option<String> {
    let users: Vec<&Turn> = session
        .turns
        .iter()
        .filter(|t| {
            t.role == Role::User && !t.text.trim().is_empty() && !TITLE_SKIP_PREFIXES.iter().any(|p| t.text.trim_start().starts_with(p))
        })
        .collect();
    if let Some(t) = users.iter().find(|t| t.text.trim().chars().count() >= MIN_TITLE_CHARS).or(users.first()) {
        return Some(one_line(&t.text, MAX_TITLE_CHARS));
    }
    if let Some(t) = session.turns.iter().find(|t| t.role == Role::Assistant && !t.text.trim().is_empty()) {
        return Some(one_line(&t.text, MAX_TITLE_CHARS));
    }
    session.turns.iter().find(|t| !t.text.trim().is_empty()).map(|t| format!("tool output: {}", one_line(&t.text, MAX_TITLE_CHARS - 13)))
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

    #[test]
    fn strips_every_injection_kind() {
        assert_eq!(strip_injected("before <deja-recall>old answer</deja-recall> after"), "before  after");
        assert_eq!(strip_injected("keep &lt;deja-recall&gt;x&lt;/deja-recall&gt; this"), "keep  this");
        assert_eq!(strip_injected("keep <deja-recall>never closed"), "keep");
        assert_eq!(strip_injected("<system-reminder>be nice</system-reminder>fix the build"), "fix the build");
        assert_eq!(strip_injected("<user_query>fix it</user_query>"), "fix it");
        assert_eq!(
            strip_injected(
                "<environment_context>\n<cwd>/x</cwd>\n</environment_context>\n<user_instructions>a</user_instructions>real question"
            ),
            "real question"
        );
        assert_eq!(strip_injected("# AGENTS.md instructions for /x\n<INSTRUCTIONS>\nbe brief\n</INSTRUCTIONS>\nwhy?"), "why?");
        assert_eq!(strip_injected("[Request interrupted by user]\nok"), "ok");
        assert_eq!(strip_injected("mention <environment_context> later"), "mention <environment_context> later");
    }
}

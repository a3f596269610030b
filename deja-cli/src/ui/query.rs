//! The query line of the search screen, read into words and filters.
//!
//! People type filters into the same line as the words (`pool harness:codex since:7d`),
//! as they would in a code host's search box, instead of reaching for flags. A filter is
//! a known name, a colon and a value with no space; anything else (`http://x`, `a:b` with
//! an unknown name, a filter with nothing after the colon while it is being typed) stays
//! a word of the query, so nothing typed is silently dropped.

use deja_core::Timestamp;

/// The filter names the line understands, in the order the help lists them.
pub const FILTERS: [(&str, &str); 5] = [
    ("harness:", "only this harness (repeatable): harness:codex"),
    ("project:", "only projects whose path contains this: project:api"),
    ("since:", "only turns since an age or a date: since:7d, since:2026-01-02"),
    ("role:", "only turns of this kind: role:command, role:user, role:edit"),
    ("file:", "only turns that touched this file: file:src/auth.rs"),
];

/// A query line, read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// The words and "quoted phrases" to search for, as typed, filters taken out.
    pub text: String,
    pub harnesses: Vec<String>,
    pub project: Option<String>,
    pub since: Option<Timestamp>,
    pub role: Option<String>,
    pub file: Option<String>,
    /// Filters whose value could not be read (`since:soon`), with why: shown under the
    /// line rather than searched as words or dropped.
    pub problems: Vec<String>,
}

/// Reads `line` at `now` (for `since:` ages).
pub fn parse(line: &str, now: Timestamp) -> Parsed {
    let mut out = Parsed::default();
    let mut words: Vec<&str> = Vec::new();
    for token in tokens(line) {
        let Some((name, value)) = token.split_once(':') else {
            words.push(token);
            continue;
        };
        if value.is_empty() || token.starts_with('"') {
            words.push(token);
            continue;
        }
        match name.to_ascii_lowercase().as_str() {
            "harness" => out.harnesses.push(value.to_ascii_lowercase()),
            "project" => out.project = Some(value.to_string()),
            "since" => match crate::output::parse_when("since:", value, now) {
                Ok(t) => out.since = Some(t),
                Err(e) => out.problems.push(e.to_string()),
            },
            "role" => {
                let role = value.to_ascii_lowercase();
                if crate::output::ROLES.contains(&role.as_str()) {
                    out.role = Some(role);
                } else {
                    out.problems.push(format!("role:{value}: expected one of {}", crate::output::ROLES.join(", ")));
                }
            }
            "file" => out.file = Some(value.to_string()),
            _ => words.push(token),
        }
    }
    out.text = words.join(" ");
    out
}

/// The line cut at spaces, a "quoted phrase" (closed or still being typed) kept whole.
fn tokens(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let mut quoted = false;
    for (i, c) in line.char_indices() {
        match (c, start) {
            ('"', None) => {
                start = Some(i);
                quoted = true;
            }
            ('"', Some(_)) if quoted => {
                quoted = false;
            }
            (c, Some(s)) if c.is_whitespace() && !quoted => {
                out.push(&line[s..i]);
                start = None;
            }
            (c, None) if !c.is_whitespace() => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push(&line[s..]);
    }
    out
}

/// The words a preview highlights: the query's words and phrases, lowercased, without
/// quotes, and no shorter than two characters (a one-letter word lights up everything).
pub fn highlight_terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for token in tokens(text) {
        let t = token.trim_matches('"').trim().to_lowercase();
        if t.chars().count() >= 2 && !out.contains(&t) {
            out.push(t);
        }
    }
    // Longest first, so `pgbouncer pool` is found before `pool` where both match.
    out.sort_by_key(|t| std::cmp::Reverse(t.len()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: Timestamp = Timestamp(10 * 86_400_000);

    #[test]
    fn filters_come_out_and_words_stay() {
        let p = parse("pool harness:codex project:api since:7d role:command file:src/auth.rs refused", NOW);
        assert_eq!(p.text, "pool refused");
        assert_eq!(p.harnesses, ["codex"]);
        assert_eq!(p.project.as_deref(), Some("api"));
        assert_eq!(p.since, Some(Timestamp(3 * 86_400_000)));
        assert_eq!(p.role.as_deref(), Some("command"));
        assert_eq!(p.file.as_deref(), Some("src/auth.rs"));
        assert!(p.problems.is_empty());
    }

    #[test]
    fn harness_repeats_and_names_are_case_blind() {
        let p = parse("Harness:Codex HARNESS:claude x", NOW);
        assert_eq!(p.harnesses, ["codex", "claude"]);
        assert_eq!(p.text, "x");
    }

    #[test]
    fn what_is_not_a_filter_is_searched() {
        // An unknown name, a URL, a filter still being typed, a colon inside a phrase.
        let p = parse("http://host:5432 todo:later since: \"role:command here\"", NOW);
        assert_eq!(p.text, "http://host:5432 todo:later since: \"role:command here\"");
        assert_eq!(p, Parsed { text: p.text.clone(), ..Parsed::default() });
    }

    #[test]
    fn a_bad_value_is_a_problem_not_a_word() {
        let p = parse("pool since:soon role:wizard", NOW);
        assert_eq!(p.text, "pool");
        assert_eq!(p.since, None);
        assert_eq!(p.role, None);
        assert_eq!(p.problems.len(), 2, "{:?}", p.problems);
        assert!(p.problems[0].contains("since:"), "{:?}", p.problems);
        assert!(p.problems[1].contains("role:wizard"), "{:?}", p.problems);
    }

    #[test]
    fn quotes_keep_phrases_whole_even_unclosed() {
        assert_eq!(tokens("a \"b c\" d"), ["a", "\"b c\"", "d"]);
        assert_eq!(tokens("a \"b c"), ["a", "\"b c"]);
        assert_eq!(tokens("  "), Vec::<&str>::new());
        assert_eq!(tokens("日本語 テスト"), ["日本語", "テスト"]);
    }

    #[test]
    fn highlight_terms_are_phrases_longest_first() {
        assert_eq!(highlight_terms("pool \"refused connections\" a"), ["refused connections", "pool"]);
        assert_eq!(highlight_terms("Pool pool"), ["pool"]);
    }
}

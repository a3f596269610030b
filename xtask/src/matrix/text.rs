//! Small text helpers shared by the Markdown and HTML renderers: paragraphs, inline
//! code spans, escaping, and the per-harness facts both renderers phrase the same way.

use super::meta::{HarnessInfo, Os};

use super::notes::HarnessNotes;

/// Text split on blank lines, each paragraph's lines joined with spaces.
pub fn paragraphs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !current.is_empty() {
                out.push(current.join(" "));
                current.clear();
            }
        } else {
            current.push(line.trim());
        }
    }
    if !current.is_empty() {
        out.push(current.join(" "));
    }
    out
}

/// One line of text: newlines and runs of spaces collapsed.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Splits text into alternating (is_code, piece) runs on backtick code spans. An
/// unmatched backtick is literal text.
pub fn code_spans(text: &str) -> Vec<(bool, &str)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('`') {
        let Some(len) = rest[open + 1..].find('`') else { break };
        if open > 0 {
            out.push((false, &rest[..open]));
        }
        out.push((true, &rest[open + 1..open + 1 + len]));
        rest = &rest[open + 2 + len..];
    }
    if !rest.is_empty() {
        out.push((false, rest));
    }
    out
}

pub fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Text with backtick spans as `<code>`, everything escaped.
pub fn html_inline(text: &str) -> String {
    code_spans(&one_line(text))
        .into_iter()
        .map(|(code, piece)| if code { format!("<code>{}</code>", html_escape(piece)) } else { html_escape(piece) })
        .collect()
}

/// Text for a Markdown paragraph: code spans kept; outside them `<` is escaped so a
/// placeholder like `<id>` is not taken for an HTML tag, and `*`, `~`, `$` and
/// word-edge `_` so globs, home paths and `$VARS` are not read as emphasis,
/// strikethrough or math.
pub fn md_inline(text: &str) -> String {
    code_spans(&one_line(text)).into_iter().map(|(code, piece)| if code { format!("`{piece}`") } else { md_escape(piece) }).collect()
}

fn md_escape(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        let word = |j: Option<usize>| j.and_then(|j| chars.get(j)).is_some_and(|c| c.is_alphanumeric());
        match c {
            '<' => out.push_str("&lt;"),
            '*' | '~' | '$' => {
                out.push('\\');
                out.push(c);
            }
            '_' if !(word(i.checked_sub(1)) && word(Some(i + 1))) => out.push_str("\\_"),
            _ => out.push(c),
        }
    }
    out
}

/// [`md_inline`] for a table cell: `|` escaped (GitHub honours `\|` inside code spans).
pub fn md_cell(text: &str) -> String {
    md_inline(text).replace('|', "\\|")
}

/// deja's overrides as Markdown: code spans, each with the older names kept for it.
pub fn md_override_list(info: &HarnessInfo) -> String {
    override_list(info, |n| format!("`{n}`"))
}

/// deja's overrides as HTML (see [`md_override_list`]).
pub fn html_override_list(info: &HarnessInfo) -> String {
    override_list(info, |n| format!("<code>{}</code>", html_escape(n)))
}

/// deja's overrides, each written by `code`, with its older names after it; `none`.
fn override_list(info: &HarnessInfo, code: impl Fn(&str) -> String) -> String {
    if info.deja_overrides.is_empty() {
        return "none".to_string();
    }
    info.deja_overrides
        .iter()
        .map(|o| {
            if o.aliases.is_empty() {
                code(&o.var)
            } else {
                let old = o.aliases.iter().map(|a| code(a)).collect::<Vec<_>>().join(", ");
                format!("{} (also {old}, its older name)", code(&o.var))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `a`, `b` and `c` as Markdown code spans joined with commas, or `none`.
pub fn md_code_list(items: &[String]) -> String {
    if items.is_empty() {
        return "none".to_string();
    }
    items.iter().map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", ")
}

pub fn html_code_list(items: &[String]) -> String {
    if items.is_empty() {
        return "none".to_string();
    }
    items.iter().map(|i| format!("<code>{}</code>", html_escape(i))).collect::<Vec<_>>().join(", ")
}

/// A default store path with the operating systems it applies to; `None` when it
/// applies everywhere.
pub struct StoreGroup<'a> {
    pub path: &'a str,
    pub os: Option<String>,
}

/// The store paths, identical paths merged across operating systems, in the order the
/// adapter lists them.
pub fn store_groups(info: &HarnessInfo) -> Vec<StoreGroup<'_>> {
    let mut groups: Vec<(&str, Vec<Os>)> = Vec::new();
    for store in &info.store_paths {
        match groups.iter_mut().find(|(p, _)| *p == store.path) {
            Some((_, oses)) => oses.push(store.os),
            None => groups.push((&store.path, vec![store.os])),
        }
    }
    groups
        .into_iter()
        .map(|(path, oses)| {
            let covers = |os: Os| oses.iter().any(|o| *o == Os::Any || *o == os || (*o == Os::Unix && matches!(os, Os::Linux | Os::Mac)));
            let everywhere = covers(Os::Linux) && covers(Os::Mac) && covers(Os::Windows);
            let os = (!everywhere).then(|| oses.iter().map(|o| o.label()).collect::<Vec<_>>().join(", "));
            StoreGroup { path, os }
        })
        .collect()
}

/// "1.2, 1.3 (2026-01-02)" or "not checked yet".
pub fn checked_label(notes: &HarnessNotes) -> String {
    match &notes.checked_on {
        Some(date) if !notes.checked_versions.is_empty() => format!("{} ({date})", notes.checked_versions.join(", ")),
        _ => "not checked yet".to_string(),
    }
}

/// What each surface is, for the legends.
pub const SURFACES: [(&str, &str, &str); 7] = [
    ("mcp", "MCP", "`deja mcp` registered as an MCP server in the harness, so the agent can call the `deja` tool itself."),
    (
        "auto-recall",
        "Auto-recall",
        "hooks or a plugin that hand the agent relevant past sessions without being asked (session start, prompt, tool use).",
    ),
    ("skill", "Skill", "a skill file that teaches the agent when and how to search its history."),
    ("command", "Command", "a slash command (`/deja`) the user types inside the harness."),
    ("resume", "Resume", "the command deja prints to reopen a found session in the harness."),
    ("handoff", "Handoff", "starting the harness with a digest of a past session (exec), or printing the digest to paste."),
    (
        "restore",
        "Restore",
        "`deja restore` writing a session deja kept back into the harness's own store, in its format, so the harness resumes it.",
    ),
];

pub fn surface_title(name: &str) -> &'static str {
    SURFACES.iter().find(|(n, _, _)| *n == name).map_or("?", |(_, title, _)| title)
}

/// The meaning of each capability status, for the legends.
pub const STATUSES: [(&str, &str); 5] = [
    ("works", "deja provides it today, and the code that does so exists."),
    ("planned", "possible with this harness; deja's side is not built yet."),
    ("unsupported", "the harness has no such mechanism."),
    ("blocked", "waiting on the harness; the page names the blocker."),
    ("unknown", "not established yet."),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::meta::{Override, StorePath};

    #[test]
    fn code_spans_split_and_tolerate_an_odd_backtick() {
        assert_eq!(code_spans("a `b` c"), vec![(false, "a "), (true, "b"), (false, " c")]);
        assert_eq!(code_spans("`x``y`"), vec![(true, "x"), (true, "y")]);
        assert_eq!(code_spans("odd ` tick"), vec![(false, "odd ` tick")]);
    }

    #[test]
    fn html_inline_escapes_inside_and_outside_code() {
        assert_eq!(html_inline("run `a <b> && c`\n  then <x>"), "run <code>a &lt;b&gt; &amp;&amp; c</code> then &lt;x&gt;");
    }

    #[test]
    fn md_cells_escape_pipes_and_placeholders() {
        assert_eq!(md_cell("matcher `Bash|Edit` for <id>"), "matcher `Bash\\|Edit` for &lt;id>");
    }

    #[test]
    fn markdown_specials_outside_code_are_escaped() {
        assert_eq!(md_inline("${HOME_DIR:-~/.x}/*.md `a*b_`"), "\\${HOME_DIR:-\\~/.x}/\\*.md `a*b_`");
        assert_eq!(md_inline("_lead and trail_"), "\\_lead and trail\\_");
    }

    #[test]
    fn paragraphs_split_on_blank_lines() {
        assert_eq!(paragraphs("a\nb\n\n\nc\n"), vec!["a b".to_string(), "c".to_string()]);
    }

    #[test]
    fn identical_store_paths_merge_and_full_coverage_drops_the_label() {
        let store = |os, path: &str| StorePath { os, path: path.to_string() };
        let info = HarnessInfo {
            store_paths: vec![store(Os::Unix, "~/.a"), store(Os::Windows, "~/.a"), store(Os::Mac, "~/Library/b")],
            ..crate::matrix::testing::info("alpha").clone()
        };
        let groups = store_groups(&info);
        assert_eq!(groups.len(), 2);
        assert_eq!((groups[0].path, groups[0].os.as_deref()), ("~/.a", None));
        assert_eq!((groups[1].path, groups[1].os.as_deref()), ("~/Library/b", Some("macOS")));
    }

    #[test]
    fn an_override_names_the_older_names_kept_for_it() {
        let var = |v: &str, aliases: &[&str]| Override { var: v.to_string(), aliases: aliases.iter().map(|a| a.to_string()).collect() };
        let info = HarnessInfo {
            deja_overrides: vec![var("DEJA_ALPHA_ROOT", &[]), var("DEJA_ALPHA_DB", &["DEJA_A_DB"])],
            ..crate::matrix::testing::info("alpha").clone()
        };
        assert_eq!(md_override_list(&info), "`DEJA_ALPHA_ROOT`, `DEJA_ALPHA_DB` (also `DEJA_A_DB`, its older name)");
        assert_eq!(
            html_override_list(&info),
            "<code>DEJA_ALPHA_ROOT</code>, <code>DEJA_ALPHA_DB</code> (also <code>DEJA_A_DB</code>, its older name)"
        );
        let none = HarnessInfo { deja_overrides: Vec::new(), ..info };
        assert_eq!(md_override_list(&none), "none");
    }
}

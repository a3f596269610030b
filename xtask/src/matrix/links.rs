//! Link checking for the generated docs: every relative link in an HTML page
//! (`href`, `src`) or a Markdown file (`[text](target)`) must name a file that exists
//! — never a directory, which a browser opening files from disk would show as a
//! listing — and every `#fragment` must name an `id` in the target. The site may not
//! load anything from elsewhere or run scripts.

use std::collections::BTreeSet;

/// Checks the links of each `(path, content)` in `files`, paths relative to the
/// workspace root with `/` separators. `load` returns the content of any file in the
/// workspace (generated or on disk), or `None` when there is no such file.
pub fn check(files: &[(String, String)], load: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let mut problems = Vec::new();
    for (path, content) in files {
        let links = if path.ends_with(".html") {
            check_html_rules(path, content, &mut problems);
            html_links(content)
        } else if path.ends_with(".md") {
            markdown_links(content)
        } else {
            continue;
        };
        for link in links {
            if let Some(problem) = check_link(path, &link, content, load) {
                problems.push(problem);
            }
        }
    }
    problems
}

fn has_scheme(link: &str) -> bool {
    link.split_once(':').is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.')
            && !scheme.contains('/')
    })
}

fn check_link(from: &str, link: &str, from_content: &str, load: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    if has_scheme(link) {
        let ok = link.starts_with("https://") || link.starts_with("http://") || link.starts_with("mailto:");
        return (!ok).then(|| format!("{from}: link `{link}` uses a scheme other than http(s)/mailto"));
    }
    let (target, fragment) = match link.split_once('#') {
        Some((t, f)) => (t, Some(f)),
        None => (link, None),
    };
    let (target_path, target_content) = if target.is_empty() {
        (from.to_string(), Some(from_content.to_string()))
    } else {
        if target.starts_with('/') {
            return Some(format!("{from}: link `{link}` is absolute; pages must open from disk, so links are relative"));
        }
        let Some(resolved) = resolve(from, target) else {
            return Some(format!("{from}: link `{link}` climbs out of the workspace"));
        };
        if target.ends_with('/') {
            return Some(format!("{from}: link `{link}` names a directory; link to a file"));
        }
        let content = load(&resolved);
        if content.is_none() {
            return Some(format!("{from}: link `{link}` → {resolved}, which does not exist"));
        }
        (resolved, content)
    };
    let fragment = fragment.filter(|f| !f.is_empty())?;
    let ids = target_content.as_deref().map(anchor_ids).unwrap_or_default();
    (!ids.contains(fragment)).then(|| format!("{from}: link `{link}` → no id `{fragment}` in {target_path}"))
}

/// `target` relative to the directory of `from`, normalised; `None` above the root.
pub fn resolve(from: &str, target: &str) -> Option<String> {
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for piece in target.split('/') {
        match piece {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// The values of `attr="…"` attributes, `&amp;` decoded.
fn attr_values(html: &str, attr: &str) -> Vec<String> {
    let needle = format!(" {attr}=\"");
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find(&needle) {
        let after = &rest[i + needle.len()..];
        let Some(end) = after.find('"') else { break };
        out.push(after[..end].replace("&amp;", "&"));
        rest = &after[end..];
    }
    out
}

fn html_links(html: &str) -> Vec<String> {
    let mut links = attr_values(html, "href");
    links.extend(attr_values(html, "src"));
    links
}

/// The `id`s a page offers: HTML `id="…"` attributes (Markdown files use `<a id>` too).
fn anchor_ids(content: &str) -> BTreeSet<String> {
    attr_values(content, "id").into_iter().collect()
}

/// `[text](target)` targets, outside code spans and fenced blocks.
fn markdown_links(md: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        for (code, piece) in super::text::code_spans(line) {
            if code {
                continue;
            }
            let mut rest = piece;
            while let Some(i) = rest.find("](") {
                let after = &rest[i + 2..];
                let Some(end) = after.find(')') else { break };
                let target = after[..end].split_whitespace().next().unwrap_or("");
                out.push(target.to_string());
                rest = &after[end..];
            }
        }
    }
    out
}

/// No scripts, and nothing loaded from another origin (stylesheets, images, frames).
fn check_html_rules(path: &str, html: &str, problems: &mut Vec<String>) {
    if html.contains("<script") {
        problems.push(format!("{path}: has a <script>; the site is plain HTML and CSS"));
    }
    for src in attr_values(html, "src") {
        if has_scheme(&src) {
            problems.push(format!("{path}: loads `{src}` from elsewhere; the site must work offline"));
        }
    }
    let mut rest = html;
    while let Some(i) = rest.find("<link ") {
        let tag_end = rest[i..].find('>').map_or(rest.len(), |e| i + e);
        let tag = &rest[i..tag_end];
        for href in attr_values(tag, "href") {
            if has_scheme(&href) {
                problems.push(format!("{path}: loads `{href}` from elsewhere; the site must work offline"));
            }
        }
        rest = &rest[tag_end..];
    }
    if html.contains("@import") || html.contains("url(http") {
        problems.push(format!("{path}: imports something from elsewhere"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(files: &[(&str, &str)]) -> Vec<String> {
        let owned: Vec<(String, String)> = files.iter().map(|(p, c)| (p.to_string(), c.to_string())).collect();
        let lookup = owned.clone();
        check(&owned, &move |p: &str| lookup.iter().find(|(q, _)| q == p).map(|(_, c)| c.clone()))
    }

    #[test]
    fn resolve_handles_dots() {
        assert_eq!(resolve("docs/site/harnesses/a.html", "../style.css").as_deref(), Some("docs/site/style.css"));
        assert_eq!(resolve("README.md", "docs/x.md").as_deref(), Some("docs/x.md"));
        assert_eq!(resolve("README.md", "../x"), None);
    }

    #[test]
    fn good_links_pass() {
        let problems = run(&[
            (
                "s/index.html",
                "<a href=\"h/a.html#store\">a</a> <a href=\"#top\">t</a> <p id=\"top\"></p> <a href=\"https://x.org/?a=1&amp;b=2\">x</a>",
            ),
            ("s/h/a.html", "<link rel=\"stylesheet\" href=\"../style.css\"><section id=\"store\"></section>"),
            ("s/style.css", "body{}"),
            ("r.md", "[m](s/index.html#top) `[not](a/link)`"),
        ]);
        assert!(problems.is_empty(), "{problems:?}");
    }

    #[test]
    fn broken_targets_fragments_and_dirs_are_reported() {
        let problems = run(&[
            (
                "s/index.html",
                "<a href=\"h/missing.html\">a</a><a href=\"h/a.html#nope\">b</a><a href=\"h/\">c</a><a href=\"/abs.html\">d</a>",
            ),
            ("s/h/a.html", "<p id=\"yes\"></p>"),
            ("r.md", "[x](docs/none.md) [y](#gone)"),
        ]);
        let joined = problems.join("\n");
        assert_eq!(problems.len(), 6, "{joined}");
        assert!(joined.contains("s/h/missing.html, which does not exist"));
        assert!(joined.contains("no id `nope` in s/h/a.html"));
        assert!(joined.contains("names a directory"));
        assert!(joined.contains("is absolute"));
        assert!(joined.contains("r.md: link `docs/none.md`"));
        assert!(joined.contains("no id `gone` in r.md"));
    }

    #[test]
    fn scripts_and_remote_assets_are_refused() {
        let problems = run(&[(
            "s/index.html",
            "<script src=\"https://cdn.example/x.js\"></script><link rel=\"stylesheet\" href=\"https://cdn.example/s.css\">",
        )]);
        let joined = problems.join("\n");
        assert!(joined.contains("has a <script>"), "{joined}");
        assert!(joined.contains("loads `https://cdn.example/x.js`"), "{joined}");
        assert!(joined.contains("loads `https://cdn.example/s.css`"), "{joined}");
    }
}

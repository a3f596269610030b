//! Minimal splices into a harness's YAML config (Goose, Hermes, Continue, aider, the
//! DeepSeek Harness layer).
//!
//! YAML has no well-kept format-preserving editor in Rust, so this module parses with
//! `saphyr-parser` (a YAML 1.2 parser that reports where every node starts and ends)
//! only to *locate* things — a mapping member, a sequence and its items, the flow `[]`
//! or `{}` that stands for an empty collection — and then splices whole lines of text
//! into the file, in the file's own indentation. Nothing is ever re-serialized.
//!
//! What this module guarantees:
//! - an edit changes only the lines of the member or item it names, plus at most the
//!   value on its parent key's line (an empty `[]`/`{}`/`~`, or a scalar promoted to a
//!   list) — every other byte, comments and blank lines included, stays as it was;
//! - new members and items are written at the indentation the file already uses (its
//!   indent step, and whether its lists are indented under their key), in LF or CRLF as
//!   the file is;
//! - a member's or an item's lines end where the next sibling begins, less trailing
//!   blank lines and comments at the sibling's indentation (they belong to what follows);
//! - an edit that would change nothing returns the text unchanged, so applying one twice
//!   equals applying it once;
//! - a file that does not parse is refused with the line and column of the error, and a
//!   shape deja cannot splice without rewriting the user's text (a non-empty flow
//!   mapping on the way, a multi-line flow list) is refused rather than rewritten.
//!
//! It does not promise that removal restores the file byte for byte: the engine gets that
//! from its pre-install copy ([`super::engine`]); removal here serves files the harness
//! or the user rewrote since.

use saphyr_parser::{Event, Parser, ScalarStyle, Span};

use super::{block, ConfigError};

/// A position in the text: 0-based line, and the byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pos {
    line: usize,
    byte: usize,
}

#[derive(Debug)]
enum Kind {
    /// A scalar: its value and whether it is YAML's null written as nothing, `~` or `null`.
    Scalar {
        value: String,
        null: bool,
    },
    Map {
        flow: bool,
        entries: Vec<(Node, Node)>,
    },
    Seq {
        flow: bool,
        items: Vec<Node>,
    },
    Alias,
}

#[derive(Debug)]
struct Node {
    kind: Kind,
    start: Pos,
    end: Pos,
    /// The line of the first node that follows this one in the text (`None`: nothing does).
    next: Option<usize>,
}

/// The text as lines (each with its `\n`), and where each begins.
struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Lines<'a> {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1).filter(|i| *i < text.len()));
        if text.is_empty() {
            starts.clear();
        }
        Lines { text, starts }
    }

    fn count(&self) -> usize {
        self.starts.len()
    }

    /// Line `i` with its newline.
    fn get(&self, i: usize) -> &'a str {
        let from = self.starts[i];
        let to = self.starts.get(i + 1).copied().unwrap_or(self.text.len());
        &self.text[from..to]
    }

    /// The byte offset where line `i` begins (the text's length past the end).
    fn start(&self, i: usize) -> usize {
        self.starts.get(i).copied().unwrap_or(self.text.len())
    }

    /// The byte offset of `(line, column in chars)`.
    fn byte(&self, line: usize, col: usize) -> usize {
        if line >= self.count() {
            return self.text.len();
        }
        let l = self.get(line);
        self.starts[line] + l.char_indices().nth(col).map(|(i, _)| i).unwrap_or(l.len())
    }
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// Blank, or only a comment.
fn is_trivia(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

fn parse_error(text: &str, e: &saphyr_parser::ScanError) -> ConfigError {
    let m = e.marker();
    let _ = text;
    ConfigError::Parse { line: m.line(), column: m.col() + 1, message: e.info().to_string() }
}

/// Parses the first document of `text` into nodes with positions; `None` for a document
/// with no content (an empty file, only comments).
fn parse(text: &str) -> Result<Option<Node>, ConfigError> {
    let lines = Lines::new(text);
    let mut events: Vec<(Event, Span)> = Vec::new();
    let mut parser = Parser::new_from_str(text);
    let mut documents = 0;
    loop {
        match parser.next_event() {
            Some(Ok((ev, span))) => {
                if matches!(ev, Event::DocumentStart(_)) {
                    documents += 1;
                }
                if matches!(ev, Event::StreamEnd) {
                    break;
                }
                if documents <= 1 {
                    events.push((ev, span));
                }
            }
            Some(Err(e)) => return Err(parse_error(text, &e)),
            None => break,
        }
    }
    let pos = |m: &saphyr_parser::Marker| {
        let line = m.line().saturating_sub(1);
        Pos { line, byte: lines.byte(line, m.col()) }
    };
    // Flatten into (kind, start, end) records, then build the tree.
    let mut i = 0;
    let content: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, (e, _))| matches!(e, Event::Scalar(..) | Event::MappingStart(..) | Event::SequenceStart(..) | Event::Alias(_)))
        .map(|(i, _)| i)
        .collect();
    while i < events.len()
        && !matches!(events[i].0, Event::Scalar(..) | Event::MappingStart(..) | Event::SequenceStart(..) | Event::Alias(_))
    {
        i += 1;
    }
    if i >= events.len() {
        return Ok(None);
    }
    let next_line =
        |last: usize| -> Option<usize> { content.iter().find(|&&c| c > last).map(|&c| events[c].1.start.line().saturating_sub(1)) };
    fn build(
        events: &[(Event, Span)],
        i: &mut usize,
        text: &str,
        pos: &dyn Fn(&saphyr_parser::Marker) -> Pos,
        next_line: &dyn Fn(usize) -> Option<usize>,
    ) -> Result<Node, ConfigError> {
        let (ev, span) = &events[*i];
        let start = pos(&span.start);
        let flow = matches!(text[start.byte..].chars().next(), Some('[' | '{'));
        let node = match ev {
            Event::Scalar(value, style, ..) => {
                let null = matches!(style, ScalarStyle::Plain) && matches!(value.as_ref(), "" | "~" | "null" | "Null" | "NULL");
                let end = pos(&span.end);
                let n = Node { kind: Kind::Scalar { value: value.to_string(), null }, start, end, next: next_line(*i) };
                *i += 1;
                return Ok(n);
            }
            Event::Alias(_) => {
                let n = Node { kind: Kind::Alias, start, end: pos(&span.end), next: next_line(*i) };
                *i += 1;
                return Ok(n);
            }
            Event::MappingStart(..) => {
                *i += 1;
                let mut entries = Vec::new();
                while *i < events.len() && !matches!(events[*i].0, Event::MappingEnd) {
                    let k = build(events, i, text, pos, next_line)?;
                    let v = build(events, i, text, pos, next_line)?;
                    entries.push((k, v));
                }
                Kind::Map { flow, entries }
            }
            Event::SequenceStart(..) => {
                *i += 1;
                let mut items = Vec::new();
                while *i < events.len() && !matches!(events[*i].0, Event::SequenceEnd) {
                    items.push(build(events, i, text, pos, next_line)?);
                }
                Kind::Seq { flow, items }
            }
            other => return Err(ConfigError::Shape(format!("unexpected YAML event {other:?}"))),
        };
        // `*i` is at the collection's end event.
        let end = events.get(*i).map(|(_, s)| pos(&s.end)).unwrap_or(Pos { line: usize::MAX, byte: text.len() });
        let n = Node { kind: node, start, end, next: next_line(*i) };
        *i += 1;
        Ok(n)
    }
    let root = build(&events, &mut i, text, &pos, &next_line)?;
    if let Kind::Scalar { null: true, .. } = root.kind {
        return Ok(None);
    }
    Ok(Some(root))
}

/// `s` as a YAML double-quoted string (a Windows path's backslashes escaped), for
/// values deja writes into YAML.
pub fn quote(s: &str) -> String {
    // A JSON string is a valid YAML double-quoted scalar, escapes included.
    serde_json::Value::from(s).to_string()
}

/// Checks that `text` parses as YAML, reporting where it does not.
pub fn check(text: &str) -> Result<(), ConfigError> {
    parse(&text.replace("\r\n", "\n")).map(|_| ())
}

/// Runs `f` on the text in LF and gives the result back in the file's line ending.
fn in_lf(text: &str, f: impl FnOnce(&str) -> Result<String, ConfigError>) -> Result<String, ConfigError> {
    if !text.contains("\r\n") {
        return f(text);
    }
    let out = f(&text.replace("\r\n", "\n"))?;
    Ok(out.replace("\r\n", "\n").replace('\n', "\r\n"))
}

/// How the file indents: its step, and whether a block list sits under its key
/// (`key:\n  - a`, the default) or at the key's column (`key:\n- a`).
#[derive(Debug, Clone, Copy)]
struct Style {
    step: usize,
    indented_lists: bool,
}

fn style_of(root: Option<&Node>, lines: &Lines) -> Style {
    let mut step = None;
    let mut indented_lists = None;
    fn walk(n: &Node, lines: &Lines, step: &mut Option<usize>, lists: &mut Option<bool>) {
        if let Kind::Map { flow: false, entries } = &n.kind {
            for (k, v) in entries {
                let kcol = indent_of(lines.get(k.start.line));
                match &v.kind {
                    Kind::Map { flow: false, entries: inner } if step.is_none() && v.start.line > k.start.line => {
                        if let Some((ik, _)) = inner.first() {
                            let c = indent_of(lines.get(ik.start.line));
                            if c > kcol {
                                *step = Some(c - kcol);
                            }
                        }
                    }
                    Kind::Seq { flow: false, items } if lists.is_none() => {
                        if let Some(first) = items.first() {
                            if first.start.line > k.start.line {
                                *lists = Some(dash_col(first, lines) > kcol);
                            }
                        }
                    }
                    _ => {}
                }
                walk(v, lines, step, lists);
            }
        }
        if let Kind::Seq { flow: false, items } = &n.kind {
            for it in items {
                walk(it, lines, step, lists);
            }
        }
    }
    if let Some(r) = root {
        walk(r, lines, &mut step, &mut indented_lists);
    }
    Style { step: step.unwrap_or(2), indented_lists: indented_lists.unwrap_or(true) }
}

/// The column of the `-` that introduces a block-list item.
fn dash_col(item: &Node, lines: &Lines) -> usize {
    let line = lines.get(item_line(item, lines));
    indent_of(line)
}

/// The line of the `-` that introduces a block-list item (the item's own line, or the
/// nearest line above it that starts with `-`, for `-\n  key: v`).
fn item_line(item: &Node, lines: &Lines) -> usize {
    let mut l = item.start.line.min(lines.count().saturating_sub(1));
    loop {
        if lines.get(l).trim_start().starts_with('-') || l == 0 {
            return l;
        }
        l -= 1;
    }
}

/// Re-indents `body` (written with a two-space step) to `step`, each line prefixed by
/// `prefix` spaces.
fn indent_body(body: &str, prefix: usize, step: usize) -> String {
    let mut out = String::new();
    for line in body.lines() {
        if line.trim().is_empty() {
            out.push('\n');
            continue;
        }
        let n = indent_of(line);
        out.push_str(&" ".repeat(prefix + n / 2 * step + n % 2));
        out.push_str(line.trim_start_matches(' '));
        out.push('\n');
    }
    out
}

/// Whether `body` is a single scalar (written inline after `key: `).
fn is_scalar(body: &str) -> bool {
    if body.trim().contains('\n') {
        return false;
    }
    matches!(parse(body), Ok(Some(Node { kind: Kind::Scalar { .. }, .. })))
}

/// `key: value` or `key:\n  <body>`, at column `col`.
fn member_text(key: &str, body: &str, col: usize, style: Style) -> String {
    let pad = " ".repeat(col);
    if is_scalar(body) {
        return format!("{pad}{key}: {}\n", body.trim());
    }
    format!("{pad}{key}:\n{}", indent_body(body, col + style.step, style.step))
}

/// A list item `- <body>` with its dash at column `col`.
fn item_text(body: &str, col: usize, style: Style) -> String {
    let indented = indent_body(body, 0, style.step);
    let mut out = String::new();
    for (n, line) in indented.lines().enumerate() {
        if n == 0 {
            out.push_str(&format!("{}- {}\n", " ".repeat(col), line));
        } else if line.is_empty() {
            out.push('\n');
        } else {
            out.push_str(&format!("{}{}\n", " ".repeat(col + 2), line));
        }
    }
    out
}

/// The lines `[from, to)` a member (its key at `key`) or a list item spans: up to the
/// next node's line (or the end), less trailing blank lines and comments indented no
/// deeper than `col`.
fn extent(first: usize, next: Option<usize>, col: usize, lines: &Lines) -> (usize, usize) {
    let mut to = next.unwrap_or(lines.count()).min(lines.count()).max(first + 1);
    while to > first + 1 {
        let l = lines.get(to - 1);
        if l.trim().is_empty() || (l.trim_start().starts_with('#') && indent_of(l) <= col) {
            to -= 1;
        } else {
            break;
        }
    }
    (first, to)
}

/// The last line (exclusive) of a block collection's content: the end of its last
/// member's or item's extent.
fn collection_end(node: &Node, lines: &Lines) -> Option<usize> {
    match &node.kind {
        Kind::Map { flow: false, entries } => entries.last().map(|(k, v)| {
            let col = indent_of(lines.get(k.start.line));
            extent(k.start.line, v.next, col, lines).1
        }),
        Kind::Seq { flow: false, items } => items.last().map(|it| {
            let l = item_line(it, lines);
            extent(l, it.next, indent_of(lines.get(l)), lines).1
        }),
        _ => None,
    }
}

fn key_name(k: &Node) -> Option<&str> {
    match &k.kind {
        Kind::Scalar { value, .. } => Some(value),
        _ => None,
    }
}

fn find<'n>(entries: &'n [(Node, Node)], key: &str) -> Option<&'n (Node, Node)> {
    entries.iter().find(|(k, _)| key_name(k) == Some(key))
}

/// A text edit: replace bytes `[from, to)` by `with`.
struct Splice {
    from: usize,
    to: usize,
    with: String,
}

/// Applies `s`. At the end of a file whose last line has no newline, the file keeps
/// ending without one: inserted lines go after a newline and lose their last one, and
/// removing the last lines takes the newline before them.
fn splice(text: &str, s: Splice) -> String {
    let mut from = s.from;
    let mut with = s.with.as_str();
    let unterminated = !text.is_empty() && !text.ends_with('\n') && s.to == text.len();
    let mut lead = "";
    if unterminated {
        with = with.strip_suffix('\n').unwrap_or(with);
        if from == text.len() && !with.is_empty() {
            lead = "\n";
        } else if with.is_empty() && from > 0 && text.as_bytes()[from - 1] == b'\n' {
            from -= 1;
        }
    }
    let mut out = String::with_capacity(text.len() + with.len() + 1);
    out.push_str(&text[..from]);
    out.push_str(lead);
    out.push_str(with);
    out.push_str(&text[s.to..]);
    out
}

/// Where `path` is, or where it would go.
enum Located<'n> {
    /// The member exists: its key and value.
    Found(&'n Node, &'n Node),
    /// The member is missing; `path[depth..]` must be created. `at` is the byte offset to
    /// insert at, `col` the column of the missing key, `value_of`: the splice that clears
    /// an empty placeholder value (`{}`, `~`) on the parent key's line first.
    Missing { depth: usize, at: usize, col: usize, clear: Option<(usize, usize)> },
}

fn locate<'n>(root: Option<&'n Node>, path: &[&str], lines: &Lines, style: Style) -> Result<Located<'n>, ConfigError> {
    let Some(mut node) = root else {
        return Ok(Located::Missing { depth: 0, at: lines.text.len(), col: 0, clear: None });
    };
    let mut parent_key: Option<&Node> = None;
    for (depth, key) in path.iter().enumerate() {
        let here = || path[..depth].join(".");
        match &node.kind {
            Kind::Map { flow: false, entries } => match find(entries, key) {
                Some((k, v)) if depth + 1 == path.len() => return Ok(Located::Found(k, v)),
                Some((k, v)) => {
                    parent_key = Some(k);
                    node = v;
                }
                None => {
                    let end = collection_end(node, lines).unwrap_or(node.start.line + 1);
                    let col = entries.first().map(|(k, _)| indent_of(lines.get(k.start.line))).unwrap_or(0);
                    return Ok(Located::Missing { depth, at: lines.start(end), col, clear: None });
                }
            },
            Kind::Map { flow: true, entries } if entries.is_empty() => {
                return empty_placeholder(node, parent_key, depth, lines, style);
            }
            Kind::Scalar { null: true, .. } => return empty_placeholder(node, parent_key, depth, lines, style),
            Kind::Map { flow: true, .. } => {
                return Err(ConfigError::Shape(format!(
                    "`{}` is a flow mapping ({{…}}) at line {}; write it as a block mapping to let deja add to it",
                    here(),
                    node.start.line + 1
                )))
            }
            _ => {
                return Err(ConfigError::Shape(format!("`{}` is not a mapping", if depth == 0 { "the top level".into() } else { here() })))
            }
        }
    }
    Err(ConfigError::Shape("empty path".into()))
}

/// A member whose value is an empty placeholder (`key:`, `key: ~`, `key: {}`): the new
/// members go on the lines right after the key, the placeholder is cleared.
fn empty_placeholder<'n>(value: &Node, key: Option<&Node>, depth: usize, lines: &Lines, style: Style) -> Result<Located<'n>, ConfigError> {
    let Some(k) = key else {
        // The whole document is `{}` or null.
        return Ok(Located::Missing { depth, at: lines.text.len(), col: 0, clear: clear_range(value, lines) });
    };
    let col = indent_of(lines.get(k.start.line)) + style.step;
    Ok(Located::Missing { depth, at: lines.start(k.start.line + 1), col, clear: clear_range(value, lines) })
}

/// The bytes of a placeholder value written on its key's line (`{}`, `[]`, `~`, `null`),
/// with the spaces before it.
fn clear_range(value: &Node, lines: &Lines) -> Option<(usize, usize)> {
    let end = if value.end.byte > value.start.byte { value.end.byte } else { return None };
    let text = lines.text;
    let mut end = end;
    match &value.kind {
        // A flow collection's reported end runs on over a comment after it: it ends at
        // the bracket after its last item.
        Kind::Seq { flow: true, items } => {
            let after = items_end(items, lines).unwrap_or(value.start.byte + 1);
            end = text[after..].find(']').map(|i| after + i + 1).unwrap_or(end);
        }
        Kind::Map { flow: true, .. } => {
            let after = value.start.byte + 1;
            end = text[after..].find('}').map(|i| after + i + 1).unwrap_or(end);
        }
        Kind::Scalar { .. } => end = scalar_end(value, lines),
        _ => {}
    }
    let mut from = value.start.byte;
    while from > 0 && text.as_bytes()[from - 1] == b' ' {
        from -= 1;
    }
    Some((from, end))
}

/// Where the last of a flow list's items ends.
fn items_end(items: &[Node], lines: &Lines) -> Option<usize> {
    items.last().map(|it| match it.kind {
        Kind::Scalar { .. } => scalar_end(it, lines),
        _ => it.end.byte,
    })
}

/// Applies a `Missing` location: clears a placeholder, then inserts `tail` (the text
/// of the missing members) at the insertion point.
fn insert_missing(text: &str, at: usize, clear: Option<(usize, usize)>, tail: &str) -> String {
    let inserted = splice(text, Splice { from: at, to: at, with: tail.to_string() });
    match clear {
        // The placeholder is on the key's line, before `at`.
        Some((from, to)) if to <= at => splice(&inserted, Splice { from, to, with: String::new() }),
        _ => inserted,
    }
}

/// The text of members `path[depth..]` nested from column `col`, the last holding `leaf`
/// (already indented text of its value, or `None` for `body` as a member body).
fn nested(path: &[&str], depth: usize, col: usize, style: Style, last: &dyn Fn(&str, usize) -> String) -> String {
    let mut out = String::new();
    let mut c = col;
    for key in &path[depth..path.len() - 1] {
        out.push_str(&format!("{}{}:\n", " ".repeat(c), key_text(key)));
        c += style.step;
    }
    out.push_str(&last(key_text(path[path.len() - 1]).as_str(), c));
    out
}

/// A key as written: plain when YAML reads it back the same, else double-quoted.
fn key_text(key: &str) -> String {
    let plain = !key.is_empty()
        && key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
        && !key.starts_with(['-', '.']);
    if plain {
        key.to_string()
    } else {
        serde_json::to_string(key).unwrap_or_else(|_| format!("\"{key}\""))
    }
}

/// Sets the member at `path` (the last element is its key) to `body`: YAML text for the
/// value written at column 0 with a two-space step (`command: "x"\nargs:\n  - mcp\n`),
/// or one scalar (`true`). Missing parents are created; an existing member is
/// replaced where it stands.
pub fn set_member(text: &str, path: &[&str], body: &str) -> Result<String, ConfigError> {
    in_lf(text, |text| {
        if path.is_empty() {
            return Err(ConfigError::Shape("empty path".into()));
        }
        let root = parse(text)?;
        let lines = Lines::new(text);
        let style = style_of(root.as_ref(), &lines);
        match locate(root.as_ref(), path, &lines, style)? {
            Located::Found(k, v) => {
                let col = indent_of(lines.get(k.start.line));
                let (from, to) = extent(k.start.line, v.next, col, &lines);
                let with = member_text(&key_text(path[path.len() - 1]), body, col, style);
                let out = splice(text, Splice { from: lines.start(from), to: lines.start(to), with });
                Ok(if out == text { text.to_string() } else { out })
            }
            Located::Missing { depth, at, col, clear } => {
                let tail = nested(path, depth, col, style, &|key, c| member_text(key, body, c, style));
                Ok(insert_missing(text, at, clear, &tail))
            }
        }
    })
}

/// Removes the member at `path` if present; a parent mapping left with no members goes
/// too (Goose refuses an `extensions:` with nothing under it).
pub fn remove_member(text: &str, path: &[&str]) -> Result<String, ConfigError> {
    in_lf(text, |text| {
        let mut path = path.to_vec();
        let mut out = text.to_string();
        while !path.is_empty() {
            let root = parse(&out)?;
            let lines = Lines::new(&out);
            let style = style_of(root.as_ref(), &lines);
            let Located::Found(k, v) = locate(root.as_ref(), &path, &lines, style)? else { break };
            let col = indent_of(lines.get(k.start.line));
            let (from, to) = extent(k.start.line, v.next, col, &lines);
            let removed = splice(&out, Splice { from: lines.start(from), to: lines.start(to), with: String::new() });
            out = removed;
            path.pop();
            if path.is_empty() {
                break;
            }
            // Does the parent still hold anything?
            let root = parse(&out)?;
            let lines = Lines::new(&out);
            match locate(root.as_ref(), &path, &lines, style)? {
                Located::Found(_, Node { kind: Kind::Map { entries, .. }, .. }) if entries.is_empty() => {}
                Located::Found(_, Node { kind: Kind::Scalar { null: true, .. }, .. }) => {}
                _ => break,
            }
        }
        Ok(out)
    })
}

/// The item's own source text (for recognising it).
fn item_source<'t>(item: &Node, lines: &Lines<'t>) -> &'t str {
    let l = item_line(item, lines);
    let (from, to) = extent(l, item.next, indent_of(lines.get(l)), lines);
    &lines.text[lines.start(from)..lines.start(to)]
}

/// Makes the list at `path` hold `body` as its one item `is_ours` accepts (it is given
/// each item's source text): replaces the first such item, drops any further ones,
/// appends when there is none. A missing list is created; an empty one (`key:`,
/// `key: []`) filled; a scalar (`read: X`) or a one-line flow list of scalars
/// (`read: [a, b]`) becomes a block list keeping each value's text.
pub fn upsert_item(text: &str, path: &[&str], is_ours: &dyn Fn(&str) -> bool, body: &str) -> Result<String, ConfigError> {
    in_lf(text, |text| {
        if path.is_empty() {
            return Err(ConfigError::Shape("empty path".into()));
        }
        let root = parse(text)?;
        let lines = Lines::new(text);
        let style = style_of(root.as_ref(), &lines);
        let (k, v) = match locate(root.as_ref(), path, &lines, style)? {
            Located::Missing { depth, at, col, clear } => {
                let tail = nested(path, depth, col, style, &|key, c| {
                    let dash = if style.indented_lists { c + style.step } else { c };
                    format!("{}{key}:\n{}", " ".repeat(c), item_text(body, dash, style))
                });
                return Ok(insert_missing(text, at, clear, &tail));
            }
            Located::Found(k, v) => (k, v),
        };
        let kcol = indent_of(lines.get(k.start.line));
        let dash = if style.indented_lists { kcol + style.step } else { kcol };
        match &v.kind {
            Kind::Seq { flow: false, items } if !items.is_empty() => {
                let mut splices = Vec::new();
                let mut replaced = false;
                for it in items {
                    if !is_ours(item_source(it, &lines)) {
                        continue;
                    }
                    let l = item_line(it, &lines);
                    let col = indent_of(lines.get(l));
                    let (from, to) = extent(l, it.next, col, &lines);
                    let with = if replaced { String::new() } else { item_text(body, col, style) };
                    replaced = true;
                    splices.push(Splice { from: lines.start(from), to: lines.start(to), with });
                }
                if !replaced {
                    let col = dash_col(&items[0], &lines);
                    let end = collection_end(v, &lines).unwrap_or(lines.count());
                    splices.push(Splice { from: lines.start(end), to: lines.start(end), with: item_text(body, col, style) });
                }
                let mut out = text.to_string();
                for s in splices.into_iter().rev() {
                    out = splice(&out, s);
                }
                Ok(out)
            }
            Kind::Seq { flow: true, items } | Kind::Seq { flow: false, items } => {
                let flow_text = if items.is_empty() { None } else { Some(flow_items(v, items, &lines, path)?) };
                let mut with = String::new();
                for raw in flow_text.iter().flatten() {
                    with.push_str(&format!("{}- {raw}\n", " ".repeat(dash)));
                }
                let ours_already = flow_text.iter().flatten().any(|raw| is_ours(raw));
                if !ours_already {
                    with.push_str(&item_text(body, dash, style));
                }
                promote(text, k, v, &lines, &with)
            }
            Kind::Scalar { null: true, .. } => promote(text, k, v, &lines, &item_text(body, dash, style)),
            Kind::Scalar { .. } => {
                let raw = &text[v.start.byte..scalar_end(v, &lines)];
                if raw.contains('\n') {
                    return Err(ConfigError::Shape(format!("`{}` is a multi-line scalar; deja will not rewrite it", path.join("."))));
                }
                let mut with = format!("{}- {raw}\n", " ".repeat(dash));
                if !is_ours(raw) {
                    with.push_str(&item_text(body, dash, style));
                }
                promote(text, k, v, &lines, &with)
            }
            _ => Err(ConfigError::Shape(format!("`{}` is not a list", path.join(".")))),
        }
    })
}

/// Where a scalar's text ends. A quoted scalar ends at its closing quote (the parser's
/// span for one in block context runs on over the comment after it); a plain one at its
/// span's end, less trailing blanks.
fn scalar_end(v: &Node, lines: &Lines) -> usize {
    let text = lines.text;
    let rest = &text[v.start.byte..];
    let mut chars = rest.char_indices();
    match chars.next() {
        Some((_, '\'')) => {
            let mut it = chars.peekable();
            while let Some((i, c)) = it.next() {
                if c == '\'' {
                    if matches!(it.peek(), Some((_, '\''))) {
                        it.next();
                        continue;
                    }
                    return v.start.byte + i + 1;
                }
            }
            text.len()
        }
        Some((_, '"')) => {
            let mut escaped = false;
            for (i, c) in chars {
                match c {
                    '\\' if !escaped => escaped = true,
                    '"' if !escaped => return v.start.byte + i + 1,
                    _ => escaped = false,
                }
            }
            text.len()
        }
        _ if v.end.byte > v.start.byte => v.start.byte + text[v.start.byte..v.end.byte].trim_end().len(),
        _ => {
            let line = lines.get(v.start.line);
            let end = lines.start(v.start.line) + line.find(" #").unwrap_or(line.trim_end().len());
            end.max(v.start.byte)
        }
    }
}

/// The source text of each scalar in a one-line flow list.
fn flow_items<'t>(v: &Node, items: &[Node], lines: &Lines<'t>, path: &[&str]) -> Result<Vec<&'t str>, ConfigError> {
    let mut out = Vec::new();
    for it in items {
        if !matches!(it.kind, Kind::Scalar { .. }) || it.start.line != v.start.line {
            return Err(ConfigError::Shape(format!(
                "`{}` is a flow list ([…]) over several lines or of collections; write it as a block list to let deja add to it",
                path.join(".")
            )));
        }
        let raw = &lines.text[it.start.byte..scalar_end(it, lines)];
        out.push(raw.trim_end_matches([',', ' ']));
    }
    Ok(out)
}

/// Clears the value on `k`'s line (a scalar, `[]`, `~`) and puts `items` (block list
/// lines) right after it.
fn promote(text: &str, k: &Node, v: &Node, lines: &Lines, items: &str) -> Result<String, ConfigError> {
    let clear = if v.start.line != k.start.line {
        None
    } else if let Kind::Scalar { null: false, .. } = v.kind {
        let mut from = v.start.byte;
        while from > 0 && text.as_bytes()[from - 1] == b' ' {
            from -= 1;
        }
        Some((from, scalar_end(v, lines)))
    } else {
        clear_range(v, lines)
    };
    Ok(insert_missing(text, lines.start(k.start.line + 1), clear, items))
}

/// Removes every item `is_ours` accepts from the list at `path`; the list's key goes too
/// when nothing is left in it (and a parent mapping left empty, as [`remove_member`]).
pub fn remove_items(text: &str, path: &[&str], is_ours: &dyn Fn(&str) -> bool) -> Result<String, ConfigError> {
    in_lf(text, |text| {
        let root = parse(text)?;
        let lines = Lines::new(text);
        let style = style_of(root.as_ref(), &lines);
        // A path that leads through something else holds no item of deja's.
        let Ok(Located::Found(_, v)) = locate(root.as_ref(), path, &lines, style) else { return Ok(text.to_string()) };
        let Kind::Seq { flow: false, items } = &v.kind else { return Ok(text.to_string()) };
        let ours: Vec<&Node> = items.iter().filter(|it| is_ours(item_source(it, &lines))).collect();
        if ours.is_empty() {
            return Ok(text.to_string());
        }
        if ours.len() == items.len() {
            return remove_member(text, path);
        }
        let mut out = text.to_string();
        for it in ours.into_iter().rev() {
            let l = item_line(it, &lines);
            let (from, to) = extent(l, it.next, indent_of(lines.get(l)), &lines);
            out = splice(&out, Splice { from: lines.start(from), to: lines.start(to), with: String::new() });
        }
        Ok(out)
    })
}

/// Makes a file whose top level is a list (the DeepSeek Harness layer) hold deja's
/// marked block of items. A document that is only the flow `[]` (which a block item
/// cannot follow) has the `[]` replaced; a block list gets the block appended, or
/// replaced where it stands.
pub fn set_list_block(text: &str, start: &str, end: &str, body: &str) -> Result<String, ConfigError> {
    in_lf(text, |text| {
        if block::has_block(text, start, end) {
            return Ok(block::set_block(text, start, end, body));
        }
        let root = parse(text)?;
        let lines = Lines::new(text);
        let base = match &root {
            None => text.to_string(),
            Some(Node { kind: Kind::Seq { flow: false, .. }, .. }) => text.to_string(),
            Some(n @ Node { kind: Kind::Seq { flow: true, items }, .. }) if items.is_empty() => {
                let (from, to) = clear_range(n, &lines).unwrap_or((n.start.byte, n.start.byte));
                let line = n.start.line;
                let rest = lines.get(line);
                let without = format!("{}{}", &text[lines.start(line)..from], &text[to..lines.start(line) + rest.len()]);
                if is_trivia(&without) && !without.trim().starts_with('#') {
                    // The line held only `[]`: it goes.
                    format!("{}{}", &text[..lines.start(line)], &text[lines.start(line) + rest.len()..])
                } else {
                    splice(text, Splice { from, to, with: String::new() })
                }
            }
            Some(_) => return Err(ConfigError::Shape("the top level is not a list".into())),
        };
        Ok(block::set_block(&base, start, end, body))
    })
}

/// Removes deja's marked block; a file left with no item is written back as `[]` (an
/// empty layer fails the DeepSeek Harness profile load).
pub fn remove_list_block(text: &str, start: &str, end: &str) -> Result<String, ConfigError> {
    in_lf(text, |text| {
        if !block::has_block(text, start, end) {
            return Ok(text.to_string());
        }
        let mut out = block::remove_block(text, start, end);
        if parse(&out)?.is_none() {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str("[]\n");
        }
        Ok(out)
    })
}

#[cfg(test)]
mod tests;

//! The work-record documents the indexer adds beside a session's turns: one `error`
//! document per error event and one `fix` document per error → fix pair (mined by
//! [`crate::mining::fixes`]), and the terms a turn gets for `how` (its command line in
//! the `work` field) and `blame` (its paths' suffixes in the `path` field).
//!
//! Records carry `seq` (the error's turn for `error`, the fix's turn for `fix`), so an
//! incremental read can drop the ones it is about to write again, and `sid`/`source`
//! like turns, so deleting a session or a source deletes them too.

use tantivy::collector::DocSetCollector;
use tantivy::query::{BooleanQuery, Occur, RangeQuery, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::{doc, TantivyDocument, Term};

use super::schema::{Fields, KIND_ERROR, KIND_FIX, KIND_TURN};
use super::{IndexError, IndexView};
use crate::mining::fixes::{mine, FIX_WINDOW};
use crate::model::{Session, Turn};

/// Path components kept as suffix terms (`a/b/c/d.rs` → `d.rs`, `c/d.rs`, …).
const MAX_SUFFIX_COMPONENTS: usize = 8;
/// Turns before an incremental read's first new turn that are mined again with it,
/// so a fix whose error was read earlier is still paired.
pub const CONTEXT_TURNS: u32 = 2 * FIX_WINDOW as u32 + 2;

/// A path as `blame` compares it: `/` separators, no trailing slash, lowercased.
pub fn normalize_path(path: &str) -> String {
    let p = path.trim().replace('\\', "/");
    let p = p.strip_prefix("file://").unwrap_or(&p);
    let trimmed = p.trim_end_matches('/');
    let p = if trimmed.is_empty() { p } else { trimmed };
    p.to_lowercase()
}

/// The terms a path is found under: its last 1..=8 components, and the whole path.
pub fn path_terms(path: &str) -> Vec<String> {
    let norm = normalize_path(path);
    let parts: Vec<&str> = norm.split('/').filter(|c| !c.is_empty() && *c != ".").collect();
    let mut out: Vec<String> = Vec::new();
    for n in 1..=parts.len().min(MAX_SUFFIX_COMPONENTS) {
        out.push(parts[parts.len() - n..].join("/"));
    }
    if !out.contains(&norm) && !norm.is_empty() {
        out.push(norm);
    }
    out
}

/// Adds a session document's project terms: `=<project>` and `^<dir>` for the
/// project and each of its ancestors (normalized as [`normalize_path`]).
pub(crate) fn add_project_terms(d: &mut TantivyDocument, f: &Fields, project: &str) {
    let norm = normalize_path(project);
    if norm.is_empty() {
        return;
    }
    d.add_text(f.path, format!("={norm}"));
    for prefix in path_prefixes(&norm) {
        d.add_text(f.path, format!("^{prefix}"));
    }
}

/// `/a/b/c` → `/a`, `/a/b`, `/a/b/c` (the path itself included).
pub fn path_prefixes(norm: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, c) in norm.char_indices() {
        if c == '/' && i > 0 {
            out.push(norm[..i].to_string());
        }
    }
    out.push(norm.to_string());
    out.dedup();
    out
}

/// Paths named in one tool output at most: a compiler's or test run's few pointers,
/// not every line of a listing.
const MAX_MENTIONED_PATHS: usize = 32;

/// The file paths a tool's output names — `src/main.rs:3:5` in a compiler error,
/// `File "manage.py", line 22` in a traceback, `at f (/app/x.js:10:5)` in a stack, a
/// path a test runner printed — as written, without the line and column, at most
/// [`MAX_MENTIONED_PATHS`], first seen first. A word counts when it has a `/` or `\`
/// with a name after it, or ends in a dotted extension that starts with a letter
/// (`main.rs`, not `1.2.3`); URLs do not count.
///
/// Every tool output of a build passes through here, so words are found with a byte
/// table, and only a word with a `/`, `\\` or `.` (which any path has) is looked at
/// further.
pub fn mentioned_paths(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < bytes.len() && out.len() < MAX_MENTIONED_PATHS {
        if PATH_BYTE[bytes[i] as usize] == 0 {
            i += 1;
            continue;
        }
        let start = i;
        let mut marks = 0u8;
        loop {
            let class = bytes.get(i).map_or(0, |&b| PATH_BYTE[b as usize]);
            if class != 0 {
                marks |= class;
                i += 1;
            } else if i == start + 1 && bytes.get(i) == Some(&b':') && matches!(bytes.get(i + 1), Some(b'\\' | b'/')) {
                // A drive letter: `C:\work\main.go`.
                i += 1;
            } else {
                break;
            }
        }
        // `https://x/y`: the scheme's colon ends the word just before `//`.
        if text[i..].starts_with("://") {
            while i < bytes.len() && !bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            continue;
        }
        if marks & PATH_MARK == 0 {
            continue;
        }
        let word = text[start..i].trim_end_matches(['.', '-']);
        if looks_like_path(word) && !out.iter().any(|o| o == word) {
            out.push(word.to_string());
        }
    }
    out
}

/// [`PATH_BYTE`]'s class of a byte that can be in a path word, and of one that marks it
/// as a candidate (a separator or a dot).
const PATH_WORD: u8 = 1;
const PATH_MARK: u8 = 2;

/// Per byte: 0 outside a path word, else [`PATH_WORD`], with [`PATH_MARK`] for `/`,
/// `\\` and `.`.
static PATH_BYTE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'~' | b'+' | b'@') {
            table[b] = PATH_WORD;
        } else if matches!(c, b'/' | b'\\' | b'.') {
            table[b] = PATH_WORD | PATH_MARK;
        }
        b += 1;
    }
    table
};

fn looks_like_path(word: &str) -> bool {
    if word.len() < 3 || word.len() > 512 {
        return false;
    }
    let name = word.rsplit(['/', '\\']).next().unwrap_or(word);
    let has_dir = name.len() < word.len() && !name.is_empty();
    let extension = name.rsplit_once('.').filter(|(stem, ext)| {
        !stem.is_empty()
            && (1..=10).contains(&ext.len())
            && ext.starts_with(|c: char| c.is_ascii_alphabetic())
            && ext.bytes().all(|b| b.is_ascii_alphanumeric())
    });
    // A directory alone (`/usr/bin`) is a path too, but one of a single letter or a
    // fraction (`a/b`, `1/2`) is not worth a term.
    extension.is_some()
        || (has_dir && name.len() > 1 && name.bytes().any(|b| b.is_ascii_alphabetic()) && word.matches(['/', '\\']).count() >= 2)
}

/// Adds the `work` and `path` terms of one turn document.
pub(crate) fn add_turn_terms(d: &mut TantivyDocument, f: &Fields, turn: &Turn) {
    if let Some(cmd) = turn.tool.as_ref().and_then(|t| t.command.as_deref()) {
        d.add_text(f.work, cmd);
    }
    let paths = turn.files.iter().map(|x| x.path.as_str()).chain(turn.edit.iter().map(|e| e.path.as_str()));
    // A file a compiler or test run pointed at was discussed, so `blame` finds it too.
    let mentioned = if names_paths(turn) { mentioned_paths(&turn.text) } else { Vec::new() };
    let mut seen: Vec<String> = Vec::new();
    for p in paths.chain(mentioned.iter().map(String::as_str)) {
        for t in path_terms(p) {
            if !seen.contains(&t) {
                d.add_text(f.path, &t);
                seen.push(t);
            }
        }
    }
}

/// True for a turn whose text is a tool's output (where [`mentioned_paths`] are read).
pub fn names_paths(turn: &Turn) -> bool {
    turn.tool.is_some() || matches!(turn.role, crate::model::Role::ToolCall | crate::model::Role::ToolOutput)
}

/// The `error` and `fix` documents of a session. `context` holds turns indexed by an
/// earlier read (immediately before `s.turns`); only records anchored in `s.turns`
/// are returned.
pub(crate) fn work_documents(f: &Fields, s: &Session, source_key: &str, context: &[Turn], fallback_time: i64) -> Vec<TantivyDocument> {
    let first_new = s.turns.first().map_or(u32::MAX, |t| t.seq);
    let all: Vec<Turn>;
    let turns: &[Turn] = if context.is_empty() {
        &s.turns
    } else {
        all = context.iter().filter(|t| t.seq < first_new).chain(s.turns.iter()).cloned().collect();
        &all
    };
    let mined = mine(turns);
    let time_of = |seq: u32| turns.iter().find(|t| t.seq == seq).and_then(|t| t.time).map_or(fallback_time, |t| t.0);
    let sid = s.key();
    let sid_hash = xxhash_rust::xxh3::xxh3_64(sid.as_bytes());
    let base = |kind: &str, seq: u32, sig: &str, work: &str, extra: String| -> TantivyDocument {
        doc!(
            f.kind => kind,
            f.sid => sid.as_str(),
            f.sid_hash => sid_hash,
            f.harness => s.harness.as_str(),
            f.source => source_key,
            f.seq => seq as u64,
            f.time => time_of(seq),
            f.sig => sig,
            f.work => work,
            f.extra => extra,
        )
    };
    let mut docs = Vec::new();
    for e in mined.errors.iter().filter(|e| e.seq >= first_new) {
        docs.push(base(KIND_ERROR, e.seq, &e.sig, &e.line, serde_json::to_string(e).unwrap_or_default()));
    }
    for p in mined.fixes.iter().filter(|p| p.fix_seq >= first_new) {
        docs.push(base(KIND_FIX, p.fix_seq, &p.sig, &p.error_line, serde_json::to_string(p).unwrap_or_default()));
    }
    docs
}

/// The query for a session's work records at or after `seq` (what an incremental
/// read is about to write again).
pub(crate) fn records_from(f: &Fields, sid: &str, seq: u32) -> Box<dyn tantivy::query::Query> {
    let kinds = BooleanQuery::new(vec![
        (
            Occur::Should,
            Box::new(TermQuery::new(Term::from_field_text(f.kind, KIND_ERROR), IndexRecordOption::Basic)) as Box<dyn tantivy::query::Query>,
        ),
        (Occur::Should, Box::new(TermQuery::new(Term::from_field_text(f.kind, KIND_FIX), IndexRecordOption::Basic))),
    ]);
    Box::new(BooleanQuery::new(vec![
        (Occur::Must, Box::new(TermQuery::new(Term::from_field_text(f.sid, sid), IndexRecordOption::Basic))),
        (Occur::Must, Box::new(kinds)),
        (
            Occur::Must,
            Box::new(RangeQuery::new(std::ops::Bound::Included(Term::from_field_u64(f.seq, seq as u64)), std::ops::Bound::Unbounded)),
        ),
    ]))
}

impl IndexView {
    /// The indexed turns of a session with `from <= seq < to`, in order.
    pub fn turns_between(&self, sid: &str, from: u32, to: u32) -> Result<Vec<Turn>, IndexError> {
        let searcher = self.searcher();
        let q = BooleanQuery::new(vec![
            (Occur::Must, self.kind_term(KIND_TURN)),
            (Occur::Must, Box::new(TermQuery::new(Term::from_field_text(self.fields.sid, sid), IndexRecordOption::Basic))),
            (
                Occur::Must,
                Box::new(RangeQuery::new(
                    std::ops::Bound::Included(Term::from_field_u64(self.fields.seq, from as u64)),
                    std::ops::Bound::Excluded(Term::from_field_u64(self.fields.seq, to as u64)),
                )),
            ),
        ]);
        let addrs = searcher.search(&q, &DocSetCollector).map_err(|e| IndexError::Query(e.to_string()))?;
        let mut turns = Vec::with_capacity(addrs.len());
        for addr in addrs {
            let doc: TantivyDocument = searcher.doc(addr).map_err(|e| IndexError::Query(e.to_string()))?;
            turns.push(self.turn_from_doc(&doc));
        }
        turns.sort_by_key(|t| t.seq);
        Ok(turns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_walk_down_the_tree() {
        assert_eq!(path_prefixes("/src/app/sub"), vec!["/src", "/src/app", "/src/app/sub"]);
        assert_eq!(path_prefixes("c:/work"), vec!["c:", "c:/work"]);
    }

    #[test]
    fn tool_output_names_paths_as_compilers_and_runtimes_print_them() {
        let out = "error[E0425]: cannot find value `x`\n --> src/main.rs:3:5\n  File \"manage.py\", line 22, in <module>\n    at run (/app/lib/x.js:10:5)\n./invoice/round.go:12:3: undefined: Floor\nC:\\work\\api\\main.go:7 boom";
        assert_eq!(mentioned_paths(out), ["src/main.rs", "manage.py", "/app/lib/x.js", "./invoice/round.go", "C:\\work\\api\\main.go"]);
        // Not paths: versions, URLs, fractions, sentences ending in a period.
        let none = "bumped 1.2.3 to 1.2.4, see https://example.com/a/b.html and a/b or 1/2. Done.";
        assert_eq!(mentioned_paths(none), Vec::<String>::new());
        // Words with no separator or dot are passed over whole, whatever else they hold.
        assert_eq!(mentioned_paths("plain words-with_dashes+ok@x then ~/proj/Cargo.toml."), ["~/proj/Cargo.toml"]);
        let listing: String = (0..100).map(|i| format!("src/f{i}.rs\n")).collect();
        assert_eq!(mentioned_paths(&listing).len(), MAX_MENTIONED_PATHS);
    }

    #[test]
    fn path_terms_are_suffixes_and_the_whole_path() {
        assert_eq!(
            path_terms("/src/app/src/Pool.rs"),
            vec!["pool.rs", "src/pool.rs", "app/src/pool.rs", "src/app/src/pool.rs", "/src/app/src/pool.rs"]
        );
        assert_eq!(path_terms("C:\\work\\api\\main.go"), vec!["main.go", "api/main.go", "work/api/main.go", "c:/work/api/main.go"]);
        assert_eq!(path_terms("./README.md"), vec!["readme.md", "./readme.md"]);
        let deep = path_terms("/a/b/c/d/e/f/g/h/i/j.rs");
        assert_eq!(deep.len(), MAX_SUFFIX_COMPONENTS + 1);
        assert_eq!(deep.last().map(String::as_str), Some("/a/b/c/d/e/f/g/h/i/j.rs"));
    }
}

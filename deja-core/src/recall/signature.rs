//! Error lines and their signatures.
//!
//! An error is recognised by the shape of a line (`error[E0425]:`, `ModuleNotFoundError:`,
//! `panicked at`, `--- FAIL:`, `command not found`, …) and matched by a normalized
//! signature rather than by its words: numbers, hex ids, UUIDs, line/column numbers and
//! the directory part of paths are replaced, so the same error from another checkout,
//! another line or another run has the same signature. Error codes that are part of an
//! identifier (`E0425`, `TS2304`) and quoted names (`'psycopg2'`) are kept, because they
//! are what distinguishes one error from another.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

/// Longest signature kept, in chars.
pub const MAX_SIGNATURE_CHARS: usize = 160;
/// Error lines taken from one output.
pub const MAX_ERRORS_PER_OUTPUT: usize = 3;
/// Lines longer than this are cut before they are looked at.
const MAX_LINE_BYTES: usize = 600;

static ANSI: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]").expect("static regex"));

/// Lines that name a specific error.
static SPECIFIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?x)
        \berror(?:\[[A-Za-z]*\d+\])?:\s*\S |
        \berror\s+[A-Z]+\d+:\s*\S |
        \b[A-Z][A-Za-z0-9_.]*(?:Error|Exception)\b(?::|\s*$) |
        \bpanicked\ at\b |
        ^\s*fatal:\s |
        ^\s*(?:ERROR|FATAL|Error|Fatal)\b[:\s] |
        \bcommand\ not\ found\b |
        \bNo\ such\ file\ or\ directory\b |
        \bPermission\ denied\b |
        \bnpm\ (?:ERR!|error)\s |
        ^\s*E:\s |
        \bSegmentation\ fault\b |
        \bundefined\ reference\ to\b |
        \b[Cc]onnection\ refused\b |
        ^\s*---\ FAIL:\s |
        ^\s*FAIL(?:ED)?[:\s]\s*\S |
        \bcannot\ find\ (?:module|symbol|package|value|type|crate|name)\b |
        \bnot\ found\ in\ this\ scope\b |
        \bmake(?:\[\d+\])?:\ \*\*\*
    ",
    )
    .expect("static regex")
});

/// Lines that only summarise errors reported above them.
static SUMMARY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?ix)
        could\ not\ compile | due\ to\ \d+\ previous\ errors? | aborting\ due\ to | ^\s*traceback\b |
        ^\s*test\ result: | \b0\ (?:errors|failed)\b | warnings?\ emitted | ^\s*error:\ process\ didn't\ exit |
        ^\s*error:\ test\ failed | ^\s*FAILED\s*$ | ^\s*FAIL\s*$
    ",
    )
    .expect("static regex")
});

static UUID: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b").expect("static regex"));
static HEX: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?i)\b0x[0-9a-f]+\b|\b[0-9a-f]*\d[0-9a-f]*\b").expect("static regex"));
/// A path with at least one separator; the last component is kept.
static PATH: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(?:[A-Za-z]:)?(?:[\w.~@+-]*[/\\])+([\w.@+-]*)").expect("static regex"));
static SPACE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\s+").expect("static regex"));

/// Removes ANSI escape sequences (colours, cursor moves, OSC titles).
pub fn strip_ansi(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\x1b') {
        ANSI.replace_all(text, "")
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// The error lines of a tool output, most specific first, at most
/// [`MAX_ERRORS_PER_OUTPUT`] with distinct signatures. Summary lines (`could not
/// compile…`, `test result: FAILED…`) count only when nothing more specific is there.
///
/// Linear in the output: a pasted log can hold thousands of distinct error-shaped lines
/// (only the specific ones stop the scan early), so the signatures already seen are a
/// hash set, and of the summaries only the first is kept, since only it can be returned.
pub fn error_lines(output: &str) -> Vec<String> {
    let clean = strip_ansi(output);
    let mut specific: Vec<String> = Vec::new();
    let mut first_summary: Option<String> = None;
    let mut seen: HashSet<Seen> = HashSet::new();
    for raw in clean.lines() {
        let line = cut(raw.trim(), MAX_LINE_BYTES);
        if line.len() < 4 || !SPECIFIC.is_match(line) {
            continue;
        }
        let sig = signature(line);
        // A summary's signature is remembered too, so a later specific line with the
        // same signature is still a repeat, as it always was.
        if sig.is_empty() || !seen.insert(Seen(sig)) {
            continue;
        }
        if SUMMARY.is_match(line) {
            first_summary.get_or_insert_with(|| line.to_string());
        } else {
            specific.push(line.to_string());
            if specific.len() == MAX_ERRORS_PER_OUTPUT {
                break;
            }
        }
    }
    if specific.is_empty() {
        return first_summary.into_iter().collect();
    }
    specific
}

/// A signature in [`error_lines`]' set of those seen. Its own equality so that the
/// tests can count comparisons: the complexity test holds the scan to a number of
/// comparisons proportional to the lines, which a list searched per line would not be.
struct Seen(String);

impl PartialEq for Seen {
    fn eq(&self, other: &Self) -> bool {
        #[cfg(test)]
        tests::COMPARISONS.with(|c| c.set(c.get() + 1));
        self.0 == other.0
    }
}

impl Eq for Seen {}

impl std::hash::Hash for Seen {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

/// True when `line` looks like an error line.
pub fn is_error_line(line: &str) -> bool {
    SPECIFIC.is_match(line)
}

/// The normalized signature of one error line (see the module doc). Empty when the
/// line has nothing left after normalization.
pub fn signature(line: &str) -> String {
    let line = strip_ansi(cut(line.trim(), MAX_LINE_BYTES)).into_owned();
    let line = UUID.replace_all(&line, "<id>");
    let line = PATH.replace_all(&line, "$1");
    let line = HEX.replace_all(&line, |c: &regex::Captures| {
        let m = &c[0];
        // Plain numbers are handled below; long hex runs are ids.
        if m.len() >= 7 && m.chars().any(|ch| ch.is_ascii_alphabetic()) || m.starts_with("0x") || m.starts_with("0X") {
            "<hex>".to_string()
        } else {
            m.to_string()
        }
    });
    let line = replace_numbers(&line);
    let line = SPACE.replace_all(line.trim(), " ");
    let lower = line.to_lowercase();
    let trimmed = lower.trim().trim_end_matches(|c: char| c.is_whitespace() || matches!(c, '.' | ',' | ';' | ':'));
    let mut out: String = trimmed.chars().take(MAX_SIGNATURE_CHARS).collect();
    if out.chars().all(|c| !c.is_alphanumeric()) {
        out.clear();
    }
    out
}

/// Replaces every number that does not continue an identifier (`line 42`, `0.01s`,
/// `:12:5`) with `#`, keeping `E0425`, `x86_64`, `v2`.
fn replace_numbers(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let prev_is_word = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if c.is_ascii_digit() && !prev_is_word {
            while i < chars.len() && (chars[i].is_ascii_digit() || (matches!(chars[i], '.' | ',') && next_is_digit(&chars, i))) {
                i += 1;
            }
            out.push('#');
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

fn next_is_digit(chars: &[char], i: usize) -> bool {
    chars.get(i + 1).is_some_and(char::is_ascii_digit)
}

/// The first `max` bytes of `s` on a char boundary.
fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The signatures a pasted error text stands for: those of its error lines, else that of
/// its first non-empty line.
pub fn signatures_of_paste(text: &str) -> Vec<(String, String)> {
    let mut lines = error_lines(text);
    if lines.is_empty() {
        if let Some(first) = strip_ansi(text).lines().map(str::trim).find(|l| !l.is_empty()) {
            lines.push(cut(first, MAX_LINE_BYTES).to_string());
        }
    }
    lines.into_iter().map(|l| (signature(&l), l)).filter(|(s, _)| !s.is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    thread_local! {
        /// Signature comparisons made by [`error_lines`] on this thread.
        pub(super) static COMPARISONS: Cell<u64> = const { Cell::new(0) };
    }

    /// `n` distinct summary lines (which never end the scan), each twice, so every
    /// second one is a repeat the scan must recognise. Names are letters only: digits
    /// would be normalized away and make the lines one signature.
    fn paste_of(n: usize) -> String {
        let name = |mut i: usize| {
            let mut s = String::new();
            loop {
                s.push(char::from(b'a' + (i % 26) as u8));
                i /= 26;
                if i == 0 {
                    return s;
                }
            }
        };
        (0..n).flat_map(|i| [i, i]).map(|i| format!("error: could not compile `{}` (lib)\n", name(i))).collect()
    }

    fn comparisons_for(paste: &str) -> (Vec<String>, u64) {
        COMPARISONS.with(|c| c.set(0));
        let lines = error_lines(paste);
        (lines, COMPARISONS.with(Cell::get))
    }

    #[test]
    fn error_lines_is_linear_in_distinct_lines() {
        // Counted, not timed: a list of seen signatures makes about n² comparisons here
        // (25 million at n = 5000), a set about one per repeated line.
        let (small_lines, small) = comparisons_for(&paste_of(2500));
        let (big_lines, big) = comparisons_for(&paste_of(5000));
        assert_eq!(small_lines, vec!["error: could not compile `a` (lib)".to_string()]);
        assert_eq!(big_lines, small_lines);
        assert!(small >= 2500, "every repeat is compared at least once: {small}");
        assert!(big <= 2 * 5000, "{big} comparisons for 10000 lines");
        assert!(big <= 2 * small + 2 * 2500, "doubling the lines took {small} to {big} comparisons");
    }

    #[test]
    fn same_error_elsewhere_has_the_same_signature() {
        let a = signature("error[E0425]: cannot find value `pool_size` in this scope");
        assert_eq!(a, "error[e0425]: cannot find value `pool_size` in this scope");
        assert_eq!(
            signature("/home/dana/app/src/main.rs:12:5: error: expected ';' before '}' token"),
            signature("/srv/other/checkout/src/main.rs:48:17: error: expected ';' before '}' token"),
        );
        assert_eq!(signature("--- FAIL: TestRoundHalfEven (0.00s)"), signature("--- FAIL: TestRoundHalfEven (12.31s)"));
        assert_eq!(signature("--- FAIL: TestRoundHalfEven (0.00s)"), "--- fail: testroundhalfeven (#s)");
        assert_eq!(
            signature("thread 'main' panicked at src/lib.rs:10:5: index out of bounds: the len is 3 but the index is 7"),
            signature("thread 'main' panicked at /x/y/src/lib.rs:99:1: index out of bounds: the len is 0 but the index is 1"),
        );
        assert_eq!(
            signature("Error: request 3f2a9c1e-0b1d-4c2e-9f00-123456789abc failed at 0x7ffee3b1c"),
            "error: request <id> failed at <hex>"
        );
        assert_eq!(signature("commit a3f9c2d1e0 not found"), "commit <hex> not found");
    }

    #[test]
    fn different_errors_differ() {
        assert_ne!(
            signature("ModuleNotFoundError: No module named 'psycopg2'"),
            signature("ModuleNotFoundError: No module named 'requests'")
        );
        assert_ne!(signature("error[E0425]: cannot find value `x`"), signature("error[E0433]: cannot find value `x`"));
    }

    #[test]
    fn ansi_is_ignored() {
        assert_eq!(signature("\x1b[31merror\x1b[0m: linker `cc` not found"), signature("error: linker `cc` not found"));
    }

    #[test]
    fn error_lines_prefer_the_specific_ones() {
        let out = "   Compiling app v0.1.0\nerror[E0425]: cannot find value `pool_size` in this scope\n  --> src/pool.rs:42:9\n\
                   error: could not compile `app` (lib) due to 1 previous error\n";
        assert_eq!(error_lines(out), vec!["error[E0425]: cannot find value `pool_size` in this scope".to_string()]);
        let py = "Traceback (most recent call last):\n  File \"manage.py\", line 3, in <module>\nModuleNotFoundError: No module named 'psycopg2'\n";
        assert_eq!(error_lines(py), vec!["ModuleNotFoundError: No module named 'psycopg2'".to_string()]);
        assert_eq!(error_lines("bash: line 1: pgcli: command not found"), vec!["bash: line 1: pgcli: command not found".to_string()]);
        assert!(error_lines("all good\n0 errors, 3 warnings emitted").is_empty());
        assert!(error_lines("Compiling\nFinished dev profile").is_empty());
        let many: String = (0..50).map(|i| format!("error[E0{i:03}]: thing {i}\n")).collect();
        assert_eq!(error_lines(&many).len(), MAX_ERRORS_PER_OUTPUT);
    }

    #[test]
    fn a_paste_without_an_error_shape_uses_its_first_line() {
        let got = signatures_of_paste("\n  pool exhausted after 30s waiting\nmore");
        assert_eq!(got, vec![("pool exhausted after #s waiting".to_string(), "pool exhausted after 30s waiting".to_string())]);
        assert!(signatures_of_paste("   \n").is_empty());
    }

    #[test]
    fn numbers_inside_identifiers_stay() {
        assert_eq!(replace_numbers("x86_64 E0425 line 42 v2 0.01s :12:5"), "x86_64 E0425 line # v2 #s :#:#");
    }
}

//! Text measured in terminal cells: cutting and wrapping by display width (a CJK
//! character or most emoji take two cells, a combining mark none), and finding the
//! query's words in a line to highlight them.
//!
//! Widths come from `unicode-width`, the table ratatui itself measures with, so what
//! is cut here fits exactly where ratatui draws it.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Cells `s` takes.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// `s` cut to at most `max` cells, ending in `…` when cut.
pub fn fit(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > max - 1 {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// `s` padded with spaces (or cut) to exactly `cells` cells.
pub fn pad(s: &str, cells: usize) -> String {
    let mut out = fit(s, cells);
    let w = width(&out);
    out.push_str(&" ".repeat(cells.saturating_sub(w)));
    out
}

/// History text made safe to draw: secrets redacted, escape sequences and control
/// characters gone, tabs as spaces (a terminal would move the cursor for them, and
/// ratatui would measure them as nothing).
pub fn safe(s: &str) -> String {
    deja_core::recall::frame::terminal_safe(s).replace('\t', "    ").replace('\r', "")
}

/// `line` (no newlines) broken into rows of at most `cells` cells, at spaces where it
/// can, mid-word where a word alone is wider than a row. Never returns no rows.
pub fn wrap(line: &str, cells: usize) -> Vec<String> {
    let cells = cells.max(1);
    if width(line) <= cells {
        return vec![line.to_string()];
    }
    let mut rows: Vec<String> = Vec::new();
    let mut row = String::new();
    let mut used = 0;
    // Words keep the space before them, so a break drops only that space.
    for word in line.split_inclusive(' ') {
        let w = width(word);
        let bare = width(word.trim_end_matches(' '));
        if used + bare > cells && used > 0 {
            rows.push(std::mem::take(&mut row).trim_end().to_string());
            used = 0;
        }
        if w <= cells.saturating_sub(used) || bare <= cells.saturating_sub(used) {
            row.push_str(word);
            used += w;
            continue;
        }
        // A word wider than a row: cut by characters.
        for c in word.chars() {
            let cw = c.width().unwrap_or(0);
            if used + cw > cells && used > 0 {
                rows.push(std::mem::take(&mut row));
                used = 0;
            }
            row.push(c);
            used += cw;
        }
    }
    if !row.trim_end().is_empty() || rows.is_empty() {
        rows.push(row.trim_end().to_string());
    }
    rows
}

/// Byte ranges of `line` where one of `terms` (lowercase) occurs, case-blind, in order
/// and not overlapping. Matching lowercases character by character, so the ranges are
/// always on `line`'s own character boundaries.
pub fn find_terms(line: &str, terms: &[String]) -> Vec<(usize, usize)> {
    if terms.is_empty() || line.is_empty() {
        return Vec::new();
    }
    // Each character of `line` lowered on its own, with its byte range in `line`.
    let mut lower = String::with_capacity(line.len());
    let mut origin: Vec<(usize, usize)> = Vec::with_capacity(line.len());
    for (i, c) in line.char_indices() {
        let end = i + c.len_utf8();
        for l in c.to_lowercase() {
            lower.push(l);
            for _ in 0..l.len_utf8() {
                origin.push((i, end));
            }
        }
    }
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut at = 0;
    while at < lower.len() {
        let found = terms
            .iter()
            .filter(|t| !t.is_empty())
            .filter_map(|t| lower[at..].find(t.as_str()).map(|p| (at + p, at + p + t.len())))
            .min_by_key(|&(s, e)| (s, std::cmp::Reverse(e)));
        let Some((s, e)) = found else { break };
        let (start, _) = origin[s];
        let (_, end) = origin[e - 1];
        out.push((start, end));
        at = e;
        // Step to the next character boundary of `lower`.
        while at < lower.len() && !lower.is_char_boundary(at) {
            at += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_count_cells_not_characters() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("日本"), 4);
        assert_eq!(width("🦀"), 2);
        assert_eq!(fit("日本語のテキスト", 7), "日本語…");
        assert_eq!(width(&fit("日本語のテキスト", 7)), 7);
        assert_eq!(fit("🦀🦀🦀", 4), "🦀…");
        assert_eq!(fit("short", 10), "short");
        assert_eq!(fit("anything", 0), "");
        assert_eq!(pad("日本", 6), "日本  ");
    }

    #[test]
    fn wrap_breaks_at_spaces_and_inside_long_words() {
        assert_eq!(wrap("the quick brown fox", 9), ["the quick", "brown fox"]);
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(wrap("日本語のテキスト", 6), ["日本語", "のテキ", "スト"]);
        assert_eq!(wrap("", 5), [""]);
        for row in wrap("🦀 crab 🦀🦀🦀🦀 rust 漢字漢字漢字", 5) {
            assert!(width(&row) <= 5, "{row:?}");
        }
    }

    #[test]
    fn terms_are_found_case_blind_on_character_boundaries() {
        let terms = vec!["pool".to_string()];
        assert_eq!(find_terms("The POOL and the pool", &terms), [(4, 8), (17, 21)]);
        // `İ` lowercases to two characters: the range still ends on `line`'s boundary.
        let line = "İpool x";
        let r = find_terms(line, &terms);
        assert_eq!(r.len(), 1);
        assert_eq!(&line[r[0].0..r[0].1], "pool");
        let cjk = vec!["東京".to_string()];
        assert_eq!(find_terms("明日は東京へ", &cjk), [(9, 15)]);
        assert!(find_terms("nothing here", &terms).is_empty());
    }

    #[test]
    fn safe_drops_escape_sequences() {
        let s = safe("ok\u{1b}[2Jgone\tthere");
        assert!(!s.contains('\u{1b}'), "{s:?}");
        assert!(s.contains("    there"), "{s:?}");
    }
}

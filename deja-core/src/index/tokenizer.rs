//! The index tokenizer: lowercase words, code identifiers split into their parts
//! with the whole kept too, paths and other compounds kept whole, CJK as overlapping
//! bigrams.
//!
//! `getUserProfile` → `getuserprofile`, `get`, `user`, `profile`; `src/auth.rs` →
//! `src/auth.rs`, `src`, `auth`, `rs`. The compound sits at the position of its first
//! part and the parts take consecutive positions, so both `getUserProfile` and the
//! phrase "get user profile" match either spelling.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

pub const TOKENIZER_NAME: &str = "deja";

/// Longest part and compound kept; longer runs are blobs (hashes, base64), not words.
const MAX_PART_BYTES: usize = 48;
const MAX_COMPOUND_BYTES: usize = 96;

#[derive(Clone, Default)]
pub struct DejaTokenizer {
    tokens: Vec<Token>,
}

pub struct DejaTokenStream<'a> {
    tokens: &'a mut Vec<Token>,
    index: usize,
}

impl Tokenizer for DejaTokenizer {
    type TokenStream<'a> = DejaTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> DejaTokenStream<'a> {
        self.tokens.clear();
        let mut position = 0usize;
        for_each_word(text, &mut |word| {
            emit_word(&word, &mut position, &mut self.tokens);
        });
        DejaTokenStream { tokens: &mut self.tokens, index: usize::MAX }
    }
}

impl TokenStream for DejaTokenStream<'_> {
    fn advance(&mut self) -> bool {
        self.index = self.index.wrapping_add(1);
        self.index < self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.index]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.index]
    }
}

/// One query or text word: its lowercased parts and, when it has several, the
/// lowercased compound.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub compound: Option<String>,
    pub parts: Vec<String>,
    /// Byte range of the word in the text.
    pub start: usize,
    pub end: usize,
    /// CJK bigram runs are phrases of bigrams rather than parts of an identifier.
    pub cjk: bool,
}

fn emit_word(word: &Word, position: &mut usize, out: &mut Vec<Token>) {
    if word.parts.is_empty() {
        return;
    }
    if let Some(c) = &word.compound {
        out.push(Token {
            offset_from: word.start,
            offset_to: word.end,
            position: *position,
            text: c.clone(),
            position_length: word.parts.len(),
        });
    }
    for (i, p) in word.parts.iter().enumerate() {
        out.push(Token { offset_from: word.start, offset_to: word.end, position: *position + i, text: p.clone(), position_length: 1 });
    }
    *position += word.parts.len();
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0xAC00..=0xD7AF | 0x1100..=0x11FF | 0x20000..=0x2FA1F)
}

fn is_word_char(c: char) -> bool {
    (c.is_alphanumeric() || c == '_') && !is_cjk(c)
}

fn is_connector(c: char) -> bool {
    matches!(c, '-' | '.' | '/' | '\\' | ':' | '@' | '+' | '~' | '#')
}

/// Calls `f` for every word of `text` in order (see the module doc).
pub fn for_each_word(text: &str, f: &mut impl FnMut(Word)) {
    let mut chars = text.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if is_cjk(c) {
            let mut run: Vec<(usize, char)> = Vec::new();
            while let Some(&(i, c)) = chars.peek() {
                if !is_cjk(c) {
                    break;
                }
                run.push((i, c));
                chars.next();
            }
            let end = run.last().map_or(start, |(i, c)| i + c.len_utf8());
            let parts: Vec<String> = if run.len() == 1 {
                vec![run[0].1.to_string()]
            } else {
                run.windows(2).map(|w| [w[0].1, w[1].1].iter().collect()).collect()
            };
            f(Word { compound: None, parts, start, end, cjk: true });
            continue;
        }
        if !is_word_char(c) {
            chars.next();
            continue;
        }
        // A chunk: word chars joined by single connectors.
        let mut end = start;
        while let Some(&(i, c)) = chars.peek() {
            if is_word_char(c) {
                end = i + c.len_utf8();
                chars.next();
            } else if is_connector(c) {
                let mut look = chars.clone();
                look.next();
                match look.peek() {
                    Some(&(_, n)) if is_word_char(n) => {
                        chars.next();
                    }
                    _ => break,
                }
            } else {
                break;
            }
        }
        let word = split_chunk(&text[start..end], start);
        if !word.parts.is_empty() {
            f(word);
        }
    }
}

/// Splits one chunk into parts at connectors, `_`, and camelCase boundaries.
fn split_chunk(chunk: &str, offset: usize) -> Word {
    let mut parts: Vec<String> = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = chunk.chars().collect();
    let flush = |current: &mut String, parts: &mut Vec<String>| {
        if !current.is_empty() {
            let lower = current.to_lowercase();
            if lower.len() <= MAX_PART_BYTES {
                parts.push(lower);
            }
            current.clear();
        }
    };
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            flush(&mut current, &mut parts);
            continue;
        }
        if let Some(&prev) = i.checked_sub(1).and_then(|p| chars.get(p)) {
            let next = chars.get(i + 1).copied();
            let camel = prev.is_lowercase() && c.is_uppercase();
            let acronym_end = prev.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase);
            if camel || acronym_end {
                flush(&mut current, &mut parts);
            }
        }
        current.push(c);
    }
    flush(&mut current, &mut parts);
    let compound = (parts.len() > 1 && chunk.len() <= MAX_COMPOUND_BYTES).then(|| chunk.to_lowercase());
    Word { compound, parts, start: offset, end: offset + chunk.len(), cjk: false }
}

/// The words of `text`, collected.
pub fn words(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    for_each_word(text, &mut |w| out.push(w));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Vec<(String, usize)> {
        let mut t = DejaTokenizer::default();
        let mut s = t.token_stream(text);
        let mut out = Vec::new();
        while s.advance() {
            out.push((s.token().text.clone(), s.token().position));
        }
        out
    }

    #[test]
    fn splits_identifiers_and_keeps_the_whole() {
        let t = tokens("call getUserProfile now");
        let texts: Vec<&str> = t.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(texts, ["call", "getuserprofile", "get", "user", "profile", "now"]);
        assert_eq!(t[1].1, 1);
        assert_eq!(t[4].1, 3);
        assert_eq!(t[5].1, 4);
        let texts: Vec<String> = tokens("snake_case kebab-case src/auth.rs HTTPServer").into_iter().map(|t| t.0).collect();
        assert_eq!(
            texts,
            [
                "snake_case",
                "snake",
                "case",
                "kebab-case",
                "kebab",
                "case",
                "src/auth.rs",
                "src",
                "auth",
                "rs",
                "httpserver",
                "http",
                "server"
            ]
        );
    }

    #[test]
    fn cjk_becomes_overlapping_bigrams() {
        let texts: Vec<String> = tokens("数据库连接 ok").into_iter().map(|t| t.0).collect();
        assert_eq!(texts, ["数据", "据库", "库连", "连接", "ok"]);
    }

    #[test]
    fn trailing_punctuation_is_not_part_of_a_word() {
        let texts: Vec<String> = tokens("Done. (see pool.ini), Привет!").into_iter().map(|t| t.0).collect();
        assert_eq!(texts, ["done", "see", "pool.ini", "pool", "ini", "привет"]);
    }
}

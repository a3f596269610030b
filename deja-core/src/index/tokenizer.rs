//! The index tokenizer: lowercase words, code identifiers split into their parts
//! with the whole kept too, paths and other compounds kept whole, CJK as overlapping
//! bigrams.
//!
//! `getUserProfile` → `getuserprofile`, `get`, `user`, `profile`; `src/auth.rs` →
//! `src/auth.rs`, `src`, `auth`, `rs`. The compound sits at the position of its first
//! part and the parts take consecutive positions, so both `getUserProfile` and the
//! phrase "get user profile" match either spelling.
//!
//! Indexing runs every byte of history through here, so the token stream reuses its
//! token buffers and finds and splits an ASCII chunk in one pass over its bytes;
//! [`words`] (queries, snippets) keeps the simple allocating form, and a test holds the
//! two to the same output.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

pub const TOKENIZER_NAME: &str = "deja";
/// The same tokens without most compounds, for the `text` field. Search asks for a
/// several-part word as the phrase of its parts (`getUserProfile` is the phrase
/// "get user profile", `src/auth.rs` the phrase "src auth rs") and never for its
/// compound, so indexing compounds there only added terms found once — a path, a UUID,
/// a timestamp — to the dictionary, postings and positions: a fifth of the index on the
/// realistic benchmark corpus (`docs/benchmarks.md`). The `work` field, whose recall
/// does look compounds up, keeps them.
///
/// One kind of compound stays: a name split only where its letters change case
/// (see [`is_cased_name`]). People type `github`, `lebron` or `sqlite` in lower case,
/// which cannot be split back into `git hub`, `le bron` or `sq lite`.
pub const PARTS_TOKENIZER_NAME: &str = "deja_parts";

/// Most parts a [cased name](is_cased_name) has: `GitHub`, `PostgreSQL`, `iPhone`.
/// `getUserProfile` is an identifier, typed as written (and searched as the phrase of
/// its parts); three parts kept too cost the realistic benchmark corpus's index 6.5%
/// more bytes instead of 2.9%.
const MAX_NAME_PARTS: usize = 2;

/// Longest part and compound kept; longer runs are blobs (hashes, base64), not words.
const MAX_PART_BYTES: usize = 48;
const MAX_COMPOUND_BYTES: usize = 96;

#[derive(Clone, Default)]
pub struct DejaTokenizer {
    /// Leave out the compound of a several-part chunk (see [`PARTS_TOKENIZER_NAME`]).
    pub parts_only: bool,
    /// Tokens of the last text; entries past the stream's `len` are kept for their
    /// allocations.
    tokens: Vec<Token>,
    /// Byte ranges of the parts of the chunk being split.
    parts: Vec<(usize, usize)>,
    /// The chars of a non-ASCII chunk, with their byte offsets.
    chars: Vec<(usize, char)>,
}

pub struct DejaTokenStream<'a> {
    tokens: &'a mut Vec<Token>,
    len: usize,
    index: usize,
}

impl DejaTokenizer {
    /// The tokenizer of [`PARTS_TOKENIZER_NAME`].
    pub fn parts_only() -> DejaTokenizer {
        DejaTokenizer { parts_only: true, ..DejaTokenizer::default() }
    }
}

impl Tokenizer for DejaTokenizer {
    type TokenStream<'a> = DejaTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> DejaTokenStream<'a> {
        let mut out = TokenSink { tokens: &mut self.tokens, len: 0, compounds: !self.parts_only };
        let mut position = 0usize;
        let (parts, chars) = (&mut self.parts, &mut self.chars);
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c.is_ascii() {
                if !is_ascii_word_byte(c) {
                    i += 1;
                    continue;
                }
                // Most chunks are ASCII: found, split and emitted in one pass.
                if let Some(end) = split_ascii_chunk(text, i, parts) {
                    emit_parts::<true>(text, i, end, &mut position, parts, &mut out);
                    i = end;
                    continue;
                }
            }
            let (span, next) = span_at(text, i);
            match span {
                Some(Span::Cjk { start, end }) => emit_cjk(text, start, end, &mut position, &mut out),
                Some(Span::Chunk { start, end }) => emit_chunk(text, start, end, &mut position, parts, chars, &mut out),
                None => {}
            }
            i = next;
        }
        let len = out.len;
        DejaTokenStream { tokens: &mut self.tokens, len, index: usize::MAX }
    }
}

impl TokenStream for DejaTokenStream<'_> {
    fn advance(&mut self) -> bool {
        self.index = self.index.wrapping_add(1);
        self.index < self.len
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

/// Writes tokens into a reused buffer, overwriting old entries in place.
struct TokenSink<'a> {
    tokens: &'a mut Vec<Token>,
    len: usize,
    /// Emit a several-part chunk's compound before its parts.
    compounds: bool,
}

impl TokenSink<'_> {
    /// Appends a token whose text is `src` lowercased.
    fn push(&mut self, src: &str, offset_from: usize, offset_to: usize, position: usize, position_length: usize) {
        let text = self.next(offset_from, offset_to, position, position_length);
        if src.is_ascii() {
            text.push_str(src);
            text.make_ascii_lowercase();
        } else {
            text.push_str(&src.to_lowercase());
        }
    }

    /// [`TokenSink::push`] of a slice known to be ASCII.
    fn push_ascii(&mut self, src: &str, offset_from: usize, offset_to: usize, position: usize, position_length: usize) {
        let text = self.next(offset_from, offset_to, position, position_length);
        text.push_str(src);
        text.make_ascii_lowercase();
    }

    /// The next token, its place set and its text emptied for the caller to fill.
    fn next(&mut self, offset_from: usize, offset_to: usize, position: usize, position_length: usize) -> &mut String {
        if self.len == self.tokens.len() {
            self.tokens.push(Token::default());
        }
        let t = &mut self.tokens[self.len];
        self.len += 1;
        t.offset_from = offset_from;
        t.offset_to = offset_to;
        t.position = position;
        t.position_length = position_length;
        t.text.clear();
        &mut t.text
    }
}

/// A CJK run: overlapping bigrams (one token for a lone char), all spanning the run.
fn emit_cjk(text: &str, start: usize, end: usize, position: &mut usize, out: &mut TokenSink) {
    let run = &text[start..end];
    let mut it = run.char_indices().peekable();
    let mut n = 0;
    while let Some((i, c)) = it.next() {
        match it.peek() {
            Some(&(j, d)) => {
                out.push(&run[i..j + d.len_utf8()], start, end, *position + n, 1);
                n += 1;
            }
            None if n == 0 => {
                out.push(&run[i..i + c.len_utf8()], start, end, *position, 1);
                n = 1;
            }
            None => {}
        }
    }
    *position += n;
}

/// A chunk with non-ASCII in it, split by the general rules (see [`emit_parts`]).
fn emit_chunk(
    text: &str,
    start: usize,
    end: usize,
    position: &mut usize,
    parts: &mut Vec<(usize, usize)>,
    chars: &mut Vec<(usize, char)>,
    out: &mut TokenSink,
) {
    let chunk = &text[start..end];
    parts.clear();
    split_unicode(chunk, parts, chars);
    // Parts longer than the cap (lowercased) are blobs, not words.
    parts.retain(|&(a, b)| {
        let p = &chunk[a..b];
        if p.is_ascii() {
            p.len() <= MAX_PART_BYTES
        } else {
            p.to_lowercase().len() <= MAX_PART_BYTES
        }
    });
    for p in parts.iter_mut() {
        *p = (start + p.0, start + p.1);
    }
    emit_parts::<false>(text, start, end, position, parts, out);
}

/// The chunk of ASCII text starting at `start` (a word byte): finds where it ends and
/// its part ranges (absolute, blobs left out) in one pass. `None` when the chunk goes on
/// into a non-ASCII word char; the general path then takes the whole chunk.
fn split_ascii_chunk(text: &str, start: usize, parts: &mut Vec<(usize, usize)>) -> Option<usize> {
    let b = text.as_bytes();
    let is_word_at = |i: usize| text.get(i..).and_then(|t| t.chars().next()).is_some_and(is_word_char);
    parts.clear();
    let mut from: Option<usize> = None;
    let mut end_part = |from: &mut Option<usize>, i: usize| {
        if let Some(f) = from.take() {
            if i - f <= MAX_PART_BYTES {
                parts.push((f, i));
            }
        }
    };
    let mut i = start;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphanumeric() {
            if i > start {
                let prev = b[i - 1];
                let camel = prev.is_ascii_lowercase() && c.is_ascii_uppercase();
                // A lowercase byte after this one is in the chunk too.
                let acronym_end = prev.is_ascii_uppercase() && c.is_ascii_uppercase() && b.get(i + 1).is_some_and(u8::is_ascii_lowercase);
                if camel || acronym_end {
                    end_part(&mut from, i);
                }
            }
            from.get_or_insert(i);
        } else if c == b'_' {
            end_part(&mut from, i);
        } else if c.is_ascii() && is_connector(c as char) {
            match b.get(i + 1) {
                Some(&n) if is_ascii_word_byte(n) => end_part(&mut from, i),
                Some(&n) if !n.is_ascii() && is_word_at(i + 1) => return None,
                _ => break,
            }
        } else if !c.is_ascii() && is_word_at(i) {
            return None;
        } else {
            break;
        }
        i += 1;
    }
    end_part(&mut from, i);
    Some(i)
}

/// Emits the chunk `start..end` split into `parts` (absolute ranges, blobs left out):
/// its compound when it has several parts and is not too long, then its parts at
/// consecutive positions. `ASCII` says the chunk is known to be ASCII.
fn emit_parts<const ASCII: bool>(
    text: &str,
    start: usize,
    end: usize,
    position: &mut usize,
    parts: &[(usize, usize)],
    out: &mut TokenSink,
) {
    let push = if ASCII { TokenSink::push_ascii } else { TokenSink::push };
    if parts.is_empty() {
        return;
    }
    if parts.len() > 1 && end - start <= MAX_COMPOUND_BYTES && (out.compounds || is_cased_name(text, start, end, parts)) {
        push(out, &text[start..end], start, end, *position, parts.len());
    }
    for (i, &(a, b)) in parts.iter().enumerate() {
        push(out, &text[a..b], start, end, *position + i, 1);
    }
    *position += parts.len();
}

/// Whether the chunk `start..end` is letters only, split where their case changes
/// into at most [`MAX_NAME_PARTS`] parts and nothing else (`GitHub`, `LeBron`,
/// `iPhone`, `SQLite`): a name whose lower-case spelling is one word to whoever types
/// it. Digits, separators or a blob left out make it an identifier or a blob.
fn is_cased_name(text: &str, start: usize, end: usize, parts: &[(usize, usize)]) -> bool {
    parts.len() <= MAX_NAME_PARTS
        && parts.first().is_some_and(|p| p.0 == start)
        && parts.last().is_some_and(|p| p.1 == end)
        && parts.windows(2).all(|w| w[0].1 == w[1].0)
        && text[start..end].chars().all(char::is_alphabetic)
}

/// Part ranges of any chunk (the rules of [`split_chunk`]).
fn split_unicode(chunk: &str, parts: &mut Vec<(usize, usize)>, chars: &mut Vec<(usize, char)>) {
    chars.clear();
    chars.extend(chunk.char_indices());
    let mut from: Option<usize> = None;
    for (k, &(i, c)) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if let Some(f) = from.take() {
                parts.push((f, i));
            }
            continue;
        }
        if k > 0 {
            let prev = chars[k - 1].1;
            let next = chars.get(k + 1).map(|x| x.1);
            let camel = prev.is_lowercase() && c.is_uppercase();
            let acronym_end = prev.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase);
            if camel || acronym_end {
                if let Some(f) = from.take() {
                    parts.push((f, i));
                }
            }
        }
        from.get_or_insert(i);
    }
    if let Some(f) = from {
        parts.push((f, chunk.len()));
    }
}

/// The plain form of the token stream, which the fast one is tested against.
#[cfg(test)]
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

/// A stretch of text that makes tokens.
enum Span {
    /// A run of CJK characters.
    Cjk { start: usize, end: usize },
    /// Word chars joined by single connectors.
    Chunk { start: usize, end: usize },
}

/// Calls `f` for every span of `text` in order.
fn for_each_span(text: &str, f: &mut impl FnMut(Span)) {
    let mut i = 0;
    while i < text.len() {
        let (span, next) = span_at(text, i);
        if let Some(span) = span {
            f(span);
        }
        i = next;
    }
}

fn is_ascii_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The span starting at byte `i` (a char boundary), if one does, and where the next
/// one may start. ASCII is scanned byte by byte.
fn span_at(text: &str, mut i: usize) -> (Option<Span>, usize) {
    let b = text.as_bytes();
    let char_at = |i: usize| text.get(i..).and_then(|t| t.chars().next());
    let word_at = |i: usize| -> Option<usize> {
        match b.get(i) {
            Some(&c) if c.is_ascii() => is_ascii_word_byte(c).then_some(1),
            Some(_) => char_at(i).filter(|c| is_word_char(*c)).map(char::len_utf8),
            None => None,
        }
    };
    let c = b[i];
    if !c.is_ascii() {
        let Some(ch) = char_at(i) else { return (None, b.len()) };
        if is_cjk(ch) {
            let start = i;
            while let Some(ch) = char_at(i).filter(|c| is_cjk(*c)) {
                i += ch.len_utf8();
            }
            return (Some(Span::Cjk { start, end: i }), i);
        }
        if !is_word_char(ch) {
            return (None, i + ch.len_utf8());
        }
    } else if !is_ascii_word_byte(c) {
        return (None, i + 1);
    }
    let start = i;
    loop {
        if let Some(n) = word_at(i) {
            i += n;
        } else if b.get(i).is_some_and(|c| is_connector(*c as char)) && word_at(i + 1).is_some() {
            i += 1;
        } else {
            break;
        }
    }
    (Some(Span::Chunk { start, end: i }), i)
}

/// Calls `f` for every word of `text` in order (see the module doc).
pub fn for_each_word(text: &str, f: &mut impl FnMut(Word)) {
    for_each_span(text, &mut |span| match span {
        Span::Cjk { start, end } => {
            let run: Vec<char> = text[start..end].chars().collect();
            let parts: Vec<String> =
                if run.len() == 1 { vec![run[0].to_string()] } else { run.windows(2).map(|w| w.iter().collect()).collect() };
            f(Word { compound: None, parts, start, end, cjk: true });
        }
        Span::Chunk { start, end } => {
            let word = split_chunk(&text[start..end], start);
            if !word.parts.is_empty() {
                f(word);
            }
        }
    });
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

/// The stem of a lowercase word: the key that groups its forms (`refreshing`,
/// `refreshed`, `refreshes` → `refresh`), by the Snowball stemmers of `rust-stemmers`
/// (English is Porter2, the revision of Porter 1980). The language is told by the
/// script, the one thing a single word reliably shows: plain ASCII letters are English,
/// Cyrillic Russian, Greek Greek, Arabic Arabic; a word of any other script or of mixed
/// ones (identifier parts with digits, accented Latin, whose language the letters do
/// not tell) is its own stem. A stem is a key for comparing words, not a word to show.
/// An English form no suffix rule reaches (`went`, `bought`, `children`) takes the stem
/// of its base form ([`super::irregular`]).
pub fn stem(word: &str) -> String {
    if let Some(group) = super::irregular::group_of(word) {
        return snowball(group[0]);
    }
    snowball(word)
}

/// [`stem`] by the Snowball rules alone.
fn snowball(word: &str) -> String {
    match stem_language(word) {
        Some(lang) => {
            let stemmed = rust_stemmers::Stemmer::create(lang).stem(word).into_owned();
            // Snowball can strip a short word to one or two letters (`used` → `use` is
            // fine, `was` → `wa` is not); a stem that short groups unrelated words.
            if stemmed.chars().count() < 3 && stemmed != word {
                word.to_string()
            } else {
                stemmed
            }
        }
        None => word.to_string(),
    }
}

/// The Snowball language a word's letters tell, if any (see [`stem`]).
fn stem_language(word: &str) -> Option<rust_stemmers::Algorithm> {
    use rust_stemmers::Algorithm;
    if word.chars().count() <= 2 {
        return None;
    }
    if word.bytes().all(|b| b.is_ascii_lowercase()) {
        return Some(Algorithm::English);
    }
    let all = |range: std::ops::RangeInclusive<u32>| word.chars().all(|c| range.contains(&(c as u32)) && c.is_alphabetic());
    if all(0x0400..=0x04FF) {
        Some(Algorithm::Russian)
    } else if all(0x0370..=0x03FF) || all(0x1F00..=0x1FFF) {
        Some(Algorithm::Greek)
    } else if all(0x0600..=0x06FF) {
        Some(Algorithm::Arabic)
    } else {
        None
    }
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

    /// Every token of `text` as `(text, position, position_length)`.
    fn stream(mut tokenizer: DejaTokenizer, text: &str) -> Vec<(String, usize, usize)> {
        let mut s = tokenizer.token_stream(text);
        let mut out = Vec::new();
        while s.advance() {
            out.push((s.token().text.clone(), s.token().position, s.token().position_length));
        }
        out
    }

    fn tokens(text: &str) -> Vec<(String, usize)> {
        stream(DejaTokenizer::default(), text).into_iter().map(|(t, p, _)| (t, p)).collect()
    }

    #[test]
    fn the_parts_tokenizer_is_the_same_stream_without_compounds() {
        let text = "call getUserProfile in src/auth.rs at 2025-02-18T07:49:01Z, 数据库连接 and plain words";
        let got: Vec<(String, usize)> = stream(DejaTokenizer::parts_only(), text).into_iter().map(|(t, p, _)| (t, p)).collect();
        // Every token of the full stream but the compounds (those spanning several
        // positions; the text has no cased name), at the same positions, so phrases of
        // parts match either way.
        let want: Vec<(String, usize)> =
            stream(DejaTokenizer::default(), text).into_iter().filter(|t| t.2 == 1).map(|(t, p, _)| (t, p)).collect();
        assert_eq!(got, want);
        assert!(!got.iter().any(|(t, _)| t == "getuserprofile" || t == "src/auth.rs" || t.starts_with("2025-")));
        assert!(got.iter().any(|(t, _)| t == "profile") && got.iter().any(|(t, _)| t == "数据"));
    }

    #[test]
    fn the_parts_tokenizer_keeps_the_compound_of_a_cased_name_only() {
        let text = "GitHub LeBron SQLite iPhone getUserProfileById a1B2 OAuth2 snake_case Über";
        let compounds: Vec<String> = stream(DejaTokenizer::parts_only(), text).into_iter().filter(|t| t.2 > 1).map(|t| t.0).collect();
        assert_eq!(compounds, ["github", "lebron", "sqlite", "iphone"]);
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

    /// The token stream as the plain path makes it: [`words`] then [`emit_word`].
    fn reference_tokens(text: &str) -> Vec<Token> {
        let mut out = Vec::new();
        let mut position = 0;
        for w in words(text) {
            emit_word(&w, &mut position, &mut out);
        }
        out
    }

    fn assert_same_as_reference(t: &mut DejaTokenizer, text: &str) {
        let mut s = t.token_stream(text);
        let mut got = Vec::new();
        while s.advance() {
            got.push(s.token().clone());
        }
        let want = reference_tokens(text);
        let key = |t: &Token| (t.text.clone(), t.position, t.position_length, t.offset_from, t.offset_to);
        assert_eq!(got.iter().map(key).collect::<Vec<_>>(), want.iter().map(key).collect::<Vec<_>>(), "{text:?}");
    }

    #[test]
    fn the_fast_stream_equals_the_plain_path() {
        let samples = [
            "call getUserProfile now",
            "snake_case kebab-case src/auth.rs HTTPServer parseHTTPResponse2 v1.2.3 a--b a-.b -x- __init__ _ __",
            "数据库连接 ok 据 かなカナ漢字 mixed数据ok 한국어",
            "Привет, МирВасяПупкин! straße ÄÖÜäöü İstanbul ΣΊΣΥΦΟΣ Ωmega",
            "/home/dev/pointer-without/src/nom_optimizations_operator.py:303:12 thread 'main' panicked",
            "blob 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef and aVeryLongCamelCaseIdentifierThatKeepsGoingAndGoingPastTheCompoundLimitForSure/x",
            "emoji 🙂 ok\u{200b}zero-width ‘quotes’ «guillemets» tab\tnewline\n end.",
            "",
            "___ ... --- 12:30 @user #tag ~/path C++ a+b x@y.z é-x x-é",
            // ASCII chunks that run into non-ASCII, word chars or not.
            "fooBar-straße x.数据 don’t aB_cD ABc HTTPs a.🙂 a-\u{301}b configé/x ok_ü",
        ];
        let mut t = DejaTokenizer::default();
        for text in samples {
            // Twice, so the second pass overwrites reused token buffers.
            assert_same_as_reference(&mut t, text);
            assert_same_as_reference(&mut t, text);
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        #[test]
        fn the_fast_stream_equals_the_plain_path_on_any_text(
            text in "([a-zA-Z0-9_]{1,12}|[-./\\\\:@+~# ,;'()]|[À-ɏ]{1,3}|[Ѐ-ӿ]{1,4}|[一-龥]{1,4}|[ぁ-ヿ]{1,3}|\\PC){0,40}"
        ) {
            let mut t = DejaTokenizer::default();
            assert_same_as_reference(&mut t, &text);
        }
    }

    #[test]
    fn stems_fold_word_forms() {
        let same = |words: &[&str]| {
            let stems: Vec<String> = words.iter().map(|w| stem(w)).collect();
            assert!(stems.iter().all(|s| *s == stems[0]), "{words:?} → {stems:?}");
        };
        same(&["paint", "paints", "painted", "painting"]);
        same(&["hike", "hikes", "hiked", "hiking"]);
        same(&["study", "studies", "studied"]);
        same(&["run", "runs", "running"]);
        same(&["refresh", "refreshes", "refreshed", "refreshing"]);
        same(&["connect", "connected", "connecting", "connection", "connections"]);
        same(&["adopt", "adopted", "adoption"]);
        // Irregular forms, which no suffix rule reaches.
        same(&["go", "goes", "going", "went", "gone"]);
        same(&["buy", "bought", "buying"]);
        same(&["child", "children"]);
        // Russian, which the English rules would leave alone.
        same(&["соединение", "соединения", "соединением"]);
        // Porter2's outputs on its reference vocabulary.
        for (w, s) in [("caresses", "caress"), ("ponies", "poni"), ("generously", "generous"), ("sky", "sky"), ("controlling", "control")] {
            assert_eq!(stem(w), s, "{w}");
        }
        // Words whose language the letters do not tell, or too short to stem, stay.
        assert_eq!(stem("straße"), "straße");
        assert_eq!(stem("HTTP"), "HTTP");
        assert_eq!(stem("is"), "is");
        assert_eq!(stem("v2beta"), "v2beta");
        assert_eq!(stem("was"), "was", "a two-letter stem would group unrelated words");
    }

    #[test]
    fn trailing_punctuation_is_not_part_of_a_word() {
        let texts: Vec<String> = tokens("Done. (see pool.ini), Привет!").into_iter().map(|t| t.0).collect();
        assert_eq!(texts, ["done", "see", "pool.ini", "pool", "ini", "привет"]);
    }
}

//! deja's marked block inside a text file it shares with the user (a YAML layer, a
//! Markdown rules file): everything from the start marker line to the end marker line
//! is deja's, everything else the user's.
//!
//! A block is replaced where it stands, or appended at the end on a line of its own.
//! Only the block's lines (and a newline added to end an unterminated last line) ever
//! change; the engine restores the untouched file byte for byte from its copy.

/// Makes `text` hold `body` between the lines starting with `start` and `end`.
/// `start` and `end` are whole marker lines without the newline.
pub fn set_block(text: &str, start: &str, end: &str, body: &str) -> String {
    let mut block = String::with_capacity(start.len() + body.len() + end.len() + 3);
    block.push_str(start);
    block.push('\n');
    block.push_str(body);
    if !body.is_empty() && !body.ends_with('\n') {
        block.push('\n');
    }
    block.push_str(end);
    block.push('\n');
    if let Some((from, to)) = find(text, start, end) {
        let mut out = String::with_capacity(text.len() + block.len());
        out.push_str(&text[..from]);
        out.push_str(&block);
        out.push_str(&text[to..]);
        return out;
    }
    let mut out = text.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&block);
    out
}

/// Removes the block, if any.
pub fn remove_block(text: &str, start: &str, end: &str) -> String {
    match find(text, start, end) {
        Some((from, to)) => format!("{}{}", &text[..from], &text[to..]),
        None => text.to_string(),
    }
}

/// Whether `text` holds the block.
pub fn has_block(text: &str, start: &str, end: &str) -> bool {
    find(text, start, end).is_some()
}

/// The byte range of the block's lines: from the start of the start marker's line to
/// just past the end marker's line (its newline included).
fn find(text: &str, start: &str, end: &str) -> Option<(usize, usize)> {
    let mut offset = 0;
    let mut from = None;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        match from {
            None if bare.trim_start().starts_with(start) => from = Some(offset),
            Some(f) if bare.trim_start().starts_with(end) => return Some((f, offset + line.len())),
            _ => {}
        }
        offset += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "# deja mcp:start";
    const END: &str = "# deja mcp:end";

    #[test]
    fn a_block_is_appended_replaced_and_removed() {
        let user = "# mine\n- insert:\n    - id: x\n";
        let once = set_block(user, START, END, "- insert: []\n");
        assert_eq!(once, format!("{user}{START}\n- insert: []\n{END}\n"));
        assert_eq!(set_block(&once, START, END, "- insert: []\n"), once);
        let twice = set_block(&once, START, END, "- b\n");
        assert_eq!(twice, format!("{user}{START}\n- b\n{END}\n"));
        assert_eq!(remove_block(&twice, START, END), user);
        assert!(has_block(&twice, START, END) && !has_block(user, START, END));
    }

    #[test]
    fn an_unterminated_last_line_gets_its_newline() {
        assert_eq!(set_block("a: 1", START, END, "b"), format!("a: 1\n{START}\nb\n{END}\n"));
    }
}

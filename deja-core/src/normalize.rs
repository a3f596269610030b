//! The ingest step between a parser and the index: strip the harness's injected text, redact
//! secrets, cap sizes, drop exact repeats, honour the work-record switches, and
//! choose a title. Runs on every session of every harness, so adapters stay about
//! their format.

use std::borrow::Cow;
use std::collections::HashSet;

use crate::env::StoreEnv;
use crate::model::{cap_text, Role, Session, TitleBy};
use crate::redact::redact;
use crate::text::{derive_title, one_line, InjectedText};

/// After redaction a turn's text is capped at 64 KiB.
pub const MAX_INDEXED_TEXT: usize = 64 << 10;

/// The `DEJA_INDEX_*` switches (all on by default).
#[derive(Debug, Clone)]
pub struct NormalizeOptions {
    pub paths: bool,
    pub edits: bool,
    pub commands: bool,
    pub tool_output: bool,
}

impl Default for NormalizeOptions {
    fn default() -> Self {
        NormalizeOptions { paths: true, edits: true, commands: true, tool_output: true }
    }
}

impl NormalizeOptions {
    pub fn from_env(env: &StoreEnv) -> Self {
        NormalizeOptions {
            paths: env.switch("DEJA_INDEX_PATHS", true),
            edits: env.switch("DEJA_INDEX_EDITS", true),
            commands: env.switch("DEJA_INDEX_COMMANDS", true),
            tool_output: env.switch("DEJA_INDEX_TOOL_OUTPUT", true),
        }
    }
}

/// Redacts `s` where it stands, replacing it only when a secret was found (most text
/// has none, and a build passes every turn through here).
fn redact_in_place(s: &mut String) {
    if let Cow::Owned(redacted) = redact(s) {
        *s = redacted;
    }
}

/// Normalizes a parsed session in place (see the module doc); `injected` is the
/// session's harness's own injected-text rules.
pub fn normalize(session: &mut Session, opts: &NormalizeOptions, injected: &InjectedText) {
    let mut seen: HashSet<(Role, Option<i64>, u64)> = HashSet::new();
    let tail = session.source.resume.is_some();
    session.turns.retain_mut(|turn| {
        // Before `commands` may clear the command that marks a shell call.
        turn.unmake_failed_edit();
        let is_tool = matches!(turn.role, Role::ToolCall | Role::ToolOutput);
        if is_tool && !opts.tool_output {
            turn.text.clear();
        }
        let stripped = if turn.role == Role::Summary { injected.strip_summary(&turn.text) } else { injected.strip(&turn.text) };
        let redacted = match redact(&stripped) {
            Cow::Owned(s) => Some(s),
            Cow::Borrowed(_) => None,
        };
        // Unless something was stripped, trimmed or redacted, the text stays as it is,
        // uncopied (a borrowed strip is a slice of it: the same text when as long).
        let changed = redacted.or(match stripped {
            Cow::Owned(s) => Some(s),
            Cow::Borrowed(s) if s.len() != turn.text.len() => Some(s.to_string()),
            Cow::Borrowed(_) => None,
        });
        if let Some(text) = changed {
            turn.text = text;
        }
        cap_text(&mut turn.text, MAX_INDEXED_TEXT);
        if let Some(tool) = &mut turn.tool {
            if !opts.commands {
                tool.command = None;
            }
            if let Some(cmd) = &mut tool.command {
                redact_in_place(cmd);
                cap_text(cmd, MAX_INDEXED_TEXT);
            }
        }
        if opts.paths {
            for f in &mut turn.files {
                redact_in_place(&mut f.path);
            }
        } else {
            turn.files.clear();
        }
        if !opts.edits {
            turn.edit = None;
        }
        if let Some(edit) = &mut turn.edit {
            redact_in_place(&mut edit.path);
            redact_in_place(&mut edit.old);
            if let Some(new) = &mut edit.new {
                redact_in_place(new);
            }
        }
        // A result with no output says nothing, except in a tail, where it may complete a
        // call read before (its exit status, its failure): the indexer folds it into that
        // call and drops it if it folds into none (`crate::tail::fold_late_results`).
        let completes = tail && turn.tool.as_ref().is_some_and(|t| t.call_id.is_some());
        if turn.role == Role::ToolOutput && turn.text.is_empty() && !completes {
            return false;
        }
        if turn.is_empty() {
            return false;
        }
        let key = (turn.role, turn.time.map(|t| t.0), xxhash_rust::xxh3::xxh3_64(turn.text.as_bytes()));
        // A tail's result for a call read before is not a repeat to drop here: each copy
        // folds into the call (idempotently) and gives up its number, as in a whole read.
        turn.role == Role::ToolCall || completes || seen.insert(key)
    });
    let named = session.title.take().map(|t| redact(injected.strip(&t).trim()).into_owned()).filter(|t| !t.is_empty());
    session.title = match named {
        Some(t) => Some(one_line(&t, 160)),
        None => {
            let derived = derive_title(session, injected);
            session.title_by = derived.as_ref().map_or(TitleBy::Output, |(_, by)| *by);
            derived.map(|(t, _)| t)
        }
    };
    if let Some(p) = &mut session.project {
        redact_in_place(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Edit, SourceRef, ToolUse, Turn};

    const INJECTED: InjectedText = InjectedText { blocks: &["system-reminder"], ..InjectedText::NONE };

    fn normalized(turns: Vec<Turn>) -> Vec<Turn> {
        let mut s = Session::new("h", "s", SourceRef::file("/x.jsonl"));
        s.turns = turns;
        normalize(&mut s, &NormalizeOptions::default(), &INJECTED);
        s.turns
    }

    #[test]
    fn text_is_stripped_trimmed_and_redacted_and_otherwise_left_as_it_was() {
        let key = "AKIAIOSFODNN7EXAMPLE";
        let mut call = Turn::new(Role::ToolCall, "   301\tfn main() {}\n");
        call.tool = Some(ToolUse { name: "Bash".into(), command: Some(format!("aws --key {key}")), ..ToolUse::default() });
        call.edit = Some(Edit { path: "src/a.rs".into(), old: format!("k = {key}"), new: Some("k = env()".into()) });
        let turns = normalized(vec![
            Turn::new(Role::User, "  fix the pool \n"),
            Turn::new(Role::User, "<system-reminder>be brief</system-reminder> and the cache"),
            Turn::new(Role::Assistant, format!("the key was {key}, now rotated")),
            Turn::new(Role::Assistant, "untouched words"),
            call,
        ]);
        let texts: Vec<&str> = turns.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(texts[..2], ["fix the pool", "and the cache"], "trimmed, and the injected block gone");
        assert!(!texts[2].contains(key) && texts[2].contains("[redacted:") && texts[2].ends_with("now rotated"), "{}", texts[2]);
        assert_eq!(texts[3], "untouched words");
        assert_eq!(texts[4], "301\tfn main() {}", "a tool's text is trimmed too");
        let tool = turns[4].tool.as_ref().and_then(|t| t.command.as_deref()).unwrap_or("");
        let edit = turns[4].edit.as_ref().map(|e| (e.old.as_str(), e.new.as_deref())).unwrap_or_default();
        assert!(!tool.contains(key) && tool.starts_with("aws --key [redacted:"), "{tool}");
        assert!(!edit.0.contains(key) && edit.1 == Some("k = env()"), "{edit:?}");
    }

    #[test]
    fn a_file_tool_that_failed_made_no_edit_and_a_failed_shell_call_keeps_its_span() {
        let call = |command: Option<&str>, is_error: bool| {
            let mut t = Turn::new(Role::ToolCall, "result");
            t.tool = Some(ToolUse { name: "Edit".into(), command: command.map(str::to_string), is_error, ..ToolUse::default() });
            t.files = vec![crate::model::FileTouch { path: "src/a.rs".into(), action: crate::model::FileAction::Edit }];
            t.edit = Some(Edit { path: "src/a.rs".into(), old: "a".into(), new: Some("b".into()) });
            t
        };
        let turns = normalized(vec![call(None, true), call(None, false), call(Some("apply_patch p.diff && make"), true)]);
        let spans: Vec<bool> = turns.iter().map(|t| t.edit.is_some()).collect();
        assert_eq!(spans, [false, true, true]);
        assert!(turns.iter().all(|t| t.files.len() == 1), "the file it was about stays");
    }
}

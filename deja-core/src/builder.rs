//! `SessionBuilder`: the bookkeeping every parser needs while it walks a source —
//! turn numbering, started/updated times, and folding a tool call with its result
//! when the format pairs them by id.

use std::collections::HashMap;

use crate::model::Role;
use crate::model::{cap_text, ExitStatus, Session, SourceRef, Timestamp, ToolUse, Turn, MAX_MESSAGE_BYTES};

pub struct SessionBuilder {
    session: Session,
    next_seq: u32,
    calls: HashMap<String, usize>,
}

impl SessionBuilder {
    /// A builder for one session. When `source.resume` is set, numbering continues
    /// from the resume point.
    pub fn new(harness: &str, id: impl Into<String>, source: SourceRef) -> Self {
        let next_seq = source.resume.as_ref().map_or(0, |r| r.next_seq);
        SessionBuilder { session: Session::new(harness, id, source), next_seq, calls: HashMap::new() }
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    pub fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    pub fn set_id(&mut self, id: impl Into<String>) {
        self.session.id = id.into();
    }

    pub fn touch(&mut self, time: Option<Timestamp>) {
        self.session.touch(time);
    }

    /// The number the next turn pushed gets.
    pub fn next_seq(&self) -> u32 {
        self.next_seq
    }

    pub fn turn_count(&self) -> usize {
        self.session.turns.len()
    }

    pub fn last_turn_mut(&mut self) -> Option<&mut Turn> {
        self.session.turns.last_mut()
    }

    /// Appends a turn (numbered, text capped at 1 MiB). Empty turns are dropped.
    /// Returns the turn's index in the session.
    pub fn push(&mut self, mut turn: Turn) -> Option<usize> {
        cap_text(&mut turn.text, MAX_MESSAGE_BYTES);
        if turn.is_empty() {
            return None;
        }
        turn.seq = self.next_seq;
        self.next_seq += 1;
        self.session.touch(turn.time);
        self.session.turns.push(turn);
        Some(self.session.turns.len() - 1)
    }

    /// Appends a tool-call turn and remembers it under `call_id` so its result can be
    /// folded in by [`complete_call`](Self::complete_call). A call is kept even with no
    /// text: the call itself is the record.
    pub fn push_call(&mut self, call_id: Option<&str>, mut turn: Turn) -> usize {
        turn.role = Role::ToolCall;
        let tool = turn.tool.get_or_insert_with(ToolUse::default);
        if let Some(id) = call_id.filter(|id| !id.is_empty()) {
            tool.call_id = Some(id.to_string());
        }
        cap_text(&mut turn.text, MAX_MESSAGE_BYTES);
        turn.seq = self.next_seq;
        self.next_seq += 1;
        self.session.touch(turn.time);
        self.session.turns.push(turn);
        let idx = self.session.turns.len() - 1;
        if let Some(id) = call_id.filter(|id| !id.is_empty()) {
            self.calls.insert(id.to_string(), idx);
        }
        idx
    }

    /// The call registered under `call_id`.
    pub fn call_mut(&mut self, call_id: &str) -> Option<&mut Turn> {
        let idx = *self.calls.get(call_id)?;
        self.session.turns.get_mut(idx)
    }

    /// Folds a result into the call registered under `call_id`: the output becomes
    /// the call's text. Returns false (and changes nothing) when no such call exists,
    /// so the caller can keep the result as a `ToolOutput` turn.
    pub fn complete_call(
        &mut self,
        call_id: &str,
        output: &str,
        is_error: bool,
        exit: Option<ExitStatus>,
        time: Option<Timestamp>,
    ) -> bool {
        let Some(&idx) = self.calls.get(call_id) else {
            return false;
        };
        self.session.touch(time);
        let turn = &mut self.session.turns[idx];
        if !turn.text.is_empty() && !output.is_empty() {
            turn.text.push('\n');
        }
        turn.text.push_str(output.trim_end());
        cap_text(&mut turn.text, MAX_MESSAGE_BYTES);
        let tool = turn.tool.get_or_insert_with(ToolUse::default);
        tool.is_error |= is_error;
        if exit.is_some() {
            tool.exit = exit;
        }
        if tool.exit.as_ref().is_some_and(|e| !e.succeeded()) {
            tool.is_error = true;
        }
        true
    }

    /// Appends a result whose call is not in this read (an orphan, or a call read by an
    /// earlier incremental pass) as a `ToolOutput` turn that remembers `call_id`, so the
    /// indexer can fold it into the call it already holds.
    pub fn push_orphan_result(
        &mut self,
        call_id: &str,
        output: &str,
        is_error: bool,
        exit: Option<ExitStatus>,
        time: Option<Timestamp>,
    ) -> Option<usize> {
        let mut turn = Turn::new(Role::ToolOutput, output).at(time);
        let failed = exit.as_ref().is_some_and(|e| !e.succeeded());
        turn.tool = Some(ToolUse {
            is_error: is_error || failed,
            exit,
            call_id: (!call_id.is_empty()).then(|| call_id.to_string()),
            ..ToolUse::default()
        });
        self.push(turn)
    }

    /// The finished session, or `None` when it has no turns or no id (such sessions are
    /// not emitted) — except the session a tail read continues ([`SourceRef::resume`]),
    /// returned without turns too: what else the tail says of it (a title named since,
    /// later times) the indexer applies to the session it holds. Control characters in
    /// the id (a damaged row's binary cell) become U+FFFD: an id is printed on lines of
    /// its own and keys the index, so it must be one line, and the same damaged id must
    /// map to the same session every time.
    pub fn finish(mut self) -> Option<Session> {
        let continued = self.session.source.resume.as_ref().is_some_and(|r| r.session_id == self.session.id);
        if (self.session.turns.is_empty() && !continued) || self.session.id.trim().is_empty() {
            return None;
        }
        if self.session.id.chars().any(char::is_control) {
            self.session.id = self.session.id.chars().map(|c| if c.is_control() { '\u{FFFD}' } else { c }).collect();
        }
        Some(self.session)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Role;

    fn one_turn(id: &str) -> Option<Session> {
        let mut b = SessionBuilder::new("h", id, SourceRef::file("/x"));
        b.push(Turn::new(Role::User, "hello"));
        b.finish()
    }

    #[test]
    fn damaged_ids_are_one_line_and_empty_ones_are_not_emitted() {
        assert_eq!(one_turn("a\nb\0c").map(|s| s.id), Some("a\u{FFFD}b\u{FFFD}c".to_string()));
        assert!(one_turn("  ").is_none());
        assert_eq!(one_turn("ses_1").map(|s| s.id), Some("ses_1".to_string()));
    }

    #[test]
    fn a_tail_read_returns_the_session_it_continues_even_with_no_turns() {
        let tail = |resumed: Option<&str>, id: &str| {
            let mut src = SourceRef::file("/x");
            src.resume = resumed.map(|r| crate::model::Resume { session_id: r.into(), ..Default::default() });
            let mut b = SessionBuilder::new("h", id, src);
            b.session_mut().title = Some("Tag dedupe".into());
            b.finish().map(|s| (s.id, s.turns.len()))
        };
        assert_eq!(tail(Some("ses_1"), "ses_1"), Some(("ses_1".to_string(), 0)));
        assert_eq!(tail(Some("ses_1"), "ses_2"), None, "another session says nothing without turns");
        assert_eq!(tail(None, "ses_1"), None, "a whole read with no turns has no session");
    }
}

//! The tail contract: how a read of an append-only source's new end (a tail,
//! [`SourceRef::resume`](crate::model::SourceRef::resume)) continues the session the index
//! holds. The indexer's tail path and the conformance kit's incremental check both call
//! these functions, so the kit checks what the index does.
//!
//! A tail read gets the resume point (offset, next turn number, session id) and the
//! [`TailState`](crate::model::TailState) its reader returned the time before, instead of
//! reading the file's head again; it returns the session it continues, with or without
//! turns. Joined to the session held:
//!
//! - **turns** are numbered on from the resume point's `next_seq`; a result whose call was
//!   read before folds into that call ([`fold_late_results`]) and gives up its number, so
//!   the turns after it are numbered as a whole read numbers them;
//! - **title**: the held one, unless the tail's supersedes it ([`TitleBy::supersedes`]:
//!   the user's name over a generated title over the first prompt);
//! - **project, parent, kind, agent**: the tail's where it names one, else the held ones;
//! - **times** widen.
//!
//! Held to it for every append-only adapter: a fixture cut at each record boundary, read
//! whole up to the cut and then as a tail, gives what a whole read gives
//! (`testkit::tail`).

use std::collections::HashMap;

use crate::model::SessionMeta;
use crate::model::{Role, Session, TitleBy, Turn};

/// The metadata of a session read whole from the source `source_key`.
pub fn whole_meta(s: &Session, source_key: &str) -> SessionMeta {
    SessionMeta {
        harness: s.harness.clone(),
        id: s.id.clone(),
        title: s.title.clone(),
        project: s.project.clone(),
        path: source_key.to_string(),
        started: s.started,
        updated: s.updated,
        parent: s.parent.clone(),
        kind: s.kind.clone(),
        agent: s.agent.clone(),
        machine: None,
        turns: s.turns.len() as u32,
        source_deleted: None,
    }
}

/// The metadata of `held` (whose title `held_by` gave) continued by the tail session
/// `s`, which replaces `replaced` of the held turns (a reopened tail's), and who gave the
/// title it ends with (see the module doc).
pub fn continue_meta(held: &SessionMeta, held_by: TitleBy, s: &Session, replaced: u32, source_key: &str) -> (SessionMeta, TitleBy) {
    let widen = |a: Option<crate::model::Timestamp>, b: Option<crate::model::Timestamp>, pick: fn(i64, i64) -> i64| match (a, b) {
        (Some(a), Some(b)) => Some(crate::model::Timestamp(pick(a.0, b.0))),
        (a, b) => a.or(b),
    };
    let tail_wins = s.title.is_some() && (held.title.is_none() || s.title_by.supersedes(held_by));
    let (title, by) = if tail_wins { (s.title.clone(), s.title_by) } else { (held.title.clone(), held_by) };
    let meta = SessionMeta {
        harness: s.harness.clone(),
        id: s.id.clone(),
        title,
        project: s.project.clone().or_else(|| held.project.clone()),
        path: source_key.to_string(),
        started: widen(held.started, s.started, i64::min),
        updated: widen(held.updated, s.updated, i64::max),
        parent: s.parent.clone().or_else(|| held.parent.clone()),
        kind: s.kind.clone().or_else(|| held.kind.clone()),
        agent: s.agent.clone().or_else(|| held.agent.clone()),
        machine: held.machine.clone(),
        turns: held.turns.saturating_sub(replaced) + s.turns.len() as u32,
        source_deleted: None,
    };
    (meta, by)
}

/// What [`fold_late_results`] folded: the calls it changed and the numbers the parser
/// gave the turns that left the tail.
#[derive(Debug, Default)]
pub struct Folded {
    pub calls: Vec<String>,
    pub turns: Vec<u32>,
}

impl Folded {
    /// The number the parser's `seq` becomes once the turns folded before it are gone.
    pub fn renumbered(&self, seq: u32) -> u32 {
        seq - self.turns.iter().filter(|&&f| f < seq).count() as u32
    }
}

/// Folds into the calls the index holds (`held`, by call id) what the tail `s` says of
/// them: a result, a late exit status, the call written again. Each turn folded leaves
/// the tail, and the tail's later turns move down one number per turn folded before
/// them, as a whole read, which folds without numbering, would have numbered them. A
/// result with no output that folds into no call then goes too, as in a whole read
/// (`normalize` keeps it in a tail only for this fold).
pub fn fold_late_results(held: &mut HashMap<String, Turn>, s: &mut Session) -> Folded {
    let call_id = |t: &Turn| t.tool.as_ref().and_then(|x| x.call_id.clone());
    let mut merged: Vec<String> = Vec::new();
    let mut folded_seqs: Vec<u32> = Vec::new();
    s.turns.retain(|t| {
        let Some(id) = call_id(t) else { return true };
        let Some(call) = held.get_mut(&id) else { return true };
        merge_result(call, t);
        folded_seqs.push(t.seq);
        if !merged.contains(&id) {
            merged.push(id);
        }
        false
    });
    let folded = Folded { calls: merged, turns: folded_seqs };
    if !folded.turns.is_empty() {
        for t in &mut s.turns {
            t.seq = folded.renumbered(t.seq);
        }
    }
    s.turns.retain(|t| !(t.role == Role::ToolOutput && t.text.is_empty()));
    // A span a result carried for its call's file, with no call here to give it to.
    for t in &mut s.turns {
        if t.edit.as_ref().is_some_and(|e| e.path.is_empty()) {
            t.edit = None;
        }
    }
    folded
}

/// Adds what a later record says about a call to the call's turn (idempotently: a
/// repeated read does not append the same output twice).
pub fn merge_result(call: &mut Turn, late: &Turn) {
    // The call itself, written after its result (Kiro logs a call's last state after the
    // result arrives): the result held becomes that call, as a whole read makes it.
    if call.role == Role::ToolOutput && late.role == Role::ToolCall {
        call.role = Role::ToolCall;
        if let (Some(t), Some(l)) = (call.tool.as_mut(), &late.tool) {
            if t.name.is_empty() {
                t.name = l.name.clone();
            }
        }
    }
    let text = late.text.trim();
    if !text.is_empty() && !call.text.contains(text) {
        if !call.text.is_empty() {
            call.text.push('\n');
        }
        call.text.push_str(text);
    }
    let tool = call.tool.get_or_insert_with(Default::default);
    if let Some(l) = &late.tool {
        if tool.exit.is_none() {
            tool.exit = l.exit.clone();
        }
        if tool.command.is_none() {
            tool.command = l.command.clone();
        }
        tool.is_error |= l.is_error || l.exit.as_ref().is_some_and(|e| !e.succeeded());
    }
    if call.files.is_empty() {
        call.files = late.files.clone();
    }
    match (&mut call.edit, &late.edit) {
        (None, Some(e)) if !e.path.is_empty() => call.edit = Some(e.clone()),
        // What a result says its call removed (`delete_range`'s diff), on the call's file.
        (None, Some(e)) => {
            if let Some(file) = call.files.first() {
                call.edit = Some(crate::model::Edit { path: file.path.clone(), ..e.clone() });
            }
        }
        // A result that says what its call replaced (a hashline edit's diff) completes the
        // call's span; with no path it speaks of its own call's file.
        (Some(c), Some(e)) if c.old.is_empty() && !e.old.is_empty() && (e.path.is_empty() || e.path == c.path) => c.old = e.old.clone(),
        _ => {}
    }
    call.unmake_failed_edit();
}

/// The held turns a tail's results may fold into: those numbered below `next_seq` (the
/// ones from there on a [`Reopen`](crate::model::Reopen)ed tail replaces) that carry a
/// call id.
pub fn calls_by_id<'a>(turns: impl IntoIterator<Item = &'a Turn>, next_seq: u32) -> HashMap<String, Turn> {
    turns.into_iter().filter(|t| t.seq < next_seq).filter_map(|t| Some((t.tool.as_ref()?.call_id.clone()?, t.clone()))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ExitStatus, SourceRef, ToolUse};

    fn session(title: Option<&str>, by: TitleBy) -> Session {
        let mut s = Session::new("h", "s", SourceRef::file("/x"));
        s.title = title.map(str::to_string);
        s.title_by = by;
        s
    }

    #[test]
    fn the_title_precedence_is_user_over_harness_over_prompt() {
        let held = |title: &str| whole_meta(&session(Some(title), TitleBy::Harness), "/x");
        let after = |held_by: TitleBy, tail: Option<&str>, by: TitleBy| {
            let (m, b) = continue_meta(&held("held"), held_by, &session(tail, by), 0, "/x");
            (m.title.unwrap_or_default(), b)
        };
        assert_eq!(after(TitleBy::Prompt, Some("named"), TitleBy::User), ("named".into(), TitleBy::User));
        assert_eq!(after(TitleBy::User, Some("generated"), TitleBy::Harness), ("held".into(), TitleBy::User), "a name outranks");
        assert_eq!(after(TitleBy::Harness, Some("newer"), TitleBy::Harness), ("newer".into(), TitleBy::Harness), "the last generated");
        assert_eq!(after(TitleBy::User, Some("renamed"), TitleBy::User), ("renamed".into(), TitleBy::User), "the last name");
        assert_eq!(after(TitleBy::Prompt, Some("a later prompt"), TitleBy::Prompt), ("held".into(), TitleBy::Prompt), "the first prompt");
        assert_eq!(
            after(TitleBy::ShortPrompt, Some("now add a changelog entry"), TitleBy::Prompt),
            ("now add a changelog entry".into(), TitleBy::Prompt),
            "a prompt that names the session over `/compact`, as a whole read derives it"
        );
        assert_eq!(after(TitleBy::ShortPrompt, Some("/cost"), TitleBy::ShortPrompt), ("held".into(), TitleBy::ShortPrompt));
        assert_eq!(after(TitleBy::Answer, Some("fix it"), TitleBy::ShortPrompt), ("fix it".into(), TitleBy::ShortPrompt), "any prompt");
        assert_eq!(after(TitleBy::Harness, None, TitleBy::Harness), ("held".into(), TitleBy::Harness), "nothing named");
    }

    #[test]
    fn a_folded_result_gives_up_its_number() {
        let mut call = Turn::new(Role::ToolCall, "");
        call.seq = 4;
        call.tool = Some(ToolUse { name: "bash".into(), call_id: Some("c1".into()), ..ToolUse::default() });
        let mut held = calls_by_id([&call], 10);
        let mut tail = session(None, TitleBy::Harness);
        let mut result = Turn::new(Role::ToolOutput, "ok");
        result.seq = 5;
        result.tool = Some(ToolUse { call_id: Some("c1".into()), exit: Some(ExitStatus::Code(2)), ..ToolUse::default() });
        let mut next = Turn::new(Role::Assistant, "done");
        next.seq = 6;
        tail.turns = vec![result, next];
        assert_eq!(fold_late_results(&mut held, &mut tail).calls, ["c1"]);
        assert_eq!(tail.turns.iter().map(|t| t.seq).collect::<Vec<_>>(), [5], "numbered as a whole read numbers it");
        let folded = &held["c1"];
        assert_eq!((folded.text.as_str(), folded.tool.as_ref().map(|t| t.is_error)), ("ok", Some(true)));
    }

    #[test]
    fn a_result_that_says_what_its_call_replaced_completes_the_span() {
        let mut call = Turn::new(Role::ToolCall, "");
        call.tool = Some(ToolUse { name: "edit".into(), call_id: Some("h1".into()), ..ToolUse::default() });
        call.edit = Some(crate::model::Edit { path: "src/job.ts".into(), old: String::new(), new: Some("once".into()) });
        let mut late = Turn::new(Role::ToolOutput, "Edited src/job.ts");
        late.tool = Some(ToolUse { call_id: Some("h1".into()), ..ToolUse::default() });
        late.edit = Some(crate::model::Edit { path: String::new(), old: "twice".into(), new: None });
        merge_result(&mut call, &late);
        let edit = call.edit.expect("the call's span");
        assert_eq!((edit.path.as_str(), edit.old.as_str(), edit.new.as_deref()), ("src/job.ts", "twice", Some("once")));
    }

    #[test]
    fn a_call_written_after_its_result_makes_the_result_held_the_call() {
        let mut held = Turn::new(Role::ToolOutput, "Replaced 1 occurrence");
        held.tool = Some(ToolUse { call_id: Some("c2".into()), ..ToolUse::default() });
        let mut call = Turn::new(Role::ToolCall, "");
        call.tool = Some(ToolUse { name: "str_replace".into(), call_id: Some("c2".into()), ..ToolUse::default() });
        merge_result(&mut held, &call);
        assert_eq!((held.role, held.tool.map(|t| t.name)), (Role::ToolCall, Some("str_replace".to_string())));
        assert_eq!(held.text, "Replaced 1 occurrence");
    }

    #[test]
    fn a_result_with_no_output_completes_its_call_and_otherwise_goes() {
        let mut call = Turn::new(Role::ToolCall, "");
        call.tool = Some(ToolUse { name: "bash".into(), call_id: Some("c1".into()), ..ToolUse::default() });
        let mut held = calls_by_id([&call], 10);
        let silent = |id: &str, seq: u32| {
            let mut t = Turn::new(Role::ToolOutput, "");
            t.seq = seq;
            t.tool = Some(ToolUse { call_id: Some(id.into()), exit: Some(ExitStatus::Code(0)), ..ToolUse::default() });
            t
        };
        let mut tail = session(None, TitleBy::Harness);
        tail.turns = vec![silent("c1", 3), silent("elsewhere", 4)];
        fold_late_results(&mut held, &mut tail);
        assert_eq!(held["c1"].tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(0)), "the exit status is the call's");
        assert!(tail.turns.is_empty(), "one with no call to complete says nothing, as in a whole read");
    }
}

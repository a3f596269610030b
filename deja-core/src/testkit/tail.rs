//! The kit's incremental check ([`Kit::check_tail`]): every append-only source of the
//! fixture home, cut at each record boundary, is read whole up to the cut and then, grown
//! back, as the tail the indexer would read next — from the resume point and the state
//! the first read returned — and the two are joined as the indexer joins them
//! ([`crate::tail`]). The result must be what one whole read gives: the same sessions,
//! each with the same title and project, and the same turns (number, role, text, tool
//! call with its result, files, edit span, partial flag).
//!
//! A cut the indexer would not continue from (the part before it yields no session, or
//! several) is read whole again by the indexer, so it is skipped here too.

use std::collections::BTreeMap;
use std::path::Path;

use crate::format::ParseOptions;
use crate::model::{Resume, Session, SourceRef, Turn};
use crate::normalize::{normalize, NormalizeOptions};

use super::{rel_name, Kit};

/// A turn as the check compares it: what a search hit, a recall record or an export
/// shows (not its time or tree node, which a format may only know from its neighbours).
#[derive(Debug, PartialEq)]
struct Shown<'a> {
    seq: u32,
    role: crate::model::Role,
    text: &'a str,
    tool: Option<&'a crate::model::ToolUse>,
    files: &'a [crate::model::FileTouch],
    edit: Option<&'a crate::model::Edit>,
    partial: bool,
}

impl<'a> Shown<'a> {
    fn of(t: &'a Turn) -> Shown<'a> {
        Shown { seq: t.seq, role: t.role, text: &t.text, tool: t.tool.as_ref(), files: &t.files, edit: t.edit.as_ref(), partial: t.partial }
    }
}

impl Kit {
    /// Each append-only source read in two parts, at every record boundary, equals the
    /// source read whole (see the module doc).
    pub fn check_tail(&self) {
        let home = self.home();
        let norm = NormalizeOptions::default();
        let injected = self.format.info().injected;
        let read = |src: &SourceRef| -> Option<(Vec<Session>, crate::ParseStats)> {
            let mut out = Vec::new();
            let stats = self.format.parse(src, &ParseOptions::default(), &mut out).ok()?;
            Some((out, stats))
        };
        for src in self.sources(&home).into_iter().filter(|s| s.append_only) {
            let rel = rel_name(home.path(), &src);
            let Ok(bytes) = std::fs::read(&src.path) else { continue };
            let Some((mut whole, _)) = read(&src) else { continue };
            for s in &mut whole {
                normalize(s, &norm, injected);
            }
            let cuts: Vec<usize> =
                bytes.iter().enumerate().filter(|(i, b)| **b == b'\n' && i + 1 < bytes.len()).map(|(i, _)| i + 1).collect();
            for cut in cuts {
                rewrite(&src.path, &bytes[..cut]);
                let prefix = read(&src);
                rewrite(&src.path, &bytes);
                // The indexer continues only a source whose part read so far made one session.
                let Some((mut first, stats)) = prefix.filter(|(out, _)| out.len() == 1) else { continue };
                let mut held = first.remove(0);
                let resume = Resume::after(&stats, &held);
                normalize(&mut held, &norm, injected);
                let tail_src = SourceRef { resume: Some(resume), ..src.clone() };
                let Some((tail, _)) = read(&tail_src) else {
                    panic!("{}: {rel} cut at byte {cut}: the tail does not parse", self.id());
                };
                let next_seq = tail_src.resume.as_ref().map_or(0, |r| r.next_seq);
                let mut joined = vec![held];
                for mut s in tail {
                    normalize(&mut s, &norm, injected);
                    continue_held(&mut joined, s, next_seq);
                }
                if let Some(diff) = difference(&whole, &joined) {
                    let line = String::from_utf8_lossy(&bytes[cut..]).lines().next().unwrap_or("").chars().take(160).collect::<String>();
                    panic!(
                        "{}: {rel} read whole up to byte {cut} and then from there is not what one whole read gives: {diff}\n\
                         the tail starts with: {line}",
                        self.id()
                    );
                }
            }
        }
    }
}

/// Joins the tail session `s` to the session held (the first of `joined`) as the indexer
/// does: the held turns from `next_seq` on are the tail's to make again (a reopened
/// read's), the others take the results folded into them. A session the tail did not
/// continue is a session of its own (dropped with no turns).
fn continue_held(joined: &mut Vec<Session>, mut s: Session, next_seq: u32) {
    let held = &mut joined[0];
    if s.id != held.id {
        if !s.turns.is_empty() {
            joined.push(s);
        }
        return;
    }
    let key = held.source.manifest_key();
    let before = crate::tail::whole_meta(held, &key);
    let replaced = held.turns.iter().filter(|t| t.seq >= next_seq).count() as u32;
    held.turns.retain(|t| t.seq < next_seq);
    let mut calls = crate::tail::calls_by_id(&held.turns, next_seq);
    let folded = crate::tail::fold_late_results(&mut calls, &mut s);
    for t in &mut held.turns {
        if let Some(call) =
            t.tool.as_ref().and_then(|x| x.call_id.as_ref()).filter(|id| folded.calls.contains(id)).and_then(|id| calls.get(id))
        {
            *t = call.clone();
        }
    }
    let (meta, by) = crate::tail::continue_meta(&before, held.title_by, &s, replaced, &key);
    held.title = meta.title;
    held.title_by = by;
    held.project = meta.project;
    held.parent = meta.parent;
    held.kind = meta.kind;
    held.agent = meta.agent;
    held.turns.append(&mut s.turns);
}

/// The first way `joined` differs from `whole`, in words.
fn difference(whole: &[Session], joined: &[Session]) -> Option<String> {
    let by_id = |v: &[Session]| v.iter().map(|s| (s.id.clone(), s.clone())).collect::<BTreeMap<String, Session>>();
    let (w, j) = (by_id(whole), by_id(joined));
    if w.keys().ne(j.keys()) {
        return Some(format!("sessions {:?}, whole {:?}", j.keys().collect::<Vec<_>>(), w.keys().collect::<Vec<_>>()));
    }
    for (id, a) in &w {
        let b = &j[id];
        if a.title != b.title {
            return Some(format!("session {id}: title {:?}, whole {:?}", b.title, a.title));
        }
        if a.project != b.project {
            return Some(format!("session {id}: project {:?}, whole {:?}", b.project, a.project));
        }
        let (ta, tb): (Vec<Shown>, Vec<Shown>) = (a.turns.iter().map(Shown::of).collect(), b.turns.iter().map(Shown::of).collect());
        if let Some(i) = (0..ta.len().max(tb.len())).find(|&i| ta.get(i) != tb.get(i)) {
            return Some(format!("session {id}: turn {i} is\n  {:?}\nwhole\n  {:?}", tb.get(i), ta.get(i)));
        }
    }
    None
}

/// Writes `bytes` over `path` (its times move; only its bytes say where a tail starts).
fn rewrite(path: &Path, bytes: &[u8]) {
    if let Err(e) = std::fs::write(path, bytes) {
        panic!("rewriting {}: {e}", path.display());
    }
}

//! Recall answers as Markdown lines: a header saying what was found for what (with
//! the tier), then rows. Rows start with a fixed marker (`[n]`, `- `, `## `) and every
//! quoted piece of history is [cleaned](super::frame::clean) into one line placed after
//! a prefix, so quoted text can never start a row. The CLI prints these lines; the MCP
//! server frames them within a budget.

use super::frame::{clean, Answer};
use super::query::{BlameAnswer, CommandStat, ContextAnswer, FilesAnswer, FixAnswer, FrictionRow, HowAnswer, Orient, RecallAnswer};
use crate::mining::digest::Digest;
use crate::model::{SessionMeta, Timestamp};
use crate::redact::redact;

/// Longest quoted line, in chars.
const QUOTE: usize = 280;
const TITLE: usize = 100;

fn date(t: Option<Timestamp>) -> String {
    t.and_then(|t| t.to_datetime()).map_or_else(|| "-".to_string(), |d| d.format("%Y-%m-%d").to_string())
}

fn short_id(id: &str) -> String {
    clean(&id.chars().take(13).collect::<String>(), 13)
}

/// `claude · 2026-03-02 · /src/app · title (id 5f0c7e2a)`.
pub fn session_label(m: &SessionMeta) -> String {
    format!(
        "{}{} · {} · {} · {} (id {}){}",
        clean(&m.harness, 20),
        note_origin(m),
        date(m.updated.or(m.started)),
        clean(m.project.as_deref().unwrap_or("-"), 80),
        clean(m.title.as_deref().unwrap_or("(untitled)"), TITLE),
        short_id(&m.id),
        kept_note(m)
    )
}

/// Said of a session whose source its harness deleted: the archive kept it.
fn kept_note(m: &SessionMeta) -> String {
    m.source_deleted
        .as_ref()
        .map_or_else(String::new, |d| format!(" (its harness deleted the source; deja kept it, noticed {})", date(Some(d.noticed))))
}

/// `    resume: cd /src/app && claude --resume 5f0c…`, when the harness reopens the session.
fn resume_row(m: &SessionMeta) -> Option<String> {
    crate::format::resume_for(m).ok().map(|r| format!("    resume: `{}`", clean(&r.command, 300)))
}

/// What a note not written by the person is, said wherever it is shown.
fn note_origin(m: &SessionMeta) -> &'static str {
    if !m.is_unverified_note() {
        ""
    } else if m.kind.as_deref() == Some(crate::model::NOTE_BY_AGENT) {
        " (note written by an agent, unverified)"
    } else {
        " (note of unrecorded origin, unverified)"
    }
}

/// Longest agent-written note line `orient` quotes, in chars.
const AGENT_NOTE: usize = 160;

fn quote(text: &str) -> String {
    format!("    > {}", clean(text, QUOTE))
}

/// `1 session`, `2 sessions`: a count with its noun.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn answer(mode: &str, tier: Option<&str>, header: String, lines: Vec<String>) -> Answer {
    Answer { mode: mode.to_string(), tier: tier.map(str::to_string), header, lines }
}

/// A team store's answer (`deja search --scope all`, MCP `scope`): each session
/// labelled with its author and machine and named the way `deja show --team` takes it,
/// its matching turns quoted. Framed with [`super::frame::TEAM_PREAMBLE`].
pub fn team(r: &crate::team::TeamResults, query: &str) -> Answer {
    let mut lines = Vec::new();
    for (i, s) in r.sessions.iter().enumerate() {
        lines.push(format!(
            "[T{}] {}@{} · {} · {} · {} · {} (show: deja show --team {})",
            i + 1,
            clean(&s.author, 40),
            clean(&s.machine, 40),
            clean(&s.harness, 20),
            date(s.updated),
            clean(&s.project, 80),
            clean(s.title.as_deref().unwrap_or("(untitled)"), TITLE),
            clean(&s.key(), 120)
        ));
        for h in &s.hits {
            lines.push(quote(&h.text));
        }
    }
    let header = format!(
        "team recall ({}): {} for \"{}\" from the team store, each labelled author@machine",
        clean(&r.tier, 20),
        plural(r.sessions.len(), "session", "sessions"),
        clean(query, 120)
    );
    answer(super::frame::TEAM_MODE, Some(&r.tier), header, lines)
}

/// The line an empty answer is: what was searched, and that nothing matched.
pub fn nothing(mode: &str, what: &str) -> String {
    format!("deja {mode}: nothing matched — searched {what}.")
}

pub fn recall(r: &RecallAnswer, query: &str) -> Answer {
    let mut lines = Vec::new();
    for (i, h) in r.hits.iter().enumerate() {
        lines.push(format!("[{}] {}", i + 1, session_label(&h.session)));
        lines.extend(resume_row(&h.session));
        for s in &h.snippets {
            lines.push(quote(s));
        }
    }
    let mut header = if r.by_id {
        format!("recall: session {}", short_id(&r.hits.first().map(|h| h.session.id.clone()).unwrap_or_default()))
    } else {
        format!("recall ({}): {} for \"{}\"", r.tier.as_str(), plural(r.hits.len(), "session", "sessions"), clean(query, 120))
    };
    if !r.dropped.is_empty() {
        header.push_str(&format!("; best matches lack: {}", clean(&r.dropped.join(", "), 120)));
    }
    if let Some(b) = &r.bounded {
        header.push_str(&format!("; {b}"));
        if !r.left_out.is_empty() {
            header.push_str(&format!(", left out: {}", clean(&crate::redact::redact(&r.left_out.join(", ")), 200)));
        }
    }
    header.push_str(" — `context` with an id gives a session's digest");
    answer("recall", Some(r.tier.as_str()), header, lines)
}

/// A session digest as sections.
pub fn digest_lines(d: &Digest) -> Vec<String> {
    let mut lines = Vec::new();
    let mut section = |title: &str, rows: Vec<String>| {
        if !rows.is_empty() {
            lines.push(format!("## {title}"));
            lines.extend(rows);
        }
    };
    section("Problem", d.problem.iter().map(|p| quote(p)).collect());
    section("Decided", d.decisions.iter().map(|p| format!("- {}", clean(p, QUOTE))).collect());
    section(
        "Ran",
        d.commands
            .iter()
            .rev()
            .take(12)
            .rev()
            .map(|c| {
                let times = if c.runs > 1 { format!(" ({}×)", c.runs) } else { String::new() };
                format!("- `{}` → {}{times}", clean(&c.command, 200), clean(&c.status, 30))
            })
            .collect(),
    );
    section(
        "Files",
        d.files
            .iter()
            .take(15)
            .map(|f| {
                let times = if f.times > 1 { format!(" ({}×)", f.times) } else { String::new() };
                format!("- {} {}{times}", f.action, clean(&f.path, 200))
            })
            .collect(),
    );
    let mut ended: Vec<String> = d.ended.iter().map(|e| quote(e)).collect();
    if d.ended_failing {
        ended.push("- the last command run failed".to_string());
    }
    section("Ended", ended);
    section("Next", d.next_steps.iter().map(|s| format!("- {}", clean(s, QUOTE))).collect());
    lines
}

pub fn context(c: &ContextAnswer) -> Answer {
    let how = if c.by_id { "by id".to_string() } else { format!("best match, {}", c.tier.as_str()) };
    let header = format!("context ({how}): {} · {} turns", session_label(&c.session), c.digest.turns);
    let mut lines = digest_lines(&c.digest);
    lines.extend(resume_section(&c.session));
    answer("context", Some(c.tier.as_str()), header, lines)
}

pub fn handoff(c: &ContextAnswer, project: &str) -> Answer {
    let which = if c.by_id { "a past session".to_string() } else { format!("the latest session in {}", clean(project, 120)) };
    let header =
        format!("handoff: {which} — {} · {} turns. Continue from \"Ended\" and \"Next\".", session_label(&c.session), c.digest.turns);
    let mut lines = digest_lines(&c.digest);
    lines.extend(resume_section(&c.session));
    answer("handoff", None, header, lines)
}

/// The digest's last section: how to reopen the session itself.
fn resume_section(m: &SessionMeta) -> Vec<String> {
    resume_row(m).map_or_else(Vec::new, |row| vec!["## Resume".to_string(), format!("- {}", row.trim_start())])
}

pub fn fix(r: &FixAnswer) -> Answer {
    let what = r.errors.first().map_or_else(String::new, |(_, l)| clean(l, 160));
    let mut lines = Vec::new();
    for (i, h) in r.fixes.iter().enumerate() {
        let state = match h.came_back_at {
            None => "held".to_string(),
            Some(t) => format!("did not hold (came back at turn {t})"),
        };
        let verified = if h.fix.verified { " · the re-run passed" } else { "" };
        let here = if h.here { " · this project" } else { "" };
        lines.push(format!("[{}] {state}{verified}{here} · {}", i + 1, session_label(&h.session)));
        let after = h.fix.failed_command.as_deref().map(|c| format!(" (after `{}`)", clean(c, 120))).unwrap_or_default();
        lines.push(format!("    error: {}{after}", clean(&h.fix.error_line, 200)));
        if !h.fix.edited.is_empty() {
            lines.push(format!("    edited: {}", clean(&h.fix.edited.join(", "), 240)));
        }
        let ran: Vec<String> = h.fix.commands.iter().map(|c| format!("`{}`", clean(c, 160))).collect();
        lines.push(format!("    ran: {} (turn {})", ran.join(" then "), h.fix.fix_seq));
        if let Some(n) = &h.fix.note {
            lines.push(format!("    note: {}", clean(n, QUOTE)));
        }
    }
    for s in &r.seen {
        lines.push(format!(
            "- seen {} in {} ({}), last {}; no command after it was followed by success",
            plural(s.occurrences, "time", "times"),
            plural(s.sessions, "session", "sessions"),
            clean(&s.harnesses.join(", "), 80),
            date(s.last)
        ));
        lines.push(quote(&s.line));
    }
    let header = format!("fix ({}): {} for `{what}`", r.tier.as_str(), plural(r.fixes.len(), "past fix", "past fixes"));
    answer("fix", Some(r.tier.as_str()), header, lines)
}

fn command_row(i: usize, c: &CommandStat) -> String {
    let here = if c.here { " · this project" } else { "" };
    format!(
        "[{}] `{}` — {} in {}, {} ok, {} failed · last {} · {}{here}",
        i + 1,
        clean(&c.command, 200),
        plural(c.runs as usize, "run", "runs"),
        plural(c.sessions, "session", "sessions"),
        c.ok,
        c.failed,
        date(c.last),
        clean(&c.harnesses.join(", "), 60)
    )
}

pub fn how(r: &HowAnswer, tool: &str) -> Answer {
    let lines = r.commands.iter().enumerate().map(|(i, c)| command_row(i, c)).collect();
    let header = format!(
        "how ({}): {} of \"{}\", this project first, then the most used",
        r.tier.as_str(),
        plural(r.commands.len(), "invocation", "invocations"),
        clean(tool, 80)
    );
    answer("how", Some(r.tier.as_str()), header, lines)
}

pub fn blame(r: &BlameAnswer) -> Answer {
    let mut lines = Vec::new();
    for (i, h) in r.hits.iter().enumerate() {
        let times = if h.touches > 1 { format!(" ({} turns)", h.touches) } else { String::new() };
        lines.push(format!("[{}] {} {}{times} · {}", i + 1, h.action, clean(&h.path, 160), session_label(&h.session)));
        if let Some(d) = &h.decision {
            lines.push(format!("    decision: {}", clean(d, QUOTE)));
        }
    }
    let header = format!(
        "blame ({}): {} touched or discussed `{}`, most specific and recent first",
        r.tier.as_str(),
        plural(r.hits.len(), "session", "sessions"),
        clean(&r.path, 160)
    );
    answer("blame", Some(r.tier.as_str()), header, lines)
}

pub fn files(r: &FilesAnswer, topic: &str) -> Answer {
    let lines = r
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            format!(
                "[{}] {} — edited {}×, read {}× in {} · last {}",
                i + 1,
                clean(&f.path, 200),
                f.edits,
                f.reads,
                plural(f.sessions, "session", "sessions"),
                date(f.last)
            )
        })
        .collect();
    let header = format!(
        "files ({}): {} touched by {} about \"{}\"",
        r.tier.as_str(),
        plural(r.files.len(), "file", "files"),
        plural(r.sessions.len(), "session", "sessions"),
        clean(topic, 80)
    );
    answer("files", Some(r.tier.as_str()), header, lines)
}

fn friction_rows(rows: &[FrictionRow]) -> Vec<String> {
    let mut lines = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let fixed = if r.fixes > 0 { format!("{} recorded", plural(r.fixes, "fix", "fixes")) } else { "no fix recorded".to_string() };
        lines.push(format!(
            "[{}] {} in {} ({}) · last {} · {fixed}",
            i + 1,
            plural(r.error.occurrences, "time", "times"),
            plural(r.error.sessions, "session", "sessions"),
            clean(&r.error.harnesses.join(", "), 80),
            date(r.error.last)
        ));
        lines.push(quote(&r.error.line));
    }
    lines
}

pub fn friction(rows: &[FrictionRow], min_sessions: usize) -> Answer {
    let header = format!("friction: {} that hit {min_sessions} or more sessions", plural(rows.len(), "error", "errors"));
    answer("friction", None, header, friction_rows(rows))
}

pub fn orient(o: &Orient) -> Answer {
    let mut lines = Vec::new();
    if !o.sessions.is_empty() {
        lines.push("## Recent sessions".to_string());
        for (i, s) in o.sessions.iter().enumerate() {
            lines.push(format!("[{}] {}", i + 1, session_label(&s.session)));
            if let Some(out) = &s.outcome {
                lines.push(format!("    outcome: {}", clean(out, QUOTE)));
            }
            for d in s.decisions.iter().filter(|d| Some(*d) != s.outcome.as_ref()) {
                lines.push(format!("    decided: {}", clean(d, QUOTE)));
            }
        }
    }
    if !o.notes.is_empty() {
        lines.push("## Notes".to_string());
        for n in &o.notes {
            lines.push(format!("- {} ({})", clean(n.outcome.as_deref().unwrap_or(""), QUOTE), date(n.session.updated)));
        }
    }
    if !o.agent_notes.is_empty() {
        lines.push("## Notes written by agents (unverified: not the person's words; check before relying on them)".to_string());
        for n in &o.agent_notes {
            let by = if n.session.kind.as_deref() == Some(crate::model::NOTE_BY_AGENT) { "agent" } else { "origin not recorded" };
            lines.push(format!(
                "- [{by}, unverified] {} ({})",
                clean(n.outcome.as_deref().unwrap_or(""), AGENT_NOTE),
                date(n.session.updated)
            ));
        }
    }
    if !o.recurring_errors.is_empty() {
        lines.push("## Recurring errors".to_string());
        lines.extend(friction_rows(&o.recurring_errors));
    }
    if !o.commands.is_empty() {
        lines.push("## Commands that work here".to_string());
        lines.extend(o.commands.iter().enumerate().map(|(i, c)| command_row(i, c)));
    }
    let header = format!("orient: {} · {}", clean(&o.project, 160), plural(o.sessions.len(), "recent session", "recent sessions"));
    answer("orient", None, header, lines)
}

/// An answer as plain text: header, then lines (each redacted once more, like a
/// framed answer's).
pub fn plain(a: &Answer) -> String {
    let mut out = String::with_capacity(a.header.len() + a.lines.iter().map(|l| l.len() + 1).sum::<usize>() + 1);
    out.push_str(&redact(&a.header));
    out.push('\n');
    for l in &a.lines {
        out.push_str(&redact(l));
        out.push('\n');
    }
    out
}

/// An answer cut to at most `budget` bytes of plain text on line boundaries.
pub fn plain_within(a: &Answer, budget: usize) -> String {
    let mut out = String::new();
    out.push_str(&redact(&a.header));
    out.push('\n');
    let mut shown = 0;
    for l in &a.lines {
        let l = redact(l);
        if out.len() + l.len() + 1 + 48 > budget {
            break;
        }
        out.push_str(&l);
        out.push('\n');
        shown += 1;
    }
    if shown < a.lines.len() {
        out.push_str(&format!("… {} more lines (raise --budget)\n", a.lines.len() - shown));
    }
    out
}

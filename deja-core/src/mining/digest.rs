//! What a session amounted to, read from its turns: the problem (first substantive
//! user turns), what was decided (assistant lines that conclude), what was run
//! (commands with their status), which files were touched, where it ended, and what
//! was left to do. Pure functions over turns; `ctx`, `orient`, `blame` and the MCP
//! `context`/`handoff` modes all render from this.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use super::commands::{command_key, is_inspection, status_label, Outcome};
use crate::model::{FileAction, Role, Turn};
use crate::text::one_line;

/// Longest line a digest quotes, in chars.
pub const LINE_CHARS: usize = 300;

static CONCLUDES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?ix)
        ^\W*(fixed|the\ fix|root\ cause|solution|resolved|decided|decision|conclusion|summary|done\b|all\ (tests\ )?pass|
             now\ (passes|works|builds)|the\ (problem|issue|bug|cause)\ (was|is)|turns\ out|went\ with|going\ with|
             we('ll|\ will)\ (use|keep|go)|i('ll|\ will)\ use|switched\ to|chose|result:|outcome:) |
        \b(because|instead\ of|root\ cause|fixed\ by|the\ fix\ is|resolved\ by|caused\ by|so\ that|which\ means|
           by\ (adding|changing|setting|raising|lowering|removing|pinning|switching|using))\b |
        \b(passes|passing|works\ now|is\ fixed|are\ fixed|succeeded)\b
    ",
    )
    .expect("static regex")
});

static TENTATIVE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?ix)^\W*(let\ me|let's|i('ll|\ will)\ (check|look|run|try|read|start)|checking|looking|now\ i|first,?\ i|i\ need\ to|i'm\ going\ to)\b")
        .expect("static regex")
});

static NEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?ix)\b(next\ steps?|todo|to\ do|remaining|still\ (need|needs|to)|follow[- ]up|left\ to|not\ yet|should\ also|then\ we|afterwards|later\ we)\b")
        .expect("static regex")
});

/// How strongly a line reads as a conclusion (0 = not at all).
pub fn decision_score(line: &str) -> u32 {
    let l = line.trim();
    let chars = l.chars().count();
    if !(16..=600).contains(&chars) || l.ends_with('?') || l.starts_with("```") {
        return 0;
    }
    if TENTATIVE.is_match(l) {
        return 0;
    }
    let hits = CONCLUDES.find_iter(l).count() as u32;
    if hits == 0 {
        return 0;
    }
    hits.min(3) + u32::from(chars >= 40)
}

/// The concluding lines of assistant turns: `(seq, line, score)`, in session order.
pub fn decision_lines(turns: &[Turn]) -> Vec<(u32, String, u32)> {
    let mut out = Vec::new();
    for t in turns.iter().filter(|t| t.role == Role::Assistant || t.role == Role::Summary) {
        for line in t.text.lines() {
            let score = decision_score(line);
            if score > 0 {
                out.push((t.seq, one_line(strip_markdown(line), LINE_CHARS), score));
            }
        }
    }
    out
}

/// The best concluding lines, at most `n`, kept in session order; later lines win ties.
pub fn best_decisions(turns: &[Turn], n: usize) -> Vec<(u32, String)> {
    let all = decision_lines(turns);
    let mut ranked: Vec<(usize, u32)> = all.iter().enumerate().map(|(i, (_, _, s))| (i, *s)).collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)));
    let keep: std::collections::HashSet<usize> = ranked.into_iter().take(n).map(|(i, _)| i).collect();
    let mut seen = std::collections::HashSet::new();
    all.into_iter()
        .enumerate()
        .filter(|(i, (_, line, _))| keep.contains(i) && seen.insert(line.to_lowercase()))
        .map(|(_, (seq, line, _))| (seq, line))
        .collect()
}

fn strip_markdown(line: &str) -> &str {
    line.trim().trim_start_matches(['#', '*', '-', '>', ' ']).trim_end_matches(['*', ' '])
}

#[derive(Debug, Clone, Serialize)]
pub struct CommandRun {
    pub command: String,
    pub status: String,
    pub outcome: Outcome,
    pub runs: u32,
    pub last_seq: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct FileWork {
    pub path: String,
    /// `edit`, `write`, `delete` or `read`, the strongest seen.
    pub action: &'static str,
    pub times: u32,
}

#[derive(Debug, Clone, Serialize, Default)]
pub struct Digest {
    pub problem: Vec<String>,
    pub decisions: Vec<String>,
    pub commands: Vec<CommandRun>,
    pub files: Vec<FileWork>,
    /// The last thing said, user or assistant.
    pub ended: Option<String>,
    /// Whether the last command run failed.
    pub ended_failing: bool,
    pub next_steps: Vec<String>,
    pub turns: usize,
}

/// Reads a digest out of a session's turns (see the module doc).
pub fn digest(turns: &[Turn]) -> Digest {
    let problem: Vec<String> = turns
        .iter()
        .filter(|t| t.role == Role::User && t.text.trim().chars().count() >= 8)
        .take(2)
        .map(|t| one_line(&t.text, LINE_CHARS))
        .collect();
    let decisions = best_decisions(turns, 6).into_iter().map(|(_, l)| l).collect();

    let mut commands: Vec<CommandRun> = Vec::new();
    let mut by_key: BTreeMap<String, usize> = BTreeMap::new();
    let mut last_outcome = None;
    for t in turns {
        let Some(tool) = &t.tool else { continue };
        let Some(cmd) = tool.command.as_deref().filter(|c| !c.trim().is_empty()) else { continue };
        let outcome = Outcome::of(tool);
        last_outcome = Some(outcome);
        if is_inspection(cmd) {
            continue;
        }
        let key = command_key(cmd);
        let run = CommandRun { command: one_line(&key, LINE_CHARS), status: status_label(tool), outcome, runs: 1, last_seq: t.seq };
        match by_key.get(&key) {
            Some(&i) => {
                let prev = &mut commands[i];
                prev.runs += 1;
                prev.status = run.status;
                prev.outcome = run.outcome;
                prev.last_seq = t.seq;
            }
            None => {
                by_key.insert(key, commands.len());
                commands.push(run);
            }
        }
    }

    let mut files: BTreeMap<String, (FileAction, u32, usize)> = BTreeMap::new();
    for (i, t) in turns.iter().enumerate() {
        // One count per turn: an edit names its file both as a touch and as a span.
        let mut in_turn: BTreeMap<String, FileAction> = BTreeMap::new();
        let edit = t.edit.as_ref().map(|e| (e.path.clone(), FileAction::Edit));
        for (path, action) in t.files.iter().map(|f| (f.path.clone(), f.action)).chain(edit) {
            let a = in_turn.entry(path).or_insert(action);
            *a = strongest(*a, action);
        }
        for (path, action) in in_turn {
            let e = files.entry(path).or_insert((action, 0, i));
            e.0 = strongest(e.0, action);
            e.1 += 1;
        }
    }
    let mut files: Vec<(String, FileAction, u32, usize)> = files.into_iter().map(|(p, (a, n, i))| (p, a, n, i)).collect();
    files.sort_by(|a, b| (a.1 == FileAction::Read).cmp(&(b.1 == FileAction::Read)).then(a.3.cmp(&b.3)));
    let files = files.into_iter().map(|(path, action, times, _)| FileWork { path, action: action.as_str(), times }).collect();

    let ended = turns.iter().rev().find(|t| matches!(t.role, Role::Assistant | Role::User) && !t.text.trim().is_empty()).map(|t| {
        let who = if t.role == Role::User { "user" } else { "assistant" };
        format!("{who}: {}", one_line(last_paragraph(&t.text), LINE_CHARS))
    });

    let mut next_steps: Vec<String> = Vec::new();
    for t in turns.iter().rev().filter(|t| t.role == Role::Assistant).take(2) {
        for line in t.text.lines().filter(|l| NEXT.is_match(l) && !l.trim().ends_with('?')) {
            let l = one_line(strip_markdown(line), LINE_CHARS);
            if !l.is_empty() && !next_steps.contains(&l) && next_steps.len() < 4 {
                next_steps.push(l);
            }
        }
    }
    if let Some(last_user) = turns.iter().rposition(|t| t.role == Role::User) {
        let answered = turns[last_user..].iter().any(|t| t.role == Role::Assistant && !t.text.trim().is_empty());
        if !answered {
            next_steps.insert(0, format!("unanswered request: {}", one_line(&turns[last_user].text, LINE_CHARS)));
        }
    }

    Digest {
        problem,
        decisions,
        commands,
        files,
        ended,
        ended_failing: last_outcome == Some(Outcome::Failed),
        next_steps,
        turns: turns.len(),
    }
}

fn strongest(a: FileAction, b: FileAction) -> FileAction {
    let rank = |x: FileAction| match x {
        FileAction::Read => 0,
        FileAction::Delete => 1,
        FileAction::Edit => 2,
        FileAction::Write => 3,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

/// The last non-empty paragraph of a message (where an answer usually concludes).
fn last_paragraph(text: &str) -> &str {
    text.trim().rsplit("\n\n").map(str::trim).find(|p| !p.is_empty()).unwrap_or("")
}

/// The one line that best says how a session ended: its last decision, else its last
/// assistant line.
pub fn outcome_line(turns: &[Turn]) -> Option<String> {
    if let Some((_, line)) = best_decisions(turns, 1).pop() {
        return Some(line);
    }
    turns
        .iter()
        .rev()
        .find(|t| t.role == Role::Assistant && !t.text.trim().is_empty())
        .map(|t| one_line(last_paragraph(&t.text), LINE_CHARS))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Edit, ExitStatus, FileTouch, ToolUse};

    fn turn(seq: u32, role: Role, text: &str) -> Turn {
        let mut t = Turn::new(role, text);
        t.seq = seq;
        t
    }

    fn shell(seq: u32, cmd: &str, code: i64) -> Turn {
        let mut t = turn(seq, Role::ToolCall, "");
        t.tool = Some(ToolUse {
            name: "bash".into(),
            command: Some(cmd.into()),
            exit: Some(ExitStatus::Code(code)),
            is_error: code != 0,
            ..ToolUse::default()
        });
        t
    }

    #[test]
    fn conclusions_score_and_chatter_does_not() {
        assert!(decision_score("Fixed: invoices now round half up because math.Floor truncated negatives.") >= 2);
        assert!(decision_score("The root cause was the pool size of 10 in staging.") > 0);
        assert_eq!(decision_score("Let me check the workflow file because it may time out."), 0);
        assert_eq!(decision_score("Should we raise the timeout?"), 0);
        assert_eq!(decision_score("ok"), 0);
    }

    #[test]
    fn digest_reads_problem_decisions_commands_files_and_end() {
        let mut edit = turn(3, Role::ToolCall, "edited");
        edit.edit = Some(Edit { path: "/src/app/pool.rs".into(), old: "10".into(), new: Some("40".into()) });
        let mut read = turn(2, Role::ToolCall, "contents");
        read.files = vec![FileTouch { path: "/src/app/Cargo.toml".into(), action: FileAction::Read }];
        let turns = vec![
            turn(0, Role::User, "why does the pool run out of connections in staging?"),
            turn(1, Role::Assistant, "Let me look at the pool config."),
            read,
            edit,
            shell(4, "cargo test", 101),
            shell(5, "ls", 0),
            shell(6, "cargo test", 0),
            turn(7, Role::Assistant, "Raised pool_size to 40 because staging runs 30 workers.\n\nNext step: deploy to staging."),
        ];
        let d = digest(&turns);
        assert_eq!(d.problem, vec!["why does the pool run out of connections in staging?"]);
        assert_eq!(d.decisions, vec!["Raised pool_size to 40 because staging runs 30 workers."]);
        assert_eq!(d.commands.len(), 1, "ls is inspection: {:?}", d.commands);
        assert_eq!((d.commands[0].runs, d.commands[0].outcome), (2, Outcome::Ok));
        assert_eq!(d.files[0].path, "/src/app/pool.rs");
        assert_eq!(d.files[0].action, "edit");
        assert_eq!(d.files[1].action, "read");
        assert_eq!(d.ended.as_deref(), Some("assistant: Next step: deploy to staging."));
        assert!(!d.ended_failing);
        assert_eq!(d.next_steps, vec!["Next step: deploy to staging."]);
        assert_eq!(outcome_line(&turns).as_deref(), Some("Raised pool_size to 40 because staging runs 30 workers."));
    }

    #[test]
    fn an_unanswered_request_is_the_first_next_step() {
        let turns = vec![
            turn(0, Role::User, "add retries to the client"),
            turn(1, Role::Assistant, "Added retries."),
            turn(2, Role::User, "now the docs"),
        ];
        let d = digest(&turns);
        assert_eq!(d.next_steps.first().map(String::as_str), Some("unanswered request: now the docs"));
    }
}

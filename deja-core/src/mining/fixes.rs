//! Work records mined from a session at index time: error events (an error line in a
//! command's output, or a failed command) and error → fix pairs.
//!
//! A pair is an error followed, within the next [`FIX_WINDOW`] turns of the same
//! session, by a command that succeeded, after which the same error (same
//! [signature](super::signature)) did not come back for another [`FIX_WINDOW`] turns.
//! When the error recurs inside the window, the later occurrence is the one paired.
//! Among the successful commands in the window the one that re-runs what failed (the
//! same line, else the same program and verb, else the same program) is the one the
//! fix held after; everything run successfully before it is part of the fix, together
//! with the files edited in between. A success that neither re-runs what failed, nor
//! follows an edit, nor names a word of the error (`pip install psycopg2-binary` after
//! `No module named 'psycopg2'`) is unrelated work, not a fix. `held` says whether the error stayed away for the
//! rest of the turns given (the index re-checks this against later turns at query
//! time).

use serde::{Deserialize, Serialize};

use super::commands::{command_key, is_inspection, program, program_and_verb, Outcome};
use super::digest::decision_score;
use super::signature::{error_lines, signature, strip_ansi};
use crate::model::{FileAction, Role, Turn};
use crate::redact::Redact;
use crate::text::one_line;

/// Turns after an error in which a fix is looked for, and after a fix in which the
/// error must not come back.
pub const FIX_WINDOW: usize = 10;
/// Commands kept per fix.
const MAX_FIX_COMMANDS: usize = 4;
const MAX_EDITED: usize = 6;
const LINE_CHARS: usize = 300;

/// One error seen in a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorEvent {
    pub seq: u32,
    pub sig: String,
    /// The error line as printed (one line, capped).
    pub line: String,
    pub command: Option<String>,
    /// The command failed (exit status or error flag), rather than only printing an
    /// error line.
    pub failed: bool,
}

/// An error and what was run after it until it stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FixPair {
    pub sig: String,
    pub error_line: String,
    pub error_seq: u32,
    pub failed_command: Option<String>,
    /// The turn of the command the fix held after.
    pub fix_seq: u32,
    /// Successful commands run after the error, ending with the one it held after.
    pub commands: Vec<String>,
    /// Files edited or written between the error and the fix.
    pub edited: Vec<String>,
    /// The assistant's concluding line around the fix, when it wrote one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The error did not come back in the rest of the turns mined.
    pub held: bool,
    /// The fix ended with a successful re-run of what had failed.
    #[serde(default)]
    pub verified: bool,
}

/// The error line and command are output and input someone's tool printed or ran; the
/// signature is a lookup key and stays as it is.
impl Redact for ErrorEvent {
    fn redact_in_place(&mut self) {
        self.line.redact_in_place();
        self.command.redact_in_place();
    }
}

/// Everything quoted from the session is redacted; the signature stays a lookup key.
impl Redact for FixPair {
    fn redact_in_place(&mut self) {
        self.error_line.redact_in_place();
        self.failed_command.redact_in_place();
        self.commands.redact_in_place();
        self.edited.redact_in_place();
        self.note.redact_in_place();
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mined {
    pub errors: Vec<ErrorEvent>,
    pub fixes: Vec<FixPair>,
}

/// The error events of one turn (empty for turns that are not commands).
pub fn turn_errors(turn: &Turn) -> Vec<ErrorEvent> {
    let Some(tool) = &turn.tool else { return Vec::new() };
    let Some(cmd) = tool.command.as_deref().filter(|c| !c.trim().is_empty()) else { return Vec::new() };
    let failed = Outcome::of(tool) == Outcome::Failed;
    if is_inspection(cmd) {
        // Reading a log that holds errors is not an error, and `grep`/`rg`/`diff` exit
        // 1 to say "no match" or "differs"; only a real error line of their own counts.
        let own: Vec<String> = error_lines(&turn.text).into_iter().filter(|l| failed && is_own_failure(l)).collect();
        return events(turn, cmd, own, failed);
    }
    let mut lines = error_lines(&turn.text);
    if lines.is_empty() && failed {
        // No recognisable error line: the program and the last line it printed.
        let prog = program(cmd).unwrap_or_else(|| "command".to_string());
        let text = strip_ansi(&turn.text);
        let last = text.lines().map(str::trim).rev().find(|l| !l.is_empty());
        let status = super::commands::status_label(tool);
        lines.push(match last {
            Some(l) => format!("{prog}: {}", one_line(l, 200)),
            None => format!("{prog}: {status}"),
        });
    }
    events(turn, cmd, lines, failed)
}

/// Failures of a reading command itself (a missing file, no permission), as opposed
/// to error lines it printed from what it read.
fn is_own_failure(line: &str) -> bool {
    let l = line.to_lowercase();
    l.contains("no such file or directory") || l.contains("permission denied") || l.contains("command not found")
}

fn events(turn: &Turn, cmd: &str, lines: Vec<String>, failed: bool) -> Vec<ErrorEvent> {
    lines
        .into_iter()
        .filter_map(|line| {
            let sig = signature(&line);
            (!sig.is_empty()).then(|| ErrorEvent {
                seq: turn.seq,
                sig,
                line: one_line(&line, LINE_CHARS),
                command: Some(one_line(cmd, LINE_CHARS)),
                failed,
            })
        })
        .collect()
}

/// A command that succeeded cleanly and changes something: a fix candidate.
fn clean_success(turn: &Turn) -> Option<&str> {
    let tool = turn.tool.as_ref()?;
    let cmd = tool.command.as_deref().filter(|c| !c.trim().is_empty())?;
    // `Unknown` is a result without an exit status or error flag: formats that only
    // record failures.
    let ok = Outcome::of(tool) != Outcome::Failed;
    (ok && !is_inspection(cmd) && error_lines(&turn.text).is_empty()).then_some(cmd)
}

/// How closely a successful command re-runs the one that failed (higher is closer).
fn rerun_score(failed: Option<&str>, ok: &str) -> u8 {
    let Some(failed) = failed else { return 0 };
    if command_key(failed) == command_key(ok) {
        3
    } else if program_and_verb(failed).is_some() && program_and_verb(failed) == program_and_verb(ok) {
        2
    } else if program(failed).is_some() && program(failed) == program(ok) {
        1
    } else {
        0
    }
}

/// True when the command names a distinctive word of the error line (4+ letters, not
/// a generic word such as `error` or `module`).
fn names_the_error(error_line: &str, cmd: &str) -> bool {
    const GENERIC: &[&str] = &[
        "error",
        "errors",
        "module",
        "named",
        "found",
        "cannot",
        "could",
        "failed",
        "file",
        "such",
        "directory",
        "line",
        "with",
        "from",
        "this",
        "that",
        "scope",
        "value",
        "command",
    ];
    let cmd = cmd.to_lowercase();
    error_line
        .to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .filter(|w| w.len() >= 4 && w.chars().any(char::is_alphabetic) && !GENERIC.contains(w))
        .any(|w| cmd.contains(w))
}

/// Mines error events and fix pairs from turns in session order (see the module doc).
pub fn mine(turns: &[Turn]) -> Mined {
    let per_turn: Vec<Vec<ErrorEvent>> = turns.iter().map(turn_errors).collect();
    // Computed once: each output is scanned for error lines a single time.
    let successes: Vec<Option<&str>> = turns.iter().map(clean_success).collect();
    let has_sig = |pos: usize, sig: &str| per_turn[pos].iter().any(|e| e.sig == sig);
    let mut fixes: Vec<FixPair> = Vec::new();
    for (pos, events) in per_turn.iter().enumerate() {
        for ev in events {
            let window_end = (pos + FIX_WINDOW).min(turns.len().saturating_sub(1));
            // A recurrence inside the window: the later occurrence gets the pair.
            if (pos + 1..=window_end).any(|k| has_sig(k, &ev.sig)) {
                continue;
            }
            let candidates: Vec<(usize, &str)> = (pos + 1..=window_end).filter_map(|k| successes[k].map(|c| (k, c))).collect();
            let Some(best) = candidates
                .iter()
                .max_by(|a, b| rerun_score(ev.command.as_deref(), a.1).cmp(&rerun_score(ev.command.as_deref(), b.1)).then(b.0.cmp(&a.0)))
            else {
                continue;
            };
            let fix_pos = best.0;
            let score = rerun_score(ev.command.as_deref(), best.1);
            let verified = score >= 2;
            let edited_between =
                turns[pos + 1..fix_pos].iter().any(|t| t.edit.is_some() || t.files.iter().any(|f| f.action != FileAction::Read));
            if score == 0 && !edited_between && !candidates.iter().any(|(k, c)| *k <= fix_pos && names_the_error(&ev.line, c)) {
                continue;
            }
            let after_end = (fix_pos + FIX_WINDOW).min(turns.len().saturating_sub(1));
            if (fix_pos + 1..=after_end).any(|k| has_sig(k, &ev.sig)) {
                continue;
            }
            let held = !(fix_pos + 1..turns.len()).any(|k| has_sig(k, &ev.sig));
            let mut commands: Vec<String> =
                candidates.iter().filter(|(k, _)| *k <= fix_pos).map(|(_, c)| one_line(&command_key(c), LINE_CHARS)).collect();
            commands.dedup();
            if commands.len() > MAX_FIX_COMMANDS {
                commands.drain(..commands.len() - MAX_FIX_COMMANDS);
            }
            let mut edited: Vec<String> = Vec::new();
            for t in &turns[pos + 1..fix_pos] {
                let paths = t
                    .files
                    .iter()
                    .filter(|f| matches!(f.action, FileAction::Edit | FileAction::Write | FileAction::Delete))
                    .map(|f| f.path.clone())
                    .chain(t.edit.iter().map(|e| e.path.clone()));
                for p in paths {
                    if !edited.contains(&p) && edited.len() < MAX_EDITED {
                        edited.push(p);
                    }
                }
            }
            let note_end = (fix_pos + 3).min(turns.len().saturating_sub(1));
            let note = turns[pos + 1..=note_end]
                .iter()
                .filter(|t| t.role == Role::Assistant)
                .flat_map(|t| t.text.lines().map(move |l| (t.seq, l)))
                .map(|(seq, l)| (decision_score(l), seq, l))
                .filter(|(s, _, _)| *s > 0)
                .max_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)))
                .map(|(_, _, l)| one_line(l.trim().trim_start_matches(['#', '*', '-', '>', ' ']), LINE_CHARS));
            fixes.push(FixPair {
                sig: ev.sig.clone(),
                error_line: ev.line.clone(),
                error_seq: ev.seq,
                failed_command: ev.command.clone(),
                fix_seq: turns[fix_pos].seq,
                commands,
                edited,
                note,
                held,
                verified,
            });
        }
    }
    // The same error fixed by the same command from several occurrences: keep the
    // closest occurrence.
    fixes.sort_by(|a, b| {
        (a.sig.as_str(), a.fix_seq, std::cmp::Reverse(a.error_seq)).cmp(&(b.sig.as_str(), b.fix_seq, std::cmp::Reverse(b.error_seq)))
    });
    fixes.dedup_by(|b, a| a.sig == b.sig && a.fix_seq == b.fix_seq);
    fixes.sort_by_key(|f| (f.error_seq, f.fix_seq));
    Mined { errors: per_turn.into_iter().flatten().collect(), fixes }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Edit, ExitStatus, ToolUse};

    fn say(seq: u32, role: Role, text: &str) -> Turn {
        let mut t = Turn::new(role, text);
        t.seq = seq;
        t
    }

    fn run(seq: u32, cmd: &str, code: i64, out: &str) -> Turn {
        let mut t = say(seq, Role::ToolCall, out);
        t.tool = Some(ToolUse {
            name: "bash".into(),
            command: Some(cmd.into()),
            exit: Some(ExitStatus::Code(code)),
            is_error: code != 0,
            ..ToolUse::default()
        });
        t
    }

    fn edit(seq: u32, path: &str) -> Turn {
        let mut t = say(seq, Role::ToolCall, "ok");
        t.tool = Some(ToolUse { name: "Edit".into(), ..ToolUse::default() });
        t.edit = Some(Edit { path: path.into(), old: "a".into(), new: Some("b".into()) });
        t
    }

    const E0425: &str = "error[E0425]: cannot find value `pool_size` in this scope\n --> src/pool.rs:42:9";

    #[test]
    fn error_then_edit_then_green_rerun_is_a_held_fix() {
        let turns = vec![
            say(0, Role::User, "tests fail"),
            run(1, "cargo test", 101, E0425),
            say(2, Role::Assistant, "The field was renamed; the root cause is a stale name in pool.rs."),
            edit(3, "/src/app/src/pool.rs"),
            run(4, "git status", 0, "modified: src/pool.rs"),
            run(5, "cargo fmt", 0, ""),
            run(6, "cargo test", 0, "test result: ok. 12 passed"),
            say(7, Role::Assistant, "Fixed: renamed pool_size to max_size because the config struct changed."),
        ];
        let m = mine(&turns);
        assert_eq!(m.errors.len(), 1);
        assert_eq!(m.errors[0].sig, "error[e0425]: cannot find value `pool_size` in this scope");
        assert_eq!(m.fixes.len(), 1);
        let f = &m.fixes[0];
        assert_eq!((f.error_seq, f.fix_seq), (1, 6));
        assert_eq!(f.commands, vec!["cargo fmt", "cargo test"], "git status is inspection");
        assert_eq!(f.edited, vec!["/src/app/src/pool.rs"]);
        assert!(f.held && f.verified);
        assert_eq!(f.note.as_deref(), Some("Fixed: renamed pool_size to max_size because the config struct changed."));
    }

    #[test]
    fn a_recurrence_moves_the_pair_to_the_later_occurrence() {
        let turns = vec![
            run(0, "cargo test", 101, E0425),
            run(1, "cargo build", 0, "Finished"),
            run(2, "cargo test", 101, E0425),
            edit(3, "/src/app/src/pool.rs"),
            run(4, "cargo test", 0, "ok"),
        ];
        let m = mine(&turns);
        assert_eq!(m.errors.len(), 2);
        assert_eq!(m.fixes.len(), 1);
        assert_eq!((m.fixes[0].error_seq, m.fixes[0].fix_seq), (2, 4));
    }

    #[test]
    fn unrelated_work_after_an_error_is_no_fix() {
        let turns = vec![
            run(0, "python -c 'import psycopg2'", 1, "ModuleNotFoundError: No module named 'psycopg2'"),
            run(1, "cargo test -p other", 0, "ok"),
        ];
        assert!(mine(&turns).fixes.is_empty());
        let turns = vec![
            run(0, "python app.py", 1, "ModuleNotFoundError: No module named 'psycopg2'"),
            run(1, "pip install psycopg2-binary", 0, "ok"),
        ];
        let m = mine(&turns);
        assert_eq!(m.fixes.len(), 1, "the install names the missing module");
        assert!(!m.fixes[0].verified);
    }

    #[test]
    fn no_success_in_the_window_is_no_pair() {
        let mut turns = vec![run(0, "python manage.py migrate", 1, "ModuleNotFoundError: No module named 'psycopg2'")];
        for i in 1..=FIX_WINDOW as u32 {
            turns.push(say(i, Role::Assistant, "thinking out loud"));
        }
        turns.push(run(FIX_WINDOW as u32 + 1, "pip install psycopg2-binary", 0, "Successfully installed"));
        assert!(mine(&turns).fixes.is_empty());
    }

    #[test]
    fn an_error_that_comes_back_after_the_window_did_not_hold() {
        let mut turns = vec![
            run(0, "python manage.py migrate", 1, "Traceback (most recent call last):\nModuleNotFoundError: No module named 'psycopg2'"),
            run(1, "pip install psycopg2-binary", 0, "Successfully installed psycopg2-binary-2.9.9"),
            run(2, "python manage.py migrate", 0, "Applying contenttypes.0001_initial... OK"),
        ];
        let m = mine(&turns);
        assert_eq!(m.fixes.len(), 1);
        assert_eq!(m.fixes[0].commands, vec!["pip install psycopg2-binary", "python manage.py migrate"]);
        assert!(m.fixes[0].held);
        for i in 3..3 + FIX_WINDOW as u32 {
            turns.push(say(i, Role::Assistant, "unrelated"));
        }
        turns.push(run(20, "python manage.py runserver", 1, "ModuleNotFoundError: No module named 'psycopg2'"));
        let m = mine(&turns);
        assert_eq!(m.fixes.len(), 1);
        assert!(!m.fixes[0].held, "it came back later");
    }

    #[test]
    fn an_error_that_comes_back_right_after_the_success_is_no_fix() {
        let turns = vec![
            run(0, "make nightly", 2, "make: *** [nightly] Error 124"),
            run(1, "make clean", 0, ""),
            run(2, "make nightly", 2, "make: *** [nightly] Error 124"),
        ];
        let m = mine(&turns);
        assert_eq!(m.errors.len(), 2);
        assert!(m.fixes.is_empty(), "{:?}", m.fixes);
    }

    #[test]
    fn failures_without_an_error_line_get_a_program_signature_and_reads_are_not_errors() {
        let t = run(0, "./scripts/check.sh", 3, "checking...\nstep 4 of 9 did not pass");
        let ev = turn_errors(&t);
        assert_eq!(ev.len(), 1);
        assert_eq!(ev[0].sig, "check.sh: step # of # did not pass");
        assert!(turn_errors(&run(0, "cat build.log", 0, "error: linker `cc` not found")).is_empty());
        assert!(turn_errors(&run(0, "rg pool_size src", 1, "")).is_empty(), "no match is not an error");
        assert!(turn_errors(&run(0, "grep -r TODO .", 1, "")).is_empty());
        assert_eq!(turn_errors(&run(0, "cat nope.txt", 1, "cat: nope.txt: No such file or directory")).len(), 1);
        let piped = turn_errors(&run(0, "cargo build 2>&1 | tail -5", 0, "error: linker `cc` not found"));
        assert_eq!(piped.len(), 1);
        assert!(!piped[0].failed);
        let silent = turn_errors(&run(0, "false", 1, ""));
        assert_eq!(silent[0].sig, "false: exit #");
    }
}

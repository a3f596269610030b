//! Shell command lines as recall sees them: which are inspection (reading, listing,
//! `git status`) rather than work, what program a line runs, and the grouping key
//! under which the same invocation from different sessions is counted once.

use crate::model::{ExitStatus, ToolUse};

/// Programs that look at things without changing them.
const INSPECTION: &[&str] = &[
    "ls", "cat", "head", "tail", "less", "more", "grep", "egrep", "rg", "ag", "find", "fd", "pwd", "echo", "printf", "which", "type", "wc",
    "sed", "awk", "tree", "file", "stat", "du", "df", "env", "printenv", "date", "whoami", "sleep", "true", "history", "jq", "diff", "cd",
    "clear", "man", "uname", "id", "ps", "top", "nl", "sort", "uniq", "cut", "xxd", "od", "realpath", "dirname", "basename",
];
/// Git subcommands that only read.
const GIT_READS: &[&str] = &["status", "diff", "log", "show", "branch", "remote", "rev-parse", "blame", "ls-files", "describe"];

fn segments(cmd: &str) -> impl Iterator<Item = &str> {
    cmd.split("&&").flat_map(|s| s.split("||")).flat_map(|s| s.split(';')).map(str::trim).filter(|s| !s.is_empty())
}

/// The words of a segment after `sudo`, `time`, `env`, `VAR=value` prefixes, with a
/// leading `./` or directory stripped from the program.
fn words_of(segment: &str) -> Vec<&str> {
    let mut words: Vec<&str> = segment.split_whitespace().collect();
    while let Some(first) = words.first() {
        let is_assign = first.contains('=') && !first.starts_with('-') && first.split('=').next().is_some_and(|k| !k.is_empty());
        if is_assign || matches!(*first, "sudo" | "time" | "env" | "nohup" | "exec" | "command") {
            words.remove(0);
        } else {
            break;
        }
    }
    if let Some(first) = words.first_mut() {
        *first = first.rsplit('/').next().unwrap_or(first);
    }
    words
}

fn segment_is_inspection(segment: &str) -> bool {
    // A pipeline inspects when its first stage does (`cat x | grep y`).
    let first_stage = segment.split('|').next().unwrap_or(segment);
    let words = words_of(first_stage);
    match words.as_slice() {
        [] => true,
        ["git", sub, ..] => GIT_READS.contains(sub),
        [prog, ..] => INSPECTION.contains(prog),
    }
}

/// True when every segment of the line only looks at things.
pub fn is_inspection(cmd: &str) -> bool {
    segments(cmd).all(segment_is_inspection)
}

/// The program the line runs: the first word of its first segment that is not `cd`
/// or an assignment (`cd ci && make nightly` → `make`).
pub fn program(cmd: &str) -> Option<String> {
    segments(cmd)
        .map(words_of)
        .find(|w| w.first().is_some_and(|p| *p != "cd" && *p != "export"))
        .and_then(|w| w.first().map(|p| p.to_string()))
}

/// Program and its first argument that is not a flag (`cargo test -p x` → `cargo
/// test`, `curl -sS http://h/a` → `curl http://h/a`).
pub fn program_and_verb(cmd: &str) -> Option<String> {
    let words = segments(cmd).map(words_of).find(|w| w.first().is_some_and(|p| *p != "cd" && *p != "export"))?;
    let prog = words.first()?;
    Some(match words.iter().skip(1).find(|w| !w.starts_with('-')) {
        Some(verb) => format!("{prog} {verb}"),
        None => prog.to_string(),
    })
}

/// The grouping key of a command line: whitespace collapsed.
pub fn command_key(cmd: &str) -> String {
    cmd.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// How a tool call ended, as far as the record says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Ok,
    Failed,
    Unknown,
}

impl Outcome {
    pub fn of(tool: &ToolUse) -> Outcome {
        match &tool.exit {
            Some(e) if e.succeeded() && !tool.is_error => Outcome::Ok,
            Some(_) => Outcome::Failed,
            None if tool.is_error => Outcome::Failed,
            None => Outcome::Unknown,
        }
    }

    pub fn mark(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Failed => "failed",
            Outcome::Unknown => "?",
        }
    }
}

/// `exit 0`, `exit 2`, `killed by SIGTERM`, `error`, or `?`.
pub fn status_label(tool: &ToolUse) -> String {
    match &tool.exit {
        Some(ExitStatus::Code(c)) => format!("exit {c}"),
        Some(e) => e.to_string(),
        None if tool.is_error => "error".to_string(),
        None => "?".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inspection_is_reading_only() {
        assert!(is_inspection("ls -la"));
        assert!(is_inspection("cat Cargo.toml | grep tokio"));
        assert!(is_inspection("git status && git diff"));
        assert!(is_inspection("cd src && rg pool_size"));
        assert!(!is_inspection("cargo test"));
        assert!(!is_inspection("cd ci && make nightly"));
        assert!(!is_inspection("pip install psycopg2-binary"));
        assert!(!is_inspection("git commit -m x"));
        assert!(!is_inspection("./deploy.sh staging"));
    }

    #[test]
    fn program_skips_cd_and_assignments() {
        assert_eq!(program("cd ci && make nightly").as_deref(), Some("make"));
        assert_eq!(program("RUST_LOG=debug cargo test -p x").as_deref(), Some("cargo"));
        assert_eq!(program("sudo /usr/bin/systemctl restart pg").as_deref(), Some("systemctl"));
        assert_eq!(program_and_verb("cargo test -p deja-core").as_deref(), Some("cargo test"));
        assert_eq!(program_and_verb("curl -sS http://localhost:80/a").as_deref(), Some("curl http://localhost:80/a"));
        assert_eq!(program("   "), None);
    }

    #[test]
    fn outcome_reads_exit_and_error_flag() {
        let t = |exit: Option<ExitStatus>, is_error: bool| ToolUse { name: "bash".into(), exit, is_error, ..ToolUse::default() };
        assert_eq!(Outcome::of(&t(Some(ExitStatus::Code(0)), false)), Outcome::Ok);
        assert_eq!(Outcome::of(&t(Some(ExitStatus::Code(2)), true)), Outcome::Failed);
        assert_eq!(Outcome::of(&t(None, true)), Outcome::Failed);
        assert_eq!(Outcome::of(&t(None, false)), Outcome::Unknown);
        assert_eq!(status_label(&t(Some(ExitStatus::Signal("SIGKILL".into())), true)), "killed by SIGKILL");
    }
}

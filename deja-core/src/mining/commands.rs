//! How a tool call ended, as recall reports it. Which command lines are inspection
//! rather than work, what program a line runs and its grouping key come from the one
//! command classifier in [`crate::work`].

use crate::model::{ExitStatus, ToolUse};

// The command-line classifier is the one in `crate::work`; recall uses it unchanged.
pub use crate::work::{command_key, is_inspection, program, program_and_verb};

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
    fn outcome_reads_exit_and_error_flag() {
        let t = |exit: Option<ExitStatus>, is_error: bool| ToolUse { name: "bash".into(), exit, is_error, ..ToolUse::default() };
        assert_eq!(Outcome::of(&t(Some(ExitStatus::Code(0)), false)), Outcome::Ok);
        assert_eq!(Outcome::of(&t(Some(ExitStatus::Code(2)), true)), Outcome::Failed);
        assert_eq!(Outcome::of(&t(None, true)), Outcome::Failed);
        assert_eq!(Outcome::of(&t(None, false)), Outcome::Unknown);
        assert_eq!(status_label(&t(Some(ExitStatus::Signal("SIGKILL".into())), true)), "killed by SIGKILL");
    }
}

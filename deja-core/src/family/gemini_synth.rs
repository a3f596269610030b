//! The Gemini-API parts of a synthetic session: what Gemini CLI and its forks (Qwen Code)
//! put inside their messages for a [`SynthTurn`], so each adapter's synthetic writer
//! only lays out its own envelope (Gemini's replayable chat JSONL, Qwen's `uuid`
//! chain). The parts are the ones [`gemini_chat`](super::gemini_chat) reads back: `{text}`,
//! `{text, thought: true}`, `functionCall` with Gemini's built-in tool names and
//! arguments, `functionResponse` with the shell tool's `Command:`/`Output:`/`Exit Code:`
//! framing.

use serde_json::{json, Value};

use crate::synth::SynthTurn;
use crate::time::Timestamp;

/// `[{text}]`: a message body of one text part.
pub fn text_parts(text: &str) -> Value {
    json!([{ "text": text }])
}

/// `{text, thought: true}`: reasoning as Gemini-API models return it.
pub fn thought_part(text: &str) -> Value {
    json!({ "text": text, "thought": true })
}

/// One built-in tool call of a synthetic turn and its result.
#[derive(Debug, Clone)]
pub struct GeminiCall {
    /// `<name>-<n>` call id, as Gemini CLI numbers its calls.
    pub id: String,
    /// `run_shell_command`, `read_file` or `replace`.
    pub name: &'static str,
    pub args: Value,
    /// The `functionResponse.response.output` text (the shell tool's framed output).
    pub output: String,
    /// What the CLI shows the user (`resultDisplay`): the bare output.
    pub display: String,
    /// The command failed (non-zero exit).
    pub failed: bool,
    pub time: Timestamp,
}

impl GeminiCall {
    /// The call for a `Shell`, `Read` or `Edit` turn, the `n`th of its session; `None`
    /// for speech and reasoning. Paths are made absolute against `project`, as Gemini's
    /// file tools require.
    pub fn of(turn: &SynthTurn, n: usize, project: &str) -> Option<GeminiCall> {
        let abs = |p: &str| if p.starts_with('/') { p.to_string() } else { format!("{}/{p}", project.trim_end_matches('/')) };
        let (name, args, output, display, failed, time) = match turn {
            SynthTurn::Shell { command, output, exit_code, time } => {
                let framed = shell_output(command, output, *exit_code, 4000 + n as u64);
                let args = json!({ "command": command, "description": "Run the command" });
                ("run_shell_command", args, framed, output.clone(), *exit_code != 0, *time)
            }
            SynthTurn::Read { path, output, time } => {
                ("read_file", json!({ "absolute_path": abs(path) }), output.clone(), String::new(), false, *time)
            }
            SynthTurn::Edit { path, old, new, time } => {
                let file = abs(path);
                let done = format!("Successfully modified file: {file} (1 replacements).");
                ("replace", json!({ "file_path": file, "old_string": old, "new_string": new }), done.clone(), done, false, *time)
            }
            SynthTurn::User { .. } | SynthTurn::Assistant { .. } | SynthTurn::Reasoning { .. } => return None,
        };
        Some(GeminiCall { id: format!("{name}-{n}"), name, args, output, display, failed, time })
    }

    /// `{functionCall: {id, name, args}}`.
    pub fn call_part(&self) -> Value {
        json!({ "functionCall": { "id": self.id, "name": self.name, "args": self.args } })
    }

    /// `{functionResponse: {id, name, response: {output}}}`.
    pub fn response_part(&self) -> Value {
        json!({ "functionResponse": { "id": self.id, "name": self.name, "response": { "output": self.output } } })
    }
}

/// The shell tool's result text: `Command:`, `Directory:`, `Output:` (`(empty)` when
/// there is none), `Error: (none)`, `Exit Code:`, `Signal: 0`, `Process Group PGID:`.
pub fn shell_output(command: &str, output: &str, exit_code: i64, pgid: u64) -> String {
    let out = if output.is_empty() { "(empty)" } else { output };
    format!(
        "Command: {command}\nDirectory: (root)\nOutput: {out}\nError: (none)\nExit Code: {exit_code}\nSignal: 0\nProcess Group PGID: {pgid}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family::gemini_chat::{call_turn, response_output, GeminiDialect, GEMINI_TOOLS};

    #[test]
    fn the_family_reader_reads_the_parts_back() {
        let d = GeminiDialect { harness: "g", tools: GEMINI_TOOLS };
        let turn = SynthTurn::Shell { command: "cargo test".into(), output: "FAILED".into(), exit_code: 101, time: Timestamp(0) };
        let call = GeminiCall::of(&turn, 1, "/src/app").expect("a call");
        let t = call_turn(&d, call.name, &call.args);
        assert_eq!(t.tool.as_ref().and_then(|t| t.command.as_deref()), Some("cargo test"));
        assert_eq!(response_output(&call.response_part()["functionResponse"]), ("FAILED".to_string(), Some(101)));
        let edit = SynthTurn::Edit { path: "src/a.rs".into(), old: "x".into(), new: "y".into(), time: Timestamp(0) };
        let call = GeminiCall::of(&edit, 2, "/src/app").expect("a call");
        let t = call_turn(&d, call.name, &call.args);
        assert_eq!(t.edit.as_ref().map(|e| e.path.as_str()), Some("/src/app/src/a.rs"));
    }
}

//! Gemini-API chat parts: the message bodies Gemini CLI and its forks (Qwen Code, …)
//! write, whatever envelope carries them. A body is `content`/`parts`, a list of
//! parts: `{text}` (with `thought: true` for reasoning), `{functionCall: {id?, name,
//! args}}` and `{functionResponse: {id?, name, response: {output | error}}}`; a plain
//! string body is text. The tool vocabulary (`run_shell_command`, `read_file`,
//! `replace`, …) and the shell tool's output framing are shared as well. Envelopes
//! (Gemini's `$set`/`$rewindTo` chat replay, Qwen's `uuid` chain) stay in each adapter.
//!
//! | part / field | Turn | rule |
//! | --- | --- | --- |
//! | `{text}` | speech of the message's role | parts' `text` joined by newlines ([`parts_text`]) |
//! | `{text, thought: true}` | `Reasoning` | never speech ([`thought_text`]; the adapter emits it only with `include_reasoning`) |
//! | `functionCall` shell (`run_shell_command`) | `ToolCall` | `tool.command` = `args.command` ([`call_turn`]) |
//! | `functionCall` `read_file` / `read_many_files` / `write_file` / `replace` | `ToolCall` | `files` from `args.file_path` (`args.paths[]`); `replace` → `edit` (`old_string`/`new_string`, also `edits[]`) |
//! | `functionCall` other tools | `ToolCall` | name only |
//! | `functionResponse.response` | the call's text (folded by id) or `ToolOutput` | `output` (else `error`): `<untrusted_context>` wrapper dropped, shell framing read ([`response_output`]): `Output:`/`Error:` sections kept, `Exit Code: N` → exit |

use serde_json::Value;

use crate::model::{Edit, FileAction, FileTouch, Role, ToolUse, Turn};
use crate::work::{ToolKind, ToolMap};

/// What one harness writing Gemini-API parts changes.
#[derive(Debug)]
pub struct GeminiDialect {
    /// The adapter id sessions are filed under.
    pub harness: &'static str,
    /// Which function-call names run shells, read, edit and write files.
    pub tools: ToolMap,
}

/// Gemini CLI's built-in tools (Qwen Code keeps the same names).
pub const GEMINI_TOOLS: ToolMap =
    ToolMap { shell: &["run_shell_command"], read: &["read_file", "read_many_files"], edit: &["replace", "edit"], write: &["write_file"] };

fn parts(content: &Value) -> &[Value] {
    content.as_array().map(Vec::as_slice).unwrap_or(&[])
}

fn is_thought(part: &Value) -> bool {
    part.get("thought").and_then(Value::as_bool).unwrap_or(false)
}

/// The speech of a body: a string as it is, or the `text` of its non-thought parts
/// joined by newlines.
pub fn parts_text(content: &Value) -> String {
    if let Some(s) = content.as_str() {
        return s.to_string();
    }
    join(parts(content).iter().filter(|p| !is_thought(p)))
}

/// The reasoning of a body: the `text` of its `thought: true` parts.
pub fn thought_text(content: &Value) -> String {
    join(parts(content).iter().filter(|p| is_thought(p)))
}

fn join<'a>(parts: impl Iterator<Item = &'a Value>) -> String {
    parts.filter_map(|p| p.get("text").and_then(Value::as_str)).filter(|t| !t.trim().is_empty()).collect::<Vec<_>>().join("\n")
}

/// The `functionCall` objects of a body.
pub fn function_calls(content: &Value) -> impl Iterator<Item = &Value> {
    parts(content).iter().filter_map(|p| p.get("functionCall")).filter(|c| c.is_object())
}

/// The `functionResponse` objects of a body.
pub fn function_responses(content: &Value) -> impl Iterator<Item = &Value> {
    parts(content).iter().filter_map(|p| p.get("functionResponse")).filter(|r| r.is_object())
}

/// The id a call or response carries, if any.
pub fn part_id(v: &Value) -> Option<&str> {
    v.get("id").or_else(|| v.get("callId")).and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// A `ToolCall` turn (empty text) for a call of `name` with `args`.
pub fn call_turn(d: &GeminiDialect, name: &str, args: &Value) -> Turn {
    let mut turn = Turn::new(Role::ToolCall, "");
    let mut tool = ToolUse { name: if name.is_empty() { "function_call".to_string() } else { name.to_string() }, ..ToolUse::default() };
    let kind = d.tools.kind(name);
    if kind == ToolKind::Shell {
        tool.command = args.get("command").and_then(Value::as_str).map(str::trim).filter(|c| !c.is_empty()).map(str::to_string);
    }
    if let Some(action) = d.tools.file_action(name) {
        let mut paths: Vec<&str> =
            args.get("file_path").or_else(|| args.get("absolute_path")).and_then(Value::as_str).into_iter().collect();
        if let Some(list) = args.get("paths").and_then(Value::as_array) {
            paths.extend(list.iter().filter_map(Value::as_str));
        }
        for p in paths.into_iter().filter(|p| !p.is_empty()) {
            if !turn.files.iter().any(|f: &FileTouch| f.path == p) {
                turn.files.push(FileTouch { path: p.to_string(), action });
            }
        }
        if action == FileAction::Edit {
            turn.edit = edit_of(args);
        }
    }
    turn.tool = Some(tool);
    turn
}

/// The replaced span of a `replace` call: `old_string`/`new_string`, else the first
/// of `edits[]`.
fn edit_of(args: &Value) -> Option<Edit> {
    let path = args.get("file_path").and_then(Value::as_str)?;
    let span = |v: &Value| {
        let old = v.get("old_string").and_then(Value::as_str)?;
        Some(Edit { path: path.to_string(), old: old.to_string(), new: v.get("new_string").and_then(Value::as_str).map(str::to_string) })
    };
    span(args).or_else(|| args.get("edits").and_then(Value::as_array).and_then(|e| e.iter().find_map(span)))
}

/// A `functionResponse`'s text and exit code: `response.output` (else `error`, else a
/// string `response`), with the `<untrusted_context>` wrapper removed and the shell
/// tool's framing read.
pub fn response_output(resp: &Value) -> (String, Option<i64>) {
    let r = resp.get("response").unwrap_or(&Value::Null);
    let raw = match r {
        Value::String(s) => s.as_str(),
        _ => r.get("output").or_else(|| r.get("error")).and_then(Value::as_str).unwrap_or(""),
    };
    let inner = unwrap_untrusted(raw);
    let (text, exit) = unframe_shell(inner);
    (text.trim_matches(['\r', '\n']).trim_end().to_string(), exit)
}

fn unwrap_untrusted(s: &str) -> &str {
    let t = s.trim();
    match t.strip_prefix("<untrusted_context>").and_then(|r| r.strip_suffix("</untrusted_context>")) {
        Some(inner) => inner,
        None => s,
    }
}

/// The shell tool's result framing: `Command:`, `Directory:`, `Output:`, `Error:`,
/// `Exit Code:`, `Signal:`, `Background PIDs:`, `Process Group PGID:` lines. When the
/// text has an `Output:` line, the result is the `Output:` section plus a non-empty
/// `Error:` section, and `Exit Code: N` gives the exit; other text is returned whole.
pub fn unframe_shell(s: &str) -> (String, Option<i64>) {
    const META: [&str; 6] = ["Command:", "Directory:", "Exit Code:", "Signal:", "Background PIDs:", "Process Group PGID:"];
    if !s.lines().any(|l| l.starts_with("Output:")) {
        return (s.to_string(), None);
    }
    let mut exit = None;
    let (mut output, mut error) = (Vec::new(), Vec::new());
    let mut section: Option<&mut Vec<String>> = None;
    for line in s.lines() {
        if let Some(rest) = line.strip_prefix("Output:") {
            output.push(rest.trim_start().to_string());
            section = Some(&mut output);
        } else if let Some(rest) = line.strip_prefix("Error:") {
            error.push(rest.trim_start().to_string());
            section = Some(&mut error);
        } else if META.iter().any(|m| line.starts_with(m)) {
            if let Some(code) = crate::exit::ExitLine::first("Exit Code:").read(line) {
                exit = code;
            }
            section = None;
        } else if let Some(sec) = section.as_mut() {
            sec.push(line.to_string());
        }
    }
    let none = |v: &[String]| v.join("\n").trim() == "(none)";
    let mut text = if none(&output) { String::new() } else { output.join("\n").trim_end().to_string() };
    if !error.is_empty() && !none(&error) {
        let e = error.join("\n");
        if !e.trim().is_empty() {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(e.trim_end());
        }
    }
    (text, exit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const D: GeminiDialect = GeminiDialect { harness: "g", tools: GEMINI_TOOLS };

    #[test]
    fn text_skips_thoughts() {
        let c = json!([{"text": "idea", "thought": true}, {"text": "Checking."}, {"functionCall": {"name": "x", "args": {}}}]);
        assert_eq!(parts_text(&c), "Checking.");
        assert_eq!(thought_text(&c), "idea");
        assert_eq!(parts_text(&json!("plain")), "plain");
        assert_eq!(function_calls(&c).count(), 1);
    }

    #[test]
    fn calls_map_to_commands_files_and_edits() {
        let t = call_turn(&D, "run_shell_command", &json!({"command": "pytest -q", "working_dir": "/p"}));
        assert_eq!(t.tool.as_ref().and_then(|t| t.command.as_deref()), Some("pytest -q"));
        let t = call_turn(&D, "replace", &json!({"file_path": "/p/a.py", "old_string": "x()", "new_string": "y()"}));
        assert_eq!(t.files, vec![FileTouch { path: "/p/a.py".into(), action: FileAction::Edit }]);
        assert_eq!(t.edit.as_ref().map(|e| (e.old.as_str(), e.new.as_deref())), Some(("x()", Some("y()"))));
        let t = call_turn(&D, "read_many_files", &json!({"paths": ["/p/a", "/p/b"]}));
        assert_eq!(t.files.len(), 2);
        assert!(call_turn(&D, "web_fetch", &json!({})).files.is_empty());
    }

    #[test]
    fn shell_framing_gives_output_and_exit() {
        let r = json!({"response": {"output": "Command: cargo test\nDirectory: (root)\nOutput: test result: FAILED\nmore\nError: (none)\nExit Code: 101\nSignal: 0\nProcess Group PGID: 42"}});
        assert_eq!(response_output(&r), ("test result: FAILED\nmore".to_string(), Some(101)));
        let r = json!({"response": {"output": "<untrusted_context>\nOutput: ok\nProcess Group PGID: 42\n</untrusted_context>"}});
        assert_eq!(response_output(&r), ("ok".to_string(), None));
        let r = json!({"response": {"output": "Successfully modified file: /p/a.py"}});
        assert_eq!(response_output(&r).0, "Successfully modified file: /p/a.py");
        let r = json!({"response": {"error": "File not found"}});
        assert_eq!(response_output(&r).0, "File not found");
    }
}

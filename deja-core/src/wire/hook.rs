//! How a harness hands a hook its payload and takes the answer back.
//!
//! deja's hooks are five subcommands ([`HookEvent`]) a harness runs at its own events.
//! What they answer — the framed `<deja-recall>` block — is the same for every harness;
//! how the payload arrives and how the answer must be shaped is not. A
//! [`HookEnvelope`] says both for one harness: the adapter declares it in its
//! [`Wiring`](super::Wiring) (`fn envelope`), the hook command line names it
//! (`hook-prompt --envelope crush`, or the older `hook-prompt --crush`), and the binary
//! runs it without knowing whose it is.
//!
//! | envelope | payload | answer |
//! | --- | --- | --- |
//! | the default ([`Nested`]) | one JSON value on stdin | `{"systemMessage", "hookSpecificOutput": {"hookEventName", "additionalContext"}}`, which Claude Code and the many hosts built on its hook shape read |
//! | `plain` ([`Plain`]) | the same | the bare block, for hosts that inject stdout verbatim (`--plain`) |
//! | an adapter's | what the harness hands over (stdin, variables) | what it reads back (a flat reply, a rewritten prompt, a file) |
//!
//! [`HookPayload`] is the payload normalized (session, cwd, prompt, file, command, a
//! failed tool's output) from the key spellings hosts use. [`own_hook`] runs this
//! binary's own hook subcommand, for a runtime that needs a hook's answer.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::env::StoreEnv;

/// The hook subcommands, by the moment a harness runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookEvent {
    /// A session opens: this project's digest.
    SessionStart,
    /// A prompt is submitted: the past sessions that match it.
    Prompt,
    /// Before an edit or a command: the sessions that touched that file.
    Tool,
    /// After a failed command: what fixed that error before.
    ToolAfter,
    /// Before a compaction: nothing is answered; the transcript is indexed.
    Precompact,
}

impl HookEvent {
    pub const ALL: [HookEvent; 5] =
        [HookEvent::SessionStart, HookEvent::Prompt, HookEvent::Tool, HookEvent::ToolAfter, HookEvent::Precompact];

    /// The `deja` subcommand.
    pub fn subcommand(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "hook-session-start",
            HookEvent::Prompt => "hook-prompt",
            HookEvent::Tool => "hook-tool",
            HookEvent::ToolAfter => "hook-tool-after",
            HookEvent::Precompact => "hook-precompact",
        }
    }

    /// The subcommand's one-line help.
    pub fn about(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "Hook for a harness's session start: this project's digest (wired by `deja install <id>-auto`)",
            HookEvent::Prompt => "Hook for a submitted prompt: the past sessions that match it",
            HookEvent::Tool => "Hook before an edit or a command: the sessions that touched that file",
            HookEvent::ToolAfter => "Hook after a failed command: what fixed that error before",
            HookEvent::Precompact => "Hook before a compaction: index the transcript in the background",
        }
    }

    pub fn of_subcommand(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.subcommand() == name)
    }

    /// The Claude-style event name answered when the payload does not say.
    pub fn default_event(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::Prompt => "UserPromptSubmit",
            HookEvent::Tool => "PreToolUse",
            HookEvent::ToolAfter => "PostToolUse",
            HookEvent::Precompact => "PreCompact",
        }
    }

    /// The answer's byte budget: what fits in an agent's context at that moment.
    pub fn budget(self) -> usize {
        match self {
            HookEvent::SessionStart => 2048,
            HookEvent::Prompt => 1536,
            HookEvent::Tool | HookEvent::ToolAfter => 480,
            HookEvent::Precompact => 0,
        }
    }

    /// The one line a host shows the person when the hook answered.
    pub fn receipt(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "deja: recalled this project's past sessions",
            HookEvent::Prompt => "deja: recalled matching past sessions",
            HookEvent::Tool => "deja: this file was worked on before",
            HookEvent::ToolAfter => "deja: this error was fixed before",
            HookEvent::Precompact => "",
        }
    }
}

/// How one harness hands a hook its payload and takes the answer back.
pub trait HookEnvelope: Sync {
    /// The name the hook command line gives: `--envelope <name>`, and `--<name>`, the
    /// spelling installed configs use.
    fn name(&self) -> &'static str;

    /// One line for `--help`: what the harness hands over and reads back.
    fn help(&self) -> &'static str;

    /// The payload as the hook reads it, from the JSON value that arrived on stdin
    /// (`None`: none did, in time) and the environment the harness set. `None` answers
    /// nothing from the index (the envelope is still asked for its [`answer`](Self::answer)).
    /// By default whatever came on stdin, or an empty payload.
    fn payload(&self, _event: HookEvent, stdin: Option<Value>, _env: &StoreEnv) -> Option<Value> {
        Some(stdin.unwrap_or_default())
    }

    /// What the hook prints, given the payload [`payload`](Self::payload) returned and
    /// the block deja recalled (`None`: nothing to say, or said before in this
    /// session). `None` prints nothing. An envelope whose harness discards hook stdout
    /// may write the block where the harness reads it instead.
    fn answer(&self, event: HookEvent, payload: Option<&Value>, block: Option<&str>, env: &StoreEnv) -> Option<String>;
}

/// The default envelope: the block as `hookSpecificOutput.additionalContext`, with a
/// receipt line as `systemMessage`.
pub struct Nested;

impl HookEnvelope for Nested {
    fn name(&self) -> &'static str {
        "nested"
    }

    fn help(&self) -> &'static str {
        "the default: JSON on stdin, `{\"hookSpecificOutput\": {\"additionalContext\": …}}` back"
    }

    fn answer(&self, event: HookEvent, payload: Option<&Value>, block: Option<&str>, _env: &StoreEnv) -> Option<String> {
        let block = block?;
        let name = payload.and_then(|v| HookPayload::from(v).event).unwrap_or_else(|| event.default_event().to_string());
        let v = json!({"systemMessage": event.receipt(), "hookSpecificOutput": {"hookEventName": name, "additionalContext": block}});
        Some(format!("{v}\n"))
    }
}

/// The bare block, for hosts that inject stdout verbatim (`--plain`).
pub struct Plain;

impl HookEnvelope for Plain {
    fn name(&self) -> &'static str {
        "plain"
    }

    fn help(&self) -> &'static str {
        "JSON on stdin, the bare block back (also `--plain`)"
    }

    fn answer(&self, _event: HookEvent, _payload: Option<&Value>, block: Option<&str>, _env: &StoreEnv) -> Option<String> {
        block.map(str::to_string)
    }
}

/// What the harness told the hook, from the key spellings hosts use.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct HookPayload {
    pub session: Option<String>,
    pub cwd: Option<String>,
    pub event: Option<String>,
    pub prompt: Option<String>,
    pub file: Option<String>,
    pub command: Option<String>,
    /// For `hook-tool-after`: the tool's output when it failed.
    pub failure: Option<String>,
}

fn str_at<'a>(v: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| v.get(*k).and_then(Value::as_str)).filter(|s| !s.trim().is_empty())
}

/// Text from a string or a list of `{"type": "text", "text": …}` parts.
fn text_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let joined: Vec<&str> = parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str).or_else(|| p.as_str())).collect();
            (!joined.is_empty()).then(|| joined.join("\n"))
        }
        _ => None,
    }
}

impl HookPayload {
    pub fn from(v: &Value) -> HookPayload {
        let input = v.get("tool_input").or_else(|| v.get("toolInput")).or_else(|| v.get("input")).unwrap_or(&Value::Null);
        let response = v.get("tool_response").or_else(|| v.get("toolResponse")).or_else(|| v.get("tool_result")).unwrap_or(&Value::Null);
        HookPayload {
            session: str_at(v, &["session_id", "sessionId", "conversation_id"]).map(str::to_string),
            cwd: str_at(v, &["cwd", "workspace", "project_dir"]).map(str::to_string),
            event: str_at(v, &["hook_event_name", "hookEventName"]).map(str::to_string),
            prompt: v.get("prompt").and_then(text_of).or_else(|| v.get("user_prompt").and_then(text_of)),
            file: str_at(input, &["file_path", "path", "notebook_path", "filePath", "absolute_path"]).map(str::to_string),
            command: str_at(input, &["command", "cmd"]).map(str::to_string),
            failure: failure_text(response),
        }
    }
}

/// A failed tool's output: a non-zero exit code or an error flag, with its text.
fn failure_text(response: &Value) -> Option<String> {
    if response.is_null() {
        return None;
    }
    let code = ["exit_code", "exitCode", "returncode", "code"].iter().find_map(|k| response.get(*k).and_then(Value::as_i64));
    let flagged = ["is_error", "isError", "interrupted"].iter().any(|k| response.get(*k).and_then(Value::as_bool) == Some(true));
    let text: String = match response {
        Value::String(s) => s.clone(),
        _ => ["stderr", "stdout", "output", "content", "error"]
            .iter()
            .filter_map(|k| response.get(*k).and_then(text_of))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    // A plain-text result says its exit status on its last line (`[exit code: 2]`).
    let marked = text.lines().last().is_some_and(|l| {
        let l = l.trim();
        (l.starts_with("[exit code:") && !l.starts_with("[exit code: 0]")) || l.starts_with("[killed by signal")
    });
    // Copilot Chat's terminal result says it in a sentence.
    let sentence =
        text.lines().any(|l| l.trim().strip_prefix("Command exited with code ").is_some_and(|c| c.trim_end_matches('.').trim() != "0"));
    (code.is_some_and(|c| c != 0) || flagged || marked || sentence).then_some(text).filter(|t| !t.trim().is_empty())
}

/// The stdout of `deja <args…>` (this binary) fed `payload` on stdin, if it printed
/// something within `deadline`; a hook that runs late is killed and the caller goes on
/// without it. For runtimes that need a hook's answer (a wrapper's digest, a sidecar's
/// per-prompt recall): the hook keeps its own budgets, framing and once-per-session
/// records.
pub fn own_hook(args: &[&str], payload: &Value, deadline: Duration) -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let mut child = Command::new(exe).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().ok()?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(payload.to_string().as_bytes());
    }
    let until = Instant::now() + deadline;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let out = child.wait_with_output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (!text.trim().is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copilot_chats_exit_sentence_marks_a_failure() {
        let failed = json!("error: connection refused\nCommand exited with code 1");
        assert!(failure_text(&failed).is_some_and(|t| t.contains("connection refused")));
        assert!(failure_text(&json!("ok\nCommand exited with code 0")).is_none());
    }

    #[test]
    fn the_default_envelope_nests_the_block_under_the_payloads_event() {
        let env = StoreEnv::with_home("/h");
        let payload = json!({"hook_event_name": "BeforeAgent"});
        let out = Nested.answer(HookEvent::Prompt, Some(&payload), Some("<deja-recall>x</deja-recall>\n"), &env).expect("answer");
        let v: Value = serde_json::from_str(&out).expect("json");
        assert_eq!(v["hookSpecificOutput"]["hookEventName"], "BeforeAgent");
        assert_eq!(v["hookSpecificOutput"]["additionalContext"], "<deja-recall>x</deja-recall>\n");
        assert_eq!(v["systemMessage"], HookEvent::Prompt.receipt());
        let out = Nested.answer(HookEvent::Tool, None, Some("b"), &env).expect("answer");
        assert!(out.contains("\"PreToolUse\""), "{out}");
        assert!(Nested.answer(HookEvent::Tool, None, None, &env).is_none(), "nothing to say, nothing printed");
        assert_eq!(Plain.answer(HookEvent::Tool, None, Some("b"), &env).as_deref(), Some("b"));
    }

    #[test]
    fn subcommands_name_their_events() {
        for e in HookEvent::ALL {
            assert_eq!(HookEvent::of_subcommand(e.subcommand()), Some(e));
        }
    }
}

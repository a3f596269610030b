//! The hook subcommands harnesses run (DESIGN §7; `deja install <id>-auto` wires them):
//!
//! | subcommand | when | what it hands the agent | budget |
//! | --- | --- | --- | --- |
//! | `hook-session-start` | a session opens | this project's digest: recent sessions, decisions, notes | 2 KB |
//! | `hook-prompt` | a prompt is submitted | the past sessions that match the prompt | 1.5 KB |
//! | `hook-tool` | before an edit or a command | the sessions that touched that file | 480 B |
//! | `hook-tool-after` | after a failed command | what fixed that error before | 480 B |
//! | `hook-precompact` | before a compaction | nothing: it queues a background `deja index` so the transcript is kept before the summary replaces it | — |
//!
//! Each reads the harness's payload from stdin — bounded, with a deadline, stopping at
//! the first complete JSON value, since some hosts keep the pipe open — and answers in
//! the Claude-shaped envelope (`hookSpecificOutput.additionalContext`) or, with
//! `--plain`, the bare block (`--antigravity`: Antigravity's `injectSteps` reply;
//! `--goose`: no reply, the block written to the files Goose reads). They fail open:
//! any problem (garbage on stdin, no index, an index being rebuilt, a panic) is exit 0
//! with no output. They never build or wait for the index, answer from the
//! last committed one, and never inject the same block twice into one agent session (a
//! small per-session record under the cache directory).

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use clap::Args;
use deja_adapters::deja_adapter_goose;
use deja_core::index::{IndexPaths, IndexView};
use deja_core::recall::frame::{frame, Answer, CLOSE_TAG};
use deja_core::recall::query::{self, Scope};
use deja_core::recall::render;
use deja_core::StoreEnv;
use serde_json::{json, Value};

/// The largest payload read; past it the hook gives up (fails open).
const MAX_STDIN: usize = 4 << 20;
/// The project sessions a hook's digest reads (recent sessions, recurring errors,
/// working commands), where `deja orient` reads 300: on a 1 GB history that took 1.1 s,
/// 12 take about 20 ms (`deja bench hooks`).
const HOOK_ORIENT_SCAN: usize = 12;
/// The records a tool hook reads at most (the turns that touched a file, the recorded
/// fixes of an error), most recent first; the CLI reads up to 5000.
const HOOK_SCAN: usize = 60;
/// How long a hook waits for its payload.
const STDIN_DEADLINE: Duration = Duration::from_millis(300);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hook {
    SessionStart,
    Prompt,
    Tool,
    ToolAfter,
    Precompact,
}

impl Hook {
    /// The Claude-style event name answered when the payload does not say.
    fn default_event(self) -> &'static str {
        match self {
            Hook::SessionStart => "SessionStart",
            Hook::Prompt => "UserPromptSubmit",
            Hook::Tool => "PreToolUse",
            Hook::ToolAfter => "PostToolUse",
            Hook::Precompact => "PreCompact",
        }
    }

    fn budget(self) -> usize {
        match self {
            Hook::SessionStart => 2048,
            Hook::Prompt => 1536,
            Hook::Tool | Hook::ToolAfter => 480,
            Hook::Precompact => 0,
        }
    }
}

#[derive(Args, Clone)]
pub struct HookArgs {
    /// Print the bare block, for hosts that inject stdout verbatim.
    #[arg(long)]
    pub plain: bool,
    /// `hook-prompt`: also hand over the session-start digest with a session's first
    /// prompt (for harnesses whose session-start context reaches no model).
    #[arg(long)]
    pub digest: bool,
    /// Antigravity's `PreInvocation` envelope: `{"injectSteps": [{"ephemeralMessage": …}]}`
    /// on the first invocation only, the project from `workspacePaths[0]`, else `{}`.
    #[arg(long)]
    pub antigravity: bool,
    /// Crush's flat reply `{"version": 1, "context": …}` (no `decision`: an `allow`
    /// would skip Crush's permission prompt).
    #[arg(long)]
    pub crush: bool,
    /// CodeWhale's hooks: `message_submit` (stdin `text`) answers `{"text": <the text,
    /// then the block>}`, `tool_call_before` (its call in `DEEPSEEK_TOOL_*` variables,
    /// no stdin) answers `{"additionalContext": …}` with no `decision`.
    #[arg(long)]
    pub codewhale: bool,
    /// Goose discards hook stdout: write the block where Goose reads it instead — the
    /// session-start digest into deja's block in `.goosehints`, a prompt's recall into
    /// the MOIM file when `GOOSE_MOIM_MESSAGE_FILE` names deja's. Prints nothing.
    #[arg(long)]
    pub goose: bool,
}

/// Runs a hook; whatever happens, exit 0.
pub fn run(hook: Hook, args: HookArgs) -> ExitCode {
    let out = std::panic::catch_unwind(|| {
        if args.goose {
            goose(hook, &args);
            None
        } else if args.antigravity {
            Some(antigravity(hook, &args))
        } else if args.codewhale {
            codewhale(hook, &args)
        } else {
            answer(hook, &args)
        }
    });
    if let Ok(Some(text)) = out {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.flush();
    }
    ExitCode::SUCCESS
}

/// Reads one JSON value from stdin: stops as soon as a complete value has arrived, at
/// the deadline, at end of input or past the size cap. A terminal gives no payload.
fn read_payload(deadline: Duration) -> Option<Value> {
    if std::io::stdin().is_terminal() {
        return None;
    }
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    // The reader thread may stay blocked on a pipe the host keeps open; the process
    // exits without joining it.
    std::thread::Builder::new()
        .name("deja-hook-stdin".into())
        .spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut buf = vec![0u8; 64 << 10];
            loop {
                match stdin.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => {
                        if tx.send(buf[..n].to_vec()).is_err() {
                            return;
                        }
                    }
                }
            }
        })
        .ok()?;
    let until = Instant::now() + deadline;
    let mut data = Vec::new();
    loop {
        let left = until.checked_duration_since(Instant::now())?;
        match rx.recv_timeout(left) {
            Ok(chunk) => {
                data.extend_from_slice(&chunk);
                if data.len() > MAX_STDIN {
                    return None;
                }
                if let Some(v) = first_value(&data) {
                    return Some(v);
                }
            }
            // End of input: whatever arrived is all there is.
            Err(mpsc::RecvTimeoutError::Disconnected) => return first_value(&data),
            Err(mpsc::RecvTimeoutError::Timeout) => return None,
        }
    }
}

/// The first complete JSON value in `data`, if one has fully arrived.
fn first_value(data: &[u8]) -> Option<Value> {
    let text = String::from_utf8_lossy(data);
    serde_json::Deserializer::from_str(&text).into_iter::<Value>().next()?.ok()
}

/// What the harness told the hook.
#[derive(Debug, Default)]
struct Payload {
    session: Option<String>,
    cwd: Option<String>,
    event: Option<String>,
    prompt: Option<String>,
    file: Option<String>,
    command: Option<String>,
    /// For `hook-tool-after`: the tool's output when it failed.
    failure: Option<String>,
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

impl Payload {
    fn from(v: &Value) -> Payload {
        let input = v.get("tool_input").or_else(|| v.get("toolInput")).or_else(|| v.get("input")).unwrap_or(&Value::Null);
        let response = v.get("tool_response").or_else(|| v.get("toolResponse")).or_else(|| v.get("tool_result")).unwrap_or(&Value::Null);
        Payload {
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

/// Prompt text without what hosts and deja itself put around it.
fn prompt_terms(prompt: &str) -> String {
    let mut text = deja_core::InjectedText::NONE.strip(prompt).into_owned();
    for (open, close) in [
        ("<hook_context>", "</hook_context>"),
        ("&lt;hook_context&gt;", "&lt;/hook_context&gt;"),
        ("<system-reminder>", "</system-reminder>"),
    ] {
        while let Some(a) = text.find(open) {
            let end = text[a..].find(close).map_or(text.len(), |b| a + b + close.len());
            text.replace_range(a..end, " ");
        }
    }
    text
}

/// The default path: the block in the Claude-shaped envelope, bare (`--plain`) or in
/// Crush's reply (`--crush`).
fn answer(hook: Hook, args: &HookArgs) -> Option<String> {
    let payload = read_payload(STDIN_DEADLINE).map(|v| Payload::from(&v)).unwrap_or_default();
    let block = block(hook, args, &payload)?;
    if args.plain {
        return Some(block);
    }
    if args.crush {
        return Some(crush_reply(&block));
    }
    let event = payload.event.clone().unwrap_or_else(|| hook.default_event().to_string());
    let receipt = match hook {
        Hook::SessionStart => "deja: recalled this project's past sessions",
        Hook::Prompt => "deja: recalled matching past sessions",
        Hook::Tool => "deja: this file was worked on before",
        Hook::ToolAfter => "deja: this error was fixed before",
        Hook::Precompact => "",
    };
    let v = json!({"systemMessage": receipt, "hookSpecificOutput": {"hookEventName": event, "additionalContext": block}});
    Some(format!("{v}\n"))
}

/// Antigravity runs `PreInvocation` before every model call, in the plugin's folder:
/// only invocation 1 gets the block, about the project in `workspacePaths[0]`; every
/// other call, and a payload that does not decode, gets `{}`.
fn antigravity(hook: Hook, args: &HookArgs) -> String {
    let block = read_payload(STDIN_DEADLINE).and_then(antigravity_payload).and_then(|v| block(hook, args, &Payload::from(&v)));
    antigravity_reply(block)
}

/// The payload with `cwd` taken from `workspacePaths[0]`, for the first invocation only.
fn antigravity_payload(mut v: Value) -> Option<Value> {
    if v.get("invocationNum").and_then(Value::as_u64) != Some(1) {
        return None;
    }
    let dir = v.get("workspacePaths")?.get(0)?.as_str()?.to_string();
    v.as_object_mut()?.insert("cwd".into(), Value::String(dir));
    Some(v)
}

fn antigravity_reply(block: Option<String>) -> String {
    match block {
        Some(b) => format!("{}\n", json!({"injectSteps": [{"ephemeralMessage": b}]})),
        None => "{}\n".to_string(),
    }
}

/// Goose's hooks: the block goes into a file Goose reads (see `--goose`), rewritten
/// through the wiring engine so `deja uninstall` still gives the file back.
fn goose(hook: Hook, args: &HookArgs) {
    let Some(payload) = read_payload(STDIN_DEADLINE).map(goose_payload) else { return };
    let env = StoreEnv::from_process();
    if env.check_home().is_err() {
        return;
    }
    let payload = Payload::from(&payload);
    let (file, body) = match hook {
        Hook::SessionStart => (
            deja_adapter_goose::wiring::hints_file(&env),
            block(hook, args, &payload).unwrap_or_else(|| deja_adapter_goose::wiring::NO_HISTORY.to_string()),
        ),
        Hook::Prompt => {
            let moim = deja_adapter_goose::wiring::moim_file(&env);
            // Only deja's own MOIM file: one the user set is theirs.
            if std::env::var_os("GOOSE_MOIM_MESSAGE_FILE").map(PathBuf::from).as_ref() != Some(&moim) {
                return;
            }
            // No new recall empties the file: Goose would show the last block every turn.
            (moim, block(hook, args, &payload).unwrap_or_default())
        }
        _ => return,
    };
    let _ = crate::rewire::refresh(&env, &file, &body);
}

/// Goose's prompt payload names the text `message` (`matcher_context` holds the same).
fn goose_payload(mut v: Value) -> Value {
    if v.get("prompt").is_none() {
        let text = v.get("message").or_else(|| v.get("matcher_context")).cloned();
        if let (Some(text), Some(obj)) = (text, v.as_object_mut()) {
            obj.insert("prompt".into(), text);
        }
    }
    v
}

/// The framed `<deja-recall>` block a hook hands over for `payload`, within the hook's
/// budget; `None` when there is nothing to say or it was said before in this session.
/// Every envelope wraps this.
fn block(hook: Hook, args: &HookArgs, payload: &Payload) -> Option<String> {
    let env = StoreEnv::from_process();
    env.check_home().ok()?;
    if hook == Hook::Precompact {
        queue_index();
        return None;
    }
    let paths = IndexPaths::new(env.index_dir());
    // Never build or wait: no index yet, or one of another schema, is silence.
    if !paths.exists() || crate::search_cmd::check_not_building(&paths).is_err() {
        return None;
    }
    let view = IndexView::open(&paths).ok()?;
    let here = payload
        .cwd
        .clone()
        .or_else(|| std::env::var("CLAUDE_PROJECT_DIR").ok().filter(|d| !d.is_empty()))
        .or_else(|| std::env::current_dir().ok().map(|d| d.display().to_string()));
    let scope = Scope { here: here.clone(), ..Scope::default() };
    let mut answers: Vec<Answer> = Vec::new();
    match hook {
        Hook::SessionStart => {
            let dir = here.clone()?;
            let o = query::orient_over(&view, &dir, &scope, 4, HOOK_ORIENT_SCAN).ok()?;
            if !o.sessions.is_empty() || !o.notes.is_empty() {
                answers.push(render::orient(&o));
            }
        }
        Hook::Prompt => {
            let terms = prompt_terms(payload.prompt.as_deref()?);
            if args.digest && !seen_any(&env, payload.session.as_deref()) {
                if let Some(dir) = &here {
                    if let Ok(o) = query::orient_over(&view, dir, &scope, 3, HOOK_ORIENT_SCAN) {
                        if !o.sessions.is_empty() || !o.notes.is_empty() {
                            answers.push(render::orient(&o));
                        }
                    }
                }
            }
            // A slash command or a one-word prompt names nothing to look for.
            if !terms.trim_start().starts_with('/') && terms.split_whitespace().count() >= 2 {
                let r = query::recall_prompt(&view, &terms, &Scope { project: None, ..scope.clone() }, 3).ok()?;
                if !r.hits.is_empty() {
                    answers.push(render::recall(&r, &terms));
                }
            }
        }
        Hook::Tool => {
            let file = payload.file.clone().or_else(|| payload.command.as_deref().and_then(path_in_command))?;
            let r = query::blame_within(&view, &file, &scope, 2, HOOK_SCAN).ok()?;
            if !r.hits.is_empty() {
                answers.push(render::blame(&r));
            }
        }
        Hook::ToolAfter => {
            let text = payload.failure.as_deref()?;
            let r = query::fixes_within(&view, text, &scope, 2, HOOK_SCAN, false).ok()?;
            if !r.fixes.is_empty() {
                answers.push(render::fix(&r));
            }
        }
        Hook::Precompact => {}
    }
    if answers.is_empty() {
        return None;
    }
    let per = hook.budget() / answers.len();
    let block: String = answers.iter().map(|a| framed(a, per)).collect();
    first_time(&env, payload.session.as_deref(), &block).then_some(block)
}

/// CodeWhale: the payload from stdin (`message_submit`) or, for a tool call, from the
/// variables CodeWhale sets; the block in the event's own reply.
fn codewhale(hook: Hook, args: &HookArgs) -> Option<String> {
    let payload = match read_payload(STDIN_DEADLINE) {
        Some(v) => codewhale_payload(v),
        None => codewhale_env_payload(&|k| std::env::var(k).ok())?,
    };
    let text = payload.get("text").and_then(Value::as_str).map(str::to_string);
    let block = block(hook, args, &Payload::from(&payload))?;
    codewhale_reply(hook, text.as_deref(), &block)
}

/// `message_submit` names the prompt `text`.
fn codewhale_payload(mut v: Value) -> Value {
    if let Some(obj) = v.as_object_mut() {
        if !obj.contains_key("prompt") {
            if let Some(text) = obj.get("text").cloned() {
                obj.insert("prompt".into(), text);
            }
        }
    }
    v
}

/// A tool call as CodeWhale passes it to `tool_call_before`: `DEEPSEEK_TOOL_NAME`,
/// `DEEPSEEK_TOOL_ARGS` (JSON), `CODEWHALE_SESSION_ID`, `DEEPSEEK_WORKSPACE`.
fn codewhale_env_payload(var: &dyn Fn(&str) -> Option<String>) -> Option<Value> {
    let tool = var("DEEPSEEK_TOOL_NAME")?;
    let input = var("DEEPSEEK_TOOL_ARGS").and_then(|a| serde_json::from_str::<Value>(&a).ok()).unwrap_or(Value::Null);
    let session = var("CODEWHALE_SESSION_ID").or_else(|| var("DEEPSEEK_SESSION_ID"));
    Some(json!({"tool_name": tool, "tool_input": input, "session_id": session, "cwd": var("DEEPSEEK_WORKSPACE")}))
}

/// `message_submit` replaces the submitted text: the person's text first, the block
/// after it. A tool call gets `additionalContext` (appended to the tool result) and no
/// `decision` (absent means allow). Other events' stdout reaches no model.
fn codewhale_reply(hook: Hook, text: Option<&str>, block: &str) -> Option<String> {
    let v = match hook {
        Hook::Prompt => json!({"text": format!("{}\n\n{block}", text?.trim_end())}),
        Hook::Tool => json!({"additionalContext": block}),
        _ => return None,
    };
    Some(format!("{v}\n"))
}

/// Crush's hook reply: the block as `context`, and nothing that decides for the user.
fn crush_reply(block: &str) -> String {
    format!("{}\n", json!({"version": 1, "context": block}))
}

/// The framed block alone (no paging note: a hook cannot page).
fn framed(a: &Answer, budget: usize) -> String {
    let text = frame(a, 0, budget);
    match text.find(CLOSE_TAG) {
        Some(i) => format!("{}\n", &text[..i + CLOSE_TAG.len()]),
        None => text,
    }
}

/// The first path-like argument of a shell command that names an existing file.
fn path_in_command(command: &str) -> Option<String> {
    command
        .split_whitespace()
        .skip(1)
        .map(|w| w.trim_matches(|c| c == '"' || c == '\''))
        .find(|w| !w.starts_with('-') && w.contains(['/', '.']) && std::path::Path::new(w).is_file())
        .map(str::to_string)
}

/// Where hooks remember what they injected into which session.
fn seen_dir(env: &StoreEnv) -> PathBuf {
    env.index_dir().join("hooks")
}

fn seen_file(env: &StoreEnv, session: &str) -> PathBuf {
    seen_dir(env).join(format!("{:016x}", xxhash_rust::xxh3::xxh3_64(session.as_bytes())))
}

fn seen_any(env: &StoreEnv, session: Option<&str>) -> bool {
    session.is_some_and(|s| seen_file(env, s).exists())
}

/// Records `block` for `session` and says whether it was new. Without a session id
/// there is nothing to key on, and every block counts as new.
fn first_time(env: &StoreEnv, session: Option<&str>, block: &str) -> bool {
    let Some(session) = session else { return true };
    let path = seen_file(env, session);
    let digest = format!("{:016x}\n", xxhash_rust::xxh3::xxh3_64(block.as_bytes()));
    let seen = std::fs::read_to_string(&path).unwrap_or_default();
    if seen.lines().any(|l| format!("{l}\n") == digest) {
        return false;
    }
    if deja_core::fsutil::private_dir(&seen_dir(env)).is_ok() {
        use std::io::Write;
        // Appending one short line; a lost record only risks one repeated block.
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(&path) {
            let _ = f.write_all(digest.as_bytes());
        }
    }
    true
}

/// Starts `deja index -q` in the background, detached from the hook's pipes, so the
/// transcript is in deja's copy before the compaction summary replaces it in the
/// harness's context. The hook itself returns at once. Nothing to do while a
/// `deja index --watch` runs.
fn queue_index() {
    let env = StoreEnv::from_process();
    // A watcher has the transcript indexed already.
    if deja_core::index::watcher_running(&IndexPaths::new(env.index_dir())).is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else { return };
    let _ = std::process::Command::new(exe)
        .args(["index", "-q"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

#[cfg(test)]
mod antigravity_tests {
    use super::*;

    #[test]
    fn only_the_first_invocation_is_answered_about_the_first_workspace() {
        let first = json!({"invocationNum": 1, "workspacePaths": ["/src/app", "/src/lib"]});
        assert_eq!(antigravity_payload(first).and_then(|v| v.get("cwd").cloned()), Some(json!("/src/app")));
        assert!(antigravity_payload(json!({"invocationNum": 2, "workspacePaths": ["/src/app"]})).is_none());
        assert!(antigravity_payload(json!({"invocationNum": 1})).is_none());
        assert!(antigravity_payload(json!("garbage")).is_none());
    }

    #[test]
    fn the_reply_injects_an_ephemeral_message_or_nothing() {
        assert_eq!(antigravity_reply(None), "{}\n");
        let v: Value = serde_json::from_str(&antigravity_reply(Some("<deja-recall>x</deja-recall>\n".into()))).expect("json");
        assert_eq!(v["injectSteps"][0]["ephemeralMessage"], "<deja-recall>x</deja-recall>\n");
    }
}

#[cfg(test)]
mod goose_tests {
    use super::*;

    #[test]
    fn goose_prompt_text_comes_from_message_then_matcher_context() {
        let v = goose_payload(json!({"message": "why did pgbouncer refuse", "matcher_context": "x"}));
        assert_eq!(Payload::from(&v).prompt.as_deref(), Some("why did pgbouncer refuse"));
        let v = goose_payload(json!({"matcher_context": "pool size"}));
        assert_eq!(Payload::from(&v).prompt.as_deref(), Some("pool size"));
        let v = goose_payload(json!({"prompt": "kept", "message": "not this"}));
        assert_eq!(Payload::from(&v).prompt.as_deref(), Some("kept"));
        assert_eq!(goose_payload(json!("garbage")), json!("garbage"));
    }
}

#[cfg(test)]
mod copilot_chat_tests {
    use super::*;

    #[test]
    fn copilot_chats_exit_sentence_marks_a_failure() {
        let failed = json!("error: connection refused\nCommand exited with code 1");
        assert!(failure_text(&failed).is_some_and(|t| t.contains("connection refused")));
        assert!(failure_text(&json!("ok\nCommand exited with code 0")).is_none());
    }
}

#[cfg(test)]
mod crush_tests {
    use super::*;

    #[test]
    fn crush_reply_is_flat_and_decides_nothing() {
        let block = "<deja-recall mode=\"blame\">\nsrc/pool.rs was edited before\n</deja-recall>\n";
        let reply = crush_reply(block);
        assert!(reply.ends_with('\n'));
        let v: Value = serde_json::from_str(&reply).expect("one JSON value");
        assert_eq!(v, json!({"version": 1, "context": block}));
        assert!(v.get("decision").is_none() && v.get("hookSpecificOutput").is_none());
    }
}

#[cfg(test)]
mod codewhale_tests {
    use super::*;

    #[test]
    fn message_submit_keeps_the_text_first_and_appends_the_block() {
        let block = "<deja-recall mode=\"recall\">\npgbouncer pool size\n</deja-recall>\n";
        let v: Value = serde_json::from_str(&codewhale_reply(Hook::Prompt, Some("why pgbouncer\n"), block).expect("reply")).expect("json");
        assert_eq!(v, json!({"text": format!("why pgbouncer\n\n{block}")}));
        assert!(codewhale_reply(Hook::Prompt, None, block).is_none(), "no text to keep, nothing replaced");
    }

    #[test]
    fn a_tool_call_gets_additional_context_and_no_decision() {
        let v: Value =
            serde_json::from_str(&codewhale_reply(Hook::Tool, None, "<deja-recall>x</deja-recall>\n").expect("reply")).expect("json");
        assert_eq!(v, json!({"additionalContext": "<deja-recall>x</deja-recall>\n"}));
        assert!(codewhale_reply(Hook::ToolAfter, None, "x").is_none() && codewhale_reply(Hook::SessionStart, None, "x").is_none());
    }

    #[test]
    fn payloads_come_from_stdin_text_or_the_tool_variables() {
        let p = Payload::from(&codewhale_payload(
            json!({"event": "message_submit", "text": "why pgbouncer", "workspace": "/w", "session_id": "s"}),
        ));
        assert_eq!((p.prompt.as_deref(), p.cwd.as_deref(), p.session.as_deref()), (Some("why pgbouncer"), Some("/w"), Some("s")));
        let vars = |k: &str| match k {
            "DEEPSEEK_TOOL_NAME" => Some("edit_file".to_string()),
            "DEEPSEEK_TOOL_ARGS" => Some(r#"{"path":"src/pool.rs"}"#.to_string()),
            "CODEWHALE_SESSION_ID" => Some("s1".to_string()),
            "DEEPSEEK_WORKSPACE" => Some("/w".to_string()),
            _ => None,
        };
        let p = Payload::from(&codewhale_env_payload(&vars).expect("payload"));
        assert_eq!((p.file.as_deref(), p.cwd.as_deref(), p.session.as_deref()), (Some("src/pool.rs"), Some("/w"), Some("s1")));
        assert!(codewhale_env_payload(&|_| None).is_none(), "no tool call, nothing to answer");
    }
}

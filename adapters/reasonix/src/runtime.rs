//! `deja reasonix-ext`: Reasonix's auto-recall (its page, "Wiring"), a sidecar speaking
//! the Reasonix Extension Protocol v2 — strict JSON-RPC 2.0, one JSON object per line
//! on stdin/stdout — started by the `deja-recall` plugin package `deja install
//! reasonix-auto` writes. Reasonix hooks cannot carry recall (only `SessionStart` stdout
//! reaches the model), interceptors can:
//!
//! | hook point | what deja does |
//! | --- | --- |
//! | `input.receive` | appends the `hook-prompt --digest` answer (the session digest with a session's first prompt, then the prompt's recall) to the tail of the user's turn; the system prompt is never edited. The query is the typed text without host blocks, the plan marker and `Referenced context:` bodies |
//! | `tool.after` | for `bash`/`pwsh`/`powershell` and file writes (a `move_file` by its source): the `hook-tool` line, and for a failed command the `hook-tool-after` fix; after the output, or in front on one line when the output is long enough for Reasonix to cut it to its first and last 8 lines |
//! | `compaction.prepare` | `hook-precompact`: the transcript is indexed before the summary replaces it |
//! | `session.start` / `session.load` | the payload's `sessionPath` becomes the session key deja's once-per-session records use |
//! | `session.rotate` | nothing: deja has no session-end hook |
//!
//! Every answer comes from deja's own hook subcommands (same budgets, framing as
//! untrusted history, no block twice in one session), run with a deadline: 4 s per
//! prompt, 2 s per tool call, 10 s for a compaction. Whatever fails — a hook, a payload
//! of another shape, a panic — the decision is `continue` with the payload untouched.
//!
//! Checked against Reasonix 1.38.11: `extension/initialize` is answered with
//! `protocolVersion`, `name`, `version` and `stateSchemaVersion` (the host rejects
//! unknown members, `protocolId` among them); a replacement goes in `replacement`.

use std::ffi::OsString;
use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::time::Duration;

use deja_core::wire::hook::own_hook;
use deja_core::wire::runtime::{Runtime, RuntimeError};
use deja_core::StoreEnv;
use serde_json::{json, Value};

/// The extension protocol's major version.
const PROTOCOL_VERSION: &str = "2";
/// The version the `deja-recall` package's manifest declares.
pub const PACKAGE_VERSION: &str = crate::wiring::RUNTIME_VERSION;

const PROMPT_BUDGET: Duration = Duration::from_secs(4);
const TOOL_BUDGET: Duration = Duration::from_secs(2);
const COMPACTION_BUDGET: Duration = Duration::from_secs(10);

/// Reasonix shows a long tool output as its first and last 8 lines.
const SHOWN_LINES: usize = 16;

/// The `deja reasonix-ext` sidecar.
pub struct ReasonixRuntime;

impl Runtime for ReasonixRuntime {
    fn name(&self) -> &'static str {
        "reasonix-ext"
    }

    fn about(&self) -> &'static str {
        "Reasonix extension runtime (protocol v2 over stdio; started by the plugin `deja install reasonix-auto` writes)"
    }

    fn run(&self, _env: &StoreEnv, _args: &[OsString]) -> Result<ExitCode, RuntimeError> {
        serve();
        Ok(ExitCode::SUCCESS)
    }
}

/// What the sidecar knows about the session it serves.
#[derive(Default)]
pub struct Session {
    /// The workspace, from `extension/initialize`.
    pub root: Option<String>,
    /// The session key: a `sessionPath` once Reasonix names one, else this runtime's.
    pub key: String,
}

/// Answers the protocol on stdin/stdout until `extension/shutdown` or end of input.
fn serve() {
    let mut session = Session { root: None, key: format!("reasonix-ext-{}", std::process::id()) };
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(msg) = serde_json::from_str::<Value>(&line) else { continue };
        let method = msg.get("method").and_then(Value::as_str).unwrap_or_default().to_string();
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        let reply = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handle(&mut session, &method, &params)))
            .unwrap_or_else(|_| (method == "extension/intercept").then(|| json!({"decision": "continue"})).map(Ok));
        // Notifications get no answer.
        let Some(id) = msg.get("id").filter(|id| !id.is_null()) else { continue };
        let frame = match reply {
            Some(Ok(result)) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Some(Err((code, message))) => json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
            None => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("unknown method {method}")}}),
        };
        if writeln!(stdout, "{frame}").and_then(|()| stdout.flush()).is_err() {
            break;
        }
        if method == "extension/shutdown" {
            break;
        }
    }
}

/// A method's answer: a result, an error (code, message), or `None` for a method the
/// sidecar does not know (and for notifications, which get no answer).
pub type Reply = Option<std::result::Result<Value, (i64, String)>>;

/// Answers one method call.
pub fn handle(session: &mut Session, method: &str, params: &Value) -> Reply {
    match method {
        "extension/initialize" => {
            session.root = params.pointer("/session/workspaceRoot").and_then(Value::as_str).map(str::to_string);
            let asked = params.get("protocolVersion").and_then(Value::as_str).unwrap_or(PROTOCOL_VERSION);
            if asked.split('.').next() != Some(PROTOCOL_VERSION) {
                return Some(Err((-32000, format!("unsupported_version: deja speaks extension protocol {PROTOCOL_VERSION}"))));
            }
            Some(Ok(json!({
                "protocolVersion": PROTOCOL_VERSION,
                "name": "deja-recall",
                "version": PACKAGE_VERSION,
                "stateSchemaVersion": 1,
            })))
        }
        "extension/event" => {
            observe(session, params);
            None
        }
        "extension/intercept" => {
            observe(session, params);
            Some(Ok(intercept(session, params)))
        }
        "extension/shutdown" => Some(Ok(json!({}))),
        _ => None,
    }
}

/// Session keys from `session.start` / `session.load`.
pub fn observe(session: &mut Session, params: &Value) {
    let event = params.get("event").and_then(Value::as_str).unwrap_or_default();
    if matches!(event, "session.start" | "session.load") {
        if let Some(path) = params.pointer("/payload/sessionPath").and_then(Value::as_str).filter(|p| !p.is_empty()) {
            session.key = path.to_string();
        }
    }
}

/// The decision for one intercepted event: `continue`, or `replace` with the payload
/// carrying deja's block.
pub fn intercept(session: &Session, params: &Value) -> Value {
    let payload = params.get("payload").unwrap_or(&Value::Null);
    let replaced = match params.get("event").and_then(Value::as_str).unwrap_or_default() {
        "input.receive" => input(session, payload),
        "tool.after" => tool_after(session, payload),
        "compaction.prepare" => {
            let _ = own_hook(&["hook-precompact"], &hook_payload(session, "PreCompact"), COMPACTION_BUDGET);
            None
        }
        _ => None,
    };
    match replaced {
        Some(replacement) => json!({"decision": "replace", "replacement": replacement}),
        None => json!({"decision": "continue"}),
    }
}

fn hook_payload(session: &Session, event: &str) -> Value {
    let mut v = json!({"hook_event_name": event, "session_id": session.key});
    if let (Some(root), Some(obj)) = (&session.root, v.as_object_mut()) {
        obj.insert("cwd".into(), Value::String(root.clone()));
    }
    v
}

/// The user's turn with deja's block at its tail.
fn input(session: &Session, payload: &Value) -> Option<Value> {
    let text = payload.get("text")?.as_str()?;
    let query = typed_text(text);
    if query.trim().is_empty() {
        return None;
    }
    let mut p = hook_payload(session, "UserPromptSubmit");
    p.as_object_mut()?.insert("prompt".into(), Value::String(query));
    let block = own_hook(&["hook-prompt", "--plain", "--digest"], &p, PROMPT_BUDGET)?;
    let mut out = payload.clone();
    out.as_object_mut()?.insert("text".into(), Value::String(format!("{}\n\n{}", text.trim_end(), block.trim_end())));
    Some(out)
}

/// What the user typed: without `Referenced context:` bodies, host blocks (`<tag>` …
/// `</tag>` lines) and the plan-mode marker line.
pub fn typed_text(text: &str) -> String {
    let text = text.split("\nReferenced context:").next().unwrap_or(text);
    let text = if text.starts_with("Referenced context:") { "" } else { text };
    let mut out = Vec::new();
    let mut inside: Option<String> = None;
    for line in text.lines() {
        let t = line.trim();
        if let Some(close) = &inside {
            if t.contains(close.as_str()) {
                inside = None;
            }
            continue;
        }
        if let Some(tag) = t
            .strip_prefix('<')
            .and_then(|r| r.split(['>', ' ']).next())
            .filter(|g| !g.is_empty() && !g.starts_with('/') && g.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        {
            let close = format!("</{tag}>");
            if !t.contains(&close) {
                inside = Some(close);
            }
            continue;
        }
        if t.starts_with("[plan") || t.starts_with("[PLAN") {
            continue;
        }
        out.push(line);
    }
    out.join("\n").trim().to_string()
}

/// The tool result with deja's lines added.
pub fn tool_after(session: &Session, payload: &Value) -> Option<Value> {
    let name = payload.get("name")?.as_str()?;
    let args = match payload.get("arguments") {
        Some(Value::String(s)) => serde_json::from_str::<Value>(s).unwrap_or(Value::Null),
        Some(v) => v.clone(),
        None => Value::Null,
    };
    let result = payload.get("result").and_then(Value::as_str).unwrap_or_default();
    let failed = payload.get("isError").and_then(Value::as_bool) == Some(true);
    let str_arg = |keys: &[&str]| keys.iter().find_map(|k| args.get(*k).and_then(Value::as_str)).map(str::to_string);
    let shell = matches!(name, "bash" | "pwsh" | "powershell");
    let writes = name == "move_file" || name.contains("write") || name.contains("edit");
    let mut blocks = Vec::new();
    if shell {
        let command = str_arg(&["command", "cmd", "script"])?;
        let mut p = hook_payload(session, "PreToolUse");
        p.as_object_mut()?.insert("tool_name".into(), json!(name));
        p.as_object_mut()?.insert("tool_input".into(), json!({"command": command}));
        blocks.extend(own_hook(&["hook-tool", "--plain"], &p, TOOL_BUDGET / 2));
        if failed {
            let mut p = hook_payload(session, "PostToolUse");
            p.as_object_mut()?.insert("tool_name".into(), json!(name));
            p.as_object_mut()?.insert("tool_input".into(), json!({"command": command}));
            p.as_object_mut()?.insert("tool_response".into(), json!({"is_error": true, "output": result}));
            blocks.extend(own_hook(&["hook-tool-after", "--plain"], &p, TOOL_BUDGET / 2));
        }
    } else if writes {
        let file = if name == "move_file" { str_arg(&["source", "from", "path"]) } else { str_arg(&["path", "file_path", "filePath"]) }?;
        let mut p = hook_payload(session, "PreToolUse");
        p.as_object_mut()?.insert("tool_name".into(), json!(name));
        p.as_object_mut()?.insert("tool_input".into(), json!({"file_path": file}));
        blocks.extend(own_hook(&["hook-tool", "--plain"], &p, TOOL_BUDGET));
    }
    if blocks.is_empty() {
        return None;
    }
    let mut out = payload.clone();
    out.as_object_mut()?.insert("result".into(), Value::String(placed(result, &blocks.concat())));
    Some(out)
}

/// deja's block after the output, or — for an output Reasonix will cut to its first and
/// last lines — in front of it, on one line, so it is not cut away.
pub fn placed(result: &str, block: &str) -> String {
    if result.lines().count() > SHOWN_LINES {
        let one_line: Vec<&str> = block.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        format!("{}\n{result}", one_line.join(" "))
    } else if result.is_empty() {
        block.trim_end().to_string()
    } else {
        format!("{}\n{}", result.trim_end_matches('\n'), block.trim_end())
    }
}

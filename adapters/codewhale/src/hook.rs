//! CodeWhale's hook envelope (`--codewhale`). `message_submit` hands the prompt on stdin
//! as `text` and takes back `{"text": …}`, which replaces the submitted text: the
//! person's text first, deja's block after it. `tool_call_before` gets no stdin — the
//! call is in `DEEPSEEK_TOOL_NAME`, `DEEPSEEK_TOOL_ARGS` (JSON), `CODEWHALE_SESSION_ID`
//! and `DEEPSEEK_WORKSPACE` — and takes back `{"additionalContext": …}`, appended to the
//! tool result, with no `decision` (absent means allow). Other events' stdout reaches no
//! model.

use deja_core::wire::hook::{HookEnvelope, HookEvent};
use deja_core::wire::{json, Value};
use deja_core::StoreEnv;

/// The `--codewhale` envelope.
pub struct CodewhaleEnvelope;

impl HookEnvelope for CodewhaleEnvelope {
    fn name(&self) -> &'static str {
        "codewhale"
    }

    fn help(&self) -> &'static str {
        "CodeWhale's hooks: `message_submit` (stdin `text`) answers `{\"text\": <the text, then the block>}`, \
         `tool_call_before` (its call in `DEEPSEEK_TOOL_*` variables, no stdin) answers `{\"additionalContext\": …}`"
    }

    fn payload(&self, _event: HookEvent, stdin: Option<Value>, env: &StoreEnv) -> Option<Value> {
        match stdin {
            Some(v) => Some(with_prompt(v)),
            None => tool_call(env),
        }
    }

    fn answer(&self, event: HookEvent, payload: Option<&Value>, block: Option<&str>, _env: &StoreEnv) -> Option<String> {
        let block = block?;
        let v = match event {
            HookEvent::Prompt => {
                let text = payload?.get("text").and_then(Value::as_str)?;
                json!({"text": format!("{}\n\n{block}", text.trim_end())})
            }
            HookEvent::Tool => json!({"additionalContext": block}),
            _ => return None,
        };
        Some(format!("{v}\n"))
    }
}

/// `message_submit` names the prompt `text`.
fn with_prompt(mut v: Value) -> Value {
    if let Some(obj) = v.as_object_mut() {
        if !obj.contains_key("prompt") {
            if let Some(text) = obj.get("text").cloned() {
                obj.insert("prompt".into(), text);
            }
        }
    }
    v
}

/// A tool call as CodeWhale passes it to `tool_call_before`, in its variables.
fn tool_call(env: &StoreEnv) -> Option<Value> {
    let tool = env.var("DEEPSEEK_TOOL_NAME")?;
    let input = env.var("DEEPSEEK_TOOL_ARGS").and_then(|a| serde_json::from_str::<Value>(a).ok()).unwrap_or(Value::Null);
    let session = env.var("CODEWHALE_SESSION_ID").or_else(|| env.var("DEEPSEEK_SESSION_ID"));
    Some(json!({"tool_name": tool, "tool_input": input, "session_id": session, "cwd": env.var("DEEPSEEK_WORKSPACE")}))
}

//! Antigravity's hook envelope (`--antigravity`). `PreInvocation` runs before every model
//! call, with the plugin's folder as its cwd: only invocation 1 gets the block, about the
//! project in `workspacePaths[0]`, as `{"injectSteps": [{"ephemeralMessage": …}]}`;
//! every other call, and a payload that does not decode, gets `{}`.

use deja_core::wire::hook::{HookEnvelope, HookEvent};
use deja_core::wire::{json, Value};
use deja_core::StoreEnv;

/// The `--antigravity` envelope.
pub struct AntigravityEnvelope;

impl HookEnvelope for AntigravityEnvelope {
    fn name(&self) -> &'static str {
        "antigravity"
    }

    fn help(&self) -> &'static str {
        "Antigravity's `PreInvocation`: `{\"injectSteps\": [{\"ephemeralMessage\": …}]}` on the first invocation only, the \
         project from `workspacePaths[0]`, else `{}`"
    }

    /// The payload with `cwd` taken from `workspacePaths[0]`, for the first invocation only.
    fn payload(&self, _event: HookEvent, stdin: Option<Value>, _env: &StoreEnv) -> Option<Value> {
        let mut v = stdin?;
        if v.get("invocationNum").and_then(Value::as_u64) != Some(1) {
            return None;
        }
        let dir = v.get("workspacePaths")?.get(0)?.as_str()?.to_string();
        v.as_object_mut()?.insert("cwd".into(), Value::String(dir));
        Some(v)
    }

    fn answer(&self, _event: HookEvent, _payload: Option<&Value>, block: Option<&str>, _env: &StoreEnv) -> Option<String> {
        Some(match block {
            Some(b) => format!("{}\n", json!({"injectSteps": [{"ephemeralMessage": b}]})),
            None => "{}\n".to_string(),
        })
    }
}

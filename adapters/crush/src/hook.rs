//! Crush's hook envelope (`--crush`): the payload is Claude-shaped JSON on stdin; the
//! reply is Crush's flat `{"version": 1, "context": …}`, which Crush appends to the tool
//! result. It never carries a `decision`: an `allow` would pre-approve the call and skip
//! Crush's permission prompt.

use deja_core::wire::hook::{HookEnvelope, HookEvent};
use deja_core::wire::{json, Value};
use deja_core::StoreEnv;

/// The `--crush` envelope.
pub struct CrushEnvelope;

impl HookEnvelope for CrushEnvelope {
    fn name(&self) -> &'static str {
        "crush"
    }

    fn help(&self) -> &'static str {
        "Crush's flat reply `{\"version\": 1, \"context\": …}` (no `decision`: an `allow` would skip Crush's permission prompt)"
    }

    fn answer(&self, _event: HookEvent, _payload: Option<&Value>, block: Option<&str>, _env: &StoreEnv) -> Option<String> {
        Some(format!("{}\n", json!({"version": 1, "context": block?})))
    }
}

//! The `--crush` hook envelope: Crush's flat reply, which decides nothing.

use deja_adapter_crush::hook::CrushEnvelope;
use deja_core::wire::hook::{HookEnvelope, HookEvent};
use deja_core::StoreEnv;
use serde_json::{json, Value};

#[test]
fn crush_reply_is_flat_and_decides_nothing() {
    let env = StoreEnv::with_home("/h");
    let block = "<deja-recall mode=\"blame\">\nsrc/pool.rs was edited before\n</deja-recall>\n";
    let reply = CrushEnvelope.answer(HookEvent::Tool, Some(&json!({})), Some(block), &env).expect("reply");
    assert!(reply.ends_with('\n'));
    let v: Value = serde_json::from_str(&reply).expect("one JSON value");
    assert_eq!(v, json!({"version": 1, "context": block}));
    assert!(v.get("decision").is_none() && v.get("hookSpecificOutput").is_none());
    assert!(CrushEnvelope.answer(HookEvent::Tool, Some(&json!({})), None, &env).is_none(), "nothing to say, nothing printed");
}

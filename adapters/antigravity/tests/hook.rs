//! The `--antigravity` hook envelope: only the first invocation is answered, about the
//! first workspace, as an ephemeral message; everything else gets `{}`.

use deja_adapter_antigravity::hook::AntigravityEnvelope;
use deja_core::wire::hook::{HookEnvelope, HookEvent};
use deja_core::StoreEnv;
use serde_json::{json, Value};

fn payload(v: Value) -> Option<Value> {
    AntigravityEnvelope.payload(HookEvent::SessionStart, Some(v), &StoreEnv::with_home("/h"))
}

#[test]
fn only_the_first_invocation_is_answered_about_the_first_workspace() {
    let first = json!({"invocationNum": 1, "workspacePaths": ["/src/app", "/src/lib"]});
    assert_eq!(payload(first).and_then(|v| v.get("cwd").cloned()), Some(json!("/src/app")));
    assert!(payload(json!({"invocationNum": 2, "workspacePaths": ["/src/app"]})).is_none());
    assert!(payload(json!({"invocationNum": 1})).is_none());
    assert!(payload(json!("garbage")).is_none());
    assert!(AntigravityEnvelope.payload(HookEvent::SessionStart, None, &StoreEnv::with_home("/h")).is_none());
}

#[test]
fn the_reply_injects_an_ephemeral_message_or_nothing() {
    let env = StoreEnv::with_home("/h");
    assert_eq!(AntigravityEnvelope.answer(HookEvent::SessionStart, None, None, &env).as_deref(), Some("{}\n"));
    let reply = AntigravityEnvelope.answer(HookEvent::SessionStart, None, Some("<deja-recall>x</deja-recall>\n"), &env).expect("reply");
    let v: Value = serde_json::from_str(&reply).expect("json");
    assert_eq!(v["injectSteps"][0]["ephemeralMessage"], "<deja-recall>x</deja-recall>\n");
}

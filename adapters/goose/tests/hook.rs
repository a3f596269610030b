//! The `--goose` hook envelope: the prompt's text comes from the keys Goose uses, and
//! nothing is read or written without a payload.

use deja_adapter_goose::hook::{goose_payload, GooseEnvelope};
use deja_core::wire::hook::{HookEnvelope, HookEvent, HookPayload};
use deja_core::StoreEnv;
use serde_json::json;

#[test]
fn goose_prompt_text_comes_from_message_then_matcher_context() {
    let v = goose_payload(json!({"message": "why did pgbouncer refuse", "matcher_context": "x"}));
    assert_eq!(HookPayload::from(&v).prompt.as_deref(), Some("why did pgbouncer refuse"));
    let v = goose_payload(json!({"matcher_context": "pool size"}));
    assert_eq!(HookPayload::from(&v).prompt.as_deref(), Some("pool size"));
    let v = goose_payload(json!({"prompt": "kept", "message": "not this"}));
    assert_eq!(HookPayload::from(&v).prompt.as_deref(), Some("kept"));
    assert_eq!(goose_payload(json!("garbage")), json!("garbage"));
}

#[test]
fn goose_prints_nothing_and_without_a_payload_writes_nothing() {
    let home = tempfile::tempdir().expect("tmp");
    let env = StoreEnv::with_home(home.path());
    assert!(GooseEnvelope.payload(HookEvent::Prompt, None, &env).is_none());
    assert!(GooseEnvelope.answer(HookEvent::SessionStart, None, Some("block"), &env).is_none());
    assert_eq!(std::fs::read_dir(home.path()).expect("home").count(), 0, "nothing written");
    // A relative HOME cannot anchor deja's files: the payload is not even read.
    assert!(GooseEnvelope.payload(HookEvent::Prompt, Some(json!({"message": "x"})), &StoreEnv::with_home("rel")).is_none());
}

//! The `--codewhale` hook envelope: the person's text stays first, a tool call comes
//! from CodeWhale's variables, and no reply decides anything.

use deja_adapter_codewhale::hook::CodewhaleEnvelope;
use deja_core::wire::hook::{HookEnvelope, HookEvent, HookPayload};
use deja_core::StoreEnv;
use serde_json::{json, Value};

fn reply(event: HookEvent, payload: Option<&Value>, block: &str) -> Option<Value> {
    let out = CodewhaleEnvelope.answer(event, payload, Some(block), &StoreEnv::with_home("/h"))?;
    Some(serde_json::from_str(&out).expect("json"))
}

#[test]
fn message_submit_keeps_the_text_first_and_appends_the_block() {
    let block = "<deja-recall mode=\"recall\">\npgbouncer pool size\n</deja-recall>\n";
    let v = reply(HookEvent::Prompt, Some(&json!({"text": "why pgbouncer\n"})), block).expect("reply");
    assert_eq!(v, json!({"text": format!("why pgbouncer\n\n{block}")}));
    assert!(reply(HookEvent::Prompt, Some(&json!({})), block).is_none(), "no text to keep, nothing replaced");
}

#[test]
fn a_tool_call_gets_additional_context_and_no_decision() {
    let v = reply(HookEvent::Tool, None, "<deja-recall>x</deja-recall>\n").expect("reply");
    assert_eq!(v, json!({"additionalContext": "<deja-recall>x</deja-recall>\n"}));
    assert!(reply(HookEvent::ToolAfter, None, "x").is_none() && reply(HookEvent::SessionStart, None, "x").is_none());
}

#[test]
fn payloads_come_from_stdin_text_or_the_tool_variables() {
    let env = StoreEnv::with_home("/h");
    let stdin = json!({"event": "message_submit", "text": "why pgbouncer", "workspace": "/w", "session_id": "s"});
    let p = HookPayload::from(&CodewhaleEnvelope.payload(HookEvent::Prompt, Some(stdin), &env).expect("payload"));
    assert_eq!((p.prompt.as_deref(), p.cwd.as_deref(), p.session.as_deref()), (Some("why pgbouncer"), Some("/w"), Some("s")));
    let vars = env
        .clone()
        .set("DEEPSEEK_TOOL_NAME", "edit_file")
        .set("DEEPSEEK_TOOL_ARGS", r#"{"path":"src/pool.rs"}"#)
        .set("CODEWHALE_SESSION_ID", "s1")
        .set("DEEPSEEK_WORKSPACE", "/w");
    let p = HookPayload::from(&CodewhaleEnvelope.payload(HookEvent::Tool, None, &vars).expect("payload"));
    assert_eq!((p.file.as_deref(), p.cwd.as_deref(), p.session.as_deref()), (Some("src/pool.rs"), Some("/w"), Some("s1")));
    assert!(CodewhaleEnvelope.payload(HookEvent::Tool, None, &env).is_none(), "no tool call, nothing to answer");
}

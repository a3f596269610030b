//! The `deja reasonix-ext` sidecar's protocol answers: the query is what the user typed,
//! blocks are placed where Reasonix shows them, initialize answers only fields Reasonix
//! accepts, and session keys follow `sessionPath`. (No case here reaches a hook: those
//! spawn the `deja` binary, covered by its end-to-end tests.)

use deja_adapter_reasonix::runtime::{handle, intercept, observe, placed, tool_after, typed_text, Session, PACKAGE_VERSION};
use serde_json::json;

#[test]
fn the_query_is_what_the_user_typed() {
    let text = "why did pgbouncer refuse\n<active-goal>\nship it\n</active-goal>\n[plan mode]\nduring the load test\nReferenced context:\nsrc/pool.rs\nfn main() {}";
    assert_eq!(typed_text(text), "why did pgbouncer refuse\nduring the load test");
    assert_eq!(typed_text("<skill-pin>x</skill-pin>\nhello there"), "hello there");
    assert_eq!(typed_text("Referenced context:\nonly this"), "");
}

#[test]
fn blocks_follow_short_output_and_lead_long_output_on_one_line() {
    let block = "<deja-recall mode=\"fix\">\nrestart pgbouncer\n</deja-recall>\n";
    assert_eq!(placed("boom\n", block), "boom\n<deja-recall mode=\"fix\">\nrestart pgbouncer\n</deja-recall>");
    let long: String = (0..40).map(|i| format!("line {i}\n")).collect();
    let out = placed(&long, block);
    assert!(out.starts_with("<deja-recall mode=\"fix\"> restart pgbouncer </deja-recall>\nline 0\n"));
    assert!(out.ends_with("line 39\n"));
}

#[test]
fn initialize_answers_the_fields_reasonix_accepts() {
    let mut s = Session::default();
    let params = json!({"protocolVersion": "2", "session": {"sessionId": "boot-1", "workspaceRoot": "/w/app", "generation": 1}});
    let Some(Ok(result)) = handle(&mut s, "extension/initialize", &params) else { panic!("initialize is answered") };
    assert_eq!(result, json!({"protocolVersion": "2", "name": "deja-recall", "version": PACKAGE_VERSION, "stateSchemaVersion": 1}));
    assert_eq!(s.root.as_deref(), Some("/w/app"));
    assert!(matches!(handle(&mut s, "extension/initialize", &json!({"protocolVersion": "3"})), Some(Err(_))));
    assert!(handle(&mut s, "extension/provider/catalog", &json!({})).is_none());
}

#[test]
fn session_keys_come_from_session_paths_and_other_points_continue() {
    let mut s = Session { root: None, key: "boot".into() };
    observe(&mut s, &json!({"event": "session.load", "payload": {"sessionPath": "6eef221d"}}));
    assert_eq!(s.key, "6eef221d");
    let r = intercept(&s, &json!({"event": "session.rotate", "payload": {}}));
    assert_eq!(r, json!({"decision": "continue"}));
    // A read tool is not deja's business.
    assert!(tool_after(&s, &json!({"name": "read_file", "arguments": "{\"path\": \"a\"}", "result": "x"})).is_none());
}

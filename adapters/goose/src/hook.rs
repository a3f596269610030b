//! Goose's hook envelope (`--goose`): Goose discards hook stdout, so the hooks write the
//! block where Goose reads it instead and print nothing — the session-start digest into
//! deja's block in `.goosehints` (read into the system prompt as a session starts), a
//! prompt's recall into the MOIM file when `GOOSE_MOIM_MESSAGE_FILE` names deja's (the
//! `deja goose` wrapper sets it; Goose re-reads the file every turn, after the hooks).
//! Both go through the wiring engine ([`deja_core::wire::live`]), so `deja uninstall`
//! still gives the files back.

use deja_core::wire::hook::{HookEnvelope, HookEvent};
use deja_core::wire::Value;
use deja_core::wired::refresh;
use deja_core::StoreEnv;

use crate::wiring::{hints_file, moim_file, NO_HISTORY};

/// The `--goose` envelope.
pub struct GooseEnvelope;

impl HookEnvelope for GooseEnvelope {
    fn name(&self) -> &'static str {
        "goose"
    }

    fn help(&self) -> &'static str {
        "Goose: the block written to `.goosehints` (session start) or deja's MOIM file (a prompt); nothing printed"
    }

    fn payload(&self, event: HookEvent, stdin: Option<Value>, env: &StoreEnv) -> Option<Value> {
        // No payload, or a home that cannot anchor deja's files: no file is touched.
        env.check_home().ok()?;
        // A prompt's recall goes only into deja's own MOIM file (one the user set is
        // theirs); with none to write, nothing is recalled, so nothing is recorded as
        // said to this session either.
        if event == HookEvent::Prompt && env.path_var("GOOSE_MOIM_MESSAGE_FILE") != Some(moim_file(env)) {
            return None;
        }
        stdin.map(goose_payload)
    }

    fn answer(&self, event: HookEvent, payload: Option<&Value>, block: Option<&str>, env: &StoreEnv) -> Option<String> {
        payload?;
        let (file, body) = match event {
            HookEvent::SessionStart => (hints_file(env), block.unwrap_or(NO_HISTORY).to_string()),
            // No new recall empties the file: Goose would show the last block every turn.
            HookEvent::Prompt => (moim_file(env), block.unwrap_or_default().to_string()),
            _ => return None,
        };
        let _ = refresh(env, &file, &body);
        None
    }
}

/// Goose's prompt payload names the text `message` (`matcher_context` holds the same).
pub fn goose_payload(mut v: Value) -> Value {
    if v.get("prompt").is_none() {
        let text = v.get("message").or_else(|| v.get("matcher_context")).cloned();
        if let (Some(text), Some(obj)) = (text, v.as_object_mut()) {
            obj.insert("prompt".into(), text);
        }
    }
    v
}

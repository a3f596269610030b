//! Kimi Code's synthetic writer: a [`SynthSession`] as Kimi Code stores a session,
//! `~/.kimi-code/sessions/<workDirKey>/<session id>/` with `state.json` and the main
//! agent's `agents/main/wire.jsonl` (the wire-protocol lines are the family's,
//! `deja_core::family::kimi_synth`), and the session's line in `session_index.jsonl`.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use deja_core::family::kimi_synth;
use deja_core::SynthSession;

/// Writes `s` where discovery finds it and returns the main agent's wire log.
pub fn write(home: &Path, s: &SynthSession) -> std::io::Result<PathBuf> {
    let kimi = home.join(".kimi-code");
    let path = kimi_synth::write_session(&kimi.join("sessions"), &s.id, s)?;
    let mut index = std::fs::OpenOptions::new().create(true).append(true).open(kimi.join("session_index.jsonl"))?;
    // One write per line: parallel writers append whole lines (O_APPEND), never interleaved.
    index.write_all(format!("{}\n", serde_json::json!({"type": "session", "id": s.id})).as_bytes())?;
    Ok(path)
}

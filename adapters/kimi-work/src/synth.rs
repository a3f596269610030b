//! The Kimi desktop app's synthetic writer: a [`SynthSession`] as the app's local agent
//! stores a conversation, `<app data>/daimon-share/daimon/runtime/kimi-code/home/sessions/
//! <workDirKey>/conv-<id>/` with `state.json` and `agents/main/wire.jsonl` (the kernel's
//! wire protocol, `deja_core::family::kimi_synth`), under the first sessions folder
//! discovery looks in on this OS.

use std::path::{Path, PathBuf};

use deja_core::family::kimi_synth;
use deja_core::{StoreEnv, SynthSession};

/// Writes `s` where discovery finds it with only `HOME` set and returns the wire log.
pub fn write(home: &Path, s: &SynthSession) -> std::io::Result<PathBuf> {
    let Some(sessions) = super::INFO.store.root(super::ID, &StoreEnv::with_home(home)) else {
        return Err(std::io::Error::new(std::io::ErrorKind::NotFound, "no Kimi desktop sessions folder on this OS"));
    };
    kimi_synth::write_session(&sessions, &format!("{}{}", super::CONVERSATION_PREFIX, s.id), s)
}

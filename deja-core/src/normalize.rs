//! The ingest step between a parser and the index: strip the harness's injected text, redact
//! secrets, cap sizes, drop exact repeats, honour the work-record switches, and
//! choose a title. Runs on every session of every harness, so adapters stay about
//! their format.

use std::collections::HashSet;

use crate::env::StoreEnv;
use crate::model::{cap_text, Role, Session};
use crate::redact::redact;
use crate::text::{derive_title, one_line, InjectedText};

/// After redaction a turn's text is capped at 64 KiB.
pub const MAX_INDEXED_TEXT: usize = 64 << 10;

/// The `DEJA_INDEX_*` switches (all on by default).
#[derive(Debug, Clone)]
pub struct NormalizeOptions {
    pub paths: bool,
    pub edits: bool,
    pub commands: bool,
    pub tool_output: bool,
}

impl Default for NormalizeOptions {
    fn default() -> Self {
        NormalizeOptions { paths: true, edits: true, commands: true, tool_output: true }
    }
}

impl NormalizeOptions {
    pub fn from_env(env: &StoreEnv) -> Self {
        NormalizeOptions {
            paths: env.switch("DEJA_INDEX_PATHS", true),
            edits: env.switch("DEJA_INDEX_EDITS", true),
            commands: env.switch("DEJA_INDEX_COMMANDS", true),
            tool_output: env.switch("DEJA_INDEX_TOOL_OUTPUT", true),
        }
    }
}

fn redact_owned(s: &str) -> String {
    redact(s).into_owned()
}

/// Normalizes a parsed session in place (see the module doc); `injected` is the
/// session's harness's own injected-text rules.
pub fn normalize(session: &mut Session, opts: &NormalizeOptions, injected: &InjectedText) {
    let mut seen: HashSet<(Role, Option<i64>, u64)> = HashSet::new();
    session.turns.retain_mut(|turn| {
        let is_tool = matches!(turn.role, Role::ToolCall | Role::ToolOutput);
        if is_tool && !opts.tool_output {
            turn.text.clear();
        }
        let mut text = if turn.role == Role::Summary { injected.strip_summary(&turn.text) } else { injected.strip(&turn.text) };
        text = redact_owned(&text);
        cap_text(&mut text, MAX_INDEXED_TEXT);
        turn.text = text;
        if let Some(tool) = &mut turn.tool {
            if !opts.commands {
                tool.command = None;
            }
            if let Some(cmd) = &mut tool.command {
                *cmd = redact_owned(cmd);
                cap_text(cmd, MAX_INDEXED_TEXT);
            }
        }
        if opts.paths {
            for f in &mut turn.files {
                f.path = redact_owned(&f.path);
            }
        } else {
            turn.files.clear();
        }
        if !opts.edits {
            turn.edit = None;
        }
        if let Some(edit) = &mut turn.edit {
            edit.path = redact_owned(&edit.path);
            edit.old = redact_owned(&edit.old);
            edit.new = edit.new.as_deref().map(redact_owned);
        }
        if turn.role == Role::ToolOutput && turn.text.is_empty() {
            return false;
        }
        if turn.is_empty() {
            return false;
        }
        let key = (turn.role, turn.time.map(|t| t.0), xxhash_rust::xxh3::xxh3_64(turn.text.as_bytes()));
        turn.role == Role::ToolCall || seen.insert(key)
    });
    session.title = match session.title.take().map(|t| redact_owned(injected.strip(&t).trim())).filter(|t| !t.is_empty()) {
        Some(t) => Some(one_line(&t, 160)),
        None => derive_title(session, injected),
    };
    if let Some(p) = &mut session.project {
        *p = redact_owned(p);
    }
}

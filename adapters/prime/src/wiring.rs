//! prime's wiring (its page, "Wiring"), under `<agent>` =
//! `${PRIME_AGENT_CODING_AGENT_DIR:-~/.prime/agent}`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `prime` | `<agent>/settings.json` | `mcpServers.deja` = stdio `<exe> mcp` |
//! | `prime` | `~/.agents/skills/deja-history/SKILL.md` | the shared skill (prime loads it) |
//! | `prime-auto` | `<agent>/extensions/deja.ts` | pi's extension ([`deja_core::wire::pi_extension`]): digest then per-prompt recall on `before_agent_start`, `tool_result`, `session_compact`, `/deja` |
//!
//! Not done from the page: the footer status while the first index builds (deja has no
//! subcommand reporting it), and reading the `bash()` exit codes inside an `ipython`
//! cell — the extension acts on the result's `isError` and a `path` argument only.

use std::path::PathBuf;

use deja_core::wire::{pi_extension, shared_skill, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct PrimeWiring;

/// `${PRIME_AGENT_CODING_AGENT_DIR:-~/.prime/agent}`.
fn agent_dir(env: &StoreEnv) -> PathBuf {
    crate::INFO.store.dir_of(env, "PRIME_AGENT_CODING_AGENT_DIR")
}

impl Wiring for PrimeWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        agent_dir(env).is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        vec![Edit::json_member(agent_dir(cx.env).join("settings.json"), &["mcpServers", "deja"], cx.mcp_entry(true)), shared_skill(cx)]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        vec![Edit::owned_file(agent_dir(cx.env).join("extensions/deja.ts"), pi_extension::text(cx, "prime-auto"))]
    }
}

//! Senpi's wiring (its page, "Wiring"), under `<agent>` = `${SENPI_CODING_AGENT_DIR:-~/.senpi/agent}`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `senpi` | `<agent>/mcp.json` | `mcpServers.deja` = `<exe> mcp` (palette `mcp:deja:deja`) |
//! | `senpi` | `~/.agents/skills/deja-history/SKILL.md` | the shared skill only (a second copy under `<agent>/skills` is a name collision) |
//! | `senpi-auto` | `<agent>/extensions/deja.ts` | pi's extension ([`deja_core::wire::pi_extension`]): the injection point and `/deja` |

use std::path::PathBuf;

use deja_core::wire::{pi_extension, shared_skill, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct SenpiWiring;

/// `${SENPI_CODING_AGENT_DIR:-~/.senpi/agent}`.
fn agent_dir(env: &StoreEnv) -> PathBuf {
    crate::INFO.store.dir_of(env, "SENPI_CODING_AGENT_DIR")
}

impl Wiring for SenpiWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        agent_dir(env).is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        vec![Edit::json_member(agent_dir(cx.env).join("mcp.json"), &["mcpServers", "deja"], cx.mcp_entry(false)), shared_skill(cx)]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        vec![Edit::owned_file(agent_dir(cx.env).join("extensions/deja.ts"), pi_extension::text(cx, "senpi-auto"))]
    }

    fn notes(&self) -> &'static [&'static str] {
        &["remove a leftover `deja-history` skill under Senpi's own `skills/` (Senpi reports a name collision)"]
    }
}

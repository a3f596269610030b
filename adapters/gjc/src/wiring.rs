//! gjc's wiring (its page, "Wiring"), under `<agent>` = `${GJC_CODING_AGENT_DIR:-~/.gjc/agent}`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `gjc` | `<agent>/mcp.json` | `mcpServers.deja` = `<exe> mcp` (tool `mcp__deja_deja`) |
//! | `gjc` | `<agent>/skills/deja-history/SKILL.md` | the skill (gjc ignores `~/.agents/skills`) |
//! | `gjc` | `<agent>/commands/deja.md` | `/deja` (`$ARGUMENTS`) |
//! | `gjc-auto` | `<agent>/extensions/deja.ts` | pi's extension unchanged ([`deja_core::wire::pi_extension`]) |
//!
//! gjc's directory hooks (`<agent>/hooks/<pre|post>`) can only block, not add context,
//! so they are not used.

use std::path::PathBuf;

use deja_core::wire::{command_markdown, pi_extension, skill_text, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct GjcWiring;

/// `${GJC_CODING_AGENT_DIR:-~/.gjc/agent}`.
fn agent_dir(env: &StoreEnv) -> PathBuf {
    crate::INFO.store.dir_of(env, "GJC_CODING_AGENT_DIR")
}

impl Wiring for GjcWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        agent_dir(env).is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let agent = agent_dir(cx.env);
        vec![
            Edit::json_member(agent.join("mcp.json"), &["mcpServers", "deja"], cx.mcp_entry(false)),
            Edit::owned_file(agent.join("skills/deja-history/SKILL.md"), skill_text(cx)),
            Edit::owned_file(agent.join("commands/deja.md"), command_markdown(cx, false)),
        ]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        vec![Edit::owned_file(agent_dir(cx.env).join("extensions/deja.ts"), pi_extension::text(cx, "gjc-auto"))]
    }

    fn notes(&self) -> &'static [&'static str] {
        &["restart gjc; the tool appears as `mcp__deja_deja`"]
    }
}

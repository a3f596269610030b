//! Kimchi's wiring (its page, "Wiring"), under `<harness>` = `~/.config/kimchi/harness`
//! (always there: Kimchi sets `KIMCHI_CODING_AGENT_DIR` itself and never reads
//! `XDG_CONFIG_HOME`, so neither is followed):
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `kimchi` | `<harness>/mcp.json` | `mcpServers.deja` = `<exe> mcp` |
//! | `kimchi` | `<harness>/skills/deja-history/SKILL.md` | the skill (offered when config `skillPaths` includes it; Kimchi does not list `~/.agents/skills`) |
//! | `kimchi-auto` | `<harness>/extensions/deja.ts` | pi's extension ([`deja_core::wire::pi_extension`]), which also registers `/deja` |

use std::path::PathBuf;

use deja_core::wire::{pi_extension, skill_text, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct KimchiWiring;

/// `~/.config/kimchi/harness`.
fn harness_dir(env: &StoreEnv) -> PathBuf {
    env.home().join(".config/kimchi/harness")
}

impl Wiring for KimchiWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        env.home().join(".config/kimchi").is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let dir = harness_dir(cx.env);
        vec![
            Edit::json_member(dir.join("mcp.json"), &["mcpServers", "deja"], cx.mcp_entry(false)),
            Edit::owned_file(dir.join("skills/deja-history/SKILL.md"), skill_text(cx)),
        ]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        vec![Edit::owned_file(harness_dir(cx.env).join("extensions/deja.ts"), pi_extension::text(cx, "kimchi-auto"))]
    }

    fn notes(&self) -> &'static [&'static str] {
        &[
            "the skill is offered when `skillPaths` in Kimchi's config includes `.config/kimchi/harness/skills` (first-run setup writes that)",
            "kimchi-auto: keep Kimchi's `extensions.claude-code-hook-adapter` off, or deja's recall arrives twice",
        ]
    }
}

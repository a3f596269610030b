//! ZCode's wiring (its page, "Wiring"), under `~/.zcode`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `zcode` | `~/.zcode/cli/setting.json` | `mcp.servers.deja` = `<exe> mcp` (nested, not `mcpServers`) |
//! | `zcode` | `~/.agents/skills/deja-history/SKILL.md` | the shared skill (scanned after `~/.zcode/skills`) |
//! | `zcode` | `~/.zcode/commands/deja.md` | `/deja` (`$ARGUMENTS`) |
//!
//! Not done from the page: seeding `setting.json` from `config.json` before the first
//! launch (the runtime's one-time migration; the engine edits one file, it does not
//! copy another into it — so before ZCode's first launch the user should start it
//! once, then install), and `zcode-auto`: the page names `hooks.events`, the events, the
//! matchers, `hooks.enabled: true` and a `--strict` reply ("one unknown key discards the
//! response"), but not the shape of an entry under `hooks.events` nor which keys the strict
//! schema accepts, so the capability reads unknown rather than an invented shape.

use std::path::PathBuf;

use deja_core::wire::{command_markdown, shared_skill, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct ZcodeWiring;

/// `~/.zcode`.
fn zcode_dir(env: &StoreEnv) -> PathBuf {
    env.home().join(".zcode")
}

impl Wiring for ZcodeWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        zcode_dir(env).is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let dir = zcode_dir(cx.env);
        vec![
            Edit::json_member(dir.join("cli/setting.json"), &["mcp", "servers", "deja"], cx.mcp_entry(false)),
            shared_skill(cx),
            Edit::owned_file(dir.join("commands/deja.md"), command_markdown(cx, false)),
        ]
    }

    fn notes(&self) -> &'static [&'static str] {
        &["ZCode reads `~/.zcode/cli/setting.json` once it has run; if it has never started, start it once (it migrates `config.json`) and install again"]
    }
}

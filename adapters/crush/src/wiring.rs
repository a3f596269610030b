//! Crush's wiring (its page, "Wiring"):
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `crush` | `~/.agents/skills/deja-history/SKILL.md` | the shared skill (appears in `<available_skills>`) |
//! | `crush` | `${XDG_CONFIG_HOME:-~/.config}/crush/commands/deja.md` | `/user:deja` (`$ARGUMENTS`; expansion unverified on the page) |
//!
//! Not done from the page: the MCP entry (`crush.json`'s `mcp` key is given, the entry's
//! shape is "unknown in material"), and `crush-auto`: the page gives the hook's event
//! (`PreToolUse`), matcher and reply — the reply is `deja hook-tool --crush` — but not
//! where in which file the hook is declared.

use std::path::PathBuf;

use deja_core::wire::{command_markdown, shared_skill, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct CrushWiring;

/// `${XDG_CONFIG_HOME:-~/.config}/crush`.
fn config_dir(env: &StoreEnv) -> PathBuf {
    env.xdg_config_home().join("crush")
}

impl Wiring for CrushWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        config_dir(env).is_dir() || env.xdg_data_home().join("crush").is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        vec![shared_skill(cx), Edit::owned_file(config_dir(cx.env).join("commands/deja.md"), command_markdown(cx, false))]
    }
}

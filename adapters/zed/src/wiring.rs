//! Zed's wiring (its page, "Wiring"): the user settings `settings.json` in the config
//! dir — `${XDG_CONFIG_HOME:-~/.config}/zed/settings.json` on macOS and Linux,
//! `%APPDATA%\Zed\settings.json` on Windows; `DEJA_ZED_CONFIG` overrides (a `.json`
//! file, or a directory holding `settings.json`):
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `zed` | `settings.json` (JSONC) | `context_servers.deja = {"command": "<exe>", "args": ["mcp"]}` |
//! | `zed` | `~/.agents/skills/deja-history/SKILL.md` | the shared skill (Zed's Agent Skills), also the slash command: `/` in the agent panel lists skills by their frontmatter name |
//!
//! No auto target: Zed's agent has no lifecycle hook, nothing runs before a prompt.

use std::path::PathBuf;

use deja_core::wire::{shared_skill, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct ZedWiring;

/// Zed's user `settings.json`.
fn settings(env: &StoreEnv) -> PathBuf {
    if let Some(p) = env.path_var("DEJA_ZED_CONFIG") {
        return if p.extension().is_some_and(|e| e == "json") { p } else { p.join("settings.json") };
    }
    if cfg!(windows) {
        if let Some(appdata) = env.path_var("APPDATA") {
            return appdata.join("Zed/settings.json");
        }
    }
    env.xdg_config_home().join("zed/settings.json")
}

impl Wiring for ZedWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        settings(env).parent().is_some_and(|d| d.is_dir())
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        vec![Edit::json_member(settings(cx.env), &["context_servers", "deja"], cx.mcp_entry(false)), shared_skill(cx)]
    }

    fn notes(&self) -> &'static [&'static str] {
        &["Zed reloads its settings itself; the agent panel's server list should show `deja` with a green dot"]
    }
}

//! Amp's wiring (its page, "Wiring"; the entry shape is what `amp mcp add` writes, seen
//! on Amp 0.0.1790142911):
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `amp` | `$AMP_SETTINGS_FILE`, else `${XDG_CONFIG_HOME:-~/.config}/amp/settings.json` | `"amp.mcpServers".deja` = `{"command": "<exe>", "args": ["mcp"]}` (the dotted name is one key of the top-level object) |
//!
//! Not done from the page: `amp-auto`, a plugin on `@ampcode/plugin` "written into
//! Amp's config dir (system plugins live next to `settings.json`; exact file name
//! unknown)"; the skill and slash command ("file locations unknown in the material").

use std::path::PathBuf;

use deja_core::wire::{Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct AmpWiring;

/// Amp's settings file: `$AMP_SETTINGS_FILE` (Amp honours it), else
/// `${XDG_CONFIG_HOME:-~/.config}/amp/settings.json` (also on macOS).
fn settings(env: &StoreEnv) -> PathBuf {
    env.path_var("AMP_SETTINGS_FILE").unwrap_or_else(|| env.xdg_config_home().join("amp/settings.json"))
}

impl Wiring for AmpWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        settings(env).is_file() || env.xdg_config_home().join("amp").is_dir() || crate::INFO.store.present(crate::ID, env)
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        vec![Edit::json_member(settings(cx.env), &["amp.mcpServers", "deja"], cx.mcp_entry(false))]
    }

    fn notes(&self) -> &'static [&'static str] {
        &["Amp starts its MCP servers with each new thread: `amp mcp doctor` shows deja's status"]
    }
}

//! Factory droid's wiring (its page, "Wiring"), under `<home>` =
//! `${FACTORY_HOME_OVERRIDE:-~}/.factory`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `factory` | `<home>/mcp.json` | `mcpServers.deja` = `{"type": "stdio", "command": <exe>, "args": ["mcp"], "disabled": false}` (what `droid mcp add deja <exe> mcp` writes) |
//!
//! Skills, slash commands and hooks are unknown on the page, so the plain target is the
//! MCP server alone and there is no `factory-auto`.

use std::path::PathBuf;

use deja_core::wire::{json, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct FactoryWiring;

/// `${FACTORY_HOME_OVERRIDE:-~}/.factory`: the variable replaces the home directory
/// droid looks for `.factory` in.
fn factory_dir(env: &StoreEnv) -> PathBuf {
    crate::INFO.store.dir_of(env, "FACTORY_HOME_OVERRIDE").join(".factory")
}

impl Wiring for FactoryWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        factory_dir(env).is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let entry = json!({"type": "stdio", "command": cx.exe(), "args": ["mcp"], "disabled": false});
        vec![Edit::json_member(factory_dir(cx.env).join("mcp.json"), &["mcpServers", "deja"], entry)]
    }

    fn notes(&self) -> &'static [&'static str] {
        &["restart droid; `droid mcp list` starts each server and should show `deja  stdio  connected`"]
    }
}

//! JetBrains AI Assistant's wiring (its page, "Wiring"):
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `jetbrains` | `~/.ai/mcp/mcp.json` | `mcpServers.deja` = `{"command": <exe>, "args": ["mcp"]}`, the global file every JetBrains IDE's AI Assistant reads |
//!
//! Nothing else: the plugin has no hook runner, custom commands and rules come only
//! from a project's `.aiassistant/`, and where it reads skills is unknown.

use deja_core::wire::{Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct JetBrainsWiring;

impl Wiring for JetBrainsWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        env.home().join(".ai").is_dir()
            || env.xdg_config_home().join("JetBrains").is_dir()
            || env.home().join("Library/Application Support/JetBrains").is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        vec![Edit::json_member(cx.env.home().join(".ai/mcp/mcp.json"), &["mcpServers", "deja"], cx.mcp_entry(false))]
    }

    fn notes(&self) -> &'static [&'static str] {
        &["restart the IDE; AI Assistant's MCP settings list deja"]
    }
}

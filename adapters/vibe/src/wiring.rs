//! Mistral Vibe's wiring (its page, "Wiring"), under `${VIBE_HOME:-~/.vibe}`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `vibe` | `config.toml` | one `[[mcp_servers]]` entry: `name = "deja"`, `transport = "stdio"`, `command = "<exe>"`, `args = ["mcp"]` (what `vibe mcp add` appends) |
//!
//! deja's entry is recognised by its name and its `mcp` argument, so one naming an
//! older binary is adopted. Skills, slash commands and hooks are unknown on the page;
//! Vibe has no MCP listing, only a turn shows the server loading: on 3.0.2 the system
//! prompt lists `mcp_deja` among its searchable connector groups.

use std::path::PathBuf;

use deja_core::wire::{toml, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct VibeWiring;

/// `${VIBE_HOME:-~/.vibe}`.
fn vibe_home(env: &StoreEnv) -> PathBuf {
    crate::INFO.store.dir_of(env, "VIBE_HOME")
}

impl Wiring for VibeWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        vibe_home(env).is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let body = format!("name = \"deja\"\ntransport = \"stdio\"\ncommand = {}\nargs = [\"mcp\"]\n", toml::quote(&cx.exe()));
        vec![Edit::toml_array_item(vibe_home(cx.env).join("config.toml"), &["mcp_servers"], &["\"deja\"", "\"mcp\""], body)]
    }

    fn notes(&self) -> &'static [&'static str] {
        &["Vibe has no MCP listing: in a session, `mcp_deja` is among the searchable connector groups"]
    }
}

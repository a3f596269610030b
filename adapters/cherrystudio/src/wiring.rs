//! Cherry Studio's wiring (its page, "Wiring"). The app keeps MCP servers in its own
//! SQLite, so there is no config of its to edit:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `cherrystudio` | `${XDG_CONFIG_HOME:-~/.config}/deja/cherrystudio-mcp.json` | an import file, `{"mcpServers": {"deja": {"type": "stdio", "command": "<exe>", "args": ["mcp"]}}}` — only keys the app's strict import schema accepts |
//! | `cherrystudio` | `~/.agents/skills/deja-history/SKILL.md` | the shared skill (one of the agent-CLI skill roots the app discovers) |
//!
//! The user imports the file once (Settings → MCP → Import from JSON) and enables the
//! skill per agent. No slash command (the app's are its own); auto-recall's mechanism
//! is unknown on the page.

use deja_core::wire::{json, shared_skill, to_pretty, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct CherrystudioWiring;

impl Wiring for CherrystudioWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::Skill]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        ["CherryStudio", "Cherry Studio", "cherrystudio"].iter().any(|d| env.xdg_config_home().join(d).is_dir())
            || env.home().join(".cherrystudio").is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let import = json!({"mcpServers": {"deja": cx.mcp_entry(true)}});
        vec![
            Edit::owned_file(cx.env.xdg_config_home().join("deja/cherrystudio-mcp.json"), format!("{}\n", to_pretty(&import))),
            shared_skill(cx),
        ]
    }

    fn notes(&self) -> &'static [&'static str] {
        &[
            "in Cherry Studio: Settings → MCP → Import from JSON, and pick `~/.config/deja/cherrystudio-mcp.json`",
            "enable the `deja-history` skill for each agent that should use it",
        ]
    }
}

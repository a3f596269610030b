//! Copilot CLI's wiring (its page, "Wiring"), under `<home>` = `${COPILOT_HOME:-~/.copilot}`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `copilot` | `<home>/mcp-config.json` | `mcpServers.deja` = `{"type": "local", "command": <exe>, "args": ["mcp"], "tools": ["*"]}` |
//! | `copilot` | `<home>/skills/deja-history/SKILL.md` | the skill, loaded on demand; also the slash command `/deja-history` |
//!
//! No `copilot-auto`: Copilot runs hooks but the context they return never reaches the
//! model.

use std::path::PathBuf;

use deja_core::wire::{json, skill_text, Edit, Surface, WireContext, Wiring, SKILL_NAME};
use deja_core::StoreEnv;

pub struct CopilotWiring;

/// `${COPILOT_HOME:-~/.copilot}`, as the store spec places it.
fn copilot_home(env: &StoreEnv) -> PathBuf {
    crate::INFO.store.dir_of(env, "COPILOT_HOME")
}

impl Wiring for CopilotWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        copilot_home(env).is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let home = copilot_home(cx.env);
        let entry = json!({"type": "local", "command": cx.exe(), "args": ["mcp"], "tools": ["*"]});
        vec![
            Edit::json_member(home.join("mcp-config.json"), &["mcpServers", "deja"], entry),
            Edit::owned_file(home.join("skills").join(SKILL_NAME).join("SKILL.md"), skill_text(cx)),
        ]
    }

    fn notes(&self) -> &'static [&'static str] {
        &["restart Copilot CLI; `copilot mcp list` lists deja (it only reads the file), and a turn offers the tool as `deja-deja`"]
    }
}

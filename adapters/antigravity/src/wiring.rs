//! Antigravity's wiring (its page, "Wiring"), under `~/.gemini/config`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `antigravity` | `mcp_config.json` | `mcpServers.deja` = `{"command": <exe>, "args": ["mcp"]}` |
//! | `antigravity` | `plugins/deja/plugin.json` | `{"name": "deja"}`: without it the plugin directory, skill included, is ignored |
//! | `antigravity` | `plugins/deja/skills/deja-history/SKILL.md` | the skill (Antigravity turns plugin skills into slash commands) |
//! | `antigravity-auto` | `plugins/deja/hooks.json` | named hook `deja-recall`: `PreInvocation` → `hook-session-start --antigravity`, `timeout` in seconds |
//!
//! `PreInvocation` runs before every model call, with the plugin folder as its cwd; the
//! `--antigravity` envelope answers on the first invocation only, about
//! `workspacePaths[0]`, as `{"injectSteps": [{"ephemeralMessage": …}]}`.

use std::path::PathBuf;

use deja_core::wire::{json, skill_text, to_pretty, Edit, Surface, WireContext, Wiring, SKILL_NAME};
use deja_core::StoreEnv;

pub struct AntigravityWiring;

fn config_dir(env: &StoreEnv) -> PathBuf {
    env.home().join(".gemini/config")
}

fn plugin_dir(env: &StoreEnv) -> PathBuf {
    config_dir(env).join("plugins/deja")
}

impl Wiring for AntigravityWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        config_dir(env).is_dir() || crate::INFO.store.present(crate::ID, env)
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let plugin = plugin_dir(cx.env);
        vec![
            Edit::json_member(config_dir(cx.env).join("mcp_config.json"), &["mcpServers", "deja"], cx.mcp_entry(false)),
            Edit::owned_file(plugin.join("plugin.json"), format!("{}\n", to_pretty(&json!({"name": "deja"})))),
            Edit::owned_file(plugin.join("skills").join(SKILL_NAME).join("SKILL.md"), skill_text(cx)),
        ]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        let command = format!("\"{}\" hook-session-start --antigravity", cx.exe().replace('\\', "\\\\").replace('"', "\\\""));
        let hooks = json!({"deja-recall": {"PreInvocation": [{"type": "command", "command": command, "timeout": 10}]}});
        vec![Edit::owned_file(plugin_dir(cx.env).join("hooks.json"), format!("{}\n", to_pretty(&hooks)))]
    }

    fn envelope(&self) -> Option<&'static dyn deja_core::wire::hook::HookEnvelope> {
        Some(&crate::hook::AntigravityEnvelope)
    }

    fn notes(&self) -> &'static [&'static str] {
        &["restart Antigravity; `agy plugin validate` should report the deja plugin with `skills: 1 processed`"]
    }
}

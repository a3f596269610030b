//! Cline's wiring (its page, "Wiring"), with `<data>` = `$CLINE_DATA_DIR`, else
//! `$CLINE_DIR/data`, else `~/.cline/data`, and `<cline>` = `${CLINE_DIR:-~/.cline}`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `cline` | `${CLINE_MCP_SETTINGS_PATH:-<data>/settings/cline_mcp_settings.json}` | `mcpServers.deja` = `{"command": <exe>, "args": ["mcp"]}` |
//! | `cline-auto` | `<cline>/plugins/deja/index.js` | the plugin: a message builder prepending `hook-prompt --plain` recall to the last user message, a rule resolved from `hook-session-start --plain`, the `/deja` command |
//! | `cline-auto` | `<cline>/plugins/deja/skills/deja-history/SKILL.md` | the skill, inside the plugin (Cline has no user-level instructions file) |
//!
//! Cline's own hooks cannot carry context (TaskStart and UserPromptSubmit run detached
//! with stdout closed, PreToolUse keeps only cancel/overrideInput), so auto-recall is the
//! plugin. The message builder returns a new array: an edit in place, a string or a
//! `{messages}` wrapper is discarded.

use std::path::PathBuf;

use deja_core::wire::{skill_text, Edit, Surface, WireContext, Wiring, SKILL_NAME};
use deja_core::StoreEnv;

pub struct ClineWiring;

/// The plugin's source, with `__DEJA_EXE__` standing for the binary as a JS string.
const PLUGIN: &str = include_str!("plugin.js");

/// `${CLINE_DIR:-~/.cline}`: plugins sit beside the data directory.
fn cline_dir(env: &StoreEnv) -> PathBuf {
    env.path_var("CLINE_DIR").unwrap_or_else(|| env.home().join(".cline"))
}

fn mcp_settings(env: &StoreEnv) -> PathBuf {
    env.path_var("CLINE_MCP_SETTINGS_PATH").unwrap_or_else(|| super::data_dir(env).join("settings/cline_mcp_settings.json"))
}

fn plugin_source(cx: &WireContext) -> String {
    // A JSON string is a JS string literal.
    PLUGIN.replace("__DEJA_EXE__", &serde_json::Value::from(cx.exe()).to_string())
}

impl Wiring for ClineWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        cline_dir(env).is_dir() || super::data_dir(env).is_dir() || mcp_settings(env).is_file()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        vec![Edit::json_member(mcp_settings(cx.env), &["mcpServers", "deja"], cx.mcp_entry(false))]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        let plugin = cline_dir(cx.env).join("plugins/deja");
        vec![
            Edit::owned_file(plugin.join("index.js"), plugin_source(cx)),
            Edit::owned_file(plugin.join("skills").join(SKILL_NAME).join("SKILL.md"), skill_text(cx)),
        ]
    }

    fn notes(&self) -> &'static [&'static str] {
        &["restart Cline; the skill and `/deja` come with `cline-auto` (the plugin), which Cline loads at session start"]
    }
}

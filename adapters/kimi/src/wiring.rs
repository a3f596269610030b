//! Kimi's wiring (its page, "Wiring"), under `<code>` = `${KIMI_CODE_HOME:-~/.kimi-code}`
//! (Kimi Code) and `<share>` = `${KIMI_SHARE_DIR:-~/.kimi}` (the legacy Kimi CLI):
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `kimi` | `<code>/mcp.json` | `mcpServers.deja` = `{"command": <exe>, "args": ["mcp"]}` (Kimi Code) |
//! | `kimi` | `<share>/mcp.json` | the same entry for the legacy CLI, which never reads `<code>` |
//! | `kimi` | `~/.agents/skills/deja-history/SKILL.md` | the shared skill (also `/skill:deja-history`) |
//! | `kimi-auto` | `<code>/config.toml` | a `[[hooks]]` table: `UserPromptSubmit` → `hook-prompt --plain`, `timeout` in seconds |
//!
//! Kimi injects a hook's plain stdout, and only `UserPromptSubmit` output reaches the
//! model (a `SessionStart` hook's goes nowhere). deja's `[[hooks]]` entry is recognised
//! by its command, so the marker comment the page shows above it is not needed to find
//! it again (the TOML splice writes no comment). The legacy CLI's `<share>/config.toml`
//! takes the same tables and kimi-cli 1.51.0 runs them, but in a `--print` turn against
//! a mock model their stdout never reached the request, so `kimi-auto` leaves it alone.

use std::path::PathBuf;

use deja_core::wire::{shared_skill, toml, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct KimiWiring;

/// `${KIMI_CODE_HOME:-~/.kimi-code}`.
fn code_home(env: &StoreEnv) -> PathBuf {
    crate::INFO.store.dir_of(env, "KIMI_CODE_HOME")
}

/// `${KIMI_SHARE_DIR:-~/.kimi}`.
fn share_dir(env: &StoreEnv) -> PathBuf {
    crate::INFO.store.dir_of(env, "KIMI_SHARE_DIR")
}

impl Wiring for KimiWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        code_home(env).is_dir() || share_dir(env).is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        vec![
            Edit::json_member(code_home(cx.env).join("mcp.json"), &["mcpServers", "deja"], cx.mcp_entry(false)),
            Edit::json_member(share_dir(cx.env).join("mcp.json"), &["mcpServers", "deja"], cx.mcp_entry(false)),
            shared_skill(cx),
        ]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        let body =
            format!("event = \"UserPromptSubmit\"\ncommand = {}\ntimeout = 30\n", toml::quote(&cx.hook_command("hook-prompt --plain")));
        vec![Edit::toml_array_item(code_home(cx.env).join("config.toml"), &["hooks"], &["deja", " hook-prompt"], body)]
    }

    fn notes(&self) -> &'static [&'static str] {
        &["restart Kimi; `kimi mcp test deja` should print `✓ Connected to 'deja'` (legacy Kimi CLI: `kimi mcp list` names the file it reads)"]
    }
}

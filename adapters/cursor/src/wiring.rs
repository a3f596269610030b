//! Cursor's wiring (its page, "Wiring"), under `<dir>` = `${CURSOR_CONFIG_DIR:-~/.cursor}`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `cursor` | `<dir>/mcp.json` | `mcpServers.deja` = `{"command": <exe>, "args": ["mcp"]}` |
//! | `cursor` | `~/.agents/skills/deja-history/SKILL.md` | the shared skill |
//! | `cursor` | `<dir>/commands/deja.md` | `/deja` |
//! | `cursor-auto` | `<dir>/hooks.json` | `version: 1`; flat `{"command": …}` entries: `sessionStart` → `hook-session-start`, `beforeSubmitPrompt` → `hook-prompt` |
//!
//! Cursor accepts Claude's `hookSpecificOutput` reply, so the hooks answer in the default
//! envelope. It also runs the hooks in `~/.claude/settings.json` and de-duplicates by the
//! exact command string: the commands here are the ones `claude-auto` writes, so a
//! machine wired for both injects once. `beforeSubmitPrompt` fires only in the
//! interactive TUI, not under `-p`.

use std::path::PathBuf;

use deja_core::wire::{command_markdown, json, shared_skill, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct CursorWiring;

/// `${CURSOR_CONFIG_DIR:-~/.cursor}`.
fn config_dir(env: &StoreEnv) -> PathBuf {
    crate::INFO.store.dir_of(env, "CURSOR_CONFIG_DIR")
}

impl Wiring for CursorWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        config_dir(env).is_dir() || crate::INFO.store.present(crate::ID, env)
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let dir = config_dir(cx.env);
        vec![
            Edit::json_member(dir.join("mcp.json"), &["mcpServers", "deja"], cx.mcp_entry(false)),
            shared_skill(cx),
            Edit::owned_file(dir.join("commands/deja.md"), command_markdown(cx, false)),
        ]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        let hooks = config_dir(cx.env).join("hooks.json");
        let hook = |event: &str, sub: &str| {
            Edit::json_array_item(&hooks, &["hooks", event], &["deja", &format!(" {sub}")], json!({"command": cx.hook_command(sub)}))
        };
        vec![
            Edit::json_member(&hooks, &["version"], json!(1)),
            hook("sessionStart", "hook-session-start"),
            hook("beforeSubmitPrompt", "hook-prompt"),
        ]
    }

    fn notes(&self) -> &'static [&'static str] {
        &["restart Cursor; `cursor-agent mcp list` should show deja; `beforeSubmitPrompt` runs only in the interactive TUI, not under `-p`"]
    }
}

//! Crush's wiring (its page, "Wiring"; the entry and hook shapes read from Crush's
//! `internal/config/config.go` and `docs/hooks/README.md`):
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `crush` | `<config>/crush.json` | `mcp.deja` = `{"type": "stdio", "command": "<exe>", "args": ["mcp"]}` (`type` is required by Crush's schema); the tool arrives as `mcp_deja_deja` |
//! | `crush` | `~/.agents/skills/deja-history/SKILL.md` | the shared skill (appears in `<available_skills>`) |
//! | `crush` | `${XDG_CONFIG_HOME:-~/.config}/crush/commands/deja.md` | `/user:deja` (`$ARGUMENTS`; expansion unverified on the page) |
//! | `crush-auto` | `<config>/crush.json` | one `hooks.PreToolUse` entry `{name, matcher: "^(bash\|edit\|write\|multiedit)$", command: "<exe> hook-tool --crush", timeout}` |
//!
//! `<config>` is `$CRUSH_GLOBAL_CONFIG` when set (Crush's `GlobalConfig()`), else
//! `${XDG_CONFIG_HOME:-~/.config}/crush`; the commands directory does not move with it.
//! The hook answers Crush's flat `{"version": 1, "context": …}` and never a
//! `decision` (an `allow` would pre-approve the call and skip the permission prompt);
//! Crush appends the context to the tool result. Not done from the page: the digest,
//! prompt recall and failure fixes the page has this one hook compute from `crush.db`
//! and ride the next tool call — the hook answers the file's or command's history.

use std::path::PathBuf;

use deja_core::wire::{command_markdown, json, shared_skill, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct CrushWiring;

/// `${XDG_CONFIG_HOME:-~/.config}/crush`: the commands directory.
fn config_dir(env: &StoreEnv) -> PathBuf {
    env.xdg_config_home().join("crush")
}

/// The global `crush.json`: `$CRUSH_GLOBAL_CONFIG/crush.json`, else in the config dir.
fn crush_json(env: &StoreEnv) -> PathBuf {
    env.path_var("CRUSH_GLOBAL_CONFIG").unwrap_or_else(|| config_dir(env)).join("crush.json")
}

impl Wiring for CrushWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        config_dir(env).is_dir() || crush_json(env).is_file() || env.xdg_data_home().join("crush").is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        vec![
            Edit::json_member(crush_json(cx.env), &["mcp", "deja"], cx.mcp_entry(true)),
            shared_skill(cx),
            Edit::owned_file(config_dir(cx.env).join("commands/deja.md"), command_markdown(cx, false)),
        ]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        let entry = json!({
            "name": "deja",
            "matcher": "^(bash|edit|write|multiedit)$",
            "command": cx.hook_command("hook-tool --crush"),
            "timeout": 10,
        });
        vec![Edit::json_array_item(crush_json(cx.env), &["hooks", "PreToolUse"], &["deja", " hook-tool"], entry)]
    }

    fn envelope(&self) -> Option<&'static dyn deja_core::wire::hook::HookEnvelope> {
        Some(&crate::hook::CrushEnvelope)
    }

    fn notes(&self) -> &'static [&'static str] {
        &["Crush reads crush.json at start-up: restart crush; `/user:deja` and the hook (crush-auto) apply from then on"]
    }
}

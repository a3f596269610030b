//! Command Code's wiring (its page, "Wiring"), all user-scoped under `~/.commandcode`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `commandcode` | `mcp.json` | `mcpServers.deja` = `{"type": "stdio", "command": <exe>, "args": ["mcp"]}` (the user scope of `cmd mcp add`) |
//! | `commandcode` | `skills/deja-history/SKILL.md` | the skill |
//! | `commandcode` | `commands/deja.md` | `/deja` |
//! | `commandcode-auto` | `settings.json` | Claude-shaped hooks, `timeout` in seconds: `SessionStart` (no matcher, or it never fires) → `hook-session-start`, `PreToolUse` on `SHELL\|EDIT\|WRITE` → `hook-tool` |
//!
//! The page leaves the `mcp.json` shape open; command-code 1.64.0's own code reads
//! `mcpServers` there and takes `type` as an alias of `transport`. Its matchers are
//! case-insensitive regexes over the tools' display names (`SHELL`, `EDIT`, …), not
//! Claude's tool names. The per-question recall the page puts in a `mods/deja.ts`
//! (`transformContext`) is not written: the page does not give the mod API's shape.

use std::path::PathBuf;

use deja_core::wire::{command_markdown, json, skill_text, Edit, Surface, WireContext, Wiring, SKILL_NAME};
use deja_core::StoreEnv;

pub struct CommandCodeWiring;

fn cc_dir(env: &StoreEnv) -> PathBuf {
    env.home().join(".commandcode")
}

impl Wiring for CommandCodeWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        cc_dir(env).is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let dir = cc_dir(cx.env);
        vec![
            Edit::json_member(dir.join("mcp.json"), &["mcpServers", "deja"], cx.mcp_entry(true)),
            Edit::owned_file(dir.join("skills").join(SKILL_NAME).join("SKILL.md"), skill_text(cx)),
            Edit::owned_file(dir.join("commands/deja.md"), command_markdown(cx, false)),
        ]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        let settings = cc_dir(cx.env).join("settings.json");
        vec![
            cx.claude_hook(&settings, "SessionStart", None, "hook-session-start", json!({"timeout": 10})),
            cx.claude_hook(&settings, "PreToolUse", Some("SHELL|EDIT|WRITE"), "hook-tool", json!({"timeout": 10})),
        ]
    }

    fn notes(&self) -> &'static [&'static str] {
        &["restart Command Code; `cmd mcp list` should list deja"]
    }
}

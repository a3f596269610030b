//! Qwen Code's wiring (its page, "Wiring"), under `${QWEN_HOME:-~/.qwen}`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `qwen` | `settings.json` | `mcpServers.deja` = `<exe> mcp` |
//! | `qwen` | `~/.agents/skills/deja-history/SKILL.md` | the shared skill, listed under `/skills` and run as `/deja-history <words>` (Qwen loads skills as slash commands) |
//! | `qwen-auto` | `settings.json` | `hooks.UserPromptSubmit` → `hook-prompt` (timeout in ms; SessionStart context is never consumed) |

use std::path::PathBuf;

use deja_core::wire::{json, shared_skill, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct QwenWiring;

fn qwen_home(env: &StoreEnv) -> PathBuf {
    crate::INFO.store.dir_of(env, "QWEN_HOME")
}

impl Wiring for QwenWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        qwen_home(env).is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        vec![Edit::json_member(qwen_home(cx.env).join("settings.json"), &["mcpServers", "deja"], cx.mcp_entry(false)), shared_skill(cx)]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        let settings = qwen_home(cx.env).join("settings.json");
        vec![cx.claude_hook(
            &settings,
            "UserPromptSubmit",
            None,
            "hook-prompt --digest",
            json!({"timeout": 60000, "statusMessage": "Searching past sessions…"}),
        )]
    }
}

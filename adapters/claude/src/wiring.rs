//! Claude Code's wiring (its page, "Wiring"):
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `claude` | `${CLAUDE_CONFIG_DIR:-~}/.claude.json` | `mcpServers.deja` = stdio `<exe> mcp` |
//! | `claude` | `${CLAUDE_CONFIG_DIR:-~/.claude}/skills/deja-history/SKILL.md` | the skill (Claude does not read `~/.agents/skills`) |
//! | `claude-auto` | `${CLAUDE_CONFIG_DIR:-~/.claude}/settings.json` | hooks `SessionStart`, `UserPromptSubmit`, `PreToolUse`, `PreCompact` |
//! | `claude-auto` | `${CLAUDE_CONFIG_DIR:-~/.claude}/commands/deja.md` | `/deja` |
//!
//! Claude rewrites `.claude.json` on every start; the engine then removes deja's
//! member from the file as Claude left it.

use std::path::PathBuf;

use deja_core::wire::{command_markdown, json, skill_text, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct ClaudeWiring;

/// `${CLAUDE_CONFIG_DIR:-~/.claude}`.
fn config_dir(env: &StoreEnv) -> PathBuf {
    crate::INFO.store.dir_of(env, "CLAUDE_CONFIG_DIR")
}

/// `.claude.json`: inside `CLAUDE_CONFIG_DIR` when set, else in the home directory.
fn claude_json(env: &StoreEnv) -> PathBuf {
    env.path_var("CLAUDE_CONFIG_DIR").unwrap_or_else(|| env.home().to_path_buf()).join(".claude.json")
}

impl Wiring for ClaudeWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        config_dir(env).is_dir() || claude_json(env).is_file()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        vec![
            Edit::json_member(claude_json(cx.env), &["mcpServers", "deja"], cx.mcp_entry(true)),
            Edit::owned_file(config_dir(cx.env).join("skills/deja-history/SKILL.md"), skill_text(cx)),
        ]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        let settings = config_dir(cx.env).join("settings.json");
        vec![
            cx.claude_hook(&settings, "SessionStart", None, "hook-session-start", json!({"statusMessage": "Recalling past sessions…"})),
            cx.claude_hook(&settings, "UserPromptSubmit", None, "hook-prompt", json!({"statusMessage": "Searching past sessions…"})),
            cx.claude_hook(
                &settings,
                "PreToolUse",
                Some("Bash|Edit|Write|MultiEdit|NotebookEdit"),
                "hook-tool",
                json!({"statusMessage": "Checking what this touches…"}),
            ),
            cx.claude_hook(
                &settings,
                "PreCompact",
                Some("manual|auto"),
                "hook-precompact",
                json!({"statusMessage": "Saving this session to memory…"}),
            ),
            Edit::owned_file(config_dir(cx.env).join("commands/deja.md"), command_markdown(cx, true)),
        ]
    }

    fn notes(&self) -> &'static [&'static str] {
        &["restart Claude Code; `claude mcp list` should show `deja: … - ✔ Connected`"]
    }
}

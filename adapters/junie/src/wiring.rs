//! Junie's wiring (its page, "Wiring"), under `<home>` = `${JUNIE_HOME:-~/.junie}`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `junie` | `<home>/mcp/mcp.json` | `mcpServers.deja` = `{"command": <exe>, "args": ["mcp"]}` (offered as `mcp_deja_deja` when Junie's pre-pass picks it) |
//! | `junie` | `~/.agents/skills/deja-history/SKILL.md` | the shared skill, read beside Junie's own `skills/` |
//! | `junie` | `<home>/commands/deja.md` | `/deja` |
//! | `junie-auto` | `<home>/config.json` | Claude-schema hooks: `UserPromptSubmit` → `hook-prompt --digest`, `PreToolUse` on `Bash\|Read\|Edit` → `hook-tool` |
//!
//! Junie delivers no `SessionStart` output, so the session digest rides the first
//! prompt: the page's `hook-session-start --once` plus `hook-prompt` is one
//! `hook-prompt --digest`, which adds the digest to a session's first prompt only.
//! `Stop` is not wired (any output keeps the task from finishing); `SessionEnd` has no
//! deja subcommand; Junie has no `PostToolUse` or `PreCompact` event.

use std::path::PathBuf;

use deja_core::wire::{command_markdown, json, shared_skill, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct JunieWiring;

/// `${JUNIE_HOME:-~/.junie}`, as the store spec places it.
fn junie_home(env: &StoreEnv) -> PathBuf {
    crate::INFO.store.dir_of(env, "JUNIE_HOME")
}

impl Wiring for JunieWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        junie_home(env).is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let home = junie_home(cx.env);
        vec![
            Edit::json_member(home.join("mcp/mcp.json"), &["mcpServers", "deja"], cx.mcp_entry(false)),
            shared_skill(cx),
            Edit::owned_file(home.join("commands/deja.md"), command_markdown(cx, false)),
        ]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        let config = junie_home(cx.env).join("config.json");
        vec![
            cx.claude_hook(&config, "UserPromptSubmit", None, "hook-prompt --digest", json!({})),
            cx.claude_hook(&config, "PreToolUse", Some("Bash|Read|Edit"), "hook-tool", json!({})),
        ]
    }

    fn notes(&self) -> &'static [&'static str] {
        &["restart Junie; project `.junie/` files count only once the project is trusted"]
    }
}

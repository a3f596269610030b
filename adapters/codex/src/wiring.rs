//! Codex CLI's wiring (its page, "Wiring"):
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `codex` | `${CODEX_HOME:-~/.codex}/config.toml` | `[mcp_servers.deja]` stdio `<exe> mcp` (the directory created: Codex refuses a missing `CODEX_HOME`) |
//! | `codex` | `~/.agents/skills/deja-history/SKILL.md` | the shared skill (invocable as `$deja-history`) |
//! | `codex-auto` | `${CODEX_HOME:-~/.codex}/hooks.json` | `SessionStart` (`startup\|resume`), `PreToolUse` (`Bash\|apply_patch`) |
//!
//! No slash command: custom prompts are deprecated upstream in favour of skills.

use std::path::PathBuf;

use deja_core::wire::{json, shared_skill, toml, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct CodexWiring;

fn codex_home(env: &StoreEnv) -> PathBuf {
    crate::INFO.store.dir_of(env, "CODEX_HOME")
}

impl Wiring for CodexWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        codex_home(env).is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let body = format!("type = \"stdio\"\ncommand = {}\nargs = [\"mcp\"]\n", toml::quote(&cx.exe()));
        vec![
            Edit::Dir { path: codex_home(cx.env) },
            Edit::toml_table(codex_home(cx.env).join("config.toml"), &["mcp_servers", "deja"], body),
            shared_skill(cx),
        ]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        let hooks = codex_home(cx.env).join("hooks.json");
        vec![
            cx.claude_hook(
                &hooks,
                "SessionStart",
                Some("startup|resume"),
                "hook-session-start",
                json!({"timeout": 10, "statusMessage": "Recalling past sessions…"}),
            ),
            cx.claude_hook(
                &hooks,
                "PreToolUse",
                Some("Bash|apply_patch"),
                "hook-tool",
                json!({"timeout": 10, "statusMessage": "Checking what this touches…"}),
            ),
        ]
    }

    fn notes(&self) -> &'static [&'static str] {
        &["Codex runs no hook until you approve it: open `codex`, run `/hooks` and approve deja's (codex-auto only)"]
    }
}

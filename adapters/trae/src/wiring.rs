//! Trae CLI's wiring (its page, "Wiring"), with `<cli>` =
//! `${TRAECLI_HOME:-${TRAE_HOME:-~/.trae}/cli}`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `trae` | `${TRAE_HOME:-~/.trae}/traecli.toml` | `[mcp_servers.deja]` `command = "<exe>"`, `args = ["mcp"]` |
//! | `trae` | `~/.agents/skills/deja-history/SKILL.md` | the shared skill, also the `/deja-history <query>` command |
//! | `trae-auto` | `<cli>/hooks.json` | Codex hooks (timeouts in seconds): `SessionStart`, `UserPromptSubmit`, `PreToolUse`, `PostToolUseFailure` (`Bash`), `PreCompact` |
//!
//! The page calls `traecli.toml` Codex-style TOML and presumes the table
//! `[mcp_servers.deja]`; that is also the table two public TRAE CLI integrations write
//! (`command`, `args`, no `type`). `traecli exec` refuses MCP calls under approval policy
//! `never`. Not done from the page: the status line, and the IDE targets (`trae-ide`,
//! another app's files).

use std::path::PathBuf;

use deja_core::wire::{json, shared_skill, toml, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct TraeWiring;

/// `${TRAE_HOME:-~/.trae}`.
fn trae_home(env: &StoreEnv) -> PathBuf {
    crate::INFO.store.dir_of(env, "TRAE_HOME")
}

/// `${TRAECLI_HOME:-<trae home>/cli}`.
fn cli_home(env: &StoreEnv) -> PathBuf {
    crate::INFO.store.dir_of(env, "TRAECLI_HOME")
}

impl Wiring for TraeWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        trae_home(env).is_dir() || cli_home(env).is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let body = format!("command = {}\nargs = [\"mcp\"]\n", toml::quote(&cx.exe()));
        vec![Edit::toml_table(trae_home(cx.env).join("traecli.toml"), &["mcp_servers", "deja"], body), shared_skill(cx)]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        let hooks = cli_home(cx.env).join("hooks.json");
        vec![
            cx.claude_hook(&hooks, "SessionStart", None, "hook-session-start", json!({"timeout": 10})),
            cx.claude_hook(&hooks, "UserPromptSubmit", None, "hook-prompt", json!({"timeout": 10})),
            cx.claude_hook(&hooks, "PreToolUse", Some("Bash|apply_patch|Edit|Write"), "hook-tool", json!({"timeout": 10})),
            cx.claude_hook(&hooks, "PostToolUseFailure", Some("Bash"), "hook-tool-after", json!({"timeout": 10})),
            cx.claude_hook(&hooks, "PreCompact", None, "hook-precompact", json!({"timeout": 10})),
        ]
    }

    fn notes(&self) -> &'static [&'static str] {
        &[
            "Restart traecli to load deja's MCP server (`traecli exec` refuses MCP calls under approval policy `never`)",
            "trae-auto: Trae runs the hooks once you trust them at TUI start-up",
        ]
    }
}

//! CodeBuddy Code's wiring (its page, "Wiring"), under `<config>` =
//! `${CODEBUDDY_CONFIG_DIR:-~/.codebuddy}`; the entry shape is CodeBuddy's documented
//! `mcpServers` map of `{type, command, args}`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `codebuddy` | the first existing of `<config>/.mcp.json`, `<config>/mcp.json`, `~/.codebuddy.json`, else a new `<config>/.mcp.json` | `mcpServers.deja` = `{"type": "stdio", "command": "<exe>", "args": ["mcp"]}` |
//! | `codebuddy-auto` | `<config>/settings.json` | Claude Code-shaped hooks, `timeout` in seconds: `SessionStart` → `hook-session-start`, `UserPromptSubmit` → `hook-prompt`, `PostToolUse` + `PostToolUseFailure` on `Bash\|PowerShell` → `hook-tool-after`, `PostToolUse` on `Read\|Edit\|Write\|MultiEdit` → `hook-tool`, `PreCompact` → `hook-precompact` |
//!
//! `SessionEnd` has no deja subcommand. Not done from the page: the WorkBuddy targets
//! (`workbuddy`, `workbuddy-auto`: one adapter, one target pair), the status line, and
//! the skill and slash command ("locations unknown in the material").

use std::path::PathBuf;

use deja_core::wire::{json, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct CodebuddyWiring;

/// `${CODEBUDDY_CONFIG_DIR:-~/.codebuddy}`.
fn config_dir(env: &StoreEnv) -> PathBuf {
    crate::INFO.store.dir_of(env, "CODEBUDDY_CONFIG_DIR")
}

/// The MCP file CodeBuddy reads: the first of its three that exists, else a new
/// `<config>/.mcp.json`.
fn mcp_file(env: &StoreEnv) -> PathBuf {
    let config = config_dir(env);
    let candidates = [config.join(".mcp.json"), config.join("mcp.json"), env.home().join(".codebuddy.json")];
    candidates.iter().find(|p| p.is_file()).cloned().unwrap_or_else(|| config.join(".mcp.json"))
}

impl Wiring for CodebuddyWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        config_dir(env).is_dir() || env.home().join(".codebuddy.json").is_file()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        vec![Edit::json_member(mcp_file(cx.env), &["mcpServers", "deja"], cx.mcp_entry(true))]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        let settings = config_dir(cx.env).join("settings.json");
        let timeout = || json!({"timeout": 10});
        // `hook-tool` and `hook-tool-after` share `PostToolUse`: each entry is told by
        // its command's end, or the first would adopt the second.
        let exact = |edit: Edit, sub: &str| match edit {
            Edit::JsonArrayItem { file, path, value, .. } => {
                Edit::JsonArrayItem { file, path, marker: vec!["deja".into(), format!(" {sub}\"")], value }
            }
            other => other,
        };
        vec![
            cx.claude_hook(&settings, "SessionStart", None, "hook-session-start", timeout()),
            cx.claude_hook(&settings, "UserPromptSubmit", None, "hook-prompt", timeout()),
            exact(cx.claude_hook(&settings, "PostToolUse", Some("Bash|PowerShell"), "hook-tool-after", timeout()), "hook-tool-after"),
            exact(cx.claude_hook(&settings, "PostToolUse", Some("Read|Edit|Write|MultiEdit"), "hook-tool", timeout()), "hook-tool"),
            cx.claude_hook(&settings, "PostToolUseFailure", Some("Bash|PowerShell"), "hook-tool-after", timeout()),
            cx.claude_hook(&settings, "PreCompact", None, "hook-precompact", timeout()),
        ]
    }

    fn notes(&self) -> &'static [&'static str] {
        &["Start a new CodeBuddy session to load deja's MCP server and (codebuddy-auto) hooks"]
    }
}

//! Muse's wiring (its page, "Wiring"), in `<settings>` =
//! `${XDG_CONFIG_HOME:-~/.config}/muse/settings.json`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `muse` | `<settings>` | `mcpServers.deja` (or the legacy `mcp_servers.deja` where only that key exists) = `{"type": "stdio", "command": <exe>, "args": ["mcp"], "mode": "optional"}` |
//! | `muse` | `~/.agents/skills/deja-history/SKILL.md` | the shared skill; Muse lists user skills in the slash menu, so it is also `/deja-history` |
//! | `muse-auto` | `<settings>` | Claude-shaped hooks, `timeout` in seconds: `SessionStart`, `UserPromptSubmit`, `PreToolUse` on `bash\|edit_file\|write_file`, `PostToolUse` and `PostToolUseFailure` on `bash`, `PreCompact` |
//!
//! With both server keys present Muse loads no server at all; deja then writes the
//! current key and leaves the conflict to the user. `SessionEnd` has no deja
//! subcommand.

use std::path::{Path, PathBuf};

use deja_core::wire::{json, shared_skill, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct MuseWiring;

/// `${XDG_CONFIG_HOME:-~/.config}/muse/settings.json`.
fn settings(env: &StoreEnv) -> PathBuf {
    env.xdg_config_home().join("muse/settings.json")
}

/// The servers key the file already uses: the legacy `mcp_servers` when it alone is
/// there, else `mcpServers`.
fn servers_key(file: &Path) -> &'static str {
    let Ok(text) = std::fs::read_to_string(file) else { return "mcpServers" };
    let has = |key: &str| matches!(json::get_member(&text, &[key]), Ok(Some(_)));
    if has("mcp_servers") && !has("mcpServers") {
        "mcp_servers"
    } else {
        "mcpServers"
    }
}

impl Wiring for MuseWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        settings(env).parent().is_some_and(Path::is_dir) || env.xdg_data_home().join("muse").is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let file = settings(cx.env);
        let key = servers_key(&file);
        let entry = json!({"type": "stdio", "command": cx.exe(), "args": ["mcp"], "mode": "optional"});
        vec![Edit::json_member(file, &[key, "deja"], entry), shared_skill(cx)]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        let file = settings(cx.env);
        let t = json!({"timeout": 10});
        vec![
            cx.claude_hook(&file, "SessionStart", None, "hook-session-start", t.clone()),
            cx.claude_hook(&file, "UserPromptSubmit", None, "hook-prompt", t.clone()),
            cx.claude_hook(&file, "PreToolUse", Some("bash|edit_file|write_file"), "hook-tool", t.clone()),
            cx.claude_hook(&file, "PostToolUse", Some("bash"), "hook-tool-after", t.clone()),
            cx.claude_hook(&file, "PostToolUseFailure", Some("bash"), "hook-tool-after", t.clone()),
            cx.claude_hook(&file, "PreCompact", None, "hook-precompact", t),
        ]
    }

    fn notes(&self) -> &'static [&'static str] {
        &["restart Muse; a settings.json holding both `mcpServers` and `mcp_servers` loads no server: keep one"]
    }
}

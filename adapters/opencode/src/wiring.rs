//! opencode's wiring (its page, "Wiring"), under `<config>` =
//! `${XDG_CONFIG_HOME:-~/.config}/opencode`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `opencode` | `<config>/opencode.json` (`opencode.jsonc` when only that exists) | `mcp.deja = {"type": "local", "command": ["<exe>", "mcp"]}` |
//! | `opencode` | `<config>/skills/deja-history/SKILL.md` | the skill |
//! | `opencode` | `<config>/commands/deja.md` | `/deja` (`$ARGUMENTS`) |
//! | `opencode-auto` | `<config>/plugins/deja.js` | the plugin: digest folded into the first system element, per-prompt recall appended to the last prompt, `hook-precompact` on compaction |
//!
//! Both config files are JSONC to the engine's CST splice, so comments survive either
//! way. Any file in `plugins/` makes opencode npm-install `@opencode-ai/plugin` into
//! `<config>` at its next start (`package.json`, `package-lock.json`, `node_modules/`);
//! those are opencode's files and uninstall leaves them (the notes say so).

use std::path::PathBuf;

use deja_core::wire::{command_markdown, json, opencode_plugin, skill_text, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct OpencodeWiring;

/// `${XDG_CONFIG_HOME:-~/.config}/opencode`.
fn config_dir(env: &StoreEnv) -> PathBuf {
    env.xdg_config_home().join("opencode")
}

/// `opencode.json`, or `opencode.jsonc` when only that exists.
fn config_file(env: &StoreEnv) -> PathBuf {
    let dir = config_dir(env);
    let (json, jsonc) = (dir.join("opencode.json"), dir.join("opencode.jsonc"));
    if !json.exists() && jsonc.is_file() {
        jsonc
    } else {
        json
    }
}

impl Wiring for OpencodeWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        config_dir(env).is_dir() || crate::INFO.store.present(crate::ID, env)
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let dir = config_dir(cx.env);
        vec![
            Edit::json_member(config_file(cx.env), &["mcp", "deja"], json!({"type": "local", "command": [cx.exe(), "mcp"]})),
            Edit::owned_file(dir.join("skills/deja-history/SKILL.md"), skill_text(cx)),
            Edit::owned_file(dir.join("commands/deja.md"), command_markdown(cx, false)),
        ]
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        vec![Edit::owned_file(config_dir(cx.env).join("plugins/deja.js"), opencode_plugin::plugin(cx, "opencode-auto", false))]
    }

    fn notes(&self) -> &'static [&'static str] {
        &[
            "restart opencode; `opencode mcp list` should show `✓ deja connected`",
            "opencode-auto: with a plugin in its config dir opencode npm-installs `@opencode-ai/plugin` there at its next start \
             (needs the network, about a minute; offline the start hangs — `OPENCODE_PURE=1` skips plugins). The \
             `package.json`, lock file and `node_modules/` it writes are opencode's: uninstall leaves them",
        ]
    }
}

//! Kilo Code's wiring (its page, "Wiring"), with `<config>` =
//! `${XDG_CONFIG_HOME:-~/.config}/kilo`:
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `kilocode` | `<config>/kilo.jsonc` (`kilo.json` when that is the file present) | the CLI's `mcp.deja = {"type": "local", "command": ["<exe>", "mcp"]}` (opencode's block) |
//! | `kilocode` | `<globalStorage>/kilocode.kilo-code/settings/mcp_settings.json`, each editor host that has the extension | `mcpServers.deja` = `<exe> mcp` |
//! | `kilocode` | `~/.kilocode/skills/deja-history/SKILL.md` | the skill (Kilo's loader looks there first) |
//! | `kilocode` | `<config>/commands/deja.md` | `/deja` (`$ARGUMENTS`) |
//! | `kilocode-auto` | `<config>/plugins/deja.js` | the opencode 1.x plugin shape: digest folded into the first system element, per-prompt recall, a file's line after `read`/`edit`/`write`, the earlier fix after a failed `bash`, `hook-precompact` on compaction |
//!
//! The page's session-end stamp has no deja hook subcommand in the design, so the
//! plugin does not register one. Any file in `plugins/` makes kilo npm-install
//! `@kilocode/plugin` into `<config>` at its next start; those files are kilo's and
//! uninstall leaves them.

use std::path::PathBuf;

use deja_core::family::cline_tasks;
use deja_core::wire::{command_markdown, json, opencode_plugin, skill_text, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

use crate::EXTENSION_ID;

pub struct KiloWiring;

/// `${XDG_CONFIG_HOME:-~/.config}/kilo`.
fn config_dir(env: &StoreEnv) -> PathBuf {
    env.xdg_config_home().join("kilo")
}

/// `kilo.jsonc`, or `kilo.json` when that is the file present.
fn config_file(env: &StoreEnv) -> PathBuf {
    let dir = config_dir(env);
    let (jsonc, json) = (dir.join("kilo.jsonc"), dir.join("kilo.json"));
    if !jsonc.exists() && json.is_file() {
        json
    } else {
        jsonc
    }
}

/// The extension's folder under each editor host that has it.
fn extension_dirs(env: &StoreEnv) -> Vec<PathBuf> {
    cline_tasks::global_storage_roots(env, EXTENSION_ID).into_iter().filter(|d| d.is_dir()).collect()
}

impl Wiring for KiloWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        config_dir(env).is_dir() || crate::INFO.store.present(crate::ID, env)
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let dir = config_dir(cx.env);
        let mut edits =
            vec![Edit::json_member(config_file(cx.env), &["mcp", "deja"], json!({"type": "local", "command": [cx.exe(), "mcp"]}))];
        for ext in extension_dirs(cx.env) {
            edits.push(Edit::json_member(ext.join("settings/mcp_settings.json"), &["mcpServers", "deja"], cx.mcp_entry(false)));
        }
        edits.push(Edit::owned_file(cx.env.home().join(".kilocode/skills/deja-history/SKILL.md"), skill_text(cx)));
        edits.push(Edit::owned_file(dir.join("commands/deja.md"), command_markdown(cx, false)));
        edits
    }

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        vec![Edit::owned_file(config_dir(cx.env).join("plugins/deja.js"), opencode_plugin::plugin(cx, "kilocode-auto", true))]
    }

    fn notes(&self) -> &'static [&'static str] {
        &[
            "restart kilo (and reload the VS Code window for the extension); `kilo mcp list` should show `✓ deja connected`",
            "kilocode-auto: with a plugin in its config dir kilo npm-installs `@kilocode/plugin` there at its next start \
             (needs the network; offline the start hangs — `KILO_PURE=1` skips plugins). The `package.json`, lock file \
             and `node_modules/` it writes are kilo's: uninstall leaves them",
        ]
    }
}

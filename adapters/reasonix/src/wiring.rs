//! Reasonix's wiring (its page, "Wiring"): one plugin package, laid out as
//! `reasonix plugin install <dir> --name deja --replace --yes` leaves it (checked
//! against 1.38.11), written directly so install needs no `reasonix` on PATH. Under
//! `<home>` = `${REASONIX_HOME:-~/.reasonix}`; `config.toml` is not touched.
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `reasonix` | `plugins/deja/reasonix-plugin.json` | the manifest (`apiVersion: reasonix.io/plugin/v2`): `mcpServers.deja` = `<exe> mcp`, reached by the model through `use_capability` |
//! | `reasonix` | `plugins/deja/skills/deja-history/SKILL.md` | the skill |
//! | `reasonix` | `plugins/deja/commands/deja.md` | `/deja:deja` |
//! | `reasonix` | `plugin-packages.json` | deja's entry in `plugins` (enabled), next to the user's packages |
//!
//! No `reasonix-auto`: it needs the extension runtime `deja reasonix-ext` (JSON-RPC over
//! stdio), which deja does not have yet, and hooks cannot carry recall.

use std::path::PathBuf;

use deja_core::wire::{command_markdown, json, skill_text, to_pretty, Edit, Surface, WireContext, Wiring, SKILL_NAME};
use deja_core::StoreEnv;

pub struct ReasonixWiring;

fn reasonix_home(env: &StoreEnv) -> PathBuf {
    env.path_var("REASONIX_HOME").unwrap_or_else(|| crate::default_root(env))
}

const DESCRIPTION: &str = "Recall from past coding-agent sessions on this machine (deja)";

impl Wiring for ReasonixWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        reasonix_home(env).is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let home = reasonix_home(cx.env);
        let root = home.join("plugins/deja");
        let manifest = json!({
            "apiVersion": "reasonix.io/plugin/v2",
            "name": "deja",
            "version": "1.0.0",
            "description": DESCRIPTION,
            "mcpServers": {"deja": cx.mcp_entry(false)},
        });
        let packages = home.join("plugin-packages.json");
        vec![
            Edit::owned_file(root.join("reasonix-plugin.json"), format!("{}\n", to_pretty(&manifest))),
            Edit::owned_file(root.join("skills").join(SKILL_NAME).join("SKILL.md"), skill_text(cx)),
            Edit::owned_file(root.join("commands/deja.md"), command_markdown(cx, false)),
            Edit::json_member(&packages, &["version"], json!(1)),
            Edit::json_array_item(
                &packages,
                &["plugins"],
                &["\"name\":\"deja\"", "\"root\":\"plugins/deja\""],
                json!({
                    "name": "deja",
                    "source": root.display().to_string(),
                    "root": "plugins/deja",
                    "version": "1.0.0",
                    "description": DESCRIPTION,
                    "manifestKind": "reasonix",
                    "enabled": true,
                }),
            ),
        ]
    }

    fn notes(&self) -> &'static [&'static str] {
        &["Restart Reasonix to load the deja plugin; `reasonix plugin list` shows it."]
    }
}

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
//! | `reasonix-auto` | `plugins/deja-recall/reasonix-plugin.json` | a second package holding only the `runtime` block: `<exe> reasonix-ext`, the extension-protocol v2 sidecar intercepting `input.receive`, `tool.after`, `compaction.prepare` and the session points (hooks cannot carry recall: only `SessionStart` stdout reaches the model) |
//! | `reasonix-auto` | `plugin-packages.json` | the `deja-recall` entry (enabled) |
//!
//! The runtime is its own package because a file deja owns has one text per target set:
//! the plain target's manifest stays what it is, and `reasonix-auto` adds a package
//! beside it (installing a runtime plugin is the user's full-trust authorisation).

use std::path::PathBuf;

use deja_core::wire::{command_markdown, json, skill_text, to_pretty, Edit, Surface, WireContext, Wiring, SKILL_NAME};
use deja_core::StoreEnv;

pub struct ReasonixWiring;

fn reasonix_home(env: &StoreEnv) -> PathBuf {
    env.path_var("REASONIX_HOME").unwrap_or_else(|| crate::default_root(env))
}

const DESCRIPTION: &str = "Recall from past coding-agent sessions on this machine (deja)";

/// The `deja-recall` runtime package (`deja reasonix-ext`, [`crate::runtime`], answers
/// initialize with it).
pub(crate) const RUNTIME_VERSION: &str = "1.0.0";
const RUNTIME_DESCRIPTION: &str = "deja's recall in every turn: past sessions with the prompt, earlier fixes after a failed command";

impl Wiring for ReasonixWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::AutoRecall, Surface::Skill, Surface::Command]
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

    fn auto(&self, cx: &WireContext) -> Vec<Edit> {
        let home = reasonix_home(cx.env);
        let root = home.join("plugins/deja-recall");
        let manifest = json!({
            "apiVersion": "reasonix.io/plugin/v2",
            "name": "deja-recall",
            "version": RUNTIME_VERSION,
            "description": RUNTIME_DESCRIPTION,
            "provides": [{"namespace": "plugin/deja-recall", "kind": "interceptors", "id": "default", "version": RUNTIME_VERSION}],
            "runtime": {
                "command": cx.exe(),
                "args": ["reasonix-ext"],
                "intercepts": ["input.receive", "tool.after", "compaction.prepare", "session.start", "session.load", "session.rotate"],
                "capabilities": ["interceptors"],
            },
        });
        vec![
            Edit::owned_file(root.join("reasonix-plugin.json"), format!("{}\n", to_pretty(&manifest))),
            Edit::json_array_item(
                home.join("plugin-packages.json"),
                &["plugins"],
                &["\"name\":\"deja-recall\"", "\"root\":\"plugins/deja-recall\""],
                json!({
                    "name": "deja-recall",
                    "source": root.display().to_string(),
                    "root": "plugins/deja-recall",
                    "version": RUNTIME_VERSION,
                    "description": RUNTIME_DESCRIPTION,
                    "manifestKind": "reasonix",
                    "enabled": true,
                }),
            ),
        ]
    }

    fn runtime(&self) -> Option<&'static dyn deja_core::wire::runtime::Runtime> {
        Some(&crate::runtime::ReasonixRuntime)
    }

    fn notes(&self) -> &'static [&'static str] {
        &[
            "Restart Reasonix to load the deja plugin; `reasonix plugin list` shows it.",
            "reasonix-auto: `reasonix plugin doctor deja-recall` shows the runtime (FULL TRUST: it runs `deja reasonix-ext`)",
        ]
    }
}

//! Roo Code's wiring (its page, "Wiring"):
//!
//! | target | file | what |
//! | --- | --- | --- |
//! | `roo` | `<root>/settings/mcp_settings.json`, for every Roo root that exists | `mcpServers.deja` = `{"command": <exe>, "args": ["mcp"]}` |
//! | `roo` | `~/.agents/skills/deja-history/SKILL.md` | the shared skill |
//! | `roo` | `~/.roo/commands/deja.md` | `/deja` (`$ARGUMENTS`) |
//!
//! The roots are the adapter's store roots (each editor host's global storage or its
//! `roo-cline.customStoragePath`, the CLI's mock storage): people run Roo in more than
//! one editor, and each keeps its own settings. Where Roo has run nowhere yet, the entry
//! goes to VS Code's root, which Roo reads once it is opened there.
//!
//! No `roo-auto`: Roo has no lifecycle hooks, and `~/.roo/rules/` cannot be refreshed
//! mid-session.

use std::path::PathBuf;

use deja_core::family::cline_tasks::global_storage_roots;
use deja_core::wire::{command_markdown, shared_skill, Edit, Surface, WireContext, Wiring};
use deja_core::StoreEnv;

pub struct RooWiring;

/// The Roo roots found on this machine, else VS Code's.
fn mcp_roots(env: &StoreEnv) -> Vec<PathBuf> {
    let found: Vec<PathBuf> = super::storage_roots(env).into_iter().filter(|r| r.is_dir()).collect();
    if found.is_empty() {
        global_storage_roots(env, super::EXTENSION_ID).into_iter().take(1).collect()
    } else {
        found
    }
}

impl Wiring for RooWiring {
    fn surfaces(&self) -> &'static [Surface] {
        &[Surface::Mcp, Surface::Skill, Surface::Command]
    }

    fn present(&self, env: &StoreEnv) -> bool {
        super::storage_roots(env).iter().any(|r| r.is_dir()) || env.home().join(".roo").is_dir()
    }

    fn plain(&self, cx: &WireContext) -> Vec<Edit> {
        let mut edits: Vec<Edit> = mcp_roots(cx.env)
            .into_iter()
            .map(|root| Edit::json_member(root.join("settings/mcp_settings.json"), &["mcpServers", "deja"], cx.mcp_entry(false)))
            .collect();
        edits.push(shared_skill(cx));
        edits.push(Edit::owned_file(cx.env.home().join(".roo/commands/deja.md"), command_markdown(cx, false)));
        edits
    }

    fn notes(&self) -> &'static [&'static str] {
        &["reload the editor window; Roo lists deja under MCP servers in each editor it has run in"]
    }
}

//! Test-only builders of adapter metadata, so the matrix can be rendered and checked
//! for harnesses that are not in the registry.

use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::{Capabilities, Capability, HarnessInfo, Os, StorePath};

/// A plausible `HarnessInfo` for `id`, leaked to get the `'static` the trait hands out.
pub fn info(id: &str) -> &'static HarnessInfo {
    info_with(
        id,
        Capabilities {
            mcp: Capability::Planned("`config.json` `mcpServers.deja`"),
            auto_recall: Capability::Unknown,
            skill: Capability::Planned("shared `~/.agents/skills/deja-history/SKILL.md`"),
            command: Capability::Unsupported("no custom commands | only built-ins"),
        },
    )
}

pub fn info_with(id: &str, capabilities: Capabilities) -> &'static HarnessInfo {
    let id: &'static str = Box::leak(id.to_string().into_boxed_str());
    let root_var: &'static str = Box::leak(deja_core::env::deja_root_var(id).into_boxed_str());
    let name: &'static str = Box::leak(format!("{} Code", id.to_uppercase()).into_boxed_str());
    Box::leak(Box::new(HarnessInfo {
        id,
        name,
        container: "JSONL, one file per session",
        stores: &[StorePath { os: Os::Any, path: "~/.alpha/sessions/<id>.jsonl" }],
        env_vars: &["ALPHA_HOME"],
        deja_vars: Box::leak(Box::new([root_var])),
        store: deja_core::StoreSpec::UNDECLARED,
        needs: &[],
        format_summary: "One JSON object per line; `user` and `assistant` records carry the text.",
        injected: &deja_core::InjectedText::NONE,
        capabilities,
        launch: Launch {
            resume: Resume::Always(ResumeSpec::anywhere(&["alpha", "--resume", "{id}"])),
            handoff: Handoff::Paste("no start-with-prompt command is known"),
        },
    }))
}

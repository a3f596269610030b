//! Test-only builders of adapter metadata, so the matrix can be rendered and checked
//! for harnesses that are not in the registry.

use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::store::{Files, Layout, Root, Store, StoreSpec};
use deja_core::{Capabilities, Capability, HarnessInfo};

/// The store every test harness declares.
static STORE: StoreSpec = StoreSpec::new(&[Store {
    name: "",
    roots: &[Root::any("${ALPHA_HOME:-~/.alpha}/sessions")],
    layout: Layout::Files(Files::new("*.jsonl")),
}]);

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
    let name: &'static str = Box::leak(format!("{} Code", id.to_uppercase()).into_boxed_str());
    Box::leak(Box::new(HarnessInfo {
        id,
        name,
        container: "JSONL, one file per session",
        store: STORE,
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

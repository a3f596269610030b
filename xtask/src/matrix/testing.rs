//! Test-only builders of adapter metadata, so the matrix can be rendered and checked
//! for harnesses that are not in the registry.

use super::meta::{Capability, HarnessInfo, Os, Override, StorePath};

/// A plausible description of `id`, leaked so tests can hold `&'static` ones in arrays
/// as the renderers take them.
pub fn info(id: &str) -> &'static HarnessInfo {
    Box::leak(Box::new(HarnessInfo {
        id: id.to_string(),
        name: format!("{} Code", id.to_uppercase()),
        container: "JSONL, one file per session".to_string(),
        store_paths: vec![StorePath { os: Os::Any, path: "${ALPHA_HOME:-~/.alpha}/sessions/*.jsonl".to_string() }],
        harness_vars: vec!["ALPHA_HOME".to_string()],
        deja_overrides: vec![Override { var: root_var(id), aliases: Vec::new() }],
        root_var: root_var(id),
        needs: Vec::new(),
        format_summary: "One JSON object per line; `user` and `assistant` records carry the text.".to_string(),
        capabilities: vec![
            ("mcp".to_string(), Capability::Planned("`config.json` `mcpServers.deja`".to_string())),
            ("auto-recall".to_string(), Capability::Unknown),
            ("skill".to_string(), Capability::Planned("shared `~/.agents/skills/deja-history/SKILL.md`".to_string())),
            ("command".to_string(), Capability::Unsupported("no custom commands | only built-ins".to_string())),
            ("resume".to_string(), Capability::Works("`alpha --resume <id>`".to_string())),
            (
                "handoff".to_string(),
                Capability::Works("paste: `deja handoff` prints the digest (no start-with-prompt command is known)".to_string()),
            ),
            ("restore".to_string(), Capability::Planned("its format's restore writer is not built yet".to_string())),
        ],
    }))
}

/// [`info`] with the capability of `surface` replaced.
pub fn with_capability(id: &str, surface: &str, cap: Capability) -> &'static HarnessInfo {
    let mut info = info(id).clone();
    let slot = info.capabilities.iter_mut().find(|(name, _)| name == surface).expect("a surface the matrix reports");
    slot.1 = cap;
    Box::leak(Box::new(info))
}

/// deja-core's rule, restated for test data only (the real value comes from the binary).
fn root_var(id: &str) -> String {
    format!("DEJA_{}_ROOT", id.to_ascii_uppercase().replace('-', "_"))
}

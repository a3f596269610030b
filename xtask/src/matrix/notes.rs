//! `adapters/<id>/harness.toml`: what code cannot know about each harness — the
//! harness versions its format was checked against, upstream blockers, format drift
//! seen, and how to verify deja against it — and the checks that keep it and the
//! adapters' `HarnessInfo` consistent. Each file lives in its adapter's folder so that
//! adding or updating a harness edits that folder only; the top-level
//! `harness-matrix.toml` is generated from them (`view.rs`).

use std::collections::BTreeMap;
use std::path::Path;

use super::meta::{Capability, HarnessInfo};
use anyhow::{bail, Context, Result};
use serde::Deserialize;

/// Each adapter's notes, relative to its folder `adapters/<id>/`.
pub const HARNESS_FILE: &str = "harness.toml";

/// The generated one-file view of every adapter's notes, relative to the workspace root.
pub const NOTES_FILE: &str = "harness-matrix.toml";

/// The surface names a blocker or a capability check may name, as
/// deja-core's `Capabilities::named` spells them, in the matrix's order.
pub const CAPABILITY_NAMES: [&str; 7] = ["mcp", "auto-recall", "skill", "command", "resume", "handoff", "restore"];

/// One adapter's `harness.toml` (its keys at the top level), and the `[<id>]` table
/// of the generated view.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HarnessNotes {
    /// Harness releases whose on-disk output the adapter was checked against.
    #[serde(default)]
    pub checked_versions: Vec<String>,
    /// When they were checked, `YYYY-MM-DD`; present exactly when versions are.
    pub checked_on: Option<String>,
    /// How a user confirms deja reads this harness (shown on its page).
    pub verify: String,
    /// Anything else worth knowing.
    pub notes: Option<String>,
    /// Format drift observed, oldest first.
    #[serde(default)]
    pub drift: Vec<Drift>,
    /// What deja waits on upstream.
    #[serde(default)]
    pub blockers: Vec<Blocker>,
    /// For each capability that says `works`: how to see it working.
    #[serde(default)]
    pub capability_checks: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Drift {
    /// The harness release that showed it.
    pub version: String,
    /// When it was seen, `YYYY-MM-DD`.
    pub seen_on: String,
    pub note: String,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Blocker {
    /// A capability name, or `store` for what blocks reading the history itself.
    pub capability: String,
    pub note: String,
    /// An upstream issue or release note, `http(s)://…`.
    pub link: Option<String>,
}

/// Every adapter's notes, by id.
pub type Notes = BTreeMap<String, HarnessNotes>;

/// Every adapter's `harness.toml` as written, by id: the view is made from the text, so
/// the comments and the layout a contributor chose survive into it.
pub type HarnessFiles = BTreeMap<String, String>;

/// The path of `id`'s notes, relative to the workspace root, for messages.
pub fn harness_file(id: &str) -> String {
    format!("adapters/{id}/{HARNESS_FILE}")
}

/// One `harness.toml`.
pub fn parse(text: &str) -> Result<HarnessNotes> {
    toml::from_str(text).map_err(|e| anyhow::anyhow!("{e}"))
}

/// Every file of `files`, failing with every file that does not parse named at once.
pub fn parse_all(files: &HarnessFiles) -> Result<Notes> {
    let mut notes = Notes::new();
    let mut problems = Vec::new();
    for (id, text) in files {
        match parse(text) {
            Ok(n) => {
                notes.insert(id.clone(), n);
            }
            Err(e) => problems.push(format!("{} is not valid: {e:#}", harness_file(id))),
        }
    }
    if !problems.is_empty() {
        bail!("{}", problems.join("\n"));
    }
    Ok(notes)
}

/// The `harness.toml` of every adapter folder in `folder_ids` that has one; a folder
/// without one is left for [`validate`] to name.
pub fn load(root: &Path, folder_ids: &[String]) -> Result<HarnessFiles> {
    let mut files = HarnessFiles::new();
    for id in folder_ids {
        let path = root.join("adapters").join(id).join(HARNESS_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                files.insert(id.clone(), text);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }
    Ok(files)
}

/// Checks the adapters' metadata, the adapter folders and the notes against each
/// other, reporting every problem at once.
pub fn validate(infos: &[&HarnessInfo], folder_ids: &[String], notes: &Notes) -> Result<()> {
    let mut problems = Vec::new();
    for info in infos {
        check_info(info, &mut problems);
        if !folder_ids.contains(&info.id) {
            problems.push(format!("registered adapter `{}` has no folder adapters/{}/ (the folder name must be the id)", info.id, info.id));
        }
        match notes.get(&info.id) {
            Some(n) => check_notes(info, n, &mut problems),
            None => problems.push(format!(
                "{} is missing: every adapter keeps what code cannot know about its harness there (see CONTRIBUTING.md)",
                harness_file(&info.id)
            )),
        }
    }
    for id in folder_ids {
        if !infos.iter().any(|i| i.id == *id) {
            problems.push(format!(
                "adapters/{id}/ is not in the registry: run `cargo xtask adapters` (and check the crate calls `inventory::submit!`)"
            ));
        }
    }
    for id in notes.keys() {
        if !infos.iter().any(|i| i.id == *id) {
            problems.push(format!("{} exists but no registered adapter has the id `{id}`", harness_file(id)));
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    bail!("the harness matrix is inconsistent:\n  - {}", problems.join("\n  - "))
}

pub fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !id.starts_with('-')
        && !id.ends_with('-')
}

fn check_info(info: &HarnessInfo, problems: &mut Vec<String>) {
    let id = info.id.as_str();
    if !valid_id(id) {
        problems.push(format!("adapter id `{id}` is not lowercase letters, digits and inner '-'"));
    }
    for (field, value) in [("name", &info.name), ("container", &info.container), ("format_summary", &info.format_summary)] {
        if value.trim().is_empty() {
            problems.push(format!("`{id}`: HarnessInfo.{field} is empty"));
        }
    }
    if info.store_paths.is_empty() {
        problems.push(format!("`{id}`: HarnessInfo names no default store path"));
    }
    if !info.deja_overrides.iter().any(|o| o.var == info.root_var) {
        problems.push(format!("`{id}`: HarnessInfo's overrides must include {}", info.root_var));
    }
    for (name, cap) in info.named_capabilities() {
        if *cap != Capability::Unknown && cap.reason().trim().is_empty() {
            problems.push(format!("`{id}`: capability {name} is {} without a reason", cap.status()));
        }
    }
}

fn check_notes(info: &HarnessInfo, n: &HarnessNotes, problems: &mut Vec<String>) {
    let id = info.id.as_str();
    let file = harness_file(id);
    match (&n.checked_on, n.checked_versions.is_empty()) {
        (Some(date), false) => check_date(&file, "checked_on", date, problems),
        (None, true) => {}
        (Some(_), true) => problems.push(format!("{file}: checked_on is set but checked_versions is empty")),
        (None, false) => problems.push(format!("{file}: checked_versions needs a checked_on date")),
    }
    if n.checked_versions.iter().any(|v| v.trim().is_empty()) {
        problems.push(format!("{file}: checked_versions has an empty version"));
    }
    if n.verify.trim().is_empty() {
        problems.push(format!("{file}: verify is empty: say how a user confirms deja reads this harness"));
    }
    for (i, d) in n.drift.iter().enumerate() {
        check_date(&file, &format!("drift[{i}].seen_on"), &d.seen_on, problems);
        if d.note.trim().is_empty() || d.version.trim().is_empty() {
            problems.push(format!("{file}: drift[{i}] needs a version and a note"));
        }
    }
    for (i, b) in n.blockers.iter().enumerate() {
        if b.capability != "store" && !CAPABILITY_NAMES.contains(&b.capability.as_str()) {
            problems.push(format!(
                "{file}: blockers[{i}].capability `{}` is not `store` or one of {}",
                b.capability,
                CAPABILITY_NAMES.join(", ")
            ));
        }
        if b.note.trim().is_empty() {
            problems.push(format!("{file}: blockers[{i}].note is empty"));
        }
        if let Some(link) = &b.link {
            if !(link.starts_with("https://") || link.starts_with("http://")) || link.contains(char::is_whitespace) {
                problems.push(format!("{file}: blockers[{i}].link `{link}` is not an http(s) URL"));
            }
        }
    }
    for (name, check) in &n.capability_checks {
        match info.named_capabilities().iter().find(|(n, _)| n == name) {
            None => problems.push(format!("{file}: capability_checks.{name} is not one of {}", CAPABILITY_NAMES.join(", "))),
            Some((_, cap)) if !matches!(cap, Capability::Works(_)) => problems.push(format!(
                "{file}: capability_checks.{name} is given but the adapter says {name} is {}; only `works` is verified",
                cap.status()
            )),
            Some(_) if check.trim().is_empty() => problems.push(format!("{file}: capability_checks.{name} is empty")),
            Some(_) => {}
        }
    }
    for (name, cap) in info.named_capabilities() {
        match cap {
            // Resume and handoff are the adapter's declared commands, printed by `deja show`,
            // search and `deja handoff` alike and tested there, not a wiring a user checks;
            // restore works exactly where a restore writer exists, which the kit round-trips.
            Capability::Works(_) if matches!(name, "resume" | "handoff" | "restore") => {}
            Capability::Works(_) if !n.capability_checks.contains_key(name) => problems
                .push(format!("`{id}` says {name} works: add {name} = \"<how to see it working>\" under [capability_checks] in {file}")),
            Capability::Blocked(_) if !n.blockers.iter().any(|b| b.capability == name) => problems.push(format!(
                "`{id}` says {name} is blocked: add a [[blockers]] entry with capability = \"{name}\" and a link or sentence to {file}"
            )),
            _ => {}
        }
    }
}

/// `YYYY-MM-DD` with a month and day that exist.
fn check_date(file: &str, field: &str, date: &str, problems: &mut Vec<String>) {
    if !is_date(date) {
        problems.push(format!("{file}: {field} `{date}` is not a YYYY-MM-DD date"));
    }
}

fn is_date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    let [y, m, d] = parts.as_slice() else { return false };
    if y.len() != 4 || m.len() != 2 || d.len() != 2 || !s.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
        return false;
    }
    let (Ok(y), Ok(m), Ok(d)) = (y.parse::<u32>(), m.parse::<u32>(), d.parse::<u32>()) else { return false };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::testing::info;
    use crate::matrix::testing::with_capability;

    /// `alpha`'s notes, from the text of its `harness.toml`.
    fn notes(text: &str) -> Notes {
        Notes::from([("alpha".to_string(), parse(text).expect("valid toml"))])
    }

    const GOOD: &str = r#"
checked_versions = ["1.2.3"]
checked_on = "2026-02-28"
verify = "Run `deja harnesses`."
"#;

    #[test]
    fn a_consistent_matrix_passes() {
        validate(&[info("alpha")], &["alpha".to_string()], &notes(GOOD)).expect("consistent");
    }

    #[test]
    fn missing_and_orphan_entries_are_named() {
        let err = validate(&[info("beta")], &["beta".to_string()], &notes(GOOD)).expect_err("inconsistent").to_string();
        assert!(err.contains("adapters/beta/harness.toml is missing"), "{err}");
        assert!(err.contains("adapters/alpha/harness.toml exists but no registered adapter has the id `alpha`"), "{err}");
    }

    #[test]
    fn a_folder_that_is_not_linked_is_named() {
        let err = validate(&[info("alpha")], &["alpha".to_string(), "gamma".to_string()], &notes(GOOD)).expect_err("unlinked");
        assert!(err.to_string().contains("adapters/gamma/ is not in the registry"), "{err}");
    }

    #[test]
    fn unknown_fields_are_rejected() {
        let err = parse("verify = \"x\"\nchecked_version = [\"1\"]\n").expect_err("typo");
        assert!(err.to_string().contains("checked_version"), "{err}");
        // The old one-file shape, pasted into a harness.toml, is refused too.
        assert!(parse("[alpha]\nverify = \"x\"\n").is_err());
    }

    #[test]
    fn every_file_that_does_not_parse_is_named() {
        let files = HarnessFiles::from([
            ("alpha".to_string(), GOOD.to_string()),
            ("beta".to_string(), "verify = ".to_string()),
            ("gamma".to_string(), "verify = \"x\"\nretention = 1\n".to_string()),
        ]);
        let err = parse_all(&files).expect_err("two bad files").to_string();
        assert!(
            err.contains("adapters/beta/harness.toml is not valid") && err.contains("adapters/gamma/harness.toml is not valid"),
            "{err}"
        );
        assert!(!err.contains("alpha"), "{err}");
    }

    #[test]
    fn load_reads_each_folder_and_skips_a_missing_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        for id in ["alpha", "beta"] {
            std::fs::create_dir_all(dir.path().join("adapters").join(id)).expect("mkdir");
        }
        std::fs::write(dir.path().join("adapters/alpha/harness.toml"), GOOD).expect("write");
        let files = load(dir.path(), &["alpha".to_string(), "beta".to_string()]).expect("load");
        assert_eq!(files.keys().collect::<Vec<_>>(), ["alpha"]);
        assert_eq!(files["alpha"], GOOD, "the text as written");
    }

    #[test]
    fn dates_must_exist() {
        assert!(is_date("2024-02-29"));
        assert!(!is_date("2026-02-29"));
        assert!(!is_date("2026-13-01"));
        assert!(!is_date("2026-1-01"));
        assert!(!is_date("26-01-01"));
        let bad = GOOD.replace("2026-02-28", "2026-02-30");
        assert!(validate(&[info("alpha")], &["alpha".to_string()], &notes(&bad)).is_err());
    }

    #[test]
    fn works_needs_a_capability_check_and_blocked_needs_a_blocker() {
        let mut alpha = with_capability("alpha", "mcp", Capability::Works("`deja install alpha`".to_string())).clone();
        alpha.capabilities[1].1 = Capability::Blocked("no hook API yet".to_string());
        let alpha = &alpha;
        let err = validate(&[alpha], &["alpha".to_string()], &notes(GOOD)).expect_err("unverified").to_string();
        assert!(err.contains("says mcp works"), "{err}");
        assert!(err.contains("says auto-recall is blocked"), "{err}");
        let fixed = format!(
            "{GOOD}[capability_checks]\nmcp = \"`alpha mcp list` shows deja\"\n\n[[blockers]]\ncapability = \"auto-recall\"\nnote = \"needs a hook API\"\nlink = \"https://example.org/issue/1\"\n"
        );
        validate(&[alpha], &["alpha".to_string()], &notes(&fixed)).expect("verified and explained");
    }

    #[test]
    fn a_check_for_a_capability_that_does_not_work_is_stale() {
        let text = format!("{GOOD}[capability_checks]\nskill = \"look\"\n");
        let err = validate(&[info("alpha")], &["alpha".to_string()], &notes(&text)).expect_err("stale");
        assert!(err.to_string().contains("only `works` is verified"), "{err}");
    }

    #[test]
    fn metadata_rules_are_enforced() {
        let alpha = with_capability("alpha", "skill", Capability::Planned(" ".to_string()));
        let err = validate(&[alpha], &["alpha".to_string()], &notes(GOOD)).expect_err("no reason").to_string();
        assert!(err.contains("skill is planned without a reason"), "{err}");
    }

    #[test]
    fn ids_are_checked() {
        assert!(valid_id("foo-bar2"));
        for bad in ["", "Foo", "foo_bar", "-foo", "foo-", "foo bar", "föo"] {
            assert!(!valid_id(bad), "{bad}");
        }
    }
}

//! Every adapter's metadata as the matrix renders it, read from the facade's
//! `deja-harness-info` binary rather than from a registry linked into xtask.
//!
//! The metadata is Rust code in each adapter (`HarnessInfo`, and capabilities the
//! wiring code derives), so reading it means linking every adapter and, through them,
//! deja-core and the index. xtask used to link all of that to write Markdown, which
//! made every xtask command (the scaffold and `adapters` included) wait for the whole
//! tree to build and fail when any adapter did not compile. Now only `cargo xtask
//! matrix` builds it, by running `cargo run -p deja-adapters --bin deja-harness-info`,
//! and reads its JSON into the owned types below. The shape is written by
//! `xtask/templates/facade/harness_info.rs` and refused here when it differs.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use serde::Deserialize;

use super::notes::CAPABILITY_NAMES;
use crate::adapters::{FACADE_DIR, HARNESS_INFO_BIN};

/// Where a default store path applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Os {
    Linux,
    #[serde(rename = "macos")]
    Mac,
    Windows,
    /// Linux and macOS alike.
    Unix,
    /// Every OS.
    Any,
}

impl Os {
    pub fn label(self) -> &'static str {
        match self {
            Os::Linux => "Linux",
            Os::Mac => "macOS",
            Os::Windows => "Windows",
            Os::Unix => "Linux, macOS",
            Os::Any => "all",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StorePath {
    pub os: Os,
    pub path: String,
}

/// One of deja's override variables, with the older names still honoured for it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Override {
    pub var: String,
    pub aliases: Vec<String>,
}

/// Whether a surface works for a harness, and why not when it does not: deja-core's
/// `Capability` with its reason owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Capability {
    Works(String),
    Planned(String),
    Unsupported(String),
    Blocked(String),
    Unknown,
}

impl Capability {
    pub fn status(&self) -> &'static str {
        match self {
            Capability::Works(_) => "works",
            Capability::Planned(_) => "planned",
            Capability::Unsupported(_) => "unsupported",
            Capability::Blocked(_) => "blocked",
            Capability::Unknown => "unknown",
        }
    }

    pub fn reason(&self) -> &str {
        match self {
            Capability::Works(r) | Capability::Planned(r) | Capability::Unsupported(r) | Capability::Blocked(r) => r,
            Capability::Unknown => "",
        }
    }
}

/// One capability as the binary prints it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NamedCapability {
    surface: String,
    status: String,
    reason: String,
}

/// One adapter's description, as the matrix needs it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HarnessInfo {
    pub id: String,
    pub name: String,
    /// How the store is laid out, e.g. "JSONL, one file per session".
    pub container: String,
    /// Default store paths per OS from the adapter's `StoreSpec` (each root template
    /// with what lies under it), `~` meaning the home directory.
    pub store_paths: Vec<StorePath>,
    /// The harness's own relocation variables, as the spec's templates name them.
    pub harness_vars: Vec<String>,
    /// deja's own overrides, derived from the id and the spec.
    pub deja_overrides: Vec<Override>,
    /// `DEJA_<ID>_ROOT` by deja-core's one rule, which `deja_overrides` must include.
    pub root_var: String,
    pub needs: Vec<String>,
    pub format_summary: String,
    /// The seven surfaces in [`CAPABILITY_NAMES`] order.
    #[serde(deserialize_with = "capabilities")]
    pub capabilities: Vec<(String, Capability)>,
}

impl HarnessInfo {
    /// Every capability the matrix reports, by surface name, in the matrix's order.
    pub fn named_capabilities(&self) -> Vec<(&str, &Capability)> {
        self.capabilities.iter().map(|(name, cap)| (name.as_str(), cap)).collect()
    }
}

fn capabilities<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<(String, Capability)>, D::Error> {
    use serde::de::Error;
    let raw = Vec::<NamedCapability>::deserialize(d)?;
    let names: Vec<&str> = raw.iter().map(|c| c.surface.as_str()).collect();
    if names != CAPABILITY_NAMES {
        return Err(D::Error::custom(format!("capabilities name {names:?}, expected {CAPABILITY_NAMES:?}")));
    }
    raw.into_iter()
        .map(|c| {
            let cap = match c.status.as_str() {
                "works" => Capability::Works(c.reason),
                "planned" => Capability::Planned(c.reason),
                "unsupported" => Capability::Unsupported(c.reason),
                "blocked" => Capability::Blocked(c.reason),
                "unknown" => Capability::Unknown,
                other => return Err(D::Error::custom(format!("capability {} has an unknown status `{other}`", c.surface))),
            };
            Ok((c.surface, cap))
        })
        .collect()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Output {
    harnesses: Vec<HarnessInfo>,
}

/// The binary's output, read.
pub fn parse(json: &[u8]) -> Result<Vec<HarnessInfo>> {
    let out: Output = serde_json::from_slice(json).with_context(|| {
        format!("{HARNESS_INFO_BIN} printed something xtask cannot read (run `cargo xtask adapters` if its source is stale)")
    })?;
    Ok(out.harnesses)
}

/// Builds and runs the facade's metadata binary in the workspace at `root` and reads
/// what it prints. Its build output goes to the terminal, so a compile error in an
/// adapter reads as it would from `cargo build`.
pub fn load(root: &Path) -> Result<Vec<HarnessInfo>> {
    // The cargo that runs xtask, so the same toolchain builds the adapters.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = root.join("Cargo.toml");
    let out = Command::new(&cargo)
        .arg("run")
        .arg("--quiet")
        .arg("--manifest-path")
        .arg(&manifest)
        .args(["--package", FACADE_DIR, "--bin", HARNESS_INFO_BIN])
        .current_dir(root)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("running {} run -p {FACADE_DIR} --bin {HARNESS_INFO_BIN}", cargo.to_string_lossy()))?;
    if !out.status.success() {
        bail!("`cargo run -p {FACADE_DIR} --bin {HARNESS_INFO_BIN}` failed ({}); its errors are above", out.status);
    }
    parse(&out.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(capabilities: &str) -> String {
        format!(
            r#"{{"harnesses":[{{"id":"alpha","name":"Alpha","container":"JSONL","store_paths":[{{"os":"unix","path":"~/.a"}}],
            "harness_vars":["A_HOME"],"deja_overrides":[{{"var":"DEJA_ALPHA_ROOT","aliases":[]}},{{"var":"DEJA_ALPHA_DB","aliases":["DEJA_A_DB"]}}],
            "root_var":"DEJA_ALPHA_ROOT","needs":[],
            "format_summary":"Lines.","capabilities":{capabilities}}}]}}"#
        )
    }

    const SEVEN: [(&str, &str, &str); 7] = [
        ("mcp", "works", "`deja install`"),
        ("auto-recall", "unknown", ""),
        ("skill", "planned", "a file"),
        ("command", "unsupported", "none"),
        ("resume", "blocked", "no flag"),
        ("handoff", "works", "exec"),
        ("restore", "unsupported", "a database"),
    ];

    /// The capabilities array as the binary prints it.
    fn caps(list: &[(&str, &str, &str)]) -> String {
        let items: Vec<String> = list.iter().map(|(s, st, r)| format!(r#"{{"surface":"{s}","status":"{st}","reason":"{r}"}}"#)).collect();
        format!("[{}]", items.join(","))
    }

    #[test]
    fn the_binary_output_is_read_with_every_field() {
        let infos = parse(entry(&caps(&SEVEN)).as_bytes()).expect("parse");
        let alpha = &infos[0];
        assert_eq!((alpha.id.as_str(), alpha.root_var.as_str()), ("alpha", "DEJA_ALPHA_ROOT"));
        assert_eq!(alpha.store_paths, vec![StorePath { os: Os::Unix, path: "~/.a".to_string() }]);
        assert_eq!(alpha.harness_vars, vec!["A_HOME".to_string()]);
        assert_eq!(alpha.deja_overrides[1], Override { var: "DEJA_ALPHA_DB".to_string(), aliases: vec!["DEJA_A_DB".to_string()] });
        let caps = alpha.named_capabilities();
        assert_eq!(caps.iter().map(|(n, _)| *n).collect::<Vec<_>>(), CAPABILITY_NAMES);
        assert_eq!(caps[0].1, &Capability::Works("`deja install`".to_string()));
        assert_eq!(caps[1].1, &Capability::Unknown);
        assert_eq!((caps[4].1.status(), caps[4].1.reason()), ("blocked", "no flag"));
    }

    #[test]
    fn a_shape_xtask_does_not_know_is_refused() {
        let five = caps(&SEVEN[..5]);
        assert!(format!("{:#}", parse(entry(&five).as_bytes()).expect_err("five surfaces")).contains("expected"), "{five}");
        let mut odd = SEVEN;
        odd[5].1 = "maybe";
        assert!(format!("{:#}", parse(entry(&caps(&odd)).as_bytes()).expect_err("status")).contains("unknown status `maybe`"));
        let extra = entry(&caps(&SEVEN)).replace(r#""needs":[]"#, r#""needs":[],"retention":"30d""#);
        assert!(parse(extra.as_bytes()).is_err(), "a new field needs a reader");
    }
}

//! `cargo xtask bench-corpus --out DIR --size 200MB|1GB --seed N [--profile P] [--harnesses IDS]`: writes a benchmark
//! corpus by running `deja-bench corpus` from a release build. The generator lives in
//! the deja-bench crate because it writes every session through its harness adapter's
//! own writer, which needs every adapter linked (xtask links none).

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    if !args.iter().any(|a| a == "--out" || a.starts_with("--out=")) {
        bail!("usage: cargo xtask bench-corpus --out DIR [--size 200MB|1GB] [--seed N] [--profile realistic|classic] [--harnesses IDS] [--force]");
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(&cargo)
        .current_dir(root)
        .args(["run", "--release", "--quiet", "-p", "deja-bench", "--", "corpus"])
        .args(args)
        .status()
        .context("running `cargo run --release -p deja-bench -- corpus`")?;
    if !status.success() {
        bail!("`deja-bench corpus` failed ({status})");
    }
    Ok(())
}

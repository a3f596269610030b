//! `cargo xtask`: developer commands that keep generated files in step with the
//! adapters folder.
//!
//! - `cargo xtask adapters [--check]` — writes the list of linked adapter crates
//!   (`deja-cli/src/adapters.rs` and the marked dependency block of
//!   `deja-cli/Cargo.toml`) from the folders under `adapters/`; `--check` fails,
//!   naming the file, when the committed one differs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};

mod adapters;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."))
}

fn usage() -> &'static str {
    "usage: cargo xtask <command>\n\ncommands:\n  adapters [--check]   regenerate (or check) the linked adapter list\n"
}

fn run() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = workspace_root();
    match args.first().map(String::as_str) {
        Some("adapters") => {
            let check = args.iter().any(|a| a == "--check");
            adapters::run(&root, check)
        }
        Some("-h" | "--help") | None => {
            print!("{}", usage());
            Ok(())
        }
        Some(other) => bail!("unknown command `{other}`\n\n{}", usage()),
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Writes `content` to `path`, or with `check` fails when they differ.
pub fn write_or_check(path: &Path, content: &str, check: bool) -> Result<bool> {
    let current = std::fs::read_to_string(path).unwrap_or_default();
    if current == content {
        return Ok(false);
    }
    if check {
        bail!("{} is stale; run `cargo xtask` to regenerate it", path.display());
    }
    std::fs::write(path, content).with_context(|| format!("writing {}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(true)
}

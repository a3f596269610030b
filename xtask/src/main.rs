//! `cargo xtask`: developer commands that keep generated files in step with the
//! adapters folder.
//!
//! - `cargo xtask adapters [--check]` — writes the facade crate `deja-adapters/` (its
//!   manifest and `src/lib.rs`), the one crate that links every adapter, from the
//!   folders under `adapters/`; `--check` fails, naming the file, when the committed one
//!   differs.
//! - `cargo xtask matrix [--check]` — generates `docs/harness-matrix.md`, the README's
//!   matrix block, the static site in `docs/site/` and the one-file view
//!   `harness-matrix.toml` from each adapter's `HarnessInfo` and `adapters/<id>/harness.toml`.
//!   The metadata comes from running the facade's `deja-harness-info` binary, so xtask
//!   itself links no adapter (nor deja-core and the index): every other command builds
//!   in seconds and works while an adapter does not compile.
//! - `cargo xtask new-adapter <id> "<Display Name>"` — scaffolds `adapters/<id>/` and
//!   registers it everywhere; `cargo xtask remove-adapter <id>` undoes that.
//! - `cargo xtask fuzz [--cases N] [--adapter ID]` — the long run of the fuzzing-style
//!   property tests (every adapter's kit mutation checks, the core readers, the MCP
//!   server) with many cases, in release mode; see `fuzz.rs`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};

mod adapters;
mod bench_corpus;
mod fuzz;
mod matrix;
mod scaffold;

/// The deja workspace xtask runs in: the nearest directory at or above the current one
/// holding an `adapters/` folder beside a `Cargo.toml` that declares `[workspace]` (not
/// `harness-matrix.toml`, which xtask generates and so may be missing). Found from where
/// it runs, never from where it was built: a second checkout sharing a target directory
/// must edit its own files.
fn workspace_root() -> Result<PathBuf> {
    let cwd = std::env::current_dir().context("reading the current directory")?;
    find_workspace_root(&cwd).with_context(|| {
        format!("{} is not inside a deja workspace (no Cargo.toml with [workspace] beside an adapters/ folder above it)", cwd.display())
    })
}

fn find_workspace_root(from: &Path) -> Option<PathBuf> {
    from.ancestors()
        .find(|dir| {
            dir.join("adapters").is_dir()
                && std::fs::read_to_string(dir.join("Cargo.toml")).is_ok_and(|m| m.lines().any(|l| l.trim() == "[workspace]"))
        })
        .map(Path::to_path_buf)
}

fn usage() -> &'static str {
    "usage: cargo xtask <command>

commands:
  adapters [--check]              regenerate (or check) deja-adapters/, the crate that links every adapter
  matrix [--check]                regenerate (or check) harness-matrix.toml, docs/harness-matrix.md, the
                                  README matrix block and the docs site docs/site/ from adapter metadata
                                  + adapters/<id>/harness.toml
  new-adapter <id> \"<Name>\"       scaffold adapters/<id>/ (id: lowercase letters, digits, '-') with its
                                  harness.toml and link it; then `cargo test -p deja-adapter-<id>`
  remove-adapter <id>             delete adapters/<id>/ and unlink it
  fuzz [--cases N] [--adapter ID]... [--seed S] [--debug]
                                  the fuzzing-style property tests (adapter kits, core readers, MCP
                                  server) with many cases (default 2000), built in release mode

--check regenerates in memory and fails, naming the file, when a committed file differs.
"
}

fn run() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        print!("{}", usage());
        return Ok(());
    }
    let root = workspace_root()?;
    match args.first().map(String::as_str) {
        Some("adapters") => adapters::run(&root, check_flag(&args[1..])?),
        Some("matrix") => matrix::run(&root, check_flag(&args[1..])?),
        Some("bench-corpus") => bench_corpus::run(&root, &args[1..]),
        Some("fuzz") => fuzz::run(&root, &args[1..]),
        Some("new-adapter") => match &args[1..] {
            [id, name] => scaffold::new_adapter(&root, id, name),
            _ => bail!("usage: cargo xtask new-adapter <id> \"<Display Name>\"  (e.g. new-adapter foo \"Foo Code\")"),
        },
        Some("remove-adapter") => match &args[1..] {
            [id] => scaffold::remove_adapter(&root, id),
            _ => bail!("usage: cargo xtask remove-adapter <id>"),
        },
        None => {
            print!("{}", usage());
            Ok(())
        }
        Some(other) => bail!("unknown command `{other}`\n\n{}", usage()),
    }
}

/// `--check` or nothing; anything else is a mistake worth stopping on.
fn check_flag(rest: &[String]) -> Result<bool> {
    match rest {
        [] => Ok(false),
        [flag] if flag == "--check" => Ok(true),
        _ => bail!("unexpected arguments {rest:?}; the only option is --check\n\n{}", usage()),
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
    write_or_check_by(path, content, check, "cargo xtask adapters")
}

/// [`write_or_check`], naming `regenerate` as the command that fixes a stale file.
/// Parent directories are created on write.
pub fn write_or_check_by(path: &Path, content: &str, check: bool, regenerate: &str) -> Result<bool> {
    let current = std::fs::read_to_string(path).unwrap_or_default();
    if current == content {
        return Ok(false);
    }
    if check {
        let what = if path.exists() { "differs from what it is generated as" } else { "is missing" };
        bail!("{} {what}; run `{regenerate}` and commit the result", path.display());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(path, content).with_context(|| format!("writing {}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(true)
}

//! `deja bench …`: forwards to `deja-bench`, the benchmark suite's own binary (the
//! `deja-bench` crate), so the suite's code, word list and question set stay out of
//! `deja` while the documented command lines keep working. It runs the `deja-bench`
//! beside this binary (cargo builds both into one directory), else the one on `PATH`,
//! and tells it to measure this `deja` (`DEJA_BIN`).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

use anyhow::{Context, Result};
use clap::Args;

#[derive(Args)]
#[command(
    after_help = "Example:\n  deja bench corpus --out /tmp/deja-bench/c200 --size 200MB --seed 1\n  deja bench --help   the suite's own help"
)]
pub struct BenchArgs {
    /// The benchmark and its arguments, passed to `deja-bench` unchanged.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
    pub args: Vec<OsString>,
}

pub fn run(args: BenchArgs) -> Result<ExitCode> {
    let deja = deja_core::wire::current_exe().context("finding the path of the running deja binary")?;
    let name = format!("deja-bench{}", std::env::consts::EXE_SUFFIX);
    let beside = deja.parent().map(|d| d.join(&name)).filter(|p| p.is_file());
    let bench: PathBuf = match beside {
        Some(p) => p,
        None => which::which(&name).context(
            "`deja bench` runs the separate deja-bench binary, found neither beside deja nor on PATH; build it with \
             `cargo build --release -p deja-bench`",
        )?,
    };
    let mut cmd = Command::new(bench);
    cmd.args(&args.args).env("DEJA_BIN", &deja);
    Ok(deja_core::wire::runtime::exec(cmd)?)
}

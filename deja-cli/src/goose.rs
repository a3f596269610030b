//! `deja goose <goose args…>`: Goose with per-prompt recall (its page, "Wiring"). Goose
//! discards hook stdout; it re-reads the file named by `GOOSE_MOIM_MESSAGE_FILE` every
//! turn, after the hooks ran, and injects it as a `<turn-context>` block. The variable
//! is read from the environment only, so the wrapper sets it to deja's MOIM file
//! (`<config>/deja-recall.md`, which `deja install goose-auto` created), empties the
//! file so a new session does not start with the last one's recall, and execs `goose`
//! with the arguments as given. `hook-prompt --goose` then fills it per prompt.
//!
//! Without `goose-auto` installed the wrapper says so and starts Goose unchanged.

use std::ffi::OsString;
use std::process::{Command, ExitCode};

use anyhow::{Context, Result};
use clap::Args;
use deja_adapters::deja_adapter_goose;
use deja_core::StoreEnv;

use crate::rewire::{refresh, Refreshed};

#[derive(Args)]
#[command(after_help = "Example:\n  deja goose session\n  deja goose run -t \"why did pgbouncer refuse connections\"")]
pub struct GooseArgs {
    /// Arguments passed to goose unchanged.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "GOOSE ARGS")]
    pub args: Vec<OsString>,
}

pub fn run(args: GooseArgs) -> Result<ExitCode> {
    let env = StoreEnv::from_process();
    let moim = deja_adapter_goose::wiring::moim_file(&env);
    let mut cmd = Command::new("goose");
    cmd.args(&args.args);
    match refresh(&env, &moim, "") {
        Ok(Refreshed::Written | Refreshed::Unchanged) => {
            cmd.env("GOOSE_MOIM_MESSAGE_FILE", &moim);
        }
        Ok(Refreshed::NotInstalled) => {
            eprintln!("deja: Goose's per-prompt recall is not wired; run `deja install goose-auto` once");
        }
        Ok(Refreshed::Refused(why)) => {
            eprintln!("deja: {} not refreshed: {why}", moim.display());
            if moim.is_file() {
                cmd.env("GOOSE_MOIM_MESSAGE_FILE", &moim);
            }
        }
        Err(e) => eprintln!("deja: {} not refreshed: {e:#}", moim.display()),
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let err = cmd.exec();
        Err(err).context("starting `goose` (is it on PATH?)")
    }
    #[cfg(not(unix))]
    {
        let status = cmd.status().context("starting `goose` (is it on PATH?)")?;
        Ok(ExitCode::from(status.code().unwrap_or(1).clamp(0, 255) as u8))
    }
}

//! `deja goose <goose args…>`: Goose with per-prompt recall (its page, "Wiring"). Goose
//! discards hook stdout; it re-reads the file named by `GOOSE_MOIM_MESSAGE_FILE` every
//! turn, after the hooks ran, and injects it as a `<turn-context>` block. The variable
//! is read from the environment only, so this wrapper sets it to deja's MOIM file
//! (`<config>/deja-recall.md`, which `deja install goose-auto` created), empties the
//! file so a new session does not start with the last one's recall, and execs `goose`
//! with the arguments as given. `hook-prompt --goose` ([`crate::hook`]) then fills it
//! per prompt.
//!
//! Without `goose-auto` installed the wrapper says so and starts Goose unchanged.

use std::ffi::OsString;
use std::process::{Command, ExitCode};

use deja_core::wire::live::Refreshed;
use deja_core::wire::runtime::{exec, Runtime, RuntimeError};
use deja_core::wired::refresh;
use deja_core::StoreEnv;

use crate::wiring::moim_file;

/// The `deja goose` wrapper.
pub struct GooseRuntime;

impl Runtime for GooseRuntime {
    fn name(&self) -> &'static str {
        "goose"
    }

    fn about(&self) -> &'static str {
        "Start Goose with deja's per-prompt recall file (MOIM) set (`deja goose <goose args…>`)"
    }

    fn after_help(&self) -> &'static str {
        "Example:\n  deja goose session\n  deja goose run -t \"why did pgbouncer refuse connections\""
    }

    fn takes_args(&self) -> bool {
        true
    }

    fn run(&self, env: &StoreEnv, args: &[OsString]) -> Result<ExitCode, RuntimeError> {
        let moim = moim_file(env);
        let mut cmd = Command::new("goose");
        cmd.args(args);
        match refresh(env, &moim, "") {
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
            Err(e) => eprintln!("deja: {} not refreshed: {e}", moim.display()),
        }
        exec(cmd)
    }
}

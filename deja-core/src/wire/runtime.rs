//! Runtimes: programs deja runs for a harness beyond its hooks, when the harness has no
//! hook that can carry recall — a wrapper that refreshes what the harness reads and then
//! starts it (`deja aider …`, `deja goose …`), or a sidecar the harness starts and
//! speaks a protocol with (`deja reasonix-ext`).
//!
//! An adapter declares its runtime in its [`Wiring`](super::Wiring) (`fn runtime`); the
//! `deja` binary makes each a subcommand of the runtime's [`name`](Runtime::name) and
//! runs it without knowing whose it is. A runtime lives with its adapter, and reaches
//! deja's answers through [`own_hook`](super::hook::own_hook) and the files it refreshes
//! through [`refresh`](crate::wired::refresh).

use std::ffi::OsString;
use std::process::{Command, ExitCode};

use crate::env::StoreEnv;

/// A program `deja <name> …` runs for one harness.
pub trait Runtime: Sync {
    /// The subcommand, e.g. `aider`; installed configs and people's habits call it, so
    /// it never changes.
    fn name(&self) -> &'static str;

    /// One line for `deja --help`.
    fn about(&self) -> &'static str;

    /// Examples for `deja <name> --help` (when the runtime takes no arguments of its own).
    fn after_help(&self) -> &'static str {
        ""
    }

    /// Whether everything after the subcommand is the runtime's (a wrapper passes it to
    /// the harness, `--help` included); a sidecar takes no arguments.
    fn takes_args(&self) -> bool {
        false
    }

    /// Runs with the arguments after the subcommand.
    fn run(&self, env: &StoreEnv, args: &[OsString]) -> Result<ExitCode, RuntimeError>;
}

/// A runtime that could not do its job.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {source}")]
pub struct RuntimeError {
    /// What was being done, e.g. "starting `aider` (is it on PATH?)".
    pub what: String,
    #[source]
    pub source: std::io::Error,
}

impl RuntimeError {
    pub fn new(what: impl Into<String>, source: std::io::Error) -> RuntimeError {
        RuntimeError { what: what.into(), source }
    }
}

/// Replaces this process with `cmd` (a wrapper's harness), so signals, the terminal
/// and the exit status are the harness's own; on Windows, runs it and passes its exit
/// status on.
pub fn exec(mut cmd: Command) -> Result<ExitCode, RuntimeError> {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let what = format!("starting `{program}` (is it on PATH?)");
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let err = cmd.exec();
        Err(RuntimeError::new(what, err))
    }
    #[cfg(not(unix))]
    {
        let status = cmd.status().map_err(|e| RuntimeError::new(what, e))?;
        Ok(ExitCode::from(status.code().unwrap_or(1).clamp(0, 255) as u8))
    }
}

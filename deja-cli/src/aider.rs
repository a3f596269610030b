//! `deja aider <aider args…>`: aider's auto-recall (its page, "Wiring"). aider has no
//! hooks; it re-reads its `read:` files from disk with every message, and `deja install
//! aider` put deja's context file there. The wrapper rewrites that file with the
//! session-start digest of the directory it runs in, then execs `aider` with the
//! arguments as given. The user's `.aider.conf.yml` is not touched here.
//!
//! The digest comes from `deja hook-session-start --plain` (the same block, budget and
//! framing every harness's session start gets), and the file is rewritten through the
//! wiring engine ([`crate::rewire`]) so `deja uninstall aider` still removes it. Any
//! problem refreshing is reported on stderr and aider starts anyway, with what the file
//! held before.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use deja_adapters::deja_adapter_aider;
use deja_core::StoreEnv;

use crate::rewire::{own_hook, refresh, Refreshed};

#[derive(Args)]
#[command(after_help = "Example:\n  deja aider --model sonnet src/pool.rs")]
pub struct AiderArgs {
    /// Arguments passed to aider unchanged.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "AIDER ARGS")]
    pub args: Vec<OsString>,
}

/// How long the digest may take before aider starts without a fresh one.
const DIGEST_DEADLINE: Duration = Duration::from_secs(3);

pub fn run(args: AiderArgs) -> Result<ExitCode> {
    let env = StoreEnv::from_process();
    let dir = std::env::current_dir().context("reading the current directory")?;
    let file = deja_adapter_aider::wiring::context_file(&env);
    let text = deja_adapter_aider::wiring::context_text(digest(&dir).as_deref());
    match refresh(&env, &file, &text) {
        Ok(Refreshed::Written | Refreshed::Unchanged) => {}
        Ok(Refreshed::NotInstalled) => {
            eprintln!("deja: aider is not wired yet, so it reads no recall; run `deja install aider` once");
        }
        Ok(Refreshed::Refused(why)) => eprintln!("deja: {} not refreshed: {why}", file.display()),
        Err(e) => eprintln!("deja: {} not refreshed: {e:#}", file.display()),
    }
    exec_aider(&args.args)
}

/// The session-start block for `dir`, from this binary's own hook.
fn digest(dir: &Path) -> Option<String> {
    let payload = serde_json::json!({"hook_event_name": "SessionStart", "cwd": dir.display().to_string()});
    own_hook(&["hook-session-start", "--plain"], &payload, DIGEST_DEADLINE)
}

/// Replaces this process with `aider args…` (on Windows: runs it and passes its exit
/// status on).
fn exec_aider(args: &[OsString]) -> Result<ExitCode> {
    let mut cmd = Command::new("aider");
    cmd.args(args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let err = cmd.exec();
        Err(err).context("starting `aider` (is it on PATH?)")
    }
    #[cfg(not(unix))]
    {
        let status = cmd.status().context("starting `aider` (is it on PATH?)")?;
        Ok(ExitCode::from(status.code().unwrap_or(1).clamp(0, 255) as u8))
    }
}

//! `deja aider <aider args…>`: aider's auto-recall (its page, "Wiring"). aider has no
//! hooks; it re-reads its `read:` files from disk with every message, and `deja install
//! aider` put deja's context file there. This wrapper rewrites that file with the
//! session-start digest of the directory it runs in, then execs `aider` with the
//! arguments as given. The user's `.aider.conf.yml` is not touched here.
//!
//! The digest comes from `deja hook-session-start --plain` (the same block, budget and
//! framing every harness's session start gets), and the file is rewritten through the
//! wiring engine ([`deja_core::wire::live`]) so `deja uninstall aider` still removes it.
//! Any problem refreshing is reported on stderr and aider starts anyway, with what the
//! file held before.

use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, ExitCode};
use std::time::Duration;

use deja_core::wire::hook::own_hook;
use deja_core::wire::json;
use deja_core::wire::live::Refreshed;
use deja_core::wire::runtime::{exec, Runtime, RuntimeError};
use deja_core::wired::refresh;
use deja_core::StoreEnv;

use crate::wiring::{context_file, context_text};

/// The `deja aider` wrapper.
pub struct AiderRuntime;

/// How long the digest may take before aider starts without a fresh one.
const DIGEST_DEADLINE: Duration = Duration::from_secs(3);

impl Runtime for AiderRuntime {
    fn name(&self) -> &'static str {
        "aider"
    }

    fn about(&self) -> &'static str {
        "Start aider with this project's past sessions in deja's `read:` context file (`deja aider <aider args…>`)"
    }

    fn after_help(&self) -> &'static str {
        "Example:\n  deja aider --model sonnet src/pool.rs"
    }

    fn takes_args(&self) -> bool {
        true
    }

    fn run(&self, env: &StoreEnv, args: &[OsString]) -> Result<ExitCode, RuntimeError> {
        let dir = std::env::current_dir().map_err(|e| RuntimeError::new("reading the current directory", e))?;
        let file = context_file(env);
        let text = context_text(digest(&dir).as_deref());
        match refresh(env, &file, &text) {
            Ok(Refreshed::Written | Refreshed::Unchanged) => {}
            Ok(Refreshed::NotInstalled) => {
                eprintln!("deja: aider is not wired yet, so it reads no recall; run `deja install aider` once");
            }
            Ok(Refreshed::Refused(why)) => eprintln!("deja: {} not refreshed: {why}", file.display()),
            Err(e) => eprintln!("deja: {} not refreshed: {e}", file.display()),
        }
        let mut cmd = Command::new("aider");
        cmd.args(args);
        exec(cmd)
    }
}

/// The session-start block for `dir`, from this binary's own hook.
fn digest(dir: &Path) -> Option<String> {
    let payload = json!({"hook_event_name": "SessionStart", "cwd": dir.display().to_string()});
    own_hook(&["hook-session-start", "--plain"], &payload, DIGEST_DEADLINE)
}

//! `deja handoff [SESSION] --to HARNESS`: start another harness (or the same one, fresh)
//! with a past session's digest as its first prompt.
//!
//! The digest is the MCP `handoff` answer, framed as untrusted `<deja-recall>` history:
//! the problem, what was decided, the commands run, the files touched, where it ended and
//! what was next. Where the target's page gives a start-with-prompt command
//! ([`Handoff::Exec`]) deja replaces itself with that harness, in the session's directory
//! when it is on this machine; otherwise (or with `--print`) the digest is printed to
//! paste. `--json` prints what would run and never starts anything. The harness binary
//! is found on `PATH` with the `which` crate, which knows the platform's rules
//! (executable bits, `PATHEXT`) better than a hand-written loop would.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Args;
use deja_core::index::search::Tier;
use deja_core::launch::{handoff_argv, quote, Handoff};
use deja_core::mining::digest::digest;
use deja_core::recall::{frame, query, render};

/// What the digest may fill: room for a real session's sections, small enough for any
/// argv and any first prompt.
const PROMPT_BUDGET: usize = 8 * 1024;

#[derive(Args)]
#[command(
    long_about = "Hand a past session to an agent: deja builds the session's digest (problem, decisions, \
                  commands, files, where it ended, next steps), framed as quoted history, and starts the \
                  target harness with it as the first prompt, in the session's directory when it exists here. \
                  Harnesses that cannot be started with a prompt get the digest printed to paste. \
                  Without SESSION, the latest session of the current directory's project is handed off.",
    after_help = "Examples:\n  deja handoff 5f0c7e2a --to codex      continue a Claude Code session in Codex\n  \
                  deja handoff --to claude               the latest session of this project\n  \
                  deja handoff 5f0c7e2a --to gemini --print   only print the digest\n\n\
                  Exit status: 0 started or printed · 1 no such session, or the harness is not installed \
                  (the digest is printed to paste) · 2 a usage error"
)]
pub struct HandoffArgs {
    /// Session id, a unique prefix of it, or `<harness>:<id>` (default: the latest
    /// session of the current directory's project).
    pub session: Option<String>,
    /// The harness to hand it to (default: the session's own harness).
    #[arg(long, value_name = "HARNESS")]
    pub to: Option<String>,
    /// Print the digest instead of starting the harness.
    #[arg(long)]
    pub print: bool,
    /// Print what would run as JSON (`mode`, `argv`, `dir`, `prompt`); starts nothing.
    #[arg(long)]
    pub json: bool,
    /// Use the index as it is, without refreshing it first.
    #[arg(long)]
    pub no_refresh: bool,
}

pub fn run(args: HandoffArgs) -> Result<ExitCode> {
    let view = crate::recall_cmd::open_index(args.no_refresh)?;
    let here = std::env::current_dir().ok().map(|d| d.to_string_lossy().into_owned()).unwrap_or_default();
    let answer = match &args.session {
        Some(id) => {
            let meta = crate::show::find_one(&view, id)?;
            let turns = view.session_turns(&meta.key()).context("reading the session's turns")?;
            query::ContextAnswer { tier: Tier::Exact, by_id: true, digest: digest(&turns), session: meta }
        }
        None => match query::latest_session(&view, &here, &query::Scope::default()).context("finding this project's latest session")? {
            Some(a) => a,
            None => bail!("no session of this project ({here}) is indexed; give a session id (`deja search …` finds one)"),
        },
    };
    let to = args.to.clone().unwrap_or_else(|| answer.session.harness.clone());
    let Some(target) = deja_core::lookup(&to) else {
        crate::index_cmd::check_harness_ids(std::slice::from_ref(&to))?;
        bail!("`{to}` is not a harness deja knows (`deja harnesses` lists them)");
    };
    let project = answer.session.project.clone().unwrap_or_else(|| here.clone());
    let prompt = frame::frame(&render::handoff(&answer, &project), 0, PROMPT_BUDGET);
    // Only an absolute directory that exists here; a partly decoded project is no place.
    let dir: Option<PathBuf> = answer.session.project.as_deref().map(PathBuf::from).filter(|d| d.is_absolute() && d.is_dir());
    let handoff = target.info().launch.handoff;
    let argv = match handoff {
        Handoff::Exec(template) => Some(handoff_argv(template, &prompt)),
        Handoff::Paste(_) => None,
        Handoff::Unsupported(why) => bail!("cannot hand a session to {to}: {why}"),
    };

    if args.json {
        let doc = serde_json::json!({
            "schema_version": 1,
            "command": "handoff",
            "session": answer.session,
            "to": to,
            "mode": if argv.is_some() { "exec" } else { "paste" },
            "argv": argv,
            "dir": dir,
            "prompt": prompt,
        });
        println!("{}", serde_json::to_string(&doc)?);
        return Ok(ExitCode::SUCCESS);
    }
    let name = target.info().name;
    let (argv, why_paste) = match (argv, handoff) {
        (_, _) if args.print => (None, None),
        (Some(argv), _) => (Some(argv), None),
        (None, Handoff::Paste(why)) => (None, Some(why.to_string())),
        (None, _) => (None, None),
    };
    let Some(argv) = argv else {
        if let Some(why) = why_paste {
            eprintln!("deja: {name} cannot be started with a prompt ({why}); paste this as your first message:");
        }
        print!("{prompt}");
        return Ok(ExitCode::SUCCESS);
    };
    let program = match which::which(&argv[0]) {
        Ok(p) => p,
        Err(_) => {
            eprintln!("deja: `{}` ({name}) is not on PATH; paste this as your first message instead:", argv[0]);
            print!("{prompt}");
            return Ok(ExitCode::from(1));
        }
    };
    let shown: Vec<String> = argv.iter().map(|w| if *w == prompt { "<digest>".to_string() } else { quote(w) }).collect();
    let where_ = dir.as_ref().map(|d| format!(" in {}", d.display())).unwrap_or_default();
    eprintln!("deja: handing {} ({}) to {name}{where_}: {}", answer.session.id, answer.session.harness, shown.join(" "));
    let mut cmd = std::process::Command::new(&program);
    cmd.args(&argv[1..]);
    if let Some(d) = &dir {
        cmd.current_dir(d);
    }
    start(cmd, &argv[0])
}

/// Replaces deja with the harness, so it owns the terminal and its exit status is the
/// user's; only a failure to start comes back.
#[cfg(unix)]
pub(crate) fn start(mut cmd: std::process::Command, name: &str) -> Result<ExitCode> {
    use std::os::unix::process::CommandExt;
    let err = cmd.exec();
    Err(err).with_context(|| format!("could not start `{name}`"))
}

#[cfg(not(unix))]
pub(crate) fn start(mut cmd: std::process::Command, name: &str) -> Result<ExitCode> {
    let status = cmd.status().with_context(|| format!("could not start `{name}`"))?;
    Ok(ExitCode::from(status.code().map_or(1, |c| u8::try_from(c).unwrap_or(1))))
}

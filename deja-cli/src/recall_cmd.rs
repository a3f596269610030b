//! The recall commands (`ctx`, `blame`, `fix`, `how`, `files`, `orient`, `friction`):
//! one subcommand per deja-core recall mode that names one
//! ([`deja_core::recall::mode::Spec::command`]), built here from the mode's spec rather
//! than written out per command, so a new mode is a command with no change in this
//! crate. Each refreshes the index when sources changed (unless `--no-refresh`), asks
//! its mode once, and prints Markdown lines or one JSON object with `schema_version`.
//! Nothing matched exits 1, like `search`.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Arg, ArgAction, ArgMatches, Command};
use deja_core::index::{IndexPaths, IndexView};
use deja_core::recall::mode::{Ask, Input, Mode, Reply, Spec};
use deja_core::recall::query::Scope;
use deja_core::{StoreEnv, Timestamp};

use crate::output::parse_since;

/// Version of the JSON these commands print.
pub const RECALL_SCHEMA_VERSION: u32 = 1;

/// Pasted output is capped: the error lines are near the top or the bottom.
const MAX_STDIN: u64 = 1 << 20;

/// Every recall subcommand, in the modes' order.
pub fn commands() -> Vec<Command> {
    Mode::commands().map(|m| command(&m.spec())).collect()
}

/// The mode a parsed subcommand asks, if it is a recall command.
pub fn mode_of(name: &str) -> Option<Mode> {
    Mode::of_command(name)
}

/// The subcommand of one mode: its question's arguments, the shared filters, its own
/// options.
fn command(spec: &Spec) -> Command {
    let name = spec.command.unwrap_or(spec.name);
    let mut cmd = Command::new(name).about(spec.about);
    if let Some(long) = spec.long_about {
        cmd = cmd.long_about(long);
    }
    if let Some(after) = spec.after_help {
        cmd = cmd.after_help(after);
    }
    cmd = match spec.input {
        Input::Words { name, help } => cmd.arg(Arg::new("q").value_name(name).help(help).required(true).num_args(1..)),
        Input::One { name, help } => cmd.arg(Arg::new("q").value_name(name).help(help).required(true)),
        Input::Paste { name, help } => cmd.arg(Arg::new("q").value_name(name).help(help).num_args(0..)),
        Input::Project => cmd.arg(
            Arg::new("dir")
                .long("project")
                .value_name("DIR")
                .value_parser(clap::value_parser!(PathBuf))
                .help("The project directory (default: the current directory)."),
        ),
        Input::Nothing => cmd,
    };
    cmd = cmd.arg(
        Arg::new("harness")
            .long("harness")
            .value_name("ID")
            .action(ArgAction::Append)
            .help("Only these harnesses (repeatable), e.g. `--harness claude`."),
    );
    if spec.input != Input::Project {
        cmd = cmd.arg(Arg::new("project").long("project").value_name("TEXT").help("Only sessions whose project path contains this."));
    }
    cmd = cmd
        .arg(Arg::new("since").long("since").value_name("WHEN").help("Only since a date (`2026-01-02`) or an age (`30d`, `12h`, `2w`)."))
        .arg(
            Arg::new("limit")
                .long("limit")
                .value_name("LIMIT")
                .default_value(spec.limit.to_string())
                .value_parser(crate::output::parse_limit)
                .help(spec.limit_help),
        );
    for p in spec.params {
        cmd = cmd.arg(
            Arg::new(p.long)
                .long(p.long)
                .value_name(p.value_name)
                .default_value(p.default.to_string())
                .value_parser(clap::value_parser!(usize))
                .help(p.help),
        );
    }
    cmd.arg(Arg::new("json").long("json").action(ArgAction::SetTrue).help("Print one JSON object instead of text.")).arg(
        Arg::new("no-refresh").long("no-refresh").action(ArgAction::SetTrue).help("Use the index as it is, without refreshing it first."),
    )
}

pub fn current_dir() -> Option<String> {
    std::env::current_dir().ok().map(|p| p.display().to_string())
}

/// Refreshes (unless told not to) and opens the index.
pub fn open_index(no_refresh: bool) -> Result<IndexView> {
    let env = StoreEnv::from_process();
    let paths = IndexPaths::new(env.index_dir());
    if !no_refresh {
        crate::search_cmd::refresh(&env, &paths);
    }
    crate::search_cmd::check_not_building(&paths)?;
    Ok(IndexView::open(&paths)?)
}

/// Runs the recall command `mode` with its parsed arguments.
pub fn run(mode: Mode, m: &ArgMatches) -> Result<ExitCode> {
    let spec = mode.spec();
    let command = spec.command.unwrap_or(spec.name);
    let harnesses: Vec<String> = m.get_many::<String>("harness").map(|v| v.cloned().collect()).unwrap_or_default();
    crate::index_cmd::check_harness_ids(&harnesses)?;
    let since = m.get_one::<String>("since").map(|s| parse_since(s, Timestamp::now())).transpose()?;
    let limit = m.get_one::<usize>("limit").copied();
    let params = spec.params.iter().map(|p| (p.long, m.get_one::<usize>(p.long).copied().unwrap_or(p.default))).collect();
    let project = || m.try_get_one::<String>("project").ok().flatten().cloned();
    let words = || m.get_many::<String>("q").map(|v| v.cloned().collect::<Vec<_>>().join(" ")).unwrap_or_default();
    let (q, scope) = match spec.input {
        Input::Words { .. } | Input::One { .. } => {
            let q = words();
            if q.trim().is_empty() {
                bail!("give {}", spec.hint);
            }
            (q, Scope { project: project(), here: current_dir(), ..Scope::default() })
        }
        Input::Paste { .. } => (pasted(words())?, Scope { project: project(), here: current_dir(), ..Scope::default() }),
        Input::Project => {
            let dir = match m.get_one::<PathBuf>("dir") {
                Some(p) => std::path::absolute(p).unwrap_or_else(|_| p.clone()).display().to_string(),
                None => current_dir().context("the current directory is unknown; pass --project DIR")?,
            };
            (String::new(), Scope { here: Some(dir), ..Scope::default() })
        }
        Input::Nothing => (String::new(), Scope { project: project(), here: current_dir(), ..Scope::default() }),
    };
    let scope = Scope { harnesses, since, ..scope };
    let view = open_index(m.get_flag("no-refresh"))?;
    let ask = Ask { q: &q, scope, limit, params, hook: false };
    let reply = mode.ask(&view, &ask).with_context(|| format!("{command} failed"))?;
    emit(m.get_flag("json"), command, &reply)
}

/// The error text of `deja fix`: the words given, or stdin when none (or `-`) are.
fn pasted(words: String) -> Result<String> {
    let mut text = words;
    if text.trim().is_empty() || text.trim() == "-" {
        if std::io::stdin().is_terminal() {
            bail!("give the error text as an argument or pipe it in, e.g. `cargo test 2>&1 | deja fix`");
        }
        // Tool output is often not clean UTF-8 (a binary's name, a Latin-1 path, a torn
        // multi-byte character at the cap): replace what does not decode, keep the rest.
        let mut bytes = Vec::new();
        std::io::stdin().take(MAX_STDIN).read_to_end(&mut bytes).context("reading the error text from stdin")?;
        text = String::from_utf8_lossy(&bytes).into_owned();
    }
    if text.trim().is_empty() {
        bail!("give the error text as an argument or on stdin, e.g. `deja fix \"error[E0425]: cannot find value\"`");
    }
    Ok(text)
}

/// Prints an answer (text or JSON) and returns the exit code: 1 when nothing matched.
fn emit(json: bool, command: &str, reply: &Reply) -> Result<ExitCode> {
    if json {
        let mut v = reply.json.clone();
        if let Some(obj) = v.as_object_mut() {
            obj.insert("schema_version".into(), RECALL_SCHEMA_VERSION.into());
            obj.insert("command".into(), command.into());
        }
        println!("{}", serde_json::to_string(&v)?);
    } else if reply.is_empty() {
        println!("{}", reply.nothing(command));
    } else {
        print!("{}", reply.plain());
    }
    Ok(if reply.is_empty() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

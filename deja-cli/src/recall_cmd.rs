//! The recall commands: `ctx`, `blame`, `fix`, `how`, `files`, `orient`, `friction`.
//! Each refreshes the index when sources changed (unless `--no-refresh`), asks one
//! recall question of it (`deja_core::recall::query`), and prints Markdown lines or
//! one JSON object with `schema_version`. Nothing matched exits 1, like `search`.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Args;
use deja_core::index::{IndexPaths, IndexView};
use deja_core::recall::frame::Answer;
use deja_core::recall::query::{self, Scope};
use deja_core::recall::render;
use deja_core::{StoreEnv, Timestamp};
use serde::Serialize;

use crate::output::parse_since;

/// Version of the JSON these commands print.
pub const RECALL_SCHEMA_VERSION: u32 = 1;

/// Filters shared by the recall commands.
#[derive(Args, Clone, Debug)]
pub struct ScopeArgs {
    /// Only these harnesses (repeatable), e.g. `--harness claude`.
    #[arg(long = "harness", value_name = "ID")]
    pub harness: Vec<String>,
    /// Only sessions whose project path contains this.
    #[arg(long, value_name = "TEXT")]
    pub project: Option<String>,
    /// Only since a date (`2026-01-02`) or an age (`30d`, `12h`, `2w`).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// At most this many results (1–1000).
    #[arg(long, default_value_t = 10, value_parser = crate::output::parse_limit)]
    pub limit: usize,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Use the index as it is, without refreshing it first.
    #[arg(long)]
    pub no_refresh: bool,
}

impl ScopeArgs {
    fn scope(&self) -> Result<Scope> {
        crate::index_cmd::check_harness_ids(&self.harness)?;
        let since = self.since.as_deref().map(|s| parse_since(s, Timestamp::now())).transpose()?;
        Ok(Scope { harnesses: self.harness.clone(), project: self.project.clone(), since, here: current_dir(), ..Scope::default() })
    }
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

/// Prints an answer (text or JSON) and returns the exit code: 1 when `empty`.
fn emit<T: Serialize>(json: bool, command: &str, value: &T, text: impl FnOnce() -> String, empty: bool, what: &str) -> Result<ExitCode> {
    if json {
        let mut v = serde_json::to_value(value)?;
        if let Some(obj) = v.as_object_mut() {
            obj.insert("schema_version".into(), RECALL_SCHEMA_VERSION.into());
            obj.insert("command".into(), command.into());
        }
        println!("{}", serde_json::to_string(&v)?);
    } else if empty {
        println!("{}", render::nothing(command, what));
    } else {
        print!("{}", text());
    }
    Ok(if empty { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

fn joined(words: &[String], what: &str) -> Result<String> {
    let q = words.join(" ");
    if q.trim().is_empty() {
        bail!("give {what}");
    }
    Ok(q)
}

// ------------------------------------------------------------------ ctx

#[derive(Args)]
pub struct CtxArgs {
    /// A session id (or unique prefix), or words to find the session by.
    #[arg(required = true)]
    pub query: Vec<String>,
    /// Cut the digest to this many bytes (on line boundaries).
    #[arg(long, default_value_t = 8192, value_name = "BYTES")]
    pub budget: usize,
    #[command(flatten)]
    pub scope: ScopeArgs,
}

pub fn ctx(args: CtxArgs) -> Result<ExitCode> {
    let q = joined(&args.query, "a session id or words to find a session by")?;
    let scope = args.scope.scope()?;
    let view = open_index(args.scope.no_refresh)?;
    let answer = query::context(&view, &q, &scope).context("context lookup failed")?;
    let what = format!("every indexed session for `{q}` (by id, then exact, stemmed, fuzzy and relevance search)");
    // Always an object, so `schema_version` is there when nothing matched too.
    let value = match &answer {
        Some(a) => serde_json::to_value(a)?,
        None => serde_json::json!({"tier": null, "by_id": false, "session": null, "digest": null}),
    };
    emit(
        args.scope.json,
        "ctx",
        &value,
        || answer.as_ref().map_or_else(String::new, |a| render::plain_within(&render::context(a), args.budget)),
        answer.is_none(),
        &what,
    )
}

// ------------------------------------------------------------------ blame

#[derive(Args)]
#[command(
    long_about = "Sessions that edited, read or discussed a file, each with its decision line. The path may be absolute, \
                  relative to the current directory, or a bare name; a match on the whole path outranks one on fewer \
                  trailing components (a bare basename last), then edits outrank reads and mentions, then recent first.",
    after_help = "Examples:\n  deja blame src/pool.rs\n  deja blame /src/app/Cargo.toml --json"
)]
pub struct BlameArgs {
    /// A file: absolute, relative to here, or a bare name.
    pub path: String,
    #[command(flatten)]
    pub scope: ScopeArgs,
}

pub fn blame(args: BlameArgs) -> Result<ExitCode> {
    let scope = args.scope.scope()?;
    let view = open_index(args.scope.no_refresh)?;
    let r = query::blame(&view, &args.path, &scope, args.scope.limit).context("blame failed")?;
    let what = format!("the files every session read or edited, and what was said, for `{}`", r.path);
    emit(args.scope.json, "blame", &r, || render::plain(&render::blame(&r)), r.hits.is_empty(), &what)
}

// ------------------------------------------------------------------ fix

#[derive(Args)]
#[command(
    long_about = "What this machine ran after the same error before, and whether it held. deja records every error it \
                  sees in command output and every error → fix pair: a command that succeeded within the next ten turns \
                  of the same session, after which the error did not come back. Errors match by signature — numbers, \
                  ids, directories and line/column numbers stripped — so the same error from another checkout matches; \
                  when no signature matches, fixes whose error shares most of the words are shown (tier `relevance`).",
    after_help = "Examples:\n  deja fix \"error[E0425]: cannot find value \\`pool_size\\`\"\n  cargo test 2>&1 | deja fix\n  deja fix -- \"--- FAIL: TestRound\""
)]
pub struct FixArgs {
    /// The error text (an error line or a whole output); read from stdin when absent or `-`.
    pub error: Vec<String>,
    #[command(flatten)]
    pub scope: ScopeArgs,
}

/// Pasted output is capped: the error lines are near the top or the bottom.
const MAX_STDIN: u64 = 1 << 20;

pub fn fix(args: FixArgs) -> Result<ExitCode> {
    let mut text = args.error.join(" ");
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
    let scope = args.scope.scope()?;
    let view = open_index(args.scope.no_refresh)?;
    let r = query::fixes(&view, &text, &scope, args.scope.limit).context("fix lookup failed")?;
    let sig = r.errors.first().map_or_else(|| text.trim().to_string(), |(s, _)| s.clone());
    let what = format!("every recorded fix for the error signature `{sig}` (exact, then by shared words)");
    let empty = r.fixes.is_empty() && r.seen.is_empty();
    emit(args.scope.json, "fix", &r, || render::plain(&render::fix(&r)), empty, &what)
}

// ------------------------------------------------------------------ how

#[derive(Args)]
#[command(
    long_about = "The real invocations agents ran for a tool on this machine, grouped, with how often each ran, in how \
                  many sessions and how often it passed. Commands run in the current project come first, then the most \
                  used. Words match as a phrase in the command line first (tier `exact`), then in any order (`relevance`); \
                  reading commands (cat, grep, ls, git status…) are left out.",
    after_help = "Examples:\n  deja how cargo test\n  deja how deploy --json"
)]
pub struct HowArgs {
    /// The tool or words of the command, e.g. `cargo test` or `deploy`.
    #[arg(required = true)]
    pub tool: Vec<String>,
    #[command(flatten)]
    pub scope: ScopeArgs,
}

pub fn how(args: HowArgs) -> Result<ExitCode> {
    let tool = joined(&args.tool, "a tool or command words, e.g. `deja how cargo test`")?;
    let scope = args.scope.scope()?;
    let view = open_index(args.scope.no_refresh)?;
    let r = query::how(&view, &tool, &scope, args.scope.limit).context("how lookup failed")?;
    let what = format!("every command line agents ran for `{tool}` (as a phrase, then in any order)");
    emit(args.scope.json, "how", &r, || render::plain(&render::how(&r, &tool)), r.commands.is_empty(), &what)
}

// ------------------------------------------------------------------ files

#[derive(Args)]
pub struct FilesArgs {
    /// What the work was about.
    #[arg(required = true)]
    pub topic: Vec<String>,
    #[command(flatten)]
    pub scope: ScopeArgs,
}

pub fn files(args: FilesArgs) -> Result<ExitCode> {
    let topic = joined(&args.topic, "a topic, e.g. `deja files pgbouncer pool`")?;
    let scope = args.scope.scope()?;
    let view = open_index(args.scope.no_refresh)?;
    let r = query::files(&view, &topic, &scope, args.scope.limit).context("files lookup failed")?;
    let what = format!("the files touched by the sessions about `{topic}`");
    emit(args.scope.json, "files", &r, || render::plain(&render::files(&r, &topic)), r.files.is_empty(), &what)
}

// ------------------------------------------------------------------ orient

#[derive(Args)]
pub struct OrientArgs {
    /// The project directory (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Only these harnesses (repeatable).
    #[arg(long = "harness", value_name = "ID")]
    pub harness: Vec<String>,
    /// Only sessions since a date or an age (`30d`).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// At most this many recent sessions (1–1000).
    #[arg(long, default_value_t = 6, value_parser = crate::output::parse_limit)]
    pub limit: usize,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Use the index as it is, without refreshing it first.
    #[arg(long)]
    pub no_refresh: bool,
}

pub fn orient(args: OrientArgs) -> Result<ExitCode> {
    crate::index_cmd::check_harness_ids(&args.harness)?;
    let dir = match &args.project {
        Some(p) => std::path::absolute(p).unwrap_or_else(|_| p.clone()).display().to_string(),
        None => current_dir().context("the current directory is unknown; pass --project DIR")?,
    };
    let since = args.since.as_deref().map(|s| parse_since(s, Timestamp::now())).transpose()?;
    let scope = Scope { harnesses: args.harness.clone(), project: None, since, here: Some(dir.clone()), ..Scope::default() };
    let view = open_index(args.no_refresh)?;
    let o = query::orient(&view, &dir, &scope, args.limit).context("orient failed")?;
    let empty = o.sessions.is_empty() && o.notes.is_empty() && o.agent_notes.is_empty();
    let what = format!("the sessions of `{dir}` and the directories inside it");
    emit(args.json, "orient", &o, || render::plain(&render::orient(&o)), empty, &what)
}

// ------------------------------------------------------------------ friction

#[derive(Args)]
pub struct FrictionArgs {
    /// Errors must have hit at least this many separate sessions.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub min_sessions: usize,
    #[command(flatten)]
    pub scope: ScopeArgs,
}

#[derive(Serialize)]
struct FrictionJson<'a> {
    min_sessions: usize,
    errors: &'a [query::FrictionRow],
}

pub fn friction(args: FrictionArgs) -> Result<ExitCode> {
    let scope = args.scope.scope()?;
    let scope = Scope { here: None, ..scope };
    let view = open_index(args.scope.no_refresh)?;
    let min = args.min_sessions.max(1);
    let rows = query::friction(&view, &scope, min, args.scope.limit.max(1)).context("friction failed")?;
    let what = format!("every error signature for ones that hit {min} or more separate sessions");
    let answer: Answer = render::friction(&rows, min);
    emit(args.scope.json, "friction", &FrictionJson { min_sessions: min, errors: &rows }, || render::plain(&answer), rows.is_empty(), &what)
}

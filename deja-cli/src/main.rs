//! `deja`: one searchable memory over every coding agent's history.
//!
//! This file holds the command-line surface (clap) and dispatch; each command lives
//! in its own module. `deja QUERY…` is shorthand for `deja search QUERY…`.
//!
//! Three kinds of subcommand are made from what deja-core and the adapters declare,
//! not written out here: the recall commands (one per recall mode with a command,
//! `recall_cmd`), the hook subcommands (one per hook event, with every registered hook
//! envelope, `hooks`), and the harness runtimes (`deja aider …`, `deja reasonix-ext`:
//! one per runtime an adapter's wiring declares). So the binary names no harness.

mod bench;
mod config_cmd;
mod demo;
mod doctor;
mod forget;
mod freshness;
mod handoff;
mod harnesses;
mod hooks;
mod index_cmd;
mod install;
mod mcp;
mod output;
mod recall_cmd;
mod remember;
mod restore_cmd;
mod search_cmd;
mod show;
mod team;
mod transfer;
mod ui;
mod watch;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Arg, ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use deja_core::wire::hook::HookEvent;
use deja_core::wire::runtime::Runtime;
// Named so every adapter crate is linked and its `inventory` registration is in `deja`,
// even where no code calls an adapter directly.
use deja_adapters as _;

/// jemalloc rather than the system allocator: a cold index allocates and frees a string
/// or a map per JSON value and per token buffer across four threads, and with glibc's
/// malloc that cost about a tenth of the build's CPU. Built at the same time as the
/// glibc build on the 1 GB benchmark corpus (`docs/benchmarks.md`), jemalloc used 5–8%
/// less CPU at the same peak memory; mimalloc and tcmalloc saved as much or more but
/// held 48 MB to 40% more memory, and memory is the bound the build is held to.
#[cfg(unix)]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[derive(Parser)]
#[command(
    name = "deja",
    version,
    about = "Search what your coding agents already did",
    long_about = "deja finds the conversation logs your coding agents (Claude Code, Codex CLI, DeepSeek Harness, …) \
                  keep on disk, indexes them locally (secrets redacted), and finds the past session you need.\n\n\
                  `deja QUERY…` is shorthand for `deja search QUERY…`; bare `deja` on a terminal opens the search screen (`deja ui`).",
    after_help = "Examples:\n  deja                                the search screen: type, read, resume\n  deja \"jwt refresh\"                  search every harness\n  deja search pgbouncer --since 30d   only recent sessions\n  deja index                          refresh the index\n  deja show 5f0c7e2a                  a whole session by id prefix\n  deja demo                           try it on a synthetic home"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Open the search screen: type to search, read, resume (also: bare `deja` on a terminal).
    Ui(ui::UiArgs),
    /// Search past sessions (also: `deja QUERY…`).
    #[command(
        long_about = "Search past sessions. Bare words must all occur in one turn; \"quoted phrases\" must occur \
                      contiguously. Tiers are tried in order and reported: exact, then stemmed (other forms of a \
                      word: `refreshing` finds `refresh`), then fuzzy (typos: edit distance 1 for 4–7 letter words, 2 \
                      for longer), then relevance (sessions matching most of the words, naming the words that carried \
                      the match and those dropped). A question in plain language (\"what did we decide about the pool \
                      size?\") need not match its question words and stopwords; the answer names them as not needed. \
                      The index is refreshed first when sources changed.",
        after_help = "Exit status: 0 something matched · 1 nothing matched, or an error · 2 a usage error \
                            (an unknown flag value, an empty or relative HOME) · 75 the index is still being built \
                            for the first time by another deja (the message says how far); search again shortly."
    )]
    Search(SearchArgs),
    /// Build or refresh the index from every harness's stores.
    #[command(long_about = "Build or refresh the index. Unchanged sources cost one stat; grown logs are read from \
                            their tail; rewritten ones are parsed again. Every session read is kept in deja's archive \
                            (~/.local/share/deja/archive), so one whose source file the harness deleted stays searchable, \
                            through --rebuild and deja upgrades too. A rebuild builds a new generation beside the serving \
                            one and swaps it in when complete; searches answer from the old one meanwhile. Only one \
                            `deja index` writes at a time; a second one waits. --watch keeps running and indexes what \
                            harnesses append as they write.")]
    Index(index_cmd::IndexArgs),
    /// Print a whole session (an id prefix is enough), with the command that resumes it.
    Show(show::ShowArgs),
    /// Write sessions deja kept back into their harness's store, so the harness resumes them.
    #[command(long_about = "Write archived sessions back into their harness's own store, in its own format and where it \
                            reads them, so its own resume works again (`claude --resume <id>`, …). Meant for sessions \
                            whose source the harness deleted (`deja search --deleted` lists them). Never overwrites: a \
                            session whose file exists is reported, and --force writes a copy under a new id beside it \
                            only where the harness tolerates that. Each file is read back through deja's own reader \
                            before it is written and must give the archived turns. Text the archive keeps redacted \
                            stays redacted, and the report says how many turns carry a redaction. Harnesses whose \
                            history is a database, or that resume nothing by id, are not restorable; `deja harnesses` \
                            and the harness matrix say which are.")]
    Restore(restore_cmd::RestoreArgs),
    /// Start a harness with a past session's digest as its first prompt (or print it to paste).
    Handoff(handoff::HandoffArgs),
    /// List the harnesses deja reads, their stores on this machine, and session counts.
    Harnesses(harnesses::HarnessesArgs),
    /// Run the whole pipeline on a synthetic home with every harness that has a synthetic writer (touches nothing of yours).
    Demo(demo::DemoArgs),
    /// Save a durable note (indexed as the harness `deja`, ranked above transcripts).
    Remember(remember::RememberArgs),
    /// Remove sessions from the archive and the index for good (by id, project, harness, age or search).
    Forget(forget::ForgetArgs),
    /// Write history as NDJSON, one redacted document per turn (to move it to another machine).
    Export(transfer::ExportArgs),
    /// Merge NDJSON written by `deja export` (another machine's history) into this one.
    Import(transfer::ImportArgs),
    /// Show the settings in effect: exclusions, where the index, archive and settings file are.
    Config(config_cmd::ConfigArgs),
    /// Wire deja into harnesses: the MCP server, skills and commands; `<id>-auto` adds hooks.
    #[command(long_about = "Wire deja into harnesses. A target is a harness id (the MCP server, plus the skill or \
                            command the harness reads) or `<id>-auto` (adds auto-recall: hooks or a plugin). Configs are \
                            edited in place as minimal splices: comments, order, indentation and everything else that is \
                            not deja's stay as they were, and `deja uninstall` gives every file back byte for byte.")]
    Install(install::InstallArgs),
    /// Take out what `deja install` wrote.
    Uninstall(install::UninstallArgs),
    /// What deja sees and what is wired: stores, sessions, each harness's wiring, the index.
    Doctor(doctor::DoctorArgs),
    /// Serve recall to agents over MCP (stdio JSON-RPC; one tool `deja`).
    Mcp(mcp::McpArgs),
    /// Team memory on PostgreSQL: share chosen projects, push them, grant who reads them.
    Team(team::TeamArgs),
    /// Benchmarks: synthetic corpora, index throughput, search latency, LoCoMo recall (runs `deja-bench`).
    #[command(disable_help_flag = true)]
    Bench(bench::BenchArgs),
}

#[derive(Args, Clone)]
pub struct SearchArgs {
    /// Words and "quoted phrases" to find. A query of any length is answered: past 4096
    /// bytes or 32 words it is searched by its rarest words (stopwords and question
    /// words go first), and the answer names what was left out.
    #[arg(required = false)]
    pub query: Vec<String>,
    /// Only these harnesses (repeatable), e.g. `--harness claude`.
    #[arg(long = "harness", value_name = "ID")]
    pub harness: Vec<String>,
    /// Only sessions whose project path contains this.
    #[arg(long, value_name = "TEXT")]
    pub project: Option<String>,
    /// Only turns since a date (`2026-01-02`) or an age (`30d`, `12h`, `2w`).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only turns of this kind.
    #[arg(long, value_name = "ROLE", value_parser = clap::builder::PossibleValuesParser::new(output::ROLES))]
    pub role: Option<String>,
    /// Only turns that read, changed or named this file (a path or its last parts:
    /// `src/auth.rs`, `auth.rs`); narrows the turns the words match.
    #[arg(long, value_name = "PATH")]
    pub file: Option<String>,
    /// At most this many sessions (1–1000).
    #[arg(long, default_value_t = 15, value_parser = output::parse_limit)]
    pub limit: usize,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Search the index as it is, without refreshing it first.
    #[arg(long)]
    pub no_refresh: bool,
    /// Whose history: `mine` (this machine's index), `team` (the team store set up by
    /// `deja team init`), `all` (both; team sessions labelled author@machine). A team
    /// store that does not answer within 2 s (`[team] timeout_ms`) is left out with one
    /// line saying so.
    #[arg(long, value_enum, default_value_t = search_cmd::Scope::Mine)]
    pub scope: search_cmd::Scope,
    /// Short for `--scope team`.
    #[arg(long, conflicts_with = "scope")]
    pub team: bool,
    /// Only sessions whose source the harness deleted and deja kept (with no words: all
    /// of them, newest first). `deja restore ID` writes one back for its harness.
    #[arg(long)]
    pub deleted: bool,
    /// Set when `deja WORD…` was read as a search, so a first word that misspells a
    /// command can be pointed out when nothing matches.
    #[arg(skip)]
    pub shorthand: bool,
}

/// The subcommand `word` most likely misspells, if any: within two edits (one for
/// words of up to four letters), never a word that is itself a command.
pub fn misspelled_command(word: &str) -> Option<String> {
    let word = word.to_ascii_lowercase();
    if word.len() < 3 {
        return None;
    }
    let allowed = if word.len() <= 4 { 1 } else { 2 };
    cli()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .filter(|name| name != "help")
        .map(|name| (strsim::damerau_levenshtein(&word, &name), name))
        .filter(|(d, _)| *d > 0 && *d <= allowed)
        .min()
        .map(|(_, name)| name)
}

/// The whole command line: the derived commands, then the ones made from what deja-core
/// and the adapters declare (recall modes, hook events and envelopes, runtimes), each
/// shown in `--help` where it belongs.
fn cli() -> clap::Command {
    let derived = Cli::command();
    let before: Vec<String> = derived.get_subcommands().map(|c| c.get_name().to_string()).collect();
    let recall = recall_cmd::commands();
    let hooks = hooks::commands();
    let runtimes: Vec<clap::Command> = deja_core::wired::runtimes().into_iter().map(runtime_command).collect();
    // Recall commands after `demo`, hooks before `mcp`, runtimes after it.
    let mut order: Vec<String> = Vec::new();
    for name in &before {
        if name == "mcp" {
            order.extend(hooks.iter().map(|c| c.get_name().to_string()));
        }
        order.push(name.clone());
        if name == "demo" {
            order.extend(recall.iter().map(|c| c.get_name().to_string()));
        }
        if name == "mcp" {
            order.extend(runtimes.iter().map(|c| c.get_name().to_string()));
        }
    }
    // Hooks and runtimes are run by harnesses, not typed: they work as ever, and `deja
    // install` and the docs name them, but the help people read leaves them out.
    let hooks: Vec<clap::Command> = hooks.into_iter().map(|c| c.hide(true)).collect();
    let runtimes: Vec<clap::Command> = runtimes.into_iter().map(|c| c.hide(true)).collect();
    let recall_names: Vec<String> = recall.iter().map(|c| c.get_name().to_string()).collect();
    let mut cmd = derived.subcommands(recall).subcommands(hooks).subcommands(runtimes);
    for (i, name) in order.iter().enumerate() {
        cmd = cmd.mut_subcommand(name, |c| c.display_order(i));
    }
    let groups = command_groups(&cmd, &recall_names);
    cmd.help_template(format!(
        "{{before-help}}{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{groups}Options:\n{{options}}{{after-help}}"
    ))
}

/// The groups `deja --help` lists commands in, by what a person wants to do. The recall
/// commands (whatever modes deja-core declares) are "ask about past work"; a command in
/// no group here lands in "Other", which a test keeps empty.
const GROUPS: [(&str, &[&str]); 4] = [
    ("Search and read", &["ui", "search", "show", "handoff", "harnesses"]),
    ("Ask about past work", &["remember"]),
    ("Wire into harnesses", &["install", "uninstall", "doctor", "mcp"]),
    ("Manage history", &["index", "restore", "forget", "team", "export", "import", "config", "demo", "bench"]),
];

/// The visible subcommands of `cmd` under [`GROUPS`]' headings, each with its one-line
/// help, as the help template's commands section.
fn command_groups(cmd: &clap::Command, recall: &[String]) -> String {
    let visible: Vec<&clap::Command> = cmd.get_subcommands().filter(|c| !c.is_hide_set()).collect();
    let group_of = |name: &str| -> &str {
        if recall.iter().any(|r| r == name) {
            return GROUPS[1].0;
        }
        GROUPS.iter().find(|(_, names)| names.contains(&name)).map_or("Other", |(g, _)| g)
    };
    let width = visible.iter().map(|c| c.get_name().len()).max().unwrap_or(0);
    let mut out = String::new();
    for heading in GROUPS.iter().map(|(g, _)| *g).chain(["Other"]) {
        let mut members: Vec<&&clap::Command> = visible.iter().filter(|c| group_of(c.get_name()) == heading).collect();
        if members.is_empty() {
            continue;
        }
        // The recall commands as declared, then the group's own, in its order.
        let rank = |name: &str| {
            recall
                .iter()
                .position(|r| r == name)
                .or_else(|| GROUPS.iter().flat_map(|(_, n)| n.iter()).position(|n| *n == name).map(|i| 1000 + i))
        };
        members.sort_by_key(|c| rank(c.get_name()).unwrap_or(usize::MAX));
        out.push_str(&format!("{heading}:\n"));
        for c in members {
            let about = c.get_about().map(|a| a.to_string()).unwrap_or_default();
            out.push_str(&format!("  {:<width$}  {about}\n", c.get_name()));
        }
        out.push('\n');
    }
    out.push_str(&format!("  {:<width$}  Print this message or the help of a command\n\n", "help"));
    out
}

/// `deja <runtime> …`: a wrapper's arguments all go to the harness (`--help` included).
fn runtime_command(r: &'static dyn Runtime) -> clap::Command {
    let mut cmd = clap::Command::new(r.name()).about(r.about());
    if !r.after_help().is_empty() {
        cmd = cmd.after_help(r.after_help());
    }
    if r.takes_args() {
        cmd = cmd.disable_help_flag(true).arg(
            Arg::new("args")
                .value_name("ARGS")
                .help("Arguments passed on unchanged.")
                .num_args(0..)
                .trailing_var_arg(true)
                .allow_hyphen_values(true)
                .value_parser(clap::value_parser!(OsString)),
        );
    }
    cmd
}

/// Runs a subcommand made from a declaration, if `name` is one.
fn run_declared(name: &str, m: &ArgMatches) -> Option<anyhow::Result<ExitCode>> {
    if let Some(mode) = recall_cmd::mode_of(name) {
        return Some(recall_cmd::run(mode, m));
    }
    if let Some(event) = HookEvent::of_subcommand(name) {
        return Some(Ok(hooks::run(event, m)));
    }
    let r = deja_core::wired::runtime(name)?;
    // A sidecar takes no arguments, so has no `args` to read.
    let args: Vec<OsString> = m.try_get_many::<OsString>("args").ok().flatten().map(|v| v.cloned().collect()).unwrap_or_default();
    Some(r.run(&deja_core::StoreEnv::from_process(), &args).map_err(anyhow::Error::from))
}

fn known_subcommand(cmd: &clap::Command, arg: &str) -> bool {
    arg.starts_with('-') || arg == "help" || cmd.get_subcommands().any(|s| s.get_name() == arg || s.get_all_aliases().any(|a| a == arg))
}

/// `deja search x --json | head` closes stdout early. Rust ignores SIGPIPE, so the next
/// `println!` panics with "failed printing to stdout: Broken pipe"; a reader that has
/// seen enough is no error, so that one panic ends the process quietly, as a
/// SIGPIPE-killed Unix tool would (exit 141 = 128 + SIGPIPE). Every other panic keeps
/// the default report.
fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info.payload().downcast_ref::<String>().map(String::as_str).or_else(|| info.payload().downcast_ref::<&str>().copied());
        if msg.is_some_and(|m| m.contains("failed printing to stdout") && m.contains("Broken pipe")) {
            std::process::exit(141);
        }
        default(info);
    }));
}

/// Everything deja writes is private to the user: the index and the notes hold their
/// working history. tantivy creates its files with the process umask, so the umask is
/// where 0600 is decided for them (directories are made 0700 explicitly).
fn private_umask() {
    #[cfg(unix)]
    // SAFETY: umask has no preconditions and cannot fail.
    unsafe {
        libc::umask(0o077);
    }
}

/// Keeps glibc from holding on to the indexer's freed buffers. glibc raises its mmap
/// threshold each time a large block is freed, so after the first segment is written
/// the writer's 1 MiB arena pages come from the heap, and the heap is not given back:
/// a cold index's peak memory grew with the history (416 MB at 1 GB, 886 MB at 5 GB on
/// the realistic benchmark corpus). Fixed at 1 MiB, those pages stay mapped on their
/// own and go back to the system when freed (329 MB at 1 GB).
fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; it is called before any thread
    // starts, and both values are valid thresholds.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 20);
    }
}

fn main() -> ExitCode {
    quiet_on_closed_stdout();
    private_umask();
    return_freed_memory();
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // Built once: a hook pays for this on every call.
    let mut cmd = cli();
    // `deja QUERY…` → `deja search QUERY…`
    let mut shorthand = false;
    if let Some(first) = args.get(1).and_then(|a| a.to_str()) {
        if !known_subcommand(&cmd, first) {
            args.insert(1, "search".into());
            shorthand = true;
        }
    }
    if args.len() == 1 {
        // Bare `deja` on a terminal opens the search screen; piped, or with DEJA_TUI=0,
        // it prints the help as it always has.
        if ui::wanted() {
            if let Err(e) = deja_core::StoreEnv::from_process().check_home() {
                eprintln!("deja: {e}");
                return ExitCode::from(2);
            }
            return match ui::run(ui::UiArgs { query: Vec::new() }) {
                Ok(code) => code,
                Err(e) => {
                    eprintln!("deja: {e:#}");
                    ExitCode::FAILURE
                }
            };
        }
        let _ = cmd.print_help();
        return ExitCode::from(2);
    }
    let matches = cmd.get_matches_from(args);
    let Some((name, sub)) = matches.subcommand() else {
        let _ = cli().print_help();
        return ExitCode::from(2);
    };
    // Hooks check HOME themselves: they fail open, with no output and exit 0. Demo and
    // bench build their own synthetic homes; everything else anchors the index and the
    // notes in the real one.
    if HookEvent::of_subcommand(name).is_none() && !matches!(name, "demo" | "bench") {
        if let Err(e) = deja_core::StoreEnv::from_process().check_home() {
            eprintln!("deja: {e}");
            return ExitCode::from(2);
        }
    }
    let result = match run_declared(name, sub) {
        Some(result) => result,
        None => match Cli::from_arg_matches(&matches) {
            Ok(cli) => run(cli.command, shorthand),
            Err(e) => e.exit(),
        },
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("deja: {e:#}");
            if e.downcast_ref::<search_cmd::IndexBuilding>().is_some() {
                ExitCode::from(search_cmd::EXIT_BUILDING)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// Runs a derived command.
fn run(command: Command, shorthand: bool) -> anyhow::Result<ExitCode> {
    match command {
        Command::Ui(a) => ui::run(a),
        Command::Search(a) => search_cmd::run(SearchArgs { shorthand, ..a }),
        Command::Index(a) => index_cmd::run(a),
        Command::Show(a) => show::run(a),
        Command::Restore(a) => restore_cmd::run(a),
        Command::Handoff(a) => handoff::run(a),
        Command::Harnesses(a) => harnesses::run(a),
        Command::Demo(a) => demo::run(a),
        Command::Remember(a) => remember::run(a),
        Command::Forget(a) => forget::run(a),
        Command::Export(a) => transfer::export(a),
        Command::Import(a) => transfer::import(a),
        Command::Config(a) => config_cmd::run(a),
        Command::Install(a) => install::install(a),
        Command::Uninstall(a) => install::uninstall(a),
        Command::Doctor(a) => doctor::run(a),
        Command::Mcp(a) => mcp::run(a),
        Command::Team(a) => team::run(a),
        Command::Bench(a) => bench::run(a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The subcommands made from declarations never shadow each other or a derived one:
    /// a runtime called like a command would make one of them unreachable.
    #[test]
    fn declared_subcommands_have_their_own_names() {
        let names: Vec<String> = cli().get_subcommands().map(|c| c.get_name().to_string()).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        for r in deja_core::wired::runtimes() {
            assert!(names.iter().any(|n| n == r.name()), "{} is a subcommand", r.name());
        }
        cli().debug_assert();
    }

    /// Every command a person types is in one of the help's groups, none in "Other",
    /// and the harness-only ones are in none.
    #[test]
    fn help_groups_every_visible_command() {
        let cmd = cli();
        let recall: Vec<String> = recall_cmd::commands().iter().map(|c| c.get_name().to_string()).collect();
        let groups = command_groups(&cmd, &recall);
        assert!(!groups.contains("Other:"), "{groups}");
        for c in cmd.get_subcommands() {
            let listed = groups.lines().any(|l| l.split_whitespace().next() == Some(c.get_name()));
            assert_eq!(listed, !c.is_hide_set(), "{}: {groups}", c.get_name());
        }
        let events = deja_core::wire::hook::HookEvent::ALL.len();
        assert!(cmd.get_subcommands().filter(|c| c.is_hide_set()).count() >= events, "hooks are hidden");
    }
}

//! The hook subcommands harnesses run (DESIGN §7; `deja install <id>-auto` wires them):
//!
//! | subcommand | when | what it hands the agent | budget |
//! | --- | --- | --- | --- |
//! | `hook-session-start` | a session opens | this project's digest: recent sessions, decisions, notes | 2 KB |
//! | `hook-prompt` | a prompt is submitted | the past sessions that match the prompt | 1.5 KB |
//! | `hook-tool` | before an edit or a command | the sessions that touched that file | 480 B |
//! | `hook-tool-after` | after a failed command | what fixed that error before | 480 B |
//! | `hook-precompact` | before a compaction | nothing: it queues a background `deja index` so the transcript is kept before the summary replaces it | — |
//!
//! Each reads the harness's payload from stdin — bounded, with a deadline, stopping at
//! the first complete JSON value, since some hosts keep the pipe open — and answers
//! through a hook envelope ([`deja_core::wire::hook`]): by default the Claude-shaped
//! `hookSpecificOutput.additionalContext`, with `--plain` the bare block, with
//! `--envelope NAME` the one a harness's adapter declares (how that harness hands the
//! payload over and reads the answer back). `--NAME`, the spelling installed configs
//! use (`hook-tool --crush`), is kept as a hidden alias of `--envelope NAME`; the
//! aliases are made from the registered envelopes, so this file names no harness.
//!
//! They fail open: any problem (garbage on stdin, no index, an index being rebuilt, a
//! panic) is exit 0 with no output. They never build or wait for the index, answer from
//! the last committed one, and never inject the same block twice into one agent session
//! (a small per-session record under the cache directory).

use std::io::{IsTerminal, Read};
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use clap::{Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use deja_core::index::{IndexPaths, IndexView};
use deja_core::recall::frame::{frame, Answer, CLOSE_TAG};
use deja_core::recall::mode::{Ask, Mode};
use deja_core::recall::query::Scope;
use deja_core::wire::hook::{HookEnvelope, HookEvent, HookPayload, Nested, Plain};
use deja_core::wired;
use deja_core::StoreEnv;
use serde_json::Value;

/// The largest payload read; past it the hook gives up (fails open).
const MAX_STDIN: usize = 4 << 20;
/// How long a hook waits for its payload.
const STDIN_DEADLINE: Duration = Duration::from_millis(300);

#[derive(Args, Clone, Debug)]
pub struct HookArgs {
    /// Print the bare block, for hosts that inject stdout verbatim (`--envelope plain`).
    #[arg(long)]
    pub plain: bool,
    /// `hook-prompt`: also hand over the session-start digest with a session's first
    /// prompt (for harnesses whose session-start context reaches no model).
    #[arg(long)]
    pub digest: bool,
    /// How the harness hands over its payload and reads the answer back, when not the
    /// default (JSON on stdin, `hookSpecificOutput.additionalContext` back).
    #[arg(long, value_name = "NAME", value_parser = envelope_names())]
    pub envelope: Option<String>,
}

/// The names `--envelope` takes.
fn envelope_names() -> clap::builder::PossibleValuesParser {
    let values: Vec<clap::builder::PossibleValue> =
        wired::envelopes().into_iter().map(|e| clap::builder::PossibleValue::new(e.name()).help(e.help())).collect();
    clap::builder::PossibleValuesParser::new(values)
}

/// Every hook subcommand: [`HookArgs`] and a hidden `--NAME` per envelope (the spelling
/// installed configs use; `--plain` is [`HookArgs::plain`] itself).
pub fn commands() -> Vec<Command> {
    HookEvent::ALL
        .into_iter()
        .map(|event| {
            let mut cmd = HookArgs::augment_args(Command::new(event.subcommand()).about(event.about()));
            // The flag's id is the envelope's name, distinct from HookArgs' own ids
            // (`plain`, `digest`, `envelope`): the tests hold every envelope to that.
            for e in wired::envelopes().into_iter().filter(|e| e.name() != Plain.name()) {
                cmd = cmd.arg(Arg::new(e.name()).long(e.name()).action(ArgAction::SetTrue).hide(true).help(e.help()));
            }
            cmd
        })
        .collect()
}

/// Runs the hook subcommand `event` with its parsed arguments; whatever happens, exit 0.
pub fn run(event: HookEvent, m: &ArgMatches) -> ExitCode {
    let out = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let args = HookArgs::from_arg_matches(m).ok()?;
        let envelope = envelope_of(&args, m);
        let env = StoreEnv::from_process();
        let payload = envelope.payload(event, read_payload(STDIN_DEADLINE), &env);
        let block = payload.as_ref().and_then(|v| block(event, &args, &HookPayload::from(v)));
        envelope.answer(event, payload.as_ref(), block.as_deref(), &env)
    }));
    if let Ok(Some(text)) = out {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.flush();
    }
    ExitCode::SUCCESS
}

/// The envelope the command line names: `--envelope NAME`, else an old `--NAME` flag,
/// else `--plain`, else the default.
fn envelope_of(args: &HookArgs, m: &ArgMatches) -> &'static dyn HookEnvelope {
    let named = args.envelope.clone().or_else(|| {
        wired::envelopes()
            .into_iter()
            .map(|e| e.name())
            // `--plain` is HookArgs' own flag, read below.
            .filter(|n| *n != Plain.name())
            .find(|n| m.try_get_one::<bool>(n).ok().flatten() == Some(&true))
            .map(str::to_string)
    });
    match named.and_then(|n| wired::envelope(&n)) {
        Some(e) => e,
        None if args.plain => &Plain,
        None => &Nested,
    }
}

/// Reads one JSON value from stdin: stops as soon as a complete value has arrived, at
/// the deadline, at end of input or past the size cap. A terminal gives no payload.
fn read_payload(deadline: Duration) -> Option<Value> {
    if std::io::stdin().is_terminal() {
        return None;
    }
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    // The reader thread may stay blocked on a pipe the host keeps open; the process
    // exits without joining it.
    std::thread::Builder::new()
        .name("deja-hook-stdin".into())
        .spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut buf = vec![0u8; 64 << 10];
            loop {
                match stdin.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => {
                        if tx.send(buf[..n].to_vec()).is_err() {
                            return;
                        }
                    }
                }
            }
        })
        .ok()?;
    let until = Instant::now() + deadline;
    let mut data = Vec::new();
    loop {
        let left = until.checked_duration_since(Instant::now())?;
        match rx.recv_timeout(left) {
            Ok(chunk) => {
                data.extend_from_slice(&chunk);
                if data.len() > MAX_STDIN {
                    return None;
                }
                if let Some(v) = first_value(&data) {
                    return Some(v);
                }
            }
            // End of input: whatever arrived is all there is.
            Err(mpsc::RecvTimeoutError::Disconnected) => return first_value(&data),
            Err(mpsc::RecvTimeoutError::Timeout) => return None,
        }
    }
}

/// The first complete JSON value in `data`, if one has fully arrived.
fn first_value(data: &[u8]) -> Option<Value> {
    let text = String::from_utf8_lossy(data);
    serde_json::Deserializer::from_str(&text).into_iter::<Value>().next()?.ok()
}

/// Prompt text without what hosts and deja itself put around it.
fn prompt_terms(prompt: &str) -> String {
    let mut text = deja_core::InjectedText::NONE.strip(prompt).into_owned();
    for (open, close) in [
        ("<hook_context>", "</hook_context>"),
        ("&lt;hook_context&gt;", "&lt;/hook_context&gt;"),
        ("<system-reminder>", "</system-reminder>"),
    ] {
        while let Some(a) = text.find(open) {
            let end = text[a..].find(close).map_or(text.len(), |b| a + b + close.len());
            text.replace_range(a..end, " ");
        }
    }
    text
}

/// The framed `<deja-recall>` block a hook hands over for `payload`, within the hook's
/// budget; `None` when there is nothing to say or it was said before in this session.
/// Every envelope wraps this. Each part is a recall mode asked in its hook form (a few
/// recent records read), the same question the CLI and MCP ask.
fn block(event: HookEvent, args: &HookArgs, payload: &HookPayload) -> Option<String> {
    let env = StoreEnv::from_process();
    env.check_home().ok()?;
    if event == HookEvent::Precompact {
        queue_index();
        return None;
    }
    let paths = IndexPaths::new(env.index_dir());
    // Never build or wait: no index yet, or one of another schema, is silence.
    if !paths.exists() || crate::search_cmd::check_not_building(&paths).is_err() {
        return None;
    }
    let view = IndexView::open(&paths).ok()?;
    let here = payload
        .cwd
        .clone()
        .or_else(|| std::env::var("CLAUDE_PROJECT_DIR").ok().filter(|d| !d.is_empty()))
        .or_else(|| std::env::current_dir().ok().map(|d| d.display().to_string()));
    let scope = Scope { here: here.clone(), ..Scope::default() };
    let ask = |mode: Mode, q: &str, limit: usize| -> Option<Answer> {
        let ask = Ask { q, scope: scope.clone(), limit: Some(limit), params: Vec::new(), hook: true };
        mode.ask(&view, &ask).ok()?.answer
    };
    let mut answers: Vec<Answer> = Vec::new();
    match event {
        HookEvent::SessionStart => {
            here.as_ref()?;
            answers.extend(ask(Mode::Orient, "", 4));
        }
        HookEvent::Prompt => {
            let terms = prompt_terms(payload.prompt.as_deref()?);
            if args.digest && here.is_some() && !seen_any(&env, payload.session.as_deref()) {
                answers.extend(ask(Mode::Orient, "", 3));
            }
            // A slash command or a one-word prompt names nothing to look for.
            if !terms.trim_start().starts_with('/') && terms.split_whitespace().count() >= 2 {
                // The team store, when one is set up, on its own thread within the hook's
                // deadline; silent when it does not answer (a hook fails open).
                let team = crate::team::settings(&env).is_ok().then(|| {
                    let q = deja_core::team::TeamQuery {
                        query: terms.clone(),
                        not_machine: crate::team::this_machine(&env),
                        limit: 2,
                        ..Default::default()
                    };
                    let env = env.clone();
                    std::thread::spawn(move || crate::team::search(&env, q, crate::team::SEARCH_DEADLINE_HOOK))
                });
                answers.extend(ask(Mode::Recall, &terms, 3));
                if let Some(Ok(Ok(t))) = team.map(|h| h.join()) {
                    if !t.sessions.is_empty() {
                        answers.push(deja_core::recall::render::team(&t, &terms));
                    }
                }
            }
        }
        HookEvent::Tool => {
            let file = payload.file.clone().or_else(|| payload.command.as_deref().and_then(path_in_command))?;
            answers.extend(ask(Mode::Blame, &file, 2));
        }
        HookEvent::ToolAfter => answers.extend(ask(Mode::Fix, payload.failure.as_deref()?, 2)),
        HookEvent::Precompact => {}
    }
    if answers.is_empty() {
        return None;
    }
    let per = event.budget() / answers.len();
    let block: String = answers.iter().map(|a| framed(a, per)).collect();
    first_time(&env, payload.session.as_deref(), &block).then_some(block)
}

/// The framed block alone (no paging note: a hook cannot page).
fn framed(a: &Answer, budget: usize) -> String {
    let text = frame(a, 0, budget);
    match text.find(CLOSE_TAG) {
        Some(i) => format!("{}\n", &text[..i + CLOSE_TAG.len()]),
        None => text,
    }
}

/// The first path-like argument of a shell command that names an existing file.
fn path_in_command(command: &str) -> Option<String> {
    command
        .split_whitespace()
        .skip(1)
        .map(|w| w.trim_matches(|c| c == '"' || c == '\''))
        .find(|w| !w.starts_with('-') && w.contains(['/', '.']) && std::path::Path::new(w).is_file())
        .map(str::to_string)
}

/// Where hooks remember what they injected into which session.
fn seen_dir(env: &StoreEnv) -> PathBuf {
    env.index_dir().join("hooks")
}

fn seen_file(env: &StoreEnv, session: &str) -> PathBuf {
    seen_dir(env).join(format!("{:016x}", xxhash_rust::xxh3::xxh3_64(session.as_bytes())))
}

fn seen_any(env: &StoreEnv, session: Option<&str>) -> bool {
    session.is_some_and(|s| seen_file(env, s).exists())
}

/// Records `block` for `session` and says whether it was new. Without a session id
/// there is nothing to key on, and every block counts as new.
fn first_time(env: &StoreEnv, session: Option<&str>, block: &str) -> bool {
    let Some(session) = session else { return true };
    let path = seen_file(env, session);
    let digest = format!("{:016x}\n", xxhash_rust::xxh3::xxh3_64(block.as_bytes()));
    let seen = std::fs::read_to_string(&path).unwrap_or_default();
    if seen.lines().any(|l| format!("{l}\n") == digest) {
        return false;
    }
    if deja_core::fsutil::private_dir(&seen_dir(env)).is_ok() {
        use std::io::Write;
        // Appending one short line; a lost record only risks one repeated block.
        if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(&path) {
            let _ = f.write_all(digest.as_bytes());
        }
    }
    true
}

/// Starts `deja index -q` in the background, detached from the hook's pipes, so the
/// transcript is in deja's copy before the compaction summary replaces it in the
/// harness's context. The hook itself returns at once. Nothing to do while a
/// `deja index --watch` runs.
fn queue_index() {
    let env = StoreEnv::from_process();
    // A watcher has the transcript indexed already.
    if deja_core::index::watcher_running(&IndexPaths::new(env.index_dir())).is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else { return };
    let _ = std::process::Command::new(exe)
        .args(["index", "-q"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every envelope's name is a flag of every hook subcommand: unique, not one of
    /// [`HookArgs`]' own, and parsed back to that envelope in both spellings.
    #[test]
    fn every_envelope_is_named_by_both_spellings() {
        let names: Vec<&str> = wired::envelopes().iter().map(|e| e.name()).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "envelope names are unique: {names:?}");
        assert!(names.len() > 1, "the adapters' envelopes are registered: {names:?}");
        for cmd in commands() {
            for name in &names {
                for argv in [vec!["deja", "--envelope", name], vec!["deja", &format!("--{name}")]] {
                    let m = cmd.clone().try_get_matches_from(&argv).unwrap_or_else(|e| panic!("{argv:?}: {e}"));
                    let args = HookArgs::from_arg_matches(&m).expect("args");
                    assert_eq!(envelope_of(&args, &m).name(), *name, "{} {argv:?}", cmd.get_name());
                }
            }
            let m = cmd.clone().try_get_matches_from(["deja"]).expect("no flags");
            assert_eq!(envelope_of(&HookArgs::from_arg_matches(&m).expect("args"), &m).name(), Nested.name());
        }
    }

    #[test]
    fn a_named_envelope_wins_over_plain_and_its_old_flag_is_hidden() {
        let cmd = commands().into_iter().find(|c| c.get_name() == "hook-tool").expect("hook-tool");
        let name = wired::envelopes().into_iter().map(|e| e.name()).find(|n| *n != "plain").expect("an adapter's envelope");
        let m = cmd.clone().try_get_matches_from(["deja", "--plain", &format!("--{name}")]).expect("parsed");
        assert_eq!(envelope_of(&HookArgs::from_arg_matches(&m).expect("args"), &m).name(), name);
        let help = cmd.clone().render_long_help().to_string();
        assert!(!help.contains(&format!("--{name} ")) && help.contains("--envelope"), "{help}");
    }
}

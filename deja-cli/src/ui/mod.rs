//! `deja ui` (and bare `deja` on a terminal): the full-screen search view.
//!
//! Type to search every past session; read one with its commands, diffs and matches;
//! resume it, hand it off, copy its resume command; look at pictures of the history.
//!
//! The parts: [`query`] reads the line's words and filters, [`app`] holds the state and
//! what each key does, [`session`] lays a session out and walks its matches,
//! [`pictures`] counts the history, [`draw`] draws all of it with ratatui, [`worker`]
//! asks the index (and the team store, when one is set up) on threads of its own. Only
//! this file touches the terminal: raw mode and the alternate screen are entered once
//! and always left — on quit, on an error, on a panic (a hook restores it before the
//! report is printed), on SIGTERM, SIGHUP or SIGINT (flags the loop polls), and before
//! a resume or handoff starts another program.
//!
//! ratatui (drawing, layout, a test backend) and crossterm (its default backend: raw
//! mode, key and resize events on every platform) are the maintained convention for
//! this in Rust; see the root `Cargo.toml`.

mod app;
mod draw;
mod pictures;
mod query;
mod session;
mod text;
mod worker;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use crossterm::event::{self, Event};
use crossterm::{cursor, execute, terminal};
use deja_core::index::IndexPaths;
use deja_core::launch::Handoff;
use deja_core::{StoreEnv, Timestamp};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

use app::{App, Ask, Effect};
use worker::{Job, Reply, TeamJob};

#[derive(Args)]
#[command(
    long_about = "Open the search screen: type to search every past session (the list follows as you type), \
                  read one with its commands, exit codes and diffs, resume it in its own harness, hand it to \
                  another, or look at pictures of your history. Bare `deja` on a terminal opens it too \
                  (DEJA_TUI=0 turns that off and prints the help instead). With a team store set up \
                  (`deja team init`), a Team tab searches it: other machines' sessions, labelled \
                  author@machine, to read here and resume where they ran.",
    after_help = "Keys: ↑↓ choose · Enter read · Tab this project / all projects / kept after deletion / team \
                  (with a team store) · ^R resume · ^O hand off · ^Y copy (on the Team tab: `deja show --team …`) · \
                  ^P pictures · F1 every key · Esc quit.\n\
                  Filters typed in the line: harness:codex project:api since:7d role:command file:src/auth.rs \
                  (the Team tab applies all but file:)\n\n\
                  Exit status: 0 closed · 2 not a terminal (use `deja search`)"
)]
pub struct UiArgs {
    /// What to search for first (the line can be changed as soon as the screen opens).
    pub query: Vec<String>,
}

/// True when bare `deja` should open the screen: both ends are a terminal and
/// `DEJA_TUI` does not turn it off.
pub fn wanted() -> bool {
    StoreEnv::from_process().switch("DEJA_TUI", true) && std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

pub fn run(args: UiArgs) -> Result<ExitCode> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        eprintln!("deja: the search screen needs a terminal; `deja search WORDS…` prints results instead");
        return Ok(ExitCode::from(2));
    }
    let env = StoreEnv::from_process();
    let paths = IndexPaths::new(env.index_dir());
    let here = crate::recall_cmd::current_dir();
    let targets = handoff_targets();
    let mut app = App::new(&args.query.join(" "), here.clone(), targets);
    // Only the settings are read here: the store is asked when the Team tab searches.
    app.team = crate::team::this_machine(&env);

    let (job_tx, job_rx) = mpsc::channel::<Job>();
    let (reply_tx, reply_rx) = mpsc::channel::<Reply>();
    {
        let (paths, replies) = (paths.clone(), reply_tx.clone());
        std::thread::Builder::new().name("deja-ui-index".into()).spawn(move || worker::serve(paths, job_rx, replies))?;
    }
    let team_tx = match app.team {
        Some(_) => {
            let (tx, rx) = mpsc::channel::<TeamJob>();
            let (env, replies) = (env.clone(), reply_tx.clone());
            std::thread::Builder::new().name("deja-ui-team".into()).spawn(move || worker::serve_team(env, rx, replies))?;
            Some(tx)
        }
        None => None,
    };
    let jobs = Jobs { index: job_tx, team: team_tx };
    {
        let (env, paths, replies) = (env.clone(), paths.clone(), reply_tx);
        std::thread::Builder::new().name("deja-ui-refresh".into()).spawn(move || worker::refresh(env, paths, replies))?;
    }
    jobs.index.send(Job::Start { here, home: env.home().to_path_buf() }).context("the index thread stopped")?;

    // The signal that asked the screen to close, if any: the loop polls it, closes the
    // screen, and exits as a process killed by it would report (128 + its number).
    let stop = Arc::new(AtomicUsize::new(0));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT, signal_hook::consts::SIGHUP] {
        signal_hook::flag::register_usize(sig, stop.clone(), sig as usize).context("installing the signal handlers")?;
    }
    let mut term = Screen::enter()?;
    let watching = Arc::new(AtomicBool::new(true));
    watch_the_terminal(stop.clone(), watching.clone());
    let outcome = event_loop(&mut term.terminal, &mut app, &jobs, &reply_rx, &stop);
    // From here the terminal may belong to a program the screen starts (a resume).
    watching.store(false, Ordering::Relaxed);
    drop(term);
    match outcome? {
        Exit::Quit => Ok(ExitCode::SUCCESS),
        Exit::Signal(sig) => Ok(ExitCode::from(128u8.saturating_add(u8::try_from(sig).unwrap_or(0)))),
        Exit::Run(cmd) => cmd.start(),
    }
}

/// How often the watchdog looks at the terminal and at a signal the loop has not acted on.
const WATCH_EVERY: Duration = Duration::from_millis(250);
/// How long a signal may wait for the loop before the watchdog ends the process.
const SIGNAL_GRACE: Duration = Duration::from_secs(1);

/// Ends the process when the loop cannot: once its terminal is gone (the emulator or
/// tmux server closed, so the pty reads as end of file), crossterm's reader retries the
/// read forever without returning, so neither a key nor the loop's signal check ever
/// comes back — a process seen spinning a core for an hour after its pane was killed.
/// A hang-up of standard input ends it at once (there is nothing left to restore); a
/// signal the loop has not acted on within a second restores what it can and ends it
/// with the code a process killed by that signal reports.
#[cfg(unix)]
fn watch_the_terminal(stop: Arc<AtomicUsize>, watching: Arc<AtomicBool>) {
    let spawned = std::thread::Builder::new().name("deja-ui-watch".into()).spawn(move || {
        let mut signalled: Option<Instant> = None;
        loop {
            std::thread::sleep(WATCH_EVERY);
            if !watching.load(Ordering::Relaxed) {
                return;
            }
            let mut fd = libc::pollfd { fd: libc::STDIN_FILENO, events: libc::POLLIN, revents: 0 };
            // SAFETY: one valid pollfd for the length given, and a zero timeout.
            let ready = unsafe { libc::poll(&mut fd, 1, 0) };
            if ready > 0 && fd.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
                std::process::exit(128 + libc::SIGHUP);
            }
            let sig = stop.load(Ordering::Relaxed);
            if sig != 0 && signalled.get_or_insert_with(Instant::now).elapsed() >= SIGNAL_GRACE {
                restore();
                std::process::exit(128 + i32::try_from(sig).unwrap_or(0));
            }
        }
    });
    // Without the watchdog the screen still works; only a vanished terminal is not noticed.
    drop(spawned);
}

#[cfg(not(unix))]
fn watch_the_terminal(_stop: Arc<AtomicUsize>, _watching: Arc<AtomicBool>) {}

/// Raw mode and the alternate screen, left when dropped or on a panic.
struct Screen {
    terminal: Terminal<CrosstermBackend<std::io::Stdout>>,
}

/// Leaves raw mode and the alternate screen and shows the cursor; every step is tried
/// whatever the others did.
fn restore() {
    let _ = terminal::disable_raw_mode();
    let _ = execute!(std::io::stdout(), terminal::LeaveAlternateScreen, cursor::Show);
}

impl Screen {
    fn enter() -> Result<Screen> {
        // Before anything changes the terminal, so a panic from here on restores it.
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
        terminal::enable_raw_mode().context("could not put the terminal in raw mode")?;
        let entered = execute!(std::io::stdout(), terminal::EnterAlternateScreen, cursor::Hide)
            .context("could not switch to the alternate screen")
            .and_then(|()| Terminal::new(CrosstermBackend::new(std::io::stdout())).context("could not start drawing"));
        match entered {
            Ok(terminal) => Ok(Screen { terminal }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore();
    }
}

/// How the screen ended.
enum Exit {
    Quit,
    /// Closed by this signal.
    Signal(usize),
    /// Run a program once the terminal is back.
    Run(Launch),
}

/// A program a key asked for: a resume command or `deja handoff`.
struct Launch {
    argv: Vec<String>,
    dir: Option<String>,
    shown: String,
}

impl Launch {
    fn start(self) -> Result<ExitCode> {
        let Some(program) = self.argv.first() else { bail!("nothing to run") };
        let path = match which::which(program) {
            Ok(p) => p,
            Err(_) => {
                eprintln!("deja: `{program}` is not on PATH; the command was:\n  {}", self.shown);
                return Ok(ExitCode::from(1));
            }
        };
        eprintln!("deja: running {}", self.shown);
        let mut cmd = std::process::Command::new(path);
        cmd.args(&self.argv[1..]);
        if let Some(d) = &self.dir {
            cmd.current_dir(d);
        }
        crate::handoff::start(cmd, program)
    }
}

/// Where the loop sends work: the index thread, and the team thread when there is one.
struct Jobs {
    index: mpsc::Sender<Job>,
    team: Option<mpsc::Sender<TeamJob>>,
}

impl Jobs {
    fn team(&self, job: TeamJob) -> Result<()> {
        let Some(team) = &self.team else { bail!("no team store is set up") };
        team.send(job).context("the team thread stopped")
    }
}

/// How often an idle screen looks for commits to the index (a watcher indexing what
/// agents write), to search the line again: a stat of one file each time.
const POLL_EVERY: Duration = Duration::from_secs(3);

/// How long the loop sleeps with nothing due: short enough to notice a signal soon.
const IDLE_TICK: Duration = Duration::from_millis(200);
/// How often it looks for replies while the index thread is working.
const BUSY_TICK: Duration = Duration::from_millis(8);

fn event_loop(
    terminal: &mut Terminal<CrosstermBackend<std::io::Stdout>>,
    app: &mut App,
    jobs: &Jobs,
    replies: &mpsc::Receiver<Reply>,
    stop: &AtomicUsize,
) -> Result<Exit> {
    let theme = draw::Theme::from_env();
    let mut started = false;
    // Jobs sent and not answered yet, searches apart: a search superseded while it
    // waited is never answered, so the app's own flag says whether one is out.
    let mut waiting = 1usize;
    let mut polled = Instant::now();
    loop {
        let sig = stop.load(Ordering::Relaxed);
        if sig != 0 {
            return Ok(Exit::Signal(sig));
        }
        terminal.draw(|f| draw::draw(f, app, theme, Timestamp::now())).context("drawing the screen")?;
        let now = Instant::now();
        let busy = waiting > 0 || app.searching;
        let mut tick = if busy { BUSY_TICK } else { IDLE_TICK };
        if let Some(due) = app.due() {
            tick = tick.min(due.saturating_duration_since(now));
        }
        if event::poll(tick).context("reading the terminal")? {
            // Every event already waiting, then one draw: a paste is one frame.
            loop {
                // A paste arrives as keys (bracketed paste is not asked for); a resize
                // is drawn at the next turn of the loop.
                if let Event::Key(k) = event::read().context("reading the terminal")? {
                    if let Some(effect) = app.key(k, Instant::now()) {
                        if let Some(exit) = carry_out(effect, app, jobs, &mut waiting)? {
                            return Ok(exit);
                        }
                    }
                }
                if !event::poll(Duration::ZERO).context("reading the terminal")? {
                    break;
                }
            }
        }
        loop {
            match replies.try_recv() {
                Ok(r) => {
                    // Notes, refreshes and sub-agent runs come unasked, and searches are
                    // tracked by the app (a replaced one is never answered): none ends a wait.
                    if !matches!(
                        r,
                        Reply::IndexNote(_) | Reply::Refreshed | Reply::Children { .. } | Reply::Search { .. } | Reply::TeamSearch { .. }
                    ) {
                        waiting = waiting.saturating_sub(1);
                    }
                    match r {
                        Reply::Started { project } => {
                            app.start(project, Instant::now());
                            started = true;
                        }
                        Reply::Search { n, line, result } => app.answer(n, line, result.map(|r| *r)),
                        Reply::TeamSearch { n, line, result } => app.answer_team(n, line, result.map(|r| *r)),
                        Reply::Opened(v) => app.opened(v),
                        Reply::Children { key, titles } => app.children(&key, titles),
                        Reply::Text { title, lines } => match lines {
                            Ok(lines) => app.show_text(title, lines),
                            Err(e) => app.message = Some(format!("could not read the index: {e}")),
                        },
                        Reply::Pictures(p) => app.pictures = Some(p),
                        Reply::IndexNote(n) => app.index_note = n,
                        Reply::Refreshed if started => app.research(Instant::now()),
                        Reply::Refreshed => {}
                    }
                }
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => bail!("the index thread stopped"),
            }
        }
        if started && waiting == 0 && !app.searching && polled.elapsed() >= POLL_EVERY {
            polled = Instant::now();
            jobs.index.send(Job::Poll).context("the index thread stopped")?;
        }
        if let Some((n, ask)) = app.take_search(Instant::now(), Timestamp::now()) {
            let line = app.line.text.clone();
            match ask {
                Ask::Index(req) => jobs.index.send(Job::Search { n, line, req }).context("the index thread stopped")?,
                Ask::Team(q) => jobs.team(TeamJob::Search { n, line, q })?,
            }
        }
    }
}

/// Does what a key asked beyond the state change; `Some` ends the screen.
fn carry_out(effect: Effect, app: &App, jobs: &Jobs, waiting: &mut usize) -> Result<Option<Exit>> {
    let job = match effect {
        Effect::Quit => return Ok(Some(Exit::Quit)),
        Effect::Resume { argv, dir, shown } => return Ok(Some(Exit::Run(Launch { argv, dir, shown }))),
        Effect::Handoff { session, to } => {
            let exe = std::env::current_exe().context("finding the deja binary")?.display().to_string();
            let shown = format!("deja handoff {} --to {to}", deja_core::launch::quote(&session));
            let argv = vec![exe, "handoff".into(), session, "--to".into(), to];
            return Ok(Some(Exit::Run(Launch { argv, dir: None, shown })));
        }
        Effect::Copy(text) => {
            copy(&text);
            return Ok(None);
        }
        Effect::Open { meta, focus } => Job::Open { meta, focus, terms: app.terms() },
        Effect::OpenTeam { key, focus } => {
            *waiting += 1;
            jobs.team(TeamJob::Open { key, focus, terms: app.terms() })?;
            return Ok(None);
        }
        Effect::Digest(meta) => Job::Digest(meta),
        Effect::Files(meta) => Job::Files(meta),
        Effect::Pictures => Job::Pictures,
    };
    *waiting += 1;
    jobs.index.send(job).context("the index thread stopped")?;
    Ok(None)
}

/// Puts `text` on the clipboard with OSC 52, which terminals (and tmux with
/// `set-clipboard on`) pass to the system clipboard, over SSH too. Whether it worked
/// cannot be known, so the status line shows the text as well.
fn copy(text: &str) {
    use base64::Engine as _;
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    let mut out = std::io::stdout();
    let _ = write!(out, "\x1b]52;c;{encoded}\x07");
    let _ = out.flush();
}

/// The harnesses a session can be handed to here: those started with a prompt
/// (`deja handoff`'s exec mode) whose program is on PATH, by name.
fn handoff_targets() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = deja_core::registry()
        .into_iter()
        .filter_map(|f| {
            let info = f.info();
            match info.launch.handoff {
                Handoff::Exec(argv) if argv.first().is_some_and(|p| which::which(p).is_ok()) => {
                    Some((info.id.to_string(), info.name.to_string()))
                }
                _ => None,
            }
        })
        .collect();
    out.sort_by(|a, b| a.1.cmp(&b.1));
    out
}

#[cfg(test)]
mod tests;

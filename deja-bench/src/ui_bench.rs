//! `deja-bench ui`: keystroke-to-frame latency of the search screen, measured from
//! outside as a person sees it.
//!
//! The `deja` binary runs `deja ui` on a pseudo-terminal of its own (`openpty`, the
//! child a session leader with the pty as its controlling terminal). A reader thread
//! timestamps every chunk the screen writes; a terminal emulator in a library (`vt100`)
//! turns the chunks into the screen a person would see. The search benchmark's queries
//! are typed one key at a time, `--gap` apart, and for each key two moments are taken:
//!
//! - **echo** — the first frame whose query line shows the key (the line's text and the
//!   cursor where the key put it): what "a frame within 16 ms" is about;
//! - **results** — the first frame after it that shows the answer for that line (the
//!   info line said `searching…` and no longer does): the debounce (40 ms) plus the
//!   search plus the drawing.
//!
//! After each query Enter opens the first session (**open**: until the session view is
//! drawn) and Esc goes back (**back**). The same run on an empty home (no history, an
//! empty index) is the baseline: the screen's own cost, so the ratio is what the
//! 1 GB index adds. Keys are sent only after the previous key's answer was drawn, so a
//! slow answer shows as a slow figure rather than as overlapping keys.
//!
//! Unix only (`openpty`, sessions and controlling terminals).

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use serde::Serialize;

use super::corpus::Corpus;
use super::search_bench::{ensure_index, queries, stop_watcher};
use super::stats::{Latency, Machine};

#[derive(Args)]
pub struct UiBenchArgs {
    /// The corpus directory (from `deja bench corpus`).
    #[arg(long, value_name = "DIR")]
    pub corpus: PathBuf,
    /// The index to search (default: `<corpus>/index`; built when missing).
    #[arg(long, value_name = "DIR")]
    pub index: Option<PathBuf>,
    /// Queries per class of the search benchmark's query set.
    #[arg(long, default_value_t = 3)]
    pub per_class: usize,
    /// Milliseconds from one key to the next (a brisk typist: 120).
    #[arg(long, default_value_t = 120)]
    pub gap: u64,
    /// The terminal's size, columns x rows.
    #[arg(long, default_value = "120x40", value_parser = parse_size)]
    pub size: (u16, u16),
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

fn parse_size(s: &str) -> Result<(u16, u16), String> {
    let (c, r) = s.split_once('x').ok_or_else(|| format!("`{s}`: give columns x rows, like 120x40"))?;
    let n = |v: &str| v.trim().parse::<u16>().map_err(|e| format!("`{v}` in `{s}`: {e}"));
    let (c, r) = (n(c)?, n(r)?);
    if c < 40 || r < 10 {
        return Err(format!("{s} is too small for the list and the query line; 40x10 at least"));
    }
    Ok((c, r))
}

/// The figures of one home.
#[derive(Debug, Default, Serialize)]
struct Run {
    home: String,
    /// From the spawn to the first frame with the list of recent sessions.
    first_frame_ms: f64,
    keys: usize,
    echo: Latency,
    results: Latency,
    /// Results for the whole query (its last key): the answer a person waits for.
    results_whole: Latency,
    open: Latency,
    back: Latency,
    /// Keys whose frame did not come within the timeout.
    missed: usize,
    /// The screen closed with status 0 and left the alternate screen.
    closed_cleanly: bool,
}

#[derive(Debug, Serialize)]
struct UiBench {
    benchmark: &'static str,
    date: String,
    machine: Machine,
    size: String,
    gap_ms: u64,
    queries: usize,
    /// The same screen on an empty home: what the screen costs by itself.
    baseline: Run,
    corpus: Run,
    /// Corpus p50 ÷ baseline p50, per figure.
    echo_p50_ratio: f64,
    results_p50_ratio: f64,
}

/// How long a frame may take before the key counts as missed.
const TIMEOUT: Duration = Duration::from_secs(5);

pub fn run(args: UiBenchArgs) -> Result<std::process::ExitCode> {
    let here = Machine::here();
    let say = |m: String| {
        if !args.json {
            eprintln!("{m}");
        }
    };
    let corpus = Corpus::open(&args.corpus)?;
    let index = args.index.clone().unwrap_or_else(|| args.corpus.join("index"));
    ensure_index(&corpus, &index, &say)?;
    let typed: Vec<String> = queries(&corpus, args.per_class).into_iter().map(|q| q.text).collect();
    if typed.is_empty() {
        bail!("the corpus gave no queries to type");
    }
    let scratch = tempfile::tempdir().context("creating a scratch directory")?;
    let cwd = scratch.path().join("elsewhere");
    std::fs::create_dir_all(&cwd)?;

    say("baseline: the screen on an empty home".into());
    let empty = scratch.path().join("empty");
    let mut cmd = Command::new(crate::deja_bin());
    cmd.env_clear()
        .env("HOME", empty.join("home"))
        .env("DEJA_INDEX_DIR", empty.join("index"))
        .env("DEJA_DATA_DIR", empty.join("data"))
        .env("PATH", std::env::var_os("PATH").unwrap_or_default());
    std::fs::create_dir_all(empty.join("home"))?;
    let baseline = measure(cmd, "empty home", &cwd, &typed, &args, &say)?;
    stop_watcher(&empty.join("index"));

    say(format!("the corpus: {}", corpus.describe()));
    let corpus_run = measure(corpus.deja_command(&index)?, "the corpus", &cwd, &typed, &args, &say)?;
    stop_watcher(&index);

    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    let result = UiBench {
        benchmark: "ui",
        date: super::today(),
        machine: here.ended(),
        size: format!("{}x{}", args.size.0, args.size.1),
        gap_ms: args.gap,
        queries: typed.len(),
        echo_p50_ratio: ratio(corpus_run.echo.p50_ms, baseline.echo.p50_ms),
        results_p50_ratio: ratio(corpus_run.results.p50_ms, baseline.results.p50_ms),
        baseline,
        corpus: corpus_run,
    };
    super::report(args.json, &result, render)
}

fn render(b: &UiBench) -> String {
    let mut out = format!(
        "search screen, keystroke to frame ({} queries typed {} ms a key, {}), {}\n\n",
        b.queries,
        b.gap_ms,
        b.size,
        b.machine.line()
    );
    out.push_str(&format!(
        "{:<12} {:>6} {:>9} {:>9} {:>9} {:>9} {:>7}\n",
        "home", "keys", "echo p50", "echo p95", "res. p50", "res. p95", "missed"
    ));
    for r in [&b.baseline, &b.corpus] {
        out.push_str(&format!(
            "{:<12} {:>6} {:>7.1}ms {:>7.1}ms {:>7.1}ms {:>7.1}ms {:>7}\n",
            r.home, r.keys, r.echo.p50_ms, r.echo.p95_ms, r.results.p50_ms, r.results.p95_ms, r.missed
        ));
    }
    for r in [&b.baseline, &b.corpus] {
        let opened = if r.open.n == 0 {
            "nothing to open".to_string()
        } else {
            format!("open a session p50 {:.1} ms / p95 {:.1} ms, back p50 {:.1} ms", r.open.p50_ms, r.open.p95_ms, r.back.p50_ms)
        };
        out.push_str(&format!(
            "{}: results for the whole query p50 {:.1} ms / p95 {:.1} ms, {opened}, first frame {:.0} ms, closed cleanly: {}\n",
            r.home, r.results_whole.p50_ms, r.results_whole.p95_ms, r.first_frame_ms, r.closed_cleanly
        ));
    }
    out.push_str(&format!("corpus ÷ baseline at p50: echo {:.2}, results {:.2}\n", b.echo_p50_ratio, b.results_p50_ratio));
    out
}

/// One `deja ui` on a pty: type every query, open and leave its first session, quit.
fn measure(mut cmd: Command, home: &str, cwd: &Path, typed: &[String], args: &UiBenchArgs, say: &dyn Fn(String)) -> Result<Run> {
    let (cols, rows) = args.size;
    cmd.arg("ui").env("TERM", "xterm-256color").current_dir(cwd);
    let started = Instant::now();
    let (mut child, mut input, chunks) = spawn_on_pty(cmd, cols, rows)?;
    let mut screen = Screen { parser: vt100::Parser::new(rows, cols, 0), chunks };
    let mut run = Run { home: home.into(), ..Run::default() };

    let first = screen.wait(Duration::from_secs(60), |s, _| s.info().contains("session") && !s.info().contains("searching"));
    let Some(first) = first else {
        let _ = child.kill();
        bail!("{home}: the screen did not show its first list within a minute; it showed:\n{}", screen.text());
    };
    run.first_frame_ms = ms(first - started);
    // The first refresh of the home's stores runs beside the screen: let it finish.
    std::thread::sleep(Duration::from_secs(2));
    screen.drain();

    let (mut echo, mut results, mut whole, mut open, mut back) = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (qi, q) in typed.iter().enumerate() {
        let mut line = String::new();
        let last = q.chars().count().saturating_sub(1);
        for (ci, c) in q.chars().enumerate() {
            line.push(c);
            let sent = Instant::now();
            input.write_all(c.to_string().as_bytes()).context("typing into the pty")?;
            run.keys += 1;
            let expected = line.clone();
            let mut echoed = None;
            let mut searching = false;
            let done = screen.wait(TIMEOUT, |s, at| {
                if echoed.is_none() && s.shows_line(&expected) {
                    echoed = Some(at);
                }
                searching |= s.info().contains("searching");
                echoed.is_some() && searching && !s.info().contains("searching") && s.shows_line(&expected)
            });
            match (echoed, done) {
                (Some(e), Some(d)) => {
                    echo.push(e - sent);
                    results.push(d - sent);
                    if ci == last {
                        whole.push(d - sent);
                    }
                }
                (Some(e), None) => {
                    echo.push(e - sent);
                    miss(&mut run, &screen, &expected)?;
                }
                _ => miss(&mut run, &screen, &expected)?,
            }
            let next = sent + Duration::from_millis(args.gap);
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
        }
        // Open the first session, then go back to the list.
        if screen.info().contains("nothing matched") || screen.info().contains("no session") {
            clear(&mut input, &mut screen)?;
            continue;
        }
        let sent = Instant::now();
        input.write_all(b"\r")?;
        match screen.wait(TIMEOUT, |s, _| s.in_session()) {
            Some(t) => open.push(t - sent),
            None => run.missed += 1,
        }
        std::thread::sleep(Duration::from_millis(args.gap));
        let sent = Instant::now();
        input.write_all(b"\x1b")?;
        match screen.wait(TIMEOUT, |s, _| s.row(1).starts_with('›')) {
            Some(t) => back.push(t - sent),
            None => run.missed += 1,
        }
        clear(&mut input, &mut screen)?;
        if (qi + 1) % 5 == 0 {
            say(format!("  {home}: {} of {} queries typed", qi + 1, typed.len()));
        }
    }
    // Esc clears a line, a second Esc quits.
    input.write_all(b"\x1b")?;
    std::thread::sleep(Duration::from_millis(100));
    input.write_all(b"\x1b")?;
    let status = wait_for_exit(&mut child, Duration::from_secs(10))?;
    screen.drain();
    run.closed_cleanly = status.is_some_and(|s| s.success()) && !screen.parser.screen().alternate_screen();
    if status.is_none() {
        let _ = child.kill();
    }
    run.echo = Latency::of(&echo);
    run.results = Latency::of(&results);
    run.results_whole = Latency::of(&whole);
    run.open = Latency::of(&open);
    run.back = Latency::of(&back);
    Ok(run)
}

/// Counts a key whose frame did not come; several in a row mean the screen is not
/// what this benchmark expects, and it stops showing what it saw.
fn miss(run: &mut Run, screen: &Screen, line: &str) -> Result<()> {
    run.missed += 1;
    if run.missed >= 3 && run.missed * 10 > run.keys {
        bail!("{}: no frame answered the line `{line}` within {TIMEOUT:?}; the screen shows:\n{}", run.home, screen.text());
    }
    Ok(())
}

/// Ctrl-U and the list of recent sessions again.
fn clear(input: &mut File, screen: &mut Screen) -> Result<()> {
    std::thread::sleep(Duration::from_millis(50));
    input.write_all(b"\x15")?;
    let mut searching = false;
    screen.wait(TIMEOUT, |s, _| {
        searching |= s.info().contains("searching");
        searching && !s.info().contains("searching") && s.row(1).starts_with("› type to search")
    });
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// What the screen wrote, a chunk at a time, with when it was read.
type Chunks = mpsc::Receiver<(Instant, Vec<u8>)>;

/// What the terminal shows, fed by the reader thread's timestamped chunks.
struct Screen {
    parser: vt100::Parser,
    chunks: Chunks,
}

impl Screen {
    /// Feeds chunks until `done` holds after one (returns when it arrived) or `timeout`.
    fn wait(&mut self, timeout: Duration, mut done: impl FnMut(&Screen, Instant) -> bool) -> Option<Instant> {
        let until = Instant::now() + timeout;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let (at, bytes) = self.chunks.recv_timeout(left).ok()?;
            self.parser.process(&bytes);
            if done(self, at) {
                return Some(at);
            }
        }
    }

    /// Takes in whatever has been written so far.
    fn drain(&mut self) {
        while let Ok((_, bytes)) = self.chunks.try_recv() {
            self.parser.process(&bytes);
        }
    }

    fn row(&self, n: u16) -> String {
        let cols = self.parser.screen().size().1;
        self.parser.screen().rows(0, cols).nth(n as usize).unwrap_or_default()
    }

    /// The info line under the query line.
    fn info(&self) -> String {
        self.row(2)
    }

    /// The query line holds `line` with the cursor after it.
    fn shows_line(&self, line: &str) -> bool {
        let want = format!("› {line}");
        let cursor = self.parser.screen().cursor_position();
        self.row(1).trim_end() == want.trim_end() && cursor == (1, (2 + unicode_width::UnicodeWidthStr::width(line)) as u16)
    }

    /// A session is drawn (not the list, not "reading the session…").
    fn in_session(&self) -> bool {
        !self.row(1).starts_with('›') && !self.text().contains("reading the session") && !self.row(0).trim().is_empty()
    }

    fn text(&self) -> String {
        self.parser.screen().contents()
    }
}

/// Starts `cmd` on a new pty of `cols`×`rows` as the leader of a session whose
/// controlling terminal it is; returns the child, the pty's input end and the chunks
/// a reader thread takes from its output.
fn spawn_on_pty(mut cmd: Command, cols: u16, rows: u16) -> Result<(Child, File, Chunks)> {
    let (mut master, mut slave) = (-1, -1);
    let size = libc::winsize { ws_row: rows, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: two out-pointers to c_int, no name buffer, no termios, one winsize.
    if unsafe { libc::openpty(&mut master, &mut slave, std::ptr::null_mut(), std::ptr::null(), &size) } != 0 {
        bail!("openpty failed: {}", std::io::Error::last_os_error());
    }
    // SAFETY: openpty returned two open descriptors that nothing else owns.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    cmd.stdin(Stdio::from(slave.try_clone()?)).stdout(Stdio::from(slave.try_clone()?)).stderr(Stdio::from(slave));
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY as _, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn().with_context(|| format!("starting {}", crate::deja_bin().display()))?;
    // The slave ends were moved into the command and are closed with it in this process,
    // so the reader sees the end once the child is gone.
    drop(cmd);
    let input = File::from(master);
    let mut output = input.try_clone()?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        loop {
            match output.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if tx.send((Instant::now(), buf[..n].to_vec())).is_err() {
                        return;
                    }
                }
            }
        }
    });
    Ok((child, input, rx))
}

fn wait_for_exit(child: &mut Child, within: Duration) -> Result<Option<std::process::ExitStatus>> {
    let until = Instant::now() + within;
    while Instant::now() < until {
        if let Some(s) = child.try_wait()? {
            return Ok(Some(s));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(None)
}

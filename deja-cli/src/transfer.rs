//! `deja export` and `deja import`: history as NDJSON, one redacted document per turn
//! with its stable id `<harness>:<session>:<seq>` and its session's fields (DESIGN §10;
//! the same document the archive holds, [`deja_core::archive::TurnDoc`]). Export
//! re-applies redaction on the way out; import validates every line, redacts again,
//! and merges idempotently (the same id is the same turn), marking each session with
//! the machine it came from. A push to the team store (`deja team push`) sends the
//! same document per turn (`docs/team-memory.md`).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Args;
use deja_core::archive::{turn_id, ArchivedSession, SessionFields, TurnDoc};
use deja_core::index::indexer::IndexRunError;
use deja_core::index::{IndexPaths, IndexView};
use deja_core::redact::Redact;
use deja_core::{StoreEnv, Timestamp};

#[derive(Args)]
#[command(
    after_help = "Examples:\n  deja export > history.ndjson                    everything\n  deja export --since 30d --harness claude -o recent.ndjson\n  deja import laptop.ndjson desktop.ndjson        merge other machines' history\n\nEach line is one turn: \
    {\"id\":\"<harness>:<session>:<seq>\",\"harness\",\"session\",\"seq\",\"role\",\"text\",\"time\",…,\"title\",\"project\",\"started\",\"updated\",\"source\",\"machine\"}. \
    Secrets are redacted again as the file is written."
)]
pub struct ExportArgs {
    /// Only sessions active since (an age like 30d, or a date like 2026-01-02).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only these harnesses (repeatable).
    #[arg(long = "harness", value_name = "ID")]
    pub harness: Vec<String>,
    /// Only sessions run in this directory or below it.
    #[arg(long, value_name = "DIR")]
    pub project: Option<String>,
    /// Write here instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args)]
#[command(after_help = "Importing the same file twice changes nothing: a turn is known by its id. Sessions \
    forgotten here (`deja forget`) or excluded by the settings are skipped. Imported sessions are searched like \
    the rest, marked with their machine, and kept in the archive: they survive rebuilds.\n\nExit status: 0 imported \
    · 1 error · 3 imported, but some lines were not turns (each is named with its file and line).")]
pub struct ImportArgs {
    /// NDJSON files written by `deja export` (`-` for standard input).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The machine to mark sessions with when a line does not name one.
    #[arg(long, value_name = "NAME")]
    pub machine: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn export(args: ExportArgs) -> Result<ExitCode> {
    crate::index_cmd::check_harness_ids(&args.harness)?;
    let env = StoreEnv::from_process();
    let paths = IndexPaths::new(env.index_dir());
    crate::search_cmd::refresh(&env, &paths);
    let view = IndexView::open(&paths)?;
    let since = args.since.as_deref().map(|s| crate::output::parse_since(s, Timestamp::now())).transpose()?;
    let project = args.project.as_deref().map(|p| crate::forget::absolute(&env, p)).transpose()?;
    let mut sessions = view.all_sessions(None)?;
    sessions.retain(|m| {
        (args.harness.is_empty() || args.harness.contains(&m.harness))
            && since.is_none_or(|t| m.updated.or(m.started).is_some_and(|u| u >= t))
            && project.as_ref().is_none_or(|dir| crate::forget::ran_under(m, dir))
    });
    sessions.sort_by_key(|m| m.key());
    let this_machine = env.machine_name();
    let out: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut out = BufWriter::new(out);
    let (mut turns, mut written) = (0u64, 0u64);
    for mut meta in sessions {
        // Stored redacted; redacted again, as on every way out.
        meta.redact_in_place();
        if meta.machine.is_none() {
            meta.machine = Some(this_machine.clone());
        }
        let session_turns = view.session_turns(&meta.key())?;
        if session_turns.is_empty() {
            continue;
        }
        for t in &session_turns {
            serde_json::to_writer(&mut out, &TurnDoc::new(&meta, t))?;
            out.write_all(b"\n")?;
            turns += 1;
        }
        written += 1;
    }
    out.flush()?;
    eprintln!("deja: exported {turns} turn(s) of {written} session(s)");
    Ok(ExitCode::SUCCESS)
}

/// The longest line read: a turn's text is capped at 64 KiB, escaped into JSON at most
/// 6× that, plus its fields.
const MAX_LINE_BYTES: u64 = 1 << 20;

pub fn import(args: ImportArgs) -> Result<ExitCode> {
    let env = StoreEnv::from_process();
    let paths = IndexPaths::new(env.index_dir());
    let mut sessions: BTreeMap<String, Grouped> = BTreeMap::new();
    let mut problems: Vec<String> = Vec::new();
    let fallback_machine = args.machine.clone();
    for file in &args.files {
        let name = file.display().to_string();
        let reader: Box<dyn Read> = if name == "-" {
            Box::new(std::io::stdin().lock())
        } else {
            Box::new(std::fs::File::open(file).with_context(|| format!("opening {name}"))?)
        };
        read_export(BufReader::new(reader), &name, fallback_machine.as_deref(), &mut sessions, &mut problems)?;
    }
    let sessions: Vec<ArchivedSession> = sessions
        .into_values()
        .map(|(mut s, turns)| {
            s.turns = turns.into_values().collect();
            s
        })
        .collect();
    let observer = crate::index_cmd::BarObserver::new(false);
    let report = match deja_core::index::maintain::import(&env, &paths, sessions, &observer) {
        Ok(r) => r,
        Err(IndexRunError::Busy) => bail!("another deja process is writing the index"),
        Err(IndexRunError::Index(e)) => return Err(e.into()),
    };
    for p in problems.iter().take(50) {
        eprintln!("deja: {p}");
    }
    if problems.len() > 50 {
        eprintln!("deja: … and {} more line(s) that are not turns", problems.len() - 50);
    }
    if args.json {
        let doc = serde_json::json!({"schema_version": 1, "imported": report, "bad_lines": problems.len()});
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        println!(
            "imported {} session(s), {} turn(s){}{}",
            report.sessions,
            report.turns,
            if report.forgotten > 0 { format!("; {} forgotten here, skipped", report.forgotten) } else { String::new() },
            if report.excluded > 0 { format!("; {} excluded by the settings, skipped", report.excluded) } else { String::new() },
        );
    }
    Ok(if problems.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(crate::index_cmd::EXIT_UNREADABLE) })
}

/// A session being read: its fields (those of its last line) and its turns by seq.
type Grouped = (ArchivedSession, BTreeMap<u32, deja_core::Turn>);

/// Reads one export into `sessions`, grouping turns by session (the last copy of a
/// turn id wins); a line that is not a turn is named in `problems` and skipped.
fn read_export(
    mut reader: impl BufRead,
    name: &str,
    fallback_machine: Option<&str>,
    sessions: &mut BTreeMap<String, Grouped>,
    problems: &mut Vec<String>,
) -> Result<()> {
    let mut buf = Vec::new();
    let mut line_no = 0u64;
    loop {
        buf.clear();
        let n = (&mut reader).take(MAX_LINE_BYTES + 1).read_until(b'\n', &mut buf).with_context(|| format!("reading {name}"))?;
        if n == 0 {
            return Ok(());
        }
        line_no += 1;
        if buf.len() as u64 > MAX_LINE_BYTES && !buf.ends_with(b"\n") {
            problems.push(format!("{name}:{line_no}: a line of over {MAX_LINE_BYTES} bytes; not a turn deja exported"));
            // Skip the rest of the oversized line.
            let mut rest = Vec::new();
            reader.read_until(b'\n', &mut rest).with_context(|| format!("reading {name}"))?;
            continue;
        }
        let line = buf.trim_ascii();
        if line.is_empty() {
            continue;
        }
        match parse_turn(line, fallback_machine) {
            Ok(doc) => {
                let key = doc.session_key();
                let (session, turns) = sessions.entry(key).or_insert_with(|| {
                    let s = ArchivedSession {
                        harness: doc.harness.clone(),
                        id: doc.session.clone(),
                        fields: SessionFields::default(),
                        turns: Vec::new(),
                    };
                    (s, BTreeMap::new())
                });
                session.fields = doc.fields;
                turns.insert(doc.turn.seq, doc.turn);
            }
            Err(reason) => problems.push(format!("{name}:{line_no}: {reason}")),
        }
    }
}

/// One line as a turn, checked and redacted.
fn parse_turn(line: &[u8], fallback_machine: Option<&str>) -> std::result::Result<TurnDoc, String> {
    let mut doc: TurnDoc = serde_json::from_slice(line).map_err(|e| format!("not a turn document ({e})"))?;
    let harness_ok = !doc.harness.is_empty()
        && doc.harness.len() <= 64
        && doc.harness.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if !harness_ok {
        return Err(format!("`{}` is not a harness id", doc.harness.chars().take(64).collect::<String>()));
    }
    if doc.session.is_empty() || doc.session.len() > 512 || doc.session.chars().any(char::is_control) {
        return Err("the session id is empty, over 512 bytes, or holds control characters".to_string());
    }
    let want = turn_id(&doc.harness, &doc.session, doc.turn.seq);
    if doc.id != want {
        return Err(format!(
            "the id `{}` does not match its harness, session and seq (`{want}`)",
            doc.id.chars().take(120).collect::<String>()
        ));
    }
    // deja caps a turn's text at index time; an export holds no longer one.
    let cap = deja_core::normalize::MAX_INDEXED_TEXT + 4096;
    if doc.turn.text.len() > cap {
        return Err(format!("the turn's text is {} bytes, over deja's cap of {cap}", doc.turn.text.len()));
    }
    doc.turn.redact_in_place();
    doc.fields.title.redact_in_place();
    doc.fields.project.redact_in_place();
    if doc.fields.machine.is_none() {
        doc.fields.machine = fallback_machine.map(str::to_string);
    }
    Ok(doc)
}

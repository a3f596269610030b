//! `deja remember "TEXT"`: appends a durable note to deja's notes file (primary data
//! in `${XDG_DATA_HOME:-~/.local/share}/deja/notes.jsonl`, secrets redacted) and
//! indexes it right away when no other index run is writing.
//!
//! A note records who wrote it (`source`: `cli` here, `mcp` for the MCP `remember`
//! mode) and is bounded (text, tags, project: see `deja_adapter_deja::NoteError`).
//! Agents' notes are also rate-limited across every process through the notes file
//! itself: at most [`AGENT_NOTES_PER_HOUR`] in any hour (the MCP server adds a limit of
//! its own per process), since a note an agent plants is shown to every later agent.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Args;
use deja_adapters::deja_adapter_deja::{self, append_note, notes_path, Note, NoteSource, MAX_NOTE_BYTES, MAX_TAGS, MAX_TAG_BYTES};
use deja_core::index::indexer::{run_index, IndexRequest, IndexRunError, Silent};
use deja_core::index::IndexPaths;
use deja_core::{StoreEnv, Timestamp};

/// Notes agents may save through MCP in any hour, all processes together.
pub const AGENT_NOTES_PER_HOUR: usize = 20;
const HOUR_MS: i64 = 3_600_000;
/// How much of the notes file's end is read to count recent agent notes: more than
/// [`AGENT_NOTES_PER_HOUR`] notes at the size limit, so the count is never short.
const RECENT_TAIL_BYTES: u64 = (AGENT_NOTES_PER_HOUR as u64 + 4) * (MAX_NOTE_BYTES as u64 + 8192);

#[derive(Args)]
#[command(after_help = remember_help())]
pub struct RememberArgs {
    /// What to remember (at most 16 KiB).
    #[arg(required = true)]
    pub text: Vec<String>,
    /// The project the note is about (default: the current directory).
    #[arg(long, value_name = "DIR", conflicts_with = "global")]
    pub project: Option<String>,
    /// The note is about no project in particular.
    #[arg(long)]
    pub global: bool,
    /// A tag (repeatable; at most 16 tags of 64 bytes).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// Print the stored note as JSON.
    #[arg(long)]
    pub json: bool,
}

/// What saving a note did.
pub struct Saved {
    pub note: Note,
    pub path: std::path::PathBuf,
    /// The note is in the index now (false when another index run was writing).
    pub indexed: bool,
}

fn remember_help() -> String {
    format!(
        "Notes hold at most {MAX_NOTE_BYTES} bytes and {MAX_TAGS} tags of {MAX_TAG_BYTES} bytes; secrets in the text, tags and \
         project are redacted before the note is written. Notes saved here are the person's own; notes agents save through \
         `deja mcp` are shown as unverified, and agents may save at most {AGENT_NOTES_PER_HOUR} an hour."
    )
}

/// Writes the note and indexes deja's notes unless another process is writing the
/// index (then the next refresh picks it up). An agent's note is refused once agents
/// saved [`AGENT_NOTES_PER_HOUR`] in the last hour.
pub fn save(env: &StoreEnv, text: &str, project: Option<String>, tags: Vec<String>, source: NoteSource, index_now: bool) -> Result<Saved> {
    let path = notes_path(env);
    let note = Note::new(text, project, tags, source)?;
    if source == NoteSource::Mcp {
        let recent = recent_agent_notes(&path, Timestamp::now());
        if recent >= AGENT_NOTES_PER_HOUR {
            bail!(
                "agents saved {recent} notes in the last hour, the most deja takes ({AGENT_NOTES_PER_HOUR} an hour); this note was \
                 not saved — ask the person to save it with `deja remember` if it matters"
            );
        }
    }
    append_note(&path, &note).with_context(|| format!("writing the note to {}", path.display()))?;
    let indexed = index_now && index_notes(env);
    Ok(Saved { note, path, indexed })
}

/// Notes agents saved (source `mcp`) in the hour before `now`, counted in the end of
/// the notes file; 0 when there is no file.
pub fn recent_agent_notes(path: &Path, now: Timestamp) -> usize {
    let Ok(mut file) = std::fs::File::open(path) else { return 0 };
    let len = file.metadata().map_or(0, |m| m.len());
    let start = len.saturating_sub(RECENT_TAIL_BYTES);
    let mut tail = Vec::new();
    if file.seek(SeekFrom::Start(start)).is_err() || file.take(RECENT_TAIL_BYTES).read_to_end(&mut tail).is_err() {
        return 0;
    }
    // From the middle of the file the first line is torn: it is skipped.
    let lines = tail.split(|b| *b == b'\n').skip(usize::from(start > 0));
    let since = now.0 - HOUR_MS;
    lines.filter_map(|l| serde_json::from_slice::<Note>(l).ok()).filter(|n| n.source == Some(NoteSource::Mcp) && n.time.0 > since).count()
}

/// Indexes only deja's notes, without waiting for another writer.
pub fn index_notes(env: &StoreEnv) -> bool {
    let paths = IndexPaths::new(env.index_dir());
    let req = IndexRequest { harnesses: Some(vec![deja_adapter_deja::ID.to_string()]), rebuild: false, wait: false };
    match run_index(env, &paths, &req, &Silent) {
        Ok(_) => true,
        Err(IndexRunError::Busy) => false,
        Err(IndexRunError::Index(e)) => {
            eprintln!("deja: the note is saved but could not be indexed yet ({e})");
            false
        }
    }
}

pub fn run(args: RememberArgs) -> Result<ExitCode> {
    let env = StoreEnv::from_process();
    let project = if args.global { None } else { args.project.clone().or_else(crate::recall_cmd::current_dir) };
    let saved = save(&env, &args.text.join(" "), project, args.tags.clone(), NoteSource::Cli, true)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string(&serde_json::json!({
                "schema_version": crate::recall_cmd::RECALL_SCHEMA_VERSION,
                "command": "remember",
                "note": saved.note,
                "path": saved.path,
                "indexed": saved.indexed,
            }))?
        );
    } else {
        println!("remembered {} in {}", saved.note.id, saved.path.display());
        if !saved.indexed {
            println!("another index run is writing; the note is searchable after the next refresh");
        }
    }
    Ok(ExitCode::SUCCESS)
}

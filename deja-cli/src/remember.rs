//! `deja remember "TEXT"`: saves a durable note through deja-core's notes store
//! ([`deja_core::notes`]: `${XDG_DATA_HOME:-~/.local/share}/deja/notes.jsonl`, beside the
//! archive, secrets redacted, bounded) and indexes it right away when no other index run
//! is writing. The MCP `remember` mode saves through the same store, as an agent's note.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use deja_core::index::indexer::{run_index, IndexRequest, IndexRunError, Silent};
use deja_core::index::IndexPaths;
use deja_core::notes::{self, Note, NoteSource, AGENT_NOTES_PER_HOUR, MAX_NOTE_BYTES, MAX_TAGS, MAX_TAG_BYTES};
use deja_core::StoreEnv;

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

/// Writes the note (see [`notes::save`] for the limits) and indexes deja's notes unless
/// another process is writing the index (then the next refresh picks it up).
pub fn save(env: &StoreEnv, text: &str, project: Option<String>, tags: Vec<String>, source: NoteSource, index_now: bool) -> Result<Saved> {
    let (note, path) = notes::save(env, text, project, tags, source)?;
    let indexed = index_now && index_notes(env);
    Ok(Saved { note, path, indexed })
}

/// Indexes only deja's notes, without waiting for another writer.
pub fn index_notes(env: &StoreEnv) -> bool {
    let paths = IndexPaths::new(env.index_dir());
    let req = IndexRequest { harnesses: Some(vec![notes::HARNESS.to_string()]), rebuild: false, wait: false };
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

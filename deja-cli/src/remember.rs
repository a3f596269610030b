//! `deja remember "TEXT"`: appends a durable note to deja's notes file (primary data
//! in `${XDG_DATA_HOME:-~/.local/share}/deja/notes.jsonl`, secrets redacted) and
//! indexes it right away when no other index run is writing.

use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::Args;
use deja_adapter_deja::{append_note, notes_path, Note};
use deja_core::index::indexer::{run_index, IndexRequest, IndexRunError, Silent};
use deja_core::index::IndexPaths;
use deja_core::StoreEnv;

#[derive(Args)]
pub struct RememberArgs {
    /// What to remember.
    #[arg(required = true)]
    pub text: Vec<String>,
    /// The project the note is about (default: the current directory).
    #[arg(long, value_name = "DIR", conflicts_with = "global")]
    pub project: Option<String>,
    /// The note is about no project in particular.
    #[arg(long)]
    pub global: bool,
    /// A tag (repeatable).
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

/// Writes the note and indexes deja's notes unless another process is writing the
/// index (then the next refresh picks it up).
pub fn save(env: &StoreEnv, text: &str, project: Option<String>, tags: Vec<String>, index_now: bool) -> Result<Saved> {
    if text.trim().is_empty() {
        bail!("the note is empty");
    }
    let note = Note::new(text, project, tags);
    let path = notes_path(env);
    append_note(&path, &note).with_context(|| format!("writing the note to {}", path.display()))?;
    let indexed = index_now && index_notes(env);
    Ok(Saved { note, path, indexed })
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
    let saved = save(&env, &args.text.join(" "), project, args.tags.clone(), true)?;
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

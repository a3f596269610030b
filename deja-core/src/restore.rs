//! `deja restore`: an archived session written back into its harness's store, in the
//! harness's own format and where the harness reads it, so the harness's own resume
//! works again. The adapter's [`RestoreWriter`](crate::format::RestoreWriter) says where
//! and what; this module decides whether and how:
//!
//! - never over a file: a session whose file exists is reported (its source was not
//!   deleted, or was restored already); `force` writes a copy under a fresh id beside it
//!   only where the writer says the harness tolerates that;
//! - the bytes are read back through the adapter's own parser before anything is
//!   written, and must give the archive's turns (roles, texts, tool calls with their
//!   results and exit status, files, edits, in order), except the turns the writer said
//!   it cannot carry;
//! - the file appears whole or not at all (a temporary beside it, linked into place,
//!   which fails rather than replace a file that appeared meanwhile);
//! - text the archive holds redacted stays redacted, and the answer says how many turns
//!   carry a redaction.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::env::StoreEnv;
use crate::format::HarnessFormat;
use crate::index::{IndexError, IndexView};
use crate::model::{SessionMeta, Turn};

/// What a restore did (or, dry, would do).
#[derive(Debug, Clone, Serialize)]
pub struct Restored {
    /// `<harness>:<id>` of the archived session.
    pub session: String,
    pub harness: String,
    /// The id the file carries: the session's, or a fresh one written beside.
    pub id: String,
    pub beside: bool,
    pub path: PathBuf,
    pub bytes: u64,
    /// False for a dry run.
    pub written: bool,
    /// Turns the file carries, checked by reading it back through the adapter.
    pub turns: usize,
    /// Turns left out of the file (they stay in deja), by seq, with why.
    pub left_out: Vec<LeftOut>,
    /// Turns whose text holds a redaction marker: the archive keeps secrets redacted, so
    /// the restored file does too.
    pub redacted_turns: usize,
    /// The command that resumes it, when the harness has one.
    pub resume: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LeftOut {
    pub seq: u32,
    pub why: String,
}

#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    #[error("no adapter for the harness `{0}` is linked")]
    NoAdapter(String),
    #[error("{harness} sessions cannot be restored: {why}")]
    NotRestorable { harness: String, why: String },
    #[error("{session}: {why}")]
    Refused { session: String, why: String },
    #[error("{path} exists already, so nothing was written (its source was not deleted, or it was restored before){hint}")]
    Exists { path: PathBuf, hint: String },
    #[error("{session}: the file written for {path} does not read back as the archived session ({diff}); nothing was written")]
    ReadBack { session: String, path: PathBuf, diff: String },
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Index(#[from] IndexError),
}

/// For a session whose source its harness deleted: the `deja restore` command that puts
/// it back, or why its harness cannot take it back; `None` while the source exists.
/// `deja show` and the search screen offer it next to the resume command.
pub fn offer(meta: &SessionMeta) -> Option<Result<String, String>> {
    meta.source_deleted.as_ref()?;
    let Some(format) = crate::format::lookup(&meta.harness) else {
        return Some(Err(format!("no adapter for `{}` is linked", meta.harness)));
    };
    Some(match format.restorer() {
        Some(_) => Ok(format!("deja restore {}", crate::launch::quote(&meta.key()))),
        None => Err(format.restore_capability().reason().to_string()),
    })
}

/// Restores `meta` (a session the index holds) from the archive; `force` writes beside an
/// existing file where the harness tolerates it, `dry_run` writes nothing.
pub fn restore(view: &IndexView, env: &StoreEnv, meta: &SessionMeta, force: bool, dry_run: bool) -> Result<Restored, RestoreError> {
    let adapter = crate::format::lookup(&meta.harness).ok_or_else(|| RestoreError::NoAdapter(meta.harness.clone()))?;
    let mut turns = view.session_turns(&meta.key())?;
    turns.sort_by_key(|t| t.seq);
    restore_turns(adapter, env, meta, &turns, force, dry_run)
}

/// [`restore`] of `turns` (the archive's, in order): the part that needs no index.
pub fn restore_turns(
    adapter: &dyn HarnessFormat,
    env: &StoreEnv,
    meta: &SessionMeta,
    turns: &[Turn],
    force: bool,
    dry_run: bool,
) -> Result<Restored, RestoreError> {
    let session = meta.key();
    let Some(writer) = adapter.restorer() else {
        return Err(RestoreError::NotRestorable { harness: meta.harness.clone(), why: adapter.restore_capability().reason().to_string() });
    };
    let refused = |why: String| RestoreError::Refused { session: session.clone(), why };
    let mut id = meta.id.clone();
    let mut path = writer.target(meta, &id, env).map_err(refused)?;
    let mut beside = false;
    if exists(&path) {
        if !force {
            let hint = if writer.beside() { "; --force writes a copy under a new id beside it" } else { "" };
            return Err(RestoreError::Exists { path, hint: hint.to_string() });
        }
        if !writer.beside() {
            return Err(RestoreError::Exists {
                path,
                hint: format!("; {} keeps one file per session, so --force cannot write beside it", adapter.info().name),
            });
        }
        id = fresh_id(&meta.id);
        path = writer.target(meta, &id, env).map_err(refused)?;
        beside = true;
        if exists(&path) {
            return Err(RestoreError::Exists { path, hint: String::new() });
        }
    }
    let rendered = writer.render(meta, &id, turns).map_err(refused)?;
    let left: std::collections::HashSet<u32> = rendered.left_out.iter().map(|(s, _)| *s).collect();
    let kept: Vec<&Turn> = turns.iter().filter(|t| !left.contains(&t.seq)).collect();
    crate::format::read_back(adapter, &path, &id, &rendered.bytes, &kept).map_err(|diff| RestoreError::ReadBack {
        session: session.clone(),
        path: path.clone(),
        diff,
    })?;
    if !dry_run {
        write_new(&path, &rendered.bytes)?;
    }
    let mut restored_meta = meta.clone();
    restored_meta.id = id.clone();
    restored_meta.path = path.display().to_string();
    Ok(Restored {
        session,
        harness: meta.harness.clone(),
        id,
        beside,
        bytes: rendered.bytes.len() as u64,
        path,
        written: !dry_run,
        turns: kept.len(),
        left_out: rendered.left_out.into_iter().map(|(seq, why)| LeftOut { seq, why }).collect(),
        redacted_turns: kept.iter().filter(|t| t.text.contains("[redacted:")).count(),
        resume: crate::format::resume_for(&restored_meta).ok().map(|r| r.command),
    })
}

fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// A fresh session id for a copy written beside the original: UUID-shaped, from the
/// original id and the time.
fn fresh_id(id: &str) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    crate::synth::synth_uuid(xxhash_rust::xxh3::xxh3_64(id.as_bytes()), now)
}

/// Writes `bytes` as a new file at `path`: a temporary beside it, synced, then linked
/// into place, which fails if anything is there by then. Never replaces a file.
fn write_new(path: &Path, bytes: &[u8]) -> Result<(), RestoreError> {
    let io = |source| RestoreError::Io { path: path.to_path_buf(), source };
    let dir = path.parent().ok_or_else(|| io(std::io::Error::other("no parent directory")))?;
    std::fs::create_dir_all(dir).map_err(io)?;
    let mut tmp = tempfile::Builder::new().prefix(".deja-restore-").tempfile_in(dir).map_err(io)?;
    tmp.write_all(bytes).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    match std::fs::hard_link(tmp.path(), path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(RestoreError::Exists { path: path.to_path_buf(), hint: " (it appeared while restoring)".into() })
        }
        Err(e) => Err(io(e)),
    }
    // The temporary is removed when `tmp` drops.
}

//! Thread titles from Codex 0.171's `state_5.sqlite` (`threads.title`), read as a side
//! part of every rollout: the title of a full read, and a rename read from a tail with
//! nothing new in it when only the database changed.

use crate::common::*;
use deja_adapter_codex::CodexFormat;
use deja_core::model::Resume;
use deja_core::{HarnessFormat, ParseOptions, SourceRef, StoreEnv};

/// The fixture home materialized (the database built from `state_5.sqlite.sql`, its rows
/// in a live WAL), with its open writers.
fn home() -> (tempfile::TempDir, Vec<rusqlite::Connection>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let writers = deja_core::testkit::materialize_home(&fixture_home(), tmp.path()).expect("materialize");
    (tmp, writers)
}

fn source(home: &std::path::Path, rel: &str) -> SourceRef {
    let path = home.join(".codex").join(rel);
    CodexFormat.discover(&StoreEnv::with_home(home)).sources.into_iter().find(|s| s.path == path).expect("discovered")
}

#[test]
fn the_threads_table_titles_a_rollout() {
    let (tmp, _writers) = home();
    let src = source(tmp.path(), RELEASE_0_171);
    assert!(src.side_parts && src.parts.iter().any(|p| p.ends_with("state_5.sqlite")), "{src:?}");
    let (out, _) = parse_src(&src, &ParseOptions::default());
    assert_eq!(out[0].title.as_deref(), Some("Tokenizer skips a leading BOM"));
    // An empty title names nothing: the index derives one from the first prompt.
    let (out, _) = parse_src(&source(tmp.path(), CURRENT), &ParseOptions::default());
    assert_eq!(out[0].title, None);
    // No database, no title, and nothing else changes.
    let (out, _) = parse_fixture(RELEASE_0_171);
    assert_eq!(out[0].title, None);
}

#[test]
fn a_rename_in_the_database_is_read_from_an_empty_tail() {
    let (tmp, writers) = home();
    let src = source(tmp.path(), RELEASE_0_171);
    let (first, stats) = parse_src(&src, &ParseOptions::default());
    let resume = Resume::after(&stats, &first[0]);
    let tail = SourceRef { resume: Some(resume), ..src };
    let db = writers.iter().find(|c| c.path().is_some_and(|p| p.ends_with("state_5.sqlite"))).expect("writer");
    db.execute("UPDATE threads SET title = 'BOM-aware tokenizer' WHERE id = ?1", [&first[0].id]).expect("rename");
    let (out, stats) = parse_src(&tail, &ParseOptions::default());
    assert_eq!(out.len(), 1, "a session with no turns, carrying the new title");
    assert_eq!((out[0].id.as_str(), out[0].title.as_deref(), out[0].turns.len()), (first[0].id.as_str(), Some("BOM-aware tokenizer"), 0));
    assert_eq!(stats.end_offset, tail.resume.as_ref().map_or(0, |r| r.offset), "nothing new was read");
    // Untitled in the database: an empty tail says nothing new (the session it
    // continues, with no turns and no title).
    db.execute("UPDATE threads SET title = '' WHERE id = ?1", [&first[0].id]).expect("untitle");
    let (out, _) = parse_src(&tail, &ParseOptions::default());
    assert_eq!(out.iter().map(|s| (s.title.clone(), s.turns.len())).collect::<Vec<_>>(), [(None, 0)]);
}

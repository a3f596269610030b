//! Work records read from a session's turns: pure functions over [`Turn`](crate::model::Turn)s,
//! with no index, no archive and no I/O. The indexer runs them at index time (the error
//! and fix documents), recall runs them again at query time (digests, re-checking a
//! fix), and both stand on this module rather than on each other.
//!
//! - [`signature`] — error lines and their normalized signatures;
//! - [`commands`] — how a tool call ended; inspection vs work commands, programs, grouping keys;
//! - [`fixes`] — error events and error → fix pairs mined from a session;
//! - [`digest`] — what a session amounted to (problem, decisions, commands, files, end).

pub mod commands;
pub mod digest;
pub mod fixes;
pub mod signature;

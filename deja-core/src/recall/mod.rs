//! Recall: answering the questions an agent asks mid-work ("didn't we fix this
//! before?", "how does this machine run the tests?", "what was decided about this
//! file?") from the index, rather than listing sessions.
//!
//! - [`signature`] — error lines and their normalized signatures;
//! - [`commands`] — inspection vs work commands, programs, grouping keys;
//! - [`mine`] — error events and error → fix pairs mined from a session at index time;
//! - [`digest`] — what a session amounted to (problem, decisions, commands, files, end);
//! - [`frame`] — cleaning quoted history and framing answers within byte budgets;
//! - [`query`] — the recall questions asked of an [`IndexView`](crate::index::IndexView);
//! - [`render`] — answers as Markdown lines, shared by the CLI and the MCP server;
//! - [`mode`] — the recall modes as one type: what each asks, and its answer rendered for
//!   the CLI, the MCP server and the hooks alike.

pub mod commands;
pub mod digest;
pub mod frame;
pub mod mine;
pub mod mode;
pub mod query;
pub mod render;
pub mod signature;

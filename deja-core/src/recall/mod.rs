//! Recall: answering the questions an agent asks mid-work ("didn't we fix this
//! before?", "how does this machine run the tests?", "what was decided about this
//! file?") from the index, rather than listing sessions.
//!
//! What recall reads out of a session's turns (error signatures, command outcomes,
//! error → fix pairs, digests) is [`crate::mining`], below the index, since the indexer
//! mines the same records when it writes.
//!
//! - [`frame`] — cleaning quoted history and framing answers within byte budgets;
//! - [`query`] — the recall questions asked of an [`IndexView`](crate::index::IndexView);
//! - [`render`] — answers as Markdown lines, shared by the CLI and the MCP server;
//! - [`mode`] — the recall modes as one type: what each asks, and its answer rendered for
//!   the CLI, the MCP server and the hooks alike.

pub mod frame;
pub mod mode;
pub mod query;
pub mod render;

#[cfg(test)]
mod redaction_tests;

//! deja-core: everything deja knows that is not about one harness.
//!
//! The normalized model ([`model`]), the adapter contract and registry ([`format`]),
//! store discovery inputs ([`env`]), shared readers ([`read`]), parse bookkeeping
//! ([`builder`]), work signals ([`work`], [`patch`]), ingest normalization
//! ([`normalize`], [`text`], [`redact`]), the archive of every session read ([`archive`])
//! and deja's notes beside it ([`notes`]), the tantivy index projected from it with search
//! ([`index`]), the work records mined from turns ([`mining`]), and recall over the index
//! ([`recall`]); search and recall stop early when their [`cancel`] token says nobody
//! waits any more. The modules stand in layers that point one way (docs/architecture.md,
//! "Layers").

pub mod archive;
pub mod builder;
pub mod cancel;
pub mod config;
pub mod discover;
pub mod env;
pub mod exit;
pub mod family;
pub mod format;
pub mod fsutil;
pub mod index;
pub mod launch;
pub mod mining;
pub mod model;
pub mod normalize;
pub mod notes;
pub mod patch;
pub mod project;
pub mod read;
pub mod recall;
pub mod redact;
pub mod restore;
pub mod retention;
pub mod sqlite;
pub mod stamp;
pub mod store;
pub mod synth;
pub mod tail;
pub mod team;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod text;
pub mod time;
pub mod wire;
pub mod wired;
pub mod work;

#[cfg(test)]
mod robustness;

pub use builder::SessionBuilder;
pub use env::StoreEnv;
pub use format::{
    lookup, registry, Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, Locked, Os, ParseOptions, ParseStats,
    Registration, Rendered, RestoreWriter, SessionSink, SynthWriter,
};
pub use model::{Edit, ExitStatus, FileAction, FileTouch, NodeRef, Role, Session, SourceRef, TailState, Timestamp, TitleBy, ToolUse, Turn};
pub use store::{Files, Layout, Part, Root, Store, StoreSpec};
pub use synth::{SynthSession, SynthTurn};
pub use text::InjectedText;
pub use work::{ToolKind, ToolMap};

/// Re-exported so adapter crates register without naming `inventory` themselves.
pub use inventory;

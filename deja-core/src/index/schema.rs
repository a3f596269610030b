//! The tantivy schema: one document per turn, plus one per session holding the
//! session's metadata once (and its title, indexed so a title match can boost).

use tantivy::schema::{Field, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions, STORED};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::Index;

use super::tokenizer::{DejaTokenizer, PARTS_TOKENIZER_NAME, TOKENIZER_NAME};

pub const KIND_TURN: &str = "turn";
pub const KIND_SESSION: &str = "session";
/// An error seen in a command's output (one per error line of a turn).
pub const KIND_ERROR: &str = "error";
/// An error and the commands after which it stopped (see `mining::fixes`).
pub const KIND_FIX: &str = "fix";

/// Bumped when the schema or tokenizer changes; an index of another version is rebuilt.
pub const SCHEMA_VERSION: u32 = 6;

#[derive(Clone, Copy)]
pub struct Fields {
    /// `turn`, `session`, `error` or `fix`.
    pub kind: Field,
    /// `<harness>:<id>`.
    pub sid: Field,
    /// xxh3 of `sid`, a fast field for grouping hits by session.
    pub sid_hash: Field,
    pub harness: Field,
    /// Source manifest key, for deleting what a source produced.
    pub source: Field,
    /// Role name, plus work tags (`command`, `files`, `edit`, `tool`, `partial`).
    pub role: Field,
    /// What is searched: speech, command line, file paths, replaced spans.
    pub text: Field,
    /// The turn's own text, stored, in indexes of schema 4 and before. Since 5 the
    /// text is read from the archive, which holds it already ([`crate::archive::lookup`]).
    pub body: Option<Field>,
    pub seq: Field,
    pub time: Field,
    /// Stored JSON: the turn's tool, files, edit, node and partial flag; or, on a
    /// session document, the session's metadata; on `error`/`fix` documents the record.
    pub extra: Field,
    /// Error signature (raw) of `error` and `fix` documents.
    pub sig: Field,
    /// Work text searched by recall: a turn's command line; the error line of `error`
    /// and `fix` documents.
    pub work: Field,
    /// Raw, lowercased path suffixes of the files a turn touched or its tool output
    /// named (`pool.rs`, `src/pool.rs`, …, the whole path), for `blame`; on a session document its
    /// project as `=<dir>` and every ancestor as `^<dir>`, for project scoping.
    pub path: Field,
}

pub fn build_schema() -> (Schema, Fields) {
    let (b, fields) = schema_builder();
    (b.build(), fields)
}

/// The schema as deja wrote it before 5: this one's fields plus each turn's text
/// stored as `body`. For tests of the upgrade from such an index.
#[cfg(any(test, feature = "testkit"))]
pub fn build_schema_storing_text() -> (Schema, Fields) {
    let (mut b, mut fields) = schema_builder();
    fields.body = Some(b.add_text_field("body", STORED));
    (b.build(), fields)
}

fn schema_builder() -> (tantivy::schema::SchemaBuilder, Fields) {
    let mut b = Schema::builder();
    let with_positions =
        |tokenizer: &str| TextFieldIndexing::default().set_tokenizer(tokenizer).set_index_option(IndexRecordOption::WithFreqsAndPositions);
    // Searched as words and phrases of parts: no compounds (see PARTS_TOKENIZER_NAME).
    let text_opts = TextOptions::default().set_indexing_options(with_positions(PARTS_TOKENIZER_NAME));
    // Recall looks whole commands and paths up: compounds kept.
    let work_opts = TextOptions::default().set_indexing_options(with_positions(TOKENIZER_NAME));
    // Exact-match fields are filters and keys, never ranked by length: no field norms
    // (a byte per document per field, 7 MB on the 1 GB benchmark corpus).
    let raw = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default().set_tokenizer("raw").set_index_option(IndexRecordOption::Basic).set_fieldnorms(false),
    );
    let fields = Fields {
        kind: b.add_text_field("kind", raw.clone()),
        sid: b.add_text_field("sid", raw.clone().set_stored()),
        sid_hash: b.add_u64_field("sid_hash", NumericOptions::default().set_indexed().set_fast()),
        harness: b.add_text_field("harness", raw.clone()),
        source: b.add_text_field("source", raw.clone()),
        role: b.add_text_field("role", raw.clone()),
        text: b.add_text_field("text", text_opts),
        body: None,
        seq: b.add_u64_field("seq", NumericOptions::default().set_indexed().set_stored().set_fast()),
        // A fast field only: tantivy answers a range on a fast field from the column,
        // so an inverted index of every distinct millisecond (11 MB of terms and
        // postings on the 1 GB corpus) would never be read.
        time: b.add_i64_field("time", NumericOptions::default().set_stored().set_fast()),
        extra: b.add_text_field("extra", STORED),
        sig: b.add_text_field("sig", raw.clone().set_stored()),
        work: b.add_text_field("work", work_opts),
        path: b.add_text_field("path", raw),
    };
    (b, fields)
}

pub fn fields_of(schema: &Schema) -> tantivy::Result<Fields> {
    let f = |name: &str| schema.get_field(name);
    Ok(Fields {
        kind: f("kind")?,
        sid: f("sid")?,
        sid_hash: f("sid_hash")?,
        harness: f("harness")?,
        source: f("source")?,
        role: f("role")?,
        text: f("text")?,
        body: f("body").ok(),
        seq: f("seq")?,
        time: f("time")?,
        extra: f("extra")?,
        sig: f("sig")?,
        work: f("work")?,
        path: f("path")?,
    })
}

pub fn register_tokenizer(index: &Index) {
    index.tokenizers().register(TOKENIZER_NAME, TextAnalyzer::builder(DejaTokenizer::default()).build());
    index.tokenizers().register(PARTS_TOKENIZER_NAME, TextAnalyzer::builder(DejaTokenizer::parts_only()).build());
}

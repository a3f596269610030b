//! The tantivy index.

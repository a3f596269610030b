//! Where an index's bytes go: per part (term dictionaries, postings, positions, fast
//! fields, field norms, the document store, deletes) and, for the per-field parts, per
//! field, summed over segments. `deja bench index` reports it, so a change to the schema
//! or the tokenizer shows what it costs on disk.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{IndexError, IndexView};

/// The bytes of one index, by part and by field.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SpaceUsage {
    pub segments: usize,
    pub docs: u64,
    pub total: u64,
    /// Part name (`termdict`, `postings`, `positions`, `fast`, `fieldnorms`, `store`,
    /// `deletes`) to its bytes.
    pub parts: BTreeMap<&'static str, u64>,
    /// Part name to field name to bytes (the per-field parts only).
    pub fields: BTreeMap<&'static str, BTreeMap<String, u64>>,
}

impl IndexView {
    /// The space the serving generation's segments take.
    pub fn space_usage(&self) -> Result<SpaceUsage, IndexError> {
        let searcher = self.searcher();
        let usage = searcher.space_usage().map_err(|source| IndexError::Io { path: self.paths.tantivy(), source })?;
        let mut out = SpaceUsage { segments: usage.segments().len(), total: usage.total().get_bytes(), ..SpaceUsage::default() };
        for seg in usage.segments() {
            out.docs += u64::from(seg.num_docs());
            let per_field = [
                ("termdict", seg.termdict()),
                ("postings", seg.postings()),
                ("positions", seg.positions()),
                ("fast", seg.fast_fields()),
                ("fieldnorms", seg.fieldnorms()),
            ];
            for (part, fields) in per_field {
                *out.parts.entry(part).or_default() += fields.total().get_bytes();
                let by_field = out.fields.entry(part).or_default();
                for f in fields.fields() {
                    *by_field.entry(f.field_name().to_string()).or_default() += f.total().get_bytes();
                }
            }
            *out.parts.entry("store").or_default() += seg.store().total().get_bytes();
            *out.parts.entry("deletes").or_default() += seg.deletes().get_bytes();
        }
        Ok(out)
    }
}

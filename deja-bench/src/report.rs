//! How the benchmarks report: an aligned text table and the
//! check that a `--harness` names a linked adapter. The `deja` binary has its own
//! `output.rs` for its commands; these few lines are the bench's, so the suite depends
//! on deja-core and the adapters, never on the binary's code.

use anyhow::{bail, Result};

/// `rows` under `header`, columns padded to their widest cell: the first left-aligned,
/// the rest right-aligned (they hold figures).
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let cols = header.len();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(cols) {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let fmt_row = |cells: &[String]| -> String {
        let mut line = String::new();
        for (i, c) in cells.iter().enumerate().take(cols) {
            let pad = widths[i].saturating_sub(c.chars().count());
            if i == 0 {
                line.push_str(c);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str("  ");
                line.push_str(&" ".repeat(pad));
                line.push_str(c);
            }
        }
        line.trim_end().to_string()
    };
    let mut out = fmt_row(&header.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    out.push('\n');
    for r in rows {
        out.push_str(&fmt_row(r));
        out.push('\n');
    }
    out
}

/// A directory's size on disk, as the binary reports it too.
pub use deja_core::fsutil::dir_size;

/// Refuses a harness id no linked adapter has, naming the ones there are.
pub fn check_harness_ids(ids: &[String]) -> Result<()> {
    for id in ids {
        if deja_core::lookup(id).is_none() {
            let known: Vec<&str> = deja_core::registry().iter().map(|f| f.info().id).collect();
            bail!("unknown harness `{id}`; known: {}", known.join(", "));
        }
    }
    Ok(())
}

//! How the benchmarks report: an aligned text table, a directory's size on disk, and the
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

/// Bytes of the regular files under `dir` (0 for what cannot be read).
pub fn dir_size(dir: &std::path::Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(t) if t.is_file() => total += e.metadata().map_or(0, |m| m.len()),
                _ => {}
            }
        }
    }
    total
}

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

//! Small shared pieces of human output: dates, ages, tables, and the `--since` parser.

use anyhow::{bail, Result};
use deja_core::Timestamp;

/// `2026-03-02 10:00` in UTC, or `-`.
pub fn short_time(t: Option<Timestamp>) -> String {
    t.and_then(|t| t.to_datetime()).map_or_else(|| "-".to_string(), |d| d.format("%Y-%m-%d %H:%M").to_string())
}

/// Parses `30d`, `12h`, `2w`, `90m`, or a date `2026-01-02` (or any timestamp shape).
pub fn parse_since(s: &str, now: Timestamp) -> Result<Timestamp> {
    let s = s.trim();
    if let Some(unit) = s.chars().last().filter(|c| c.is_ascii_alphabetic()) {
        let n: &str = &s[..s.len() - 1];
        if let Ok(n) = n.parse::<i64>() {
            let ms = match unit {
                'm' => n * 60_000,
                'h' => n * 3_600_000,
                'd' => n * 86_400_000,
                'w' => n * 7 * 86_400_000,
                'y' => n * 365 * 86_400_000,
                _ => bail!("--since {s}: unknown unit `{unit}` (use m, h, d, w or y, or a date like 2026-01-02)"),
            };
            return Ok(Timestamp(now.0 - ms));
        }
    }
    Timestamp::parse_str(s).ok_or_else(|| anyhow::anyhow!("--since {s}: expected an age like 30d or a date like 2026-01-02"))
}

/// Left-aligned first column, right-aligned numbers.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let cols = header.len();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(cols) {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let fmt_row = |cells: Vec<String>| -> String {
        let mut line = String::new();
        for (i, c) in cells.iter().enumerate() {
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
    let mut out = fmt_row(header.iter().map(|s| s.to_string()).collect());
    out.push('\n');
    for r in rows {
        out.push_str(&fmt_row(r.clone()));
        out.push('\n');
    }
    out
}

pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Total size of the files under `dir`.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_accepts_ages_and_dates() {
        let now = Timestamp(10 * 86_400_000);
        assert_eq!(parse_since("1d", now).unwrap(), Timestamp(9 * 86_400_000));
        assert_eq!(parse_since("1970-01-02", now).unwrap(), Timestamp(86_400_000));
        assert!(parse_since("soon", now).is_err());
    }
}

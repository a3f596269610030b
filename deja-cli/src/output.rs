//! Small shared pieces of human output: dates, ages, tables, resume commands, and the
//! `--since` parser.

use anyhow::{bail, Result};
use deja_core::Timestamp;

/// `2026-03-02 10:00` in UTC, or `-`.
pub fn short_time(t: Option<Timestamp>) -> String {
    t.and_then(|t| t.to_datetime()).map_or_else(|| "-".to_string(), |d| d.format("%Y-%m-%d %H:%M").to_string())
}

/// A session's resume command as JSON: `{command, argv, dir?, note?}`, or `null` with the
/// reason beside it in `resume_unavailable`, so a script can tell "none" from "unknown".
pub fn resume_json(meta: &deja_core::model::SessionMeta) -> (serde_json::Value, Option<String>) {
    match deja_core::format::resume_for(meta) {
        Ok(r) => (serde_json::to_value(r).unwrap_or(serde_json::Value::Null), None),
        Err(why) => (serde_json::Value::Null, Some(why)),
    }
}

/// `⌫ source deleted …` for a session whose harness deleted its source: when deja
/// noticed and that the archive kept it.
pub fn kept_line(meta: &deja_core::model::SessionMeta) -> Option<String> {
    let d = meta.source_deleted.as_ref()?;
    Some(format!("⌫ its harness deleted the source (noticed {}); deja kept the session", short_time(Some(d.noticed))))
}

/// Parses `30d`, `12h`, `2w`, `90m`, or a date `2026-01-02` (or any timestamp shape).
pub fn parse_since(s: &str, now: Timestamp) -> Result<Timestamp> {
    parse_when("--since", s, now)
}

/// [`parse_since`] for any flag, named in the errors.
pub fn parse_when(flag: &str, s: &str, now: Timestamp) -> Result<Timestamp> {
    let s = s.trim();
    if let Some(unit) = s.chars().last().filter(|c| c.is_ascii_alphabetic()) {
        let n: &str = &s[..s.len() - 1];
        if let Ok(n) = n.parse::<i64>() {
            let unit_ms: i64 = match unit {
                'm' => 60_000,
                'h' => 3_600_000,
                'd' => 86_400_000,
                'w' => 7 * 86_400_000,
                'y' => 365 * 86_400_000,
                _ => bail!("{flag} {s}: unknown unit `{unit}` (use m, h, d, w or y, or a date like 2026-01-02)"),
            };
            if n < 0 {
                bail!("{flag} {s}: an age counts back from now, so it cannot be negative");
            }
            // Anything before the epoch finds the same turns as the epoch; only an age
            // too large to count in milliseconds is refused.
            let ms =
                n.checked_mul(unit_ms).ok_or_else(|| anyhow::anyhow!("{flag} {s}: too far back (at most {}{unit})", i64::MAX / unit_ms))?;
            return Ok(Timestamp(now.0.saturating_sub(ms).max(0)));
        }
    }
    Timestamp::parse_str(s).ok_or_else(|| anyhow::anyhow!("{flag} {s}: expected an age like 30d or a date like 2026-01-02"))
}

/// The most results one command returns: every hit is read and rendered, so a larger
/// `--limit` only costs memory (`--limit 100000000` once asked for a 48 GB buffer).
pub const MAX_LIMIT: usize = deja_core::index::search::MAX_LIMIT;

/// `--limit`: a whole number from 1 to [`MAX_LIMIT`], refused otherwise with the range.
pub fn parse_limit(s: &str) -> std::result::Result<usize, String> {
    let range = format!("a whole number from 1 to {MAX_LIMIT}");
    match s.trim().parse::<u128>() {
        Ok(0) => Err(format!("0 would return nothing; use {range}")),
        Ok(n) if n > MAX_LIMIT as u128 => Err(format!("{n} is more than deja returns at once; use {range}")),
        Ok(n) => Ok(n as usize),
        Err(_) => Err(format!("`{s}` is not a number; use {range}")),
    }
}

/// The values `--role` accepts: the turn roles, plus the work kinds a turn carries.
pub const ROLES: [&str; 12] =
    ["user", "assistant", "tool", "command", "files", "edit", "error", "summary", "note", "reasoning", "tool_call", "tool_output"];

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

    #[test]
    fn since_refuses_ages_past_what_milliseconds_count() {
        let now = Timestamp(10 * 86_400_000);
        let err = parse_since("999999999999y", now).unwrap_err().to_string();
        assert!(err.contains("too far back"), "{err}");
        assert!(parse_since("999999999y", now).unwrap_err().to_string().contains("too far back"));
        assert_eq!(parse_since("200000000y", now).unwrap(), Timestamp(0), "before the epoch finds what the epoch finds");
        assert!(parse_since("-3d", now).is_err());
    }

    #[test]
    fn limit_is_bounded_and_says_the_range() {
        assert_eq!(parse_limit("15"), Ok(15));
        for bad in ["0", "100000000", "18446744073709551615", "99999999999999999999999999", "-1", "lots"] {
            let err = parse_limit(bad).unwrap_err();
            assert!(err.contains("from 1 to 1000"), "{bad}: {err}");
        }
    }
}

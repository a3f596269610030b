//! Timestamps: UTC milliseconds, parsed from every shape the formats use.
//!
//! A field may be an RFC 3339 string (with or without fraction or zone), one of
//! `YYYY-MM-DDTHH:MM[:SS]`, `YYYY-MM-DD HH:MM:SS[zone]`, a stringified epoch, or a JSON
//! number. Numbers above 1e12 are epoch milliseconds, others epoch seconds.

use std::fmt;

use chrono::{DateTime, Local, NaiveDate, NaiveDateTime, TimeZone, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Milliseconds since the Unix epoch, UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

impl Timestamp {
    pub fn from_millis(ms: i64) -> Self {
        Timestamp(ms)
    }

    pub fn from_secs_f64(secs: f64) -> Option<Self> {
        if !secs.is_finite() {
            return None;
        }
        let ms = secs * 1000.0;
        (ms.abs() < 1e16).then_some(Timestamp(ms as i64))
    }

    pub fn now() -> Self {
        Timestamp(Utc::now().timestamp_millis())
    }

    pub fn millis(self) -> i64 {
        self.0
    }

    pub fn to_datetime(self) -> Option<DateTime<Utc>> {
        Utc.timestamp_millis_opt(self.0).single()
    }

    /// RFC 3339 with milliseconds, e.g. `2026-03-02T10:00:00.000Z`.
    pub fn to_rfc3339(self) -> String {
        match self.to_datetime() {
            Some(dt) => dt.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            None => self.0.to_string(),
        }
    }

    /// A JSON number: above 1e12 milliseconds, else seconds (fractions allowed).
    pub fn from_number(n: f64) -> Option<Self> {
        if n == 0.0 || !n.is_finite() {
            return None;
        }
        if n.abs() > 1e12 {
            (n.abs() < 1e16).then_some(Timestamp(n as i64))
        } else {
            Timestamp::from_secs_f64(n)
        }
    }

    /// Any string shape listed in the module doc.
    pub fn parse_str(s: &str) -> Option<Self> {
        let s = s.trim();
        if s.is_empty() {
            return None;
        }
        if let Ok(dt) = DateTime::parse_from_rfc3339(s) {
            return Some(Timestamp(dt.timestamp_millis()));
        }
        if s.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b'-') && s.bytes().any(|b| b.is_ascii_digit()) && !s[1..].contains('-')
        {
            if let Ok(n) = s.parse::<f64>() {
                return Timestamp::from_number(n);
            }
        }
        for fmt in ["%Y-%m-%d %H:%M:%S%.f%:z", "%Y-%m-%d %H:%M:%S%.f%z", "%Y-%m-%dT%H:%M:%S%.f%z"] {
            if let Ok(dt) = DateTime::parse_from_str(s, fmt) {
                return Some(Timestamp(dt.timestamp_millis()));
            }
        }
        let trimmed = s.trim_end_matches('Z').trim_end_matches(" UTC");
        for fmt in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M"] {
            if let Ok(dt) = NaiveDateTime::parse_from_str(trimmed, fmt) {
                return Some(Timestamp(dt.and_utc().timestamp_millis()));
            }
        }
        if let Ok(d) = NaiveDate::parse_from_str(trimmed, "%Y-%m-%d") {
            return d.and_hms_opt(0, 0, 0).map(|dt| Timestamp(dt.and_utc().timestamp_millis()));
        }
        None
    }

    /// A zone-less `YYYY-MM-DD[T ]HH:MM:SS[.fff]` as the machine's local wall-clock time,
    /// as harnesses written in Python store `datetime.now()`: the earlier instant of an
    /// ambiguous autumn hour, and a time skipped by a spring jump read as UTC rather than
    /// lost. Any other shape (a zone, `Z`, an epoch) as [`Timestamp::parse_str`] reads it.
    pub fn parse_local(s: &str) -> Option<Self> {
        let s = s.trim();
        for fmt in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"] {
            if let Ok(naive) = NaiveDateTime::parse_from_str(s, fmt) {
                let ms = match Local.from_local_datetime(&naive).earliest() {
                    Some(dt) => dt.timestamp_millis(),
                    None => naive.and_utc().timestamp_millis(),
                };
                return Some(Timestamp(ms));
            }
        }
        Timestamp::parse_str(s)
    }

    /// A JSON value that is a number or a string in any accepted shape.
    pub fn from_json(v: &serde_json::Value) -> Option<Self> {
        match v {
            serde_json::Value::Number(n) => n.as_f64().and_then(Timestamp::from_number),
            serde_json::Value::String(s) => Timestamp::parse_str(s),
            _ => None,
        }
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_rfc3339())
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        Timestamp::from_json(&v).ok_or_else(|| serde::de::Error::custom("unparseable timestamp"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_documented_shape() {
        let want = Timestamp(1_772_445_600_000); // 2026-03-02T10:00:00Z
        for s in [
            "2026-03-02T10:00:00Z",
            "2026-03-02T10:00:00.000Z",
            "2026-03-02T11:00:00+01:00",
            "2026-03-02T10:00:00",
            "2026-03-02T10:00",
            "2026-03-02 10:00:00",
            "2026-03-02 10:00:00+00:00",
            "1772445600",
            "1772445600000",
        ] {
            assert_eq!(Timestamp::parse_str(s), Some(want), "{s}");
        }
        assert_eq!(Timestamp::from_number(1_772_445_600.0), Some(want));
        assert_eq!(Timestamp::from_number(1_772_445_600_000.0), Some(want));
        assert_eq!(Timestamp::parse_str("yesterday"), None);
        assert_eq!(Timestamp::from_number(0.0), None);
    }

    #[test]
    fn a_zoneless_time_is_local_and_a_zoned_one_as_written() {
        let zoned = Timestamp::parse_local("2026-03-02T10:00:00Z");
        assert_eq!(zoned, Some(Timestamp(1_772_445_600_000)));
        let naive = NaiveDateTime::parse_from_str("2026-03-02 10:00:00", "%Y-%m-%d %H:%M:%S").expect("naive");
        let local = Local.from_local_datetime(&naive).earliest().map(|dt| Timestamp(dt.timestamp_millis()));
        assert_eq!(Timestamp::parse_local("2026-03-02 10:00:00"), local);
        assert_eq!(Timestamp::parse_local("2026-03-02T10:00:00.250"), local.map(|t| Timestamp(t.0 + 250)));
        assert_eq!(Timestamp::parse_local("not a time"), None);
    }
}

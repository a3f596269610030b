//! How long a harness keeps its own history, as each adapter declares it in
//! [`HarnessInfo::retention`](crate::HarnessInfo::retention): whether it deletes sessions
//! at all, the setting that says when (its file, key and default, read from the
//! harness's source or docs), and what triggers the sweep. Core reads the setting in
//! effect on this machine ([`Retention::in_effect`]) and says which sources the next
//! sweeps will take ([`Policy::due`]); what deja keeps of them is the index's part
//! (`index::retention`).
//!
//! Never changes the harness's setting: deja only reads it.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::env::StoreEnv;
use crate::time::Timestamp;

/// A harness's retention of its own sessions.
#[derive(Debug, Clone, Copy)]
pub enum Retention {
    /// Not looked into yet.
    Unknown,
    /// The harness deletes no session on its own; the evidence.
    KeepsForever(&'static str),
    /// Sessions older than an age the user can set are deleted.
    MaxAge(MaxAge),
}

/// An age-based sweep: sessions whose age (by [`age_of`](Self::age_of)) passes the
/// setting's value are deleted when [`trigger`](Self::trigger) happens.
#[derive(Debug, Clone, Copy)]
pub struct MaxAge {
    /// The settings file, a path template as in [`crate::store`]
    /// (`${CLAUDE_CONFIG_DIR:-~/.claude}/settings.json`).
    pub file: &'static str,
    /// The setting, as a dotted path of JSON keys (`general.sessionRetention.maxAge`).
    pub setting: &'static str,
    /// How its value reads.
    pub unit: AgeUnit,
    /// The value in effect when the file does not set it, in seconds.
    pub default_secs: u64,
    /// A switch that turns the sweep off, with its default (`None`: there is none).
    pub switch: Option<(&'static str, bool)>,
    /// What triggers the sweep ("at start-up").
    pub trigger: &'static str,
    /// What the age is measured from, as the harness does it. deja measures from the
    /// source file's modification time, which these harnesses write with each update.
    pub age_of: &'static str,
    /// Where this was learned (source file, docs page, release run).
    pub evidence: &'static str,
}

/// How a retention setting's value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgeUnit {
    /// A number of days (`30`).
    Days,
    /// A count and a unit letter: `h`, `d`, `w`, `m` (30 days): `"30d"`.
    Period,
}

const DAY: u64 = 86_400;

impl AgeUnit {
    /// The age a value of this unit stands for, in seconds; `None` when it cannot be read
    /// (the harness rejects such a value too).
    pub fn parse(self, v: &serde_json::Value) -> Option<u64> {
        match self {
            AgeUnit::Days => {
                let days = v.as_f64().filter(|d| d.is_finite() && *d > 0.0)?;
                Some((days * DAY as f64).min(u64::MAX as f64 / 2.0) as u64)
            }
            AgeUnit::Period => {
                let s = v.as_str()?.trim();
                let unit = s.chars().last()?;
                let n: u64 = s[..s.len() - unit.len_utf8()].parse().ok().filter(|n| *n > 0)?;
                let secs = match unit {
                    'h' => 3_600,
                    'd' => DAY,
                    'w' => 7 * DAY,
                    'm' => 30 * DAY,
                    _ => return None,
                };
                n.checked_mul(secs)
            }
        }
    }
}

/// The retention in effect on this machine.
#[derive(Debug, Clone, Serialize)]
pub struct Policy {
    /// The setting's dotted path of keys in the file.
    pub setting: &'static str,
    /// The settings file read (whether or not it exists).
    pub file: Option<PathBuf>,
    /// The value in effect, as the harness writes it (`30`, `"30d"`), or `null` when
    /// the sweep is off.
    pub value: serde_json::Value,
    /// Where the value came from: `settings file`, `default`, or `default (…)` when the
    /// file could not be read or held a value the harness rejects.
    pub from: String,
    /// Sessions older than this are deleted; `None` when the sweep is off.
    pub max_age_secs: Option<u64>,
    pub trigger: &'static str,
    pub age_of: &'static str,
}

/// What a policy will take within a window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Due {
    /// Already past the age: deleted the next time the harness sweeps.
    pub overdue: u64,
    /// Past it within the window (and not already).
    pub within: u64,
}

impl Due {
    pub fn total(&self) -> u64 {
        self.overdue + self.within
    }
}

impl Retention {
    /// The policy in effect for this environment, or `None` when the harness deletes
    /// nothing (or it is not known whether it does).
    pub fn in_effect(&self, env: &StoreEnv) -> Option<Policy> {
        let Retention::MaxAge(m) = self else { return None };
        let file = crate::store::eval(m.file, env).into_iter().next();
        let (doc, problem) = match file.as_deref().map(read_settings) {
            Some(Ok(doc)) => (doc, None),
            Some(Err(e)) => (None, Some(e)),
            None => (None, None),
        };
        let lookup = |path: &str| doc.as_ref().and_then(|d| dotted(d, path)).cloned();
        let default_value = match m.unit {
            AgeUnit::Days => serde_json::json!(m.default_secs / DAY),
            AgeUnit::Period => serde_json::json!(format!("{}d", m.default_secs / DAY)),
        };
        let base = |value, from: String, max_age_secs| Policy {
            setting: m.setting,
            file: file.clone(),
            value,
            from,
            max_age_secs,
            trigger: m.trigger,
            age_of: m.age_of,
        };
        if let Some(p) = problem {
            return Some(base(default_value, format!("default ({p})"), Some(m.default_secs)));
        }
        if let Some((key, default_on)) = m.switch {
            let on = lookup(key).and_then(|v| v.as_bool()).unwrap_or(default_on);
            if !on {
                return Some(base(serde_json::Value::Null, format!("off ({key} is false)"), None));
            }
        }
        match lookup(m.setting) {
            Some(v) => match m.unit.parse(&v) {
                Some(secs) => Some(base(v, "settings file".into(), Some(secs))),
                None => Some(base(
                    default_value,
                    format!("default ({} = {v} is not a value the harness reads)", m.setting),
                    Some(m.default_secs),
                )),
            },
            None => Some(base(default_value, "default".into(), Some(m.default_secs))),
        }
    }
}

impl Policy {
    /// How many of `mtimes` (each source's modification time) the sweep deletes now and
    /// within `window` of `now`.
    pub fn due(&self, mtimes: impl IntoIterator<Item = Timestamp>, now: Timestamp, window_secs: u64) -> Due {
        let mut due = Due::default();
        let Some(age) = self.max_age_secs else { return due };
        let age_ms = age.saturating_mul(1000).min(i64::MAX as u64) as i64;
        let window_ms = window_secs.saturating_mul(1000).min(i64::MAX as u64) as i64;
        for m in mtimes {
            let expires = m.millis().saturating_add(age_ms);
            if expires <= now.millis() {
                due.overdue += 1;
            } else if expires <= now.millis().saturating_add(window_ms) {
                due.within += 1;
            }
        }
        due
    }

    /// True when `mtime` is past the age within `window_secs` of `now`.
    pub fn expires_within(&self, mtime: Timestamp, now: Timestamp, window_secs: u64) -> bool {
        self.due([mtime], now, window_secs).total() > 0
    }
}

/// The settings file as JSON (comments and trailing commas allowed, as the harnesses that
/// write JSONC settings read them); `Ok(None)` when it does not exist.
fn read_settings(path: &Path) -> Result<Option<serde_json::Value>, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    jsonc_parser::parse_to_ast(&text, &jsonc_parser::CollectOptions::default(), &jsonc_parser::ParseOptions::default())
        .map(|parsed| parsed.value.map(serde_json::Value::from))
        .map_err(|e| format!("{} does not parse: {e}", path.display()))
}

/// The value at a dotted path of keys.
fn dotted<'a>(doc: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    path.split('.').try_fold(doc, |v, key| v.get(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLAUDE_LIKE: Retention = Retention::MaxAge(MaxAge {
        file: "~/.tool/settings.json",
        setting: "cleanupPeriodDays",
        unit: AgeUnit::Days,
        default_secs: 30 * DAY,
        switch: None,
        trigger: "at start-up",
        age_of: "mtime",
        evidence: "test",
    });

    const GEMINI_LIKE: Retention = Retention::MaxAge(MaxAge {
        file: "~/.tool/settings.json",
        setting: "general.sessionRetention.maxAge",
        unit: AgeUnit::Period,
        default_secs: 30 * DAY,
        switch: Some(("general.sessionRetention.enabled", true)),
        trigger: "at start-up",
        age_of: "lastUpdated",
        evidence: "test",
    });

    fn home_with(settings: Option<&str>) -> (tempfile::TempDir, StoreEnv) {
        let dir = tempfile::tempdir().expect("tempdir");
        if let Some(s) = settings {
            std::fs::create_dir_all(dir.path().join(".tool")).expect("mkdir");
            std::fs::write(dir.path().join(".tool/settings.json"), s).expect("write");
        }
        let env = StoreEnv::with_home(dir.path());
        (dir, env)
    }

    #[test]
    fn the_default_applies_without_a_settings_file() {
        let (_d, env) = home_with(None);
        let p = CLAUDE_LIKE.in_effect(&env).expect("policy");
        assert_eq!(p.max_age_secs, Some(30 * DAY));
        assert_eq!(p.from, "default");
        assert_eq!(p.value, serde_json::json!(30));
    }

    #[test]
    fn the_setting_in_the_file_wins_and_bad_values_fall_back_with_a_reason() {
        let (_d, env) = home_with(Some(r#"{"cleanupPeriodDays": 7}"#));
        assert_eq!(CLAUDE_LIKE.in_effect(&env).expect("policy").max_age_secs, Some(7 * DAY));
        let (_d, env) = home_with(Some(r#"{"cleanupPeriodDays": "soon"}"#));
        let p = CLAUDE_LIKE.in_effect(&env).expect("policy");
        assert_eq!(p.max_age_secs, Some(30 * DAY));
        assert!(p.from.contains("cleanupPeriodDays"), "{}", p.from);
        let (_d, env) = home_with(Some("{not json"));
        let p = CLAUDE_LIKE.in_effect(&env).expect("policy");
        assert!(p.from.contains("does not parse"), "{}", p.from);
    }

    #[test]
    fn a_period_setting_and_its_switch() {
        let (_d, env) = home_with(Some("// comment\n{\"general\": {\"sessionRetention\": {\"maxAge\": \"2w\",}}}"));
        assert_eq!(GEMINI_LIKE.in_effect(&env).expect("policy").max_age_secs, Some(14 * DAY));
        let (_d, env) = home_with(Some(r#"{"general": {"sessionRetention": {"enabled": false}}}"#));
        let p = GEMINI_LIKE.in_effect(&env).expect("policy");
        assert_eq!(p.max_age_secs, None);
        assert_eq!(p.due([Timestamp::from_millis(0)], Timestamp::now(), 7 * DAY), Due::default());
        assert_eq!(AgeUnit::Period.parse(&serde_json::json!("0d")), None);
        assert_eq!(AgeUnit::Period.parse(&serde_json::json!("3m")), Some(90 * DAY));
        assert_eq!(AgeUnit::Period.parse(&serde_json::json!("3x")), None);
    }

    #[test]
    fn due_counts_what_is_past_the_age_now_and_within_the_window() {
        let (_d, env) = home_with(None);
        let p = CLAUDE_LIKE.in_effect(&env).expect("policy");
        let now = Timestamp::from_millis(100 * DAY as i64 * 1000);
        let days_ago = |d: u64| Timestamp::from_millis(now.millis() - (d * DAY * 1000) as i64);
        let due = p.due([days_ago(40), days_ago(30), days_ago(25), days_ago(23), days_ago(22), days_ago(1)], now, 7 * DAY);
        assert_eq!(due, Due { overdue: 2, within: 2 });
    }

    #[test]
    fn harnesses_that_keep_everything_have_no_policy() {
        let (_d, env) = home_with(None);
        assert!(Retention::KeepsForever("no sweep").in_effect(&env).is_none());
        assert!(Retention::Unknown.in_effect(&env).is_none());
    }
}

//! What the harnesses' own retention will delete soon, and what of it deja keeps: for
//! each harness whose adapter declares an age-based sweep ([`crate::retention`]), the
//! setting in effect on this machine, how many of its sources the sweep takes now and
//! within the window (a week), and of those how many the archive already holds (the
//! serving generation's manifest has the source with a session), how many changed since
//! it was read, and how many deja would lose (never read, or its harness excluded by
//! the settings). `deja doctor` and the end of `deja index` print it.
//!
//! Only reads: the harness's setting is never changed on the user's behalf.

use serde::Serialize;

use super::manifest::Manifest;
use super::IndexPaths;
use crate::env::StoreEnv;
use crate::format::HarnessFormat;
use crate::retention::{Due, Policy};
use crate::time::Timestamp;

/// The window `deja doctor` and `deja index` warn about.
pub const WARN_WINDOW_SECS: u64 = 7 * 86_400;

/// One harness's sweep and what deja keeps of it.
#[derive(Debug, Clone, Serialize)]
pub struct RetentionReport {
    pub harness: &'static str,
    pub name: &'static str,
    pub policy: Policy,
    pub window_days: u64,
    /// Sources found in the harness's store.
    pub sources: u64,
    /// Of them, what the sweep deletes now and within the window.
    pub due: Due,
    /// Due sources the archive holds as they are now.
    pub kept: u64,
    /// Due sources the archive holds, but that changed since deja read them: the turns
    /// added since are lost unless `deja index` runs first.
    pub behind: u64,
    /// Due sources deja has not archived: lost when the sweep runs.
    pub lost: u64,
    /// Why deja does not keep this harness at all (excluded by the settings), if so.
    pub excluded: Option<String>,
}

impl RetentionReport {
    /// One sentence for the terminal.
    pub fn sentence(&self) -> String {
        let Some(age) = self.policy.max_age_secs else {
            return format!("{}: deletes no history ({} {}).", self.name, self.policy.setting, self.policy.from);
        };
        let file = self.policy.file.as_ref().map_or_else(|| "(no settings file)".to_string(), |f| f.display().to_string());
        let setting = format!("{file}: {} = {} ({})", self.policy.setting, self.policy.value, self.policy.from);
        let due = self.due.total();
        let when = format!("sessions older than {} are deleted {}", days(age), self.policy.trigger);
        if due == 0 {
            return format!("{}: {setting}: {when}; none of its {} sessions within {} days.", self.name, self.sources, self.window_days);
        }
        let what = format!(
            "{due} of its {} sessions will be deleted within {} days ({} at its next start)",
            self.sources, self.window_days, self.due.overdue
        );
        let keep = match &self.excluded {
            Some(why) => format!("deja does not keep them: {why}"),
            None if self.lost + self.behind == 0 => "deja keeps all of them".to_string(),
            None => format!(
                "deja keeps {} of them; {} not yet archived{} — run `deja index` before the harness starts",
                self.kept + self.behind,
                self.lost,
                if self.behind > 0 { format!(", {} changed since archived", self.behind) } else { String::new() }
            ),
        };
        format!("{}: {setting}: {when}; {what}; {keep}.", self.name)
    }
}

fn days(secs: u64) -> String {
    if secs.is_multiple_of(86_400) {
        format!("{} days", secs / 86_400)
    } else {
        format!("{:.1} days", secs as f64 / 86_400.0)
    }
}

/// The report for every adapter in `adapters` whose harness sweeps its history, as of
/// `now`, against the serving generation of `paths` (no index: nothing is kept yet).
pub fn retention_reports(
    env: &StoreEnv,
    paths: &IndexPaths,
    adapters: &[&'static dyn HarnessFormat],
    now: Timestamp,
) -> Vec<RetentionReport> {
    let mut policies = Vec::new();
    for a in adapters {
        if let Some(p) = a.info().retention.in_effect(env) {
            policies.push((*a, p));
        }
    }
    if policies.is_empty() {
        return Vec::new();
    }
    let manifest = Manifest::load(&IndexPaths::new(&paths.root).manifest()).unwrap_or_default();
    let exclusions = crate::config::Settings::load(env).ok().map(|s| s.exclusions);
    policies
        .into_iter()
        .map(|(a, policy)| {
            let info = a.info();
            let found = a.discover(env);
            let mut due = Due::default();
            let (mut kept, mut behind, mut lost) = (0, 0, 0);
            for src in &found.sources {
                let Ok(meta) = std::fs::metadata(&src.path) else { continue };
                let mtime = crate::stamp::mtime_ns(&meta);
                let stamp = Timestamp::from_millis(mtime / 1_000_000);
                let d = policy.due([stamp], now, WARN_WINDOW_SECS);
                if d.total() == 0 {
                    continue;
                }
                due.overdue += d.overdue;
                due.within += d.within;
                match manifest.get(&src.manifest_key()) {
                    Some(e) if e.sessions > 0 && e.size == meta.len() && e.mtime_ns == mtime => kept += 1,
                    Some(e) if e.sessions > 0 => behind += 1,
                    _ => lost += 1,
                }
            }
            let excluded = exclusions.as_ref().and_then(|x| x.excluded_by(info.id, None));
            if excluded.is_some() {
                // What the archive holds from before the exclusion is dropped with it.
                (kept, behind, lost) = (0, 0, due.total());
            }
            RetentionReport {
                harness: info.id,
                name: info.name,
                policy,
                window_days: WARN_WINDOW_SECS / 86_400,
                sources: found.sources.len() as u64,
                due,
                kept,
                behind,
                lost,
                excluded,
            }
        })
        .collect()
}

//! deja's settings file, `${XDG_CONFIG_HOME:-~/.config}/deja/config.toml` (or
//! `DEJA_CONFIG`), and the exclusions it declares: history deja must never index or
//! archive.
//!
//! ```toml
//! [exclude]
//! # Working directories (and everything under them).
//! projects = ["~/work/client-secret", "/srv/payroll"]
//! # Adapter ids (`deja harnesses` lists them).
//! harnesses = ["cursor"]
//! # Glob patterns on the working directory (globset syntax; `**` crosses directories).
//! globs = ["**/scratch/**", "/tmp/**"]
//!
//! [index]
//! # "auto" (the default): the first search or `deja index` with no watcher running
//! # starts `deja index --watch` in the background, which exits after 30 idle minutes.
//! # "off": never; every search walks the stores itself. `DEJA_WATCH` overrides.
//! watch = "auto"
//!
//! [team]
//! # Team memory on PostgreSQL (docs/team-memory.md), written by `deja team init`,
//! # `share` and `unshare`. The URL never holds a password (libpq's PGPASSWORD,
//! # ~/.pgpass or a service file give it).
//! url = "postgres://alice@db.example.com/deja?sslmode=verify-full"
//! machine = "laptop"
//! author = "alice"
//! # Projects that leave this machine: normalized git remotes or paths.
//! share = ["github.com/org/app"]
//! # "manual" (the default): only `deja team push`; "auto": `deja index --watch` pushes too.
//! push = "manual"
//! ```
//!
//! A missing file is no exclusions. A file that does not parse, names an unknown key or
//! holds a bad pattern is an error naming the file, line and column: indexing with part
//! of the user's exclusions silently ignored would archive what they asked to keep out.
//!
//! The `toml` crate parses (with serde and located errors) and `globset` (ripgrep's
//! matcher) compiles the patterns into one automaton.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::StoreEnv;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {reason}")]
    Invalid { path: PathBuf, reason: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The settings file as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub exclude: ExcludeRules,
    #[serde(default)]
    pub index: IndexSettings,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<TeamSettings>,
}

/// `[team]`: the team store this machine pushes to and searches, and what it shares.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TeamSettings {
    /// A PostgreSQL connection URL or `key=value` string, without a password.
    #[serde(default)]
    pub url: String,
    /// This machine's name in the team store (default: the host name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    /// Who pushes from here: the PostgreSQL role rows are written as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// Project keys (normalized git remotes, or paths) whose sessions are pushed.
    #[serde(default)]
    pub share: Vec<String>,
    /// Every project is shared (`deja team share --all`).
    #[serde(default)]
    pub share_all: bool,
    /// Only these harnesses' sessions are pushed (empty: every harness).
    #[serde(default)]
    pub harnesses: Vec<String>,
    #[serde(default)]
    pub push: PushMode,
    /// How long a team search may take before deja answers without it, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// When this machine pushes (`[team] push`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PushMode {
    /// Only `deja team push`.
    #[default]
    Manual,
    /// `deja index --watch` pushes after each run that wrote something.
    Auto,
}

/// Rewrites the settings file's `[team]` table to `team` (or removes it), keeping every
/// other byte of the file (comments, order) as it was, and checks that the result
/// still loads. Returns the file's path.
pub fn write_team(env: &StoreEnv, team: Option<&TeamSettings>) -> Result<PathBuf, ConfigError> {
    let path = config_path(env);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => return Err(ConfigError::Io { path, source }),
    };
    let invalid = |reason: String| ConfigError::Invalid { path: path.clone(), reason };
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| invalid(e.to_string()))?;
    match team {
        None => {
            doc.remove("team");
        }
        Some(team) => {
            let fresh: toml_edit::DocumentMut = toml::to_string(team)
                .map_err(|e| invalid(e.to_string()))?
                .parse()
                .map_err(|e: toml_edit::TomlError| invalid(e.to_string()))?;
            let mut table = fresh.as_table().clone();
            table.set_implicit(false);
            // Keep comments and the position of an existing table; replace its values.
            match doc.get_mut("team").and_then(|t| t.as_table_mut()) {
                Some(existing) => {
                    let keys: Vec<String> = existing.iter().map(|(k, _)| k.to_string()).collect();
                    for k in keys {
                        if !table.contains_key(&k) {
                            existing.remove(&k);
                        }
                    }
                    for (k, v) in table.iter() {
                        existing.insert(k, v.clone());
                    }
                }
                None => {
                    doc.insert("team", toml_edit::Item::Table(table));
                }
            }
        }
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| ConfigError::Io { path: dir.to_path_buf(), source })?;
    }
    let out = doc.to_string();
    toml::from_str::<Config>(&out).map_err(|e| invalid(located(&out, &e)))?;
    crate::fsutil::write_private(&path, out.as_bytes()).map_err(|source| ConfigError::Io { path: path.clone(), source })?;
    Ok(path)
}

/// `[index]`: how the index is kept fresh.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexSettings {
    #[serde(default)]
    pub watch: WatchMode,
}

/// Whether readers start a background watcher (`[index] watch`, `DEJA_WATCH`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WatchMode {
    /// Start `deja index --watch` when none runs.
    #[default]
    Auto,
    /// Never start one; readers refresh the index themselves.
    Off,
}

impl WatchMode {
    /// `DEJA_WATCH` (`auto`, or `off`/`0`/`false`/`never`) when set, else `[index] watch`.
    pub fn in_effect(env: &StoreEnv, config: &Config) -> WatchMode {
        match env.var("DEJA_WATCH").map(|v| v.trim().to_ascii_lowercase()) {
            Some(v) if matches!(v.as_str(), "off" | "0" | "false" | "never" | "no") => WatchMode::Off,
            Some(v) if matches!(v.as_str(), "auto" | "1" | "true" | "on" | "yes") => WatchMode::Auto,
            _ => config.index.watch,
        }
    }
}

/// `[exclude]`: what is never indexed or archived.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExcludeRules {
    #[serde(default)]
    pub projects: Vec<String>,
    #[serde(default)]
    pub harnesses: Vec<String>,
    #[serde(default)]
    pub globs: Vec<String>,
}

/// Where the settings file is.
pub fn config_path(env: &StoreEnv) -> PathBuf {
    env.path_var("DEJA_CONFIG").unwrap_or_else(|| env.xdg_config_home().join("deja").join("config.toml"))
}

/// The settings in effect: the file's, or the defaults when there is none.
#[derive(Debug, Clone)]
pub struct Settings {
    pub path: PathBuf,
    /// The file exists.
    pub found: bool,
    pub config: Config,
    pub exclusions: Exclusions,
}

impl Settings {
    pub fn load(env: &StoreEnv) -> Result<Settings, ConfigError> {
        let path = config_path(env);
        let text = match std::fs::read(&path) {
            Ok(bytes) => String::from_utf8(bytes).map_err(|e| ConfigError::Invalid {
                path: path.clone(),
                reason: format!("not UTF-8 (at byte {})", e.utf8_error().valid_up_to()),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Settings { path, found: false, config: Config::default(), exclusions: Exclusions::default() })
            }
            Err(source) => return Err(ConfigError::Io { path, source }),
        };
        let config: Config = toml::from_str(&text).map_err(|e| ConfigError::Invalid { path: path.clone(), reason: located(&text, &e) })?;
        let exclusions = Exclusions::new(&config.exclude, env).map_err(|reason| ConfigError::Invalid { path: path.clone(), reason })?;
        Ok(Settings { path, found: true, config, exclusions })
    }
}

/// A TOML error as `line L, column C: message`.
fn located(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim().to_string();
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("line {line}, column {column}: {message}")
        }
        None => message,
    }
}

/// The compiled exclusion rules.
#[derive(Debug, Clone, Default)]
pub struct Exclusions {
    projects: Vec<PathBuf>,
    harnesses: Vec<String>,
    globs: Option<(globset::GlobSet, Vec<String>)>,
    fingerprint: u64,
}

impl Exclusions {
    /// Compiles the rules; `Err` names the pattern that is not one.
    pub fn new(rules: &ExcludeRules, env: &StoreEnv) -> Result<Exclusions, String> {
        let projects = rules.projects.iter().map(|p| normalize_dir(&env.expand(p))).collect();
        let globs = if rules.globs.is_empty() {
            None
        } else {
            let mut b = globset::GlobSetBuilder::new();
            for g in &rules.globs {
                let pattern = env.expand(g).to_string_lossy().into_owned();
                let glob = globset::GlobBuilder::new(&pattern)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| format!("exclude.globs: `{g}` is not a glob pattern ({})", e.kind()))?;
                b.add(glob);
            }
            Some((b.build().map_err(|e| format!("exclude.globs: {e}"))?, rules.globs.clone()))
        };
        let fingerprint = xxhash_rust::xxh3::xxh3_64(serde_json::to_string(rules).unwrap_or_default().as_bytes());
        Ok(Exclusions { projects, harnesses: rules.harnesses.clone(), globs, fingerprint })
    }

    pub fn is_empty(&self) -> bool {
        self.projects.is_empty() && self.harnesses.is_empty() && self.globs.is_none()
    }

    /// Changes whenever the rules do: an index run that sees a new one removes what the
    /// new rules exclude from what was indexed before them.
    pub fn fingerprint(&self) -> u64 {
        if self.is_empty() {
            0
        } else {
            self.fingerprint
        }
    }

    /// The rule that excludes a session of `harness` run in `project`, if one does.
    pub fn excluded_by(&self, harness: &str, project: Option<&str>) -> Option<String> {
        if self.harnesses.iter().any(|h| h == harness) {
            return Some(format!("harness {harness}"));
        }
        let project = project.filter(|p| !p.is_empty())?;
        let dir = normalize_dir(Path::new(project));
        if let Some(p) = self.projects.iter().find(|p| dir.starts_with(p)) {
            return Some(format!("project {}", p.display()));
        }
        let (set, patterns) = self.globs.as_ref()?;
        set.matches(&dir).first().map(|i| format!("glob {}", patterns.get(*i).map_or("?", String::as_str)))
    }
}

/// A directory with `.` components and trailing separators gone, so that
/// `/a/b/` and `/a/./b` name the same project as `/a/b`.
pub fn normalize_dir(p: &Path) -> PathBuf {
    p.components().filter(|c| !matches!(c, std::path::Component::CurDir)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_with(config: &str) -> (tempfile::TempDir, StoreEnv) {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path().join(".config/deja");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(dir.join("config.toml"), config).expect("write");
        let env = StoreEnv::with_home(tmp.path());
        (tmp, env)
    }

    #[test]
    fn rules_match_projects_harnesses_and_globs() {
        let (tmp, env) =
            env_with("[exclude]\nprojects = [\"~/work/secret/\"]\nharnesses = [\"beta\"]\nglobs = [\"**/scratch/**\", \"/tmp/*\"]\n");
        let s = Settings::load(&env).expect("load");
        assert!(s.found);
        let home = tmp.path().to_string_lossy().into_owned();
        let x = &s.exclusions;
        assert_eq!(x.excluded_by("alpha", Some(&format!("{home}/work/secret"))).as_deref(), Some(&*format!("project {home}/work/secret")));
        assert!(x.excluded_by("alpha", Some(&format!("{home}/work/secret/sub/./dir"))).is_some());
        assert!(x.excluded_by("alpha", Some(&format!("{home}/work/secretive"))).is_none(), "a prefix of a name is not the directory");
        assert_eq!(x.excluded_by("beta", None).as_deref(), Some("harness beta"));
        assert_eq!(x.excluded_by("gamma", Some("/home/u/a/scratch/b")).as_deref(), Some("glob **/scratch/**"));
        assert!(x.excluded_by("gamma", Some("/tmp/x")).is_some());
        assert!(x.excluded_by("gamma", Some("/tmp/x/y")).is_none(), "`*` does not cross a directory");
        assert!(x.excluded_by("gamma", Some("/home/u/p")).is_none());
        assert!(x.excluded_by("gamma", None).is_none());
        assert_ne!(x.fingerprint(), 0);
    }

    #[test]
    fn bad_files_are_named_with_line_and_column() {
        let (_tmp, env) = env_with("[exclude]\nprojets = [\"/a\"]\n");
        let err = Settings::load(&env).expect_err("unknown key").to_string();
        assert!(err.contains("config.toml") && err.contains("line 2") && err.contains("projets"), "{err}");
        let (_tmp, env) = env_with("[exclude]\nglobs = [\"a[\"]\n");
        let err = Settings::load(&env).expect_err("bad glob").to_string();
        assert!(err.contains("`a[` is not a glob pattern"), "{err}");
        let (_tmp, env) = env_with("exclude = 3");
        assert!(Settings::load(&env).is_err());
    }

    #[test]
    fn the_watch_mode_comes_from_the_file_unless_the_environment_says() {
        let (_tmp, env) = env_with("[index]\nwatch = \"off\"\n");
        let s = Settings::load(&env).expect("load");
        assert_eq!(WatchMode::in_effect(&env, &s.config), WatchMode::Off);
        assert_eq!(WatchMode::in_effect(&env.clone().set("DEJA_WATCH", "auto"), &s.config), WatchMode::Auto);
        assert_eq!(WatchMode::in_effect(&env.clone().set("DEJA_WATCH", "0"), &Config::default()), WatchMode::Off);
        assert_eq!(WatchMode::in_effect(&env, &Config::default()), WatchMode::Auto);
        let (_tmp, env) = env_with("[index]\nwatch = \"sometimes\"\n");
        assert!(Settings::load(&env).expect_err("bad mode").to_string().contains("line 2"));
    }

    #[test]
    fn no_file_is_no_exclusions() {
        let tmp = tempfile::tempdir().expect("tmp");
        let s = Settings::load(&StoreEnv::with_home(tmp.path())).expect("load");
        assert!(!s.found && s.exclusions.is_empty() && s.exclusions.fingerprint() == 0);
    }
}

//! The environment store discovery reads: home directory, XDG variables, each
//! harness's own relocation variables and deja's `DEJA_<ID>_ROOT` overrides.
//!
//! Captured once into a value so tests can build synthetic homes without touching the
//! process environment.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct StoreEnv {
    home: PathBuf,
    vars: HashMap<String, String>,
    /// The exact values of variables that are not UTF-8 (`vars` holds their lossy form),
    /// so a path in one still names the right directory.
    os_paths: HashMap<String, PathBuf>,
    /// Directories other harnesses' sessions ran in (see [`StoreEnv::work_dirs`]).
    work_dirs: Arc<[PathBuf]>,
}

impl StoreEnv {
    /// The running process's environment.
    pub fn from_process() -> Self {
        // `std::env::vars` panics on the first variable that is not UTF-8, anywhere in the
        // environment; read them raw and keep such values' exact bytes for paths.
        let mut vars = HashMap::new();
        let mut os_paths = HashMap::new();
        for (k, v) in std::env::vars_os() {
            let Ok(k) = k.into_string() else { continue };
            match v.into_string() {
                Ok(v) => {
                    vars.insert(k, v);
                }
                Err(raw) => {
                    vars.insert(k.clone(), raw.to_string_lossy().into_owned());
                    os_paths.insert(k, PathBuf::from(raw));
                }
            }
        }
        let home_of = |k: &str| os_paths.get(k).cloned().or_else(|| vars.get(k).map(PathBuf::from));
        let home = home_of("HOME").or_else(|| home_of("USERPROFILE")).unwrap_or_else(|| PathBuf::from("/"));
        StoreEnv { home, vars, os_paths, work_dirs: Arc::from(Vec::new()) }
    }

    /// A synthetic environment with only `HOME` set.
    pub fn with_home(home: impl Into<PathBuf>) -> Self {
        let home = home.into();
        let mut vars = HashMap::new();
        vars.insert("HOME".to_string(), home.display().to_string());
        StoreEnv { home, vars, os_paths: HashMap::new(), work_dirs: Arc::from(Vec::new()) }
    }

    pub fn set(mut self, key: &str, value: impl Into<String>) -> Self {
        self.os_paths.remove(key);
        self.vars.insert(key.to_string(), value.into());
        self
    }

    /// The same environment knowing the working directories indexed sessions ran in.
    pub fn with_work_dirs(mut self, dirs: Vec<PathBuf>) -> Self {
        self.work_dirs = Arc::from(dirs);
        self
    }

    /// Working directories the index has seen sessions run in, most recent first and
    /// bounded (`index::work_dirs`). Empty unless the indexer (or `deja harnesses`)
    /// supplied them; only adapters that keep history inside project directories look.
    pub fn work_dirs(&self) -> &[PathBuf] {
        &self.work_dirs
    }

    pub fn home(&self) -> &Path {
        &self.home
    }

    /// Whether the home directory can anchor deja's files: an empty or relative `HOME`
    /// would put the index and the notes in whatever directory deja happens to run in,
    /// so the commands that use the real environment refuse it up front.
    pub fn check_home(&self) -> Result<(), EnvError> {
        let raw = self.vars.get("HOME").or_else(|| self.vars.get("USERPROFILE"));
        match raw {
            Some(v) if v.is_empty() => Err(EnvError::EmptyHome),
            Some(v) if !Path::new(v).is_absolute() => Err(EnvError::RelativeHome(v.clone())),
            Some(_) => Ok(()),
            None => Err(EnvError::NoHome),
        }
    }

    /// A variable's value; empty values count as unset.
    pub fn var(&self, key: &str) -> Option<&str> {
        self.vars.get(key).map(String::as_str).filter(|v| !v.is_empty())
    }

    /// A path variable, with a leading `~` expanded. A relative value is ignored, as
    /// the XDG base-directory spec says of its variables: it would name a different
    /// place in every directory deja runs in.
    pub fn path_var(&self, key: &str) -> Option<PathBuf> {
        let v = self.var(key)?;
        let path = match self.os_paths.get(key) {
            // Not UTF-8: the exact bytes, `~` expanded only where it is plain text.
            Some(raw) if !v.starts_with('~') => raw.clone(),
            _ => self.expand(v),
        };
        path.is_absolute().then_some(path)
    }

    /// An on/off switch: `1`, `true`, `yes`, `on` are on; `0`, `false`, `no`, `off` are
    /// off (any case); unset, empty or anything else is `default`. The one parser of
    /// every `DEJA_*` switch, so `DEJA_X=0` means the same everywhere.
    pub fn switch(&self, key: &str, default: bool) -> bool {
        match self.var(key).map(str::to_ascii_lowercase).as_deref() {
            Some("1" | "true" | "yes" | "on") => true,
            Some("0" | "false" | "no" | "off") => false,
            _ => default,
        }
    }

    /// A switch that is off unless set (`DEJA_INDEX_REASONING=1`).
    pub fn flag(&self, key: &str) -> bool {
        self.switch(key, false)
    }

    /// `DEJA_INCLUDE_SUBAGENTS`: sub-agent transcripts are indexed unless it is off.
    pub fn include_subagents(&self) -> bool {
        self.switch("DEJA_INCLUDE_SUBAGENTS", true)
    }

    /// Expands a leading `~` against the home directory.
    pub fn expand(&self, p: &str) -> PathBuf {
        if p == "~" {
            self.home.clone()
        } else if let Some(rest) = p.strip_prefix("~/") {
            self.home.join(rest)
        } else {
            PathBuf::from(p)
        }
    }

    pub fn xdg_data_home(&self) -> PathBuf {
        self.path_var("XDG_DATA_HOME").unwrap_or_else(|| self.home.join(".local/share"))
    }

    pub fn xdg_config_home(&self) -> PathBuf {
        self.path_var("XDG_CONFIG_HOME").unwrap_or_else(|| self.home.join(".config"))
    }

    pub fn xdg_cache_home(&self) -> PathBuf {
        self.path_var("XDG_CACHE_HOME").unwrap_or_else(|| self.home.join(".cache"))
    }

    /// A path-list variable (`DEJA_<ID>_ROOTS`), split the OS's way (`:` on Unix, `;` on
    /// Windows), `~` expanded, empty entries dropped. `None` when unset or empty, so the
    /// caller falls back to its default roots; a set list replaces them.
    pub fn path_list(&self, key: &str) -> Option<Vec<PathBuf>> {
        let raw = self.var(key)?;
        let roots: Vec<PathBuf> = std::env::split_paths(raw)
            .filter(|p| !p.as_os_str().is_empty())
            .map(|p| p.to_str().map_or_else(|| p.clone(), |s| self.expand(s)))
            .collect();
        (!roots.is_empty()).then_some(roots)
    }

    /// `DEJA_<ID>_ROOT`, the read override every adapter honours.
    pub fn deja_root(&self, harness_id: &str) -> Option<PathBuf> {
        self.path_var(&deja_root_var(harness_id))
    }

    /// The index directory: `DEJA_INDEX_DIR`, else `${XDG_CACHE_HOME:-~/.cache}/deja`.
    pub fn index_dir(&self) -> PathBuf {
        self.path_var("DEJA_INDEX_DIR").unwrap_or_else(|| self.xdg_cache_home().join("deja"))
    }

    /// This machine's name, as `deja export` marks sessions read here: `DEJA_MACHINE`,
    /// else the host name, else `COMPUTERNAME`, else `unknown`.
    pub fn machine_name(&self) -> String {
        if let Some(m) = self.var("DEJA_MACHINE") {
            return m.to_string();
        }
        #[cfg(unix)]
        {
            let mut buf = [0u8; 256];
            // SAFETY: the buffer is valid for its length; gethostname NUL-terminates
            // within it or truncates, and the length is taken up to the first NUL.
            let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
            if rc == 0 {
                let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
                let name = String::from_utf8_lossy(&buf[..end]).trim().to_string();
                if !name.is_empty() {
                    return name;
                }
            }
        }
        self.var("COMPUTERNAME").map_or_else(|| "unknown".to_string(), str::to_string)
    }

    /// deja's primary data (the archive, tombstones, notes): `${XDG_DATA_HOME:-~/.local/share}/deja`.
    pub fn data_dir(&self) -> PathBuf {
        self.path_var("DEJA_DATA_DIR").unwrap_or_else(|| self.xdg_data_home().join("deja"))
    }
}

/// Why the environment cannot anchor deja's files.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum EnvError {
    #[error("HOME is empty; set it to your home directory (an absolute path)")]
    EmptyHome,
    #[error("HOME is `{0}`, a relative path; set it to your home directory (an absolute path)")]
    RelativeHome(String),
    #[error("HOME is not set; set it to your home directory (an absolute path)")]
    NoHome,
}

/// The `DEJA_<ID>` prefix of an adapter's own variables (`kimi-work` → `DEJA_KIMI_WORK`).
pub fn deja_var_prefix(harness_id: &str) -> String {
    format!("DEJA_{}", harness_id.to_ascii_uppercase().replace('-', "_"))
}

/// `DEJA_<ID>_ROOT` with the id upper-cased and `-` written as `_`.
pub fn deja_root_var(harness_id: &str) -> String {
    format!("{}_ROOT", deja_var_prefix(harness_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_parse_one_way_everywhere() {
        let env = StoreEnv::with_home("/h").set("A", "OFF").set("B", "Yes").set("C", "maybe").set("D", "");
        assert!(!env.switch("A", true));
        assert!(env.switch("B", false));
        assert!(env.switch("C", true) && !env.switch("C", false), "unknown values keep the default");
        assert!(env.switch("D", true), "empty is unset");
        assert!(!env.flag("C"));
        assert!(env.include_subagents());
        assert!(!env.clone().set("DEJA_INCLUDE_SUBAGENTS", "0").include_subagents());
        assert_eq!(deja_root_var("two-words"), "DEJA_TWO_WORDS_ROOT");
    }

    #[test]
    fn an_empty_or_relative_home_is_refused() {
        assert_eq!(StoreEnv::with_home("").check_home(), Err(EnvError::EmptyHome));
        assert_eq!(StoreEnv::with_home("rel/dir").check_home(), Err(EnvError::RelativeHome("rel/dir".into())));
        assert_eq!(StoreEnv::with_home("/home/u").check_home(), Ok(()));
    }

    #[test]
    fn relative_path_variables_are_ignored() {
        let env = StoreEnv::with_home("/h").set("XDG_CACHE_HOME", "cache").set("XDG_DATA_HOME", "~/d");
        assert_eq!(env.index_dir(), PathBuf::from("/h/.cache/deja"), "a relative XDG_CACHE_HOME is ignored");
        assert_eq!(env.data_dir(), PathBuf::from("/h/d/deja"), "`~/` still expands");
    }
}

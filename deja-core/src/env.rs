//! The environment store discovery reads: home directory, XDG variables, each
//! harness's own relocation variables and deja's `DEJA_<ID>_ROOT` overrides.
//!
//! Captured once into a value so tests can build synthetic homes without touching the
//! process environment.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct StoreEnv {
    home: PathBuf,
    vars: HashMap<String, String>,
}

impl StoreEnv {
    /// The running process's environment.
    pub fn from_process() -> Self {
        let vars: HashMap<String, String> = std::env::vars().collect();
        let home = vars.get("HOME").or_else(|| vars.get("USERPROFILE")).map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/"));
        StoreEnv { home, vars }
    }

    /// A synthetic environment with only `HOME` set.
    pub fn with_home(home: impl Into<PathBuf>) -> Self {
        let home = home.into();
        let mut vars = HashMap::new();
        vars.insert("HOME".to_string(), home.display().to_string());
        StoreEnv { home, vars }
    }

    pub fn set(mut self, key: &str, value: impl Into<String>) -> Self {
        self.vars.insert(key.to_string(), value.into());
        self
    }

    pub fn home(&self) -> &Path {
        &self.home
    }

    /// A variable's value; empty values count as unset.
    pub fn var(&self, key: &str) -> Option<&str> {
        self.vars.get(key).map(String::as_str).filter(|v| !v.is_empty())
    }

    /// A path variable, with a leading `~` expanded.
    pub fn path_var(&self, key: &str) -> Option<PathBuf> {
        self.var(key).map(|v| self.expand(v))
    }

    /// `1`, `true`, `yes` and `on` are true.
    pub fn flag(&self, key: &str) -> bool {
        matches!(self.var(key).map(str::to_ascii_lowercase).as_deref(), Some("1" | "true" | "yes" | "on"))
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

    /// `DEJA_<ID>_ROOT`, the read override every adapter honours.
    pub fn deja_root(&self, harness_id: &str) -> Option<PathBuf> {
        self.path_var(&deja_root_var(harness_id))
    }

    /// The index directory: `DEJA_INDEX_DIR`, else `${XDG_CACHE_HOME:-~/.cache}/deja`.
    pub fn index_dir(&self) -> PathBuf {
        self.path_var("DEJA_INDEX_DIR").unwrap_or_else(|| self.xdg_cache_home().join("deja"))
    }

    /// deja's primary data (notes): `${XDG_DATA_HOME:-~/.local/share}/deja`.
    pub fn data_dir(&self) -> PathBuf {
        self.path_var("DEJA_DATA_DIR").unwrap_or_else(|| self.xdg_data_home().join("deja"))
    }
}

/// `DEJA_<ID>_ROOT` with the id upper-cased and `-` written as `_`.
pub fn deja_root_var(harness_id: &str) -> String {
    format!("DEJA_{}_ROOT", harness_id.to_ascii_uppercase().replace('-', "_"))
}

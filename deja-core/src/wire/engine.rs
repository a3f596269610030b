//! Applies and removes wiring: from the set of installed targets to the bytes of every
//! file they touch.
//!
//! The engine keeps, per file it touched, a copy of the file as it was before deja's
//! first change (under deja's data directory, never beside the user's file) and a hash
//! of what deja last wrote. Every install and uninstall then works the same way: find
//! the file's *base* (the user's own version), apply the edits of every target still
//! installed to it, and write the result if it differs from what is there.
//!
//! - The base is the kept copy while the file still hashes to what deja wrote; once
//!   someone else changed it (Claude Code rewrites `.claude.json` on every start), the
//!   base is the current file with deja's members removed, and that becomes the copy.
//! - So uninstalling right after installing writes the kept copy back: byte for byte,
//!   mode included. Installing twice computes the same bytes and writes nothing.
//! - Files install created are deleted when nothing of deja's is left in them, and
//!   directories it created are removed once empty.
//! - A file that does not parse is left untouched and reported with the position.
//! - Writes are atomic (temporary file + rename in the same directory) and go to a
//!   symlink's target, so a dotfile link stays a link.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{block, json, toml, yaml, ConfigError, Edit, WireError};

/// What the engine remembers between runs (`<state dir>/state.json`).
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct State {
    /// Installed targets (`claude`, `claude-auto`, …).
    pub targets: BTreeSet<String>,
    /// Per file deja changed: how to get the user's version back.
    pub files: BTreeMap<PathBuf, FileRecord>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileRecord {
    /// The kept copy of the file before deja's first change (a name inside the
    /// backups directory); `None` when the file did not exist.
    pub original: Option<String>,
    /// xxh3 of the bytes deja last wrote.
    pub written: String,
    /// Directories created to hold the file (or required by a harness), outermost first.
    #[serde(default)]
    pub created_dirs: Vec<PathBuf>,
    /// For files deja owns whole (skills, commands, plugins): the mode to restore is the
    /// file's own; recorded so `doctor` can tell an edited copy.
    #[serde(default)]
    pub owned: bool,
}

impl FileRecord {
    /// Whether `bytes` are what deja last wrote to the file.
    pub fn holds(&self, bytes: &[u8]) -> bool {
        self.written == hash(bytes)
    }
}

/// One file's change in a plan.
#[derive(Debug, Clone)]
pub struct FileChange {
    pub path: PathBuf,
    pub before: Option<Vec<u8>>,
    pub after: Option<Vec<u8>>,
    /// Why a change that was wanted is not made (an edited skill kept without `--force`).
    pub kept: Option<String>,
    /// A file deja owns whole (a skill, a command, a plugin), not a shared config.
    pub owned: bool,
}

impl FileChange {
    pub fn unified_diff(&self) -> String {
        let before = self.before.as_deref().map(String::from_utf8_lossy).unwrap_or_default();
        let after = self.after.as_deref().map(String::from_utf8_lossy).unwrap_or_default();
        let name = self.path.display().to_string();
        similar::TextDiff::from_lines(before.as_ref(), after.as_ref())
            .unified_diff()
            .header(if self.before.is_some() { &name } else { "/dev/null" }, if self.after.is_some() { &name } else { "/dev/null" })
            .to_string()
    }
}

/// A file the plan could not touch, and why.
#[derive(Debug, Clone)]
pub struct Refused {
    pub path: PathBuf,
    pub error: ConfigError,
}

/// Everything one install or uninstall would do.
#[derive(Debug, Default)]
pub struct Plan {
    pub changes: Vec<FileChange>,
    pub refused: Vec<Refused>,
    pub(crate) next: State,
    /// Directories to create before writing (outermost first) and to remove after.
    pub(crate) mkdirs: Vec<PathBuf>,
    pub(crate) rmdirs: Vec<PathBuf>,
    pub(crate) drop_backups: Vec<String>,
    pub(crate) new_backups: Vec<(String, Vec<u8>)>,
}

impl Plan {
    /// The targets installed once the plan is applied.
    pub fn targets(&self) -> &BTreeSet<String> {
        &self.next.targets
    }

    /// Whether applying the plan changes anything on disk.
    pub fn is_noop(&self) -> bool {
        self.changes.iter().all(|c| c.before == c.after) && self.mkdirs.is_empty() && self.rmdirs.is_empty()
    }
}

/// The engine over one state directory (`${XDG_DATA_HOME:-~/.local/share}/deja/wiring`).
pub struct Engine {
    dir: PathBuf,
}

fn hash(bytes: &[u8]) -> String {
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(bytes))
}

fn read_opt(path: &Path) -> Result<Option<Vec<u8>>, WireError> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(WireError::Io { path: path.to_path_buf(), source: e }),
    }
}

fn backup_name(path: &Path) -> String {
    format!("{}.orig", hash(path.as_os_str().as_encoded_bytes()))
}

impl Engine {
    pub fn new(state_dir: impl Into<PathBuf>) -> Engine {
        Engine { dir: state_dir.into() }
    }

    fn state_path(&self) -> PathBuf {
        self.dir.join("state.json")
    }

    fn backups(&self) -> PathBuf {
        self.dir.join("backups")
    }

    pub fn load(&self) -> Result<State, WireError> {
        match read_opt(&self.state_path())? {
            None => Ok(State::default()),
            Some(b) => serde_json::from_slice(&b).map_err(|e| WireError::State { path: self.state_path(), message: e.to_string() }),
        }
    }

    /// Plans the move from the installed targets to `targets` (every target's edits
    /// given in `edits`, installed or not, so removed ones can be taken out).
    pub fn plan(&self, targets: &BTreeSet<String>, edits: &BTreeMap<String, Vec<Edit>>, force: bool) -> Result<Plan, WireError> {
        let state = self.load()?;
        let mut plan = Plan { next: State { targets: targets.clone(), files: state.files.clone() }, ..Plan::default() };
        // Every file any known target touches, and which edits of installed targets go in it.
        let mut files: BTreeMap<PathBuf, (Vec<&Edit>, Vec<&Edit>)> = BTreeMap::new();
        for (target, list) in edits {
            for e in list {
                let entry = files.entry(e.file().to_path_buf()).or_default();
                entry.1.push(e);
                if targets.contains(target) {
                    entry.0.push(e);
                }
            }
        }
        // Files recorded earlier whose edits no target lists any more still count.
        for path in state.files.keys() {
            files.entry(path.clone()).or_default();
        }
        for (path, (active, all)) in files {
            let record = state.files.get(&path);
            if all.is_empty() && active.is_empty() && record.is_none() {
                continue;
            }
            if let Err(error) = self.plan_file(&mut plan, &path, record, &active, &all, force) {
                match error {
                    WireError::Config { error, .. } => plan.refused.push(Refused { path, error }),
                    other => return Err(other),
                }
            }
        }
        Ok(plan)
    }

    fn plan_file(
        &self,
        plan: &mut Plan,
        path: &Path,
        record: Option<&FileRecord>,
        active: &[&Edit],
        all: &[&Edit],
        force: bool,
    ) -> Result<(), WireError> {
        if all.iter().all(|e| matches!(e, Edit::Dir { .. })) && !all.is_empty() {
            return self.plan_dir(plan, path, record, !active.is_empty());
        }
        let current = read_opt(path)?;
        let owned = all.iter().any(|e| matches!(e, Edit::OwnedFile { .. }));
        let config_err = |error| WireError::Config { path: path.to_path_buf(), error };
        // The user's version of the file.
        let (base, original_from_record) = match record {
            Some(r) if current.as_deref().map(hash).as_deref() == Some(r.written.as_str()) => {
                let original = match &r.original {
                    Some(name) => Some(
                        std::fs::read(self.backups().join(name))
                            .map_err(|source| WireError::Io { path: self.backups().join(name), source })?,
                    ),
                    None => None,
                };
                (original, true)
            }
            Some(_) if owned => (current.clone(), false),
            Some(r) => {
                let original = r.original.as_ref().and_then(|name| std::fs::read(self.backups().join(name)).ok());
                let stripped = match &current {
                    Some(bytes) => Some(strip(bytes, all, original.as_deref()).map_err(config_err)?),
                    None => None,
                };
                (stripped, false)
            }
            None => (current.clone(), false),
        };
        let mut kept = None;
        let desired = if active.is_empty() {
            base.clone()
        } else if owned {
            let Some(Edit::OwnedFile { contents, .. }) = active.iter().find(|e| matches!(e, Edit::OwnedFile { .. })) else { return Ok(()) };
            let ours = record.is_some_and(|r| current.as_deref().map(hash).as_deref() == Some(r.written.as_str()));
            match &current {
                Some(bytes) if bytes != contents.as_bytes() && !ours && !force => {
                    kept = Some("edited since deja wrote it (or not deja's); kept — `--force` replaces it".to_string());
                    current.clone()
                }
                _ => Some(contents.as_bytes().to_vec()),
            }
        } else {
            let mut text = match &base {
                Some(b) => String::from_utf8(b.clone()).map_err(|_| config_err(ConfigError::Shape("not UTF-8 text".into())))?,
                None => String::new(),
            };
            check(&text, all).map_err(config_err)?;
            for e in active {
                text = apply(&text, e).map_err(config_err)?;
            }
            // A file deja creates ends its last line, as editors write them.
            if base.is_none() && !text.ends_with('\n') {
                text.push('\n');
            }
            Some(text.into_bytes())
        };

        // The record for the file after this plan.
        let created_dirs = match record {
            Some(r) => r.created_dirs.clone(),
            None => missing_dirs(path.parent()),
        };
        let back_to_base = desired == base && (original_from_record || record.is_none());
        // Nothing of deja's is left in the file (no installed target edits it), or it is
        // the user's version again: forget it.
        if active.is_empty() || back_to_base || (desired.is_none() && base.is_none()) {
            if let Some(r) = record {
                if let Some(name) = &r.original {
                    plan.drop_backups.push(name.clone());
                }
                plan.rmdirs.extend(r.created_dirs.iter().rev().cloned());
            }
            plan.next.files.remove(path);
        } else if let Some(bytes) = &desired {
            let original = match (record, &base) {
                (Some(r), _) if original_from_record => r.original.clone(),
                (_, Some(b)) => {
                    let name = backup_name(path);
                    plan.new_backups.push((name.clone(), b.clone()));
                    Some(name)
                }
                (_, None) => None,
            };
            if record.is_none() {
                plan.mkdirs.extend(created_dirs.iter().cloned());
            }
            plan.next.files.insert(path.to_path_buf(), FileRecord { original, written: hash(bytes), created_dirs, owned });
        }
        if current != desired || kept.is_some() {
            plan.changes.push(FileChange { path: path.to_path_buf(), before: current, after: desired, kept, owned });
        }
        Ok(())
    }

    fn plan_dir(&self, plan: &mut Plan, path: &Path, record: Option<&FileRecord>, wanted: bool) -> Result<(), WireError> {
        match (wanted, record) {
            (true, None) => {
                let dirs = missing_dirs(Some(path));
                if !dirs.is_empty() {
                    plan.mkdirs.extend(dirs.iter().cloned());
                    plan.next.files.insert(
                        path.to_path_buf(),
                        FileRecord { original: None, written: String::new(), created_dirs: dirs, owned: false },
                    );
                }
            }
            (false, Some(r)) => {
                plan.rmdirs.extend(r.created_dirs.iter().rev().cloned());
                plan.next.files.remove(path);
            }
            _ => {}
        }
        Ok(())
    }

    /// Carries out `plan`: kept copies first, then directories and files (owned files
    /// before the configs that name them when installing, after them when removing),
    /// then the state.
    pub fn apply(&self, plan: &Plan) -> Result<(), WireError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| WireError::Io { path, source }
        };
        crate::fsutil::private_dir(&self.backups()).map_err(io(&self.backups()))?;
        for (name, bytes) in &plan.new_backups {
            // A new copy replaces an old one: the user changed the file since, and
            // their version is the one to give back.
            let p = self.backups().join(name);
            crate::fsutil::write_private(&p, bytes).map_err(io(&p))?;
        }
        for d in &plan.mkdirs {
            create_dir(d).map_err(io(d))?;
        }
        // Plugins and skills exist before the config that names them, and outlive it.
        let mut order: Vec<&FileChange> = plan.changes.iter().filter(|c| c.before != c.after).collect();
        order.sort_by_key(|c| match (c.owned, c.after.is_some()) {
            (true, true) => 0,
            (false, _) => 1,
            (true, false) => 2,
        });
        for c in order {
            match &c.after {
                Some(bytes) => write_following_links(&c.path, bytes).map_err(io(&c.path))?,
                None => match std::fs::remove_file(&c.path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(WireError::Io { path: c.path.clone(), source: e }),
                },
            }
        }
        for d in &plan.rmdirs {
            // Only empty directories go: anything else in them is not deja's.
            let _ = std::fs::remove_dir(d);
        }
        for name in &plan.drop_backups {
            let _ = std::fs::remove_file(self.backups().join(name));
        }
        let json =
            serde_json::to_vec_pretty(&plan.next).map_err(|e| WireError::State { path: self.state_path(), message: e.to_string() })?;
        crate::fsutil::private_dir(&self.dir).map_err(io(&self.dir))?;
        crate::fsutil::write_private(&self.state_path(), &json).map_err(io(&self.state_path()))?;
        if plan.next.files.is_empty() && plan.next.targets.is_empty() {
            let _ = std::fs::remove_file(self.state_path());
            let _ = std::fs::remove_dir(self.backups());
            let _ = std::fs::remove_dir(&self.dir);
        }
        Ok(())
    }
}

/// The directories from the outermost missing one down to `dir`.
fn missing_dirs(dir: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut cur = dir;
    while let Some(d) = cur {
        if d.as_os_str().is_empty() || d.exists() {
            break;
        }
        out.push(d.to_path_buf());
        cur = d.parent();
    }
    out.reverse();
    out
}

fn create_dir(d: &Path) -> std::io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    match b.create(d) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        other => other,
    }
}

/// Writes `bytes` to `path` atomically. A symlink is followed to its target, which is
/// replaced (so the link stays); an existing file keeps its mode; a new one is 0600.
fn write_following_links(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let real = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path)?,
        _ => path.to_path_buf(),
    };
    let mode = std::fs::metadata(&real).ok().map(|m| m.permissions());
    crate::fsutil::write_private(&real, bytes)?;
    if let Some(perms) = mode {
        std::fs::set_permissions(&real, perms)?;
    }
    Ok(())
}

/// Checks the file parses in the syntax its edits use (plain JSON when an edit says its
/// harness reads nothing else).
pub(crate) fn check(text: &str, edits: &[&Edit]) -> Result<(), ConfigError> {
    match edits.iter().find(|e| !matches!(e, Edit::Dir { .. } | Edit::OwnedFile { .. })) {
        Some(Edit::JsonMember { .. } | Edit::JsonArrayItem { .. }) => {
            json::check(text)?;
            match edits.iter().any(|e| matches!(e, Edit::JsonMember { strict: true, .. })) {
                true => json::check_strict(text),
                false => Ok(()),
            }
        }
        Some(Edit::TomlTable { .. } | Edit::TomlArrayItem { .. } | Edit::TomlArrayValue { .. }) => toml::check(text),
        Some(Edit::YamlMember { .. } | Edit::YamlListItem { .. } | Edit::YamlListBlock { .. }) => yaml::check(text),
        _ => Ok(()),
    }
}

pub(crate) fn apply(text: &str, edit: &Edit) -> Result<String, ConfigError> {
    match edit {
        Edit::JsonMember { path, value, .. } => json::set_member(text, &strs(path), value),
        Edit::JsonArrayItem { path, marker, value, .. } => {
            json::upsert_array_item(text, &strs(path), &|v| matches_marker(v, marker), value)
        }
        Edit::TomlTable { path, body, .. } => toml::set_table(text, &strs(path), body),
        Edit::TomlArrayItem { path, marker, body, .. } => {
            toml::upsert_array_table(text, &strs(path), &|t| marker.iter().all(|m| t.contains(m.as_str())), body)
        }
        Edit::TomlArrayValue { path, item, .. } => toml::add_array_value(text, &strs(path), item),
        Edit::YamlMember { path, body, .. } => yaml::set_member(text, &strs(path), body),
        Edit::YamlListItem { path, marker, body, .. } => {
            yaml::upsert_item(text, &strs(path), &|t| marker.iter().all(|m| t.contains(m.as_str())), body)
        }
        Edit::YamlListBlock { start, end, body, .. } => yaml::set_list_block(text, start, end, body),
        Edit::Block { start, end, body, .. } => Ok(block::set_block(text, start, end, body)),
        Edit::OwnedFile { .. } | Edit::Dir { .. } => Ok(text.to_string()),
    }
}

/// The file with every deja edit that could be in it taken out. A JSON member the file
/// held before deja's first change (a setting deja flipped, such as Gemini's
/// `hooksConfig.enabled`) gets its `original` value back instead of going.
pub(crate) fn strip(bytes: &[u8], edits: &[&Edit], original: Option<&[u8]>) -> Result<Vec<u8>, ConfigError> {
    let mut text = String::from_utf8(bytes.to_vec()).map_err(|_| ConfigError::Shape("not UTF-8 text".into()))?;
    let original = original.and_then(|b| std::str::from_utf8(b).ok());
    for e in edits {
        text = match e {
            Edit::JsonMember { path, .. } => match original.and_then(|o| json::get_member(o, &strs(path)).ok().flatten()) {
                Some(value) => json::set_member(&text, &strs(path), &value)?,
                None => json::remove_member(&text, &strs(path))?,
            },
            Edit::JsonArrayItem { path, marker, .. } => json::remove_array_items(&text, &strs(path), &|v| matches_marker(v, marker))?,
            Edit::TomlTable { path, .. } => toml::remove_table(&text, &strs(path))?,
            Edit::TomlArrayItem { path, marker, .. } => {
                toml::remove_array_tables(&text, &strs(path), &|t| marker.iter().all(|m| t.contains(m.as_str())))?
            }
            Edit::TomlArrayValue { path, item, .. } => toml::remove_array_value(&text, &strs(path), item)?,
            Edit::YamlMember { path, .. } => yaml::remove_member(&text, &strs(path))?,
            Edit::YamlListItem { path, marker, .. } => {
                yaml::remove_items(&text, &strs(path), &|t| marker.iter().all(|m| t.contains(m.as_str())))?
            }
            Edit::YamlListBlock { start, end, .. } => yaml::remove_list_block(&text, start, end)?,
            Edit::Block { start, end, .. } => block::remove_block(&text, start, end),
            Edit::OwnedFile { .. } | Edit::Dir { .. } => text,
        };
    }
    Ok(text.into_bytes())
}

fn strs(path: &[String]) -> Vec<&str> {
    path.iter().map(String::as_str).collect()
}

/// Whether a JSON element is deja's: its serialized text holds every marker string.
pub fn matches_marker(v: &serde_json::Value, marker: &[String]) -> bool {
    let text = v.to_string();
    marker.iter().all(|m| text.contains(m.as_str()))
}

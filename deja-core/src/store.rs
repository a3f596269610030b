//! Where a harness keeps its history, stated once (DESIGN §4).
//!
//! A [`StoreSpec`] in an adapter's `HarnessInfo` names each store: its roots per OS as path
//! templates, and its [`Layout`] under a root (files by glob, one SQLite database with its
//! WAL, a registry file, or a walk of the adapter's own). The default
//! `HarnessFormat::discover` reads it ([`discover`]), and so do the wirings' "is the
//! harness here" checks ([`StoreSpec::level`], [`StoreSpec::present`]), the matrix's store
//! column ([`StoreSpec::paths`]) and the conformance kit, which derives every relocation
//! it checks from the templates. Nothing else states where a store is.
//!
//! **Templates.** `base(/component)*`, where the base is `~` (the home directory),
//! `${VAR:-default}` (the variable's directory when it is set to an absolute path, else
//! the default, itself a template), `${VAR}` (no root when unset), an absolute path, or
//! `@`, each root of the sessions store (a store kept inside it, which moves with it). So
//! where a harness's relocation variable sits says which level of the path it replaces:
//! `${COPILOT_HOME:-~/.copilot}/session-state` moves `~/.copilot`, the store stays
//! `session-state` under it. A component may list alternatives, `{Code,Code - Insiders}`,
//! each a root of its own, or hold a `*`, every existing directory it matches; and
//! `a|b` is the first of `a` and `b` that names a path (a variable that replaces more
//! than a prefix: `${GOOSE_PATH_ROOT}/data|${XDG_DATA_HOME:-~/.local/share}/goose`).
//!
//! **deja's overrides** follow one rule from the id ([`deja_var_prefix`]): a store's
//! prefix is `DEJA_<ID>` for the sessions store (named `""`) and `DEJA_<ID>_<NAME>` for a
//! store named `name`; `<prefix>_ROOT` (a directory) and `<prefix>_ROOTS` (a path list)
//! replace the store's roots, and for a database `<prefix>_DB` names the file (or a
//! directory holding it). Names deja used before the rule stay honoured as
//! [`StoreSpec::aliases`], and the matrix shows them.
//!
//! [`Discovery`] (what discovery found and where it looked) and [`Os`] live here too:
//! they are what this module produces and reads, below the adapter contract that
//! re-exports them.

use std::path::{Path, PathBuf};

use crate::discover::find_files;
use crate::env::{deja_var_prefix, StoreEnv};
use crate::model::SourceRef;

/// An operating system a store path applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Linux,
    MacOs,
    Windows,
    /// Linux and macOS alike.
    Unix,
    /// Every OS.
    Any,
}

impl Os {
    pub fn label(self) -> &'static str {
        match self {
            Os::Linux => "Linux",
            Os::MacOs => "macOS",
            Os::Windows => "Windows",
            Os::Unix => "Linux, macOS",
            Os::Any => "all",
        }
    }

    /// The OS deja runs on (other Unixes count as Linux: they keep the XDG layout).
    pub fn current() -> Os {
        if cfg!(target_os = "macos") {
            Os::MacOs
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        }
    }

    /// Whether a path declared for `self` applies on `os` (a single OS).
    pub fn covers(self, os: Os) -> bool {
        match self {
            Os::Any => true,
            Os::Unix => matches!(os, Os::Linux | Os::MacOs | Os::Unix),
            own => own == os,
        }
    }
}

/// The result of store discovery: the sources found and the places looked at.
#[derive(Debug, Default, Clone)]
pub struct Discovery {
    pub sources: Vec<SourceRef>,
    /// Every store root that was checked, with whether it exists.
    pub roots: Vec<(PathBuf, bool)>,
    /// Files found that cannot be opened with what the user supplied (an encrypted
    /// store without its key), with why and what would open them. They are not
    /// sources (nothing is read each refresh), but `deja index` and `deja harnesses`
    /// count them, so missing history is never silent.
    pub locked: Vec<Locked>,
}

/// A file discovery found and will not read, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Locked {
    pub path: PathBuf,
    pub reason: String,
}

impl Discovery {
    /// Sorts sources by the bytes of their paths: deterministic, and far cheaper than
    /// `Path`'s component-wise order on the tens of thousands of paths every refresh
    /// discovers.
    pub fn sort_sources(sources: &mut [SourceRef]) {
        sources
            .sort_unstable_by(|a, b| (a.path.as_os_str().as_encoded_bytes(), &a.key).cmp(&(b.path.as_os_str().as_encoded_bytes(), &b.key)));
    }

    pub fn looked_at(&mut self, root: &Path) -> bool {
        let exists = root.exists();
        self.roots.push((root.to_path_buf(), exists));
        exists
    }
}

/// Where a harness keeps its history (see the module doc).
#[derive(Debug, Clone, Copy)]
pub struct StoreSpec {
    /// The stores, the sessions store (named `""`) first.
    pub stores: &'static [Store],
    /// The harness's variables discovery reads besides those in the templates (a profile
    /// selector, a file naming the store): listed for the docs; the kit must be told
    /// how each moves the store or that it is a switch.
    pub harness_vars: &'static [&'static str],
    /// deja's variables beyond the derived ones (an export to read, a key, a switch).
    pub deja_vars: &'static [&'static str],
    /// Older names of derived variables, still honoured: `(old, derived)`.
    pub aliases: &'static [(&'static str, &'static str)],
}

/// One store of a harness.
#[derive(Debug, Clone, Copy)]
pub struct Store {
    /// `""` for the sessions store; else the `<NAME>` of `DEJA_<ID>_<NAME>_ROOT`.
    pub name: &'static str,
    /// Where it is, per OS (every root for the running OS is looked at).
    pub roots: &'static [Root],
    pub layout: Layout,
}

/// A store's root on one OS, as a template (see the module doc).
#[derive(Debug, Clone, Copy)]
pub struct Root {
    pub os: Os,
    pub path: &'static str,
}

impl Root {
    pub const fn any(path: &'static str) -> Root {
        Root { os: Os::Any, path }
    }
    pub const fn unix(path: &'static str) -> Root {
        Root { os: Os::Unix, path }
    }
    pub const fn linux(path: &'static str) -> Root {
        Root { os: Os::Linux, path }
    }
    pub const fn macos(path: &'static str) -> Root {
        Root { os: Os::MacOs, path }
    }
    pub const fn windows(path: &'static str) -> Root {
        Root { os: Os::Windows, path }
    }
}

/// Finds the sources under one existing root (a [`Layout::Custom`] or
/// [`Layout::Registry`] walk): the roots are resolved and looked at by core.
pub type Walk = fn(root: &Path, env: &StoreEnv, found: &mut Discovery);

/// What lies under a store's root.
#[derive(Debug, Clone, Copy)]
pub enum Layout {
    /// Files whose path under the root matches a glob.
    Files(Files),
    /// One SQLite database, this file in the root, read with its `-wal`.
    Database(&'static str),
    /// A file in the root naming the stores elsewhere (a project registry); `read` turns
    /// it into sources.
    Registry { file: &'static str, read: Walk },
    /// Anything else, described by `shape` for the docs: `walk` finds the sources of
    /// each root (called for a missing one too, as a walk may read beside it), or, when
    /// `None`, the adapter's own `discover` does (it still takes the roots from the spec).
    Custom { shape: &'static str, walk: Option<Walk> },
}

/// Files under a root (see [`Layout::Files`]).
#[derive(Debug, Clone, Copy)]
pub struct Files {
    /// The path under the root, `/`-separated: `*` within one name, `**` any number of
    /// directories (at most `max_depth` down), `{a,b}` alternatives.
    pub glob: &'static str,
    /// File-name globs never read (backups, checkpoints).
    pub exclude: &'static [&'static str],
    /// How many directories a `**` may descend.
    pub max_depth: usize,
    /// The files only ever grow by appended lines: the index reads their new tail.
    pub append_only: bool,
    /// Files beside each one whose change changes the source.
    pub parts: &'static [Part],
    /// Files below a directory of this name are sub-agent runs, read only while
    /// `DEJA_INCLUDE_SUBAGENTS` is on.
    pub subagents: Option<&'static str>,
}

impl Files {
    pub const fn new(glob: &'static str) -> Files {
        Files { glob, exclude: &[], max_depth: 8, append_only: false, parts: &[], subagents: None }
    }
    pub const fn append_only(self) -> Files {
        Files { append_only: true, ..self }
    }
    pub const fn depth(self, max_depth: usize) -> Files {
        Files { max_depth, ..self }
    }
    pub const fn exclude(self, exclude: &'static [&'static str]) -> Files {
        Files { exclude, ..self }
    }
    pub const fn parts(self, parts: &'static [Part]) -> Files {
        Files { parts, ..self }
    }
    pub const fn subagents(self, dir: &'static str) -> Files {
        Files { subagents: Some(dir), ..self }
    }
}

/// A file that belongs to a discovered file's source (its fingerprint covers it).
#[derive(Debug, Clone, Copy)]
pub enum Part {
    /// This name in the same directory (`workspace.yaml` beside `events.jsonl`).
    Sibling(&'static str),
    /// The file with this extension instead (`x.jsonl` → `x.settings.json`).
    Extension(&'static str),
    /// This path under the store's root (an index of every session).
    InRoot(&'static str),
    /// This name beside the store's root (a cache directory next to it).
    BesideRoot(&'static str),
    /// The directory the file is in (new files appearing beside it).
    Dir,
}

/// `DEJA_INCLUDE_SUBAGENTS`, which a [`Files::subagents`] store honours.
pub const INCLUDE_SUBAGENTS: &str = "DEJA_INCLUDE_SUBAGENTS";

impl Store {
    /// `DEJA_<ID>` or `DEJA_<ID>_<NAME>`: the prefix of this store's derived variables.
    pub fn prefix(&self, id: &str) -> String {
        match self.name {
            "" => deja_var_prefix(id),
            name => format!("{}_{}", deja_var_prefix(id), name.to_ascii_uppercase().replace('-', "_")),
        }
    }

    /// The roots declared for the running OS.
    pub fn os_roots(&self) -> impl Iterator<Item = &'static Root> {
        let os = Os::current();
        self.roots.iter().filter(move |r| r.os.covers(os))
    }

    /// The database file's name, for a [`Layout::Database`].
    pub fn database(&self) -> Option<&'static str> {
        match self.layout {
            Layout::Database(file) => Some(file),
            _ => None,
        }
    }
}

impl StoreSpec {
    /// A spec of these stores with no other variables.
    pub const fn new(stores: &'static [Store]) -> StoreSpec {
        StoreSpec { stores, harness_vars: &[], deja_vars: &[], aliases: &[] }
    }
    pub const fn harness_vars(self, harness_vars: &'static [&'static str]) -> StoreSpec {
        StoreSpec { harness_vars, ..self }
    }
    pub const fn deja_vars(self, deja_vars: &'static [&'static str]) -> StoreSpec {
        StoreSpec { deja_vars, ..self }
    }
    pub const fn aliases(self, aliases: &'static [(&'static str, &'static str)]) -> StoreSpec {
        StoreSpec { aliases, ..self }
    }

    /// The store of this name.
    pub fn store(&self, name: &str) -> Option<&'static Store> {
        self.stores.iter().find(|s| s.name == name)
    }

    /// `var` and the older names kept for it, in that order.
    fn names<'a>(&'a self, var: &'a str) -> impl Iterator<Item = &'a str> {
        std::iter::once(var).chain(self.aliases.iter().filter(move |(_, now)| *now == var).map(|(old, _)| *old))
    }

    /// The first of `var` and its aliases set to an absolute path.
    fn path_var(&self, env: &StoreEnv, var: &str) -> Option<PathBuf> {
        self.names(var).find_map(|v| env.path_var(v))
    }

    /// The roots of `store` in `env`: deja's overrides (`<prefix>_ROOT`, then the list
    /// `<prefix>_ROOTS`) when set, else its templates for the running OS. Each root once.
    pub fn roots(&self, id: &str, store: &Store, env: &StoreEnv) -> Vec<PathBuf> {
        let prefix = store.prefix(id);
        let mut roots: Vec<PathBuf> = self.path_var(env, &format!("{prefix}_ROOT")).into_iter().collect();
        let list = format!("{prefix}_ROOTS");
        if let Some(paths) = self.names(&list).find_map(|v| env.path_list(v)) {
            roots.extend(paths);
        }
        if roots.is_empty() {
            for root in store.os_roots() {
                match root.path.strip_prefix('@') {
                    // Inside the sessions store (which cannot itself say `@`).
                    Some(rest) if !store.name.is_empty() => {
                        let sessions = self.stores.iter().find(|s| s.name.is_empty()).map(|s| self.roots(id, s, env)).unwrap_or_default();
                        roots.extend(descend(sessions, rest, env));
                    }
                    Some(_) => {}
                    None => roots.extend(eval(root.path, env)),
                }
            }
        }
        dedup(roots)
    }

    /// The database files of a [`Layout::Database`] store in `env`: `<prefix>_DB` (a
    /// directory meaning the file in it) when set, else the file in each root.
    pub fn database_files(&self, id: &str, store: &Store, env: &StoreEnv) -> Vec<PathBuf> {
        let Some(file) = store.database() else { return Vec::new() };
        if let Some(p) = self.db_var(id, store).and_then(|var| self.path_var(env, &var)) {
            return vec![if p.is_dir() { p.join(file) } else { p }];
        }
        self.roots(id, store, env).into_iter().map(|r| r.join(file)).collect()
    }

    /// The variable naming `store`'s database file: `DEJA_<ID>_DB` when it is the spec's
    /// only database, else `<its prefix>_DB`.
    pub fn db_var(&self, id: &str, store: &Store) -> Option<String> {
        store.database()?;
        let databases = self.stores.iter().filter(|s| s.database().is_some()).count();
        Some(if databases == 1 { format!("{}_DB", deja_var_prefix(id)) } else { format!("{}_DB", store.prefix(id)) })
    }

    /// The first root of the sessions store in `env`: where a synthetic writer puts a
    /// session (`None` when the spec declares no root for this OS).
    pub fn root(&self, id: &str, env: &StoreEnv) -> Option<PathBuf> {
        self.roots_of(id, "", env).into_iter().next()
    }

    /// The roots of the store named `name` (empty when there is none).
    pub fn roots_of(&self, id: &str, name: &str, env: &StoreEnv) -> Vec<PathBuf> {
        self.store(name).map(|s| self.roots(id, s, env)).unwrap_or_default()
    }

    /// The directory `var` stands for in `env`: its value when set, else the default
    /// its first template (for the running OS) gives it. A wiring's config directory is
    /// the level of the harness's home variable (`CODEX_HOME` → `~/.codex`).
    pub fn level(&self, env: &StoreEnv, var: &str) -> Option<PathBuf> {
        self.stores.iter().flat_map(Store::os_roots).find_map(|r| level(r.path, var, env)).and_then(|l| l.into_iter().next())
    }

    /// [`level`](Self::level) for a wiring, which needs a directory: the home directory
    /// when no template for this OS names `var` (the kit's wiring check, which moves the
    /// variable, catches a spec that lost it).
    pub fn dir_of(&self, env: &StoreEnv, var: &str) -> PathBuf {
        self.level(env, var).unwrap_or_else(|| env.home().to_path_buf())
    }

    /// Whether any store root exists in `env` (the harness has run on this machine).
    pub fn present(&self, id: &str, env: &StoreEnv) -> bool {
        self.stores.iter().any(|s| self.roots(id, s, env).iter().any(|r| r.exists()))
    }

    /// deja's variables for the docs, each with the older names kept for it: every
    /// store's derived ones, `DEJA_INCLUDE_SUBAGENTS` where a store honours it, then the
    /// spec's own.
    pub fn deja_var_names(&self, id: &str) -> Vec<(String, Vec<&'static str>)> {
        let mut out: Vec<String> = Vec::new();
        for store in self.stores {
            let prefix = store.prefix(id);
            out.push(format!("{prefix}_ROOT"));
            out.push(format!("{prefix}_ROOTS"));
            out.extend(self.db_var(id, store));
        }
        if self.stores.iter().any(|s| matches!(s.layout, Layout::Files(Files { subagents: Some(_), .. }))) {
            out.push(INCLUDE_SUBAGENTS.to_string());
        }
        out.extend(self.deja_vars.iter().map(|v| v.to_string()));
        let mut seen = std::collections::HashSet::new();
        out.retain(|v| seen.insert(v.clone()));
        out.into_iter()
            .map(|v| {
                let old: Vec<&'static str> = self.aliases.iter().filter(|(_, now)| *now == v).map(|(old, _)| *old).collect();
                (v, old)
            })
            .collect()
    }

    /// The harness's own variables: every one in a template (any OS), then
    /// [`harness_vars`](Self::harness_vars).
    pub fn env_vars(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        for root in self.stores.iter().flat_map(|s| s.roots) {
            template_vars(root.path, &mut out);
        }
        // A template may name deja's own variable (a store kept under the sessions
        // root): that is no variable of the harness.
        out.retain(|v| !v.starts_with("DEJA_"));
        out.extend(self.harness_vars);
        let mut seen = std::collections::HashSet::new();
        out.retain(|v| seen.insert(*v));
        out
    }

    /// Every store path for the docs: `(os, root/what is under it)`, in declared order.
    pub fn paths(&self) -> Vec<(Os, String)> {
        let mut out = Vec::new();
        for store in self.stores {
            let under = match store.layout {
                Layout::Files(f) => f.glob,
                Layout::Database(file) | Layout::Registry { file, .. } => file,
                Layout::Custom { shape, .. } => shape,
            };
            for root in store.roots {
                let path = if under.is_empty() { root.path.to_string() } else { format!("{}/{under}", root.path) };
                out.push((root.os, path));
            }
        }
        out
    }
}

/// Each path once, first occurrence kept.
fn dedup(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen = std::collections::HashSet::new();
    paths.into_iter().filter(|p| seen.insert(p.clone())).collect()
}

/// The default discovery of a harness (`HarnessFormat::discover`): every store of
/// `spec` through its layout, sources sorted, each once.
pub fn discover(id: &str, spec: &StoreSpec, env: &StoreEnv) -> Discovery {
    let mut found = Discovery::default();
    for store in spec.stores {
        discover_store(id, spec, store, env, &mut found);
    }
    Discovery::sort_sources(&mut found.sources);
    found.sources.dedup_by(|a, b| a.path == b.path && a.key == b.key);
    found
}

/// One store's sources, added to `found` (unsorted).
pub fn discover_store(id: &str, spec: &StoreSpec, store: &Store, env: &StoreEnv, found: &mut Discovery) {
    match store.layout {
        Layout::Database(_) => {
            for db in spec.database_files(id, store, env) {
                add_database(found, &db);
            }
        }
        Layout::Files(files) => {
            for root in spec.roots(id, store, env) {
                if found.looked_at(&root) {
                    found.sources.extend(files.find(&root, env));
                }
            }
        }
        Layout::Registry { file, read } => {
            for root in spec.roots(id, store, env) {
                let registry = root.join(file);
                if found.looked_at(&registry) {
                    read(&registry, env, found);
                }
            }
        }
        Layout::Custom { walk, .. } => {
            for root in spec.roots(id, store, env) {
                found.looked_at(&root);
                // Called for a missing root too: a walk may read beside its root (Codex's
                // archive next to an absent sessions directory).
                if let Some(walk) = walk {
                    walk(&root, env, found);
                }
            }
        }
    }
}

/// Looks at `db` (reported as a store root) and, when it is a non-empty regular file,
/// adds it as a source with its `-wal`. A zero-byte file is a database the harness has
/// not created yet, not a corrupt one. Returns whether it was added.
pub fn add_database(found: &mut Discovery, db: &Path) -> bool {
    let usable = found.looked_at(db) && std::fs::metadata(db).is_ok_and(|m| m.is_file() && m.len() > 0);
    if usable {
        found.sources.push(database_source(db));
    }
    usable
}

/// `db` as a source, with its [`database_parts`].
pub fn database_source(db: &Path) -> SourceRef {
    database_parts(db).into_iter().fold(SourceRef::file(db), SourceRef::with_part)
}

/// The files besides `db` whose change must change the source's fingerprint: the
/// `-wal`, where a live store's new rows are, beside the database symlinks resolved
/// (where SQLite puts it).
pub fn database_parts(db: &Path) -> Vec<PathBuf> {
    let real = std::fs::canonicalize(db).unwrap_or_else(|_| db.to_path_buf());
    let mut wal = real.into_os_string();
    wal.push("-wal");
    vec![PathBuf::from(wal)]
}

impl Files {
    /// The sources under `root`.
    pub fn find(&self, root: &Path, env: &StoreEnv) -> Vec<SourceRef> {
        let Some(matcher) = FilesMatcher::new(self) else {
            crate::discover::report_unreadable(root, format!("the store's glob `{}` does not parse", self.glob));
            return Vec::new();
        };
        let depth = if self.glob.contains("**") { self.max_depth } else { self.glob.matches('/').count() };
        let subagents = self.subagents.filter(|_| !env.include_subagents());
        let mut out = Vec::new();
        for path in find_files(root, depth, &|name| matcher.name(name)) {
            let Ok(rel) = path.strip_prefix(root) else { continue };
            if !matcher.path(rel) || subagents.is_some_and(|dir| rel.components().any(|c| c.as_os_str() == dir)) {
                continue;
            }
            let mut src = SourceRef::file(&path);
            if self.append_only {
                src = src.append_only();
            }
            for part in self.parts {
                src = match *part {
                    Part::Sibling(name) => src.with_part(path.with_file_name(name)),
                    Part::Extension(ext) => src.with_part(path.with_extension(ext)),
                    Part::InRoot(name) => src.with_part(root.join(name)),
                    Part::BesideRoot(name) => src.with_part(root.parent().unwrap_or(root).join(name)),
                    Part::Dir => match path.parent() {
                        Some(dir) => src.with_part(dir),
                        None => src,
                    },
                };
            }
            out.push(src);
        }
        out
    }
}

/// A [`Files`] glob compiled: the whole relative path, its last name, the exclusions.
struct FilesMatcher {
    path: globset::GlobMatcher,
    name: Option<globset::GlobMatcher>,
    exclude: globset::GlobSet,
}

impl FilesMatcher {
    fn new(files: &Files) -> Option<FilesMatcher> {
        let glob = |g: &str| globset::GlobBuilder::new(g).literal_separator(true).build().ok();
        let path = glob(files.glob)?.compile_matcher();
        let last = files.glob.rsplit('/').next().unwrap_or(files.glob);
        let name = if last.contains("**") { None } else { Some(glob(last)?.compile_matcher()) };
        let mut exclude = globset::GlobSetBuilder::new();
        for e in files.exclude {
            exclude.add(glob(e)?);
        }
        Some(FilesMatcher { path, name, exclude: exclude.build().ok()? })
    }

    /// Whether a file of this name may be one (checked while walking, so names no
    /// store would read are neither kept nor reported).
    fn name(&self, name: &str) -> bool {
        self.name.as_ref().is_none_or(|m| m.is_match(name)) && !self.exclude.is_match(name)
    }

    fn path(&self, rel: &Path) -> bool {
        let text = rel.to_string_lossy();
        let text = if cfg!(windows) { text.replace('\\', "/").into() } else { text };
        self.path.is_match(text.as_ref())
    }
}

/// A template's base and the `/…` rest after it.
enum Base<'t> {
    Home,
    /// `<file#/pointer>`: the path a setting of the harness names (a string at a JSON
    /// pointer in a JSON or TOML file, itself a template), `~` expanded; nothing when it
    /// is missing or not absolute.
    Setting {
        file: &'t str,
        pointer: &'t str,
    },
    /// `@`: each root of the sessions store, deja's overrides applied (a store kept
    /// inside it, which moves with it).
    Sessions,
    Var {
        name: &'t str,
        default: Option<&'t str>,
    },
    Absolute,
}

/// Splits a template into its base and rest; `None` when it does not parse.
fn parse(t: &str) -> Option<(Base<'_>, &str)> {
    if let Some(body) = t.strip_prefix("${") {
        // The closing brace at depth 0: defaults may nest `${…}`.
        let mut depth = 0usize;
        let mut end = None;
        let bytes = body.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                // A nested `${…}` or `{a,b}` alternatives.
                b'{' => depth += 1,
                b'}' if depth == 0 => {
                    end = Some(i);
                    break;
                }
                b'}' => depth -= 1,
                _ => {}
            }
            i += 1;
        }
        let end = end?;
        let inner = &body[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        let rest = &body[end + 1..];
        let valid = !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        return (valid && (rest.is_empty() || rest.starts_with('/'))).then_some((Base::Var { name, default }, rest));
    }
    if let Some(body) = t.strip_prefix('<') {
        let end = closing(body, b'<', b'>')?;
        let (file, pointer) = body[..end].rsplit_once('#')?;
        let rest = &body[end + 1..];
        let valid = pointer.starts_with('/') && parses(file);
        return (valid && (rest.is_empty() || rest.starts_with('/'))).then_some((Base::Setting { file, pointer }, rest));
    }
    if t == "~" || t.starts_with("~/") {
        return Some((Base::Home, &t[1..]));
    }
    if t == "@" || t.starts_with("@/") {
        return Some((Base::Sessions, &t[1..]));
    }
    Path::new(t).is_absolute().then_some((Base::Absolute, t))
}

/// A template's `|`-separated choices (outside `${…}`): the first that names a path is
/// the root, for a harness whose variable replaces more than a prefix
/// (`${GOOSE_PATH_ROOT}/data|${XDG_DATA_HOME:-~/.local/share}/goose`).
fn choices(t: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    let bytes = t.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'{' | b'<' | b'(' => depth += 1,
            b'}' | b'>' | b')' if depth > 0 => depth -= 1,
            b'|' if depth == 0 => {
                out.push(&t[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&t[start..]);
    out
}

/// The paths a template names in `env` (none when a `${VAR}` without default is unset
/// or the template does not parse).
pub fn eval(t: &str, env: &StoreEnv) -> Vec<PathBuf> {
    choices(t).into_iter().map(|c| eval_one(c, env)).find(|paths| !paths.is_empty()).unwrap_or_default()
}

/// [`eval`] of one choice.
fn eval_one(t: &str, env: &StoreEnv) -> Vec<PathBuf> {
    let Some((base, rest)) = parse(t) else { return Vec::new() };
    let bases = match base {
        Base::Home => vec![env.home().to_path_buf()],
        Base::Absolute => vec![PathBuf::new()],
        // Resolved by `StoreSpec::roots`, which knows the sessions store.
        Base::Sessions => return Vec::new(),
        Base::Setting { file, pointer } => eval(file, env).first().map(|f| read_setting(f, pointer, env)).unwrap_or_default(),
        Base::Var { name, default } => match env.path_var(name) {
            Some(p) => vec![p],
            None => default.map(|d| eval(d, env)).unwrap_or_default(),
        },
    };
    descend(bases, rest, env)
}

/// The index of the byte closing `body` (after an opening `open`) at depth 0.
fn closing(body: &str, open: u8, close: u8) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in body.bytes().enumerate() {
        match b {
            b if b == open || b == b'{' => depth += 1,
            b if b == close && depth == 0 => return Some(i),
            b if b == close || b == b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// The largest settings file read for a `<file#/pointer>` root.
const MAX_SETTINGS_BYTES: u64 = 1 << 20;

/// The absolute paths the string at `pointer` in a JSON (or, by its name, TOML) settings
/// file names, `~` expanded (a pointer ending in `/*`: every string in the object or
/// array there); none when the file is missing, too big or does not parse.
fn read_setting(file: &Path, pointer: &str, env: &StoreEnv) -> Vec<PathBuf> {
    if !std::fs::metadata(file).is_ok_and(|m| m.is_file() && m.len() <= MAX_SETTINGS_BYTES) {
        return Vec::new();
    }
    let Ok(text) = std::fs::read_to_string(file) else { return Vec::new() };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let value: Option<serde_json::Value> = if file.extension().is_some_and(|e| e == "toml") {
        toml::from_str::<toml::Value>(text).ok().and_then(|v| serde_json::to_value(v).ok())
    } else {
        serde_json::from_str(text).ok()
    };
    let Some(value) = value else { return Vec::new() };
    let named: Vec<&serde_json::Value> = match pointer.strip_suffix("/*") {
        Some(parent) => match value.pointer(parent) {
            Some(serde_json::Value::Object(map)) => map.values().collect(),
            Some(serde_json::Value::Array(items)) => items.iter().collect(),
            _ => Vec::new(),
        },
        None => value.pointer(pointer).into_iter().collect(),
    };
    let paths = named.into_iter().filter_map(|v| v.as_str()).map(str::trim).filter(|n| !n.is_empty()).map(|n| env.expand(n));
    dedup(paths.filter(|p| p.is_absolute()).collect())
}

/// A `$(NAME:-default)` component: the variable's value when it is one plain name (a
/// harness that lets a variable rename one directory), else the default.
fn named_component<'c>(component: &'c str, env: &'c StoreEnv) -> Option<&'c str> {
    let inner = component.strip_prefix("$(")?.strip_suffix(')')?;
    let (name, default) = inner.split_once(":-")?;
    let plain = |v: &&str| {
        let mut parts = Path::new(v).components();
        matches!((parts.next(), parts.next()), (Some(std::path::Component::Normal(_)), None))
    };
    Some(env.var(name).filter(plain).unwrap_or(default))
}

/// `bases` joined with each `/`-separated component of `rest` (alternatives, wildcards
/// and named components expanded).
fn descend(bases: Vec<PathBuf>, rest: &str, env: &StoreEnv) -> Vec<PathBuf> {
    let mut out = bases;
    for component in components(rest) {
        let component = named_component(component, env).unwrap_or(component);
        let choices = alternatives(component);
        let join = |b: &PathBuf, c: &str| if b.as_os_str().is_empty() { PathBuf::from("/").join(c) } else { b.join(c) };
        out = out
            .iter()
            .flat_map(|b| {
                choices.iter().flat_map(move |c| {
                    if c.contains('*') {
                        // A directory the harness names with a variable part (one per
                        // edition or profile): every existing match, sorted.
                        let parent = join(b, "");
                        let hits = crate::discover::subdirs(&parent);
                        hits.into_iter().filter(|d| d.file_name().is_some_and(|n| wildcard(c, &n.to_string_lossy()))).collect()
                    } else {
                        vec![join(b, c)]
                    }
                })
            })
            .collect();
    }
    out
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters.
fn wildcard(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = name.strip_prefix(first) else { return false };
    let parts: Vec<&str> = parts.collect();
    for (i, part) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            return rest.len() >= part.len() && rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// The `/`-separated components of `rest`, a `/` inside `{…}` alternatives kept
/// (`{Data/Agents/.claude,.claude}` is one component).
fn components(rest: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, b) in rest.bytes().enumerate() {
        match b {
            b'{' | b'(' => depth += 1,
            b'}' | b')' => depth = depth.saturating_sub(1),
            b'/' if depth == 0 => {
                out.push(&rest[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&rest[start..]);
    out.retain(|c| !c.is_empty());
    out
}

/// `a{b,c}d` → `abd`, `acd`; a component without braces is itself.
fn alternatives(component: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (component.find('{'), component.rfind('}')) else { return vec![component.to_string()] };
    if close < open {
        return vec![component.to_string()];
    }
    let (head, tail) = (&component[..open], &component[close + 1..]);
    component[open + 1..close].split(',').map(|mid| format!("{head}{mid}{tail}")).collect()
}

/// Every variable a template names, outermost first.
fn template_vars<'t>(t: &'t str, out: &mut Vec<&'t str>) {
    for choice in choices(t) {
        let rest = match parse(choice) {
            Some((Base::Var { name, default }, rest)) => {
                out.push(name);
                if let Some(d) = default {
                    template_vars(d, out);
                }
                rest
            }
            Some((Base::Setting { file, .. }, rest)) => {
                template_vars(file, out);
                rest
            }
            Some((_, rest)) => rest,
            None => continue,
        };
        // `$(NAME:-default)` components.
        for c in rest.split('/') {
            if let Some((name, _)) = c.strip_prefix("$(").and_then(|c| c.strip_suffix(')')).and_then(|c| c.split_once(":-")) {
                out.push(name);
            }
        }
    }
}

/// The directories `var` stands for in template `t` (its value, else its default),
/// when `t` names it.
fn level(t: &str, var: &str, env: &StoreEnv) -> Option<Vec<PathBuf>> {
    choices(t).into_iter().find_map(|c| level_one(c, var, env))
}

/// [`level`] in one choice.
fn level_one(t: &str, var: &str, env: &StoreEnv) -> Option<Vec<PathBuf>> {
    let (Base::Var { name, default }, _) = parse(t)? else { return None };
    if name == var {
        return Some(match env.path_var(name) {
            Some(p) => vec![p],
            None => default.map(|d| eval(d, env)).unwrap_or_default(),
        });
    }
    // A variable nested in the default: it matters only while the outer one is unset.
    level(default?, var, env)
}

/// Whether template `t` names `var`.
pub fn names_var(t: &str, var: &str) -> bool {
    let mut vars = Vec::new();
    template_vars(t, &mut vars);
    vars.contains(&var)
}

/// Whether a template parses (checked for every adapter by the kit).
pub fn parses(t: &str) -> bool {
    choices(t).into_iter().all(|c| match parse(c) {
        Some((Base::Var { default: Some(d), .. }, _)) => parses(d),
        Some((Base::Setting { file, .. }, _)) => parses(file),
        Some(_) => true,
        None => false,
    })
}

/// The directory `var` stands for in template `t` with only `HOME` set (for the kit).
pub fn default_level(t: &str, var: &str, home: &Path) -> Option<PathBuf> {
    level(t, var, &StoreEnv::with_home(home)).and_then(|l| l.into_iter().next())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_replace_the_level_their_variable_sits_at() {
        let env = StoreEnv::with_home("/h");
        let t = "${TRAECLI_HOME:-${TRAE_HOME:-~/.trae}/cli}/sessions";
        assert_eq!(eval(t, &env), vec![PathBuf::from("/h/.trae/cli/sessions")]);
        assert_eq!(eval(t, &env.clone().set("TRAE_HOME", "/t")), vec![PathBuf::from("/t/cli/sessions")]);
        assert_eq!(eval(t, &env.clone().set("TRAECLI_HOME", "/c").set("TRAE_HOME", "/t")), vec![PathBuf::from("/c/sessions")]);
        assert_eq!(eval(t, &env.clone().set("TRAE_HOME", "relative")), vec![PathBuf::from("/h/.trae/cli/sessions")], "relative: ignored");
        assert_eq!(level(t, "TRAE_HOME", &env), Some(vec![PathBuf::from("/h/.trae")]));
        assert_eq!(level(t, "TRAECLI_HOME", &env), Some(vec![PathBuf::from("/h/.trae/cli")]));
        assert!(names_var(t, "TRAE_HOME") && !names_var(t, "HOME"));
        let mut vars = Vec::new();
        template_vars("${A:-${B:-~}/x}/y", &mut vars);
        assert_eq!(vars, ["A", "B"]);
        assert_eq!(eval("${ONLY_SET}/x", &env), Vec::<PathBuf>::new(), "no default: no root");
        assert_eq!(eval("~", &env), vec![PathBuf::from("/h")]);
        assert!(parses("@/profiles") && eval("@/profiles", &env).is_empty(), "`@` needs the spec");
        assert_eq!(eval("${W:-~/{.a,.b}}/p", &env), vec![PathBuf::from("/h/.a/p"), PathBuf::from("/h/.b/p")]);
        assert_eq!(eval("~/{x/y,z}/p", &env), vec![PathBuf::from("/h/x/y/p"), PathBuf::from("/h/z/p")], "a / inside alternatives");
        assert_eq!(eval("${W:-~/{.a,.b}}/p", &env.clone().set("W", "/w")), vec![PathBuf::from("/w/p")]);
        assert_eq!(eval("/opt/x", &env), vec![PathBuf::from("/opt/x")]);
        assert_eq!(
            eval("~/.config/{Code,Code - Insiders}/User", &env),
            vec![PathBuf::from("/h/.config/Code/User"), PathBuf::from("/h/.config/Code - Insiders/User")]
        );
        let first = "${GOOSE_PATH_ROOT}/data|${XDG_DATA_HOME:-~/.local/share}/goose";
        assert_eq!(eval(first, &env), vec![PathBuf::from("/h/.local/share/goose")]);
        assert_eq!(eval(first, &env.clone().set("GOOSE_PATH_ROOT", "/g")), vec![PathBuf::from("/g/data")]);
        let mut vars = Vec::new();
        template_vars(first, &mut vars);
        assert_eq!(vars, ["GOOSE_PATH_ROOT", "XDG_DATA_HOME"]);
        assert!(parses(first) && !parses("~/a|rel"));
        assert!(wildcard("alpha*", "alpha") && wildcard("alpha*", "alpha-beta") && !wildcard("alpha*", "gamma"));
        assert!(wildcard("a*b*c", "a-b-c") && !wildcard("a*b*c", "a-c") && wildcard("x", "x") && !wildcard("x", "xy"));
        for bad in ["${X", "${X}y", "relative/x", "${:-~}", "${X Y:-~}"] {
            assert!(!parses(bad) && eval(bad, &env).is_empty(), "{bad}");
        }
    }

    static SPEC: StoreSpec = StoreSpec::new(&[
        Store {
            name: "",
            roots: &[Root::any("${FOO_HOME:-~/.foo}/sessions")],
            layout: Layout::Files(
                Files::new("**/*.jsonl")
                    .exclude(&["*.bak.jsonl"])
                    .append_only()
                    .parts(&[Part::Sibling("meta.json")])
                    .subagents("subagents"),
            ),
        },
        Store { name: "db", roots: &[Root::any("${XDG_DATA_HOME:-~/.local/share}/foo")], layout: Layout::Database("foo.db") },
        Store { name: "inner", roots: &[Root::any("@/inner")], layout: Layout::Custom { shape: "", walk: None } },
    ])
    .aliases(&[("DEJA_FOOBAR_DB", "DEJA_FOO_DB")]);

    #[test]
    fn overrides_follow_one_rule_and_aliases_still_work() {
        let env = StoreEnv::with_home("/h");
        let sessions = &SPEC.stores[0];
        let db = &SPEC.stores[1];
        assert_eq!(SPEC.roots("foo", sessions, &env), vec![PathBuf::from("/h/.foo/sessions")]);
        let sep = if cfg!(windows) { ";" } else { ":" };
        let moved = env.clone().set("DEJA_FOO_ROOT", "/r").set("DEJA_FOO_ROOTS", format!("/a{sep}/r"));
        assert_eq!(SPEC.roots("foo", sessions, &moved), vec![PathBuf::from("/r"), PathBuf::from("/a")]);
        assert_eq!(SPEC.roots_of("foo", "inner", &env), vec![PathBuf::from("/h/.foo/sessions/inner")]);
        assert_eq!(SPEC.roots_of("foo", "inner", &moved), vec![PathBuf::from("/r/inner"), PathBuf::from("/a/inner")], "it moves with them");
        assert_eq!(SPEC.database_files("foo", db, &env), vec![PathBuf::from("/h/.local/share/foo/foo.db")]);
        assert_eq!(SPEC.database_files("foo", db, &env.clone().set("DEJA_FOOBAR_DB", "/x.db")), vec![PathBuf::from("/x.db")]);
        assert_eq!(SPEC.database_files("foo", db, &env.clone().set("DEJA_FOO_DB_ROOT", "/d")), vec![PathBuf::from("/d/foo.db")]);
        let names: Vec<String> = SPEC.deja_var_names("foo").into_iter().map(|(v, old)| format!("{v}{old:?}")).collect();
        assert_eq!(
            names,
            [
                "DEJA_FOO_ROOT[]",
                "DEJA_FOO_ROOTS[]",
                "DEJA_FOO_DB_ROOT[]",
                "DEJA_FOO_DB_ROOTS[]",
                "DEJA_FOO_DB[\"DEJA_FOOBAR_DB\"]",
                "DEJA_FOO_INNER_ROOT[]",
                "DEJA_FOO_INNER_ROOTS[]",
                "DEJA_INCLUDE_SUBAGENTS[]"
            ]
        );
        assert_eq!(SPEC.env_vars(), ["FOO_HOME", "XDG_DATA_HOME"]);
        assert_eq!(SPEC.level(&env, "FOO_HOME"), Some(PathBuf::from("/h/.foo")));
        assert_eq!(SPEC.level(&env.clone().set("FOO_HOME", "/f"), "FOO_HOME"), Some(PathBuf::from("/f")));
        assert_eq!(SPEC.paths()[0].1, "${FOO_HOME:-~/.foo}/sessions/**/*.jsonl");
    }

    #[test]
    fn a_setting_or_a_named_component_can_place_a_root() {
        let tmp = tempfile::tempdir().unwrap();
        let h = tmp.path();
        std::fs::create_dir_all(h.join(".pi/agent")).unwrap();
        let env = StoreEnv::with_home(h);
        let t = "${PI_SESSIONS:-<${PI_DIR:-~/.pi/agent}/settings.json#/sessionDir>|${PI_DIR:-~/.pi/agent}/sessions}";
        assert!(parses(t));
        assert_eq!(eval(t, &env), vec![h.join(".pi/agent/sessions")], "no settings file: the default");
        std::fs::write(h.join(".pi/agent/settings.json"), "\u{feff}{\"sessionDir\": \"~/elsewhere\"}").unwrap();
        assert_eq!(eval(t, &env), vec![h.join("elsewhere")]);
        std::fs::write(h.join(".pi/agent/settings.json"), "{\"sessionDir\": \"relative\"}").unwrap();
        assert_eq!(eval(t, &env), vec![h.join(".pi/agent/sessions")], "a relative setting is ignored");
        std::fs::write(h.join("c.toml"), "[storage]\nstate = \"/s\"\n").unwrap();
        assert_eq!(eval("<~/c.toml#/storage/state>/x", &env), vec![PathBuf::from("/s/x")]);
        std::fs::write(h.join("boot.json"), "{\"dirs\": {\"a\": \"/one\", \"b\": \"/two\", \"c\": 3}}").unwrap();
        assert_eq!(eval("<~/boot.json#/dirs/*>/d", &env), vec![PathBuf::from("/one/d"), PathBuf::from("/two/d")], "every string there");
        let mut vars = Vec::new();
        template_vars(t, &mut vars);
        assert_eq!(vars, ["PI_SESSIONS", "PI_DIR", "PI_DIR"]);
        assert_eq!(level(t, "PI_DIR", &env), Some(vec![h.join(".pi/agent")]));
        let named = "~/$(NAME_VAR:-.qoder)/projects";
        assert_eq!(eval(named, &env), vec![h.join(".qoder/projects")]);
        assert_eq!(eval(named, &env.clone().set("NAME_VAR", ".q2")), vec![h.join(".q2/projects")]);
        assert_eq!(eval(named, &env.clone().set("NAME_VAR", "../x")), vec![h.join(".qoder/projects")], "one plain name only");
        let mut vars = Vec::new();
        template_vars(named, &mut vars);
        assert_eq!(vars, ["NAME_VAR"]);
    }

    #[test]
    fn a_wildcard_component_names_every_matching_directory() {
        let tmp = tempfile::tempdir().unwrap();
        for d in [".gemini/antigravity/brain", ".gemini/antigravity-beta/brain", ".gemini/other/brain"] {
            std::fs::create_dir_all(tmp.path().join(d)).unwrap();
        }
        let env = StoreEnv::with_home(tmp.path());
        let roots = eval("~/.gemini/antigravity*/brain", &env);
        assert_eq!(roots, [tmp.path().join(".gemini/antigravity/brain"), tmp.path().join(".gemini/antigravity-beta/brain")]);
    }

    #[test]
    fn files_are_found_by_glob_with_their_parts() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path();
        let root = home.join(".foo/sessions");
        for f in ["a.jsonl", "p/b.jsonl", "p/b.bak.jsonl", "p/subagents/c.jsonl", "p/notes.txt"] {
            let path = root.join(f);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "{}\n").unwrap();
        }
        std::fs::create_dir_all(home.join(".local/share/foo")).unwrap();
        std::fs::write(home.join(".local/share/foo/foo.db"), "x").unwrap();
        let env = StoreEnv::with_home(home);
        let found = discover("foo", &SPEC, &env);
        let rel: Vec<String> = found.sources.iter().map(|s| s.path.strip_prefix(home).unwrap().display().to_string()).collect();
        assert_eq!(
            rel,
            [".foo/sessions/a.jsonl", ".foo/sessions/p/b.jsonl", ".foo/sessions/p/subagents/c.jsonl", ".local/share/foo/foo.db"]
        );
        assert!(found.sources[0].append_only && found.sources[0].parts == [root.join("meta.json")]);
        assert!(found.sources[3].parts[0].to_string_lossy().ends_with("foo.db-wal"));
        assert_eq!(found.roots.len(), 3, "each store's root is looked at, the one inside the sessions root too");
        let without = discover("foo", &SPEC, &env.clone().set(INCLUDE_SUBAGENTS, "0"));
        assert_eq!(without.sources.len(), 3, "sub-agent runs only when asked for");
        assert!(SPEC.present("foo", &env) && !SPEC.present("foo", &StoreEnv::with_home(home.join("nowhere"))));
    }
}

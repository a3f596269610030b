//! The conformance kit every adapter's tests run in one line (feature `testkit`, a
//! dev-dependency of each adapter crate):
//!
//! ```text
//! deja_core::conformance!(FooFormat, relocate "DEJA_FOO_ROOT" => ".foo/sessions", relocate "FOO_HOME" => ".foo");
//! ```
//!
//! expands to nine tests over the adapter's fixture home, `tests/fixtures/home/` (a home
//! directory laid out exactly as the harness lays out its store; a file `X.sql` in it is
//! materialized as the SQLite database `X`, written through a connection that stays open
//! so the rows sit in a live `-wal`, and with a `zstd(text)` SQL function for compressed
//! BLOB columns):
//!
//! - **snapshots**: every discovered source is parsed and normalized as the index would
//!   (the harness's injected-text rules applied) and snapshotted with insta as
//!   `tests/snapshots/fixture__<path>.snap`, with the parse stats, so skipped records
//!   show up in review;
//! - **arbitrary bytes** and **mutations** (the fuzz check, [`fuzz`]): each fixture source
//!   copied into a fresh home with one of its files replaced by arbitrary bytes, or
//!   mutated (truncated at many offsets including mid-UTF-8 and mid-record, bytes flipped,
//!   lines deleted, duplicated or swapped, one JSON record's value replaced by null, a
//!   number, an array, a huge string or deep nesting, or a key dropped, inside zstd too;
//!   a SQLite fixture's row values mutated the same way, or its raw page bytes), parsed
//!   fully, with reasoning, resumed mid-file (append-only sources) and from its cursor:
//!   never a panic or a hang, output bounded by the input, stats consistent with the
//!   output, every session and turn well formed. A failure names the adapter, fixture,
//!   seed and mutation, keeps the mutated input, and says how to replay it;
//! - **store overrides**: each relocation variable moves the store: the fixture store
//!   copied elsewhere is found there, and only there. Every variable the adapter's
//!   `StoreSpec` names is checked without being listed: deja's derived ones
//!   (`DEJA_<ID>_ROOT`, `_ROOTS`, `_DB`, a named store's, and their older aliases) move
//!   each store's roots, and each harness variable in a template moves the level it
//!   stands for (what it accounts for: the stores under that level it does not move are
//!   left out). The spec's other variables must be listed, `relocate "VAR" => "<dir>"`
//!   (with `within "<sub>"` when it moves only part of the directory it stands for) or
//!   `switch "VAR"` when they are no store location;
//! - **tail**: each append-only source, cut at every record boundary, read whole up to
//!   the cut and then as the tail the indexer reads next (from the resume point and the
//!   state the first read returned, joined as the indexer joins them), gives what one
//!   whole read gives: sessions, titles, projects, turns with their calls' results
//!   (`testkit/tail.rs`);
//! - **synthetic round trip**: where the adapter has a synthetic writer, a session written
//!   through it comes back through `discover` + `parse` with its prompts, answers and
//!   command;
//! - **read only**: parsing every source, and making every fixture session's resume
//!   command (a harness that resumes by key looks it up in its store), leaves every file
//!   of the home (databases, their `-wal` and `-shm` included) byte for byte and mtime for
//!   mtime as it was, and a database another connection is writing (a write transaction
//!   held open on each materialized `.sql` fixture) reads the same sessions;
//! - **resume**: every fixture session gets a resume command or a reason, as `launch`
//!   declares;
//! - **wiring**: where the adapter wires deja into its harness, each target installed
//!   over configs holding the user's own entries keeps them, a second install changes
//!   nothing, uninstall gives every byte back, and relocation variables move the files
//!   ([`wiring`]).
//!
//! The fuzz check runs `DEJA_FUZZ_CASES` cases per test (a few by default, so seventy
//! adapters stay within CI's budget); `cargo xtask fuzz` runs many more.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::env::StoreEnv;
use crate::format::{HarnessFormat, ParseOptions, ParseStats};
use crate::model::{Role, Session, SourceRef, Timestamp};
use crate::normalize::{normalize, NormalizeOptions};
use crate::synth::{SynthSession, SynthTurn};

pub mod fuzz;
mod tail;
mod wiring;

/// Expands to the kit's tests for one adapter (see the module doc).
#[macro_export]
macro_rules! conformance {
    ($format:expr $(, relocate $var:literal => $dir:literal $(within $sub:literal)?)* $(, switch $switch:literal)* $(, wires $wvar:literal => $wdir:literal)* $(,)?) => {
        fn deja_conformance_kit() -> $crate::testkit::Kit {
            $crate::testkit::Kit::new(&$format, env!("CARGO_MANIFEST_DIR"))$(.relocates($var, $dir)$(.within($sub))?)*$(.switch($switch))*$(.wires($wvar, $wdir))*
        }
        #[test]
        fn conformance_snapshots() {
            deja_conformance_kit().check_snapshots();
        }
        #[test]
        fn conformance_arbitrary_bytes() {
            deja_conformance_kit().check_arbitrary_bytes();
        }
        #[test]
        fn conformance_mutations() {
            deja_conformance_kit().check_mutations();
        }
        #[test]
        fn conformance_store_overrides() {
            deja_conformance_kit().check_store_overrides();
        }
        #[test]
        fn conformance_synthetic_round_trip() {
            deja_conformance_kit().check_synthetic_round_trip();
        }
        #[test]
        fn conformance_restore_round_trip() {
            deja_conformance_kit().check_restore_round_trip();
        }
        #[test]
        fn conformance_read_only() {
            deja_conformance_kit().check_read_only();
        }
        #[test]
        fn conformance_wiring() {
            deja_conformance_kit().check_wiring();
        }
        #[test]
        fn conformance_resume() {
            deja_conformance_kit().check_resume();
        }
        #[test]
        fn conformance_tail() {
            deja_conformance_kit().check_tail();
        }
    };
}

/// One adapter under test.
pub struct Kit {
    pub(crate) format: &'static dyn HarnessFormat,
    crate_dir: PathBuf,
    /// `(variable, home-relative directory it stands for, the part of it that moves)`.
    relocations: Vec<(&'static str, &'static str, Option<&'static str>)>,
    switches: Vec<&'static str>,
    /// Variables that move the harness's config, for the wiring check.
    pub(crate) config_relocations: Vec<(&'static str, &'static str)>,
}

/// A materialized fixture home; databases stay open (their WAL live) while it lives.
pub struct FixtureHome {
    dir: tempfile::TempDir,
    _writers: Vec<rusqlite::Connection>,
}

impl FixtureHome {
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Copies `from` (a fixture home) into `to`, materializing `X.sql` files as databases
/// `X` whose rows sit in a live WAL; returns the open writer connections.
pub fn materialize_home(from: &Path, to: &Path) -> std::io::Result<Vec<rusqlite::Connection>> {
    let mut writers = Vec::new();
    copy_tree(from, to, &mut writers)?;
    Ok(writers)
}

fn copy_tree(from: &Path, to: &Path, writers: &mut Vec<rusqlite::Connection>) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    let mut entries: Vec<_> = std::fs::read_dir(from)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        let target = to.join(&name);
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target, writers)?;
        } else if let Some(db_name) = name.to_str().and_then(|n| n.strip_suffix(".sql")) {
            let sql = std::fs::read_to_string(entry.path())?;
            writers.push(
                sqlite_fixture(&to.join(db_name), &sql).map_err(|e| std::io::Error::other(format!("{}: {e}", entry.path().display())))?,
            );
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

use crate::family::FIXTURE_SCHEMAS;

/// `sql` with every `-- schema: <name>` line replaced by that schema (an unknown name
/// fails the fixture, naming it).
fn with_schemas(sql: &str) -> rusqlite::Result<String> {
    let mut out = String::with_capacity(sql.len());
    for line in sql.split_inclusive('\n') {
        match line.trim().strip_prefix("-- schema:").map(str::trim) {
            Some(name) => match FIXTURE_SCHEMAS.iter().find(|(n, _)| *n == name) {
                Some((_, schema)) => out.push_str(schema),
                None => return Err(rusqlite::Error::InvalidParameterName(format!("no fixture schema `{name}`"))),
            },
            None => out.push_str(line),
        }
    }
    Ok(out)
}

/// Writes a database from SQL in WAL mode with checkpoints off, and returns the open
/// connection: as long as it lives the rows sit in the `-wal`, as in a harness's live store.
/// A line `-- schema: <name>` stands for a family's schema ([`FIXTURE_SCHEMAS`]).
pub fn sqlite_fixture(path: &Path, sql: &str) -> rusqlite::Result<rusqlite::Connection> {
    let conn = rusqlite::Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "wal_autocheckpoint", 0)?;
    conn.create_scalar_function("zstd", 1, rusqlite::functions::FunctionFlags::SQLITE_DETERMINISTIC, |ctx| {
        let text: String = ctx.get(0)?;
        zstd::encode_all(text.as_bytes(), 3).map_err(|e| rusqlite::Error::UserFunctionError(Box::new(e)))
    })?;
    conn.execute_batch(&with_schemas(sql)?)?;
    Ok(conn)
}

impl Kit {
    pub fn new(format: &'static dyn HarnessFormat, crate_dir: &str) -> Kit {
        Kit { format, crate_dir: PathBuf::from(crate_dir), relocations: Vec::new(), switches: Vec::new(), config_relocations: Vec::new() }
    }

    /// `var` set to a directory stands for `home_rel` (a path under the home directory,
    /// `.claude/projects`) in store discovery.
    pub fn relocates(mut self, var: &'static str, home_rel: &'static str) -> Kit {
        self.relocations.push((var, home_rel, None));
        self
    }

    /// The last relocation moves only the store under `sub` (relative to the directory
    /// it stands for): a home base such as `QODER_CLI_HOME` moves `~/.qoder` and not the
    /// other stores in the home.
    pub fn within(mut self, sub: &'static str) -> Kit {
        if let Some(last) = self.relocations.last_mut() {
            last.2 = Some(sub);
        }
        self
    }

    /// `var` set to a directory stands for `home_rel` (`.codex`) where the adapter's
    /// wiring writes the harness's config: the wiring check expects every file it writes
    /// there to move.
    pub fn wires(mut self, var: &'static str, home_rel: &'static str) -> Kit {
        self.config_relocations.push((var, home_rel));
        self
    }

    /// `var`, listed in the adapter's `HarnessInfo`, is a switch or a selector rather than
    /// a store location (`DEJA_INCLUDE_SUBAGENTS`, `OMP_PROFILE`).
    pub fn switch(mut self, var: &'static str) -> Kit {
        self.switches.push(var);
        self
    }

    fn id(&self) -> &'static str {
        self.format.info().id
    }

    fn fixtures(&self) -> PathBuf {
        self.crate_dir.join("tests/fixtures/home")
    }

    /// A fresh copy of the fixture home.
    pub fn home(&self) -> FixtureHome {
        let dir = tempfile::tempdir().expect("temporary directory");
        let writers = materialize_home(&self.fixtures(), dir.path())
            .unwrap_or_else(|e| panic!("{}: materializing tests/fixtures/home: {e}", self.id()));
        FixtureHome { dir, _writers: writers }
    }

    /// The sources the adapter discovers in the fixture home (with only `HOME` set).
    pub fn sources(&self, home: &FixtureHome) -> Vec<SourceRef> {
        self.format.discover(&StoreEnv::with_home(home.path())).sources
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions) -> (Vec<Session>, Option<ParseStats>) {
        let mut out = Vec::new();
        let stats = self.format.parse(src, opts, &mut out).ok();
        (out, stats)
    }

    /// Every discovered source parsed, normalized and snapshotted (see the module doc).
    pub fn check_snapshots(&self) {
        let home = self.home();
        let sources = self.sources(&home);
        assert!(!sources.is_empty(), "{}: discovery found no source in tests/fixtures/home", self.id());
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(self.crate_dir.join("tests/snapshots"));
        settings.set_prepend_module_to_snapshot(false);
        settings.set_omit_expression(true);
        let norm = NormalizeOptions::default();
        let mut names = BTreeSet::new();
        for src in &sources {
            let rel = rel_name(home.path(), src);
            let mut out = Vec::new();
            let result = self.format.parse(src, &ParseOptions::default(), &mut out);
            for s in &mut out {
                normalize(s, &norm, self.format.info().injected);
            }
            let shown = match &result {
                Ok(stats) => serde_json::json!({
                    "records": stats.records,
                    "skipped": stats.skipped,
                    "problems": stats.problems,
                }),
                Err(e) => serde_json::json!({"error": e.to_string()}),
            };
            let mut value = serde_json::json!({"source": rel, "stats": shown, "sessions": out});
            scrub(&mut value, &home.path().display().to_string());
            let name = format!("fixture__{}", snapshot_stem(&rel));
            assert!(names.insert(name.clone()), "two sources snapshot as {name}");
            settings.bind(|| insta::assert_json_snapshot!(name, value));
        }
        // A snapshot no source writes any more would go on documenting behaviour that is
        // gone (a fixture renamed, a source no longer discovered).
        let stale: Vec<String> = std::fs::read_dir(self.crate_dir.join("tests/snapshots"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str().and_then(|n| n.strip_suffix(".snap")).map(str::to_string))
            .filter(|n| n.starts_with("fixture__") && !names.contains(n))
            .collect();
        assert!(stale.is_empty(), "{}: snapshots no discovered source writes (delete them): {stale:?}", self.id());
    }

    /// Every session the adapter reads from a fresh copy of the fixture home (databases
    /// materialized with a live WAL), with the environment `env` builds for that home.
    pub fn sessions(&self, env: impl Fn(&Path) -> StoreEnv, opts: &ParseOptions) -> Vec<Session> {
        let home = self.home();
        read_all(self.format, &env(home.path()), opts)
    }

    /// Every fixture session gets a resume command or a reason, as the adapter's `launch`
    /// declares: a harness that always resumes (or resumes by key) reopens its fixture
    /// sessions with its own program, and one that does not refuses them all.
    pub fn check_resume(&self) {
        use crate::launch::{resume_command, Resume};
        let launch = self.format.info().launch;
        // The home stays alive: a harness that resumes by key reads it beside the transcript.
        let home = self.home();
        let sessions: Vec<Session> = self.sources(&home).iter().flat_map(|src| self.parse(src, &ParseOptions::default()).0).collect();
        let mut resumable = Vec::new();
        for s in &sessions {
            let meta = crate::tail::whole_meta(s, &s.source.manifest_key());
            match (resume_command(&launch.resume, &meta), &launch.resume) {
                (Ok(cmd), Resume::Always(spec) | Resume::ByKey { spec, .. }) => {
                    assert_eq!(cmd.argv.first().map(String::as_str), spec.argv.first().copied(), "{}: {cmd:?}", self.id());
                    resumable.push(cmd);
                }
                (Ok(cmd), _) => resumable.push(cmd),
                (Err(why), Resume::Always(_)) => panic!("{}: session {} should always resume: {why}", self.id(), s.id),
                (Err(why), _) => assert!(!why.is_empty(), "{}: an empty reason", self.id()),
            }
        }
        match launch.resume {
            Resume::Unsupported(_) | Resume::Unknown => {
                assert!(resumable.is_empty(), "{}: declares no resume but made {resumable:?}", self.id())
            }
            // A per-session pick may depend on this machine (a directory that must exist).
            Resume::PerSession { .. } => {}
            Resume::Always(_) | Resume::ByKey { .. } => {
                assert!(!resumable.is_empty(), "{}: no fixture session is resumable", self.id())
            }
        }
    }

    /// Reading changes nothing and is not disturbed by a writer (see the module doc).
    pub fn check_read_only(&self) {
        let home = self.home();
        let before = tree_state(home.path());
        let sources = self.sources(&home);
        let read_all =
            || -> Vec<(Vec<Session>, Option<ParseStats>)> { sources.iter().map(|src| self.parse(src, &ParseOptions::default())).collect() };
        let baseline = read_all();
        let after = tree_state(home.path());
        let changed: Vec<&PathBuf> =
            before.keys().chain(after.keys()).filter(|p| before.get(*p) != after.get(*p)).collect::<BTreeSet<_>>().into_iter().collect();
        assert!(changed.is_empty(), "{}: reading changed the harness's files: {changed:?}", self.id());
        // Launching looks things up in the store too (a resume key in the harness's own
        // database): that may not write either.
        let launch = self.format.info().launch;
        for s in baseline.iter().flat_map(|(sessions, _)| sessions) {
            let meta = crate::tail::whole_meta(s, &s.source.manifest_key());
            let _ = crate::launch::resume_command(&launch.resume, &meta);
        }
        let launched = tree_state(home.path());
        let changed: Vec<&PathBuf> = before
            .keys()
            .chain(launched.keys())
            .filter(|p| before.get(*p) != launched.get(*p))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        assert!(changed.is_empty(), "{}: making a resume command changed the harness's files: {changed:?}", self.id());
        if home._writers.is_empty() {
            return;
        }
        for w in &home._writers {
            w.execute_batch("BEGIN IMMEDIATE; CREATE TABLE IF NOT EXISTS deja_kit_writer(x); INSERT INTO deja_kit_writer VALUES (1);")
                .expect("hold a write transaction");
        }
        let during = read_all();
        for w in &home._writers {
            w.execute_batch("ROLLBACK").expect("roll back");
        }
        for ((src, a), b) in sources.iter().zip(&baseline).zip(&during) {
            assert_eq!(a.0, b.0, "{}: {} reads differently while another connection writes", self.id(), src.path.display());
        }
    }

    /// Arbitrary bytes in place of one file of each source hold the fuzz properties
    /// (see [`fuzz`]).
    pub fn check_arbitrary_bytes(&self) {
        self.check_fuzz(fuzz::Family::Arbitrary);
    }

    /// Each fixture source, mutated (see [`fuzz`]), holds the fuzz properties; so does
    /// each unmutated one, every way it is parsed.
    pub fn check_mutations(&self) {
        let home = self.home();
        let sources = self.sources(&home);
        for src in &sources {
            let input = fuzz::input_bytes(src);
            let (out, stats) = self.parse(src, &ParseOptions { include_reasoning: true });
            let stats = stats.ok_or_else(|| "error".to_string());
            if let Some(failure) = fuzz::check_output(self.id(), src, input, &out, &stats) {
                panic!("{}: the unmutated fixture {} breaks a fuzz property: {failure}", self.id(), rel_name(home.path(), src));
            }
        }
        self.check_fuzz(fuzz::Family::Structured);
    }

    fn check_fuzz(&self, family: fuzz::Family) {
        let home = self.home();
        let sources = self.sources(&home);
        assert!(!sources.is_empty(), "{}: discovery found no source in tests/fixtures/home", self.id());
        if let Err(report) = fuzz::run_family(self.format, &sources, home.path(), family, fuzz::cases()) {
            panic!("fuzz check failed\n{report}");
        }
    }

    /// Each relocation variable moves the store (see the module doc): every variable the
    /// adapter's [`StoreSpec`](crate::store::StoreSpec) names is checked without being
    /// listed (deja's derived ones move each store's roots, each template variable the
    /// level it stands for), and those listed by hand as the list says.
    pub fn check_store_overrides(&self) {
        let info = self.format.info();
        let spec = &info.store;
        let listed = |var: &str| self.relocations.iter().any(|(v, ..)| *v == var) || self.switches.contains(&var);
        assert!(
            spec.stores.first().is_some_and(|s| s.name.is_empty()),
            "{}: the spec's first store is the sessions store, named \"\"",
            info.id
        );
        for root in spec.stores.iter().flat_map(|s| s.roots) {
            assert!(crate::store::parses(root.path), "{}: the store template `{}` does not parse", info.id, root.path);
        }
        for (old, now) in spec.aliases {
            assert!(
                spec.deja_var_names(info.id).iter().any(|(v, _)| v == now),
                "{}: alias {old} stands for {now}, which the spec does not derive",
                info.id
            );
        }
        for var in spec.harness_vars.iter().chain(spec.deja_vars) {
            assert!(
                listed(var),
                "{}: the StoreSpec names {var}, but the kit neither relocates it (`relocate \"{var}\" => \"<dir>\"`) nor knows it as a switch",
                info.id
            );
        }
        let home = self.home();
        let baseline = self.sources(&home);
        let mut checks: Vec<Relocation> = self
            .relocations
            .iter()
            .map(|(var, rel, within)| {
                let from = home.path().join(rel);
                let moved = within.map_or_else(|| from.clone(), |sub| from.join(sub));
                Relocation { var: var.to_string(), from, moved: vec![moved], required: true, derived: false }
            })
            .collect();
        checks.extend(derived_relocations(info.id, spec, home.path(), &baseline).into_iter().filter(|c| !listed(&c.var)));
        for check in &checks {
            let want = self.found_through(check, home.path());
            let shown = check.moved.iter().map(|m| format!("~/{}", m.strip_prefix(home.path()).unwrap_or(m).display())).collect::<Vec<_>>();
            if want.is_empty() {
                assert!(!check.required, "{}: no fixture source lies under {shown:?}, so {} cannot be checked", info.id, check.var);
                continue;
            }
            let tmp = tempfile::tempdir().expect("temporary directory");
            let elsewhere = tmp.path().join("elsewhere");
            materialize_home(&check.from, &elsewhere).expect("copy the store");
            let empty_home = tmp.path().join("home");
            std::fs::create_dir_all(&empty_home).expect("mkdir");
            let env = StoreEnv::with_home(&empty_home).set(&check.var, elsewhere.display().to_string());
            let found = self.format.discover(&env).sources;
            let got: BTreeSet<PathBuf> = found.iter().filter_map(|s| s.path.strip_prefix(&elsewhere).ok().map(Path::to_path_buf)).collect();
            assert_eq!(
                got,
                want,
                "{}: with {}={} discovery should find the store ({shown:?}) there",
                info.id,
                check.var,
                elsewhere.display()
            );
        }
    }

    /// What `check.var` accounts for, relative to `check.from`: the sources found under
    /// `check.moved` in a home holding only a copy of `check.from` (another store of the
    /// fixture home may hide some of them, and with the variable set in an empty home it
    /// is not there), less, for a relocation derived from the spec, those still found
    /// with the variable pointed at an empty directory (stores under the same directory
    /// that the variable does not move).
    fn found_through(&self, check: &Relocation, home: &Path) -> BTreeSet<PathBuf> {
        if !check.from.exists() {
            return BTreeSet::new();
        }
        let rel = check.from.strip_prefix(home).unwrap_or(Path::new(""));
        let alone = tempfile::tempdir().expect("temporary directory");
        let alone_from = alone.path().join(rel);
        let _writers = materialize_home(&check.from, &alone_from).expect("copy the store");
        let moved: Vec<PathBuf> =
            check.moved.iter().map(|m| alone_from.join(m.strip_prefix(&check.from).unwrap_or(Path::new("")))).collect();
        let found = |env: &StoreEnv| -> BTreeSet<PathBuf> {
            self.format
                .discover(env)
                .sources
                .iter()
                .filter(|s| moved.iter().any(|m| s.path.starts_with(m)))
                .filter_map(|s| s.path.strip_prefix(&alone_from).ok().map(Path::to_path_buf))
                .collect()
        };
        let env = StoreEnv::with_home(alone.path());
        if !check.derived {
            return found(&env);
        }
        let nowhere = alone.path().join("deja-kit-nowhere");
        std::fs::create_dir_all(&nowhere).expect("mkdir");
        let without = found(&env.clone().set(&check.var, nowhere.display().to_string()));
        found(&env).difference(&without).cloned().collect()
    }

    /// A session written by the synthetic writer comes back through discovery and parsing.
    pub fn check_synthetic_round_trip(&self) {
        let Some(writer) = self.format.synthetic() else {
            // The adapter has no synthetic writer; the demo and benchmarks skip it.
            return;
        };
        let tmp = tempfile::tempdir().expect("temporary directory");
        let session = sample_session();
        writer.write(tmp.path(), &session).unwrap_or_else(|e| panic!("{}: writing a synthetic session: {e}", self.id()));
        let mut parsed: Vec<Session> = Vec::new();
        for src in self.format.discover(&StoreEnv::with_home(tmp.path())).sources {
            parsed.extend(self.parse(&src, &ParseOptions::default()).0);
        }
        let texts: Vec<&str> = parsed.iter().flat_map(|s| s.turns.iter().map(|t| t.text.as_str())).collect();
        for turn in &session.turns {
            if let SynthTurn::User { text, .. } | SynthTurn::Assistant { text, .. } = turn {
                assert!(texts.iter().any(|t| t.contains(text.as_str())), "{}: `{text}` did not come back", self.id());
            }
        }
        let calls: Vec<_> = parsed.iter().flat_map(|s| &s.turns).filter(|t| t.role == Role::ToolCall).collect();
        if !calls.is_empty() {
            assert!(
                calls.iter().any(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("cargo test -p billing")),
                "{}: the shell command did not come back",
                self.id()
            );
        }
    }
}

impl Kit {
    /// Where the adapter has a restore writer, every fixture session it takes (in a home
    /// of its own, so the target path is the writer's) is rendered and read back through
    /// the adapter's parser with the same turns: roles, texts, tool calls with their
    /// results and exit status, files and edits, in order — those the writer says it
    /// leaves out aside. A target must lie under the home; the rendered file must parse.
    pub fn check_restore_round_trip(&self) {
        let Some(writer) = self.format.restorer() else { return };
        let target_home = tempfile::tempdir().expect("temporary directory");
        let env = StoreEnv::with_home(target_home.path());
        let mut checked = 0;
        for s in self.sessions(|p| StoreEnv::with_home(p), &ParseOptions::default()) {
            let mut meta = crate::tail::whole_meta(&s, &s.source.manifest_key());
            // As if read on another machine: the target comes from the store spec.
            meta.machine = Some("elsewhere".into());
            let Ok(path) = writer.target(&meta, &meta.id, &env) else { continue };
            assert!(path.starts_with(target_home.path()), "{}: {} restores outside the home: {}", self.id(), meta.id, path.display());
            let rendered = writer.render(&meta, &meta.id, &s.turns).unwrap_or_else(|e| panic!("{}: rendering {}: {e}", self.id(), meta.id));
            let left: BTreeSet<u32> = rendered.left_out.iter().map(|(seq, _)| *seq).collect();
            let kept: Vec<&crate::model::Turn> = s.turns.iter().filter(|t| !left.contains(&t.seq)).collect();
            if let Err(diff) = crate::format::read_back(self.format, &path, &meta.id, &rendered.bytes, &kept) {
                panic!("{}: session {} does not round-trip: {diff}", self.id(), meta.id);
            }
            checked += 1;
        }
        assert!(checked > 0, "{}: a restore writer, but no fixture session it takes", self.id());
    }
}

/// One store-override check: `var` set to a copy of `from` should find there the
/// fixture sources under `moved`, and only those.
struct Relocation {
    var: String,
    from: PathBuf,
    moved: Vec<PathBuf>,
    /// Fail when no fixture source lies under `moved` (the sessions root, and every
    /// relocation listed by hand), rather than skip.
    required: bool,
    /// Derived from the spec: count only what the variable accounts for (see
    /// [`Kit::found_through`]). A relocation listed by hand says itself what moves.
    derived: bool,
}

/// The relocations a declared spec implies (see [`Kit::check_store_overrides`]).
fn derived_relocations(id: &str, spec: &crate::store::StoreSpec, home: &Path, baseline: &[SourceRef]) -> Vec<Relocation> {
    use crate::store::{default_level, names_var};
    let env = StoreEnv::with_home(home);
    let has_sources = |dir: &Path| baseline.iter().any(|s| s.path.starts_with(dir));
    let with_aliases = |var: String| -> Vec<String> {
        let old = spec.aliases.iter().filter(|(_, now)| *now == var).map(|(old, _)| old.to_string()).collect::<Vec<_>>();
        std::iter::once(var).chain(old).collect()
    };
    let mut out = Vec::new();
    for store in spec.stores {
        let prefix = store.prefix(id);
        let roots: Vec<PathBuf> = spec.roots(id, store, &env);
        let used: Vec<&PathBuf> = roots.iter().filter(|r| has_sources(r)).collect();
        let required = store.name.is_empty();
        if used.is_empty() && required {
            out.push(Relocation {
                var: format!("{prefix}_ROOT"),
                from: roots.first().cloned().unwrap_or_default(),
                moved: roots.clone(),
                required,
                derived: true,
            });
        }
        for root in &used {
            for var in with_aliases(format!("{prefix}_ROOT")).into_iter().chain(with_aliases(format!("{prefix}_ROOTS"))) {
                out.push(Relocation { var, from: root.to_path_buf(), moved: vec![root.to_path_buf()], required, derived: true });
            }
            if let (Some(file), Some(db_var)) = (store.database(), spec.db_var(id, store)) {
                for var in with_aliases(db_var) {
                    out.push(Relocation { var, from: root.to_path_buf(), moved: vec![root.join(file)], required, derived: true });
                }
            }
        }
    }
    let mut vars: Vec<&str> = Vec::new();
    for root in spec.stores.iter().flat_map(|s| s.os_roots()) {
        for var in spec.env_vars() {
            if names_var(root.path, var) && !vars.contains(&var) {
                vars.push(var);
            }
        }
    }
    for var in vars {
        let template = spec.stores.iter().flat_map(|s| s.os_roots()).map(|r| r.path).find(|t| names_var(t, var));
        let Some(from) = template.and_then(|t| default_level(t, var, home)) else { continue };
        // Everything under the level moves: a walk may read beside its root (an archive
        // next to the sessions directory).
        out.push(Relocation { var: var.to_string(), from: from.clone(), moved: vec![from], required: false, derived: true });
    }
    out
}

/// The source's path (and key) relative to the home, for names and reports.
fn rel_name(home: &Path, src: &SourceRef) -> String {
    let rel = src.path.strip_prefix(home).unwrap_or(&src.path).display().to_string();
    match &src.key {
        Some(k) => format!("{rel}#{k}"),
        None => rel,
    }
}

/// A snapshot file stem from a relative source name: path separators as `__`, anything
/// outside `[A-Za-z0-9_-]` as `_`.
fn snapshot_stem(rel: &str) -> String {
    rel.replace(['/', '\\'], "__").chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

/// Replaces the temporary home in every string with `~`, so snapshots match anywhere.
fn scrub(v: &mut Value, home: &str) {
    match v {
        Value::String(s) if s.contains(home) => *s = s.replace(home, "~"),
        Value::Array(items) => items.iter_mut().for_each(|i| scrub(i, home)),
        Value::Object(map) => map.values_mut().for_each(|i| scrub(i, home)),
        _ => {}
    }
}

/// Discovers `format`'s sources in `env` and parses every one, in discovery order; a
/// source that fails to parse fails the test, naming it. The one loop adapter tests use
/// to read their fixtures.
pub fn read_all(format: &dyn HarnessFormat, env: &StoreEnv, opts: &ParseOptions) -> Vec<Session> {
    let mut out = Vec::new();
    for src in format.discover(env).sources {
        if let Err(e) = format.parse(&src, opts, &mut out) {
            panic!("{}: {} does not parse: {e}", format.info().id, src.path.display());
        }
    }
    out
}

/// [`read_all`] for a fixture home that plants sources which must fail to parse (a
/// torn document, a file that is not the format): what the readable ones give.
pub fn read_readable(format: &dyn HarnessFormat, env: &StoreEnv, opts: &ParseOptions) -> Vec<Session> {
    let mut out = Vec::new();
    for src in format.discover(env).sources {
        // An error is the planted source's; the test asserts on the sessions, not on it.
        let _ = format.parse(&src, opts, &mut out);
    }
    out
}

/// Every session `format` reads in the home directory `home` (only `HOME` set), with the
/// default options: what most adapter tests start from.
pub fn sessions(format: &dyn HarnessFormat, home: &Path) -> Vec<Session> {
    read_all(format, &StoreEnv::with_home(home), &ParseOptions::default())
}

/// The session of this id among `all`; a test fails naming the id (and the ids there)
/// when there is none.
pub fn session<'a>(all: &'a [Session], id: &str) -> &'a Session {
    all.iter().find(|s| s.id == id).unwrap_or_else(|| {
        let ids: Vec<&str> = all.iter().map(|s| s.id.as_str()).collect();
        panic!("no session {id} among {ids:?}")
    })
}

/// The checked-in fixture home of the crate the test is in, `tests/fixtures/home/`.
#[macro_export]
macro_rules! fixture_home {
    () => {
        ::std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/home")
    };
}

/// Every file under `dir` with its length, mtime and xxh3 of its bytes.
fn tree_state(dir: &Path) -> std::collections::BTreeMap<PathBuf, (u64, Option<std::time::SystemTime>, u64)> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(t) if t.is_file() => {
                    let meta = entry.metadata().ok();
                    let bytes = std::fs::read(&path).unwrap_or_default();
                    let state = (bytes.len() as u64, meta.and_then(|m| m.modified().ok()), xxhash_rust::xxh3::xxh3_64(&bytes));
                    out.insert(path, state);
                }
                _ => {}
            }
        }
    }
    out
}

/// The session the round trip writes: a prompt, a shell command, an answer.
pub fn sample_session() -> SynthSession {
    let t0 = Timestamp::parse_str("2026-03-02T10:00:00Z").unwrap_or(Timestamp(1_772_445_600_000));
    let at = |s: i64| Timestamp(t0.0 + s * 1000);
    SynthSession {
        id: "0b1c2d3e-4f50-4a61-8b72-93a4b5c6d7e8".to_string(),
        project: "/src/billing".to_string(),
        title: None,
        started: t0,
        turns: vec![
            SynthTurn::User { text: "why does the invoice rounding test fail?".to_string(), time: at(0) },
            SynthTurn::Shell {
                command: "cargo test -p billing".to_string(),
                output: "test rounding ... FAILED".to_string(),
                exit_code: 101,
                time: at(2),
            },
            SynthTurn::Assistant { text: "The rounding mode was half-even; it should be half-up.".to_string(), time: at(4) },
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_stems_are_file_names() {
        assert_eq!(snapshot_stem(".claude/projects/-a-b/x.jsonl"), "_claude__projects__-a-b__x_jsonl");
    }

    #[test]
    fn sql_fixtures_keep_their_rows_in_a_live_wal() {
        let tmp = tempfile::tempdir().expect("tmp");
        let from = tmp.path().join("from");
        std::fs::create_dir_all(from.join("data")).expect("mkdir");
        std::fs::write(from.join("data/app.db.sql"), "CREATE TABLE t(x BLOB); INSERT INTO t VALUES (zstd('hello'));").expect("sql");
        let to = tmp.path().join("to");
        let writers = materialize_home(&from, &to).expect("materialize");
        assert_eq!(writers.len(), 1);
        let wal = std::fs::metadata(to.join("data/app.db-wal")).expect("a live WAL");
        assert!(wal.len() > 0);
        let blob: Vec<u8> = writers[0].query_row("SELECT x FROM t", [], |r| r.get(0)).expect("row");
        assert_eq!(zstd::decode_all(&blob[..]).expect("zstd"), b"hello");
    }

    #[test]
    fn a_fixture_names_a_family_schema_once() {
        let tmp = tempfile::tempdir().expect("tmp");
        let conn = sqlite_fixture(&tmp.path().join("oc.db"), "-- schema: opencode\nINSERT INTO message VALUES ('m', 's', 1, 1, '{}');")
            .expect("the schema is included");
        let n: i64 = conn.query_row("SELECT count(*) FROM message", [], |r| r.get(0)).expect("count");
        assert_eq!(n, 1);
        assert!(sqlite_fixture(&tmp.path().join("x.db"), "-- schema: nothing").is_err(), "an unknown schema is named");
    }

    #[test]
    fn a_reader_that_opens_the_database_in_place_is_caught() {
        let tmp = tempfile::tempdir().expect("tmp");
        let from = tmp.path().join("from");
        std::fs::create_dir_all(from.join("data")).expect("mkdir");
        std::fs::write(from.join("data/app.db.sql"), "CREATE TABLE t(x); INSERT INTO t VALUES (1);").expect("sql");
        let to = tmp.path().join("to");
        let _writers = materialize_home(&from, &to).expect("materialize");
        let before = tree_state(&to);
        assert_eq!(before, tree_state(&to), "stable when nothing happens");
        // What a careless reader does: open the live database and checkpoint its WAL.
        let careless = rusqlite::Connection::open(to.join("data/app.db")).expect("open");
        careless.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).expect("checkpoint");
        assert_ne!(before, tree_state(&to), "the checkpoint rewrote the database and its WAL");
    }
}

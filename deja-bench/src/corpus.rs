//! `deja bench corpus`: writes a deterministic multi-harness home of a chosen size for
//! the index and search benchmarks, and grows it (appends realistic records to some of
//! its append-only logs) for the incremental-indexing measurement.
//!
//! Layout of a corpus directory:
//! - `home/` — a home directory holding every registered harness's store, each session
//!   written by that adapter's own `write_synthetic` (so in its real on-disk format);
//! - `corpus.json` — the manifest: seed, sizes, one row per file (which session `k`,
//!   harness and id it holds, whether discovery treats it as append-only) and the
//!   planted needles with the session that holds each.
//!
//! Session `k` is session `k` of [`Generator`] for the corpus's seed, written for
//! harness `harness_slot(k)`; sessions are written until the home holds the requested
//! number of bytes. Same seed, same size, same adapters → the same files.

use std::collections::{BTreeMap, HashMap};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use deja_core::{HarnessFormat, StoreEnv};
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};

use super::gen::{Generator, Profile};
use super::stats::{cores, parallel_for};
use super::vocab::Rng;

pub const MANIFEST: &str = "corpus.json";
/// A store that keeps every entry in one file gets one entry per this many sessions…
const SHARED_STORE_EVERY: usize = 200;
/// …of at most this many turns.
const SHARED_STORE_TURNS: usize = 6;
const STREAM_GROW_PICK: u64 = 7;

#[derive(Args)]
pub struct CorpusArgs {
    /// Directory to write the corpus into (`DIR/home`, `DIR/corpus.json`).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Bytes of history to write: `200MB`, `1GB`, `50MB`, … (decimal units).
    #[arg(long, default_value = "200MB")]
    pub size: String,
    /// Seed: the same seed and size give the same corpus.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The shape of the sessions: `realistic` (log-normal turns, long tool outputs,
    /// many one-off identifiers; the default) or `classic` (the first profile's short,
    /// uniform turns, for figures comparable with earlier ones).
    #[arg(long, value_enum, default_value_t = Profile::Realistic)]
    pub profile: Profile,
    /// Write only these harnesses' formats (comma-separated ids, e.g.
    /// `claude,codex,deepseek`); default: every adapter that can write sessions.
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    pub harnesses: Vec<String>,
    /// Replace a corpus already in DIR.
    #[arg(long)]
    pub force: bool,
    /// Print the manifest summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// One file of the corpus.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileRow {
    /// The generator's session number.
    pub k: u64,
    pub harness: String,
    pub session_id: String,
    /// Relative to the corpus's `home/`.
    pub path: PathBuf,
    pub bytes: u64,
    pub turns: usize,
    /// Discovery treats it as an append-only log (so growth is read from the tail).
    pub append_only: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NeedleRow {
    pub k: u64,
    pub harness: String,
    pub session_id: String,
    pub path: PathBuf,
    pub fact: String,
    pub keyword_query: String,
    pub question: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct HarnessTotals {
    pub sessions: u64,
    pub bytes: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CorpusManifest {
    pub schema_version: u32,
    pub seed: u64,
    /// Corpora written before profiles existed are classic.
    #[serde(default = "classic")]
    pub profile: Profile,
    pub target_bytes: u64,
    /// Bytes on disk under `home/`, sidecar files a writer keeps beside a transcript
    /// (Cowork's metadata, Factory's settings) included.
    pub bytes: u64,
    pub sessions: u64,
    pub turns: u64,
    pub generated_in_s: f64,
    pub harnesses: BTreeMap<String, HarnessTotals>,
    pub needles: Vec<NeedleRow>,
    pub files: Vec<FileRow>,
}

fn classic() -> Profile {
    Profile::Classic
}

/// A corpus on disk.
pub struct Corpus {
    pub dir: PathBuf,
    pub manifest: CorpusManifest,
}

impl Corpus {
    pub fn open(dir: &Path) -> Result<Corpus> {
        let path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {} — create a corpus with `deja bench corpus --out {}`", path.display(), dir.display()))?;
        let manifest: CorpusManifest = serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        Ok(Corpus { dir: dir.to_path_buf(), manifest })
    }

    /// The environment benchmarks index the corpus in: its home, with deja's archive
    /// and tombstones beside the index at `index` rather than inside the corpus, so a
    /// cold run starts with no archive and the corpus stays as generated. The corpus's
    /// notes are still read from its home.
    pub fn env(&self, index: &std::path::Path) -> deja_core::StoreEnv {
        let home = self.home();
        let notes = deja_core::StoreEnv::with_home(&home).data_dir();
        deja_core::StoreEnv::with_home(&home)
            .set("DEJA_DATA_DIR", archive_dir_of(index).to_string_lossy())
            .set("DEJA_DEJA_ROOT", notes.to_string_lossy())
    }

    /// A `deja` process (the binary [`crate::deja_bin`] names) that sees what
    /// [`Corpus::env`] gives the index at `index`, and nothing of the caller's
    /// environment but `PATH`.
    pub fn deja_command(&self, index: &Path) -> Result<std::process::Command> {
        let mut cmd = std::process::Command::new(crate::deja_bin());
        cmd.env_clear()
            .env("HOME", self.home())
            .env("DEJA_INDEX_DIR", index)
            .env("DEJA_DATA_DIR", archive_dir_of(index))
            .env("DEJA_DEJA_ROOT", StoreEnv::with_home(self.home()).data_dir())
            .env("PATH", std::env::var_os("PATH").unwrap_or_default());
        Ok(cmd)
    }

    pub fn home(&self) -> PathBuf {
        self.dir.join("home")
    }

    pub fn generator(&self) -> Generator {
        Generator::with_profile(self.manifest.seed, self.manifest.profile)
    }

    /// One line naming the corpus, for reports.
    pub fn describe(&self) -> String {
        let m = &self.manifest;
        let per: Vec<String> = m.harnesses.iter().map(|(id, t)| format!("{id} {}", t.sessions)).collect();
        format!(
            "{} in {} sessions ({}), {} turns, {} profile, seed {}, at {}",
            super::stats::bytes(m.bytes),
            m.sessions,
            per.join(", "),
            m.turns,
            match m.profile {
                Profile::Realistic => "realistic",
                Profile::Classic => "classic",
            },
            m.seed,
            self.dir.display()
        )
    }
}

/// Parses `200MB`, `1GB`, `1.5GB`, `800KB`, `1000000` (decimal units).
pub fn parse_size(s: &str) -> Result<u64> {
    let t = s.trim().to_ascii_uppercase();
    let (num, mult) = if let Some(n) = t.strip_suffix("GB") {
        (n, 1e9)
    } else if let Some(n) = t.strip_suffix("MB") {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix("KB") {
        (n, 1e3)
    } else {
        (t.strip_suffix('B').unwrap_or(&t), 1.0)
    };
    let v: f64 = num.trim().parse().with_context(|| format!("--size {s}: expected a size like 200MB or 1GB"))?;
    if v.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        bail!("--size {s}: must be more than zero");
    }
    Ok((v * mult) as u64)
}

pub fn run(args: CorpusArgs) -> Result<ExitCode> {
    let target = parse_size(&args.size)?;
    if args.out.join(MANIFEST).exists() || args.out.join("home").exists() {
        if !args.force {
            bail!("{} already holds a corpus; pass --force to replace it", args.out.display());
        }
        let _ = std::fs::remove_file(args.out.join(MANIFEST));
        let home = args.out.join("home");
        if home.exists() {
            std::fs::remove_dir_all(&home).with_context(|| format!("removing {}", home.display()))?;
        }
    }
    let manifest = generate(&args.out, target, args.seed, args.profile, &args.harnesses, !args.json)?;
    if args.json {
        let mut summary = serde_json::to_value(&manifest)?;
        if let Some(o) = summary.as_object_mut() {
            o.remove("files");
            o.insert("dir".into(), serde_json::json!(args.out));
        }
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        let corpus = Corpus { dir: args.out.clone(), manifest };
        println!("wrote {}", corpus.describe());
        println!(
            "{} needles (see {}); generated in {:.1}s ({:.0} MB/s)",
            corpus.manifest.needles.len(),
            args.out.join(MANIFEST).display(),
            corpus.manifest.generated_in_s,
            corpus.manifest.bytes as f64 / 1e6 / corpus.manifest.generated_in_s.max(1e-9)
        );
        println!("next: deja bench index --corpus {}", args.out.display());
    }
    Ok(ExitCode::SUCCESS)
}

struct Written {
    k: u64,
    adapter: usize,
    session_id: String,
    path: PathBuf,
    bytes: u64,
    turns: usize,
}

/// Writes the corpus into `out` and returns its manifest (also saved as `corpus.json`).
pub fn generate(out: &Path, target: u64, seed: u64, profile: Profile, only: &[String], progress: bool) -> Result<CorpusManifest> {
    let started = Instant::now();
    let mut adapters: Vec<&'static dyn HarnessFormat> = deja_core::format::synthetic_registry();
    if !only.is_empty() {
        if let Some(unknown) = only.iter().find(|id| !adapters.iter().any(|a| a.info().id == id.as_str())) {
            let known: Vec<&str> = adapters.iter().map(|a| a.info().id).collect();
            bail!("--harnesses: no adapter `{unknown}` writes synthetic sessions (these do: {})", known.join(", "));
        }
        adapters.retain(|a| only.iter().any(|id| id == a.info().id));
    }
    let home = out.join("home");
    std::fs::create_dir_all(&home).with_context(|| format!("creating {}", home.display()))?;
    let (per_session, shared) = store_kinds(&adapters, seed)?;
    if per_session.is_empty() {
        bail!("none of the chosen adapters writes one file per session");
    }
    let generator = Generator::with_profile(seed, profile);
    let written_bytes = AtomicU64::new(0);
    let next_k = AtomicU64::new(0);
    let rows: Mutex<Vec<Written>> = Mutex::new(Vec::new());
    let error: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    let bar = (progress && std::io::stderr().is_terminal()).then(|| {
        let b = ProgressBar::new(target);
        b.set_style(
            ProgressStyle::with_template("writing corpus [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        b
    });
    let stop = || written_bytes.load(Ordering::Relaxed) >= target || error.lock().map_or(true, |e| e.is_some());
    // Every k handed out is written in full, so the rows are always 0..=max.
    parallel_for(usize::MAX, cores(), &stop, &|_| {
        let k = next_k.fetch_add(1, Ordering::Relaxed);
        let adapter = per_session[generator.harness_slot(k, per_session.len())];
        let session = generator.session(k);
        let result = adapters[adapter].write_synthetic(&home, &session).with_context(|| format!("writing session {k}"));
        match result.and_then(|p| Ok((std::fs::metadata(&p).with_context(|| format!("{}", p.display()))?.len(), p))) {
            Ok((bytes, path)) => {
                written_bytes.fetch_add(bytes, Ordering::Relaxed);
                if let Some(b) = &bar {
                    b.inc(bytes);
                }
                let row = Written { k, adapter, session_id: session.id.clone(), path, bytes, turns: session.turns.len() };
                if let Ok(mut r) = rows.lock() {
                    r.push(row);
                }
            }
            Err(e) => {
                if let Ok(mut slot) = error.lock() {
                    slot.get_or_insert(e);
                }
            }
        }
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    if let Some(e) = error.into_inner().ok().flatten() {
        return Err(e);
    }
    let mut rows = rows.into_inner().map_err(|_| anyhow::anyhow!("a writer thread panicked"))?;
    rows.sort_by_key(|r| r.k);
    // Keep the shortest prefix of sessions that reaches the target, so the corpus does
    // not depend on how the threads raced.
    let mut total = 0u64;
    let keep = rows
        .iter()
        .position(|r| {
            total += r.bytes;
            total >= target
        })
        .map_or(rows.len(), |i| i + 1);
    for extra in rows.drain(keep..) {
        std::fs::remove_file(&extra.path).with_context(|| format!("removing {}", extra.path.display()))?;
        if let Some(parent) = extra.path.parent() {
            let _ = std::fs::remove_dir(parent);
        }
    }

    // Stores that keep every entry in one file (e.g. deja's own notes) get a few short
    // entries, written one after another after the per-session files.
    let mut k = rows.last().map_or(0, |r| r.k + 1);
    for &adapter in &shared {
        for _ in 0..(rows.len() / SHARED_STORE_EVERY).max(1) {
            let mut session = generator.session(k);
            session.turns.truncate(SHARED_STORE_TURNS);
            let path = adapters[adapter].write_synthetic(&home, &session).with_context(|| format!("writing session {k}"))?;
            let before: u64 = rows.iter().filter(|r| r.path == path).map(|r| r.bytes).sum();
            let bytes = std::fs::metadata(&path).with_context(|| format!("{}", path.display()))?.len().saturating_sub(before);
            rows.push(Written { k, adapter, session_id: session.id.clone(), path, bytes, turns: session.turns.len() });
            k += 1;
        }
    }

    let env = StoreEnv::with_home(&home);
    let mut append_only: HashMap<PathBuf, bool> = HashMap::new();
    for a in &adapters {
        for src in a.discover(&env).sources {
            // A file read as another source's part (vs-copilot reads its whole traces
            // directory as one source) was found too.
            for part in &src.parts {
                append_only.insert(part.clone(), src.append_only);
            }
            append_only.insert(src.path, src.append_only);
        }
    }
    let mut manifest = CorpusManifest {
        schema_version: 1,
        seed,
        profile,
        target_bytes: target,
        bytes: 0,
        sessions: rows.len() as u64,
        turns: 0,
        generated_in_s: 0.0,
        harnesses: BTreeMap::new(),
        needles: Vec::new(),
        files: Vec::with_capacity(rows.len()),
    };
    for r in rows {
        let id = adapters[r.adapter].info().id.to_string();
        let Some(&is_append_only) = append_only.get(&r.path) else {
            bail!("the {id} adapter's discovery does not find the file its writer wrote: {}", r.path.display());
        };
        let rel = r.path.strip_prefix(&home).unwrap_or(&r.path).to_path_buf();
        if let Some(n) = generator.needle(r.k) {
            manifest.needles.push(NeedleRow {
                k: r.k,
                harness: id.clone(),
                session_id: r.session_id.clone(),
                path: rel.clone(),
                fact: n.fact(),
                keyword_query: n.keyword_query(),
                question: n.question(),
            });
        }
        manifest.bytes += r.bytes;
        manifest.turns += r.turns as u64;
        let t = manifest.harnesses.entry(id.clone()).or_default();
        t.sessions += 1;
        t.bytes += r.bytes;
        manifest.files.push(FileRow {
            k: r.k,
            harness: id,
            session_id: r.session_id,
            path: rel,
            bytes: r.bytes,
            turns: r.turns,
            append_only: is_append_only,
        });
    }
    // Some writers keep a sidecar beside the transcript they return; the corpus's size
    // is what is on disk.
    manifest.bytes = crate::report::dir_size(&home);
    manifest.generated_in_s = started.elapsed().as_secs_f64();
    let path = out.join(MANIFEST);
    let mut w = std::io::BufWriter::new(std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?);
    serde_json::to_writer(&mut w, &manifest)?;
    w.flush()?;
    Ok(manifest)
}

/// Splits the adapters into those that write one file per session and those that keep
/// every session in one shared file, by writing two sessions with each into a scratch
/// home and comparing the paths.
fn store_kinds(adapters: &[&'static dyn HarnessFormat], seed: u64) -> Result<(Vec<usize>, Vec<usize>)> {
    let scratch = tempfile::tempdir().context("creating a scratch directory")?;
    let generator = Generator::new(seed);
    let (mut per_session, mut shared) = (Vec::new(), Vec::new());
    for (i, a) in adapters.iter().enumerate() {
        let home = scratch.path().join(a.info().id);
        let mut paths = Vec::new();
        for k in 0..2 {
            let mut s = generator.session(k);
            s.turns.truncate(SHARED_STORE_TURNS);
            paths.push(a.write_synthetic(&home, &s).with_context(|| format!("probing the {} writer", a.info().id))?);
        }
        if paths[0] == paths[1] {
            shared.push(i);
        } else {
            per_session.push(i);
        }
    }
    Ok((per_session, shared))
}

/// A file grown by [`grow`], with its length before.
pub struct Grown {
    pub path: PathBuf,
    pub before: u64,
    pub appended: u64,
}

/// Appends a new exchange (prompt, work, answer — in the file's own format) to
/// `fraction` of the corpus's files, choosing among the append-only ones. The records
/// are what the adapter's writer produces for the session with the exchange added,
/// past the lines the file already has.
pub fn grow(corpus: &Corpus, fraction: f64, round: u64) -> Result<Vec<Grown>> {
    let want = ((corpus.manifest.files.len() as f64 * fraction).ceil() as usize).max(1);
    let generator = corpus.generator();
    let scratch = tempfile::tempdir_in(&corpus.dir).context("creating a scratch directory in the corpus")?;
    let mut grown = Vec::with_capacity(want);
    for row in growable(corpus, round)?.into_iter().take(want) {
        let session = generator.session(row.k);
        let more = generator.growth(&session, row.k, round);
        grown.extend(append_turns(corpus, &generator, row, more, scratch.path())?);
    }
    Ok(grown)
}

/// The append-only files that hold one whole session, in an order drawn from `round`.
pub fn growable(corpus: &Corpus, round: u64) -> Result<Vec<&FileRow>> {
    let files = &corpus.manifest.files;
    let mut sessions_in: HashMap<&Path, usize> = HashMap::new();
    for f in files {
        *sessions_in.entry(&f.path).or_insert(0) += 1;
    }
    // Only files of one session: a grown session is re-rendered to find its new records.
    let mut candidates: Vec<(u64, &FileRow)> = files
        .iter()
        .filter(|f| f.append_only && sessions_in[f.path.as_path()] == 1)
        .map(|f| (Rng::derive(corpus.manifest.seed, STREAM_GROW_PICK ^ round, f.k).next_u64(), f))
        .collect();
    if candidates.is_empty() {
        bail!("the corpus has no append-only files to grow");
    }
    candidates.sort_by_key(|c| c.0);
    Ok(candidates.into_iter().map(|(_, f)| f).collect())
}

/// Appends `more` turns to the session in `row`'s file, as the records its harness's
/// writer produces for them (rendered whole in `scratch`, then the new lines taken).
/// `None` when the writer added no whole line.
/// `generator` is the corpus's ([`Corpus::generator`]), built once by the caller.
pub fn append_turns(
    corpus: &Corpus,
    generator: &Generator,
    row: &FileRow,
    more: Vec<deja_core::SynthTurn>,
    scratch: &Path,
) -> Result<Option<Grown>> {
    let adapter = deja_core::lookup(&row.harness).with_context(|| format!("adapter {} is not linked", row.harness))?;
    let mut session = generator.session(row.k);
    session.turns.extend(more);
    let home = scratch.join(format!("render-{}", row.k));
    let longer_path = adapter.write_synthetic(&home, &session).context("writing the grown session")?;
    let longer = std::fs::read(&longer_path).with_context(|| format!("reading {}", longer_path.display()))?;
    let _ = std::fs::remove_dir_all(&home);
    let path = corpus.home().join(&row.path);
    let current = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
    let tail = new_lines(&current, &longer);
    if tail.is_empty() {
        return Ok(None);
    }
    let mut f = std::fs::OpenOptions::new().append(true).open(&path).with_context(|| format!("opening {}", path.display()))?;
    f.write_all(tail).with_context(|| format!("appending to {}", path.display()))?;
    Ok(Some(Grown { path, before: current.len() as u64, appended: tail.len() as u64 }))
}

/// Truncates grown files back to their length before, so the corpus is as generated.
pub fn restore(grown: &[Grown]) -> Result<()> {
    for g in grown {
        let f = std::fs::OpenOptions::new().write(true).open(&g.path).with_context(|| format!("opening {}", g.path.display()))?;
        f.set_len(g.before).with_context(|| format!("truncating {}", g.path.display()))?;
    }
    Ok(())
}

/// The lines of `longer` past the longest run of whole lines it shares with `current`.
fn new_lines<'a>(current: &[u8], longer: &'a [u8]) -> &'a [u8] {
    let mut shared = 0;
    let mut i = 0;
    while i < current.len() && i < longer.len() && current[i] == longer[i] {
        if current[i] == b'\n' {
            shared = i + 1;
        }
        i += 1;
    }
    &longer[shared..]
}

/// Where a benchmark keeps deja's data (the archive) for the index at `index`.
pub fn archive_dir_of(index: &std::path::Path) -> PathBuf {
    let name = index.file_name().map_or_else(|| "index".into(), |n| n.to_string_lossy().into_owned());
    index.with_file_name(format!("{name}-data"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_decimal_units() {
        assert_eq!(parse_size("200MB").unwrap(), 200_000_000);
        assert_eq!(parse_size("1GB").unwrap(), 1_000_000_000);
        assert_eq!(parse_size("1.5gb").unwrap(), 1_500_000_000);
        assert_eq!(parse_size("800 KB").unwrap(), 800_000);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert!(parse_size("lots").is_err());
        assert!(parse_size("0MB").is_err());
    }

    #[test]
    fn new_lines_starts_after_the_shared_whole_lines() {
        assert_eq!(new_lines(b"a\nb\nend\n", b"a\nb\nc\nd\nend2\n"), b"c\nd\nend2\n");
        assert_eq!(new_lines(b"a\n", b"a\nb\n"), b"b\n");
        assert_eq!(new_lines(b"", b"x\n"), b"x\n");
    }

    #[test]
    fn a_small_corpus_is_deterministic_complete_and_grows() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        // Large enough for a session of every registered writer (they take turns).
        let ma = generate(&a, 2_000_000, 3, Profile::Classic, &[], false).unwrap();
        let mb = generate(&b, 2_000_000, 3, Profile::Classic, &[], false).unwrap();
        assert!(ma.bytes >= 2_000_000);
        assert_eq!(ma.sessions, mb.sessions);
        for (fa, fb) in ma.files.iter().zip(&mb.files) {
            assert_eq!(fa.path, fb.path);
            assert_eq!(std::fs::read(a.join("home").join(&fa.path)).unwrap(), std::fs::read(b.join("home").join(&fb.path)).unwrap());
        }
        // Every registered store gets sessions, and nothing beyond the manifest is on disk.
        assert_eq!(ma.harnesses.len(), deja_core::format::synthetic_registry().len());
        let on_disk = crate::report::dir_size(&a.join("home"));
        assert_eq!(on_disk, ma.bytes);

        let corpus = Corpus::open(&a).unwrap();
        let grown = grow(&corpus, 0.2, 1).unwrap();
        assert!(!grown.is_empty());
        for g in &grown {
            assert_eq!(std::fs::metadata(&g.path).unwrap().len(), g.before + g.appended);
        }
        restore(&grown).unwrap();
        assert_eq!(crate::report::dir_size(&a.join("home")), ma.bytes);
    }
}

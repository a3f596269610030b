//! Team memory's engine-independent half (DESIGN §10, `docs/team-memory.md`): which
//! project a session belongs to across machines, what a push would send, the
//! fail-closed secret gate, and the push cursor kept beside the archive. The PostgreSQL
//! client that sends it is the `deja-team` crate; nothing here names an engine.
//!
//! - **Project keys.** A project is one project across machines when its normalized
//!   git remote is the same: `git@github.com:Org/App.git`, `ssh://git@github.com/Org/App`
//!   and `https://github.com/Org/App/` are all `github.com/Org/App` (the host lower-cased,
//!   the path kept: hosts are case-insensitive, paths are not everywhere). A directory
//!   with no remote is keyed by its path.
//! - **The cursor.** The archive is the log: segments are numbered in the order they
//!   are written, and compaction and `deja forget` write their result as a new,
//!   higher-numbered segment. A push reads only the segments from its cursor on, and
//!   for each session they touch compares a digest of what it would send with the one
//!   it sent last time, so a compaction that rewrites everything costs a read, not a
//!   resend. The state is saved only after the server committed, so a kill at any
//!   point repeats at most one batch, which the server replaces rather than doubles.
//! - **The gate.** Every turn is redacted again on the way out; then a turn that still
//!   matches a detector (a second redaction pass that changes anything, or a long
//!   high-entropy token no rule names) is held back: never sent, listed by
//!   `deja team status`. Redaction replaces what it recognizes; the gate refuses what
//!   it cannot vouch for.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::archive::{Archive, ArchiveError, ArchivedSession, Line};
use crate::config::TeamSettings;
use crate::model::{SessionMeta, Turn};
use crate::redact::Redact;
use crate::StoreEnv;

/// The version of the state file; a newer one is refused rather than misread.
const STATE_VERSION: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum TeamError {
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    #[error("{path}: {reason}")]
    State { path: PathBuf, reason: String },
}

// ------------------------------------------------------------------ project keys

/// A git remote URL in one spelling: `host/path`, the host lower-cased, without the
/// scheme, user, port, `.git` and trailing slashes. `None` when `url` is no remote
/// (a local path, an empty string).
pub fn normalize_remote(url: &str) -> Option<String> {
    let url = url.trim();
    if url.is_empty() {
        return None;
    }
    let (host, path) = if let Some((scheme, rest)) = url.split_once("://") {
        if scheme.eq_ignore_ascii_case("file") {
            return None;
        }
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        // A port is not part of the project (ssh on 22 and https on 443 are one repo).
        let host = match host.rsplit_once(':') {
            Some((h, port)) if port.bytes().all(|b| b.is_ascii_digit()) => h,
            _ => host,
        };
        (host, path)
    } else {
        // scp-like `user@host:path`; a path with a colon in it (`C:\x`, `./a:b`) is no remote.
        let (left, path) = url.split_once(':')?;
        if left.contains('/') || left.contains('\\') || left.len() <= 1 {
            return None;
        }
        let host = left.rsplit_once('@').map_or(left, |(_, h)| h);
        (host, path)
    };
    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path).trim_end_matches('/');
    if host.is_empty() || path.is_empty() {
        return None;
    }
    Some(format!("{}/{}", host.to_ascii_lowercase(), path))
}

/// The project key of a directory: its repository's `origin` remote (or first remote)
/// normalized, else the repository's root path, else the directory itself.
pub fn project_key_of_dir(dir: &Path) -> String {
    let root = repo_root(dir);
    if let Some(root) = &root {
        if let Some(remote) = remote_of(root) {
            return remote;
        }
    }
    root.unwrap_or_else(|| dir.to_path_buf()).to_string_lossy().into_owned()
}

/// The nearest directory at or above `dir` holding `.git` (a directory or a worktree's file).
fn repo_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().find(|d| d.join(".git").exists()).map(Path::to_path_buf)
}

/// The normalized `origin` (else first) remote in a repository's config. Read from
/// the file rather than by running git: a push resolves hundreds of projects, and
/// git need not be installed where history is read.
fn remote_of(root: &Path) -> Option<String> {
    let dot_git = root.join(".git");
    let git_dir = if dot_git.is_file() {
        // A worktree or submodule: `gitdir: <path>`; its config is the common dir's.
        let text = std::fs::read_to_string(&dot_git).ok()?;
        let target = PathBuf::from(text.trim().strip_prefix("gitdir:")?.trim());
        let target = if target.is_absolute() { target } else { root.join(target) };
        match std::fs::read_to_string(target.join("commondir")) {
            Ok(common) => target.join(common.trim()),
            Err(_) => target,
        }
    } else {
        dot_git
    };
    let config = std::fs::read_to_string(git_dir.join("config")).ok()?;
    let mut remotes: Vec<(String, String)> = Vec::new();
    let mut section: Option<String> = None;
    for line in config.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line.strip_prefix("[remote \"").and_then(|r| r.strip_suffix("\"]")).map(str::to_string);
        } else if let (Some(name), Some((k, v))) = (&section, line.split_once('=')) {
            if k.trim().eq_ignore_ascii_case("url") {
                remotes.push((name.clone(), v.trim().trim_matches('"').to_string()));
            }
        }
    }
    let pick = remotes.iter().find(|(n, _)| n == "origin").or_else(|| remotes.first())?;
    normalize_remote(&pick.1)
}

/// The project key a user means by `spec`: a directory (absolute, `~`, or relative to
/// `cwd`, when it exists) is keyed by [`project_key_of_dir`]; a remote URL in any
/// spelling by [`normalize_remote`]; anything else is taken as a key already.
pub fn project_key_of_spec(env: &StoreEnv, cwd: &Path, spec: &str) -> String {
    let expanded = env.expand(spec);
    let path = if expanded.is_absolute() { expanded } else { cwd.join(expanded) };
    if path.is_dir() {
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        return project_key_of_dir(&path);
    }
    normalize_remote(spec).unwrap_or_else(|| spec.trim().trim_end_matches('/').to_string())
}

/// Project keys of working directories, each directory resolved once.
#[derive(Debug, Default)]
pub struct ProjectKeys {
    cache: HashMap<String, String>,
}

impl ProjectKeys {
    pub fn key(&mut self, project: &str) -> String {
        if let Some(k) = self.cache.get(project) {
            return k.clone();
        }
        let k = project_key_of_dir(Path::new(project));
        self.cache.insert(project.to_string(), k.clone());
        k
    }
}

/// What `[team]` says leaves this machine.
#[derive(Debug, Clone, Default)]
pub struct Sharing {
    pub all: bool,
    pub projects: HashSet<String>,
    pub harnesses: HashSet<String>,
}

impl Sharing {
    pub fn of(team: &TeamSettings) -> Sharing {
        Sharing { all: team.share_all, projects: team.share.iter().cloned().collect(), harnesses: team.harnesses.iter().cloned().collect() }
    }

    /// Nothing is shared.
    pub fn is_empty(&self) -> bool {
        !self.all && self.projects.is_empty()
    }

    /// Whether a session of `harness` whose project has key `key` is shared. A shared
    /// path shares the directories under it too.
    pub fn shares(&self, harness: &str, key: Option<&str>) -> bool {
        if !self.harnesses.is_empty() && !self.harnesses.contains(harness) {
            return false;
        }
        if self.all {
            return true;
        }
        let Some(key) = key else { return false };
        self.projects.iter().any(|p| key == p || (p.starts_with('/') && Path::new(key).starts_with(p)))
    }

    /// Changes whenever what is shared does: a push after a change reads the whole archive.
    pub fn fingerprint(&self) -> u64 {
        let mut projects: Vec<&String> = self.projects.iter().collect();
        projects.sort();
        let mut harnesses: Vec<&String> = self.harnesses.iter().collect();
        harnesses.sort();
        let text = serde_json::json!([self.all, projects, harnesses]).to_string();
        xxhash_rust::xxh3::xxh3_64(text.as_bytes())
    }
}

// ------------------------------------------------------------------ the gate

/// Why a turn was held back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Held {
    /// `<harness>:<session>:<seq>`.
    pub turn: String,
    /// The project key of its session.
    pub project: String,
    /// The detector that still matched (a redaction kind, or `high_entropy`).
    pub detector: String,
}

/// The detector a redacted text still matches, if any: a second redaction pass that
/// would change it (redaction is meant to be a fixpoint), or a token that looks like
/// a credential no rule names.
pub fn gate(text: &str) -> Option<String> {
    if let std::borrow::Cow::Owned(again) = crate::redact::redact(text) {
        let kind = again
            .split("[redacted:")
            .skip(1)
            .filter_map(|s| s.split_once(']').map(|(k, _)| k))
            .find(|k| !text.contains(&format!("[redacted:{k}]")))
            .unwrap_or("redaction");
        return Some(kind.to_string());
    }
    high_entropy_token(text).then(|| "high_entropy".to_string())
}

/// A token of 32–256 characters of the alphabets keys are written in, with at least
/// three each of upper-case letters, lower-case letters and digits, and a Shannon
/// entropy of at least 4.3 bits a character: random enough to be a key, which words,
/// identifiers, paths, hex digests (16 symbols: at most 4 bits) and UUIDs are not.
fn high_entropy_token(text: &str) -> bool {
    let token_byte = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'_' | b'-' | b'=');
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !token_byte(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && token_byte(bytes[i]) {
            i += 1;
        }
        let token = &bytes[start..i];
        // Paths and URLs are split at `/` into their parts; the parts are judged alone.
        for part in token.split(|b| *b == b'/') {
            if (32..=256).contains(&part.len()) && looks_random(part) {
                return true;
            }
        }
    }
    false
}

fn looks_random(token: &[u8]) -> bool {
    let upper = token.iter().filter(|b| b.is_ascii_uppercase()).count();
    let lower = token.iter().filter(|b| b.is_ascii_lowercase()).count();
    let digits = token.iter().filter(|b| b.is_ascii_digit()).count();
    if upper < 3 || lower < 3 || digits < 3 {
        return false;
    }
    let mut counts = [0u32; 256];
    for b in token {
        counts[*b as usize] += 1;
    }
    let n = token.len() as f64;
    let entropy: f64 = counts.iter().filter(|c| **c > 0).map(|c| f64::from(*c) / n).map(|p| -p * p.log2()).sum();
    entropy >= 4.3
}

/// The text of a turn that leaves the machine, every field a person or model wrote.
fn outgoing_text(turn: &Turn) -> String {
    serde_json::to_string(turn).unwrap_or_default()
}

// ------------------------------------------------------------------ the push plan

/// One session as a push sends it: redacted, only the turns the gate passed.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// `<harness>:<session>`.
    pub key: String,
    pub project: String,
    pub meta: SessionMeta,
    pub turns: Vec<Turn>,
    /// Changes whenever what is sent does.
    pub digest: u64,
}

/// The push state kept beside the archive (`team/state.json` in deja's data dir),
/// one per team store (a new URL starts again).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PushState {
    pub version: u32,
    /// The store the rest describes (its URL without a password).
    pub target: String,
    /// The first archive segment not yet read.
    pub cursor: u64,
    /// [`Sharing::fingerprint`] when the cursor was advanced.
    pub sharing: u64,
    /// Per session key, the digest of what the server holds.
    pub sent: BTreeMap<String, u64>,
    /// Turns the gate held back, per session key.
    pub held: BTreeMap<String, Vec<Held>>,
    /// When the last push finished (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_push: Option<String>,
}

impl PushState {
    pub fn path(env: &StoreEnv) -> PathBuf {
        env.data_dir().join("team").join("state.json")
    }

    /// The state for `target`: the file's when it describes that store, else a fresh one.
    pub fn load(env: &StoreEnv, target: &str) -> Result<PushState, TeamError> {
        let path = Self::path(env);
        let fresh = PushState { version: STATE_VERSION, target: target.to_string(), ..PushState::default() };
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(fresh),
            Err(e) => return Err(TeamError::State { path, reason: e.to_string() }),
        };
        let state: PushState = serde_json::from_slice(&bytes).map_err(|e| TeamError::State {
            path: path.clone(),
            reason: format!("not a push state ({e}); delete it to push everything again"),
        })?;
        if state.version > STATE_VERSION {
            return Err(TeamError::State { path, reason: format!("written by a newer deja (version {})", state.version) });
        }
        Ok(if state.target == target { state } else { fresh })
    }

    pub fn save(&self, env: &StoreEnv) -> Result<(), TeamError> {
        let path = Self::path(env);
        let err = |e: std::io::Error| TeamError::State { path: path.clone(), reason: e.to_string() };
        if let Some(dir) = path.parent() {
            crate::fsutil::private_dir(dir).map_err(err)?;
        }
        let bytes = serde_json::to_vec_pretty(self).map_err(|e| TeamError::State { path: path.clone(), reason: e.to_string() })?;
        crate::fsutil::write_private(&path, &bytes).map_err(err)
    }

    /// Every held turn.
    pub fn held_turns(&self) -> impl Iterator<Item = &Held> {
        self.held.values().flatten()
    }
}

/// What a push would do from `state`.
#[derive(Debug, Default)]
pub struct Plan {
    /// Sessions whose rows the server must replace.
    pub send: Vec<Outgoing>,
    /// Sessions the server holds that are no longer shared (or whose every turn is held):
    /// their rows go.
    pub remove: Vec<String>,
    /// Turns held back now, per session key (replacing what the state held for it).
    pub held: BTreeMap<String, Vec<Held>>,
    /// Sessions read and found unchanged.
    pub unchanged: usize,
    /// The cursor once this plan is sent.
    pub next_cursor: u64,
    /// Archive segments that could not be read to their end.
    pub problems: Vec<String>,
}

/// Reads the archive from the state's cursor (from the start when what is shared
/// changed) and works out what to send.
pub fn plan(archive: &Archive, state: &PushState, sharing: &Sharing, machine: &str) -> Result<Plan, TeamError> {
    let fp = sharing.fingerprint();
    let from = if state.sharing == fp { state.cursor } else { 0 };
    let next_cursor = archive.segments()?.last().map_or(from, |(n, _)| n + 1).max(from);
    let mut keys = ProjectKeys::default();
    // The sessions the new segments touch, with their project key and whether shared.
    let mut touched: HashMap<String, bool> = HashMap::new();
    let mut problems = archive.scan_from(from, |_, line| {
        if let Line::Turn(k) = line {
            let key = k.session_key();
            if touched.contains_key(&key) {
                return;
            }
            let project = k.project.as_deref().filter(|p| !p.is_empty()).map(|p| keys.key(p));
            touched.insert(key, sharing.shares(&k.harness, project.as_deref()));
        }
    })?;
    let mut out = Plan { next_cursor, ..Plan::default() };
    // Rescanned from the start: a session the server holds that no segment names any
    // more (forgotten, excluded) or that is no longer shared goes.
    for key in state.sent.keys() {
        let gone = if from == 0 { !touched.get(key).copied().unwrap_or(false) } else { touched.get(key) == Some(&false) };
        if gone {
            out.remove.push(key.clone());
        }
    }
    let wanted: HashSet<&String> = touched.iter().filter(|(_, s)| **s).map(|(k, _)| k).collect();
    if !wanted.is_empty() {
        let (sessions, more) = archive.load(|k| wanted.contains(&k.to_string()))?;
        problems.extend(more);
        for s in sessions {
            let (outgoing, held) = prepare(s, &mut keys, machine);
            let key = outgoing.key.clone();
            if !held.is_empty() || state.held.contains_key(&key) {
                out.held.insert(key.clone(), held);
            }
            if outgoing.turns.is_empty() {
                if state.sent.contains_key(&key) {
                    out.remove.push(key);
                }
                continue;
            }
            if state.sent.get(&key) == Some(&outgoing.digest) {
                out.unchanged += 1;
                continue;
            }
            out.send.push(outgoing);
        }
    }
    out.send.sort_by(|a, b| a.key.cmp(&b.key));
    out.remove.sort();
    out.remove.dedup();
    out.problems = problems;
    Ok(out)
}

/// A session as it leaves: redacted again, its turns through the gate.
fn prepare(s: ArchivedSession, keys: &mut ProjectKeys, machine: &str) -> (Outgoing, Vec<Held>) {
    let mut meta = s.meta();
    meta.redact_in_place();
    if meta.machine.is_none() {
        meta.machine = Some(machine.to_string());
    }
    let project = meta.project.as_deref().filter(|p| !p.is_empty()).map_or_else(String::new, |p| keys.key(p));
    let key = s.key();
    let mut held = Vec::new();
    let mut turns = Vec::with_capacity(s.turns.len());
    for mut t in s.turns {
        t.redact_in_place();
        match gate(&outgoing_text(&t)) {
            Some(detector) => {
                held.push(Held { turn: crate::archive::turn_id(&meta.harness, &meta.id, t.seq), project: project.clone(), detector })
            }
            None => turns.push(t),
        }
    }
    meta.turns = turns.len() as u32;
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(serde_json::to_string(&meta).unwrap_or_default().as_bytes());
    h.update(project.as_bytes());
    for t in &turns {
        h.update(outgoing_text(t).as_bytes());
        h.update(b"\n");
    }
    (Outgoing { key, project, meta, turns, digest: h.digest() }, held)
}

// ------------------------------------------------------------------ team search

/// A question for the team store: the same request a local search takes, the
/// engine's half (`deja-team`) maps it onto its own full-text and trigram search.
#[derive(Debug, Clone, Default)]
pub struct TeamQuery {
    /// What the user typed: words and "quoted phrases".
    pub query: String,
    /// Only sessions whose project (path or key) contains this.
    pub project: Option<String>,
    /// Only these harnesses.
    pub harnesses: Vec<String>,
    /// Only turns of these roles (`user`, `assistant`, `tool_call`, …).
    pub roles: Vec<String>,
    /// Only turns since.
    pub since: Option<crate::Timestamp>,
    /// Leave out this machine's sessions (a search that answers them from the local index).
    pub not_machine: Option<String>,
    /// At most this many sessions.
    pub limit: usize,
}

impl TeamQuery {
    /// The query's words (letters, digits and `_`, lower-cased, each once, in order) and
    /// its quoted phrases (each as its words). At most 32 words: past that the question
    /// is not made longer, as the local search bounds a long query.
    pub fn terms(&self) -> (Vec<String>, Vec<Vec<String>>) {
        let mut words: Vec<String> = Vec::new();
        let mut phrases = Vec::new();
        for (i, part) in self.query.split('"').enumerate() {
            let ws = split_words(part);
            // Odd parts were inside quotes.
            if i % 2 == 1 && ws.len() > 1 {
                phrases.push(ws.clone());
            }
            for w in ws {
                if !words.contains(&w) && words.len() < 32 {
                    words.push(w);
                }
            }
        }
        (words, phrases)
    }
}

fn split_words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

/// What a team search found: sessions of other machines (and this one's pushed
/// copies), each labelled with who wrote it where. Quoted text is untrusted history:
/// surfaces frame it as such (`recall::render::team`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct TeamResults {
    /// The tier that answered (`exact`, `stemmed`, `fuzzy`, `relevance`), or `none`.
    pub tier: String,
    pub sessions: Vec<TeamSession>,
}

/// One session of the team store, with its best matching turns.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TeamSession {
    /// The PostgreSQL role that pushed it.
    pub author: String,
    /// The machine it was pushed from.
    pub machine: String,
    /// The project key.
    pub project: String,
    /// The working directory on that machine.
    pub project_path: Option<String>,
    pub harness: String,
    /// The session id.
    pub id: String,
    pub title: Option<String>,
    pub updated: Option<crate::Timestamp>,
    pub hits: Vec<TeamHit>,
}

impl TeamSession {
    /// How `deja show --team` names it: `<machine>/<harness>:<id>`.
    pub fn key(&self) -> String {
        format!("{}/{}:{}", self.machine, self.harness, self.id)
    }
}

/// One turn of a team session.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TeamHit {
    pub seq: u32,
    pub role: String,
    pub time: Option<crate::Timestamp>,
    /// A window of the turn's text around the first word found (the whole turn for `show`).
    pub text: String,
}

/// About `width` characters of `text` around the first of `words` it contains
/// (case-insensitively), with `…` where it was cut; the start when none is found.
pub fn snippet(text: &str, words: &[String], width: usize) -> String {
    let lower = text.to_lowercase();
    // Lower-casing can change byte lengths; a position found in `lower` is only used
    // when it is a character boundary of `text` too.
    let at = words.iter().filter_map(|w| lower.find(w.as_str())).min().filter(|&i| text.is_char_boundary(i)).unwrap_or(0);
    let mut start = at.saturating_sub(width / 3);
    while start > 0 && !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (start + width).min(text.len());
    while end < text.len() && !text.is_char_boundary(end) {
        end += 1;
    }
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.push_str(&text[start..end]);
    if end < text.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remotes_in_every_spelling_are_one_key() {
        let want = Some("github.com/org/app".to_string());
        for url in [
            "git@github.com:org/app.git",
            "https://github.com/org/app",
            "https://github.com/org/app.git/",
            "ssh://git@GitHub.com:22/org/app.git",
            "git+ssh://git@github.com/org/app",
            "https://user:tok@github.com/org/app",
        ] {
            assert_eq!(normalize_remote(url), want, "{url}");
        }
        assert_eq!(normalize_remote("/home/me/app"), None);
        assert_eq!(normalize_remote("C:\\src\\app"), None);
        assert_eq!(normalize_remote("file:///srv/git/app.git"), None);
        assert_ne!(normalize_remote("https://github.com/org/App"), want, "paths keep their case");
    }

    #[test]
    fn a_directory_is_keyed_by_its_remote_else_its_path() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("app");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        assert_eq!(project_key_of_dir(&repo.join("src/deep")), repo.to_string_lossy());
        std::fs::write(
            repo.join(".git/config"),
            "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = https://example.org/x/y\n[remote \"origin\"]\n\turl = git@github.com:org/app.git\n",
        )
        .unwrap();
        assert_eq!(project_key_of_dir(&repo.join("src/deep")), "github.com/org/app");
        let lone = tmp.path().join("lone");
        std::fs::create_dir_all(&lone).unwrap();
        assert_eq!(project_key_of_dir(&lone), lone.to_string_lossy());
    }

    #[test]
    fn sharing_is_opt_in_by_project_and_harness() {
        let mut s = Sharing::default();
        assert!(!s.shares("alpha", Some("github.com/org/app")));
        s.projects.insert("github.com/org/app".into());
        s.projects.insert("/home/me/scratch".into());
        assert!(s.shares("alpha", Some("github.com/org/app")));
        assert!(!s.shares("alpha", Some("github.com/org/other")));
        assert!(s.shares("alpha", Some("/home/me/scratch/sub")));
        assert!(!s.shares("alpha", Some("/home/me/scratchpad")));
        assert!(!s.shares("alpha", None));
        s.harnesses.insert("beta".into());
        assert!(!s.shares("alpha", Some("github.com/org/app")));
        assert!(s.shares("beta", Some("github.com/org/app")));
    }

    #[test]
    fn the_gate_holds_random_tokens_and_passes_ordinary_text() {
        assert_eq!(gate("key = zX8qK2mP9vR4tL7wB3nH6jD1fG5sA0cE"), Some("high_entropy".into()));
        for fine in [
            "commit 3f9a2b1c4d5e6f708192a3b4c5d6e7f8091a2b3c fixed it",
            "uuid 123e4567-e89b-12d3-a456-426614174000",
            "SessionManagerFactoryBuilderImplementation",
            "/home/alice/src/app/deja-core/src/index/indexer.rs",
            "the token was [redacted:github_token] and it expired",
            "",
        ] {
            assert_eq!(gate(fine), None, "{fine}");
        }
        // What redaction leaves is a fixpoint; anything it would still change is held.
        let leaked = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
        assert_eq!(gate(&format!("token {leaked}")).as_deref(), Some("github_token"));
    }

    #[test]
    fn team_queries_split_into_words_and_phrases() {
        let q = TeamQuery { query: "Pool \"staging pool size\" pool-size, naïve".into(), ..TeamQuery::default() };
        let (words, phrases) = q.terms();
        assert_eq!(words, vec!["pool", "staging", "size", "naïve"]);
        assert_eq!(phrases, vec![vec!["staging".to_string(), "pool".into(), "size".into()]]);
        let long = TeamQuery { query: (0..50).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" "), ..TeamQuery::default() };
        assert_eq!(long.terms().0.len(), 32);
    }

    #[test]
    fn a_snippet_is_a_window_around_the_first_word_found() {
        let text = format!("{} the Staging pool size is forty {}", "a".repeat(300), "b".repeat(300));
        let s = snippet(&text, &["pool".into(), "forty".into()], 60);
        assert!(s.starts_with('…') && s.ends_with('…') && s.contains("Staging pool size"), "{s}");
        assert_eq!(snippet("short", &["nothing".into()], 60), "short");
        // Multi-byte text is cut on character boundaries.
        let wide = "é".repeat(200) + "pool" + &"ü".repeat(200);
        assert!(snippet(&wide, &["pool".into()], 50).contains("pool"));
    }
}

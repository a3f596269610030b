//! The ledger of sessions whose source the harness deleted (`<archive>/gone`): for each
//! session deja keeps after its source went, when an index run first saw the source gone
//! and which source it was. The archive holds the turns; this file only says which of
//! them have nothing left on the harness's side, so search, `deja show`, MCP and
//! `deja harnesses` can say so and `deja search --deleted` can list them.
//!
//! One tab-separated line per session (`<harness>:<id>`, milliseconds, source), written
//! whole through a private temporary file under the writer lock. A line that does not
//! parse is skipped: the ledger is a label, and the next run notices again what it lost.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::fsutil::field;
use crate::model::SourceDeleted;
use crate::time::Timestamp;

const FILE: &str = "gone";

/// Sessions kept after their source was deleted, by session key.
#[derive(Debug, Default, Clone)]
pub struct Gone {
    sessions: HashMap<String, SourceDeleted>,
}

impl Gone {
    /// The ledger's path in the archive directory `dir`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(FILE)
    }

    /// Reads the ledger of the archive in `dir` (empty when there is none).
    pub fn load(dir: &Path) -> std::io::Result<Gone> {
        let text = match std::fs::read(Gone::path(dir)) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Gone::default()),
            Err(e) => return Err(e),
        };
        let mut sessions = HashMap::new();
        for line in text.lines() {
            let mut f = line.splitn(3, '\t');
            let (Some(key), Some(ms), Some(source)) = (f.next(), f.next(), f.next()) else { continue };
            let Ok(ms) = ms.parse::<i64>() else { continue };
            sessions.insert(field::unescape(key), SourceDeleted { noticed: Timestamp::from_millis(ms), source: field::unescape(source) });
        }
        Ok(Gone { sessions })
    }

    /// Writes the ledger into the archive directory `dir`.
    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        crate::fsutil::private_dir(dir)?;
        let mut keys: Vec<&String> = self.sessions.keys().collect();
        keys.sort();
        crate::fsutil::replace_private(&Gone::path(dir), |w| {
            for k in keys {
                let d = &self.sessions[k];
                writeln!(w, "{}\t{}\t{}", field::escape(k), d.noticed.millis(), field::escape(&d.source))?;
            }
            Ok(())
        })
    }

    pub fn get(&self, session_key: &str) -> Option<&SourceDeleted> {
        self.sessions.get(session_key)
    }

    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    /// Every session key in the ledger.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.sessions.keys().map(String::as_str)
    }

    /// Records that `session_key`'s source `source` was seen gone at `now`; a session
    /// already recorded keeps its first date. True when it was new.
    pub fn notice(&mut self, session_key: String, source: String, now: Timestamp) -> bool {
        if self.sessions.contains_key(&session_key) {
            return false;
        }
        self.sessions.insert(session_key, SourceDeleted { noticed: now, source });
        true
    }

    /// Forgets the sessions whose source is `source` (it exists again: restored, or put
    /// back by hand). True when any was recorded.
    pub fn returned(&mut self, source: &str) -> bool {
        let before = self.sessions.len();
        self.sessions.retain(|_, d| d.source != source);
        self.sessions.len() != before
    }

    /// The sources the ledger names.
    pub fn sources(&self) -> std::collections::HashSet<&str> {
        self.sessions.values().map(|d| d.source.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ledger_round_trips_keeps_the_first_date_and_forgets_what_came_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut g = Gone::default();
        assert!(g.notice("claude:a".into(), "/p/a\t1.jsonl".into(), Timestamp::from_millis(5)));
        assert!(!g.notice("claude:a".into(), "/p/a\t1.jsonl".into(), Timestamp::from_millis(9)), "the first date stays");
        g.notice("codex:b".into(), "/db.sqlite#b".into(), Timestamp::from_millis(7));
        g.save(dir.path()).expect("save");
        std::fs::write(Gone::path(dir.path()), format!("{}garbage line\n", std::fs::read_to_string(Gone::path(dir.path())).expect("read")))
            .expect("append");
        let mut back = Gone::load(dir.path()).expect("load");
        assert_eq!(back.len(), 2);
        assert_eq!(back.get("claude:a").map(|d| (d.noticed.millis(), d.source.as_str())), Some((5, "/p/a\t1.jsonl")));
        assert!(back.returned("/db.sqlite#b"));
        assert!(!back.returned("/db.sqlite#b"));
        assert!(back.get("codex:b").is_none());
        assert!(Gone::load(&dir.path().join("none")).expect("absent").is_empty());
    }
}

//! Shared test helpers: fixture paths, parsing, machine-independent snapshots, and
//! the build-once generator of the committed zstd fixtures.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Once;

use deja_adapter_deepseek::DeepSeek;
use deja_core::{HarnessFormat, ParseOptions, ParseStats, Session, SourceRef};

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

pub fn record(name: &str) -> PathBuf {
    fixtures().join("records").join(name)
}

pub fn store() -> PathBuf {
    ensure_zstd_fixtures();
    fixtures().join("home/.dsh/sessions")
}

pub const POOL_DIR: &str = "--src-pool--/session-1234abcd-0000-4000-8000-000000000000";
pub const LAB_DIR: &str = "--work-pgbouncer-lab--/session-5678efab-0000-4000-8000-000000000000";
pub const API_DIR: &str = "--srv-nonexistent-api--/session-9abc0123-0000-4000-8000-000000000000";

/// A zstd fixture: the decoded source in `frames/` (frames separated by blank lines),
/// the store file it becomes, and whether its last frame is cut short.
pub struct ZstdFixture {
    pub source: &'static str,
    pub dest: &'static str,
    pub cut_last_frame: bool,
}

pub const ZSTD_FIXTURES: &[ZstdFixture] = &[
    ZstdFixture {
        source: "pool.v0.jsonl",
        dest: "--src-pool--/session-1234abcd-0000-4000-8000-000000000000/session.jsonl.zstd",
        cut_last_frame: false,
    },
    ZstdFixture {
        source: "pool.v3.jsonl",
        dest: "--src-pool--/session-1234abcd-0000-4000-8000-000000000000/session.v3.jsonl.zstd",
        cut_last_frame: false,
    },
    ZstdFixture {
        source: "pool.v4.jsonl",
        dest: "--src-pool--/session-1234abcd-0000-4000-8000-000000000000/session.v4.jsonl.zstd",
        cut_last_frame: false,
    },
    ZstdFixture {
        source: "pgbouncer-interrupted.v0.jsonl",
        dest: "--work-pgbouncer-lab--/session-5678efab-0000-4000-8000-000000000000/session.jsonl.zstd",
        cut_last_frame: true,
    },
];

/// The frames of a source: blank lines separate them and are not part of the stream.
pub fn frames_of(source: &str) -> Vec<String> {
    let text = std::fs::read_to_string(fixtures().join("frames").join(source)).expect("frame source");
    text.split("\n\n").map(|f| format!("{}\n", f.trim_end_matches('\n'))).filter(|f| f.trim() != "").collect()
}

pub fn encode(fixture: &ZstdFixture) -> Vec<u8> {
    let frames = frames_of(fixture.source);
    let mut out = Vec::new();
    for (i, frame) in frames.iter().enumerate() {
        let mut bytes = zstd::encode_all(frame.as_bytes(), 3).expect("zstd");
        if fixture.cut_last_frame && i + 1 == frames.len() {
            bytes.truncate(bytes.len() / 2);
        }
        out.extend(bytes);
    }
    out
}

/// Writes the committed zstd fixtures when missing (or when `DEJA_REGEN_FIXTURES=1`).
/// They are committed so the store tree is real bytes on disk; this only rebuilds them.
pub fn ensure_zstd_fixtures() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let regen = std::env::var("DEJA_REGEN_FIXTURES").is_ok_and(|v| v == "1");
        let root = fixtures().join("home/.dsh/sessions");
        for f in ZSTD_FIXTURES {
            let dest = root.join(f.dest);
            if regen || !dest.exists() {
                std::fs::create_dir_all(dest.parent().expect("parent")).expect("mkdir");
                std::fs::write(&dest, encode(f)).expect("write fixture");
            }
        }
    });
}

pub fn parse_path(path: &Path, opts: &ParseOptions) -> (Vec<Session>, ParseStats) {
    let mut out = Vec::new();
    let stats = DeepSeek.parse(&SourceRef::file(path), opts, &mut out).expect("parse");
    (out, stats)
}

pub fn parse(path: &Path) -> Vec<Session> {
    parse_path(path, &ParseOptions::default()).0
}

/// Sessions with the machine-specific fixture prefix replaced, for snapshots.
pub fn scrub(mut sessions: Vec<Session>) -> Vec<Session> {
    let prefix = Path::new(env!("CARGO_MANIFEST_DIR"));
    for s in &mut sessions {
        if let Ok(rest) = s.source.path.strip_prefix(prefix) {
            s.source.path = Path::new("<crate>").join(rest);
        }
    }
    sessions
}

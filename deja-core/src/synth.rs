//! Synthetic sessions: a harness-neutral conversation each adapter can write in its
//! own on-disk format. The demo home, benchmark corpora and the LoCoMo run all go
//! through these writers and then through the real discovery and parsers.

use crate::model::Timestamp;

#[derive(Debug, Clone)]
pub struct SynthSession {
    /// A UUID-shaped id, unique in the home.
    pub id: String,
    /// Absolute working directory.
    pub project: String,
    pub title: Option<String>,
    pub started: Timestamp,
    pub turns: Vec<SynthTurn>,
}

#[derive(Debug, Clone)]
pub enum SynthTurn {
    User {
        text: String,
        time: Timestamp,
    },
    Assistant {
        text: String,
        time: Timestamp,
    },
    /// Reasoning the model wrote (formats without it drop it).
    Reasoning {
        text: String,
        time: Timestamp,
    },
    Shell {
        command: String,
        output: String,
        exit_code: i64,
        time: Timestamp,
    },
    Read {
        path: String,
        output: String,
        time: Timestamp,
    },
    Edit {
        path: String,
        old: String,
        new: String,
        time: Timestamp,
    },
}

impl SynthTurn {
    pub fn time(&self) -> Timestamp {
        match self {
            SynthTurn::User { time, .. }
            | SynthTurn::Assistant { time, .. }
            | SynthTurn::Reasoning { time, .. }
            | SynthTurn::Shell { time, .. }
            | SynthTurn::Read { time, .. }
            | SynthTurn::Edit { time, .. } => *time,
        }
    }
}

/// A deterministic UUID-shaped id from a number, e.g. for corpus generation.
pub fn synth_uuid(n: u64, salt: u64) -> String {
    let a = splitmix64(n ^ salt.rotate_left(32));
    let b = splitmix64(a ^ n);
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        (a >> 32) as u32,
        (a >> 16) as u16,
        a as u16 & 0xfff,
        (b >> 48) as u16 & 0xfff,
        b & 0xffff_ffff_ffff
    )
}

/// A fast, well-mixed 64-bit hash step (SplitMix64).
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The directory-name encodings several harnesses use for a working directory.
pub fn dash_encode(cwd: &str) -> String {
    cwd.chars().map(|c| if c == '/' || c == '\\' || c == ':' || c == '.' { '-' } else { c }).collect()
}

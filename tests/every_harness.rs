//! One home holding every adapter's fixture store at once, indexed and searched through
//! the `deja` binary: for each harness, a prompt, an answer and a command read from its
//! own fixtures (parsed in process, alone) must be found by `deja search --harness <id>` in
//! the shared home. This catches what a per-adapter test cannot: two adapters claiming
//! each other's files, a store found alone but not beside others, and a turn lost
//! between the parser and the search.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use deja_core::normalize::{normalize, NormalizeOptions};
use deja_core::{HarnessFormat, ParseOptions, Role, Session, StoreEnv, Turn};
use serde_json::Value;

/// `adapters/<id>/tests/fixtures/home`, for every adapter folder (each must have one, and
/// be registered).
fn fixture_homes() -> BTreeMap<&'static str, PathBuf> {
    let adapters = Path::new(env!("CARGO_MANIFEST_DIR")).join("../adapters");
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&adapters).expect("adapters/").flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let home = entry.path().join("tests/fixtures/home");
        assert!(home.is_dir(), "adapters/{name} has no tests/fixtures/home");
        let format = deja_core::lookup(&name).unwrap_or_else(|| panic!("adapters/{name} is not linked into the binary"));
        out.insert(format.info().id, home);
    }
    out
}

/// The sessions one adapter reads from its own fixture home, alone, as the index holds
/// them; the second value keeps the materialized home (and its databases) alive.
fn own_sessions(format: &dyn HarnessFormat, home: &Path) -> (Vec<Session>, Box<dyn std::any::Any>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let writers = deja_core::testkit::materialize_home(home, tmp.path()).expect("materialize fixtures");
    let mut out = Vec::new();
    for src in format.discover(&StoreEnv::with_home(tmp.path())).sources {
        let _ = format.parse(&src, &ParseOptions::default(), &mut out);
    }
    for s in &mut out {
        normalize(s, &NormalizeOptions::default(), format.info().injected);
    }
    (out, Box::new((tmp, writers)))
}

/// Up to five distinctive words of `text` (letters only, three or more), as a query all of
/// whose words one turn holds.
fn words_of(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 3 && w.chars().all(|c| c.is_ascii_alphabetic()))
        .map(str::to_ascii_lowercase)
        .collect();
    (!words.is_empty()).then(|| words.iter().take(5).cloned().collect::<Vec<_>>().join(" "))
}

/// A prompt, an answer and a command of the harness, as queries.
fn probes(sessions: &[Session]) -> Vec<(&'static str, String)> {
    let turns: Vec<&Turn> = sessions.iter().filter(|s| s.parent.is_none()).flat_map(|s| &s.turns).collect();
    let mut out = Vec::new();
    // deja's own notes are the user's words too.
    if let Some(q) = turns.iter().filter(|t| matches!(t.role, Role::User | Role::Note)).find_map(|t| words_of(&t.text)) {
        out.push(("prompt", q));
    }
    if let Some(q) = turns.iter().filter(|t| t.role == Role::Assistant).find_map(|t| words_of(&t.text)) {
        out.push(("answer", q));
    }
    if let Some(q) = turns.iter().filter_map(|t| t.tool.as_ref()?.command.as_deref()).find_map(words_of) {
        out.push(("command", q));
    }
    out
}

#[test]
fn every_harness_is_found_in_one_shared_home() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    let index = tmp.path().join("index");
    let homes = fixture_homes();
    let mut keep = Vec::new();
    for fixtures in homes.values() {
        keep.push(deja_core::testkit::materialize_home(fixtures, &home).expect("materialize"));
    }
    let deja = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_deja"))
            .args(args)
            .env_clear()
            .env("DEJA_WATCH", "off")
            .env("HOME", &home)
            .env("DEJA_INDEX_DIR", &index)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .output()
            .expect("run deja")
    };
    let out = deja(&["index"]);
    // The fixture homes hold deliberately broken sources: each is named, and the status
    // says something went unread (3) while everything else was indexed.
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "deja index: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    let mut missing = Vec::new();
    let mut checked = 0;
    for (id, fixtures) in &homes {
        let format = deja_core::lookup(id).expect("registered");
        let (sessions, _guard) = own_sessions(format, fixtures);
        let probes = probes(&sessions);
        assert!(probes.iter().any(|(kind, _)| *kind == "prompt"), "{id}: its fixtures hold no prompt");
        for (kind, query) in probes {
            let out = deja(&["search", &query, "--harness", id, "--json", "--no-refresh", "--limit", "50"]);
            let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            let found = v["hits"].as_array().is_some_and(|hits| hits.iter().any(|h| h["session"]["harness"] == *id));
            if !found {
                missing.push(format!("{id} {kind}: `{query}`"));
            }
            checked += 1;
        }
    }
    eprintln!("probed {checked} prompts, answers and commands of {} harnesses", homes.len());
    assert!(checked >= homes.len(), "every harness was probed");
    assert!(missing.is_empty(), "not found in the shared home:\n{}", missing.join("\n"));
}

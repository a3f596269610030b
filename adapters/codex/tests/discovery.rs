//! Store discovery: `~/.codex`, `CODEX_HOME`, `DEJA_CODEX_ROOT`, and what counts as a source.

use std::path::{Path, PathBuf};

use deja_adapter_codex::CodexFormat;
use deja_core::{HarnessFormat, StoreEnv};

fn touch(p: &Path) {
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, "{}\n").expect("write");
}

fn store(root: &Path) -> Vec<PathBuf> {
    let files = vec![
        root.join("sessions/2026/01/02/rollout-2026-01-02T03-04-05-0199aa00-0000-7000-8000-000000000001.jsonl"),
        root.join("sessions/2026/02/01/rollout-2026-02-01T00-00-00-0199aa00-0000-7000-8000-000000000002.jsonl"),
        root.join("archived_sessions/rollout-2025-12-31T23-59-59-0199aa00-0000-7000-8000-000000000003.jsonl"),
    ];
    for f in &files {
        touch(f);
    }
    // Not rollouts.
    touch(&root.join("sessions/2026/01/02/notes.jsonl"));
    touch(&root.join("sessions/2026/01/02/rollout-2026-01-02T03-04-05-x.json"));
    touch(&root.join("config.toml"));
    std::fs::create_dir_all(root.join("sessions/2026/01/03/rollout-dir.jsonl")).expect("mkdir");
    touch(&root.join("history.jsonl"));
    files
}

fn paths(env: &StoreEnv) -> Vec<PathBuf> {
    CodexFormat.discover(env).sources.into_iter().map(|s| s.path).collect()
}

#[test]
fn default_home_finds_rollouts_and_history() {
    let home = tempfile::tempdir().expect("tempdir");
    let root = home.path().join(".codex");
    let files = store(&root);
    let d = CodexFormat.discover(&StoreEnv::with_home(home.path()));
    let mut want = files.clone();
    want.push(root.join("history.jsonl"));
    want.sort();
    assert_eq!(d.sources.iter().map(|s| s.path.clone()).collect::<Vec<_>>(), want);
    for s in &d.sources {
        assert_eq!(s.append_only, s.path.file_name().is_some_and(|n| n != "history.jsonl"), "{}", s.path.display());
    }
    assert!(d.roots.contains(&(root.join("sessions"), true)));
    assert!(d.roots.contains(&(root.join("archived_sessions"), true)));
}

#[test]
fn codex_home_relocates_and_deja_root_overrides_both() {
    let home = tempfile::tempdir().expect("tempdir");
    store(&home.path().join(".codex"));
    let relocated = home.path().join("elsewhere/codex");
    let r_files = store(&relocated);
    let env = StoreEnv::with_home(home.path()).set("CODEX_HOME", relocated.display().to_string());
    let found = paths(&env);
    assert_eq!(found.len(), r_files.len() + 1);
    assert!(found.iter().all(|p| p.starts_with(&relocated)));

    let tilde = StoreEnv::with_home(home.path()).set("CODEX_HOME", "~/elsewhere/codex");
    assert_eq!(paths(&tilde), found, "~ expands against HOME");

    // DEJA_CODEX_ROOT names the sessions root, as DEJA_<ID>_ROOT does for every
    // adapter; archived rollouts and history.jsonl are read from beside it.
    let read_home = home.path().join("backup/codex");
    let b_files = store(&read_home);
    let env = env.set("DEJA_CODEX_ROOT", read_home.join("sessions").display().to_string());
    let found = paths(&env);
    assert_eq!(found.len(), b_files.len() + 1);
    assert!(found.iter().all(|p| p.starts_with(&read_home)));
}

#[test]
fn missing_store_is_reported_not_fatal() {
    let home = tempfile::tempdir().expect("tempdir");
    let d = CodexFormat.discover(&StoreEnv::with_home(home.path()));
    assert!(d.sources.is_empty());
    assert_eq!(d.roots, vec![(home.path().join(".codex/sessions"), false), (home.path().join(".codex/archived_sessions"), false)]);
}

#[cfg(unix)]
#[test]
fn fifos_are_skipped() {
    let home = tempfile::tempdir().expect("tempdir");
    let dir = home.path().join(".codex/sessions/2026/01/02");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let fifo = dir.join("rollout-2026-01-02T03-04-05-fifo.jsonl");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success());
    if !made {
        return;
    }
    assert!(paths(&StoreEnv::with_home(home.path())).is_empty());
}

#[test]
fn fixture_home_is_discovered() {
    let d = CodexFormat.discover(&StoreEnv::with_home(crate::common::fixture_home()));
    assert_eq!(d.sources.len(), crate::common::ROLLOUTS.len() + 1);
}

#[test]
fn registered_with_honest_info() {
    let f = deja_core::lookup("codex").expect("registered through inventory");
    let info = f.info();
    assert_eq!(info.id, "codex");
    assert!(info.deja_overrides().iter().any(|(v, _)| v == "DEJA_CODEX_ROOT"));
    assert!(info.harness_vars().contains(&"CODEX_HOME"));
    for (name, cap) in info.capabilities.named() {
        assert_ne!(cap.status(), "works", "{name}: nothing provides it yet");
        assert!(!cap.reason().is_empty(), "{name} needs a reason");
    }
}

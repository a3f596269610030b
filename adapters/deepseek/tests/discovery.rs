//! Discovery: relocation variables, the newest generation per session directory, and
//! the committed fake store.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use deja_adapter_deepseek::{generation_name, pick_generation, DeepSeek};
use deja_core::{HarnessFormat, StoreEnv};

fn touch(path: &Path, bytes: &[u8]) {
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, bytes).expect("write");
}

fn set_mtime(path: &Path, secs_ago: u64) {
    let f = fs::File::options().write(true).open(path).expect("open");
    f.set_modified(SystemTime::now() - Duration::from_secs(secs_ago)).expect("set mtime");
}

fn found(env: &StoreEnv) -> Vec<String> {
    DeepSeek.discover(env).sources.iter().map(|s| s.path.display().to_string()).collect()
}

#[test]
fn default_store_is_dot_dsh_under_home() {
    let tmp = tempfile::tempdir().expect("tmp");
    let log = tmp.path().join(".dsh/sessions/--src-app--/session-aaaa/session.v4.jsonl.zstd");
    touch(&log, b"");
    let d = DeepSeek.discover(&StoreEnv::with_home(tmp.path()));
    assert_eq!(d.roots, vec![(tmp.path().join(".dsh/sessions"), true)]);
    assert_eq!(d.sources.len(), 1);
    assert_eq!(d.sources[0].path, log);
    assert_eq!(d.sources[0].generation, Some(4));
    assert!(!d.sources[0].append_only, "zstd generations are re-parsed in full");
}

#[test]
fn dsh_home_relocates_the_store() {
    let tmp = tempfile::tempdir().expect("tmp");
    let moved = tmp.path().join("elsewhere");
    touch(&tmp.path().join(".dsh/sessions/--a--/session-1/session.jsonl.zstd"), b"");
    let log = moved.join("sessions/--b--/session-2/session.jsonl");
    touch(&log, b"");
    let env = StoreEnv::with_home(tmp.path()).set("DSH_HOME", moved.display().to_string());
    assert_eq!(found(&env), vec![log.display().to_string()]);
    let d = DeepSeek.discover(&env);
    assert_eq!(d.roots, vec![(moved.join("sessions"), true)]);
    assert!(!d.sources[0].append_only, "raw generations are not resumed from a tail");
}

#[test]
fn deja_root_replaces_the_sessions_directory() {
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("archive");
    let log = root.join("--c--/session-3/session.v3.jsonl.zstd");
    touch(&log, b"");
    touch(&tmp.path().join("dsh/sessions/--d--/session-4/session.v3.jsonl.zstd"), b"");
    let env = StoreEnv::with_home(tmp.path())
        .set("DSH_HOME", tmp.path().join("dsh").display().to_string())
        .set("DEJA_DEEPSEEK_ROOT", root.display().to_string());
    assert_eq!(found(&env), vec![log.display().to_string()]);
    // The override may name a single session directory too.
    let env = StoreEnv::with_home(tmp.path()).set("DEJA_DEEPSEEK_ROOT", root.join("--c--/session-3").display().to_string());
    assert_eq!(found(&env), vec![log.display().to_string()]);
}

#[test]
fn missing_store_is_reported_and_empty() {
    let tmp = tempfile::tempdir().expect("tmp");
    let d = DeepSeek.discover(&StoreEnv::with_home(tmp.path()));
    assert!(d.sources.is_empty());
    assert_eq!(d.roots, vec![(tmp.path().join(".dsh/sessions"), false)]);
}

#[test]
fn newest_generation_wins_numerically_and_oddities_are_ignored() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join(".dsh/sessions/--src-app--/session-bbbb");
    for name in ["session.jsonl.zstd", "session.v3.jsonl.zstd", "session.v4.jsonl.zstd", "session.v9.jsonl", "session.v10.jsonl.zstd"] {
        touch(&dir.join(name), b"");
    }
    for name in ["session.v11.jsonl.zstd.bak", "session.vX.jsonl", "notes.txt", "session.v12.json"] {
        touch(&dir.join(name), b"");
    }
    // A directory with a generation's name is not a log.
    fs::create_dir_all(dir.join("session.v99.jsonl")).expect("mkdir");
    assert_eq!(pick_generation(&dir), Some((dir.join("session.v10.jsonl.zstd"), 10)));
    let d = DeepSeek.discover(&StoreEnv::with_home(tmp.path()));
    assert_eq!(d.sources.len(), 1, "one directory is one session");
    assert_eq!(d.sources[0].generation, Some(10));
}

#[test]
fn unnumbered_is_older_than_any_numbered_generation() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("session-cccc");
    touch(&dir.join("session.jsonl.zstd"), b"a much larger file than the other one");
    touch(&dir.join("session.v1.jsonl"), b"");
    assert_eq!(pick_generation(&dir), Some((dir.join("session.v1.jsonl"), 1)));
    assert_eq!(generation_name("session.jsonl").map(|g| (g.generation, g.numbered, g.zstd)), Some((0, false, false)));
    assert_eq!(generation_name("session.v4.jsonl.zstd").map(|g| (g.generation, g.numbered, g.zstd)), Some((4, true, true)));
    assert_eq!(generation_name("session.v.jsonl"), None);
}

#[test]
fn raw_and_zstd_of_one_generation_pick_the_most_recently_written() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("session-dddd");
    let raw = dir.join("session.v4.jsonl");
    let zst = dir.join("session.v4.jsonl.zstd");
    touch(&raw, b"{}\n{}\n{}\n");
    touch(&zst, b"{}");
    set_mtime(&raw, 10);
    set_mtime(&zst, 100);
    assert_eq!(pick_generation(&dir).map(|p| p.0), Some(raw.clone()));
    set_mtime(&zst, 1);
    assert_eq!(pick_generation(&dir).map(|p| p.0), Some(zst.clone()));
    // Same mtime: the larger file.
    let t = SystemTime::now() - Duration::from_secs(50);
    for p in [&raw, &zst] {
        fs::File::options().write(true).open(p).expect("open").set_modified(t).expect("mtime");
    }
    assert_eq!(pick_generation(&dir).map(|p| p.0), Some(raw));
}

#[test]
fn committed_store_yields_one_source_per_session_directory() {
    let store = crate::common::store();
    let env = StoreEnv::with_home("/nonexistent").set("DEJA_DEEPSEEK_ROOT", store.display().to_string());
    let d = DeepSeek.discover(&env);
    let got: Vec<(String, Option<u32>)> =
        d.sources.iter().map(|s| (s.path.strip_prefix(&store).expect("under store").display().to_string(), s.generation)).collect();
    assert_eq!(
        got,
        vec![
            (format!("{}/session.v4.jsonl.zstd", crate::common::POOL_DIR), Some(4)),
            (format!("{}/session.v5.jsonl", crate::common::API_DIR), Some(5)),
            (format!("{}/session.jsonl.zstd", crate::common::LAB_DIR), Some(0)),
        ]
    );
    assert!(d.sources.iter().all(|s| !s.append_only));
}

#[test]
fn info_names_the_relocation_variables() {
    let info = DeepSeek.info();
    assert_eq!(info.id, "deepseek");
    assert!(info.harness_vars().contains(&"DSH_HOME"));
    assert!(info.deja_overrides().iter().any(|(v, _)| v == "DEJA_DEEPSEEK_ROOT"));
    assert!(info.capabilities.named().iter().all(|(_, c)| c.status() != "works"));
    assert!(deja_core::lookup("deepseek").is_some(), "registered with inventory");
}

//! Ordinary mistakes and hostile settings, end to end: absurd flag values are refused
//! with the accepted ones named (never a panic or a huge allocation), a misspelled
//! command is pointed out, an empty or relative `HOME` is refused before anything is
//! written, non-UTF-8 input to `deja fix` is read, the index directory is made
//! private whatever it was found as, and a search during another process's first
//! build says so instead of "nothing matched".

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use crate::e2e::{build_home, Home};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn absurd_limits_are_refused_with_the_range() {
    let h = Home::new();
    build_home(&h);
    h.json(&["index", "--json"]);
    for limit in ["18446744073709551615", "100000000", "0", "-4", "many"] {
        for cmd in [&["search", "nightly"][..], &["fix", "Error 124"], &["orient"]] {
            let mut args = cmd.to_vec();
            let flag = format!("--limit={limit}");
            args.extend([flag.as_str(), "--no-refresh"]);
            let out = h.deja(&args);
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(2), "deja {args:?}: {err}");
            assert!(err.contains("from 1 to 1000") && !err.contains("panicked"), "deja {args:?}: {err}");
        }
    }
    let out = h.deja(&["search", "nightly", "--limit", "1000", "--json", "--no-refresh"]);
    assert!(out.status.success(), "the largest limit works: {}", stderr(&out));
}

#[test]
fn bad_since_and_role_values_say_what_is_accepted() {
    let h = Home::new();
    build_home(&h);
    h.json(&["index", "--json"]);
    let out = h.deja(&["search", "nightly", "--since", "999999999y", "--no-refresh"]);
    assert!(stderr(&out).contains("too far back") && !stderr(&out).contains("panicked"), "{}", stderr(&out));
    assert!(!out.status.success());
    let out = h.deja(&["search", "nightly", "--since", "yesterday", "--no-refresh"]);
    assert!(stderr(&out).contains("expected an age like 30d"), "{}", stderr(&out));
    let out = h.deja(&["search", "nightly", "--role", "bogus", "--no-refresh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("possible values: user, assistant"), "{}", stderr(&out));
}

#[test]
fn a_misspelled_command_is_pointed_out_when_nothing_matches() {
    let h = Home::new();
    build_home(&h);
    h.json(&["index", "--json"]);
    let out = h.deja(&["indx"]);
    assert_eq!(out.status.code(), Some(1), "nothing matched");
    assert!(stderr(&out).contains("did you mean `deja index`?"), "{}", stderr(&out));
    // A word that is a near miss but does match is a search like any other.
    let out = h.deja(&["nightly"]);
    assert!(out.status.success() && !stderr(&out).contains("did you mean"), "{}", stderr(&out));
}

#[test]
fn an_empty_or_relative_home_is_refused_before_anything_is_written() {
    let cwd = tempfile::tempdir().expect("tempdir");
    for home in ["", "relative/home"] {
        let out = Command::new(env!("CARGO_BIN_EXE_deja"))
            .args(["search", "anything"])
            .env_clear()
            .env("DEJA_WATCH", "off")
            .env("HOME", home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .current_dir(cwd.path())
            .output()
            .expect("run deja");
        assert_eq!(out.status.code(), Some(2), "HOME={home:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("HOME is"), "{}", stderr(&out));
        let left: Vec<_> = std::fs::read_dir(cwd.path()).expect("read cwd").collect();
        assert!(left.is_empty(), "HOME={home:?} wrote into the working directory: {left:?}");
    }
}

#[test]
fn fix_reads_output_that_is_not_clean_utf8() {
    use std::io::Write;
    let h = Home::new();
    build_home(&h);
    h.json(&["index", "--json"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_deja"))
        .args(["fix", "--no-refresh", "--json"])
        .env_clear()
        .env("DEJA_WATCH", "off")
        .env("HOME", &h.home)
        .env("DEJA_INDEX_DIR", &h.index)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    child.stdin.take().expect("stdin").write_all(b"make: *** [nightly] Error 124 in /tmp/caf\xe9\n").expect("write");
    let out = child.wait_with_output().expect("wait");
    assert!(!stderr(&out).contains("valid UTF-8"), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    assert_eq!(v["command"], "fix", "{v}");
}

fn mode(p: &std::path::Path) -> u32 {
    std::fs::symlink_metadata(p).expect("stat").permissions().mode() & 0o777
}

#[test]
fn the_index_directory_is_made_private_and_planted_links_are_not_followed() {
    let h = Home::new();
    build_home(&h);
    std::fs::create_dir_all(&h.index).expect("mkdir");
    std::fs::set_permissions(&h.index, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    // Links planted where the writer once put fixed temporary names and the version.
    let victim = h.home.join("victim");
    std::fs::write(&victim, "precious").expect("victim");
    for name in ["manifest.tmp", "work-dirs.tmp", "version"] {
        std::os::unix::fs::symlink(&victim, h.index.join(name)).expect("symlink");
    }
    let out = h.deja(&["index", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "precious", "no write went through a link");
    assert_eq!(mode(&h.index), 0o700, "an existing 0777 index directory is tightened");
    let mut files = 0;
    let generation = h.index.join(std::fs::read_to_string(h.index.join("current")).expect("current").trim());
    for dir in [h.index.clone(), generation.clone(), generation.join("tantivy")] {
        for entry in std::fs::read_dir(&dir).expect("read index") {
            let path = entry.expect("entry").path();
            let m = std::fs::symlink_metadata(&path).expect("stat");
            if m.file_type().is_dir() {
                assert_eq!(mode(&path), 0o700, "{}", path.display());
            } else if m.file_type().is_file() {
                files += 1;
                assert_eq!(mode(&path), 0o600, "{}", path.display());
            }
        }
    }
    assert!(files > 5, "the index has files: {files}");
}

#[test]
fn a_search_during_another_first_build_says_so() {
    let h = Home::new();
    build_home(&h);
    std::fs::create_dir_all(&h.index).expect("mkdir");
    // Another deja is building the first generation: it holds the writer lock and
    // records its progress beside the index.
    let lock = std::fs::File::create(h.index.join("writer.lock")).expect("lock file");
    lock.lock().expect("lock");
    let progress = serde_json::json!({"pid": 4242, "jobs": 40, "total_bytes": 4 << 20, "parsed": 10, "parsed_bytes": 1 << 20});
    std::fs::write(h.index.join("first-build"), progress.to_string()).expect("progress");
    for args in [&["search", "nightly"][..], &["nightly", "--json"], &["blame", "ci/Makefile"]] {
        let out = h.deja(args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(75), "deja {args:?}: {err}");
        assert!(err.contains("being built for the first time") && err.contains("10 of 40 sources") && err.contains("25%"), "{err}");
    }
    drop(lock);
    // The builder died (nobody holds the lock): its leftover file is ignored.
    let out = h.deja(&["search", "nightly", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

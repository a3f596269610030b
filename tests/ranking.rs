//! Ranking of the `deja` binary: the same history gives byte-identical `--json`
//! answers however it was indexed (one thread or two, one source set before the
//! other), and the recall commands find what only an error trace or a misspelling
//! names.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use deja_adapters::deja_adapter_claude::FORMAT as CLAUDE;
use deja_adapters::deja_adapter_codex::CodexFormat;
use deja_core::{HarnessFormat, SynthSession, SynthTurn, Timestamp};

/// 2026-03-01T00:00:00Z plus `day` days and `s` seconds.
fn at(day: i64, s: i64) -> Timestamp {
    Timestamp(1_772_323_200_000 + day * 86_400_000 + s * 1000)
}

fn id(n: usize) -> String {
    format!("{n:08x}-1111-4222-8333-944445555666")
}

/// One home, several indexes of it.
struct Home {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

impl Home {
    fn new() -> Home {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().to_path_buf();
        let home = root.join("home");
        std::fs::create_dir_all(&home).expect("home");
        std::fs::create_dir_all(root.join("work")).expect("cwd");
        Home { _tmp: tmp, root, home }
    }

    fn write(&self, f: &dyn HarnessFormat, s: SynthSession) {
        f.write_synthetic(&self.home, &s).expect("write synthetic session");
    }

    fn deja(&self, index: &str, threads: &str, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_deja"))
            .args(args)
            .current_dir(self.root.join("work"))
            .env_clear()
            .env("DEJA_WATCH", "off")
            .env("HOME", &self.home)
            .env("DEJA_INDEX_DIR", self.root.join(index))
            // Each index its own archive: a shared one would restore the stashed store's
            // sessions into a build that is meant not to have seen them yet.
            .env("DEJA_DATA_DIR", self.root.join(format!("{index}-data")))
            .env("DEJA_INDEX_THREADS", threads)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .output()
            .expect("run deja")
    }

    fn index(&self, index: &str, threads: &str) {
        let out = self.deja(index, threads, &["index", "--quiet"]);
        assert!(out.status.success(), "deja index: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// Moves a store out of the home (and back), so an index sees it later.
    fn stash(&self, store: &str, away: bool) {
        let (home, aside) = (self.home.join(store), self.root.join(format!("aside-{}", store.trim_start_matches('.'))));
        let (from, to): (&Path, &Path) = if away { (&home, &aside) } else { (&aside, &home) };
        std::fs::rename(from, to).expect("move the store");
    }
}

/// Sessions built to tie: 90 sessions in two harnesses saying the same things at the
/// same times (three groups of start times), so scores are equal across hundreds of
/// turns and only the tie-break orders them; a few distinct ones for the other tiers.
fn tied_home() -> Home {
    let h = Home::new();
    for n in 0..90 {
        let day = (n % 3) as i64;
        let turns = vec![
            SynthTurn::User { text: "the staging pool refused connections again".into(), time: at(day, 1) },
            SynthTurn::Assistant { text: "Raising the pool size for staging fixed the refused connections.".into(), time: at(day, 2) },
            SynthTurn::User { text: "we decided the pool stays at forty in staging".into(), time: at(day, 3) },
        ];
        let s = SynthSession {
            id: id(n),
            project: format!("/src/app{}", n % 4),
            title: Some("staging pool refused connections".into()),
            started: at(day, 0),
            turns,
        };
        if n % 2 == 0 {
            h.write(&CLAUDE, s);
        } else {
            h.write(&CodexFormat, s);
        }
    }
    let distinct = [
        ("refreshing the token cache made the login flaky", "/src/auth"),
        ("the invoice rounding uses banker's rounding now", "/src/billing"),
        ("pgbouncer listens on port 6432 in production", "/src/pool"),
    ];
    for (i, (text, project)) in distinct.iter().enumerate() {
        let n = 100 + i;
        let s = SynthSession {
            id: id(n),
            project: project.to_string(),
            title: None,
            started: at(5 + i as i64, 0),
            turns: vec![
                SynthTurn::User { text: text.to_string(), time: at(5 + i as i64, 1) },
                SynthTurn::Shell {
                    command: "cargo test".into(),
                    output: "error[E0425]: cannot find value `x`\n --> src/main.rs:3:5".into(),
                    exit_code: 101,
                    time: at(5 + i as i64, 2),
                },
            ],
        };
        h.write(&CLAUDE, s);
    }
    h
}

#[test]
fn the_same_history_gives_the_same_answers_however_it_was_indexed() {
    let h = tied_home();
    h.index("one-thread", "1");
    h.index("two-threads", "2");
    // Claude's sessions first, then Codex's; and the other way round.
    h.stash(".codex", true);
    h.index("claude-first", "2");
    h.stash(".codex", false);
    h.index("claude-first", "2");
    h.stash(".claude", true);
    h.index("codex-first", "2");
    h.stash(".claude", false);
    h.index("codex-first", "2");

    let asks: &[&[&str]] = &[
        &["search", "staging pool", "--json", "--limit", "40"],
        &["search", "refused connections", "--json", "--limit", "7"],
        &["search", "refreshed tokens", "--json"],
        &["search", "pgbouncr", "--json"],
        &["search", "what did we decide about the pool size for staging?", "--json", "--limit", "25"],
        &["ctx", "pool staging", "--json"],
        &["blame", "src/main.rs", "--json"],
        &["how", "cargo test", "--json"],
    ];
    for ask in asks {
        let mut args = ask.to_vec();
        args.push("--no-refresh");
        let answer = |index: &str| {
            let out = h.deja(index, "2", &args);
            assert!(out.status.success(), "deja {args:?} on {index}: {}", String::from_utf8_lossy(&out.stderr));
            out.stdout
        };
        let first = answer("one-thread");
        let v: serde_json::Value = serde_json::from_slice(&first).expect("json");
        // Every question has answers to order, or the comparison proves nothing.
        let listed = ["hits", "commands"].iter().filter_map(|k| v[k].as_array()).map(Vec::len).max().unwrap_or(0);
        assert!(listed > 0 || v["session"].is_object(), "{ask:?}: {v}");
        for other in ["two-threads", "claude-first", "codex-first"] {
            let got = answer(other);
            assert!(
                got == first,
                "{ask:?} differs between one-thread and {other}:\n{}\n---\n{}",
                String::from_utf8_lossy(&first),
                String::from_utf8_lossy(&got)
            );
        }
    }
}

#[test]
fn blame_finds_a_file_named_only_in_an_error_trace() {
    let h = tied_home();
    h.index("index", "2");
    // The three distinct sessions never touched src/main.rs: a compiler pointed at it.
    let r: serde_json::Value = serde_json::from_slice(&h.deja("index", "2", &["blame", "src/main.rs", "--json"]).stdout).expect("json");
    assert_eq!(r["tier"], "exact", "{r}");
    let hits = r["hits"].as_array().expect("hits");
    let ids: Vec<&str> = hits.iter().filter_map(|x| x["session"]["id"].as_str()).collect();
    assert_eq!(ids.len(), 3, "{r}");
    assert!(ids.iter().all(|i| [id(100), id(101), id(102)].iter().any(|x| x == i)), "{r}");
    assert!(hits.iter().all(|x| x["action"] == "discussed"), "{r}");
    // A misspelled name falls back to the nearest name the history has.
    let r: serde_json::Value = serde_json::from_slice(&h.deja("index", "2", &["blame", "src/mian.rs", "--json"]).stdout).expect("json");
    assert_eq!(r["tier"], "fuzzy", "{r}");
    assert_eq!(r["hits"].as_array().map(Vec::len), Some(3), "{r}");
    assert!(r["path"].as_str().is_some_and(|p| p.ends_with("src/main.rs")), "{r}");
}

#[test]
fn fix_and_how_fall_back_to_near_spellings() {
    let h = crate::support::recall_home::Home::planted(false);
    h.index();
    // Every word as typed: exact.
    let r = h.json(&["how", "cargo", "test", "--json"]);
    assert_eq!(r["tier"], "exact", "{r}");
    // A typo no command line has: the near spelling that one does.
    let r = h.json(&["how", "cargo", "tset", "--json"]);
    assert_eq!(r["tier"], "fuzzy", "{r}");
    assert!(r["commands"][0]["command"].as_str().is_some_and(|c| c.starts_with("cargo test")), "{r}");
    // An error with three words misspelled shares too few words as typed.
    let r = h.json(&["fix", "ModuleNotFoundEror: No module named 'pyscopg2'", "--json"]);
    assert_eq!(r["tier"], "fuzzy", "{r}");
    assert_eq!(r["fixes"][0]["session"]["id"], crate::support::recall_home::PSYCOPG_SESSION, "{r}");
    // Words nothing is near still find nothing.
    let out = h.deja(&["how", "zzqxv", "wqqpt"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
}

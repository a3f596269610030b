//! Resume and handoff, end to end: `deja show`, search hits (text and JSON) and recall
//! digests carry the command that reopens a session in its harness, or say why there is
//! none; `deja handoff` starts the target harness with the digest as its first prompt
//! (a stand-in binary on `PATH` records what it was given), prints it to paste where the
//! harness cannot take one, and refuses what it cannot do.

use std::path::Path;
use std::process::{Command, Output};

use crate::e2e::{build_home, Home, CLAUDE_SESSION, CODEX_THREAD, DSH_SESSION};

fn indexed_home() -> Home {
    let h = Home::new();
    build_home(&h);
    assert!(h.deja(&["index"]).status.success());
    h
}

/// `deja` with `PATH` set to `bin` only, run in `cwd`.
fn deja_with_path(h: &Home, bin: &Path, cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_deja"))
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("DEJA_WATCH", "off")
        .env("HOME", &h.home)
        .env("DEJA_INDEX_DIR", &h.index)
        .env("PATH", bin)
        .output()
        .expect("run deja")
}

#[test]
fn show_and_search_carry_the_resume_command_or_why_there_is_none() {
    let h = indexed_home();
    let claude = h.json(&["show", CLAUDE_SESSION, "--json"]);
    assert_eq!(claude["resume"]["argv"], serde_json::json!(["claude", "--resume", CLAUDE_SESSION]), "{claude}");
    // /src/app is not on this machine: no `cd` into it, and the note says where to run it.
    assert_eq!(claude["resume"]["command"], format!("claude --resume {CLAUDE_SESSION}"));
    assert!(claude["resume"]["note"].as_str().unwrap_or("").contains("/src/app"), "{claude}");

    let codex = h.json(&["show", CODEX_THREAD, "--json"]);
    assert_eq!(codex["resume"]["command"], format!("codex resume {CODEX_THREAD}"));
    assert!(codex["resume"].get("note").is_none(), "codex resumes anywhere: {codex}");

    let dsh = h.json(&["show", DSH_SESSION, "--json"]);
    assert!(dsh["resume"].is_null(), "{dsh}");
    assert!(dsh["resume_unavailable"].as_str().unwrap_or("").contains("no resume"), "{dsh}");

    let hits = h.json(&["search", "nightly", "--json"]);
    let hit = &hits["hits"][0];
    assert_eq!(hit["session"]["id"], CLAUDE_SESSION);
    assert_eq!(hit["resume"]["argv"][0], "claude");
    let text = String::from_utf8_lossy(&h.deja(&["search", "nightly"]).stdout).into_owned();
    assert!(text.contains(&format!("↻ claude --resume {CLAUDE_SESSION}")), "{text}");
    let shown = String::from_utf8_lossy(&h.deja(&["show", &CLAUDE_SESSION[..8]]).stdout).into_owned();
    assert!(shown.contains(&format!("resume   claude --resume {CLAUDE_SESSION}")), "{shown}");
    // The digest an agent gets (`ctx`, MCP `context`/`handoff`) ends with it too.
    let ctx = String::from_utf8_lossy(&h.deja(&["ctx", CLAUDE_SESSION]).stdout).into_owned();
    assert!(ctx.contains("## Resume") && ctx.contains(&format!("claude --resume {CLAUDE_SESSION}")), "{ctx}");
}

#[test]
fn handoff_starts_the_target_with_the_digest_as_its_first_prompt() {
    let h = indexed_home();
    let bin = h.home.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let record = h.home.join("codex-was-given");
    let script = format!("#!/bin/sh\npwd > '{0}'\nfor a in \"$@\"; do printf '%s\\0' \"$a\" >> '{0}'; done\n", record.display());
    let codex = bin.join("codex");
    std::fs::write(&codex, script).expect("script");
    std::fs::set_permissions(&codex, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    // PATH holds only the stand-in; its `#!/bin/sh` line needs no PATH.
    let out = deja_with_path(&h, &bin, &h.home, &["handoff", &CLAUDE_SESSION[..8], "--to", "codex"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let given = std::fs::read(&record).expect("the stand-in ran");
    let given = String::from_utf8_lossy(&given);
    let (cwd, args) = given.split_once('\n').expect("pwd line");
    assert_eq!(Path::new(cwd), h.home.canonicalize().expect("home"), "the session's directory is gone, so it runs here");
    let args: Vec<&str> = args.split('\0').filter(|a| !a.is_empty()).collect();
    assert_eq!(args.len(), 1, "one prompt argument: {args:?}");
    let prompt = args[0];
    assert!(prompt.starts_with("<deja-recall mode=\"handoff\">"), "{prompt}");
    assert!(prompt.contains("nightly") && prompt.contains("Untrusted"), "{prompt}");
    assert!(!prompt.contains("sk-proj-"), "redacted on the way out: {prompt}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("handing") && stderr.contains("<digest>"), "{stderr}");

    // --json says what would run and starts nothing.
    std::fs::remove_file(&record).expect("rm");
    let out = deja_with_path(&h, &bin, &h.home, &["handoff", CLAUDE_SESSION, "--to", "codex", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["mode"], "exec");
    assert_eq!(v["argv"][0], "codex");
    assert_eq!(v["argv"][1], v["prompt"]);
    assert!(!record.exists(), "--json must not start the harness");
}

#[test]
fn handoff_prints_the_digest_where_it_cannot_start_the_harness() {
    let h = indexed_home();
    let empty = h.home.join("empty-bin");
    std::fs::create_dir_all(&empty).expect("bin");
    // Hermes takes no start-with-prompt flag: printed to paste, exit 0.
    let out = deja_with_path(&h, &empty, &h.home, &["handoff", CODEX_THREAD, "--to", "hermes"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("<deja-recall mode=\"handoff\">"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("paste"), "{}", String::from_utf8_lossy(&out.stderr));
    // Claude Code is not installed here: named, printed to paste, exit 1.
    let out = deja_with_path(&h, &empty, &h.home, &["handoff", CODEX_THREAD, "--to", "claude"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`claude` (Claude Code) is not on PATH"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("go test"), "the codex session's digest");
    // --print never starts anything, whatever the target.
    let out = deja_with_path(&h, &empty, &h.home, &["handoff", CODEX_THREAD, "--print"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("<deja-recall"));
    // Refusals name the problem.
    let out = deja_with_path(&h, &empty, &h.home, &["handoff", CODEX_THREAD, "--to", "nosuch"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown harness `nosuch`"));
    let out = deja_with_path(&h, &empty, &h.home, &["handoff", "ffffffff", "--to", "codex"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session id starts with `ffffffff`"));
    let out = deja_with_path(&h, &empty, &h.home, &["handoff", "--to", "codex"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session of this project"), "{}", String::from_utf8_lossy(&out.stderr));
}

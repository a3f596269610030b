//! Every test of deja-adapter-cherrystudio, in one test binary: the conformance kit, then
//! the rules that matter most for Cherry Studio's runtimes (snapshot runs collapsed, the
//! pi store read by its header, moved app dirs).

use deja_adapter_cherrystudio::{collapse_snapshots, CherrystudioFormat};
use deja_core::{ExitStatus, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    CherrystudioFormat,
    switch "DEJA_INCLUDE_SUBAGENTS",
    wires "XDG_CONFIG_HOME" => ".config"
);

fn home() -> std::path::PathBuf {
    deja_core::fixture_home!()
}

fn sessions(env: &StoreEnv) -> Vec<Session> {
    deja_core::testkit::read_all(&CherrystudioFormat, env, &ParseOptions::default())
}

#[test]
fn claude_runtime_collapses_snapshot_runs_and_keeps_work() {
    let all = sessions(&StoreEnv::with_home(home()));
    let main = all.iter().find(|s| s.id == "5a6b7c80-0000-4000-8000-000000000001").expect("main session");
    assert_eq!(main.harness, "cherrystudio");
    assert_eq!(main.project.as_deref(), Some("/src/shop"));
    let answers: Vec<&str> = main.turns.iter().filter(|t| t.role == Role::Assistant).map(|t| t.text.as_str()).collect();
    assert!(answers.contains(&"The pool size is 2; raising it to 20."), "one reply, the longest snapshot: {answers:?}");
    assert!(answers.contains(&"Steps:\n1. review\n2. report back"), "a multi-line reply stays whole: {answers:?}");
    assert!(!answers.contains(&"The pool"), "earlier snapshots are gone");
    let test = main.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("cargo test checkout")).expect("call");
    assert_eq!(test.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(101)));
    assert!(main.turns.iter().any(|t| t.edit.as_ref().is_some_and(|e| e.new.as_deref().is_some_and(|n| n.contains("pool_size = 20")))));
    assert!(main.turns.iter().any(|t| t.role == Role::Summary));
    assert!(!main.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning is not indexed by default");
    let mut indexed = main.clone();
    deja_core::normalize::normalize(&mut indexed, &Default::default(), CherrystudioFormat.info().injected);
    assert!(indexed.turns.iter().any(|t| t.role == Role::User && t.text == "why is checkout slow?"), "the reminder is stripped");
    let review = all.iter().find(|s| s.id == "c9d0").expect("sub-agent session");
    assert_eq!(review.parent.as_deref(), Some(main.id.as_str()));
    assert!(all.iter().any(|s| s.project.as_deref() == Some("/src/legacy")), "the pre-Data/Agents root is read");
}

#[test]
fn pi_runtime_is_read_by_its_header() {
    let all = sessions(&StoreEnv::with_home(home()));
    let pi = all.iter().find(|s| s.id == "0199bb10-0000-7000-8000-000000000003").expect("pi session");
    assert_eq!(pi.harness, "cherrystudio");
    assert_eq!(pi.project.as_deref(), Some("/src/blog"));
    let hugo = pi.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("hugo --minify")).expect("call");
    assert_eq!(hugo.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(255)));
    assert!(pi.turns.iter().any(|t| t.role == Role::Summary));
}

#[test]
fn dsh_runtime_is_read_by_the_shared_reader() {
    let all = sessions(&StoreEnv::with_home(home()));
    let dsh = all.iter().find(|s| s.id == "7d8e9fa0-0000-4000-8000-000000000004").expect("dsh session");
    assert_eq!(dsh.harness, "cherrystudio");
    assert_eq!(dsh.project.as_deref(), Some("/src/cache"));
    let users: Vec<&str> = dsh.turns.iter().filter(|t| t.role == Role::User).map(|t| t.text.as_str()).collect();
    assert_eq!(users, ["why is the cache cold after deploys?"], "the runtime context is the harness's own text");
    let warm = dsh.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("make warm")).expect("call");
    assert_eq!(warm.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(2)));
}

#[test]
fn boot_config_moves_the_app_dir() {
    let tmp = tempfile::tempdir().expect("tmp");
    let moved = tmp.path().join("cherry");
    let home = tmp.path().join("home");
    let from = self::home().join(".config/CherryStudio/.claude/projects/-src-legacy");
    let to = moved.join(".claude/projects/-src-legacy");
    std::fs::create_dir_all(&to).expect("mkdir");
    for e in std::fs::read_dir(&from).expect("fixture dir") {
        let e = e.expect("entry");
        std::fs::copy(e.path(), to.join(e.file_name())).expect("copy");
    }
    std::fs::create_dir_all(home.join(".cherrystudio")).expect("mkdir");
    let config =
        serde_json::json!({"app.user_data_path": {"/opt/cherry": moved.display().to_string(), "/opt/home": home.display().to_string()}});
    std::fs::write(home.join(".cherrystudio/boot-config.json"), config.to_string()).expect("write");
    let found = CherrystudioFormat.discover(&StoreEnv::with_home(&home)).sources;
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].path.starts_with(&moved));
}

#[test]
fn only_snapshot_runs_collapse() {
    assert_eq!(collapse_snapshots("The pool\nThe pool size is\nThe pool size is 20.").as_deref(), Some("The pool size is 20."));
    assert_eq!(collapse_snapshots("Step one.\nStep one.\nStep two.").as_deref(), Some("Step one.\nStep two."));
    assert_eq!(collapse_snapshots("First line.\nSecond line."), None);
    assert_eq!(collapse_snapshots("single"), None);
}

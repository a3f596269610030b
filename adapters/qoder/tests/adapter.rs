//! Every test of deja-adapter-qoder, in one test binary: the conformance kit, then the
//! rules that matter most for this dialect of the Claude-shaped family (sidecar, roots,
//! sub-agent naming).

use deja_adapter_qoder::QoderFormat;
use deja_core::{ExitStatus, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    QoderFormat,
    switch "DEJA_INCLUDE_SUBAGENTS"
);

fn home() -> std::path::PathBuf {
    deja_core::fixture_home!()
}

fn fixture_sessions() -> Vec<Session> {
    deja_core::testkit::read_all(&QoderFormat, &StoreEnv::with_home(home()), &ParseOptions::default())
}

#[test]
fn the_main_session_reads_as_a_claude_transcript_with_its_sidecar() {
    let sessions = fixture_sessions();
    let main = sessions.iter().find(|s| s.id == "9a8b7c6d-0000-4000-8000-000000000001").expect("main session");
    assert_eq!(main.harness, "qoder");
    assert_eq!(main.title.as_deref(), Some("Cart total"), "the sidecar title");
    assert_eq!(main.project.as_deref(), Some("/src/shop"));
    assert_eq!((main.kind.as_deref(), main.parent.as_deref()), (Some("fork"), Some("5e4d3c2b-0000-4000-8000-000000000000")));
    let test = main.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("npm test")).expect("npm test");
    assert_eq!(test.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(1)));
    assert!(main.turns.iter().any(|t| t.edit.as_ref().is_some_and(|e| e.old == "total = 0")));
    assert!(main.turns.iter().any(|t| t.role == Role::Summary));
    assert!(!main.turns.iter().any(|t| t.role == Role::Reasoning), "reasoning is not indexed by default");
    let mut indexed = main.clone();
    deja_core::normalize::normalize(&mut indexed, &Default::default(), QoderFormat.info().injected);
    assert!(indexed.turns.iter().any(|t| t.role == Role::User && t.text == "add a cart total"), "the reminder is stripped");
}

#[test]
fn sidecar_working_dir_continuations_flat_files_and_subagents() {
    let sessions = fixture_sessions();
    let docs = sessions.iter().find(|s| s.id == "1b2c3d4e-0000-4000-8000-000000000002").expect("qoderwork session");
    assert_eq!(docs.project.as_deref(), Some("/src/docs"), "lines carry no cwd: the sidecar's working_dir");
    assert_eq!((docs.kind.as_deref(), docs.parent.as_deref()), (Some("continuation"), Some("0f0e0d0c-0000-4000-8000-000000000009")));
    let flat = sessions.iter().find(|s| s.id == "7d6c5b4a-0000-4000-8000-000000000003").expect("shared-cache session");
    assert_eq!(flat.project.as_deref(), Some("/src/ide-app"));
    let sub = sessions.iter().find(|s| s.kind.as_deref() == Some("subagent")).expect("sub-agent");
    assert_eq!(sub.id, "9a8b7c6d-0000-4000-8000-000000000001:subagent:agent-c3d4");
    assert_eq!(sub.parent.as_deref(), Some("9a8b7c6d-0000-4000-8000-000000000001"));
    assert!(!sessions.iter().any(|s| s.turns.iter().any(|t| t.text.contains("stray agent file"))), "agent-* in a project dir is skipped");
    let off = QoderFormat.discover(&StoreEnv::with_home(home()).set("DEJA_INCLUDE_SUBAGENTS", "0")).sources;
    assert!(!off.iter().any(|s| s.path.to_string_lossy().contains("subagents")));
}

#[test]
fn cli_titles_and_branches_come_from_the_transcript_lines() {
    // Shaped as Qoder CLI 1.1.52's code writes them: no sidecar, `ai-title` and
    // `custom-title` lines, and a `/branch` copy whose copied lines carry `forkedFrom`.
    let sessions = fixture_sessions();
    let main = sessions.iter().find(|s| s.id == "3c1f0a2e-0000-4000-8000-0000000000a1").expect("cli session");
    assert_eq!(main.title.as_deref(), Some("Smoke check and VERSION file"), "the ai-title line");
    assert_eq!((main.kind.as_deref(), main.parent.as_deref()), (None, None));
    assert_eq!(main.project.as_deref(), Some("/work/cart-api"));
    let smoke =
        main.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("./smoke.sh --quick")).expect("smoke");
    assert_eq!(smoke.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(0)));
    assert_eq!(smoke.text, "smoke: 4 checks passed");
    let grep =
        main.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("grep -q 0.4.1 CHANGELOG.md")).expect("grep");
    assert_eq!(grep.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(1)));
    assert!(main.turns.iter().any(|t| t.edit.as_ref().is_some_and(|e| e.old == "0.4.0" && e.new.as_deref() == Some("0.4.1"))));
    let branch = sessions.iter().find(|s| s.id == "3c1f0a2e-0000-4000-8000-0000000000a2").expect("branch");
    assert_eq!(branch.title.as_deref(), Some("Smoke check and VERSION file (Branch 2)"), "custom-title beats a later ai-title");
    assert_eq!((branch.kind.as_deref(), branch.parent.as_deref()), (Some("fork"), Some("3c1f0a2e-0000-4000-8000-0000000000a1")));
    assert!(branch.turns.iter().any(|t| t.role == Role::User && t.text == "skip the VERSION file, just list the checks"));
}

#[test]
fn qoder_config_dir_name_renames_the_cli_root_and_nothing_else() {
    // `QODER_CONFIG_DIR_NAME` names the config directory under the home (or under
    // `QODER_CLI_HOME`); `~/.qoderwork` and the IDE cache do not move with it.
    let tmp = tempfile::tempdir().expect("tempdir");
    let home_dir = tmp.path().join("home");
    deja_core::testkit::materialize_home(&home().join(".qoder"), &home_dir.join("qoder-alt")).expect("copy");
    deja_core::testkit::materialize_home(&home().join(".qoderwork"), &home_dir.join(".qoderwork")).expect("copy");
    let found = |env: StoreEnv| -> Vec<String> {
        QoderFormat
            .discover(&env)
            .sources
            .iter()
            .filter_map(|s| s.path.strip_prefix(&home_dir).ok().and_then(|p| p.components().next()))
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect()
    };
    let named = found(StoreEnv::with_home(&home_dir).set("QODER_CONFIG_DIR_NAME", "qoder-alt"));
    assert!(named.contains(&"qoder-alt".to_string()) && named.contains(&".qoderwork".to_string()), "{named:?}");
    let base = tmp.path().join("base");
    deja_core::testkit::materialize_home(&home().join(".qoder"), &base.join("qoder-alt")).expect("copy");
    let env = StoreEnv::with_home(&home_dir).set("QODER_CLI_HOME", base.display().to_string()).set("QODER_CONFIG_DIR_NAME", "qoder-alt");
    let under_base = QoderFormat.discover(&env).sources.iter().filter(|s| s.path.starts_with(base.join("qoder-alt/projects"))).count();
    assert_eq!(under_base, 4, "the name applies under QODER_CLI_HOME too");
    // Qoder refuses a name that is not one plain component: it does not send discovery
    // anywhere else.
    let refused = found(StoreEnv::with_home(&home_dir).set("QODER_CONFIG_DIR_NAME", "../qoder-alt"));
    assert!(!refused.contains(&"qoder-alt".to_string()), "{refused:?}");
}

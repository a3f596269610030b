//! Every test of deja-adapter-jetbrains, in one test binary: the conformance kit, then the
//! rules that matter most for AI Assistant's workspace XML and `.events` logs.

use deja_adapter_jetbrains::JetBrainsFormat;
use deja_core::testkit::session;
use deja_core::{FileAction, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(JetBrainsFormat);

fn home() -> std::path::PathBuf {
    deja_core::fixture_home!()
}

fn sessions() -> Vec<Session> {
    deja_core::testkit::read_readable(&JetBrainsFormat, &StoreEnv::with_home(home()), &ParseOptions::default())
}

#[test]
fn plain_chat_from_workspace_xml() {
    let all = sessions();
    let s = session(&all, "c-7f");
    assert_eq!(s.title.as_deref(), Some("Gradle cache"));
    let project = format!("{}/src/gradle-app", home().display());
    assert_eq!(s.project.as_deref(), Some(project.as_str()), "$USER_HOME$ is the home the config root sits in");
    let turns: Vec<(Role, &str)> = s.turns.iter().map(|t| (t.role, t.text.as_str())).collect();
    assert_eq!(
        turns,
        vec![
            (Role::User, "why is the build cold?"),
            (Role::Assistant, "The cache key includes a timestamp.\n\nDrop `<timestamp>` from the key & rebuild."),
            (Role::User, "how do I drop it?"),
        ]
    );
    assert_eq!(s.turns[1].time.map(|t| t.millis()), Some(1_790_000_000_001), "start + i ms");
    assert_eq!(s.updated.map(|t| t.millis()), Some(1_790_000_600_000), "modifiedAt bumps the end");
}

#[test]
fn agent_chat_from_events() {
    let all = sessions();
    let s = session(&all, "a-91");
    assert!(!s.turns.iter().any(|t| t.text.contains("XML keeps only")), "the .events log replaces the XML prompts");
    assert_eq!((s.turns[0].role, s.turns[0].text.as_str()), (Role::User, "add a test"));
    assert_eq!(s.turns[1].text, "I'll add a test for the cache key.", "text chunks accumulate");
    let view = &s.turns[2];
    assert_eq!(
        view.files.iter().map(|f| f.path.as_str()).collect::<Vec<_>>()[0],
        format!("{}/src/gradle-app/build.gradle.kts", home().display())
    );
    let change = &s.turns[3];
    assert_eq!(change.files.first().map(|f| f.action), Some(FileAction::Write));
    assert_eq!(change.files.get(1).map(|f| f.action), Some(FileAction::Edit));
    let term = &s.turns[4];
    assert_eq!(term.tool.as_ref().and_then(|t| t.command.as_deref()), Some("./gradlew test"));
    assert!(term.tool.as_ref().is_some_and(|t| t.is_error && t.exit.is_none()), "FAILED, no code");
    let last = s.turns.last().expect("a result");
    assert_eq!(last.text, "Added the test; it fails until the key is fixed.");
    assert!(!s.turns.iter().any(|t| t.text.contains("thinking about it")));
    assert!(!all.iter().any(|s| s.id == "a-codex"), "an agent with its own store is skipped");
    assert_eq!(session(&all, "a-noevents").turns[0].text, "an agent prompt whose block log is gone");
}

#[test]
fn file_changes_span_is_the_changed_lines() {
    let all = sessions();
    let change = &session(&all, "a-91").turns[3];
    let edit = change.edit.as_ref().expect("an edit");
    assert_eq!((edit.old.as_str(), edit.new.as_deref()), ("val key = timestamp()", Some("val key = \"fixed\"")));
    assert_eq!(edit.path, "/home/u/src/gradle-app/build.gradle.kts");
}

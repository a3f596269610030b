//! Every test of deja-adapter-aider, in one test binary: the conformance kit, then the rules
//! that matter most for aider's Markdown history.

use deja_adapter_aider::{sha1_hex, AiderFormat};
use deja_core::{HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(
    AiderFormat,
    relocate "AIDER_CHAT_HISTORY_FILE" => "src/app",
    wires "XDG_CONFIG_HOME" => ".config"
);

fn home() -> std::path::PathBuf {
    deja_core::fixture_home!()
}

fn sessions_in(env: &StoreEnv) -> Vec<Session> {
    deja_core::testkit::read_all(&AiderFormat, env, &ParseOptions::default())
}

fn texts(s: &Session) -> Vec<(Role, &str)> {
    s.turns.iter().map(|t| (t.role, t.text.as_str())).collect()
}

#[test]
fn the_pages_example_reads_as_the_page_says() {
    let all = sessions_in(&StoreEnv::with_home(home()));
    let home_file = home().join(".aider.chat.history.md");
    let s: Vec<&Session> = all.iter().filter(|s| s.source.path == home_file).collect();
    assert_eq!(s.len(), 1, "the launch with only status lines is dropped");
    assert_eq!(
        texts(s[0]),
        vec![
            (Role::User, "the date parser rejects ISO weeks\n\ne.g. 2026-W18-1"),
            (
                Role::Assistant,
                "Add a branch for the `W` form:\n\n```python\n#### this line is code, not a user turn\n> and this quote is code too\n```"
            ),
            (Role::User, "thanks"),
        ]
    );
    assert!(s[0].id.starts_with("aider-") && s[0].id.ends_with("-1"));
    assert_eq!(s[0].project.as_deref(), Some(home().display().to_string().as_str()));
    assert!(s[0].started.is_some() && s[0].started == s[0].updated && s[0].turns.iter().all(|t| t.time == s[0].started));
}

#[test]
fn current_release_file_commands_fences_and_recovery() {
    let all = sessions_in(&StoreEnv::with_home(home()));
    let app = home().join("src/app/.aider.chat.history.md");
    let s: Vec<&Session> = all.iter().filter(|s| s.source.path == app).collect();
    assert_eq!(s.len(), 3, "the header after an unclosed fence still starts a session");
    let run = &s[0].turns[0];
    assert_eq!(run.role, Role::ToolCall);
    assert_eq!(run.tool.as_ref().and_then(|t| t.command.as_deref()), Some("cargo test"));
    assert_eq!(run.tool.as_ref().and_then(|t| t.exit.clone()), None);
    assert_eq!(s[0].turns[1].text, "why does cargo test fail?", "the two-space hard break is stripped");
    assert!(s[0].turns[2].text.contains("# aider chat started at 2026-01-01"), "a header inside a fence is code");
    assert_eq!(texts(s[1])[0], (Role::User, "second launch, after the cut-off fence"));
    assert!(s[2].started.is_none(), "an unparseable header time gives no time");
    let ids: Vec<&str> = s.iter().map(|s| s.id.as_str()).collect();
    assert!(ids[0].ends_with("-1") && ids[1].ends_with("-2") && ids[2].ends_with("-3"));
    assert!(!all.iter().any(|s| s.source.path.ends_with("src/deep/a/b/.aider.chat.history.md")), "two levels only");
    assert!(all.iter().any(|s| s.source.path.ends_with("projects/team/svc/.aider.chat.history.md")));
}

#[test]
fn release_0_86_2_launches_keep_only_prompts_answers_and_runs() {
    let all = sessions_in(&StoreEnv::with_home(home()));
    let shop = home().join("projects/shop/.aider.chat.history.md");
    let s: Vec<&Session> = all.iter().filter(|s| s.source.path == shop).collect();
    assert_eq!(s.len(), 2, "one session per launch");
    assert_eq!(
        texts(s[0]),
        vec![(Role::User, "the jwt refresh keeps the old token"), (Role::Assistant, "The refresh path returns the token it was given.")]
    );
    assert_eq!(s[1].turns[0].tool.as_ref().and_then(|t| t.command.as_deref()), Some("cargo test refresh"));
    assert_eq!(
        texts(s[1])[1..],
        [(Role::User, "add a refresh expiry test"), (Role::Assistant, "Added `refresh_expires` next to the other auth tests.")]
    );
    // The first-run release-notes offer and the other status lines are aider's, not speech.
    assert!(s.iter().flat_map(|s| &s.turns).all(|t| !t.text.contains("Would you like") && !t.text.contains("Added auth.rs")));
    assert_eq!(s[0].project.as_deref(), Some(home().join("projects/shop").display().to_string().as_str()));
}

#[test]
fn history_file_variable_takes_a_file_and_roots_a_list() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("chat-log.md");
    std::fs::copy(home().join("projects/team/svc/.aider.chat.history.md"), &file).unwrap();
    let empty = tmp.path().join("home");
    std::fs::create_dir_all(&empty).unwrap();
    let found = AiderFormat.discover(&StoreEnv::with_home(&empty).set("AIDER_CHAT_HISTORY_FILE", file.display().to_string())).sources;
    assert_eq!(found.len(), 1);
    let list = std::env::join_paths([home().join("src"), home().join("projects")]).unwrap();
    let found = AiderFormat.discover(&StoreEnv::with_home(&empty).set("DEJA_AIDER_ROOTS", list.to_string_lossy())).sources;
    assert_eq!(found.len(), 3, "src/app, projects/team/svc and projects/shop");
}

#[test]
fn sha1_matches_known_vectors() {
    assert_eq!(sha1_hex(b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
    assert_eq!(sha1_hex(b""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
}

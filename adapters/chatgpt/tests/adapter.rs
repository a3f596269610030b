//! Every test of deja-adapter-chatgpt, in one test binary: the conformance kit, then the
//! rules that matter most: the active branch, injected context skipped, encrypted
//! generations counted without a key and read with one, the account export.

use std::path::PathBuf;

use deja_adapter_chatgpt::{parse_with_key, ChatGptFormat};
use deja_core::testkit::session;
use deja_core::{HarnessFormat, ParseOptions, Role, Session, SourceRef, StoreEnv};

deja_core::conformance!(
    ChatGptFormat,
    switch "DEJA_CHATGPT_EXPORT",
    switch "DEJA_CHATGPT_KEY"
);

/// The fixtures' key: bytes 0..32, base64.
const KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

fn home() -> PathBuf {
    deja_core::fixture_home!()
}

fn read(env: &StoreEnv, key: Option<&str>) -> (Vec<Session>, Vec<String>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    // Discovery sees the key the way `deja index` would: in the environment.
    let env = match key {
        Some(k) => env.clone().set("DEJA_CHATGPT_KEY", k),
        None => env.clone(),
    };
    for src in ChatGptFormat.discover(&env).sources {
        if let Err(e) = parse_with_key(&src, key, &ParseOptions::default(), &mut out) {
            errors.push(e.to_string());
        }
    }
    (out, errors)
}

#[test]
fn active_branch_without_injected_context() {
    let (all, _) = read(&StoreEnv::with_home(home()), None);
    let s = session(&all, "8c9d0e1f-0000-4000-8000-000000000001");
    let turns: Vec<(Role, &str)> = s.turns.iter().map(|t| (t.role, t.text.as_str())).collect();
    assert_eq!(
        turns,
        vec![
            (Role::User, "regex for 2026-04-02 style dates"),
            (Role::Assistant, "\\d{4}-\\d{2}-\\d{2}"),
            (Role::User, "does it match this screenshot?"),
            (Role::ToolOutput, "True"),
            (Role::Assistant, "Yes, it matches."),
        ],
        "the regenerated draft, the system node and the custom instructions are not in the active branch's speech"
    );
    assert_eq!(s.title.as_deref(), Some("Regex for ISO dates"));
    assert_eq!(s.turns[0].time.map(|t| t.millis()), Some(1_775_124_000_500));
    assert!(s.project.is_none());
    let by_time = session(&all, "5a5a5a5a-0000-4000-8000-000000000002");
    assert_eq!(by_time.turns[0].text, "first by time", "no current_node: ordered by create_time");
}

#[test]
fn encrypted_generations_need_the_key() {
    let (all, errors) = read(&StoreEnv::with_home(home()), None);
    assert!(!all.iter().any(|s| s.id.starts_with("e2e2") || s.id.starts_with("e3e3")));
    assert_eq!(errors.len(), 1, "without a key the encrypted files are not sources: {errors:?}");
    // …but discovery counts them, with what would open them, for `deja harnesses`.
    let locked = ChatGptFormat.discover(&StoreEnv::with_home(home())).locked;
    assert_eq!(locked.len(), 2, "{locked:?}");
    assert!(locked.iter().all(|l| l.reason.contains("set DEJA_CHATGPT_KEY")));
    // Called directly without the key, the parser still says what is missing.
    let enc = ChatGptFormat.discover(&StoreEnv::with_home(home()).set("DEJA_CHATGPT_KEY", KEY)).sources;
    let enc = enc.iter().find(|s| s.generation == Some(3)).expect("a v3 source");
    let err = parse_with_key(enc, None, &ParseOptions::default(), &mut Vec::new()).unwrap_err().to_string();
    assert!(err.contains("set DEJA_CHATGPT_KEY"), "{err}");
    let (all, errors) = read(&StoreEnv::with_home(home()), Some(KEY));
    assert_eq!(session(&all, "e2e2e2e2-0000-4000-8000-000000000003").turns[1].text, "Yes, with AES-256-GCM.");
    assert_eq!(session(&all, "e3e3e3e3-0000-4000-8000-000000000005").title.as_deref(), Some("Encrypted v3 chat"));
    assert_eq!(errors.len(), 1, "only the broken v1 file: {errors:?}");
    let wrong = "AQECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    let (_, errors) = read(&StoreEnv::with_home(home()), Some(wrong));
    assert_eq!(errors.iter().filter(|e| e.contains("wrong DEJA_CHATGPT_KEY")).count(), 2);
}

#[test]
fn account_export_file_or_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let export = home().join("Downloads/chatgpt-export");
    let (all, _) = read(&StoreEnv::with_home(tmp.path()).set("DEJA_CHATGPT_EXPORT", export.display().to_string()), None);
    assert_eq!(all.len(), 2, "both parts, not the HTML");
    let one = session(&all, "x1");
    assert_eq!((one.turns[0].role, one.turns[1].text.as_str()), (Role::User, "exported answer"));
    assert!(all.iter().any(|s| s.id == "conversations-001-0"), "no id: the file stem and index");
    let file = export.join("conversations.json");
    let found = ChatGptFormat.discover(&StoreEnv::with_home(tmp.path()).set("DEJA_CHATGPT_EXPORT", file.display().to_string())).sources;
    assert_eq!(found, vec![SourceRef::file(file)]);
    assert!(
        !ChatGptFormat.discover(&StoreEnv::with_home(home())).sources.iter().any(|s| s.path.starts_with(&export)),
        "no default export location"
    );
}

//! Every test of deja-adapter-zencoder, in one test binary: the conformance kit
//! (snapshots of every source in `tests/fixtures/home/`, arbitrary bytes, mutated
//! fixtures, store overrides), then the rules that matter most for Zencoder's sessions.

use deja_adapter_zencoder::{working_directory, ZencoderFormat};
use deja_core::testkit::session;
use deja_core::{FileAction, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(ZencoderFormat);

fn fixture_sessions() -> Vec<Session> {
    let home = deja_core::fixture_home!();
    let mut out = Vec::new();
    let found = ZencoderFormat.discover(&StoreEnv::with_home(&home)).sources;
    assert_eq!(found.len(), 4, "files below the sessions directory are not sources");
    for src in found {
        ZencoderFormat.parse(&src, &ParseOptions::default(), &mut out).expect("a fixture parses");
    }
    out
}

#[test]
fn the_pages_example() {
    let all = fixture_sessions();
    assert!(!all.iter().any(|s| s.id == "empty-777"), "header and system only is not a session");
    let s = session(&all, "abc-123");
    assert_eq!((s.project.as_deref(), s.parent.as_deref()), (Some("/src/api"), None));
    assert_eq!((s.turns[0].role, s.turns[0].text.as_str()), (Role::User, "why is /health slow?"));
    assert_eq!(s.turns.iter().filter(|t| t.role == Role::User).count(), 1, "tagged parts are injected context");
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning || t.text.contains("todo list") || t.text.contains("<rules>")));
    let read = s.turns.iter().find(|t| t.files.iter().any(|f| f.action == FileAction::Read)).expect("read");
    assert_eq!(read.text, "func Health() { db.Ping() }");
    assert_eq!(s.turns.iter().find_map(|t| t.edit.as_ref()).map(|e| e.old.as_str()), Some("db.Ping()"));
    let test = s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("go test ./api/...")).expect("bash");
    assert!(test.tool.as_ref().is_some_and(|t| t.is_error) && test.text.contains("FAIL: TestHealth"));
}

#[test]
fn continuations_keep_their_parent() {
    let all = fixture_sessions();
    let s = session(&all, "def-456");
    assert_eq!((s.parent.as_deref(), s.kind.as_deref()), (Some("abc-123"), Some("continuation")));
    assert!(session(&all, "stem-only").turns.iter().any(|t| t.role == Role::User));
}

#[test]
fn the_banner_names_the_working_directory() {
    assert_eq!(working_directory("Environment\nWorking directory: /src/api\nOS: linux").as_deref(), Some("/src/api"));
    assert_eq!(working_directory("Environment"), None);
}

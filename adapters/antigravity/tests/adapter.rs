//! Every test of deja-adapter-antigravity, in one test binary: the conformance kit, then
//! the rules that matter most for Antigravity's step transcripts.

use deja_adapter_antigravity::AntigravityFormat;
use deja_core::testkit::session;
use deja_core::{FileAction, Role, Session};

deja_core::conformance!(AntigravityFormat);

mod hook;

fn sessions() -> Vec<Session> {
    deja_core::testkit::sessions(&AntigravityFormat, &deja_core::fixture_home!())
}

fn texts(s: &Session, role: Role) -> Vec<&str> {
    s.turns.iter().filter(|t| t.role == role).map(|t| t.text.as_str()).collect()
}

#[test]
fn only_planner_responses_are_speech() {
    let all = sessions();
    assert_eq!(all.len(), 3, "every antigravity* root is read");
    let s = session(&all, "5a1f0c2e-7b3d-4e8a-9c61-0d2e3f4a5b6c");
    assert_eq!(s.project.as_deref(), Some("/w/site"), "conversation_metadata.json, key a prefix of the id");
    assert_eq!(texts(s, Role::User), ["why is the sitemap empty?"], "metadata and settings changes are not speech");
    assert_eq!(texts(s, Role::Assistant), ["I'll check the generator.", "The sitemap now lists every page."]);
    let run = s.turns.iter().find(|t| t.tool.as_ref().is_some_and(|x| x.name == "RUN_COMMAND")).expect("command step");
    assert_eq!(run.tool.as_ref().and_then(|t| t.command.as_deref()), Some("npm run build:sitemap"));
    assert_eq!(run.text, "Task Description: npm run build:sitemap\nexit 0, wrote 0 urls");
    let files: Vec<_> = s.turns.iter().flat_map(|t| &t.files).map(|f| (f.path.as_str(), f.action)).collect();
    assert_eq!(
        files,
        [
            ("/w/site/src/sitemap.ts", FileAction::Read),
            ("/w/site/src/pages", FileAction::Read),
            ("/w/site/src/sitemap.ts", FileAction::Edit)
        ]
    );
    assert_eq!(texts(s, Role::ToolOutput), ["Query: astro sitemap integration\n1. @astrojs/sitemap"]);
}

#[test]
fn projects_from_the_cli_cache_and_from_files() {
    let all = sessions();
    let cli = session(&all, "9e8d7c6b-5a49-4382-a1b0-c9d8e7f6a5b4");
    assert_eq!(cli.project.as_deref(), Some("/w/api"));
    assert_eq!(texts(cli, Role::User), ["run the api tests"]);
    assert_eq!(cli.turns[1].tool.as_ref().and_then(|t| t.command.as_deref()), Some("go test ./..."));
    let old = session(&all, "1b2c3d4e-0000-4000-8000-00000000aaaa");
    assert_eq!(old.project.as_deref(), Some("/home/dev/src/tool"), "the common directory of the files touched");
    assert!(old.turns.iter().any(|t| t.files.iter().any(|f| f.action == FileAction::Write)), "Created file");
}

#[test]
fn project_from_common_directory() {
    use deja_adapter_antigravity::project_from_files;
    let p = |v: &[&str]| project_from_files(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    assert_eq!(p(&["/Users/name/a.txt", "/Users/name/b/c.txt"]), None, "a home directory is no project");
    assert_eq!(p(&["C:\\Users\\dev\\work\\app\\x.ts", "C:/Users/dev/work/app/src/y.ts"]).as_deref(), Some("C:/Users/dev/work/app"));
    assert_eq!(p(&[]), None);
}

//! Every test of deja-adapter-amp, in one test binary: the conformance kit, then the rules
//! that matter most for Amp's thread documents.

use std::path::Path;

use deja_adapter_amp::AmpFormat;
use deja_core::testkit::session;
use deja_core::{ExitStatus, FileAction, HarnessFormat, ParseOptions, Role, Session, StoreEnv, Timestamp};

deja_core::conformance!(
    AmpFormat,
    wires "XDG_CONFIG_HOME" => ".config"
);

fn sessions(opts: &ParseOptions) -> Vec<Session> {
    let home = deja_core::fixture_home!();
    deja_core::testkit::read_readable(&AmpFormat, &StoreEnv::with_home(&home), opts)
}

fn call<'a>(s: &'a Session, id: &str) -> &'a deja_core::Turn {
    s.turns.iter().find(|t| t.tool.as_ref().and_then(|x| x.call_id.as_deref()) == Some(id)).unwrap_or_else(|| panic!("call {id}"))
}

#[test]
fn thread_roles_commands_exit_and_edits() {
    let all = sessions(&ParseOptions::default());
    let s = session(&all, "T-0001");
    assert_eq!(s.project.as_deref(), Some("/home/u/src/my app"), "the decoded file URI");
    assert_eq!(s.turns[0].role, Role::User);
    assert_eq!((s.turns[1].role, s.turns[1].text.as_str()), (Role::Assistant, "checking"));
    let bash = call(s, "tu1");
    assert_eq!(bash.tool.as_ref().and_then(|t| t.command.as_deref()), Some("go test ./..."));
    assert_eq!(bash.tool.as_ref().and_then(|t| t.exit.clone()), Some(ExitStatus::Code(1)));
    assert_eq!(bash.text, "FAIL pkg/x");
    let edit = call(s, "tu2");
    assert_eq!(edit.edit.as_ref().map(|e| (e.old.as_str(), e.new.as_deref())), Some(("a", Some("b"))));
    assert_eq!(edit.time, Timestamp::parse_str("2026-09-21T14:13:25Z"), "no time of its own: the previous message's");
    let rejected = call(s, "tu3");
    assert!(rejected.edit.is_none() && rejected.files.first().is_some_and(|f| f.action == FileAction::Write));
    assert!(rejected.tool.as_ref().is_some_and(|t| t.is_error));
    assert!(call(s, "tu4").edit.as_ref().is_some_and(|e| e.old == "\twg.Wait()"));
    assert_eq!(call(s, "tu5").tool.as_ref().and_then(|t| t.exit.clone()), None, "exitCode -1 is no code");
    assert!(!s.turns.iter().any(|t| t.role == Role::Reasoning || t.text == "system notice"));
    let with = sessions(&ParseOptions { include_reasoning: true });
    assert!(session(&with, "T-0001").turns.iter().any(|t| t.role == Role::Reasoning));
}

#[test]
fn fallbacks_and_rejected_files() {
    let all = sessions(&ParseOptions::default());
    let s = session(&all, "T-0002");
    assert_eq!(s.project.as_deref(), Some("release notes"), "no tree URI: the title");
    assert_eq!(s.turns[1].time, s.turns[0].time, "inherits the previous message's time");
    assert_eq!(session(&all, "T-0003").project.as_deref(), Some("remote repo question"));
    assert!(!all.iter().any(|s| s.id == "T-0004" || s.id == "extra"), "trailing data rejects the file");
    assert!(!all.iter().any(|s| s.title.as_deref() == Some("no id here")));
}

#[test]
fn amp_settings_file_moves_the_mcp_entry() {
    let wiring = AmpFormat.wiring().expect("amp has wiring");
    let env = StoreEnv::with_home("/h").set("AMP_SETTINGS_FILE", "/etc/amp/mine.json");
    let cx = deja_core::wire::WireContext { env: &env, exe: "/bin/deja".into() };
    let files: Vec<_> = wiring.plain(&cx).iter().map(|e| e.file().to_path_buf()).collect();
    assert_eq!(files, vec![std::path::PathBuf::from("/etc/amp/mine.json")]);
    let env = StoreEnv::with_home("/h");
    let cx = deja_core::wire::WireContext { env: &env, exe: "/bin/deja".into() };
    assert_eq!(wiring.plain(&cx)[0].file(), Path::new("/h/.config/amp/settings.json"));
}

//! Every test of deja-adapter-vs-copilot, in one test binary: the conformance kit, then
//! the rules that matter most for Visual Studio Copilot's trace export.

use deja_adapter_vs_copilot::VsCopilotFormat;
use deja_core::{FileAction, HarnessFormat, ParseOptions, Role, Session, StoreEnv};

deja_core::conformance!(VsCopilotFormat);

fn sessions() -> Vec<Session> {
    let home = deja_core::fixture_home!();
    let mut out = Vec::new();
    let sources = VsCopilotFormat.discover(&StoreEnv::with_home(&home)).sources;
    assert_eq!(sources.len(), 1, "the trace directory is one source");
    assert_eq!(sources[0].parts.len(), 1, "the second file is a part");
    for src in sources {
        VsCopilotFormat.parse(&src, &ParseOptions::default(), &mut out).expect("a fixture parses");
    }
    out
}

#[test]
fn conversations_are_stitched_across_files() {
    let all = sessions();
    let c42 = all.iter().find(|s| s.id == "c-42").expect("c-42");
    let users: Vec<&str> = c42.turns.iter().filter(|t| t.role == Role::User).map(|t| t.text.as_str()).collect();
    assert_eq!(users, ["why does the build fail?", "then run the build"], "history repeats are read once");
    assert!(!c42.turns.iter().any(|t| t.text.contains("You are Copilot")), "the system message is no speech");
    let calls: Vec<_> = c42.turns.iter().filter(|t| t.role == Role::ToolCall).collect();
    assert_eq!(calls.len(), 3, "a duplicated execute_tool span is read once");
    assert_eq!(calls[0].files.first().map(|f| (f.path.as_str(), f.action)), Some(("App.csproj", FileAction::Read)));
    assert!(calls[0].text.starts_with("<Project"), "the result's Value is the output");
    assert_eq!(calls[1].tool.as_ref().and_then(|t| t.command.as_deref()), Some("dotnet build"));
    assert_eq!(calls[2].files.first().map(|f| f.action), Some(FileAction::Edit));
    let c43 = all.iter().find(|s| s.id == "c-43").expect("c-43");
    assert_eq!(c43.turns.iter().map(|t| t.role).collect::<Vec<_>>(), [Role::User, Role::Assistant]);
}

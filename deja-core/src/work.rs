//! Work signals shared by every adapter: what a dialect's tool names mean ([`ToolMap`]),
//! which shell commands are worth remembering as "what was run here", and how command
//! lines are shown.

use std::sync::LazyLock;

use regex::Regex;

use crate::model::FileAction;

/// What a tool call does, as far as the work records care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// Runs a shell command line (`tool.command`).
    Shell,
    Read,
    Edit,
    Write,
    /// Anything else (search, web fetch, MCP…): name and result only.
    Other,
}

/// A dialect's tool names, exact and case-sensitive: Claude-shaped logs say `Bash` and
/// `Edit`, pi says `bash` and `edit`, opencode `bash` and `edit`, Gemini
/// `run_shell_command` and `replace`. One table per dialect instead of a `match` per parser.
#[derive(Debug, Clone, Copy)]
pub struct ToolMap {
    pub shell: &'static [&'static str],
    pub read: &'static [&'static str],
    pub edit: &'static [&'static str],
    pub write: &'static [&'static str],
}

impl ToolMap {
    pub fn kind(&self, name: &str) -> ToolKind {
        if self.shell.contains(&name) {
            ToolKind::Shell
        } else if self.read.contains(&name) {
            ToolKind::Read
        } else if self.edit.contains(&name) {
            ToolKind::Edit
        } else if self.write.contains(&name) {
            ToolKind::Write
        } else {
            ToolKind::Other
        }
    }

    /// The file action a call of this tool records, if any.
    pub fn file_action(&self, name: &str) -> Option<FileAction> {
        match self.kind(name) {
            ToolKind::Read => Some(FileAction::Read),
            ToolKind::Edit => Some(FileAction::Edit),
            ToolKind::Write => Some(FileAction::Write),
            ToolKind::Shell | ToolKind::Other => None,
        }
    }
}

static MEANINGFUL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?x)(^|[\s/(])(
            go\s+(test|build|vet|run) | golangci-lint | gofmt | pytest | python3?\s+-m | uv\s+(run|pip) |
            pip3?\s+install | ruff | mypy | npm | npx | pnpm | yarn | bun | cargo | make | cmake | ctest |
            ninja | meson | bazel | buck2 | gh\s+(pr|run|release|issue|workflow|api) | git\s+[a-z][a-z-]* | docker |
            kubectl | helm | terraform | psql | mysql | latexmk | mvn | gradle | dotnet | swift\s+(build|test) |
            bundle\s+exec | rails | rake | rspec | phpunit | composer\s+(install|update|require) | tox | nox |
            jest | vitest | playwright | cypress | deno | tsc | sbt | stack\s+(build|test|run|exec) | cabal |
            ghc | dune | zig | nix | rustc | clang\+\+ | clang | g\+\+ | gcc | pdm\s+run | poetry\s+run | deja
        )($|[\s;|&)])",
    )
    .expect("static regex")
});

const TRIVIAL: &[&str] = &[
    "ls", "cd", "pwd", "cat", "head", "tail", "echo", "grep", "rg", "find", "which", "wc", "sed", "awk", "sleep", "mkdir", "rm", "cp",
    "mv", "chmod", "export", "source", "touch", "open", "printf",
];

/// True for a single-line command where at least one `&&`/`||`/`;`/`|` segment runs a
/// meaningful tool (a build, test, package or VCS command) and does not start with a
/// trivial one (`ls`, `cat`, `grep`…). These are what `deja how` and `deja fix` offer.
pub fn is_meaningful_command(cmd: &str) -> bool {
    let cmd = cmd.trim();
    if cmd.is_empty() || cmd.contains('\n') {
        return false;
    }
    split_segments(cmd).any(|seg| {
        let seg = seg.trim();
        let first = seg.split_whitespace().next().unwrap_or("");
        !TRIVIAL.contains(&first) && MEANINGFUL.is_match(seg)
    })
}

fn split_segments(cmd: &str) -> impl Iterator<Item = &str> {
    cmd.split("&&").flat_map(|s| s.split("||")).flat_map(|s| s.split(';')).flat_map(|s| s.split('|'))
}

/// The shell line out of an argv such as `["/bin/bash", "-lc", "cargo test"]`.
pub fn command_from_argv(argv: &[&str]) -> String {
    if let [shell, flag, script] = argv {
        let shell_name = shell.rsplit(['/', '\\']).next().unwrap_or(shell);
        if matches!(shell_name, "bash" | "sh" | "zsh" | "dash" | "fish" | "pwsh" | "powershell" | "cmd" | "cmd.exe")
            && flag.starts_with(['-', '/'])
        {
            return script.to_string();
        }
    }
    argv.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_builds_and_tests_and_drops_trivia() {
        assert!(is_meaningful_command("cargo test -p deja-core"));
        assert!(is_meaningful_command("cd ci && make nightly"));
        assert!(is_meaningful_command("go test ./invoice/..."));
        assert!(is_meaningful_command("git status"));
        assert!(!is_meaningful_command("ls -la"));
        assert!(!is_meaningful_command("cat Makefile | grep make"));
        assert!(!is_meaningful_command("cargo test\ncargo build"));
        assert!(!is_meaningful_command("echo hello"));
    }

    #[test]
    fn argv_unwraps_shell_scripts() {
        assert_eq!(command_from_argv(&["/bin/bash", "-lc", "cargo test"]), "cargo test");
        assert_eq!(command_from_argv(&["git", "status"]), "git status");
    }
}

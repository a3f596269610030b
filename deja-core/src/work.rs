//! Work signals shared by every adapter: what a dialect's tool names mean ([`ToolMap`]),
//! and the one command classifier: which shell command lines are worth remembering as
//! "what was run here" ([`is_meaningful_command`]), which only look at things
//! ([`is_inspection`]), what program a line runs and the key under which the same
//! invocation from different sessions is counted once.

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

/// True for a single-line command where at least one `&&`/`||`/`;`/`|` stage runs a
/// meaningful tool (a build, test, package or VCS command) and does not start with a
/// trivial one (`ls`, `cat`, `grep`…, after `sudo`/`VAR=value` prefixes). These are what
/// `deja how` and `deja fix` offer.
pub fn is_meaningful_command(cmd: &str) -> bool {
    let cmd = cmd.trim();
    if cmd.is_empty() || cmd.contains('\n') {
        return false;
    }
    segments(cmd).flat_map(|s| s.split('|')).any(|stage| {
        let stage = stage.trim();
        let first = words_of(stage).first().copied().unwrap_or("");
        !TRIVIAL.contains(&first) && MEANINGFUL.is_match(stage)
    })
}

/// Programs that look at things without changing them.
const INSPECTION: &[&str] = &[
    "ls", "cat", "head", "tail", "less", "more", "grep", "egrep", "rg", "ag", "find", "fd", "pwd", "echo", "printf", "which", "type", "wc",
    "sed", "awk", "tree", "file", "stat", "du", "df", "env", "printenv", "date", "whoami", "sleep", "true", "history", "jq", "diff", "cd",
    "clear", "man", "uname", "id", "ps", "top", "nl", "sort", "uniq", "cut", "xxd", "od", "realpath", "dirname", "basename",
];
/// Git subcommands that only read.
const GIT_READS: &[&str] = &["status", "diff", "log", "show", "branch", "remote", "rev-parse", "blame", "ls-files", "describe"];

fn segments(cmd: &str) -> impl Iterator<Item = &str> {
    cmd.split("&&").flat_map(|s| s.split("||")).flat_map(|s| s.split(';')).map(str::trim).filter(|s| !s.is_empty())
}

/// The words of a segment after `sudo`, `time`, `env`, `VAR=value` prefixes, with a
/// leading `./` or directory stripped from the program.
fn words_of(segment: &str) -> Vec<&str> {
    let mut words: Vec<&str> = segment.split_whitespace().collect();
    while let Some(first) = words.first() {
        let is_assign = first.contains('=') && !first.starts_with('-') && first.split('=').next().is_some_and(|k| !k.is_empty());
        if is_assign || matches!(*first, "sudo" | "time" | "env" | "nohup" | "exec" | "command") {
            words.remove(0);
        } else {
            break;
        }
    }
    if let Some(first) = words.first_mut() {
        *first = first.rsplit('/').next().unwrap_or(first);
    }
    words
}

fn segment_is_inspection(segment: &str) -> bool {
    // A pipeline inspects when its first stage does (`cat x | grep y`).
    let first_stage = segment.split('|').next().unwrap_or(segment);
    let words = words_of(first_stage);
    match words.as_slice() {
        [] => true,
        ["git", sub, ..] => GIT_READS.contains(sub),
        [prog, ..] => INSPECTION.contains(prog),
    }
}

/// True when every segment of the line only looks at things.
pub fn is_inspection(cmd: &str) -> bool {
    segments(cmd).all(segment_is_inspection)
}

/// The program the line runs: the first word of its first segment that is not `cd`
/// or an assignment (`cd ci && make nightly` → `make`).
pub fn program(cmd: &str) -> Option<String> {
    segments(cmd)
        .map(words_of)
        .find(|w| w.first().is_some_and(|p| *p != "cd" && *p != "export"))
        .and_then(|w| w.first().map(|p| p.to_string()))
}

/// Program and its first argument that is not a flag (`cargo test -p x` → `cargo
/// test`, `curl -sS http://h/a` → `curl http://h/a`).
pub fn program_and_verb(cmd: &str) -> Option<String> {
    let words = segments(cmd).map(words_of).find(|w| w.first().is_some_and(|p| *p != "cd" && *p != "export"))?;
    let prog = words.first()?;
    Some(match words.iter().skip(1).find(|w| !w.starts_with('-')) {
        Some(verb) => format!("{prog} {verb}"),
        None => prog.to_string(),
    })
}

/// The grouping key of a command line: whitespace collapsed.
pub fn command_key(cmd: &str) -> String {
    cmd.split_whitespace().collect::<Vec<_>>().join(" ")
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
    fn inspection_is_reading_only() {
        assert!(is_inspection("ls -la"));
        assert!(is_inspection("cat Cargo.toml | grep tokio"));
        assert!(is_inspection("git status && git diff"));
        assert!(is_inspection("cd src && rg pool_size"));
        assert!(!is_inspection("cargo test"));
        assert!(!is_inspection("cd ci && make nightly"));
        assert!(!is_inspection("pip install psycopg2-binary"));
        assert!(!is_inspection("git commit -m x"));
        assert!(!is_inspection("./deploy.sh staging"));
    }

    #[test]
    fn program_skips_cd_and_assignments() {
        assert_eq!(program("cd ci && make nightly").as_deref(), Some("make"));
        assert_eq!(program("RUST_LOG=debug cargo test -p x").as_deref(), Some("cargo"));
        assert_eq!(program("sudo /usr/bin/systemctl restart pg").as_deref(), Some("systemctl"));
        assert_eq!(program_and_verb("cargo test -p deja-core").as_deref(), Some("cargo test"));
        assert_eq!(program_and_verb("curl -sS http://localhost:80/a").as_deref(), Some("curl http://localhost:80/a"));
        assert_eq!(program("   "), None);
    }

    #[test]
    fn argv_unwraps_shell_scripts() {
        assert_eq!(command_from_argv(&["/bin/bash", "-lc", "cargo test"]), "cargo test");
        assert_eq!(command_from_argv(&["git", "status"]), "git status");
    }
}

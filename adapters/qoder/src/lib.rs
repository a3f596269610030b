//! Qoder (`qoder`): Qoder IDE, Qoder CLI and QoderWork (Alibaba) write Claude Code's JSONL
//! transcripts under several projects roots: `~/.qoder/projects/`, `~/.qoderwork/projects/`
//! and the IDE's `SharedClientCache/cli/projects/` in its user-data directory. Under a root,
//! `<encoded-cwd>/<session-id>.jsonl` is a session, `<session-id>-session.json` beside it an
//! optional metadata sidecar, and `<session-id>/subagents/agent-<id>.jsonl` a sub-agent run;
//! the shared cache may also hold `<session-id>.jsonl` flat in the root.
//!
//! A dialect of the Claude-shaped JSONL family: the reader, with its record → role table,
//! is `deja_core::family::claude_jsonl`. Tool names and input keys are read as Claude
//! Code's (the page gives no Qoder vocabulary; the family decodes `command`, `file_path`,
//! `old_string`). What this adapter adds:
//!
//! | source | Session | rule |
//! | --- | --- | --- |
//! | sidecar `title` | `title` | wins over the family's title (a `custom-title`, then an `ai-title` line, then a `summary`) |
//! | sidecar `working_dir` | `project` | only when no line carries a `cwd`; before the directory name |
//! | sidecar `fork_from` | `parent`, `kind = "fork"` | else the family's fork (a `/branch` copy's `forkedFrom.sessionId` lines), else `parent_session_id` → `kind = "continuation"` |
//! | `…/<parent>/subagents/agent-<id>.jsonl` | `id = <parent>:subagent:agent-<id>`, `kind = "subagent"` | `parent` = the directory above `subagents` |
//! | flat `<root>/<id>.jsonl` | session | no directory-name project fallback |
//! | `agent-*.jsonl` directly in a project dir | not discovered | not a main session, and the page gives it no id rule |
//!
//! Qoder CLI 1.1.52 (read from its npm bundle, not run: it needs a Qoder login) writes
//! `~/.qoder/projects/<cwd, every non-alphanumeric as '-'>/<session-id>.jsonl` with Claude
//! Code's records, tool names (`Bash`, `Read`, `Write`, `Edit`, …) and `Exit code N`
//! results, and keeps titles (`custom-title`, `ai-title`) and branches (`forkedFrom`) in
//! its lines, which the family reads; no `-session.json` sidecar appears in its code.
//!
//! **Variables.** Qoder CLI keeps its config root, and the `projects/` root in it, at
//! `$QODER_CONFIG_DIR` when set, else `<base>/<name>` with `<base>` = `$QODER_CLI_HOME` or
//! the home and `<name>` = `$QODER_CONFIG_DIR_NAME` or `.qoder` (read from the 1.1.52
//! bundle; a name that is not one plain path component is refused by Qoder, which then
//! does not start, so deja keeps `.qoder` for it). They move only the CLI's root:
//! `~/.qoderwork` and the IDE's cache stay where they are. `DEJA_QODER_ROOT` names one
//! projects root and `DEJA_QODER_ROOTS` a path list of them; either replaces every
//! default root.

use std::path::{Path, PathBuf};

use deja_core::discover::find_files;
use deja_core::family::claude_jsonl::{self, ClaudeDialect, FileHints, CLAUDE_INJECTED, CLAUDE_TOOLS};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, ParseOptions, ParseStats, Session, SessionSink,
    SourceRef, StoreEnv, SynthSession, SynthWriter,
};
use serde_json::Value;

const ID: &str = "qoder";

/// `<encoded-cwd>/<session>/subagents/agent-<id>.jsonl` is three levels below a root.
const MAX_DEPTH: usize = 6;

/// The Qoder adapter.
pub struct QoderFormat;

deja_core::inventory::submit!(deja_core::Registration(&QoderFormat));

/// Qoder in the Claude-shaped JSONL family (the synthetic writer uses the CLI root).
pub static DIALECT: ClaudeDialect = ClaudeDialect { harness: ID, config_dir: ".qoder", tools: CLAUDE_TOOLS };

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Qoder",
    container: "Claude Code JSONL, one file per session (+ `-session.json` sidecar, sub-agent files)",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[
            // The CLI's config directory: QODER_CONFIG_DIR, else QODER_CONFIG_DIR_NAME (one
            // plain name; Qoder refuses anything else) under QODER_CLI_HOME or the home.
            Root::any("${QODER_CONFIG_DIR:-${QODER_CLI_HOME:-~}/$(QODER_CONFIG_DIR_NAME:-.qoder)}/projects"),
            Root::any("~/.qoderwork/projects"),
            Root::macos("~/Library/Application Support/Qoder/SharedClientCache/cli/projects"),
            Root::linux("${XDG_CONFIG_HOME:-~/.config}/Qoder/SharedClientCache/cli/projects"),
            Root::windows("${APPDATA:-~/AppData/Roaming}/Qoder/SharedClientCache/cli/projects"),
        ],
        layout: Layout::Custom { shape: "<encoded-cwd>/<session-id>.jsonl (+ sub-agent sidechains)", walk: Some(walk_projects) },
    }])
    .deja_vars(&["DEJA_INCLUDE_SUBAGENTS"]),
    needs: &[],
    format_summary: "Qoder IDE, Qoder CLI and QoderWork write Claude Code's append-only JSONL transcripts under several \
        projects roots (`~/.qoder/projects`, `~/.qoderwork/projects`, the IDE's `SharedClientCache/cli/projects`, where \
        files may sit flat in the root): `user` and `assistant` records chained by `uuid`/`parentUuid`, `tool_use` blocks \
        paired with `tool_result` items. An optional `<session-id>-session.json` sidecar gives the title, the working \
        directory and the session it was forked from or continues; sub-agent runs sit in `<session>/subagents/`.",
    injected: &CLAUDE_INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::Unknown, handoff: Handoff::Paste("no start-with-prompt command is known") },
};

/// The transcripts of one projects root (see [`discover_root`]).
fn walk_projects(root: &Path, env: &StoreEnv, found: &mut Discovery) {
    found.sources.extend(discover_root(root, env.include_subagents()));
}

impl HarnessFormat for QoderFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let place = Place::of(&src.path);
        let sidecar = place.sidecar.as_deref().and_then(Sidecar::read);
        let hints = FileHints { project: sidecar.as_ref().and_then(|s| s.working_dir.clone()), flat: place.flat, ..FileHints::default() };
        let mut sink = QoderSink { out, sidecar, subagent_of: place.subagent_of, stem: place.stem };
        claude_jsonl::parse_with(&DIALECT, src, opts, &hints, &mut sink)
    }

    fn synthetic(&self) -> Option<&dyn SynthWriter> {
        Some(self)
    }
}

impl SynthWriter for QoderFormat {
    fn write(&self, home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
        claude_jsonl::write_synthetic(&DIALECT, home, session)
    }
}

/// The transcripts under one root, append-only, with their sidecar as a part; sub-agent
/// runs unless `include_subagents` is off; `agent-*.jsonl` directly in a project
/// directory never.
fn discover_root(root: &Path, include_subagents: bool) -> Vec<SourceRef> {
    let mut sources = Vec::new();
    for path in find_files(root, MAX_DEPTH, &|name| name.ends_with(".jsonl")) {
        let place = Place::of(&path);
        if place.subagent_of.is_some() {
            if !include_subagents {
                continue;
            }
        } else if place.stem.starts_with("agent-") {
            continue;
        }
        let mut src = SourceRef::file(&path).append_only();
        if let Some(side) = place.sidecar {
            src = src.with_part(side);
        }
        sources.push(src);
    }
    sources
}

/// What a transcript's place in a root says.
struct Place {
    stem: String,
    /// The parent session id of a `<parent>/subagents/<name>.jsonl` file.
    subagent_of: Option<String>,
    /// `<stem>-session.json` beside a main transcript.
    sidecar: Option<PathBuf>,
    /// The file's directory holds sessions directly (no encoded-cwd directory).
    flat: bool,
}

impl Place {
    fn of(path: &Path) -> Place {
        let name = |p: Option<&Path>| p.and_then(Path::file_name).and_then(|n| n.to_str()).unwrap_or("").to_string();
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("").to_string();
        let dir = path.parent();
        if name(dir) == "subagents" {
            let session_dir = dir.and_then(Path::parent);
            let parent = name(session_dir);
            return Place {
                stem,
                subagent_of: (!parent.is_empty()).then_some(parent),
                sidecar: None,
                flat: session_dir.and_then(Path::parent).is_some_and(is_projects_root),
            };
        }
        let sidecar = dir.map(|d| d.join(format!("{stem}-session.json")));
        Place { stem, subagent_of: None, sidecar, flat: dir.is_some_and(is_projects_root) }
    }
}

/// A directory that holds sessions directly: its name is no dash-encoded cwd (those start
/// with `-`, or a drive letter and `--`), so it is a projects root, whatever it is called
/// (`projects`, or a `DEJA_QODER_ROOT` elsewhere).
fn is_projects_root(dir: &Path) -> bool {
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let drive = matches!(name.as_bytes(), [d, b'-', b'-', ..] if d.is_ascii_alphabetic());
    !(name.starts_with('-') || drive)
}

/// The `<session-id>-session.json` metadata Qoder keeps beside a transcript.
#[derive(Debug, Default)]
struct Sidecar {
    title: Option<String>,
    working_dir: Option<String>,
    fork_from: Option<String>,
    parent_session_id: Option<String>,
}

impl Sidecar {
    /// The sidecar, when it exists and is a JSON object; a missing or broken one is no
    /// sidecar (the page calls it optional).
    fn read(path: &Path) -> Option<Sidecar> {
        if !path.is_file() {
            return None;
        }
        let bytes = std::fs::read(path).ok()?;
        let v: Value = serde_json::from_slice(&bytes).ok()?;
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string);
        v.is_object().then(|| Sidecar {
            title: text("title"),
            working_dir: text("working_dir"),
            fork_from: text("fork_from"),
            parent_session_id: text("parent_session_id"),
        })
    }
}

/// Applies the sidecar and the sub-agent naming to the family's sessions.
struct QoderSink<'a> {
    out: &'a mut dyn SessionSink,
    sidecar: Option<Sidecar>,
    subagent_of: Option<String>,
    stem: String,
}

impl SessionSink for QoderSink<'_> {
    fn session(&mut self, mut s: Session) {
        if let Some(parent) = &self.subagent_of {
            // The file's own run (not a sidechain keyed by an agentId inside it).
            let own = s.id == self.stem || s.id == self.stem.strip_prefix("agent-").unwrap_or(&self.stem);
            if own {
                s.id = format!("{parent}:subagent:{}", self.stem);
            }
            if own || s.id.starts_with(&format!("{parent}:subagent:")) {
                s.parent = Some(parent.clone());
                s.kind = Some("subagent".to_string());
            }
        } else if matches!(s.kind.as_deref(), None | Some("fork")) {
            // The main session: the family may have made it a fork (a `/branch` copy).
            if let Some(side) = &self.sidecar {
                if side.title.is_some() {
                    s.title = side.title.clone();
                }
                if let Some(fork) = &side.fork_from {
                    s.parent = Some(fork.clone());
                    s.kind = Some("fork".to_string());
                } else if let (None, Some(prev)) = (&s.kind, &side.parent_session_id) {
                    s.parent = Some(prev.clone());
                    s.kind = Some("continuation".to_string());
                }
            }
        }
        self.out.session(s);
    }
}

//! Claude Cowork (`cowork`): Claude Desktop's local agent mode. Each session is a metadata
//! document `<sessions>/<orgId>/<workspaceId>/local_<uuid>.json` plus a private working
//! directory `local_<uuid>/` holding an ordinary Claude Code transcript at
//! `.claude/projects/<encoded>/<cliSessionId>.jsonl` (sub-agent runs under
//! `<cliSessionId>/subagents/`). `<sessions>` is `local-agent-mode-sessions` in Claude
//! Desktop's user-data directory; `DEJA_COWORK_ROOT` names it.
//!
//! A dialect of the Claude-shaped JSONL family: the transcript reader, with its record →
//! role table, is `deja_core::family::claude_jsonl`; ids are namespaced `cowork:` by the
//! harness id so they never collide with Claude Code's. The `<encoded>` directory varies
//! by version (host-loop sessions end in `-outputs`, VM sessions encode
//! `/sessions/<name>`), so the transcript is found by scanning `.claude/projects` for
//! `<cliSessionId>.jsonl`, never by rebuilding the name; the large `.claude/outputs` trees
//! and the `cowork_settings.json`, `cowork-clientdata-cache.json`, `skills-plugin/`
//! siblings are not walked.
//!
//! | source | Session | rule |
//! | --- | --- | --- |
//! | metadata `title` | `title` | else the transcript's last `ai-title` line's `aiTitle` |
//! | metadata `userSelectedFolders[0]` | `project` | else the label `cowork` (the line `cwd` is the private VM directory) |
//! | metadata `createdAt` / `lastActivityAt` (epoch ms) | `started` / `updated` | only when no transcript line has a time |
//! | transcript | turns | the family's reader; the metadata document is a part of the source |

use std::path::{Path, PathBuf};

use deja_core::discover::find_files;
use deja_core::family::claude_jsonl::{self, discover_projects, ClaudeDialect, CLAUDE_INJECTED, CLAUDE_TOOLS};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::read::{for_each_json_line, read_source};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, ParseOptions, ParseStats, Session, SessionSink,
    SourceRef, StoreEnv, SynthSession, SynthWriter, Timestamp,
};
use serde_json::Value;

const ID: &str = "cowork";

/// `<orgId>/<workspaceId>/local_<uuid>.json`.
const METADATA_DEPTH: usize = 3;

/// The project of a session whose metadata names no folder: these sessions are not tied
/// to a repository.
const NO_FOLDER: &str = "cowork";

/// The Claude Cowork adapter.
pub struct CoworkFormat;

deja_core::inventory::submit!(deja_core::Registration(&CoworkFormat));

/// Cowork in the Claude-shaped JSONL family.
pub static DIALECT: ClaudeDialect = ClaudeDialect { harness: ID, config_dir: ".claude", tools: CLAUDE_TOOLS };

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Claude Cowork",
    container: "metadata JSON per session + a Claude Code JSONL transcript in its working directory",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[
            Root::macos("~/Library/Application Support/Claude/local-agent-mode-sessions"),
            Root::linux("${XDG_CONFIG_HOME:-~/.config}/Claude/local-agent-mode-sessions"),
            Root::windows(
                "${LOCALAPPDATA:-~/AppData/Local}/Packages/Claude_pzs8sxrjxfjjc/LocalCache/Roaming/Claude/local-agent-mode-sessions",
            ),
            Root::windows("${APPDATA:-~/AppData/Roaming}/Claude/local-agent-mode-sessions"),
        ],
        layout: Layout::Custom { shape: "<orgId>/<workspaceId>/local_<uuid>.json and the transcripts it names", walk: Some(walk_metadata) },
    }])
    .deja_vars(&["DEJA_INCLUDE_SUBAGENTS"]),
    needs: &[],
    format_summary: "Claude Desktop's local agent mode keeps each session as `local_<uuid>.json` metadata (`cliSessionId`, \
        `title`, `userSelectedFolders`, `createdAt`/`lastActivityAt` in epoch ms) beside a private working directory \
        `local_<uuid>/` whose `.claude/projects/<encoded>/<cliSessionId>.jsonl` is an ordinary Claude Code transcript \
        (`user`/`assistant` records, `tool_use`/`tool_result` blocks, sub-agent files). The metadata gives the title and \
        the project (the first selected folder); the transcript the turns. Regular Claude Desktop chats are not on disk.",
    injected: &CLAUDE_INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Unsupported("sessions resume only inside the Claude Desktop app"),
        handoff: Handoff::Paste("an app with no start-with-prompt command"),
    },
};

/// Every session's metadata file under the root, with the transcripts it names.
fn walk_metadata(root: &Path, env: &StoreEnv, found: &mut Discovery) {
    let is_meta = |name: &str| name.starts_with("local_") && name.ends_with(".json");
    for meta in find_files(root, METADATA_DEPTH, &is_meta) {
        found.sources.extend(transcripts(&meta, env.include_subagents()));
    }
}

impl HarnessFormat for CoworkFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let meta = src.parts.first().and_then(|p| Metadata::read(p)).unwrap_or_default();
        let mut sink = CoworkSink { out, meta, transcript: &src.path };
        claude_jsonl::parse(&DIALECT, src, opts, &mut sink)
    }

    fn synthetic(&self) -> Option<&dyn SynthWriter> {
        Some(self)
    }
}

impl SynthWriter for CoworkFormat {
    /// A Linux-layout session: `local_<id>.json` metadata naming the project as the
    /// selected folder, and the transcript in its working directory (as a VM session).
    fn write(&self, home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
        let workspace = home.join(".config/Claude/local-agent-mode-sessions/org-synthetic/ws-synthetic");
        let local = format!("local_{}", session.id);
        let mut meta = serde_json::json!({
            "sessionId": local, "cliSessionId": session.id, "userSelectedFolders": [session.project],
            "createdAt": session.started.millis(), "lastActivityAt": session.started.millis(),
        });
        if let (Some(t), Some(m)) = (&session.title, meta.as_object_mut()) {
            m.insert("title".into(), Value::String(t.clone()));
        }
        std::fs::create_dir_all(&workspace)?;
        std::fs::write(workspace.join(format!("{local}.json")), meta.to_string())?;
        // The transcript's cwd is the private VM directory, as Cowork writes it.
        let vm = SynthSession { project: "/sessions/synthetic".to_string(), ..session.clone() };
        claude_jsonl::write_synthetic(&DIALECT, &workspace.join(&local), &vm)
    }
}

/// The transcripts of one metadata document: `<cliSessionId>.jsonl` anywhere under its
/// working directory's `.claude/projects` (every transcript there when the metadata names
/// none), with their sub-agent runs; each lists the metadata as a part.
fn transcripts(meta: &Path, include_subagents: bool) -> Vec<SourceRef> {
    let Some(stem) = meta.file_stem().and_then(|s| s.to_str()) else { return Vec::new() };
    let projects = meta.with_file_name(stem).join(".claude").join("projects");
    if !projects.is_dir() {
        return Vec::new();
    }
    let cli_id = Metadata::read(meta).and_then(|m| m.cli_session_id);
    discover_projects(&projects, include_subagents)
        .into_iter()
        .filter(|src| {
            let Some(id) = cli_id.as_deref() else { return true };
            let own = src.path.file_stem().and_then(|s| s.to_str()) == Some(id);
            let sub = src.path.ancestors().any(|a| a.file_name().and_then(|n| n.to_str()) == Some(id));
            own || sub
        })
        .map(|src| src.with_part(meta))
        .collect()
}

/// What `local_<uuid>.json` says about its session.
#[derive(Debug, Default)]
struct Metadata {
    cli_session_id: Option<String>,
    title: Option<String>,
    folder: Option<String>,
    created: Option<Timestamp>,
    last_activity: Option<Timestamp>,
}

impl Metadata {
    /// The document, when it is a JSON object; a missing or broken one is no metadata.
    fn read(path: &Path) -> Option<Metadata> {
        if !path.is_file() {
            return None;
        }
        let v: Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string);
        v.is_object().then(|| Metadata {
            cli_session_id: text("cliSessionId"),
            title: text("title"),
            folder: v
                .get("userSelectedFolders")
                .and_then(Value::as_array)
                .and_then(|f| f.iter().find_map(Value::as_str))
                .filter(|f| !f.is_empty())
                .map(str::to_string),
            created: v.get("createdAt").and_then(Timestamp::from_json),
            last_activity: v.get("lastActivityAt").and_then(Timestamp::from_json),
        })
    }
}

/// Applies the metadata to the family's sessions.
struct CoworkSink<'a> {
    out: &'a mut dyn SessionSink,
    meta: Metadata,
    transcript: &'a Path,
}

impl SessionSink for CoworkSink<'_> {
    fn session(&mut self, mut s: Session) {
        s.project = Some(self.meta.folder.clone().unwrap_or_else(|| NO_FOLDER.to_string()));
        if s.kind.is_none() {
            match &self.meta.title {
                Some(t) => s.title = Some(t.clone()),
                None => {
                    if let Some(t) = last_ai_title(self.transcript) {
                        s.title = Some(t);
                    }
                }
            }
        }
        if s.started.is_none() {
            s.touch(self.meta.created);
            s.touch(self.meta.last_activity);
        }
        self.out.session(s);
    }
}

/// The last `{"type":"ai-title","aiTitle":…}` line of a transcript (the family reader
/// skips the line type; Cowork's metadata may lack a title).
fn last_ai_title(path: &Path) -> Option<String> {
    let mut stats = ParseStats::default();
    let bytes = read_source(path, &mut stats).ok()?.bytes;
    let mut title = None;
    for_each_json_line(&bytes, 0, path, &mut stats, |_, v| {
        if v.get("type").and_then(Value::as_str) == Some("ai-title") {
            if let Some(t) = v.get("aiTitle").and_then(Value::as_str).map(str::trim).filter(|t| !t.is_empty()) {
                title = Some(t.to_string());
            }
        }
    });
    title
}

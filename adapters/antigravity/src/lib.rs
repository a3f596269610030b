//! Antigravity (`antigravity`): Google's agentic IDE and its terminal client `agy`, which
//! write the same store. Every directory `~/.gemini/antigravity*` is a root; a
//! conversation is `<root>/brain/<conversation-id>/.system_generated/logs/transcript.jsonl`,
//! one JSONL file of `{source, type, created_at, content}` steps, rewritten as the
//! conversation goes (re-read whole).
//!
//! `DEJA_ANTIGRAVITY_ROOT` names one sessions root, `<root>/brain` (the directory the
//! conversation directories sit in), replacing root discovery; `<root>/cache/` beside it
//! holds the side files the project is read from. The format is its own (no family):
//!
//! | `source` / `type` | Turn | rule |
//! | --- | --- | --- |
//! | `USER_EXPLICIT` | `User` | `<ADDITIONAL_METADATA>` / `<USER_SETTINGS_CHANGE>` blocks removed, the `<USER_REQUEST>` wrapper unwrapped; empty → skipped |
//! | `MODEL`, `type` `PLANNER_RESPONSE` or absent | `Assistant` | content as written |
//! | `MODEL`, `RUN_COMMAND` / `GENERIC` | `ToolCall` | `tool.command` = the `Task Description:` line; text = the step body |
//! | `MODEL`, `VIEW_FILE` / `LIST_DIRECTORY` / `CODE_ACTION` | `ToolCall` | `files` from `File Path:` (read; edit for `CODE_ACTION`), `Created file` (write), `Edited file` / `Modified file` (edit): first label found, backticks stripped, `file://` URI cut at the first space; text = the body |
//! | `MODEL`, other non-empty `type` | `ToolOutput` | the body |
//! | other `source` (`SYSTEM`, …), empty content | skip | |
//! | malformed or torn line | skipped | counted |
//!
//! A step body is the content minus leading blank lines and `Created At:` / `Completed
//! At:` lines. No exit status or edit span is in the format.
//!
//! Project (first hit): `cache/conversation_metadata.json` (IDE) — the entry whose key is
//! a prefix of the id or the id a prefix of it, its first `file://` `WorkspaceURIs`;
//! `cache/last_conversations.json` (CLI) — `{workspace: id}`, prefix match either way;
//! else the files the steps name: their longest common directory, given up when it is
//! fewer than three components below the root, else the nearest directory up from it
//! (no higher than three components) holding `.git`, else the common directory. The
//! project is that full directory (DESIGN's `project`), where the page names its
//! basename.

use std::path::Path;

use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::read::{for_each_json_line, read_source};
use deja_core::store::{Files, Layout, Part, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, FileAction, FileTouch, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Role,
    SessionBuilder, SessionSink, SourceRef, Timestamp, ToolUse, Turn,
};
use serde_json::Value;

const ID: &str = "antigravity";

/// The Antigravity adapter.
pub struct AntigravityFormat;

deja_core::inventory::submit!(deja_core::Registration(&AntigravityFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Antigravity",
    container: "JSONL, one transcript per conversation (re-read whole)",
    store: StoreSpec::new(&[Store {
        name: "",
        // Every edition's directory (`antigravity`, `antigravity-beta`, …).
        roots: &[Root::any("~/.gemini/antigravity*/brain")],
        // The project comes from the cache files beside `brain/`: they are part of each source.
        layout: Layout::Files(Files::new("*/.system_generated/logs/transcript.jsonl").parts(&[Part::BesideRoot("cache")])),
    }]),
    needs: &[],
    format_summary: "Antigravity (IDE and `agy` CLI) writes one JSONL transcript per conversation under \
        `~/.gemini/antigravity*/brain/<conversation-id>/.system_generated/logs/`, each line a step `{source, type, created_at, \
        content}`. `USER_EXPLICIT` steps are prompts wrapped in `<USER_REQUEST>` with metadata blocks; `MODEL` steps of type \
        `PLANNER_RESPONSE` are the agent's answers, the other `MODEL` steps tool transcripts with a readable header \
        (`Task Description:` for commands, `File Path:` / `Edited file` for files). The transcript names no project; it \
        comes from the IDE's `conversation_metadata.json`, the CLI's `last_conversations.json`, or the files the steps touch.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned("`~/.gemini/config/mcp_config.json` `mcpServers.deja = {command: <exe>, args: [mcp]}`"),
        auto_recall: Capability::Planned(
            "plugin `~/.gemini/config/plugins/deja/` (`plugin.json` + `hooks.json` `{\"deja-recall\": {\"PreInvocation\": [...]}}` \
             → `hook-session-start --antigravity`, answering on invocation 1 with `injectSteps`)",
        ),
        skill: Capability::Planned("`~/.gemini/config/plugins/deja/skills/deja-history/SKILL.md` (needs the plugin's `plugin.json`)"),
        command: Capability::Planned("via the plugin skill (`agy plugin validate` turns commands into skills)"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Always(ResumeSpec::anywhere(&["agy", "--conversation", "{id}"])),
        handoff: Handoff::Exec(&["agy", "-i", "{prompt}"]),
    },
};

impl HarnessFormat for AntigravityFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::AntigravityWiring)
    }

    fn parse(&self, src: &SourceRef, _opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let bytes = read_source(&src.path, &mut stats)?.bytes;
        let conv_dir = src.path.parent().and_then(Path::parent).and_then(Path::parent);
        let id = conv_dir.and_then(Path::file_name).and_then(|n| n.to_str()).unwrap_or("").to_string();
        let mut t = Transcript { b: SessionBuilder::new(ID, id.clone(), src.clone()), start: None, paths: Vec::new() };
        for_each_json_line(&bytes, 0, &src.path, &mut stats, |_, v| t.step(&v));
        let Transcript { mut b, paths, .. } = t;
        let cache = conv_dir.and_then(Path::parent).and_then(Path::parent).map(|root| root.join("cache"));
        b.session_mut().project = cache.as_deref().and_then(|c| project_from_cache(c, &id)).or_else(|| project_from_files(&paths));
        if let Some(s) = b.finish() {
            out.session(s);
        }
        Ok(stats)
    }

    fn synthetic(&self) -> Option<&dyn deja_core::SynthWriter> {
        Some(self)
    }
}

struct Transcript {
    b: SessionBuilder,
    /// The first valid time: a step without one gets it.
    start: Option<Timestamp>,
    /// Absolute paths the steps named (for the project).
    paths: Vec<String>,
}

impl Transcript {
    fn step(&mut self, v: &Value) {
        let time = v.get("created_at").and_then(Timestamp::from_json).or(self.start);
        self.start = self.start.or(time);
        let content = v.get("content").and_then(Value::as_str).unwrap_or("");
        if content.trim().is_empty() {
            return;
        }
        match v.get("source").and_then(Value::as_str).unwrap_or("") {
            "USER_EXPLICIT" => self.user(content, time),
            "MODEL" => self.model(v.get("type").and_then(Value::as_str).unwrap_or(""), content, time),
            // SYSTEM events and other sources are interleaved harness state.
            _ => self.b.touch(time),
        }
    }

    fn user(&mut self, content: &str, time: Option<Timestamp>) {
        let text = clean_user(content);
        if !text.is_empty() {
            self.b.push(Turn::new(Role::User, text).at(time));
        }
    }

    fn model(&mut self, kind: &str, content: &str, time: Option<Timestamp>) {
        match kind {
            "" | "PLANNER_RESPONSE" => {
                self.b.push(Turn::new(Role::Assistant, content).at(time));
            }
            "RUN_COMMAND" | "GENERIC" => {
                let command = header_value(content, &["Task Description:"]).map(str::to_string).filter(|c| !c.is_empty());
                self.call(kind, content, time, command, None);
            }
            "VIEW_FILE" | "LIST_DIRECTORY" | "CODE_ACTION" => {
                let file = file_of(kind, content);
                if let Some(f) = &file {
                    if is_absolute(&f.path) {
                        self.paths.push(f.path.clone());
                    }
                }
                self.call(kind, content, time, None, file);
            }
            _ => {
                self.b.push(Turn::new(Role::ToolOutput, body(content)).at(time));
            }
        }
    }

    fn call(&mut self, kind: &str, content: &str, time: Option<Timestamp>, command: Option<String>, file: Option<FileTouch>) {
        let mut turn = Turn::new(Role::ToolCall, body(content)).at(time);
        turn.tool = Some(ToolUse { name: kind.to_string(), command, ..ToolUse::default() });
        turn.files.extend(file);
        self.b.push_call(None, turn);
    }
}

/// A prompt without Antigravity's metadata: every complete `<ADDITIONAL_METADATA>` and
/// `<USER_SETTINGS_CHANGE>` block goes, then the `<USER_REQUEST>` wrapper.
fn clean_user(content: &str) -> String {
    let mut text = content.to_string();
    for tag in ["ADDITIONAL_METADATA", "USER_SETTINGS_CHANGE"] {
        let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
        let mut out = String::with_capacity(text.len());
        let mut rest = text.as_str();
        while let Some(i) = rest.find(&open) {
            let Some(j) = rest[i + open.len()..].find(&close) else { break };
            out.push_str(&rest[..i]);
            rest = &rest[i + open.len() + j + close.len()..];
        }
        out.push_str(rest);
        text = out;
    }
    let t = text.trim();
    let t = t.strip_prefix("<USER_REQUEST>").unwrap_or(t);
    let t = t.trim_end().strip_suffix("</USER_REQUEST>").unwrap_or(t);
    t.trim().to_string()
}

/// A step's body: leading blank lines and the `Created At:` / `Completed At:` lines go.
fn body(content: &str) -> String {
    let lines: Vec<&str> = content.lines().filter(|l| !l.starts_with("Created At:") && !l.starts_with("Completed At:")).collect();
    let first = lines.iter().position(|l| !l.trim().is_empty()).unwrap_or(lines.len());
    lines[first..].join("\n").trim_end().to_string()
}

/// The value after the first of `labels` that starts a line.
fn header_value<'a>(content: &'a str, labels: &[&str]) -> Option<&'a str> {
    content.lines().find_map(|l| labels.iter().find_map(|lab| l.strip_prefix(lab)).map(str::trim))
}

/// The file a file step names: the first label found (`File Path:`, `Created file`,
/// `Edited file`, `Modified file`), backticks stripped, a `file://` URI cut at the first
/// space and its scheme removed.
fn file_of(kind: &str, content: &str) -> Option<FileTouch> {
    const LABELS: [(&str, Option<FileAction>); 4] = [
        ("File Path:", None),
        ("Created file", Some(FileAction::Write)),
        ("Edited file", Some(FileAction::Edit)),
        ("Modified file", Some(FileAction::Edit)),
    ];
    let (value, action) = content.lines().find_map(|l| {
        let l = l.trim_start();
        LABELS.iter().find_map(|(label, action)| l.strip_prefix(label).map(|v| (v, *action)))
    })?;
    let mut path = value.trim().trim_start_matches(':').trim().replace('`', "");
    if let Some(rest) = path.strip_prefix("file://") {
        let rest = rest.split(' ').next().unwrap_or("");
        path = deja_core::family::codex_rollout::decode_file_uri(&format!("file://{rest}"));
    }
    let path = path.trim().to_string();
    if path.is_empty() {
        return None;
    }
    let action = action.unwrap_or(if kind == "CODE_ACTION" { FileAction::Edit } else { FileAction::Read });
    Some(FileTouch { path, action })
}

fn is_absolute(p: &str) -> bool {
    p.starts_with('/') || p.as_bytes().get(1..3) == Some(b":/") || p.as_bytes().get(1..3) == Some(b":\\")
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

fn prefix_match(key: &str, id: &str) -> bool {
    !key.is_empty() && !id.is_empty() && (id.starts_with(key) || key.starts_with(id))
}

/// Rules 1 and 2: the IDE's conversation metadata, then the CLI's last conversations.
fn project_from_cache(cache: &Path, id: &str) -> Option<String> {
    let from_meta = read_json(&cache.join("conversation_metadata.json")).and_then(|doc| {
        let convs = doc.get("conversations")?.as_object()?;
        convs.iter().filter(|(k, _)| prefix_match(k, id)).find_map(|(_, c)| {
            c.pointer("/summary/WorkspaceURIs")?
                .as_array()?
                .iter()
                .filter_map(Value::as_str)
                .find(|u| u.starts_with("file://"))
                .map(deja_core::family::codex_rollout::decode_file_uri)
        })
    });
    from_meta.or_else(|| {
        let doc = read_json(&cache.join("last_conversations.json"))?;
        doc.as_object()?.iter().find(|(_, v)| v.as_str().is_some_and(|v| prefix_match(v, id))).map(|(k, _)| k.clone())
    })
}

/// Rule 3: the project from the absolute paths a conversation's steps named (see the
/// module doc); `None` when their common directory is a home directory or shallower.
pub fn project_from_files(paths: &[String]) -> Option<String> {
    let dirs: Vec<Vec<&str>> = paths
        .iter()
        .map(|p| {
            let mut parts: Vec<&str> = p.split(['/', '\\']).filter(|s| !s.is_empty()).collect();
            parts.pop(); // the file itself
            parts
        })
        .collect();
    let first = dirs.first()?;
    let mut common = first.len();
    for d in &dirs[1..] {
        common = common.min(first.iter().zip(d).take_while(|(a, b)| a == b).count());
    }
    // A drive letter is the root on Windows, not a component below it.
    let drive = first.first().is_some_and(|c| c.len() == 2 && c.ends_with(':'));
    let below_root = common - usize::from(drive);
    if below_root < 3 {
        return None;
    }
    let join = |n: usize| {
        let tail = first[..n].join("/");
        if drive {
            tail
        } else {
            format!("/{tail}")
        }
    };
    let min = 3 + usize::from(drive);
    (min..=common).rev().map(join).find(|d| Path::new(d).join(".git").exists()).or_else(|| Some(join(common)))
}

pub mod hook;
mod synth;
mod wiring;

impl deja_core::SynthWriter for AntigravityFormat {
    fn write(&self, home: &std::path::Path, session: &deja_core::SynthSession) -> std::io::Result<std::path::PathBuf> {
        synth::write(home, session)
    }
}

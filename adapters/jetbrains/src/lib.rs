//! JetBrains AI Assistant (`jetbrains`): the IDE plugin keeps chats in each product's
//! config directory (`<config root>/<Product><version>/`, every product and version read):
//! plain chats inside the project's IDE state `workspace/<projectWorkspaceId>.xml` (its
//! `ChatSessionStateTemp` component), and agent chats' block logs in
//! `aia-task-history/<chat uid>.events` (`AUI_EVENTS_V1`, then one base64-encoded JSON
//! record per line). Workspace files are rewritten whole.
//!
//! No family reader. XML is read with `quick-xml` (a workspace dependency): a streaming,
//! well-kept reader that decodes entities and character references in attribute values
//! (chat text lives in `value="…&#10;…"` attributes), so only the one component is
//! built into a small tree and the rest of a large workspace file is skipped. Most
//! workspace files hold no chat: a byte search for the component name comes first.
//!
//! One source per workspace file, with the product's `aia-task-history/` directory, its
//! `.events`/`.agentsession` files and `options/recentProjects.xml` as parts (an agent
//! chat's transcript changes there, not in the XML).
//!
//! Config root: `DEJA_JETBRAINS_ROOT` (then the only root), else every one of
//! `~/Library/Application Support/JetBrains` (macOS), `${APPDATA:-~/AppData/Roaming}/JetBrains`
//! (Windows) and `${XDG_CONFIG_HOME:-~/.config}/JetBrains` that exists.
//!
//! Plain chats (`SerializedChat` options):
//!
//! | field | Turn | rule |
//! | --- | --- | --- |
//! | `SerializedChatMessage` with `author` `Assistant` | `Assistant` | `displayContent`, else `internalContent` |
//! | `SerializedChatMessage` without `author` | `User` | same |
//! | empty text | skipped | |
//!
//! Agent chats (`chatModelId` starting `agent_`) whose `.events` file exists are read from
//! it instead (the XML keeps only their prompts); a chat whose `.agentsession` names an
//! agent with its own store (`junie`, `claude-acp`, `codex-acp`, `github-copilot`, `cline`,
//! `kilo`, `opencode`) is skipped entirely, since its own adapter indexes it. Records
//! (`type` without its package prefix):
//!
//! | record / AUI block `kind` | Turn | rule |
//! | --- | --- | --- |
//! | `ChatSessionUserPromptEvent` | `User` | `prompt` |
//! | `MarkdownBlockUpdatedEvent` | `Assistant` | `text`, else its `textChunk`s concatenated |
//! | `ResultBlockUpdatedEvent` | `Assistant` | `result`, `<additional_context>` blocks removed |
//! | `TerminalBlockUpdatedEvent` | `ToolCall` | `command`, `exitCode`, `output`; `status` `FAILED` → error (IDE terminals give no code) |
//! | `ViewFilesBlockUpdatedEvent` | `ToolCall` | `files[].relativePath`/`path` read, relative ones against the project |
//! | `FileChangesBlockUpdatedEvent` | `ToolCall` | `changes[]` paths edited (written when new); the first edited file's differing lines (common head and tail lines stripped) → edit, else a new file's content |
//! | other kinds, undecodable lines | skipped | compaction markers, metadata, thoughts, status lines; bad lines counted |
//!
//! Blocks fold by `stepId` (the last update wins, except `textChunk`s, which accumulate),
//! in first-appearance order. Session: id `uid`; title `SerializedChatTitle.text`;
//! project the path `recentProjects.xml` maps the workspace id to (`$USER_HOME$`
//! expanded to the home directory the config root sits in). No message carries a time:
//! message (or record) `i` is at start + `i` ms, start being
//! `ChatStatisticInformation.timestamp`, else `modifiedAt`; `modifiedAt` bumps the end.

use std::collections::HashMap;
use std::path::Path;

use base64::Engine;
use deja_core::discover::{find_files, subdirs};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::patch::join_cwd;
use deja_core::read::{read_source, str_at};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, Edit, ExitStatus, FileAction, FileTouch, FormatError, HarnessFormat, HarnessInfo, InjectedText,
    ParseOptions, ParseStats, Role, SessionBuilder, SessionSink, SourceRef, StoreEnv, Timestamp, ToolUse, Turn,
};
use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};
use serde_json::Value;

mod wiring;

const ID: &str = "jetbrains";
const COMPONENT: &[u8] = b"<component name=\"ChatSessionStateTemp\"";
const EVENTS_MAGIC: &str = "AUI_EVENTS_V1";
/// Agents whose own adapters read their sessions: indexing them here would double them.
const OWN_STORE_AGENTS: &[&str] = &["junie", "claude-acp", "codex-acp", "github-copilot", "cline", "kilo", "opencode"];
/// Config roots are `<home>/<one of these>`; the home is recovered from a path for `$USER_HOME$`.
const ROOT_SUFFIXES: &[&str] = &["Library/Application Support/JetBrains", "AppData/Roaming/JetBrains", ".config/JetBrains"];

/// The JetBrains AI Assistant adapter.
pub struct JetBrainsFormat;

deja_core::inventory::submit!(deja_core::Registration(&JetBrainsFormat));

static INJECTED: InjectedText = InjectedText { blocks: &["additional_context"], ..InjectedText::NONE };

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "JetBrains AI Assistant",
    container: "XML workspace files (plain chats) + base64-JSONL .events block logs (agent chats)",
    store: StoreSpec::new(&[Store {
        name: "",
        // JetBrains' config directory; all three places are looked at on every OS.
        roots: &[
            Root::any("~/Library/Application Support/JetBrains"),
            Root::any("${APPDATA:-~/AppData/Roaming}/JetBrains"),
            Root::any("${XDG_CONFIG_HOME:-~/.config}/JetBrains"),
        ],
        layout: Layout::Custom {
            shape: "<Product><ver>/workspace/<wsid>.xml, <Product><ver>/aia-task-history/<uid>.events",
            walk: Some(walk_products),
        },
    }]),
    needs: &[],
    format_summary: "AI Assistant keeps plain chats in each project's IDE state file `workspace/<projectWorkspaceId>.xml` \
        under the product's config directory, as `SerializedChat` elements of the `ChatSessionStateTemp` component \
        (`uid`, title, start time, `SerializedChatMessage`s with `author` and `displayContent`). Agent chats log AUI \
        blocks in `aia-task-history/<uid>.events` (base64 JSON lines after an `AUI_EVENTS_V1` header) that fold by \
        `stepId` into prompts, answers, terminal commands, viewed files and file changes. `options/recentProjects.xml` \
        maps workspace ids to project paths. No message carries a time.",
    injected: &INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Planned("`mcpServers.deja` in ~/.ai/mcp/mcp.json, read by every JetBrains IDE's AI Assistant"),
        auto_recall: Capability::Blocked("no hook runner in plugin 262.10968.170"),
        skill: Capability::Unknown,
        command: Capability::Blocked("custom commands only from a project's .aiassistant/commands"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Unsupported("chats are reopened from the IDE's chat history"),
        handoff: Handoff::Paste("an IDE chat with no start-with-prompt command"),
    },
};

/// Every product directory's workspace files, each with the product's recent projects
/// and task history as parts.
fn walk_products(root: &Path, _env: &StoreEnv, found: &mut Discovery) {
    for dir in subdirs(root) {
        let history = dir.join("aia-task-history");
        let mut logs = find_files(&history, 0, &|n| n.ends_with(".events") || n.ends_with(".agentsession"));
        logs.sort();
        for xml in find_files(&dir.join("workspace"), 0, &|n| n.ends_with(".xml")) {
            let mut src = SourceRef::file(xml).with_part(dir.join("options/recentProjects.xml"));
            if history.is_dir() {
                src = src.with_part(&history);
                for log in &logs {
                    src = src.with_part(log);
                }
            }
            found.sources.push(src);
        }
    }
}

impl HarnessFormat for JetBrainsFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::JetBrainsWiring)
    }

    fn parse(&self, src: &SourceRef, _opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let bytes = read_source(&src.path, &mut stats)?.bytes;
        if memchr::memmem::find(&bytes, COMPONENT).is_none() {
            // The common case: a project's IDE state without any chat.
            return Ok(stats);
        }
        let component = chat_component(&bytes).map_err(|e| FormatError::corrupt(&src.path, format!("XML: {e}")))?;
        let Some(component) = component else { return Ok(stats) };
        let product = src.path.parent().and_then(Path::parent).map(Path::to_path_buf).unwrap_or_default();
        let project = src.path.file_stem().and_then(|ws| project_of(&product, &ws.to_string_lossy(), &src.path));
        let mut chats = Vec::new();
        component.find_all("SerializedChat", &mut chats);
        for chat in chats {
            stats.records += 1;
            self::chat(src, chat, &product, project.as_deref(), &mut stats, out);
        }
        Ok(stats)
    }
}

/// A small element tree: only the chat component is built.
#[derive(Debug, Default)]
struct Node {
    name: String,
    attrs: Vec<(String, String)>,
    children: Vec<Node>,
}

impl Node {
    fn from_start(e: &BytesStart) -> Node {
        let name = e.name().as_ref().to_string();
        let attrs = e
            .attributes()
            .flatten()
            .map(|a| {
                let key = a.key.as_ref().to_string();
                let value = a.normalized_value(XmlVersion::Implicit1_0).map(|v| v.into_owned()).unwrap_or_else(|_| a.value.to_string());
                (key, value)
            })
            .collect();
        Node { name, attrs, children: Vec::new() }
    }

    fn attr(&self, key: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    fn find_all<'a>(&'a self, name: &str, out: &mut Vec<&'a Node>) {
        for c in &self.children {
            if c.name == name {
                out.push(c);
            } else {
                c.find_all(name, out);
            }
        }
    }

    /// The `<option name="…">` child with this name.
    fn option(&self, name: &str) -> Option<&Node> {
        self.children.iter().find(|c| c.name == "option" && c.attr("name") == Some(name))
    }

    /// An option's `value` attribute.
    fn value(&self, name: &str) -> Option<&str> {
        self.option(name)?.attr("value")
    }

    /// The first element named `name` below this one.
    fn first(&self, name: &str) -> Option<&Node> {
        let mut all = Vec::new();
        self.find_all(name, &mut all);
        all.into_iter().next()
    }
}

/// The `ChatSessionStateTemp` component of a workspace file as a tree, if it has one.
fn chat_component(bytes: &[u8]) -> Result<Option<Node>, quick_xml::Error> {
    let mut reader = Reader::from_reader(bytes);
    let mut buf = Vec::new();
    // The open elements of the component, innermost last.
    let mut stack: Vec<Node> = Vec::new();
    loop {
        let event = reader.read_event_into(&mut buf)?;
        match event {
            Event::Start(e) => {
                let node = Node::from_start(&e);
                if !stack.is_empty() || (node.name == "component" && node.attr("name") == Some("ChatSessionStateTemp")) {
                    stack.push(node);
                }
            }
            Event::Empty(e) => {
                let node = Node::from_start(&e);
                if let Some(top) = stack.last_mut() {
                    top.children.push(node);
                } else if node.name == "component" && node.attr("name") == Some("ChatSessionStateTemp") {
                    return Ok(Some(node));
                }
            }
            Event::End(_) => {
                if let Some(done) = stack.pop() {
                    match stack.last_mut() {
                        Some(parent) => parent.children.push(done),
                        None => return Ok(Some(done)),
                    }
                }
            }
            Event::Eof => return Ok(stack.into_iter().next()),
            _ => {}
        }
        buf.clear();
    }
}

/// The project path `options/recentProjects.xml` maps a workspace id to.
fn project_of(product: &Path, workspace_id: &str, source: &Path) -> Option<String> {
    let bytes = std::fs::read(product.join("options/recentProjects.xml")).ok()?;
    let mut reader = Reader::from_reader(&bytes[..]);
    let mut buf = Vec::new();
    let mut key: Option<String> = None;
    loop {
        match reader.read_event_into(&mut buf).ok()? {
            Event::Start(e) | Event::Empty(e) => {
                let node = Node::from_start(&e);
                if node.name == "entry" {
                    key = node.attr("key").map(str::to_string);
                } else if node.name == "RecentProjectMetaInfo" && node.attr("projectWorkspaceId") == Some(workspace_id) {
                    let path = key.take()?;
                    return Some(expand_user_home(&path, source));
                }
            }
            Event::Eof => return None,
            _ => {}
        }
        buf.clear();
    }
}

/// `$USER_HOME$` as the home directory the config root sits in (recovered from the
/// source's path), else the process's `HOME`; left as written when neither is known.
fn expand_user_home(path: &str, source: &Path) -> String {
    let Some(rest) = path.strip_prefix("$USER_HOME$") else { return path.to_string() };
    let text = source.to_string_lossy().replace('\\', "/");
    let home = ROOT_SUFFIXES
        .iter()
        .find_map(|suffix| text.find(&format!("/{suffix}/")).map(|i| text[..i].to_string()))
        .or_else(|| std::env::var("HOME").ok().filter(|h| !h.is_empty()));
    match home {
        Some(h) => format!("{}{rest}", h.trim_end_matches('/')),
        None => path.to_string(),
    }
}

fn millis(v: Option<&str>) -> Option<Timestamp> {
    v?.trim().parse::<i64>().ok().filter(|n| *n > 0).map(Timestamp::from_millis)
}

fn chat(src: &SourceRef, chat: &Node, product: &Path, project: Option<&str>, stats: &mut ParseStats, out: &mut dyn SessionSink) {
    let Some(uid) = chat.value("uid").filter(|u| !u.trim().is_empty()) else {
        stats.skip(|| format!("{}: a chat without a uid", src.path.display()));
        return;
    };
    let modified = millis(chat.value("modifiedAt"));
    let start = chat
        .option("statisticInformation")
        .and_then(|o| o.first("ChatStatisticInformation"))
        .and_then(|n| millis(n.value("timestamp")))
        .or(modified);
    let title = chat
        .option("title")
        .and_then(|o| o.first("SerializedChatTitle"))
        .and_then(|n| n.value("text"))
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let mut b = SessionBuilder::new(ID, uid, src.clone());
    b.session_mut().title = title.map(str::to_string);
    b.session_mut().project = project.map(str::to_string);
    let at = |i: usize| start.map(|s| Timestamp::from_millis(s.millis().saturating_add(i as i64)));
    let is_agent = chat.value("chatModelId").is_some_and(|m| m.starts_with("agent_"));
    let history = product.join("aia-task-history");
    let events = history.join(format!("{uid}.events"));
    if is_agent {
        if let Ok(pointer) = std::fs::read_to_string(history.join(format!("{uid}.agentsession"))) {
            let agent = pointer.trim().strip_prefix("acp.registry.").and_then(|r| r.split(':').next()).unwrap_or("");
            if OWN_STORE_AGENTS.contains(&agent) {
                // Its own adapter reads this chat.
                return;
            }
        }
    }
    if is_agent && events.is_file() {
        read_events(&events, &mut b, project, &at, stats);
    } else {
        let mut messages = Vec::new();
        if let Some(list) = chat.option("messages") {
            list.find_all("SerializedChatMessage", &mut messages);
        }
        for (i, m) in messages.iter().enumerate() {
            let role = if m.value("author") == Some("Assistant") { Role::Assistant } else { Role::User };
            let text = m.value("displayContent").filter(|t| !t.trim().is_empty()).or_else(|| m.value("internalContent")).unwrap_or("");
            b.push(Turn::new(role, text.trim()).at(at(i)));
        }
    }
    if b.turn_count() > 0 {
        b.touch(modified);
    }
    if let Some(s) = b.finish() {
        out.session(s);
    }
}

/// One folded AUI step, or a prompt.
enum Item {
    Prompt(String, usize),
    Step(String),
}

/// The latest block of a step, its accumulated text chunks and the record it first appeared at.
struct Step {
    block: Value,
    chunks: String,
    first: usize,
}

fn read_events(
    path: &Path,
    b: &mut SessionBuilder,
    project: Option<&str>,
    at: &dyn Fn(usize) -> Option<Timestamp>,
    stats: &mut ParseStats,
) {
    let Ok(bytes) = read_source(path, stats).map(|s| s.bytes) else { return };
    let text = String::from_utf8_lossy(&bytes);
    let mut lines = text.lines();
    if lines.next().map(|l| l.trim_start_matches('\u{feff}').trim()) != Some(EVENTS_MAGIC) {
        stats.problem(format!("{}: no {EVENTS_MAGIC} header; read anyway", path.display()));
        lines = text.lines();
    }
    let mut order: Vec<Item> = Vec::new();
    let mut steps: HashMap<String, Step> = HashMap::new();
    let engine = base64::engine::general_purpose::STANDARD;
    for (n, line) in lines.enumerate() {
        let line = line.trim();
        if line.is_empty() || line == EVENTS_MAGIC {
            continue;
        }
        stats.records += 1;
        // base64 decodes to less than its input: bounded by the source's own limit.
        let Some((rec, repaired)) = engine.decode(line).ok().and_then(|raw| deja_core::read::parse_json_lossy(&raw).ok()) else {
            stats.skip(|| format!("{} record {}: not base64 JSON", path.display(), n + 1));
            continue;
        };
        stats.repaired += u64::from(repaired);
        let kind = str_at(&rec, &["type"]).map(short_type).unwrap_or("");
        match kind {
            "ChatSessionUserPromptEvent" => {
                if let Some(p) = str_at(&rec, &["prompt"]) {
                    order.push(Item::Prompt(p.to_string(), n));
                }
            }
            "ChatSessionMessageBlockEvent" => {
                let Some(block) = rec.get("event").filter(|e| e.is_object()) else { continue };
                let step_id = str_at(block, &["stepId"]).map(str::to_string).unwrap_or_else(|| format!("record-{n}"));
                let chunk = str_at(block, &["textChunk"]).map(str::to_string);
                match steps.get_mut(&step_id) {
                    Some(step) => {
                        step.chunks.push_str(chunk.as_deref().unwrap_or(""));
                        step.block = block.clone();
                    }
                    None => {
                        order.push(Item::Step(step_id.clone()));
                        steps.insert(step_id, Step { block: block.clone(), chunks: chunk.unwrap_or_default(), first: n });
                    }
                }
            }
            _ => {}
        }
    }
    for item in order {
        match item {
            Item::Prompt(p, n) => {
                b.push(Turn::new(Role::User, p.trim()).at(at(n)));
            }
            Item::Step(id) => {
                if let Some(step) = steps.get(&id) {
                    block_turn(b, step, project, at(step.first));
                }
            }
        }
    }
}

/// `com.intellij.ml.llm.aui.events.api.ChatSessionUserPromptEvent` → `ChatSessionUserPromptEvent`.
fn short_type(t: &str) -> &str {
    t.rsplit('.').next().unwrap_or(t)
}

fn block_turn(b: &mut SessionBuilder, step: &Step, project: Option<&str>, time: Option<Timestamp>) {
    let block = &step.block;
    let kind = str_at(block, &["kind"]).map(short_type).unwrap_or("");
    match kind {
        "MarkdownBlockUpdatedEvent" => {
            let text = str_at(block, &["text"]).filter(|t| !t.trim().is_empty()).unwrap_or(&step.chunks);
            b.push(Turn::new(Role::Assistant, text.trim()).at(time));
        }
        "ResultBlockUpdatedEvent" => {
            let text = strip_additional_context(str_at(block, &["result"]).unwrap_or(""));
            b.push(Turn::new(Role::Assistant, text).at(time));
        }
        "TerminalBlockUpdatedEvent" => {
            let mut turn = Turn::new(Role::ToolCall, str_at(block, &["output"]).unwrap_or("").trim_end()).at(time);
            let exit = block.get("exitCode").and_then(Value::as_i64).map(ExitStatus::Code);
            let failed = str_at(block, &["status"]) == Some("FAILED") || exit.as_ref().is_some_and(|e| !e.succeeded());
            turn.tool = Some(ToolUse {
                name: "terminal".into(),
                command: str_at(block, &["command"]).map(|c| c.trim().to_string()),
                exit,
                is_error: failed,
                ..ToolUse::default()
            });
            b.push_call(None, turn);
        }
        "ViewFilesBlockUpdatedEvent" => {
            let mut turn = Turn::new(Role::ToolCall, "").at(time);
            turn.tool = Some(ToolUse { name: "view_files".into(), ..ToolUse::default() });
            if let Some(Value::Array(files)) = block.get("files") {
                for f in files {
                    if let Some(p) = str_at(f, &["relativePath"]).or_else(|| str_at(f, &["path"])).filter(|p| !p.trim().is_empty()) {
                        turn.files.push(FileTouch { path: join_cwd(p.trim(), project), action: FileAction::Read });
                    }
                }
            }
            b.push_call(None, turn);
        }
        "FileChangesBlockUpdatedEvent" => {
            let mut turn = Turn::new(Role::ToolCall, "").at(time);
            turn.tool = Some(ToolUse { name: "file_changes".into(), ..ToolUse::default() });
            if let Some(Value::Array(changes)) = block.get("changes") {
                let mut replaced = false;
                for c in changes {
                    let Some(p) = ["afterRelativePath", "afterPath", "beforeRelativePath", "beforePath"]
                        .iter()
                        .find_map(|k| str_at(c, &[k]).filter(|p| !p.trim().is_empty()))
                    else {
                        continue;
                    };
                    let path = join_cwd(p.trim(), project);
                    let before = str_at(c, &["beforeContent", "text"]);
                    let after = str_at(c, &["afterContent", "text"]);
                    let action = if before.is_none() && after.is_some() { FileAction::Write } else { FileAction::Edit };
                    turn.files.push(FileTouch { path: path.clone(), action });
                    // The first real edit is the span; a new file's content only when no change edits.
                    match (before, after) {
                        (Some(old), Some(new)) if !replaced => {
                            let (old, new) = changed_lines(old, new);
                            turn.edit = Some(Edit { path, old, new: Some(new) });
                            replaced = true;
                        }
                        (None, Some(new)) if turn.edit.is_none() => {
                            turn.edit = Some(Edit { path, old: String::new(), new: Some(new.to_string()) });
                        }
                        _ => {}
                    }
                }
            }
            b.push_call(None, turn);
        }
        _ => {}
    }
}

/// The lines that differ between two versions of a file: common leading and trailing
/// lines stripped.
fn changed_lines(old: &str, new: &str) -> (String, String) {
    let a: Vec<&str> = old.split('\n').collect();
    let b: Vec<&str> = new.split('\n').collect();
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..].iter().rev().zip(b[head..].iter().rev()).take_while(|(x, y)| x == y).count();
    (a[head..a.len() - tail].join("\n"), b[head..b.len() - tail].join("\n"))
}

/// A result without the `<additional_context>…</additional_context>` blocks hooks add.
fn strip_additional_context(text: &str) -> String {
    const OPEN: &str = "<additional_context>";
    const CLOSE: &str = "</additional_context>";
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(OPEN) {
        out.push_str(&rest[..i]);
        rest = &rest[i + OPEN.len()..];
        rest = rest.find(CLOSE).map_or("", |j| &rest[j + CLOSE.len()..]);
    }
    out.push_str(rest);
    out.trim().to_string()
}

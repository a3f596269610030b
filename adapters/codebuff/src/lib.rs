//! Codebuff (`codebuff`, and its free tier Freebuff: same program, same store): one
//! directory per session at `~/.config/manicode/projects/<project>/chats/<timestamp>/`
//! ("manicode" is the product's former name), holding whole-file JSON documents rewritten
//! as the session goes: `chat-messages.json` (the transcript), `run-state.json` (agent
//! state, the working directory) and an optional `chat-meta.json`.
//!
//! No family reader: the documents are Codebuff's own. One session directory is one
//! source: `chat-messages.json` with `run-state.json` and `chat-meta.json` as parts, so a
//! rewrite of any of them re-reads the session, which replaces its earlier copy under
//! the stable id `<project>/<timestamp>` (the timestamp alone repeats across projects).
//!
//! `DEJA_CODEBUFF_ROOT` names the projects root (the directory the `<project>` folders sit
//! in). The page names no relocation variable, and the store sits under `~/.config` by a
//! fixed path, so `XDG_CONFIG_HOME` does not move it.
//!
//! | message `variant` / block | Turn | rule |
//! | --- | --- | --- |
//! | `user` | `User` | `content`; `image` blocks add `[Image: <filename>]` |
//! | `ai`, `text` block | `Assistant` | `content`; `textType: "reasoning"` → `Reasoning` only with `include_reasoning`; an `ai` message without blocks uses its own `content` |
//! | `ai`, `tool` block (`toolName`, `toolCallId`, `input`, `output`) | `ToolCall` | result inline; `run_terminal_command` → `tool.command`; file tools by name → `files` (`path`, `file_path`, `paths[]`) + `edit` |
//! | `ai`, `agent` block (spawned sub-agent) | skipped | its own transcript is not in the store |
//! | `ai`, `mode-divider`, `plan`, `ask-user` blocks | skipped | UI markers |
//! | `error` | skipped | an error banner |
//!
//! Times: a message's `timestamp` is an ISO string or only a time of day (`12:09 AM`);
//! a time of day is put on the session directory's date (taken as UTC, like the
//! directory name), never before a moment already reached within the same minute, and
//! rolls to the next day when the clock wraps. Without one, the directory's timestamp.

use std::path::Path;

use deja_core::family::json_docs::first_str;
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::model::{cap_text, MAX_EDIT_BYTES};
use deja_core::read::{parse_json_document, read_source, str_at};
use deja_core::store::{Files, Layout, Part, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Edit, FileAction, FileTouch, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats,
    Role, SessionBuilder, SessionSink, SourceRef, Timestamp, ToolUse, Turn,
};
use serde_json::Value;

const ID: &str = "codebuff";
const RUN_STATE: &str = "run-state.json";
const META: &str = "chat-meta.json";
const DAY_MS: i64 = 86_400_000;

/// The Codebuff adapter.
pub struct CodebuffFormat;

deja_core::inventory::submit!(deja_core::Registration(&CodebuffFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Codebuff",
    container: "JSON, one directory per session (chat-messages.json + run-state.json)",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[Root::any("~/.config/manicode/projects")],
        layout: Layout::Files(Files::new("*/chats/*/chat-messages.json").parts(&[Part::Sibling(RUN_STATE), Part::Sibling(META)])),
    }]),
    needs: &[],
    format_summary: "One directory per session under `~/.config/manicode/projects/<project>/chats/<timestamp>/` (Codebuff and \
        Freebuff alike): `chat-messages.json`, an array of messages with a `variant` (`user`, `ai`, `error`), rewritten \
        whole; `run-state.json` with the agent type and the working directory; an optional `chat-meta.json`. `ai` \
        messages hold `blocks[]`: `text` (reasoning flagged by `textType`), `tool` blocks with the call's input and its \
        output inline, spawned `agent` blocks and UI markers. A message's `timestamp` may be only a time of day, \
        resolved against the directory's date.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::Unknown, handoff: Handoff::Paste("no start-with-prompt command is known") },
};

impl HarnessFormat for CodebuffFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let bytes = read_source(&src.path, &mut stats)?.bytes;
        let doc = parse_json_document(&bytes, &src.path)?;
        let chat = src.path.parent().unwrap_or(Path::new(""));
        let stamp = name_of(chat);
        let project = chat.parent().and_then(Path::parent).map(name_of).unwrap_or_default();
        let run_state = side_document(&chat.join(RUN_STATE));
        let meta = side_document(&chat.join(META));
        let Value::Array(messages) = doc else {
            return Err(FormatError::corrupt(&src.path, "chat-messages.json is not an array"));
        };
        let mut p = Parser {
            b: SessionBuilder::new(ID, format!("{project}/{stamp}"), src.clone()),
            opts,
            clock: Clock::new(dir_time(&stamp)),
            cwd: run_state.as_ref().and_then(|r| str_at(r, &["sessionState", "fileContext", "cwd"])).map(str::to_string),
        };
        for m in &messages {
            stats.records += 1;
            p.message(m, &mut stats);
        }
        let Parser { mut b, cwd, .. } = p;
        let first_prompt = meta.as_ref().and_then(|m| first_str(m, &["firstPrompt"])).map(str::to_string);
        let has_user = b.session().turns.iter().any(|t| t.role == Role::User);
        let s = b.session_mut();
        s.project = Some(cwd.unwrap_or(project));
        // The indexer titles a session from its first prompt; the meta file's copy only
        // helps a session whose prompt is not in the transcript.
        s.title = first_prompt.filter(|_| !has_user);
        if let Some(session) = b.finish() {
            out.session(session);
        }
        Ok(stats)
    }
}

fn name_of(p: &Path) -> String {
    p.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string()
}

/// A side document (`run-state.json`, `chat-meta.json`); absent or broken is `None`.
fn side_document(path: &Path) -> Option<Value> {
    let mut ignored = ParseStats::default();
    let bytes = read_source(path, &mut ignored).ok()?.bytes;
    parse_json_document(&bytes, path).ok()
}

/// The directory name's time: `2026-07-16T00-09-00.236Z` (`-` for `:` in the time), also
/// without millis or `Z`, or a date alone.
fn dir_time(stamp: &str) -> Option<Timestamp> {
    let iso = match stamp.split_once('T') {
        Some((date, time)) => format!("{date}T{}", time.replace('-', ":")),
        None => stamp.to_string(),
    };
    Timestamp::parse_str(&iso)
}

/// Milliseconds into the day of `h:mm[:ss] AM|PM` (or a 24-hour `hh:mm[:ss]`).
fn time_of_day(s: &str) -> Option<i64> {
    let s = s.trim();
    let (clock, meridiem) = match s.rsplit_once(' ') {
        Some((c, m)) if m.eq_ignore_ascii_case("am") || m.eq_ignore_ascii_case("pm") => (c, Some(m.eq_ignore_ascii_case("pm"))),
        _ => (s, None),
    };
    let parts: Vec<i64> = clock.split(':').map(|p| p.trim().parse::<i64>()).collect::<Result<_, _>>().ok()?;
    let (h, m, sec) = match parts.as_slice() {
        [h, m] => (*h, *m, 0),
        [h, m, s] => (*h, *m, *s),
        _ => return None,
    };
    if !(0..60).contains(&m) || !(0..60).contains(&sec) {
        return None;
    }
    let h = match meridiem {
        Some(pm) if (1..=12).contains(&h) => h % 12 + if pm { 12 } else { 0 },
        Some(_) => return None,
        None if (0..24).contains(&h) => h,
        None => return None,
    };
    Some(((h * 60 + m) * 60 + sec) * 1000)
}

/// Resolves message times: full timestamps as they are, times of day on the current day,
/// which starts as the directory's date and moves on when the clock wraps.
struct Clock {
    fallback: Option<Timestamp>,
    day: Option<i64>,
    last: Option<i64>,
}

impl Clock {
    fn new(dir: Option<Timestamp>) -> Self {
        Clock { fallback: dir, day: dir.map(|t| t.0.div_euclid(DAY_MS) * DAY_MS), last: dir.map(|t| t.0) }
    }

    fn resolve(&mut self, v: Option<&Value>) -> Option<Timestamp> {
        let Some(v) = v else { return self.fallback };
        if let Some(t) = v.as_str().and_then(time_of_day) {
            let day = self.day?;
            let mut at = day + t;
            // Twelve hours back means the clock went past midnight, not back in time.
            if self.last.is_some_and(|last| at + DAY_MS / 2 < last) {
                self.day = Some(day + DAY_MS);
                at += DAY_MS;
            }
            // A time of day has minute precision: within the minute already reached, it
            // is that moment, not a step back.
            if let Some(last) = self.last.filter(|l| *l > at && *l - at < 60_000) {
                at = last;
            }
            self.last = Some(self.last.map_or(at, |l| l.max(at)));
            return Some(Timestamp(at));
        }
        match Timestamp::from_json(v) {
            Some(t) => {
                self.day = Some(t.0.div_euclid(DAY_MS) * DAY_MS);
                self.last = Some(self.last.map_or(t.0, |l| l.max(t.0)));
                Some(t)
            }
            None => self.fallback,
        }
    }
}

struct Parser<'a> {
    b: SessionBuilder,
    opts: &'a ParseOptions,
    clock: Clock,
    cwd: Option<String>,
}

impl Parser<'_> {
    fn message(&mut self, m: &Value, stats: &mut ParseStats) {
        let time = self.clock.resolve(m.get("timestamp"));
        match str_at(m, &["variant"]) {
            Some("user") => self.user(m, time),
            Some("ai") => self.ai(m, time),
            // An error banner is the UI's, not the conversation's.
            Some(_) => {}
            None => stats.skip(|| "message without a variant".to_string()),
        }
    }

    /// A user message: its text, and a marker per attached image.
    fn user(&mut self, m: &Value, time: Option<Timestamp>) {
        let mut text = str_at(m, &["content"]).unwrap_or("").trim().to_string();
        if let Some(Value::Array(blocks)) = m.get("blocks") {
            for image in blocks.iter().filter(|b| str_at(b, &["type"]) == Some("image")) {
                let name = first_str(image, &["filename", "fileName", "name"]).unwrap_or("image");
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&format!("[Image: {name}]"));
            }
        }
        self.b.push(Turn::new(Role::User, text).at(time));
    }

    /// An `ai` message: its blocks in order.
    fn ai(&mut self, m: &Value, time: Option<Timestamp>) {
        let Some(Value::Array(blocks)) = m.get("blocks") else {
            self.b.push(Turn::new(Role::Assistant, str_at(m, &["content"]).unwrap_or("")).at(time));
            return;
        };
        for block in blocks {
            match str_at(block, &["type"]) {
                Some("text") => {
                    let text = str_at(block, &["content"]).unwrap_or("");
                    if str_at(block, &["textType"]) == Some("reasoning") {
                        if self.opts.include_reasoning {
                            self.b.push(Turn::new(Role::Reasoning, text).at(time));
                        }
                    } else {
                        self.b.push(Turn::new(Role::Assistant, text).at(time));
                    }
                }
                Some("tool") => self.tool(block, time),
                // Sub-agents, mode dividers, plans and questions to the user.
                _ => {}
            }
        }
    }

    /// A `tool` block: the call and, inline, its output.
    fn tool(&mut self, block: &Value, time: Option<Timestamp>) {
        let name = first_str(block, &["toolName"]).unwrap_or("tool");
        let input = block.get("input").unwrap_or(&Value::Null);
        let mut turn = Turn::new(Role::ToolCall, output_text(block.get("output"))).at(time);
        let mut tool = ToolUse { name: name.to_string(), ..ToolUse::default() };
        if name == "run_terminal_command" {
            tool.command = first_str(input, &["command"]).map(|c| c.trim().to_string());
        } else if let Some(action) = file_action(name) {
            self.files(&mut turn, action, input);
        }
        turn.tool = Some(tool);
        self.b.push_call(first_str(block, &["toolCallId"]), turn);
    }

    /// A file tool's paths (`path`, `file_path`, `paths[]`) and, for edits and writes, the span.
    fn files(&self, turn: &mut Turn, action: FileAction, input: &Value) {
        let mut paths: Vec<&str> = first_str(input, &["path", "file_path", "filePath"]).into_iter().collect();
        if let Some(Value::Array(more)) = input.get("paths") {
            paths.extend(more.iter().filter_map(Value::as_str).filter(|p| !p.trim().is_empty()));
        }
        let cwd = self.cwd.as_deref();
        turn.files = paths.iter().map(|p| FileTouch { path: deja_core::patch::join_cwd(p, cwd), action }).collect();
        let Some(path) = turn.files.first().map(|f| f.path.clone()) else { return };
        let capped = |s: String| {
            let mut s = s;
            cap_text(&mut s, MAX_EDIT_BYTES);
            s
        };
        turn.edit = match action {
            FileAction::Edit => {
                let pairs: Vec<(&str, &str)> = match input.get("replacements") {
                    Some(Value::Array(items)) => {
                        items.iter().filter_map(|r| Some((str_at(r, &["old"])?, str_at(r, &["new"]).unwrap_or("")))).collect()
                    }
                    _ => first_str(input, &["old_string", "old_str", "old"])
                        .map(|o| (o, first_str(input, &["new_string", "new_str", "new"]).unwrap_or("")))
                        .into_iter()
                        .collect(),
                };
                (!pairs.is_empty()).then(|| Edit {
                    path,
                    old: capped(pairs.iter().map(|p| p.0).collect::<Vec<_>>().join("\n")),
                    new: Some(capped(pairs.iter().map(|p| p.1).collect::<Vec<_>>().join("\n"))),
                })
            }
            FileAction::Write => {
                first_str(input, &["content"]).map(|c| Edit { path, old: String::new(), new: Some(capped(c.to_string())) })
            }
            _ => None,
        };
    }
}

/// The page does not list Codebuff's file tools; their names say what they do.
fn file_action(name: &str) -> Option<FileAction> {
    let n = name.to_ascii_lowercase();
    if n.contains("read") {
        Some(FileAction::Read)
    } else if n.contains("replace") || n.contains("edit") {
        Some(FileAction::Edit)
    } else if n.contains("write") || n.contains("create") {
        Some(FileAction::Write)
    } else {
        None
    }
}

/// A tool's inline output: a string as itself; structured output as compact JSON.
fn output_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.trim().to_string(),
        None | Some(Value::Null) => String::new(),
        Some(other) => other.to_string(),
    }
}

//! Visual Studio Copilot (`vs-copilot`): GitHub Copilot inside Visual Studio keeps no
//! transcript; its only local record is an OpenTelemetry trace export, JSONL files
//! `<YYYYMMDDTHHMMSS>_<hex>_VSGitHubCopilot_traces.jsonl` in a temp/cache directory
//! (Windows `%LOCALAPPDATA%\Temp\VSGitHubCopilotLogs\traces`, macOS
//! `~/Library/Caches/VSGitHubCopilotLogs/traces`, Linux `~/.cache/VSGitHubCopilotLogs/traces`).
//! No harness relocation variable is known; `DEJA_VS_COPILOT_ROOT` names the traces
//! directory.
//!
//! No family reader fits: each line is one OTLP/JSON envelope
//! `resourceSpans[].scopeSpans[].spans[]`, and one conversation may span several files
//! while one file holds several. So the whole directory is **one source** (its first file
//! the path, the others parts, never append-only): every span of every file is read, the
//! spans are grouped by `gen_ai.conversation.id` and ordered by `startTimeUnixNano`, and each
//! conversation is one session. Attributes are flattened from the OTLP key/value list
//! (`stringValue`, `intValue`, `boolValue`, `doubleValue`; an already flat object is read too).
//!
//! | span (`gen_ai.operation.name`) | Turn | rule |
//! | --- | --- | --- |
//! | `chat`, `gen_ai.input.messages` (JSON string) | `User` | the last `role:"user"` message's text parts; the input repeats history, so a prompt already read is not read again |
//! | `chat`, `gen_ai.output.messages` text parts | `Assistant` | joined by newline |
//! | `chat`, output `tool_call` parts | — | proposals; the executed call is the `execute_tool` span |
//! | `execute_tool` | `ToolCall` | `gen_ai.tool.name`, `gen_ai.tool.call.id` (read once per id); arguments (JSON string) `command` → command, `filename` → file (read, or edit with a `patch`) |
//! | `execute_tool`, `gen_ai.tool.call.result` | folded into its call | a JSON `{"Value": …}` string's `Value`, else the text |
//! | `invoke_agent`, other operations, spans without a conversation id | skipped | turn envelope, usage |
//! | malformed or torn line | skipped | counted in the parse stats |

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use deja_core::discover::find_files;
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::read::{for_each_json_line, read_source, str_at};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, FileAction, FileTouch, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions,
    ParseStats, Role, SessionBuilder, SessionSink, SourceRef, StoreEnv, Timestamp, ToolUse, Turn,
};
use serde_json::{Map, Value};

const ID: &str = "vs-copilot";

/// The Visual Studio Copilot adapter.
pub struct VsCopilotFormat;

deja_core::inventory::submit!(deja_core::Registration(&VsCopilotFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Visual Studio Copilot",
    container: "OpenTelemetry trace export (OTLP/JSON lines), conversations stitched across files",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[
            Root::windows("${LOCALAPPDATA:-~/AppData/Local}/Temp/VSGitHubCopilotLogs/traces"),
            Root::macos("~/Library/Caches/VSGitHubCopilotLogs/traces"),
            Root::linux("~/.cache/VSGitHubCopilotLogs/traces"),
        ],
        layout: Layout::Custom { shape: "<YYYYMMDDTHHMMSS>_<hex>_VSGitHubCopilot_traces.jsonl, all one source", walk: Some(walk_traces) },
    }]),
    needs: &["index promptly: the trace directory is a temp/cache directory the OS or IDE may clear"],
    format_summary: "Visual Studio's Copilot exports OpenTelemetry GenAI spans, one OTLP/JSON envelope per line: `chat` \
        spans carry the prompt history (`gen_ai.input.messages`) and the reply (`gen_ai.output.messages`, text and \
        proposed tool calls) as JSON strings, `execute_tool` spans the executed call (name, id, arguments, result). \
        Spans are grouped by `gen_ai.conversation.id` across every file and ordered by start time; repeated prompts \
        in the history are read once. No project or title is recorded.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Unknown,
        auto_recall: Capability::Unknown,
        skill: Capability::Unknown,
        command: Capability::Unknown,
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Unsupported("sessions live in the IDE only"),
        handoff: Handoff::Paste("an IDE chat with no start-with-prompt command"),
    },
};

/// The trace files of one directory as one source: a conversation can continue in any
/// file, so the first (by name) is read with the others as its parts.
fn walk_traces(root: &Path, _env: &StoreEnv, found: &mut Discovery) {
    let mut files = find_files(root, 1, &|name| name.ends_with("_traces.jsonl"));
    files.sort();
    let mut files = files.into_iter();
    if let Some(first) = files.next() {
        found.sources.push(files.fold(SourceRef::file(first), SourceRef::with_part));
    }
}

impl HarnessFormat for VsCopilotFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let _ = opts; // the spans carry no reasoning
        let mut stats = ParseStats::default();
        let mut spans = Vec::new();
        for path in std::iter::once(&src.path).chain(&src.parts) {
            let bytes = match read_source(path, &mut stats) {
                Ok(b) => b.bytes,
                // A part the cache cleaner removed meanwhile: the others still count.
                Err(e) if path != &src.path => {
                    stats.problem(format!("{}: {e}", path.display()));
                    continue;
                }
                Err(e) => return Err(e),
            };
            for_each_json_line(&bytes, 0, path, &mut stats, |_offset, v| collect_spans(&v, &mut spans));
        }
        // Files are read in name (= start time) order; the sort puts spans in time order.
        spans.sort_by_key(|s| s.start);
        let mut by_conversation: BTreeMap<String, Vec<Span>> = BTreeMap::new();
        for s in spans {
            by_conversation.entry(s.conversation.clone()).or_default().push(s);
        }
        for (id, spans) in by_conversation {
            if let Some(session) = conversation(src, &id, &spans) {
                out.session(session);
            }
        }
        Ok(stats)
    }

    fn synthetic(&self) -> Option<&dyn deja_core::SynthWriter> {
        Some(self)
    }
}

/// One span with a conversation id, its attributes flattened.
struct Span {
    conversation: String,
    start: Option<i64>,
    attrs: Map<String, Value>,
}

impl Span {
    fn attr(&self, key: &str) -> Option<&str> {
        self.attrs.get(key).and_then(Value::as_str)
    }

    fn time(&self) -> Option<Timestamp> {
        self.start.map(|ns| Timestamp::from_millis(ns / 1_000_000))
    }
}

fn collect_spans(envelope: &Value, out: &mut Vec<Span>) {
    let list = |v: &Value, key: &str| v.get(key).and_then(Value::as_array).cloned().unwrap_or_default();
    for rs in list(envelope, "resourceSpans") {
        for ss in list(&rs, "scopeSpans") {
            for span in list(&ss, "spans") {
                let attrs = flatten(span.get("attributes"));
                let Some(conversation) = attrs.get("gen_ai.conversation.id").and_then(Value::as_str).filter(|c| !c.is_empty()) else {
                    continue;
                };
                let start = span.get("startTimeUnixNano").and_then(|t| match t {
                    Value::String(s) => s.parse::<i64>().ok(),
                    Value::Number(n) => n.as_i64(),
                    _ => None,
                });
                out.push(Span { conversation: conversation.to_string(), start, attrs });
            }
        }
    }
}

/// The OTLP key/value list as a map of plain values (an already flat object as it is).
fn flatten(attrs: Option<&Value>) -> Map<String, Value> {
    match attrs {
        Some(Value::Object(m)) => m.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|kv| {
                let key = str_at(kv, &["key"])?;
                let v = kv.get("value")?;
                let plain = ["stringValue", "intValue", "boolValue", "doubleValue"].iter().find_map(|k| v.get(*k)).cloned()?;
                Some((key.to_string(), plain))
            })
            .collect(),
        _ => Map::new(),
    }
}

/// A JSON value encoded inside a string attribute.
fn decoded(s: Option<&str>) -> Value {
    s.and_then(|s| serde_json::from_str(s).ok()).unwrap_or(Value::Null)
}

/// The text parts of one GenAI message, joined by newline.
fn text_parts(message: &Value) -> String {
    let parts = message.get("parts").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[]);
    let texts: Vec<&str> = parts
        .iter()
        .filter(|p| str_at(p, &["type"]) == Some("text"))
        .filter_map(|p| str_at(p, &["content"]))
        .filter(|t| !t.trim().is_empty())
        .collect();
    texts.join("\n")
}

fn conversation(src: &SourceRef, id: &str, spans: &[Span]) -> Option<deja_core::Session> {
    let mut b = SessionBuilder::new(ID, id, src.clone());
    let mut prompts: HashSet<String> = HashSet::new();
    let mut calls: HashSet<String> = HashSet::new();
    for s in spans {
        let time = s.time();
        b.touch(time);
        match s.attr("gen_ai.operation.name") {
            Some("chat") => {
                let input = decoded(s.attr("gen_ai.input.messages"));
                let last_user = input.as_array().and_then(|m| m.iter().rev().find(|m| str_at(m, &["role"]) == Some("user")));
                if let Some(prompt) = last_user.map(text_parts).filter(|p| !p.is_empty()) {
                    if prompts.insert(prompt.clone()) {
                        b.push(Turn::new(Role::User, prompt).at(time));
                    }
                }
                let output = decoded(s.attr("gen_ai.output.messages"));
                for m in output.as_array().map(Vec::as_slice).unwrap_or(&[]) {
                    let text = text_parts(m);
                    if !text.is_empty() {
                        b.push(Turn::new(Role::Assistant, text).at(time));
                    }
                }
            }
            Some("execute_tool") => {
                let call_id = s.attr("gen_ai.tool.call.id").unwrap_or("");
                if !call_id.is_empty() && !calls.insert(call_id.to_string()) {
                    continue;
                }
                b.push_call(Some(call_id), tool_turn(s, time));
                let result = s.attr("gen_ai.tool.call.result").map(|r| match decoded(Some(r)) {
                    Value::Object(o) => o.get("Value").and_then(Value::as_str).map_or_else(|| r.to_string(), str::to_string),
                    _ => r.to_string(),
                });
                if let Some(r) = result {
                    b.complete_call(call_id, &r, false, None, time);
                }
            }
            // invoke_agent envelopes and anything else.
            _ => {}
        }
    }
    b.finish()
}

/// The executed call: its name, and the command and file its arguments name.
fn tool_turn(s: &Span, time: Option<Timestamp>) -> Turn {
    let name = s.attr("gen_ai.tool.name").unwrap_or("tool");
    let args = decoded(s.attr("gen_ai.tool.call.arguments"));
    let mut turn = Turn::new(Role::ToolCall, "").at(time);
    turn.tool = Some(ToolUse { name: name.to_string(), command: str_at(&args, &["command"]).map(str::to_string), ..ToolUse::default() });
    if let Some(file) = str_at(&args, &["filename"]).filter(|f| !f.is_empty()) {
        // A `patch` is a diff applied to the file, not an old span; otherwise it was read.
        let action = if args.get("patch").is_some() { FileAction::Edit } else { FileAction::Read };
        turn.files.push(FileTouch { path: file.to_string(), action });
    }
    turn
}

mod synth;

impl deja_core::SynthWriter for VsCopilotFormat {
    fn write(&self, home: &std::path::Path, session: &deja_core::SynthSession) -> std::io::Result<std::path::PathBuf> {
        synth::write(home, session)
    }
}

//! pi (`pi`): the pi.dev coding agent. One append-only JSONL file per session under
//! `~/.pi/agent/sessions/--<encoded-cwd>--/<ISO-timestamp>_<uuid>.jsonl` (the agent
//! directory moves with `PI_CODING_AGENT_DIR`, the sessions directory alone with
//! `PI_CODING_AGENT_SESSION_DIR` or the agent's `settings.json` `sessionDir`; `DEJA_PI_ROOT`
//! names the sessions directory itself).
//!
//! pi is the root of the pi-lineage, so the reader is `deja_core::family::pi_jsonl`
//! (its module doc has the record → role table) with pi's own dialect: the project
//! comes from the `--…--` directory the file sits in, not from the header `cwd` (the
//! page's rule; `cwd` only when the directory gives nothing), and the bash tool's
//! `Command exited with code N` last line is the exit status; a bash result that is not an
//! error exited 0 (pi 0.73.1's tool fails every non-zero exit with that line) and its
//! `(no output)` placeholder is no output. The only text pi injects into user turns is
//! the `<file name="…">…</file>` block of each `@file` argument, before the prompt; it is
//! declared as a preamble (deja's own recall arrives as a `custom_message`, which the
//! family skips).
//!
//! The synthetic writer lays a session out exactly as pi 0.73 does: the `session` v3
//! header, a `model_change` root entry, then `message` entries chained by 8-hex
//! `id`/`parentId`, tool calls as `toolCall` blocks answered by `toolResult` messages.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use deja_core::family::pi_jsonl::{self, PiDialect, MAX_WALK_DEPTH};
use deja_core::synth::splitmix64;
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, Os, ParseOptions, ParseStats, SessionSink,
    SourceRef, StoreEnv, StorePath, SynthSession, SynthTurn, SynthWriter, Timestamp,
};
use serde_json::Value;

const ID: &str = "pi";

/// The exit line pi's bash tool appends to the output of a failed command.
pub const PI_EXIT: &[&str] = &["Command exited with code "];

/// What pi's bash tool writes as the result of a command that printed nothing.
pub const PI_NO_OUTPUT: &str = "(no output)";

/// pi's dialect: the project from the encoded directory, exit codes from the marker line,
/// and a clean bash result is exit 0 (pi 0.73's bash tool throws, with the marker line, on
/// every non-zero exit, so a result that is not an error exited 0).
pub const DIALECT: PiDialect = PiDialect {
    harness: ID,
    cwd_is_project: false,
    exit_markers: PI_EXIT,
    clean_exit_zero: true,
    no_output_text: Some(PI_NO_OUTPUT),
    ..PiDialect::BASE
};

/// What pi writes into user text itself: `pi @file "…"` puts each attached file (its
/// contents, or nothing for an image) as a `<file name="<abs path>">…</file>` block before
/// the prompt (pi 0.73.1's `processFileArguments`). Claude's attachments are records of
/// their own that deja skips; here they are stripped from the front of the user turn, so
/// the prompt, not a file's text, is the speech and the title.
static INJECTED: InjectedText = InjectedText { preambles: &["file"], ..InjectedText::NONE };

/// The pi adapter.
pub struct PiFormat;

deja_core::inventory::submit!(deja_core::Registration(&PiFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "pi",
    container: "JSONL, one append-only file per session (session header + id/parentId entry tree)",
    stores: &[
        StorePath { os: Os::Any, path: "~/.pi/agent/sessions/--<encoded-cwd>--/<ISO-timestamp>_<uuid>.jsonl" },
        StorePath { os: Os::Any, path: "$PI_CODING_AGENT_DIR/sessions/--<encoded-cwd>--/<ISO-timestamp>_<uuid>.jsonl" },
        StorePath { os: Os::Any, path: "$PI_CODING_AGENT_SESSION_DIR/--<encoded-cwd>--/<ISO-timestamp>_<uuid>.jsonl" },
        StorePath { os: Os::Any, path: "<settings.json sessionDir>/--<encoded-cwd>--/<ISO-timestamp>_<uuid>.jsonl" },
    ],
    env_vars: &["PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR"],
    deja_vars: &["DEJA_PI_ROOT"],
    needs: &[],
    format_summary: "pi writes one append-only JSONL file per session: a `session` header (version 3, id, timestamp, cwd), \
        then typed entries chained by `id`/`parentId` into a tree. `message` entries carry the user prompt, the assistant's \
        text, thinking and `toolCall` blocks, and `toolResult` messages paired with their call by `toolCallId` (the bash \
        tool's failed output ends `Command exited with code N`). `compaction` and `branch_summary` entries hold summaries; \
        `model_change`, `thinking_level_change` and `custom` entries are metadata. The project is the `--<encoded-cwd>--` \
        directory the file sits in.",
    injected: &INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Planned("`pi install npm:pi-mcp-adapter`, then `mcpServers.deja` in `~/.pi/agent/mcp.json`"),
        auto_recall: Capability::Planned(
            "extension `~/.pi/agent/extensions/deja.ts`: `before_agent_start` returns a `deja-recall` custom message",
        ),
        skill: Capability::Planned("`~/.pi/agent/skills/deja-history/SKILL.md`"),
        command: Capability::Planned("`/deja` registered by the extension with `pi.registerCommand`"),
        resume: Capability::Planned("`cd <decoded project> && pi --session <id>`"),
        handoff: Capability::Planned("exec: `pi \"<prompt>\"`"),
    },
};

impl HarnessFormat for PiFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn discover(&self, env: &StoreEnv) -> Discovery {
        let mut found = Discovery::default();
        pi_jsonl::discover_sessions(&DIALECT, &sessions_root(env), MAX_WALK_DEPTH, env.include_subagents(), &mut found);
        found
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        pi_jsonl::parse(&DIALECT, src, opts, out)
    }

    fn synthetic(&self) -> Option<&dyn SynthWriter> {
        Some(self)
    }
}

/// `DEJA_PI_ROOT`, else `PI_CODING_AGENT_SESSION_DIR`, else the agent directory's
/// `settings.json` `sessionDir`, else `<agent>/sessions`, the agent directory being
/// `PI_CODING_AGENT_DIR` or `~/.pi/agent` (pi's own order: the session directory wins over
/// the agent directory).
fn sessions_root(env: &StoreEnv) -> PathBuf {
    if let Some(root) = env.deja_root(ID).or_else(|| env.path_var("PI_CODING_AGENT_SESSION_DIR")) {
        return root;
    }
    let agent = env.path_var("PI_CODING_AGENT_DIR").unwrap_or_else(|| env.home().join(".pi/agent"));
    settings_session_dir(env, &agent).unwrap_or_else(|| agent.join("sessions"))
}

/// An absolute (or `~`) `sessionDir` in `<agent>/settings.json`; a relative one is left
/// alone, since what pi resolves it against is not known.
fn settings_session_dir(env: &StoreEnv, agent: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(agent.join("settings.json")).ok()?;
    let settings: Value = serde_json::from_str(&text).ok()?;
    let dir = settings.get("sessionDir")?.as_str()?.trim();
    let path = env.expand(dir);
    (!dir.is_empty() && path.is_absolute()).then_some(path)
}

/// pi's directory name for a working directory: the leading separator dropped, every
/// `/`, `\` and `:` a `-`, wrapped in `--`.
pub fn encode_cwd(cwd: &str) -> String {
    let trimmed = cwd.trim_start_matches(['/', '\\']);
    let inner: String = trimmed.chars().map(|c| if matches!(c, '/' | '\\' | ':') { '-' } else { c }).collect();
    format!("--{inner}--")
}

impl SynthWriter for PiFormat {
    fn write(&self, home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
        let dir = home.join(".pi/agent/sessions").join(encode_cwd(&session.project));
        std::fs::create_dir_all(&dir)?;
        let stamp = session.started.to_rfc3339().replace([':', '.'], "-");
        let path = dir.join(format!("{stamp}_{}.jsonl", session.id));
        std::fs::write(&path, render(session))?;
        Ok(path)
    }
}

/// One pi session file: header, `model_change` root, then the turns as pi writes them.
fn render(session: &SynthSession) -> String {
    let mut w = Render {
        out: String::new(),
        seed: splitmix64(session.id.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b.into()))),
        n: 0,
        parent: None,
        calls: 0,
    };
    w.line(&J::O(vec![
        ("type", s("session")),
        ("version", J::N(3)),
        ("id", s(&session.id)),
        ("timestamp", s(&session.started.to_rfc3339())),
        ("cwd", s(&session.project)),
    ]));
    w.entry(session.started, "model_change", vec![("provider", s("synthetic")), ("modelId", s("synth-1"))]);
    // pi writes a model's thinking in the same assistant message as what follows it.
    let mut thinking: Vec<J> = Vec::new();
    for turn in &session.turns {
        match turn {
            SynthTurn::User { text, time } => {
                let content = J::A(vec![text_block(text)]);
                w.message(*time, J::O(vec![("role", s("user")), ("content", content), ("timestamp", J::N(time.millis()))]));
            }
            SynthTurn::Reasoning { text, .. } => thinking.push(J::O(vec![("type", s("thinking")), ("thinking", s(text))])),
            SynthTurn::Assistant { text, time } => {
                let mut content = std::mem::take(&mut thinking);
                content.push(text_block(text));
                w.message(*time, assistant(content, "stop", *time));
            }
            SynthTurn::Shell { command, output, exit_code, time } => {
                // pi's bash tool reports a failure as the output plus its exit line.
                let text = if *exit_code == 0 { output.clone() } else { format!("{output}\n\nCommand exited with code {exit_code}") };
                w.tool(&mut thinking, *time, "bash", vec![("command", s(command))], &text, *exit_code != 0);
            }
            SynthTurn::Read { path, output, time } => {
                w.tool(&mut thinking, *time, "read", vec![("path", s(path))], output, false);
            }
            SynthTurn::Edit { path, old, new, time } => {
                let text = format!("Successfully replaced text in {path}.");
                w.tool(&mut thinking, *time, "edit", vec![("path", s(path)), ("oldText", s(old)), ("newText", s(new))], &text, false);
            }
        }
    }
    // Thinking with nothing after it is still an assistant message of its own.
    if !thinking.is_empty() {
        let time = session.turns.last().map_or(session.started, SynthTurn::time);
        w.message(time, assistant(thinking, "stop", time));
    }
    w.out
}

/// A JSON value whose object keys stay in the order pi writes them (serde_json's map,
/// without its `preserve_order` feature, would sort them).
enum J {
    S(String),
    N(i64),
    B(bool),
    Null,
    A(Vec<J>),
    O(Vec<(&'static str, J)>),
}

fn s(text: &str) -> J {
    J::S(text.to_string())
}

impl J {
    fn write(&self, out: &mut String) {
        match self {
            J::S(text) => out.push_str(&Value::from(text.as_str()).to_string()),
            J::N(n) => {
                let _ = write!(out, "{n}");
            }
            J::B(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Null => out.push_str("null"),
            J::A(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            J::O(pairs) => {
                out.push('{');
                for (i, (key, value)) in pairs.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::from(*key).to_string());
                    out.push(':');
                    value.write(out);
                }
                out.push('}');
            }
        }
    }
}

fn text_block(text: &str) -> J {
    J::O(vec![("type", s("text")), ("text", s(text))])
}

/// An assistant message with the fields pi 0.73 writes (`api`, `provider`, `model`,
/// `usage` with `cost`, `stopReason`, epoch-ms `timestamp`).
fn assistant(content: Vec<J>, stop: &str, time: Timestamp) -> J {
    let zero = || J::N(0);
    let cost = J::O(vec![("input", zero()), ("output", zero()), ("cacheRead", zero()), ("cacheWrite", zero()), ("total", zero())]);
    let usage = J::O(vec![
        ("input", zero()),
        ("output", zero()),
        ("cacheRead", zero()),
        ("cacheWrite", zero()),
        ("totalTokens", zero()),
        ("cost", cost),
    ]);
    J::O(vec![
        ("role", s("assistant")),
        ("content", J::A(content)),
        ("api", s("openai-completions")),
        ("provider", s("synthetic")),
        ("model", s("synth-1")),
        ("usage", usage),
        ("stopReason", s(stop)),
        ("timestamp", J::N(time.millis())),
    ])
}

struct Render {
    out: String,
    seed: u64,
    n: u64,
    parent: Option<String>,
    calls: u32,
}

impl Render {
    fn line(&mut self, v: &J) {
        v.write(&mut self.out);
        self.out.push('\n');
    }

    /// An entry with pi's envelope (`type`, an 8-hex `id`, the previous entry as
    /// `parentId`, ISO `timestamp`), then its own fields.
    fn entry(&mut self, time: Timestamp, kind: &str, fields: Vec<(&'static str, J)>) {
        self.n += 1;
        let id = format!("{:08x}", splitmix64(self.seed ^ self.n) as u32);
        let parent = self.parent.as_deref().map_or(J::Null, s);
        let mut pairs = vec![("type", s(kind)), ("id", s(&id)), ("parentId", parent), ("timestamp", s(&time.to_rfc3339()))];
        pairs.extend(fields);
        self.line(&J::O(pairs));
        self.parent = Some(id);
    }

    fn message(&mut self, time: Timestamp, message: J) {
        self.entry(time, "message", vec![("message", message)]);
    }

    /// An assistant `toolCall` and pi's `toolResult` for it a millisecond later.
    fn tool(&mut self, thinking: &mut Vec<J>, time: Timestamp, name: &str, args: Vec<(&'static str, J)>, text: &str, is_error: bool) {
        self.calls += 1;
        let call_id = format!("call_{}", self.calls);
        let mut content = std::mem::take(thinking);
        content.push(J::O(vec![("type", s("toolCall")), ("id", s(&call_id)), ("name", s(name)), ("arguments", J::O(args))]));
        self.message(time, assistant(content, "toolUse", time));
        let done = Timestamp(time.millis() + 1);
        let result = J::O(vec![
            ("role", s("toolResult")),
            ("toolCallId", s(&call_id)),
            ("toolName", s(name)),
            ("content", J::A(vec![text_block(text)])),
            ("isError", J::B(is_error)),
            ("timestamp", J::N(done.millis())),
        ]);
        self.message(done, result);
    }
}

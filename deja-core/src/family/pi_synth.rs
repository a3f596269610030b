//! The pi-lineage synthetic writer: lays a [`SynthSession`] out as pi and its forks
//! (omp, gjc, kimchi, senpi, prime, qclaw, clawdbot) write a session, so the demo home,
//! the benchmark corpora and the conformance round trip go through the real discovery
//! and the [`pi_jsonl`](super::pi_jsonl) reader.
//!
//! Every fork writes the same lines: a `session` v3 header, a `model_change` root entry,
//! then `message` entries chained by 8-hex `id`/`parentId`, tool calls as `toolCall`
//! blocks answered by `toolResult` messages. What differs is described by a [`PiLayout`]:
//! where the sessions directory sits below the home, how a working directory names its
//! subdirectory, how the file is named, extra header fields (prime's `rlmDepth`), omp
//! 18's title slot line, which tools the harness has and how a command's exit status is
//! reported (pi's exit line, omp's `Wall time:` footer, OpenClaw's `details.exitCode`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::format::SynthWriter;
use crate::synth::{splitmix64, SynthSession, SynthTurn};
use crate::time::Timestamp;

/// How the project's subdirectory of the sessions directory is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectDir {
    /// pi's `--src-billing--`: the leading separator dropped, `/`, `\` and `:` as `-`,
    /// wrapped in `--`.
    Wrapped,
    /// omp's and gjc's `-src-billing`: every `/`, `\` and `:` a `-`.
    Dashed,
    /// No project directory: files sit directly in the sessions directory.
    Flat,
}

/// How a session file is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileName {
    /// `<ISO-timestamp>_<id>.jsonl`, the timestamp's `:` and `.` as `-` (pi's
    /// `SessionManager`, kept by its forks).
    StampedId,
    /// `<id>.jsonl`.
    Id,
}

/// How a shell command's exit status reaches the transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitReport {
    /// A failed command's output ends with `<marker><N>` after a blank line (pi's bash
    /// tool: `Command exited with code N`); a success has no such line.
    Marker(&'static str),
    /// omp: the output ends with a `Wall time:` footer and `details` carries the timing;
    /// there is no exit code, only `isError`.
    WallTime,
    /// OpenClaw's `exec`: `details` carries `status` and `exitCode`.
    Details,
}

/// Which tools the harness gives the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PiTools {
    /// pi's `read`/`edit` tools and a shell tool of this name (`bash`, OpenClaw's `exec`).
    Pi { shell: &'static str },
    /// prime: one `ipython` tool whose results report file changes in `details.diffs`;
    /// a command runs as a `bashExecution` message (pi's `!command` record), since a
    /// `bash()` inside a cell is not a command the reader can see.
    Ipython,
}

/// Everything one pi-lineage harness does differently when it writes a session.
#[derive(Debug, Clone, Copy)]
pub struct PiLayout {
    /// The sessions directory below the home, as discovery finds it with only `HOME` set.
    pub sessions_dir: &'static str,
    pub project_dir: ProjectDir,
    pub file_name: FileName,
    /// omp 18's fixed-width `title` slot line before the header.
    pub title_slot: bool,
    /// Header fields after `cwd`, each value raw JSON (prime's `"rlmDepth"`, `"0"`).
    pub header_extra: &'static [(&'static str, &'static str)],
    /// The `model_change` root entry's fields, each value raw JSON.
    pub model_change: &'static [(&'static str, &'static str)],
    pub tools: PiTools,
    pub exit: ExitReport,
}

/// pi's `model_change`: `provider` and `modelId`.
pub const PI_MODEL_CHANGE: &[(&str, &str)] = &[("provider", "\"synthetic\""), ("modelId", "\"synth-1\"")];

impl PiLayout {
    /// pi 0.73 itself: `~/.pi/agent/sessions/--<cwd>--/<ISO>_<uuid>.jsonl`, `bash` with
    /// the `Command exited with code N` line.
    pub const PI: PiLayout = PiLayout {
        sessions_dir: ".pi/agent/sessions",
        project_dir: ProjectDir::Wrapped,
        file_name: FileName::StampedId,
        title_slot: false,
        header_extra: &[],
        model_change: PI_MODEL_CHANGE,
        tools: PiTools::Pi { shell: "bash" },
        exit: ExitReport::Marker(PI_EXIT_MARKER),
    };
}

/// The exit line pi's bash tool appends to a failed command's output.
pub const PI_EXIT_MARKER: &str = "Command exited with code ";

/// A [`SynthWriter`] for one pi-lineage harness, for adapters to return from
/// `HarnessFormat::synthetic` as a `static`.
#[derive(Debug, Clone, Copy)]
pub struct PiSynth(pub PiLayout);

impl SynthWriter for PiSynth {
    fn write(&self, home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
        write(&self.0, home, session)
    }
}

/// Writes `session` into `home` where the harness of `layout` keeps it; returns the file.
pub fn write(layout: &PiLayout, home: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
    write_at(layout, &home.join(layout.sessions_dir), session)
}

/// Writes `session` into the sessions directory `sessions` (for harnesses whose store
/// moves with the OS, like an app-data directory), ignoring `layout.sessions_dir`.
pub fn write_at(layout: &PiLayout, sessions: &Path, session: &SynthSession) -> std::io::Result<PathBuf> {
    let mut dir = sessions.to_path_buf();
    match layout.project_dir {
        ProjectDir::Wrapped => dir.push(wrapped_dir(&session.project)),
        ProjectDir::Dashed => dir.push(dashed_dir(&session.project)),
        ProjectDir::Flat => {}
    }
    std::fs::create_dir_all(&dir)?;
    let name = match layout.file_name {
        FileName::StampedId => format!("{}_{}.jsonl", session.started.to_rfc3339().replace([':', '.'], "-"), session.id),
        FileName::Id => format!("{}.jsonl", session.id),
    };
    let path = dir.join(name);
    std::fs::write(&path, render(layout, session))?;
    Ok(path)
}

/// pi's directory name for a working directory: the leading separator dropped, every
/// `/`, `\` and `:` a `-`, wrapped in `--`.
pub fn wrapped_dir(cwd: &str) -> String {
    let trimmed = cwd.trim_start_matches(['/', '\\']);
    let inner: String = trimmed.chars().map(|c| if matches!(c, '/' | '\\' | ':') { '-' } else { c }).collect();
    format!("--{inner}--")
}

/// omp's and gjc's directory name for a working directory: every `/`, `\` and `:` a `-`.
pub fn dashed_dir(cwd: &str) -> String {
    cwd.chars().map(|c| if matches!(c, '/' | '\\' | ':') { '-' } else { c }).collect()
}

/// omp's title slot is exactly this many bytes with its newline, so omp can rewrite the
/// title in place without moving the rest of the file.
const TITLE_SLOT_BYTES: usize = 256;

/// One session file of `layout`: header, `model_change` root, then the turns.
pub fn render(layout: &PiLayout, session: &SynthSession) -> String {
    let mut w = Render {
        layout,
        out: String::new(),
        seed: splitmix64(session.id.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b.into()))),
        n: 0,
        parent: None,
        calls: 0,
    };
    if layout.title_slot {
        w.title_slot(session);
    }
    let mut header = vec![
        ("type", s("session")),
        ("version", J::N(3)),
        ("id", s(&session.id)),
        ("timestamp", s(&session.started.to_rfc3339())),
        ("cwd", s(&session.project)),
    ];
    header.extend(layout.header_extra.iter().map(|(k, v)| (*k, J::Raw(v))));
    w.line(&J::O(header));
    w.entry(session.started, "model_change", layout.model_change.iter().map(|(k, v)| (*k, J::Raw(v))).collect());
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
            SynthTurn::Shell { command, output, exit_code, time } => w.shell(&mut thinking, *time, command, output, *exit_code),
            SynthTurn::Read { path, output, time } => match layout.tools {
                PiTools::Pi { .. } => w.tool(&mut thinking, *time, "read", vec![("path", s(path))], output, false, None),
                PiTools::Ipython => {
                    let code = format!("print(open({}).read())", py_str(path));
                    w.tool(&mut thinking, *time, "ipython", vec![("code", s(&code))], output, false, None);
                }
            },
            SynthTurn::Edit { path, old, new, time } => match layout.tools {
                PiTools::Pi { .. } => {
                    let text = format!("Successfully replaced text in {path}.");
                    let args = vec![("path", s(path)), ("oldText", s(old)), ("newText", s(new))];
                    w.tool(&mut thinking, *time, "edit", args, &text, false, None);
                }
                PiTools::Ipython => {
                    // prime reports what a cell changed in `details.diffs`, not in the code.
                    let code = format!("await edit({}, {}, {})", py_str(path), py_str(old), py_str(new));
                    let diff = J::O(vec![("path", s(path)), ("oldStr", s(old)), ("newStr", s(new)), ("startLine", J::N(1))]);
                    let details = J::O(vec![("diffs", J::A(vec![diff]))]);
                    w.tool(&mut thinking, *time, "ipython", vec![("code", s(&code))], "", false, Some(details));
                }
            },
        }
    }
    // Thinking with nothing after it is still an assistant message of its own.
    if !thinking.is_empty() {
        let time = session.turns.last().map_or(session.started, SynthTurn::time);
        w.message(time, assistant(thinking, "stop", time));
    }
    w.out
}

/// A Python string literal (JSON's escaping is valid Python for these).
fn py_str(text: &str) -> String {
    Value::from(text).to_string()
}

/// A JSON value whose object keys stay in the order pi writes them (serde_json's map,
/// without its `preserve_order` feature, would sort them).
enum J {
    S(String),
    N(i64),
    B(bool),
    Null,
    /// Raw JSON text from a layout's constant fields.
    Raw(&'static str),
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
            J::Raw(raw) => out.push_str(raw),
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

struct Render<'a> {
    layout: &'a PiLayout,
    out: String,
    seed: u64,
    n: u64,
    parent: Option<String>,
    calls: u32,
}

impl Render<'_> {
    fn line(&mut self, v: &J) {
        v.write(&mut self.out);
        self.out.push('\n');
    }

    /// omp 18's title slot: the title (empty until one is set) padded with spaces to the
    /// slot's fixed width.
    fn title_slot(&mut self, session: &SynthSession) {
        let mut pairs = vec![("type", s("title")), ("v", J::N(1)), ("title", s(session.title.as_deref().unwrap_or("")))];
        if session.title.is_some() {
            pairs.push(("source", s("user")));
        }
        pairs.push(("updatedAt", s(&session.started.to_rfc3339())));
        let mut bare = String::new();
        J::O(pairs).write(&mut bare);
        // `,"pad":""` and the newline take 10 bytes; a title too long for the slot gets none.
        let pad = TITLE_SLOT_BYTES.saturating_sub(bare.len() + 10);
        bare.truncate(bare.len() - 1);
        let _ = writeln!(self.out, "{bare},\"pad\":\"{}\"}}", " ".repeat(pad));
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

    /// A shell command as the harness's shell tool reports it.
    fn shell(&mut self, thinking: &mut Vec<J>, time: Timestamp, command: &str, output: &str, exit_code: i64) {
        let PiTools::Pi { shell } = self.layout.tools else {
            // prime has no shell tool: the command is a `bashExecution` record, after any
            // thinking that led to it.
            if !thinking.is_empty() {
                self.message(time, assistant(std::mem::take(thinking), "stop", time));
            }
            let record = J::O(vec![
                ("role", s("bashExecution")),
                ("command", s(command)),
                ("output", s(output)),
                ("exitCode", J::N(exit_code)),
                ("cancelled", J::B(false)),
                ("truncated", J::B(false)),
                ("timestamp", J::N(time.millis())),
            ]);
            self.message(time, record);
            return;
        };
        let failed = exit_code != 0;
        match self.layout.exit {
            ExitReport::Marker(marker) => {
                let text = if failed { format!("{output}\n\n{marker}{exit_code}") } else { output.to_string() };
                self.tool(thinking, time, shell, vec![("command", s(command))], &text, failed, None);
            }
            ExitReport::WallTime => {
                let text = format!("{output}\n\n\nWall time: 0.41 seconds");
                let details = J::O(vec![("timeoutSeconds", J::N(300)), ("wallTimeMs", J::Raw("412.5"))]);
                let args = vec![("command", s(command)), ("timeout", J::N(300))];
                self.tool(thinking, time, shell, args, &text, failed, Some(details));
            }
            ExitReport::Details => {
                let status = if failed { "failed" } else { "completed" };
                let details = J::O(vec![("status", s(status)), ("exitCode", J::N(exit_code))]);
                self.tool(thinking, time, shell, vec![("command", s(command))], output, failed, Some(details));
            }
        }
    }

    /// An assistant `toolCall` and the harness's `toolResult` for it a millisecond later.
    #[allow(clippy::too_many_arguments)]
    fn tool(
        &mut self,
        thinking: &mut Vec<J>,
        time: Timestamp,
        name: &str,
        args: Vec<(&'static str, J)>,
        text: &str,
        is_error: bool,
        details: Option<J>,
    ) {
        self.calls += 1;
        let call_id = format!("call_{}", self.calls);
        let mut content = std::mem::take(thinking);
        content.push(J::O(vec![("type", s("toolCall")), ("id", s(&call_id)), ("name", s(name)), ("arguments", J::O(args))]));
        self.message(time, assistant(content, "toolUse", time));
        let done = Timestamp(time.millis() + 1);
        let mut result =
            vec![("role", s("toolResult")), ("toolCallId", s(&call_id)), ("toolName", s(name)), ("content", J::A(vec![text_block(text)]))];
        if let Some(details) = details {
            result.push(("details", details));
        }
        result.push(("isError", J::B(is_error)));
        result.push(("timestamp", J::N(done.millis())));
        self.message(done, J::O(result));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::family::pi_jsonl::{self, DirProject, PiDialect};
    use crate::format::ParseOptions;
    use crate::model::{ExitStatus, Role, Session, SourceRef};

    /// The conformance kit's sample (the kit itself is behind the `testkit` feature).
    fn sample() -> SynthSession {
        let at = |n: i64| Timestamp(1_772_445_600_000 + n * 1000);
        SynthSession {
            id: "0b1c2d3e-4f50-4a61-8b72-93a4b5c6d7e8".to_string(),
            project: "/src/billing".to_string(),
            title: None,
            started: at(0),
            turns: vec![
                SynthTurn::User { text: "why does the invoice rounding test fail?".to_string(), time: at(0) },
                SynthTurn::Shell {
                    command: "cargo test -p billing".to_string(),
                    output: "test rounding ... FAILED".to_string(),
                    exit_code: 101,
                    time: at(2),
                },
                SynthTurn::Assistant { text: "The rounding mode was half-even; it should be half-up.".to_string(), time: at(4) },
            ],
        }
    }

    fn parse(d: &PiDialect, path: &Path) -> Session {
        let mut out: Vec<Session> = Vec::new();
        pi_jsonl::parse(d, &SourceRef::file(path), &ParseOptions::default(), &mut out).expect("parse");
        out.into_iter().next().expect("one session")
    }

    fn command_exit(s: &Session) -> Option<ExitStatus> {
        s.turns.iter().find(|t| t.role == Role::ToolCall).and_then(|t| t.tool.as_ref()).and_then(|t| t.exit.clone())
    }

    #[test]
    fn omp_title_slot_is_fixed_width_and_the_footer_goes() {
        let layout = PiLayout {
            sessions_dir: ".omp/agent/sessions",
            project_dir: ProjectDir::Dashed,
            title_slot: true,
            exit: ExitReport::WallTime,
            ..PiLayout::PI
        };
        let tmp = tempfile::tempdir().expect("tmp");
        let session = sample();
        let path = write(&layout, tmp.path(), &session).expect("write");
        assert!(path.starts_with(tmp.path().join(".omp/agent/sessions/-src-billing")));
        let text = std::fs::read_to_string(&path).expect("read");
        assert_eq!(text.lines().next().map(|l| l.len() + 1), Some(TITLE_SLOT_BYTES));
        let d = PiDialect { harness: "omp", result_footers: &["Wall time: "], ..PiDialect::BASE };
        let s = parse(&d, &path);
        let call = s.turns.iter().find(|t| t.role == Role::ToolCall).expect("call");
        assert_eq!(call.text, "test rounding ... FAILED");
        assert_eq!(call.tool.as_ref().map(|t| t.is_error), Some(true));
    }

    #[test]
    fn openclaw_exit_codes_ride_in_details() {
        let layout = PiLayout {
            sessions_dir: ".qclaw/agents/main/sessions",
            project_dir: ProjectDir::Flat,
            file_name: FileName::Id,
            tools: PiTools::Pi { shell: "exec" },
            exit: ExitReport::Details,
            ..PiLayout::PI
        };
        let tmp = tempfile::tempdir().expect("tmp");
        let session = sample();
        let path = write(&layout, tmp.path(), &session).expect("write");
        assert_eq!(path, tmp.path().join(".qclaw/agents/main/sessions").join(format!("{}.jsonl", session.id)));
        let tools = crate::work::ToolMap { shell: &["exec"], read: &["read"], edit: &["edit"], write: &["write"] };
        let d = PiDialect { harness: "qclaw", tools, dir_project: DirProject::None, ..PiDialect::BASE };
        assert_eq!(command_exit(&parse(&d, &path)), Some(ExitStatus::Code(101)));
    }

    #[test]
    fn prime_commands_are_bash_executions_and_edits_are_diffs() {
        let at = |n: i64| Timestamp(1_772_445_600_000 + n * 1000);
        let session = SynthSession {
            turns: vec![
                SynthTurn::User { text: "fix it".into(), time: at(1) },
                SynthTurn::Edit { path: "cfg.py".into(), old: "A=1".into(), new: "A=2".into(), time: at(2) },
                SynthTurn::Shell { command: "pytest".into(), output: "1 passed".into(), exit_code: 0, time: at(3) },
            ],
            ..sample()
        };
        let layout = PiLayout {
            sessions_dir: ".prime/agent/sessions",
            project_dir: ProjectDir::Flat,
            file_name: FileName::Id,
            header_extra: &[("rlmDepth", "0"), ("parentSession", "null")],
            tools: PiTools::Ipython,
            ..PiLayout::PI
        };
        let tmp = tempfile::tempdir().expect("tmp");
        let path = write(&layout, tmp.path(), &session).expect("write");
        let d = PiDialect { harness: "prime", dir_project: DirProject::None, diff_details: true, ..PiDialect::BASE };
        let s = parse(&d, &path);
        let edit = s.turns.iter().find_map(|t| t.edit.as_ref()).expect("edit from details.diffs");
        assert_eq!((edit.old.as_str(), edit.new.as_deref()), ("A=1", Some("A=2")));
        assert!(s.turns.iter().any(|t| t.tool.as_ref().and_then(|x| x.command.as_deref()) == Some("pytest")));
    }
}

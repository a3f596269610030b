//! aider (`aider`): an append-only Markdown chat log, `.aider.chat.history.md`, in the
//! directory aider was launched from; one file holds one session per launch, each opened
//! by a `# aider chat started at <local YYYY-MM-DD HH:MM:SS>` header. The file is read
//! whole and re-parsed on change (no offsets: ids and blocks depend on the whole file),
//! so a source is not marked append-only.
//!
//! No family reader: the Markdown log is aider's own. Discovery, none of which a user
//! has to configure:
//!
//! * `~/.aider.chat.history.md` (sessions launched from the home directory);
//! * `$AIDER_CHAT_HISTORY_FILE` (aider's `--chat-history-file`; a directory there means
//!   the history file inside it);
//! * the conventional project roots `~/src`, `~/code`, `~/projects`, `~/dev`, `~/repos`,
//!   `~/work`, `~/git` (a choice of this adapter: the page names none, and scanning all of
//!   `$HOME` is too slow): `<root>/.aider.chat.history.md`, `<root>/*/…` and `<root>/*/*/…`
//!   (two levels, as the page bounds it); `DEJA_AIDER_ROOT` and the path list
//!   `DEJA_AIDER_ROOTS` replace them, each a root of that kind;
//!
//! * every working directory another indexed harness recorded a session in
//!   ([`StoreEnv::work_dirs`]: the directory itself, no descent). The adapter says
//!   [`HarnessFormat::discovers_in_work_dirs`], so the indexer discovers it after the
//!   other harnesses' sources are parsed and a project first seen in the same run counts;
//!   the index keeps the most recent few thousand such directories, so a refresh stays
//!   a bounded number of stats.
//!
//! State machine over lines (trailing spaces and CR stripped, so aider's two-space hard
//! breaks go), with a code-fence flag:
//!
//! | line | Turn | rule |
//! | --- | --- | --- |
//! | `# aider chat started at …` outside a fence | — | ends the session, starts the next; inside a fence only when the previous line is blank and the time parses (an answer cut off inside a fence must not swallow every later launch) |
//! | before the first header | skipped | |
//! | starts with three backticks | current role, else `Assistant` | toggles the fence; the fence line is kept |
//! | inside a fence | current role | verbatim (`#### `, `> ` are content) |
//! | `#### <text>` | `User` | `#### <blank>` is an empty line |
//! | `> Executing: /run <command>` | `ToolCall` | `tool.command` = the command, no exit (aider writes neither output nor status); flushes the block |
//! | any other `> …` / bare `>` | skipped | aider's status lines (command line, model, `Applied edit`, token counts); flushes the block |
//! | blank line | current role | kept inside the block |
//! | anything else | `Assistant` | |
//!
//! A block becomes one turn, trimmed, when the role changes, at `> ` lines, at a header
//! and at the end of the file; sessions with no turns are dropped. Every turn carries the
//! header time, read in the machine's local zone (aider writes no zone).
//!
//! Session ids: `aider-` + the first 12 hex digits of SHA-1 of the file's **first header
//! line** + `-` + the 1-based ordinal of the header in the file. The page hashes the file
//! path instead; the first launch's header never changes as the file grows and, unlike
//! the path, survives moving the project (and keeps the kit's snapshots stable). Two
//! history files whose first launches began in the same second would share ids; the
//! project (the full path of the file's directory) still tells them apart in results.
//!
//! `.aider.input.history` (the prompt history beside it) is not read: the Markdown
//! already holds every prompt, and 0.86.2 writes each prompt there twice.

use std::path::{Path, PathBuf};

use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::read::read_source;
pub mod runtime;
pub mod wiring;
use deja_core::store::{Files, Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, InjectedText, ParseOptions, ParseStats, Role,
    SessionBuilder, SessionSink, SourceRef, StoreEnv, Timestamp, ToolUse, Turn,
};

const ID: &str = "aider";
const FILE: &str = ".aider.chat.history.md";
const HEADER: &str = "# aider chat started at ";
const FENCE: &str = "```";

/// The aider adapter.
pub struct AiderFormat;

deja_core::inventory::submit!(deja_core::Registration(&AiderFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "aider",
    container: "append-only Markdown, one file per launch directory, one session per launch",
    store: StoreSpec::new(&[
        // Directories under the home where projects conventionally live (see the module doc).
        Store {
            name: "",
            roots: &[Root::any("~/{src,code,projects,dev,repos,work,git}")],
            layout: Layout::Files(Files::new("**/.aider.chat.history.md").depth(2)),
        },
        // aider launched in the home directory itself.
        Store { name: "home", roots: &[Root::any("~")], layout: Layout::Files(Files::new(".aider.chat.history.md")) },
        // The file aider was told to write (a directory means the history file in it).
        Store {
            name: "file",
            roots: &[Root::any("${AIDER_CHAT_HISTORY_FILE}")],
            layout: Layout::Custom { shape: "", walk: Some(walk_history_file) },
        },
    ]),
    needs: &[],
    format_summary: "aider appends to `.aider.chat.history.md` in the directory it was launched from: each launch opens \
        with `# aider chat started at <local time>`, prompts are `#### ` lines, the answer is the plain Markdown after \
        them, and `> ` lines are aider's own status output (only `> Executing: /run <command>` is kept, as a command \
        without output or exit status). Code fences are tracked so role markers inside code stay content. There are \
        no per-message times, no ids and no tool records.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Unsupported("aider has no MCP client"),
        auto_recall: Capability::Planned(
            "a `read:` context file in ~/.aider.conf.yml, refreshed by the `deja aider` wrapper before it execs aider",
        ),
        skill: Capability::Unsupported("`--read`/CONVENTIONS.md put a file in every message; no on-demand catalogue"),
        command: Capability::Unsupported("built-in slash-command set only (aider issue 894)"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Unsupported("the history file is a log aider appends to, not a session it reopens"),
        handoff: Handoff::Exec(&["aider", "--message", "{prompt}"]),
    },
};

/// The history file aider was told to write, or the one in the directory named.
fn walk_history_file(root: &Path, _env: &StoreEnv, found: &mut Discovery) {
    let file = if root.is_dir() { root.join(FILE) } else { root.to_path_buf() };
    if file.is_file() {
        found.sources.push(SourceRef::file(file));
    }
}

impl HarnessFormat for AiderFormat {
    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::AiderWiring)
    }

    /// The spec's stores, then the working directories other harnesses' sessions ran in;
    /// each file once, however many roots reach it.
    fn discover(&self, env: &StoreEnv) -> Discovery {
        let mut found = deja_core::store::discover(ID, &INFO.store, env);
        let mut files: Vec<PathBuf> = found.sources.drain(..).map(|s| s.path).collect();
        // aider writes its history where it was launched, and that is usually a project
        // some other agent also worked in. The index bounds the list (newest first), so
        // this is at most a few thousand stats; the directory itself only, no descent.
        for dir in env.work_dirs() {
            let p = dir.join(FILE);
            if p.is_file() {
                files.push(p);
            }
        }
        let mut seen = std::collections::HashSet::new();
        files.retain(|p| seen.insert(std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())));
        found.sources = files.into_iter().map(SourceRef::file).collect();
        Discovery::sort_sources(&mut found.sources);
        found
    }

    fn discovers_in_work_dirs(&self) -> bool {
        true
    }

    fn parse(&self, src: &SourceRef, _opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        let mut stats = ParseStats::default();
        let bytes = read_source(&src.path, &mut stats)?.bytes;
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
        let text = String::from_utf8_lossy(bytes);
        let project = src.path.parent().filter(|p| !p.as_os_str().is_empty()).map(|p| p.display().to_string());
        let mut p =
            Parser { src, project, stats: &mut stats, out, file_key: None, ordinal: 0, session: None, fence: false, prev_blank: true };
        for raw in text.split('\n') {
            p.line(raw.trim_end_matches([' ', '\r', '\t']));
        }
        p.end_session();
        stats.end_offset = bytes.len() as u64;
        Ok(stats)
    }
}

/// The session being read.
struct Open {
    b: SessionBuilder,
    time: Option<Timestamp>,
    /// The role of the block being collected and its lines.
    role: Option<Role>,
    lines: Vec<String>,
}

struct Parser<'a> {
    src: &'a SourceRef,
    project: Option<String>,
    stats: &'a mut ParseStats,
    out: &'a mut dyn SessionSink,
    /// The hash of the file's first header line, shared by every id in the file.
    file_key: Option<String>,
    ordinal: u32,
    session: Option<Open>,
    fence: bool,
    prev_blank: bool,
}

impl Parser<'_> {
    fn line(&mut self, line: &str) {
        self.stats.records += 1;
        let blank = line.trim().is_empty();
        let prev_blank = std::mem::replace(&mut self.prev_blank, blank);
        if let Some(rest) = line.strip_prefix(HEADER) {
            let time = Timestamp::parse_local(rest);
            if !self.fence || (prev_blank && time.is_some()) {
                self.header(line, rest, time);
                return;
            }
        }
        let Some(open) = self.session.as_mut() else { return };
        if line.starts_with(FENCE) {
            self.fence = !self.fence;
            if open.role.is_none() {
                open.role = Some(Role::Assistant);
            }
            open.lines.push(line.to_string());
            return;
        }
        if self.fence {
            // Inside code everything is content of the current block.
            open.role.get_or_insert(Role::Assistant);
            open.lines.push(line.to_string());
            return;
        }
        if let Some(rest) = line.strip_prefix("####") {
            if rest.is_empty() || rest.starts_with(' ') {
                let rest = rest.strip_prefix(' ').unwrap_or(rest);
                let text = if rest == "<blank>" { "" } else { rest };
                Self::continue_block(self.session.as_mut(), Role::User, text);
                return;
            }
        }
        if line == ">" || line.starts_with("> ") {
            Self::flush(self.session.as_mut());
            if let Some(cmd) = line.strip_prefix("> Executing: /run ").map(str::trim).filter(|c| !c.is_empty()) {
                if let Some(open) = self.session.as_mut() {
                    let mut turn = Turn::new(Role::ToolCall, "").at(open.time);
                    turn.tool = Some(ToolUse { name: "run".into(), command: Some(cmd.to_string()), ..ToolUse::default() });
                    open.b.push_call(None, turn);
                }
            }
            return;
        }
        if blank {
            if let Some(open) = self.session.as_mut() {
                if open.role.is_some() {
                    open.lines.push(String::new());
                }
            }
            return;
        }
        Self::continue_block(self.session.as_mut(), Role::Assistant, line);
    }

    fn header(&mut self, line: &str, rest: &str, time: Option<Timestamp>) {
        self.end_session();
        if time.is_none() {
            self.stats.problem(format!("{}: header time `{}` is not YYYY-MM-DD HH:MM:SS", self.src.path.display(), rest.trim()));
        }
        self.ordinal += 1;
        let key = self.file_key.get_or_insert_with(|| hex12(&sha1(line.trim().as_bytes()))).clone();
        let mut b = SessionBuilder::new(ID, format!("aider-{key}-{}", self.ordinal), self.src.clone());
        b.session_mut().project = self.project.clone();
        self.session = Some(Open { b, time, role: None, lines: Vec::new() });
        self.fence = false;
    }

    /// Adds `text` to a block of `role`, flushing a block of another role first.
    fn continue_block(open: Option<&mut Open>, role: Role, text: &str) {
        let Some(open) = open else { return };
        if open.role.is_some_and(|r| r != role) {
            Self::flush(Some(open));
        }
        open.role = Some(role);
        open.lines.push(text.to_string());
    }

    fn flush(open: Option<&mut Open>) {
        let Some(open) = open else { return };
        let lines = std::mem::take(&mut open.lines);
        if let Some(role) = open.role.take() {
            let text = lines.join("\n");
            open.b.push(Turn::new(role, text.trim()).at(open.time));
        }
    }

    fn end_session(&mut self) {
        let Some(mut open) = self.session.take() else { return };
        Self::flush(Some(&mut open));
        let time = open.time;
        let mut b = open.b;
        if b.turn_count() > 0 {
            b.touch(time);
        }
        if let Some(s) = b.finish() {
            self.out.session(s);
        }
    }
}

fn hex12(digest: &[u8; 20]) -> String {
    digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

/// SHA-1 (FIPS 180-4), for the page's id scheme; a dozen lines spare a dependency, and
/// the ids need no collision resistance against an adversary.
fn sha1(data: &[u8]) -> [u8; 20] {
    let mut h: [u32; 5] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0];
    let mut msg = data.to_vec();
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&((data.len() as u64).wrapping_mul(8)).to_be_bytes());
    for chunk in msg.chunks_exact(64) {
        let mut w = [0u32; 80];
        for (i, word) in chunk.chunks_exact(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, wi) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A82_7999),
                20..=39 => (b ^ c ^ d, 0x6ED9_EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC),
                _ => (b ^ c ^ d, 0xCA62_C1D6),
            };
            let t = a.rotate_left(5).wrapping_add(f).wrapping_add(e).wrapping_add(k).wrapping_add(*wi);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = t;
        }
        for (x, v) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(v);
        }
    }
    let mut out = [0u8; 20];
    for (i, x) in h.iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&x.to_be_bytes());
    }
    out
}

/// The SHA-1 of `data` as 40 hex digits (for the tests' known vectors).
pub fn sha1_hex(data: &[u8]) -> String {
    sha1(data).iter().map(|b| format!("{b:02x}")).collect()
}

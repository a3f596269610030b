//! Cherry Studio (`cherrystudio`): a desktop (Electron) app that runs agent sessions on
//! runtimes and writes each runtime's stock transcript under its own app-data dir `<app>`
//! (macOS `~/Library/Application Support/CherryStudio`, Windows `%APPDATA%\CherryStudio`,
//! else `${XDG_CONFIG_HOME:-~/.config}/CherryStudio`, plus every directory the app was
//! moved to in `~/.cherrystudio/boot-config.json`, key `app.user_data_path`):
//!
//! - claude-code runtime: Claude Code JSONL under `<app>/Data/Agents/.claude/projects/`
//!   (and `<app>/.claude/projects/` before the upgrade that added `Data/Agents`), read by
//!   `deja_core::family::claude_jsonl` (its module doc has the record → role table);
//! - pi runtime: pi session JSONL, flat, under `<app>/Data/Agents/.pi/sessions/`, read by
//!   `deja_core::family::pi_jsonl` with the header `cwd` as the project (a flat store has
//!   no encoded directory to decode);
//! - dsh runtime: DeepSeek Harness logs (raw or zstd-framed) under
//!   `<app>/Data/Agents/.dsh/sessions/<slug>/session-<uuid>/session*.jsonl*` (the app runs
//!   dsh with `DSH_HOME=<app>/Data/Agents/.dsh`), read by `deja_core::family::dsh_log`, the
//!   deepseek adapter's reader; the newest generation of each session directory is read.
//!
//! `DEJA_CHERRYSTUDIO_ROOT` (and the path list `DEJA_CHERRYSTUDIO_ROOTS`) names a sessions
//! root read for the Claude and dsh runtimes (a `projects` or `sessions` directory) in
//! place of the Claude ones; `DEJA_CHERRYSTUDIO_PI_ROOT` and `DEJA_CHERRYSTUDIO_DSH_ROOT`
//! move the other two. Under an override a file's runtime is told by its name and first line (dsh logs are
//! `session[.vN].jsonl[.zstd]`, a pi file opens with its `session` header), not by the
//! directory it sits in.
//!
//! What differs from Claude Code: the app appends the same API reply 3–4 times while it
//! streams (new `uuid`, same `message.id`, text growing). The family joins the text blocks
//! of one `message.id`, so the joined turn is the run of snapshots; [`collapse_snapshots`]
//! keeps the longest. Because a later append can still grow a reply stored half-way, the
//! claude-code transcripts are read whole each time (not as append-only tails).

mod wiring;

use std::path::Path;

use deja_core::family::claude_jsonl::{self, ClaudeDialect, FileHints, CLAUDE_INJECTED, CLAUDE_TOOLS};
use deja_core::family::dsh_log;
use deja_core::family::pi_jsonl::{self, DirProject, PiDialect, MAX_WALK_DEPTH};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, ParseOptions, ParseStats, Role, Session, SessionSink,
    SourceRef, StoreEnv,
};

const ID: &str = "cherrystudio";

/// The claude-code runtime's transcripts in the Claude-shaped family.
pub const CLAUDE_DIALECT: ClaudeDialect =
    ClaudeDialect { harness: ID, config_dir: ".config/CherryStudio/Data/Agents/.claude", tools: CLAUDE_TOOLS };

/// The pi runtime's sessions: flat store, so only the header `cwd` names the project.
pub const PI_DIALECT: PiDialect = PiDialect { harness: ID, dir_project: DirProject::None, ..PiDialect::BASE };

/// The Cherry Studio adapter.
pub struct CherrystudioFormat;

deja_core::inventory::submit!(deja_core::Registration(&CherrystudioFormat));

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "Cherry Studio",
    container: "Claude Code JSONL, pi session JSONL and DeepSeek Harness logs, per agent runtime",
    store: StoreSpec::new(&[
        // The Claude runtime's projects (and, under a root deja is pointed at, the dsh and
        // pi logs beside them), in the app's default data folder and every folder its
        // boot config moved it to.
        Store {
            name: "",
            roots: &[
                Root::macos("~/Library/Application Support/CherryStudio/{Data/Agents/.claude,.claude}/projects"),
                Root::linux("${XDG_CONFIG_HOME:-~/.config}/CherryStudio/{Data/Agents/.claude,.claude}/projects"),
                Root::windows("${APPDATA:-~/AppData/Roaming}/CherryStudio/{Data/Agents/.claude,.claude}/projects"),
                Root::any("<~/.cherrystudio/boot-config.json#/app.user_data_path/*>/{Data/Agents/.claude,.claude}/projects"),
            ],
            layout: Layout::Custom { shape: "<workspace>/<session>.jsonl", walk: Some(walk_claude) },
        },
        Store {
            name: "pi",
            roots: &[
                Root::macos("~/Library/Application Support/CherryStudio/Data/Agents/.pi/sessions"),
                Root::linux("${XDG_CONFIG_HOME:-~/.config}/CherryStudio/Data/Agents/.pi/sessions"),
                Root::windows("${APPDATA:-~/AppData/Roaming}/CherryStudio/Data/Agents/.pi/sessions"),
                Root::any("<~/.cherrystudio/boot-config.json#/app.user_data_path/*>/Data/Agents/.pi/sessions"),
            ],
            layout: Layout::Custom { shape: "<ts>_<id>.jsonl", walk: Some(walk_pi) },
        },
        Store {
            name: "dsh",
            roots: &[
                Root::macos("~/Library/Application Support/CherryStudio/Data/Agents/.dsh/sessions"),
                Root::linux("${XDG_CONFIG_HOME:-~/.config}/CherryStudio/Data/Agents/.dsh/sessions"),
                Root::windows("${APPDATA:-~/AppData/Roaming}/CherryStudio/Data/Agents/.dsh/sessions"),
                Root::any("<~/.cherrystudio/boot-config.json#/app.user_data_path/*>/Data/Agents/.dsh/sessions"),
            ],
            layout: Layout::Custom { shape: "<slug>/session-<uuid>/session*.jsonl*", walk: Some(walk_dsh) },
        },
    ])
    .deja_vars(&["DEJA_INCLUDE_SUBAGENTS"]),
    needs: &["import the deja MCP server once (Settings → MCP → Import from JSON)", "a Claude account in the app before it writes any transcript"],
    format_summary: "Cherry Studio's agents run on runtimes that write their stock transcripts under the app-data dir: \
        the claude-code runtime Claude Code's JSONL (`user`/`assistant` records chained by `uuid`/`parentUuid`, \
        `tool_use`/`tool_result` pairs, compaction summaries, sub-agent files under `subagents/`), with each streamed \
        reply appended 3–4 times as growing snapshots that share `message.id` (the longest is kept); the pi runtime \
        pi's session JSONL (`session` header with `cwd`, `message` entries with text, thinking, `toolCall` blocks and \
        `toolResult` messages), in a flat directory; the dsh runtime DeepSeek Harness logs (`{type, seq, time, data}` \
        events, raw or zstd-framed, one file per format generation).",
    injected: &CLAUDE_INJECTED,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "write `cherrystudio-mcp.json` (`{\"mcpServers\":{\"deja\":{\"type\":\"stdio\",…}}}`) to deja's config dir for Settings → MCP → Import from JSON",
        ),
        auto_recall: Capability::Unknown,
        skill: Capability::Planned("`~/.agents/skills/deja-history/SKILL.md`, enabled per agent by the user"),
        command: Capability::Unsupported("slash commands are the app's own"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch { resume: Resume::Unsupported("sessions are picked in the app's UI"), handoff: Handoff::Paste("an app with no start-with-prompt command") },
};

/// The Claude runtime's transcripts under a root, read whole (a later append can still
/// grow a reply stored half-way), and the dsh logs a root deja is pointed at may hold
/// (newest generation only, from the dsh walk).
fn walk_claude(root: &Path, env: &StoreEnv, found: &mut Discovery) {
    let claude = claude_jsonl::discover_projects(root, env.include_subagents()).into_iter().filter(|s| !is_dsh_log(&s.path));
    found.sources.extend(claude.map(|s| SourceRef::file(s.path)));
    found.sources.extend(dsh_log::discover_sessions(root));
}

/// The pi runtime's sessions.
fn walk_pi(root: &Path, env: &StoreEnv, found: &mut Discovery) {
    found.sources.extend(pi_jsonl::sessions_under(&PI_DIALECT, root, MAX_WALK_DEPTH, env.include_subagents()));
}

/// The dsh runtime's sessions, each in its newest generation.
fn walk_dsh(root: &Path, _env: &StoreEnv, found: &mut Discovery) {
    found.sources.extend(dsh_log::discover_sessions(root));
}

impl HarnessFormat for CherrystudioFormat {
    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::CherrystudioWiring)
    }

    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn parse(&self, src: &SourceRef, opts: &ParseOptions, out: &mut dyn SessionSink) -> Result<ParseStats, FormatError> {
        if is_dsh_log(&src.path) {
            return dsh_log::parse(ID, src, opts, out);
        }
        if opens_with_pi_header(&src.path) {
            return pi_jsonl::parse(&PI_DIALECT, src, opts, out);
        }
        let mut sink = Collapse { out };
        claude_jsonl::parse_with(&CLAUDE_DIALECT, src, opts, &FileHints::default(), &mut sink)
    }

    fn synthetic(&self) -> Option<&dyn deja_core::SynthWriter> {
        Some(self)
    }
}

/// Whether the file is a dsh generation log (`session.jsonl`, `session.vN.jsonl`, `.zstd`).
fn is_dsh_log(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).and_then(dsh_log::generation_name).is_some()
}

/// Whether the file's first line is a pi `session` header (a torn or unreadable head is
/// read as Claude's, which skips what it cannot decode).
fn opens_with_pi_header(path: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::new();
    let Ok(f) = std::fs::File::open(path) else { return false };
    if f.take(64 << 10).read_to_end(&mut head).is_err() {
        return false;
    }
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&head);
    let first = head.split(|b| *b == b'\n').find(|l| !l.iter().all(u8::is_ascii_whitespace));
    first
        .and_then(|l| serde_json::from_slice::<serde_json::Value>(l).ok())
        .is_some_and(|v| v.get("type").and_then(|t| t.as_str()) == Some("session"))
}

/// Passes sessions on with each assistant turn's streamed snapshots collapsed.
struct Collapse<'a> {
    out: &'a mut dyn SessionSink,
}

impl SessionSink for Collapse<'_> {
    fn session(&mut self, mut session: Session) {
        for turn in session.turns.iter_mut().filter(|t| t.role == Role::Assistant) {
            if let Some(kept) = collapse_snapshots(&turn.text) {
                turn.text = kept;
            }
        }
        self.out.session(session);
    }
}

/// The reply of a snapshot run the family joined into one text (`B1\nB2\n…\nBn`, each `Bi`
/// a prefix of `Bn`): `Bn`, the last and longest; `None` when the text is no such run. The
/// shortest tail that every line-aligned piece before it is a prefix of wins, so a final
/// reply of several lines stays whole.
pub fn collapse_snapshots(text: &str) -> Option<String> {
    let cuts: Vec<usize> = text.match_indices('\n').map(|(i, _)| i).collect();
    for &cut in cuts.iter().rev() {
        let (head, last) = (&text[..cut], &text[cut + 1..]);
        if !last.trim().is_empty() && splits_into_prefixes(head, last) {
            return Some(last.to_string());
        }
    }
    None
}

/// Whether `head` is one or more non-empty pieces joined by `\n`, each a prefix of `last`
/// (the pieces may hold newlines themselves).
fn splits_into_prefixes(head: &str, last: &str) -> bool {
    // ok[i]: head[..i] splits into such pieces (i = 0 or just before a newline).
    let ends: Vec<usize> = head.match_indices('\n').map(|(i, _)| i).chain(std::iter::once(head.len())).collect();
    let mut ok = vec![false; ends.len()];
    for (j, &end) in ends.iter().enumerate() {
        let piece_ok = |start: usize| {
            let piece = &head[start..end];
            !piece.is_empty() && last.starts_with(piece)
        };
        ok[j] = piece_ok(0) || (0..j).any(|i| ok[i] && piece_ok(ends[i] + 1));
    }
    ok.last().copied().unwrap_or(false)
}

mod synth;

impl deja_core::SynthWriter for CherrystudioFormat {
    fn write(&self, home: &std::path::Path, session: &deja_core::SynthSession) -> std::io::Result<std::path::PathBuf> {
        synth::write(home, session)
    }
}

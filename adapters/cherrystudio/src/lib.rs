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
//! `DEJA_CHERRYSTUDIO_ROOTS` (the OS path list) replaces every root; `DEJA_CHERRYSTUDIO_ROOT`
//! names one sessions root (a `projects` or `sessions` directory) and replaces them too.
//! Under an override a file's runtime is told by its name and first line (dsh logs are
//! `session[.vN].jsonl[.zstd]`, a pi file opens with its `session` header), not by the
//! directory it sits in.
//!
//! What differs from Claude Code: the app appends the same API reply 3–4 times while it
//! streams (new `uuid`, same `message.id`, text growing). The family joins the text blocks
//! of one `message.id`, so the joined turn is the run of snapshots; [`collapse_snapshots`]
//! keeps the longest. Because a later append can still grow a reply stored half-way, the
//! claude-code transcripts are read whole each time (not as append-only tails).

mod wiring;

use std::path::{Path, PathBuf};

use deja_core::family::claude_jsonl::{self, ClaudeDialect, FileHints, CLAUDE_INJECTED, CLAUDE_TOOLS};
use deja_core::family::dsh_log;
use deja_core::family::pi_jsonl::{self, DirProject, PiDialect, MAX_WALK_DEPTH};
use deja_core::launch::{Handoff, Launch, Resume};
use deja_core::{
    Capabilities, Capability, Discovery, FormatError, HarnessFormat, HarnessInfo, Os, ParseOptions, ParseStats, Role, Session, SessionSink,
    SourceRef, StoreEnv, StorePath,
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
    stores: &[
        StorePath { os: Os::MacOs, path: "~/Library/Application Support/CherryStudio/Data/Agents/.claude/projects/<workspace>/<session>.jsonl" },
        StorePath { os: Os::MacOs, path: "~/Library/Application Support/CherryStudio/.claude/projects/<workspace>/<session>.jsonl" },
        StorePath { os: Os::MacOs, path: "~/Library/Application Support/CherryStudio/Data/Agents/.pi/sessions/<ts>_<id>.jsonl" },
        StorePath { os: Os::MacOs, path: "~/Library/Application Support/CherryStudio/Data/Agents/.dsh/sessions/<slug>/session-<uuid>/session*.jsonl*" },
        StorePath { os: Os::Windows, path: "%APPDATA%\\CherryStudio\\Data\\Agents\\.claude\\projects\\<workspace>\\<session>.jsonl" },
        StorePath { os: Os::Windows, path: "%APPDATA%\\CherryStudio\\.claude\\projects\\<workspace>\\<session>.jsonl" },
        StorePath { os: Os::Windows, path: "%APPDATA%\\CherryStudio\\Data\\Agents\\.pi\\sessions\\<ts>_<id>.jsonl" },
        StorePath { os: Os::Windows, path: "%APPDATA%\\CherryStudio\\Data\\Agents\\.dsh\\sessions\\<slug>\\session-<uuid>\\session*.jsonl*" },
        StorePath { os: Os::Linux, path: "${XDG_CONFIG_HOME:-~/.config}/CherryStudio/Data/Agents/.claude/projects/<workspace>/<session>.jsonl" },
        StorePath { os: Os::Linux, path: "${XDG_CONFIG_HOME:-~/.config}/CherryStudio/.claude/projects/<workspace>/<session>.jsonl" },
        StorePath { os: Os::Linux, path: "${XDG_CONFIG_HOME:-~/.config}/CherryStudio/Data/Agents/.pi/sessions/<ts>_<id>.jsonl" },
        StorePath { os: Os::Linux, path: "${XDG_CONFIG_HOME:-~/.config}/CherryStudio/Data/Agents/.dsh/sessions/<slug>/session-<uuid>/session*.jsonl*" },
        StorePath { os: Os::Any, path: "<each app.user_data_path in ~/.cherrystudio/boot-config.json>/… (the same roots)" },
    ],
    env_vars: &["XDG_CONFIG_HOME", "APPDATA"],
    deja_vars: &["DEJA_CHERRYSTUDIO_ROOT", "DEJA_CHERRYSTUDIO_ROOTS", "DEJA_INCLUDE_SUBAGENTS"],
    store: deja_core::StoreSpec::UNDECLARED,
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
    launch: Launch { resume: Resume::Unsupported("sessions are picked in the app's UI"), handoff: Handoff::Paste("an app with no start-with-prompt command") },
};

/// Which runtime's reader a root is walked and a file is read with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Runtime {
    Claude,
    Pi,
    Dsh,
}

impl HarnessFormat for CherrystudioFormat {
    fn wiring(&self) -> Option<&'static dyn deja_core::wire::Wiring> {
        Some(&wiring::CherrystudioWiring)
    }

    fn info(&self) -> &'static HarnessInfo {
        &INFO
    }

    fn discover(&self, env: &StoreEnv) -> Discovery {
        let mut found = Discovery::default();
        let include = env.include_subagents();
        let mut sources = Vec::new();
        for (root, runtime) in roots(env) {
            match runtime {
                Runtime::Pi => {
                    let mut pi = Discovery::default();
                    pi_jsonl::discover_sessions(&PI_DIALECT, &root, MAX_WALK_DEPTH, include, &mut pi);
                    found.looked_at(&root);
                    sources.extend(pi.sources);
                }
                Runtime::Dsh => {
                    if found.looked_at(&root) {
                        sources.extend(dsh_log::discover_sessions(&root));
                    }
                }
                Runtime::Claude => {
                    if found.looked_at(&root) {
                        // Read whole: a later append can still grow a reply stored half-way.
                        // dsh logs under an override root come from the dsh walk (newest
                        // generation only), not from here.
                        let claude = claude_jsonl::discover_projects(&root, include).into_iter().filter(|s| !is_dsh_log(&s.path));
                        sources.extend(claude.map(|s| SourceRef::file(s.path)));
                    }
                }
            }
        }
        sources.sort_by(|a, b| a.path.cmp(&b.path));
        sources.dedup_by(|a, b| a.path == b.path);
        found.sources = sources;
        Discovery::sort_sources(&mut found.sources);
        found
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

/// Every root to walk, moved app dirs before the default one (a move can leave the old
/// dir behind); only the override's when one is set.
fn roots(env: &StoreEnv) -> Vec<(PathBuf, Runtime)> {
    let mut overridden = Vec::new();
    if let Some(list) = env.var("DEJA_CHERRYSTUDIO_ROOTS") {
        overridden.extend(std::env::split_paths(list).filter(|p| !p.as_os_str().is_empty()));
    }
    if let Some(root) = env.deja_root(ID) {
        overridden.push(root);
    }
    if !overridden.is_empty() {
        // A pi store is flat, so the Claude walk (every `*.jsonl`) finds its files too;
        // the parse tells the runtimes apart by the first line.
        return overridden.into_iter().flat_map(|p| [(p.clone(), Runtime::Claude), (p, Runtime::Dsh)]).collect();
    }
    let mut apps = moved_app_dirs(env);
    apps.push(default_app_dir(env));
    let mut out = Vec::new();
    for app in apps {
        out.push((app.join("Data/Agents/.claude/projects"), Runtime::Claude));
        out.push((app.join(".claude/projects"), Runtime::Claude));
        out.push((app.join("Data/Agents/.pi/sessions"), Runtime::Pi));
        out.push((app.join("Data/Agents/.dsh/sessions"), Runtime::Dsh));
    }
    out
}

/// The app-data dir the app uses when it was never moved.
fn default_app_dir(env: &StoreEnv) -> PathBuf {
    if cfg!(target_os = "macos") {
        env.home().join("Library/Application Support/CherryStudio")
    } else if cfg!(windows) {
        env.path_var("APPDATA").unwrap_or_else(|| env.home().join("AppData/Roaming")).join("CherryStudio")
    } else {
        env.xdg_config_home().join("CherryStudio")
    }
}

/// Every absolute `app.user_data_path` value in `~/.cherrystudio/boot-config.json`, but not
/// the home directory (there `.claude/projects` is Claude Code's own store).
fn moved_app_dirs(env: &StoreEnv) -> Vec<PathBuf> {
    let Ok(bytes) = std::fs::read(env.home().join(".cherrystudio/boot-config.json")) else { return Vec::new() };
    moved_dirs_in(&bytes, env.home())
}

/// [`moved_app_dirs`] from the file's bytes.
pub fn moved_dirs_in(bytes: &[u8], home: &Path) -> Vec<PathBuf> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(bytes) else { return Vec::new() };
    let Some(map) = v.get("app.user_data_path").and_then(|m| m.as_object()) else { return Vec::new() };
    let mut dirs: Vec<PathBuf> = map.values().filter_map(|d| d.as_str()).map(PathBuf::from).filter(|p| p.is_absolute()).collect();
    dirs.retain(|p| p != home);
    dirs.dedup();
    dirs
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

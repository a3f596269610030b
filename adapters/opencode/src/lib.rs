//! opencode (`opencode`): every session in one SQLite database,
//! `${XDG_DATA_HOME:-~/.local/share}/opencode/opencode.db` (WAL mode; right after a run
//! most rows sit in `opencode.db-wal`). `XDG_DATA_HOME` moves it on Linux only: opencode's
//! xdg-basedir dependency ignores the variable elsewhere, so on macOS and Windows the
//! store is always under `~/.local/share` (a set `XDG_DATA_HOME` is looked at as well
//! there; it costs one `stat`). Since 1.18 no `storage/session/…` JSON is written.
//!
//! The reader is the opencode-schema family, `deja_core::family::opencode` (its module
//! doc has the record → role table: `session` ⋈ `message` ⋈ `part`, text parts by the
//! message's role, `bash` / `read` / `edit` / `apply_patch` / `write` tool parts as
//! work, reasoning only on request, compaction summaries as `Summary`), with opencode's
//! own dialect: opencode's tool names, `opencode run "<prompt>"`'s literal quotes
//! unwrapped, `New session - …` / `Child session - …` placeholder titles dropped. The
//! family's reader covers everything the page lists and more (edit tools, failed
//! tools, sub-agent sessions via `parent_id`), so this crate is metadata, discovery and
//! fixtures.
//!
//! **Variables.** `DEJA_OPENCODE_DB` names the database file (a directory means the
//! `opencode.db` in it); else `DEJA_OPENCODE_ROOT` names the directory holding
//! `opencode.db` (the sessions root of a one-database store); else the XDG place.
//!
//! **`DEJA_INCLUDE_SUBAGENTS`.** One database holds the sub-agent sessions with their
//! parents, so discovery cannot leave files out. Discovery reads the switch and, when it
//! is off, keys the source (`family::opencode::WITHOUT_SUBAGENTS_KEY`); `parse` reads
//! the key back and calls `parse_filtered`. Carrying the switch in the source rather
//! than reading `StoreEnv::from_process()` at parse time keeps discovery and parsing on
//! one environment (tests and the kit pass theirs), and flipping the switch changes the
//! source's manifest key, so the index re-reads the database instead of resuming a row
//! cursor taken under the other setting.
//!
//! **Injected text.** opencode's own injections into a conversation (tool-call echoes
//! of attached files, plan-mode reminders) are text parts flagged `synthetic`, which the
//! family skips; its system prompt is not stored in parts. So `injected` is
//! `InjectedText::NONE`: deja's own `<deja-recall>` block, which the auto-recall plugin
//! appends to a prompt, is stripped for every harness at ingest.
//!
//! **Synthetic writer.** `family::opencode::write_synthetic` into
//! `~/.local/share/opencode/opencode.db`, in opencode 1.18's tables; each call appends a
//! session (one database holds them all).

mod wiring;

use deja_core::family::opencode::{OpencodeAdapter, OpencodeDialect};
use deja_core::launch::{Handoff, Launch, Resume, ResumeSpec};
use deja_core::store::{Layout, Root, Store, StoreSpec};
use deja_core::{Capabilities, Capability, HarnessInfo, InjectedText};

const ID: &str = "opencode";

/// opencode's own dialect of its schema.
pub const DIALECT: OpencodeDialect = OpencodeDialect::new(ID);

static INFO: HarnessInfo = HarnessInfo {
    id: ID,
    name: "opencode",
    container: "SQLite (WAL), one database for every session: session / message / part tables with JSON data",
    store: StoreSpec::new(&[Store {
        name: "",
        roots: &[
            // opencode's xdg-basedir follows XDG_DATA_HOME on Linux only; elsewhere the
            // store stays under ~/.local/share (a set variable is looked at too: one stat).
            Root::any("${XDG_DATA_HOME:-~/.local/share}/opencode"),
            Root::macos("~/.local/share/opencode"),
            Root::windows("~/.local/share/opencode"),
        ],
        layout: Layout::Database("opencode.db"),
    }])
    .deja_vars(&["DEJA_INCLUDE_SUBAGENTS"]),
    needs: &[],
    format_summary: "opencode keeps every session in one SQLite database in WAL mode (most fresh rows sit in \
        `opencode.db-wal`): a `session` row (directory, title, `parent_id` for sub-agents), `message` rows whose JSON \
        `data` carries the role and times, and `part` rows whose JSON `data` is a `text`, `reasoning` or `tool` part \
        (`tool` names the tool; `state.input` its arguments, `state.output` and `state.metadata.exit` its result, so \
        a call and its result are one row). Step, snapshot and patch parts are bookkeeping. `opencode run \"…\"` \
        stores the prompt in literal quotes, which are unwrapped; `New session - …` titles are placeholders. A \
        compaction is an assistant message with `summary: true`. The database is read through a private copy with \
        its WAL, and incrementally by row time.",
    injected: &InjectedText::NONE,
    capabilities: Capabilities {
        mcp: Capability::Planned(
            "`mcp.deja = {\"type\": \"local\", \"command\": [\"<exe>\", \"mcp\"]}` in \
             `${XDG_CONFIG_HOME:-~/.config}/opencode/opencode.json` (or `opencode.jsonc`, edited textually)",
        ),
        auto_recall: Capability::Planned(
            "a JS plugin `${XDG_CONFIG_HOME:-~/.config}/opencode/plugins/deja.js`: `experimental.chat.system.transform` \
             folds `deja hook-session-start` into the first system element, `experimental.chat.messages.transform` appends \
             `deja hook-prompt` to the last prompt, `experimental.session.compacting` runs `deja hook-precompact`; any \
             plugin makes opencode npm-install `@opencode-ai/plugin` at startup (needs the network)",
        ),
        skill: Capability::Planned("`${XDG_CONFIG_HOME:-~/.config}/opencode/skills/deja-history/SKILL.md`"),
        command: Capability::Planned("`${XDG_CONFIG_HOME:-~/.config}/opencode/commands/deja.md` (frontmatter `description`, `$ARGUMENTS`)"),
    },
    retention: deja_core::retention::Retention::Unknown,
    launch: Launch {
        resume: Resume::Always(ResumeSpec::in_dir(&["opencode", "-s", "{id}"])),
        handoff: Handoff::Exec(&["opencode", "--prompt", "{prompt}"]),
    },
};

/// The opencode adapter: the opencode family's whole adapter with this harness's metadata,
/// dialect and store location.
pub static FORMAT: OpencodeAdapter =
    OpencodeAdapter { info: &INFO, dialect: DIALECT, synthetic_agent: "build", wiring: Some(&wiring::OpencodeWiring) };

deja_core::inventory::submit!(deja_core::Registration(&FORMAT));

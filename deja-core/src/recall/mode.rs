//! The recall modes: one type every surface asks through. `deja ctx|blame|fix|how|files|
//! orient|friction`, the MCP tool's `mode` and the hooks each name a [`Mode`]; its
//! [`Spec`] says what the question takes (its `q`, its limits and answer budget, the
//! help each surface shows) and [`Mode::ask`] asks it of the index and renders the
//! answer once, as the framed [`Answer`] the MCP server and hooks hand over, the JSON
//! object `--json` prints and the line said when nothing matched.
//!
//! Adding a mode is one arm in [`Mode::spec`] and one in [`Mode::ask`]: the CLI builds
//! its subcommand from the spec (when [`Spec::command`] names one), the MCP server
//! lists it in the tool's `mode` enum, description and instructions (when [`Spec::mcp`]
//! says what its `q` is), and a hook asks it with `hook` set.

use serde::Serialize;
use serde_json::{json, Value};

use super::frame::{clean, Answer};
use super::query::{self, Scope};
use super::render;
use crate::index::{IndexError, IndexView};

/// The records a hook's question reads at most (the turns that touched a file, the
/// recorded fixes of an error), most recent first: a hook answers in tens of
/// milliseconds, where the CLI reads up to 5000.
pub const HOOK_SCAN: usize = 60;
/// The project sessions a hook's digest reads (recent sessions, recurring errors,
/// working commands), where `deja orient` reads 300: on a 1 GB history that took 1.1 s,
/// 12 take about 20 ms (`deja bench hooks`).
pub const HOOK_ORIENT_SCAN: usize = 12;

/// A recall question, in the order the MCP tool lists its modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Past sessions matching words, or one session by id.
    Recall,
    /// The digest of a session (by id, or the best match).
    Context,
    /// The sessions that edited, read or discussed a file.
    Blame,
    /// What was run after the same error before, and whether it held.
    Fix,
    /// The real invocations of a tool on this machine.
    How,
    /// A project's recent sessions, decisions, errors, working commands and notes.
    Orient,
    /// Saves a note: asked of the notes store, not of the index.
    Remember,
    /// The latest session of a project, packaged for another agent.
    Handoff,
    /// The files the work on a topic touched.
    Files,
    /// Errors that hit several separate sessions.
    Friction,
}

/// What a mode's question is about: its `q` over MCP, its positional arguments on the
/// command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// One or more words, joined by spaces (`deja how cargo test`).
    Words { name: &'static str, help: &'static str },
    /// Exactly one argument (`deja blame src/pool.rs`).
    One { name: &'static str, help: &'static str },
    /// Text that may be long and is read from stdin when no words (or `-`) are given
    /// (`cargo test 2>&1 | deja fix`).
    Paste { name: &'static str, help: &'static str },
    /// No `q`: the question is about a project directory (`--project DIR` on the
    /// command line, `project` over MCP; the current directory by default).
    Project,
    /// No `q`: the question is about everything in scope.
    Nothing,
}

/// A whole-number option a mode's command takes beyond the shared filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    /// The long flag, without `--`; also the key [`Ask::param`] reads.
    pub long: &'static str,
    pub value_name: &'static str,
    pub help: &'static str,
    pub default: usize,
}

/// Everything the surfaces need to know about one mode.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    pub mode: Mode,
    /// The mode's name: the MCP `mode` value and an answer's `mode`.
    pub name: &'static str,
    /// The `deja` subcommand that asks it (also the JSON `command` and the name in
    /// "nothing matched"), or `None` when the CLI asks it another way (`deja search`,
    /// `deja handoff`, `deja remember`).
    pub command: Option<&'static str>,
    /// The command's one-line help.
    pub about: &'static str,
    pub long_about: Option<&'static str>,
    pub after_help: Option<&'static str>,
    pub input: Input,
    /// What `q` is, said when it is missing.
    pub hint: &'static str,
    /// The MCP tool description's words for the mode (what `q` is, what comes back);
    /// `None` when the mode is not offered over MCP.
    pub mcp: Option<&'static str>,
    /// The MCP instructions' words for when an agent should ask it.
    pub when: &'static str,
    /// Results by default on the command line (1–1000 allowed).
    pub limit: usize,
    /// The command line's help for `--limit`.
    pub limit_help: &'static str,
    /// Results by default over MCP (1–50 allowed).
    pub mcp_limit: usize,
    /// Bytes of an MCP answer.
    pub budget: usize,
    /// Over MCP, `project` filters the sessions (else it only says where the asker
    /// works, which ranks and scopes).
    pub mcp_project_filters: bool,
    /// Options beyond the shared filters.
    pub params: &'static [Param],
}

/// Byte budgets of MCP answers.
pub const BUDGET_SMALL: usize = 4096;
pub const BUDGET_LARGE: usize = 8192;

const RESULTS: &str = "At most this many results (1–1000).";

impl Mode {
    pub const ALL: [Mode; 10] = [
        Mode::Recall,
        Mode::Context,
        Mode::Blame,
        Mode::Fix,
        Mode::How,
        Mode::Orient,
        Mode::Remember,
        Mode::Handoff,
        Mode::Files,
        Mode::Friction,
    ];

    /// The mode called `name` (its MCP name).
    pub fn named(name: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.spec().name == name)
    }

    /// The mode a `deja` subcommand asks.
    pub fn of_command(command: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.spec().command == Some(command))
    }

    /// The modes the MCP tool offers, in order.
    pub fn mcp() -> impl Iterator<Item = Mode> {
        Mode::ALL.into_iter().filter(|m| m.spec().mcp.is_some())
    }

    /// The modes with a `deja` subcommand, in order.
    pub fn commands() -> impl Iterator<Item = Mode> {
        Mode::ALL.into_iter().filter(|m| m.spec().command.is_some())
    }

    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// Whether the question needs a `q`.
    pub fn needs_q(self) -> bool {
        !matches!(self.spec().input, Input::Project | Input::Nothing)
    }

    pub fn spec(self) -> Spec {
        let base = Spec {
            mode: self,
            name: "",
            command: None,
            about: "",
            long_about: None,
            after_help: None,
            input: Input::Nothing,
            hint: "a query",
            mcp: None,
            when: "",
            limit: 10,
            limit_help: RESULTS,
            mcp_limit: 5,
            budget: BUDGET_SMALL,
            mcp_project_filters: false,
            params: &[],
        };
        match self {
            Mode::Recall => Spec {
                name: "recall",
                input: Input::Words { name: "QUERY", help: "Words to search for, or a session id." },
                hint: "words to search for, or a session id",
                mcp: Some("q: words or session id"),
                when: "to search past sessions",
                mcp_project_filters: true,
                ..base
            },
            Mode::Context => Spec {
                name: "context",
                command: Some("ctx"),
                about: "Digest of the best-matching session: problem, decisions, commands, files, where it ended",
                input: Input::Words { name: "QUERY", help: "A session id (or unique prefix), or words to find the session by." },
                hint: "a session id, or words to find the session by",
                mcp: Some("q: session id or words; digest"),
                when: "with a session id for its digest",
                budget: BUDGET_LARGE,
                mcp_project_filters: true,
                params: &[Param {
                    long: "budget",
                    value_name: "BYTES",
                    help: "Cut the digest to this many bytes (on line boundaries).",
                    default: 8192,
                }],
                ..base
            },
            Mode::Blame => Spec {
                name: "blame",
                command: Some("blame"),
                about: "Sessions that edited or discussed a file, most specific and recent first",
                long_about: Some(
                    "Sessions that edited, read or discussed a file, each with its decision line. The path may be absolute, \
                     relative to the current directory, or a bare name; a match on the whole path outranks one on fewer \
                     trailing components (a bare basename last), then edits outrank reads and mentions, then recent first.",
                ),
                after_help: Some("Examples:\n  deja blame src/pool.rs\n  deja blame /src/app/Cargo.toml --json"),
                input: Input::One { name: "PATH", help: "A file: absolute, relative to here, or a bare name." },
                hint: "a file path or name",
                mcp: Some("q: file path; sessions that edited or discussed it"),
                when: "with a file path before changing a file",
                mcp_limit: 8,
                budget: BUDGET_LARGE,
                ..base
            },
            Mode::Fix => Spec {
                name: "fix",
                command: Some("fix"),
                about: "What this machine ran after the same error before, and whether it held (error text or stdin)",
                long_about: Some(
                    "What this machine ran after the same error before, and whether it held. deja records every error it \
                     sees in command output and every error → fix pair: a command that succeeded within the next ten turns \
                     of the same session, after which the error did not come back. Errors match by signature — numbers, \
                     ids, directories and line/column numbers stripped — so the same error from another checkout matches; \
                     when no signature matches, fixes whose error shares most of the words are shown (tier `relevance`).",
                ),
                after_help: Some(
                    "Examples:\n  deja fix \"error[E0425]: cannot find value \\`pool_size\\`\"\n  cargo test 2>&1 | deja fix\n  deja fix -- \"--- FAIL: TestRound\"",
                ),
                input: Input::Paste {
                    name: "ERROR",
                    help: "The error text (an error line or a whole output); read from stdin when absent or `-`.",
                },
                hint: "the error text",
                mcp: Some("q: error text; what was run after it and whether it held"),
                when: "with the error text when a command fails",
                ..base
            },
            Mode::How => Spec {
                name: "how",
                command: Some("how"),
                about: "The real invocations agents ran for a tool here (`deja how cargo test`), most used first",
                long_about: Some(
                    "The real invocations agents ran for a tool on this machine, grouped, with how often each ran, in how \
                     many sessions and how often it passed. Commands run in the current project come first, then the most \
                     used. Words match as a phrase in the command line first (tier `exact`), then in any order (`relevance`); \
                     reading commands (cat, grep, ls, git status…) are left out.",
                ),
                after_help: Some("Examples:\n  deja how cargo test\n  deja how deploy --json"),
                input: Input::Words { name: "TOOL", help: "The tool or words of the command, e.g. `cargo test` or `deploy`." },
                hint: "a tool or command words, e.g. \"cargo test\"",
                mcp: Some("q: tool, e.g. \"cargo test\"; real invocations"),
                when: "with a tool (\"cargo test\", \"deploy\") to see how this machine runs it",
                mcp_limit: 10,
                ..base
            },
            Mode::Orient => Spec {
                name: "orient",
                command: Some("orient"),
                about: "A project's recent sessions, outcomes, decisions, recurring errors and working commands",
                input: Input::Project,
                mcp: Some("project's recent sessions, decisions, errors, working commands, notes"),
                when: "at the start of work in a project",
                limit: 6,
                limit_help: "At most this many recent sessions (1–1000).",
                mcp_limit: 6,
                budget: BUDGET_LARGE,
                ..base
            },
            Mode::Remember => Spec {
                name: "remember",
                input: Input::Words { name: "TEXT", help: "What to remember." },
                hint: "the note to save",
                mcp: Some("q: note to save"),
                when: "to save a durable note",
                ..base
            },
            Mode::Handoff => Spec {
                name: "handoff",
                input: Input::Project,
                mcp: Some("latest session of the project, for another agent"),
                when: "to package the latest session for another agent",
                budget: BUDGET_LARGE,
                ..base
            },
            Mode::Files => Spec {
                name: "files",
                command: Some("files"),
                about: "Which files the work on a topic touched",
                input: Input::Words { name: "TOPIC", help: "What the work was about." },
                hint: "a topic, e.g. `deja files pgbouncer pool`",
                ..base
            },
            Mode::Friction => Spec {
                name: "friction",
                command: Some("friction"),
                about: "Errors that hit three or more separate sessions",
                params: &[Param {
                    long: "min-sessions",
                    value_name: "N",
                    help: "Errors must have hit at least this many separate sessions.",
                    default: 3,
                }],
                ..base
            },
        }
    }

    /// Asks the question of `view` and renders the answer. `ask.q` must not be empty
    /// when [`Mode::needs_q`]; a [`Input::Project`] mode asks about `ask.scope.here`.
    pub fn ask(self, view: &IndexView, ask: &Ask) -> Result<Reply, AskError> {
        let spec = self.spec();
        let q = ask.q;
        let limit = ask.limit.unwrap_or(spec.limit).max(1);
        let scope = &ask.scope;
        let shown = |s: &str| clean(s, 160);
        let here = || scope.here.clone().ok_or(AskError::NoProject);
        let reply = |answer: Option<Answer>, json: Value, searched: String| Reply { mode: self, answer, json, searched, cut: None };
        Ok(match self {
            Mode::Recall => {
                // A hook's prompt is plain language whatever its wording.
                let r = if ask.hook { query::recall_prompt(view, q, scope, limit)? } else { query::recall(view, q, scope, limit)? };
                let answer = (!r.hits.is_empty()).then(|| render::recall(&r, q));
                reply(answer, to_json(&r), format!("every indexed session for `{}` (exact, stemmed, fuzzy, relevance)", shown(q)))
            }
            Mode::Context => {
                let c = query::context(view, q, scope)?;
                // Always an object, so `schema_version` is there when nothing matched too.
                let json = c.as_ref().map_or_else(|| json!({"tier": null, "by_id": false, "session": null, "digest": null}), to_json);
                let searched = format!("every indexed session for `{}` (by id, then exact, stemmed, fuzzy and relevance search)", shown(q));
                // A digest is long: the command line cuts it to `--budget`.
                Reply { cut: Some(ask.param("budget")), ..reply(c.as_ref().map(render::context), json, searched) }
            }
            Mode::Blame => {
                let r =
                    if ask.hook { query::blame_within(view, q, scope, limit, HOOK_SCAN)? } else { query::blame(view, q, scope, limit)? };
                let answer = (!r.hits.is_empty()).then(|| render::blame(&r));
                let searched = format!("the files every session read or edited, and what was said, for `{}`", shown(&r.path));
                reply(answer, to_json(&r), searched)
            }
            Mode::Fix => {
                // A hook shows recorded fixes alone, read from the most recent few.
                let r = if ask.hook {
                    query::fixes_within(view, q, scope, limit, HOOK_SCAN, false)?
                } else {
                    query::fixes(view, q, scope, limit)?
                };
                let sig = r.errors.first().map_or_else(|| q.trim().to_string(), |(s, _)| s.clone());
                let answer = (!r.fixes.is_empty() || !r.seen.is_empty()).then(|| render::fix(&r));
                reply(
                    answer,
                    to_json(&r),
                    format!("every recorded fix for the error signature `{}` (exact, then by shared words)", shown(&sig)),
                )
            }
            Mode::How => {
                let r = query::how(view, q, scope, limit)?;
                let answer = (!r.commands.is_empty()).then(|| render::how(&r, q));
                reply(answer, to_json(&r), format!("every command line agents ran for `{}` (as a phrase, then in any order)", shown(q)))
            }
            Mode::Files => {
                let r = query::files(view, q, scope, limit)?;
                let answer = (!r.files.is_empty()).then(|| render::files(&r, q));
                reply(answer, to_json(&r), format!("the files touched by the sessions about `{}`", shown(q)))
            }
            Mode::Orient => {
                let dir = here()?;
                let o = if ask.hook {
                    query::orient_over(view, &dir, scope, limit, HOOK_ORIENT_SCAN)?
                } else {
                    query::orient(view, &dir, scope, limit)?
                };
                // Notes agents planted are shown beside the project's sessions, never
                // handed to an agent unasked on their own.
                let empty = o.sessions.is_empty() && o.notes.is_empty() && (ask.hook || o.agent_notes.is_empty());
                let answer = (!empty).then(|| render::orient(&o));
                reply(answer, to_json(&o), format!("the sessions of `{}` and the directories inside it", shown(&dir)))
            }
            Mode::Handoff => {
                let dir = here()?;
                let c = query::latest_session(view, &dir, scope)?;
                let answer = c.as_ref().map(|c| render::handoff(c, &dir));
                reply(answer, c.as_ref().map_or(Value::Null, to_json), format!("the sessions of the project `{}`", shown(&dir)))
            }
            Mode::Friction => {
                let min = ask.param("min-sessions").max(1);
                // Friction is about every project alike: where the asker is ranks nothing.
                let scope = Scope { here: None, ..scope.clone() };
                let rows = query::friction(view, &scope, min, limit)?;
                let answer = (!rows.is_empty()).then(|| render::friction(&rows, min));
                let json = json!({"min_sessions": min, "errors": to_json(&rows)});
                reply(answer, json, format!("every error signature for ones that hit {min} or more separate sessions"))
            }
            Mode::Remember => return Err(AskError::NotAQuestion),
        })
    }
}

fn to_json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// One question: what it is about, its filters and bounds.
#[derive(Debug, Clone, Default)]
pub struct Ask<'a> {
    /// The question's `q` (words, a path, error text); empty for a project's modes.
    pub q: &'a str,
    /// Filters, where the asker works (a [`Input::Project`] mode's project) and the
    /// cancel token.
    pub scope: Scope,
    /// Results at most; the mode's command-line default when `None`.
    pub limit: Option<usize>,
    /// Values of the mode's [`Param`]s, by their `long` name; a missing one takes its
    /// default.
    pub params: Vec<(&'static str, usize)>,
    /// Asked by a hook: the bounded, fast form of the question (a few recent records
    /// read, a prompt read as plain language, fixes without the errors seen unfixed).
    pub hook: bool,
}

impl Ask<'_> {
    /// A [`Param`]'s value, or its default (0 for a name the mode does not take).
    pub fn param(&self, long: &str) -> usize {
        self.params
            .iter()
            .find(|(k, _)| *k == long)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| Mode::ALL.iter().flat_map(|m| m.spec().params).find(|p| p.long == long).map_or(0, |p| p.default))
    }
}

/// A mode's answer, rendered for every surface.
#[derive(Debug, Clone)]
pub struct Reply {
    pub mode: Mode,
    /// The Markdown answer (framed by MCP and hooks, printed by the CLI); `None` when
    /// nothing matched.
    pub answer: Option<Answer>,
    /// The object `--json` prints (the CLI adds `schema_version` and `command`).
    pub json: Value,
    /// What was searched, for the line said when nothing matched.
    pub searched: String,
    /// The bytes the printed text is cut to (on line boundaries), for a long answer.
    pub cut: Option<usize>,
}

impl Reply {
    pub fn is_empty(&self) -> bool {
        self.answer.is_none()
    }

    /// `deja <name>: nothing matched — searched …`.
    pub fn nothing(&self, name: &str) -> String {
        render::nothing(name, &self.searched)
    }

    /// The answer as the command line prints it (empty when nothing matched).
    pub fn plain(&self) -> String {
        match (&self.answer, self.cut) {
            (Some(a), Some(budget)) => render::plain_within(a, budget),
            (Some(a), None) => render::plain(a),
            (None, _) => String::new(),
        }
    }
}

/// A question that could not be asked.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    #[error(transparent)]
    Index(#[from] IndexError),
    /// A project's mode with no directory to ask about.
    #[error("no project: pass `project` (a directory)")]
    NoProject,
    /// A mode that writes (remember) rather than asks.
    #[error("this mode saves a note; it asks nothing of the index")]
    NotAQuestion,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_commands_are_unique_and_found_again() {
        let mut names: Vec<&str> = Mode::ALL.iter().map(|m| m.name()).collect();
        let mut commands: Vec<&str> = Mode::commands().filter_map(|m| m.spec().command).collect();
        for m in Mode::ALL {
            assert_eq!(Mode::named(m.name()), Some(m));
            assert_eq!(m.spec().mode, m);
            if let Some(c) = m.spec().command {
                assert_eq!(Mode::of_command(c), Some(m));
                assert!(!m.spec().about.is_empty(), "{c} has help");
            }
            if m.spec().mcp.is_some() {
                assert!(!m.spec().when.is_empty(), "{} says when to ask it", m.name());
            }
        }
        let (n, c) = (names.len(), commands.len());
        names.sort_unstable();
        names.dedup();
        commands.sort_unstable();
        commands.dedup();
        assert_eq!((names.len(), commands.len()), (n, c));
    }

    #[test]
    fn params_default_when_not_given() {
        let ask = Ask { params: vec![("budget", 100)], ..Ask::default() };
        assert_eq!(ask.param("budget"), 100);
        assert_eq!(ask.param("min-sessions"), 3);
        assert_eq!(ask.param("no-such"), 0);
    }
}

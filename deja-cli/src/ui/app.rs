//! The search screen's state and what each key does to it, apart from the terminal.
//!
//! Keys come in as crossterm events and go out as changes to [`App`] plus, where the
//! outside world is needed (the index, the clipboard, another program), an [`Effect`]
//! the event loop carries out. Nothing here reads the index, the clock or the terminal,
//! so every binding is tested by feeding keys and reading the state.
//!
//! On the search screen printable keys type into the query line, so the actions there
//! are on control keys (`^R` resume, `^O` hand off, …); in the session view, where
//! nothing is typed, the same actions are plain letters (`r`, `o`, …).
//!
//! With a team store set up (`deja team init`) a fourth tab searches it. Its sessions
//! ran on other machines: they are read (Enter) and their `deja show --team` command
//! copied, and the actions that need the session's own files say why they cannot run.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use deja_core::index::search::{SearchRequest, SearchResults};
use deja_core::model::SessionMeta;
use deja_core::team::{TeamQuery, TeamResults, TeamSession};
use deja_core::Timestamp;

use super::pictures::Pictures;
use super::query;
use super::session::{SessionView, Teammate};
use super::text::safe;

/// How long typing must pause before the line is searched: a burst of keys (a fast
/// typist, a paste) is one search, and the answer still lands within a frame or two of
/// the pause. Searches that queue up anyway are dropped for the newest by the index
/// thread, so this only saves work, it never holds an answer back.
pub const DEBOUNCE: Duration = Duration::from_millis(40);
/// The same pause on the Team tab, longer: each search there is a connection to a
/// server the whole team shares, so it is asked once a word is typed, not at every key.
pub const TEAM_DEBOUNCE: Duration = Duration::from_millis(250);
/// Sessions asked of one search: a screenful and more, few enough to read quickly.
pub const RESULTS: usize = 100;

/// Which sessions the screen searches, shown as tabs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The current directory's project (and the directories inside it).
    Here,
    All,
    /// Sessions whose source the harness deleted and deja's archive still holds.
    Kept,
    /// The team store's sessions from other machines (shown only when one is set up).
    Team,
}

impl Scope {
    /// The tabs without a team store.
    pub const TABS: [Scope; 3] = [Scope::Here, Scope::All, Scope::Kept];
    /// The tabs with one.
    pub const WITH_TEAM: [Scope; 4] = [Scope::Here, Scope::All, Scope::Kept, Scope::Team];

    pub fn label(self) -> &'static str {
        match self {
            Scope::Here => "This project",
            Scope::All => "All projects",
            Scope::Kept => "Kept after deletion",
            Scope::Team => "Team",
        }
    }
}

/// A search for the loop to send: to this machine's index, or to the team store.
#[derive(Debug)]
pub enum Ask {
    Index(Box<SearchRequest>),
    Team(Box<TeamQuery>),
}

/// What fills the screen.
#[derive(Debug)]
pub enum Screen {
    Search,
    /// A session being read (`None` while its turns load).
    Session(Option<Box<SessionView>>),
    /// The pictures of the history, holding the session view it was opened from.
    Pictures {
        back: Option<Box<SessionView>>,
    },
}

/// A box over the screen that takes the keys until it closes.
#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    Help,
    /// A yes/no question; yes carries out `then`.
    Confirm {
        question: Vec<String>,
        then: Effect,
    },
    /// Text to read (the digest, the files touched), scrollable.
    Text {
        title: String,
        lines: Vec<String>,
        scroll: usize,
    },
    /// Which harness to hand the session to.
    Pick {
        session: String,
        targets: Vec<(String, String)>,
        selected: usize,
    },
}

/// What the event loop does for a key.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Quit,
    /// Load a session's turns to read it, opening at the turn `focus`.
    Open {
        meta: Box<SessionMeta>,
        focus: Option<u32>,
    },
    /// Read a session from the team store (`<machine>/<harness>:<id>`), opening at `focus`.
    OpenTeam {
        key: String,
        focus: Option<u32>,
    },
    /// Leave the screen and run a session's resume command.
    Resume {
        argv: Vec<String>,
        dir: Option<String>,
        shown: String,
    },
    /// Leave the screen and run `deja handoff SESSION --to TARGET`.
    Handoff {
        session: String,
        to: String,
    },
    /// Put text on the clipboard (OSC 52).
    Copy(String),
    /// Show the session's digest (`deja ctx`).
    Digest(Box<SessionMeta>),
    /// Show the files the session touched (its turns are loaded for it).
    Files(Box<SessionMeta>),
    /// Compute the pictures of the history.
    Pictures,
}

/// A line being edited: its text and the cursor, a byte offset on a char boundary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Line {
    pub text: String,
    pub cursor: usize,
}

impl Line {
    fn insert(&mut self, c: char) {
        self.text.insert(self.cursor, c);
        self.cursor += c.len_utf8();
    }

    fn prev(&self) -> usize {
        self.text[..self.cursor].char_indices().next_back().map_or(0, |(i, _)| i)
    }

    fn next(&self) -> usize {
        self.text[self.cursor..].chars().next().map_or(self.cursor, |c| self.cursor + c.len_utf8())
    }

    fn backspace(&mut self) {
        let p = self.prev();
        self.text.replace_range(p..self.cursor, "");
        self.cursor = p;
    }

    fn delete(&mut self) {
        let n = self.next();
        self.text.replace_range(self.cursor..n, "");
    }

    /// `^W`: the word before the cursor, and the spaces after it.
    fn delete_word(&mut self) {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end();
        let start = trimmed.rfind(' ').map_or(0, |i| i + 1);
        self.text.replace_range(start..self.cursor, "");
        self.cursor = start;
    }
}

/// The whole state of the screen.
#[derive(Debug)]
pub struct App {
    pub line: Line,
    pub scope: Scope,
    /// A tab was chosen with Tab before the opening one was known: it is kept.
    tab_chosen: bool,
    /// The current directory, as a project (`None` when unknown).
    pub here: Option<String>,
    /// The last answer shown, and the line it answered.
    pub results: Option<SearchResults>,
    pub answered: String,
    pub error: Option<String>,
    /// Filters in the line that could not be read.
    pub problems: Vec<String>,
    /// This machine's name in the team store, when one is set up: the Team tab shows
    /// only then, and leaves this machine's own pushed copies to the other tabs.
    pub team: Option<String>,
    /// The team store's last answer shown (on the Team tab).
    pub team_results: Option<TeamResults>,
    /// Filters in the line the team store cannot apply as typed, said beside its answer
    /// rather than dropped in silence.
    pub unapplied: Vec<String>,
    pub selected: usize,
    /// First result shown in the list: it moves only when the selection leaves the window.
    pub list_top: usize,
    pub screen: Screen,
    pub overlay: Option<Overlay>,
    /// A message for the status line, until the next key.
    pub message: Option<String>,
    pub pictures: Option<Result<Pictures, String>>,
    /// What the index is doing (refreshing, building), when worth saying.
    pub index_note: Option<String>,
    /// Harnesses a session can be handed to: (id, name).
    pub targets: Vec<(String, String)>,
    /// Rows of the session view's body at the last draw, for paging.
    pub body_height: usize,
    /// When the line is next due to be searched.
    due: Option<Instant>,
    /// Number of the last search sent; answers to older ones are dropped.
    sent: u64,
    /// A search was sent and not answered yet.
    pub searching: bool,
    pub quit: bool,
}

impl App {
    pub fn new(initial: &str, here: Option<String>, targets: Vec<(String, String)>) -> App {
        App {
            line: Line { text: initial.to_string(), cursor: initial.len() },
            scope: Scope::All,
            tab_chosen: false,
            here,
            results: None,
            answered: String::new(),
            error: None,
            problems: Vec::new(),
            team: None,
            team_results: None,
            unapplied: Vec::new(),
            selected: 0,
            list_top: 0,
            screen: Screen::Search,
            overlay: None,
            message: None,
            pictures: None,
            index_note: None,
            targets,
            body_height: 20,
            due: None,
            sent: 0,
            searching: false,
            quit: false,
        }
    }

    /// Sets where the screen opens — on `project`, the current directory's project by
    /// its history, when there is one, else on all projects — and asks for the first
    /// search at once.
    pub fn start(&mut self, project: Option<String>, now: Instant) {
        // A Tab pressed while the index thread looked is not undone by its answer.
        if !self.tab_chosen {
            self.scope = if project.is_some() { Scope::Here } else { Scope::All };
        }
        if project.is_some() {
            self.here = project;
        }
        self.due = Some(now);
    }

    /// Searches the line again now (the index changed under it). The Team tab's answer
    /// does not come from this machine's index, so it is not asked again for it.
    pub fn research(&mut self, now: Instant) {
        if self.scope != Scope::Team {
            self.due = Some(now);
        }
    }

    /// The tabs shown: the Team tab only when a team store is set up.
    pub fn tabs(&self) -> &'static [Scope] {
        if self.team.is_some() {
            &Scope::WITH_TEAM
        } else {
            &Scope::TABS
        }
    }

    /// When the loop should wake to send a search, if one is pending.
    pub fn due(&self) -> Option<Instant> {
        self.due
    }

    /// The search to send, if one is due at `now`, numbered.
    pub fn take_search(&mut self, now: Instant, at: Timestamp) -> Option<(u64, Ask)> {
        if self.due.is_none_or(|d| d > now) {
            return None;
        }
        self.due = None;
        let p = query::parse(&self.line.text, at);
        self.problems = p.problems.clone();
        self.unapplied.clear();
        if self.scope == Scope::Team {
            return self.team_search(p);
        }
        if p.file.is_some() && p.text.trim().is_empty() {
            self.problems.push("file: narrows the turns your words match; type a word too".into());
        }
        // A `project:` typed in the line is asked for by name, so it wins over the tab's
        // directory (the two cannot be one substring filter).
        let project = match self.scope {
            Scope::Here => p.project.clone().or_else(|| self.here.clone()),
            _ => p.project.clone(),
        };
        let req = SearchRequest {
            query: p.text,
            harnesses: p.harnesses,
            project,
            since: p.since,
            role: p.role,
            file: p.file,
            deleted_only: self.scope == Scope::Kept,
            limit: RESULTS,
            ..SearchRequest::default()
        };
        self.sent += 1;
        self.searching = true;
        Some((self.sent, Ask::Index(Box::new(req))))
    }

    /// The Team tab's search: the line's filters as the team store takes them (as
    /// `deja search --scope all` asks it), the ones it cannot apply noted. A line with
    /// no word is not sent: the store answers words, it has no "recent" list.
    fn team_search(&mut self, p: query::Parsed) -> Option<(u64, Ask)> {
        if let Some(f) = &p.file {
            self.unapplied.push(format!("file:{f} not applied (the team store keeps no file touches)"));
        }
        if let Some(r) = p.role.as_deref().filter(|r| !crate::search_cmd::team_role_is_exact(r)) {
            self.unapplied.push(format!("role:{r} read as any tool call (the team store keeps turns, not kinds of work)"));
        }
        let q = TeamQuery {
            roles: crate::search_cmd::team_roles(p.role.as_deref()),
            query: p.text,
            project: p.project,
            harnesses: p.harnesses,
            since: p.since,
            // This machine's sessions are on the other tabs, where they can be resumed.
            not_machine: self.team.clone(),
            limit: RESULTS,
        };
        self.sent += 1;
        if q.terms().0.is_empty() {
            self.searching = false;
            self.team_results = Some(TeamResults { tier: "none".into(), sessions: Vec::new() });
            self.answered = self.line.text.clone();
            self.error = None;
            self.selected = 0;
            return None;
        }
        self.searching = true;
        Some((self.sent, Ask::Team(Box::new(q))))
    }

    /// An answer to search `n`: shown if it is the latest sent, dropped otherwise.
    pub fn answer(&mut self, n: u64, line: String, result: Result<SearchResults, String>) {
        if !self.is_latest(n) {
            return;
        }
        match result {
            Ok(r) => {
                let keep = self.selected_meta().map(SessionMeta::key);
                self.results = Some(r);
                self.shown(line, keep, |app, k| app.hits().iter().position(|h| h.session.key() == k));
            }
            Err(e) => self.error = Some(e),
        }
    }

    /// An answer of the team store to search `n`: shown if it is the latest sent. One
    /// that could not come (unreachable, too slow, refused) empties the list and says
    /// why, rather than leave another query's sessions under the new line.
    pub fn answer_team(&mut self, n: u64, line: String, result: Result<TeamResults, String>) {
        if !self.is_latest(n) {
            return;
        }
        match result {
            Ok(r) => {
                let keep = self.selected_team().map(TeamSession::key);
                self.team_results = Some(r);
                self.shown(line, keep, |app, k| app.team_sessions().iter().position(|s| s.key() == k));
            }
            Err(why) => {
                self.team_results = None;
                self.error = Some(format!("team store unavailable: {}", safe(&why)));
            }
        }
    }

    /// True (and the search over) when `n` is the last search sent.
    fn is_latest(&mut self, n: u64) -> bool {
        if n != self.sent {
            return false;
        }
        self.searching = false;
        true
    }

    /// An answer to `line` is in place: the same line answered again (the index grew)
    /// stays on the session `keep` names, where `find` finds it; a new line starts at
    /// the top.
    fn shown(&mut self, line: String, keep: Option<String>, find: impl Fn(&App, &str) -> Option<usize>) {
        let same_line = line == self.answered;
        self.answered = line;
        self.error = None;
        self.selected = keep.filter(|_| same_line).and_then(|k| find(self, &k)).unwrap_or(0);
    }

    pub fn hits(&self) -> &[deja_core::index::search::Hit] {
        self.results.as_ref().map_or(&[], |r| r.hits.as_slice())
    }

    pub fn team_sessions(&self) -> &[TeamSession] {
        self.team_results.as_ref().map_or(&[], |r| r.sessions.as_slice())
    }

    /// How many sessions the list shows: the team store's on the Team tab.
    fn listed(&self) -> usize {
        if self.scope == Scope::Team {
            self.team_sessions().len()
        } else {
            self.hits().len()
        }
    }

    /// The selected session of this machine's history (none on the Team tab).
    pub fn selected_meta(&self) -> Option<&SessionMeta> {
        if self.scope == Scope::Team {
            return None;
        }
        self.hits().get(self.selected).map(|h| &h.session)
    }

    /// The selected session of the team store (on the Team tab).
    pub fn selected_team(&self) -> Option<&TeamSession> {
        if self.scope != Scope::Team {
            return None;
        }
        self.team_sessions().get(self.selected)
    }

    /// The session of this machine the actions apply to: the one being read, else the
    /// one selected; none when that is a teammate's ([`App::teammate`]).
    fn subject(&self) -> Option<SessionMeta> {
        match &self.screen {
            Screen::Session(Some(v)) if v.team.is_none() => Some(v.meta.clone()),
            Screen::Session(_) => None,
            _ => self.selected_meta().cloned(),
        }
    }

    /// The team store's session the actions apply to, when that is what is being read
    /// or selected.
    fn teammate(&self) -> Option<Teammate> {
        match &self.screen {
            Screen::Session(Some(v)) => v.team.clone(),
            Screen::Session(None) => None,
            _ => self.selected_team().map(Teammate::of),
        }
    }

    /// The words the preview and the session view highlight.
    pub fn terms(&self) -> Vec<String> {
        query::highlight_terms(&query::parse(&self.answered, Timestamp(0)).text)
    }

    /// A session's turns arrived.
    /// The runs the session `key` started, if it is still the one shown.
    pub fn children(&mut self, key: &str, titles: Vec<String>) {
        if let Screen::Session(Some(v)) = &mut self.screen {
            if v.meta.key() == key {
                v.children = titles;
            }
        }
    }

    pub fn opened(&mut self, view: Result<Box<SessionView>, String>) {
        if !matches!(self.screen, Screen::Session(None)) {
            return;
        }
        match view {
            Ok(v) => self.screen = Screen::Session(Some(v)),
            Err(e) => {
                self.screen = Screen::Search;
                self.message = Some(format!("could not read the session: {e}"));
            }
        }
    }

    pub fn show_text(&mut self, title: String, lines: Vec<String>) {
        self.overlay = Some(Overlay::Text { title, lines, scroll: 0 });
    }

    /// Handles one key; returns what the loop must do beyond the state change.
    pub fn key(&mut self, k: KeyEvent, now: Instant) -> Option<Effect> {
        if k.kind == KeyEventKind::Release {
            return None;
        }
        self.message = None;
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && k.code == KeyCode::Char('c') {
            self.quit = true;
            return Some(Effect::Quit);
        }
        if let Some(o) = self.overlay.take() {
            return self.overlay_key(o, k);
        }
        match self.screen {
            Screen::Search => self.search_key(k, ctrl, now),
            Screen::Session(_) => self.session_key(k),
            Screen::Pictures { .. } => {
                match k.code {
                    KeyCode::Esc | KeyCode::Tab | KeyCode::BackTab | KeyCode::Char('q' | 's') | KeyCode::F(2) => {
                        let Screen::Pictures { back } = std::mem::replace(&mut self.screen, Screen::Search) else { return None };
                        if let Some(v) = back {
                            self.screen = Screen::Session(Some(v));
                        }
                    }
                    KeyCode::Char('?') | KeyCode::F(1) => self.overlay = Some(Overlay::Help),
                    _ => {}
                }
                None
            }
        }
    }

    fn search_key(&mut self, k: KeyEvent, ctrl: bool, now: Instant) -> Option<Effect> {
        let before = self.line.text.clone();
        let n = self.listed();
        match k.code {
            KeyCode::Esc if !self.line.text.is_empty() => self.line = Line::default(),
            KeyCode::Esc => {
                self.quit = true;
                return Some(Effect::Quit);
            }
            KeyCode::Enter => return self.open_selected(),
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down => self.selected = (self.selected + 1).min(n.saturating_sub(1)),
            KeyCode::PageUp => self.selected = self.selected.saturating_sub(10),
            KeyCode::PageDown => self.selected = (self.selected + 10).min(n.saturating_sub(1)),
            KeyCode::Tab | KeyCode::BackTab => {
                let tabs = self.tabs();
                let i = tabs.iter().position(|s| *s == self.scope).unwrap_or(0);
                let len = tabs.len();
                let step = |i: usize| if k.code == KeyCode::Tab { (i + 1) % len } else { (i + len - 1) % len };
                let mut next = step(i);
                if tabs[next] == Scope::Here && self.here.is_none() {
                    // Skipped in the direction of travel, so ⇧Tab still reaches every tab.
                    self.message = Some("the current directory is unknown: no this-project tab".into());
                    next = step(next);
                }
                self.scope = tabs[next];
                self.tab_chosen = true;
                self.due = Some(now);
            }
            KeyCode::F(1) => self.overlay = Some(Overlay::Help),
            KeyCode::Char('?') if self.line.text.is_empty() => self.overlay = Some(Overlay::Help),
            KeyCode::F(2) => return self.pictures(),
            KeyCode::Char(c) if ctrl => match c {
                'r' => return self.resume(),
                'o' => return self.handoff(),
                'y' => return self.copy(),
                'g' => return self.digest(),
                'f' => return self.files(),
                'p' => return self.pictures(),
                'u' => self.line = Line::default(),
                'w' => self.line.delete_word(),
                'a' => self.line.cursor = 0,
                'e' => self.line.cursor = self.line.text.len(),
                _ => {}
            },
            KeyCode::Char(c) => self.line.insert(c),
            KeyCode::Backspace => self.line.backspace(),
            KeyCode::Delete => self.line.delete(),
            KeyCode::Left => self.line.cursor = self.line.prev(),
            KeyCode::Right => self.line.cursor = self.line.next(),
            KeyCode::Home => self.line.cursor = 0,
            KeyCode::End => self.line.cursor = self.line.text.len(),
            _ => {}
        }
        if self.line.text != before {
            self.due = Some(now + if self.scope == Scope::Team { TEAM_DEBOUNCE } else { DEBOUNCE });
        }
        None
    }

    fn session_key(&mut self, k: KeyEvent) -> Option<Effect> {
        let h = self.body_height.max(1);
        let Screen::Session(Some(v)) = &mut self.screen else {
            // Still loading: only leaving is possible.
            if matches!(k.code, KeyCode::Esc | KeyCode::Char('q')) {
                self.screen = Screen::Search;
            }
            return None;
        };
        match k.code {
            KeyCode::Esc | KeyCode::Char('q') => self.screen = Screen::Search,
            KeyCode::Down | KeyCode::Char('j') => v.scroll_by(1, h),
            KeyCode::Up | KeyCode::Char('k') => v.scroll_by(-1, h),
            KeyCode::PageDown | KeyCode::Char(' ') => v.scroll_by(h as isize - 1, h),
            KeyCode::PageUp | KeyCode::Char('b') => v.scroll_by(-(h as isize - 1), h),
            KeyCode::Home | KeyCode::Char('g') => v.top(),
            KeyCode::End | KeyCode::Char('G') => v.bottom(h),
            KeyCode::Char('n') => v.next_match(h),
            KeyCode::Char('N') => v.prev_match(h),
            KeyCode::Char('z') => v.toggle_fold(h),
            KeyCode::Char('r') => return self.resume(),
            KeyCode::Char('o') => return self.handoff(),
            KeyCode::Char('y') => return self.copy(),
            KeyCode::Char('c') => return self.digest(),
            KeyCode::Char('f') if v.team.is_some() => return self.files(),
            KeyCode::Char('f') => {
                let files = v.files();
                let lines = if files.is_empty() { vec!["(no file was read or changed)".to_string()] } else { files };
                self.show_text("Files touched".into(), lines);
            }
            KeyCode::Char('?') | KeyCode::F(1) => self.overlay = Some(Overlay::Help),
            KeyCode::Tab | KeyCode::Char('s') | KeyCode::F(2) => return self.pictures(),
            _ => {}
        }
        None
    }

    fn overlay_key(&mut self, o: Overlay, k: KeyEvent) -> Option<Effect> {
        match o {
            Overlay::Help => None,
            Overlay::Confirm { question, then } => match k.code {
                KeyCode::Char('y' | 'Y') | KeyCode::Enter => Some(then),
                KeyCode::Char('n' | 'N' | 'q') | KeyCode::Esc => None,
                _ => {
                    self.overlay = Some(Overlay::Confirm { question, then });
                    None
                }
            },
            Overlay::Text { title, lines, mut scroll } => {
                let page = self.body_height.max(2) - 1;
                match k.code {
                    KeyCode::Esc | KeyCode::Char('q') | KeyCode::Enter => return None,
                    KeyCode::Down | KeyCode::Char('j') => scroll += 1,
                    KeyCode::Up | KeyCode::Char('k') => scroll = scroll.saturating_sub(1),
                    KeyCode::PageDown | KeyCode::Char(' ') => scroll += page,
                    KeyCode::PageUp => scroll = scroll.saturating_sub(page),
                    _ => {}
                }
                scroll = scroll.min(lines.len().saturating_sub(1));
                self.overlay = Some(Overlay::Text { title, lines, scroll });
                None
            }
            Overlay::Pick { session, targets, mut selected } => match k.code {
                KeyCode::Esc | KeyCode::Char('q') => None,
                KeyCode::Enter => targets.get(selected).map(|(id, _)| Effect::Handoff { session, to: id.clone() }),
                KeyCode::Down | KeyCode::Char('j') => {
                    selected = (selected + 1).min(targets.len().saturating_sub(1));
                    self.overlay = Some(Overlay::Pick { session, targets, selected });
                    None
                }
                KeyCode::Up | KeyCode::Char('k') => {
                    selected = selected.saturating_sub(1);
                    self.overlay = Some(Overlay::Pick { session, targets, selected });
                    None
                }
                _ => {
                    self.overlay = Some(Overlay::Pick { session, targets, selected });
                    None
                }
            },
        }
    }

    fn open_selected(&mut self) -> Option<Effect> {
        if self.scope == Scope::Team {
            let s = self.selected_team()?;
            let effect = Effect::OpenTeam { key: s.key(), focus: s.hits.first().map(|h| h.seq) };
            self.screen = Screen::Session(None);
            return Some(effect);
        }
        let hit = self.hits().get(self.selected)?;
        let effect = Effect::Open { meta: Box::new(hit.session.clone()), focus: hit.turns.first().map(|t| t.seq) };
        self.screen = Screen::Session(None);
        Some(effect)
    }

    fn pictures(&mut self) -> Option<Effect> {
        let back = match std::mem::replace(&mut self.screen, Screen::Search) {
            Screen::Session(Some(v)) => Some(v),
            _ => None,
        };
        self.screen = Screen::Pictures { back };
        Some(Effect::Pictures)
    }

    /// Says why an action that needs the session's own files, or this machine's index,
    /// cannot be taken on a teammate's session: `what` it is not, `because` of what.
    fn not_here(&mut self, what: &str, because: &str, t: &Teammate) {
        self.message = Some(format!("{what}: it is {}'s session on {}, {because}", safe(&t.author), safe(&t.machine)));
    }

    fn digest(&mut self) -> Option<Effect> {
        if let Some(t) = self.teammate() {
            self.not_here("no digest", "and a digest is made from this machine's index", &t);
            return None;
        }
        self.subject().map(|m| Effect::Digest(Box::new(m)))
    }

    fn files(&mut self) -> Option<Effect> {
        if let Some(t) = self.teammate() {
            self.not_here("no list of files", "and the team store keeps its turns as role, text and time only", &t);
            return None;
        }
        self.subject().map(|m| Effect::Files(Box::new(m)))
    }

    fn resume(&mut self) -> Option<Effect> {
        if let Some(t) = self.teammate() {
            self.not_here("cannot resume it here", "and its harness resumes it only from its own files, on that machine", &t);
            return None;
        }
        let meta = self.subject()?;
        match deja_core::format::resume_for(&meta) {
            Ok(r) => {
                let mut question = vec![format!("Resume this session in {}?", meta.harness), String::new(), r.command.clone()];
                if let Some(note) = &r.note {
                    question.push(format!("({note})"));
                }
                // The harness resumes only from its own files: say how to put them back.
                match deja_core::restore::offer(&meta) {
                    Some(Ok(cmd)) => question.push(format!("(its harness deleted it; put it back first: {cmd})")),
                    Some(Err(why)) => question.push(format!("(its harness deleted it and cannot take it back: {why})")),
                    None => {}
                }
                question.push(String::new());
                question.push("y runs it (deja closes)   n or Esc goes back".to_string());
                let then = Effect::Resume { argv: r.argv, dir: r.dir, shown: r.command };
                self.overlay = Some(Overlay::Confirm { question, then });
            }
            Err(why) => self.message = Some(format!("cannot resume it: {why}")),
        }
        None
    }

    fn handoff(&mut self) -> Option<Effect> {
        if let Some(t) = self.teammate() {
            self.not_here("cannot hand it off", "and `deja handoff` starts from this machine's history", &t);
            return None;
        }
        let meta = self.subject()?;
        if self.targets.is_empty() {
            self.message = Some("no harness that can be started with a prompt is installed".into());
            return None;
        }
        // The session's own harness first: continuing where it was is the common case.
        let mut targets = self.targets.clone();
        if let Some(i) = targets.iter().position(|(id, _)| *id == meta.harness) {
            let own = targets.remove(i);
            targets.insert(0, own);
        }
        self.overlay = Some(Overlay::Pick { session: meta.key(), targets, selected: 0 });
        None
    }

    fn copy(&mut self) -> Option<Effect> {
        if let Some(t) = self.teammate() {
            let text = t.show_command();
            self.message = Some(format!("copied the command that reads it (OSC 52; if your terminal ignores it: {})", safe(&text)));
            return Some(Effect::Copy(text));
        }
        let meta = self.subject()?;
        let (what, text) = match deja_core::format::resume_for(&meta) {
            Ok(r) => ("the resume command", r.command),
            Err(_) => ("the session id", meta.key()),
        };
        self.message = Some(format!("copied {what} (OSC 52; if your terminal ignores it: {})", super::text::safe(&text)));
        Some(Effect::Copy(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use deja_core::index::search::{Hit, Tier};

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    fn ctrl(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    /// The search due at `now`, which must be one of this machine's index.
    fn index_search(app: &mut App, now: Instant) -> Option<(u64, SearchRequest)> {
        app.take_search(now, Timestamp(0)).map(|(n, ask)| match ask {
            Ask::Index(req) => (n, *req),
            Ask::Team(q) => panic!("a team search: {q:?}"),
        })
    }

    #[test]
    fn tabs_skip_an_unknown_directory_both_ways_and_a_chosen_tab_survives_the_opening_answer() {
        let now = Instant::now();
        let mut app = App::new("", None, Vec::new());
        assert_eq!(app.scope, Scope::All);
        // ⇧Tab from All would land on This project, which is unknown: it goes on to Kept.
        app.key(KeyEvent::new(KeyCode::BackTab, KeyModifiers::SHIFT), now);
        assert_eq!(app.scope, Scope::Kept);
        app.key(key(KeyCode::Tab), now);
        assert_eq!(app.scope, Scope::All, "Tab from the last tab wraps past This project");
        // The index thread's answer comes after the person chose a tab: the choice stays.
        app.key(key(KeyCode::Tab), now);
        app.start(Some("/src/api".into()), now);
        assert_eq!(app.scope, Scope::Kept);
        assert_eq!(app.here.as_deref(), Some("/src/api"), "the project is still learnt");
        // Without a choice, the answer picks the opening tab.
        let mut fresh = App::new("", None, Vec::new());
        fresh.start(Some("/src/api".into()), now);
        assert_eq!(fresh.scope, Scope::Here);
    }

    fn typed(app: &mut App, s: &str, now: Instant) {
        for c in s.chars() {
            assert_eq!(app.key(key(KeyCode::Char(c)), now), None);
        }
    }

    pub(crate) fn results(ids: &[&str]) -> SearchResults {
        let hits = ids
            .iter()
            .map(|id| Hit {
                session: deja_core::model::SessionMeta { id: id.to_string(), ..super::super::session::tests::meta() },
                tier: Tier::Exact,
                score: 1.0,
                snippets: Vec::new(),
                turns: vec![deja_core::model::Turn { seq: 4, ..deja_core::model::Turn::new(deja_core::Role::User, "pool") }],
            })
            .collect();
        SearchResults::listed(hits)
    }

    #[test]
    fn typing_searches_once_the_typing_pauses_and_only_the_newest_answer_shows() {
        let t0 = Instant::now();
        let mut app = App::new("", Some("/src/api".into()), Vec::new());
        app.start(Some("/src/api".into()), t0);
        let (first, req) = index_search(&mut app, t0).expect("the opening search");
        assert_eq!((req.project.as_deref(), req.query.as_str()), (Some("/src/api"), ""));
        typed(&mut app, "pool harness:beta", t0);
        assert!(app.take_search(t0, Timestamp(0)).is_none(), "not while typing");
        let later = t0 + DEBOUNCE;
        let (second, req) = index_search(&mut app, later).expect("due after the pause");
        assert_eq!((req.query.as_str(), req.harnesses.as_slice()), ("pool", ["beta".to_string()].as_slice()));
        assert!(app.take_search(later, Timestamp(0)).is_none(), "sent once");
        app.answer(first, String::new(), Ok(results(&["old"])));
        assert!(app.results.is_none(), "a stale answer is dropped");
        app.answer(second, "pool harness:beta".into(), Ok(results(&["a", "b"])));
        assert_eq!(app.hits().len(), 2);
        assert!(!app.searching);
    }

    #[test]
    fn tabs_change_the_scope_and_search_at_once() {
        let t0 = Instant::now();
        let mut app = App::new("x", Some("/src/api".into()), Vec::new());
        app.start(None, t0);
        assert_eq!(app.scope, Scope::All, "no history here: all projects");
        app.take_search(t0, Timestamp(0));
        app.key(key(KeyCode::Tab), t0);
        assert_eq!(app.scope, Scope::Kept);
        let (_, req) = index_search(&mut app, t0).expect("at once");
        assert!(req.deleted_only && req.project.is_none());
        app.key(key(KeyCode::Tab), t0);
        let (_, req) = index_search(&mut app, t0).expect("at once");
        assert_eq!((app.scope, req.project.as_deref(), req.deleted_only), (Scope::Here, Some("/src/api"), false));
        typed(&mut app, " project:web", t0);
        let (_, req) = index_search(&mut app, t0 + DEBOUNCE).expect("due");
        assert_eq!(req.project.as_deref(), Some("web"), "a typed project wins over the tab");
        app.key(key(KeyCode::BackTab), t0);
        assert_eq!(app.scope, Scope::Kept);
        let mut nowhere = App::new("", None, Vec::new());
        nowhere.start(None, t0);
        assert_eq!(nowhere.scope, Scope::All);
        nowhere.key(key(KeyCode::BackTab), t0);
        nowhere.key(key(KeyCode::BackTab), t0);
        assert_eq!(nowhere.scope, Scope::All, "no project tab without a directory");
    }

    #[test]
    fn the_line_edits_like_a_shell_line() {
        let t0 = Instant::now();
        let mut app = App::new("", None, Vec::new());
        typed(&mut app, "日本 pool", t0);
        app.key(key(KeyCode::Left), t0);
        app.key(key(KeyCode::Backspace), t0);
        assert_eq!(app.line.text, "日本 pol");
        app.key(key(KeyCode::Home), t0);
        app.key(key(KeyCode::Delete), t0);
        assert_eq!(app.line.text, "本 pol");
        app.key(key(KeyCode::End), t0);
        app.key(ctrl('w'), t0);
        assert_eq!(app.line.text, "本 ");
        app.key(ctrl('u'), t0);
        assert_eq!(app.line, Line::default());
        // `?` types when there is a query, and opens the help when there is none.
        app.key(key(KeyCode::Char('?')), t0);
        assert_eq!(app.overlay, Some(Overlay::Help));
        app.key(key(KeyCode::Char('x')), t0);
        assert_eq!((app.overlay.as_ref(), app.line.text.as_str()), (None, ""), "any key closes the help");
    }

    #[test]
    fn esc_clears_then_quits_and_ctrl_c_always_quits() {
        let t0 = Instant::now();
        let mut app = App::new("pool", None, Vec::new());
        assert_eq!(app.key(key(KeyCode::Esc), t0), None);
        assert_eq!(app.line.text, "");
        assert_eq!(app.key(key(KeyCode::Esc), t0), Some(Effect::Quit));
        let mut app = App::new("pool", None, Vec::new());
        app.overlay = Some(Overlay::Help);
        assert_eq!(app.key(ctrl('c'), t0), Some(Effect::Quit));
    }

    #[test]
    fn enter_opens_the_selected_session_at_its_best_turn_and_q_goes_back() {
        let t0 = Instant::now();
        let mut app = App::new("pool", None, Vec::new());
        app.start(None, t0);
        let (n, _) = app.take_search(t0, Timestamp(0)).expect("search");
        app.answer(n, "pool".into(), Ok(results(&["a", "b", "c"])));
        app.key(key(KeyCode::Down), t0);
        app.key(key(KeyCode::Down), t0);
        app.key(key(KeyCode::Down), t0);
        assert_eq!(app.selected, 2, "stops at the last");
        let Some(Effect::Open { meta, focus }) = app.key(key(KeyCode::Enter), t0) else { panic!("opens") };
        assert_eq!((meta.id.as_str(), focus), ("c", Some(4)));
        let view = SessionView::new(*meta, super::super::session::tests::sample(), app.terms(), focus);
        app.opened(Ok(Box::new(view)));
        assert!(matches!(app.screen, Screen::Session(Some(_))));
        app.key(key(KeyCode::Char('q')), t0);
        assert!(matches!(app.screen, Screen::Search));
    }

    /// A linked harness whose sessions always resume by id, whichever adapters exist.
    fn resumable() -> String {
        deja_core::registry()
            .into_iter()
            .find(|f| matches!(f.info().launch.resume, deja_core::launch::Resume::Always(s) if !s.in_dir))
            .map(|f| f.info().id.to_string())
            .expect("some harness resumes by id")
    }

    #[test]
    fn resume_asks_first_and_handoff_offers_the_own_harness_first() {
        let t0 = Instant::now();
        let own = resumable();
        let targets = vec![("other".to_string(), "Other".to_string()), (own.clone(), "Own".to_string())];
        let mut app = App::new("pool", None, targets);
        app.start(None, t0);
        let (n, _) = app.take_search(t0, Timestamp(0)).expect("search");
        let mut r = results(&["a"]);
        r.hits[0].session.harness = own.clone();
        app.answer(n, "pool".into(), Ok(r));
        assert_eq!(app.key(ctrl('r'), t0), None, "asks before it runs");
        match &app.overlay {
            Some(Overlay::Confirm { question, then: Effect::Resume { argv, shown, .. } }) => {
                assert!(question.iter().any(|l| l == shown), "the command it runs is shown: {question:?}");
                assert!(argv.iter().any(|w| w == "a"), "{argv:?}");
            }
            other => panic!("a question, not {other:?}"),
        }
        assert_eq!(app.key(key(KeyCode::Char('x')), t0), None, "other keys leave the question up");
        assert!(matches!(app.key(key(KeyCode::Char('y')), t0), Some(Effect::Resume { .. })));
        app.key(ctrl('r'), t0);
        assert_eq!(app.key(key(KeyCode::Esc), t0), None);
        assert_eq!(app.overlay, None, "no closes it");

        assert_eq!(app.key(ctrl('o'), t0), None);
        let Some(Overlay::Pick { targets, .. }) = &app.overlay else { panic!("a pick") };
        assert_eq!(targets[0].0, own);
        app.key(key(KeyCode::Down), t0);
        assert_eq!(app.key(key(KeyCode::Enter), t0), Some(Effect::Handoff { session: format!("{own}:a"), to: "other".into() }));
    }

    #[test]
    fn a_session_without_a_resume_command_says_why() {
        let t0 = Instant::now();
        let mut app = App::new("pool", None, Vec::new());
        app.start(None, t0);
        let (n, _) = app.take_search(t0, Timestamp(0)).expect("search");
        app.answer(n, "pool".into(), Ok(results(&["a"])));
        assert_eq!(app.key(ctrl('r'), t0), None);
        assert_eq!(app.overlay, None);
        assert!(app.message.as_deref().is_some_and(|m| m.starts_with("cannot resume it: ")), "{:?}", app.message);
        assert_eq!(app.key(ctrl('o'), t0), None);
        assert!(app.message.as_deref().is_some_and(|m| m.contains("no harness")), "{:?}", app.message);
    }

    #[test]
    fn copy_says_what_it_copied() {
        let t0 = Instant::now();
        let mut app = App::new("pool", None, Vec::new());
        app.start(None, t0);
        let (n, _) = app.take_search(t0, Timestamp(0)).expect("search");
        app.answer(n, "pool".into(), Ok(results(&["a"])));
        let Some(Effect::Copy(text)) = app.key(ctrl('y'), t0) else { panic!("copies") };
        assert!(app.message.as_deref().is_some_and(|m| m.contains(&text)), "{:?}", app.message);
    }

    /// The search due at `now`, which must be one for the team store.
    fn team_search(app: &mut App, now: Instant) -> Option<(u64, TeamQuery)> {
        app.take_search(now, Timestamp(10 * 86_400_000)).map(|(n, ask)| match ask {
            Ask::Team(q) => (n, *q),
            Ask::Index(req) => panic!("a search of the index: {req:?}"),
        })
    }

    fn team_results(machines: &[&str]) -> TeamResults {
        let sessions = machines
            .iter()
            .enumerate()
            .map(|(i, m)| TeamSession { machine: m.to_string(), id: format!("t{i}"), ..super::super::session::tests::team_session() })
            .collect();
        TeamResults { tier: "stemmed".into(), sessions }
    }

    /// A screen with a team store, on its Team tab (Tab twice from all projects).
    fn on_team_tab(line: &str, targets: Vec<(String, String)>, now: Instant) -> App {
        let mut app = App::new(line, None, targets);
        app.team = Some("this-box".into());
        app.start(None, now);
        index_search(&mut app, now).expect("the opening search");
        app.key(key(KeyCode::Tab), now);
        app.key(key(KeyCode::Tab), now);
        assert_eq!(app.scope, Scope::Team);
        app
    }

    #[test]
    fn the_team_tab_is_there_only_with_a_team_store() {
        let t0 = Instant::now();
        let mut app = App::new("x", Some("/src/api".into()), Vec::new());
        app.start(Some("/src/api".into()), t0);
        for _ in 0..3 {
            app.key(key(KeyCode::Tab), t0);
            assert_ne!(app.scope, Scope::Team);
        }
        assert_eq!(app.scope, Scope::Here);
        app.team = Some("this-box".into());
        assert_eq!(app.tabs(), Scope::WITH_TEAM);
        app.key(key(KeyCode::BackTab), t0);
        assert_eq!(app.scope, Scope::Team, "the last tab, one ⇧Tab back from the first");
        app.key(key(KeyCode::Tab), t0);
        assert_eq!(app.scope, Scope::Here);
    }

    #[test]
    fn the_team_tab_asks_the_team_store_with_the_filters_it_can_apply() {
        let t0 = Instant::now();
        let mut app = on_team_tab("", Vec::new(), t0);
        // No word: nothing to ask, and the list says so at once.
        assert!(team_search(&mut app, t0).is_none());
        assert!(!app.searching && app.team_results.as_ref().is_some_and(|r| r.sessions.is_empty()));
        typed(&mut app, "staging pool harness:claude project:app since:7d role:command file:src/db.rs", t0);
        assert!(app.take_search(t0 + DEBOUNCE, Timestamp(0)).is_none(), "the team store is asked after a longer pause");
        let (n, q) = team_search(&mut app, t0 + TEAM_DEBOUNCE).expect("due");
        assert_eq!(q.query, "staging pool");
        assert_eq!((q.harnesses.as_slice(), q.project.as_deref()), (["claude".to_string()].as_slice(), Some("app")));
        assert_eq!(q.since, Some(Timestamp(3 * 86_400_000)));
        assert_eq!(q.roles, ["tool_call"]);
        assert_eq!(q.not_machine.as_deref(), Some("this-box"), "this machine's own sessions are on the other tabs");
        assert_eq!(app.unapplied.len(), 2, "{:?}", app.unapplied);
        assert!(app.unapplied[0].starts_with("file:src/db.rs not applied"), "{:?}", app.unapplied);
        assert!(app.unapplied[1].starts_with("role:command read as any tool call"), "{:?}", app.unapplied);
        assert!(app.searching);
        // A commit to this machine's index does not ask the team store again.
        app.research(t0);
        assert!(app.take_search(t0, Timestamp(0)).is_none());
        app.answer_team(n, app.line.text.clone(), Ok(team_results(&["laptop", "desktop"])));
        assert_eq!((app.team_sessions().len(), app.searching), (2, false));
        app.key(key(KeyCode::Down), t0);
        assert_eq!(app.selected_team().map(|s| s.machine.as_str()), Some("desktop"));
        assert_eq!(app.selected_meta(), None, "no session of this machine is selected on the Team tab");
    }

    #[test]
    fn an_unavailable_team_store_says_why_and_empties_the_list() {
        let t0 = Instant::now();
        let mut app = on_team_tab("pool", Vec::new(), t0);
        let (n, _) = team_search(&mut app, t0).expect("due");
        app.answer_team(n, "pool".into(), Ok(team_results(&["laptop"])));
        app.key(key(KeyCode::Char('s')), t0);
        let (n, _) = team_search(&mut app, t0 + TEAM_DEBOUNCE).expect("due");
        app.answer_team(n - 1, "pool".into(), Err("stale".into()));
        assert!(app.error.is_none(), "an answer to an older search is dropped");
        app.answer_team(n, "pools".into(), Err("the team store u@db:5432/team did not answer within 2000 ms\u{1b}[2J".into()));
        let e = app.error.as_deref().unwrap_or_default();
        assert!(e.starts_with("team store unavailable: the team store u@db:5432/team did not answer"), "{e}");
        assert!(!e.contains('\u{1b}'), "made safe to draw: {e:?}");
        assert!(app.team_sessions().is_empty() && !app.searching);
        assert_eq!(app.key(key(KeyCode::Enter), t0), None, "nothing to open");
    }

    #[test]
    fn a_teammates_session_opens_from_the_store_copies_its_show_command_and_says_why_it_does_not_resume() {
        let t0 = Instant::now();
        let mut app = on_team_tab("staging", vec![("claude".into(), "Claude Code".into())], t0);
        let (n, _) = team_search(&mut app, t0).expect("due");
        app.answer_team(n, "staging".into(), Ok(team_results(&["laptop"])));
        // On the search screen: ^R, ^O, ^G and ^F say why; ^Y copies how to read it.
        for (c, why) in [
            ('r', "cannot resume it here: it is alice's session on laptop"),
            ('o', "cannot hand it off"),
            ('g', "no digest"),
            ('f', "no list of files"),
        ] {
            assert_eq!(app.key(ctrl(c), t0), None, "^{c}");
            assert_eq!(app.overlay, None, "^{c}");
            assert!(app.message.as_deref().is_some_and(|m| m.starts_with(why)), "^{c}: {:?}", app.message);
        }
        assert_eq!(app.key(ctrl('y'), t0), Some(Effect::Copy("deja show --team laptop/claude:t0".into())));
        assert!(app.message.as_deref().is_some_and(|m| m.contains("deja show --team laptop/claude:t0")), "{:?}", app.message);
        let Some(Effect::OpenTeam { key: k, focus }) = app.key(key(KeyCode::Enter), t0) else { panic!("opens from the store") };
        assert_eq!((k.as_str(), focus), ("laptop/claude:t0", Some(0)));
        let mut s = super::super::session::tests::team_session();
        s.id = "t0".into();
        app.opened(Ok(Box::new(SessionView::from_team(s, app.terms(), focus))));
        assert!(matches!(app.screen, Screen::Session(Some(_))));
        // In the session view: the same, on plain letters.
        for (c, why) in [('r', "cannot resume it here"), ('o', "cannot hand it off"), ('c', "no digest"), ('f', "no list of files")] {
            assert_eq!(app.key(key(KeyCode::Char(c)), t0), None, "{c}");
            assert_eq!(app.overlay, None, "{c}");
            assert!(app.message.as_deref().is_some_and(|m| m.starts_with(why)), "{c}: {:?}", app.message);
        }
        assert_eq!(app.key(key(KeyCode::Char('y')), t0), Some(Effect::Copy("deja show --team laptop/claude:t0".into())));
        app.key(key(KeyCode::Char('q')), t0);
        assert!(matches!(app.screen, Screen::Search));
    }
}

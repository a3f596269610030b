//! The session view's model: a whole session laid out as rows of a given width, which
//! rows hold the query's words, and where the view is scrolled.
//!
//! Laid out here rather than by a wrapping paragraph widget so that "row 240 holds the
//! third match" is known before anything is drawn: `n`/`N` and "open at the match" need
//! the row a match lands on after wrapping, and a pure layout can be tested for it.
//!
//! A session read from the team store ([`SessionView::from_team`]) is laid out the same
//! way: its turns carry only a role, a text and a time, so it reads as speech.

use deja_core::model::{SessionMeta, Turn};
use deja_core::team::TeamSession;
use deja_core::Role;

use super::text::{find_terms, safe, wrap};

/// Lines of a tool's output shown before it is folded (unless it holds a match).
pub const FOLD_LINES: usize = 6;

/// What a row is, which decides how it is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Who speaks next: `you`, `assistant`, `reasoning`, `note`.
    Speaker,
    /// Speech, reasoning, a note.
    Text,
    /// A tool call's name and outcome line (succeeded or unknown).
    Tool,
    /// A tool call that failed (non-zero exit, an error result).
    ToolFailed,
    /// `$ command line`.
    Command,
    /// A tool's output.
    Output,
    /// `… 40 more lines`.
    Fold,
    /// `[edit] src/pool.rs`.
    File,
    /// A removed line of an edit.
    DiffOld,
    /// An added line of an edit.
    DiffNew,
    /// An unchanged line around an edit's change.
    DiffSame,
    /// A compaction, a sub-agent, a partial answer: something about the session itself.
    Marker,
    Blank,
}

/// One row of the laid-out session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub kind: Kind,
    pub text: String,
    /// The turn it belongs to.
    pub seq: Option<u32>,
}

/// Who ran a session read from the team store, and where: it is someone else's history
/// (or this person's on another machine), which this machine can read but not resume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Teammate {
    /// The PostgreSQL role that pushed it.
    pub author: String,
    /// The machine it ran on.
    pub machine: String,
    /// The project key it was pushed under (a normalized remote, or a path).
    pub project: String,
    /// `<machine>/<harness>:<id>`, as `deja show --team` takes it.
    pub key: String,
}

impl Teammate {
    pub fn of(s: &TeamSession) -> Teammate {
        Teammate { author: s.author.clone(), machine: s.machine.clone(), project: s.project.clone(), key: s.key() }
    }

    /// The command that prints the session on any machine that may read it.
    pub fn show_command(&self) -> String {
        format!("deja show --team {}", deja_core::launch::quote(&self.key))
    }
}

/// A session, laid out, with its matches and where the view stands.
#[derive(Debug, Clone)]
pub struct SessionView {
    pub meta: SessionMeta,
    pub turns: Vec<Turn>,
    /// The query's words, for matches and highlighting.
    pub terms: Vec<String>,
    /// The turn the view opened at (the best match), if any.
    pub focus: Option<u32>,
    pub rows: Vec<Row>,
    /// Rows holding a match, in order.
    pub matches: Vec<usize>,
    /// Index into `matches` of the match last moved to.
    pub current: Option<usize>,
    /// First row shown.
    pub scroll: usize,
    /// Every tool output shown whole.
    pub unfolded: bool,
    /// Sessions this one started (sub-agent runs, forks), by title, for the header.
    pub children: Vec<String>,
    /// Set when the session was read from the team store.
    pub team: Option<Teammate>,
    width: usize,
}

impl SessionView {
    pub fn new(meta: SessionMeta, turns: Vec<Turn>, terms: Vec<String>, focus: Option<u32>) -> SessionView {
        SessionView {
            meta,
            turns,
            terms,
            focus,
            rows: Vec::new(),
            matches: Vec::new(),
            current: None,
            scroll: 0,
            unfolded: false,
            children: Vec::new(),
            team: None,
            width: 0,
        }
    }

    /// A session `deja show --team` read, with every turn: the session's metadata as
    /// the store has it (the project as the path on the machine it ran on, when known),
    /// its times from its turns, and a role the store names that this build does not
    /// know read as a note rather than dropped.
    pub fn from_team(s: TeamSession, terms: Vec<String>, focus: Option<u32>) -> SessionView {
        let team = Teammate::of(&s);
        let turns: Vec<Turn> = s
            .hits
            .into_iter()
            .map(|h| Turn { seq: h.seq, time: h.time, ..Turn::new(Role::parse(&h.role).unwrap_or(Role::Note), h.text) })
            .collect();
        let started = turns.iter().find_map(|t| t.time);
        let updated = s.updated.or_else(|| turns.iter().rev().find_map(|t| t.time));
        let meta = SessionMeta {
            harness: s.harness,
            id: s.id,
            title: s.title,
            project: Some(s.project_path.unwrap_or(s.project)),
            path: String::new(),
            started,
            updated,
            parent: None,
            kind: None,
            agent: None,
            machine: Some(s.machine),
            source_deleted: None,
            turns: turns.len() as u32,
        };
        let mut view = SessionView::new(meta, turns, terms, focus);
        view.team = Some(team);
        view
    }

    /// Lays the session out for `width` cells and a body of `height` rows, keeping the
    /// view where it was (or, the first time, opening at the focused match). Cheap when
    /// nothing changed.
    pub fn fit(&mut self, width: usize, height: usize) {
        if width == self.width && !self.rows.is_empty() {
            self.clamp(height);
            return;
        }
        let first = self.width == 0;
        let at_seq = self.rows.get(self.scroll).and_then(|r| r.seq);
        self.width = width;
        self.relayout();
        if first {
            self.open_at_focus(height);
        } else if let Some(seq) = at_seq {
            self.scroll = self.rows.iter().position(|r| r.seq == Some(seq)).unwrap_or(0);
        }
        self.clamp(height);
    }

    fn relayout(&mut self) {
        // A teammate's prompts are theirs, not the reader's: named by their author.
        let user = self.team.as_ref().map_or_else(|| "you".to_string(), |t| safe(&t.author));
        self.rows = layout(&self.turns, &self.terms, self.width.max(8), self.unfolded, &user);
        self.matches = self.rows.iter().enumerate().filter(|(_, r)| !find_terms(&r.text, &self.terms).is_empty()).map(|(i, _)| i).collect();
        if self.current.is_some_and(|c| c >= self.matches.len()) {
            self.current = None;
        }
    }

    fn open_at_focus(&mut self, height: usize) {
        let in_focus = |r: &Row| self.focus.is_some() && r.seq == self.focus;
        let pick = self.matches.iter().position(|&m| in_focus(&self.rows[m])).or(if self.matches.is_empty() { None } else { Some(0) });
        match pick {
            Some(i) => self.go_to_match(i, height),
            None => {
                if let Some(row) = self.rows.iter().position(in_focus) {
                    self.scroll = row;
                }
            }
        }
    }

    fn go_to_match(&mut self, i: usize, height: usize) {
        self.current = Some(i);
        // A third of the way down, so what led to the match shows above it.
        self.scroll = self.matches[i].saturating_sub(height / 3);
        self.clamp(height);
    }

    /// `n`: the next match, wrapping round to the first.
    pub fn next_match(&mut self, height: usize) {
        if self.matches.is_empty() {
            return;
        }
        let i = match self.current {
            Some(c) => (c + 1) % self.matches.len(),
            None => self.matches.iter().position(|&m| m >= self.scroll).unwrap_or(0),
        };
        self.go_to_match(i, height);
    }

    /// `N`: the previous match, wrapping round to the last.
    pub fn prev_match(&mut self, height: usize) {
        if self.matches.is_empty() {
            return;
        }
        let n = self.matches.len();
        let i = match self.current {
            Some(c) => (c + n - 1) % n,
            None => self.matches.iter().rposition(|&m| m < self.scroll).unwrap_or(n - 1),
        };
        self.go_to_match(i, height);
    }

    pub fn scroll_by(&mut self, delta: isize, height: usize) {
        self.scroll = self.scroll.saturating_add_signed(delta);
        self.clamp(height);
    }

    pub fn top(&mut self) {
        self.scroll = 0;
    }

    pub fn bottom(&mut self, height: usize) {
        self.scroll = usize::MAX;
        self.clamp(height);
    }

    /// `z`: every tool output whole, or folded again; the view stays on its turn.
    pub fn toggle_fold(&mut self, height: usize) {
        self.unfolded = !self.unfolded;
        let at_seq = self.rows.get(self.scroll).and_then(|r| r.seq);
        self.relayout();
        if let Some(seq) = at_seq {
            self.scroll = self.rows.iter().position(|r| r.seq == Some(seq)).unwrap_or(0);
        }
        self.clamp(height);
    }

    fn clamp(&mut self, height: usize) {
        self.scroll = self.scroll.min(self.rows.len().saturating_sub(height.max(1)));
    }

    /// "match 2 of 7", or what there is instead.
    pub fn match_label(&self) -> String {
        match (self.matches.len(), self.current) {
            (0, _) if self.terms.is_empty() => String::new(),
            (0, _) => "no match in the text".to_string(),
            (n, Some(c)) => format!("match {} of {n}", c + 1),
            (n, None) => format!("{n} matches"),
        }
    }

    /// The files the session touched, each once with every way it touched them,
    /// in the order first touched.
    pub fn files(&self) -> Vec<String> {
        files_touched(&self.turns)
    }
}

/// `[edit, read] src/pool.rs` lines for the files `turns` touched.
pub fn files_touched(turns: &[Turn]) -> Vec<String> {
    let mut seen: Vec<(String, Vec<&'static str>)> = Vec::new();
    let touches = turns
        .iter()
        .flat_map(|t| t.files.iter().map(|f| (f.path.as_str(), f.action.as_str())).chain(t.edit.iter().map(|e| (e.path.as_str(), "edit"))));
    for (path, action) in touches {
        match seen.iter_mut().find(|(p, _)| p == path) {
            Some((_, actions)) if !actions.contains(&action) => actions.push(action),
            Some(_) => {}
            None => seen.push((path.to_string(), vec![action])),
        }
    }
    seen.into_iter().map(|(p, a)| format!("[{}] {}", a.join(", "), safe(&p))).collect()
}

/// `turns` as rows of at most `width` cells, the user's turns headed `user` (`you`, or a
/// teammate's name).
pub fn layout(turns: &[Turn], terms: &[String], width: usize, unfolded: bool, user: &str) -> Vec<Row> {
    let mut out = Vec::new();
    for t in turns {
        let seq = Some(t.seq);
        let mut push = |kind: Kind, indent: &str, text: &str| {
            for row in wrap(text, width.saturating_sub(indent.len())) {
                out.push(Row { kind, text: format!("{indent}{row}"), seq });
            }
        };
        let time = t.time.and_then(|t| t.to_datetime()).map(|d| d.format(" · %Y-%m-%d %H:%M").to_string()).unwrap_or_default();
        let partial = if t.partial { " · partial (the answer was cut off)" } else { "" };
        match t.role {
            Role::User | Role::Assistant | Role::Reasoning | Role::Note => {
                let who = match t.role {
                    Role::User => user,
                    Role::Assistant => "assistant",
                    Role::Reasoning => "reasoning",
                    _ => "note",
                };
                push(Kind::Speaker, "", &format!("▍{who}{time}{partial}"));
                for line in safe(&t.text).lines() {
                    push(Kind::Text, "  ", line);
                }
            }
            Role::Summary => {
                push(Kind::Marker, "", &format!("═══ compaction: the harness summarised the turns before this{time} ═══"));
                fold(&safe(&t.text), terms, unfolded, &mut push, Kind::Text);
            }
            Role::ToolCall | Role::ToolOutput => {
                let tool = t.tool.as_ref();
                let name = tool.map_or(if t.role == Role::ToolCall { "tool" } else { "tool output" }, |x| x.name.as_str());
                let failed = tool.is_some_and(|x| x.is_error || x.exit.as_ref().is_some_and(|e| !e.succeeded()));
                let outcome = match tool.and_then(|x| x.exit.as_ref()) {
                    Some(e) if e.succeeded() => format!(" · {e} ✓"),
                    Some(e) => format!(" · {e} ✗"),
                    None if failed => " · failed ✗".to_string(),
                    None => String::new(),
                };
                push(if failed { Kind::ToolFailed } else { Kind::Tool }, "", &format!("▸ {}{outcome}{time}{partial}", safe(name)));
                if let Some(cmd) = tool.and_then(|x| x.command.as_deref()) {
                    for (i, line) in safe(cmd).lines().enumerate() {
                        push(Kind::Command, "  ", &format!("{}{line}", if i == 0 { "$ " } else { "  " }));
                    }
                }
                for f in &t.files {
                    push(Kind::File, "  ", &format!("[{}] {}", f.action.as_str(), safe(&f.path)));
                }
                if let Some(e) = &t.edit {
                    if !t.files.iter().any(|f| f.path == e.path) {
                        push(Kind::File, "  ", &format!("[edit] {}", safe(&e.path)));
                    }
                    diff(&safe(&e.old), e.new.as_deref().map(safe).as_deref(), &mut push);
                }
                fold(&safe(&t.text), terms, unfolded, &mut push, Kind::Output);
            }
        }
        out.push(Row { kind: Kind::Blank, text: String::new(), seq });
    }
    out
}

/// A tool's output (or a summary), cut to [`FOLD_LINES`] unless unfolded or holding a
/// match, which is never folded away.
fn fold(text: &str, terms: &[String], unfolded: bool, push: &mut impl FnMut(Kind, &str, &str), kind: Kind) {
    let lines: Vec<&str> = text.lines().collect();
    let whole = unfolded || lines.len() <= FOLD_LINES + 1 || lines.iter().any(|l| !find_terms(l, terms).is_empty());
    let shown = if whole { lines.len() } else { FOLD_LINES };
    for line in &lines[..shown] {
        push(kind, "  ", line);
    }
    if shown < lines.len() {
        push(Kind::Fold, "  ", &format!("… {} more lines (z shows them)", lines.len() - shown));
    }
}

/// An edit as the lines it removed and added, with two lines of context around each
/// change (`similar`'s line diff, as `deja install` shows its edits).
fn diff(old: &str, new: Option<&str>, push: &mut impl FnMut(Kind, &str, &str)) {
    let Some(new) = new else {
        for line in old.lines() {
            push(Kind::DiffOld, "  ", &format!("- {line}"));
        }
        return;
    };
    let d = similar::TextDiff::from_lines(old, new);
    for (i, group) in d.grouped_ops(2).iter().enumerate() {
        if i > 0 {
            push(Kind::DiffSame, "  ", "⋯");
        }
        for op in group {
            for change in d.iter_changes(op) {
                let line = change.value().trim_end_matches(['\n', '\r']);
                let (kind, sign) = match change.tag() {
                    similar::ChangeTag::Delete => (Kind::DiffOld, "- "),
                    similar::ChangeTag::Insert => (Kind::DiffNew, "+ "),
                    similar::ChangeTag::Equal => (Kind::DiffSame, "  "),
                };
                push(kind, "  ", &format!("{sign}{line}"));
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use deja_core::model::{Edit, ExitStatus, FileAction, FileTouch, ToolUse};

    pub(crate) fn meta() -> SessionMeta {
        SessionMeta {
            harness: "alpha".into(),
            id: "s1".into(),
            title: Some("pool sizing".into()),
            project: Some("/src/api".into()),
            path: "/h/s1.jsonl".into(),
            started: None,
            updated: None,
            parent: None,
            kind: None,
            agent: None,
            machine: None,
            source_deleted: None,
            turns: 0,
        }
    }

    fn turn(seq: u32, role: Role, text: &str) -> Turn {
        Turn { seq, ..Turn::new(role, text) }
    }

    fn command(seq: u32, cmd: &str, exit: i64, output: &str) -> Turn {
        let mut t = turn(seq, Role::ToolCall, output);
        t.tool = Some(ToolUse {
            name: "Bash".into(),
            command: Some(cmd.into()),
            exit: Some(ExitStatus::Code(exit)),
            is_error: false,
            call_id: None,
        });
        t
    }

    pub(crate) fn sample() -> Vec<Turn> {
        let mut edit = turn(3, Role::ToolCall, "");
        edit.tool = Some(ToolUse { name: "Edit".into(), command: None, exit: None, is_error: false, call_id: None });
        edit.files = vec![FileTouch { path: "src/pool.rs".into(), action: FileAction::Edit }];
        edit.edit = Some(Edit { path: "src/pool.rs".into(), old: "a\nsize = 10\nc\n".into(), new: Some("a\nsize = 40\nc\n".into()) });
        let long: String = (0..30).map(|i| format!("line {i}\n")).collect();
        vec![
            turn(0, Role::User, "why does the pool run out?"),
            turn(1, Role::Assistant, "Let me look at the pool settings."),
            command(2, "cargo test", 101, &long),
            edit,
            turn(4, Role::Summary, "Earlier: the pool was raised."),
            command(5, "grep pool src", 0, &format!("{long}pool found here\n")),
            turn(6, Role::Assistant, "The pool is now 40."),
        ]
    }

    #[test]
    fn tools_fold_their_output_show_exits_and_diff_their_edits() {
        let rows = layout(&sample(), &["pool".to_string()], 80, false, "you");
        let kinds = |k: Kind| rows.iter().filter(|r| r.kind == k).map(|r| r.text.clone()).collect::<Vec<_>>();
        assert!(kinds(Kind::ToolFailed).iter().any(|t| t.contains("Bash · exit 101 ✗")), "{rows:#?}");
        assert!(kinds(Kind::Tool).iter().any(|t| t.contains("exit 0 ✓")));
        assert!(kinds(Kind::Command).contains(&"  $ cargo test".to_string()));
        assert_eq!(kinds(Kind::DiffOld), ["  - size = 10"]);
        assert_eq!(kinds(Kind::DiffNew), ["  + size = 40"]);
        assert!(kinds(Kind::Marker).iter().any(|t| t.contains("compaction")));
        // The failing run's 30 lines fold; the grep's do not, since they hold a match.
        assert_eq!(kinds(Kind::Fold), ["  … 24 more lines (z shows them)"]);
        assert!(rows.iter().any(|r| r.text.contains("pool found here")));
        let unfolded = layout(&sample(), &[], 80, true, "you");
        assert!(unfolded.iter().all(|r| r.kind != Kind::Fold));
    }

    #[test]
    fn rows_fit_the_width_whatever_the_script() {
        let turns = vec![turn(0, Role::User, &"東京の天気 🦀 ".repeat(20))];
        for width in [8, 13, 40] {
            for r in layout(&turns, &[], width, false, "you") {
                assert!(super::super::text::width(&r.text) <= width, "{width}: {:?}", r.text);
            }
        }
    }

    #[test]
    fn opens_at_the_focused_match_and_n_walks_the_matches() {
        let mut v = SessionView::new(meta(), sample(), vec!["pool".into()], Some(6));
        v.fit(80, 10);
        let focused = v.current.expect("at a match");
        assert_eq!(v.rows[v.matches[focused]].seq, Some(6), "opened on the best-matching turn");
        assert!(v.scroll <= v.matches[focused] && v.matches[focused] < v.scroll + 10, "the match is in view");
        let n = v.matches.len();
        assert!(n >= 5, "{n}");
        v.next_match(10);
        assert_eq!(v.current, Some((focused + 1) % n));
        v.prev_match(10);
        v.prev_match(10);
        assert_eq!(v.current, Some((focused + n - 1) % n));
        for _ in 0..n {
            v.next_match(10);
            let row = v.matches[v.current.expect("current")];
            assert!(v.scroll <= row && row < v.scroll + 10, "match row {row} in view from {}", v.scroll);
        }
        assert!(v.match_label().starts_with("match "), "{}", v.match_label());
    }

    #[test]
    fn a_narrower_screen_keeps_the_view_on_its_turn() {
        let mut v = SessionView::new(meta(), sample(), vec!["pool".into()], Some(5));
        v.fit(80, 5);
        let seq = v.rows[v.scroll].seq;
        v.fit(20, 5);
        assert_eq!(v.rows[v.scroll].seq, seq);
        v.bottom(5);
        assert_eq!(v.scroll, v.rows.len() - 5);
        v.scroll_by(-1000, 5);
        assert_eq!(v.scroll, 0);
        v.toggle_fold(5);
        assert!(v.unfolded && v.rows.iter().all(|r| r.kind != Kind::Fold));
    }

    pub(crate) fn team_session() -> TeamSession {
        let hit = |seq: u32, role: &str, text: &str| deja_core::team::TeamHit {
            seq,
            role: role.into(),
            time: Some(deja_core::Timestamp(1_779_989_200_000 + i64::from(seq) * 60_000)),
            text: text.into(),
        };
        TeamSession {
            author: "alice".into(),
            machine: "laptop".into(),
            project: "github.com/org/app".into(),
            project_path: Some("/home/alice/app".into()),
            harness: "claude".into(),
            id: "bbbb0000".into(),
            title: Some("staging pool size".into()),
            updated: Some(deja_core::Timestamp(1_779_992_800_000)),
            hits: vec![
                hit(0, "user", "why is the staging pool so small?"),
                hit(1, "tool_call", "psql -c 'show max_connections'\n100"),
                hit(2, "assistant", &"Let me look. ".repeat(30)),
                hit(3, "assistant", "The staging pool size is forty connections now."),
                hit(4, "reviewer", "a role this build does not know"),
            ],
        }
    }

    #[test]
    fn a_team_session_reads_as_speech_by_role_and_opens_at_its_match() {
        let v = SessionView::from_team(team_session(), vec!["staging pool".into()], Some(3));
        let t = v.team.as_ref().expect("marked as the team's");
        assert_eq!((t.author.as_str(), t.machine.as_str(), t.key.as_str()), ("alice", "laptop", "laptop/claude:bbbb0000"));
        assert_eq!(t.show_command(), "deja show --team laptop/claude:bbbb0000");
        assert_eq!(v.meta.project.as_deref(), Some("/home/alice/app"), "the path on the machine it ran on");
        assert_eq!(v.meta.machine.as_deref(), Some("laptop"));
        assert_eq!(v.meta.started, Some(deja_core::Timestamp(1_779_989_200_000)), "from its first turn");
        assert_eq!(v.meta.updated, Some(deja_core::Timestamp(1_779_992_800_000)));
        let roles: Vec<Role> = v.turns.iter().map(|t| t.role).collect();
        assert_eq!(
            roles,
            [Role::User, Role::ToolCall, Role::Assistant, Role::Assistant, Role::Note],
            "an unknown role is a note, not dropped"
        );
        let mut v = v;
        v.fit(40, 6);
        let at = v.matches[v.current.expect("opened at a match")];
        assert_eq!(v.rows[at].seq, Some(3), "on the focused turn");
        assert!(v.scroll <= at && at < v.scroll + 6, "in view");
        assert!(v.rows.iter().any(|r| r.kind == Kind::Speaker && r.text.starts_with("▍alice ·")), "the author's prompts: {:?}", v.rows);
        assert!(!v.rows.iter().any(|r| r.text.starts_with("▍you")), "not the reader's: {:?}", v.rows);
        v.next_match(6);
        assert_eq!(v.rows[v.matches[v.current.expect("moved")]].seq, Some(0), "n wraps round to the first");
    }

    #[test]
    fn files_are_listed_once_with_every_action() {
        let mut turns = sample();
        turns[2].files = vec![FileTouch { path: "src/pool.rs".into(), action: FileAction::Read }];
        assert_eq!(files_touched(&turns), ["[read, edit] src/pool.rs"]);
    }
}

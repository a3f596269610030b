//! Drawing the screen from [`App`] with ratatui: the tabs and query line, the results
//! and the preview, the session view, the pictures, the boxes over them and the status
//! line. Everything from history goes through [`safe`] first — the team store's
//! sessions too, which are someone else's history and are framed as such wherever they
//! show; with `NO_COLOR` set, emphasis is bold, reversed and underlined text instead of
//! colour.

use deja_core::index::search::Hit;
use deja_core::team::TeamSession;
use deja_core::Timestamp;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use super::app::{App, Overlay, Scope, Screen};
use super::pictures;
use super::session::{Kind, SessionView, Teammate};
use super::text::{find_terms, fit, pad, safe, width, wrap};

/// Colours or none (`NO_COLOR`).
#[derive(Debug, Clone, Copy)]
pub struct Theme {
    pub color: bool,
}

impl Theme {
    /// Colour unless `NO_COLOR` is set to anything but the empty string (no-color.org).
    pub fn from_env() -> Theme {
        Theme { color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) }
    }

    fn fg(self, c: Color) -> Style {
        if self.color {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    }

    fn dim(self) -> Style {
        if self.color {
            Style::default().fg(Color::DarkGray)
        } else {
            Style::default()
        }
    }

    fn hit(self) -> Style {
        if self.color {
            Style::default().fg(Color::Black).bg(Color::Yellow).add_modifier(Modifier::BOLD)
        } else {
            Style::default().add_modifier(Modifier::BOLD | Modifier::UNDERLINED)
        }
    }

    fn selected(self) -> Style {
        if self.color {
            Style::default().bg(Color::Blue).fg(Color::White).add_modifier(Modifier::BOLD)
        } else {
            Style::default().add_modifier(Modifier::REVERSED)
        }
    }

    fn bold(self) -> Style {
        Style::default().add_modifier(Modifier::BOLD)
    }
}

/// Narrower or lower than this, the screen only says so (and still takes keys).
pub const MIN_WIDTH: u16 = 20;
pub const MIN_HEIGHT: u16 = 5;

/// Draws the whole screen.
pub fn draw(f: &mut Frame, app: &mut App, theme: Theme, now: Timestamp) {
    let area = f.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let msg = fit(if area.width >= 16 { "window too small" } else { "too small" }, area.width as usize);
        f.render_widget(Paragraph::new(msg), area);
        return;
    }
    let [body, status] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(area);
    match &app.screen {
        Screen::Search => search(f, app, body, theme, now),
        Screen::Session(_) => session(f, app, body, theme),
        Screen::Pictures { .. } => pictures_view(f, app, body, theme),
    }
    status_line(f, app, status, theme);
    if let Some(o) = &app.overlay {
        overlay(f, o, area, theme);
    }
}

fn search(f: &mut Frame, app: &mut App, area: Rect, theme: Theme, now: Timestamp) {
    let [tabs, line, info, rest] =
        Layout::vertical([Constraint::Length(1), Constraint::Length(1), Constraint::Length(1), Constraint::Min(0)]).areas(area);
    // Tabs, the index's note on the right.
    let mut spans: Vec<Span> = Vec::new();
    for (i, s) in app.tabs().iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" │ ", theme.dim()));
        }
        let label = if *s == Scope::Here && app.here.is_none() { "This project (unknown)" } else { s.label() };
        let style = if *s == app.scope { theme.selected() } else { Style::default() };
        spans.push(Span::styled(format!(" {label} "), style));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), tabs);
    if let Some(note) = &app.index_note {
        let used: usize = app.tabs().iter().map(|s| s.label().len() + 5).sum();
        let room = (tabs.width as usize).saturating_sub(used + 1);
        if room > 8 {
            let text = fit(note, room);
            let w = width(&text) as u16;
            f.render_widget(Paragraph::new(Span::styled(text, theme.dim())), Rect { x: tabs.x + tabs.width - w, width: w, ..tabs });
        }
    }
    // The query line, scrolled so the cursor shows.
    let prompt = "› ";
    let before = &app.line.text[..app.line.cursor];
    let room = (line.width as usize).saturating_sub(width(prompt) + 1).max(1);
    let mut shown_from = 0;
    while width(&before[shown_from..]) > room {
        shown_from += before[shown_from..].chars().next().map_or(1, char::len_utf8);
    }
    let visible = &app.line.text[shown_from..];
    let hint = if app.line.text.is_empty() { "type to search · filters: harness: project: since: role: file: · ? help" } else { "" };
    f.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(prompt, theme.fg(Color::Cyan).add_modifier(Modifier::BOLD)),
            Span::raw(visible.to_string()),
            Span::styled(hint, theme.dim()),
        ])),
        line,
    );
    let cursor_x = line.x + (width(prompt) + width(&before[shown_from..])) as u16;
    f.set_cursor_position((cursor_x.min(line.x + line.width.saturating_sub(1)), line.y));
    // What the answer was.
    let info_text = info_line(app);
    let style = if app.error.is_some() || !app.problems.is_empty() { theme.fg(Color::Red) } else { theme.dim() };
    f.render_widget(Paragraph::new(Span::styled(fit(&info_text, info.width as usize), style)), info);
    if rest.height == 0 {
        return;
    }
    let wide = rest.width >= 100;
    let (list, preview) = if wide {
        let [a, b] = Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(rest);
        (a, b)
    } else if rest.height >= 10 {
        let [a, b] = Layout::vertical([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(rest);
        (a, b)
    } else {
        (rest, Rect::default())
    };
    if app.scope == Scope::Team {
        team_results(f, app, list, theme, now);
    } else {
        results(f, app, list, theme, now);
    }
    if preview.height > 0 && preview.width > 0 {
        preview_pane(f, app, preview, theme, wide);
    }
}

fn info_line(app: &App) -> String {
    // An error or the line's problems first, on every tab.
    if app.scope == Scope::Team && app.error.is_none() && app.problems.is_empty() {
        return team_info_line(app);
    }
    // Whatever the last answer was (an empty one and an error too), a search in flight shows.
    match (answer_line(app), app.searching) {
        (None, false) => String::new(),
        (None, true) => "searching…".to_string(),
        (Some(a), false) => a,
        (Some(a), true) => format!("{a} · searching…"),
    }
}

/// What the last answer was — an error, the line's problems, or the tier and counts —
/// if there was one.
fn answer_line(app: &App) -> Option<String> {
    if let Some(e) = &app.error {
        return Some(e.clone());
    }
    if !app.problems.is_empty() {
        return Some(app.problems.join(" · "));
    }
    let r = app.results.as_ref()?;
    Some(counts_line(app, r))
}

/// The tier and counts of answer `r`, or why it is empty.
fn counts_line(app: &App, r: &deja_core::index::search::SearchResults) -> String {
    let scope = match app.scope {
        Scope::Here => format!(" in {}", app.here.as_deref().map(safe).unwrap_or_default()),
        Scope::All | Scope::Team => String::new(),
        Scope::Kept => " kept after deletion".to_string(),
    };
    if r.hits.is_empty() && app.answered.trim().is_empty() {
        return match app.scope {
            Scope::Here => format!("no session{scope} is indexed; Tab shows all projects"),
            Scope::All => "no session is indexed yet".to_string(),
            Scope::Kept => "no session's source was deleted: the harnesses still hold all of them".to_string(),
            // Answered by `team_info_line` above.
            Scope::Team => String::new(),
        };
    }
    if r.hits.is_empty() {
        let wider = match app.scope {
            Scope::Here => " · Tab: all projects",
            Scope::All | Scope::Team => "",
            Scope::Kept => " · ⇧Tab: all projects",
        };
        return format!("nothing matched{scope} (tried {}){wider}", deja_core::index::search::TIER_NAMES);
    }
    let what = if app.answered.trim().is_empty() { "recent".to_string() } else { format!("{} match", r.tier.as_str()) };
    let more = if r.capped { "+" } else { "" };
    let n = r.total.max(r.hits.len());
    let mut s = format!("{what} · {n}{more} session{}{scope}", if n == 1 && more.is_empty() { "" } else { "s" });
    let listed = |w: &[String]| safe(&w.join(", "));
    if !r.dropped.is_empty() {
        s.push_str(&format!(" · best lack: {}", listed(&r.dropped)));
    }
    if !r.ignored.is_empty() {
        s.push_str(&format!(" · not needed: {}", listed(&r.ignored)));
    }
    s
}

/// The Team tab's info line: what the team store answered, framed as other people's
/// history, with the filters it could not apply.
fn team_info_line(app: &App) -> String {
    let Some(r) = &app.team_results else {
        return if app.searching { "asking the team store…".to_string() } else { String::new() };
    };
    let words = deja_core::team::TeamQuery { query: super::query::parse(&app.answered, Timestamp(0)).text, ..Default::default() };
    let mut s = if r.sessions.is_empty() && words.terms().0.is_empty() {
        "type words to search the team store: other machines' pushed history".to_string()
    } else if r.sessions.is_empty() {
        format!("nothing matched in the team store (tried {})", deja_core::index::search::TIER_NAMES)
    } else {
        let n = r.sessions.len();
        format!(
            "{} match · {n} session{} in the team store · teammates' history, quoted: not instructions",
            safe(&r.tier),
            if n == 1 { "" } else { "s" }
        )
    };
    for u in &app.unapplied {
        s.push_str(&format!(" · {}", safe(u)));
    }
    if app.searching {
        s.push_str(" · asking the team store…");
    }
    s
}

/// `5m`, `3h`, `2d`, `6w`, `1y`: how long ago, in at most three characters.
pub fn age(now: Timestamp, t: Option<Timestamp>) -> String {
    let Some(t) = t else { return "-".into() };
    let s = (now.0 - t.0).max(0) / 1000;
    match s {
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3600),
        s if s < 14 * 86_400 => format!("{}d", s / 86_400),
        s if s < 365 * 86_400 => format!("{}w", s / (7 * 86_400)),
        s => format!("{}y", s / (365 * 86_400)),
    }
}

/// The last two parts of a project path: enough to tell projects apart in a column.
fn short_project(p: Option<&str>) -> String {
    let Some(p) = p.filter(|p| !p.is_empty()) else { return "-".into() };
    let parts: Vec<&str> = p.trim_end_matches(['/', '\\']).rsplit(['/', '\\']).take(2).collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}

/// Moves the list's window only as far as keeps the selection in view, `h` rows high.
fn follow_selection(app: &mut App, h: usize) {
    if app.selected < app.list_top {
        app.list_top = app.selected;
    } else if app.selected >= app.list_top + h {
        app.list_top = app.selected + 1 - h;
    }
}

fn results(f: &mut Frame, app: &mut App, area: Rect, theme: Theme, now: Timestamp) {
    let h = area.height as usize;
    if app.hits().is_empty() || h == 0 {
        return;
    }
    follow_selection(app, h);
    let top = app.list_top;
    let hits = app.hits();
    let w = area.width as usize;
    let harness_w = 10.min(w / 6);
    let project_w = 18.min(w / 5);
    // A tier column only when some session was found by a looser tier than exact.
    let tier_w = if hits.iter().any(|h| h.tier != deja_core::index::search::Tier::Exact) { 10 } else { 0 };
    // " title harness project age tier": a space before each column.
    let title_w = w.saturating_sub(1 + (harness_w + 1) + (project_w + 1) + (4 + 1) + tier_w).max(4);
    let mut lines: Vec<Line> = Vec::new();
    for (i, hit) in hits.iter().enumerate().skip(top).take(h) {
        let s = &hit.session;
        let title = safe(s.title.as_deref().unwrap_or("(untitled)"));
        let tier = match hit.tier {
            deja_core::index::search::Tier::Exact => "",
            t => t.as_str(),
        };
        let row = format!(
            " {} {} {} {}{}",
            pad(&title, title_w),
            pad(&safe(&s.harness), harness_w),
            pad(&safe(&short_project(s.project.as_deref())), project_w),
            pad(&age(now, s.updated.or(s.started)), 4),
            if tier_w > 0 { format!(" {}", pad(tier, tier_w - 1)) } else { String::new() },
        );
        let style = if i == app.selected { theme.selected() } else { Style::default() };
        lines.push(Line::from(Span::styled(fit(&row, w), style)));
    }
    f.render_widget(Paragraph::new(lines), area);
}

/// The team store's sessions: title, harness, who ran it where (in place of the
/// project: a teammate's path means little here), age, and the tier the store answered
/// with (one for the whole answer, shown on every row so no row reads as exact when
/// it was found fuzzily).
fn team_results(f: &mut Frame, app: &mut App, area: Rect, theme: Theme, now: Timestamp) {
    let h = area.height as usize;
    if app.team_sessions().is_empty() || h == 0 {
        return;
    }
    follow_selection(app, h);
    let top = app.list_top;
    let sessions = app.team_sessions();
    let tier = app.team_results.as_ref().map_or(String::new(), |r| safe(&r.tier));
    let w = area.width as usize;
    let harness_w = 10.min(w / 6);
    let who_w = 22.min(w / 4);
    let tier_w = 10;
    let title_w = w.saturating_sub(1 + (harness_w + 1) + (who_w + 1) + (4 + 1) + tier_w).max(4);
    let mut lines: Vec<Line> = Vec::new();
    for (i, s) in sessions.iter().enumerate().skip(top).take(h) {
        let row = format!(
            " {} {} {} {} {}",
            pad(&safe(s.title.as_deref().unwrap_or("(untitled)")), title_w),
            pad(&safe(&s.harness), harness_w),
            pad(&who(s), who_w),
            pad(&age(now, s.updated), 4),
            pad(&tier, tier_w - 1),
        );
        let style = if i == app.selected { theme.selected() } else { Style::default() };
        lines.push(Line::from(Span::styled(fit(&row, w), style)));
    }
    f.render_widget(Paragraph::new(lines), area);
}

/// `author@machine`, as every surface labels a team session.
fn who(s: &TeamSession) -> String {
    format!("{}@{}", safe(&s.author), safe(&s.machine))
}

/// A line of history with the query's words highlighted.
fn highlighted(text: &str, terms: &[String], base: Style, theme: Theme) -> Line<'static> {
    let mut spans = Vec::new();
    let mut at = 0;
    for (s, e) in find_terms(text, terms) {
        if s > at {
            spans.push(Span::styled(text[at..s].to_string(), base));
        }
        spans.push(Span::styled(text[s..e].to_string(), base.patch(theme.hit())));
        at = e;
    }
    if at < text.len() {
        spans.push(Span::styled(text[at..].to_string(), base));
    }
    Line::from(spans)
}

fn preview_pane(f: &mut Frame, app: &App, area: Rect, theme: Theme, wide: bool) {
    let block = if wide {
        Block::default().borders(Borders::LEFT).border_style(theme.dim())
    } else {
        Block::default().borders(Borders::TOP).border_style(theme.dim())
    };
    let inner = block.inner(area);
    f.render_widget(block, area);
    if app.scope == Scope::Team {
        if let Some(s) = app.selected_team() {
            team_preview(s, &app.terms(), inner, f, theme);
        }
        return;
    }
    let Some(hit) = app.hits().get(app.selected) else { return };
    let w = (inner.width as usize).saturating_sub(1).max(1);
    let terms = app.terms();
    let mut lines: Vec<Line> = vec![Line::styled(fit(&safe(hit.session.title.as_deref().unwrap_or("(untitled)")), w), theme.bold())];
    let s = &hit.session;
    let when = crate::output::short_time(s.updated.or(s.started));
    lines
        .push(Line::styled(fit(&format!("{} · {} · {when}", safe(&s.harness), safe(s.project.as_deref().unwrap_or("-"))), w), theme.dim()));
    lines.push(Line::raw(""));
    preview_lines(hit, &terms, w, theme, &mut lines);
    f.render_widget(Paragraph::new(lines), inner);
}

/// A team session's quoted turns (the store's snippets around the match), under a line
/// that says whose history it is.
fn team_preview(s: &TeamSession, terms: &[String], inner: Rect, f: &mut Frame, theme: Theme) {
    let w = (inner.width as usize).saturating_sub(1).max(1);
    let mut lines: Vec<Line> = vec![Line::styled(fit(&safe(s.title.as_deref().unwrap_or("(untitled)")), w), theme.bold())];
    let project = match &s.project_path {
        Some(p) if *p != s.project => format!("{} ({})", safe(&s.project), safe(p)),
        _ => safe(&s.project),
    };
    let when = crate::output::short_time(s.updated);
    lines.push(Line::styled(fit(&format!("{} · {} · {project} · {when}", who(s), safe(&s.harness)), w), theme.dim()));
    lines.push(Line::styled(fit("a teammate's history from the team store: quoted, not instructions", w), theme.fg(Color::Yellow)));
    lines.push(Line::raw(""));
    for h in &s.hits {
        let when = h.time.map(|t| format!(" · {}", crate::output::short_time(Some(t)))).unwrap_or_default();
        lines.push(Line::styled(fit(&format!("▍{}{when}", safe(&h.role)), w), theme.fg(Color::Cyan)));
        let text = safe(&h.text);
        for line in text.lines().filter(|l| !l.trim().is_empty()).take(6) {
            for row in wrap(line, w).into_iter().take(4) {
                lines.push(highlighted(&row, terms, Style::default(), theme));
            }
        }
        lines.push(Line::raw(""));
    }
    if s.hits.is_empty() {
        lines.push(Line::styled("Enter reads the whole session", theme.dim()));
    }
    f.render_widget(Paragraph::new(lines), inner);
}

fn preview_lines(hit: &Hit, terms: &[String], w: usize, theme: Theme, out: &mut Vec<Line<'static>>) {
    if hit.turns.is_empty() {
        for sn in &hit.snippets {
            for row in wrap(&safe(sn).replace('\n', " "), w) {
                out.push(highlighted(&row, terms, Style::default(), theme));
            }
        }
        if hit.snippets.is_empty() {
            out.push(Line::styled("Enter reads the whole session", theme.dim()));
        }
        return;
    }
    for t in hit.turns.iter().take(3) {
        let label = match t.tool.as_ref() {
            Some(tool) => format!("▸ {}{}", safe(&tool.name), tool.exit.as_ref().map(|e| format!(" · {e}")).unwrap_or_default()),
            None => format!("▍{}", if t.role == deja_core::Role::User { "you" } else { t.role.as_str() }),
        };
        out.push(Line::styled(label, theme.fg(Color::Cyan)));
        if let Some(cmd) = t.tool.as_ref().and_then(|x| x.command.as_deref()) {
            out.push(highlighted(&fit(&format!("$ {}", safe(cmd).replace('\n', " ")), w), terms, theme.fg(Color::Green), theme));
        }
        // Around the first match: the lines that hold one, and a little before.
        let text = safe(&t.text);
        let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let first = all.iter().position(|l| !find_terms(l, terms).is_empty()).unwrap_or(0);
        for line in all.iter().skip(first.saturating_sub(1)).take(6) {
            for row in wrap(line, w).into_iter().take(3) {
                out.push(highlighted(&row, terms, Style::default(), theme));
            }
        }
        out.push(Line::raw(""));
    }
}

fn session(f: &mut Frame, app: &mut App, area: Rect, theme: Theme) {
    let terms = app.terms();
    let Screen::Session(view) = &mut app.screen else { return };
    let Some(v) = view else {
        f.render_widget(Paragraph::new(Span::styled("reading the session…", theme.dim())), area);
        return;
    };
    let header = header_lines(v, area.width as usize, theme);
    let hh = (header.len() as u16).min(area.height.saturating_sub(1));
    let [top, body] = Layout::vertical([Constraint::Length(hh), Constraint::Min(0)]).areas(area);
    f.render_widget(Paragraph::new(header), top);
    let h = body.height as usize;
    app.body_height = h.max(1);
    let Screen::Session(Some(v)) = &mut app.screen else { return };
    v.fit(body.width as usize, h);
    let current_row = v.current.and_then(|c| v.matches.get(c).copied());
    let mut lines = Vec::new();
    for (i, row) in v.rows.iter().enumerate().skip(v.scroll).take(h) {
        let base = match row.kind {
            Kind::Speaker => theme.fg(Color::Cyan).add_modifier(Modifier::BOLD),
            Kind::Tool => theme.fg(Color::Blue),
            Kind::ToolFailed => theme.fg(Color::Red).add_modifier(Modifier::BOLD),
            Kind::Command => theme.fg(Color::Green),
            Kind::Output | Kind::Fold | Kind::DiffSame => theme.dim(),
            Kind::File => theme.fg(Color::Magenta),
            Kind::DiffOld => theme.fg(Color::Red),
            Kind::DiffNew => theme.fg(Color::Green),
            Kind::Marker => theme.fg(Color::Yellow).add_modifier(Modifier::BOLD),
            Kind::Text | Kind::Blank => Style::default(),
        };
        let base = if Some(i) == current_row { base.add_modifier(Modifier::UNDERLINED) } else { base };
        lines.push(highlighted(&row.text, &terms, base, theme));
    }
    f.render_widget(Paragraph::new(lines), body);
}

/// Title, project, harness, times, what it is, and the resume command.
fn header_lines(v: &SessionView, w: usize, theme: Theme) -> Vec<Line<'static>> {
    if let Some(t) = &v.team {
        return team_header_lines(v, t, w, theme);
    }
    let m = &v.meta;
    let mut out =
        vec![Line::styled(fit(&format!("{}  [{}]", safe(m.title.as_deref().unwrap_or("(untitled)")), safe(&m.harness)), w), theme.bold())];
    let when = format!("{} → {}", crate::output::short_time(m.started), crate::output::short_time(m.updated));
    out.push(Line::raw(fit(&format!("{} · {when} · {} turns", safe(m.project.as_deref().unwrap_or("-")), v.turns.len()), w)));
    if let Some(p) = &m.parent {
        let what = m.kind.as_deref().map(safe).unwrap_or_else(|| "sub-agent".to_string());
        out.push(Line::styled(fit(&format!("⤷ {what} run of session {}", safe(p)), w), theme.fg(Color::Yellow)));
    }
    if !v.children.is_empty() {
        let n = v.children.len();
        let runs = format!("⤵ started {n} sub-agent run{}: {}", if n == 1 { "" } else { "s" }, v.children.join(" · "));
        out.push(Line::styled(fit(&runs, w), theme.fg(Color::Yellow)));
    }
    let resume = match deja_core::format::resume_for(m) {
        Ok(r) => format!("↻ {}", safe(&r.command)),
        Err(why) => format!("↻ - ({})", safe(&why)),
    };
    out.push(Line::styled(fit(&resume, w), theme.fg(Color::Green)));
    // Its harness deleted it: resuming needs the file back first.
    match deja_core::restore::offer(m) {
        Some(Ok(cmd)) => {
            out.push(Line::styled(fit(&format!("⟲ deleted by its harness, kept by deja: {}", safe(&cmd)), w), theme.fg(Color::Yellow)))
        }
        Some(Err(why)) => {
            out.push(Line::styled(fit(&format!("⟲ deleted by its harness, kept by deja (not restorable: {})", safe(&why)), w), theme.dim()))
        }
        None => {}
    }
    out.push(Line::styled("─".repeat(w), theme.dim()));
    out
}

/// A team session's header: title and harness; who ran it on which machine, the
/// project (its key and the path there), the times; that it is a teammate's history;
/// and, where the resume command would be, why it is not here and how to read it.
fn team_header_lines(v: &SessionView, t: &Teammate, w: usize, theme: Theme) -> Vec<Line<'static>> {
    let m = &v.meta;
    let (author, machine, show, project) = (safe(&t.author), safe(&t.machine), safe(&t.show_command()), safe(&t.project));
    let mut out =
        vec![Line::styled(fit(&format!("{}  [{}]", safe(m.title.as_deref().unwrap_or("(untitled)")), safe(&m.harness)), w), theme.bold())];
    let path = m.project.as_deref().filter(|p| *p != project).map(|p| format!(" ({} there)", safe(p))).unwrap_or_default();
    out.push(Line::raw(fit(&format!("{author}@{machine} · {project}{path}"), w)));
    let when = format!("{} → {}", crate::output::short_time(m.started), crate::output::short_time(m.updated));
    let n = v.turns.len();
    out.push(Line::raw(fit(&format!("{when} · {n} turn{}", if n == 1 { "" } else { "s" }), w)));
    out.push(Line::styled(
        fit("⚠ a teammate's history from the team store: quoted as written, not instructions", w),
        theme.fg(Color::Yellow),
    ));
    out.push(Line::styled(fit(&format!("↻ - (it ran on {machine}: resume it there) · y copies {show}"), w), theme.dim()));
    out.push(Line::styled("─".repeat(w), theme.dim()));
    out
}

fn pictures_view(f: &mut Frame, app: &App, area: Rect, theme: Theme) {
    let p = match &app.pictures {
        None => {
            f.render_widget(Paragraph::new(Span::styled("counting…", theme.dim())), area);
            return;
        }
        Some(Err(e)) => {
            f.render_widget(Paragraph::new(fit(&format!("could not read the index: {e}"), area.width as usize)), area);
            return;
        }
        Some(Ok(p)) => p,
    };
    let (chart, text) = if area.width >= 100 {
        let [a, b] = Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(area);
        (a, b)
    } else {
        let [a, b] = Layout::vertical([Constraint::Length(area.height.min(12) / 2 + 2), Constraint::Min(0)]).areas(area);
        (a, b)
    };
    pictures::draw_bars(p, Rect { height: chart.height.saturating_sub(1), ..chart }, f.buffer_mut(), theme.color);
    let lines: Vec<Line> = pictures::lines(p, text.width.saturating_sub(1) as usize)
        .into_iter()
        .map(|(l, series)| match series {
            Some(i) => {
                let (style, glyph) = pictures::series_style(i, theme.color);
                Line::from(vec![Span::styled(format!("{glyph}{glyph}"), style), Span::raw(l)])
            }
            None => Line::raw(l),
        })
        .collect();
    f.render_widget(Paragraph::new(lines), Rect { x: text.x + u16::from(area.width >= 100), ..text });
}

fn status_line(f: &mut Frame, app: &App, area: Rect, theme: Theme) {
    let keys = match &app.screen {
        // The keys that matter most first: a narrow screen cuts the end.
        Screen::Search => "Enter read · ↑↓ move · Tab scope · F1 help · Esc quit · ^R resume · ^O hand off · ^Y copy · ^P pictures",
        Screen::Session(_) => "n/N match · q back · ? help · r resume · o hand off · y copy · c digest · f files · s pictures · z unfold",
        Screen::Pictures { .. } => "s or Esc back · ? help",
    };
    let text = match (&app.message, &app.screen) {
        (Some(m), _) => m.clone(),
        (None, Screen::Session(Some(v))) if !v.match_label().is_empty() => format!("{} · {keys}", v.match_label()),
        _ => keys.to_string(),
    };
    let style = if app.message.is_some() { theme.fg(Color::Yellow) } else { theme.dim() };
    f.render_widget(Paragraph::new(Span::styled(fit(&text, area.width as usize), style)), area);
}

/// The help text: every key, by screen.
const HELP: &[&str] = &[
    "Search screen — type to search; the list follows as you type.",
    "  ↑ ↓ PgUp PgDn  choose a session      Enter  read it",
    "  Tab ⇧Tab       this project · all projects · kept after deletion · team",
    "  ^R resume  ^O hand off  ^Y copy the resume command  ^G digest  ^F files",
    "  ^P or F2  pictures of the history    ^U clear  ^W delete a word",
    "  Esc  clear the line, then quit       ^C  quit",
    "Session view:",
    "  n N  next/previous match   ↑ ↓ j k PgUp PgDn g G  scroll   z  unfold outputs",
    "  r resume in its harness (asks first)   o hand off to another harness",
    "  y copy the resume command   c digest   f files touched   s pictures",
    "  q or Esc  back to the results",
    "Team tab (with a team store): other machines' sessions, as author@machine;",
    "  Enter reads one   ^Y or y copies its `deja show --team …` command;",
    "  resume and hand off run where it ran; file: is not applied there.",
];

/// The help box's lines: the keys, then every filter the line reads.
fn help_lines() -> Vec<String> {
    let mut out: Vec<String> = HELP.iter().map(|s| s.to_string()).collect();
    out.push("Filters typed in the line:".into());
    out.extend(super::query::FILTERS.iter().map(|(name, what)| format!("  {name:<9} {what}")));
    out.push(String::new());
    out.push("Press any key to close.".into());
    out
}

fn overlay(f: &mut Frame, o: &Overlay, area: Rect, theme: Theme) {
    let (title, lines, scroll, selected): (String, Vec<String>, usize, Option<usize>) = match o {
        Overlay::Help => ("Keys".into(), help_lines(), 0, None),
        Overlay::Confirm { question, .. } => ("Resume".into(), question.clone(), 0, None),
        Overlay::Text { title, lines, scroll } => (title.clone(), lines.clone(), *scroll, None),
        Overlay::Pick { targets, selected, .. } => {
            let mut lines = vec!["Hand this session to (Enter starts it, Esc goes back):".to_string()];
            lines.extend(targets.iter().map(|(id, name)| format!("  {name} ({id})")));
            ("Hand off".into(), lines, 0, Some(*selected + 1))
        }
    };
    let widest = lines.iter().map(|l| width(l)).max().unwrap_or(0).max(width(&title) + 4);
    let w = (widest as u16 + 4).min(area.width);
    // Text to read (a digest) wraps to the box rather than being cut.
    let lines: Vec<String> =
        if matches!(o, Overlay::Text { .. }) { lines.iter().flat_map(|l| wrap(l, w.saturating_sub(4) as usize)).collect() } else { lines };
    let h = (lines.len() as u16 + 2).min(area.height);
    let rect = Rect { x: area.x + (area.width - w) / 2, y: area.y + (area.height - h) / 2, width: w, height: h };
    let inner_w = w.saturating_sub(4) as usize;
    let body: Vec<Line> = lines
        .iter()
        .enumerate()
        .skip(scroll)
        .map(|(i, l)| {
            let style = if Some(i) == selected { theme.selected() } else { Style::default() };
            Line::styled(fit(l, inner_w), style)
        })
        .collect();
    f.render_widget(Clear, rect);
    let block = Block::default().borders(Borders::ALL).title(format!(" {} ", fit(&title, inner_w))).border_style(theme.fg(Color::Cyan));
    f.render_widget(Paragraph::new(body).block(block.padding(ratatui::widgets::Padding::horizontal(1))), rect);
}

//! The screen drawn on ratatui's test backend: what a person sees for a query, a
//! session, the pictures and the boxes, at ordinary and tiny sizes, in CJK and emoji,
//! with and without colour, and on the Team tab.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent};
use deja_core::index::search::{Hit, SearchResults, Tier};
use deja_core::model::{SessionMeta, Turn};
use deja_core::team::{TeamResults, TeamSession};
use deja_core::{Role, Timestamp};
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Modifier;
use ratatui::Terminal;

use super::app::{App, Ask, Overlay, Screen};
use super::draw::{draw, Theme};
use super::pictures::Pictures;
use super::session::SessionView;

const NOW: Timestamp = Timestamp(1_780_000_000_000);

fn meta(id: &str, title: &str, harness: &str, project: &str) -> SessionMeta {
    SessionMeta {
        harness: harness.into(),
        id: id.into(),
        title: Some(title.into()),
        project: Some(project.into()),
        path: format!("/h/{id}.jsonl"),
        started: Some(Timestamp(NOW.0 - 3 * 86_400_000)),
        updated: Some(Timestamp(NOW.0 - 2 * 3_600_000)),
        parent: None,
        kind: None,
        agent: None,
        machine: None,
        source_deleted: None,
        turns: 4,
    }
}

fn hit(m: SessionMeta, text: &str) -> Hit {
    Hit {
        session: m,
        tier: Tier::Exact,
        score: 1.0,
        snippets: Vec::new(),
        turns: vec![Turn { seq: 1, ..Turn::new(Role::Assistant, text) }],
    }
}

fn answered(app: &mut App, line: &str, hits: Vec<Hit>) {
    let t0 = Instant::now();
    app.start(None, t0);
    let (n, _) = app.take_search(t0, NOW).expect("a search is due");
    let r = SearchResults::listed(hits);
    app.answer(n, line.into(), Ok(r));
}

fn render(app: &mut App, w: u16, h: u16, color: bool) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("test terminal");
    t.draw(|f| draw(f, app, Theme { color }, NOW)).expect("draw");
    t.backend().buffer().clone()
}

/// The buffer's rows as text; a wide character's second cell is skipped, so a row
/// reads as the terminal shows it.
fn rows(b: &Buffer) -> Vec<String> {
    let a = b.area;
    (0..a.height)
        .map(|y| {
            let mut s = String::new();
            let mut skip = 0;
            for x in 0..a.width {
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                let sym = b[(x, y)].symbol();
                s.push_str(sym);
                skip = super::text::width(sym).saturating_sub(1);
            }
            s
        })
        .collect()
}

fn screen(b: &Buffer) -> String {
    rows(b).join("\n")
}

fn sample_app() -> App {
    let mut app = App::new("pgbouncer", Some("/src/api".into()), Vec::new());
    let hits = vec![
        hit(meta("a1", "pgbouncer refused connections", "alpha", "/src/api"), "The pgbouncer pool was full.\nRaised it to 40."),
        hit(meta("b2", "東京の天気とデプロイ 🦀", "beta", "/src/日本"), "pgbouncer 設定を変更しました 🎉"),
    ];
    answered(&mut app, "pgbouncer", hits);
    app
}

#[test]
fn the_search_screen_shows_tabs_line_counts_results_preview_and_keys() {
    let mut app = sample_app();
    let b = render(&mut app, 120, 20, true);
    let s = screen(&b);
    let rows = rows(&b);
    assert!(rows[0].contains("This project") && rows[0].contains("All projects") && rows[0].contains("Kept after deletion"), "{s}");
    assert!(rows[1].starts_with("› pgbouncer"), "{s}");
    assert!(rows[2].contains("exact match · 2 sessions"), "{s}");
    assert!(rows[3].contains("pgbouncer refused connections") && rows[3].contains("alpha") && rows[3].contains("src/api"), "{s}");
    assert!(rows[3].contains("2h"), "the age: {s}");
    assert!(rows[4].contains("東京の天気とデプロイ 🦀") && rows[4].contains("beta"), "{s}");
    assert!(s.contains("The pgbouncer pool was full."), "the preview shows the best turn: {s}");
    assert!(rows[19].contains("Enter read") && rows[19].contains("Esc quit"), "{s}");
    // The query's word is highlighted in the preview.
    let (y, line) = rows.iter().enumerate().find(|(_, r)| r.contains("The pgbouncer pool")).expect("preview row");
    let x = line.find("pgbouncer pool").map(|i| line[..i].chars().count()).expect("word") as u16;
    assert_eq!(b[(x, y as u16)].bg, ratatui::style::Color::Yellow, "highlighted");
}

/// Each screen as a person sees it, recorded in `src/ui/snapshots/` (insta): a change to
/// the layout shows as a diff of those files to review, not as a test rewritten.
#[test]
fn the_screens_look_as_recorded() {
    let mut app = sample_app();
    insta::assert_snapshot!("search", screen(&render(&mut app, 100, 14, false)));
    app.overlay = Some(Overlay::Help);
    insta::assert_snapshot!("help", screen(&render(&mut app, 100, 34, false)));
    app.overlay = None;
    app.screen = Screen::Session(None);
    let view =
        SessionView::new(meta("a1", "pool sizing", "alpha", "/src/api"), super::session::tests::sample(), vec!["pool".into()], Some(3));
    app.opened(Ok(Box::new(view)));
    insta::assert_snapshot!("session", screen(&render(&mut app, 90, 30, false)));
    let sessions: Vec<SessionMeta> =
        (0..9).map(|i| meta(&format!("s{i}"), "t", ["alpha", "beta", "gamma"][i % 3], ["/src/api", "/src/web"][i % 2])).collect();
    app.pictures = Some(Ok(Pictures::of(&sessions, NOW)));
    app.screen = Screen::Pictures { back: None };
    insta::assert_snapshot!("pictures", screen(&render(&mut app, 100, 26, false)));
    insta::assert_snapshot!("too-small", screen(&render(&mut app, 19, 4, false)));
}

#[test]
fn a_search_in_flight_shows_after_an_empty_answer_too() {
    // The answer to `zqx` was empty; the next key's search must still say it is running,
    // or a slow search on a big index looks like "nothing matched" for the new line.
    let mut app = App::new("zqx", None, Vec::new());
    answered(&mut app, "zqx", Vec::new());
    assert!(screen(&render(&mut app, 100, 10, true)).contains("nothing matched"));
    let t = Instant::now();
    app.key(crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char('v')), t);
    assert!(app.take_search(t + super::app::DEBOUNCE, NOW).is_some(), "the new line is searched");
    let s = screen(&render(&mut app, 100, 10, true));
    assert!(s.lines().nth(2).is_some_and(|l| l.contains("nothing matched") && l.contains("searching…")), "{s}");
}

#[test]
fn cjk_and_emoji_keep_the_columns_aligned() {
    let mut app = sample_app();
    let b = render(&mut app, 120, 20, true);
    let rows = rows(&b);
    // The harness column starts at the same cell on both rows whatever the title held.
    let col = |row: &str, word: &str| {
        let i = row.find(word).expect("word in row");
        super::text::width(&row[..i])
    };
    assert_eq!(col(&rows[3], "alpha"), col(&rows[4], "beta"), "{rows:#?}");
    for r in &rows {
        assert!(super::text::width(r) <= 120, "{r:?}");
    }
}

#[test]
fn tiny_and_narrow_screens_draw_without_panicking() {
    for (w, h) in [(20, 5), (19, 5), (20, 4), (1, 1), (40, 6), (60, 12)] {
        let mut app = sample_app();
        let b = render(&mut app, w, h, true);
        if w < 20 || h < 5 {
            assert!(w < 10 || screen(&b).contains("too small"), "{w}x{h}: {}", screen(&b));
        } else {
            assert!(rows(&b)[1].starts_with("› pgb"), "{w}x{h}:\n{}", screen(&b));
        }
        // Every other screen and box too.
        app.overlay = Some(Overlay::Help);
        render(&mut app, w, h, false);
        app.overlay = None;
        app.screen = Screen::Session(Some(Box::new(SessionView::new(
            meta("a1", "東京 🦀 title", "alpha", "/src/api"),
            super::session::tests::sample(),
            vec!["pool".into()],
            Some(5),
        ))));
        render(&mut app, w, h, true);
        app.pictures = Some(Ok(Pictures::of(&[meta("a1", "t", "alpha", "/src/api")], NOW)));
        app.screen = Screen::Pictures { back: None };
        render(&mut app, w, h, false);
    }
}

#[test]
fn a_session_its_harness_deleted_offers_restore_beside_resume() {
    let mut app = sample_app();
    app.screen = Screen::Session(None);
    let mut kept = meta("c1", "kept session", "claude", "/src/api");
    kept.source_deleted = Some(deja_core::model::SourceDeleted { noticed: NOW, source: "/h/c1.jsonl".into() });
    app.opened(Ok(Box::new(SessionView::new(kept, super::session::tests::sample(), vec!["pool".into()], Some(3)))));
    let s = screen(&render(&mut app, 100, 24, true));
    assert!(s.contains("deleted by its harness, kept by deja: deja restore claude:c1"), "{s}");
    // A harness deja cannot write back for says why instead.
    app.screen = Screen::Session(None);
    let mut gone = meta("a1", "pool sizing", "alpha", "/src/api");
    gone.source_deleted = Some(deja_core::model::SourceDeleted { noticed: NOW, source: "/h/a1.jsonl".into() });
    app.opened(Ok(Box::new(SessionView::new(gone, super::session::tests::sample(), vec!["pool".into()], Some(3)))));
    let s = screen(&render(&mut app, 100, 24, true));
    assert!(s.contains("kept by deja (not restorable: no adapter for `alpha` is linked)"), "{s}");
}

#[test]
fn the_session_view_shows_the_header_the_match_and_the_diff() {
    let mut app = sample_app();
    let view =
        SessionView::new(meta("a1", "pool sizing", "alpha", "/src/api"), super::session::tests::sample(), vec!["pool".into()], Some(3));
    app.opened(Ok(Box::new(view)));
    assert!(matches!(app.screen, Screen::Search), "only a session being loaded is shown");
    app.screen = Screen::Session(None);
    let view =
        SessionView::new(meta("a1", "pool sizing", "alpha", "/src/api"), super::session::tests::sample(), vec!["pool".into()], Some(3));
    app.opened(Ok(Box::new(view)));
    if let Screen::Session(Some(v)) = &mut app.screen {
        v.children = vec!["explore the pool".into()];
        v.meta.parent = Some("p0".into());
    }
    let b = render(&mut app, 80, 24, true);
    let s = screen(&b);
    assert!(s.contains("pool sizing  [alpha]"), "{s}");
    assert!(s.contains("⤷ sub-agent run of session p0"), "a sub-agent run is marked: {s}");
    assert!(s.contains("⤵ started 1 sub-agent run: explore the pool"), "and the runs it started: {s}");
    assert!(s.contains("/src/api"), "{s}");
    assert!(s.contains("↻ "), "the resume line: {s}");
    assert!(s.contains("+ size = 40") && s.contains("- size = 10"), "the edit as a diff: {s}");
    assert!(rows(&b).last().is_some_and(|r| r.contains("match ") && r.contains("n/N")), "{s}");
    // `n` moves to another match and keeps it in view.
    let before = match &app.screen {
        Screen::Session(Some(v)) => v.current,
        _ => None,
    };
    app.key(crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Char('n')), Instant::now());
    let b = render(&mut app, 80, 24, true);
    let Screen::Session(Some(v)) = &app.screen else { panic!("still reading") };
    assert_ne!(v.current, before);
    let row = v.matches[v.current.expect("at a match")];
    assert!(row >= v.scroll && row < v.scroll + app.body_height, "in view");
    assert!(screen(&b).contains("match "), "{}", screen(&b));
}

#[test]
fn no_color_draws_emphasis_without_colour() {
    let mut app = sample_app();
    let b = render(&mut app, 120, 20, false);
    for y in 0..b.area.height {
        for x in 0..b.area.width {
            let c = &b[(x, y)];
            assert_eq!((c.fg, c.bg), (ratatui::style::Color::Reset, ratatui::style::Color::Reset), "colour at {x},{y}");
        }
    }
    let rows = rows(&b);
    let y = rows.iter().position(|r| r.contains("pgbouncer refused connections")).expect("selected row") as u16;
    assert!(b[(2, y)].modifier.contains(Modifier::REVERSED), "the selection is reversed");
}

#[test]
fn boxes_are_drawn_over_the_screen() {
    let mut app = sample_app();
    app.overlay = Some(Overlay::Help);
    let s = screen(&render(&mut app, 100, 30, true));
    assert!(s.contains("Keys") && s.contains("harness:codex") && s.contains("n N"), "{s}");
    app.overlay = Some(Overlay::Confirm {
        question: vec!["Resume this session in alpha?".into(), "alpha --resume a1".into()],
        then: super::app::Effect::Quit,
    });
    assert!(screen(&render(&mut app, 100, 30, true)).contains("alpha --resume a1"));
    app.overlay = Some(Overlay::Pick { session: "alpha:a1".into(), targets: vec![("beta".into(), "Beta CLI".into())], selected: 0 });
    assert!(screen(&render(&mut app, 100, 30, true)).contains("Beta CLI (beta)"));
}

#[test]
fn pictures_show_bars_projects_and_what_is_wired() {
    let mut app = sample_app();
    let sessions: Vec<SessionMeta> =
        (0..6).map(|i| meta(&format!("s{i}"), "t", if i % 2 == 0 { "alpha" } else { "beta" }, "/src/api")).collect();
    let mut p = Pictures::of(&sessions, NOW);
    p.wired = vec!["alpha-auto".into()];
    p.friction = vec![
        super::pictures::Friction { error: "error[E0425]: cannot find value".into(), sessions: 3, fix: Some(("cargo build".into(), true)) },
        super::pictures::Friction { error: "FAIL auth.test.ts".into(), sessions: 4, fix: None },
    ];
    app.pictures = Some(Ok(p));
    app.screen = Screen::Pictures { back: None };
    let s = screen(&render(&mut app, 120, 30, true));
    assert!(s.contains("Sessions per day") && s.contains('█'), "{s}");
    assert!(s.contains("/src/api") && s.contains("Wired: alpha-auto"), "{s}");
    assert!(s.contains("3 sessions  error[E0425]") && s.contains("fixed by: $ cargo build") && s.contains("no fix recorded"), "{s}");
    app.key(crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Esc), Instant::now());
    assert!(matches!(app.screen, Screen::Search));
}

#[test]
fn history_cannot_drive_the_terminal() {
    let mut app = App::new("x", None, Vec::new());
    answered(&mut app, "x", vec![hit(meta("e1", "evil\u{1b}]52;c;aGk=\u{7}title\u{1b}[2J", "alpha", "/p"), "text\u{1b}[31mred")]);
    let s = screen(&render(&mut app, 100, 12, true));
    assert!(!s.contains('\u{1b}') && !s.contains('\u{7}'), "{s:?}");
}

#[test]
fn the_list_window_follows_the_selection_without_jumping() {
    let mut app = App::new("t", None, Vec::new());
    let hits = (0..60).map(|i| hit(meta(&format!("s{i}"), &format!("session number {i}"), "alpha", "/p"), "t")).collect();
    answered(&mut app, "t", hits);
    let down = crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Down);
    let up = crossterm::event::KeyEvent::from(crossterm::event::KeyCode::Up);
    for _ in 0..20 {
        app.key(down, Instant::now());
        render(&mut app, 60, 12, true);
    }
    let s = screen(&render(&mut app, 60, 12, true));
    assert!(s.contains("session number 20 "), "the selection is in view: {s}");
    let top = app.list_top;
    app.key(up, Instant::now());
    render(&mut app, 60, 12, true);
    assert_eq!(app.list_top, top, "moving back inside the window does not move it");
    for _ in 0..20 {
        app.key(up, Instant::now());
    }
    render(&mut app, 60, 12, true);
    assert_eq!((app.selected, app.list_top), (0, 0));
}

/// A screen with a team store set up, on its Team tab, with `line` typed.
fn on_team_tab(line: &str) -> App {
    let t0 = Instant::now();
    let mut app = App::new(line, None, Vec::new());
    app.team = Some("this-box".into());
    app.start(None, t0);
    app.take_search(t0, NOW).expect("the opening search");
    app.key(KeyEvent::from(KeyCode::Tab), t0);
    app.key(KeyEvent::from(KeyCode::Tab), t0);
    app
}

/// The team store's answer to the search due now.
fn team_answered(app: &mut App, result: Result<Vec<TeamSession>, String>) {
    let (n, ask) = app.take_search(Instant::now(), NOW).expect("a search is due");
    assert!(matches!(ask, Ask::Team(_)), "{ask:?}");
    let line = app.line.text.clone();
    app.answer_team(n, line, result.map(|sessions| TeamResults { tier: "exact".into(), sessions }));
}

fn teammates() -> Vec<TeamSession> {
    let alice = super::session::tests::team_session();
    let mut bob = super::session::tests::team_session();
    bob.author = "bob".into();
    bob.machine = "desktop".into();
    bob.id = "cccc1111".into();
    bob.title = Some("東京 pool 🦀".into());
    bob.hits.truncate(1);
    vec![alice, bob]
}

#[test]
fn the_team_tab_lists_teammates_sessions_as_author_at_machine_and_quotes_their_turns() {
    let s = screen(&render(&mut sample_app(), 120, 20, true));
    assert!(!s.lines().next().unwrap_or_default().contains("Team"), "no Team tab without a team store: {s}");
    let mut app = on_team_tab("staging pool");
    team_answered(&mut app, Ok(teammates()));
    let b = render(&mut app, 160, 30, true);
    let (s, rows) = (screen(&b), rows(&b));
    assert!(rows[0].contains("Kept after deletion") && rows[0].contains(" Team "), "{s}");
    // The selected tab is drawn selected.
    let x = rows[0].find(" Team ").map(|i| super::text::width(&rows[0][..i])).expect("tab") as u16 + 1;
    assert_eq!(b[(x, 0)].bg, ratatui::style::Color::Blue, "{s}");
    assert!(rows[2].contains("exact match · 2 sessions in the team store · teammates' history"), "{s}");
    for (row, who) in [(3, "alice@laptop"), (4, "bob@desktop")] {
        assert!(rows[row].contains(who) && rows[row].contains("claude") && rows[row].contains("2h") && rows[row].contains("exact"), "{s}");
    }
    assert!(rows[3].contains("staging pool size") && rows[4].contains("東京 pool 🦀"), "{s}");
    assert!(s.contains("a teammate's history from the team store: quoted, not instructions"), "the preview frames it: {s}");
    assert!(s.contains("alice@laptop · claude · github.com/org/app (/home/alice/app)"), "{s}");
    assert!(s.contains("▍assistant") && s.contains("The staging pool size is forty connections now."), "the quoted turns: {s}");
    let (y, line) = rows.iter().enumerate().find(|(_, r)| r.contains("The staging pool size")).expect("preview row");
    let x = line.find("staging pool size").map(|i| super::text::width(&line[..i])).expect("words") as u16;
    assert_eq!(b[(x, y as u16)].bg, ratatui::style::Color::Yellow, "the query's words are highlighted: {s}");
    // Down moves to bob's, and the preview follows.
    app.key(KeyEvent::from(KeyCode::Down), Instant::now());
    let s = screen(&render(&mut app, 160, 30, true));
    assert!(s.contains("bob@desktop · claude"), "{s}");
    // Narrow: the columns still fit.
    for r in self::rows(&render(&mut app, 50, 16, false)) {
        assert!(super::text::width(&r) <= 50, "{r:?}");
    }
}

#[test]
fn filters_the_team_store_cannot_apply_are_said_not_dropped() {
    let mut app = on_team_tab("staging file:src/db.rs");
    team_answered(&mut app, Ok(teammates()));
    let s = screen(&render(&mut app, 200, 12, true));
    assert!(
        s.contains("2 sessions in the team store") && s.contains("file:src/db.rs not applied (the team store keeps no file touches)"),
        "{s}"
    );
    // And a line with nothing to search says what the tab is for.
    let mut app = on_team_tab("");
    assert!(app.take_search(Instant::now(), NOW).is_none(), "nothing to ask");
    let s = screen(&render(&mut app, 120, 12, true));
    assert!(s.contains("type words to search the team store"), "{s}");
}

#[test]
fn an_unavailable_team_store_is_said_in_the_info_line() {
    let mut app = on_team_tab("staging pool");
    app.team_results = Some(TeamResults { tier: "exact".into(), sessions: teammates() });
    team_answered(&mut app, Err("the team store u@db:5432/team did not answer within 2000 ms".into()));
    let b = render(&mut app, 120, 16, true);
    let rows = rows(&b);
    assert!(rows[2].starts_with("team store unavailable: the team store u@db:5432/team did not answer within 2000 ms"), "{}", screen(&b));
    assert!(!screen(&b).contains("alice@laptop"), "no sessions of another query under the line: {}", screen(&b));
    assert_eq!(b[(0, 2)].fg, ratatui::style::Color::Red);
}

#[test]
fn a_teammates_session_shows_who_ran_it_where_and_opens_at_its_match() {
    let mut app = on_team_tab("forty");
    team_answered(&mut app, Ok(teammates()));
    let Some(super::app::Effect::OpenTeam { key, focus }) = app.key(KeyEvent::from(KeyCode::Enter), Instant::now()) else {
        panic!("Enter reads it from the team store")
    };
    assert_eq!(key, "laptop/claude:bbbb0000");
    app.opened(Ok(Box::new(SessionView::from_team(super::session::tests::team_session(), app.terms(), focus.or(Some(3))))));
    let b = render(&mut app, 100, 14, true);
    let (s, rows) = (screen(&b), rows(&b));
    assert!(rows[0].starts_with("staging pool size  [claude]"), "{s}");
    assert!(rows[1].starts_with("alice@laptop · github.com/org/app (/home/alice/app there)"), "{s}");
    assert!(rows[2].contains(" → ") && rows[2].contains("5 turns"), "the times: {s}");
    assert!(rows[3].contains("a teammate's history from the team store"), "{s}");
    assert!(rows[4].starts_with("↻ - (it ran on laptop: resume it there) · y copies deja show --team laptop/claude:bbbb0000"), "{s}");
    assert!(s.contains("▍assistant"), "speech by role: {s}");
    let (y, line) = rows.iter().enumerate().find(|(_, r)| r.contains("forty connections")).expect("the match is in view");
    let x = line.find("forty connections").map(|i| super::text::width(&line[..i])).expect("words") as u16;
    assert_eq!(b[(x, y as u16)].bg, ratatui::style::Color::Yellow, "{s}");
    assert!(rows.last().is_some_and(|r| r.contains("match 1 of 1")), "{s}");
    // `r` says why not, in the status line.
    app.key(KeyEvent::from(KeyCode::Char('r')), Instant::now());
    let s = screen(&render(&mut app, 100, 14, true));
    assert!(s.lines().last().is_some_and(|r| r.starts_with("cannot resume it here: it is alice's session on laptop")), "{s}");
}

#[test]
fn a_teammates_history_cannot_drive_the_terminal() {
    let mut evil = super::session::tests::team_session();
    evil.author = "mallory\u{1b}]52;c;aGk=\u{7}".into();
    evil.machine = "box\u{1b}[2J".into();
    evil.title = Some("title\u{1b}[31m".into());
    evil.project_path = Some("/p\u{9b}31m".into());
    for h in &mut evil.hits {
        h.text.push_str(" staging \u{1b}]0;owned\u{7}");
        h.role.push('\u{1b}');
    }
    let mut app = on_team_tab("staging");
    team_answered(&mut app, Ok(vec![evil.clone()]));
    let clean = |s: &str| !s.contains('\u{1b}') && !s.contains('\u{7}') && !s.contains('\u{9b}');
    let s = screen(&render(&mut app, 120, 20, true));
    assert!(clean(&s) && s.contains("mallory"), "{s:?}");
    app.key(KeyEvent::new(KeyCode::Char('r'), crossterm::event::KeyModifiers::CONTROL), Instant::now());
    let s = screen(&render(&mut app, 120, 20, true));
    assert!(clean(&s) && s.contains("cannot resume it here"), "{s:?}");
    app.key(KeyEvent::from(KeyCode::Enter), Instant::now());
    app.opened(Ok(Box::new(SessionView::from_team(evil, app.terms(), Some(0)))));
    let s = screen(&render(&mut app, 120, 20, true));
    assert!(clean(&s) && s.contains("mallory"), "{s:?}");
    app.key(KeyEvent::from(KeyCode::Char('y')), Instant::now());
    let s = screen(&render(&mut app, 120, 20, true));
    assert!(clean(&s) && s.contains("copied"), "{s:?}");
}

#[test]
fn the_help_says_what_the_team_tab_does() {
    let mut app = on_team_tab("");
    app.key(KeyEvent::from(KeyCode::F(1)), Instant::now());
    let s = screen(&render(&mut app, 100, 40, true));
    assert!(s.contains("kept after deletion · team"), "{s}");
    assert!(s.contains("Team tab (with a team store): other machines' sessions, as author@machine;"), "{s}");
    assert!(s.contains("^Y or y copies its `deja show --team …` command"), "{s}");
}

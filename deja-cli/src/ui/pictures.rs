//! The pictures of the history (the second view, `s`): sessions per day for the last
//! weeks by harness, the projects with most work, recurring errors and what fixed
//! them, what is indexed and what is wired.
//!
//! The numbers are computed here from session metadata, apart from drawing, so they
//! are tested as numbers; the bar chart is drawn cell by cell because ratatui's
//! `BarChart` has no stacked bars, and a bar per harness per day does not fit 28 days.

use deja_core::model::SessionMeta;
use deja_core::Timestamp;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};

use super::text::{fit, safe};

/// Days the chart covers.
pub const DAYS: usize = 42;
/// Harnesses given their own colour; the rest are summed as `other`.
pub const SERIES: usize = 5;
const DAY_MS: i64 = 86_400_000;

/// Everything the view shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pictures {
    /// The series: the harnesses with most sessions in the window, then `other` if any.
    pub series: Vec<String>,
    /// Oldest day first: its date (`MM-DD`) and its sessions per series.
    pub days: Vec<(String, Vec<u64>)>,
    /// Projects by sessions, most first: (project, sessions, turns).
    pub projects: Vec<(String, u64, u64)>,
    /// Sessions indexed per harness, most first.
    pub indexed: Vec<(String, u64)>,
    /// Recurring errors (`deja friction`'s) and the command that fixed each (`deja fix`'s).
    pub friction: Vec<Friction>,
    /// What `deja install` wired (its targets).
    pub wired: Vec<String>,
}

impl Pictures {
    /// The numbers of `sessions` as of `now` (friction and wiring are filled in by the
    /// caller, who asks the index and the install record).
    pub fn of(sessions: &[SessionMeta], now: Timestamp) -> Pictures {
        let today = now.0.div_euclid(DAY_MS);
        let first = today - DAYS as i64 + 1;
        let day_of = |m: &SessionMeta| m.updated.or(m.started).map(|t| t.0.div_euclid(DAY_MS));
        let mut per_harness: Vec<(String, u64)> = Vec::new();
        let mut indexed: Vec<(String, u64)> = Vec::new();
        let mut projects: Vec<(String, u64, u64)> = Vec::new();
        for m in sessions {
            bump(&mut indexed, &m.harness, 1);
            if day_of(m).is_some_and(|d| d >= first && d <= today) {
                bump(&mut per_harness, &m.harness, 1);
            }
            if let Some(p) = m.project.as_deref().filter(|p| !p.is_empty()) {
                match projects.iter_mut().find(|(q, _, _)| q == p) {
                    Some(e) => {
                        e.1 += 1;
                        e.2 += u64::from(m.turns);
                    }
                    None => projects.push((p.to_string(), 1, u64::from(m.turns))),
                }
            }
        }
        let by_count = |a: &(String, u64), b: &(String, u64)| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0));
        per_harness.sort_by(by_count);
        indexed.sort_by(by_count);
        projects.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)).then_with(|| a.0.cmp(&b.0)));
        projects.truncate(10);
        let mut series: Vec<String> = per_harness.iter().take(SERIES).map(|(h, _)| h.clone()).collect();
        let other = per_harness.len() > SERIES;
        if other {
            series.push("other".to_string());
        }
        let mut days: Vec<(String, Vec<u64>)> = (first..=today)
            .map(|d| {
                let label = Timestamp(d * DAY_MS).to_datetime().map_or_else(String::new, |t| t.format("%m-%d").to_string());
                (label, vec![0; series.len()])
            })
            .collect();
        for m in sessions {
            let Some(d) = day_of(m).filter(|d| *d >= first && *d <= today) else { continue };
            let i = series.iter().position(|s| *s == m.harness).unwrap_or(series.len().saturating_sub(1));
            if let Some(slot) = days[(d - first) as usize].1.get_mut(i) {
                *slot += 1;
            }
        }
        Pictures { series, days, projects, indexed, friction: Vec::new(), wired: Vec::new() }
    }

    /// The most sessions on one day.
    pub fn peak(&self) -> u64 {
        self.days.iter().map(|(_, c)| c.iter().sum::<u64>()).max().unwrap_or(0)
    }
}

/// One recurring error: its line, how many sessions it hit, and the command after which
/// it last went away (with whether it stayed away), when one was recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Friction {
    pub error: String,
    pub sessions: usize,
    pub fix: Option<(String, bool)>,
}

fn bump(list: &mut Vec<(String, u64)>, key: &str, n: u64) {
    match list.iter_mut().find(|(k, _)| k == key) {
        Some(e) => e.1 += n,
        None => list.push((key.to_string(), n)),
    }
}

/// How series are told apart: colours, or with `NO_COLOR`, shades of the block.
pub fn series_style(i: usize, color: bool) -> (Style, char) {
    const COLORS: [Color; SERIES + 1] = [Color::Cyan, Color::Magenta, Color::Yellow, Color::Green, Color::Blue, Color::Gray];
    const SHADES: [char; SERIES + 1] = ['█', '▓', '▒', '░', '▚', '·'];
    let i = i.min(SERIES);
    if color {
        (Style::default().fg(COLORS[i]), '█')
    } else {
        (Style::default(), SHADES[i])
    }
}

/// Draws the stacked bars of `p` in `area`: one column per day (as wide as fits), the
/// peak's count on the left, a date under the first, middle and last day.
pub fn draw_bars(p: &Pictures, area: Rect, buf: &mut Buffer, color: bool) {
    if area.width < 8 || area.height < 3 || p.days.is_empty() {
        return;
    }
    let peak = p.peak().max(1);
    let axis = format!("{peak}");
    let left = axis.len() as u16 + 1;
    let chart_h = area.height - 1;
    let n = p.days.len() as u16;
    let col = ((area.width.saturating_sub(left)) / n).clamp(1, 3);
    buf.set_string(area.x, area.y, &axis, Style::default());
    for (d, (_, counts)) in p.days.iter().enumerate() {
        let x = area.x + left + d as u16 * col;
        if x >= area.x + area.width {
            break;
        }
        // Cells per series, rounded so a day with any session shows at least one.
        let mut y = area.y + chart_h;
        for (i, c) in counts.iter().enumerate() {
            if *c == 0 {
                continue;
            }
            let cells = ((*c * u64::from(chart_h)).div_ceil(peak)).max(1) as u16;
            let (style, glyph) = series_style(i, color);
            for _ in 0..cells {
                if y == area.y {
                    break;
                }
                y -= 1;
                for dx in 0..col.saturating_sub(u16::from(col > 1)) {
                    if x + dx < area.x + area.width {
                        buf[(x + dx, y)].set_char(glyph).set_style(style);
                    }
                }
            }
        }
    }
    let y = area.y + chart_h;
    for d in [0, p.days.len() / 2, p.days.len() - 1] {
        let x = area.x + left + d as u16 * col;
        let label = &p.days[d].0;
        if x + label.len() as u16 <= area.x + area.width {
            buf.set_string(x, y, label, Style::default());
        }
    }
}

/// The text beside the chart: the legend, projects, indexed, wired, friction.
pub fn lines(p: &Pictures, width: usize) -> Vec<(String, Option<usize>)> {
    let mut out: Vec<(String, Option<usize>)> = Vec::new();
    let total: u64 = p.days.iter().map(|(_, c)| c.iter().sum::<u64>()).sum();
    out.push((format!("Sessions per day, last {DAYS} days: {total}"), None));
    for (i, s) in p.series.iter().enumerate() {
        let n: u64 = p.days.iter().map(|(_, c)| c.get(i).copied().unwrap_or(0)).sum();
        out.push((fit(&format!("  {}  {n}", safe(s)), width), Some(i)));
    }
    out.push((String::new(), None));
    out.push(("Projects with most work (sessions · turns)".into(), None));
    if p.projects.is_empty() {
        out.push(("  (none indexed)".into(), None));
    }
    for (proj, s, t) in &p.projects {
        let nums = format!("  {s:>4} · {t:>5}  ");
        out.push((format!("{nums}{}", fit(&safe(proj), width.saturating_sub(nums.len()))), None));
    }
    out.push((String::new(), None));
    let indexed: u64 = p.indexed.iter().map(|(_, n)| n).sum();
    out.push((format!("Indexed: {indexed} sessions from {} harnesses", p.indexed.len()), None));
    let list: Vec<String> = p.indexed.iter().map(|(h, n)| format!("{} {n}", safe(h))).collect();
    out.push((fit(&format!("  {}", list.join(" · ")), width), None));
    let wired = if p.wired.is_empty() { "nothing yet (`deja install` wires it)".to_string() } else { p.wired.join(", ") };
    out.push((fit(&format!("Wired: {wired}"), width), None));
    out.push(("  (`deja doctor` says what each wiring does)".into(), None));
    out.push((String::new(), None));
    out.push(("Recurring errors and what fixed them".into(), None));
    if p.friction.is_empty() {
        out.push(("  (no error recurred across sessions)".into(), None));
    }
    for f in &p.friction {
        out.push((fit(&format!("  {:>3} sessions  {}", f.sessions, safe(&f.error)), width), None));
        let fix = match &f.fix {
            Some((cmd, true)) => format!("        fixed by: $ {}", safe(cmd)),
            Some((cmd, false)) => format!("        tried: $ {} (it came back)", safe(cmd)),
            None => "        no fix recorded".to_string(),
        };
        out.push((fit(&fix, width), None));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(harness: &str, project: &str, day: i64, turns: u32) -> SessionMeta {
        SessionMeta {
            harness: harness.into(),
            project: Some(project.into()),
            updated: Some(Timestamp(day * DAY_MS + 3_600_000)),
            turns,
            ..super::super::session::tests::meta()
        }
    }

    #[test]
    fn sessions_are_counted_per_day_and_harness_in_the_window() {
        let now = Timestamp(100 * DAY_MS + 5);
        let mut all = vec![session("alpha", "/a", 100, 10), session("alpha", "/a", 100, 5), session("beta", "/b", 99, 1)];
        all.push(session("beta", "/b", 10, 1)); // before the window: indexed, not charted
        for (i, h) in ["h1", "h2", "h3", "h4", "h5"].iter().enumerate() {
            all.push(session(h, "/c", 90 + i as i64, 1));
        }
        let p = Pictures::of(&all, now);
        assert_eq!(p.days.len(), DAYS);
        assert_eq!(p.series, ["alpha", "beta", "h1", "h2", "h3", "other"]);
        assert_eq!(p.days[DAYS - 1].1, [2, 0, 0, 0, 0, 0]);
        assert_eq!(p.days[DAYS - 2].1, [0, 1, 0, 0, 0, 0]);
        // h4 and h5 go to `other`.
        assert_eq!(p.days.iter().map(|(_, c)| c[5]).sum::<u64>(), 2);
        assert_eq!(p.peak(), 2);
        assert_eq!(p.projects[0], ("/c".to_string(), 5, 5), "more sessions first");
        assert_eq!(p.projects[1], ("/a".to_string(), 2, 15));
        assert_eq!(p.indexed[..2], [("alpha".to_string(), 2), ("beta".to_string(), 2)], "most first, then by name");
        assert_eq!(p.indexed.iter().map(|(_, n)| n).sum::<u64>(), 9);
    }

    #[test]
    fn bars_stack_and_stay_inside_their_area() {
        let now = Timestamp(100 * DAY_MS);
        let p = Pictures::of(&[session("alpha", "/a", 100, 1), session("beta", "/a", 100, 1), session("alpha", "/a", 80, 1)], now);
        for (w, h) in [(80u16, 10u16), (20, 5), (8, 3), (3, 2)] {
            let area = Rect::new(0, 0, w, h);
            let mut buf = Buffer::empty(Rect::new(0, 0, w + 2, h + 2));
            draw_bars(&p, area, &mut buf, false);
            for y in 0..h + 2 {
                for x in 0..w + 2 {
                    if x >= w || y >= h {
                        assert_eq!(buf[(x, y)].symbol(), " ", "drawn outside at {x},{y}");
                    }
                }
            }
        }
        let mut buf = Buffer::empty(Rect::new(0, 0, 90, 10));
        draw_bars(&p, Rect::new(0, 0, 90, 10), &mut buf, false);
        let drawn: String = (0..90).flat_map(|x| (0..10).map(move |y| (x, y))).map(|(x, y)| buf[(x, y)].symbol().to_string()).collect();
        assert!(drawn.contains('█') && drawn.contains('▓'), "two harnesses, two shades without colour");
    }
}

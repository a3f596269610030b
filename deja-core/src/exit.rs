//! Exit lines: the line a harness writes into a shell tool's output to say how the
//! command ended (`Exit code: 1`, `[Process exited with code 1]`, `Command exited with
//! code 1`, `Exit Code: 101`, `[exit code: 0]`…). One reader for all of them, so a
//! harness only states its marker and where the line sits ([`ExitLine`]), and every
//! adapter and family reads the number the same way: an optional `-` and digits after
//! the marker, whatever follows unless the line must close (`]`), and a marker with no
//! number (`Exit Code: (none)`, a signal) seen as such rather than as a code.

/// Where in the output an exit line sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At {
    /// The first line (after leading blank lines).
    First,
    /// The last line (before trailing blank lines).
    Last,
    /// One of the first `n` lines.
    Head(usize),
    /// Any line.
    Any,
}

/// One harness's exit line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitLine {
    /// What comes before the number.
    pub marker: &'static str,
    pub at: At,
    /// The marker may follow other text on its line (`Error: Command exited with code 1`);
    /// otherwise the line starts with it (leading blanks aside).
    pub inline: bool,
    /// What must end the line after the number (`]`); empty: anything may follow.
    pub close: &'static str,
}

impl ExitLine {
    pub const fn first(marker: &'static str) -> ExitLine {
        ExitLine { marker, at: At::First, inline: false, close: "" }
    }
    pub const fn last(marker: &'static str) -> ExitLine {
        ExitLine { marker, at: At::Last, inline: false, close: "" }
    }
    pub const fn head(lines: usize, marker: &'static str) -> ExitLine {
        ExitLine { marker, at: At::Head(lines), inline: false, close: "" }
    }
    pub const fn any(marker: &'static str) -> ExitLine {
        ExitLine { marker, at: At::Any, inline: false, close: "" }
    }
    /// The marker may follow other text on its line.
    pub const fn inline(self) -> ExitLine {
        ExitLine { inline: true, ..self }
    }
    /// The number must be followed by `close` and nothing else.
    pub const fn closed(self, close: &'static str) -> ExitLine {
        ExitLine { close, ..self }
    }

    /// The code `line` states when it is this kind of line: `Some(None)` when the marker
    /// is there but no number follows it (or the line does not close as it must).
    pub fn read(&self, line: &str) -> Option<Option<i64>> {
        let line = line.trim();
        let after = if self.inline {
            let at = line.find(self.marker)?;
            &line[at + self.marker.len()..]
        } else {
            line.strip_prefix(self.marker)?
        };
        let after = after.trim_start();
        let digits = after.char_indices().find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-'))).map_or(after.len(), |(i, _)| i);
        let code = after[..digits].parse::<i64>().ok();
        let closes = self.close.is_empty() || after[digits..].trim() == self.close;
        Some(code.filter(|_| closes))
    }
}

/// The exit code `text` states on a line of one of `lines` (the first that matches).
pub fn exit_code(text: &str, lines: &[ExitLine]) -> Option<i64> {
    lines.iter().find_map(|spec| candidates(text, spec.at).into_iter().find_map(|l| spec.read(l).flatten()))
}

/// `text` with its first or last line cut when that line is one of `lines` (an `At::First`
/// or `At::Last` kind): the code it states (`None` when the marker has no number) and the
/// text without it (the rest after a first line; what comes before a last one, trailing
/// blanks trimmed). `None` when no such line is there.
pub fn split_exit<'t>(text: &'t str, lines: &[ExitLine]) -> Option<(Option<i64>, &'t str)> {
    lines.iter().find_map(|spec| match spec.at {
        At::First => {
            let t = text.trim_start();
            let (first, rest) = t.split_once('\n').unwrap_or((t, ""));
            spec.read(first).map(|code| (code, rest))
        }
        At::Last => {
            let t = text.trim_end();
            let (head, last) = t.rsplit_once('\n').unwrap_or(("", t));
            spec.read(last).map(|code| (code, head.trim_end()))
        }
        At::Head(_) | At::Any => None,
    })
}

/// [`split_exit`] only where the line states a number: otherwise the text whole.
pub fn split_exit_code<'t>(text: &'t str, lines: &[ExitLine]) -> (Option<i64>, &'t str) {
    match split_exit(text, lines) {
        Some((Some(code), rest)) => (Some(code), rest),
        _ => (None, text),
    }
}

/// The lines of `text` an exit line at `at` may be.
fn candidates(text: &str, at: At) -> Vec<&str> {
    match at {
        At::First => text.trim_start().lines().take(1).collect(),
        At::Last => text.trim_end().lines().last().into_iter().collect(),
        At::Head(n) => text.lines().take(n).collect(),
        At::Any => text.lines().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_exit_line_reads() {
        let factory = [ExitLine::last("[Process exited with code ").closed("]")];
        assert_eq!(split_exit_code("built\n\n[Process exited with code 2]\n", &factory), (Some(2), "built"));
        assert_eq!(
            split_exit_code("built\n[Process exited with code 2] later", &factory),
            (None, "built\n[Process exited with code 2] later")
        );
        let codebuddy = [ExitLine::last("Exit Code:")];
        assert_eq!(split_exit("out\nExit Code: (none)", &codebuddy), Some((None, "out")), "the marker without a number is still cut");
        assert_eq!(split_exit("Exit Code: -1", &codebuddy), Some((Some(-1), "")));
        let command = [ExitLine::first("Exit code:")];
        assert_eq!(split_exit_code("\nExit code: 1 (general error)\nboom", &command), (Some(1), "boom"));
        let claude = [ExitLine::first("Error: Exit code "), ExitLine::first("Exit code ")];
        assert_eq!(split_exit_code("Error: Exit code 127\nnot found", &claude), (Some(127), "not found"));
        assert_eq!(split_exit_code("Exit code 3", &claude), (Some(3), ""));
        let inline = [ExitLine::last("Command exited with code ").inline()];
        assert_eq!(exit_code("oops\nError: Command exited with code 1", &inline), Some(1));
        assert_eq!(exit_code("Command exited with code 1\nmore", &inline), None, "the last line only");
        let head = [ExitLine::head(3, "Exit code: ").inline()];
        assert_eq!(exit_code("a\nb\nCommand failed. Exit code: 5\nd", &head), Some(5));
        assert_eq!(exit_code("a\nb\nc\nExit code: 5", &head), None);
        let any = [ExitLine::any("exit code:").inline()];
        assert_eq!(exit_code("Command failed with exit code: 3.", &any), Some(3));
        assert_eq!(exit_code("exit code: x", &any), None);
        let first = [ExitLine::first("Command failed with exit code ")];
        assert_eq!(exit_code("Command failed with exit code 2.\nstderr", &first), Some(2));
        assert_eq!(exit_code("", &first), None);
    }
}

//! The realistic profile: sessions shaped like real coding-agent history rather than
//! like the classic profile's short, uniform turns.
//!
//! What it is calibrated on (`docs/benchmarks.md`, "The corpora", has the measured
//! result): an independent 1 GB corpus of Claude Code, Codex and DeepSeek sessions —
//! 25,500 sessions and 700,000 messages, so about 27 messages and 40 KB a session and
//! 1.4 KB a message on disk, turns of 50–2,000 characters with a log-normal spread, test
//! runs, grep output and code among them — and the shapes of the real records on the
//! harnesses' format pages (a Claude Code `Read` result is numbered lines, a Bash
//! result is the command's whole output up to the harness's cut at about 30,000
//! characters).
//!
//! | draw | law | median | spread (σ of ln) | clamp |
//! | --- | --- | --- | --- | --- |
//! | exchanges a session (prompt, work, answer) | log-normal | 2 | 0.9 | 1–40 |
//! | tool calls an exchange | log-normal | 2.3 | 0.8 | 0–30 |
//! | prompt | log-normal | 160 chars | 1.0 | 12–8,000 |
//! | narration before a tool call (35% of calls) | log-normal | 90 chars | 0.6 | 20–600 |
//! | reasoning (15% of calls) | log-normal | 350 chars | 0.8 | 40–4,000 |
//! | final answer | log-normal | 550 chars | 0.9 | 40–12,000 |
//! | tool output | log-normal | 550 chars | 1.3 | 0–30,000 |
//!
//! Tool calls are shell commands (45%: test runs, builds, grep, git log and diff,
//! listings, JSON service logs, containers), file reads (35%, numbered lines) and edits
//! (20%). Outputs carry what real ones do and the classic profile lacks: commit hashes,
//! UUIDs, request ids, timestamps, durations, addresses, version numbers — identifiers
//! seen once, which is what makes a real term dictionary large.

use deja_core::{SynthTurn, Timestamp};

use super::{Ctx, Lang, Rng};

/// A log-normal draw with the given median and σ of its logarithm, clamped.
fn log_normal(rng: &mut Rng, median: f64, sigma: f64, lo: usize, hi: usize) -> usize {
    // Box–Muller: two uniform draws give one standard normal.
    let u1 = rng.unit().max(f64::MIN_POSITIVE);
    let u2 = rng.unit();
    let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
    ((median * (sigma * z).exp()).round() as usize).clamp(lo, hi)
}

/// How many exchanges a session has.
pub(super) fn exchanges(rng: &mut Rng) -> usize {
    log_normal(rng, 2.0, 0.9, 1, 40)
}

impl Ctx<'_> {
    /// One prompt, tool calls with their outputs (some narrated, some reasoned about),
    /// one answer.
    pub(super) fn realistic_exchange(&mut self, time: &mut Timestamp, turns: &mut Vec<SynthTurn>) {
        let mut tick = |rng: &mut Rng| {
            time.0 += 3_000 + rng.below(60_000) as i64;
            *time
        };
        let text = self.long_prompt();
        turns.push(SynthTurn::User { text, time: tick(&mut self.rng) });
        for _ in 0..log_normal(&mut self.rng, 2.3, 0.8, 0, 30) {
            if self.rng.chance(0.15) {
                let size = log_normal(&mut self.rng, 350.0, 0.8, 40, 4_000);
                let text = self.text_of(size);
                turns.push(SynthTurn::Reasoning { text, time: tick(&mut self.rng) });
            }
            if self.rng.chance(0.35) {
                let size = log_normal(&mut self.rng, 90.0, 0.6, 20, 600);
                let text = self.text_of(size);
                turns.push(SynthTurn::Assistant { text, time: tick(&mut self.rng) });
            }
            let size = log_normal(&mut self.rng, 550.0, 1.3, 0, 30_000);
            let turn = match self.rng.below(20) {
                0..=8 => {
                    let (command, output, exit_code) = self.long_shell(size);
                    SynthTurn::Shell { command, output, exit_code, time: tick(&mut self.rng) }
                }
                9..=15 => {
                    let path = self.path();
                    let output = self.file_dump(size);
                    SynthTurn::Read { path, output, time: tick(&mut self.rng) }
                }
                _ => {
                    let path = self.path();
                    let old = self.code_block(1, 12);
                    let new = self.code_block(1, 16);
                    SynthTurn::Edit { path, old, new, time: tick(&mut self.rng) }
                }
            };
            turns.push(turn);
        }
        let size = log_normal(&mut self.rng, 550.0, 0.9, 40, 12_000);
        let text = self.long_answer(size);
        turns.push(SynthTurn::Assistant { text, time: tick(&mut self.rng) });
    }

    /// Sentences until about `chars` characters.
    fn text_of(&mut self, chars: usize) -> String {
        let mut s = String::with_capacity(chars + 120);
        while s.len() < chars {
            if !s.is_empty() {
                s.push(' ');
            }
            s.push_str(&self.sentence());
        }
        s
    }

    /// Lines from `line` until about `chars` characters (at least one line).
    fn lines_of(&mut self, chars: usize, mut line: impl FnMut(&mut Self) -> String) -> String {
        let mut s = String::with_capacity(chars + 120);
        loop {
            s.push_str(&line(self));
            if s.len() >= chars {
                return s;
            }
            s.push('\n');
        }
    }

    fn long_prompt(&mut self) -> String {
        let size = log_normal(&mut self.rng, 160.0, 1.0, 12, 8_000);
        let short = self.prompt();
        match self.rng.below(10) {
            // A pasted log or trace under a line of question.
            0 | 1 if size > 300 => {
                let pasted = self.lines_of(size, |c| c.log_line());
                format!("{}\n\n```\n{pasted}\n{}\n```", first_line(&short), self.stack_trace())
            }
            // A pasted snippet to explain or change.
            2 if size > 300 => {
                let code = self.lines_of(size, |c| c.code_line());
                format!("{}\n\n```{}\n{code}\n```", first_line(&short), self.fence())
            }
            _ if short.len() >= size => short,
            _ => format!("{short} {}", self.text_of(size - short.len())),
        }
    }

    fn long_answer(&mut self, size: usize) -> String {
        let mut s = self.text_of(size.min(400));
        while s.len() < size {
            match self.rng.below(4) {
                0 => {
                    let fence = self.fence();
                    let size = self.rng.range(200, 1_500);
                    let code = self.lines_of(size, |c| c.code_line());
                    s.push_str(&format!("\n\n```{fence}\n{code}\n```\n\n"));
                }
                1 => {
                    for _ in 0..self.rng.range(2, 6) {
                        let p = self.path();
                        let sent = self.sentence();
                        s.push_str(&format!("\n- `{p}`: {sent}"));
                    }
                    s.push_str("\n\n");
                }
                _ => {
                    let n = self.rng.range(150, 600);
                    let t = self.text_of(n);
                    s.push_str(&t);
                    s.push_str("\n\n");
                }
            }
        }
        s.truncate(s.trim_end().len());
        s
    }

    /// A file's text as a harness's read tool returns it: numbered lines.
    fn file_dump(&mut self, size: usize) -> String {
        let mut n = self.rng.range(1, 400);
        self.lines_of(size.max(200), |c| {
            n += 1;
            format!("{n:>6}\t{}", c.code_line())
        })
    }

    fn hex(&mut self, digits: usize) -> String {
        let v = self.rng.next_u64();
        format!("{v:016x}")[..digits.min(16)].to_string()
    }

    fn uuid(&mut self) -> String {
        let (a, b) = (self.rng.next_u64(), self.rng.next_u64());
        format!("{:08x}-{:04x}-4{:03x}-a{:03x}-{:012x}", a >> 32, (a >> 16) & 0xffff, a & 0xfff, b >> 52, b & 0xffff_ffff_ffff)
    }

    fn clock(&mut self) -> String {
        format!(
            "2025-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            self.rng.range(1, 12),
            self.rng.range(1, 28),
            self.rng.below(24),
            self.rng.below(60),
            self.rng.below(60),
            self.rng.below(1000)
        )
    }

    /// A structured service log line: time, level, request id, a message with values.
    fn log_line(&mut self) -> String {
        let level = *self.rng.pick(&["INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"]);
        let clock = self.clock();
        let id = self.uuid();
        let (a, b) = (self.snake(), self.word());
        let ms = self.rng.range(1, 4_000);
        format!("{clock} {level} [{}] request_id={id} {a}: {b} {} in {ms}ms", self.mid_word(), self.word())
    }

    fn test_name(&mut self) -> String {
        format!("{}::{}::{}", self.snake(), self.mid_word(), self.snake())
    }

    /// A shell command whose output is about `size` characters.
    fn long_shell(&mut self, size: usize) -> (String, String, i64) {
        let fail = self.rng.chance(0.25);
        match self.rng.below(8) {
            // A test run: one line a test, then the failures with their traces.
            0 | 1 => {
                let cmd = match self.lang {
                    Lang::Rust => {
                        let krate = self.topic[0];
                        format!("cargo test -p {krate} {}", self.snake())
                    }
                    Lang::Python => format!("pytest tests/ -q -k {}", self.snake()),
                    Lang::TypeScript => format!("npx vitest run {}", self.path()),
                    Lang::Go => {
                        let package = self.topic[2];
                        format!("go test ./{package}/... -v")
                    }
                    Lang::Java => format!("./gradlew test --tests '*{}*'", self.camel(true)),
                };
                let mut passed = 0;
                let mut out = self.lines_of(size.saturating_sub(200), |c| {
                    passed += 1;
                    let secs = c.rng.below(900);
                    format!("test {} ... ok ({}.{secs:03}s)", c.test_name(), c.rng.below(3))
                });
                if fail {
                    let name = self.test_name();
                    let trace = self.stack_trace();
                    out.push_str(&format!("\ntest {name} ... FAILED\n\nfailures:\n\n---- {name} stdout ----\n{trace}\n\nfailures:\n    {name}\n\ntest result: FAILED. {passed} passed; 1 failed; 0 ignored; finished in {}.{:02}s", self.rng.below(40), self.rng.below(100)));
                    (cmd, out, if self.lang == Lang::Rust { 101 } else { 1 })
                } else {
                    out.push_str(&format!(
                        "\n\ntest result: ok. {passed} passed; 0 failed; 0 ignored; finished in {}.{:02}s",
                        self.rng.below(40),
                        self.rng.below(100)
                    ));
                    (cmd, out, 0)
                }
            }
            // A build: one line a dependency, warnings pointing into the project.
            2 => {
                let cmd = match self.lang {
                    Lang::Rust => "cargo build --release".to_string(),
                    Lang::Python => "pip install -e .".to_string(),
                    Lang::TypeScript => "npm run build".to_string(),
                    Lang::Go => "go build ./...".to_string(),
                    Lang::Java => "./gradlew build".to_string(),
                };
                let mut out = self.lines_of(size, |c| {
                    if c.rng.chance(0.1) {
                        let p = c.path();
                        format!("warning: unused variable: `{}`\n  --> {p}:{}:{}", c.snake(), c.rng.range(1, 900), c.rng.range(1, 60))
                    } else {
                        format!(
                            "   Compiling {}-{} v{}.{}.{}",
                            c.mid_word(),
                            c.mid_word(),
                            c.rng.below(3),
                            c.rng.below(40),
                            c.rng.below(20)
                        )
                    }
                });
                if fail {
                    let p = self.path();
                    out.push_str(&format!(
                        "\nerror[E0{}]: mismatched types\n  --> {p}:{}:{}\n{}",
                        self.rng.range(100, 800),
                        self.rng.range(1, 900),
                        self.rng.range(1, 60),
                        self.stack_trace()
                    ));
                    (cmd, out, 1)
                } else {
                    out.push_str(&format!(
                        "\n    Finished `release` profile [optimized] target(s) in {}.{:02}s",
                        self.rng.range(1, 200),
                        self.rng.below(100)
                    ));
                    (cmd, out, 0)
                }
            }
            // Search hits across the project.
            3 => {
                let id = self.camel(false);
                let cmd = format!("rg -n \"{id}\" {}", self.proj.path);
                if fail && size < 400 {
                    return (cmd, String::new(), 1);
                }
                let out = self.lines_of(size, |c| format!("{}:{}:    {}", c.path(), c.rng.range(1, 2_000), c.code_line().trim()));
                (cmd, out, 0)
            }
            // History and changes.
            4 => {
                if self.rng.chance(0.5) {
                    let cmd = format!("git log --stat -n {}", self.rng.range(3, 20));
                    let out = self.lines_of(size, |c| {
                        let (hash, clock, msg, p) = (c.hex(16), c.clock(), c.sentence(), c.path());
                        format!("commit {hash}{}\nDate:   {clock}\n\n    {msg}\n\n {p} | {} +++--", c.hex(16), c.rng.range(1, 90))
                    });
                    (cmd, out, 0)
                } else {
                    let p = self.path();
                    let cmd = format!("git diff {}", p);
                    let header = format!("diff --git a/{p} b/{p}\nindex {}..{} 100644\n--- a/{p}\n+++ b/{p}", self.hex(7), self.hex(7));
                    let body = self.lines_of(size, |c| {
                        let sign = *c.rng.pick(&[" ", " ", "-", "+", "+"]);
                        if c.rng.chance(0.08) {
                            format!("@@ -{0},{1} +{0},{2} @@", c.rng.range(1, 900), c.rng.range(3, 30), c.rng.range(3, 30))
                        } else {
                            format!("{sign}{}", c.code_line())
                        }
                    });
                    (cmd, format!("{header}\n{body}"), 0)
                }
            }
            // A service's logs, or a listing.
            5 => {
                let cmd = format!("docker compose logs --tail {} {}", self.rng.range(50, 500), self.mid_word());
                let out = self.lines_of(size, |c| c.log_line());
                (cmd, out, 0)
            }
            6 => {
                let cmd = format!("ls -la {}", self.proj.path);
                let out = self.lines_of(size, |c| {
                    let name = format!("{}.{}", c.snake(), *c.rng.pick(&["rs", "py", "ts", "go", "json", "toml", "md", "lock"]));
                    format!(
                        "-rw-r--r--  1 dev dev {:>8} Mar {:>2} {:02}:{:02} {name}",
                        c.rng.below(200_000),
                        c.rng.range(1, 28),
                        c.rng.below(24),
                        c.rng.below(60)
                    )
                });
                (cmd, out, 0)
            }
            // A request to a service: JSON with ids.
            _ => {
                let port = self.rng.range(3000, 9999);
                let w = self.mid_word();
                let cmd = format!("curl -sS http://localhost:{port}/api/{w}");
                if fail {
                    return (cmd, format!("curl: (7) Failed to connect to localhost port {port} after 0 ms: Connection refused"), 7);
                }
                let body = self.lines_of(size, |c| {
                    let (id, clock, k, v) = (c.uuid(), c.clock(), c.snake(), c.word());
                    format!("  {{\"id\": \"{id}\", \"{k}\": \"{v}\", \"updated_at\": \"{clock}\", \"count\": {}}},", c.rng.below(100_000))
                });
                (cmd, format!("{{\"items\": [\n{body}\n]}}"), 0)
            }
        }
    }
}

/// The first line of a prompt, to put a paste under.
fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_normal_draws_center_on_their_median_and_stay_clamped() {
        let mut rng = Rng::derive(1, 2, 3);
        let mut draws: Vec<usize> = (0..4001).map(|_| log_normal(&mut rng, 700.0, 1.3, 0, 30_000)).collect();
        draws.sort_unstable();
        let median = draws[2000];
        assert!((550..900).contains(&median), "median {median}");
        assert!(draws.iter().all(|d| *d <= 30_000));
        assert!(draws[3990] > 5_000, "a long tail: {}", draws[3990]);
    }
}

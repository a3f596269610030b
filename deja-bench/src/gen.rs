//! What a generated benchmark session says. Session `k` of seed `s` is a pure function
//! of `(s, k)`, so the corpus, the needles, the grown tails and the search queries can
//! all be re-derived without storing them.
//!
//! A session is developer talk about one topic in one project: prompts (sometimes
//! pasted stack traces, sometimes Chinese, Japanese or Russian), answers with code
//! blocks and file lists, shell commands with output and exit codes, file reads and
//! edits — 5 to 200 turns. About one session in [`NEEDLE_EVERY`] holds a planted
//! "needle" fact, and a few later sessions hold near-misses of it (two of its three
//! key words), so finding the needle takes ranking, not just matching.

use deja_core::synth::synth_uuid;
use deja_core::{SynthSession, SynthTurn, Timestamp};

use super::vocab::{Rng, Vocab};

mod realistic;

/// The shape of the sessions a generator writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Turns of log-normal length with long tool outputs (test runs, build logs, grep
    /// hits, file dumps, diffs, JSON logs) and many one-off identifiers, calibrated on
    /// real history (see `realistic.rs` and `docs/benchmarks.md`, "The corpora").
    #[default]
    Realistic,
    /// The first profile: short, uniform turns (5–200 a session). Kept so figures
    /// measured on it stay comparable.
    Classic,
}

/// About one session in this many holds a needle.
pub const NEEDLE_EVERY: u64 = 97;
/// Sessions `k + d` for these `d` carry near-misses of the needle in session `k`.
const DISTRACTOR_OFFSETS: [u64; 3] = [7, 13, 31];

const STREAM_SESSION: u64 = 1;
const STREAM_NEEDLE: u64 = 2;
const STREAM_GROW: u64 = 3;
const STREAM_PROJECTS: u64 = 4;
pub const STREAM_QUERY: u64 = 6;

/// 2025-01-01T00:00:00Z; session `k` starts about `k` half-hours later.
const BASE_MS: i64 = 1_735_689_600_000;

/// A planted fact: "the `a` `b` listens on port `port`".
#[derive(Debug, Clone)]
pub struct Needle {
    pub a: &'static str,
    pub b: &'static str,
    pub port: u32,
}

impl Needle {
    pub fn fact(&self) -> String {
        format!("Found it: the {} {} now listens on port {}, so the client config has to point there.", self.a, self.b, self.port)
    }
    /// What a person types: the key words.
    pub fn keyword_query(&self) -> String {
        format!("{} {} port", self.a, self.b)
    }
    /// What a person asks: a question in plain words (lands in the relevance tier).
    pub fn question(&self) -> String {
        format!("which port does the {} {} listen on", self.a, self.b)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Lang {
    Rust,
    Python,
    TypeScript,
    Go,
    Java,
}

#[derive(Clone, Copy, PartialEq)]
enum Script {
    Latin,
    Cjk,
    Cyrillic,
}

const CJK: &[&str] = &[
    "数据库连接超时",
    "请帮我修复这个错误",
    "内存泄漏的问题",
    "部署到生产环境失败",
    "单元测试没有通过",
    "这个函数太慢了",
    "配置文件找不到",
    "为什么构建失败",
    "请检查日志",
    "缓存没有生效",
    "接口返回空值",
    "认证令牌过期了",
    "并发写入冲突",
    "索引重建太慢",
    "ビルドが失敗します",
    "テストが通りません",
    "設定ファイルを確認してください",
    "メモリ使用量が多すぎる",
    "このエラーを直してください",
    "デプロイが止まった",
];

const CYRILLIC: &[&str] = &[
    "почему падает сборка",
    "ошибка подключения к базе данных",
    "исправь этот тест",
    "не работает кэш",
    "посмотри логи сервера",
    "утечка памяти в воркере",
    "миграция не применилась",
    "слишком медленный запрос",
    "проверь конфигурацию",
    "токен истёк",
    "деплой завис",
    "добавь обработку ошибок",
];

/// A code base sessions talk about: its language and the names and files it has, so
/// sessions in one project keep mentioning the same identifiers and paths, as real
/// ones do (a fresh name or file now and then).
struct Project {
    path: String,
    lang: Lang,
    /// Identifiers as their words, written snake_case or camelCase where used.
    names: Vec<Vec<&'static str>>,
    files: Vec<String>,
}

/// Chance that a name or path comes from the project rather than being new.
const FAMILIAR: f64 = 0.85;

/// Everything a session's turns are drawn from.
struct Ctx<'g> {
    g: &'g Generator,
    rng: Rng,
    proj: &'g Project,
    topic: [&'static str; 4],
    lang: Lang,
    script: Script,
}

pub struct Generator {
    pub seed: u64,
    pub profile: Profile,
    pub vocab: Vocab,
    projects: Vec<Project>,
}

/// An index into `n` items skewed towards the front (item 0 is the most used).
fn skewed(rng: &mut Rng, n: usize) -> usize {
    ((n as f64 * rng.unit().powi(2)) as usize).min(n.saturating_sub(1))
}

impl Generator {
    /// The classic profile's generator (what the search queries and tests were written for).
    pub fn new(seed: u64) -> Generator {
        Generator::with_profile(seed, Profile::Classic)
    }

    pub fn with_profile(seed: u64, profile: Profile) -> Generator {
        let mut g = Generator { seed, profile, vocab: Vocab::default(), projects: Vec::new() };
        let mut projects = Vec::with_capacity(48);
        for p in 0..48u64 {
            let mut rng = Rng::derive(seed, STREAM_PROJECTS, p);
            let path = format!("/home/dev/{}-{}", g.vocab.ranked(&mut rng, 80, 1500), g.vocab.ranked(&mut rng, 80, 1500));
            let lang = *rng.pick(&[Lang::Rust, Lang::Python, Lang::TypeScript, Lang::Go, Lang::Java]);
            let names =
                (0..rng.range(150, 400)).map(|_| (0..rng.range(1, 3)).map(|_| g.vocab.ranked(&mut rng, 30, 2000)).collect()).collect();
            projects.push(Project { path, lang, names, files: Vec::new() });
        }
        // Files are named with the project's own names.
        for (i, p) in projects.iter_mut().enumerate() {
            let mut ctx = Ctx {
                g: &g,
                rng: Rng::derive(seed, STREAM_PROJECTS ^ 0xF11E, i as u64),
                proj: p,
                topic: ["", "", "", ""],
                lang: p.lang,
                script: Script::Latin,
            };
            let n = ctx.rng.range(60, 180);
            let files = (0..n).map(|_| ctx.fresh_path()).collect();
            p.files = files;
        }
        g.projects = projects;
        g
    }

    /// Which of `n` harnesses session `k` is written for: in turn, so every harness
    /// gets an equal share however small the corpus.
    pub fn harness_slot(&self, k: u64, n: usize) -> usize {
        (k % n.max(1) as u64) as usize
    }

    /// The needle planted in session `k`, if it holds one.
    pub fn needle(&self, k: u64) -> Option<Needle> {
        let mut rng = Rng::derive(self.seed, STREAM_NEEDLE, k);
        if !rng.next_u64().is_multiple_of(NEEDLE_EVERY) {
            return None;
        }
        let a = self.vocab.ranked(&mut rng, 600, 4500);
        let mut b = self.vocab.ranked(&mut rng, 600, 4500);
        while b == a {
            b = self.vocab.ranked(&mut rng, 600, 4500);
        }
        Some(Needle { a, b, port: 20_000 + rng.below(40_000) as u32 })
    }

    fn start_of(&self, k: u64) -> Timestamp {
        let mut rng = Rng::derive(self.seed, STREAM_SESSION ^ 0xF00D, k);
        Timestamp(BASE_MS + k as i64 * 1_800_000 + rng.below(1_500_000) as i64)
    }

    /// Session `k`'s setting: project, topic words, language and script, and the
    /// generator positioned after drawing them.
    fn setting(&self, k: u64) -> Ctx<'_> {
        let mut rng = Rng::derive(self.seed, STREAM_SESSION, k);
        let proj = rng.pick(&self.projects);
        let topic = [
            self.vocab.ranked(&mut rng, 120, 2500),
            self.vocab.ranked(&mut rng, 120, 2500),
            self.vocab.ranked(&mut rng, 120, 2500),
            self.vocab.ranked(&mut rng, 120, 2500),
        ];
        let script = match rng.below(100) {
            0..=2 => Script::Cjk,
            3..=5 => Script::Cyrillic,
            _ => Script::Latin,
        };
        Ctx { g: self, rng, proj, topic, lang: proj.lang, script }
    }

    /// Session `k`.
    pub fn session(&self, k: u64) -> SynthSession {
        let mut ctx = self.setting(k);
        let project = ctx.proj.path.clone();
        let started = self.start_of(k);
        let mut time = started;
        let mut turns = Vec::new();
        match self.profile {
            Profile::Classic => {
                // Between 5 and 200 turns, skewed short: median about 12, mean about 35.
                let budget = ((5.0 * 40f64.powf(ctx.rng.unit().powi(2))) as usize).clamp(5, 200);
                while turns.len() < budget {
                    ctx.exchange(&mut time, &mut turns);
                }
            }
            Profile::Realistic => {
                for _ in 0..realistic::exchanges(&mut ctx.rng) {
                    ctx.realistic_exchange(&mut time, &mut turns);
                }
            }
        }
        turns.truncate(200);
        if let Some(n) = self.needle(k) {
            let at = turns.len() / 2;
            let t = turns[at].time();
            turns.insert(at, SynthTurn::Assistant { text: format!("{} {}", n.fact(), ctx.sentence()), time: t });
            turns.truncate(200);
        }
        for (i, off) in DISTRACTOR_OFFSETS.iter().enumerate() {
            let Some(n) = k.checked_sub(*off).and_then(|k0| self.needle(k0)) else { continue };
            let other = 20_000 + ctx.rng.below(40_000);
            let text = match i {
                0 => format!("The {} {} settings moved to {}/config/{}.toml last week.", n.a, n.b, ctx.proj.path, n.b),
                1 => format!("Port {other} is already taken by the {} sidecar, pick another one.", n.a),
                _ => format!("Our {} listens on port {other} in staging.", n.b),
            };
            let at = ctx.rng.below(turns.len());
            let t = turns[at].time();
            turns.insert(at, SynthTurn::Assistant { text, time: t });
        }
        SynthSession { id: synth_uuid(k, self.seed ^ 0xBE7C), project, title: None, started, turns }
    }

    /// Turns appended to session `k` when it grows (round `round` of growth): a new
    /// prompt, a little work, an answer — after the session's last turn.
    pub fn growth(&self, session: &SynthSession, k: u64, round: u64) -> Vec<SynthTurn> {
        let mut ctx = self.setting(k);
        ctx.rng = Rng::derive(self.seed, STREAM_GROW, k ^ (round << 40));
        let mut time = Timestamp(session.turns.last().map_or(session.started, SynthTurn::time).0 + 3_600_000);
        let mut turns = Vec::new();
        match self.profile {
            Profile::Classic => ctx.exchange(&mut time, &mut turns),
            Profile::Realistic => ctx.realistic_exchange(&mut time, &mut turns),
        }
        turns
    }

    /// A typical query of each kind, drawn from session `k`'s own text (so it exists).
    pub fn pasted_error_line(&self, k: u64) -> Option<String> {
        let s = self.session(k);
        s.turns.iter().find_map(|t| match t {
            SynthTurn::Shell { output, exit_code, .. } if *exit_code != 0 => {
                output.lines().map(str::trim).rfind(|l| l.len() > 24 && l.contains(' ')).map(str::to_string)
            }
            _ => None,
        })
    }

    /// Two or three consecutive words of an assistant sentence of session `k`.
    pub fn phrase(&self, k: u64, rng: &mut Rng) -> Option<String> {
        let s = self.session(k);
        let answers: Vec<&String> = s
            .turns
            .iter()
            .filter_map(|t| match t {
                SynthTurn::Assistant { text, .. } => Some(text),
                _ => None,
            })
            .collect();
        let text = answers.get(rng.below(answers.len()))?;
        let line = text.lines().next()?;
        let words: Vec<&str> = line.split_whitespace().collect();
        let n = rng.range(2, 3);
        // Consecutive plain words only, so the phrase is in the text as typed.
        let starts: Vec<usize> = (0..words.len().saturating_sub(n - 1))
            .filter(|&i| words[i..i + n].iter().all(|w| w.chars().all(char::is_alphabetic)))
            .collect();
        let at = *starts.get(rng.below(starts.len()))?;
        Some(words[at..at + n].join(" ").to_lowercase())
    }
}

impl Ctx<'_> {
    fn word(&mut self) -> &'static str {
        if self.rng.chance(0.12) {
            self.topic[self.rng.below(self.topic.len())]
        } else {
            self.g.vocab.word(&mut self.rng)
        }
    }

    fn mid_word(&mut self) -> &'static str {
        self.g.vocab.ranked(&mut self.rng, 30, 2000)
    }

    /// The words of an identifier: mostly one the project already has.
    fn name(&mut self) -> Vec<&'static str> {
        if !self.proj.names.is_empty() && self.rng.chance(FAMILIAR) {
            return self.proj.names[skewed(&mut self.rng, self.proj.names.len())].clone();
        }
        let n = self.rng.range(1, 3);
        (0..n).map(|i| if i == 0 && self.rng.chance(0.3) && !self.topic[0].is_empty() { self.topic[0] } else { self.mid_word() }).collect()
    }

    fn snake(&mut self) -> String {
        self.name().join("_")
    }

    fn camel(&mut self, upper_first: bool) -> String {
        let mut out = String::new();
        for (i, w) in self.name().into_iter().enumerate() {
            let mut cs = w.chars();
            if let Some(c) = cs.next() {
                if i == 0 && !upper_first {
                    out.push(c);
                } else {
                    out.extend(c.to_uppercase());
                }
                out.push_str(cs.as_str());
            }
        }
        out
    }

    fn ext(&self) -> &'static str {
        match self.lang {
            Lang::Rust => "rs",
            Lang::Python => "py",
            Lang::TypeScript => "ts",
            Lang::Go => "go",
            Lang::Java => "java",
        }
    }

    /// A file of the project: mostly one it already has.
    fn path(&mut self) -> String {
        if !self.proj.files.is_empty() && self.rng.chance(FAMILIAR) {
            return self.proj.files[skewed(&mut self.rng, self.proj.files.len())].clone();
        }
        self.fresh_path()
    }

    fn fresh_path(&mut self) -> String {
        let dir = match self.rng.below(5) {
            0 => "src".to_string(),
            1 => format!("src/{}", self.mid_word()),
            2 => "tests".to_string(),
            3 => format!("internal/{}", self.snake()),
            _ => format!("lib/{}", self.mid_word()),
        };
        let name = self.snake();
        let ext = if self.rng.chance(0.1) { *self.rng.pick(&["toml", "yaml", "json", "md"]) } else { self.ext() };
        format!("{}/{dir}/{name}.{ext}", self.proj.path)
    }

    fn sentence(&mut self) -> String {
        let n = self.rng.range(6, 18);
        let mut s = String::with_capacity(n * 8);
        for i in 0..n {
            if i > 0 {
                s.push(' ');
            }
            match self.rng.below(40) {
                0 => {
                    let id = self.camel(false);
                    s.push('`');
                    s.push_str(&id);
                    s.push('`');
                }
                1 => {
                    let p = self.path();
                    s.push_str(&p);
                }
                _ => {
                    let w = self.word();
                    if i == 0 {
                        let mut cs = w.chars();
                        if let Some(c) = cs.next() {
                            s.extend(c.to_uppercase());
                            s.push_str(cs.as_str());
                        }
                    } else {
                        s.push_str(w);
                    }
                }
            }
        }
        s.push_str(if self.rng.chance(0.15) { "?" } else { "." });
        s
    }

    fn paragraph(&mut self, lo: usize, hi: usize) -> String {
        let n = self.rng.range(lo, hi);
        (0..n).map(|_| self.sentence()).collect::<Vec<_>>().join(" ")
    }

    fn code_line(&mut self) -> String {
        match self.lang {
            Lang::Rust => match self.rng.below(7) {
                0 => format!("let {} = {}.{}(&{})?;", self.snake(), self.snake(), self.snake(), self.snake()),
                1 => format!("fn {}({}: &{}) -> Result<{}> {{", self.snake(), self.snake(), self.camel(true), self.camel(true)),
                2 => format!("    if {}.is_empty() {{ return Err(Error::{}); }}", self.snake(), self.camel(true)),
                3 => format!("use crate::{}::{};", self.snake(), self.camel(true)),
                4 => "#[derive(Debug, Clone, PartialEq)]".to_string(),
                5 => format!("struct {} {{ {}: u64, {}: String }}", self.camel(true), self.snake(), self.snake()),
                _ => "}".to_string(),
            },
            Lang::Python => match self.rng.below(7) {
                0 => format!("def {}({}, {}=None):", self.snake(), self.snake(), self.snake()),
                1 => format!("    return {}.{}({})", self.snake(), self.snake(), self.snake()),
                2 => format!("from {}.{} import {}", self.snake(), self.snake(), self.camel(true)),
                3 => format!("    if not {}:", self.snake()),
                4 => format!("        raise {}Error(\"{} {}\")", self.camel(true), self.word(), self.word()),
                5 => format!("class {}({}):", self.camel(true), self.camel(true)),
                _ => format!("    {} = {}[\"{}\"]", self.snake(), self.snake(), self.mid_word()),
            },
            Lang::TypeScript => match self.rng.below(6) {
                0 => format!(
                    "export async function {}({}: {}): Promise<{}> {{",
                    self.camel(false),
                    self.camel(false),
                    self.camel(true),
                    self.camel(true)
                ),
                1 => format!("  const {} = await {}.{}({});", self.camel(false), self.camel(false), self.camel(false), self.camel(false)),
                2 => format!("import {{ {} }} from './{}';", self.camel(true), self.snake()),
                3 => format!("  return {}?.{} ?? null;", self.camel(false), self.camel(false)),
                4 => format!("  if (!{}) throw new Error('{} {}');", self.camel(false), self.word(), self.word()),
                _ => "}".to_string(),
            },
            Lang::Go => match self.rng.below(6) {
                0 => format!("func (s *{}) {}(ctx context.Context) error {{", self.camel(true), self.camel(true)),
                1 => format!("\t{}, err := s.{}(ctx)", self.camel(false), self.camel(false)),
                2 => "\tif err != nil {".to_string(),
                3 => format!("\t\treturn fmt.Errorf(\"{} {}: %w\", err)", self.word(), self.word()),
                4 => "\t}".to_string(),
                _ => format!("\treturn s.{}.Close()", self.camel(false)),
            },
            Lang::Java => match self.rng.below(5) {
                0 => format!("public {} {}({} {}) {{", self.camel(true), self.camel(false), self.camel(true), self.camel(false)),
                1 => format!("    return this.{}.{}({});", self.camel(false), self.camel(false), self.camel(false)),
                2 => format!("import com.acme.{}.{};", self.snake().replace('_', ""), self.camel(true)),
                3 => {
                    format!("    if ({} == null) throw new IllegalStateException(\"{} {}\");", self.camel(false), self.word(), self.word())
                }
                _ => "}".to_string(),
            },
        }
    }

    fn code_block(&mut self, lo: usize, hi: usize) -> String {
        let n = self.rng.range(lo, hi);
        (0..n).map(|_| self.code_line()).collect::<Vec<_>>().join("\n")
    }

    fn fence(&self) -> &'static str {
        match self.lang {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::TypeScript => "ts",
            Lang::Go => "go",
            Lang::Java => "java",
        }
    }

    fn stack_trace(&mut self) -> String {
        let line = self.rng.range(10, 900);
        let col = self.rng.range(1, 80);
        match self.lang {
            Lang::Rust => format!(
                "thread 'main' panicked at src/{}.rs:{line}:{col}:\ncalled `Result::unwrap()` on an `Err` value: {}(\"{} {} {}\")\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
                self.snake(),
                self.camel(true),
                self.word(),
                self.word(),
                self.mid_word()
            ),
            Lang::Python => format!(
                "Traceback (most recent call last):\n  File \"{}\", line {line}, in {}\n    {}\n  File \"{}\", line {}, in {}\n    {}\n{}Error: {} {} {}",
                self.path(),
                self.snake(),
                self.code_line().trim(),
                self.path(),
                self.rng.range(10, 400),
                self.snake(),
                self.code_line().trim(),
                self.camel(true),
                self.word(),
                self.mid_word(),
                self.word()
            ),
            Lang::TypeScript => format!(
                "TypeError: Cannot read properties of undefined (reading '{}')\n    at {} ({}:{line}:{col})\n    at async {} ({}:{}:{})",
                self.camel(false),
                self.camel(true),
                self.path(),
                self.camel(true),
                self.path(),
                self.rng.range(1, 300),
                self.rng.range(1, 40)
            ),
            Lang::Go => format!(
                "panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x18 pc=0x4a2b1c]\n\ngoroutine 1 [running]:\nmain.(*{}).{}(...)\n\t{}:{line} +0x1d",
                self.camel(true),
                self.camel(true),
                self.path()
            ),
            Lang::Java => format!(
                "Exception in thread \"main\" java.lang.NullPointerException: Cannot invoke \"{}.{}()\" because \"{}\" is null\n\tat com.acme.{}.{}.{}({}.java:{line})",
                self.camel(true),
                self.camel(false),
                self.camel(false),
                self.mid_word(),
                self.camel(true),
                self.camel(false),
                self.camel(true)
            ),
        }
    }

    /// A shell command, its output and exit code.
    fn shell(&mut self) -> (String, String, i64) {
        let fail = self.rng.chance(0.25);
        let w = self.mid_word();
        let [crate_name, _, package, _] = self.topic;
        match self.rng.below(9) {
            0 | 1 => {
                let (cmd, ok) = match self.lang {
                    Lang::Rust => {
                        (format!("cargo test -p {crate_name} {}", self.snake()), "test result: ok. 14 passed; 0 failed; 0 ignored")
                    }
                    Lang::Python => (format!("pytest tests/test_{}.py -x -q", self.snake()), "14 passed in 0.84s"),
                    Lang::TypeScript => (format!("npx jest {}", self.path()), "Tests:       14 passed, 14 total"),
                    Lang::Go => (format!("go test ./{package}/..."), "ok  \tgithub.com/acme/svc/internal\t0.412s"),
                    Lang::Java => (format!("./gradlew test --tests '*{}*'", self.camel(true)), "BUILD SUCCESSFUL in 14s"),
                };
                if fail {
                    let code = match self.lang {
                        Lang::Rust => 101,
                        _ => 1,
                    };
                    (cmd, self.stack_trace(), code)
                } else {
                    (cmd, ok.to_string(), 0)
                }
            }
            2 => {
                let cmd = format!("git log --oneline -n {}", self.rng.range(3, 8));
                let n = self.rng.range(3, 8);
                let out =
                    (0..n).map(|_| format!("{:07x} {}", self.rng.next_u64() & 0xfff_ffff, self.sentence())).collect::<Vec<_>>().join("\n");
                (cmd, out, 0)
            }
            3 => {
                let id = self.camel(false);
                let cmd = format!("rg -n \"{id}\" {}", self.proj.path);
                if fail {
                    (cmd, String::new(), 1)
                } else {
                    let n = self.rng.range(1, 6);
                    let out = (0..n)
                        .map(|_| format!("{}:{}:    {}", self.path(), self.rng.range(1, 500), self.code_line().trim()))
                        .collect::<Vec<_>>()
                        .join("\n");
                    (cmd, out, 0)
                }
            }
            4 => {
                let port = self.rng.range(3000, 9999);
                let cmd = format!("curl -sS http://localhost:{port}/{w}");
                if fail {
                    (cmd, format!("curl: (7) Failed to connect to localhost port {port} after 0 ms: Connection refused"), 7)
                } else {
                    (cmd, format!("{{\"status\":\"ok\",\"{w}\":{}}}", self.rng.below(1000)), 0)
                }
            }
            5 => {
                let cmd = format!("make {w}");
                if fail {
                    (cmd, format!("{}\nmake: *** [Makefile:{}: {w}] Error 2", self.stack_trace(), self.rng.range(5, 120)), 2)
                } else {
                    (cmd, format!("{} done", self.sentence()), 0)
                }
            }
            6 => {
                let cmd = format!("docker compose up -d {w}");
                if fail {
                    let port = self.rng.range(3000, 9999);
                    (cmd, format!("Error response from daemon: driver failed programming external connectivity on endpoint {w}: Bind for 0.0.0.0:{port} failed: port is already allocated"), 1)
                } else {
                    (cmd, format!(" ✔ Container {}-{w}-1  Started", self.topic[0]), 0)
                }
            }
            7 => {
                let cmd = format!("kubectl get pods -n {w}");
                let n = self.rng.range(2, 6);
                let out = std::iter::once("NAME                         READY   STATUS    RESTARTS   AGE".to_string())
                    .chain((0..n).map(|_| {
                        let status = if fail && self.rng.chance(0.5) { "CrashLoopBackOff" } else { "Running" };
                        format!(
                            "{}-{:05x}   1/1     {status}   {}          {}h",
                            self.snake().replace('_', "-"),
                            self.rng.below(0xfffff),
                            self.rng.below(9),
                            self.rng.range(1, 90)
                        )
                    }))
                    .collect::<Vec<_>>()
                    .join("\n");
                (cmd, out, 0)
            }
            _ => {
                let secs = self.rng.range(30, 600);
                let cmd = format!("timeout {secs} ./scripts/{}.sh", self.snake());
                if fail {
                    (cmd, format!("{}\nTerminated", self.sentence()), 124)
                } else {
                    (cmd, self.paragraph(1, 3), 0)
                }
            }
        }
    }

    fn prompt(&mut self) -> String {
        let [t0, t1, _, _] = self.topic;
        match self.script {
            Script::Cjk if self.rng.chance(0.7) => {
                let a = *self.rng.pick(CJK);
                let b = *self.rng.pick(CJK);
                format!("{a}，`{}` {b}。{}", self.camel(false), self.path())
            }
            Script::Cyrillic if self.rng.chance(0.7) => {
                let a = *self.rng.pick(CYRILLIC);
                let b = *self.rng.pick(CYRILLIC);
                format!("{a}: `{}` — {b}. {}", self.camel(false), self.path())
            }
            _ => match self.rng.below(6) {
                0 => format!("{}\n\n```\n{}\n```", self.sentence(), self.stack_trace()),
                1 => format!("why does `{}` fail when the {} {t0} is {}?", self.camel(false), self.word(), self.word()),
                2 => format!("can you look at {} and {} the {t1} {}?", self.path(), self.mid_word(), self.word()),
                _ => self.paragraph(1, 3),
            },
        }
    }

    fn answer(&mut self) -> String {
        let mut s = self.paragraph(2, 5);
        match self.rng.below(10) {
            0..=2 => {
                let fence = self.fence();
                let code = self.code_block(4, 18);
                s.push_str(&format!("\n\n```{fence}\n{code}\n```\n\n{}", self.sentence()));
            }
            3 | 4 => {
                let n = self.rng.range(2, 5);
                for _ in 0..n {
                    let p = self.path();
                    let sent = self.sentence();
                    s.push_str(&format!("\n- `{p}`: {sent}"));
                }
            }
            _ => {}
        }
        s
    }

    /// One prompt, some work, one answer.
    fn exchange(&mut self, time: &mut Timestamp, turns: &mut Vec<SynthTurn>) {
        let mut tick = |rng: &mut Rng| {
            time.0 += 5_000 + rng.below(85_000) as i64;
            *time
        };
        let text = self.prompt();
        turns.push(SynthTurn::User { text, time: tick(&mut self.rng) });
        let actions = self.rng.range(0, 5);
        for _ in 0..actions {
            if self.rng.chance(0.2) {
                let text = self.paragraph(1, 2);
                turns.push(SynthTurn::Reasoning { text, time: tick(&mut self.rng) });
            }
            match self.rng.below(10) {
                0..=4 => {
                    let (command, output, exit_code) = self.shell();
                    turns.push(SynthTurn::Shell { command, output, exit_code, time: tick(&mut self.rng) });
                }
                5..=7 => {
                    let path = self.path();
                    let output = self.code_block(5, 30);
                    turns.push(SynthTurn::Read { path, output, time: tick(&mut self.rng) });
                }
                _ => {
                    let path = self.path();
                    let old = self.code_block(1, 4);
                    let new = self.code_block(1, 5);
                    turns.push(SynthTurn::Edit { path, old, new, time: tick(&mut self.rng) });
                }
            }
            if self.rng.chance(0.3) {
                let text = self.sentence();
                turns.push(SynthTurn::Assistant { text, time: tick(&mut self.rng) });
            }
        }
        let text = self.answer();
        turns.push(SynthTurn::Assistant { text, time: tick(&mut self.rng) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(s: &SynthSession) -> String {
        s.turns
            .iter()
            .map(|t| match t {
                SynthTurn::User { text, .. } | SynthTurn::Assistant { text, .. } | SynthTurn::Reasoning { text, .. } => text.clone(),
                SynthTurn::Shell { command, output, .. } => format!("{command}\n{output}"),
                SynthTurn::Read { path, output, .. } => format!("{path}\n{output}"),
                SynthTurn::Edit { path, old, new, .. } => format!("{path}\n{old}\n{new}"),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn sessions_are_a_pure_function_of_seed_and_number() {
        let g = Generator::new(9);
        let (a, b) = (g.session(12), Generator::new(9).session(12));
        assert_eq!(a.id, b.id);
        assert_eq!(texts(&a), texts(&b));
        assert_ne!(texts(&a), texts(&g.session(13)));
        assert_ne!(texts(&a), texts(&Generator::new(10).session(12)));
    }

    #[test]
    fn sessions_have_5_to_200_turns_and_the_promised_ingredients() {
        let g = Generator::new(1);
        let mut all = String::new();
        let mut shells = 0;
        let mut failures = 0;
        for k in 0..300 {
            let s = g.session(k);
            assert!((5..=204).contains(&s.turns.len()), "session {k}: {} turns", s.turns.len());
            for t in &s.turns {
                if let SynthTurn::Shell { exit_code, .. } = t {
                    shells += 1;
                    failures += usize::from(*exit_code != 0);
                }
            }
            all.push_str(&texts(&s));
        }
        assert!(failures > shells / 10 && failures < shells / 2, "{failures}/{shells}");
        assert!(all.contains("```"));
        assert!(all.chars().any(|c| ('\u{4E00}'..='\u{9FFF}').contains(&c)), "no CJK");
        assert!(all.chars().any(|c| ('\u{0400}'..='\u{04FF}').contains(&c)), "no Cyrillic");
        assert!(all.contains("Traceback") || all.contains("panicked at") || all.contains("Exception in thread"));
    }

    #[test]
    fn needles_are_planted_where_announced_with_near_misses_later() {
        let g = Generator::new(5);
        let k = (0..5000).find(|k| g.needle(*k).is_some()).expect("a needle in 5000 sessions");
        let n = g.needle(k).unwrap();
        assert!(texts(&g.session(k)).contains(&n.fact()));
        let later = texts(&g.session(k + DISTRACTOR_OFFSETS[0]));
        assert!(later.contains(&format!("{} {}", n.a, n.b)) && !later.contains(&n.fact()));
        let count = (0..5000).filter(|k| g.needle(*k).is_some()).count();
        assert!((20..90).contains(&count), "{count} needles in 5000 sessions");
    }

    /// The realistic profile's shape, as `docs/benchmarks.md` reports it: records a
    /// session (a tool call and its result are two), characters a record, the share of
    /// tool records and how long the long tail of outputs runs.
    #[test]
    fn realistic_sessions_have_the_calibrated_shape() {
        let g = Generator::with_profile(1, Profile::Realistic);
        let (mut records, mut chars, mut tool_records) = (0usize, 0usize, 0usize);
        let mut outputs: Vec<usize> = Vec::new();
        let n = 600;
        for k in 0..n {
            let s = g.session(k);
            for t in &s.turns {
                let (text_chars, is_tool) = match t {
                    SynthTurn::User { text, .. } | SynthTurn::Assistant { text, .. } | SynthTurn::Reasoning { text, .. } => {
                        (text.len(), false)
                    }
                    SynthTurn::Shell { command, output, .. } => {
                        outputs.push(output.len());
                        (command.len() + output.len(), true)
                    }
                    SynthTurn::Read { path, output, .. } => {
                        outputs.push(output.len());
                        (path.len() + output.len(), true)
                    }
                    SynthTurn::Edit { path, old, new, .. } => (path.len() + old.len() + new.len(), true),
                };
                chars += text_chars;
                records += if is_tool { 2 } else { 1 };
                tool_records += if is_tool { 2 } else { 0 };
            }
        }
        outputs.sort_unstable();
        let per_session = records as f64 / n as f64;
        let per_record = chars as f64 / records as f64;
        let tool_share = tool_records as f64 / records as f64;
        let median_output = outputs[outputs.len() / 2];
        let p99_output = outputs[outputs.len() * 99 / 100];
        assert!((20.0..36.0).contains(&per_session), "{per_session} records a session");
        assert!((500.0..1100.0).contains(&per_record), "{per_record} characters a record");
        assert!((0.45..0.75).contains(&tool_share), "{tool_share} of records are tool calls or results");
        assert!((500..1000).contains(&median_output), "median tool output {median_output}");
        assert!(p99_output > 10_000, "p99 tool output {p99_output}");
    }

    #[test]
    fn growth_comes_after_the_last_turn() {
        let g = Generator::new(2);
        let s = g.session(4);
        let more = g.growth(&s, 4, 1);
        assert!(!more.is_empty());
        let last = s.turns.last().unwrap().time();
        assert!(more.iter().all(|t| t.time() > last));
    }
}

//! Measuring: latency percentiles, this process's peak memory and CPU time (from
//! `/proc`, Linux only — elsewhere they read as unknown), the machine a figure was taken
//! on, and a small work-sharing loop over a fixed number of threads.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde::Serialize;

/// p50 / p95 / max / mean of a set of durations, in milliseconds.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Latency {
    pub n: usize,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub max_ms: f64,
    pub mean_ms: f64,
}

impl Latency {
    pub fn of(samples: &[Duration]) -> Latency {
        let mut ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
        ms.sort_by(f64::total_cmp);
        if ms.is_empty() {
            return Latency::default();
        }
        Latency {
            n: ms.len(),
            p50_ms: percentile(&ms, 50.0),
            p95_ms: percentile(&ms, 95.0),
            max_ms: ms[ms.len() - 1],
            mean_ms: ms.iter().sum::<f64>() / ms.len() as f64,
        }
    }
}

/// The nearest-rank percentile of ascending `sorted` (empty → 0).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    percentile(&v, 50.0)
}

/// Peak resident memory of this process so far (`VmHWM`), in bytes: the reading the
/// indexer's stages report too.
pub use deja_core::index::indexer::peak_rss_bytes as peak_rss;

/// Resets the peak so the next [`peak_rss`] covers only what follows. Returns false
/// where the kernel does not allow it (then the peak covers the whole process).
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// User + system CPU time of this process (all threads).
pub fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are the 12th and
    // 13th of those, in USER_HZ ticks (100 per second on Linux).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// The machine a figure was measured on.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub cores: usize,
    pub memory_gib: f64,
    pub cpu: String,
    pub os: String,
    /// The 1-minute load average when the benchmark started and when it ended
    /// (`/proc/loadavg`): a figure taken beside other work shows it.
    pub load_start: Option<f64>,
    pub load_end: Option<f64>,
}

/// The 1-minute load average.
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg").ok()?.split_whitespace().next()?.parse().ok()
}

impl Machine {
    pub fn here() -> Machine {
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let mem_kib: f64 = meminfo
            .lines()
            .find(|l| l.starts_with("MemTotal:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0);
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split(':').nth(1))
            .map_or_else(|| "unknown".to_string(), |s| s.trim().to_string());
        Machine {
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_gib: (mem_kib / (1024.0 * 1024.0) * 10.0).round() / 10.0,
            cpu,
            os: std::env::consts::OS.to_string(),
            load_start: load_average(),
            load_end: None,
        }
    }

    /// The machine at the benchmark's end: the load average now.
    pub fn ended(mut self) -> Machine {
        self.load_end = load_average();
        self
    }

    pub fn line(&self) -> String {
        let load = match (self.load_start, self.load_end) {
            (Some(a), Some(b)) => format!(", load average {a:.2} → {b:.2}"),
            (Some(a), None) => format!(", load average {a:.2}"),
            _ => String::new(),
        };
        format!("{} cores ({}), {:.1} GiB memory, {}{load}", self.cores, self.cpu, self.memory_gib, self.os)
    }
}

/// Calls `f(i)` for every `i` in `0..n` on `threads` threads, each taking the next
/// index; stops handing out indexes once `stop()` is true.
pub fn parallel_for(n: usize, threads: usize, stop: &(dyn Fn() -> bool + Sync), f: &(dyn Fn(usize) + Sync)) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| loop {
                if stop() {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                f(i);
            });
        }
    });
}

/// Where the first relevant item landed in each of many ranked lists, summed up as
/// hit@1/5/10 and mean reciprocal rank (a list without one counts 0).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RankTally {
    pub n: u64,
    hit1: u64,
    hit5: u64,
    hit10: u64,
    rr: f64,
}

/// The rates of a [`RankTally`], as fractions.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct RankRates {
    pub questions: u64,
    #[serde(rename = "hit@1")]
    pub hit1: f64,
    #[serde(rename = "hit@5")]
    pub hit5: f64,
    #[serde(rename = "hit@10")]
    pub hit10: f64,
    pub mrr: f64,
}

impl RankRates {
    /// The columns [`RankRates::row`] fills.
    pub const HEADER: [&'static str; 6] = ["questions", "n", "hit@1", "hit@5", "hit@10", "MRR"];

    /// One row of a rank table: the name, the count, hit@1/5/10 as percentages, MRR.
    pub fn row(&self, name: impl Into<String>) -> Vec<String> {
        let pct = |x: f64| format!("{:.1}%", x * 100.0);
        vec![name.into(), self.questions.to_string(), pct(self.hit1), pct(self.hit5), pct(self.hit10), format!("{:.3}", self.mrr)]
    }
}

/// The file `--dump` names, opened for writing (`None` without one).
pub fn open_dump(path: Option<&Path>) -> anyhow::Result<Option<std::io::BufWriter<std::fs::File>>> {
    use anyhow::Context;
    path.map(|p| std::fs::File::create(p).map(std::io::BufWriter::new).with_context(|| format!("creating {}", p.display()))).transpose()
}

/// Flushes the dump opened by [`open_dump`], naming the file if it fails.
pub fn finish_dump(dump: Option<std::io::BufWriter<std::fs::File>>, path: Option<&Path>) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::io::Write;
    if let (Some(mut d), Some(p)) = (dump, path) {
        d.flush().with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}

impl RankTally {
    /// Records one list: `rank` is the 1-based position of the first relevant item.
    pub fn add(&mut self, rank: Option<usize>) {
        self.n += 1;
        if let Some(r) = rank.filter(|r| *r >= 1) {
            self.hit1 += u64::from(r <= 1);
            self.hit5 += u64::from(r <= 5);
            self.hit10 += u64::from(r <= 10);
            self.rr += 1.0 / r as f64;
        }
    }

    pub fn merge(&mut self, other: &RankTally) {
        self.n += other.n;
        self.hit1 += other.hit1;
        self.hit5 += other.hit5;
        self.hit10 += other.hit10;
        self.rr += other.rr;
    }

    pub fn rates(&self) -> RankRates {
        let d = self.n.max(1) as f64;
        RankRates {
            questions: self.n,
            hit1: self.hit1 as f64 / d,
            hit5: self.hit5 as f64 / d,
            hit10: self.hit10 as f64 / d,
            mrr: self.rr / d,
        }
    }
}

/// The 1-based position of the first item of `ranked` that `relevant` accepts.
pub fn first_relevant<T>(ranked: &[T], relevant: impl Fn(&T) -> bool) -> Option<usize> {
    ranked.iter().position(relevant).map(|i| i + 1)
}

/// Threads to use: every core.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A size in decimal units (1 MB = 10^6 bytes), the units `--size` takes.
pub fn bytes(n: u64) -> String {
    let v = n as f64;
    if v >= 1e9 {
        format!("{:.2} GB", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.1} MB", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} kB", v / 1e3)
    } else {
        format!("{n} B")
    }
}

/// Megabytes (10^6 bytes) per second.
pub fn mb_per_s(bytes: u64, d: Duration) -> f64 {
    bytes as f64 / 1e6 / d.as_secs_f64().max(1e-9)
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 10.0);
        assert_eq!(percentile(&v, 95.0), 19.0);
        assert_eq!(percentile(&v, 100.0), 20.0);
        assert_eq!(percentile(&[], 50.0), 0.0);
        assert_eq!((bytes(999), bytes(200_000_000), bytes(1_000_000_000)), ("999 B".into(), "200.0 MB".into(), "1.00 GB".into()));
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        let l = Latency::of(&[Duration::from_millis(2), Duration::from_millis(4), Duration::from_millis(9)]);
        assert_eq!((l.n, l.p50_ms, l.max_ms, l.mean_ms), (3, 4.0, 9.0, 5.0));
    }

    #[test]
    fn rank_tally_computes_hits_and_mrr() {
        let mut t = RankTally::default();
        for rank in [Some(1), Some(2), Some(7), None] {
            t.add(rank);
        }
        let r = t.rates();
        assert_eq!(r.questions, 4);
        assert_eq!((r.hit1, r.hit5, r.hit10), (0.25, 0.5, 0.75));
        assert!((r.mrr - (1.0 + 0.5 + 1.0 / 7.0) / 4.0).abs() < 1e-12);
        let mut all = RankTally::default();
        all.merge(&t);
        all.merge(&t);
        assert_eq!(all.rates().hit5, 0.5);
        assert_eq!(all.n, 8);
        assert_eq!(RankTally::default().rates().mrr, 0.0);
        assert_eq!(first_relevant(&[3, 8, 5, 8], |x| *x == 8), Some(2));
        assert_eq!(first_relevant(&[3], |x| *x == 8), None);
    }

    #[test]
    fn parallel_for_visits_every_index_once() {
        let seen: Vec<AtomicUsize> = (0..100).map(|_| AtomicUsize::new(0)).collect();
        parallel_for(100, 3, &|| false, &|i| {
            seen[i].fetch_add(1, Ordering::Relaxed);
        });
        assert!(seen.iter().all(|s| s.load(Ordering::Relaxed) == 1));
    }
}

//! `cargo xtask fuzz [--cases N] [--adapter ID]… [--seed S] [--debug]`: the long,
//! benchmark-style run of the fuzzing-style property tests that CI runs with a few cases:
//! every adapter's kit mutation checks (`conformance_arbitrary_bytes`,
//! `conformance_mutations`, see `deja-core/src/testkit/fuzz.rs`), the shared readers'
//! and parsers' properties (`deja-core/src/robustness.rs`) and the MCP server's
//! (`tests/fuzz_mcp.rs`), each with `DEJA_FUZZ_CASES=N`. The tests are the CI tests; this
//! only builds them in release mode (`--debug` keeps the dev profile), runs them one crate
//! at a time and prints what ran and every failure report (adapter, fixture, seed,
//! mutation, and the `DEJA_FUZZ_REPLAY` line that re-runs it).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context, Result};

pub const USAGE: &str = "usage: cargo xtask fuzz [--cases N] [--adapter ID]... [--seed S] [--debug]";

struct Options {
    cases: u64,
    adapters: Vec<String>,
    seed: Option<String>,
    release: bool,
}

fn parse_args(args: &[String]) -> Result<Options> {
    let mut o = Options { cases: 2000, adapters: Vec::new(), seed: None, release: true };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let mut value = || inline.clone().or_else(|| it.next().cloned()).with_context(|| format!("{flag} needs a value\n{USAGE}"));
        match flag {
            "--cases" => {
                let v = value()?;
                o.cases = v.parse().with_context(|| format!("--cases {v:?} is not a number\n{USAGE}"))?;
            }
            "--adapter" => o.adapters.push(value()?),
            "--seed" => o.seed = Some(value()?),
            "--debug" => o.release = false,
            other => bail!("unexpected argument {other:?}\n{USAGE}"),
        }
    }
    Ok(o)
}

/// One cargo test run: what it is, and its arguments after `cargo test`.
struct Job {
    name: String,
    args: Vec<String>,
}

pub fn run(root: &Path, args: &[String]) -> Result<()> {
    let o = parse_args(args)?;
    let known: Vec<String> = std::fs::read_dir(root.join("adapters"))
        .context("listing adapters/")?
        .flatten()
        .filter(|e| e.path().join("tests/adapter.rs").is_file())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    for a in &o.adapters {
        if !known.contains(a) {
            bail!("no adapter `{a}` (adapters/{a}/tests/adapter.rs); known: {}", known.join(", "));
        }
    }
    let adapters = if o.adapters.is_empty() { known } else { o.adapters.clone() };
    let mut jobs: Vec<Job> = adapters
        .iter()
        .map(|id| Job {
            name: format!("kit {id}"),
            args: ["-p", &format!("deja-adapter-{id}"), "--test", "adapter", "--", "conformance_arbitrary_bytes", "conformance_mutations"]
                .map(String::from)
                .to_vec(),
        })
        .collect();
    if o.adapters.is_empty() {
        jobs.push(Job {
            name: "core readers and parsers".into(),
            args: ["-p", "deja-core", "--lib", "--", "robustness"].map(String::from).to_vec(),
        });
        jobs.push(Job {
            name: "mcp server".into(),
            args: ["-p", "deja-cli", "--test", "cli", "--", "fuzz_mcp"].map(String::from).to_vec(),
        });
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let profile: &[&str] = if o.release { &["--release"] } else { &[] };
    let packages: Vec<String> = jobs.iter().flat_map(|j| j.args.iter().take_while(|a| *a != "--").cloned()).collect();
    let mut build: Vec<String> = vec!["test".into(), "--no-run".into()];
    build.extend(profile.iter().map(|s| s.to_string()));
    // `--test`/`--lib` selections of several packages in one build: cargo takes the union.
    let mut pkgs = Vec::new();
    let mut i = 0;
    while i < packages.len() {
        if packages[i] == "-p" {
            pkgs.push(packages[i + 1].clone());
            i += 2;
        } else {
            i += 1;
        }
    }
    pkgs.dedup();
    for p in &pkgs {
        build.push("-p".into());
        build.push(p.clone());
    }
    println!("xtask fuzz: building ({}) {} crates", if o.release { "release" } else { "debug" }, pkgs.len());
    let status = Command::new(&cargo).current_dir(root).args(&build).status().context("running cargo test --no-run")?;
    if !status.success() {
        bail!("building the tests failed ({status})");
    }
    println!(
        "xtask fuzz: {} runs with DEJA_FUZZ_CASES={}{}",
        jobs.len(),
        o.cases,
        o.seed.as_ref().map(|s| format!(" DEJA_FUZZ_SEED={s}")).unwrap_or_default()
    );
    let mut failed = Vec::new();
    for job in &jobs {
        let started = Instant::now();
        let mut cmd = Command::new(&cargo);
        cmd.current_dir(root).arg("test").arg("--quiet").args(profile).args(&job.args).env("DEJA_FUZZ_CASES", o.cases.to_string());
        // The report names the case and how to replay it; a backtrace of the kit is noise.
        cmd.env("RUST_BACKTRACE", "0");
        if let Some(seed) = &o.seed {
            cmd.env("DEJA_FUZZ_SEED", seed);
        }
        let out = cmd.output().with_context(|| format!("running cargo test for {}", job.name))?;
        let secs = started.elapsed().as_secs_f64();
        if out.status.success() {
            println!("  ok    {:<32} {secs:>7.1}s", job.name);
        } else {
            println!("  FAIL  {:<32} {secs:>7.1}s", job.name);
            let stdout = String::from_utf8_lossy(&out.stdout);
            println!("{}", failure_reports(&stdout, &String::from_utf8_lossy(&out.stderr)));
            failed.push(job.name.clone());
        }
    }
    if !failed.is_empty() {
        bail!("{} of {} fuzz runs failed: {}", failed.len(), jobs.len(), failed.join(", "));
    }
    println!("xtask fuzz: all {} runs held", jobs.len());
    Ok(())
}

/// The failing tests' output from a libtest run (the `---- name stdout ----` sections),
/// or the tail of everything when there is none (a build error, an abort).
fn failure_reports(stdout: &str, stderr: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in stdout.lines() {
        if line.starts_with("---- ") {
            inside = true;
        } else if line == "failures:" || line.starts_with("test result:") {
            inside = false;
        }
        if inside {
            out.push_str("        ");
            out.push_str(line);
            out.push('\n');
        }
    }
    if out.is_empty() {
        let all: Vec<&str> = stdout.lines().chain(stderr.lines()).collect();
        for line in &all[all.len().saturating_sub(40)..] {
            out.push_str("        ");
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse_and_mistakes_are_refused() {
        let args = |s: &[&str]| s.iter().map(|a| a.to_string()).collect::<Vec<_>>();
        let o = parse_args(&args(&["--cases", "50", "--adapter=claude", "--adapter", "codex", "--debug"])).expect("parse");
        assert_eq!((o.cases, o.adapters.as_slice(), o.release), (50, &["claude".to_string(), "codex".to_string()][..], false));
        assert_eq!(parse_args(&[]).expect("defaults").cases, 2000);
        assert!(parse_args(&args(&["--cases", "many"])).is_err());
        assert!(parse_args(&args(&["--adapter"])).is_err());
        assert!(parse_args(&args(&["--bogus"])).is_err());
    }

    #[test]
    fn failure_reports_keep_the_failing_tests_output() {
        let stdout = "running 2 tests\n.F\nfailures:\n\n---- conformance_mutations stdout ----\nfuzz check failed\nx: the parser panicked\n  seed: 0x1\n\nfailures:\n    conformance_mutations\n\ntest result: FAILED.";
        let r = failure_reports(stdout, "");
        assert!(r.contains("seed: 0x1") && r.contains("the parser panicked") && !r.contains("running 2 tests"), "{r}");
        assert!(failure_reports("", "error: could not compile").contains("could not compile"));
    }
}

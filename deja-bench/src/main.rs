//! `deja-bench`: runs one of deja's benchmarks (see the library's docs, or
//! `deja-bench --help`). `deja bench …` forwards here.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    match deja_bench::run(deja_bench::Bench::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("deja-bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

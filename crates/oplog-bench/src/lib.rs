//! `oplog-bench`: runs the OpLog papers' experiments against baselines at 1..N threads.
//!
//! The binary is `oplog-bench <EXPERIMENT> [flags]`; this library is its parts, so that each
//! experiment is a small module over a shared harness:
//!
//! - [`cli`]: flags and their validation;
//! - [`harness`]: the throughput runner (pinned threads, start gate, stop flag, median of reps);
//! - [`pin`]: CPU affinity and the current CPU id;
//! - [`heap`]: the counting global allocator behind memory figures;
//! - [`experiments`]: the [`Experiment`](experiments::Experiment) trait, the registry, and one
//!   module per experiment with its implementations;
//! - [`output`]: the record of a point and the sink that prints tables or JSON lines and
//!   writes CSV and SVG files.

use std::io;
use std::process::ExitCode;

use clap::Parser;

pub mod cli;
pub mod experiments;
pub mod harness;
pub mod heap;
pub mod output;
pub mod pin;

use cli::Cli;
use output::Sink;

/// The binary's entry point: parses the command line and the `ORDO_*` environment (bad
/// values exit with status 2), runs the selected experiments, and maps output errors to
/// status 1.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // A malformed clock setting is bad input like a bad flag: report it before any work.
    if let Err(e) = ordo::Settings::from_env() {
        eprintln!("oplog-bench: error: {e}");
        return ExitCode::from(2);
    }
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("oplog-bench: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the experiments `cli` selects, sending results to stdout and `--out`.
pub fn run(cli: &Cli) -> io::Result<()> {
    if let Some(dir) = &cli.out
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        Cli::exit_invalid("--out <DIR>", &dir.display().to_string(), &format!("cannot create the directory: {e}"));
    }
    let experiments = experiments::select(&cli.experiment);
    let settings = cli.settings();
    let total = experiments.iter().map(|e| e.points(&settings)).sum();
    let mut sink = Sink::new(cli.sink_options(), total);
    for experiment in experiments {
        sink.begin(experiment);
        experiment.run(&settings, &mut sink)?;
        sink.end()?;
    }
    sink.finish();
    Ok(())
}

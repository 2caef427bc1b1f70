//! `oplog-bench`: runs the OpLog papers' experiments against baselines at 1..N threads.
//!
//! The binary is `oplog-bench <EXPERIMENT> [flags]`; this library is its parts, so that each
//! experiment is a small module over a shared harness:
//!
//! - [`cli`]: flags and their validation;
//! - [`help`]: per-experiment help and the overview of every experiment's ids;
//! - [`compare`]: `oplog-bench compare OLD_DIR NEW_DIR`, the ratios between two runs with
//!   their noise bands;
//! - [`harness`]: the throughput runner (pinned threads, start gate, stop flag, median of reps);
//! - [`host`]: the cache-line round trip between two CPUs, measured around each experiment
//!   and between its points (the `host` annex and each record's `round_trip_ns`);
//! - [`pin`]: CPU affinity and the current CPU id;
//! - [`spin`]: busy work and cycle counts in clock ticks;
//! - [`alloc_count`]: the global allocator that counts heap bytes for the `memory`
//!   experiment;
//! - [`experiments`]: the [`Experiment`](experiments::Experiment) trait, the registry, and one
//!   module per experiment with its implementations;
//! - [`output`]: the record of a point and the sink that prints tables or JSON lines and
//!   writes CSV and SVG files.

use std::io;
use std::process::ExitCode;
use std::time::SystemTime;

use clap::Parser;

pub mod alloc_count;
pub mod cli;
pub mod compare;
pub mod experiments;
pub mod harness;
pub mod help;
pub mod host;
pub mod output;
pub mod pin;
pub mod spin;

/// Every allocation of the binary (and of its tests) goes through the counting allocator;
/// only threads that join a [`alloc_count::Tally`] pay for the accounting.
#[global_allocator]
static GLOBAL: alloc_count::CountingAlloc = alloc_count::CountingAlloc;

use cli::Cli;
use output::Sink;

/// The binary's entry point: parses the command line and the `ORDO_*` environment (bad
/// values exit with status 2), runs the selected experiments, and maps output errors to
/// status 1.
pub fn main() -> ExitCode {
    let args: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    if let Some(args) = compare::request(&args) {
        return compare::main(&args);
    }
    if let Some(request) = help::request(&args) {
        return match help::render(&request) {
            Ok(text) => {
                print!("{text}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("oplog-bench: error: {e}");
                ExitCode::from(2)
            }
        };
    }
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

/// Runs the experiments `cli` selects, sending results to stdout and to the output directory
/// (`--out`, or `results/<date-time>/` for `all`).
pub fn run(cli: &Cli) -> io::Result<()> {
    let out_dir = cli.out_dir(SystemTime::now());
    if let Some(dir) = &out_dir
        && let Err(e) = output::probe_dir(dir)
    {
        Cli::exit_invalid("--out <DIR>", &dir.display().to_string(), &format!("it is not a writable directory: {e}"));
    }
    let experiments = cli.experiments();
    let preparing = std::time::Instant::now();
    for experiment in &experiments {
        experiment.prepare()?;
    }
    if preparing.elapsed().as_secs() >= 1 {
        eprintln!(
            "oplog-bench: prepared in {:.1} s (not counted in any measurement)",
            preparing.elapsed().as_secs_f64()
        );
    }
    let settings = cli.settings();
    let total = experiments.iter().map(|e| e.points(&settings)).sum();
    let mut sink = Sink::new(cli.sink_options(out_dir), total)?;
    sink.watch_host(host::Watch::new(settings.placement.clone()));
    for experiment in experiments {
        sink.begin(experiment);
        experiment.run(&settings, &mut sink)?;
        sink.end()?;
    }
    sink.finish()
}

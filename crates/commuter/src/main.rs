//! `commuter`: which operations of each covered structure commute, and is each
//! implementation conflict-free for them (see the crate docs).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use clap::builder::PossibleValuesParser;

use commuter::heatmap;
use commuter::structures::{self, Options};
use commuter::summary::Summary;
use commuter::tracer::{CPUS, Cores};

/// Whole cache lines per allocation, so verdicts do not depend on the system allocator's
/// placement (`commuter::lines`).
#[global_allocator]
static ALLOCATOR: commuter::lines::Lines = commuter::lines::Lines;

/// Command line.
#[derive(Debug, Parser)]
#[command(
    name = "commuter",
    about = "COMMUTER for Rust types: which operation pairs commute (002 ch. 4, 6) and which implementations are \
             conflict-free for them",
    after_help = "Models: crates/model and crates/commuter/src/models. Implementations: crates/commuter/src/impls. \
                  `oplog-bench commuter` runs this with --json."
)]
struct Cli {
    /// Check only this structure (repeatable) [default: all].
    #[arg(long = "structure", value_name = "NAME", value_parser = structure_names())]
    structures: Vec<String>,

    /// Longest set-up sequence the analyzer searches (overrides each structure's default).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=6))]
    depth: Option<u8>,

    /// Print one JSON object per (structure, implementation, pair) instead of tables, then
    /// the summary's rows (tagged "annex": "summary").
    #[arg(long)]
    json: bool,

    /// Write commuter-<structure>.svg heatmaps into this directory (created if missing).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,

    /// Also list each pair's classes of cases (facts, how many commute).
    #[arg(long)]
    classes: bool,

    /// Also list every generated test.
    #[arg(long)]
    tests: bool,
}

fn structure_names() -> PossibleValuesParser {
    PossibleValuesParser::new(structures::all().iter().map(|s| s.name()).collect::<Vec<_>>())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(e) = ordo::Settings::from_env() {
        eprintln!("commuter: error: {e}");
        return ExitCode::from(2);
    }
    if let Some(dir) = &cli.out
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        eprintln!("commuter: error: cannot create the --out directory {}: {e}", dir.display());
        return ExitCode::from(2);
    }
    let options = Options { depth: cli.depth.map(usize::from) };
    let cores = Cores::new(CPUS);
    let mut reports = Vec::new();
    for structure in structures::all() {
        if !cli.structures.is_empty() && !cli.structures.iter().any(|s| s == structure.name()) {
            continue;
        }
        let report = match structure.check(&cores, &options) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("commuter: error: {}: {e}", structure.name());
                return ExitCode::FAILURE;
            }
        };
        if cli.json {
            for line in report.json_lines() {
                println!("{line}");
            }
        } else {
            println!("{}", report.render(cli.classes, cli.tests));
        }
        if let Some(dir) = &cli.out
            && let Some(svg) = heatmap::render(&report)
        {
            let path = dir.join(format!("commuter-{}.svg", report.structure));
            if let Err(e) = std::fs::write(&path, svg) {
                eprintln!("commuter: error: cannot write {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
            if !cli.json {
                println!("wrote {}\n", path.display());
            }
        }
        reports.push(report);
    }
    let summary = Summary::new(&reports);
    if cli.json {
        for line in summary.json_lines() {
            println!("{line}");
        }
    } else {
        print!("{}", summary.render());
    }
    ExitCode::SUCCESS
}

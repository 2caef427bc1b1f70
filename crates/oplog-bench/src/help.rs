//! The help clap's global `--help` cannot give: per-experiment help
//! (`oplog-bench help EXPERIMENT`, or `oplog-bench EXPERIMENT --help`) and the overview of
//! every experiment with its implementation ids (`oplog-bench help`).
//!
//! Everything here is read from the [registry](crate::experiments::REGISTRY): what each
//! experiment measures and which text it reproduces (its description), its ids and the part
//! each plays in the [verdict](crate::output::verdict) (default, baseline, floor), its x axis
//! and value, and the targets the verdict checks. Nothing is written twice.

use std::fmt::Write as _;

use crate::experiments::{ALL, Experiment, REGISTRY, XAxis, by_name};
use crate::output::verdict::{Roles, Target};

/// The `ORDO_*` variables, for `--help` and every experiment's help.
pub const ENVIRONMENT: &str = "\
Environment (a malformed value exits with status 2 before any run):
  ORDO_CLOCK=hardware|monotonic  the clock Ordo reads: the invariant per-core clock (falling
                                 back to the OS clock where there is none), or the OS
                                 monotonic clock [default: hardware]
  ORDO_BOUNDARY=<ticks>          pins the clock's uncertainty window, 0 to 1000000000 ticks,
                                 and skips calibration [default: measured]
  ORDO_CALIBRATION_RUNS=<n>      exchanges per ordered CPU pair when calibrating, at least 1
                                 [default: 5000]";

/// How to compare two runs, for `--help` and the overview.
pub const COMPARE: &str = "`oplog-bench compare OLD_DIR NEW_DIR [--out DIR]` compares two runs' output \
directories (their `all.jsonl`): per experiment, id and point, the ratio new/old (above 1.00x is \
better) with its noise band from the recorded min and max.";

/// The end of `oplog-bench --help`: pinning, where to find per-experiment help, and the
/// `ORDO_*` variables.
pub fn after_help() -> String {
    format!(
        "Threads are pinned round-robin over the CPUs this process may use.\n\n\
         `oplog-bench help` lists every experiment and its ids; `oplog-bench help EXPERIMENT` \
         (or `oplog-bench EXPERIMENT --help`) describes one.\n\n{COMPARE}\n\n{ENVIRONMENT}"
    )
}

/// What a command line asks of this module instead of a run.
#[derive(Clone)]
pub enum Request {
    /// `oplog-bench help`: every experiment and its ids.
    Overview,
    /// `oplog-bench help EXPERIMENT` or `oplog-bench EXPERIMENT --help` / `-h`.
    Experiment(&'static dyn Experiment),
    /// `oplog-bench help NAME` where no experiment is called NAME: a usage error.
    Unknown(String),
}

/// The help `args` (the whole command line, program name first) asks for, if any; `None`
/// leaves the command line to clap (which also answers `--help` without an experiment).
pub fn request(args: &[String]) -> Option<Request> {
    let rest = args.get(1..).unwrap_or_default();
    if rest.first().map(String::as_str) == Some("help") {
        return match rest.get(1) {
            None => Some(Request::Overview),
            Some(name) => Some(by_name(name).map_or_else(|| Request::Unknown(name.clone()), Request::Experiment)),
        };
    }
    let wants_help = rest.iter().any(|a| a == "--help" || a == "-h");
    let experiment = rest.iter().find_map(|a| by_name(a));
    wants_help.then_some(experiment).flatten().map(Request::Experiment)
}

/// The text answering `request`: `Ok` for standard output, `Err` for a usage error (exit
/// status 2) naming the unknown experiment and the known ones.
pub fn render(request: &Request) -> Result<String, String> {
    match request {
        Request::Overview => Ok(overview()),
        Request::Experiment(e) => Ok(experiment(*e)),
        Request::Unknown(name) => {
            let names: Vec<&str> = REGISTRY.iter().map(|e| e.name()).collect();
            Err(format!("no experiment is called '{name}' (experiments: {})", names.join(", ")))
        }
    }
}

/// Every experiment with its description and ids, then how to get more.
pub fn overview() -> String {
    let mut out = String::from("oplog-bench: the experiments, in the order `all` runs them\n\n");
    for e in REGISTRY {
        let _ = writeln!(out, "{}: {}", e.name(), e.description());
        let ids = e.ids();
        if !ids.is_empty() {
            let _ = writeln!(out, "    ids: {}", ids.join(", "));
        }
    }
    let _ = writeln!(
        out,
        "\n{ALL}: every experiment above (`--skip LIST` leaves some out).\n\n\
         `oplog-bench help EXPERIMENT` (or `oplog-bench EXPERIMENT --help`) describes one; \
         `oplog-bench --help` lists the flags.\n\n{COMPARE}"
    );
    out
}

/// What one experiment measures, its ids and their parts, its axis, value and targets.
pub fn experiment(e: &dyn Experiment) -> String {
    let roles = e.roles();
    let mut out = format!(
        "oplog-bench {}: {}\n\nImplementations (the `impl` field of its records):\n",
        e.name(),
        e.description()
    );
    let ids = e.ids();
    if ids.is_empty() {
        out.push_str("  none: it reports only annexes (tables of its own, on the terminal and as CSV)\n");
    }
    let width = ids.iter().map(|id| id.len()).max().unwrap_or(0);
    for id in &ids {
        let part = part(&roles, id);
        let _ = writeln!(out, "  {}", format!("{id:<width$}  {part}").trim_end());
    }
    let metric = e.metric();
    let better = if metric.higher_is_better { "higher is better" } else { "lower is better" };
    let _ = writeln!(out, "\nValue: {} ({better}), the median over repetitions.", metric.label);
    match e.x_axis() {
        XAxis::Threads => {
            let _ = writeln!(out, "X axis: threads (--threads; default 1 up to the available cores).");
        }
        XAxis::Param { key, label } => {
            let _ = writeln!(
                out,
                "X axis: {label}, swept (field `{key}`; --quick measures fewer points), at each of --threads."
            );
        }
    }
    if let Some(points) = e.sweep_points() {
        let points: Vec<String> = points.iter().map(f64::to_string).collect();
        let _ = writeln!(out, "Points: {} (--points LIST measures only those it names).", points.join(", "));
    }
    if !roles.targets.is_empty() {
        out.push_str("\nTargets the verdict checks (ratios oriented: above 1.00x is better):\n");
        for t in roles.targets {
            let _ = writeln!(out, "  {}", target(e.x_axis(), t));
        }
    }
    let _ = writeln!(
        out,
        "\nFlags: --threads, --duration-ms, --reps, --quick, --json and --out as in `oplog-bench --help`.\n\n\
         {ENVIRONMENT}"
    );
    out
}

/// The part `id` plays in the verdict.
fn part(roles: &Roles, id: &str) -> &'static str {
    if roles.default == Some(id) {
        "the default configuration (the verdict's subject)"
    } else if roles.baselines.contains(&id) {
        "baseline"
    } else if roles.floor == Some(id) {
        "physical floor (not a competitor)"
    } else {
        ""
    }
}

/// `oplog at 2T, update_pct 99..100: >= 2.00x the best baseline`.
fn target(axis: XAxis, t: &Target) -> String {
    let at = match (axis, t.x) {
        (XAxis::Param { key, .. }, Some((lo, hi))) if lo == hi => format!(", {key}={lo}"),
        (XAxis::Param { key, .. }, Some((lo, hi))) => format!(", {key} {lo}..{hi}"),
        _ => String::new(),
    };
    format!("{} at {}T{at}: >= {:.2}x {}", t.id, t.threads, t.min, t.against.describe())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn help_requests_are_recognised_and_everything_else_is_left_to_clap() {
        let name = |r: Option<Request>| match r {
            Some(Request::Experiment(e)) => Some(e.name()),
            Some(Request::Overview) => Some("overview"),
            Some(Request::Unknown(_)) => Some("unknown"),
            None => None,
        };
        assert_eq!(name(request(&args(&["oplog-bench", "help"]))), Some("overview"));
        assert_eq!(name(request(&args(&["oplog-bench", "help", "read-mix"]))), Some("read-mix"));
        assert_eq!(name(request(&args(&["oplog-bench", "counter", "--help"]))), Some("counter"));
        assert_eq!(name(request(&args(&["oplog-bench", "--quick", "-h", "list"]))), Some("list"));
        assert_eq!(name(request(&args(&["oplog-bench", "help", "nope"]))), Some("unknown"));
        let error = render(&request(&args(&["oplog-bench", "help", "nope"])).unwrap()).unwrap_err();
        assert!(error.starts_with("no experiment is called 'nope' (experiments: counter, clock,"), "{error}");
        // Everything else goes to clap (which reports errors, prints its help, or runs).
        assert_eq!(name(request(&args(&["oplog-bench", "--help"]))), None);
        assert_eq!(name(request(&args(&["oplog-bench", "all", "--help"]))), None);
        assert_eq!(name(request(&args(&["oplog-bench", "counter", "--quick"]))), None);
        assert_eq!(name(request(&args(&["oplog-bench"]))), None);
    }

    #[test]
    fn every_experiment_has_help_naming_its_ids_and_parts() {
        for e in REGISTRY {
            let text = experiment(*e);
            assert!(text.contains(e.description()), "{text}");
            for id in e.ids() {
                assert!(text.contains(&format!("\n  {id}")), "{} help lacks {id}:\n{text}", e.name());
            }
            assert!(text.contains("ORDO_BOUNDARY"), "{text}");
        }
        let read_mix = experiment(by_name("read-mix").unwrap());
        assert!(read_mix.contains("oplog             the default configuration"), "{read_mix}");
        assert!(read_mix.contains("mutex             baseline"), "{read_mix}");
        assert!(read_mix.contains("X axis: updates (% of operations), swept (field `update_pct`"), "{read_mix}");
        assert!(read_mix.contains("oplog at 2T, update_pct 99..100: >= 2.00x the best baseline"), "{read_mix}");
        assert!(read_mix.contains("oplog at 2T, update_pct=100: >= 1.80x itself at 1T"), "{read_mix}");
        let counter = experiment(by_name("counter").unwrap());
        assert!(counter.contains("percore-store    physical floor"), "{counter}");
        let memory = experiment(by_name("memory").unwrap());
        assert!(memory.contains("bytes per object (lower is better)"), "{memory}");
        assert!(experiment(by_name("commuter").unwrap()).contains("it reports only annexes"));
    }

    #[test]
    fn the_overview_lists_every_experiment_and_its_ids() {
        let text = overview();
        for e in REGISTRY {
            assert!(text.contains(&format!("\n{}: ", e.name())), "{text}");
            if !e.ids().is_empty() {
                assert!(text.contains(&format!("    ids: {}", e.ids().join(", "))), "{text}");
            }
        }
    }
}

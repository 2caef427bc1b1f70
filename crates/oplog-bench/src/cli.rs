//! The command line: `oplog-bench <EXPERIMENT> [--threads LIST] [--duration-ms N] [--reps N]
//! [--quick] [--points LIST] [--json] [--out DIR]`, and the validation of every value.
//!
//! Usage errors go through clap, which prints the flag, the bad value and the reason, and
//! exits with status 2.

use std::path::PathBuf;
use std::str::FromStr;
use std::time::{Duration, SystemTime};

use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{CommandFactory, Parser};

use crate::experiments::{ALL, REGISTRY};
use crate::harness::Settings;
use crate::output::SinkOptions;
use crate::pin::Placement;

/// Largest thread count accepted, to catch typos before they spawn a million threads.
pub const MAX_THREADS: usize = 4096;
/// Longest repetition accepted, one hour: a run takes points × reps × this, so a larger
/// value is a typo (`18446744073709551615` would never end), and no experiment needs more.
pub const MAX_DURATION_MS: u64 = 3_600_000;
/// Most repetitions per point accepted: the median of more than a thousand runs is no
/// steadier than of a thousand, and the run time multiplies by it.
pub const MAX_REPS: u32 = 1000;

/// Parsed command line.
#[derive(Clone, Debug, Parser)]
#[command(
    name = "oplog-bench",
    version,
    about = "Runs the OpLog papers' experiments against baselines at 1..N threads",
    after_help = crate::help::after_help()
)]
pub struct Cli {
    /// Experiment to run, or `all` for every one.
    #[arg(value_name = "EXPERIMENT", value_parser = experiment_names())]
    pub experiment: String,

    /// Thread counts to measure, comma-separated, e.g. 1,2,4 [default: 1 up to the number of
    /// available cores].
    #[arg(long, value_name = "LIST", value_parser = parse_thread_list, allow_negative_numbers = true)]
    pub threads: Option<ThreadList>,

    /// Wall-clock milliseconds per repetition, at most 3600000 (one hour) [default: 200, or
    /// 50 with --quick].
    #[arg(long, value_name = "MS", value_parser = parse_in_range::<u64, MAX_DURATION_MS>, allow_negative_numbers = true)]
    pub duration_ms: Option<u64>,

    /// Repetitions per point, at most 1000; the median is reported [default: 3, or 1 with
    /// --quick].
    #[arg(long, value_name = "N", value_parser = parse_in_range::<u32, { MAX_REPS as u64 }>, allow_negative_numbers = true)]
    pub reps: Option<u32>,

    /// Quick version of every experiment: shorter runs, fewer repetitions, fewer sweep
    /// points and smaller sizes (`all --quick` takes well under a minute).
    #[arg(long)]
    pub quick: bool,

    /// Print one JSON object per measured point on stdout instead of tables.
    #[arg(long)]
    pub json: bool,

    /// With `all`: experiments to leave out, comma-separated (e.g. `commuter`, which builds
    /// the commutativity checker's own workspace on its first run).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = registered_name)]
    pub skip: Vec<String>,

    /// Measure only these values of the experiment's swept parameter, comma-separated (with
    /// or without --quick): `read-mix`'s update_pct (e.g. 99,100), `objects`' object counts,
    /// `spinlock`'s parallel ticks. Each must be one of the experiment's points.
    #[arg(long, value_name = "LIST", value_parser = parse_points, allow_negative_numbers = true)]
    pub points: Option<PointList>,

    /// Write EXPERIMENT.csv, EXPERIMENT.svg, all.jsonl and report.md into this directory
    /// (created if missing). Default for `all`: `results/DATE-TIME/`; other experiments
    /// write no files unless given.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Milliseconds per repetition without `--duration-ms`.
pub const DEFAULT_DURATION_MS: u64 = 200;
/// Milliseconds per repetition with `--quick` and without `--duration-ms`.
pub const QUICK_DURATION_MS: u64 = 50;
/// Repetitions per point without `--reps`.
pub const DEFAULT_REPS: u32 = 3;
/// Repetitions per point with `--quick` and without `--reps`.
pub const QUICK_REPS: u32 = 1;
/// Where `all` writes its files without `--out`: `results/<date-time>/` (UTC).
pub const DEFAULT_RESULTS_DIR: &str = "results";

impl Cli {
    /// The experiment settings: thread counts (default 1..=available cores), duration, reps,
    /// and threads pinned over the process's affinity mask.
    pub fn settings(&self) -> Settings {
        let (duration_ms, reps) =
            if self.quick { (QUICK_DURATION_MS, QUICK_REPS) } else { (DEFAULT_DURATION_MS, DEFAULT_REPS) };
        Settings {
            threads: self.threads.clone().map_or_else(default_threads, |list| list.0),
            duration: Duration::from_millis(self.duration_ms.unwrap_or(duration_ms)),
            reps: self.reps.unwrap_or(reps),
            placement: Placement::from_process(),
            quick: self.quick,
            points: self.points.as_ref().map(|list| list.values.clone()),
        }
    }

    /// The output directory: `--out`, or for `all` without it `results/<date-time>/`
    /// under the current directory, with the time of `now` in UTC (`2026-05-01T12-34-56Z`:
    /// RFC 3339 with `-` for `:`, which some file systems reject).
    pub fn out_dir(&self, now: SystemTime) -> Option<PathBuf> {
        if let Some(dir) = &self.out {
            return Some(dir.clone());
        }
        (self.experiment == ALL).then(|| {
            let stamp = humantime::format_rfc3339_seconds(now).to_string().replace(':', "-");
            PathBuf::from(DEFAULT_RESULTS_DIR).join(stamp)
        })
    }

    /// What the output sink should produce, writing files into `out_dir`.
    pub fn sink_options(&self, out_dir: Option<PathBuf>) -> SinkOptions {
        SinkOptions { json: self.json, out_dir, quick: self.quick }
    }

    /// The experiments to run: the one named, or every registered one for `all` minus
    /// `--skip`. Exits with status 2 when `--skip` is given without `all`, or `--points`
    /// names a value that is not a point of the experiment's sweep ([`Cli::check_points`]).
    pub fn experiments(&self) -> Vec<&'static dyn crate::experiments::Experiment> {
        if !self.skip.is_empty() && self.experiment != ALL {
            Cli::exit_invalid("--skip <LIST>", &self.skip.join(","), "--skip only applies to `all`");
        }
        if let Err(reason) = self.check_points() {
            let list = self.points.as_ref().map(|p| p.text.clone()).unwrap_or_default();
            Cli::exit_invalid("--points <LIST>", &list, &reason);
        }
        crate::experiments::select(&self.experiment)
            .into_iter()
            .filter(|e| !self.skip.iter().any(|s| s == e.name()))
            .collect()
    }

    /// Whether `--points`, if given, names points of the one experiment selected: `all`
    /// and experiments without a sweep it can narrow refuse it, and every value must be a
    /// point of the experiment's full sweep ([`Experiment::sweep_points`]).
    ///
    /// [`Experiment::sweep_points`]: crate::experiments::Experiment::sweep_points
    pub fn check_points(&self) -> Result<(), String> {
        let Some(points) = &self.points else { return Ok(()) };
        let experiment = REGISTRY.iter().find(|e| e.name() == self.experiment);
        let Some(sweep) = experiment.and_then(|e| e.sweep_points()) else {
            let narrowable: Vec<&str> =
                REGISTRY.iter().filter(|e| e.sweep_points().is_some()).map(|e| e.name()).collect();
            return Err(format!(
                "`{}` has no sweep that --points can narrow (experiments that have one: {})",
                self.experiment,
                narrowable.join(", ")
            ));
        };
        match points.values.iter().find(|x| !sweep.contains(x)) {
            None => Ok(()),
            Some(x) => {
                let sweep: Vec<String> = sweep.iter().map(f64::to_string).collect();
                Err(format!("{x} is not a point of `{}` (its points: {})", self.experiment, sweep.join(", ")))
            }
        }
    }

    /// Prints a usage error about `flag`'s `value` (clap's format) and exits with status 2.
    pub fn exit_invalid(flag: &str, value: &str, reason: &str) -> ! {
        Cli::command()
            .error(clap::error::ErrorKind::ValueValidation, format!("invalid value '{value}' for '{flag}': {reason}"))
            .exit()
    }
}

/// `1..=n` where `n` is `std::thread::available_parallelism` (1 if unknown).
pub fn default_threads() -> Vec<usize> {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    (1..=n).collect()
}

/// A validated `--threads` value: ascending, deduplicated, each in `1..=MAX_THREADS`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadList(pub Vec<usize>);

/// The items of a comma-separated list flag, trimmed (spaces around items allowed); an
/// empty list or item is an error ending with `expected`.
fn list_items<'a>(text: &'a str, expected: &str) -> Result<Vec<&'a str>, String> {
    if text.trim().is_empty() {
        return Err(format!("the list is empty; {expected}"));
    }
    text.split(',')
        .map(|item| match item.trim() {
            "" => Err(format!("empty item in '{text}'; {expected}")),
            item => Ok(item),
        })
        .collect()
}

/// Parses `--threads`: comma-separated positive integers (spaces around items allowed);
/// duplicates are merged and the result sorted.
pub fn parse_thread_list(text: &str) -> Result<ThreadList, String> {
    const EXPECTED: &str = "expected comma-separated positive integers like 1,2,4";
    let mut threads = Vec::new();
    for item in list_items(text, EXPECTED)? {
        let n: usize = item.parse().map_err(|_| format!("'{item}' is not a positive integer; {EXPECTED}"))?;
        if n == 0 {
            return Err(format!("thread count must be at least 1, got '{item}'"));
        }
        if n > MAX_THREADS {
            return Err(format!("thread count {n} is above the limit of {MAX_THREADS}"));
        }
        threads.push(n);
    }
    threads.sort_unstable();
    threads.dedup();
    Ok(ThreadList(threads))
}

/// A parsed `--points` value: the numbers, and the text as given (for error messages).
#[derive(Clone, Debug, PartialEq)]
pub struct PointList {
    /// The values, in the order given, without duplicates.
    pub values: Vec<f64>,
    /// The text of the flag.
    pub text: String,
}

/// Parses `--points`: comma-separated finite numbers (spaces around items allowed);
/// duplicates are merged. Whether they are points of the experiment is checked once it is
/// known ([`Cli::check_points`]).
pub fn parse_points(text: &str) -> Result<PointList, String> {
    const EXPECTED: &str = "expected comma-separated numbers like 99,100";
    let mut values = Vec::new();
    for item in list_items(text, EXPECTED)? {
        let x: f64 = item
            .parse()
            .ok()
            .filter(|x: &f64| x.is_finite())
            .ok_or_else(|| format!("'{item}' is not a number; {EXPECTED}"))?;
        if !values.contains(&x) {
            values.push(x);
        }
    }
    Ok(PointList { values, text: text.to_owned() })
}

/// Parses an integer flag that must lie in `1..=MAX`.
pub fn parse_in_range<T, const MAX: u64>(text: &str) -> Result<T, String>
where
    T: FromStr + Copy + Into<u64>,
{
    let value: T = text.trim().parse().map_err(|_| format!("'{text}' is not a positive integer"))?;
    match value.into() {
        0 => Err(format!("must be at least 1, got '{text}'")),
        v if v > MAX => Err(format!("must be at most {MAX}, got '{text}'")),
        _ => Ok(value),
    }
}

/// The accepted experiment names: every registered experiment, with its description, and
/// `all`.
/// A registered experiment's name (for `--skip`).
fn registered_name(text: &str) -> Result<String, String> {
    if REGISTRY.iter().any(|e| e.name() == text) {
        Ok(text.to_owned())
    } else {
        let names: Vec<&str> = REGISTRY.iter().map(|e| e.name()).collect();
        Err(format!("no experiment is named '{text}' (experiments: {})", names.join(", ")))
    }
}

fn experiment_names() -> PossibleValuesParser {
    let names = REGISTRY
        .iter()
        .map(|e| PossibleValue::new(e.name()).help(e.description()))
        .chain([PossibleValue::new(ALL).help("every experiment above, in order")]);
    PossibleValuesParser::new(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_lists_that_parse() {
        assert_eq!(parse_thread_list("1,2,4").unwrap().0, [1, 2, 4]);
        assert_eq!(parse_thread_list("4,1,2,1").unwrap().0, [1, 2, 4]);
        assert_eq!(parse_thread_list(" 2 , 3 ").unwrap().0, [2, 3]);
        assert_eq!(parse_thread_list("7").unwrap().0, [7]);
    }

    #[test]
    fn thread_lists_that_fail_say_why() {
        let err = |s| parse_thread_list(s).unwrap_err();
        assert_eq!(err("0"), "thread count must be at least 1, got '0'");
        assert_eq!(err("a"), "'a' is not a positive integer; expected comma-separated positive integers like 1,2,4");
        assert!(err("-1").starts_with("'-1' is not a positive integer"));
        assert!(err("1.5").starts_with("'1.5' is not a positive integer"));
        assert_eq!(err(""), "the list is empty; expected comma-separated positive integers like 1,2,4");
        assert!(err("1,,2").starts_with("empty item in '1,,2'"));
        assert!(err("1,").starts_with("empty item in '1,'"));
        assert_eq!(err("5000"), "thread count 5000 is above the limit of 4096");
    }

    #[test]
    fn point_lists_parse_or_say_why() {
        assert_eq!(parse_points("99, 100,99").unwrap().values, [99.0, 100.0]);
        assert_eq!(parse_points("0.125").unwrap().values, [0.125]);
        let err = |s| parse_points(s).unwrap_err();
        assert_eq!(err("x"), "'x' is not a number; expected comma-separated numbers like 99,100");
        assert!(err("inf").starts_with("'inf' is not a number"));
        assert!(err("1,,2").starts_with("empty item in '1,,2'"));
        assert!(err(" ").starts_with("the list is empty"));
    }

    #[test]
    fn points_must_be_points_of_the_experiment() {
        let check = |args: &[&str]| {
            Cli::try_parse_from(std::iter::once("oplog-bench").chain(args.iter().copied())).unwrap().check_points()
        };
        assert_eq!(check(&["read-mix"]), Ok(()));
        assert_eq!(check(&["read-mix", "--points", "99,100"]), Ok(()));
        assert_eq!(check(&["objects", "--points", "4096", "--quick"]), Ok(()));
        assert_eq!(
            check(&["read-mix", "--points", "99,37"]),
            Err("37 is not a point of `read-mix` (its points: 0, 1, 10, 50, 90, 99, 100)".to_owned())
        );
        let no_sweep = check(&["counter", "--points", "1"]).unwrap_err();
        assert!(no_sweep.starts_with("`counter` has no sweep that --points can narrow"), "{no_sweep}");
        assert!(no_sweep.contains("read-mix") && no_sweep.contains("objects"), "{no_sweep}");
        assert!(check(&["all", "--points", "1"]).unwrap_err().starts_with("`all` has no sweep"));
        let settings = Cli::try_parse_from(["oplog-bench", "read-mix", "--points", "100,99"]).unwrap().settings();
        assert_eq!(settings.points, Some(vec![100.0, 99.0]));
    }

    #[test]
    fn at_least_one() {
        assert_eq!(parse_in_range::<u64, 300>("200"), Ok(200));
        assert_eq!(parse_in_range::<u64, 300>("300"), Ok(300));
        assert_eq!(parse_in_range::<u64, 300>("0"), Err("must be at least 1, got '0'".to_owned()));
        assert_eq!(parse_in_range::<u64, 300>("301"), Err("must be at most 300, got '301'".to_owned()));
        assert_eq!(parse_in_range::<u32, 9>("x"), Err("'x' is not a positive integer".to_owned()));
        assert!(parse_in_range::<u32, 9>("-3").is_err());
    }

    #[test]
    fn defaults_and_errors_through_clap() {
        let cli = Cli::try_parse_from(["oplog-bench", "counter"]).unwrap();
        assert_eq!((cli.duration_ms, cli.reps, cli.json, cli.quick), (None, None, false, false));
        let settings = cli.settings();
        assert_eq!(settings.threads, default_threads());
        assert_eq!(settings.threads[0], 1);
        assert_eq!((settings.duration, settings.reps, settings.quick), (Duration::from_millis(200), 3, false));

        let cli = Cli::try_parse_from(["oplog-bench", "all", "--threads", "2,1"]).unwrap();
        assert_eq!(cli.settings().threads, [1, 2]);

        for (args, needle) in [
            (&["counter", "--threads", "0"][..], "'--threads <LIST>'"),
            (&["counter", "--duration-ms", "0"], "'--duration-ms <MS>'"),
            (&["counter", "--reps", "0"], "'--reps <N>'"),
            (&["nope"], "'nope'"),
        ] {
            let e = Cli::try_parse_from(std::iter::once("oplog-bench").chain(args.iter().copied())).unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains(needle), "{e}");
        }
    }

    #[test]
    fn quick_shortens_defaults_but_not_explicit_values() {
        let quick = Cli::try_parse_from(["oplog-bench", "all", "--quick"]).unwrap().settings();
        assert!(quick.quick);
        assert_eq!((quick.duration, quick.reps), (Duration::from_millis(QUICK_DURATION_MS), QUICK_REPS));
        let explicit =
            Cli::try_parse_from(["oplog-bench", "all", "--quick", "--duration-ms", "7", "--reps", "2"]).unwrap();
        let explicit = explicit.settings();
        assert_eq!((explicit.duration, explicit.reps, explicit.quick), (Duration::from_millis(7), 2, true));
    }

    #[test]
    fn all_writes_into_a_dated_results_dir_by_default() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_777_638_896);
        let all = Cli::try_parse_from(["oplog-bench", "all"]).unwrap();
        assert_eq!(all.out_dir(now), Some(PathBuf::from("results/2026-05-01T12-34-56Z")));
        let one = Cli::try_parse_from(["oplog-bench", "counter"]).unwrap();
        assert_eq!(one.out_dir(now), None);
        let given = Cli::try_parse_from(["oplog-bench", "all", "--out", "x/y"]).unwrap();
        assert_eq!(given.out_dir(now), Some(PathBuf::from("x/y")));
    }

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}

//! The verdict: per experiment, who is fastest at each point, how the default `oplog` stands
//! against the best baseline, and which of the experiment's targets were missed.
//!
//! An experiment names its [`Roles`]: the id of the default configuration (the number the
//! project is judged by), the ids that are baselines (what a user would pick instead), a
//! physical floor if it measures one (not a competitor, so never "fastest"), and its
//! [`Target`]s (the ratios its issues ask for). Every ratio here is *oriented*: above 1×
//! means the first implementation is better, whether the metric is a throughput (higher is
//! better) or ticks or bytes (lower is better), so one direction reads the same everywhere.
//! The verdict opens `report.md` and follows each table on the terminal.

use std::collections::BTreeMap;

use crate::experiments::{Experiment, Metric, XAxis};

use super::Record;

/// Which ids of an experiment play which part in its verdict.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Roles {
    /// The default configuration's id (`oplog` in most experiments), if the experiment has
    /// one; otherwise the verdict compares the best non-baseline id.
    pub default: Option<&'static str>,
    /// The baselines: the implementations a user would pick instead of OpLog.
    pub baselines: &'static [&'static str],
    /// A physical floor the experiment measures beside the implementations (never reported
    /// as the fastest implementation).
    pub floor: Option<&'static str>,
    /// What the experiment's issues ask of it.
    pub targets: &'static [Target],
}

impl Roles {
    /// No roles: the verdict names only the fastest implementation at each point.
    pub const NONE: Roles = Roles { default: None, baselines: &[], floor: None, targets: &[] };
}

/// A ratio an implementation must reach at some points: `id` at least `min`× `against`
/// (oriented: above 1× is better), at `threads` threads, at every x within `x` (inclusive;
/// `None`: every point of a thread-count experiment, or every x of a swept one). A target
/// whose points were not measured (other `--threads`, a quick sweep) is not checked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Target {
    /// The implementation the target is about.
    pub id: &'static str,
    /// The thread count it applies to.
    pub threads: usize,
    /// The swept parameter's range it applies to, inclusive.
    pub x: Option<(f64, f64)>,
    /// What `id` is compared with.
    pub against: Against,
    /// The least oriented ratio that meets the target.
    pub min: f64,
}

/// What a [`Target`] compares its implementation with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Against {
    /// The best of the experiment's [`Roles::baselines`] at the same point.
    BestBaseline,
    /// One implementation at the same point.
    Id(&'static str),
    /// The same implementation at one thread (scaling: `2T/1T`).
    OneThread,
}

impl Against {
    /// What the target compares with, in words: `the best baseline`, `` `mutex` ``,
    /// `itself at 1T`.
    pub fn describe(self) -> String {
        match self {
            Against::BestBaseline => "the best baseline".to_owned(),
            Against::Id(id) => format!("`{id}`"),
            Against::OneThread => "itself at 1T".to_owned(),
        }
    }
}

/// An experiment's verdict.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Verdict {
    /// One line per thread count: the fastest implementation at each point and the default's
    /// oriented ratio to the best baseline.
    pub lines: Vec<String>,
    /// The targets checked (their points were measured).
    pub checked: usize,
    /// Each missed target: what was asked and what was measured.
    pub missed: Vec<String>,
}

/// The values of one point: implementation id → metric value.
type Point = BTreeMap<String, f64>;

/// Every measured point of `records`: per thread count, the x values in ascending order, each
/// with its values.
fn points(axis: XAxis, metric: Metric, records: &[Record]) -> BTreeMap<usize, Vec<(f64, Point)>> {
    let mut by_threads: BTreeMap<usize, Vec<(f64, Point)>> = BTreeMap::new();
    for record in records {
        let (Some(x), Some(value)) = (axis.value(record), metric.value(record)) else {
            continue;
        };
        let row = by_threads.entry(record.threads).or_default();
        let index = match row.iter().position(|(px, _)| *px == x) {
            Some(i) => i,
            None => {
                row.push((x, Point::new()));
                row.len() - 1
            }
        };
        row[index].1.insert(record.impl_id.clone(), value);
    }
    for row in by_threads.values_mut() {
        row.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    by_threads
}

/// `a` relative to `b`, oriented so that above 1 means `a` is better (for a metric where
/// `higher_is_better`, `a / b`; otherwise `b / a`); `None` when not finite.
pub(crate) fn oriented(higher_is_better: bool, a: f64, b: f64) -> Option<f64> {
    let ratio = if higher_is_better { a / b } else { b / a };
    ratio.is_finite().then_some(ratio)
}

/// The best of `ids` present at `point`: (id, value).
fn best(metric: Metric, point: &Point, mut ids: impl FnMut(&str) -> bool) -> Option<(&str, f64)> {
    point.iter().filter(|(id, _)| ids(id)).map(|(id, &v)| (id.as_str(), v)).reduce(|a, b| {
        let b_better = if metric.higher_is_better { b.1 > a.1 } else { b.1 < a.1 };
        if b_better { b } else { a }
    })
}

/// The id the verdict speaks for at `point`: the default if measured there, else the best id
/// that is neither a baseline nor the floor.
fn product<'a>(metric: Metric, roles: &Roles, point: &'a Point) -> Option<(&'a str, f64)> {
    if let Some(id) = roles.default
        && let Some((id, &v)) = point.get_key_value(id)
    {
        return Some((id.as_str(), v));
    }
    best(metric, point, |id| !roles.baselines.contains(&id) && roles.floor != Some(id))
}

/// `1.23x`.
fn times(ratio: f64) -> String {
    format!("{ratio:.2}x")
}

/// What one point says: the fastest id, and the speaking id's oriented ratios to the best
/// baseline (with its id) and to the floor.
struct Judged<'a> {
    x: f64,
    fastest: &'a str,
    ours: Option<&'a str>,
    versus_base: Option<(f64, &'a str)>,
    versus_floor: Option<f64>,
}

/// The [`Judged`] of the point at `x`, or `None` if nothing but the floor was measured there.
fn judge_point<'a>(metric: Metric, roles: &Roles, x: f64, point: &'a Point) -> Option<Judged<'a>> {
    let (fastest, _) = best(metric, point, |id| roles.floor != Some(id))?;
    let ours = product(metric, roles, point);
    let base = best(metric, point, |id| roles.baselines.contains(&id));
    let versus_base = ours.zip(base).and_then(|((_, v), (id, b))| Some((oriented(metric.higher_is_better, v, b)?, id)));
    let floor = roles.floor.and_then(|f| point.get(f));
    let versus_floor = ours.zip(floor).and_then(|((_, v), &f)| oriented(metric.higher_is_better, v, f));
    Some(Judged { x, fastest, ours: ours.map(|o| o.0), versus_base, versus_floor })
}

/// The verdict line of one thread count's points (without the `NT: ` prefix). A thread axis
/// has one point: `fastest `a`, `oplog` 1.20x the best baseline (`b`)`. A swept axis groups
/// the x values each id is fastest at and gives the range of the ratio to the best baseline.
fn point_line(axis: XAxis, metric: Metric, roles: &Roles, row: &[(f64, Point)]) -> Option<String> {
    let judged: Vec<Judged> = row.iter().filter_map(|(x, p)| judge_point(metric, roles, *x, p)).collect();
    let first = judged.first()?;
    let XAxis::Param { key, .. } = axis else {
        let mut line = format!("fastest `{}`", first.fastest);
        if let (Some(ours), Some((r, base))) = (first.ours, first.versus_base) {
            line.push_str(&format!(", `{ours}` {} the best baseline (`{base}`)", times(r)));
        }
        if let (Some(floor), Some(r)) = (roles.floor, first.versus_floor) {
            line.push_str(&format!(", {} the floor (`{floor}`)", times(r)));
        }
        return Some(line);
    };
    let fastest = x_values_by_name(judged.iter().map(|j| (j.fastest, j.x)));
    let groups: Vec<String> = fastest.iter().map(|(id, xs)| format!("`{id}` at {key}={}", xs.join(", "))).collect();
    let mut line = format!("fastest {}", groups.join(", "));
    let ratios: Vec<(f64, f64, &str)> =
        judged.iter().filter_map(|j| j.versus_base.map(|(r, base)| (r, j.x, base))).collect();
    let lowest = ratios.iter().min_by(|a, b| a.0.total_cmp(&b.0));
    let highest = ratios.iter().max_by(|a, b| a.0.total_cmp(&b.0));
    if let (Some(ours), Some(lo), Some(hi)) = (judged.iter().find_map(|j| j.ours), lowest, highest) {
        let at = |(r, x, base): &(f64, f64, &str)| format!("{} ({key}={x}, `{base}`)", times(*r));
        if lo.1 == hi.1 {
            line.push_str(&format!("; `{ours}` {} the best baseline", at(lo)));
        } else {
            line.push_str(&format!("; `{ours}` {} to {} the best baseline", at(lo), at(hi)));
        }
    }
    Some(line)
}

/// The x values of `points` (name, x) grouped by name, names in first-seen order.
fn x_values_by_name<'a>(points: impl Iterator<Item = (&'a str, f64)>) -> Vec<(&'a str, Vec<String>)> {
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for (name, x) in points {
        match groups.iter_mut().find(|(g, _)| *g == name) {
            Some((_, xs)) => xs.push(x.to_string()),
            None => groups.push((name, vec![x.to_string()])),
        }
    }
    groups
}

/// Where the default `id` ended at `threads` threads, from its records' `ended_in` (the
/// representation its OpLog object ended in): `; `oplog` ended direct` on a thread axis, or
/// grouped by x on a swept one (`; `oplog` ended logged at F=1, 2, direct at F=3`). `None`
/// if its records note none.
fn ended_clause(axis: XAxis, id: &str, threads: usize, records: &[Record]) -> Option<String> {
    let mut ended: Vec<(f64, &str)> = records
        .iter()
        .filter(|r| r.impl_id == id && r.threads == threads)
        .filter_map(|r| Some((axis.value(r)?, r.extra.get("ended_in")?.as_str()?)))
        .collect();
    ended.sort_by(|a, b| a.0.total_cmp(&b.0));
    let XAxis::Param { key, .. } = axis else {
        return ended.first().map(|(_, r)| format!("; `{id}` ended {r}"));
    };
    let groups = x_values_by_name(ended.iter().map(|&(x, r)| (r, x)));
    let [first, rest @ ..] = groups.as_slice() else {
        return None;
    };
    if rest.is_empty() {
        return Some(format!("; `{id}` ended {} at every {key}", first.0));
    }
    let parts: Vec<String> = groups.iter().map(|(r, xs)| format!("{r} at {key}={}", xs.join(", "))).collect();
    Some(format!("; `{id}` ended {}", parts.join(", ")))
}

/// The verdict on `experiment`'s `records`.
pub fn judge(experiment: &dyn Experiment, records: &[Record]) -> Verdict {
    let axis = experiment.x_axis();
    let metric = experiment.metric();
    let roles = experiment.roles();
    let by_threads = points(axis, metric, records);
    let mut verdict = Verdict::default();
    for (&threads, row) in &by_threads {
        if let Some(line) = point_line(axis, metric, &roles, row) {
            let ended = roles.default.and_then(|id| ended_clause(axis, id, threads, records));
            verdict.lines.push(format!("{threads}T: {line}{}", ended.unwrap_or_default()));
        }
    }
    for target in roles.targets {
        let Some(row) = by_threads.get(&target.threads) else {
            continue;
        };
        for (x, point) in row {
            if let Some((lo, hi)) = target.x
                && !(lo..=hi).contains(x)
            {
                continue;
            }
            let Some(&value) = point.get(target.id) else {
                continue;
            };
            let other = match target.against {
                Against::BestBaseline => {
                    best(metric, point, |id| roles.baselines.contains(&id)).map(|(id, v)| (format!("`{id}`"), v))
                }
                Against::Id(id) => point.get(id).map(|&v| (format!("`{id}`"), v)),
                Against::OneThread => by_threads
                    .get(&1)
                    // On a thread axis x is the thread count itself; on a swept one, the same x.
                    .and_then(|one| one.iter().find(|(ox, _)| matches!(axis, XAxis::Threads) || ox == x))
                    .and_then(|(_, p)| p.get(target.id))
                    .map(|&v| ("itself at 1T".to_owned(), v)),
            };
            let Some((other_name, other_value)) = other else {
                continue;
            };
            let Some(ratio) = oriented(metric.higher_is_better, value, other_value) else {
                continue;
            };
            verdict.checked += 1;
            if ratio < target.min {
                let at = match axis {
                    XAxis::Threads => format!("{}T", target.threads),
                    XAxis::Param { .. } => format!("{}T, {}", target.threads, axis.heading(*x)),
                };
                let versus = target.against.describe();
                verdict.missed.push(format!(
                    "{}: `{}` at {at}: {} {other_name}, target >= {} {versus}",
                    experiment.name(),
                    target.id,
                    times(ratio),
                    times(target.min),
                ));
            }
        }
    }
    verdict
}

/// The verdict as terminal text: one `verdict` line per thread count, then the targets.
pub fn render(verdict: &Verdict) -> String {
    let mut out = String::new();
    for line in &verdict.lines {
        out.push_str(&format!("verdict {line}\n"));
    }
    if verdict.checked > 0 {
        out.push_str(&format!("targets: {} of {} met\n", verdict.checked - verdict.missed.len(), verdict.checked));
        for missed in &verdict.missed {
            out.push_str(&format!("  missed {missed}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Settings;
    use crate::output::Sink;

    /// An experiment with chosen roles, for judging hand-made records.
    struct Fake {
        axis: XAxis,
        metric: Metric,
        roles: Roles,
    }

    impl Experiment for Fake {
        fn name(&self) -> &'static str {
            "fake"
        }
        fn description(&self) -> &'static str {
            "a fake"
        }
        fn ids(&self) -> Vec<&'static str> {
            vec!["oplog", "mutex", "atomic", "floor", "rwlock", "oplog-a", "oplog-b", "lockfree"]
        }
        fn x_axis(&self) -> XAxis {
            self.axis
        }
        fn metric(&self) -> Metric {
            self.metric
        }
        fn roles(&self) -> Roles {
            self.roles
        }
        fn points(&self, _: &Settings) -> u64 {
            0
        }
        fn run(&self, _: &Settings, _: &mut Sink) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn record(id: &str, threads: usize, value: f64, pct: Option<u32>) -> Record {
        let r = Record {
            experiment: "fake".into(),
            impl_id: id.into(),
            threads,
            ops_per_sec: value,
            min_ops_per_sec: value,
            max_ops_per_sec: value,
            reps: 1,
            duration_ms: 1,
            extra: Default::default(),
        };
        match pct {
            Some(p) => r.with("update_pct", p),
            None => r,
        }
    }

    const TARGETS: &[Target] = &[
        Target { id: "oplog", threads: 2, x: None, against: Against::BestBaseline, min: 2.0 },
        Target { id: "oplog", threads: 2, x: None, against: Against::OneThread, min: 1.8 },
        Target { id: "oplog", threads: 4, x: None, against: Against::Id("mutex"), min: 1.0 },
    ];

    #[test]
    fn names_the_fastest_and_the_default_against_the_best_baseline_and_checks_targets() {
        let fake = Fake {
            axis: XAxis::Threads,
            metric: Metric::OPS_PER_SEC,
            roles: Roles {
                default: Some("oplog"),
                baselines: &["mutex", "atomic"],
                floor: Some("floor"),
                targets: TARGETS,
            },
        };
        let records = [
            record("oplog", 1, 10.0, None),
            record("mutex", 1, 20.0, None),
            record("atomic", 1, 5.0, None),
            record("floor", 1, 100.0, None),
            record("oplog", 2, 30.0, None),
            record("mutex", 2, 10.0, None),
            record("atomic", 2, 12.0, None),
            record("floor", 2, 200.0, None),
        ];
        let v = judge(&fake, &records);
        assert_eq!(
            v.lines,
            [
                "1T: fastest `mutex`, `oplog` 0.50x the best baseline (`mutex`), 0.10x the floor (`floor`)",
                "2T: fastest `oplog`, `oplog` 2.50x the best baseline (`atomic`), 0.15x the floor (`floor`)",
            ]
        );
        // 2.5x the best baseline meets 2x; 30/10 = 3x its 1T meets 1.8x; 4T was not measured.
        assert_eq!((v.checked, v.missed.len()), (2, 0), "{v:?}");
        let text = render(&v);
        assert!(text.contains("targets: 2 of 2 met"), "{text}");
    }

    #[test]
    fn the_line_says_where_the_default_ended() {
        let threads_axis = Fake {
            axis: XAxis::Threads,
            metric: Metric::OPS_PER_SEC,
            roles: Roles { default: Some("oplog"), baselines: &["mutex"], floor: None, targets: &[] },
        };
        let records = [
            record("oplog", 2, 30.0, None).with("ended_in", "direct"),
            record("mutex", 2, 10.0, None),
            record("oplog", 1, 10.0, None),
            record("mutex", 1, 5.0, None),
        ];
        assert_eq!(
            judge(&threads_axis, &records).lines,
            [
                "1T: fastest `oplog`, `oplog` 2.00x the best baseline (`mutex`)",
                "2T: fastest `oplog`, `oplog` 3.00x the best baseline (`mutex`); `oplog` ended direct",
            ],
            "nothing said where nothing was noted"
        );
        let swept = Fake { axis: XAxis::Param { key: "update_pct", label: "updates" }, ..threads_axis };
        let ended = |pct, r| record("oplog", 2, 20.0, Some(pct)).with("ended_in", r);
        let mut records = vec![ended(50, "direct"), ended(0, "logged"), ended(100, "logged")];
        records.extend([0, 50, 100].map(|p| record("mutex", 2, 10.0, Some(p))));
        let line = &judge(&swept, &records).lines[0];
        assert!(line.ends_with("; `oplog` ended logged at update_pct=0, 100, direct at update_pct=50"), "{line}");
        records.retain(|r| r.extra.get("update_pct") != Some(&50.into()));
        assert!(judge(&swept, &records).lines[0].ends_with("; `oplog` ended logged at every update_pct"));
    }

    #[test]
    fn lower_is_better_metrics_are_oriented_and_misses_are_listed() {
        let fake = Fake {
            axis: XAxis::Param { key: "update_pct", label: "updates" },
            metric: Metric { key: "ops_per_sec", label: "ticks", higher_is_better: false, timed: true },
            roles: Roles { default: Some("oplog"), baselines: &["mutex"], floor: None, targets: TARGETS },
        };
        let records = [
            record("oplog", 1, 10.0, Some(50)),
            record("mutex", 1, 20.0, Some(50)),
            record("oplog", 2, 10.0, Some(50)),
            record("mutex", 2, 15.0, Some(50)),
        ];
        let v = judge(&fake, &records);
        assert_eq!(
            v.lines[0],
            "1T: fastest `oplog` at update_pct=50; `oplog` 2.00x (update_pct=50, `mutex`) the best baseline"
        );
        assert_eq!(
            v.lines[1],
            "2T: fastest `oplog` at update_pct=50; `oplog` 1.50x (update_pct=50, `mutex`) the best baseline"
        );
        assert_eq!(v.checked, 2);
        assert_eq!(v.missed.len(), 2, "{v:?}");
        assert_eq!(v.missed[0], "fake: `oplog` at 2T, update_pct=50: 1.50x `mutex`, target >= 2.00x the best baseline");
        assert!(v.missed[1].contains("1.00x itself at 1T, target >= 1.80x itself at 1T"), "{}", v.missed[1]);
    }

    #[test]
    fn a_swept_axis_groups_where_each_id_is_fastest_and_gives_the_range_of_ratios() {
        let fake = Fake {
            axis: XAxis::Param { key: "update_pct", label: "updates" },
            metric: Metric::OPS_PER_SEC,
            roles: Roles { default: Some("oplog"), baselines: &["mutex", "rwlock"], floor: None, targets: &[] },
        };
        let mut records = Vec::new();
        for (pct, oplog, mutex, rwlock) in [(0, 1.0, 4.0, 2.0), (50, 2.0, 4.0, 1.0), (100, 9.0, 3.0, 1.0)] {
            records.push(record("oplog", 2, oplog, Some(pct)));
            records.push(record("mutex", 2, mutex, Some(pct)));
            records.push(record("rwlock", 2, rwlock, Some(pct)));
        }
        let v = judge(&fake, &records);
        assert_eq!(
            v.lines,
            ["2T: fastest `mutex` at update_pct=0, 50, `oplog` at update_pct=100; \
              `oplog` 0.25x (update_pct=0, `mutex`) to 3.00x (update_pct=100, `mutex`) the best baseline"]
        );
    }

    #[test]
    fn without_a_default_the_best_non_baseline_speaks() {
        let fake = Fake {
            axis: XAxis::Threads,
            metric: Metric::OPS_PER_SEC,
            roles: Roles { default: None, baselines: &["lockfree"], floor: None, targets: &[] },
        };
        let records =
            [record("oplog-a", 2, 4.0, None), record("oplog-b", 2, 6.0, None), record("lockfree", 2, 3.0, None)];
        let v = judge(&fake, &records);
        assert_eq!(v.lines, ["2T: fastest `oplog-b`, `oplog-b` 2.00x the best baseline (`lockfree`)"]);
        assert_eq!(render(&v), "verdict 2T: fastest `oplog-b`, `oplog-b` 2.00x the best baseline (`lockfree`)\n");
    }
}

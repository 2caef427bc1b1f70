//! What moving a cache line between two CPUs costs on this host, measured around each
//! experiment (the `host` annex).
//!
//! Every ratio of an update-heavy experiment depends on that cost: a contended atomic, a
//! mutex's lock word or an object lock pays it per operation, a per-core log does not.
//! On a virtual machine it is not a constant of the machine. The 2-core development host
//! (AMD EPYC under KVM) switches, within seconds and for minutes at a time, between round
//! trips of about 50, 80–110 and 370–430 ns (its two virtual CPUs placed on the host's
//! cores differently), and every baseline moves with it: one `AtomicU64` per object at
//! 1,024 objects made 139M updates/s while the round trip was about 80 ns and 36M while it
//! was 400, a `Mutex` per object 167M and 123M (`objects`, 2 threads, 2026-11-29). A table
//! measured across a switch mixes states. So the runner measures the round trip between
//! the CPUs of threads 0 and 1 just before each experiment, between its points whenever
//! [`WATCH_EVERY`] passed since the last measurement, and just after it ([`Watch`]), and
//! reports them: each record carries the last figure measured before it was made
//! (`round_trip_ns`), so ratios are comparable between points whose round trips are alike,
//! and the annex lists the figures before and after and every switch in between (a figure
//! more than [`SWITCH_FACTOR`] times above or below the one before), with a note when the
//! experiment saw one.
//! Measured only before and after, a switch in the middle of a long experiment went
//! unseen: `objects` (three and a half minutes) found 3 of its 16 targets missed with
//! 45 ns before and 47 ns after, at the figures of the 400 ns state (2026-11-30).
//!
//! The measurement is a ping-pong: two threads pinned to those CPUs take turns
//! incrementing one padded atomic, each waiting for the other's increment, for
//! [`ROUNDS`] round trips or [`BUDGET`], whichever ends first.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use serde_json::json;

use crate::output::annex::Annex;
use crate::pin::Placement;

/// Round trips per measurement at most.
pub const ROUNDS: u64 = 1_000_000;

/// How long a measurement runs at most: under load (other busy threads on those CPUs) the
/// round trips it counts include waits for the scheduler, and the figure says so by its
/// size rather than by taking longer.
pub const BUDGET: Duration = Duration::from_millis(100);

/// A side that waits this long for the other one gives up (a CPU that never runs the other
/// thread): no figure rather than a hang.
pub const GIVE_UP: Duration = Duration::from_secs(2);

/// Round trips between two checks of the clock by the side that keeps time.
const CHECK_EVERY: u64 = 256;

/// One measured round trip.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoundTrip {
    /// The CPUs of threads 0 and 1.
    pub cpus: (usize, usize),
    /// Nanoseconds for the line to go to the other CPU and back.
    pub ns: f64,
}

/// The cache-line round trip between the CPUs that `placement` gives threads 0 and 1, or
/// `None` where there are no two such CPUs (unpinned threads, one CPU), a thread could
/// not be pinned, or a side waited [`GIVE_UP`] for the other.
pub fn line_round_trip(placement: &Placement) -> Option<RoundTrip> {
    let (a, b) = (placement.cpu_for(0)?, placement.cpu_for(1)?);
    if a == b {
        return None;
    }
    let game = Game { line: CachePadded::new(AtomicU64::new(0)), done: AtomicBool::new(false) };
    // Both sides on threads of their own: pinning the caller would narrow the affinity
    // that later experiments read.
    let (timed, other) = std::thread::scope(|s| {
        let (first, second) = (s.spawn(|| game.side(a, 0)), s.spawn(|| game.side(b, 1)));
        let joined = |h: std::thread::ScopedJoinHandle<'_, _>| h.join().expect("a ping-pong thread does not panic");
        (joined(first), joined(second))
    });
    other?;
    let (rounds, elapsed) = timed??;
    (rounds > 0).then(|| RoundTrip { cpus: (a, b), ns: elapsed.as_nanos() as f64 / rounds as f64 })
}

/// What the two sides of a measurement share.
struct Game {
    /// The counter both increment in turn: each increment is one trip of its line.
    line: CachePadded<AtomicU64>,
    /// Set by a side that leaves (done, or giving up): the other one stops waiting.
    done: AtomicBool,
}

impl Game {
    /// Side `parity` (0 or 1), pinned to `cpu`: `None` if it could not be pinned or gave
    /// up; for side 0, which keeps time, the round trips timed and their time.
    fn side(&self, cpu: usize, parity: u64) -> Option<Option<(u64, Duration)>> {
        let played = ordo::cpu::pin_current_thread(cpu).ok().and_then(|()| self.play(parity));
        self.done.store(true, Ordering::Relaxed);
        let (rounds, timed) = played?;
        Some(timed.map(|t| (rounds.saturating_sub(1), t.elapsed())))
    }

    /// Waits for the counter to reach a value of `parity`, then increments it, until
    /// [`ROUNDS`], [`BUDGET`] (side 0 keeps time, from the end of the first round trip, so
    /// that the other thread's start is not counted) or the other side left. Returns the
    /// rounds played and, for side 0, when timing began; `None` after [`GIVE_UP`].
    fn play(&self, parity: u64) -> Option<(u64, Option<Instant>)> {
        let mut timed: Option<Instant> = None;
        let waiting_since = Instant::now();
        for round in 0..ROUNDS {
            let mine = 2 * round + parity;
            let mut polls = 0u32;
            while self.line.load(Ordering::Acquire) != mine {
                polls = polls.wrapping_add(1);
                if polls.is_multiple_of(1 << 12) {
                    if self.done.load(Ordering::Relaxed) {
                        return Some((round, timed));
                    }
                    if timed.unwrap_or(waiting_since).elapsed() > GIVE_UP {
                        return None;
                    }
                }
                std::hint::spin_loop();
            }
            self.line.store(mine + 1, Ordering::Release);
            if parity == 0 {
                match timed {
                    None => timed = Some(Instant::now()),
                    Some(t) if round.is_multiple_of(CHECK_EVERY) && t.elapsed() > BUDGET => {
                        return Some((round, timed));
                    }
                    Some(_) => {}
                }
            }
        }
        Some((ROUNDS, timed))
    }
}

/// Figures further apart than this factor say that the host switched state (the
/// development host's states, about 50, 80–110 and 370–430 ns, are 2–8× apart; repeated
/// measurements in one state agree within about 1.5×).
pub const SWITCH_FACTOR: f64 = 2.0;

/// How long after a measurement a [`Watch`] measures again, before the next point: each
/// measurement takes up to [`BUDGET`], so this costs at most 2 % of a run.
pub const WATCH_EVERY: Duration = Duration::from_secs(5);

/// When a [`Watch`] measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum When {
    /// Before the experiment's first point.
    Before,
    /// Between two points.
    During,
    /// After its last point.
    After,
}

/// One measurement of a [`Watch`].
#[derive(Clone, Debug, PartialEq)]
struct Sample {
    /// Before, between points, or after.
    when: When,
    /// Since the experiment began.
    at: Duration,
    /// The point measured next (`During`: `impl_id threads T`; empty otherwise).
    point: String,
    /// The figure.
    trip: RoundTrip,
}

/// The host's round trip through each experiment in turn: measured before it, between its
/// points at most every [`WATCH_EVERY`], and after it (module docs).
pub struct Watch {
    measure: Box<dyn FnMut() -> Option<RoundTrip>>,
    every: Duration,
    started: Instant,
    last: Option<Instant>,
    samples: Vec<Sample>,
}

impl Watch {
    /// A watch measuring between the CPUs that `placement` gives threads 0 and 1
    /// ([`line_round_trip`]).
    pub fn new(placement: Placement) -> Self {
        Self::with_probe(WATCH_EVERY, move || line_round_trip(&placement))
    }

    /// A watch that measures with `measure`, again once `every` passed since the last
    /// measurement (tests give figures of their own).
    pub fn with_probe(every: Duration, measure: impl FnMut() -> Option<RoundTrip> + 'static) -> Self {
        Self { measure: Box::new(measure), every, started: Instant::now(), last: None, samples: Vec::new() }
    }

    /// Starts an experiment: forgets the last one's figures, and measures.
    pub fn begin(&mut self) {
        self.samples.clear();
        self.started = Instant::now();
        self.sample(When::Before, String::new());
    }

    /// Before the point of `impl_id` at `threads`: measures if `every` passed since the last
    /// measurement.
    pub fn between(&mut self, impl_id: &str, threads: usize) {
        if self.last.is_none_or(|t| t.elapsed() >= self.every) {
            self.sample(When::During, format!("{impl_id} {threads}T"));
        }
    }

    /// The last figure measured in this experiment, in nanoseconds.
    pub fn latest(&self) -> Option<f64> {
        self.samples.last().map(|s| s.trip.ns)
    }

    /// Ends the experiment: measures, and returns its `host` annex: the figures before and
    /// after, each switch between points, and a note when there was one.
    pub fn end(&mut self) -> Option<Annex> {
        self.sample(When::After, String::new());
        annex(&self.samples)
    }

    /// Measures; keeps the figure, if there is one.
    fn sample(&mut self, when: When, point: String) {
        let trip = (self.measure)();
        self.last = Some(Instant::now());
        if let Some(trip) = trip {
            self.samples.push(Sample { when, at: self.started.elapsed(), point, trip });
        }
    }
}

/// Whether two figures are more than [`SWITCH_FACTOR`] apart.
pub fn switched(a: f64, b: f64) -> bool {
    a.max(b) > SWITCH_FACTOR * a.min(b)
}

/// The `host` annex of an experiment measured at `samples` (in order): the figures before
/// and after it, and each figure between its points that switched from the one measured
/// before it, with a note when any two figures are more than [`SWITCH_FACTOR`] apart.
fn annex(samples: &[Sample]) -> Option<Annex> {
    if samples.is_empty() {
        return None;
    }
    let mut annex = Annex::new(
        "host",
        "host: cache-line round trip between the CPUs of threads 0 and 1: before, at each switch between points, \
         and after (module `host`)",
        &["when", "at_s", "next_point", "cpu_a", "cpu_b", crate::output::ROUND_TRIP_FIELD],
    );
    let mut previous: Option<f64> = None;
    for s in samples {
        let switch = previous.is_some_and(|p| switched(p, s.trip.ns));
        previous = Some(s.trip.ns);
        let when = match s.when {
            When::Before => "before",
            When::During if switch => "during",
            When::During => continue,
            When::After => "after",
        };
        annex.rows.push(vec![
            json!(when),
            json!(crate::output::round(1, s.at.as_secs_f64())),
            json!(s.point),
            json!(s.trip.cpus.0),
            json!(s.trip.cpus.1),
            json!(crate::output::round(1, s.trip.ns)),
        ]);
    }
    let (low, high) = samples.iter().fold((f64::INFINITY, 0.0_f64), |(l, h), s| (l.min(s.trip.ns), h.max(s.trip.ns)));
    if switched(low, high) {
        annex.note(format!(
            "the round trip ranged from {low:.0} to {high:.0} ns during the experiment: the host switched state, so \
             its table mixes points measured in both (each record's `round_trip_ns`, with --json or --out, is the \
             last figure measured before the record was made); measure the points that matter again (`--points`) while the \
             round trip stays put"
        ));
    }
    Some(annex)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_pinned_cpus_give_a_round_trip() {
        let placement = Placement::from_process();
        let Some(cpus) = placement.cpus() else { return };
        if cpus.len() < 2 {
            return;
        }
        let trip = line_round_trip(&placement).expect("two CPUs of the process measure");
        assert_eq!(trip.cpus, (cpus[0], cpus[1]));
        assert!(trip.ns > 0.0 && trip.ns.is_finite(), "{trip:?}");
    }

    #[test]
    fn measuring_leaves_the_callers_affinity_alone() {
        let before = ordo::cpu::allowed();
        let _ = line_round_trip(&Placement::from_process());
        assert_eq!(ordo::cpu::allowed(), before);
    }

    #[test]
    fn no_two_cpus_no_figure() {
        assert_eq!(line_round_trip(&Placement::unpinned()), None);
        let one = Placement::from_process().cpu_for(0);
        if let Some(cpu) = one {
            assert_eq!(line_round_trip(&Placement::over(vec![cpu])), None);
        }
        assert_eq!(annex(&[]), None);
        let mut watch = Watch::with_probe(Duration::ZERO, || None);
        watch.begin();
        watch.between("a", 1);
        assert_eq!((watch.latest(), watch.end()), (None, None));
    }

    /// A watch whose probe returns `figures` in turn, measuring before every point.
    fn watch_of(figures: Vec<f64>) -> Watch {
        let mut figures = figures.into_iter();
        Watch::with_probe(Duration::ZERO, move || figures.next().map(|ns| RoundTrip { cpus: (0, 1), ns }))
    }

    fn rows(annex: &Annex) -> Vec<(String, String, f64)> {
        let text = |v: &serde_json::Value| v.as_str().unwrap().to_owned();
        annex.rows.iter().map(|r| (text(&r[0]), text(&r[2]), r[5].as_f64().unwrap())).collect()
    }

    #[test]
    fn before_and_after_make_the_annex_of_a_steady_host() {
        let mut watch = watch_of(vec![101.26, 90.0, 95.0]);
        watch.begin();
        assert_eq!(watch.latest(), Some(101.26));
        watch.between("oplog", 2);
        assert_eq!(watch.latest(), Some(90.0));
        let a = watch.end().expect("measured");
        let round = crate::output::round(1, 101.26);
        assert_eq!(rows(&a), [("before".into(), String::new(), round), ("after".into(), String::new(), 95.0)]);
        assert!(a.notes.is_empty(), "{:?}", a.notes);
    }

    #[test]
    fn a_switch_between_points_is_listed_and_noted() {
        // Steady, then slow from the second point on, then fast again before the end.
        let mut watch = watch_of(vec![50.0, 52.0, 406.0, 410.0, 48.0, 47.0]);
        watch.begin();
        for (id, threads) in [("a", 1), ("a", 2), ("b", 1), ("b", 2)] {
            watch.between(id, threads);
        }
        let a = watch.end().expect("measured");
        assert_eq!(
            rows(&a),
            [
                ("before".into(), String::new(), 50.0),
                ("during".into(), "a 2T".into(), 406.0),
                ("during".into(), "b 2T".into(), 48.0),
                ("after".into(), String::new(), 47.0),
            ]
        );
        assert_eq!(a.notes.len(), 1);
        assert!(a.notes[0].starts_with("the round trip ranged from 47 to 410 ns"), "{:?}", a.notes);
        // The next experiment starts afresh.
        let mut watch = watch_of(vec![406.0, 50.0]);
        watch.begin();
        assert!(watch.end().unwrap().notes.len() == 1);
    }

    #[test]
    fn a_watch_measures_again_only_once_its_interval_passed() {
        let count = std::rc::Rc::new(std::cell::Cell::new(0));
        let counted = count.clone();
        let mut watch = Watch::with_probe(Duration::from_secs(3600), move || {
            counted.set(counted.get() + 1);
            Some(RoundTrip { cpus: (0, 1), ns: 50.0 })
        });
        watch.begin();
        (0..10).for_each(|_| watch.between("p", 1));
        assert_eq!(count.get(), 1, "within the interval, points measure nothing");
        watch.end();
        assert_eq!(count.get(), 2);
    }
}

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
//! the CPUs of threads 0 and 1 just before and just after each experiment, and reports
//! both: ratios are comparable between runs whose round trips are alike, and an experiment
//! whose two figures differ caught a switch (the annex then says so: [`SWITCH_FACTOR`]).
//! Two alike figures do not prove that a long experiment saw no switch in between
//! (`objects` takes minutes).
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

/// Before and after figures further apart than this factor say that the host switched
/// state during the experiment (the development host's states, about 50, 80–110 and
/// 370–430 ns, are 2–8× apart; repeated measurements in one state agree within about 1.5×).
pub const SWITCH_FACTOR: f64 = 2.0;

/// The `host` annex of an experiment: the round trips measured before and after it, with a
/// note when they differ by more than [`SWITCH_FACTOR`].
pub fn annex(before: Option<RoundTrip>, after: Option<RoundTrip>) -> Option<Annex> {
    if before.is_none() && after.is_none() {
        return None;
    }
    let mut annex = Annex::new(
        "host",
        "host: cache-line round trip between the CPUs of threads 0 and 1, before and after (module `host`)",
        &["when", "cpu_a", "cpu_b", "round_trip_ns"],
    );
    for (when, trip) in [("before", before), ("after", after)] {
        if let Some(t) = trip {
            annex.rows.push(vec![json!(when), json!(t.cpus.0), json!(t.cpus.1), json!(crate::output::round(1, t.ns))]);
        }
    }
    if let (Some(b), Some(a)) = (before, after)
        && b.ns.max(a.ns) > SWITCH_FACTOR * b.ns.min(a.ns)
    {
        annex.note(format!(
            "the round trip went from {:.0} to {:.0} ns during the experiment: the host switched state, so its \
             table may mix points measured in both; measure the points that matter again (`--points`) while \
             the round trip stays put",
            b.ns, a.ns
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
        assert_eq!(annex(None, None), None);
    }

    #[test]
    fn the_annex_has_a_row_per_measurement() {
        let t = RoundTrip { cpus: (0, 1), ns: 101.26 };
        let a = annex(Some(t), None).expect("one measurement makes an annex");
        assert_eq!(a.rows, vec![vec![json!("before"), json!(0), json!(1), json!(crate::output::round(1, 101.26))]]);
        assert_eq!(annex(Some(t), Some(t)).unwrap().rows.len(), 2);
        assert!(annex(Some(t), Some(t)).unwrap().notes.is_empty());
    }

    #[test]
    fn a_switch_of_state_is_noted() {
        let fast = RoundTrip { cpus: (0, 1), ns: 50.0 };
        let slow = RoundTrip { cpus: (0, 1), ns: 406.0 };
        let noted = annex(Some(fast), Some(slow)).unwrap().notes;
        assert_eq!(noted.len(), 1);
        assert!(noted[0].starts_with("the round trip went from 50 to 406 ns"), "{noted:?}");
        assert_eq!(annex(Some(slow), Some(fast)).unwrap().notes.len(), 1);
        let alike = RoundTrip { ns: 90.0, ..fast };
        assert!(annex(Some(fast), Some(alike)).unwrap().notes.is_empty());
        assert!(annex(Some(fast), None).unwrap().notes.is_empty());
    }
}

//! What a timestamp costs the three Ordo applications measured here (003 §4: RLU in `rlu`,
//! TL2 in `stm`, Silo-style OCC and Hekaton-style MVCC in `txn`), and where Ordo overtakes
//! the logical clock on more cores than this machine has.
//!
//! **One timestamp's cost.** [`clock_cost`] measures the four clock primitives the three
//! applications are built from, each alone, with every one of the run's threads calling it
//! in a loop: a logical `now` (a load of the shared counter), a logical `new_time` (a CAS of
//! it past the previous value), an Ordo `get_time` and an Ordo `new_time` (one clock read,
//! `rdtscp`, and for `new_time` the wait out of the uncertainty window: 003 Figure 3). Each
//! experiment records the four fields ([`ClockCost::fields`]) and combines them as its
//! algorithm takes timestamps (its module docs say how).
//!
//! **The crossover model ([`Crossover`]).** Per thread, an operation takes `t_L(n)` ns on
//! the logical clock and `t_O(n)` on Ordo at `n` cores. Ordo obtains its timestamps from the
//! local clock, so nothing in its timestamping grows with `n`: `t_O(n) = t_O(1)`. The
//! logical clock's counter is one cache line that each operation accesses `k` times (RLU: a
//! section start and a commit; TL2: its start load and its commit CAS; OCC and MVCC: their
//! start and commit stamps), and each access waits for the line to come from the core that
//! wrote it last; 000 Figure 4 measured that wait growing by a fixed step per added core
//! (about 160 cycles on its 48-core machine), the step the `contention` experiment measures
//! here as `x` ns ([`LineTransfer`]). So `t_L(n) = t_L(1) + k·x·(n − 1)` and Ordo/logical
//! throughput is `t_L(n) / t_O(1)`, which reaches 1 at `n* = 1 + (t_O(1) − t_L(1)) / (k·x)`
//! (1 if Ordo is already ahead on one core).
//!
//! **What it leaves out.** Data conflicts and aborts (they grow with `n` for both clocks
//! alike), the memory bandwidth of the data itself, and a counter line that stays in a
//! core's cache when it alone commits for a while (which makes `k·x` an upper bound at low
//! commit rates). On two cores it can only be checked at `n = 2`: the annexes print the
//! model's ratio at 2 beside the measured one.

use std::time::Duration;

use ordo::{Clock, LogicalClock, Ordo};
use serde_json::{Value, json};

use super::contention::transfer_ticks;
use super::spinlock::TEXT_TRANSFER_CYCLES;
use crate::harness::{Run, Settings, Stop, Throughput};
use crate::output::{Record, round};

/// Calls between two checks of the stop flag.
const BATCH: u64 = 32;

/// The note every `crossover` annex carries.
pub const TWO_CORES_NOTE: &str =
    "This machine has 2 cores: beyond 2 the crossover is the model's prediction, not a measurement.";

/// The cost of one call of each clock primitive, with `run.threads` threads calling it in a
/// loop, in ns per call per thread.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClockCost {
    /// `LogicalClock::now`: a load of the counter.
    pub logical_now_ns: f64,
    /// `LogicalClock::new_time(previous)`: a CAS of the counter past `previous`.
    pub logical_new_time_ns: f64,
    /// `Ordo::now` = `get_time`: one clock read.
    pub ordo_now_ns: f64,
    /// `Ordo::new_time(previous)` after the previous one: waits out the window.
    pub ordo_new_time_ns: f64,
}

impl ClockCost {
    /// `record` with the four costs as the fields `logical_now_ns`, `logical_new_time_ns`,
    /// `ordo_now_ns` and `ordo_new_time_ns`.
    pub fn fields(&self, record: Record) -> Record {
        record
            .with("logical_now_ns", self.logical_now_ns)
            .with("logical_new_time_ns", self.logical_new_time_ns)
            .with("ordo_now_ns", self.ordo_now_ns)
            .with("ordo_new_time_ns", self.ordo_new_time_ns)
    }
}

/// Measures [`ClockCost`] at `run`'s thread count (one repetition each, at most 50 ms).
pub fn clock_cost(run: &Run, ordo: &Ordo) -> ClockCost {
    let short = Run { reps: 1, duration: run.duration.min(Duration::from_millis(50)), ..*run };
    let ns = |t: Throughput| round(1, 1e9 * short.threads as f64 / t.median);
    fn calls<C: Clock>(clock: &C, stop: &Stop, mut call: impl FnMut(&C, u64) -> u64) -> u64 {
        let mut last = clock.now();
        let n = stop.run_batched(BATCH, || last = call(clock, last));
        std::hint::black_box(last);
        n
    }
    let logical = |call: fn(&LogicalClock, u64) -> u64| {
        ns(short.throughput(LogicalClock::new, move |c: &LogicalClock, _, stop: &Stop| calls(c, stop, call)))
    };
    let on_ordo = |call: fn(&Ordo, u64) -> u64| {
        ns(short.throughput(|| ordo.clone(), move |c: &Ordo, _, stop: &Stop| calls(c, stop, call)))
    };
    ClockCost {
        logical_now_ns: logical(|c, _| c.now()),
        logical_new_time_ns: logical(|c, t| c.new_time(t)),
        ordo_now_ns: on_ordo(|c, _| c.now()),
        ordo_new_time_ns: on_ordo(|c, t| c.new_time(t)),
    }
}

/// The growth from 1 to 2 threads of `access_ns` (one access to the logical counter, as
/// an experiment combines [`ClockCost`]'s fields), given the costs per thread count; `None`
/// unless both were measured and it grew.
pub fn clock_step(costs: &[(usize, ClockCost)], access_ns: impl Fn(&ClockCost) -> f64) -> Option<f64> {
    let at = |t: usize| costs.iter().find(|c| c.0 == t).map(|c| access_ns(&c.1));
    at(2).zip(at(1)).map(|(two, one)| two - one).filter(|s| *s > 0.0)
}

/// `x` of the model: the ns one added core adds to each access of a shared line.
#[derive(Clone, Debug, PartialEq)]
pub struct LineTransfer {
    /// ns per access per added core.
    pub ns: f64,
    /// Where it comes from, for the annex's description.
    pub source: String,
}

impl LineTransfer {
    /// One line transfer as the `contention` experiment measures it ([`transfer_ticks`]),
    /// or 000 §3.1's 160 cycles where that is noise or there is no second CPU.
    pub fn measure(settings: &Settings, ordo: &Ordo) -> LineTransfer {
        let (ticks, source) = match transfer_ticks(settings, ordo) {
            Some(t) if t >= 1.0 => (t, "one line transfer, measured here by `contention`".to_owned()),
            Some(t) => (TEXT_TRANSFER_CYCLES, format!("000 §3.1's slope: the measured {t:.1} ticks are noise")),
            None => (TEXT_TRANSFER_CYCLES, "000 §3.1's slope: no second CPU here".to_owned()),
        };
        LineTransfer { ns: ticks / ordo.ticks_per_ns(), source }
    }
}

/// `a / b` rounded to 2 places for an annex, or null where either is missing or `b` is 0.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> Value {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => json!(round(2, a / b)),
        _ => Value::Null,
    }
}

/// The inputs of the model for one workload.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Crossover {
    /// `t_L(1)`: ns per operation per thread on the logical clock, one thread.
    pub logical_ns: f64,
    /// `t_O(1)`: the same on Ordo.
    pub ordo_ns: f64,
    /// `k`: accesses to the counter's line per operation.
    pub accesses: f64,
    /// `x`: ns added to each access per added core.
    pub transfer_ns: f64,
}

impl Crossover {
    /// The model's Ordo/logical throughput ratio at `n` cores.
    pub fn ratio(&self, n: f64) -> f64 {
        (self.logical_ns + self.accesses * self.transfer_ns * (n - 1.0)) / self.ordo_ns
    }

    /// `n*`, the core count at which the ratio reaches 1 (1 if it is already there at one
    /// core), or `None` if the logical clock never slows (`k·x = 0`).
    pub fn cores(&self) -> Option<f64> {
        if self.ordo_ns <= self.logical_ns {
            return Some(1.0);
        }
        let slope = self.accesses * self.transfer_ns;
        (slope > 0.0).then(|| 1.0 + (self.ordo_ns - self.logical_ns) / slope)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pin::Placement;

    #[test]
    fn crossover_is_where_the_ratio_reaches_one() {
        let m = Crossover { logical_ns: 100.0, ordo_ns: 160.0, accesses: 2.0, transfer_ns: 10.0 };
        let n = m.cores().unwrap();
        assert_eq!(n, 4.0);
        assert!((m.ratio(n) - 1.0).abs() < 1e-12);
        assert!(m.ratio(2.0) < 1.0 && m.ratio(8.0) > 1.0);
        let ahead = Crossover { ordo_ns: 90.0, ..m };
        assert_eq!(ahead.cores(), Some(1.0));
        let flat = Crossover { transfer_ns: 0.0, ..m };
        assert_eq!(flat.cores(), None);
    }

    #[test]
    fn clocks_cost_something() {
        let placement = Placement::from_process();
        let run = Run { threads: 2, duration: Duration::from_millis(5), reps: 1, placement: &placement };
        let c = clock_cost(&run, &Ordo::monotonic());
        assert!(
            c.logical_now_ns > 0.0 && c.logical_new_time_ns > 0.0 && c.ordo_now_ns > 0.0 && c.ordo_new_time_ns > 0.0,
            "{c:?}"
        );
    }

    #[test]
    fn the_step_is_the_growth_from_one_to_two_threads() {
        let cost = |now, new_time| ClockCost {
            logical_now_ns: now,
            logical_new_time_ns: new_time,
            ordo_now_ns: 10.0,
            ordo_new_time_ns: 30.0,
        };
        let costs = [(1, cost(2.0, 10.0)), (2, cost(4.0, 40.0))];
        assert_eq!(clock_step(&costs, |c| c.logical_new_time_ns), Some(30.0));
        assert_eq!(clock_step(&costs, |c| (c.logical_now_ns + c.logical_new_time_ns) / 2.0), Some(16.0));
        assert_eq!(clock_step(&costs, |c| c.ordo_now_ns), None, "no growth");
        assert_eq!(clock_step(&costs[..1], |c| c.logical_new_time_ns), None, "no 2-thread point");
    }

    #[test]
    fn ratios_of_missing_or_zero_points_are_null() {
        assert_eq!(ratio(Some(3.0), Some(2.0)), json!(1.5));
        assert_eq!(ratio(None, Some(2.0)), Value::Null);
        assert_eq!(ratio(Some(3.0), Some(0.0)), Value::Null);
    }
}

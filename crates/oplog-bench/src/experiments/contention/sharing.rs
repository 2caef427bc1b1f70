//! The latency of one access to a cache line, by how the line is shared (002 §3.2, Figures
//! 3-3 and 3-4): measured access by access, in rounds that start every thread at once.
//!
//! Each round, the T pinned threads meet at a barrier, then each one that takes part reads
//! or writes once, between two clock readings, and they meet again. What a round does
//! ([`Sharing`]):
//!
//! - `read-read` (Figure 3-3, top): every thread reads the one line nobody writes. After
//!   each core's first miss the line stays in every cache: conflict-free.
//! - `own-write` (Figure 3-3, bottom): every thread writes a line of its own (store and
//!   fence): conflict-free.
//! - `write-write` (Figure 3-4, top): every thread writes the one line at once: each must
//!   take the line from the one that wrote it before, one at a time.
//! - `read-write` (Figure 3-4, bottom): before the barrier thread 0 writes the line, then
//!   the other T − 1 threads read it at once, each fetching it from thread 0's cache. With
//!   one thread there is no reader, so that point is not measured.
//!
//! **The cost of one access** is the median over every sample of the run's threads (a
//! sample a preemption inflated cannot move it; this 2-core machine is shared) of the
//! ticks between the two readings, less the median of two back-to-back readings taken in
//! the same rounds (the reading's own cost, about 45 ticks of `rdtscp` here, reported as
//! `timer_ticks`); the 99th percentile (`p99_cycles`, the timer's median subtracted too)
//! gives the tail of 002's latency distributions. A write's fence makes the second reading
//! wait for the line in exclusive state; `rdtscp` itself waits for earlier loads, so a read
//! is complete when the second reading is taken ([`ordo`]'s `hw` notes).

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering, fence};
use std::sync::{Mutex, PoisonError};

use crossbeam_utils::CachePadded;
use ordo::{Clock, Ordo};

use crate::harness::{Run, Stop, Throughput, median};

/// Samples kept per thread and repetition (later rounds still run, untimed into the
/// median): 200,000 rounds take about 0.2 s on two cores.
const MAX_SAMPLES: usize = 200_000;

/// Spins at the barrier before each `yield_now` (a waiter preempted by another process
/// must be let run).
const SPINS_BEFORE_YIELD: u32 = 1_000;

/// How the threads of a round access the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharing {
    /// Every thread reads the one line; nobody writes it.
    ReadRead,
    /// Every thread writes a line of its own.
    OwnWrite,
    /// Every thread writes the one line.
    WriteWrite,
    /// Thread 0 writes the line, then every other thread reads it.
    ReadWrite,
}

/// The sharing patterns measured, in table order.
pub const SHARINGS: [Sharing; 4] = [Sharing::ReadRead, Sharing::OwnWrite, Sharing::WriteWrite, Sharing::ReadWrite];

impl Sharing {
    /// Stable id: the `impl` field of records.
    pub fn id(self) -> &'static str {
        match self {
            Sharing::ReadRead => "read-read",
            Sharing::OwnWrite => "own-write",
            Sharing::WriteWrite => "write-write",
            Sharing::ReadWrite => "read-write",
        }
    }

    /// Whether the pattern can be measured with `threads` threads (`read-write` needs a
    /// reader besides the writer).
    pub fn runs_at(self, threads: usize) -> bool {
        threads >= 1 && (self != Sharing::ReadWrite || threads >= 2)
    }

    /// Whether `thread` accesses the line (and is timed) in each round.
    fn times(self, thread: usize) -> bool {
        self != Sharing::ReadWrite || thread != 0
    }
}

/// A barrier that T threads pass together, round after round (sense by generation).
struct Barrier {
    arrived: CachePadded<AtomicUsize>,
    generation: CachePadded<AtomicUsize>,
    parties: usize,
}

impl Barrier {
    fn new(parties: usize) -> Self {
        Self { arrived: CachePadded::default(), generation: CachePadded::default(), parties }
    }

    /// Waits until all parties have arrived; `passed` counts the barriers this thread has
    /// passed (its generation).
    fn wait(&self, passed: &mut usize) {
        let generation = *passed;
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.parties {
            // Reset before the release: a thread released below may arrive at the next
            // barrier at once.
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.store(generation + 1, Ordering::Release);
        } else {
            let mut spins = 0;
            while self.generation.load(Ordering::Acquire) == generation {
                spins += 1;
                if spins % SPINS_BEFORE_YIELD == 0 {
                    std::thread::yield_now();
                } else {
                    std::hint::spin_loop();
                }
            }
        }
        *passed = generation + 1;
    }
}

/// One thread's samples, in ticks: its timed accesses, and its pairs of back-to-back
/// clock readings.
#[derive(Debug, Default)]
struct Samples {
    access: Vec<u32>,
    timer: Vec<u32>,
}

/// One repetition's lines, barrier and samples.
struct Rounds {
    line: CachePadded<AtomicU64>,
    own: Box<[CachePadded<AtomicU64>]>,
    barrier: Barrier,
    /// Raised by thread 0 before a barrier: every thread leaves after it.
    done: CachePadded<AtomicBool>,
    /// Per thread, handed back when it stops.
    samples: Box<[Mutex<Samples>]>,
}

impl Rounds {
    fn new(threads: usize) -> Self {
        Self {
            line: CachePadded::default(),
            own: (0..threads).map(|_| CachePadded::default()).collect(),
            barrier: Barrier::new(threads),
            done: CachePadded::default(),
            samples: (0..threads)
                .map(|_| {
                    Mutex::new(Samples {
                        access: Vec::with_capacity(MAX_SAMPLES),
                        timer: Vec::with_capacity(MAX_SAMPLES),
                    })
                })
                .collect(),
        }
    }

    /// Worker `thread`'s rounds until thread 0 sees the stop flag; returns its timed
    /// accesses.
    fn work(&self, sharing: Sharing, clock: &Ordo, thread: usize, stop: &Stop) -> u64 {
        let mut slot = self.samples[thread].lock().unwrap_or_else(PoisonError::into_inner);
        let Samples { access, timer } = &mut *slot;
        let (line, own) = (&*self.line, &*self.own[thread]);
        let mut passed = 0;
        let mut round = 0u64;
        let mut timed = 0u64;
        loop {
            round += 1;
            // Set-up, untimed: the reading's own cost, the stop decision, the first write.
            let t0 = clock.get_time();
            let t1 = clock.get_time();
            if timer.len() < MAX_SAMPLES {
                timer.push(ticks(t0, t1));
            }
            if thread == 0 {
                // Every thread times at least one round, even one that starts after the stop.
                if round > 1 && stop.is_stopped() {
                    self.done.store(true, Ordering::Relaxed);
                }
                if sharing == Sharing::ReadWrite {
                    line.store(round, Ordering::Relaxed);
                    fence(Ordering::SeqCst);
                }
            }
            self.barrier.wait(&mut passed);
            // The barrier orders thread 0's flag before this load.
            if self.done.load(Ordering::Relaxed) {
                return timed;
            }
            if sharing.times(thread) {
                let t0 = clock.get_time();
                match sharing {
                    Sharing::ReadRead | Sharing::ReadWrite => {
                        black_box(line.load(Ordering::Relaxed));
                    }
                    Sharing::OwnWrite => {
                        own.store(round, Ordering::Relaxed);
                        fence(Ordering::SeqCst);
                    }
                    Sharing::WriteWrite => {
                        line.store(round, Ordering::Relaxed);
                        fence(Ordering::SeqCst);
                    }
                }
                let t1 = clock.get_time();
                if access.len() < MAX_SAMPLES {
                    access.push(ticks(t0, t1));
                }
                timed += 1;
            }
            // Nobody sets up the next round while another still accesses this one.
            self.barrier.wait(&mut passed);
        }
    }

    /// Takes every thread's samples, together.
    fn take_samples(&self) -> Samples {
        let mut all = Samples::default();
        for slot in &self.samples {
            let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
            all.access.append(&mut slot.access);
            all.timer.append(&mut slot.timer);
        }
        all
    }
}

/// Ticks from `t0` to `t1`, saturated to `u32`.
fn ticks(t0: u64, t1: u64) -> u32 {
    u32::try_from(t1.wrapping_sub(t0)).unwrap_or(u32::MAX)
}

/// The `q`-quantile (0..=1) of `samples`, reordering them; `None` if there are none.
pub fn quantile(samples: &mut [u32], q: f64) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    let k = ((samples.len() - 1) as f64 * q.clamp(0.0, 1.0)).round() as usize;
    Some(f64::from(*samples.select_nth_unstable(k).1))
}

/// One measured sharing point.
#[derive(Clone, Debug, PartialEq)]
pub struct Latency {
    /// Timed accesses per second, all threads (set by the rounds' pace, not the access).
    pub throughput: Throughput,
    /// Median ticks of one access less the timer's, median over repetitions.
    pub median: f64,
    /// Per repetition, that median (min and max give the noise band).
    pub medians: Vec<f64>,
    /// 99th-percentile ticks of one access less the timer's median, median over
    /// repetitions.
    pub p99: f64,
    /// Median ticks of two back-to-back clock readings, median over repetitions.
    pub timer: f64,
}

/// Measures `sharing` at one point: `run.threads` threads (at least 1; 2 for `read-write`).
///
/// # Panics
/// When `sharing` does not run at `run.threads` ([`Sharing::runs_at`]).
pub fn measure(sharing: Sharing, clock: &Ordo, run: &Run) -> Latency {
    assert!(sharing.runs_at(run.threads), "{} needs more than {} thread(s)", sharing.id(), run.threads);
    let (mut medians, mut p99s, mut timers) = (Vec::new(), Vec::new(), Vec::new());
    let throughput = run.throughput_checked(
        || Rounds::new(run.threads),
        |rounds: &Rounds, thread, stop: &Stop| rounds.work(sharing, clock, thread, stop),
        |rounds, timed| {
            let Samples { mut access, mut timer } = rounds.take_samples();
            assert!(timed > 0 && !access.is_empty(), "{}: no access was timed", sharing.id());
            let timer = quantile(&mut timer, 0.5).expect("every round reads the timer");
            let mut net = |q: f64| (quantile(&mut access, q).expect("checked above") - timer).max(0.0);
            medians.push(net(0.5));
            p99s.push(net(0.99));
            timers.push(timer);
        },
    );
    Latency { throughput, median: median(&medians), medians, p99: median(&p99s), timer: median(&timers) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pin::Placement;
    use std::time::Duration;

    #[test]
    fn every_pattern_times_its_accesses_at_one_and_two_threads() {
        let placement = Placement::from_process();
        let clock = Ordo::monotonic();
        for threads in [1, 2] {
            let run = Run { threads, duration: Duration::from_millis(5), reps: 2, placement: &placement };
            for sharing in SHARINGS.into_iter().filter(|s| s.runs_at(threads)) {
                let l = measure(sharing, &clock, &run);
                assert!(l.throughput.median > 0.0, "{}", sharing.id());
                assert_eq!(l.medians.len(), 2);
                // An access costs less than a whole repetition, and its tail is no shorter
                // than its median.
                assert!(l.median >= 0.0 && l.median < 5e6 && l.p99 >= l.median, "{}: {l:?}", sharing.id());
            }
        }
    }

    #[test]
    fn read_write_needs_a_reader_besides_the_writer() {
        assert!(!Sharing::ReadWrite.runs_at(1));
        assert!(Sharing::ReadWrite.runs_at(2));
        assert!(SHARINGS.iter().all(|s| *s == Sharing::ReadWrite || s.runs_at(1)));
        assert!(!Sharing::ReadWrite.times(0) && Sharing::ReadWrite.times(1) && Sharing::WriteWrite.times(0));
    }

    #[test]
    #[should_panic(expected = "read-write needs more than 1 thread(s)")]
    fn read_write_alone_is_refused() {
        let placement = Placement::unpinned();
        let run = Run { threads: 1, duration: Duration::from_millis(1), reps: 1, placement: &placement };
        measure(Sharing::ReadWrite, &Ordo::monotonic(), &run);
    }

    #[test]
    fn the_barrier_keeps_rounds_in_step() {
        // Each thread writes its round number, passes a barrier, and checks that every
        // other thread has written the same round: a barrier that let one run ahead fails.
        let threads = 3;
        let barrier = Barrier::new(threads);
        let seen: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(0)).collect();
        std::thread::scope(|s| {
            for t in 0..threads {
                let (barrier, seen) = (&barrier, &seen);
                s.spawn(move || {
                    let mut passed = 0;
                    for round in 1..=200u64 {
                        seen[t].store(round, Ordering::Relaxed);
                        barrier.wait(&mut passed);
                        assert!(seen.iter().all(|v| v.load(Ordering::Relaxed) == round), "round {round}");
                        barrier.wait(&mut passed);
                    }
                    assert_eq!(passed, 400);
                });
            }
        });
    }

    #[test]
    fn quantiles_pick_the_ranked_sample() {
        let mut v = vec![5, 1, 4, 2, 3];
        assert_eq!(quantile(&mut v, 0.5), Some(3.0));
        assert_eq!(quantile(&mut v, 0.0), Some(1.0));
        assert_eq!(quantile(&mut v, 1.0), Some(5.0));
        assert_eq!(quantile(&mut [], 0.5), None);
    }
}

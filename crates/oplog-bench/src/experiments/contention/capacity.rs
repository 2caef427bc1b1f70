//! Where conflict-free accesses stop scaling: the region each core touches outgrows its
//! caches (002 §3.3, Figure 3-5).
//!
//! Each of T pinned threads walks a region of `region_bytes` (4 KiB to 64 MiB) in a tight
//! loop, one access per cache line, in a random cyclic order: every line holds the index
//! of the next, so each access waits for the one before it (latency, not bandwidth), and
//! the random order defeats the prefetchers. Two kinds ([`RegionAccess`]):
//!
//! - `region-read` (Figure 3-5, top): every thread walks one shared region, starting at
//!   evenly spaced lines of its cycle, and only reads it;
//! - `region-write` (Figure 3-5, bottom): every thread walks a region of its own and
//!   writes a word of each line it reads, so lines leave its caches dirty.
//!
//! Nothing is shared that is written: every access is conflict-free, and what grows with
//! the region is the level that serves it (L1, L2, L3, memory) and, past the TLB's reach,
//! page walks. With several threads the regions together compete for the shared levels and
//! the memory controller, which is 002's point: conflict-freedom predicts scaling until
//! capacity runs out. A record's cost is the mean over threads of (clock ticks of the loop
//! / lines accessed), median over repetitions. 002 allocates everything on CPU 0's socket
//! to stress one memory controller; this process takes the kernel's default placement (one
//! node on the machines measured here).

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use ordo::{Clock, Ordo};

use super::super::read_mix::SplitMix64;
use super::Timings;
use crate::harness::{Run, Stop, Throughput, median};

/// Region sizes measured, in bytes: 4 KiB to 64 MiB, by fours.
pub const REGION_BYTES: [usize; 8] = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20];

/// Region sizes measured with `--quick`.
pub const QUICK_REGION_BYTES: [usize; 3] = [4 << 10, 256 << 10, 16 << 20];

/// Lines accessed between two checks of the stop flag.
const BATCH: u64 = 64;

/// Bytes of a cache line (and of a [`Line`]).
const LINE_BYTES: usize = 64;

/// What the threads do with their regions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegionAccess {
    /// Every thread reads one shared region.
    SharedRead,
    /// Every thread reads and writes a region of its own.
    OwnWrite,
}

/// The kinds measured, in table order.
pub const ACCESSES: [RegionAccess; 2] = [RegionAccess::SharedRead, RegionAccess::OwnWrite];

impl RegionAccess {
    /// Stable id: the `access` column of the `capacity` annex.
    pub fn id(self) -> &'static str {
        match self {
            RegionAccess::SharedRead => "region-read",
            RegionAccess::OwnWrite => "region-write",
        }
    }
}

/// One cache line of a region: the index of the next line of the walk, and a word the
/// writers store to.
#[repr(C, align(64))]
struct Line {
    next: usize,
    data: AtomicU64,
}

const _: () = assert!(size_of::<Line>() == LINE_BYTES);

/// A region: lines linked into one random cycle.
struct Region {
    lines: Box<[Line]>,
}

impl Region {
    /// A region of `bytes` (at least one line), its lines in one cycle drawn with
    /// Sattolo's algorithm from `seed`.
    fn new(bytes: usize, seed: u64) -> Self {
        let n = (bytes / LINE_BYTES).max(1);
        let mut order: Vec<usize> = (0..n).collect();
        let mut rng = SplitMix64::new(seed);
        for i in (1..n).rev() {
            // Sattolo: j < i, so the permutation is a single cycle through every line.
            let j = (rng.next_u64() % i as u64) as usize;
            order.swap(i, j);
        }
        let mut next = vec![0; n];
        for k in 0..n {
            next[order[k]] = order[(k + 1) % n];
        }
        Self { lines: next.into_iter().map(|next| Line { next, data: AtomicU64::new(0) }).collect() }
    }

    /// The line `steps` steps along the cycle from line 0.
    fn walk_from_start(&self, steps: usize) -> usize {
        (0..steps).fold(0, |i, _| self.lines[i].next)
    }
}

/// One repetition's regions and what each worker measured.
struct Regions {
    /// The shared region (`region-read`), or the threads' own (`region-write`).
    regions: Vec<Region>,
    /// Per worker: the line it starts at.
    starts: Vec<usize>,
    /// Per worker: (ticks, lines accessed) of its loop.
    timings: Timings,
}

impl Regions {
    fn new(access: RegionAccess, bytes: usize, threads: usize) -> Self {
        let (regions, starts) = match access {
            RegionAccess::SharedRead => {
                let region = Region::new(bytes, 1);
                let n = region.lines.len();
                // Evenly spaced along the cycle, so the threads do not walk in lockstep.
                let starts = (0..threads).map(|t| region.walk_from_start(t * n / threads)).collect();
                (vec![region], starts)
            }
            RegionAccess::OwnWrite => {
                ((0..threads).map(|t| Region::new(bytes, t as u64 + 1)).collect(), vec![0; threads])
            }
        };
        Self { regions, starts, timings: Timings::new(threads) }
    }

    /// Mean over workers of ticks per line accessed.
    fn ticks_per_access(&self) -> f64 {
        self.timings.mean()
    }
}

/// One measured capacity point.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// Lines accessed per second, all threads.
    pub throughput: Throughput,
    /// Median over repetitions of the mean ticks per line accessed.
    pub ticks_per_access: f64,
}

/// Measures `access` on regions of `bytes` at one point.
pub fn measure(access: RegionAccess, bytes: usize, clock: &Ordo, run: &Run) -> Measured {
    let mut ticks = Vec::new();
    let throughput = run.throughput_checked(
        || Regions::new(access, bytes, run.threads),
        |r: &Regions, thread, stop: &Stop| {
            let (lines, write) = match access {
                RegionAccess::SharedRead => (&r.regions[0].lines, false),
                RegionAccess::OwnWrite => (&r.regions[thread].lines, true),
            };
            let mut i = r.starts[thread];
            let start = clock.get_time();
            let accessed = stop.run_batched(BATCH, || {
                let line = &lines[i];
                i = line.next;
                if write {
                    line.data.store(i as u64 + 1, Ordering::Relaxed);
                }
            });
            let elapsed = clock.get_time().wrapping_sub(start);
            black_box(i);
            r.timings.set(thread, elapsed, accessed);
            accessed
        },
        |r, accessed| {
            if access == RegionAccess::OwnWrite {
                // Every line written holds its successor's index plus one: the writes landed.
                let written =
                    r.regions.iter().flat_map(|g| g.lines.iter()).filter(|l| l.data.load(Ordering::Relaxed) != 0);
                assert!(written.count() > 0 || accessed == 0, "region-write wrote nothing");
            }
            ticks.push(r.ticks_per_access());
        },
    );
    Measured { throughput, ticks_per_access: median(&ticks) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pin::Placement;
    use std::time::Duration;

    #[test]
    fn a_region_is_one_cycle_through_every_line() {
        for bytes in [1, 64, 4096, 64 * 1000] {
            let region = Region::new(bytes, 7);
            let n = region.lines.len();
            assert_eq!(n, (bytes / 64).max(1));
            let mut seen = vec![false; n];
            let mut i = 0;
            for _ in 0..n {
                assert!(!seen[i], "line {i} visited twice before the cycle closed ({bytes} bytes)");
                seen[i] = true;
                i = region.lines[i].next;
            }
            assert_eq!(i, 0, "the walk returns to its start after every line");
            assert!(seen.iter().all(|s| *s));
        }
    }

    #[test]
    fn shared_readers_start_spread_along_the_cycle() {
        let r = Regions::new(RegionAccess::SharedRead, 64 * 64, 2);
        assert_eq!(r.regions.len(), 1);
        assert_eq!(r.starts[0], 0);
        assert_eq!(r.starts[1], r.regions[0].walk_from_start(32));
        assert_ne!(r.starts[0], r.starts[1]);
        let w = Regions::new(RegionAccess::OwnWrite, 64 * 64, 3);
        assert_eq!(w.regions.len(), 3, "a region per writer");
    }

    #[test]
    fn both_kinds_walk_and_time_their_regions() {
        let placement = Placement::from_process();
        let run = Run { threads: 2, duration: Duration::from_millis(5), reps: 1, placement: &placement };
        let clock = Ordo::monotonic();
        for access in ACCESSES {
            for bytes in [4 << 10, 256 << 10] {
                let m = measure(access, bytes, &clock, &run);
                assert!(m.throughput.median > 0.0, "{}", access.id());
                assert!(m.ticks_per_access > 0.0 && m.ticks_per_access < 5e6, "{}: {m:?}", access.id());
            }
        }
    }
}

//! Measuring the uncertainty window between per-core clocks (003 §3.2, Figure 4).
//!
//! For every ordered pair of CPUs (writer `i`, reader `j`) two threads are pinned, one on
//! each. They share one cache line holding a clock value and a run number. In each run the
//! reader clears the clock and publishes the run number; the writer, spinning on the run
//! number, stores its own clock reading; the reader, spinning on the clock, reads its own
//! clock and records `reader - writer`. That difference is the one-way message latency
//! plus the physical offset between the two clocks; the minimum over many runs removes
//! most of the latency and noise (interrupts, preemption only ever make it larger).
//!
//! The result is kept whole, as a signed matrix `offset[i][j]` (003 Figure 9 draws it as a
//! heatmap). Ordo's boundary is its maximum (003 Figure 4: the maximum of both directions
//! of every pair), which the lemma of 003 §3.2.2 shows is at least the physical offset
//! between any two clocks.
//!
//! The signs matter too: when every `offset[i][j]` is positive, a clock read taken after
//! observing another core's write was always larger than the clock that core read before
//! writing, that is, raw clock order respected communication between every pair of cores
//! (003 §6.2 never saw a negative offset in two months; 000 §6.1 made the same check).
//! OpLog's ordered log relies on this to order updates by raw timestamps; where it does not
//! hold it falls back (see `oplog`'s crate docs).

use crate::cpu;
use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};

/// Signed minimum offsets between every ordered pair of CPUs, in clock ticks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OffsetMatrix {
    cpus: Vec<usize>,
    /// Row-major `cpus.len()²` entries; `None` on the diagonal.
    offsets: Vec<Option<i64>>,
}

impl OffsetMatrix {
    /// Builds a matrix from measured entries. `offsets` is row-major over `cpus`
    /// (row = writer, column = reader) and holds `None` exactly on the diagonal.
    ///
    /// # Panics
    /// If the sizes disagree or the diagonal is not `None` while another entry is.
    pub fn from_entries(cpus: Vec<usize>, offsets: Vec<Option<i64>>) -> Self {
        let n = cpus.len();
        assert_eq!(offsets.len(), n * n, "an offset matrix over {n} CPUs needs {} entries", n * n);
        for i in 0..n {
            for j in 0..n {
                assert_eq!(offsets[i * n + j].is_none(), i == j, "entry ({i},{j}) of the offset matrix");
            }
        }
        Self { cpus, offsets }
    }

    /// The CPUs measured, ascending; row and column `k` belong to `cpus()[k]`.
    pub fn cpus(&self) -> &[usize] {
        &self.cpus
    }

    /// The minimum of `reader clock - writer clock` seen when CPU `writer` published its clock
    /// and CPU `reader` observed it; `None` for `writer == reader` or unmeasured CPUs.
    pub fn offset(&self, writer: usize, reader: usize) -> Option<i64> {
        let i = self.cpus.iter().position(|&c| c == writer)?;
        let j = self.cpus.iter().position(|&c| c == reader)?;
        self.offsets[i * self.cpus.len() + j]
    }

    /// Every measured `(writer, reader, offset)` entry, row by row.
    pub fn entries(&self) -> impl Iterator<Item = (usize, usize, i64)> + '_ {
        let n = self.cpus.len();
        self.offsets.iter().enumerate().filter_map(move |(k, o)| o.map(|o| (self.cpus[k / n], self.cpus[k % n], o)))
    }

    /// The Ordo boundary: the largest entry, or 0 if there is none or all are negative.
    pub fn boundary(&self) -> u64 {
        self.entries().map(|(_, _, o)| o).max().map_or(0, |m| m.max(0) as u64)
    }

    /// The smallest entry (003 Table 1's "min"), if any.
    pub fn min(&self) -> Option<i64> {
        self.entries().map(|(_, _, o)| o).min()
    }

    /// Whether every pairwise minimum is positive: raw clock order respected communication
    /// between every ordered pair of CPUs (vacuously true for one CPU).
    pub fn all_positive(&self) -> bool {
        self.entries().all(|(_, _, o)| o > 0)
    }
}

/// Measures the offset matrix over `cpus` with `runs` exchanges per ordered pair, reading
/// the clock with `read`. CPU numbers reported by `rdtscp`, when `read_aux` is given, are
/// compared with the pinned CPU; the second value returned says whether they all matched.
///
/// # Errors
/// When a thread cannot be pinned to one of `cpus`.
pub(crate) fn measure(cpus: &[usize], runs: usize, read: fn() -> u64) -> std::io::Result<OffsetMatrix> {
    let n = cpus.len();
    let mut offsets = vec![None; n * n];
    for (i, &writer) in cpus.iter().enumerate() {
        for (j, &reader) in cpus.iter().enumerate() {
            if i != j {
                offsets[i * n + j] = Some(measure_pair(writer, reader, runs, read)?);
            }
        }
    }
    Ok(OffsetMatrix { cpus: cpus.to_vec(), offsets })
}

/// One shared cache line: the writer's clock reading and the run number (003 Figure 4's
/// `shared_cacheline`).
#[repr(C)]
struct Exchange {
    clock: AtomicU64,
    run: AtomicU64,
}

/// Minimum over `runs` of `reader clock - writer clock` for one ordered pair.
///
/// Both sides run on threads of their own: pinning the calling thread would leave it, and
/// every thread it spawns later, stuck on the last reader CPU.
fn measure_pair(writer: usize, reader: usize, runs: usize, read: fn() -> u64) -> std::io::Result<i64> {
    let shared = CachePadded::new(Exchange { clock: AtomicU64::new(0), run: AtomicU64::new(0) });
    let shared = &shared;
    std::thread::scope(|s| {
        let w = s.spawn(move || -> std::io::Result<()> {
            let pinned = cpu::pin_current_thread(writer);
            // Take part even if pinning failed, so the reader never waits forever; the
            // error is reported after the exchange.
            for run in 1..=runs as u64 {
                while shared.run.load(Ordering::Acquire) != run {
                    if shared.run.load(Ordering::Relaxed) == u64::MAX {
                        return pinned;
                    }
                    core::hint::spin_loop();
                }
                // Never publish 0: the reader uses it as "not yet written".
                shared.clock.store(read().max(1), Ordering::Release);
            }
            pinned
        });
        // The reader runs on its own thread too: calibration must never change the affinity
        // of the thread that asked for the clock.
        let r = s.spawn(move || -> std::io::Result<i64> {
            if let Err(e) = cpu::pin_current_thread(reader) {
                shared.run.store(u64::MAX, Ordering::Release);
                return Err(e);
            }
            let mut min = i64::MAX;
            for run in 1..=runs as u64 {
                shared.clock.store(0, Ordering::Relaxed);
                shared.run.store(run, Ordering::Release);
                let published = loop {
                    let c = shared.clock.load(Ordering::Acquire);
                    if c != 0 {
                        break c;
                    }
                    core::hint::spin_loop();
                };
                let now = read();
                min = min.min(now.wrapping_sub(published) as i64);
            }
            Ok(min)
        });
        let reader_result = r.join().expect("calibration reader thread panicked");
        let writer_result = w.join().expect("calibration writer thread panicked");
        let min = reader_result.map_err(|e| annotate(e, reader))?;
        writer_result.map_err(|e| annotate(e, writer))?;
        Ok(min)
    })
}

fn annotate(e: std::io::Error, cpu: usize) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("cannot pin a calibration thread to CPU {cpu}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(entries: &[[Option<i64>; 3]; 3]) -> OffsetMatrix {
        OffsetMatrix::from_entries(vec![0, 1, 2], entries.iter().flatten().copied().collect())
    }

    #[test]
    fn boundary_is_the_maximum_of_both_directions_of_every_pair() {
        let m = matrix(&[[None, Some(40), Some(-5)], [Some(70), None, Some(30)], [Some(20), Some(10), None]]);
        assert_eq!(m.boundary(), 70);
        assert_eq!(m.min(), Some(-5));
        assert!(!m.all_positive());
        assert_eq!(m.offset(0, 2), Some(-5));
        assert_eq!(m.offset(2, 0), Some(20));
        assert_eq!(m.offset(1, 1), None);
        assert_eq!(m.offset(7, 1), None);
        assert_eq!(m.entries().count(), 6);
    }

    #[test]
    fn all_negative_offsets_give_a_zero_boundary() {
        let m = OffsetMatrix::from_entries(vec![3, 5], vec![None, Some(-4), Some(-9), None]);
        assert_eq!(m.boundary(), 0);
        assert!(!m.all_positive());
    }

    #[test]
    fn a_single_cpu_is_vacuously_positive() {
        let m = OffsetMatrix::from_entries(vec![0], vec![None]);
        assert!(m.all_positive());
        assert_eq!(m.boundary(), 0);
        assert_eq!(m.min(), None);
    }

    #[test]
    #[should_panic(expected = "an offset matrix over 2 CPUs needs 4 entries")]
    fn a_matrix_of_the_wrong_size_is_refused() {
        OffsetMatrix::from_entries(vec![0, 1], vec![None, Some(1), Some(2)]);
    }

    #[test]
    #[should_panic(expected = "entry (1,1)")]
    fn a_measured_diagonal_is_rejected() {
        OffsetMatrix::from_entries(vec![0, 1], vec![None, Some(1), Some(2), Some(3)]);
    }

    #[test]
    fn measuring_pins_every_pair_and_fills_the_matrix() {
        let cpus = cpu::allowed();
        let m = measure(&cpus, 200, crate::hw::monotonic_ns).expect("calibration over the allowed CPUs");
        assert_eq!(m.cpus(), &cpus[..]);
        assert_eq!(m.entries().count(), cpus.len() * (cpus.len() - 1));
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri cannot pin threads")]
    fn measuring_leaves_the_calling_threads_affinity_alone() {
        std::thread::spawn(|| {
            let before = cpu::allowed();
            measure(&before, 50, crate::hw::monotonic_ns).unwrap();
            assert_eq!(cpu::allowed(), before);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn pinning_failure_is_reported_and_does_not_hang() {
        let err = measure(&[0, 100_000], 10, crate::hw::monotonic_ns).unwrap_err();
        assert!(err.to_string().contains("CPU 100000"), "{err}");
    }
}

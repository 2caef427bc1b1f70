//! `fork` (000 §3, Figure 1) and `fork-truncate` (000 §7.2, Figure 11): the reverse map of
//! one shared file under process creation, and under creation with periodic truncates.
//!
//! Each thread stands for a process that keeps the file (libc, in the text) mapped once for
//! its whole life, and forks in a loop: a fork maps [`MAPPINGS`] regions of the file into
//! the child (`add`), and the child exits at once (`remove` of the same regions). Mapping
//! ids are unique per thread and per fork, so the rmap's identity rule holds. Both
//! experiments count forks per second.
//!
//! `fork-truncate` also truncates the file every F forks (x axis `truncate_every`, F =
//! 1..=10): `truncate` of the file's last page, a read of the rmap that must find every
//! process's long-lived mapping (000 §7.2 grows the file by a page and shrinks it back; the
//! shrink is the read). The text finds the stock kernel ahead for F < 3, OpLog ahead from
//! F = 3; the `crossover` annex reports the F from which OpLog wins here.
//!
//! Implementations (ids stable):
//!
//! - `oplog`: 000 Figure 7 with local and global absorption, on an unordered log (the
//!   identity rule makes timestamps unnecessary), per-CPU slots entered by restartable
//!   sequences (each read pays a `membarrier`);
//! - `oplog-ordered`: the same with the text's timestamped log, stamped with raw clock
//!   readings (the process-wide clock's domain, which waits out nothing where calibration
//!   found that raw order respects communication, as on every machine measured here and
//!   in 000 §6.1 / 003 §6.2; the report's header says which);
//! - `oplog-ordered-commit-wait`: `oplog-ordered` on a domain whose every update waits out
//!   the clock's uncertainty window before returning (`Domain::commit_wait` forced on, see
//!   [`super::impls::commit_wait_domain`]): 003 §6.3's OplogORDO beside its Oplog
//!   (Figure 10), which found the waiting version 4 % slower under Exim; `fork` only, not
//!   `fork-truncate`;
//! - `oplog-locked`: `oplog` with each per-CPU log behind a spin lock, as in the text
//!   (cheaper reads, an atomic per update);
//! - `mutex`: the interval tree behind one lock ("stock");
//! - `lockfree`: a lock-free list of mappings (000 §3's "lock-free").
//!
//! Verified: every truncate must report each thread's long-lived mapping (checked in the
//! loop), and after each repetition the rmap must hold exactly the long-lived mappings (a
//! lost add or remove fails the run).

use std::io;

use oplog_structures::rmap::{LockFreeRmap, Mapping, MutexRmap, OpLogRmap, OrderedOpLogRmap, Rmap};
use serde_json::{Value, json};

use std::sync::Arc;

use ordo::Ordo;

use super::impls::{Impl, ThreadSweep, commit_wait_domain, per_cpu_domain, per_cpu_locked_domain};
use crate::experiments::{Experiment, Ratios, XAxis};
use crate::harness::{Run, Settings, Throughput};
use crate::output::verdict::{Against, Roles, Target};
use crate::output::{Annex, Record, Sink};

/// Regions each fork maps (libc's text, read-only data, data and relro, roughly).
pub const MAPPINGS: usize = 4;

/// Pages of the shared file.
const FILE_PAGES: u64 = 256;

/// The regions a fork maps: page ranges of the file.
const REGIONS: [(u64, u64); MAPPINGS] = [(0, 160), (160, 200), (200, 220), (220, FILE_PAGES)];

/// Forks between two checks of the stop flag.
const BATCH: u64 = 8;

/// The truncate frequencies `fork-truncate` sweeps: once per 1..=10 forks.
pub const TRUNCATE_EVERY: std::ops::RangeInclusive<u64> = 1..=10;

/// Low bits of a mapping id: which mapping of its thread it is.
const LOCAL_ID: u64 = (1 << 48) - 1;

/// The id of thread `thread`'s long-lived mapping (bit 47 set: never a fork's).
fn long_lived_id(thread: usize) -> u64 {
    ((thread as u64) << 48) | LOCAL_ID
}

/// The id of region `j` of thread `thread`'s `n`th child (bit 47 clear; ids repeat after
/// 2⁴⁴ forks, long after the earlier ones were unmapped).
fn fork_id(thread: usize, n: u64, j: usize) -> u64 {
    ((thread as u64) << 48) | ((n % (1 << 44)) << 3) | j as u64
}

/// Mapping `id` of the file's pages `start..end`.
fn mapping(id: u64, (start, end): (u64, u64)) -> Mapping {
    Mapping::new(id, start..end).expect("regions are not empty")
}

/// The long-lived mapping of thread `thread`: the whole file.
fn long_lived(thread: usize) -> Mapping {
    mapping(long_lived_id(thread), (0, FILE_PAGES))
}

/// The id of the ordered rmap that waits out the uncertainty window (`fork` only).
pub const COMMIT_WAIT_ID: &str = "oplog-ordered-commit-wait";

/// The implementations of `fork`, in table order; `fork-truncate` measures all but
/// [`COMMIT_WAIT_ID`] ([`truncate_impls`]). The parameter is the truncate frequency
/// (`None`: never, the `fork` experiment).
pub const IMPLS: &[Impl<Option<u64>>] = &[
    Impl::new("oplog", |run, every| measure(run, every, || OpLogRmap::<false>::new(&per_cpu_domain()))),
    Impl::new("oplog-ordered", |run, every| measure(run, every, || OrderedOpLogRmap::new(&per_cpu_domain()))),
    Impl::new(COMMIT_WAIT_ID, |run, every| measure_commit_wait(run, every, ordo::global())),
    Impl::new("oplog-locked", |run, every| measure(run, every, || OpLogRmap::<false>::new(&per_cpu_locked_domain()))),
    Impl::new("mutex", |run, every| measure(run, every, MutexRmap::new)),
    Impl::new("lockfree", |run, every| measure(run, every, LockFreeRmap::new)),
];

/// The implementations `fork-truncate` measures: [`IMPLS`] without the commit-wait one
/// (000 Figure 11 compares the rmaps, not the clock's window).
pub fn truncate_impls() -> impl Iterator<Item = &'static Impl<Option<u64>>> {
    IMPLS.iter().filter(|e| e.id != COMMIT_WAIT_ID)
}

/// Forks per second of the ordered OpLog rmap on a per-CPU domain stamped by `clock` whose
/// every update waits out `clock`'s uncertainty window before returning (the
/// `oplog-ordered-commit-wait` id on the process-wide clock; the `boundary` experiment's
/// `fork-commit-wait` on clocks with a pinned window).
pub fn measure_commit_wait(run: &Run, truncate_every: Option<u64>, clock: &Arc<Ordo>) -> Throughput {
    measure(run, truncate_every, || OrderedOpLogRmap::new(&commit_wait_domain(clock.clone())))
}

/// One fork and exit of thread `thread`'s `n`th child: map the regions, unmap them.
#[inline]
fn fork(rmap: &impl Rmap, thread: usize, n: u64) {
    for (j, &region) in REGIONS.iter().enumerate() {
        rmap.add(mapping(fork_id(thread, n, j), region));
    }
    for (j, &region) in REGIONS.iter().enumerate() {
        rmap.remove(mapping(fork_id(thread, n, j), region));
    }
}

/// Truncates the file's last page and checks that every thread's long-lived mapping was
/// found.
fn truncate(rmap: &impl Rmap, threads: usize) {
    let unmapped = rmap.truncate(FILE_PAGES - 1);
    let found = unmapped.iter().filter(|u| u.mapping.id() & LOCAL_ID == LOCAL_ID).count();
    assert_eq!(
        found, threads,
        "truncate found {found} long-lived mappings, but each of the {threads} threads keeps one"
    );
}

fn measure<R: Rmap>(run: &Run, truncate_every: Option<u64>, make: impl Fn() -> R) -> Throughput {
    let threads = run.threads;
    let mut ended_in = None;
    run.throughput_checked(
        || {
            let rmap = make();
            (0..threads).for_each(|t| rmap.add(long_lived(t)));
            rmap
        },
        |rmap: &R, thread, stop| {
            let mut n = 0;
            stop.run_batched(BATCH, || {
                fork(rmap, thread, n);
                n += 1;
                if truncate_every.is_some_and(|every| n % every == 0) {
                    truncate(rmap, threads);
                }
            })
        },
        |rmap, _| {
            ended_in = rmap.representation();
            verify(&rmap.mappings(), threads);
        },
    )
    .ended_in(ended_in)
}

/// Panics unless `mappings` is exactly the threads' long-lived mappings.
fn verify(mappings: &[Mapping], threads: usize) {
    let expected: Vec<Mapping> = {
        let mut v: Vec<Mapping> = (0..threads).map(long_lived).collect();
        v.sort_unstable();
        v
    };
    assert!(
        mappings == expected,
        "the rmap is wrong after the run: it holds {} mappings, expected only the {threads} long-lived ones \
         (first few: {:?})",
        mappings.len(),
        &mappings[..mappings.len().min(4)]
    );
}

/// The `fork` experiment.
pub static FORK: ThreadSweep<Option<u64>> = ThreadSweep {
    name: "fork",
    description: "forks per second: each maps 4 regions of one shared file into the rmap and unmaps them (000 Figure 1); \
                  raw stamps against waiting out the clock's window (003 Figure 10)",
    versus: "mutex",
    impls: IMPLS,
    param: None,
    extra: &[],
    per_thread: None,
    annexes: None,
    roles: Roles {
        default: Some("oplog"),
        baselines: &["mutex", "lockfree"],
        floor: None,
        // Issue 9: no regression.
        targets: &[Target { id: "oplog", threads: 2, x: None, against: Against::Id("mutex"), min: 5.0 }],
    },
};

/// The `fork-truncate` experiment.
#[derive(Clone, Copy, Debug, Default)]
pub struct ForkTruncate;

/// The field of `fork-truncate` records holding F.
const KEY: &str = "truncate_every";

impl Experiment for ForkTruncate {
    fn name(&self) -> &'static str {
        "fork-truncate"
    }

    fn description(&self) -> &'static str {
        "forks per second with a truncate (a read of the rmap) every F forks, F = 1..10 (000 Figure 11)"
    }

    fn ids(&self) -> Vec<&'static str> {
        truncate_impls().map(|e| e.id).collect()
    }

    fn x_axis(&self) -> XAxis {
        XAxis::Param { key: KEY, label: "forks per truncate (F)" }
    }

    fn ratios(&self) -> Ratios {
        Ratios { scaling: false, versus: Some("mutex") }
    }

    fn roles(&self) -> Roles {
        // Issue 9: 000 Figure 11 finds the crossover at F = 3.
        const TARGETS: &[Target] = &[
            Target { id: "oplog", threads: 2, x: Some((3.0, 10.0)), against: Against::Id("mutex"), min: 1.0 },
            Target { id: "oplog", threads: 2, x: Some((3.0, 10.0)), against: Against::Id("lockfree"), min: 1.0 },
        ];
        Roles { default: Some("oplog"), baselines: &["mutex", "lockfree"], floor: None, targets: TARGETS }
    }

    fn points(&self, settings: &Settings) -> u64 {
        (settings.threads.len() * TRUNCATE_EVERY.count() * truncate_impls().count()) as u64
    }

    fn run(&self, settings: &Settings, sink: &mut Sink) -> io::Result<()> {
        let mut crossover = Annex::new(
            "crossover",
            "crossover: OpLog is ahead at every F >= wins_from (it stops winning below that F; - or null: never, \
             behind at F = 10)",
            &["threads", "oplog", "versus", "wins_from", "oplog_behind_at"],
        );
        let impls: Vec<&Impl<Option<u64>>> = truncate_impls().collect();
        for &threads in &settings.threads {
            // ops/s per implementation, indexed by F - 1.
            let mut results: Vec<Vec<f64>> = vec![Vec::new(); impls.len()];
            for every in TRUNCATE_EVERY {
                let run = settings.at(threads);
                let measured = run.side_by_side(
                    impls.len(),
                    |i| sink.point(&format!("{} F={every}", impls[i].id), threads),
                    |i, once| (impls[i].measure(once, Some(every)), ()),
                );
                for (i, (entry, (throughput, ()))) in impls.iter().zip(measured).enumerate() {
                    results[i].push(throughput.median);
                    sink.push(Record::new(self.name(), entry.id, &run, &throughput).with(KEY, every))?;
                }
            }
            let is_oplog = |id: &str| id.starts_with("oplog");
            for (o, oplog) in impls.iter().enumerate().filter(|(_, e)| is_oplog(e.id)) {
                for (b, base) in impls.iter().enumerate().filter(|(_, e)| !is_oplog(e.id)) {
                    let (wins_from, behind) = crossover_of(&results[o], &results[b]);
                    crossover.row(vec![
                        json!(threads),
                        json!(oplog.id),
                        json!(base.id),
                        wins_from.map_or(Value::Null, |f| json!(f)),
                        json!(behind),
                    ]);
                }
            }
        }
        sink.annex(crossover)
    }
}

/// Given ops/s at F = 1, 2, ... for OpLog and a baseline: the smallest F from which OpLog
/// is ahead at every F measured (`None` if it is behind at the last), and every F at which
/// it is behind.
pub fn crossover_of(oplog: &[f64], baseline: &[f64]) -> (Option<u64>, Vec<u64>) {
    let ahead: Vec<bool> = oplog.iter().zip(baseline).map(|(o, b)| o > b).collect();
    let behind: Vec<u64> = (1..).zip(&ahead).filter(|(_, a)| !**a).map(|(f, _)| f).collect();
    let wins_from = match ahead.iter().rposition(|a| !a) {
        None if ahead.is_empty() => None,
        None => Some(1),
        Some(i) if i + 1 == ahead.len() => None,
        Some(i) => Some(i as u64 + 2),
    };
    (wins_from, behind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::impls::{notes_representations, smoke_test};

    #[test]
    fn every_impl_forks_and_truncates_and_verifies() {
        smoke_test(IMPLS, None);
        smoke_test(IMPLS, Some(2));
        notes_representations(IMPLS, Some(2));
    }

    #[test]
    fn fork_truncate_leaves_out_only_the_commit_wait_id() {
        let ids: Vec<_> = truncate_impls().map(|e| e.id).collect();
        assert_eq!(ids, ["oplog", "oplog-ordered", "oplog-locked", "mutex", "lockfree"]);
        assert_eq!(FORK.ids().len(), ids.len() + 1);
        assert!(FORK.ids().contains(&COMMIT_WAIT_ID));
    }

    #[test]
    fn the_crossover_is_the_f_from_which_oplog_stays_ahead() {
        assert_eq!(crossover_of(&[1.0, 2.0, 5.0, 6.0], &[3.0, 3.0, 3.0, 3.0]), (Some(3), vec![1, 2]));
        assert_eq!(crossover_of(&[5.0, 5.0], &[3.0, 3.0]), (Some(1), vec![]));
        assert_eq!(crossover_of(&[5.0, 1.0], &[3.0, 3.0]), (None, vec![2]));
        // Ahead, behind, ahead again: it wins from the last crossing.
        assert_eq!(crossover_of(&[5.0, 1.0, 5.0], &[3.0, 3.0, 3.0]), (Some(3), vec![2]));
    }

    #[test]
    #[should_panic(expected = "it holds 1 mappings, expected only the 2 long-lived ones")]
    fn a_lost_mapping_fails_the_run() {
        verify(&[long_lived(0)], 2);
    }

    #[test]
    fn fork_ids_are_unique_and_never_the_long_lived_id() {
        let mut seen = std::collections::HashSet::new();
        for thread in [0, 3, 4095] {
            for n in (0..1000).chain([(1 << 44) - 1]) {
                for j in 0..MAPPINGS {
                    let id = fork_id(thread, n, j);
                    assert!(seen.insert(id));
                    assert_ne!(id & LOCAL_ID, LOCAL_ID);
                    assert_eq!(id >> 48, thread as u64);
                }
            }
            assert!(seen.insert(long_lived_id(thread)));
        }
    }
}

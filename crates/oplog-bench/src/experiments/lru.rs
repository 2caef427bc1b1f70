//! `lru`: an LRU list that every access updates and eviction reads (000 §1).
//!
//! Every thread accesses keys drawn uniformly from [`KEYS`] shared keys, `touch`ing each
//! one (moving it to the most-recently-used end), and evicts the least recently used key
//! once every [`EVICT_EVERY`] accesses, as page reclaim does far less often than pages are
//! used. Throughput counts touches and evictions. Uniform keys rarely repeat back to back,
//! so the OpLog list's absorption (a newer update of the log's last key replaces it)
//! seldom applies: what is measured is logging and batching.
//!
//! Verified after each repetition: every key touched is in the list or was evicted; every
//! key in the list or evicted was touched; no key is in the list twice.
//!
//! Implementations (ids stable): `oplog` (ordered per-core logs over the sequential list,
//! per-CPU slots entered by restartable sequences), `oplog-locked` (the same with each
//! per-CPU log behind a spin lock, as in the texts), `mutex` (the sequential list behind one
//! lock).

use std::sync::Mutex;

use oplog_structures::lru::{ConcurrentLru, MutexLru, OpLogLru};

use super::impls::{Impl, ThreadSweep, per_cpu_domain, per_cpu_locked_domain};
use crate::harness::{Run, Throughput};
use crate::output::verdict::{Against, Roles, Target};

/// Keys accessed.
pub const KEYS: u64 = 4096;

/// Accesses per eviction, per thread.
pub const EVICT_EVERY: u64 = 1000;

/// Accesses between two checks of the stop flag.
const BATCH: u64 = 64;

/// The implementations, in table order.
pub const IMPLS: &[Impl] = &[
    Impl::new("oplog", |run, ()| measure(run, || OpLogLru::new(&per_cpu_domain()))),
    Impl::new("oplog-locked", |run, ()| measure(run, || OpLogLru::new(&per_cpu_locked_domain()))),
    Impl::new("mutex", |run, ()| measure(run, MutexLru::new)),
];

/// What one thread did: which keys it touched, which it was handed by evictions.
#[derive(Debug, Default)]
struct Outcome {
    touched: Vec<bool>,
    evicted: Vec<u64>,
}

/// A list under test and each thread's outcome.
struct Shared<L> {
    lru: L,
    outcomes: Vec<Mutex<Outcome>>,
}

fn measure<L: ConcurrentLru<u64>>(run: &Run, make: impl Fn() -> L) -> Throughput {
    let threads = run.threads;
    let mut ended_in = None;
    run.throughput_checked(
        || Shared { lru: make(), outcomes: (0..threads).map(|_| Mutex::default()).collect() },
        |shared: &Shared<L>, thread, stop| {
            let mut outcome = Outcome { touched: vec![false; KEYS as usize], evicted: Vec::new() };
            let mut rng = 0x9e37_79b9_7f4a_7c15 ^ (thread as u64 + 1).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            let mut n = 0u64;
            let ops = stop.run_batched(BATCH, || {
                n += 1;
                if n.is_multiple_of(EVICT_EVERY) {
                    outcome.evicted.extend(shared.lru.evict());
                    return;
                }
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                let key = rng % KEYS;
                outcome.touched[key as usize] = true;
                shared.lru.touch(key);
            });
            *shared.outcomes[thread].lock().expect("one writer") = outcome;
            ops
        },
        |shared, _| {
            ended_in = shared.lru.representation();
            let outcomes: Vec<Outcome> =
                shared.outcomes.iter().map(|o| std::mem::take(&mut *o.lock().expect("workers are done"))).collect();
            verify(&shared.lru.order(), &outcomes);
        },
    )
    .ended_in(ended_in)
}

/// Panics unless the final list and the evictions account for exactly the keys touched.
fn verify(order: &[u64], outcomes: &[Outcome]) {
    let mut touched = vec![false; KEYS as usize];
    let mut accounted = vec![false; KEYS as usize];
    for o in outcomes {
        for (k, t) in o.touched.iter().enumerate() {
            touched[k] |= *t;
        }
        for &k in &o.evicted {
            assert!(touched_by_any(outcomes, k), "eviction returned key {k}, which no thread touched");
            accounted[k as usize] = true;
        }
    }
    let mut present = vec![false; KEYS as usize];
    for &k in order {
        assert!(k < KEYS && !present[k as usize], "key {k} is in the LRU list twice, or is not a key");
        assert!(touched[k as usize], "key {k} is in the LRU list, but no thread touched it");
        present[k as usize] = true;
        accounted[k as usize] = true;
    }
    let lost = (0..KEYS as usize).filter(|&k| touched[k] && !accounted[k]).count();
    assert_eq!(lost, 0, "{lost} touched keys are neither in the LRU list nor were evicted");
}

fn touched_by_any(outcomes: &[Outcome], key: u64) -> bool {
    outcomes.iter().any(|o| o.touched.get(key as usize).copied().unwrap_or(false))
}

/// The `lru` experiment.
pub static LRU: ThreadSweep = ThreadSweep {
    name: "lru",
    description: "LRU accesses per second: touch a random key of 4096, evict once per 1000 accesses (000 §1)",
    versus: "mutex",
    impls: IMPLS,
    param: (),
    extra: &[],
    per_thread: None,
    annexes: None,
    roles: Roles {
        default: Some("oplog"),
        baselines: &["mutex"],
        floor: None,
        // Issue 9.
        targets: &[Target { id: "oplog", threads: 2, x: None, against: Against::Id("mutex"), min: 2.0 }],
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::impls::{notes_representations, smoke_test};

    #[test]
    fn every_impl_runs_and_verifies() {
        smoke_test(IMPLS, ());
        notes_representations(IMPLS, ());
    }

    fn touched(keys: &[u64]) -> Outcome {
        let mut o = Outcome { touched: vec![false; KEYS as usize], evicted: Vec::new() };
        keys.iter().for_each(|&k| o.touched[k as usize] = true);
        o
    }

    #[test]
    #[should_panic(expected = "1 touched keys are neither in the LRU list nor were evicted")]
    fn a_lost_touch_fails_the_run() {
        verify(&[1], &[touched(&[1, 2])]);
    }

    #[test]
    #[should_panic(expected = "key 3 is in the LRU list, but no thread touched it")]
    fn an_invented_key_fails_the_run() {
        verify(&[3], &[touched(&[1])]);
    }

    #[test]
    fn evicted_keys_are_accounted_for() {
        let mut o = touched(&[1, 2]);
        o.evicted.push(2);
        verify(&[1], &[o]);
    }
}

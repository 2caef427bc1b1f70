//! What the workspace's tests share: watchdogs, pinning, a seeded generator and the loom
//! model driver. One copy each, so that every suite (oplog, structures, refcount, the
//! linearizability suite, the commutativity checker's tests) behaves the same way.
//!
//! | item | what it is for |
//! |---|---|
//! | [`Watchdog`], [`with_watchdog`] | a test that deadlocks or livelocks aborts with a message naming it instead of hanging CI ([`watchdog`]) |
//! | [`pin_round_robin`] | pins worker `i` of a test to one of the CPUs the process may use, round-robin, so that threads really run on different CPUs |
//! | [`Rng`] | the seeded generator (`fastrand`'s wyrand): a test that fails reproduces from its seed |
//! | `loom_model` (under `--cfg loom`) | runs a loom model within a preemption bound and prints how many interleavings it explored |

pub mod watchdog;

pub use fastrand::Rng;
pub use watchdog::{MIRI_SLOWDOWN, Watchdog, with_watchdog};

/// Pins the calling thread to the `i`-th CPU (round-robin) of those this process may use.
///
/// # Panics
/// If the OS refuses to pin the thread to a CPU it reported as allowed.
pub fn pin_round_robin(i: usize) {
    let cpus = ordo::cpu::allowed();
    ordo::cpu::pin_current_thread(cpus[i % cpus.len()]).expect("pin to an allowed CPU");
}

/// Checks `f` in every interleaving loom finds within the preemption bound
/// (`LOOM_MAX_PREEMPTIONS` if set, else `preemptions`), then prints the model's name, how
/// many interleavings it explored, the bound and the time taken. Returns the number of
/// interleavings.
///
/// # Panics
/// Whatever `f` panics with in some interleaving (loom reports the schedule).
#[cfg(loom)]
pub fn loom_model(name: &str, preemptions: usize, f: impl Fn() + Sync + Send + 'static) -> usize {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(preemptions);
    }
    let bound = builder.preemption_bound;
    let iterations = Arc::new(AtomicUsize::new(0));
    let counted = iterations.clone();
    let start = std::time::Instant::now();
    builder.check(move || {
        counted.fetch_add(1, Ordering::Relaxed);
        f();
    });
    let n = iterations.load(Ordering::Relaxed);
    eprintln!(
        "loom model `{name}`: {n} interleavings (preemption bound {}) in {:.1} s",
        bound.map_or("none".into(), |b| b.to_string()),
        start.elapsed().as_secs_f64()
    );
    n
}

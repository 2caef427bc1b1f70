//! The adaptive policy's switch of a direct object back to logged, through the public API.
//!
//! Alone in its file on purpose: the policy counts changes of updater by a 2-bit tag each
//! thread takes on its first direct update, so the two threads of a test must take
//! consecutive tags, which tests running beside them in the same process could interleave.

use oplog::{Config, Counter, CounterLog, Domain, Representation};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Increments of a direct counter, alternated between two threads (each one a change of
/// updater): more than the policy's `WEIGHT_MAX` (31) of them, with no read between.
const ROUNDS: usize = 40;

/// A direct counter `a` and a logged counter `b` sharing the one slot of a per-thread
/// domain's caches; if `b_logged`, each thread first logs an increment of `b` in its slot.
/// Then the threads alternate [`ROUNDS`] increments of `a`. Returns the representation `a`
/// ends in, after checking both totals.
fn alternate(b_logged: bool) -> Representation {
    let d = Domain::<CounterLog>::new(Config::per_thread().max_threads(2).cache_slots(1)).unwrap();
    let a = Counter::with_domain(&d, 0);
    let b = Counter::with_domain(&d, 0);
    a.as_oplog().switch_representation(Representation::Direct);
    let turn = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for me in 0..2 {
            let (a, b, turn) = (&a, &b, &turn);
            s.spawn(move || {
                if b_logged {
                    b.inc();
                }
                for _ in 0..ROUNDS / 2 {
                    while turn.load(Ordering::Acquire) % 2 != me {
                        std::hint::spin_loop();
                    }
                    a.inc();
                    turn.fetch_add(1, Ordering::Release);
                }
            });
        }
    });
    let ended = a.as_oplog().representation();
    assert_eq!(a.read(), ROUNDS as i64);
    assert_eq!(b.read(), if b_logged { 2 } else { 0 });
    ended
}

/// Updates from several threads and no read switch a direct object back to logged, unless
/// the updating core's slot holds another object's log: logging would evict it at once (more
/// hot objects than slots), and the object would soon switch back, so it stays direct.
#[test]
fn a_direct_object_goes_back_to_logged_unless_its_slot_holds_another_log() {
    assert_eq!(alternate(false), Representation::Logged, "changes of updater: logging pays");
    assert_eq!(alternate(true), Representation::Direct, "the slot holds another object's log");
}

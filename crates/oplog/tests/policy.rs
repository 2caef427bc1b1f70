//! The adaptive policy's switches, through the public API: a direct counter updated by
//! several threads goes back to logged; a logged counter updated by two threads stays
//! logged; an object of a user's type that one thread reads every 20 updates ends direct,
//! and one that two threads take turns at with that mix ends logged. (What a counter
//! updated by one thread does depends on what its domain measured on the host: `object`'s
//! unit tests set each answer.)
//!
//! Alone in its file on purpose: the policy counts changes of updater by a 2-bit tag each
//! thread takes on its first direct update, so the two threads of a test must take
//! consecutive tags, which tests running beside them in the same process could interleave.
//! The tests here whose threads take tags hold [`serial`] for their whole run: two other
//! threads taking tags between the first updates of a test's two threads gave both the
//! same tag, and the test saw no change of updater (1 run in 30, debug build, 2-core host).
//! (The tests here that use no tag run in their own threads too: each thread samples its
//! updates from its first one on.)

mod common;

use common::SetOp;
use oplog::{Config, Counter, CounterLog, Domain, OpLog, Representation, Unordered};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Held by each test whose threads take tags, for its whole run (module docs).
fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    // A test that failed holding it poisons it; the others still run one at a time.
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A thread's counter updates are seen by the policy one in this many (`object`'s
/// `SAMPLE_EVERY`); the others write nothing it sees.
const SAMPLE_EVERY: usize = 64;

/// Increments of a direct counter, alternated between two threads (each one a change of
/// updater): 16 sampled ones per thread, more than the policy needs (four changes of
/// updater between samples, each weighing 8, reach its `WEIGHT_MAX` of 31), with no read
/// between.
const ROUNDS: usize = 32 * SAMPLE_EVERY;

/// A direct counter `a` and a logged counter `b` sharing the one slot of a per-thread
/// domain's caches; if `b_logged`, each thread first logs an increment of `b` in its slot.
/// Then the threads alternate [`ROUNDS`] increments of `a`. Returns the representation `a`
/// ends in, after checking both totals.
fn alternate(b_logged: bool) -> Representation {
    let d = Domain::<CounterLog>::new(Config::per_thread().max_threads(2).cache_slots(1)).unwrap();
    let a = Counter::with_domain(&d, 0);
    let b = Counter::with_domain(&d, 0);
    a.as_oplog().switch_representation(Representation::Direct);
    take_turns(2, ROUNDS, |me, turn| {
        // Each thread's first turn.
        if b_logged && turn == me {
            b.inc();
        }
        a.inc();
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
    let _serial = serial();
    assert_eq!(alternate(false), Representation::Logged, "changes of updater: logging pays");
    assert_eq!(alternate(true), Representation::Direct, "the slot holds another object's log");
}

/// Runs `turns` turns on `threads` threads, turn `t` on thread `t % threads`, one after
/// another: `each(thread, t)`.
fn take_turns(threads: usize, turns: usize, each: impl Fn(usize, usize) + Sync) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for me in 0..threads {
            let (next, each) = (&next, &each);
            s.spawn(move || {
                for turn in (me..turns).step_by(threads) {
                    while next.load(Ordering::Acquire) != turn {
                        std::hint::spin_loop();
                    }
                    each(me, turn);
                    next.fetch_add(1, Ordering::Release);
                }
            });
        }
    });
}

/// Runs `blocks` blocks of [`SAMPLE_EVERY`] increments of `counter`, alternating between
/// `threads` threads (block `i` on thread `i % threads`), so each thread's sampled update
/// falls in each of its blocks.
fn alternate_blocks(counter: &Counter, threads: usize, blocks: usize) {
    take_turns(threads, blocks, |_, _| (0..SAMPLE_EVERY).for_each(|_| counter.inc()));
}

/// A counter that two threads (two cores of a per-thread domain) update stays logged, each
/// thread folding into its own core's log: the sampled updates see the other core's bit.
#[test]
fn a_counter_updated_by_two_threads_stays_logged() {
    assert_eq!(ends_in(2, 16), Representation::Logged);
}

/// The representation an adaptive counter of a per-thread domain ends in after `blocks`
/// blocks of increments taken in turn by `threads` threads ([`alternate_blocks`]), with no
/// read between; checks the total first.
fn ends_in(threads: usize, blocks: usize) -> Representation {
    let d = Domain::<CounterLog>::new(Config::per_thread().max_threads(2)).unwrap();
    let c = Counter::with_domain(&d, 0);
    alternate_blocks(&c, threads, blocks);
    let ended = c.as_oplog().representation();
    assert_eq!(c.read(), (blocks * SAMPLE_EVERY) as i64);
    ended
}

/// A per-thread domain pinned to the direct representation.
fn direct_domain() -> std::sync::Arc<Domain<CounterLog>> {
    Domain::new(Config::per_thread().max_threads(2).representation(Representation::Direct)).unwrap()
}

/// A read holding the lock of a direct counter (a `Synced` guard) does not stop its direct
/// updates, and they do not log themselves: they add to the direct log without the lock
/// (only the sampled one, one in [`SAMPLE_EVERY`], takes the lock's path and, finding it
/// taken, logs itself). The guard's value does not move; the next read sees every update.
#[test]
fn direct_counter_updates_go_on_while_a_guard_holds_the_lock() {
    let _serial = serial();
    let d = direct_domain();
    let c = Counter::with_domain(&d, 5);
    let n = 16 * SAMPLE_EVERY;
    {
        let guard = c.as_oplog().synchronize();
        assert_eq!(*guard, 5);
        std::thread::scope(|s| {
            s.spawn(|| (0..n).for_each(|_| c.inc()));
        });
        assert_eq!(*guard, 5, "the guard's instance does not move");
    }
    assert_eq!(c.read(), 5 + n as i64);
    // The read gathered what was logged, and counted it.
    let logged = d.cache_stats().updates;
    assert!(logged <= 16, "only the sampled updates logged themselves, not {logged}");
}

/// A sampled direct update that finds its own thread's tag in the word has nothing to tell
/// the policy, and stays lock-free: while a guard holds the lock of a direct counter whose
/// word holds the updating thread's tag (its last sampled update left it; the guard's read
/// clears it only when it unlocks), none of that thread's updates logs itself. So the word,
/// whose line neighbouring objects share, is not written by one thread's updates.
#[test]
fn a_thread_whose_tag_is_in_the_word_updates_without_the_lock() {
    let _serial = serial();
    let d = direct_domain();
    let c = Counter::with_domain(&d, 0);
    let n = 16 * SAMPLE_EVERY;
    let (tagged_tx, tagged_rx) = std::sync::mpsc::channel();
    let (locked_tx, locked_rx) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|s| {
        let c = &c;
        let updater = s.spawn(move || {
            // The thread's first update is a sampled one: it takes the lock and leaves the tag.
            (0..SAMPLE_EVERY).for_each(|_| c.inc());
            tagged_tx.send(()).unwrap();
            locked_rx.recv().unwrap();
            (0..n).for_each(|_| c.inc());
        });
        tagged_rx.recv().unwrap();
        let guard = c.as_oplog().synchronize();
        assert_eq!(*guard, SAMPLE_EVERY as i64);
        locked_tx.send(()).unwrap();
        updater.join().unwrap();
        assert_eq!(*guard, SAMPLE_EVERY as i64, "the guard's instance does not move");
    });
    assert_eq!(c.read(), (SAMPLE_EVERY + n) as i64);
    assert_eq!(d.cache_stats().updates, 0, "no update logged itself");
}

/// The adaptive policy counts threads: one thread reading every 20 updates ends direct
/// (logging saves it nothing but a lock), two threads taking turns at the same mix end
/// logged (each direct update would move the object's lines; 20 updates per read are
/// above both domains' thresholds, 16 logged operations and 8 changes of updater where a
/// read's taking of another thread's log sends a barrier), and the second group keeps every
/// update either way.
#[test]
fn the_adaptive_policy_weighs_updates_from_other_threads() {
    let _serial = serial();
    use oplog::Representation::{Direct, Logged};
    use std::sync::Barrier;
    const ROUNDS: u64 = 12;
    const UPDATES_PER_READ: u64 = 20;
    // One thread.
    let d = Domain::<Unordered<SetOp>>::new(Config::per_thread()).unwrap();
    let set = OpLog::with_domain(&d, BTreeSet::new());
    for r in 0..ROUNDS {
        for k in 0..UPDATES_PER_READ {
            set.update(SetOp::Add(r * UPDATES_PER_READ + k));
        }
        set.read(|_| ());
    }
    assert_eq!(set.representation(), Direct, "one thread, a read every {UPDATES_PER_READ} updates");
    // Two threads taking turns (a barrier between any two updates), same mix.
    let d = Domain::<Unordered<SetOp>>::new(Config::per_thread()).unwrap();
    let set = OpLog::with_domain(&d, BTreeSet::new());
    set.switch_representation(Direct);
    let turn = Barrier::new(2);
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let (set, turn) = (&set, &turn);
            s.spawn(move || {
                for r in 0..ROUNDS {
                    for k in 0..UPDATES_PER_READ {
                        if (r * UPDATES_PER_READ + k) % 2 == t {
                            set.update(SetOp::Add(r * UPDATES_PER_READ + k));
                        }
                        turn.wait();
                    }
                    if t == 0 {
                        set.read(|_| ());
                    }
                    turn.wait();
                }
            });
        }
    });
    assert_eq!(set.representation(), Logged, "two threads taking turns, a read every {UPDATES_PER_READ} updates");
    assert_eq!(set.read(BTreeSet::len), (ROUNDS * UPDATES_PER_READ) as usize);
}

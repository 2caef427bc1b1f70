//! Misuse that would wait for itself panics with a message naming the mistake, never hangs
//! (issue 16 item 5, issue 9 item 6; the `reentry` module). Updates of an object from
//! inside its own `exec` or read closure are allowed and applied. Each test runs under a
//! watchdog.

mod common;

use common::{pin_round_robin, quiet_expected_panics, with_watchdog};
use oplog::log::LocalLog;
use oplog::{Config, Domain, OpLog, Ordered, Representation, Update};
use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

type Obj = OpLog<Ordered<Op>>;

/// Operations that call back into OpLog objects from inside their own hooks.
enum Op {
    Add(u64),
    /// Reads the given object from inside `exec`.
    ReadInExec(&'static Obj),
    /// Logs `n` updates of the given object from inside `exec`.
    UpdateInExec(&'static Obj, u64),
    /// Updates the given object from inside `absorb_local`.
    UpdateInAbsorb(&'static Obj),
    /// Reads the given object from inside `absorb_local`.
    ReadInAbsorb(&'static Obj),
    /// Takes a guard of the given object from inside `exec`.
    SynchronizeInExec(&'static Obj),
    /// Takes the object out of its holder and drops it (or, with `true`, calls
    /// `into_inner`) from inside `exec`.
    DropInExec(&'static Mutex<Option<Obj>>, bool),
    /// Reads the given object from inside `absorb_global`, once: while the flag is set.
    ReadInAbsorbGlobal(&'static Obj, &'static AtomicBool),
}

impl Update for Op {
    type Target = Vec<u64>;
    fn exec(self, v: &mut Vec<u64>) {
        match self {
            Op::Add(x) => v.push(x),
            Op::ReadInExec(o) => {
                o.read(|_| ());
            }
            Op::UpdateInExec(o, n) => (0..n).for_each(|k| o.update(Op::Add(k))),
            Op::SynchronizeInExec(o) => drop(o.synchronize()),
            Op::DropInExec(holder, into_inner) => {
                let o = holder.lock().unwrap().take().expect("the object is in its holder");
                if into_inner {
                    drop(o.into_inner());
                } else {
                    drop(o);
                }
            }
            Op::UpdateInAbsorb(_) | Op::ReadInAbsorb(_) | Op::ReadInAbsorbGlobal(..) => {}
        }
    }
    fn absorb_global(_target: &Vec<u64>, ops: &mut VecDeque<Self>) {
        for op in ops.iter() {
            if let Op::ReadInAbsorbGlobal(o, armed) = op
                && armed.swap(false, Ordering::Relaxed)
            {
                o.read(|_| ());
            }
        }
    }
    fn absorb_local(self, _log: &mut LocalLog<'_, Self>) -> Option<Self> {
        match self {
            Op::UpdateInAbsorb(o) => o.update(Op::Add(0)),
            Op::ReadInAbsorb(o) => o.read(|_| ()),
            _ => {}
        }
        Some(self)
    }
}

/// The objects of one test, which operations refer to as `&'static`. Dropping the arena
/// reads every object (applying every logged operation, so none refers to an object any
/// more), then frees them all (a leak would fail the Miri run).
#[derive(Default)]
struct Arena(Vec<*mut Obj>);

impl Arena {
    /// A new object of `domain`, alive until the arena is dropped.
    fn object(&mut self, domain: &Arc<Domain<Ordered<Op>>>) -> &'static Obj {
        let p = Box::into_raw(Box::new(OpLog::with_domain(domain, Vec::new())));
        self.0.push(p);
        // SAFETY: `p` is freed only when the arena is dropped, at the end of the test
        // iteration that uses the reference, after every operation holding it was applied.
        unsafe { &*p }
    }

    /// A new object in a domain of its own.
    fn fresh(&mut self, config: Config) -> &'static Obj {
        self.object(&Domain::new(config).unwrap())
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        for &p in &self.0 {
            // SAFETY: allocated by `object`, not freed yet.
            unsafe { &*p }.read(|_| ());
        }
        for &p in &self.0 {
            // SAFETY: allocated by `object` with `Box::into_raw`, freed once, here; nothing
            // logged refers to it any more (every object was read above).
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

fn message(r: std::thread::Result<()>) -> String {
    let p = r.expect_err("the misuse must panic");
    match p.downcast::<String>() {
        Ok(s) => *s,
        Err(p) => p.downcast_ref::<&str>().map_or_else(String::new, |s| (*s).to_owned()),
    }
}

fn configs() -> [Config; 3] {
    [Config::per_cpu(), Config::per_cpu().rseq(false), Config::per_thread()]
}

#[test]
fn a_read_or_synchronize_from_inside_its_own_exec_panics() {
    quiet_expected_panics();
    with_watchdog("read or synchronize inside exec", LIMIT, || {
        let ops: [fn(&'static Obj) -> Op; 2] = [Op::ReadInExec, Op::SynchronizeInExec];
        for config in configs() {
            for op in ops {
                let mut arena = Arena::default();
                let o = arena.fresh(config.clone());
                o.update(op(o));
                let msg = message(catch_unwind(AssertUnwindSafe(|| o.read(|_| ()))));
                assert!(msg.contains("synchronize of an object from inside its own Update::exec"), "{msg}");
                // The object still works.
                o.update(Op::Add(1));
                assert_eq!(o.read(|v| v.clone()), vec![1]);
            }
        }
    });
}

/// The object's handle is gone once its drop or `into_inner` panicked: the object itself
/// stays allocated (its lock was never taken for the retirement), and is leaked.
#[test]
#[cfg_attr(miri, ignore = "leaks, by design, the object whose drop panicked")]
fn a_drop_or_into_inner_from_inside_its_own_exec_panics() {
    quiet_expected_panics();
    with_watchdog("drop inside exec", LIMIT, || {
        for config in configs() {
            for into_inner in [false, true] {
                let d = Domain::<Ordered<Op>>::new(config.clone()).unwrap();
                let holder: &'static Mutex<Option<Obj>> =
                    Box::leak(Box::new(Mutex::new(Some(OpLog::with_domain(&d, Vec::new())))));
                let o: *const Obj = holder.lock().unwrap().as_ref().unwrap();
                // SAFETY: the object is alive until the read below drops it from inside
                // `exec`, and that drop panics before it frees anything.
                let o = unsafe { &*o };
                o.update(Op::Add(1));
                o.update(Op::DropInExec(holder, into_inner));
                let msg = message(catch_unwind(AssertUnwindSafe(|| o.read(|_| ()))));
                assert!(msg.contains("into_inner or drop of an object from inside its own Update::exec"), "{msg}");
                assert!(holder.lock().unwrap().is_none(), "the handle was taken out and consumed");
            }
        }
    });
}

#[test]
fn a_read_from_inside_absorb_global_panics() {
    quiet_expected_panics();
    with_watchdog("read inside absorb_global", LIMIT, || {
        for config in configs() {
            let mut arena = Arena::default();
            let o = arena.fresh(config);
            static ARMED: AtomicBool = AtomicBool::new(false);
            ARMED.store(true, Ordering::Relaxed);
            o.update(Op::Add(1));
            o.update(Op::ReadInAbsorbGlobal(o, &ARMED));
            let msg = message(catch_unwind(AssertUnwindSafe(|| o.read(|_| ()))));
            assert!(
                msg.contains("read or synchronize of an object from inside its own Update::exec, absorption hook"),
                "{msg}"
            );
            // Nothing was lost: the operations wait for the next read.
            o.update(Op::Add(2));
            assert_eq!(o.read(|v| v.clone()), vec![1, 2]);
        }
    });
}

#[test]
fn a_read_from_inside_its_own_read_closure_panics() {
    quiet_expected_panics();
    with_watchdog("read inside read", LIMIT, || {
        for config in configs() {
            let mut arena = Arena::default();
            let o = arena.fresh(config);
            let msg = message(catch_unwind(AssertUnwindSafe(|| o.read(|_| o.read(|_| ())))));
            assert!(msg.contains("read closure"), "{msg}");
            let msg = message(catch_unwind(AssertUnwindSafe(|| {
                let _g = o.synchronize();
                drop(o.synchronize());
            })));
            assert!(msg.contains("this thread holds the object's lock"), "{msg}");
            assert_eq!(o.read(Vec::len), 0);
            // Nothing logged since: the read above let the next ones go concurrent, and a
            // guard taken from inside one would wait for it.
            let msg = message(catch_unwind(AssertUnwindSafe(|| o.read(|_| drop(o.synchronize())))));
            assert!(msg.contains("from inside its own read closure"), "{msg}");
            assert_eq!(o.read(Vec::len), 0);
        }
    });
}

#[test]
fn updates_from_inside_its_own_exec_are_applied() {
    with_watchdog("updates inside exec", LIMIT, || {
        for config in configs() {
            let mut arena = Arena::default();
            let o = arena.fresh(config.max_log_len(4));
            // Far more than four logs' and four backlogs' worth: nothing waits for the lock
            // this thread holds. Under Miri twice that worth (288 with its 2 CPUs' backlog
            // limit of 8): past both limits, so the same paths as 1000; the rest repeat them.
            let d = o.domain();
            let beyond = 4 * d.max_log_len() * (1 + d.backlog_limit());
            let n = if cfg!(miri) { 2 * beyond } else { 1000 };
            o.update(Op::UpdateInExec(o, n as u64));
            assert_eq!(o.read(Vec::len), 0, "logged while the read applied, so the next read sees them");
            assert_eq!(o.read(Vec::len), n);
        }
    });
}

#[test]
fn updates_from_inside_its_own_read_closure_are_applied() {
    with_watchdog("updates inside read", LIMIT, || {
        for config in configs() {
            for representation in [Representation::Adaptive, Representation::Logged, Representation::Direct] {
                let mut arena = Arena::default();
                let o = arena.fresh(config.clone().representation(representation));
                let mut expected = Vec::new();
                for k in 0..8 {
                    // The first round's read holds the lock; the two reads that end each
                    // round, with nothing between, let the next round's read take the
                    // concurrent path (biased), without the lock. Either way the update is
                    // logged, never waits for this thread's own read, and the next read
                    // applies it. (Without the re-entry check of direct updates that find the
                    // bias set, the second round panics: the update waits for its own read.)
                    let n = o.read(|v| {
                        o.update(Op::Add(k));
                        v.len()
                    });
                    assert_eq!(n, expected.len(), "{representation:?}: the read saw its own update");
                    expected.push(k);
                    assert_eq!(o.read(|v| v.clone()), expected, "{representation:?}");
                    assert_eq!(o.read(|v| v.clone()), expected, "{representation:?}");
                }
            }
        }
    });
}

#[test]
fn an_update_from_inside_absorb_local_panics() {
    quiet_expected_panics();
    with_watchdog("update inside absorb_local", LIMIT, || {
        for config in configs() {
            let mut arena = Arena::default();
            let o = arena.fresh(config);
            std::thread::scope(|s| {
                s.spawn(|| {
                    // Pinned: a thread that moved to another CPU between the outer update and
                    // the inner one would find that CPU's slot free, and nothing would wait
                    // (seen under qemu-user, which has no restartable sequences).
                    pin_round_robin(0);
                    let msg = message(catch_unwind(AssertUnwindSafe(|| o.update(Op::UpdateInAbsorb(o)))));
                    assert!(msg.contains("absorb_local"), "{msg}");
                });
            });
            o.update(Op::Add(3));
            assert_eq!(o.read(|v| v.clone()), vec![3]);
        }
    });
}

#[test]
fn a_read_of_another_object_sharing_the_slot_from_inside_absorb_local_does_not_hang() {
    quiet_expected_panics();
    with_watchdog("read inside absorb_local", LIMIT, || {
        for config in configs() {
            let config = config.cache_slots(1);
            let d = Domain::<Ordered<Op>>::new(config).unwrap();
            let mut arena = Arena::default();
            let (a, b) = (arena.object(&d), arena.object(&d));
            std::thread::scope(|s| {
                s.spawn(|| {
                    // Pinned, so that the three updates share one CPU's slot.
                    pin_round_robin(0);
                    b.update(Op::Add(1));
                    a.update(Op::Add(2));
                    // `a` owns this core's only slot; reading `b` needs no slot of `b`'s
                    // (its log went to its backlog when `a` took the slot), so it works.
                    a.update(Op::ReadInAbsorb(b));
                });
            });
            assert_eq!(b.read(|v| v.clone()), vec![1]);
            assert_eq!(a.read(|v| v.clone()), vec![2]);
        }
    });
}

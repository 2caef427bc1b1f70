//! `Rc`/`Weak` under real threads: clone/drop storms on shared objects, weak-reference
//! revival racing reviews, and shutdown. Every destructor run is checked (see `common`): one
//! that runs twice, or while a strong handle exists, fails the test, and so does any object
//! left unfreed.

#![cfg(not(loom))]

mod common;

use common::{H, Rng, Tracker, size};
use oplog_refcount::{Config, CoreMode, Domain, Rc, Weak, testing};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const MODES: [CoreMode; 2] = [CoreMode::PerThread, CoreMode::PerCpu];

fn domain(mode: CoreMode, period: Option<Duration>) -> Domain {
    // A small cache, so that collisions (evictions from the update path) happen too.
    Domain::new(Config::new().mode(mode).cpus(2).max_threads(8).cache_entries(8).review_period(period)).unwrap()
}

/// Several threads clone, hold and drop handles to shared objects, and revive them through
/// weak references after their roots are gone, while a background reviewer (every core at
/// once, every 1 ms) and a thread reviewing single cores in random order free what reaches a
/// true zero.
#[test]
fn clone_drop_storm_with_revival_racing_review() {
    for mode in MODES {
        let d = domain(mode, Some(Duration::from_millis(1)));
        let n = size(48, 3);
        let iters = size(50_000, 60);
        let t = Tracker::new(n);
        let roots: Vec<H> = (0..n).map(|i| H::new_in(i, &t, &d)).collect();
        let weaks: Vec<Weak<_>> = roots.iter().map(H::downgrade).collect();
        let roots = std::sync::Mutex::new(Some(roots));
        let running = AtomicUsize::new(3);
        let upgrades_failed = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for seed in 0..3u64 {
                let (weaks, roots, failed, running) = (&weaks, &roots, &upgrades_failed, &running);
                s.spawn(move || {
                    let mut rng = Rng::with_seed(seed + 1);
                    let mut held: Vec<H> = Vec::new();
                    for i in 0..iters {
                        if seed == 0 && i == iters / 4 {
                            // From here on, objects live only while some thread holds them.
                            drop(roots.lock().unwrap().take());
                        }
                        match rng.usize(..10) {
                            0..=3 => match H::upgrade(&weaks[rng.usize(..weaks.len())]) {
                                Some(h) => held.push(h),
                                None => {
                                    failed.fetch_add(1, Ordering::Relaxed);
                                }
                            },
                            4..=6 if !held.is_empty() => {
                                let h = held[rng.usize(..held.len())].clone();
                                h.check();
                                held.push(h);
                            }
                            _ if !held.is_empty() => {
                                let k = rng.usize(..held.len());
                                held.swap_remove(k).check();
                            }
                            _ => {}
                        }
                        if held.len() > 8 {
                            held.clear();
                        }
                    }
                    drop(held);
                    running.fetch_sub(1, Ordering::SeqCst);
                });
            }
            // Reviews of single cores, in random order (Figure 8-3: each core reviews on its own
            // schedule), so flushes of different cores interleave with the storm.
            s.spawn(|| {
                let mut rng = Rng::with_seed(99);
                while running.load(Ordering::SeqCst) > 0 {
                    let cores = d.cores();
                    testing::review(&d, cores[rng.usize(..cores.len())]);
                    std::thread::yield_now();
                }
            });
        });
        drop(roots);
        d.collect();
        t.assert_clean();
        assert_eq!(t.drops(), n, "{mode:?}: every object is freed exactly once");
        assert!(weaks.iter().all(Weak::is_freed));
        assert!(weaks.iter().all(|w| w.upgrade().is_none()));
    }
}

/// Handles travel between threads through shared pools: each is cloned on one core and
/// dropped on another, so every core caches a different part of the count and flushes often
/// see a global zero that is not a true zero (the situation of 002 Figure 8-2). The threads
/// also review single cores, in random order, as the cores of the texts do. No object may be
/// freed while its pool holds a handle.
#[test]
fn handles_passed_between_threads_are_never_freed_early() {
    for mode in MODES {
        let d = domain(mode, None);
        let n = size(3, 2);
        let t = Tracker::new(n);
        let pools: Vec<std::sync::Mutex<Vec<H>>> =
            (0..n).map(|i| std::sync::Mutex::new(vec![H::new_in(i, &t, &d)])).collect();
        // Keep the allocations, so that an early free shows as a violation, not a crash.
        let weaks: Vec<Weak<_>> = pools.iter().map(|p| p.lock().unwrap()[0].downgrade()).collect();
        std::thread::scope(|s| {
            for seed in 0..3u64 {
                let (pools, d) = (&pools, &d);
                s.spawn(move || {
                    let mut rng = Rng::with_seed(seed + 7);
                    for i in 0..size(20_000, 80) {
                        let pool = &pools[rng.usize(..pools.len())];
                        let mut p = pool.lock().unwrap();
                        let k = rng.usize(..p.len());
                        // At least one handle stays in each pool; mostly one or two.
                        if p.len() > 1 && rng.usize(..3) > 0 {
                            let h = p.swap_remove(k);
                            drop(p);
                            h.check();
                        } else if p.len() < 4 {
                            let h = p[k].clone();
                            h.check();
                            p.push(h);
                        }
                        if i % 8 == 0 {
                            let cores = d.cores();
                            testing::review(d, cores[rng.usize(..cores.len())]);
                        }
                    }
                });
            }
        });
        t.assert_clean();
        assert_eq!(t.drops(), 0, "{mode:?}: every pool still holds a handle");
        drop(pools);
        d.collect();
        assert_eq!(t.drops(), n);
        assert!(weaks.iter().all(Weak::is_freed));
        t.assert_clean();
    }
}

/// One object, no strong handle left: threads keep reviving it through its weak reference
/// while another reviews as fast as it can. Whichever clears `dying` first wins; the object
/// must never be freed while a revived handle exists, and must be freed once they stop.
#[test]
fn revival_races_review_on_one_object() {
    for mode in MODES {
        let d = domain(mode, None);
        let rounds = size(30, 3);
        for round in 0..rounds {
            let t = Tracker::new(1);
            let w = H::new_in(0, &t, &d).downgrade();
            let stop = AtomicBool::new(false);
            let revived = AtomicUsize::new(0);
            std::thread::scope(|s| {
                for _ in 0..2 {
                    s.spawn(|| {
                        while !stop.load(Ordering::Relaxed) {
                            match H::upgrade(&w) {
                                Some(h) => {
                                    revived.fetch_add(1, Ordering::Relaxed);
                                    h.check();
                                }
                                None => return,
                            }
                        }
                    });
                }
                s.spawn(|| {
                    for _ in 0..size(30, 6) {
                        d.review();
                    }
                    stop.store(true, Ordering::Relaxed);
                });
            });
            d.collect();
            t.assert_clean();
            assert_eq!(t.drops(), 1, "{mode:?}, round {round}");
            assert!(w.upgrade().is_none());
        }
    }
}

/// Dropping the last domain handle frees every object whose references are gone, before the
/// drop returns; nothing leaks.
#[test]
fn shutdown_frees_everything_pending() {
    for mode in MODES {
        let d = domain(mode, Some(Duration::from_millis(1)));
        let n = size(64, 4);
        let t = Tracker::new(n);
        let objs: Vec<H> = (0..n).map(|i| H::new_in(i, &t, &d)).collect();
        std::thread::scope(|s| {
            for k in 0..2 {
                let objs = &objs;
                s.spawn(move || {
                    for i in 0..size(5_000, 40) {
                        let h = objs[(i * 7 + k) % objs.len()].clone();
                        drop(h.clone());
                    }
                });
            }
        });
        drop(objs);
        drop(d);
        t.assert_clean();
        assert_eq!(t.drops(), n, "{mode:?}: shutdown freed everything");
    }
}

/// `collect` returns only once every released object is freed, even while the background
/// reviewer is examining (and freeing) a large batch of them at the same time.
#[test]
fn collect_waits_for_the_background_reviewer() {
    for round in 0..size(10, 1) {
        let d = domain(CoreMode::PerThread, Some(Duration::from_millis(1)));
        let n = size(50_000, 40);
        let t = Tracker::new(n);
        let all: Vec<H> = (0..n).map(|i| H::new_in(i, &t, &d)).collect();
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| all.iter().for_each(|h| drop(h.clone())));
            }
        });
        drop(all);
        d.collect();
        assert_eq!(t.drops(), n, "round {round}: collect returned before every object was freed");
        t.assert_clean();
    }
}

/// Objects still referenced when the domain is dropped stay valid; when they are released,
/// the domain's reviewer (started at shutdown if it had none) frees them.
#[test]
fn objects_outliving_their_domain_handle_are_freed_later() {
    for period in [None, Some(Duration::from_millis(1))] {
        let d = domain(CoreMode::PerThread, period);
        let t = Tracker::new(2);
        let a = H::new_in(0, &t, &d);
        let b = H::new_in(1, &t, &d);
        let wb = b.downgrade();
        drop(d);
        assert_eq!(t.drops(), 0);
        a.check();
        let b2 = H::upgrade(&wb).expect("still referenced");
        drop((a, b));
        std::thread::spawn(move || drop(b2)).join().unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while t.drops() < 2 {
            assert!(Instant::now() < deadline, "{period:?}: objects were not freed after the domain was dropped");
            std::thread::sleep(Duration::from_millis(1));
        }
        t.assert_clean();
    }
}

/// Destructors that release other objects: a chain is freed link by link by one `collect`.
#[test]
fn destructors_may_release_other_objects() {
    let d = domain(CoreMode::PerThread, None);
    let n = size(100, 5);
    let t = Tracker::new(n);
    let mut head = None;
    for i in 0..n {
        head = Some(H::with_next(i, &t, &d, head));
    }
    drop(head);
    assert_eq!(d.collect(), n);
    t.assert_clean();
    assert_eq!(t.drops(), n);
}

/// A panicking destructor does not stop the review: the others are freed, then the panic
/// reaches the caller.
#[test]
fn a_panicking_destructor_is_resumed_after_the_review() {
    struct Bomb(Arc<AtomicUsize>, bool);
    impl Drop for Bomb {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
            if self.1 {
                panic!("bomb");
            }
        }
    }
    let d = domain(CoreMode::PerCpu, None);
    let drops = Arc::new(AtomicUsize::new(0));
    for i in 0..4 {
        drop(Rc::new_in(Bomb(drops.clone(), i == 1), &d));
    }
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| d.collect()));
    assert_eq!(r.unwrap_err().downcast_ref::<&str>(), Some(&"bomb"));
    assert_eq!(drops.load(Ordering::SeqCst), 4, "the other three were freed too");
    assert_eq!(d.collect(), 0);
}

/// The last handle of a domain may be dropped by a destructor on the reviewer thread.
#[test]
fn a_destructor_may_drop_its_own_domain() {
    struct Holder(#[allow(dead_code)] Domain, Arc<AtomicBool>);
    impl Drop for Holder {
        fn drop(&mut self) {
            self.1.store(true, Ordering::SeqCst);
        }
    }
    let d = domain(CoreMode::PerThread, Some(Duration::from_millis(1)));
    let freed = Arc::new(AtomicBool::new(false));
    let r = Rc::new_in(Holder(d.clone(), freed.clone()), &d);
    drop(d);
    drop(r);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !freed.load(Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "not freed");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A thread may use several domains; threads that exit give their per-thread core to the
/// next thread, with whatever it still caches, and reviews keep flushing it.
#[test]
fn threads_and_domains_share_cores_correctly() {
    let d1 = domain(CoreMode::PerThread, None);
    let d2 = domain(CoreMode::PerThread, None);
    let t = Tracker::new(2);
    let a = H::new_in(0, &t, &d1);
    let b = H::new_in(1, &t, &d2);
    let mut kept = Vec::new();
    for _ in 0..size(6, 2) {
        // Each thread's increments stay in its core after it exits; the matching decrements
        // happen later on this thread's core.
        kept.extend(std::thread::scope(|s| {
            s.spawn(|| {
                let mut mine = Vec::new();
                for _ in 0..size(100, 5) {
                    let (x, y) = (a.clone(), b.clone());
                    x.check();
                    y.check();
                    mine.push(x);
                    drop(H::upgrade(&b.downgrade()).unwrap());
                }
                mine
            })
            .join()
            .unwrap()
        }));
    }
    assert!(d1.cores().len() >= 2 && d2.cores().len() >= 2, "per-thread cores were claimed");
    assert_eq!((d1.collect(), d2.collect()), (0, 0), "everything is still referenced");
    drop(a);
    drop(b);
    assert_eq!(d2.collect(), 1);
    assert_eq!(d1.collect(), 0, "the kept handles hold object 0");
    drop(kept);
    assert_eq!(d1.collect(), 1);
    t.assert_clean();
    assert_eq!(t.drops(), 2);
}

#[test]
fn weak_new_and_handle_traits() {
    let d = domain(CoreMode::PerThread, None);
    let w: Weak<u32> = Weak::new();
    assert!(w.upgrade().is_none() && !w.is_freed() && w.state().is_none());
    assert!(w.ptr_eq(&Weak::default()));
    let a = Rc::new_in(5u32, &d);
    let b = Rc::new_in(5u32, &d);
    assert_eq!(a, b);
    assert!(!Rc::ptr_eq(&a, &b) && Rc::ptr_eq(&a, &a.clone()));
    assert_eq!(format!("{a} {a:?} {}", *b + 1), "5 5 6");
    // SAFETY: `a` keeps the value alive.
    assert_eq!(unsafe { *Rc::as_ptr(&a) }, 5);
    assert!(a <= b && a.cmp(&b).is_eq());
    let wa = Rc::downgrade(&a);
    assert!(wa.ptr_eq(&wa.clone()) && !wa.ptr_eq(&Rc::downgrade(&b)));
    assert_eq!(format!("{wa:?}"), "(Weak)");
    let s = Rc::state(&a);
    assert_eq!((s.global, s.queued, s.freed), (1, false, false));
    drop((a, b));
    assert_eq!(d.collect(), 2);
    assert!(wa.is_freed());
}

#[test]
#[cfg_attr(miri, ignore = "the global domain's reviewer thread never exits")]
fn the_global_domain_frees_in_the_background() {
    let t = Tracker::new(1);
    let w = H::new_in(0, &t, Domain::global()).downgrade();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !w.is_freed() {
        assert!(Instant::now() < deadline, "the global domain did not free the object");
        std::thread::sleep(Duration::from_millis(1));
    }
    t.assert_clean();
    assert_eq!(t.drops(), 1);
    let r: Rc<String> = Rc::from(String::from("x"));
    assert_eq!(r.as_str(), "x");
    assert_eq!(*Rc::<u8>::default(), 0);
}

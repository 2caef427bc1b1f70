//! Random histories on three cores, replayed step by step against a model of the true count.
//!
//! Each step is one of Figure 8-3's operations on a random core: `inc` (clone a handle), `dec`
//! (drop one), `tryget` (upgrade a weak reference), or `review` (flush, advance the epoch if
//! last, examine the queue). The model is the set of handles that exist. After every step:
//! an object with a handle is not freed; an upgrade fails only once the object is freed; and
//! once an object's handles are all gone, reviews on every core free it within four epochs.

#![cfg(not(loom))]

mod common;

use common::{Rng, size};
use oplog_refcount::testing::{clone_on, drop_on, review, upgrade_on};
use oplog_refcount::{Config, CoreMode, Domain, Rc, Weak};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

const CORES: usize = 3;

struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

struct Object {
    handles: Vec<Rc<Counted>>,
    weak: Weak<Counted>,
    drops: Arc<AtomicUsize>,
}

impl Object {
    fn freed(&self) -> bool {
        match self.drops.load(Ordering::SeqCst) {
            0 => false,
            1 => true,
            n => panic!("destructor ran {n} times"),
        }
    }
}

fn run(seed: u64, steps: usize, cache_entries: usize) {
    let config = Config::new().mode(CoreMode::PerCpu).cpus(CORES).cache_entries(cache_entries).review_period(None);
    let d = Domain::new(config).unwrap();
    let mut rng = Rng::with_seed(seed);
    let mut objects: Vec<Object> = (0..3)
        .map(|_| {
            let drops = Arc::new(AtomicUsize::new(0));
            let rc = Rc::new_in(Counted(drops.clone()), &d);
            Object { weak: Rc::downgrade(&rc), handles: vec![rc], drops }
        })
        .collect();
    for step in 0..steps {
        let core = rng.usize(..CORES);
        let o = rng.usize(..objects.len());
        let obj = &mut objects[o];
        match rng.usize(..8) {
            0..=1 if !obj.handles.is_empty() => {
                let k = rng.usize(..obj.handles.len());
                let h = clone_on(&d, &obj.handles[k], core);
                obj.handles.push(h);
            }
            2..=3 if !obj.handles.is_empty() => {
                let k = rng.usize(..obj.handles.len());
                drop_on(&d, obj.handles.swap_remove(k), core);
            }
            4 => match upgrade_on(&d, &obj.weak, core) {
                Some(h) => obj.handles.push(h),
                None => assert!(obj.freed(), "seed {seed} step {step}: tryget failed on a live object"),
            },
            _ => {
                review(&d, core);
            }
        }
        for (i, obj) in objects.iter().enumerate() {
            assert!(
                obj.handles.is_empty() || !obj.freed(),
                "seed {seed} step {step}: object {i} freed with {} handle(s)",
                obj.handles.len()
            );
        }
    }
    // Release everything on random cores; every core keeps reviewing in turn.
    for obj in &mut objects {
        for h in obj.handles.drain(..) {
            drop_on(&d, h, rng.usize(..CORES));
        }
    }
    // A zero seen in the epoch of the last drop waits two epochs; an object queued earlier may
    // be found dirty by the final flushes and wait two more; its core then reviews within a
    // round.
    let start = d.epoch();
    while d.epoch() < start + 4 {
        for core in 0..CORES {
            review(&d, core);
        }
    }
    for core in 0..CORES {
        review(&d, core);
    }
    for (i, obj) in objects.iter().enumerate() {
        assert!(obj.freed(), "seed {seed}: object {i} not freed four epochs after its last handle went");
        assert!(upgrade_on(&d, &obj.weak, 0).is_none());
    }
    assert_eq!(d.queued(), 0);
}

/// With a one-entry cache, operations on different objects evict each other, so flushes of
/// one object happen at many more points: dirty zeros and early zeros become common.
#[test]
fn random_histories_with_constant_evictions_match_the_model() {
    for seed in 0..size(3000, 4) as u64 {
        run(seed, size(300, 60), 1);
    }
}

#[test]
fn random_histories_match_the_model() {
    for seed in 0..size(500, 4) as u64 {
        run(seed, size(300, 60), 4);
    }
}

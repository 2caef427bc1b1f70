//! `cargo run -p oplog-refcount --example quickstart_rc`: an `Arc`-shaped handle cloned from many threads.
use oplog_refcount::{Config, Domain, Rc};

fn main() {
    let domain = Domain::new(Config::new()).expect("the default configuration is valid");
    let shared = Rc::new_in(vec![1, 2, 3], &domain);
    let weak = Rc::downgrade(&shared);
    std::thread::scope(|s| {
        for _ in 0..4 {
            // Clone and drop add +1 / -1 in this core's cache: no shared cache line is written.
            s.spawn(|| (0..10_000).for_each(|_| assert_eq!(shared.clone().iter().sum::<i32>(), 6)));
        }
    });
    assert_eq!(weak.upgrade().map(|v| v.len()), Some(3)); // still alive: `shared` is held
    drop(shared);
    domain.collect(); // frees what no handle holds now (the background review would, in 10-20 ms)
    assert!(weak.upgrade().is_none());
}

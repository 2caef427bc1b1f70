//! `cargo run -p oplog --example quickstart_own_type`: your own type behind `OpLog`, updated from two threads.
use oplog::{OpLog, Ordered, Update};
use std::collections::BTreeSet;

enum SetOp {
    Insert(u32),
    Remove(u32),
}

impl Update for SetOp {
    type Target = BTreeSet<u32>;
    fn exec(self, set: &mut BTreeSet<u32>) {
        match self {
            SetOp::Insert(x) => set.insert(x),
            SetOp::Remove(x) => set.remove(&x),
        };
    }
}

fn main() {
    let set = OpLog::<Ordered<SetOp>>::new(BTreeSet::new());
    std::thread::scope(|s| {
        s.spawn(|| (0..100).for_each(|x| set.update(SetOp::Insert(x)))); // logged on this thread's core
        (100..200).for_each(|x| set.update(SetOp::Insert(x)));
    });
    set.update(SetOp::Remove(7)); // ordered after the inserts, by timestamp
    assert_eq!(set.read(|s| (s.len(), s.contains(&7))), (199, false)); // a read applies the logs first
}

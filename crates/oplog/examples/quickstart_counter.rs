//! `cargo run -p oplog --example quickstart_counter`: four threads count on one distributed `Counter`.
use oplog::Counter;

fn main() {
    let hits = Counter::new(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            // Each increment appends to the calling core's log: no shared cache line is written.
            s.spawn(|| (0..10_000).for_each(|_| hits.inc()));
        }
    });
    hits.add(-5);
    // A read merges every core's log: exact once the writers are done.
    assert_eq!(hits.read(), 39_995);
    println!("hits = {}", hits.read());
}

//! Times the update paths in a tight loop on one thread (for looking at the generated code).
use oplog::{Config, Counter, CounterLog, Domain};
use std::time::Instant;

#[inline(never)]
fn bump(c: &Counter) {
    c.inc();
}

fn main() {
    for (name, config) in [("per-cpu", Config::per_cpu()), ("per-thread", Config::per_thread())] {
        let d = Domain::<CounterLog>::new(config).unwrap();
        let c = Counter::with_domain(&d, 0);
        let n = 100_000_000u64;
        let t = Instant::now();
        for _ in 0..n {
            bump(&c);
        }
        let el = t.elapsed();
        println!(
            "{name} (owner fast path: {}): {:.2} ns/op, value {}",
            d.owner_fast_path(),
            el.as_nanos() as f64 / n as f64,
            c.read()
        );
    }
}

//! Times the hot paths in a tight loop on one thread (for looking at the generated code):
//! `Counter::inc`, a push to an unordered log, a read of an object with nothing logged, a
//! direct update, a read right after an update (logged, direct, and under a `Mutex` for
//! comparison), and an update and a read under one synchronize guard (against one `Mutex`
//! lock), in a per-CPU domain (on restartable sequences where they exist), a per-CPU
//! domain on the slots' spin lock, and a per-thread domain.
//!
//! `cargo run --release -p oplog --example hotpath` (`HOTPATH_N` operations per loop, default
//! 20,000,000; a small value suits `valgrind --tool=callgrind`; `HOTPATH_DOMAIN=per-cpu`,
//! `per-cpu-spin` or `per-thread` runs one domain only)
use oplog::{Config, Counter, CounterLog, Domain, OpLog, Representation, Unordered, Update};
use std::hint::black_box;
use std::sync::Mutex;
use std::time::Instant;

/// Adds to one of 64 counters (the `read-mix` table's operation).
struct Add(usize);

impl Update for Add {
    type Target = [u64; 64];
    fn exec(self, t: &mut [u64; 64]) {
        t[self.0] += 1;
    }
}

#[inline(never)]
fn bump(c: &Counter) {
    c.inc();
}

#[inline(never)]
fn push(o: &OpLog<Unordered<Add>>, i: usize) {
    o.update(Add(i & 63));
}

#[inline(never)]
fn read(o: &OpLog<Unordered<Add>>, i: usize) -> u64 {
    o.read(|t| t[i & 63])
}

fn time(name: &str, n: u64, mut f: impl FnMut(u64)) {
    let t = Instant::now();
    for i in 0..n {
        f(i);
    }
    println!("  {name}: {:.2} ns/op", t.elapsed().as_nanos() as f64 / n as f64);
}

fn main() {
    let n: u64 = std::env::var("HOTPATH_N").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000_000);
    let only = std::env::var("HOTPATH_DOMAIN").ok();
    for (name, config) in [
        ("per-cpu", Config::per_cpu()),
        ("per-cpu-spin", Config::per_cpu().rseq(false)),
        ("per-thread", Config::per_thread()),
    ] {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let d = Domain::<CounterLog>::new(config.clone()).unwrap();
        println!("{name} (owner fast path: {})", d.owner_fast_path());
        let c = Counter::with_domain(&d, 0);
        time("Counter::inc", 5 * n, |_| bump(&c));
        assert_eq!(c.read(), 5 * n as i64);
        // Pinned to logged: on one thread the adaptive default goes direct, since a direct
        // update costs less than a push there.
        let d = Domain::<Unordered<Add>>::new(config.clone().representation(Representation::Logged)).unwrap();
        let o = OpLog::with_domain(&d, [0; 64]);
        time("unordered push, logged (a full log is handed off every 128)", n, |i| push(&o, i as usize));
        black_box(read(&o, 0));
        time("read, nothing logged (the concurrent path)", n, |i| {
            black_box(read(&o, i as usize));
        });
        time("update + read, logged", n / 10, |i| {
            push(&o, i as usize);
            black_box(read(&o, i as usize));
        });
        let d = Domain::<Unordered<Add>>::new(config.representation(Representation::Direct)).unwrap();
        let o = OpLog::with_domain(&d, [0; 64]);
        time("update, direct", n, |i| push(&o, i as usize));
        time("update + read, direct", n / 10, |i| {
            push(&o, i as usize);
            black_box(read(&o, i as usize));
        });
        time("update + read under one synchronize guard, direct", n / 10, |i| {
            let mut guard = o.synchronize();
            guard[i as usize & 63] += 1;
            black_box(guard[i as usize & 63]);
        });
        let m = Mutex::new([0u64; 64]);
        time("update + read, Mutex (the floor of a direct update)", n / 10, |i| {
            black_box(&m).lock().unwrap()[i as usize & 63] += 1;
            black_box(black_box(&m).lock().unwrap()[i as usize & 63]);
        });
        time("update + read under one Mutex lock", n / 10, |i| {
            let mut guard = black_box(&m).lock().unwrap();
            guard[i as usize & 63] += 1;
            black_box(guard[i as usize & 63]);
        });
    }
}

//! Times the hot paths in a tight loop on one thread (for looking at the generated code):
//! `Counter::inc` (adaptive, and pinned to logged), a push to an unordered log, a read of
//! an object with nothing logged, a direct update, a read right after an update (logged,
//! direct, and under a `Mutex` for comparison), and an update and a read under one
//! synchronize guard (against one `Mutex` lock), after two floors of an increment (a plain
//! load and store, and the least a per-thread log of one of many objects must do: a
//! thread-local slot lookup, an owner check, an add), in a per-CPU domain (on restartable
//! sequences where they exist), a per-CPU domain on the slots' spin lock, and a per-thread
//! domain.
//!
//! `cargo run --release -p oplog --example hotpath` (`HOTPATH_N` operations per loop, default
//! 20,000,000; a small value suits `valgrind --tool=callgrind`; `HOTPATH_DOMAIN=per-cpu`,
//! `per-cpu-spin` or `per-thread` runs one domain only)
use oplog::{Config, Counter, CounterLog, Domain, OpLog, Representation, Unordered, Update};
use std::cell::Cell;
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

/// The physical floor of an increment (`oplog-bench counter`'s `percore-store`): a plain
/// load and store of the calling thread's own word, its address opaque to the optimizer.
#[inline(never)]
fn store_floor(word: &Cell<u64>) {
    let word = black_box(word);
    word.set(word.get() + 1);
}

/// One slot of [`lookup_floor`]'s table: the object whose count it holds, and the count.
struct FloorSlot {
    owner: Cell<usize>,
    count: Cell<u64>,
}

thread_local! {
    /// [`lookup_floor`]'s per-thread table: 256 slots, as a domain's log cache.
    static FLOOR_TABLE: [FloorSlot; 256] =
        const { [const { FloorSlot { owner: Cell::new(0), count: Cell::new(0) } }; 256] };
}

/// The least an increment of one of many shared counters, logged per thread, must do: find
/// this thread's slot for the object (a thread-local table indexed by the object's
/// address), check that the slot holds this object, and add with a plain load and store.
/// No restartable sequence, no guard against a concurrent gather, no sampling: a floor,
/// not a counter anyone could read.
#[inline(never)]
fn lookup_floor(object: &u64) {
    let key = object as *const u64 as usize;
    FLOOR_TABLE.with(|table| {
        let slot = &table[(key >> 3) & 255];
        if slot.owner.get() == key {
            slot.count.set(slot.count.get() + 1);
        } else {
            slot.owner.set(key);
            slot.count.set(1);
        }
    });
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
    println!("floors");
    let word = Cell::new(0);
    time("plain load and store of the thread's own word", 5 * n, |_| store_floor(&word));
    let object = 0u64;
    time("thread-local slot lookup, owner check, plain add", 5 * n, |_| lookup_floor(black_box(&object)));
    for (name, config) in [
        ("per-cpu", Config::per_cpu()),
        ("per-cpu-spin", Config::per_cpu().rseq(false)),
        ("per-thread", Config::per_thread()),
    ] {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        // The default, then pinned to logged: the fold into the CPU's slot, which the
        // adaptive default leaves for direct updates where the domain measured those
        // cheaper (`solo`).
        for (label, representation) in [
            ("Counter::inc (adaptive: the default)", Representation::Adaptive),
            ("Counter::inc, logged", Representation::Logged),
        ] {
            let d = Domain::<CounterLog>::new(config.clone().representation(representation)).unwrap();
            if representation == Representation::Adaptive {
                println!("{name} (owner fast path: {})", d.owner_fast_path());
            }
            let c = Counter::with_domain(&d, 0);
            time(label, 5 * n, |_| bump(&c));
            assert_eq!(c.read(), 5 * n as i64);
        }
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

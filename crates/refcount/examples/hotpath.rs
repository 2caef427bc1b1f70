//! Clone+drop pairs on one `Rc` in a loop, for profilers (`perf record`): the hot path alone.
//!
//! `cargo run --release -p oplog-refcount --example hotpath -- [percpu] [seconds]`

use oplog_refcount::{Config, CoreMode, Domain, Rc};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = if args.iter().any(|a| a == "percpu") { CoreMode::PerCpu } else { CoreMode::PerThread };
    let secs: f64 = args.iter().find_map(|a| a.parse().ok()).unwrap_or(1.0);
    let period = if args.iter().any(|a| a == "manual") { None } else { Some(oplog_refcount::DEFAULT_REVIEW_PERIOD) };
    let domain = Domain::new(Config::new().mode(mode).review_period(period)).expect("valid configuration");
    let rc = Rc::new_in(0u64, &domain);
    let cpu_start = thread_cpu_ns();
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut pairs = 0u64;
    while Instant::now() < end {
        for _ in 0..1024 {
            drop(std::hint::black_box(rc.clone()));
        }
        pairs += 1024;
    }
    let cpu = thread_cpu_ns().zip(cpu_start).map(|(e, s)| e.saturating_sub(s));
    print!("{mode:?}: {:.1} M pairs/s", pairs as f64 / secs / 1e6);
    match cpu {
        Some(ns) if ns > 0 => println!(", {:.1} M pairs per CPU-second of this thread", pairs as f64 / ns as f64 * 1e3),
        _ => println!(),
    }
}

/// CPU time of the calling thread (Linux: the first field of /proc/thread-self/schedstat).
fn thread_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat").ok()?.split_whitespace().next()?.parse().ok()
}

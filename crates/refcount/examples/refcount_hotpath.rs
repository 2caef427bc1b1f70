//! Clone+drop pairs on one shared `Rc` from N pinned threads, for profilers (`perf record`):
//! the hot path alone, with each thread's CPU time so that a loaded machine can be read.
//!
//! `cargo run --release -p oplog-refcount --example refcount_hotpath -- [percpu|arc] [manual] [threads=N] [SECONDS]`
//!
//! `arc` runs the same loop on a `std::sync::Arc`, for comparison.

use oplog_refcount::{Config, CoreMode, DEFAULT_REVIEW_PERIOD, Domain, Rc};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = if args.iter().any(|a| a == "percpu") { CoreMode::PerCpu } else { CoreMode::PerThread };
    let period = if args.iter().any(|a| a == "manual") { None } else { Some(DEFAULT_REVIEW_PERIOD) };
    let threads: usize = args.iter().find_map(|a| a.strip_prefix("threads=")?.parse().ok()).unwrap_or(1);
    let secs: f64 = args.iter().find_map(|a| a.parse().ok()).unwrap_or(1.0);
    let domain = Domain::new(Config::new().mode(mode).review_period(period)).expect("valid configuration");
    let rc = Rc::new_in(0u64, &domain);
    let arc = std::sync::Arc::new(0u64);
    let use_arc = args.iter().any(|a| a == "arc");
    let cpus = ordo::cpu::allowed();
    let results: Vec<(u64, Option<u64>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (rc, arc, cpus) = (&rc, &arc, &cpus);
                s.spawn(move || {
                    let _ = ordo::cpu::pin_current_thread(cpus[t % cpus.len()]);
                    let cpu_start = thread_cpu_ns();
                    let end = Instant::now() + Duration::from_secs_f64(secs);
                    let mut pairs = 0u64;
                    while Instant::now() < end {
                        if use_arc {
                            for _ in 0..1024 {
                                drop(std::hint::black_box(arc.clone()));
                            }
                        } else {
                            for _ in 0..1024 {
                                drop(std::hint::black_box(rc.clone()));
                            }
                        }
                        pairs += 1024;
                    }
                    (pairs, thread_cpu_ns().zip(cpu_start).map(|(e, s)| e.saturating_sub(s)))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let pairs: u64 = results.iter().map(|r| r.0).sum();
    let what = if use_arc { "std Arc".to_string() } else { format!("Rc, {mode:?}") };
    print!("{what}, {threads} thread(s): {:.1} M pairs/s", pairs as f64 / secs / 1e6);
    let per_cpu_second: Vec<String> =
        results.iter().filter_map(|&(p, ns)| Some(format!("{:.0}", p as f64 / ns? as f64 * 1e3))).collect();
    println!("; per thread, M pairs per CPU-second: {}", per_cpu_second.join(", "));
}

/// CPU time of the calling thread (Linux: the first field of /proc/thread-self/schedstat).
fn thread_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat").ok()?.split_whitespace().next()?.parse().ok()
}

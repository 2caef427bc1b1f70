//! Helpers shared by the integration tests (the watchdog, pinning and the seeded generator
//! are the workspace's, from `oplog_lincheck::testkit`).
#![allow(dead_code)]

use oplog::Update;
use oplog::log::LocalLog;
use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

#[allow(unused_imports)] // not every test file uses each
pub use oplog_lincheck::testkit::{Rng, pin_round_robin, with_watchdog};

/// Runs one turn per entry of `schedule` over `threads` threads, each pinned round robin:
/// turn `t` runs `step(t, me)` on thread `me = schedule[t]` once turn `t - 1` has
/// completed, whichever thread ran it, so the turns' real-time order is their order. A
/// panic in a turn stops the other threads, and the test fails with it rather than hang.
pub fn take_turns(threads: usize, schedule: &[usize], step: impl Fn(usize, usize) + Sync) {
    /// Sets the flag if its thread unwinds.
    struct StopOnPanic<'a>(&'a AtomicBool);
    impl Drop for StopOnPanic<'_> {
        fn drop(&mut self) {
            if std::thread::panicking() {
                self.0.store(true, Ordering::Release);
            }
        }
    }
    let turn = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        for me in 0..threads {
            let (turn, stop, step) = (&turn, &stop, &step);
            s.spawn(move || {
                let _stop = StopOnPanic(stop);
                pin_round_robin(me);
                loop {
                    let t = turn.load(Ordering::Acquire);
                    if t == schedule.len() || stop.load(Ordering::Acquire) {
                        return;
                    }
                    if schedule[t] != me {
                        // More threads than CPUs: let the thread whose turn it is run.
                        std::thread::yield_now();
                        continue;
                    }
                    step(t, me);
                    turn.store(t + 1, Ordering::Release);
                }
            });
        }
    });
}

/// Keeps panics whose message ends "panics on purpose" (the tests' deliberate ones) off stderr;
/// every other panic is printed as usual.
pub fn quiet_expected_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let payload = info.payload();
            let text = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("");
            if !text.ends_with("panics on purpose") {
                default(info);
            }
        }));
    });
}

/// Set operations, with an optional counter of executed operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetOp {
    /// Insert a key.
    Add(u64),
    /// Remove a key.
    Remove(u64),
}

impl SetOp {
    /// Applies the operation to a sequential model.
    pub fn apply_to(&self, model: &mut BTreeSet<u64>) {
        match *self {
            SetOp::Add(k) => {
                model.insert(k);
            }
            SetOp::Remove(k) => {
                model.remove(&k);
            }
        }
    }
}

impl Update for SetOp {
    type Target = BTreeSet<u64>;
    fn exec(self, set: &mut BTreeSet<u64>) {
        self.apply_to(set);
    }
}

/// A set operation that counts its executions and can absorb locally and globally.
#[derive(Debug)]
pub struct CountedOp {
    pub op: SetOp,
    pub execs: Arc<AtomicUsize>,
    pub panic_on_exec: bool,
}

impl CountedOp {
    /// `op`, counted in `execs`.
    pub fn new(op: SetOp, execs: &Arc<AtomicUsize>) -> Self {
        Self { op, execs: execs.clone(), panic_on_exec: false }
    }

    /// An operation that panics when executed, counted in `execs`.
    pub fn panicking(execs: &Arc<AtomicUsize>) -> Self {
        Self { op: SetOp::Add(999), execs: execs.clone(), panic_on_exec: true }
    }
}

/// Whether [`CountedOp`] absorbs (process-wide switches for the tests that use them).
pub static ABSORB_LOCAL: AtomicBool = AtomicBool::new(false);
pub static ABSORB_GLOBAL: AtomicBool = AtomicBool::new(false);

impl Update for CountedOp {
    type Target = BTreeSet<u64>;
    fn exec(self, set: &mut BTreeSet<u64>) {
        self.execs.fetch_add(1, Ordering::SeqCst);
        if self.panic_on_exec {
            panic!("operation {:?} panics on purpose", self.op);
        }
        self.op.apply_to(set);
    }
    fn absorb_local(self, log: &mut LocalLog<'_, Self>) -> Option<Self> {
        if let (true, SetOp::Remove(k)) = (ABSORB_LOCAL.load(Ordering::SeqCst), &self.op) {
            let k = *k;
            if log.remove_latest(|o| o.op == SetOp::Add(k)).is_some() {
                return None;
            }
        }
        Some(self)
    }
    fn absorb_global(_set: &BTreeSet<u64>, ops: &mut VecDeque<Self>) {
        if !ABSORB_GLOBAL.load(Ordering::SeqCst) {
            return;
        }
        // Drop each remove together with the latest earlier add of the same key.
        let mut i = 0;
        while i < ops.len() {
            if let SetOp::Remove(k) = ops[i].op
                && let Some(j) = ops.range(..i).rposition(|o| o.op == SetOp::Add(k))
            {
                ops.remove(i);
                ops.remove(j);
                i -= 1;
                continue;
            }
            i += 1;
        }
    }
}

/// Environment variable naming the user-mode emulator the tests run under, if any (`.ci/run`'s
/// aarch64 step sets it to `qemu-aarch64`).
pub const EMULATED_VAR: &str = "OPLOG_EMULATED";

/// Whether `test` must skip because it re-executes the test binary as a child process, which
/// user-mode emulation cannot do: the host kernel cannot execute the foreign binary. Says so
/// on stderr through the handle rather than `eprintln!`, which the test harness captures, so
/// the skip and its reason show in the run's log.
pub fn skip_child_process_under_emulation(test: &str) -> bool {
    use std::io::Write;
    let Some(emulator) = std::env::var(EMULATED_VAR).ok().filter(|v| !v.is_empty()) else {
        return false;
    };
    let _ = writeln!(
        std::io::stderr(),
        "skipped {test}: it re-executes the test binary as a child process, which the host kernel cannot run \
         under user-mode emulation ({EMULATED_VAR}={emulator})"
    );
    true
}

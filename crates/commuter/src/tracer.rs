//! MTRACE (002 §6.3): run a test's two operations on two cores of a real implementation and
//! report every cache line one wrote and the other touched.
//!
//! The implementation is built with `oplog`'s `trace` feature, so each of its primitives
//! (atomics, mutexes, cells) records its accesses while a trace session is active on the
//! calling thread (`oplog_percore::primitive::trace`). Cores are simulated by [`Cores`]: one
//! long-lived worker thread per CPU id, each telling `oplog` which CPU it is
//! (`set_current_cpu`), so per-CPU structures put each operation in that CPU's slot
//! whatever CPU the OS runs the thread on.
//!
//! # A test run
//!
//! 1. Build the object (untraced).
//! 2. In the [`Setup::Steady`] state, let [`CPU_A`] and [`CPU_B`] each *warm* the fresh
//!    object (updates that leave its abstract state unchanged, [`Object::warm`]), so both
//!    cores' log caches hold it (Refcache: their delta caches; a sloppy counter: a spare
//!    reference on each): the steady state the texts measure. In the [`Setup::Cold`] state
//!    they do not, so an OpLog object's first update on each core installs it in that
//!    core's log cache, which writes the object's word (`OpLog.word`): a conflict the
//!    steady state no longer has.
//! 3. Replay the set-up operations on [`CPU_SETUP`] (its own log cache: the test cores'
//!    slots keep the object, and a synchronize leaves installed objects installed). In the
//!    [`Setup::Quiescent`] state (steady, then this) the set-up core then *quiesces* the
//!    object ([`Object::quiesce`]: reads that apply what the set-up logged), so a read
//!    under test finds nothing logged: 000's reads always synchronize, OpLog's reads of a
//!    quiescent object take the concurrent path and write only their own CPU's cell of
//!    the reader table. The steady state stays the main number; the quiescent one says
//!    what reads cost once the updates have been read. For Refcache the quiescing step is a
//!    review: the set-up's deltas are flushed, and an object with no handle left is then
//!    on a review queue, dying (002 §8.1.2).
//! 4. Trace A on [`CPU_A`], then B on [`CPU_B`] (one after the other: the question is which
//!    lines each touches, not how they interleave), and check both responses against the
//!    model.
//! 5. Repeat from a fresh object with B first. The case is conflict-free when neither order
//!    has a conflict.
//!
//! Two operations *conflict* on a 64-byte line when one writes it and the other reads or
//! writes it (002 §3.1, §4.3). Writes are stores, read-modify-writes (including failed
//! compare-and-exchanges), lock acquires and releases, and cell write accesses.
//!
//! Per-CPU slots are entered as in the default configuration: through the restartable
//! sequence, whose traced stand-in records the sequence's own accesses (where `membarrier`
//! exists; the spin lock elsewhere). Heap data behind cells is recorded where the library
//! reaches it: queue logs' and batches' entries (`Log.entries`, `Batch.entries`) and the
//! slot tables. What the tracer cannot see (the internal instance's own heap, heap data
//! behind a mutex, immutable plain fields, other crates' memory) is listed in
//! `oplog_percore::primitive::trace`'s docs, with why each cannot hide a conflict between two
//! operations of one object except through the allocator's placement: a verdict of
//! "conflict-free" is about the memory the library reaches and reports.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;

use oplog_model::explore::Explore;
use oplog_percore::primitive::set_current_cpu;
use oplog_percore::primitive::trace::{Access, AccessKind, Session};

use crate::analyzer::show_op;
use crate::impls::{Impl, Object};
use crate::testgen::Test;
use oplog_model::Concurrent;

/// Bytes per cache line.
pub const LINE: usize = 64;
/// The CPU operation A runs on.
pub const CPU_A: usize = 0;
/// The CPU operation B runs on.
pub const CPU_B: usize = 1;
/// The CPU the set-up operations run on.
pub const CPU_SETUP: usize = 2;
/// CPUs a test uses (per-CPU structures under test are built with this many).
pub const CPUS: usize = 3;

type Job = Box<dyn FnOnce() + Send>;

/// Simulated cores: one worker thread per CPU id (see the module docs).
pub struct Cores {
    workers: Vec<(mpsc::Sender<Job>, Option<JoinHandle<()>>)>,
}

impl fmt::Debug for Cores {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cores").field("cpus", &self.workers.len()).finish()
    }
}

impl Cores {
    /// Starts `n` workers, worker `i` running as CPU `i`.
    pub fn new(n: usize) -> Self {
        let workers = (0..n)
            .map(|cpu| {
                let (tx, rx) = mpsc::channel::<Job>();
                let handle = std::thread::Builder::new()
                    .name(format!("commuter-cpu{cpu}"))
                    .spawn(move || {
                        set_current_cpu(cpu);
                        for job in rx {
                            job();
                        }
                    })
                    .expect("spawn a commuter worker thread");
                (tx, Some(handle))
            })
            .collect();
        Cores { workers }
    }

    /// Runs `f` on CPU `cpu` and returns its result (a panic in `f` is resumed here).
    ///
    /// # Panics
    /// If `cpu` is not one of the workers, or `f` panics.
    pub fn run<R: Send + 'static>(&self, cpu: usize, f: impl FnOnce() -> R + Send + 'static) -> R {
        let (tx, rx) = mpsc::channel::<Result<R, Box<dyn Any + Send>>>();
        let job: Job = Box::new(move || {
            let _ = tx.send(catch_unwind(AssertUnwindSafe(f)));
        });
        self.workers[cpu].0.send(job).expect("commuter worker is running");
        match rx.recv().expect("commuter worker answers") {
            Ok(r) => r,
            Err(panic) => resume_unwind(panic),
        }
    }

    /// Runs `f` on CPU `cpu` with a trace session, returning its result and every access it
    /// made through `oplog`'s primitives.
    ///
    /// # Panics
    /// As [`Cores::run`].
    pub fn trace<R: Send + 'static>(&self, cpu: usize, f: impl FnOnce() -> R + Send + 'static) -> (R, Vec<Access>) {
        self.run(cpu, move || {
            let session = Session::start().expect("no trace session is left open on a worker");
            let r = f();
            (r, session.finish())
        })
    }
}

impl Drop for Cores {
    fn drop(&mut self) {
        for (tx, handle) in &mut self.workers {
            drop(std::mem::replace(tx, mpsc::channel().0));
            if let Some(h) = handle.take() {
                let _ = h.join();
            }
        }
    }
}

/// One access to a line, as reported: the field's label and what was done.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Touch {
    /// The primitive's label.
    pub label: &'static str,
    /// What the access did.
    pub kind: AccessKind,
}

impl fmt::Display for Touch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.label, self.kind.name())
    }
}

/// A line both operations touched, at least one writing it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The line's index (address / [`LINE`]).
    pub line: usize,
    /// The first operation's accesses to it (distinct label and kind pairs).
    pub first: Vec<Touch>,
    /// The second operation's.
    pub second: Vec<Touch>,
}

impl Conflict {
    /// Every label involved, sorted, without repeats.
    pub fn labels(&self) -> Vec<&'static str> {
        let mut l: Vec<&'static str> = self.first.iter().chain(&self.second).map(|t| t.label).collect();
        l.sort_unstable();
        l.dedup();
        l
    }
}

/// Per line: whether the operation wrote it, and its accesses.
fn lines(accesses: &[Access]) -> BTreeMap<usize, (bool, Vec<Touch>)> {
    let mut map: BTreeMap<usize, (bool, Vec<Touch>)> = BTreeMap::new();
    for a in accesses.iter().filter(|a| a.size > 0) {
        for line in a.addr / LINE..=(a.addr + a.size - 1) / LINE {
            let entry = map.entry(line).or_default();
            entry.0 |= a.kind.writes();
            let touch = Touch { label: a.label, kind: a.kind };
            if !entry.1.contains(&touch) {
                entry.1.push(touch);
            }
        }
    }
    map
}

/// Every line that one of two operations wrote and the other touched.
pub fn conflicts(first: &[Access], second: &[Access]) -> Vec<Conflict> {
    let (a, b) = (lines(first), lines(second));
    a.iter()
        .filter_map(|(line, (a_wrote, a_touch))| {
            let (b_wrote, b_touch) = b.get(line)?;
            (*a_wrote || *b_wrote).then(|| Conflict { line: *line, first: a_touch.clone(), second: b_touch.clone() })
        })
        .collect()
}

/// Whether the object is warmed on both test cores before the test (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Setup {
    /// Both test cores warmed the object first.
    Steady,
    /// The object was only touched by the set-up core.
    Cold,
    /// Steady, then the set-up core applied everything logged ([`Object::quiesce`]).
    Quiescent,
}

/// Which operation ran first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// A on [`CPU_A`], then B on [`CPU_B`].
    AB,
    /// B on [`CPU_B`], then A on [`CPU_A`].
    BA,
}

/// The result of one test in one set-up state: the conflicts of each order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Conflicts with A first (`first` = A's accesses).
    pub ab: Vec<Conflict>,
    /// Conflicts with B first (`first` = B's accesses).
    pub ba: Vec<Conflict>,
}

impl Outcome {
    /// Neither order conflicts.
    pub fn conflict_free(&self) -> bool {
        self.ab.is_empty() && self.ba.is_empty()
    }

    /// The conflicts as `(order, line, A's accesses, B's accesses)`, both orders.
    pub fn by_operation(&self) -> Vec<(Order, usize, Vec<Touch>, Vec<Touch>)> {
        let mut all: Vec<_> = self.ab.iter().map(|c| (Order::AB, c.line, c.first.clone(), c.second.clone())).collect();
        all.extend(self.ba.iter().map(|c| (Order::BA, c.line, c.second.clone(), c.first.clone())));
        all
    }

    /// Each conflicting line as text: `A first, line 0x…: A {Slot.lock rmw} / B {…}`.
    pub fn describe(&self) -> Vec<String> {
        let show = |touches: &[Touch]| touches.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
        self.by_operation()
            .iter()
            .map(|(order, line, a, b)| {
                let first = if *order == Order::AB { "A" } else { "B" };
                format!("{first} first, line {:#x}: A {{{}}} / B {{{}}}", line * LINE, show(a), show(b))
            })
            .collect()
    }
}

/// An implementation's response differed from the model's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The implementation's id.
    pub implementation: String,
    /// The test, as text.
    pub test: String,
    /// The operation whose response was wrong.
    pub op: String,
    /// What the implementation returned.
    pub got: String,
    /// What the model returns.
    pub want: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "implementation `{}` returned {} for {} where the model returns {} (test: {})",
            self.implementation, self.got, self.op, self.want, self.test
        )
    }
}

impl std::error::Error for Mismatch {}

/// Runs `test` on implementation `imp` in `setup` state, both orders (module docs).
///
/// # Errors
/// [`Mismatch`] if a response differs from the model's.
pub fn check<M>(cores: &Cores, model: &M, imp: &Impl<M>, test: &Test<M>, setup: Setup) -> Result<Outcome, Mismatch>
where
    M: Explore + 'static,
    M::Op: Send + Sync + 'static,
    M::Ret: Send + 'static,
{
    let ab = run_order(cores, model, imp, test, setup, Order::AB)?;
    let ba = run_order(cores, model, imp, test, setup, Order::BA)?;
    Ok(Outcome { ab, ba })
}

fn run_order<M>(
    cores: &Cores,
    model: &M,
    imp: &Impl<M>,
    test: &Test<M>,
    setup: Setup,
    order: Order,
) -> Result<Vec<Conflict>, Mismatch>
where
    M: Explore + 'static,
    M::Op: Send + Sync + 'static,
    M::Ret: Send + 'static,
{
    let object: Arc<dyn Object<M>> = Arc::from((imp.build)());
    let mut state = model.init();
    for op in &test.setup {
        model.step(&mut state, op);
    }
    if setup != Setup::Cold {
        for cpu in [CPU_A, CPU_B] {
            let o = Arc::clone(&object);
            cores.run(cpu, move || o.warm());
        }
    }
    let setup_ops = test.setup.clone();
    let o = Arc::clone(&object);
    cores.run(CPU_SETUP, move || {
        for op in &setup_ops {
            o.call(op);
        }
        if setup == Setup::Quiescent {
            o.quiesce();
        }
    });
    let ((first, first_cpu), (second, second_cpu)) = match order {
        Order::AB => ((&test.a, CPU_A), (&test.b, CPU_B)),
        Order::BA => ((&test.b, CPU_B), (&test.a, CPU_A)),
    };
    let mut traces = Vec::new();
    for (op, cpu) in [(first, first_cpu), (second, second_cpu)] {
        let want = model.step(&mut state, op);
        let (o, op2) = (Arc::clone(&object), op.clone());
        let (got, accesses) = cores.trace(cpu, move || o.call(&op2));
        if got != want {
            return Err(Mismatch {
                implementation: imp.id.to_owned(),
                test: test.render(model),
                op: show_op(model, op),
                got: format!("{got:?}"),
                want: format!("{want:?}"),
            });
        }
        traces.push(accesses);
    }
    // Drop the object on the set-up core, untraced.
    cores.run(CPU_SETUP, move || drop(object));
    Ok(conflicts(&traces[0], &traces[1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(addr: usize, size: usize, kind: AccessKind, label: &'static str) -> Access {
        Access { thread: 1, addr, size, kind, label }
    }

    #[test]
    fn a_write_against_any_touch_of_the_same_line_conflicts() {
        use AccessKind::*;
        let a = [access(0, 8, Store, "x"), access(128, 8, Load, "y")];
        let b = [access(56, 8, Load, "z"), access(130, 2, Load, "w")];
        let c = conflicts(&a, &b);
        assert_eq!(c.len(), 1, "reads of line 2 do not conflict");
        assert_eq!(c[0].line, 0);
        assert_eq!(c[0].first, [Touch { label: "x", kind: Store }]);
        assert_eq!(c[0].labels(), ["x", "z"]);
        // An access spanning two lines touches both.
        let d = [access(60, 8, CellWrite, "wide")];
        let e = [access(64, 1, Load, "next")];
        assert_eq!(conflicts(&d, &e)[0].line, 1);
        assert!(conflicts(&a[1..], &b).is_empty());
    }

    #[test]
    fn cores_run_jobs_as_their_cpu_and_resume_panics() {
        let cores = Cores::new(2);
        assert_eq!(cores.run(1, oplog_percore::primitive::current_cpu), 1);
        assert_eq!(cores.run(0, oplog_percore::primitive::current_cpu), 0);
        let r = catch_unwind(AssertUnwindSafe(|| cores.run(0, || panic!("boom"))));
        assert!(r.is_err());
        assert_eq!(cores.run(0, || 7), 7, "the worker survives a panicking job");
    }
}

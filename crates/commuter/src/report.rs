//! The report: per structure and implementation, per pair of operations, how many cases
//! commute and how many of those are conflict-free, with every exception and its reason.
//!
//! # Why OpLog structures are not conflict-free everywhere
//!
//! OpLog makes *updates* conflict-free: an update touches only the calling core's log slot
//! (000 §4). The price is paid by reads of an object with something logged, which must
//! *synchronize*: take the object lock (a bit of `OpLog.word`), lock every core's slot
//! that holds the object, drain the logs and apply them to the shared instance
//! (`OpLog.state`). So every commutative pair that involves such a read (a read with an
//! update, or two reads after updates) conflicts, by design, on those fields; the report
//! lists them as exceptions with that reason. Reads of a *quiescent* object (nothing
//! logged since the last synchronize) take the concurrent path, which writes no shared
//! line: the quiescent columns (`quiescent_conflict_free`) show read/read pairs of the
//! OpLog counters, set and lists conflict-free there. 002 §4.5 shows that no single
//! implementation can make both update/update and read/update pairs conflict-free for a
//! counter; OpLog chooses updates, for structures updated far more often than read.
//!
//! Other reasons an OpLog update can conflict, each named when it happens:
//!
//! * **first touch**: a core's first update of an object installs it in that core's log
//!   cache, setting the core's bit in `OpLog.word`. The steady state (what the texts
//!   measure, and this report's main numbers) has the object installed on both cores; the
//!   cold columns show the first-touch cost;
//! * **log-cache collision**: a core's log cache is direct-mapped, so two objects of one
//!   domain can map to the same slot. An update that finds another object (the victim) in
//!   its slot takes the victim's log out, takes the slot, clears its core's bit in the
//!   victim's `OpLog.word` and sets it in its own; then, *after releasing the slot*, it
//!   appends the victim's log to the victim's backlog (`Backlogs`, applied by the victim's
//!   next synchronize), or applies a log that is applied alone (the counter's) under the
//!   victim's lock in its `OpLog.word` to its instance (`OpLog.state`). Each object under
//!   test here has a domain of its own, so the report's runs have no collision;
//!   `tests/tracer.rs` provokes one with a one-slot cache and checks the reason;
//! * **a clock read**: an ordered log stamps each update; Ordo's per-core clocks (003)
//!   read no shared memory, but a logical clock is one shared counter that every update
//!   writes (a clock reports its reads to the tracer under a `Clock.` label);
//! * **a shared statistic**, if a structure updates a shared counter on its update path
//!   (named by the counter's label).
//!
//! Mutex baselines conflict on their lock word (and the value beside it) in every case.
//!
//! # Refcache and the sloppy counter
//!
//! Refcache (002 §8.1) keeps per-core *delta caches*; `inc` and `dec` add to the calling
//! core's entry for the object and touch nothing shared. What reconciles is the *review*
//! (`collect`: flush every core's cache to the objects' words, advance the epoch, examine
//! the review queues), which takes every core's state (`Slot`), the review lock and the
//! epoch barrier, and conflicts with everything, as 002 says it does ("its implementation
//! conflicts on a small number of cache lines even when it does commute"). The other
//! reasons, each named when it happens:
//!
//! * **revival** (002 §8.1.2): a `tryget` of an object whose count a review has seen at
//!   zero (*dying*) clears the dying bit in the object's word (`Header.state`) with a
//!   compare-and-swap, which another `tryget` reads. The steady state has no dying object
//!   (nothing is flushed); the quiescent state, after a review, has one when the set-up
//!   dropped every handle, so these cases are listed as conflicting only once quiescent
//!   ([`ImplPair::quiescent_exceptions`]);
//! * **delta-cache collision** (002 §8.1.4: "except when collisions in the reference delta
//!   cache cause evictions"): a direct-mapped entry held by another object is evicted,
//!   which adds its delta to that object's word. Each object here has a domain of its own;
//!   `tests/refcount.rs` provokes one with a one-entry cache;
//! * **first touch of a per-thread domain**: a thread's first operation claims a core
//!   index (`Pool.free`) and registers the core with the epoch barrier (cold columns only).
//!
//! The sloppy counter (004 §4.3) takes a reference from the calling core's spares and
//! releases one into them; a core without a spare takes it from the central count
//! (`Sloppy.central`), and spares above the threshold go back to it. Its steady state has
//! a spare on each test core; its read (`value`) takes every core's spares.
//!
//! The texts' other baselines: the name-cache entry under a ticket spinlock (every
//! operation but `generation` takes it, and the generation sits on its line), the
//! lock-free entry with generation and count in one word (a successful lookup's
//! compare-and-swap writes it; two stale lookups only read it), and the per-core open-file
//! lists (a `close` of a file opened on another core searches the other cores' lists).
//!
//! # What is not counted
//!
//! * **Pairs that do not commute.** The rule promises nothing for them, and no
//!   implementation can be conflict-free for all of them: two `enqueue`s of different
//!   events (the queue's order is observable by `dequeue`), two `touch`es of different
//!   keys (the LRU order is observable by `evict`), an `add` and a `remove` of the same
//!   item. Only the commutative cases of a pair are traced.
//! * **Cases outside an implementation's contract** (see `crate::impls`, "Contracts"): the
//!   absorbing OpLog variants require the identity rule, so commutative cases such as
//!   `add(x)` / `add(x)` are not run on them; no Refcache handle is cloned or dropped
//!   without one held, no name-cache reference released without one taken. They are
//!   counted per pair ([`ImplPair::outside_tests`]) and listed, and the implementations
//!   that admit them run them.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::tracer::Touch;

/// What the analyzer found about one pair, independent of implementations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairReport {
    /// A's kind (`add`).
    pub op_a: String,
    /// B's kind.
    pub op_b: String,
    /// `add(x) / remove(y)`.
    pub title: String,
    /// Both are blind updates.
    pub update_pair: bool,
    /// Cases enumerated.
    pub cases: usize,
    /// Cases that commute.
    pub commutative: usize,
    /// Commutative cases without a set-up sequence (not traced).
    pub untraceable: usize,
    /// When the pair commutes, as text (`iff x ≠ y`).
    pub condition: String,
    /// Each class of cases: its facts, how many commute, how many do not.
    pub classes: Vec<(String, usize, usize)>,
    /// The generated tests, as text.
    pub tests: Vec<String>,
}

/// A group of commutative cases that conflicted the same way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exception {
    /// Number of cases.
    pub cases: usize,
    /// The conflicting lines: per line, A's and B's accesses.
    pub conflicts: String,
    /// Why (from the fields involved).
    pub reason: String,
    /// One of the tests, as text.
    pub example: String,
}

/// One implementation's results for one pair (same order as [`StructureReport::pairs`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImplPair {
    /// Commutative cases traced: those with a set-up ([`PairReport::untraceable`] have
    /// none) that the implementation's contract admits.
    pub traced: usize,
    /// The tests (indices into [`PairReport::tests`]) that the implementation's contract
    /// does not admit (not run).
    pub outside_tests: Vec<usize>,
    /// Of those, conflict-free in the steady state.
    pub conflict_free: usize,
    /// Of those, conflict-free when the object was cold on both test cores.
    pub cold_conflict_free: usize,
    /// Of those, conflict-free when the set-up's updates had been read (quiescent).
    pub quiescent_conflict_free: usize,
    /// Steady-state conflicts, grouped.
    pub exceptions: Vec<Exception>,
    /// Conflicts of the cases that are conflict-free in the steady state but not once
    /// quiescent (what the quiescing read or review leaves for the test to pay), grouped.
    pub quiescent_exceptions: Vec<Exception>,
    /// Every conflicting test (index into [`PairReport::tests`]) with each line one
    /// operation wrote and the other touched (`A first, line 0x…: A {…} / B {…}`).
    pub lines: Vec<(usize, Vec<String>)>,
}

/// One implementation's results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImplReport {
    /// Its id (`oplog`, `mutex`).
    pub id: String,
    /// What it is.
    pub about: String,
    /// What its contract requires, if it has one.
    pub contract: Option<String>,
    /// Per pair.
    pub pairs: Vec<ImplPair>,
}

/// Everything about one structure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructureReport {
    /// The structure's name (`set`).
    pub structure: String,
    /// Its model's name.
    pub model: String,
    /// States searched.
    pub states: usize,
    /// The depth bound.
    pub depth: usize,
    /// Per pair of operation kinds.
    pub pairs: Vec<PairReport>,
    /// Per implementation under test.
    pub impls: Vec<ImplReport>,
}

/// Totals over a set of pairs for one implementation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Commutative cases traced.
    pub commutative: usize,
    /// Commutative cases outside the implementation's contract (not traced).
    pub outside_contract: usize,
    /// Conflict-free among them (steady state).
    pub conflict_free: usize,
    /// Conflict-free among them (cold).
    pub cold_conflict_free: usize,
    /// Conflict-free among them (quiescent).
    pub quiescent_conflict_free: usize,
}

impl Totals {
    /// Conflict-free share in percent (100 when there is nothing to count).
    pub fn percent(&self) -> f64 {
        if self.commutative == 0 { 100.0 } else { 100.0 * self.conflict_free as f64 / self.commutative as f64 }
    }
}

impl ImplPair {
    /// Commutative cases with a set-up that the implementation's contract does not admit.
    pub fn outside_contract(&self) -> usize {
        self.outside_tests.len()
    }
}

impl StructureReport {
    /// Totals of implementation `i` over update pairs (`updates_only`) or every pair.
    pub fn totals(&self, i: usize, updates_only: bool) -> Totals {
        let mut t = Totals::default();
        for (pair, ip) in self.pairs.iter().zip(&self.impls[i].pairs) {
            if updates_only && !pair.update_pair {
                continue;
            }
            t.commutative += ip.traced;
            t.outside_contract += ip.outside_contract();
            t.conflict_free += ip.conflict_free;
            t.cold_conflict_free += ip.cold_conflict_free;
            t.quiescent_conflict_free += ip.quiescent_conflict_free;
        }
        t
    }

    /// One JSON object per (implementation, pair). `commutative_cases` is the analyzer's
    /// count; `conflict_free_cases` counts among the commutative cases that were traced:
    /// all but `untraceable_cases` (states the analyzer generated rather than reached by
    /// operations; none for the covered structures) and `outside_contract_cases` (cases
    /// this implementation's contract does not admit).
    pub fn json_lines(&self) -> Vec<Value> {
        let mut lines = Vec::new();
        for imp in &self.impls {
            for (pair, ip) in self.pairs.iter().zip(&imp.pairs) {
                let listed = |list: &[Exception]| -> Vec<Value> {
                    list.iter()
                        .map(|e| json!({"cases": e.cases, "reason": e.reason, "conflicts": e.conflicts, "example": e.example}))
                        .collect()
                };
                lines.push(json!({
                    "structure": self.structure,
                    "impl": imp.id,
                    "op_a": pair.op_a,
                    "op_b": pair.op_b,
                    "pair": pair.title,
                    "update_pair": pair.update_pair,
                    "cases": pair.cases,
                    "commutative_cases": pair.commutative,
                    "untraceable_cases": pair.untraceable,
                    "outside_contract_cases": ip.outside_contract(),
                    "conflict_free_cases": ip.conflict_free,
                    "cold_conflict_free_cases": ip.cold_conflict_free,
                    "quiescent_conflict_free_cases": ip.quiescent_conflict_free,
                    "condition": pair.condition,
                    "exceptions": listed(&ip.exceptions),
                    "quiescent_exceptions": listed(&ip.quiescent_exceptions),
                }));
            }
        }
        lines
    }

    /// The text report (see the crate docs for an example). With `classes`, each pair's
    /// classes follow its condition; with `tests`, every generated test.
    pub fn render(&self, classes: bool, tests: bool) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "== {}: model `{}`, {} states within {} operations",
            self.structure, self.model, self.states, self.depth
        );
        let mut rows = vec![{
            let mut h = vec!["pair".to_owned(), "commutes".to_owned(), "cases".into(), "commutative".into()];
            h.extend(self.impls.iter().map(|i| i.id.clone()));
            h
        }];
        for (p, pair) in self.pairs.iter().enumerate() {
            let mut row = vec![pair.title.clone(), pair.condition.clone(), pair.cases.to_string()];
            row.push(pair.commutative.to_string());
            row.extend(self.impls.iter().map(|i| {
                let ip = &i.pairs[p];
                let steady = if ip.outside_contract() == 0 {
                    ip.conflict_free.to_string()
                } else {
                    format!("{}/{}", ip.conflict_free, ip.traced)
                };
                format!("{steady} [{}] {{{}}}", ip.cold_conflict_free, ip.quiescent_conflict_free)
            }));
            rows.push(row);
        }
        for (label, updates_only) in [("update pairs", true), ("all pairs", false)] {
            let mut row = vec![label.to_owned(), String::new(), String::new()];
            let commutative: usize =
                self.pairs.iter().filter(|p| p.update_pair || !updates_only).map(|p| p.commutative).sum();
            row.push(commutative.to_string());
            for i in 0..self.impls.len() {
                let t = self.totals(i, updates_only);
                let steady = if t.outside_contract == 0 {
                    t.conflict_free.to_string()
                } else {
                    format!("{}/{}", t.conflict_free, t.commutative)
                };
                row.push(format!(
                    "{steady} ({:.0}%) [{}] {{{}}}",
                    t.percent(),
                    t.cold_conflict_free,
                    t.quiescent_conflict_free
                ));
            }
            rows.push(row);
        }
        out.push_str(&oplog_table::align(&rows, 2));
        if self.impls.is_empty() {
            out.push_str("(no implementation under test yet: commutativity only)\n");
        } else {
            out.push_str(
                "columns per implementation: commutative cases that are conflict-free in the steady state [and cold: \
                 the object not yet in the test cores' per-core state: log cache, delta cache, spares] {and \
                 quiescent: steady, with the set-up's updates read, or for Refcache reviewed, before the test}; a/b: \
                 a of the b cases inside the implementation's contract. The tracer sees what the library reaches \
                 through oplog's primitives (atomics, locks, cells) and the heap data behind cells it reports \
                 (queue logs' entries, slot tables), on the default per-CPU path; allocations get whole lines.\n",
            );
        }
        if classes {
            out.push_str("\nclasses (facts: commute / do not):\n");
            for pair in &self.pairs {
                let _ = writeln!(out, "  {}", pair.title);
                for (facts, yes, no) in &pair.classes {
                    let _ = writeln!(out, "    {facts}: {yes} / {no}");
                }
            }
        }
        for imp in &self.impls {
            let _ = writeln!(out, "\n{} ({}): exceptions", imp.id, imp.about);
            let mut any = false;
            for (pair, ip) in self.pairs.iter().zip(&imp.pairs) {
                for e in &ip.exceptions {
                    any = true;
                    let _ = writeln!(out, "  {}: {} of {} cases: {}", pair.title, e.cases, ip.traced, e.reason);
                    let _ = writeln!(out, "      {}", e.conflicts);
                    let _ = writeln!(out, "      e.g. {}", e.example);
                }
            }
            if !any {
                out.push_str("  none: every commutative case is conflict-free\n");
            }
            for (pair, ip) in self.pairs.iter().zip(&imp.pairs) {
                for e in &ip.quiescent_exceptions {
                    let _ = writeln!(
                        out,
                        "  {}: {} of {} cases conflict only once quiescent: {}",
                        pair.title, e.cases, ip.traced, e.reason
                    );
                    let _ = writeln!(out, "      {}", e.conflicts);
                    let _ = writeln!(out, "      e.g. {}", e.example);
                }
            }
            let outside: Vec<String> = self
                .pairs
                .iter()
                .zip(&imp.pairs)
                .filter(|(_, ip)| ip.outside_contract() > 0)
                .map(|(pair, ip)| format!("{} {}", pair.title, ip.outside_contract()))
                .collect();
            if let Some(contract) = &imp.contract {
                let _ = writeln!(out, "  outside its contract ({contract}), not run:");
                let list = if outside.is_empty() { "none".to_owned() } else { outside.join(", ") };
                let _ = writeln!(out, "      {list}");
            }
        }
        if tests {
            for (p, pair) in self.pairs.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "\ntests for {} (each implementation's conflicting lines, or that it is outside its contract):",
                    pair.title
                );
                for (t, test) in pair.tests.iter().enumerate() {
                    let _ = writeln!(out, "  {test}");
                    for imp in &self.impls {
                        if imp.pairs[p].outside_tests.contains(&t) {
                            let _ = writeln!(out, "    {}: outside its contract, not run", imp.id);
                        }
                        for (_, lines) in imp.pairs[p].lines.iter().filter(|(i, _)| *i == t) {
                            for line in lines {
                                let _ = writeln!(out, "    {}: {line}", imp.id);
                            }
                        }
                    }
                }
            }
        }
        out
    }
}

/// The design an implementation's id names (see [`crate::impls`]): what its shared fields
/// mean in a reason, and which operation reconciles its per-core state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Design {
    /// An OpLog version (`oplog…`): a read synchronizes the per-core logs.
    OpLog,
    /// Refcache (`refcache…`): a review (`collect`) flushes the per-core delta caches.
    Refcache,
    /// A sloppy counter (`sloppy…`): a read sums the per-core spares.
    Sloppy,
    /// A baseline (`mutex…`, or a name of the texts: `spinlock`, `cas`, `percore`).
    Baseline,
}

impl Design {
    /// The design of the implementation with id `id`.
    pub fn of(id: &str) -> Self {
        [("oplog", Design::OpLog), ("refcache", Design::Refcache), ("sloppy", Design::Sloppy)]
            .into_iter()
            .find(|(prefix, _)| id.starts_with(prefix))
            .map_or(Design::Baseline, |(_, d)| d)
    }

    /// How a reason names the operation that takes every core's state, before its steps.
    fn reconciles(self) -> &'static str {
        match self {
            Design::OpLog | Design::Baseline => "a read synchronizes: it",
            Design::Refcache => "a review (collect) reconciles the count: it",
            Design::Sloppy => "a read (value) reconciles the count: it",
        }
    }

    /// What every core's state (`Slot`) holds, as the reconciling operation's step.
    fn slots(self) -> &'static str {
        match self {
            Design::OpLog | Design::Baseline => "locks and drains the log slot of every core holding the object (Slot)",
            Design::Refcache => "locks every core's delta cache and review queue (Slot) to flush and examine them",
            Design::Sloppy => "locks every core's spare references (Slot)",
        }
    }
}

/// What a reason is about: the pair, the design, and whether the conflicting fields show
/// that every core's state was taken (a `Slot` field, between operations that only enter
/// their own core's).
#[derive(Clone, Copy, Debug)]
struct Context {
    update_pair: bool,
    design: Design,
    reconciling: bool,
}

/// Why operations conflict on a field with this label, as a phrase (see the module docs).
/// `Some(step)` says the phrase continues the design's reconciling sentence ("a read
/// synchronizes: it …") at that step. Between two updates nothing reconciles unless a
/// collision made an update evict another object.
fn cause(label: &str, cx: Context) -> (Option<u8>, String) {
    let oplog_collision =
        |l: &str| l.starts_with("Slot.") || l.starts_with("Backlogs.") || l == "OpLog.state" || l.ends_with(".entries");
    match label {
        "OpLog.word" if cx.update_pair => (
            None,
            "an update installed the object in its core's log cache, setting the core's bit in OpLog.word (first \
             touch, or after a log-cache collision evicted it)"
                .into(),
        ),
        l if cx.update_pair && cx.design == Design::OpLog && oplog_collision(l) => (
            None,
            "a log-cache collision: an update found another object in its core's slot, evicted its log and, after \
             releasing the slot, appended it to that object's backlog (Backlogs.map; or applied it alone: its OpLog.word \
             and OpLog.state)"
                .into(),
        ),
        "OpLog.word" => (Some(0), "takes the object lock (OpLog.word)".into()),
        "Refcache.review_lock" => (Some(0), "takes the domain's review lock (Refcache.review_lock)".into()),
        l if l.starts_with("Slot.") => (Some(1), cx.design.slots().into()),
        "Log.entries" | "Batch.entries" => (
            Some(1),
            "reads the logged entries from their heap buffers into a batch (Log.entries, Batch.entries)".into(),
        ),
        "OpLog.state" => (Some(2), "applies the logs to the one shared instance (OpLog.state)".into()),
        "Epochs.current" | "Epochs.barrier" => (Some(2), "ends the epoch in the global epoch barrier (Epochs)".into()),
        "Header.state" if cx.reconciling => {
            (Some(3), "flushes the deltas to the object's word and examines it (Header.state)".into())
        }
        "Refcache.in_review" | "Refcache.freed" => {
            (Some(4), "counts the objects it examines and frees (Refcache.in_review, Refcache.freed)".into())
        }
        "Header.state" if cx.update_pair => (
            None,
            "a delta-cache collision: an update found another object in its core's cache entry and evicted that \
             object's delta to its word (Header.state; 002 §8.1.4)"
                .into(),
        ),
        "Header.state" => (
            None,
            "tryget revived a dying object: its compare-and-swap clears the dying bit in the object's word \
             (Header.state; 002 §8.1.2), which the other operation reads or writes"
                .into(),
        ),
        "Pool.free" | "PerCore.threads_in_use" => (
            None,
            format!(
                "the per-thread domain's index pool ({label}): taking every core at once holds it, and a thread's \
                 first use claims an index from it"
            ),
        ),
        l if l.starts_with("Backlogs.") => {
            (None, "a log-cache collision moved a log to the object's backlog (Backlogs)".into())
        }
        "Domain.threads" => (None, "a thread registered with a per-thread domain (Domain.threads)".into()),
        "PerCore.cpus" | "PerCore.threads" | "PerCore.rseq_table" => (
            None,
            format!(
                "a slot table ({label}), only ever read, shares its cache line with heap data the other operation \
                 writes (where the allocator placed them)"
            ),
        ),
        l if l.starts_with("Clock.") => (
            None,
            format!(
                "a clock read: every ordered update reads one shared clock ({l}); Ordo's per-core clocks share nothing (003)"
            ),
        ),
        "Sloppy.central" => (
            None,
            "the central count (Sloppy.central): a core without a spare reference takes one from it, and spares \
             above the threshold go back to it (004 §4.3)"
                .into(),
        ),
        "SpinlockEntry.refs" => {
            (None, "every operation but generation() takes the entry's ticket spinlock (SpinlockEntry.refs)".into())
        }
        "SpinlockEntry.generation" => {
            (None, "the generation is on the spinlock's line (SpinlockEntry.generation)".into())
        }
        "CasEntry.word" => (
            None,
            "generation and count share one word (CasEntry.word): a successful lookup's compare-and-swap, a release \
             and an invalidate write it, every operation reads it (004 §4.4)"
                .into(),
        ),
        "PerCoreOpenFiles.list" => (
            None,
            "per-core lists (PerCoreOpenFiles.list; 004 §4.5): a close of a file opened on another core searches \
             and locks the other cores' lists, and list() locks them all"
                .into(),
        ),
        l if l.starts_with("Mutex") => (None, format!("every operation takes the structure's one lock ({l})")),
        l => (None, format!("shared field `{l}`")),
    }
}

/// Why operations of an implementation of `design` conflict on fields with these labels:
/// `a read synchronizes: it takes the object lock (OpLog.word), …` or `every operation
/// takes the structure's one lock (…)`.
pub fn reason(labels: &[&str], update_pair: bool, design: Design) -> String {
    let cx = Context { update_pair, design, reconciling: labels.iter().any(|l| l.starts_with("Slot.")) };
    let (mut steps, mut other): (Vec<(u8, String)>, Vec<String>) = (Vec::new(), Vec::new());
    for l in labels {
        match cause(l, cx) {
            (Some(step), phrase) if !steps.iter().any(|(_, p)| *p == phrase) => steps.push((step, phrase)),
            (None, phrase) if !other.contains(&phrase) => other.push(phrase),
            _ => {}
        }
    }
    if !steps.is_empty() {
        steps.sort();
        let steps: Vec<String> = steps.into_iter().map(|(_, p)| p).collect();
        other.insert(0, format!("{} {}", design.reconciles(), steps.join(", ")));
    }
    other.join("; ")
}

/// A commutative case that was not conflict-free.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflicted {
    /// Its conflicting lines: A's and B's accesses to each.
    pub lines: Vec<(Vec<Touch>, Vec<Touch>)>,
    /// Its test, as text.
    pub test: String,
}

/// Groups the conflicting cases of one pair into exceptions with reasons: cases whose
/// conflicts involve the same fields, accessed the same ways, are one exception (which
/// fields share a line varies with where the allocator put the object).
pub fn exceptions(cases: &[Conflicted], update_pair: bool, design: Design) -> Vec<Exception> {
    type Kinds = std::collections::BTreeSet<&'static str>;
    let mut groups: BTreeMap<String, (usize, Vec<&'static str>, String)> = BTreeMap::new();
    for Conflicted { lines, test: example } in cases {
        let mut fields: BTreeMap<&'static str, (Kinds, Kinds)> = BTreeMap::new();
        for (a, b) in lines {
            for t in a {
                fields.entry(t.label).or_default().0.insert(t.kind.name());
            }
            for t in b {
                fields.entry(t.label).or_default().1.insert(t.kind.name());
            }
        }
        let show =
            |k: &Kinds| if k.is_empty() { "-".to_owned() } else { k.iter().copied().collect::<Vec<_>>().join(" ") };
        let key = fields
            .iter()
            .map(|(label, (a, b))| format!("{label} (A {}; B {})", show(a), show(b)))
            .collect::<Vec<_>>()
            .join(", ");
        let entry = groups.entry(key).or_insert_with(|| (0, fields.keys().copied().collect(), example.clone()));
        entry.0 += 1;
    }
    let mut out: Vec<Exception> = groups
        .into_iter()
        .map(|(conflicts, (cases, labels, example))| Exception {
            cases,
            conflicts,
            reason: reason(&labels, update_pair, design),
            example,
        })
        .collect();
    out.sort_by(|a, b| b.cases.cmp(&a.cases).then_with(|| a.conflicts.cmp(&b.conflicts)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use oplog_percore::primitive::trace::AccessKind;

    #[test]
    fn cases_that_conflict_on_the_same_fields_are_one_exception_with_a_reason() {
        let t = |label, kind| Touch { label, kind };
        let word = t("OpLog.word", AccessKind::Rmw);
        let state = t("OpLog.state", AccessKind::CellWrite);
        let slot = t("Slot.lock", AccessKind::Rmw);
        let case = |lines, test: &str| Conflicted { lines, test: test.to_owned() };
        let cases = vec![
            // The same fields on one line or on two: one exception.
            case(vec![(vec![word, state], vec![word, state])], "t1"),
            case(vec![(vec![word], vec![word]), (vec![state], vec![state])], "t2"),
            case(vec![(vec![slot], vec![slot])], "t3"),
        ];
        let e = exceptions(&cases, false, Design::OpLog);
        assert_eq!(e.len(), 2);
        assert_eq!((e[0].cases, e[0].example.as_str()), (2, "t1"));
        assert_eq!(e[0].conflicts, "OpLog.state (A write; B write), OpLog.word (A rmw; B rmw)");
        assert_eq!(
            e[0].reason,
            "a read synchronizes: it takes the object lock (OpLog.word), applies the logs to the one shared instance \
             (OpLog.state)"
        );
        assert!(e[1].reason.contains("locks and drains"), "{}", e[1].reason);
        // Between two updates, the object word means an installation, and a slot, a backlog
        // or an instance another object's synchronize after a log-cache collision.
        assert!(exceptions(&cases[..1], true, Design::OpLog)[0].reason.contains("first touch"));
        let collision = reason(&["OpLog.word", "Backlogs.map", "Slot.lock"], true, Design::OpLog);
        assert!(collision.contains("first touch") && collision.contains("a log-cache collision"), "{collision}");
        assert!(!collision.contains("a read synchronizes"), "{collision}");
        assert_eq!(
            reason(&["Frob.count", "MutexX"], false, Design::Baseline),
            "shared field `Frob.count`; every operation takes the structure's one lock (MutexX)"
        );
    }

    #[test]
    fn reasons_follow_the_design_that_owns_the_fields() {
        assert_eq!(Design::of("oplog-basic"), Design::OpLog);
        assert_eq!(Design::of("refcache-perthread"), Design::Refcache);
        assert_eq!(Design::of("sloppy"), Design::Sloppy);
        assert_eq!((Design::of("mutex"), Design::of("cas")), (Design::Baseline, Design::Baseline));
        // Every core's slot, taken by a review of Refcache, a read of the sloppy counter.
        let review =
            reason(&["Refcache.review_lock", "Slot.lock", "Header.state", "Epochs.current"], false, Design::Refcache);
        assert_eq!(
            review,
            "a review (collect) reconciles the count: it takes the domain's review lock (Refcache.review_lock), locks \
             every core's delta cache and review queue (Slot) to flush and examine them, ends the epoch in the global \
             epoch barrier (Epochs), flushes the deltas to the object's word and examines it (Header.state)"
        );
        assert!(reason(&["Slot.lock"], false, Design::Sloppy).starts_with("a read (value) reconciles the count"));
        // The object's word without a review: a revival (tryget), or between two updates a
        // delta-cache eviction.
        assert!(reason(&["Header.state"], false, Design::Refcache).starts_with("tryget revived a dying object"));
        assert!(reason(&["Header.state"], true, Design::Refcache).starts_with("a delta-cache collision"));
        assert!(reason(&["Sloppy.central"], true, Design::Sloppy).contains("without a spare"));
        // Heap lines: a read drains the logs' entries; between updates only a collision
        // moves them; a read-only slot table conflicts only through its line's neighbours.
        assert_eq!(
            reason(&["OpLog.word", "Slot.lock", "Log.entries", "Batch.entries", "OpLog.state"], false, Design::OpLog),
            "a read synchronizes: it takes the object lock (OpLog.word), locks and drains the log slot of every core \
             holding the object (Slot), reads the logged entries from their heap buffers into a batch (Log.entries, \
             Batch.entries), applies the logs to the one shared instance (OpLog.state)"
        );
        assert!(reason(&["Log.entries"], true, Design::OpLog).starts_with("a log-cache collision"));
        assert!(reason(&["PerCore.rseq_table"], true, Design::OpLog).contains("only ever read"));
    }
}

//! `txn`: transactions per second of the `ordo-txn` store, Silo-style OCC and Hekaton-style
//! MVCC, each on a logical clock and on Ordo (003 §4.2, §6.5: Figures 13 and 14).
//!
//! Implementations (ids stable): `occ-logical` and `mvcc-logical` (`Db<Occ | Mvcc,
//! LogicalClock>`: every start and commit timestamp from one shared counter, the original
//! algorithms), `occ-ordo` and `mvcc-ordo` (`Db<_, Ordo>` on the process-wide calibrated
//! clock: the same code, timestamps from the core's own clock, aborts when two stamps fall
//! within the boundary). The workloads (the x axis is the workload's number):
//!
//! 1. `read-only`: in the spirit of 003 Figure 13 (YCSB, 100 % reads): read-only
//!    transactions of two reads each, keys uniform over a table of 2^18 records (2^14 with
//!    `--quick`). Nothing conflicts: what is measured is what a transaction costs, its
//!    start timestamp included.
//! 2. `tpcc-mix`: a contended read-write mix *in the spirit of* TPC-C with few warehouses
//!    (003 Figure 14: NewOrder 50 %, Payment 50 %), not TPC-C itself: one warehouse, 10
//!    districts, 300 customers per district, 10,000 items and their stock, orders and
//!    order lines in a ring of 128 per district, every value one `u64` in one table.
//!    NewOrder reads the warehouse and district taxes and the customer's discount, takes
//!    and increments the district's next order id, and for 5 to 15 items reads the price,
//!    reads and updates the stock, and writes an order line, then the order; 1 % roll back
//!    (an unknown item, [`Abort::User`]), as TPC-C specifies. Payment adds an amount to
//!    the warehouse's, the district's and the customer's year-to-date totals. Every
//!    Payment conflicts on the warehouse record, every NewOrder of a district on its
//!    next-order id. No remote warehouses, no by-name customer lookup, no OrderStatus,
//!    Delivery or StockLevel.
//!
//! One operation is one transaction (committed or rolled back by its closure). Each
//! repetition of the mix ends with a check against what the threads did: the warehouse
//! total equals the districts' sum, the customers' sum and every committed Payment's
//! amount; the districts' order ids count the committed NewOrders; the stock counts their
//! quantities. A lost update fails the run.
//!
//! **Fields.** Every record carries `abort_rate` (attempts rolled back by a conflict per
//! attempt), `timestamps_per_txn` (clock timestamps per transaction, aborted attempts
//! included), and the cost of one call of each clock primitive at the record's thread
//! count ([`super::timestamps::ClockCost`], measured beside it with every thread calling it in a loop):
//! `logical_now_ns`, `logical_new_time_ns`, `ordo_now_ns` and `ordo_new_time_ns`. On the
//! logical clock every timestamp of OCC and MVCC writes the counter (each start and MVCC
//! commit a `new_time`, a CAS increment; OCC's commit a `fetch_add`), so
//! `logical_new_time_ns` is what one costs; on Ordo a start or an OCC commit is one clock
//! read (`ordo_now_ns`), and an MVCC commit waits out the window after its start (at most
//! `ordo_new_time_ns`).
//!
//! **Annexes.** `ratios`: per workload and thread count, Ordo/logical per scheme, 2T/1T of
//! every id, and the abort rates with their Ordo/logical ratio (the issue asks them within
//! 2x on the contended mix). `crossover`: the core count at which Ordo/logical reaches 1
//! per workload and scheme, from the linear model of the counter's cache line
//! ([`Crossover`]) with one line transfer measured by the `contention` experiment
//! ([`LineTransfer`]); this 2-core machine shows only the first step.
//!
//! **Shared-line writes for timestamps.** The Ordo ids take every timestamp with
//! `Ordo::get_time` / `new_time`, which read the core's clock (`rdtscp`) and write no
//! memory; `ordo_now_ns` stays flat from 1 to 2 threads while `logical_new_time_ns` grows.

use std::io;
use std::sync::Mutex;

use ordo::{Clock, LogicalClock, Ordo};
use ordo_txn::{Abort, Db, Mvcc, Occ, Scheme, Stats};
use serde_json::{Value, json};

use super::timestamps::{Crossover, LineTransfer, TWO_CORES_NOTE, clock_cost, ratio};
use crate::experiments::{Experiment, Metric, Ratios, XAxis, global_clock};
use crate::harness::{Run, Settings, Stop, Throughput};
use crate::output::verdict::{Against, Roles, Target};
use crate::output::{Annex, Record, Sink, round};

/// Transactions between two checks of the stop flag.
const BATCH: u64 = 16;

/// The implementations, in table order.
pub const IDS: [&str; 4] = ["occ-logical", "occ-ordo", "mvcc-logical", "mvcc-ordo"];

/// The logical-clock ids: the baselines.
const BASELINES: [&str; 2] = ["occ-logical", "mvcc-logical"];

/// The workloads (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// Two-read read-only transactions over a large table (003 Figure 13).
    ReadOnly,
    /// NewOrder / Payment on one warehouse, in the spirit of TPC-C (003 Figure 14).
    Mix,
}

impl Workload {
    /// Every workload, in order.
    pub const ALL: [Workload; 2] = [Workload::ReadOnly, Workload::Mix];

    /// The x value of its records.
    pub fn code(self) -> u64 {
        match self {
            Workload::ReadOnly => 1,
            Workload::Mix => 2,
        }
    }

    /// Its name in records and annexes.
    pub fn name(self) -> &'static str {
        match self {
            Workload::ReadOnly => "read-only",
            Workload::Mix => "tpcc-mix",
        }
    }
}

/// The mix's schema: every table a range of keys.
mod schema {
    /// Districts of the one warehouse.
    pub const DISTRICTS: u64 = 10;
    /// Customers per district.
    pub const CUSTOMERS: u64 = 300;
    /// Items (and stock records).
    pub const ITEMS: u64 = 10_000;
    /// Orders kept per district (a ring).
    pub const ORDER_SLOTS: u64 = 128;
    /// Most order lines of an order.
    pub const MAX_LINES: u64 = 15;

    /// The warehouse's year-to-date total.
    pub const W_YTD: u64 = 0;
    /// The warehouse's tax rate.
    pub const W_TAX: u64 = 1;
    const DISTRICT: u64 = 2;
    const CUSTOMER: u64 = DISTRICT + 3 * DISTRICTS;
    const ITEM: u64 = CUSTOMER + 2 * DISTRICTS * CUSTOMERS;
    const STOCK: u64 = ITEM + ITEMS;
    const ORDER: u64 = STOCK + ITEMS;
    const LINE: u64 = ORDER + DISTRICTS * ORDER_SLOTS;
    /// Keys of the whole schema.
    pub const KEYS: u64 = LINE + DISTRICTS * ORDER_SLOTS * MAX_LINES;

    pub fn d_ytd(d: u64) -> u64 {
        DISTRICT + 3 * d
    }
    pub fn d_next_order(d: u64) -> u64 {
        DISTRICT + 3 * d + 1
    }
    pub fn d_tax(d: u64) -> u64 {
        DISTRICT + 3 * d + 2
    }
    pub fn c_paid(d: u64, c: u64) -> u64 {
        CUSTOMER + 2 * (d * CUSTOMERS + c)
    }
    pub fn c_discount(d: u64, c: u64) -> u64 {
        CUSTOMER + 2 * (d * CUSTOMERS + c) + 1
    }
    pub fn i_price(i: u64) -> u64 {
        ITEM + i
    }
    pub fn stock_sold(i: u64) -> u64 {
        STOCK + i
    }
    pub fn order(d: u64, o: u64) -> u64 {
        ORDER + d * ORDER_SLOTS + o % ORDER_SLOTS
    }
    pub fn line(d: u64, o: u64, l: u64) -> u64 {
        LINE + (d * ORDER_SLOTS + o % ORDER_SLOTS) * MAX_LINES + l
    }
}

/// A NewOrder for an unknown item: the transaction rolls back (TPC-C's 1 %).
#[derive(Debug)]
struct UnknownItem;

/// What one thread's committed transactions did to the mix's totals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Sum of committed Payments' amounts.
    pub paid: u64,
    /// Committed NewOrders.
    pub orders: u64,
    /// Sum of committed NewOrders' quantities.
    pub quantity: u64,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.paid += other.paid;
        self.orders += other.orders;
        self.quantity += other.quantity;
    }
}

/// The mix's totals as read back from a store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// The warehouse's year-to-date total.
    pub warehouse: u64,
    /// Sum of the districts' totals.
    pub districts: u64,
    /// Sum of what the customers paid.
    pub customers: u64,
    /// Sum of the districts' next order ids (orders placed).
    pub orders: u64,
    /// Sum of the stock sold.
    pub stock: u64,
}

/// Panics unless `totals` are what the committed transactions of `tally` produce.
pub fn verify(totals: &Totals, tally: &Tally) {
    assert_eq!(totals.warehouse, tally.paid, "the warehouse total lost or invented a payment");
    assert_eq!(totals.districts, tally.paid, "the districts' totals lost or invented a payment");
    assert_eq!(totals.customers, tally.paid, "the customers' totals lost or invented a payment");
    assert_eq!(totals.orders, tally.orders, "the districts' order ids lost or invented an order");
    assert_eq!(totals.stock, tally.quantity, "the stock lost or invented a sale");
}

/// A store under test and each thread's tally and session counts.
struct Shared<S: Scheme, C: Clock> {
    db: Db<S, C>,
    results: Vec<Mutex<(Tally, Stats)>>,
}

/// The xorshift64 step.
fn next(rng: &mut u64) -> u64 {
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    *rng
}

/// One NewOrder; returns the tally of its commit (a rollback returns none).
fn new_order<S: Scheme, C: Clock>(session: &mut ordo_txn::Session<'_, S, C>, rng: &mut u64) -> Option<Tally> {
    use schema::*;
    let d = next(rng) % DISTRICTS;
    let c = next(rng) % CUSTOMERS;
    let lines = 5 + next(rng) % (MAX_LINES - 4);
    let mut items = [(0u64, 0u64); MAX_LINES as usize];
    for item in items.iter_mut().take(lines as usize) {
        *item = (next(rng) % ITEMS, 1 + next(rng) % 10);
    }
    let unknown = next(rng).is_multiple_of(100);
    let result = session.try_transaction(|tx| {
        let tax = tx.get(W_TAX)? + tx.get(d_tax(d))?;
        let o = tx.get(d_next_order(d))?;
        tx.put(d_next_order(d), o + 1)?;
        let discount = tx.get(c_discount(d, c))?;
        let mut quantity = 0;
        for (l, &(i, q)) in items.iter().take(lines as usize).enumerate() {
            let price = tx.get(i_price(i))?;
            let sold = tx.get(stock_sold(i))?;
            tx.put(stock_sold(i), sold + q)?;
            tx.put(line(d, o, l as u64), i << 32 | q << 16 | (price + tax + discount) & 0xffff)?;
            quantity += q;
        }
        tx.put(order(d, o), c << 8 | lines)?;
        if unknown {
            return Err(Abort::User(UnknownItem));
        }
        Ok(quantity)
    });
    result.ok().map(|quantity| Tally { paid: 0, orders: 1, quantity })
}

/// One Payment; returns its tally.
fn payment<S: Scheme, C: Clock>(session: &mut ordo_txn::Session<'_, S, C>, rng: &mut u64) -> Tally {
    use schema::*;
    let d = next(rng) % DISTRICTS;
    let c = next(rng) % CUSTOMERS;
    let amount = 1 + next(rng) % 5_000;
    session.transaction(|tx| {
        let w = tx.get(W_YTD)?;
        tx.put(W_YTD, w + amount)?;
        let dy = tx.get(d_ytd(d))?;
        tx.put(d_ytd(d), dy + amount)?;
        let paid = tx.get(c_paid(d, c))?;
        tx.put(c_paid(d, c), paid + amount)
    });
    Tally { paid: amount, orders: 0, quantity: 0 }
}

/// The mix's totals, read back in one read-only transaction.
fn totals<S: Scheme, C: Clock>(db: &Db<S, C>) -> Totals {
    use schema::*;
    db.read(|tx| {
        let mut t = Totals { warehouse: tx.get(W_YTD)?, ..Totals::default() };
        for d in 0..DISTRICTS {
            t.districts += tx.get(d_ytd(d))?;
            t.orders += tx.get(d_next_order(d))?;
            for c in 0..CUSTOMERS {
                t.customers += tx.get(c_paid(d, c))?;
            }
        }
        for i in 0..ITEMS {
            t.stock += tx.get(stock_sold(i))?;
        }
        Ok(t)
    })
}

/// The read-only workload's table size.
fn read_only_keys(quick: bool) -> u64 {
    if quick { 1 << 14 } else { 1 << 18 }
}

/// One point: throughput, and the sessions' counts over every repetition.
#[derive(Clone, Debug)]
pub struct Measured {
    /// Transactions per second.
    pub throughput: Throughput,
    /// Every session's counts, summed over threads and repetitions.
    pub stats: Stats,
}

/// Measures scheme `S` on the clock `clock()` makes, running `workload`.
fn measure<S: Scheme, C: Clock>(run: &Run, workload: Workload, quick: bool, clock: impl Fn() -> C) -> Measured {
    let mut stats = Stats::default();
    let keys = match workload {
        Workload::ReadOnly => read_only_keys(quick),
        Workload::Mix => schema::KEYS,
    };
    let throughput = run.throughput_checked(
        || Shared {
            db: Db::<S, C>::new(clock(), keys).expect("a valid table size"),
            results: (0..run.threads).map(|_| Mutex::default()).collect(),
        },
        |shared: &Shared<S, C>, thread, stop: &Stop| {
            let mut session = shared.db.session();
            let mut rng = 0x9e37_79b9_7f4a_7c15 ^ (thread as u64 + 1).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            let mut tally = Tally::default();
            let n = match workload {
                Workload::ReadOnly => {
                    let mut sum = 0u64;
                    let n = stop.run_batched(BATCH, || {
                        let (a, b) = (next(&mut rng) % keys, next(&mut rng) % keys);
                        sum = sum.wrapping_add(session.read(|tx| Ok(tx.get(a)? + tx.get(b)?)));
                    });
                    assert_eq!(sum, 0, "a read-only transaction read a value nobody wrote");
                    n
                }
                Workload::Mix => stop.run_batched(BATCH, || {
                    if next(&mut rng).is_multiple_of(2) {
                        if let Some(t) = new_order(&mut session, &mut rng) {
                            tally.add(&t);
                        }
                    } else {
                        tally.add(&payment(&mut session, &mut rng));
                    }
                }),
            };
            *shared.results[thread].lock().expect("one writer") = (tally, session.stats());
            n
        },
        |shared, _| {
            let mut tally = Tally::default();
            for slot in &shared.results {
                let (t, s) = *slot.lock().expect("workers are done");
                tally.add(&t);
                stats = stats.merged(&s);
            }
            if workload == Workload::Mix {
                verify(&totals(&shared.db), &tally);
            }
        },
    );
    Measured { throughput, stats }
}

/// Measures implementation `id`.
fn measure_id(id: &str, run: &Run, workload: Workload, quick: bool, ordo: &Ordo) -> Measured {
    match id {
        "occ-logical" => measure::<Occ, _>(run, workload, quick, LogicalClock::new),
        "occ-ordo" => measure::<Occ, _>(run, workload, quick, || ordo.clone()),
        "mvcc-logical" => measure::<Mvcc, _>(run, workload, quick, LogicalClock::new),
        "mvcc-ordo" => measure::<Mvcc, _>(run, workload, quick, || ordo.clone()),
        other => unreachable!("unknown txn implementation {other}"),
    }
}

/// One measured point, kept for the annexes.
#[derive(Clone, Debug)]
struct Point {
    workload: Workload,
    threads: usize,
    id: &'static str,
    ops_per_sec: f64,
    stats: Stats,
}

impl Point {
    /// Timestamps per transaction (committed or rolled back by its closure).
    fn stamps_per_txn(&self) -> f64 {
        self.stats.timestamps as f64 / (self.stats.commits + self.stats.user_aborts).max(1) as f64
    }
}

/// The `txn` experiment.
#[derive(Clone, Copy, Debug, Default)]
pub struct TxnExperiment;

impl TxnExperiment {
    fn find<'a>(points: &'a [Point], workload: Workload, threads: usize, id: &str) -> Option<&'a Point> {
        points.iter().find(|p| p.workload == workload && p.threads == threads && p.id == id)
    }

    /// The `ratios` annex (see the module docs).
    fn ratios_annex(points: &[Point], threads: &[usize]) -> Annex {
        let mut annex = Annex::new(
            "ratios",
            "Ordo/logical per scheme, scaling over one thread, abort rates (Ordo/logical: the issue asks <= 2x on the mix)",
            &[
                "workload",
                "threads",
                "occ_ordo_vs_logical",
                "mvcc_ordo_vs_logical",
                "occ_logical_vs_1t",
                "occ_ordo_vs_1t",
                "mvcc_logical_vs_1t",
                "mvcc_ordo_vs_1t",
                "occ_abort_logical",
                "occ_abort_ordo",
                "mvcc_abort_logical",
                "mvcc_abort_ordo",
                "occ_abort_ordo_vs_logical",
                "mvcc_abort_ordo_vs_logical",
            ],
        );
        for workload in Workload::ALL {
            for &t in threads {
                let ops = |id| Self::find(points, workload, t, id).map(|p| p.ops_per_sec);
                let one = |id| Self::find(points, workload, 1, id).map(|p| p.ops_per_sec);
                let abort = |id| Self::find(points, workload, t, id).map(|p| p.stats.abort_rate());
                if IDS.iter().all(|id| ops(id).is_none()) {
                    continue;
                }
                let mut row = vec![json!(workload.name()), json!(t)];
                row.push(ratio(ops("occ-ordo"), ops("occ-logical")));
                row.push(ratio(ops("mvcc-ordo"), ops("mvcc-logical")));
                row.extend(IDS.iter().map(|id| if t == 1 { Value::Null } else { ratio(ops(id), one(id)) }));
                row.extend(IDS.iter().map(|id| abort(id).map_or(Value::Null, |a| json!(round(4, a)))));
                row.push(ratio(abort("occ-ordo"), abort("occ-logical")));
                row.push(ratio(abort("mvcc-ordo"), abort("mvcc-logical")));
                annex.row(row);
            }
        }
        annex.note("An abort-rate ratio is empty when the logical version did not abort at all.");
        annex
    }

    /// The `crossover` annex: [`Crossover`] per workload and scheme, from the one-thread
    /// points.
    fn crossover_annex(points: &[Point], transfer_ns: f64, source: &str) -> Annex {
        let mut annex = Annex::new(
            "crossover",
            &format!(
                "predicted cores where Ordo/logical reaches 1: t_L(n) = t_L(1) + k*x*(n-1), t_O(n) = t_O(1); x = {transfer_ns:.1} ns ({source})"
            ),
            &[
                "workload",
                "scheme",
                "logical_ns_per_txn_1t",
                "ordo_ns_per_txn_1t",
                "clock_accesses_per_txn",
                "transfer_ns",
                "predicted_crossover_cores",
                "model_ratio_2t",
                "measured_ratio_2t",
            ],
        );
        for workload in Workload::ALL {
            for (scheme, logical, ordo) in [("occ", "occ-logical", "occ-ordo"), ("mvcc", "mvcc-logical", "mvcc-ordo")] {
                let (Some(l1), Some(o1)) =
                    (Self::find(points, workload, 1, logical), Self::find(points, workload, 1, ordo))
                else {
                    continue;
                };
                let model = Crossover {
                    logical_ns: 1e9 / l1.ops_per_sec,
                    ordo_ns: 1e9 / o1.ops_per_sec,
                    accesses: l1.stamps_per_txn(),
                    transfer_ns,
                };
                let at_2 = |id: &str| Self::find(points, workload, 2, id).map(|p| p.ops_per_sec);
                let measured = ratio(at_2(ordo), at_2(logical));
                annex.row(vec![
                    json!(workload.name()),
                    json!(scheme),
                    json!(round(1, model.logical_ns)),
                    json!(round(1, model.ordo_ns)),
                    json!(round(2, model.accesses)),
                    json!(round(1, transfer_ns)),
                    model.cores().map_or(Value::Null, |n| json!(round(1, n))),
                    json!(round(2, model.ratio(2.0))),
                    measured,
                ]);
            }
        }
        annex.note(format!(
            "{TWO_CORES_NOTE} The model leaves out data conflicts, which on the mix grow with the cores for both clocks."
        ));
        annex
    }
}

impl Experiment for TxnExperiment {
    fn name(&self) -> &'static str {
        "txn"
    }

    fn description(&self) -> &'static str {
        "transactions per second of an in-memory store: Silo-style OCC and Hekaton-style MVCC, each on a logical clock and on Ordo; read-only, and a NewOrder/Payment mix in the spirit of TPC-C (003 §4.2, Figures 13, 14)"
    }

    fn ids(&self) -> Vec<&'static str> {
        IDS.to_vec()
    }

    fn x_axis(&self) -> XAxis {
        XAxis::Param { key: "workload", label: "workload (1 = read-only, 2 = NewOrder/Payment mix)" }
    }

    fn metric(&self) -> Metric {
        Metric::TRANSACTIONS_PER_SEC
    }

    fn log_y(&self) -> bool {
        true
    }

    fn ratios(&self) -> Ratios {
        // Across workloads a ratio column means nothing; the `ratios` annex has them.
        Ratios::NONE
    }

    fn roles(&self) -> Roles {
        // Issue 10: every Ordo version scales on read-only work.
        const TARGETS: &[Target] = &[
            Target { id: "occ-ordo", threads: 2, x: Some((1.0, 1.0)), against: Against::OneThread, min: 1.8 },
            Target { id: "mvcc-ordo", threads: 2, x: Some((1.0, 1.0)), against: Against::OneThread, min: 1.8 },
        ];
        Roles { default: Some("mvcc-ordo"), baselines: &BASELINES, floor: None, targets: TARGETS }
    }

    fn points(&self, settings: &Settings) -> u64 {
        (settings.threads.len() * Workload::ALL.len() * IDS.len()) as u64
    }

    fn run(&self, settings: &Settings, sink: &mut Sink) -> io::Result<()> {
        let ordo = global_clock()?;
        let mut measured = Vec::new();
        for &threads in &settings.threads {
            let run = settings.at(threads);
            let cost = clock_cost(&run, ordo);
            for workload in Workload::ALL {
                for id in IDS {
                    sink.point(id, threads);
                    let m = measure_id(id, &run, workload, settings.quick, ordo);
                    let point = Point { workload, threads, id, ops_per_sec: m.throughput.median, stats: m.stats };
                    let record = Record::new(self.name(), id, &run, &m.throughput)
                        .with("workload", workload.code())
                        .with("workload_name", workload.name())
                        .with("abort_rate", round(4, m.stats.abort_rate()))
                        .with("timestamps_per_txn", round(3, point.stamps_per_txn()));
                    sink.push(cost.fields(record))?;
                    measured.push(point);
                }
            }
        }
        sink.annex(Self::ratios_annex(&measured, &settings.threads))?;
        let transfer = LineTransfer::measure(settings, ordo);
        sink.annex(Self::crossover_annex(&measured, transfer.ns, &transfer.source))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pin::Placement;
    use std::time::Duration;

    #[test]
    fn every_impl_runs_every_workload_and_verifies() {
        let placement = Placement::from_process();
        let run = Run { threads: 2, duration: Duration::from_millis(5), reps: 1, placement: &placement };
        let ordo = Ordo::monotonic();
        for workload in Workload::ALL {
            for id in IDS {
                let m = measure_id(id, &run, workload, true, &ordo);
                assert!(m.throughput.median > 0.0, "{id} on {workload:?}");
                assert!(
                    m.stats.commits > 0 && m.stats.timestamps >= m.stats.commits,
                    "{id} on {workload:?}: {:?}",
                    m.stats
                );
            }
        }
    }

    #[test]
    fn the_schema_keys_are_distinct() {
        use schema::*;
        let mut keys = vec![W_YTD, W_TAX];
        for d in 0..DISTRICTS {
            keys.extend([d_ytd(d), d_next_order(d), d_tax(d)]);
            for c in 0..CUSTOMERS {
                keys.extend([c_paid(d, c), c_discount(d, c)]);
            }
            for o in 0..ORDER_SLOTS {
                keys.push(order(d, o));
                keys.extend((0..MAX_LINES).map(|l| line(d, o, l)));
            }
        }
        keys.extend((0..ITEMS).flat_map(|i| [i_price(i), stock_sold(i)]));
        let n = keys.len();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), n, "two tables share a key");
        assert_eq!(keys.last().copied(), Some(KEYS - 1));
    }

    #[test]
    #[should_panic(expected = "the districts' order ids lost or invented an order")]
    fn a_lost_order_fails_the_run() {
        let tally = Tally { paid: 10, orders: 3, quantity: 7 };
        verify(&Totals { warehouse: 10, districts: 10, customers: 10, orders: 2, stock: 7 }, &tally);
    }

    #[test]
    fn a_correct_run_passes_and_a_lost_payment_does_not() {
        let tally = Tally { paid: 10, orders: 3, quantity: 7 };
        verify(&Totals { warehouse: 10, districts: 10, customers: 10, orders: 3, stock: 7 }, &tally);
        let lost = std::panic::catch_unwind(|| {
            verify(&Totals { warehouse: 9, districts: 10, customers: 10, orders: 3, stock: 7 }, &tally)
        });
        assert!(lost.is_err());
    }

    #[test]
    fn annexes_pair_the_points() {
        let stats = Stats { commits: 100, conflicts: 25, user_aborts: 0, timestamps: 200 };
        let p = |threads, id, ops_per_sec| Point { workload: Workload::Mix, threads, id, ops_per_sec, stats };
        let points = vec![
            p(1, "occ-logical", 1e6),
            p(1, "occ-ordo", 0.8e6),
            p(2, "occ-logical", 1.2e6),
            p(2, "occ-ordo", 1.5e6),
        ];
        let ratios = TxnExperiment::ratios_annex(&points, &[1, 2]);
        assert_eq!(ratios.rows.len(), 2);
        assert_eq!(ratios.rows[1][2], json!(1.25), "occ ordo/logical at 2T");
        assert_eq!(ratios.rows[1][3], Value::Null, "mvcc was not measured");
        assert_eq!(ratios.rows[1][5], json!(1.88), "occ-ordo 2T/1T");
        assert_eq!(ratios.rows[1][12], json!(1.0), "same abort rates");
        let crossover = TxnExperiment::crossover_annex(&points, 50.0, "test");
        assert_eq!(crossover.rows.len(), 1);
        // t_L(1) = 1000 ns, t_O(1) = 1250 ns, k = 2, x = 50: n* = 1 + 250 / 100.
        assert_eq!(crossover.rows[0][6], json!(3.5));
        assert_eq!(crossover.rows[0][8], json!(1.25));
    }
}

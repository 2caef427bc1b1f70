//! Proof that the linearizability suite can fail: a log kind whose merge is deliberately
//! reversed (defined here, as any user's [`LogKind`] would be) must yield a history that no
//! sequential order explains, where the intact [`oplog::Ordered`] kind passes.

mod common;

use std::cmp::Reverse;
use std::collections::BTreeSet;
use std::sync::Arc;

use common::{SetAdapter, SetObject, SetUpdate, random_set_op};
use oplog::{Config, Domain, LogKind, OpLog, Update};
use oplog_lincheck::{Adapter, Config as RunConfig, Rng, RunError, independent, run};
use oplog_model::set::{SetModel, SetOp};

/// [`oplog::Ordered`] with its merge reversed: every synchronize applies what it gathered
/// in *descending* timestamp order.
struct ReversedMerge;

impl LogKind for ReversedMerge {
    type State = BTreeSet<u64>;
    type Op = SetUpdate;
    type Log = Vec<(u64, SetUpdate)>;
    type Batch = Vec<(u64, usize, SetUpdate)>;
    type Direct = ();
    const ORDERED: bool = true;

    fn push(log: &mut Self::Log, op: SetUpdate, stamp: u64) -> usize {
        log.push((stamp, op));
        log.len()
    }

    fn is_empty(log: &Self::Log) -> bool {
        log.is_empty()
    }

    fn gather(batch: &mut Self::Batch, core: usize, log: &mut Self::Log) {
        batch.extend(log.drain(..).map(|(stamp, op)| (stamp, core, op)));
    }

    fn batch_len(batch: &Self::Batch) -> usize {
        batch.len()
    }

    fn apply(state: &mut BTreeSet<u64>, batch: &mut Self::Batch) {
        batch.sort_by_key(|&(stamp, core, _)| Reverse((stamp, core)));
        for (_, _, op) in batch.drain(..) {
            op.exec(state);
        }
    }
}

/// The set of [`SetAdapter`] on the reversed kind.
struct ReversedAdapter(Arc<Domain<ReversedMerge>>);

impl Adapter for ReversedAdapter {
    type Model = SetModel;
    type Object = SetObject<ReversedMerge>;
    fn model(&self) -> SetModel {
        SetModel
    }
    fn name(&self) -> String {
        "set with a reversed merge, per-thread".into()
    }
    fn new_object(&self) -> Self::Object {
        SetObject(OpLog::with_domain(&self.0, BTreeSet::new()))
    }
    fn plans(&self, rng: &mut Rng, threads: usize, ops: usize) -> Vec<Vec<SetOp>> {
        independent(rng, threads, ops, |rng| random_set_op(rng, true))
    }
}

#[test]
fn a_reversed_ordered_merge_is_caught() {
    let histories = if cfg!(miri) { 40 } else { 10_000 };
    // The intact merge passes...
    let intact = SetAdapter::<true>::new(Config::per_thread(), "per-thread", true);
    run(&intact, &RunConfig::new(histories / 10).ops_per_thread(4)).unwrap_or_else(|e| panic!("{e}"));
    // ...and the reversed one is caught.
    let reversed = ReversedAdapter(Domain::new(Config::per_thread()).unwrap());
    match run(&reversed, &RunConfig::new(histories).ops_per_thread(4)) {
        Err(e @ RunError::NotLinearizable { .. }) => {
            let text = e.to_string();
            assert!(text.contains("is not linearizable with respect to model `set`"), "{text}");
            eprintln!("caught, as it must be:\n{text}");
        }
        Err(e) => panic!("expected a linearizability violation, got: {e}"),
        Ok(report) => panic!("the reversed merge went unnoticed: {report}"),
    }
}

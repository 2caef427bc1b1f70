//! Proof that the linearizability suite can fail: with `Ordered`'s merge deliberately
//! reversed (a test-only switch in `oplog`), the checker must find a history that no
//! sequential order explains. The switch is process-wide, so this file holds one test.

mod common;

use common::SetAdapter;
use oplog::Config;
use oplog_lincheck::{Config as RunConfig, RunError, run};

#[test]
fn a_reversed_ordered_merge_is_caught() {
    let adapter = SetAdapter::<true>::new(Config::per_thread(), "per-thread", true);
    let histories = if cfg!(miri) { 40 } else { 10_000 };
    let config = RunConfig::new(histories).ops_per_thread(4);
    // The intact merge passes...
    run(&adapter, &RunConfig::new(histories / 10).ops_per_thread(4)).unwrap_or_else(|e| panic!("{e}"));
    // ...and the reversed one is caught.
    oplog::log::__set_broken_merge_for_tests(true);
    let outcome = run(&adapter, &config);
    oplog::log::__set_broken_merge_for_tests(false);
    match outcome {
        Err(e @ RunError::NotLinearizable { .. }) => {
            let text = e.to_string();
            assert!(text.contains("is not linearizable with respect to model `set`"), "{text}");
            eprintln!("caught, as it must be:\n{text}");
        }
        Err(e) => panic!("expected a linearizability violation, got: {e}"),
        Ok(report) => panic!("the reversed merge went unnoticed: {report}"),
    }
}

//! End-to-end runs of the data-structure experiments: the JSON records carry the stable
//! implementation ids scripts read, and `fork-truncate` its parameter and crossover annex.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use serde_json::Value;

/// Runs `oplog-bench <experiment> --json` briefly and returns its JSON lines.
fn json_lines(experiment: &str, threads: &str) -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_oplog-bench"))
        .args([experiment, "--threads", threads, "--duration-ms", "5", "--reps", "1", "--json"])
        .output()
        .expect("run oplog-bench");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{experiment}: status {:?}\n{stderr}", out.status);
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// The ids of the records (not annex lines), each with the thread counts measured.
fn ids(lines: &[Value]) -> BTreeMap<String, BTreeSet<u64>> {
    let mut ids: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
    for l in lines.iter().filter(|l| l.get("annex").is_none()) {
        assert!(l["ops_per_sec"].as_f64().unwrap() > 0.0, "{l}");
        ids.entry(l["impl"].as_str().unwrap().to_owned()).or_default().insert(l["threads"].as_u64().unwrap());
    }
    ids
}

fn names(ids: &BTreeMap<String, BTreeSet<u64>>) -> Vec<&str> {
    ids.keys().map(String::as_str).collect()
}

#[test]
fn thread_sweeps_report_their_stable_ids() {
    for (experiment, expected) in [
        ("stat", &["cas", "oplog", "spinlock"][..]),
        ("fork", &["lockfree", "mutex", "oplog", "oplog-locked", "oplog-ordered", "oplog-ordered-commit-wait"]),
        ("list", &["lockfree", "mutex", "oplog-basic", "oplog-global-absorb", "oplog-local-absorb"]),
        ("notify", &["mutex", "oplog", "oplog-commit-wait", "oplog-locked", "segqueue"]),
        ("lru", &["mutex", "oplog", "oplog-locked"]),
    ] {
        let lines = json_lines(experiment, "1,2");
        let ids = ids(&lines);
        assert_eq!(names(&ids), expected, "{experiment}");
        assert!(ids.values().all(|t| t.iter().eq([1, 2].iter())), "{experiment}: {ids:?}");
        assert!(lines.iter().all(|l| l["experiment"] == experiment));
        if experiment == "notify" {
            let records = lines.iter().filter(|l| l.get("annex").is_none());
            assert!(records.clone().all(|l| l["consumers"] == 1), "notify records name their consumer");
        }
    }
}

#[test]
fn fork_truncate_sweeps_f_and_reports_the_crossover() {
    let lines = json_lines("fork-truncate", "2");
    let mut seen: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for l in lines.iter().filter(|l| l.get("annex").is_none()) {
        seen.entry(l["impl"].as_str().unwrap()).or_default().push(l["truncate_every"].as_u64().unwrap());
    }
    assert_eq!(
        seen.keys().copied().collect::<Vec<_>>(),
        ["lockfree", "mutex", "oplog", "oplog-locked", "oplog-ordered"]
    );
    assert!(seen.values().all(|fs| *fs == (1..=10).collect::<Vec<_>>()), "{seen:?}");
    let crossover: Vec<&Value> = lines.iter().filter(|l| l["annex"] == "crossover").collect();
    // Each OpLog variant against each baseline.
    assert_eq!(crossover.len(), 3 * 2, "{crossover:?}");
    for row in crossover {
        assert_eq!(row["threads"], 2);
        let wins_from = &row["wins_from"];
        assert!(wins_from.is_null() || (1..=10).contains(&wins_from.as_u64().unwrap()), "{row}");
        assert!(row["oplog_behind_at"].is_array(), "{row}");
    }
}

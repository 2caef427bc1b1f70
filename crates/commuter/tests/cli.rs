//! The `commuter` command end to end, and the property it exists to check: the OpLog
//! structures, Refcache and the sloppy counter are conflict-free for every commutative pair
//! of updates, mutex baselines for none.

use std::collections::HashSet;
use std::process::Command;

use serde_json::Value;

fn commuter(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_commuter")).args(args).output().expect("run commuter")
}

#[test]
fn json_lines_cover_every_implementation_and_pair_then_the_summary_and_heatmaps_are_written() {
    let dir = std::env::temp_dir().join(format!("commuter-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = commuter(&["--structure", "counter", "--structure", "queue", "--json", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let (summary, pairs): (Vec<&Value>, Vec<&Value>) = lines.iter().partition(|v| v["annex"] == "summary");
    // Five counter implementations × six pairs, two queue implementations × three pairs.
    assert_eq!(pairs.len(), 30 + 6);
    let mut seen = HashSet::new();
    for v in &pairs {
        for field in
            ["commutative_cases", "conflict_free_cases", "cold_conflict_free_cases", "cases", "outside_contract_cases"]
        {
            assert!(v[field].is_u64(), "{field} in {v}");
        }
        assert!(v["conflict_free_cases"].as_u64() <= v["commutative_cases"].as_u64());
        assert!(v["exceptions"].is_array() && v["quiescent_exceptions"].is_array());
        seen.insert((v["structure"].to_string(), v["impl"].to_string(), v["op_a"].to_string(), v["op_b"].to_string()));
    }
    assert_eq!(seen.len(), 36, "one line per (structure, impl, pair)");
    let read_read = pairs
        .iter()
        .find(|v| v["structure"] == "counter" && v["impl"] == "oplog" && v["op_a"] == "read" && v["op_b"] == "read")
        .unwrap();
    assert_eq!(read_read["update_pair"], false);
    assert_eq!(read_read["condition"], "always");
    assert!(read_read["exceptions"][0]["reason"].as_str().unwrap().starts_with("a read synchronizes"));
    // One summary row per (structure, impl), then the families with an implementation here
    // (OpLog, sloppy counters, mutex), last.
    assert_eq!(summary.len(), 7 + 3);
    let oplog = summary[7];
    assert_eq!(
        (oplog["structure"].as_str(), oplog["impl"].as_str(), oplog["impls"].as_u64()),
        (Some("all"), Some("oplog"), Some(3))
    );
    assert_eq!(oplog["update_checked_cases"], 21 + 21 + 23);
    assert_eq!(oplog["update_conflict_free_percent"], 100.0);
    assert_eq!(oplog["update_exceptions"], serde_json::json!([]));
    assert_eq!((summary[8]["impl"].as_str(), summary[8]["impls"].as_u64()), (Some("sloppy"), Some(2)));
    assert_eq!(summary[8]["update_exceptions"], serde_json::json!([]));
    assert_eq!(summary[9]["impl"], "mutex");
    assert_eq!(summary[9]["update_conflict_free_cases"], 0);
    assert!(summary[9]["update_exceptions"].is_null());
    for name in ["counter", "queue"] {
        let svg = std::fs::read_to_string(dir.join(format!("commuter-{name}.svg"))).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains(">oplog (") && svg.contains(">mutex ("), "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_text_report_names_conditions_and_exceptions() {
    let out = commuter(&["--structure", "set", "--classes"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("add(x) / remove(y)") && text.contains("iff x ≠ y"), "{text}");
    assert!(text.contains("every operation takes the structure's one lock (MutexSet.set)"), "{text}");
    assert!(text.contains("== summary"), "{text}");
    assert!(
        text.contains("OpLog versions, update pairs: 44 of 44 checked commutative cases are conflict-free"),
        "{text}"
    );
    assert!(text.contains("Exceptions among OpLog update pairs: none."), "{text}");
    // The list's absorbing versions mark the tests their contract forbids, and count them.
    let out = commuter(&["--structure", "list", "--tests"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("  setup: - | A: add(s0) | B: add(s0)\n    oplog-global-absorb: outside its contract, not run\n"),
        "{text}"
    );
    assert!(text.contains("outside its contract (identity rule: an element is added only while absent"), "{text}");
}

#[test]
fn bad_arguments_exit_2_naming_them() {
    let out = commuter(&["--structure", "tree"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'tree'"));
    let out = commuter(&["--depth", "9"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--depth"));
    let out = Command::new(env!("CARGO_BIN_EXE_commuter")).env("ORDO_BOUNDARY", "soon").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ORDO_BOUNDARY"));
}

/// The issues' targets, as `oplog-bench commuter --json` checks them: at least four
/// structures, each with a scalable version (OpLog, Refcache or sloppy counter) and a
/// baseline; every commutative update pair checked on a scalable version is conflict-free
/// (so the share is 100%, above the 95% asked), every case of a mutex baseline conflicts,
/// and every conflicting case is listed in an exception with a reason.
#[test]
fn scalable_updates_are_conflict_free_and_mutex_baselines_never_are() {
    let out = commuter(&["--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let scalable = |id: &str| ["oplog", "refcache", "sloppy"].iter().any(|p| id.starts_with(p));
    let mut structures: HashSet<(String, bool)> = HashSet::new();
    for v in lines.iter().filter(|v| v["annex"].is_null()) {
        let id = v["impl"].as_str().unwrap();
        let n = |f: &str| v[f].as_u64().unwrap();
        let checked = n("commutative_cases") - n("untraceable_cases") - n("outside_contract_cases");
        structures.insert((v["structure"].as_str().unwrap().to_owned(), scalable(id)));
        if scalable(id) && v["update_pair"] == true {
            assert_eq!(n("conflict_free_cases"), checked, "{v}");
        }
        if id.starts_with("mutex") {
            assert_eq!(n("conflict_free_cases"), 0, "{v}");
        }
        let exceptions = v["exceptions"].as_array().unwrap();
        let listed: u64 = exceptions.iter().map(|e| e["cases"].as_u64().unwrap()).sum();
        assert_eq!(listed, checked - n("conflict_free_cases"), "{v}");
        assert!(exceptions.iter().all(|e| !e["reason"].as_str().unwrap().is_empty()), "{v}");
        let quiescent: u64 =
            v["quiescent_exceptions"].as_array().unwrap().iter().map(|e| e["cases"].as_u64().unwrap()).sum();
        assert!(quiescent <= n("conflict_free_cases"), "only steady conflict-free cases are listed again: {v}");
    }
    let names: HashSet<&str> = structures.iter().map(|(s, _)| s.as_str()).collect();
    assert!(names.len() >= 9, "{names:?}");
    for name in &names {
        assert!(
            structures.contains(&((*name).to_owned(), true)) && structures.contains(&((*name).to_owned(), false)),
            "{name}"
        );
    }
    let family = |prefix: &str| {
        lines.iter().find(|v| v["annex"] == "summary" && v["structure"] == "all" && v["impl"] == prefix).unwrap()
    };
    for prefix in ["oplog", "refcache", "sloppy"] {
        let row = family(prefix);
        assert!(row["update_conflict_free_percent"].as_f64().unwrap() >= 95.0, "{row}");
        assert_eq!(row["update_exceptions"].as_array().unwrap().len(), 0, "{row}");
    }
    assert_eq!(family("mutex")["all_conflict_free_cases"], 0, "{}", family("mutex"));
}

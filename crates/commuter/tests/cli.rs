//! The `commuter` command end to end, and the property it exists to check: OpLog
//! structures are conflict-free for every commutative pair of updates, mutex baselines for
//! none.

use std::collections::HashSet;
use std::process::Command;

use commuter::structures::{self, Options};
use commuter::tracer::{CPUS, Cores};
use serde_json::Value;

fn commuter(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_commuter")).args(args).output().expect("run commuter")
}

#[test]
fn json_lines_cover_every_implementation_and_pair_and_heatmaps_are_written() {
    let dir = std::env::temp_dir().join(format!("commuter-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = commuter(&["--structure", "counter", "--structure", "list", "--json", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    // Three counter implementations × six pairs; the list has no implementation yet.
    assert_eq!(lines.len(), 18);
    let mut seen = HashSet::new();
    for v in &lines {
        assert_eq!(v["structure"], "counter");
        for field in ["commutative_cases", "conflict_free_cases", "cold_conflict_free_cases", "cases"] {
            assert!(v[field].is_u64(), "{field} in {v}");
        }
        assert!(v["conflict_free_cases"].as_u64() <= v["commutative_cases"].as_u64());
        assert!(v["exceptions"].is_array());
        seen.insert((v["impl"].as_str().unwrap().to_owned(), v["op_a"].to_string(), v["op_b"].to_string()));
    }
    assert_eq!(seen.len(), 18, "one line per (impl, pair)");
    let read_read = lines.iter().find(|v| v["impl"] == "oplog" && v["op_a"] == "read" && v["op_b"] == "read").unwrap();
    assert_eq!(read_read["update_pair"], false);
    assert_eq!(read_read["condition"], "always");
    assert!(read_read["exceptions"][0]["reason"].as_str().unwrap().starts_with("a read synchronizes"));
    let svg = std::fs::read_to_string(dir.join("commuter-counter.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("oplog-perthread") && svg.contains("mutex"));
    assert!(!dir.join("commuter-list.svg").exists(), "no heatmap without an implementation");
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

#[test]
fn oplog_updates_are_conflict_free_and_mutex_baselines_never_are() {
    let cores = Cores::new(CPUS);
    let mut covered = 0;
    for structure in structures::all() {
        let report = structure.check(&cores, &Options::default()).unwrap();
        for (i, imp) in report.impls.iter().enumerate() {
            covered += 1;
            for (pair, ip) in report.pairs.iter().zip(&imp.pairs) {
                assert_eq!(ip.traced, pair.commutative - pair.untraceable);
                if imp.id.starts_with("oplog") && pair.update_pair {
                    assert_eq!(
                        ip.conflict_free, ip.traced,
                        "{} {}: {}: {:?}",
                        report.structure, imp.id, pair.title, ip
                    );
                }
                if imp.id.starts_with("mutex") {
                    assert_eq!(ip.conflict_free, 0, "{} {}: {}", report.structure, imp.id, pair.title);
                }
                // Every conflicting case is listed in an exception, with a reason.
                let listed: usize = ip.exceptions.iter().map(|e| e.cases).sum();
                assert_eq!(listed, ip.traced - ip.conflict_free);
                assert!(ip.exceptions.iter().all(|e| !e.reason.is_empty()));
            }
            assert!(report.totals(i, true).commutative > 0);
        }
    }
    assert!(covered >= 4, "{covered} implementations covered");
}

//! End-to-end tests of the `oplog-bench` binary: a short real run, and usage errors.

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_oplog-bench")).args(args).output().expect("run oplog-bench")
}

/// A fresh directory under the system temp dir, unique to this test and process.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("oplog-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The `counter` experiment's implementation ids (stable: scripts read them).
const COUNTER_IMPLS: [&str; 7] =
    ["oplog-percpu", "oplog-perthread", "atomic", "mutex", "percore-atomic", "fast-counter", "percore-store"];

#[test]
fn counter_json_run_writes_lines_csv_and_svg() {
    let dir = scratch_dir("counter");
    // Not created beforehand: --out must create it.
    let out_dir = dir.join("results");
    let out = bench(&[
        "counter",
        "--threads",
        "1,2",
        "--duration-ms",
        "20",
        "--reps",
        "1",
        "--json",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "status {:?}\n{stderr}", out.status);

    let mut seen = HashSet::new();
    let mut host_rows = Vec::new();
    // The host's round trip before and after, and with every record, where two CPUs are
    // there to measure it.
    let measured = ordo::cpu::allowed().len() >= 2;
    for line in stdout.lines() {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
        assert_eq!(v["experiment"], "counter", "{line}");
        if v["annex"] == "host" {
            assert!(v["round_trip_ns"].as_f64().is_some_and(|ns| ns > 0.0), "{line}");
            host_rows.push(v["when"].as_str().expect("when is a string").to_owned());
            continue;
        }
        assert_eq!(v["round_trip_ns"].as_f64().is_some_and(|ns| ns > 0.0), measured, "{line}");
        assert_eq!(v["reps"], 1, "{line}");
        assert_eq!(v["duration_ms"], 20, "{line}");
        let ops = v["ops_per_sec"].as_f64().expect("ops_per_sec is a number");
        assert!(ops > 0.0, "{line}");
        let impl_id = v["impl"].as_str().expect("impl is a string").to_owned();
        let threads = v["threads"].as_u64().expect("threads is an integer");
        assert!(seen.insert((impl_id, threads)), "duplicate point: {line}");
    }
    let expected: HashSet<(String, u64)> =
        COUNTER_IMPLS.iter().flat_map(|id| [1, 2].map(|t| (id.to_string(), t))).collect();
    assert_eq!(seen, expected, "stdout:\n{stdout}");
    // Before and after; a row between points only where the host switched state then.
    if measured {
        assert_eq!(host_rows.first().map(String::as_str), Some("before"), "stdout:\n{stdout}");
        assert_eq!(host_rows.last().map(String::as_str), Some("after"), "stdout:\n{stdout}");
        assert!(host_rows[1..host_rows.len() - 1].iter().all(|w| w == "during"), "stdout:\n{stdout}");
    } else {
        assert!(host_rows.is_empty(), "stdout:\n{stdout}");
    }

    let csv = std::fs::read_to_string(out_dir.join("counter.csv")).expect("counter.csv");
    let mut lines = csv.lines();
    assert!(lines.next().unwrap().starts_with("experiment,impl,threads,ops_per_sec,"));
    assert_eq!(lines.count(), expected.len());

    let svg = std::fs::read_to_string(out_dir.join("counter.svg")).expect("counter.svg");
    assert!(svg.starts_with("<svg"));
    for id in COUNTER_IMPLS {
        assert!(svg.contains(id), "legend lacks {id}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn table_output_without_json() {
    let out = bench(&["counter", "--threads", "2", "--duration-ms", "5", "--reps", "1"]);
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let header =
        stdout.lines().find(|l| l.starts_with("impl")).unwrap_or_else(|| panic!("no table header in:\n{stdout}"));
    assert!(header.contains("2T") && header.contains("vs atomic"), "{header}");
    for id in ["atomic", "mutex", "percore-atomic"] {
        assert!(stdout.lines().any(|l| l.starts_with(id)), "no row {id}:\n{stdout}");
    }
}

#[test]
fn bad_values_exit_2_naming_flag_and_value() {
    for (args, flag, value) in [
        (&["counter", "--threads", "0"][..], "--threads", "0"),
        (&["counter", "--threads", "a"], "--threads", "a"),
        (&["counter", "--threads", "1,,2"], "--threads", "1,,2"),
        (&["counter", "--threads", "-1"], "--threads", "-1"),
        (&["counter", "--threads", "5000"], "--threads", "5000"),
        (&["counter", "--threads", ""], "--threads", ""),
        (&["counter", "--duration-ms", "0"], "--duration-ms", "0"),
        (&["counter", "--duration-ms", "fast"], "--duration-ms", "fast"),
        (&["counter", "--duration-ms", "99999999999999999999999"], "--duration-ms", "99999999999999999999999"),
        (&["counter", "--duration-ms", "18446744073709551615"], "--duration-ms", "18446744073709551615"),
        (&["counter", "--duration-ms", "3600001"], "--duration-ms", "3600001"),
        (&["counter", "--reps", "0"], "--reps", "0"),
        (&["counter", "--reps", "1001"], "--reps", "1001"),
        (&["counter", "--reps", "4294967295"], "--reps", "4294967295"),
        (&["counter", "--reps", "1.5"], "--reps", "1.5"),
        (&["counter", "--reps", "-2"], "--reps", "-2"),
        (&["no-such-experiment"], "EXPERIMENT", "no-such-experiment"),
        (&["counter", "--bogus"], "--bogus", "--bogus"),
    ] {
        let out = bench(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(flag), "{args:?}: no {flag} in {stderr}");
        assert!(stderr.contains(&format!("'{value}'")), "{args:?}: no '{value}' in {stderr}");
        assert!(out.stdout.is_empty(), "{args:?} printed on stdout");
    }
}

#[test]
fn uncreatable_out_dir_exits_2() {
    let dir = scratch_dir("not-a-dir");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("file");
    std::fs::write(&file, "x").unwrap();
    let target = file.join("sub");
    let out =
        bench(&["counter", "--threads", "1", "--duration-ms", "1", "--reps", "1", "--out", target.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--out") && stderr.contains("cannot create"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_out_dir_that_cannot_hold_files_exits_2_naming_it() {
    // /proc/self is a directory (so creating it succeeds) in which no file can be created.
    let target = std::path::Path::new("/proc/self");
    if !target.is_dir() {
        return;
    }
    let out = bench(&["counter", "--threads", "1", "--duration-ms", "1", "--reps", "1", "--out", "/proc/self"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--out") && stderr.contains("'/proc/self'"), "{stderr}");
    assert!(stderr.contains("cannot write /proc/self/.oplog-bench-probe-"), "{stderr}");
    assert!(out.stdout.is_empty(), "the run started: {}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn clock_json_run_has_records_and_the_calibration_annexes() {
    let dir = scratch_dir("clock");
    let out = bench(&[
        "clock",
        "--threads",
        "1",
        "--duration-ms",
        "10",
        "--reps",
        "1",
        "--json",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let impls: Vec<&str> = lines.iter().filter_map(|v| v["impl"].as_str()).collect();
    assert_eq!(impls, ["get_time", "new_time", "logical"]);
    let calibration: Vec<&Value> = lines.iter().filter(|v| v["annex"] == "calibration").collect();
    assert_eq!(calibration.len(), 1);
    assert!(calibration[0]["boundary_ticks"].as_u64().is_some());
    if calibration[0]["source"] != "monotonic" {
        let rows = lines.iter().filter(|v| v["annex"] == "offsets").count();
        assert_eq!(rows, ordo::cpu::allowed().len(), "one offsets row per CPU");
        assert!(dir.join("clock-offsets.csv").exists());
    }
    assert!(dir.join("clock.csv").exists() && dir.join("clock-calibration.csv").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_malformed_ordo_variable_is_a_clear_error() {
    for (var, value, message) in [
        ("ORDO_BOUNDARY", "soon", "ORDO_BOUNDARY=\"soon\" is not valid"),
        ("ORDO_CLOCK", "tsc", "ORDO_CLOCK=\"tsc\" is not valid: expected `hardware` or `monotonic`"),
        ("ORDO_CALIBRATION_RUNS", "0", "ORDO_CALIBRATION_RUNS=\"0\" is not valid"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_oplog-bench"))
            .args(["clock", "--threads", "1", "--duration-ms", "1", "--reps", "1"])
            .env(var, value)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{var}={value}: {stderr}");
        assert!(stderr.contains(message), "{var}={value}: {stderr}");
        assert!(out.stdout.is_empty(), "{var}={value} printed on stdout");
    }
}

#[test]
fn all_quick_writes_every_experiments_files_and_the_report() {
    let dir = scratch_dir("all-quick");
    // `commuter` builds its own workspace on first use; it has its own tests.
    let out = bench(&[
        "all",
        "--quick",
        "--skip",
        "commuter",
        "--threads",
        "1",
        "--duration-ms",
        "5",
        "--reps",
        "1",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "status {:?}\n{stderr}", out.status);
    let report = std::fs::read_to_string(dir.join("report.md")).expect("report.md");
    let jsonl = std::fs::read_to_string(dir.join("all.jsonl")).expect("all.jsonl");
    let lines: Vec<Value> = jsonl.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let names: Vec<&str> = oplog_bench::experiments::REGISTRY.iter().map(|e| e.name()).collect();
    for name in ["counter", "clock", "contention", "memory", "read-mix", "spinlock"] {
        assert!(names.contains(&name), "{name} is not registered");
    }
    // Experiments that report only annexes (no ids) write no csv or svg of records.
    let annex_only = |n: &str| oplog_bench::experiments::by_name(n).is_some_and(|e| e.ids().is_empty());
    for name in names.into_iter().filter(|&n| n != "commuter") {
        let files = if annex_only(name) { vec![] } else { vec![format!("{name}.csv"), format!("{name}.svg")] };
        for file in files {
            assert!(dir.join(&file).exists(), "no {file}");
            assert!(report.contains(&format!("({file})")), "report.md does not link {file}");
        }
        assert!(report.contains(&format!("\n## {name}\n")), "report.md has no section {name}");
        assert!(lines.iter().any(|v| v["experiment"] == name), "all.jsonl has no line of {name}");
    }
    // The experiments' required ids and fields.
    let has = |experiment: &str, id: &str, field: &str| {
        lines.iter().any(|v| v["experiment"] == experiment && v["impl"] == id && v[field].is_number())
    };
    for id in ["oplog", "percore", "plain"] {
        assert!(has("memory", id, "bytes_per_object"), "memory {id}");
    }
    for id in ["oplog", "mutex", "node-replication"] {
        assert!(has("read-mix", id, "update_pct"), "read-mix {id}");
    }
    for id in ["shared-line", "own-line"] {
        assert!(has("contention", id, "cycles_per_write"), "contention {id}");
    }
    for id in ["ticket", "mcs", "mutex"] {
        assert!(has("spinlock", id, "parallel_cycles"), "spinlock {id}");
    }
    let model_rows = lines.iter().filter(|v| v["experiment"] == "spinlock" && v["annex"] == "model").count();
    assert_eq!(model_rows, 48, "the model covers 1..48 cores");
    assert!(dir.join("spinlock-model.svg").exists() && report.contains("(spinlock-model.svg)"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn skip_names_registered_experiments_and_needs_all() {
    let out = bench(&["all", "--skip", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no experiment is named 'nope'"), "{stderr}");
    let out = bench(&["counter", "--skip", "clock"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--skip only applies to `all`"));
}

#[test]
fn points_measure_only_the_points_named() {
    let out =
        bench(&["read-mix", "--points", "100,99", "--threads", "1", "--duration-ms", "5", "--reps", "1", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let records: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v.get("annex").is_none())
        .collect();
    let pcts: Vec<u64> = records.iter().map(|v| v["update_pct"].as_u64().unwrap()).collect();
    assert!(!pcts.is_empty() && pcts.iter().all(|&p| p == 99 || p == 100), "{pcts:?}");
    assert!(pcts.contains(&99) && pcts.contains(&100), "{pcts:?}");
    let help = bench(&["objects", "--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("Points: 1, 16, 256, 1024, 4096, 65536"));
    for (args, needle) in [
        (&["read-mix", "--points", "37"][..], "37 is not a point of `read-mix`"),
        (&["fork-truncate", "--points", "3"], "`fork-truncate` has no sweep that --points can narrow"),
        (&["all", "--points", "1"], "`all` has no sweep"),
        (&["objects", "--points", "many"], "'many' is not a number"),
    ] {
        let out = bench(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("'--points <LIST>'") && stderr.contains(needle), "{args:?}: {stderr}");
    }
}

/// The `refcount` experiment's implementation ids (stable: scripts read them).
const REFCOUNT_IMPLS: [&str; 6] = ["atomic", "sloppy", "sloppy-percpu", "oplog", "refcache", "refcache-percpu"];

#[test]
fn refcount_json_run_has_every_impl_and_both_annexes() {
    let out = bench(&["refcount", "--quick", "--threads", "2", "--duration-ms", "5", "--reps", "1", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let records: Vec<&Value> = lines.iter().filter(|v| v.get("annex").is_none()).collect();
    let impls: Vec<&str> = records.iter().filter_map(|v| v["impl"].as_str()).collect();
    assert_eq!(impls, REFCOUNT_IMPLS);
    assert!(records.iter().all(|v| v["ops_per_sec"].as_f64().unwrap() > 0.0 && v["threads"] == 2));
    let memory: Vec<&Value> = lines.iter().filter(|v| v["annex"] == "memory").collect();
    assert_eq!(memory.iter().map(|v| v["impl"].as_str().unwrap()).collect::<Vec<_>>(), REFCOUNT_IMPLS);
    assert!(memory.iter().all(|v| v["objects"] == 100_000 && v["bytes_per_object"].as_f64().unwrap() > 16.0));
    let delay: Vec<&str> =
        lines.iter().filter(|v| v["annex"] == "free-delay").map(|v| v["impl"].as_str().unwrap()).collect();
    assert_eq!(delay, ["atomic", "refcache", "refcache-percpu"]);
}

#[test]
fn per_experiment_help_names_ids_parameters_and_the_environment() {
    for args in [&["counter", "--help"][..], &["help", "counter"], &["-h", "counter", "--quick"]] {
        let out = bench(args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{args:?}: status {:?}", out.status);
        assert!(stdout.starts_with("oplog-bench counter: "), "{args:?}:\n{stdout}");
        for id in COUNTER_IMPLS {
            assert!(stdout.contains(&format!("\n  {id} ")), "{args:?} lacks {id}:\n{stdout}");
        }
        assert!(stdout.contains("X axis: threads") && stdout.contains("ORDO_CALIBRATION_RUNS"), "{stdout}");
    }
    let overview = bench(&["help"]);
    let stdout = String::from_utf8_lossy(&overview.stdout);
    assert!(
        overview.status.success() && stdout.contains("read-mix: ") && stdout.contains("    ids: oplog, mutex"),
        "{stdout}"
    );
    let global = bench(&["--help"]);
    let stdout = String::from_utf8_lossy(&global.stdout);
    assert!(global.status.success() && stdout.contains("ORDO_BOUNDARY=<ticks>"), "{stdout}");
    let unknown = bench(&["help", "nope"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no experiment is called 'nope'"));
}

#[test]
fn compare_two_counter_runs_lists_every_id_and_writes_the_report() {
    let dir = scratch_dir("compare");
    let (a, b, report) = (dir.join("A"), dir.join("B"), dir.join("report"));
    for run in [&a, &b] {
        let out = bench(&[
            "counter",
            "--quick",
            "--threads",
            "1",
            "--duration-ms",
            "5",
            "--reps",
            "1",
            "--out",
            run.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let out = bench(&["compare", a.to_str().unwrap(), b.to_str().unwrap(), "--out", report.to_str().unwrap()]);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    for id in COUNTER_IMPLS {
        let row =
            stdout.lines().find(|l| l.starts_with(&format!("{id} "))).unwrap_or_else(|| panic!("no {id}:\n{stdout}"));
        assert!(row.contains("1T") && row.contains('x'), "{row}");
    }
    // (Followed by how many of them the runs measured while the host's round trip differed,
    // where it did: CI's host switched between two runs of 20 ms.)
    assert!(stdout.contains("7 points in both runs"), "{stdout}");
    assert!(stdout.contains("0 added, 0 removed."), "{stdout}");
    let md = std::fs::read_to_string(report.join("compare.md")).expect("compare.md");
    for id in COUNTER_IMPLS {
        assert!(md.contains(&format!("| {id} | 1T |")), "{md}");
    }
    // The chart of both runs, beside the report and linked from it, every id's two curves in
    // its legend.
    assert!(md.contains("![counter: old and new](compare-counter.svg)"), "{md}");
    let svg = std::fs::read_to_string(report.join("compare-counter.svg")).expect("compare-counter.svg");
    for id in COUNTER_IMPLS {
        assert!(svg.contains(&format!("{id} (old)")) && svg.contains(&format!("{id} (new)")), "no {id} in the chart");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compare_with_a_missing_dir_or_a_bad_line_exits_2_naming_it() {
    let dir = scratch_dir("compare-bad");
    let missing = dir.join("missing");
    let out = bench(&["compare", missing.to_str().unwrap(), missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("{} has no all.jsonl", missing.display())), "{stderr}");

    let bad = dir.join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join("all.jsonl"), "{\"annex\":\"x\"}\n{\"experiment\":\"counter\"}\n").unwrap();
    let out = bench(&["compare", bad.to_str().unwrap(), bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("{}:2: not a record", bad.join("all.jsonl").display())), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

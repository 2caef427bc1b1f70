//! Bad input: every public constructor and environment variable of `oplog` that takes a
//! number or a name rejects nonsense with a message naming the value and what was
//! expected, and accepts the limits it names. One test per input:
//!
//! | input | test |
//! |---|---|
//! | `Config::cache_slots` | `cache_slots_must_be_a_power_of_two_in_range` |
//! | `Config::max_log_len` | `max_log_len_must_be_positive` |
//! | `Config::max_threads` | `max_threads_must_be_in_range` |
//! | `Config::cpus` | `cpus_must_be_in_range` |
//! | `ORDO_CLOCK`, `ORDO_BOUNDARY`, `ORDO_CALIBRATION_RUNS` through `Domain::new` | `a_malformed_ordo_variable_is_an_error_of_domain_new` |
//! | the same through `OpLog::new` / `Domain::global` | `a_malformed_ordo_variable_panics_in_oplog_new_naming_it` |
//!
//! Elsewhere: the `ORDO_*` parser itself (`crates/ordo/src/settings.rs`), ordo's
//! constructors (`crates/ordo`), `oplog-bench`'s flags and variables
//! (`crates/oplog-bench/tests/cli.rs`), and the suites' own variables
//! (`OPLOG_LINCHECK_*`, `OPLOG_SOAK_*`: `crates/lincheck/src/env.rs`, `run.rs`).

mod common;

use common::SetOp;
use oplog::{Config, ConfigError, CounterLog, Domain, OpLog, Ordered, Unordered};
use std::collections::BTreeSet;
use std::process::{Command, Output};

fn error(config: Config) -> ConfigError {
    Domain::<CounterLog>::new(config).unwrap_err()
}

fn accepts(config: Config) {
    if let Err(e) = Domain::<CounterLog>::new(config) {
        panic!("rejected a value its own message allows: {e}");
    }
}

#[test]
fn cache_slots_must_be_a_power_of_two_in_range() {
    for n in [0, 3, 100, 1 << 21, usize::MAX] {
        let err = error(Config::per_thread().cache_slots(n));
        assert_eq!(err, ConfigError::CacheSlots(n));
        assert_eq!(
            err.to_string(),
            format!("cache_slots = {n}: a log cache needs a power of two from 1 to 1048576 slots")
        );
    }
    // Per-thread caches are allocated on first use, but the shared index 0 is allocated at
    // once: 2^20 padded slots are 128 MiB, which Miri would take minutes to initialize.
    accepts(Config::per_thread().cache_slots(1));
    if !cfg!(miri) {
        accepts(Config::per_thread().cache_slots(1 << 20));
    }
}

#[test]
fn max_log_len_must_be_positive() {
    let err = error(Config::per_cpu().max_log_len(0));
    assert_eq!(err, ConfigError::MaxLogLen(0));
    assert_eq!(err.to_string(), "max_log_len = 0: a log must be allowed at least 1 entry");
    accepts(Config::per_cpu().max_log_len(1));
    accepts(Config::per_cpu().max_log_len(usize::MAX));
}

#[test]
fn max_threads_must_be_in_range() {
    for n in [0, 65_536, usize::MAX] {
        let err = error(Config::per_thread().max_threads(n));
        assert_eq!(err, ConfigError::MaxThreads(n));
        assert_eq!(err.to_string(), format!("max_threads = {n}: expected 1 to 65535 threads"));
    }
    accepts(Config::per_thread().max_threads(1));
    // The largest allocates 65,536 empty cache cells: slow under Miri, where the limit
    // itself is checked by the errors above.
    if !cfg!(miri) {
        accepts(Config::per_thread().max_threads(65_535));
    }
}

#[test]
fn cpus_must_be_in_range() {
    for n in [0, 65_537, usize::MAX] {
        let err = error(Config::per_cpu().cpus(n));
        assert_eq!(err, ConfigError::Cpus(n));
        assert_eq!(err.to_string(), format!("cpus = {n}: expected 1 to 65536 per-CPU caches"));
    }
    accepts(Config::per_cpu().cpus(1));
    let many = if cfg!(miri) { 64 } else { 65_536 };
    accepts(Config::per_cpu().cpus(many).cache_slots(1));
}

/// Malformed `ORDO_*` settings and the message each must produce.
const MALFORMED: [(&str, &str, &str); 4] = [
    ("ORDO_CLOCK", "tsc", "ORDO_CLOCK=\"tsc\" is not valid: expected `hardware` or `monotonic`"),
    ("ORDO_BOUNDARY", "soon", "ORDO_BOUNDARY=\"soon\" is not valid: expected a whole number of clock ticks"),
    ("ORDO_BOUNDARY", "-5", "ORDO_BOUNDARY=\"-5\" is not valid"),
    (
        "ORDO_CALIBRATION_RUNS",
        "0",
        "ORDO_CALIBRATION_RUNS=\"0\" is not valid: expected a whole number of runs, at least 1",
    ),
];

/// Runs one of the ignored tests below in a child process with `var=value` (the
/// process-wide clock reads the environment once, so each value needs a fresh process).
fn child(test: &str, var: &str, value: &str) -> Output {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", test, "--nocapture", "--test-threads=1"])
        .env(var, value)
        .output()
        .unwrap();
    assert!(out.status.success(), "{test} with {var}={value}: {}", String::from_utf8_lossy(&out.stderr));
    out
}

#[test]
#[ignore = "run by a_malformed_ordo_variable_is_an_error_of_domain_new in a child process"]
fn child_domain_new() {
    let err = Domain::<Ordered<SetOp>>::new(Config::per_cpu()).unwrap_err();
    assert!(matches!(err, ConfigError::Clock(_)), "{err}");
    println!("error: {err}");
    // Kinds that never read the clock do not need it, so they are not affected.
    Domain::<Unordered<SetOp>>::new(Config::per_cpu()).unwrap();
    Domain::<CounterLog>::new(Config::per_thread()).unwrap();
}

#[test]
#[cfg_attr(miri, ignore = "Miri cannot spawn processes")]
fn a_malformed_ordo_variable_is_an_error_of_domain_new() {
    if common::skip_child_process_under_emulation("a_malformed_ordo_variable_is_an_error_of_domain_new") {
        return;
    }
    for (var, value, message) in MALFORMED {
        let out = child("child_domain_new", var, value);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains(&format!("error: invalid Ordo clock configuration: {message}")), "{stdout}");
    }
}

#[test]
#[ignore = "run by a_malformed_ordo_variable_panics_in_oplog_new_naming_it in a child process"]
fn child_oplog_new() {
    let r = std::panic::catch_unwind(|| OpLog::<Ordered<SetOp>>::new(BTreeSet::new()));
    let p = r.expect_err("OpLog::new on a malformed clock configuration must panic");
    let text = p.downcast::<String>().map(|s| *s).unwrap_or_default();
    println!("panic: {text}");
}

#[test]
#[cfg_attr(miri, ignore = "Miri cannot spawn processes")]
fn a_malformed_ordo_variable_panics_in_oplog_new_naming_it() {
    if common::skip_child_process_under_emulation("a_malformed_ordo_variable_panics_in_oplog_new_naming_it") {
        return;
    }
    for (var, value, message) in MALFORMED {
        let out = child("child_oplog_new", var, value);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains(&format!("panic: invalid Ordo clock configuration: {message}")), "{stdout}");
    }
}

/// Issue 16, item 3: settings each in range whose product asks for more than a domain may
/// allocate up front are refused with an error naming them, instead of aborting the
/// process (or taking seconds to zero gigabytes).
#[test]
fn a_product_of_in_range_settings_too_large_to_allocate_is_an_error() {
    for config in [
        Config::per_cpu().cpus(65_536).cache_slots(1 << 20),
        Config::per_cpu().cpus(65_536),
        Config::per_cpu().cpus(16_384).cache_slots(1 << 10),
    ] {
        let err = error(config);
        assert!(matches!(err, ConfigError::CacheTooLarge { .. }), "{err:?}");
        let text = err.to_string();
        assert!(text.contains("cache_slots") && text.contains(&oplog::MAX_CACHE_BYTES.to_string()), "{text}");
    }
    let many = if cfg!(miri) { 64 } else { 65_536 };
    accepts(Config::per_cpu().cpus(many).cache_slots(64));
}

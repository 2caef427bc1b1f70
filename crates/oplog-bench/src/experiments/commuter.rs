//! `commuter`: which operation pairs of each structure commute, and whether each
//! implementation is conflict-free for them (002 ch. 6, Figure 7-1).
//!
//! The checker lives in `crates/commuter`, its own cargo workspace: it builds `oplog` with
//! the `trace` feature (recording primitives), which must never be unified into this
//! workspace's builds. So this experiment does not link it; it runs
//!
//! ```text
//! cargo run --release --manifest-path <workspace>/crates/commuter/Cargo.toml -- --json [--out DIR]
//! ```
//!
//! with cargo from the `CARGO` environment variable (set when `oplog-bench` itself runs
//! under cargo) or `PATH`, and the workspace found from this crate's manifest directory at
//! compile time or the current directory. The checker is built first, in
//! [`Experiment::prepare`], before any experiment measures (the first build takes a minute
//! or more; cargo's progress goes to stderr), so neither the report's time for this
//! experiment nor any other experiment's measurement includes the build. The checker
//! prints two kinds of JSON lines:
//!
//! * one per structure, implementation and pair of operations: a row of the `pairs` annex,
//!   `structure`, `impl` (`oplog…`, `refcache…`, `sloppy…`, `mutex…`, or a baseline of the
//!   texts: `spinlock`, `cas`, `percore`), `op_a`, `op_b`, `commutative_cases`,
//!   `conflict_free_cases`, and the rest listed in [`COLUMNS`];
//! * its summary, tagged `"annex": "summary"`: a row of the `summary` annex per structure
//!   and implementation, then `structure` = `all` rows summing each family present: the
//!   OpLog versions (`impl` = `oplog`), the Refcache versions (`refcache`), the sloppy
//!   counters (`sloppy`) and the mutex baselines (`mutex`), with the columns in
//!   [`SUMMARY_COLUMNS`]. A scalable family's `all` row (`oplog`, `refcache`, `sloppy`)
//!   gives in `update_conflict_free_percent` the share of its checked commutative
//!   update-pair cases that are conflict-free, and in `update_exceptions` every exception
//!   with its reason.
//!
//! On the terminal, the columns that hold lists (`exceptions`, `quiescent_exceptions`,
//! `update_exceptions`) and a few redundant ones are left out of the tables, and the
//! exceptions are listed under them instead; JSON lines and CSV files keep every column. With `--out DIR` the checker also
//! writes `commuter-<structure>.svg` heatmaps there, and the sink writes
//! `commuter-pairs.csv` and `commuter-summary.csv`.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Map, Value};

use crate::experiments::Experiment;
use crate::harness::Settings;
use crate::output::{Annex, Sink};

/// The `pairs` annex's columns, in order: the fields of each checker line.
pub const COLUMNS: [&str; 16] = [
    "structure",
    "impl",
    "op_a",
    "op_b",
    "pair",
    "update_pair",
    "cases",
    "commutative_cases",
    "untraceable_cases",
    "outside_contract_cases",
    "conflict_free_cases",
    "cold_conflict_free_cases",
    "quiescent_conflict_free_cases",
    "condition",
    "exceptions",
    "quiescent_exceptions",
];

/// The `pairs` columns left out of the terminal table (`pair` names both operations).
const COLUMNS_HIDDEN: [&str; 5] = ["op_a", "op_b", "untraceable_cases", "exceptions", "quiescent_exceptions"];

/// The scalable families of the summary (the checker's `FAMILIES` whose update-pair
/// exceptions are listed): the `all` row's `impl`, and its name in the verdict note.
const SCALABLE: [(&str, &str); 3] = [("oplog", "OpLog"), ("refcache", "Refcache"), ("sloppy", "Sloppy-counter")];

/// The `summary` annex's columns, in order: the fields of each checker summary line.
pub const SUMMARY_COLUMNS: [&str; 20] = [
    "structure",
    "impl",
    "impls",
    "contract",
    "update_commutative_cases",
    "update_outside_contract_cases",
    "update_checked_cases",
    "update_conflict_free_cases",
    "update_conflict_free_percent",
    "update_conflict_free_percent_of_commutative",
    "update_cold_conflict_free_cases",
    "all_commutative_cases",
    "all_outside_contract_cases",
    "all_checked_cases",
    "all_conflict_free_cases",
    "all_conflict_free_percent",
    "all_conflict_free_percent_of_commutative",
    "all_cold_conflict_free_cases",
    "all_quiescent_conflict_free_cases",
    "update_exceptions",
];

/// The `summary` columns shown on the terminal (the update pairs' counts and the share
/// over all pairs); the others are hidden there.
const SUMMARY_SHOWN: [&str; 7] = [
    "structure",
    "impl",
    "update_outside_contract_cases",
    "update_checked_cases",
    "update_conflict_free_cases",
    "update_conflict_free_percent",
    "all_conflict_free_percent",
];

/// The checker's manifest, relative to the workspace root.
pub const MANIFEST: &str = "crates/commuter/Cargo.toml";

/// The `commuter` experiment.
#[derive(Clone, Copy, Debug, Default)]
pub struct CommuterExperiment;

impl Experiment for CommuterExperiment {
    fn name(&self) -> &'static str {
        "commuter"
    }

    fn description(&self) -> &'static str {
        "which operation pairs commute, and which implementations are conflict-free for them (002 ch. 6, Figure 7-1)"
    }

    fn ids(&self) -> Vec<&'static str> {
        Vec::new()
    }

    fn points(&self, _: &Settings) -> u64 {
        0
    }

    /// Builds the checker (its first build takes a minute or more), so that the run measures
    /// only the check.
    fn prepare(&self) -> io::Result<()> {
        let (mut command, shown) = cargo("build")?;
        eprintln!(
            "commuter: building the checker first, not timed: `{shown}` (its own workspace: it builds oplog with the trace feature)"
        );
        let status = command.stdin(Stdio::null()).status().map_err(|e| cannot_run(&shown, e))?;
        if !status.success() {
            return Err(io::Error::other(format!("`{shown}` failed ({status})")));
        }
        Ok(())
    }

    fn run(&self, _: &Settings, sink: &mut Sink) -> io::Result<()> {
        let (mut command, shown) = cargo("run")?;
        command.args(["--", "--json"]);
        if let Some(dir) = sink.out_dir() {
            command.arg("--out").arg(std::path::absolute(dir)?);
        }
        let shown = format!("{shown} -- --json");
        eprintln!("commuter: running `{shown}`");
        let output =
            command.stdin(Stdio::null()).stderr(Stdio::inherit()).output().map_err(|e| cannot_run(&shown, e))?;
        if !output.status.success() {
            return Err(io::Error::other(format!("`{shown}` failed ({})", output.status)));
        }
        let stdout = String::from_utf8(output.stdout)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("`{shown}` printed non-UTF-8: {e}")))?;
        let (pairs, summary) = parse(&stdout)?;
        if let Some(dir) = sink.out_dir().map(Path::to_path_buf) {
            let mut structures: Vec<&str> = pairs.rows.iter().filter_map(|r| r[0].as_str()).collect();
            structures.dedup();
            for file in structures.iter().map(|s| format!("commuter-{s}.svg")) {
                if dir.join(&file).is_file() {
                    sink.wrote(&file);
                }
            }
        }
        sink.annex(pairs)?;
        sink.annex(summary)
    }
}

/// `cargo <subcommand> --release --manifest-path <checker>` and how to show it: cargo from
/// the `CARGO` environment variable (set when `oplog-bench` runs under cargo) or `PATH`, the
/// checker's manifest found from this crate's manifest directory at compile time or the
/// current directory.
fn cargo(subcommand: &str) -> io::Result<(Command, String)> {
    let built_in = Path::new(env!("CARGO_MANIFEST_DIR")).parent().and_then(Path::parent).map(Path::to_path_buf);
    let roots = [built_in, std::env::current_dir().ok()];
    let manifest = find_manifest(roots.iter().flatten())?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let mut command = Command::new(&cargo);
    command.args([subcommand, "--release", "--manifest-path"]).arg(&manifest);
    let shown = format!("{} {subcommand} --release --manifest-path {}", cargo.to_string_lossy(), manifest.display());
    Ok((command, shown))
}

/// The error of a checker command that could not be started.
fn cannot_run(shown: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("cannot run `{shown}` (set CARGO or put cargo on PATH): {e}"))
}

/// The first `<root>/crates/commuter/Cargo.toml` that exists.
///
/// # Errors
/// `NotFound` naming every place looked.
pub fn find_manifest<'a>(roots: impl IntoIterator<Item = &'a PathBuf>) -> io::Result<PathBuf> {
    let mut looked = Vec::new();
    for root in roots {
        let candidate = root.join(MANIFEST);
        if candidate.is_file() {
            return Ok(candidate);
        }
        looked.push(candidate.display().to_string());
    }
    Err(io::Error::new(
        io::ErrorKind::NotFound,
        format!("cannot find the commuter crate: looked for {}; run from the workspace root", looked.join(" and ")),
    ))
}

/// The checker's JSON lines as the `pairs` and `summary` annexes, with the exceptions and
/// the OpLog verdict as notes under their terminal tables.
///
/// # Errors
/// `InvalidData` naming the line that is not a JSON object or lacks one of its annex's
/// columns.
pub fn parse(stdout: &str) -> io::Result<(Annex, Annex)> {
    let mut pairs = Annex::new(
        "pairs",
        "commutative cases and conflict-free cases per structure, implementation and pair, in the steady state; \
         cold_conflict_free_cases counts them at each core's first touch, where an OpLog update publishes the \
         object in its core's slot and sets that core's bit in the object word, so 0 there is expected; \
         quiescent_conflict_free_cases after the set-up's updates were read (the concurrent read path) or, for \
         Refcache, reviewed (quiescent_exceptions: the cases that conflict only then)",
        &COLUMNS,
    );
    let mut summary = Annex::new(
        "summary",
        "per structure and implementation, and over all OpLog versions, Refcache versions, sloppy counters and \
         mutex baselines: commutative cases checked and conflict-free (update pairs and all pairs)",
        &SUMMARY_COLUMNS,
    );
    pairs = COLUMNS_HIDDEN.iter().fold(pairs, |a, c| a.hide_in_text(c));
    summary = SUMMARY_COLUMNS.iter().filter(|c| !SUMMARY_SHOWN.contains(c)).fold(summary, |a, c| a.hide_in_text(c));
    let mut exceptions = Vec::new();
    for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
        let bad = |why: String| io::Error::new(io::ErrorKind::InvalidData, format!("commuter output: {why}: {line}"));
        let object = match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(o)) => o,
            Ok(_) => return Err(bad("not a JSON object".into())),
            Err(e) => return Err(bad(format!("not JSON ({e})"))),
        };
        let is_summary = object.get("annex").and_then(Value::as_str) == Some("summary");
        let columns: &[&str] = if is_summary { &SUMMARY_COLUMNS } else { &COLUMNS };
        let row = columns
            .iter()
            .map(|c| object.get(*c).cloned().ok_or_else(|| bad(format!("no `{c}` field"))))
            .collect::<io::Result<Vec<Value>>>()?;
        if is_summary {
            summary.row(row);
            note_summary(&mut summary, &object);
        } else {
            exceptions.extend(exception_notes(&object));
            pairs.row(row);
        }
    }
    if exceptions.is_empty() {
        pairs.note("exceptions: none");
    } else {
        pairs
            .note("exceptions (commutative cases that are not conflict-free, grouped by the fields they conflict on):");
        exceptions.into_iter().for_each(|n| pairs.note(n));
    }
    Ok((pairs, summary))
}

/// The notes for one pair line's exceptions: `structure impl pair: n of m cases: reason`,
/// the conflicting fields, and an example.
fn exception_notes(object: &Map<String, Value>) -> Vec<String> {
    let text = |k: &str| object.get(k).map(plain).unwrap_or_default();
    let count = |k: &str| object.get(k).and_then(Value::as_u64).unwrap_or(0);
    let checked = count("commutative_cases")
        .saturating_sub(count("untraceable_cases"))
        .saturating_sub(count("outside_contract_cases"));
    let mut notes = Vec::new();
    for (list, when) in [("exceptions", ""), ("quiescent_exceptions", " conflict only once quiescent")] {
        for e in object.get(list).and_then(Value::as_array).into_iter().flatten() {
            let field = |k: &str| e.get(k).map(plain).unwrap_or_default();
            notes.push(format!(
                "  {} {} {}: {} of {checked} cases{when}: {}",
                text("structure"),
                text("impl"),
                text("pair"),
                field("cases"),
                field("reason")
            ));
            notes.push(format!("      {}", field("conflicts")));
            notes.push(format!("      e.g. {}", field("example")));
        }
    }
    notes
}

/// The notes under the summary: each scalable family's verdict and its exceptions (from
/// its `all` row), and each implementation's contract.
fn note_summary(summary: &mut Annex, object: &Map<String, Value>) {
    let text = |k: &str| object.get(k).map(plain).unwrap_or_default();
    if let Some(contract) = object.get("contract").and_then(Value::as_str) {
        summary.note(format!("contract of {} {}: {contract}", text("structure"), text("impl")));
    }
    if text("structure") != "all" {
        return;
    }
    let Some((_, family)) = SCALABLE.iter().find(|(prefix, _)| text("impl") == *prefix) else { return };
    summary.note(format!(
        "{family} versions ({}), update pairs: {} of {} checked commutative cases are conflict-free ({}%); {} more \
         are outside their contracts, not run on them ({}% of all {} commutative update cases are checked and \
         conflict-free)",
        text("impls"),
        text("update_conflict_free_cases"),
        text("update_checked_cases"),
        text("update_conflict_free_percent"),
        text("update_outside_contract_cases"),
        text("update_conflict_free_percent_of_commutative"),
        text("update_commutative_cases"),
    ));
    let exceptions = object.get("update_exceptions").and_then(Value::as_array).cloned().unwrap_or_default();
    if exceptions.is_empty() {
        summary.note(format!("exceptions among {family} update pairs: none"));
    } else {
        summary.note(format!("exceptions among {family} update pairs:"));
        for e in &exceptions {
            let field = |k: &str| e.get(k).map(plain).unwrap_or_default();
            summary.note(format!(
                "  {} {} {}: {} cases: {}",
                field("structure"),
                field("impl"),
                field("pair"),
                field("cases"),
                field("reason")
            ));
        }
    }
}

/// A JSON value as plain text (strings without quotes).
fn plain(v: &Value) -> String {
    crate::output::csv::cell(v).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"structure":"set","impl":"oplog","op_a":"add","op_b":"remove","pair":"add(x) / remove(y)","update_pair":true,"cases":19,"commutative_cases":12,"untraceable_cases":0,"outside_contract_cases":0,"conflict_free_cases":12,"cold_conflict_free_cases":0,"quiescent_conflict_free_cases":0,"condition":"iff x ≠ y","exceptions":[],"quiescent_exceptions":[]}"#;

    const CONFLICTING: &str = r#"{"structure":"set","impl":"mutex","op_a":"add","op_b":"remove","pair":"add(x) / remove(y)","update_pair":true,"cases":19,"commutative_cases":12,"untraceable_cases":0,"outside_contract_cases":0,"conflict_free_cases":0,"cold_conflict_free_cases":0,"quiescent_conflict_free_cases":0,"condition":"iff x ≠ y","exceptions":[{"cases":12,"reason":"every operation takes the structure's one lock (MutexSet.set)","conflicts":"MutexSet.set (A acquire; B acquire)","example":"setup: - | A: add(s0) | B: remove(s1)"}],"quiescent_exceptions":[]}"#;

    const SUMMARY: &str = r#"{"annex":"summary","structure":"all","impl":"oplog","impls":2,"contract":null,"update_commutative_cases":30,"update_outside_contract_cases":6,"update_checked_cases":24,"update_conflict_free_cases":24,"update_conflict_free_percent":100.0,"update_conflict_free_percent_of_commutative":80.0,"update_cold_conflict_free_cases":0,"all_commutative_cases":40,"all_outside_contract_cases":6,"all_checked_cases":34,"all_conflict_free_cases":24,"all_conflict_free_percent":70.6,"all_conflict_free_percent_of_commutative":60.0,"all_cold_conflict_free_cases":0,"all_quiescent_conflict_free_cases":0,"update_exceptions":[]}"#;

    #[test]
    fn checker_lines_become_annex_rows() {
        let (pairs, summary) = parse(&format!("{LINE}\n\n{LINE}\n{SUMMARY}\n")).unwrap();
        assert_eq!(pairs.name, "pairs");
        assert_eq!(pairs.rows.len(), 2);
        let json: Value = serde_json::from_str(&pairs.json_lines("commuter")[0]).unwrap();
        assert_eq!(json["experiment"], "commuter");
        assert_eq!(json["annex"], "pairs");
        assert_eq!(json["impl"], "oplog");
        assert_eq!(json["commutative_cases"], 12);
        assert_eq!(json["conflict_free_cases"], 12);
        assert_eq!(json["exceptions"], serde_json::json!([]));
        assert_eq!(summary.rows.len(), 1);
        let json: Value = serde_json::from_str(&summary.json_lines("commuter")[0]).unwrap();
        assert_eq!(json["annex"], "summary");
        assert_eq!((json["structure"].as_str(), json["impl"].as_str()), (Some("all"), Some("oplog")));
        assert_eq!(json["update_conflict_free_percent"], 100.0);
    }

    #[test]
    fn the_terminal_lists_exceptions_under_narrow_tables() {
        let (pairs, summary) = parse(&format!("{LINE}\n{CONFLICTING}\n{SUMMARY}\n")).unwrap();
        let text = pairs.render();
        let header = text.lines().nth(1).unwrap();
        assert!(header.starts_with("structure") && !header.contains("exceptions"), "{text}");
        assert!(!header.contains("op_a"), "{text}");
        assert!(text.lines().all(|l| !l.contains("[{")), "no JSON list in the table: {text}");
        assert!(
            text.contains(
                "  set mutex add(x) / remove(y): 12 of 12 cases: every operation takes the structure's one lock \
                 (MutexSet.set)\n      MutexSet.set (A acquire; B acquire)\n      e.g. setup: - | A: add(s0) | B: \
                 remove(s1)\n"
            ),
            "{text}"
        );
        // JSON keeps the list.
        let json: Value = serde_json::from_str(&pairs.json_lines("commuter")[1]).unwrap();
        assert_eq!(json["exceptions"][0]["cases"], 12);
        let text = summary.render();
        assert!(
            text.contains(
                "OpLog versions (2), update pairs: 24 of 24 checked commutative cases are conflict-free (100.0%)"
            ),
            "{text}"
        );
        assert!(
            text.contains("6 more are outside") && text.contains("exceptions among OpLog update pairs: none"),
            "{text}"
        );
        assert!(!text.lines().nth(1).unwrap().contains("update_exceptions"), "{text}");
        let (pairs, _) = parse(LINE).unwrap();
        assert!(pairs.render().ends_with("exceptions: none\n"));
    }

    #[test]
    fn each_scalable_family_gets_its_verdict_and_revivals_are_listed() {
        let revival = LINE
            .replace(r#""structure":"set","impl":"oplog""#, r#""structure":"refcache","impl":"refcache""#)
            .replace(
                r#""quiescent_exceptions":[]"#,
                r#""quiescent_exceptions":[{"cases":1,"reason":"tryget revived a dying object","conflicts":"Header.state (A load rmw; B load rmw)","example":"setup: dec() | A: tryget() | B: tryget()"}]"#,
            );
        let refcache = SUMMARY.replace(r#""impl":"oplog","impls":2"#, r#""impl":"refcache","impls":2"#);
        let mutex = SUMMARY.replace(r#""impl":"oplog""#, r#""impl":"mutex""#);
        let (pairs, summary) = parse(&format!("{revival}\n{refcache}\n{mutex}\n")).unwrap();
        let text = pairs.render();
        assert!(
            text.contains(
                "  refcache refcache add(x) / remove(y): 1 of 12 cases conflict only once quiescent: tryget revived a \
                 dying object\n"
            ),
            "{text}"
        );
        let text = summary.render();
        assert!(text.contains("Refcache versions (2), update pairs: 24 of 24 checked"), "{text}");
        assert!(text.contains("exceptions among Refcache update pairs: none"), "{text}");
        assert!(!text.contains("Mutex versions"), "baselines get no verdict: {text}");
    }

    #[test]
    fn malformed_checker_output_is_a_clear_error() {
        let err = parse("warning: something\n").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().starts_with("commuter output: not JSON"), "{err}");
        let err = parse(&LINE.replace(r#""op_b":"remove","#, "")).unwrap_err();
        assert!(err.to_string().contains("no `op_b` field"), "{err}");
        assert!(parse("[1]").unwrap_err().to_string().contains("not a JSON object"));
        let err = parse(&SUMMARY.replace(r#""impls":2,"#, "")).unwrap_err();
        assert!(err.to_string().contains("no `impls` field"), "{err}");
    }

    #[test]
    #[cfg_attr(miri, ignore)] // stats files: Miri isolates the file system
    fn the_manifest_is_found_from_the_workspace_root_or_reported() {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
        let found = find_manifest([&root]).unwrap();
        assert!(found.ends_with(MANIFEST) && found.is_file(), "{}", found.display());
        let nowhere = std::env::temp_dir().join("no-such-oplog-workspace");
        let err = find_manifest([&nowhere]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(err.to_string().contains("no-such-oplog-workspace/crates/commuter/Cargo.toml"), "{err}");
        // A later root is tried when the first lacks the crate.
        assert_eq!(find_manifest([&nowhere, &root]).unwrap(), found);
    }
}

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
//! compile time or the current directory. Cargo's progress (the first build takes a minute)
//! goes to stderr as usual. Each JSON line the checker prints (one per
//! structure, implementation and pair of operations) becomes a row of the `pairs` annex:
//! `structure`, `impl` (`oplog…` or `mutex…`), `op_a`, `op_b`, `commutative_cases`,
//! `conflict_free_cases`, and the rest listed in [`COLUMNS`]. With `--out DIR` the checker
//! also writes `commuter-<structure>.svg` heatmaps there, and the sink writes
//! `commuter-pairs.csv`.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::experiments::Experiment;
use crate::harness::Settings;
use crate::output::{Annex, Sink};

/// The `pairs` annex's columns, in order: the fields of each checker line.
pub const COLUMNS: [&str; 13] = [
    "structure",
    "impl",
    "op_a",
    "op_b",
    "pair",
    "update_pair",
    "cases",
    "commutative_cases",
    "untraceable_cases",
    "conflict_free_cases",
    "cold_conflict_free_cases",
    "condition",
    "exceptions",
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

    fn points(&self, _: &Settings) -> u64 {
        0
    }

    fn run(&self, _: &Settings, sink: &mut Sink) -> io::Result<()> {
        let built_in = Path::new(env!("CARGO_MANIFEST_DIR")).parent().and_then(Path::parent).map(Path::to_path_buf);
        let roots = [built_in, std::env::current_dir().ok()];
        let manifest = find_manifest(roots.iter().flatten())?;
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
        let mut command = Command::new(&cargo);
        command.args(["run", "--release", "--manifest-path"]).arg(&manifest).args(["--", "--json"]);
        if let Some(dir) = sink.out_dir() {
            command.arg("--out").arg(std::path::absolute(dir)?);
        }
        let shown =
            format!("{} run --release --manifest-path {} -- --json", cargo.to_string_lossy(), manifest.display());
        eprintln!("commuter: running `{shown}` (its own workspace: it builds oplog with the trace feature)");
        let output = command.stdin(Stdio::null()).stderr(Stdio::inherit()).output().map_err(|e| {
            io::Error::new(e.kind(), format!("cannot run `{shown}` (set CARGO or put cargo on PATH): {e}"))
        })?;
        if !output.status.success() {
            return Err(io::Error::other(format!("`{shown}` failed ({})", output.status)));
        }
        let stdout = String::from_utf8(output.stdout)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("`{shown}` printed non-UTF-8: {e}")))?;
        sink.annex(parse(&stdout)?)
    }
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

/// The checker's JSON lines as the `pairs` annex.
///
/// # Errors
/// `InvalidData` naming the line that is not a JSON object or lacks one of [`COLUMNS`].
pub fn parse(stdout: &str) -> io::Result<Annex> {
    let mut annex = Annex::new(
        "pairs",
        "commutative cases and conflict-free cases per structure, implementation and pair (steady state; cold: \
         first touch on each core)",
        &COLUMNS,
    );
    for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
        let bad = |why: String| io::Error::new(io::ErrorKind::InvalidData, format!("commuter output: {why}: {line}"));
        let object = match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(o)) => o,
            Ok(_) => return Err(bad("not a JSON object".into())),
            Err(e) => return Err(bad(format!("not JSON ({e})"))),
        };
        let row = COLUMNS
            .iter()
            .map(|c| object.get(*c).cloned().ok_or_else(|| bad(format!("no `{c}` field"))))
            .collect::<io::Result<Vec<Value>>>()?;
        annex.row(row);
    }
    Ok(annex)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = r#"{"structure":"set","impl":"oplog","op_a":"add","op_b":"remove","pair":"add(x) / remove(y)","update_pair":true,"cases":19,"commutative_cases":12,"untraceable_cases":0,"conflict_free_cases":12,"cold_conflict_free_cases":0,"condition":"iff x ≠ y","exceptions":[]}"#;

    #[test]
    fn checker_lines_become_annex_rows() {
        let annex = parse(&format!("{LINE}\n\n{LINE}\n")).unwrap();
        assert_eq!(annex.name, "pairs");
        assert_eq!(annex.rows.len(), 2);
        let json: Value = serde_json::from_str(&annex.json_lines("commuter")[0]).unwrap();
        assert_eq!(json["experiment"], "commuter");
        assert_eq!(json["annex"], "pairs");
        assert_eq!(json["impl"], "oplog");
        assert_eq!(json["commutative_cases"], 12);
        assert_eq!(json["conflict_free_cases"], 12);
    }

    #[test]
    fn malformed_checker_output_is_a_clear_error() {
        let err = parse("warning: something\n").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().starts_with("commuter output: not JSON"), "{err}");
        let err = parse(&LINE.replace(r#""op_b":"remove","#, "")).unwrap_err();
        assert!(err.to_string().contains("no `op_b` field"), "{err}");
        assert!(parse("[1]").unwrap_err().to_string().contains("not a JSON object"));
    }

    #[test]
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

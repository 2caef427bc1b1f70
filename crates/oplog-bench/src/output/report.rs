//! `report.md`: every experiment of a run in one Markdown document.
//!
//! The report opens with a title carrying the date, a table describing the run (the machine's
//! CPU model and core counts, the Ordo clock's [`describe`](ordo::Ordo::describe), the exact
//! command line, the total time), a warning when the run was quick (one short repetition per
//! point: indicative figures), the [verdict](super::verdict) of every experiment with the
//! targets it missed, and a list of contents; then, per experiment, a section
//! with its description, the same text tables the terminal shows (main table and annexes) in
//! a fenced block, its plot embedded, and links to every file it wrote. All links are
//! relative: the report sits in the output directory beside the files it names.

use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

use super::verdict::Verdict;

/// What the run was and where it ran.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    /// When the report was written, RFC 3339 in UTC.
    pub date: String,
    /// CPU model name (`/proc/cpuinfo`), or "unknown".
    pub cpu_model: String,
    /// Cores: "2 available to this process (2 possible)".
    pub cores: String,
    /// The Ordo clock's one-line description, or why it could not be built.
    pub clock: String,
    /// The command line, shell-quoted.
    pub command: String,
    /// Wall time of the whole run.
    pub elapsed: Duration,
    /// Whether the run was `--quick` (its figures are indicative only).
    pub quick: bool,
}

impl Header {
    /// The header of this process's run, which took `elapsed`, on a machine whose cores
    /// [`cores_line`] described at the start: now, the CPU model, the process-wide Ordo
    /// clock (calibrated now if no experiment used it), `std::env::args`.
    pub fn collect(elapsed: Duration, cores: String, quick: bool) -> Self {
        Self {
            date: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            cpu_model: std::fs::read_to_string("/proc/cpuinfo")
                .ok()
                .and_then(|text| cpu_model(&text))
                .unwrap_or_else(|| "unknown".to_owned()),
            cores,
            clock: match ordo::try_global() {
                Ok(clock) => clock.describe(),
                Err(e) => format!("not available: {e}"),
            },
            command: shell_words(std::env::args()),
            elapsed,
            quick,
        }
    }
}

/// "N available to this process (M possible)". Call it before any experiment runs: Ordo's
/// calibration pins the calling thread, after which the main thread sees one CPU.
pub fn cores_line() -> String {
    let available = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{available} available to this process ({} possible)", ordo::cpu::possible())
}

/// One experiment's part of the report.
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    /// The experiment's name (the section heading and the files' stem).
    pub name: String,
    /// Its one-line description.
    pub description: String,
    /// The main table as the terminal shows it (empty if the experiment has no records).
    pub table: String,
    /// Each annex as the terminal shows it.
    pub annexes: Vec<String>,
    /// Names of the files it wrote into the output directory.
    pub files: Vec<String>,
    /// Who wins where, and the targets missed.
    pub verdict: Verdict,
    /// Wall time of the experiment.
    pub elapsed: Duration,
}

/// The whole report.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The run.
    pub header: Header,
    /// One per experiment, in the order run.
    pub sections: Vec<Section>,
}

impl Report {
    /// The report as Markdown.
    pub fn render(&self) -> String {
        let h = &self.header;
        let mut md = String::new();
        let _ = writeln!(md, "# oplog-bench results, {}\n", h.date);
        let _ = writeln!(md, "| | |\n|---|---|");
        let _ = writeln!(md, "| CPU | {} |", cell(&h.cpu_model));
        let _ = writeln!(md, "| cores | {} |", cell(&h.cores));
        let _ = writeln!(md, "| clock | {} |", cell(&h.clock));
        let _ = writeln!(md, "| command | `{}` |", h.command.replace('`', "'").replace('|', "\\|"));
        let _ = writeln!(md, "| total time | {:.1} s |\n", h.elapsed.as_secs_f64());
        let _ = writeln!(
            md,
            "Values are medians over repetitions measured side by side in this run; compare \
             ratios, not absolute numbers, across machines. A ± after a value is half the range \
             between the slowest and the fastest repetition, in % of the median.\n"
        );
        if h.quick {
            let _ = writeln!(
                md,
                "**Quick run: indicative figures only.** Each point is one short repetition, with \
                 fewer sweep points and smaller sizes; repeated quick runs can differ by 2x or more. \
                 Run without `--quick` for figures to compare.\n"
            );
        }
        let _ = writeln!(
            md,
            "## Verdict\n\nPer experiment and thread count: the fastest implementation at each point \
             and the default configuration against the best baseline. Every ratio reads the same way: \
             above 1.00x the first named is better (faster, or fewer ticks or bytes).\n"
        );
        let mut checked = 0;
        let mut missed = Vec::new();
        for s in &self.sections {
            if s.verdict.lines.is_empty() {
                continue;
            }
            let _ = writeln!(md, "- **{}**", s.name);
            for line in &s.verdict.lines {
                let _ = writeln!(md, "  - {}", cell(line));
            }
            checked += s.verdict.checked;
            missed.extend(s.verdict.missed.iter());
        }
        if checked > 0 {
            let _ = writeln!(md, "\nTargets: {} of {checked} met.", checked - missed.len());
            if !missed.is_empty() {
                let _ = writeln!(md, "Missed:\n");
                for m in &missed {
                    let _ = writeln!(md, "- {m}");
                }
            }
        }
        let _ = writeln!(md, "\n## Contents\n");
        for s in &self.sections {
            let _ = writeln!(md, "- [{}](#{}): {}", s.name, anchor(&s.name), s.description);
        }
        for s in &self.sections {
            let _ = writeln!(md, "\n## {}\n\n{}\n", s.name, s.description);
            let blocks: Vec<&str> =
                std::iter::once(s.table.as_str()).chain(s.annexes.iter().map(String::as_str)).collect();
            for block in blocks.into_iter().filter(|b| !b.is_empty()) {
                let _ = writeln!(md, "```text\n{}```\n", block);
            }
            let plot = format!("{}.svg", s.name);
            if s.files.contains(&plot) {
                let _ = writeln!(md, "![{}]({plot})\n", s.name);
            }
            let links: Vec<String> = s.files.iter().map(|f| format!("[{f}]({f})")).collect();
            let _ = writeln!(md, "Files: {}. Took {:.1} s.", links.join(", "), s.elapsed.as_secs_f64());
        }
        md
    }
}

/// The first `model name` in `/proc/cpuinfo`'s text (x86), else the first `Model` or
/// `CPU part` line (some ARM kernels).
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "Model", "CPU part"].iter().find_map(|key| {
        cpuinfo.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim().to_owned())
        })
    })
}

/// `args` joined by spaces, each quoted for a POSIX shell when it holds anything but
/// letters, digits and `_./=:,+-`.
pub fn shell_words(args: impl IntoIterator<Item = String>) -> String {
    let quote = |a: String| {
        let plain = !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "_./=:,+-".contains(c));
        if plain { a } else { format!("'{}'", a.replace('\'', "'\\''")) }
    };
    args.into_iter().map(quote).collect::<Vec<_>>().join(" ")
}

/// GitHub-style heading anchor: lower case, spaces to `-`, other punctuation except `-` and
/// `_` dropped.
fn anchor(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Text for a Markdown table cell: `|` escaped, line breaks as spaces.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Report {
        Report {
            header: Header {
                date: "2026-05-01T12:34:56Z".into(),
                cpu_model: "AMD EPYC".into(),
                cores: "2 available to this process (2 possible)".into(),
                clock: "rdtscp clock, boundary 70 ticks | measured".into(),
                command: shell_words(["oplog-bench", "all", "--quick", "--out", "my dir"].map(String::from)),
                elapsed: Duration::from_millis(12_345),
                quick: true,
            },
            sections: vec![
                Section {
                    name: "read-mix".into(),
                    description: "throughput against the update percentage".into(),
                    table: "read-mix: ...\nimpl  update_pct=50\noplog  1.00M\n".into(),
                    annexes: vec!["versus\nthreads  ratio\n2  2.5x\n".into()],
                    files: vec!["read-mix.csv".into(), "read-mix.svg".into(), "read-mix-versus.csv".into()],
                    verdict: Verdict {
                        lines: vec![
                            "2T: update_pct=50: fastest `oplog`, `oplog` 2.50x the best baseline (`mutex`)".into(),
                        ],
                        checked: 2,
                        missed: vec!["read-mix: `oplog` at 1T, update_pct=50: 0.50x `mutex`, target >= 0.80x".into()],
                    },
                    elapsed: Duration::from_millis(1500),
                },
                Section {
                    name: "memory".into(),
                    description: "bytes per object".into(),
                    table: "memory: ...\nplain  8\n".into(),
                    annexes: vec![],
                    files: vec!["memory.csv".into(), "memory.svg".into()],
                    verdict: Verdict::default(),
                    elapsed: Duration::from_millis(200),
                },
            ],
        }
    }

    #[test]
    fn renders_header_and_every_section_with_its_tables_and_links() {
        let md = sample().render();
        assert!(md.starts_with("# oplog-bench results, 2026-05-01T12:34:56Z\n"), "{md}");
        assert!(md.contains("| CPU | AMD EPYC |"));
        assert!(md.contains("| clock | rdtscp clock, boundary 70 ticks \\| measured |"), "{md}");
        assert!(md.contains("| command | `oplog-bench all --quick --out 'my dir'` |"), "{md}");
        assert!(md.contains("| total time | 12.3 s |"));
        assert!(md.contains("- [read-mix](#read-mix): throughput"));
        assert!(md.contains("## read-mix\n\nthroughput against the update percentage\n"));
        assert!(md.contains("```text\nread-mix: ...\nimpl  update_pct=50\noplog  1.00M\n```"));
        assert!(md.contains("```text\nversus\nthreads  ratio\n2  2.5x\n```"));
        assert!(md.contains("![read-mix](read-mix.svg)"));
        assert!(md.contains("[read-mix-versus.csv](read-mix-versus.csv)"));
        assert!(md.contains("## memory") && md.contains("![memory](memory.svg)"));
        assert!(md.contains("Took 1.5 s."));
        assert!(md.contains("**Quick run: indicative figures only.**"), "{md}");
        // The verdict comes before the contents and the sections, with its missed targets.
        let verdict = md.find("## Verdict").expect("a verdict");
        assert!(verdict < md.find("## Contents").unwrap() && verdict < md.find("## read-mix").unwrap());
        assert!(md.contains("- **read-mix**\n  - 2T: update_pct=50: fastest `oplog`"), "{md}");
        assert!(md.contains("Targets: 1 of 2 met.\nMissed:\n\n- read-mix: `oplog` at 1T"), "{md}");
        assert!(!md.contains("- **memory**"), "an experiment without a verdict gets no line");
        // Every link points at a file the section says it wrote.
        for s in &sample().sections {
            for f in &s.files {
                assert!(md.contains(&format!("({f})")), "no link to {f}");
            }
        }
    }

    #[test]
    fn cpu_model_from_cpuinfo() {
        let x86 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel\t\t: 1\nmodel name\t: AMD EPYC 7B13\n";
        assert_eq!(cpu_model(x86).as_deref(), Some("AMD EPYC 7B13"));
        let arm = "processor\t: 0\nCPU part\t: 0xd0c\n";
        assert_eq!(cpu_model(arm).as_deref(), Some("0xd0c"));
        assert_eq!(cpu_model("nothing here"), None);
    }

    #[test]
    fn shell_quoting() {
        let words = |a: &[&str]| shell_words(a.iter().map(|s| s.to_string()));
        assert_eq!(words(&["oplog-bench", "all", "--threads", "1,2"]), "oplog-bench all --threads 1,2");
        assert_eq!(words(&["a b", "it's", ""]), "'a b' 'it'\\''s' ''");
    }

    #[test]
    fn the_header_describes_this_machine() {
        let h = Header::collect(Duration::from_secs(1), cores_line(), false);
        assert!(h.date.ends_with('Z') && h.date.len() == 20, "{}", h.date);
        assert!(h.cores.contains("available"));
        assert!(!h.command.is_empty());
    }
}

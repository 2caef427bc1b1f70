//! Configuration from the environment, checked strictly: a value that is set but malformed
//! is an error naming the variable, the value and what was expected, never a silent default.
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `ORDO_CLOCK` | `hardware` (invariant per-core clock, falling back to the OS clock where there is none) or `monotonic` (the OS monotonic clock) | `hardware` |
//! | `ORDO_BOUNDARY` | pins the uncertainty window, in clock ticks, at most [`MAX_BOUNDARY`] (10⁹), and skips calibration | measured |
//! | `ORDO_CALIBRATION_RUNS` | exchanges per ordered CPU pair when measuring | 5000 |

use std::fmt;

/// Name of the variable that selects the clock source.
pub const CLOCK_VAR: &str = "ORDO_CLOCK";
/// Name of the variable that pins the boundary.
pub const BOUNDARY_VAR: &str = "ORDO_BOUNDARY";
/// Name of the variable that sets the number of calibration runs per CPU pair.
pub const RUNS_VAR: &str = "ORDO_CALIBRATION_RUNS";

/// Largest boundary accepted, in ticks: 10⁹, a third of a second at 3 GHz. Every ordered
/// update that waits out the boundary ([`crate::Clock::new_time`]) stalls that long, and
/// measured boundaries are below 10⁴ ticks (003 §6.2), so a larger value is a mistake; near
/// `u64::MAX` the wait would never end.
pub const MAX_BOUNDARY: u64 = 1_000_000_000;

/// Default number of clock exchanges per ordered pair of CPUs. 003 Figure 4 uses 100,000;
/// the minimum settles far earlier, and all pairs of a 48-CPU machine then take seconds.
pub const DEFAULT_CALIBRATION_RUNS: usize = 5000;

/// Which clock [`crate::Ordo`] reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceChoice {
    /// The invariant per-core hardware clock if this machine has one, else the OS clock.
    Hardware,
    /// The OS monotonic clock.
    Monotonic,
}

/// Settings for building the process-wide [`crate::Ordo`] clock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Which clock to read.
    pub source: SourceChoice,
    /// A pinned boundary in ticks, at most [`MAX_BOUNDARY`]; `None` to measure it.
    pub boundary: Option<u64>,
    /// Exchanges per ordered CPU pair when measuring (at least 1).
    pub calibration_runs: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Self { source: SourceChoice::Hardware, boundary: None, calibration_runs: DEFAULT_CALIBRATION_RUNS }
    }
}

/// A malformed configuration value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingsError {
    /// The variable that was set.
    pub variable: &'static str,
    /// Its value as found (lossily decoded if it was not UTF-8).
    pub value: String,
    /// What a valid value looks like.
    pub expected: &'static str,
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={:?} is not valid: expected {}", self.variable, self.value, self.expected)
    }
}

impl std::error::Error for SettingsError {}

impl Settings {
    /// Reads the settings from the process environment.
    ///
    /// # Errors
    /// When a variable is set to a malformed value (including a value that is not UTF-8).
    pub fn from_env() -> Result<Self, SettingsError> {
        Self::from_lookup(|name| std::env::var_os(name).map(|v| v.to_string_lossy().into_owned()))
    }

    /// Reads the settings through `lookup`, which returns a variable's value if it is set.
    ///
    /// # Errors
    /// When a variable is set to a malformed value.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, SettingsError> {
        let mut s = Settings::default();
        if let Some(v) = lookup(CLOCK_VAR) {
            s.source = match v.trim() {
                "hardware" => SourceChoice::Hardware,
                "monotonic" => SourceChoice::Monotonic,
                _ => return Err(invalid(CLOCK_VAR, v, "`hardware` or `monotonic`")),
            };
        }
        if let Some(v) = lookup(BOUNDARY_VAR) {
            s.boundary = match v.trim().parse::<u64>() {
                Ok(b) if b <= MAX_BOUNDARY => Some(b),
                _ => {
                    return Err(invalid(
                        BOUNDARY_VAR,
                        v,
                        "a whole number of clock ticks from 0 to 1000000000 (for example ORDO_BOUNDARY=300)",
                    ));
                }
            };
        }
        if let Some(v) = lookup(RUNS_VAR) {
            s.calibration_runs = match v.trim().parse::<usize>() {
                Ok(n) if n >= 1 => n,
                _ => {
                    return Err(invalid(
                        RUNS_VAR,
                        v,
                        "a whole number of runs, at least 1 (for example ORDO_CALIBRATION_RUNS=5000)",
                    ));
                }
            };
        }
        Ok(s)
    }
}

fn invalid(variable: &'static str, value: String, expected: &'static str) -> SettingsError {
    SettingsError { variable, value, expected }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(vars: &[(&str, &str)]) -> Result<Settings, SettingsError> {
        Settings::from_lookup(|name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string()))
    }

    #[test]
    fn unset_variables_give_the_defaults() {
        assert_eq!(parse(&[]).unwrap(), Settings::default());
    }

    #[test]
    fn valid_values_are_taken() {
        let s = parse(&[(CLOCK_VAR, "monotonic"), (BOUNDARY_VAR, " 300 "), (RUNS_VAR, "12")]).unwrap();
        assert_eq!(s, Settings { source: SourceChoice::Monotonic, boundary: Some(300), calibration_runs: 12 });
        assert_eq!(parse(&[(BOUNDARY_VAR, "0")]).unwrap().boundary, Some(0));
        assert_eq!(parse(&[(BOUNDARY_VAR, "1000000000")]).unwrap().boundary, Some(MAX_BOUNDARY));
    }

    #[test]
    fn a_malformed_boundary_is_a_clear_error() {
        for bad in ["12x", "-5", "", "1.5", "ten", "99999999999999999999999", "18446744073709551615", "1000000001"] {
            let err = parse(&[(BOUNDARY_VAR, bad)]).unwrap_err();
            assert_eq!(err.variable, BOUNDARY_VAR);
            let msg = err.to_string();
            assert!(msg.starts_with(&format!("ORDO_BOUNDARY={bad:?} is not valid")), "{msg}");
            assert!(msg.contains("whole number of clock ticks"), "{msg}");
        }
    }

    #[test]
    fn a_malformed_clock_or_run_count_is_a_clear_error() {
        let err = parse(&[(CLOCK_VAR, "tsc")]).unwrap_err();
        assert_eq!(err.to_string(), "ORDO_CLOCK=\"tsc\" is not valid: expected `hardware` or `monotonic`");
        for bad in ["0", "-1", "many"] {
            let err = parse(&[(RUNS_VAR, bad)]).unwrap_err();
            assert!(err.to_string().contains("at least 1"), "{err}");
        }
    }
}

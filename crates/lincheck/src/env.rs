//! Strict parsing of the numbers the correctness suites read from the environment
//! (`OPLOG_LINCHECK_HISTORIES`, `OPLOG_SOAK_UPDATES`, ...): a variable that is set but
//! malformed is an error naming it, its value and what was expected, never a silent
//! default (the convention of `ordo::settings`).

use std::fmt;

/// A malformed environment variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvError {
    /// The variable.
    pub variable: String,
    /// Its value as found (lossily decoded if it was not UTF-8).
    pub value: String,
    /// What a valid value looks like.
    pub expected: String,
}

impl fmt::Display for EnvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={:?} is not valid: expected {}", self.variable, self.value, self.expected)
    }
}

impl std::error::Error for EnvError {}

/// Reads `variable` from the process environment as a whole number of at least `min`
/// (`_` may separate digits: `1_000_000`), or `default` when it is unset.
///
/// # Errors
/// When it is set to anything else, including a value that is not UTF-8.
pub fn number(variable: &str, default: u64, min: u64) -> Result<u64, EnvError> {
    let value = std::env::var_os(variable).map(|v| v.to_string_lossy().into_owned());
    parse_number(variable, value.as_deref(), default, min)
}

/// [`number`] on a given value (`None`: unset).
///
/// # Errors
/// When `value` is set and is not a whole number of at least `min`.
pub fn parse_number(variable: &str, value: Option<&str>, default: u64, min: u64) -> Result<u64, EnvError> {
    let Some(value) = value else { return Ok(default) };
    let digits: String = value.trim().chars().filter(|&c| c != '_').collect();
    let valid = !value.trim().starts_with('_') && digits.chars().all(|c| c.is_ascii_digit());
    match digits.parse::<u64>() {
        Ok(n) if valid && n >= min => Ok(n),
        _ => Err(EnvError {
            variable: variable.to_owned(),
            value: value.to_owned(),
            expected: format!("a whole number, at least {min} (for example {variable}={default})"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_gives_the_default_and_numbers_parse() {
        assert_eq!(parse_number("N", None, 7, 1), Ok(7));
        assert_eq!(parse_number("N", Some("1000000"), 7, 1), Ok(1_000_000));
        assert_eq!(parse_number("N", Some(" 1_000_000 "), 7, 1), Ok(1_000_000));
        assert_eq!(parse_number("SEED", Some("0"), 7, 0), Ok(0));
    }

    #[test]
    fn malformed_numbers_are_clear_errors() {
        for bad in ["", "0", "-3", "1e6", "ten", "_1", "99999999999999999999999", "1.5"] {
            let err = parse_number("OPLOG_X", Some(bad), 10_000, 1).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!(
                    "OPLOG_X={bad:?} is not valid: expected a whole number, at least 1 (for example OPLOG_X=10000)"
                )
            );
        }
    }
}

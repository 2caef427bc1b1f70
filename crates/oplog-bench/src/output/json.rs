//! JSON lines: one object per measured point, printed as soon as it is measured.
//!
//! Each line is a [`Record`] serialised with serde: `experiment`, `impl`, `threads`,
//! `ops_per_sec`, `min_ops_per_sec`, `max_ops_per_sec`, `reps`, `duration_ms`, then the
//! experiment-specific fields. Non-finite numbers become `null`.

use super::Record;

/// `record` as one line of JSON (no trailing newline).
pub fn json_line(record: &Record) -> String {
    serde_json::to_string(record).expect("a Record always serialises")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::tests::record;
    use serde_json::Value;

    #[test]
    fn line_shape() {
        let line = json_line(&record("percore-atomic", 2, 1.5e8).with("update_pct", 10));
        assert!(!line.contains('\n'));
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["experiment"], "test");
        assert_eq!(v["impl"], "percore-atomic");
        assert_eq!(v["threads"], 2);
        assert_eq!(v["ops_per_sec"], 1.5e8);
        assert_eq!(v["min_ops_per_sec"], 1.5e8);
        assert_eq!(v["max_ops_per_sec"], 1.5e8);
        assert_eq!(v["reps"], 1);
        assert_eq!(v["duration_ms"], 20);
        assert_eq!(v["update_pct"], 10);
        assert!(v.get("impl_id").is_none() && v.get("extra").is_none());
    }
}

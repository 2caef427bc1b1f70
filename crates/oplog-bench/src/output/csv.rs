//! CSV files: a header row, then one row per record with every field.
//!
//! Columns are the fixed record fields ([`FIXED_FIELDS`]) followed by every experiment-specific
//! field seen in any record, in order of first appearance; a record lacking one leaves the cell
//! empty. Fields are quoted per RFC 4180 when they hold a comma, a quote, or a line break.

use std::borrow::Cow;
use std::io::{self, Write};

use serde_json::Value;

use super::{FIXED_FIELDS, Record};

/// Writes `records` as CSV (header row included) to `out`.
pub fn write(records: &[Record], out: &mut impl Write) -> io::Result<()> {
    let mut columns: Vec<String> = FIXED_FIELDS.iter().map(|f| (*f).to_owned()).collect();
    for record in records {
        for key in record.extra.keys() {
            if !columns.contains(key) {
                columns.push(key.clone());
            }
        }
    }
    write_row(out, columns.iter().map(|c| Cow::Borrowed(c.as_str())))?;
    for record in records {
        let object = record.to_json();
        write_row(out, columns.iter().map(|c| object.get(c).map_or(Cow::Borrowed(""), cell)))?;
    }
    Ok(())
}

/// One JSON value as a CSV cell's text: strings as they are, `null` empty, others as JSON.
pub fn cell(value: &Value) -> Cow<'_, str> {
    match value {
        Value::String(s) => Cow::Borrowed(s),
        Value::Null => Cow::Borrowed(""),
        other => Cow::Owned(other.to_string()),
    }
}

/// Writes one CSV row of already-rendered cells.
pub fn write_row<'a>(out: &mut impl Write, cells: impl Iterator<Item = Cow<'a, str>>) -> io::Result<()> {
    let line: Vec<String> = cells.map(|c| escape(&c).into_owned()).collect();
    writeln!(out, "{}", line.join(","))
}

/// `field` as a CSV field: unchanged, or quoted with inner quotes doubled if it contains a
/// comma, a double quote, CR or LF.
pub fn escape(field: &str) -> Cow<'_, str> {
    if field.contains([',', '"', '\n', '\r']) {
        Cow::Owned(format!("\"{}\"", field.replace('"', "\"\"")))
    } else {
        Cow::Borrowed(field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::tests::record;

    #[test]
    fn escaping() {
        assert_eq!(escape("plain"), "plain");
        assert_eq!(escape(""), "");
        assert_eq!(escape("a,b"), "\"a,b\"");
        assert_eq!(escape("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(escape("two\nlines"), "\"two\nlines\"");
        assert_eq!(escape("cr\r"), "\"cr\r\"");
    }

    #[test]
    fn header_rows_and_extra_columns() {
        let records =
            vec![record("atomic", 1, 100.0), record("a,b", 2, 2.5e6).with("update_pct", 10).with("note", "x\"y")];
        let mut out = Vec::new();
        write(&records, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "experiment,impl,threads,ops_per_sec,min_ops_per_sec,max_ops_per_sec,reps,\
                 duration_ms,note,update_pct",
                "test,atomic,1,100.0,100.0,100.0,1,20,,",
                "test,\"a,b\",2,2500000.0,2500000.0,2500000.0,1,20,\"x\"\"y\",10",
            ]
        );
    }
}

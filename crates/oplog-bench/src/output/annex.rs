//! Annexes: result tables an experiment reports besides its throughput records, such as the
//! clock's calibration matrix (003 Figure 9) or a memory breakdown.
//!
//! An annex has a name, column names and rows of JSON values. With `--json` each row is one
//! line `{"experiment": …, "annex": …, <column>: <value>, …}` (so scripts tell annex lines from
//! records by the `annex` field); otherwise it is printed as an aligned table after the
//! experiment's main table. With `--out DIR` it is written to `DIR/<experiment>-<annex>.csv`.
//!
//! Columns too wide for a terminal (a list of exceptions with their reasons) can be left out
//! of the text table ([`Annex::hide_in_text`]) and said instead in notes printed under it
//! ([`Annex::note`]); JSON lines and CSV keep every column.

use std::io::{self, Write};

use serde_json::{Map, Value};

use super::csv;

/// A named table of extra results.
#[derive(Clone, Debug, PartialEq)]
pub struct Annex {
    /// Stable name: the `annex` field of JSON lines and part of the CSV file name.
    pub name: String,
    /// One line shown above the table on the terminal.
    pub title: String,
    /// Column names.
    pub columns: Vec<String>,
    /// Rows, each with one value per column.
    pub rows: Vec<Vec<Value>>,
    /// Columns left out of the text table (JSON and CSV keep them).
    pub hidden_in_text: Vec<String>,
    /// Lines printed under the text table.
    pub notes: Vec<String>,
}

impl Annex {
    /// An empty annex.
    pub fn new(name: &str, title: &str, columns: &[&str]) -> Self {
        Self {
            name: name.to_owned(),
            title: title.to_owned(),
            columns: columns.iter().map(|c| (*c).to_owned()).collect(),
            rows: Vec::new(),
            hidden_in_text: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Leaves `column` out of the text table. Panics if there is no such column.
    pub fn hide_in_text(mut self, column: &str) -> Self {
        assert!(self.columns.iter().any(|c| c == column), "annex `{}` has no column `{column}`", self.name);
        self.hidden_in_text.push(column.to_owned());
        self
    }

    /// Adds a line to print under the text table.
    pub fn note(&mut self, line: impl Into<String>) {
        self.notes.push(line.into());
    }

    /// Appends a row. Panics if it does not have one value per column.
    pub fn row(&mut self, values: Vec<Value>) {
        assert_eq!(values.len(), self.columns.len(), "annex `{}`: a row needs one value per column", self.name);
        self.rows.push(values);
    }

    /// The rows as JSON lines tagged with `experiment` and this annex's name.
    pub fn json_lines(&self, experiment: &str) -> Vec<String> {
        self.rows
            .iter()
            .map(|row| {
                let mut object = Map::new();
                object.insert("experiment".into(), experiment.into());
                object.insert("annex".into(), self.name.clone().into());
                for (column, value) in self.columns.iter().zip(row) {
                    object.insert(column.clone(), value.clone());
                }
                Value::Object(object).to_string()
            })
            .collect()
    }

    /// The annex as an aligned text table under its title, without the hidden columns,
    /// then its notes, ending in a newline.
    pub fn render(&self) -> String {
        let shown: Vec<usize> =
            (0..self.columns.len()).filter(|&i| !self.hidden_in_text.contains(&self.columns[i])).collect();
        let mut rows = vec![shown.iter().map(|&i| self.columns[i].clone()).collect()];
        rows.extend(self.rows.iter().map(|r| {
            shown.iter().map(|&i| if r[i].is_null() { "-".into() } else { csv::cell(&r[i]).into_owned() }).collect()
        }));
        let mut out = format!("{}\n{}", self.title, oplog_table::align(&rows, 1));
        for note in &self.notes {
            out.push_str(note);
            out.push('\n');
        }
        out
    }

    /// Writes the annex as CSV with a header row.
    pub fn write_csv(&self, out: &mut impl Write) -> io::Result<()> {
        csv::write_row(out, self.columns.iter().map(|c| c.as_str().into()))?;
        for row in &self.rows {
            csv::write_row(out, row.iter().map(csv::cell))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Annex {
        let mut a = Annex::new("offsets", "clock offsets (ticks)", &["writer", "cpu0", "cpu1"]);
        a.row(vec![json!(0), Value::Null, json!(77)]);
        a.row(vec![json!(1), json!(27), Value::Null]);
        a
    }

    #[test]
    fn json_lines_carry_the_experiment_and_annex_names() {
        let lines = sample().json_lines("clock");
        let first: Value = serde_json::from_str(&lines[0]).unwrap();
        assert_eq!(first, json!({"experiment": "clock", "annex": "offsets", "writer": 0, "cpu0": null, "cpu1": 77}));
        assert_eq!(lines.len(), 2);
    }

    #[test]
    fn text_and_csv_forms() {
        let a = sample();
        let text = a.render();
        assert!(text.starts_with("clock offsets (ticks)\nwriter  cpu0  cpu1\n"), "{text}");
        assert!(text.contains("0          -    77"), "{text}");
        let mut csv_text = Vec::new();
        a.write_csv(&mut csv_text).unwrap();
        assert_eq!(String::from_utf8(csv_text).unwrap(), "writer,cpu0,cpu1\n0,,77\n1,27,\n");
    }

    #[test]
    fn hidden_columns_stay_in_json_and_csv_and_notes_follow_the_table() {
        let mut a = sample().hide_in_text("cpu0");
        a.note("note: cpu0 is in the CSV");
        let text = a.render();
        assert!(text.starts_with("clock offsets (ticks)\nwriter  cpu1\n"), "{text}");
        assert!(!text.contains("27"), "{text}");
        assert!(text.ends_with("1          -\nnote: cpu0 is in the CSV\n"), "{text}");
        let first: Value = serde_json::from_str(&a.json_lines("clock")[1]).unwrap();
        assert_eq!(first["cpu0"], 27);
        let mut csv_text = Vec::new();
        a.write_csv(&mut csv_text).unwrap();
        assert!(String::from_utf8(csv_text).unwrap().starts_with("writer,cpu0,cpu1\n"));
    }

    #[test]
    #[should_panic(expected = "has no column `cpu9`")]
    fn hiding_an_unknown_column_is_a_bug() {
        let _ = sample().hide_in_text("cpu9");
    }

    #[test]
    #[should_panic(expected = "one value per column")]
    fn a_short_row_is_rejected() {
        sample().row(vec![json!(1)]);
    }
}

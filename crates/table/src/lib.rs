//! `oplog-table`: the one plain-text column formatter of the repository, shared by the
//! benchmark tool (`oplog-bench`'s terminal tables, annexes and `compare` output) and the
//! commuter (its per-structure report and its summary).
//!
//! The commuter is its own cargo workspace (it turns on `oplog`'s `trace` feature, which
//! must not reach the main workspace's builds), so it cannot depend on `oplog-bench`; both
//! depend on this crate instead, so that their tables are laid out by the same code.
//!
//! ```
//! let rows = vec![
//!     vec!["impl".to_owned(), "1T".to_owned(), "2T".to_owned()],
//!     vec!["atomic".to_owned(), "100M".to_owned(), "40.0M".to_owned()],
//! ];
//! assert_eq!(oplog_table::align(&rows, 1), "impl      1T     2T\natomic  100M  40.0M\n");
//! ```

/// `rows` as text columns, each padded to its widest cell (counted in characters) and two
/// spaces apart: the first `left_columns` columns left-aligned (labels), the others
/// right-aligned (figures). One line per row, each ending in a newline, without trailing
/// spaces; a row shorter than the others simply ends early.
pub fn align(rows: &[Vec<String>], left_columns: usize) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().filter_map(|r| r.get(c)).map(|cell| cell.chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, cell)| {
                let w = widths[c];
                if c < left_columns { format!("{cell:<w$}") } else { format!("{cell:>w$}") }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(cells: &[&[&str]]) -> Vec<Vec<String>> {
        cells.iter().map(|r| r.iter().map(|&c| c.to_owned()).collect()).collect()
    }

    /// The commuter's tables: two label columns.
    #[test]
    fn two_left_columns() {
        let rows = rows(&[&["a", "bb", "1"], &["ccc", "d", "22"]]);
        assert_eq!(align(&rows, 2), "a    bb   1\nccc  d   22\n");
    }

    /// The bench's tables: one label column; missing cells and trailing padding trimmed.
    #[test]
    fn one_left_column() {
        let rows = rows(&[&["impl", "1T", "2T", "2T/1T"], &["a", "5", "-", "-"], &["percore", "", "7"]]);
        let lines = ["impl     1T  2T  2T/1T", "a         5   -      -", "percore       7"];
        assert_eq!(align(&rows, 1), lines.map(|l| format!("{l}\n")).concat());
    }

    /// Widths count characters, not bytes.
    #[test]
    fn widths_count_characters() {
        let rows = rows(&[&["x", "45.3M ±3%"], &["yy", "1"]]);
        assert_eq!(align(&rows, 1), "x   45.3M ±3%\nyy          1\n");
    }

    #[test]
    fn no_rows_is_empty() {
        assert_eq!(align(&[], 1), "");
        assert_eq!(align(&rows(&[&[]]), 0), "\n");
    }
}

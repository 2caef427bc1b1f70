//! Heatmaps in the style of 002 Figure 7-1: for each pair of operations, how many of the
//! commutative cases are *not* conflict-free, one panel per implementation side by side
//! (the OpLog version beside the mutex baseline).
//!
//! Each cell is a pair (row: operation A, column: operation B); its text is "not
//! conflict-free / commutative cases checked", its colour the share not conflict-free, from
//! pale green (none) through red (all). Pairs with no case checked (none commutes, or every
//! commutative case is outside the implementation's contract) are grey; a panel whose
//! implementation has a contract says how many cases it left out. The SVG is written by
//! hand: rectangles and text, no dependencies.

use std::fmt::Write as _;

use crate::report::StructureReport;

const CELL: usize = 64;
const GAP: usize = 48;
const TOP: usize = 96;
const CHAR: usize = 8;

/// Escapes text for SVG.
fn xml(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The fill for a share `f` (0..=1) of cases that are not conflict-free.
fn color(f: f64) -> String {
    if f <= 0.0 {
        return "#e5f5e0".into();
    }
    // From light red (#fcbba1) to dark red (#a50f15).
    let lerp = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * f).round() as u8;
    format!("#{:02x}{:02x}{:02x}", lerp(0xfc, 0xa5), lerp(0xbb, 0x0f), lerp(0xa1, 0x15))
}

/// The heatmap of `report` as an SVG document, or `None` when it has no implementation.
pub fn render(report: &StructureReport) -> Option<String> {
    if report.impls.is_empty() {
        return None;
    }
    let mut kinds: Vec<&str> = Vec::new();
    for p in &report.pairs {
        for k in [p.op_a.as_str(), p.op_b.as_str()] {
            if !kinds.contains(&k) {
                kinds.push(k);
            }
        }
    }
    let n = kinds.len();
    let label_w = kinds.iter().map(|k| k.len()).max().unwrap_or(0) * CHAR + 16;
    let panel_w = (label_w + n * CELL).max(40 * CHAR);
    let width = report.impls.len() * panel_w + (report.impls.len() - 1) * GAP + 2 * 16;
    let height = TOP + n * CELL + 72;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="13">"#
    );
    let _ = writeln!(svg, r#"<rect width="{width}" height="{height}" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="16" y="24" font-size="16" font-weight="bold">{}: commutative cases that are not conflict-free (002 Figure 7-1)</text>"#,
        xml(&report.structure)
    );
    for (i, imp) in report.impls.iter().enumerate() {
        let x0 = 16 + i * (panel_w + GAP);
        let totals = report.totals(i, false);
        let _ = writeln!(
            svg,
            r#"<text x="{x0}" y="52" font-weight="bold">{} ({} of {} cases conflict-free)</text>"#,
            xml(&imp.id),
            totals.conflict_free,
            totals.commutative
        );
        if totals.outside_contract > 0 {
            let _ = writeln!(
                svg,
                r#"<text x="{x0}" y="70" font-size="12" fill="dimgray">{} more outside its contract, not run</text>"#,
                totals.outside_contract
            );
        }
        let gx = x0 + label_w;
        for (c, k) in kinds.iter().enumerate() {
            let _ = writeln!(
                svg,
                r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
                gx + c * CELL + CELL / 2,
                TOP - 10,
                xml(k)
            );
            let _ = writeln!(
                svg,
                r#"<text x="{}" y="{}" text-anchor="end">{}</text>"#,
                gx - 8,
                TOP + c * CELL + CELL / 2 + 5,
                xml(k)
            );
        }
        for (pair, ip) in report.pairs.iter().zip(&imp.pairs) {
            let (Some(r), Some(c)) =
                (kinds.iter().position(|k| *k == pair.op_a), kinds.iter().position(|k| *k == pair.op_b))
            else {
                continue;
            };
            let (x, y) = (gx + c * CELL, TOP + r * CELL);
            let bad = ip.traced - ip.conflict_free;
            let share = if ip.traced == 0 { 0.0 } else { bad as f64 / ip.traced as f64 };
            let (fill, text) = if ip.traced == 0 {
                ("#eeeeee".to_owned(), "—".to_owned())
            } else {
                (color(share), format!("{bad}/{}", ip.traced))
            };
            let ink = if share > 0.5 { "white" } else { "black" };
            let outside = if ip.outside_contract() == 0 {
                String::new()
            } else {
                format!(" ({} more outside the contract, not run)", ip.outside_contract())
            };
            let _ = writeln!(
                svg,
                r#"<rect x="{x}" y="{y}" width="{CELL}" height="{CELL}" fill="{fill}" stroke="white" stroke-width="2"><title>{}: {} of {} commutative cases checked not conflict-free{outside}</title></rect>"#,
                xml(&pair.title),
                bad,
                ip.traced
            );
            let _ = writeln!(
                svg,
                r#"<text x="{}" y="{}" text-anchor="middle" fill="{ink}">{text}</text>"#,
                x + CELL / 2,
                y + CELL / 2 + 5
            );
        }
    }
    for (i, line) in [
        "row: operation A, column: operation B; cell: commutative cases not conflict-free / commutative cases checked",
        "(steady state: the object already in both cores' per-core state); green: none, red: all, grey: none checked",
    ]
    .iter()
    .enumerate()
    {
        let _ =
            writeln!(svg, r#"<text x="16" y="{}" font-size="12" fill="dimgray">{line}</text>"#, height - 32 + i * 16);
    }
    svg.push_str("</svg>\n");
    Some(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{ImplPair, ImplReport, PairReport};

    fn pair(a: &str, b: &str, commutative: usize) -> PairReport {
        PairReport {
            op_a: a.into(),
            op_b: b.into(),
            title: format!("{a} / {b}"),
            update_pair: true,
            cases: commutative,
            commutative,
            untraceable: 0,
            condition: "always".into(),
            classes: Vec::new(),
            tests: Vec::new(),
        }
    }

    #[test]
    fn one_panel_per_implementation_and_one_cell_per_pair() {
        let report = StructureReport {
            structure: "s<t>".into(),
            model: "m".into(),
            states: 1,
            depth: 1,
            pairs: vec![pair("inc", "inc", 4), pair("inc", "read", 0), pair("read", "read", 2)],
            impls: ["oplog", "mutex"]
                .iter()
                .map(|id| ImplReport {
                    id: (*id).into(),
                    about: String::new(),
                    contract: None,
                    pairs: vec![
                        ImplPair { traced: 4, conflict_free: if *id == "oplog" { 4 } else { 0 }, ..Default::default() },
                        ImplPair::default(),
                        ImplPair { traced: 2, conflict_free: 0, ..Default::default() },
                    ],
                })
                .collect(),
        };
        let svg = render(&report).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("s&lt;t&gt;"), "titles are escaped");
        assert!(svg.contains("oplog (4 of 6 cases conflict-free)"));
        assert!(svg.contains("mutex (0 of 6 cases conflict-free)"));
        assert!(!svg.contains("outside"));
        assert_eq!(svg.matches("<rect x=").count(), 6, "three pairs in each of two panels");
        assert!(svg.contains(">0/4<") && svg.contains(">4/4<") && svg.contains(">—<"));
        assert_eq!(color(0.0), "#e5f5e0");
        assert_eq!(color(1.0), "#a50f15");
        // A contract that leaves cases out is said in the panel and the cell.
        let mut contracted = report.clone();
        contracted.impls[0].pairs[0] =
            ImplPair { traced: 3, outside_tests: vec![0], conflict_free: 3, ..Default::default() };
        let svg = render(&contracted).unwrap();
        assert!(svg.contains("oplog (3 of 5 cases conflict-free)") && svg.contains("1 more outside its contract"));
        assert!(svg.contains("(1 more outside the contract, not run)") && svg.contains(">0/3<"));
        let mut empty = report.clone();
        empty.impls.clear();
        assert!(render(&empty).is_none());
    }
}

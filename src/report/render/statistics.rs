//! `--statistics`: how many findings each rule has, most first (ties in id order), instead of the
//! findings themselves, as ruff's `--statistics` prints:
//!
//! ```text
//! 3  RA002  fixed-delay
//! 1  RA001  unbounded-retry
//! ```
//!
//! With `--format json`, one JSON array: `[{"rule":"RA002","name":"fixed-delay","count":3}]`.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;

use crate::checks::registry::Rule;
use crate::report::ScanReport;

/// Each rule with findings and how many, most first; rules with as many in id order.
#[must_use]
pub fn counts(report: &ScanReport) -> Vec<(Rule, usize)> {
    let mut by_rule: BTreeMap<Rule, usize> = BTreeMap::new();
    for (_, diagnostic) in report.diagnostics() {
        *by_rule.entry(diagnostic.rule).or_default() += 1;
    }
    let mut counts: Vec<(Rule, usize)> = by_rule.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    counts
}

/// One line per rule with findings: the count (right-aligned), the id and the name.
pub fn render_text(report: &ScanReport, out: &mut dyn Write) -> io::Result<()> {
    let counts = counts(report);
    let width = counts
        .iter()
        .map(|(_, n)| n.to_string().len())
        .max()
        .unwrap_or(0);
    for (rule, n) in counts {
        writeln!(out, "{n:>width$}  {}  {}", rule.id(), rule.name())?;
    }
    Ok(())
}

/// One rule's line of the JSON array.
#[derive(Serialize)]
struct Row {
    rule: &'static str,
    name: &'static str,
    count: usize,
}

/// One JSON array of `{"rule", "name", "count"}` objects, in the same order, and a newline.
pub fn render_json(report: &ScanReport, out: &mut dyn Write) -> io::Result<()> {
    let rows: Vec<Row> = counts(report)
        .into_iter()
        .map(|(rule, count)| Row {
            rule: rule.id(),
            name: rule.name(),
            count,
        })
        .collect();
    serde_json::to_writer(&mut *out, &rows)?;
    out.write_all(b"\n")
}

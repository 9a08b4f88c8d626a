//! One line per finding, in the form of compilers' short messages and ruff's `concise` output:
//!
//! ```text
//! src/client.rs:12:9: RA002 constant delay between retry attempts
//! ```
//!
//! The path is the one the walker produced (as in `human`); line and column are 1-based, the
//! column counted in characters. Editors match it with a one-line problem matcher (see the
//! README). The summary line is written separately by [`super::summary`].

use std::io::{self, Write};

use crate::report::ScanReport;

/// Writes one line per finding, files in path order, findings in source order.
pub fn render(report: &ScanReport, out: &mut dyn Write) -> io::Result<()> {
    for (file, diagnostic) in report.diagnostics() {
        let start = diagnostic.primary.span.start_pos;
        writeln!(
            out,
            "{}:{}:{}: {} {}",
            file.path.display(),
            start.line,
            start.column,
            diagnostic.rule.id(),
            single_line(&diagnostic.message)
        )?;
    }
    Ok(())
}

/// The message on one line (messages are one line already; this keeps the format line-based
/// whatever a rule says).
fn single_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

//! One line per finding, in the form of compilers' short messages and ruff's `concise` output:
//!
//! ```text
//! src/client.rs:12:9: RA002 constant delay between retry attempts
//! ```
//!
//! The path is the one the walker produced (as in `human`); line and column are 1-based, the
//! column counted in characters. Editors match it with a one-line problem matcher (see
//! docs/output-formats.md). On a colour-capable target (a terminal, unless `NO_COLOR`; see
//! `--color`) the path is bold and the rule id takes the colour of its level, as ruff colours
//! its concise output; the text is the same either way. The summary line is written separately
//! by [`super::summary`].

use std::io;

use codespan_reporting::term::termcolor::{Color, ColorSpec, WriteColor};

use crate::checks::registry::Level;
use crate::report::ScanReport;

/// Writes one line per finding, files in path order, findings in source order.
pub fn render(report: &ScanReport, out: &mut dyn WriteColor) -> io::Result<()> {
    let bold = ColorSpec::new().set_bold(true).clone();
    for (file, diagnostic) in report.diagnostics() {
        let start = diagnostic.primary.span.start_pos;
        out.set_color(&bold)?;
        write!(out, "{}", file.path.display())?;
        out.reset()?;
        write!(out, ":{}:{}: ", start.line, start.column)?;
        let level = match diagnostic.level {
            Level::Error => Color::Red,
            _ => Color::Yellow,
        };
        out.set_color(bold.clone().set_fg(Some(level)))?;
        write!(out, "{}", diagnostic.rule.id())?;
        out.reset()?;
        writeln!(out, " {}", single_line(&diagnostic.message))?;
    }
    Ok(())
}

/// The message on one line (messages are one line already; this keeps the format line-based
/// whatever a rule says).
fn single_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

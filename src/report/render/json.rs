//! JSON Lines: one object per finding, files in path order, findings in source order.
//!
//! ```json
//! {"rule":"RA002","name":"fixed-delay","level":"warning","path":"src/x.rs","line":12,"column":9,"end_line":12,"end_column":47,"message":"...","help":"...","notes":[],"labels":[{"line":8,"column":5,"end_line":8,"end_column":9,"message":"retry loop here"}]}
//! ```
//!
//! Positions are 1-based and taken from the primary span; `end_column` is exclusive. `labels`
//! holds the secondary spans; `help` is `null` when the rule gives none. `elsewhere`, present
//! only when there is something in it, lists the places in other files the finding rests on
//! (path, line, column and message: a definition of another file of the crate, or a retry
//! there). Nothing else is
//! written to stdout in this format.

use std::io::{self, Write};

use serde::Serialize;

use crate::checks::diagnostic::{Diagnostic, Label};
use crate::report::{FileReport, ScanReport};

#[derive(Serialize)]
struct Finding<'a> {
    rule: &'static str,
    name: &'static str,
    level: &'static str,
    path: String,
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
    message: &'a str,
    help: Option<&'a str>,
    notes: &'a [String],
    labels: Vec<SecondaryLabel<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    elsewhere: Vec<Place<'a>>,
}

/// A place in another file the finding rests on.
#[derive(Serialize)]
struct Place<'a> {
    path: &'a str,
    line: usize,
    column: usize,
    message: &'a str,
}

#[derive(Serialize)]
struct SecondaryLabel<'a> {
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
    message: &'a str,
}

impl<'a> Finding<'a> {
    fn new(file: &FileReport, diagnostic: &'a Diagnostic) -> Self {
        let span = diagnostic.primary.span;
        Finding {
            rule: diagnostic.rule.id(),
            name: diagnostic.rule.name(),
            level: diagnostic.level.as_str(),
            path: file.path.to_string_lossy().into_owned(),
            line: span.start_pos.line,
            column: span.start_pos.column,
            end_line: span.end_pos.line,
            end_column: span.end_pos.column,
            message: &diagnostic.message,
            help: diagnostic.help.as_deref(),
            notes: &diagnostic.notes,
            labels: diagnostic
                .secondary
                .iter()
                .map(SecondaryLabel::new)
                .collect(),
            elsewhere: diagnostic
                .elsewhere
                .iter()
                .map(|e| Place {
                    path: &e.path,
                    line: e.line,
                    column: e.column,
                    message: &e.message,
                })
                .collect(),
        }
    }
}

impl<'a> SecondaryLabel<'a> {
    fn new(label: &'a Label) -> Self {
        SecondaryLabel {
            line: label.span.start_pos.line,
            column: label.span.start_pos.column,
            end_line: label.span.end_pos.line,
            end_column: label.span.end_pos.column,
            message: &label.message,
        }
    }
}

/// Writes one JSON object per line for every finding in the report.
pub fn render(report: &ScanReport, out: &mut dyn Write) -> io::Result<()> {
    for (file, diagnostic) in report.diagnostics() {
        serde_json::to_writer(&mut *out, &Finding::new(file, diagnostic))?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

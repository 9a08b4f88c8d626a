//! GitLab Code Quality: one JSON array of issues, the report format of the `codequality`
//! artifact (a subset of the Code Climate issue format).
//!
//! ```json
//! [{"type":"issue","check_name":"RA002","description":"RA002 fixed-delay: constant delay between retry attempts","categories":["Bug Risk"],"severity":"minor","fingerprint":"3f1c...","location":{"path":"src/client.rs","lines":{"begin":12,"end":12}}}]
//! ```
//!
//! Severity: `error` findings are `major`, warnings `minor`. Paths are relative to the
//! repository root; fingerprints are those of [`super::fingerprint`] (stable when lines shift,
//! unique within the report).

use std::io::{self, Write};

use serde::Serialize;

use super::fingerprint::fingerprints;
use super::location::Root;
use crate::checks::diagnostic::Diagnostic;
use crate::checks::registry::Level;
use crate::report::ScanReport;

#[derive(Serialize)]
struct Issue {
    #[serde(rename = "type")]
    kind: &'static str,
    check_name: &'static str,
    description: String,
    categories: [&'static str; 1],
    severity: &'static str,
    fingerprint: String,
    location: Location,
}

#[derive(Serialize)]
struct Location {
    path: String,
    lines: Lines,
}

#[derive(Serialize)]
struct Lines {
    begin: usize,
    end: usize,
}

/// The GitLab severity of a finding.
#[must_use]
pub fn severity(level: Level) -> &'static str {
    match level {
        Level::Error => "major",
        Level::Warning => "minor",
        Level::Allow => "info",
    }
}

fn issue(path: &str, diagnostic: &Diagnostic, fingerprint: String) -> Issue {
    let span = diagnostic.primary.span;
    Issue {
        kind: "issue",
        check_name: diagnostic.rule.id(),
        description: format!(
            "{} {}: {}",
            diagnostic.rule.id(),
            diagnostic.rule.name(),
            diagnostic.message
        ),
        categories: ["Bug Risk"],
        severity: severity(diagnostic.level),
        fingerprint,
        location: Location {
            path: path.to_owned(),
            lines: Lines {
                begin: span.start_pos.line,
                end: span.end_pos.line,
            },
        },
    }
}

/// Writes the JSON array (pretty-printed, as GitLab's own analysers do), then a newline. An
/// empty report is `[]`.
pub fn render(report: &ScanReport, root: &Root, out: &mut dyn Write) -> io::Result<()> {
    let mut issues = Vec::new();
    for file in &report.files {
        let path = root.display(&file.path);
        let diagnostics = file.diagnostics();
        let prints = fingerprints(&path, file.source(), diagnostics);
        issues.extend(
            diagnostics
                .iter()
                .zip(prints)
                .map(|(diagnostic, print)| issue(&path, diagnostic, print)),
        );
    }
    serde_json::to_writer_pretty(&mut *out, &issues)?;
    writeln!(out)
}

//! GitHub Actions workflow commands: each finding becomes an annotation on the pull request.
//!
//! ```text
//! ::error file=src/client.rs,line=12,col=9,endLine=12,endColumn=47,title=RA001 unbounded-retry::retry loop has no attempt limit or deadline%0Ahelp: ...
//! ```
//!
//! `error` findings become `::error`, warnings `::warning`. Paths are relative to the
//! repository root (see [`super::location`]). `col` and `endColumn` (exclusive, like every end
//! column retry-audit writes) are given only when the finding starts and ends on the same
//! line, because GitHub rejects them otherwise. Data is escaped as GitHub's toolkit does: `%`,
//! CR and LF in the message, and also `:` and `,` in property values.

use std::io::{self, Write};

use super::location::Root;
use crate::checks::diagnostic::Diagnostic;
use crate::checks::registry::Level;
use crate::report::ScanReport;

/// Writes one workflow command per finding.
pub fn render(report: &ScanReport, root: &Root, out: &mut dyn Write) -> io::Result<()> {
    for (file, diagnostic) in report.diagnostics() {
        writeln!(out, "{}", command(&root.display(&file.path), diagnostic))?;
    }
    Ok(())
}

/// The workflow command for one finding in the file `path`.
#[must_use]
pub fn command(path: &str, diagnostic: &Diagnostic) -> String {
    let name = match diagnostic.level {
        Level::Error => "error",
        Level::Warning | Level::Allow => "warning",
    };
    let span = diagnostic.primary.span;
    let mut properties = vec![
        ("file", path.to_owned()),
        ("line", span.start_pos.line.to_string()),
    ];
    if span.start_pos.line == span.end_pos.line {
        properties.push(("col", span.start_pos.column.to_string()));
        properties.push(("endLine", span.end_pos.line.to_string()));
        properties.push(("endColumn", span.end_pos.column.to_string()));
    } else {
        properties.push(("endLine", span.end_pos.line.to_string()));
    }
    properties.push((
        "title",
        format!("{} {}", diagnostic.rule.id(), diagnostic.rule.name()),
    ));
    let properties = properties
        .iter()
        .map(|(key, value)| format!("{key}={}", escape_property(value)))
        .collect::<Vec<_>>()
        .join(",");
    format!(
        "::{name} {properties}::{}",
        escape_data(&message(diagnostic))
    )
}

/// The annotation's text: the message, the primary label, then notes and help on their own
/// lines.
fn message(diagnostic: &Diagnostic) -> String {
    let mut text = diagnostic.message.clone();
    if !diagnostic.primary.message.is_empty() {
        text.push_str(": ");
        text.push_str(&diagnostic.primary.message);
    }
    for note in &diagnostic.notes {
        text.push_str("\nnote: ");
        text.push_str(note);
    }
    if let Some(help) = &diagnostic.help {
        text.push_str("\nhelp: ");
        text.push_str(help);
    }
    text
}

/// Escapes a command's data (the message): `%`, `\r` and `\n`.
#[must_use]
pub fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a property value: as [`escape_data`], plus `:` and `,`.
#[must_use]
pub fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_follow_the_github_toolkit() {
        assert_eq!(escape_data("50% a\r\nb: c, d"), "50%25 a%0D%0Ab: c, d");
        assert_eq!(escape_property("C:\\dir,x%\n"), "C%3A\\dir%2Cx%25%0A");
        // `%` first, so escapes are not escaped twice.
        assert_eq!(escape_property("%3A"), "%253A");
    }
}

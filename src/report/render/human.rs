//! rustc-style output through codespan-reporting:
//!
//! ```text
//! warning[RA002]: constant delay between retry attempts
//!   --> src/a.rs:3:9
//!   |
//! 2 |     loop {
//!   |     ---- retry loop here
//! 3 |         sleep(ONE_SECOND);
//!   |         ^^^^^^^^^^^^^^^^^ the same wait before every attempt
//!   |
//!   = note: the delay is `ONE_SECOND`
//!   = help: grow the delay after each failure
//! ```
//!
//! The tests in `render/mod.rs` pin this layout. Spans that do not fit the file's text are
//! rendered without the source excerpt rather than dropped.

use std::io::{self, Write};

use codespan_reporting::diagnostic::{Diagnostic as Report, Label as ReportLabel, Severity};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::termcolor::WriteColor;
use codespan_reporting::term::{self, Chars, Config};

use crate::checks::diagnostic::{Diagnostic, Label};
use crate::checks::registry::Level;
use crate::report::ScanReport;

/// Writes every finding of the report, files in path order, then nothing else (the summary is
/// written separately by [`super::summary`]).
pub fn render(report: &ScanReport, out: &mut dyn WriteColor) -> io::Result<()> {
    for file in &report.files {
        let name = file.path.display().to_string();
        for diagnostic in file.diagnostics() {
            render_one(&name, file.source(), diagnostic, out)?;
        }
    }
    Ok(())
}

/// Writes one finding of the file `name` whose text is `source`, followed by a blank line.
/// Without the text (not expected: files with findings keep it), or when the spans do not fit
/// it, the finding is written without the source excerpt.
pub fn render_one(
    name: &str,
    source: Option<&str>,
    diagnostic: &Diagnostic,
    out: &mut dyn WriteColor,
) -> io::Result<()> {
    let Some(source) = source else {
        return emit_plain(out, name, diagnostic);
    };
    let config = Config {
        chars: Chars::ascii(),
        ..Config::default()
    };
    // codespan-reporting would count a byte-order mark as a column of line 1: show the text
    // without it, and the spans (byte offsets into the file) moved back by its length.
    if let Some(text) = source.strip_prefix('\u{feff}') {
        let shifted = shift_back(diagnostic, source.len() - text.len());
        return emit(out, &config, &SimpleFile::new(name, text), &shifted);
    }
    emit(out, &config, &SimpleFile::new(name, source), diagnostic)
}

/// The diagnostic with every span `by` bytes earlier (a span inside the removed prefix becomes
/// empty at its start).
fn shift_back(diagnostic: &Diagnostic, by: usize) -> Diagnostic {
    let mut shifted = diagnostic.clone();
    for label in std::iter::once(&mut shifted.primary).chain(&mut shifted.secondary) {
        label.span.start = label.span.start.saturating_sub(by);
        label.span.end = label.span.end.saturating_sub(by);
    }
    shifted
}

/// Emits one diagnostic; falls back to a plain rendering if its spans do not fit the source.
fn emit(
    out: &mut dyn WriteColor,
    config: &Config,
    file: &SimpleFile<&str, &str>,
    diagnostic: &Diagnostic,
) -> io::Result<()> {
    if !spans_fit(diagnostic, file.source()) {
        return emit_plain(out, file.name(), diagnostic);
    }
    match term::emit(out, config, file, &to_report(diagnostic)) {
        Ok(()) => Ok(()),
        Err(codespan_reporting::files::Error::Io(e)) => Err(e),
        Err(_) => emit_plain(out, file.name(), diagnostic),
    }
}

/// The codespan-reporting form of a finding: code, message, labels, then notes and help as
/// `= note: ...` and `= help: ...` lines.
fn to_report(diagnostic: &Diagnostic) -> Report<()> {
    let severity = match diagnostic.level {
        Level::Error => Severity::Error,
        Level::Warning => Severity::Warning,
        Level::Allow => Severity::Note,
    };
    let mut labels = vec![ReportLabel::primary((), range(&diagnostic.primary))
        .with_message(&diagnostic.primary.message)];
    labels.extend(
        diagnostic
            .secondary
            .iter()
            .map(|label| ReportLabel::secondary((), range(label)).with_message(&label.message)),
    );
    let mut notes: Vec<String> = diagnostic
        .notes
        .iter()
        .map(|note| format!("note: {note}"))
        .collect();
    notes.extend(diagnostic.help.iter().map(|help| format!("help: {help}")));
    Report::new(severity)
        .with_code(diagnostic.rule.id())
        .with_message(&diagnostic.message)
        .with_labels(labels)
        .with_notes(notes)
}

fn range(label: &Label) -> std::ops::Range<usize> {
    label.span.start..label.span.end
}

/// Whether every label lies within `source` on character boundaries.
fn spans_fit(diagnostic: &Diagnostic, source: &str) -> bool {
    std::iter::once(&diagnostic.primary)
        .chain(&diagnostic.secondary)
        .all(|label| {
            let span = label.span;
            span.start <= span.end
                && source.is_char_boundary(span.start)
                && source.is_char_boundary(span.end)
        })
}

/// The diagnostic without source excerpts, for spans codespan-reporting cannot show.
fn emit_plain(out: &mut dyn Write, path: &str, diagnostic: &Diagnostic) -> io::Result<()> {
    let primary = &diagnostic.primary;
    writeln!(
        out,
        "{}[{}]: {}",
        diagnostic.level,
        diagnostic.rule.id(),
        diagnostic.message
    )?;
    writeln!(
        out,
        " --> {path}:{}:{}",
        primary.span.start_pos.line, primary.span.start_pos.column
    )?;
    writeln!(out, "  = {}", primary.message)?;
    for note in &diagnostic.notes {
        writeln!(out, "  = note: {note}")?;
    }
    if let Some(help) = &diagnostic.help {
        writeln!(out, "  = help: {help}")?;
    }
    writeln!(out)
}

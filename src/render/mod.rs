//! Output: turns a [`ScanReport`] or the rule registry into text. Nothing here analyses code.
//!
//! - [`human`]: rustc-style diagnostics (codespan-reporting) and a one-line summary.
//! - [`json`]: JSON Lines, one object per finding.
//! - [`write_skipped`]: the `warning: skipped ...` lines for files that could not be analysed.
//! - [`write_explain`] and [`write_rule_list`]: the `explain` and `rules` subcommands.

pub mod human;
pub mod json;

use std::io::{self, Write};

use crate::engine::FileError;
use crate::registry::{Rule, RuleMeta};
use crate::scan::{ScanReport, SkipReason};

/// Writes one line per skipped file: `warning: skipped PATH:LINE:COL: <parse error>` for a
/// syntax error, `warning: skipped PATH: <reason>` otherwise.
pub fn write_skipped(report: &ScanReport, out: &mut dyn Write) -> io::Result<()> {
    for (file, reason) in report.skipped() {
        let path = file.path.display();
        match reason {
            SkipReason::File(FileError::Parse { position, message }) => writeln!(
                out,
                "warning: skipped {path}:{}:{}: {message}",
                position.line, position.column
            )?,
            other => writeln!(out, "warning: skipped {path}: {other}")?,
        }
    }
    Ok(())
}

/// The documentation of one rule, as `retry-audit explain` prints it (Markdown).
pub fn write_explain(rule: Rule, out: &mut dyn Write) -> io::Result<()> {
    let meta = rule.meta();
    writeln!(
        out,
        "# {} {} (default level: {})",
        rule.id(),
        rule.name(),
        rule.default_level()
    )?;
    if !meta.summary.is_empty() {
        writeln!(out, "\n{}", meta.summary)?;
    }
    write_section(out, "What it does", &meta.what_it_does)?;
    write_section(out, "Why is this bad?", &meta.why_bad)?;
    write_code_section(out, "Example", &meta.example)?;
    write_code_section(out, "Use instead", &meta.use_instead)?;
    write_section(out, "Known limitations", &meta.known_limitations)?;
    write_references(out, meta)
}

fn write_section(out: &mut dyn Write, heading: &str, body: &str) -> io::Result<()> {
    writeln!(out, "\n## {heading}")?;
    let body = body.trim();
    if !body.is_empty() {
        writeln!(out, "\n{body}")?;
    }
    Ok(())
}

fn write_code_section(out: &mut dyn Write, heading: &str, code: &str) -> io::Result<()> {
    writeln!(out, "\n## {heading}")?;
    let code = code.trim_matches('\n');
    if !code.is_empty() {
        writeln!(out, "\n```rust\n{code}\n```")?;
    }
    Ok(())
}

fn write_references(out: &mut dyn Write, meta: &RuleMeta) -> io::Result<()> {
    writeln!(out, "\n## References")?;
    if !meta.references.is_empty() {
        writeln!(out)?;
    }
    for reference in &meta.references {
        writeln!(out, "- {reference}")?;
    }
    Ok(())
}

/// One line per rule, in id order: id, name, default level and summary in aligned columns.
pub fn write_rule_list(out: &mut dyn Write) -> io::Result<()> {
    let name_width = Rule::ALL.iter().map(|r| r.name().len()).max().unwrap_or(0);
    let level_width = Rule::ALL
        .iter()
        .map(|r| r.default_level().as_str().len())
        .max()
        .unwrap_or(0);
    for rule in Rule::ALL {
        let line = format!(
            "{}  {:name_width$}  {:level_width$}  {}",
            rule.id(),
            rule.name(),
            rule.default_level().as_str(),
            rule.meta().summary,
        );
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// A list of the valid rule codes, for error messages: `RA001 (unbounded-retry), ...`.
#[must_use]
pub fn valid_rules() -> String {
    Rule::ALL
        .iter()
        .map(|r| format!("{} ({})", r.id(), r.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `n` followed by `word`, pluralised with an `s` unless `n` is 1.
fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// The one-line summary: `retry-audit: 12 files checked, 1 skipped, 3 errors, 2 warnings`.
#[must_use]
pub fn summary(report: &ScanReport) -> String {
    let counts = report.counts();
    format!(
        "retry-audit: {} checked, {} skipped, {}, {}",
        plural(counts.checked, "file"),
        counts.skipped,
        plural(counts.errors, "error"),
        plural(counts.warnings, "warning"),
    )
}

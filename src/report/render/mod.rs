//! Output: turns a [`ScanReport`] or the rule registry into text. Nothing here analyses code.
//!
//! - [`human`]: rustc-style diagnostics (codespan-reporting) and a one-line summary.
//! - [`concise`]: one `path:line:col: RA002 message` line per finding.
//! - [`json`]: JSON Lines, one object per finding.
//! - [`sarif`]: SARIF 2.1.0 for GitHub code scanning.
//! - [`github`]: GitHub Actions workflow commands (annotations).
//! - [`gitlab`]: GitLab Code Quality JSON.
//! - [`cargo_json`]: cargo's `compiler-message` JSON lines, for rust-analyzer and friends.
//! - [`statistics`]: `--statistics`, the count of findings per rule.
//! - [`location`] and [`fingerprint`]: repository-relative paths and line-shift-proof
//!   fingerprints shared by the machine formats.
//! - [`write_skipped`]: the `error: cannot check ...` lines for paths given that could not be
//!   checked, and the `warning: skipped ...` lines for files that could not be analysed.
//! - [`write_explain`], [`write_rule_list`] and [`write_rule_list_json`]: the `explain` and
//!   `rules` subcommands.
//! - [`summary`] and [`stats`]: the summary line, and `--stats` (counts and time per phase).

pub mod cargo_json;
pub mod concise;
pub mod fingerprint;
pub mod github;
pub mod gitlab;
pub mod human;
pub mod json;
pub mod location;
pub mod sarif;
pub mod statistics;

use std::io::{self, Write};
use std::time::Duration;

use crate::checks::registry::{Rule, RuleMeta};
use crate::report::FileError;
use crate::report::{Outcome, ScanReport, SkipReason};

/// Writes one line per path given that could not be checked (`error: cannot check PATH:
/// <why>`), then one per skipped file: `warning: skipped PATH:LINE:COL: <parse error>` for a
/// syntax error, `warning: skipped PATH: <reason>` otherwise.
pub fn write_skipped(report: &ScanReport, out: &mut dyn Write) -> io::Result<()> {
    for bad in &report.bad_paths {
        writeln!(out, "error: {bad}")?;
    }
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
    write_section(out, "Tier", &tier_text(rule))?;
    write_section(out, "What it does", &meta.what_it_does)?;
    write_section(out, "Why is this bad?", &meta.why_bad)?;
    write_code_section(out, "Example", &meta.example)?;
    write_code_section(out, "Use instead", &meta.use_instead)?;
    write_section(out, "Known limitations", &meta.known_limitations)?;
    write_references(out, meta)
}

/// What a rule's tier is and the verdicts behind it.
#[must_use]
pub fn tier_text(rule: Rule) -> String {
    let judged = rule.meta().judged;
    let evidence = match judged.precision() {
        None if rule == Rule::UnusedSuppression => {
            "It is not about retries, and judges nothing: stable by nature.".to_owned()
        }
        None if rule == Rule::SyntaxError => "It is not about retries: it is preview because \
                                             `syn` rejects some code rustc accepts."
            .to_owned(),
        None => format!(
            "None of its findings has been judged yet in code not used for tuning ({} arguable): \
             its precision is not established.",
            judged.arguable
        ),
        Some(p) => format!(
            "Its findings judged in code not used for tuning: {} right, {} wrong, {} arguable \
             (precision {p:.2}).",
            judged.right, judged.wrong, judged.arguable
        ),
    };
    let meaning = match rule.tier() {
        crate::checks::registry::Tier::Stable => "Stable: it runs by default.",
        crate::checks::registry::Tier::Preview => {
            "Preview: it runs with `--preview` (or `preview = true`, or when selected by name). A \
             rule is stable only while its precision on judged findings in code not used for \
             tuning is at least 0.90, over at least 5 findings."
        }
    };
    format!("{meaning} {evidence}")
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
            "{}  {:name_width$}  {:level_width$}  {:7}  {}",
            rule.id(),
            rule.name(),
            rule.default_level().as_str(),
            rule.tier().as_str(),
            rule.meta().summary,
        );
        writeln!(out, "{}", line.trim_end())?;
    }
    writeln!(
        out,
        "\npreview rules run with --preview (or `preview = true`); `retry-audit explain RULE` \
         says the precision behind each tier"
    )
}

/// The rules as one JSON array, in id order, for editor extensions and documentation sites:
/// `[{"id":"RA001","name":"unbounded-retry","level":"error","summary":"...","docs":"docs/rules/RA001.md","url":null}]`
/// (`level` is the default level; `docs` is [`rule_page`], `url` is [`rule_url`]).
pub fn write_rule_list_json(out: &mut dyn Write) -> io::Result<()> {
    #[derive(serde::Serialize)]
    struct Entry {
        id: &'static str,
        name: &'static str,
        level: &'static str,
        tier: &'static str,
        /// Right over right and wrong on judged findings in code not used for tuning.
        precision: Option<f64>,
        judged: u32,
        summary: &'static str,
        docs: String,
        url: Option<String>,
    }
    let entries: Vec<Entry> = Rule::ALL
        .iter()
        .map(|&rule| Entry {
            id: rule.id(),
            name: rule.name(),
            level: rule.default_level().as_str(),
            tier: rule.tier().as_str(),
            precision: rule
                .meta()
                .judged
                .precision()
                .map(|p| (p * 100.0).round() / 100.0),
            judged: rule.meta().judged.right + rule.meta().judged.wrong,
            summary: &rule.meta().summary,
            docs: rule_page(rule),
            url: rule_url(rule),
        })
        .collect();
    serde_json::to_writer_pretty(&mut *out, &entries)?;
    writeln!(out)
}

/// The repository the manifest names (`repository` in `Cargo.toml`), if it names one: the only
/// web page of the project that is known to exist.
#[must_use]
pub fn home_page() -> Option<&'static str> {
    option_env!("CARGO_PKG_REPOSITORY").filter(|uri| !uri.is_empty())
}

/// A rule's page in the project's documentation, relative to the project's root:
/// `docs/rules/RA002.md`, the text `retry-audit explain RA002` prints (generated from
/// `rules/*.toml`, kept current by `tests/rules.rs`).
#[must_use]
pub fn rule_page(rule: Rule) -> String {
    format!("docs/rules/{}.md", rule.id())
}

/// A rule's page on the web: [`rule_page`] in the repository the manifest names, at this
/// version's tag; `None` without a repository (no URL rather than one to a page that does
/// not exist).
#[must_use]
pub fn rule_url(rule: Rule) -> Option<String> {
    home_page().map(|repository| {
        format!(
            "{}/blob/v{}/{}",
            repository.trim_end_matches('/'),
            env!("CARGO_PKG_VERSION"),
            rule_page(rule)
        )
    })
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

/// Bytes in megabytes (10^6), for display.
#[allow(clippy::cast_precision_loss)] // exact below 2^52 bytes, and shown with one decimal
fn megabytes(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

/// `--stats`: how many files were found, checked and skipped (by reason), and where the time
/// went, one phase per line.
#[must_use]
pub fn stats(report: &ScanReport, report_time: Duration, total: Duration) -> String {
    let stats = &report.stats;
    let counts = report.counts();
    let (mut parse, mut decode, mut deep, mut complex, mut unreadable, mut internal) =
        (0, 0, 0, 0, 0, 0);
    for file in &report.files {
        if let Outcome::Skipped(reason) = &file.outcome {
            match reason {
                SkipReason::File(FileError::Parse { .. }) => parse += 1,
                SkipReason::File(FileError::NotUtf8 { .. }) => decode += 1,
                SkipReason::File(FileError::TooDeep) => deep += 1,
                SkipReason::File(FileError::TooComplex(_)) => complex += 1,
                SkipReason::File(FileError::Io(_)) | SkipReason::Walk(_) => unreadable += 1,
                SkipReason::File(FileError::Internal(_)) | SkipReason::Internal(_) => {
                    internal += 1;
                }
            }
        }
    }
    let secs = |d: Duration| format!("{:>8.3} s", d.as_secs_f64());
    let summed = format!("summed over {}", plural(stats.threads, "thread"));
    let lines = [
        format!(
            "files       {} found: {} checked, {} skipped ({parse} not parsed, {decode} not \
             UTF-8, {deep} too deeply nested, {complex} too complex, {unreadable} unreadable, \
             {internal} internal errors)",
            report.files.len(),
            counts.checked,
            counts.skipped,
        ),
        format!(
            "input       {:.1} MB read, {}, {}",
            megabytes(stats.bytes),
            plural(stats.threads, "thread"),
            plural(counts.errors + counts.warnings, "finding"),
        ),
        format!(
            "parsed      {} read and {} parsed, each once{}; {} of other files' definitions \
             parsed for a file's facts",
            plural(stats.files_read, "file"),
            plural(stats.files_parsed, "file"),
            if stats.windows_parsed == 0 {
                String::new()
            } else {
                format!(
                    " (the largest in {} of function bodies)",
                    plural(stats.windows_parsed, "window")
                )
            },
            plural(stats.views_parsed, "view"),
        ),
        format!("walk      {}  wall: finding the files", secs(stats.walk)),
        format!("read      {}  {summed}", secs(stats.read)),
        format!(
            "parse     {}  {summed} (decode, parse, free the tree)",
            secs(stats.parse)
        ),
        format!(
            "analyse   {}  {summed} (retry sites, rules, suppressions)",
            secs(stats.analyse)
        ),
        format!(
            "check     {}  wall: read + parse + analyse on every thread",
            secs(stats.check)
        ),
        format!(
            "cross-file{}  wall: RA010 across files, suppression comments; {} decided by the \
             values the crate passes",
            secs(stats.cross_file),
            plural(stats.by_defaults, "loop"),
        ),
        format!("report    {}  wall: writing the output", secs(report_time)),
        format!("total     {}  wall", secs(total)),
    ];
    let mut out = String::from("retry-audit: --stats");
    for line in lines {
        out.push_str("\n  ");
        out.push_str(&line);
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use codespan_reporting::term::termcolor::NoColor;

    use super::*;
    use crate::checks::diagnostic::{Diagnostic, Label};
    use crate::checks::registry::Level;
    use crate::report::{FileReport, Outcome};
    use crate::source::{Position, Span};

    const SOURCE: &str = "fn fetch() {\n    loop {\n        sleep(ONE_SECOND);\n    }\n}\n";

    /// The span of the first occurrence of `needle` in `SOURCE`.
    fn span_of(needle: &str) -> Span {
        let start = SOURCE.find(needle).expect("needle in source");
        let end = start + needle.len();
        let position = |offset: usize| {
            let before = &SOURCE[..offset];
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            Position {
                line: before.matches('\n').count() + 1,
                column: before[line_start..].chars().count() + 1,
            }
        };
        Span {
            start,
            end,
            start_pos: position(start),
            end_pos: position(end),
        }
    }

    fn finding() -> Diagnostic {
        Diagnostic {
            fix: None,
            elsewhere: Vec::new(),
            rule: Rule::FixedDelay,
            level: Level::Warning,
            message: "constant delay between retry attempts".to_owned(),
            primary: Label {
                span: span_of("sleep(ONE_SECOND)"),
                message: "the same wait before every attempt".to_owned(),
            },
            secondary: vec![Label {
                span: span_of("loop"),
                message: "retry loop here".to_owned(),
            }],
            help: Some("grow the delay after each failure".to_owned()),
            notes: vec!["the delay is `ONE_SECOND`".to_owned()],
        }
    }

    fn report(diagnostic: Diagnostic) -> ScanReport {
        ScanReport {
            files: vec![
                FileReport {
                    path: PathBuf::from("src/a.rs"),
                    outcome: Outcome::Checked {
                        diagnostics: vec![diagnostic],
                        source: Some(SOURCE.to_owned()),
                    },
                },
                FileReport {
                    path: PathBuf::from("src/b.rs"),
                    outcome: Outcome::Skipped(SkipReason::File(FileError::Parse {
                        position: Position { line: 3, column: 7 },
                        message: "expected `;`".to_owned(),
                    })),
                },
                FileReport {
                    path: PathBuf::from("src/c.rs"),
                    outcome: Outcome::Skipped(SkipReason::File(FileError::TooDeep)),
                },
            ],
            ..ScanReport::default()
        }
    }

    fn human_output(report: &ScanReport) -> String {
        let mut out = NoColor::new(Vec::new());
        human::render(report, &mut out).expect("render");
        String::from_utf8(out.into_inner()).expect("UTF-8 output")
    }

    #[test]
    fn human_output_looks_like_rustc() {
        let text = human_output(&report(finding()));
        let expected = "\
warning[RA002]: constant delay between retry attempts
  --> src/a.rs:3:9
  |
2 |     loop {
  |     ---- retry loop here
3 |         sleep(ONE_SECOND);
  |         ^^^^^^^^^^^^^^^^^ the same wait before every attempt
  |
  = note: the delay is `ONE_SECOND`
  = help: grow the delay after each failure

";
        assert_eq!(text, expected);
    }

    #[test]
    fn human_output_falls_back_when_a_span_is_outside_the_source() {
        let mut diagnostic = finding();
        diagnostic.primary.span.end = SOURCE.len() + 10;
        let text = human_output(&report(diagnostic));
        assert!(
            text.starts_with(
                "warning[RA002]: constant delay between retry attempts\n --> src/a.rs:3:9\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("= help: grow the delay after each failure"),
            "{text}"
        );
    }

    #[test]
    fn human_output_without_source_text_still_shows_the_finding() {
        let mut report = report(finding());
        if let Outcome::Checked { source, .. } = &mut report.files[0].outcome {
            *source = None;
        }
        let text = human_output(&report);
        assert!(text.starts_with("warning[RA002]: "), "{text}");
        assert!(text.contains(" --> src/a.rs:3:9\n"), "{text}");
    }

    #[test]
    fn json_has_the_documented_keys() {
        let mut out = Vec::new();
        json::render(&report(finding()), &mut out).expect("render");
        let text = String::from_utf8(out).expect("UTF-8 output");
        assert_eq!(text.lines().count(), 1);
        let value: serde_json::Value = serde_json::from_str(text.trim_end()).expect("valid JSON");
        let expected = serde_json::json!({
            "rule": "RA002",
            "name": "fixed-delay",
            "level": "warning",
            "path": "src/a.rs",
            "line": 3,
            "column": 9,
            "end_line": 3,
            "end_column": 26,
            "message": "constant delay between retry attempts",
            "help": "grow the delay after each failure",
            "notes": ["the delay is `ONE_SECOND`"],
            "labels": [{"line": 2, "column": 5, "end_line": 2, "end_column": 9, "message": "retry loop here"}],
        });
        assert_eq!(value, expected);
    }

    #[test]
    fn skipped_files_get_one_warning_line_each() {
        let mut out = Vec::new();
        write_skipped(&report(finding()), &mut out).expect("render");
        let text = String::from_utf8(out).expect("UTF-8 output");
        assert_eq!(
            text,
            "warning: skipped src/b.rs:3:7: expected `;`\n\
             warning: skipped src/c.rs: too deeply nested to analyse\n"
        );
    }

    #[test]
    fn summary_counts_files_and_findings_by_level() {
        let mut report = report(finding());
        assert_eq!(
            summary(&report),
            "retry-audit: 1 file checked, 2 skipped, 0 errors, 1 warning"
        );
        let mut error = finding();
        error.level = Level::Error;
        if let Outcome::Checked { diagnostics, .. } = &mut report.files[0].outcome {
            diagnostics.push(error.clone());
            diagnostics.push(error);
        }
        assert!(report.has_errors());
        assert_eq!(
            summary(&report),
            "retry-audit: 1 file checked, 2 skipped, 2 errors, 1 warning"
        );
    }
}

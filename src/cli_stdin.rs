//! `-` as the path: the source is read from standard input and checked alone, as ruff does.
//! `--stdin-filename NAME` names it in messages and picks its settings (`[[per-path]]` levels);
//! without it, it is called `-`. With `--fix`, the fixed source is written to standard output
//! (the source unchanged when nothing could be fixed) and the report goes to standard error.

use std::borrow::Cow;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use retry_audit::fix;
use retry_audit::pipeline::scan::{ScanError, ScanOptions};
use retry_audit::report::{FileReport, Outcome, ScanReport, ScanStats, SkipReason};
use retry_audit::Settings;

/// The name standard input goes by without `--stdin-filename` (ruff's).
pub(crate) const DEFAULT_NAME: &str = "-";

/// Source read from standard input, and the name it goes by.
pub(crate) struct Input {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
}

/// Whether the run reads standard input, and under which name: when `-` is the only path, or
/// when `--stdin-filename` is given without paths. `-` among other paths, or
/// `--stdin-filename` with paths other than `-`, is a usage error (the message).
pub(crate) fn name(
    paths: &[PathBuf],
    stdin_filename: Option<&Path>,
    paths_given: bool,
) -> Result<Option<PathBuf>, String> {
    let dash = paths.iter().any(|p| p.as_os_str() == DEFAULT_NAME);
    if dash && paths.len() > 1 {
        return Err("`-` (standard input) cannot be checked together with other paths".into());
    }
    match stdin_filename {
        Some(_) if paths_given && !dash => Err(
            "the argument '--stdin-filename' names standard input: give `-` as the only path, \
             or no path"
                .into(),
        ),
        Some(name) => Ok(Some(name.to_path_buf())),
        None if dash => Ok(Some(PathBuf::from(DEFAULT_NAME))),
        None => Ok(None),
    }
}

/// Reads all of standard input.
pub(crate) fn read(path: PathBuf) -> Result<Input, String> {
    let mut bytes = Vec::new();
    io::stdin()
        .lock()
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read standard input: {e}"))?;
    Ok(Input { path, bytes })
}

/// The settings of the file standard input stands for: those of the configuration nearest
/// above its name, as for a file on disk.
fn settings<'o>(input: &Input, options: &'o ScanOptions) -> Result<Cow<'o, Settings>, ScanError> {
    match &options.config {
        Some(config) => config
            .settings_for(&input.path)
            .map(Cow::Owned)
            .map_err(ScanError::Config),
        None => Ok(Cow::Borrowed(&options.settings)),
    }
}

/// Checks the input alone (no other file of its crate is read): a report of one file, whose
/// text is kept whenever it is UTF-8.
pub(crate) fn check(input: &Input, options: &ScanOptions) -> Result<ScanReport, ScanError> {
    let started = Instant::now();
    let settings = settings(input, options)?;
    let outcome = match retry_audit::pipeline::engine::check_alone(
        &input.path,
        input.bytes.clone(),
        &settings,
    ) {
        Ok(diagnostics) => Outcome::Checked {
            diagnostics,
            source: String::from_utf8(input.bytes.clone()).ok(),
        },
        Err(error) => match retry_audit::report::syntax_error(&error, &input.bytes, &settings) {
            Some(finding) => Outcome::Checked {
                diagnostics: vec![finding],
                source: String::from_utf8(input.bytes.clone()).ok(),
            },
            None => Outcome::Skipped(SkipReason::File(error)),
        },
    };
    Ok(ScanReport {
        files: vec![FileReport {
            path: input.path.clone(),
            outcome,
        }],
        bad_paths: Vec::new(),
        stats: ScanStats {
            threads: 1,
            bytes: input.bytes.len() as u64,
            check: started.elapsed(),
            ..ScanStats::default()
        },
    })
}

/// `--fix` on standard input: the fixed source on standard output, and the report of what is
/// left (its findings, at their places in the fixed source). A source that could not be
/// checked or fixed is written back unchanged.
pub(crate) fn fix(
    input: &Input,
    report: ScanReport,
    options: &ScanOptions,
) -> io::Result<ScanReport> {
    let name = input.path.display();
    let settings = settings(input, options).map_err(|e| io::Error::other(e.to_string()))?;
    let mut report = report;
    let mut fixed = None;
    if let Some(file) = report.files.first_mut() {
        if let Outcome::Checked {
            diagnostics,
            source: Some(source),
        } = &mut file.outcome
        {
            match fix::fix_source(source, Some(diagnostics.clone()), &settings) {
                Ok(outcome) => {
                    for rule in &outcome.rejected {
                        let _ = writeln!(
                            io::stderr(),
                            "warning: not fixed {name}: the fix for {rule} would leave the file \
                             unparseable"
                        );
                    }
                    if outcome.applied > 0 {
                        super::cli_output::note(&format!(
                            "retry-audit: applied {} to {name}",
                            super::count(outcome.applied, "fix", "fixes")
                        ));
                    }
                    *diagnostics = outcome.remaining;
                    fixed = Some(outcome.text.clone());
                    *source = outcome.text;
                }
                Err(e) => {
                    let _ = writeln!(io::stderr(), "warning: not fixed {name}: {e}");
                }
            }
        }
    }
    let mut out = io::stdout().lock();
    match &fixed {
        Some(text) => out.write_all(text.as_bytes())?,
        None => out.write_all(&input.bytes)?,
    }
    out.flush()?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(list: &[&str]) -> Vec<PathBuf> {
        list.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn standard_input_is_read_for_a_lone_dash_or_a_stdin_filename_without_paths() {
        let name = |list: &[&str], filename: Option<&str>, given: bool| {
            self::name(&paths(list), filename.map(Path::new), given)
        };
        assert_eq!(name(&["-"], None, true), Ok(Some(PathBuf::from("-"))));
        assert_eq!(
            name(&["-"], Some("src/lib.rs"), true),
            Ok(Some(PathBuf::from("src/lib.rs")))
        );
        assert_eq!(
            name(&["."], Some("src/lib.rs"), false),
            Ok(Some(PathBuf::from("src/lib.rs")))
        );
        assert_eq!(name(&["."], None, false), Ok(None));
        assert_eq!(name(&["src"], None, true), Ok(None));
        assert!(name(&["-", "src"], None, true).is_err());
        assert!(name(&["src"], Some("a.rs"), true).is_err());
    }
}

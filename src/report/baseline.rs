//! Baselines: `--write-baseline FILE` records the current findings, `--baseline FILE` reports
//! only the findings that are not recorded, so that a project can adopt the tool (or a new rule)
//! without fixing everything first and still fail on every new defect.
//!
//! A finding is recognised by a fingerprint that does not depend on line numbers: the rule id,
//! the file's path relative to the baseline file's directory (with `/`), the qualified name of
//! the innermost enclosing `fn` (`Client::fetch`; empty outside any `fn`), the text of the
//! primary span without the whitespace and trailing commas that formatting changes, and the
//! finding's index among the findings of the same file that agree on all of these (in source
//! order). Code inserted, removed or renamed elsewhere in the file, or the flagged expression
//! reformatted, leaves a fingerprint unchanged; moving a finding to another function, renaming
//! its function or file, or editing the flagged expression itself makes it new.
//!
//! The file is JSON, sorted by path and line so that it diffs well under version control:
//!
//! ```json
//! {
//!   "version": 1,
//!   "findings": [
//!     {
//!       "fingerprint": "9f4a1c27d3e0b865",
//!       "rule": "RA002",
//!       "path": "src/client.rs",
//!       "function": "Client::fetch",
//!       "text": "thread::sleep(Duration::from_secs(1))",
//!       "occurrence": 0,
//!       "line": 42,
//!       "message": "constant delay between retry attempts"
//!     }
//!   ]
//! }
//! ```
//!
//! Only `fingerprint` is compared (a 64-bit FNV-1a hash, as 16 hex digits, of the rule, path,
//! function, text and occurrence); the other fields are there for the people reading the file.
//! Each entry hides one finding: two identical findings need two entries.

use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::analysis::limits::STACK_SIZE;
use crate::checks::diagnostic::Diagnostic;
use crate::report::render::fingerprint::fnv1a;
use crate::report::suppress::{fn_items, FnItem};
use crate::report::{FileReport, Outcome, ScanReport};
use crate::source::paths::{absolute, relative_to};

/// The format version written and accepted.
pub const VERSION: u32 = 1;

/// One recorded finding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub fingerprint: String,
    pub rule: String,
    pub path: String,
    pub function: String,
    pub text: String,
    pub occurrence: usize,
    pub line: usize,
    pub message: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct BaselineFile {
    version: u32,
    findings: Vec<Entry>,
}

/// A baseline file that cannot be read or written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BaselineError(pub String);

impl fmt::Display for BaselineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BaselineError {}

/// What filtering with a baseline did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Filtered {
    /// Findings removed from the report because the baseline records them.
    pub hidden: usize,
    /// Baseline entries that matched no finding (fixed since, or moved).
    pub stale: usize,
}

/// A baseline, read.
#[derive(Clone, Debug)]
pub struct Baseline {
    /// The directory paths in the file are relative to.
    dir: PathBuf,
    /// How many findings each fingerprint hides.
    counts: HashMap<String, usize>,
}

impl Baseline {
    /// Reads a baseline file written by [`write()`].
    pub fn read(path: &Path) -> Result<Baseline, BaselineError> {
        let text = fs::read_to_string(path)
            .map_err(|e| BaselineError(format!("cannot read {}: {e}", path.display())))?;
        let file: BaselineFile = serde_json::from_str(&text).map_err(|e| {
            // serde_json appends " at line L column C"; the position goes in front instead.
            let message = e.to_string();
            let message = message
                .rsplit_once(" at line ")
                .map_or(message.as_str(), |(m, _)| m);
            BaselineError(format!(
                "{}:{}:{}: not a retry-audit baseline: {message}",
                path.display(),
                e.line(),
                e.column().max(1)
            ))
        })?;
        if file.version != VERSION {
            return Err(BaselineError(format!(
                "{}: baseline version {} is not supported (this retry-audit reads version \
                 {VERSION}); write it again with --write-baseline",
                path.display(),
                file.version
            )));
        }
        let mut counts = HashMap::new();
        for entry in file.findings {
            *counts.entry(entry.fingerprint).or_insert(0) += 1;
        }
        Ok(Baseline {
            dir: directory_of(path),
            counts,
        })
    }

    /// Removes from `report` every finding the baseline records.
    pub fn filter(&self, report: &mut ScanReport) -> Filtered {
        let mut left = self.counts.clone();
        let fingerprints = entries_by_file(report, &self.dir);
        let mut hidden = 0;
        for (file, entries) in report.files.iter_mut().zip(fingerprints) {
            let Outcome::Checked { diagnostics, .. } = &mut file.outcome else {
                continue;
            };
            let mut entries = entries.into_iter();
            diagnostics.retain(|_| {
                let Some(entry) = entries.next() else {
                    return true;
                };
                match left.get_mut(&entry.fingerprint) {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        hidden += 1;
                        false
                    }
                    _ => true,
                }
            });
        }
        Filtered {
            hidden,
            stale: left.values().sum(),
        }
    }
}

/// Writes every finding of `report` to a baseline at `path`; returns how many.
pub fn write(report: &ScanReport, path: &Path) -> Result<usize, BaselineError> {
    let mut findings: Vec<Entry> = entries_by_file(report, &directory_of(path))
        .into_iter()
        .flatten()
        .collect();
    findings.sort_by(|a, b| (&a.path, a.line, &a.rule).cmp(&(&b.path, b.line, &b.rule)));
    let count = findings.len();
    let file = BaselineFile {
        version: VERSION,
        findings,
    };
    let mut text = serde_json::to_string_pretty(&file)
        .map_err(|e| BaselineError(format!("cannot encode the baseline: {e}")))?;
    text.push('\n');
    fs::write(path, text)
        .map_err(|e| BaselineError(format!("cannot write {}: {e}", path.display())))?;
    Ok(count)
}

/// The absolute directory of a baseline file.
fn directory_of(path: &Path) -> PathBuf {
    let path = absolute(path);
    path.parent()
        .map_or_else(|| path.clone(), Path::to_path_buf)
}

/// The entries of each file's findings (same order as `report.files` and their diagnostics).
/// Runs on a thread with a big stack: finding the enclosing functions parses each file again.
fn entries_by_file(report: &ScanReport, dir: &Path) -> Vec<Vec<Entry>> {
    let work = || {
        report
            .files
            .iter()
            .map(|file| file_entries(file, dir))
            .collect::<Vec<_>>()
    };
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(STACK_SIZE)
            .spawn_scoped(scope, work)
            .ok()
            .and_then(|handle| handle.join().ok())
    })
    .unwrap_or_else(work)
}

/// The path of a scanned file as a baseline records it: relative to `dir`, `/`-separated.
fn path_key(path: &Path, dir: &Path) -> String {
    relative_to(&absolute(path), dir)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

fn file_entries(file: &FileReport, dir: &Path) -> Vec<Entry> {
    let diagnostics = file.diagnostics();
    if diagnostics.is_empty() {
        return Vec::new();
    }
    let source = file.source().unwrap_or("");
    let (text, shift) = match source.strip_prefix('\u{feff}') {
        Some(rest) => (rest, '\u{feff}'.len_utf8()),
        None => (source, 0),
    };
    let fns: Vec<FnItem> = syn::parse_file(text)
        .map(|parsed| fn_items(&parsed))
        .unwrap_or_default();
    proc_macro2::extra::invalidate_current_thread_spans();
    let path = path_key(&file.path, dir);
    let mut seen: HashMap<(String, String, String), usize> = HashMap::new();
    diagnostics
        .iter()
        .map(|diagnostic| {
            let function = enclosing(&fns, diagnostic.primary.span.start.saturating_sub(shift));
            let text = span_text(source, diagnostic);
            let rule = diagnostic.rule.id().to_owned();
            let occurrence = seen
                .entry((rule.clone(), function.clone(), text.clone()))
                .or_insert(0);
            let entry = Entry {
                fingerprint: format!(
                    "{:016x}",
                    fnv1a(&[&rule, &path, &function, &text, &occurrence.to_string()])
                ),
                rule,
                path: path.clone(),
                function,
                text,
                occurrence: *occurrence,
                line: diagnostic.primary.span.start_pos.line,
                message: diagnostic.message.clone(),
            };
            *occurrence += 1;
            entry
        })
        .collect()
}

/// The qualified name of the innermost `fn` around a byte offset of the parsed text.
fn enclosing(fns: &[FnItem], offset: usize) -> String {
    fns.iter()
        .filter(|f| f.range.contains(&offset))
        .min_by_key(|f| f.range.len())
        .map(|f| f.name.clone())
        .unwrap_or_default()
}

/// The primary span's text in a form that formatting does not change (see [`normalize`]).
fn span_text(source: &str, diagnostic: &Diagnostic) -> String {
    let span = &diagnostic.primary.span;
    normalize(source.get(span.start..span.end).unwrap_or(""))
}

/// Code with the differences rustfmt makes removed: whitespace is dropped except a single space
/// between two word characters (`move |x|`, `as u64`), and a comma before a closing bracket
/// (a trailing comma) is dropped.
fn normalize(code: &str) -> String {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(code.len());
    let mut pending_space = false;
    for c in code.chars() {
        if c.is_whitespace() {
            pending_space = true;
            continue;
        }
        if pending_space && out.chars().next_back().is_some_and(is_word) && is_word(c) {
            out.push(' ');
        }
        pending_space = false;
        if matches!(c, ')' | ']' | '}') && out.ends_with(',') {
            out.pop();
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting_does_not_change_the_normal_form() {
        let one_line = normalize("sleep(Duration::from_millis(100))");
        assert_eq!(one_line, "sleep(Duration::from_millis(100))");
        assert_eq!(
            normalize("sleep(\n    Duration::from_millis( 100 ),\n)"),
            one_line
        );
        assert_eq!(normalize("x as  u64 + move || y"), "x as u64+move||y");
        assert_ne!(normalize("a b"), normalize("ab"));
    }

    #[test]
    fn the_innermost_fn_encloses() {
        let item = |name: &str, range: std::ops::Range<usize>| FnItem {
            name: name.to_owned(),
            range,
            first_line: 1,
            fn_line: 1,
        };
        let fns = [item("outer", 0..100), item("outer::inner", 10..20)];
        assert_eq!(enclosing(&fns, 15), "outer::inner");
        assert_eq!(enclosing(&fns, 50), "outer");
        assert_eq!(enclosing(&fns, 100), "");
    }
}

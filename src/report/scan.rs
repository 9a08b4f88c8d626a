//! What a scan found: each file's findings or why it was skipped, the paths that could not be
//! checked, and where the time went.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use super::FileError;
use crate::checks::diagnostic::Diagnostic;
use crate::checks::registry::Level;

/// The outcome of a whole scan: one entry per file found, sorted by path.
#[derive(Debug, Default)]
pub struct ScanReport {
    pub files: Vec<FileReport>,
    /// Paths given by the user that could not be checked at all (missing, or not a regular file
    /// or directory), in the order given; the scan went on with the others, and the run fails.
    pub bad_paths: Vec<BadPath>,
    /// Where the time went (`--stats`).
    pub stats: ScanStats,
}

/// Sizes and times of a scan, by phase. The per-file phases (read, parse, analyse) are the time
/// each worker thread spent in them, added up; the others are wall-clock time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanStats {
    /// Worker threads used.
    pub threads: usize,
    /// Bytes read from the files checked or skipped after reading.
    pub bytes: u64,
    /// Finding the files (wall).
    pub walk: Duration,
    /// Reading the files (summed over threads).
    pub read: Duration,
    /// Decoding, parsing and freeing syntax trees (summed over threads).
    pub parse: Duration,
    /// The retry-site model, the rules and suppressions (summed over threads).
    pub analyse: Duration,
    /// Checking every file, on all threads (wall).
    pub check: Duration,
    /// Nested retries across the files of each crate, and suppression comments (wall).
    pub cross_file: Duration,
    /// Files read (each once).
    pub files_read: usize,
    /// Files parsed (each at most once).
    pub files_parsed: usize,
    /// Views of another file's definitions parsed for a file's facts: the definitions a retry
    /// site follows into, not the whole file ([`crate::pipeline::index::CrateIndex::views`]).
    pub views_parsed: usize,
    /// Windows the very large files were parsed in, a window of function bodies at a time
    /// ([`crate::pipeline::engine::WINDOW_BYTES`]); 0 when every file was parsed whole.
    pub windows_parsed: usize,
    /// Retry loops whose attempt limit or wait the crate passes in, with findings changed by what
    /// it passes: no retry, one immediate second try at most, no wait ([`crate::analysis::crate_values`]).
    pub by_defaults: usize,
}

/// One file (or one unreadable directory entry) and what became of it.
#[derive(Debug)]
pub struct FileReport {
    /// The path as the walker yields it: the path given joined with the file's relative path.
    pub path: PathBuf,
    pub outcome: Outcome,
}

/// Whether a file was checked, and what was found.
#[derive(Debug)]
pub enum Outcome {
    /// The file was analysed.
    Checked {
        /// Findings, in source order.
        diagnostics: Vec<Diagnostic>,
        /// The file's text, kept only when there are findings to render.
        source: Option<String>,
    },
    /// The file could not be analysed; the scan went on without it.
    Skipped(SkipReason),
}

/// Why a file or directory entry was not analysed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SkipReason {
    /// Reading, decoding or parsing failed.
    File(FileError),
    /// The directory walk could not read this entry (permissions, a vanished file, ...).
    Walk(String),
    /// The analysis itself failed on this file; a bug in retry-audit.
    Internal(String),
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::File(FileError::Io(e)) => write!(f, "cannot read: {e}"),
            SkipReason::File(e) => write!(f, "{e}"),
            SkipReason::Walk(e) => f.write_str(e),
            SkipReason::Internal(e) => {
                write!(f, "internal error in retry-audit (please report): {e}")
            }
        }
    }
}

/// A path given by the user that was not checked, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadPath {
    /// The path as given.
    pub path: PathBuf,
    /// What is wrong with it (`no such file or directory`, `a named pipe (FIFO), ...`).
    pub reason: String,
}

impl fmt::Display for BadPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot check {}: {}", self.path.display(), self.reason)
    }
}

/// Totals over a [`ScanReport`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Files analysed.
    pub checked: usize,
    /// Files or entries that could not be analysed.
    pub skipped: usize,
    /// Findings at error level.
    pub errors: usize,
    /// Findings at warning level.
    pub warnings: usize,
}

impl ScanReport {
    /// Every finding with the file it is in, files in path order, findings in source order.
    pub fn diagnostics(&self) -> impl Iterator<Item = (&FileReport, &Diagnostic)> {
        self.files.iter().flat_map(|file| {
            file.diagnostics()
                .iter()
                .map(move |diagnostic| (file, diagnostic))
        })
    }

    /// The files (and entries) that were skipped, with the reason.
    pub fn skipped(&self) -> impl Iterator<Item = (&FileReport, &SkipReason)> {
        self.files.iter().filter_map(|file| match &file.outcome {
            Outcome::Skipped(reason) => Some((file, reason)),
            Outcome::Checked { .. } => None,
        })
    }

    /// Files checked and skipped, findings by level.
    #[must_use]
    pub fn counts(&self) -> Counts {
        let mut counts = Counts::default();
        for file in &self.files {
            match &file.outcome {
                Outcome::Checked { .. } => counts.checked += 1,
                Outcome::Skipped(_) => counts.skipped += 1,
            }
        }
        for (_, diagnostic) in self.diagnostics() {
            match diagnostic.level {
                Level::Error => counts.errors += 1,
                Level::Warning => counts.warnings += 1,
                Level::Allow => {}
            }
        }
        counts
    }

    /// Whether the run fails whatever was found: a path given could not be checked.
    #[must_use]
    pub fn has_bad_paths(&self) -> bool {
        !self.bad_paths.is_empty()
    }

    /// Whether any finding is at error level (the run fails).
    #[must_use]
    pub fn has_errors(&self) -> bool {
        self.counts().errors > 0
    }
}

impl FileReport {
    /// The findings in this file (none if it was skipped).
    #[must_use]
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match &self.outcome {
            Outcome::Checked { diagnostics, .. } => diagnostics,
            Outcome::Skipped(_) => &[],
        }
    }

    /// The file's text, if it was kept (only files with findings keep it).
    #[must_use]
    pub fn source(&self) -> Option<&str> {
        match &self.outcome {
            Outcome::Checked { source, .. } => source.as_deref(),
            Outcome::Skipped(_) => None,
        }
    }
}

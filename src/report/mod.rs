//! What a scan reports, and what is done with it before rendering: suppression comments, the
//! baseline, and the output formats.

use std::fmt;

use crate::analysis::limits;
use crate::source::Position;

#[cfg(feature = "cli")]
pub mod baseline;
#[cfg(feature = "cli")]
pub mod render;
#[cfg(feature = "cli")]
mod scan;
pub mod suppress;

#[cfg(feature = "cli")]
pub use scan::{BadPath, Counts, FileReport, Outcome, ScanReport, ScanStats, SkipReason};

/// Why a file was not checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileError {
    /// `syn` could not parse it; position of the error.
    Parse { position: Position, message: String },
    /// Not valid UTF-8 (`offset` = first bad byte).
    NotUtf8 { offset: usize },
    /// Nested deeper than the parser can follow (see [`crate::analysis::limits::syntax_depth`]).
    TooDeep,
    /// The analysis went past one of its limits on this file (see [`crate::analysis::limits`]).
    TooComplex(limits::Exhausted),
    /// The file could not be read.
    Io(String),
    /// The analysis panicked on this file: a bug in retry-audit (the panic's message).
    Internal(String),
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileError::Parse { message, .. } => write!(f, "{message}"),
            FileError::NotUtf8 { offset } => write!(f, "not valid UTF-8 (byte {offset})"),
            FileError::TooDeep => f.write_str("too deeply nested to analyse"),
            FileError::TooComplex(why) => write!(f, "too complex to analyse: {why}"),
            FileError::Io(e) => f.write_str(e),
            FileError::Internal(e) => {
                write!(f, "internal error in retry-audit (please report): {e}")
            }
        }
    }
}

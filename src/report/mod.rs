//! What a scan reports, and what is done with it before rendering: suppression comments, the
//! baseline, and the output formats.

use std::fmt;

use crate::analysis::limits;
use crate::checks::diagnostic::{Diagnostic, Label};
use crate::checks::registry::{Level, Rule};
use crate::checks::Settings;
use crate::source::{Position, Span};

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

/// A file that does not parse, as a finding (RA000 `syntax-error`, as ruff reports syntax
/// errors): at the parser's position, one character wide, the parser's message after the
/// rule's summary; `None` for the other errors, or when the rule is off for the file (the
/// file is then skipped, as any file that cannot be checked).
#[must_use]
pub fn syntax_error(error: &FileError, bytes: &[u8], settings: &Settings) -> Option<Diagnostic> {
    let FileError::Parse { position, message } = error else {
        return None;
    };
    let rule = Rule::SyntaxError;
    let level = settings.level(rule);
    if level == Level::Allow {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    let start = position.offset_in(text);
    let end = text[start..]
        .chars()
        .next()
        .filter(|c| *c != '\n' && *c != '\r')
        .map_or(start, |c| start + c.len_utf8());
    let end_pos = Position {
        line: position.line,
        column: position.column + usize::from(end > start),
    };
    let span = Span {
        start,
        end,
        start_pos: *position,
        end_pos,
    };
    Some(Diagnostic {
        rule,
        level,
        message: format!("{}: {message}", rule.meta().summary),
        primary: Label {
            span,
            message: String::new(),
        },
        secondary: Vec::new(),
        help: Some(rule.meta().help.clone()),
        notes: Vec::new(),
        fix: None,
        elsewhere: Vec::new(),
    })
}

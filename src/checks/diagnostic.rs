//! What the engine reports: a rule, a message, labelled spans and a help line. No rendering here.

use crate::checks::registry::{Level, Rule};
use crate::source::{Fix, Span};

/// A span with its explanation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub rule: Rule,
    /// The level in force for this run (default, or as the user set it).
    pub level: Level,
    /// One line, lower-case, no period.
    pub message: String,
    /// The offending expression.
    pub primary: Label,
    /// Context, e.g. the loop head ("retry loop here").
    pub secondary: Vec<Label>,
    /// What to do instead.
    pub help: Option<String>,
    /// Extra facts (e.g. which statuses are retried).
    pub notes: Vec<String>,
    /// A mechanical fix, when there is one (RA005: move the key's creation above the loop).
    pub fix: Option<Fix>,
    /// Places in other files the finding rests on (a definition of another file of the crate):
    /// also said in `notes`, for formats that can point there (SARIF, the language server).
    pub elsewhere: Vec<Elsewhere>,
}

/// A place in another file: its path (as the scan names it), 1-based line and column (in
/// characters), and what is there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Elsewhere {
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
    /// The finding's note that says it in words (an index into [`Diagnostic::notes`]): the
    /// formats that can point there attach the place to it.
    pub note: usize,
}

//! What the engine reports: a rule, a message, labelled spans and a help line. No rendering here.

use crate::registry::{Level, Rule};

/// A 1-based line and 1-based column (counted in characters, as rustc does).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

impl Position {
    /// Its byte offset in `text` (the line counted at `\n`, the column in characters, not
    /// counting a byte-order mark on line 1), clamped to the text.
    #[must_use]
    pub fn offset_in(self, text: &str) -> usize {
        let mut start = 0;
        for _ in 1..self.line {
            match text[start..].find('\n') {
                Some(i) => start += i + 1,
                None => return text.len(),
            }
        }
        if start == 0 && text.starts_with('\u{feff}') {
            start = '\u{feff}'.len_utf8();
        }
        let line_text = &text[start..];
        let line_len = line_text.find('\n').unwrap_or(line_text.len());
        line_text[..line_len]
            .char_indices()
            .nth(self.column.saturating_sub(1))
            .map_or(start + line_len, |(i, _)| start + i)
    }
}

/// A region of one source file: byte offsets (end exclusive) and the matching positions
/// (`end` is exclusive too: the column just past the last character).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub start_pos: Position,
    pub end_pos: Position,
}

impl Span {
    /// A place in another file than the one being reported on (a definition imported from
    /// elsewhere in the crate): line 0, which no finding shows.
    #[must_use]
    pub fn elsewhere() -> Self {
        let nowhere = Position { line: 0, column: 0 };
        Span {
            start: 0,
            end: 0,
            start_pos: nowhere,
            end_pos: nowhere,
        }
    }

    /// Whether this is [`Span::elsewhere`].
    #[must_use]
    pub fn is_elsewhere(&self) -> bool {
        self.start_pos.line == 0
    }
}

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

/// Text edits that fix a finding; machine-applicable: applying them keeps the file compiling
/// (as far as a syntax-only tool can tell) and removes the finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    /// What the fix does, e.g. "create the key once, before the loop".
    pub message: String,
    /// Non-overlapping edits, in file order.
    pub edits: Vec<Edit>,
}

/// Replace the bytes `start..end` of the original file with `replacement` (an insertion when
/// `start == end`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub replacement: String,
}

impl Diagnostic {
    /// A file that does not parse, as a finding (RA000 `syntax-error`, as ruff reports syntax
    /// errors): at the parser's position, one character wide, the parser's message after the
    /// rule's summary; `None` for the other errors, or when the rule is off for the file (the
    /// file is then skipped, as any file that cannot be checked).
    #[must_use]
    pub fn syntax_error(
        error: &crate::engine::FileError,
        bytes: &[u8],
        settings: &crate::engine::Settings,
    ) -> Option<Diagnostic> {
        let crate::engine::FileError::Parse { position, message } = error else {
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
}

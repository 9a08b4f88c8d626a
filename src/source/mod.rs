//! Places in a source file, shared by every layer above: 1-based positions, byte spans, edits
//! (a fix is edits of the file's text), and file paths made absolute or relative.

pub mod paths;

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

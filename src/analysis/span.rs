//! Converting `proc_macro2` spans into [`Span`]s of the original file.

use proc_macro2::Span as PmSpan;
use syn::spanned::Spanned;

use crate::source::{Position, Span};

/// Maps proc-macro2 byte ranges (relative to the parsed text) to byte offsets and 1-based
/// line/column positions of the original file (which may start with a byte-order mark).
pub struct LineIndex<'a> {
    text: &'a str,
    /// Byte offset of each line start in the parsed text, worked out on first use (most files
    /// have no finding to place).
    line_starts: std::cell::OnceCell<Vec<usize>>,
    /// Bytes removed before parsing (a byte-order mark).
    shift: usize,
    /// A span of this file, when spans of other files (definitions imported from the crate)
    /// are in play: a span that cannot be joined with it is of another file.
    anchor: Option<PmSpan>,
}

impl<'a> LineIndex<'a> {
    #[must_use]
    pub fn new(text: &'a str, shift: usize) -> Self {
        LineIndex {
            text,
            line_starts: std::cell::OnceCell::new(),
            shift,
            anchor: None,
        }
    }

    /// Tells the index that spans of other parsed files may be met: `anchor` is one of this
    /// file's. A span of another file becomes [`Span::elsewhere`] (line 0), which no finding
    /// may show.
    #[must_use]
    pub fn with_anchor(mut self, anchor: PmSpan) -> Self {
        self.anchor = Some(anchor);
        self
    }

    fn line_starts(&self) -> &[usize] {
        self.line_starts.get_or_init(|| {
            let mut starts = vec![0];
            starts.extend(self.text.match_indices('\n').map(|(i, _)| i + 1));
            starts
        })
    }

    /// The parsed text.
    #[must_use]
    pub fn source(&self) -> &'a str {
        self.text
    }

    /// The position of a byte offset of the parsed text.
    fn position(&self, offset: usize) -> Position {
        let offset = offset.min(self.text.len());
        let line = match self.line_starts().binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_starts()[line];
        let column = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count());
        // The BOM sits on line 1 before column 1 of the parsed text: it shifts bytes, not columns
        // as editors count them.
        Position {
            line: line + 1,
            column: column + 1,
        }
    }

    /// The file span of a proc-macro2 span.
    #[must_use]
    pub fn span(&self, span: PmSpan) -> Span {
        if let Some(anchor) = self.anchor {
            if span.join(anchor).is_none() {
                return Span::elsewhere();
            }
        }
        let range = span.byte_range();
        let (start, end) = (
            range.start.min(self.text.len()),
            range.end.min(self.text.len()),
        );
        Span {
            start: start + self.shift,
            end: end.max(start) + self.shift,
            start_pos: self.position(start),
            end_pos: self.position(end.max(start)),
        }
    }

    /// The file span of a syntax node. `syn` finds it by writing the node out as tokens, so it
    /// costs the node's length, spent from the file's work budget ([`crate::analysis::limits::spend`]).
    pub fn of<T: Spanned + ?Sized>(&self, node: &T) -> Span {
        let span = self.span(node.span());
        crate::analysis::limits::spend((span.end - span.start) as u64);
        span
    }

    /// The file span from the start of `a` to the end of `b`.
    pub fn between<A: Spanned + ?Sized, B: Spanned + ?Sized>(&self, a: &A, b: &B) -> Span {
        let a = self.of(a);
        let b = self.of(b);
        Span {
            start: a.start,
            end: b.end.max(a.start),
            start_pos: a.start_pos,
            end_pos: if b.end >= a.start {
                b.end_pos
            } else {
                a.end_pos
            },
        }
    }

    /// The line holding file offset `offset`: its start and the offset just past its newline
    /// (or the end of the file), both in file coordinates.
    #[must_use]
    pub fn line_of(&self, offset: usize) -> (usize, usize) {
        let at = offset.saturating_sub(self.shift).min(self.text.len());
        let line = match self.line_starts().binary_search(&at) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_starts()[line];
        let end = self
            .line_starts()
            .get(line + 1)
            .copied()
            .unwrap_or(self.text.len());
        (start + self.shift, end + self.shift)
    }

    /// The text of file bytes `start..end` (empty if out of range).
    #[must_use]
    pub fn slice(&self, start: usize, end: usize) -> &'a str {
        self.text
            .get(start.saturating_sub(self.shift)..end.saturating_sub(self.shift))
            .unwrap_or("")
    }

    /// The source text of a span (for messages).
    #[must_use]
    pub fn text(&self, span: Span) -> &'a str {
        self.text
            .get(span.start - self.shift..span.end - self.shift)
            .unwrap_or("")
    }
}

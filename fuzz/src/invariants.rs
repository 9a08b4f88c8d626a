//! What must hold of the checker's answer for any input: a violation panics (a crash for the
//! fuzzer), with a message that says which promise was broken.

use retry_audit::analysis::limits;
use retry_audit::checks::Settings;
use retry_audit::pipeline::engine;
use retry_audit::report::FileError;
use retry_audit::{Diagnostic, Edit, Label, Level, Position};

/// Syntax depth up to which the analysis of a file never nests too deeply (the deepest of the
/// 17 098 files of the corpus test nests 65 calls, against a limit of 20 000).
pub const SHALLOW: usize = 1_000;

/// Size up to which a shallow file never runs out of work (the most any file of the corpus test
/// spends is 2.6 units per byte, against 1 000 per byte and 1 000 000 for any file).
pub const SMALL: usize = 16 * 1024;

/// Checks `result`, the answer of the checker for the file `src` under `settings`.
pub fn check(src: &[u8], settings: &Settings, result: &Result<Vec<Diagnostic>, FileError>) {
    let text = match std::str::from_utf8(src) {
        Ok(text) => text,
        Err(e) => {
            assert_eq!(
                result,
                &Err(FileError::NotUtf8 {
                    offset: e.valid_up_to()
                }),
                "a non-UTF-8 file must be refused at its first bad byte"
            );
            return;
        }
    };
    let shift = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let parsed = &text[shift..];
    match result {
        Ok(diagnostics) => check_diagnostics(text, shift, settings, diagnostics),
        Err(FileError::Parse { position, message }) => {
            assert!(!message.is_empty(), "a parse error without a message");
            let lines = parsed.lines().count().max(1);
            assert!(
                position.line >= 1 && position.line <= lines + 1 && position.column >= 1,
                "parse error at {position:?}, outside a file of {lines} lines"
            );
        }
        Err(FileError::TooDeep) => {
            let depth = limits::syntax_depth(parsed);
            assert!(
                depth > limits::MAX_SYNTAX_DEPTH,
                "refused as too deep at a syntax depth of {depth} (limit {})",
                limits::MAX_SYNTAX_DEPTH
            );
        }
        Err(FileError::TooComplex(why)) => {
            // A shallow file is never nested too deeply for the analysis: there, a depth or
            // stack limit reached is a walk that follows names without end (a cycle). Work
            // grows faster than the file in places (a `match` of thousands of arms in a loop),
            // but a small file that runs out of it is a walk that explodes.
            let depth = limits::syntax_depth(parsed);
            let small = parsed.len() <= SMALL;
            let allowed = depth > SHALLOW || (why.0 == limits::Limit::Work && !small);
            assert!(
                allowed,
                "a file of {} bytes and syntax depth {depth} refused as too complex: {why}",
                parsed.len()
            );
        }
        Err(FileError::NotUtf8 { offset }) => {
            panic!("valid UTF-8 refused as not UTF-8 at byte {offset}")
        }
        Err(FileError::Io(e)) => panic!("an I/O error without I/O: {e}"),
        Err(FileError::Internal(e)) => panic!("the analysis panicked: {e}"),
    }
}

fn check_diagnostics(text: &str, shift: usize, settings: &Settings, diagnostics: &[Diagnostic]) {
    for d in diagnostics {
        assert_ne!(d.level, Level::Allow, "{} reported at level allow", d.rule);
        assert_eq!(
            d.level,
            settings.level(d.rule),
            "{} reported at a level other than the one in force",
            d.rule
        );
        assert!(
            !d.message.is_empty() && !d.message.contains('\n'),
            "{}: a message must be one non-empty line: {:?}",
            d.rule,
            d.message
        );
        check_label(text, shift, &d.primary);
        for label in &d.secondary {
            check_label(text, shift, label);
        }
    }
    for pair in diagnostics.windows(2) {
        assert!(
            pair[0].primary.span.start <= pair[1].primary.span.start,
            "diagnostics out of source order: {} at {} before {} at {}",
            pair[0].rule,
            pair[0].primary.span.start,
            pair[1].rule,
            pair[1].primary.span.start
        );
    }
    for (i, a) in diagnostics.iter().enumerate() {
        for b in &diagnostics[i + 1..] {
            assert!(
                !(a.rule == b.rule && a.primary.span == b.primary.span),
                "{} reported twice at {:?}",
                a.rule,
                a.primary.span
            );
        }
    }
    for d in diagnostics {
        if let Some(fix) = &d.fix {
            check_fix(text, settings, d, &fix.edits, diagnostics);
        }
    }
}

/// A label's span lies in the file, on character boundaries, past the BOM, and its positions
/// are those of its offsets (1-based lines, columns in characters, the BOM not counted).
fn check_label(text: &str, shift: usize, label: &Label) {
    let span = label.span;
    assert!(
        shift <= span.start && span.start <= span.end && span.end <= text.len(),
        "span {}..{} outside a file of {} bytes",
        span.start,
        span.end,
        text.len()
    );
    assert!(
        text.is_char_boundary(span.start) && text.is_char_boundary(span.end),
        "span {}..{} cuts a character",
        span.start,
        span.end
    );
    assert_eq!(
        span.start_pos,
        position(text, shift, span.start),
        "start position of span {}..{}",
        span.start,
        span.end
    );
    assert_eq!(
        span.end_pos,
        position(text, shift, span.end),
        "end position of span {}..{}",
        span.start,
        span.end
    );
}

/// The 1-based line and column (in characters) of byte `offset` of the file.
#[must_use]
pub fn position(text: &str, shift: usize, offset: usize) -> Position {
    let before = &text[shift..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Position {
        line: before.matches('\n').count() + 1,
        column: before[line_start..].chars().count() + 1,
    }
}

/// A fix's edits are ordered, disjoint and in bounds; applied, the file still parses and has
/// fewer findings of the rule (the fix removes its finding).
fn check_fix(
    text: &str,
    settings: &Settings,
    diagnostic: &Diagnostic,
    edits: &[Edit],
    before: &[Diagnostic],
) {
    assert!(
        !edits.is_empty(),
        "{}: a fix without edits",
        diagnostic.rule
    );
    let mut end = 0;
    for edit in edits {
        assert!(
            end <= edit.start && edit.start <= edit.end && edit.end <= text.len(),
            "{}: edit {}..{} overlaps, is reversed or is out of bounds",
            diagnostic.rule,
            edit.start,
            edit.end
        );
        assert!(
            text.is_char_boundary(edit.start) && text.is_char_boundary(edit.end),
            "{}: edit {}..{} cuts a character",
            diagnostic.rule,
            edit.start,
            edit.end
        );
        end = edit.end;
    }
    let mut fixed = String::with_capacity(text.len());
    let mut at = 0;
    for edit in edits {
        fixed.push_str(&text[at..edit.start]);
        fixed.push_str(&edit.replacement);
        at = edit.end;
    }
    fixed.push_str(&text[at..]);
    let after = match engine::check_source(&fixed, settings) {
        Ok(after) => after,
        Err(e) => panic!(
            "{} fix at {}:{} leaves a file that does not parse ({e}):\n{fixed}",
            diagnostic.rule,
            diagnostic.primary.span.start_pos.line,
            diagnostic.primary.span.start_pos.column
        ),
    };
    let count = |ds: &[Diagnostic]| ds.iter().filter(|d| d.rule == diagnostic.rule).count();
    assert!(
        count(&after) < count(before),
        "{} fix at {}:{} does not remove the finding:\n{fixed}",
        diagnostic.rule,
        diagnostic.primary.span.start_pos.line,
        diagnostic.primary.span.start_pos.column
    );
}

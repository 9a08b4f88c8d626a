//! Inline suppressions, and RA100 for the ones that suppress nothing.
//!
//! A suppression is a `//` comment, in the spirit of Rust's `#[allow(lint, reason = "...")]`:
//!
//! ```text
//! // retry-audit: allow(fixed-delay, RA003, reason = "the vendor asks for one call a second")
//! //! retry-audit: allow(RA002)          file-level: the whole file
//! ```
//!
//! Scope, by where the comment sits:
//!
//! - after code on the same line: findings whose primary span starts on that line;
//! - on a line of its own: findings that start on the next line of code (further `//` comment
//!   lines in between are skipped; a blank line is not code, so nothing follows it);
//! - on a line of its own, and that next line of code is the first line of a `fn` item (its
//!   attributes and doc comments included) or its `fn` line: every finding inside the `fn`;
//! - `//!` anywhere in the file: every finding in the file.
//!
//! [`apply`] removes the findings a suppression covers and reports, under
//! [`Rule::UnusedSuppression`] (RA100, like ruff's RUF100), every rule named in a suppression
//! that covers no finding (including rules that are not enabled for the file), every unknown
//! rule name, and every comment that starts with `retry-audit:` but does not follow the grammar.
//! RA100 findings can themselves be suppressed by a suppression naming RA100 (the file-level
//! form is the useful one).

use std::ops::Range;

use syn::spanned::Spanned;
use syn::visit::{self, Visit};

use crate::checks::diagnostic::{Diagnostic, Label};
use crate::checks::registry::{Level, Rule};
use crate::checks::Settings;
use crate::source::{Position, Span};

/// The marker that makes a `//` comment a suppression.
pub const MARKER: &str = "retry-audit:";

/// A `fn` item (free function, method, trait method with a body) of a parsed file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FnItem {
    /// Qualified name: enclosing modules, the impl's type or the trait, outer `fn`s, then the
    /// name (`client::Client::fetch`).
    pub name: String,
    /// Byte range of the whole item, outer attributes and doc comments included, in the parsed
    /// text.
    pub range: Range<usize>,
    /// 1-based line of the item's first token (its first attribute, if it has one).
    pub first_line: usize,
    /// 1-based line of the `fn` keyword.
    pub fn_line: usize,
}

/// Every `fn` item of `file`, nested ones included, in source order.
#[must_use]
pub fn fn_items(file: &syn::File) -> Vec<FnItem> {
    let mut collector = FnCollector::default();
    collector.visit_file(file);
    collector
        .items
        .sort_by_key(|item| (item.range.start, item.range.end));
    collector.items
}

#[derive(Default)]
struct FnCollector {
    path: Vec<String>,
    items: Vec<FnItem>,
}

impl FnCollector {
    fn record(&mut self, name: &syn::Ident, fn_token: &syn::token::Fn, whole: proc_macro2::Span) {
        let mut qualified = self.path.clone();
        qualified.push(name.to_string());
        self.items.push(FnItem {
            name: qualified.join("::"),
            range: whole.byte_range(),
            first_line: whole.start().line,
            fn_line: fn_token.span.start().line,
        });
    }
}

/// The type an `impl` block is for, without whitespace (`Client<T>`, `<Client as Trait>`).
fn impl_name(item: &syn::ItemImpl) -> String {
    let compact = |tokens: &dyn quote::ToTokens| {
        tokens
            .to_token_stream()
            .to_string()
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
    };
    match &item.trait_ {
        Some((_, path, _)) => format!("<{} as {}>", compact(&item.self_ty), compact(path)),
        None => compact(&item.self_ty),
    }
}

impl<'ast> Visit<'ast> for FnCollector {
    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        self.path.push(item.ident.to_string());
        visit::visit_item_mod(self, item);
        self.path.pop();
    }

    fn visit_item_impl(&mut self, item: &'ast syn::ItemImpl) {
        self.path.push(impl_name(item));
        visit::visit_item_impl(self, item);
        self.path.pop();
    }

    fn visit_item_trait(&mut self, item: &'ast syn::ItemTrait) {
        self.path.push(item.ident.to_string());
        visit::visit_item_trait(self, item);
        self.path.pop();
    }

    fn visit_item_fn(&mut self, item: &'ast syn::ItemFn) {
        self.record(&item.sig.ident, &item.sig.fn_token, item.span());
        self.path.push(item.sig.ident.to_string());
        visit::visit_item_fn(self, item);
        self.path.pop();
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        self.record(&item.sig.ident, &item.sig.fn_token, item.span());
        self.path.push(item.sig.ident.to_string());
        visit::visit_impl_item_fn(self, item);
        self.path.pop();
    }

    fn visit_trait_item_fn(&mut self, item: &'ast syn::TraitItemFn) {
        if item.default.is_some() {
            self.record(&item.sig.ident, &item.sig.fn_token, item.span());
        }
        self.path.push(item.sig.ident.to_string());
        visit::visit_trait_item_fn(self, item);
        self.path.pop();
    }
}

/// A `//` comment of the source: from the slashes to the end of the line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LineComment {
    /// Byte range in the parsed text (the newline excluded).
    start: usize,
    end: usize,
    /// Whether only whitespace precedes it on its line.
    own_line: bool,
}

/// Byte offsets of the starts of each line.
struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines { starts }
    }

    /// The 1-based line of a byte offset.
    fn line_of(&self, offset: usize) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }

    /// The 1-based line and column (in characters) of a byte offset.
    fn position(&self, text: &str, offset: usize) -> Position {
        let line = self.line_of(offset);
        let start = self.starts[line - 1];
        Position {
            line,
            column: text.get(start..offset).map_or(1, |s| s.chars().count() + 1),
        }
    }
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The end of the line starting the search at `from` (the offset of its `\n`, or the length).
fn line_end(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |i| from + i)
}

/// Every `//` comment of a Rust source, skipping string, raw string and char literals and block
/// comments. The text is known to parse, so the scan can be simple: it only has to tell
/// comments from literals.
fn line_comments(text: &str) -> Vec<LineComment> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut line_start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                i += 1;
                line_start = i;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let end = line_end(bytes, i);
                out.push(LineComment {
                    start: i,
                    end,
                    own_line: text[line_start..i].trim().is_empty(),
                });
                i = end;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let mut depth = 1;
                i += 2;
                while i < bytes.len() && depth > 0 {
                    if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'*') {
                        depth += 1;
                        i += 2;
                    } else if bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/') {
                        depth -= 1;
                        i += 2;
                    } else {
                        i += 1;
                    }
                }
                line_start = text[..i].rfind('\n').map_or(0, |n| n + 1);
            }
            b'"' => {
                i = skip_string(bytes, i + 1);
                line_start = text[..i].rfind('\n').map_or(0, |n| n + 1);
            }
            b'r' if i == 0 || !is_ident_byte(bytes[i - 1]) || raw_prefix(bytes, i) => {
                match skip_raw_string(bytes, i + 1) {
                    Some(end) => {
                        i = end;
                        line_start = text[..i].rfind('\n').map_or(0, |n| n + 1);
                    }
                    None => i += 1,
                }
            }
            b'\'' => i = skip_char_or_lifetime(text, i),
            _ => i += 1,
        }
    }
    out
}

/// Whether the `r` at `i` follows a `b` or `c` that starts a token (`br"..."`, `cr"..."`).
fn raw_prefix(bytes: &[u8], i: usize) -> bool {
    i >= 1 && matches!(bytes[i - 1], b'b' | b'c') && (i == 1 || !is_ident_byte(bytes[i - 2]))
}

/// The offset just past the closing quote of a string whose body starts at `i`.
fn skip_string(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

/// If a raw string's hashes and quote start at `i` (just after the `r`), the offset past its end.
fn skip_raw_string(bytes: &[u8], i: usize) -> Option<usize> {
    let hashes = bytes[i..].iter().take_while(|&&b| b == b'#').count();
    if bytes.get(i + hashes) != Some(&b'"') {
        return None;
    }
    let mut j = i + hashes + 1;
    while j < bytes.len() {
        let closes = bytes
            .get(j + 1..j + 1 + hashes)
            .is_some_and(|h| h.iter().all(|&b| b == b'#'));
        if bytes[j] == b'"' && closes {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(bytes.len())
}

/// Skips a char literal (`'a'`, `'\n'`, `'\u{1F600}'`) or the quote of a lifetime or label.
fn skip_char_or_lifetime(text: &str, i: usize) -> usize {
    let bytes = text.as_bytes();
    if bytes.get(i + 1) == Some(&b'\\') {
        // An escape: the literal ends at the next quote after the escaped character.
        let from = (i + 3).min(bytes.len());
        return bytes[from..]
            .iter()
            .position(|&b| b == b'\'')
            .map_or(bytes.len(), |p| from + p + 1);
    }
    match text[i + 1..].chars().next() {
        Some(c) if bytes.get(i + 1 + c.len_utf8()) == Some(&b'\'') => i + 2 + c.len_utf8(),
        _ => i + 1,
    }
}

/// One rule named in a suppression, as written.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    /// The name as written (`RA002`, `fixed-delay`).
    code: String,
    /// Its byte range in the parsed text.
    range: Range<usize>,
    /// The rule it names, if any.
    rule: Option<Rule>,
}

/// What a suppression comment says.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Parsed {
    /// `allow(...)`: the rules, and the reason if one was given.
    Allow {
        entries: Vec<Entry>,
        reason: Option<String>,
    },
    /// Not the grammar: what is wrong, and where.
    Malformed {
        problem: String,
        range: Range<usize>,
    },
}

/// A small cursor over the text of one comment, with offsets into the whole file.
struct Cursor<'t> {
    text: &'t str,
    /// Offset of `text` in the file.
    base: usize,
    pos: usize,
}

impl Cursor<'_> {
    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn skip_ws(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start().len();
    }

    fn eat(&mut self, s: &str) -> bool {
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    /// A rule code or keyword: letters, digits, `-` and `_`.
    fn word(&mut self) -> Option<(String, Range<usize>)> {
        let len = self
            .rest()
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(self.rest().len());
        if len == 0 {
            return None;
        }
        let start = self.pos;
        self.pos += len;
        Some((
            self.text[start..self.pos].to_owned(),
            self.base + start..self.base + self.pos,
        ))
    }

    /// A `"..."` string with `\"` and `\\` escapes.
    fn string(&mut self) -> Option<String> {
        let rest = self.rest();
        let body = rest.strip_prefix('"')?;
        let mut value = String::new();
        let mut chars = body.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.pos += 1 + i + 1;
                    return Some(value);
                }
                '\\' => value.push(chars.next()?.1),
                c => value.push(c),
            }
        }
        None
    }

    /// `len` bytes from the cursor (fewer at the end of the comment), widened to the end of
    /// the character they stop in so a span never cuts a character.
    fn here(&self, len: usize) -> Range<usize> {
        let mut end = self.pos + len.min(self.text.len() - self.pos);
        while !self.text.is_char_boundary(end) {
            end += 1;
        }
        self.base + self.pos..self.base + end
    }
}

/// Parses the text after [`MARKER`]: `allow(RULE, ..., reason = "...")`, then nothing but
/// whitespace or another `//` comment.
fn parse_directive(text: &str, base: usize) -> Parsed {
    let mut c = Cursor { text, base, pos: 0 };
    let malformed = |problem: &str, range: Range<usize>| Parsed::Malformed {
        problem: problem.to_owned(),
        range,
    };
    c.skip_ws();
    let verb_at = c.here(c.rest().len());
    match c.word() {
        Some((verb, _)) if verb == "allow" => {}
        Some((verb, range)) => {
            return malformed(
                &format!("expected `allow`, found `{verb}` (only `allow(...)` is supported)"),
                range,
            )
        }
        None => return malformed("expected `allow(RULE, ...)`", verb_at),
    }
    c.skip_ws();
    if !c.eat("(") {
        return malformed("expected `(` after `allow`", c.here(1));
    }
    let mut entries = Vec::new();
    let mut reason = None;
    loop {
        c.skip_ws();
        if c.eat(")") {
            break;
        }
        if reason.is_some() {
            return malformed("`reason` must come last", c.here(c.rest().len()));
        }
        let Some((word, range)) = c.word() else {
            let problem = if c.rest().is_empty() {
                "expected `)`"
            } else {
                "expected a rule id or name"
            };
            return malformed(problem, c.here(1));
        };
        c.skip_ws();
        if word == "reason" && c.eat("=") {
            c.skip_ws();
            let at = c.here(1);
            match c.string() {
                Some(text) if text.trim().is_empty() => {
                    return malformed("the reason is empty", at.start..base + c.pos)
                }
                Some(text) => reason = Some(text),
                None => return malformed("expected a `\"...\"` string after `reason =`", at),
            }
        } else {
            entries.push(Entry {
                rule: Rule::from_code(&word),
                code: word,
                range,
            });
        }
        c.skip_ws();
        if c.eat(",") {
            continue;
        }
        if c.rest().is_empty() {
            return malformed("expected `)`", c.here(1));
        }
        if !c.rest().starts_with(')') {
            return malformed("expected `,` or `)`", c.here(1));
        }
    }
    if entries.is_empty() {
        return malformed("`allow(...)` names no rule", base..base + c.pos);
    }
    c.skip_ws();
    if !(c.rest().is_empty() || c.rest().starts_with("//")) {
        return malformed(
            "unexpected text after `)` (only another `//` comment may follow)",
            c.here(c.rest().len()),
        );
    }
    Parsed::Allow { entries, reason }
}

/// Where a suppression applies.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Scope {
    /// The whole file (`//!`).
    File,
    /// Findings starting on this 1-based line.
    Line(usize),
    /// Findings starting inside this `fn` (byte range in the parsed text).
    Fn { name: String, range: Range<usize> },
}

/// One suppression comment of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Directive {
    scope: Scope,
    /// The whole comment, from the slashes to the end of the line.
    comment: Range<usize>,
    parsed: Parsed,
}

/// The suppression comments of a file, with their scopes. `fns` are the file's `fn` items.
fn directives(text: &str, fns: &[FnItem]) -> Vec<Directive> {
    let lines = Lines::new(text);
    let comments = line_comments(text);
    let comment_lines: std::collections::BTreeSet<usize> = comments
        .iter()
        .filter(|c| c.own_line)
        .map(|c| lines.line_of(c.start))
        .collect();
    let mut out = Vec::new();
    for comment in &comments {
        let body = &text[comment.start + 2..comment.end];
        let (file_level, body, body_at) = match body.strip_prefix('!') {
            Some(rest) => (true, rest, comment.start + 3),
            // `///` is documentation, never a suppression.
            None if body.starts_with('/') => continue,
            None => (false, body, comment.start + 2),
        };
        let trimmed = body.trim_start();
        let Some(after) = trimmed.strip_prefix(MARKER) else {
            continue;
        };
        let after_at = body_at + (body.len() - trimmed.len()) + MARKER.len();
        let line = lines.line_of(comment.start);
        let scope = if file_level {
            Scope::File
        } else if comment.own_line {
            let mut target = line + 1;
            while comment_lines.contains(&target) {
                target += 1;
            }
            fns.iter()
                .rev()
                .find(|f| (f.first_line..=f.fn_line).contains(&target))
                .map_or(Scope::Line(target), |f| Scope::Fn {
                    name: f.name.clone(),
                    range: f.range.clone(),
                })
        } else {
            Scope::Line(line)
        };
        out.push(Directive {
            scope,
            comment: comment.start..comment.end,
            parsed: parse_directive(after, after_at),
        });
    }
    out
}

impl Scope {
    /// Whether a finding (its primary span, in parsed-text offsets) falls in this scope.
    fn covers(&self, start: usize, line: usize) -> bool {
        match self {
            Scope::File => true,
            Scope::Line(l) => *l == line,
            Scope::Fn { range, .. } => range.contains(&start),
        }
    }

    fn describe(&self, rule: Rule) -> String {
        match self {
            Scope::File => format!("no `{}` finding in this file", rule.name()),
            Scope::Line(l) => format!("no `{}` finding on line {l}", rule.name()),
            Scope::Fn { name, .. } => format!("no `{}` finding in `{name}`", rule.name()),
        }
    }
}

/// Applies the suppression comments of `text` to `diagnostics` (findings of the same text) and
/// adds an RA100 finding for each suppression that suppresses nothing.
///
/// `text` is the parsed text and `shift` the number of bytes removed before it (a byte-order
/// mark): diagnostic offsets are `shift` bytes ahead of `text` offsets. `fns` are the `fn`
/// items of the file, from [`fn_items`].
#[must_use]
pub fn apply(
    text: &str,
    shift: usize,
    fns: &[FnItem],
    diagnostics: Vec<Diagnostic>,
    settings: &Settings,
) -> Vec<Diagnostic> {
    if !text.contains(MARKER) {
        return diagnostics;
    }
    let directives = directives(text, fns);
    if directives.is_empty() {
        return diagnostics;
    }
    // used[d][e]: whether entry e of directive d suppressed something.
    let mut used: Vec<Vec<bool>> = directives
        .iter()
        .map(|d| match &d.parsed {
            Parsed::Allow { entries, .. } => vec![false; entries.len()],
            Parsed::Malformed { .. } => Vec::new(),
        })
        .collect();
    let suppress = |diagnostic: &Diagnostic, used: &mut Vec<Vec<bool>>| {
        let start = diagnostic.primary.span.start.saturating_sub(shift);
        let line = diagnostic.primary.span.start_pos.line;
        let mut suppressed = false;
        for (d, directive) in directives.iter().enumerate() {
            let Parsed::Allow { entries, .. } = &directive.parsed else {
                continue;
            };
            if !directive.scope.covers(start, line) {
                continue;
            }
            // The first entry naming the rule does the work; a repeat of it stays unused.
            if let Some(e) = entries.iter().position(|e| e.rule == Some(diagnostic.rule)) {
                used[d][e] = true;
                suppressed = true;
            }
        }
        suppressed
    };
    let mut kept: Vec<Diagnostic> = diagnostics
        .into_iter()
        .filter(|d| !suppress(d, &mut used))
        .collect();

    let level = settings.level(Rule::UnusedSuppression);
    if level == Level::Allow {
        return kept;
    }
    let report = Reporter {
        text,
        shift,
        lines: Lines::new(text),
        level,
    };
    // First everything but unused RA100 entries; those can only be judged once the other RA100
    // findings exist.
    let mut unused = Vec::new();
    for (d, directive) in directives.iter().enumerate() {
        match &directive.parsed {
            Parsed::Malformed { problem, range } => {
                let range = if range.is_empty() {
                    directive.comment.clone()
                } else {
                    range.clone()
                };
                unused.push(report.malformed(problem, range));
            }
            Parsed::Allow { entries, .. } => {
                for (e, entry) in entries.iter().enumerate() {
                    match entry.rule {
                        None => unused.push(report.unknown(entry)),
                        Some(Rule::UnusedSuppression) => {}
                        Some(rule) if !used[d][e] => {
                            unused.push(report.unused(entry, rule, directive, entries, settings));
                        }
                        Some(_) => {}
                    }
                }
            }
        }
    }
    unused.retain(|d| !suppress(d, &mut used));
    for (d, directive) in directives.iter().enumerate() {
        if let Parsed::Allow { entries, .. } = &directive.parsed {
            for (e, entry) in entries.iter().enumerate() {
                if entry.rule == Some(Rule::UnusedSuppression) && !used[d][e] {
                    unused.push(report.unused(
                        entry,
                        Rule::UnusedSuppression,
                        directive,
                        entries,
                        settings,
                    ));
                }
            }
        }
    }
    kept.extend(unused);
    kept.sort_by(|a, b| {
        (a.primary.span.start, a.rule, &a.message).cmp(&(b.primary.span.start, b.rule, &b.message))
    });
    kept
}

/// Builds RA100 findings.
struct Reporter<'t> {
    text: &'t str,
    shift: usize,
    lines: Lines,
    level: Level,
}

impl Reporter<'_> {
    fn span(&self, range: &Range<usize>) -> Span {
        Span {
            start: range.start + self.shift,
            end: range.end + self.shift,
            start_pos: self.lines.position(self.text, range.start),
            end_pos: self.lines.position(self.text, range.end),
        }
    }

    fn finding(&self, message: String, range: &Range<usize>, label: String) -> Diagnostic {
        Diagnostic {
            rule: Rule::UnusedSuppression,
            level: self.level,
            message,
            primary: Label {
                span: self.span(range),
                message: label,
            },
            secondary: Vec::new(),
            help: None,
            notes: Vec::new(),
            fix: None,
            elsewhere: Vec::new(),
        }
    }

    fn unused(
        &self,
        entry: &Entry,
        rule: Rule,
        directive: &Directive,
        entries: &[Entry],
        settings: &Settings,
    ) -> Diagnostic {
        let earlier = entries
            .iter()
            .take_while(|other| other.range != entry.range)
            .find(|other| other.rule == Some(rule));
        let label = if let Some(earlier) = earlier {
            format!("already allowed by `{}` in this comment", earlier.code)
        } else if settings.level(rule) == Level::Allow {
            format!("`{}` is not enabled for this file", rule.name())
        } else {
            directive.scope.describe(rule)
        };
        let mut finding = self.finding(
            format!("unused suppression of `{}`", entry.code),
            &entry.range,
            label,
        );
        let help = &Rule::UnusedSuppression.meta().help;
        finding.help = (!help.is_empty()).then(|| help.clone());
        finding
    }

    fn unknown(&self, entry: &Entry) -> Diagnostic {
        let mut finding = self.finding(
            format!("unknown rule `{}` in suppression", entry.code),
            &entry.range,
            "not a rule id or name".to_owned(),
        );
        finding.help = Some(
            "name a rule by id (`RA002`) or name (`fixed-delay`); `retry-audit rules` lists them"
                .to_owned(),
        );
        finding
    }

    fn malformed(&self, problem: &str, range: Range<usize>) -> Diagnostic {
        let mut finding = self.finding(
            "malformed suppression comment".to_owned(),
            &range,
            problem.to_owned(),
        );
        finding.help = Some(
            "write `// retry-audit: allow(RULE, ...)`, optionally ending with `reason = \"...\"`"
                .to_owned(),
        );
        finding
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comments(text: &str) -> Vec<&str> {
        line_comments(text)
            .iter()
            .map(|c| &text[c.start..c.end])
            .collect()
    }

    #[test]
    fn comments_are_found_outside_literals_only() {
        let text = concat!(
            "let a = \"// not a comment\"; // one\n",
            "let b = r#\"x \" // raw\"#; let c = '/'; // two\n",
            "let d = '\\''; let e: &'static str = \"\\\"//\"; /* // block */ // three\n",
            "let f = br\"//\"; // four\n",
        );
        assert_eq!(comments(text), ["// one", "// two", "// three", "// four"]);
    }

    #[test]
    fn own_line_is_told_from_trailing() {
        let text = "  // own\nx(); // trailing\n";
        let found: Vec<bool> = line_comments(text).iter().map(|c| c.own_line).collect();
        assert_eq!(found, [true, false]);
    }

    fn parse(text: &str) -> Parsed {
        parse_directive(text, 0)
    }

    #[test]
    fn the_grammar_is_read() {
        let Parsed::Allow { entries, reason } =
            parse(" allow(RA002, missing-jitter , reason = \"a \\\"b\\\"\",) // note")
        else {
            panic!("parses");
        };
        let codes: Vec<(&str, Option<Rule>)> =
            entries.iter().map(|e| (e.code.as_str(), e.rule)).collect();
        assert_eq!(
            codes,
            [
                ("RA002", Some(Rule::FixedDelay)),
                ("missing-jitter", Some(Rule::MissingJitter))
            ]
        );
        assert_eq!(reason.as_deref(), Some("a \"b\""));
        assert_eq!(entries[1].range, 14..28);
    }

    #[test]
    fn malformed_comments_say_what_is_wrong() {
        let cases = [
            (" deny(RA002)", "only `allow(...)`"),
            (" allow RA002", "expected `(`"),
            (" allow()", "names no rule"),
            (" allow(RA002", "expected `)`"),
            (" allow(RA002 RA003)", "expected `,` or `)`"),
            (" allow(reason = \"x\", RA002)", "must come last"),
            (" allow(RA002, reason = \"  \")", "reason is empty"),
            (" allow(RA002, reason = x)", "string after `reason =`"),
            (" allow(RA002) because", "unexpected text"),
            ("", "expected `allow(RULE, ...)`"),
        ];
        for (text, want) in cases {
            match parse(text) {
                Parsed::Malformed { problem, .. } => {
                    assert!(problem.contains(want), "{text:?}: {problem}");
                }
                other @ Parsed::Allow { .. } => panic!("{text:?} parsed as {other:?}"),
            }
        }
    }
}

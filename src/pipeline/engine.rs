//! Entry point of the analysis: one file's text in, diagnostics out. Parses once, builds the
//! retry-site model, runs every enabled rule over it.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::analysis::limits;
use crate::analysis::{self, SiteCall};
use crate::checks;
use crate::checks::diagnostic::Diagnostic;
use crate::checks::registry::{Level, Rule};
use crate::checks::Settings;
use crate::report::suppress;
use crate::report::FileError;
use crate::source::Position;

/// Stack size of the threads that parse and walk files (see [`limits::STACK_SIZE`]).
pub const PARSE_STACK: usize = limits::STACK_SIZE;

/// Checks one file's bytes. Never panics; an unparseable file is an `Err`.
pub fn check_bytes(bytes: &[u8], settings: &Settings) -> Result<Vec<Diagnostic>, FileError> {
    check_bytes_timed(bytes, settings, &mut PhaseTimes::default()).map(|(found, _)| found)
}

/// Checks one file's text. Never panics, whatever the text: the analysis runs within the limits
/// of [`budget`] (on a thread with a big stack, started for it unless this one is one), and a
/// panic of the analysis (a bug) is [`FileError::Internal`].
pub fn check_source(src: &str, settings: &Settings) -> Result<Vec<Diagnostic>, FileError> {
    check_source_with_facts(src, settings).map(|(diagnostics, _)| diagnostics)
}

/// What the crate-wide nested-retry check (RA010 across files) needs from one file.
#[derive(Clone, Debug, Default)]
pub struct CrateFacts {
    /// The file's functions that retry by themselves: name, the type or trait whose method
    /// each is (`None`: a free function), and where.
    pub retrying: Vec<(String, Option<String>, Position)>,
    /// The calls made per attempt by the file's retry sites to functions the file does not
    /// define (a name the file defines is taken to mean its own function, which the per-file
    /// check covers).
    pub calls: Vec<SiteCall>,
    /// The functions and constants the file defines, as [`analysis::name_key`]s: the crate's index of
    /// names (a few bytes per name for every file of a large scan).
    pub defines: Vec<u64>,
    /// Functions and constants the analysis of the file looked for and found nowhere in view
    /// (sorted): another file of the crate that defines one is worth importing
    /// ([`check_with_imports`]).
    pub unresolved: Vec<String>,
    /// For a file with suppression comments whose retry sites call other files' functions:
    /// its findings before suppression, so that the comments can also suppress the RA010
    /// findings the crate-wide pass adds ([`suppress::Pending::apply`]).
    pub suppressions: Option<std::sync::Arc<suppress::Pending>>,
    /// The file's reported retry loops whose attempt limit or wait is a parameter or a field:
    /// what the crate passes there by default decides what they do ([`crate::analysis::crate_values`]).
    pub by_values: Vec<ValueQuery>,
}

/// A reported retry loop whose attempt limit or wait the crate passes in.
#[derive(Clone, Debug)]
pub struct ValueQuery {
    pub source: analysis::ValueSource,
    /// The loop's head: its findings are the ones labelled there.
    pub head: crate::source::Span,
    pub decides: Decides,
}

/// What the crate's values decide for a loop.
#[derive(Clone, Debug)]
pub enum Decides {
    /// The attempt limit, read as this says.
    Limit(analysis::ZeroMeans),
    /// The one wait: when every value is zero the loop does not wait, and reports these
    /// findings instead of its own.
    Wait { if_zero: Vec<Diagnostic> },
}

impl ValueQuery {
    /// Whether `d` is a finding of this loop.
    #[must_use]
    pub fn owns(&self, d: &Diagnostic) -> bool {
        d.primary.span == self.head || d.secondary.iter().any(|l| l.span == self.head)
    }

    /// The loop's findings in `diagnostics` once the crate is known to pass `largest` at
    /// most: a limit of zero retries withdraws them all, one immediate second try its RA011;
    /// a wait of zero is no wait. Whether anything changed.
    pub fn apply(&self, diagnostics: &mut Vec<Diagnostic>, largest: u64) -> bool {
        let before = diagnostics.len();
        match &self.decides {
            Decides::Limit(zero) => {
                diagnostics.retain(|d| !(self.owns(d) && withdrawn(*zero, largest, d.rule)));
                diagnostics.len() != before
            }
            Decides::Wait { if_zero } if largest == 0 => {
                diagnostics.retain(|d| !self.owns(d));
                let withdrawn = diagnostics.len() != before;
                diagnostics.extend(if_zero.iter().cloned());
                diagnostics.sort_by_key(|d| (d.primary.span.start, d.rule));
                withdrawn || !if_zero.is_empty()
            }
            Decides::Wait { .. } => false,
        }
    }

    /// [`ValueQuery::apply`] to a file's findings `shown`, through its suppression comments
    /// when it has any (`pending`, updated): the new findings are judged by them as the old
    /// were. Whether anything changed.
    pub fn apply_shown(
        &self,
        shown: &mut Vec<Diagnostic>,
        pending: Option<&mut std::sync::Arc<suppress::Pending>>,
        largest: u64,
        settings: &Settings,
    ) -> bool {
        let Some(pending) = pending else {
            return self.apply(shown, largest);
        };
        let mut found = pending.found().to_vec();
        if !self.apply(&mut found, largest) {
            return false;
        }
        let redone = pending.with_found(found);
        *shown = redone.apply(Vec::new(), settings);
        *pending = std::sync::Arc::new(redone);
        true
    }
}

/// Whether the crate's values withdraw a finding of `rule` from a loop whose limit it passes,
/// `largest` at most, read as `zero` says: a loop that never goes round reports nothing; one
/// immediate second try at most is no storm (no RA011), as for `for attempt in 0..2`.
#[must_use]
pub fn withdrawn(zero: analysis::ZeroMeans, largest: u64, rule: Rule) -> bool {
    let retries = match zero {
        analysis::ZeroMeans::NoRetry => largest,
        analysis::ZeroMeans::OneRetry => largest.saturating_add(1),
    };
    retries == 0 || (retries == 1 && rule == Rule::NoDelay)
}

/// Time spent on one file, by phase (for `--stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseTimes {
    /// Decoding, parsing (`syn`) and freeing the syntax tree, the nesting pre-check included.
    pub parse: Duration,
    /// Building the retry-site model, running the rules, applying suppressions.
    pub analyse: Duration,
}

/// [`check_source_with_facts`] on bytes, adding the time of each phase to `times`.
pub fn check_bytes_timed(
    bytes: &[u8],
    settings: &Settings,
    times: &mut PhaseTimes,
) -> Result<(Vec<Diagnostic>, CrateFacts), FileError> {
    check_with_imports(bytes, &[], settings, times)
}

/// [`check_bytes_timed`] with the definitions of other files of the crate in view: `imports`
/// are their display paths and texts. Functions and constants the file does not define are
/// looked up there (one level: what an imported body calls is not imported in turn). An
/// import that cannot be decoded, nested too deeply or parsed is left out. Only the file is
/// searched for retry sites, and no finding or label points into an import.
pub fn check_with_imports(
    bytes: &[u8],
    imports: &[(String, Vec<u8>)],
    settings: &Settings,
    times: &mut PhaseTimes,
) -> Result<(Vec<Diagnostic>, CrateFacts), FileError> {
    let started = Instant::now();
    match std::str::from_utf8(bytes) {
        Ok(src) => check_timed(src, imports, settings, started, times),
        Err(e) => {
            times.parse += started.elapsed();
            Err(FileError::NotUtf8 {
                offset: e.valid_up_to(),
            })
        }
    }
}

/// RA010 across files: each file's per-attempt calls to functions that retry by themselves in
/// *another* file (matched by name; a name the calling file defines itself is taken to mean its
/// own function, which the per-file check already covers). `files[i]` is (display path, facts,
/// the file's settings: a finding has the calling file's level, and none where it allows
/// RA010); the result pairs a file index with a finding. Linear in the number of calls and
/// functions.
#[must_use]
pub fn nested_across_files(files: &[(String, &CrateFacts, &Settings)]) -> Vec<(usize, Diagnostic)> {
    // Name → (file, owner type, where) of each function of that name that retries.
    type Retrying<'f> = Vec<(usize, Option<&'f str>, Position)>;
    let mut retrying: HashMap<&str, Retrying<'_>> = HashMap::new();
    for (i, (_, facts, _)) in files.iter().enumerate() {
        for (name, owner, at) in &facts.retrying {
            retrying
                .entry(name.as_str())
                .or_default()
                .push((i, owner.as_deref(), *at));
        }
    }
    let mut out = Vec::new();
    for (i, (_, facts, settings)) in files.iter().enumerate() {
        if settings.level(Rule::NestedRetry) == Level::Allow {
            continue;
        }
        for call in &facts.calls {
            let Some((j, _, at)) = retrying
                .get(call.callee.as_str())
                .and_then(|fns| fns.iter().find(|(_, owner, _)| call.via.reaches(*owner)))
            else {
                continue;
            };
            if *j == i {
                continue;
            }
            let elsewhere = (files[*j].0.as_str(), at.line, at.column);
            out.push((i, checks::nested_retry_across(call, elsewhere, settings)));
        }
    }
    out
}

/// [`check_source`], plus what the crate-wide pass needs from the file.
pub fn check_source_with_facts(
    src: &str,
    settings: &Settings,
) -> Result<(Vec<Diagnostic>, CrateFacts), FileError> {
    check_timed(
        src,
        &[],
        settings,
        Instant::now(),
        &mut PhaseTimes::default(),
    )
}

/// [`check_source_with_facts`], timed from `started` (the parse phase includes decoding): the
/// analysis within its [`budget`], a panic of it an internal error.
fn check_timed(
    src: &str,
    imports: &[(String, Vec<u8>)],
    settings: &Settings,
    started: Instant,
    times: &mut PhaseTimes,
) -> Result<(Vec<Diagnostic>, CrateFacts), FileError> {
    let bytes = src.len() + imports.iter().map(|(_, t)| t.len()).sum::<usize>();
    let analysed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        limits::run(bytes, || {
            check_within_budget(src, imports, settings, started, times)
        })
    }));
    match analysed {
        Ok(Ok(result)) => result,
        Ok(Err(exhausted)) => Err(FileError::TooComplex(exhausted)),
        Err(payload) => Err(internal_error(&*payload)),
    }
}

fn check_within_budget(
    src: &str,
    imports: &[(String, Vec<u8>)],
    settings: &Settings,
    started: Instant,
    times: &mut PhaseTimes,
) -> Result<(Vec<Diagnostic>, CrateFacts), FileError> {
    // A byte-order mark is not part of the syntax; offsets are shifted back afterwards.
    let (text, shift) = match src.strip_prefix('\u{feff}') {
        Some(rest) => (rest, '\u{feff}'.len_utf8()),
        None => (src, 0),
    };
    // Spans are only meaningful for the file being parsed: free proc-macro2's per-thread source
    // map when done, whether the parse succeeded or not (it would grow with every file).
    let _spans = SpanMapGuard;
    // The parser and the tree it builds recurse once per level: a file nested too deeply for
    // them is not parsed. (Text the lexer does not read with confidence, an unterminated
    // literal or comment, does not parse either; only its brackets are counted.)
    let tokens = crate::analysis::prefilter::lex(text.as_bytes());
    let depth = match &tokens {
        Some(tokens) => limits::syntax_depth_lexed(text, tokens),
        None => limits::syntax_depth(text),
    };
    if depth > limits::MAX_SYNTAX_DEPTH {
        times.parse += started.elapsed();
        return Err(FileError::TooDeep);
    }
    // Without suppression comments (whose scope is read from every function's span, and
    // which are rare), bodies that cannot matter are not parsed.
    let file = if settings.full_parse || text.contains(suppress::MARKER) {
        syn::parse_file(text).map(|f| (f, Vec::new()))
    } else {
        crate::analysis::prefilter::parse_lexed(text, tokens.as_deref(), &settings.extensions)
    };
    drop(tokens);
    let parsed = Instant::now();
    times.parse += parsed - started;
    let file = match file {
        Ok(f) => f,
        Err(e) => return Err(parse_error(&e, text)),
    };
    let (file, blanked_names) = file;
    // Imports are parsed after the file, on this thread: their spans are told apart from the
    // file's by the index's anchor.
    let imported: Vec<(syn::File, &str)> = imports
        .iter()
        .filter_map(|(path, bytes)| {
            let text = std::str::from_utf8(bytes).ok()?;
            if limits::syntax_depth(text) > limits::MAX_SYNTAX_DEPTH {
                return None;
            }
            Some((syn::parse_file(text).ok()?, path.as_str()))
        })
        .collect();
    let index = analysis::LineIndex::new(text, shift);
    let index = match (imported.is_empty(), anchor(&file)) {
        (false, Some(anchor)) => index.with_anchor(anchor),
        _ => index,
    };
    let views: Vec<(&syn::File, &str)> = imported.iter().map(|(f, p)| (f, *p)).collect();
    let file_model = analysis::extract_in(
        &file,
        &index,
        &settings.extensions,
        &views,
        settings.test_code,
    );
    let mut diagnostics = checks::run(&file_model, settings);
    if !imported.is_empty() {
        // A fact found in an import may carry the import's place: it is not shown.
        diagnostics.retain(|d| !d.primary.span.is_elsewhere());
        for d in &mut diagnostics {
            d.secondary.retain(|l| !l.span.is_elsewhere());
        }
    }
    // Only what the crate-wide pass needs is kept (most files have nothing), not the file's
    // every function name: memory stays bounded by the files in flight.
    // A call that reaches a function of this file means that one (the per-file check covers
    // it); `Vec::new()` in a file that defines `StoreClient::new` does not.
    let defines = |call: &analysis::Call| {
        let fns = &file_model.defined_fns;
        let from = fns.partition_point(|(n, _)| n < &call.name);
        fns[from..]
            .iter()
            .take_while(|(n, _)| *n == call.name)
            .any(|(_, owner)| call.via.reaches(owner.as_deref()))
    };
    let mut facts = CrateFacts {
        // What the pre-filter blanked whole is defined here all the same.
        defines: {
            let mut keys = file_model.defined_keys.clone();
            keys.extend(blanked_names.iter().map(|n| analysis::name_key(n)));
            keys.sort_unstable();
            keys.dedup();
            keys
        },
        unresolved: if file_model.sites.is_empty() {
            Vec::new()
        } else {
            file_model.unresolved.clone()
        },
        retrying: file_model
            .retrying_fns
            .iter()
            .map(|(name, owner, at)| (name.clone(), owner.clone(), at.start_pos))
            .collect(),
        calls: file_model
            .sites
            .iter()
            .filter(|s| s.kind != analysis::SiteKind::Policy)
            .flat_map(|s| {
                s.calls
                    .iter()
                    .filter(|c| c.name != s.function && !defines(c))
                    .map(|c| SiteCall {
                        callee: c.name.clone(),
                        via: c.via.clone(),
                        call: c.span,
                        head: s.head,
                        function: s.function.clone(),
                    })
            })
            .collect(),
        suppressions: None,
        by_values: file_model
            .sites
            .iter()
            .filter_map(|s| {
                Some(ValueQuery {
                    source: s.limit_from.as_ref()?.source.clone(),
                    head: s.head,
                    decides: Decides::Limit(s.limit_from.as_ref()?.zero),
                })
            })
            .chain(
                // What the site would report without its wait.
                file_model.sites.iter().filter_map(|s| {
                    Some(ValueQuery {
                        source: s.delay_from.clone()?,
                        head: s.head,
                        decides: Decides::Wait {
                            if_zero: without_waits(s, &file_model, settings),
                        },
                    })
                }),
            )
            .collect(),
    };
    let fns = if text.contains(suppress::MARKER) {
        suppress::fn_items(&file)
    } else {
        Vec::new()
    };
    // Freeing the tree is part of the cost of parsing it.
    let freeing = Instant::now();
    drop(file);
    drop(imported);
    let freed = freeing.elapsed();
    times.parse += freed;
    diagnostics.sort_by(|a, b| {
        (a.primary.span.start, a.rule, &a.message).cmp(&(b.primary.span.start, b.rule, &b.message))
    });
    diagnostics.dedup_by(|a, b| a.rule == b.rule && a.primary.span == b.primary.span);
    // RA010 across files is found after every file is checked: the comments must be able to
    // suppress it too (and an allow of it is not unused), so they are kept for that pass.
    // So is the judging of loops by the values their crate passes ([`ValueQuery`]), which
    // may change their findings.
    facts
        .by_values
        .retain(|q| diagnostics.iter().any(|d| q.owns(d)));
    if (!facts.calls.is_empty() || !facts.by_values.is_empty()) && text.contains(suppress::MARKER) {
        facts.suppressions = Some(std::sync::Arc::new(suppress::Pending::new(
            text,
            shift,
            &fns,
            &diagnostics,
        )));
    }
    // Inline `// retry-audit: allow(...)` comments, and RA100 for those that suppress nothing.
    let diagnostics = suppress::apply(text, shift, &fns, diagnostics, settings);
    times.analyse += parsed.elapsed().saturating_sub(freed);
    Ok((diagnostics, facts))
}

/// What `site` reports when it does not wait (its one wait given zero).
fn without_waits(
    site: &analysis::RetrySite,
    file: &analysis::FileModel,
    settings: &Settings,
) -> Vec<Diagnostic> {
    let mut site = site.clone();
    site.delays.clear();
    site.unpaced = None;
    site.delay_from = None;
    let alone = analysis::FileModel {
        sites: vec![site],
        retrying_fns: file.retrying_fns.clone(),
        defined_fns: Vec::new(),
        defined_keys: Vec::new(),
        unresolved: Vec::new(),
    };
    let mut found = checks::run(&alone, settings);
    found.retain(|d| !d.primary.span.is_elsewhere());
    for d in &mut found {
        d.secondary.retain(|l| !l.span.is_elsewhere());
    }
    found
}

/// A span of the file's own text (the first item's keyword), to tell its spans from those of
/// files parsed after it.
fn anchor(file: &syn::File) -> Option<proc_macro2::Span> {
    use syn::spanned::Spanned;
    let item = file.items.first()?;
    Some(match item {
        syn::Item::Fn(f) => f.sig.fn_token.span,
        syn::Item::Use(u) => u.use_token.span,
        syn::Item::Impl(i) => i.impl_token.span,
        syn::Item::Mod(m) => m.mod_token.span,
        syn::Item::Struct(s) => s.struct_token.span,
        syn::Item::Enum(e) => e.enum_token.span,
        syn::Item::Const(c) => c.const_token.span,
        syn::Item::Static(s) => s.static_token.span,
        syn::Item::Trait(t) => t.trait_token.span,
        syn::Item::Type(t) => t.type_token.span,
        syn::Item::ExternCrate(e) => e.extern_token.span,
        other => other.span(),
    })
}

/// Frees proc-macro2's span map of this thread when dropped.
struct SpanMapGuard;

impl Drop for SpanMapGuard {
    fn drop(&mut self) {
        proc_macro2::extra::invalidate_current_thread_spans();
    }
}

/// A parse error with its position. The tokenizer's own message for unbalanced delimiters or a
/// stray character ("cannot parse string into token stream") carries no position; find the first
/// unbalanced delimiter ourselves so the user is pointed somewhere useful.
fn parse_error(e: &syn::Error, text: &str) -> FileError {
    let start = e.span().start();
    let message = e.to_string();
    if message.contains("cannot parse string into token stream") || start.line == 0 {
        let (position, what) = first_lex_problem(text);
        return FileError::Parse {
            position,
            message: format!("cannot tokenize the file: {what}"),
        };
    }
    FileError::Parse {
        position: Position {
            line: start.line,
            column: start.column + 1,
        },
        message,
    }
}

/// Where a file stops being tokenizable, as best a quick scan can tell: the first closing
/// delimiter that does not match, or the last unclosed opening one. Strings, chars and comments
/// are skipped roughly; the answer is a hint for a human, not a lexer's verdict.
fn first_lex_problem(text: &str) -> (Position, String) {
    let mut stack: Vec<(char, usize, usize)> = Vec::new();
    let (mut line, mut col) = (1usize, 1usize);
    let mut chars = text.chars().peekable();
    let mut in_str = false;
    let mut in_line_comment = false;
    let mut block_depth = 0usize;
    let mut prev = '\0';
    while let Some(c) = chars.next() {
        let (l, cl) = (line, col);
        if c == '\n' {
            line += 1;
            col = 1;
            in_line_comment = false;
        } else {
            col += 1;
        }
        if in_line_comment {
            prev = c;
            continue;
        }
        if block_depth > 0 {
            if prev == '*' && c == '/' {
                block_depth -= 1;
                prev = '\0';
                continue;
            }
            if prev == '/' && c == '*' {
                block_depth += 1;
            }
            prev = c;
            continue;
        }
        if in_str {
            if c == '"' && prev != '\\' {
                in_str = false;
            }
            prev = if prev == '\\' && c == '\\' { '\0' } else { c };
            continue;
        }
        match c {
            '"' => in_str = true,
            '/' if chars.peek() == Some(&'/') => in_line_comment = true,
            '/' if chars.peek() == Some(&'*') => {
                block_depth = 1;
                chars.next();
                col += 1;
                prev = '\0';
                continue;
            }
            '(' | '[' | '{' => stack.push((c, l, cl)),
            ')' | ']' | '}' => {
                let want = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                match stack.pop() {
                    Some((open, _, _)) if open == want => {}
                    Some((open, ol, oc)) => {
                        return (
                            Position {
                                line: l,
                                column: cl,
                            },
                            format!("`{c}` does not close the `{open}` opened at {ol}:{oc}"),
                        )
                    }
                    None => {
                        return (
                            Position {
                                line: l,
                                column: cl,
                            },
                            format!("unexpected closing `{c}`"),
                        )
                    }
                }
            }
            _ => {}
        }
        prev = c;
    }
    match stack.pop() {
        Some((open, l, c)) => (
            Position { line: l, column: c },
            format!("`{open}` is never closed"),
        ),
        None => (
            Position { line: 1, column: 1 },
            "unbalanced delimiters or an unterminated literal".to_owned(),
        ),
    }
}

/// A panic of the analysis thread as an error that says so, with the panic's message.
fn internal_error(payload: &(dyn std::any::Any + Send)) -> FileError {
    let message = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "the analysis panicked".to_owned()
    };
    FileError::Internal(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_of_the_analysis_is_an_internal_error_not_a_file_problem() {
        let from_str = internal_error(&"index out of bounds");
        assert_eq!(
            from_str,
            FileError::Internal("index out of bounds".to_owned())
        );
        assert_eq!(
            from_str.to_string(),
            "internal error in retry-audit (please report): index out of bounds"
        );
        let from_string = internal_error(&String::from("span 3..4 cuts a character"));
        assert_eq!(
            from_string,
            FileError::Internal("span 3..4 cuts a character".to_owned())
        );
        assert_eq!(
            internal_error(&42_u8),
            FileError::Internal("the analysis panicked".to_owned())
        );
    }

    #[test]
    fn deep_input_is_checked_on_a_big_stack_or_refused_before_parsing() {
        // Nested closures under the syntax-depth limit: parsed and walked, from a test thread
        // whose own stack is small (the analysis moves to a big one).
        let src = format!(
            "fn f() {{ let _ = {}1{}; }}\n",
            "|| (".repeat(1_900),
            ")".repeat(1_900)
        );
        assert_eq!(check_source(&src, &Settings::default()), Ok(Vec::new()));
        let deeper = format!("fn f() {{ {}{} }}\n", "{".repeat(6_000), "}".repeat(6_000));
        assert_eq!(
            check_source(&deeper, &Settings::default()),
            Err(FileError::TooDeep)
        );
    }
}

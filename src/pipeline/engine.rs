//! One file's analysis, the same for every front end: parse it once, find its retry sites and
//! their facts (reading the rest of its crate through the [`CrateIndex`], never parsing another
//! file whole), run the checks ([`analyse`]); then, once every file of the crate is analysed,
//! add the nested retries found across files and apply the suppression comments, once
//! ([`finish`]).

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use super::index::{identifiers, CrateIndex};
use crate::analysis::limits;
use crate::analysis::{self, SiteCall};
use crate::checks;
use crate::checks::diagnostic::Diagnostic;
use crate::checks::registry::{Level, Rule};
use crate::checks::Settings;
use crate::report::suppress::{self, FnItem};
use crate::report::FileError;
use crate::source::{Position, Span};

/// Stack size of the threads that parse and walk files (see [`limits::STACK_SIZE`]).
pub const PARSE_STACK: usize = limits::STACK_SIZE;

/// Checks one file's bytes alone (no other file of its crate in view). Never panics; an
/// unparseable file is an `Err`.
pub fn check_bytes(bytes: &[u8], settings: &Settings) -> Result<Vec<Diagnostic>, FileError> {
    match std::str::from_utf8(bytes) {
        Ok(src) => check_source(src, settings),
        Err(e) => Err(FileError::NotUtf8 {
            offset: e.valid_up_to(),
        }),
    }
}

/// Checks one file's text alone. Never panics, whatever the text: the analysis runs within the
/// limits of [`limits`] (on a thread with a big stack, started for it unless this one is one),
/// and a panic of the analysis (a bug) is [`FileError::Internal`].
pub fn check_source(src: &str, settings: &Settings) -> Result<Vec<Diagnostic>, FileError> {
    let analysed = analyse(src, settings, None, &mut PhaseTimes::default())?;
    Ok(finish(src, analysed, Vec::new(), settings))
}

/// Checks the text `bytes` of the file `path` by itself (standard input): no other file of its
/// crate is read, but whether it is test code as a whole is decided as for a scan (its place,
/// the module declarations of its parent module's file on disk).
pub fn check_alone(
    path: &std::path::Path,
    bytes: Vec<u8>,
    settings: &Settings,
) -> Result<Vec<Diagnostic>, FileError> {
    let file = super::index::IndexedFile::from_bytes(path.to_path_buf(), bytes);
    let krate = CrateIndex::new(None, vec![file], &super::index::Disk);
    let text = krate.files[0].text.clone()?;
    let analysed = analyse(
        &text,
        settings,
        Some((&krate, 0)),
        &mut PhaseTimes::default(),
    )?;
    Ok(finish(&text, analysed, Vec::new(), settings))
}

/// What one file's analysis leaves for the crate-wide step ([`nested_across_files`]) and for
/// [`finish`].
#[derive(Clone, Debug, Default)]
pub struct Analysed {
    /// The findings, before suppression comments, in source order.
    pub diagnostics: Vec<Diagnostic>,
    /// The file's functions that retry by themselves: name, the type or trait whose method
    /// each is (`None`: a free function), and where.
    pub retrying: Vec<(String, Option<String>, Position)>,
    /// The calls made per attempt by the file's retry sites to functions the file does not
    /// define (a name the file defines is taken to mean its own function, which the per-file
    /// check covers).
    pub calls: Vec<SiteCall>,
    /// The file's functions, the scopes of its suppression comments (only when it has any).
    pub fns: Vec<FnItem>,
    /// The length of a byte-order mark before the text (offsets are counted after it).
    pub shift: usize,
}

/// A reported retry loop whose attempt limit or wait the crate passes in.
#[derive(Clone, Debug)]
pub struct ValueQuery {
    pub source: analysis::ValueSource,
    /// The loop's head: its findings are the ones labelled there.
    pub head: Span,
    pub decides: Decides,
}

/// What the crate's values decide for a loop.
#[derive(Clone, Debug)]
pub enum Decides {
    /// The attempt limit, read as this says, and the longest wait for each limit (see
    /// [`analysis::RetrySite::longest_by_limit`]).
    Limit(analysis::ZeroMeans, Vec<f64>),
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
            Decides::Limit(zero, longest) => {
                diagnostics
                    .retain(|d| !(self.owns(d) && withdrawn(*zero, largest, d.rule, longest)));
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
}

/// Whether the crate's values withdraw a finding of `rule` from a loop whose limit it passes,
/// `largest` at most, read as `zero` says: a loop that never goes round reports nothing; one
/// immediate second try at most is no storm (no RA011), as for `for attempt in 0..2`; a
/// growing wait that the limit keeps within what RA007 allows (`longest`, by limit) is no
/// uncapped backoff.
#[must_use]
pub fn withdrawn(zero: analysis::ZeroMeans, largest: u64, rule: Rule, longest: &[f64]) -> bool {
    let retries = match zero {
        analysis::ZeroMeans::NoRetry => largest,
        analysis::ZeroMeans::OneRetry => largest.saturating_add(1),
    };
    // The count runs up to the number of retries: one more than the limit when a limit of
    // zero still allows one (`if tries > limit`).
    let within = || {
        usize::try_from(retries)
            .ok()
            .and_then(|n| longest.get(n))
            .is_some_and(|secs| !checks::uncapped_wait_past_limit(*secs))
    };
    retries == 0
        || (retries == 1 && rule == Rule::NoDelay)
        || (rule == Rule::UncappedBackoff && within())
}

/// Time spent on one file, by phase (for `--stats`), and what was parsed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PhaseTimes {
    /// Decoding, parsing (`syn`) and freeing the syntax tree, the nesting pre-check included.
    pub parse: Duration,
    /// Building the retry-site model, running the rules, applying suppressions.
    pub analyse: Duration,
    /// Files parsed (0 or 1: a file is parsed once).
    pub parsed: usize,
    /// Views of other files' definitions parsed for this file ([`CrateIndex::views`]).
    pub views: usize,
    /// Windows a very large file was parsed in ([`WINDOW_BYTES`]; 0: parsed whole).
    pub windows: usize,
    /// Loops whose findings the crate's values changed.
    pub by_values: usize,
}

/// RA010 across files: each file's per-attempt calls to functions that retry by themselves in
/// *another* file (matched by name; a name the calling file defines itself is taken to mean its
/// own function, which the per-file check already covers). `files[i]` is (display path, the
/// file's analysis, the file's settings: a finding has the calling file's level, and none where
/// it allows RA010); the result pairs a file index with a finding. Linear in the number of calls
/// and functions.
#[must_use]
pub fn nested_across_files(files: &[(String, &Analysed, &Settings)]) -> Vec<(usize, Diagnostic)> {
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

/// The file's findings: its analysis's, with `more` (RA010 across files), the suppression
/// comments applied once (RA100 for those that suppress nothing).
#[must_use]
pub fn finish(
    text: &str,
    analysed: Analysed,
    more: Vec<Diagnostic>,
    settings: &Settings,
) -> Vec<Diagnostic> {
    let Analysed {
        mut diagnostics,
        fns,
        shift,
        ..
    } = analysed;
    if !more.is_empty() {
        diagnostics.extend(more);
        diagnostics.sort_by(|a, b| {
            (a.primary.span.start, a.rule, &a.message).cmp(&(
                b.primary.span.start,
                b.rule,
                &b.message,
            ))
        });
        diagnostics.dedup_by(|a, b| a.rule == b.rule && a.primary.span == b.primary.span);
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    suppress::apply(text, shift, &fns, diagnostics, settings)
}

/// Analyses one file: `krate` is its crate and its index there (`None`: the file alone). The
/// file is parsed once; a name its retry sites look for and do not define is looked up in the
/// one other file of the crate that defines it (a view of just the definitions reachable from
/// this file, [`CrateIndex::views`]); a loop whose limit or wait is a parameter or a field is
/// judged by what the crate passes there ([`CrateIndex::largest_by_default`]). Never panics.
pub fn analyse(
    src: &str,
    settings: &Settings,
    krate: Option<(&CrateIndex, usize)>,
    times: &mut PhaseTimes,
) -> Result<Analysed, FileError> {
    let started = Instant::now();
    let analysed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        limits::run(src.len(), || {
            analyse_within_limits(src, settings, krate, started, times)
        })
    }));
    match analysed {
        Ok(Ok(result)) => result,
        Ok(Err(exhausted)) => Err(FileError::TooComplex(exhausted)),
        Err(payload) => Err(internal_error(&*payload)),
    }
}

fn analyse_within_limits(
    src: &str,
    settings: &Settings,
    krate: Option<(&CrateIndex, usize)>,
    started: Instant,
    times: &mut PhaseTimes,
) -> Result<Analysed, FileError> {
    // A byte-order mark is not part of the syntax; offsets are shifted back afterwards.
    let (text, shift) = match src.strip_prefix('\u{feff}') {
        Some(rest) => (rest, '\u{feff}'.len_utf8()),
        None => (src, 0),
    };
    // Spans are only meaningful for the file being parsed: free proc-macro2's per-thread source
    // map when done, whether the parse succeeded or not (it would grow with every file).
    let _spans = SpanMapGuard;
    // The team's words (`[extend]`'s vocabulary lists) are known to the analysis's predicates,
    // the pre-filter's included, while this file is read.
    let _vocabulary = crate::analysis::known::TeamVocabulary::enter(&settings.extensions);
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
    let test_code = settings.test_code || krate.is_some_and(|(k, me)| k.files[me].test_code);
    let whole = |times: &mut PhaseTimes| {
        // Without suppression comments (whose scope is read from every function's span, and
        // which are rare), bodies that cannot matter are not parsed.
        times.parsed += 1;
        if settings.full_parse || text.contains(suppress::MARKER) {
            syn::parse_file(text)
        } else {
            crate::analysis::prefilter::parse_lexed(text, tokens.as_deref(), &settings.extensions)
                .map(|(file, _)| file)
        }
    };
    // A file whose bodies are too large to hold as one tree is parsed a window of bodies at a
    // time (each window has every declaration of the file, and the bodies its own bodies name).
    let windows = match &tokens {
        Some(tokens) if !settings.full_parse && !text.contains(suppress::MARKER) => {
            let budget = settings.parse_window.unwrap_or(WINDOW_BYTES);
            crate::analysis::prefilter::Windows::of(text, tokens, &settings.extensions, budget)
        }
        _ => None,
    };
    let Some(windows) = windows else {
        let file = whole(times);
        drop(tokens);
        let parsed = Instant::now();
        times.parse += parsed - started;
        let file = file.map_err(|e| parse_error(&e, text))?;
        let analysed = analyse_tree(
            &file, text, shift, settings, krate, test_code, parsed, times,
        );
        free(file, times);
        return Ok(analysed);
    };
    // One such file at a time on all threads: their trees are the largest a scan holds.
    let _one_at_a_time = WINDOWED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut all = Analysed {
        shift,
        ..Analysed::default()
    };
    let mut at = started;
    for k in 0..windows.count() {
        let window = windows.text(k).map(|w| syn::parse_file(&w));
        let parsed = Instant::now();
        times.parse += parsed - at;
        let Some(Ok(file)) = window else {
            // What the windows cannot parse, the whole file reports: the parser's own error on
            // the real text (or, if it parses after all, its analysis).
            drop(windows);
            let file = whole(times).map_err(|e| parse_error(&e, text));
            let reparsed = Instant::now();
            times.parse += reparsed - parsed;
            let file = file?;
            let analysed = analyse_tree(
                &file, text, shift, settings, krate, test_code, reparsed, times,
            );
            free(file, times);
            return Ok(analysed);
        };
        times.windows += 1;
        let part = analyse_tree(
            &file, text, shift, settings, krate, test_code, parsed, times,
        );
        free(file, times);
        // The parser keeps a copy of each text it parsed for its spans: the window's is freed
        // with its tree (the findings hold offsets, not spans).
        proc_macro2::extra::invalidate_current_thread_spans();
        all.diagnostics.extend(part.diagnostics);
        all.retrying.extend(part.retrying);
        all.calls.extend(part.calls);
        at = Instant::now();
    }
    times.parsed += 1;
    // A body another window's code names is in that window too: its facts are found twice,
    // the same each time.
    sort_findings(&mut all.diagnostics);
    all.retrying
        .sort_by_key(|(name, owner, at)| (at.line, at.column, name.clone(), owner.clone()));
    all.retrying.dedup();
    all.calls.sort_by_key(|c| (c.head.start, c.call.start));
    all.calls
        .dedup_by(|a, b| a.head == b.head && a.call == b.call && a.callee == b.callee);
    Ok(all)
}

/// Bytes of function bodies parsed at once: a file whose bodies (those the pre-filter keeps)
/// are larger is parsed in windows of about this size, so that its syntax tree, about a
/// hundred times its text, stays in the hundreds of megabytes.
pub const WINDOW_BYTES: usize = 2 << 20;

/// Held while a file is analysed in windows.
static WINDOWED: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Frees a syntax tree: part of the cost of parsing it.
fn free(file: syn::File, times: &mut PhaseTimes) {
    let freeing = Instant::now();
    drop(file);
    times.parse += freeing.elapsed();
}

/// Findings in source order, one per rule and place.
fn sort_findings(diagnostics: &mut Vec<Diagnostic>) {
    diagnostics.sort_by(|a, b| {
        (a.primary.span.start, a.rule, &a.message).cmp(&(b.primary.span.start, b.rule, &b.message))
    });
    diagnostics.dedup_by(|a, b| a.rule == b.rule && a.primary.span == b.primary.span);
}

/// Analyses one parsed tree of the file (the whole file, or one window of it): sites, facts,
/// checks, the crate's views and values. `parsed`: when parsing ended (the rest is analysis,
/// but for freeing the tree, which is parsing's cost).
#[allow(clippy::too_many_arguments)]
fn analyse_tree(
    file: &syn::File,
    text: &str,
    shift: usize,
    settings: &Settings,
    krate: Option<(&CrateIndex, usize)>,
    test_code: bool,
    parsed: Instant,
    times: &mut PhaseTimes,
) -> Analysed {
    let ext = &settings.extensions;
    let index = analysis::LineIndex::new(text, shift);
    let mut model = analysis::extract_in(file, &index, ext, &[], test_code);
    let mut diagnostics = checks::run(&model, settings);
    // Names the file's retry sites looked for and does not define: the one other file of the
    // crate that defines each is brought into view, and the file is analysed again (its tree
    // is the same; only the views are parsed).
    let providers = match krate {
        Some((k, me)) if !model.sites.is_empty() && !model.unresolved.is_empty() => {
            k.providers(me, &model.unresolved)
        }
        _ => Vec::new(),
    };
    if let (Some((k, _)), false) = (krate, providers.is_empty()) {
        let mentioned: HashSet<&str> = identifiers(text).collect();
        let views = k.views(&providers, &mentioned);
        // The views' analysis has an allowance of its own, as a file of that size would.
        limits::grant(text.len() + views.iter().map(|(_, v)| v.len()).sum::<usize>());
        let imported: Vec<(syn::File, &str)> = views
            .iter()
            .filter_map(|(path, view)| {
                if limits::syntax_depth(view) > limits::MAX_SYNTAX_DEPTH {
                    return None;
                }
                times.views += 1;
                Some((syn::parse_file(view).ok()?, path.as_str()))
            })
            .collect();
        k.count_views(times.views);
        if !imported.is_empty() {
            let index = match anchor(file) {
                Some(anchor) => analysis::LineIndex::new(text, shift).with_anchor(anchor),
                None => analysis::LineIndex::new(text, shift),
            };
            let views: Vec<(&syn::File, &str)> = imported.iter().map(|(f, p)| (f, *p)).collect();
            let with = analysis::extract_in(file, &index, ext, &views, test_code);
            let mut found = checks::run(&with, settings);
            // A fact found in another file may carry that file's place: it is not shown.
            found.retain(|d| !d.primary.span.is_elsewhere());
            // Fixes are made from the file alone (`--fix`): a finding it does not have alone
            // rests on another file's definitions.
            let alone: HashSet<(Rule, usize)> = diagnostics
                .iter()
                .map(|d| (d.rule, d.primary.span.start))
                .collect();
            for d in &mut found {
                d.secondary.retain(|l| !l.span.is_elsewhere());
                if !alone.contains(&(d.rule, d.primary.span.start)) {
                    d.fix = None;
                }
            }
            diagnostics = found;
            model = with;
        }
    }
    sort_findings(&mut diagnostics);
    // A reported loop whose attempt limit or wait the crate passes in: judged by what it passes.
    if let Some((k, _)) = krate {
        let asked: Vec<ValueQuery> = value_queries(&model, settings)
            .into_iter()
            .filter(|q| diagnostics.iter().any(|d| q.owns(d)))
            .collect();
        for q in asked {
            if let Some(largest) = k.largest_by_default(&q.source) {
                times.by_values += usize::from(q.apply(&mut diagnostics, largest));
            }
        }
    }
    // A call that reaches a function of this file means that one (the per-file check covers
    // it); `Vec::new()` in a file that defines `StoreClient::new` does not.
    let defines = |call: &analysis::Call| {
        let fns = &model.defined_fns;
        let from = fns.partition_point(|(n, _)| n < &call.name);
        fns[from..]
            .iter()
            .take_while(|(n, _)| *n == call.name)
            .any(|(_, owner)| call.via.reaches(owner.as_deref()))
    };
    let retrying = model
        .retrying_fns
        .iter()
        .map(|(name, owner, at)| (name.clone(), owner.clone(), at.start_pos))
        .collect();
    let calls = model
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
        .collect();
    let fns = if text.contains(suppress::MARKER) {
        suppress::fn_items(file)
    } else {
        Vec::new()
    };
    times.analyse += parsed.elapsed();
    Analysed {
        diagnostics,
        retrying,
        calls,
        fns,
        shift,
    }
}

/// The file's retry loops whose attempt limit or wait is a parameter or a field: what the
/// crate passes there decides what they do.
fn value_queries(model: &analysis::FileModel, settings: &Settings) -> Vec<ValueQuery> {
    let limits = model.sites.iter().filter_map(|s| {
        let from = s.limit_from.as_ref()?;
        Some(ValueQuery {
            source: from.source.clone(),
            head: s.head,
            decides: Decides::Limit(from.zero, s.longest_by_limit.clone()),
        })
    });
    // What the site would report without its wait.
    let waits = model.sites.iter().filter_map(|s| {
        Some(ValueQuery {
            source: s.delay_from.clone()?,
            head: s.head,
            decides: Decides::Wait {
                if_zero: without_waits(s, model, settings),
            },
        })
    });
    limits.chain(waits).collect()
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
    fn a_growing_wait_is_withdrawn_only_where_the_largest_count_keeps_it_within_a_minute() {
        // Longest wait by count: 2^n seconds.
        let longest: Vec<f64> = (0..10).map(|n| f64::from(1u32 << n)).collect();
        let no_retry = analysis::ZeroMeans::NoRetry;
        let one_retry = analysis::ZeroMeans::OneRetry;
        assert!(
            withdrawn(no_retry, 5, Rule::UncappedBackoff, &longest),
            "32 s"
        );
        assert!(
            !withdrawn(no_retry, 6, Rule::UncappedBackoff, &longest),
            "64 s"
        );
        // `if tries > limit`: a limit of 5 lets the count reach 6.
        assert!(
            !withdrawn(one_retry, 5, Rule::UncappedBackoff, &longest),
            "64 s"
        );
        // Past what was worked out, or not worked out at all: unknown, kept.
        assert!(!withdrawn(no_retry, 20, Rule::UncappedBackoff, &longest));
        assert!(!withdrawn(no_retry, 3, Rule::UncappedBackoff, &[]));
        // Other rules are not decided by the waits' length.
        assert!(!withdrawn(no_retry, 3, Rule::FixedDelay, &longest));
    }

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

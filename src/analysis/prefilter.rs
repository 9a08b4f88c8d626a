//! The pre-filter: what can neither hold a retry site nor inform one is not parsed.
//!
//! Over 1 000 lines on purpose: the lexer and the item splitter it feeds are one unit, tested
//! together against the parser (tests/prefilter.rs).
//!
//! Parsing is most of the cost of a scan (see `--stats`), and most of a file is declarations and
//! function bodies with no loop, no call of their own function, no retry crate and no timeout.
//! Before parsing, a light lexer (comments, strings, raw strings, characters and lifetimes told
//! apart as rustc does; Unicode white space as `proc-macro2` has it) splits each item list (the
//! file, `mod`, `impl` and `trait` blocks) into items. Four kinds of text may go:
//!
//! - **A function body**, unless it contains an identifier that can start a retry site or change
//!   how one is read: `loop`, `while`, `for`; an item keyword (`fn`, `mod`, `use`, `const`,
//!   `static`, `impl`, ...: nested items are visible to the whole file's analysis); a word of a
//!   retry crate or helper (`retr`, `backoff`, and the crates and policy types
//!   [`crate::analysis::may_have_policies`] looks for); a timeout (`timeout`, `deadline`); a
//!   crate of `status-error-calls` in the models (`ureq`: its calls change how statuses are
//!   read); the last segment of a name from the team's extensions; or its own function's name
//!   (recursion), or the name of a function of the file that calls itself (a caller hands the
//!   recursion the values it handles). A function whose attributes or signature hold a retry
//!   word (`#[retryable]`, `#[backon]`, `fn backoff(attempt: u32)`: a backoff strategy, see
//!   [`crate::analysis`]) keeps its body too. In test code (a function
//!   marked `#[test]`, `#[tokio::test]` or `#[cfg(test)]`, or one in a `#[cfg(test)]` module)
//!   loops and the function's own name keep nothing: the analysis reads no loop or recursion
//!   of a test as a retry (it waits for the test's own fixtures).
//! - **A whole `const` or `static` item** (with its attributes and the comments before it),
//!   unless it holds one of those identifiers.
//! - **The inside of an `enum`, `union` or `extern` block**, unless it names `ureq`: the
//!   analysis reads no variant or foreign item; and of a `struct` in a file where no function
//!   body is kept by itself (a `struct`'s fields are read: their types say what
//!   `self.field.method()` calls).
//! - **A doc comment** (`///`, `//!`, `/** */`, `/*! */`), anywhere: the parser makes each line
//!   a `#[doc]` attribute, which the analysis never reads, and documentation is much of a
//!   published crate's text.
//!
//! A function or constant that the kept code names is kept as well (the analysis reads a called
//! function's body and a constant's value by their name), repeated until nothing changes.
//! Everything else is blanked: its bytes become spaces (line breaks kept), so every byte offset,
//! line and column of the file stays the same, and the parser skips it. `tests/prefilter.rs`
//! checks that pruned and full parses give the same findings and crate facts on every fixture,
//! and on a corpus with `RETRY_AUDIT_CORPUS=DIR cargo test --release --test prefilter --
//! --ignored`; the fuzz targets compare both too.
//!
//! A file whose kept bodies are too large to hold as one tree (generated code; a tree is about a
//! hundred times its text) is parsed a window of bodies at a time ([`Windows`]): every window
//! keeps the file's declarations, blanks the bodies of the other windows but those that call its
//! functions, are methods of its types or are named by what it keeps, so that what the analysis
//! reads of a body is in its window.
//!
//! What is given up: a syntax error inside blanked text is not seen (it is not parsed), so such
//! a file is checked rather than skipped. `--full-parse` (implied by `--strict`) parses
//! everything.

use std::collections::HashSet;

use crate::analysis::Extensions;

/// Parses `text` (without a byte-order mark) like [`syn::parse_file`], with the function bodies
/// that cannot matter blanked (see the module documentation). Falls back to the full text when
/// the lexer is unsure (an unterminated comment or literal, a shebang line), and when the pruned
/// text does not parse, so that the error reported is the parser's own on the real text.
pub fn parse_file(text: &str, ext: &Extensions) -> syn::Result<syn::File> {
    parse_lexed(text, lex(text.as_bytes()).as_deref(), ext).map(|(file, _)| file)
}

/// [`parse_file`] with the tokens of `text` already lexed (`None`: not lexed with confidence),
/// and the names of the `const` and `static` items blanked whole (defined by the file all the
/// same: the crate's index of names lists them).
pub(crate) fn parse_lexed(
    text: &str,
    tokens: Option<&[Token]>,
    ext: &Extensions,
) -> syn::Result<(syn::File, Vec<String>)> {
    match tokens.and_then(|tokens| pruned_with_names(text, tokens, ext)) {
        Some((blanked, names)) => match syn::parse_file(&blanked) {
            Ok(file) => Ok((file, names)),
            Err(_) => syn::parse_file(text).map(|f| (f, Vec::new())),
        },
        None => syn::parse_file(text).map(|f| (f, Vec::new())),
    }
}

/// `text` with what cannot matter blanked, or `None` when nothing is blanked or the text is not
/// lexed with confidence.
#[must_use]
pub fn pruned(text: &str, ext: &Extensions) -> Option<String> {
    pruned_lexed(text, &lex(text.as_bytes())?, ext)
}

fn pruned_lexed(text: &str, tokens: &[Token], ext: &Extensions) -> Option<String> {
    pruned_with_names(text, tokens, ext).map(|(blanked, _)| blanked)
}

/// [`pruned_lexed`], with the names of the `const` and `static` items it blanked whole.
fn pruned_with_names(
    text: &str,
    tokens: &[Token],
    ext: &Extensions,
) -> Option<(String, Vec<String>)> {
    let pieces = Pieces::of(text, tokens, ext)?;
    let mut kept = pieces.keeps_itself.clone();
    pieces.close(&mut kept);
    if pieces.docs.is_empty() && kept.iter().all(|&k| k) {
        return None;
    }
    pieces.render(&kept)
}

/// A file's pieces (function bodies, constants, type bodies) and which of them keep themselves.
struct Pieces<'t> {
    text: &'t str,
    tokens: &'t [Token],
    all: Vec<Piece>,
    /// Per piece: kept by what it holds, before the names the kept code mentions are followed.
    keeps_itself: Vec<bool>,
    /// Token indices that are the name a piece declares (not a mention of it).
    declared: Vec<bool>,
    /// The doc comments, blanked wherever they are.
    docs: Vec<(usize, usize)>,
}

impl<'t> Pieces<'t> {
    fn of(text: &'t str, tokens: &'t [Token], ext: &Extensions) -> Option<Self> {
        // A shebang line (not an inner attribute `#![..]`): the parser drops it, leave it to it.
        if text.starts_with("#!") && !text[2..].trim_start().starts_with('[') {
            return None;
        }
        let matching = match_delimiters(tokens)?;
        let mut pieces = Vec::new();
        let items = Items {
            text,
            matching: &matching,
            iterators: &iterator_types(text, tokens),
            in_policy_impl: false,
            impl_type: None,
            in_test: false,
            container: None,
        };
        item_list(tokens, &items, 0, tokens.len(), &mut pieces, None);
        let word = |t: &Token| &text[t.start..t.end];
        let idents = |from: usize, to: usize| {
            tokens[from..to]
                .iter()
                .filter(|t| t.kind == Kind::Ident)
                .map(word)
        };

        // What keeps itself: a body with a retry word or its own name, a function whose
        // attributes name a retry macro, a constant with anything more than a value.
        for piece in &mut pieces {
            piece.kept = match piece.kind {
                PieceKind::Body => {
                    let name = word(&tokens[piece.name]);
                    let keeps_here = |w: &str| {
                        if piece.in_test {
                            !matches!(w, "loop" | "while" | "for") && keeps(w, ext)
                        } else {
                            w == name || keeps(w, ext)
                        }
                    };
                    piece.in_policy_impl
                        || idents(piece.from, piece.to).any(keeps_here)
                        || idents(piece.header, piece.from)
                            .any(|w| retry_word(w, ext) || crate::analysis::is_retry_word(w))
                }
                PieceKind::Value => idents(piece.from, piece.to)
                    .any(|w| !matches!(w, "const" | "static" | "mut") && keeps(w, ext)),
                PieceKind::Blank | PieceKind::Fields => false,
            };
        }
        // A body that calls a function calling itself keeps itself too: what a caller hands a
        // recursion is what the recursion handles (a value another operation made is the next
        // value, not a retry's).
        let recursive: HashSet<&str> = pieces
            .iter()
            .filter(|p| p.kind == PieceKind::Body && !p.in_test)
            .map(|p| (p, word(&tokens[p.name])))
            .filter(|(p, name)| idents(p.from, p.to).any(|w| w == *name))
            .map(|(_, name)| name)
            .collect();
        if !recursive.is_empty() {
            for piece in pieces
                .iter_mut()
                .filter(|p| p.kind == PieceKind::Body && !p.kept && !p.in_test)
            {
                piece.kept = idents(piece.from, piece.to).any(|w| recursive.contains(w));
            }
        }
        // A struct whose methods are analysed keeps its fields.
        let analysed: HashSet<&str> = pieces
            .iter()
            .filter(|p| p.kind == PieceKind::Body && p.kept)
            .filter_map(|p| p.type_name.map(|t| word(&tokens[t])))
            .collect();
        for piece in pieces.iter_mut().filter(|p| p.kind == PieceKind::Fields) {
            piece.kept = piece
                .type_name
                .is_some_and(|t| analysed.contains(word(&tokens[t])));
        }
        let mut declared = vec![false; tokens.len()];
        for piece in pieces.iter().filter(|p| p.names_something()) {
            declared[piece.name] = true;
        }
        Some(Pieces {
            text,
            tokens,
            keeps_itself: pieces.iter().map(|p| p.kept).collect(),
            all: pieces,
            declared,
            docs: doc_comments(text.as_bytes(), tokens),
        })
    }

    fn word(&self, t: usize) -> &'t str {
        let t = &self.tokens[t];
        &self.text[t.start..t.end]
    }

    /// Keeps, as well, the functions and constants that the kept code names, repeated until
    /// nothing changes (the analysis reads a called function's body and a constant's value by
    /// their name).
    fn close(&self, kept: &mut [bool]) {
        let (pieces, tokens) = (&self.all, self.tokens);
        // Names of the functions and constants that may go.
        let candidates: HashSet<&str> = pieces
            .iter()
            .zip(kept.iter())
            .filter(|(p, &k)| !k && p.names_something())
            .map(|(p, _)| self.word(p.name))
            .collect();
        let mentions = |from: usize, to: usize, mentioned: &mut HashSet<&'t str>| {
            for (at, t) in tokens.iter().enumerate().take(to).skip(from) {
                if t.kind == Kind::Ident && !self.declared[at] {
                    let w = self.word_of(t);
                    if candidates.contains(w) {
                        mentioned.insert(w);
                    }
                }
            }
        };
        // Which of them the code that is parsed names.
        let mut mentioned: HashSet<&str> = HashSet::new();
        let mut at = 0;
        for (piece, &k) in pieces.iter().zip(kept.iter()) {
            if !k {
                mentions(at, piece.from.max(at), &mut mentioned);
                at = at.max(piece.to);
            }
        }
        mentions(at, tokens.len(), &mut mentioned);
        loop {
            let mut newly = Vec::new();
            for (i, piece) in pieces.iter().enumerate() {
                if !kept[i] && piece.names_something() && mentioned.contains(self.word(piece.name))
                {
                    kept[i] = true;
                    newly.push(i);
                }
            }
            if newly.is_empty() {
                break;
            }
            for i in newly {
                mentions(pieces[i].from, pieces[i].to, &mut mentioned);
            }
        }
    }

    /// The text with the pieces not `kept` and the doc comments blanked, and the names of the
    /// `const` and `static` items blanked whole.
    fn render(&self, kept: &[bool]) -> Option<(String, Vec<String>)> {
        let tokens = self.tokens;
        let mut bytes = self.text.as_bytes().to_vec();
        let blanked = self
            .all
            .iter()
            .zip(kept)
            .filter(|(_, &k)| !k)
            .map(|(p, _)| p.bytes)
            .chain(self.docs.iter().copied());
        for (from, to) in blanked {
            for b in &mut bytes[from..to] {
                if *b != b'\n' && *b != b'\r' {
                    *b = b' ';
                }
            }
        }
        // Each blanked `const`/`static`, and the items written inside its value (`static X: T =
        // { static ALIGNED: .. };`).
        let mut names = Vec::new();
        for (piece, _) in self
            .all
            .iter()
            .zip(kept)
            .filter(|(p, &k)| !k && p.kind == PieceKind::Value)
        {
            names.push(self.word(piece.name).to_owned());
            for three in tokens[piece.from.saturating_sub(1)..piece.to].windows(3) {
                // Not the `static` of a lifetime (`&'static str`: the quote, then the word), nor
                // the `const` of a raw pointer (`*const u8`).
                if matches!(three[1].word, Word::Value | Word::Fn)
                    && !matches!(three[0].kind, Kind::Punct(b'\'' | b'*'))
                    && three[1].kind == Kind::Ident
                    && three[2].kind == Kind::Ident
                    && !matches!(self.word_of(&three[2]), "mut" | "fn" | "unsafe" | "extern")
                {
                    names.push(self.word_of(&three[2]).to_owned());
                }
            }
        }
        names.sort();
        names.dedup();
        // Whole characters were replaced: every blanked range starts and ends on ASCII.
        String::from_utf8(bytes)
            .ok()
            .map(|blanked| (blanked, names))
    }

    fn word_of(&self, t: &Token) -> &'t str {
        &self.text[t.start..t.end]
    }
}

/// A file too large to parse whole at a bounded cost in memory (its kept function bodies
/// together over a window's bytes): its bodies are parsed a window at a time. Each window is
/// the pruned file with only some of the bodies that keep themselves, and whatever they name
/// (followed as the pre-filter follows names): every declaration, signature and type is in
/// every window, so a window's analysis of its bodies is the whole file's, and a syntax tree of
/// the file's declarations and one window of bodies is all that is in memory at once.
pub struct Windows<'t> {
    pieces: Pieces<'t>,
    /// Per window, the indices of the bodies that keep themselves, in file order.
    windows: Vec<Vec<usize>>,
}

impl<'t> Windows<'t> {
    /// The windows of `text` (its `tokens` lexed), each with at most `budget` bytes of the
    /// bodies that keep themselves (at least one body); `None` when they all fit in one: the
    /// file is parsed whole ([`parse_lexed`]).
    pub(crate) fn of(
        text: &'t str,
        tokens: &'t [Token],
        ext: &Extensions,
        budget: usize,
    ) -> Option<Self> {
        let size = |p: &Piece| p.bytes.1 - p.bytes.0;
        // Cheap test first: an ordinary file is far under any window.
        if text.len() <= budget {
            return None;
        }
        let pieces = Pieces::of(text, tokens, ext)?;
        let mut windows: Vec<Vec<usize>> = Vec::new();
        let mut filled = 0;
        for (i, piece) in pieces.all.iter().enumerate() {
            if piece.kind != PieceKind::Body || !pieces.keeps_itself[i] {
                continue;
            }
            match windows.last_mut() {
                Some(window) if filled + size(piece) <= budget => window.push(i),
                _ => {
                    windows.push(vec![i]);
                    filled = 0;
                }
            }
            filled += size(piece);
        }
        (windows.len() > 1).then_some(Windows { pieces, windows })
    }

    /// How many windows (more than one: a file of one window is parsed whole).
    #[must_use]
    pub fn count(&self) -> usize {
        self.windows.len()
    }

    /// Window `k`'s text (same length and lines as the file): the pruned file with the bodies
    /// of other windows blanked, unless they call this window's functions or this window's code
    /// names them.
    #[must_use]
    pub fn text(&self, k: usize) -> Option<String> {
        let pieces = &self.pieces;
        let mut kept: Vec<bool> = pieces
            .all
            .iter()
            .zip(&pieces.keeps_itself)
            .map(|(p, &k)| k && p.kind != PieceKind::Body)
            .collect();
        let window = self.windows.get(k)?;
        for &i in window {
            kept[i] = true;
        }
        // The bodies that call this window's functions (what a function is used for is read
        // where it is called: a schedule a retry of the file waits), the other methods of their
        // types (a type is read through its own code), then what all of them name.
        let of_window = |f: fn(&Piece) -> Option<usize>| -> HashSet<&str> {
            window
                .iter()
                .filter_map(|&i| f(&pieces.all[i]))
                .map(|t| pieces.word(t))
                .collect()
        };
        let names = of_window(|p| Some(p.name));
        let types = of_window(|p| p.type_name);
        for (i, piece) in pieces.all.iter().enumerate() {
            if kept[i] || piece.kind != PieceKind::Body || !pieces.keeps_itself[i] {
                continue;
            }
            kept[i] = piece
                .type_name
                .is_some_and(|t| types.contains(pieces.word(t)))
                || (piece.from..piece.to).any(|at| {
                    pieces.tokens[at].kind == Kind::Ident
                        && !pieces.declared[at]
                        && names.contains(pieces.word(at))
                });
        }
        pieces.close(&mut kept);
        pieces.render(&kept).map(|(text, _)| text)
    }
}

/// What a file defines, read from its tokens without parsing: the crate's index of names is made
/// of these, and another file's analysis parses a view of just the definitions it follows into
/// ([`Outline::view`]), not the whole file again.
#[derive(Clone, Debug, Default)]
pub struct Outline {
    /// Functions with a body, `const` and `static` items, at any depth of `mod`, `impl` and
    /// `trait` blocks (not inside function bodies or macro calls), in file order.
    pub definitions: Vec<Definition>,
    /// The `mod`, `impl` and `trait` blocks, outermost first.
    pub containers: Vec<Container>,
    /// The modules declared with a file of their own (`mod name;`), and whether test code only
    /// declares it (`#[cfg(test)] mod tests;`).
    pub mod_decls: Vec<(String, bool)>,
}

/// A function or constant of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Definition {
    pub name: String,
    /// For a method: the type of its `impl` block, or its trait.
    pub owner: Option<String>,
    /// A function (else a `const` or `static`).
    pub is_fn: bool,
    /// Its bytes, outer attributes included.
    pub item: (usize, usize),
    /// The block it is in ([`Outline::containers`]).
    pub container: Option<usize>,
}

/// A `mod`, `impl` or `trait` block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Container {
    /// From its attributes to its opening brace, included.
    pub header: (usize, usize),
    /// Its closing brace.
    pub close: (usize, usize),
    pub parent: Option<usize>,
}

impl Outline {
    /// The outline of `text` (without a byte-order mark); `None` when the lexer is unsure (an
    /// unterminated literal or comment, unbalanced delimiters): nothing is known of its names.
    #[must_use]
    pub fn of(text: &str) -> Option<Outline> {
        let tokens = lex(text.as_bytes())?;
        let matching = match_delimiters(&tokens)?;
        let items = Items {
            text,
            matching: &matching,
            iterators: &HashSet::new(),
            in_policy_impl: false,
            impl_type: None,
            in_test: false,
            container: None,
        };
        let mut outline = Outline::default();
        item_list(
            &tokens,
            &items,
            0,
            tokens.len(),
            &mut Vec::new(),
            Some(&mut outline),
        );
        Some(outline)
    }

    fn record(
        &mut self,
        tokens: &[Token],
        cx: &Items<'_>,
        kind: ItemKind,
        (start, name, block, end): (usize, usize, Option<usize>, usize),
    ) {
        let word = |t: &Token| cx.text[t.start..t.end].to_owned();
        let item = (tokens[start].start, tokens[end.max(start + 1) - 1].end);
        match (kind, block) {
            (ItemKind::Fn, Some(_)) => self.definitions.push(Definition {
                name: word(&tokens[name]),
                owner: cx.impl_type.map(|t| word(&tokens[t])),
                is_fn: true,
                item,
                container: cx.container,
            }),
            (ItemKind::Value, _) if tokens[name].kind == Kind::Ident => {
                self.definitions.push(Definition {
                    name: word(&tokens[name]),
                    owner: None,
                    is_fn: false,
                    item,
                    container: cx.container,
                });
            }
            (ItemKind::Items, None) if word(&tokens[name]) == "mod" => {
                if let Some(module) = tokens.get(name + 1).filter(|t| t.kind == Kind::Ident) {
                    let test =
                        cx.in_test || test_attributes(cx.text, tokens, cx.matching, start, name);
                    self.mod_decls.push((word(module), test));
                }
            }
            _ => {}
        }
    }

    /// `text` with everything blanked (spaces; line breaks kept, so positions stay) but the
    /// definitions `keep` (indices into [`Outline::definitions`]) and the headers and closing
    /// braces of the blocks around them: what parses to those definitions alone, where they are.
    #[must_use]
    pub fn view(&self, text: &str, keep: &[usize]) -> String {
        let mut shown = vec![false; text.len()];
        let mut show = |(from, to): (usize, usize)| {
            for b in &mut shown[from.min(text.len())..to.min(text.len())] {
                *b = true;
            }
        };
        for &k in keep {
            let Some(d) = self.definitions.get(k) else {
                continue;
            };
            show(d.item);
            let mut up = d.container;
            while let Some(c) = up.and_then(|c| self.containers.get(c)) {
                show(c.header);
                show(c.close);
                up = c.parent;
            }
        }
        let bytes: Vec<u8> = text
            .bytes()
            .zip(&shown)
            .map(|(b, &keep)| {
                if keep || b == b'\n' || b == b'\r' {
                    b
                } else {
                    b' '
                }
            })
            .collect();
        // Kept ranges start and end at tokens (ASCII or whole characters), so what is blanked is
        // whole characters; a multi-byte character is never cut.
        String::from_utf8(bytes).unwrap_or_default()
    }
}

/// Whether an attribute word names a retry macro (`#[retryable]`, `#[backon(..)]`,
/// `#[retry(..)]`) or a policy.
fn retry_word(word: &str, ext: &Extensions) -> bool {
    WORDS_ANY_CASE.iter().any(|w| contains_any_case(word, w))
        || crate::analysis::may_have_policies(word, ext)
}

/// Words (substrings of an identifier, compared without regard to ASCII case, as the retry
/// helper names are: `WithRetry`, `RETRY_`) that keep a body.
const WORDS_ANY_CASE: &[&str] = &["retr", "backoff", "timeout", "deadline"];

/// Identifiers that keep a body: loops and items (visible to the whole file).
const KEYWORDS: &[&str] = &[
    "loop",
    "while",
    "for",
    "fn",
    "mod",
    "use",
    "const",
    "static",
    "impl",
    "struct",
    "enum",
    "union",
    "trait",
    "type",
    "extern",
    "macro_rules",
];

/// Whether an identifier is a crate whose calls return statuses as errors (`status-error-calls`
/// of the models: `ureq`): its calls change how a retry's statuses are read.
fn is_status_error_crate(word: &[u8]) -> bool {
    static CRATES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    CRATES
        .get_or_init(|| {
            crate::analysis::known::builtin()
                .entries(crate::analysis::known::List::StatusErrorCalls)
                .iter()
                .filter_map(|e| e.text.split("::").next().map(str::to_owned))
                .collect()
        })
        .iter()
        .any(|c| c.as_bytes() == word)
}

/// Whether an identifier keeps the body it is in.
fn keeps(word: &str, ext: &Extensions) -> bool {
    KEYWORDS.contains(&word)
        || is_status_error_crate(word.as_bytes())
        || WORDS_ANY_CASE.iter().any(|w| contains_any_case(word, w))
        || crate::analysis::may_have_policies(word, ext)
        || [
            &ext.sleep_fns,
            &ext.random_sources,
            &ext.key_constructors,
            &ext.status_accessors,
            &ext.every_error_runners,
        ]
        .iter()
        .flat_map(|entries| entries.iter())
        .filter_map(|e| e.rsplit("::").next())
        .any(|last| !last.is_empty() && word.contains(last))
}

/// `haystack` contains `needle` (lower-case ASCII), ignoring ASCII case.
fn contains_any_case(haystack: &str, needle: &str) -> bool {
    haystack
        .as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// What splitting an item list needs.
#[derive(Clone, Copy)]
struct Items<'t> {
    text: &'t str,
    matching: &'t [usize],
    /// Types with an `impl Iterator for T` in the file.
    iterators: &'t HashSet<&'t str>,
    /// Inside an `impl` block of a retry policy type.
    in_policy_impl: bool,
    /// Inside an `impl` block: the token of its type's name (`Client` in `impl<C> Tr for
    /// Client<C>`).
    impl_type: Option<usize>,
    /// Inside a test module (`#[cfg(test)] mod tests`).
    in_test: bool,
    /// The `mod`, `impl` or `trait` block being split (an index into [`Outline::containers`]).
    container: Option<usize>,
}

/// The `T` of every `Iterator for T` in the file.
fn iterator_types<'t>(text: &'t str, tokens: &[Token]) -> HashSet<&'t str> {
    tokens
        .windows(3)
        .filter(|w| {
            w.iter().all(|t| t.kind == Kind::Ident)
                && &text[w[0].start..w[0].end] == "Iterator"
                && &text[w[1].start..w[1].end] == "for"
        })
        .map(|w| &text[w[2].start..w[2].end])
        .collect()
}

/// A part of the file that may be blanked.
struct Piece {
    kind: PieceKind,
    /// Token index of the function's or constant's name (unused for `Blank`).
    name: usize,
    /// Token index where the item's header starts (attributes included).
    header: usize,
    /// The tokens that go when the piece is not kept: `from..to`.
    from: usize,
    to: usize,
    /// The bytes blanked then: a body's inside, or a whole item with the comments before it
    /// (a doc comment left alone would attach to the next item).
    bytes: (usize, usize),
    kept: bool,
    /// A method of an `impl` block of a retry policy type (named for retrying, or an iterator):
    /// its constructors and `Default` are the policy's values.
    in_policy_impl: bool,
    /// For a body: the token of the name of the type whose `impl` it is in. For `Fields`: the
    /// token of the struct's name.
    type_name: Option<usize>,
    /// A test function's body (`#[test]`, `#[tokio::test]`, or in a test module): its loops
    /// and recursion are no retry sites (they wait for the test's own fixtures), so they do
    /// not keep it.
    in_test: bool,
}

impl Piece {
    /// A function or constant: a piece that declares a name others may mention.
    fn names_something(&self) -> bool {
        !matches!(self.kind, PieceKind::Blank | PieceKind::Fields)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PieceKind {
    /// The inside of a function body (its braces stay).
    Body,
    /// A whole `const` or `static` item.
    Value,
    /// The inside of an `enum` or `union` body or of an `extern` block: nothing the analysis
    /// reads, blanked unless it names `ureq`.
    Blank,
    /// The inside of a `struct` body: its fields' types say what `self.field.method()` calls,
    /// kept when a function body of the file is kept by itself (a file with nothing to analyse
    /// reads no field).
    Fields,
}

/// What an item of an item list is, from its first keyword.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ItemKind {
    Fn,
    /// `mod`, `impl`, `trait`: an item list inside.
    Items,
    /// `struct`, `enum`, `union`.
    Data,
    /// `extern "C" { .. }`.
    ExternBlock,
    /// `const NAME`, `static NAME`.
    Value,
    /// Anything else (`use`, `type`, macros, inner attributes): kept as it is.
    Other,
}

/// Splits the item list `tokens[from..to]` into items and records what may be blanked in each,
/// recursing into `mod`, `impl` and `trait` blocks.
fn item_list(
    tokens: &[Token],
    cx: &Items<'_>,
    from: usize,
    to: usize,
    out: &mut Vec<Piece>,
    mut outline: Option<&mut Outline>,
) {
    let _guard = crate::analysis::limits::enter();
    let matching = cx.matching;
    let mut i = from;
    while i < to {
        let start = i;
        // An inner attribute `#![..]` stands alone.
        if tokens[i].kind == Kind::Punct(b'#')
            && tokens
                .get(i + 1)
                .is_some_and(|t| t.kind == Kind::Punct(b'!'))
            && tokens
                .get(i + 2)
                .is_some_and(|t| t.kind == Kind::Open(b'['))
        {
            i = matching[i + 2] + 1;
            continue;
        }
        let (kind, name) = item_kind(tokens, matching, i, to);
        let brace_ended = !matches!(kind, ItemKind::Value | ItemKind::Other)
            || tokens[name].kind == Kind::Punct(b'!');
        // The item's end: its block, or the `;` that ends it.
        let block = if brace_ended {
            block_after(tokens, matching, name + 1, to)
        } else {
            None
        };
        let end = match block {
            Some(open) => matching[open] + 1,
            None => semicolon_after(tokens, matching, name, to).map_or(to, |s| s + 1),
        };
        let inside = |open: usize| (tokens[open].end, tokens[matching[open]].start);
        if let Some(outline) = outline.as_deref_mut() {
            outline.record(tokens, cx, kind, (start, name, block, end));
        }
        match (kind, block) {
            (ItemKind::Fn, Some(open)) if open + 1 < matching[open] => out.push(Piece {
                kind: PieceKind::Body,
                name,
                header: start,
                from: open + 1,
                to: matching[open],
                bytes: inside(open),
                kept: false,
                in_policy_impl: cx.in_policy_impl,
                type_name: cx.impl_type,
                in_test: cx.in_test || test_attributes(cx.text, tokens, matching, start, name),
            }),
            (ItemKind::Items, Some(open)) => {
                let word = |t: &Token| &cx.text[t.start..t.end];
                let policy = tokens[start..open].iter().any(|t| {
                    t.kind == Kind::Ident
                        && (crate::analysis::is_retry_word(word(t))
                            || cx.iterators.contains(word(t)))
                });
                let is_impl = word(&tokens[name]) == "impl";
                let container = outline.as_deref_mut().map(|o| {
                    o.containers.push(Container {
                        header: (tokens[start].start, tokens[open].end),
                        close: (tokens[matching[open]].start, tokens[matching[open]].end),
                        parent: cx.container,
                    });
                    o.containers.len() - 1
                });
                let inner = Items {
                    in_test: cx.in_test
                        || (word(&tokens[name]) == "mod"
                            && test_attributes(cx.text, tokens, matching, start, name)),
                    in_policy_impl: policy && is_impl,
                    impl_type: if is_impl {
                        impl_type_name(cx.text, tokens, cx.matching, name + 1, open)
                    } else {
                        None
                    },
                    container,
                    ..*cx
                };
                item_list(
                    tokens,
                    &inner,
                    open + 1,
                    matching[open],
                    out,
                    outline.as_deref_mut(),
                );
            }
            (ItemKind::Data | ItemKind::ExternBlock, Some(open)) => {
                let names_ureq = tokens[open + 1..matching[open]]
                    .iter()
                    .any(|t| t.kind == Kind::Ident && t.names_status_crate);
                // A struct's fields say what `self.field.method()` calls.
                let is_struct = &cx.text[tokens[name].start..tokens[name].end] == "struct";
                if !names_ureq && open + 1 < matching[open] {
                    out.push(Piece {
                        kind: if is_struct {
                            PieceKind::Fields
                        } else {
                            PieceKind::Blank
                        },
                        name: 0,
                        header: start,
                        from: open + 1,
                        to: matching[open],
                        bytes: inside(open),
                        kept: false,
                        in_policy_impl: false,
                        in_test: false,
                        type_name: (is_struct
                            && tokens.get(name + 1).is_some_and(|t| t.kind == Kind::Ident))
                        .then_some(name + 1),
                    });
                }
            }
            (ItemKind::Value, _) if tokens[name].kind == Kind::Ident && end <= to => {
                out.push(Piece {
                    kind: PieceKind::Value,
                    name,
                    header: start,
                    from: start,
                    to: end,
                    bytes: (
                        start.checked_sub(1).map_or(0, |p| tokens[p].end),
                        tokens[end - 1].end,
                    ),
                    kept: false,
                    in_policy_impl: false,
                    in_test: false,
                    type_name: None,
                });
            }
            _ => {}
        }
        i = end.max(start + 1);
    }
}

/// Whether the outer attributes in `tokens[from..to]` mark test code
/// ([`crate::analysis::test_code::marks_test`]).
fn test_attributes(
    text: &str,
    tokens: &[Token],
    matching: &[usize],
    from: usize,
    to: usize,
) -> bool {
    let word = |t: &Token| &text[t.start..t.end];
    let mut i = from;
    while i + 1 < to {
        if tokens[i].kind != Kind::Punct(b'#') || tokens[i + 1].kind != Kind::Open(b'[') {
            i += 1;
            continue;
        }
        let (open, close) = (i + 1, matching[i + 1]);
        let inside = &tokens[open + 1..close];
        // The attribute's path: identifiers and `::` up to its arguments.
        let path_end = inside
            .iter()
            .position(|t| !matches!(t.kind, Kind::Ident | Kind::Punct(b':')))
            .unwrap_or(inside.len());
        let path: Vec<&str> = inside[..path_end]
            .iter()
            .filter(|t| t.kind == Kind::Ident)
            .map(word)
            .collect();
        let args = &inside[path_end..];
        let negated = args.windows(2).any(|w| {
            w[0].kind == Kind::Ident && word(&w[0]) == "not" && w[1].kind == Kind::Open(b'(')
        });
        let idents = args.iter().filter(|t| t.kind == Kind::Ident).map(word);
        if crate::analysis::test_code::marks_test(&path, idents, negated) {
            return true;
        }
        i = close + 1;
    }
    false
}

/// The kind of the item starting at `i`, and the token index of its name (for `fn`, `const`,
/// `static`), of the `!` of a macro call, or of the keyword.
/// The token of the type's name in an `impl` header (`tokens[from..to]`, after `impl`): the
/// last identifier outside angle brackets, after `for` if there is one, before `where`.
fn impl_type_name(
    text: &str,
    tokens: &[Token],
    matching: &[usize],
    from: usize,
    to: usize,
) -> Option<usize> {
    let mut depth = 0usize;
    let mut last = None;
    let mut i = from;
    while i < to {
        let t = &tokens[i];
        match t.kind {
            Kind::Punct(b'<') => depth += 1,
            Kind::Punct(b'>') => depth = depth.saturating_sub(1),
            Kind::Open(_) => {
                i = matching[i] + 1;
                continue;
            }
            Kind::Ident if depth == 0 => match &text[t.start..t.end] {
                "where" => break,
                "for" | "dyn" | "unsafe" | "impl" => {}
                _ => last = Some(i),
            },
            _ => {}
        }
        i += 1;
    }
    last
}

fn item_kind(tokens: &[Token], matching: &[usize], mut i: usize, to: usize) -> (ItemKind, usize) {
    while i < to {
        let t = &tokens[i];
        let next = tokens.get(i + 1).filter(|_| i + 1 < to);
        match t.kind {
            Kind::Punct(b';') | Kind::Open(b'{') => return (ItemKind::Other, i),
            Kind::Open(_) => {
                i = matching[i] + 1;
                continue;
            }
            // A macro call (`foo! { .. }`, `union!(..)`, `macro_rules! m { .. }`): kept whole.
            Kind::Ident if next.is_some_and(|n| n.kind == Kind::Punct(b'!')) => {
                return (ItemKind::Other, i + 1);
            }
            Kind::Ident => {
                let next_is_ident = next.is_some_and(|n| n.kind == Kind::Ident);
                match t.word {
                    Word::Fn if next_is_ident => return (ItemKind::Fn, i + 1),
                    Word::Items => return (ItemKind::Items, i),
                    Word::Data => return (ItemKind::Data, i),
                    Word::Extern
                        if next.is_some_and(|n| {
                            n.kind == Kind::Open(b'{')
                                || (n.kind == Kind::Literal
                                    && tokens
                                        .get(i + 2)
                                        .is_some_and(|m| m.kind == Kind::Open(b'{')))
                        }) =>
                    {
                        return (ItemKind::ExternBlock, i);
                    }
                    // `const fn`, `const unsafe fn`, `const extern "C" fn`.
                    Word::Value
                        if next.is_some_and(|n| {
                            matches!(n.word, Word::Qualifier | Word::Fn | Word::Extern)
                        }) => {}
                    Word::Value => {
                        let mut n = i + 1;
                        if tokens.get(n).is_some_and(|m| m.word == Word::Mut) {
                            n += 1;
                        }
                        return (ItemKind::Value, n.min(to - 1));
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        i += 1;
    }
    (ItemKind::Other, to.saturating_sub(1))
}

/// The `;` that ends the item at this level after `from`.
fn semicolon_after(tokens: &[Token], matching: &[usize], from: usize, to: usize) -> Option<usize> {
    let mut i = from;
    while i < to {
        match tokens[i].kind {
            Kind::Punct(b';') => return Some(i),
            Kind::Open(_) => i = matching[i] + 1,
            _ => i += 1,
        }
    }
    None
}

/// The `{` that starts the block of the item whose header starts at `from`: the first brace at
/// this level outside generic arguments (a brace inside `<..>` is a const-generic value:
/// `Foo<{ N }>`, `Bar<A, { N }>`), before any `;` (a declaration). A brace after the `,` that
/// ends a `where` clause (`where S: Pool, {`) is the block.
fn block_after(tokens: &[Token], matching: &[usize], from: usize, to: usize) -> Option<usize> {
    let mut i = from;
    let mut angles = 0usize;
    while i < to {
        match tokens[i].kind {
            Kind::Punct(b';') => return None,
            Kind::Punct(b'<') => {
                angles += 1;
                i += 1;
            }
            // `->` and `=>` are not closing angles.
            Kind::Punct(b'>') => {
                let arrow = i > 0 && matches!(tokens[i - 1].kind, Kind::Punct(b'-' | b'='));
                if !arrow {
                    angles = angles.saturating_sub(1);
                }
                i += 1;
            }
            Kind::Open(b'{') => {
                if angles == 0 {
                    return Some(i);
                }
                i = matching[i] + 1;
            }
            Kind::Open(_) => i = matching[i] + 1,
            _ => i += 1,
        }
    }
    None
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Ident,
    /// `(`, `[` or `{`.
    Open(u8),
    /// `)`, `]` or `}`.
    Close(u8),
    Punct(u8),
    Literal,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Token {
    pub(crate) kind: Kind,
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// Which keyword an identifier is, for the item structure.
    word: Word,
    /// The identifier `ureq`.
    names_status_crate: bool,
}

/// The identifiers the item structure depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Word {
    Fn,
    /// `mod`, `impl`, `trait`.
    Items,
    /// `struct`, `enum`, `union`.
    Data,
    Extern,
    /// `const`, `static`.
    Value,
    /// `unsafe`, `async`, `extern` after `const`: `const unsafe fn`.
    Qualifier,
    Mut,
    Other,
}

fn word_of(word: &[u8]) -> Word {
    match word {
        b"fn" => Word::Fn,
        b"mod" | b"impl" | b"trait" => Word::Items,
        b"struct" | b"enum" | b"union" => Word::Data,
        b"extern" => Word::Extern,
        b"const" | b"static" => Word::Value,
        b"unsafe" | b"async" => Word::Qualifier,
        b"mut" => Word::Mut,
        _ => Word::Other,
    }
}

/// The byte ranges of the doc comments of `src` (`///`, `//!`, `/** */`, `/*! */`): the
/// analysis reads no `#[doc]` attribute, and a file's documentation is much of what is parsed.
/// Comments lie between the tokens, so only the gaps between them are searched. Not those
/// inside a macro's arguments (`select! { .. }`): there a doc comment is a token of what the
/// macro is given, and blanking it would change what the analysis reads of the macro.
fn doc_comments(src: &[u8], tokens: &[Token]) -> Vec<(usize, usize)> {
    let mut docs = docs_between(src, tokens);
    let bodies = macro_arguments(tokens);
    if !bodies.is_empty() {
        docs.retain(|(start, _)| !bodies.iter().any(|(a, b)| a < start && start < b));
    }
    docs
}

/// The byte ranges of the delimited arguments of the macro calls of `tokens` (`name! ( .. )`,
/// `macro_rules! name { .. }`), from the opening delimiter to the closing one.
fn macro_arguments(tokens: &[Token]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut open: Vec<(usize, bool)> = Vec::new();
    let is = |i: usize, k: Kind| tokens.get(i).is_some_and(|t| t.kind == k);
    for (i, t) in tokens.iter().enumerate() {
        match t.kind {
            Kind::Open(_) => {
                let of_macro = (i >= 2 && is(i - 1, Kind::Punct(b'!')) && is(i - 2, Kind::Ident))
                    || (i >= 3
                        && is(i - 1, Kind::Ident)
                        && is(i - 2, Kind::Punct(b'!'))
                        && is(i - 3, Kind::Ident));
                open.push((i, of_macro));
            }
            Kind::Close(_) => {
                if let Some((o, true)) = open.pop() {
                    out.push((tokens[o].start, t.end));
                }
            }
            _ => {}
        }
    }
    out
}

/// The doc comments in the gaps between `tokens` (see [`doc_comments`]).
fn docs_between(src: &[u8], tokens: &[Token]) -> Vec<(usize, usize)> {
    let mut docs = Vec::new();
    let gaps = std::iter::once(0)
        .chain(tokens.iter().map(|t| t.end))
        .zip(tokens.iter().map(|t| t.start).chain([src.len()]));
    for (gap_start, gap_end) in gaps {
        let mut i = gap_start;
        while i + 1 < gap_end {
            match (src[i], src[i + 1]) {
                (b'/', b'/') => {
                    let end = memchr_newline(src, i).min(gap_end);
                    let rest = &src[i + 2..end];
                    // `///` but not `////`; `//!`.
                    if matches!(rest, [b'/', ..] if rest.get(1) != Some(&b'/'))
                        || rest.first() == Some(&b'!')
                    {
                        docs.push((i, end));
                    }
                    i = end;
                }
                (b'/', b'*') => {
                    let Some(end) = block_comment_end(src, i).map(|e| e.min(gap_end)) else {
                        break;
                    };
                    let rest = &src[i + 2..end];
                    // `/** */` but not `/***` or `/**/`; `/*! */`.
                    if (rest.first() == Some(&b'*') && !matches!(rest.get(1), Some(b'*' | b'/')))
                        || rest.first() == Some(&b'!')
                    {
                        docs.push((i, end));
                    }
                    i = end;
                }
                _ => i += 1,
            }
        }
    }
    docs
}

/// For each opening delimiter, the index of its closing one (other entries unused); `None` when
/// they do not balance.
fn match_delimiters(tokens: &[Token]) -> Option<Vec<usize>> {
    let mut matching = vec![0; tokens.len()];
    let mut stack = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        match t.kind {
            Kind::Open(open) => stack.push((i, open)),
            Kind::Close(close) => {
                let (o, open) = stack.pop()?;
                let pair = matches!((open, close), (b'(', b')') | (b'[', b']') | (b'{', b'}'));
                if !pair {
                    return None;
                }
                matching[o] = i;
            }
            _ => {}
        }
    }
    stack.is_empty().then_some(matching)
}

/// The tokens of `src`, without comments and whitespace; `None` for an unterminated comment or
/// literal (the parser will say what is wrong).
pub(crate) fn lex(src: &[u8]) -> Option<Vec<Token>> {
    let mut tokens = Vec::with_capacity(src.len() / 5);
    let mut i = 0;
    let n = src.len();
    while i < n {
        let c = src[i];
        let start = i;
        let kind = match c {
            b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C => {
                i += 1;
                continue;
            }
            b'/' if src.get(i + 1) == Some(&b'/') => {
                i = memchr_newline(src, i);
                continue;
            }
            b'/' if src.get(i + 1) == Some(&b'*') => {
                i = block_comment_end(src, i)?;
                continue;
            }
            b'"' => {
                i = string_end(src, i + 1)?;
                Kind::Literal
            }
            b'\'' => {
                if let Some(end) = char_literal_end(src, i) {
                    i = end;
                    Kind::Literal
                } else {
                    // A lifetime or a label: the quote, then the identifier.
                    i += 1;
                    Kind::Punct(b'\'')
                }
            }
            b'0'..=b'9' => {
                i += 1;
                while i < n {
                    let d = src[i];
                    let fraction = d == b'.'
                        && src.get(i + 1).is_some_and(u8::is_ascii_digit)
                        && src[start..i]
                            .iter()
                            .all(|&x| x.is_ascii_digit() || x == b'_');
                    if d.is_ascii_alphanumeric() || d == b'_' || fraction {
                        i += 1;
                    } else {
                        break;
                    }
                }
                Kind::Literal
            }
            b'(' | b'[' | b'{' => {
                i += 1;
                Kind::Open(c)
            }
            b')' | b']' | b'}' => {
                i += 1;
                Kind::Close(c)
            }
            // Unicode white space (U+00A0, U+2028, ...) separates tokens, as in the parser.
            c if c >= 0x80 && unicode_space(src, i).is_some() => {
                i += unicode_space(src, i).unwrap_or(1);
                continue;
            }
            c if c == b'_' || c.is_ascii_alphabetic() || c >= 0x80 => {
                i = ident_end(src, i + 1);
                let word = &src[start..i];
                // Literal prefixes: raw strings, byte and C strings, byte characters.
                match (word, src.get(i)) {
                    (b"r" | b"br" | b"cr", Some(b'"' | b'#')) => {
                        if let Some(end) = raw_string_end(src, i) {
                            i = end;
                            Kind::Literal
                        } else if word == b"r"
                            && src.get(i) == Some(&b'#')
                            && src
                                .get(i + 1)
                                .is_some_and(|&b| b == b'_' || b.is_ascii_alphabetic() || b >= 0x80)
                        {
                            // `r#ident`: a raw identifier.
                            i = ident_end(src, i + 1);
                            Kind::Ident
                        } else {
                            return None;
                        }
                    }
                    (b"b" | b"c", Some(b'"')) => {
                        i = string_end(src, i + 1)?;
                        Kind::Literal
                    }
                    (b"b", Some(b'\'')) => {
                        i = char_literal_end(src, i)?;
                        Kind::Literal
                    }
                    _ => Kind::Ident,
                }
            }
            _ => {
                i += 1;
                Kind::Punct(c)
            }
        };
        let word = &src[start..i];
        let ident = kind == Kind::Ident;
        tokens.push(Token {
            kind,
            start,
            end: i,
            word: if ident { word_of(word) } else { Word::Other },
            names_status_crate: ident && is_status_error_crate(word),
        });
    }
    Some(tokens)
}

/// The width of the character at `i` when it is white space to the parser (`char::is_whitespace`
/// and the two direction marks, as `proc-macro2` has it).
fn unicode_space(src: &[u8], i: usize) -> Option<usize> {
    let width = match src[i] {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => return None,
    };
    let c = std::str::from_utf8(src.get(i..i + width)?)
        .ok()?
        .chars()
        .next()?;
    (c.is_whitespace() || c == '\u{200e}' || c == '\u{200f}').then_some(width)
}

/// The end of the identifier whose characters go on at `i`: ASCII letters, digits and `_`, and
/// any other character that is not white space (the parser rejects the ones that are not
/// identifier characters; so does the full parse).
fn ident_end(src: &[u8], mut i: usize) -> usize {
    while i < src.len() {
        let b = src[i];
        let continues = b == b'_'
            || b.is_ascii_alphanumeric()
            || (b >= 0x80 && unicode_space(src, i).is_none());
        if !continues {
            break;
        }
        i += 1;
    }
    i
}

/// The index just past the end of the line comment starting at `i`.
fn memchr_newline(src: &[u8], i: usize) -> usize {
    src[i..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(src.len(), |p| i + p)
}

/// The index just past the (nested) block comment starting at `i`.
fn block_comment_end(src: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    while i + 1 < src.len() {
        match (src[i], src[i + 1]) {
            (b'/', b'*') => {
                depth += 1;
                i += 2;
            }
            (b'*', b'/') => {
                depth -= 1;
                i += 2;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// The index just past the closing quote of a string whose contents start at `i`.
fn string_end(src: &[u8], mut i: usize) -> Option<usize> {
    while i < src.len() {
        match src[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The end of a raw string whose `#`s or quote start at `i` (after `r`, `br` or `cr`).
fn raw_string_end(src: &[u8], mut i: usize) -> Option<usize> {
    let hashes = src[i..].iter().take_while(|&&b| b == b'#').count();
    i += hashes;
    if src.get(i) != Some(&b'"') {
        return None;
    }
    i += 1;
    while i < src.len() {
        let closes = src
            .get(i + 1..i + 1 + hashes)
            .is_some_and(|h| h.iter().all(|&b| b == b'#'));
        if src[i] == b'"' && closes {
            return Some(i + 1 + hashes);
        }
        i += 1;
    }
    None
}

/// The end of the character literal whose quote is at `i`, or `None` for a lifetime or label:
/// an escape, or one character followed by a quote, is a character (rustc's rule).
fn char_literal_end(src: &[u8], i: usize) -> Option<usize> {
    let rest = src.get(i + 1..)?;
    if rest.first() == Some(&b'\\') {
        // `'\n'`, `'\''`, `'\u{1F600}'`: the closing quote after the escape.
        let close = rest.get(2..)?.iter().position(|&b| b == b'\'')?;
        return Some(i + 1 + 2 + close + 1);
    }
    let first = *rest.first()?;
    let width = match first {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    };
    (rest.get(width) == Some(&b'\'') && first != b'\'').then_some(i + 1 + width + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blanked(src: &str) -> String {
        pruned(src, &Extensions::default()).unwrap_or_else(|| src.to_owned())
    }

    #[test]
    fn a_body_with_nothing_to_do_with_retries_is_blanked_and_positions_kept() {
        let src = "fn add(a: u32) -> u32 {\n    a + 1 // é\n}\nfn main() { loop { add(1); } }\n";
        let out = blanked(src);
        assert_eq!(out.len(), src.len());
        assert_eq!(out.lines().count(), src.lines().count());
        // `add` is named by `main`, which has a loop: both are kept.
        assert_eq!(out, src);

        let src = "fn add(a: u32) -> u32 {\n    a + 1 // é\n}\nfn main() { loop { sub(1); } }\n";
        let out = blanked(src);
        assert_eq!(out.len(), src.len());
        assert!(out.starts_with("fn add(a: u32) -> u32 {\n"));
        assert!(!out.contains("a + 1"));
        assert!(out.contains("fn main() { loop { sub(1); } }"));
    }

    #[test]
    fn bodies_with_a_reason_to_stay_are_kept() {
        for body in [
            "loop { op(); }",
            "while x {}",
            "for i in 0..3 {}",
            "f(); fn inner() {}",
            "use std::thread::sleep;",
            "let p = ExponentialBuilder::default();",
            "with_retry(|| op())",
            "WITH_BACKOFF",
            "tokio::time::timeout(d, op())",
            "ureq::get(url)",
            "again()",
            "this_fn()",
        ] {
            let src = format!("fn this_fn() {{ {body} }}\n");
            assert_eq!(blanked(&src), src, "{body}");
        }
    }

    #[test]
    fn words_inside_comments_strings_and_characters_do_not_count_and_do_not_confuse() {
        let src = "fn a() { let s = \"loop { retry }\"; let r = r#\"for \" x\"#; let c = '{'; \
                   let l = 'x: { break 'x 1 }; /* loop /* nested */ retry */ }\n";
        let out = blanked(src);
        assert!(out.starts_with("fn a() {"), "{out}");
        assert!(!out.contains("loop"), "{out}");
        assert_eq!(out.len(), src.len());
    }

    #[test]
    fn const_generic_blocks_are_not_taken_for_bodies() {
        let src = "fn f() -> Foo<{ N }> { 1 }\nfn g() where [(); { N }]: Sized { 2 }\n";
        let out = blanked(src);
        assert!(out.contains("Foo<{ N }> {"), "{out}");
        assert!(!out.contains("{ 1 }"), "{out}");
        assert!(!out.contains("{ 2 }"), "{out}");
    }

    #[test]
    fn methods_in_impl_and_trait_blocks_and_modules_are_pruned_too() {
        let src = "mod m { impl S { fn a(&self) -> u8 { 1 } } trait T { fn b(&self) -> u8 { 2 } \
                   fn c(&self); } }\n";
        let out = blanked(src);
        assert!(!out.contains("{ 1 }") && !out.contains("{ 2 }"), "{out}");
        assert!(out.contains("fn c(&self);"));
    }

    #[test]
    fn unsure_lexing_changes_nothing() {
        for src in [
            "fn a() { \"unterminated }",
            "fn a() { /* open }",
            "fn a() { ) }",
            "#!/bin/x\nfn a() {}",
            "fn a() { '\\",
            "fn a() { r##\"x\"# }",
        ] {
            assert_eq!(pruned(src, &Extensions::default()), None, "{src}");
        }
    }

    #[test]
    fn unicode_white_space_separates_words_as_in_the_parser() {
        // `for\u{a0}attempt`: a no-break space after `for` (found by the fuzzer).
        let src = "fn f() { for\u{a0}attempt in 0..3 { op(); } }\nfn g() -> u8 {\u{2003}1 }\n";
        let out = blanked(src);
        assert!(out.contains("for\u{a0}attempt"), "{out}");
        assert!(!out.contains('1'), "{out}");
    }

    #[test]
    fn constants_nobody_names_go_whole_with_their_doc_comments() {
        let src =
            "#![allow(dead_code)]\n/// Used.\nconst USED: u64 = 5;\n/// Unused.\n#[cfg(unix)]\n\
                   pub const UNUSED: u64 = 7;\nstatic mut COUNT: u32 = 0;\n\
                   fn main() { loop { sleep(USED); } }\n";
        let out = blanked(src);
        // A kept constant keeps everything but its doc comment (docs are blanked anywhere).
        assert!(out.starts_with("#![allow(dead_code)]\n         \nconst USED: u64 = 5;\n"));
        for gone in ["Unused", "#[cfg(unix)]", "UNUSED", "COUNT"] {
            assert!(!out.contains(gone), "{gone}: {out}");
        }
        assert!(out.contains("fn main() { loop { sleep(USED); } }"));
        assert!(syn::parse_file(&out).is_ok());
    }

    #[test]
    fn a_where_clause_ending_in_a_comma_is_followed_by_the_block() {
        // The struct's body is kept (its fields are read); the function named by kept code is
        // kept, though the struct's `where` clause ends in a comma.
        let src = "struct P<S>\nwhere\n    S: Pool + 'static,\n{\n    pool: S,\n}\n\
                   impl<S> P<S>\nwhere\n    S: Pool,\n{\n    fn run(&self) { loop { make(); } }\n}\n\
                   fn make() -> u32 { let answer = 42; answer }\n\
                   fn g<const N: usize>() -> Foo<A, { N }> where Bar<{ N }>: Sized { 7 }\n";
        let out = blanked(src);
        assert!(out.contains("pool: S"), "{out}");
        assert!(out.contains("let answer = 42; answer"), "{out}");
        assert!(
            out.contains("Foo<A, { N }> where Bar<{ N }>: Sized {"),
            "{out}"
        );
        assert!(syn::parse_file(&out).is_ok(), "{out}");
    }

    #[test]
    fn enum_and_extern_bodies_are_blanked_and_structs_kept_when_their_methods_are() {
        let src = "struct S { a: u32 }\nenum E { A = 1, B }\nextern \"C\" { fn f(); }\n\
                   union! { fn g() { let x = 1; } }\ncfg_if! { if #[cfg(x)] { fn h() {} } }\n\
                   struct T { agent: ureq::Agent }\n\
                   struct W<C> { store: C }\nimpl<C> Tr for W<C> where C: Sized { fn go(&self) { loop {} } }\n";
        let out = blanked(src);
        // `S` has no method analysed: its fields go; `W`'s `go` holds a loop: its fields stay.
        assert!(
            out.contains("struct S {") && !out.contains("a: u32"),
            "{out}"
        );
        assert!(out.contains("store: C"), "{out}");
        assert!(!out.contains("A = 1") && !out.contains("fn f();"), "{out}");
        assert!(out.contains("union! { fn g() { let x = 1; } }"), "{out}");
        assert!(
            out.contains("cfg_if! { if #[cfg(x)] { fn h() {} } }"),
            "{out}"
        );
        assert!(out.contains("agent: ureq::Agent"), "{out}");
        assert!(syn::parse_file(&out).is_ok(), "{out}");
    }

    #[test]
    fn the_names_of_consts_blanked_whole_are_still_defined() {
        let src = "const UNUSED: *const u8 = 0 as *const u8;\n\
                   static TABLE: &'static [u8] = { static INNER: u8 = 1; &[INNER] };\n\
                   fn main() { loop { work(); } }\n";
        let tokens = lex(src.as_bytes()).unwrap();
        let (_, names) = parse_lexed(src, Some(&tokens), &Extensions::default()).unwrap();
        assert_eq!(names, ["INNER", "TABLE", "UNUSED"]);
    }

    #[test]
    fn a_retry_attribute_keeps_its_function() {
        for attr in [
            "#[retryable(attempts = 3)]",
            "#[backon::retry]",
            "#[retry(stop = x)]",
        ] {
            let src = format!("{attr}\nfn send() -> u8 {{ 1 }}\n");
            assert_eq!(blanked(&src), src, "{attr}");
        }
    }

    #[test]
    fn qualified_functions_are_functions() {
        let src = "const fn a() -> u8 { 1 }\nconst unsafe fn b() -> u8 { 2 }\n\
                   const extern \"C\" fn c() -> u8 { 3 }\npub(crate) async fn d() -> u8 { 4 }\n";
        let out = blanked(src);
        for (name, value) in [("a", "1"), ("b", "2"), ("c", "3"), ("d", "4")] {
            assert!(
                out.contains(&format!("fn {name}() -> u8 {{")),
                "{name}: {out}"
            );
            assert!(!out.contains(&format!("{{ {value} }}")), "{name}: {out}");
        }
    }

    #[test]
    fn doc_comments_are_blanked_and_other_comments_and_strings_are_not() {
        let src = "//! crate docs\n/// outer docs\n//// not docs\n/** block docs */\n/*! inner */\n\
                   /*** not docs */ /**/ // plain\nfn main() { loop { let s = \"/// in a string\"; } }\n";
        let out = blanked(src);
        assert_eq!(out.len(), src.len());
        assert_eq!(out.lines().count(), src.lines().count());
        for gone in ["crate docs", "outer docs", "block docs", "inner"] {
            assert!(!out.contains(gone), "{gone}: {out}");
        }
        for kept in [
            "//// not docs",
            "/*** not docs */",
            "/**/",
            "// plain",
            "\"/// in a string\"",
        ] {
            assert!(out.contains(kept), "{kept}: {out}");
        }
        // Docs alone are reason enough to blank: the text comes back even with every body kept.
        assert_ne!(out, src);
        assert!(syn::parse_file(&out).is_ok(), "{out}");
    }

    #[test]
    fn doc_comments_in_a_macros_arguments_are_tokens_it_is_given_and_stay() {
        // Found by the random-input driver: blanked, the `select!` read as a clean race; whole,
        // its arguments do not parse as one, and the loop's findings differed.
        let src = "/// docs\nasync fn f(stop: Token) {\n    loop {\n        tokio::select! {\n            \
                   () = stop.cancelled() => break,\n//! inside the macro\n        }\n    }\n}\n\
                   macro_rules! m {\n    () => {\n        /// also inside\n    };\n}\n";
        let out = blanked(src);
        assert_eq!(out.len(), src.len());
        assert!(!out.contains("/// docs"), "{out}");
        assert!(out.contains("//! inside the macro"), "{out}");
        assert!(out.contains("/// also inside"), "{out}");
    }

    #[test]
    fn a_loop_in_test_code_does_not_keep_its_body_but_a_retry_word_or_an_item_does() {
        let src = "#[test]\nfn t() { for i in 0..3 { check(i); } }\n\
                   #[tokio::test]\nasync fn u() { loop { if ready() { break; } } }\n\
                   #[cfg(test)]\nmod tests { fn helper() { while waiting() {} } \
                   impl S { fn m(&self) { loop {} } } }\n\
                   #[cfg(not(test))]\nfn real() { loop { op(); } }\n\
                   #[test]\nfn r() { let p = with_retry(|| op()); }\n\
                   #[test]\nfn n() { fn inner() {} for _ in 0..2 {} }\n";
        let out = blanked(src);
        for gone in ["check(i)", "ready()", "waiting()", "loop {} "] {
            assert!(!out.contains(gone), "{gone}: {out}");
        }
        for kept in [
            "loop { op(); }",
            "with_retry(|| op())",
            "fn inner() {} for _ in 0..2 {}",
        ] {
            assert!(out.contains(kept), "{kept}: {out}");
        }
    }

    #[test]
    fn a_body_that_calls_a_function_calling_itself_stays() {
        // Found by the random-input driver: blanked, the caller's operation (which made the
        // value the recursion handles) was not seen, and the recursion read as a retry.
        let src = "fn settle(r: R) -> T { match r { Ok(t) => t, Err(_) => settle(make()) } }\n\
                   fn start() -> T { let first = other(); settle(first) }\n\
                   fn unrelated() -> u8 { let x = compute(); x }\n";
        let out = blanked(src);
        assert!(out.contains("let first = other(); settle(first)"), "{out}");
        assert!(!out.contains("compute()"), "{out}");
    }
}

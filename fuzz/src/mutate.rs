//! Structure-aware inputs: the fuzzer's bytes are read as a program of source mutations applied
//! to a seed file, so that most inputs are Rust the parser accepts and the analysis runs on.
//!
//! Mutations work on lines and tokens of the text rather than on a syntax tree, so that what
//! comes out keeps the shape of real files (line breaks, comments, positions) and may also stop
//! parsing; the checker must cope with both.

use std::fmt::Write as _;

use arbitrary::Unstructured;
use retry_audit::checks::Settings;
use retry_audit::{Level, Rule};

use crate::Seed;

/// Names the rules look at, swapped in for identifiers.
const WORDS: &[&str] = &[
    "loop",
    "sleep",
    "thread",
    "tokio",
    "time",
    "Duration",
    "from_secs",
    "from_millis",
    "from_nanos",
    "retry",
    "retries",
    "attempt",
    "attempts",
    "max_attempts",
    "backoff",
    "delay",
    "min",
    "max",
    "pow",
    "saturating_mul",
    "checked_mul",
    "mul_f64",
    "random",
    "gen_range",
    "thread_rng",
    "fastrand",
    "Uuid",
    "new_v4",
    "status",
    "is_client_error",
    "is_server_error",
    "StatusCode",
    "TOO_MANY_REQUESTS",
    "NOT_FOUND",
    "Ok",
    "Err",
    "Some",
    "None",
    "break",
    "continue",
    "return",
    "await",
    "async",
    "move",
    "self",
    "Self",
    "idempotency_key",
    "retry_after",
    "Instant",
    "elapsed",
    "deadline",
    "timeout",
    "retryable",
    "backon",
    "ExponentialBuilder",
    "with_jitter",
    "RetryPolicy",
    "send",
    "post",
    "put",
    "execute",
    "réessai",
    "повтор",
    "r#loop",
    "_",
];

/// Values swapped in for integer literals.
const NUMBERS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "5",
    "10",
    "100",
    "429",
    "500",
    "503",
    "1_000",
    "4_294_967_295",
    "18446744073709551615",
    "340282366920938463463374607431768211455",
    "0u8",
    "1e9",
    "0x7fff",
    "2.5",
    "-1",
];

/// Where a snippet may go: among statements (inside a body), among items, or anywhere.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Stmt,
    Item,
    Any,
}

/// Lines inserted on their own.
const SNIPPETS: &[(&str, Place)] = &[
    ("std::thread::sleep(std::time::Duration::from_secs(1));", Place::Stmt),
    ("tokio::time::sleep(Duration::from_millis(100)).await;", Place::Stmt),
    ("attempt += 1;", Place::Stmt),
    ("if attempt >= 5 { break; }", Place::Stmt),
    ("continue;", Place::Stmt),
    ("return Err(e);", Place::Stmt),
    ("let key = uuid::Uuid::new_v4();", Place::Stmt),
    ("delay = (delay * 2).min(Duration::from_secs(30));", Place::Stmt),
    ("let delay = Duration::from_millis(rand::random::<u64>() % 1000);", Place::Stmt),
    ("if resp.status().is_client_error() { continue; }", Place::Stmt),
    ("if let Some(after) = resp.headers().get(\"retry-after\") { sleep(after).await; }", Place::Stmt),
    ("loop { match op() { Ok(v) => return v, Err(_) => std::thread::sleep(Duration::from_secs(1)) } }", Place::Stmt),
    ("for attempt in 0.. { let _ = attempt; }", Place::Stmt),
    ("while let Err(e) = op() { eprintln!(\"{e}\"); }", Place::Stmt),
    ("let f = || loop { if go() { break 1; } };", Place::Stmt),
    ("let _ = \"é🦀\\u{0}\\\"\";", Place::Stmt),
    ("let _ = r#\"loop { sleep(1) }\"#;", Place::Stmt),
    ("m!();", Place::Any),
    ("/* loop { std::thread::sleep(d) } */", Place::Any),
    ("// retry-audit: allow(RA001)", Place::Any),
    ("// retry-audit: allow(unbounded-retry, fixed-delay)", Place::Any),
    ("// retry-audit: allow(RA999)", Place::Any),
    ("// retry-audit: allow(", Place::Any),
    ("// retry-audit: allow-file(RA002)", Place::Any),
    ("fn again() -> u32 { again() }", Place::Any),
    ("macro_rules! m { () => { loop {} } }", Place::Any),
    ("#[retryable(attempts = 3)] fn wrapped() -> Result<(), E> { op() }", Place::Item),
    ("async fn poll() { loop { if let Ok(v) = get().await { break v; } sleep(D).await; } }", Place::Item),
];

/// Openers (and their closers) wrapped around statements.
const WRAPPERS: &[(&str, &str)] = &[
    ("loop {", "}"),
    ("for _ in 0..3 {", "}"),
    ("while retry {", "}"),
    ("{", "}"),
    ("let _ = || {", "};"),
    ("let _ = async move {", "};"),
    ("if true {", "}"),
    ("match op() { Ok(_) => {}, Err(_) => {", "} }"),
    ("unsafe {", "}"),
    ("fn wrapper() {", "}"),
];

/// A mutated file and the settings to check it with.
#[derive(Debug)]
pub struct Mutant {
    pub text: String,
    pub settings: Settings,
    /// The seed it came from (for reports).
    pub seed: &'static str,
}

impl Mutant {
    /// Reads the program `data`: which seed, which rule levels, then mutations until the bytes
    /// run out (at most 12). Parses with `syn` on the caller's stack: call it on a big one.
    #[must_use]
    pub fn build(data: &[u8], seeds: &'static [Seed]) -> Mutant {
        let mut u = Unstructured::new(data);
        let seed = &seeds[usize::from(u.arbitrary::<u8>().unwrap_or(0)) % seeds.len()];
        let settings = settings(&mut u);
        // Most programs keep only the mutations after which the file still parses, so that
        // the analysis runs; one in eight keeps whatever comes out.
        let keep_broken = u.ratio(1u8, 8u8).unwrap_or(false);
        let mut lines: Vec<String> = seed.text.split_inclusive('\n').map(str::to_owned).collect();
        for _ in 0..12 {
            if u.is_empty() {
                break;
            }
            let before = lines.clone();
            if apply(&mut u, &mut lines, seeds).is_err() {
                break;
            }
            if !keep_broken && lines != before && syn::parse_file(&lines.concat()).is_err() {
                lines = before;
            }
        }
        Mutant {
            text: lines.concat(),
            settings,
            seed: &seed.name,
        }
    }
}

/// Rule levels: each rule at allow, warning or error (two bits each), `--deny warnings` maybe.
fn settings(u: &mut Unstructured<'_>) -> Settings {
    let mut settings = crate::all_rules();
    let bits = u.arbitrary::<u32>().unwrap_or(0);
    for (i, &rule) in Rule::ALL.iter().enumerate() {
        let level = match (bits >> ((2 * i) % 30)) & 3 {
            0 => continue,
            1 => Level::Allow,
            2 => Level::Warning,
            _ => Level::Error,
        };
        settings.set_level(rule, level);
    }
    settings.warnings_as_errors = bits >> 31 == 1;
    settings
}

fn pick<'a, T>(u: &mut Unstructured<'_>, items: &'a [T]) -> arbitrary::Result<&'a T> {
    u.choose(items)
}

/// A line index in `0..=len` (an insertion point) from the input.
fn at(u: &mut Unstructured<'_>, len: usize) -> arbitrary::Result<usize> {
    u.int_in_range(0..=len)
}

/// The shape of the file, line by line: the bracket depth before each line (`n + 1` entries),
/// strings, characters and comments skipped roughly.
struct Shape {
    depth: Vec<i64>,
}

impl Shape {
    fn of(lines: &[String]) -> Shape {
        let mut lexer = Lexer::default();
        let mut depth = Vec::with_capacity(lines.len() + 1);
        depth.push(0);
        for line in lines {
            lexer.line(line);
            depth.push(lexer.depth);
        }
        Shape { depth }
    }

    /// Whether a line can start at `i` among statements (`inside`: in a body) or items: the
    /// depth fits and the line before ends a statement, an item or opens a block.
    fn boundary(&self, lines: &[String], i: usize, inside: bool) -> bool {
        let depth_ok = if inside {
            self.depth[i] >= 1
        } else {
            self.depth[i] == 0
        };
        depth_ok
            && (i == 0
                || lines[i - 1].trim_end().ends_with([';', '{', '}'])
                || lines[i - 1].trim().is_empty()
                || lines[i - 1].trim_start().starts_with("//"))
    }

    /// Ends `end > start` such that lines `start..end` are balanced (closing what they open and
    /// nothing before), at most `limit` lines long.
    fn balanced_ends(&self, start: usize, limit: usize) -> Vec<usize> {
        let base = self.depth[start];
        let mut ends = Vec::new();
        for end in start + 1..self.depth.len().min(start + limit + 1) {
            if self.depth[end] < base {
                break;
            }
            if self.depth[end] == base {
                ends.push(end);
            }
        }
        ends
    }
}

/// A rough Rust lexer that only tracks bracket depth across lines.
#[derive(Default)]
struct Lexer {
    depth: i64,
    block_comment: usize,
    in_string: bool,
    /// Inside a raw string closed by `"` and this many `#`.
    raw: Option<usize>,
}

impl Lexer {
    fn line(&mut self, line: &str) {
        let b = line.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if self.block_comment > 0 {
                if b[i..].starts_with(b"*/") {
                    self.block_comment -= 1;
                    i += 2;
                } else if b[i..].starts_with(b"/*") {
                    self.block_comment += 1;
                    i += 2;
                } else {
                    i += 1;
                }
                continue;
            }
            if let Some(hashes) = self.raw {
                if b[i] == b'"' && b[i + 1..].iter().take_while(|&&c| c == b'#').count() >= hashes {
                    self.raw = None;
                    i += 1 + hashes;
                } else {
                    i += 1;
                }
                continue;
            }
            if self.in_string {
                match b[i] {
                    b'\\' => i += 2,
                    b'"' => {
                        self.in_string = false;
                        i += 1;
                    }
                    _ => i += 1,
                }
                continue;
            }
            match b[i] {
                b'/' if b.get(i + 1) == Some(&b'/') => return,
                b'/' if b.get(i + 1) == Some(&b'*') => {
                    self.block_comment = 1;
                    i += 2;
                }
                b'r' if matches!(b.get(i + 1), Some(b'"' | b'#'))
                    && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
                {
                    let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                    if b.get(i + 1 + hashes) == Some(&b'"') {
                        self.raw = Some(hashes);
                        i += 2 + hashes;
                    } else {
                        i += 1;
                    }
                }
                b'"' => {
                    self.in_string = true;
                    i += 1;
                }
                b'\'' => {
                    // A character literal ('x', '\n', '\u{..}'), or a lifetime.
                    if b.get(i + 1) == Some(&b'\\') {
                        let close = b[i + 2..].iter().position(|&c| c == b'\'');
                        i += close.map_or(1, |c| c + 3);
                    } else {
                        let ch_len = line[i + 1..].chars().next().map_or(0, char::len_utf8);
                        if b.get(i + 1 + ch_len) == Some(&b'\'') {
                            i += 2 + ch_len;
                        } else {
                            i += 1;
                        }
                    }
                }
                b'(' | b'[' | b'{' => {
                    self.depth += 1;
                    i += 1;
                }
                b')' | b']' | b'}' => {
                    self.depth -= 1;
                    i += 1;
                }
                _ => i += 1,
            }
        }
    }
}

/// A balanced range of lines `start..end` starting at a boundary (inside a body or not), if the
/// input finds one.
fn balanced_range(
    u: &mut Unstructured<'_>,
    lines: &[String],
    shape: &Shape,
    inside: bool,
    limit: usize,
) -> arbitrary::Result<Option<(usize, usize)>> {
    let starts: Vec<usize> = (0..lines.len())
        .filter(|&i| shape.boundary(lines, i, inside))
        .collect();
    if starts.is_empty() {
        return Ok(None);
    }
    let start = starts[u.choose_index(starts.len())?];
    let ends = shape.balanced_ends(start, limit);
    if ends.is_empty() {
        return Ok(None);
    }
    Ok(Some((start, ends[u.choose_index(ends.len())?])))
}

/// An insertion point among statements (`inside`) or items, if there is one.
fn boundary(
    u: &mut Unstructured<'_>,
    lines: &[String],
    shape: &Shape,
    inside: bool,
) -> arbitrary::Result<Option<usize>> {
    let points: Vec<usize> = (0..=lines.len())
        .filter(|&i| shape.boundary(lines, i, inside))
        .collect();
    if points.is_empty() {
        return Ok(None);
    }
    Ok(Some(points[u.choose_index(points.len())?]))
}

/// One mutation (a long `match`: one arm per kind). Most keep the file well-formed (balanced ranges moved to places of the same
/// kind); a few do not (lines swapped, the file cut short), and the parser must say why.
#[allow(clippy::too_many_lines)]
fn apply(
    u: &mut Unstructured<'_>,
    lines: &mut Vec<String>,
    seeds: &'static [Seed],
) -> arbitrary::Result<()> {
    let n = lines.len();
    let shape = Shape::of(lines);
    let inside = u.ratio(3u8, 4u8)?;
    match u.int_in_range(0u8..=17)? {
        0 => {
            if let Some((start, end)) = balanced_range(u, lines, &shape, inside, 40)? {
                lines.drain(start..end);
            }
        }
        1 => {
            if let Some((start, end)) = balanced_range(u, lines, &shape, inside, 40)? {
                let copy: Vec<String> = lines[start..end].to_vec();
                let to = if u.arbitrary()? {
                    end
                } else {
                    boundary(u, lines, &shape, inside)?.unwrap_or(end)
                };
                lines.splice(to..to, copy);
            }
        }
        2 if n > 1 => {
            let a = at(u, n - 1)?;
            let b = at(u, n - 1)?;
            lines.swap(a, b);
        }
        3 => {
            let donor = pick(u, seeds)?;
            let donor: Vec<String> = donor
                .text
                .split_inclusive('\n')
                .map(str::to_owned)
                .collect();
            let donor_shape = Shape::of(&donor);
            if let (Some((start, end)), Some(to)) = (
                balanced_range(u, &donor, &donor_shape, inside, 60)?,
                boundary(u, lines, &shape, inside)?,
            ) {
                lines.splice(to..to, donor[start..end].iter().cloned());
            }
        }
        4 => replace_token(u, lines, Token::Number, NUMBERS)?,
        5 => replace_token(u, lines, Token::Ident, WORDS)?,
        6 => {
            let &(snippet, place) = pick(u, SNIPPETS)?;
            let inside = match place {
                Place::Stmt => true,
                Place::Item => false,
                Place::Any => inside,
            };
            let to = boundary(u, lines, &shape, inside)?.unwrap_or(n);
            lines.insert(to, format!("{snippet}\n"));
        }
        7 => {
            let &(open, close) = pick(u, WRAPPERS)?;
            if let Some((start, end)) = balanced_range(u, lines, &shape, true, 80)? {
                lines.insert(end, format!("{close}\n"));
                lines.insert(start, format!("{open}\n"));
            }
        }
        8 => {
            // Deep nesting around statements: blocks, closures or loops, near and past the
            // engine's depth limit.
            let depth = if u.ratio(1u8, 8u8)? {
                usize::from(u.arbitrary::<u8>()?) * 12 + 1
            } else {
                usize::from(u.arbitrary::<u8>()? % 64) + 1
            };
            let (open, close) = match u.int_in_range(0u8..=2)? {
                0 => ("{", "}"),
                1 => ("(|| {", "})();"),
                _ => ("loop {", "}"),
            };
            if let Some((start, end)) = balanced_range(u, lines, &shape, true, 20)? {
                lines.insert(end, format!("{}\n", close.repeat(depth)));
                lines.insert(start, format!("{}\n", open.repeat(depth)));
            }
        }
        9 if n > 0 => {
            // A trailing comment: a suppression, or one that mentions a rule in passing.
            let line = at(u, n - 1)?;
            let comment = pick(
                u,
                &[
                    " // retry-audit: allow(RA001)",
                    " // retry-audit: allow(RA002, missing-jitter)",
                    " // retry-audit: allow(RA004) because the server says so",
                    " // retry-audit:allow()",
                    " /* retry-audit: allow(RA005) */",
                    " //~ RA001",
                ],
            )?;
            let text = &mut lines[line];
            let body_end = text.trim_end_matches(['\n', '\r']).len();
            text.insert_str(body_end, comment);
        }
        10 => {
            for line in lines.iter_mut() {
                if line.ends_with('\n') && !line.ends_with("\r\n") {
                    line.insert(line.len() - 1, '\r');
                }
            }
        }
        11 => {
            if let Some(first) = lines.first_mut() {
                if !first.starts_with('\u{feff}') {
                    first.insert(0, '\u{feff}');
                }
            } else {
                lines.push("\u{feff}".to_owned());
            }
        }
        12 if n > 0 => {
            // Odd characters where whitespace is: tabs, non-breaking and wide spaces, a
            // zero-width space, a lone carriage return.
            let line = at(u, n - 1)?;
            let what = *pick(
                u,
                &["\t", "\u{a0}", "\u{3000}", "\r", "\u{200b}", "\u{2028}"],
            )?;
            let text = &mut lines[line];
            let spaces: Vec<usize> = text.match_indices(' ').map(|(i, _)| i).collect();
            if !spaces.is_empty() {
                let i = spaces[u.choose_index(spaces.len())?];
                text.replace_range(i..=i, what);
            }
        }
        13 if u.ratio(1u8, 4u8)? => {
            // Cut the file short (mid-token, mid-string, mid-comment).
            let text = lines.concat();
            let mut cut = u.int_in_range(0..=text.len())?;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            *lines = text[..cut]
                .split_inclusive('\n')
                .map(str::to_owned)
                .collect();
        }
        14 if n > 0 => {
            // Non-ASCII text in an identifier, a string or a comment.
            let line = at(u, n - 1)?;
            let what = *pick(u, &["é", "повтор", "重试", "🦀", "e\u{301}", "\u{1F600}"])?;
            let text = &mut lines[line];
            let idents = tokens(text, Token::Ident);
            if !idents.is_empty() {
                let (_, end) = idents[u.choose_index(idents.len())?];
                text.insert_str(end, what);
            }
        }
        15 => {
            // Generated code of the k8s-openapi and crypto-bigint kind: constants and `let`s
            // whose value names them again (or each other), named like the file's own names
            // so that the analysis follows them.
            let name = name_from(u, lines)?;
            let inside = u.ratio(1u8, 3u8)?;
            let text = if inside {
                self_naming_statement(u, &name)?
            } else {
                self_naming_items(u, &name)?
            };
            let to = boundary(u, lines, &shape, inside)?.unwrap_or(n);
            lines.insert(to, text);
        }
        16 => {
            // A long chain without brackets around it: method calls, operators, `else if`,
            // `?`, nested generics. Usually short, sometimes near or past the syntax-depth
            // limit.
            let length = chain_length(u)?;
            let name = name_from(u, lines)?;
            let text = chain(u, &name, length)?;
            let to = boundary(u, lines, &shape, true)?.unwrap_or(n);
            lines.insert(to, text);
        }
        17 => {
            // A large `match` tree: many arms (statuses, errors, ranges, or-patterns), some
            // with a `match` inside, around a retry decision.
            let arms = chain_length(u)?;
            let depth = usize::from(u.arbitrary::<u8>()? % 6);
            let text = match_tree(u, arms, depth)?;
            let to = boundary(u, lines, &shape, true)?.unwrap_or(n);
            lines.insert(to, text);
        }
        _ => {}
    }
    Ok(())
}

/// A name to build generated code around: one of the file's identifiers (so that its code
/// refers to it), or a word the rules read.
fn name_from(u: &mut Unstructured<'_>, lines: &[String]) -> arbitrary::Result<String> {
    if u.ratio(2u8, 3u8)? && !lines.is_empty() {
        let line = &lines[at(u, lines.len() - 1)?];
        let idents = tokens(line, Token::Ident);
        if !idents.is_empty() {
            let (start, end) = idents[u.choose_index(idents.len())?];
            return Ok(line[start..end].to_owned());
        }
    }
    Ok((*pick(
        u,
        &[
            "MAX_ATTEMPTS",
            "RETRY_ON",
            "DELAY",
            "TOO_MANY_REQUESTS",
            "BACKOFF",
            "LIMBS",
            "KIND",
            "attempts",
            "delay",
            "codes",
        ],
    )?)
    .to_owned())
}

/// How long a generated chain or list is: short mostly, now and then thousands.
fn chain_length(u: &mut Unstructured<'_>) -> arbitrary::Result<usize> {
    Ok(match u.int_in_range(0u8..=7)? {
        0 => usize::from(u.arbitrary::<u16>()? % 12_000) + 1,
        1 | 2 => usize::from(u.arbitrary::<u8>()?) * 4 + 1,
        _ => usize::from(u.arbitrary::<u8>()? % 16) + 1,
    })
}

/// Items whose values name themselves: an impl constant that is the type parameter's (or the
/// const generic parameter) of the same name, a trait constant that is the inherent one, and a
/// cycle of constants.
fn self_naming_items(u: &mut Unstructured<'_>, name: &str) -> arbitrary::Result<String> {
    let ty = *pick(
        u,
        &["u16", "u32", "usize", "&'static str", "&[u16]", "Duration"],
    )?;
    Ok(match u.int_in_range(0u8..=4)? {
        0 => format!(
            "impl<T: Resource> Resource for List<T> {{ const {name}: {ty} = <T as Resource>::{name}; }}\n"
        ),
        1 => format!(
            "impl<const {name}: usize> Uint<{name}> {{ pub const {name}: usize = {name}; \
             pub fn f(&self) -> usize {{ let mut i = 0; while i < {name} {{ i += 1; }} i }} }}\n"
        ),
        2 => format!("impl Bounded for Uint {{ const {name}: {ty} = Self::{name}; }}\n"),
        3 => {
            // A cycle through `k` constants.
            let k = usize::from(u.arbitrary::<u8>()? % 5) + 1;
            let mut text = String::new();
            for i in 0..k {
                let _ = writeln!(text, "const {name}{i}: {ty} = {name}{};", (i + 1) % k);
            }
            text
        }
        _ => format!("static {name}: {ty} = {name};\n"),
    })
}

/// A statement whose value names what it binds, or a binding of the file's name to itself.
fn self_naming_statement(u: &mut Unstructured<'_>, name: &str) -> arbitrary::Result<String> {
    Ok(match u.int_in_range(0u8..=3)? {
        0 => format!("let {name} = {name}.to_vec();\n"),
        1 => format!("let {name} = {name} + 1;\n"),
        2 => format!("let {name} = if {name}.is_empty() {{ {name} }} else {{ {name}.clone() }};\n"),
        _ => format!("let mut {name} = {name}; {name} = {name} * 2;\n"),
    })
}

/// A statement holding a chain of `length` links built on `name`.
fn chain(u: &mut Unstructured<'_>, name: &str, length: usize) -> arbitrary::Result<String> {
    let link = |u: &mut Unstructured<'_>| -> arbitrary::Result<&'static str> {
        Ok(*pick(
            u,
            &[
                ".retry()",
                ".with_jitter()",
                ".status()",
                ".unwrap()",
                ".clone()",
                ".map(|x| x)",
                ".await",
                "?",
            ],
        )?)
    };
    Ok(match u.int_in_range(0u8..=4)? {
        0 => {
            let mut text = format!("let _ = {name}");
            for _ in 0..length {
                text.push_str(link(u)?);
            }
            text + ";\n"
        }
        1 => {
            let op = *pick(u, &[" + ", " * ", " && ", " || ", " | ", " == "])?;
            format!("let _ = {};\n", vec![name; length + 1].join(op))
        }
        2 => format!(
            "if {name} == 1 {{ 1 }} {}else {{ 0 }};\n",
            format!("else if {name} == 2 {{ 2 }} ").repeat(length)
        ),
        3 => format!(
            "let _: {}u8{} = {name};\n",
            "Option<".repeat(length),
            ">".repeat(length)
        ),
        _ => format!(
            "let _ = {}{name}{};\n",
            "f(".repeat(length),
            ")".repeat(length)
        ),
    })
}

/// A `match` on a call's result with `arms` arms, `depth` of them holding a `match` in turn.
fn match_tree(u: &mut Unstructured<'_>, arms: usize, depth: usize) -> arbitrary::Result<String> {
    let mut text = String::from("match op() {\n");
    for i in 0..arms {
        let pattern = match u.int_in_range(0u8..=4)? {
            0 => format!("Ok(r) if r.status() == {}", 100 + i % 500),
            1 => format!("Err(e) if e.status() == Some({})", 400 + i % 200),
            2 => format!("Ok({i})"),
            3 => format!("Err(Error::Code({}..={}))", i, i + 1),
            _ => format!("Ok({i}) | Ok({})", i + arms),
        };
        let body = if i < depth {
            match_tree(u, 2, 0)?
        } else {
            (*pick(
                u,
                &[
                    "continue",
                    "break",
                    "return Err(e)",
                    "std::thread::sleep(Duration::from_secs(1))",
                    "{}",
                ],
            )?)
            .to_owned()
        };
        let _ = writeln!(text, "    {pattern} => {{ {body} }}");
    }
    text.push_str("    _ => {}\n}\n");
    Ok(text)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Token {
    Number,
    Ident,
}

/// Replaces the k-th number or identifier of a line by one of `values`.
fn replace_token(
    u: &mut Unstructured<'_>,
    lines: &mut [String],
    kind: Token,
    values: &[&str],
) -> arbitrary::Result<()> {
    if lines.is_empty() {
        return Ok(());
    }
    let line = at(u, lines.len() - 1)?;
    let tokens = tokens(&lines[line], kind);
    if tokens.is_empty() {
        return Ok(());
    }
    let (start, end) = tokens[u.choose_index(tokens.len())?];
    let value = pick(u, values)?;
    lines[line].replace_range(start..end, value);
    Ok(())
}

/// Byte ranges of the numbers (digit runs not inside a word) or identifiers of a line.
fn tokens(line: &str, kind: Token) -> Vec<(usize, usize)> {
    let bytes = line.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !word(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && word(bytes[i]) {
            i += 1;
        }
        let digit = bytes[start].is_ascii_digit();
        if digit == (kind == Token::Number) {
            out.push((start, i));
        }
    }
    out
}

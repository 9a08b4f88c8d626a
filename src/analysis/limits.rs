//! What the analysis of one file may cost: how deep its recursive walks go, how much stack they
//! use, how much work they do in all, and how deeply the syntax it hands to the parser nests.
//!
//! One file must never end a scan. Two kinds of recursion could overflow the stack:
//!
//! - **The parser's and the syntax tree's own** (`syn` parses, visits and frees a tree by
//!   recursion). [`syntax_depth`] bounds the depth of the tree a file can produce from its
//!   tokens, brackets and the chains written without them (`a + b + ..`, `x.f().g()..`,
//!   `Option<Option<..>>`, `else if ..`); a file beyond [`MAX_SYNTAX_DEPTH`] is not parsed.
//! - **The analysis's own walks**, which also follow names (a constant to its value, a call to
//!   the function's body) and can meet a cycle (`const LIMBS: usize = LIMBS;`). Every recursive
//!   function of the analysis calls [`enter`] first; `tests/recursion_guard.rs` reads the
//!   analysis's source and fails when a cycle of its call graph does not pass through one.
//!   [`enter`] counts the nesting ([`MAX_DEPTH`]) and the total number of entries (the work,
//!   proportional to the file's size: [`WORK_PER_BYTE`]), and measures the stack used since
//!   [`run`] began (at most half the thread's).
//!
//! Past a limit the file is abandoned: [`run`] returns [`Exhausted`], the file is reported as
//! "skipped: too complex to analyse" and the scan goes on. The walk is left the way rustc's
//! `FatalError::raise` leaves a compilation: `std::panic::resume_unwind` (which runs no panic
//! hook, so nothing is printed) through the walks' frames, each guard's destructor restoring the
//! depth, to the `catch_unwind` in [`run`].

use std::cell::Cell;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};

/// Stack size of the threads the analysis runs on (the scan's workers, the language server's
/// and the fixer's analysis threads; [`run`] moves to such a thread when called elsewhere).
pub const STACK_SIZE: usize = 256 * 1024 * 1024;

/// Nested calls of the analysis's recursive functions beyond which a file is too complex.
pub const MAX_DEPTH: u32 = 20_000;

/// Work a file's analysis may do, per byte of the file (plus [`BASE_WORK`]): one unit per entry
/// into a recursive function of the analysis ([`enter`]) and per byte of code it writes out as
/// text ([`spend`]). Real files stay far below it (see CONTRIBUTING.md, "Fuzzing and
/// hardening"); a file beyond it is one whose analysis grows faster than its size.
pub const WORK_PER_BYTE: u64 = 1_000;

/// The work every file may do, however small.
pub const BASE_WORK: u64 = 1_000_000;

/// Syntax depth ([`syntax_depth`]) beyond which a file is not parsed. Measured: 45 shapes of
/// chains and nesting (operators, methods, fields, indexes, `?`, casts, prefixes, closures,
/// blocks, `if`, `match`, `else if`, labels, struct literals, generic, reference, pointer, slice,
/// function and `impl Trait` types, attributes, modules, patterns) at this depth are parsed and
/// analysed within [`STACK_SIZE`] by a debug build, and at 4 times it by a release build; the
/// deepest of 17 098 real files measures 4 136.
pub const MAX_SYNTAX_DEPTH: usize = 10_000;

/// The longest function body, in lines, read for the facts of the sites that call it (see
/// `FileScope::function_via`): each call reads it again, so a longer one is unknown to its
/// callers rather than read once per call.
pub const MAX_FOLLOWED_LINES: usize = 2_000;

/// Which limit a file went past.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// [`MAX_DEPTH`] nested calls.
    Depth,
    /// Half the analysis thread's stack.
    Stack,
    /// [`WORK_PER_BYTE`] units of work per byte (and [`BASE_WORK`]).
    Work,
}

/// A file whose analysis went past a limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exhausted(pub Limit);

impl fmt::Display for Exhausted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Limit::Depth => write!(f, "its analysis nests deeper than {MAX_DEPTH} calls"),
            Limit::Stack => write!(
                f,
                "its analysis needs more than {} MiB of stack",
                STACK_SIZE / 2 / 1024 / 1024
            ),
            Limit::Work => write!(
                f,
                "its analysis takes more than {WORK_PER_BYTE} steps per byte"
            ),
        }
    }
}

#[derive(Clone, Copy)]
struct State {
    /// Inside [`run`].
    active: bool,
    depth: u32,
    /// Entries left.
    work: u64,
    /// Address of a local of [`run`]'s frame: the stack used is measured from it.
    base: usize,
    /// Stack the walks may use.
    stack: usize,
}

const IDLE: State = State {
    active: false,
    depth: 0,
    work: 0,
    base: 0,
    stack: 0,
};

thread_local! {
    static STATE: Cell<State> = const { Cell::new(IDLE) };
    /// The stack size of this thread, when it was started by the analysis (0: unknown).
    static THREAD_STACK: Cell<usize> = const { Cell::new(0) };
}

/// Declares that the current thread was started with a stack of `size` bytes (a thread pool's
/// start handler calls it), so that [`run`] runs on it rather than on a thread of its own.
pub fn thread_started_with_stack(size: usize) {
    THREAD_STACK.with(|s| s.set(size));
}

/// Runs `f`, one file's analysis, within the limits for a file of `bytes` bytes. On a thread
/// not declared with [`thread_started_with_stack`], `f` runs on a new thread of [`STACK_SIZE`]
/// (whose panics are re-raised here). Panics of `f` other than a limit go on unwinding.
pub fn run<T: Send>(bytes: usize, f: impl FnOnce() -> T + Send) -> Result<T, Exhausted> {
    let stack = THREAD_STACK.with(Cell::get);
    if stack != 0 {
        return run_here(bytes, stack, f);
    }
    // Taken by the new thread, or left here when none can be started.
    let task = std::sync::Mutex::new(Some(f));
    let take = || task.lock().ok().and_then(|mut t| t.take());
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("retry-audit-analysis".to_owned())
            .stack_size(STACK_SIZE)
            .spawn_scoped(scope, || {
                thread_started_with_stack(STACK_SIZE);
                take().map(|f| run_here(bytes, STACK_SIZE, f))
            });
        let ran = match spawned {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|payload| panic::resume_unwind(payload)),
            Err(_) => None,
        };
        // No thread to be had: run here, within the stack Rust gives a spawned thread by default.
        ran.or_else(|| take().map(|f| run_here(bytes, 2 * 1024 * 1024, f)))
            .expect("the analysis ran on one thread or the other")
    })
}

fn run_here<T>(bytes: usize, stack: usize, f: impl FnOnce() -> T) -> Result<T, Exhausted> {
    let marker = 0_u8;
    let outer = STATE.with(|s| {
        s.replace(State {
            active: true,
            depth: 0,
            work: BASE_WORK.saturating_add(WORK_PER_BYTE.saturating_mul(bytes as u64)),
            base: address(&marker),
            stack: stack / 2,
        })
    });
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    STATE.with(|s| s.set(outer));
    match result {
        Ok(value) => Ok(value),
        Err(payload) => match payload.downcast::<Exhausted>() {
            Ok(exhausted) => Err(*exhausted),
            Err(other) => panic::resume_unwind(other),
        },
    }
}

fn address(local: &u8) -> usize {
    std::ptr::from_ref(std::hint::black_box(local)) as usize
}

/// Held by a recursive function of the analysis for the length of its call.
#[must_use = "the depth counts only while the guard is held"]
pub struct Guard {
    active: bool,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.active {
            STATE.with(|s| {
                let mut state = s.get();
                state.depth = state.depth.saturating_sub(1);
                s.set(state);
            });
        }
    }
}

/// Enters a recursive function of the analysis: one more level of nesting, one more unit of
/// work. Past a limit, the file's analysis is abandoned (see the module documentation). Outside
/// [`run`] (a unit test calling a helper) nothing is counted.
#[inline]
pub fn enter() -> Guard {
    let marker = 0_u8;
    let exceeded = STATE.with(|s| {
        let mut state = s.get();
        if !state.active {
            return None;
        }
        state.depth += 1;
        state.work = state.work.saturating_sub(1);
        s.set(state);
        Some(if state.depth > MAX_DEPTH {
            Some(Limit::Depth)
        } else if state.work == 0 {
            Some(Limit::Work)
        } else if state.base.abs_diff(address(&marker)) > state.stack {
            Some(Limit::Stack)
        } else {
            None
        })
    });
    let guard = Guard {
        active: exceeded.is_some(),
    };
    if let Some(Some(limit)) = exceeded {
        // The guard is dropped on the way out, restoring the depth it added.
        drop(guard);
        panic::resume_unwind(Box::new(Exhausted(limit)));
    }
    guard
}

/// Adds the allowance of `bytes` more bytes of text to the file's work: what the analysis of a
/// file with other files' definitions in view may spend again.
pub fn grant(bytes: usize) {
    STATE.with(|s| {
        let mut state = s.get();
        if state.active {
            state.work = state.work.saturating_add(
                BASE_WORK.saturating_add(WORK_PER_BYTE.saturating_mul(bytes as u64)),
            );
            s.set(state);
        }
    });
}

/// Spends `units` of the file's work (one per byte of text an analysis writes out), without
/// entering a level. Past the limit, the file's analysis is abandoned like at [`enter`].
pub fn spend(units: u64) {
    let exhausted = STATE.with(|s| {
        let mut state = s.get();
        if !state.active {
            return false;
        }
        state.work = state.work.saturating_sub(units);
        s.set(state);
        state.work == 0
    });
    if exhausted {
        panic::resume_unwind(Box::new(Exhausted(Limit::Work)));
    }
}

/// The depth of the syntax tree a file's tokens can make, as an upper bound up to a small
/// factor: along every path of nested brackets, the tokens written since the last separator of
/// each enclosing bracket (`,` outside `<..>`, `;`, or the end of a `{..}` that a new item,
/// statement or `match` arm follows), plus one per bracket. A chain without brackets (`a + b + ..`,
/// `x.f().g()..`, `!!..x`, `Option<Option<..>>`, `if .. {} else if .. {} ..`) counts one per
/// token (`&` two: the parser's frames for a reference type are the largest), as deep as the
/// tree it makes; a long list (`[1, 2, ..]`, the items of a module, the
/// statements of a block, the arms of a `match`) counts one per element, not one per token.
/// Text the lexer does not read with confidence (an unterminated literal or comment, which does
/// not parse either) counts its brackets only.
#[must_use]
pub fn syntax_depth(text: &str) -> usize {
    match crate::analysis::prefilter::lex(text.as_bytes()) {
        Some(tokens) => syntax_depth_lexed(text, &tokens),
        None => bracket_depth(text),
    }
}

/// [`syntax_depth`] of `text` lexed into `tokens`.
pub(crate) fn syntax_depth_lexed(
    text: &str,
    tokens: &[crate::analysis::prefilter::Token],
) -> usize {
    use crate::analysis::prefilter::Kind;
    /// One open bracket (the file is the outermost).
    struct Level {
        /// Depth reached outside this bracket, where it opened.
        below: usize,
        /// Tokens since the last separator.
        run: usize,
        /// `<` not yet closed by `>` since the last separator (their `,` is no separator).
        angles: usize,
        /// The last token was a `}` closing a bracket inside this one.
        after_block: bool,
    }
    let mut levels = vec![Level {
        below: 0,
        run: 0,
        angles: 0,
        after_block: false,
    }];
    let mut deepest = 0;
    for (i, t) in tokens.iter().enumerate() {
        let Some(level) = levels.last_mut() else {
            break;
        };
        if std::mem::take(&mut level.after_block) {
            // After a block, an identifier, a literal, an attribute, a label or a bracket
            // starts the next item, statement or `match` arm (a bracket that calls or indexes
            // the block is one level not counted); `else`, `as`, an operator, `.` and `?` go on
            // with the same expression.
            let continues = match t.kind {
                Kind::Punct(b'#' | b'\'') | Kind::Literal | Kind::Open(b'(' | b'[') => false,
                Kind::Ident => matches!(&text[t.start..t.end], "else" | "as"),
                _ => true,
            };
            if !continues {
                level.run = 0;
                level.angles = 0;
            }
        }
        match t.kind {
            Kind::Punct(b',') if level.angles == 0 => level.run = 0,
            Kind::Punct(b';') => {
                level.run = 0;
                level.angles = 0;
            }
            Kind::Punct(b'<') => {
                level.angles += 1;
                level.run += 1;
            }
            Kind::Punct(b'>') => {
                // `->` and `=>` are not closing angles.
                let arrow = i > 0
                    && tokens[i - 1].end == t.start
                    && matches!(tokens[i - 1].kind, Kind::Punct(b'-' | b'='));
                if !arrow {
                    level.angles = level.angles.saturating_sub(1);
                }
                level.run += 1;
            }
            Kind::Open(_) => {
                level.run += 1;
                let below = level.below + level.run;
                levels.push(Level {
                    below,
                    run: 0,
                    angles: 0,
                    after_block: false,
                });
            }
            Kind::Close(close) => {
                if levels.len() > 1 {
                    levels.pop();
                }
                if let Some(outer) = levels.last_mut() {
                    outer.after_block = close == b'}';
                }
            }
            // `syn` parses a reference type (`&&&..T`) with the largest frames per token.
            Kind::Punct(b'&') => level.run += 2,
            _ => level.run += 1,
        }
        if let Some(level) = levels.last() {
            deepest = deepest.max(level.below + level.run + levels.len());
        }
    }
    deepest
}

/// The deepest bracket nesting in `src`, counting `(`, `[` and `{` even in comments and
/// strings (it can only over-count).
fn bracket_depth(src: &str) -> usize {
    let mut depth: usize = 0;
    let mut max = 0;
    for b in src.bytes() {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth(src: &str) -> usize {
        assert!(crate::analysis::prefilter::lex(src.as_bytes()).is_some());
        syntax_depth(src)
    }

    #[test]
    fn lists_count_one_per_element_and_chains_one_per_token() {
        let list = format!("const T: &[u32] = &[{}];", "1, ".repeat(10_000));
        assert!(depth(&list) < 20, "{}", depth(&list));
        let items = "fn f() { g(); }\n".repeat(10_000);
        assert!(depth(&items) < 20, "{}", depth(&items));
        let arms = format!(
            "fn f() {{ match x {{ {} _ => {{}} }} }}",
            "1 => { a() }\n".repeat(5_000)
        );
        assert!(depth(&arms) < 30, "{}", depth(&arms));
        let sum = format!("fn f() {{ let x = {}; }}", vec!["a"; 5_000].join(" + "));
        assert!(depth(&sum) > 9_000, "{}", depth(&sum));
        let chain = format!("fn f() {{ x{}; }}", ".b()".repeat(5_000));
        assert!(depth(&chain) > 15_000, "{}", depth(&chain));
        let generics = format!("type T = {}u8{};", "Vec<".repeat(5_000), ">".repeat(5_000));
        assert!(depth(&generics) > 9_000, "{}", depth(&generics));
        let maps = format!(
            "type T = {}u8{};",
            "HashMap<K, ".repeat(5_000),
            ">".repeat(5_000)
        );
        assert!(depth(&maps) > 9_000, "{}", depth(&maps));
        let else_if = format!("fn f() {{ if a {{}} {} }}", "else if a {} ".repeat(5_000));
        assert!(depth(&else_if) > 15_000, "{}", depth(&else_if));
        let nested = format!("fn f() {}{}", "{".repeat(3_000), "}".repeat(3_000));
        assert!(depth(&nested) > 3_000, "{}", depth(&nested));
    }

    #[test]
    fn arrows_do_not_close_angles() {
        // `Fn() -> u8` inside the angles: the `,` after it still separates nothing.
        let src = format!(
            "type T = {}u8{};",
            "HashMap<fn() -> u8, ".repeat(3_000),
            ">".repeat(3_000)
        );
        assert!(depth(&src) > 9_000, "{}", depth(&src));
    }

    #[test]
    fn a_cycle_is_cut_by_the_depth_limit_and_the_state_is_restored() {
        fn cycle(n: u64) -> u64 {
            let _guard = enter();
            if n == u64::MAX {
                0
            } else {
                cycle(n + 1) + 1
            }
        }
        assert_eq!(run(10, || cycle(0)), Err(Exhausted(Limit::Depth)));
        // Outside `run` nothing is counted, and a later run starts afresh.
        assert!(!STATE.with(|s| s.get().active));
        assert_eq!(run(10, || 7), Ok(7));
    }

    #[test]
    fn work_is_limited_even_when_shallow() {
        fn fan(n: u32) -> u64 {
            let _guard = enter();
            if n == 0 {
                1
            } else {
                fan(n - 1) + fan(n - 1)
            }
        }
        // 2^40 calls at a depth of 40: only the work limit can stop it.
        assert_eq!(run(10, || fan(40)), Err(Exhausted(Limit::Work)));
        assert_eq!(run(10, || fan(10)), Ok(1024));
    }

    #[test]
    fn the_stack_limit_stops_walks_with_big_frames() {
        fn big(n: u32) -> u8 {
            let _guard = enter();
            let frame = std::hint::black_box([n as u8; 16 * 1024]);
            if n == u32::MAX {
                return 0;
            }
            big(n + 1).wrapping_add(frame[(n % 1024) as usize])
        }
        // 16 KiB a frame: half of the 256 MiB stack is reached before 20 000 nested calls.
        assert_eq!(run(10, || big(0)), Err(Exhausted(Limit::Stack)));
    }

    #[test]
    fn other_panics_go_on_unwinding() {
        let caught = panic::catch_unwind(|| run(10, || panic!("a bug")));
        let payload = caught.expect_err("the panic reaches the caller");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"a bug"));
    }
}

//! Code read as what it is before its sites are looked for: retry loops written as iterator
//! chains become the loops they are, and the statements of a macro that takes a block of them
//! (`block-macros` of the models and `[extend]`: `stream! { .. }`, `try_stream! { .. }`) become
//! an async block.
//!
//! `iter::repeat_n((), self.limit).scan(self.init, |timeout, _| { .. }).flatten().next()` calls
//! its closure once per round, at most `limit` times, and stops at the first round that yields
//! a value: a `for` loop whose body is the closure. So is `(0..n).find_map(|attempt| ..)`. Each
//! such chain is rewritten into that loop before the file is read, with the tokens of the
//! original (their spans are the file's), and then read like any loop: what it calls, how the
//! wait evolves, which failures go round again.
//!
//! A round's value says where it goes: for `scan(..).flatten().next()`, `Some(None)` goes
//! round again, `Some(Some(v))` ends the chain with `v`, `None` ends it with nothing; for
//! `find_map`, `None` goes round again and `Some(v)` ends it. A closure with a value that is
//! none of these (a variable, a call) is not rewritten: what it does is unknown.

use proc_macro2::Span;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Expr, Stmt};

use super::known::{self, List};
use super::{names, Extensions};

/// Whether the file's text may hold something to rewrite (most files hold none and are not
/// copied).
pub(super) fn may_have(source: &str, ext: &Extensions) -> bool {
    let chain = (source.contains(".scan(") || source.contains(".find_map("))
        && (source.contains("repeat") || source.contains(".."));
    let named = |name: &str| {
        let last = name.rsplit("::").next().unwrap_or(name);
        source.contains(&format!("{last}!"))
    };
    chain
        || known::builtin()
            .entries(List::BlockMacros)
            .iter()
            .any(|e| named(&e.text))
        || ext.block_macros.iter().any(|m| named(m))
}

/// The file with its iterator retry chains rewritten as loops and its block macros as async
/// blocks, when it has any.
pub(super) fn rewrite(file: &syn::File, ext: &Extensions) -> Option<syn::File> {
    let mut copy = file.clone();
    let mut r = Rewriter {
        changed: false,
        ext,
    };
    r.visit_file_mut(&mut copy);
    r.changed.then_some(copy)
}

struct Rewriter<'e> {
    changed: bool,
    ext: &'e Extensions,
}

impl VisitMut for Rewriter<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let _guard = crate::analysis::limits::enter();
        if let Some(looped) = as_loop(e) {
            *e = looped;
            self.changed = true;
            return;
        }
        if let Expr::Macro(m) = e {
            if let Some(block) = block_macro(&m.mac, self.ext) {
                *e = block;
                self.changed = true;
            }
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }

    fn visit_stmt_mut(&mut self, s: &mut Stmt) {
        let _guard = crate::analysis::limits::enter();
        if let Stmt::Macro(m) = s {
            if let Some(block) = block_macro(&m.mac, self.ext) {
                *s = Stmt::Expr(block, m.semi_token);
                self.changed = true;
            }
        }
        syn::visit_mut::visit_stmt_mut(self, s);
    }
}

/// `stream! { stmts }`: `async move { stmts }`, when the body parses as statements.
fn block_macro(mac: &syn::Macro, ext: &Extensions) -> Option<Expr> {
    let name = names::last(&mac.path)?;
    if !known::builtin().name(List::BlockMacros, &name)
        && !Extensions::names(&ext.block_macros, &name)
    {
        return None;
    }
    let stmts = syn::parse::Parser::parse2(syn::Block::parse_within, mac.tokens.clone()).ok()?;
    let span = match &mac.delimiter {
        syn::MacroDelimiter::Brace(b) => b.span,
        syn::MacroDelimiter::Paren(p) => p.span,
        syn::MacroDelimiter::Bracket(b) => b.span,
    };
    Some(Expr::Async(syn::ExprAsync {
        attrs: Vec::new(),
        async_token: syn::Token![async](mac.path.span()),
        capture: Some(syn::Token![move](mac.path.span())),
        block: syn::Block {
            brace_token: syn::token::Brace { span },
            stmts,
        },
    }))
}

/// How many rounds the chain's source gives: `repeat_n(x, n)` and `0..n` give `n`
/// (`Some(count)`), `repeat(x)` and `repeat_with(f)` never end (`None`).
enum Rounds<'e> {
    Count(&'e Expr),
    Range(&'e Expr),
    Endless,
}

fn rounds(source: &Expr) -> Option<Rounds<'_>> {
    let _guard = crate::analysis::limits::enter();
    match source {
        Expr::Paren(p) => rounds(&p.expr),
        Expr::Range(r) if r.end.is_some() => Some(Rounds::Range(source)),
        Expr::Call(c) => match names::callee_path(&c.func).and_then(names::last).as_deref() {
            Some("repeat_n") if c.args.len() == 2 => Some(Rounds::Count(&c.args[1])),
            Some("repeat" | "repeat_with") if c.args.len() == 1 => Some(Rounds::Endless),
            _ => None,
        },
        _ => None,
    }
}

/// What the chain makes of a round's value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `scan(..).flatten().next()`: `Option<Option<T>>`.
    Scan,
    /// `find_map(..)`: `Option<T>`.
    FindMap,
}

/// Where a round's value sends the loop.
enum Goes {
    Again,
    /// The chain ends, with this value (or nothing).
    Ends(Option<Box<Expr>>),
}

fn goes(value: &Expr, shape: Shape) -> Option<Goes> {
    let _guard = crate::analysis::limits::enter();
    let some_of = |e: &Expr| -> Option<Option<Box<Expr>>> {
        match e {
            Expr::Path(p) if p.path.is_ident("None") => Some(None),
            Expr::Call(c) if c.args.len() == 1 => {
                let name = names::callee_path(&c.func).and_then(names::last)?;
                (name == "Some").then(|| Some(Box::new(c.args[0].clone())))
            }
            _ => None,
        }
    };
    match (shape, some_of(value)?) {
        (Shape::FindMap, None) => Some(Goes::Again),
        (Shape::FindMap, Some(v)) => Some(Goes::Ends(Some(v))),
        (Shape::Scan, None) => Some(Goes::Ends(None)),
        (Shape::Scan, Some(inner)) => match some_of(&inner)? {
            None => Some(Goes::Again),
            Some(v) => Some(Goes::Ends(Some(v))),
        },
    }
}

/// The statement that takes the loop where `value` sends it: `continue`, or `break` (the
/// value evaluated first, so that what it calls is still read).
fn jump(value: &Expr, shape: Shape, span: Span) -> Option<Expr> {
    Some(match goes(value, shape)? {
        Goes::Again => syn::parse_quote_spanned!(span=> continue),
        Goes::Ends(Some(v)) => syn::parse_quote_spanned!(span=> { let _ = #v; break }),
        Goes::Ends(None) => syn::parse_quote_spanned!(span=> break),
    })
}

/// Rewrites every value the closure body can end with (its tail, through blocks, `if` and
/// `match`, and its `return`s) into a jump; `None` when one of them is not a value we can
/// read.
fn rewrite_tails(e: &mut Expr, shape: Shape) -> Option<()> {
    let _guard = crate::analysis::limits::enter();
    match e {
        Expr::Block(b) => rewrite_block(&mut b.block, shape),
        Expr::If(i) => {
            rewrite_block(&mut i.then_branch, shape)?;
            match &mut i.else_branch {
                Some((_, other)) => rewrite_tails(other, shape),
                // An `if` without `else` has no value to end with.
                None => None,
            }
        }
        Expr::Match(m) => {
            for arm in &mut m.arms {
                rewrite_tails(&mut arm.body, shape)?;
            }
            Some(())
        }
        Expr::Paren(p) => rewrite_tails(&mut p.expr, shape),
        Expr::Return(r) => {
            let value = r.expr.as_deref()?;
            *e = jump(value, shape, r.span())?;
            Some(())
        }
        other => {
            *other = jump(other, shape, other.span())?;
            Some(())
        }
    }
}

fn rewrite_block(b: &mut syn::Block, shape: Shape) -> Option<()> {
    let mut returns = Returns {
        shape,
        ok: true,
        loops: 0,
    };
    let n = b.stmts.len();
    for stmt in &mut b.stmts[..n.saturating_sub(1)] {
        returns.visit_stmt_mut(stmt);
    }
    if !returns.ok {
        return None;
    }
    match b.stmts.last_mut()? {
        Stmt::Expr(e, None) | Stmt::Expr(e @ Expr::Return(_), Some(_)) => rewrite_tails(e, shape),
        other => {
            returns.visit_stmt_mut(other);
            None
        }
    }
}

/// The `return`s of the closure body (not of closures or async blocks inside it). One inside a
/// loop of the body is not rewritten (a `continue` there would go round that loop): the chain
/// is then not read.
struct Returns {
    shape: Shape,
    ok: bool,
    loops: usize,
}

impl VisitMut for Returns {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        let _guard = crate::analysis::limits::enter();
        match e {
            Expr::Closure(_) | Expr::Async(_) => {}
            Expr::Loop(_) | Expr::While(_) | Expr::ForLoop(_) => {
                self.loops += 1;
                syn::visit_mut::visit_expr_mut(self, e);
                self.loops -= 1;
            }
            Expr::Return(_) if self.loops > 0 => self.ok = false,
            Expr::Return(r) => {
                let span = r.span();
                match r.expr.as_deref().and_then(|v| jump(v, self.shape, span)) {
                    Some(j) => *e = j,
                    None => self.ok = false,
                }
            }
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
}

/// The pattern of a closure parameter without its type (`timeout: &mut Duration` → `timeout`).
fn untyped(p: &syn::Pat) -> &syn::Pat {
    match p {
        syn::Pat::Type(t) => &t.pat,
        other => other,
    }
}

/// The loop an iterator retry chain is, or `None` when `e` is not one.
fn as_loop(e: &Expr) -> Option<Expr> {
    let Expr::MethodCall(outer) = e else {
        return None;
    };
    // `src.scan(init, |state, item| body).flatten().next()`
    // `src.find_map(|item| body)`
    let (shape, adapter) = match outer.method.to_string().as_str() {
        "next" if outer.args.is_empty() => {
            let Expr::MethodCall(flat) = &*outer.receiver else {
                return None;
            };
            if flat.method != "flatten" || !flat.args.is_empty() {
                return None;
            }
            let Expr::MethodCall(scan) = &*flat.receiver else {
                return None;
            };
            (Shape::Scan, scan)
        }
        "find_map" => (Shape::FindMap, outer),
        _ => return None,
    };
    let (init, closure) = match (shape, adapter.method.to_string().as_str()) {
        (Shape::Scan, "scan") if adapter.args.len() == 2 => {
            (Some(&adapter.args[0]), &adapter.args[1])
        }
        (Shape::FindMap, "find_map") if adapter.args.len() == 1 => (None, &adapter.args[0]),
        _ => return None,
    };
    let Expr::Closure(closure) = closure else {
        return None;
    };
    if closure.asyncness.is_some() {
        return None;
    }
    let rounds = rounds(&adapter.receiver)?;
    let inputs: Vec<&syn::Pat> = closure.inputs.iter().map(untyped).collect();
    let (state, item) = match (shape, inputs.as_slice()) {
        (Shape::Scan, [state, item]) => (Some(*state), *item),
        (Shape::FindMap, [item]) => (None, *item),
        _ => return None,
    };
    let mut body = (*closure.body).clone();
    // The body as a block, so that its tail and returns can be rewritten alike.
    let mut block: syn::Block = match body {
        Expr::Block(ref b) if b.label.is_none() => b.block.clone(),
        ref other => {
            let span = other.span();
            syn::parse_quote_spanned!(span=> { #other })
        }
    };
    rewrite_block(&mut block, shape)?;
    body = Expr::Block(syn::ExprBlock {
        attrs: Vec::new(),
        label: None,
        block,
    });
    let span = adapter.receiver.span();
    let state_stmt = match (state, init) {
        (Some(pat), Some(init)) => quote_spanned!(span=> let mut #pat = #init;),
        _ => quote!(),
    };
    let looped = match rounds {
        Rounds::Count(n) => quote_spanned!(span=> for #item in 0..#n #body),
        Rounds::Range(r) => quote_spanned!(span=> for #item in #r #body),
        Rounds::Endless => quote_spanned!(span=> loop #body),
    };
    syn::parse2(quote_spanned!(span=> { #state_stmt #looped })).ok()
}

//! Where a loop's attempt limit comes from, when the loop itself does not say: a parameter
//! (`if retry_count >= max_retries { return Err(..) }` with `max_retries` given by the caller)
//! or a field (`for _ in 0..=self.max_retries`). What the crate passes there, under its default
//! configuration, is worked out across the crate's files afterwards ([`crate::analysis::crate_values`]).

use syn::visit::Visit;
use syn::{BinOp, Expr, Stmt};

use super::values::Locals;
use super::{LimitFrom, ValueSource, ZeroMeans};

/// What a limit is read from, as the loop's function names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Operand {
    /// A parameter of the function, by name.
    Param(String),
    /// A field (`self.max_retries`, `self.config.max_retries`), by its name.
    Field(String),
}

/// The one operand every test of the loop's attempt count compares with, and what a limit of
/// zero means: `None` when there is no such test, several limits, or a limit of another kind.
pub(crate) fn limit_operand(l: &Expr, locals: &Locals<'_>) -> Option<(Operand, ZeroMeans)> {
    let _guard = crate::analysis::limits::enter();
    let (body, range) = match l {
        Expr::Loop(x) => (&x.body, None),
        Expr::While(w) => (&w.body, None),
        // `for _ in 0..=limit` (one pass when the limit is zero), `0..limit`, `1..=limit`.
        Expr::ForLoop(f) => (&f.body, range_operand(&f.expr, locals)),
        _ => return None,
    };
    let mut v = CountTests {
        locals,
        counters: Vec::new(),
        tests: Vec::new(),
        other: false,
    };
    v.visit_block(body);
    if let Some(operand) = range {
        // The range is the bound; a count kept and tested besides is another one.
        return (v.tests.is_empty() && !v.other).then_some((operand, ZeroMeans::NoRetry));
    }
    let (operand, _) = v.tests.first()?;
    if v.other
        || v.tests
            .iter()
            .any(|(o, t)| o != operand || !v.counters.contains(&t.counter))
    {
        return None;
    }
    let zero = if v.tests.iter().all(|(_, t)| t.zero == ZeroMeans::NoRetry) {
        ZeroMeans::NoRetry
    } else {
        ZeroMeans::OneRetry
    };
    Some((operand.clone(), zero))
}

/// The source of a limit, once the function's signature is known: a parameter by its place.
pub(crate) fn source_of(
    operand: Operand,
    zero: ZeroMeans,
    sig: &syn::Signature,
    owner: Option<&syn::Ident>,
) -> Option<LimitFrom> {
    Some(LimitFrom {
        source: value_source(operand, sig, owner)?,
        zero,
    })
}

/// An operand of the function `sig` (a method of `owner`) as a source of values.
pub(crate) fn value_source(
    operand: Operand,
    sig: &syn::Signature,
    owner: Option<&syn::Ident>,
) -> Option<ValueSource> {
    match operand {
        Operand::Field(name) => Some(ValueSource::Field(name)),
        Operand::Param(name) => param_source(sig, owner.map(ToString::to_string), &name),
    }
}

/// The duration the wait at `at` (a sleep call of the loop `l`) is given, when it is a
/// parameter or a field (`sleep(self.retry_delay)`).
pub(crate) fn wait_operand(
    l: &Expr,
    at: crate::source::Span,
    index: &super::LineIndex<'_>,
    locals: &Locals<'_>,
) -> Option<Operand> {
    struct Find<'i, 'a, 'e> {
        at: crate::source::Span,
        index: &'i super::LineIndex<'a>,
        arg: Option<&'e Expr>,
    }
    impl<'e> Visit<'e> for Find<'_, '_, 'e> {
        fn visit_expr(&mut self, e: &'e Expr) {
            let _guard = crate::analysis::limits::enter();
            if self.arg.is_some() {
                return;
            }
            let first = match e {
                Expr::Call(c) => c.args.first(),
                Expr::MethodCall(m) => m.args.first(),
                _ => None,
            };
            if let Some(first) = first {
                if self.index.of(e) == self.at {
                    self.arg = Some(first);
                    return;
                }
            }
            syn::visit::visit_expr(self, e);
        }
    }
    let mut find = Find {
        at,
        index,
        arg: None,
    };
    find.visit_expr(l);
    operand(find.arg?, locals)
}

/// The parameter `name` of the function `sig` (a method of `owner`), as a source: its place
/// among the parameters besides the receiver.
#[must_use]
pub fn param_source(
    sig: &syn::Signature,
    owner: Option<String>,
    name: &str,
) -> Option<ValueSource> {
    let typed: Vec<&syn::PatType> = sig
        .inputs
        .iter()
        .filter_map(|i| match i {
            syn::FnArg::Typed(t) => Some(t),
            syn::FnArg::Receiver(_) => None,
        })
        .collect();
    let index = typed
        .iter()
        .position(|t| matches!(&*t.pat, syn::Pat::Ident(p) if p.ident == name))?;
    Some(ValueSource::Param {
        function: sig.ident.to_string(),
        owner,
        index,
        receiver: sig.receiver().is_some(),
        arity: typed.len(),
    })
}

/// One test of the attempt count against a limit.
struct Test {
    counter: String,
    zero: ZeroMeans,
}

/// The tests `if count >= limit { return .. }` of a loop body (not inside closures or nested
/// items), and the counters stepped by `count += 1`.
struct CountTests<'l, 'a> {
    locals: &'l Locals<'a>,
    counters: Vec<String>,
    tests: Vec<(Operand, Test)>,
    /// A count tested against something that is not a parameter or a field (a literal, a
    /// local): another bound, which the defaults do not decide.
    other: bool,
}

impl<'ast> Visit<'ast> for CountTests<'_, '_> {
    fn visit_expr(&mut self, e: &'ast Expr) {
        let _guard = crate::analysis::limits::enter();
        match e {
            Expr::Closure(_) | Expr::Async(_) => return,
            Expr::Binary(b) if matches!(b.op, BinOp::AddAssign(_)) => {
                if let (Some(name), true) = (ident(&b.left), is_int_lit(&b.right)) {
                    self.counters.push(name);
                }
            }
            Expr::If(i) if exits(&i.then_branch.stmts) => {
                if let Some((counter, operand, zero)) = count_test(&i.cond, self.locals) {
                    match operand {
                        Some(o) => self.tests.push((o, Test { counter, zero })),
                        None => self.other = true,
                    }
                }
            }
            _ => {}
        }
        syn::visit::visit_expr(self, e);
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// `count >= limit` (zero: no retry), `count > limit` (zero: one retry), and the same written
/// the other way round: the counter's name, the limit's operand (`None`: not a parameter or
/// field) and what zero means. `None` when `cond` is no such comparison.
fn count_test(cond: &Expr, locals: &Locals<'_>) -> Option<(String, Option<Operand>, ZeroMeans)> {
    let Expr::Binary(b) = strip_conversions(cond) else {
        return None;
    };
    let (count, limit, zero) = match b.op {
        BinOp::Ge(_) => (&b.left, &b.right, ZeroMeans::NoRetry),
        BinOp::Gt(_) => (&b.left, &b.right, ZeroMeans::OneRetry),
        BinOp::Le(_) => (&b.right, &b.left, ZeroMeans::NoRetry),
        BinOp::Lt(_) => (&b.right, &b.left, ZeroMeans::OneRetry),
        _ => return None,
    };
    let counter = ident(count)?;
    if locals.params.contains(&counter) {
        return None;
    }
    Some((counter, operand(limit, locals), zero))
}

/// A parameter (not rebound by a `let`) or a field read, through casts, parentheses,
/// dereferences and `.into()`.
fn operand(e: &Expr, locals: &Locals<'_>) -> Option<Operand> {
    match strip_conversions(e) {
        Expr::Path(p) => {
            let name = p.path.get_ident()?.to_string();
            (locals.params.contains(&name) && !locals.lets.contains_key(&name))
                .then_some(Operand::Param(name))
        }
        Expr::Field(f) => match &f.member {
            syn::Member::Named(n) if reads_self(&f.base) => Some(Operand::Field(n.to_string())),
            _ => None,
        },
        _ => None,
    }
}

/// `self`, `self.config`, `self.inner.options`: a field path from `self`.
fn reads_self(e: &Expr) -> bool {
    let _guard = crate::analysis::limits::enter();
    match strip_conversions(e) {
        Expr::Path(p) => p.path.is_ident("self"),
        Expr::Field(f) => reads_self(&f.base),
        _ => false,
    }
}

/// `0..limit`, `0..=limit`, `1..=limit` (start a literal of 0 or 1).
fn range_operand(e: &Expr, locals: &Locals<'_>) -> Option<Operand> {
    let Expr::Range(r) = strip_conversions(e) else {
        return None;
    };
    let start = r.start.as_deref().and_then(super::site::int_lit)?;
    if start > 1 {
        return None;
    }
    operand(r.end.as_deref()?, locals)
}

/// `e` without parentheses, casts, dereferences, references, `.into()` or `.clone()`: the
/// value it reads.
#[must_use]
pub fn strip_conversions(mut e: &Expr) -> &Expr {
    loop {
        e = match e {
            Expr::Paren(p) => &p.expr,
            Expr::Group(g) => &g.expr,
            Expr::Cast(c) => &c.expr,
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => &u.expr,
            Expr::Reference(r) => &r.expr,
            Expr::MethodCall(m)
                if m.args.is_empty()
                    && matches!(m.method.to_string().as_str(), "into" | "clone") =>
            {
                &m.receiver
            }
            _ => return e,
        };
    }
}

fn ident(e: &Expr) -> Option<String> {
    match strip_conversions(e) {
        Expr::Path(p) => p.path.get_ident().map(ToString::to_string),
        _ => None,
    }
}

fn is_int_lit(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(_),
            ..
        })
    )
}

/// The branch leaves the loop: a `return`, a `break`, or `?` on an error it makes.
fn exits(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|s| match s {
        Stmt::Expr(e, _) => matches!(e, Expr::Return(_) | Expr::Break(_)) || is_try_err(e),
        Stmt::Macro(m) => m
            .mac
            .path
            .segments
            .last()
            .is_some_and(|s| matches!(s.ident.to_string().as_str(), "bail" | "panic")),
        _ => false,
    })
}

/// `Err(e)?`.
fn is_try_err(e: &Expr) -> bool {
    matches!(e, Expr::Try(t) if matches!(&*t.expr, Expr::Call(c)
        if matches!(&*c.func, Expr::Path(p) if p.path.is_ident("Err"))))
}

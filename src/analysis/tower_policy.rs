//! `tower::retry::Policy` impls: `impl<Req, Res, E> Policy<Req, Res, E> for Attempts`, whose
//! `fn retry(&mut self, req, result) -> Option<Self::Future>` (tower ≥ 0.4; `&self` and
//! `Result<&Res, &E>` in older tower) decides after each failure whether the request goes round
//! again. Tower's `Retry` service awaits the future handed back in `Some(..)` before the next
//! attempt: that future is the policy's wait.
//!
//! Read here: an impl of a trait whose last segment is `Policy`, with an associated
//! `type Future` and a `retry` method returning `Option<..>`. Each `Some(future)` the method can
//! return (its tail, its `return`s, through `if`/`match`/blocks, `cond.then_some(..)`) is read:
//! - a future that is ready at once (`future::ready(..)`, `std::future::ready(())`,
//!   `futures::future::ok(..)`, boxed or pinned, an `async` block that awaits nothing) does not
//!   wait at all: the policy retries immediately (RA011);
//! - a future that sleeps (`tokio::time::sleep(d)`, `Box::pin(async move { sleep(d).await; .. })`,
//!   a `Delay::new(d)` in the future's value) waits: each sleep is a [`Delay`](super::Delay)
//!   whose length is read as a loop's sleep is; a length read from the policy's own state
//!   (a field, the request) is of unknown kind;
//! - anything else (a field's backoff, a call of another policy, a helper's future) cannot be
//!   read: the impl is then no site (nothing is reported rather than a wait made up).
//!
//! A `retry` that never returns `Some(..)` (only `None`, or delegating to an inner policy) is no
//! site. The attempt limit is the policy's state (`self.0 > 0`, `self.retries >= req.attempt()`):
//! the bound is the callers' ([`BoundKind::Caller`]). Impls in test code are skipped.

use syn::visit::Visit;
use syn::{Expr, ImplItem};

use super::names;
use super::scope::{FileScope, LocalFn};
use super::span::LineIndex;
use super::values::{returned_exprs, value_leaves, Locals, LoopFacts, Taint, ValueCx};
use super::{Bound, BoundKind, Delay, DelayKind, RetrySite};

/// The sites of the tower retry policies implemented in these items (the file, and the bodies of
/// item macros). `test_code`: the whole file is test code.
pub(super) fn sites<'a>(
    files: &[&'a syn::File],
    scope: &FileScope<'a>,
    index: &LineIndex<'_>,
    test_code: bool,
) -> Vec<RetrySite> {
    if test_code || !index.source().contains("Policy") {
        return Vec::new();
    }
    let mut finder = Finder {
        impls: Vec::new(),
        test_depth: 0,
    };
    for f in files {
        finder.visit_file(f);
    }
    finder
        .impls
        .iter()
        .filter_map(|(i, retry)| site_of(i, retry, scope, index))
        .collect()
}

/// The impls of a `Policy` trait with tower's shape, each with its `retry` method.
struct Finder<'a> {
    impls: Vec<(&'a syn::ItemImpl, &'a syn::ImplItemFn)>,
    test_depth: usize,
}

impl<'a> Visit<'a> for Finder<'a> {
    fn visit_item_mod(&mut self, m: &'a syn::ItemMod) {
        let _guard = crate::analysis::limits::enter();
        let test = super::site::is_test_attr(&m.attrs);
        self.test_depth += usize::from(test);
        syn::visit::visit_item_mod(self, m);
        self.test_depth -= usize::from(test);
    }

    fn visit_item(&mut self, i: &'a syn::Item) {
        let _guard = crate::analysis::limits::enter();
        // Items inside functions are visited too; test functions are skipped.
        if let syn::Item::Fn(f) = i {
            if super::site::is_test_attr(&f.attrs) {
                return;
            }
        }
        syn::visit::visit_item(self, i);
    }

    fn visit_item_impl(&mut self, i: &'a syn::ItemImpl) {
        let _guard = crate::analysis::limits::enter();
        if self.test_depth == 0 && !super::site::is_test_attr(&i.attrs) {
            if let Some(retry) = tower_retry_fn(i) {
                self.impls.push((i, retry));
            }
        }
        syn::visit::visit_item_impl(self, i);
    }
}

/// The `retry` method of an impl of tower's `Policy`: the trait's last segment is `Policy`, the
/// impl names its `type Future`, and `retry` takes `self` and two more parameters (the request
/// and the result) and returns an `Option`.
fn tower_retry_fn(i: &syn::ItemImpl) -> Option<&syn::ImplItemFn> {
    let (_, path, _) = i.trait_.as_ref()?;
    if path.segments.last()?.ident != "Policy" {
        return None;
    }
    let has_future = i
        .items
        .iter()
        .any(|item| matches!(item, ImplItem::Type(t) if t.ident == "Future"));
    if !has_future {
        return None;
    }
    i.items.iter().find_map(|item| match item {
        ImplItem::Fn(f)
            if f.sig.ident == "retry"
                && f.sig.receiver().is_some()
                && f.sig.inputs.len() == 3
                && returns_option(&f.sig.output)
                && !super::site::is_test_attr(&f.attrs) =>
        {
            Some(f)
        }
        _ => None,
    })
}

fn returns_option(output: &syn::ReturnType) -> bool {
    match output {
        syn::ReturnType::Type(_, ty) => matches!(&**ty, syn::Type::Path(p)
            if p.path.segments.last().is_some_and(|s| s.ident == "Option")),
        syn::ReturnType::Default => false,
    }
}

/// What the future handed back in `Some(..)` does before the next attempt.
enum Wait<'a> {
    /// Nothing: it is ready at once.
    Ready,
    /// It sleeps: each sleep call, its duration argument, and whether it blocks the thread.
    Sleeps(Vec<Sleep<'a>>),
    /// It cannot be read.
    Unknown,
}

type Sleep<'a> = (&'a Expr, Option<&'a Expr>, bool);

/// The site of one `Policy` impl whose `retry` hands back a future on some path.
fn site_of<'a>(
    i: &'a syn::ItemImpl,
    retry: &'a syn::ImplItemFn,
    scope: &FileScope<'a>,
    index: &LineIndex<'_>,
) -> Option<RetrySite> {
    let f = LocalFn {
        sig: &retry.sig,
        block: &retry.block,
        attrs: &retry.attrs,
        owner: None,
    };
    let locals = Locals::of_fn(&f);
    let futures = handed_back(&retry.block);
    let head = futures.first()?.0;
    let mut sleeps = Vec::new();
    for (_, future) in &futures {
        match wait_of(future, scope, &locals, 0) {
            Wait::Ready => {}
            Wait::Sleeps(s) => sleeps.extend(s),
            // One way round that cannot be read: the policy's waits are not known.
            Wait::Unknown => return None,
        }
    }
    let facts = LoopFacts::collect(&retry.block, &[]);
    let name = retry.sig.ident.to_string();
    let cx = ValueCx {
        file: scope,
        locals: &locals,
        facts: &facts,
        params: None,
        depth: 0,
        current_fn: &name,
    };
    let delays: Vec<Delay> = sleeps
        .iter()
        .map(|(call, arg, blocking)| {
            let t = arg.map_or(Taint::default(), |a| cx.taint(a));
            let mut d = super::site::delay_of(index.of(*call), t);
            d.blocking = *blocking;
            // A length read from the policy's state or the request that the method does not
            // change: what it holds is set elsewhere (the next policy, a setter).
            if d.kind == DelayKind::Constant && arg.is_some_and(|a| reads_state(a, &facts)) {
                d.kind = DelayKind::Unknown;
            }
            d.uncapped_for_callers()
        })
        .collect();
    let owner = match &*i.self_ty {
        syn::Type::Path(p) => names::last(&p.path),
        _ => None,
    };
    let function = owner.map_or_else(|| name.clone(), |o| format!("{o}::{name}"));
    Some(RetrySite::policy(
        index.of(head),
        Bound::Bounded(BoundKind::Caller),
        delays,
        function,
        None,
        true,
    ))
}

/// The `Some(future)` values a `retry` body can return, each with the future.
fn handed_back(block: &syn::Block) -> Vec<(&Expr, &Expr)> {
    let mut leaves = Vec::new();
    for e in returned_exprs(block) {
        value_leaves(e, &mut leaves);
    }
    leaves
        .into_iter()
        .filter_map(|leaf| match leaf {
            Expr::Call(c) if c.args.len() == 1 => names::callee_path(&c.func)
                .and_then(names::last)
                .filter(|n| n == "Some")
                .and_then(|_| c.args.first())
                .map(|future| (leaf, future)),
            // `(self.0 > 0).then_some(ready(..))`, `cond.then(|| ready(..))`.
            Expr::MethodCall(m) if m.args.len() == 1 => {
                match (m.method.to_string().as_str(), &m.args[0]) {
                    ("then_some", future) => Some((leaf, future)),
                    ("then", Expr::Closure(c)) if c.inputs.is_empty() => Some((leaf, &*c.body)),
                    _ => None,
                }
            }
            _ => None,
        })
        .collect()
}

/// What `future` waits before the next attempt. `depth` limits following local bindings.
fn wait_of<'a>(
    future: &'a Expr,
    scope: &FileScope<'a>,
    locals: &Locals<'a>,
    depth: usize,
) -> Wait<'a> {
    let _guard = crate::analysis::limits::enter();
    if depth > 8 {
        return Wait::Unknown;
    }
    match super::site::future_sleeps(future, scope) {
        None => return Wait::Unknown,
        Some(sleeps) if !sleeps.is_empty() => return Wait::Sleeps(sleeps),
        Some(_) => {}
    }
    let inner = |e: &'a Expr| wait_of(e, scope, locals, depth + 1);
    match future {
        Expr::Paren(p) => inner(&p.expr),
        Expr::Group(g) => inner(&g.expr),
        // `Box::pin(fut) as Self::Future`.
        Expr::Cast(c) => inner(&c.expr),
        Expr::Call(c) => {
            let Some(path) = names::callee_path(&c.func) else {
                return Wait::Unknown;
            };
            let full = scope.resolve(path);
            let last = full.last().map_or("", String::as_str);
            // A bare `ready(..)` is `std::future::ready` unless the file defines its own.
            let from_futures = if full.len() == 1 {
                !scope.fns.contains_key(last)
            } else {
                full.iter().any(|s| s.contains("future"))
            };
            match last {
                // `future::ready(x)`, `std::future::ready(())`, `futures::future::ok(x)`.
                "ready" if from_futures => Wait::Ready,
                "ok" if from_futures && full.len() > 1 => Wait::Ready,
                // `Box::pin(fut)`, `Either::Left(fut)`.
                "pin" | "new" if full.iter().any(|s| s == "Box") => {
                    c.args.first().map_or(Wait::Unknown, inner)
                }
                "Left" | "Right" | "A" | "B" if c.args.len() == 1 => inner(&c.args[0]),
                _ => Wait::Unknown,
            }
        }
        Expr::MethodCall(m) => match m.method.to_string().as_str() {
            // Wrapping or mapping a future does not make it wait.
            "boxed" | "boxed_local" | "into" | "left_future" | "right_future" | "map"
            | "map_ok" | "map_err" | "inspect" => inner(&m.receiver),
            _ => Wait::Unknown,
        },
        // `async move { next_policy }`: ready when polled, unless it awaits something.
        Expr::Async(a) => {
            if awaits(&a.block) {
                Wait::Unknown
            } else {
                Wait::Ready
            }
        }
        // `let fut = future::ready(()); Some(fut)`.
        Expr::Path(p) if p.path.segments.len() == 1 => {
            let key = p.path.segments[0].ident.to_string();
            match locals.lets.get(&key).map(Vec::as_slice) {
                Some([init]) => inner(init),
                _ => Wait::Unknown,
            }
        }
        Expr::If(_) | Expr::Match(_) | Expr::Block(_) => {
            let mut leaves = Vec::new();
            value_leaves(future, &mut leaves);
            if leaves.is_empty() || leaves.iter().any(|l| std::ptr::eq(*l, future)) {
                return Wait::Unknown;
            }
            let mut out = Wait::Ready;
            for leaf in leaves {
                match inner(leaf) {
                    Wait::Ready => {}
                    Wait::Sleeps(s) => match &mut out {
                        Wait::Sleeps(all) => all.extend(s),
                        _ => out = Wait::Sleeps(s),
                    },
                    Wait::Unknown => return Wait::Unknown,
                }
            }
            out
        }
        _ => Wait::Unknown,
    }
}

/// Whether a block awaits anything (outside closures and nested async blocks).
fn awaits(block: &syn::Block) -> bool {
    struct A(bool);
    impl<'ast> Visit<'ast> for A {
        fn visit_expr(&mut self, e: &'ast Expr) {
            let _guard = crate::analysis::limits::enter();
            match e {
                Expr::Await(_) => self.0 = true,
                Expr::Closure(_) | Expr::Async(_) => {}
                _ => syn::visit::visit_expr(self, e),
            }
        }
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            let _guard = crate::analysis::limits::enter();
            // `select!`, `join!`: they await.
            if names::text(&m.tokens).contains("await") {
                self.0 = true;
            }
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut a = A(false);
    a.visit_block(block);
    a.0
}

/// Whether a wait's length reads the policy's fields or a parameter (`self.delay`,
/// `req.backoff()`) that the method itself does not change.
fn reads_state(arg: &Expr, facts: &LoopFacts<'_>) -> bool {
    struct R<'f, 'a> {
        facts: &'f LoopFacts<'a>,
        found: bool,
    }
    impl<'ast> Visit<'ast> for R<'_, '_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            let _guard = crate::analysis::limits::enter();
            match e {
                Expr::Field(_) => {
                    let key = super::values::place_key(e).unwrap_or_default();
                    if !self.facts.mutations.contains_key(&key) {
                        self.found = true;
                    }
                }
                Expr::MethodCall(m) if matches!(&*m.receiver, Expr::Path(_)) => {
                    self.found = true;
                }
                _ => syn::visit::visit_expr(self, e),
            }
        }
    }
    let mut r = R {
        facts,
        found: false,
    };
    r.visit_expr(arg);
    r.found
}

//! What a site waits between attempts: the sleeps of its body and of the helpers it calls, their growth, cap and randomness, and the waits that are not in view.

use std::collections::{HashMap, HashSet};

use syn::visit::Visit;
use syn::{Block, Expr};

use crate::analysis::flow::FlowResult;
use crate::analysis::known::List;
use crate::analysis::names;
use crate::analysis::scope::{Facts, FileScope, LocalFn};
use crate::analysis::values::{Locals, LoopFacts, Taint, ValueCx};
use crate::analysis::{Bound, BoundKind, Delay, DelayKind};
use crate::source::Span;

#[allow(clippy::wildcard_imports)]
use super::*;

impl Builder<'_, '_> {
    /// Whether an awaited call named `name` (on a path between attempts) may wait: not when
    /// the models say it resumes at once (`yield_now`), nor when it is a function of this file
    /// whose body awaits nothing and sleeps nowhere; otherwise its wait is unknown.
    pub(super) fn may_wait(&self, name: &str, current_fn: &str) -> bool {
        if self.scope.is_no_wait(name) {
            return false;
        }
        let Some(f) = self.scope.function_via(name, None) else {
            return true;
        };
        if f.sig.ident == current_fn {
            return true;
        }
        let waits = self.waits(f.block, current_fn, true);
        let mut awaits = AwaitFinder(false);
        awaits.visit_block(f.block);
        awaits.0
            || !waits.sleeps.is_empty()
            || !waits.unknown.is_empty()
            || !waits.helpers.is_empty()
            || !waits.timed.is_empty()
    }
}

impl<'a> Builder<'a, '_> {
    /// The waits in a body: sleep calls, and calls of local functions that sleep.
    /// `enter_async`: the body is a function's whose async block is its future
    /// (`Box::pin(async move { .. })`), so sleeps in async blocks count.
    pub(super) fn delays(
        &self,
        body: &'a Block,
        values: &ValueCx<'a, '_>,
        enter_async: bool,
        longest: &dyn Fn(Option<&'a Expr>) -> Option<f64>,
    ) -> Vec<Delay> {
        let waits = self.waits(body, values.current_fn, enter_async);
        self.delays_of(&waits, values, longest)
    }

    /// The waits of a body, before their lengths are judged: sleeps, waits of other files, and
    /// calls of this file's waiting helpers (with the taint of the helper's sleep).
    pub(super) fn waits(&self, body: &'a Block, current_fn: &str, enter_async: bool) -> Waits<'a> {
        let _guard = crate::analysis::limits::enter();
        let mut finder = SleepFinder {
            scope: self.scope,
            sleeps: Vec::new(),
            unknown_waits: Vec::new(),
            helper_calls: Vec::new(),
            timed: Vec::new(),
            dropped: Vec::new(),
            enter_async,
        };
        finder.visit_block(body);
        let helpers = finder
            .helper_calls
            .into_iter()
            .filter_map(|(call, name, via, args)| {
                let plain = self.helper_sleep(&name, &via, current_fn).is_some();
                // A helper of this file named for waiting whose wait is not a plain sleep
                // (`timeout(d, cancel.cancelled())`, several `cfg` variants): a wait all the same.
                (plain || (names::is_wait_like_name(&name) && !args.is_empty()))
                    .then_some((call, name, via, args, plain))
            })
            .collect();
        Waits {
            sleeps: finder.sleeps,
            unknown: finder.unknown_waits,
            helpers,
            timed: finder.timed,
            dropped: finder.dropped,
        }
    }

    /// The delays of `waits`, with what flows into each; `longest` works out how long a
    /// growing wait without a cap gets.
    pub(super) fn delays_of(
        &self,
        waits: &Waits<'a>,
        values: &ValueCx<'a, '_>,
        longest: &dyn Fn(Option<&'a Expr>) -> Option<f64>,
    ) -> Vec<Delay> {
        let _guard = crate::analysis::limits::enter();
        self.scope
            .consult(Facts::WAIT, || self.delays_in(waits, values, longest))
    }

    /// [`Builder::delays_of`], the definitions it reads kept as the waits' evidence.
    pub(super) fn delays_in(
        &self,
        waits: &Waits<'a>,
        values: &ValueCx<'a, '_>,
        longest: &dyn Fn(Option<&'a Expr>) -> Option<f64>,
    ) -> Vec<Delay> {
        let _guard = crate::analysis::limits::enter();
        let mut out = Vec::new();
        let opaque = Taint {
            opaque: true,
            ..Taint::default()
        };
        for (call, arg, blocking) in &waits.sleeps {
            if !self.ticks_a_known_period(call, values) {
                out.push(delay_of(self.index.of(*call), opaque));
                continue;
            }
            let t = arg.map_or(Taint::default(), |a| values.taint(a));
            let mut d = delay_of(self.index.of(*call), t);
            d.blocking = *blocking;
            if d.kind == DelayKind::Growing && !d.capped {
                d.longest_secs = longest(*arg);
            }
            out.push(d);
        }
        for call in &waits.unknown {
            out.push(delay_of(self.index.of(*call), opaque));
        }
        for (call, name, via, args, plain) in &waits.helpers {
            let slept = if *plain {
                self.helper_sleep_taint(name, via, args, values)
            } else {
                None
            };
            match slept {
                Some((t, blocking)) => {
                    let mut d = delay_of(self.index.of(*call), t);
                    d.blocking = blocking;
                    if d.kind == DelayKind::Growing && !d.capped {
                        d.longest_secs = longest(None);
                    }
                    out.push(d);
                }
                None => out.push(delay_of(self.index.of(*call), opaque)),
            }
        }
        out.sort_by_key(|d| d.span.start);
        out
    }

    /// Whether a wait is anything but a timer's tick on a value no timer crate is seen to make:
    /// a tick of the models' `period-ticks` (tokio's `Interval::tick`) on a value its crate made
    /// waits its fixed period; one on a type of the workspace or of another crate waits what
    /// its code says (a `Backoff` whose `tick` sleeps a growing, jittered time), unknown here.
    fn ticks_a_known_period(&self, call: &Expr, values: &ValueCx<'a, '_>) -> bool {
        let mut e = call;
        while let Expr::Await(a) = e {
            e = &a.base;
        }
        let Expr::MethodCall(m) = e else {
            return true;
        };
        if !m.args.is_empty() || !self.scope.is_period_tick(&m.method.to_string()) {
            return true;
        }
        let receivers = Receivers {
            locals: values.locals,
            scope: self.scope,
            fields: None,
        };
        receivers.made_by(&m.receiver).is_some_and(|k| {
            self.scope
                .is_crate_call(List::PeriodTicks, &k, &m.method.to_string())
        })
    }

    /// The one sleep of a small waiting helper of this file (`backoff(attempt).await`): its
    /// body, duration argument and whether it blocks. Not a function with loops of its own
    /// (its sleeps belong to its own retry site), nor the function itself.
    pub(super) fn helper_sleep(
        &self,
        name: &str,
        via: &crate::analysis::Via,
        current_fn: &str,
    ) -> Option<(LocalFn<'a>, Option<&'a Expr>, bool)> {
        let _guard = crate::analysis::limits::enter();
        let f = self.scope.function_via(name, Some(via))?;
        if name == current_fn || contains_loop(f.block) {
            return None;
        }
        let mut inner = SleepFinder {
            scope: self.scope,
            sleeps: Vec::new(),
            unknown_waits: Vec::new(),
            helper_calls: Vec::new(),
            timed: Vec::new(),
            dropped: Vec::new(),
            enter_async: true,
        };
        inner.visit_block(f.block);
        match inner.sleeps.as_slice() {
            [(_, arg, blocking)] => Some((f, *arg, *blocking)),
            _ => None,
        }
    }

    /// `backoff(attempt).await` where `fn backoff` of this file sleeps: the taint of its sleep,
    /// with its parameters standing for the arguments.
    pub(super) fn helper_sleep_taint(
        &self,
        name: &str,
        via: &crate::analysis::Via,
        args: &[&'a Expr],
        values: &ValueCx<'a, '_>,
    ) -> Option<(Taint, bool)> {
        let _guard = crate::analysis::limits::enter();
        let (f, arg, blocking) = self.helper_sleep(name, via, values.current_fn)?;
        let params = values.param_taints(&f, args);
        let locals = Locals::of_fn(&f);
        let facts = LoopFacts::collect(f.block, &[]);
        let inner_cx = ValueCx {
            file: self.scope,
            locals: &locals,
            facts: &facts,
            params: Some(&params),
            // Read in place of its call: the helper may still ask a function of the file for
            // the length (`let secs = backoff_secs(n); sleep(secs)`).
            depth: values.depth,
            current_fn: name,
        };
        Some((
            arg.map_or(Taint::default(), |a| inner_cx.taint(a)),
            blocking,
        ))
    }
}

/// A way round after a failure that never waits, in a loop that waits on other ways round:
/// every path reaching that `continue` (or the end of the body) skipped the waits. Only a
/// counted or blind resend: an uncounted re-run of one picked-out error (a stale pooled
/// connection) is a protocol step.
pub(super) fn unpaced_path(r: &FlowResult) -> Option<crate::analysis::Unpaced> {
    // An operation that failed by timing out waited out its timeout.
    let timed = |c: &&crate::analysis::flow::Continue| c.op.as_deref().is_some_and(is_timed_name);
    r.failing()
        .filter(|c| c.status.is_none())
        .filter(|c| !c.waited && !timed(c) && (c.stepped || !c.picked))
        .find(|c| {
            // Every path that goes round here skipped the waits, and some other way round waits.
            r.continues
                .iter()
                .filter(|o| o.span == c.span)
                .all(|o| !o.waited)
                && r.continues.iter().any(|o| o.waited && o.span != c.span)
        })
        .map(|c| crate::analysis::Unpaced::Skips(c.span))
        .or_else(|| {
            // Or a path found the attempts used up and goes round anyway, without the wait the
            // counted attempts had (`if attempt < max { attempt += 1; sleep(..) }`, no `else`).
            r.continues
                .iter()
                .filter(|c| c.outcome.may_fail() && !c.readiness && !c.waited && !timed(c))
                .find_map(|c| c.exhausted)
                .filter(|_| r.continues.iter().any(|o| o.waited))
                .map(crate::analysis::Unpaced::Spent)
        })
}

/// The longest single wait a growing, uncapped delay reaches within the site's bound, in
/// seconds: infinite without a bound; worked out from the attempt limit when the numbers are
/// written in the file; unknown otherwise.
pub(super) fn longest_wait(
    bound: &Bound,
    limit: Option<f64>,
    arg: Option<&Expr>,
    facts: &LoopFacts<'_>,
    scope: &FileScope<'_>,
    locals: &Locals<'_>,
) -> Option<f64> {
    // Without a limit on the counter the wait can grow: without end when nothing bounds the site,
    // and as far as the callers like when the counter is compared with a setting of theirs
    // (`attempt < self.max_retries`).
    let Some(n) = limit else {
        return matches!(bound, Bound::Unbounded | Bound::Bounded(BoundKind::Counter))
            .then_some(f64::INFINITY);
    };
    let Some(arg) = arg else {
        return (*bound == Bound::Unbounded).then_some(f64::INFINITY);
    };
    let mut est = crate::analysis::estimate::Estimator {
        file: scope,
        locals,
        facts,
        env: HashMap::new(),
    };
    for c in &facts.counters {
        est.env.insert(c.clone(), n);
    }
    // Places multiplied on each pass (`delay *= 2`): their initial value times the factor to the
    // number of passes.
    let grown: Vec<(String, f64)> = facts
        .mutations
        .keys()
        .filter(|k| !facts.counters.contains(*k))
        .filter_map(|k| {
            let factor = est.growth_factor(k)?;
            let init = locals.lets.get(k).and_then(|v| match v.as_slice() {
                [one] => est.eval(one),
                _ => None,
            })?;
            Some((k.clone(), init * factor.powf(n)))
        })
        .collect();
    let grows_by_mutation = !grown.is_empty();
    for (k, v) in grown {
        est.env.insert(k, v);
    }
    // A wait bound in several places (one `let delay = ..` on each failure path) is the
    // longest of them.
    let bound_in_places = crate::analysis::values::place_key(arg)
        .and_then(|k| locals.lets.get(&k))
        .filter(|inits| inits.len() > 1);
    let value = match bound_in_places {
        Some(inits) => inits
            .iter()
            .map(|init| est.eval(init))
            .collect::<Option<Vec<f64>>>()
            .map(|all| all.into_iter().fold(f64::MIN, f64::max)),
        None => est.eval(arg),
    };
    match value {
        Some(ms) => Some(ms / 1000.0),
        // A delay multiplied on each pass of an unbounded site grows without end.
        None if *bound == Bound::Unbounded && !grows_by_mutation => Some(f64::INFINITY),
        None => None,
    }
}

/// Most attempt limits [`longest_by_limit`] works the longest wait out for.
const LIMITS_WORKED_OUT: u32 = 64;

/// For each attempt limit `n` from 0 (at index `n`), the longest of `delays`' growing waits
/// without a cap when the loop's count runs up to `n`: for a loop whose limit its callers
/// give, judged once the crate's values are known. Empty when there is no such wait, or one
/// whose length is not written in the loop (a helper's).
pub(super) fn longest_by_limit(
    delays: &[Delay],
    waits: &Waits<'_>,
    facts: &LoopFacts<'_>,
    scope: &FileScope<'_>,
    locals: &Locals<'_>,
) -> Vec<f64> {
    // The sleeps come first in `delays`, in the order of `waits.sleeps`.
    let mut args = Vec::new();
    for (i, d) in delays.iter().enumerate() {
        if d.kind != DelayKind::Growing || d.capped {
            continue;
        }
        match waits.sleeps.get(i) {
            Some((_, Some(arg), _)) => args.push(*arg),
            _ => return Vec::new(),
        }
    }
    if args.is_empty() {
        return Vec::new();
    }
    (0..=LIMITS_WORKED_OUT)
        .map(|n| {
            args.iter()
                .map(|arg| {
                    longest_wait(
                        &Bound::Bounded(BoundKind::Counter),
                        Some(f64::from(n)),
                        Some(arg),
                        facts,
                        scope,
                        locals,
                    )
                    .unwrap_or(f64::INFINITY)
                })
                .fold(0.0, f64::max)
        })
        .collect()
}

pub(in crate::analysis) fn kind_of(growth: bool, counter: bool, opaque: bool) -> DelayKind {
    if growth || (counter && !opaque) {
        DelayKind::Growing
    } else if opaque {
        DelayKind::Unknown
    } else {
        DelayKind::Constant
    }
}

/// Marks the constant waits given a value that caps a growing wait of the same loop
/// (`sleep(from_secs(MAX_BACKOFF))` beside `backoff = min(backoff * 2, MAX_BACKOFF)`): the
/// sleeps come first in `delays`, in the order of `waits.sleeps`.
pub(super) fn mark_ceilings(delays: &mut [Delay], waits: &Waits<'_>, body: &Block) {
    struct Caps(HashSet<String>);
    impl<'ast> Visit<'ast> for Caps {
        fn visit_expr(&mut self, e: &'ast Expr) {
            let _guard = crate::analysis::limits::enter();
            let args: Vec<&Expr> = match e {
                Expr::Call(c)
                    if names::callee_path(&c.func)
                        .and_then(names::last)
                        .is_some_and(|n| n == "min" || n == "clamp") =>
                {
                    c.args.iter().collect()
                }
                Expr::MethodCall(m) if m.method == "min" || m.method == "clamp" => {
                    m.args.iter().collect()
                }
                _ => Vec::new(),
            };
            for a in args {
                self.0.extend(path_idents(a));
            }
            syn::visit::visit_expr(self, e);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    fn path_idents(e: &Expr) -> Vec<String> {
        struct P(Vec<String>);
        impl<'ast> Visit<'ast> for P {
            fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
                if let Some(last) = names::last(&p.path) {
                    self.0.push(last);
                }
            }
            // The values, not the functions applied to them (`Duration::from_secs`).
            fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
                let _guard = crate::analysis::limits::enter();
                for a in &c.args {
                    self.visit_expr(a);
                }
            }
        }
        let mut p = P(Vec::new());
        p.visit_expr(e);
        p.0
    }
    let grows_capped = delays
        .iter()
        .any(|d| d.kind == DelayKind::Growing && d.capped);
    if !grows_capped {
        return;
    }
    let mut caps = Caps(HashSet::new());
    caps.visit_block(body);
    for (d, (_, arg, _)) in delays.iter_mut().zip(&waits.sleeps) {
        if d.kind == DelayKind::Constant && !d.jitter {
            d.ceiling = arg.is_some_and(|a| {
                let idents = path_idents(a);
                !idents.is_empty() && idents.iter().all(|i| caps.0.contains(i))
            });
        }
    }
}

pub(in crate::analysis) fn delay_of(span: Span, t: Taint) -> Delay {
    let kind = if t.server {
        DelayKind::Server
    } else {
        kind_of(t.growth, t.counter, t.opaque)
    };
    let fallback = t
        .fallback
        .filter(|_| t.server)
        .map(|f| (kind_of(f.grows, false, f.opaque), f.random));
    Delay {
        span,
        kind,
        jitter: t.random,
        capped: t.capped,
        fallback,
        blocking: false,
        longest_secs: None,
        ceiling: false,
    }
}

/// Whether a body awaits anything.
pub(super) struct AwaitFinder(bool);

impl<'ast> Visit<'ast> for AwaitFinder {
    fn visit_expr_await(&mut self, _: &'ast syn::ExprAwait) {
        self.0 = true;
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// Finds the sleeps of a body (not inside closures, async blocks, nested loops or items), and
/// calls of local functions that may sleep.
/// The waits of a body (see [`Builder::waits`]), before their lengths are worked out.
pub(super) struct Waits<'a> {
    /// Each sleep, its duration argument, and whether it blocks the thread.
    pub(in crate::analysis) sleeps: Vec<(&'a Expr, Option<&'a Expr>, bool)>,
    /// Calls of other files' functions named for waiting.
    pub(in crate::analysis) unknown: Vec<&'a Expr>,
    /// Calls of this file's waiting helpers: the call, the helper's name, the arguments, and
    /// whether the helper is a plain sleep (whose length can be followed).
    pub(in crate::analysis) helpers:
        Vec<(&'a Expr, String, crate::analysis::Via, Vec<&'a Expr>, bool)>,
    /// Calls that wait for up to a time they are given (see [`SleepFinder::timed`]).
    pub(in crate::analysis) timed: Vec<&'a Expr>,
    /// Waits made and never awaited (see [`SleepFinder::dropped`]).
    pub(in crate::analysis) dropped: Vec<&'a Expr>,
}

impl Waits<'_> {
    /// Leaves out the waits at `addresses` (see [`Waits::calls`]).
    pub(super) fn leave_out(&mut self, addresses: &HashSet<usize>) {
        let kept = |e: &Expr| !addresses.contains(&(std::ptr::from_ref(e) as usize));
        self.sleeps.retain(|w| kept(w.0));
        self.unknown.retain(|e| kept(e));
        self.helpers.retain(|h| kept(h.0));
    }

    /// The addresses of the wait calls, for the flow to tell which paths wait.
    pub(super) fn calls(&self) -> std::collections::HashSet<usize> {
        self.sleeps
            .iter()
            .map(|w| w.0)
            .chain(self.unknown.iter().copied())
            .chain(self.helpers.iter().map(|h| h.0))
            .chain(self.timed.iter().copied())
            .map(|e| std::ptr::from_ref(e) as usize)
            .collect()
    }
}

/// The sleeps of a future's expression, its `async` blocks entered: each call, its duration
/// argument and whether it blocks. `None` when it also waits in a way whose length cannot be
/// told (a wait of another file, an error handler's backoff, a wait for a state).
pub(in crate::analysis) fn future_sleeps<'a>(
    future: &'a Expr,
    scope: &FileScope<'a>,
) -> Option<Vec<(&'a Expr, Option<&'a Expr>, bool)>> {
    let mut finder = SleepFinder {
        scope,
        sleeps: Vec::new(),
        unknown_waits: Vec::new(),
        helper_calls: Vec::new(),
        timed: Vec::new(),
        dropped: Vec::new(),
        enter_async: true,
    };
    finder.visit_expr(future);
    finder.unknown_waits.is_empty().then_some(finder.sleeps)
}

pub(super) struct SleepFinder<'a, 'c> {
    pub(in crate::analysis) scope: &'c FileScope<'a>,
    /// Each wait, its duration argument, and whether it blocks the thread.
    pub(in crate::analysis) sleeps: Vec<(&'a Expr, Option<&'a Expr>, bool)>,
    /// Calls of other files' functions named for waiting.
    pub(in crate::analysis) unknown_waits: Vec<&'a Expr>,
    pub(in crate::analysis) helper_calls:
        Vec<(&'a Expr, String, crate::analysis::Via, Vec<&'a Expr>)>,
    /// Calls that wait for up to a time they are given (`rx.recv_timeout(d)`,
    /// `sub.next_timeout(d)`, `timeout(d, op)`): a path through one that failed has waited.
    pub(in crate::analysis) timed: Vec<&'a Expr>,
    /// Waits that are futures made and dropped without `.await` (`tokio::time::sleep(d);`):
    /// they wait nothing.
    pub(in crate::analysis) dropped: Vec<&'a Expr>,
    pub(in crate::analysis) enter_async: bool,
}

/// Whether a loop nested in `body` waits (`for _ in 0..n { sleep(d).await; reconnect() }` after
/// a failure): the nested loop's waits are its own site's, but a way round the outer loop that
/// runs it has waited too.
pub(super) fn inner_loop_waits(body: &Block, scope: &FileScope<'_>) -> bool {
    /// The loops nested in a body (not inside closures or async blocks).
    struct Nested<'v> {
        loops: Vec<&'v Block>,
    }
    impl<'v> Visit<'v> for Nested<'v> {
        fn visit_expr(&mut self, e: &'v Expr) {
            let _guard = crate::analysis::limits::enter();
            match e {
                Expr::Closure(_) | Expr::Async(_) => return,
                Expr::Loop(l) => self.loops.push(&l.body),
                Expr::While(w) => self.loops.push(&w.body),
                Expr::ForLoop(f) => self.loops.push(&f.body),
                _ => {}
            }
            syn::visit::visit_expr(self, e);
        }

        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    let mut nested = Nested { loops: Vec::new() };
    nested.visit_block(body);
    // Each nested loop's own waits, as its site would find them.
    nested.loops.into_iter().any(|inner| {
        let mut finder = SleepFinder {
            scope,
            sleeps: Vec::new(),
            unknown_waits: Vec::new(),
            helper_calls: Vec::new(),
            timed: Vec::new(),
            dropped: Vec::new(),
            enter_async: false,
        };
        finder.visit_block(inner);
        !finder.sleeps.is_empty() || !finder.unknown_waits.is_empty()
    })
}

/// The calls awaited for their effect (`backoff.next().await;`, `gen.sleep().await;`: the value
/// dropped) in the statements of the loop's body before the first that makes an attempt (a call
/// of one of `ops`): they come between a failure and the next attempt, and what they wait is
/// the callees', not read here (evidence.md: a wait the analysis cannot see is not none).
pub(super) fn awaits_before_attempt(body: &Block, ops: &[&str]) -> Vec<String> {
    struct Awaits {
        names: Vec<String>,
    }
    impl Awaits {
        fn push(&mut self, awaited: &Expr) {
            let _guard = crate::analysis::limits::enter();
            if let Some(name) = crate::analysis::flow::operation_name(awaited) {
                self.names.push(name);
            }
        }
        /// The awaits that end the blocks of a statement whose value is dropped.
        fn tails(&mut self, e: &Expr) {
            let _guard = crate::analysis::limits::enter();
            let mut tail = |b: &syn::Block| match b.stmts.last() {
                Some(syn::Stmt::Expr(Expr::Await(a), None)) => self.push(&a.base),
                Some(syn::Stmt::Expr(inner @ (Expr::If(_) | Expr::Block(_)), None)) => {
                    self.tails(inner);
                }
                _ => {}
            };
            match e {
                Expr::If(i) => {
                    tail(&i.then_branch);
                    if let Some((_, els)) = &i.else_branch {
                        self.tails(els);
                    }
                }
                Expr::Block(b) => tail(&b.block),
                _ => {}
            }
        }
    }
    impl<'v> Visit<'v> for Awaits {
        fn visit_stmt(&mut self, st: &'v syn::Stmt) {
            let _guard = crate::analysis::limits::enter();
            match st {
                syn::Stmt::Expr(Expr::Await(a), Some(_)) => self.push(&a.base),
                // `if attempt > 0 { backoff(attempt).await }`: a statement's value is dropped,
                // and so is the value of the block that ends it.
                syn::Stmt::Expr(e @ (Expr::If(_) | Expr::Block(_)), _) => self.tails(e),
                _ => {}
            }
            syn::visit::visit_stmt(self, st);
        }
        fn visit_expr_closure(&mut self, _: &'v syn::ExprClosure) {}
        fn visit_expr_async(&mut self, _: &'v syn::ExprAsync) {}
        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    struct Mentions<'o> {
        ops: &'o [&'o str],
        found: bool,
    }
    impl<'v> Visit<'v> for Mentions<'_> {
        fn visit_expr(&mut self, e: &'v Expr) {
            let _guard = crate::analysis::limits::enter();
            if crate::analysis::flow::operation_name(e)
                .is_some_and(|n| self.ops.contains(&n.as_str()))
            {
                self.found = true;
                return;
            }
            syn::visit::visit_expr(self, e);
        }
    }
    let mut awaits = Awaits { names: Vec::new() };
    // Without a known attempt, which statements come before it is not known.
    if ops.is_empty() {
        return Vec::new();
    }
    for st in &body.stmts {
        let mut m = Mentions { ops, found: false };
        m.visit_stmt(st);
        if m.found {
            break;
        }
        awaits.visit_stmt(st);
    }
    awaits.names.retain(|n| !ops.contains(&n.as_str()));
    awaits.names
}

/// Whether the loop's body calls a method of a value made with a duration (`let mut delayer =
/// Delayer::new(kind, Duration::from_millis(50))`, then `delayer.delay()`): what the value
/// does with its duration is its type's, not read here, and it may wait that long, so the
/// loop's "no wait" is unknown (evidence.md: a wait the analysis cannot see is not none).
pub(super) fn calls_timed_value(body: &Block, locals: &Locals<'_>, scope: &FileScope<'_>) -> bool {
    struct Calls<'l, 's> {
        locals: &'l Locals<'l>,
        scope: &'s FileScope<'s>,
        found: bool,
    }
    impl Calls<'_, '_> {
        /// `Duration::from_millis(..)`, `Duration::new(..)`, `Duration::ZERO`: std's (or
        /// core's, tokio's re-export) duration, through the file's `use`.
        fn is_duration(&self, e: &Expr) -> bool {
            let _guard = crate::analysis::limits::enter();
            let path = match e {
                Expr::Call(c) => match &*c.func {
                    Expr::Path(p) => &p.path,
                    _ => return false,
                },
                Expr::Path(p) => &p.path,
                Expr::Reference(r) => return self.is_duration(&r.expr),
                _ => return false,
            };
            let full = self.scope.resolve(path);
            matches!(full.as_slice(), [root, time, ty, _]
                if matches!(root.as_str(), "std" | "core" | "tokio") && time == "time"
                    && ty == "Duration")
        }

        /// A constructor given a duration (`Delayer::new(kind, Duration::from_millis(50))`);
        /// not a builder chain, where a duration is as often a request's time limit.
        fn made_with_duration(&self, e: &Expr) -> bool {
            let _guard = crate::analysis::limits::enter();
            match e {
                Expr::Call(c) => c.args.iter().any(|a| self.is_duration(a)),
                Expr::Try(t) => self.made_with_duration(&t.expr),
                Expr::Paren(p) => self.made_with_duration(&p.expr),
                _ => false,
            }
        }
    }
    impl<'v> Visit<'v> for Calls<'_, '_> {
        // A call made for its effect (`delayer.delay();`): its value is not the operation's
        // result the loop tests.
        fn visit_stmt(&mut self, st: &'v syn::Stmt) {
            let _guard = crate::analysis::limits::enter();
            if let syn::Stmt::Expr(Expr::MethodCall(m), Some(_)) = st {
                if let Expr::Path(p) = &*m.receiver {
                    if let Some(name) = p.path.get_ident().map(ToString::to_string) {
                        if self.locals.lets.get(&name).is_some_and(|values| {
                            values.len() == 1 && self.made_with_duration(values[0])
                        }) {
                            self.found = true;
                        }
                    }
                }
            }
            syn::visit::visit_stmt(self, st);
        }
        fn visit_expr_closure(&mut self, _: &'v syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    let mut calls = Calls {
        locals,
        scope,
        found: false,
    };
    calls.visit_block(body);
    calls.found
}

/// Whether a function body retries with waits of its own: a loop in it waits, or a function of
/// this file it calls does (`depth` levels down; `self.poll(..)` delegating to the method that
/// loops). Not through `skip` (the function being analysed).
pub(super) fn retries_with_waits(
    body: &Block,
    scope: &FileScope<'_>,
    skip: &str,
    depth: usize,
) -> bool {
    /// Calls of this file's functions in a body: `self.m(..)`, `f(..)`, `Self::f(..)`.
    struct Calls(Vec<(String, crate::analysis::Via)>);
    impl<'v> Visit<'v> for Calls {
        fn visit_expr(&mut self, e: &'v Expr) {
            let _guard = crate::analysis::limits::enter();
            match e {
                Expr::Closure(_) => return,
                Expr::MethodCall(m) if matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self")) =>
                {
                    self.0
                        .push((m.method.to_string(), crate::analysis::Via::Method));
                }
                Expr::Call(c) => {
                    if let Some(p) = names::callee_path(&c.func) {
                        let segs = names::segments(p);
                        if segs.len() == 1 || (segs.len() == 2 && segs[0] == "Self") {
                            let via = crate::analysis::Via::of_path(&segs, None);
                            self.0.push((segs[segs.len() - 1].clone(), via));
                        }
                    }
                }
                _ => {}
            }
            syn::visit::visit_expr(self, e);
        }

        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    let _guard = crate::analysis::limits::enter();
    if inner_loop_waits(body, scope) {
        return true;
    }
    if depth == 0 {
        return false;
    }
    let mut calls = Calls(Vec::new());
    calls.visit_block(body);
    calls.0.iter().any(|(name, via)| {
        name != skip
            && scope
                .function_via(name, Some(via))
                .is_some_and(|f| retries_with_waits(f.block, scope, skip, depth - 1))
    })
}

/// A call named for waiting up to a given time: `recv_timeout`, `next_timeout`, `timeout`
/// (`timed-operation-words` of the vocabulary).
pub(super) fn is_timed_name(name: &str) -> bool {
    crate::analysis::known::builtin().part_of(
        crate::analysis::known::List::TimedOperationWords,
        &name.to_ascii_lowercase(),
    )
}

impl<'a> SleepFinder<'a, '_> {
    /// The timeout call of an awaited timeout whose outcome is dropped (`drop(timeout(d,
    /// fut).await)`, `timeout(d, fut).await.ok()`), as the statement or `let _` holds it.
    fn dropped_timeout(&self, e: &'a Expr) -> Option<(&'a Expr, &'a syn::ExprCall)> {
        let _guard = crate::analysis::limits::enter();
        match e {
            Expr::Call(c)
                if c.args.len() == 1
                    && names::callee_path(&c.func).is_some_and(|p| p.is_ident("drop")) =>
            {
                self.dropped_timeout(&c.args[0])
            }
            Expr::MethodCall(m) if m.method == "ok" && m.args.is_empty() => {
                self.dropped_timeout(&m.receiver)
            }
            Expr::Paren(p) => self.dropped_timeout(&p.expr),
            Expr::Await(a) => self.scope.awaited_timeout(e).map(|c| (&*a.base, c)),
            _ => None,
        }
    }
}

/// Whether the statements after a `let` read its binding only to ask whether the timeout it
/// holds elapsed (`let r = timeout(d, token.cancelled()).await; if r.is_ok() { return }`), and
/// read it at least once.
fn read_only_for_elapsed(rest: &[syn::Stmt], name: &syn::Ident) -> bool {
    struct Uses<'n> {
        name: &'n syn::Ident,
        all: usize,
        elapsed: usize,
    }
    impl<'v> Visit<'v> for Uses<'_> {
        fn visit_expr(&mut self, e: &'v Expr) {
            let _guard = crate::analysis::limits::enter();
            if let Expr::MethodCall(m) = e {
                if (m.method == "is_ok" || m.method == "is_err")
                    && matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident(self.name))
                {
                    self.elapsed += 1;
                }
            }
            syn::visit::visit_expr(self, e);
        }
        fn visit_path(&mut self, p: &'v syn::Path) {
            if p.is_ident(self.name) {
                self.all += 1;
            }
        }
        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    let mut uses = Uses {
        name,
        all: 0,
        elapsed: 0,
    };
    for st in rest {
        uses.visit_stmt(st);
    }
    uses.all > 0 && uses.all == uses.elapsed
}

impl<'a> Visit<'a> for SleepFinder<'a, '_> {
    // `let r = timeout(d, token.cancelled()).await; if r.is_ok() { return }`: a timeout tested
    // only for whether it elapsed is a wait of up to `d`, cut short by the future, not an
    // attempt (its outcome says whether the future finished in time).
    fn visit_block(&mut self, b: &'a Block) {
        let _guard = crate::analysis::limits::enter();
        for (i, st) in b.stmts.iter().enumerate() {
            if let syn::Stmt::Local(l) = st {
                if let (syn::Pat::Ident(id), Some(init)) = (&l.pat, &l.init) {
                    if let Some(c) = self.scope.awaited_timeout(&init.expr) {
                        if read_only_for_elapsed(&b.stmts[i + 1..], &id.ident) {
                            self.sleeps.push((&init.expr, c.args.first(), false));
                            for a in &c.args {
                                self.visit_expr(a);
                            }
                            continue;
                        }
                    }
                }
            }
            self.visit_stmt(st);
        }
    }

    // `tokio::time::sleep(d);` or `let _ = sleep(d);`: a future made and dropped unpolled waits
    // nothing (what it is given is still code of the loop).
    fn visit_stmt(&mut self, st: &'a syn::Stmt) {
        let _guard = crate::analysis::limits::enter();
        let made = match st {
            syn::Stmt::Expr(e, Some(_)) => Some(e),
            syn::Stmt::Local(l) if matches!(l.pat, syn::Pat::Wild(_)) => {
                l.init.as_ref().map(|i| &*i.expr)
            }
            _ => None,
        };
        // `timeout(d, token.cancelled()).await;`, `let _ = ..`, `drop(..)`: a timeout whose
        // outcome is dropped is no attempt (nothing tests what it ran); it waits up to `d`,
        // cut short only by the future it is given.
        if let Some((e, c)) = made.and_then(|e| self.dropped_timeout(e)) {
            self.sleeps.push((e, c.args.first(), false));
            for a in &c.args {
                self.visit_expr(a);
            }
            return;
        }
        if let Some(e @ Expr::Call(c)) = made {
            if names::callee_path(&c.func)
                .is_some_and(|p| self.scope.is_future_sleep(&self.scope.resolve(p)))
            {
                self.dropped.push(e);
                for a in &c.args {
                    self.visit_expr(a);
                }
                return;
            }
        }
        syn::visit::visit_stmt(self, st);
    }

    // `tokio::select! { _ = sleep(d) => {}, _ = token.cancelled() => return }`: the raced
    // futures wait like any other code of the loop.
    fn visit_macro(&mut self, m: &'a syn::Macro) {
        let _guard = crate::analysis::limits::enter();
        for future in self.scope.select_futures(m) {
            self.visit_expr(future);
        }
    }

    fn visit_expr(&mut self, e: &'a Expr) {
        let _guard = crate::analysis::limits::enter();
        match e {
            // A wait handler (`[extend] wait-handlers`) returns only after a wait of its own
            // choosing: a wait whose length is the callee's.
            Expr::Await(a)
                if matches!(&*a.base, Expr::MethodCall(m)
                    if self.scope.is_wait_handler(&m.method.to_string())) =>
            {
                self.unknown_waits.push(e);
                syn::visit::visit_expr(self, e);
            }
            // A blocking handler a team taught (`txn.settle(err)`): the same, without `.await`.
            Expr::MethodCall(m) if self.scope.is_wait_handler(&m.method.to_string()) => {
                self.unknown_waits.push(e);
                syn::visit::visit_expr(self, e);
            }
            // `drop(timeout(d, token.cancelled()).await)`, wherever it stands.
            Expr::Call(c)
                if c.args.len() == 1
                    && names::callee_path(&c.func).is_some_and(|p| p.is_ident("drop"))
                    && self.dropped_timeout(e).is_some() =>
            {
                if let Some((call, t)) = self.dropped_timeout(e) {
                    self.sleeps.push((call, t.args.first(), false));
                    for a in &t.args {
                        self.visit_expr(a);
                    }
                }
            }
            // `if timeout(d, token.cancelled()).await.is_ok() { break }`: the same wait.
            Expr::MethodCall(m)
                if (m.method == "is_ok" || m.method == "is_err")
                    && self.scope.awaited_timeout(&m.receiver).is_some() =>
            {
                if let Some(c) = self.scope.awaited_timeout(&m.receiver) {
                    self.sleeps.push((&m.receiver, c.args.first(), false));
                    for a in &c.args {
                        self.visit_expr(a);
                    }
                }
            }
            Expr::Async(a) if self.enter_async => self.visit_block(&a.block),
            Expr::Closure(_)
            | Expr::Async(_)
            | Expr::Loop(_)
            | Expr::While(_)
            | Expr::ForLoop(_) => {}
            Expr::Call(c) => {
                if let Some(p) = names::callee_path(&c.func) {
                    if !c.args.is_empty() && names::last(p).is_some_and(|n| is_timed_name(&n)) {
                        self.timed.push(e);
                    }
                    let full = self.scope.resolve(p);
                    if self.scope.is_sleep(&full) {
                        // A wait of zero is no wait (`sleep(Duration::ZERO)`).
                        let zero = c
                            .args
                            .first()
                            .and_then(crate::analysis::crate_values::duration)
                            == Some(0);
                        if !zero {
                            self.sleeps.push((
                                e,
                                c.args.first(),
                                self.scope.is_blocking_sleep(&full),
                            ));
                        }
                    } else if full.last().is_some_and(|l| {
                        names::is_wait_like_name(l)
                            && self.scope.probe(|| {
                                self.scope
                                    .function_via(
                                        l,
                                        Some(&crate::analysis::Via::of_path(&full, None)),
                                    )
                                    .is_none()
                            })
                    }) && !c.args.is_empty()
                    {
                        // A wait of another file: its length cannot be told.
                        self.unknown_waits.push(e);
                    } else if let Some(last) = full.last() {
                        if full.len() == 1
                            || full.first().is_some_and(|s| s == "Self" || s == "self")
                        {
                            self.helper_calls.push((
                                e,
                                last.clone(),
                                crate::analysis::Via::of_path(&full, None),
                                c.args.iter().collect(),
                            ));
                        }
                    }
                }
                syn::visit::visit_expr(self, e);
            }
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                if !m.args.is_empty() && is_timed_name(&name) {
                    self.timed.push(e);
                }
                if self.scope.is_sleep_method(&name)
                    && m.args.len() == 1
                    && matches!(m.args.first(), Some(Expr::Closure(_)))
                {
                    // `rx.wait_for(|up| *up).await`: waits for a state, not for a time.
                    self.unknown_waits.push(e);
                } else if self.scope.is_sleep_method(&name) && m.args.len() == 1 {
                    self.sleeps.push((e, m.args.first(), false));
                } else if m.args.is_empty() && self.scope.is_period_tick(&name) {
                    // `interval.tick().await`: waits the interval's fixed period, if a timer
                    // crate made it (see [`Builder::ticks_a_known_period`]).
                    self.sleeps.push((e, None, false));
                } else if matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self"))
                    || self.scope.probe(|| {
                        self.scope
                            .function_via(&name, Some(&crate::analysis::Via::Method))
                            .is_some()
                    })
                {
                    // `self.pause(..)`, or `budget.before_round(..)` where the file defines
                    // the one method of that name: a helper of this file that may wait.
                    self.helper_calls.push((
                        e,
                        name,
                        crate::analysis::Via::Method,
                        m.args.iter().collect(),
                    ));
                }
                syn::visit::visit_expr(self, e);
            }
            _ => syn::visit::visit_expr(self, e),
        }
    }

    fn visit_item(&mut self, _: &'a syn::Item) {}
}

/// Marks as capped a growing wait built from a value multiplied each pass (`seconds *= 2`)
/// that a way out of the loop tests (`if seconds > 64 { return Err(..) }`, `while tempo <
/// MAX`): no wait is made past that limit, so the limit is the wait's cap (evidence.md #4: a
/// limit that is in the code is read, not reported as none).
pub(super) fn mark_exit_caps(
    delays: &mut [Delay],
    waits: &Waits<'_>,
    l: &Expr,
    body: &Block,
    facts: &LoopFacts<'_>,
) {
    if facts.grown.is_empty()
        || !delays
            .iter()
            .any(|d| d.kind == DelayKind::Growing && !d.capped)
    {
        return;
    }
    let mut tested: Vec<String> = exit_tests(l)
        .into_iter()
        .chain(guarded_growth(body))
        .filter(|n| facts.grown.contains(n))
        .collect();
    if tested.is_empty() {
        return;
    }
    tested = derived_names(body, &tested, false);
    for (d, (_, arg, _)) in delays.iter_mut().zip(&waits.sleeps) {
        if d.kind == DelayKind::Growing
            && !d.capped
            && arg.is_some_and(|a| {
                tested
                    .iter()
                    .any(|n| crate::analysis::values::mentions(a, n))
            })
        {
            d.capped = true;
        }
    }
}

/// The names whose every step in the body (`wait *= 2`, `wait <<= 1`, `wait += step`, any
/// `wait = ..` made from `wait` itself) is taken only under a test that holds the name below a
/// limit (`if wait < 60 { wait *= 2 }`): the value stops growing there, so the limit (times one
/// step) is its cap (evidence.md #6: a cap is a cap whatever form it takes). Closures and nested
/// loops are left alone.
fn guarded_growth(body: &Block) -> Vec<String> {
    #[derive(Default)]
    struct Steps {
        /// The names the enclosing `if` tests hold below a limit, innermost last.
        held: Vec<Vec<String>>,
        /// Each name grown, and whether every step of it so far was under such a test.
        grown: Vec<(String, bool)>,
    }
    impl Steps {
        fn step(&mut self, target: &Expr, value: Option<&Expr>) {
            let Some(name) = crate::analysis::values::place_key(target) else {
                return;
            };
            // `wait = wait * 2`, `wait = wait.saturating_mul(2)`: any value made from the name
            // itself may be a step; a fresh value (`wait = BASE`) is not.
            if value.is_some_and(|v| !crate::analysis::values::mentions(v, &name)) {
                return;
            }
            let under = self.held.iter().any(|h| h.contains(&name));
            match self.grown.iter_mut().find(|(n, _)| *n == name) {
                Some((_, all)) => *all &= under,
                None => self.grown.push((name, under)),
            }
        }
    }
    impl<'v> Visit<'v> for Steps {
        fn visit_expr(&mut self, e: &'v Expr) {
            let _guard = crate::analysis::limits::enter();
            match e {
                Expr::Closure(_) | Expr::Loop(_) | Expr::While(_) | Expr::ForLoop(_) => {}
                Expr::If(i) => {
                    let mut held = Vec::new();
                    below_a_limit(&i.cond, &mut held);
                    self.visit_expr(&i.cond);
                    self.held.push(held);
                    self.visit_block(&i.then_branch);
                    self.held.pop();
                    if let Some((_, other)) = &i.else_branch {
                        self.visit_expr(other);
                    }
                }
                Expr::Assign(a) => {
                    self.step(&a.left, Some(&a.right));
                    syn::visit::visit_expr(self, e);
                }
                Expr::Binary(b)
                    if matches!(
                        b.op,
                        syn::BinOp::MulAssign(_)
                            | syn::BinOp::ShlAssign(_)
                            | syn::BinOp::AddAssign(_)
                    ) =>
                {
                    self.step(&b.left, None);
                    syn::visit::visit_expr(self, e);
                }
                _ => syn::visit::visit_expr(self, e),
            }
        }
        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    /// The names a condition holds below a limit (`wait < MAX`, `60 > wait`), through `&&`.
    fn below_a_limit(cond: &Expr, out: &mut Vec<String>) {
        let _guard = crate::analysis::limits::enter();
        match cond {
            Expr::Paren(p) => below_a_limit(&p.expr, out),
            Expr::Binary(b) => {
                let lesser = match b.op {
                    syn::BinOp::And(_) => {
                        below_a_limit(&b.left, out);
                        below_a_limit(&b.right, out);
                        return;
                    }
                    syn::BinOp::Lt(_) | syn::BinOp::Le(_) => &*b.left,
                    syn::BinOp::Gt(_) | syn::BinOp::Ge(_) => &*b.right,
                    _ => return,
                };
                if let Some(k) = crate::analysis::values::place_key(lesser) {
                    out.push(k);
                }
            }
            _ => {}
        }
    }
    let mut steps = Steps::default();
    steps.visit_block(body);
    steps
        .grown
        .into_iter()
        .filter(|(_, all)| *all)
        .map(|(n, _)| n)
        .collect()
}

/// The names a test that leads out of a loop holds under a limit: what an `if` whose branch
/// ends in a `return` or a `break` finds above one (`if seconds > 64`, `if MAX <= tempo`), and
/// what a `while` condition keeps below one (`while tempo < MAX`). A test the other way round,
/// or an equality, caps nothing (closures and nested loops left alone).
fn exit_tests(l: &Expr) -> Vec<String> {
    /// `leaves_above`: the test leads out when it holds (an `if`), so the name on the greater
    /// side is the one held under the limit; otherwise (a `while`) the lesser side.
    fn compared(e: &Expr, leaves_above: bool, out: &mut Vec<String>) {
        struct C<'o>(&'o mut Vec<String>, bool);
        impl<'v> Visit<'v> for C<'_> {
            fn visit_expr_binary(&mut self, b: &'v syn::ExprBinary) {
                let _guard = crate::analysis::limits::enter();
                let greater = match b.op {
                    syn::BinOp::Gt(_) | syn::BinOp::Ge(_) => Some(&*b.left),
                    syn::BinOp::Lt(_) | syn::BinOp::Le(_) => Some(&*b.right),
                    _ => None,
                };
                let lesser = match b.op {
                    syn::BinOp::Gt(_) | syn::BinOp::Ge(_) => Some(&*b.right),
                    syn::BinOp::Lt(_) | syn::BinOp::Le(_) => Some(&*b.left),
                    _ => None,
                };
                let held = if self.1 { greater } else { lesser };
                if let Some(k) = held.and_then(crate::analysis::values::place_key) {
                    self.0.push(k);
                }
                syn::visit::visit_expr_binary(self, b);
            }
        }
        C(out, leaves_above).visit_expr(e);
    }
    struct Exits(Vec<String>);
    impl<'v> Visit<'v> for Exits {
        fn visit_expr(&mut self, e: &'v Expr) {
            let _guard = crate::analysis::limits::enter();
            match e {
                Expr::Closure(_) | Expr::Loop(_) | Expr::While(_) | Expr::ForLoop(_) => return,
                Expr::If(i) => {
                    let leaves = i.then_branch.stmts.last().is_some_and(|s| {
                        matches!(s, syn::Stmt::Expr(Expr::Return(_) | Expr::Break(_), _))
                    });
                    if leaves {
                        compared(&i.cond, true, &mut self.0);
                    }
                }
                _ => {}
            }
            syn::visit::visit_expr(self, e);
        }
        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    let mut exits = Exits(Vec::new());
    match l {
        Expr::While(w) => {
            compared(&w.cond, false, &mut exits.0);
            exits.visit_block(&w.body);
        }
        Expr::Loop(x) => exits.visit_block(&x.body),
        Expr::ForLoop(f) => exits.visit_block(&f.body),
        _ => {}
    }
    exits.0
}

/// The waits of a loop's body after which every path leaves the loop: a wait in a statement
/// of a block whose last statement is a `break` of this loop (`label`: its label) or a
/// `return`, with no `continue` in that statement or after it. No attempt follows such a wait
/// (a pause before `break Some(password)`, a sleep before `return Err(e)`): it paces nothing,
/// and is no wait between attempts. `calls`: the addresses of the body's waits
/// ([`Waits::calls`]).
pub(super) fn waits_on_way_out(
    body: &Block,
    label: Option<&str>,
    calls: &HashSet<usize>,
) -> HashSet<usize> {
    /// The waits among `calls` inside `e` (not in closures, async blocks, nested loops or
    /// items, as [`SleepFinder`] finds them), and whether a `continue` is in it: one in a
    /// nested loop only when labelled, as it may go round this loop.
    struct Inside<'c> {
        calls: &'c HashSet<usize>,
        found: Vec<usize>,
        continues: bool,
        nested: usize,
        /// Whether a macro may hide a `continue`: not in the statement that leaves
        /// (`return Err(eyre!(..))`), whose value is made on the way out.
        macros_continue: bool,
    }
    impl<'v> Visit<'v> for Inside<'_> {
        fn visit_expr(&mut self, e: &'v Expr) {
            let _guard = crate::analysis::limits::enter();
            match e {
                Expr::Continue(c) if self.nested == 0 || c.label.is_some() => {
                    self.continues = true;
                }
                Expr::Closure(_) | Expr::Async(_) => {}
                Expr::Loop(_) | Expr::While(_) | Expr::ForLoop(_) => {
                    self.nested += 1;
                    syn::visit::visit_expr(self, e);
                    self.nested -= 1;
                }
                _ => {
                    if self.nested == 0 && self.calls.contains(&(std::ptr::from_ref(e) as usize)) {
                        self.found.push(std::ptr::from_ref(e) as usize);
                    }
                    syn::visit::visit_expr(self, e);
                }
            }
        }
        // A macro may hide a `continue`.
        fn visit_macro(&mut self, _: &'v syn::Macro) {
            self.continues |= self.macros_continue;
        }
        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    struct Blocks<'l, 'c> {
        label: Option<&'l str>,
        calls: &'c HashSet<usize>,
        out: HashSet<usize>,
    }
    impl Blocks<'_, '_> {
        /// Whether the statement leaves the loop: a `break` of it, or a `return`.
        fn leaves(&self, st: &syn::Stmt) -> bool {
            match st {
                syn::Stmt::Expr(Expr::Return(_), _) => true,
                syn::Stmt::Expr(Expr::Break(b), _) => b
                    .label
                    .as_ref()
                    .is_none_or(|l| Some(l.ident.to_string().as_str()) == self.label),
                _ => false,
            }
        }
    }
    impl<'v> Visit<'v> for Blocks<'_, '_> {
        fn visit_block(&mut self, b: &'v Block) {
            let _guard = crate::analysis::limits::enter();
            if b.stmts.last().is_some_and(|st| self.leaves(st)) {
                let mut continues_after = false;
                for (i, st) in b.stmts.iter().rev().enumerate() {
                    let mut inside = Inside {
                        calls: self.calls,
                        found: Vec::new(),
                        continues: false,
                        nested: 0,
                        macros_continue: i > 0,
                    };
                    inside.visit_stmt(st);
                    continues_after |= inside.continues;
                    if !continues_after {
                        self.out.extend(inside.found);
                    }
                }
            }
            syn::visit::visit_block(self, b);
        }
        fn visit_expr(&mut self, e: &'v Expr) {
            let _guard = crate::analysis::limits::enter();
            match e {
                // A nested loop's `break` leaves that loop only; closures and async blocks are
                // not this body's flow.
                Expr::Closure(_)
                | Expr::Async(_)
                | Expr::Loop(_)
                | Expr::While(_)
                | Expr::ForLoop(_) => {}
                _ => syn::visit::visit_expr(self, e),
            }
        }
        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    let mut blocks = Blocks {
        label,
        calls,
        out: HashSet::new(),
    };
    blocks.visit_block(body);
    blocks.out
}

//! What limits a retry: whether a condition tests an attempt counter, a clock or a schedule.

use syn::visit::Visit;
use syn::{BinOp, Expr};

use super::known::{self, List};
use super::names;
use super::values::{place_key, Locals, LoopFacts};
use super::BoundKind;

/// Calls that ask a clock whether time is up: std's `Instant` methods (API, here), and
/// `clock-checks` of the vocabulary.
fn is_clock_call(name: &str) -> bool {
    matches!(
        name,
        "elapsed" | "duration_since" | "saturating_duration_since" | "checked_duration_since"
    ) || known::builtin().word(List::ClockChecks, name)
}

/// Calls that ask a schedule for the next wait (`None` when it is exhausted): std's iterator
/// and collections' (API, here), and `schedule-calls` of the vocabulary.
pub fn is_schedule_call(name: &str) -> bool {
    matches!(name, "next" | "pop" | "pop_front") || known::builtin().word(List::ScheduleCalls, name)
}

/// Calls that ask an attempt budget whether another try is allowed: `budget-checks` of the
/// vocabulary, and std's `checked_sub` (API, here).
fn is_limit_call(name: &str) -> bool {
    known::builtin().word(List::BudgetChecks, name) || name == "checked_sub"
}

/// Whether `guard` (an `if` condition, a match guard, a `while` condition) tests something that
/// runs out: an attempt counter compared with a limit, a clock, a schedule.
///
/// A name like `max_retries` counts only inside a comparison: a flag such as
/// `retry_canceled_requests` is a switch, not a limit. A place the loop steps by one
/// (`attempt += 1`) counts wherever it appears.
#[must_use]
pub fn bound_kind(guard: &Expr, facts: &LoopFacts<'_>, locals: &Locals<'_>) -> Option<BoundKind> {
    let _guard = crate::analysis::limits::enter();
    bound_kind_depth(guard, facts, locals, 0)
}

fn bound_kind_depth(
    guard: &Expr,
    facts: &LoopFacts<'_>,
    locals: &Locals<'_>,
    depth: usize,
) -> Option<BoundKind> {
    struct V<'f, 'a> {
        facts: &'f LoopFacts<'a>,
        locals: &'f Locals<'a>,
        depth: usize,
        kind: Option<BoundKind>,
        in_comparison: usize,
    }
    impl V<'_, '_> {
        fn name(&mut self, name: &str) {
            if self.kind.is_some() {
                return;
            }
            if self.facts.counters.contains(name)
                || (self.in_comparison > 0
                    && (names::is_counter_name(name) || self.facts.grown.contains(name)))
            {
                self.kind = Some(BoundKind::Counter);
            } else if names::is_time_name(name) {
                self.kind = Some(BoundKind::Deadline);
            }
        }
    }
    impl<'ast> Visit<'ast> for V<'_, '_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            let _guard = crate::analysis::limits::enter();
            if self.kind.is_some() {
                return;
            }
            match e {
                Expr::Binary(b)
                    if matches!(
                        b.op,
                        BinOp::Lt(_)
                            | BinOp::Le(_)
                            | BinOp::Gt(_)
                            | BinOp::Ge(_)
                            | BinOp::Eq(_)
                            | BinOp::Ne(_)
                    ) =>
                {
                    self.in_comparison += 1;
                    syn::visit::visit_expr(self, e);
                    self.in_comparison -= 1;
                }
                Expr::MethodCall(m) => {
                    let n = m.method.to_string();
                    if is_clock_call(&n) {
                        self.kind = Some(BoundKind::Deadline);
                    } else if is_schedule_call(&n) {
                        self.kind = Some(BoundKind::Schedule);
                    } else if is_limit_call(&n) {
                        self.kind = Some(BoundKind::Counter);
                    } else {
                        // Not the method's own name: `err.is_timeout()` asks about the error,
                        // not the clock.
                        self.visit_expr(&m.receiver);
                        // `backoff.as_mut().and_then(|p| p.next())`: std's combinators call
                        // the closure they are handed there and then, so what it asks is
                        // part of the test.
                        let runs_now = is_combinator(&n);
                        for a in &m.args {
                            match a {
                                Expr::Closure(c) if runs_now => self.visit_expr(&c.body),
                                _ => self.visit_expr(a),
                            }
                        }
                    }
                }
                Expr::Call(c) => {
                    if let Some(last) = names::callee_path(&c.func).and_then(names::last) {
                        if is_limit_call(&last) {
                            self.kind = Some(BoundKind::Counter);
                            return;
                        }
                        // `may_retry()`, a closure of the function (`let mut may_retry = || {
                        // tries += 1; tries <= 3 }`): the test is its body.
                        if self.depth == 0 && c.args.is_empty() {
                            if let Some([Expr::Closure(closure)]) =
                                self.locals.lets.get(&last).map(Vec::as_slice)
                            {
                                if let Some(kind) = closure_bound(&closure.body) {
                                    self.kind = Some(kind);
                                    return;
                                }
                            }
                        }
                    }
                    for a in &c.args {
                        self.visit_expr(a);
                    }
                }
                Expr::Closure(_) => {}
                _ => {
                    if let Some(k) = place_key(e) {
                        if self.facts.counters.contains(&k) {
                            self.kind = Some(BoundKind::Counter);
                            return;
                        }
                        // `let may_retry = attempt < MAX;` then `if may_retry`.
                        if self.depth == 0 {
                            if let Some(inits) = self.locals.lets.get(&k) {
                                for init in inits {
                                    if let Some(kind) =
                                        bound_kind_depth(init, self.facts, self.locals, 1)
                                    {
                                        self.kind = Some(kind);
                                        return;
                                    }
                                }
                            }
                        }
                    }
                    syn::visit::visit_expr(self, e);
                }
            }
        }
        fn visit_ident(&mut self, i: &'ast proc_macro2::Ident) {
            self.name(&i.to_string());
        }
    }
    let _guard = crate::analysis::limits::enter();
    let mut v = V {
        facts,
        locals,
        depth,
        kind: None,
        in_comparison: 0,
    };
    v.visit_expr(guard);
    v.kind
}

/// std's `Option`, `Result` and `bool` methods that call the closure they are handed at once
/// (API, here): what the closure computes is part of the expression's value.
fn is_combinator(name: &str) -> bool {
    matches!(
        name,
        "map"
            | "and_then"
            | "or_else"
            | "map_or"
            | "map_or_else"
            | "is_some_and"
            | "is_none_or"
            | "is_ok_and"
            | "is_err_and"
            | "filter"
            | "then"
            | "unwrap_or_else"
    )
}

/// The limit a closure's body keeps: a place the body steps by one (`tries += 1`, `*n += 1`)
/// and compares (`tries <= 3`) is an attempt counter the closure owns.
fn closure_bound(body: &Expr) -> Option<BoundKind> {
    struct Steps<'s> {
        stepped: Vec<String>,
        compared: Vec<&'s Expr>,
    }
    impl<'s> Visit<'s> for Steps<'s> {
        fn visit_expr(&mut self, e: &'s Expr) {
            let _guard = crate::analysis::limits::enter();
            if let Expr::Binary(b) = e {
                match b.op {
                    BinOp::AddAssign(_) | BinOp::SubAssign(_) => {
                        if let Some(k) = place_key(strip_deref(&b.left)) {
                            self.stepped.push(k);
                        }
                    }
                    BinOp::Lt(_) | BinOp::Le(_) | BinOp::Gt(_) | BinOp::Ge(_) => {
                        self.compared.push(&b.left);
                        self.compared.push(&b.right);
                    }
                    _ => {}
                }
            }
            syn::visit::visit_expr(self, e);
        }
    }
    let _guard = crate::analysis::limits::enter();
    let mut v = Steps {
        stepped: Vec::new(),
        compared: Vec::new(),
    };
    v.visit_expr(body);
    v.compared
        .iter()
        .filter_map(|e| place_key(strip_deref(e)))
        .any(|k| v.stepped.contains(&k))
        .then_some(BoundKind::Counter)
}

/// `*n` → `n`: a count kept behind a reference is the same count.
fn strip_deref(mut e: &Expr) -> &Expr {
    loop {
        match e {
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => e = &u.expr,
            Expr::Paren(p) => e = &p.expr,
            _ => return e,
        }
    }
}

/// Whether a guard asks a call that changes state the function keeps across attempts: a method
/// of a value a `let mut` before the loop bound, which the loop neither binds nor assigns
/// (`if !backoff.tick().await`, `let Some(d) = policy.next_delay()
/// else { .. }`), or a call handed such a value by `&mut` (`next_retry(&mut attempts, max)`).
/// What such a call answers is its own code's (a count, a budget, a schedule), not read here:
/// an exit it guards is one the analysis cannot read, and the loop's bound is unknown, not absent.
#[must_use]
pub fn asks_kept_state(guard: &Expr, locals: &Locals<'_>, facts: &LoopFacts<'_>) -> bool {
    struct V<'f, 'a> {
        locals: &'f Locals<'a>,
        facts: &'f LoopFacts<'a>,
        found: bool,
    }
    impl V<'_, '_> {
        /// A `let mut` of the function that the loop neither binds nor assigns: state made
        /// before the loop and changed only through the calls given it.
        fn kept(&self, e: &Expr) -> bool {
            place_key(e)
                .is_some_and(|k| self.locals.mutable.contains(&k) && !self.facts.remakes(&k))
        }

        /// Whether a call's arguments hand it kept state by `&mut`.
        fn lends_kept(&self, args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>) -> bool {
            args.iter().any(
                |a| matches!(a, Expr::Reference(r) if r.mutability.is_some() && self.kept(&r.expr)),
            )
        }
    }
    impl<'ast> Visit<'ast> for V<'_, '_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            let _guard = crate::analysis::limits::enter();
            if self.found {
                return;
            }
            match e {
                Expr::MethodCall(m) if self.kept(&m.receiver) || self.lends_kept(&m.args) => {
                    self.found = true;
                }
                Expr::Call(c) if self.lends_kept(&c.args) => self.found = true,
                Expr::Closure(_) => {}
                _ => syn::visit::visit_expr(self, e),
            }
        }
    }
    let mut v = V {
        locals,
        facts,
        found: false,
    };
    v.visit_expr(guard);
    v.found
}

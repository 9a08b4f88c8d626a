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
                        for a in &m.args {
                            self.visit_expr(a);
                        }
                    }
                }
                Expr::Call(c) => {
                    if let Some(last) = names::callee_path(&c.func).and_then(names::last) {
                        if is_limit_call(&last) {
                            self.kind = Some(BoundKind::Counter);
                            return;
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

//! How many times a site goes round: the limit of a loop's header or body, an attempt counter and its default, a `for` over a count.

use std::collections::HashMap;

use syn::visit::Visit;
use syn::{Block, Expr};

use crate::analysis::flow::{FlowResult, Outcome};
use crate::analysis::names;
use crate::analysis::scope::FileScope;
use crate::analysis::values::{place_key, Locals, LoopFacts};
use crate::analysis::{Bound, BoundKind};
use crate::source::Span;

#[allow(clippy::wildcard_imports)]
use super::*;

impl<'a> Builder<'a, '_> {
    pub(super) fn loop_bound(
        l: &'a Expr,
        result: &FlowResult,
        facts: &LoopFacts<'a>,
        locals: &Locals<'a>,
        in_timeout: bool,
        taken: &[Span],
    ) -> Bound {
        let _guard = crate::analysis::limits::enter();
        let header = match l {
            Expr::ForLoop(f) => for_bound(&f.expr),
            Expr::While(w) => match &*w.cond {
                Expr::Let(le) => {
                    if names::last_call(&le.expr)
                        .is_some_and(|n| crate::analysis::bound::is_schedule_call(&n))
                    {
                        Some(BoundKind::Schedule)
                    } else {
                        None
                    }
                }
                cond => crate::analysis::bound::bound_kind(cond, facts, locals),
            },
            _ => None,
        };
        // A limit tested on some paths bounds the loop only if every path that goes round again
        // passes it or steps the counter it tests (an error that `continue`s before the count is
        // a way round the limit).
        // `for attempt in 1..` steps its counter on every pass itself: a path that passed the
        // counter's test is limited.
        let header_steps = matches!(l, Expr::ForLoop(f) if counts_attempts(&f.expr));
        let every_path_limited = result
            .continues
            .iter()
            .filter(|c| c.outcome.may_fail() && !c.readiness)
            .all(|c| {
                c.limited(!facts.counters.is_empty())
                    || (header_steps && c.bound == Some(BoundKind::Counter))
                    // Going round from the branch of `if let Some(n) = next.take()`: the next
                    // pass finds `next` empty and takes the other branch, which counts.
                    || taken.iter().any(|t| t.start <= c.span.start && c.span.end <= t.end)
            });
        let from_body = result.bounded_by.filter(|_| every_path_limited);
        // A path that may leave through a `?` on a call after the failure is bounded by what
        // that call decides, which is not read here: the bound is unknown, not absent.
        let unread = result
            .continues
            .iter()
            .filter(|c| c.outcome.may_fail() && !c.readiness)
            .any(|c| c.unread_exit);
        match header.or(from_body) {
            Some(k) => Bound::Bounded(k),
            None if in_timeout => Bound::Bounded(BoundKind::Deadline),
            None if unread => Bound::Bounded(BoundKind::Unread),
            None => Bound::Unbounded,
        }
    }
}

/// `while res.is_err()` / `while let Err(_) = op()`: the body runs on failure.
pub(super) fn while_outcome(cond: &Expr) -> Outcome {
    let _guard = crate::analysis::limits::enter();
    match cond {
        Expr::Let(l) => crate::analysis::flow::pat_outcome(&l.pat).unwrap_or(Outcome::Neutral),
        Expr::MethodCall(m) if m.method == "is_err" => Outcome::Failure,
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => match &*u.expr {
            Expr::MethodCall(m) if m.method == "is_ok" => Outcome::Failure,
            _ => Outcome::Neutral,
        },
        Expr::Binary(b) if matches!(b.op, syn::BinOp::And(_)) => {
            let l = while_outcome(&b.left);
            if l == Outcome::Neutral {
                while_outcome(&b.right)
            } else {
                l
            }
        }
        Expr::Paren(p) => while_outcome(&p.expr),
        _ => Outcome::Neutral,
    }
}

/// `for _ in 0..n`, `for attempt in 1..=MAX`, `.enumerate()`: the loop variable counts attempts.
pub(super) fn counts_attempts(iter: &Expr) -> bool {
    let _guard = crate::analysis::limits::enter();
    match iter {
        Expr::Range(_) => true,
        Expr::Paren(p) => counts_attempts(&p.expr),
        Expr::MethodCall(m) => {
            matches!(
                m.method.to_string().as_str(),
                "rev" | "take" | "step_by" | "skip"
            ) && counts_attempts(&m.receiver)
        }
        _ => false,
    }
}

/// The value of an integer literal (`2`, `3u32`).
pub(in crate::analysis) fn int_lit(e: &Expr) -> Option<u64> {
    match e {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<u64>().ok(),
        _ => None,
    }
}

/// How many times a `for` over a range of integer literals runs (`0..2` → 2, `1..=2` → 2).
pub(super) fn literal_range_len(iter: &Expr) -> Option<u64> {
    let Expr::Range(r) = iter else {
        return None;
    };
    let (from, to) = (int_lit(r.start.as_deref()?)?, int_lit(r.end.as_deref()?)?);
    let len = match r.limits {
        syn::RangeLimits::HalfOpen(_) => to.checked_sub(from)?,
        syn::RangeLimits::Closed(_) => to.checked_sub(from)? + 1,
    };
    Some(len)
}

/// How many passes a `while left > 0` (or `left != 0`, `left >= 1`) runs when `left` is bound
/// once, to an integer literal, and the body only steps it down by one.
pub(super) fn countdown_len(
    cond: &Expr,
    locals: &Locals<'_>,
    facts: &LoopFacts<'_>,
) -> Option<u64> {
    let Expr::Binary(b) = cond else {
        return None;
    };
    let lit = int_lit;
    let floor = match (b.op, lit(&b.right)?) {
        (syn::BinOp::Gt(_) | syn::BinOp::Ne(_), 0) | (syn::BinOp::Ge(_), 1) => 0,
        _ => return None,
    };
    let Expr::Path(p) = &*b.left else {
        return None;
    };
    let var = p.path.get_ident()?.to_string();
    let [init] = locals.lets.get(&var)?.as_slice() else {
        return None;
    };
    let start = lit(init)?;
    let steps = facts.mutations.get(&var)?;
    let one = |e: &Expr| lit(e) == Some(1);
    steps
        .iter()
        .all(|m| matches!(m, crate::analysis::values::Mutation::Compound(syn::BinOp::SubAssign(_), e) if one(e)))
        .then(|| start.saturating_sub(floor))
}

pub(super) fn for_bound(iter: &Expr) -> Option<BoundKind> {
    let _guard = crate::analysis::limits::enter();
    match iter {
        Expr::Range(r) => r.end.as_ref().map(|_| BoundKind::Range),
        Expr::Paren(p) => for_bound(&p.expr),
        Expr::Reference(r) => for_bound(&r.expr),
        Expr::MethodCall(m) => match m.method.to_string().as_str() {
            "take" | "take_while" => Some(BoundKind::Take),
            "cycle" => None,
            _ => for_bound(&m.receiver),
        },
        Expr::Call(c) => {
            let n = names::callee_path(&c.func).and_then(names::last);
            match n.as_deref() {
                Some("repeat" | "repeat_with" | "successors" | "from_fn") => None,
                _ => Some(BoundKind::Schedule),
            }
        }
        _ => Some(BoundKind::Schedule),
    }
}

/// The largest value the attempt counter takes while the loop can still wait: from the `for`
/// range, or the smallest limit a counter is compared with (`attempt < 5` → 4).
pub(super) fn attempt_limit(
    l: Option<&Expr>,
    body: &Block,
    facts: &LoopFacts<'_>,
    scope: &FileScope<'_>,
    locals: &Locals<'_>,
) -> Option<f64> {
    struct C<'e, 'c, 'a> {
        est: &'e crate::analysis::estimate::Estimator<'c, 'a>,
        facts: &'e LoopFacts<'a>,
        limit: Option<f64>,
    }
    impl<'ast> Visit<'ast> for C<'_, '_, '_> {
        fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
            let _guard = crate::analysis::limits::enter();
            // The counter, possibly with an offset: `attempt`, `attempt + 1`, `retries - 1`.
            let is_counter =
                |e: &Expr| place_key(e).is_some_and(|k| self.facts.counters.contains(&k));
            let offset = |e: &Expr| -> Option<f64> {
                match e {
                    _ if is_counter(e) => Some(0.0),
                    Expr::Binary(x) if is_counter(&x.left) => {
                        let k = self.est.eval(&x.right)?;
                        match x.op {
                            syn::BinOp::Add(_) => Some(k),
                            syn::BinOp::Sub(_) => Some(-k),
                            _ => None,
                        }
                    }
                    _ => None,
                }
            };
            let (n, counter_left) = if let Some(off) = offset(&b.left) {
                (self.est.eval(&b.right).map(|v| v - off), true)
            } else if let Some(off) = offset(&b.right) {
                (self.est.eval(&b.left).map(|v| v - off), false)
            } else {
                (None, false)
            };
            if let Some(n) = n {
                // The counter's last value at which the loop still goes round.
                let v = match (b.op, counter_left) {
                    (syn::BinOp::Lt(_) | syn::BinOp::Ge(_) | syn::BinOp::Eq(_), true)
                    | (syn::BinOp::Gt(_) | syn::BinOp::Le(_) | syn::BinOp::Eq(_), false) => {
                        Some(n - 1.0)
                    }
                    (syn::BinOp::Le(_) | syn::BinOp::Gt(_), true)
                    | (syn::BinOp::Ge(_) | syn::BinOp::Lt(_), false) => Some(n),
                    _ => None,
                };
                if let Some(v) = v {
                    self.limit = Some(self.limit.map_or(v, |x: f64| x.min(v)));
                }
            }
            syn::visit::visit_expr_binary(self, b);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let _guard = crate::analysis::limits::enter();
    let est = crate::analysis::estimate::Estimator {
        file: scope,
        locals,
        facts,
        env: HashMap::new(),
    };
    if let Some(Expr::ForLoop(f)) = l {
        if let Expr::Range(r) = &*f.expr {
            let end = est.eval(r.end.as_deref()?)?;
            return Some(match r.limits {
                syn::RangeLimits::HalfOpen(_) => end - 1.0,
                syn::RangeLimits::Closed(_) => end,
            });
        }
    }
    let mut c = C {
        est: &est,
        facts,
        limit: None,
    };
    if let Some(Expr::While(w)) = l {
        c.visit_expr(&w.cond);
    }
    c.visit_block(body);
    c.limit
}

/// A range whose end is a field or a parameter (`0..self.limit`, `1..=max_retries`): a number of
/// rounds someone else sets.
pub(super) fn range_end_is_setting(iter: &Expr) -> bool {
    let _guard = crate::analysis::limits::enter();
    match iter {
        Expr::Paren(p) => range_end_is_setting(&p.expr),
        Expr::Range(r) => r.end.as_deref().is_some_and(|end| {
            let end = match end {
                Expr::Paren(p) => &*p.expr,
                other => other,
            };
            match end {
                Expr::Field(_) => true,
                Expr::Path(p) => p
                    .path
                    .get_ident()
                    .is_some_and(|i| !i.to_string().chars().all(|c| c.is_uppercase() || c == '_')),
                _ => false,
            }
        }),
        _ => false,
    }
}

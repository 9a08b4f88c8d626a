//! What the closure handed to a retry crate says about each failure: the `backoff` crate (and
//! crates shaped like it) lets the operation return `backoff::Error::Transient { .. }` to go
//! again and `backoff::Error::Permanent(..)` to stop, so the statuses of the arms that build a
//! transient error are the statuses retried, and a resend after only those is known.

use syn::visit::Visit;
use syn::{Expr, Pat};

use super::flow::short;
use super::names;
use super::scope::FileScope;
use super::span::LineIndex;
use super::status::StatusEval;
use super::values::Locals;
use super::{StatusRetry, StatusSet};

/// The verdicts of one operation closure.
#[derive(Default)]
pub(crate) struct Verdicts {
    /// Statuses whose arm builds a transient error (another attempt).
    pub statuses: Vec<StatusRetry>,
    /// A transient error built outside any status arm (a transport error, any error): the
    /// resend follows a failure that may have been processed.
    pub other_transient: bool,
}

impl Verdicts {
    /// Whether every resend follows a status the server sends for a request it did not process
    /// (429, 503, 529): resending a write cannot apply it twice.
    pub fn resend_safe(&self) -> bool {
        let unprocessed = StatusSet::single(429)
            .union(StatusSet::single(503))
            .union(StatusSet::single(529));
        !self.other_transient
            && !self.statuses.is_empty()
            && self
                .statuses
                .iter()
                .all(|s| s.statuses.intersect(unprocessed.complement()).is_empty())
    }
}

/// Whether an expression builds a transient verdict (`Some(true)`), a permanent one
/// (`Some(false)`), or neither: `backoff::Error::Transient { .. }`, `Error::transient(e)`,
/// `.map_err(backoff::Error::transient)`, `RetryError::Permanent(e)`.
fn verdict_of(e: &Expr) -> Option<bool> {
    let last = match e {
        Expr::Struct(s) => s.path.segments.last().map(|s| s.ident.to_string()),
        Expr::Call(c) => names::callee_path(&c.func).and_then(names::last),
        Expr::Path(p) if p.path.segments.len() > 1 => names::last(&p.path),
        _ => None,
    }?;
    match last.to_ascii_lowercase().as_str() {
        "transient" | "retry_after" => Some(true),
        "permanent" | "fatal" => Some(false),
        _ => None,
    }
}

/// Whether an expression, outside nested closures, builds a transient verdict.
fn builds_transient(e: &Expr) -> bool {
    struct Find(bool);
    impl<'a> Visit<'a> for Find {
        fn visit_expr(&mut self, e: &'a Expr) {
            let _guard = crate::analysis::limits::enter();
            if self.0 {
                return;
            }
            if verdict_of(e) == Some(true) {
                self.0 = true;
                return;
            }
            if !matches!(e, Expr::Closure(_)) {
                syn::visit::visit_expr(self, e);
            }
        }

        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    let mut f = Find(false);
    f.visit_expr(e);
    f.0
}

/// The verdicts of an operation closure's body. `None`: it builds no verdict of a retry crate
/// (every error is retried, or the crate decides elsewhere).
pub(crate) fn verdicts(
    body: &Expr,
    scope: &FileScope<'_>,
    locals: &Locals<'_>,
    index: &LineIndex<'_>,
) -> Option<Verdicts> {
    let _guard = crate::analysis::limits::enter();
    if !builds_transient(body) {
        return None;
    }
    let status = StatusEval {
        file: scope,
        locals,
        status_idents: Vec::new(),
        depth: 0,
    };
    let mut walk = Walk {
        status: &status,
        index,
        out: Verdicts::default(),
        in_status_arm: 0,
    };
    walk.visit_expr(body);
    Some(walk.out)
}

struct Walk<'s, 'a, 'c> {
    status: &'s StatusEval<'a, 'c>,
    index: &'s LineIndex<'a>,
    out: Verdicts,
    /// Inside an arm of a match on a status: its transient verdicts are accounted for.
    in_status_arm: usize,
}

impl<'a> Visit<'a> for Walk<'_, 'a, '_> {
    fn visit_expr(&mut self, e: &'a Expr) {
        let _guard = crate::analysis::limits::enter();
        match e {
            Expr::Closure(_) => {}
            Expr::Match(m) if self.status.is_status_expr(&m.expr) => {
                self.visit_expr(&m.expr);
                let mut remaining = StatusSet::all();
                for arm in &m.arms {
                    let set = self.arm_set(&arm.pat, remaining);
                    let set = if let Some((_, g)) = &arm.guard {
                        self.status.cond(g).map(|s| set.intersect(s.then))
                    } else {
                        remaining = remaining.intersect(set.complement());
                        Some(set)
                    };
                    if builds_transient(&arm.body) {
                        match set {
                            Some(statuses) => {
                                let span = match &arm.guard {
                                    Some((_, g)) => self.index.of(&**g),
                                    None => self.index.of(&arm.pat),
                                };
                                let text = self.index.text(span);
                                let names_throttling = statuses.contains(429)
                                    || statuses.contains(503)
                                    || ["429", "503", "TOO_MANY_REQUESTS", "SERVICE_UNAVAILABLE"]
                                        .iter()
                                        .any(|n| text.contains(n));
                                self.out.statuses.push(StatusRetry {
                                    span,
                                    statuses,
                                    reason: format!(
                                        "`{}`, whose arm makes a transient error",
                                        short(text)
                                    ),
                                    names_throttling,
                                });
                            }
                            None => self.out.other_transient = true,
                        }
                    }
                    self.in_status_arm += 1;
                    self.visit_expr(&arm.body);
                    self.in_status_arm -= 1;
                }
            }
            _ => {
                if self.in_status_arm == 0 && verdict_of(e) == Some(true) {
                    self.out.other_transient = true;
                }
                syn::visit::visit_expr(self, e);
            }
        }
    }

    fn visit_item(&mut self, _: &'a syn::Item) {}
}

impl Walk<'_, '_, '_> {
    /// The statuses an arm's pattern takes, of those the earlier arms left.
    fn arm_set(&self, pat: &Pat, remaining: StatusSet) -> StatusSet {
        self.status
            .pattern(pat)
            .unwrap_or(remaining)
            .intersect(remaining)
    }
}

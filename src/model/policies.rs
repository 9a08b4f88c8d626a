//! Retry policies built with retry crates, as retry sites: what a builder chain or struct literal
//! of backon, backoff, tokio-retry(2), retry, again or tryhard says about the bound, the delay's
//! growth, its cap and its jitter, with each crate's defaults.

use syn::visit::Visit;
use syn::{Expr, Lit};

use super::names;
use super::scope::FileScope;
use super::span::LineIndex;
use super::values::{place_key, Locals};
use super::{Bound, BoundKind, Delay, DelayKind, RetrySite, SiteKind};
use crate::diagnostic::Span;

/// How to fix a policy of one crate, per defect (label texts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PolicyAdvice {
    pub crate_name: &'static str,
    pub bound: &'static str,
    pub jitter: &'static str,
    pub cap: &'static str,
    pub fixed: &'static str,
    pub immediate: &'static str,
}

/// One step of a builder chain: a method and its arguments.
struct Step<'a> {
    name: String,
    args: Vec<&'a Expr>,
}

/// A chain `Root::ctor(args).a(..).b(..)`: the resolved root path and the steps after it.
struct Chain<'a> {
    root: Vec<String>,
    ctor_args: Vec<&'a Expr>,
    steps: Vec<Step<'a>>,
}

impl Chain<'_> {
    fn has(&self, name: &str) -> bool {
        self.steps.iter().any(|s| s.name == name)
    }

    fn has_any(&self, names: &[&str]) -> bool {
        self.steps.iter().any(|s| names.contains(&s.name.as_str()))
    }

    fn step(&self, name: &str) -> Option<&Step<'_>> {
        self.steps.iter().rev().find(|s| s.name == name)
    }

    fn root_is(&self, ty: &str, ctor: &[&str]) -> bool {
        let n = self.root.len();
        n >= 2 && self.root[n - 2] == ty && ctor.contains(&self.root[n - 1].as_str())
    }

    fn rooted_in(&self, krate: &str) -> bool {
        self.root.first().is_some_and(|r| r == krate)
    }
}

/// What a policy amounts to.
struct Facts {
    advice: PolicyAdvice,
    unbounded: bool,
    kind: Option<DelayKind>,
    jitter: bool,
    capped: bool,
    /// Base delay (ms) and growth per attempt, with the attempt limit, when written.
    longest_secs: Option<f64>,
}

const BACKON: PolicyAdvice = PolicyAdvice {
    crate_name: "backon",
    bound: "`without_max_times()` retries for ever: keep `with_max_times(n)` or set `with_total_delay(..)`",
    jitter: "backon's builders have jitter off by default: call `.with_jitter()`",
    cap: "`without_max_delay()` lets the wait grow without end: keep `with_max_delay(..)`",
    fixed: "`ConstantBuilder` waits the same time every attempt: use `ExponentialBuilder` with `.with_jitter()`",
    immediate: "no wait between attempts",
};

const BACKOFF: PolicyAdvice = PolicyAdvice {
    crate_name: "backoff",
    bound: "`max_elapsed_time: None` retries for ever, and backoff has no attempt cap: set `max_elapsed_time`",
    jitter: "`randomization_factor` 0 removes backoff's jitter: keep the default 0.5",
    cap: "no `max_interval`: set one",
    fixed: "`Constant` waits the same time every attempt (and never stops): use `ExponentialBackoff`",
    immediate: "no wait between attempts",
};

const TOKIO_RETRY: PolicyAdvice = PolicyAdvice {
    crate_name: "tokio-retry",
    bound: "this strategy is an endless iterator: add `.take(n)`",
    jitter: "no jitter: add `.map(jitter)` before `.take(n)`",
    cap: "the delay grows without end: add `.max_delay(..)`",
    fixed: "`FixedInterval` waits the same time every attempt: use `ExponentialBackoff` with `.map(jitter)`",
    immediate: "no wait between attempts",
};

const RETRY: PolicyAdvice = PolicyAdvice {
    crate_name: "retry",
    bound: "this delay iterator never ends: add `.take(n)`",
    jitter: "no jitter: add `.map(retry::delay::jitter)`",
    cap: "the delay grows without end: cap it (`.map(|d| d.min(max))`)",
    fixed: "`Fixed` waits the same time every attempt: use `Exponential` with `.map(jitter)`",
    immediate: "`NoDelay` retries at once",
};

const TRYHARD: PolicyAdvice = PolicyAdvice {
    crate_name: "tryhard",
    bound: "unbounded",
    jitter: "tryhard's backoffs have no jitter: use `.custom_backoff(..)` with a random factor",
    cap: "the delay grows without end: add `.max_delay(..)`",
    fixed: "`fixed_backoff` waits the same time every attempt",
    immediate: "`retries(n)` without a backoff retries at once: add `.exponential_backoff(..)`",
};

const AGAIN: PolicyAdvice = PolicyAdvice {
    crate_name: "again",
    bound: "unbounded",
    jitter: "again's policies have jitter off by default: call `.with_jitter(true)`",
    cap: "the delay grows without end: call `.with_max_delay(..)`",
    fixed: "`RetryPolicy::fixed` waits the same time every attempt",
    immediate: "no wait between attempts",
};

fn arg_ms(scope: &FileScope<'_>, locals: &Locals<'_>, e: Option<&&Expr>) -> Option<f64> {
    let facts = super::values::LoopFacts::default();
    let est = super::estimate::Estimator {
        file: scope,
        locals,
        facts: &facts,
        env: std::collections::HashMap::new(),
    };
    e.and_then(|e| est.eval(e))
}

/// Reads one chain. `None`: not a policy of a crate we know.
fn facts_of(chain: &Chain<'_>, scope: &FileScope<'_>, locals: &Locals<'_>) -> Option<Facts> {
    let ms = |e: Option<&&Expr>| arg_ms(scope, locals, e);
    // backon
    for (ty, kind) in [
        ("ExponentialBuilder", DelayKind::Growing),
        ("FibonacciBuilder", DelayKind::Growing),
        ("ConstantBuilder", DelayKind::Constant),
    ] {
        if chain.root_is(ty, &["default", "new"]) {
            let unbounded = chain.has("without_max_times") && !chain.has("with_total_delay");
            let capped = !chain.has("without_max_delay");
            let longest = if capped {
                None
            } else if unbounded {
                Some(f64::INFINITY)
            } else {
                // min_delay (1 s) doubling over max_times (3) attempts.
                let min = chain
                    .step("with_min_delay")
                    .map_or(Some(1000.0), |s| ms(s.args.first()));
                let times = chain
                    .step("with_max_times")
                    .map_or(Some(3.0), |s| ms(s.args.first()));
                let factor = chain
                    .step("with_factor")
                    .map_or(Some(2.0), |s| ms(s.args.first()));
                match (min, times, factor) {
                    (Some(m), Some(t), Some(f)) => Some(m * f.powf(t) / 1000.0),
                    _ => None,
                }
            };
            return Some(Facts {
                advice: BACKON,
                unbounded,
                kind: Some(kind),
                jitter: chain.has("with_jitter"),
                capped,
                longest_secs: longest,
            });
        }
    }
    // tokio-retry / tokio-retry2 / retry: strategies are iterators.
    let iter_crate = if chain.rooted_in("tokio_retry") || chain.rooted_in("tokio_retry2") {
        Some(TOKIO_RETRY)
    } else if chain.rooted_in("retry") {
        Some(RETRY)
    } else {
        None
    };
    let iter_kind = if chain.root_is("ExponentialBackoff", &["from_millis"])
        || chain.root_is("FibonacciBackoff", &["from_millis"])
        || chain.root_is("ExponentialFactorBackoff", &["from_millis"])
        || chain.root_is("Exponential", &["from_millis"])
        || chain.root_is("Fibonacci", &["from_millis"])
    {
        Some(DelayKind::Growing)
    } else if chain.root_is("FixedInterval", &["from_millis", "new"])
        || chain.root_is("Fixed", &["from_millis"])
    {
        Some(DelayKind::Constant)
    } else if chain.root_is("NoDelay", &["new"])
        || chain.root.last().is_some_and(|l| l == "NoDelay")
    {
        None
    } else {
        return facts_of_other(chain, scope, locals);
    };
    let advice = iter_crate.unwrap_or(TOKIO_RETRY);
    let take = chain.step("take").and_then(|s| ms(s.args.first()));
    let unbounded = !chain.has_any(&["take", "take_while"]);
    let capped = chain.has_any(&["max_delay", "max_interval"]);
    let jitter = chain.steps.iter().any(|s| {
        s.name == "map"
            && s.args.iter().any(|a| {
                quote::ToTokens::to_token_stream(a)
                    .to_string()
                    .contains("jitter")
            })
    });
    let longest = if iter_kind == Some(DelayKind::Growing) && !capped {
        if unbounded {
            Some(f64::INFINITY)
        } else {
            // from_millis(b) yields b, b^2, b^3, ... (times `factor`).
            let base = ms(chain.ctor_args.first());
            let factor = chain
                .step("factor")
                .map_or(Some(1.0), |s| ms(s.args.first()));
            match (base, take, factor) {
                (Some(b), Some(n), Some(f)) => Some(b.powf(n) * f / 1000.0),
                _ => None,
            }
        }
    } else {
        None
    };
    Some(Facts {
        advice,
        unbounded,
        kind: iter_kind,
        jitter,
        capped,
        longest_secs: longest,
    })
}

/// backoff's builder and tryhard / again policies.
fn facts_of_other(chain: &Chain<'_>, scope: &FileScope<'_>, locals: &Locals<'_>) -> Option<Facts> {
    let _ = (scope, locals);
    // backoff: ExponentialBackoffBuilder::new()...build()
    if chain.root_is("ExponentialBackoffBuilder", &["new", "default"]) {
        let unbounded = chain
            .step("with_max_elapsed_time")
            .is_some_and(|s| s.args.first().is_some_and(|a| is_none(a)));
        let jitter = !chain
            .step("with_randomization_factor")
            .is_some_and(|s| s.args.first().is_some_and(|a| is_zero(a)));
        return Some(Facts {
            advice: BACKOFF,
            unbounded,
            kind: Some(DelayKind::Growing),
            jitter,
            capped: true,
            longest_secs: None,
        });
    }
    if chain.root_is("Constant", &["new"]) && chain.root.iter().any(|s| s == "backoff") {
        return Some(Facts {
            advice: BACKOFF,
            unbounded: true,
            kind: Some(DelayKind::Constant),
            jitter: false,
            capped: true,
            longest_secs: None,
        });
    }
    // tryhard: retry_fn(f).retries(n)[.exponential_backoff(d)|.fixed_backoff(d)|...]
    if chain.root.last().is_some_and(|l| l == "retry_fn") && chain.has("retries") {
        let (kind, jitter) = if chain.has_any(&["exponential_backoff", "linear_backoff"]) {
            (Some(DelayKind::Growing), false)
        } else if chain.has("fixed_backoff") {
            (Some(DelayKind::Constant), false)
        } else if chain.has("custom_backoff") {
            (Some(DelayKind::Unknown), false)
        } else {
            (None, false)
        };
        return Some(Facts {
            advice: TRYHARD,
            unbounded: false,
            kind,
            jitter,
            capped: chain.has("max_delay"),
            longest_secs: None,
        });
    }
    // again: RetryPolicy::exponential(d) / ::fixed(d)
    if chain.root_is("RetryPolicy", &["exponential", "fixed"]) {
        let growing = chain.root.last().is_some_and(|l| l == "exponential");
        let jitter = chain
            .step("with_jitter")
            .is_some_and(|s| s.args.first().is_some_and(|a| !is_false(a)));
        return Some(Facts {
            advice: AGAIN,
            unbounded: false,
            kind: Some(if growing {
                DelayKind::Growing
            } else {
                DelayKind::Constant
            }),
            jitter,
            capped: true,
            longest_secs: None,
        });
    }
    None
}

fn is_none(e: &Expr) -> bool {
    matches!(e, Expr::Path(p) if p.path.is_ident("None"))
}

fn is_zero(e: &Expr) -> bool {
    matches!(e, Expr::Lit(l) if matches!(&l.lit, Lit::Float(f) if f.base10_parse::<f64>().is_ok_and(|v| v == 0.0))
        || matches!(&l.lit, Lit::Int(i) if i.base10_digits() == "0"))
}

fn is_false(e: &Expr) -> bool {
    matches!(e, Expr::Lit(l) if matches!(&l.lit, Lit::Bool(b) if !b.value))
}

/// backoff's struct literal: `ExponentialBackoff { max_elapsed_time: None, .. }`.
fn struct_facts(s: &syn::ExprStruct, scope: &FileScope<'_>) -> Option<Facts> {
    let full = scope.resolve(&s.path);
    if full.last().map(String::as_str) != Some("ExponentialBackoff") {
        return None;
    }
    let field = |name: &str| {
        s.fields.iter().find_map(|f| match &f.member {
            syn::Member::Named(n) if n == name => Some(&f.expr),
            _ => None,
        })
    };
    let unbounded = field("max_elapsed_time").is_some_and(is_none);
    let jitter = !field("randomization_factor").is_some_and(is_zero);
    Some(Facts {
        advice: BACKOFF,
        unbounded,
        kind: Some(DelayKind::Growing),
        jitter,
        capped: true,
        longest_secs: None,
    })
}

/// Unrolls `a.b(..).c(..)` into its root call and steps; follows a root that is a local
/// variable bound to an earlier chain (`let s = ExponentialBackoff::from_millis(10); s.take(3)`).
fn chain_of<'a>(
    e: &'a Expr,
    scope: &FileScope<'a>,
    locals: &Locals<'a>,
    depth: usize,
) -> Option<Chain<'a>> {
    if depth > 8 {
        return None;
    }
    match e {
        Expr::MethodCall(m) => {
            let mut c = chain_of(&m.receiver, scope, locals, depth + 1)?;
            c.steps.push(Step {
                name: m.method.to_string(),
                args: m.args.iter().collect(),
            });
            Some(c)
        }
        Expr::Call(c) => {
            let p = names::callee_path(&c.func)?;
            Some(Chain {
                root: scope.resolve(p),
                ctor_args: c.args.iter().collect(),
                steps: Vec::new(),
            })
        }
        Expr::Paren(p) => chain_of(&p.expr, scope, locals, depth + 1),
        Expr::Reference(r) => chain_of(&r.expr, scope, locals, depth + 1),
        Expr::Path(_) => {
            let key = place_key(e)?;
            match locals.lets.get(&key).map(Vec::as_slice) {
                Some([one]) => chain_of(one, scope, locals, depth + 1),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Finds the policies of one function body.
pub fn policy_sites<'a>(
    block: &'a syn::Block,
    scope: &FileScope<'a>,
    locals: &Locals<'a>,
    index: &LineIndex<'a>,
) -> Vec<RetrySite> {
    let mut v = Finder {
        scope,
        locals,
        index,
        found: Vec::new(),
        consumed: Vec::new(),
    };
    v.visit_block(block);
    // A chain extended later (`let s = ..; s.take(3)`) is reported once, at its last extension.
    let consumed = v.consumed;
    v.found
        .into_iter()
        .filter(|(span, _)| !consumed.iter().any(|c| c == span))
        .map(|(span, facts)| site_of(span, &facts))
        .collect()
}

struct Finder<'a, 'c> {
    scope: &'c FileScope<'a>,
    locals: &'c Locals<'a>,
    index: &'c LineIndex<'a>,
    found: Vec<(Span, Facts)>,
    /// Spans of chains that a later chain extends through a variable.
    consumed: Vec<Span>,
}

impl<'a> Visit<'a> for Finder<'a, '_> {
    fn visit_expr(&mut self, e: &'a Expr) {
        match e {
            Expr::MethodCall(_) | Expr::Call(_) => {
                if let Some(chain) = chain_of(e, self.scope, self.locals, 0) {
                    if let Some(facts) = facts_of(&chain, self.scope, self.locals) {
                        // The variable this chain starts from, if any, is consumed by it.
                        if let Some(root_var) = root_variable(e) {
                            if let Some([init]) = self.locals.lets.get(&root_var).map(Vec::as_slice)
                            {
                                self.consumed.push(self.index.of(*init));
                            }
                        }
                        self.found.push((self.index.of(e), facts));
                        // Do not look inside the chain again (its prefixes are the same policy).
                        for a in chain_args(e) {
                            self.visit_expr(a);
                        }
                        return;
                    }
                }
                syn::visit::visit_expr(self, e);
            }
            Expr::Struct(s) => {
                if let Some(facts) = struct_facts(s, self.scope) {
                    self.found.push((self.index.of(e), facts));
                }
                syn::visit::visit_expr(self, e);
            }
            _ => syn::visit::visit_expr(self, e),
        }
    }

    fn visit_item(&mut self, _: &'a syn::Item) {}
}

/// The arguments along a chain (closures passed to `.map(..)`, operations to `retry_fn(..)`).
fn chain_args(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::MethodCall(m) => {
            let mut v = chain_args(&m.receiver);
            v.extend(m.args.iter());
            v
        }
        Expr::Call(c) => c.args.iter().collect(),
        Expr::Paren(p) => chain_args(&p.expr),
        _ => Vec::new(),
    }
}

/// `s` in `s.take(3)`.
fn root_variable(e: &Expr) -> Option<String> {
    match e {
        Expr::MethodCall(m) => root_variable(&m.receiver),
        Expr::Paren(p) => root_variable(&p.expr),
        Expr::Reference(r) => root_variable(&r.expr),
        Expr::Path(p) if p.path.segments.len() == 1 => Some(p.path.segments[0].ident.to_string()),
        _ => None,
    }
}

fn site_of(span: Span, f: &Facts) -> RetrySite {
    let delays = f
        .kind
        .map(|kind| Delay {
            span,
            kind,
            jitter: f.jitter,
            capped: f.capped,
            fallback: None,
            blocking: false,
            longest_secs: f.longest_secs,
        })
        .into_iter()
        .collect();
    RetrySite {
        kind: SiteKind::Policy,
        head: span,
        bound: if f.unbounded {
            Bound::Unbounded
        } else {
            Bound::Bounded(BoundKind::Schedule)
        },
        delays,
        statuses: Vec::new(),
        keys: Vec::new(),
        retry_path: None,
        in_async: false,
        reads_retry_after: true,
        writes: Vec::new(),
        sends_key: true,
        calls: Vec::new(),
        function: String::new(),
        policy: Some(f.advice),
        blind: true,
        resend_safe: true,
    }
}

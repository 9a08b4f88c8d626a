//! Retry policies built with retry crates, as retry sites: what a builder chain or struct literal
//! of backon, backoff, tokio-retry(2), retry, again or tryhard says about the bound, the delay's
//! growth, its cap and its jitter, with each crate's defaults.

use syn::visit::Visit;
use syn::{Expr, Lit};

use super::names;
use super::scope::FileScope;
use super::span::LineIndex;
use super::values::{place_key, Locals};
use super::{Bound, BoundKind, Delay, DelayKind, RetrySite, StatusRetry, StatusSet};
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
        || chain.root_is("LinearBackoff", &["from_millis", "new"])
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
    // tokio-retry2's `max_interval`/`max_duration` limit the total time, not one wait.
    let total_ms = chain
        .step("max_interval")
        .or_else(|| chain.step("max_duration"))
        .and_then(|s| ms(s.args.first()));
    let unbounded = !chain.has_any(&["take", "take_while", "max_interval", "max_duration"]);
    let capped = chain.has_any(&["max_delay", "max_delay_millis"]);
    let jitter = chain
        .steps
        .iter()
        .any(|s| s.name == "map" && s.args.iter().any(|a| names::text(a).contains("jitter")));
    // `.take(max_retries)` with the enclosing function's parameter: the callers choose how many
    // waits, so a growth without a cap has no end.
    let caller_count = take.is_none()
        && chain
            .step("take")
            .and_then(|s| s.args.first())
            .and_then(|a| place_key(a))
            .is_some_and(|k| locals.params.contains(&k));
    let longest = if iter_kind == Some(DelayKind::Growing) && !capped {
        if unbounded || caller_count {
            Some(f64::INFINITY)
        } else if let (None, Some(total)) = (take, total_ms) {
            // Only a total budget: one wait can take most of it.
            Some(total / 1000.0)
        } else {
            let base = ms(chain.ctor_args.first());
            let factor = chain
                .step("factor")
                .map_or(Some(1.0), |s| ms(s.args.first()));
            match (base, take, factor) {
                // retry's `Exponential`: base * 2^n.
                (Some(b), Some(n), _) if advice == RETRY => Some(b * 2f64.powf(n) / 1000.0),
                // tokio-retry2's `ExponentialFactorBackoff::from_millis(b, f)`: b * f^n.
                (Some(b), Some(n), _)
                    if chain
                        .root
                        .last()
                        .is_some_and(|l| l == "ExponentialFactorBackoff") =>
                {
                    let f = ms(chain.ctor_args.get(1)).unwrap_or(2.0);
                    Some(b * f.powf(n) / 1000.0)
                }
                // tokio-retry's `ExponentialBackoff::from_millis(b)`: b, b^2, b^3, ... (times `factor`).
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

const RETRY_POLICIES: PolicyAdvice = PolicyAdvice {
    crate_name: "retry-policies",
    bound: "unbounded",
    jitter: "`Jitter::None` turns off retry-policies' default full jitter: keep `Jitter::Full`",
    cap: "the default cap is 30 minutes: set `retry_bounds(min, max)` with a max of seconds",
    fixed: "the wait does not grow",
    immediate: "no wait between attempts",
};

const RETRYING: PolicyAdvice = PolicyAdvice {
    crate_name: "retrying",
    bound: "no `stop`: retried until it succeeds; add `stop = attempts(n)`",
    jitter: "`wait = exponential(..)` has no jitter: use `wait = random(..)` or jitter by hand",
    cap: "the exponential wait's default max is an hour: set `max = ..` in seconds",
    fixed: "`wait = fixed(..)` waits the same time every attempt",
    immediate: "no `wait`: the attempts follow each other at once",
};

/// backoff's builder and tryhard / again / retry-policies policies.
fn facts_of_other(chain: &Chain<'_>, scope: &FileScope<'_>, locals: &Locals<'_>) -> Option<Facts> {
    let ms = |e: Option<&&Expr>| arg_ms(scope, locals, e);
    // retry-policies / reqwest-retry: ExponentialBackoff::builder()...build_with_*(..)
    if chain.root_is("ExponentialBackoff", &["builder"]) {
        let jitter = !chain.step("jitter").is_some_and(|s| {
            s.args
                .first()
                .is_some_and(|a| names::text(a).contains("None"))
        });
        // Default bounds: 1 s doubling, capped at 30 minutes.
        let max_ms = chain
            .step("retry_bounds")
            .and_then(|s| ms(s.args.get(1)))
            .unwrap_or(30.0 * 60_000.0);
        let min_ms = chain
            .step("retry_bounds")
            .and_then(|s| ms(s.args.first()))
            .unwrap_or(1000.0);
        let longest = if let Some(n) = chain
            .step("build_with_max_retries")
            .and_then(|s| ms(s.args.first()))
        {
            Some((min_ms * 2f64.powf((n - 1.0).max(0.0))).min(max_ms) / 1000.0)
        } else {
            chain
                .step("build_with_total_retry_duration")
                .and_then(|s| ms(s.args.first()))
                .map(|total| total.min(max_ms) / 1000.0)
        };
        return Some(Facts {
            advice: RETRY_POLICIES,
            unbounded: false,
            kind: Some(DelayKind::Growing),
            jitter,
            // A cap of a minute or less is a cap; the 30-minute default is not.
            capped: max_ms <= 60_000.0,
            longest_secs: longest,
        });
    }
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
    // tryhard: retry_fn(f).retries(n)[.exponential_backoff(d)|...] or RetryFutureConfig::new(n)
    let tryhard_config = chain.root_is("RetryFutureConfig", &["new"]);
    if (chain.root.last().is_some_and(|l| l == "retry_fn") && chain.has("retries"))
        || tryhard_config
    {
        let retries = if tryhard_config {
            ms(chain.ctor_args.first())
        } else {
            chain.step("retries").and_then(|s| ms(s.args.first()))
        };
        let (kind, jitter) = if chain.has_any(&["exponential_backoff", "linear_backoff"]) {
            (Some(DelayKind::Growing), false)
        } else if chain.has("fixed_backoff") {
            (Some(DelayKind::Constant), false)
        } else if chain.has("custom_backoff") {
            (Some(DelayKind::Unknown), false)
        } else {
            (None, false)
        };
        let capped = chain.has("max_delay");
        let longest = chain
            .step("exponential_backoff")
            .and_then(|s| ms(s.args.first()))
            .zip(retries)
            .filter(|_| !capped)
            .map(|(base, n)| base * 2f64.powf((n - 1.0).max(0.0)) / 1000.0);
        return Some(Facts {
            advice: TRYHARD,
            unbounded: false,
            kind,
            jitter,
            capped,
            longest_secs: longest,
        });
    }
    // again: RetryPolicy::exponential(d) / ::fixed(d)
    if chain.root_is("RetryPolicy", &["exponential", "fixed"]) {
        let growing = chain.root.last().is_some_and(|l| l == "exponential");
        let jitter = chain
            .step("with_jitter")
            .is_some_and(|s| s.args.first().is_some_and(|a| !is_false(a)));
        let capped = !growing || chain.has("with_max_delay");
        let retries = chain
            .step("with_max_retries")
            .map_or(Some(5.0), |s| ms(s.args.first()));
        let longest = ms(chain.ctor_args.first())
            .zip(retries)
            .filter(|_| !capped)
            .map(|(base, n)| base * 2f64.powf((n - 1.0).max(0.0)) / 1000.0);
        return Some(Facts {
            advice: AGAIN,
            unbounded: false,
            kind: Some(if growing {
                DelayKind::Growing
            } else {
                DelayKind::Constant
            }),
            jitter,
            capped,
            longest_secs: longest,
        });
    }
    // again's free functions use its default policy: 1 s doubling, 5 retries, no jitter.
    if chain.root.first().is_some_and(|r| r == "again")
        && matches!(
            chain.root.last().map(String::as_str),
            Some("retry" | "retry_if")
        )
    {
        return Some(Facts {
            advice: AGAIN,
            unbounded: false,
            kind: Some(DelayKind::Growing),
            jitter: false,
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
    if full.last().map(String::as_str) == Some("Zero") && full.iter().any(|p| p == "backoff") {
        // backoff's `Zero`: no wait, never stops.
        return Some(Facts {
            advice: BACKOFF,
            unbounded: true,
            kind: None,
            jitter: false,
            capped: true,
            longest_secs: None,
        });
    }
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
    // `max_interval: Duration::MAX` is no cap; the 15-minute elapsed-time default lets a wait
    // grow well past a minute.
    let capped = !field("max_interval").is_some_and(|e| names::text(e).contains("MAX"));
    Some(Facts {
        advice: BACKOFF,
        unbounded,
        kind: Some(DelayKind::Growing),
        jitter,
        capped,
        longest_secs: (!capped).then_some(if unbounded { f64::INFINITY } else { 900.0 }),
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
    let _guard = crate::budget::enter();
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
        Expr::Path(p) => {
            let key = place_key(e)?;
            match locals.lets.get(&key).map(Vec::as_slice) {
                Some([one]) => chain_of(one, scope, locals, depth + 1),
                // A unit struct used as a policy (`NoDelay.take(3)`).
                _ if key.chars().next().is_some_and(char::is_uppercase) => Some(Chain {
                    root: scope.resolve(&p.path),
                    ctor_args: Vec::new(),
                    steps: Vec::new(),
                }),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Methods that run a policy rather than configure it (`policy.retry(|| ..)`).
fn is_run_method(name: &str) -> bool {
    matches!(
        name,
        "retry" | "retry_if" | "retry_notify" | "spawn" | "call" | "run" | "when" | "notify"
    )
}

/// A retry attribute on a function: backon's `#[backon(..)]` and retrying's `#[retry(..)]`.
#[must_use]
pub fn attribute_site(
    attrs: &[syn::Attribute],
    scope: &FileScope<'_>,
    index: &LineIndex<'_>,
) -> Option<RetrySite> {
    let _guard = crate::budget::enter();
    for a in attrs {
        let full = scope.resolve(a.path());
        let last = full.last().map(String::as_str);
        if !matches!(last, Some("backon" | "retry")) {
            continue;
        }
        let args = names::text(&a.meta).replace(' ', "");
        let facts = if last == Some("backon") {
            // Default builder: `ExponentialBuilder::default` (jitter off). A builder made by a
            // function of this file is read from its body; of another file, not at all.
            let named = args
                .split("backoff=")
                .nth(1)
                .and_then(|r| r.split([',', ')']).next())
                .filter(|b| !b.contains("Builder"));
            let args = match named {
                Some(f) => match scope.function(f.rsplit("::").next().unwrap_or(f)) {
                    Some(g) => names::text(g.block).replace(' ', ""),
                    None => continue,
                },
                None => args,
            };
            let constant = args.contains("ConstantBuilder");
            Facts {
                advice: BACKON,
                unbounded: args.contains("without_max_times"),
                kind: Some(if constant {
                    DelayKind::Constant
                } else {
                    DelayKind::Growing
                }),
                jitter: args.contains("with_jitter"),
                capped: true,
                longest_secs: None,
            }
        } else if last == Some("retry") && full.first().is_some_and(|r| r == "retrying") {
            let wait = if args.contains("wait=fixed") {
                Some(DelayKind::Constant)
            } else if args.contains("wait=exponential") {
                Some(DelayKind::Growing)
            } else if args.contains("wait=random") {
                Some(DelayKind::Unknown)
            } else {
                None
            };
            let attempts = args
                .split("attempts(")
                .nth(1)
                .and_then(|r| r.split(')').next())
                .and_then(|n| n.parse::<f64>().ok());
            // exponential(multiplier = m, max = x): m * 2^n seconds, x defaults to 3600.
            let max_secs = args
                .split("max=")
                .nth(1)
                .and_then(|r| r.split([',', ')']).next())
                .and_then(|n| n.parse::<f64>().ok())
                .unwrap_or(3600.0);
            let multiplier = args
                .split("multiplier=")
                .nth(1)
                .and_then(|r| r.split([',', ')']).next())
                .and_then(|n| n.parse::<f64>().ok())
                .unwrap_or(1.0);
            let longest = (wait == Some(DelayKind::Growing))
                .then(|| attempts.map(|n| (multiplier * 2f64.powf(n - 1.0)).min(max_secs)))
                .flatten();
            Facts {
                advice: RETRYING,
                unbounded: !args.contains("stop="),
                kind: wait,
                jitter: wait == Some(DelayKind::Unknown),
                capped: max_secs <= 60.0,
                longest_secs: longest,
            }
        } else {
            continue;
        };
        return Some(site_of(index.of(a), &facts));
    }
    None
}

/// Every policy recognised here is rooted in a path whose resolved segments include one of these
/// (the crates' names, their policy types and builders); a resolved path is made of names
/// written in the file (at the use or in its `use` declaration), so a file whose text contains
/// none of them has no policy to find. Kept in step with `facts_of`, `facts_of_other`,
/// `struct_facts` and `attribute_site` (checked by a test).
const POLICY_WORDS: &[&str] = &[
    "retry",
    "Retry",
    "backon",
    "ackoff",
    "Exponential",
    "Fibonacci",
    "Fixed",
    "NoDelay",
    "Constant",
    "again",
];

/// Whether `text` may contain a retry crate's policy: a cheap test that lets most files skip the
/// search. Never false for a file with a policy (see `POLICY_WORDS`).
#[must_use]
pub fn may_have_policies(text: &str) -> bool {
    POLICY_WORDS.iter().any(|w| text.contains(w))
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
        middleware: Vec::new(),
        taken: 0,
    };
    v.visit_block(block);
    // A chain extended later (`let s = ..; s.take(3)`) is reported once, at its last extension.
    let consumed = v.consumed;
    let middleware = v.middleware;
    v.found
        .into_iter()
        .filter(|(span, _)| !consumed.iter().any(|c| c == span))
        .map(|(span, facts)| site_of(span, &facts))
        .chain(middleware.into_iter().map(transient_middleware_site))
        .collect()
}

/// The strategy a runner is given from a field (`Retry::new(self.retry_policy.clone(), op)`,
/// also through a local `let retry_policy = builder.retry_policy.clone()`): the policy the
/// file's struct literals put in a field of that name, read from `fn default` when it sets one
/// (the crate's default configuration), else from the one literal that does. `None` for a
/// strategy built in place (a policy site of its own), a parameter (the caller's choice), or a
/// field the file gives no policy. Returns the policy's site facts and where it is written.
pub fn field_strategy<'a>(
    arg: &'a Expr,
    scope: &FileScope<'a>,
    locals: &Locals<'a>,
    index: &LineIndex<'a>,
) -> Option<(Span, RetrySite, String)> {
    let _guard = crate::budget::enter();
    let field = strategy_field(arg, locals, 0)?;
    // (written in `fn default`, the function, the value)
    let mut found: Vec<(bool, &super::scope::LocalFn<'a>, &'a Expr)> = Vec::new();
    for f in scope.fns.values().flatten() {
        if super::site::is_test_attr(f.attrs) || !names::text(f.block).contains(field.as_str()) {
            continue;
        }
        let mut lits = FieldValues {
            field: &field,
            values: Vec::new(),
        };
        lits.visit_block(f.block);
        let is_default = f.sig.ident == "default";
        found.extend(lits.values.into_iter().map(|v| (is_default, f, v)));
    }
    let defaults: Vec<_> = found.iter().filter(|(d, _, _)| *d).collect();
    let (_, owner, value) = match defaults.as_slice() {
        [one] => *one,
        [] => match found.as_slice() {
            [one] => one,
            _ => return None,
        },
        _ => return None,
    };
    let owner_locals = Locals::of_fn(owner);
    let chain = chain_of(value, scope, &owner_locals, 0)?;
    let facts = facts_of(&chain, scope, &owner_locals)?;
    let at = index.of(*value);
    Some((at, site_of(at, &facts), field))
}

/// The field a strategy argument is read from: `self.policy`, `self.policy.clone()`,
/// `&builder.policy`, or a local bound once to one of those.
fn strategy_field(e: &Expr, locals: &Locals<'_>, depth: usize) -> Option<String> {
    let _guard = crate::budget::enter();
    if depth > 4 {
        return None;
    }
    match e {
        Expr::MethodCall(m) if m.method == "clone" && m.args.is_empty() => {
            strategy_field(&m.receiver, locals, depth + 1)
        }
        Expr::Reference(r) => strategy_field(&r.expr, locals, depth + 1),
        Expr::Paren(p) => strategy_field(&p.expr, locals, depth + 1),
        Expr::Field(f) => match &f.member {
            syn::Member::Named(n) => Some(n.to_string()),
            syn::Member::Unnamed(_) => None,
        },
        Expr::Path(p) if p.path.segments.len() == 1 => {
            let key = p.path.segments[0].ident.to_string();
            match locals.lets.get(&key).map(Vec::as_slice) {
                Some([one]) => strategy_field(one, locals, depth + 1),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The values struct literals give a field of one name (`Self { retry_policy: .., .. }`).
struct FieldValues<'f, 'a> {
    field: &'f str,
    values: Vec<&'a Expr>,
}

impl<'a> Visit<'a> for FieldValues<'_, 'a> {
    fn visit_expr_struct(&mut self, s: &'a syn::ExprStruct) {
        let _guard = crate::budget::enter();
        for fv in &s.fields {
            if matches!(&fv.member, syn::Member::Named(n) if n == self.field)
                && fv.colon_token.is_some()
            {
                self.values.push(&fv.expr);
            }
        }
        syn::visit::visit_expr_struct(self, s);
    }

    fn visit_item(&mut self, _: &'a syn::Item) {}
}

/// reqwest-retry's `RetryTransientMiddleware::new_with_policy(policy)`: its default classifier
/// (`DefaultRetryableStrategy`) retries 408, 429 and every 5xx, and the middleware waits what
/// the policy says, never the server's `Retry-After`. (`new_with_policy_and_strategy` brings
/// its own classifier, not judged here.) The policy's own waits are its own site.
fn transient_middleware_site(call: Span) -> RetrySite {
    let statuses = StatusSet::single(408)
        .union(StatusSet::single(429))
        .union(StatusSet::range(500, 599));
    let mut site = RetrySite::policy(
        call,
        Bound::Bounded(BoundKind::Schedule),
        Vec::new(),
        String::new(),
        None,
        false,
    );
    site.statuses = vec![StatusRetry {
        span: call,
        statuses,
        reason: "reqwest-retry's default classifier (408, 429 and every 5xx)".to_owned(),
        names_throttling: true,
    }];
    site.reads_retry_after = false;
    site
}

struct Finder<'a, 'c> {
    scope: &'c FileScope<'a>,
    locals: &'c Locals<'a>,
    index: &'c LineIndex<'a>,
    found: Vec<(Span, Facts)>,
    /// Spans of chains that a later chain extends through a variable.
    consumed: Vec<Span>,
    /// reqwest-retry middlewares made with the default classifier.
    middleware: Vec<Span>,
    /// Inside the receiver of a `.take(n)` applied to a `match`, `if` or block whose arms build
    /// strategies: whatever they build is cut to `n` waits.
    taken: usize,
}

impl Finder<'_, '_> {
    /// Whether `e`, or a receiver it is called on, asks a strategy object for its next wait.
    fn asks_next_wait(&self, e: &Expr) -> bool {
        let _guard = crate::budget::enter();
        match e {
            Expr::MethodCall(m) => {
                self.scope.is_next_wait_method(&m.method.to_string())
                    || self.asks_next_wait(&m.receiver)
            }
            Expr::Paren(p) => self.asks_next_wait(&p.expr),
            _ => false,
        }
    }
}

impl<'a> Visit<'a> for Finder<'a, '_> {
    fn visit_expr(&mut self, e: &'a Expr) {
        let _guard = crate::budget::enter();
        match e {
            Expr::MethodCall(m) if is_run_method(&m.method.to_string()) => {
                // `policy.retry(op)`: the policy is the receiver, reported where it is built.
                syn::visit::visit_expr(self, e);
            }
            Expr::Call(c)
                if names::callee_path(&c.func).is_some_and(|p| {
                    let full = self.scope.resolve(p);
                    full.ends_with(&[
                        "RetryTransientMiddleware".to_owned(),
                        "new_with_policy".to_owned(),
                    ])
                }) =>
            {
                self.middleware.push(self.index.of(e));
                syn::visit::visit_expr(self, e);
            }
            // `match kind { A => Exponential::..(..), B => Fixed::..(..) }.take(max_retries)`.
            Expr::MethodCall(m)
                if m.method == "take"
                    && matches!(
                        &*m.receiver,
                        Expr::Match(_) | Expr::If(_) | Expr::Block(_) | Expr::Paren(_)
                    ) =>
            {
                self.taken += 1;
                self.visit_expr(&m.receiver);
                self.taken -= 1;
                for a in &m.args {
                    self.visit_expr(a);
                }
            }
            // `sleep(strategy.next_delay())` in a loop of this file: the strategy is a value of
            // that loop (the loop is the site), not a policy run by a crate.
            // Also through what is done with the wait (`strategy.next_backoff().unwrap_or(max)`).
            Expr::MethodCall(m)
                if self.asks_next_wait(e)
                    && root_variable(e).is_some_and(|v| self.locals.lets.contains_key(&v)) =>
            {
                if let Some(root_var) = root_variable(e) {
                    if let Some([init]) = self.locals.lets.get(&root_var).map(Vec::as_slice) {
                        self.consumed.push(self.index.of(*init));
                    }
                }
                for a in &m.args {
                    self.visit_expr(a);
                }
            }
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
                        let mut facts = facts;
                        facts.unbounded &= self.taken == 0;
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
    let _guard = crate::budget::enter();
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
    let _guard = crate::budget::enter();
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
            ceiling: false,
        })
        .into_iter()
        .collect();
    RetrySite::policy(
        span,
        if f.unbounded {
            Bound::Unbounded
        } else {
            Bound::Bounded(BoundKind::Schedule)
        },
        delays,
        String::new(),
        Some(f.advice),
        true,
    )
}

#[cfg(test)]
mod tests {
    use super::{may_have_policies, POLICY_WORDS};

    /// The string literals this file compares a policy's root path with: the type or crate of
    /// `root_is(..)` / `rooted_in(..)`, and every literal on a line that reads `.root` or a
    /// struct literal's resolved path (`full`).
    fn root_literals() -> Vec<String> {
        let source = include_str!("policies.rs");
        let tests = source.find("#[cfg(test)]").unwrap_or(source.len());
        let mut out = Vec::new();
        for line in source[..tests].lines() {
            for call in ["root_is(\"", "rooted_in(\""] {
                for (at, _) in line.match_indices(call) {
                    let rest = &line[at + call.len()..];
                    out.push(rest[..rest.find('"').unwrap_or(0)].to_owned());
                }
            }
            let compares_root = line.contains(".root.")
                || line.contains(".root\n")
                || (line.contains("full.") && line.contains("Some(\""));
            if compares_root && !line.contains("root_is(") {
                out.extend(line.split('"').skip(1).step_by(2).map(str::to_owned));
            }
        }
        out
    }

    #[test]
    fn every_policy_root_is_caught_by_the_text_prefilter() {
        let literals = root_literals();
        assert!(
            literals.len() >= 20,
            "the extraction still works: {literals:?}"
        );
        // Checked only together with a root that has a policy word: `RetryPolicy::exponential`,
        // the step `retries` of a chain rooted in `retry_fn`, `Zero` in a path with `backoff`.
        let inside_another_root = ["exponential", "retries", "Zero"];
        for literal in literals {
            if inside_another_root.contains(&literal.as_str()) {
                continue;
            }
            assert!(
                POLICY_WORDS.iter().any(|w| literal.contains(w)),
                "`{literal}` is compared with a policy's root but contains none of POLICY_WORDS"
            );
        }
    }

    #[test]
    fn the_prefilter_passes_each_crate_and_skips_plain_code() {
        for text in [
            "use backon::ExponentialBuilder;",
            "let b = backoff::ExponentialBackoff { ..Default::default() };",
            "let s = backoff::backoff::Zero {};",
            "use tokio_retry::strategy::FixedInterval;",
            "let c = RetryFutureConfig::new(3);",
            "let p = again::RetryPolicy::exponential(d);",
            "again::retry(|| op())",
            "use crate::prelude::*; let s = NoDelay.take(3);",
        ] {
            assert!(may_have_policies(text), "{text}");
        }
        assert!(!may_have_policies(
            "fn add(a: u32, b: u32) -> u32 { for i in 0..b { let _ = i; } a + b }"
        ));
    }
}

//! Retry policies built with retry crates, as retry sites: the builder chains and struct literals
//! that `models/policies.toml` (and a team's `[[extend.policies]]`) describe are found here and
//! read by [`PolicyModel::read`]: the bound, the delay's growth, its cap and its jitter, with
//! each crate's defaults. The grammar of two attribute macros (backon-macros' `#[backon]`,
//! retrying's `#[retry]`) is read here too.

use std::sync::Arc;

use syn::visit::Visit;
use syn::Expr;

use super::known;
use super::names;
use super::policy_model::{Args, PolicyAdvice, PolicyModel, Reading};
use super::scope::FileScope;
use super::span::LineIndex;
use super::values::{place_key, Locals};
use super::{Bound, BoundKind, Delay, DelayKind, RetrySite, StatusRetry, StatusSet};
use crate::source::Span;

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

/// What a policy amounts to.
struct Facts {
    advice: Arc<PolicyAdvice>,
    unbounded: bool,
    kind: Option<DelayKind>,
    jitter: bool,
    capped: bool,
    /// The longest wait, when it has no cap.
    longest_secs: Option<f64>,
}

impl Facts {
    fn of(reading: &Reading, advice: &Arc<PolicyAdvice>) -> Facts {
        Facts {
            advice: Arc::clone(advice),
            unbounded: reading.unbounded,
            kind: reading.delay,
            jitter: reading.jitter,
            capped: reading.capped,
            longest_secs: reading.longest_secs,
        }
    }
}

/// A chain's arguments as the policy models read them: numbers (ms for durations) by the
/// file's estimator, parameters of the enclosing function as the callers' choice.
struct ChainArgs<'c, 'a> {
    scope: &'c FileScope<'a>,
    locals: &'c Locals<'a>,
}

impl<'a> Args<'a> for ChainArgs<'_, 'a> {
    fn number(&self, e: &'a Expr) -> Option<f64> {
        let facts = super::values::LoopFacts::default();
        let est = super::estimate::Estimator {
            file: self.scope,
            locals: self.locals,
            facts: &facts,
            env: std::collections::HashMap::new(),
        };
        est.eval(e)
    }

    fn is_callers_choice(&self, e: &'a Expr) -> bool {
        place_key(e).is_some_and(|k| self.locals.params.contains(&k))
    }

    fn text(&self, e: &'a Expr) -> String {
        names::text(e).replace(' ', "")
    }
}

/// The policies a path may start: a team's (`[extend]`) first, then the built-in models, each
/// with the gate that records (and may disable) its parts.
fn each_policy<'m>(
    scope: &'m FileScope<'_>,
) -> impl Iterator<Item = (&'m PolicyModel, Box<dyn Fn(usize) -> bool + 'm>)> {
    let models = known::builtin();
    let team = scope
        .ext
        .policies
        .iter()
        .map(|p| (p, Box::new(|_| true) as Box<dyn Fn(usize) -> bool>));
    let builtin = models.policies().enumerate().map(move |(i, (p, _))| {
        (
            p,
            Box::new(move |part| models.policy_gate(i, part)) as Box<dyn Fn(usize) -> bool>,
        )
    });
    team.chain(builtin)
}

/// The root of `policy` that the resolved path `full` starts, the path read through a glob import
/// of the policy's crate when it was not imported by name (see [`FileScope::through_glob`]).
fn root_in(policy: &PolicyModel, full: &[String], scope: &FileScope<'_>) -> Option<usize> {
    policy.root_of(full).or_else(|| {
        let through = scope.through_glob(full, policy.within())?;
        policy.root_of(&through)
    })
}

/// Reads one chain. `None`: not a policy of a crate we know.
fn facts_of(chain: &Chain<'_>, scope: &FileScope<'_>, locals: &Locals<'_>) -> Option<Facts> {
    let args = ChainArgs { scope, locals };
    let steps: Vec<(&str, Vec<&Expr>)> = chain
        .steps
        .iter()
        .map(|s| (s.name.as_str(), s.args.clone()))
        .collect();
    each_policy(scope).find_map(|(policy, gate)| {
        if policy.literal || policy.attribute {
            return None;
        }
        let root = root_in(policy, &chain.root, scope)?;
        let reading = policy.read(root, &chain.ctor_args, &steps, &args, &*gate)?;
        Some(Facts::of(&reading, &policy.advice))
    })
}

/// A struct literal of a policy type (backoff's `ExponentialBackoff { max_elapsed_time: None,
/// .. }`): its fields are read as the policy's steps.
fn struct_facts(s: &syn::ExprStruct, scope: &FileScope<'_>, locals: &Locals<'_>) -> Option<Facts> {
    let full = scope.resolve(&s.path);
    let args = ChainArgs { scope, locals };
    let fields: Vec<(String, Vec<&Expr>)> = s
        .fields
        .iter()
        .filter_map(|f| match &f.member {
            syn::Member::Named(n) => Some((n.to_string(), vec![&f.expr])),
            syn::Member::Unnamed(_) => None,
        })
        .collect();
    let steps: Vec<(&str, Vec<&Expr>)> = fields
        .iter()
        .map(|(n, a)| (n.as_str(), a.clone()))
        .collect();
    each_policy(scope).find_map(|(policy, gate)| {
        if !policy.literal || policy.attribute {
            return None;
        }
        let root = root_in(policy, &full, scope)?;
        let reading = policy.read(root, &[], &steps, &args, &*gate)?;
        Some(Facts::of(&reading, &policy.advice))
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
    let _guard = crate::analysis::limits::enter();
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

/// An attribute that takes a builder (backon-macros' `#[backon(backoff = .., ..)]`): the builder
/// given (a chain written there, or a function of this file that returns one), else the first
/// root of the policy of the crate a segment of its resolved path `full` names (backon's
/// `ExponentialBuilder::default()`), read as a chain. `None` for a builder made elsewhere.
fn builder_attribute(a: &syn::Attribute, full: &[String], scope: &FileScope<'_>) -> Option<Facts> {
    let pairs = a
        .parse_args_with(
            syn::punctuated::Punctuated::<syn::MetaNameValue, syn::Token![,]>::parse_terminated,
        )
        .ok();
    let given = pairs
        .iter()
        .flatten()
        .find(|p| p.path.is_ident("backoff"))
        .map(|p| p.value.clone());
    let Some(value) = given else {
        // The crate named by a segment of the attribute's path (`backon`, `backon_macros::backon`).
        let (krate, root) = full.iter().find_map(|segment| {
            known::builtin()
                .policies()
                .find(|(p, _)| !p.attribute && p.advice.crate_name == *segment)
                .and_then(|(p, _)| p.first_root())
                .map(|root| (segment, root))
        })?;
        let chain = Chain {
            root: std::iter::once(krate.clone())
                .chain(root.iter().cloned())
                .collect(),
            ctor_args: Vec::new(),
            steps: Vec::new(),
        };
        return facts_of(&chain, scope, &Locals::default());
    };
    if let Expr::Path(p) = &value {
        let name = p.path.segments.last()?.ident.to_string();
        let Some(g) = scope.function(&name).filter(|_| p.path.segments.len() == 1) else {
            // A constructor named, not called (`backoff = ConstantBuilder::default`).
            let chain = Chain {
                root: scope.resolve(&p.path),
                ctor_args: Vec::new(),
                steps: Vec::new(),
            };
            return facts_of(&chain, scope, &Locals::default());
        };
        let syn::Stmt::Expr(tail, None) = g.block.stmts.last()? else {
            return None;
        };
        let locals = Locals::of_fn(&g);
        let chain = chain_of(tail, scope, &locals, 0)?;
        return facts_of(&chain, scope, &locals);
    }
    let locals = Locals::default();
    let chain = chain_of(&value, scope, &locals, 0)?;
    facts_of(&chain, scope, &locals)
}

/// The advice of an attribute macro's policy entry (`attribute = true`) that a resolved
/// attribute path names.
fn attribute_advice(full: &[String]) -> Option<Arc<PolicyAdvice>> {
    let models = known::builtin();
    models
        .policies()
        .enumerate()
        .find(|(i, (p, _))| {
            p.attribute
                && p.root_of(full).is_some_and(|r| {
                    models.policy_gate(*i, 0) && models.policy_gate(*i, p.root_use_part(r))
                })
        })
        .map(|(_, (p, _))| Arc::clone(&p.advice))
}

/// A retry attribute on a function (`retry-attributes` of the models): one whose crate has an
/// attribute policy (retrying's `#[retry(..)]`) is read by that grammar, another as taking a
/// builder (backon's `#[backon(..)]`).
#[must_use]
pub fn attribute_site(
    attrs: &[syn::Attribute],
    scope: &FileScope<'_>,
    index: &LineIndex<'_>,
) -> Option<RetrySite> {
    let _guard = crate::analysis::limits::enter();
    for a in attrs {
        let full = scope.resolve(a.path());
        if known::builtin()
            .path(known::List::RetryAttributes, &full)
            .is_none()
        {
            continue;
        }
        let args = names::text(&a.meta).replace(' ', "");
        let facts = if let Some(advice) = attribute_advice(&full) {
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
                advice,
                unbounded: !args.contains("stop="),
                kind: wait,
                jitter: wait == Some(DelayKind::Unknown),
                capped: max_secs <= 60.0,
                longest_secs: longest,
            }
        } else {
            match builder_attribute(a, &full, scope) {
                Some(facts) => facts,
                None => continue,
            }
        };
        return Some(site_of(index.of(a), &facts));
    }
    None
}

/// The words one of which a file's text must contain for it to hold a policy: a resolved path
/// is made of names written in the file (at the use or in its `use` declaration). From the
/// models (`PolicyModel::words`: the crates an entry is within, or its roots' first segments),
/// minimised (a word that contains another is dropped), plus what the code here knows itself:
/// backon-macros' `#[backon]` and reqwest-retry's middleware.
fn builtin_words() -> &'static [String] {
    static WORDS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    WORDS.get_or_init(|| {
        let mut words: Vec<String> = known::builtin()
            .policies()
            .flat_map(|(p, _)| p.words())
            .chain(
                known::builtin()
                    .entries(known::List::RetryAttributes)
                    .iter()
                    .filter_map(|e| e.text.split("::").next()),
            )
            .chain(["RetryTransientMiddleware"])
            .map(str::to_owned)
            .collect();
        words.sort_by_key(String::len);
        let mut kept: Vec<String> = Vec::new();
        for w in words {
            if !kept.iter().any(|k| w.contains(k.as_str())) {
                kept.push(w);
            }
        }
        kept
    })
}

/// Whether `text` may contain a retry crate's policy (the built-in models' or a team's): a
/// cheap test that lets most files skip the search. Never false for a file with a policy.
#[must_use]
pub fn may_have_policies(text: &str, ext: &super::Extensions) -> bool {
    builtin_words().iter().any(|w| text.contains(w.as_str()))
        || ext
            .policies
            .iter()
            .flat_map(PolicyModel::words)
            .any(|w| text.contains(w))
}

/// Finds the policies of one function body.
pub fn policy_sites<'a>(
    block: &'a syn::Block,
    scope: &FileScope<'a>,
    locals: &Locals<'a>,
    index: &LineIndex<'a>,
    probes: &dyn Fn(&Expr) -> bool,
) -> Vec<RetrySite> {
    let mut v = Finder {
        scope,
        locals,
        index,
        probes,
        found: Vec::new(),
        consumed: Vec::new(),
        middleware: Vec::new(),
        taken: 0,
        polls: Vec::new(),
    };
    v.visit_block(block);
    // A chain extended later (`let s = ..; s.take(3)`) is reported once, at its last extension.
    // A policy that paces a poll is no retry's.
    let mut consumed = v.consumed;
    consumed.extend(v.polls);
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
    let _guard = crate::analysis::limits::enter();
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
    let _guard = crate::analysis::limits::enter();
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
        let _guard = crate::analysis::limits::enter();
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
    /// Policies given to a runner whose operation goes round on an answer it turned away, or
    /// only asks whether something answers.
    polls: Vec<Span>,
    /// Whether an operation (a closure's body) only asks whether something answers.
    probes: &'c dyn Fn(&Expr) -> bool,
}

impl Finder<'_, '_> {
    /// Whether `e`, or a receiver it is called on, asks a strategy object for its next wait.
    fn asks_next_wait(&self, e: &Expr) -> bool {
        let _guard = crate::analysis::limits::enter();
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

impl<'a> Finder<'a, '_> {
    /// `parts` are a runner call's receiver and arguments: when one is an operation (a closure,
    /// written there or bound by a `let`) that goes round after its own call succeeded, the
    /// policies among the others (found as chains, written there or bound by a `let`) pace a
    /// poll of a state, not a retry (evidence.md #1).
    fn note_poll(&mut self, parts: &[&'a Expr]) {
        let _guard = crate::analysis::limits::enter();
        // The policies among the parts; the operation is read only when there is one.
        let policies: Vec<Span> = parts
            .iter()
            .map(|p| self.index.of(self.bound_value(p)))
            .filter(|at| self.found.iter().any(|(span, _)| span == at))
            .collect();
        if policies.is_empty() {
            return;
        }
        let polls = parts.iter().any(|p| {
            self.operation(p).is_some_and(|c| {
                operation_polls(c, self.scope, self.locals, self.index) || (self.probes)(&c.body)
            })
        });
        if polls {
            self.polls.extend(policies);
        }
    }

    /// `e` itself, or what the `let` of the variable it names binds (once).
    fn bound_value(&self, e: &'a Expr) -> &'a Expr {
        let _guard = crate::analysis::limits::enter();
        match e {
            Expr::Paren(p) => self.bound_value(&p.expr),
            Expr::Reference(r) => self.bound_value(&r.expr),
            Expr::Path(_) => match place_key(e).and_then(|k| self.locals.lets.get(&k)) {
                Some(v) if v.len() == 1 => v[0],
                _ => e,
            },
            _ => e,
        }
    }

    /// The closure `e` is, or binds.
    fn operation(&self, e: &'a Expr) -> Option<&'a syn::ExprClosure> {
        match self.bound_value(e) {
            Expr::Closure(c) => Some(c),
            _ => None,
        }
    }
}

/// Whether an operation given to a retry crate's runner asks for another round on a path where
/// its own call succeeded and the answer was turned away (`Ok(nodes) if !ready(&nodes) =>
/// OperationResult::Retry(..)`, `Ok(v) => Err("not yet")`): the runner polls a state. The
/// values that ask for another round are the crates' (`again-values` of the models), or a plain
/// `Err(..)` that wraps none of their `final-values`.
fn operation_polls(
    c: &syn::ExprClosure,
    scope: &FileScope<'_>,
    locals: &Locals<'_>,
    index: &LineIndex<'_>,
) -> bool {
    let body: &Expr = &c.body;
    let again = again_values(body, scope);
    if again.is_empty() {
        return false;
    }
    let facts = super::values::LoopFacts::collect(body, &[]);
    let status = super::status::StatusEval {
        file: scope,
        locals,
        status_idents: Vec::new(),
        depth: 0,
    };
    let mut flow =
        super::flow::Flow::new(index, &status, &facts, None, super::flow::Mode::Operation);
    flow.again = again;
    flow.run_operation(body);
    flow.result
        .continues
        .iter()
        .any(|c| c.outcome == super::flow::Outcome::Success || c.rejected_ok)
}

/// The addresses of the values in `body` (not in closures inside it) that ask a retry crate's
/// runner for another round.
fn again_values(body: &Expr, scope: &FileScope<'_>) -> std::collections::HashSet<usize> {
    struct Again<'s, 'a> {
        scope: &'s FileScope<'a>,
        found: std::collections::HashSet<usize>,
    }
    impl Again<'_, '_> {
        fn resolved(&self, e: &Expr) -> Option<Vec<String>> {
            let path = match e {
                Expr::Call(c) => names::callee_path(&c.func)?,
                Expr::Path(p) => &p.path,
                Expr::Struct(s) => &s.path,
                _ => return None,
            };
            Some(self.scope.resolve(path))
        }
        fn asks_again(&self, e: &Expr) -> bool {
            let _guard = crate::analysis::limits::enter();
            match e {
                Expr::Paren(p) => self.asks_again(&p.expr),
                Expr::Call(c)
                    if names::callee_path(&c.func)
                        .is_some_and(|p| p.segments.len() == 1 && p.segments[0].ident == "Err") =>
                {
                    !c.args
                        .first()
                        .and_then(|a| self.resolved(a))
                        .is_some_and(|full| self.scope.is_final_value(&full))
                }
                _ => self
                    .resolved(e)
                    .is_some_and(|full| self.scope.is_again_value(&full)),
            }
        }
    }
    impl<'ast> Visit<'ast> for Again<'_, '_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            let _guard = crate::analysis::limits::enter();
            if self.asks_again(e) {
                self.found.insert(std::ptr::from_ref(e) as usize);
                return;
            }
            syn::visit::visit_expr(self, e);
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut v = Again {
        scope,
        found: std::collections::HashSet::new(),
    };
    v.visit_expr(body);
    v.found
}

impl<'a> Visit<'a> for Finder<'a, '_> {
    fn visit_expr(&mut self, e: &'a Expr) {
        let _guard = crate::analysis::limits::enter();
        match e {
            Expr::MethodCall(m) if is_run_method(&m.method.to_string()) => {
                // `policy.retry(op)`: the policy is the receiver, reported where it is built.
                syn::visit::visit_expr(self, e);
                let parts: Vec<&Expr> = std::iter::once(&*m.receiver).chain(&m.args).collect();
                self.note_poll(&parts);
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
                // `retry::retry(Fixed::from_millis(10_000).take(60), || match get() { .. })`.
                if let Expr::Call(c) = e {
                    self.note_poll(&c.args.iter().collect::<Vec<_>>());
                }
            }
            Expr::Struct(s) => {
                if let Some(facts) = struct_facts(s, self.scope, self.locals) {
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
    let _guard = crate::analysis::limits::enter();
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
    let _guard = crate::analysis::limits::enter();
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
        Some(Arc::clone(&f.advice)),
        true,
    )
}

#[cfg(test)]
mod tests {
    use super::{builtin_words, may_have_policies};
    use crate::analysis::Extensions;

    #[test]
    fn the_prefilter_passes_each_crate_and_skips_plain_code() {
        let ext = Extensions::default();
        for text in [
            "use backon::ExponentialBuilder;",
            "let b = backoff::ExponentialBackoff { ..Default::default() };",
            "let s = backoff::backoff::Zero {};",
            "use tokio_retry::strategy::FixedInterval;",
            "let c = RetryFutureConfig::new(3);",
            "let p = again::RetryPolicy::exponential(d);",
            "again::retry(|| op())",
            "use retry::delay::NoDelay; let s = NoDelay.take(3);",
            "#[backon] async fn f() {}",
        ] {
            assert!(may_have_policies(text, &ext), "{text}");
        }
        assert!(!may_have_policies(
            "fn add(a: u32, b: u32) -> u32 { for i in 0..b { let _ = i; } a + b }",
            &ext
        ));
        // Minimised: no word contains another.
        let words = builtin_words();
        for a in words {
            for b in words {
                assert!(a == b || !a.contains(b.as_str()), "{a} contains {b}");
            }
        }
    }
}

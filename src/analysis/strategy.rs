//! Backoff strategies written as functions: `fn backoff(&self, attempt: u32) -> Duration`, the
//! wait before attempt `n` of whoever calls it. Such a function is a policy site of its own
//! (a job queue's default `backoff`, a client's `retry_delay(n)`): what it returns when its
//! attempt parameter counts up says whether the waits grow, are jittered and are capped. How
//! many attempts there are is its callers' business (the bound is theirs).
//!
//! A function of this file that a retry site of this file calls is not reported here: the site
//! reports what it waits, where it waits.

use std::collections::HashMap;

use syn::{ReturnType, Type};

use super::known::{self, List};
use super::names;
use super::scope::{FileScope, LocalFn};
use super::span::LineIndex;
use super::values::{returned_exprs, Locals, LoopFacts, Taint, ValueCx};
use super::{Bound, BoundKind, DelayKind, RetrySite};

/// The site of `f` when it computes a retry's wait from an attempt number.
pub(super) fn strategy_site(
    f: &LocalFn<'_>,
    scope: &FileScope<'_>,
    index: &LineIndex<'_>,
) -> Option<RetrySite> {
    let name = f.sig.ident.to_string();
    let attempt = attempt_param(f)?;
    // The function's name or its parameter says it is about retrying.
    let about_retries = retry_named(&name) || names::is_retry_word(&attempt);
    if !about_retries
        || limit_named(&name)
        || !returns_a_wait(&f.sig.output, &name)
        || super::site::contains_loop(f.block)
    {
        return None;
    }
    let locals = Locals::of_fn(f);
    let facts = LoopFacts::collect(f.block, &[]);
    let attempt_name = attempt.clone();
    let counting = HashMap::from([(
        attempt,
        Taint {
            counter: true,
            ..Taint::default()
        },
    )]);
    let cx = ValueCx {
        file: scope,
        locals: &locals,
        facts: &facts,
        params: Some(&counting),
        current_fn: &name,
        depth: 1,
    };
    let returned = returned_exprs(f.block);
    if returned.is_empty() {
        return None;
    }
    let t = returned
        .iter()
        .fold(Taint::default(), |all, e| all.union(cx.taint(e)));
    let head = index.of(&f.sig.ident);
    let mut delay = super::site::delay_of(head, t);
    // `if attempt > MAX { 1 << MAX } else { 1 << attempt }`: a branch that stops growing past a
    // limit on the attempt is a cap.
    if delay.kind == DelayKind::Growing && !delay.capped {
        let mut leaves = Vec::new();
        for e in &returned {
            super::values::value_leaves(e, &mut leaves);
        }
        let constant_branch = leaves.iter().any(|e| {
            let b = cx.taint(e);
            !(b.growth || b.counter || b.opaque)
        });
        delay.capped = constant_branch && compares(f.block, &attempt_name);
    }
    // What cannot be seen into says nothing.
    if delay.kind == DelayKind::Unknown {
        return None;
    }
    // A caller that makes what it returns random (`jitter(backoff_cap(..))`) waits a jittered
    // wait: the function gives its ceiling or its base, and the jitter is the caller's.
    if !delay.jitter && scope.probe(|| randomised_by_callers(&name, scope)) {
        return None;
    }
    // The callers decide how many attempts there are.
    Some(RetrySite::policy(
        head,
        Bound::Bounded(BoundKind::Caller),
        vec![delay.uncapped_for_callers()],
        name,
        None,
        false,
    ))
}

/// Whether a function of the file other than `name` uses what `name` returns in a value made
/// random: `jitter(backoff_cap(policy, n))`, or `let half = cap(n) / 2;` then `half +
/// rng.gen_range(Duration::ZERO..half)`.
fn randomised_by_callers(name: &str, scope: &FileScope<'_>) -> bool {
    use syn::visit::Visit;
    /// The `let` values and call arguments of a body.
    struct Values<'a>(Vec<&'a syn::Expr>);
    impl<'a> Visit<'a> for Values<'a> {
        fn visit_local(&mut self, l: &'a syn::Local) {
            let _guard = super::limits::enter();
            if let Some(init) = &l.init {
                self.0.push(&init.expr);
            }
            syn::visit::visit_local(self, l);
        }
        fn visit_expr_call(&mut self, c: &'a syn::ExprCall) {
            let _guard = super::limits::enter();
            self.0.extend(c.args.iter());
            syn::visit::visit_expr_call(self, c);
        }
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    let calls_it = |e: &syn::Expr| {
        let mut found = false;
        super::flow::for_each_name(e, &mut |n, is_call| found |= is_call && n == name);
        found
    };
    other_fns(scope, name).any(|g| {
        let mut values = Values(Vec::new());
        values.visit_block(g.block);
        if !values.0.iter().any(|e| calls_it(e)) {
            return false;
        }
        let locals = Locals::of_fn(g);
        let facts = LoopFacts::collect(g.block, &[]);
        let current = g.sig.ident.to_string();
        let cx = ValueCx {
            file: scope,
            locals: &locals,
            facts: &facts,
            params: None,
            depth: 0,
            current_fn: &current,
        };
        // What the call's result is bound to, once.
        let holders: Vec<String> = locals
            .lets
            .iter()
            .filter(|(_, inits)| inits.iter().any(|i| calls_it(i)))
            .map(|(k, _)| k.clone())
            .collect();
        values.0.iter().any(|e| {
            let uses = calls_it(e) || holders.iter().any(|h| super::values::mentions(e, h));
            uses && cx.taint(e).random
        })
    })
}

/// Whether a function of the file other than `name` maps over the waits `name` returns
/// (`delays(base, n).map(jitter)`, `self.schedule()?.map(|d| d.min(cap))`): the caller waits what
/// its map makes of them, random, capped or fixed, so where they are built the wait is unknown.
/// `method`: `name` is a method, called as one (`x.schedule()`); else a free or associated
/// function, called by its path (`schedule()`, `Policy::schedule()`).
pub(super) fn mapped_by_callers(name: &str, method: bool, scope: &FileScope<'_>) -> bool {
    use syn::visit::Visit;
    /// Whether `e`, through `?`, `.await` and parentheses, is a call of `name` as written.
    fn calls(e: &syn::Expr, name: &str, method: bool) -> bool {
        let _guard = super::limits::enter();
        match e {
            syn::Expr::Try(t) => calls(&t.expr, name, method),
            syn::Expr::Await(a) => calls(&a.base, name, method),
            syn::Expr::Paren(p) => calls(&p.expr, name, method),
            syn::Expr::Call(c) if !method => names::callee_path(&c.func)
                .and_then(names::last)
                .is_some_and(|n| n == name),
            syn::Expr::MethodCall(m) if method => m.method == name,
            _ => false,
        }
    }
    struct Maps<'n> {
        name: &'n str,
        method: bool,
        found: bool,
    }
    impl<'a> Visit<'a> for Maps<'_> {
        fn visit_expr_method_call(&mut self, m: &'a syn::ExprMethodCall) {
            let _guard = super::limits::enter();
            // `map` over what the call gives: `Iterator::map` (or `Option`'s, `Result`'s).
            self.found |= m.method == "map" && calls(&m.receiver, self.name, self.method);
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    other_fns(scope, name).any(|g| {
        let mut v = Maps {
            name,
            method,
            found: false,
        };
        v.visit_block(g.block);
        v.found
    })
}

/// The functions of the file other than `name`: the callers a function's result can reach.
fn other_fns<'s, 'a>(
    scope: &'s FileScope<'a>,
    name: &'s str,
) -> impl Iterator<Item = &'s LocalFn<'a>> + 's {
    scope
        .fns
        .values()
        .flatten()
        .filter(move |g| g.sig.ident != name)
}

/// The parameter (not `self`) holding the attempt number: an integer named for counting
/// attempts, retries or failures (`attempt`, `retries`, `retry_count`, `reconnects`, `n`), not
/// a duration or a limit (`retry_interval_ms`, `max_retries`).
fn attempt_param(f: &LocalFn<'_>) -> Option<String> {
    f.typed_params().iter().find_map(|p| {
        let syn::Pat::Ident(id) = &*p.pat else {
            return None;
        };
        let n = id.ident.to_string();
        (is_attempt_name(&n) && is_number(&p.ty)).then_some(n)
    })
}

fn is_attempt_name(name: &str) -> bool {
    let n = name.trim_start_matches('_').to_ascii_lowercase();
    let v = known::builtin();
    if n.split('_')
        .any(|w| v.prefix_of(List::NotAttemptWordStems, w))
    {
        return false;
    }
    v.word(List::AttemptParamNames, &n) || v.part_of(List::AttemptParamWords, &n)
}

fn is_number(ty: &Type) -> bool {
    let _guard = crate::analysis::limits::enter();
    match ty {
        Type::Path(p) => p.path.segments.last().is_some_and(|s| {
            let name = s.ident.to_string();
            // Rust's own number types.
            names::is_integer_name(&name) || matches!(name.as_str(), "f32" | "f64")
        }),
        Type::Reference(r) => is_number(&r.elem),
        Type::Paren(p) => is_number(&p.elem),
        _ => false,
    }
}

/// Names of functions that compute a retry's wait: `retry-words` (`backoff` among them).
fn retry_named(name: &str) -> bool {
    names::is_retry_word(name)
}

/// Names of functions that compute how long one attempt may take, or how long something
/// lives: a duration of an attempt, not a wait between two.
fn limit_named(name: &str) -> bool {
    known::builtin().part_of(List::LifetimeWords, &name.to_ascii_lowercase())
}

/// A `Duration`, or a number or a time when the name says it is a wait or a retry's time
/// (`fn backoff(..) -> u32` in seconds, `fn retry_job_at(..) -> DateTime<Utc>`).
fn returns_a_wait(output: &ReturnType, name: &str) -> bool {
    let ReturnType::Type(_, ty) = output else {
        return false;
    };
    let Type::Path(p) = &**ty else {
        return false;
    };
    let Some(last) = p.path.segments.last().map(|s| s.ident.to_string()) else {
        return false;
    };
    let n = name.to_ascii_lowercase();
    let v = known::builtin();
    let named_wait = v.part_of(List::WaitFnWords, &n) || v.suffix_of(List::WaitTimeSuffixes, &n);
    // std's `Duration`, chrono's `DateTime`: types, not vocabulary.
    last == "Duration" || (named_wait && (is_number(ty) || last == "DateTime"))
}

/// Whether `body` compares `name` with something (`attempt > MAX`, `n >= limit`).
fn compares(body: &syn::Block, name: &str) -> bool {
    use syn::visit::Visit;
    struct C<'n> {
        name: &'n str,
        found: bool,
    }
    impl<'ast> Visit<'ast> for C<'_> {
        fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
            let _guard = crate::analysis::limits::enter();
            let comparison = matches!(
                b.op,
                syn::BinOp::Gt(_) | syn::BinOp::Ge(_) | syn::BinOp::Lt(_) | syn::BinOp::Le(_)
            );
            let names_it =
                |e: &syn::Expr| super::values::place_key(e).as_deref() == Some(self.name);
            if comparison && (names_it(&b.left) || names_it(&b.right)) {
                self.found = true;
            }
            syn::visit::visit_expr_binary(self, b);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut c = C { name, found: false };
    c.visit_block(body);
    c.found
}

#[cfg(test)]
mod tests {
    use crate::analysis::{extract, DelayKind, LineIndex, SiteKind};

    /// The (kind, jitter, capped) of each backoff-function site of `src`.
    fn strategies(src: &str) -> Vec<(String, DelayKind, bool, bool)> {
        let file = syn::parse_file(src).expect("parses");
        let index = LineIndex::new(src, 0);
        extract(&file, &index, &crate::analysis::Extensions::default())
            .sites
            .into_iter()
            .filter(|s| s.kind == SiteKind::Policy && s.policy.is_none())
            .map(|s| {
                let d = &s.delays[0];
                (s.function.clone(), d.kind, d.jitter, d.capped)
            })
            .collect()
    }

    #[test]
    fn a_branch_that_stops_growing_past_a_limit_is_a_cap() {
        let src = "const MAX_RETRY: u32 = 6;\n\
                   fn sleep_time(retry_count: u32) -> u32 {\n\
                   if retry_count > MAX_RETRY { 1 << MAX_RETRY } else { 1 << retry_count }\n}\n";
        assert_eq!(
            strategies(src),
            [("sleep_time".to_owned(), DelayKind::Growing, false, true)]
        );
    }
}

/// What a schedule of waits hands out: the waits it lists, in order (milliseconds, `None`
/// when one cannot be worked out), and what comes after them.
struct Schedule {
    listed: Vec<Option<f64>>,
    then: Tail,
}

#[derive(Clone, Copy, PartialEq)]
enum Tail {
    /// Nothing: the schedule ends.
    End,
    /// The same wait for ever (`iter::repeat(d)`).
    Repeat(Option<f64>),
    /// A wait computed from the last (`iter::successors`): it may grow without end.
    Computed,
}

/// The site of a function that hands out a retry's waits as a schedule, with no attempt
/// number: `fn backoff(&self) -> Backoff { Backoff::new(iter::repeat(500ms)) }`,
/// `fn reconnect_strategy() -> DurationIterator { vec![5s, 10s, ..].into_iter().chain(repeat(30min)) }`.
/// Its callers decide how many waits they take.
pub(super) fn schedule_site(
    f: &LocalFn<'_>,
    scope: &FileScope<'_>,
    index: &LineIndex<'_>,
) -> Option<RetrySite> {
    let name = f.sig.ident.to_string();
    if !retry_named(&name)
        || limit_named(&name)
        || !f.typed_params().is_empty()
        || matches!(f.sig.output, ReturnType::Default)
        || super::site::contains_loop(f.block)
    {
        return None;
    }
    let locals = Locals::of_fn(f);
    let returned = returned_exprs(f.block);
    let [one] = returned.as_slice() else {
        return None;
    };
    let schedule = schedule_of(one, scope, &locals, 0)?;
    // A random wait anywhere in it: jittered (or at least not something to judge here).
    let text = names::text(f.block);
    if text
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .any(|w| !w.is_empty() && scope.is_random(w))
    {
        return None;
    }
    let mut waits: Vec<f64> = schedule.listed.iter().copied().collect::<Option<_>>()?;
    let (kind, capped) = match schedule.then {
        Tail::Computed => (DelayKind::Growing, false),
        Tail::Repeat(last) => {
            waits.push(last?);
            (grows(&waits), true)
        }
        Tail::End => (grows(&waits), true),
    };
    if waits.is_empty() && schedule.then != Tail::Computed {
        return None;
    }
    let head = index.of(&f.sig.ident);
    let mut delay = super::site::delay_of(head, Taint::default());
    delay.kind = kind;
    delay.capped = capped;
    delay.jitter = false;
    delay.longest_secs = waits.iter().copied().reduce(f64::max).map(|ms| ms / 1000.0);
    Some(RetrySite::policy(
        head,
        Bound::Bounded(BoundKind::Caller),
        vec![delay],
        name,
        None,
        false,
    ))
}

/// Whether a list of waits ever grows: constant when every wait is the same.
fn grows(waits: &[f64]) -> DelayKind {
    if waits.windows(2).any(|w| w[1] > w[0]) {
        DelayKind::Growing
    } else {
        DelayKind::Constant
    }
}

/// The schedule an expression builds from lists of durations, `iter::repeat`,
/// `iter::successors`, `chain`, `take` and wrappers (`Box::new`, `Backoff::new`), following
/// local `let`s. `None`: not such a schedule.
fn schedule_of(
    e: &syn::Expr,
    scope: &FileScope<'_>,
    locals: &Locals<'_>,
    depth: usize,
) -> Option<Schedule> {
    let _guard = crate::analysis::limits::enter();
    if depth > 8 {
        return None;
    }
    let ms = |e: &syn::Expr| {
        let facts = LoopFacts::default();
        super::estimate::Estimator {
            file: scope,
            locals,
            facts: &facts,
            env: HashMap::new(),
        }
        .eval(e)
    };
    let list = |elems: Vec<&syn::Expr>| Schedule {
        listed: elems.into_iter().map(ms).collect(),
        then: Tail::End,
    };
    match e {
        syn::Expr::Array(a) => Some(list(a.elems.iter().collect())),
        syn::Expr::Macro(m) if names::last(&m.mac.path).as_deref() == Some("vec") => {
            let elems = m
                .mac
                .parse_body_with(
                    syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
                )
                .ok()?;
            Some(Schedule {
                listed: elems.iter().map(ms).collect(),
                then: Tail::End,
            })
        }
        syn::Expr::Reference(r) => schedule_of(&r.expr, scope, locals, depth + 1),
        syn::Expr::Paren(p) => schedule_of(&p.expr, scope, locals, depth + 1),
        syn::Expr::Path(p) => {
            let id = p.path.get_ident()?.to_string();
            match locals.lets.get(&id).map(Vec::as_slice) {
                Some([init]) => scope.follow(init, |i| schedule_of(i, scope, locals, depth + 1)),
                _ => None,
            }
        }
        syn::Expr::Call(c) => {
            let callee = names::callee_path(&c.func).and_then(names::last)?;
            match (callee.as_str(), c.args.first()) {
                ("repeat", Some(d)) => Some(Schedule {
                    listed: Vec::new(),
                    then: Tail::Repeat(ms(d)),
                }),
                ("successors", Some(_)) => Some(Schedule {
                    listed: Vec::new(),
                    then: Tail::Computed,
                }),
                ("new" | "from" | "from_iter", Some(inner)) if c.args.len() == 1 => {
                    schedule_of(inner, scope, locals, depth + 1)
                }
                _ => None,
            }
        }
        syn::Expr::MethodCall(m) => {
            let recv = || schedule_of(&m.receiver, scope, locals, depth + 1);
            match m.method.to_string().as_str() {
                "into_iter" | "iter" | "cloned" | "copied" => recv(),
                "chain" => {
                    let first = recv()?;
                    let second = schedule_of(m.args.first()?, scope, locals, depth + 1)?;
                    if first.then != Tail::End {
                        return Some(first);
                    }
                    let mut listed = first.listed;
                    listed.extend(second.listed);
                    Some(Schedule {
                        listed,
                        then: second.then,
                    })
                }
                "take" => {
                    let s = recv()?;
                    // A count written in the code: a small whole number.
                    let n = ms(m.args.first()?)?;
                    let n = (0.0..=1000.0)
                        .contains(&n)
                        .then(|| format!("{n:.0}").parse::<usize>().ok())
                        .flatten()?;
                    let mut listed = s.listed;
                    if let Tail::Repeat(d) = s.then {
                        listed.push(d);
                    }
                    listed.truncate(n);
                    let then = if s.then == Tail::Computed {
                        Tail::Computed
                    } else {
                        Tail::End
                    };
                    Some(Schedule { listed, then })
                }
                _ => None,
            }
        }
        _ => None,
    }
}

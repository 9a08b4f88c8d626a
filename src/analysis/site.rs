//! Finding retry sites in a file and extracting their facts.

use std::collections::{HashMap, HashSet};

use syn::visit::Visit;
use syn::{Block, Expr};

use super::flow::{Flow, FlowResult, Mode, Outcome};
use super::keys::per_attempt_keys;
use super::names;
use super::scope::{Facts, FileScope, LocalFn};
use super::span::LineIndex;
use super::status::StatusEval;
use super::values::{pat_bindings, place_key, Locals, LoopFacts, Taint, ValueCx};
use super::{
    Bound, BoundKind, Delay, DelayKind, Evidence, FileModel, Place, RetrySite, SiteKind,
    StatusRetry, StatusSet,
};
use crate::source::Span;

/// Builds the model of one parsed file.
#[must_use]
pub fn extract(file: &syn::File, index: &LineIndex<'_>, ext: &super::Extensions) -> FileModel {
    extract_in(file, index, ext, &[], false)
}

/// [`extract`] with the definitions of other files of the crate in view: `imports` are those
/// files, parsed on this thread (so that `index`, given an anchor, can tell their spans from
/// this file's), with their display paths. Only `file` is searched for retry sites.
/// `test_code`: the whole file is test code (an integration test or a benchmark), as a
/// `#[cfg(test)]` module is.
#[must_use]
pub fn extract_in(
    file: &syn::File,
    index: &LineIndex<'_>,
    ext: &super::Extensions,
    imports: &[(&syn::File, &str)],
    test_code: bool,
) -> FileModel {
    // Retry loops written as iterator chains are read as the loops they are.
    let rewritten = if super::rewrite::may_have(index.source(), ext) {
        super::rewrite::rewrite(file, ext)
    } else {
        None
    };
    let file = rewritten.as_ref().unwrap_or(file);
    // Items written inside macro invocations (`rt_test! { fn .. }`, `cfg_if! { .. }`) are code
    // too; their tokens keep their positions in the file.
    let mut bodies = Vec::new();
    macro_bodies(&file.items, &mut bodies, 0);
    let files: Vec<&syn::File> = std::iter::once(file).chain(bodies.iter()).collect();
    // Most files have no `select!`: their trees are not walked for one.
    let selects = if index.source().contains("select") {
        super::select::collect(&files)
    } else {
        std::collections::HashMap::new()
    };
    let mut scope = FileScope::new(ext.clone());
    scope.selects = Some(&selects);
    let mut timeouts = TimeoutCalls::default();
    for f in &files {
        scope.visit_file(f);
        timeouts.visit_file(f);
    }
    let mut defined: Vec<String> = scope.fns.keys().cloned().collect();
    defined.sort();
    // Each function with the type whose method it is (for telling which calls reach it).
    let defined_fns: Vec<(String, Option<String>)> = defined
        .iter()
        .flat_map(|name| {
            scope.fns[name]
                .iter()
                .map(move |f| (name.clone(), f.owner.map(ToString::to_string)))
        })
        .collect();
    let defined_consts: Vec<&String> = scope.consts.keys().chain(&scope.trait_consts).collect();
    // Methods also as `Type::name`, what a call through a typed receiver looks for.
    let mut defined_keys: Vec<u64> = defined
        .iter()
        .chain(defined_consts)
        .map(|n| super::name_key(n))
        .chain(defined_fns.iter().filter_map(|(n, owner)| {
            owner
                .as_ref()
                .map(|o| super::name_key(&format!("{o}::{n}")))
        }))
        .collect();
    defined_keys.sort_unstable();
    defined_keys.dedup();
    for (other, path) in imports {
        scope.import(other, path);
    }
    let mut b = Builder {
        scope: &scope,
        index,
        timeout_fns: timeouts.fns,
        timeout_vars: timeouts.vars,
        sites: Vec::new(),
        retrying_fns: Vec::new(),
        test_depth: usize::from(test_code),
        may_have_policies: super::policies::may_have_policies(index.source(), &scope.ext),
        called_from_sites: HashSet::new(),
        owner: None,
    };
    for f in &files {
        b.visit_file(f);
    }
    b.sites
        .extend(super::policy_values::sites(&files, &scope, index));
    // A backoff function that a retry site of this file calls is reported at that site.
    let called = std::mem::take(&mut b.called_from_sites);
    b.sites.retain(|s| {
        !(s.kind == SiteKind::Policy
            && s.bound == Bound::Bounded(BoundKind::Caller)
            && called.contains(&s.function))
    });
    // A tower `Policy` is the retry decision itself, whatever calls its `retry` method.
    b.sites
        .extend(super::tower_policy::sites(&files, &scope, index, test_code));
    FileModel {
        sites: b.sites,
        retrying_fns: b.retrying_fns,
        defined_fns,
        defined_keys,
        unresolved: scope.missed(),
    }
}

/// The bodies of item-position macro invocations that parse as items (not `macro_rules!`
/// definitions, whose `$x` fragments are not Rust yet), nested ones included.
fn macro_bodies(items: &[syn::Item], out: &mut Vec<syn::File>, depth: usize) {
    let _guard = crate::analysis::limits::enter();
    if depth > 4 {
        return;
    }
    for item in items {
        match item {
            syn::Item::Macro(m) if m.ident.is_none() && m.mac.path.is_ident("macro_rules") => {}
            syn::Item::Macro(m) if m.ident.is_none() => {
                if let Ok(f) = m.mac.parse_body::<syn::File>() {
                    if !f.items.is_empty() {
                        macro_bodies(&f.items, out, depth + 1);
                        out.push(f);
                    }
                }
            }
            syn::Item::Mod(md) => {
                if let Some((_, inner)) = &md.content {
                    macro_bodies(inner, out, depth + 1);
                }
            }
            _ => {}
        }
    }
}

/// Names of local functions whose future is run under `timeout(..)`: their loops have a deadline.
#[derive(Default)]
struct TimeoutCalls {
    fns: HashSet<String>,
    /// Local variables holding a future run under `timeout(..)` (`let f = async { .. };
    /// timeout(d, f)`).
    vars: HashSet<String>,
}

impl<'a> Visit<'a> for TimeoutCalls {
    fn visit_expr_call(&mut self, c: &'a syn::ExprCall) {
        let _guard = crate::analysis::limits::enter();
        if names::callee_path(&c.func)
            .and_then(names::last)
            .is_some_and(|n| is_timeout_fn(&n))
        {
            for a in &c.args {
                if let Some(n) = called_fn_name(a) {
                    self.fns.insert(n);
                }
                if let Some(v) = plain_ident(a) {
                    self.vars.insert(v);
                }
            }
        }
        syn::visit::visit_expr_call(self, c);
    }

    fn visit_expr_method_call(&mut self, m: &'a syn::ExprMethodCall) {
        let _guard = crate::analysis::limits::enter();
        if is_timeout_fn(&m.method.to_string()) {
            if let Some(n) = called_fn_name(&m.receiver) {
                self.fns.insert(n);
            }
            if let Some(v) = plain_ident(&m.receiver) {
                self.vars.insert(v);
            }
        }
        syn::visit::visit_expr_method_call(self, m);
    }
}

fn is_timeout_fn(name: &str) -> bool {
    matches!(name, "timeout" | "timeout_at" | "with_timeout" | "deadline")
}

fn plain_ident(e: &Expr) -> Option<String> {
    let _guard = crate::analysis::limits::enter();
    match e {
        Expr::Path(p) if p.path.segments.len() == 1 => Some(p.path.segments[0].ident.to_string()),
        Expr::Reference(r) => plain_ident(&r.expr),
        Expr::Paren(p) => plain_ident(&p.expr),
        Expr::MethodCall(m) if m.method == "boxed" || m.method == "fuse" => {
            plain_ident(&m.receiver)
        }
        Expr::Call(c) => c.args.first().and_then(plain_ident), // Box::pin(f)
        _ => None,
    }
}

/// `self.fetch(x)`, `fetch(x)`, `fetch(x).await`: the called function's name.
fn called_fn_name(e: &Expr) -> Option<String> {
    let _guard = crate::analysis::limits::enter();
    match e {
        Expr::Call(c) => names::callee_path(&c.func).and_then(names::last),
        Expr::MethodCall(m) => Some(m.method.to_string()),
        Expr::Await(a) => called_fn_name(&a.base),
        Expr::Paren(p) => called_fn_name(&p.expr),
        _ => None,
    }
}

struct Builder<'a, 'c> {
    scope: &'c FileScope<'a>,
    index: &'c LineIndex<'a>,
    timeout_fns: HashSet<String>,
    timeout_vars: HashSet<String>,
    sites: Vec<RetrySite>,
    retrying_fns: Vec<(String, Option<String>, Span)>,
    /// Inside `#[cfg(test)]` modules.
    test_depth: usize,
    /// Whether the file's text names anything a retry crate's policy could be built from.
    may_have_policies: bool,
    /// Names called (functions and methods) in the functions that hold a loop or recursion
    /// site: a backoff function among them is reported at the site that calls it.
    called_from_sites: HashSet<String>,
    /// While visiting: the type of the `impl` (or the trait) being visited.
    owner: Option<&'a syn::Ident>,
}

impl<'a> Builder<'a, '_> {
    fn function(&mut self, f: LocalFn<'a>) {
        let _guard = crate::analysis::limits::enter();
        // What the body binds is only worked out for a function that has something to look at
        // (most functions have no loop, retry call or policy).
        let lazy_locals = std::cell::OnceCell::new();
        let locals = || lazy_locals.get_or_init(|| Locals::of_fn(&f));
        let name = f.sig.ident.to_string();
        let deadline = self.timeout_fns.contains(&name);
        let is_async = f.sig.asyncness.is_some();
        let mut finder = LoopFinder {
            loops: Vec::new(),
            in_async: is_async,
            helper_closures: Vec::new(),
            timeout_depth: usize::from(deadline),
            scope: self.scope,
            locals: &locals,
            timeout_vars: &self.timeout_vars,
        };
        finder.visit_block(f.block);
        let before = self.sites.len();
        // What each site's facts were read from: the definitions consulted since the
        // previous site was made.
        let mut mark = self.scope.used_count();
        let mut retries_at: Option<Span> = None;
        let started_at = if finder.loops.is_empty() {
            Vec::new()
        } else {
            spawns(f.block, self.index)
        };
        // A loop in test code (`#[test]`, `#[tokio::test]`, a `#[cfg(test)]` module) waits for
        // the test's own fixtures (a server it started, a background task, a container): a
        // readiness wait, not a retry of the code under test.
        let in_test = self.test_depth > 0 || is_test_attr(f.attrs);
        for (l, in_timeout, in_async) in finder.loops.into_iter().filter(|_| !in_test) {
            mark = self.scope.used_count();
            if let Some(mut site) = self.loop_site(l, locals(), &name, in_timeout, &started_at) {
                site.in_async = in_async;
                // A reconnect helper of a session's server (a router that calls it when its
                // connection drops) restores the connection for as long as the server runs.
                if !site.supervisor
                    && site.bound == Bound::Unbounded
                    && matches!(f.sig.output, syn::ReturnType::Default)
                    && reconnects_for_server(l, &f, self.scope, self.index)
                {
                    site.supervisor = true;
                }
                // A counted limit the caller passes in (or a field holds): what the crate
                // passes there by default is worked out across its files.
                if matches!(
                    site.bound,
                    Bound::Bounded(BoundKind::Counter | BoundKind::Range)
                ) {
                    site.limit_from =
                        super::attempts::limit_operand(l, locals()).and_then(|(operand, zero)| {
                            super::attempts::source_of(operand, zero, f.sig, f.owner)
                        });
                }
                if let [d] = site.delays.as_slice() {
                    if d.kind == DelayKind::Constant && !d.jitter {
                        site.delay_from =
                            super::attempts::wait_operand(l, d.span, self.index, locals())
                                .and_then(|o| super::attempts::value_source(o, f.sig, f.owner));
                    }
                }
                retries_at.get_or_insert(site.head);
                push_site(&mut self.sites, self.scope, self.index, site, &mut mark);
            }
        }
        for (call, closure, every_error) in finder.helper_closures {
            mark = self.scope.used_count();
            retries_at.get_or_insert(self.index.of(call));
            let keys = per_attempt_keys(closure, self.scope, self.index, &name);
            let facts = AttemptFacts::of_expr(closure, self.scope, self.index, Some(locals()));
            let mut site = helper_site(self.index.of(call), keys, facts);
            // `backoff::Error::Transient { .. }` in the arms of a status match: those statuses
            // are what goes round again.
            if let Some(v) = super::verdicts::verdicts(closure, self.scope, locals(), self.index) {
                site.resend_safe = v.resend_safe();
                site.statuses = v.statuses;
            }
            if every_error {
                site.unclassified = remote_call_in(closure, self.index);
                // `Retry::new(self.retry_policy.clone(), op)`: the strategy the field holds by
                // default decides the runner's bound and waits, reported at the runner too.
                if let Some((at, mut policy, field)) = runner_strategy(call).and_then(|arg| {
                    self.scope.consult(Facts::WAIT.and(Facts::BOUND), || {
                        super::policies::field_strategy(arg, self.scope, locals(), self.index)
                    })
                }) {
                    policy.head = self.index.of(call);
                    for d in &mut policy.delays {
                        d.span = policy.head;
                    }
                    policy.origins.push((at, field));
                    // A reconnect helper restores a connection for as long as it is used, by
                    // design: only its pacing is judged.
                    policy.supervisor = names::is_reconnect_fn(&name);
                    // Both sites rest on what the runner's strategy was read from.
                    let shared = evidence_since(self.scope, self.index, mark);
                    site.evidence.clone_from(&shared);
                    policy.evidence = shared;
                    mark = self.scope.used_count();
                    self.sites.push(site);
                    self.sites.push(policy);
                    continue;
                }
            }
            push_site(&mut self.sites, self.scope, self.index, site, &mut mark);
        }
        if let Some(attr) = retry_attribute(f.attrs) {
            retries_at.get_or_insert(self.index.of(&f.sig.ident));
            let keys = per_attempt_keys(f.block, self.scope, self.index, &name);
            let mut facts = AttemptFacts::of_block(f.block, self.scope, self.index, Some(locals()));
            // `#[retryable]` resends a write only with a key or when declared idempotent.
            if matches!(attr, RetryAttr::Retryable) {
                facts.writes.clear();
            }
            push_site(
                &mut self.sites,
                self.scope,
                self.index,
                helper_site(self.index.of(&f.sig.ident), keys, facts),
                &mut mark,
            );
        }
        mark = self.scope.used_count();
        if let Some(site) = self.scope.consult(Facts::WAIT.and(Facts::BOUND), || {
            super::policies::attribute_site(f.attrs, self.scope, self.index)
        }) {
            retries_at.get_or_insert(site.head);
            push_site(&mut self.sites, self.scope, self.index, site, &mut mark);
        }
        // A retry crate's policy built in a test checks the crate or keeps the test fast; it is
        // not a retry of the code under test.
        mark = self.scope.used_count();
        let policies = if in_test || !self.may_have_policies {
            Vec::new()
        } else {
            self.scope.consult(Facts::WAIT.and(Facts::BOUND), || {
                super::policies::policy_sites(f.block, self.scope, locals(), self.index)
            })
        };
        // The chains of one body are read together: what was consulted is each one's.
        let batch = evidence_since(self.scope, self.index, mark);
        for mut site in policies {
            retries_at.get_or_insert(site.head);
            site.evidence.clone_from(&batch);
            self.sites.push(site);
        }
        if !in_test {
            mark = self.scope.used_count();
            if let Some(site) = self.scope.consult(Facts::WAIT.and(Facts::BOUND), || {
                super::strategy::strategy_site(&f, self.scope, self.index)
                    .or_else(|| super::strategy::schedule_site(&f, self.scope, self.index))
            }) {
                push_site(&mut self.sites, self.scope, self.index, site, &mut mark);
            }
        }
        mark = self.scope.used_count();
        if let Some(mut site) = self
            .recursion_site(f, &locals, deadline)
            .filter(|_| !in_test)
        {
            site.in_async = is_async || returns_async_block(f.block);
            retries_at.get_or_insert(site.head);
            push_site(&mut self.sites, self.scope, self.index, site, &mut mark);
        }
        // Facts that need the enclosing function: does it read the server's hint, send a key.
        // The body's text is only made for a function with a site (most have none).
        let mut fn_text: Option<String> = None;
        // `#[retryable]` resends a write only with a key or when declared idempotent.
        let retryable_attr = matches!(retry_attribute(f.attrs), Some(RetryAttr::Retryable));
        for site in &mut self.sites[before..] {
            let mark = self.scope.used_count();
            site.function.clone_from(&name);
            let owner = f.owner.map(ToString::to_string);
            let fields = owner
                .as_deref()
                .and_then(|o| self.scope.struct_fields.get(o));
            for call in &mut site.calls {
                call.via = std::mem::replace(&mut call.via, super::Via::Free)
                    .in_impl_of(owner.as_deref(), |field| fields?.get(field).cloned());
            }
            // `self.client.send_tx_once(..)` whose body writes: the write is made on each
            // attempt (the field's type is known only here, in its impl).
            let field_writes: Vec<Span> = if site.kind == SiteKind::Policy
                || (retryable_attr && site.head == self.index.of(&f.sig.ident))
            {
                Vec::new()
            } else {
                site.calls
                    .iter()
                    .filter(|c| matches!(&c.via, super::Via::Type(t) if t != "Self"))
                    .filter(|c| !site.writes.contains(&c.span))
                    .filter(|c| {
                        let n = c.name.to_ascii_lowercase();
                        !n.contains("token") && !n.contains("login") && !n.contains("auth")
                    })
                    .filter(|c| {
                        self.scope.consult(Facts::WRITE, || {
                            self.scope
                                .function_via(&c.name, Some(&c.via))
                                .is_some_and(|g| body_writes(self.scope, self.index, &g))
                        })
                    })
                    .map(|c| c.span)
                    .collect()
            };
            site.writes.extend(field_writes);
            site.evidence
                .extend(evidence_since(self.scope, self.index, mark));
            if matches!(site.kind, SiteKind::Helper | SiteKind::Policy) {
                continue;
            }
            let fn_text = fn_text.get_or_insert_with(|| names::text(f.block));
            site.reads_retry_after |= reads_retry_after(fn_text)
                || site.calls.iter().any(|call| {
                    self.scope
                        .function(&call.name)
                        .is_some_and(|g| reads_retry_after(&names::text(g.block)))
                });
            site.sends_key |= mentions_key(fn_text);
        }
        if self.sites[before..]
            .iter()
            .any(|s| matches!(s.kind, SiteKind::Loop | SiteKind::Recursion))
        {
            called_names(f.block, &mut self.called_from_sites);
        }
        if let Some(at) = retries_at {
            self.retrying_fns
                .push((name, f.owner.map(ToString::to_string), at));
        }
    }

    /// `started_at`: where the function starts a thread, task or process (see [`spawns`]).
    fn loop_site(
        &self,
        l: &'a Expr,
        locals: &Locals<'a>,
        fn_name: &str,
        in_timeout: bool,
        started_at: &[usize],
    ) -> Option<RetrySite> {
        let _guard = crate::analysis::limits::enter();
        let (body, label, head, start, extra_counters, loop_vars) = match l {
            Expr::Loop(x) => (
                &x.body,
                x.label.as_ref(),
                self.index.of(&x.loop_token),
                Outcome::Neutral,
                Vec::new(),
                Vec::new(),
            ),
            Expr::While(w) => {
                let head = self.index.between(&w.while_token, &w.cond);
                let start = while_outcome(&w.cond);
                (
                    &w.body,
                    w.label.as_ref(),
                    head,
                    start,
                    Vec::new(),
                    Vec::new(),
                )
            }
            Expr::ForLoop(f) => {
                let head = self.index.between(&f.for_token, &f.expr);
                let mut vars = Vec::new();
                pat_bindings(&f.pat, &mut vars);
                let counters = if counts_attempts(&f.expr) {
                    vars.clone()
                } else {
                    Vec::new()
                };
                (
                    &f.body,
                    f.label.as_ref(),
                    head,
                    Outcome::Neutral,
                    counters,
                    vars,
                )
            }
            _ => return None,
        };
        let facts = LoopFacts::collect(body, &extra_counters);
        let status = StatusEval {
            file: self.scope,
            locals,
            status_idents: Vec::new(),
            depth: 0,
        };
        let values = ValueCx {
            file: self.scope,
            locals,
            facts: &facts,
            params: None,
            current_fn: fn_name,
        };
        let waits = self.waits(body, fn_name, false);
        let label_name = label.map(|l| l.name.ident.to_string());
        let mut flow = Flow::new(self.index, &status, &facts, label_name, Mode::Loop);
        flow.waits = waits.calls();
        if let Expr::While(w) = l {
            if !matches!(&*w.cond, Expr::Let(_)) {
                flow.flag_vars = facts
                    .mutations
                    .keys()
                    .filter(|k| super::values::mentions(&w.cond, k))
                    .cloned()
                    .collect();
            }
        }
        let body_end = self.index.of(&body.brace_token.span.close());
        match l {
            Expr::While(w) if !matches!(&*w.cond, Expr::Let(_)) => {
                flow.run_while(&w.cond, body, body_end);
            }
            _ => flow.run_loop_body(body, start, body_end),
        }
        let mut result = flow.result;
        if start.may_fail() {
            // `while res.is_err()`: the loop leaves when the operation succeeds.
            result.success_exit = true;
        }
        // A supervisor restarts a long-running operation for ever, pausing only after it
        // failed: a site for the pacing rules only.
        // Probing what the function has just started (a test server, a child process) until it
        // answers is a readiness wait, not a retry.
        if started_at.iter().any(|at| *at < head.start) && is_readiness_probe(l, &result) {
            return None;
        }
        let retry_shape = is_retry_shape(&result);
        let supervisor = if retry_shape {
            restarts_session(&result, body, self.scope, fn_name)
        } else {
            is_supervisor(&result)
        };
        if !supervisor && !retry_shape {
            return None;
        }
        // A retry policy object's decision sends every failure round again: its limit (and
        // its choice of what to retry) is the policy's.
        let policy_decides = policy_decides(&result, body, self.index);
        let taken = taken_branches(body, self.index);
        let bound = match Self::loop_bound(l, &result, &facts, locals, in_timeout, &taken) {
            Bound::Unbounded if policy_decides => Bound::Bounded(BoundKind::Policy),
            b => b,
        };
        let limit = self.scope.consult(Facts::BOUND, || {
            attempt_limit(Some(l), body, &facts, self.scope, locals)
        });
        // `for _ in 0..self.limit`: the number of rounds is a setting, as in a counter compared
        // with one (`attempt < self.max_retries`).
        let wait_bound = match l {
            Expr::ForLoop(f) if limit.is_none() && range_end_is_setting(&f.expr) => {
                Bound::Bounded(BoundKind::Counter)
            }
            _ => bound.clone(),
        };
        let longest = |arg: Option<&'a Expr>| {
            longest_wait(&wait_bound, limit, arg, &facts, self.scope, locals)
        };
        let mut delays = self.delays_of(&waits, &values, &longest);
        mark_ceilings(&mut delays, &waits, body);
        // A `for` over a list of alternatives (addresses, mirrors) tries each once: not a retry.
        if let Expr::ForLoop(_) = l {
            // `for i in 0..resolvers.len() { resolvers[i].lookup(..) }` tries each one too.
            // Also through what is derived from the index (`let reply = nodes[i].call(..)`).
            let indexes_alternatives = !extra_counters.is_empty()
                && loop_vars.iter().any(|v| !names::is_retry_word(v))
                && derived_names(body, &loop_vars, true).iter().any(|v| {
                    !names::is_retry_word(v) && tested_ops_mention(&result, self.index, v)
                });
            if indexes_alternatives {
                return None;
            }
            // A `for` over elements (not a count of attempts) goes to the next element on each
            // round: unless the element is only the round's wait (a schedule of delays), each
            // round gives the operation a different input, and a retry repeats the same
            // operation with the same input (a failover list, a walk, a search; whatever the
            // names: `for attempt in ["NO_PROXY", "no_proxy"] { env::var(attempt) }`).
            if extra_counters.is_empty()
                && !loop_vars.is_empty()
                && elements_feed_the_rounds(body, &loop_vars, &waits)
            {
                return None;
            }
        }
        // `let idx = match hosts.pick_next() { Some(i) => i, None => break };` then
        // `connect(idx)`: each pass draws the next alternative, a search, not a retry.
        let drawn = match l {
            Expr::Loop(lp) => drawn_alternatives(&lp.body),
            Expr::While(w) => drawn_by_condition(&w.cond),
            _ => Vec::new(),
        };
        // Each pass uses what it drew (directly or through `let endpoint = &endpoints[idx]`).
        let drawn = derived_names(body, &drawn, false);
        if drawn
            .iter()
            .any(|v| !names::is_retry_word(v) && tested_ops_mention(&result, self.index, v))
        {
            return None;
        }
        // `let c = self.queues[i].get(); i += 1;`: a position stepped each pass and used to
        // index what the operation is asked of walks a list (the next queue, the next
        // replica), a search.
        if stepped_index_vars(body).iter().any(|v| {
            !names::is_retry_word(v)
                && !names::is_counter_name(v)
                && (tested_ops_index_with(&result, self.index, v)
                    || !lets_indexing_with(body, v).is_empty())
        }) {
            return None;
        }
        // An attempt counter: the `for` range, or a count stepped on a path that goes round
        // again or tested on a way out (not any `+= 1` in the body, such as a tally of items).
        // Following redirects or a cursor: the operation's input is replaced by what the last
        // answer pointed to, so each pass sends something new.
        if follows_pointer(&result, body, &facts, self.index)
            || rewrites_input_from_failure(&result, body, self.index)
        {
            return None;
        }
        let has_counter = !extra_counters.is_empty()
            || result
                .continues
                .iter()
                .any(|c| c.outcome.may_fail() && c.stepped)
            || result.bounded_by == Some(BoundKind::Counter);
        // An immediate, uncounted re-run of one recognised kind of error (a stale pooled
        // connection, a cancelled request) is a protocol step bounded by what produces that
        // error, not a retry policy: stay silent.
        let failing: Vec<_> = result
            .continues
            .iter()
            .filter(|c| c.outcome.may_fail() && !c.readiness)
            .collect();
        if delays.is_empty() && !has_counter && failing.iter().all(|c| c.classified) {
            return None;
        }
        if delays.is_empty()
            && !has_counter
            && !mentions_retry_words(l, fn_name)
            && !logs_and_does_io(l, &result)
        {
            return None;
        }
        let statuses = self.statuses(&result, body);
        if polls_named_client_errors(&result) {
            return None;
        }
        let mut keys = per_attempt_keys(body, self.scope, self.index, fn_name);
        for k in &mut keys {
            k.hoist = hoist_fix(body, head, k.span, &loop_vars, self.index);
        }
        let retry_path = result
            .continues
            .iter()
            .find(|c| c.outcome.may_fail() && !c.readiness)
            .map(|c| c.err_arm.unwrap_or(c.span));
        let per_attempt = AttemptFacts::of_expr(l, self.scope, self.index, Some(locals));
        let blind = !policy_decides && is_blind(&result, body);
        let unclassified = if policy_decides {
            None
        } else {
            unclassified(&result, self.index, self.scope)
        };
        // A path that found the attempts used up goes round only when nothing else ends the
        // loop (a `for` range, a `while` on the counter would).
        // `for attempt in 0..2`: at most one second try.
        // `let mut left = 2; while left > 0 { ..; left -= 1 }`: the same, counted down.
        let second_try_only = match l {
            Expr::ForLoop(f) => literal_range_len(&f.expr).is_some_and(|n| n <= 2),
            Expr::While(w) => countdown_len(&w.cond, locals, &facts).is_some_and(|n| n <= 2),
            _ => false,
        };
        // A loop nested in the body, or in a function of this file called on each attempt
        // (`self.poll_balance(..)`, itself a retry that waits between its tries), waits.
        // A failure path that awaits a call other than a known wait before going round waits
        // as long as that call does, which is not read here: unknown, not "no wait".
        let paced_inside = result
            .failing()
            .any(|c| c.awaited.iter().any(|name| self.may_wait(name, fn_name)))
            || inner_loop_waits(body, self.scope)
            || per_attempt.calls.iter().any(|c| {
                c.name != fn_name
                    && self
                        .scope
                        .function_via(&c.name, Some(&c.via))
                        .is_some_and(|f| retries_with_waits(f.block, self.scope, fn_name, 2))
            });
        let unpaced = if delays.is_empty() || paced_inside {
            None
        } else {
            unpaced_path(&result).filter(|u| {
                matches!(u, super::Unpaced::Skips(_))
                    || matches!(
                        bound,
                        Bound::Unbounded | Bound::Bounded(BoundKind::Deadline)
                    )
            })
        };
        let has_keys = !keys.is_empty();
        Some(RetrySite {
            blind,
            unclassified,
            resend_safe: resends_only_unprocessed(&result),
            evidence: Vec::new(),
            supervisor,
            unpaced,
            paced_inside,
            second_try_only,
            limit_from: None,
            delay_from: None,
            origins: Vec::new(),
            kind: SiteKind::Loop,
            head,
            bound,
            delays,
            statuses,
            keys,
            retry_path,
            in_async: false,
            function: String::new(),
            policy: None,
            reads_retry_after: per_attempt.reads_retry_after,
            writes: per_attempt.writes,
            sends_key: per_attempt.sends_key || has_keys,
            calls: per_attempt.calls,
        })
    }

    /// Whether an awaited call named `name` (on a path between attempts) may wait: not when
    /// the models say it resumes at once (`yield_now`), nor when it is a function of this file
    /// whose body awaits nothing and sleeps nowhere; otherwise its wait is unknown.
    fn may_wait(&self, name: &str, current_fn: &str) -> bool {
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

    fn loop_bound(
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
                        .is_some_and(|n| super::bound::is_schedule_call(&n))
                    {
                        Some(BoundKind::Schedule)
                    } else {
                        None
                    }
                }
                cond => super::bound::bound_kind(cond, facts, locals),
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

    /// The waits in a body: sleep calls, and calls of local functions that sleep.
    /// `enter_async`: the body is a function's whose async block is its future
    /// (`Box::pin(async move { .. })`), so sleeps in async blocks count.
    fn delays(
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
    fn waits(&self, body: &'a Block, current_fn: &str, enter_async: bool) -> Waits<'a> {
        let _guard = crate::analysis::limits::enter();
        let mut finder = SleepFinder {
            scope: self.scope,
            sleeps: Vec::new(),
            unknown_waits: Vec::new(),
            helper_calls: Vec::new(),
            timed: Vec::new(),
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
        }
    }

    /// The delays of `waits`, with what flows into each; `longest` works out how long a
    /// growing wait without a cap gets.
    fn delays_of(
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
    fn delays_in(
        &self,
        waits: &Waits<'a>,
        values: &ValueCx<'a, '_>,
        longest: &dyn Fn(Option<&'a Expr>) -> Option<f64>,
    ) -> Vec<Delay> {
        let _guard = crate::analysis::limits::enter();
        let mut out = Vec::new();
        for (call, arg, blocking) in &waits.sleeps {
            let t = arg.map_or(Taint::default(), |a| values.taint(a));
            let mut d = delay_of(self.index.of(*call), t);
            d.blocking = *blocking;
            if d.kind == DelayKind::Growing && !d.capped {
                d.longest_secs = longest(*arg);
            }
            out.push(d);
        }
        let opaque = Taint {
            opaque: true,
            ..Taint::default()
        };
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

    /// The one sleep of a small waiting helper of this file (`backoff(attempt).await`): its
    /// body, duration argument and whether it blocks. Not a function with loops of its own
    /// (its sleeps belong to its own retry site), nor the function itself.
    fn helper_sleep(
        &self,
        name: &str,
        via: &super::Via,
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
    fn helper_sleep_taint(
        &self,
        name: &str,
        via: &super::Via,
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
            current_fn: name,
        };
        Some((
            arg.map_or(Taint::default(), |a| inner_cx.taint(a)),
            blocking,
        ))
    }

    fn statuses(&self, result: &FlowResult, body: &'a Block) -> Vec<StatusRetry> {
        let _guard = crate::analysis::limits::enter();
        // The status is handed to a function this file cannot see, which decides whether to go
        // again (`match strategy.test(last_status, ..)`): the classification is elsewhere.
        if delegates_status(body, self.scope) {
            return Vec::new();
        }
        // A 401/403 retried after logging in again is a new request, not a blind resend.
        let reauth = calls_reauth(body);
        let mut out: Vec<StatusRetry> = Vec::new();
        let push = |out: &mut Vec<StatusRetry>, r: StatusRetry| {
            let mut r = r;
            if reauth {
                for c in [401, 403, 407] {
                    r.statuses = r.statuses.intersect(StatusSet::single(c).complement());
                }
            }
            if !out.iter().any(|o| o.span == r.span) {
                let text = self.index.text(r.span);
                // Named in the condition, or picked out by a classification that is not "any
                // failure" (`is_retryable(status)` listing 408, 429 and 5xx).
                let picked = (r.statuses.contains(429) && !r.statuses.contains(400))
                    || (r.statuses.contains(503)
                        && !(r.statuses.contains(500) && r.statuses.contains(501)));
                r.names_throttling = picked
                    || ["429", "503", "TOO_MANY_REQUESTS", "SERVICE_UNAVAILABLE"]
                        .iter()
                        .any(|n| text.contains(n));
                out.push(r);
            }
        };
        for c in &result.continues {
            if !c.outcome.may_fail() || c.readiness || c.exhausted.is_some() {
                continue;
            }
            if let Some(st) = &c.status {
                push(
                    &mut out,
                    StatusRetry {
                        span: st.span,
                        statuses: st.set,
                        reason: st.reason.clone(),
                        names_throttling: false,
                    },
                );
            }
        }
        let via_error_for_status = tests_error_for_status(result, body, self.index);
        for c in &result.continues {
            let Some(arm) = c.err_arm else { continue };
            if c.outcome != Outcome::Failure
                || c.classified
                || c.status.is_some()
                || c.exhausted.is_some()
            {
                continue;
            }
            // Where the statuses became errors: `error_for_status()`, ureq (every status >= 400
            // is an `Err`), or a function of this file that returns `Err` on a failed status.
            let found = if via_error_for_status {
                Some((
                    StatusSet::range(400, 599),
                    "`error_for_status()` turns every 4xx into `Err`".to_owned(),
                ))
            } else {
                c.op.as_deref().and_then(|op| {
                    self.scope
                        .consult(Facts::ERRORS, || self.errors_from_statuses(op))
                })
            };
            if let Some((statuses, how)) = found {
                push(
                    &mut out,
                    StatusRetry {
                        span: arm,
                        statuses,
                        reason: format!("{how}, and this arm retries every `Err`"),
                        names_throttling: false,
                    },
                );
            }
        }
        out
    }

    /// The statuses that the operation `op` reports as `Err`: ureq's `call()` and friends (every
    /// status from 400), or a function of this file that returns an error when a status test
    /// fails (`if !resp.status().is_success() { return Err(..) }`, `error_for_status()?`).
    fn errors_from_statuses(&self, op: &str) -> Option<(StatusSet, String)> {
        let _guard = crate::analysis::limits::enter();
        let ureq = self.scope.roots.contains("ureq")
            || self
                .scope
                .uses
                .values()
                .any(|p| p.first().is_some_and(|r| r == "ureq"));
        if ureq
            && matches!(
                op,
                "call" | "send_json" | "send_string" | "send_form" | "send_bytes"
            )
        {
            return Some((
                StatusSet::range(400, 599),
                "ureq's `call()` returns `Err(Error::Status(..))` for every status from 400"
                    .to_owned(),
            ));
        }
        let f = self.scope.function(op)?;
        let locals = Locals::of_fn(&f);
        let eval = StatusEval {
            file: self.scope,
            locals: &locals,
            status_idents: Vec::new(),
            depth: 1,
        };
        let mut finder = StatusErrors {
            eval: &eval,
            set: StatusSet::empty(),
        };
        finder.visit_block(f.block);
        (!finder.set.is_empty()).then(|| {
            (
                finder.set,
                format!("`{op}` turns statuses {} into `Err`", finder.set.describe()),
            )
        })
    }

    fn recursion_site<'l>(
        &self,
        f: LocalFn<'a>,
        locals: &dyn Fn() -> &'l Locals<'a>,
        deadline: bool,
    ) -> Option<RetrySite> {
        let _guard = crate::analysis::limits::enter();
        let name = f.sig.ident.to_string();
        if !calls_itself(f.block, &name) {
            return None;
        }
        let locals = locals();
        let mut facts = LoopFacts::collect(f.block, &[]);
        recursive_arg_mutations(f, &name, &mut facts);
        let counters: Vec<String> = facts.counters.iter().cloned().collect();
        let status = StatusEval {
            file: self.scope,
            locals,
            status_idents: Vec::new(),
            depth: 0,
        };
        let mut flow = Flow::new(self.index, &status, &facts, None, Mode::Recursion(&name));
        flow.run_fn_body(f.block);
        let result = flow.result;
        let retry_calls: Vec<_> = result
            .continues
            .iter()
            .filter(|c| c.outcome.may_fail() && !c.readiness)
            .collect();
        if retry_calls.is_empty() || !result.success_exit {
            return None;
        }
        let values = ValueCx {
            file: self.scope,
            locals,
            facts: &facts,
            params: None,
            current_fn: &name,
        };
        let every_path_limited = retry_calls
            .iter()
            .all(|c| c.limited(!facts.counters.is_empty()));
        let bound = if let Some(k) = result.bounded_by.filter(|_| every_path_limited) {
            Bound::Bounded(k)
        } else if deadline {
            Bound::Bounded(BoundKind::Deadline)
        } else {
            Bound::Unbounded
        };
        let limit = attempt_limit(None, f.block, &facts, self.scope, locals);
        let longest =
            |arg: Option<&'a Expr>| longest_wait(&bound, limit, arg, &facts, self.scope, locals);
        let delays = self.delays(f.block, &values, true, &longest);
        let retry_named = names::is_retry_word(&name)
            || f.sig
                .inputs
                .iter()
                .any(|i| names::is_retry_word(&names::text(i)));
        if delays.is_empty() && counters.is_empty() && !retry_named {
            return None;
        }
        let head = retry_calls[0].span;
        let statuses = self.statuses(&result, f.block);
        let keys = per_attempt_keys(f.block, self.scope, self.index, &name);
        let per_attempt = AttemptFacts::of_block(f.block, self.scope, self.index, Some(locals));
        let blind = is_blind(&result, f.block);
        let unclassified = unclassified(&result, self.index, self.scope);
        let has_keys = !keys.is_empty();
        Some(RetrySite {
            blind,
            unclassified,
            resend_safe: resends_only_unprocessed(&result),
            evidence: Vec::new(),
            supervisor: false,
            unpaced: None,
            paced_inside: false,
            second_try_only: false,
            limit_from: None,
            delay_from: None,
            origins: Vec::new(),
            kind: SiteKind::Recursion,
            head,
            bound,
            delays,
            statuses,
            keys,
            retry_path: Some(head),
            in_async: false,
            function: String::new(),
            policy: None,
            reads_retry_after: per_attempt.reads_retry_after,
            writes: per_attempt.writes,
            sends_key: per_attempt.sends_key || has_keys,
            calls: per_attempt
                .calls
                .into_iter()
                .filter(|c| c.name != name)
                .collect(),
        })
    }
}

pub(super) use super::test_code::is_test_attr;

impl<'a> Visit<'a> for Builder<'a, '_> {
    fn visit_item_mod(&mut self, node: &'a syn::ItemMod) {
        let _guard = crate::analysis::limits::enter();
        let test = is_test_attr(&node.attrs);
        self.test_depth += usize::from(test);
        syn::visit::visit_item_mod(self, node);
        self.test_depth -= usize::from(test);
    }

    fn visit_item_fn(&mut self, node: &'a syn::ItemFn) {
        let _guard = crate::analysis::limits::enter();
        self.function(LocalFn {
            sig: &node.sig,
            block: &node.block,
            attrs: &node.attrs,
            owner: None,
        });
        let owner = self.owner.take();
        syn::visit::visit_item_fn(self, node);
        self.owner = owner;
    }

    fn visit_item_impl(&mut self, node: &'a syn::ItemImpl) {
        let _guard = crate::analysis::limits::enter();
        let owner = std::mem::replace(&mut self.owner, super::scope::type_ident(&node.self_ty));
        syn::visit::visit_item_impl(self, node);
        self.owner = owner;
    }

    fn visit_item_trait(&mut self, node: &'a syn::ItemTrait) {
        let _guard = crate::analysis::limits::enter();
        let owner = self.owner.replace(&node.ident);
        syn::visit::visit_item_trait(self, node);
        self.owner = owner;
    }

    fn visit_impl_item_fn(&mut self, node: &'a syn::ImplItemFn) {
        let _guard = crate::analysis::limits::enter();
        self.function(LocalFn {
            sig: &node.sig,
            block: &node.block,
            attrs: &node.attrs,
            owner: self.owner,
        });
        syn::visit::visit_impl_item_fn(self, node);
    }

    fn visit_trait_item_fn(&mut self, node: &'a syn::TraitItemFn) {
        let _guard = crate::analysis::limits::enter();
        if let Some(block) = &node.default {
            self.function(LocalFn {
                sig: &node.sig,
                block,
                attrs: &node.attrs,
                owner: self.owner,
            });
        }
        syn::visit::visit_trait_item_fn(self, node);
    }
}

/// The strategy a runner call is given (`Retry::spawn(strategy, action)`): its first argument,
/// when it has another after it.
fn runner_strategy(call: &Expr) -> Option<&Expr> {
    match call {
        Expr::Call(c) if c.args.len() >= 2 => c.args.first(),
        _ => None,
    }
}

/// Pushes a site with the definitions its facts were read from since `mark` (consulted since
/// the previous site was made), and moves `mark` on.
fn push_site(
    sites: &mut Vec<RetrySite>,
    scope: &FileScope<'_>,
    index: &LineIndex<'_>,
    mut site: RetrySite,
    mark: &mut usize,
) {
    site.evidence.extend(evidence_since(scope, index, *mark));
    *mark = scope.used_count();
    sites.push(site);
}

/// The definitions that decided facts since `mark` (see [`FileScope::consult`]), placed: a
/// name of this file by its span, another file's by path and line.
fn evidence_since(scope: &FileScope<'_>, index: &LineIndex<'_>, mark: usize) -> Vec<Evidence> {
    scope
        .used_since(mark)
        .into_iter()
        .filter_map(|u| {
            let place = match u.at {
                Some(at) => at,
                None => Place::Here(index.span(u.name_span?)),
            };
            Some(Evidence {
                name: u.name,
                place,
                facts: u.facts,
            })
        })
        .collect()
}

fn helper_site(head: Span, keys: Vec<super::PerAttemptKey>, facts: AttemptFacts) -> RetrySite {
    RetrySite {
        kind: SiteKind::Helper,
        head,
        bound: Bound::Bounded(BoundKind::Schedule),
        delays: Vec::new(),
        statuses: Vec::new(),
        retry_path: None,
        in_async: false,
        reads_retry_after: facts.reads_retry_after,
        writes: facts.writes,
        sends_key: facts.sends_key || !keys.is_empty(),
        keys,
        calls: facts.calls,
        function: String::new(),
        policy: None,
        blind: false,
        unclassified: None,
        resend_safe: false,
        evidence: Vec::new(),
        supervisor: false,
        unpaced: None,
        paced_inside: false,
        second_try_only: false,
        limit_from: None,
        delay_from: None,
        origins: Vec::new(),
    }
}

/// Whether the only ways round follow a few named client errors (`Some(403 | 404)`: "not yet"
/// in a device-code flow, a resource that does not exist yet) while every other failure ends
/// the loop: it waits for a state to change (polling); no transient failure is retried.
fn polls_named_client_errors(result: &FlowResult) -> bool {
    let mut failing = result.failing().peekable();
    failing.peek().is_some()
        && failing.all(|c| {
            c.status.as_ref().is_some_and(|st| {
                let n = st.set.iter().count();
                (1..=3).contains(&n) && st.set == st.set.permanent_client_errors()
            })
        })
}

/// Whether some failing path goes round again on any error or on a status, rather than on one
/// picked-out kind of error.
///
/// A 401/403 re-sent after logging in again is a new request, not a blind resend.
fn is_blind(result: &FlowResult, body: &Block) -> bool {
    let reauth = calls_reauth(body);
    let auth = StatusSet::single(401)
        .union(StatusSet::single(403))
        .union(StatusSet::single(407));
    result.failing().any(|c| match &c.status {
        Some(st) if reauth => !st.set.intersect(auth.complement()).is_empty(),
        Some(_) => true,
        None => !c.picked || c.kinds.transient,
    })
}

/// The remote request whose every error goes round again with nothing testing which error it
/// was: no failing path picks a kind of error or a status, and no failure leaves the loop after
/// its error was inspected. The request is told by its call (see [`names::remote_request`]), or
/// by the body of a function of this file it calls (`self.get_balance(..)` sending an RPC).
fn unclassified(
    result: &FlowResult,
    index: &LineIndex<'_>,
    scope: &FileScope<'_>,
) -> Option<super::Unclassified> {
    let _guard = crate::analysis::limits::enter();
    if result.classifying_exit || result.reads_verdict {
        return None;
    }
    let failing: Vec<_> = result.failing().collect();
    if failing.is_empty()
        || failing
            .iter()
            .any(|c| c.status.is_some() || c.picked || c.classified || c.inspected || c.readiness)
    {
        return None;
    }
    let mut found = None;
    for op in failing.iter().filter_map(|c| c.op.as_deref()) {
        for (name, span) in result.tested_calls.iter().filter(|(n, _)| n == op) {
            let remote = names::remote_request(name, index.text(*span)).or_else(|| {
                scope.consult(Facts::ERRORS, || {
                    scope
                        .function_via(name, None)
                        .and_then(|f| makes_remote_request(f.block))
                })
            });
            match remote {
                Some(false) => return None,
                Some(true) if found.is_none() => {
                    found = Some(super::Unclassified {
                        op: name.clone(),
                        span: *span,
                    });
                }
                _ => {}
            }
        }
    }
    found
}

/// Whether a function's body makes a remote request (a call [`names::remote_request`] tells
/// is one), read one level deep.
fn makes_remote_request(body: &Block) -> Option<bool> {
    let mut r = RemoteCall { found: None };
    r.visit_block(body);
    r.found.is_some().then_some(true)
}

/// The first remote request a closure's body makes (its operation and call), for a retry
/// crate's runner that retries every error of it.
fn remote_call_in(body: &Expr, index: &LineIndex<'_>) -> Option<super::Unclassified> {
    let mut r = RemoteCall { found: None };
    r.visit_expr(body);
    let (op, e) = r.found?;
    Some(super::Unclassified {
        op,
        span: index.of(e),
    })
}

/// Finds the first call that [`names::remote_request`] tells is one, by its name and the words
/// of its receiver when that is a place (`self.client`, not a whole chain), and of its
/// arguments that are paths (`self.send(RpcRequest::GetBalance, ..)`, `fetch(client, url)`).
struct RemoteCall<'ast> {
    found: Option<(String, &'ast Expr)>,
}

impl<'ast> Visit<'ast> for RemoteCall<'ast> {
    fn visit_expr(&mut self, e: &'ast Expr) {
        let _guard = crate::analysis::limits::enter();
        if self.found.is_some() {
            return;
        }
        let path_args = |args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>,
                         out: &mut String| {
            for a in args {
                if let Expr::Path(p) = a {
                    out.push(' ');
                    out.push_str(&names::text(p));
                }
            }
        };
        let call = match e {
            Expr::MethodCall(m) => {
                let mut words = match &*m.receiver {
                    Expr::Path(_) | Expr::Field(_) => names::text(&m.receiver),
                    _ => String::new(),
                };
                path_args(&m.args, &mut words);
                Some((m.method.to_string(), words))
            }
            Expr::Call(c) => names::callee_path(&c.func)
                .and_then(names::last)
                .map(|name| {
                    let mut words = names::text(&c.func);
                    path_args(&c.args, &mut words);
                    (name, words)
                }),
            _ => None,
        };
        if let Some((name, words)) = call {
            if names::remote_request(&name, &words) == Some(true) {
                self.found = Some((name, e));
                return;
            }
        }
        syn::visit::visit_expr(self, e);
    }
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// Whether every resend happens after a failure that the server did not process: a 429, a
/// refused connection, a rolled-back transaction. Resending a write then cannot apply it twice.
fn resends_only_unprocessed(result: &FlowResult) -> bool {
    let mut failing = result.failing().peekable();
    failing.peek().is_some()
        && failing.all(|c| match &c.status {
            Some(st) => st
                .set
                .intersect(StatusSet::single(429).complement())
                .is_empty(),
            None => c.kinds.not_processed,
        })
}

/// Whether code sends an idempotency key (a header, field or variable named like one).
fn mentions_key(text: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric() && c != '_' && c != '-')
        .any(names::is_strong_key_name)
}

/// What one attempt does, read from the code that runs per attempt.
struct AttemptFacts {
    reads_retry_after: bool,
    sends_key: bool,
    /// Non-idempotent writes, at the line of the call that makes them (`.post(`, `.execute(`).
    writes: Vec<Span>,
    calls: Vec<super::Call>,
}

impl AttemptFacts {
    fn of_block<'a>(
        body: &'a Block,
        scope: &FileScope<'a>,
        index: &LineIndex<'a>,
        locals: Option<&Locals<'a>>,
    ) -> Self {
        let mut v = AttemptVisitor::new(scope, index, true);
        v.locals = locals;
        v.visit_block(body);
        v.finish(&names::text(body))
    }

    fn of_expr<'a>(
        body: &'a Expr,
        scope: &FileScope<'a>,
        index: &LineIndex<'a>,
        locals: Option<&Locals<'a>>,
    ) -> Self {
        let _guard = crate::analysis::limits::enter();
        let mut v = AttemptVisitor::new(scope, index, true);
        v.locals = locals;
        v.visit_expr(body);
        v.finish(&names::text(body))
    }
}

struct AttemptVisitor<'a, 'c> {
    scope: &'c FileScope<'a>,
    index: &'c LineIndex<'a>,
    /// The enclosing function's bindings, when known (for parameter types).
    locals: Option<&'c Locals<'a>>,
    writes: Vec<Span>,
    calls: Vec<super::Call>,
    /// Follow calls into functions of this file that build a write (one level).
    follow: bool,
}

impl<'a, 'c> AttemptVisitor<'a, 'c> {
    fn new(scope: &'c FileScope<'a>, index: &'c LineIndex<'a>, follow: bool) -> Self {
        AttemptVisitor {
            scope,
            index,
            locals: None,
            writes: Vec::new(),
            calls: Vec::new(),
            follow,
        }
    }

    /// `client.post(endpoint)` where `let endpoint = base.join("api/v2/auth/login")`.
    fn target_reads(&self, m: &syn::ExprMethodCall) -> bool {
        let Some(locals) = self.locals else {
            return false;
        };
        let target = m.args.first().and_then(|a| match a {
            Expr::MethodCall(c) => place_key(&c.receiver),
            Expr::Reference(r) => place_key(&r.expr),
            other => place_key(other),
        });
        target
            .and_then(|k| locals.lets.get(&k))
            .is_some_and(|inits| {
                inits.iter().any(|init| {
                    let t = names::text(*init).to_ascii_lowercase();
                    [
                        "token", "oauth", "auth", "login", "graphql", "search", "query",
                    ]
                    .iter()
                    .any(|w| t.contains(w))
                })
            })
    }

    /// `js.publish(..)` where the function's parameter `js` is typed from a broker crate.
    fn messaging_receiver(&self, recv: &Expr) -> bool {
        let Some(locals) = self.locals else {
            return false;
        };
        place_key(recv)
            .and_then(|k| locals.param_types.get(&k))
            .map(|ty| names::text(*ty))
            .is_some_and(|ty| MESSAGING_CRATES.iter().any(|c| ty.contains(c)))
    }

    fn finish(self, text: &str) -> AttemptFacts {
        AttemptFacts {
            reads_retry_after: reads_retry_after(text),
            sends_key: mentions_key(text),
            writes: self.writes,
            calls: self.calls,
        }
    }

    /// The type named by a parameter's written type, when a method is called on the parameter
    /// (`connector: &mut Connector` → `Connector`; through `Arc`/`Box`; not `impl Trait`,
    /// `dyn Trait`, a generic's bounds).
    fn param_type_of(&self, receiver: &Expr) -> Option<String> {
        let receiver = match receiver {
            Expr::Reference(r) => &*r.expr,
            Expr::Paren(p) => &*p.expr,
            other => other,
        };
        let Expr::Path(p) = receiver else {
            return None;
        };
        let id = p.path.get_ident()?.to_string();
        let path = super::scope::held_path(self.locals?.param_types.get(&id)?)?;
        // A type of this crate only: `crate::net::Pool`, `store::Session` of a module the file
        // declares, or a name not brought in from another crate by `use` (`postgres::Client`
        // is not the file's `Client`).
        let full = self.scope.resolve(path);
        let local = full.len() == 1
            || matches!(full[0].as_str(), "crate" | "self" | "super" | "Self")
            || self.scope.mods.contains(&full[0]);
        local.then(|| full.last().cloned()).flatten()
    }

    /// A call to a function of this file that builds a write (`order_request(..)` returning a
    /// `client.post(..)`): the write is made here.
    fn local_write(&self, name: &str, via: &super::Via) -> bool {
        let _guard = crate::analysis::limits::enter();
        // Minting a credential (`refresh_session_token`, `login`, `authenticate`) is safe to
        // repeat, whatever method it posts with.
        let n = name.to_ascii_lowercase();
        if !self.follow || n.contains("token") || n.contains("login") || n.contains("auth") {
            return false;
        }
        self.scope.consult(Facts::WRITE, || {
            self.scope
                .function_via(name, Some(via))
                .is_some_and(|f| body_writes(self.scope, self.index, &f))
        })
    }
}

/// Whether a function of the file (or one in view) makes a write: a visible one in its body
/// (one level), or a transaction it signs and submits (see [`signs_and_submits`]).
fn body_writes<'a>(scope: &FileScope<'a>, index: &LineIndex<'a>, f: &LocalFn<'a>) -> bool {
    let locals = Locals::of_fn(f);
    let mut inner = AttemptVisitor::new(scope, index, false);
    inner.locals = Some(&locals);
    inner.visit_block(f.block);
    !inner.writes.is_empty() || signs_and_submits(&names::text(f.block))
}

/// A transaction signed and submitted by the same code (`let signed = self.sign_tx(..)?;
/// rpc.call(&RpcSendTransactionRequest { signed_transaction, .. })`): called on each attempt,
/// each attempt submits a new transaction (a fresh nonce, a new hash), so one that was applied
/// before its reply was lost is applied twice. A signed transaction built once and resent is
/// the same transaction, which the network takes once.
fn signs_and_submits(text: &str) -> bool {
    let t = text.to_ascii_lowercase().replace([' ', '_'], "");
    let signs = ["signtx(", "signtransaction(", "signandsend"]
        .iter()
        .any(|w| t.contains(w));
    let submits = [
        "sendtransaction",
        "sendrawtransaction",
        "broadcasttx",
        "submittransaction",
        "signandsend",
    ]
    .iter()
    .any(|w| t.contains(w));
    signs && submits
}

/// Whether code reads the server's wait hint: the header's name (`Retry-After`, `RETRY_AFTER`,
/// `retry-after-ms`, `x-ratelimit-reset`), or a call of something named for it
/// (`retry_after(resp.headers())`, `err.retry_after()`). A variable merely named `retry_after`
/// is not a read.
fn reads_retry_after(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    t.contains("retry-after")
        || t.contains("ratelimit-reset")
        || t.contains("ratelimit_reset")
        || text.contains("RETRY_AFTER")
        || t.contains("retry_after (")
        || t.contains("retry_after_ms (")
        || t.contains("retry_after_from")
        || t.contains("parse_retry_after")
}

/// Message broker crates: a parameter of one of their types publishes messages.
const MESSAGING_CRATES: &[&str] = &[
    "async_nats",
    "nats",
    "lapin",
    "rdkafka",
    "kafka",
    "aws_sdk_sns",
    "aws_sdk_sqs",
    "aws_sdk_kinesis",
    "pulsar",
    "rumqttc",
    "paho_mqtt",
    "google_cloud_pubsub",
    "fluvio",
];

/// Receivers that publish to a queue or a log (`producer.send(record)`).
fn is_queue_receiver(e: &Expr) -> bool {
    let t = names::text(e).to_ascii_lowercase();
    [
        "producer",
        "queue",
        "sqs",
        "sns",
        "kafka",
        "topic",
        "publisher",
        "amqp",
        "nats",
        "pubsub",
        "rabbit",
        "kinesis",
        "jetstream",
        "broker",
    ]
    .iter()
    .any(|w| t.contains(w))
}

/// A SQL statement that inserts and is not idempotent when resent (not `ON CONFLICT DO
/// NOTHING`, `INSERT IGNORE`, `ON DUPLICATE KEY`, `INSERT OR IGNORE/REPLACE`).
fn is_insert_sql(e: &Expr) -> bool {
    let t = names::text(e).to_ascii_lowercase();
    let s = t.trim_start_matches(['"', 'r', '#', ' ']);
    s.starts_with("insert")
        && ![
            "on conflict",
            "on duplicate key",
            "insert ignore",
            "insert or ignore",
            "insert or replace",
        ]
        .iter()
        .any(|w| t.contains(w))
}

/// Whether a method chain starts from `query("INSERT ..")` (sqlx, diesel's `sql_query`).
fn chain_inserts(e: &Expr) -> bool {
    let _guard = crate::analysis::limits::enter();
    match e {
        Expr::MethodCall(m) => chain_inserts(&m.receiver),
        Expr::Call(c) => {
            names::callee_path(&c.func)
                .and_then(names::last)
                .is_some_and(|n| matches!(n.as_str(), "query" | "query_as" | "sql_query"))
                && c.args.first().is_some_and(is_insert_sql)
        }
        Expr::Paren(p) => chain_inserts(&p.expr),
        _ => false,
    }
}

/// A `POST` that reads rather than writes, by where it goes: a token or login endpoint, a search,
/// a GraphQL or JSON-RPC query.
fn is_read_like_post(m: &syn::ExprMethodCall) -> bool {
    let target = m
        .args
        .first()
        .map(names::text)
        .unwrap_or_default()
        .to_ascii_lowercase();
    [
        "token", "oauth", "auth", "login", "graphql", "search", "query", "rpc", "lookup",
        "validate", "verify", "health",
    ]
    .iter()
    .any(|w| target.contains(w))
}

impl<'a> Visit<'a> for AttemptVisitor<'a, '_> {
    fn visit_expr(&mut self, e: &'a Expr) {
        let _guard = crate::analysis::limits::enter();
        match e {
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                let write = match name.as_str() {
                    "post" | "patch" => !is_read_like_post(m) && !self.target_reads(m),
                    "basic_publish" | "send_message" | "send_message_batch" | "put_record"
                    | "put_records" | "send_batch" => true,
                    // `bus.publish(event)` on a type this file does not show to be a queue
                    // client is left alone.
                    "publish" | "produce" | "enqueue" => {
                        is_queue_receiver(&m.receiver) || self.messaging_receiver(&m.receiver)
                    }
                    "execute" | "query" | "execute_many" | "query_one" | "query_opt"
                    | "fetch_one" | "fetch_all" | "fetch_optional" => {
                        m.args.first().is_some_and(is_insert_sql) || chain_inserts(&m.receiver)
                    }
                    "send" | "send_result" => is_queue_receiver(&m.receiver) && !m.args.is_empty(),
                    _ => false,
                };
                if write {
                    self.writes.push(self.index.of(&m.method));
                }
                // `self.store.fetch(..)`: a method of the field's type (worked out once the
                // enclosing type is known).
                if let Expr::Field(f) = &*m.receiver {
                    if let (Expr::Path(p), syn::Member::Named(field)) = (&*f.base, &f.member) {
                        if p.path.is_ident("self") {
                            self.calls.push(super::Call {
                                name: name.clone(),
                                via: super::Via::Field(field.to_string()),
                                span: self.index.of(e),
                            });
                        }
                    }
                }
                // `connector.connect(..)` on a parameter `connector: &mut Connector`: a method
                // of that type.
                if let Some(ty) = self.param_type_of(&m.receiver) {
                    // `state.send_request(buf)` whose body posts: the write is made here.
                    let via = super::Via::Type(ty.clone());
                    if self.local_write(&name, &via) {
                        self.writes.push(self.index.of(e));
                    }
                    self.calls.push(super::Call {
                        name: name.clone(),
                        via: super::Via::Type(ty),
                        span: self.index.of(e),
                    });
                }
                if matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self")) {
                    if self.local_write(&name, &super::Via::Method) {
                        self.writes.push(self.index.of(e));
                    }
                    self.calls.push(super::Call {
                        name,
                        via: super::Via::Method,
                        span: self.index.of(e),
                    });
                }
            }
            Expr::Call(c) => {
                if let Some(p) = names::callee_path(&c.func) {
                    let full = self.scope.resolve(p);
                    let segs = names::segments(p);
                    if matches!(full.last().map(String::as_str), Some("post" | "patch"))
                        && full.len() >= 2
                    {
                        self.writes.push(self.index.of(e));
                    }
                    // Not `Ok(..)`, `Some(..)`, `Error::Timeout(..)`: constructors.
                    let constructor = segs
                        .last()
                        .and_then(|l| l.chars().next())
                        .is_some_and(char::is_uppercase);
                    // `request()` where `request` is a parameter or a `let`: a closure, not a
                    // function of the crate.
                    let binding = segs.len() == 1
                        && self.locals.is_some_and(|l| {
                            l.params.contains(&segs[0]) || l.lets.contains_key(&segs[0])
                        });
                    if !constructor && !binding && !self.scope.is_sleep(&full) {
                        if let Some(last) = segs.last() {
                            if segs.len() == 1 && self.local_write(last, &super::Via::Free) {
                                self.writes.push(self.index.of(e));
                            }
                            self.calls.push(super::Call {
                                name: last.clone(),
                                via: super::Via::of_path(&full, None),
                                span: self.index.of(e),
                            });
                        }
                    }
                }
            }
            Expr::Path(p) => {
                let segs = names::segments(&p.path);
                if segs.len() >= 2
                    && segs[segs.len() - 2] == "Method"
                    && matches!(segs[segs.len() - 1].as_str(), "POST" | "PATCH")
                {
                    self.writes.push(self.index.of(e));
                }
            }
            _ => {}
        }
        syn::visit::visit_expr(self, e);
    }

    fn visit_item(&mut self, _: &'a syn::Item) {}
}

/// `Box::pin(async move { .. })` as the body of a function: its code runs on an executor.
fn returns_async_block(block: &Block) -> bool {
    match block.stmts.last() {
        Some(syn::Stmt::Expr(Expr::Call(c), None)) => {
            c.args.iter().any(|a| matches!(a, Expr::Async(_)))
        }
        Some(syn::Stmt::Expr(Expr::Async(_), None)) => true,
        _ => false,
    }
}

/// Attributes that make a function retry its body.
enum RetryAttr {
    /// `#[retryable]` of this crate: compliant by construction.
    Retryable,
    /// `#[backon]`, `#[retry(..)]`, `#[retrying::retry]`: someone else's.
    Other,
}

fn retry_attribute(attrs: &[syn::Attribute]) -> Option<RetryAttr> {
    attrs.iter().find_map(|a| {
        let kind = match names::last(a.path()).as_deref() {
            Some("retryable") => RetryAttr::Retryable,
            Some("backon" | "retry" | "retrying") => RetryAttr::Other,
            _ => return None,
        };
        // `#[retryable(attempts = 1)]` makes a single attempt.
        let args = names::text(&a.meta).replace(' ', "");
        if args.contains("attempts=1,") || args.contains("attempts=1)") {
            return None;
        }
        Some(kind)
    })
}

/// The structural test: success leaves, failure goes round again, success does not go round
/// again (that is polling), and the operation is not a spin on a lock, a CAS or a channel.
fn is_retry_shape(r: &FlowResult) -> bool {
    if !r.success_exit {
        return false;
    }
    let failing = r
        .continues
        .iter()
        .filter(|c| c.outcome.may_fail())
        .collect::<Vec<_>>();
    if failing.is_empty() || failing.iter().all(|c| c.readiness) {
        return false;
    }
    if r.continues.iter().any(|c| c.outcome == Outcome::Success) {
        return false;
    }
    // What failed on the paths that go round again: a CAS, a lock, a channel, an accept.
    let failed_ops: Vec<&str> = failing
        .iter()
        .filter(|c| !c.readiness)
        .filter_map(|c| c.op.as_deref())
        .collect();
    if !failed_ops.is_empty() && failed_ops.iter().all(|o| names::is_spin_operation(o)) {
        return false;
    }
    if failed_ops.is_empty()
        && r.tested_ops().next().is_some()
        && r.tested_ops().all(names::is_spin_operation)
    {
        return false;
    }
    true
}

/// A loop that runs a long-running operation (a session, a reconciliation, a watch) again
/// whenever it ends, and pauses only when it ended in failure: it never stops by design (no way
/// out on success), goes round at once after a normal end and always waits after a failure.
/// The operation is a session, not a receive or a poll: an event loop that pauses after a
/// failed `recv` is not one.
fn is_supervisor(r: &FlowResult) -> bool {
    if r.success_exit {
        return false;
    }
    let failing: Vec<_> = r.failing().collect();
    let ended: Vec<_> = r
        .continues
        .iter()
        .filter(|c| c.outcome == Outcome::Success)
        .collect();
    !failing.is_empty()
        && !ended.is_empty()
        && failing.iter().all(|c| c.waited)
        && ended.iter().all(|c| !c.waited)
        && failing
            .iter()
            .chain(&ended)
            .all(|c| c.op.as_deref().is_some_and(names::is_session_operation))
}

/// A way round after a failure that never waits, in a loop that waits on other ways round:
/// every path reaching that `continue` (or the end of the body) skipped the waits. Only a
/// counted or blind resend: an uncounted re-run of one picked-out error (a stale pooled
/// connection) is a protocol step.
fn unpaced_path(r: &FlowResult) -> Option<super::Unpaced> {
    // An operation that failed by timing out waited out its timeout.
    let timed = |c: &&super::flow::Continue| {
        c.op.as_deref()
            .is_some_and(|op| op.to_ascii_lowercase().contains("timeout"))
    };
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
        .map(|c| super::Unpaced::Skips(c.span))
        .or_else(|| {
            // Or a path found the attempts used up and goes round anyway, without the wait the
            // counted attempts had (`if attempt < max { attempt += 1; sleep(..) }`, no `else`).
            r.continues
                .iter()
                .filter(|c| c.outcome.may_fail() && !c.readiness && !c.waited && !timed(c))
                .find_map(|c| c.exhausted)
                .filter(|_| r.continues.iter().any(|o| o.waited))
                .map(super::Unpaced::Spent)
        })
}

/// Where a function body starts something that runs beside it (the file offsets where the
/// calls end, so that a loop inside the started task is after none of them): a thread, a
/// task, a process (`thread::spawn`, `tokio::spawn`,
/// `Command::new(..).spawn()`).
fn spawns(body: &Block, index: &LineIndex<'_>) -> Vec<usize> {
    struct Spawn<'i, 'a>(&'i LineIndex<'a>, Vec<usize>);
    impl<'ast> Visit<'ast> for Spawn<'_, '_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            let _guard = crate::analysis::limits::enter();
            let call = match e {
                Expr::MethodCall(m) => Some((&m.method, m.paren_token.span.close())),
                Expr::Call(c) => match &*c.func {
                    Expr::Path(p) => p
                        .path
                        .segments
                        .last()
                        .map(|s| (&s.ident, c.paren_token.span.close())),
                    _ => None,
                },
                _ => None,
            };
            if let Some((id, close)) = call {
                if matches!(
                    id.to_string().as_str(),
                    "spawn" | "spawn_blocking" | "spawn_local"
                ) {
                    self.1.push(self.0.span(close).end);
                }
            }
            syn::visit::visit_expr(self, e);
        }

        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut found = Spawn(index, Vec::new());
    found.visit_block(body);
    found.1
}

/// A loop that waits for something to come up by probing it: every operation it tests
/// (in its body, or its `while` condition) connects, pings or asks for health or readiness.
fn is_readiness_probe(l: &Expr, r: &FlowResult) -> bool {
    let probes = |n: &String| {
        let n = n.to_ascii_lowercase();
        ["connect", "ping", "health", "ready", "probe", "alive"]
            .iter()
            .any(|w| n.contains(w))
    };
    let mut ops: Vec<String> = r.tested_ops().map(str::to_owned).collect();
    if let Expr::While(w) = l {
        let cond = match &*w.cond {
            Expr::Let(le) => &*le.expr,
            other => other,
        };
        ops.extend(names::last_call(cond));
    }
    !ops.is_empty() && ops.iter().all(probes)
}

/// A retry whose every failing way round restarts a session operation (`while
/// worker.run().is_err() { .. }`): a supervisor, meant to go on for ever. A session is named for
/// one (`run`, `serve`) or is a function of this file that serves one (see [`serves_session`]);
/// the round's other operations that fail are its set-up when the body calls them first (a
/// handshake before dispatching what the server sends).
fn restarts_session(r: &FlowResult, body: &Block, scope: &FileScope<'_>, fn_name: &str) -> bool {
    let ops: Vec<&str> = r.failing().filter_map(|c| c.op.as_deref()).collect();
    if ops.is_empty() || r.failing().any(|c| c.op.is_none()) {
        return false;
    }
    let is_session = |op: &str| {
        names::is_session_operation(op)
            || (op != fn_name
                && scope
                    .function_via(op, Some(&super::Via::Method))
                    .or_else(|| scope.function(op))
                    .is_some_and(|f| serves_session(f.block, scope)))
    };
    let order = call_order(body);
    let first_call = |op: &str| order.iter().position(|n| n == op);
    let Some(session_at) = ops
        .iter()
        .filter(|op| is_session(op))
        .filter_map(|op| first_call(op))
        .max()
        .or_else(|| ops.iter().all(|op| is_session(op)).then_some(0))
    else {
        return false;
    };
    ops.iter()
        .all(|op| is_session(op) || first_call(op).is_some_and(|at| at < session_at))
}

/// Whether a loop of `f` (a function that returns nothing) re-establishes a connection on
/// behalf of the servers of a session: every operation it tests connects, and every call of `f`
/// in the file is made by a function that serves a session ([`serves_session`]; a router that
/// reconnects when its connection drops). A connection a caller waits for first (a
/// constructor's) is not.
fn reconnects_for_server(
    l: &Expr,
    f: &LocalFn<'_>,
    scope: &FileScope<'_>,
    index: &LineIndex<'_>,
) -> bool {
    let body = match l {
        Expr::Loop(x) => &x.body,
        Expr::While(w) => &w.body,
        Expr::ForLoop(x) => &x.body,
        _ => return false,
    };
    let calls = call_order(body);
    let connects = |n: &String| n.to_ascii_lowercase().contains("connect") || n.contains("open");
    if !calls.iter().any(connects) {
        return false;
    }
    let name = f.sig.ident.to_string();
    // Every call of it written in the file, read from the text (which the pre-filter has not
    // blanked: a constructor's call counts even where its body was not parsed, and so do calls
    // in macros such as `select!` arms), must be in a function that serves a session, or in
    // the helper itself.
    let text = index.source();
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let calls: Vec<usize> = text
        .match_indices(name.as_str())
        .map(|(at, _)| at)
        .filter(|&at| {
            !text[..at].chars().next_back().is_some_and(ident)
                && text[at + name.len()..].trim_start().starts_with('(')
                && !text[..at].trim_end().ends_with("fn")
        })
        .collect();
    let own = index.of(f.block);
    let inside = |s: &Span, at: usize| s.start <= at && at < s.end;
    let callers: Vec<&LocalFn<'_>> = scope
        .fns
        .values()
        .flatten()
        .filter(|g| !std::ptr::eq(g.block, f.block))
        .filter(|g| calls.iter().any(|&at| inside(&index.of(g.block), at)))
        .collect();
    !callers.is_empty()
        && callers.iter().all(|g| serves_session(g.block, scope))
        && calls
            .iter()
            .all(|&at| inside(&own, at) || callers.iter().any(|g| inside(&index.of(g.block), at)))
}

/// The names of the calls in a body, in the order they are written (closures and items
/// skipped).
fn call_order(body: &Block) -> Vec<String> {
    struct Order(Vec<String>);
    impl<'v> Visit<'v> for Order {
        fn visit_expr(&mut self, e: &'v Expr) {
            let _guard = crate::analysis::limits::enter();
            match e {
                Expr::Closure(_) => return,
                Expr::MethodCall(_) | Expr::Call(_) => self.0.extend(names::last_call(e)),
                _ => {}
            }
            syn::visit::visit_expr(self, e);
        }
        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    let mut order = Order(Vec::new());
    order.visit_block(body);
    order.0
}

/// Whether a function body serves a session: a loop in it receives what the peer sends until
/// the connection drops (`while let Some(op) = decode(&mut reader)?`, a `loop` over a
/// `select!` of `stream.next()` and `rx.recv()`).
fn serves_session(body: &Block, scope: &FileScope<'_>) -> bool {
    /// A receive anywhere in what it visits (the futures of a `select!` too).
    struct R<'s, 'a> {
        scope: &'s FileScope<'a>,
        found: bool,
    }
    impl<'v> Visit<'v> for R<'_, '_> {
        fn visit_expr(&mut self, e: &'v Expr) {
            let _guard = crate::analysis::limits::enter();
            let receive = match e {
                Expr::Closure(_) => return,
                Expr::Await(a) => matches!(&*a.base, Expr::MethodCall(m)
                    if names::is_receive_operation(&m.method.to_string(), true)),
                Expr::MethodCall(_) | Expr::Call(_) => {
                    names::last_call(e).is_some_and(|n| names::is_receive_operation(&n, false))
                }
                _ => false,
            };
            self.found |= receive;
            syn::visit::visit_expr(self, e);
        }
        fn visit_macro(&mut self, m: &'v syn::Macro) {
            let _guard = crate::analysis::limits::enter();
            for future in self.scope.select_futures(m) {
                // `stream.next()` raced in a `select!` is awaited by it.
                let next = matches!(future, Expr::MethodCall(c)
                    if names::is_receive_operation(&c.method.to_string(), true));
                self.found |= next;
                self.visit_expr(future);
            }
        }
        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    /// The loops of the body (not in closures or items).
    struct Loops<'v>(Vec<&'v Expr>);
    impl<'v> Visit<'v> for Loops<'v> {
        fn visit_expr(&mut self, e: &'v Expr) {
            let _guard = crate::analysis::limits::enter();
            match e {
                Expr::Closure(_) => return,
                Expr::While(_) | Expr::Loop(_) | Expr::ForLoop(_) => self.0.push(e),
                _ => {}
            }
            syn::visit::visit_expr(self, e);
        }
        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    let _guard = crate::analysis::limits::enter();
    let mut loops = Loops(Vec::new());
    loops.visit_block(body);
    loops.0.into_iter().any(|l| {
        let mut r = R {
            scope,
            found: false,
        };
        match l {
            Expr::While(w) => {
                r.visit_expr(&w.cond);
                for st in &w.body.stmts {
                    r.visit_stmt(st);
                }
            }
            Expr::Loop(x) => {
                for st in &x.body.stmts {
                    r.visit_stmt(st);
                }
            }
            Expr::ForLoop(f) => r.visit_expr(&f.expr),
            _ => {}
        }
        r.found
    })
}

/// `while res.is_err()` / `while let Err(_) = op()`: the body runs on failure.
fn while_outcome(cond: &Expr) -> Outcome {
    let _guard = crate::analysis::limits::enter();
    match cond {
        Expr::Let(l) => super::flow::pat_outcome(&l.pat).unwrap_or(Outcome::Neutral),
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
fn counts_attempts(iter: &Expr) -> bool {
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
pub(super) fn int_lit(e: &Expr) -> Option<u64> {
    match e {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<u64>().ok(),
        _ => None,
    }
}

/// How many times a `for` over a range of integer literals runs (`0..2` → 2, `1..=2` → 2).
fn literal_range_len(iter: &Expr) -> Option<u64> {
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
fn countdown_len(cond: &Expr, locals: &Locals<'_>, facts: &LoopFacts<'_>) -> Option<u64> {
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
        .all(|m| matches!(m, super::values::Mutation::Compound(syn::BinOp::SubAssign(_), e) if one(e)))
        .then(|| start.saturating_sub(floor))
}

fn for_bound(iter: &Expr) -> Option<BoundKind> {
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
fn attempt_limit(
    l: Option<&Expr>,
    body: &Block,
    facts: &LoopFacts<'_>,
    scope: &FileScope<'_>,
    locals: &Locals<'_>,
) -> Option<f64> {
    struct C<'e, 'c, 'a> {
        est: &'e super::estimate::Estimator<'c, 'a>,
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
    let est = super::estimate::Estimator {
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
fn range_end_is_setting(iter: &Expr) -> bool {
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

/// The longest single wait a growing, uncapped delay reaches within the site's bound, in
/// seconds: infinite without a bound; worked out from the attempt limit when the numbers are
/// written in the file; unknown otherwise.
fn longest_wait(
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
    let mut est = super::estimate::Estimator {
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
    match est.eval(arg) {
        Some(ms) => Some(ms / 1000.0),
        // A delay multiplied on each pass of an unbounded site grows without end.
        None if *bound == Bound::Unbounded && !grows_by_mutation => Some(f64::INFINITY),
        None => None,
    }
}

fn kind_of(growth: bool, counter: bool, opaque: bool) -> DelayKind {
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
fn mark_ceilings(delays: &mut [Delay], waits: &Waits<'_>, body: &Block) {
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

pub(super) fn delay_of(span: Span, t: Taint) -> Delay {
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

/// The mechanical fix of a key made in the loop: move its `let` above the loop. Offered only
/// when the `let` is a statement of the loop body on lines of its own, its value uses nothing
/// bound inside the loop, and the loop starts its line (`loop {`, `let r = loop {`,
/// `for attempt in 0..3 {`, `'retry: loop {`). The fixed code must compile: a use that moves
/// the key (see [`KeyUses`]) takes a clone, so the next attempt still has it, and the fix is
/// left out where that cannot be made safe (the key moved into a `move` closure, mutated, a
/// field of it used, its name bound again or used around the loop).
fn hoist_fix(
    body: &Block,
    head: Span,
    key: Span,
    loop_vars: &[String],
    index: &LineIndex<'_>,
) -> Option<crate::source::Fix> {
    let mut inner: Vec<String> = loop_vars.to_vec();
    let mut found = None;
    for stmt in &body.stmts {
        if let syn::Stmt::Local(l) = stmt {
            let span = index.of(l);
            if span.start <= key.start && key.end <= span.end {
                found = Some((l, span));
                break;
            }
            pat_bindings(&l.pat, &mut inner);
        }
    }
    let (local, span) = found?;
    // A name the body binds again (or the loop's own variable): out of the loop, the `let`
    // would no longer shadow, or be shadowed by, the other binding.
    let mut bound = Vec::new();
    pat_bindings(&local.pat, &mut bound);
    let mut elsewhere = loop_vars.to_vec();
    for stmt in &body.stmts {
        match stmt {
            syn::Stmt::Local(l) if !std::ptr::eq(l, local) => pat_bindings(&l.pat, &mut elsewhere),
            _ => {}
        }
    }
    if bound.iter().any(|b| elsewhere.contains(b)) {
        return None;
    }
    let init = local.init.as_ref()?;
    // The `let` makes the key (`let key = Uuid::new_v4().to_string();`, `format!(..)` of it),
    // not a request that happens to carry one.
    let init_span = index.of(&*init.expr);
    let makes_key = init_span.start == key.start || matches!(&*init.expr, Expr::Macro(_));
    // Names bound in the loop, also inside format strings (`format!("{attempt}")`).
    let text = names::text(&*init.expr);
    let uses_inner = text
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .any(|w| inner.iter().any(|n| n == w));
    if init.diverge.is_some() || !makes_key || uses_inner {
        return None;
    }
    let (stmt_line, stmt_line_end) = index.line_of(span.start);
    let (_, last_line_end) = index.line_of(span.end.saturating_sub(1));
    let before = index.slice(stmt_line, span.start);
    let after = index.slice(span.end, last_line_end);
    // The statement is alone on its lines (a trailing comment goes with it).
    if !before.trim().is_empty()
        || !(after.trim().is_empty() || after.trim_start().starts_with("//"))
    {
        return None;
    }
    let _ = stmt_line_end;
    let (loop_line, _) = index.line_of(head.start);
    let prefix = index.slice(loop_line, head.start);
    let indent: String = prefix.chars().take_while(|c| c.is_whitespace()).collect();
    let rest = prefix.trim();
    let plain = rest.is_empty()
        || (rest.starts_with('\'') && rest.ends_with(':'))
        || (rest.starts_with("let ") && rest.ends_with('='));
    if !plain || loop_line > span.start {
        return None;
    }
    let statement = index.slice(span.start, span.end);
    let clones = clones_for_moves(body, local, index, loop_line)?;
    let mut edits = vec![
        crate::source::Edit {
            start: loop_line,
            end: loop_line,
            replacement: format!("{indent}{statement}\n"),
        },
        crate::source::Edit {
            start: stmt_line,
            end: last_line_end,
            replacement: String::new(),
        },
    ];
    edits.extend(clones);
    Some(crate::source::Fix {
        message: "create the key once, before the loop".to_owned(),
        edits,
    })
}

/// The edits that keep the hoisted key `local` alive for every attempt: `.clone()` after each
/// use in the loop `body` that moves it (none for a key of a `Copy` type), in file order; `None`
/// when the hoisted `let` would not compile or would change what the code does: a pattern other
/// than a plain name, a `mut` or `ref` binding, a use that cannot be made safe ([`KeyUses`]),
/// the name used before the `let` in the loop, in the loop's head (from `loop_line`), or after
/// the loop in the enclosing block (where it would now name the hoisted key).
fn clones_for_moves(
    body: &Block,
    local: &syn::Local,
    index: &LineIndex<'_>,
    loop_line: usize,
) -> Option<Vec<crate::source::Edit>> {
    let mut pat = &local.pat;
    if let syn::Pat::Type(typed) = pat {
        pat = &typed.pat;
    }
    let syn::Pat::Ident(binding) = pat else {
        return None;
    };
    if binding.mutability.is_some() || binding.by_ref.is_some() || binding.subpat.is_some() {
        return None;
    }
    let name = binding.ident.to_string();
    let is_word = |text: &str| {
        text.split(|c: char| !c.is_alphanumeric() && c != '_')
            .any(|w| w == name)
    };
    let body_span = index.of(body);
    let (_, end_of_file) = index.line_of(usize::MAX);
    if is_word(index.slice(loop_line, body_span.start))
        || is_word(enclosing_rest(index.slice(body_span.end, end_of_file)))
    {
        return None;
    }
    let mut uses = KeyUses {
        name: &name,
        index,
        moves: Vec::new(),
        unsafe_use: false,
    };
    let mut after = false;
    for stmt in &body.stmts {
        match stmt {
            syn::Stmt::Local(l) if std::ptr::eq(l, local) => after = true,
            _ if after => uses.visit_stmt(stmt),
            _ if is_word(&names::text(stmt)) => return None,
            _ => {}
        }
    }
    if uses.unsafe_use {
        return None;
    }
    let copy = local
        .init
        .as_ref()
        .is_some_and(|init| makes_copy_key(&init.expr));
    let mut edits: Vec<crate::source::Edit> = if copy {
        Vec::new()
    } else {
        uses.moves
            .iter()
            .map(|&(span, shorthand)| crate::source::Edit {
                start: if shorthand { span.start } else { span.end },
                end: span.end,
                replacement: if shorthand {
                    format!("{name}: {name}.clone()")
                } else {
                    ".clone()".to_owned()
                },
            })
            .collect()
    };
    edits.sort_by_key(|e| (e.start, e.end));
    edits.dedup_by_key(|e| (e.start, e.end));
    Some(edits)
}

/// The text of the enclosing block after a loop: `rest` up to the `}` that closes the block the
/// loop is in (braces counted in the raw text, which at worst looks too far).
fn enclosing_rest(rest: &str) -> &str {
    let mut depth = 0usize;
    for (i, c) in rest.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return &rest[..i],
            '}' => depth -= 1,
            _ => {}
        }
    }
    rest
}

/// Whether a key's value is of a `Copy` type, so that using it never moves it: a UUID or ULID
/// made by its constructor (`Uuid::new_v4()`, `Ulid::new()`), not turned into a string.
fn makes_copy_key(init: &Expr) -> bool {
    let Expr::Call(call) = init else {
        return false;
    };
    let Expr::Path(path) = &*call.func else {
        return false;
    };
    let segments: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    match segments.as_slice() {
        [.., ty, ctor] if ty == "Uuid" => ctor.starts_with("new_v") || ctor.starts_with("now_v"),
        [.., ty, ctor] => ty == "Ulid" && ctor == "new",
        _ => false,
    }
}

/// The uses of a key's name in the statements after its `let` in the loop: those that move it
/// (`moves`: a bare `key` passed, returned, stored or added to, the receiver of an `into_*`
/// method, a struct field given by shorthand, with whether it is one), and whether any use
/// cannot be made safe by a clone (`unsafe_use`): the key moved into a `move` closure or `async
/// move` block (the clone would be moved in too), assigned to, a field of it used, its name
/// bound again, or named in a macro that may take it by value. A reference (`&key`), a method
/// call on it (`key.as_str()`), a comparison, a dereference and the formatting and logging
/// macros only borrow it.
struct KeyUses<'u, 'a> {
    name: &'u str,
    index: &'u LineIndex<'a>,
    moves: Vec<(Span, bool)>,
    unsafe_use: bool,
}

impl KeyUses<'_, '_> {
    fn is_key(&self, e: &Expr) -> bool {
        matches!(e, Expr::Path(p) if p.qself.is_none() && p.path.is_ident(self.name))
    }

    fn mentions(&self, node: &impl quote::ToTokens) -> bool {
        let mut stack = vec![node.to_token_stream()];
        while let Some(tokens) = stack.pop() {
            for token in tokens {
                match token {
                    proc_macro2::TokenTree::Ident(i) if i == self.name => return true,
                    proc_macro2::TokenTree::Group(g) => stack.push(g.stream()),
                    _ => {}
                }
            }
        }
        false
    }
}

impl<'ast> Visit<'ast> for KeyUses<'_, '_> {
    fn visit_expr(&mut self, e: &'ast Expr) {
        let _guard = crate::analysis::limits::enter();
        match e {
            _ if self.is_key(e) => self.moves.push((self.index.of(e), false)),
            Expr::Reference(r) if self.is_key(&r.expr) => {}
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) && self.is_key(&u.expr) => {}
            Expr::MethodCall(m) if self.is_key(&m.receiver) => {
                if m.method.to_string().starts_with("into") {
                    self.moves.push((self.index.of(&*m.receiver), false));
                }
                for arg in &m.args {
                    self.visit_expr(arg);
                }
            }
            Expr::Field(f) if self.is_key(&f.base) => self.unsafe_use = true,
            Expr::Assign(a) if self.is_key(&a.left) => self.unsafe_use = true,
            Expr::Binary(b) => {
                use syn::BinOp::{Eq, Ge, Gt, Le, Lt, Ne};
                let compares = matches!(b.op, Eq(_) | Ne(_) | Lt(_) | Le(_) | Gt(_) | Ge(_));
                let assigns = matches!(
                    b.op,
                    syn::BinOp::AddAssign(_)
                        | syn::BinOp::SubAssign(_)
                        | syn::BinOp::MulAssign(_)
                        | syn::BinOp::DivAssign(_)
                        | syn::BinOp::RemAssign(_)
                        | syn::BinOp::BitXorAssign(_)
                        | syn::BinOp::BitAndAssign(_)
                        | syn::BinOp::BitOrAssign(_)
                        | syn::BinOp::ShlAssign(_)
                        | syn::BinOp::ShrAssign(_)
                );
                if assigns && self.is_key(&b.left) {
                    self.unsafe_use = true;
                }
                for side in [&*b.left, &*b.right] {
                    if !(compares && self.is_key(side)) {
                        self.visit_expr(side);
                    }
                }
            }
            Expr::Closure(c) if c.capture.is_some() && self.mentions(&c.body) => {
                self.unsafe_use = true;
            }
            Expr::Async(a) if a.capture.is_some() && self.mentions(&a.block) => {
                self.unsafe_use = true;
            }
            Expr::Struct(s) => {
                for field in &s.fields {
                    let shorthand = field.colon_token.is_none()
                        && matches!(&field.member, syn::Member::Named(n) if n == self.name);
                    if shorthand {
                        self.moves.push((self.index.of(field), true));
                    } else {
                        self.visit_expr(&field.expr);
                    }
                }
                if let Some(rest) = &s.rest {
                    self.visit_expr(rest);
                }
            }
            _ => syn::visit::visit_expr(self, e),
        }
    }

    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        if p.ident == self.name {
            self.unsafe_use = true;
        }
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        let borrows = m.path.segments.last().is_some_and(|s| {
            matches!(
                s.ident.to_string().as_str(),
                "format"
                    | "format_args"
                    | "print"
                    | "println"
                    | "eprint"
                    | "eprintln"
                    | "write"
                    | "writeln"
                    | "panic"
                    | "assert"
                    | "assert_eq"
                    | "assert_ne"
                    | "debug_assert"
                    | "debug_assert_eq"
                    | "debug_assert_ne"
                    | "unreachable"
                    | "todo"
                    | "trace"
                    | "debug"
                    | "info"
                    | "warn"
                    | "error"
                    | "event"
                    | "json"
            )
        });
        if !borrows && self.mentions(&m.tokens) {
            self.unsafe_use = true;
        }
    }

    // A nested item cannot see the loop's locals.
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// Whether the loop calls something that logs in again or refreshes a token.
fn calls_reauth(body: &Block) -> bool {
    let text = names::text(body);
    text.split(|c: char| !c.is_alphanumeric() && c != '_')
        .any(|w| {
            let w = w.to_ascii_lowercase();
            matches!(
                w.as_str(),
                "login"
                    | "relogin"
                    | "log_in"
                    | "reauth"
                    | "reauthenticate"
                    | "authenticate"
                    | "sign_in"
                    | "refresh_token"
                    | "refresh_access_token"
                    | "renew_token"
                    | "refresh_auth"
                    | "refresh_credentials"
                    | "get_token"
                    | "fetch_token"
                    | "new_token"
                    | "reconnect_auth"
            ) || (w.starts_with("refresh") && w.contains("token"))
        })
}

/// Whether a condition or a match in the loop hands a status to a function of another file:
/// `match strategy.test(last_status, ..)`, `if policy.should_stop(resp.status())`.
fn delegates_status(body: &Block, scope: &FileScope<'_>) -> bool {
    struct D<'s, 'a> {
        scope: &'s FileScope<'a>,
        /// Places assigned from a status in the loop (`last_status = Some(status)`).
        status_places: Vec<String>,
        found: bool,
    }
    impl D<'_, '_> {
        fn statusy(&self, e: &Expr) -> bool {
            let t = names::text(e);
            names::is_status_text(&t)
                || self
                    .status_places
                    .iter()
                    .any(|p| super::values::mentions(e, p))
        }
        fn decides(&mut self, e: &Expr) {
            let _guard = crate::analysis::limits::enter();
            let (name, via, args): (Option<String>, super::Via, Vec<&Expr>) = match e {
                Expr::Call(c) => {
                    let path = names::callee_path(&c.func);
                    (
                        path.and_then(names::last),
                        path.map_or(super::Via::Free, |p| self.scope.via_of(p)),
                        c.args.iter().collect(),
                    )
                }
                Expr::MethodCall(m) => (
                    Some(m.method.to_string()),
                    super::Via::Method,
                    m.args.iter().collect(),
                ),
                Expr::Await(a) => return self.decides(&a.base),
                Expr::Paren(p) => return self.decides(&p.expr),
                Expr::Unary(u) => return self.decides(&u.expr),
                Expr::Binary(b) => {
                    self.decides(&b.left);
                    self.decides(&b.right);
                    return;
                }
                _ => return,
            };
            let Some(name) = name else { return };
            let local = self
                .scope
                .probe(|| self.scope.function_via(&name, Some(&via)).is_some());
            let known = names::is_retry_predicate(&name)
                || name.chars().next().is_some_and(char::is_uppercase)
                || matches!(
                    name.as_str(),
                    "is_success"
                        | "is_client_error"
                        | "is_server_error"
                        | "contains"
                        | "matches"
                        | "eq"
                        | "ne"
                );
            if !local && !known && args.iter().any(|a| self.statusy(a)) {
                self.found = true;
            }
        }
    }
    impl<'ast> Visit<'ast> for D<'_, '_> {
        fn visit_expr_if(&mut self, i: &'ast syn::ExprIf) {
            let _guard = crate::analysis::limits::enter();
            self.decides(&i.cond);
            syn::visit::visit_expr_if(self, i);
        }
        fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
            let _guard = crate::analysis::limits::enter();
            self.decides(&m.expr);
            syn::visit::visit_expr_match(self, m);
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let _guard = crate::analysis::limits::enter();
    let facts = LoopFacts::collect(body, &[]);
    let status_places = facts
        .mutations
        .iter()
        .filter(|(_, ms)| {
            ms.iter().any(|m| match m {
                super::values::Mutation::Assign(e) => names::is_status_text(&names::text(*e)),
                super::values::Mutation::Compound(..) => false,
            })
        })
        .map(|(k, _)| k.clone())
        .collect();
    let mut d = D {
        scope,
        status_places,
        found: false,
    };
    d.visit_block(body);
    d.found
}

/// Collects the statuses for which a function returns an error: the then-branch of a status test
/// that returns `Err`/`bail!`s, and `error_for_status()`.
struct StatusErrors<'e, 'a, 'c> {
    eval: &'e StatusEval<'a, 'c>,
    set: StatusSet,
}

impl<'ast> Visit<'ast> for StatusErrors<'_, '_, '_> {
    fn visit_expr_if(&mut self, i: &'ast syn::ExprIf) {
        let _guard = crate::analysis::limits::enter();
        if let Some(sets) = self.eval.cond(&i.cond) {
            let then = names::text(&i.then_branch);
            if then.contains("Err") || then.contains("bail") {
                self.set = self.set.union(sets.then);
            }
        }
        syn::visit::visit_expr_if(self, i);
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        let _guard = crate::analysis::limits::enter();
        if m.method == "error_for_status" || m.method == "error_for_status_ref" {
            self.set = self.set.union(StatusSet::range(400, 599));
        }
        syn::visit::visit_expr_method_call(self, m);
    }

    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// Whether a tested operation uses a place the loop replaces with where the last answer points
/// (`url = resp.headers().get(LOCATION)..`, `cursor = page.next_cursor`).
fn follows_pointer(
    result: &FlowResult,
    body: &Block,
    facts: &LoopFacts<'_>,
    index: &LineIndex<'_>,
) -> bool {
    facts.mutations.iter().any(|(key, muts)| {
        !facts.counters.contains(key)
            && muts.iter().any(|m| match m {
                super::values::Mutation::Assign(rhs) => {
                    let t = names::text(*rhs).to_ascii_lowercase();
                    t.split(|c: char| !c.is_alphanumeric() && c != '_')
                        .any(|w| {
                            matches!(
                                w,
                                "location"
                                    | "redirect"
                                    | "next"
                                    | "cursor"
                                    | "next_cursor"
                                    | "continuation"
                                    | "continuation_token"
                                    | "page_token"
                                    | "next_page"
                                    | "next_page_token"
                                    | "next_url"
                                    | "next_link"
                                    | "href"
                            )
                        })
                }
                super::values::Mutation::Compound(..) => false,
            })
            && (tested_ops_mention(result, index, key) || passed_to_call(body, key))
    })
}

/// Whether a pass rewrites what the tested operation is given from what its failure said
/// (an `OffchainLookup` revert answered by a gateway and turned into the next call's input:
/// `tx.set_input(callback)` where `callback` is worked out from the error): each pass asks
/// something new, as a redirect does. Not a reset of the same request by an error handler
/// (`txn = txn.on_error(err)`, `txn = db.reset(err)`).
fn rewrites_input_from_failure(result: &FlowResult, body: &Block, index: &LineIndex<'_>) -> bool {
    /// The names bound inside `Err(..)` patterns, and the places set from something.
    #[derive(Default)]
    struct V<'v> {
        failures: Vec<String>,
        /// (place, value): `place = value`, `place.field = value`, `place.set_x(value, ..)`.
        sets: Vec<(String, Vec<&'v Expr>)>,
    }
    impl<'v> Visit<'v> for V<'v> {
        fn visit_pat_tuple_struct(&mut self, p: &'v syn::PatTupleStruct) {
            let _guard = crate::analysis::limits::enter();
            if p.path.segments.last().is_some_and(|s| s.ident == "Err") {
                for e in &p.elems {
                    pat_bindings(e, &mut self.failures);
                }
            }
            syn::visit::visit_pat_tuple_struct(self, p);
        }
        fn visit_expr(&mut self, e: &'v Expr) {
            let _guard = crate::analysis::limits::enter();
            let root = |mut t: &'v Expr| {
                while let Expr::Field(f) = t {
                    t = &f.base;
                }
                match t {
                    Expr::Path(p) => p.path.get_ident().map(ToString::to_string),
                    _ => None,
                }
            };
            match e {
                Expr::Closure(_) => return,
                Expr::Assign(a) => {
                    if let Some(place) = root(&a.left) {
                        self.sets.push((place, vec![&*a.right]));
                    }
                }
                Expr::MethodCall(m) if m.method.to_string().starts_with("set_") => {
                    if let Some(place) = root(&m.receiver) {
                        self.sets.push((place, m.args.iter().collect()));
                    }
                }
                _ => {}
            }
            syn::visit::visit_expr(self, e);
        }
        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    let mut v = V::default();
    v.visit_block(body);
    if v.failures.is_empty() || v.sets.is_empty() {
        return false;
    }
    // What was worked out from the failure (not the error itself: `txn = db.on_error(err)`
    // resets the same transaction, a retry).
    let derived: Vec<String> = derived_names(body, &v.failures, true)
        .into_iter()
        .filter(|d| !v.failures.contains(d))
        .collect();
    v.sets.iter().any(|(place, values)| {
        !v.failures.contains(place)
            && !derived.contains(place)
            && !names::is_retry_word(place)
            && tested_ops_mention(result, index, place)
            // A new value, not the place's own reset (`txn = txn.settle(err)`).
            && values.iter().all(|e| !super::values::mentions(e, place))
            && values
                .iter()
                .any(|e| derived.iter().any(|d| super::values::mentions(e, d)))
    })
}

/// Whether every failing way round of a loop goes through the arms of a `match` on a retry
/// policy object's decision: `let d = session.decide_should_retry(info); match d {
/// RetryDecision::RetrySameTarget(_) => continue, RetryDecision::DontRetry => break, .. }`.
fn policy_decides(result: &FlowResult, body: &Block, index: &LineIndex<'_>) -> bool {
    /// The spans of the `match`es on a decision, and the names bound to a decision.
    struct V<'i, 'a> {
        index: &'i LineIndex<'a>,
        decided: Vec<String>,
        matches: Vec<Span>,
    }
    fn decides(e: &Expr) -> bool {
        let _guard = crate::analysis::limits::enter();
        match e {
            Expr::Await(a) => decides(&a.base),
            Expr::MethodCall(m) => {
                let n = m.method.to_string().to_ascii_lowercase();
                n.contains("should_retry") || n.starts_with("decide") || n.contains("decision")
            }
            _ => false,
        }
    }
    impl<'v> Visit<'v> for V<'_, '_> {
        fn visit_local(&mut self, l: &'v syn::Local) {
            let _guard = crate::analysis::limits::enter();
            if l.init.as_ref().is_some_and(|i| decides(&i.expr)) {
                pat_bindings(&l.pat, &mut self.decided);
            }
            syn::visit::visit_local(self, l);
        }
        fn visit_expr(&mut self, e: &'v Expr) {
            let _guard = crate::analysis::limits::enter();
            match e {
                Expr::Closure(_) => return,
                Expr::Match(m) => {
                    let on_decision = decides(&m.expr)
                        || matches!(&*m.expr, Expr::Path(p)
                            if p.path.get_ident().is_some_and(|id| self.decided.iter().any(|d| id == d)));
                    // The arms name the policy's verdicts (`RetryDecision::DontRetry`).
                    let verdicts = m.arms.iter().all(|a| match &a.pat {
                        syn::Pat::TupleStruct(t) => t.path.segments.len() >= 2,
                        syn::Pat::Path(p) => p.path.segments.len() >= 2,
                        syn::Pat::Struct(s) => s.path.segments.len() >= 2,
                        syn::Pat::Wild(_) => true,
                        _ => false,
                    });
                    if on_decision && verdicts {
                        self.matches.push(self.index.of(e));
                    }
                }
                _ => {}
            }
            syn::visit::visit_expr(self, e);
        }
        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    let mut v = V {
        index,
        decided: Vec::new(),
        matches: Vec::new(),
    };
    v.visit_block(body);
    if v.matches.is_empty() {
        return false;
    }
    let mut failing = result.failing().peekable();
    failing.peek().is_some()
        && failing.all(|c| {
            v.matches
                .iter()
                .any(|m| m.start <= c.span.start && c.span.end <= m.end)
        })
}

/// The `then` branches of `if let Some(x) = v.take() { .. } else { .. }` at the top of a loop
/// body whose branch does not set `v` again: going round from there, the next pass finds `v`
/// empty and runs the `else`.
fn taken_branches(body: &Block, index: &LineIndex<'_>) -> Vec<Span> {
    let mut out = Vec::new();
    for st in &body.stmts {
        let syn::Stmt::Expr(Expr::If(i), _) = st else {
            continue;
        };
        if i.else_branch.is_none() {
            continue;
        }
        let Expr::Let(le) = &*i.cond else { continue };
        let Expr::MethodCall(m) = &*le.expr else {
            continue;
        };
        let taken = match &*m.receiver {
            Expr::Path(p) if m.method == "take" && m.args.is_empty() => p.path.get_ident(),
            _ => None,
        };
        let Some(v) = taken.map(ToString::to_string) else {
            continue;
        };
        let sets_again = LoopFacts::collect(&i.then_branch, &[])
            .mutations
            .contains_key(&v);
        if super::flow::option_outcome(&le.pat).is_some() && !sets_again {
            out.push(index.of(&i.then_branch));
        }
    }
    out
}

/// Whether `key` is passed to a call in `body` (`client.get(&url)`).
fn passed_to_call(body: &Block, key: &str) -> bool {
    struct P<'k> {
        key: &'k str,
        found: bool,
    }
    impl<'ast> Visit<'ast> for P<'_> {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            let _guard = crate::analysis::limits::enter();
            if m.args.iter().any(|a| super::values::mentions(a, self.key)) {
                self.found = true;
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            let _guard = crate::analysis::limits::enter();
            if c.args.iter().any(|a| super::values::mentions(a, self.key)) {
                self.found = true;
            }
            syn::visit::visit_expr_call(self, c);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut p = P { key, found: false };
    p.visit_block(body);
    p.found
}

/// `names`, and the `let`s of `body` computed from them (`let body = Request { model, .. }`);
/// `from_pattern`: the names are bound by the loop's pattern, not by a `let` of the body.
/// Whether the elements a `for` loop binds (`vars`) reach its body other than as the round's
/// wait: used outside the waits' calls (`waits`), outside statement macros (a log line) and
/// outside the tests that only choose what to do (a `match` on the element, an `if` or a
/// comparison: `match retry_delay { Some(d) => sleep(d), None => return }` is a schedule), except
/// to compute a name that is itself only waited on (`let d = delay * 2; sleep(d)`).
fn elements_feed_the_rounds(body: &Block, vars: &[String], waits: &Waits<'_>) -> bool {
    let _guard = crate::analysis::limits::enter();
    let wait_calls: Vec<(usize, usize)> = waits
        .sleeps
        .iter()
        .map(|(call, _, _)| *call)
        .chain(waits.helpers.iter().map(|(call, ..)| *call))
        // Not the calls that wait up to a time they are given: they are the operation too
        // (`connect_timeout(addr, timeout)`), and what they are given is its input.
        .map(|call| {
            let span = syn::spanned::Spanned::span(call);
            (span.byte_range().start, span.byte_range().end)
        })
        .collect();
    let mut uses = Uses {
        vars,
        wait_calls: &wait_calls,
        waited_names: Vec::new(),
        feeds: Vec::new(),
        testing: false,
        valued: false,
    };
    uses.visit_block(body);
    // A `let` whose value takes an element and whose name is only waited on is part of the
    // wait.
    let waited: Vec<&String> = uses
        .feeds
        .iter()
        .filter_map(|f| f.1.as_ref())
        .filter(|name| uses.waited_names.contains(name))
        .collect();
    uses.feeds
        .iter()
        .any(|(_, bound)| bound.as_ref().is_none_or(|name| !waited.contains(&name)))
}

/// Whether a body awaits anything.
struct AwaitFinder(bool);

impl<'ast> Visit<'ast> for AwaitFinder {
    fn visit_expr_await(&mut self, _: &'ast syn::ExprAwait) {
        self.0 = true;
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// Finds the uses of a `for` loop's elements (see [`elements_feed_the_rounds`]).
struct Uses<'v> {
    vars: &'v [String],
    wait_calls: &'v [(usize, usize)],
    /// Names used inside the waits' calls.
    waited_names: Vec<String>,
    /// Each use outside a wait and a statement macro: where, and the name a `let` binds it to.
    feeds: Vec<(usize, Option<String>)>,
    /// Inside a test that only chooses a path (a `match` scrutinee, a condition, a comparison).
    testing: bool,
    /// Inside an expression whose value is data for something (a `let`'s value, a call's
    /// arguments, an assignment): a `match` or an `if` there makes data of its scrutinee.
    valued: bool,
}

impl Uses<'_> {
    fn with(&mut self, testing: bool, valued: bool, visit: impl FnOnce(&mut Self)) {
        let outer = (self.testing, self.valued);
        self.testing = testing;
        self.valued = valued;
        visit(self);
        (self.testing, self.valued) = outer;
    }
}

impl Uses<'_> {
    fn in_wait(&self, at: usize) -> bool {
        self.wait_calls
            .iter()
            .any(|(from, to)| (*from..*to).contains(&at))
    }
}

impl<'ast> Visit<'ast> for Uses<'_> {
    fn visit_stmt(&mut self, s: &'ast syn::Stmt) {
        let _guard = crate::analysis::limits::enter();
        match s {
            // A log line or an assertion: not the operation's input.
            syn::Stmt::Macro(_) | syn::Stmt::Expr(Expr::Macro(_), _) => {}
            syn::Stmt::Local(l) => {
                let mut bound = Vec::new();
                pat_bindings(&l.pat, &mut bound);
                let before = self.feeds.len();
                self.with(self.testing, true, |v| syn::visit::visit_stmt(v, s));
                if let [name] = bound.as_slice() {
                    for f in &mut self.feeds[before..] {
                        f.1 = Some(name.clone());
                    }
                }
            }
            _ => syn::visit::visit_stmt(self, s),
        }
    }

    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        let Some(ident) = p.path.get_ident() else {
            return;
        };
        let name = ident.to_string();
        let at = ident.span().byte_range().start;
        if self.in_wait(at) {
            self.waited_names.push(name);
        } else if self.vars.contains(&name) && !self.testing {
            self.feeds.push((at, None));
        }
    }

    /// A call is an operation, wherever it is written (`if let Ok(s) = connect(addr)`, `match
    /// fetch(url)`): what it is given counts.
    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        let _guard = crate::analysis::limits::enter();
        self.with(false, true, |v| syn::visit::visit_expr_call(v, c));
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        let _guard = crate::analysis::limits::enter();
        self.with(false, true, |v| syn::visit::visit_expr_method_call(v, m));
    }

    fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
        let _guard = crate::analysis::limits::enter();
        self.with(self.testing, true, |v| syn::visit::visit_expr_assign(v, a));
    }

    fn visit_expr_struct(&mut self, e: &'ast syn::ExprStruct) {
        let _guard = crate::analysis::limits::enter();
        self.with(false, true, |v| syn::visit::visit_expr_struct(v, e));
    }

    /// A `match` whose value is not data only chooses a path: its scrutinee is a test (in a
    /// `let`, its value is data, and what it is made of counts: `let path = match algo { .. }`).
    fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
        let _guard = crate::analysis::limits::enter();
        let testing = self.testing || !self.valued;
        self.with(testing, self.valued, |v| v.visit_expr(&m.expr));
        for arm in &m.arms {
            self.visit_arm(arm);
        }
    }

    fn visit_expr_if(&mut self, i: &'ast syn::ExprIf) {
        let _guard = crate::analysis::limits::enter();
        let testing = self.testing || !self.valued;
        self.with(testing, self.valued, |v| v.visit_expr(&i.cond));
        self.visit_block(&i.then_branch);
        if let Some((_, e)) = &i.else_branch {
            self.visit_expr(e);
        }
    }

    fn visit_expr_binary(&mut self, b: &'ast syn::ExprBinary) {
        let _guard = crate::analysis::limits::enter();
        let compares = matches!(
            b.op,
            syn::BinOp::Eq(_)
                | syn::BinOp::Ne(_)
                | syn::BinOp::Lt(_)
                | syn::BinOp::Le(_)
                | syn::BinOp::Gt(_)
                | syn::BinOp::Ge(_)
        );
        let outer = self.testing;
        self.testing |= compares;
        syn::visit::visit_expr_binary(self, b);
        self.testing = outer;
    }

    /// A macro whose value is used (`format!("{mirror}/{path}")`): its tokens name an element
    /// directly, or in a string's inline format argument.
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        let at = syn::spanned::Spanned::span(&m.path).byte_range().start;
        if !self.in_wait(at) && tokens_name(m.tokens.clone(), self.vars) {
            self.feeds.push((at, None));
        }
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

/// Whether `tokens` name one of `vars`: as an identifier, or as an inline format argument of a
/// string (`"{var}"`, `"{var:?}"`).
fn tokens_name(tokens: proc_macro2::TokenStream, vars: &[String]) -> bool {
    let _guard = crate::analysis::limits::enter();
    tokens.into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(i) => vars.iter().any(|v| i == v),
        proc_macro2::TokenTree::Group(g) => tokens_name(g.stream(), vars),
        proc_macro2::TokenTree::Literal(l) => {
            let text = l.to_string();
            vars.iter()
                .any(|v| text.contains(&format!("{{{v}}}")) || text.contains(&format!("{{{v}:")))
        }
        proc_macro2::TokenTree::Punct(_) => false,
    })
}

fn derived_names(body: &Block, names: &[String], from_pattern: bool) -> Vec<String> {
    let _guard = crate::analysis::limits::enter();
    let mut out = names.to_vec();
    // Names bound so far: a name of `names` bound again by a `let` of its own (`let key =
    // Uuid::new_v4()` over a loop variable `key`) no longer holds what was drawn. The `let`
    // that draws a name (`let idx = match hosts.pick_next() ..`) is its first binding.
    let mut bound_before: Vec<String> = if from_pattern {
        names.to_vec()
    } else {
        Vec::new()
    };
    for stmt in &body.stmts {
        if let syn::Stmt::Local(l) = stmt {
            let mut bound = Vec::new();
            pat_bindings(&l.pat, &mut bound);
            let derived = l
                .init
                .as_ref()
                .is_some_and(|init| out.iter().any(|n| super::values::mentions(&init.expr, n)));
            if derived {
                out.extend(bound.iter().cloned());
            } else {
                out.retain(|n| !(bound.contains(n) && bound_before.contains(n)));
            }
            bound_before.extend(bound);
        }
    }
    out
}

/// The variables a loop body steps (`i += 1`, `i = (i + 1) % n`, `i = 0`), not inside
/// closures.
fn stepped_index_vars(body: &Block) -> Vec<String> {
    struct V(Vec<String>);
    impl<'v> Visit<'v> for V {
        fn visit_expr(&mut self, e: &'v Expr) {
            let _guard = crate::analysis::limits::enter();
            let target = match e {
                Expr::Closure(_) => return,
                Expr::Assign(a) => Some(&*a.left),
                Expr::Binary(b) if matches!(b.op, syn::BinOp::AddAssign(_)) => Some(&*b.left),
                _ => None,
            };
            if let Some(Expr::Path(p)) = target {
                if let Some(id) = p.path.get_ident() {
                    self.0.push(id.to_string());
                }
            }
            syn::visit::visit_expr(self, e);
        }

        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    let mut v = V(Vec::new());
    v.visit_block(body);
    v.0.sort();
    v.0.dedup();
    v.0
}

/// Whether an operation the loop tests indexes with `var` (`self.queues[i].get()`,
/// `nodes[i % n]`).
fn tested_ops_index_with(r: &FlowResult, index: &LineIndex<'_>, var: &str) -> bool {
    r.tested_exprs
        .iter()
        .any(|s| indexes_with(index.text(*s), var))
}

/// Whether code text indexes with `var` (`[i]`, `[i % n]`).
fn indexes_with(text: &str, var: &str) -> bool {
    text.match_indices('[').any(|(at, _)| {
        let rest = text[at + 1..].trim_start();
        rest.strip_prefix(var)
            .is_some_and(|after| !after.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
    })
}

/// The names the top of a loop body binds to what an element indexed with `var` is asked
/// (`let connection = self.queues[i].get();`; not `let d = DELAYS[i];`).
fn lets_indexing_with(body: &Block, var: &str) -> Vec<String> {
    /// A call made on an element indexed with `var`, through awaits, `?` and fields.
    fn asks_indexed(e: &Expr, var: &str, called: bool) -> bool {
        let _guard = crate::analysis::limits::enter();
        match e {
            Expr::MethodCall(m) => asks_indexed(&m.receiver, var, true),
            Expr::Await(a) => asks_indexed(&a.base, var, called),
            Expr::Try(t) => asks_indexed(&t.expr, var, called),
            Expr::Field(f) => asks_indexed(&f.base, var, called),
            Expr::Paren(p) => asks_indexed(&p.expr, var, called),
            Expr::Index(i) => called && super::values::mentions(&i.index, var),
            _ => false,
        }
    }
    let mut out = Vec::new();
    for stmt in &body.stmts {
        if let syn::Stmt::Local(l) = stmt {
            if l.init
                .as_ref()
                .is_some_and(|init| asks_indexed(&init.expr, var, false))
            {
                pat_bindings(&l.pat, &mut out);
            }
        }
    }
    out
}

fn tested_ops_mention(r: &FlowResult, index: &LineIndex<'_>, var: &str) -> bool {
    r.tested_exprs.iter().any(|s| {
        index
            .text(*s)
            .split(|c: char| !c.is_alphanumeric() && c != '_')
            .any(|w| w == var)
    })
}

/// The names a loop body binds, at its top, to the next of a set of alternatives, leaving when
/// there is none: `let idx = match tracker.pick_next() { Some(i) => i, None => break };`,
/// `let Some(host) = hosts.next() else { return Err(e) };`.
fn drawn_alternatives(body: &Block) -> Vec<String> {
    let draws = draws_alternative;
    let mut out = Vec::new();
    for st in &body.stmts {
        let syn::Stmt::Local(local) = st else {
            continue;
        };
        let Some(init) = &local.init else { continue };
        let is_draw = match (&*init.expr, &init.diverge) {
            (e, Some((_, otherwise))) => draws(e) && super::flow::leaves(otherwise),
            (Expr::Match(m), None) => {
                draws(&m.expr)
                    && m.arms.iter().any(|a| {
                        super::flow::option_outcome(&a.pat).is_some()
                            && super::flow::leaves(&a.body)
                    })
            }
            _ => false,
        };
        if is_draw {
            pat_bindings(&local.pat, &mut out);
        }
    }
    out
}

/// Whether `e` draws the next alternative: `hosts.pick_next()`, or such a call in a closure
/// handed to an accessor (`health.with_tracker(|t| t.pick_next_endpoint())`).
fn draws_alternative(e: &Expr) -> bool {
    let _guard = crate::analysis::limits::enter();
    let mut e = e;
    while let Expr::Await(a) = e {
        e = &a.base;
    }
    match e {
        Expr::MethodCall(m) if names::is_next_alternative(&m.method.to_string()) => true,
        Expr::MethodCall(m) => m.args.iter().any(|a| match a {
            Expr::Closure(c) => draws_alternative(&c.body),
            _ => false,
        }),
        _ => false,
    }
}

/// `while let Some(idx) = tracker.pick_next()`: the variables each pass draws.
fn drawn_by_condition(cond: &Expr) -> Vec<String> {
    let mut out = Vec::new();
    if let Expr::Let(l) = cond {
        if super::flow::option_outcome(&l.pat).is_some() && draws_alternative(&l.expr) {
            pat_bindings(&l.pat, &mut out);
        }
    }
    out
}

/// An I/O operation whose failure is logged before going round again: a retry even without a
/// pause or a counter (a compare-and-swap or a parse loop neither logs nor does I/O).
fn logs_and_does_io(l: &Expr, result: &FlowResult) -> bool {
    let io = result.tested_ops().any(names::is_io_operation);
    if !io {
        return false;
    }
    let text = names::text(l);
    text.split(|c: char| !c.is_alphanumeric() && c != '_')
        .any(|w| {
            matches!(
                w,
                "error" | "warn" | "info" | "debug" | "trace" | "eprintln" | "println" | "log"
            )
        })
        || result
            .tested_ops()
            .any(|o| matches!(o, "connect" | "send_to" | "send"))
}

fn mentions_retry_words(l: &Expr, fn_name: &str) -> bool {
    if names::is_retry_word(fn_name) {
        return true;
    }
    // Variables, functions, fields and log text; not type names (`RetryError` in a regex engine).
    let text = names::text(l);
    text.split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.chars().next().is_some_and(char::is_uppercase))
        .any(names::is_retry_word)
}

/// Whether a tested result went through `error_for_status()`: in the tested expression itself, or
/// in the `let` that the tested variable was bound by.
fn tests_error_for_status(result: &FlowResult, body: &Block, index: &LineIndex<'_>) -> bool {
    struct L<'t> {
        tested: &'t [&'t str],
        found: bool,
    }
    impl<'ast> Visit<'ast> for L<'_> {
        fn visit_local(&mut self, l: &'ast syn::Local) {
            let _guard = crate::analysis::limits::enter();
            let mut names = Vec::new();
            pat_bindings(&l.pat, &mut names);
            if let Some(init) = &l.init {
                if names
                    .iter()
                    .any(|n| self.tested.iter().any(|t| t.trim() == n))
                    && calls_method_expr(&init.expr, "error_for_status")
                {
                    self.found = true;
                }
            }
            syn::visit::visit_local(self, l);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let tested: Vec<&str> = result.tested_exprs.iter().map(|s| index.text(*s)).collect();
    if tested.iter().any(|t| t.contains("error_for_status")) {
        return true;
    }
    let mut l = L {
        tested: &tested,
        found: false,
    };
    l.visit_block(body);
    l.found
}

fn calls_method_expr(e: &Expr, name: &str) -> bool {
    let t = names::text(e);
    t.contains(name)
}

pub(super) fn contains_loop(body: &Block) -> bool {
    struct C {
        found: bool,
    }
    impl<'ast> Visit<'ast> for C {
        fn visit_expr(&mut self, e: &'ast Expr) {
            let _guard = crate::analysis::limits::enter();
            if matches!(e, Expr::Loop(_) | Expr::While(_) | Expr::ForLoop(_)) {
                self.found = true;
            } else if !self.found {
                syn::visit::visit_expr(self, e);
            }
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut c = C { found: false };
    c.visit_block(body);
    c.found
}

fn calls_itself(body: &Block, name: &str) -> bool {
    struct C<'n> {
        name: &'n str,
        found: bool,
    }
    impl<'ast> Visit<'ast> for C<'_> {
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            let _guard = crate::analysis::limits::enter();
            if let Some(p) = names::callee_path(&c.func) {
                let segs = names::segments(p);
                if matches!(segs.as_slice(), [one] if one == self.name)
                    || matches!(segs.as_slice(), [s, one] if s == "Self" && one == self.name)
                {
                    self.found = true;
                }
            }
            syn::visit::visit_expr_call(self, c);
        }
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            let _guard = crate::analysis::limits::enter();
            if m.method == self.name
                && matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self"))
            {
                self.found = true;
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut c = C { name, found: false };
    c.visit_block(body);
    c.found
}

/// The arguments of the recursive calls as assignments to the parameters: `f(attempt + 1)` is
/// `attempt = attempt + 1` (a counter), `f(backoff * 2)` is `backoff = backoff * 2` (growth).
fn recursive_arg_mutations<'a>(f: LocalFn<'a>, name: &str, facts: &mut LoopFacts<'a>) {
    struct S<'a, 'n> {
        name: &'n str,
        calls: Vec<Vec<&'a Expr>>,
    }
    impl<'a> Visit<'a> for S<'a, '_> {
        fn visit_expr_call(&mut self, c: &'a syn::ExprCall) {
            let _guard = crate::analysis::limits::enter();
            if let Some(p) = names::callee_path(&c.func) {
                let segs = names::segments(p);
                if matches!(segs.as_slice(), [one] if one == self.name)
                    || matches!(segs.as_slice(), [s, one] if s == "Self" && one == self.name)
                {
                    self.calls.push(c.args.iter().collect());
                }
            }
            syn::visit::visit_expr_call(self, c);
        }
        fn visit_expr_method_call(&mut self, m: &'a syn::ExprMethodCall) {
            let _guard = crate::analysis::limits::enter();
            if m.method == self.name
                && matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self"))
            {
                self.calls.push(m.args.iter().collect());
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    let _guard = crate::analysis::limits::enter();
    let mut s = S {
        name,
        calls: Vec::new(),
    };
    s.visit_block(f.block);
    let params: Vec<Option<String>> = f
        .typed_params()
        .iter()
        .map(|t| match &*t.pat {
            syn::Pat::Ident(i) => Some(i.ident.to_string()),
            _ => None,
        })
        .collect();
    for args in s.calls {
        for (p, a) in params.iter().zip(args) {
            let Some(p) = p else { continue };
            if place_key(a).as_deref() == Some(p.as_str()) || !super::values::mentions(a, p) {
                continue;
            }
            facts
                .mutations
                .entry(p.clone())
                .or_default()
                .push(super::values::Mutation::Assign(a));
        }
    }
    facts.recount();
}

/// The names of the functions and methods called in `body` (closures included).
fn called_names(body: &Block, out: &mut HashSet<String>) {
    struct C<'o>(&'o mut HashSet<String>);
    impl<'ast> Visit<'ast> for C<'_> {
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            let _guard = crate::analysis::limits::enter();
            if let Some(name) = names::callee_path(&c.func).and_then(names::last) {
                self.0.insert(name);
            }
            syn::visit::visit_expr_call(self, c);
        }
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            let _guard = crate::analysis::limits::enter();
            self.0.insert(m.method.to_string());
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    C(out).visit_block(body);
}

/// Finds candidate loops (any depth, inside closures and async blocks too) and closures handed
/// to retry helpers.
struct LoopFinder<'a, 'c> {
    /// Each loop, whether a `timeout(..)` wraps it, and whether it runs in async code.
    loops: Vec<(&'a Expr, bool, bool)>,
    in_async: bool,
    /// Each closure handed to a retry helper: the call, the closure's body, and whether the
    /// helper retries every error the closure returns (a retry crate's runner given no
    /// classifier).
    helper_closures: Vec<(&'a Expr, &'a Expr, bool)>,
    timeout_depth: usize,
    scope: &'c FileScope<'a>,
    /// The function's locals, worked out on first use.
    locals: &'c dyn Fn() -> &'c Locals<'a>,
    timeout_vars: &'c HashSet<String>,
}

impl<'a> LoopFinder<'a, '_> {
    fn helper_args<I: Iterator<Item = &'a Expr>>(
        &mut self,
        call: &'a Expr,
        args: I,
        every_error: bool,
    ) {
        for a in args {
            // A variable holding the closure (`let action = || async { .. }; run(s, action)`).
            let a = place_key(a)
                .and_then(|k| (self.locals)().lets.get(&k))
                .and_then(|v| match v.as_slice() {
                    [only] => Some(*only),
                    _ => None,
                })
                .unwrap_or(a);
            if let Expr::Closure(c) = a {
                self.helper_closures.push((call, &c.body, every_error));
            }
        }
    }
}

/// Calls whose closure argument runs once per attempt: local and crate retry helpers.
fn is_retry_helper(name: &str) -> bool {
    // Most names are lower case already: no copy for them.
    let lower;
    let n = if name.bytes().any(|b| b.is_ascii_uppercase()) {
        lower = name.to_ascii_lowercase();
        lower.as_str()
    } else {
        name
    };
    n == "retry"
        || n.starts_with("retry_")
        || n.ends_with("_retry")
        || n.contains("with_retr")
        || n.contains("with_backoff")
        || n == "retry_notify"
        || n == "retry_fn"
}

impl<'a> Visit<'a> for LoopFinder<'a, '_> {
    fn visit_local(&mut self, l: &'a syn::Local) {
        let _guard = crate::analysis::limits::enter();
        let mut bound = Vec::new();
        pat_bindings(&l.pat, &mut bound);
        if bound.iter().any(|b| self.timeout_vars.contains(b)) {
            self.timeout_depth += 1;
            syn::visit::visit_local(self, l);
            self.timeout_depth -= 1;
        } else {
            syn::visit::visit_local(self, l);
        }
    }

    fn visit_expr(&mut self, e: &'a Expr) {
        let _guard = crate::analysis::limits::enter();
        match e {
            Expr::Loop(_) | Expr::While(_) | Expr::ForLoop(_) => {
                self.loops.push((e, self.timeout_depth > 0, self.in_async));
                syn::visit::visit_expr(self, e);
            }
            // An `async` block runs on an executor; a plain closure (e.g. for `spawn_blocking`)
            // runs on a thread of its own.
            Expr::Async(_) | Expr::Closure(_) => {
                let was = self.in_async;
                self.in_async = match e {
                    Expr::Closure(c) => c.asyncness.is_some(),
                    _ => true,
                };
                syn::visit::visit_expr(self, e);
                self.in_async = was;
            }
            Expr::Call(c) => {
                let path = names::callee_path(&c.func);
                let last = path
                    .map(|p| self.scope.resolved_last(p))
                    .unwrap_or_default();
                // `Retry::spawn(..)`, `RetryIf::spawn(..)` (the whole path is only resolved
                // for a `spawn`).
                let spawn_of_retry = last == "spawn"
                    && path.is_some_and(|p| {
                        let n = self.scope.resolve(p);
                        n.len() >= 2 && matches!(n[n.len() - 2].as_str(), "Retry" | "RetryIf")
                    });
                let every_error = self.scope.may_be_every_error_runner(&last)
                    && path
                        .is_some_and(|p| self.scope.is_every_error_runner(&self.scope.resolve(p)));
                if is_retry_helper(&last) || spawn_of_retry || every_error {
                    self.helper_args(e, c.args.iter(), every_error);
                }
                if is_timeout_fn(&last) {
                    self.timeout_depth += 1;
                    syn::visit::visit_expr(self, e);
                    self.timeout_depth -= 1;
                } else {
                    syn::visit::visit_expr(self, e);
                }
            }
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                if is_retry_helper(&name) {
                    // `(|| async { .. }).retry(policy)`: the receiver is the operation; so is a
                    // variable holding the closure (`let send = || ..; send.retry(..)`).
                    let recv = match &*m.receiver {
                        Expr::Paren(p) => &*p.expr,
                        other => other,
                    };
                    let recv = place_key(recv)
                        .and_then(|k| (self.locals)().lets.get(&k))
                        .and_then(|v| v.first().copied())
                        .unwrap_or(recv);
                    if let Expr::Closure(c) = recv {
                        self.helper_closures.push((e, &c.body, false));
                    }
                    self.helper_args(e, m.args.iter(), false);
                }
                if is_timeout_fn(&name) {
                    self.timeout_depth += 1;
                    self.visit_expr(&m.receiver);
                    self.timeout_depth -= 1;
                    for a in &m.args {
                        self.visit_expr(a);
                    }
                } else {
                    syn::visit::visit_expr(self, e);
                }
            }
            _ => syn::visit::visit_expr(self, e),
        }
    }

    fn visit_item(&mut self, _: &'a syn::Item) {}
}

/// Finds the sleeps of a body (not inside closures, async blocks, nested loops or items), and
/// calls of local functions that may sleep.
/// The waits of a body (see [`Builder::waits`]), before their lengths are worked out.
struct Waits<'a> {
    /// Each sleep, its duration argument, and whether it blocks the thread.
    sleeps: Vec<(&'a Expr, Option<&'a Expr>, bool)>,
    /// Calls of other files' functions named for waiting.
    unknown: Vec<&'a Expr>,
    /// Calls of this file's waiting helpers: the call, the helper's name, the arguments, and
    /// whether the helper is a plain sleep (whose length can be followed).
    helpers: Vec<(&'a Expr, String, super::Via, Vec<&'a Expr>, bool)>,
    /// Calls that wait for up to a time they are given (see [`SleepFinder::timed`]).
    timed: Vec<&'a Expr>,
}

impl Waits<'_> {
    /// The addresses of the wait calls, for the flow to tell which paths wait.
    fn calls(&self) -> std::collections::HashSet<usize> {
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
pub(super) fn future_sleeps<'a>(
    future: &'a Expr,
    scope: &FileScope<'a>,
) -> Option<Vec<(&'a Expr, Option<&'a Expr>, bool)>> {
    let mut finder = SleepFinder {
        scope,
        sleeps: Vec::new(),
        unknown_waits: Vec::new(),
        helper_calls: Vec::new(),
        timed: Vec::new(),
        enter_async: true,
    };
    finder.visit_expr(future);
    finder.unknown_waits.is_empty().then_some(finder.sleeps)
}

struct SleepFinder<'a, 'c> {
    scope: &'c FileScope<'a>,
    /// Each wait, its duration argument, and whether it blocks the thread.
    sleeps: Vec<(&'a Expr, Option<&'a Expr>, bool)>,
    /// Calls of other files' functions named for waiting.
    unknown_waits: Vec<&'a Expr>,
    helper_calls: Vec<(&'a Expr, String, super::Via, Vec<&'a Expr>)>,
    /// Calls that wait for up to a time they are given (`rx.recv_timeout(d)`,
    /// `sub.next_timeout(d)`, `timeout(d, op)`): a path through one that failed has waited.
    timed: Vec<&'a Expr>,
    enter_async: bool,
}

/// Whether a loop nested in `body` waits (`for _ in 0..n { sleep(d).await; reconnect() }` after
/// a failure): the nested loop's waits are its own site's, but a way round the outer loop that
/// runs it has waited too.
fn inner_loop_waits(body: &Block, scope: &FileScope<'_>) -> bool {
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
            enter_async: false,
        };
        finder.visit_block(inner);
        !finder.sleeps.is_empty() || !finder.unknown_waits.is_empty()
    })
}

/// Whether a function body retries with waits of its own: a loop in it waits, or a function of
/// this file it calls does (`depth` levels down; `self.poll(..)` delegating to the method that
/// loops). Not through `skip` (the function being analysed).
fn retries_with_waits(body: &Block, scope: &FileScope<'_>, skip: &str, depth: usize) -> bool {
    /// Calls of this file's functions in a body: `self.m(..)`, `f(..)`, `Self::f(..)`.
    struct Calls(Vec<(String, super::Via)>);
    impl<'v> Visit<'v> for Calls {
        fn visit_expr(&mut self, e: &'v Expr) {
            let _guard = crate::analysis::limits::enter();
            match e {
                Expr::Closure(_) => return,
                Expr::MethodCall(m) if matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self")) =>
                {
                    self.0.push((m.method.to_string(), super::Via::Method));
                }
                Expr::Call(c) => {
                    if let Some(p) = names::callee_path(&c.func) {
                        let segs = names::segments(p);
                        if segs.len() == 1 || (segs.len() == 2 && segs[0] == "Self") {
                            let via = super::Via::of_path(&segs, None);
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

/// A call named for waiting up to a given time: `recv_timeout`, `next_timeout`, `timeout`.
fn is_timed_name(name: &str) -> bool {
    name.to_ascii_lowercase().contains("timeout")
}

impl<'a> Visit<'a> for SleepFinder<'a, '_> {
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
                        self.sleeps
                            .push((e, c.args.first(), self.scope.is_blocking_sleep(&full)));
                    } else if full.last().is_some_and(|l| {
                        names::is_wait_like_name(l)
                            && self.scope.probe(|| {
                                self.scope
                                    .function_via(l, Some(&super::Via::of_path(&full, None)))
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
                                super::Via::of_path(&full, None),
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
                } else if name == "tick" && m.args.is_empty() {
                    // `interval.tick().await`: waits the interval's fixed period.
                    self.sleeps.push((e, None, false));
                } else if matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self"))
                    || self.scope.probe(|| {
                        self.scope
                            .function_via(&name, Some(&super::Via::Method))
                            .is_some()
                    })
                {
                    // `self.pause(..)`, or `budget.before_round(..)` where the file defines
                    // the one method of that name: a helper of this file that may wait.
                    self.helper_calls
                        .push((e, name, super::Via::Method, m.args.iter().collect()));
                }
                syn::visit::visit_expr(self, e);
            }
            _ => syn::visit::visit_expr(self, e),
        }
    }

    fn visit_item(&mut self, _: &'a syn::Item) {}
}

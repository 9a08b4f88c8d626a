//! Finding retry sites in a file and extracting their facts, one job a file: this module finds
//! the candidates (functions, loops, recursions, calls of retry helpers and runners, policy
//! values) and puts each site together; [`loops`] reads a loop or a recursion as a site;
//! [`lookalikes`] rules out what only looks like a retry; [`bounds`], [`waits`], [`errors`] and
//! [`attempts`] derive each kind of fact (the limit, the waits, the failures retried, what an
//! attempt does); [`fixes`] builds the mechanical fixes.

use std::collections::HashSet;

use syn::visit::Visit;
use syn::{Block, Expr};

use super::keys::per_attempt_keys;
use super::known;
use super::names;
use super::scope::{Facts, FileScope, LocalFn};
use super::span::LineIndex;
use super::values::{pat_bindings, place_key, Locals, LoopFacts};
use super::{Bound, BoundKind, DelayKind, Evidence, FileModel, Place, RetrySite, SiteKind};
use crate::source::Span;

mod attempts;
mod bounds;
mod errors;
mod fixes;
mod lookalikes;
mod loops;
mod probes;
mod waits;

#[allow(clippy::wildcard_imports)]
use attempts::*;
#[allow(clippy::wildcard_imports)]
pub(in crate::analysis) use bounds::*;
#[allow(clippy::wildcard_imports)]
use errors::*;
#[allow(clippy::wildcard_imports)]
use fixes::*;
#[allow(clippy::wildcard_imports)]
use lookalikes::*;
#[allow(clippy::wildcard_imports)]
pub(in crate::analysis) use waits::*;

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
        may_make_compliant_retries: may_make_compliant_retries(index.source(), &scope.ext),
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
    /// Whether the file's text names the type of a `compliant-retries` constructor.
    may_make_compliant_retries: bool,
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
        // What the function starts beside it, or the loopback addresses it writes: a loop
        // after one that probes until something answers waits for something local.
        let started = if finder.loops.is_empty() {
            Started::default()
        } else {
            let mut started = spawns(f.block, self.index, self.scope);
            started.any.extend(loopbacks(f.block, self.index));
            started
        };
        // A loop in test code (`#[test]`, `#[tokio::test]`, a `#[cfg(test)]` module) waits for
        // the test's own fixtures (a server it started, a background task, a container): a
        // readiness wait, not a retry of the code under test.
        let in_test = self.test_depth > 0 || is_test_attr(f.attrs);
        for (l, in_timeout, in_async) in finder.loops.into_iter().filter(|_| !in_test) {
            mark = self.scope.used_count();
            if let Some(mut site) = self.loop_site(l, locals(), &f, in_timeout, &started) {
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
            // An operation that only asks whether something answers: the runner waits for it
            // to come up (evidence.md #3).
            if probes::operation_only_probes(closure, &own_receivers(self.scope, &f, locals())) {
                continue;
            }
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
                let receivers = Receivers {
                    locals: locals(),
                    scope: self.scope,
                    fields: f
                        .owner
                        .and_then(|o| self.scope.field_paths.get(&o.to_string())),
                };
                site.unclassified = remote_call_in(closure, self.index, &receivers);
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
        if let Some(attr) = retry_attribute(f.attrs, self.scope) {
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
        // A retry wrapper of this project made here (`RetryLayer::new(policy)`): the function
        // retries, compliant by construction, like a `#[retryable]` one.
        if let Some(at) = self
            .may_make_compliant_retries
            .then(|| compliant_retry(f.block, self.scope, self.index))
            .flatten()
        {
            retries_at.get_or_insert(at);
            let facts = AttemptFacts {
                reads_retry_after: true,
                sends_key: false,
                writes: Vec::new(),
                calls: Vec::new(),
            };
            push_site(
                &mut self.sites,
                self.scope,
                self.index,
                helper_site(at, Vec::new(), facts),
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
                super::policies::policy_sites(f.block, self.scope, locals(), self.index, &|op| {
                    probes::operation_only_probes(op, &own_receivers(self.scope, &f, locals()))
                })
            })
        };
        // The chains of one body are read together: what was consulted is each one's.
        let batch = evidence_since(self.scope, self.index, mark);
        // Waits the function hands back to callers that map over them are waited as the map
        // makes them: where they are built, their growth, jitter and cap are unknown.
        let handed_back: Vec<Span> = if policies.is_empty() {
            Vec::new()
        } else {
            crate::analysis::values::returned_exprs(f.block)
                .into_iter()
                .map(|e| self.index.of(e))
                .collect()
        };
        let mapped = !handed_back.is_empty()
            && self.scope.probe(|| {
                // A function with a receiver is called as a method.
                let method = f.sig.receiver().is_some();
                super::strategy::mapped_by_callers(&f.sig.ident.to_string(), method, self.scope)
            });
        for mut site in policies {
            if mapped
                && handed_back
                    .iter()
                    .any(|r| r.start <= site.head.start && site.head.end <= r.end)
            {
                for d in &mut site.delays {
                    d.kind = DelayKind::Unknown;
                }
            }
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
        let retryable_attr = matches!(
            retry_attribute(f.attrs, self.scope),
            Some(RetryAttr::Retryable)
        );
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
                        !site
                            .cleanups
                            .iter()
                            .any(|k| k.start <= c.span.start && c.span.end <= k.end)
                    })
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

/// Whether `text` names the type (the segment before the function) of a constructor of
/// `compliant-retries`: without it, no call in the file can resolve to one.
fn may_make_compliant_retries(text: &str, ext: &super::Extensions) -> bool {
    let type_of = |entry: &str| {
        let segments: Vec<&str> = entry.split("::").collect();
        segments
            .len()
            .checked_sub(2)
            .and_then(|i| segments.get(i))
            .is_some_and(|t| text.contains(t))
    };
    known::builtin()
        .entries(known::List::CompliantRetries)
        .iter()
        .any(|e| type_of(&e.text))
        || ext.compliant_retries.iter().any(|e| type_of(e))
}

/// The first call in a function body of a constructor of `compliant-retries` (the models, or a
/// team's `[extend]`), by its resolved path: where the function makes a compliant retry wrapper.
fn compliant_retry(body: &Block, scope: &FileScope<'_>, index: &LineIndex<'_>) -> Option<Span> {
    struct Find<'s, 'a, 'i> {
        scope: &'s FileScope<'a>,
        index: &'i LineIndex<'a>,
        found: Option<Span>,
    }
    impl<'ast> Visit<'ast> for Find<'_, '_, '_> {
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            let _guard = crate::analysis::limits::enter();
            if self.found.is_some() {
                return;
            }
            if let Some(path) = names::callee_path(&c.func) {
                let full = self.scope.resolve(path);
                if known::builtin()
                    .path(known::List::CompliantRetries, &full)
                    .is_some()
                    || super::Extensions::matches(&self.scope.ext.compliant_retries, &full)
                {
                    self.found = Some(self.index.of(c));
                    return;
                }
            }
            syn::visit::visit_expr_call(self, c);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut find = Find {
        scope,
        index,
        found: None,
    };
    find.visit_block(body);
    find.found
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
        cleanups: Vec::new(),
        limit_from: None,
        longest_by_limit: Vec::new(),
        delay_from: None,
        origins: Vec::new(),
        unawaited: Vec::new(),
    }
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
    /// Another crate's (`retry-attributes` of the models: `#[backon]`, `#[retrying::retry]`).
    Other,
}

fn retry_attribute(attrs: &[syn::Attribute], scope: &FileScope<'_>) -> Option<RetryAttr> {
    attrs.iter().find_map(|a| {
        let kind = if names::last(a.path()).as_deref() == Some("retryable") {
            RetryAttr::Retryable
        } else if known::builtin()
            .path(known::List::RetryAttributes, &scope.resolve(a.path()))
            .is_some()
            || crate::analysis::Extensions::matches(
                &scope.ext.retry_attributes,
                &scope.resolve(a.path()),
            )
        {
            RetryAttr::Other
        } else {
            return None;
        };
        // `#[retryable(attempts = 1)]` makes a single attempt.
        let args = names::text(&a.meta).replace(' ', "");
        if args.contains("attempts=1,") || args.contains("attempts=1)") {
            return None;
        }
        Some(kind)
    })
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

/// The calls a function named `name` makes of itself in what is visited (`name(..)`,
/// `Self::name(..)`, `self.name(..)`): the arguments of each.
pub(super) struct SelfCalls<'a, 'n> {
    pub(super) name: &'n str,
    pub(super) args: Vec<Vec<&'a Expr>>,
}

impl<'a> Visit<'a> for SelfCalls<'a, '_> {
    fn visit_expr_call(&mut self, c: &'a syn::ExprCall) {
        let _guard = crate::analysis::limits::enter();
        if let Some(p) = names::callee_path(&c.func) {
            let segs = names::segments(p);
            if matches!(segs.as_slice(), [one] if one == self.name)
                || matches!(segs.as_slice(), [s, one] if s == "Self" && one == self.name)
            {
                self.args.push(c.args.iter().collect());
            }
        }
        syn::visit::visit_expr_call(self, c);
    }
    fn visit_expr_method_call(&mut self, m: &'a syn::ExprMethodCall) {
        let _guard = crate::analysis::limits::enter();
        if m.method == self.name && matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self"))
        {
            self.args.push(m.args.iter().collect());
        }
        syn::visit::visit_expr_method_call(self, m);
    }
    fn visit_item(&mut self, _: &'a syn::Item) {}
}

/// The names of a function's parameters, in order (`None` for a pattern that is not a name).
pub(super) fn param_names(f: &LocalFn<'_>) -> Vec<Option<String>> {
    f.typed_params()
        .iter()
        .map(|t| match &*t.pat {
            syn::Pat::Ident(i) => Some(i.ident.to_string()),
            _ => None,
        })
        .collect()
}

/// The arguments of the recursive calls as assignments to the parameters: `f(attempt + 1)` is
/// `attempt = attempt + 1` (a counter), `f(backoff * 2)` is `backoff = backoff * 2` (growth).
fn recursive_arg_mutations<'a>(f: LocalFn<'a>, name: &str, facts: &mut LoopFacts<'a>) {
    let _guard = crate::analysis::limits::enter();
    let mut s = SelfCalls {
        name,
        args: Vec::new(),
    };
    s.visit_block(f.block);
    let params = param_names(&f);
    for args in s.args {
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
/// A `loop` whose body is one statement, itself a `loop`.
fn wraps_only_a_loop(e: &Expr) -> bool {
    match e {
        Expr::Loop(l) => matches!(l.body.stmts.as_slice(), [syn::Stmt::Expr(Expr::Loop(_), _)]),
        _ => false,
    }
}

/// Where the values a function of this file handles come from: its locals, and the fields of
/// the type whose `impl` it is in.
fn own_receivers<'s, 'a>(
    scope: &'s FileScope<'a>,
    f: &LocalFn<'a>,
    locals: &'s Locals<'a>,
) -> Receivers<'s, 'a> {
    Receivers {
        locals,
        scope,
        fields: f.owner.and_then(|o| scope.field_paths.get(&o.to_string())),
    }
}

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
                // `loop { loop { .. } }`: the outer `loop` does nothing of its own (it goes
                // round only when the inner one breaks); the inner one is what is judged. Not
                // analysing it keeps deep nests of bare loops linear.
                if !wraps_only_a_loop(e) {
                    self.loops.push((e, self.timeout_depth > 0, self.in_async));
                }
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

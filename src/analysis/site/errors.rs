//! Which failures a site retries: the statuses and errors its classifier lets through, a remote request whose every error goes round, a re-login after 401.

use syn::visit::Visit;
use syn::{Block, Expr};

use crate::analysis::flow::{FlowResult, Outcome};
use crate::analysis::known::{self, List};
use crate::analysis::names;
use crate::analysis::scope::{Facts, FileScope};
use crate::analysis::span::LineIndex;
use crate::analysis::status::StatusEval;
use crate::analysis::values::{pat_bindings, Locals, LoopFacts};
use crate::analysis::{StatusRetry, StatusSet};

#[allow(clippy::wildcard_imports)]
use super::*;

impl<'a> Builder<'a, '_> {
    pub(super) fn statuses(&self, result: &FlowResult, body: &'a Block) -> Vec<StatusRetry> {
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
            // Where the statuses became errors: `error_for_status()`, a call the models say
            // returns every status >= 400 as an `Err`, or a function of this file that returns `Err` on a failed status.
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

    /// The statuses that the operation `op` reports as `Err`: a call of `status-error-calls` in
    /// the models (ureq's `call()`: every status from 400), or a function of this file that returns an error when a status test
    /// fails (`if !resp.status().is_success() { return Err(..) }`, `error_for_status()?`).
    pub(super) fn errors_from_statuses(&self, op: &str) -> Option<(StatusSet, String)> {
        let _guard = crate::analysis::limits::enter();
        let uses = |krate: &str| {
            self.scope.roots.contains(krate)
                || self
                    .scope
                    .uses
                    .values()
                    .any(|p| p.first().is_some_and(|r| r == krate))
        };
        let modelled = known::builtin()
            .crate_method(known::List::StatusErrorCalls, op, uses)
            .map(str::to_owned)
            .or_else(|| {
                self.scope.ext.status_error_calls.iter().find_map(|e| {
                    let segments: Vec<&str> = e.split("::").filter(|s| !s.is_empty()).collect();
                    (segments.len() >= 2 && segments.last() == Some(&op) && uses(segments[0]))
                        .then(|| segments[0].to_owned())
                })
            });
        if let Some(krate) = modelled {
            return Some((
                StatusSet::range(400, 599),
                format!("{krate}'s `{op}()` returns `Err` for every status from 400"),
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
}

/// Whether the only ways round follow a few named client errors (`Some(403 | 404)`: "not yet"
/// in a device-code flow, a resource that does not exist yet) while every other failure ends
/// the loop: it waits for a state to change (polling); no transient failure is retried.
pub(super) fn polls_named_client_errors(result: &FlowResult) -> bool {
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
pub(super) fn is_blind(result: &FlowResult, body: &Block) -> bool {
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
/// its error was inspected. A call of a function of the workspace is told by that function's
/// body (`self.get_balance(..)` sending an RPC), never by its name; any other call by its words
/// (see [`names::remote_request`]).
///
/// A call that fails on transport only (reqwest's `send()`: a 4xx is an `Ok(Response)`), or
/// that reaches only this machine (an embedded store, a Unix-domain socket), is not such a
/// request: retrying each of its errors retries no client error (see [`Receivers`]).
pub(super) fn unclassified(
    result: &FlowResult,
    index: &LineIndex<'_>,
    scope: &FileScope<'_>,
    no_client_errors: &[Span],
) -> Option<crate::analysis::Unclassified> {
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
        for (name, span, via) in result.tested_calls.iter().filter(|(n, _, _)| n == op) {
            if no_client_errors.contains(span) {
                continue;
            }
            // A function of the workspace is read through its own code: what its body calls
            // says whether it asks another machine, not what its name says.
            let own = scope.consult(Facts::ERRORS, || {
                scope
                    .function_via(name, via.as_ref())
                    .map(|f| makes_remote_request(f.block))
            });
            let text = index.text(*span);
            let remote = match own {
                // What only reaches this machine stays so, whatever the body is read to call.
                _ if names::remote_request(name, text) == Some(false) => Some(false),
                Some(Some(found)) => Some(found),
                Some(None) => names::remote_request_of_own(name, text),
                None => names::remote_request(name, text),
            };
            match remote {
                Some(false) => return None,
                Some(true) if found.is_none() => {
                    found = Some(crate::analysis::Unclassified {
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
pub(super) fn makes_remote_request(body: &Block) -> Option<bool> {
    let mut r = RemoteCall {
        found: None,
        receivers: None,
    };
    r.visit_block(body);
    r.found.is_some().then_some(true)
}

/// The first remote request a closure's body makes (its operation and call), for a retry
/// crate's runner that retries every error of it.
pub(super) fn remote_call_in(
    body: &Expr,
    index: &LineIndex<'_>,
    receivers: &Receivers<'_, '_>,
) -> Option<crate::analysis::Unclassified> {
    let mut r = RemoteCall {
        found: None,
        receivers: Some(receivers),
    };
    r.visit_expr(body);
    let (op, e) = r.found?;
    Some(crate::analysis::Unclassified {
        op,
        span: index.of(e),
    })
}

/// Finds the first call that [`names::remote_request`] tells is one, by its name and the words
/// of its receiver when that is a place (`self.client`, not a whole chain), and of its
/// arguments that are paths (`self.send(RpcRequest::GetBalance, ..)`, `fetch(client, url)`).
/// A call that fails on transport only is skipped, with the chain that made its receiver
/// (`client.get(url)` before `.send()`), when the function's values are known.
pub(super) struct RemoteCall<'ast, 'r> {
    pub(in crate::analysis) found: Option<(String, &'ast Expr)>,
    pub(in crate::analysis) receivers: Option<&'r Receivers<'r, 'r>>,
}

impl<'ast> Visit<'ast> for RemoteCall<'ast, '_> {
    fn visit_expr(&mut self, e: &'ast Expr) {
        let _guard = crate::analysis::limits::enter();
        if self.found.is_some() {
            return;
        }
        if self
            .receivers
            .is_some_and(|rx| rx.transport_only(e) || rx.local_call(e))
        {
            match e {
                Expr::MethodCall(m) => m.args.iter().for_each(|a| self.visit_expr(a)),
                Expr::Call(c) => c.args.iter().for_each(|a| self.visit_expr(a)),
                _ => {}
            }
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

/// Where the values a function handles come from, to tell which crate made a request's
/// receiver: its parameters' written types, its `let`s (followed to what they are bound to) and
/// the fields of the type whose `impl` it is in, each resolved through the file's `use`. A name
/// none of them gives, or a type this crate defines, is unknown.
pub(super) struct Receivers<'s, 'a> {
    pub(super) locals: &'s Locals<'a>,
    pub(super) scope: &'s FileScope<'a>,
    pub(super) fields: Option<&'s std::collections::HashMap<String, Vec<String>>>,
}

impl Receivers<'_, '_> {
    /// Whether a call fails on transport only, a response of any status being its `Ok`: a
    /// method of the models' `transport-error-calls` on a value its crate made
    /// (`client.get(url).send()` where `client` is a `reqwest::Client` parameter, field, or a
    /// `let` of `reqwest::Client::new()`), or such a function of the crate (`reqwest::get(url)`).
    pub(super) fn transport_only(&self, call: &Expr) -> bool {
        self.crate_call(call, false, List::TransportErrorCalls)
    }

    /// Whether a call makes a request that changes nothing (an HTTP `GET` or `HEAD`, safe
    /// methods by RFC 9110): a method of the models' `safe-request-calls` in its chain, on a
    /// value its crate made (`agent.get(&url).call()` where `agent` is a `ureq::Agent`), or such
    /// a function of the crate (`reqwest::get(url)`).
    pub(super) fn safe_request(&self, call: &Expr) -> bool {
        self.crate_call(call, true, List::SafeRequestCalls)
    }

    /// Whether a call (or, with `chain`, a call of its receiver's chain) is one of `list`'s: a
    /// method on a value the crate made, or the crate's function (see
    /// [`FileScope::is_crate_call`]).
    fn crate_call(&self, call: &Expr, chain: bool, list: List) -> bool {
        self.crate_call_at(call, chain, list, 0)
    }

    /// [`Receivers::crate_call`], `lets` names followed so far (at most four, as
    /// [`Receivers::origin`] follows them: `let a = b.clone(); let b = a.f();` is no chain).
    fn crate_call_at(&self, call: &Expr, chain: bool, list: List, lets: usize) -> bool {
        let _guard = crate::analysis::limits::enter();
        match call {
            Expr::Await(a) => self.crate_call_at(&a.base, chain, list, lets),
            Expr::Paren(p) => self.crate_call_at(&p.expr, chain, list, lets),
            Expr::Try(t) if chain => self.crate_call_at(&t.expr, chain, list, lets),
            Expr::MethodCall(m) => {
                self.made_by(&m.receiver)
                    .is_some_and(|k| self.scope.is_crate_call(list, &k, &m.method.to_string()))
                    || (chain && self.crate_call_at(&m.receiver, chain, list, lets))
            }
            Expr::Call(c) => match &*c.func {
                Expr::Path(p) => {
                    let full = self.scope.resolve(&p.path);
                    self.scope
                        .crate_of(&full)
                        .zip(full.last())
                        .is_some_and(|(k, m)| self.scope.is_crate_call(list, &k, m))
                }
                _ => false,
            },
            // A request built into a name before it is sent (`let request =
            // client.get(url).timeout(d); request.send()`): the chain goes on through the one
            // `let` that binds it.
            Expr::Path(p) if chain && lets < 4 => p
                .path
                .get_ident()
                .map(ToString::to_string)
                .is_some_and(|n| match self.locals.lets.get(&n).map(Vec::as_slice) {
                    Some([one]) if !crate::analysis::values::mentions(one, &n) => {
                        self.crate_call_at(one, chain, list, lets + 1)
                    }
                    _ => false,
                }),
            _ => false,
        }
    }

    /// The crate that made an expression's value (see [`Receivers::origin`]).
    pub(super) fn made_by(&self, e: &Expr) -> Option<String> {
        self.origin(e, 0)?.into_iter().next()
    }

    /// Where an expression's value comes from, as a resolved path of another crate: a
    /// method's receiver's (a builder's chain keeps its crate), a constructor's path, a
    /// parameter's or field's written type, what every `let` of a name binds (up to four `let`s
    /// deep), what every branch of an `if`/`match` that gives a value gives (the part of their
    /// paths they share: `tokio::sync::mpsc` for `mpsc::channel` and `mpsc::Sender`).
    pub(super) fn origin(&self, e: &Expr, depth: usize) -> Option<Vec<String>> {
        let _guard = crate::analysis::limits::enter();
        if depth > 4 {
            return None;
        }
        let next = |x: &Expr| self.origin(x, depth);
        let agree = |all: Vec<Option<Vec<String>>>| -> Option<Vec<String>> {
            let mut shared: Option<Vec<String>> = None;
            for path in all {
                let path = path?;
                shared = Some(match shared {
                    None => path,
                    Some(s) => s
                        .into_iter()
                        .zip(path)
                        .take_while(|(a, b)| a == b)
                        .map(|(a, _)| a)
                        .collect(),
                });
            }
            shared.filter(|s| !s.is_empty())
        };
        let tail = |b: &Block| match b.stmts.last() {
            Some(syn::Stmt::Expr(x, None)) => next(x),
            _ => None,
        };
        match e {
            Expr::Reference(r) => next(&r.expr),
            Expr::Paren(p) => next(&p.expr),
            Expr::Group(g) => next(&g.expr),
            Expr::Try(t) => next(&t.expr),
            Expr::Await(a) => next(&a.base),
            Expr::MethodCall(m) => next(&m.receiver).or_else(|| {
                matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self")).then(|| {
                    self.returned_by(&m.method.to_string(), &crate::analysis::Via::Method)
                })?
            }),
            Expr::Call(c) => match &*c.func {
                Expr::Path(p) => self.scope.foreign(self.scope.resolve(&p.path)).or_else(|| {
                    self.returned_by(
                        &p.path.get_ident()?.to_string(),
                        &crate::analysis::Via::Free,
                    )
                }),
                _ => None,
            },
            Expr::Field(f) => {
                let on_self = matches!(&*f.base, Expr::Path(p) if p.path.is_ident("self"));
                let syn::Member::Named(name) = &f.member else {
                    return None;
                };
                let written = self.fields?.get(&name.to_string()).filter(|_| on_self)?;
                self.scope.foreign(self.scope.resolve_segments(written))
            }
            Expr::Path(p) => {
                let [name] = names::segments(&p.path).try_into().ok()?;
                if let Some(ty) = self.locals.param_types.get(&name) {
                    let held = crate::analysis::scope::held_path(ty)?;
                    return self.scope.foreign(self.scope.resolve(held));
                }
                // `builder = builder.timeout(..)` keeps what the other bindings made.
                let values: Vec<&Expr> = self
                    .locals
                    .lets
                    .get(&name)?
                    .iter()
                    .copied()
                    .filter(|v| !crate::analysis::values::mentions(v, &name))
                    .collect();
                if values.len() > 4 {
                    return None;
                }
                agree(
                    values
                        .into_iter()
                        .map(|v| self.origin(v, depth + 1))
                        .collect(),
                )
            }
            Expr::If(i) => {
                let (_, other) = i.else_branch.as_ref()?;
                agree(vec![tail(&i.then_branch), next(other)])
            }
            Expr::Block(b) => tail(&b.block),
            Expr::Match(m) => agree(
                m.arms
                    .iter()
                    .filter(|a| !super::lookalikes::diverges(&a.body))
                    .map(|a| next(&a.body))
                    .collect(),
            ),
            _ => None,
        }
    }

    /// The type of the value a function of this crate returns, as its signature writes it
    /// (`fn http() -> reqwest::Client`; through `Result` and `Option`). A function of another
    /// file is read only where it writes the crate's path in full: its `use`s are not this
    /// file's.
    fn returned_by(&self, name: &str, via: &crate::analysis::Via) -> Option<Vec<String>> {
        // Only a name the crate defines is looked up: nothing is recorded as missing.
        if !self.scope.defines_fn(name) {
            return None;
        }
        let f = self.scope.function_via(name, Some(via))?;
        let syn::ReturnType::Type(_, ty) = &f.sig.output else {
            return None;
        };
        let mut held = crate::analysis::scope::held_path(ty)?;
        if let Some(last) = held.segments.last() {
            if matches!(last.ident.to_string().as_str(), "Result" | "Option") {
                let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
                    return None;
                };
                held = args.args.iter().find_map(|a| match a {
                    syn::GenericArgument::Type(inner) => crate::analysis::scope::held_path(inner),
                    _ => None,
                })?;
            }
        }
        let full = if self.scope.fns.contains_key(name) {
            self.scope.resolve(held)
        } else {
            names::segments(held)
        };
        self.scope.foreign(full)
    }

    /// The spans of the calls in `root` that fail on transport only (with their `.await`).
    pub(super) fn transport_only_calls(&self, root: Root<'_>, index: &LineIndex<'_>) -> Vec<Span> {
        root.spans(index, |e, out| {
            if matches!(e, Expr::MethodCall(_) | Expr::Call(_) | Expr::Await(_))
                && self.transport_only(e)
            {
                out.push(e);
            }
        })
    }
}

impl Receivers<'_, '_> {
    /// Whether a call reaches only this machine: a method called on a value a local endpoint or
    /// an embedded store made (`db.put(..)` where `db` is a field of type `rocksdb::DB`,
    /// `socket.connect(path)` where `socket` is bound to `tokio::net::UnixDatagram::unbound()`),
    /// or such a type's function (`rocksdb::DB::open(..)`). Where an operation goes is a fact of
    /// its type (evidence.md #9).
    pub(super) fn local_call(&self, e: &Expr) -> bool {
        match e {
            Expr::MethodCall(m) => self
                .origin(&m.receiver, 0)
                .is_some_and(|o| self.scope.made_locally(&o)),
            Expr::Call(c) => match &*c.func {
                Expr::Path(p) => {
                    let full = self.scope.resolve(&p.path);
                    self.scope.crate_of(&full).is_some() && self.scope.made_locally(&full)
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// The tested calls of `r` that reach only this machine: the call, or one of the calls its
    /// value is made from through receivers (`match socket.connect(path).map_err(Error::Io)`),
    /// is a [`Receivers::local_call`]. A local call among the arguments does not count:
    /// `client.post(url).body(db.get(key)?)` still goes to the client's service.
    pub(super) fn local_tested(
        &self,
        r: &FlowResult,
        root: Root<'_>,
        index: &LineIndex<'_>,
    ) -> Vec<Span> {
        let tested: Vec<Span> = r.tested_calls.iter().map(|(_, at, _)| *at).collect();
        root.spans(index, |e, out| {
            if tested.contains(&index.of(e)) && self.reaches_locally(e) {
                out.push(e);
            }
        })
    }

    /// Whether a call, or a call of its receiver chain, reaches only this machine.
    fn reaches_locally(&self, e: &Expr) -> bool {
        let _guard = crate::analysis::limits::enter();
        match e {
            Expr::Await(a) => self.reaches_locally(&a.base),
            Expr::Paren(p) => self.reaches_locally(&p.expr),
            Expr::Try(t) => self.reaches_locally(&t.expr),
            Expr::MethodCall(m) => self.local_call(e) || self.reaches_locally(&m.receiver),
            Expr::Call(_) => self.local_call(e),
            _ => false,
        }
    }

    /// The spans of the operations in `root` that hand work over an in-process channel: a call
    /// on a value a channel module made (`tx.send(job)` where `tx` comes from `mpsc::channel(8)`
    /// or is a field of type `mpsc::Sender<Job>`), or the expression a failure pattern naming a
    /// channel's error is matched against (`if let Err(mpsc::error::SendError(job)) =
    /// sender.send(job)`), with its `.await`.
    pub(super) fn channel_calls(&self, root: Root<'_>, index: &LineIndex<'_>) -> Vec<Span> {
        let names_channel_error = |pat: &syn::Pat| {
            let syn::Pat::TupleStruct(err) = pat else {
                return false;
            };
            let path = match err.elems.first() {
                Some(syn::Pat::TupleStruct(t)) => &t.path,
                Some(syn::Pat::Struct(s)) => &s.path,
                Some(syn::Pat::Path(p)) => &p.path,
                _ => return false,
            };
            err.path.is_ident("Err") && self.scope.is_in_process_channel(&self.scope.resolve(path))
        };
        root.spans(index, |e, out| {
            let scrutinee = match e {
                Expr::MethodCall(m)
                    if self
                        .origin(&m.receiver, 0)
                        .is_some_and(|o| self.scope.is_in_process_channel(&o)) =>
                {
                    e
                }
                Expr::Let(l) if names_channel_error(&l.pat) => &l.expr,
                Expr::Match(m) if m.arms.iter().any(|a| names_channel_error(&a.pat)) => &m.expr,
                _ => return,
            };
            // The expression, and what it awaits.
            let mut at = scrutinee;
            loop {
                out.push(at);
                at = match at {
                    Expr::Await(a) => &a.base,
                    Expr::Paren(p) => &p.expr,
                    _ => break,
                };
            }
        })
    }
}

/// Where to look for calls: a loop, or a function's body.
#[derive(Clone, Copy)]
pub(super) enum Root<'x> {
    Expr(&'x Expr),
    Block(&'x Block),
}

impl<'x> Root<'x> {
    /// The spans of the expressions `pick` chooses in the loop or the body (closures' and
    /// items' bodies included, items excepted).
    fn spans(
        self,
        index: &LineIndex<'_>,
        mut pick: impl FnMut(&'x Expr, &mut Vec<&'x Expr>),
    ) -> Vec<Span> {
        struct Pick<'x, F> {
            pick: F,
            out: Vec<&'x Expr>,
        }
        impl<'x, F: FnMut(&'x Expr, &mut Vec<&'x Expr>)> Visit<'x> for Pick<'x, F> {
            fn visit_expr(&mut self, e: &'x Expr) {
                let _guard = crate::analysis::limits::enter();
                (self.pick)(e, &mut self.out);
                syn::visit::visit_expr(self, e);
            }
            fn visit_item(&mut self, _: &'x syn::Item) {}
        }
        let mut v = Pick {
            pick: &mut pick,
            out: Vec::new(),
        };
        match self {
            Root::Expr(e) => v.visit_expr(e),
            Root::Block(b) => v.visit_block(b),
        }
        v.out.into_iter().map(|e| index.of(e)).collect()
    }
}

/// Whether every resend happens after a failure that the server did not process: a 429, a
/// refused connection, a rolled-back transaction. Resending a write then cannot apply it twice.
pub(super) fn resends_only_unprocessed(result: &FlowResult) -> bool {
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
pub(super) fn mentions_key(text: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric() && c != '_' && c != '-')
        .any(names::is_strong_key_name)
}

/// Whether the loop calls something that logs in again or refreshes a token.
pub(super) fn calls_reauth(body: &Block) -> bool {
    let text = names::text(body);
    text.split(|c: char| !c.is_alphanumeric() && c != '_')
        .any(|w| {
            let w = w.to_ascii_lowercase();
            crate::analysis::known::builtin()
                .word(crate::analysis::known::List::ReauthOperations, &w)
                // The shape of a token's refresh (`refresh_oauth_token`), beside the names.
                || (w.starts_with("refresh") && w.contains("token"))
        })
}

/// Whether a condition or a match in the loop hands a status to a function of another file:
/// `match strategy.test(last_status, ..)`, `if policy.should_stop(resp.status())`.
pub(super) fn delegates_status(body: &Block, scope: &FileScope<'_>) -> bool {
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
                    .any(|p| crate::analysis::values::mentions(e, p))
        }
        fn decides(&mut self, e: &Expr) {
            let _guard = crate::analysis::limits::enter();
            let (name, via, args): (Option<String>, crate::analysis::Via, Vec<&Expr>) = match e {
                Expr::Call(c) => {
                    let path = names::callee_path(&c.func);
                    (
                        path.and_then(names::last),
                        path.map_or(crate::analysis::Via::Free, |p| self.scope.via_of(p)),
                        c.args.iter().collect(),
                    )
                }
                Expr::MethodCall(m) => (
                    Some(m.method.to_string()),
                    crate::analysis::Via::Method,
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
                crate::analysis::values::Mutation::Assign(e) => {
                    names::is_status_text(&names::text(*e))
                }
                crate::analysis::values::Mutation::Compound(..) => false,
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
pub(super) struct StatusErrors<'e, 'a, 'c> {
    pub(in crate::analysis) eval: &'e StatusEval<'a, 'c>,
    pub(in crate::analysis) set: StatusSet,
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

/// Whether a tested result went through `error_for_status()`: in the tested expression itself, or
/// in the `let` that the tested variable was bound by.
pub(super) fn tests_error_for_status(
    result: &FlowResult,
    body: &Block,
    index: &LineIndex<'_>,
) -> bool {
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

pub(super) fn calls_method_expr(e: &Expr, name: &str) -> bool {
    let t = names::text(e);
    t.contains(name)
}

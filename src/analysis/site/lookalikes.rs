//! Loops that look like retries and are not: supervisors, readiness waits, polls, walks and searches over alternatives, pointer chasing, a policy that decides each round (LABELS.md: a retry is the same operation, with the same input, repeated after it failed).

use syn::visit::Visit;
use syn::{Block, Expr};

use crate::analysis::flow::{FlowResult, Outcome};
use crate::analysis::names;
use crate::analysis::scope::{FileScope, LocalFn};
use crate::analysis::span::LineIndex;
use crate::analysis::values::{mentions, pat_bindings, LoopFacts};
use crate::source::Span;

#[allow(clippy::wildcard_imports)]
use super::*;

/// The structural test: success leaves, failure goes round again, success does not go round
/// again (that is polling), and the operation is not a spin on a lock, a CAS or a channel.
pub(super) fn is_retry_shape(r: &FlowResult) -> bool {
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
    // Going round after a success whose answer a test turned away is a poll of a state too.
    if r.continues
        .iter()
        .any(|c| c.outcome == Outcome::Success || c.rejected_ok)
    {
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
pub(super) fn is_supervisor(r: &FlowResult) -> bool {
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

/// Where a function body starts something that runs beside it (the file offsets where the
/// calls end, so that a loop inside the started task is after none of them).
#[derive(Default)]
pub(super) struct Started {
    /// A thread, a task or a process (`thread::spawn`, `tokio::spawn`,
    /// `Command::new(..).spawn()`), or a loopback address written (see [`loopbacks`]).
    pub(super) any: Vec<usize>,
    /// A child process: `Command::new(..).spawn()` (a `spawn` method given nothing), or a call of
    /// a function of the workspace whose declared return type holds a process handle
    /// (`process-handles` of the models: `fn run_me(..) -> io::Result<std::process::Child>`).
    pub(super) processes: Vec<usize>,
}

impl Started {
    /// Whether something was started before `at`.
    pub(super) fn any_before(&self, at: usize) -> bool {
        self.any.iter().any(|s| *s < at)
    }

    /// Whether a child process was started before `at`.
    pub(super) fn process_before(&self, at: usize) -> bool {
        self.processes.iter().any(|s| *s < at)
    }
}

/// What a function body starts beside it (see [`Started`]).
pub(super) fn spawns(body: &Block, index: &LineIndex<'_>, scope: &FileScope<'_>) -> Started {
    struct Spawn<'i, 'a, 's> {
        index: &'i LineIndex<'a>,
        scope: &'s FileScope<'s>,
        found: Started,
    }
    impl<'ast> Visit<'ast> for Spawn<'_, '_, '_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            let _guard = crate::analysis::limits::enter();
            // The callee's name, where the call ends, whether it is a method given nothing, and
            // the function of the workspace it calls.
            let call = match e {
                Expr::MethodCall(m) => Some((
                    &m.method,
                    m.paren_token.span.close(),
                    m.args.is_empty(),
                    self.scope
                        .function_in_view(&m.method.to_string(), &crate::analysis::Via::Method),
                )),
                Expr::Call(c) => match &*c.func {
                    Expr::Path(p) => p.path.segments.last().map(|s| {
                        (
                            &s.ident,
                            c.paren_token.span.close(),
                            false,
                            self.scope.function_via(
                                &s.ident.to_string(),
                                Some(&self.scope.via_of(&p.path)),
                            ),
                        )
                    }),
                    _ => None,
                },
                _ => None,
            };
            if let Some((id, close, no_args, callee)) = call {
                let end = self.index.span(close).end;
                let spawn = matches!(
                    id.to_string().as_str(),
                    "spawn" | "spawn_blocking" | "spawn_local"
                );
                let process =
                    (spawn && no_args) || callee.is_some_and(|f| returns_process(&f, self.scope));
                if spawn || process {
                    self.found.any.push(end);
                }
                if process {
                    self.found.processes.push(end);
                }
            }
            syn::visit::visit_expr(self, e);
        }

        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut found = Spawn {
        index,
        scope,
        found: Started::default(),
    };
    found.visit_block(body);
    found.found
}

/// Whether a function's declared return type holds a child process's handle
/// (`io::Result<std::process::Child>`): its paths resolved through this file's `use` when the
/// function is this file's, as written when it is another file's (whose `use` is not known
/// here).
fn returns_process(f: &LocalFn<'_>, scope: &FileScope<'_>) -> bool {
    struct Paths<'s, 'a> {
        scope: &'s FileScope<'a>,
        own: bool,
        found: bool,
    }
    impl<'ast> Visit<'ast> for Paths<'_, '_> {
        fn visit_type_path(&mut self, t: &'ast syn::TypePath) {
            let _guard = crate::analysis::limits::enter();
            let full = if self.own {
                self.scope.resolve(&t.path)
            } else {
                names::segments(&t.path)
            };
            self.found |= self.scope.is_process_handle(&full);
            syn::visit::visit_type_path(self, t);
        }
    }
    let syn::ReturnType::Type(_, ty) = &f.sig.output else {
        return false;
    };
    let own = scope
        .fns
        .get(&f.sig.ident.to_string())
        .is_some_and(|here| here.iter().any(|g| std::ptr::eq(g.sig, f.sig)));
    let mut v = Paths {
        scope,
        own,
        found: false,
    };
    v.visit_type(ty);
    v.found
}

/// Whether a loop checks, as it goes round, whether a child process has exited: the process
/// handle's exit check (`child.try_wait()`, as std's, tokio's and async-process's `Child` have
/// it) called with nothing.
pub(super) fn watches_child_process(l: &Expr) -> bool {
    struct Watch(bool);
    impl<'ast> Visit<'ast> for Watch {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            let _guard = crate::analysis::limits::enter();
            self.0 |= m.method == "try_wait" && m.args.is_empty();
            syn::visit::visit_expr_method_call(self, m);
        }

        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut watch = Watch(false);
    watch.visit_expr(l);
    watch.0
}

/// Where a function body writes a loopback address (the file offsets where each ends): a string
/// naming `127.0.0.1`, `localhost` or `[::1]` (in a macro's arguments too: `format!("ws://
/// 127.0.0.1:{port}")`), or `Ipv4Addr::LOCALHOST` / `Ipv6Addr::LOCALHOST`. What a loop after
/// one probes until it answers is local (evidence.md #9).
pub(super) fn loopbacks(body: &Block, index: &LineIndex<'_>) -> Vec<usize> {
    struct Loopback<'i, 'a>(&'i LineIndex<'a>, Vec<usize>);
    impl<'ast> Visit<'ast> for Loopback<'_, '_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            let _guard = crate::analysis::limits::enter();
            if names_loopback(e) {
                self.1.push(self.0.of(e).end);
            }
            syn::visit::visit_expr(self, e);
        }
        fn visit_stmt_macro(&mut self, m: &'ast syn::StmtMacro) {
            if tokens_name_loopback(m.mac.tokens.clone()) {
                self.1.push(self.0.of(m).end);
            }
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut found = Loopback(index, Vec::new());
    found.visit_block(body);
    found.1
}

/// Whether an expression itself names a loopback address: a string naming `127.0.0.1`,
/// `localhost` or `[::1]` (in a macro's arguments too: `format!("ws://127.0.0.1:{port}")`), or
/// `Ipv4Addr::LOCALHOST` / `Ipv6Addr::LOCALHOST`.
fn names_loopback(e: &Expr) -> bool {
    match e {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => is_loopback(&s.value()),
        Expr::Path(p) => {
            let segments = names::segments(&p.path);
            let n = segments.len();
            n >= 2
                && segments[n - 1] == "LOCALHOST"
                && matches!(segments[n - 2].as_str(), "Ipv4Addr" | "Ipv6Addr")
        }
        Expr::Macro(m) => tokens_name_loopback(m.mac.tokens.clone()),
        _ => false,
    }
}

/// A loop that waits for something to come up by probing it: every operation it tests
/// (in its body, or its `while` condition) connects, pings or asks for health or readiness.
pub(super) fn is_readiness_probe(l: &Expr, r: &FlowResult) -> bool {
    let probes = |n: &String| names::is_probe_operation(n);
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
pub(super) fn restarts_session(
    r: &FlowResult,
    body: &Block,
    scope: &FileScope<'_>,
    fn_name: &str,
) -> bool {
    let ops: Vec<&str> = r.failing().filter_map(|c| c.op.as_deref()).collect();
    if ops.is_empty() || r.failing().any(|c| c.op.is_none()) {
        return false;
    }
    let is_session = |op: &str| {
        names::is_session_operation(op)
            || (op != fn_name
                && scope
                    .function_via(op, Some(&crate::analysis::Via::Method))
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
pub(super) fn reconnects_for_server(
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
    // `open` as written (`open`, `open_stream`): a word of std's files too, kept to this test.
    let connects = |n: &String| names::is_connect_operation(n) || n.contains("open");
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

/// Whether a loop's wait races a signal from its owner: a `select!` in its body (not in a
/// closure, an `async` block or an item) with a sleep among its branches and a branch that leaves the loop
/// (`tokio::select! { _ = sleep(delay) => {}, _ = &mut shutdown => return Ok(()) }`). Such a
/// loop goes on until its owner tells it to stop: it lives as long as that signal, as a
/// supervisor does, and only its pauses are a retry's.
pub(super) fn wait_races_signal(l: &Expr, scope: &FileScope<'_>) -> bool {
    struct Race<'s, 'a> {
        scope: &'s FileScope<'a>,
        found: bool,
    }
    impl Race<'_, '_> {
        fn select(&mut self, mac: &syn::Macro) {
            let is_select = mac.path.segments.last().is_some_and(|s| {
                matches!(s.ident.to_string().as_str(), "select" | "select_biased")
            });
            if !is_select {
                return;
            }
            let (mut leaves, mut sleeps) = (false, false);
            scan_tokens(mac.tokens.clone(), &mut Vec::new(), &mut |path, ident| {
                leaves |= ident == "return" || ident == "break";
                sleeps |=
                    !path.is_empty() && self.scope.is_sleep(&self.scope.resolve_segments(path));
            });
            self.found |= leaves && sleeps;
        }
    }
    impl<'ast> Visit<'ast> for Race<'_, '_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            let _guard = crate::analysis::limits::enter();
            match e {
                // A closure's or an `async` block's `select!` is another task's wait.
                Expr::Closure(_) | Expr::Async(_) => {}
                Expr::Macro(m) => self.select(&m.mac),
                _ => syn::visit::visit_expr(self, e),
            }
        }
        fn visit_stmt_macro(&mut self, m: &'ast syn::StmtMacro) {
            self.select(&m.mac);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut race = Race {
        scope,
        found: false,
    };
    race.visit_expr(l);
    race.found
}

/// Walks a macro's tokens: `f` gets each identifier with the path written up to it
/// (`tokio::time::sleep` gives `["tokio", "time", "sleep"]` at `sleep`).
fn scan_tokens(
    tokens: proc_macro2::TokenStream,
    path: &mut Vec<String>,
    f: &mut impl FnMut(&[String], &str),
) {
    let _guard = crate::analysis::limits::enter();
    let mut joined = false;
    for tt in tokens {
        match tt {
            proc_macro2::TokenTree::Ident(i) => {
                let name = i.to_string();
                if !joined {
                    path.clear();
                }
                path.push(name.clone());
                f(path, &name);
                joined = false;
            }
            proc_macro2::TokenTree::Punct(p) => {
                // `::` comes as two joint `:` puncts.
                joined =
                    p.as_char() == ':' && (joined || p.spacing() == proc_macro2::Spacing::Joint);
                if p.as_char() != ':' {
                    path.clear();
                }
            }
            proc_macro2::TokenTree::Group(g) => {
                scan_tokens(g.stream(), &mut Vec::new(), f);
                path.clear();
                joined = false;
            }
            proc_macro2::TokenTree::Literal(_) => {
                path.clear();
                joined = false;
            }
        }
    }
}

/// The names of the calls in a body, in the order they are written (closures and items
/// skipped).
pub(super) fn call_order(body: &Block) -> Vec<String> {
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
pub(super) fn serves_session(body: &Block, scope: &FileScope<'_>) -> bool {
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

/// Whether a tested operation uses a place the loop replaces with where the last answer points
/// (`url = resp.headers().get(LOCATION)..`, `cursor = page.next_cursor`).
pub(super) fn follows_pointer(
    result: &FlowResult,
    body: &Block,
    facts: &LoopFacts<'_>,
    index: &LineIndex<'_>,
) -> bool {
    facts.mutations.iter().any(|(key, muts)| {
        !facts.counters.contains(key)
            && muts.iter().any(|m| match m {
                crate::analysis::values::Mutation::Assign(rhs) => {
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
                crate::analysis::values::Mutation::Compound(..) => false,
            })
            && (tested_ops_mention(result, index, key) || passed_to_call(body, key))
    })
}

/// Whether a pass rewrites what the tested operation is given from what its failure said
/// (an `OffchainLookup` revert answered by a gateway and turned into the next call's input:
/// `tx.set_input(callback)` where `callback` is worked out from the error): each pass asks
/// something new, as a redirect does. Not a reset of the same request by an error handler
/// (`txn = txn.on_error(err)`, `txn = db.reset(err)`).
pub(super) fn rewrites_input_from_failure(
    result: &FlowResult,
    body: &Block,
    index: &LineIndex<'_>,
) -> bool {
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
            && values.iter().all(|e| !crate::analysis::values::mentions(e, place))
            && values
                .iter()
                .any(|e| derived.iter().any(|d| crate::analysis::values::mentions(e, d)))
    })
}

/// Whether every failing way round of a loop goes through the arms of a `match` on a retry
/// policy object's decision: `let d = session.decide_should_retry(info); match d {
/// RetryDecision::RetrySameTarget(_) => continue, RetryDecision::DontRetry => break, .. }`.
pub(super) fn policy_decides(result: &FlowResult, body: &Block, index: &LineIndex<'_>) -> bool {
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
            Expr::MethodCall(m) => names::is_decision_method(&m.method.to_string()),
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
pub(super) fn taken_branches(body: &Block, index: &LineIndex<'_>) -> Vec<Span> {
    let mut out = taken_option_branches(body, index);
    out.extend(once_branches(body, index));
    out
}

/// The branches a flag lets through once (`if !refreshed { refreshed = true; continue }`, an
/// arm guarded by `if .. && !auth_retried` whose body sets `auth_retried = true`): the flag is
/// bound before the loop and nothing in the loop sets it back, so the next pass finds it set
/// and takes another way. Going round from such a branch happens at most once.
fn once_branches(body: &Block, index: &LineIndex<'_>) -> Vec<Span> {
    /// `flag = true` / `flag = false` in the loop, by name.
    #[derive(Default)]
    struct Sets {
        to_true: Vec<String>,
        to_other: Vec<String>,
    }
    impl<'v> Visit<'v> for Sets {
        fn visit_expr_assign(&mut self, a: &'v syn::ExprAssign) {
            let _guard = crate::analysis::limits::enter();
            if let Expr::Path(p) = &*a.left {
                if let Some(name) = p.path.get_ident().map(ToString::to_string) {
                    let to_true = matches!(&*a.right, Expr::Lit(l)
                        if matches!(l.lit, syn::Lit::Bool(ref b) if b.value));
                    if to_true {
                        self.to_true.push(name);
                    } else {
                        self.to_other.push(name);
                    }
                }
            }
            syn::visit::visit_expr_assign(self, a);
        }
        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    struct Find<'i, 'a> {
        index: &'i LineIndex<'a>,
        once: Vec<String>,
        out: Vec<Span>,
    }
    impl Find<'_, '_> {
        fn branch(&mut self, cond: &Expr, taken: Span, sets: &Sets) {
            let mut flags = Vec::new();
            cond_flags(cond, false, &mut flags);
            if flags
                .iter()
                .any(|f| self.once.contains(f) && sets.to_true.contains(f))
            {
                self.out.push(taken);
            }
        }
    }
    impl<'v> Visit<'v> for Find<'_, '_> {
        fn visit_expr_if(&mut self, i: &'v syn::ExprIf) {
            let _guard = crate::analysis::limits::enter();
            let mut sets = Sets::default();
            sets.visit_block(&i.then_branch);
            self.branch(&i.cond, self.index.of(&i.then_branch), &sets);
            syn::visit::visit_expr_if(self, i);
        }
        fn visit_arm(&mut self, arm: &'v syn::Arm) {
            let _guard = crate::analysis::limits::enter();
            if let Some((_, g)) = &arm.guard {
                let mut sets = Sets::default();
                sets.visit_expr(&arm.body);
                self.branch(g, self.index.of(&*arm.body), &sets);
            }
            syn::visit::visit_arm(self, arm);
        }
        fn visit_expr_closure(&mut self, _: &'v syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    let mut all = Sets::default();
    all.visit_block(body);
    // Set to `true` in the loop, and to nothing else there; bound before it (a `let` in the
    // body starts it again on every pass).
    let lets = body_lets(body);
    let once: Vec<String> = all
        .to_true
        .iter()
        .filter(|f| !all.to_other.contains(f) && !lets.contains(f))
        .cloned()
        .collect();
    if once.is_empty() {
        return Vec::new();
    }
    let mut find = Find {
        index,
        once,
        out: Vec::new(),
    };
    find.visit_block(body);
    find.out
}

/// The flags (plain names) a condition requires, alone or in an `&&`: set (`allow_retry`) when
/// `set`, unset (`!refreshed`) otherwise.
pub(super) fn cond_flags(cond: &Expr, set: bool, out: &mut Vec<String>) {
    let _guard = crate::analysis::limits::enter();
    match cond {
        Expr::Path(p) if set => out.extend(p.path.get_ident().map(ToString::to_string)),
        Expr::Unary(u) if !set && matches!(u.op, syn::UnOp::Not(_)) => {
            if let Expr::Path(p) = &*u.expr {
                out.extend(p.path.get_ident().map(ToString::to_string));
            }
        }
        Expr::Binary(b) if matches!(b.op, syn::BinOp::And(_)) => {
            cond_flags(&b.left, set, out);
            cond_flags(&b.right, set, out);
        }
        Expr::Paren(p) => cond_flags(&p.expr, set, out),
        _ => {}
    }
}

fn taken_option_branches(body: &Block, index: &LineIndex<'_>) -> Vec<Span> {
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
        if crate::analysis::flow::option_outcome(&le.pat).is_some() && !sets_again {
            out.push(index.of(&i.then_branch));
        }
    }
    out
}

/// Whether `key` is passed to a call in `body` (`client.get(&url)`).
pub(super) fn passed_to_call(body: &Block, key: &str) -> bool {
    struct P<'k> {
        key: &'k str,
        found: bool,
    }
    impl<'ast> Visit<'ast> for P<'_> {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            let _guard = crate::analysis::limits::enter();
            if m.args
                .iter()
                .any(|a| crate::analysis::values::mentions(a, self.key))
            {
                self.found = true;
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            let _guard = crate::analysis::limits::enter();
            if c.args
                .iter()
                .any(|a| crate::analysis::values::mentions(a, self.key))
            {
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

/// Whether the elements a `for` loop binds (`vars`) reach its body other than as the round's
/// wait: used outside the waits' calls (`waits`), outside statement macros (a log line) and
/// outside the tests that only choose what to do (a `match` on the element, an `if` or a
/// comparison: `match retry_delay { Some(d) => sleep(d), None => return }` is a schedule), except
/// to compute a name that is itself only waited on (`let d = delay * 2; sleep(d)`).
pub(super) fn elements_feed_the_rounds(body: &Block, vars: &[String], waits: &Waits<'_>) -> bool {
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

/// Finds the uses of a `for` loop's elements (see [`elements_feed_the_rounds`]).
pub(super) struct Uses<'v> {
    pub(in crate::analysis) vars: &'v [String],
    pub(in crate::analysis) wait_calls: &'v [(usize, usize)],
    /// Names used inside the waits' calls.
    pub(in crate::analysis) waited_names: Vec<String>,
    /// Each use outside a wait and a statement macro: where, and the name a `let` binds it to.
    pub(in crate::analysis) feeds: Vec<(usize, Option<String>)>,
    /// Inside a test that only chooses a path (a `match` scrutinee, a condition, a comparison).
    pub(in crate::analysis) testing: bool,
    /// Inside an expression whose value is data for something (a `let`'s value, a call's
    /// arguments, an assignment): a `match` or an `if` there makes data of its scrutinee.
    pub(in crate::analysis) valued: bool,
}

impl Uses<'_> {
    pub(super) fn with(&mut self, testing: bool, valued: bool, visit: impl FnOnce(&mut Self)) {
        let outer = (self.testing, self.valued);
        self.testing = testing;
        self.valued = valued;
        visit(self);
        (self.testing, self.valued) = outer;
    }
}

impl Uses<'_> {
    pub(super) fn in_wait(&self, at: usize) -> bool {
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
        let compares = names::is_comparison(&b.op);
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
pub(super) fn tokens_name(tokens: proc_macro2::TokenStream, vars: &[String]) -> bool {
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

/// `names`, and the `let`s of `body` computed from them (`let body = Request { model, .. }`),
/// and the `let`s of `body` filled with them by a method (`buf.extend_from_slice(&n
/// .to_le_bytes())`); `from_pattern`: the names are bound by the loop's pattern, not by a `let`
/// of the body.
pub(super) fn derived_names(body: &Block, names: &[String], from_pattern: bool) -> Vec<String> {
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
        // A value the round made (a `let` of this body) filled by a method given a derived
        // value (`bytes.extend_from_slice(&n.to_le_bytes())`, then `hasher.update(&bytes)`) is
        // built from it too; a value from outside the round (`self`, a parameter) is not.
        if let syn::Stmt::Expr(Expr::MethodCall(m), _) = stmt {
            if let Expr::Path(p) = &*m.receiver {
                if let Some(receiver) = p.path.get_ident().map(ToString::to_string) {
                    if bound_before.contains(&receiver)
                        && !out.contains(&receiver)
                        && m.args
                            .iter()
                            .any(|a| out.iter().any(|n| value_mentions(a, n)))
                    {
                        out.push(receiver);
                    }
                }
            }
        }
        if let syn::Stmt::Local(l) = stmt {
            let mut bound = Vec::new();
            pat_bindings(&l.pat, &mut bound);
            let derived = l
                .init
                .as_ref()
                .is_some_and(|init| out.iter().any(|n| value_mentions(&init.expr, n)));
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

/// Whether the value an expression gives can be made from `name`: a `match` arm that never
/// gives a value (`Err(e) => { sleep(backoff(attempt)); continue }`) does not make the
/// value bound, whatever it mentions; the scrutinee and the other arms do.
fn value_mentions(e: &Expr, name: &str) -> bool {
    let _guard = crate::analysis::limits::enter();
    let mentions = crate::analysis::values::mentions;
    let gives_no_value = |e: &Expr| {
        diverges(e)
            || matches!(e, Expr::Block(b) if b.block.stmts.last().is_some_and(|s| matches!(s, syn::Stmt::Expr(x, _) if diverges(x))))
    };
    match e {
        Expr::Match(m) => {
            mentions(&m.expr, name)
                || m.arms.iter().any(|a| {
                    a.guard.as_ref().is_some_and(|(_, g)| mentions(g, name))
                        || (!gives_no_value(&a.body) && value_mentions(&a.body, name))
                })
        }
        Expr::Paren(p) => value_mentions(&p.expr, name),
        Expr::Await(a) => value_mentions(&a.base, name),
        Expr::Try(t) => value_mentions(&t.expr, name),
        _ => mentions(e, name),
    }
}

/// The variables a loop body steps (`i += 1`, `i = (i + 1) % n`, `i = 0`), not inside
/// closures.
pub(super) fn stepped_index_vars(body: &Block) -> Vec<String> {
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

/// The names the `let`s of a loop's body bind (not those of closures or nested items).
fn body_lets(body: &Block) -> Vec<String> {
    struct L(Vec<String>);
    impl<'v> Visit<'v> for L {
        fn visit_local(&mut self, l: &'v syn::Local) {
            let _guard = crate::analysis::limits::enter();
            pat_bindings(&l.pat, &mut self.0);
            syn::visit::visit_local(self, l);
        }
        fn visit_expr_closure(&mut self, _: &'v syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    let mut l = L(Vec::new());
    l.visit_block(body);
    l.0
}

/// The values a loop steps by a constant (`port += 1`), or by what the pass made (`offset +=
/// len`, `len` a `let` of the body), that the operation it tests is given
/// built into a binding of the loop (`let addr = SocketAddr::new(ip, port)`) and that nothing
/// compares (`port < last`): each pass hands the operation the next input, a search (the next
/// free port, the next name), and the count of passes is no limit. So do the values it
/// multiplies by a constant (`factor *= 2`) built into the operation's input (`let size =
/// total / factor`, or `inflate(packed, packed.len() * scale)`), compared or not: a search over sizes (a buffer that fits), where a
/// multiplied wait is only waited on.
pub(super) fn stepped_inputs(
    l: &Expr,
    body: &Block,
    r: &FlowResult,
    index: &LineIndex<'_>,
) -> bool {
    #[derive(Default)]
    struct V {
        stepped: Vec<String>,
        multiplied: Vec<String>,
        compared: Vec<String>,
        lets: Vec<String>,
    }
    impl<'v> Visit<'v> for V {
        fn visit_expr(&mut self, e: &'v Expr) {
            let _guard = crate::analysis::limits::enter();
            match e {
                Expr::Closure(_) => return,
                Expr::Binary(b) => {
                    let ident = |e: &Expr| match e {
                        Expr::Path(p) => p.path.get_ident().map(ToString::to_string),
                        _ => None,
                    };
                    // `port += 1`, and `offset += chunk_len`: a position moved on by a
                    // constant or by what the round itself made (a `let` of the loop's body:
                    // the size of the part it handled), not by a setting (`timeout += base`).
                    if matches!(b.op, syn::BinOp::AddAssign(_) | syn::BinOp::SubAssign(_))
                        && (matches!(&*b.right, Expr::Lit(_))
                            || self.lets.iter().any(|n| mentions(&b.right, n)))
                    {
                        self.stepped.extend(ident(&b.left));
                    }
                    if matches!(b.op, syn::BinOp::MulAssign(_) | syn::BinOp::ShlAssign(_))
                        && matches!(&*b.right, Expr::Lit(_))
                    {
                        self.multiplied.extend(ident(&b.left));
                    }
                    if names::is_comparison(&b.op) {
                        for side in [&*b.left, &*b.right] {
                            self.compared.extend(
                                names::text(side)
                                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                                    .filter(|w| !w.is_empty())
                                    .map(str::to_owned),
                            );
                        }
                    }
                }
                _ => {}
            }
            syn::visit::visit_expr(self, e);
        }

        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    let mut v = V {
        lets: body_lets(body),
        ..V::default()
    };
    v.visit_expr(l);
    v.stepped.sort();
    v.stepped.dedup();
    // Built into a value of the loop's own, not handed over as it is: `try_once(attempt)`
    // gives the same operation the number of its attempt.
    let built_in = |name: &String| {
        derived_names(body, std::slice::from_ref(name), false)
            .iter()
            .any(|d| d != name && tested_ops_mention(r, index, d))
    };
    v.stepped
        .iter()
        .any(|name| !v.compared.contains(name) && built_in(name))
        || v.multiplied
            .iter()
            .any(|name| built_in(name) || tested_ops_compute_with(r, index, name))
}

/// Whether an operation the loop tests is given a value it computes from `var` in its
/// arguments (`decompress(value, multiplier * value.len())`): `var` is an operand of an
/// arithmetic operator there, as in a `let` built from it.
fn tested_ops_compute_with(r: &FlowResult, index: &LineIndex<'_>, var: &str) -> bool {
    r.tested_exprs.iter().any(|s| {
        let text = index.text(*s);
        let arithmetic = |t: &str| {
            let t = t.trim();
            !t.starts_with("*=")
                && !t.ends_with("*=")
                && ["*", "/", "<<", ">>", "%"]
                    .iter()
                    .any(|op| t.starts_with(op) || t.ends_with(op))
        };
        text.match_indices(var).any(|(at, _)| {
            let before = &text[..at];
            let after = &text[at + var.len()..];
            let whole = !before
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
                && !after
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_');
            whole && (arithmetic(before) || arithmetic(after))
        })
    })
}

/// Whether an operation the loop tests indexes with `var` (`self.queues[i].get()`,
/// `nodes[i % n]`).
pub(super) fn tested_ops_index_with(r: &FlowResult, index: &LineIndex<'_>, var: &str) -> bool {
    r.tested_exprs
        .iter()
        .any(|s| indexes_with(index.text(*s), var))
}

/// Whether code text indexes with `var` (`[i]`, `[i % n]`).
pub(super) fn indexes_with(text: &str, var: &str) -> bool {
    text.match_indices('[').any(|(at, _)| {
        let rest = text[at + 1..].trim_start();
        rest.strip_prefix(var)
            .is_some_and(|after| !after.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
    })
}

/// The names the top of a loop body binds to what an element indexed with `var` is asked
/// (`let connection = self.queues[i].get();`; not `let d = DELAYS[i];`).
pub(super) fn lets_indexing_with(body: &Block, var: &str) -> Vec<String> {
    /// A call made on an element indexed with `var`, through awaits, `?` and fields.
    fn asks_indexed(e: &Expr, var: &str, called: bool) -> bool {
        let _guard = crate::analysis::limits::enter();
        match e {
            Expr::MethodCall(m) => asks_indexed(&m.receiver, var, true),
            Expr::Await(a) => asks_indexed(&a.base, var, called),
            Expr::Try(t) => asks_indexed(&t.expr, var, called),
            Expr::Field(f) => asks_indexed(&f.base, var, called),
            Expr::Paren(p) => asks_indexed(&p.expr, var, called),
            Expr::Index(i) => called && crate::analysis::values::mentions(&i.index, var),
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

pub(super) fn tested_ops_mention(r: &FlowResult, index: &LineIndex<'_>, var: &str) -> bool {
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
pub(super) fn drawn_alternatives(body: &Block) -> Vec<String> {
    let draws = draws_alternative;
    let mut out = Vec::new();
    for st in &body.stmts {
        let syn::Stmt::Local(local) = st else {
            continue;
        };
        let Some(init) = &local.init else { continue };
        let is_draw = match (&*init.expr, &init.diverge) {
            (e, Some((_, otherwise))) => draws(e) && crate::analysis::flow::leaves(otherwise),
            (Expr::Match(m), None) => {
                draws(&m.expr)
                    && m.arms.iter().any(|a| {
                        crate::analysis::flow::option_outcome(&a.pat).is_some()
                            && crate::analysis::flow::leaves(&a.body)
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
pub(super) fn draws_alternative(e: &Expr) -> bool {
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
pub(super) fn drawn_by_condition(cond: &Expr) -> Vec<String> {
    let mut out = Vec::new();
    if let Expr::Let(l) = cond {
        if crate::analysis::flow::option_outcome(&l.pat).is_some() && draws_alternative(&l.expr) {
            pat_bindings(&l.pat, &mut out);
        }
    }
    out
}

/// An I/O operation whose failure is logged before going round again: a retry even without a
/// pause or a counter (a compare-and-swap or a parse loop neither logs nor does I/O).
pub(super) fn logs_and_does_io(l: &Expr, result: &FlowResult) -> bool {
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

pub(super) fn mentions_retry_words(l: &Expr, fn_name: &str) -> bool {
    if names::is_retry_word(fn_name) {
        return true;
    }
    // Variables, functions, fields and log text; not type names (`RetryError` in a regex engine).
    let text = names::text(l);
    text.split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.chars().next().is_some_and(char::is_uppercase))
        .any(names::is_retry_word)
}

/// Whether every operation a loop tests is given a target on this machine (evidence.md #9):
/// a loopback address written in its call (or in the `let` that holds what it is given), a
/// filesystem path (a `Path` or `PathBuf` the function holds: a Unix-domain socket, a named
/// pipe, a file), or an endpoint type of the models' `local-endpoints` (a Unix-domain socket,
/// a named pipe) whose path resolves to its crate. Such a loop waits for something local to
/// come up; it asks no shared service again, which is what the rules protect.
pub(super) fn tests_only_local_targets(
    l: &Expr,
    r: &FlowResult,
    index: &LineIndex<'_>,
    locals: &Locals<'_>,
    owner: Option<&syn::Ident>,
    scope: &FileScope<'_>,
) -> bool {
    struct Find<'i, 'a, 's> {
        index: &'i LineIndex<'a>,
        spans: Vec<Span>,
        local: Vec<bool>,
        cx: Cx<'s>,
    }
    impl<'ast> Visit<'ast> for Find<'_, '_, '_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            let _guard = crate::analysis::limits::enter();
            let at = self.index.of(e);
            let within: Vec<usize> = (0..self.spans.len())
                .filter(|&i| self.spans[i].start <= at.start && at.end <= self.spans[i].end)
                .collect();
            let overlaps = self
                .spans
                .iter()
                .any(|s| s.start < at.end && at.start < s.end);
            if !overlaps {
                return;
            }
            if !within.is_empty() && local_target(e, &self.cx, 0) {
                for i in within {
                    self.local[i] = true;
                }
            }
            syn::visit::visit_expr(self, e);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let spans: Vec<Span> = r.tested_calls.iter().map(|(_, s, _)| *s).collect();
    if spans.is_empty() {
        return false;
    }
    let mut find = Find {
        index,
        local: vec![false; spans.len()],
        spans,
        cx: Cx {
            locals,
            scope,
            fields: owner.and_then(|o| scope.struct_fields.get(&o.to_string())),
        },
    };
    find.visit_expr(l);
    find.local.iter().all(|x| *x)
}

/// Whether an expression names a target on this machine (see [`tests_only_local_targets`]):
/// a loopback address (a name the function binds is followed to what it is bound to, one
/// `let` deep), a call of a local endpoint type (`UnixStream::connect(..)`), or a call of a
/// function given nothing but filesystem paths (`ipc_connect(path)`: what it reaches is the
/// file; a method's receiver may be a remote client, so a method is not).
fn local_target(e: &Expr, cx: &Cx<'_>, depth: usize) -> bool {
    let _guard = crate::analysis::limits::enter();
    let (locals, scope) = (cx.locals, cx.scope);
    if names_loopback(e) {
        return true;
    }
    match e {
        Expr::Path(p) => match names::segments(&p.path).as_slice() {
            [name] if depth == 0 && !locals.param_types.contains_key(name) => {
                locals.lets.get(name).is_some_and(|values| {
                    values.len() == 1
                        && (local_target(values[0], cx, depth + 1)
                            || built_from_loopback(values[0], locals, 0))
                })
            }
            _ => false,
        },
        Expr::Call(c) => match &*c.func {
            Expr::Path(p) => {
                let full = scope.resolve(&p.path);
                let endpoint = full.len() >= 2 && scope.is_local_endpoint(&full[..full.len() - 1]);
                endpoint || (!c.args.is_empty() && c.args.iter().all(|a| fs_path(a, cx)))
            }
            _ => false,
        },
        _ => false,
    }
}

/// Whether a value the function binds is built from a loopback address, through its `let`s
/// (up to four): a client made from a connection made from an endpoint written as
/// `http://localhost:{port}` (`let endpoint = Endpoint::new(format!("http://localhost:{port}"))?;
/// let client = HealthClient::new(endpoint.connect_lazy());`). A constructor or a method given
/// the address builds from it; a value that only falls back to one (`env::var("URL")
/// .unwrap_or(..)`) is not, and a `match` is when each arm that gives a value is.
fn built_from_loopback(e: &Expr, locals: &Locals<'_>, depth: usize) -> bool {
    let _guard = crate::analysis::limits::enter();
    if depth > 4 {
        return false;
    }
    if names_loopback(e) {
        return true;
    }
    let next = |x: &Expr| built_from_loopback(x, locals, depth);
    match e {
        Expr::Path(p) => match names::segments(&p.path).as_slice() {
            [name] if !locals.param_types.contains_key(name) => {
                locals.lets.get(name).is_some_and(|values| {
                    values.len() == 1 && built_from_loopback(values[0], locals, depth + 1)
                })
            }
            _ => false,
        },
        Expr::Reference(r) => next(&r.expr),
        Expr::Paren(p) => next(&p.expr),
        Expr::Try(t) => next(&t.expr),
        Expr::Await(a) => next(&a.base),
        Expr::Call(c) => c.args.iter().any(next),
        Expr::MethodCall(m) => {
            // `unwrap_or(default)`, `or(..)`: std's fallbacks (API, here) keep what the
            // receiver gives when it has one.
            let fallback = matches!(
                m.method.to_string().as_str(),
                "unwrap_or" | "unwrap_or_else" | "unwrap_or_default" | "or" | "or_else"
            );
            next(&m.receiver) || (!fallback && m.args.iter().any(next))
        }
        Expr::Match(m) => {
            let giving: Vec<&syn::Arm> = m.arms.iter().filter(|a| !diverges(&a.body)).collect();
            !giving.is_empty() && giving.iter().all(|a| next(&a.body))
        }
        Expr::Block(b) => b.block.stmts.last().is_some_and(|s| match s {
            syn::Stmt::Expr(x, None) => next(x),
            _ => false,
        }),
        _ => false,
    }
}

/// An arm body that never gives a value: `return`, `continue`, `break`, or a macro of the
/// vocabulary's `failing-macros` (`bail!(..)`, `panic!(..)`).
pub(super) fn diverges(e: &Expr) -> bool {
    match e {
        Expr::Return(_) | Expr::Continue(_) | Expr::Break(_) => true,
        Expr::Macro(m) => m.mac.path.segments.last().is_some_and(|s| {
            crate::analysis::known::builtin().word(
                crate::analysis::known::List::FailingMacros,
                &s.ident.to_string(),
            )
        }),
        _ => false,
    }
}

/// What [`local_target`] reads: the function's locals, the file, and the fields of the type
/// whose `impl` the function is in.
struct Cx<'s> {
    locals: &'s Locals<'s>,
    scope: &'s FileScope<'s>,
    fields: Option<&'s std::collections::HashMap<String, String>>,
}

/// Whether an expression is a filesystem path: a parameter, a `let` or a field of `self` whose
/// type resolves to std's `Path` or `PathBuf` (through the file's `use`: a type of another crate
/// named `Path`, such as an object store's key, is not one, and an unresolved name is unknown),
/// or one made by their constructors (`Path::new(..)`, `PathBuf::from(..)`).
fn fs_path(e: &Expr, cx: &Cx<'_>) -> bool {
    let _guard = crate::analysis::limits::enter();
    let (locals, scope) = (cx.locals, cx.scope);
    let std_path = |full: &[String]| {
        matches!(full, [std, path, ty] if std == "std" && path == "path"
            && matches!(ty.as_str(), "Path" | "PathBuf"))
    };
    match e {
        Expr::Reference(r) => fs_path(&r.expr, cx),
        Expr::Paren(p) => fs_path(&p.expr, cx),
        Expr::Field(f) => {
            let on_self = matches!(&*f.base, Expr::Path(p) if p.path.is_ident("self"));
            let syn::Member::Named(name) = &f.member else {
                return false;
            };
            // The field's type is known by its last name: read through the file's `use`.
            on_self
                && cx
                    .fields
                    .and_then(|fields| fields.get(&name.to_string()))
                    .and_then(|ty| scope.uses.get(ty))
                    .is_some_and(|full| std_path(full))
        }
        Expr::Path(p) => match names::segments(&p.path).as_slice() {
            [name] => match locals.param_types.get(name) {
                Some(ty) => crate::analysis::scope::held_path(ty)
                    .is_some_and(|held| std_path(&scope.resolve(held))),
                None => locals.lets.get(name).is_some_and(|values| {
                    values.len() == 1
                        && !matches!(values[0], Expr::Path(_))
                        && fs_path(values[0], cx)
                }),
            },
            _ => false,
        },
        Expr::Call(c) => match &*c.func {
            Expr::Path(p) => {
                let full = scope.resolve(&p.path);
                if full.len() >= 2 && std_path(&full[..full.len() - 1]) {
                    return true;
                }
                // `socket_path(id)`, a function of this file whose signature returns a path
                // (`-> PathBuf`): the crate's own code says what it makes.
                full.last()
                    .and_then(|name| scope.own_function_via(name, &scope.via_of(&p.path)))
                    .is_some_and(|f| match &f.sig.output {
                        syn::ReturnType::Type(_, ty) => crate::analysis::scope::held_path(ty)
                            .is_some_and(|held| std_path(&scope.resolve(held))),
                        syn::ReturnType::Default => false,
                    })
            }
            _ => false,
        },
        _ => false,
    }
}

/// Whether an address names this machine: `127.0.0.1`, `localhost`, `[::1]`.
fn is_loopback(text: &str) -> bool {
    ["127.0.0.1", "localhost", "[::1]"]
        .iter()
        .any(|w| text.contains(w))
}

/// Whether a macro's tokens hold a string naming a loopback address
/// (`format!("ws://127.0.0.1:{port}")`).
fn tokens_name_loopback(tokens: proc_macro2::TokenStream) -> bool {
    let _guard = crate::analysis::limits::enter();
    tokens.into_iter().any(|t| match t {
        proc_macro2::TokenTree::Literal(l) => is_loopback(&l.to_string()),
        proc_macro2::TokenTree::Group(g) => tokens_name_loopback(g.stream()),
        _ => false,
    })
}

/// Whether a `while` goes round on the failure of a spin, a lock or a receive in its own
/// condition (`while rx.try_recv().is_err()`, `while let Err(Timeout) = rx.recv_timeout(tick)`):
/// the condition decides every way round, so the operation the loop repeats is that one, and
/// what fails in its body falls through to it. Such a loop lives until a message arrives (a
/// ticker, a watchdog that runs until shutdown), whatever its body tests: not a retry.
pub(super) fn goes_round_on_spin_condition(cond: &Expr) -> bool {
    let _guard = crate::analysis::limits::enter();
    let op = match cond {
        Expr::Let(l) => crate::analysis::flow::pat_outcome(&l.pat)
            .filter(|o| *o == Outcome::Failure)
            .and_then(|_| names::last_call(&l.expr)),
        Expr::MethodCall(m) if m.method == "is_err" => names::last_call(&m.receiver),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => match &*u.expr {
            Expr::MethodCall(m) if m.method == "is_ok" => names::last_call(&m.receiver),
            _ => None,
        },
        Expr::Paren(p) => return goes_round_on_spin_condition(&p.expr),
        _ => None,
    };
    op.is_some_and(|op| names::is_spin_operation(&op))
}

/// Whether a function returns the connection its loop makes with a signature that cannot report
/// a failure (`async fn connect_backoff(&self) -> TcpStream`: the value itself, no `Result`, no
/// `Option`), every operation the loop tests connecting: giving up is not in its contract, so it
/// reconnects until it succeeds by design, a supervisor's (re)connect step (LABELS.md: no RA001;
/// its pacing is still a retry's).
pub(super) fn returns_its_connection(sig: &syn::Signature, r: &FlowResult) -> bool {
    let syn::ReturnType::Type(_, ty) = &sig.output else {
        return false;
    };
    let Some(ret) = crate::analysis::scope::type_ident(ty) else {
        return false;
    };
    let ret = ret.to_string();
    let fallible = ret.ends_with("Result") || ret == "Option" || ret == "Poll";
    let mut ops = r.tested_ops().peekable();
    !fallible && ops.peek().is_some() && ops.all(names::is_connect_operation)
}

/// A loop that leaves as soon as a probe answers and keeps nothing of the answer: every
/// operation it tests asks whether something is up (a `ping`, a health or readiness check, or a
/// connection made by a constructor, `TcpStream::connect(addr)`, that is then dropped), and
/// every test of it looks only at whether it succeeded (`.is_ok()`, `.is_err()`, `Ok(_)`,
/// `Err(e)`, `let Err(e) = .. else { break }`). Nothing it asked for is used: the loop waited
/// for the other side to come up, it repeated no request (evidence.md #3). A `connect` method
/// of a value (`self.connect()`, `socket.connect(path)`) is not such a probe: it may keep the
/// connection in its receiver, and going round until it succeeds reconnects. `any_operation`:
/// the function started a child process before the loop, so whatever the loop asks is a probe
/// of it. A result bound to a name (`let r = client.latest_block();`) that the loop only tests
/// (`if r.is_ok() { break }`), or matches against patterns that keep nothing of it (`if let
/// Ok(page) = r` where `page` is only asked its status), is dropped too.
pub(super) fn drops_probe_answers(
    l: &Expr,
    r: &FlowResult,
    index: &LineIndex<'_>,
    receivers: &Receivers<'_, '_>,
    any_operation: bool,
) -> bool {
    /// What a test of an operation's result keeps of its `Ok`.
    #[derive(Clone, Copy, PartialEq)]
    enum Use {
        Dropped,
        Kept,
        /// Bound to the name of this index of `Probed::bound`: dropped when the loop only asks
        /// of it whether it succeeded, or its status.
        Bound(usize),
    }
    /// What a pattern keeps of an `Ok`: nothing, all of it, or what a name it binds is used for.
    enum Kept {
        Use(Use),
        Named(String),
    }
    fn strip(e: &Expr) -> &Expr {
        let _guard = crate::analysis::limits::enter();
        match e {
            Expr::Await(a) => strip(&a.base),
            Expr::Paren(p) => strip(&p.expr),
            _ => e,
        }
    }
    /// What a pattern the result is matched against keeps of its `Ok`.
    fn of_pattern(p: &syn::Pat) -> Option<Kept> {
        let syn::Pat::TupleStruct(t) = p else {
            return None;
        };
        let dropped = |q: &syn::Pat| match q {
            syn::Pat::Wild(_) => true,
            syn::Pat::Ident(i) => i.ident.to_string().starts_with('_'),
            _ => false,
        };
        if t.path.is_ident("Err") {
            Some(Kept::Use(Use::Dropped))
        } else if t.path.is_ident("Ok") {
            // A pattern that binds nothing (`Ok(true)`, `Ok(Health::Serving)`) only compares
            // the answer: it keeps nothing of it.
            let binds_nothing = |q: &syn::Pat| {
                let mut names = Vec::new();
                pat_bindings(q, &mut names);
                names.is_empty()
            };
            Some(match t.elems.iter().collect::<Vec<_>>()[..] {
                [q] if dropped(q) || binds_nothing(q) => Kept::Use(Use::Dropped),
                [syn::Pat::Ident(i)] if i.subpat.is_none() => Kept::Named(i.ident.to_string()),
                _ => Kept::Use(Use::Kept),
            })
        } else {
            None
        }
    }
    struct Probed<'i, 'a> {
        index: &'i LineIndex<'a>,
        /// The expression tested, and what its test keeps.
        tests: Vec<(Span, Use)>,
        /// Every expression of the loop by its span, to find the tested calls.
        calls: Vec<(Span, &'i Expr)>,
        /// The names results are bound to (`let r = probe();`).
        bound: Vec<String>,
        /// How often each one-segment name is used, and how often only to ask whether it
        /// succeeded (`.is_ok()`, `.is_err()`) or for its status (`.status()`).
        uses: std::collections::HashMap<String, (usize, usize)>,
        /// Bound names matched against a pattern (`if let Ok(r) = answer`), with what each
        /// pattern keeps: such a use keeps what its pattern keeps.
        matched: Vec<(String, Use)>,
        scope: &'i FileScope<'a>,
    }
    impl Probed<'_, '_> {
        /// What a pattern keeps, a name it binds noted in `bound`.
        fn pattern_use(&mut self, p: &syn::Pat) -> Option<Use> {
            Some(match of_pattern(p)? {
                Kept::Use(u) => u,
                Kept::Named(n) => {
                    self.bound.push(n);
                    Use::Bound(self.bound.len() - 1)
                }
            })
        }
        /// Whether a method reads an HTTP status (`status`, `status_code`, a team's accessor).
        fn reads_status(&self, method: &str) -> bool {
            names::is_status_text(method) || self.scope.is_status_accessor(method)
        }
        /// Notes a test of a result: a bound name matched against a pattern counts as a use
        /// that keeps what the pattern keeps.
        fn tested(&mut self, subject: &Expr, at: Span, u: Use, first_arm: bool) {
            if let Some(n) = name_of(subject) {
                if first_arm {
                    self.uses.entry(n.clone()).or_default().1 += 1;
                }
                self.matched.push((n, u));
            }
            self.tests.push((at, u));
        }
        /// Whether the result bound to `bound[i]` is dropped: every use of the name asks
        /// whether it succeeded, reads its status, or matches it against patterns that keep
        /// nothing (or bind names that are themselves dropped).
        fn dropped(&self, i: usize, depth: usize) -> bool {
            let _guard = crate::analysis::limits::enter();
            let Some(n) = self.bound.get(i) else {
                return false;
            };
            depth < 4
                && self.uses.get(n).is_some_and(|(all, tests)| all == tests)
                && self
                    .matched
                    .iter()
                    .filter(|(m, _)| m == n)
                    .all(|(_, u)| match u {
                        Use::Dropped => true,
                        Use::Kept => false,
                        Use::Bound(j) => *j != i && self.dropped(*j, depth + 1),
                    })
        }
    }
    /// The name an expression is, when it is a one-segment path.
    fn name_of(e: &Expr) -> Option<String> {
        match e {
            Expr::Path(p) if p.qself.is_none() => p.path.get_ident().map(ToString::to_string),
            _ => None,
        }
    }
    impl<'ast: 'i, 'i> Visit<'ast> for Probed<'i, '_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            let _guard = crate::analysis::limits::enter();
            let at = self.index.of(e);
            if matches!(e, Expr::MethodCall(_) | Expr::Call(_) | Expr::Await(_)) {
                self.calls.push((at, e));
            }
            if let Some(n) = name_of(e) {
                self.uses.entry(n).or_default().0 += 1;
            }
            match e {
                Expr::MethodCall(m)
                    if m.args.is_empty()
                        && matches!(m.method.to_string().as_str(), "is_ok" | "is_err") =>
                {
                    if let Some(n) = name_of(strip(&m.receiver)) {
                        self.uses.entry(n).or_default().1 += 1;
                    }
                    self.tests
                        .push((self.index.of(strip(&m.receiver)), Use::Dropped));
                }
                Expr::MethodCall(m)
                    if m.args.is_empty() && self.reads_status(&m.method.to_string()) =>
                {
                    if let Some(n) = name_of(strip(&m.receiver)) {
                        self.uses.entry(n).or_default().1 += 1;
                    }
                }
                Expr::Let(le) => {
                    let u = self.pattern_use(&le.pat).unwrap_or(Use::Kept);
                    let subject = strip(&le.expr);
                    self.tested(subject, self.index.of(subject), u, true);
                }
                Expr::Match(m) => {
                    let subject = strip(&m.expr);
                    let at = self.index.of(subject);
                    let mut any = false;
                    for arm in &m.arms {
                        // An arm that binds the whole result keeps it (`result => return result`).
                        let whole = matches!(&arm.pat, syn::Pat::Ident(i)
                            if !i.ident.to_string().starts_with('_'));
                        if let Some(u) = self.pattern_use(&arm.pat).or(whole.then_some(Use::Kept)) {
                            self.tested(subject, at, u, !any);
                            any = true;
                        }
                    }
                    if !any {
                        self.tested(subject, at, Use::Kept, true);
                    }
                }
                _ => {}
            }
            syn::visit::visit_expr(self, e);
        }
        fn visit_local(&mut self, local: &'ast syn::Local) {
            let _guard = crate::analysis::limits::enter();
            if let Some(init) = &local.init {
                let u = if init.diverge.is_some() {
                    self.pattern_use(&local.pat).unwrap_or(Use::Kept)
                } else if let syn::Pat::Ident(i) = &local.pat {
                    self.bound.push(i.ident.to_string());
                    Use::Bound(self.bound.len() - 1)
                } else {
                    Use::Kept
                };
                self.tests.push((self.index.of(strip(&init.expr)), u));
            }
            syn::visit::visit_local(self, local);
        }
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            // A name in a macro's arguments is a use (`{answer}` captured in a format string
            // too); one followed by `.status()` reads only the status.
            let tokens: Vec<proc_macro2::TokenTree> = m.tokens.clone().into_iter().collect();
            for (i, t) in tokens.iter().enumerate() {
                match t {
                    proc_macro2::TokenTree::Ident(id) => {
                        let status = matches!(tokens.get(i + 1),
                            Some(proc_macro2::TokenTree::Punct(p)) if p.as_char() == '.')
                            && matches!(tokens.get(i + 2),
                                Some(proc_macro2::TokenTree::Ident(a)) if self.reads_status(&a.to_string()));
                        let e = self.uses.entry(id.to_string()).or_default();
                        e.0 += 1;
                        e.1 += usize::from(status);
                    }
                    proc_macro2::TokenTree::Literal(l) => {
                        for name in l.to_string().split('{').skip(1) {
                            let name: String = name
                                .chars()
                                .take_while(|c| c.is_alphanumeric() || *c == '_')
                                .collect();
                            if !name.is_empty() {
                                self.uses.entry(name).or_default().0 += 1;
                            }
                        }
                    }
                    proc_macro2::TokenTree::Group(_) | proc_macro2::TokenTree::Punct(_) => {}
                }
            }
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    if !r.success_exit {
        return false;
    }
    let mut v = Probed {
        index,
        tests: Vec::new(),
        calls: Vec::new(),
        bound: Vec::new(),
        uses: std::collections::HashMap::new(),
        matched: Vec::new(),
        scope: receivers.scope,
    };
    v.visit_expr(l);
    // A bound result is dropped when every use of its name asks whether it succeeded, or reads
    // its status (`Ok(answer) if answer.status().is_success() => break`).
    let resolved: Vec<(Span, Use)> = v
        .tests
        .iter()
        .map(|(at, u)| match u {
            Use::Bound(i) if v.dropped(*i, 0) => (*at, Use::Dropped),
            Use::Bound(_) => (*at, Use::Kept),
            u => (*at, *u),
        })
        .collect();
    // The operation a `while` repeats is the one its condition tests.
    let mut subjects: Vec<Span> = r.tested_calls.iter().map(|(_, at, _)| *at).collect();
    if let Expr::While(w) = l {
        let mut cond = Probed {
            index,
            tests: Vec::new(),
            calls: Vec::new(),
            bound: Vec::new(),
            uses: std::collections::HashMap::new(),
            matched: Vec::new(),
            scope: receivers.scope,
        };
        cond.visit_expr(&w.cond);
        subjects.extend(cond.tests.iter().map(|(at, _)| *at));
    }
    !subjects.is_empty()
        && subjects.iter().all(|at| {
            let call = v.calls.iter().find(|(s, _)| s == at).map(|(_, e)| *e);
            let tests: Vec<Use> = resolved
                .iter()
                // The test's subject holds the call, or is the call without its `.await`.
                .filter(|(s, _)| s.start <= at.start && (at.end <= s.end || s.start == at.start))
                .map(|(_, u)| *u)
                .collect();
            // A helper of the file that only probes gives nothing but a status: whatever the
            // loop asks of it keeps nothing.
            (call.is_some_and(|c| {
                any_operation || super::probes::names_a_probe(c) || receivers.safe_request(c)
            }) && !tests.is_empty()
                && tests.iter().all(|u| *u == Use::Dropped))
                || call.is_some_and(|c| super::probes::calls_status_probe(c, receivers))
        })
}

/// Whether a loop asks a person on its way round: its body (or a function of the crate it calls,
/// one level deep) calls a terminal prompt or dialog (a function or type of the models'
/// `prompt-crates`, resolved through `use`: `requestty::prompt_one(..)`,
/// `dialoguer::Input::new()`, `std::io::stdin()`). What it repeats is then repeated at a
/// person's choice ("Retry?"), or with the input the person gives again (a password typed
/// anew): an interactive re-prompt, not a retry (evidence.md #3).
pub(super) fn asks_a_person(body: &Block, receivers: &Receivers<'_, '_>) -> bool {
    struct Ask<'s, 'r> {
        receivers: &'s Receivers<'r, 'r>,
        scope: &'s FileScope<'r>,
        depth: usize,
        /// Walking a function of another file: its `use`s are not this file's, so only a path
        /// written in full names a crate.
        elsewhere: bool,
        found: bool,
    }
    impl<'ast> Visit<'ast> for Ask<'_, '_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            let _guard = crate::analysis::limits::enter();
            if self.found {
                return;
            }
            let callee = match e {
                Expr::Call(c) => match &*c.func {
                    Expr::Path(p) => {
                        let full = if self.elsewhere {
                            names::segments(&p.path)
                        } else {
                            self.scope.resolve(&p.path)
                        };
                        if self.scope.crate_of(&full).is_some() && self.scope.is_prompt(&full) {
                            self.found = true;
                            return;
                        }
                        p.path
                            .get_ident()
                            .map(|i| (i.to_string(), crate::analysis::Via::Free))
                    }
                    _ => None,
                },
                Expr::MethodCall(m) if matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self")) => {
                    Some((m.method.to_string(), crate::analysis::Via::Method))
                }
                // A method of a value a prompt crate made (`editor.readline(..)` where `editor`
                // is bound to `rustyline::DefaultEditor::new()`), read in the loop's function.
                Expr::MethodCall(m)
                    if self.depth == 0
                        && self
                            .receivers
                            .origin(&m.receiver, 0)
                            .is_some_and(|o| self.scope.is_prompt(&o)) =>
                {
                    self.found = true;
                    return;
                }
                _ => None,
            };
            if let Some((name, via)) = callee {
                if self.depth == 0 && self.scope.defines_fn(&name) {
                    if let Some(f) = self.scope.function_via(&name, Some(&via)) {
                        self.depth += 1;
                        self.elsewhere = !self.scope.fns.contains_key(&name);
                        self.visit_block(f.block);
                        self.elsewhere = false;
                        self.depth -= 1;
                    }
                }
            }
            syn::visit::visit_expr(self, e);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut ask = Ask {
        receivers,
        scope: receivers.scope,
        depth: 0,
        elsewhere: false,
        found: false,
    };
    ask.visit_block(body);
    ask.found
}

//! What each attempt does: the calls it makes, the writes it sends, the key it carries, whether it reads `Retry-After`.

use syn::visit::Visit;
use syn::{Block, Expr};

use crate::analysis::known::{self, List};
use crate::analysis::names;
use crate::analysis::scope::{Facts, FileScope, LocalFn};
use crate::analysis::span::LineIndex;
use crate::analysis::values::{place_key, Locals};
use crate::source::Span;

#[allow(clippy::wildcard_imports)]
use super::*;

/// What one attempt does, read from the code that runs per attempt.
pub(super) struct AttemptFacts {
    pub(in crate::analysis) reads_retry_after: bool,
    pub(in crate::analysis) sends_key: bool,
    /// Non-idempotent writes, at the line of the call that makes them (`.post(`, `.execute(`).
    pub(in crate::analysis) writes: Vec<Span>,
    pub(in crate::analysis) calls: Vec<crate::analysis::Call>,
}

impl AttemptFacts {
    pub(super) fn of_block<'a>(
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

    pub(super) fn of_expr<'a>(
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

pub(super) struct AttemptVisitor<'a, 'c> {
    pub(in crate::analysis) scope: &'c FileScope<'a>,
    pub(in crate::analysis) index: &'c LineIndex<'a>,
    /// The enclosing function's bindings, when known (for parameter types).
    pub(in crate::analysis) locals: Option<&'c Locals<'a>>,
    pub(in crate::analysis) writes: Vec<Span>,
    pub(in crate::analysis) calls: Vec<crate::analysis::Call>,
    /// Follow calls into functions of this file that build a write (one level).
    pub(in crate::analysis) follow: bool,
}

impl<'a, 'c> AttemptVisitor<'a, 'c> {
    pub(super) fn new(scope: &'c FileScope<'a>, index: &'c LineIndex<'a>, follow: bool) -> Self {
        AttemptVisitor {
            scope,
            index,
            locals: None,
            writes: Vec::new(),
            calls: Vec::new(),
            follow,
        }
    }

    /// `js.publish(..)` where the function's parameter `js` has a type whose path resolves to a
    /// broker's crate (`messaging-crates` of the models).
    pub(super) fn messaging_receiver(&self, recv: &Expr) -> bool {
        struct Paths<'t>(Vec<&'t syn::Path>);
        impl<'t> Visit<'t> for Paths<'t> {
            fn visit_type_path(&mut self, t: &'t syn::TypePath) {
                let _guard = crate::analysis::limits::enter();
                self.0.push(&t.path);
                syn::visit::visit_type_path(self, t);
            }
        }
        let Some(locals) = self.locals else {
            return false;
        };
        let Some(ty) = place_key(recv).and_then(|k| locals.param_types.get(&k)) else {
            return false;
        };
        let mut paths = Paths(Vec::new());
        paths.visit_type(ty);
        paths.0.iter().any(|p| {
            self.scope.resolve(p).first().is_some_and(|krate| {
                crate::analysis::known::builtin()
                    .name(crate::analysis::known::List::MessagingCrates, krate)
                    || self.scope.ext.messaging_crates.iter().any(|c| c == krate)
            })
        })
    }

    pub(super) fn finish(self, text: &str) -> AttemptFacts {
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
    pub(super) fn param_type_of(&self, receiver: &Expr) -> Option<String> {
        let receiver = match receiver {
            Expr::Reference(r) => &*r.expr,
            Expr::Paren(p) => &*p.expr,
            other => other,
        };
        let Expr::Path(p) = receiver else {
            return None;
        };
        let id = p.path.get_ident()?.to_string();
        let path = crate::analysis::scope::held_path(self.locals?.param_types.get(&id)?)?;
        // A type of this crate only: `crate::net::Pool`, `store::Session` of a module the file
        // declares, or a name not brought in from another crate by `use` (`postgres::Client`
        // is not the file's `Client`).
        let full = self.scope.resolve(path);
        let local = full.len() == 1
            || matches!(full[0].as_str(), "crate" | "self" | "super" | "Self")
            || self.scope.mods.contains(&full[0]);
        local.then(|| full.last().cloned()).flatten()
    }

    /// A call to a function of this file that makes a write (`record_event(..)` whose body
    /// publishes): the write is made here.
    pub(super) fn local_write(&self, name: &str, via: &crate::analysis::Via) -> bool {
        let _guard = crate::analysis::limits::enter();
        if !self.follow {
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
pub(super) fn body_writes<'a>(
    scope: &FileScope<'a>,
    index: &LineIndex<'a>,
    f: &LocalFn<'a>,
) -> bool {
    let locals = Locals::of_fn(f);
    let mut inner = AttemptVisitor::new(scope, index, false);
    inner.locals = Some(&locals);
    inner.visit_block(f.block);
    !inner.writes.is_empty() || signs_and_submits(&names::text(f.block))
}

/// A transaction signed and submitted by the same code (fragments of the code's text, a call's
/// opening parenthesis included, rather than words of a name: they stay here) (`let signed = self.sign_tx(..)?;
/// rpc.call(&RpcSendTransactionRequest { signed_transaction, .. })`): called on each attempt,
/// each attempt submits a new transaction (a fresh nonce, a new hash), so one that was applied
/// before its reply was lost is applied twice. A signed transaction built once and resent is
/// the same transaction, which the network takes once.
pub(super) fn signs_and_submits(text: &str) -> bool {
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
///
/// Header names (`Retry-After` is HTTP's) and fragments of the code's text (a call's opening
/// parenthesis, an upper-case constant), rather than words of a name: they stay here.
pub(super) fn reads_retry_after(text: &str) -> bool {
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

/// Receivers that publish to a queue or a log (`producer.send(record)`).
pub(super) fn is_queue_receiver(e: &Expr) -> bool {
    let t = names::text(e).to_ascii_lowercase();
    known::builtin().part_of(List::QueueWords, &t)
}

/// A SQL statement that inserts and is not idempotent when resent (not `ON CONFLICT DO
/// NOTHING`, `INSERT IGNORE`, `ON DUPLICATE KEY`, `INSERT OR IGNORE/REPLACE`). SQL's own
/// words, not vocabulary.
pub(super) fn is_insert_sql(e: &Expr) -> bool {
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
pub(super) fn chain_inserts(e: &Expr) -> bool {
    let _guard = crate::analysis::limits::enter();
    match e {
        Expr::MethodCall(m) => chain_inserts(&m.receiver),
        Expr::Call(c) => {
            names::callee_path(&c.func)
                .and_then(names::last)
                .is_some_and(|n| known::builtin().word(List::SqlQueryFns, &n))
                && c.args.first().is_some_and(is_insert_sql)
        }
        Expr::Paren(p) => chain_inserts(&p.expr),
        _ => false,
    }
}

impl<'a> Visit<'a> for AttemptVisitor<'a, '_> {
    fn visit_expr(&mut self, e: &'a Expr) {
        let _guard = crate::analysis::limits::enter();
        match e {
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                let v = known::builtin();
                // Not an HTTP method (`post`, `patch`): a POST may create, act on the resource
                // it addresses, carry its own id or only ask a question (a search, a token, a
                // JSON-RPC read), and its call does not say which; a PATCH sets the fields it
                // names. A write is non-idempotent only with positive evidence (evidence.md
                // #2): a publish, an `INSERT`, a message sent to a queue.
                let write = if v.word(List::SendingMethods, &name) {
                    true
                } else if v.word(List::PublishMethods, &name) {
                    // `bus.publish(event)` on a type this file does not show to be a queue
                    // client is left alone.
                    is_queue_receiver(&m.receiver) || self.messaging_receiver(&m.receiver)
                } else if v.word(List::StatementMethods, &name) {
                    m.args.first().is_some_and(is_insert_sql) || chain_inserts(&m.receiver)
                } else if v.word(List::QueueSendMethods, &name) {
                    is_queue_receiver(&m.receiver) && !m.args.is_empty()
                } else {
                    false
                };
                if write {
                    self.writes.push(self.index.of(&m.method));
                }
                // `self.store.fetch(..)`: a method of the field's type (worked out once the
                // enclosing type is known).
                if let Expr::Field(f) = &*m.receiver {
                    if let (Expr::Path(p), syn::Member::Named(field)) = (&*f.base, &f.member) {
                        if p.path.is_ident("self") {
                            self.calls.push(crate::analysis::Call {
                                name: name.clone(),
                                via: crate::analysis::Via::Field(field.to_string()),
                                span: self.index.of(e),
                            });
                        }
                    }
                }
                // `connector.connect(..)` on a parameter `connector: &mut Connector`: a method
                // of that type.
                if let Some(ty) = self.param_type_of(&m.receiver) {
                    // `state.send_request(buf)` whose body posts: the write is made here.
                    let via = crate::analysis::Via::Type(ty.clone());
                    if self.local_write(&name, &via) {
                        self.writes.push(self.index.of(e));
                    }
                    self.calls.push(crate::analysis::Call {
                        name: name.clone(),
                        via: crate::analysis::Via::Type(ty),
                        span: self.index.of(e),
                    });
                }
                if matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self")) {
                    if self.local_write(&name, &crate::analysis::Via::Method) {
                        self.writes.push(self.index.of(e));
                    }
                    self.calls.push(crate::analysis::Call {
                        name,
                        via: crate::analysis::Via::Method,
                        span: self.index.of(e),
                    });
                }
            }
            Expr::Call(c) => {
                if let Some(p) = names::callee_path(&c.func) {
                    let full = self.scope.resolve(p);
                    let segs = names::segments(p);
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
                            if segs.len() == 1
                                && self.local_write(last, &crate::analysis::Via::Free)
                            {
                                self.writes.push(self.index.of(e));
                            }
                            self.calls.push(crate::analysis::Call {
                                name: last.clone(),
                                via: crate::analysis::Via::of_path(&full, None),
                                span: self.index.of(e),
                            });
                        }
                    }
                }
            }
            _ => {}
        }
        syn::visit::visit_expr(self, e);
    }

    fn visit_item(&mut self, _: &'a syn::Item) {}
}

/// The statements of a body (nested blocks included, not closures or items) run for their
/// effect alone: a call whose value is dropped (`self.stop().await;`, `let _ = tx.send(m);`),
/// not an assignment or a `let` that keeps what it gives.
pub(super) fn effect_statements(body: &syn::Block, index: &LineIndex<'_>) -> Vec<Span> {
    struct Effects<'i, 'a> {
        index: &'i LineIndex<'a>,
        found: Vec<Span>,
    }
    fn is_call(e: &Expr) -> bool {
        let _guard = crate::analysis::limits::enter();
        match e {
            Expr::Await(a) => is_call(&a.base),
            Expr::Try(t) => is_call(&t.expr),
            Expr::Call(_) | Expr::MethodCall(_) => true,
            _ => false,
        }
    }
    impl<'v> Visit<'v> for Effects<'_, '_> {
        fn visit_stmt(&mut self, st: &'v syn::Stmt) {
            let _guard = crate::analysis::limits::enter();
            match st {
                syn::Stmt::Expr(e, Some(_)) if is_call(e) => self.found.push(self.index.of(st)),
                syn::Stmt::Local(l)
                    if matches!(l.pat, syn::Pat::Wild(_))
                        && l.init.as_ref().is_some_and(|i| is_call(&i.expr)) =>
                {
                    self.found.push(self.index.of(st));
                }
                _ => {}
            }
            syn::visit::visit_stmt(self, st);
        }
        fn visit_expr_closure(&mut self, _: &'v syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    let mut v = Effects {
        index,
        found: Vec::new(),
    };
    v.visit_block(body);
    v.found
}

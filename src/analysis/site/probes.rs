//! Operations that only ask whether something answers: a function of the file whose success
//! carries nothing (it returns `bool`, `()`, or a `Result`/`Option` of `()` or `bool`) and whose
//! body makes a probe (a `ping`, a health check, a connection it drops) or a safe request (an
//! HTTP `GET`) and keeps nothing of the answer. Calling it until it succeeds waits for the other
//! side to come up; no request is repeated (evidence.md #3, read through the workspace's own
//! code: a helper is what its body does, not what its name says).

use std::collections::HashSet;

use syn::visit::Visit;
use syn::{Block, Expr, Stmt};

use super::errors::Receivers;
use crate::analysis::names;
use crate::analysis::scope::LocalFn;
use crate::analysis::values::Locals;
use crate::analysis::Via;

/// How deep a probe may sit behind helpers that call helpers.
const MAX_DEPTH: usize = 1;

/// Whether a call asks whether something is up by what its chain names: a probe's name
/// (`probe-words`), a connection counting only when a constructor makes it in the same
/// expression (a value nothing keeps once the answer is dropped).
pub(super) fn names_a_probe(e: &Expr) -> bool {
    let _guard = crate::analysis::limits::enter();
    match e {
        Expr::Await(a) => names_a_probe(&a.base),
        Expr::Paren(p) => names_a_probe(&p.expr),
        Expr::MethodCall(m) => {
            let n = m.method.to_string();
            (names::is_probe_operation(&n)
                && (!names::is_connect_operation(&n) || temporary(&m.receiver)))
                || names_a_probe(&m.receiver)
        }
        Expr::Call(c) => names::callee_path(&c.func)
            .and_then(names::last)
            .is_some_and(|n| names::is_probe_operation(&n)),
        _ => false,
    }
}

/// Whether a method call's receiver is a value made in the same expression (its chain starts
/// at a call: `Endpoint::try_from(url)?.connect_timeout(d)`), which nothing keeps once the
/// statement ends; not a variable, a parameter or a field.
fn temporary(e: &Expr) -> bool {
    let _guard = crate::analysis::limits::enter();
    match e {
        Expr::Call(_) => true,
        Expr::MethodCall(m) => temporary(&m.receiver),
        Expr::Try(t) => temporary(&t.expr),
        Expr::Await(a) => temporary(&a.base),
        Expr::Paren(p) => temporary(&p.expr),
        _ => false,
    }
}

/// Whether `call` calls a function of this file that only asks whether something answers (see
/// the module's documentation): `self.upcheck()` where `async fn upcheck(&self) -> Result<(),
/// ()>` sends a `GET` and maps its answer to `()`.
pub(super) fn calls_status_probe(call: &Expr, receivers: &Receivers<'_, '_>) -> bool {
    // What the helper's body is found to be decides no fact of a finding: its lookups are no
    // evidence.
    receivers
        .scope
        .probe(|| status_probe_call(call, receivers, 0))
}

fn status_probe_call(call: &Expr, receivers: &Receivers<'_, '_>, depth: usize) -> bool {
    let _guard = crate::analysis::limits::enter();
    if depth >= MAX_DEPTH {
        return false;
    }
    let scope = receivers.scope;
    let callee = match call {
        Expr::Await(a) => return status_probe_call(&a.base, receivers, depth),
        Expr::Paren(p) => return status_probe_call(&p.expr, receivers, depth),
        Expr::Try(t) => return status_probe_call(&t.expr, receivers, depth),
        // A method of the value the function is a method of.
        Expr::MethodCall(m) if matches!(&*m.receiver, Expr::Path(p) if p.path.is_ident("self")) => {
            scope.own_function_via(&m.method.to_string(), &Via::Method)
        }
        Expr::Call(c) => match &*c.func {
            Expr::Path(p) => names::last(&p.path)
                .and_then(|name| scope.own_function_via(&name, &scope.via_of(&p.path))),
            _ => None,
        },
        _ => None,
    };
    callee.is_some_and(|f| asks_only_whether_up(&f, receivers, depth))
}

/// Whether a signature's success carries nothing: no value, `bool`, or a `Result`/`Option`
/// whose value is `()` or `bool` (`io::Result<()>`, `Result<bool, Error>`).
fn success_carries_nothing(out: &syn::ReturnType) -> bool {
    fn nothing(ty: &syn::Type) -> bool {
        let _guard = crate::analysis::limits::enter();
        match ty {
            syn::Type::Tuple(t) => t.elems.is_empty(),
            syn::Type::Path(p) => p.qself.is_none() && p.path.is_ident("bool"),
            syn::Type::Paren(p) => nothing(&p.elem),
            _ => false,
        }
    }
    match out {
        syn::ReturnType::Default => true,
        syn::ReturnType::Type(_, ty) => {
            if nothing(ty) {
                return true;
            }
            let syn::Type::Path(p) = &**ty else {
                return false;
            };
            let Some(last) = p.path.segments.last() else {
                return false;
            };
            if !matches!(last.ident.to_string().as_str(), "Result" | "Option") {
                return false;
            }
            let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
                return false;
            };
            args.args.iter().find_map(|a| match a {
                syn::GenericArgument::Type(t) => Some(nothing(t)),
                _ => None,
            }) == Some(true)
        }
    }
}

/// Whether `f` only asks whether something answers: its success carries nothing, its body makes
/// at least one probe or safe request, no request that changes something, and nothing of any
/// answer reaches another call, a place or a value it builds (only its status is read, or
/// whether it succeeded).
fn asks_only_whether_up(f: &LocalFn<'_>, outer: &Receivers<'_, '_>, depth: usize) -> bool {
    if !success_carries_nothing(&f.sig.output) {
        return false;
    }
    let locals = Locals::of_fn(f);
    let receivers = Receivers {
        locals: &locals,
        scope: outer.scope,
        fields: f
            .owner
            .and_then(|o| outer.scope.field_paths.get(&o.to_string())),
    };
    let mut w = Flow {
        receivers: &receivers,
        depth,
        answers: HashSet::new(),
        probed: false,
        escaped: false,
        changes: false,
        other_failure: false,
        returns: Ctx::Dropped,
    };
    w.block(f.block, Ctx::Dropped);
    w.probed && !w.escaped && !w.changes && !w.other_failure
}

/// Where a value goes: dropped (a statement's, a test's subject, the helper's own value, which
/// carries nothing), or kept (an argument, an assigned value, a field of a value built).
#[derive(Clone, Copy, PartialEq)]
enum Ctx {
    Dropped,
    Kept,
}

/// Follows the answers of a helper's probes through its body.
struct Flow<'r, 's, 'a> {
    receivers: &'r Receivers<'s, 'a>,
    depth: usize,
    /// Names bound to an answer, or to a value made of one.
    answers: HashSet<String>,
    probed: bool,
    escaped: bool,
    /// A request that changes something (a known request call that is not a safe one).
    changes: bool,
    /// A `?` on something other than a probe or its answer: the function fails when another
    /// operation does.
    other_failure: bool,
    /// Where a `return`'s value goes: nowhere for a function whose success carries nothing,
    /// to the runner's caller for a closure handed to one.
    returns: Ctx,
}

impl Flow<'_, '_, '_> {
    /// Whether a call is a probe or a safe request, or calls a helper that only probes; not a
    /// method of an answer (`page.status()`, where `page` is bound to a `GET`'s answer).
    fn is_probe(&self, e: &Expr) -> bool {
        !self.of_answer(e)
            && (names_a_probe(e)
                || self.receivers.safe_request(e)
                || status_probe_call(e, self.receivers, self.depth + 1))
    }

    /// Whether a chain of calls starts at a name bound to an answer.
    fn of_answer(&self, e: &Expr) -> bool {
        let _guard = crate::analysis::limits::enter();
        match e {
            Expr::MethodCall(m) => self.of_answer(&m.receiver),
            Expr::Await(a) => self.of_answer(&a.base),
            Expr::Try(t) => self.of_answer(&t.expr),
            Expr::Paren(p) => self.of_answer(&p.expr),
            Expr::Field(f) => self.of_answer(&f.base),
            Expr::Path(p) => p
                .path
                .get_ident()
                .is_some_and(|i| self.answers.contains(&i.to_string())),
            _ => false,
        }
    }

    /// Whether an expression holds a probe's answer: it makes a probe, or names an answer.
    fn tainted(&self, e: &Expr) -> bool {
        struct Find<'x, 'r, 's, 'a> {
            w: &'x Flow<'r, 's, 'a>,
            found: bool,
        }
        impl<'ast> Visit<'ast> for Find<'_, '_, '_, '_> {
            fn visit_expr(&mut self, e: &'ast Expr) {
                let _guard = crate::analysis::limits::enter();
                if self.found {
                    return;
                }
                match e {
                    Expr::Path(p) => {
                        if p.path
                            .get_ident()
                            .is_some_and(|i| self.w.answers.contains(&i.to_string()))
                        {
                            self.found = true;
                        }
                    }
                    Expr::MethodCall(_) | Expr::Call(_) if self.w.is_probe(e) => {
                        self.found = true;
                    }
                    Expr::Macro(m) if names::last(&m.mac.path).as_deref() == Some("matches") => {
                        if let Some((subject, _)) = crate::analysis::status::parse_matches(&m.mac) {
                            let mut inner = Find {
                                w: self.w,
                                found: false,
                            };
                            inner.visit_expr(&subject);
                            self.found |= inner.found;
                        }
                    }
                    _ => syn::visit::visit_expr(self, e),
                }
            }
            fn visit_item(&mut self, _: &'ast syn::Item) {}
        }
        let mut f = Find {
            w: self,
            found: false,
        };
        f.visit_expr(e);
        f.found
    }

    /// Notes the names a pattern binds to an answer (not those inside an `Err(..)`: the
    /// failure is not the answer).
    fn bind(&mut self, p: &syn::Pat) {
        let _guard = crate::analysis::limits::enter();
        match p {
            syn::Pat::TupleStruct(t) if t.path.is_ident("Err") => {}
            syn::Pat::TupleStruct(t) => t.elems.iter().for_each(|q| self.bind(q)),
            syn::Pat::Ident(i) => {
                self.answers.insert(i.ident.to_string());
                if let Some((_, sub)) = &i.subpat {
                    self.bind(sub);
                }
            }
            syn::Pat::Tuple(t) => t.elems.iter().for_each(|q| self.bind(q)),
            syn::Pat::Struct(s) => s.fields.iter().for_each(|f| self.bind(&f.pat)),
            syn::Pat::Reference(r) => self.bind(&r.pat),
            syn::Pat::Or(o) => o.cases.iter().for_each(|q| self.bind(q)),
            syn::Pat::Type(t) => self.bind(&t.pat),
            syn::Pat::Slice(s) => s.elems.iter().for_each(|q| self.bind(q)),
            _ => {}
        }
    }

    fn block(&mut self, b: &Block, ctx: Ctx) {
        let _guard = crate::analysis::limits::enter();
        for s in &b.stmts {
            match s {
                Stmt::Local(l) => {
                    if let Some(init) = &l.init {
                        self.expr(&init.expr, Ctx::Dropped);
                        if let Some((_, other)) = &init.diverge {
                            self.expr(other, Ctx::Dropped);
                        }
                        if self.tainted(&init.expr) {
                            self.bind(&l.pat);
                        }
                    }
                }
                Stmt::Expr(e, None) => self.expr(e, ctx),
                Stmt::Expr(e, Some(_)) => self.expr(e, Ctx::Dropped),
                Stmt::Item(_) | Stmt::Macro(_) => {}
            }
        }
    }

    /// Notes a call: a probe (its answer kept when the call's value is), or a request that
    /// changes something. Whether it is a probe.
    fn call(&mut self, e: &Expr, ctx: Ctx) -> bool {
        let probe = self.is_probe(e);
        self.probed |= probe;
        if probe && ctx == Ctx::Kept {
            self.escaped = true;
        }
        if !probe && self.receivers.transport_only(e) && !self.receivers.safe_request(e) {
            self.changes = true;
        }
        probe
    }

    fn expr(&mut self, e: &Expr, ctx: Ctx) {
        let _guard = crate::analysis::limits::enter();
        // Once the function is known to do more than probe, the rest of it changes nothing.
        if self.escaped || self.changes || self.other_failure {
            return;
        }
        match e {
            Expr::MethodCall(m) => {
                let method = m.method.to_string();
                let probe = self.call(e, ctx);
                // Asking of an answer whether it succeeded, or its status, keeps nothing else
                // (`.ok()` keeps the answer itself; `.err()` only the failure).
                let reads_status = m.args.is_empty()
                    && (matches!(
                        method.as_str(),
                        "is_ok" | "is_err" | "is_some" | "is_none" | "err"
                    ) || names::is_status_text(&method)
                        || self.receivers.scope.is_status_accessor(&method));
                let tainted = self.tainted(&m.receiver);
                self.expr(
                    &m.receiver,
                    if reads_status || probe {
                        Ctx::Dropped
                    } else {
                        ctx
                    },
                );
                for a in &m.args {
                    match a {
                        // `.map(|_| ())`, `.map(|r| r.status())`: the closure is given the
                        // answer and its value goes where the chain's goes.
                        Expr::Closure(c) if tainted => {
                            for p in &c.inputs {
                                self.bind(p);
                            }
                            self.expr(&c.body, ctx);
                        }
                        // `answer.read(&mut buf)`: the answer is written into the buffer.
                        Expr::Reference(r) if tainted && r.mutability.is_some() => {
                            if let Expr::Path(p) = &*r.expr {
                                if let Some(i) = p.path.get_ident() {
                                    self.answers.insert(i.to_string());
                                }
                            }
                            self.expr(a, Ctx::Kept);
                        }
                        _ => self.expr(a, Ctx::Kept),
                    }
                }
            }
            Expr::Call(c) => {
                self.call(e, ctx);
                // `Ok(..)`, `Err(..)`, `Some(..)` make the helper's own value, which carries
                // nothing.
                let wraps = matches!(&*c.func, Expr::Path(p)
                    if ["Ok", "Err", "Some"].iter().any(|w| p.path.is_ident(w)));
                // `(|| { .. })()`: the closure runs here, its value the call's.
                self.expr(&c.func, ctx);
                for a in &c.args {
                    self.expr(a, if wraps { ctx } else { Ctx::Kept });
                }
            }
            Expr::Path(p) => {
                if ctx == Ctx::Kept
                    && p.path
                        .get_ident()
                        .is_some_and(|i| self.answers.contains(&i.to_string()))
                {
                    self.escaped = true;
                }
            }
            Expr::Assign(a) => {
                self.expr(&a.left, Ctx::Dropped);
                self.expr(&a.right, Ctx::Kept);
            }
            Expr::Struct(s) => {
                for f in &s.fields {
                    self.expr(&f.expr, Ctx::Kept);
                }
                if let Some(rest) = &s.rest {
                    self.expr(rest, Ctx::Kept);
                }
            }
            Expr::Array(a) => a.elems.iter().for_each(|x| self.expr(x, Ctx::Kept)),
            Expr::Tuple(t) => t.elems.iter().for_each(|x| self.expr(x, Ctx::Kept)),
            Expr::Let(l) => {
                self.expr(&l.expr, Ctx::Dropped);
                if self.tainted(&l.expr) {
                    self.bind(&l.pat);
                }
            }
            Expr::Match(m) => {
                self.expr(&m.expr, Ctx::Dropped);
                let tainted = self.tainted(&m.expr);
                for arm in &m.arms {
                    if tainted {
                        self.bind(&arm.pat);
                    }
                    if let Some((_, guard)) = &arm.guard {
                        self.expr(guard, Ctx::Dropped);
                    }
                    self.expr(&arm.body, ctx);
                }
            }
            Expr::If(i) => {
                self.expr(&i.cond, Ctx::Dropped);
                self.block(&i.then_branch, ctx);
                if let Some((_, other)) = &i.else_branch {
                    self.expr(other, ctx);
                }
            }
            Expr::Block(b) => self.block(&b.block, ctx),
            Expr::Unsafe(u) => self.block(&u.block, ctx),
            Expr::Async(a) => self.block(&a.block, ctx),
            Expr::Loop(l) => self.block(&l.body, Ctx::Dropped),
            Expr::While(w) => {
                self.expr(&w.cond, Ctx::Dropped);
                self.block(&w.body, Ctx::Dropped);
            }
            Expr::ForLoop(f) => {
                self.expr(&f.expr, Ctx::Kept);
                self.block(&f.body, Ctx::Dropped);
            }
            Expr::Closure(c) => self.expr(&c.body, ctx),
            Expr::Await(a) => self.expr(&a.base, ctx),
            Expr::Try(t) => {
                // A failure of anything but the probe ends the function too: it does more than
                // ask whether something answers.
                if !self.tainted(&t.expr) {
                    self.other_failure = true;
                }
                self.expr(&t.expr, ctx);
            }
            Expr::Paren(p) => self.expr(&p.expr, ctx),
            Expr::Group(g) => self.expr(&g.expr, ctx),
            Expr::Reference(r) => self.expr(&r.expr, ctx),
            Expr::Unary(u) => self.expr(&u.expr, ctx),
            Expr::Cast(c) => self.expr(&c.expr, ctx),
            Expr::Field(f) => self.expr(&f.base, ctx),
            Expr::Index(i) => {
                self.expr(&i.expr, ctx);
                self.expr(&i.index, Ctx::Dropped);
            }
            Expr::Binary(b) => {
                // A comparison gives a `bool`; arithmetic gives a value made of its sides.
                let side = if matches!(
                    b.op,
                    syn::BinOp::Eq(_)
                        | syn::BinOp::Ne(_)
                        | syn::BinOp::Lt(_)
                        | syn::BinOp::Le(_)
                        | syn::BinOp::Gt(_)
                        | syn::BinOp::Ge(_)
                        | syn::BinOp::And(_)
                        | syn::BinOp::Or(_)
                ) {
                    Ctx::Dropped
                } else {
                    ctx
                };
                if matches!(
                    b.op,
                    syn::BinOp::AddAssign(_)
                        | syn::BinOp::SubAssign(_)
                        | syn::BinOp::MulAssign(_)
                        | syn::BinOp::BitOrAssign(_)
                ) {
                    self.expr(&b.left, Ctx::Dropped);
                    self.expr(&b.right, Ctx::Kept);
                } else {
                    self.expr(&b.left, side);
                    self.expr(&b.right, side);
                }
            }
            Expr::Return(r) => {
                if let Some(x) = &r.expr {
                    self.expr(x, self.returns);
                }
            }
            // `matches!(answer, Ok(r) if r.status() == 200)` tests the answer.
            Expr::Macro(m) if names::last(&m.mac.path).as_deref() == Some("matches") => {
                if let Some((subject, pat)) = crate::analysis::status::parse_matches(&m.mac) {
                    self.expr(&subject, Ctx::Dropped);
                    if self.tainted(&subject) {
                        self.bind(&pat);
                    }
                }
            }
            Expr::Break(b) => {
                if let Some(x) = &b.expr {
                    self.expr(x, Ctx::Kept);
                }
            }
            // A macro's arguments are logged or formatted: nothing is kept.
            Expr::Macro(_) | Expr::Lit(_) | Expr::Continue(_) | Expr::Range(_) => {}
            // Anything else that holds an answer keeps it, for all this can tell.
            other => {
                if self.tainted(other) {
                    self.escaped = true;
                }
            }
        }
    }
}

/// Whether the operation a retry crate's runner is given (a closure's body) hands back what a
/// helper that only asks whether something answers gives: `|| self.check_readiness(url)`,
/// `|| async { self.upcheck().await }`. Its value carries nothing, so the runner waits for the
/// other side to come up; it repeats no request.
pub(super) fn operation_only_probes(body: &Expr, receivers: &Receivers<'_, '_>) -> bool {
    hands_back_status_probe(body, receivers)
        || receivers.scope.probe(|| closure_probes(body, receivers))
}

/// Whether an operation's body, read as a whole, makes a probe or a safe request and hands
/// nothing of its answer back to the runner (or anywhere else): `|| async { let ok =
/// matches!(client.get(&url).send().await, Ok(r) if r.status() == 200); ensure!(ok, "not
/// yet"); Ok(()) }`.
fn closure_probes(body: &Expr, receivers: &Receivers<'_, '_>) -> bool {
    if !hands_back_nothing(body) {
        return false;
    }
    let mut w = Flow {
        receivers,
        depth: 0,
        answers: HashSet::new(),
        probed: false,
        escaped: false,
        changes: false,
        other_failure: false,
        returns: Ctx::Kept,
    };
    match body {
        Expr::Async(a) => w.block(&a.block, Ctx::Kept),
        Expr::Block(b) => w.block(&b.block, Ctx::Kept),
        other => w.expr(other, Ctx::Kept),
    }
    w.probed && !w.escaped && !w.changes && !w.other_failure
}

/// Whether every value an operation's body hands back carries nothing: `()`, `Ok(())`,
/// `Ok(true)`, an `Err(..)`, a macro that fails (`bail!(..)`), through blocks, `if` and `match`.
/// What an `Ok(..)` wraps must be seen to be `()` or a `bool`: a macro there (`json!(..)`) may
/// hold the answer.
fn hands_back_nothing(body: &Expr) -> bool {
    fn unit_or_bool(e: &Expr) -> bool {
        match e {
            Expr::Tuple(t) => t.elems.is_empty(),
            Expr::Lit(l) => matches!(l.lit, syn::Lit::Bool(_)),
            _ => false,
        }
    }
    fn nothing(e: &Expr) -> bool {
        let _guard = crate::analysis::limits::enter();
        match e {
            Expr::Tuple(t) => t.elems.is_empty(),
            Expr::Lit(l) => matches!(l.lit, syn::Lit::Bool(_)),
            Expr::Macro(_) => true,
            Expr::Call(c) => match &*c.func {
                Expr::Path(p) if p.path.is_ident("Err") => true,
                Expr::Path(p) if p.path.is_ident("Ok") || p.path.is_ident("Some") => {
                    c.args.len() == 1 && unit_or_bool(&c.args[0])
                }
                _ => false,
            },
            Expr::Block(b) => block_nothing(&b.block),
            Expr::If(i) => {
                block_nothing(&i.then_branch)
                    && i.else_branch.as_ref().is_some_and(|(_, x)| nothing(x))
            }
            Expr::Match(m) => m.arms.iter().all(|a| nothing(&a.body)),
            Expr::Paren(p) => nothing(&p.expr),
            _ => false,
        }
    }
    fn block_nothing(b: &Block) -> bool {
        crate::analysis::values::returned_exprs(b)
            .into_iter()
            .all(nothing)
    }
    match body {
        Expr::Async(a) => block_nothing(&a.block),
        Expr::Block(b) => block_nothing(&b.block),
        other => nothing(other),
    }
}

/// Whether an operation hands back what a function that only probes gives (see
/// [`calls_status_probe`]).
fn hands_back_status_probe(body: &Expr, receivers: &Receivers<'_, '_>) -> bool {
    let _guard = crate::analysis::limits::enter();
    match body {
        Expr::Async(a) => tail_only_probes(&a.block, receivers),
        Expr::Block(b) => tail_only_probes(&b.block, receivers),
        Expr::Paren(p) => hands_back_status_probe(&p.expr, receivers),
        Expr::Await(a) => hands_back_status_probe(&a.base, receivers),
        Expr::MethodCall(_) | Expr::Call(_) => calls_status_probe(body, receivers),
        _ => false,
    }
}

fn tail_only_probes(b: &Block, receivers: &Receivers<'_, '_>) -> bool {
    match b.stmts.last() {
        Some(Stmt::Expr(e, None)) => hands_back_status_probe(e, receivers),
        _ => false,
    }
}

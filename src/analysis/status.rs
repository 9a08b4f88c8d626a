//! Which HTTP statuses a condition or a match pattern admits, as a [`StatusSet`].

use syn::{BinOp, Expr, Lit, Pat};

use super::names;
use super::scope::{Facts, FileScope};
use super::values::{returned_exprs, value_leaves, Locals};
use super::StatusSet;

/// The statuses for which a condition is true and false (`None` side: not about statuses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sets {
    pub then: StatusSet,
    pub other: StatusSet,
}

impl Sets {
    /// Either of two verdicts: yes where either says yes, no where either says no.
    #[must_use]
    pub fn either(self, o: Sets) -> Sets {
        Sets {
            then: self.then.union(o.then),
            other: self.other.union(o.other),
        }
    }
}

/// Evaluates status tests with the file's consts and local functions in view.
pub struct StatusEval<'a, 'c> {
    pub file: &'c FileScope<'a>,
    pub locals: &'c Locals<'a>,
    /// Identifiers known to hold a status (parameters of a followed classifier function).
    pub status_idents: Vec<String>,
    pub depth: usize,
}

impl StatusEval<'_, '_> {
    /// Whether an expression holds an HTTP status (by how it reads, or what it was bound to).
    #[must_use]
    pub fn is_status_expr(&self, e: &Expr) -> bool {
        self.is_status_expr_in(e, 0)
    }

    fn is_status_expr_in(&self, e: &Expr, depth: usize) -> bool {
        let _guard = crate::analysis::limits::enter();
        let t = names::text(e);
        if names::is_status_text(&t) {
            return true;
        }
        if let Expr::Path(p) = e {
            if p.path.segments.len() == 1 {
                let id = p.path.segments[0].ident.to_string();
                if self.status_idents.contains(&id) || self.locals.statuses.contains(&id) {
                    return true;
                }
                if depth < 3 {
                    if let Some(inits) = self.locals.lets.get(&id) {
                        return inits.iter().any(|i| {
                            self.file
                                .follow(i, |i| Some(self.is_status_expr_in(i, depth + 1)))
                                == Some(true)
                        });
                    }
                }
            }
        }
        match e {
            Expr::MethodCall(m) => {
                self.file.is_status_accessor(&m.method.to_string())
                    || (matches!(m.method.to_string().as_str(), "as_u16" | "code")
                        && self.is_status_expr_in(&m.receiver, depth + 1))
            }
            Expr::Field(f) => {
                matches!(&f.member, syn::Member::Named(n) if self.file.is_status_accessor(&n.to_string()))
            }
            Expr::Reference(r) => self.is_status_expr_in(&r.expr, depth),
            Expr::Unary(u) => self.is_status_expr_in(&u.expr, depth),
            Expr::Paren(p) => self.is_status_expr_in(&p.expr, depth),
            _ => false,
        }
    }

    /// A single status code written as a value: `429`, `StatusCode::TOO_MANY_REQUESTS`,
    /// `StatusCode::from_u16(429).unwrap()`, `Some(StatusCode::OK)`, `StatusCode::OK.as_u16()`.
    #[must_use]
    pub fn code(&self, e: &Expr) -> Option<u16> {
        let _guard = crate::analysis::limits::enter();
        match e {
            Expr::Lit(l) => match &l.lit {
                Lit::Int(i) => status_literal(i),
                _ => None,
            },
            Expr::Path(p) => self
                .status_path_code(&p.path)
                .or_else(|| {
                    self.file.consult(Facts::ERRORS, || {
                        self.file.follow_constant(&p.path, |c| self.code(c))
                    })
                })
                .or_else(|| {
                    // `let overloaded = StatusCode::from_u16(529).expect(..);`
                    let id = p.path.get_ident()?.to_string();
                    match self.locals.lets.get(&id).map(Vec::as_slice) {
                        Some([one]) => self.file.follow(one, |v| self.code(v)),
                        _ => None,
                    }
                }),
            Expr::Call(c) => {
                let last = names::callee_path(&c.func).and_then(names::last)?;
                match last.as_str() {
                    "Some" | "from_u16" | "from" => c.args.first().and_then(|a| self.code(a)),
                    _ => None,
                }
            }
            Expr::MethodCall(m)
                if matches!(
                    m.method.to_string().as_str(),
                    "as_u16" | "unwrap" | "expect" | "into" | "as_str"
                ) =>
            {
                self.code(&m.receiver)
            }
            Expr::Paren(p) => self.code(&p.expr),
            Expr::Reference(r) => self.code(&r.expr),
            Expr::Cast(c) => self.code(&c.expr),
            _ => None,
        }
    }

    /// `StatusCode::TOO_MANY_REQUESTS`, `http::StatusCode::OK`, or a bare `TOO_MANY_REQUESTS`
    /// imported from `StatusCode`: the code. A bare `LOCKED` or `OK` that is not imported from
    /// `StatusCode` is someone else's constant.
    #[must_use]
    pub fn status_path_code(&self, path: &syn::Path) -> Option<u16> {
        let full = self.file.resolve(path);
        let n = full.len();
        if n >= 2 && full[n - 2] == "StatusCode" {
            names::status_const(&full[n - 1])
        } else {
            None
        }
    }

    /// Whether an expression is written with a `StatusCode` constant.
    fn names_status_code(&self, e: &Expr) -> bool {
        let _guard = crate::analysis::limits::enter();
        match e {
            Expr::Path(p) => self.status_path_code(&p.path).is_some(),
            Expr::Call(c) => {
                c.args.first().is_some_and(|a| self.names_status_code(a))
                    || names::text(&c.func).contains("StatusCode")
            }
            Expr::MethodCall(m) => self.names_status_code(&m.receiver),
            Expr::Paren(p) => self.names_status_code(&p.expr),
            Expr::Reference(r) => self.names_status_code(&r.expr),
            _ => false,
        }
    }

    /// The statuses a pattern matches, when it names statuses; `None` for catch-alls and for
    /// patterns about something else.
    #[must_use]
    pub fn pattern(&self, pat: &Pat) -> Option<StatusSet> {
        let _guard = crate::analysis::limits::enter();
        match pat {
            Pat::Lit(l) => match &l.lit {
                Lit::Int(i) => status_literal(i).map(StatusSet::single),
                _ => None,
            },
            Pat::Range(r) => {
                let lo = r.start.as_deref().and_then(|e| self.code(e)).unwrap_or(100);
                let hi = match (&r.end, &r.limits) {
                    (Some(e), syn::RangeLimits::Closed(_)) => self.code(e)?,
                    (Some(e), syn::RangeLimits::HalfOpen(_)) => {
                        // 500..600: 600 is not a status, so read the literal directly.
                        let v = match &**e {
                            Expr::Lit(syn::ExprLit {
                                lit: Lit::Int(i), ..
                            }) => i.base10_parse::<u16>().ok()?,
                            other => self.code(other)?,
                        };
                        v.checked_sub(1)?
                    }
                    (None, _) => 599,
                };
                Some(StatusSet::range(lo, hi))
            }
            Pat::Path(p) => self
                .status_path_code(&p.path)
                .or_else(|| {
                    self.file.consult(Facts::ERRORS, || {
                        self.file.follow_constant(&p.path, |c| self.code(c))
                    })
                })
                .map(StatusSet::single),
            Pat::Or(o) => {
                let mut s = StatusSet::empty();
                for case in &o.cases {
                    s = s.union(self.pattern(case)?);
                }
                Some(s)
            }
            Pat::TupleStruct(t) => {
                // Some(StatusCode::TOO_MANY_REQUESTS), ureq::Error::Status(429, _)
                let last = names::last(&t.path)?;
                if (last == "Some" && t.elems.len() == 1) || last.contains("Status") {
                    self.pattern(t.elems.first()?)
                } else {
                    None
                }
            }
            Pat::Ident(i) => i.subpat.as_ref().and_then(|(_, p)| self.pattern(p)),
            Pat::Paren(p) => self.pattern(&p.pat),
            Pat::Reference(r) => self.pattern(&r.pat),
            _ => None,
        }
    }

    /// The statuses for which `cond` holds and fails, when it tests a status.
    #[must_use]
    pub fn cond(&self, cond: &Expr) -> Option<Sets> {
        let _guard = crate::analysis::limits::enter();
        let atom = |s: StatusSet| {
            Some(Sets {
                then: s,
                other: s.complement(),
            })
        };
        match cond {
            Expr::Paren(p) => self.cond(&p.expr),
            Expr::Group(g) => self.cond(&g.expr),
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => {
                self.cond(&u.expr).map(|s| Sets {
                    then: s.other,
                    other: s.then,
                })
            }
            Expr::Binary(b) => match b.op {
                // `a && b` goes the `then` way where both do; `a || b` where either does.
                BinOp::And(_) | BinOp::Or(_) => {
                    let (l, r) = (self.cond(&b.left), self.cond(&b.right));
                    if l.is_none() && r.is_none() {
                        return None;
                    }
                    let all = StatusSet::all();
                    let lt = l.map_or(all, |s| s.then);
                    let rt = r.map_or(all, |s| s.then);
                    let lo = l.map_or(all, |s| s.other);
                    let ro = r.map_or(all, |s| s.other);
                    Some(if matches!(b.op, BinOp::And(_)) {
                        Sets {
                            then: lt.intersect(rt),
                            other: lo.union(ro),
                        }
                    } else {
                        Sets {
                            then: lt.union(rt),
                            other: lo.intersect(ro),
                        }
                    })
                }
                BinOp::Eq(_)
                | BinOp::Ne(_)
                | BinOp::Lt(_)
                | BinOp::Le(_)
                | BinOp::Gt(_)
                | BinOp::Ge(_) => self.comparison(b).and_then(atom),
                _ => None,
            },
            Expr::MethodCall(m) => self.method_cond(m),
            Expr::Macro(m) if names::last(&m.mac.path).as_deref() == Some("matches") => {
                let (scrutinee, pat) = parse_matches(&m.mac)?;
                if !self.is_status_expr(&scrutinee) {
                    return None;
                }
                self.pattern(&pat).and_then(atom)
            }
            Expr::Let(l) => {
                if self.is_status_expr(&l.expr) {
                    self.pattern(&l.pat).and_then(atom)
                } else {
                    None
                }
            }
            Expr::Call(c) => self.classifier_call(&c.func, c.args.iter()),
            // `let throttled = matches!(resp.status(), ..); if throttled { .. }`
            Expr::Path(p) if p.path.segments.len() == 1 && self.depth == 0 => {
                let id = p.path.segments[0].ident.to_string();
                match self.locals.lets.get(&id).map(Vec::as_slice) {
                    Some([init]) => {
                        let inner = StatusEval {
                            file: self.file,
                            locals: self.locals,
                            status_idents: self.status_idents.clone(),
                            depth: 1,
                        };
                        inner.cond(init)
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The statuses for which a verdict set from `call` says "go again": a classifier called
    /// directly (`need_retry = should_retry(&resp)`), or a function of this file that returns
    /// the verdict with the reply (`(need_retry, reply) = self.send(..)`, each of its returns a
    /// tuple holding `need_retry(Ok(res.status()))`).
    #[must_use]
    pub fn verdict_of_call(&self, call: &Expr) -> Option<Sets> {
        let _guard = crate::analysis::limits::enter();
        if self.depth > 0 {
            return None;
        }
        let mut e = call;
        while let Expr::Await(a) = e {
            e = &a.base;
        }
        if let Some(sets) = self.cond(e) {
            return Some(sets);
        }
        // The classifier called decides which errors go round again.
        self.file
            .consult(Facts::ERRORS, || self.verdict_of_callee(e))
    }

    /// [`StatusEval::verdict_of_call`] of a call of a function of the crate: its body's verdict.
    fn verdict_of_callee(&self, e: &Expr) -> Option<Sets> {
        let _guard = crate::analysis::limits::enter();
        let f = match e {
            Expr::MethodCall(m) => self
                .file
                .function_via(&m.method.to_string(), Some(&super::Via::Method))?,
            Expr::Call(c) => {
                let path = names::callee_path(&c.func)?;
                self.file
                    .function_via(&names::last(path)?, Some(&self.file.via_of(path)))?
            }
            _ => return None,
        };
        let locals = Locals::of_fn(&f);
        let inner = StatusEval {
            file: self.file,
            locals: &locals,
            status_idents: Vec::new(),
            depth: 0,
        };
        let mut set: Option<Sets> = None;
        let mut leaves = Vec::new();
        for r in returned_exprs(f.block) {
            value_leaves(r, &mut leaves);
        }
        for r in leaves {
            let Expr::Tuple(t) = r else { return None };
            let found = t
                .elems
                .iter()
                .filter(|el| matches!(el, Expr::Call(_) | Expr::MethodCall(_)))
                .find_map(|el| inner.cond(el))?;
            set = Some(set.map_or(found, |acc| acc.either(found)));
        }
        set
    }

    fn method_cond(&self, m: &syn::ExprMethodCall) -> Option<Sets> {
        let _guard = crate::analysis::limits::enter();
        let name = m.method.to_string();
        let set = match name.as_str() {
            "is_success" => Some(StatusSet::range(200, 299)),
            "is_client_error" => Some(StatusSet::range(400, 499)),
            "is_server_error" => Some(StatusSet::range(500, 599)),
            "is_redirection" => Some(StatusSet::range(300, 399)),
            "is_informational" => Some(StatusSet::range(100, 199)),
            "contains" => {
                let arg = m.args.first()?;
                if !self.is_status_expr(arg) && !Self::is_status_collection(&m.receiver) {
                    return None;
                }
                self.collection(&m.receiver)
            }
            "map_or" | "is_some_and" | "map_or_else" => {
                // e.status().map_or(false, |s| s.is_server_error())
                let closure = m.args.iter().find_map(|a| match a {
                    Expr::Closure(c) => Some(c),
                    _ => None,
                })?;
                if !self.is_status_expr(&m.receiver) {
                    return None;
                }
                let inner = StatusEval {
                    file: self.file,
                    locals: self.locals,
                    status_idents: closure_params(closure),
                    depth: self.depth,
                };
                inner.cond(&closure.body).map(|s| s.then)
            }
            _ => return self.classifier_call_method(m),
        }?;
        Some(Sets {
            then: set,
            other: set.complement(),
        })
    }

    fn classifier_call_method(&self, m: &syn::ExprMethodCall) -> Option<Sets> {
        let _guard = crate::analysis::limits::enter();
        let name = m.method.to_string();
        self.follow(&name, &super::Via::Method, m.args.iter())
    }

    fn classifier_call<'e, I: Iterator<Item = &'e Expr>>(
        &self,
        func: &Expr,
        args: I,
    ) -> Option<Sets> {
        let _guard = crate::analysis::limits::enter();
        let path = names::callee_path(func)?;
        let name = names::last(path)?;
        self.follow(&name, &self.file.via_of(path), args)
    }

    /// `is_retryable(status)`: follows a local predicate one level, its parameter standing for
    /// the status. A return we cannot read (a helper of the helper) adds no status: the
    /// classifier then says yes to at least the statuses of the returns that test one, and
    /// which statuses it says no to is unknown (none is claimed).
    fn follow<'e, I: Iterator<Item = &'e Expr>>(
        &self,
        name: &str,
        via: &super::Via,
        args: I,
    ) -> Option<Sets> {
        let _guard = crate::analysis::limits::enter();
        if self.depth > 0 {
            return None;
        }
        let args: Vec<&Expr> = args.collect();
        self.file
            .consult(Facts::ERRORS, || self.followed_verdict(name, via, &args))
    }

    /// [`StatusEval::follow`] once the arguments are collected.
    fn followed_verdict(&self, name: &str, via: &super::Via, args: &[&Expr]) -> Option<Sets> {
        let _guard = crate::analysis::limits::enter();
        let f = self.file.function_via(name, Some(via))?;
        // The parameters that hold a status: typed `StatusCode`, or given a status argument. A
        // predicate over the whole response (`should_retry(&resp)`) counts through its body
        // asking the response for its `status()`.
        let typed = f.typed_params();
        let mut params = Vec::new();
        for (i, t) in typed.iter().enumerate() {
            let ty = names::text(&*t.ty);
            let by_type = ty.contains("StatusCode");
            let by_arg = args.get(i).is_some_and(|a| self.is_status_expr(a));
            if by_type || by_arg {
                super::values::pat_bindings(&t.pat, &mut params);
            }
        }
        let locals = Locals::of_fn(&f);
        let inner = StatusEval {
            file: self.file,
            locals: &locals,
            status_idents: params,
            depth: self.depth + 1,
        };
        // A predicate that never looks at a status is not a status classifier.
        if !f
            .block
            .stmts
            .iter()
            .any(|st| names::is_status_text(&names::text(st)))
            && inner.status_idents.is_empty()
        {
            return None;
        }
        let mut set: Option<StatusSet> = None;
        let mut exact = true;
        for e in returned_exprs(f.block) {
            match inner.bool_valued(e) {
                Some(s) => set = Some(set.map_or(s, |acc| acc.union(s))),
                None => exact = false,
            }
        }
        set.map(|then| Sets {
            then,
            other: if exact {
                then.complement()
            } else {
                StatusSet::empty()
            },
        })
    }

    /// The statuses for which a bool-valued expression is `true`: a condition, or a `match` whose
    /// arms are `true`/`false`.
    fn bool_valued(&self, e: &Expr) -> Option<StatusSet> {
        let _guard = crate::analysis::limits::enter();
        match e {
            Expr::Lit(syn::ExprLit {
                lit: Lit::Bool(b), ..
            }) => Some(if b.value {
                StatusSet::all()
            } else {
                StatusSet::empty()
            }),
            Expr::Match(m) if self.is_status_expr(&m.expr) => {
                let mut remaining = StatusSet::all();
                let mut yes = StatusSet::empty();
                for arm in &m.arms {
                    // `match res { Ok(status) => .., Err(e) => .. }` over a status or an error:
                    // the `Err` arm is about errors, which hold no status.
                    if super::flow::pat_outcome(&arm.pat) == Some(super::flow::Outcome::Failure) {
                        continue;
                    }
                    let pat = self
                        .pattern(&arm.pat)
                        .unwrap_or(remaining)
                        .intersect(remaining);
                    let pat = match &arm.guard {
                        Some((_, g)) => pat.intersect(self.cond(g)?.then),
                        None => pat,
                    };
                    if arm.guard.is_none() {
                        remaining = remaining.intersect(pat.complement());
                    }
                    let v = self.bool_valued(&arm.body)?;
                    yes = yes.union(pat.intersect(v));
                }
                Some(yes)
            }
            // `match error { Error::Http(e) => e.status() == Some(TOO_MANY_REQUESTS), Error::Io(_)
            // => true, .. }` over an error, not a status: the statuses the arms that test one
            // say yes to (an arm that answers for a kind of error without a status adds none,
            // and one we cannot read adds none either).
            Expr::Match(m) => {
                let mut yes: Option<StatusSet> = None;
                for arm in &m.arms {
                    if matches!(
                        &*arm.body,
                        Expr::Lit(syn::ExprLit {
                            lit: Lit::Bool(_),
                            ..
                        })
                    ) {
                        continue;
                    }
                    if let Some(v) = self.bool_valued(&arm.body) {
                        yes = Some(yes.map_or(v, |acc| acc.union(v)));
                    }
                }
                yes
            }
            Expr::Block(b) => match b.block.stmts.last() {
                Some(syn::Stmt::Expr(e, None)) => self.bool_valued(e),
                _ => None,
            },
            Expr::Paren(p) => self.bool_valued(&p.expr),
            other => self.cond(other).map(|s| s.then),
        }
    }

    fn comparison(&self, b: &syn::ExprBinary) -> Option<StatusSet> {
        let (code, flipped, other) = match (self.code(&b.left), self.code(&b.right)) {
            (None, Some(c)) => (c, false, &*b.left),
            (Some(c), None) => (c, true, &*b.right),
            _ => return None,
        };
        let code_side = if flipped { &*b.left } else { &*b.right };
        // `x < 258` or `len < MAX_LEN` is only about statuses when x reads as a status, or when
        // the other side is written with a `StatusCode` constant.
        if !self.is_status_expr(other) && !self.names_status_code(code_side) {
            return None;
        }
        // Normalise to `status OP code`.
        let op = if flipped { flip(b.op) } else { b.op };
        Some(match op {
            BinOp::Eq(_) => StatusSet::single(code),
            BinOp::Ne(_) => StatusSet::single(code).complement(),
            BinOp::Lt(_) => StatusSet::range(100, code.saturating_sub(1)),
            BinOp::Le(_) => StatusSet::range(100, code),
            BinOp::Gt(_) => StatusSet::range(code + 1, 599),
            BinOp::Ge(_) => StatusSet::range(code, 599),
            _ => return None,
        })
    }

    fn is_status_collection(e: &Expr) -> bool {
        names::is_status_text(&names::text(e))
            || super::known::builtin().part_of(
                super::known::List::StatusCollectionWords,
                &names::text(e).to_ascii_lowercase(),
            )
    }

    /// `[429, 503]`, `RETRYABLE` (a const array), `(500..600)`, `&[StatusCode::X, ...]`.
    fn collection(&self, e: &Expr) -> Option<StatusSet> {
        let _guard = crate::analysis::limits::enter();
        match e {
            Expr::Array(a) => {
                let mut s = StatusSet::empty();
                for el in &a.elems {
                    s.insert(self.code(el)?);
                }
                Some(s)
            }
            Expr::Reference(r) => self.collection(&r.expr),
            Expr::Paren(p) => self.collection(&p.expr),
            Expr::Range(r) => {
                let lo = r.start.as_deref().and_then(|e| self.code(e)).unwrap_or(100);
                let hi = match (&r.end, &r.limits) {
                    (Some(e), syn::RangeLimits::Closed(_)) => self.code(e)?,
                    (Some(e), syn::RangeLimits::HalfOpen(_)) => match &**e {
                        Expr::Lit(syn::ExprLit {
                            lit: Lit::Int(i), ..
                        }) => i.base10_parse::<u16>().ok()?.checked_sub(1)?,
                        other => self.code(other)?.checked_sub(1)?,
                    },
                    (None, _) => 599,
                };
                Some(StatusSet::range(lo, hi))
            }
            Expr::Path(p) => self.file.consult(Facts::ERRORS, || {
                let c = if p.path.segments.len() == 1 {
                    let id = p.path.segments[0].ident.to_string();
                    self.locals
                        .lets
                        .get(&id)
                        .and_then(|v| v.first().copied())
                        .or_else(|| self.file.constant_named(&id))
                } else {
                    self.file.constant(&p.path)
                }?;
                self.file.follow(c, |c| self.collection(c))
            }),
            Expr::MethodCall(m)
                if matches!(
                    m.method.to_string().as_str(),
                    "iter" | "as_slice" | "to_vec"
                ) =>
            {
                self.collection(&m.receiver)
            }
            Expr::Macro(m) if names::last(&m.mac.path).as_deref() == Some("vec") => {
                let args = m
                    .mac
                    .parse_body_with(
                        syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated,
                    )
                    .ok()?;
                let mut s = StatusSet::empty();
                for el in &args {
                    s.insert(self.code(el)?);
                }
                Some(s)
            }
            _ => None,
        }
    }
}

fn flip(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt(t) => BinOp::Gt(syn::Token![>](t.span)),
        BinOp::Le(t) => BinOp::Ge(syn::Token![>=](t.spans)),
        BinOp::Gt(t) => BinOp::Lt(syn::Token![<](t.span)),
        BinOp::Ge(t) => BinOp::Le(syn::Token![<=](t.spans)),
        other => other,
    }
}

fn closure_params(c: &syn::ExprClosure) -> Vec<String> {
    let mut v = Vec::new();
    for p in &c.inputs {
        super::values::pat_bindings(p, &mut v);
    }
    v
}

/// The two halves of `matches!(expr, pattern)`.
#[must_use]
pub fn parse_matches(mac: &syn::Macro) -> Option<(Expr, Pat)> {
    mac.parse_body_with(|input: syn::parse::ParseStream| {
        let e: Expr = input.parse()?;
        input.parse::<syn::Token![,]>()?;
        let p = Pat::parse_multi_with_leading_vert(input)?;
        if input.peek(syn::Token![if]) {
            input.parse::<syn::Token![if]>()?;
            let _: Expr = input.parse()?;
        }
        let _ = input.parse::<Option<syn::Token![,]>>()?;
        Ok((e, p))
    })
    .ok()
}

/// An integer literal that is an HTTP status (100..=599).
fn status_literal(i: &syn::LitInt) -> Option<u16> {
    i.base10_parse::<u16>()
        .ok()
        .filter(|c| (100..=599).contains(c))
}

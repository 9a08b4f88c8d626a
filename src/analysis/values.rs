//! Where a value comes from: local `let` bindings, mutations inside a loop, `const`s and local
//! functions, summarised as a [`Taint`] (does randomness enter? does it grow per attempt? is it the
//! server's hint? is it capped?).
//!
//! Over 1 000 lines on purpose: one evaluator of where a value comes from, over every kind of
//! expression, whose arms share the taint they build.

use std::collections::{HashMap, HashSet};

use syn::visit::Visit;
use syn::{BinOp, Expr, Pat};

use super::names;
use super::scope::{FileScope, LocalFn};

/// What flows into a value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Taint {
    /// Randomness (rand, fastrand, a jitter fn...).
    pub random: bool,
    /// The attempt counter.
    pub counter: bool,
    /// Multiplied, shifted or added to itself on each pass of the loop.
    pub growth: bool,
    /// The server's wait hint.
    pub server: bool,
    /// `min`/`clamp` bounds it.
    pub capped: bool,
    /// Something we cannot see into (a call into another file, an iterator's `next`).
    pub opaque: bool,
    /// What a server hint falls back to (`hint.unwrap_or(d)`): the nature of `d`.
    pub fallback: Option<Fallback>,
    /// A backoff strategy object of a known crate (`ExponentialBackoffBuilder::default()..`):
    /// its next wait (`.wait()`, `.next_backoff()`) is what the rest of the taint says.
    pub strategy: bool,
}

/// The nature of the value used when the server gives no wait hint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fallback {
    pub grows: bool,
    pub random: bool,
    pub opaque: bool,
}

/// A value of fixed parts: nothing in it counts, grows, draws, or is the server's or unseen.
fn fixed(t: &Taint) -> bool {
    !(t.counter || t.growth || t.random || t.server || t.opaque || t.strategy)
}

impl Taint {
    fn opaque() -> Self {
        Taint {
            opaque: true,
            ..Taint::default()
        }
    }

    #[must_use]
    pub fn union(self, o: Taint) -> Taint {
        Taint {
            random: self.random || o.random,
            counter: self.counter || o.counter,
            growth: self.growth || o.growth,
            server: self.server || o.server,
            capped: self.capped || o.capped,
            opaque: self.opaque || o.opaque,
            strategy: self.strategy || o.strategy,
            fallback: match (self.fallback, o.fallback) {
                (Some(a), Some(b)) => Some(Fallback {
                    grows: a.grows || b.grows,
                    random: a.random || b.random,
                    opaque: a.opaque || b.opaque,
                }),
                (a, b) => a.or(b),
            },
        }
    }

    /// Grows per attempt.
    #[must_use]
    pub fn grows(self) -> bool {
        self.counter || self.growth
    }
}

/// How a variable is changed inside a loop.
#[derive(Clone, Copy)]
pub enum Mutation<'a> {
    Assign(&'a Expr),
    Compound(BinOp, &'a Expr),
}

/// The text key of a place: `x`, `self.delay`, `state.attempts`.
#[must_use]
pub fn place_key(expr: &Expr) -> Option<String> {
    let _guard = crate::analysis::limits::enter();
    match expr {
        Expr::Path(p) if p.qself.is_none() => {
            let segs = names::segments(&p.path);
            Some(segs.join("::"))
        }
        Expr::Field(f) => {
            let base = place_key(&f.base)?;
            let member = match &f.member {
                syn::Member::Named(i) => i.to_string(),
                syn::Member::Unnamed(i) => i.index.to_string(),
            };
            Some(format!("{base}.{member}"))
        }
        Expr::Paren(p) => place_key(&p.expr),
        Expr::Group(g) => place_key(&g.expr),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => place_key(&u.expr),
        Expr::Reference(r) => place_key(&r.expr),
        Expr::MethodCall(m)
            if m.args.is_empty()
                && matches!(
                    m.method.to_string().as_str(),
                    "lock" | "borrow" | "borrow_mut" | "get_mut" | "write" | "unwrap"
                ) =>
        {
            place_key(&m.receiver)
        }
        _ => None,
    }
}

/// The identifiers bound by a pattern.
pub fn pat_bindings(pat: &Pat, out: &mut Vec<String>) {
    let _guard = crate::analysis::limits::enter();
    match pat {
        Pat::Ident(i) => {
            out.push(i.ident.to_string());
            if let Some((_, sub)) = &i.subpat {
                pat_bindings(sub, out);
            }
        }
        Pat::Type(t) => pat_bindings(&t.pat, out),
        Pat::Reference(r) => pat_bindings(&r.pat, out),
        Pat::Paren(p) => pat_bindings(&p.pat, out),
        Pat::Tuple(t) => t.elems.iter().for_each(|p| pat_bindings(p, out)),
        Pat::TupleStruct(t) => t.elems.iter().for_each(|p| pat_bindings(p, out)),
        Pat::Struct(s) => s.fields.iter().for_each(|f| pat_bindings(&f.pat, out)),
        Pat::Slice(s) => s.elems.iter().for_each(|p| pat_bindings(p, out)),
        Pat::Or(o) => o.cases.iter().for_each(|p| pat_bindings(p, out)),
        _ => {}
    }
}

/// The `let`s, pattern bindings and `for` variables of one function body (closures included).
#[derive(Default)]
pub struct Locals<'a> {
    pub lets: HashMap<String, Vec<&'a Expr>>,
    /// `for x in ITER`: x → ITER.
    pub elements: HashMap<String, &'a Expr>,
    pub params: HashSet<String>,
    /// Buffers filled with random bytes (`getrandom(&mut buf)`, `rng.fill(&mut buf)`).
    pub randomized: HashSet<String>,
    /// Names bound inside a `Status(..)` pattern (`Err(ureq::Error::Status(code, _))`).
    pub statuses: HashSet<String>,
    /// The written type of each parameter (`js` → `&async_nats::jetstream::Context`).
    pub param_types: HashMap<String, &'a syn::Type>,
    /// Names a `let mut` binds: state the function changes in place (`let mut backoff = ..`).
    pub mutable: HashSet<String>,
}

impl<'a> Locals<'a> {
    #[must_use]
    pub fn of_fn(f: &LocalFn<'a>) -> Self {
        let mut l = Locals::default();
        for input in &f.sig.inputs {
            if let syn::FnArg::Typed(t) = input {
                let mut names = Vec::new();
                pat_bindings(&t.pat, &mut names);
                for n in &names {
                    l.param_types.insert(n.clone(), &*t.ty);
                }
                l.params.extend(names);
            }
        }
        l.visit_block(f.block);
        l
    }

    fn bind(&mut self, pat: &Pat, value: &'a Expr) {
        let mut names = Vec::new();
        pat_bindings(pat, &mut names);
        for n in names {
            self.lets.entry(n).or_default().push(value);
        }
        self.status_bindings(pat, false);
    }

    fn status_bindings(&mut self, pat: &Pat, inside_status: bool) {
        let _guard = crate::analysis::limits::enter();
        match pat {
            Pat::Ident(i) if inside_status => {
                self.statuses.insert(i.ident.to_string());
            }
            Pat::TupleStruct(t) => {
                let status = inside_status
                    || names::last(&t.path).is_some_and(|n| n.contains("Status") || n == "Http");
                for (i, p) in t.elems.iter().enumerate() {
                    // `Status(code, response)`: only the first field is the code.
                    self.status_bindings(p, status && i == 0);
                }
            }
            Pat::Or(o) => o
                .cases
                .iter()
                .for_each(|c| self.status_bindings(c, inside_status)),
            Pat::Reference(r) => self.status_bindings(&r.pat, inside_status),
            Pat::Paren(p) => self.status_bindings(&p.pat, inside_status),
            _ => {}
        }
    }

    fn randomize_args<'e, I: Iterator<Item = &'e Expr>>(&mut self, args: I) {
        for a in args {
            if let Expr::Reference(r) = a {
                if r.mutability.is_some() {
                    if let Some(k) = place_key(&r.expr) {
                        self.randomized.insert(k);
                    }
                }
            }
        }
    }
}

impl<'a> Visit<'a> for Locals<'a> {
    fn visit_local(&mut self, node: &'a syn::Local) {
        let _guard = crate::analysis::limits::enter();
        let mut pat = &node.pat;
        while let Pat::Type(t) = pat {
            pat = &t.pat;
        }
        if let Pat::Ident(i) = pat {
            if i.mutability.is_some() {
                self.mutable.insert(i.ident.to_string());
            }
        }
        if let Some(init) = &node.init {
            self.bind(&node.pat, &init.expr);
        }
        syn::visit::visit_local(self, node);
    }

    fn visit_expr_let(&mut self, node: &'a syn::ExprLet) {
        let _guard = crate::analysis::limits::enter();
        self.bind(&node.pat, &node.expr);
        syn::visit::visit_expr_let(self, node);
    }

    fn visit_expr_match(&mut self, node: &'a syn::ExprMatch) {
        let _guard = crate::analysis::limits::enter();
        for arm in &node.arms {
            self.bind(&arm.pat, &node.expr);
        }
        syn::visit::visit_expr_match(self, node);
    }

    fn visit_expr_for_loop(&mut self, node: &'a syn::ExprForLoop) {
        let _guard = crate::analysis::limits::enter();
        let mut names = Vec::new();
        pat_bindings(&node.pat, &mut names);
        for n in names {
            self.elements.insert(n, &node.expr);
        }
        syn::visit::visit_expr_for_loop(self, node);
    }

    fn visit_expr_closure(&mut self, node: &'a syn::ExprClosure) {
        let _guard = crate::analysis::limits::enter();
        for input in &node.inputs {
            let mut names = Vec::new();
            pat_bindings(input, &mut names);
            self.params.extend(names);
        }
        syn::visit::visit_expr_closure(self, node);
    }

    fn visit_expr_call(&mut self, node: &'a syn::ExprCall) {
        let _guard = crate::analysis::limits::enter();
        if let Some(p) = names::callee_path(&node.func) {
            let segs = names::segments(p);
            if segs
                .iter()
                .any(|s| names::is_random_root(s) || names::is_random_name(s))
            {
                self.randomize_args(node.args.iter());
            }
        }
        syn::visit::visit_expr_call(self, node);
    }

    fn visit_expr_method_call(&mut self, node: &'a syn::ExprMethodCall) {
        let _guard = crate::analysis::limits::enter();
        let n = node.method.to_string();
        if matches!(
            n.as_str(),
            "fill" | "fill_bytes" | "try_fill" | "try_fill_bytes"
        ) {
            self.randomize_args(node.args.iter());
        }
        syn::visit::visit_expr_method_call(self, node);
    }

    fn visit_item(&mut self, _: &'a syn::Item) {}
}

/// How places change inside one loop body, and which of them count attempts.
#[derive(Default)]
pub struct LoopFacts<'a> {
    pub mutations: HashMap<String, Vec<Mutation<'a>>>,
    pub counters: HashSet<String>,
    /// Places multiplied by a constant above one on each pass (`seconds *= 2`): a limit an
    /// exit tests on one (`if seconds > 64 { return .. }`) is reached after a number of passes
    /// as surely as a counter's.
    pub grown: HashSet<String>,
    /// Places set back to a limit whenever they pass it (`if i > 300 { i = 300 }`, `if delay >
    /// limit { delay = limit; }`): whatever else they are assigned, they never exceed it
    /// (evidence.md #6: a cap is a cap whatever form it takes).
    pub clamped: HashSet<String>,
    /// What each name a `let` of the body binds is bound to (`let next = attempt + 1;`).
    bound: HashMap<String, Vec<&'a Expr>>,
    /// Every name a `let` of the body binds, whatever its pattern.
    lets: HashSet<String>,
}

impl<'a> LoopFacts<'a> {
    /// Collects mutations in `body` (closures included: `attempts += 1` in a closure still counts).
    pub fn collect<T: VisitTarget<'a>>(body: T, extra_counters: &[String]) -> Self {
        let _guard = crate::analysis::limits::enter();
        let mut f = LoopFacts::default();
        body.visit_with(&mut f);
        f.recount();
        f.counters.extend(extra_counters.iter().cloned());
        f
    }

    /// Whether the body binds `name` with a `let` of its own, or assigns or steps it: a value
    /// made anew on some pass, not one kept as it was from before the loop.
    #[must_use]
    pub fn remakes(&self, name: &str) -> bool {
        self.lets.contains(name) || self.mutations.contains_key(name)
    }

    /// Marks as counters the places stepped by one (`x += 1`, `x = x - 1`), and as grown
    /// those multiplied by a constant each pass (`seconds *= 2`, `x <<= 1`).
    ///
    /// A place assigned a name bound once in the body (`let next = attempt + 1; attempt =
    /// next;`) steps as what the name was bound to does: the value, written in place of the name.
    pub fn recount(&mut self) {
        for (k, muts) in &self.mutations {
            let steps: Vec<Mutation<'a>> = muts
                .iter()
                .map(|m| match m {
                    Mutation::Assign(Expr::Path(p)) => p
                        .path
                        .get_ident()
                        .and_then(|i| self.bound.get(&i.to_string()))
                        .and_then(|v| match v.as_slice() {
                            [one] => Some(Mutation::Assign(one)),
                            _ => None,
                        })
                        .unwrap_or(*m),
                    _ => *m,
                })
                .collect();
            if steps.iter().any(|m| is_geometric_step(k, *m)) {
                self.grown.insert(k.clone());
            }
            if steps.iter().any(|m| is_count_step(k, *m)) {
                self.counters.insert(k.clone());
            }
        }
    }
}

/// Something a [`LoopFacts`] can be collected from.
pub trait VisitTarget<'a> {
    fn visit_with(self, v: &mut LoopFacts<'a>);
}

impl<'a> VisitTarget<'a> for &'a syn::Block {
    fn visit_with(self, v: &mut LoopFacts<'a>) {
        let _guard = crate::analysis::limits::enter();
        v.visit_block(self);
    }
}

impl<'a> VisitTarget<'a> for &'a Expr {
    fn visit_with(self, v: &mut LoopFacts<'a>) {
        let _guard = crate::analysis::limits::enter();
        v.visit_expr(self);
    }
}

fn is_int_lit(e: &Expr) -> bool {
    let _guard = crate::analysis::limits::enter();
    match e {
        Expr::Lit(l) => matches!(l.lit, syn::Lit::Int(_)),
        Expr::Paren(p) => is_int_lit(&p.expr),
        _ => false,
    }
}

/// `x *= 2`, `x <<= 1`, `x = x * 2`, `x = x.saturating_mul(2)`: multiplied by a constant
/// above one.
fn is_geometric_step(key: &str, m: Mutation<'_>) -> bool {
    let _guard = crate::analysis::limits::enter();
    let factor = |e: &Expr| match e {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => i.base10_parse::<u64>().ok(),
        _ => None,
    };
    match m {
        Mutation::Compound(BinOp::MulAssign(_), rhs) => factor(rhs).is_some_and(|f| f >= 2),
        Mutation::Compound(BinOp::ShlAssign(_), rhs) => factor(rhs).is_some_and(|f| f >= 1),
        Mutation::Assign(Expr::Binary(b)) => {
            matches!(b.op, BinOp::Mul(_))
                && place_key(&b.left).as_deref() == Some(key)
                && factor(&b.right).is_some_and(|f| f >= 2)
        }
        Mutation::Assign(Expr::MethodCall(mc)) => {
            matches!(
                mc.method.to_string().as_str(),
                "saturating_mul" | "checked_mul" | "wrapping_mul"
            ) && place_key(&mc.receiver).as_deref() == Some(key)
                && mc.args.first().and_then(factor).is_some_and(|f| f >= 2)
        }
        _ => false,
    }
}

/// `x += 1`, `x -= 1`, `x = x + 1`, `x = x.saturating_add(1)`.
fn is_count_step(key: &str, m: Mutation<'_>) -> bool {
    let _guard = crate::analysis::limits::enter();
    match m {
        Mutation::Compound(BinOp::AddAssign(_) | BinOp::SubAssign(_), rhs) => is_int_lit(rhs),
        Mutation::Assign(rhs) => match rhs {
            Expr::Binary(b) => {
                matches!(b.op, BinOp::Add(_) | BinOp::Sub(_))
                    && place_key(&b.left).as_deref() == Some(key)
                    && is_int_lit(&b.right)
            }
            Expr::MethodCall(mc) => {
                matches!(
                    mc.method.to_string().as_str(),
                    "saturating_add"
                        | "saturating_sub"
                        | "checked_add"
                        | "checked_sub"
                        | "wrapping_add"
                        | "wrapping_sub"
                ) && place_key(&mc.receiver).as_deref() == Some(key)
                    && mc.args.first().is_some_and(is_int_lit)
            }
            Expr::Paren(p) => is_count_step(key, Mutation::Assign(&p.expr)),
            _ => {
                // x = x.checked_add(1)?  /  x = (x + 1).min(max)
                let text = names::text(rhs);
                let k = key.replace('.', " . ");
                (text.contains(&format!("{k} + 1")) || text.contains(&format!("{k} - 1")))
                    && !text.contains('*')
            }
        },
        Mutation::Compound(..) => false,
    }
}

impl<'a> Visit<'a> for LoopFacts<'a> {
    fn visit_local(&mut self, node: &'a syn::Local) {
        let _guard = crate::analysis::limits::enter();
        if let (Pat::Ident(i), Some(init)) = (&node.pat, &node.init) {
            self.bound
                .entry(i.ident.to_string())
                .or_default()
                .push(&init.expr);
        }
        let mut names = Vec::new();
        pat_bindings(&node.pat, &mut names);
        self.lets.extend(names);
        syn::visit::visit_local(self, node);
    }

    fn visit_expr_assign(&mut self, node: &'a syn::ExprAssign) {
        let _guard = crate::analysis::limits::enter();
        if let Some(k) = place_key(&node.left) {
            self.mutations
                .entry(k)
                .or_default()
                .push(Mutation::Assign(&node.right));
        } else if let (Expr::Tuple(t), Expr::Call(_) | Expr::MethodCall(_)) =
            (&*node.left, &*node.right)
        {
            // `(need_retry, reply) = send(..)`: each place takes a part of what the call returns.
            for k in t.elems.iter().filter_map(place_key) {
                self.mutations
                    .entry(k)
                    .or_default()
                    .push(Mutation::Assign(&node.right));
            }
        }
        syn::visit::visit_expr_assign(self, node);
    }

    fn visit_expr_binary(&mut self, node: &'a syn::ExprBinary) {
        let _guard = crate::analysis::limits::enter();
        if is_compound(node.op) {
            if let Some(k) = place_key(&node.left) {
                self.mutations
                    .entry(k)
                    .or_default()
                    .push(Mutation::Compound(node.op, &node.right));
            }
        }
        syn::visit::visit_expr_binary(self, node);
    }

    fn visit_expr_if(&mut self, node: &'a syn::ExprIf) {
        let _guard = crate::analysis::limits::enter();
        if let Some(k) = clamp_target(node) {
            self.clamped.insert(k);
        }
        syn::visit::visit_expr_if(self, node);
    }

    fn visit_item(&mut self, _: &'a syn::Item) {}
}

/// The place an `if` sets back to the limit its condition found it above: `if x > e { x = e }`
/// (`>=`, or written `e < x`), with no `else` and nothing else in the branch.
fn clamp_target(i: &syn::ExprIf) -> Option<String> {
    let _guard = crate::analysis::limits::enter();
    if i.else_branch.is_some() {
        return None;
    }
    let Expr::Binary(b) = &*i.cond else {
        return None;
    };
    let (above, limit) = match b.op {
        BinOp::Gt(_) | BinOp::Ge(_) => (&*b.left, &*b.right),
        BinOp::Lt(_) | BinOp::Le(_) => (&*b.right, &*b.left),
        _ => return None,
    };
    let key = place_key(above)?;
    let [syn::Stmt::Expr(Expr::Assign(a), _)] = i.then_branch.stmts.as_slice() else {
        return None;
    };
    (place_key(&a.left).as_deref() == Some(key.as_str())
        && names::text(&a.right) == names::text(limit))
    .then_some(key)
}

fn is_compound(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::AddAssign(_)
            | BinOp::SubAssign(_)
            | BinOp::MulAssign(_)
            | BinOp::DivAssign(_)
            | BinOp::ShlAssign(_)
            | BinOp::ShrAssign(_)
            | BinOp::RemAssign(_)
            | BinOp::BitOrAssign(_)
            | BinOp::BitAndAssign(_)
            | BinOp::BitXorAssign(_)
    )
}

/// Methods that pass their receiver's and arguments' nature through.
fn is_transparent_method(name: &str) -> bool {
    matches!(
        name,
        "as_secs"
            | "as_millis"
            | "as_micros"
            | "as_nanos"
            | "as_secs_f64"
            | "as_secs_f32"
            | "as_millis_f64"
            | "subsec_millis"
            | "subsec_nanos"
            | "unwrap"
            | "unwrap_or"
            | "unwrap_or_default"
            | "unwrap_or_else"
            | "expect"
            | "into"
            | "try_into"
            | "to_owned"
            | "clone"
            | "saturating_mul"
            | "saturating_add"
            | "saturating_sub"
            | "checked_mul"
            | "checked_add"
            | "checked_sub"
            | "checked_div"
            | "wrapping_mul"
            | "wrapping_add"
            | "wrapping_sub"
            | "mul"
            | "add"
            | "sub"
            | "div"
            | "max"
            | "to_std"
            | "num_milliseconds"
            | "num_seconds"
            | "abs"
            | "round"
            | "floor"
            | "ceil"
            | "get"
            | "copied"
            | "cloned"
            | "map"
            | "ok"
            | "as_ref"
            | "as_deref"
            | "div_f64"
            | "div_f32"
            | "from"
            | "iter"
            | "into_iter"
            | "min_by"
            | "to_string"
            | "parse"
            | "as_u64"
            | "as_f64"
            | "trim"
            | "and_then"
            | "filter"
            | "saturating_duration_since"
            | "rem_euclid"
            | "signum"
            | "to_str"
            | "or"
            | "or_else"
            | "map_or"
            | "map_or_else"
            | "flatten"
            | "first"
            | "last"
    )
}

/// Methods that multiply or exponentiate.
fn is_growth_method(name: &str) -> bool {
    matches!(
        name,
        "pow"
            | "powi"
            | "powf"
            | "checked_pow"
            | "saturating_pow"
            | "wrapping_pow"
            | "mul_f64"
            | "mul_f32"
            | "checked_shl"
            | "wrapping_shl"
            | "exp"
            | "exp2"
    )
}

/// `if a > b { b } else { a }` (or `if a < b { a } else { b }`): the smaller of two values,
/// `min` written as a test.
fn picks_smaller(i: &syn::ExprIf) -> bool {
    let Expr::Binary(b) = &*i.cond else {
        return false;
    };
    let single = |block: &syn::Block| match block.stmts.as_slice() {
        [syn::Stmt::Expr(e, None)] => Some(names::text(e)),
        _ => None,
    };
    let Some(then_v) = single(&i.then_branch) else {
        return false;
    };
    let else_v = match i.else_branch.as_ref().map(|(_, e)| &**e) {
        Some(Expr::Block(b)) => single(&b.block),
        Some(e) => Some(names::text(e)),
        None => None,
    };
    let Some(else_v) = else_v else {
        return false;
    };
    let (l, r) = (names::text(&b.left), names::text(&b.right));
    match b.op {
        BinOp::Gt(_) | BinOp::Ge(_) => then_v == r && else_v == l,
        BinOp::Lt(_) | BinOp::Le(_) => then_v == l && else_v == r,
        _ => false,
    }
}

/// Whether a function's body returns early the limit a value was found to exceed
/// (`if duration > max { return Some(max) }`, in an `if let` chain or not): what it returns is
/// capped (evidence.md #6: a cap is a cap whatever form it takes).
fn returns_ceiling(body: &syn::Block) -> bool {
    struct Ceiling(bool);
    /// The side a comparison says is the smaller when it holds (`d > max`: `max`).
    fn limits(cond: &Expr, out: &mut Vec<String>) {
        let _guard = crate::analysis::limits::enter();
        match cond {
            Expr::Binary(b) if matches!(b.op, BinOp::And(_)) => {
                limits(&b.left, out);
                limits(&b.right, out);
            }
            Expr::Paren(p) => limits(&p.expr, out),
            Expr::Binary(b) => {
                let side = match b.op {
                    BinOp::Gt(_) | BinOp::Ge(_) => &*b.right,
                    BinOp::Lt(_) | BinOp::Le(_) => &*b.left,
                    _ => return,
                };
                let side = match side {
                    Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => &*u.expr,
                    e => e,
                };
                if let Some(k) = place_key(side) {
                    out.push(k);
                }
            }
            _ => {}
        }
    }
    impl<'v> Visit<'v> for Ceiling {
        fn visit_expr_if(&mut self, i: &'v syn::ExprIf) {
            let _guard = crate::analysis::limits::enter();
            let mut keys = Vec::new();
            limits(&i.cond, &mut keys);
            if !keys.is_empty() {
                let returned = match i.then_branch.stmts.as_slice() {
                    [syn::Stmt::Expr(Expr::Return(r), _)] => r.expr.as_deref(),
                    _ => None,
                };
                if returned.is_some_and(|e| keys.iter().any(|k| mentions(e, k))) {
                    self.0 = true;
                }
            }
            syn::visit::visit_expr_if(self, i);
        }
        fn visit_expr_closure(&mut self, _: &'v syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'v syn::Item) {}
    }
    let _guard = crate::analysis::limits::enter();
    let mut c = Ceiling(false);
    c.visit_block(body);
    c.0
}

/// Whether a method chain reads the part of std's clock below a second: a `SystemTime::now()`
/// or `Instant::now()` in it, and a `Duration` accessor of that part (`subsec_nanos`,
/// `subsec_micros`, `subsec_millis`), or of the whole since `UNIX_EPOCH` in nanoseconds or
/// microseconds (mostly its fast-moving digits), in the chain or a closure of it
/// (`SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.subsec_nanos())`). std's API.
fn reads_clock_fraction(m: &syn::ExprMethodCall, file: &FileScope<'_>) -> bool {
    #[derive(Default)]
    struct Seen {
        clock: bool,
        subsec: bool,
        whole: bool,
        epoch: bool,
    }
    struct Clock<'f, 's> {
        file: &'f FileScope<'s>,
        seen: Seen,
    }
    impl<'v> Visit<'v> for Clock<'_, '_> {
        fn visit_expr_call(&mut self, c: &'v syn::ExprCall) {
            let _guard = crate::analysis::limits::enter();
            if let Some(p) = names::callee_path(&c.func) {
                let full = self.file.resolve(p);
                if matches!(full.as_slice(), [root, time, ty, now]
                    if matches!(root.as_str(), "std" | "core" | "tokio") && time == "time"
                        && matches!(ty.as_str(), "SystemTime" | "Instant") && now == "now")
                {
                    self.seen.clock = true;
                }
            }
            syn::visit::visit_expr_call(self, c);
        }
        fn visit_expr_method_call(&mut self, m: &'v syn::ExprMethodCall) {
            let _guard = crate::analysis::limits::enter();
            match m.method.to_string().as_str() {
                "subsec_nanos" | "subsec_micros" | "subsec_millis" => self.seen.subsec = true,
                "as_nanos" | "as_micros" => self.seen.whole = true,
                _ => {}
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_path(&mut self, p: &'v syn::Path) {
            let _guard = crate::analysis::limits::enter();
            if p.segments.last().is_some_and(|s| s.ident == "UNIX_EPOCH") {
                self.seen.epoch = true;
            }
            syn::visit::visit_path(self, p);
        }
    }
    let mut clock = Clock {
        file,
        seen: Seen::default(),
    };
    clock.visit_expr_method_call(m);
    let s = clock.seen;
    s.clock && (s.subsec || (s.whole && s.epoch))
}

/// A method called on a backoff strategy object: a builder step keeps the object (a maximum
/// caps it, a jitter step randomises it), asking for the next wait gives the wait.
fn strategy_step(file: &FileScope<'_>, name: &str, recv: Taint, m: &syn::ExprMethodCall) -> Taint {
    let zero_arg = m.args.first().is_some_and(|a| {
        matches!(a, Expr::Lit(l) if matches!(&l.lit, syn::Lit::Float(f) if f.base10_parse::<f64>().is_ok_and(|v| v == 0.0)))
    });
    match name {
        n if file.is_next_wait_method(n) => Taint {
            strategy: false,
            ..recv
        },
        "max" | "max_delay" | "with_max_delay" | "max_interval" | "with_max_interval" | "cap"
        | "max_backoff" | "with_max_backoff" | "retry_bounds" => Taint {
            capped: true,
            ..recv
        },
        "with_randomization_factor" | "randomization_factor" => Taint {
            random: !zero_arg,
            ..recv
        },
        n if n.contains("jitter") => Taint {
            random: !n.starts_with("without") && !n.starts_with("no_"),
            ..recv
        },
        // tokio-retry's `.map(jitter)`.
        "map" if m.args.iter().any(|a| names::text(a).contains("jitter")) => Taint {
            random: true,
            ..recv
        },
        _ => recv,
    }
}

fn is_cap_name(name: &str) -> bool {
    matches!(name, "min" | "clamp")
}

/// Duration and number constructors whose value is their arguments'.
fn is_transparent_fn(name: &str) -> bool {
    matches!(
        name,
        "from_secs"
            | "from_millis"
            | "from_micros"
            | "from_nanos"
            | "from_secs_f64"
            | "from_secs_f32"
            | "try_from_secs_f64"
            | "try_from_secs_f32"
            | "from_mins"
            | "from_hours"
            | "seconds"
            | "milliseconds"
            | "minutes"
            | "microseconds"
            | "Some"
            | "Ok"
            | "from"
            | "new"
            | "try_from"
            | "max"
            | "Duration"
            | "from_std"
            | "days"
            | "hours"
            | "now"
    )
}

/// The context a taint is computed in.
pub struct ValueCx<'a, 'c> {
    pub file: &'c FileScope<'a>,
    pub locals: &'c Locals<'a>,
    pub facts: &'c LoopFacts<'a>,
    /// Taints of the parameters when following a call into a local function.
    pub params: Option<&'c HashMap<String, Taint>>,
    /// The function being analysed (never followed into itself).
    pub current_fn: &'c str,
    /// How many functions of the file this context was followed into for what they return
    /// (a waiting helper read in place of its call is none); only the site's own code, and a
    /// waiting helper's, follow a call.
    pub depth: u8,
}

impl<'a> ValueCx<'a, '_> {
    /// The taint of an expression.
    #[must_use]
    pub fn taint(&self, expr: &'a Expr) -> Taint {
        let _guard = crate::analysis::limits::enter();
        let mut seen = HashSet::new();
        self.taint_in(expr, &mut seen, 0)
    }

    fn taint_in(&self, expr: &'a Expr, seen: &mut HashSet<String>, depth: usize) -> Taint {
        let _guard = crate::analysis::limits::enter();
        if depth > 24 {
            return Taint::opaque();
        }
        let d = depth + 1;
        match expr {
            Expr::Lit(_) => Taint::default(),
            // `0..=ceiling` in `gen_range(0..=ceiling)`: what the bounds carry.
            Expr::Range(r) => {
                let mut t = Taint::default();
                for e in [&r.start, &r.end].into_iter().flatten() {
                    t = t.union(self.taint_in(e, seen, d));
                }
                t
            }
            Expr::Path(p) => self.taint_place(expr, &p.path, seen, d),
            Expr::Field(_) => match place_key(expr) {
                Some(k) => self.taint_key(&k, seen, d),
                None => Taint::default(),
            },
            Expr::MethodCall(m) => {
                let t = self.taint_method(m, seen, d);
                // The sub-second part of the clock's reading differs between callers as a draw
                // does: randomness added to what the chain is made of.
                if reads_clock_fraction(m, self.file) {
                    Taint { random: true, ..t }
                } else {
                    t
                }
            }
            Expr::Call(c) => self.taint_call(c, seen, d),
            Expr::Binary(b) => {
                let t = self
                    .taint_in(&b.left, seen, d)
                    .union(self.taint_in(&b.right, seen, d));
                if matches!(b.op, BinOp::Shl(_)) && t.counter {
                    Taint { growth: true, ..t }
                } else {
                    t
                }
            }
            Expr::Paren(p) => self.taint_in(&p.expr, seen, d),
            Expr::Group(g) => self.taint_in(&g.expr, seen, d),
            Expr::Cast(c) => self.taint_in(&c.expr, seen, d),
            Expr::Reference(r) => self.taint_in(&r.expr, seen, d),
            Expr::Unary(u) => self.taint_in(&u.expr, seen, d),
            Expr::Try(t) => self.taint_in(&t.expr, seen, d),
            Expr::Await(a) => self.taint_in(&a.base, seen, d),
            Expr::Block(b) => self.taint_block(&b.block, seen, d),
            Expr::Unsafe(b) => self.taint_block(&b.block, seen, d),
            Expr::If(i) => {
                let then_t = self.taint_block(&i.then_branch, seen, d);
                let mut t = match &i.else_branch {
                    Some((_, e)) => branches(&[then_t, self.taint_in(e, seen, d)]),
                    None => then_t,
                };
                // `if backoff > max { max } else { backoff }`: the smaller of the two, a cap
                // written as a test (evidence.md #6: a cap is a cap whatever form it takes).
                if picks_smaller(i) {
                    t.capped = true;
                }
                // A delay chosen by a condition on the attempt grows with it; one chosen by a
                // coin flip (`if rng.gen_bool(0.5) { a } else { b }`) is random, as a `match`
                // on one is.
                let c = self.taint_in(&i.cond, seen, d);
                if c.counter {
                    // Chosen among fixed values (`if failures < N { FAST } else { SLOW }`), it
                    // steps up to the largest of them and no further.
                    if i.else_branch.is_some() && fixed(&t) {
                        t.capped = true;
                    }
                    t.counter = true;
                }
                if i.else_branch.is_some() {
                    t.random |= c.random;
                }
                t
            }
            Expr::Match(m) => {
                let arms: Vec<Taint> = m
                    .arms
                    .iter()
                    .map(|arm| self.taint_in(&arm.body, seen, d))
                    .collect();
                let mut t = branches(&arms);
                let s = self.taint_in(&m.expr, seen, d);
                // A wait the attempt picks among fixed values is at most the largest of them.
                if s.counter && fixed(&t) {
                    t.capped = true;
                }
                t.counter |= s.counter;
                t.server |= s.server;
                t.random |= s.random;
                t
            }
            Expr::Index(i) => {
                let table = self.taint_in(&i.expr, seen, d);
                let at = self.taint_in(&i.index, seen, d);
                let mut t = table.union(at);
                // `SCHEDULE[attempt]`: picked from fixed values, at most the largest.
                if at.counter && fixed(&table) {
                    t.capped = true;
                }
                t
            }
            Expr::Array(a) => self.taint_elems(a.elems.iter(), seen, d),
            Expr::Tuple(t) => self.taint_elems(t.elems.iter(), seen, d),
            Expr::Struct(s) => self.taint_elems(s.fields.iter().map(|f| &f.expr), seen, d),
            Expr::Closure(c) => self.taint_in(&c.body, seen, d),
            Expr::Macro(m) => {
                let name = names::last(&m.mac.path).unwrap_or_default();
                if self.file.is_random(&name) {
                    Taint {
                        random: true,
                        ..Taint::default()
                    }
                } else if let Ok(args) = m.mac.parse_body_with(
                    syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated,
                ) {
                    // vec![..], format!(..): look inside, owned copies are fine for a summary.
                    let owned: Vec<Expr> = args.into_iter().collect();
                    let mut t = Taint::default();
                    for e in &owned {
                        t = t.union(self.taint_owned(e, seen, d));
                    }
                    t
                } else {
                    Taint::opaque()
                }
            }
            _ => Taint::opaque(),
        }
    }

    /// Taint of an expression we do not hold a `'a` reference to (a macro's parsed body): only
    /// literals, names and simple arithmetic are looked at.
    fn taint_owned(&self, expr: &Expr, seen: &mut HashSet<String>, d: usize) -> Taint {
        let _guard = crate::analysis::limits::enter();
        match expr {
            Expr::Lit(_) => Taint::default(),
            Expr::Path(p) => {
                let key = names::segments(&p.path).join("::");
                self.taint_key(&key, seen, d)
            }
            Expr::Binary(b) => self
                .taint_owned(&b.left, seen, d)
                .union(self.taint_owned(&b.right, seen, d)),
            Expr::Paren(p) => self.taint_owned(&p.expr, seen, d),
            _ => {
                let text = names::text(expr);
                if text
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .any(names::is_random_name)
                {
                    Taint {
                        random: true,
                        ..Taint::default()
                    }
                } else {
                    Taint::opaque()
                }
            }
        }
    }

    fn taint_elems<I: Iterator<Item = &'a Expr>>(
        &self,
        elems: I,
        seen: &mut HashSet<String>,
        d: usize,
    ) -> Taint {
        let _guard = crate::analysis::limits::enter();
        elems.fold(Taint::default(), |t, e| t.union(self.taint_in(e, seen, d)))
    }

    /// The taint of a block's value: its tail, where a name bound by a `let` of the block is
    /// that binding (`|| { let delay = base * 2u32.pow(n); n += 1; delay.min(cap) }`), not
    /// another binding of the function with the same name.
    fn taint_block(&self, block: &'a syn::Block, seen: &mut HashSet<String>, d: usize) -> Taint {
        let _guard = crate::analysis::limits::enter();
        let Some(syn::Stmt::Expr(tail, None)) = block.stmts.last() else {
            return Taint::default();
        };
        let has_lets = block
            .stmts
            .iter()
            .any(|s| matches!(s, syn::Stmt::Local(l) if l.init.is_some()));
        if !has_lets {
            return self.taint_in(tail, seen, d);
        }
        let mut scoped: HashMap<String, Taint> = self.params.cloned().unwrap_or_default();
        for stmt in &block.stmts {
            let syn::Stmt::Local(local) = stmt else {
                continue;
            };
            let Some(init) = &local.init else { continue };
            let t = self.with_params(&scoped).taint_in(&init.expr, seen, d);
            let mut names = Vec::new();
            pat_bindings(&local.pat, &mut names);
            for n in names {
                scoped.insert(n, t);
            }
        }
        self.with_params(&scoped).taint_in(tail, seen, d)
    }

    /// The same context with `params` as the taints of the names they hold.
    fn with_params<'p>(&'p self, params: &'p HashMap<String, Taint>) -> ValueCx<'a, 'p> {
        ValueCx {
            file: self.file,
            locals: self.locals,
            facts: self.facts,
            params: Some(params),
            current_fn: self.current_fn,
            depth: self.depth.max(1),
        }
    }

    fn taint_place(
        &self,
        expr: &'a Expr,
        path: &syn::Path,
        seen: &mut HashSet<String>,
        d: usize,
    ) -> Taint {
        let _guard = crate::analysis::limits::enter();
        if path.segments.len() == 1 {
            let key = place_key(expr).unwrap_or_default();
            return self.taint_key(&key, seen, d);
        }
        // `Self::DELAY`, `config::RETRY_DELAY`, `Duration::MAX`.
        let full = self.file.resolve(path);
        if self.file.is_random_path(&full) {
            return Taint {
                random: true,
                ..Taint::default()
            };
        }
        match self.file.constant(path) {
            Some(c) => {
                let key = format!("const {}", names::last(path).unwrap_or_default());
                if seen.insert(key.clone()) {
                    let t = self.taint_in(c, seen, d);
                    seen.remove(&key);
                    t
                } else {
                    Taint::default()
                }
            }
            None => self.taint_fn_value(path, seen, d).unwrap_or_default(),
        }
    }

    /// A function of the workspace handed as a value (`.map(Instance::backoff_duration)`): what
    /// the function returns, read as a call of it would be; past the depth the analysis reads,
    /// unknown (evidence.md #7: a wait or jitter the analysis cannot see is not "none"). A path
    /// whose last segment is not a function's name (a type, a variant, a constant), or a
    /// function of another crate (`Duration::from_secs`), adds nothing.
    fn taint_fn_value(
        &self,
        path: &syn::Path,
        seen: &mut HashSet<String>,
        d: usize,
    ) -> Option<Taint> {
        let _guard = crate::analysis::limits::enter();
        let last = names::last(path)?;
        if !last.starts_with(|c: char| c.is_ascii_lowercase() || c == '_') {
            return None;
        }
        let via = self.file.via_of(path);
        self.follow(&last, &via, &[], seen, d)
    }

    /// Taint of a named place (`delay`, `self.delay`). `seen` holds the places being evaluated
    /// (a cycle such as `delay = delay * 2` stops there).
    fn taint_key(&self, key: &str, seen: &mut HashSet<String>, d: usize) -> Taint {
        let _guard = crate::analysis::limits::enter();
        if let Some(t) = self.params.and_then(|p| p.get(key)) {
            return *t;
        }
        if !seen.insert(key.to_owned()) {
            return Taint::default();
        }
        let t = self.taint_key_inner(key, seen, d);
        seen.remove(key);
        t
    }

    fn taint_key_inner(&self, key: &str, seen: &mut HashSet<String>, d: usize) -> Taint {
        let _guard = crate::analysis::limits::enter();
        let mut t = Taint::default();
        if self.facts.counters.contains(key) {
            t.counter = true;
        }
        if self.locals.randomized.contains(key) {
            t.random = true;
        }
        // What the loop assigns, split into the server's hint and the rest.
        let mut from_server = Taint::default();
        let mut other = Taint::default();
        if let Some(muts) = self.facts.mutations.get(key) {
            for m in muts {
                let mt = self.taint_mutation(key, *m, seen, d);
                if mt.server {
                    from_server = from_server.union(mt);
                } else {
                    other = other.union(mt);
                }
            }
        }
        let mut resolved = false;
        let mut init = Taint::default();
        if let Some(inits) = self.locals.lets.get(key) {
            resolved = true;
            for e in inits {
                init = init.union(self.taint_in(e, seen, d));
            }
        }
        if let Some(iter) = self.locals.elements.get(key) {
            resolved = true;
            init = init.union(self.taint_schedule(iter, seen, d));
        }
        if !resolved && !key.contains('.') {
            if let Some(c) = self.file.constant_named(key) {
                resolved = true;
                init = init.union(self.taint_in(c, seen, d));
            }
        }
        if from_server.server && !init.server {
            // `let mut wait = 500ms; if let Some(s) = retry_after { wait = s }`: the initial
            // value (and other changes) is what is waited without a hint.
            let fallback = init.union(other);
            t = t.union(Taint {
                fallback: Some(Fallback {
                    grows: fallback.grows(),
                    random: fallback.random,
                    opaque: fallback.opaque,
                }),
                capped: fallback.capped,
                ..from_server
            });
        } else {
            t = t.union(init).union(other).union(from_server);
        }
        if self.facts.clamped.contains(key) {
            t.capped = true;
        }
        let last = key.rsplit(['.', ':']).next().unwrap_or(key);
        if names::is_server_delay_name(last) {
            t.server = true;
        }
        if !resolved && self.file.is_random(last) {
            t.random = true;
        }
        t
    }

    fn taint_mutation(
        &self,
        key: &str,
        m: Mutation<'a>,
        seen: &mut HashSet<String>,
        d: usize,
    ) -> Taint {
        let _guard = crate::analysis::limits::enter();
        match m {
            Mutation::Compound(op, rhs) => {
                let r = self.taint_in(rhs, seen, d);
                match op {
                    BinOp::MulAssign(_) | BinOp::ShlAssign(_) | BinOp::AddAssign(_) => {
                        Taint { growth: true, ..r }
                    }
                    _ => Taint { opaque: true, ..r },
                }
            }
            Mutation::Assign(rhs) => {
                // `self.current = next` where `if let Some(next) =
                // self.current.checked_mul(self.base)`: the value a name was bound to, as
                // written in place of the name.
                let bound: Vec<&Expr> = match rhs {
                    Expr::Path(p) => p
                        .path
                        .get_ident()
                        .and_then(|i| self.locals.lets.get(&i.to_string()))
                        .cloned()
                        .unwrap_or_default(),
                    _ => Vec::new(),
                };
                let grows_from_self =
                    |e: &Expr| mentions(e, key) && (grows_expr(e) || self.grows_through_call(e));
                let r = self.taint_in(rhs, seen, d);
                if grows_from_self(rhs) || bound.iter().any(|e| grows_from_self(e)) {
                    Taint { growth: true, ..r }
                } else {
                    r
                }
            }
        }
    }

    /// `delay = next_delay(delay)` where `fn next_delay` of this file multiplies what it is given.
    fn grows_through_call(&self, rhs: &Expr) -> bool {
        let _guard = crate::analysis::limits::enter();
        let callee = match rhs {
            Expr::Call(c) => names::callee_path(&c.func)
                .and_then(|p| Some((names::last(p)?, self.file.via_of(p)))),
            Expr::MethodCall(m) => Some((m.method.to_string(), super::Via::Method)),
            _ => None,
        };
        callee
            .and_then(|(n, via)| self.file.function_via(&n, Some(&via)))
            .is_some_and(|f| returned_exprs(f.block).into_iter().any(grows_expr))
    }

    /// Taint of one element of a `for` loop's iterable.
    fn taint_schedule(&self, iter: &'a Expr, seen: &mut HashSet<String>, d: usize) -> Taint {
        let _guard = crate::analysis::limits::enter();
        match iter {
            Expr::Range(_) => Taint {
                counter: true,
                ..Taint::default()
            },
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                match name.as_str() {
                    "iter" | "into_iter" | "copied" | "cloned" | "take" | "skip" | "rev"
                    | "chain" => self.taint_schedule(&m.receiver, seen, d),
                    "enumerate" => self.taint_schedule(&m.receiver, seen, d).union(Taint {
                        counter: true,
                        ..Taint::default()
                    }),
                    "step_by" => Taint {
                        counter: true,
                        ..Taint::default()
                    },
                    _ => Taint::opaque(),
                }
            }
            Expr::Paren(p) => self.taint_schedule(&p.expr, seen, d),
            Expr::Reference(r) => self.taint_schedule(&r.expr, seen, d),
            Expr::Array(a) => schedule_of(a.elems.iter()).union(self.taint_in(iter, seen, d)),
            Expr::Path(p) => {
                let target = if p.path.segments.len() == 1 {
                    let key = names::segments(&p.path).join("::");
                    self.locals
                        .lets
                        .get(&key)
                        .and_then(|v| v.first().copied())
                        .or_else(|| self.file.constant_named(&key))
                } else {
                    self.file.constant(&p.path)
                };
                let key = format!("schedule {}", names::text(p));
                match target {
                    Some(e) if seen.insert(key.clone()) => {
                        let t = self.taint_schedule(e, seen, d);
                        seen.remove(&key);
                        t
                    }
                    _ => Taint::opaque(),
                }
            }
            Expr::Macro(m) if names::last(&m.mac.path).as_deref() == Some("vec") => {
                match m.mac.parse_body_with(
                    syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated,
                ) {
                    Ok(args) => {
                        let owned: Vec<Expr> = args.into_iter().collect();
                        schedule_of(owned.iter())
                    }
                    Err(_) => Taint::opaque(),
                }
            }
            _ => Taint::opaque(),
        }
    }

    fn taint_method(
        &self,
        m: &'a syn::ExprMethodCall,
        seen: &mut HashSet<String>,
        d: usize,
    ) -> Taint {
        let _guard = crate::analysis::limits::enter();
        let name = m.method.to_string();
        let recv = self.taint_in(&m.receiver, seen, d);
        let args = self.taint_elems(m.args.iter(), seen, d);
        if recv.server {
            // Parsing the hint (`.to_str().ok()`, `.parse()`) keeps it the server's; an
            // `unwrap_or(d)` adds what is waited without a hint.
            let recv = Taint {
                opaque: false,
                ..recv
            };
            if matches!(
                name.as_str(),
                "unwrap_or"
                    | "unwrap_or_else"
                    | "or"
                    | "or_else"
                    | "map_or"
                    | "map_or_else"
                    | "unwrap_or_default"
            ) {
                let fb = Fallback {
                    // As for the wait itself: a counter handed to code not read (`self.sleep_duration(n)`
                    // of a trait) says nothing of growth.
                    grows: args.growth || (args.counter && !args.opaque),
                    random: args.random,
                    opaque: args.opaque,
                };
                return Taint {
                    fallback: Some(fb),
                    capped: recv.capped || args.capped,
                    ..recv
                };
            }
            return Taint {
                capped: recv.capped || args.capped,
                random: recv.random || args.random,
                ..recv
            };
        }
        if recv.strategy {
            return strategy_step(self.file, &name, recv, m);
        }
        let both = recv.union(args);
        if self.file.is_random(&name) {
            return Taint {
                random: true,
                ..both
            };
        }
        if is_cap_name(&name) {
            return Taint {
                capped: true,
                ..both
            };
        }
        if is_growth_method(&name) {
            return Taint {
                growth: both.counter || both.growth,
                ..both
            };
        }
        // `SCHEDULE.get(attempt)`: a wait the attempt picks from a table of fixed values is at
        // most the largest of them (evidence.md #6: a cap is a cap whatever form it takes).
        if name == "get" && fixed(&recv) && args.counter {
            return Taint {
                capped: true,
                ..both
            };
        }
        if is_transparent_method(&name) {
            // `.map(Instance::backoff_duration)`: the function handed over decides what comes
            // out; one that cannot be read leaves it unknown, whatever went in.
            let applied = m.args.iter().find_map(|a| match a {
                Expr::Path(p) if p.qself.is_none() => self.taint_fn_value(&p.path, seen, d),
                _ => None,
            });
            return match applied {
                Some(t) if t.opaque => Taint::opaque(),
                Some(t) => t.union(Taint {
                    opaque: false,
                    ..recv
                }),
                None => both,
            };
        }
        // self.delay_for(attempt): a method of this file is followed one level.
        let args_v = m.args.iter().collect::<Vec<_>>();
        if let Some(t) = self.follow(&name, &super::Via::Method, &args_v, seen, d) {
            let t = t.union(Taint {
                opaque: false,
                ..recv
            });
            if names::is_server_delay_name(&name) && !t.server {
                return Taint { server: true, ..t };
            }
            return t;
        }
        if names::is_server_delay_name(&name) || name == "headers" || name == "header" {
            return Taint {
                server: true,
                ..both
            };
        }
        if name == "next" {
            // `waits.next()` where `let mut waits = WAITS.into_iter()`: one of the schedule's
            // values.
            if let Some(sched) = place_key(&m.receiver)
                .and_then(|k| self.locals.lets.get(&k))
                .and_then(|v| v.first().copied())
            {
                let t = self.taint_schedule(sched, seen, d);
                if !t.opaque {
                    return t;
                }
            }
        }
        // An unknown method decides its own result: what went in does not say what comes out
        // (a header passed to `strategy.test(..)` does not make its answer the server's hint).
        Taint {
            opaque: true,
            random: both.random,
            counter: both.counter,
            ..Taint::default()
        }
    }

    fn taint_call(&self, c: &'a syn::ExprCall, seen: &mut HashSet<String>, d: usize) -> Taint {
        let _guard = crate::analysis::limits::enter();
        let args = self.taint_elems(c.args.iter(), seen, d);
        let Some(path) = names::callee_path(&c.func) else {
            return Taint {
                opaque: true,
                ..args
            };
        };
        let full = self.file.resolve(path);
        if let Some(st) = self.file.strategy_type(&full) {
            return Taint {
                strategy: true,
                growth: st.growing,
                random: st.jittered,
                capped: st.capped,
                // A constant strategy waits its argument; a growing one, what it is set to.
                ..if st.growing { Taint::default() } else { args }
            };
        }
        let last = full.last().cloned().unwrap_or_default();
        let random = self.file.is_random_path(&full) || self.file.is_random(&last);
        if is_cap_name(&last) {
            return Taint {
                capped: true,
                ..args
            };
        }
        if is_growth_method(&last) {
            return Taint {
                growth: args.counter || args.growth,
                ..args
            };
        }
        let via = super::Via::of_path(&full, None);
        if let Some(t) = self.follow(&last, &via, &c.args.iter().collect::<Vec<_>>(), seen, d) {
            return Taint {
                random: t.random || random,
                ..t
            };
        }
        if random {
            return Taint {
                random: true,
                ..args
            };
        }
        if is_transparent_fn(&last) {
            return args;
        }
        if names::is_server_delay_name(&last) {
            return Taint {
                server: true,
                ..args
            };
        }
        Taint {
            opaque: true,
            random: args.random,
            counter: args.counter,
            ..Taint::default()
        }
    }

    /// The taints of a local function's parameters given the arguments of a call.
    #[must_use]
    pub fn param_taints(&self, f: &LocalFn<'a>, args: &[&'a Expr]) -> HashMap<String, Taint> {
        let _guard = crate::analysis::limits::enter();
        self.param_taints_in(f, args, &mut HashSet::new(), 0)
    }

    fn param_taints_in(
        &self,
        f: &LocalFn<'a>,
        args: &[&'a Expr],
        seen: &mut HashSet<String>,
        d: usize,
    ) -> HashMap<String, Taint> {
        let _guard = crate::analysis::limits::enter();
        let mut params = HashMap::new();
        for (p, a) in f.typed_params().iter().zip(args) {
            let mut names = Vec::new();
            pat_bindings(&p.pat, &mut names);
            let t = self.taint_in(a, seen, d);
            for n in names {
                params.insert(n, t);
            }
        }
        params
    }

    /// Follows a call into a function of this file: the taint of what it returns, with its
    /// parameters standing for the arguments' taints.
    fn follow(
        &self,
        name: &str,
        via: &super::Via,
        args: &[&'a Expr],
        seen: &mut HashSet<String>,
        d: usize,
    ) -> Option<Taint> {
        let _guard = crate::analysis::limits::enter();
        if name == self.current_fn {
            return None;
        }
        let f = self.file.function_via(name, Some(via))?;
        if self.depth >= 1 {
            // One level deep; recursion and second-level calls stay opaque.
            return Some(Taint::opaque());
        }
        let params = self.param_taints_in(&f, args, seen, d);
        let locals = Locals::of_fn(&f);
        let facts = LoopFacts::collect(f.block, &[]);
        let inner = ValueCx {
            file: self.file,
            locals: &locals,
            facts: &facts,
            params: Some(&params),
            current_fn: name,
            depth: self.depth + 1,
        };
        // What the helper can return: its hint when the server sent one, else its own
        // computation (the fallback).
        let returned: Vec<Taint> = returned_exprs(f.block)
            .into_iter()
            .map(|e| inner.taint(e))
            .collect();
        let mut t = branches(&returned);
        if returns_ceiling(f.block) {
            t.capped = true;
        }
        // A helper whose name says it jitters does so even if we cannot see how.
        if self.file.is_random(name) {
            t.random = true;
        }
        Some(t)
    }
}

/// The taint of a value chosen among branches: when some branches are the server's hint and
/// others are not, the others are the fallback (`if let Some(s) = hint { s } else { backoff }`).
fn branches(ts: &[Taint]) -> Taint {
    let (server, other): (Vec<&Taint>, Vec<&Taint>) = ts.iter().partition(|t| t.server);
    let all = ts.iter().fold(Taint::default(), |a, t| a.union(*t));
    if server.is_empty() || other.is_empty() {
        return all;
    }
    let fb = other.iter().fold(Taint::default(), |a, t| a.union(**t));
    let sv = server.iter().fold(Taint::default(), |a, t| a.union(**t));
    Taint {
        fallback: Some(Fallback {
            grows: fb.grows(),
            random: fb.random,
            opaque: fb.opaque,
        }),
        capped: all.capped,
        ..sv
    }
}

/// The taint of a literal schedule: growing when its elements differ, constant when all agree.
fn schedule_of<'e, I: Iterator<Item = &'e Expr>>(elems: I) -> Taint {
    let texts: Vec<String> = elems.map(names::text).collect();
    let distinct: HashSet<&String> = texts.iter().collect();
    Taint {
        growth: distinct.len() > 1,
        ..Taint::default()
    }
}

/// Whether `expr` mentions the place `key`.
#[must_use]
pub fn mentions(expr: &Expr, key: &str) -> bool {
    struct Finder<'k> {
        key: &'k str,
        found: bool,
    }
    impl<'ast> Visit<'ast> for Finder<'_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            let _guard = crate::analysis::limits::enter();
            if self.found {
                return;
            }
            if place_key(e).as_deref() == Some(self.key) {
                self.found = true;
                return;
            }
            syn::visit::visit_expr(self, e);
        }
        // `matches!(&e, Error::Auth(_))`, `format!("{}", e)`, `format!("{e}")`: a plain name
        // among a macro's tokens, or captured by its format string.
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            if !self.found && !self.key.contains('.') && tokens_name(m.tokens.clone(), self.key) {
                self.found = true;
            }
        }
    }
    fn tokens_name(tokens: proc_macro2::TokenStream, key: &str) -> bool {
        let _guard = crate::analysis::limits::enter();
        tokens.into_iter().any(|t| match t {
            proc_macro2::TokenTree::Ident(i) => i == key,
            proc_macro2::TokenTree::Group(g) => tokens_name(g.stream(), key),
            // A name a format string captures (`format!("{stem}.{n}")`, `{n:>4}`).
            proc_macro2::TokenTree::Literal(l) => {
                let text = l.to_string();
                text.starts_with('"')
                    && [format!("{{{key}}}"), format!("{{{key}:")]
                        .iter()
                        .any(|c| text.contains(c.as_str()))
            }
            proc_macro2::TokenTree::Punct(_) => false,
        })
    }
    let _guard = crate::analysis::limits::enter();
    let mut f = Finder { key, found: false };
    f.visit_expr(expr);
    f.found
}

/// Whether an expression multiplies, shifts, exponentiates or adds (used on `x = f(x)`).
fn grows_expr(expr: &Expr) -> bool {
    struct G {
        found: bool,
    }
    impl<'ast> Visit<'ast> for G {
        fn visit_bin_op(&mut self, op: &'ast BinOp) {
            if matches!(op, BinOp::Mul(_) | BinOp::Shl(_) | BinOp::Add(_)) {
                self.found = true;
            }
        }
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            let _guard = crate::analysis::limits::enter();
            let n = m.method.to_string();
            if is_growth_method(&n)
                || matches!(
                    n.as_str(),
                    "saturating_mul"
                        | "checked_mul"
                        | "wrapping_mul"
                        | "mul"
                        | "saturating_add"
                        | "checked_add"
                        | "add"
                )
            {
                self.found = true;
            }
            syn::visit::visit_expr_method_call(self, m);
        }
    }
    let _guard = crate::analysis::limits::enter();
    let mut g = G { found: false };
    g.visit_expr(expr);
    g.found
}

/// The expressions that can be the value of `e`: the branches of an `if` or a `match`, the
/// tail of a block.
pub(crate) fn value_leaves<'e>(e: &'e syn::Expr, out: &mut Vec<&'e syn::Expr>) {
    let _guard = crate::analysis::limits::enter();
    let tail = |b: &'e syn::Block| match b.stmts.last() {
        Some(syn::Stmt::Expr(e, None)) => Some(e),
        _ => None,
    };
    match e {
        syn::Expr::If(i) => {
            if let Some(t) = tail(&i.then_branch) {
                value_leaves(t, out);
            }
            if let Some((_, other)) = &i.else_branch {
                value_leaves(other, out);
            }
        }
        syn::Expr::Match(m) => {
            for arm in &m.arms {
                value_leaves(&arm.body, out);
            }
        }
        syn::Expr::Block(b) => {
            if let Some(t) = tail(&b.block) {
                value_leaves(t, out);
            }
        }
        syn::Expr::Paren(p) => value_leaves(&p.expr, out),
        other => out.push(other),
    }
}

/// The expressions a function body can return: its tail and every `return e`.
#[must_use]
pub fn returned_exprs(block: &syn::Block) -> Vec<&Expr> {
    struct R<'a> {
        out: Vec<&'a Expr>,
    }
    impl<'a> Visit<'a> for R<'a> {
        fn visit_expr_return(&mut self, r: &'a syn::ExprReturn) {
            let _guard = crate::analysis::limits::enter();
            if let Some(e) = &r.expr {
                self.out.push(e);
            }
            syn::visit::visit_expr_return(self, r);
        }
        fn visit_expr_closure(&mut self, _: &'a syn::ExprClosure) {
            let _guard = crate::analysis::limits::enter();
        }
        fn visit_item(&mut self, _: &'a syn::Item) {}
    }
    let mut r = R { out: Vec::new() };
    r.visit_block(block);
    if let Some(syn::Stmt::Expr(e, None)) = block.stmts.last() {
        r.out.push(e);
    }
    r.out
}
